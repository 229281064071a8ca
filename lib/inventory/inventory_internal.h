/* The inventory's representation, shared by its loaders. */
#ifndef TOPO_INVENTORY_INTERNAL_H
#define TOPO_INVENTORY_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "topo/inventory.h"
#include "topo/strmap.h"

/* A batch of nodes and pods read from one document, committed to the
 * inventory only when the whole document decoded. */
typedef struct inv_batch {
    const topo_inventory *inv; /* for duplicate names across documents */
    topo_strmap *names;        /* this batch's node names → index */
    topo_node_spec *nodes;
    size_t nnodes, capnodes;
    topo_pod_usage *pods; /* non-TAS and TAS together; tas flag tells */
    size_t npods, cappods;
    size_t seen, unbound, terminal;
} inv_batch;

struct topo_inventory {
    topo_pool *pool; /* every string and array the inventory hands out */
    topo_node_spec *nodes;
    size_t nnodes, capnodes;
    topo_strmap *node_index; /* name → index into nodes */
    topo_pod_usage *pods;
    size_t npods, cappods;
    topo_pod_usage *tas_pods;
    size_t ntas_pods, captas_pods;
    topo_inventory_stats stats;
};

/* Adds a node; a name already in the batch or the inventory is TOPO_EINVALID
 * "<path>: duplicate node name \"x\"". */
int inv_batch_add_node(inv_batch *b, const topo_node_spec *node, const char *path,
                       topo_err *err);
int inv_batch_add_pod(inv_batch *b, const topo_pod_usage *pod, topo_err *err);
/* Index of a node of this batch, or -1. */
int32_t inv_batch_find_node(const inv_batch *b, const char *name);
void inv_batch_dispose(inv_batch *b);
/* Moves a decoded batch into the inventory; all-or-nothing. */
int inv_batch_commit(topo_inventory *inv, const inv_batch *b, topo_err *err);

/* Document decoders; messages carry field paths, the caller adds the file. */
int inv_decode_kube_nodes(inv_batch *b, const json_t *root, topo_pool *pool, topo_err *err);
int inv_decode_kube_pods(inv_batch *b, const json_t *root, topo_pool *pool, topo_err *err);
/* A fixture document; pods only when with_pods. */
int inv_decode_fixture(inv_batch *b, const json_t *root, int with_nodes, int with_pods,
                       topo_pool *pool, topo_err *err);

#endif
