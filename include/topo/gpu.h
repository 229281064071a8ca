/* GPU facts from the Node objects themselves, as NVIDIA GPU Feature
 * Discovery labels them: `nvidia.com/gpu.clique` ("<ClusterUUID>.<CliqueID>",
 * set on multi-node NVLink systems such as GB200 NVL72 once Fabric Manager
 * is up) is the node's NVLink domain. A node without it states none: that
 * a node no source gives an NVLink domain is its own (HGX and DGX systems,
 * NVSwitch inside the node) is the plan's rule (topo_plan_opts.nvlink_own_node),
 * applied after every source, so that it never outranks one that knows.
 *
 * Every node becomes a facts host under its node name. GPU product and
 * count are not kept: nothing downstream uses them yet. */
#ifndef TOPO_GPU_H
#define TOPO_GPU_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/facts.h"
#include "topo/types.h"

#define TOPO_GPU_CLIQUE_LABEL "nvidia.com/gpu.clique"

/* What the nodes read so far held (accumulated by each call). */
typedef struct topo_gpu_stats {
    size_t nodes;
    size_t gpu_nodes;        /* with GFD's GPU labels */
    size_t cliques;          /* nodes with a clique label */
} topo_gpu_stats;

/* One node by name and labels. stats may be NULL. 0, TOPO_EINVALID
 * (empty name or clique), or a facts error (TOPO_ECONFLICT when the node
 * was given another NVLink domain before). */
int topo_gpu_add_labels(topo_gpu_stats *stats, topo_facts *facts, const char *node,
                        const topo_kv *labels, size_t nlabels, topo_err *err) TOPO_MUST_CHECK;

/* A v1 Node object as the API server returns it (metadata.name,
 * metadata.labels), whole or metadata only (kind PartialObjectMetadata,
 * apiVersion meta.k8s.io/v1: what a metadata-only list or watch gives); a
 * kind other than those is TOPO_EINVALID naming it. path names it in
 * messages ("items[3]", or ""). */
int topo_gpu_add_node(topo_gpu_stats *stats, topo_facts *facts, const json_t *node,
                      const char *path, topo_err *err) TOPO_MUST_CHECK;

/* A Node, or a NodeList (or `kubectl get nodes -o json`'s List) of them,
 * or their metadata only: a PartialObjectMetadataList (what `kubectl get
 * --raw /api/v1/nodes -H 'Accept: TOPO_K8S_ACCEPT_METADATA_LIST'` saves)
 * or a PartialObjectMetadata; as JSON text of at most TOPO_MAX_K8S_RESPONSE
 * bytes; source names it in messages. */
int topo_gpu_parse(topo_gpu_stats *stats, topo_facts *facts, const char *text, size_t len,
                   const char *source, topo_err *err) TOPO_MUST_CHECK;

#endif
