/* One PodSet (and its leader) placed by Kueue's TAS algorithm
 * (findTopologyAssignment): resolve the request, fill in the counts, choose
 * the fit, descend to the leaves, split off the leader. */
#include <string.h>

#include "engine_internal.h"

/* buildAssignment: leaves sorted by level values, zero counts dropped. The
 * leader variant takes leader_state as the count. */
static eng_assign *build_assignment(eng_ctx *ctx, wdom **doms, size_t n, int leader)
{
    const topo_snapshot *snap = ctx->snap;
    eng_assign *a = topo_pool_calloc(ctx->pool, 1, sizeof(*a));
    if (a == NULL)
        return NULL;
    /* Drop empty domains first: unconstrained placements walk thousands. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if ((leader ? doms[i]->leader_state : doms[i]->state) != 0)
            doms[k++] = doms[i];
    n = k;
    if (eng_sort_by(ctx, doms, n, eng_cmp_values) != 0)
        return NULL;
    size_t offset = snap->hostname_lowest ? snap->nlevels - 1 : 0;
    a->levels = (const char *const *)snap->levels + offset;
    a->nlevels = snap->nlevels - offset;
    a->domains = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*a->domains));
    a->values = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*a->values));
    a->counts = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*a->counts));
    if (a->domains == NULL || a->values == NULL || a->counts == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const snap_domain *sd = eng_s(ctx, doms[i]);
        a->domains[i] = sd;
        a->values[i] = (const char *const *)sd->values + offset;
        a->counts[i] = leader ? doms[i]->leader_state : doms[i]->state;
    }
    a->n = n;
    return a;
}

static int has_topology_request(const topo_podset_spec *ps)
{
    return ps->required || ps->preferred || ps->unconstrained || ps->slice_required ||
           ps->nlayers > 0;
}

int eng_find_assignment(eng_ctx *ctx, const eng_request *workers, const eng_request *leader,
                        const char *required_domain, eng_assign **out_workers,
                        eng_assign **out_leader, const char **out_reason)
{
    const topo_snapshot *snap = ctx->snap;
    const topo_podset_spec *ps = workers->ps;
    run_state rs;
    int rc;
    memset(&rs, 0, sizeof(rs));
    *out_workers = NULL;
    if (out_leader)
        *out_leader = NULL;
    *out_reason = NULL;
    rs.ps = ps;
    rs.required_domain = required_domain;
    rs.p.count = workers->count;
    if ((rc = eng_req_vec(ctx, ps, &rs.req)) != 0)
        return rc;
    if (leader != NULL) {
        if ((rc = eng_req_vec(ctx, leader->ps, &rs.leader_req)) != 0)
            return rc;
        rs.has_leader = 1;
        rs.p.leader_count = 1;
    }

    if ((rc = eng_union_existing(ctx, &rs.req, rs.has_leader ? &rs.leader_req : NULL, &rs.need)) != 0)
        return rc;
    /* Nodes need filtering when they have taints or the PodSet selects. */
    rs.filter_nodes = snap->has_taints || ps->nnode_selector > 0 || ps->nrequired_terms > 0 ||
                      (ctx->gates->TASRespectNodeAffinityPreferred && ps->npreferred_terms > 0);

    int has_req = has_topology_request(ps);
    const char *slice_required = ps->slice_required;
    int32_t slice_size_ann = ps->slice_size;
    size_t nlayers = ps->nlayers;
    if (workers->override_slices) {
        slice_required = workers->slice_level_override;
        slice_size_ann = workers->slice_size_override;
        nlayers = 0;
    }
    /* getSliceSizeWithSinglePodAsDefault */
    int32_t slice_size = 1;
    if (has_req) {
        if (nlayers > 0) {
            slice_size = ps->layers[0].size;
        } else if (slice_required != NULL) {
            if (slice_size_ann <= 0) {
                *out_reason = "slice topology requested, but slice size not provided";
                return 0;
            }
            slice_size = slice_size_ann;
        }
    }
    if (slice_size <= 0) {
        *out_reason = eng_fmt(ctx, "invalid slice size %d", slice_size);
        return 0;
    }
    rs.p.slice_size = slice_size;
    int slice_only = has_req && !ps->required && !ps->preferred &&
                     (slice_required != NULL || nlayers > 0);
    rs.p.required = ps->required != NULL;
    rs.p.unconstrained = (has_req && ps->unconstrained) || ps->implied || slice_only;

    const char *key = NULL;
    if (ps->required)
        key = ps->required;
    else if (ps->preferred)
        key = ps->preferred;
    else if (slice_only)
        key = snap->levels[0];
    else if (ps->unconstrained || ps->implied)
        key = snap->levels[snap->nlevels - 1];
    if (key == NULL) {
        *out_reason = "topology level not specified";
        return 0;
    }
    int requested = topo_snapshot_level_index(snap, key);
    if (requested < 0) {
        *out_reason = eng_fmt(ctx, "no requested topology level: %s", key);
        return 0;
    }
    rs.p.requested_level = requested;
    const char *slice_key = slice_required ? slice_required
                            : nlayers > 0   ? ps->layers[0].level
                                            : snap->levels[snap->nlevels - 1];
    int slice_level = topo_snapshot_level_index(snap, slice_key);
    if (slice_level < 0) {
        *out_reason = eng_fmt(ctx, "no requested topology level for slices: %s", slice_key);
        return 0;
    }
    rs.p.slice_level = slice_level;
    if (requested > slice_level) {
        *out_reason = eng_fmt(ctx, "podset slice topology %s is above the podset topology %s",
                          slice_key, key);
        return 0;
    }
    /* buildSliceSizeAtLevel: inner slice layers. */
    int32_t *ssal = topo_pool_calloc(ctx->pool, snap->nlevels + 1, sizeof(int32_t));
    if (ssal == NULL)
        return TOPO_ENOMEM;
    int have_inner = 0;
    if (ctx->gates->TASMultiLayerTopology && has_req && nlayers > 1) {
        int32_t prev_size = slice_size;
        int prev_level = slice_level;
        for (size_t i = 1; i < nlayers; i++) {
            const topo_slice_layer *layer = &ps->layers[i];
            int inner = topo_snapshot_level_index(snap, layer->level);
            if (inner < 0) {
                *out_reason = eng_fmt(ctx, "no requested topology level for additional slice layer: %s",
                                  layer->level);
                return 0;
            }
            if (inner <= prev_level) {
                *out_reason = eng_fmt(ctx, "additional slice layer topology %s must be at a lower level than %s",
                                  layer->level, snap->levels[prev_level]);
                return 0;
            }
            if (layer->size <= 0 || prev_size % layer->size != 0) {
                *out_reason = eng_fmt(ctx, "additional slice layer size %d must evenly divide parent layer size %d",
                                  layer->size, prev_size);
                return 0;
            }
            for (int lv = prev_level + 1; lv <= inner; lv++)
                ssal[lv] = layer->size;
            have_inner = 1;
            prev_size = layer->size;
            prev_level = inner;
        }
    }
    rs.p.slice_size_at_level = ssal;
    rs.multilayer = have_inner;

    if (snap->hostname_lowest) {
        char why[512];
        if (eng_validate_selectors(ps, why, sizeof(why)) != 0) {
            *out_reason = eng_fmt(ctx, "%s", why);
            return 0;
        }
    }

    if ((rc = eng_fill_counts(ctx, &rs)) != 0)
        return rc;

    wdom **fit = NULL;
    size_t nfit = 0;
    int fit_level = 0;
    int balanced = 0;
    if (ctx->gates->TASBalancedPlacement && !rs.p.required && !rs.p.unconstrained) {
        int32_t threshold = 0;
        size_t nbest = 0;
        wdom **best = eng_balanced_best(ctx, &rs.p, &nbest, &threshold);
        if (threshold > 0 && best != NULL) {
            wdom **placed = NULL;
            size_t nplaced = 0;
            int lvl = 0;
            if (eng_balanced_apply(ctx, &rs.p, threshold, best, nbest, &placed, &nplaced, &lvl) == 0) {
                balanced = 1;
                fit = placed;
                nfit = nplaced;
                fit_level = lvl;
            }
        }
    }
    if (!balanced) {
        const char *reason = NULL;
        if ((rc = eng_find_level(ctx, &rs, requested, &fit, &nfit, &fit_level, &reason)) != 0)
            return rc;
        if (reason != NULL) {
            *out_reason = reason;
            return 0;
        }
    }
    int unc = rs.p.unconstrained;
    fit = eng_update_counts(ctx, fit, nfit, rs.p.count, rs.p.leader_count, slice_size, unc, 1,
                            &nfit);
    if (fit == NULL)
        return TOPO_ENOMEM;
    int cur = fit_level;
    int last = (int)snap->nlevels - 1;
    for (; cur < (last < slice_level ? last : slice_level) && !balanced; cur++) {
        size_t nlow = 0;
        wdom **low = eng_lower(ctx, fit, nfit, &nlow);
        if (low == NULL)
            return TOPO_ENOMEM;
        wdom **sorted = eng_sorted(ctx, low, nlow, unc, 0);
        if (sorted == NULL)
            return TOPO_ENOMEM;
        fit = eng_update_counts(ctx, sorted, nlow, rs.p.count, rs.p.leader_count, slice_size,
                                unc, 1, &nfit);
        if (fit == NULL)
            return TOPO_ENOMEM;
    }
    for (; cur < last; cur++) {
        int32_t ss_level = slice_size;
        if (cur >= slice_level)
            ss_level = ssal[cur + 1] > 0 ? ssal[cur + 1] : 1;
        size_t total = 0;
        for (size_t i = 0; i < nfit; i++)
            total += (size_t)eng_nkids(ctx, fit[i]);
        wdom **next = topo_pool_alloc(ctx->pool, (total ? total : 1) * sizeof(*next));
        if (next == NULL)
            return TOPO_ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < nfit; i++) {
            wdom *d = fit[i];
            size_t nkids = (size_t)eng_nkids(ctx, d);
            wdom **kids = eng_kids(ctx, d);
            wdom **sorted = kids ? eng_sorted(ctx, kids, nkids, unc, 0) : NULL;
            if (sorted == NULL)
                return TOPO_ENOMEM;
            if (ss_level > 1) {
                for (size_t c = 0; c < nkids; c++) {
                    sorted[c]->slice_state = sorted[c]->state / ss_level;
                    sorted[c]->slice_state_wl = sorted[c]->state_wl / ss_level;
                }
            }
            size_t nadd = 0;
            wdom **add = eng_update_counts(ctx, sorted, nkids, d->state, d->leader_state,
                                           ss_level, unc, ss_level > 1, &nadd);
            if (add == NULL)
                return TOPO_ENOMEM;
            for (size_t j = 0; j < nadd; j++)
                next[k++] = add[j];
        }
        fit = next;
        nfit = k;
    }

    if (leader != NULL) {
        wdom **lead = topo_pool_alloc(ctx->pool, (nfit ? nfit : 1) * sizeof(*lead));
        wdom **work = topo_pool_alloc(ctx->pool, (nfit ? nfit : 1) * sizeof(*work));
        if (lead == NULL || work == NULL)
            return TOPO_ENOMEM;
        size_t nl = 0, nw = 0;
        for (size_t i = 0; i < nfit; i++) {
            if (fit[i]->leader_state > 0)
                lead[nl++] = fit[i];
            if (fit[i]->state > 0)
                work[nw++] = fit[i];
        }
        if (out_leader && (*out_leader = build_assignment(ctx, lead, nl, 1)) == NULL)
            return TOPO_ENOMEM;
        fit = work;
        nfit = nw;
    }
    if ((*out_workers = build_assignment(ctx, fit, nfit, 0)) == NULL)
        return TOPO_ENOMEM;
    return 0;
}
