/* The inventory: nodes and pod usage as read from `kubectl get nodes -o json`,
 * `kubectl get pods -A -o json` or a fixture YAML file (fixtures/README.md),
 * and PodSet manifests (a Pod, or a Job whose template carries Kueue's TAS
 * annotations). Everything the inventory returns is borrowed from it and lives
 * until topo_inventory_free; topo_podset_load_* allocate from the caller's pool.
 *
 * Error messages name the file and the field path, e.g.
 * "nodes.json: items[3].status.allocatable.cpu: invalid quantity \"abc\"";
 * syntax errors read "nodes.json:12:5: <problem>". */
#ifndef TOPO_INVENTORY_H
#define TOPO_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/live.h"
#include "topo/model.h"
#include "topo/pool.h"

typedef struct topo_inventory topo_inventory;

/* One bound, non-terminal pod and what it uses on its node. */
typedef struct topo_pod_usage {
    const char *namespace_name; /* "" when unknown */
    const char *name;           /* "" when unknown */
    const char *node;
    const topo_resource *requests; /* effective requests, sorted by name */
    size_t nrequests;
    int tas; /* carries a Kueue TAS annotation (placed by Kueue, not non-TAS usage) */
} topo_pod_usage;

/* Counts of what the loaders saw and set aside. */
typedef struct topo_inventory_stats {
    size_t pods_seen;     /* pod objects read */
    size_t pods_unbound;  /* no spec.nodeName: not usage */
    size_t pods_terminal; /* phase Succeeded or Failed: not usage */
} topo_inventory_stats;

int topo_inventory_create(topo_inventory **out, topo_err *err) TOPO_MUST_CHECK;
void topo_inventory_free(topo_inventory *inv);

/* Loads nodes (and, from a fixture, pods) from a file of at most
 * TOPO_MAX_INVENTORY_FILE bytes, JSON or YAML. Accepted shapes: a v1 NodeList,
 * a v1 List of Nodes, a single Node, or a fixture document (top-level
 * `nodes:`). May be called more than once; a node name seen before is
 * TOPO_EINVALID naming it. On error the inventory is unchanged. */
int topo_inventory_load_nodes_file(topo_inventory *inv, const char *path,
                                   topo_err *err) TOPO_MUST_CHECK;
int topo_inventory_load_nodes_text(topo_inventory *inv, const char *text, size_t len,
                                   const char *source, topo_err *err) TOPO_MUST_CHECK;

/* Loads pods from a v1 PodList / List of Pods (kubectl get pods -A -o json),
 * a single Pod, or a fixture document (its `pods:` only). Only bound
 * (spec.nodeName), non-terminal pods are kept; their effective requests are
 * computed as Kubernetes' resourcehelper.PodRequests does. */
int topo_inventory_load_pods_file(topo_inventory *inv, const char *path,
                                  topo_err *err) TOPO_MUST_CHECK;
int topo_inventory_load_pods_text(topo_inventory *inv, const char *text, size_t len,
                                  const char *source, topo_err *err) TOPO_MUST_CHECK;

size_t topo_inventory_node_count(const topo_inventory *inv);
const topo_node_spec *topo_inventory_node(const topo_inventory *inv, size_t i);
/* Index of the node with that name, or -1. */
int32_t topo_inventory_find_node(const topo_inventory *inv, const char *name);
/* Non-TAS pods (counted as usage by Kueue's non-TAS pod cache). */
size_t topo_inventory_pod_count(const topo_inventory *inv);
const topo_pod_usage *topo_inventory_pod(const topo_inventory *inv, size_t i);
/* Pods carrying Kueue TAS annotations, kept apart. */
size_t topo_inventory_tas_pod_count(const topo_inventory *inv);
const topo_pod_usage *topo_inventory_tas_pod(const topo_inventory *inv, size_t i);
void topo_inventory_get_stats(const topo_inventory *inv, topo_inventory_stats *out);

/* Options for topo_inventory_snapshot. */
typedef struct topo_inventory_snapshot_opts {
    topo_snapshot_opts snapshot; /* topology name, levels, flavor labels */
    /* Bound TAS pods are charged as admitted TAS usage (one pod on its
     * node's leaf domain): offline there are no Workload objects to take TAS
     * usage from. 1: they are not. */
    int skip_tas_pods;
} topo_inventory_snapshot_opts;

/* Creates a snapshot for the given topology, adds every node and the pods'
 * usage, and builds it. *out_ignored_pods (optional) counts pods whose node is
 * not in the snapshot's topology. */
int topo_inventory_snapshot(topo_snapshot **out, const topo_inventory *inv,
                            const topo_inventory_snapshot_opts *opts, size_t *out_ignored_pods,
                            topo_err *err) TOPO_MUST_CHECK;

/* The inventory topo-webhook's static mode serves: the nodes file and,
 * pods_path not NULL, the pods file, into a new inventory (*out NULL on
 * error; the caller frees it). */
int topo_inventory_load_static(topo_inventory **out, const char *nodes_path,
                               const char *pods_path, topo_err *err) TOPO_MUST_CHECK;

/* Every node of the inventory and every bound pod's usage (TAS pods
 * included, charged per node) into live, then one topo_live_commit: what
 * topo-webhook's static mode (--inventory [--pods]) serves. Nodes outside
 * the live's topology are left out by the live itself. */
int topo_inventory_fill_live(topo_live *live, const topo_inventory *inv,
                             topo_err *err) TOPO_MUST_CHECK;

/* Loads one PodSet from a manifest of at most TOPO_MAX_MANIFEST_FILE bytes: a
 * v1 Pod (count 1, or its topology.topo.io/podset-size annotation, as
 * topo-webhook sizes it) or a batch/v1 Job (count = min(parallelism,
 * completions), parallelism defaulting to 1), JSON or YAML. Fills count,
 * per-pod effective requests, Kueue's topology request (read and validated
 * by topo_kueue_podset_request, Kueue's messages), tolerations, nodeSelector
 * and node affinity. The PodSet is named "main". Everything is allocated
 * from pool. */
int topo_podset_load_file(topo_podset_spec *out, const char *path, topo_pool *pool,
                          topo_err *err) TOPO_MUST_CHECK;
int topo_podset_load_text(topo_podset_spec *out, const char *text, size_t len,
                          const char *source, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* Output formats of a TopologyAssignment. */
typedef enum topo_format {
    TOPO_FORMAT_JSON = 0,
    TOPO_FORMAT_YAML = 1
} topo_format;

/* Kueue's TopologyAssignment object (v1beta1 logical form),
 * {"levels": [...], "domains": [{"values": [...], "count": N}, ...]}, as
 * JSON (2-space indent) or YAML text ending in a newline. *out is malloc'd. */
int topo_assignment_format(char **out, const topo_assignment *a, topo_format format,
                           topo_err *err) TOPO_MUST_CHECK;

#endif
