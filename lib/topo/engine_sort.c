/* Domain orderings of Kueue's TAS (sortedDomains, sortedDomainsWithLeader).
 * Every ordering ends in a comparison of level values, so it is total and
 * any correct sort gives Kueue's order; a merge sort carries the context
 * that C11 qsort cannot. */
#include <string.h>

#include "engine_internal.h"

typedef struct sort_opts {
    int lfc;
    int affinity;
    int with_leader;
} sort_opts;

int eng_cmp_values(const wdom *a, const wdom *b)
{
    return snap_compare_values(a->s, b->s);
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
    return eng_cmp_values(a, b);
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

wdom **eng_sorted(eng_ctx *ctx, wdom *const *doms, size_t n, int unconstrained, int with_leader)
{
    wdom **out = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*out));
    wdom **tmp = topo_pool_alloc(ctx->pool, (n / 2 + 1) * sizeof(*tmp));
    if (out == NULL || tmp == NULL)
        return NULL;
    if (n > 0)
        memcpy(out, doms, n * sizeof(*out));
    sort_opts o = {eng_use_lfc(ctx, unconstrained), ctx->gates->TASRespectNodeAffinityPreferred,
                   with_leader};
    merge_sort(&o, out, tmp, n);
    return out;
}
