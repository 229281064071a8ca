/* Packing pods without topology requests (issue 32, "Keep whole domains
 * free"): the one rule that says which domains of a level such a pod should
 * go to, shared by topo-webhook (which turns the answer into a preferred
 * node affinity) and the simulator (policy mixed-pack). Pure: a table in,
 * indices out, no allocation.
 *
 * The rule: only domains already in use (something running) that still
 * have room for the pod on one node, the tightest first (least free:
 * BestFit across domains), ties by name. A domain with nothing running is
 * never proposed, so an empty answer means "leave the pod alone" and the
 * scheduler's own choice stands: whole free domains stay whole while a used
 * one fits. */
#ifndef TOPO_PACKING_H
#define TOPO_PACKING_H

#include <stddef.h>
#include <stdint.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/model.h"
#include "topo/pool.h"

/* One domain of the packing level, as the caller counts it. */
typedef struct topo_packing_domain {
    const char *name;     /* its label value: stable, the ties' order */
    int64_t used;         /* of the resource, by what runs there */
    int64_t free;         /* of the resource, over its nodes */
    int64_t node_free_max; /* the most any one of its nodes has free */
} topo_packing_domain;

/* The domains the rule prefers for a pod requesting `request` of the
 * resource, most preferred first: at most k indices into domains[] in
 * out[] (room for k), their number in *out_n (0: leave the pod unchanged).
 * TOPO_EINVALID, naming the field, for a request below 1, a negative used,
 * free or node_free_max, or a NULL name (an empty name is a name: an empty
 * label value is valid); *out_n is 0 then. The counts are taken as given:
 * a node_free_max above free is not checked. */
int topo_packing_rank(size_t *out, size_t *out_n, size_t k, const topo_packing_domain *domains,
                      size_t n, int64_t request, topo_err *err) TOPO_MUST_CHECK;

/* One domain topo_packing_find proposes. */
typedef struct topo_packing_pick {
    const char *const *values; /* its values, coarsest level first, down to the
                                * packing level (level index + 1 of them) */
    size_t nvalues;
    int64_t free;              /* of the resource, over its eligible nodes */
    int64_t used;              /* of the resource: capacity minus free (> 0) */
} topo_packing_pick;

/* The rule over a topology's live snapshot: the domains at `level` (one of
 * the snapshot's levels, not the lowest) that are in use (`resource` used by
 * running pods or held by reservations) and where the pod `pod` fits on one
 * node (the engine's counts for its shape: every resource it requests, its
 * tolerations, nodeSelector and required node affinity), ordered by
 * topo_packing_rank (least free first, ties by the values joined). At most k
 * picks in out[] (room for k), their number in *out_n (0: leave the pod
 * alone). `pod` is a one-pod PodSet spec (count 1, no topology annotation);
 * only its requests and node filters are read. Strings are from pool.
 * TOPO_EINVALID, naming the field, for a level the snapshot does not have or
 * its lowest; a resource no node exposes is no error (nothing uses it:
 * *out_n 0), nor is a pod that requests none of it (*out_n 0). The node
 * filters count as the engine counts them: on hostname topologies only.
 * Cost: proportional to the domains at `level`, not to the nodes: the
 * snapshot keeps the pod's shape counts (the engine's aggregates, the 8
 * shapes used last) and the resource's per-domain sums, current through
 * every usage change; only the first call for a new shape or resource on
 * a snapshot counts over the nodes. Readers run in parallel, as
 * topo_engine_find's do. */
int topo_packing_find(topo_packing_pick *out, size_t *out_n, size_t k,
                      const topo_snapshot *snap, const topo_podset_spec *pod, const char *level,
                      const char *resource, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

#endif
