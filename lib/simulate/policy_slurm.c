/* slurm-tree: Slurm's topology/tree plugin as its documentation describes
 * it (docs/simulate.md "Policies"). The Topology Guide
 * (https://slurm.schedmd.com/topology.html, "Tree Topology"): "identify the
 * lowest level switch in the hierarchy that can satisfy a job's request and
 * then allocate resources on its underlying leaf switches using a best-fit
 * algorithm"; topology.conf(5) (https://slurm.schedmd.com/topology.conf.html)
 * describes the switches. Here a level value is a switch: the last level
 * above the hostname is the leaf switch, coarser levels the ones above it.
 *
 * Slurm counts nodes; a pod here is a whole or partial node, so a switch's
 * "free nodes" are the pods of the job's size its nodes could take (the sum
 * of free / gpus), which is Slurm's count for whole-node pods.
 *
 *   1. From the leaf level up, the first level with a switch that has room
 *      for all the pods; of its switches that do, the one with the fewest
 *      free (best fit), the first in the fabric's order on a tie. None at
 *      any level: the whole cluster (one fabric: Slurm refuses a job that
 *      would span disjoint fabrics, which a snapshot does not have).
 *   2. Inside it, leaf switch by leaf switch: the leaf with the fewest free
 *      that holds the rest of the job, or, when none does, the leaf with the
 *      most free (the fewest leaves in all): our reading of the Guide's
 *      leaf best fit, not checked line by line against select/cons_tres.
 *   3. Inside a leaf, each pod on the node with the fewest free GPUs that
 *      still fit (Slurm's native best fit over nodes), the first in the
 *      fabric's order on a tie.
 *
 * Simplified: between the chosen switch and its leaves Slurm also weighs
 * intermediate switches and link speeds, and honours --switches (a job's
 * limit on leaves, with a wait time); this picks leaves directly under the
 * chosen switch and has no --switches. Nothing is random: the seed changes
 * nothing. O(nodes x levels) per job. */
#include <stdlib.h>

#include "sim_internal.h"

typedef struct slurm_state {
    int64_t *room[TOPO_MAX_LEVELS]; /* per level and switch: pods its nodes could take */
    uint8_t *used;                  /* per leaf: already taken in this placement */
} slurm_state;

static void slurm_dispose(sim_run *r)
{
    slurm_state *s = r->policy_state;
    if (s != NULL) {
        for (size_t l = 0; l < TOPO_MAX_LEVELS; l++)
            free(s->room[l]);
        free(s->used);
    }
    free(s);
    r->policy_state = NULL;
}

static int slurm_init(sim_run *r, topo_err *err)
{
    const topo_sim_cluster *c = r->c;
    slurm_state *s = calloc(1, sizeof(*s));
    r->policy_state = s;
    if (s == NULL)
        return topo_err_nomem(err, "simulation");
    /* Levels above the hostname; the cluster has at least the hostname. */
    for (size_t l = 0; l + 1 < c->nlevels; l++)
        if ((s->room[l] = calloc(c->ndom[l] + 1, sizeof(*s->room[l]))) == NULL)
            goto nomem;
    if (c->nlevels >= 2 && (s->used = calloc(c->ndom[c->nlevels - 2] + 1, 1)) == NULL)
        goto nomem;
    return 0;
nomem:
    slurm_dispose(r);
    return topo_err_nomem(err, "simulation");
}

/* The best-fit choice among [lo, hi) of a level's switches: the fewest room
 * of at least `want`, or, if none and `most`, the most room; -1 if none. */
static int32_t pick(const int64_t *room, const uint8_t *skip, int32_t lo, int32_t hi,
                    int64_t want, int most)
{
    int32_t fit = -1, big = -1;
    for (int32_t d = lo; d < hi; d++) {
        if ((skip != NULL && skip[d]) || room[d] == 0)
            continue;
        if (room[d] >= want && (fit < 0 || room[d] < room[fit]))
            fit = d;
        if (big < 0 || room[d] > room[big])
            big = d;
    }
    return fit >= 0 ? fit : most ? big : -1;
}

/* Places up to `want` pods of g GPUs on the leaf's nodes [lo, hi), best fit
 * per pod; the number placed, or < 0 on error (the caller undoes). */
static int32_t fill_leaf(sim_run *r, size_t lo, size_t hi, int32_t g, int32_t want,
                         topo_err *err)
{
    int32_t done = 0;
    while (done < want) {
        int32_t best = -1;
        for (size_t n = lo; n < hi; n++)
            if (r->free[n] >= g && (best < 0 || r->free[n] < r->free[best]))
                best = (int32_t)n;
        if (best < 0)
            break;
        sim_take(r, best, g);
        int rc = sim_slot_add(r, best, 1, err);
        if (rc < 0) {
            sim_give(r, best, g);
            return rc;
        }
        done++;
    }
    return done;
}

static int slurm_place(sim_run *r, const sim_shape *sh, topo_err *err)
{
    const topo_sim_cluster *c = r->c;
    slurm_state *s = r->policy_state;
    const int32_t g = sh->gpus;
    if (c->nlevels < 2 || !sim_fits(r, sh->pods, g))
        return 0;
    const size_t leaf = c->nlevels - 2;

    int64_t total = 0;
    for (size_t l = 0; l <= leaf; l++)
        for (size_t d = 0; d < c->ndom[l]; d++)
            s->room[l][d] = 0;
    for (size_t n = 0; n < c->nnodes; n++) {
        int64_t k = r->free[n] / g;
        total += k;
        for (size_t l = 0; l <= leaf; l++)
            s->room[l][sim_dom(c, n, l)] += k;
    }
    if (total < sh->pods)
        return 0;

    /* 1. The lowest level with a switch that fits; its best fit. Nodes are
     * in depth-first order, so a switch's nodes and leaves are contiguous:
     * [nlo, nhi) and [llo, lhi). */
    size_t nlo = 0, nhi = c->nnodes;
    for (size_t l = leaf + 1; l-- > 0;) {
        int32_t d = pick(s->room[l], NULL, 0, (int32_t)c->ndom[l], sh->pods, 0);
        if (d < 0)
            continue;
        while (sim_dom(c, nlo, l) != d)
            nlo++;
        nhi = nlo;
        while (nhi < c->nnodes && sim_dom(c, nhi, l) == d)
            nhi++;
        break;
    }
    int32_t llo = sim_dom(c, nlo, leaf), lhi = sim_dom(c, nhi - 1, leaf) + 1;

    /* 2. and 3. Leaves, best fit for the rest of the job, then nodes. */
    for (int32_t d = llo; d < lhi; d++)
        s->used[d] = 0;
    int32_t rest = sh->pods;
    size_t n = nlo;
    while (rest > 0) {
        int32_t d = pick(s->room[leaf], s->used, llo, lhi, rest, 1);
        if (d < 0)
            break; /* cannot happen: the switch had room for all */
        s->used[d] = 1;
        while (sim_dom(c, n, leaf) != d)
            n = sim_dom(c, n, leaf) < d ? n + 1 : nlo;
        size_t end = n;
        while (end < nhi && sim_dom(c, end, leaf) == d)
            end++;
        int32_t got = fill_leaf(r, n, end, g, rest, err);
        if (got < 0) {
            sim_slots_undo(r, g);
            return got;
        }
        rest -= got;
    }
    if (rest > 0) {
        sim_slots_undo(r, g);
        return 0;
    }
    return 1;
}

static int slurm_release(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus,
                         topo_err *err)
{
    (void)err;
    for (int32_t i = 0; i < n; i++)
        sim_give(r, slots[i].node, slots[i].count * gpus);
    return 0;
}

const sim_policy_ops sim_policy_slurm = {slurm_init, slurm_place, slurm_release, slurm_dispose};
