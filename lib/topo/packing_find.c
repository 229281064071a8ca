/* topo_packing_find (topo/packing.h): the packing rule over a live
 * snapshot. Everything it reads is kept current by the snapshot, so a call
 * costs the domains of the packing level, not the nodes:
 * - whether the pod fits on one node of a domain is the engine's own phase-1
 *   count for the pod's shape (its requests, "pods: 1", and on hostname
 *   topologies its tolerations, nodeSelector and required node affinity),
 *   the aggregate snapshot_agg.c keeps per shape;
 * - a domain's capacity and free of the resource are the sums
 *   snapshot_sums.c keeps per domain;
 * - the order and the cut are topo_packing_rank's. */
#include <string.h>

#include "engine_internal.h"
#include "topo/packing.h"
#include "topo/quantity.h"

/* The pod's request of the resource (repeated names summed, as the engine
 * sums them). */
static int64_t request_of(const topo_podset_spec *pod, const char *resource)
{
    int64_t total = 0;
    for (size_t i = 0; i < pod->nrequests; i++)
        if (pod->requests[i].name != NULL && strcmp(pod->requests[i].name, resource) == 0)
            total = topo_quantity_add(total, pod->requests[i].amount);
    return total;
}

static int check_args(const topo_snapshot *snap, const topo_podset_spec *pod, const char *level,
                      const char *resource, int *out_level, topo_err *err)
{
    if (snap == NULL || !snap->built)
        return topo_err_set(err, TOPO_EINVALID, "packing: snapshot: not built");
    if (pod == NULL)
        return topo_err_set(err, TOPO_EINVALID, "packing: pod: missing");
    if (resource == NULL || resource[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "packing: resource: empty");
    for (size_t i = 0; i < pod->nrequests; i++)
        if (pod->requests[i].name == NULL)
            return topo_err_set(err, TOPO_EINVALID, "packing: pod: requests[%zu]: name: missing",
                                i);
    int l = level != NULL ? topo_snapshot_level_index(snap, level) : -1;
    if (l < 0)
        return topo_err_set(err, TOPO_EINVALID, "packing: level: \"%s\" is not a level of %s",
                            level != NULL ? level : "", snap->topology_name);
    if ((size_t)l + 1 == snap->nlevels)
        return topo_err_set(err, TOPO_EINVALID,
                            "packing: level: \"%s\" is the lowest level of %s: a domain "
                            "there is one leaf, nothing to keep whole",
                            level, snap->topology_name);
    *out_level = l;
    return 0;
}

/* The shape a single pod without a topology request has for the engine:
 * its resource vector, slices of one pod on the lowest level, no inner
 * layers; the node filters on hostname topologies. */
static int pod_shape(eng_ctx *ctx, const topo_podset_spec *pod, run_state *rs, agg_shape **out)
{
    const topo_snapshot *snap = ctx->snap;
    int32_t *ssal = topo_pool_calloc(ctx->pool, snap->nlevels + 1, sizeof(*ssal));
    *out = NULL;
    if (ssal == NULL || eng_req_vec(ctx, pod, &rs->req) != 0)
        return TOPO_ENOMEM;
    rs->ps = pod;
    rs->p.count = 1;
    rs->p.slice_size = 1;
    rs->p.slice_level = (int)snap->nlevels - 1;
    rs->p.requested_level = (int)snap->nlevels - 1;
    rs->p.slice_size_at_level = ssal;
    rs->filter_nodes = eng_filters_nodes(ctx, pod);
    if (snap->hostname_lowest) {
        char why[512];
        /* selectors the engine refuses: the pod fits nowhere */
        if (eng_validate_selectors(pod, why, sizeof(why)) != 0)
            return 0;
    }
    if ((*out = eng_shape_acquire(ctx, rs)) == NULL)
        return TOPO_ENOMEM;
    return 0;
}

/* The picks: the ranked domains' values and sums, copied into the pool. */
static int copy_picks(topo_packing_pick *out, const size_t *ranked, size_t n,
                      const topo_snapshot *snap, const int32_t *doms,
                      const topo_packing_domain *cands, topo_pool *pool)
{
    for (size_t i = 0; i < n; i++) {
        const snap_domain *sd = &snap->domains[doms[ranked[i]]];
        size_t nv = (size_t)sd->level + 1;
        const char **values = topo_pool_calloc(pool, nv, sizeof(*values));
        if (values == NULL)
            return TOPO_ENOMEM;
        for (size_t v = 0; v < nv; v++)
            if ((values[v] = topo_pool_strdup(pool, sd->values[v])) == NULL)
                return TOPO_ENOMEM;
        out[i].values = values;
        out[i].nvalues = nv;
        out[i].free = cands[ranked[i]].free;
        out[i].used = cands[ranked[i]].used;
    }
    return 0;
}

static int find(topo_packing_pick *out, size_t *out_n, size_t k, const topo_snapshot *snap,
                const topo_podset_spec *pod, int level, const char *resource, topo_pool *pool,
                eng_ctx *ctx, topo_err *err)
{
    int64_t request = request_of(pod, resource);
    int32_t r = snap_resource_index(snap, resource);
    size_t n = snap->level_ndomains[level];
    const int32_t *doms = snap->level_domains[level];
    run_state rs;
    int rc;

    /* Nothing to steer: a pod that asks none of the resource, or a
     * resource no node exposes (nothing can be in use). */
    if (request <= 0 || r < 0 || k == 0 || n == 0)
        return 0;
    const snap_sums *sums = snap_sums_get(snap, r);
    if (sums == NULL)
        return topo_err_nomem(err, "packing");
    memset(&rs, 0, sizeof(rs));
    if ((rc = pod_shape(ctx, pod, &rs, &ctx->held)) != 0)
        return topo_err_set(err, rc, "packing: out of memory");
    if (ctx->held == NULL)
        return 0;
    const agg_count *counts = snap_agg_counts(ctx->held);
    topo_packing_domain *cands = topo_pool_alloc(pool, n * sizeof(*cands));
    size_t *ranked = topo_pool_alloc(pool, k * sizeof(*ranked));
    if (cands == NULL || ranked == NULL)
        return topo_err_nomem(err, "packing");
    for (size_t i = 0; i < n; i++) {
        int32_t d = doms[i];
        cands[i].name = snap->domains[d].joined;
        cands[i].free = sums->free[d];
        /* a node's room may be negative (usage past allocatable): never
         * count more in use than there is */
        int64_t used = topo_quantity_sub(sums->capacity[d], sums->free[d]);
        cands[i].used = used > 0 ? used : 0;
        cands[i].node_free_max = counts[d].state >= 1 ? request : 0;
    }
    if ((rc = topo_packing_rank(ranked, out_n, k, cands, n, request, err)) != 0)
        return rc;
    if (copy_picks(out, ranked, *out_n, snap, doms, cands, pool) != 0) {
        *out_n = 0;
        return topo_err_nomem(err, "packing");
    }
    return 0;
}

int topo_packing_find(topo_packing_pick *out, size_t *out_n, size_t k,
                      const topo_snapshot *snap, const topo_podset_spec *pod, const char *level,
                      const char *resource, topo_pool *pool, topo_err *err)
{
    topo_gates gates;
    eng_ctx ctx;
    int l = -1;
    int rc;

    *out_n = 0;
    if ((rc = check_args(snap, pod, level, resource, &l, err)) != 0)
        return rc;
    topo_gates_init(&gates);
    memset(&ctx, 0, sizeof(ctx));
    ctx.snap = snap;
    ctx.gates = &gates;
    ctx.pool = pool;
    rc = find(out, out_n, k, snap, pod, l, resource, pool, &ctx, err);
    snap_agg_release(snap, ctx.held);
    return rc;
}
