/* Which PodSet a pod belongs to, as a key "<namespace>/<kind>/<names...>":
 * the one derivation topo-webhook places a pod by (admission) and binds a
 * pod to a reserved slot by (the cache), so that the two never disagree on
 * whose slot a pod may take. Pure: labels, annotations and metadata in, a
 * key out; no cache, no sizes (admission sizes the PodSet from the kind).
 *
 * The kinds, first that applies (docs/webhook.md "What happens to a pod", 4):
 *   pod-group  kueue.x-k8s.io/pod-group-name (label, else annotation)
 *   jobset     labels jobset.sigs.k8s.io/jobset-name and replicatedjob-name
 *   lws        labels leaderworkerset.sigs.k8s.io/name and group-index;
 *              worker-index 0 the leader's PodSet, else the workers'
 *   job        label batch.kubernetes.io/controller-uid (or controller-uid),
 *              else batch.kubernetes.io/job-name (or job-name)
 *   owner      topology.topo.io/podset-size and a controller owner: its uid
 *   generate-name  podset-size and a generateName
 *   pod        the pod's name
 *   owner/rank a controller owner and a batch.kubernetes.io/
 *              job-completion-index (label, else annotation)
 *   request    none of these (a generateName pod with nothing else): only
 *              the admission request's uid names it, so it cannot be derived
 *              again once the pod exists (it has a name then): for a
 *              reservation of this kind, the seal alone says whose it is
 *              (cache.h "Slot binding"). */
#ifndef TOPO_PODSET_KEY_H
#define TOPO_PODSET_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/pool.h"
#include "topo/types.h"

typedef enum topo_podset_kind {
    TOPO_PODSET_POD_GROUP,
    TOPO_PODSET_JOBSET,
    TOPO_PODSET_LWS_LEADER,
    TOPO_PODSET_LWS_WORKERS,
    TOPO_PODSET_JOB,
    TOPO_PODSET_OWNER,
    TOPO_PODSET_GENERATE_NAME,
    TOPO_PODSET_POD,
    TOPO_PODSET_OWNER_RANK,
    TOPO_PODSET_REQUEST
} topo_podset_kind;

/* The pod as admission sees it at CREATE. Strings may be NULL. */
typedef struct topo_podset_pod {
    const char *namespace_name;
    /* metadata.name as the webhook saw it: NULL or "" for a generateName
     * pod (the API server names it after mutating admission). */
    const char *name;
    const char *generate_name;
    const topo_kv *labels;
    size_t nlabels;
    const topo_kv *annotations;
    size_t nannotations;
    const char *owner_uid;   /* the controller ownerReference's uid; NULL: none */
    const char *request_uid; /* the admission request's (kind request); NULL: "" */
} topo_podset_pod;

/* What the key was derived from, for sizing and ranking the PodSet. */
typedef struct topo_podset_key {
    topo_podset_kind kind;
    const char *key;       /* "<ns>/<kind>/...", from pool */
    int64_t explicit_size; /* topology.topo.io/podset-size; 0 when absent */
    int64_t index;         /* batch.kubernetes.io/job-completion-index; -1 when absent */
    int64_t replicas;      /* jobset: jobset.sigs.k8s.io/replicatedjob-replicas (1) */
    int64_t job_index;     /* jobset: jobset.sigs.k8s.io/job-index (0) */
    int64_t lws_size;      /* lws: annotation leaderworkerset.sigs.k8s.io/size (1) */
    int64_t worker;        /* lws: label leaderworkerset.sigs.k8s.io/worker-index (0) */
} topo_podset_key;

/* The pod's PodSet key. 0; TOPO_EINVALID naming the label or annotation
 * whose count is malformed or out of range (podset-size 1..TOPO_MAX_PODSET_COUNT,
 * the indexes 0..TOPO_MAX_PODSET_COUNT); TOPO_ENOMEM. */
int topo_podset_key_derive(topo_podset_key *out, const topo_podset_pod *pod, topo_pool *pool,
                           topo_err *err) TOPO_MUST_CHECK;

/* 1 when key is a PodSet key of namespace ns ("<ns>/..."), 0 otherwise
 * (either NULL or ns empty included). */
int topo_podset_key_in_namespace(const char *key, const char *ns);

/* 1 when key is of kind request (the one derivation cannot repeat). */
int topo_podset_key_is_request(const char *key);

/* 1 when key is of kind pod or request: a pod alone, which no controller
 * replaces under the same PodSet (Kueue's OwnedBySinglePod: such a
 * workload is not repaired after a node failure, its pod is recreated). */
int topo_podset_key_is_single_pod(const char *key);

#endif
