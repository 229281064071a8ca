/* webhook/defer_pool.c: jobs run off the caller's thread, several at once;
 * a full queue refuses (the caller answers at once); stopping runs every
 * job still queued exactly once, shed, and waits for the running ones;
 * queued jobs start earliest expiry first, and one whose expiry comes while
 * every worker is busy is run at once, expired. */
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
#include "topo/clock.h"

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
static void blocking_job(void *arg, wh_defer_how how)
{
    (void)arg;
    if (how != WH_DEFER_RUN) {
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
        assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), 0);
    wait_running(3); /* three blocked at once: none waits for another */
    for (int i = 0; i < 3; i++)
        assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), 0);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), -1); /* full */
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
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), 0);
    wait_running(1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), 0);
    open_gate(); /* the running one ends; stop must shed the four queued ... */
    wh_defer_pool_stop(p);
    /* ... unless the worker took some before the stop: each ran exactly once */
    assert_int_equal(atomic_load(&g.ran) + atomic_load(&g.shed), 5);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), -1); /* stopped */
    wh_defer_pool_stop(p); /* idempotent */
    wh_defer_pool_free(p);
    wh_defer_pool_free(NULL);
}

/* What each recording job saw: the order jobs ran in, how, and when. */
static struct {
    pthread_mutex_t mu;
    int order[8], how[8];
    int64_t at_ns[8];
    int n;
} rec = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}, {0}, 0};

static void recording_job(void *arg, wh_defer_how how)
{
    pthread_mutex_lock(&rec.mu);
    int id = (int)(intptr_t)arg;
    rec.order[rec.n] = id;
    rec.how[id] = (int)how;
    rec.at_ns[id] = topo_clock_ns();
    rec.n++;
    pthread_mutex_unlock(&rec.mu);
}

static int recorded(void)
{
    pthread_mutex_lock(&rec.mu);
    int n = rec.n;
    pthread_mutex_unlock(&rec.mu);
    return n;
}

/* The only worker busy: queued jobs start by expiry, not arrival (a 2 s
 * request is not kept behind 30 s ones); equal expiries by arrival. */
static void test_defer_pool__earliest_expiry_first(void **state)
{
    (void)state;
    reset();
    rec.n = 0;
    wh_defer_pool *p = NULL;
    int64_t now = topo_clock_ns();
    assert_int_equal(wh_defer_pool_create(&p, 1, 8), 0);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), 0);
    wait_running(1);
    const int64_t s = 1000000000LL;
    int64_t expiry[] = {now + 30 * s, 0, now + 2 * s, now + 30 * s, now + 10 * s};
    for (int i = 0; i < 5; i++)
        assert_int_equal(wh_defer_pool_submit(p, recording_job, (void *)(intptr_t)i, expiry[i]),
                         0);
    open_gate();
    while (recorded() < 5)
        topo_clock_sleep_ns(1000000);
    int want[] = {2, 4, 0, 3, 1}; /* none expired: all within 1 s */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(rec.order[i], want[i]);
        assert_int_equal(rec.how[rec.order[i]], WH_DEFER_RUN);
    }
    wh_defer_pool_free(p);
}

/* Every worker busy past a queued job's expiry: the job is run at once,
 * expired, near its expiry (not when a worker frees); the others stay
 * queued and run when the worker frees. */
static void test_defer_pool__expired_while_busy(void **state)
{
    (void)state;
    reset();
    rec.n = 0;
    wh_defer_pool *p = NULL;
    assert_int_equal(wh_defer_pool_create(&p, 1, 8), 0);
    assert_int_equal(wh_defer_pool_submit(p, blocking_job, NULL, 0), 0);
    wait_running(1);
    int64_t t0 = topo_clock_ns();
    const int64_t ms = 1000000LL;
    assert_int_equal(wh_defer_pool_submit(p, recording_job, (void *)0, t0 + 60000 * ms), 0);
    assert_int_equal(wh_defer_pool_submit(p, recording_job, (void *)1, t0 + 50 * ms), 0);
    assert_int_equal(wh_defer_pool_submit(p, recording_job, (void *)2, 0), 0);
    while (recorded() < 1 && topo_clock_ns() - t0 < 2000 * ms)
        topo_clock_sleep_ns(ms);
    assert_int_equal(recorded(), 1); /* the worker still blocked */
    assert_int_equal(rec.order[0], 1);
    assert_int_equal(rec.how[1], WH_DEFER_EXPIRED);
    assert_true(rec.at_ns[1] >= t0 + 50 * ms);
    assert_true(rec.at_ns[1] < t0 + 500 * ms);
    assert_int_equal(wh_defer_pool_pending(p), 3); /* one running, two queued */
    open_gate();
    while (recorded() < 3)
        topo_clock_sleep_ns(ms);
    assert_int_equal(rec.order[1], 0);
    assert_int_equal(rec.order[2], 2);
    assert_int_equal(rec.how[0], WH_DEFER_RUN);
    assert_int_equal(rec.how[2], WH_DEFER_RUN);
    wh_defer_pool_free(p);
}

/* A job already expired when a worker takes it is run expired. */
static void test_defer_pool__expired_on_arrival(void **state)
{
    (void)state;
    rec.n = 0;
    wh_defer_pool *p = NULL;
    assert_int_equal(wh_defer_pool_create(&p, 2, 2), 0);
    assert_int_equal(wh_defer_pool_submit(p, recording_job, (void *)0, 1), 0);
    while (recorded() < 1)
        topo_clock_sleep_ns(1000000);
    assert_int_equal(rec.how[0], WH_DEFER_EXPIRED);
    wh_defer_pool_free(p);
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
        cmocka_unit_test(test_defer_pool__earliest_expiry_first),
        cmocka_unit_test(test_defer_pool__expired_while_busy),
        cmocka_unit_test(test_defer_pool__expired_on_arrival),
        cmocka_unit_test(test_defer_pool__bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
