/* Differential test of the incremental engine: random clusters, random usage
 * histories through the live snapshot (pods bound and deleted, reservations
 * made and dropped, at once and in batches, nodes added, changed and
 * deleted) and random requests (required, preferred, unconstrained, implied,
 * slices, multi-layer slices, leader groups, several PodSets, selectors,
 * affinity, tolerations, balanced placement, the profiles, node
 * replacement), each placed by lib/topo's engine and by the reference copy
 * of the engine before the aggregates (test/topo/reference/). Assignments
 * and messages must be identical.
 *
 * TOPO_DIFF_ROUNDS=N runs N clusters (default 1500, 100 under sanitizers);
 * TOPO_DIFF_SEED=S starts from seed S. A failure prints its seed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/ref_engine.h"
#include "topo/engine.h"
#include "topo/live.h"
#include "topo/model.h"
#include "topo/pool.h"
#include "topo/rand.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

enum { MAX_NODES = 200, MAX_LEVELS = 4, PODS = 40, RESERVATIONS = 12, STEPS = 14, SHAPES = 5 };

#define HOST "kubernetes.io/hostname"
#define GPU "nvidia.com/gpu"

typedef struct node_model {
    int present;
    char name[16];
    char values[MAX_LEVELS][16];
    int missing_level; /* -1, or a level label the node lacks */
    char pool[4];
    int64_t gpu, cpu, pods;
    int has_gpu, has_pods;
    int tainted;
    char taint_effect[24];
    int ready, unschedulable;
} node_model;

typedef struct shape_model {
    int64_t gpu, cpu;
    int foreign; /* asks for a resource no node has */
    int slice_level; /* -1: none */
    int32_t slice_size;
    int nlayers;
    int layer_levels[3];
    int32_t layer_sizes[3];
} shape_model;

typedef struct world {
    uint64_t rng;
    uint64_t seed;
    int round, step;
    size_t nlevels;
    const char *levels[MAX_LEVELS];
    int hostname_lowest;
    int flavor;
    size_t nnodes;
    node_model nodes[MAX_NODES];
    shape_model shapes[SHAPES];
    topo_live *live;
    topo_pool *pool;
    long compared;
} world;

static uint64_t below(world *w, uint64_t n)
{
    return topo_rand_below(&w->rng, n);
}

static int chance(world *w, int percent)
{
    return (int)below(w, 100) < percent;
}

static const char *level_names[] = {"zone", "block", "rack", "sub"};

static void node_spec_of(const world *w, const node_model *n, topo_node_spec *spec, topo_kv *labels,
                         topo_resource *alloc, topo_taint *taint)
{
    size_t nl = 0, na = 0;
    for (size_t l = 0; l < w->nlevels; l++)
        if ((int)l != n->missing_level)
            labels[nl++] = (topo_kv){w->levels[l], n->values[l]};
    if (!w->hostname_lowest)
        labels[nl++] = (topo_kv){HOST, n->name};
    labels[nl++] = (topo_kv){"pool", n->pool};
    if (n->has_gpu)
        alloc[na++] = (topo_resource){GPU, n->gpu};
    alloc[na++] = (topo_resource){"cpu", n->cpu};
    if (n->has_pods)
        alloc[na++] = (topo_resource){"pods", n->pods};
    *taint = (topo_taint){"t1", n->tainted == 2 ? "x" : "", n->taint_effect};
    *spec = (topo_node_spec){n->name, labels, nl, alloc, na, taint, n->tainted ? 1 : 0,
                             n->unschedulable, n->ready, 0};
}

static void random_node(world *w, node_model *n, size_t i)
{
    memset(n, 0, sizeof(*n));
    n->present = 1;
    snprintf(n->name, sizeof(n->name), "n%zu", i);
    for (size_t l = 0; l < w->nlevels; l++) {
        if (l + 1 == w->nlevels && w->hostname_lowest)
            snprintf(n->values[l], sizeof(n->values[l]), "%s", n->name);
        else /* few values per level, reused under different parents */
            snprintf(n->values[l], sizeof(n->values[l]), "x%d", (int)below(w, l == 0 ? 3 : 4));
    }
    n->missing_level = chance(w, 4) ? (int)below(w, w->nlevels) : -1;
    snprintf(n->pool, sizeof(n->pool), "%s", chance(w, 80) ? "a" : "b");
    n->has_gpu = !chance(w, 10);
    n->gpu = (int64_t)below(w, 9);
    n->cpu = (int64_t)below(w, 17) * 1000;
    n->has_pods = !chance(w, 4);
    n->pods = (int64_t)below(w, 12);
    n->tainted = chance(w, 15) ? 1 + (int)below(w, 2) : 0;
    static const char *effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
    snprintf(n->taint_effect, sizeof(n->taint_effect), "%s", effects[below(w, 3)]);
    n->ready = !chance(w, 8);
    n->unschedulable = chance(w, 4);
}

static void upsert_node(world *w, size_t i)
{
    topo_node_spec spec;
    topo_kv labels[MAX_LEVELS + 2];
    topo_resource alloc[3];
    topo_taint taint;
    node_spec_of(w, &w->nodes[i], &spec, labels, alloc, &taint);
    assert_int_equal(topo_live_upsert_node(w->live, &spec, NULL), 0);
}

static void random_shape(world *w, shape_model *s)
{
    memset(s, 0, sizeof(*s));
    s->gpu = (int64_t)below(w, 4);
    s->cpu = chance(w, 40) ? (int64_t)below(w, 5) * 1000 : 0;
    s->foreign = chance(w, 5);
    s->slice_level = -1;
    int r = (int)below(w, 10);
    if (r < 3) {
        s->slice_level = (int)below(w, w->nlevels);
        s->slice_size = 1 + (int32_t)below(w, 4);
    } else if (r < 5) {
        s->nlayers = 1 + (int)below(w, 3);
        int lv = (int)below(w, w->nlevels);
        int32_t size = (int32_t)(1 + below(w, 3)) * (int32_t)(1 + below(w, 3));
        for (int k = 0; k < s->nlayers; k++) {
            s->layer_levels[k] = lv;
            s->layer_sizes[k] = size;
            /* usually deeper and dividing, sometimes not (the messages) */
            lv = lv + (chance(w, 85) ? 1 : 0);
            if (lv >= (int)w->nlevels)
                lv = (int)w->nlevels - 1;
            int32_t div = size % 2 == 0 && chance(w, 70) ? 2 : 1;
            if (chance(w, 10))
                div = 3;
            size = size / div > 0 ? size / div : 1;
        }
    }
}

/* The world's cluster: topology, nodes, a few request shapes. */
static void new_world(world *w, uint64_t seed, int round)
{
    w->seed = seed;
    w->rng = seed;
    w->round = round;
    w->nlevels = 1 + below(w, MAX_LEVELS);
    w->hostname_lowest = chance(w, 65);
    size_t off = MAX_LEVELS - w->nlevels;
    for (size_t l = 0; l < w->nlevels; l++)
        w->levels[l] = level_names[off + l];
    if (w->hostname_lowest)
        w->levels[w->nlevels - 1] = HOST;
    w->flavor = chance(w, 25);
    /* mostly small; now and then past 64 domains a level (bitset words) */
    int size = (int)below(w, 100);
    w->nnodes = 1 + below(w, size < 8 ? MAX_NODES : size < 25 ? 48 : 16);
    static topo_kv flavor_labels[] = {{"pool", "a"}};
    topo_snapshot_opts opts = {"t", w->levels, w->nlevels, flavor_labels,
                               (size_t)(w->flavor ? 1 : 0)};
    assert_int_equal(topo_live_create(&w->live, &opts, NULL), 0);
    for (size_t i = 0; i < w->nnodes; i++) {
        random_node(w, &w->nodes[i], i);
        upsert_node(w, i);
    }
    for (size_t s = 0; s < SHAPES; s++)
        random_shape(w, &w->shapes[s]);
    assert_int_equal(topo_live_commit(w->live, NULL), 0);
}

/* ---- usage history ---- */

static const node_model *some_node(world *w)
{
    const node_model *n = &w->nodes[below(w, w->nnodes)];
    return n->present ? n : NULL;
}

static void reservation(world *w, int now)
{
    char id[16];
    snprintf(id, sizeof(id), "r%d", (int)below(w, RESERVATIONS));
    const node_model *n = some_node(w);
    if (n == NULL || chance(w, 25)) {
        if (now)
            assert_int_equal(topo_live_unreserve_now(w->live, id, NULL), 0);
        else
            assert_int_equal(topo_live_delete_reserved(w->live, id, NULL), 0);
        return;
    }
    const char *values[MAX_LEVELS];
    for (size_t l = 0; l < w->nlevels; l++)
        values[l] = n->values[l];
    topo_resource req[] = {{GPU, (int64_t)below(w, 3)}, {"cpu", (int64_t)below(w, 3) * 500}};
    int32_t count = (int32_t)below(w, 4);
    size_t nvalues = w->hostname_lowest && chance(w, 50) ? 1 : w->nlevels;
    const char *const *vals = nvalues == 1 ? &values[w->nlevels - 1] : values;
    if (now) {
        /* refused (ENOTFOUND) when the leaf is not in the published snapshot */
        int rc = topo_live_reserve_now(w->live, id, vals, nvalues, count, req, 2, NULL);
        assert_true(rc == 0 || rc == TOPO_ENOTFOUND);
    } else {
        assert_int_equal(topo_live_upsert_reserved(w->live, id, vals, nvalues, count, req, 2,
                                                   NULL),
                         0);
    }
}

static void history_step(world *w)
{
    int what = (int)below(w, 100);
    char uid[16];
    snprintf(uid, sizeof(uid), "p%d", (int)below(w, PODS));
    if (what < 35) { /* a pod bound, moved or finished */
        const node_model *n = some_node(w);
        topo_resource req[] = {{GPU, (int64_t)below(w, 5)}, {"cpu", (int64_t)below(w, 4) * 1000}};
        assert_int_equal(topo_live_upsert_pod(w->live, uid, n ? n->name : NULL, !chance(w, 15),
                                              req, 2, NULL),
                         0);
    } else if (what < 45) {
        assert_int_equal(topo_live_delete_pod(w->live, uid, NULL), 0);
    } else if (what < 70) {
        reservation(w, 1);
    } else if (what < 80) {
        reservation(w, 0);
    } else if (what < 88) { /* a node changed or added */
        size_t i = below(w, w->nnodes < MAX_NODES ? w->nnodes + 1 : w->nnodes);
        if (i == w->nnodes)
            w->nnodes++;
        if (!w->nodes[i].present || chance(w, 30)) {
            random_node(w, &w->nodes[i], i);
        } else if (chance(w, 50)) {
            w->nodes[i].gpu = (int64_t)below(w, 9);
        } else {
            w->nodes[i].ready = !w->nodes[i].ready;
        }
        upsert_node(w, i);
    } else if (what < 92) {
        size_t i = below(w, w->nnodes);
        if (w->nodes[i].present) {
            w->nodes[i].present = 0;
            assert_int_equal(topo_live_delete_node(w->live, w->nodes[i].name, NULL), 0);
        }
    }
    if (what >= 92 || chance(w, 60))
        assert_int_equal(topo_live_commit(w->live, NULL), 0);
}

/* ---- requests ---- */

typedef struct request {
    topo_podset_spec ps[3];
    size_t n;
    topo_resource req[3][3];
    topo_slice_layer layers[3][3];
    topo_gates gates;
    topo_workload_spec wl;
    topo_admitted_podset adm;
    const char *unhealthy[1];
} request;

static const char *level_or_junk(world *w, int level)
{
    if (chance(w, 3))
        return "nope";
    return w->levels[level];
}

static void podset_of(world *w, request *r, size_t k, const char *name)
{
    topo_podset_spec *ps = &r->ps[k];
    const shape_model *s = &w->shapes[below(w, SHAPES)];
    memset(ps, 0, sizeof(*ps));
    ps->name = name;
    ps->count = chance(w, 5) ? 0 : (int32_t)(1 + below(w, chance(w, 30) ? 40 : 10));
    size_t nr = 0;
    r->req[k][nr++] = (topo_resource){GPU, s->gpu};
    if (s->cpu > 0)
        r->req[k][nr++] = (topo_resource){"cpu", s->cpu};
    if (s->foreign)
        r->req[k][nr++] = (topo_resource){"example.com/foo", 1};
    ps->requests = r->req[k];
    ps->nrequests = nr;
    int mode = (int)below(w, 100);
    int lv = (int)below(w, w->nlevels);
    if (mode < 30)
        ps->required = level_or_junk(w, lv);
    else if (mode < 58)
        ps->preferred = level_or_junk(w, lv);
    else if (mode < 72)
        ps->unconstrained = 1;
    else if (mode < 82)
        ps->implied = 1;
    /* else: no level, slices alone or nothing */
    if (s->slice_level >= 0 && !ps->implied) {
        ps->slice_required = level_or_junk(w, s->slice_level);
        ps->slice_size = s->slice_size;
    } else if (s->nlayers > 0 && !ps->implied) {
        for (int i = 0; i < s->nlayers; i++)
            r->layers[k][i] = (topo_slice_layer){w->levels[s->layer_levels[i]], s->layer_sizes[i]};
        ps->layers = r->layers[k];
        ps->nlayers = (size_t)s->nlayers;
    }
    static const topo_kv sel_pool[] = {{"pool", "a"}};
    static const topo_toleration tol[] = {{"t1", "Exists", NULL, NULL}};
    static const char *const in_a[] = {"a"};
    static const topo_match_expr expr[] = {{"pool", "In", in_a, 1}};
    static const topo_selector_term terms[] = {{expr, 1}};
    static const topo_preferred_term pref[] = {{5, {expr, 1}}};
    if (chance(w, 15)) {
        ps->node_selector = sel_pool;
        ps->nnode_selector = 1;
    }
    if (chance(w, 25)) {
        ps->tolerations = tol;
        ps->ntolerations = 1;
    }
    if (chance(w, 8)) {
        ps->required_terms = terms;
        ps->nrequired_terms = 1;
    }
    if (chance(w, 8)) {
        ps->preferred_terms = pref;
        ps->npreferred_terms = 1;
    }
}

static void random_request(world *w, request *r)
{
    static const char *names[] = {"a", "b", "c"};
    memset(r, 0, sizeof(*r));
    topo_gates_init(&r->gates);
    r->gates.TASBalancedPlacement = chance(w, 20);
    r->gates.TASProfileMixed = !chance(w, 10);
    r->gates.TASProfileLeastFreeCapacity = chance(w, 5);
    r->gates.TASRespectNodeAffinityPreferred = chance(w, 10);
    r->gates.TASMultiLayerTopology = !chance(w, 5);
    r->n = chance(w, 25) ? 2 + below(w, 2) : 1;
    for (size_t k = 0; k < r->n; k++)
        podset_of(w, r, k, names[k]);
    if (r->n >= 2 && chance(w, 50)) { /* a leader and its workers */
        r->ps[0].group = r->ps[1].group = "g";
        r->ps[0].count = 1;
        if (r->ps[1].required == NULL && r->ps[1].preferred == NULL)
            r->ps[1].preferred = w->levels[0];
        r->ps[0].required = r->ps[1].required;
        r->ps[0].preferred = r->ps[1].preferred;
        r->ps[0].slice_required = r->ps[1].slice_required = NULL;
        r->ps[0].nlayers = r->ps[1].nlayers = 0;
    }
}

/* ---- comparison ---- */

static void print_result(const char *who, const topo_podset_result *res, size_t n, int rc)
{
    fprintf(stderr, "  %s: rc %d\n", who, rc);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "    %s: %s", res[i].name ? res[i].name : "?",
                res[i].failure ? res[i].failure : "");
        const topo_assignment *a = res[i].assignment;
        for (size_t d = 0; a && d < a->ndomains; d++) {
            fprintf(stderr, " [");
            for (size_t l = 0; l < a->nlevels; l++)
                fprintf(stderr, "%s%s", l ? "," : "", a->domains[d].values[l]);
            fprintf(stderr, "]=%d", a->domains[d].count);
        }
        fprintf(stderr, "\n");
    }
}

static int same_assignment(const topo_assignment *a, const topo_assignment *b)
{
    if ((a == NULL) != (b == NULL))
        return 0;
    if (a == NULL)
        return 1;
    if (a->nlevels != b->nlevels || a->ndomains != b->ndomains)
        return 0;
    for (size_t l = 0; l < a->nlevels; l++)
        if (strcmp(a->levels[l], b->levels[l]) != 0)
            return 0;
    for (size_t d = 0; d < a->ndomains; d++) {
        if (a->domains[d].count != b->domains[d].count)
            return 0;
        for (size_t l = 0; l < a->nlevels; l++)
            if (strcmp(a->domains[d].values[l], b->domains[d].values[l]) != 0)
                return 0;
    }
    return 1;
}

static int same_results(const topo_podset_result *a, const topo_podset_result *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if ((a[i].failure == NULL) != (b[i].failure == NULL))
            return 0;
        if (a[i].failure != NULL && strcmp(a[i].failure, b[i].failure) != 0)
            return 0;
        if (!same_assignment(a[i].assignment, b[i].assignment))
            return 0;
    }
    return 1;
}

/* Both engines on the published snapshot; the reference's first placement
 * is kept for a node-replacement request. */
static void compare(world *w, request *r, topo_podset_result *keep)
{
    topo_podset_result mine[3], ref[3];
    topo_err e1 = TOPO_ERR_INIT, e2 = TOPO_ERR_INIT;
    const topo_snapshot *snap = topo_live_acquire(w->live);
    const topo_workload_spec *wl = r->wl.nunhealthy_nodes ? &r->wl : NULL;
    int rc_ref = topo_ref_engine_find(ref, snap, r->ps, r->n, wl, &r->gates, w->pool, &e1);
    int rc = topo_engine_find(mine, snap, r->ps, r->n, wl, &r->gates, w->pool, &e2);
    topo_live_release(w->live, snap);
    w->compared++;
    if (rc != rc_ref || (rc == 0 && !same_results(mine, ref, r->n))) {
        fprintf(stderr,
                "engine_diff: MISMATCH in round %d, step %d: replay with TOPO_DIFF_SEED=%llu "
                "TOPO_DIFF_ROUNDS=1\n",
                w->round, w->step, (unsigned long long)w->seed);
        print_result("reference", ref, r->n, rc_ref);
        print_result("incremental", mine, r->n, rc);
        fail();
    }
    if (keep != NULL)
        *keep = ref[0];
}

static int lowest_value_once(const topo_assignment *a, const char *value)
{
    int seen = 0;
    for (size_t i = 0; i < a->ndomains; i++)
        seen += strcmp(a->domains[i].values[a->nlevels - 1], value) == 0;
    return seen == 1;
}

static void requests(world *w)
{
    request r;
    int nreq = 1 + (int)below(w, 3);
    for (int q = 0; q < nreq; q++) {
        random_request(w, &r);
        topo_podset_result first;
        memset(&first, 0, sizeof(first));
        compare(w, &r, &first);
        /* Node replacement of that placement, now and then. */
        if (r.n == 1 && first.assignment != NULL && first.assignment->ndomains > 0 &&
            chance(w, 25)) {
            const topo_assignment *a = first.assignment;
            r.adm = (topo_admitted_podset){r.ps[0].name, r.ps[0].count, a};
            const topo_assign_domain *d = &a->domains[below(w, a->ndomains)];
            r.unhealthy[0] = d->values[a->nlevels - 1];
            /* replace_all with one node is Kueue's replacement when its value
             * is in one domain (Kueue counts only the last of several): every
             * other step asks for it (by the step, so the random stream is as
             * before) and the reference, which has no such field, must agree */
            int replace_all = (w->step & 1) && lowest_value_once(a, r.unhealthy[0]);
            r.wl = (topo_workload_spec){chance(w, 10), r.unhealthy, 1, &r.adm, 1, replace_all, 0};
            compare(w, &r, NULL);
        }
    }
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    return strtoull(v, NULL, 10);
}

static void test_engine_diff__incremental_equals_reference(void **state)
{
    (void)state;
    uint64_t rounds = env_u64("TOPO_DIFF_ROUNDS", UNDER_SANITIZER ? 100 : 1500);
    uint64_t seed = env_u64("TOPO_DIFF_SEED", 1);
    world w;
    long compared = 0;
    for (uint64_t i = 0; i < rounds; i++) {
        memset(&w, 0, sizeof(w));
        w.pool = topo_pool_create();
        assert_non_null(w.pool);
        /* Round i's seed; TOPO_DIFF_SEED=<it> TOPO_DIFF_ROUNDS=1 replays it. */
        new_world(&w, seed + i * 0x9e3779b97f4a7c15ull, (int)i);
        for (w.step = 0; w.step < STEPS; w.step++) {
            topo_pool_clear(w.pool);
            requests(&w);
            history_step(&w);
        }
        compared += w.compared;
        topo_live_free(w.live);
        topo_pool_free(w.pool);
    }
    fprintf(stderr, "engine_diff: %llu clusters, %ld requests compared\n",
            (unsigned long long)rounds, compared);
}

/* Readers on other threads place requests of more shapes than the snapshot
 * keeps (so shapes are added and evicted while others are held) while the
 * writer reserves, releases and changes nodes; each reader compares with the
 * reference on the snapshot it holds. */
typedef struct race {
    topo_live *live;
    int stop;
    pthread_mutex_t mu;
    long mismatches;
    long placed;
} race;

static void *race_reader(void *arg)
{
    race *r = arg;
    topo_pool *pool = topo_pool_create();
    uint64_t rng = (uint64_t)(uintptr_t)arg ^ (uint64_t)(uintptr_t)pool;
    for (int i = 0; i < (UNDER_SANITIZER ? 150 : 1500); i++) {
        topo_resource req[] = {{GPU, 1 + (int64_t)topo_rand_below(&rng, 3)},
                               {"cpu", (int64_t)topo_rand_below(&rng, 6) * 500}};
        topo_podset_spec ps;
        memset(&ps, 0, sizeof(ps));
        ps.name = "a";
        ps.count = 1 + (int32_t)topo_rand_below(&rng, 12);
        ps.requests = req;
        ps.nrequests = 2;
        if (topo_rand_below(&rng, 2))
            ps.unconstrained = 1;
        else
            ps.required = "rack";
        topo_podset_result mine, ref;
        topo_pool_clear(pool);
        const topo_snapshot *snap = topo_live_acquire(r->live);
        int rc1 = topo_engine_find(&mine, snap, &ps, 1, NULL, NULL, pool, NULL);
        int rc2 = topo_ref_engine_find(&ref, snap, &ps, 1, NULL, NULL, pool, NULL);
        int same = rc1 == rc2 && (rc1 != 0 || same_results(&mine, &ref, 1));
        topo_live_release(r->live, snap);
        pthread_mutex_lock(&r->mu);
        r->mismatches += !same;
        r->placed++;
        pthread_mutex_unlock(&r->mu);
    }
    topo_pool_free(pool);
    return NULL;
}

static void test_engine_diff__readers_race_the_writer(void **state)
{
    (void)state;
    static const char *levels[] = {"rack", HOST};
    topo_snapshot_opts opts = {"t", levels, 2, NULL, 0};
    race r;
    memset(&r, 0, sizeof(r));
    pthread_mutex_init(&r.mu, NULL);
    assert_int_equal(topo_live_create(&r.live, &opts, NULL), 0);
    char names[64][16], racks[64][16];
    for (int i = 0; i < 64; i++) {
        snprintf(names[i], sizeof(names[i]), "n%d", i);
        snprintf(racks[i], sizeof(racks[i]), "r%d", i / 8);
        topo_kv labels[] = {{"rack", racks[i]}, {HOST, names[i]}};
        topo_resource alloc[] = {{GPU, 8}, {"cpu", 16000}, {"pods", 20}};
        topo_node_spec spec = {names[i], labels, 2, alloc, 3, NULL, 0, 0, 1, 0};
        assert_int_equal(topo_live_upsert_node(r.live, &spec, NULL), 0);
    }
    assert_int_equal(topo_live_commit(r.live, NULL), 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
    uint64_t rng = 7;
    for (int i = 0; i < (UNDER_SANITIZER ? 300 : 3000); i++) {
        int n = (int)topo_rand_below(&rng, 64);
        char id[16];
        snprintf(id, sizeof(id), "r%d", (int)topo_rand_below(&rng, 16));
        const char *values[] = {racks[n], names[n]};
        topo_resource req[] = {{GPU, 1 + (int64_t)topo_rand_below(&rng, 4)}};
        if (i % 50 == 49) { /* a node change: rebuild and swap */
            topo_kv labels[] = {{"rack", racks[n]}, {HOST, names[n]}};
            topo_resource alloc[] = {{GPU, (int64_t)topo_rand_below(&rng, 9)}, {"cpu", 16000},
                                     {"pods", 20}};
            topo_node_spec spec = {names[n], labels, 2, alloc, 3, NULL, 0, 0, 1, 0};
            assert_int_equal(topo_live_upsert_node(r.live, &spec, NULL), 0);
            assert_int_equal(topo_live_commit(r.live, NULL), 0);
        } else if (topo_rand_below(&rng, 3) == 0) {
            assert_int_equal(topo_live_unreserve_now(r.live, id, NULL), 0);
        } else {
            topo_live_reserve_now(r.live, id, values, 2, 1 + (int32_t)topo_rand_below(&rng, 2), req,
                                  1, NULL);
        }
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(r.mismatches, 0);
    assert_true(r.placed > 0);
    topo_live_free(r.live);
    pthread_mutex_destroy(&r.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_diff__incremental_equals_reference),
        cmocka_unit_test(test_engine_diff__readers_race_the_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
