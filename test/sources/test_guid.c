/* A fabric GUID in every form a tool prints, written one way
 * (include/topo/guid.h); anything else refused naming the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/guid.h"

static void test_guid__forms(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"aa00000000000001", "aa00000000000001"},    /* UFM */
        {"AA00000000000001", "aa00000000000001"},    /* either case */
        {"0xaa00000000000001", "aa00000000000001"},  /* node-name maps, switchguid= */
        {"0XAA00000000000001", "aa00000000000001"},
        {"S-aa00000000000001", "aa00000000000001"},  /* ibnetdiscover's ids */
        {"H-AA00000000000001", "aa00000000000001"},
        {"R-aa00000000000001", "aa00000000000001"},
        {"0x2c5eab0300b87b40(2c5eab0300b87b41)", "2c5eab0300b87b40"}, /* switchguid= */
        {"0002c903007b78b0", "0002c903007b78b0"},    /* leading zeros kept */
        {"2c903007b78b0", "0002c903007b78b0"},       /* and put back */
        {"0x1", "0000000000000001"},
        {"0", "0000000000000000"},
        {"ffffffffffffffff", "ffffffffffffffff"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[TOPO_GUID_TEXT_SIZE];
        topo_err err = TOPO_ERR_INIT;
        if (topo_guid_normalise(out, cases[i].in, strlen(cases[i].in), "guid", &err) != 0)
            fail_msg("%s: %s", cases[i].in, err.text);
        if (strcmp(out, cases[i].out) != 0)
            fail_msg("%s: got %s, want %s", cases[i].in, out, cases[i].out);
    }
}

static void test_guid__refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "0x", "S-", "aa0000000000000001" /* 18 digits */, "10000000000000000",
        "aa01 ", " aa01", "aa01_1", "S-0xaa01", "s-aa01", "X-aa01", "aa01(aa02)",
        "0xaa01(", "0xaa01()", "0xaa01(aa02", "0xaa01(aa02)x", "0xaa01(g)", "gpu-01",
        "aa:01", "-aa01",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char out[TOPO_GUID_TEXT_SIZE];
        topo_err err = TOPO_ERR_INIT;
        if (topo_guid_normalise(out, bad[i], strlen(bad[i]), "[3].system_guid", &err) !=
            TOPO_EINVALID)
            fail_msg("\"%s\" accepted as %s", bad[i], out);
        if (strncmp(err.text, "[3].system_guid: not a GUID: \"", 30) != 0)
            fail_msg("\"%s\": %s", bad[i], err.text);
    }
    /* a length, not a C string: bytes past n are not read */
    uint64_t g = 0;
    assert_int_equal(topo_guid_parse(&g, "aa01zz", 4, "f", NULL), 0);
    assert_true(g == 0xaa01);
    assert_int_equal(topo_guid_parse(&g, NULL, 0, "f", NULL), TOPO_EINVALID);
}

static void test_guid__scan_and_format(void **state)
{
    (void)state;
    uint64_t g = 0;
    size_t used = 0;
    char out[TOPO_GUID_TEXT_SIZE];
    assert_int_equal(topo_guid_scan(&g, &used, "00AbC\"[1]", 9), 0);
    assert_int_equal(used, 5);
    assert_true(g == 0xabc);
    assert_int_equal(topo_guid_scan(&g, &used, "\"", 1), -1);
    assert_int_equal(topo_guid_scan(&g, &used, "11111111111111111", 17), -1);
    topo_guid_format(out, 0x0002c903007b78b0u);
    assert_string_equal(out, "0002c903007b78b0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guid__forms),
        cmocka_unit_test(test_guid__refused),
        cmocka_unit_test(test_guid__scan_and_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
