/* Tests for lib/util/utf8.c: topo_utf8_decode on well-formed sequences of
 * each length with their code points and every kind of ill-formed one;
 * topo_utf8_cut never splitting a character; topo_utf8_escape_controls
 * escaping what a terminal acts on and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/utf8.h"

static void test_utf8__decode(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t len;
        uint32_t rune;
    } rows[] = {
        {"a", 1, 'a'},
        {"\xc3\xa9", 2, 0xe9},             /* é */
        {"\xe2\x82\xac", 3, 0x20ac},       /* € */
        {"\xf0\x9f\x98\x80", 4, 0x1f600},  /* 😀 */
        {"\xf4\x8f\xbf\xbf", 4, 0x10ffff}, /* the last code point */
        {"\xc2\x80", 2, 0x80},
        {"\xc0\xaf", 0, 0},                /* overlong '/' */
        {"\xe0\x80\xaf", 0, 0},            /* overlong, 3 bytes */
        {"\xf0\x80\x80\xaf", 0, 0},        /* overlong, 4 bytes */
        {"\xed\xa0\x80", 0, 0},            /* a surrogate */
        {"\xf4\x90\x80\x80", 0, 0},        /* past U+10FFFF */
        {"\xf5\x80\x80\x80", 0, 0},
        {"\x80", 0, 0},                    /* a lone continuation byte */
        {"\xc3", 0, 0},                    /* cut by the end of the string */
        {"\xe2\x82", 0, 0},
        {"\xe2\x82x", 0, 0},               /* a non-continuation byte inside */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint32_t r = 0;
        size_t n = topo_utf8_decode(rows[i].s, &r);
        if (n != rows[i].len || (n > 0 && r != rows[i].rune))
            fail_msg("row %zu: got %zu U+%04X, want %zu U+%04X", i, n, (unsigned)r,
                     rows[i].len, (unsigned)rows[i].rune);
    }
    assert_int_equal(topo_utf8_decode("\xc3\xa9", NULL), 2);
}

/* A cut never splits a character: "a→b" (→ is 3 bytes at 1..3) cut to
 * 1, 2 or 3 bytes keeps "a"; to 4, all of "a→"; a string that fits stays. */
static void test_utf8__valid(void **state)
{
    (void)state;
    assert_true(topo_utf8_valid(NULL));
    assert_true(topo_utf8_valid(""));
    assert_true(topo_utf8_valid("rack-\xc3\xa9"));
    assert_false(topo_utf8_valid("\xff"));
    assert_false(topo_utf8_valid("ok\xc0\xaf")); /* overlong '/' */
    assert_false(topo_utf8_valid("\xed\xa0\x80")); /* a surrogate */
}

static void test_utf8__cut(void **state)
{
    (void)state;
    static const char s[] = "a\xe2\x86\x92" "b";
    assert_int_equal(topo_utf8_cut(s, 5, 5), 5);
    assert_int_equal(topo_utf8_cut(s, 5, 9), 5);
    assert_int_equal(topo_utf8_cut(s, 5, 4), 4);
    assert_int_equal(topo_utf8_cut(s, 5, 3), 1);
    assert_int_equal(topo_utf8_cut(s, 5, 2), 1);
    assert_int_equal(topo_utf8_cut(s, 5, 1), 1);
    assert_int_equal(topo_utf8_cut(s, 5, 0), 0);
    assert_int_equal(topo_utf8_cut(s + 1, 4, 2), 0); /* no whole character fits */
}

static void test_utf8__escape_controls(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"plain rack-1 é € 😀 a\\b", "plain rack-1 é € 😀 a\\b"},
        {"a\x1b[31mRED\nlevels from ConfigMap fake",
         "a\\x1b[31mRED\\nlevels from ConfigMap fake"},
        {"\r\t\x01\x7f", "\\r\\t\\x01\\x7f"},
        {"\xc2\x9b" "2J", "\\u009b2J"},       /* C1 CSI */
        {"\xc2\x85", "\\u0085"},           /* NEL */
        {"\xc2\xa0", "\xc2\xa0"},          /* no-break space: printable */
        {"x\x9by\xff", "x\\x9by\\xff"},   /* invalid UTF-8 bytes */
        {"\xe2\x82", "\\xe2\\x82"},       /* a character cut short */
        {"rack\xe2\x80\xae" "1-kcar", "rack\\u202e1-kcar"}, /* right-to-left override */
        {"\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069"},  /* isolates */
        {"\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f", "\\u061c\\u200e\\u200f"}, /* marks */
        {"\xe2\x80\x8d", "\xe2\x80\x8d"},   /* zero-width joiner: kept (emoji) */
        {"", ""},
    };
    char buf[128];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n = topo_utf8_escape_controls(buf, sizeof buf, rows[i].in);
        assert_string_equal(buf, rows[i].out);
        assert_int_equal(n, strlen(rows[i].out));
    }
    /* Too small: whole escapes and characters only, the full length said. */
    assert_int_equal(topo_utf8_escape_controls(buf, 6, "ab\x1b" "cd"), 8);
    assert_string_equal(buf, "ab");
    assert_int_equal(topo_utf8_escape_controls(buf, 4, "a\xe2\x82\xac"), 4);
    assert_string_equal(buf, "a");
    assert_int_equal(topo_utf8_escape_controls(NULL, 0, "\n"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8__decode),
        cmocka_unit_test(test_utf8__valid),
        cmocka_unit_test(test_utf8__cut),
        cmocka_unit_test(test_utf8__escape_controls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
