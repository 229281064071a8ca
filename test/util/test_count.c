/* Tests for counts in labels and annotations (lib/util/count.c): digits
 * only, bounded, the value untouched on refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topo/count.h"

static void test_count__digits_in_range(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    int64_t v = -5;
    assert_int_equal(topo_parse_count(&v, "12", "x", 1, 100, &err), 0);
    assert_int_equal(v, 12);
    assert_int_equal(topo_parse_count(&v, "0", "x", 0, 100, &err), 0);
    assert_int_equal(v, 0);
    const char *bad[] = {"", "+1", "-1", " 1", "1 ", "0x10", "101", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 7;
        assert_int_equal(topo_parse_count(&v, bad[i], "annotation y", 1, 100, &err), TOPO_EINVALID);
        assert_int_equal(v, 7); /* untouched on error */
    }
    assert_string_equal(err.text,
                        "annotation y: \"99999999999999999999999\" is not a count in 1..100");
    assert_int_equal(topo_parse_count(&v, "0", "n", 1, 100, &err), TOPO_EINVALID);
    assert_int_equal(topo_parse_count(&v, NULL, "n", 1, 100, &err), TOPO_EINVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count__digits_in_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
