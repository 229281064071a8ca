/* Tests for lib/net/leader.c: Lease leader election driven step by step
 * with a fake clock over an in-memory Lease store that behaves like the API
 * server (create conflicts, resourceVersion preconditions), with injected
 * failures and races. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "topo/k8s.h"
#include "topo/log.h"

/* --- an in-memory Lease store -------------------------------------------------- */

typedef struct mem_store {
    pthread_mutex_t mu;
    json_t *lease; /* stored, or NULL */
    long rv;
    int fail_code;   /* injected failure for the next fail_calls calls */
    int fail_calls;
    int creates, updates, gets;
    /* Runs once before the next write is applied (a concurrent writer). */
    void (*before_write)(struct mem_store *m);
} mem_store;

static int take_failure(mem_store *m, topo_err *err)
{
    if (m->fail_calls > 0) {
        m->fail_calls--;
        return topo_err_set(err, m->fail_code, "injected failure");
    }
    return 0;
}

static void run_hook(mem_store *m)
{
    void (*hook)(mem_store *) = m->before_write;
    m->before_write = NULL;
    if (hook != NULL)
        hook(m);
}

static void store_put(mem_store *m, json_t *lease)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%ld", ++m->rv);
    json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion", json_string(rv));
    json_decref(m->lease);
    m->lease = lease;
}

static int mem_get(json_t **out, void *ctx, const char *ns, const char *name, topo_err *err)
{
    mem_store *m = ctx;
    int rc;
    (void)ns;
    *out = NULL;
    pthread_mutex_lock(&m->mu);
    m->gets++;
    if ((rc = take_failure(m, err)) == 0) {
        if (m->lease == NULL)
            rc = topo_err_set(err, TOPO_ENOTFOUND, "leases \"%s\" not found", name);
        else
            *out = json_deep_copy(m->lease);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static int mem_create(json_t **out, void *ctx, const char *ns, const json_t *lease,
                      topo_err *err)
{
    mem_store *m = ctx;
    int rc;
    (void)ns;
    *out = NULL;
    pthread_mutex_lock(&m->mu);
    m->creates++;
    if ((rc = take_failure(m, err)) == 0) {
        run_hook(m);
        if (m->lease != NULL) {
            rc = topo_err_set(err, TOPO_ECONFLICT, "already exists");
        } else {
            store_put(m, json_deep_copy(lease));
            *out = json_deep_copy(m->lease);
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static const char *rv_of(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

static int mem_update(json_t **out, void *ctx, const char *ns, const json_t *lease,
                      topo_err *err)
{
    mem_store *m = ctx;
    int rc;
    (void)ns;
    *out = NULL;
    pthread_mutex_lock(&m->mu);
    m->updates++;
    if ((rc = take_failure(m, err)) == 0) {
        run_hook(m);
        if (m->lease == NULL)
            rc = topo_err_set(err, TOPO_ENOTFOUND, "not found");
        else if (rv_of(lease) == NULL || strcmp(rv_of(lease), rv_of(m->lease)) != 0)
            rc = topo_err_set(err, TOPO_ECONFLICT, "the object has been modified");
        else {
            store_put(m, json_deep_copy(lease));
            *out = json_deep_copy(m->lease);
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static const char *holder(mem_store *m)
{
    const char *h = json_string_value(json_object_get(json_object_get(m->lease, "spec"),
                                                      "holderIdentity"));
    return h != NULL ? h : "";
}

static json_int_t transitions(mem_store *m)
{
    return json_integer_value(json_object_get(json_object_get(m->lease, "spec"),
                                              "leaseTransitions"));
}

typedef struct fixture {
    mem_store m;
    topo_leader_backend backend;
    topo_leader *a, *b;
} fixture;

static topo_leader *elector(fixture *f, const char *identity, long lease, long renew, long retry)
{
    topo_leader_opts o = {0};
    topo_leader *l = NULL;
    topo_err err = TOPO_ERR_INIT;
    o.lease_namespace = "topo-system";
    o.lease_name = "topo-sync";
    o.identity = identity;
    o.lease_ms = lease;
    o.renew_deadline_ms = renew;
    o.retry_ms = retry;
    o.backend = &f->backend;
    if (topo_leader_create(&l, NULL, &o, &err) != 0)
        fail_msg("topo_leader_create: %s", err.text);
    return l;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    pthread_mutex_init(&f->m.mu, NULL);
    topo_leader_backend b = {.get = mem_get, .create = mem_create, .update = mem_update,
                             .ctx = &f->m};
    f->backend = b;
    f->a = elector(f, "a", 15000, 10000, 2000);
    f->b = elector(f, "b", 15000, 10000, 2000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    topo_leader_free(f->a);
    topo_leader_free(f->b);
    json_decref(f->m.lease);
    pthread_mutex_destroy(&f->m.mu);
    free(f);
    return 0;
}

static int tick(topo_leader *l, int64_t now)
{
    int lead = -1;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_leader_tick(l, now, &lead, &err);
    if (rc != 0)
        fail_msg("tick at %lld: %s", (long long)now, err.text);
    assert_int_equal(lead, topo_leader_is_leader(l, now));
    return lead;
}

/* --- cases ------------------------------------------------------------------------ */

static void test_leader__options(void **state)
{
    fixture *f = *state;
    topo_leader_opts o = {0};
    topo_leader *l = NULL;
    topo_err err = TOPO_ERR_INIT;

    o.backend = &f->backend;
    assert_int_equal(topo_leader_create(&l, NULL, &o, &err), TOPO_EINVALID); /* no name */
    o.lease_name = "x";
    o.lease_ms = 10000;
    o.renew_deadline_ms = 10000;
    assert_int_equal(topo_leader_create(&l, NULL, &o, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "renew deadline"));
    o.renew_deadline_ms = 5000;
    o.retry_ms = 5000;
    assert_int_equal(topo_leader_create(&l, NULL, &o, &err), TOPO_EINVALID);
    o.retry_ms = 1000;
    o.backend = NULL;
    assert_int_equal(topo_leader_create(&l, NULL, &o, &err), TOPO_EINVALID); /* no client */
    o.backend = &f->backend;
    assert_int_equal(topo_leader_create(&l, NULL, &o, &err), 0);
    /* The default identity is hostname_pid; the default namespace "default". */
    assert_non_null(strchr(topo_leader_identity(l), '_'));
    topo_leader_free(l);
    topo_leader_free(NULL);
}

static void test_leader__acquire_and_renew(void **state)
{
    fixture *f = *state;

    assert_true(tick(f->a, 0)); /* creates the lease */
    assert_int_equal(f->m.creates, 1);
    assert_string_equal(holder(&f->m), "a");
    assert_int_equal(transitions(&f->m), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(f->m.lease, "spec"),
                                                        "leaseDurationSeconds")),
                     15);
    assert_non_null(json_string_value(json_object_get(json_object_get(f->m.lease, "spec"),
                                                      "renewTime")));
    assert_false(tick(f->b, 1000));
    for (int64_t t = 2000; t <= 60000; t += 2000) {
        assert_true(tick(f->a, t));
        assert_false(tick(f->b, t + 1000));
    }
    assert_string_equal(holder(&f->m), "a");
    assert_int_equal(transitions(&f->m), 0);
    /* Between renewals the leader may act; never past the deadline. */
    assert_true(topo_leader_is_leader(f->a, 60000 + 9999));
    assert_false(topo_leader_is_leader(f->a, 60000 + 10000));
}

static void test_leader__failover_after_the_leader_stops(void **state)
{
    fixture *f = *state;
    int64_t a_last_acting = -1, b_first = -1;

    /* a renews every 2 s until 10000, then freezes; b tries in between. */
    for (int64_t t = 0; t < 60000 && b_first < 0; t += 1000) {
        if (t % 2000 == 0 && t <= 10000)
            assert_true(tick(f->a, t));
        else if (t % 2000 == 1000 && tick(f->b, t))
            b_first = t;
    }
    for (int64_t t = 0; t < 60000; t++)
        if (topo_leader_is_leader(f->a, t))
            a_last_acting = t;
    /* b saw a's last renewal at 11000 and waits a full lease from there. */
    assert_int_equal(b_first, 27000);
    assert_int_equal(a_last_acting, 19999);
    assert_true(a_last_acting < b_first);
    assert_string_equal(holder(&f->m), "b");
    assert_int_equal(transitions(&f->m), 1);

    /* a thaws: it is not the leader before, during or after its next step. */
    assert_false(topo_leader_is_leader(f->a, 28000));
    assert_false(tick(f->a, 28000));
    assert_true(tick(f->b, 29000));
    assert_string_equal(holder(&f->m), "b");
}

/* The term (topo_leader_term): 0 before leading, the Lease's
 * leaseTransitions once taken from another holder (4 before: 5), kept
 * while renewing; the creator of a Lease has term 0. */
static void test_leader__term_after_takeover(void **state)
{
    fixture *f = *state;
    store_put(&f->m, json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:i}}", "metadata", "name",
                               "topo-sync", "namespace", "topo-system", "spec", "holderIdentity",
                               "x", "leaseDurationSeconds", 15, "acquireTime",
                               "2026-01-05T08:00:00.000000Z", "renewTime",
                               "2026-01-05T08:00:00.000000Z", "leaseTransitions", 4));
    assert_int_equal(topo_leader_term(f->b), 0);
    assert_false(tick(f->b, 0)); /* x's record seen: its lease runs 15 s from now */
    assert_int_equal(topo_leader_term(f->b), 0);
    assert_true(tick(f->b, 15000));
    assert_string_equal(holder(&f->m), "b");
    assert_int_equal(transitions(&f->m), 5);
    assert_int_equal(topo_leader_term(f->b), 5);
    assert_true(tick(f->b, 17000)); /* renewed: the same term */
    assert_int_equal(topo_leader_term(f->b), 5);
    assert_false(tick(f->a, 18000));
    assert_int_equal(topo_leader_term(f->a), 0);
}

/* What a follower knows of the leader (topo_leader_holder), and whether a
 * leadership began by taking an existing Lease (topo_leader_took_over). */
static void test_leader__holder_and_takeover(void **state)
{
    fixture *f = *state;
    char h[TOPO_LEADER_HOLDER_MAX + 1];

    assert_int_equal(topo_leader_holder(f->b, 0, h, sizeof h), 0); /* nothing read yet */
    assert_string_equal(h, "");
    assert_true(tick(f->a, 0)); /* created: no takeover */
    assert_int_equal(topo_leader_took_over(f->a), 0);
    assert_false(tick(f->b, 1000));
    assert_int_equal(topo_leader_holder(f->b, 1000, h, sizeof h), 1);
    assert_string_equal(h, "a");
    /* a stops renewing: b still names it until its lease ran out by b's
     * clock (15 s from the last change b saw), then nobody */
    assert_int_equal(topo_leader_holder(f->b, 15999, h, sizeof h), 1);
    assert_int_equal(topo_leader_holder(f->b, 16000, h, sizeof h), 0);
    assert_string_equal(h, "");
    /* b takes the expired Lease: a takeover, and b names itself */
    assert_true(tick(f->b, 16000));
    assert_int_equal(topo_leader_took_over(f->b), 1);
    assert_int_equal(topo_leader_holder(f->b, 16000, h, sizeof h), 1);
    assert_string_equal(h, "b");
    assert_false(tick(f->a, 17000));
    assert_int_equal(topo_leader_holder(f->a, 17000, h, sizeof h), 1);
    assert_string_equal(h, "b");
}

static void test_leader__renew_failures_stop_the_leader_at_the_deadline(void **state)
{
    fixture *f = *state;
    topo_err err = TOPO_ERR_INIT;
    int lead = -1;

    assert_true(tick(f->a, 0));
    f->m.fail_code = TOPO_ESERVER;
    f->m.fail_calls = 1000;
    for (int64_t t = 2000; t < 10000; t += 2000) {
        assert_int_equal(topo_leader_tick(f->a, t, &lead, &err), TOPO_ESERVER);
        assert_true(lead); /* within the deadline of the renewal at 0 */
    }
    assert_int_equal(topo_leader_tick(f->a, 10000, &lead, &err), TOPO_ESERVER);
    assert_false(lead);
    assert_int_equal(topo_leader_tick(f->a, 12000, &lead, &err), TOPO_ESERVER);
    assert_false(lead);
    /* The API server comes back before anyone took over: a renews. */
    f->m.fail_calls = 0;
    assert_true(tick(f->a, 14000));
    assert_string_equal(holder(&f->m), "a");
    assert_int_equal(transitions(&f->m), 0);
}

static void test_leader__release_hands_over_at_the_next_retry(void **state)
{
    fixture *f = *state;
    topo_err err = TOPO_ERR_INIT;

    assert_true(tick(f->a, 0));
    assert_false(tick(f->b, 1000));
    assert_int_equal(topo_leader_release(f->a, 1500, &err), 0);
    assert_false(topo_leader_is_leader(f->a, 1500));
    assert_string_equal(holder(&f->m), "");
    assert_true(tick(f->b, 3000)); /* no need to wait for the lease to expire */
    assert_string_equal(holder(&f->m), "b");
    assert_int_equal(transitions(&f->m), 1);
    /* Releasing a lease held by someone else changes nothing. */
    assert_int_equal(topo_leader_release(f->a, 3500, &err), 0);
    assert_string_equal(holder(&f->m), "b");
    assert_false(tick(f->a, 4000));
}

static fixture *race_fixture;

static void a_wins_the_race(mem_store *m)
{
    (void)m;
    pthread_mutex_unlock(&m->mu);
    assert_true(tick(race_fixture->a, 16000));
    pthread_mutex_lock(&m->mu);
}

static void test_leader__update_race_is_lost_cleanly(void **state)
{
    fixture *f = *state;
    race_fixture = f;

    /* A lease of a candidate that died. */
    topo_leader *ghost = elector(f, "ghost", 15000, 10000, 2000);
    assert_true(tick(ghost, 0));
    topo_leader_free(ghost);
    assert_false(tick(f->a, 500));
    assert_false(tick(f->b, 500));
    /* Both see it expired at 16000; a writes first, between b's read and write. */
    f->m.before_write = a_wins_the_race;
    assert_false(tick(f->b, 16000));
    assert_string_equal(holder(&f->m), "a");
    assert_false(topo_leader_is_leader(f->b, 16000));
    assert_true(topo_leader_is_leader(f->a, 16000));
}

static void a_creates_first(mem_store *m)
{
    pthread_mutex_unlock(&m->mu);
    assert_true(tick(race_fixture->a, 0));
    pthread_mutex_lock(&m->mu);
}

static void test_leader__create_race_is_lost_cleanly(void **state)
{
    fixture *f = *state;
    race_fixture = f;
    f->m.before_write = a_creates_first;
    assert_false(tick(f->b, 0)); /* 409 AlreadyExists: a follower, no error */
    assert_string_equal(holder(&f->m), "a");
    /* the create it lost told it nothing of the holder: not known yet */
    assert_false(topo_leader_known(f->b));
    assert_false(tick(f->b, 2000));
    assert_true(topo_leader_known(f->b));
}

/* Known once a record was read or written, never before: a failed read
 * (the API server down) leaves an elector not knowing who leads. */
static void test_leader__known_after_the_first_record(void **state)
{
    fixture *f = *state;
    assert_false(topo_leader_known(f->a));
    f->m.fail_code = TOPO_ECONNECT;
    f->m.fail_calls = 1;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_leader_tick(f->a, 0, NULL, &err), TOPO_ECONNECT);
    assert_false(topo_leader_known(f->a));
    assert_true(tick(f->a, 2000)); /* creates it */
    assert_true(topo_leader_known(f->a));
    assert_false(topo_leader_known(f->b));
    assert_false(tick(f->b, 3000)); /* reads a's */
    assert_true(topo_leader_known(f->b));
}

static void test_leader__conflict_on_renew_steps_down(void **state)
{
    fixture *f = *state;
    race_fixture = f;
    assert_true(tick(f->a, 0));
    /* Someone rewrote the lease between a's read and its renewal. */
    f->m.before_write = NULL;
    pthread_mutex_lock(&f->m.mu);
    json_t *l = json_deep_copy(f->m.lease);
    json_object_set_new(json_object_get(l, "spec"), "holderIdentity", json_string("intruder"));
    store_put(&f->m, l);
    pthread_mutex_unlock(&f->m.mu);
    assert_false(tick(f->a, 2000)); /* held by another, not expired by a's clock */
    assert_false(topo_leader_is_leader(f->a, 2001));
}

/* --- the blocking loop, on the real clock ------------------------------------------ */

typedef struct loop_arg {
    topo_leader *l;
    atomic_int stop;
    int changes;
    int last;
} loop_arg;

static void on_change(int is_leader, void *payload)
{
    loop_arg *a = payload;
    a->changes++;
    a->last = is_leader;
}

static void *run_loop(void *p)
{
    loop_arg *a = p;
    topo_err err = TOPO_ERR_INIT;
    topo_leader_run(a->l, &a->stop, on_change, a, &err);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_leader__run_loop_and_release(void **state)
{
    fixture *f = *state;
    topo_leader_opts o = {0};
    topo_err err = TOPO_ERR_INIT;
    loop_arg a = {NULL, 0, 0, 0};
    pthread_t th;

    o.lease_name = "loop";
    o.identity = "looper";
    o.lease_ms = 1000;
    o.renew_deadline_ms = 600;
    o.retry_ms = 100;
    o.release_on_stop = 1;
    o.backend = &f->backend;
    assert_int_equal(topo_leader_create(&a.l, NULL, &o, &err), 0);
    assert_int_equal(pthread_create(&th, NULL, run_loop, &a), 0);
    sleep_ms(350);
    assert_int_equal(a.changes, 1);
    assert_int_equal(a.last, 1);
    pthread_mutex_lock(&f->m.mu);
    assert_string_equal(holder(&f->m), "looper");
    int updates = f->m.updates;
    pthread_mutex_unlock(&f->m.mu);
    assert_true(updates >= 2); /* renewing every retry period */

    /* The API server fails: the loop reports the loss at the deadline. */
    pthread_mutex_lock(&f->m.mu);
    f->m.fail_code = TOPO_ECONNECT;
    f->m.fail_calls = 1000000;
    pthread_mutex_unlock(&f->m.mu);
    sleep_ms(800);
    assert_int_equal(a.changes, 2);
    assert_int_equal(a.last, 0);
    pthread_mutex_lock(&f->m.mu);
    f->m.fail_calls = 0;
    pthread_mutex_unlock(&f->m.mu);
    sleep_ms(300);
    assert_int_equal(a.changes, 3);
    assert_int_equal(a.last, 1);

    a.stop = 1;
    pthread_join(th, NULL);
    assert_int_equal(a.changes, 4);
    assert_int_equal(a.last, 0);
    assert_string_equal(holder(&f->m), ""); /* released */
    topo_leader_free(a.l);
}

int main(void)
{
    topo_log_set_level(TOPO_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_leader__options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader__acquire_and_renew, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader__failover_after_the_leader_stops, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_leader__renew_failures_stop_the_leader_at_the_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader__release_hands_over_at_the_next_retry,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader__update_race_is_lost_cleanly, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leader__create_race_is_lost_cleanly, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leader__known_after_the_first_record, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leader__conflict_on_renew_steps_down, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leader__run_loop_and_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader__holder_and_takeover, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader__term_after_takeover, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
