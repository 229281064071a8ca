/* The AdmissionReview v1 wire format's internal functions (review_request.c
 * defines them), for the files that read pods the way a review is read:
 * review_classify.c and patch_release.c on the wire-format side,
 * handler.c and handler_groups.c above it. The wire format stands below
 * the handler and includes nothing of it (handler_internal.h). Not a
 * public header. */
#ifndef TOPO_ADMISSION_REVIEW_INTERNAL_H
#define TOPO_ADMISSION_REVIEW_INTERNAL_H

#include <jansson.h>

#include "topo/admission_review.h"
#include "topo/error.h"
#include "topo/pool.h"

/* 1 when k is core/v1 Pod. */
int adm_gvk_is_pod(const topo_admission_gvk *k);

/* The pod wrapped in a Pod CREATE AdmissionReview (a new reference; NULL
 * when out of memory), so that it is read exactly as admission reads it. */
json_t *adm_pod_review(const json_t *pod, const char *uid);

/* The fields every pod has (metadata, nodeName, nodeSelector, gates), not a
 * topology pod's placement fields: for what only undoes topo's own writes
 * (patch_release.c). Errors name the field under "request.object". */
int adm_decode_pod(topo_admission_pod *out, const json_t *pod, topo_pool *pool, topo_err *err);

/* topo_admission_decode, the parsed body kept in *root_out (a new
 * reference, NULL-able; set whenever the body parsed, even when decoding
 * failed): for a caller that reads more of the Pod than the review keeps
 * (packing). root_out NULL: topo_admission_decode. */
int adm_decode_body(topo_admission_request *out, json_t **root_out, const char *body,
                    size_t len, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* The pod's effective requests (topo_pod_requests) into pod->requests. */
int adm_decode_requests(topo_admission_pod *pod, const json_t *spec, topo_pool *pool,
                        topo_err *err) TOPO_MUST_CHECK;

/* What a topology pod may carry (limits.h), checked before the fields
 * below are decoded: TOPO_ELIMIT naming the field. */
int adm_pod_within_limits(const json_t *spec, topo_err *err) TOPO_MUST_CHECK;

/* Within the limits, the pod's tolerations and node affinity (required and
 * preferred terms; matchFields refused) into pod, and pod->affinity_parents. */
int adm_decode_node_terms(topo_admission_pod *pod, const json_t *spec, topo_pool *pool,
                          topo_err *err) TOPO_MUST_CHECK;

/* Packing's classification of a pod that requests a packed resource
 * (review_packing.c): the first reason it passes unchanged, in this order
 * (daemonset; not-ready: !ready, the cache or the namespaces not synced;
 * namespace: ns_opted_out; pinned: its
 * nodeSelector names one of pin_keys, or a required term has In on one of
 * them or on metadata.name in matchFields; unsupported: its tolerations or node affinity cannot be
 * decoded, or exceed the limits), with its node terms decoded into pod;
 * TOPO_ADMISSION_PACK_REASONS when none (a candidate); TOPO_ENOMEM. */
int adm_pack_classify(topo_admission_pod *pod, const json_t *spec, const char *const *pin_keys,
                      size_t npin_keys, int ready, int ns_opted_out,
                      topo_pool *pool) TOPO_MUST_CHECK;

/* Whether the pod's containers or init containers name one of resources in
 * their requests or limits, or its overhead does (read from the object,
 * whatever the quantity): what the chart's matchConditions test. */
int adm_pack_spec_names(const json_t *spec, const char *const *resources, size_t n);

#endif
