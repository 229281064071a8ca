/* Synthetic GPU clusters: datacenter → spine → leaf → rack → NVLink domain →
 * node, labelled as topo-sync labels real ones, with optional partial usage
 * by bound non-TAS pods. Deterministic: the same options give the same
 * cluster byte for byte (usage draws come from splitmix64, not rand()).
 * Used by `topoassign generate` and the engine benchmark. */
#ifndef TOPO_GENERATE_H
#define TOPO_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"
#include "topo/model.h"
#include "topo/pool.h"

#define TOPO_GEN_LABEL_DATACENTER "topology.topo.io/datacenter"
#define TOPO_GEN_LABEL_SPINE "topology.topo.io/spine"
#define TOPO_GEN_LABEL_BLOCK "topology.topo.io/block" /* = spine, Kueue's "block" */
#define TOPO_GEN_LABEL_LEAF "topology.topo.io/leaf"
#define TOPO_GEN_LABEL_RACK "topology.topo.io/rack"
#define TOPO_GEN_LABEL_NVLINK "topology.topo.io/nvlink"
#define TOPO_GEN_LABEL_HOSTNAME TOPO_KUEUE_HOSTNAME_LABEL /* the one spelling */
#define TOPO_GEN_GPU_RESOURCE "nvidia.com/gpu"

/* The defaults topo_gen_opts_init fills in (plain literals: topoassign's
 * help prints them). */
#define TOPO_GEN_DATACENTERS_DEFAULT 1
#define TOPO_GEN_LEAVES_PER_SPINE_DEFAULT 8
#define TOPO_GEN_RACKS_PER_LEAF_DEFAULT 4
#define TOPO_GEN_NODES_PER_RACK_DEFAULT 8
#define TOPO_GEN_NVLINK_NODES_DEFAULT 1 /* single-node HGX: nvlink = hostname */
#define TOPO_GEN_GPUS_PER_NODE_DEFAULT 8
#define TOPO_GEN_USAGE_FRACTION_DEFAULT 0.5

/* Unlike other options structs, start from topo_gen_opts_init: 0 is a
 * value of usage_fraction (no busy node), not "the default". */
typedef struct topo_gen_opts {
    uint32_t nodes;            /* required, 1..TOPO_MAX_GEN_NODES */
    uint32_t datacenters;
    uint32_t spines_per_dc;    /* 0: as many as the nodes need */
    uint32_t leaves_per_spine;
    uint32_t racks_per_leaf;
    uint32_t nodes_per_rack;
    uint32_t nvlink_nodes;     /* nodes per NVLink domain, divides nodes_per_rack */
    uint32_t gpus_per_node;    /* 1..TOPO_MAX_GEN_GPUS */
    int with_usage;            /* add bound non-TAS pods */
    uint64_t usage_seed;
    double usage_fraction;     /* 0..1: chance that a node is busy; a busy node runs
                                * one pod using all its GPUs (3 in 4) or 1..G-1 */
} topo_gen_opts;

/* Fills the TOPO_GEN_*_DEFAULT values (and nodes = 0, which must be set). */
void topo_gen_opts_init(topo_gen_opts *opts);

/* One bound, running non-TAS pod. */
typedef struct topo_gen_pod {
    const char *namespace_name;
    const char *name;
    size_t node;                   /* index into the cluster's nodes */
    uint32_t gpus;
    const topo_resource *requests; /* Kueue units */
    size_t nrequests;
} topo_gen_pod;

typedef struct topo_gen_cluster {
    topo_gen_opts shape;        /* the options, spines_per_dc resolved */
    topo_node_spec *nodes;      /* labels and allocatable in Kueue units */
    size_t nnodes;
    topo_gen_pod *pods;
    size_t npods;
    uint64_t gpus_total;
    uint64_t gpus_used;
} topo_gen_cluster;

/* Generates the cluster into pool. TOPO_EINVALID (message names the option)
 * for options out of range or a shape too small for the nodes, TOPO_ENOMEM. */
int topo_gen_cluster_build(topo_gen_cluster **out, const topo_gen_opts *opts, topo_pool *pool,
                           topo_err *err) TOPO_MUST_CHECK;

/* Writes the nodes as a v1 List of Nodes (`kubectl get nodes -o json`
 * shape), or the pods as a v1 List of Pods (`kubectl get pods -A -o json`).
 * path NULL or "-" writes to stdout. TOPO_EIO, TOPO_ENOMEM. */
int topo_gen_write_nodes(const topo_gen_cluster *cluster, const char *path,
                         topo_err *err) TOPO_MUST_CHECK;
int topo_gen_write_pods(const topo_gen_cluster *cluster, const char *path,
                        topo_err *err) TOPO_MUST_CHECK;

/* Builds a snapshot of the cluster over the given level labels (for
 * instance block/rack/hostname), with the pods charged as usage. The caller
 * frees it with topo_snapshot_free. */
int topo_gen_snapshot(topo_snapshot **out, const topo_gen_cluster *cluster,
                      const char *topology_name, const char *const *levels, size_t nlevels,
                      topo_err *err) TOPO_MUST_CHECK;

#endif
