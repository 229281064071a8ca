/* webhook/defer_pool.c: jobs run off the caller's thread, several at once;
 * a full queue refuses (the caller answers at once); stopping runs every
 * job still queued exactly once, shed, and waits for the running ones. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <cmocka.h>

#include "defer_pool.h"

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    int running;
    atomic_int ran, shed;
} gate;

static gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0};

static void reset(void)
{
    g.open = 0;
    g.running = 0;
    atomic_store(&g.ran, 0);
    atomic_store(&g.shed, 0);
}

/* Blocks until the gate opens (a forward waiting on its placer). */
static void blocking_job(void *arg, int shed)
{
    (void)arg;
    if (shed) {
        atomic_fetch_add(&g.shed, 1);
        return;
    }
    pthread_mutex_lock(&g.mu);
    g.running++;
    pthread_cond_broadcast(&g.cv);
    while (!g.open)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    atomic_fetch_add(&g.ran, 1);
}

static void wait_running(int n)
{
    pthread_mutex_lock(&g.mu);
    while (g.running < n)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
}

static void open_gate(void)
{
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
}

static void test_defer_pool__runs_in_parallel_and_bounds_queue(void **state)
{
    (void)state;
    reset();
    wh_defer_pool *p = NULL;
    assert_int_equal(wh_defer_pool_create(&p, 3, 3), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL), 0);
    wait_running(3); /* three blocked at once: none waits for another */
    for (int i = 0; i < 3; i++)
        assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL), 0);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL), -1); /* full */
    assert_int_equal(wh_defer_pool_pending(p), 6);
    open_gate();
    wh_defer_pool_free(p);
    assert_int_equal(atomic_load(&g.ran) + atomic_load(&g.shed), 6);
}

static void test_defer_pool__stop_sheds_queued(void **state)
{
    (void)state;
    reset();
    wh_defer_pool *p = NULL;
    assert_int_equal(wh_defer_pool_create(&p, 1, 4), 0);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL), 0);
    wait_running(1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL), 0);
    open_gate(); /* the running one ends; stop must shed the four queued ... */
    wh_defer_pool_stop(p);
    /* ... unless the worker took some before the stop: each ran exactly once */
    assert_int_equal(atomic_load(&g.ran) + atomic_load(&g.shed), 5);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL), -1); /* stopped */
    wh_defer_pool_stop(p); /* idempotent */
    wh_defer_pool_free(p);
    wh_defer_pool_free(NULL);
}

static void test_defer_pool__bad_sizes(void **state)
{
    (void)state;
    wh_defer_pool *p = NULL;
    assert_int_equal(wh_defer_pool_create(&p, 0, 4), -1);
    assert_int_equal(wh_defer_pool_create(&p, 2, 0), -1);
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defer_pool__runs_in_parallel_and_bounds_queue),
        cmocka_unit_test(test_defer_pool__stop_sheds_queued),
        cmocka_unit_test(test_defer_pool__bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
