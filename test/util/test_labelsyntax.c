/* Tests for lib/util/labelsyntax.c: Kubernetes label keys and values with
 * apimachinery's messages, DNS-1123 subdomains and labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/labelsyntax.h"

#define LABEL_KEY_REGEX                                                                      \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " \
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

static void test_labelsyntax__label_keys(void **state)
{
    (void)state;
    char long_name[80], long_prefix[300], long_label[100];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    memset(long_prefix, 'a', 254);
    strcpy(long_prefix + 254, "/x");
    /* A 64-character DNS label: the subdomain regex does not bound labels. */
    memset(long_label, 'a', 64);
    strcpy(long_label + 64, ".io/rack");
    static const char *const prefix_regex =
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const struct {
        const char *key;
        const char *why; /* NULL: valid */
    } rows[] = {
        {"kubernetes.io/hostname", NULL},
        {"topology.topo.io/rack", NULL},
        {"rack", NULL},
        {"x.io/rack_1.a-b", NULL},
        {"NVIDIA-H100", NULL},
        {long_label, NULL},
        {"", "name part must be non-empty"},
        {"topo.io/", "name part must be non-empty"},
        {"/rack", "prefix part must be non-empty"},
        {"-rack", "name part " LABEL_KEY_REGEX},
        {"rack.", "name part " LABEL_KEY_REGEX},
        {long_name, "name part must be no more than 63 bytes"},
        {"Topo.io/rack", prefix_regex},
        {"example..com/rack", prefix_regex},
        {"ex_ample.com/rack", prefix_regex},
        {long_prefix, "prefix part must be no more than 253 bytes"},
        {"a/b/c", "a valid label key " LABEL_KEY_REGEX
                  " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
    };
    char why[1024];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        why[0] = '\0';
        int ok = topo_label_key_valid(rows[i].key, why, sizeof why);
        if (ok != (rows[i].why == NULL) || (rows[i].why != NULL && strcmp(why, rows[i].why) != 0))
            fail_msg("key \"%.40s\": got %d \"%s\", want \"%s\"", rows[i].key, ok, why,
                     rows[i].why ? rows[i].why : "(valid)");
    }
}

static void test_labelsyntax__label_values(void **state)
{
    (void)state;
    char why[1024];
    char v64[65];
    memset(v64, 'v', 64);
    v64[64] = '\0';
    assert_int_equal(topo_label_value_valid("", why, sizeof why), 1);
    assert_int_equal(topo_label_value_valid("NVIDIA-H100-80GB-HBM3", why, sizeof why), 1);
    assert_int_equal(topo_label_value_valid(v64 + 1, why, sizeof why), 1);
    assert_int_equal(topo_label_value_valid(v64, why, sizeof why), 0);
    assert_string_equal(why, "must be no more than 63 bytes");
    assert_int_equal(topo_label_value_valid("NVIDIA H100", why, sizeof why), 0);
    assert_non_null(strstr(why, "a valid label must be an empty string or consist of"));
    assert_int_equal(topo_label_value_valid("a/b", NULL, 0), 0);
}

/* All of IsLabelKey's messages, in its order. */
static void test_labelsyntax__key_errors(void **state)
{
    (void)state;
    const char *msgs[TOPO_LABEL_MAX_KEY_ERRORS];
    assert_int_equal(topo_label_key_errors("topology.topo.io/rack", msgs), 0);
    assert_int_equal(topo_label_key_errors("/", msgs), 3);
    assert_string_equal(msgs[0], "prefix part must be non-empty");
    assert_string_equal(msgs[1], "name part must be non-empty");
    assert_non_null(strstr(msgs[2], "name part must consist of"));
    assert_int_equal(topo_label_key_valid(NULL, NULL, 0), 0);
}

/* Node names: the subdomain regex, at most 253 characters. */
static void test_labelsyntax__subdomain(void **state)
{
    (void)state;
    char n253[254], n254[255];
    memset(n253, 'a', 253);
    n253[253] = '\0';
    memset(n254, 'a', 254);
    n254[254] = '\0';
    assert_int_equal(topo_dns_subdomain_valid("gpu-001.rack-a.example"), 1);
    assert_int_equal(topo_dns_subdomain_valid(n253), 1);
    assert_int_equal(topo_dns_subdomain_valid(n254), 0);
    assert_int_equal(topo_dns_subdomain_valid(""), 0);
    assert_int_equal(topo_dns_subdomain_valid(NULL), 0);
    assert_int_equal(topo_dns_subdomain_valid("Gpu-001"), 0);
    assert_int_equal(topo_dns_subdomain_valid("a..b"), 0);
    assert_int_equal(topo_dns_subdomain_valid("a.-b"), 0);
    assert_int_equal(topo_dns_subdomain_valid("a."), 0);
}

/* A Topology's name: one DNS-1123 label, with topo-webhook's messages. */
static void test_labelsyntax__dns_label(void **state)
{
    (void)state;
    char why[160], n64[65];
    memset(n64, 'a', 64);
    n64[64] = '\0';
    assert_int_equal(topo_dns_label_valid("h100", why, sizeof(why)), 1);
    assert_int_equal(topo_dns_label_valid(n64 + 1, why, sizeof(why)), 1);
    assert_int_equal(topo_dns_label_valid("h100.x", why, sizeof(why)), 0);
    assert_string_equal(why, "the name has the invalid character '.' (a DNS-1123 name: a-z 0-9 - "
                             "only)");
    assert_int_equal(topo_dns_label_valid("H100", why, sizeof(why)), 0);
    assert_int_equal(topo_dns_label_valid("-h100", why, sizeof(why)), 0);
    assert_string_equal(why, "the name must start and end with a lower-case letter or digit");
    assert_int_equal(topo_dns_label_valid("", why, sizeof(why)), 0);
    assert_string_equal(why, "the name has an empty DNS label");
    assert_int_equal(topo_dns_label_valid(n64, why, sizeof(why)), 0);
    assert_string_equal(why, "the name has a DNS label longer than 63 characters");
    assert_int_equal(topo_dns_label_valid("h100-", NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labelsyntax__label_keys),
        cmocka_unit_test(test_labelsyntax__label_values),
        cmocka_unit_test(test_labelsyntax__key_errors),
        cmocka_unit_test(test_labelsyntax__subdomain),
        cmocka_unit_test(test_labelsyntax__dns_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
