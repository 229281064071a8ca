/* The topology snapshot: nodes in, domain tree out. Mirrors Kueue's TAS node
 * cache (eligibility) and TASFlavorSnapshot (leaves, tree, capacity). */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"
#include "topo/array.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"
#include "topo/quantity.h"

#define PODS_RESOURCE "pods"

int snap_compare_values(const snap_domain *a, const snap_domain *b)
{
    int n = a->level < b->level ? a->level : b->level;
    for (int i = 0; i <= n; i++) {
        int c = strcmp(a->values[i], b->values[i]);
        if (c != 0)
            return c;
    }
    return (a->level > b->level) - (a->level < b->level);
}

char *snap_join(topo_pool *pool, const char *const *values, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(values[i]) + 1;
    char *s = pool ? topo_pool_alloc(pool, len) : malloc(len);
    if (s == NULL)
        return NULL;
    char *w = s;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            *w++ = ',';
        size_t l = strlen(values[i]);
        memcpy(w, values[i], l);
        w += l;
    }
    *w = '\0';
    return s;
}

int32_t snap_resource_index(const topo_snapshot *snap, const char *name)
{
    return topo_strmap_get(snap->resource_by_name, name);
}

static int32_t intern_resource(topo_snapshot *snap, const char *name, const char **out_name)
{
    int32_t idx = topo_strmap_get(snap->resource_by_name, name);
    if (idx >= 0) {
        *out_name = snap->resource_names[idx];
        return idx;
    }
    if (snap->built)
        return -1; /* resource vectors are sized at build */
    if (snap->nresources == snap->cap_resources &&
        topo_array_reserve((void **)&snap->resource_names, &snap->cap_resources,
                           snap->nresources + 1, sizeof(*snap->resource_names)) != 0)
        return -2;
    char *copy = topo_pool_strdup(snap->pool, name);
    if (copy == NULL)
        return -2;
    idx = (int32_t)snap->nresources;
    if (topo_strmap_put(snap->resource_by_name, copy, idx) != 0)
        return -2;
    snap->resource_names[snap->nresources++] = copy;
    *out_name = copy;
    return idx;
}

int topo_snapshot_create(topo_snapshot **out, const topo_snapshot_opts *opts, topo_err *err)
{
    topo_snapshot *snap = NULL;
    int rc = TOPO_ENOMEM;
    *out = NULL;
    if (opts == NULL || opts->nlevels == 0)
        return topo_err_set(err, TOPO_EINVALID, "levels: at least one topology level is required");
    if (opts->nlevels > TOPO_MAX_LEVELS)
        return topo_err_set(err, TOPO_EINVALID, "levels: at most %d topology levels are allowed",
                            TOPO_MAX_LEVELS);
    for (size_t i = 0; i < opts->nlevels; i++) {
        if (opts->levels[i] == NULL || opts->levels[i][0] == '\0')
            return topo_err_set(err, TOPO_EINVALID, "levels[%zu]: empty level label", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(opts->levels[i], opts->levels[j]) == 0)
                return topo_err_set(err, TOPO_EINVALID, "levels[%zu]: duplicate level \"%s\"", i,
                                    opts->levels[i]);
        if (strcmp(opts->levels[i], TOPO_KUEUE_HOSTNAME_LABEL) == 0 && i + 1 != opts->nlevels)
            return topo_err_set(err, TOPO_EINVALID, "levels[%zu]: %s may only be the last level",
                                i, TOPO_KUEUE_HOSTNAME_LABEL);
    }

    snap = calloc(1, sizeof(*snap));
    if (snap == NULL)
        goto fail;
    snap->pool = topo_pool_create();
    snap->node_by_name = topo_strmap_create(1024);
    snap->node_by_hostname = topo_strmap_create(1024);
    snap->resource_by_name = topo_strmap_create(16);
    if (snap->pool == NULL || snap->node_by_name == NULL || snap->node_by_hostname == NULL ||
        snap->resource_by_name == NULL)
        goto fail;
    snap->topology_name =
        topo_pool_strdup(snap->pool, opts->topology_name ? opts->topology_name : "default");
    snap->levels = topo_pool_calloc(snap->pool, opts->nlevels, sizeof(char *));
    if (snap->topology_name == NULL || snap->levels == NULL)
        goto fail;
    for (size_t i = 0; i < opts->nlevels; i++)
        if ((snap->levels[i] = topo_pool_strdup(snap->pool, opts->levels[i])) == NULL)
            goto fail;
    snap->nlevels = opts->nlevels;
    snap->hostname_lowest =
        strcmp(opts->levels[opts->nlevels - 1], TOPO_KUEUE_HOSTNAME_LABEL) == 0;
    if (opts->nflavor_labels > 0) {
        snap->flavor_labels = topo_pool_calloc(snap->pool, opts->nflavor_labels, sizeof(topo_kv));
        if (snap->flavor_labels == NULL)
            goto fail;
        for (size_t i = 0; i < opts->nflavor_labels; i++) {
            snap->flavor_labels[i].key = topo_pool_strdup(snap->pool, opts->flavor_labels[i].key);
            snap->flavor_labels[i].value =
                topo_pool_strdup(snap->pool, opts->flavor_labels[i].value);
            if (snap->flavor_labels[i].key == NULL || snap->flavor_labels[i].value == NULL)
                goto fail;
        }
        snap->nflavor_labels = opts->nflavor_labels;
    }
    snap->pending_tail = &snap->pending;
    if ((snap->agg = snap_agg_create()) == NULL || (snap->sums = snap_sums_create()) == NULL)
        goto fail;
    *out = snap;
    return 0;
fail:
    topo_snapshot_free(snap);
    return rc == TOPO_ENOMEM ? topo_err_nomem(err, "snapshot") : rc;
}

void topo_snapshot_free(topo_snapshot *snap)
{
    if (snap == NULL)
        return;
    topo_strmap_free(snap->node_by_name);
    topo_strmap_free(snap->node_by_hostname);
    topo_strmap_free(snap->resource_by_name);
    topo_strmap_free(snap->domain_by_id);
    snap_agg_free(snap->agg);
    snap_sums_free(snap->sums);
    free(snap->nodes);
    free(snap->domains);
    free(snap->resource_names);
    topo_pool_free(snap->pool);
    free(snap);
}

static const char *node_label(const snap_node *node, const char *key)
{
    for (size_t i = 0; i < node->nlabels; i++)
        if (strcmp(node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

int topo_snapshot_add_node(topo_snapshot *snap, const topo_node_spec *spec, topo_err *err)
{
    if (snap->built)
        return topo_err_set(err, TOPO_EINVALID, "snapshot: nodes cannot be added after build");
    if (spec->name == NULL || spec->name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "node: metadata.name is empty");
    if (topo_strmap_get(snap->node_by_name, spec->name) >= 0)
        return topo_err_set(err, TOPO_EINVALID, "node \"%s\": duplicate node name", spec->name);
    if (snap->nnodes == snap->cap_nodes &&
        topo_array_reserve((void **)&snap->nodes, &snap->cap_nodes, snap->nnodes + 1,
                           sizeof(*snap->nodes)) != 0)
        return topo_err_nomem(err, "snapshot");
    snap_node *node = &snap->nodes[snap->nnodes];
    memset(node, 0, sizeof(*node));
    topo_pool *p = snap->pool;
    if ((node->name = topo_pool_strdup(p, spec->name)) == NULL)
        return topo_err_nomem(err, "snapshot");
    if (spec->nlabels > 0) {
        if ((node->labels = topo_pool_calloc(p, spec->nlabels, sizeof(topo_kv))) == NULL)
            return topo_err_nomem(err, "snapshot");
        for (size_t i = 0; i < spec->nlabels; i++) {
            node->labels[i].key = topo_pool_strdup(p, spec->labels[i].key);
            node->labels[i].value = topo_pool_strdup(p, spec->labels[i].value ? spec->labels[i].value : "");
            if (node->labels[i].key == NULL || node->labels[i].value == NULL)
                return topo_err_nomem(err, "snapshot");
        }
        node->nlabels = spec->nlabels;
    }
    if (spec->ntaints > 0) {
        if ((node->taints = topo_pool_calloc(p, spec->ntaints, sizeof(topo_taint))) == NULL)
            return topo_err_nomem(err, "snapshot");
        for (size_t i = 0; i < spec->ntaints; i++) {
            node->taints[i].key = topo_pool_strdup(p, spec->taints[i].key ? spec->taints[i].key : "");
            node->taints[i].value = topo_pool_strdup(p, spec->taints[i].value ? spec->taints[i].value : "");
            node->taints[i].effect = topo_pool_strdup(p, spec->taints[i].effect ? spec->taints[i].effect : "");
            if (!node->taints[i].key || !node->taints[i].value || !node->taints[i].effect)
                return topo_err_nomem(err, "snapshot");
        }
        node->ntaints = spec->ntaints;
    }
    if (spec->nallocatable > 0) {
        node->allocatable = topo_pool_calloc(p, spec->nallocatable, sizeof(topo_resource));
        if (node->allocatable == NULL)
            return topo_err_nomem(err, "snapshot");
        for (size_t i = 0; i < spec->nallocatable; i++) {
            const char *name = NULL;
            if (intern_resource(snap, spec->allocatable[i].name, &name) < 0)
                return topo_err_nomem(err, "snapshot");
            node->allocatable[i].name = name;
            node->allocatable[i].amount = spec->allocatable[i].amount;
        }
        node->nallocatable = spec->nallocatable;
    }
    node->ready = spec->ready != 0;
    node->ready_missing = spec->ready_missing != 0;
    node->unschedulable = spec->unschedulable != 0;
    node->leaf = -1;
    node->in_topology = 1;
    for (size_t l = 0; l < snap->nlevels && node->in_topology; l++)
        if (node_label(node, snap->levels[l]) == NULL)
            node->in_topology = 0;
    for (size_t f = 0; f < snap->nflavor_labels && node->in_topology; f++) {
        const char *v = node_label(node, snap->flavor_labels[f].key);
        if (v == NULL || strcmp(v, snap->flavor_labels[f].value) != 0)
            node->in_topology = 0;
    }
    if (topo_strmap_put(snap->node_by_name, node->name, (int32_t)snap->nnodes) != 0)
        return topo_err_nomem(err, "snapshot");
    const char *host = node_label(node, TOPO_KUEUE_HOSTNAME_LABEL);
    if (host != NULL && topo_strmap_get(snap->node_by_hostname, host) < 0 &&
        topo_strmap_put(snap->node_by_hostname, host, (int32_t)snap->nnodes) != 0)
        return topo_err_nomem(err, "snapshot");
    snap->nnodes++;
    return 0;
}

static topo_resource *copy_requests(topo_pool *p, const topo_resource *req, size_t n)
{
    topo_resource *out = topo_pool_calloc(p, n ? n : 1, sizeof(*out));
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        out[i].name = topo_pool_strdup(p, req[i].name);
        out[i].amount = req[i].amount;
        if (out[i].name == NULL)
            return NULL;
    }
    return out;
}

/* Adds sign × count × (requests + one pod) to a vector. Resources no node
 * exposes are skipped: their capacity is 0 anyway, so any request of them
 * already cannot fit. */
static void charge(const topo_snapshot *snap, int64_t *vec, const topo_resource *req, size_t n,
                   int64_t count, int64_t sign)
{
    for (size_t i = 0; i < n; i++) {
        int32_t r = snap_resource_index(snap, req[i].name);
        if (r >= 0 && strcmp(req[i].name, PODS_RESOURCE) != 0)
            vec[r] = topo_quantity_add(vec[r],
                                       topo_quantity_mul(sign, topo_quantity_mul(req[i].amount, count)));
    }
    int32_t pods = snap_resource_index(snap, PODS_RESOURCE);
    if (pods >= 0)
        vec[pods] = topo_quantity_add(vec[pods], topo_quantity_mul(sign, count));
}

static int apply_pod_usage(topo_snapshot *snap, const char *node_name, const topo_resource *req,
                           size_t n, int64_t sign, int *out_ignored)
{
    int32_t ni = topo_strmap_get(snap->node_by_name, node_name);
    if (ni < 0 || snap->nodes[ni].leaf < 0) {
        if (out_ignored)
            *out_ignored = 1;
        return 0;
    }
    snap_leaf *leaf = &snap->leaves[snap->nodes[ni].leaf];
    charge(snap, leaf->free, req, n, 1, -sign);
    charge(snap, leaf->room, req, n, 1, -sign);
    charge(snap, snap->nodes[ni].used, req, n, 1, sign);
    snap_agg_leaf_changed(snap, snap->nodes[ni].leaf);
    snap_sums_leaf_changed(snap, snap->nodes[ni].leaf);
    return 0;
}

static void apply_tas_usage(topo_snapshot *snap, const char *const *values, size_t nvalues,
                            int32_t count, const topo_resource *req, size_t n, int64_t sign)
{
    int32_t d = -1;
    if (snap->hostname_lowest) {
        d = topo_strmap_get(snap->domain_by_id, values[nvalues - 1]);
    } else {
        /* malloc, not the pool: usage keeps arriving after the build. */
        char *joined = snap_join(NULL, values, nvalues);
        if (joined == NULL)
            return;
        d = topo_strmap_get(snap->domain_by_id, joined);
        free(joined);
    }
    /* An assignment on a node that is gone or not Ready is skipped, as in Kueue. */
    if (d < 0 || snap->domains[d].leaf < 0)
        return;
    snap_leaf *leaf = &snap->leaves[snap->domains[d].leaf];
    charge(snap, leaf->tas, req, n, count, sign);
    charge(snap, leaf->room, req, n, count, -sign);
    snap_agg_leaf_changed(snap, snap->domains[d].leaf);
    snap_sums_leaf_changed(snap, snap->domains[d].leaf);
}

int topo_snapshot_add_pod_usage(topo_snapshot *snap, const char *node_name,
                                const topo_resource *requests, size_t nrequests, int *out_ignored,
                                topo_err *err)
{
    if (out_ignored)
        *out_ignored = 0;
    if (node_name == NULL || node_name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "pod usage: node name is empty");
    if (snap->built)
        return apply_pod_usage(snap, node_name, requests, nrequests, +1, out_ignored);
    pending_usage *u = topo_pool_calloc(snap->pool, 1, sizeof(*u));
    if (u == NULL || (u->node = topo_pool_strdup(snap->pool, node_name)) == NULL ||
        (u->requests = copy_requests(snap->pool, requests, nrequests)) == NULL)
        return topo_err_nomem(err, "snapshot");
    u->nrequests = nrequests;
    u->count = 1;
    *snap->pending_tail = u;
    snap->pending_tail = &u->next;
    return 0;
}

int topo_snapshot_add_tas_usage(topo_snapshot *snap, const char *const *values, size_t nvalues,
                                int32_t count, const topo_resource *requests, size_t nrequests,
                                topo_err *err)
{
    if (nvalues == 0 || nvalues > snap->nlevels)
        return topo_err_set(err, TOPO_EINVALID, "TAS usage: %zu domain values for %zu levels",
                            nvalues, snap->nlevels);
    if (count < 0)
        return topo_err_set(err, TOPO_EINVALID, "TAS usage: negative count %d", count);
    if (snap->built) {
        apply_tas_usage(snap, values, nvalues, count, requests, nrequests, +1);
        return 0;
    }
    pending_usage *u = topo_pool_calloc(snap->pool, 1, sizeof(*u));
    if (u == NULL || (u->values = topo_pool_calloc(snap->pool, nvalues, sizeof(char *))) == NULL ||
        (u->requests = copy_requests(snap->pool, requests, nrequests)) == NULL)
        return topo_err_nomem(err, "snapshot");
    for (size_t i = 0; i < nvalues; i++)
        if ((u->values[i] = topo_pool_strdup(snap->pool, values[i])) == NULL)
            return topo_err_nomem(err, "snapshot");
    u->tas = 1;
    u->nvalues = nvalues;
    u->count = count;
    u->nrequests = nrequests;
    *snap->pending_tail = u;
    snap->pending_tail = &u->next;
    return 0;
}


/* Finds or creates the domain with these values (and its ancestors). */
static int32_t ensure_domain(topo_snapshot *snap, const char **values, int level, size_t *cap,
                             const char *leaf_id, topo_err *err)
{
    char *joined = snap_join(snap->pool, (const char *const *)values, (size_t)level + 1);
    if (joined == NULL)
        return topo_err_nomem(err, "snapshot");
    const char *id = leaf_id ? leaf_id : joined;
    int32_t d = topo_strmap_get(snap->domain_by_id, id);
    if (d >= 0)
        return d;
    int32_t parent = -1;
    if (level > 0) {
        parent = ensure_domain(snap, values, level - 1, cap, NULL, err);
        if (parent < 0)
            return parent;
    }
    if (snap->ndomains == *cap &&
        topo_array_reserve((void **)&snap->domains, cap, snap->ndomains + 1,
                           sizeof(*snap->domains)) != 0)
        return topo_err_nomem(err, "snapshot");
    d = (int32_t)snap->ndomains++;
    snap_domain *dom = &snap->domains[d];
    memset(dom, 0, sizeof(*dom));
    dom->level = level;
    dom->values = values;
    dom->id = id;
    dom->joined = joined;
    dom->parent = parent;
    dom->leaf = -1;
    if (topo_strmap_put(snap->domain_by_id, id, d) != 0)
        return topo_err_nomem(err, "snapshot");
    return d;
}

static int cmp_domain_ptr(const void *a, const void *b)
{
    return snap_compare_values(*(const snap_domain *const *)a, *(const snap_domain *const *)b);
}

/* Sorts domain indices by level values. C11 qsort has no context argument, so
 * sort pointers (which carry their own values) and map back to indices. */
static int sort_domain_indices(const topo_snapshot *snap, int32_t *idx, size_t n)
{
    if (n < 2)
        return 0;
    const snap_domain **ptrs = malloc(n * sizeof(*ptrs));
    if (ptrs == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++)
        ptrs[i] = &snap->domains[idx[i]];
    qsort(ptrs, n, sizeof(*ptrs), cmp_domain_ptr);
    for (size_t i = 0; i < n; i++)
        idx[i] = (int32_t)(ptrs[i] - snap->domains);
    free(ptrs);
    return 0;
}

int topo_snapshot_remove_pod_usage(topo_snapshot *snap, const char *node_name,
                                   const topo_resource *requests, size_t nrequests,
                                   topo_err *err)
{
    if (!snap->built)
        return topo_err_set(err, TOPO_EINVALID, "pod usage: remove before build");
    if (node_name == NULL || node_name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "pod usage: node name is empty");
    return apply_pod_usage(snap, node_name, requests, nrequests, -1, NULL);
}

int topo_snapshot_remove_tas_usage(topo_snapshot *snap, const char *const *values,
                                   size_t nvalues, int32_t count,
                                   const topo_resource *requests, size_t nrequests,
                                   topo_err *err)
{
    if (!snap->built)
        return topo_err_set(err, TOPO_EINVALID, "TAS usage: remove before build");
    if (nvalues == 0 || nvalues > snap->nlevels || count < 0)
        return topo_err_set(err, TOPO_EINVALID, "TAS usage: bad domain or count");
    apply_tas_usage(snap, values, nvalues, count, requests, nrequests, -1);
    return 0;
}

int topo_snapshot_build(topo_snapshot *snap, topo_err *err)
{
    if (snap->built)
        return 0;
    topo_pool *p = snap->pool;
    size_t R = snap->nresources;
    size_t dcap = 0;
    snap->domain_by_id = topo_strmap_create(snap->nnodes * 2 + 16);
    if (snap->domain_by_id == NULL)
        return topo_err_nomem(err, "snapshot");
    snap->leaves = topo_pool_calloc(p, snap->nnodes ? snap->nnodes : 1, sizeof(snap_leaf));
    /* One matrix for every leaf's room, so the engine's scan reads it in order. */
    int64_t *rooms = topo_pool_calloc(p, (snap->nnodes ? snap->nnodes : 1) * (R ? R : 1),
                                      sizeof(int64_t));
    if (snap->leaves == NULL || rooms == NULL)
        return topo_err_nomem(err, "snapshot");

    for (size_t n = 0; n < snap->nnodes; n++) {
        snap_node *node = &snap->nodes[n];
        if (!node->in_topology || !node->ready || node->unschedulable)
            continue;
        const char **values = topo_pool_calloc(p, snap->nlevels, sizeof(char *));
        if (values == NULL)
            return topo_err_nomem(err, "snapshot");
        for (size_t l = 0; l < snap->nlevels; l++)
            values[l] = node_label(node, snap->levels[l]);
        const char *leaf_id = snap->hostname_lowest ? values[snap->nlevels - 1] : NULL;
        int32_t d = ensure_domain(snap, values, (int)snap->nlevels - 1, &dcap, leaf_id, err);
        if (d < 0)
            return d;
        snap_domain *dom = &snap->domains[d];
        if (dom->leaf < 0) {
            snap_leaf *leaf = &snap->leaves[snap->nleaves];
            leaf->domain = d;
            leaf->node = (int32_t)n;
            leaf->free = topo_pool_calloc(p, R ? R : 1, sizeof(int64_t));
            leaf->tas = topo_pool_calloc(p, R ? R : 1, sizeof(int64_t));
            leaf->room = rooms + snap->nleaves * (R ? R : 1);
            if (leaf->free == NULL || leaf->tas == NULL)
                return topo_err_nomem(err, "snapshot");
            dom->leaf = (int32_t)snap->nleaves++;
        }
        snap_leaf *leaf = &snap->leaves[dom->leaf];
        leaf->nnodes++;
        if (node->ntaints > 0)
            snap->has_taints = 1;
        node->leaf = dom->leaf;
        if ((node->used = topo_pool_calloc(p, R ? R : 1, sizeof(int64_t))) == NULL)
            return topo_err_nomem(err, "snapshot");
        for (size_t i = 0; i < node->nallocatable; i++) {
            int32_t r = snap_resource_index(snap, node->allocatable[i].name);
            leaf->free[r] = topo_quantity_add(leaf->free[r], node->allocatable[i].amount);
            leaf->room[r] = topo_quantity_add(leaf->room[r], node->allocatable[i].amount);
        }
    }

    /* children lists, per-level lists, roots */
    int32_t *nchild = calloc(snap->ndomains ? snap->ndomains : 1, sizeof(int32_t));
    if (nchild == NULL)
        return topo_err_nomem(err, "snapshot");
    for (size_t d = 0; d < snap->ndomains; d++)
        if (snap->domains[d].parent >= 0)
            nchild[snap->domains[d].parent]++;
    for (size_t d = 0; d < snap->ndomains; d++) {
        if (nchild[d] > 0) {
            snap->domains[d].children = topo_pool_calloc(p, (size_t)nchild[d], sizeof(int32_t));
            if (snap->domains[d].children == NULL) {
                free(nchild);
                return topo_err_nomem(err, "snapshot");
            }
        }
    }
    free(nchild);
    snap->level_ndomains = topo_pool_calloc(p, snap->nlevels, sizeof(size_t));
    snap->level_domains = topo_pool_calloc(p, snap->nlevels, sizeof(int32_t *));
    if (snap->level_ndomains == NULL || snap->level_domains == NULL)
        return topo_err_nomem(err, "snapshot");
    for (size_t d = 0; d < snap->ndomains; d++) {
        snap_domain *dom = &snap->domains[d];
        snap->level_ndomains[dom->level]++;
        if (dom->parent >= 0) {
            snap_domain *par = &snap->domains[dom->parent];
            par->children[par->nchildren++] = (int32_t)d;
        }
    }
    for (size_t l = 0; l < snap->nlevels; l++) {
        snap->level_domains[l] =
            topo_pool_calloc(p, snap->level_ndomains[l] ? snap->level_ndomains[l] : 1, sizeof(int32_t));
        if (snap->level_domains[l] == NULL)
            return topo_err_nomem(err, "snapshot");
        snap->level_ndomains[l] = 0;
    }
    for (size_t d = 0; d < snap->ndomains; d++) {
        int l = snap->domains[d].level;
        snap->level_domains[l][snap->level_ndomains[l]++] = (int32_t)d;
    }
    for (size_t l = 0; l < snap->nlevels; l++)
        if (sort_domain_indices(snap, snap->level_domains[l], snap->level_ndomains[l]) != 0)
            return topo_err_nomem(err, "snapshot");
    for (size_t l = 0; l < snap->nlevels; l++)
        for (size_t i = 0; i < snap->level_ndomains[l]; i++)
            snap->domains[snap->level_domains[l][i]].rank = (int32_t)i;
    for (size_t d = 0; d < snap->ndomains; d++)
        if (sort_domain_indices(snap, snap->domains[d].children,
                                (size_t)snap->domains[d].nchildren) != 0)
            return topo_err_nomem(err, "snapshot");
    snap->roots = snap->level_domains[0];
    snap->nroots = snap->level_ndomains[0];
    snap_agg_reset(snap);
    snap->built = 1;

    for (pending_usage *u = snap->pending; u != NULL; u = u->next) {
        if (u->tas)
            apply_tas_usage(snap, (const char *const *)u->values, u->nvalues, u->count,
                            u->requests, u->nrequests, +1);
        else
            apply_pod_usage(snap, u->node, u->requests, u->nrequests, +1, NULL);
    }
    snap->pending = NULL;
    snap->pending_tail = &snap->pending;
    return 0;
}

const char *topo_snapshot_topology_name(const topo_snapshot *snap)
{
    return snap->topology_name;
}

size_t topo_snapshot_level_count(const topo_snapshot *snap)
{
    return snap->nlevels;
}

const char *topo_snapshot_level(const topo_snapshot *snap, size_t i)
{
    return i < snap->nlevels ? snap->levels[i] : NULL;
}

int topo_snapshot_level_index(const topo_snapshot *snap, const char *label)
{
    for (size_t i = 0; i < snap->nlevels; i++)
        if (strcmp(snap->levels[i], label) == 0)
            return (int)i;
    return -1;
}

size_t topo_snapshot_node_count(const topo_snapshot *snap)
{
    return snap->nnodes;
}

int topo_snapshot_node_by_hostname(const topo_snapshot *snap, const char *hostname,
                                   topo_node_spec *out)
{
    int32_t i = hostname != NULL ? topo_strmap_get(snap->node_by_hostname, hostname) : -1;
    if (i < 0)
        return 0;
    const snap_node *n = &snap->nodes[i];
    memset(out, 0, sizeof(*out));
    out->name = n->name;
    out->labels = n->labels;
    out->nlabels = n->nlabels;
    out->taints = n->taints;
    out->ntaints = n->ntaints;
    out->unschedulable = n->unschedulable;
    out->ready = n->ready;
    out->ready_missing = n->ready_missing;
    return 1;
}

const char *topo_snapshot_node_label(const topo_snapshot *snap, const char *node_name,
                                     const char *key)
{
    if (node_name == NULL || key == NULL)
        return NULL;
    int32_t i = topo_strmap_get(snap->node_by_name, node_name);
    if (i < 0)
        return NULL;
    const snap_node *n = &snap->nodes[i];
    for (size_t k = 0; k < n->nlabels; k++)
        if (strcmp(n->labels[k].key, key) == 0)
            return n->labels[k].value;
    return NULL;
}

typedef struct walk_agg {
    size_t nodes;
    int64_t capacity;
    int64_t free;
    int64_t max_node_free;
    int64_t pods_free;
} walk_agg;

static int walk_domain(const topo_snapshot *snap, int32_t d, walk_agg *aggs, topo_domain_visit_fn fn, void *payload)
{
    const snap_domain *dom = &snap->domains[d];
    topo_domain_view view;
    memset(&view, 0, sizeof(view));
    view.level = (size_t)dom->level;
    view.value = dom->values[dom->level];
    view.nodes = aggs[d].nodes;
    view.capacity = aggs[d].capacity;
    view.free = aggs[d].free;
    view.max_node_free = aggs[d].max_node_free;
    view.pods_free = aggs[d].pods_free;
    int rc = fn(&view, payload);
    if (rc != 0)
        return rc;
    for (int32_t c = 0; c < dom->nchildren; c++)
        if ((rc = walk_domain(snap, dom->children[c], aggs, fn, payload)) != 0)
            return rc;
    return 0;
}

int topo_snapshot_walk(const topo_snapshot *snap, const char *resource, topo_domain_visit_fn fn,
                       void *payload)
{
    if (!snap->built)
        return TOPO_EINVALID;
    int32_t r = resource ? snap_resource_index(snap, resource) : -1;
    int32_t pods = snap_resource_index(snap, PODS_RESOURCE);
    walk_agg *aggs = calloc(snap->ndomains ? snap->ndomains : 1, sizeof(*aggs));
    if (aggs == NULL)
        return TOPO_ENOMEM;
    /* Nodes into their leaves, then fold upward level by level. */
    for (size_t n = 0; n < snap->nnodes; n++) {
        const snap_node *node = &snap->nodes[n];
        if (node->leaf < 0)
            continue;
        const snap_leaf *leaf = &snap->leaves[node->leaf];
        walk_agg *a = &aggs[leaf->domain];
        a->nodes++;
        if (r < 0)
            continue;
        int64_t cap = 0;
        for (size_t i = 0; i < node->nallocatable; i++)
            if (node->allocatable[i].name == snap->resource_names[r])
                cap = topo_quantity_add(cap, node->allocatable[i].amount);
        /* TAS usage is known per leaf; it is per node when the leaf is one. */
        int64_t room = topo_quantity_sub(topo_quantity_sub(cap, node->used[r]),
                                         leaf->nnodes == 1 ? leaf->tas[r] : 0);
        a->capacity = topo_quantity_add(a->capacity, cap);
        if (room > a->max_node_free)
            a->max_node_free = room;
    }
    for (size_t l = 0; l < snap->nleaves; l++) {
        const snap_leaf *leaf = &snap->leaves[l];
        walk_agg *a = &aggs[leaf->domain];
        if (r >= 0) {
            int64_t fr = topo_quantity_sub(leaf->free[r], leaf->tas[r]);
            a->free = fr > 0 ? fr : 0;
        }
        if (pods >= 0) {
            int64_t pf = topo_quantity_sub(leaf->free[pods], leaf->tas[pods]);
            a->pods_free = pf > 0 ? pf : 0;
        }
    }
    for (size_t l = snap->nlevels; l-- > 1;) {
        for (size_t i = 0; i < snap->level_ndomains[l]; i++) {
            int32_t d = snap->level_domains[l][i];
            int32_t par = snap->domains[d].parent;
            aggs[par].nodes += aggs[d].nodes;
            aggs[par].capacity = topo_quantity_add(aggs[par].capacity, aggs[d].capacity);
            aggs[par].free = topo_quantity_add(aggs[par].free, aggs[d].free);
            aggs[par].pods_free = topo_quantity_add(aggs[par].pods_free, aggs[d].pods_free);
            if (aggs[d].max_node_free > aggs[par].max_node_free)
                aggs[par].max_node_free = aggs[d].max_node_free;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < snap->nroots && rc == 0; i++)
        rc = walk_domain(snap, snap->roots[i], aggs, fn, payload);
    free(aggs);
    return rc;
}
