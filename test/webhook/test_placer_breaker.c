/* webhook/placer_breaker.c: 3 failed forwards in a row within the window
 * open the circuit for the cool-down; then one trial at a time (half-open):
 * answered closes, failed opens again; a success resets the count; another
 * placer starts closed. Time is passed in: no sleeping. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "placer_breaker.h"

#define S 1000000000LL
static const char *const A = "10.0.0.1:9443";
static const char *const B = "10.0.0.2:9443";

static void fail_n(wh_breaker *b, int n, long long now)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(wh_breaker_allow(b, A, now), 1);
        (void)wh_breaker_done(b, A, 0, now);
    }
}

static void test_breaker__opens_after_k_failures(void **state)
{
    (void)state;
    wh_breaker b;
    wh_breaker_init(&b);
    for (int i = 0; i < WH_BREAKER_FAILURES - 1; i++) {
        assert_int_equal(wh_breaker_allow(&b, A, i * S), 1);
        assert_int_equal(wh_breaker_done(&b, A, 0, i * S), 0);
    }
    assert_int_equal(wh_breaker_is_open(&b), 0);
    assert_int_equal(wh_breaker_allow(&b, A, 2 * S), 1);
    assert_int_equal(wh_breaker_done(&b, A, 0, 2 * S), 1); /* opened: logged once */
    assert_int_equal(wh_breaker_is_open(&b), 1);
    assert_int_equal(wh_breaker_openings(&b), 1);
    /* open: nothing forwarded during the cool-down */
    assert_int_equal(wh_breaker_allow(&b, A, 2 * S + 1), 0);
    assert_int_equal(wh_breaker_allow(&b, A, 2 * S + WH_BREAKER_COOL_NS - 1), 0);
    wh_breaker_dispose(&b);
}

static void test_breaker__success_resets_and_window(void **state)
{
    (void)state;
    wh_breaker b;
    wh_breaker_init(&b);
    fail_n(&b, WH_BREAKER_FAILURES - 1, 0);
    assert_int_equal(wh_breaker_allow(&b, A, S), 1);
    assert_int_equal(wh_breaker_done(&b, A, 1, S), 0); /* answered: count reset */
    fail_n(&b, WH_BREAKER_FAILURES - 1, 2 * S);
    assert_int_equal(wh_breaker_is_open(&b), 0);
    /* failures spread wider than the window do not open it */
    fail_n(&b, 1, 2 * S + WH_BREAKER_WINDOW_NS + 1);
    assert_int_equal(wh_breaker_is_open(&b), 0);
    wh_breaker_dispose(&b);
}

static void test_breaker__half_open_one_trial(void **state)
{
    (void)state;
    wh_breaker b;
    wh_breaker_init(&b);
    fail_n(&b, WH_BREAKER_FAILURES, 0);
    long long t = WH_BREAKER_COOL_NS;
    assert_int_equal(wh_breaker_allow(&b, A, t), 1);      /* the trial */
    assert_int_equal(wh_breaker_allow(&b, A, t + 1), 0);  /* one at a time */
    assert_int_equal(wh_breaker_is_open(&b), 1);
    assert_int_equal(wh_breaker_done(&b, A, 0, t + S), 0); /* failed: open again */
    assert_int_equal(wh_breaker_allow(&b, A, t + S + 1), 0);
    assert_int_equal(wh_breaker_openings(&b), 1);          /* still the same opening */
    t += S + WH_BREAKER_COOL_NS;
    assert_int_equal(wh_breaker_allow(&b, A, t), 1);
    assert_int_equal(wh_breaker_done(&b, A, 1, t), -1);   /* answered: closed, logged once */
    assert_int_equal(wh_breaker_is_open(&b), 0);
    assert_int_equal(wh_breaker_allow(&b, A, t + 1), 1);
    assert_int_equal(wh_breaker_allow(&b, A, t + 1), 1);
    wh_breaker_dispose(&b);
}

static void test_breaker__lost_trial_replaced(void **state)
{
    (void)state;
    wh_breaker b;
    wh_breaker_init(&b);
    fail_n(&b, WH_BREAKER_FAILURES, 0);
    assert_int_equal(wh_breaker_allow(&b, A, WH_BREAKER_COOL_NS), 1);
    assert_int_equal(wh_breaker_allow(&b, A, 2 * WH_BREAKER_COOL_NS - 1), 0);
    assert_int_equal(wh_breaker_allow(&b, A, 2 * WH_BREAKER_COOL_NS), 1);
    wh_breaker_dispose(&b);
}

static void test_breaker__new_placer_starts_closed(void **state)
{
    (void)state;
    wh_breaker b;
    wh_breaker_init(&b);
    fail_n(&b, WH_BREAKER_FAILURES, 0);
    assert_int_equal(wh_breaker_allow(&b, A, 1), 0);
    assert_int_equal(wh_breaker_allow(&b, B, 2), 1);
    assert_int_equal(wh_breaker_is_open(&b), 0);
    /* a late report about A says nothing about B */
    assert_int_equal(wh_breaker_done(&b, A, 0, 3), 0);
    assert_int_equal(wh_breaker_done(&b, B, 0, 3), 0);
    assert_int_equal(wh_breaker_is_open(&b), 0);
    wh_breaker_dispose(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_breaker__opens_after_k_failures),
        cmocka_unit_test(test_breaker__success_resets_and_window),
        cmocka_unit_test(test_breaker__half_open_one_trial),
        cmocka_unit_test(test_breaker__lost_trial_replaced),
        cmocka_unit_test(test_breaker__new_placer_starts_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
