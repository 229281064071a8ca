/* topo_regex_compile (topo/regex.h): patterns whose repetitions would make
 * glibc's regcomp build an exponential tree (stacked or nested +, large
 * nested bounds) or costly closures (a repeated part that can match the
 * empty string) are refused with a reason before regcomp runs; ordinary
 * patterns, bracket expressions with their own ']' and bounds within the
 * limit compile and match; regcomp's own errors come through; over-long
 * patterns are refused. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/regex.h"

static int compiles(const char *pattern, char *why, size_t size)
{
    regex_t re;
    int rc = topo_regex_compile(&re, pattern, REG_EXTENDED | REG_NOSUB, why, size);
    if (rc == 0)
        regfree(&re);
    return rc == 0;
}

static int matches(const char *pattern, const char *s)
{
    regex_t re;
    char why[256];
    assert_int_equal(topo_regex_compile(&re, pattern, REG_EXTENDED | REG_NOSUB, why, sizeof why),
                     0);
    int m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

static void test_regex__exponential_refused(void **state)
{
    (void)state;
    char p[128], why[256];
    /* what fuzz_sync_config found: each '+' doubles the compiled tree */
    snprintf(p, sizeof p, "gpu([0-9]+)%s", "++++++++++++++++++++");
    assert_false(compiles(p, why, sizeof why));
    assert_non_null(strstr(why, "repetitions"));
    assert_false(compiles("((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)", why, sizeof why));
    assert_false(compiles("(a{100}){100}", why, sizeof why));
    assert_false(compiles("(x{70}){70,}", why, sizeof why));
    /* stacked stars and pluses: seconds in glibc's closures (fuzz_sync_config) */
    assert_false(compiles(",spine+)*++*+++++++++", why, sizeof why));
    assert_false(compiles("a+++++++++", why, sizeof why));
    assert_non_null(strstr(why, "repetitions"));
    /* repeating what can match nothing: seconds within every other bound */
    static const char *const empty[] = {
        "(a*+){800}", "(a*){4000}", "((a*)*){800}", "(a?){3}", "x{0,3}+", "(a|)*",
        "(^)+", "(\\b){2}", "a**", "(a*b?){0,}", "([a-z]+-)*{2}",
        "a{20}(a*){64}$){0,3}+{8}(a*)(a?)+{8}([a-z]){1,}b+", /* 23 s before */
    };
    for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
        why[0] = '\0';
        assert_false(compiles(empty[i], why, sizeof why));
        assert_non_null(strstr(why, "empty string"));
    }
    /* within the limit */
    assert_true(compiles("gpu([0-9]+)+++", why, sizeof why));
    assert_true(compiles("a{1000}", why, sizeof why));
    assert_true(compiles("(a{10}){10}", why, sizeof why));
    /* ? on what can match nothing repeats nothing; the rest is not empty */
    assert_true(compiles("(a*)?", why, sizeof why));
    assert_true(compiles("(x|y){0,3}(-[0-9]*)+", why, sizeof why));
    assert_true(compiles("(([a-z]+-)*[0-9]+){20}", why, sizeof why));
}

static void test_regex__ordinary_patterns(void **state)
{
    (void)state;
    assert_true(matches("^gpu-([0-9]+)\\.example\\.com$", "gpu-0042.example.com"));
    assert_false(matches("^gpu-([0-9]+)\\.example\\.com$", "gpu-x.example.com"));
    assert_true(matches("^[]a]+$", "]a]"));           /* ']' first in a bracket is a member */
    assert_true(matches("^[^]x]+$", "abc"));
    assert_true(matches("^[[:alpha:]]+[0-9]{2,3}$", "node42"));
    assert_true(matches("^(spine|leaf)-[0-9]*$", "leaf-7"));
    assert_true(matches("^a\\+b$", "a+b"));            /* an escaped '+' repeats nothing */
    /* brackets and escapes are atoms: their '+' and '{' are not repetitions */
    char p[600], why[256];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 100; i++)
        strcat(p, "[+{]");
    assert_true(compiles(p, why, sizeof why));
}

static void test_regex__errors(void **state)
{
    (void)state;
    char why[256], p[TOPO_REGEX_MAX_LEN + 2];
    why[0] = '\0';
    regex_t re;
    assert_int_not_equal(topo_regex_compile(&re, "a", REG_NOSUB, why, sizeof why), 0);
    assert_non_null(strstr(why, "extended"));
    why[0] = '\0';
    assert_false(compiles("a(", why, sizeof why));
    assert_true(why[0] != '\0'); /* regcomp's message */
    memset(p, 'a', sizeof p - 1);
    p[sizeof p - 1] = '\0';
    assert_false(compiles(p, why, sizeof why));
    assert_non_null(strstr(why, "longer than"));
    p[TOPO_REGEX_MAX_LEN] = '\0';
    assert_true(compiles(p, why, sizeof why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regex__exponential_refused),
        cmocka_unit_test(test_regex__ordinary_patterns),
        cmocka_unit_test(test_regex__errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
