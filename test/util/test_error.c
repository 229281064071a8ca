/* lib/util/error.c: topo_err set/wrap/at/clear, names and messages generated
 * from TOPO_ERROR_MAP, and NULL tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/error.h"

typedef struct code_case {
    int code;
    const char *name;
    const char *text;
} code_case;

static const code_case codes[] = {
    {TOPO_OK, "OK", "success"},
    {TOPO_EGENERIC, "TOPO_EGENERIC", "failure"},
    {TOPO_ENOMEM, "TOPO_ENOMEM", "out of memory"},
    {TOPO_EINVALID, "TOPO_EINVALID", "invalid input"},
    {TOPO_ELIMIT, "TOPO_ELIMIT", "input exceeds configured limit"},
    {TOPO_EIO, "TOPO_EIO", "input/output error"},
    {TOPO_ENOTFOUND, "TOPO_ENOTFOUND", "not found"},
    {TOPO_ENOFIT, "TOPO_ENOFIT", "does not fit"},
    {TOPO_EUNSUPPORTED, "TOPO_EUNSUPPORTED", "not supported"},
    {TOPO_EWAITING, "TOPO_EWAITING", "waiting for more pods"},
    {TOPO_EAUTH, "TOPO_EAUTH", "credentials unavailable"},
    {-999, "TOPO_EUNKNOWN", "unknown error"},
    {1, "TOPO_EUNKNOWN", "unknown error"},
};

static void test_error__names_and_messages(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        assert_string_equal(topo_err_name(codes[i].code), codes[i].name);
        assert_string_equal(topo_strerror(codes[i].code), codes[i].text);
    }
}

/* Released values never change. */
static void test_error__stable_values(void **state)
{
    (void)state;
    assert_int_equal(TOPO_OK, 0);
    assert_int_equal(TOPO_EGENERIC, -1);
    assert_int_equal(TOPO_ENOMEM, -2);
    assert_int_equal(TOPO_EINVALID, -3);
    assert_int_equal(TOPO_ELIMIT, -4);
    assert_int_equal(TOPO_EIO, -5);
    assert_int_equal(TOPO_ENOTFOUND, -6);
    assert_int_equal(TOPO_ENOFIT, -7);
    assert_int_equal(TOPO_EUNSUPPORTED, -8);
    assert_int_equal(TOPO_EWAITING, -17);
    assert_int_equal(TOPO_EAUTH, -18);
}

static void test_error__set(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(err.code, 0);
    assert_string_equal(err.text, "");
    assert_int_equal(topo_err_set(&err, TOPO_EINVALID, "bad %s at %d", "label", 7),
                     TOPO_EINVALID);
    assert_int_equal(err.code, TOPO_EINVALID);
    assert_string_equal(err.text, "bad label at 7");

    /* A later set replaces code and text. */
    assert_int_equal(topo_err_set(&err, TOPO_ENOFIT, "no room"), TOPO_ENOFIT);
    assert_int_equal(err.code, TOPO_ENOFIT);
    assert_string_equal(err.text, "no room");

    /* NULL err: the code still comes back. */
    assert_int_equal(topo_err_set(NULL, TOPO_ELIMIT, "ignored %d", 1), TOPO_ELIMIT);
}

static void test_error__set_truncates(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    char big[TOPO_ERR_TEXT_MAX * 2];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';

    topo_err_set(&err, TOPO_EINVALID, "%s", big);
    assert_int_equal(strlen(err.text), TOPO_ERR_TEXT_MAX - 1);
    assert_int_equal(err.code, TOPO_EINVALID);
}

static void test_error__wrap(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;

    topo_err_set(&err, TOPO_ENOTFOUND, "node gpu-7");
    assert_int_equal(topo_err_wrap(&err, "%s", "nodes.json"), TOPO_ENOTFOUND);
    assert_string_equal(err.text, "nodes.json: node gpu-7");
    assert_int_equal(topo_err_wrap(&err, "assign %d", 2), TOPO_ENOTFOUND);
    assert_string_equal(err.text, "assign 2: nodes.json: node gpu-7");
    assert_int_equal(err.code, TOPO_ENOTFOUND);

    /* Wrapping an unset error makes it a generic failure. */
    topo_err fresh = TOPO_ERR_INIT;
    assert_int_equal(topo_err_wrap(&fresh, "ctx"), TOPO_EGENERIC);
    assert_int_equal(fresh.code, TOPO_EGENERIC);
    assert_string_equal(fresh.text, "ctx: ");

    assert_int_equal(topo_err_wrap(NULL, "ctx"), TOPO_EGENERIC);
}

static void test_error__wrap_truncates(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    char big[TOPO_ERR_TEXT_MAX];
    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';

    topo_err_set(&err, TOPO_EIO, "%s", big);
    topo_err_wrap(&err, "prefix");
    assert_int_equal(strlen(err.text), TOPO_ERR_TEXT_MAX - 1);
    assert_memory_equal(err.text, "prefix: bbb", 11);
    assert_int_equal(err.code, TOPO_EIO);
}

/* A message cut to fit never ends inside a UTF-8 character: the text goes
 * into JSON (AdmissionReview status), which refuses a broken one. */
static void test_error__truncates_on_utf8_boundaries(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    char big[TOPO_ERR_TEXT_MAX * 2 + 1];
    for (size_t shift = 0; shift < 3; shift++) {
        /* "x" (shift times) then "é" (2 bytes) or "€" (3 bytes) repeated */
        const char *ch = shift == 2 ? "\xe2\x82\xac" : "\xc3\xa9";
        size_t n = 0, w = strlen(ch);
        for (; n < shift; n++)
            big[n] = 'x';
        while (n + w < sizeof big) {
            memcpy(big + n, ch, w);
            n += w;
        }
        big[n] = '\0';
        topo_err_set(&err, TOPO_EINVALID, "%s", big);
        size_t len = strlen(err.text);
        assert_true(len < TOPO_ERR_TEXT_MAX);
        assert_true(len + w >= TOPO_ERR_TEXT_MAX - 1); /* cut at most one character short */
        assert_int_equal((len - shift) % w, 0);         /* whole characters only */
        topo_err_wrap(&err, "p");
        len = strlen(err.text);
        assert_int_equal((len - 3 - shift) % w, 0);
    }
}

static void test_error__at_and_clear(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;

    topo_err_set(&err, TOPO_EINVALID, "unexpected key");
    topo_err_at(&err, "fixtures/clusters/a.yaml", 12, 5);
    assert_string_equal(err.source, "fixtures/clusters/a.yaml");
    assert_int_equal(err.line, 12);
    assert_int_equal(err.column, 5);
    assert_int_equal(err.code, TOPO_EINVALID);

    topo_err_clear(&err);
    assert_int_equal(err.code, 0);
    assert_string_equal(err.text, "");
    assert_null(err.source);
    assert_int_equal(err.line, 0);
    assert_int_equal(err.column, 0);

    topo_err_at(NULL, "x", 1, 1);
    topo_err_clear(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error__names_and_messages),
        cmocka_unit_test(test_error__stable_values),
        cmocka_unit_test(test_error__set),
        cmocka_unit_test(test_error__set_truncates),
        cmocka_unit_test(test_error__wrap),
        cmocka_unit_test(test_error__wrap_truncates),
        cmocka_unit_test(test_error__truncates_on_utf8_boundaries),
        cmocka_unit_test(test_error__at_and_clear),
    };
    return cmocka_run_group_tests_name("error", tests, NULL, NULL);
}
