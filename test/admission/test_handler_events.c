/* Tests for lib/admission/handler_events.c: Events queued for the pod of a slot
 * reach the drain's callback once the cache holds that pod (by the slot's
 * claimant, or by the name admission gave when the slot has no real pod
 * yet), oldest first and once; they are dropped after
 * TOPO_ADMISSION_EVENT_TTL_S and beyond TOPO_ADMISSION_EVENTS_MAX, and
 * counted. A real cache and admission ctx. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/live.h"

#include "../../lib/admission/handler_internal.h" /* white-box: adm_event_queue */

#define HOST "kubernetes.io/hostname"
#define RES "default.00000000000000e1"
#define PODSET "team-a/job/0f6e2f3a"
#define T0 1767600000

static const char *const levels[] = {HOST};

typedef struct fx {
    topo_live *live;
    topo_cache *cache;
    topo_admission_ctx *ctx;
    topo_pool *pool;
    int64_t now;
    /* what the callback saw, "<ns>/<pod>/<uid>/<type>/<reason>/<message>;" */
    char seen[8192];
    size_t calls;
} fx;

static void must(int rc, const topo_err *err)
{
    if (rc < 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

static int64_t fx_clock(void *payload)
{
    return ((fx *)payload)->now;
}

static void add_node(fx *f, const char *name)
{
    topo_kv labels[] = {{HOST, name}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
    topo_node_spec n = {name, labels, 1, alloc, 2, NULL, 0, 0, 1, 0};
    topo_err err = TOPO_ERR_INIT;
    must(topo_live_upsert_node(f->live, &n, &err), &err);
}

/* Reservation RES of PodSet PODSET: slots 0 and 1 on n1, slot 2 on n2. */
static void create_reservation(fx *f)
{
    static const char *v1[] = {"n1"}, *v2[] = {"n2"};
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {levels, 1, doms, 2};
    static const topo_resource req[] = {{"nvidia.com/gpu", 8}};
    topo_cache_reservation_spec spec = {.id = RES,
                                        .podset_key = PODSET,
                                        .topology_name = "default",
                                        .levels = levels,
                                        .nlevels = 1,
                                        .assignment = &a,
                                        .requests = req,
                                        .nrequests = 1,
                                        .created_at = T0,
                                        .expires_at = T0 + 3600};
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_create(f->cache, &spec, &err), &err);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    topo_err err = TOPO_ERR_INIT;
    assert_non_null(f);
    f->now = T0;
    f->pool = topo_pool_create();
    topo_snapshot_opts so = {"default", levels, 1, NULL, 0};
    must(topo_live_create(&f->live, &so, &err), &err);
    add_node(f, "n1");
    add_node(f, "n2");
    must(topo_live_commit(f->live, &err), &err);
    must(topo_cache_open(&f->cache, ":memory:", NULL, &err), &err);
    create_reservation(f);
    topo_admission_topology t = {"default", levels, 1, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                 f->live, 0};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f->cache;
    ao.clock = fx_clock;
    ao.clock_payload = f;
    must(topo_admission_ctx_create(&f->ctx, &ao, &err), &err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
    topo_pool_free(f->pool);
    free(f);
    return 0;
}

static void seen(void *payload, const topo_admission_event *ev)
{
    fx *f = payload;
    size_t n = strlen(f->seen);
    snprintf(f->seen + n, sizeof f->seen - n, "%s/%s/%s/%s/%s/%s;", ev->namespace_, ev->pod_name,
             ev->pod_uid, ev->type, ev->reason, ev->message);
    f->calls++;
}

static int drain(fx *f)
{
    topo_err err = TOPO_ERR_INIT;
    f->seen[0] = '\0';
    f->calls = 0;
    int n = topo_admission_events_drain(f->ctx, seen, f, &err);
    if (n < 0)
        fail_msg("drain: %s", err.text);
    assert_int_equal((size_t)n, f->calls);
    return n;
}

/* Slot `slot` claimed by claimant (a pod's uid or a provisional claim). */
static void claim(fx *f, const char *claimant, int32_t slot)
{
    topo_cache_slot s;
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_claim(&s, f->cache, RES, claimant, slot, f->now, f->pool, &err),
         &err);
    assert_int_equal(s.index, slot);
}

static void put_pod(fx *f, const char *ns, const char *name, const char *uid,
                    const char *reservation)
{
    topo_kv ann[] = {{TOPO_ADMISSION_RESERVATION_ANNOTATION, reservation}};
    topo_cache_pod p = {uid,  ns,   name, "",  "Pending", NULL, 0,    NULL, 0,
                        ann, reservation != NULL ? 1 : 0, 0, "1", T0, NULL, NULL, 0};
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_put_pod(f->cache, &p, &err), &err);
}

static uint64_t dropped(fx *f)
{
    topo_admission_stats st;
    topo_admission_get_stats(f->ctx, &st);
    return st.events_dropped;
}

/* The pod holding the slot, once there: its name and uid from the cache;
 * an event whose slot has no pod waits for it. */
static void test_events__found_by_slot(void **state)
{
    fx *f = *state;
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "TopologyNodeReplaced",
                    "n9 failed: moved to n1", f->now);
    adm_event_queue(f->ctx, "team-a", RES, 2, NULL, "Warning", "TopologyNodeReplacementFailed",
                    "n9 failed: no room", f->now);
    /* no pod claims either slot yet */
    assert_int_equal(drain(f), 0);

    claim(f, "uid-1", 1);
    put_pod(f, "team-a", "train-1", "uid-1", NULL);
    assert_int_equal(drain(f), 1);
    assert_string_equal(f->seen,
                        "team-a/train-1/uid-1/Normal/TopologyNodeReplaced/n9 failed: moved to n1;");
    /* passed once */
    assert_int_equal(drain(f), 0);

    /* slot 2 claimed, but its pod not in the cache yet: still waiting */
    claim(f, "uid-2", 2);
    assert_int_equal(drain(f), 0);
    put_pod(f, "team-a", "train-2", "uid-2", NULL);
    f->now += 10;
    assert_int_equal(drain(f), 1);
    assert_string_equal(f->seen, "team-a/train-2/uid-2/Warning/TopologyNodeReplacementFailed/"
                                 "n9 failed: no room;");
    assert_int_equal(dropped(f), 0);
}

/* Oldest first, whatever the slots. */
static void test_events__oldest_first(void **state)
{
    fx *f = *state;
    claim(f, "uid-0", 0);
    claim(f, "uid-1", 1);
    put_pod(f, "team-a", "p0", "uid-0", NULL);
    put_pod(f, "team-a", "p1", "uid-1", NULL);
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "first", f->now);
    adm_event_queue(f->ctx, "team-a", RES, 0, NULL, "Normal", "R", "second", f->now);
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "third", f->now);
    assert_int_equal(drain(f), 3);
    assert_string_equal(f->seen, "team-a/p1/uid-1/Normal/R/first;team-a/p0/uid-0/Normal/R/second;"
                                 "team-a/p1/uid-1/Normal/R/third;");
}

/* A pod gated for want of a replacement holds no slot: the event goes to
 * the newest gated pod of its PodSet in its namespace. */
static void put_gated(fx *f, const char *ns, const char *name, const char *uid, int64_t created)
{
    topo_kv ann[] = {{TOPO_ADMISSION_WAIT_REASON_ANNOTATION, "no replacement"},
                     {TOPO_ADMISSION_PODSET_ANNOTATION, PODSET}};
    topo_cache_pod p = {uid, ns, name, "", "Pending", NULL, 0, NULL, 0,
                        ann, 2, 0, "1", created, NULL, NULL, 0};
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_put_pod(f->cache, &p, &err), &err);
}

static void test_events__found_gated(void **state)
{
    fx *f = *state;
    adm_event_queue(f->ctx, "team-a", RES, 0, PODSET, "Warning",
                    "TopologyNodeReplacementFailed", "no room", f->now);
    put_gated(f, "team-b", "train-b", "uid-b", T0 + 9); /* another namespace */
    assert_int_equal(drain(f), 0);
    put_gated(f, "team-a", "train-old", "uid-old", T0 - 60);
    put_gated(f, "team-a", "train-new", "uid-new", T0);
    assert_int_equal(drain(f), 1);
    assert_string_equal(f->seen,
                        "team-a/train-new/uid-new/Warning/TopologyNodeReplacementFailed/no room;");
    /* a placed pod's event waits for the real pod's uid on its slot */
    claim(f, TOPO_CACHE_CLAIMANT_PREFIX "pod/train-0", 0);
    adm_event_queue(f->ctx, "team-a", RES, 0, NULL, "Normal", "R", "unnamed", f->now);
    assert_int_equal(drain(f), 0);
}

/* Gated before its PodSet was ever placed (no reservation): the Events of
 * a PodSet's pods gated together go one to each pod, newest first, and a
 * later drain gives none to a pod that already had its Event; a pod gated
 * long before the Event was queued is not the one it is about. */
static void test_events__gated_one_each(void **state)
{
    fx *f = *state;
    put_gated(f, "team-a", "train-old", "uid-old", T0 - 600);
    for (int i = 0; i < 3; i++)
        adm_event_queue(f->ctx, "team-a", "", -1, PODSET, "Normal", "TopologyWaiting", "no room",
                        f->now);
    put_gated(f, "team-a", "train-0", "uid-0", T0);
    put_gated(f, "team-a", "train-1", "uid-1", T0 + 1);
    assert_int_equal(drain(f), 2);
    assert_string_equal(f->seen, "team-a/train-1/uid-1/Normal/TopologyWaiting/no room;"
                                 "team-a/train-0/uid-0/Normal/TopologyWaiting/no room;");
    /* the third waits for its own pod, not a sibling told already */
    f->now += 5;
    assert_int_equal(drain(f), 0);
    put_gated(f, "team-a", "train-2", "uid-2", T0 + 1);
    assert_int_equal(drain(f), 1);
    assert_string_equal(f->seen, "team-a/train-2/uid-2/Normal/TopologyWaiting/no room;");
    /* another reason for a pod told already is its own Event */
    adm_event_queue(f->ctx, "team-a", "", -1, PODSET, "Warning", "TopologyNodeReplacementFailed",
                    "no replacement", f->now);
    assert_int_equal(drain(f), 1);
    assert_string_equal(f->seen,
                        "team-a/train-2/uid-2/Warning/TopologyNodeReplacementFailed/no replacement;");
    assert_int_equal(dropped(f), 0);
}

/* Dropped once older than the TTL (and counted), even if the pod comes. */
static void test_events__ttl(void **state)
{
    fx *f = *state;
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "old", f->now);
    f->now += TOPO_ADMISSION_EVENT_TTL_S;
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "young", f->now);
    assert_int_equal(drain(f), 0); /* at the TTL: kept */
    assert_int_equal(dropped(f), 0);
    f->now += 1;
    assert_int_equal(drain(f), 0);
    assert_int_equal(dropped(f), 1);
    claim(f, "uid-1", 1);
    put_pod(f, "team-a", "p1", "uid-1", NULL);
    assert_int_equal(drain(f), 1);
    assert_string_equal(f->seen, "team-a/p1/uid-1/Normal/R/young;");
}

/* At most TOPO_ADMISSION_EVENTS_MAX queued: the later ones are dropped. */
static void test_events__cap(void **state)
{
    fx *f = *state;
    char msg[32];
    for (int i = 0; i < TOPO_ADMISSION_EVENTS_MAX + 5; i++) {
        snprintf(msg, sizeof msg, "m%d", i);
        adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", msg, f->now);
    }
    assert_int_equal(dropped(f), 5);
    claim(f, "uid-1", 1);
    put_pod(f, "team-a", "p1", "uid-1", NULL);
    assert_int_equal(drain(f), TOPO_ADMISSION_EVENTS_MAX);
    assert_non_null(strstr(f->seen, "/m0;"));
    assert_non_null(strstr(f->seen, "/m255;"));
    assert_null(strstr(f->seen, "/m256;"));
    /* room again once drained */
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "again", f->now);
    assert_int_equal(drain(f), 1);
    assert_int_equal(dropped(f), 5);
}

/* fn runs under no lock: it may queue (a placement on another thread
 * does); what it queues waits behind the events still waiting. */
static void queue_again(void *payload, const topo_admission_event *ev)
{
    fx *f = payload;
    seen(f, ev);
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "queued by fn", f->now);
}

static void test_events__queued_during_drain(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    claim(f, "uid-1", 1);
    put_pod(f, "team-a", "p1", "uid-1", NULL);
    adm_event_queue(f->ctx, "team-a", RES, 2, NULL, "Normal", "R", "waits", f->now);
    adm_event_queue(f->ctx, "team-a", RES, 1, NULL, "Normal", "R", "now", f->now);
    f->seen[0] = '\0';
    f->calls = 0;
    assert_int_equal(topo_admission_events_drain(f->ctx, queue_again, f, &err), 1);
    assert_string_equal(f->seen, "team-a/p1/uid-1/Normal/R/now;");
    claim(f, "uid-2", 2);
    put_pod(f, "team-a", "p2", "uid-2", NULL);
    assert_int_equal(drain(f), 2);
    assert_string_equal(f->seen,
                        "team-a/p2/uid-2/Normal/R/waits;team-a/p1/uid-1/Normal/R/queued by fn;");
}

/* The free of a ctx with events still queued frees them (ASan). */
static void test_events__freed_with_ctx(void **state)
{
    fx *f = *state;
    adm_event_queue(f->ctx, "team-a", RES, 2, "never", "Normal", "R", "left", f->now);
    assert_int_equal(drain(f), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_events__found_by_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__oldest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__found_gated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__gated_one_each, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__queued_during_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events__freed_with_ctx, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
