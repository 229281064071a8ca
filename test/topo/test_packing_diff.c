/* topo_packing_find against a reference written from the public API only:
 * random usage changes through topo_live (pods bound and finished,
 * reservations made and released, nodes added), and after every commit the
 * picks for a few pods must equal those of the rule applied by hand: a
 * rack's capacity and free from topo_snapshot_walk, "fits on one node" from
 * this test's own model of every node's room and filters, the order least
 * free first, ties by the joined values, at most k. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/live.h"
#include "topo/packing.h"

#define GPU "nvidia.com/gpu"

static const char *const levels[] = {"block", "rack", "kubernetes.io/hostname"};
static const topo_snapshot_opts opts = {"gpu", levels, 3, NULL, 0};

enum { MAX_NODES = 48, START_NODES = 36, PODS = 120, RESV = 12, ROUNDS = 400 };

typedef struct mnode {
    int present;
    char name[8], block[8], rack[8];
    int tainted;
    int pool; /* label pool=a (0) or b (1) */
    int64_t gpu, cpu, pods; /* used, TAS reservations included */
} mnode;

typedef struct mpod {
    int bound;
    int node;
    int64_t gpu, cpu;
} mpod;

typedef struct mresv {
    int held;
    int node;
    int32_t count;
    int64_t gpu;
} mresv;

typedef struct model {
    mnode nodes[MAX_NODES];
    int nnodes;
    int committed; /* nodes in the published snapshot */
    mpod pods[PODS];
    mresv resv[RESV];
} model;

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* Node i: blocks of 4 racks of 3 nodes; rack values repeat across blocks. */
static void add_node(topo_live *live, model *m, int i)
{
    static const topo_taint taint = {"gpu", "reserved", "NoSchedule"};
    mnode *n = &m->nodes[i];
    memset(n, 0, sizeof(*n));
    n->present = 1;
    snprintf(n->name, sizeof(n->name), "n%02d", i);
    snprintf(n->block, sizeof(n->block), "b%d", i / 12);
    snprintf(n->rack, sizeof(n->rack), "r%d", (i / 3) % 4);
    n->tainted = i % 7 == 3;
    n->pool = i % 5 == 1;
    topo_kv labels[4] = {{"block", n->block},
                         {"rack", n->rack},
                         {"kubernetes.io/hostname", n->name},
                         {"pool", n->pool ? "b" : "a"}};
    topo_resource alloc[3] = {{GPU, 8}, {"cpu", 64000}, {"pods", 16}};
    topo_node_spec spec = {n->name, labels, 4, alloc, 3, &taint, n->tainted ? 1 : 0, 0, 1, 0};
    assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
}

static void charge(model *m, int node, int64_t gpu, int64_t cpu, int64_t pods)
{
    m->nodes[node].gpu += gpu;
    m->nodes[node].cpu += cpu;
    m->nodes[node].pods += pods;
}

/* One random change, applied to the live and to the model alike. */
static void change(topo_live *live, model *m, uint64_t *x)
{
    unsigned what = (unsigned)(next(x) % 20);
    char id[16];
    if (what < 9) { /* bind a pod, or move a bound one */
        int p = (int)(next(x) % PODS);
        mpod *pod = &m->pods[p];
        if (pod->bound)
            charge(m, pod->node, -pod->gpu, -pod->cpu, -1);
        pod->bound = 1;
        pod->node = (int)(next(x) % (uint64_t)m->nnodes);
        pod->gpu = (int64_t)(next(x) % 5);
        pod->cpu = 500 * (int64_t)(next(x) % 40);
        charge(m, pod->node, pod->gpu, pod->cpu, 1);
        topo_resource req[2] = {{GPU, pod->gpu}, {"cpu", pod->cpu}};
        snprintf(id, sizeof(id), "p%d", p);
        assert_int_equal(topo_live_upsert_pod(live, id, m->nodes[pod->node].name, 1, req, 2,
                                              NULL),
                         0);
    } else if (what < 14) { /* a pod finishes: deleted or terminal */
        int p = (int)(next(x) % PODS);
        mpod *pod = &m->pods[p];
        snprintf(id, sizeof(id), "p%d", p);
        if (!pod->bound)
            return;
        charge(m, pod->node, -pod->gpu, -pod->cpu, -1);
        pod->bound = 0;
        if (what & 1) {
            assert_int_equal(topo_live_delete_pod(live, id, NULL), 0);
        } else {
            topo_resource req[2] = {{GPU, pod->gpu}, {"cpu", pod->cpu}};
            assert_int_equal(topo_live_upsert_pod(live, id, m->nodes[pod->node].name, 0, req, 2,
                                                  NULL),
                             0);
        }
    } else if (what < 18) { /* a reservation made, replaced or released at once */
        int r = (int)(next(x) % RESV);
        mresv *rv = &m->resv[r];
        snprintf(id, sizeof(id), "w%d", r);
        if (rv->held) {
            charge(m, rv->node, -rv->gpu * rv->count, 0, -rv->count);
            rv->held = 0;
        }
        if (what == 17) {
            assert_int_equal(topo_live_unreserve_now(live, id, NULL), 0);
            return;
        }
        rv->held = 1;
        /* on a published leaf (reserve_now does not see pending nodes) */
        rv->node = (int)(next(x) % (uint64_t)m->committed);
        rv->count = 1 + (int32_t)(next(x) % 2);
        rv->gpu = 1 + (int64_t)(next(x) % 4);
        const mnode *n = &m->nodes[rv->node];
        const char *where[3] = {n->block, n->rack, n->name};
        topo_resource req[1] = {{GPU, rv->gpu}};
        assert_int_equal(topo_live_reserve_now(live, id, where, 3, rv->count, req, 1, NULL), 0);
        charge(m, rv->node, rv->gpu * rv->count, 0, rv->count);
    } else if (m->nnodes < MAX_NODES) { /* a node added: the snapshot is rebuilt */
        add_node(live, m, m->nnodes++);
    }
}

/* The rule by hand, for one rack. */
typedef struct ref_rack {
    char joined[24];
    const char *block, *rack;
    int64_t capacity, free;
    int fits;
} ref_rack;

typedef struct walk_state {
    ref_rack racks[MAX_NODES];
    size_t n;
    const char *block;
} walk_state;

static int visit(const topo_domain_view *v, void *payload)
{
    walk_state *w = payload;
    if (v->level == 0) {
        w->block = v->value;
    } else if (v->level == 1) {
        ref_rack *r = &w->racks[w->n++];
        memset(r, 0, sizeof(*r));
        snprintf(r->joined, sizeof(r->joined), "%s,%s", w->block, v->value);
        r->block = w->block;
        r->rack = v->value;
        r->capacity = v->capacity;
        r->free = v->free;
    }
    return 0;
}

typedef struct ref_pod {
    int64_t gpu, cpu;
    int tolerates;  /* the taint */
    int select_pool; /* -1: no nodeSelector, else pool a (0) or b (1) */
} ref_pod;

static int node_fits(const mnode *n, const ref_pod *p)
{
    if (n->tainted && !p->tolerates)
        return 0;
    if (p->select_pool >= 0 && n->pool != p->select_pool)
        return 0;
    return 8 - n->gpu >= p->gpu && 64000 - n->cpu >= p->cpu && 16 - n->pods >= 1;
}

static int cmp_ref(const void *a, const void *b)
{
    const ref_rack *x = *(const ref_rack *const *)a, *y = *(const ref_rack *const *)b;
    if (x->free != y->free)
        return x->free < y->free ? -1 : 1;
    return strcmp(x->joined, y->joined);
}

/* The expected picks as "block,rack free/used;..." */
static void reference(const topo_snapshot *snap, const model *m, const ref_pod *p, size_t k,
                      char *text, size_t len)
{
    static walk_state w;
    memset(&w, 0, sizeof(w));
    assert_int_equal(topo_snapshot_walk(snap, GPU, visit, &w), 0);
    const ref_rack *cand[MAX_NODES];
    size_t nc = 0, at = 0;
    for (size_t i = 0; i < w.n; i++) {
        ref_rack *r = &w.racks[i];
        for (int j = 0; j < m->nnodes; j++)
            if (strcmp(m->nodes[j].block, r->block) == 0 &&
                strcmp(m->nodes[j].rack, r->rack) == 0 && node_fits(&m->nodes[j], p))
                r->fits = 1;
        if (r->capacity - r->free > 0 && r->fits && p->gpu > 0)
            cand[nc++] = r;
    }
    qsort(cand, nc, sizeof(cand[0]), cmp_ref);
    text[0] = '\0';
    for (size_t i = 0; i < nc && i < k; i++)
        at += (size_t)snprintf(text + at, len - at, "%s %lld/%lld;", cand[i]->joined,
                               (long long)cand[i]->free,
                               (long long)(cand[i]->capacity - cand[i]->free));
}

static void found(const topo_snapshot *snap, const ref_pod *p, size_t k, char *text, size_t len)
{
    topo_resource req[2] = {{GPU, p->gpu}, {"cpu", p->cpu}};
    topo_toleration tol = {"gpu", "Exists", NULL, NULL};
    topo_kv sel = {"pool", p->select_pool == 1 ? "b" : "a"};
    topo_podset_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.name = "main";
    spec.count = 1;
    spec.requests = req;
    spec.nrequests = 2;
    spec.tolerations = p->tolerates ? &tol : NULL;
    spec.ntolerations = p->tolerates ? 1 : 0;
    spec.node_selector = p->select_pool >= 0 ? &sel : NULL;
    spec.nnode_selector = p->select_pool >= 0 ? 1 : 0;
    topo_packing_pick picks[MAX_NODES];
    size_t n = 0, at = 0;
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    assert_non_null(pool);
    if (topo_packing_find(picks, &n, k, snap, &spec, "rack", GPU, pool, &err) != 0)
        fail_msg("topo_packing_find: %s", err.text);
    text[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(picks[i].nvalues, 2);
        at += (size_t)snprintf(text + at, len - at, "%s,%s %lld/%lld;", picks[i].values[0],
                               picks[i].values[1], (long long)picks[i].free,
                               (long long)picks[i].used);
    }
    topo_pool_free(pool);
}

static void test_packing_diff__random_usage(void **state)
{
    (void)state;
    static model m;
    memset(&m, 0, sizeof(m));
    topo_live *live = NULL;
    assert_int_equal(topo_live_create(&live, &opts, NULL), 0);
    for (m.nnodes = 0; m.nnodes < START_NODES; m.nnodes++)
        add_node(live, &m, m.nnodes);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    m.committed = m.nnodes;
    uint64_t x = 20261206;
    size_t compared = 0, nonempty = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int nchanges = 1 + (int)(next(&x) % 4);
        for (int c = 0; c < nchanges; c++)
            change(live, &m, &x);
        assert_int_equal(topo_live_commit(live, NULL), 0);
        m.committed = m.nnodes;
        const topo_snapshot *snap = topo_live_acquire(live);
        for (int q = 0; q < 4; q++) {
            ref_pod p = {1 + (int64_t)(next(&x) % 8), 1000 * (int64_t)(next(&x) % 48),
                         (int)(next(&x) % 2), (int)(next(&x) % 3) - 1};
            size_t k = q == 0 ? MAX_NODES : 1 + next(&x) % 4;
            char want[2048], got[2048];
            reference(snap, &m, &p, k, want, sizeof(want));
            found(snap, &p, k, got, sizeof(got));
            if (strcmp(want, got) != 0)
                fail_msg("round %d pod gpu=%lld cpu=%lld tol=%d pool=%d k=%zu:\n got  %s\n want %s",
                         round, (long long)p.gpu, (long long)p.cpu, p.tolerates, p.select_pool, k,
                         got, want);
            compared++;
            nonempty += want[0] != '\0';
        }
        topo_live_release(live, snap);
    }
    /* the comparisons must have seen both answers */
    assert_true(nonempty > compared / 4);
    assert_true(nonempty < compared);
    topo_live_free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packing_diff__random_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
