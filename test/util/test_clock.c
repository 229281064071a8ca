/* Tests for lib/util/clock.c: the clock is CLOCK_MONOTONIC (bracketed by
 * reads of it), ms and ns agree, sleeps last at least what was asked even
 * when a signal interrupts them, and a condition variable from
 * topo_clock_cond_init times out at a topo_clock_deadline / topo_clock_at_ms
 * on this clock (a REALTIME-clock wait would not end on time). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <cmocka.h>

#include "topo/clock.h"

/* The reference reading, taken here without the module. */
static int64_t raw_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_clock__is_monotonic(void **state)
{
    (void)state;
    int64_t before = raw_monotonic_ns();
    int64_t ns = topo_clock_ns();
    int64_t ms = topo_clock_ms();
    int64_t after = raw_monotonic_ns();
    assert_true(ns >= before && ns <= after);
    assert_true(ms >= before / 1000000 && ms <= after / 1000000);
    int64_t last = topo_clock_ns();
    for (int i = 0; i < 10000; i++) {
        int64_t now = topo_clock_ns();
        assert_true(now >= last);
        last = now;
    }
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void test_clock__sleep_survives_signals(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: nanosleep returns EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval every_5ms = {{0, 5000}, {0, 5000}}, off = {{0, 0}, {0, 0}};
    alarms = 0;
    assert_int_equal(setitimer(ITIMER_REAL, &every_5ms, NULL), 0);
    int64_t t0 = topo_clock_ns();
    topo_clock_sleep_ns(60 * 1000000);
    int64_t slept = topo_clock_ns() - t0;
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_true(alarms > 0);               /* it was interrupted ... */
    assert_true(slept >= 60 * 1000000);    /* ... and slept on */
    assert_true(slept < 2000 * 1000000LL); /* not forever */

    t0 = topo_clock_ns();
    topo_clock_sleep_ns(0);
    topo_clock_sleep_ns(-1000000000);
    assert_true(topo_clock_ns() - t0 < 100 * 1000000);
}

/* Waits on a condition nobody signals until deadline; returns the wait's
 * result and how long it took. */
static int wait_until(const struct timespec *deadline, int64_t *took_ns)
{
    pthread_cond_t cv;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    assert_int_equal(topo_clock_cond_init(&cv), 0);
    int64_t t0 = topo_clock_ns();
    pthread_mutex_lock(&mu);
    int rc;
    do
        rc = pthread_cond_timedwait(&cv, &mu, deadline);
    while (rc == 0); /* spurious wakeups */
    pthread_mutex_unlock(&mu);
    *took_ns = topo_clock_ns() - t0;
    pthread_cond_destroy(&cv);
    return rc;
}

static void test_clock__condition_deadlines(void **state)
{
    (void)state;
    int64_t took;
    struct timespec d = topo_clock_deadline(40);
    assert_int_equal(wait_until(&d, &took), ETIMEDOUT);
    assert_true(took >= 35 * 1000000 && took < 2000 * 1000000LL);

    d = topo_clock_at_ms(topo_clock_ms() + 40);
    assert_int_equal(wait_until(&d, &took), ETIMEDOUT);
    assert_true(took >= 30 * 1000000 && took < 2000 * 1000000LL);

    /* Past or negative: at once. */
    d = topo_clock_deadline(-50);
    assert_int_equal(wait_until(&d, &took), ETIMEDOUT);
    assert_true(took < 500 * 1000000);
    d = topo_clock_at_ms(-7);
    assert_true(d.tv_sec == 0 && d.tv_nsec == 0);
    assert_int_equal(wait_until(&d, &took), ETIMEDOUT);

    /* Far away: no overflow into the past; the fields stay normalised. */
    d = topo_clock_deadline(LLONG_MAX);
    assert_true(d.tv_sec > (time_t)(topo_clock_ns() / 1000000000) + 86400LL * 365 * 100);
    assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000);
    d = topo_clock_at_ms(INT64_MAX);
    assert_true(d.tv_sec > 0 && d.tv_nsec >= 0 && d.tv_nsec < 1000000000);
    d = topo_clock_deadline(1234);
    assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock__is_monotonic),
        cmocka_unit_test(test_clock__sleep_survives_signals),
        cmocka_unit_test(test_clock__condition_deadlines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
