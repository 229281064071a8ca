/* findLevelWithFitDomains read from the aggregates' index (each level's
 * domains grouped by their (slices, pods) counts, a bit per domain in
 * level-value order), for the requests whose counts come from the
 * aggregates. Only the domains returned are touched.
 *
 * LeastFreeCapacity over the leaves (the mixed profile's choice for
 * unconstrained and implied TAS): Kueue sorts every leaf that can take
 * something by (slices, pods, level values) ascending, returns the first
 * that takes the whole request, else takes leaves in that order until the
 * request is covered: the first leaf of the least key that takes
 * everything, else the leaves of the keys in order.
 *
 * BestFit at any level: Kueue sorts the level by slices descending, pods
 * ascending, level values; when the first takes the request, the answer is
 * the first domain with the fewest slices that suffice, else the first's
 * slices are the message of a required request, and a preferred one tries
 * the level above.
 *
 * Everything else (spreading over a level under BestFit, leaders, affinity,
 * LeastFreeCapacity above the leaves) goes the general way, as do levels
 * with too many keys. */
#include <string.h>

#include "engine_internal.h"

/* The keys in use in Kueue's LeastFreeCapacity order: slices, then pods,
 * ascending. */
static size_t sorted_keys(const agg_key *keys, size_t nkeys, const agg_key **out)
{
    size_t n = 0;
    for (size_t k = 0; k < nkeys; k++) {
        if (keys[k].count == 0)
            continue;
        const agg_key *x = &keys[k];
        size_t j = n++;
        while (j > 0 && (out[j - 1]->slice > x->slice ||
                         (out[j - 1]->slice == x->slice && out[j - 1]->state > x->state))) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = x;
    }
    return n;
}

/* Up to `limit` leaves of a key, in level-value order, appended to res. */
static size_t take_key(eng_ctx *ctx, const agg_key *key, size_t nwords, const int32_t *ids,
                       size_t limit, wdom **res)
{
    size_t k = 0;
    for (size_t w = 0; w < nwords && k < limit; w++) {
        uint64_t bits = key->bits[w];
        while (bits != 0 && k < limit) {
            int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            res[k++] = eng_dom(ctx, ids[w * 64 + (size_t)b]);
        }
    }
    return k;
}

int eng_fit_leaves_lfc(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                       int *out_level, const char **reason)
{
    const topo_snapshot *snap = ctx->snap;
    const eng_params *p = &rs->p;
    int32_t slice_count = p->count / p->slice_size;
    if (ctx->base == NULL || ctx->held == NULL || level != (int)snap->nlevels - 1 ||
        !p->unconstrained || p->required || p->leader_count > 0 || slice_count <= 0 ||
        !eng_use_lfc(ctx, p->unconstrained) || ctx->gates->TASRespectNodeAffinityPreferred)
        return 1;
    const agg_key *all = NULL;
    size_t nall = snap_agg_keys(ctx->held, level, &all);
    if (nall == (size_t)-1)
        return 1;
    const agg_key *keys[AGG_MAX_KEYS];
    if (nall > sizeof(keys) / sizeof(keys[0]))
        return 1;
    size_t nkeys = sorted_keys(all, nall, keys);
    if (nkeys == 0)
        return 1; /* nothing takes anything: Kueue then sorts every leaf */
    const int32_t *ids = snap->level_domains[level];
    size_t nwords = (snap->level_ndomains[level] + 63) / 64;
    /* The first leaf that takes it all (least free first), else the keys
     * taken until the request is covered. */
    int64_t rem = slice_count;
    size_t last = nkeys, take_last = 0, before = 0;
    for (size_t k = 0; k < nkeys; k++) {
        if (keys[k]->slice >= slice_count) {
            wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
            if (one == NULL)
                return TOPO_ENOMEM;
            take_key(ctx, keys[k], nwords, ids, 1, one);
            *out = one;
            *out_n = 1;
            *out_level = level;
            return 0;
        }
    }
    for (size_t k = 0; k < nkeys; k++) {
        int64_t slices = (int64_t)keys[k]->slice * keys[k]->count;
        if (slices >= rem) {
            last = k;
            take_last = (size_t)((rem + keys[k]->slice - 1) / keys[k]->slice);
            break;
        }
        rem -= slices;
        before += (size_t)keys[k]->count;
    }
    if (last == nkeys) {
        *reason = eng_not_fit(ctx, rs, level, (int32_t)(slice_count - rem));
        return 0;
    }
    wdom **res = topo_pool_alloc(ctx->pool, (before + take_last) * sizeof(*res));
    if (res == NULL)
        return TOPO_ENOMEM;
    size_t n = 0;
    for (size_t k = 0; k <= last; k++)
        n += take_key(ctx, keys[k], nwords, ids, k < last ? (size_t)keys[k]->count : take_last,
                      res + n);
    *out = res;
    *out_n = n;
    *out_level = level;
    return 0;
}

/* The key that sorts first among those in use that take `needed` slices (a
 * BestFit order: slices descending, else the fewest slices that suffice;
 * then pods ascending), or NULL. needed 0: the first key of all. */
static const agg_key *first_key(const agg_key *keys, size_t nkeys, int32_t needed)
{
    const agg_key *best = NULL;
    for (size_t k = 0; k < nkeys; k++) {
        const agg_key *x = &keys[k];
        if (x->count == 0)
            continue;
        if (needed == 0) {
            if (best == NULL || x->slice > best->slice ||
                (x->slice == best->slice && x->state < best->state))
                best = x;
        } else if (x->slice >= needed &&
                   (best == NULL || x->slice < best->slice ||
                    (x->slice == best->slice && x->state < best->state))) {
            best = x;
        }
    }
    return best;
}

int eng_fit_level_best(eng_ctx *ctx, run_state *rs, int level, wdom ***out, size_t *out_n,
                       int *out_level, const char **reason)
{
    const topo_snapshot *snap = ctx->snap;
    const eng_params *p = &rs->p;
    int32_t slice_count = p->count / p->slice_size;
    if (ctx->base == NULL || ctx->held == NULL || p->leader_count > 0 || slice_count <= 0 ||
        eng_use_lfc(ctx, p->unconstrained) || ctx->gates->TASRespectNodeAffinityPreferred)
        return 1;
    const agg_key *keys = NULL;
    size_t nkeys = snap_agg_keys(ctx->held, level, &keys);
    if (nkeys == (size_t)-1)
        return 1;
    /* Kueue sorts the level (most slices first) and looks at the first. */
    const agg_key *top = first_key(keys, nkeys, 0);
    if (top == NULL)
        return 1; /* nothing takes anything: Kueue then sorts every domain */
    if (top->slice >= slice_count) {
        /* it fits: the tightest domain that does, first in that order */
        const agg_key *best = first_key(keys, nkeys, slice_count);
        wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
        if (one == NULL)
            return TOPO_ENOMEM;
        take_key(ctx, best, (snap->level_ndomains[level] + 63) / 64, snap->level_domains[level], 1,
                 one);
        *out = one;
        *out_n = 1;
        *out_level = level;
        return 0;
    }
    if (p->required) {
        *reason = eng_not_fit(ctx, rs, level, top->slice);
        return 0;
    }
    if (level > 0 && !p->unconstrained)
        return 2;
    return 1;
}
