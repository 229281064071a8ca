/* webhook/request_deadline.c: a request's deadline is its arrival plus the
 * API server's timeout capped by --request-timeout, and for a forward no
 * later than the forwarder's wall-clock deadline (?deadlineUnixMs=), which
 * is ignored when garbage or implausibly far from this clock. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "request_deadline.h"

#define MS 1000000LL
/* monotonic arrival and now, and the wall clock at now */
#define START (1000 * MS)
#define NOW (1500 * MS)
#define WALL 1796600000000LL

static void test_request_deadline__timeout_and_cap(void **state)
{
    (void)state;
    assert_int_equal(wh_request_deadline(START, 2000, 10000, NULL, NOW, WALL), START + 2000 * MS);
    assert_int_equal(wh_request_deadline(START, 30000, 10000, NULL, NOW, WALL),
                     START + 10000 * MS);
    assert_int_equal(wh_request_deadline(START, -1, 10000, NULL, NOW, WALL), START + 10000 * MS);
    assert_int_equal(wh_request_deadline(0, 2000, 10000, NULL, NOW, WALL), 0);
    assert_int_equal(wh_request_timeout_ms("1500ms"), 1500);
    assert_int_equal(wh_request_timeout_ms("1m30s"), 90000);
    assert_int_equal(wh_request_timeout_ms(NULL), -1);
    assert_int_equal(wh_request_timeout_ms("-2s"), -1);
    assert_int_equal(wh_request_timeout_ms("soon"), -1);
}

/* A forward read late: its wall-clock deadline is earlier than arrival +
 * timeout, and wins; passed already, the deadline is in the past. */
static void test_request_deadline__absolute_wins_when_earlier(void **state)
{
    (void)state;
    /* 300 ms left by the forwarder's clock, 1700 ms by the relative one */
    assert_int_equal(wh_request_deadline(START, 1700, 10000, "1796600000300", NOW, WALL),
                     NOW + 300 * MS);
    /* passed 2 s ago: a deadline before now */
    assert_true(wh_request_deadline(START, 1700, 10000, "1796599998000", NOW, WALL) < NOW);
    /* later than the relative one: the relative one holds */
    assert_int_equal(wh_request_deadline(START, 1700, 10000, "1796600005000", NOW, WALL),
                     START + 1700 * MS);
}

static void test_request_deadline__garbage_and_implausible_ignored(void **state)
{
    (void)state;
    const char *bad[] = {"", "-5", "+1796600000300", "1796600000300x", " 1796600000300",
                         "0x1a", "1e12", "99999999999999999999999", "1796600000300.5",
                         "1796600070001" /* 70 s ahead */, "1796599930000" /* 70 s ago */,
                         "0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(wh_request_deadline(START, 1700, 10000, bad[i], NOW, WALL),
                         START + 1700 * MS);
    /* without a relative deadline (no start) a plausible one still holds */
    assert_int_equal(wh_request_deadline(0, -1, 10000, "1796600000300", NOW, WALL),
                     NOW + 300 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_deadline__timeout_and_cap),
        cmocka_unit_test(test_request_deadline__absolute_wins_when_earlier),
        cmocka_unit_test(test_request_deadline__garbage_and_implausible_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
