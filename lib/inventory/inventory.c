/* The inventory object: batches and their commit, accessors, and the bridge
 * to a topo_snapshot. Reading documents into batches is load.c's. */
#include "inventory_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"

/* --- batches --------------------------------------------------------------------- */

int32_t inv_batch_find_node(const inv_batch *b, const char *name)
{
    return b->names == NULL ? -1 : topo_strmap_get(b->names, name);
}

int inv_batch_add_node(inv_batch *b, const topo_node_spec *node, const char *path,
                       topo_err *err)
{
    if ((b->inv != NULL && topo_inventory_find_node(b->inv, node->name) >= 0) ||
        inv_batch_find_node(b, node->name) >= 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: duplicate node name \"%s\"", path,
                            node->name);
    if (b->nnodes >= INT32_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "%s: too many nodes", path);
    if (b->names == NULL && (b->names = topo_strmap_create(64)) == NULL)
        return topo_err_nomem(err, NULL);
    if (topo_array_reserve((void **)&b->nodes, &b->capnodes, b->nnodes + 1,
                           sizeof(*b->nodes)) < 0 ||
        topo_strmap_put(b->names, node->name, (int32_t)b->nnodes) < 0)
        return topo_err_nomem(err, NULL);
    b->nodes[b->nnodes++] = *node;
    return 0;
}

int inv_batch_add_pod(inv_batch *b, const topo_pod_usage *pod, topo_err *err)
{
    if (topo_array_reserve((void **)&b->pods, &b->cappods, b->npods + 1, sizeof(*b->pods)) < 0)
        return topo_err_nomem(err, NULL);
    b->pods[b->npods++] = *pod;
    return 0;
}

void inv_batch_dispose(inv_batch *b)
{
    topo_strmap_free(b->names);
    free(b->nodes);
    free(b->pods);
    memset(b, 0, sizeof(*b));
}

int inv_batch_commit(topo_inventory *inv, const inv_batch *b, topo_err *err)
{
    size_t ntas = 0;
    for (size_t i = 0; i < b->npods; i++)
        ntas += b->pods[i].tas ? 1 : 0;
    if (topo_array_reserve((void **)&inv->nodes, &inv->capnodes, inv->nnodes + b->nnodes,
                           sizeof(*inv->nodes)) < 0 ||
        topo_array_reserve((void **)&inv->pods, &inv->cappods, inv->npods + (b->npods - ntas),
                           sizeof(*inv->pods)) < 0 ||
        topo_array_reserve((void **)&inv->tas_pods, &inv->captas_pods, inv->ntas_pods + ntas,
                           sizeof(*inv->tas_pods)) < 0)
        return topo_err_nomem(err, NULL);
    if (inv->nnodes + b->nnodes > INT32_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "too many nodes");
    for (size_t i = 0; i < b->nnodes; i++) {
        if (topo_strmap_put(inv->node_index, b->nodes[i].name, (int32_t)(inv->nnodes + i)) < 0)
            return topo_err_nomem(err, NULL);
    }
    if (b->nnodes > 0)
        memcpy(inv->nodes + inv->nnodes, b->nodes, b->nnodes * sizeof(*b->nodes));
    inv->nnodes += b->nnodes;
    for (size_t i = 0; i < b->npods; i++) {
        if (b->pods[i].tas)
            inv->tas_pods[inv->ntas_pods++] = b->pods[i];
        else
            inv->pods[inv->npods++] = b->pods[i];
    }
    inv->stats.pods_seen += b->seen;
    inv->stats.pods_unbound += b->unbound;
    inv->stats.pods_terminal += b->terminal;
    return 0;
}

/* --- create / free / accessors --------------------------------------------------------- */

int topo_inventory_create(topo_inventory **out, topo_err *err)
{
    topo_inventory *inv = NULL;
    int error = 0;

    *out = NULL;
    if ((inv = calloc(1, sizeof(*inv))) == NULL || (inv->pool = topo_pool_create()) == NULL ||
        (inv->node_index = topo_strmap_create(256)) == NULL) {
        error = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    *out = inv;
    inv = NULL;

cleanup:
    topo_inventory_free(inv);
    return error;
}

void topo_inventory_free(topo_inventory *inv)
{
    if (inv == NULL)
        return;
    topo_strmap_free(inv->node_index);
    free(inv->nodes);
    free(inv->pods);
    free(inv->tas_pods);
    topo_pool_free(inv->pool);
    free(inv);
}

size_t topo_inventory_node_count(const topo_inventory *inv)
{
    return inv->nnodes;
}

const topo_node_spec *topo_inventory_node(const topo_inventory *inv, size_t i)
{
    return i < inv->nnodes ? &inv->nodes[i] : NULL;
}

int32_t topo_inventory_find_node(const topo_inventory *inv, const char *name)
{
    return topo_strmap_get(inv->node_index, name);
}

size_t topo_inventory_pod_count(const topo_inventory *inv)
{
    return inv->npods;
}

const topo_pod_usage *topo_inventory_pod(const topo_inventory *inv, size_t i)
{
    return i < inv->npods ? &inv->pods[i] : NULL;
}

size_t topo_inventory_tas_pod_count(const topo_inventory *inv)
{
    return inv->ntas_pods;
}

const topo_pod_usage *topo_inventory_tas_pod(const topo_inventory *inv, size_t i)
{
    return i < inv->ntas_pods ? &inv->tas_pods[i] : NULL;
}

void topo_inventory_get_stats(const topo_inventory *inv, topo_inventory_stats *out)
{
    *out = inv->stats;
}

/* --- snapshot ---------------------------------------------------------------------------- */

static const char *label_of(const topo_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

/* The leaf domain values of a node, as topo_snapshot_add_tas_usage wants
 * them; 0 when the node is outside the topology or the flavor. */
static int leaf_values(const char **values, size_t *nvalues, const topo_node_spec *n,
                       const topo_snapshot_opts *o)
{
    for (size_t i = 0; i < o->nflavor_labels; i++) {
        const char *v = label_of(n, o->flavor_labels[i].key);
        if (v == NULL || strcmp(v, o->flavor_labels[i].value) != 0)
            return 0;
    }
    for (size_t i = 0; i < o->nlevels; i++)
        if ((values[i] = label_of(n, o->levels[i])) == NULL)
            return 0;
    if (o->nlevels > 0 && strcmp(o->levels[o->nlevels - 1], TOPO_KUEUE_HOSTNAME_LABEL) == 0) {
        values[0] = values[o->nlevels - 1];
        *nvalues = 1;
    } else {
        *nvalues = o->nlevels;
    }
    return 1;
}

int topo_inventory_snapshot(topo_snapshot **out, const topo_inventory *inv,
                            const topo_inventory_snapshot_opts *opts, size_t *out_ignored_pods,
                            topo_err *err)
{
    topo_snapshot *snap = NULL;
    const char *values[TOPO_MAX_LEVELS];
    size_t ignored = 0;
    int error;

    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "snapshot options: missing");
    if (opts->snapshot.nlevels > TOPO_MAX_LEVELS)
        return topo_err_set(err, TOPO_EINVALID, "levels: at most %d allowed", TOPO_MAX_LEVELS);
    if ((error = topo_snapshot_create(&snap, &opts->snapshot, err)) < 0)
        goto cleanup;
    for (size_t i = 0; i < inv->nnodes; i++) {
        if ((error = topo_snapshot_add_node(snap, &inv->nodes[i], err)) < 0) {
            topo_err_wrap(err, "node \"%s\"", inv->nodes[i].name);
            goto cleanup;
        }
    }
    /* Usage after the build, so that pods on unknown nodes are reported. */
    if ((error = topo_snapshot_build(snap, err)) < 0)
        goto cleanup;
    for (size_t i = 0; i < inv->npods; i++) {
        const topo_pod_usage *p = &inv->pods[i];
        int ign = 0;
        if ((error = topo_snapshot_add_pod_usage(snap, p->node, p->requests, p->nrequests, &ign,
                                                 err)) < 0) {
            topo_err_wrap(err, "pod %s/%s", p->namespace_name, p->name);
            goto cleanup;
        }
        ignored += ign ? 1 : 0;
    }
    if (!opts->skip_tas_pods) {
        for (size_t i = 0; i < inv->ntas_pods; i++) {
            const topo_pod_usage *p = &inv->tas_pods[i];
            int32_t idx = topo_inventory_find_node(inv, p->node);
            size_t nvalues = 0;
            if (idx < 0 || !inv->nodes[idx].ready || inv->nodes[idx].unschedulable ||
                !leaf_values(values, &nvalues, &inv->nodes[idx], &opts->snapshot)) {
                ignored++;
                continue;
            }
            error = topo_snapshot_add_tas_usage(snap, values, nvalues, 1, p->requests,
                                                p->nrequests, err);
            if (error == TOPO_ENOTFOUND) {
                ignored++;
                topo_err_clear(err);
                error = 0;
                continue;
            }
            if (error < 0) {
                topo_err_wrap(err, "pod %s/%s", p->namespace_name, p->name);
                goto cleanup;
            }
        }
    }
    *out = snap;
    snap = NULL;
    if (out_ignored_pods != NULL)
        *out_ignored_pods = ignored;

cleanup:
    topo_snapshot_free(snap);
    return error;
}
