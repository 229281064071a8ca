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

#endif
