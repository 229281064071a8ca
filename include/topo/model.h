/* The topology snapshot: nodes, their capacity and usage, arranged in the
 * domain tree of one topology (Kueue Topology + ResourceFlavor). Built once,
 * then queried many times by the engine; immutable after topo_snapshot_build.
 *
 * Input structs borrow their strings: the snapshot copies what it keeps. */
#ifndef TOPO_MODEL_H
#define TOPO_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/types.h"

typedef struct topo_snapshot_opts {
    const char *topology_name;  /* appears in Kueue's failure messages */
    const char *const *levels;  /* node-label keys, coarsest first */
    size_t nlevels;
    const topo_kv *flavor_labels; /* ResourceFlavor nodeLabels: all must match */
    size_t nflavor_labels;
} topo_snapshot_opts;

typedef struct topo_snapshot topo_snapshot;

int topo_snapshot_create(topo_snapshot **out, const topo_snapshot_opts *opts, topo_err *err);
void topo_snapshot_free(topo_snapshot *snap);

/* Adds a node. Duplicate names are TOPO_EINVALID. Nodes that are not Ready,
 * unschedulable, miss a level label or a flavor label are kept (for `show`)
 * but contribute no capacity, as in Kueue's node cache. */
int topo_snapshot_add_node(topo_snapshot *snap, const topo_node_spec *node, topo_err *err);

/* Charges one bound, non-terminal, non-TAS pod to its node: its effective
 * requests plus one "pods". Pods on unknown nodes are ignored (Kueue ignores
 * nodes outside the flavor) and reported through *out_ignored when non-NULL. */
int topo_snapshot_add_pod_usage(topo_snapshot *snap, const char *node_name,
                                const topo_resource *requests, size_t nrequests,
                                int *out_ignored, topo_err *err);

/* Charges an admitted TAS assignment: count pods with per-pod requests (plus
 * one "pods" each) on the leaf domain given by its values (all levels, or
 * just the hostname for hostname topologies). */
int topo_snapshot_add_tas_usage(topo_snapshot *snap, const char *const *values, size_t nvalues,
                                int32_t count, const topo_resource *requests, size_t nrequests,
                                topo_err *err);

/* Undo a pod usage or a TAS usage charged before (same arguments). After
 * build only; used to keep a live snapshot current as pods come and go. */
int topo_snapshot_remove_pod_usage(topo_snapshot *snap, const char *node_name,
                                   const topo_resource *requests, size_t nrequests,
                                   topo_err *err);
int topo_snapshot_remove_tas_usage(topo_snapshot *snap, const char *const *values,
                                   size_t nvalues, int32_t count,
                                   const topo_resource *requests, size_t nrequests,
                                   topo_err *err);

/* Freezes the snapshot and builds the domain tree. Usage may be added before
 * or after; nodes only before. */
int topo_snapshot_build(topo_snapshot *snap, topo_err *err);

const char *topo_snapshot_topology_name(const topo_snapshot *snap);
size_t topo_snapshot_level_count(const topo_snapshot *snap);
const char *topo_snapshot_level(const topo_snapshot *snap, size_t i);
/* Index of a level label, or -1. */
int topo_snapshot_level_index(const topo_snapshot *snap, const char *label);
size_t topo_snapshot_node_count(const topo_snapshot *snap);
/* The node whose kubernetes.io/hostname label is hostname (a slot's host
 * value; its name may be the FQDN where the label is not): 1 with *out
 * borrowing from the snapshot (name, labels, taints, Ready, schedulable;
 * no allocatable), 0 when no node has it (deleted, or never labelled). Of
 * several, the first added. Every node counts, eligible or not. */
int topo_snapshot_node_by_hostname(const topo_snapshot *snap, const char *hostname,
                                   topo_node_spec *out);
/* The value of label `key` on node `node_name`, or NULL when the snapshot
 * has no such node or the node no such label. Borrowed from the snapshot. */
const char *topo_snapshot_node_label(const topo_snapshot *snap, const char *node_name,
                                     const char *key);

/* One domain as `topo_snapshot_walk` shows it, depth first, children sorted by
 * value. Amounts are of the resource named in the walk. Only eligible nodes
 * (Ready, schedulable, every level and flavor label) form domains. When a
 * leaf holds several nodes, TAS usage is known for the leaf only, so
 * max_node_free does not subtract it. */
typedef struct topo_domain_view {
    size_t level;          /* index into the levels */
    const char *value;     /* this level's value */
    size_t nodes;          /* eligible nodes below */
    int64_t capacity;      /* allocatable of the resource over eligible nodes */
    int64_t free;          /* capacity minus usage, never below 0 */
    int64_t max_node_free; /* the roomiest single eligible node */
    int64_t pods_free;     /* free "pods" slots */
} topo_domain_view;

typedef int (*topo_domain_visit_fn)(const topo_domain_view *view, void *payload);

/* Calls fn for every domain; a non-zero return from fn stops the walk and is
 * returned. */
int topo_snapshot_walk(const topo_snapshot *snap, const char *resource, topo_domain_visit_fn fn,
                       void *payload);

#endif
