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

/* Domains of one level compare by their precomputed rank, which is their
 * level-value order; only domains of different levels need the strings. */
int eng_cmp_values(const wdom *a, const wdom *b)
{
    if (a->s->level == b->s->level)
        return (a->s->rank > b->s->rank) - (a->s->rank < b->s->rank);
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

/* Inputs in level-value order (a level's domain list, one parent's
 * children) need only a stable sort on the integer keys, which a counting
 * sort does in linear time: by pod count, then slice count, then leader. */
static int rank_ordered(wdom *const *doms, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (doms[i]->s->level != doms[0]->s->level || doms[i]->s->rank <= doms[i - 1]->s->rank)
            return 0;
    return 1;
}

typedef enum { KEY_STATE, KEY_SLICE, KEY_LEADER } sort_key;

static int32_t key_of(const sort_opts *o, const wdom *d, sort_key k)
{
    switch (k) {
    case KEY_STATE:
        return o->with_leader ? d->state_wl : d->state;
    case KEY_SLICE:
        return o->with_leader ? d->slice_state_wl : d->slice_state;
    default:
        return d->leader_state;
    }
}

/* One stable counting pass; descending when desc. Returns -1 when the key
 * range is too large for a counting pass (the caller merges instead). */
static int counting_pass(eng_ctx *ctx, const sort_opts *o, wdom **dst, wdom *const *src,
                         size_t n, sort_key k, int desc)
{
    int32_t max = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t v = key_of(o, src[i], k);
        if (v < 0)
            return -1;
        if (v > max)
            max = v;
    }
    if ((size_t)max > 4 * n + 64)
        return -1;
    size_t range = (size_t)max + 2;
    size_t *pos = topo_pool_calloc(ctx->pool, range, sizeof(*pos));
    if (pos == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int32_t v = key_of(o, src[i], k);
        pos[(desc ? (size_t)(max - v) : (size_t)v) + 1]++;
    }
    for (size_t i = 1; i < range; i++)
        pos[i] += pos[i - 1];
    for (size_t i = 0; i < n; i++) {
        int32_t v = key_of(o, src[i], k);
        dst[pos[desc ? (size_t)(max - v) : (size_t)v]++] = src[i];
    }
    return 0;
}

static int counting_sort(eng_ctx *ctx, const sort_opts *o, wdom **out, wdom **tmp,
                         wdom *const *doms, size_t n)
{
    if (counting_pass(ctx, o, tmp, doms, n, KEY_STATE, 0) != 0 ||
        counting_pass(ctx, o, out, tmp, n, KEY_SLICE, !o->lfc) != 0)
        return -1;
    if (!o->with_leader)
        return 0;
    if (counting_pass(ctx, o, tmp, out, n, KEY_LEADER, 1) != 0)
        return -1;
    memcpy(out, tmp, n * sizeof(*out));
    return 0;
}

wdom **eng_sorted(eng_ctx *ctx, wdom *const *doms, size_t n, int unconstrained, int with_leader)
{
    wdom **out = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*out));
    wdom **tmp = topo_pool_alloc(ctx->pool, (n ? n : 1) * sizeof(*tmp));
    if (out == NULL || tmp == NULL)
        return NULL;
    sort_opts o = {eng_use_lfc(ctx, unconstrained), ctx->gates->TASRespectNodeAffinityPreferred,
                   with_leader};
    if (n > 32 && !o.affinity && rank_ordered(doms, n) &&
        counting_sort(ctx, &o, out, tmp, doms, n) == 0)
        return out;
    if (n > 0)
        memcpy(out, doms, n * sizeof(*out));
    merge_sort(&o, out, tmp, n);
    return out;
}
