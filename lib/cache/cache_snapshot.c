/* The engine's snapshot from the cache: nodes, pod usage and reservations,
 * all from one read, charged exactly as topo_inventory_snapshot charges the
 * same objects loaded from files. */
#include "cache_internal.h"

#include <string.h>

#include "topo/array.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"
#include "topo/podreq.h"
#include "topo/strmap.h"

/* What the usage passes need to know about a node. */
typedef struct node_info {
    int eligible_for_tas;  /* Ready and schedulable */
    const char **leaf;     /* leaf values as topo_snapshot_add_tas_usage takes them, or NULL */
    size_t nleaf;
} node_info;

typedef struct build {
    topo_snapshot *snap;
    const topo_cache_snapshot_opts *opts;
    topo_pool *pool; /* node_info and their strings */
    node_info *nodes;
    size_t nnodes, cap;
    topo_strmap *by_name;     /* node name → index */
    topo_strmap *by_hostname; /* kubernetes.io/hostname label → index */
    size_t ignored;
    topo_err *err;
} build;

static const char *label_of(const topo_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

/* The node's leaf in the snapshot's topology (as lib/inventory computes it):
 * NULL when it misses a flavor or a level label. */
static int leaf_values(node_info *info, const topo_node_spec *n, const topo_snapshot_opts *o,
                       topo_pool *pool)
{
    const char **v;
    info->leaf = NULL;
    info->nleaf = 0;
    for (size_t i = 0; i < o->nflavor_labels; i++) {
        const char *fv = label_of(n, o->flavor_labels[i].key);
        if (fv == NULL || strcmp(fv, o->flavor_labels[i].value) != 0)
            return 0;
    }
    if (o->nlevels == 0)
        return 0;
    if ((v = topo_pool_calloc(pool, o->nlevels, sizeof(*v))) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < o->nlevels; i++) {
        const char *lv = label_of(n, o->levels[i]);
        if (lv == NULL)
            return 0;
        if ((v[i] = topo_pool_strdup(pool, lv)) == NULL)
            return TOPO_ENOMEM;
    }
    if (strcmp(o->levels[o->nlevels - 1], TOPO_KUEUE_HOSTNAME_LABEL) == 0) {
        v[0] = v[o->nlevels - 1];
        info->nleaf = 1;
    } else {
        info->nleaf = o->nlevels;
    }
    info->leaf = v;
    return 0;
}

static int on_node(const topo_node_spec *n, const char *rv, void *payload)
{
    build *b = payload;
    const char *host;
    int error;
    (void)rv;

    if ((error = topo_snapshot_add_node(b->snap, n, b->err)) < 0)
        return topo_err_wrap(b->err, "node \"%s\"", n->name);
    if ((error = topo_pool_array_reserve(b->pool, (void **)&b->nodes, &b->cap, b->nnodes,
                                         b->nnodes + 1, sizeof(*b->nodes))) != 0)
        return topo_err_set(b->err, error, "cache: %s", topo_strerror(error));
    if (b->nnodes >= INT32_MAX)
        return topo_err_set(b->err, TOPO_ELIMIT, "cache: too many nodes");
    node_info *info = &b->nodes[b->nnodes];
    char *name = topo_pool_strdup(b->pool, n->name);
    info->eligible_for_tas = n->ready && !n->unschedulable;
    if (name == NULL || leaf_values(info, n, &b->opts->snapshot, b->pool) < 0 ||
        topo_strmap_put(b->by_name, name, (int32_t)b->nnodes) < 0)
        return topo_err_set(b->err, TOPO_ENOMEM, "cache: out of memory");
    if ((host = label_of(n, TOPO_KUEUE_HOSTNAME_LABEL)) != NULL) {
        char *h = topo_pool_strdup(b->pool, host);
        if (h == NULL || topo_strmap_put(b->by_hostname, h, (int32_t)b->nnodes) < 0)
            return topo_err_set(b->err, TOPO_ENOMEM, "cache: out of memory");
    }
    b->nnodes++;
    return 0;
}

static int on_pod(const topo_cache_pod *p, void *payload)
{
    build *b = payload;
    int error, ign = 0;

    if (p->node_name[0] == '\0' || topo_pod_phase_finished(p->phase))
        return 0; /* not usage */
    if (!p->tas) {
        if ((error = topo_snapshot_add_pod_usage(b->snap, p->node_name, p->requests,
                                                 p->nrequests, &ign, b->err)) < 0)
            return topo_err_wrap(b->err, "pod %s/%s", p->namespace_name, p->name);
        b->ignored += ign ? 1 : 0;
        return 0;
    }
    if (b->opts->skip_tas_pods)
        return 0;
    int32_t idx = topo_strmap_get(b->by_name, p->node_name);
    if (idx < 0 || !b->nodes[idx].eligible_for_tas || b->nodes[idx].leaf == NULL) {
        b->ignored++;
        return 0;
    }
    error = topo_snapshot_add_tas_usage(b->snap, b->nodes[idx].leaf, b->nodes[idx].nleaf, 1,
                                        p->requests, p->nrequests, b->err);
    if (error == TOPO_ENOTFOUND) {
        b->ignored++;
        topo_err_clear(b->err);
        return 0;
    }
    if (error < 0)
        return topo_err_wrap(b->err, "pod %s/%s", p->namespace_name, p->name);
    return 0;
}

static int same_levels(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

static int on_reserved(const topo_cache_reserved *r, void *payload)
{
    build *b = payload;
    const topo_snapshot_opts *o = &b->opts->snapshot;
    const char *const *values = NULL;
    size_t nvalues = 0;
    int error;

    if (same_levels(r->levels, r->nlevels, o->levels, o->nlevels)) {
        values = r->values;
        nvalues = r->nvalues;
    } else if (r->nassignment_levels == 1 && r->nvalues == 1 &&
               strcmp(r->assignment_levels[0], TOPO_KUEUE_HOSTNAME_LABEL) == 0) {
        /* Another topology's hostname assignment: the node is the same. */
        int32_t idx = topo_strmap_get(b->by_hostname, r->values[0]);
        if (idx >= 0 && b->nodes[idx].leaf != NULL) {
            values = b->nodes[idx].leaf;
            nvalues = b->nodes[idx].nleaf;
        }
    }
    if (values == NULL) {
        b->ignored += (size_t)r->count;
        return 0;
    }
    error = topo_snapshot_add_tas_usage(b->snap, values, nvalues, r->count, r->requests,
                                        r->nrequests, b->err);
    if (error == TOPO_ENOTFOUND) {
        b->ignored += (size_t)r->count;
        topo_err_clear(b->err);
        return 0;
    }
    if (error < 0)
        return topo_err_wrap(b->err, "reservation %s", r->reservation_id);
    return 0;
}

int topo_cache_snapshot(topo_snapshot **out, topo_cache *cache,
                        const topo_cache_snapshot_opts *opts, size_t *out_ignored,
                        topo_err *err)
{
    build b;
    int error;

    *out = NULL;
    if (out_ignored != NULL)
        *out_ignored = 0;
    if (cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "snapshot options: missing");
    if (opts->snapshot.nlevels > TOPO_MAX_LEVELS)
        return topo_err_set(err, TOPO_EINVALID, "levels: at most %d allowed", TOPO_MAX_LEVELS);
    memset(&b, 0, sizeof(b));
    b.opts = opts;
    b.err = err;
    if ((b.pool = topo_pool_create()) == NULL || (b.by_name = topo_strmap_create(1024)) == NULL ||
        (b.by_hostname = topo_strmap_create(1024)) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "cache: out of memory");
        goto cleanup;
    }
    if ((error = topo_snapshot_create(&b.snap, &opts->snapshot, err)) < 0)
        goto cleanup;
    /* One read: nodes, pods and reservations agree with each other. */
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        goto cleanup;
    if ((error = topo_cache_foreach_node(cache, on_node, &b, err)) == 0 &&
        /* Usage after the build, so that pods on unknown nodes are reported. */
        (error = topo_snapshot_build(b.snap, err)) == 0 &&
        (error = topo_cache_foreach_pod(cache, on_pod, &b, err)) == 0 && !opts->skip_reservations)
        error = topo_cache_foreach_reserved(cache, opts->now, on_reserved, &b, err);
    error = cache_op_end(cache, CACHE_OP_READ, error, err);
    if (error < 0)
        goto cleanup;
    *out = b.snap;
    b.snap = NULL;
    if (out_ignored != NULL)
        *out_ignored = b.ignored;

cleanup:
    topo_snapshot_free(b.snap);
    topo_strmap_free(b.by_name);
    topo_strmap_free(b.by_hostname);
    topo_pool_free(b.pool);
    return error;
}
