/* Kueue's BalancedPlacement (alpha, TASBalancedPlacement) for preferred
 * requests: find the candidate parent whose sub-domains can each take at
 * least T slices for the largest T, pick an optimal subset of them, give each
 * T slices and hand out the rest in order. Any failure falls back to the
 * standard algorithm (the caller decides). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "topo/array.h"

typedef struct greedy_eval {
    int fits;
    int32_t selected;
    wdom *last_wl;
    wdom *last;
} greedy_eval;

static int greedy(eng_ctx *ctx, wdom *const *doms, size_t n, int32_t slices, int32_t leaders,
                  greedy_eval *out)
{
    memset(out, 0, sizeof(*out));
    int32_t rem = slices, rem_l = leaders;
    wdom **without = NULL;
    size_t nwithout = n;
    size_t idx = 0;
    if (leaders > 0) {
        wdom **with = eng_sorted(ctx, doms, n, 0, 1);
        if (with == NULL)
            return TOPO_ENOMEM;
        for (; rem_l > 0 && idx < n && with[idx]->leader_state > 0; idx++) {
            out->selected++;
            out->last_wl = with[idx];
            rem_l -= with[idx]->leader_state;
            rem -= with[idx]->slice_state_wl;
        }
        without = eng_sorted(ctx, with + idx, n - idx, 0, 0);
        nwithout = n - idx;
    } else {
        without = eng_sorted(ctx, doms, n, 0, 0);
    }
    if (without == NULL)
        return TOPO_ENOMEM;
    if (rem_l > 0)
        return 0;
    for (idx = 0; rem > 0 && idx < nwithout && without[idx]->slice_state > 0; idx++) {
        out->selected++;
        out->last = without[idx];
        rem -= without[idx]->slice_state;
    }
    if (rem > 0) {
        out->selected = 0;
        out->last = out->last_wl = NULL;
        return 0;
    }
    out->fits = 1;
    return 0;
}

/* A deep copy of a subtree that carries its own structure, so the search
 * can prune it without touching the counters the fallback still needs. */
static wdom *clone_domain(eng_ctx *ctx, const wdom *d)
{
    wdom *c = topo_pool_alloc(ctx->pool, sizeof(*c));
    wclone *info = topo_pool_alloc(ctx->pool, sizeof(*info));
    if (c == NULL || info == NULL)
        return NULL;
    *c = *d;
    info->s = eng_s(ctx, d);
    info->nchildren = eng_nkids(ctx, d);
    info->children = NULL;
    if (info->nchildren > 0) {
        info->children = topo_pool_alloc(ctx->pool, (size_t)info->nchildren * sizeof(wdom *));
        if (info->children == NULL)
            return NULL;
        for (int32_t i = 0; i < info->nchildren; i++)
            if ((info->children[i] = clone_domain(ctx, eng_kid(ctx, d, i))) == NULL)
                return NULL;
    }
    c->clone = info;
    return c;
}

static wdom **clone_domains(eng_ctx *ctx, wdom *const *doms, size_t n)
{
    wdom **out = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*out));
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if ((out[i] = clone_domain(ctx, doms[i])) == NULL)
            return NULL;
    return out;
}

static void clear_state(const eng_ctx *ctx, wdom *d)
{
    int64_t affinity = d->affinity;
    d->state = d->state_wl = d->slice_state = d->slice_state_wl = d->leader_state = 0;
    d->affinity = affinity;
    for (int32_t i = 0; i < eng_nkids(ctx, d); i++)
        clear_state(ctx, eng_kid(ctx, d, i));
}

static void clear_leader_capacity(const eng_ctx *ctx, wdom *d)
{
    d->state_wl = 0;
    d->slice_state_wl = 0;
    d->leader_state = 0;
    for (int32_t i = 0; i < eng_nkids(ctx, d); i++)
        clear_leader_capacity(ctx, eng_kid(ctx, d, i));
}

static void prune_node(const eng_ctx *ctx, wdom *d, int32_t threshold, int leader_required)
{
    if (d->slice_state < threshold) {
        clear_state(ctx, d);
        return;
    }
    if (leader_required && d->leader_state > 0 && d->slice_state_wl < threshold)
        clear_leader_capacity(ctx, d);
}

static void prune(const eng_ctx *ctx, wdom **doms, size_t n, int32_t threshold,
                  const eng_params *p)
{
    int leader_required = p->leader_count > 0;
    for (size_t i = 0; i < n; i++)
        for (int32_t c = 0; c < eng_nkids(ctx, doms[i]); c++)
            prune_node(ctx, eng_kid(ctx, doms[i], c), threshold, leader_required);
    for (size_t i = 0; i < n; i++) {
        eng_fill_helper(ctx, doms[i], p->slice_size, p->slice_level, p->requested_level, NULL,
                        leader_required);
        prune_node(ctx, doms[i], threshold, leader_required);
    }
}

static int32_t threshold_value(int32_t slices, const greedy_eval *g)
{
    /* Fewer pods than one slice (count / slice size is 0) select no domain:
     * no threshold, and the caller places without balancing. */
    if (g->selected <= 0)
        return 0;
    int32_t t = slices / g->selected;
    if (g->last_wl != NULL && g->last_wl->slice_state_wl < t)
        t = g->last_wl->slice_state_wl;
    if (g->last != NULL && g->last->slice_state < t)
        t = g->last->slice_state;
    return t;
}


wdom **eng_balanced_best(eng_ctx *ctx, const eng_params *p, size_t *out_n, int32_t *out_threshold)
{
    const topo_snapshot *snap = ctx->snap;
    int32_t slices = p->count / p->slice_size;
    *out_n = 0;
    *out_threshold = 0;
    /* Candidate sibling lists: one per domain one level up. */
    size_t ncand = 0;
    wdom ***cands = NULL;
    size_t *cand_n = NULL;
    if (p->requested_level == 0) {
        size_t n = snap->level_ndomains[0];
        cands = topo_pool_alloc(ctx->pool, sizeof(*cands));
        cand_n = topo_pool_alloc(ctx->pool, sizeof(*cand_n));
        wdom **all = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*all));
        if (cands == NULL || cand_n == NULL || all == NULL)
            return NULL;
        for (size_t i = 0; i < n; i++)
            all[i] = &ctx->doms[snap->level_domains[0][i]];
        cands[0] = all;
        cand_n[0] = n;
        ncand = 1;
    } else {
        int up = p->requested_level - 1;
        size_t n = snap->level_ndomains[up];
        cands = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*cands));
        cand_n = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*cand_n));
        if (cands == NULL || cand_n == NULL)
            return NULL;
        /* level_domains are already sorted by level values */
        for (size_t i = 0; i < n; i++) {
            wdom *d = &ctx->doms[snap->level_domains[up][i]];
            if ((cands[i] = eng_kids(ctx, d)) == NULL)
                return NULL;
            cand_n[i] = (size_t)eng_nkids(ctx, d);
        }
        ncand = n;
    }
    int32_t best = 0, best_count = 0;
    wdom **fit = NULL;
    size_t nfit = 0;
    for (size_t c = 0; c < ncand; c++) {
        wdom **cand = clone_domains(ctx, cands[c], cand_n[c]);
        if (cand == NULL)
            return NULL;
        size_t nlow = cand_n[c];
        wdom **low = cand;
        if (p->requested_level < p->slice_level && (low = eng_lower(ctx, cand, cand_n[c], &nlow)) == NULL)
            return NULL;
        greedy_eval g;
        if (greedy(ctx, low, nlow, slices, p->leader_count, &g) != 0)
            return NULL;
        if (!g.fits)
            continue;
        int32_t threshold = threshold_value(slices, &g);
        int32_t thr_leader = threshold;
        if (p->leader_count > 0 && g.last != NULL && g.last->slice_state_wl < thr_leader)
            thr_leader = g.last->slice_state_wl;
        if (threshold < best)
            continue;
        prune(ctx, cand, cand_n[c], threshold, p);
        greedy_eval after;
        if (greedy(ctx, cand, cand_n[c], slices, p->leader_count, &after) != 0)
            return NULL;
        if (!after.fits && thr_leader < threshold) {
            if (thr_leader <= 0 || thr_leader < best)
                continue;
            threshold = thr_leader;
            if ((cand = clone_domains(ctx, cands[c], cand_n[c])) == NULL)
                return NULL;
            prune(ctx, cand, cand_n[c], threshold, p);
            if (greedy(ctx, cand, cand_n[c], slices, p->leader_count, &after) != 0)
                return NULL;
        }
        if (!after.fits)
            continue;
        if (threshold > best || (threshold == best && after.selected < best_count)) {
            best = threshold;
            best_count = after.selected;
            fit = cand;
            nfit = cand_n[c];
        }
    }
    *out_n = nfit;
    *out_threshold = best;
    return fit;
}

static double entropy(const eng_ctx *ctx, const wdom *d)
{
    int64_t total = 0;
    int32_t n = eng_nkids(ctx, d);
    for (int32_t i = 0; i < n; i++)
        total += eng_kid(ctx, d, i)->state;
    if (n == 0 || total == 0)
        return 0.0;
    double e = 0.0;
    for (int32_t i = 0; i < n; i++) {
        int32_t st = eng_kid(ctx, d, i)->state;
        if (st > 0) {
            double pi = (double)st / (double)total;
            e += -pi * log2(pi);
        }
    }
    return e;
}

static int cmp_capacity_entropy(const eng_ctx *ctx, const wdom *a, const wdom *b)
{
    if (a->leader_state != b->leader_state)
        return b->leader_state > a->leader_state ? 1 : -1;
    if (a->slice_state_wl != b->slice_state_wl)
        return b->slice_state_wl > a->slice_state_wl ? 1 : -1;
    double ea = entropy(ctx, a), eb = entropy(ctx, b);
    if (eb > ea)
        return 1;
    if (eb < ea)
        return -1;
    return eng_cmp_values(ctx, a, b);
}

/* One DP state: `used` domains chosen, leaders and pods still to place. */
typedef struct dp_entry {
    int32_t leaders;
    int32_t pods;
    wdom **placement;
    size_t nplacement;
} dp_entry;

typedef struct dp_level {
    dp_entry *e;
    size_t n;
    size_t cap;
} dp_level;

static dp_entry *dp_find(dp_level *lv, int32_t leaders, int32_t pods)
{
    for (size_t i = 0; i < lv->n; i++)
        if (lv->e[i].leaders == leaders && lv->e[i].pods == pods)
            return &lv->e[i];
    return NULL;
}

static int dp_add(eng_ctx *ctx, dp_level *lv, int32_t leaders, int32_t pods, wdom **placement,
                  size_t n)
{
    if (dp_find(lv, leaders, pods) != NULL)
        return 0;
    int rc = topo_pool_array_reserve(ctx->pool, (void **)&lv->e, &lv->cap, lv->n, lv->n + 1,
                                     sizeof(*lv->e));
    if (rc != 0)
        return rc;
    lv->e[lv->n].leaders = leaders;
    lv->e[lv->n].pods = pods;
    lv->e[lv->n].placement = placement;
    lv->e[lv->n].nplacement = n;
    lv->n++;
    return 0;
}

static int cmp_dp(const void *a, const void *b)
{
    const dp_entry *x = a, *y = b;
    if (x->leaders != y->leaders)
        return x->leaders < y->leaders ? -1 : 1;
    return (x->pods > y->pods) - (x->pods < y->pods);
}

/* selectOptimalDomainSetToFit */
static wdom **select_optimal(eng_ctx *ctx, wdom *const *doms, size_t n, int32_t slices,
                             int32_t leaders, int32_t slice_size, int by_entropy, size_t *out_n)
{
    *out_n = 0;
    greedy_eval g;
    if (greedy(ctx, doms, n, slices, leaders, &g) != 0 || !g.fits)
        return NULL;
    size_t opt = (size_t)g.selected;
    wdom **ordered = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*ordered));
    dp_level *dp = topo_pool_calloc(ctx->pool, opt + 1, sizeof(*dp));
    if (ordered == NULL || dp == NULL)
        return NULL;
    memcpy(ordered, doms, n * sizeof(*ordered));
    if (eng_sort_by(ctx, ordered, n, by_entropy ? cmp_capacity_entropy : eng_cmp_values) != 0)
        return NULL;
    if (dp_add(ctx, &dp[0], leaders, slices * slice_size, NULL, 0) != 0)
        return NULL;
    for (size_t di = 0; di < n; di++) {
        wdom *d = ordered[di];
        for (size_t i = opt; i > 0; i--) {
            dp_level *prev = &dp[i - 1];
            size_t np = prev->n;
            dp_entry *snapshot = topo_pool_alloc(ctx->pool, (np ? np : 1) * sizeof(*snapshot));
            if (snapshot == NULL)
                return NULL;
            if (np)
                memcpy(snapshot, prev->e, np * sizeof(*snapshot));
            qsort(snapshot, np, sizeof(*snapshot), cmp_dp);
            for (size_t k = 0; k < np; k++) {
                dp_entry *b = &snapshot[k];
                if (b->leaders <= 0 && b->pods <= 0)
                    continue;
                wdom **np_list = topo_pool_alloc(ctx->pool, (b->nplacement + 1) * sizeof(wdom *));
                if (np_list == NULL)
                    return NULL;
                if (b->nplacement)
                    memcpy(np_list, b->placement, b->nplacement * sizeof(wdom *));
                np_list[b->nplacement] = d;
                if (b->leaders > 0 && d->leader_state > 0 &&
                    dp_add(ctx, &dp[i], b->leaders - d->leader_state, b->pods - d->state_wl,
                           np_list, b->nplacement + 1) != 0)
                    return NULL;
                if (d->slice_state > 0 &&
                    dp_add(ctx, &dp[i], b->leaders, b->pods - d->state, np_list,
                           b->nplacement + 1) != 0)
                    return NULL;
            }
        }
    }
    dp_entry *best = NULL;
    for (size_t k = 0; k < dp[opt].n; k++) {
        dp_entry *e = &dp[opt].e[k];
        if (e->leaders != 0 || e->pods > 0)
            continue;
        if (best == NULL || e->pods > best->pods)
            best = e;
    }
    if (best == NULL)
        return NULL;
    *out_n = best->nplacement;
    return best->placement;
}

static int place_balanced(eng_ctx *ctx, wdom **doms, size_t n, int32_t slices, int32_t leaders,
                          int32_t slice_size, int32_t threshold, wdom ***out, size_t *out_n)
{
    size_t nres = 0;
    wdom **res = select_optimal(ctx, doms, n, slices, leaders, slice_size, 0, &nres);
    if (res == NULL || nres == 0)
        return -1;
    if (slices < (int32_t)nres * threshold)
        return -1;
    if ((res = eng_sorted(ctx, res, nres, 0, 1)) == NULL)
        return -1;
    int32_t extra = slices - (int32_t)nres * threshold;
    int32_t leaders_left = leaders;
    for (size_t i = 0; i < nres; i++) {
        wdom *d = res[i];
        int32_t take = 0;
        if (leaders_left > 0) {
            take = d->slice_state_wl - threshold < extra ? d->slice_state_wl - threshold : extra;
            d->leader_state = 1;
            leaders_left--;
        } else if (extra > 0) {
            take = d->slice_state - threshold < extra ? d->slice_state - threshold : extra;
            d->leader_state = 0;
        } else {
            d->leader_state = 0;
        }
        d->state = (threshold + take) * slice_size;
        d->slice_state = threshold + take;
        d->slice_state_wl = d->slice_state;
        d->state_wl = d->state - d->leader_state;
        extra -= take;
    }
    if (extra > 0 || leaders_left > 0)
        return -1;
    *out = res;
    *out_n = nres;
    return 0;
}

int eng_balanced_apply(eng_ctx *ctx, const eng_params *p, int32_t threshold, wdom **fit,
                       size_t nfit, wdom ***out, size_t *out_n, int *out_level)
{
    int32_t slices = p->count / p->slice_size;
    int level = p->requested_level;
    if (p->requested_level < p->slice_level) {
        size_t nres = 0;
        wdom **res = select_optimal(ctx, fit, nfit, slices, p->leader_count, p->slice_size, 1, &nres);
        if (res == NULL || nres == 0)
            return -1;
        if ((fit = eng_lower(ctx, res, nres, &nfit)) == NULL)
            return -1;
        level = p->requested_level + 1;
    }
    if (place_balanced(ctx, fit, nfit, slices, p->leader_count, p->slice_size, threshold, out,
                       out_n) != 0)
        return -1;
    *out_level = level;
    return 0;
}
