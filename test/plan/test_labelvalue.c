/* Label values from infrastructure names: valid names kept, others replaced
 * and trimmed, cut with a hash suffix when too long or empty, and set-wide
 * collisions separated. The expected hashes are FNV-1a 64 of the raw name,
 * computed independently (a five-line Python loop over the UTF-8 bytes with
 * offset 1469598103934665603 and prime 1099511628211). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/labelvalue.h"
#include "topo/limits.h"

static void assert_valid(const char *v)
{
    assert_true(topo_label_value_valid(v, NULL, 0));
    assert_true(strlen(v) > 0);
}

static void test_labelvalue__valid_kept(void **state)
{
    (void)state;
    char out[TOPO_MAX_LABEL_VALUE + 1];
    const char *valid[] = {"S-2c5eab0300c25f00", "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1",
                           "rack_12", "a"};
    for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) {
        assert_int_equal(topo_labelvalue_normalize(out, valid[i]), 0);
        assert_string_equal(out, valid[i]);
    }
}

static void test_labelvalue__replaced_and_trimmed(void **state)
{
    (void)state;
    char out[TOPO_MAX_LABEL_VALUE + 1];
    assert_int_equal(topo_labelvalue_normalize(out, "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"), 1);
    assert_string_equal(out, "MF0-A09-P1-IBLEAF-04-04-MQM9701-U1");
    assert_int_equal(topo_labelvalue_normalize(out, " rack 7 "), 1);
    assert_string_equal(out, "rack-7");
    assert_int_equal(topo_labelvalue_normalize(out, "-_.x._-"), 1);
    assert_string_equal(out, "x");
}

static void test_labelvalue__cut_or_empty_get_hash(void **state)
{
    (void)state;
    char out[TOPO_MAX_LABEL_VALUE + 1];
    char longname[71];
    memset(longname, 'x', 70);
    longname[70] = '\0';
    assert_int_equal(topo_labelvalue_normalize(out, longname), 1);
    /* 63 = 52 kept + '-' + 10 hex digits */
    assert_int_equal(strlen(out), TOPO_MAX_LABEL_VALUE);
    assert_string_equal(out + 52, "-10192746ca");
    assert_memory_equal(out, longname, 52);
    assert_valid(out);

    assert_int_equal(topo_labelvalue_normalize(out, ";;;"), 1);
    assert_string_equal(out, "741387503e");
    assert_int_equal(topo_labelvalue_normalize(out, ""), 1);
    assert_string_equal(out, "14650fb073");

    /* A cut that ends on a separator drops it before the suffix. */
    char dashy[80];
    memset(dashy, 'y', sizeof dashy);
    dashy[51] = '-';
    dashy[79] = '\0';
    assert_int_equal(topo_labelvalue_normalize(out, dashy), 1);
    assert_int_equal(strlen(out), 51 + 11);
    assert_valid(out);
}

static void test_labelvalue__same_input_same_value(void **state)
{
    (void)state;
    char a[TOPO_MAX_LABEL_VALUE + 1], b[TOPO_MAX_LABEL_VALUE + 1];
    const char *raw = "MF0;CSPINE1-80:MQM8700/U1 with a long tail of words that goes on and on";
    topo_labelvalue_normalize(a, raw);
    topo_labelvalue_normalize(b, raw);
    assert_string_equal(a, b);
    assert_valid(a);
}

static void test_labelvalue__collisions_separated(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    /* "a;b" and "a:b" both normalise to "a-b", which is also a valid name
     * of its own: the valid one keeps it, the changed ones get suffixes. */
    const char *raw[] = {"a;b", "a-b", "a:b", "a;b", "rack 1"};
    const char *out[5];
    assert_int_equal(topo_labelvalue_assign(out, raw, 5, pool, &err), 0);
    assert_string_equal(out[1], "a-b");
    assert_string_equal(out[0], "a-b-e0e3f2510d");
    assert_string_equal(out[2], "a-b-e0e010510d");
    assert_string_equal(out[3], out[0]); /* the same name twice, one value */
    assert_string_equal(out[4], "rack-1"); /* no collision, no suffix */

    const char *none[] = {NULL};
    assert_int_equal(topo_labelvalue_assign(out, none, 1, pool, &err), TOPO_EINVALID);
    assert_int_equal(topo_labelvalue_assign(out, raw, 0, pool, &err), 0);
    topo_pool_free(pool);
}

/* Domains named within scopes: a name under one scope keeps its plain
 * value, so unique names are never relabelled; a name under several gets,
 * in each, the hash of "<length of scope>:<scope><name>" (an unscoped
 * domain: of the name), deterministic and distinct from every other
 * value, even one a source spelt like it. */
static void test_labelvalue__names_repeated_in_scopes(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    const char *raw[] = {"R1", "R2", "R1", "R1", "rack 7", "rack 7", "R1-d968dd201c", "R3"};
    const char *scope[] = {"dc-a", "dc-a", "dc-b", "dc-a", "dc-a", "dc-b", NULL, NULL};
    const char *out[8];
    assert_int_equal(topo_labelvalue_assign_scoped(out, raw, scope, 8, pool, &err), 0);
    /* A valid name that equals a qualified value keeps it; the qualified
     * one gets the longer suffix of its key "4:dc-aR1". */
    assert_string_equal(out[6], "R1-d968dd201c");
    assert_string_equal(out[0], "R1-d968dd201c6ab1ab");
    assert_string_equal(out[3], out[0]);
    assert_string_equal(out[2], "R1-d2df402019");
    assert_string_equal(out[1], "R2");
    assert_string_equal(out[4], "rack-7-e819e5b98c");
    assert_string_equal(out[5], "rack-7-f7af151ad1");
    assert_string_equal(out[7], "R3");

    /* An unscoped domain beside a scoped one of the same name: two. */
    const char *raw2[] = {"R1", "R1"};
    const char *scope2[] = {NULL, "dc-a"};
    assert_int_equal(topo_labelvalue_assign_scoped(out, raw2, scope2, 2, pool, &err), 0);
    assert_string_equal(out[0], "R1-9b721600c6");
    assert_string_equal(out[1], "R1-d968dd201c");
    /* No scopes at all: as topo_labelvalue_assign. */
    assert_int_equal(topo_labelvalue_assign_scoped(out, raw2, NULL, 2, pool, &err), 0);
    assert_string_equal(out[0], "R1");
    assert_string_equal(out[1], "R1");
    topo_pool_free(pool);
}

/* Every byte value, alone and around letters: always a valid value. */
static void test_labelvalue__any_bytes_valid(void **state)
{
    (void)state;
    char out[TOPO_MAX_LABEL_VALUE + 1];
    char raw[4];
    for (int c = 1; c < 256; c++) {
        raw[0] = (char)c;
        raw[1] = '\0';
        topo_labelvalue_normalize(out, raw);
        assert_valid(out);
        raw[0] = 'a';
        raw[1] = (char)c;
        raw[2] = 'b';
        raw[3] = '\0';
        topo_labelvalue_normalize(out, raw);
        assert_valid(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labelvalue__valid_kept),
        cmocka_unit_test(test_labelvalue__replaced_and_trimmed),
        cmocka_unit_test(test_labelvalue__cut_or_empty_get_hash),
        cmocka_unit_test(test_labelvalue__same_input_same_value),
        cmocka_unit_test(test_labelvalue__collisions_separated),
        cmocka_unit_test(test_labelvalue__names_repeated_in_scopes),
        cmocka_unit_test(test_labelvalue__any_bytes_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
