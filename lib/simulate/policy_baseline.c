/* The topology-unaware policies (docs/simulate.md "Policies"): each pod of
 * a job on its own, all of them or none (a gang). O(nodes) per pod.
 *
 * Nodes are visited in one shuffled order per run, the order an informer
 * lists nodes in, which has nothing to do with the fabric (the cluster's
 * own order is depth first through the topology, and walking it would make
 * a baseline topology-aware by accident). first-fit-fabric walks that own
 * order on purpose: a scheduler whose node list is sorted by rack, the
 * fair baseline a shuffled first-fit is not. */
#include <stdlib.h>

#include "sim_internal.h"
#include "topo/rand.h"

/* kube-scheduler's percentageOfNodesToScore, adaptive (pkg/scheduler
 * schedule_one.go numFeasibleNodesToFind): below 100 nodes all of them,
 * else 50 % minus 1 % per 125 nodes, at least 5 %, at least 100 nodes. */
#define KUBE_MIN_FEASIBLE 100
#define KUBE_BASE_PERCENT 50
#define KUBE_MIN_PERCENT 5

typedef struct base_state {
    int32_t *order;
    size_t next_start; /* kube-scheduler's nextStartNodeIndex */
    sim_pack *pack;    /* mixed-pack: the rule that steers each pod */
} base_state;

static int base_init(sim_run *r, topo_err *err)
{
    base_state *b = calloc(1, sizeof(*b));
    size_t n = r->c->nnodes;
    if (b == NULL || (b->order = malloc(n * sizeof(*b->order))) == NULL) {
        free(b);
        return topo_err_nomem(err, "simulation");
    }
    for (size_t i = 0; i < n; i++)
        b->order[i] = (int32_t)i;
    /* The cluster's nodes are in the snapshot's walk order: level values
     * coarsest first, then hostname, each sorted. */
    if (r->policy != TOPO_SIM_FIRST_FIT_FABRIC)
        topo_rand_shuffle(&r->rng, b->order, n, sizeof(*b->order));
    r->policy_state = b;
    if (r->policy == TOPO_SIM_MIXED_PACK)
        return sim_pack_create(&b->pack, r, r->o.pack_level, err);
    return 0;
}

static void base_dispose(sim_run *r)
{
    base_state *b = r->policy_state;
    if (b != NULL) {
        free(b->order);
        sim_pack_free(b->pack);
    }
    free(b);
    r->policy_state = NULL;
}

static int32_t first_fit(const sim_run *r, const base_state *b, int32_t g)
{
    for (size_t i = 0; i < r->c->nnodes; i++)
        if (r->free[b->order[i]] >= g)
            return b->order[i];
    return -1;
}

static int32_t best_fit(const sim_run *r, const base_state *b, int32_t g)
{
    int32_t best = -1;
    for (size_t i = 0; i < r->c->nnodes; i++) {
        int32_t n = b->order[i];
        if (r->free[n] >= g && (best < 0 || r->free[n] < r->free[best]))
            best = n;
    }
    return best;
}

static int32_t random_fit(sim_run *r, const base_state *b, int32_t g)
{
    size_t k = 0;
    for (size_t i = 0; i < r->c->nnodes; i++)
        k += r->free[b->order[i]] >= g;
    if (k == 0)
        return -1;
    size_t pick = (size_t)topo_rand_below(&r->rng, k);
    for (size_t i = 0; i < r->c->nnodes; i++)
        if (r->free[b->order[i]] >= g && pick-- == 0)
            return b->order[i];
    return -1;
}

static size_t kube_nodes_to_find(size_t all)
{
    if (all < KUBE_MIN_FEASIBLE)
        return all;
    long pct = KUBE_BASE_PERCENT - (long)(all / 125);
    if (pct < KUBE_MIN_PERCENT)
        pct = KUBE_MIN_PERCENT;
    size_t n = all * (size_t)pct / 100;
    return n < KUBE_MIN_FEASIBLE ? KUBE_MIN_FEASIBLE : n;
}

/* kube-scheduler with GPU pods: Filter (NodeResourcesFit) from
 * nextStartNodeIndex until enough feasible nodes, Score, and selectHost's
 * reservoir sample among the best scores. The score is NodeResourcesFit's
 * scoring strategy for the one resource (weight 1, so the weighted mean is
 * the resource's score), with the pod counted in requested, integer
 * division as in Go (pkg/scheduler/framework/plugins/noderesources/):
 *   LeastAllocated (least_allocated.go, leastRequestedScore):
 *     (allocatable - requested) * MaxNodeScore / allocatable
 *   MostAllocated (most_allocated.go, mostRequestedScore), `most`:
 *     requested * MaxNodeScore / allocatable
 * MaxNodeScore is 100; requested is allocatable minus free.
 *
 * pref_dom >= 0 (mixed-pack): the pod carries a preferred node affinity of
 * weight 100 toward that domain of level pref_level. NodeAffinity's score
 * (node_affinity.go: the matching terms' weights, normalised to 0..100 over
 * the scored nodes) counts with the plugin's weight 2 in the default
 * profile, so a scored node in the domain gets 200 more and beats every node
 * outside it, whose NodeResourcesFit score is at most 100. Only the feasible
 * nodes found are scored: when none of them is in the domain the pod lands
 * elsewhere, as it would. */
static int32_t kube_scheduler(sim_run *r, base_state *b, int32_t g, int most, size_t pref_level,
                              int32_t pref_dom)
{
    size_t all = r->c->nnodes, want = kube_nodes_to_find(all), found = 0, ties = 0, seen = 0;
    int64_t best_score = -1;
    int32_t best = -1;
    for (size_t i = 0; i < all && found < want; i++) {
        int32_t n = b->order[(b->next_start + i) % all];
        seen = i + 1;
        if (r->free[n] < g)
            continue;
        found++;
        int64_t cap = r->c->cap[n];
        int64_t score = most ? (cap - r->free[n] + g) * 100 / cap
                             : (int64_t)(r->free[n] - g) * 100 / cap;
        if (pref_dom >= 0 && sim_dom(r->c, (size_t)n, pref_level) == pref_dom)
            score += 200;
        if (score > best_score) {
            best_score = score;
            best = n;
            ties = 1;
        } else if (score == best_score && topo_rand_below(&r->rng, ++ties) == 0) {
            best = n;
        }
    }
    b->next_start = (b->next_start + seen) % all;
    return best;
}

static int base_place(sim_run *r, const sim_shape *s, topo_err *err)
{
    base_state *b = r->policy_state;
    int rc;
    for (int32_t p = 0; p < s->pods; p++) {
        int32_t n, pref = -1;
        switch (r->policy) {
        case TOPO_SIM_MIXED_PACK:
            /* Each pod on its own, as the webhook sees it. */
            if ((rc = sim_pack_prefer(b->pack, r, s->gpus, &pref, err)) < 0) {
                sim_slots_undo(r, s->gpus);
                return rc;
            }
            n = kube_scheduler(r, b, s->gpus, 0, sim_pack_level(b->pack), pref);
            break;
        case TOPO_SIM_KUBE_DEFAULT:
        case TOPO_SIM_MIXED:
            n = kube_scheduler(r, b, s->gpus, 0, 0, -1);
            break;
        case TOPO_SIM_KUBE_BINPACK:
            n = kube_scheduler(r, b, s->gpus, 1, 0, -1);
            break;
        case TOPO_SIM_FIRST_FIT:
        case TOPO_SIM_FIRST_FIT_FABRIC:
            n = first_fit(r, b, s->gpus);
            break;
        case TOPO_SIM_BEST_FIT:
            n = best_fit(r, b, s->gpus);
            break;
        default:
            n = random_fit(r, b, s->gpus);
            break;
        }
        if (n < 0) {
            sim_slots_undo(r, s->gpus);
            return 0;
        }
        sim_take(r, n, s->gpus);
        if ((rc = sim_slot_add(r, n, 1, err)) < 0) {
            sim_give(r, n, s->gpus);
            sim_slots_undo(r, s->gpus);
            return rc;
        }
    }
    return 1;
}

static int base_release(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus,
                        topo_err *err)
{
    (void)err;
    for (int32_t i = 0; i < n; i++)
        sim_give(r, slots[i].node, slots[i].count * gpus);
    return 0;
}

const sim_policy_ops sim_policy_baseline = {base_init, base_place, base_release, base_dispose};
