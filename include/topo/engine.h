/* The assignment engine: Kueue's Topology-Aware Scheduling placement
 * (findTopologyAssignmentsForFlavor) over a topo_snapshot. Pure: no I/O, no
 * clock; everything it returns is allocated from the caller's pool.
 *
 * Incremental: Kueue's phase 1 counts, for every domain, how many pods (and
 * whole slices) of the request fit, over the whole cluster on every call.
 * Those counts depend only on the request's shape (its per-pod resource
 * vector, slice size and level, inner slice sizes, and on hostname
 * topologies its tolerations, nodeSelector and required node affinity) and
 * the snapshot's usage, so the snapshot keeps them per shape (the 8
 * placements used last and, apart from those, the 8 topo_packing_find used
 * last, so packing never evicts a placement's shape; lib/topo/
 * snapshot_agg.c) and every usage change (a pod bound or finished, a
 * reservation made or released, through the snapshot or topo_live) updates
 * them along the path from the changed leaf to its root, stopping at the
 * first ancestor that does not change. Each level's domains are also indexed
 * by their (slices, pods) counts, a bitset per distinct pair, so that the
 * fit-level search (the tightest single domain that takes the request, the
 * best domain's count for the message, LeastFreeCapacity's ascending walk
 * over the leaves) reads only the domains it returns. A call copies the
 * counts of the domains it visits into its own pool on first touch and
 * never writes the shared ones, so readers run in parallel. Requests whose
 * counts depend on more than the shape (a leader, a replacement domain,
 * earlier PodSets of the same call, preferred-affinity scores under
 * TASRespectNodeAffinityPreferred) count phase 1 as before. Node changes rebuild the snapshot
 * (topo_live), which computes the shapes in use before it is published.
 * Results are Kueue's either way: test/topo/test_engine_diff.c checks them
 * against the engine before these aggregates. */
#ifndef TOPO_ENGINE_H
#define TOPO_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/model.h"
#include "topo/pool.h"
#include "topo/types.h"

/* One PodSet's topology request, as Kueue's annotations express it. */
typedef struct topo_podset_spec {
    const char *name;
    int32_t count;
    const topo_resource *requests; /* per pod; "pods: 1" is implicit */
    size_t nrequests;
    const char *required;          /* podset-required-topology */
    const char *preferred;         /* podset-preferred-topology */
    int unconstrained;             /* podset-unconstrained-topology */
    int implied;                   /* no annotation, TAS-only queue */
    const char *slice_required;    /* podset-slice-required-topology */
    int32_t slice_size;            /* podset-slice-size, 0 when absent */
    const topo_slice_layer *layers; /* podset-slice-required-topology-constraints */
    size_t nlayers;
    const char *group;             /* podset-group-name */
    const topo_toleration *tolerations;
    size_t ntolerations;
    const topo_kv *node_selector;
    size_t nnode_selector;
    const topo_selector_term *required_terms; /* requiredDuringScheduling... */
    size_t nrequired_terms;
    const topo_preferred_term *preferred_terms;
    size_t npreferred_terms;
    const topo_assignment *previous; /* elastic workloads: the previous slice */
} topo_podset_spec;

/* An admitted workload being re-placed after node failures. */
typedef struct topo_admitted_podset {
    const char *podset;
    int32_t count;
    const topo_assignment *assignment;
} topo_admitted_podset;

typedef struct topo_workload_spec {
    int single_pod_owned; /* owned by exactly one Pod, not a pod group */
    const char *const *unhealthy_nodes; /* hostname level values, none NULL */
    size_t nunhealthy_nodes;
    const topo_admitted_podset *admission;
    size_t nadmission;
    /* topo's own (0 in Kueue's table, whose results they leave alone):
     * replace_all: every unhealthy node is replaced in one search (their
     * pods together, in the domain the remaining ones give), where Kueue
     * replaces unhealthy_nodes[0] only (it evicts a workload with two); a
     * node outside the assignment adds no pods, and with none in it the
     * assignment is kept (replacement NULL);
     * prefer_same_domain: a PodSet with a preferred level is first searched
     * for inside the remaining pods' domain at that level, and only when
     * nothing fits there anywhere (Kueue's choice for preferred). */
    int replace_all;
    int prefer_same_domain;
} topo_workload_spec;

/* Kueue feature gates that change placement, by Kueue's names. */
#define TOPO_GATE_MAP(XX)                                      \
    XX(TopologyAwareScheduling, 1)                             \
    XX(TASProfileMixed, 1)                                     \
    XX(TASProfileBestFit, 0)                                   \
    XX(TASProfileLeastFreeCapacity, 0)                         \
    XX(TASBalancedPlacement, 0)                                \
    XX(TASMultiLayerTopology, 1)                               \
    XX(TASRespectNodeAffinityPreferred, 0)                     \
    XX(TASHandleOverlappingFlavors, 1)                         \
    XX(TASFailedNodeReplacement, 1)                            \
    XX(TASFailedNodeReplacementFailFast, 1)                    \
    XX(SkipReassignmentForPodOwnedWorkloads, 1)                \
    XX(ElasticJobsViaWorkloadSlices, 1)                        \
    XX(ElasticJobsViaWorkloadSlicesWithTAS, 0)                 \
    XX(TASCacheNodeMatchResults, 1)                            \
    XX(SchedulerLibraryIntegration, 0)

typedef struct topo_gates {
#define TOPO_XX_GATE_FIELD(name, dflt) int name;
    TOPO_GATE_MAP(TOPO_XX_GATE_FIELD)
#undef TOPO_XX_GATE_FIELD
} topo_gates;

/* Kueue's defaults at the commit the conformance table was taken from. */
void topo_gates_init(topo_gates *gates);
/* Sets a gate by its Kueue name; TOPO_ENOTFOUND for an unknown name. */
int topo_gates_set(topo_gates *gates, const char *name, int on, topo_err *err);

typedef struct topo_podset_result {
    const char *name;
    const topo_assignment *assignment; /* NULL on failure */
    const char *failure;               /* Kueue's message, NULL on success */
    /* Replacing unhealthy nodes: the part found for their pods alone (what
     * Kueue merges into the remaining assignment to give `assignment`), in
     * the engine's domain order; NULL otherwise (and when kept as it was:
     * single_pod_owned). */
    const topo_assignment *replacement;
} topo_podset_result;

/* Whether one of the tolerations tolerates the taint (v1
 * Toleration.ToleratesTaint: effect, key, Equal/Exists); the rule the
 * engine filters nodes by. tolerationSeconds is not looked at. */
int topo_taint_tolerated(const topo_toleration *tols, size_t ntols, const topo_taint *taint);

/* Places the PodSets in order, as Kueue's FindTopologyAssignmentsForFlavor
 * does: each success is assumed usage for the next; the first failure stops
 * the loop and is reported for that PodSet (and its group). `out` has room
 * for npodsets results. Returns 0 when the request was evaluated (check the
 * results), TOPO_EINVALID for a malformed request, TOPO_ENOMEM. */
int topo_engine_find(topo_podset_result *out, const topo_snapshot *snap,
                     const topo_podset_spec *podsets, size_t npodsets,
                     const topo_workload_spec *workload, const topo_gates *gates,
                     topo_pool *pool, topo_err *err);

#endif
