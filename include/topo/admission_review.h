/* The AdmissionReview v1 codec: a request body decoded into the Pod fields
 * topo-webhook reads, and a response (allowed or not, status, warnings, a
 * JSON Patch) encoded. Pure: no I/O, no clock.
 *
 * Ownership: every string and array of a decoded request is allocated from
 * the caller's pool and lives until it is cleared; char ** results are
 * malloc'd (free). */
#ifndef TOPO_ADMISSION_REVIEW_H
#define TOPO_ADMISSION_REVIEW_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/jsonpatch.h"
#include "topo/model.h"
#include "topo/pool.h"

/* Longest warning sent back; longer ones are cut and end in "...". */
#define TOPO_ADMISSION_WARNING_MAX 120

typedef struct topo_admission_gvk {
    const char *group; /* "" for the core group */
    const char *version;
    const char *kind; /* the resource for a GVR */
} topo_admission_gvk;

typedef struct topo_admission_owner {
    const char *api_version; /* NULL when absent */
    const char *kind;
    const char *name;
    const char *uid;
    int controller; /* ownerReferences[].controller == true */
} topo_admission_owner;

/* The Pod fields the webhook uses. Strings absent from the object are NULL;
 * has_* tell an absent map/list from an empty one (the patch differs). */
typedef struct topo_admission_pod {
    const char *name;          /* metadata.name; NULL or "" with generateName */
    const char *generate_name; /* metadata.generateName */
    const char *namespace_;    /* metadata.namespace */
    int has_labels;
    const topo_kv *labels;
    size_t nlabels;
    int has_annotations;
    const topo_kv *annotations;
    size_t nannotations;
    const char *node_name; /* spec.nodeName */
    int has_node_selector;
    const topo_kv *node_selector;
    size_t nnode_selector;
    int has_scheduling_gates;
    const char *const *scheduling_gates; /* spec.schedulingGates[].name */
    size_t nscheduling_gates;
    const topo_admission_owner *owners; /* metadata.ownerReferences */
    size_t nowners;
    const topo_resource *requests; /* effective per-pod requests (Kueue units) */
    size_t nrequests;
    /* spec.tolerations and spec.affinity.nodeAffinity: the engine honours
     * them as Kueue TAS does (tainted GPU nodes, required node affinity).
     * Decoded only when the request classifies as a topology pod (a
     * pass-through pod is never refused over them); matchFields terms are
     * refused (the engine cannot honour them). */
    const topo_toleration *tolerations;
    size_t ntolerations;
    const topo_selector_term *required_terms;
    size_t nrequired_terms;
    const topo_preferred_term *preferred_terms;
    size_t npreferred_terms;
    /* With the terms: how much of spec.affinity.nodeAffinity.
     * preferredDuringSchedulingIgnoredDuringExecution the pod has (0 no
     * affinity, 1 affinity, 2 nodeAffinity, 3 the list): what a patch
     * appending a preferred term must add first. */
    int affinity_parents;
    /* Topology pods only: the shape of the pod (codec topo_pod_shape: what
     * its PodSet's pods share) and, for pods of a Kueue pod group, the Pod
     * object as compact JSON (its role's template once the group is
     * complete). */
    const char *shape;
    const char *object_json;

    /* Kueue's topology annotations are read from annotations by
     * topo_kueue_podset_request (one reading for every path). */

    /* What identifies the PodSet. */
    const char *pod_group_name;        /* annotation or label kueue.x-k8s.io/pod-group-name */
    const char *pod_group_total_count; /* annotation kueue.x-k8s.io/pod-group-total-count */
    const char *queue_name;            /* label kueue.x-k8s.io/queue-name */
    const char *job_name;              /* label batch.kubernetes.io/job-name */
    const char *controller_uid;        /* label batch.kubernetes.io/controller-uid */
    const char *job_completion_index;  /* label or annotation batch.kubernetes.io/job-completion-index */
    const char *podset_size;           /* annotation topology.topo.io/podset-size */
    const topo_kv *jobset_labels;      /* labels with prefix jobset.sigs.k8s.io/ */
    size_t njobset_labels;
    const topo_kv *lws_labels; /* labels with prefix leaderworkerset.sigs.k8s.io/ */
    size_t nlws_labels;
} topo_admission_pod;

typedef struct topo_admission_request {
    const char *uid; /* request.uid; set whenever it could be read, even on error */
    topo_admission_gvk kind;     /* request.kind */
    topo_admission_gvk resource; /* request.resource (kind holds the resource) */
    const char *sub_resource;    /* request.subResource, NULL when absent */
    const char *operation;       /* CREATE, UPDATE, DELETE, CONNECT */
    const char *namespace_;
    const char *name; /* "" or NULL on CREATE with generateName */
    int dry_run;
    int has_pod; /* request.object decoded as a Pod (kind v1 Pod, object present) */
    topo_admission_pod pod;
} topo_admission_request;

/* Decodes an AdmissionReview v1 request body of at most
 * TOPO_MAX_ADMISSION_BODY bytes into *out (zeroed first), allocating from pool.
 * Errors, distinct for the server:
 *   TOPO_ELIMIT       body larger than the limit (not parsed: answer 413);
 *   TOPO_EINVALID     not JSON / truncated ("body: ..."), or a malformed field,
 *                     named in the message ("request.object.spec.nodeSelector.a: ...");
 *   TOPO_EUNSUPPORTED apiVersion is not admission.k8s.io/v1 or kind is not
 *                     AdmissionReview, or there is no request object.
 * Whatever the code, out->uid is non-NULL when request.uid was a readable
 * non-empty string: the caller can then answer with a response echoing it. */
int topo_admission_decode(topo_admission_request *out, const char *body, size_t len,
                          topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
/* The same from the parsed review (strings copied into pool; root is not
 * kept): for callers holding the object already, such as the ungater. */
int topo_admission_decode_json(topo_admission_request *out, const json_t *root, topo_pool *pool,
                               topo_err *err) TOPO_MUST_CHECK;

/* Packing (topo_admission_packing): the index in resources[0..n) of the
 * first resource the pod requests more than 0 of (pod->requests, decoded),
 * -1 when none: a request of 0 asks for nothing to pack by. */
int topo_admission_packing_resource(const topo_admission_pod *pod, const char *const *resources,
                                    size_t n);
/* 1 when the pod's controller (ownerReferences, controller true) is a
 * DaemonSet: one pod per node, nothing to steer. */
int topo_admission_pod_is_daemonset(const topo_admission_pod *pod);

/* Value of key in kv (NULL when absent). */
const char *topo_admission_kv_get(const topo_kv *kv, size_t n, const char *key);

/* --- response --------------------------------------------------------------------- */

/* Start from TOPO_ADMISSION_RESPONSE_INIT (allowed, nothing else). */
typedef struct topo_admission_response {
    const char *uid; /* required */
    int allowed;
    int status_code;            /* sent (with message) only when !allowed; 0: omitted */
    const char *status_message; /* NULL: omitted */
    const char *const *warnings; /* each cut to TOPO_ADMISSION_WARNING_MAX chars */
    size_t nwarnings;
    const topo_jsonpatch *patch; /* NULL or empty: no patch */
} topo_admission_response;

#define TOPO_ADMISSION_RESPONSE_INIT {.allowed = 1}

/* The AdmissionReview v1 response body (compact JSON, built with jansson,
 * patch as patchType "JSONPatch" + base64). *out is malloc'd and NUL-terminated. */
int topo_admission_encode(char **out, size_t *out_len, const topo_admission_response *resp,
                          topo_err *err) TOPO_MUST_CHECK;

#endif
