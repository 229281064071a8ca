/* Phase 2 of Kueue's TAS placement: the level and the domains the PodSet fits
 * in (findLevelWithFitDomains), and the trim of sorted domains to exactly the
 * requested pods (updateCountsToMinimum) that the descent repeats per level. */
#include <string.h>

#include "engine_internal.h"

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
wdom **eng_update_counts(eng_ctx *ctx, wdom **doms, size_t n, int32_t count,
                         int32_t leader_count, int32_t slice_size, int unconstrained, int slices,
                         size_t *out_n)
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

/* The domains of a level worth sorting, and the most slices any one of them
 * takes (with a leader, only those that can hold it count). Domains that
 * can take nothing never change the outcome (they are never a best fit, add
 * nothing when taken, and sort behind every other domain in BestFit order):
 * they are left out of the sort, unless affinity tiers are in play, nothing
 * is requested, or nothing else is left. */
static wdom **level_candidates(eng_ctx *ctx, const eng_params *p, int level, size_t *out_n,
                               int32_t *out_max)
{
    const topo_snapshot *snap = ctx->snap;
    size_t n = snap->level_ndomains[level];
    wdom **all = topo_pool_alloc(ctx->pool, n * sizeof(*all));
    if (all == NULL)
        return NULL;
    int32_t max_capacity = 0;
    int drop_empty = !ctx->gates->TASRespectNodeAffinityPreferred && p->count / p->slice_size > 0;
    /* Read once: as far as the compiler knows, a store into all[] (a wdom *)
     * may change ctx->doms, which cost a reload per domain once this loop
     * left eng_find_assignment. */
    wdom *doms = ctx->doms;
    const int32_t *ids = snap->level_domains[level];
    const int32_t leaders = p->leader_count;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        wdom *d = &doms[ids[i]];
        if (drop_empty && d->state == 0 && d->state_wl == 0 && d->leader_state == 0 &&
            d->slice_state == 0 && d->slice_state_wl == 0)
            continue;
        all[kept++] = d;
        int32_t c = leaders > 0 ? (d->leader_state >= leaders ? d->slice_state_wl : -1)
                                : d->slice_state;
        if (c > max_capacity)
            max_capacity = c;
    }
    if (kept == 0) {
        for (size_t i = 0; i < n; i++)
            all[i] = &doms[ids[i]];
    } else {
        n = kept;
    }
    *out_n = n;
    *out_max = max_capacity;
    return all;
}

/* The fit is one domain. */
static int fit_one(eng_ctx *ctx, wdom *d, int level, wdom ***out, size_t *out_n, int *out_level)
{
    wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
    if (one == NULL)
        return TOPO_ENOMEM;
    one[0] = d;
    *out = one;
    *out_n = 1;
    *out_level = level;
    return 0;
}

/* LeastFreeCapacity: the first domain in its order (least free first) that
 * takes the whole request and its leader, or NULL. */
static wdom *least_free_fit(wdom *const *sorted, size_t n, const eng_params *p,
                            int32_t slice_count)
{
    for (size_t i = 0; i < n; i++) {
        int32_t capacity = sorted[i]->slice_state;
        if (p->leader_count > 0) {
            if (sorted[i]->leader_state < p->leader_count)
                continue;
            capacity = sorted[i]->slice_state_wl;
        }
        if (capacity >= slice_count)
            return sorted[i];
    }
    return NULL;
}

/* With preferred node affinity the sort puts the best-liked domains first,
 * so a required request the first one cannot take may still fit in one
 * liked less: the best fit from the first such domain on, or NULL. */
static wdom *affinity_fallback(const eng_ctx *ctx, wdom *const *sorted, size_t n,
                               const eng_params *p, int32_t slice_count)
{
    for (size_t i = 1; i < n; i++) {
        wdom *d = sorted[i];
        if (d->slice_state_wl >= slice_count && d->leader_state >= p->leader_count)
            return best_fit_slices(ctx, sorted + i, n - i, slice_count, p->leader_count);
    }
    return NULL;
}

/* No one domain takes the request and it may not move up a level: domains
 * in order until it is placed, those that can hold the leader first, each
 * the best fit for what is left unless LeastFreeCapacity. */
static int spread_over_level(eng_ctx *ctx, run_state *rs, wdom **sorted, size_t n, int level,
                             wdom ***out, size_t *out_n, int *out_level, const char **reason)
{
    const eng_params *p = &rs->p;
    int32_t slice_count = p->count / p->slice_size;
    int lfc = eng_use_lfc(ctx, p->unconstrained);
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
        *reason = eng_not_fit(ctx, rs, level, p->leader_count - rem_leaders);
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
        *reason = eng_not_fit(ctx, rs, level, slice_count - rem);
        return 0;
    }
    *out = results;
    *out_n = k;
    *out_level = level;
    return 0;
}

/* findLevelWithFitDomains: one domain of `level` when one takes the whole
 * request; else the level above when the request may move up (preferred);
 * else as many domains of this level as it takes. *reason when it does not
 * fit at all. */
int eng_find_level(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                   int *out_level, const char **reason)
{
    const topo_snapshot *snap = ctx->snap;
    const eng_params *p = &rs->p;
    size_t n = 0;
    int32_t max_capacity = 0; /* the most any single domain can take */
    *reason = NULL;
    if (snap->level_ndomains[level] == 0) {
        *reason = eng_fmt(ctx, "no topology domains at level: %s", snap->levels[level]);
        return 0;
    }
    wdom **all = level_candidates(ctx, p, level, &n, &max_capacity);
    if (all == NULL)
        return TOPO_ENOMEM;
    wdom **sorted = eng_sorted(ctx, all, n, p->unconstrained, 1);
    if (sorted == NULL)
        return TOPO_ENOMEM;
    wdom *top = sorted[0];
    int32_t slice_count = p->count / p->slice_size;
    int lfc = eng_use_lfc(ctx, p->unconstrained);
    if (!lfc && top->slice_state_wl >= slice_count && top->leader_state >= p->leader_count)
        top = best_fit_slices(ctx, sorted, n, slice_count, p->leader_count);
    /* The scan can only succeed when some domain is big enough. */
    if (lfc && max_capacity >= slice_count) {
        wdom *d = least_free_fit(sorted, n, p, slice_count);
        if (d != NULL)
            return fit_one(ctx, d, level, out, out_n, out_level);
    }
    if (lfc && p->required) {
        *reason = eng_not_fit(ctx, rs, level, sorted[n - 1]->state);
        return 0;
    }
    if (top->slice_state_wl >= slice_count && top->leader_state >= p->leader_count)
        return fit_one(ctx, top, level, out, out_n, out_level);
    if (p->required) {
        wdom *d = ctx->gates->TASRespectNodeAffinityPreferred
                      ? affinity_fallback(ctx, sorted, n, p, slice_count)
                      : NULL;
        if (d != NULL)
            return fit_one(ctx, d, level, out, out_n, out_level);
        *reason = eng_not_fit(ctx, rs, level, top->slice_state);
        return 0;
    }
    if (level > 0 && !p->unconstrained)
        return eng_find_level(ctx, rs, level - 1, out, out_n, out_level, reason);
    return spread_over_level(ctx, rs, sorted, n, level, out, out_n, out_level, reason);
}
