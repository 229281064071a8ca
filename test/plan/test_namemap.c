/* Host names to node names: domain or suffix stripped, lower-cased, one
 * anchored regular expression with backreferences; invalid results and
 * malformed rules named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/namemap.h"

/* The mapped name, or the error's text: both outlive the call (the text in
 * a static copy, the caller's err being gone by then). */
static const char *apply(const topo_namemap *m, const char *name, char *buf, size_t size)
{
    static char why[TOPO_ERR_TEXT_MAX];
    topo_err err = TOPO_ERR_INIT;
    if (topo_namemap_apply(m, name, buf, size, &err) == 0)
        return buf;
    snprintf(why, sizeof why, "%s", err.text);
    return why;
}

static void test_namemap__kept_without_rules(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *m = NULL;
    char buf[256];
    assert_int_equal(topo_namemap_create(&m, NULL, &err), 0);
    assert_string_equal(apply(m, "gpu-0591", buf, sizeof buf), "gpu-0591");
    assert_string_equal(apply(m, "node.example.com", buf, sizeof buf), "node.example.com");
    /* Upper case is no node name: named, with the source's name. */
    assert_int_equal(topo_namemap_apply(m, "GPU-1", buf, sizeof buf, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "host \"GPU-1\": \"GPU-1\" is not a valid node name"));
    assert_int_equal(topo_namemap_apply(m, "a..b", buf, sizeof buf, &err), TOPO_EINVALID);
    assert_int_equal(topo_namemap_apply(m, "", buf, sizeof buf, &err), TOPO_EINVALID);
    topo_namemap_free(m);
}

static void test_namemap__domain_case_and_suffix(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *m = NULL;
    char buf[256];
    topo_namemap_opts o = {.strip_domain = 1, .lowercase = 1};
    assert_int_equal(topo_namemap_create(&m, &o, &err), 0);
    assert_string_equal(apply(m, "GPU-0591.cluster.example.com", buf, sizeof buf), "gpu-0591");
    topo_namemap_free(m);

    topo_namemap_opts s = {.strip_suffix = ".ib.example.com"};
    assert_int_equal(topo_namemap_create(&m, &s, &err), 0);
    assert_string_equal(apply(m, "n1.ib.example.com", buf, sizeof buf), "n1");
    assert_string_equal(apply(m, "n1.eth.example.com", buf, sizeof buf), "n1.eth.example.com");
    /* The whole name is never stripped to nothing. */
    assert_int_equal(topo_namemap_apply(m, ".ib.example.com", buf, sizeof buf, &err),
                     TOPO_EINVALID);
    /* A result that does not fit the caller's buffer. */
    assert_int_equal(topo_namemap_apply(m, "n1", buf, 2, &err), TOPO_ELIMIT);
    topo_namemap_free(m);
}

static void test_namemap__pattern(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *m = NULL;
    char buf[256];
    /* Selene's hosts are "selene-slurm-01"; the nodes "dgx-01". */
    topo_namemap_opts o = {.pattern = "selene-slurm-([0-9]+)", .replacement = "dgx-\\1"};
    assert_int_equal(topo_namemap_create(&m, &o, &err), 0);
    assert_string_equal(apply(m, "selene-slurm-01", buf, sizeof buf), "dgx-01");
    /* Anchored: a name that only contains the pattern is not rewritten. */
    assert_string_equal(apply(m, "x-selene-slurm-01", buf, sizeof buf), "x-selene-slurm-01");
    assert_string_equal(apply(m, "other", buf, sizeof buf), "other");
    topo_namemap_free(m);

    topo_namemap_opts whole = {.pattern = "(.*)-ib", .replacement = "\\0.\\1"};
    assert_int_equal(topo_namemap_create(&m, &whole, &err), 0);
    assert_string_equal(apply(m, "n7-ib", buf, sizeof buf), "n7-ib.n7");
    topo_namemap_free(m);
}

static void test_namemap__bad_rules_named(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *m = NULL;
    topo_namemap_opts o = {.pattern = "a(b", .replacement = "x"};
    assert_int_equal(topo_namemap_create(&m, &o, &err), TOPO_EINVALID);
    assert_null(m);
    assert_non_null(strstr(err.text, "nodeNames.pattern: "));
    topo_namemap_opts half = {.pattern = "a"};
    assert_int_equal(topo_namemap_create(&m, &half, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "nodeNames.pattern: given without nodeNames.replacement");
    topo_namemap_opts ref = {.pattern = "(a)", .replacement = "\\2"};
    assert_int_equal(topo_namemap_create(&m, &ref, &err), TOPO_EINVALID);
    assert_string_equal(err.text,
                        "nodeNames.replacement: refers to a group the pattern does not have");
    topo_namemap_opts esc = {.pattern = "a", .replacement = "\\q"};
    assert_int_equal(topo_namemap_create(&m, &esc, &err), TOPO_EINVALID);
    assert_null(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namemap__kept_without_rules),
        cmocka_unit_test(test_namemap__domain_case_and_suffix),
        cmocka_unit_test(test_namemap__pattern),
        cmocka_unit_test(test_namemap__bad_rules_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
