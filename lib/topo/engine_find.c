/* The engine's entry point: Kueue's FindTopologyAssignmentsForFlavor. PodSets
 * are placed in order (groups together), each success is assumed usage for
 * the next; workloads with unhealthy nodes get replacement placements;
 * elastic workloads keep their previous pods. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

void topo_gates_init(topo_gates *gates)
{
#define TOPO_XX_GATE_INIT(name, dflt) gates->name = (dflt);
    TOPO_GATE_MAP(TOPO_XX_GATE_INIT)
#undef TOPO_XX_GATE_INIT
}

int topo_gates_set(topo_gates *gates, const char *name, int on, topo_err *err)
{
#define TOPO_XX_GATE_SET(gname, dflt)         \
    if (strcmp(name, #gname) == 0) {         \
        gates->gname = on ? 1 : 0;           \
        return 0;                            \
    }
    TOPO_GATE_MAP(TOPO_XX_GATE_SET)
#undef TOPO_XX_GATE_SET
    return topo_err_set(err, TOPO_ENOTFOUND, "unknown feature gate \"%s\"", name);
}

/* utiltas.InternalFrom: an API assignment resolved against the snapshot. */
static eng_assign *from_api(eng_ctx *ctx, const topo_assignment *ta)
{
    if (ta == NULL)
        return NULL;
    eng_assign *a = topo_pool_calloc(ctx->pool, 1, sizeof(*a));
    size_t n = ta->ndomains ? ta->ndomains : 1;
    if (a == NULL)
        return NULL;
    a->levels = ta->levels;
    a->nlevels = ta->nlevels;
    a->values = topo_pool_calloc(ctx->pool, n, sizeof(*a->values));
    a->domains = topo_pool_calloc(ctx->pool, n, sizeof(*a->domains));
    a->counts = topo_pool_calloc(ctx->pool, n, sizeof(*a->counts));
    if (a->values == NULL || a->domains == NULL || a->counts == NULL)
        return NULL;
    for (size_t i = 0; i < ta->ndomains; i++) {
        a->values[i] = ta->domains[i].values;
        a->counts[i] = ta->domains[i].count;
        const char *id = snap_join(ctx->pool, ta->domains[i].values, ta->nlevels);
        int32_t d = id ? topo_strmap_get(ctx->snap->domain_by_id, id) : -1;
        a->domains[i] = d >= 0 ? &ctx->snap->domains[d] : NULL;
    }
    a->n = ta->ndomains;
    return a;
}

static eng_assign *copy_assign(eng_ctx *ctx, const eng_assign *src, size_t cap)
{
    eng_assign *a = topo_pool_calloc(ctx->pool, 1, sizeof(*a));
    if (a == NULL)
        return NULL;
    *a = *src;
    if (cap == 0)
        cap = 1;
    a->values = topo_pool_calloc(ctx->pool, cap, sizeof(*a->values));
    a->domains = topo_pool_calloc(ctx->pool, cap, sizeof(*a->domains));
    a->counts = topo_pool_calloc(ctx->pool, cap, sizeof(*a->counts));
    if (a->values == NULL || a->domains == NULL || a->counts == NULL)
        return NULL;
    a->n = 0;
    return a;
}

static void push(eng_assign *a, const eng_assign *src, size_t i, int32_t count)
{
    a->values[a->n] = src->values[i];
    a->domains[a->n] = src->domains[i];
    a->counts[a->n] = count;
    a->n++;
}

static const topo_assignment *to_api(eng_ctx *ctx, const eng_assign *a)
{
    if (a == NULL)
        return NULL;
    topo_assignment *out = topo_pool_calloc(ctx->pool, 1, sizeof(*out));
    topo_assign_domain *doms = topo_pool_calloc(ctx->pool, a->n ? a->n : 1, sizeof(*doms));
    if (out == NULL || doms == NULL)
        return NULL;
    out->levels = a->levels;
    out->nlevels = a->nlevels;
    for (size_t i = 0; i < a->n; i++) {
        doms[i].values = a->values[i];
        doms[i].count = a->counts[i];
    }
    out->domains = doms;
    out->ndomains = a->n;
    return out;
}

/* IsTopologyAssignmentStale: the first value of the first unknown domain. */
static const char *stale_domain(const eng_assign *a)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->domains[i] == NULL)
            return a->nlevels > 0 ? a->values[i][0] : "";
    return NULL;
}

static int32_t count_pods(const eng_assign *a)
{
    int32_t total = 0;
    for (size_t i = 0; i < a->n; i++)
        total += a->counts[i];
    return total;
}

/* mergeTopologyAssignments: sorted by the leaves' joined level values, equal
 * domains summed. */
typedef struct merge_item {
    const char *key;
    const char *id;
    size_t src;
    size_t idx;
} merge_item;

static int cmp_merge(const void *a, const void *b)
{
    const merge_item *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c != 0)
        return c;
    /* stable: keep a's entries before b's */
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static eng_assign *merge(eng_ctx *ctx, const eng_assign *a, const eng_assign *b)
{
    size_t n = a->n + b->n;
    merge_item *items = topo_pool_calloc(ctx->pool, n ? n : 1, sizeof(*items));
    eng_assign *out = copy_assign(ctx, a, n);
    if (items == NULL || out == NULL)
        return NULL;
    const eng_assign *srcs[2] = {a, b};
    size_t k = 0;
    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; i < srcs[s]->n; i++) {
            const snap_domain *d = srcs[s]->domains[i];
            items[k].id = snap_join(ctx->pool, srcs[s]->values[i], srcs[s]->nlevels);
            items[k].key = d ? d->joined : items[k].id;
            items[k].src = s;
            items[k].idx = i;
            if (items[k].id == NULL)
                return NULL;
            k++;
        }
    }
    qsort(items, k, sizeof(*items), cmp_merge);
    const char *last_id = NULL;
    for (size_t i = 0; i < k; i++) {
        const eng_assign *src = srcs[items[i].src];
        if (last_id != NULL && strcmp(last_id, items[i].id) == 0) {
            out->counts[out->n - 1] += src->counts[items[i].idx];
            continue;
        }
        push(out, src, items[i].idx, src->counts[items[i].idx]);
        last_id = items[i].id;
    }
    return out;
}

/* utiltas.TruncateAssignment: keep the first `count` pods in domain order. */
static eng_assign *truncate_assign(eng_ctx *ctx, const eng_assign *a, int32_t count)
{
    eng_assign *out = copy_assign(ctx, a, a->n);
    if (out == NULL)
        return NULL;
    int32_t left = count;
    for (size_t i = 0; i < a->n && left > 0; i++) {
        int32_t c = a->counts[i] < left ? a->counts[i] : left;
        push(out, a, i, c);
        left -= c;
    }
    return out;
}

static int32_t slice_size_of(const topo_podset_spec *ps)
{
    if (!eng_has_request(ps))
        return 1;
    if (ps->nlayers > 0)
        return ps->layers[0].size;
    if (ps->slice_required == NULL)
        return 1;
    return ps->slice_size > 0 ? ps->slice_size : 0;
}

static int slices_requested(const topo_podset_spec *ps)
{
    return (ps->slice_required != NULL && ps->slice_size > 0) || ps->nlayers > 0;
}

static const char *level_key_with_implied(const topo_snapshot *snap, const topo_podset_spec *ps)
{
    if (ps->required)
        return ps->required;
    if (ps->preferred)
        return ps->preferred;
    if (ps->slice_required || ps->nlayers > 0)
        return snap->levels[0];
    if (ps->unconstrained || ps->implied)
        return snap->levels[snap->nlevels - 1];
    return NULL;
}

static const snap_domain *ancestor_at(const topo_snapshot *snap, const snap_domain *d, int level)
{
    while (d != NULL && d->level > level)
        d = d->parent >= 0 ? &snap->domains[d->parent] : NULL;
    return d;
}

/* findIncompleteSliceDomain: the slice-level domain whose pods plus the
 * missing ones form whole slices. */
static const char *incomplete_slice_domain(eng_ctx *ctx, const eng_assign *ta, int32_t missing,
                                           int32_t size, const char *level_key)
{
    const topo_snapshot *snap = ctx->snap;
    int level = topo_snapshot_level_index(snap, level_key);
    if (level < 0 || size <= 0)
        return NULL;
    const snap_domain **seen = topo_pool_calloc(ctx->pool, ta->n ? ta->n : 1, sizeof(*seen));
    int32_t *usage = topo_pool_calloc(ctx->pool, ta->n ? ta->n : 1, sizeof(*usage));
    if (seen == NULL || usage == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < ta->n; i++) {
        const snap_domain *d = ta->domains[i];
        if (d == NULL || d->level != (int)snap->nlevels - 1)
            continue;
        d = ancestor_at(snap, d, level);
        size_t j = 0;
        while (j < k && seen[j] != d)
            j++;
        if (j == k)
            seen[k++] = d;
        usage[j] += ta->counts[i];
    }
    for (size_t j = 0; j < k; j++)
        if ((usage[j] + missing) % size == 0)
            return seen[j]->id;
    return NULL;
}

static const char *required_replacement_domain(eng_ctx *ctx, const topo_podset_spec *ps,
                                               int32_t count, const eng_assign *ta)
{
    const topo_snapshot *snap = ctx->snap;
    const char *key = level_key_with_implied(snap, ps);
    if (key == NULL)
        return NULL;
    int level = topo_snapshot_level_index(snap, key);
    if (level < 0 || ta->n == 0)
        return NULL;
    int32_t ss = slice_size_of(ps);
    if (slices_requested(ps) && ss > 0 && count % ss != 0) {
        if (ps->nlayers > 1) {
            for (size_t i = ps->nlayers; i-- > 0;)
                if (count % ps->layers[i].size != 0)
                    return incomplete_slice_domain(ctx, ta, count, ps->layers[i].size,
                                                   ps->layers[i].level);
        }
        const char *slice_key = ps->slice_required ? ps->slice_required
                                : ps->nlayers > 0   ? ps->layers[0].level
                                                    : snap->levels[snap->nlevels - 1];
        return incomplete_slice_domain(ctx, ta, count, ss, slice_key);
    }
    if (ps->required == NULL)
        return NULL;
    const snap_domain *d = ta->domains[0];
    if (d == NULL || d->level != (int)snap->nlevels - 1)
        return NULL;
    d = ancestor_at(snap, d, level);
    return d ? d->id : NULL;
}

/* Whether `host` is one of the nodes being replaced: Kueue replaces
 * unhealthy_nodes[0] only, replace_all (topo's) every one of them. */
static int is_replaced(const topo_workload_spec *wl, const char *host)
{
    size_t n = wl->replace_all ? wl->nunhealthy_nodes : 1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(wl->unhealthy_nodes[i], host) == 0)
            return 1;
    return 0;
}

/* The node a failure names: Kueue's unhealthy_nodes[0]; with replace_all the
 * first of them that held pods (one that held none is not the cause). */
static const char *named_node(const topo_workload_spec *wl, const eng_assign *existing)
{
    for (size_t u = 0; wl->replace_all && u < wl->nunhealthy_nodes; u++)
        for (size_t i = 0; i < existing->n; i++)
            if (strcmp(existing->values[i][existing->nlevels - 1], wl->unhealthy_nodes[u]) == 0)
                return wl->unhealthy_nodes[u];
    return wl->unhealthy_nodes[0];
}

/* prefer_same_domain (topo's): for a preferred level, the domain at that
 * level holding the first remaining pods; NULL when it does not apply. */
static const char *preferred_replacement_domain(eng_ctx *ctx, const topo_podset_spec *ps,
                                                const topo_workload_spec *wl,
                                                const eng_assign *remaining)
{
    const topo_snapshot *snap = ctx->snap;
    if (!wl->prefer_same_domain || ps->required != NULL || ps->preferred == NULL ||
        remaining->n == 0)
        return NULL;
    int level = topo_snapshot_level_index(snap, ps->preferred);
    const snap_domain *d = remaining->domains[0];
    if (level < 0 || d == NULL || d->level != (int)snap->nlevels - 1)
        return NULL;
    d = ancestor_at(snap, d, level);
    /* joined, not id: a hostname leaf's id is the bare hostname */
    return d ? d->joined : NULL;
}

/* findReplacementAssignment: the pods of the replaced nodes are taken out of
 * the existing assignment, placed again (inside the domain the remaining
 * pods require) and merged back. With replace_all their pods are summed and
 * placed in one search; a node not in the assignment contributes none, and
 * when none of them is, the assignment is kept (out_replacement NULL). */
static int find_replacement(eng_ctx *ctx, const topo_podset_spec *ps, const eng_assign *existing,
                            const topo_workload_spec *wl, eng_assign **out_new,
                            eng_assign **out_replacement, const char **reason)
{
    *out_new = NULL;
    *out_replacement = NULL;
    *reason = NULL;
    eng_assign *remaining = copy_assign(ctx, existing, existing->n);
    if (remaining == NULL)
        return TOPO_ENOMEM;
    int32_t count = 0;
    for (size_t i = 0; i < existing->n; i++) {
        if (!is_replaced(wl, existing->values[i][existing->nlevels - 1]))
            push(remaining, existing, i, existing->counts[i]);
        else if (wl->replace_all)
            count += existing->counts[i]; /* every pod taken out is placed */
        else
            count = existing->counts[i]; /* deleteDomain: the last match's (a lowest
                                          * level other than the hostname repeats values) */
    }
    const char *stale = stale_domain(remaining);
    if (stale != NULL) {
        *reason = eng_fmt(ctx,
                          "Cannot replace the node, because the existing topologyAssignment is "
                          "invalid, as it contains the stale domain %s",
                          stale);
        return 0;
    }
    if (wl->replace_all && count == 0) {
        *out_new = remaining;
        return 0;
    }
    const char *req_domain = required_replacement_domain(ctx, ps, count, remaining);
    eng_request tr = {ps, count, 0, NULL, 0};
    int32_t ss = slice_size_of(ps);
    if (slices_requested(ps) && req_domain != NULL && ss > 0 && count % ss != 0) {
        tr.override_slices = 1;
        tr.slice_size_override = 1;
        tr.slice_level_override = NULL;
        for (size_t i = ps->nlayers; i-- > 0;) {
            if (count % ps->layers[i].size == 0) {
                tr.slice_size_override = ps->layers[i].size;
                tr.slice_level_override = ps->layers[i].level;
                break;
            }
        }
    }
    eng_assign *repl = NULL;
    int rc = 0;
    const char *same = req_domain == NULL ? preferred_replacement_domain(ctx, ps, wl, remaining)
                                          : NULL;
    if (same != NULL) {
        /* the same domain first; whatever it could not do, Kueue's choice */
        const char *why = NULL;
        if ((rc = eng_find_assignment(ctx, &tr, NULL, same, &repl, NULL, &why)) != 0)
            return rc;
        if (why != NULL)
            repl = NULL;
    }
    if (repl == NULL || repl->n == 0) {
        rc = eng_find_assignment(ctx, &tr, NULL, req_domain, &repl, NULL, reason);
        if (rc != 0 || *reason != NULL)
            return rc;
    }
    if (repl == NULL || repl->n == 0) {
        *reason = eng_fmt(ctx, "cannot find replacement assignment for unhealthy node: %s",
                          named_node(wl, existing));
        return 0;
    }
    if ((*out_new = merge(ctx, repl, remaining)) == NULL)
        return TOPO_ENOMEM;
    *out_replacement = repl;
    return 0;
}

typedef struct ps_result {
    int done;
    eng_assign *assign;
    eng_assign *replacement; /* the part found for the unhealthy nodes' pods */
    const char *reason;
} ps_result;

static const topo_admitted_podset *find_admission(const topo_workload_spec *wl, const char *name)
{
    for (size_t i = 0; i < wl->nadmission; i++)
        if (strcmp(wl->admission[i].podset, name) == 0)
            return &wl->admission[i];
    return NULL;
}

/* handleElasticWorkload; returns 1 when it decided the group's placement. */
static int place_elastic(eng_ctx *ctx, size_t w, const size_t *leader, const topo_podset_spec *ps,
                         ps_result *res, const req_vec *reqs, int *failed, int *rc)
{
    const topo_podset_spec *wp = &ps[w];
    const topo_podset_spec *lp = leader ? &ps[*leader] : NULL;
    *rc = 0;
    if (wp->previous == NULL)
        return 0;
    eng_assign *prev = from_api(ctx, wp->previous);
    if (prev == NULL) {
        *rc = TOPO_ENOMEM;
        return 1;
    }
    if (stale_domain(prev) != NULL)
        return 0;
    eng_assign *lprev = NULL;
    if (lp != NULL && lp->previous != NULL) {
        if ((lprev = from_api(ctx, lp->previous)) == NULL) {
            *rc = TOPO_ENOMEM;
            return 1;
        }
        if (stale_domain(lprev) != NULL)
            return 0;
    }
    int32_t prev_count = count_pods(prev);
    int32_t ss = slice_size_of(wp);
    if (ss > 1 && (prev_count % ss != 0 || wp->count % ss != 0))
        return 0;
    if (wp->count > prev_count) {
        eng_add_assumed(ctx, prev, &reqs[w]);
        const eng_request *placement_leader = NULL;
        eng_request lreq = {lp, 1, 0, NULL, 0};
        if (lp != NULL) {
            if (lprev != NULL)
                eng_add_assumed(ctx, lprev, &reqs[*leader]);
            else
                placement_leader = &lreq;
        }
        eng_request delta = {wp, wp->count - prev_count, 0, NULL, 0};
        eng_assign *dw = NULL, *dl = NULL;
        const char *reason = NULL;
        *rc = eng_find_assignment(ctx, &delta, placement_leader, NULL, &dw, &dl, &reason);
        if (*rc != 0)
            return 1;
        res[w].done = 1;
        if (reason != NULL) {
            res[w].reason = reason;
            *failed = 1;
            return 1;
        }
        if ((res[w].assign = merge(ctx, dw, prev)) == NULL) {
            *rc = TOPO_ENOMEM;
            return 1;
        }
        if (lp != NULL) {
            res[*leader].done = 1;
            if (lprev != NULL) {
                res[*leader].assign = lprev;
            } else {
                res[*leader].assign = dl;
                eng_add_assumed(ctx, dl, &reqs[*leader]);
            }
        }
        eng_add_assumed(ctx, dw, &reqs[w]);
        return 1;
    }
    eng_assign *keep = prev;
    if (wp->count < prev_count && (keep = truncate_assign(ctx, prev, wp->count)) == NULL) {
        *rc = TOPO_ENOMEM;
        return 1;
    }
    res[w].done = 1;
    res[w].assign = keep;
    eng_add_assumed(ctx, keep, &reqs[w]);
    if (lp != NULL) {
        res[*leader].done = 1;
        res[*leader].assign = lprev;
        eng_add_assumed(ctx, lprev, &reqs[*leader]);
    }
    return 1;
}

/* What the replacement path reads without further checks. */
static int check_workload(const topo_workload_spec *wl, topo_err *err)
{
    for (size_t i = 0; i < wl->nunhealthy_nodes; i++)
        if (wl->unhealthy_nodes == NULL || wl->unhealthy_nodes[i] == NULL)
            return topo_err_set(err, TOPO_EINVALID, "workload: unhealthy_nodes[%zu] is NULL", i);
    for (size_t i = 0; i < wl->nadmission; i++) {
        const topo_admitted_podset *a = &wl->admission[i];
        if (a->podset == NULL)
            return topo_err_set(err, TOPO_EINVALID, "workload: admission[%zu]: podset is NULL",
                                i);
        if (a->assignment == NULL)
            continue;
        if (a->assignment->ndomains > 0 && a->assignment->nlevels == 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "workload: admission[%zu] (\"%s\"): assignment has no levels", i,
                                a->podset);
        for (size_t d = 0; d < a->assignment->ndomains; d++)
            if (a->assignment->domains[d].values == NULL)
                return topo_err_set(err, TOPO_EINVALID,
                                    "workload: admission[%zu] (\"%s\"): domains[%zu]: values "
                                    "is NULL",
                                    i, a->podset, d);
    }
    return 0;
}

static int find_all(eng_ctx *ctx, topo_podset_result *out, const topo_snapshot *snap,
                    const topo_podset_spec *podsets, size_t npodsets,
                    const topo_workload_spec *workload, const topo_gates *gates, topo_pool *pool,
                    topo_err *err)
{
    topo_gates defaults;
    if (gates == NULL) {
        topo_gates_init(&defaults);
        gates = &defaults;
    }
    if (!snap->built)
        return topo_err_set(err, TOPO_EINVALID, "engine: snapshot is not built");
    for (size_t i = 0; i < npodsets; i++) {
        out[i].name = podsets[i].name;
        out[i].assignment = NULL;
        out[i].failure = NULL;
        out[i].replacement = NULL;
        if (podsets[i].count < 0)
            return topo_err_set(err, TOPO_EINVALID, "podset \"%s\": count must be >= 0",
                                podsets[i].name ? podsets[i].name : "");
        for (size_t j = 0; j < podsets[i].nlayers; j++)
            if (podsets[i].layers[j].size <= 0)
                return topo_err_set(err, TOPO_EINVALID,
                                    "podset \"%s\": slice layer %zu: size must be >= 1",
                                    podsets[i].name ? podsets[i].name : "", j);
    }
    int bad = workload != NULL ? check_workload(workload, err) : 0;
    if (bad != 0)
        return bad;
    ctx->snap = snap;
    ctx->gates = gates;
    ctx->pool = pool;
    /* Counters only, parallel to the snapshot's domains: fill_in_counts
     * writes every one of them, so there is nothing to set up here. */
    ctx->doms = topo_pool_alloc(pool, (snap->ndomains ? snap->ndomains : 1) * sizeof(wdom));
    ctx->scratch = topo_pool_calloc(pool, snap->nresources ? snap->nresources : 1, sizeof(int64_t));
    ps_result *res = topo_pool_calloc(pool, npodsets ? npodsets : 1, sizeof(*res));
    req_vec *reqs = topo_pool_calloc(pool, npodsets ? npodsets : 1, sizeof(*reqs));
    size_t *order = topo_pool_calloc(pool, npodsets ? npodsets : 1, sizeof(*order));
    /* eng_dom's bits: without them every request counts phase 1 itself */
    ctx->touched = topo_pool_alloc(pool, ((snap->ndomains + 63) / 64 + 1) * sizeof(uint64_t));
    if (ctx->doms == NULL || ctx->scratch == NULL || res == NULL || reqs == NULL || order == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "engine: out of memory");
    for (size_t i = 0; i < npodsets; i++)
        if (eng_req_vec(ctx, &podsets[i], &reqs[i]) != 0)
            return topo_err_set(err, TOPO_ENOMEM, "engine: out of memory");

    int replacing = workload != NULL && workload->nunhealthy_nodes > 0;
    int rc = 0;
    int stop = 0;
    int *grouped = topo_pool_calloc(pool, npodsets ? npodsets : 1, sizeof(int));
    if (grouped == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "engine: out of memory");
    for (size_t g = 0; g < npodsets && !stop; g++) {
        if (grouped[g])
            continue;
        /* The group: this PodSet and later ones with the same group name. */
        size_t n = 0;
        order[n++] = g;
        grouped[g] = 1;
        if (podsets[g].group != NULL) {
            for (size_t j = g + 1; j < npodsets; j++) {
                if (!grouped[j] && podsets[j].group && strcmp(podsets[j].group, podsets[g].group) == 0) {
                    order[n++] = j;
                    grouped[j] = 1;
                }
            }
        }
        if (replacing) {
            for (size_t k = 0; k < n && !stop; k++) {
                size_t i = order[k];
                const topo_admitted_podset *psa = find_admission(workload, podsets[i].name);
                if (psa == NULL || psa->assignment == NULL)
                    continue;
                eng_assign *existing = from_api(ctx, psa->assignment);
                if (existing == NULL)
                    return topo_err_set(err, TOPO_ENOMEM, "engine: out of memory");
                res[i].done = 1;
                if (gates->SkipReassignmentForPodOwnedWorkloads && workload->single_pod_owned) {
                    res[i].assign = existing;
                    continue;
                }
                eng_assign *merged = NULL, *repl = NULL;
                rc = find_replacement(ctx, &podsets[i], existing, workload, &merged, &repl,
                                      &res[i].reason);
                if (rc != 0)
                    return topo_err_set(err, rc, "engine: out of memory");
                res[i].assign = merged;
                res[i].replacement = repl;
                if (res[i].reason != NULL) {
                    stop = 1;
                    break;
                }
                eng_add_assumed(ctx, repl, &reqs[i]);
            }
            continue;
        }
        /* findLeaderAndWorkers: the larger PodSet is the workers. */
        size_t w = order[0];
        size_t lead = 0;
        int has_leader = 0;
        if (n > 1) {
            lead = order[1];
            has_leader = 1;
            if (podsets[lead].count > podsets[w].count) {
                lead = order[0];
                w = order[1];
            }
        }
        if (gates->ElasticJobsViaWorkloadSlicesWithTAS) {
            int failed = 0;
            if (place_elastic(ctx, w, has_leader ? &lead : NULL, podsets, res, reqs, &failed,
                              &rc)) {
                if (rc != 0)
                    return topo_err_set(err, rc, "engine: out of memory");
                if (failed)
                    stop = 1;
                continue;
            }
        }
        eng_request wr = {&podsets[w], podsets[w].count, 0, NULL, 0};
        eng_request lr = {has_leader ? &podsets[lead] : NULL, 1, 0, NULL, 0};
        eng_assign *wa = NULL, *la = NULL;
        const char *reason = NULL;
        rc = eng_find_assignment(ctx, &wr, has_leader ? &lr : NULL, NULL, &wa, &la, &reason);
        if (rc != 0)
            return topo_err_set(err, rc, "engine: out of memory");
        for (size_t k = 0; k < n; k++) {
            size_t i = order[k];
            res[i].done = 1;
            res[i].reason = reason;
            if (reason == NULL)
                res[i].assign = (has_leader && i == lead) ? la : wa;
        }
        if (reason != NULL) {
            stop = 1;
            break;
        }
        for (size_t k = 0; k < n; k++) {
            size_t i = order[k];
            eng_add_assumed(ctx, res[i].assign, &reqs[i]);
        }
    }
    for (size_t i = 0; i < npodsets; i++) {
        if (!res[i].done)
            continue;
        if (res[i].reason != NULL) {
            out[i].failure = res[i].reason;
        } else if (res[i].assign != NULL) {
            if ((out[i].assignment = to_api(ctx, res[i].assign)) == NULL)
                return topo_err_set(err, TOPO_ENOMEM, "engine: out of memory");
            if (res[i].replacement != NULL &&
                (out[i].replacement = to_api(ctx, res[i].replacement)) == NULL)
                return topo_err_set(err, TOPO_ENOMEM, "engine: out of memory");
        }
    }
    return 0;
}

int topo_engine_find(topo_podset_result *out, const topo_snapshot *snap,
                     const topo_podset_spec *podsets, size_t npodsets,
                     const topo_workload_spec *workload, const topo_gates *gates, topo_pool *pool,
                     topo_err *err)
{
    eng_ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    int rc = find_all(&ctx, out, snap, podsets, npodsets, workload, gates, pool, err);
    snap_agg_release(snap, ctx.held);
    return rc;
}
