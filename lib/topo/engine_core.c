/* Kueue's TAS placement for one PodSet (and its leader), phase by phase:
 * fill in counts bottom-up, find the fit level, descend to the leaves. */
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "topo/quantity.h"

#define POD_RESOURCE "pods"

int eng_use_lfc(const eng_ctx *ctx, int unconstrained)
{
    const topo_gates *g = ctx->gates;
    if (g->TASProfileLeastFreeCapacity)
        return 1;
    if (g->TASProfileBestFit)
        return 0;
    return unconstrained && g->TASProfileMixed;
}

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

/* CountInWithLimitingResource: how many times req fits in cap, and the index
 * of the limiting item (items are sorted by name, so the first minimum wins
 * ties alphabetically as in Kueue). */
static inline int32_t count_in(const req_vec *req, const int64_t *cap, int *limiting)
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

/* The snapshot resources named by a and b, each once. */
static int union_existing(eng_ctx *ctx, const req_vec *a, const req_vec *b, req_vec *out)
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

static void stats_add(topo_pool *pool, name_count **list, size_t *n, const char *name, int count)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*list)[i].name, name) == 0) {
            (*list)[i].count += count;
            return;
        }
    }
    name_count *grown = topo_pool_alloc(pool, (*n + 1) * sizeof(*grown));
    if (grown == NULL)
        return;
    if (*n > 0)
        memcpy(grown, *list, *n * sizeof(*grown));
    grown[*n].name = topo_pool_strdup(pool, name);
    grown[*n].count = count;
    *list = grown;
    (*n)++;
}

static int stats_has(const excl_stats *st)
{
    return st->node_selector > 0 || st->affinity > 0 || st->topology_domain > 0 ||
           st->ntaints > 0 || st->nresources > 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ". Total nodes: T; excluded: a, b" or "". */
static const char *stats_suffix(eng_ctx *ctx, const excl_stats *st)
{
    if (!stats_has(st))
        return "";
    size_t n = 3 + st->ntaints + st->nresources, k = 0;
    char **items = topo_pool_calloc(ctx->pool, n, sizeof(char *));
    char buf[512];
    if (items == NULL)
        return "";
    if (st->node_selector > 0) {
        snprintf(buf, sizeof(buf), "nodeSelector: %d", st->node_selector);
        items[k++] = topo_pool_strdup(ctx->pool, buf);
    }
    if (st->affinity > 0) {
        snprintf(buf, sizeof(buf), "affinity: %d", st->affinity);
        items[k++] = topo_pool_strdup(ctx->pool, buf);
    }
    if (st->topology_domain > 0) {
        snprintf(buf, sizeof(buf), "topologyDomain: %d", st->topology_domain);
        items[k++] = topo_pool_strdup(ctx->pool, buf);
    }
    for (size_t i = 0; i < st->ntaints; i++) {
        snprintf(buf, sizeof(buf), "taint \"%s\": %d", st->taints[i].name, st->taints[i].count);
        items[k++] = topo_pool_strdup(ctx->pool, buf);
    }
    for (size_t i = 0; i < st->nresources; i++) {
        snprintf(buf, sizeof(buf), "resource \"%s\": %d", st->resources[i].name,
                 st->resources[i].count);
        items[k++] = topo_pool_strdup(ctx->pool, buf);
    }
    for (size_t i = 0; i < k; i++)
        if (items[i] == NULL)
            return "";
    qsort(items, k, sizeof(char *), cmp_str);
    size_t len = 64;
    for (size_t i = 0; i < k; i++)
        len += strlen(items[i]) + 2;
    char *out = topo_pool_alloc(ctx->pool, len);
    if (out == NULL)
        return "";
    int w = snprintf(out, len, ". Total nodes: %d; excluded: ", st->total_nodes);
    for (size_t i = 0; i < k; i++)
        w += snprintf(out + w, len - (size_t)w, "%s%s", i ? ", " : "", items[i]);
    return out;
}

const char *eng_fmt(eng_ctx *ctx, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    const char *s = topo_pool_vprintf(ctx->pool, f, ap);
    va_end(ap);
    return s ? s : "out of memory";
}

static const char *not_fit_message(eng_ctx *ctx, int32_t fit, int32_t total, int32_t slice_size,
                                   const excl_stats *st)
{
    const char *unit = slice_size == 1 ? "pod" : "slice";
    const char *name = ctx->snap->topology_name;
    if (fit == 0)
        return eng_fmt(ctx, "topology \"%s\" doesn't allow to fit any of %d %s(s)%s", name, total,
                   unit, stats_suffix(ctx, st));
    return eng_fmt(ctx, "topology \"%s\" allows to fit only %d out of %d %s(s)%s", name, fit, total,
               unit, stats_suffix(ctx, st));
}

/* Pod and slice counts are never negative and each leaf's is at most
 * INT32_MAX (count_in): sums saturate there rather than wrap (a pool of
 * nodes that each take "unlimited" pods). */
static inline int32_t add_counts(int32_t a, int32_t b)
{
    int64_t r = (int64_t)a + b;
    return r > INT32_MAX ? INT32_MAX : (int32_t)r;
}

static int32_t count_slices_in_subtree(const eng_ctx *ctx, const wdom *d, int cur, int target,
                                       int32_t size)
{
    if (cur == target)
        return d->state / size;
    int32_t total = 0;
    for (int32_t i = 0; i < eng_nkids(ctx, d); i++)
        total = add_counts(total,
                           count_slices_in_subtree(ctx, eng_kid(ctx, d, i), cur + 1, target, size));
    return total;
}

static const char *multilayer_message(eng_ctx *ctx, int level, int32_t count,
                                      const topo_podset_spec *ps, const excl_stats *st)
{
    const topo_snapshot *snap = ctx->snap;
    char buf[2048];
    int w = snprintf(buf, sizeof(buf), "topology \"%s\" doesn't allow to fit", snap->topology_name);
    const wdom *best = NULL;
    for (size_t i = 0; i < snap->level_ndomains[level]; i++) {
        const wdom *d = &ctx->doms[snap->level_domains[level][i]];
        if (best == NULL || d->slice_state > best->slice_state ||
            (d->slice_state == best->slice_state &&
             strcmp(eng_s(ctx, d)->id, eng_s(ctx, best)->id) < 0))
            best = d;
    }
    if (best == NULL)
        return eng_fmt(ctx, "%s", buf);
    for (size_t i = 0; i < ps->nlayers && w < (int)sizeof(buf); i++) {
        int target = topo_snapshot_level_index(snap, ps->layers[i].level);
        if (target < 0)
            continue;
        int32_t needed = count / ps->layers[i].size;
        int32_t fit = count_slices_in_subtree(ctx, best, level, target, ps->layers[i].size);
        w += snprintf(buf + w, sizeof(buf) - (size_t)w, "; %d/%d slice(s) fit on level %s", fit,
                      needed, ps->layers[i].level);
    }
    return eng_fmt(ctx, "%s%s", buf, stats_suffix(ctx, st));
}

/* ---- phase 1: counts ---- */

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
    f->children_cap = add_counts(f->children_cap, cs);
    f->slice_cap = add_counts(f->slice_cap, c->slice_state);
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
            int32_t st = count_in(&rs->req, leaf->room, &limiting);
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
            stats_add(ctx->pool, &rs->stats.resources, &rs->stats.nresources,
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
                if (taint->effect[0] == '\0')
                    snprintf(buf, sizeof(buf), taint->value[0] ? "%s=%s:" : "%s", taint->key,
                             taint->value);
                else if (taint->value[0] == '\0')
                    snprintf(buf, sizeof(buf), "%s:%s", taint->key, taint->effect);
                else
                    snprintf(buf, sizeof(buf), "%s=%s:%s", taint->key, taint->value,
                             taint->effect);
                stats_add(ctx->pool, &rs->stats.taints, &rs->stats.ntaints, buf, 1);
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
        d->state = count_in(&rs->req, room, &limiting);
        if (d->state == 0 && limiting >= 0)
            limited_by[limiting]++;
        d->leader_state = 0;
        d->state_wl = d->state;
        if (rs->has_leader) {
            if (count_in(&rs->leader_req, remaining, NULL) > 0) {
                d->leader_state = 1;
                sub_req(remaining, &rs->leader_req, 1);
            }
            d->state_wl = count_in(&rs->req, remaining, NULL);
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

/* ---- phase 2: best fit helpers ---- */

static size_t top_affinity_tier(const eng_ctx *ctx, wdom *const *doms, size_t n)
{
    if (!ctx->gates->TASRespectNodeAffinityPreferred || n == 0)
        return n;
    for (size_t i = 0; i < n; i++)
        if (doms[i]->affinity != doms[0]->affinity)
            return i;
    return n;
}

typedef enum { ST_STATE, ST_STATE_WL, ST_SLICE, ST_SLICE_WL } state_kind;

static int32_t get_state(const wdom *d, state_kind k)
{
    switch (k) {
    case ST_STATE:
        return d->state;
    case ST_STATE_WL:
        return d->state_wl;
    case ST_SLICE:
        return d->slice_state;
    default:
        return d->slice_state_wl;
    }
}

static wdom *best_fit_by(const eng_ctx *ctx, wdom *const *doms, size_t n, int32_t needed,
                         state_kind k)
{
    size_t m = top_affinity_tier(ctx, doms, n);
    wdom *best = doms[0];
    int32_t best_state = get_state(best, k);
    for (size_t i = 0; i < m; i++) {
        int32_t s = get_state(doms[i], k);
        if (s >= needed && s < best_state) {
            best = doms[i];
            best_state = s;
        }
    }
    return best;
}

static wdom *best_fit(const eng_ctx *ctx, wdom *const *doms, size_t n, int32_t count,
                      int32_t leaders)
{
    return best_fit_by(ctx, doms, n, count, leaders > 0 ? ST_STATE_WL : ST_STATE);
}

static wdom *best_fit_slices(const eng_ctx *ctx, wdom *const *doms, size_t n, int32_t slices,
                             int32_t leaders)
{
    return best_fit_by(ctx, doms, n, slices, leaders > 0 ? ST_SLICE_WL : ST_SLICE);
}

/* consumeWithLeadersGeneric */
static wdom *consume_with_leaders(const eng_ctx *ctx, wdom *d, wdom *const *rest, size_t nrest,
                                  int32_t *rem, int32_t *rem_leaders, int unconstrained,
                                  int slices, int32_t slice_size, int *completed)
{
    int32_t *with_leader = slices ? &d->slice_state_wl : &d->state_wl;
    int32_t *primary = slices ? &d->slice_state : &d->state;
    if (!eng_use_lfc(ctx, unconstrained) && *with_leader >= *rem && d->leader_state >= *rem_leaders) {
        if (slices) {
            d = best_fit_slices(ctx, rest, nrest, *rem, *rem_leaders);
            with_leader = &d->slice_state_wl;
            primary = &d->slice_state;
        } else {
            d = best_fit(ctx, rest, nrest, *rem, *rem_leaders);
            with_leader = &d->state_wl;
            primary = &d->state;
        }
    }
    if (*with_leader >= *rem && d->leader_state >= *rem_leaders) {
        *primary = *rem;
        d->leader_state = *rem_leaders;
        d->state = *rem * slice_size;
        *completed = 1;
        return d;
    }
    *completed = 0;
    if (*with_leader > *rem)
        *with_leader = *rem;
    if (d->leader_state > *rem_leaders)
        d->leader_state = *rem_leaders;
    *primary = *with_leader;
    d->state = *with_leader * slice_size;
    *rem_leaders -= d->leader_state;
    *rem -= *with_leader;
    return d;
}

/* prioritizeLeaderDomain: the parent's with-leader capacity subtracted the
 * smallest leader penalty among its children, so the descent must put a
 * leader-capable domain whose penalty fits in the slack first. */
static wdom **prioritize_leader(eng_ctx *ctx, wdom **doms, size_t n, int32_t count,
                                int32_t leader_count, int32_t slice_size, int slices)
{
    if (leader_count == 0 || n < 2)
        return doms;
    int32_t required = slices ? count / slice_size : count;
    int32_t available = 0;
    for (size_t i = 0; i < n; i++)
        available += slices ? doms[i]->slice_state : doms[i]->state;
    for (size_t i = 0; i < n; i++) {
        wdom *d = doms[i];
        if (d->leader_state < leader_count)
            continue;
        int32_t penalty = slices ? d->slice_state - d->slice_state_wl : d->state - d->state_wl;
        if (available - penalty < required)
            continue;
        if (i == 0)
            return doms;
        wdom **out = topo_pool_alloc(ctx->pool, n * sizeof(*out));
        if (out == NULL)
            return NULL;
        out[0] = d;
        memcpy(out + 1, doms, i * sizeof(*out));
        memcpy(out + i + 1, doms + i + 1, (n - i - 1) * sizeof(*out));
        return out;
    }
    return doms;
}

/* updateCountsToMinimumGeneric: trims the sorted domains to exactly the
 * requested pods (or slices). Returns the used domains. */
static wdom **update_counts(eng_ctx *ctx, wdom **doms, size_t n, int32_t count,
                            int32_t leader_count, int32_t slice_size, int unconstrained,
                            int slices, size_t *out_n)
{
    wdom **result = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*result));
    size_t k = 0;
    *out_n = 0;
    if (result == NULL)
        return NULL;
    if ((doms = prioritize_leader(ctx, doms, n, count, leader_count, slice_size, slices)) == NULL)
        return NULL;
    int32_t rem = slices ? count / slice_size : count;
    int32_t rem_leaders = leader_count;
    int lfc = eng_use_lfc(ctx, unconstrained);
    for (size_t i = 0; i < n; i++) {
        wdom *d = doms[i];
        if (rem_leaders > 0) {
            int completed = 0;
            wdom *used = consume_with_leaders(ctx, d, doms + i, n - i, &rem, &rem_leaders,
                                              unconstrained, slices, slices ? slice_size : 1,
                                              &completed);
            result[k++] = used;
            if (completed) {
                *out_n = k;
                return result;
            }
            continue;
        }
        if (slices) {
            if (!lfc && d->slice_state >= rem)
                d = best_fit_slices(ctx, doms + i, n - i, rem, 0);
            d->leader_state = 0;
            if (d->slice_state >= rem) {
                d->state = rem * slice_size;
                d->slice_state = rem;
                result[k++] = d;
                *out_n = k;
                return result;
            }
            d->state = d->slice_state * slice_size;
            rem -= d->slice_state;
            result[k++] = d;
            continue;
        }
        if (!lfc && d->state >= rem)
            d = best_fit(ctx, doms + i, n - i, rem, 0);
        d->leader_state = 0;
        if (d->state >= rem) {
            d->state = rem;
            result[k++] = d;
            *out_n = k;
            return result;
        }
        rem -= d->state;
        result[k++] = d;
    }
    /* Kueue logs "unexpected remainingCount" and returns nothing. */
    *out_n = 0;
    return result;
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

/* findLevelWithFitDomains */
static int find_level(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                      int *out_level, const char **reason)
{
    const topo_snapshot *snap = ctx->snap;
    const eng_params *p = &rs->p;
    size_t n = snap->level_ndomains[level];
    *reason = NULL;
    if (n == 0) {
        *reason = eng_fmt(ctx, "no topology domains at level: %s", snap->levels[level]);
        return 0;
    }
    wdom **all = topo_pool_alloc(ctx->pool, n * sizeof(*all));
    if (all == NULL)
        return TOPO_ENOMEM;
    int32_t max_capacity = 0; /* the most any single domain can take */
    /* Domains that can take nothing never change the outcome (they are
     * never a best fit, add nothing when taken, and sort behind every other
     * domain in BestFit order): leave them out of the sort, unless affinity
     * tiers are in play, nothing is requested, or nothing else is left. */
    int drop_empty = !ctx->gates->TASRespectNodeAffinityPreferred && p->count / p->slice_size > 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        wdom *d = &ctx->doms[snap->level_domains[level][i]];
        if (drop_empty && d->state == 0 && d->state_wl == 0 && d->leader_state == 0 &&
            d->slice_state == 0 && d->slice_state_wl == 0)
            continue;
        all[kept++] = d;
        int32_t c = p->leader_count > 0 ? (d->leader_state >= p->leader_count
                                               ? d->slice_state_wl
                                               : -1)
                                        : d->slice_state;
        if (c > max_capacity)
            max_capacity = c;
    }
    if (kept == 0) {
        for (size_t i = 0; i < n; i++)
            all[i] = &ctx->doms[snap->level_domains[level][i]];
    } else {
        n = kept;
    }
    wdom **sorted = eng_sorted(ctx, all, n, p->unconstrained, 1);
    if (sorted == NULL)
        return TOPO_ENOMEM;
    wdom *top = sorted[0];
    int32_t slice_count = p->count / p->slice_size;
    int lfc = eng_use_lfc(ctx, p->unconstrained);
#define NOT_FIT(fitv)                                                                       \
    (rs->multilayer ? multilayer_message(ctx, level, p->count, rs->ps, &rs->stats)          \
                    : not_fit_message(ctx, (fitv), slice_count, p->slice_size, &rs->stats))
    if (!lfc && top->slice_state_wl >= slice_count && top->leader_state >= p->leader_count)
        top = best_fit_slices(ctx, sorted, n, slice_count, p->leader_count);
    /* The scan can only succeed when some domain is big enough. */
    if (lfc && max_capacity >= slice_count) {
        for (size_t i = 0; i < n; i++) {
            int32_t capacity = sorted[i]->slice_state;
            if (p->leader_count > 0) {
                if (sorted[i]->leader_state < p->leader_count)
                    continue;
                capacity = sorted[i]->slice_state_wl;
            }
            if (capacity >= slice_count) {
                wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
                if (one == NULL)
                    return TOPO_ENOMEM;
                one[0] = sorted[i];
                *out = one;
                *out_n = 1;
                *out_level = level;
                return 0;
            }
        }
    }
    if (lfc && p->required) {
        *reason = NOT_FIT(sorted[n - 1]->state);
        return 0;
    }
    if (top->slice_state_wl < slice_count || top->leader_state < p->leader_count) {
        if (p->required) {
            if (ctx->gates->TASRespectNodeAffinityPreferred) {
                for (size_t i = 1; i < n; i++) {
                    wdom *d = sorted[i];
                    if (d->slice_state_wl >= slice_count && d->leader_state >= p->leader_count) {
                        wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
                        if (one == NULL)
                            return TOPO_ENOMEM;
                        one[0] = best_fit_slices(ctx, sorted + i, n - i, slice_count,
                                                 p->leader_count);
                        *out = one;
                        *out_n = 1;
                        *out_level = level;
                        return 0;
                    }
                }
            }
            *reason = NOT_FIT(top->slice_state);
            return 0;
        }
        if (level > 0 && !p->unconstrained)
            return find_level(ctx, rs, level - 1, out, out_n, out_level, reason);
        wdom **results = topo_pool_alloc(ctx->pool, n * sizeof(*results));
        if (results == NULL)
            return TOPO_ENOMEM;
        size_t k = 0;
        int32_t rem = slice_count, rem_leaders = p->leader_count;
        size_t idx = 0;
        if ((sorted = prioritize_leader(ctx, sorted, n, p->count, p->leader_count, p->slice_size,
                                        1)) == NULL)
            return TOPO_ENOMEM;
        for (; rem_leaders > 0 && idx < n && sorted[idx]->leader_state > 0; idx++) {
            wdom *d = sorted[idx];
            if (!lfc && sorted[idx]->slice_state_wl >= rem)
                d = best_fit_slices(ctx, sorted + idx, n - idx, rem, rem_leaders);
            results[k++] = d;
            rem_leaders -= d->leader_state;
            rem -= d->slice_state_wl;
        }
        if (rem_leaders > 0) {
            *reason = NOT_FIT(p->leader_count - rem_leaders);
            return 0;
        }
        /* Without leaders the with-leader order is the plain one already. */
        wdom **rest = p->leader_count == 0
                          ? sorted
                          : eng_sorted(ctx, sorted + idx, n - idx, p->unconstrained, 0);
        if (rest == NULL)
            return TOPO_ENOMEM;
        size_t nrest = n - idx;
        for (size_t j = 0; rem > 0 && j < nrest; j++) {
            wdom *d = rest[j];
            if (!lfc && rest[j]->slice_state >= rem)
                d = best_fit_slices(ctx, rest + j, nrest - j, rem, 0);
            results[k++] = d;
            rem -= d->slice_state;
        }
        if (rem > 0) {
            *reason = NOT_FIT(slice_count - rem);
            return 0;
        }
        *out = results;
        *out_n = k;
        *out_level = level;
        return 0;
    }
#undef NOT_FIT
    wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
    if (one == NULL)
        return TOPO_ENOMEM;
    one[0] = top;
    *out = one;
    *out_n = 1;
    *out_level = level;
    return 0;
}

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

    if ((rc = union_existing(ctx, &rs.req, rs.has_leader ? &rs.leader_req : NULL, &rs.need)) != 0)
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

    if ((rc = fill_leaves(ctx, &rs)) != 0 || (rc = roll_up(ctx, &rs)) != 0)
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
        if ((rc = find_level(ctx, &rs, requested, &fit, &nfit, &fit_level, &reason)) != 0)
            return rc;
        if (reason != NULL) {
            *out_reason = reason;
            return 0;
        }
    }
    int unc = rs.p.unconstrained;
    fit = update_counts(ctx, fit, nfit, rs.p.count, rs.p.leader_count, slice_size, unc, 1, &nfit);
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
        fit = update_counts(ctx, sorted, nlow, rs.p.count, rs.p.leader_count, slice_size, unc, 1,
                            &nfit);
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
            wdom **add = update_counts(ctx, sorted, nkids, d->state,
                                       d->leader_state, ss_level, unc, ss_level > 1, &nadd);
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
