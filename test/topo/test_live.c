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

static const char *levels[] = {"rack", "kubernetes.io/hostname"};
static const topo_snapshot_opts opts = {"t", levels, 2, NULL, 0};

enum { NODES = 12, PODS = 60 };

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
    *spec = (topo_node_spec){name, labels, 2, alloc, 2, NULL, 0, 0, m->node_ready[i]};
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

static void *reader(void *p)
{
    reader_arg *a = p;
    while (!atomic_load(a->stop)) {
        const topo_snapshot *snap = topo_live_acquire(a->live);
        int64_t total = 0;
        topo_snapshot_walk(snap, "nvidia.com/gpu", sum_roots, &total);
        topo_live_release(a->live, snap);
        if (total != a->expected_free)
            a->torn++;
        atomic_fetch_add(&a->reads, 1);
    }
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
    /* At least 3000 batches, and on until both readers have read during
     * them (a loaded machine may schedule them late), at most 20 s. */
    time_t deadline = time(NULL) + 20;
    for (int batch = 0; batch < 3000 || ((atomic_load(&args[0].reads) < 200 ||
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live__commits_match_fresh_builds),
        cmocka_unit_test(test_live__readers_never_see_half_a_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
