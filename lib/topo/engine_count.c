/* Phase 1 of Kueue's TAS placement (fillInCounts): a PodSet's requests as
 * resource vectors, how many pods (and leaders) each leaf can take, and the
 * roll-up of those counts to every domain; with the walks over the working
 * tree that the later phases and balanced placement share. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"
#include "topo/quantity.h"

#define POD_RESOURCE "pods"

/* The PodSet's per-pod requests plus one "pods". */
int eng_req_vec(eng_ctx *ctx, const topo_podset_spec *ps, req_vec *out)
{
    out->items = topo_pool_calloc(ctx->pool, ps->nrequests + 1, sizeof(req_item));
    if (out->items == NULL)
        return TOPO_ENOMEM;
    out->n = 0;
    int have_pods = 0;
    for (size_t i = 0; i < ps->nrequests; i++) {
        req_item *it = NULL;
        for (size_t j = 0; j < out->n; j++)
            if (strcmp(out->items[j].name, ps->requests[i].name) == 0)
                it = &out->items[j];
        if (it == NULL) {
            it = &out->items[out->n++];
            it->name = ps->requests[i].name;
            it->idx = snap_resource_index(ctx->snap, it->name);
            it->amount = 0;
        }
        it->amount = topo_quantity_add(it->amount, ps->requests[i].amount);
        if (strcmp(it->name, POD_RESOURCE) == 0)
            have_pods = 1;
    }
    for (size_t j = 0; j < out->n; j++)
        if (strcmp(out->items[j].name, POD_RESOURCE) == 0)
            out->items[j].amount = topo_quantity_add(out->items[j].amount, 1);
    if (!have_pods) {
        req_item *it = &out->items[out->n++];
        it->name = POD_RESOURCE;
        it->idx = snap_resource_index(ctx->snap, POD_RESOURCE);
        it->amount = 1;
    }
    /* Sorted by name, so the first minimum is Kueue's alphabetical
     * tie-break for the limiting resource. */
    for (size_t i = 1; i < out->n; i++) {
        req_item x = out->items[i];
        size_t j = i;
        while (j > 0 && strcmp(out->items[j - 1].name, x.name) > 0) {
            out->items[j] = out->items[j - 1];
            j--;
        }
        out->items[j] = x;
    }
    return 0;
}

/* The snapshot resources named by a and b, each once. */
int eng_union_existing(eng_ctx *ctx, const req_vec *a, const req_vec *b, req_vec *out)
{
    size_t cap = a->n + (b ? b->n : 0);
    out->items = topo_pool_calloc(ctx->pool, cap ? cap : 1, sizeof(req_item));
    out->n = 0;
    if (out->items == NULL)
        return TOPO_ENOMEM;
    const req_vec *src[2] = {a, b};
    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; src[s] && i < src[s]->n; i++) {
            const req_item *it = &src[s]->items[i];
            int dup = it->idx < 0;
            for (size_t j = 0; j < out->n && !dup; j++)
                dup = out->items[j].idx == it->idx;
            if (!dup)
                out->items[out->n++] = *it;
        }
    }
    return 0;
}

static void sub_req(int64_t *cap, const req_vec *req, int64_t times)
{
    for (size_t i = 0; i < req->n; i++)
        if (req->items[i].idx >= 0)
            cap[req->items[i].idx] =
                topo_quantity_sub(cap[req->items[i].idx], topo_quantity_mul(req->items[i].amount, times));
}

void eng_add_assumed(eng_ctx *ctx, const eng_assign *a, const req_vec *req)
{
    const topo_snapshot *snap = ctx->snap;
    size_t R = snap->nresources ? snap->nresources : 1;
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->n; i++) {
        if (a->domains[i] == NULL || a->domains[i]->leaf < 0)
            continue;
        int32_t leaf = a->domains[i]->leaf;
        if (ctx->assumed == NULL) {
            ctx->assumed = topo_pool_calloc(ctx->pool, snap->nleaves ? snap->nleaves : 1,
                                            sizeof(int64_t *));
            if (ctx->assumed == NULL)
                return;
        }
        if (ctx->assumed[leaf] == NULL) {
            ctx->assumed[leaf] = topo_pool_calloc(ctx->pool, R, sizeof(int64_t));
            if (ctx->assumed[leaf] == NULL)
                return;
        }
        /* Kueue's assumed usage: count × requests plus count pods. */
        sub_req(ctx->assumed[leaf], req, -(int64_t)a->counts[i]);
    }
}

/* ---- the counts ---- */

/* fillInCountsHelper, split in three: a parent's counts are a fold over its
 * children (child_fold, then fold_finish); the main tree recurses over the
 * snapshot's child indices, copies over their own child pointers. */
typedef struct fold {
    int32_t children_cap, slice_cap, leader, min_diff, min_slice_diff;
    int has_wl;
    int64_t affinity;
} fold;

static inline void fold_init(fold *f)
{
    f->children_cap = f->slice_cap = f->leader = 0;
    f->min_diff = f->min_slice_diff = INT32_MAX;
    f->has_wl = 0;
    f->affinity = 0;
}

static inline void fold_child(fold *f, const wdom *c, int32_t inner, int leader_required)
{
    int32_t cs = c->state, csw = c->state_wl;
    if (inner > 0) {
        cs = (c->state / inner) * inner;
        csw = (c->state_wl / inner) * inner;
    }
    f->children_cap = eng_add_counts(f->children_cap, cs);
    f->slice_cap = eng_add_counts(f->slice_cap, c->slice_state);
    if (!leader_required || c->leader_state > 0) {
        f->has_wl = 1;
        if (cs - csw < f->min_diff)
            f->min_diff = cs - csw;
        if (c->slice_state - c->slice_state_wl < f->min_slice_diff)
            f->min_slice_diff = c->slice_state - c->slice_state_wl;
    }
    if (c->leader_state > f->leader)
        f->leader = c->leader_state;
    f->affinity += c->affinity;
}

static inline void fold_finish(const fold *f, wdom *d, int32_t slice_size, int at_slice_level)
{
    int32_t slice_cap = f->slice_cap, slice_wl = 0;
    d->state = f->children_cap;
    if (f->has_wl) {
        d->state_wl = f->children_cap - f->min_diff;
        slice_wl = f->slice_cap - f->min_slice_diff;
    } else {
        d->state_wl = 0;
    }
    d->leader_state = f->leader;
    d->affinity = f->affinity;
    if (at_slice_level) {
        slice_cap = d->state / slice_size;
        slice_wl = d->state_wl / slice_size;
    }
    d->slice_state = slice_cap;
    d->slice_state_wl = slice_wl;
}

static inline void leaf_slices(wdom *d, int32_t slice_size)
{
    d->slice_state = d->state / slice_size;
    d->slice_state_wl = d->state_wl / slice_size;
}

void eng_fill_helper(const eng_ctx *ctx, wdom *d, int32_t slice_size, int slice_level, int level,
                     const int32_t *slice_size_at_level, int leader_required)
{
    int32_t n = eng_nkids(ctx, d);
    if (n == 0) {
        if (level == slice_level)
            leaf_slices(d, slice_size);
        return;
    }
    fold f;
    fold_init(&f);
    int32_t inner = slice_size_at_level ? slice_size_at_level[level + 1] : 0;
    for (int32_t i = 0; i < n; i++) {
        wdom *c = eng_kid(ctx, d, i);
        eng_fill_helper(ctx, c, slice_size, slice_level, level + 1, slice_size_at_level,
                        leader_required);
        fold_child(&f, c, inner, leader_required);
    }
    fold_finish(&f, d, slice_size, level == slice_level);
}

/* The main tree, by snapshot index: no per-domain structure to look up. */
typedef struct fill_args {
    const eng_ctx *ctx;
    int32_t slice_size;
    int slice_level;
    const int32_t *slice_size_at_level;
    int leader_required;
} fill_args;

static void fill_main(const fill_args *a, int32_t di, int level)
{
    const snap_domain *domains = a->ctx->snap->domains;
    wdom *doms = a->ctx->doms;
    const snap_domain *sd = &domains[di];
    fold f;
    fold_init(&f);
    int32_t inner = a->slice_size_at_level ? a->slice_size_at_level[level + 1] : 0;
    for (int32_t i = 0; i < sd->nchildren; i++) {
        int32_t ci = sd->children[i];
        wdom *c = &doms[ci];
        if (domains[ci].nchildren > 0)
            fill_main(a, ci, level + 1);
        else if (level + 1 == a->slice_level)
            leaf_slices(c, a->slice_size);
        fold_child(&f, c, inner, a->leader_required);
    }
    fold_finish(&f, &doms[di], a->slice_size, level == a->slice_level);
}

static int belongs_to(const snap_domain *leaf, const char *required_domain)
{
    if (required_domain == NULL || required_domain[0] == '\0')
        return 1;
    /* DomainID.BelongsTo: the domain itself or a descendant of it. */
    size_t n = strlen(required_domain);
    return strncmp(leaf->joined, required_domain, n) == 0 &&
           (leaf->joined[n] == '\0' || leaf->joined[n] == ',');
}

static void fill_leaves_checked(eng_ctx *ctx, run_state *rs, int *limited_by);

/* fillInCounts, phase 1 for the leaves: how many pods (and leaders) fit. */
static int fill_leaves(eng_ctx *ctx, run_state *rs)
{
    const topo_snapshot *snap = ctx->snap;
    int *limited_by = topo_pool_calloc(ctx->pool, rs->req.n ? rs->req.n : 1, sizeof(int));
    if (limited_by == NULL)
        return TOPO_ENOMEM;
    if (!(snap->hostname_lowest && rs->filter_nodes) && rs->required_domain == NULL &&
        ctx->assumed == NULL && !rs->has_leader) {
        /* The common request: no node filters, no replacement domain, no
         * earlier PodSets, no leader. The same counts, without the checks. */
        rs->stats.total_nodes += (int)snap->nleaves;
        for (size_t l = 0; l < snap->nleaves; l++) {
            const snap_leaf *leaf = &snap->leaves[l];
            wdom *d = &ctx->doms[leaf->domain];
            int limiting = -1;
            int32_t st = eng_count_in(&rs->req, leaf->room, &limiting);
            d->state = d->state_wl = st;
            d->slice_state = d->slice_state_wl = d->leader_state = 0;
            d->affinity = 0;
            if (st == 0 && limiting >= 0)
                limited_by[limiting]++;
        }
    } else {
        fill_leaves_checked(ctx, rs, limited_by);
    }
    for (size_t i = 0; i < rs->req.n; i++)
        if (limited_by[i] > 0)
            eng_stats_add(ctx->pool, &rs->stats.resources, &rs->stats.nresources,
                      rs->req.items[i].name, limited_by[i]);
    return 0;
}

/* fillLeafCounts with every check: node filters of hostname topologies,
 * the replacement domain, assumed usage of earlier PodSets, the leader. */
static void fill_leaves_checked(eng_ctx *ctx, run_state *rs, int *limited_by)
{
    const topo_snapshot *snap = ctx->snap;
    int64_t *remaining = ctx->scratch;
    for (size_t l = 0; l < snap->nleaves; l++) {
        const snap_leaf *leaf = &snap->leaves[l];
        wdom *d = &ctx->doms[leaf->domain];
        d->state = d->state_wl = d->slice_state = d->slice_state_wl = d->leader_state = 0;
        d->affinity = 0;
        rs->stats.total_nodes++;
        if (snap->hostname_lowest && rs->filter_nodes) {
            const topo_taint *taint = NULL;
            int64_t score = 0;
            excl_kind k = eng_match_node(&snap->nodes[leaf->node], rs->ps, ctx->gates, &taint,
                                         &score);
            if (k == EXCL_TAINT) {
                char buf[1024];
                eng_taint_text(taint, buf, sizeof(buf));
                eng_stats_add(ctx->pool, &rs->stats.taints, &rs->stats.ntaints, buf, 1);
                continue;
            }
            if (k == EXCL_SELECTOR) {
                rs->stats.node_selector++;
                continue;
            }
            if (k == EXCL_AFFINITY) {
                rs->stats.affinity++;
                continue;
            }
            d->affinity += score;
        }
        if (rs->required_domain != NULL &&
            !belongs_to(&snap->domains[leaf->domain], rs->required_domain)) {
            rs->stats.topology_domain++;
            continue;
        }
        const int64_t *assumed = ctx->assumed ? ctx->assumed[l] : NULL;
        const int64_t *room = leaf->room;
        if (assumed != NULL || rs->has_leader) {
            /* Only the requested resources matter for the counts. */
            for (size_t i = 0; i < rs->need.n; i++) {
                int32_t r = rs->need.items[i].idx;
                remaining[r] = topo_quantity_sub(room[r], assumed ? assumed[r] : 0);
            }
            room = remaining;
        }
        int limiting = -1;
        d->state = eng_count_in(&rs->req, room, &limiting);
        if (d->state == 0 && limiting >= 0)
            limited_by[limiting]++;
        d->leader_state = 0;
        d->state_wl = d->state;
        if (rs->has_leader) {
            if (eng_count_in(&rs->leader_req, remaining, NULL) > 0) {
                d->leader_state = 1;
                sub_req(remaining, &rs->leader_req, 1);
            }
            d->state_wl = eng_count_in(&rs->req, remaining, NULL);
        }
    }
}

/* phase 1 after the leaves: slices at the slice level and the roll-up. */
static int roll_up(eng_ctx *ctx, run_state *rs)
{
    const topo_snapshot *snap = ctx->snap;
    /* A request placed on the leaves themselves that can never move up a
     * level (required or unconstrained, no slices) reads no inner counts:
     * skip the roll-up. */
    int last = (int)snap->nlevels - 1;
    if (rs->p.requested_level == last && rs->p.slice_level == last &&
        (rs->p.required || rs->p.unconstrained) && !ctx->gates->TASBalancedPlacement) {
        for (size_t l = 0; l < snap->nleaves; l++) {
            wdom *d = &ctx->doms[snap->leaves[l].domain];
            d->slice_state = d->state / rs->p.slice_size;
            d->slice_state_wl = d->state_wl / rs->p.slice_size;
        }
        return 0;
    }
    /* fillInCountsHelper over the main tree, depth first: a subtree's
     * counters stay in cache while it is folded (level by level runs fewer
     * instructions but was slower on 128k domains). */
    fill_args fa = {ctx, rs->p.slice_size, rs->p.slice_level, rs->p.slice_size_at_level,
                    rs->p.leader_count > 0};
    for (size_t i = 0; i < snap->nroots; i++)
        if (snap->domains[snap->roots[i]].nchildren > 0)
            fill_main(&fa, snap->roots[i], 0);
        else if (rs->p.slice_level == 0)
            leaf_slices(&ctx->doms[snap->roots[i]], rs->p.slice_size);
    return 0;
}

wdom **eng_lower(eng_ctx *ctx, wdom *const *doms, size_t n, size_t *out_n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += (size_t)eng_nkids(ctx, doms[i]);
    wdom **out = topo_pool_alloc(ctx->pool, (total ? total : 1) * sizeof(*out));
    *out_n = 0;
    if (out == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (int32_t c = 0; c < eng_nkids(ctx, doms[i]); c++)
            out[k++] = eng_kid(ctx, doms[i], c);
    *out_n = k;
    return out;
}

wdom **eng_kids(eng_ctx *ctx, const wdom *d)
{
    int32_t n = eng_nkids(ctx, d);
    wdom **out = topo_pool_alloc(ctx->pool, (n ? (size_t)n : 1) * sizeof(*out));
    if (out == NULL)
        return NULL;
    for (int32_t i = 0; i < n; i++)
        out[i] = eng_kid(ctx, d, i);
    return out;
}

/* A new shape's node filters (hostname topologies): which leaves they
 * exclude and how the message counts them, as fill_leaves_checked does. */
static int filter_leaves(eng_ctx *ctx, const run_state *rs, uint8_t **out_excluded,
                         excl_stats *ex)
{
    const topo_snapshot *snap = ctx->snap;
    uint8_t *excluded = topo_pool_calloc(ctx->pool, snap->nleaves ? snap->nleaves : 1, 1);
    if (excluded == NULL)
        return TOPO_ENOMEM;
    memset(ex, 0, sizeof(*ex));
    for (size_t l = 0; l < snap->nleaves; l++) {
        const topo_taint *taint = NULL;
        int64_t score = 0;
        excl_kind k = eng_match_node(&snap->nodes[snap->leaves[l].node], rs->ps, ctx->gates,
                                     &taint, &score);
        excluded[l] = k != EXCL_NONE;
        if (k == EXCL_TAINT) {
            char buf[1024];
            eng_taint_text(taint, buf, sizeof(buf));
            eng_stats_add(ctx->pool, &ex->taints, &ex->ntaints, buf, 1);
        } else if (k == EXCL_SELECTOR) {
            ex->node_selector++;
        } else if (k == EXCL_AFFINITY) {
            ex->affinity++;
        }
    }
    *out_excluded = excluded;
    return 0;
}

agg_shape *eng_shape_acquire(eng_ctx *ctx, const run_state *rs)
{
    const topo_snapshot *snap = ctx->snap;
    int filtered = snap->hostname_lowest && rs->filter_nodes;
    const char *sig = filtered ? eng_filter_sig(ctx->pool, rs->ps) : NULL;
    if (filtered && sig == NULL)
        return NULL;
    agg_shape *s = snap_agg_acquire(snap, &rs->req, &rs->p, sig);
    if (s == NULL) {
        excl_stats ex;
        uint8_t *excluded = NULL;
        memset(&ex, 0, sizeof(ex));
        if (filtered && filter_leaves(ctx, rs, &excluded, &ex) != 0)
            return NULL;
        agg_filter f = {sig, excluded, &ex};
        s = snap_agg_add(snap, &rs->req, &rs->p, &f);
    }
    return s;
}

/* Phase 1 from the snapshot's aggregates, when the counts depend on the
 * request's shape only (its resources, slicing and node filters; no
 * leader, replacement domain, earlier PodSets or affinity scores): the
 * counts are the shape's, copied into the call's tree as domains are
 * touched, and so are the exclusions. 0 when done, 1 when phase 1 must
 * count. */
static int fill_from_aggregates(eng_ctx *ctx, run_state *rs)
{
    const topo_snapshot *snap = ctx->snap;
    if (ctx->held != NULL)
        snap_agg_release(snap, ctx->held);
    ctx->held = NULL;
    ctx->base = NULL;
    int filtered = snap->hostname_lowest && rs->filter_nodes;
    if ((filtered && ctx->gates->TASRespectNodeAffinityPreferred && rs->ps->npreferred_terms > 0) ||
        rs->required_domain != NULL || ctx->assumed != NULL || rs->has_leader ||
        ctx->touched == NULL)
        return 1;
    agg_shape *s = eng_shape_acquire(ctx, rs);
    if (s == NULL)
        return 1;
    ctx->held = s;
    ctx->base = snap_agg_counts(s);
    memset(ctx->touched, 0, ((snap->ndomains + 63) / 64) * sizeof(uint64_t));
    rs->stats.total_nodes += (int)snap->nleaves;
    const excl_stats *ex = snap_agg_excluded(s);
    rs->stats.node_selector += ex->node_selector;
    rs->stats.affinity += ex->affinity;
    for (size_t i = 0; i < ex->ntaints; i++)
        eng_stats_add(ctx->pool, &rs->stats.taints, &rs->stats.ntaints, ex->taints[i].name,
                      ex->taints[i].count);
    const int32_t *limited = snap_agg_limited(s);
    for (size_t i = 0; i < rs->req.n; i++)
        if (limited[i] > 0)
            eng_stats_add(ctx->pool, &rs->stats.resources, &rs->stats.nresources,
                          rs->req.items[i].name, limited[i]);
    return 0;
}

int eng_fill_counts(eng_ctx *ctx, run_state *rs)
{
    int rc;
    if (fill_from_aggregates(ctx, rs) == 0)
        return 0;
    if ((rc = fill_leaves(ctx, rs)) != 0)
        return rc;
    return roll_up(ctx, rs);
}
