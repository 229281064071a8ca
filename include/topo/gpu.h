/* GPU facts from the Node objects themselves, as NVIDIA GPU Feature
 * Discovery labels them: `nvidia.com/gpu.clique` ("<ClusterUUID>.<CliqueID>",
 * set on multi-node NVLink systems such as GB200 NVL72 once Fabric Manager
 * is up) is the node's NVLink domain. Without it, a GPU node (one GFD
 * labelled with nvidia.com/gpu.count, .product or .present=true) of a
 * single-node NVLink system (HGX, DGX) is its own NVLink domain: its
 * hostname (the kubernetes.io/hostname label, else the node name), when
 * hostname_fallback is set. Nodes without GPUs state no NVLink domain.
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

typedef struct topo_gpu_opts {
    int hostname_fallback; /* a GPU node without a clique is its own domain */
} topo_gpu_opts;

/* What the nodes read so far held (accumulated by each call). */
typedef struct topo_gpu_stats {
    size_t nodes;
    size_t gpu_nodes;        /* with GFD's GPU labels */
    size_t cliques;          /* nodes with a clique label */
    size_t hostname_domains; /* GPU nodes given their hostname as domain */
} topo_gpu_stats;

/* One node by name and labels. opts and stats may be NULL. 0, TOPO_EINVALID
 * (empty name or clique), or a facts error (TOPO_ECONFLICT when the node
 * was given another NVLink domain before). */
int topo_gpu_add_labels(topo_gpu_stats *stats, topo_facts *facts, const char *node,
                        const topo_kv *labels, size_t nlabels, const topo_gpu_opts *opts,
                        topo_err *err) TOPO_MUST_CHECK;

/* A v1 Node object as the API server returns it (metadata.name,
 * metadata.labels), whole or metadata only (kind PartialObjectMetadata,
 * apiVersion meta.k8s.io/v1: what a metadata-only list or watch gives); a
 * kind other than those is TOPO_EINVALID naming it. path names it in
 * messages ("items[3]", or ""). */
int topo_gpu_add_node(topo_gpu_stats *stats, topo_facts *facts, const json_t *node,
                      const char *path, const topo_gpu_opts *opts, topo_err *err) TOPO_MUST_CHECK;

/* A Node, or a NodeList (or `kubectl get nodes -o json`'s List) of them,
 * or their metadata only: a PartialObjectMetadataList (what `kubectl get
 * --raw /api/v1/nodes -H 'Accept: TOPO_K8S_ACCEPT_METADATA_LIST'` saves)
 * or a PartialObjectMetadata; as JSON text of at most TOPO_MAX_K8S_RESPONSE
 * bytes; source names it in messages. */
int topo_gpu_parse(topo_gpu_stats *stats, topo_facts *facts, const char *text, size_t len,
                   const char *source, const topo_gpu_opts *opts, topo_err *err) TOPO_MUST_CHECK;

#endif
