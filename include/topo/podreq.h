/* Effective pod requests, as Kubernetes' resourcehelper.PodRequests computes
 * them, and Kueue's TAS-pod test (the inventory and the
 * topology cache both count pods this way). */
#ifndef TOPO_PODREQ_H
#define TOPO_PODREQ_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/kueue_names.h"
#include "topo/pool.h"
#include "topo/types.h"

/* Per-pod effective requests of a PodSpec object (`spec` may be NULL: no
 * requests). `path` names spec in messages ("items[2].spec").
 *
 *   max(sum(app containers) + sum(restartable init containers),
 *       max over init containers i of (request(i) + sidecars started before i))
 *   + spec.overhead
 *
 * where a container's requests default to its limits for resources that have
 * a limit but no request (API defaulting), and pod-level spec.resources
 * requests (PodLevelResources) replace the aggregate for cpu, memory and
 * hugepages-*. The result is sorted by resource name and allocated from pool. */
int topo_pod_requests(topo_resource **out, size_t *out_n, const json_t *spec, const char *path,
                      topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* 1 when a pod's status.phase says it has finished (Succeeded or Failed):
 * it no longer takes capacity on its node nor holds a reserved slot; 0 for
 * any other phase, "" (unknown) and NULL. Every reader of pods (the
 * inventory, the cache, the filler, admission) decides it here. */
int topo_pod_phase_finished(const char *phase);

/* The finished phases, spelled once: topo_pod_phase_finished tests them and
 * the cache's SQL (a pod's phase IN / NOT IN this list) names them. */
#define TOPO_POD_PHASE_SUCCEEDED "Succeeded"
#define TOPO_POD_PHASE_FAILED "Failed"
#define TOPO_POD_PHASES_FINISHED_SQL                                                               \
    "('" TOPO_POD_PHASE_SUCCEEDED "', '" TOPO_POD_PHASE_FAILED "')"

/* A pod's shape (its role, in Kueue's words): a hash of the spec fields
 * that decide where and on what it runs (containers' and init containers'
 * requests and ports, nodeSelector, affinity, tolerations, runtimeClassName,
 * priority, overhead, resourceClaims, topologySpreadConstraints, pod-level
 * requests), as TOPO_POD_SHAPE_LEN lower-case hex digits. spec may be NULL.
 * 0, or -1 when out of memory. */
#define TOPO_POD_SHAPE_LEN 16
int topo_pod_shape(char out[TOPO_POD_SHAPE_LEN + 1], const json_t *spec) TOPO_MUST_CHECK;

/* 1 when the annotations object carries one of Kueue's TAS annotations
 * (required, preferred, unconstrained, slice-required, slice constraints). */
int topo_pod_is_tas(const json_t *annotations);

#endif
