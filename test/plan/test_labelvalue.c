/* Label values from infrastructure names: valid names kept, others replaced,
 * trimmed, cut and always given a hash suffix, scoped names always
 * qualified, a value never depending on which other domains exist, and the
 * residual collisions separated. The expected hashes are FNV-1a 64 of the raw name,
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
    /* A changed name always carries the hash of its raw form, so that it
     * never depends on whether another name reads like its normal form. */
    assert_int_equal(topo_labelvalue_normalize(out, "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"), 1);
    assert_string_equal(out, "MF0-A09-P1-IBLEAF-04-04-MQM9701-U1-808b23ae6c");
    assert_int_equal(topo_labelvalue_normalize(out, " rack 7 "), 1);
    assert_string_equal(out, "rack-7-2ed351a7a9");
    assert_int_equal(topo_labelvalue_normalize(out, "-_.x._-"), 1);
    assert_string_equal(out, "x-080ae8c5ba");
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
     * of its own: the valid one keeps it, the changed ones have suffixes
     * (on their own too). A valid name spelt like "rack 1"'s suffixed value
     * keeps it; "rack 1", of the colliding pair, gets the 16-digit one. */
    const char *raw[] = {"a;b", "a-b", "a:b", "a;b", "rack 1", "rack-1-1dd1a01c21"};
    const char *out[6];
    assert_int_equal(topo_labelvalue_assign(out, raw, 6, pool, &err), 0);
    assert_string_equal(out[1], "a-b");
    assert_string_equal(out[0], "a-b-e0e3f2510d");
    assert_string_equal(out[2], "a-b-e0e010510d");
    assert_string_equal(out[3], out[0]); /* the same name twice, one value */
    assert_string_equal(out[4], "rack-1-1dd1a01c21b05f3f");
    assert_string_equal(out[5], "rack-1-1dd1a01c21");

    const char *none[] = {NULL};
    assert_int_equal(topo_labelvalue_assign(out, none, 1, pool, &err), TOPO_EINVALID);
    assert_int_equal(topo_labelvalue_assign(out, raw, 0, pool, &err), 0);

    /* Valid names spelt like both of a name's suffixed values: refused,
     * with the error that names why. */
    const char *crafted[] = {"rack 1", "rack-1-1dd1a01c21", "rack-1-1dd1a01c21b05f3f"};
    assert_int_equal(topo_labelvalue_assign(out, crafted, 3, pool, &err), TOPO_ECONFLICT);
    assert_non_null(strstr(err.text, "16-digit hash suffix"));
    /* ... and that names both names, so the operator knows what to rename. */
    assert_non_null(strstr(err.text, "\"rack 1\" and \"rack-1-1dd1a01c21b05f3f\""));

    /* A scoped name: its scope named too. Its values computed here (the
     * 10-digit alone, the 16-digit when a valid name takes the first). */
    const char *r1[] = {"R1", NULL, NULL}, *s1[] = {"site-a", NULL, NULL};
    assert_int_equal(topo_labelvalue_assign_scoped(out, r1, s1, 1, pool, &err), 0);
    r1[1] = out[0];
    assert_int_equal(topo_labelvalue_assign_scoped(out, r1, s1, 2, pool, &err), 0);
    r1[2] = out[0];
    assert_int_equal(strlen(r1[2]), strlen("R1-") + 16);
    assert_int_equal(topo_labelvalue_assign_scoped(out, r1, s1, 3, pool, &err), TOPO_ECONFLICT);
    char want[128];
    snprintf(want, sizeof want, "\"%s\" and \"R1\" (in \"site-a\")", r1[2]);
    assert_non_null(strstr(err.text, want));
    topo_pool_free(pool);
}

/* Domains named within scopes: always the normalised name and the hash of
 * "<length of scope>:<scope><name>" (an unscoped domain: as on its own),
 * whether or not another scope has the name; deterministic and distinct
 * from every other value, even one a source spelt like it. */
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
    assert_string_equal(out[1], "R2-d968de201c"); /* alone in its name, qualified all the same */
    assert_string_equal(out[4], "rack-7-e819e5b98c");
    assert_string_equal(out[5], "rack-7-f7af151ad1");
    assert_string_equal(out[7], "R3");

    /* An unscoped domain beside a scoped one of the same name: two. */
    const char *raw2[] = {"R1", "R1"};
    const char *scope2[] = {NULL, "dc-a"};
    assert_int_equal(topo_labelvalue_assign_scoped(out, raw2, scope2, 2, pool, &err), 0);
    assert_string_equal(out[0], "R1");
    assert_string_equal(out[1], "R1-d968dd201c");
    /* No scopes at all: as topo_labelvalue_assign. */
    assert_int_equal(topo_labelvalue_assign_scoped(out, raw2, NULL, 2, pool, &err), 0);
    assert_string_equal(out[0], "R1");
    assert_string_equal(out[1], "R1");
    topo_pool_free(pool);
}

/* A set of domains that real inventories give: valid names, names the
 * normaliser changes, long and empty ones, names repeated under scopes. */
static const char *const base_raw[] = {
    "rack 1", "R2", "a;b", "S-2c5eab0300c25f00", "", "R1", "R1", "rack 7",
    "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1 and a tail that makes it longer than sixty-three",
};
static const char *const base_scope[] = {NULL,   "dc-a", NULL,   NULL, NULL,
                                         "dc-a", "dc-b", "dc-a", NULL};
#define NBASE (sizeof base_raw / sizeof *base_raw)

/* Every domain, the unscoped ones with topo_labelvalue_assign too. */
static void assign_all(const char **out, const char *const *raw, const char *const *scope,
                       size_t n, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_labelvalue_assign_scoped(out, raw, scope, n, pool, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_true(topo_label_value_valid(out[i], NULL, 0) && out[i][0] != '\0');
}

/* Adding one domain, of any name (another's normal form, the same name in
 * another scope, the same name unscoped, a name the normaliser changes
 * alike), changes no other domain's value. */
static void test_labelvalue__value_independent_of_other_domains(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    const char *alone[NBASE];
    assign_all(alone, base_raw, base_scope, NBASE, pool);
    static const struct {
        const char *raw, *scope;
    } extra[] = {
        {"rack-1", NULL},  {"rack:1", NULL}, {"rack-1", "dc-a"}, {"R2", "dc-b"}, {"R2", NULL},
        {"a-b", NULL},     {"a:b", NULL},    {";", NULL},        {"rack-7", NULL},
        {"rack 7", "dc-c"}, {"R1", NULL},    {"x", "dc-a"},
    };
    for (size_t e = 0; e < sizeof extra / sizeof *extra; e++) {
        const char *raw[NBASE + 1], *scope[NBASE + 1], *out[NBASE + 1];
        for (size_t i = 0; i < NBASE; i++) {
            raw[i + 1] = base_raw[i];
            scope[i + 1] = base_scope[i];
        }
        raw[0] = extra[e].raw;
        scope[0] = extra[e].scope;
        assign_all(out, raw, scope, NBASE + 1, pool);
        for (size_t i = 0; i < NBASE; i++) {
            if (strcmp(out[i + 1], alone[i]) != 0)
                fail_msg("adding \"%s\" (scope %s) moved \"%s\" from %s to %s", extra[e].raw,
                         extra[e].scope ? extra[e].scope : "none", base_raw[i], alone[i],
                         out[i + 1]);
            assert_string_not_equal(out[0], out[i + 1]);
        }
    }
    topo_pool_free(pool);
}

/* The same set in any order gives the same values, round after round;
 * the residual collisions (a valid name spelt like another's suffixed
 * value) too. */
static void test_labelvalue__any_order_same_values(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    const char *raw[] = {"rack 1", "rack-1-1dd1a01c21", "R1", "R1-d968dd201c", "R1",
                         "a;b", "a:b", "a-b", "rack-1", "", "R9"};
    const char *scope[] = {NULL, NULL, "dc-a", NULL, "dc-b", NULL, NULL, NULL, NULL, NULL, "dc-a"};
    const char *want[] = {"rack-1-1dd1a01c21b05f3f", "rack-1-1dd1a01c21", "R1-d968dd201c6ab1ab",
                          "R1-d968dd201c", "R1-d2df402019", "a-b-e0e3f2510d", "a-b-e0e010510d",
                          "a-b", "rack-1", "14650fb073", "R9-d968d5201c"};
    enum { N = sizeof raw / sizeof *raw };
    const char *first[N];
    assign_all(first, raw, scope, N, pool);
    for (size_t i = 0; i < N; i++)
        assert_string_equal(first[i], want[i]);
    /* Every rotation, forwards and backwards. */
    for (size_t rot = 0; rot < 2 * N; rot++) {
        const char *r[N], *s[N], *out[N];
        size_t at[N];
        for (size_t i = 0; i < N; i++) {
            at[i] = rot < N ? (i + rot) % N : (N - 1 - i + rot) % N;
            r[i] = raw[at[i]];
            s[i] = scope[at[i]];
        }
        assign_all(out, r, s, N, pool);
        for (size_t i = 0; i < N; i++)
            assert_string_equal(out[i], first[at[i]]);
    }
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
        cmocka_unit_test(test_labelvalue__value_independent_of_other_domains),
        cmocka_unit_test(test_labelvalue__any_order_same_values),
        cmocka_unit_test(test_labelvalue__any_bytes_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
