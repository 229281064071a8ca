/* The live snapshot: every commit must publish exactly the snapshot that a
 * fresh build of the same state would give (checked against an independent
 * model through random batches of node and pod changes), and readers on
 * other threads must never see half a batch. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/live.h"
#include "topo/model.h"
#include "topo/packing.h"
#include "topo/pool.h"

static const char *levels[] = {"rack", "kubernetes.io/hostname"};
static const topo_snapshot_opts opts = {"t", levels, 2, NULL, 0};

enum { NODES = 12, PODS = 60 };

/* Under ThreadSanitizer (the tsan stage of scripts/test.sh) every access
 * costs ten times as much: the threaded tests run a fraction of their
 * batches and rounds, which still races readers with writers (what it
 * checks). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

/* Batches the readers race with. */
enum { READ_BATCHES = UNDER_TSAN ? 300 : 3000 };

typedef struct model {
    int node_present[NODES];
    int node_ready[NODES];
    int64_t node_gpus[NODES];
    int pod_node[PODS]; /* -1: unbound or absent */
    int pod_present[PODS];
    int64_t pod_gpus[PODS];
} model;

static void node_name(char *buf, size_t n, int i)
{
    snprintf(buf, n, "n%02d", i);
}

static void node_spec(topo_node_spec *spec, topo_kv *labels, topo_resource *alloc, char *name,
                      char *rack, const model *m, int i)
{
    node_name(name, 8, i);
    snprintf(rack, 8, "r%d", i / 4);
    labels[0] = (topo_kv){"rack", rack};
    labels[1] = (topo_kv){"kubernetes.io/hostname", name};
    alloc[0] = (topo_resource){"nvidia.com/gpu", m->node_gpus[i]};
    alloc[1] = (topo_resource){"pods", 110};
    *spec = (topo_node_spec){name, labels, 2, alloc, 2, NULL, 0, 0, m->node_ready[i], 0};
}

/* The snapshot the model describes, built from scratch. */
static topo_snapshot *fresh_snapshot(const model *m)
{
    topo_snapshot *snap = NULL;
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    for (int i = 0; i < NODES; i++) {
        if (!m->node_present[i])
            continue;
        topo_kv labels[2];
        topo_resource alloc[2];
        topo_node_spec spec;
        char name[8], rack[8];
        node_spec(&spec, labels, alloc, name, rack, m, i);
        assert_int_equal(topo_snapshot_add_node(snap, &spec, NULL), 0);
    }
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    for (int p = 0; p < PODS; p++) {
        if (!m->pod_present[p] || m->pod_node[p] < 0)
            continue;
        char name[8];
        node_name(name, sizeof(name), m->pod_node[p]);
        topo_resource req[] = {{"nvidia.com/gpu", m->pod_gpus[p]}};
        assert_int_equal(topo_snapshot_add_pod_usage(snap, name, req, 1, NULL, NULL), 0);
    }
    return snap;
}

typedef struct dump {
    char text[8192];
    size_t len;
} dump;

static int dump_domain(const topo_domain_view *v, void *payload)
{
    dump *d = payload;
    d->len += (size_t)snprintf(d->text + d->len, sizeof(d->text) - d->len,
                               "%zu:%s n=%zu cap=%lld free=%lld pods=%lld;", v->level, v->value,
                               v->nodes, (long long)v->capacity, (long long)v->free,
                               (long long)v->pods_free);
    return 0;
}

static void render(const topo_snapshot *snap, dump *d)
{
    d->len = 0;
    d->text[0] = '\0';
    assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", dump_domain, d), 0);
}

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void test_live__commits_match_fresh_builds(void **state)
{
    (void)state;
    topo_live *live = NULL;
    assert_int_equal(topo_live_create(&live, &opts, NULL), 0);
    model m;
    memset(&m, 0, sizeof(m));
    for (int p = 0; p < PODS; p++)
        m.pod_node[p] = -1;
    uint64_t x = 12345;
    for (int batch = 0; batch < 300; batch++) {
        int nchanges = 1 + (int)(next(&x) % 6);
        for (int c = 0; c < nchanges; c++) {
            unsigned what = (unsigned)(next(&x) % 10);
            if (what < 2) { /* node upsert: new, readiness flip, capacity change */
                int i = (int)(next(&x) % NODES);
                m.node_present[i] = 1;
                m.node_ready[i] = next(&x) % 5 != 0;
                m.node_gpus[i] = 4 + (int64_t)(next(&x) % 2) * 4;
                topo_kv labels[2];
                topo_resource alloc[2];
                topo_node_spec spec;
                char name[8], rack[8];
                node_spec(&spec, labels, alloc, name, rack, &m, i);
                assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
            } else if (what < 3) {
                int i = (int)(next(&x) % NODES);
                char name[8];
                node_name(name, sizeof(name), i);
                m.node_present[i] = 0;
                assert_int_equal(topo_live_delete_node(live, name, NULL), 0);
            } else if (what < 8) { /* pod upsert: bind, move, resize, unbind */
                int p = (int)(next(&x) % PODS);
                int node = (int)(next(&x) % (NODES + 2)) - 2;
                m.pod_present[p] = 1;
                m.pod_node[p] = node >= 0 ? node : -1;
                m.pod_gpus[p] = 1 + (int64_t)(next(&x) % 4);
                char uid[16], name[8];
                snprintf(uid, sizeof(uid), "uid-%d", p);
                node_name(name, sizeof(name), node >= 0 ? node : 0);
                topo_resource req[] = {{"nvidia.com/gpu", m.pod_gpus[p]}};
                assert_int_equal(topo_live_upsert_pod(live, uid, node >= 0 ? name : NULL, 1, req,
                                                      1, NULL),
                                 0);
            } else {
                int p = (int)(next(&x) % PODS);
                char uid[16];
                snprintf(uid, sizeof(uid), "uid-%d", p);
                m.pod_present[p] = 0;
                m.pod_node[p] = -1;
                assert_int_equal(topo_live_delete_pod(live, uid, NULL), 0);
            }
        }
        assert_int_equal(topo_live_commit(live, NULL), 0);
        topo_snapshot *want = fresh_snapshot(&m);
        dump a, b;
        render(want, &a);
        const topo_snapshot *got = topo_live_acquire(live);
        render(got, &b);
        topo_live_release(live, got);
        if (strcmp(a.text, b.text) != 0)
            fail_msg("batch %d:\n want %s\n got  %s", batch, a.text, b.text);
        topo_snapshot_free(want);
    }
    topo_live_stats st;
    topo_live_get_stats(live, &st);
    assert_true(st.rebuilds > 10);
    assert_true(st.applied > 100); /* both paths were exercised */
    topo_live_free(live);
}

/* Readers check an invariant every batch keeps: the writer moves pods
 * between nodes (delete and add in one batch), so the total free GPUs seen
 * by any reader is always the same. */
typedef struct reader_arg {
    topo_live *live;
    atomic_int *stop;
    int64_t expected_free;
    atomic_long reads;
    int torn;
} reader_arg;

static int sum_roots(const topo_domain_view *v, void *payload)
{
    if (v->level == 0)
        *(int64_t *)payload += v->free;
    return 0;
}

/* The packing rule on the same snapshot (its shape counts and per-rack
 * sums are read while writers wait, created by readers racing each other):
 * every rack it proposes holds 4 nodes x 8 GPUs, used and free summing to
 * that. */
static int packing_torn(const topo_snapshot *snap, topo_pool *pool)
{
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    topo_podset_spec pod;
    topo_packing_pick picks[NODES];
    size_t n = 0;
    memset(&pod, 0, sizeof(pod));
    pod.count = 1;
    pod.requests = one;
    pod.nrequests = 1;
    topo_pool_clear(pool);
    if (topo_packing_find(picks, &n, NODES, snap, &pod, "rack", "nvidia.com/gpu", pool, NULL) != 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (picks[i].free + picks[i].used != 32)
            return 1;
    return 0;
}

static void *reader(void *p)
{
    reader_arg *a = p;
    topo_pool *pool = topo_pool_create();
    while (!atomic_load(a->stop)) {
        const topo_snapshot *snap = topo_live_acquire(a->live);
        int64_t total = 0;
        topo_snapshot_walk(snap, "nvidia.com/gpu", sum_roots, &total);
        int torn = pool == NULL || packing_torn(snap, pool);
        topo_live_release(a->live, snap);
        if (total != a->expected_free || torn)
            a->torn++;
        atomic_fetch_add(&a->reads, 1);
    }
    topo_pool_free(pool);
    return NULL;
}

static void test_live__readers_never_see_half_a_batch(void **state)
{
    (void)state;
    topo_live *live = NULL;
    assert_int_equal(topo_live_create(&live, &opts, NULL), 0);
    model m;
    memset(&m, 0, sizeof(m));
    for (int i = 0; i < NODES; i++) {
        m.node_present[i] = m.node_ready[i] = 1;
        m.node_gpus[i] = 8;
        topo_kv labels[2];
        topo_resource alloc[2];
        topo_node_spec spec;
        char name[8], rack[8];
        node_spec(&spec, labels, alloc, name, rack, &m, i);
        assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
    }
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    for (int p = 0; p < 20; p++) {
        char uid[16], name[8];
        snprintf(uid, sizeof(uid), "uid-%d", p);
        node_name(name, sizeof(name), p % NODES);
        assert_int_equal(topo_live_upsert_pod(live, uid, name, 1, one, 1, NULL), 0);
    }
    assert_int_equal(topo_live_commit(live, NULL), 0);
    atomic_int stop = 0;
    reader_arg args[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        args[t].live = live;
        args[t].stop = &stop;
        args[t].expected_free = NODES * 8 - 20;
        atomic_init(&args[t].reads, 0);
        args[t].torn = 0;
        assert_int_equal(pthread_create(&th[t], NULL, reader, &args[t]), 0);
    }
    uint64_t x = 99;
    /* At least READ_BATCHES batches, and on until both readers have read
     * during them (a loaded machine may schedule them late), at most 20 s. */
    time_t deadline = time(NULL) + 20;
    for (int batch = 0; batch < READ_BATCHES || ((atomic_load(&args[0].reads) < 200 ||
                                           atomic_load(&args[1].reads) < 200) &&
                                          time(NULL) < deadline);
         batch++) {
        /* move two pods; every 100th batch also reshapes the tree */
        for (int k = 0; k < 2; k++) {
            int p = (int)(next(&x) % 20);
            char uid[16], name[8];
            snprintf(uid, sizeof(uid), "uid-%d", p);
            assert_int_equal(topo_live_delete_pod(live, uid, NULL), 0);
            node_name(name, sizeof(name), (int)(next(&x) % NODES));
            assert_int_equal(topo_live_upsert_pod(live, uid, name, 1, one, 1, NULL), 0);
        }
        if (batch % 100 == 0) {
            topo_kv labels[2];
            topo_resource alloc[2];
            topo_node_spec spec;
            char name[8], rack[8];
            node_spec(&spec, labels, alloc, name, rack, &m, (int)(next(&x) % NODES));
            assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
        }
        assert_int_equal(topo_live_commit(live, NULL), 0);
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        assert_true(atomic_load(&args[t].reads) > 0);
        assert_int_equal(args[t].torn, 0);
    }
    topo_live_free(live);
}

/* --- immediate reservations ------------------------------------------------ */

typedef struct leaf_query {
    const char *host;
    int64_t free;
    int found;
} leaf_query;

static int find_leaf(const topo_domain_view *v, void *payload)
{
    leaf_query *q = payload;
    if (v->level == 1 && strcmp(v->value, q->host) == 0) {
        q->free = v->free;
        q->found = 1;
    }
    return 0;
}

/* Free GPUs of one host's leaf in the published snapshot; -1 when absent. */
static int64_t leaf_free(topo_live *live, const char *host)
{
    leaf_query q = {host, 0, 0};
    const topo_snapshot *snap = topo_live_acquire(live);
    assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", find_leaf, &q), 0);
    topo_live_release(live, snap);
    return q.found ? q.free : -1;
}

static void published(topo_live *live, dump *d)
{
    const topo_snapshot *snap = topo_live_acquire(live);
    render(snap, d);
    topo_live_release(live, snap);
}

/* A live snapshot with `n` Ready 8-GPU nodes (n00.., four per rack), committed. */
static topo_live *live_with_nodes(model *m, int n)
{
    topo_live *live = NULL;
    assert_int_equal(topo_live_create(&live, &opts, NULL), 0);
    memset(m, 0, sizeof(*m));
    for (int p = 0; p < PODS; p++)
        m->pod_node[p] = -1;
    for (int i = 0; i < n; i++) {
        m->node_present[i] = m->node_ready[i] = 1;
        m->node_gpus[i] = 8;
        topo_kv labels[2];
        topo_resource alloc[2];
        topo_node_spec spec;
        char name[8], rack[8];
        node_spec(&spec, labels, alloc, name, rack, m, i);
        assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
    }
    assert_int_equal(topo_live_commit(live, NULL), 0);
    return live;
}

static void upsert_model_node(topo_live *live, model *m, int i)
{
    topo_kv labels[2];
    topo_resource alloc[2];
    topo_node_spec spec;
    char name[8], rack[8];
    node_spec(&spec, labels, alloc, name, rack, m, i);
    assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
}

static void test_live__reserve_now_is_visible_at_once_pending_pods_are_not(void **state)
{
    (void)state;
    model m;
    topo_live *live = live_with_nodes(&m, 4);
    topo_resource two[] = {{"nvidia.com/gpu", 2}};
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    const char *n01[] = {"r0", "n01"};

    /* a pending pod change of the batch */
    assert_int_equal(topo_live_upsert_pod(live, "pod-a", "n00", 1, two, 1, NULL), 0);
    uint64_t gen = topo_live_generation(live);
    assert_int_equal(topo_live_reserve_now(live, "res-1", n01, 2, 3, one, 1, NULL), 0);
    assert_true(topo_live_generation(live) > gen);
    assert_int_equal(leaf_free(live, "n01"), 8 - 3);
    assert_int_equal(leaf_free(live, "n00"), 8); /* the pod is not published yet */

    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(leaf_free(live, "n00"), 8 - 2);
    assert_int_equal(leaf_free(live, "n01"), 8 - 3); /* not charged twice */

    /* the same as a fresh build of that state */
    m.pod_present[0] = 1;
    m.pod_node[0] = 0;
    m.pod_gpus[0] = 2;
    topo_snapshot *want = fresh_snapshot(&m);
    assert_int_equal(topo_snapshot_add_tas_usage(want, n01, 2, 3, one, 1, NULL), 0);
    dump a, b;
    render(want, &a);
    published(live, &b);
    assert_string_equal(a.text, b.text);
    topo_snapshot_free(want);

    topo_live_stats st;
    topo_live_get_stats(live, &st);
    assert_int_equal(st.reserved, 1);
    topo_live_free(live);
}

static void test_live__reserve_now_survives_rebuilds(void **state)
{
    (void)state;
    model m;
    topo_live *live = live_with_nodes(&m, 4);
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    const char *n02[] = {"r0", "n02"};
    const char *n03[] = {"r0", "n03"};

    assert_int_equal(topo_live_reserve_now(live, "res-a", n02, 2, 2, one, 1, NULL), 0);
    assert_int_equal(topo_live_reserve_now(live, "res-b", n03, 2, 1, one, 1, NULL), 0);
    /* a node change reshapes the tree: the rebuild charges both again */
    m.node_present[4] = m.node_ready[4] = 1;
    m.node_gpus[4] = 8;
    upsert_model_node(live, &m, 4);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    topo_live_stats st;
    topo_live_get_stats(live, &st);
    assert_int_equal(st.rebuilds, 2);
    assert_int_equal(leaf_free(live, "n02"), 8 - 2);
    assert_int_equal(leaf_free(live, "n03"), 8 - 1);
    assert_int_equal(leaf_free(live, "n04"), 8);

    /* n03 goes: its reservation is kept, and charged when it comes back */
    assert_int_equal(topo_live_delete_node(live, "n03", NULL), 0);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(leaf_free(live, "n03"), -1);
    /* ... while a new charge there is refused and changes nothing */
    dump before, after;
    published(live, &before);
    uint64_t gen = topo_live_generation(live);
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_live_reserve_now(live, "res-c", n03, 2, 1, one, 1, &err),
                     TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "res-c"));
    /* replacing res-a by a charge on the vanished n03 keeps res-a as it was */
    assert_int_equal(topo_live_reserve_now(live, "res-a", n03, 2, 1, one, 1, NULL),
                     TOPO_ENOTFOUND);
    published(live, &after);
    assert_string_equal(before.text, after.text);
    assert_int_equal(topo_live_generation(live), gen);
    assert_int_equal(leaf_free(live, "n02"), 8 - 2);

    upsert_model_node(live, &m, 3);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(leaf_free(live, "n03"), 8 - 1);
    topo_live_get_stats(live, &st);
    assert_int_equal(st.reserved, 2);
    topo_live_free(live);
}

static void test_live__reserve_now_replaces_and_removes(void **state)
{
    (void)state;
    model m;
    topo_live *live = live_with_nodes(&m, 4);
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    topo_resource two[] = {{"nvidia.com/gpu", 2}};
    const char *n01[] = {"r0", "n01"};
    const char *n02[] = {"r0", "n02"};
    dump empty, now;
    published(live, &empty);

    assert_int_equal(topo_live_reserve_now(live, "res", n01, 2, 1, one, 1, NULL), 0);
    assert_int_equal(leaf_free(live, "n01"), 7);
    /* replacing: the difference, old out and new in */
    assert_int_equal(topo_live_reserve_now(live, "res", n02, 2, 3, two, 1, NULL), 0);
    assert_int_equal(leaf_free(live, "n01"), 8);
    assert_int_equal(leaf_free(live, "n02"), 8 - 6);
    assert_int_equal(topo_live_reserve_now(live, "res", n02, 2, 1, two, 1, NULL), 0);
    assert_int_equal(leaf_free(live, "n02"), 8 - 2);
    /* count 0 unreserves */
    assert_int_equal(topo_live_reserve_now(live, "res", n02, 2, 0, two, 1, NULL), 0);
    published(live, &now);
    assert_string_equal(empty.text, now.text);

    assert_int_equal(topo_live_reserve_now(live, "res", n01, 2, 2, one, 1, NULL), 0);
    uint64_t gen = topo_live_generation(live);
    assert_int_equal(topo_live_unreserve_now(live, "res", NULL), 0);
    assert_true(topo_live_generation(live) > gen);
    published(live, &now);
    assert_string_equal(empty.text, now.text);
    assert_int_equal(topo_live_unreserve_now(live, "unknown", NULL), 0);
    /* a commit after all that has nothing left to apply to the reservations */
    assert_int_equal(topo_live_commit(live, NULL), 0);
    published(live, &now);
    assert_string_equal(empty.text, now.text);

    /* batched and immediate writes to one id: the batched one leaves at commit */
    assert_int_equal(topo_live_upsert_reserved(live, "mix", n01, 2, 1, one, 1, NULL), 0);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(leaf_free(live, "n01"), 7);
    assert_int_equal(topo_live_reserve_now(live, "mix", n02, 2, 1, one, 1, NULL), 0);
    assert_int_equal(leaf_free(live, "n02"), 7);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(leaf_free(live, "n01"), 8);
    assert_int_equal(leaf_free(live, "n02"), 7);
    /* and back: a batched delete of an immediate one leaves at commit */
    assert_int_equal(topo_live_delete_reserved(live, "mix", NULL), 0);
    assert_int_equal(leaf_free(live, "n02"), 7);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    published(live, &now);
    assert_string_equal(empty.text, now.text);

    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_live_reserve_now(live, "", n01, 2, 1, one, 1, &err), TOPO_EINVALID);
    assert_int_equal(topo_live_reserve_now(live, "x", n01, 3, 1, one, 1, &err), TOPO_EINVALID);
    assert_int_equal(topo_live_reserve_now(live, "x", n01, 2, -1, one, 1, &err), TOPO_EINVALID);
    topo_live_free(live);
}

/* Both reservation writers check their input with one rule: a NULL values
 * array, a NULL value or NULL requests with a count is refused with
 * TOPO_EINVALID naming the reservation, and nothing is recorded (the batched
 * writer used to store a NULL value as "" and dereference the NULL arrays). */
static void test_live__reservations_refuse_null_input(void **state)
{
    (void)state;
    model m;
    topo_live *live = live_with_nodes(&m, 4);
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    const char *holed[] = {"r0", NULL};
    dump empty, now;
    topo_live_stats st;
    published(live, &empty);

    for (int batched = 0; batched < 2; batched++) {
        int (*write)(topo_live *, const char *, const char *const *, size_t, int32_t,
                     const topo_resource *, size_t, topo_err *) =
            batched ? topo_live_upsert_reserved : topo_live_reserve_now;
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(write(live, "r", NULL, 2, 1, one, 1, &err), TOPO_EINVALID);
        assert_non_null(strstr(err.text, "\"r\": bad domain"));
        err = (topo_err)TOPO_ERR_INIT;
        assert_int_equal(write(live, "r", holed, 2, 1, one, 1, &err), TOPO_EINVALID);
        assert_non_null(strstr(err.text, "values[1] is NULL"));
        err = (topo_err)TOPO_ERR_INIT;
        assert_int_equal(write(live, "r", holed, 1, 1, NULL, 1, &err), TOPO_EINVALID);
        assert_non_null(strstr(err.text, "requests is NULL"));
    }
    assert_int_equal(topo_live_commit(live, NULL), 0);
    topo_live_get_stats(live, &st);
    assert_int_equal(st.reserved, 0);
    published(live, &now);
    assert_string_equal(empty.text, now.text);
    topo_live_free(live);
}

/* Several writer threads (pod churn, commits, node reshapes and immediate
 * reservations that move between leaves) and readers: every thread holds
 * exactly one 1-GPU reservation all along and pods take no GPU, so every
 * reader must see the same total free GPUs; at the end the snapshot must be
 * a fresh build of the final state. */
enum { WRITERS = 4, ROUNDS = UNDER_TSAN ? 100 : 400 };

typedef struct writer_arg {
    topo_live *live;
    int id;
    int final_node;
    int pod_node[8]; /* -1: absent */
    int failures;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *a = p;
    uint64_t x = (uint64_t)a->id * 7919u + 1u;
    char rid[16];
    snprintf(rid, sizeof(rid), "res-%d", a->id);
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    for (int r = 0; r < ROUNDS; r++) {
        char uid[24], name[8], rack[8];
        int node = (int)(next(&x) % NODES);
        int pod = (int)(next(&x) % 8);
        snprintf(uid, sizeof(uid), "w%d-pod-%d", a->id, pod);
        node_name(name, sizeof(name), node);
        if (next(&x) % 3 == 0) {
            a->failures += topo_live_delete_pod(a->live, uid, NULL) != 0;
            a->pod_node[pod] = -1;
        } else {
            a->failures += topo_live_upsert_pod(a->live, uid, name, 1, NULL, 0, NULL) != 0;
            a->pod_node[pod] = node;
        }
        int to = (int)(next(&x) % NODES);
        node_name(name, sizeof(name), to);
        snprintf(rack, sizeof(rack), "r%d", to / 4);
        const char *values[] = {rack, name};
        if (topo_live_reserve_now(a->live, rid, values, 2, 1, one, 1, NULL) == 0)
            a->final_node = to;
        else
            a->failures++;
        if (r % 50 == a->id) { /* a reshape: a taint comes or goes (capacity unchanged) */
            model m;
            memset(&m, 0, sizeof(m));
            m.node_ready[11] = 1;
            m.node_gpus[11] = 8;
            topo_kv labels[2];
            topo_resource alloc[2];
            topo_node_spec spec;
            char n11[8], r11[8];
            node_spec(&spec, labels, alloc, n11, r11, &m, 11);
            topo_taint taint = {"dedicated", "x", "NoSchedule"};
            spec.taints = &taint;
            spec.ntaints = (size_t)(r / 50 + a->id) % 2;
            a->failures += topo_live_upsert_node(a->live, &spec, NULL) != 0;
        }
        if (next(&x) % 4 == 0)
            a->failures += topo_live_commit(a->live, NULL) != 0;
    }
    return NULL;
}

static void test_live__concurrent_writers_and_readers(void **state)
{
    (void)state;
    model m;
    topo_live *live = live_with_nodes(&m, NODES);
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    writer_arg w[WRITERS];
    for (int t = 0; t < WRITERS; t++) {
        char rid[16];
        snprintf(rid, sizeof(rid), "res-%d", t);
        const char *values[] = {"r0", "n00"};
        assert_int_equal(topo_live_reserve_now(live, rid, values, 2, 1, one, 1, NULL), 0);
        w[t] = (writer_arg){live, t, 0, {-1, -1, -1, -1, -1, -1, -1, -1}, 0};
    }
    atomic_int stop = 0;
    reader_arg args[2];
    pthread_t rth[2], wth[WRITERS];
    for (int t = 0; t < 2; t++) {
        args[t].live = live;
        args[t].stop = &stop;
        args[t].expected_free = NODES * 8 - WRITERS;
        atomic_init(&args[t].reads, 0);
        args[t].torn = 0;
        assert_int_equal(pthread_create(&rth[t], NULL, reader, &args[t]), 0);
    }
    for (int t = 0; t < WRITERS; t++)
        assert_int_equal(pthread_create(&wth[t], NULL, writer, &w[t]), 0);
    for (int t = 0; t < WRITERS; t++) {
        pthread_join(wth[t], NULL);
        assert_int_equal(w[t].failures, 0);
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < 2; t++) {
        pthread_join(rth[t], NULL);
        assert_true(atomic_load(&args[t].reads) > 0);
        assert_int_equal(args[t].torn, 0);
    }
    assert_int_equal(topo_live_commit(live, NULL), 0);
    /* the nodes, the reservations and the pods (which take no GPU) */
    topo_snapshot *want = fresh_snapshot(&m);
    for (int t = 0; t < WRITERS; t++) {
        char name[8], rack[8];
        node_name(name, sizeof(name), w[t].final_node);
        snprintf(rack, sizeof(rack), "r%d", w[t].final_node / 4);
        const char *values[] = {rack, name};
        assert_int_equal(topo_snapshot_add_tas_usage(want, values, 2, 1, one, 1, NULL), 0);
        for (int p = 0; p < 8; p++)
            if (w[t].pod_node[p] >= 0) {
                node_name(name, sizeof(name), w[t].pod_node[p]);
                assert_int_equal(topo_snapshot_add_pod_usage(want, name, NULL, 0, NULL, NULL), 0);
            }
    }
    dump a, b;
    render(want, &a);
    published(live, &b);
    assert_string_equal(a.text, b.text);
    topo_snapshot_free(want);
    topo_live_stats st;
    topo_live_get_stats(live, &st);
    assert_int_equal(st.reserved, WRITERS);
    assert_true(st.rebuilds > 1);
    topo_live_free(live);
}

/* topo_live_freed moves only when capacity may have come back: a pod gone or
 * changed, a reservation released or shrunk, nodes changed; never for usage
 * that only grows or is replaced by the same. */
static void test_live__freed_counts_only_capacity_given_back(void **state)
{
    (void)state;
    model m;
    topo_live *live = live_with_nodes(&m, 4);
    topo_resource two[] = {{"nvidia.com/gpu", 2}};
    topo_resource one[] = {{"nvidia.com/gpu", 1}};
    const char *n01[] = {"r0", "n01"};
    uint64_t f = topo_live_freed(live);

    /* usage grows: a pod bound, a reservation made, the same pod again */
    assert_int_equal(topo_live_upsert_pod(live, "pod-a", "n00", 1, two, 1, NULL), 0);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(topo_live_reserve_now(live, "res-1", n01, 2, 3, one, 1, NULL), 0);
    assert_int_equal(topo_live_upsert_pod(live, "pod-a", "n00", 1, two, 1, NULL), 0);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(topo_live_reserve_now(live, "res-1", n01, 2, 3, one, 1, NULL), 0);
    assert_int_equal(topo_live_freed(live), f);

    /* a reservation shrinks (a slot claimed), then goes */
    assert_int_equal(topo_live_reserve_now(live, "res-1", n01, 2, 2, one, 1, NULL), 0);
    assert_int_equal(topo_live_freed(live), f + 1);
    assert_int_equal(topo_live_unreserve_now(live, "res-1", NULL), 0);
    assert_int_equal(topo_live_freed(live), f + 2);

    /* a pod finishes: pending until the commit publishes it */
    assert_int_equal(topo_live_upsert_pod(live, "pod-a", "n00", 0, two, 1, NULL), 0);
    assert_int_equal(topo_live_freed(live), f + 2);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(topo_live_freed(live), f + 3);

    /* a node comes */
    m.node_present[5] = m.node_ready[5] = 1;
    m.node_gpus[5] = 8;
    upsert_model_node(live, &m, 5);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    assert_int_equal(topo_live_freed(live), f + 4);
    topo_live_free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live__commits_match_fresh_builds),
        cmocka_unit_test(test_live__readers_never_see_half_a_batch),
        cmocka_unit_test(test_live__reserve_now_is_visible_at_once_pending_pods_are_not),
        cmocka_unit_test(test_live__reserve_now_survives_rebuilds),
        cmocka_unit_test(test_live__reserve_now_replaces_and_removes),
        cmocka_unit_test(test_live__reservations_refuse_null_input),
        cmocka_unit_test(test_live__concurrent_writers_and_readers),
        cmocka_unit_test(test_live__freed_counts_only_capacity_given_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
