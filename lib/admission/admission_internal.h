/* Shared by the admission handler's files: the PodSet a pod belongs to. */
#ifndef TOPO_ADMISSION_INTERNAL_H
#define TOPO_ADMISSION_INTERNAL_H

#include <stdint.h>

#include <jansson.h>

#include "topo/admission.h"
#include "topo/admission_review.h"
#include "topo/cache.h"

/* Who a pod is within its PodSet, and how big the PodSet is. */
typedef struct topo_podset_id {
    const char *key;      /* unique per PodSet: "<ns>/<kind>/<name...>" */
    int32_t size;         /* pods in the PodSet */
    int64_t rank;         /* the pod's index within it, -1 when it has none */
    const char *claimant; /* the slot claimant: the pod's uid when known, else "claim:..." */
    const char *warning;  /* a caveat for the response (size guessed), or NULL */
    int group;            /* a Kueue pod group: its PodSets are its roles (handler_groups.c) */
} topo_podset_id;

/* Identifies the PodSet of a topology pod (see topo_admission_handle).
 * request_uid names generateName pods that carry nothing else; cache (may be
 * NULL) gives Jobs' parallelism. 0, TOPO_ENOMEM, or TOPO_EINVALID with the
 * annotation or label named. */
int topo_admission_podset_identify(topo_podset_id *id, const topo_admission_pod *pod,
                                   const char *request_ns, const char *request_uid,
                                   const char *pod_uid, topo_cache *cache, topo_pool *pool,
                                   topo_err *err);

/* --- bounds on capacity held for pods not created yet (handler_fairness.c) --------------------- */

typedef struct topo_fairness {
    const topo_resource *caps_namespace; /* "pods" counts slots */
    size_t ncaps_namespace;
    const topo_resource *caps_global;
    size_t ncaps_global;
    topo_admission_quota_fn quota; /* NULL: quotas not consulted */
    void *quota_payload;
} topo_fairness;

/* Whether a new reservation of size pods of per-pod requests req in
 * namespace ns, `arriving` of which are here now (they claim at once),
 * stays within the caps and the namespace's ResourceQuota room, given what
 * the cache holds unclaimed. 0 within; 1 with *why when over (the no-fit
 * policy applies); <0 on errors. A PodSet that requests nothing is within. */
int topo_admission_fair_check(const topo_fairness *f, topo_cache *cache, int64_t now,
                              const char *ns, const topo_resource *req, size_t nreq, int32_t size,
                              int32_t arriving, topo_pool *pool, const char **why,
                              topo_err *err) TOPO_MUST_CHECK;

/* Per namespace and resource ("pods" too), what is held for pods not
 * created yet; fn returning non-zero stops and is returned. */
int topo_admission_fair_report(topo_cache *cache, int64_t now, topo_admission_unclaimed_fn fn,
                               void *payload, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* 1 when k is core/v1 Pod (review_request.c). */
int topo_admission_gvk_is_pod(const topo_admission_gvk *k);

/* The pod wrapped in a Pod CREATE AdmissionReview (a new reference; NULL
 * when out of memory), so that it is read exactly as admission reads it. */
json_t *topo_admission_pod_review(const json_t *pod, const char *uid);

/* The fields every pod has (metadata, nodeName, nodeSelector, gates), not a
 * topology pod's placement fields: for what only undoes topo's own writes
 * (patch_release.c). Errors name the field under "request.object". */
int adm_decode_pod(topo_admission_pod *out, const json_t *pod, topo_pool *pool, topo_err *err);

/* --- Kueue pod groups (handler_groups.c) -------------------------------------------------------- */

/* One role of a group: the pods of one shape. */
typedef struct topo_group_role {
    const char *shape;
    const char *request;      /* its pods' Kueue request (topo_kueue_request_text) */
    const char *podset_group; /* their podset-group-name, "" for none */
    const char *pod_json;     /* its first pod, as admitted ("" for the arriving pod's) */
    int32_t count;
} topo_group_role;

/* The pod looking at its group. */
typedef struct topo_group_pod {
    const char *member; /* its record's key: its name, else its request's uid */
    const char *shape;
    const char *request;
    const char *podset_group; /* "" for none */
    int adding;               /* it is arriving (admission), not retried (ungater) */
} topo_group_pod;

/* What the cache holds of a group, seen from one of its pods. */
typedef struct topo_group_view {
    size_t nmembers;           /* recorded, unexpired */
    int self_recorded;         /* the pod is among them */
    topo_group_role *roles;    /* by shape; with an arriving pod counted in */
    size_t nroles;
    const char *refusal;       /* why the pod contradicts its group, or NULL */
    int kueue_refusal;         /* refusal is Kueue's own message, word for word */
} topo_group_view;

/* Reads the group's members (id->key) and checks the pod (and id->size as
 * its total count) against them and Kueue's rules for grouped PodSets. */
int topo_admission_group_view(topo_group_view *out, topo_cache *cache, const topo_podset_id *id,
                              const topo_group_pod *pod, int64_t now, topo_pool *pool,
                              topo_err *err) TOPO_MUST_CHECK;

/* The engine's PodSets for a complete group: one per role, its count and
 * its first pod's spec, named by shape. *out has v->nroles entries. */
int topo_admission_group_specs(topo_podset_spec **out, const topo_group_view *v, topo_pool *pool,
                               topo_err *err) TOPO_MUST_CHECK;

/* The PodSet's request for the engine: count pods shaped like pod, with the
 * Kueue request lib/kueue reads from its annotations (one reading for
 * every path: topoassign, the ungater, the case loader). TOPO_EINVALID
 * carries Kueue's message; TOPO_ENOMEM. */
int topo_admission_podset_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count,
                               topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

#endif
