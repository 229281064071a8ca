/* Tests for lib/util/str.c: what "a number" means in options and trace
 * files (topo_str_is_decimal), and the copies and hash beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "topo/str.h"

static void test_str__decimal(void **state)
{
    (void)state;
    const char *good[] = {"0", "12", "1.5", ".5", "5.", "007", "1e3", "1E+3", "2.5e-2"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_true(topo_str_is_decimal(good[i], 1));
    /* Without the exponent only the plain forms (public traces' columns). */
    assert_true(topo_str_is_decimal("8.0", 0));
    assert_false(topo_str_is_decimal("1e3", 0));
    const char *bad[] = {"", ".", "-1", "+1", " 1", "1 ", "0x10", "inf", "nan", "1e", "1e+",
                         "e3", "1.2.3", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(topo_str_is_decimal(bad[i], 1));
        assert_false(topo_str_is_decimal(bad[i], 0));
    }
}

static void test_str__copies(void **state)
{
    (void)state;
    char *a = topo_strndup("abcdef", 3);
    assert_string_equal(a, "abc");
    free(a);
    assert_null(topo_strdup(NULL));
    assert_true(topo_str_hash("a") != topo_str_hash("b"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str__decimal),
        cmocka_unit_test(test_str__copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
