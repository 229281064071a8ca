/* Shared by the admission handler's files: the PodSet a pod belongs to. */
#ifndef TOPO_ADMISSION_INTERNAL_H
#define TOPO_ADMISSION_INTERNAL_H

#include <stdint.h>

#include "topo/admission.h"
#include "topo/cache.h"

/* Who a pod is within its PodSet, and how big the PodSet is. */
typedef struct topo_podset_id {
    const char *key;      /* unique per PodSet: "<ns>/<kind>/<name...>" */
    int32_t size;         /* pods in the PodSet */
    int64_t rank;         /* the pod's index within it, -1 when it has none */
    const char *claimant; /* the slot claimant: the pod's uid when known, else "claim:..." */
    const char *warning;  /* a caveat for the response (size guessed), or NULL */
} topo_podset_id;

/* Identifies the PodSet of a topology pod (see topo_admission_handle).
 * request_uid names generateName pods that carry nothing else; cache (may be
 * NULL) gives Jobs' parallelism. 0, TOPO_ENOMEM, or TOPO_EINVALID with the
 * annotation or label named. */
int topo_admission_podset_identify(topo_podset_id *id, const topo_admission_pod *pod,
                                   const char *request_ns, const char *request_uid,
                                   const char *pod_uid, topo_cache *cache, topo_pool *pool,
                                   topo_err *err);

#endif
