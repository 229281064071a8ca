/* Tests for the packing rule (topo/packing.h): the used domains that fit
 * one pod on one node, least free first, ties by name, at most k; nothing
 * when no used domain fits; bad input named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/packing.h"

typedef struct rank_case {
    const char *what;
    topo_packing_domain d[4];
    size_t n, k;
    int64_t request;
    size_t want_n;
    size_t want[4];
} rank_case;

static const rank_case cases[] = {
    {"tightest used first; the empty rack never",
     {{"r1", 8, 24, 8}, {"r2", 0, 32, 8}, {"r3", 28, 4, 4}, {"r4", 16, 16, 8}},
     4, 4, 2, 3, {2, 3, 0}},
    {"ties on free go by name, not by position",
     {{"rb", 8, 8, 8}, {"ra", 8, 8, 8}, {"rc", 4, 4, 4}},
     3, 4, 2, 3, {2, 1, 0}},
    {"at most k",
     {{"r1", 8, 24, 8}, {"r2", 16, 16, 8}, {"r3", 28, 4, 4}},
     3, 1, 2, 1, {2}},
    {"nothing used: unchanged",
     {{"r1", 0, 32, 8}, {"r2", 0, 32, 8}},
     2, 4, 1, 0, {0}},
    {"no room anywhere: unchanged",
     {{"r1", 31, 1, 1}, {"r2", 32, 0, 0}},
     2, 4, 2, 0, {0}},
    {"room spread over nodes does not fit one pod",
     {{"r1", 24, 8, 2}, {"r2", 0, 32, 8}},
     2, 4, 4, 0, {0}},
    {"k 0 asks for nothing", {{"r1", 8, 24, 8}}, 1, 0, 1, 0, {0}},
};

static void test_packing__rank_table(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const rank_case *t = &cases[c];
        size_t out[4] = {99, 99, 99, 99}, n = 99;
        topo_err err = TOPO_ERR_INIT;
        if (topo_packing_rank(out, &n, t->k, t->d, t->n, t->request, &err) != 0)
            fail_msg("%s: %s", t->what, err.text);
        if (n != t->want_n)
            fail_msg("%s: %zu domains, want %zu", t->what, n, t->want_n);
        for (size_t i = 0; i < n; i++)
            if (out[i] != t->want[i])
                fail_msg("%s: [%zu] = %zu, want %zu", t->what, i, out[i], t->want[i]);
    }
}

static void test_packing__rejects_bad_input(void **state)
{
    (void)state;
    topo_packing_domain d[2] = {{"r1", 8, 24, 8}, {NULL, 8, 24, 8}};
    size_t out[2], n = 7;
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(topo_packing_rank(out, &n, 2, d, 1, 0, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "request"));
    assert_int_equal(n, 0);
    assert_int_equal(topo_packing_rank(out, &n, 2, d, 2, 1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "name"));
    d[1].name = "r2";
    d[1].free = -1;
    assert_int_equal(topo_packing_rank(out, &n, 2, d, 2, 1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "r2: free"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packing__rank_table),
        cmocka_unit_test(test_packing__rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
