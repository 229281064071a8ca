/* Tests for webhook/placer_lease.c: who places, as one replica sees it,
 * stepped over an in-memory Lease store (lib/net/leader.c's backend hook)
 * on the real monotonic clock with short periods. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "placer_lease.h"
#include "topo/clock.h"

/* --- an in-memory Lease store ----------------------------------------------------- */

typedef struct store {
    json_t *lease; /* NULL: none */
    long rv;
} store;

static void put(store *s, json_t *lease)
{
    char rv[32];
    snprintf(rv, sizeof rv, "%ld", ++s->rv);
    json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion", json_string(rv));
    json_decref(s->lease);
    s->lease = lease;
}

static int mem_get(json_t **out, void *ctx, const char *ns, const char *name, topo_err *err)
{
    store *s = ctx;
    (void)ns;
    *out = NULL;
    if (s->lease == NULL)
        return topo_err_set(err, TOPO_ENOTFOUND, "leases \"%s\" not found", name);
    *out = json_deep_copy(s->lease);
    return 0;
}

static int mem_create(json_t **out, void *ctx, const char *ns, const json_t *lease,
                      topo_err *err)
{
    store *s = ctx;
    (void)ns;
    *out = NULL;
    if (s->lease != NULL)
        return topo_err_set(err, TOPO_ECONFLICT, "already exists");
    put(s, json_deep_copy(lease));
    *out = json_deep_copy(s->lease);
    return 0;
}

static const char *rv_of(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

static int mem_update(json_t **out, void *ctx, const char *ns, const json_t *lease,
                      topo_err *err)
{
    store *s = ctx;
    (void)ns;
    *out = NULL;
    if (s->lease == NULL)
        return topo_err_set(err, TOPO_ENOTFOUND, "not found");
    if (rv_of(lease) == NULL || strcmp(rv_of(lease), rv_of(s->lease)) != 0)
        return topo_err_set(err, TOPO_ECONFLICT, "the object has been modified");
    put(s, json_deep_copy(lease));
    *out = json_deep_copy(s->lease);
    return 0;
}

static const char *holder_of(const store *s)
{
    const char *h =
        json_string_value(json_object_get(json_object_get(s->lease, "spec"), "holderIdentity"));
    return h != NULL ? h : "";
}

/* Another replica's record, as the API server would hold it. */
static void held_by(store *s, const char *holder, long transitions)
{
    json_t *lease = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:I}}",
                              "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
                              "metadata", "name", "topo-webhook", "namespace", "topo",
                              "spec", "holderIdentity", holder, "leaseDurationSeconds", 15,
                              "acquireTime", "2024-01-01T00:00:00.000000Z", "renewTime",
                              "2024-01-01T00:00:00.000000Z", "leaseTransitions",
                              (json_int_t)transitions);
    assert_non_null(lease);
    put(s, lease);
}

typedef struct fixture {
    store s;
    topo_leader_backend backend;
    wh_placer_lease *pl;
} fixture;

static wh_placer_lease *make(fixture *f, int election, long settle_ms)
{
    topo_leader_backend b = {.get = mem_get, .create = mem_create, .update = mem_update,
                             .ctx = &f->s};
    f->backend = b;
    wh_placer_lease_opts o = {.lease_namespace = "topo",
                              .identity = "me@10.0.0.1:8443",
                              .leader_election = election,
                              .settle_ms = settle_ms,
                              .backend = &f->backend};
    topo_err err = TOPO_ERR_INIT;
    if (wh_placer_lease_create(&f->pl, &o, &err) != 0)
        fail_msg("wh_placer_lease_create: %s", err.text);
    return f->pl;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    wh_placer_lease_free(f->pl);
    json_decref(f->s.lease);
    free(f);
    return 0;
}

/* Without leader election this replica places at once, knows it, and
 * touches no Lease. */
static void test_placer_lease__no_election_places_here(void **state)
{
    fixture *f = *state;
    wh_placer_lease *pl = make(f, 0, 0);
    char h[64] = "x";
    assert_true(wh_placer_lease_known(pl));
    assert_int_equal(wh_placer_lease_state(pl, h, sizeof h, NULL), TOPO_UNGATER_PLACER_SELF);
    assert_string_equal(h, "");
    assert_int_equal(wh_placer_lease_step(pl), 1);
    assert_true(wh_placer_lease_placing(pl, topo_clock_ms()));
    assert_true(wh_placer_lease_next_step_ms(pl) == INT64_MAX);
    assert_string_equal(wh_placer_lease_name(pl), TOPO_UNGATER_LEASE_NAME);
    assert_string_equal(wh_placer_lease_identity(pl), "me@10.0.0.1:8443");
    wh_placer_lease_stats st;
    wh_placer_lease_get_stats(pl, &st);
    assert_int_equal(st.leader, 1);
    assert_int_equal(st.takeovers, 0);
    assert_null(f->s.lease);
}

/* Before the Lease was read nobody is known to place; a Lease it creates
 * had no placer before it, so it places without settling. */
static void test_placer_lease__created_lease_places_at_once(void **state)
{
    fixture *f = *state;
    wh_placer_lease *pl = make(f, 1, 60000);
    assert_false(wh_placer_lease_known(pl));
    assert_int_equal(wh_placer_lease_state(pl, NULL, 0, NULL), TOPO_UNGATER_PLACER_NONE);
    assert_int_equal(wh_placer_lease_step(pl), 1);
    assert_true(wh_placer_lease_known(pl));
    assert_string_equal(holder_of(&f->s), "me@10.0.0.1:8443");
    long wait = -1;
    assert_int_equal(wh_placer_lease_state(pl, NULL, 0, &wait), TOPO_UNGATER_PLACER_SELF);
    assert_int_equal(wait, 0);
    wh_placer_lease_stats st;
    wh_placer_lease_get_stats(pl, &st);
    assert_int_equal(st.leader, 1);
    assert_int_equal(st.takeovers, 1);
    assert_int_equal(st.last_settle_ms, 0);
    /* The next step waits for the retry period (2 s by default). */
    int64_t next = wh_placer_lease_next_step_ms(pl);
    assert_true(next > topo_clock_ms() + 1000 && next <= topo_clock_ms() + 2000);
}

/* Another replica holds the Lease: it places, and its identity is what a
 * request is forwarded to. */
static void test_placer_lease__other_holder_is_named(void **state)
{
    fixture *f = *state;
    held_by(&f->s, "other@10.0.0.2:8443", 3);
    wh_placer_lease *pl = make(f, 1, 0);
    assert_int_equal(wh_placer_lease_step(pl), 0);
    assert_true(wh_placer_lease_known(pl));
    char h[TOPO_LEADER_HOLDER_MAX + 1];
    assert_int_equal(wh_placer_lease_state(pl, h, sizeof h, NULL), TOPO_UNGATER_PLACER_OTHER);
    assert_string_equal(h, "other@10.0.0.2:8443");
    assert_string_equal(holder_of(&f->s), "other@10.0.0.2:8443");
    wh_placer_lease_stats st;
    wh_placer_lease_get_stats(pl, &st);
    assert_int_equal(st.leader, 0);
    assert_int_equal(st.takeovers, 0);
}

/* Taken over from another (its holder let go): this replica leads at
 * once but places only after the settle time. */
static void test_placer_lease__takeover_settles_first(void **state)
{
    fixture *f = *state;
    held_by(&f->s, "", 3); /* released by the previous placer */
    wh_placer_lease *pl = make(f, 1, 300);
    int64_t t0 = topo_clock_ms();
    assert_int_equal(wh_placer_lease_step(pl), 1);
    assert_string_equal(holder_of(&f->s), "me@10.0.0.1:8443");
    long wait = 0;
    assert_int_equal(wh_placer_lease_state(pl, NULL, 0, &wait), TOPO_UNGATER_PLACER_SETTLING);
    assert_true(wait > 0 && wait <= 300);
    assert_false(wh_placer_lease_placing(pl, topo_clock_ms()));
    wh_placer_lease_stats st;
    wh_placer_lease_get_stats(pl, &st);
    assert_int_equal(st.takeovers, 1);
    assert_int_equal(st.last_settle_ms, 300);
    /* Settled: it places. */
    assert_true(wh_placer_lease_placing(pl, t0 + 400));
    topo_clock_sleep_ns(350 * 1000000LL);
    assert_int_equal(wh_placer_lease_state(pl, NULL, 0, &wait), TOPO_UNGATER_PLACER_SELF);
    assert_int_equal(wait, 0);
}

/* Releasing clears the holder (the next candidate takes over at once) and
 * stops leading. */
static void test_placer_lease__release_gives_the_lease_up(void **state)
{
    fixture *f = *state;
    wh_placer_lease *pl = make(f, 1, 0);
    assert_int_equal(wh_placer_lease_step(pl), 1);
    wh_placer_lease_release(pl);
    assert_string_equal(holder_of(&f->s), "");
    wh_placer_lease_stats st;
    wh_placer_lease_get_stats(pl, &st);
    assert_int_equal(st.leader, 0);
    assert_int_equal(wh_placer_lease_state(pl, NULL, 0, NULL), TOPO_UNGATER_PLACER_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_placer_lease__no_election_places_here, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_placer_lease__created_lease_places_at_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_placer_lease__other_holder_is_named, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_placer_lease__takeover_settles_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_placer_lease__release_gives_the_lease_up, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
