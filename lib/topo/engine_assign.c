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

/* The slicing a request asks for: its annotations, or what node replacement
 * puts in their place (whole slices of a layer that divides the missing
 * pods, no inner layers). */
typedef struct slicing {
    const char *level; /* NULL: none */
    int32_t size;
    size_t nlayers;
} slicing;

static slicing slicing_of(const eng_request *r)
{
    slicing s = {r->ps->slice_required, r->ps->slice_size, r->ps->nlayers};
    if (r->override_slices) {
        s.level = r->slice_level_override;
        s.size = r->slice_size_override;
        s.nlayers = 0;
    }
    return s;
}

/* Resolve the request, resources: the vectors phase 1 reads and whether
 * nodes need filtering. Only running out of memory fails here. */
static int resolve_resources(eng_ctx *ctx, const eng_request *workers, const eng_request *leader,
                             const char *required_domain, run_state *rs)
{
    const topo_podset_spec *ps = workers->ps;
    int rc;
    rs->ps = ps;
    rs->required_domain = required_domain;
    rs->p.count = workers->count;
    if ((rc = eng_req_vec(ctx, ps, &rs->req)) != 0)
        return rc;
    if (leader != NULL) {
        if ((rc = eng_req_vec(ctx, leader->ps, &rs->leader_req)) != 0)
            return rc;
        rs->has_leader = 1;
        rs->p.leader_count = 1;
    }
    if ((rc = eng_union_existing(ctx, &rs->req, rs->has_leader ? &rs->leader_req : NULL,
                                 &rs->need)) != 0)
        return rc;
    /* Nodes need filtering when they have taints or the PodSet selects. */
    rs->filter_nodes = eng_filters_nodes(ctx, ps);
    return 0;
}

/* Resolve the request, levels: the slice size, the requested and the slice
 * level, required or unconstrained. Kueue's message when they make no sense
 * on this topology, NULL when they do. */
static const char *resolve_levels(eng_ctx *ctx, const topo_podset_spec *ps, const slicing *sl,
                                  eng_params *p)
{
    const topo_snapshot *snap = ctx->snap;
    int has_req = eng_has_request(ps);
    /* getSliceSizeWithSinglePodAsDefault */
    int32_t slice_size = 1;
    if (has_req) {
        if (sl->nlayers > 0) {
            slice_size = ps->layers[0].size;
        } else if (sl->level != NULL) {
            if (sl->size <= 0)
                return "slice topology requested, but slice size not provided";
            slice_size = sl->size;
        }
    }
    if (slice_size <= 0)
        return eng_fmt(ctx, "invalid slice size %d", slice_size);
    p->slice_size = slice_size;
    int slice_only = has_req && !ps->required && !ps->preferred &&
                     (sl->level != NULL || sl->nlayers > 0);
    p->required = ps->required != NULL;
    p->unconstrained = (has_req && ps->unconstrained) || ps->implied || slice_only;

    const char *key = NULL;
    if (ps->required)
        key = ps->required;
    else if (ps->preferred)
        key = ps->preferred;
    else if (slice_only)
        key = snap->levels[0];
    else if (ps->unconstrained || ps->implied)
        key = snap->levels[snap->nlevels - 1];
    if (key == NULL)
        return "topology level not specified";
    int requested = topo_snapshot_level_index(snap, key);
    if (requested < 0)
        return eng_fmt(ctx, "no requested topology level: %s", key);
    p->requested_level = requested;
    const char *slice_key = sl->level ? sl->level
                            : sl->nlayers > 0 ? ps->layers[0].level
                                              : snap->levels[snap->nlevels - 1];
    int slice_level = topo_snapshot_level_index(snap, slice_key);
    if (slice_level < 0)
        return eng_fmt(ctx, "no requested topology level for slices: %s", slice_key);
    p->slice_level = slice_level;
    if (requested > slice_level)
        return eng_fmt(ctx, "podset slice topology %s is above the podset topology %s", slice_key,
                       key);
    return NULL;
}

/* Resolve the request, inner slice layers (buildSliceSizeAtLevel): the
 * size of the slices inside the outer ones, per level (0: none), which
 * phase 1 and the descent honour. Each layer must sit below and divide the
 * one above; *reason says which does not. */
static int resolve_layers(eng_ctx *ctx, const topo_podset_spec *ps, const slicing *sl,
                          run_state *rs, const char **reason)
{
    const topo_snapshot *snap = ctx->snap;
    int32_t *ssal = topo_pool_calloc(ctx->pool, snap->nlevels + 1, sizeof(int32_t));
    if (ssal == NULL)
        return TOPO_ENOMEM;
    int have_inner = 0;
    if (ctx->gates->TASMultiLayerTopology && eng_has_request(ps) && sl->nlayers > 1) {
        int32_t prev_size = rs->p.slice_size;
        int prev_level = rs->p.slice_level;
        for (size_t i = 1; i < sl->nlayers; i++) {
            const topo_slice_layer *layer = &ps->layers[i];
            int inner = topo_snapshot_level_index(snap, layer->level);
            if (inner < 0) {
                *reason = eng_fmt(ctx, "no requested topology level for additional slice layer: %s",
                                  layer->level);
                return 0;
            }
            if (inner <= prev_level) {
                *reason = eng_fmt(ctx, "additional slice layer topology %s must be at a lower level than %s",
                                  layer->level, snap->levels[prev_level]);
                return 0;
            }
            if (layer->size <= 0 || prev_size % layer->size != 0) {
                *reason = eng_fmt(ctx, "additional slice layer size %d must evenly divide parent layer size %d",
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
    rs->p.slice_size_at_level = ssal;
    rs->multilayer = have_inner;
    return 0;
}

/* Resolve the request: everything the later phases read, checked against
 * this topology first, so that they need not check. 0 with *reason set when
 * the PodSet cannot be placed here at all. */
static int resolve_request(eng_ctx *ctx, const eng_request *workers, const eng_request *leader,
                           const char *required_domain, run_state *rs, const char **reason)
{
    const topo_podset_spec *ps = workers->ps;
    slicing sl = slicing_of(workers);
    int rc;
    if ((rc = resolve_resources(ctx, workers, leader, required_domain, rs)) != 0)
        return rc;
    if ((*reason = resolve_levels(ctx, ps, &sl, &rs->p)) != NULL)
        return 0;
    if ((rc = resolve_layers(ctx, ps, &sl, rs, reason)) != 0 || *reason != NULL)
        return rc;
    if (ctx->snap->hostname_lowest) {
        char why[512];
        if (eng_validate_selectors(ps, why, sizeof(why)) != 0)
            *reason = eng_fmt(ctx, "%s", why);
    }
    return 0;
}

/* The domains chosen so far, all on one level. */
typedef struct chosen {
    wdom **doms;
    size_t n;
    int level;
} chosen;

/* Choose the fit: balanced placement first when its gate is on and the
 * request is preferred; it works on copies of the counts, so when it finds
 * nothing the standard search (findLevelWithFitDomains, from the requested
 * level up) still sees them untouched. */
static int choose_fit(eng_ctx *ctx, run_state *rs, chosen *ch, int *balanced,
                      const char **reason)
{
    *balanced = 0;
    if (ctx->gates->TASBalancedPlacement && !rs->p.required && !rs->p.unconstrained) {
        int32_t threshold = 0;
        size_t nbest = 0;
        wdom **best = eng_balanced_best(ctx, &rs->p, &nbest, &threshold);
        if (threshold > 0 && best != NULL) {
            wdom **placed = NULL;
            size_t nplaced = 0;
            int lvl = 0;
            if (eng_balanced_apply(ctx, &rs->p, threshold, best, nbest, &placed, &nplaced,
                                   &lvl) == 0) {
                *balanced = 1;
                ch->doms = placed;
                ch->n = nplaced;
                ch->level = lvl;
                return 0;
            }
        }
    }
    return eng_find_level(ctx, rs, rs->p.requested_level, &ch->doms, &ch->n, &ch->level, reason);
}

/* One level down below the slice level: each chosen domain's pods go to its
 * own children, whole inner slices of a multi-layer request (else single
 * pods), so a slice never leaves the domain it was given. */
static int spread_to_children(eng_ctx *ctx, const run_state *rs, chosen *ch)
{
    const eng_params *p = &rs->p;
    int32_t ss_level = p->slice_size;
    if (ch->level >= p->slice_level)
        ss_level = p->slice_size_at_level[ch->level + 1] > 0
                       ? p->slice_size_at_level[ch->level + 1]
                       : 1;
    size_t total = 0;
    for (size_t i = 0; i < ch->n; i++)
        total += (size_t)eng_nkids(ctx, ch->doms[i]);
    wdom **next = topo_pool_alloc(ctx->pool, (total ? total : 1) * sizeof(*next));
    if (next == NULL)
        return TOPO_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < ch->n; i++) {
        wdom *d = ch->doms[i];
        size_t nkids = (size_t)eng_nkids(ctx, d);
        wdom **kids = eng_kids(ctx, d);
        wdom **sorted = kids ? eng_sorted(ctx, kids, nkids, p->unconstrained, 0) : NULL;
        if (sorted == NULL)
            return TOPO_ENOMEM;
        if (ss_level > 1) {
            for (size_t c = 0; c < nkids; c++) {
                sorted[c]->slice_state = sorted[c]->state / ss_level;
                sorted[c]->slice_state_wl = sorted[c]->state_wl / ss_level;
            }
        }
        size_t nadd = 0;
        wdom **add = eng_update_counts(ctx, sorted, nkids, d->state, d->leader_state, ss_level,
                                       p->unconstrained, ss_level > 1, &nadd);
        if (add == NULL)
            return TOPO_ENOMEM;
        for (size_t j = 0; j < nadd; j++)
            next[k++] = add[j];
    }
    ch->doms = next;
    ch->n = k;
    return 0;
}

/* Descend: trim the fit to exactly the request, then go down to the leaves.
 * Above the slice level all the chosen domains' children compete in one
 * sort, as Kueue does (balanced placement has spread the slices itself and
 * skips this); below it each domain keeps its own pods. */
static int descend(eng_ctx *ctx, const run_state *rs, int balanced, chosen *ch)
{
    const eng_params *p = &rs->p;
    int unc = p->unconstrained;
    int last = (int)ctx->snap->nlevels - 1;
    int rc;
    ch->doms = eng_update_counts(ctx, ch->doms, ch->n, p->count, p->leader_count, p->slice_size,
                                 unc, 1, &ch->n);
    if (ch->doms == NULL)
        return TOPO_ENOMEM;
    for (; ch->level < (last < p->slice_level ? last : p->slice_level) && !balanced; ch->level++) {
        size_t nlow = 0;
        wdom **low = eng_lower(ctx, ch->doms, ch->n, &nlow);
        if (low == NULL)
            return TOPO_ENOMEM;
        wdom **sorted = eng_sorted(ctx, low, nlow, unc, 0);
        if (sorted == NULL)
            return TOPO_ENOMEM;
        ch->doms = eng_update_counts(ctx, sorted, nlow, p->count, p->leader_count, p->slice_size,
                                     unc, 1, &ch->n);
        if (ch->doms == NULL)
            return TOPO_ENOMEM;
    }
    for (; ch->level < last; ch->level++)
        if ((rc = spread_to_children(ctx, rs, ch)) != 0)
            return rc;
    return 0;
}

/* Split the leader: the leaves' leader_state is the leader's assignment,
 * their state the workers' (one leaf may hold both); the workers' become
 * the chosen domains. */
static int split_leader(eng_ctx *ctx, chosen *ch, eng_assign **out_leader)
{
    wdom **lead = topo_pool_alloc(ctx->pool, (ch->n ? ch->n : 1) * sizeof(*lead));
    wdom **work = topo_pool_alloc(ctx->pool, (ch->n ? ch->n : 1) * sizeof(*work));
    if (lead == NULL || work == NULL)
        return TOPO_ENOMEM;
    size_t nl = 0, nw = 0;
    for (size_t i = 0; i < ch->n; i++) {
        if (ch->doms[i]->leader_state > 0)
            lead[nl++] = ch->doms[i];
        if (ch->doms[i]->state > 0)
            work[nw++] = ch->doms[i];
    }
    if (out_leader && (*out_leader = build_assignment(ctx, lead, nl, 1)) == NULL)
        return TOPO_ENOMEM;
    ch->doms = work;
    ch->n = nw;
    return 0;
}

int eng_find_assignment(eng_ctx *ctx, const eng_request *workers, const eng_request *leader,
                        const char *required_domain, eng_assign **out_workers,
                        eng_assign **out_leader, const char **out_reason)
{
    run_state rs;
    chosen ch = {NULL, 0, 0};
    int balanced = 0;
    int rc;
    memset(&rs, 0, sizeof(rs));
    *out_workers = NULL;
    if (out_leader)
        *out_leader = NULL;
    *out_reason = NULL;
    if ((rc = resolve_request(ctx, workers, leader, required_domain, &rs, out_reason)) != 0 ||
        *out_reason != NULL)
        return rc;
    if ((rc = eng_fill_counts(ctx, &rs)) != 0)
        return rc;
    if ((rc = choose_fit(ctx, &rs, &ch, &balanced, out_reason)) != 0 || *out_reason != NULL)
        return rc;
    if ((rc = descend(ctx, &rs, balanced, &ch)) != 0)
        return rc;
    if (leader != NULL && (rc = split_leader(ctx, &ch, out_leader)) != 0)
        return rc;
    if ((*out_workers = build_assignment(ctx, ch.doms, ch.n, 0)) == NULL)
        return TOPO_ENOMEM;
    return 0;
}
