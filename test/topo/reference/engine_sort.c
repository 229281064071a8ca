/* Domain orderings of Kueue's TAS (sortedDomains, sortedDomainsWithLeader).
 * Every ordering ends in a comparison of level values, so it is total and
 * any correct sort gives Kueue's order; a merge sort carries the context
 * that C11 qsort cannot. */
#include <string.h>

#include "engine_internal.h"

typedef struct sort_opts {
    const eng_ctx *ctx;
    int lfc;
    int affinity;
    int with_leader;
    eng_cmp_fn custom; /* when set, the whole ordering */
} sort_opts;

/* Domains of one level compare by their precomputed rank, which is their
 * level-value order; only domains of different levels need the strings. */
int eng_cmp_values(const eng_ctx *ctx, const wdom *a, const wdom *b)
{
    const snap_domain *sa = eng_s(ctx, a), *sb = eng_s(ctx, b);
    if (sa->level == sb->level)
        return (sa->rank > sb->rank) - (sa->rank < sb->rank);
    return snap_compare_values(sa, sb);
}

static int cmp_i32(int32_t a, int32_t b)
{
    return (a > b) - (a < b);
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int compare(const sort_opts *o, const wdom *a, const wdom *b)
{
    if (o->custom != NULL)
        return o->custom(o->ctx, a, b);
    if (o->with_leader && a->leader_state != b->leader_state)
        return cmp_i32(b->leader_state, a->leader_state);
    if (o->affinity && a->affinity != b->affinity)
        return cmp_i64(b->affinity, a->affinity);
    int32_t sa = o->with_leader ? a->slice_state_wl : a->slice_state;
    int32_t sb = o->with_leader ? b->slice_state_wl : b->slice_state;
    if (sa != sb)
        return o->lfc ? cmp_i32(sa, sb) : cmp_i32(sb, sa);
    int32_t pa = o->with_leader ? a->state_wl : a->state;
    int32_t pb = o->with_leader ? b->state_wl : b->state;
    if (pa != pb)
        return cmp_i32(pa, pb);
    return eng_cmp_values(o->ctx, a, b);
}

static void merge_sort(const sort_opts *o, wdom **a, wdom **tmp, size_t n)
{
    if (n < 2)
        return;
    if (n <= 8) {
        for (size_t i = 1; i < n; i++) {
            wdom *x = a[i];
            size_t j = i;
            while (j > 0 && compare(o, a[j - 1], x) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(o, a, tmp, h);
    merge_sort(o, a + h, tmp, n - h);
    if (compare(o, a[h - 1], a[h]) <= 0)
        return;
    memcpy(tmp, a, h * sizeof(*a));
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        a[k++] = compare(o, tmp[i], a[j]) <= 0 ? tmp[i++] : a[j++];
    while (i < h)
        a[k++] = tmp[i++];
}

/* Inputs in level-value order (a level's domain list, one parent's
 * children) need only a stable sort on the integer keys (leader, slices,
 * pods), which a counting sort does in linear time. The keys are read once;
 * when their combined range is small one pass sorts on the composite key,
 * otherwise the caller falls back to the merge sort. Returns -1 to fall back. */
static int counting_sort(eng_ctx *ctx, const sort_opts *o, wdom **out, wdom *const *doms,
                         size_t n)
{
    uint32_t *key = topo_pool_alloc(ctx->pool, n * sizeof(*key));
    if (key == NULL)
        return -1;
    int32_t max_state = 0, max_slice = 0, max_leader = 0;
    int level = eng_s(ctx, doms[0])->level;
    int32_t prev_rank = -1;
    for (size_t i = 0; i < n; i++) {
        const wdom *d = doms[i];
        const snap_domain *sd = eng_s(ctx, d);
        if (sd->level != level || sd->rank <= prev_rank)
            return -1;
        prev_rank = sd->rank;
        int32_t st = o->with_leader ? d->state_wl : d->state;
        int32_t sl = o->with_leader ? d->slice_state_wl : d->slice_state;
        int32_t ld = o->with_leader ? d->leader_state : 0;
        if (st < 0 || sl < 0 || ld < 0)
            return -1;
        max_state = st > max_state ? st : max_state;
        max_slice = sl > max_slice ? sl : max_slice;
        max_leader = ld > max_leader ? ld : max_leader;
    }
    uint64_t rs = (uint64_t)max_state + 1, rl = (uint64_t)max_slice + 1,
             rd = (uint64_t)max_leader + 1;
    uint64_t range = rs * rl * rd;
    if (range > 8 * (uint64_t)n + 1024)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const wdom *d = doms[i];
        uint32_t st = (uint32_t)(o->with_leader ? d->state_wl : d->state);
        uint32_t sl = (uint32_t)(o->with_leader ? d->slice_state_wl : d->slice_state);
        uint32_t ld = (uint32_t)(o->with_leader ? d->leader_state : 0);
        uint32_t slk = o->lfc ? sl : (uint32_t)max_slice - sl; /* BestFit: more slices first */
        uint32_t ldk = (uint32_t)max_leader - ld;              /* leaders first */
        key[i] = (uint32_t)(((uint64_t)ldk * rl + slk) * rs + st);
    }
    size_t *pos = topo_pool_calloc(ctx->pool, (size_t)range + 1, sizeof(*pos));
    if (pos == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        pos[key[i] + 1]++;
    for (size_t i = 1; i <= range; i++)
        pos[i] += pos[i - 1];
    for (size_t i = 0; i < n; i++)
        out[pos[key[i]]++] = doms[i];
    return 0;
}

wdom **eng_sorted(eng_ctx *ctx, wdom *const *doms, size_t n, int unconstrained, int with_leader)
{
    wdom **out = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*out));
    wdom **tmp = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*tmp));
    if (out == NULL || tmp == NULL)
        return NULL;
    sort_opts o = {ctx, eng_use_lfc(ctx, unconstrained),
                   ctx->gates->TASRespectNodeAffinityPreferred, with_leader, NULL};
    if (n > 32 && !o.affinity && counting_sort(ctx, &o, out, doms, n) == 0)
        return out;
    if (n > 0)
        memcpy(out, doms, n * sizeof(*out));
    merge_sort(&o, out, tmp, n);
    return out;
}

int eng_sort_by(eng_ctx *ctx, wdom **a, size_t n, eng_cmp_fn cmp)
{
    wdom **tmp = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*tmp));
    if (tmp == NULL)
        return TOPO_ENOMEM;
    sort_opts o = {ctx, 0, 0, 0, cmp};
    merge_sort(&o, a, tmp, n);
    return 0;
}
