/* findLevelWithFitDomains over the leaves for an unconstrained request under
 * LeastFreeCapacity (the mixed profile's choice for unconstrained and
 * implied TAS), read from the aggregates. Kueue sorts every leaf that can
 * take something by (slices, pods, level values) ascending, returns the
 * first that takes the whole request, else takes leaves in that order until
 * the request is covered. The same result needs only the leaves taken: one
 * pass over the lowest level's counts (contiguous, in level-value order)
 * finds the answer or the histogram of the (slices, pods) keys, which gives
 * the last key taken; a second pass picks the leaves below it, and as many
 * of that key as it takes, in order. Only those leaves are touched.
 *
 * Everything else (best fit, leaders, affinity, required requests, upper
 * levels) goes the general way, as do keys too spread for a histogram. */
#include <string.h>

#include "engine_internal.h"

/* Keys past this many (slices x pods values) go the general way. */
#define LEAF_KEYS_MAX 4096

typedef struct leaf_scan {
    size_t kept;       /* leaves that take something */
    int32_t max_slice;
    int32_t max_state;
    int32_t total;     /* slices over the kept leaves, saturating */
    int32_t fit_rank;  /* the first leaf in Kueue's order that takes all, or -1 */
} leaf_scan;

static void scan(const agg_count *ranked, size_t n, int32_t slice_count, leaf_scan *sc)
{
    memset(sc, 0, sizeof(*sc));
    sc->fit_rank = -1;
    int32_t fit_slice = 0, fit_state = 0;
    for (size_t r = 0; r < n; r++) {
        agg_count c = ranked[r];
        if (c.state == 0 && c.slice == 0)
            continue;
        sc->kept++;
        if (c.slice > sc->max_slice)
            sc->max_slice = c.slice;
        if (c.state > sc->max_state)
            sc->max_state = c.state;
        sc->total = eng_add_counts(sc->total, c.slice);
        if (c.slice >= slice_count &&
            (sc->fit_rank < 0 || c.slice < fit_slice ||
             (c.slice == fit_slice && c.state < fit_state))) {
            sc->fit_rank = (int32_t)r;
            fit_slice = c.slice;
            fit_state = c.state;
        }
    }
}

/* spreadOverLevel in LeastFreeCapacity order: the kept leaves with a key
 * below the last one taken, in key order, then that key's first leaves. */
static int take_in_order(eng_ctx *ctx, const agg_count *ranked, size_t n, const leaf_scan *sc,
                         int32_t slice_count, const int32_t *ids, wdom ***out, size_t *out_n)
{
    size_t stride = (size_t)sc->max_state + 1;
    size_t nkeys = ((size_t)sc->max_slice + 1) * stride;
    size_t *pos = topo_pool_calloc(ctx->pool, nkeys + 1, sizeof(*pos));
    int64_t *slices = topo_pool_calloc(ctx->pool, nkeys, sizeof(*slices));
    if (pos == NULL || slices == NULL)
        return TOPO_ENOMEM;
    for (size_t r = 0; r < n; r++) {
        agg_count c = ranked[r];
        if (c.state == 0 && c.slice == 0)
            continue;
        size_t k = (size_t)c.slice * stride + (size_t)c.state;
        pos[k + 1]++;
        slices[k] += c.slice;
    }
    /* The last key taken, and how many of its leaves. */
    int64_t rem = slice_count;
    size_t last = 0, take_last = 0;
    for (size_t k = 0; k < nkeys; k++) {
        size_t count = pos[k + 1];
        if (count == 0)
            continue;
        if (slices[k] >= rem) {
            int32_t per = (int32_t)(k / stride);
            last = k;
            take_last = (size_t)((rem + per - 1) / per);
            break;
        }
        rem -= slices[k];
    }
    for (size_t k = 0; k < last; k++)
        pos[k + 1] += pos[k];
    size_t total = pos[last] + take_last;
    wdom **res = topo_pool_alloc(ctx->pool, (total ? total : 1) * sizeof(*res));
    if (res == NULL)
        return TOPO_ENOMEM;
    size_t placed_last = 0;
    for (size_t r = 0; r < n; r++) {
        agg_count c = ranked[r];
        if (c.state == 0 && c.slice == 0)
            continue;
        size_t k = (size_t)c.slice * stride + (size_t)c.state;
        if (k < last)
            res[pos[k]++] = eng_dom(ctx, ids[r]);
        else if (k == last && placed_last < take_last)
            res[pos[last] + placed_last++] = eng_dom(ctx, ids[r]);
    }
    *out = res;
    *out_n = total;
    return 0;
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
    const agg_count *ranked = eng_agg_ranked(ctx->held);
    const int32_t *ids = snap->level_domains[level];
    size_t n = snap->level_ndomains[level];
    leaf_scan sc;
    scan(ranked, n, slice_count, &sc);
    if (sc.kept == 0 ||
        ((size_t)sc.max_slice + 1) * ((size_t)sc.max_state + 1) > LEAF_KEYS_MAX)
        return 1;
    if (sc.fit_rank >= 0) {
        wdom **one = topo_pool_alloc(ctx->pool, sizeof(*one));
        if (one == NULL)
            return TOPO_ENOMEM;
        one[0] = eng_dom(ctx, ids[sc.fit_rank]);
        *out = one;
        *out_n = 1;
        *out_level = level;
        return 0;
    }
    if (sc.total < slice_count) {
        *reason = eng_not_fit(ctx, rs, level, sc.total);
        return 0;
    }
    int rc = take_in_order(ctx, ranked, n, &sc, slice_count, ids, out, out_n);
    if (rc == 0)
        *out_level = level;
    return rc;
}
