/* lib/util/goparse.c: every row gives the value Go gives, or Go's exact error
 * text. Expected values were worked out from Go's strconv/atoi.go, atob.go
 * and time/format.go (ParseDuration). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/error.h"
#include "topo/goparse.h"
#include "topo/pool.h"

/* A value no row expects: *out must keep it when parsing fails. */
#define SENTINEL 12345

static void check_err(const char *what, const char *input, int got, const topo_err *err,
                      const char *want_msg)
{
    if (want_msg == NULL) {
        if (got != 0) {
            print_error("%s '%s': unexpected error %d: %s\n", what, input, got, err->text);
            fail();
        }
        return;
    }
    if (got != TOPO_EINVALID || err->code != TOPO_EINVALID ||
        strcmp(err->text, want_msg) != 0) {
        print_error("%s '%s': got %d \"%s\", want TOPO_EINVALID \"%s\"\n", what, input, got,
                    err->text, want_msg);
        fail();
    }
}

/* ---- ParseBool ---- */

typedef struct bool_case {
    const char *input;
    int value;
    const char *msg; /* NULL: must parse */
} bool_case;

static const bool_case bool_cases[] = {
    {"1", 1, NULL},
    {"t", 1, NULL},
    {"T", 1, NULL},
    {"TRUE", 1, NULL},
    {"true", 1, NULL},
    {"True", 1, NULL},
    {"0", 0, NULL},
    {"f", 0, NULL},
    {"F", 0, NULL},
    {"FALSE", 0, NULL},
    {"false", 0, NULL},
    {"False", 0, NULL},
    {"yes", 0, "strconv.ParseBool: parsing \"yes\": invalid syntax"},
    {"", 0, "strconv.ParseBool: parsing \"\": invalid syntax"},
    {" true", 0, "strconv.ParseBool: parsing \" true\": invalid syntax"},
    {"TRUE ", 0, "strconv.ParseBool: parsing \"TRUE \": invalid syntax"},
    {"tRUE", 0, "strconv.ParseBool: parsing \"tRUE\": invalid syntax"},
    {"FaLsE", 0, "strconv.ParseBool: parsing \"FaLsE\": invalid syntax"},
    {"01", 0, "strconv.ParseBool: parsing \"01\": invalid syntax"},
    {"on", 0, "strconv.ParseBool: parsing \"on\": invalid syntax"},
    {"true\n", 0, "strconv.ParseBool: parsing \"true\\n\": invalid syntax"},
};

static void test_goparse__bool(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bool_cases) / sizeof(bool_cases[0]); i++) {
        const bool_case *c = &bool_cases[i];
        topo_err err = TOPO_ERR_INIT;
        int v = SENTINEL;
        int rc = topo_go_parse_bool(c->input, &v, &err);
        check_err("ParseBool", c->input, rc, &err, c->msg);
        assert_int_equal(v, c->msg ? SENTINEL : c->value);
    }
}

/* ---- ParseInt ---- */

typedef struct int_case {
    const char *input;
    int bits;
    int64_t value;
    const char *msg;
} int_case;

#define INT_OK(in, bits, v) {in, bits, v, NULL}
#define INT_SYNTAX(in, bits) {in, bits, 0, "strconv.ParseInt: parsing \"" in "\": invalid syntax"}
#define INT_RANGE(in, bits) {in, bits, 0, "strconv.ParseInt: parsing \"" in "\": value out of range"}

static const int_case int_cases[] = {
    INT_OK("0", 64, 0),
    INT_OK("5", 64, 5),
    INT_OK("+5", 64, 5),
    INT_OK("-5", 64, -5),
    INT_OK("-0", 64, 0),
    INT_OK("+0", 64, 0),
    INT_OK("007", 64, 7),
    INT_OK("-007", 64, -7),
    INT_OK("9223372036854775807", 64, INT64_MAX),
    INT_OK("-9223372036854775808", 64, INT64_MIN),
    INT_OK("00000000000000000000000000009223372036854775807", 64, INT64_MAX),
    INT_RANGE("9223372036854775808", 64),
    INT_RANGE("-9223372036854775809", 64),
    INT_RANGE("18446744073709551615", 64),
    INT_RANGE("18446744073709551616", 64),
    INT_RANGE("-18446744073709551616", 64),
    INT_RANGE("99999999999999999999999999999", 64),
    /* Go meets the overflow before the bad character. */
    INT_RANGE("99999999999999999999x", 64),
    INT_SYNTAX("x99999999999999999999", 64),
    INT_SYNTAX("9223372036854775807x", 64),
    /* 0 means 64 */
    INT_OK("9223372036854775807", 0, INT64_MAX),
    INT_OK("-9223372036854775808", 0, INT64_MIN),
    INT_RANGE("9223372036854775808", 0),
    /* 32 */
    INT_OK("2147483647", 32, INT32_MAX),
    INT_OK("-2147483648", 32, INT32_MIN),
    INT_RANGE("2147483648", 32),
    INT_RANGE("-2147483649", 32),
    INT_RANGE("4294967296", 32),
    INT_RANGE("4294967295", 32),
    /* 16 */
    INT_OK("32767", 16, INT16_MAX),
    INT_OK("-32768", 16, INT16_MIN),
    INT_RANGE("32768", 16),
    INT_RANGE("-32769", 16),
    /* 8 */
    INT_OK("127", 8, INT8_MAX),
    INT_OK("-128", 8, INT8_MIN),
    INT_OK("+127", 8, 127),
    INT_RANGE("128", 8),
    INT_RANGE("-129", 8),
    INT_RANGE("256", 8),
    /* other sizes Go accepts */
    INT_OK("16777215", 25, 16777215),
    INT_RANGE("16777216", 25),
    INT_OK("-16777216", 25, -16777216),
    INT_OK("0", 1, 0),
    INT_OK("-1", 1, -1),
    INT_RANGE("1", 1),
    /* Go's ParseInt at 1 bit: ParseUint's overflow to 1 passes the signed
     * check, so "-2" is -1 without an error. */
    INT_OK("-2", 1, -1),
    /* syntax */
    INT_SYNTAX("", 64),
    INT_SYNTAX("+", 64),
    INT_SYNTAX("-", 64),
    INT_SYNTAX("1_000", 64),
    INT_SYNTAX(" 1", 64),
    INT_SYNTAX("1 ", 64),
    INT_SYNTAX("0x10", 64),
    INT_SYNTAX("0b1", 64),
    INT_SYNTAX("1e3", 64),
    INT_SYNTAX("1.0", 64),
    INT_SYNTAX("--1", 64),
    INT_SYNTAX("+-1", 64),
    INT_SYNTAX("-+1", 64),
    INT_SYNTAX("1-", 64),
    INT_SYNTAX("a", 64),
    INT_SYNTAX("\xef\xbc\x91", 64), /* fullwidth digit one */
    /* the quoting of strconv.Quote */
    {"a\"b", 64, 0, "strconv.ParseInt: parsing \"a\\\"b\": invalid syntax"},
    {"a\\b", 64, 0, "strconv.ParseInt: parsing \"a\\\\b\": invalid syntax"},
    {"\t1\n", 64, 0, "strconv.ParseInt: parsing \"\\t1\\n\": invalid syntax"},
    {"\a\b\f\r\v", 64, 0, "strconv.ParseInt: parsing \"\\a\\b\\f\\r\\v\": invalid syntax"},
    {"\x01\x1f\x7f", 64, 0, "strconv.ParseInt: parsing \"\\x01\\x1f\\x7f\": invalid syntax"},
    {"\xc3\xa9", 64, 0, "strconv.ParseInt: parsing \"\xc3\xa9\": invalid syntax"},
    {"\xff" "1", 64, 0, "strconv.ParseInt: parsing \"\\xff1\": invalid syntax"},
    {"\xc3", 64, 0, "strconv.ParseInt: parsing \"\\xc3\": invalid syntax"},
    {"\xc0\x80", 64, 0, "strconv.ParseInt: parsing \"\\xc0\\x80\": invalid syntax"},
    {"\xed\xa0\x80", 64, 0, "strconv.ParseInt: parsing \"\\xed\\xa0\\x80\": invalid syntax"},
    {"\xc2\x85", 64, 0, "strconv.ParseInt: parsing \"\\u0085\": invalid syntax"},
    {"\xf0\x9f\x98\x80", 64, 0, "strconv.ParseInt: parsing \"\xf0\x9f\x98\x80\": invalid syntax"},
    /* bit sizes: an empty string is a syntax error first */
    {"5", 65, 0, "strconv.ParseInt: parsing \"5\": invalid bit size 65"},
    {"-5", -1, 0, "strconv.ParseInt: parsing \"-5\": invalid bit size -1"},
    {"x", 100, 0, "strconv.ParseInt: parsing \"x\": invalid bit size 100"},
    INT_SYNTAX("", 65),
    INT_SYNTAX("-", 65),
};

static void test_goparse__int(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
        const int_case *c = &int_cases[i];
        topo_err err = TOPO_ERR_INIT;
        int64_t v = SENTINEL;
        int rc = topo_go_parse_int(c->input, c->bits, &v, &err);
        check_err("ParseInt", c->input, rc, &err, c->msg);
        if (v != (c->msg ? SENTINEL : c->value)) {
            print_error("ParseInt '%s' (%d bits): got %lld, want %lld\n", c->input, c->bits,
                        (long long)v, (long long)c->value);
            fail();
        }
    }
}

/* ---- ParseUint ---- */

typedef struct uint_case {
    const char *input;
    int bits;
    uint64_t value;
    const char *msg;
} uint_case;

#define UINT_OK(in, bits, v) {in, bits, v, NULL}
#define UINT_SYNTAX(in, bits) {in, bits, 0, "strconv.ParseUint: parsing \"" in "\": invalid syntax"}
#define UINT_RANGE(in, bits)                                                                      \
    {in, bits, 0, "strconv.ParseUint: parsing \"" in "\": value out of range"}

static const uint_case uint_cases[] = {
    UINT_OK("0", 64, 0),
    UINT_OK("42", 64, 42),
    UINT_OK("0042", 64, 42),
    UINT_OK("18446744073709551615", 64, UINT64_MAX),
    UINT_OK("18446744073709551615", 0, UINT64_MAX),
    UINT_RANGE("18446744073709551616", 64),
    UINT_RANGE("18446744073709551620", 64),
    UINT_RANGE("99999999999999999999", 64),
    UINT_RANGE("99999999999999999999x", 64),
    UINT_OK("9223372036854775808", 64, UINT64_C(9223372036854775808)),
    UINT_OK("4294967295", 32, UINT32_MAX),
    UINT_RANGE("4294967296", 32),
    UINT_OK("65535", 16, UINT16_MAX),
    UINT_RANGE("65536", 16),
    UINT_OK("255", 8, UINT8_MAX),
    UINT_RANGE("256", 8),
    UINT_OK("1", 1, 1),
    UINT_RANGE("2", 1),
    UINT_SYNTAX("-1", 64),
    UINT_SYNTAX("+1", 64),
    UINT_SYNTAX("-0", 64),
    UINT_SYNTAX("", 64),
    UINT_SYNTAX("1_000", 64),
    UINT_SYNTAX(" 1", 64),
    UINT_SYNTAX("0x10", 64),
    UINT_SYNTAX("1x", 64),
    {"1", 65, 0, "strconv.ParseUint: parsing \"1\": invalid bit size 65"},
    {"1", -8, 0, "strconv.ParseUint: parsing \"1\": invalid bit size -8"},
    UINT_SYNTAX("", 65),
};

static void test_goparse__uint(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(uint_cases) / sizeof(uint_cases[0]); i++) {
        const uint_case *c = &uint_cases[i];
        topo_err err = TOPO_ERR_INIT;
        uint64_t v = SENTINEL;
        int rc = topo_go_parse_uint(c->input, c->bits, &v, &err);
        check_err("ParseUint", c->input, rc, &err, c->msg);
        if (v != (c->msg ? SENTINEL : c->value)) {
            print_error("ParseUint '%s' (%d bits): got %llu, want %llu\n", c->input, c->bits,
                        (unsigned long long)v, (unsigned long long)c->value);
            fail();
        }
    }
}

/* ---- ParseDuration ---- */

typedef struct dur_case {
    const char *input;
    int64_t ns;
    const char *msg;
} dur_case;

#define NS_PER_US INT64_C(1000)
#define NS_PER_MS INT64_C(1000000)
#define NS_PER_S INT64_C(1000000000)
#define NS_PER_M (60 * NS_PER_S)
#define NS_PER_H (60 * NS_PER_M)

#define DUR_OK(in, ns) {in, ns, NULL}
#define DUR_INVALID(in) {in, 0, "time: invalid duration \"" in "\""}
#define DUR_NO_UNIT(in) {in, 0, "time: missing unit in duration \"" in "\""}
#define DUR_UNKNOWN(in, u) {in, 0, "time: unknown unit \"" u "\" in duration \"" in "\""}

static const dur_case dur_cases[] = {
    DUR_OK("0", 0),
    DUR_OK("+0", 0),
    DUR_OK("-0", 0),
    DUR_OK("0s", 0),
    DUR_OK("-0s", 0),
    DUR_OK("1ns", 1),
    DUR_OK("1us", NS_PER_US),
    DUR_OK("1\xc2\xb5s", NS_PER_US), /* U+00B5 micro sign */
    DUR_OK("1\xce\xbcs", NS_PER_US), /* U+03BC Greek mu */
    DUR_OK("300ms", 300 * NS_PER_MS),
    DUR_OK("10s", 10 * NS_PER_S),
    DUR_OK("1m", NS_PER_M),
    DUR_OK("1.5h", NS_PER_H + 30 * NS_PER_M),
    DUR_OK("1h30m", NS_PER_H + 30 * NS_PER_M),
    DUR_OK("-1.5h", -(NS_PER_H + 30 * NS_PER_M)),
    DUR_OK("+1.5h", NS_PER_H + 30 * NS_PER_M),
    DUR_OK("2h45m", 2 * NS_PER_H + 45 * NS_PER_M),
    DUR_OK(".5s", 500 * NS_PER_MS),
    DUR_OK("1.s", NS_PER_S),
    DUR_OK("1.5s", 1500 * NS_PER_MS),
    DUR_OK("1.000000001s", NS_PER_S + 1),
    DUR_OK("1.0000000001s", NS_PER_S), /* below a nanosecond: truncated */
    DUR_OK("0.1ns", 0),
    DUR_OK("1h1m1s1ms1us1ns", NS_PER_H + NS_PER_M + NS_PER_S + NS_PER_MS + NS_PER_US + 1),
    DUR_OK("1s1s", 2 * NS_PER_S), /* units may repeat */
    DUR_OK("1.00000000000000000000000000000000000000001s", NS_PER_S),
    DUR_OK("0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
           "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
           "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
           "00000000000000000000000000000000000000000000000000000000000000000000000000000001h",
           0), /* the float64 scale reaches +Inf; the fraction adds 0 */
    /* The fraction is added in float64, as Go does: with trailing zeros the
     * scale is 1e14 and 3.6e12/1e14 is inexact, so Go (and topo) give one
     * nanosecond less than the exact 212752421424. */
    DUR_OK("0.05909789484h", INT64_C(212752421424)),
    DUR_OK("0.05909789484000h", INT64_C(212752421423)),
    DUR_OK("0.999999999999999999999h", NS_PER_H),
    /* int64 edges */
    DUR_OK("9223372036854775807ns", INT64_MAX),
    DUR_OK("-9223372036854775808ns", INT64_MIN),
    DUR_OK("2562047h47m16.854775807s", INT64_MAX),
    DUR_OK("-2562047h47m16.854775808s", INT64_MIN),
    DUR_OK("2562047h", INT64_C(2562047) * NS_PER_H),
    DUR_INVALID("9223372036854775808ns"),
    DUR_INVALID("-9223372036854775809ns"),
    DUR_INVALID("99999999999999999999ns"),
    DUR_INVALID("2562048h"),
    DUR_INVALID("2562047h47m16.854775808s"),
    DUR_INVALID("9223372036854775807ns1ns"),
    DUR_INVALID("1.5s9223372036854775807ns"),
    /* invalid */
    DUR_INVALID(""),
    DUR_INVALID("."),
    DUR_INVALID(".s"),
    DUR_INVALID("-.s"),
    DUR_INVALID("-"),
    DUR_INVALID("+"),
    DUR_INVALID("s"),
    DUR_INVALID("nans"),
    DUR_INVALID("inf"),
    DUR_INVALID("+-1s"),
    DUR_INVALID("--1s"),
    DUR_INVALID(" 1s"),
    DUR_NO_UNIT("1"),
    DUR_NO_UNIT("00"),
    DUR_NO_UNIT("-1"),
    DUR_NO_UNIT("1.5"),
    DUR_NO_UNIT("1s2"),
    DUR_NO_UNIT("1.5.5s"),
    DUR_UNKNOWN("1d", "d"),
    DUR_UNKNOWN("1S", "S"),
    DUR_UNKNOWN("1e3s", "e"),
    DUR_UNKNOWN("1h 30m", "h "),
    DUR_UNKNOWN("1s ", "s "),
    DUR_UNKNOWN("1s-1s", "s-"), /* a unit runs up to the next digit or '.' */
    DUR_UNKNOWN("1sec", "sec"),
    DUR_UNKNOWN("1msx", "msx"),
    DUR_UNKNOWN("0x10s", "x"),
    /* time's quote: \xNN for every byte below ' ' or non-ASCII */
    {"1\xc2\xb5x", 0, "time: unknown unit \"\\xc2\\xb5x\" in duration \"1\\xc2\\xb5x\""},
    {"1\ts", 0, "time: unknown unit \"\\x09s\" in duration \"1\\x09s\""},
    {"1\"s", 0, "time: unknown unit \"\\\"s\" in duration \"1\\\"s\""},
    {"1\\s", 0, "time: unknown unit \"\\\\s\" in duration \"1\\\\s\""},
    {"1\x7fs", 0, "time: unknown unit \"\x7fs\" in duration \"1\x7fs\""},
    {"\xff", 0, "time: invalid duration \"\\xff\""},
};

static void test_goparse__duration(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(dur_cases) / sizeof(dur_cases[0]); i++) {
        const dur_case *c = &dur_cases[i];
        topo_err err = TOPO_ERR_INIT;
        int64_t v = SENTINEL;
        int rc = topo_go_parse_duration(c->input, &v, &err);
        check_err("ParseDuration", c->input, rc, &err, c->msg);
        if (v != (c->msg ? SENTINEL : c->ns)) {
            print_error("ParseDuration '%s': got %lld, want %lld\n", c->input, (long long)v,
                        (long long)c->ns);
            fail();
        }
    }
}

/* A NULL topo_err is accepted everywhere; a NULL string reads as "". */
static void test_goparse__null(void **state)
{
    (void)state;
    int b = SENTINEL;
    int64_t i = SENTINEL;
    uint64_t u = SENTINEL;
    assert_int_equal(topo_go_parse_bool("x", &b, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_bool("T", &b, NULL), 0);
    assert_int_equal(b, 1);
    assert_int_equal(topo_go_parse_int("x", 64, &i, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_int("99999999999999999999", 64, &i, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_int("1", 99, &i, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_int("-12", 64, &i, NULL), 0);
    assert_int_equal(i, -12);
    assert_int_equal(topo_go_parse_uint("-1", 64, &u, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_uint("1", 99, &u, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_duration("1d", &i, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_duration("1", &i, NULL), TOPO_EINVALID);
    assert_int_equal(topo_go_parse_duration("2s", &i, NULL), 0);
    assert_int_equal(i, 2 * NS_PER_S);

    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_go_parse_bool(NULL, &b, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "strconv.ParseBool: parsing \"\": invalid syntax");
    assert_int_equal(topo_go_parse_int(NULL, 64, &i, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "strconv.ParseInt: parsing \"\": invalid syntax");
    assert_int_equal(topo_go_parse_uint(NULL, 64, &u, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "strconv.ParseUint: parsing \"\": invalid syntax");
    assert_int_equal(topo_go_parse_duration(NULL, &i, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "time: invalid duration \"\"");
}

/* Inputs longer than the message buffer: the quote is cut after a whole
 * escape and closed with ...", and the message keeps its ending. */
static void test_goparse__long_inputs(void **state)
{
    (void)state;
    static char buf[4096];
    topo_err err = TOPO_ERR_INIT;
    int64_t v = SENTINEL;
    uint64_t u = SENTINEL;
    const char *end;

    memset(buf, '9', sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    assert_int_equal(topo_go_parse_int(buf, 64, &v, &err), TOPO_EINVALID);
    assert_int_equal(strncmp(err.text, "strconv.ParseInt: parsing \"999", 30), 0);
    assert_true(strlen(err.text) < TOPO_ERR_TEXT_MAX);
    end = "9...\": value out of range";
    assert_string_equal(err.text + strlen(err.text) - strlen(end), end);
    assert_int_equal(v, SENTINEL);

    memset(buf, '\x01', sizeof(buf) - 1);
    assert_int_equal(topo_go_parse_uint(buf, 64, &u, &err), TOPO_EINVALID);
    size_t n = strlen(err.text);
    assert_true(n < TOPO_ERR_TEXT_MAX);
    end = "...\": invalid syntax";
    assert_string_equal(err.text + n - strlen(end), end);
    /* Only whole "\x01" escapes between the opening quote and the "...". */
    const char *q = strchr(err.text, '"') + 1;
    size_t escaped = (size_t)(err.text + n - strlen(end) - q);
    assert_true(escaped > 100);
    assert_int_equal(escaped % 4, 0);
    for (size_t i = 0; i < escaped; i += 4)
        assert_memory_equal(q + i, "\\x01", 4);
    assert_int_equal(u, SENTINEL);

    /* Both quotes of an unknown unit are cut, the message stays whole. */
    buf[0] = '1';
    memset(buf + 1, 'x', sizeof(buf) - 2);
    assert_int_equal(topo_go_parse_duration(buf, &v, &err), TOPO_EINVALID);
    assert_true(strlen(err.text) < TOPO_ERR_TEXT_MAX);
    assert_int_equal(strncmp(err.text, "time: unknown unit \"xxx", 23), 0);
    assert_non_null(strstr(err.text, "x...\" in duration \"1xxx"));
    end = "x...\"";
    assert_string_equal(err.text + strlen(err.text) - strlen(end), end);

    /* A very long fraction still parses: digits past 19 are ignored, and
     * 5555555555555555555 / 1e19 s is 555555555 ns in float64. */
    buf[0] = '1';
    buf[1] = '.';
    memset(buf + 2, '5', 4000);
    memcpy(buf + 4002, "s", 2);
    assert_int_equal(topo_go_parse_duration(buf, &v, &err), 0);
    assert_int_equal(v, NS_PER_S + 555555555);
    assert_int_equal(topo_go_parse_duration("\xce\xbc", &v, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "time: invalid duration \"\\xce\\xbc\"");
}

/* strconv.Quote into pool memory, never cut. */
static void test_goparse__quote(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"", "\"\""},
        {"abc", "\"abc\""},
        {"zone a/b", "\"zone a/b\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"\a\b\f\n\r\t\v", "\"\\a\\b\\f\\n\\r\\t\\v\""},
        {"\x01\x7f", "\"\\x01\\x7f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xff\xfe", "\"\\xff\\xfe\""},
        {"\xe2\x82", "\"\\xe2\\x82\""},               /* truncated sequence */
        {"\xf4\x90\x80\x80", "\"\\xf4\\x90\\x80\\x80\""}, /* past U+10FFFF */
        {"\xc2\x80\xc2\x9f", "\"\\u0080\\u009f\""},
    };
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = topo_go_quote(pool, cases[i].in);
        assert_non_null(got);
        if (strcmp(got, cases[i].want) != 0) {
            print_error("quote #%zu: got %s, want %s\n", i, got, cases[i].want);
            fail();
        }
    }
    assert_string_equal(topo_go_quote(pool, NULL), "\"\"");

    static char buf[5001];
    memset(buf, '\x01', sizeof(buf) - 1);
    const char *q = topo_go_quote(pool, buf);
    assert_non_null(q);
    assert_int_equal(strlen(q), 4 * (sizeof(buf) - 1) + 2);
    assert_memory_equal(q + strlen(q) - 5, "\\x01\"", 5);
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goparse__bool),     cmocka_unit_test(test_goparse__int),
        cmocka_unit_test(test_goparse__uint),     cmocka_unit_test(test_goparse__duration),
        cmocka_unit_test(test_goparse__null),     cmocka_unit_test(test_goparse__long_inputs),
        cmocka_unit_test(test_goparse__quote),
    };
    return cmocka_run_group_tests_name("goparse", tests, NULL, NULL);
}
