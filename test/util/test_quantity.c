/* lib/util/quantity.c: every row is parsed as milli-units and as whole units
 * and must give the expected value or error code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/error.h"
#include "topo/quantity.h"

typedef struct quantity_case {
    const char *input;
    int64_t milli;
    int milli_code;
    int64_t value;
    int value_code;
} quantity_case;

#define OK(in, milli, value) {in, milli, TOPO_OK, value, TOPO_OK}
/* Whole value fits, milli-value does not. */
#define MILLI_OVER(in, value) {in, 0, TOPO_ELIMIT, value, TOPO_OK}
#define BOTH(in, code) {in, 0, code, 0, code}

static const quantity_case cases[] = {
    /* plain numbers */
    OK("0", 0, 0),
    OK("1", 1000, 1),
    OK("8", 8000, 8),
    OK("+5", 5000, 5),
    OK("007", 7000, 7),
    OK("1.5", 1500, 2),
    OK(".5", 500, 1),
    OK("1.", 1000, 1),
    OK("0.000", 0, 0),
    OK("-0", 0, 0),
    OK("0.30000000000000004", 301, 1),
    OK("123456789.123456789123", INT64_C(123456789124), INT64_C(123456790)),
    OK("1.0000000000000000000000000001", 1001, 2),
    OK("0.000000000000000000000000000001", 1, 1),
    /* decimal SI suffixes */
    OK("1n", 1, 1),
    OK("1u", 1, 1),
    OK("500m", 500, 1),
    OK("0.1m", 1, 1),
    OK("1000m", 1000, 1),
    OK("1001m", 1001, 2),
    OK("1k", 1000000, 1000),
    OK("1M", INT64_C(1000000000), 1000000),
    OK("1G", INT64_C(1000000000000), INT64_C(1000000000)),
    OK("1T", INT64_C(1000000000000000), INT64_C(1000000000000)),
    OK("1P", INT64_C(1000000000000000000), INT64_C(1000000000000000)),
    MILLI_OVER("1E", INT64_C(1000000000000000000)),
    MILLI_OVER("9E", INT64_C(9000000000000000000)),
    BOTH("10E", TOPO_ELIMIT),
    OK("1.5k", 1500000, 1500),
    /* binary SI suffixes */
    OK("1Ki", 1024000, 1024),
    OK("1Mi", INT64_C(1048576000), 1048576),
    OK("100Mi", INT64_C(104857600000), INT64_C(104857600)),
    OK("1Gi", INT64_C(1073741824000), INT64_C(1073741824)),
    OK("1.5Gi", INT64_C(1610612736000), INT64_C(1610612736)),
    OK("0.9Gi", INT64_C(966367641600), INT64_C(966367642)),
    OK("1Ti", INT64_C(1099511627776000), INT64_C(1099511627776)),
    OK("1Pi", INT64_C(1125899906842624000), INT64_C(1125899906842624)),
    MILLI_OVER("1Ei", INT64_C(1152921504606846976)),
    MILLI_OVER("7Ei", INT64_C(8070450532247928832)),
    BOTH("8Ei", TOPO_ELIMIT),
    OK("0.5Ki", 512000, 512),
    OK("0.001Ki", 1024, 2),
    /* decimal exponents */
    OK("2e3", 2000000, 2000),
    OK("1e+3", 1000000, 1000),
    OK("1E3", 1000000, 1000),
    OK("1E-3", 1, 1),
    OK("1e-9", 1, 1),
    OK("1e-30", 1, 1),
    OK("1.e3", 1000000, 1000),
    OK("1.5e1", 15000, 15),
    OK("0e999", 0, 0),
    OK("0e9223372036854775807", 0, 0),
    OK("1e-9223372036854775808", 1, 1),
    BOTH("1e19", TOPO_ELIMIT),
    BOTH("1e9223372036854775807", TOPO_ELIMIT),
    /* int64 edges */
    MILLI_OVER("9223372036854775807", INT64_MAX),
    BOTH("9223372036854775808", TOPO_ELIMIT),
    BOTH("12345678901234567890123", TOPO_ELIMIT),
    OK("9223372036854775.807", INT64_MAX, INT64_C(9223372036854776)),
    {"9223372036854775.8071", 0, TOPO_ELIMIT, INT64_C(9223372036854776), TOPO_OK},
    OK("-9223372036854775.808", INT64_MIN, INT64_C(-9223372036854775)),
    {"-8Ei", 0, TOPO_ELIMIT, INT64_MIN, TOPO_OK},
    /* negative values round toward +inf, after rounding the magnitude up to
     * a whole nano-unit as ParseQuantity does */
    OK("-1", -1000, -1),
    OK("-1.5", -1500, -1),
    OK("-500m", -500, 0),
    OK("-0.1m", 0, 0),
    OK("-1.9999999999", -2000, -2),
    OK("-0.0019999999999", -2, 0),
    OK("-2e3", -2000000, -2000),
    /* garbage */
    BOTH("", TOPO_EINVALID),
    BOTH(" 1", TOPO_EINVALID),
    BOTH("1 ", TOPO_EINVALID),
    BOTH("1\n", TOPO_EINVALID),
    BOTH("1KB", TOPO_EINVALID),
    BOTH("1K", TOPO_EINVALID),
    BOTH("1.5.5", TOPO_EINVALID),
    BOTH("m", TOPO_EINVALID),
    BOTH("Ki", TOPO_EINVALID),
    BOTH("--1", TOPO_EINVALID),
    BOTH("+-1", TOPO_EINVALID),
    BOTH("+", TOPO_EINVALID),
    BOTH("-", TOPO_EINVALID),
    BOTH(".", TOPO_EINVALID),
    BOTH("abc", TOPO_EINVALID),
    BOTH("0x10", TOPO_EINVALID),
    BOTH("1,5", TOPO_EINVALID),
    BOTH("1_000", TOPO_EINVALID),
    BOTH("1e", TOPO_EINVALID),
    BOTH("1e+", TOPO_EINVALID),
    BOTH("1e3.5", TOPO_EINVALID),
    BOTH("1e3m", TOPO_EINVALID),
    BOTH("1i", TOPO_EINVALID),
    BOTH("1mm", TOPO_EINVALID),
    BOTH("1Mi+", TOPO_EINVALID),
    BOTH("1Gib", TOPO_EINVALID),
    BOTH("1ki", TOPO_EINVALID),
    BOTH("1e9223372036854775808", TOPO_EINVALID),
};

static void check(const quantity_case *c, int milli)
{
    topo_err err = TOPO_ERR_INIT;
    int64_t got = 12345;
    int code = milli ? topo_quantity_parse_milli(&got, c->input, &err)
                     : topo_quantity_parse_value(&got, c->input, &err);
    int want_code = milli ? c->milli_code : c->value_code;
    int64_t want = milli ? c->milli : c->value;
    const char *what = milli ? "milli" : "value";

    if (code != want_code) {
        print_error("'%s' (%s): got %s (%s), want %s\n", c->input, what, topo_err_name(code),
                    err.text, topo_err_name(want_code));
        fail();
    }
    if (code == TOPO_OK) {
        if (got != want) {
            print_error("'%s' (%s): got %lld, want %lld\n", c->input, what, (long long)got,
                        (long long)want);
            fail();
        }
        return;
    }
    assert_int_equal(err.code, want_code);
    assert_int_equal(got, 12345); /* untouched on error */
    /* The message names the offending text. */
    if (strstr(err.text, c->input) == NULL) {
        print_error("'%s' (%s): message does not name the input: %s\n", c->input, what,
                    err.text);
        fail();
    }
}

static void test_quantity__table(void **state)
{
    (void)state;
    size_t n = sizeof(cases) / sizeof(cases[0]);
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++) {
        check(&cases[i], 1);
        check(&cases[i], 0);
    }
}

static void test_quantity__resource(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    int64_t v = 0;

    assert_int_equal(topo_quantity_parse_resource(&v, "cpu", "500m", &err), 0);
    assert_int_equal(v, 500);
    assert_int_equal(topo_quantity_parse_resource(&v, "cpu", "2", &err), 0);
    assert_int_equal(v, 2000);
    assert_int_equal(topo_quantity_parse_resource(&v, "memory", "1Gi", &err), 0);
    assert_int_equal(v, INT64_C(1073741824));
    assert_int_equal(topo_quantity_parse_resource(&v, "nvidia.com/gpu", "8", &err), 0);
    assert_int_equal(v, 8);
    assert_int_equal(topo_quantity_parse_resource(&v, "memory", "500m", &err), 0);
    assert_int_equal(v, 1);
    /* "cpu" only, exactly */
    assert_int_equal(topo_quantity_parse_resource(&v, "CPU", "500m", &err), 0);
    assert_int_equal(v, 1);

    assert_int_equal(topo_quantity_parse_resource(&v, "memory", "1KB", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "memory"));
    assert_non_null(strstr(err.text, "1KB"));
    topo_err_clear(&err);
    assert_int_equal(topo_quantity_parse_resource(&v, "cpu", "1Ei", &err), TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "cpu"));
    assert_int_equal(topo_quantity_parse_resource(&v, NULL, "1", &err), TOPO_EINVALID);
}

static void test_quantity__null_and_no_err(void **state)
{
    (void)state;
    int64_t v = 0;
    topo_err err = TOPO_ERR_INIT;

    /* err may be NULL */
    assert_int_equal(topo_quantity_parse_milli(&v, "1", NULL), 0);
    assert_int_equal(v, 1000);
    assert_int_equal(topo_quantity_parse_milli(&v, "bad", NULL), TOPO_EINVALID);
    assert_int_equal(topo_quantity_parse_value(&v, "1Ei0", NULL), TOPO_EINVALID);
    assert_int_equal(topo_quantity_parse_milli(&v, NULL, &err), TOPO_EINVALID);
    assert_int_equal(topo_quantity_parse_value(NULL, "1", &err), TOPO_EINVALID);
}

static void test_quantity__long_inputs(void **state)
{
    (void)state;
    char buf[1200];
    int64_t v = 0;
    topo_err err = TOPO_ERR_INIT;

    /* Many zeros cost nothing: "0.000...0001" and "1000...000e-N". */
    buf[0] = '0';
    buf[1] = '.';
    memset(buf + 2, '0', 1000);
    memcpy(buf + 1002, "1", 2);
    assert_int_equal(topo_quantity_parse_milli(&v, buf, &err), 0);
    assert_int_equal(v, 1);

    buf[0] = '1';
    memset(buf + 1, '0', 1000);
    memcpy(buf + 1001, "e-1000", 7);
    assert_int_equal(topo_quantity_parse_value(&v, buf, &err), 0);
    assert_int_equal(v, 1);

    /* Too many significant digits are a limit, not a crash. */
    memset(buf, '1', 1000);
    memcpy(buf + 1000, "e-990", 6);
    assert_int_equal(topo_quantity_parse_value(&v, buf, &err), TOPO_ELIMIT);

    /* The message quotes a bounded prefix of the text. */
    memset(buf, '9', 200);
    memcpy(buf + 200, "X", 2);
    assert_int_equal(topo_quantity_parse_value(&v, buf, &err), TOPO_EINVALID);
    assert_true(strlen(err.text) < 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity__table),
        cmocka_unit_test(test_quantity__resource),
        cmocka_unit_test(test_quantity__null_and_no_err),
        cmocka_unit_test(test_quantity__long_inputs),
    };
    return cmocka_run_group_tests_name("quantity", tests, NULL, NULL);
}
