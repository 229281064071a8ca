/* Working state of one engine call. The algorithm follows Kueue's
 * TASFlavorSnapshot.findTopologyAssignment (pkg/cache/scheduler), so names
 * mirror it: state = pods that fit, slice_state = whole slices that fit,
 * *_wl = the same after reserving one leader pod, leader_state = leaders. */
#ifndef TOPO_ENGINE_INTERNAL_H
#define TOPO_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot_internal.h"
#include "topo/engine.h"

/* Working counters of one domain. The main tree is an array parallel to the
 * snapshot's domains and has no structure of its own (setting it up would
 * cost a pass over every domain per call): its structure is the
 * snapshot's. Only the copies balanced placement makes carry theirs, in
 * `clone`, which is never read for the main tree. */
typedef struct wclone {
    const snap_domain *s;
    struct wdom **children;
    int32_t nchildren;
} wclone;

typedef struct wdom {
    int32_t state;
    int32_t slice_state;
    int32_t state_wl;
    int32_t slice_state_wl;
    int32_t leader_state;
    int64_t affinity;
    const wclone *clone;
} wdom;

/* One requested resource; idx is -1 when no node exposes it. */
typedef struct req_item {
    const char *name;
    int32_t idx;
    int64_t amount;
} req_item;

typedef struct req_vec {
    req_item *items;
    size_t n;
} req_vec;

typedef struct name_count {
    const char *name;
    int count;
} name_count;

typedef struct excl_stats {
    int total_nodes;
    int node_selector;
    int affinity;
    int topology_domain;
    name_count *taints;
    size_t ntaints;
    name_count *resources;
    size_t nresources;
} excl_stats;

/* A PodSet as the algorithm sees it (TASPodSetRequests). */
typedef struct eng_request {
    const topo_podset_spec *ps;
    int32_t count;
    /* Overrides for node replacement of sliced requests. */
    int override_slices;
    const char *slice_level_override; /* NULL: no slicing */
    int32_t slice_size_override;
} eng_request;

/* An assignment under construction: leaf-level domains with counts. */
typedef struct eng_assign {
    const char *const *levels;
    size_t nlevels;
    const char *const **values;  /* per domain: nlevels values */
    const snap_domain **domains; /* the snapshot domain, NULL when stale */
    int32_t *counts;
    size_t n;
} eng_assign;

/* The resolved request of one PodSet: what the phases read. */
typedef struct eng_params {
    int32_t count;
    int32_t slice_size;
    int32_t leader_count;
    int requested_level;
    int slice_level;
    int required;
    int unconstrained;
    const int32_t *slice_size_at_level; /* per level, 0 = none */
} eng_params;

/* One eng_find_assignment call: the resolved request, the resource vectors
 * it needs, and the exclusions phase 1 counts for the messages. */
typedef struct run_state {
    eng_params p;
    excl_stats stats;
    const topo_podset_spec *ps;
    req_vec req;
    req_vec leader_req;
    int has_leader;
    req_vec need; /* the resources of req and leader_req that exist, once each */
    int filter_nodes; /* the PodSet has tolerations-relevant or selector fields */
    const char *required_domain;
    int multilayer;
} run_state;

/* The counts of one domain for one request shape, as phase 1 leaves them on
 * the fast path (no node filters, leader, replacement domain or earlier
 * PodSets): there the with-leader counts equal these and the leader and
 * affinity counts are 0, so two numbers say everything. */
typedef struct agg_count {
    int32_t state;
    int32_t slice;
} agg_count;

/* One request shape's counts over the whole snapshot (snapshot_agg.c). */
typedef struct agg_shape agg_shape;

typedef struct eng_ctx {
    const topo_snapshot *snap;
    const topo_gates *gates;
    topo_pool *pool;
    wdom *doms;        /* one per snapshot domain */
    int64_t **assumed; /* per leaf, lazily allocated */
    int64_t *scratch;  /* R-sized */
    /* Phase 1 from the snapshot's aggregates: doms[i] is copied from
     * base[i] when first touched (bit i of touched), so a call reads and
     * writes only the domains it visits. NULL base: doms is complete. */
    const agg_count *base;
    uint64_t *touched;
    agg_shape *held; /* the shape base belongs to, released after the call */
} eng_ctx;

/* The working counters of main-tree domain i: every read of the main tree
 * goes through here (or through a pointer it returned). */
static inline wdom *eng_dom(const eng_ctx *ctx, int32_t i)
{
    wdom *d = &ctx->doms[i];
    if (ctx->base != NULL) {
        uint64_t bit = UINT64_C(1) << (i & 63);
        uint64_t *word = &ctx->touched[i >> 6];
        if (!(*word & bit)) {
            *word |= bit;
            d->state = d->state_wl = ctx->base[i].state;
            d->slice_state = d->slice_state_wl = ctx->base[i].slice;
            d->leader_state = 0;
            d->affinity = 0;
            d->clone = NULL;
        }
    }
    return d;
}

static inline int eng_is_main(const eng_ctx *ctx, const wdom *d)
{
    uintptr_t p = (uintptr_t)d, base = (uintptr_t)ctx->doms;
    return p >= base && p < base + ctx->snap->ndomains * sizeof(wdom);
}

static inline const snap_domain *eng_s(const eng_ctx *ctx, const wdom *d)
{
    return eng_is_main(ctx, d) ? &ctx->snap->domains[d - ctx->doms] : d->clone->s;
}

static inline int32_t eng_nkids(const eng_ctx *ctx, const wdom *d)
{
    return eng_is_main(ctx, d) ? ctx->snap->domains[d - ctx->doms].nchildren
                               : d->clone->nchildren;
}

static inline wdom *eng_kid(const eng_ctx *ctx, const wdom *d, int32_t i)
{
    return eng_is_main(ctx, d) ? eng_dom(ctx, ctx->snap->domains[d - ctx->doms].children[i])
                               : d->clone->children[i];
}

/* The LeastFreeCapacity profile (else BestFit): the order of the sorts and
 * whether a best fit is looked for, so both the sort and the fit read it. */
static inline int eng_use_lfc(const eng_ctx *ctx, int unconstrained)
{
    const topo_gates *g = ctx->gates;
    if (g->TASProfileLeastFreeCapacity)
        return 1;
    if (g->TASProfileBestFit)
        return 0;
    return unconstrained && g->TASProfileMixed;
}

/* Whether the PodSet's node filters must be evaluated: nodes have taints
 * or the PodSet selects (only hostname topologies apply them). */
static inline int eng_filters_nodes(const eng_ctx *ctx, const topo_podset_spec *ps)
{
    return ctx->snap->has_taints || ps->nnode_selector > 0 || ps->nrequired_terms > 0 ||
           (ctx->gates->TASRespectNodeAffinityPreferred && ps->npreferred_terms > 0);
}

/* The PodSet has a topology annotation of any kind. */
static inline int eng_has_request(const topo_podset_spec *ps)
{
    return ps->required || ps->preferred || ps->unconstrained || ps->slice_required ||
           ps->nlayers > 0;
}

/* Pod and slice counts are never negative and each leaf's is at most
 * INT32_MAX (count_in): sums saturate there rather than wrap (a pool of
 * nodes that each take "unlimited" pods). */
static inline int32_t eng_add_counts(int32_t a, int32_t b)
{
    int64_t r = (int64_t)a + b;
    return r > INT32_MAX ? INT32_MAX : (int32_t)r;
}

/* CountInWithLimitingResource: how many times req fits in cap, and the index
 * of the limiting item (items are sorted by name, so the first minimum wins
 * ties alphabetically as in Kueue). */
static inline int32_t eng_count_in(const req_vec *req, const int64_t *cap, int *limiting)
{
    int32_t result = 0;
    int lim = -1;
    for (size_t i = 0; i < req->n; i++) {
        const req_item *it = &req->items[i];
        int32_t c;
        if (it->amount <= 0) {
            /* Kueue: a resource requested with 0 never limits (nor does a
             * negative amount, which decoding refuses anyway). */
            c = INT32_MAX;
        } else {
            int64_t avail = it->idx >= 0 ? cap[it->idx] : 0;
            int64_t q;
            /* Division is the hot spot over thousands of leaves: skip it for
             * the common full, unit and small cases. */
            if (avail < it->amount)
                q = 0;
            else if (it->amount == 1)
                q = avail;
            else if (avail <= UINT32_MAX && it->amount <= UINT32_MAX)
                q = (uint32_t)avail / (uint32_t)it->amount;
            else
                q = avail / it->amount;
            if (q > INT32_MAX)
                q = INT32_MAX;
            c = (int32_t)q;
        }
        if (lim < 0 || c < result) {
            result = c;
            lim = (int)i;
        }
    }
    if (limiting)
        *limiting = lim;
    return result;
}

/* snapshot_agg.c: the request shapes' counts kept in the snapshot. The
 * shape of (req, slice size and level, inner slice sizes), computed over
 * the whole snapshot when new; NULL when out of memory. Held until
 * released: the counts stay as they are meanwhile (usage changes wait for
 * readers, see live.h). */
agg_shape *snap_agg_acquire(const topo_snapshot *snap, const req_vec *req, const eng_params *p,
                            const char *filter_sig);
/* A new shape: filter_sig is the request's node filters as eng_filter_sig
 * writes them (NULL: none apply), excluded says per leaf whether they
 * exclude it (NULL: none), stats how the message counts the exclusions.
 * Counted over the whole snapshot and kept (or the one another call kept
 * meanwhile), held; NULL when out of memory. */
typedef struct agg_filter {
    const char *sig;
    const uint8_t *excluded;
    const excl_stats *stats;
} agg_filter;
agg_shape *snap_agg_add(const topo_snapshot *snap, const req_vec *req, const eng_params *p,
                        const agg_filter *f);
void snap_agg_release(const topo_snapshot *snap, agg_shape *s);
/* The shape's exclusions by node filters (no total_nodes, no resources). */
const excl_stats *snap_agg_excluded(const agg_shape *s);
const agg_count *snap_agg_counts(const agg_shape *s);
/* Distinct (slices, pods) counts the index keeps per level and shape. */
#define AGG_MAX_KEYS 64

/* A level's domains that take something, grouped by their counts: bit i
 * of bits is the domain level_domains[level][i]. */
typedef struct agg_key {
    int32_t slice;
    int32_t state;
    int32_t count; /* domains, 0 for a key not in use */
    uint64_t *bits;
} agg_key;
/* The shape's keys at a level (*out, the count returned), or (size_t)-1
 * when they are too many to be kept. */
size_t snap_agg_keys(const agg_shape *s, int level, const agg_key **out);
/* Per request item: the leaves where 0 pods fit, limited by that item. */
const int32_t *snap_agg_limited(const agg_shape *s);

/* engine_assign.c: one PodSet (and its leader), every phase. */
int eng_find_assignment(eng_ctx *ctx, const eng_request *workers, const eng_request *leader,
                        const char *required_domain, eng_assign **out_workers,
                        eng_assign **out_leader, const char **out_reason);

/* engine_count.c: phase 1, the counts. */
/* The snapshot's aggregate of rs's shape (its req, p and, on hostname
 * topologies when rs->filter_nodes, the node filters of rs->ps), looked up
 * or counted and kept; held until snap_agg_release. NULL when out of
 * memory. Does not check that the counts depend on the shape only. */
agg_shape *eng_shape_acquire(eng_ctx *ctx, const run_state *rs);
int eng_req_vec(eng_ctx *ctx, const topo_podset_spec *ps, req_vec *out);
int eng_union_existing(eng_ctx *ctx, const req_vec *a, const req_vec *b, req_vec *out);
void eng_add_assumed(eng_ctx *ctx, const eng_assign *a, const req_vec *req);
/* fillInCounts: every leaf, then every domain of the main tree. */
int eng_fill_counts(eng_ctx *ctx, run_state *rs);
void eng_fill_helper(const eng_ctx *ctx, wdom *d, int32_t slice_size, int slice_level, int level,
                     const int32_t *slice_size_at_level, int leader_required);
wdom **eng_lower(eng_ctx *ctx, wdom *const *doms, size_t n, size_t *out_n);
/* A domain's children as an array (from the pool for the main tree). */
wdom **eng_kids(eng_ctx *ctx, const wdom *d);

/* engine_level.c: phase 2, the fit level, and the per-level trim. */
int eng_find_level(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                   int *out_level, const char **reason);
wdom **eng_update_counts(eng_ctx *ctx, wdom **doms, size_t n, int32_t count,
                         int32_t leader_count, int32_t slice_size, int unconstrained, int slices,
                         size_t *out_n);

/* engine_leaves.c: findLevelWithFitDomains on the leaves for an
 * unconstrained LeastFreeCapacity request, from the aggregates, touching
 * only the leaves it returns. 1 when the request is not such a one (the
 * caller takes the general path), else 0 or an error as eng_find_level. */
int eng_fit_leaves_lfc(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                       int *out_level, const char **reason);
/* The same for a BestFit request at any level: one domain when one takes
 * it all, else Kueue's message for a required request; 2 when a preferred
 * one must try the level above, 1 when the level's domains must be spread
 * over (or the request is not such a one). */
int eng_fit_level_best(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                       int *out_level, const char **reason);

/* engine_message.c: Kueue's messages. */
/* A message in the call's pool ("out of memory" when it cannot be made:
 * a reason is never NULL). */
const char *eng_fmt(eng_ctx *ctx, const char *f, ...) TOPO_PRINTF(2, 3);
void eng_stats_add(topo_pool *pool, name_count **list, size_t *n, const char *name, int count);
/* "doesn't allow to fit" for the request at a level, given how much fits. */
const char *eng_not_fit(eng_ctx *ctx, const run_state *rs, int level, int32_t fit);

/* engine_sort.c */
wdom **eng_sorted(eng_ctx *ctx, wdom *const *doms, size_t n, int unconstrained, int with_leader);
typedef int (*eng_cmp_fn)(const eng_ctx *ctx, const wdom *a, const wdom *b);
int eng_cmp_values(const eng_ctx *ctx, const wdom *a, const wdom *b);
/* Stable sort in place with a comparator that sees the context. */
int eng_sort_by(eng_ctx *ctx, wdom **a, size_t n, eng_cmp_fn cmp);

/* engine_match.c: per-node filters of hostname topologies. */
typedef enum { EXCL_NONE, EXCL_TAINT, EXCL_SELECTOR, EXCL_AFFINITY } excl_kind;
excl_kind eng_match_node(const snap_node *node, const topo_podset_spec *ps, const topo_gates *g,
                         const topo_taint **out_taint, int64_t *out_score);
/* The taint as Kueue's message names it ("key=value:Effect"). */
void eng_taint_text(const topo_taint *taint, char *buf, size_t n);
/* What eng_match_node reads of a PodSet (tolerations, nodeSelector,
 * required node affinity), as one string that is equal for requests that
 * exclude the same nodes; from the pool, NULL when out of memory. */
const char *eng_filter_sig(topo_pool *pool, const topo_podset_spec *ps);
int eng_validate_selectors(const topo_podset_spec *ps, char *why, size_t whylen);

/* engine_balanced.c */
wdom **eng_balanced_best(eng_ctx *ctx, const eng_params *p, size_t *out_n, int32_t *out_threshold);
int eng_balanced_apply(eng_ctx *ctx, const eng_params *p, int32_t threshold, wdom **fit,
                       size_t nfit, wdom ***out, size_t *out_n, int *out_level);

#endif
