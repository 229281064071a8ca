/* What other schedulers read, from a built plan (topo/plan.h): Kueue's
 * Topology and ResourceFlavor objects, Slurm's topology.conf in tree and in
 * block form, and Volcano's HyperNode objects. Each appends to a topo_buf;
 * the same plan always gives the same text. */
#ifndef TOPO_EXPORT_H
#define TOPO_EXPORT_H

#include <stddef.h>

#include <jansson.h>

#include "topo/buf.h"
#include "topo/error.h"
#include "topo/plan.h"
#include "topo/types.h"

#define TOPO_EXPORT_DEFAULT_TOPOLOGY "topo"
#define TOPO_EXPORT_DEFAULT_KUEUE_API "kueue.x-k8s.io/v1beta2"

typedef struct topo_export_kueue_opts {
    const char *topology_name; /* NULL: TOPO_EXPORT_DEFAULT_TOPOLOGY */
    /* kueue.x-k8s.io/v1beta2 (storage) or v1beta1 (served, deprecated);
     * NULL: TOPO_EXPORT_DEFAULT_KUEUE_API. */
    const char *api_version;
    /* The nodeLabels of one ResourceFlavor named like the topology. None:
     * one flavor per datacenter, "<topology>-<datacenter>", selecting by
     * the datacenter label (the topology must have that level). */
    const topo_kv *flavor_labels;
    size_t nflavor_labels;
} topo_export_kueue_opts;

/* A Topology with the plan's levels and its ResourceFlavors, as YAML
 * documents. TOPO_EINVALID for an unknown api_version, an invalid name or
 * label, or no way to select the flavor's nodes. */
int topo_export_kueue(const topo_plan *plan, const topo_export_kueue_opts *opts, topo_buf *out,
                      topo_err *err) TOPO_MUST_CHECK;

/* The same objects as a JSON array (new reference in *out), for the
 * controller that applies them to the API server. */
int topo_export_kueue_objects(const topo_plan *plan, const topo_export_kueue_opts *opts,
                              json_t **out, topo_err *err) TOPO_MUST_CHECK;

/* topology.conf for topology/tree: one SwitchName line per domain of the
 * switch levels (datacenter, spine, leaf, those the plan has), named
 * switch.<tier>.<n> (tier 1 = leaf) with the label value in a comment
 * above, as topograph writes it. TOPO_EINVALID when the plan has no leaf
 * level. */
int topo_export_slurm_tree(const topo_plan *plan, topo_buf *out, topo_err *err) TOPO_MUST_CHECK;

typedef struct topo_export_block_opts {
    int by_leaf; /* blocks are leaf domains; default: NVLink domains */
    /* BlockSizes; none: inferred as topograph does (smallest block D, N
     * blocks: D, 2D, 4D, ... up to 2^floor(log2 N) * D). */
    const int *sizes;
    size_t nsizes;
} topo_export_block_opts;

/* topology.conf for topology/block: BlockName=block.<n> Nodes=<hostlist>
 * per block (label value in a comment), blocks of one leaf and spine next
 * to each other, then BlockSizes. TOPO_EINVALID when the plan lacks the
 * block level or a size is not a power-of-two multiple of the previous. */
int topo_export_slurm_block(const topo_plan *plan, const topo_export_block_opts *opts,
                            topo_buf *out, topo_err *err) TOPO_MUST_CHECK;

/* Volcano HyperNodes (topology.volcano.sh/v1alpha1) as YAML documents: one
 * per domain, tier 1 at the finest owned level (nodes as members), each
 * coarser level's HyperNodes holding the finer ones; named
 * "<level>-<hash of the domain's values>", labelled
 * volcano.sh/network-topology-source=topo. */
int topo_export_volcano(const topo_plan *plan, topo_buf *out, topo_err *err) TOPO_MUST_CHECK;

/* Slurm's hostlist form of names ("srv[1101-1108]", "tux[0-3,12]"):
 * consecutive numeric suffixes of equal width under one prefix collapse
 * into ranges. names need not be sorted. */
int topo_export_hostlist(topo_buf *out, const char *const *names, size_t n) TOPO_MUST_CHECK;

#endif
