/* Kueue's messages for a PodSet that does not fit: how much of it fits, and
 * which nodes the filters excluded (the counts phase 1 gathers), in the
 * call's pool. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

void eng_stats_add(topo_pool *pool, name_count **list, size_t *n, const char *name, int count)
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

static int32_t count_slices_in_subtree(const eng_ctx *ctx, const wdom *d, int cur, int target,
                                       int32_t size)
{
    if (cur == target)
        return d->state / size;
    int32_t total = 0;
    for (int32_t i = 0; i < eng_nkids(ctx, d); i++)
        total = eng_add_counts(total,
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

const char *eng_not_fit(eng_ctx *ctx, const run_state *rs, int level, int32_t fit)
{
    const eng_params *p = &rs->p;
    if (rs->multilayer)
        return multilayer_message(ctx, level, p->count, rs->ps, &rs->stats);
    return not_fit_message(ctx, fit, p->count / p->slice_size, p->slice_size, &rs->stats);
}
