/* webhook/watchdog.c: an armed watchdog ends a process whose owner thread
 * is blocked joining a thread that never returns (as MHD_stop_daemon joins
 * a pool thread stuck in a request handler), with its exit code, at its
 * deadline; a cancelled one ends nothing and returns at once. Each case runs
 * in a child process. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/log.h"
#include "watchdog.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *stuck_handler(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void silent(const topo_log_event *ev, void *payload)
{
    (void)ev;
    (void)payload;
}

/* Runs child() in a child process; its wait status and how long it took. */
static int run_child(void (*child)(void), double *took)
{
    double t0 = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        topo_log_set_sink(silent, NULL);
        child();
        _exit(0);
    }
    int st = 0;
    /* bounded: a watchdog that never fires must fail the test, not hang it */
    for (int i = 0; i < 500; i++) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            *took = now_s() - t0;
            return st;
        }
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    *took = now_s() - t0;
    return -1;
}

static void blocked_owner(void)
{
    wh_watchdog *w = NULL;
    if (wh_watchdog_start(&w, 300, 3, "test: stuck") < 0)
        _exit(90);
    pthread_t t;
    pthread_create(&t, NULL, stuck_handler, NULL);
    pthread_join(t, NULL); /* never returns */
    _exit(91);
}

static void test_watchdog__ends_blocked_process(void **state)
{
    (void)state;
    double took = 0;
    int st = run_child(blocked_owner, &took);
    assert_true(st != -1);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    assert_true(took >= 0.25);
    assert_true(took < 2.0);
}

static void cancelled_in_time(void)
{
    wh_watchdog *w = NULL;
    if (wh_watchdog_start(&w, 3000, 3, "test: should not fire") < 0)
        _exit(90);
    wh_watchdog_cancel(w);
    _exit(0);
}

static void test_watchdog__cancel_disarms_at_once(void **state)
{
    (void)state;
    double took = 0;
    int st = run_child(cancelled_in_time, &took);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_true(took < 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watchdog__ends_blocked_process),
        cmocka_unit_test(test_watchdog__cancel_disarms_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
