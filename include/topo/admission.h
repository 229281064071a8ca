/* The admission handler: which requests are topo's to place (the skip
 * rules, pure), and the handler that places a topology pod's PodSet on a
 * topology's live snapshot, keeps the reservation in the cache and answers
 * with the pod's patch (no server, no API calls: topo-webhook wires it to
 * HTTP, the filler and the views). The AdmissionReview codec is
 * topo/admission_review.h, the pod patches topo/admission_patch.h.
 *
 * Ownership: char ** results are malloc'd (free); json_t ** results are new
 * references. */
#ifndef TOPO_ADMISSION_H
#define TOPO_ADMISSION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/admission_review.h"
#include "topo/cache.h"
#include "topo/error.h"
#include "topo/keyring.h"
#include "topo/live.h"
#include "topo/model.h"
#include "topo/pool.h"

/* --- skip rules -------------------------------------------------------------------- */

/* Kueue's names (and topo's podset-size) are in topo/kueue.h. */
#define TOPO_ADMISSION_MIRROR_ANNOTATION "kubernetes.io/config.mirror"

typedef enum topo_admission_class {
    TOPO_ADMISSION_TOPOLOGY_POD = 0, /* ours to place */
    TOPO_ADMISSION_PASS_NOT_POD,     /* request.kind is not core/v1 Pod */
    TOPO_ADMISSION_PASS_NOT_CREATE,  /* not CREATE, a subresource, or no object */
    TOPO_ADMISSION_PASS_NODE_NAME,   /* spec.nodeName set: scheduler bypassed */
    TOPO_ADMISSION_PASS_MIRROR,      /* static/mirror pod */
    TOPO_ADMISSION_PASS_KUEUE,       /* Kueue's own TAS gate or queue-name label */
    TOPO_ADMISSION_PASS_NO_TOPOLOGY, /* no Kueue PodSet annotation (podset-*) */
} topo_admission_class;

int topo_admission_is_pod_create(const topo_admission_request *req);
int topo_admission_pod_has_node_name(const topo_admission_pod *pod);
int topo_admission_pod_is_mirror(const topo_admission_pod *pod);
int topo_admission_pod_is_kueue_managed(const topo_admission_pod *pod);
int topo_admission_pod_has_topology(const topo_admission_pod *pod);
/* The first rule that passes the request through, in the order above. */
topo_admission_class topo_admission_classify(const topo_admission_request *req);
/* "topology-pod", "not-pod", "not-create", "node-name", "mirror", "kueue-managed",
 * "no-topology". */
const char *topo_admission_class_name(topo_admission_class c);

/* --- the admission handler ------------------------------------------------------- */

#define TOPO_ADMISSION_WAIT_GATE "topology.topo.io/wait"
#define TOPO_ADMISSION_WAIT_REASON_ANNOTATION "topology.topo.io/wait-reason"
#define TOPO_ADMISSION_ASSIGNMENT_ANNOTATION "topology.topo.io/assignment"
/* Longest wait-reason annotation; longer messages are cut and end in "...". */
#define TOPO_ADMISSION_WAIT_REASON_MAX 256

/* What to do with a topology pod whose PodSet does not fit. */
typedef enum topo_admission_policy {
    TOPO_ADMISSION_POLICY_GATE = 0, /* allowed + gate topology.topo.io/wait + wait-reason */
    TOPO_ADMISSION_POLICY_DENY,     /* allowed=false, code 403, message with Kueue's reason */
    TOPO_ADMISSION_POLICY_IGNORE,   /* allowed, no patch, a warning */
} topo_admission_policy;

/* "gate", "deny", "ignore"; TOPO_EINVALID for anything else. */
int topo_admission_policy_parse(topo_admission_policy *out, const char *s);

/* Pod annotations the webhook writes besides the assignment: which
 * reservation and slot a pod holds (the cache binds the slot to the pod's uid
 * when the pod shows up, so its deletion or completion frees the slot), and
 * the PodSet a gated pod belongs to (the ungater groups by it). */
#define TOPO_ADMISSION_RESERVATION_ANNOTATION "topology.topo.io/reservation"
#define TOPO_ADMISSION_SLOT_ANNOTATION "topology.topo.io/slot"
#define TOPO_ADMISSION_PODSET_ANNOTATION "topology.topo.io/podset"
/* On the pods of a Kueue pod group: the shape (role) the pod was admitted
 * with, which the ungater reads back (later webhooks may change the pod). */
#define TOPO_ADMISSION_ROLE_ANNOTATION "topology.topo.io/role"
/* Every annotation topo-webhook writes on a pod (the record and the seal
 * are named in topo/cache.h), as an initializer for a NULL-ended list. Not
 * topology.topo.io/podset-size, which is the pod author's input. A pod
 * arriving with any of them is topo's own output only when its seal
 * (TOPO_CACHE_SEAL_ANNOTATION) verifies; otherwise they are removed and
 * trusted for nothing (docs/webhook.md "What happens to a pod"). */
#define TOPO_ADMISSION_WRITTEN_ANNOTATIONS                                                 \
    {TOPO_ADMISSION_ASSIGNMENT_ANNOTATION, TOPO_ADMISSION_RESERVATION_ANNOTATION,           \
     TOPO_ADMISSION_SLOT_ANNOTATION,       TOPO_CACHE_RECORD_ANNOTATION,                    \
     TOPO_ADMISSION_ROLE_ANNOTATION,       TOPO_ADMISSION_WAIT_REASON_ANNOTATION,           \
     TOPO_ADMISSION_PODSET_ANNOTATION,     TOPO_CACHE_SEAL_ANNOTATION,                      \
     NULL}
/* How many names TOPO_ADMISSION_WRITTEN_ANNOTATIONS holds (its NULL aside). */
#define TOPO_ADMISSION_WRITTEN_ANNOTATIONS_N 8
/* The gate's own annotations, of TOPO_ADMISSION_WRITTEN_ANNOTATIONS: written
 * with TOPO_ADMISSION_WAIT_GATE and removed with it (the ungater's patch,
 * topoassign release), sealed or not. A NULL-ended list's initializer. */
#define TOPO_ADMISSION_GATE_ANNOTATIONS \
    {TOPO_ADMISSION_WAIT_REASON_ANNOTATION, TOPO_ADMISSION_PODSET_ANNOTATION, NULL}

/* Default time capacity is held for pods of a PodSet that have not arrived. */
#define TOPO_ADMISSION_RESERVATION_TTL_DEFAULT 600

/* One topology the handler places in: its levels, the nodes it covers
 * (node_labels, like a Kueue ResourceFlavor's), its no-fit policy, and the
 * live snapshot the engine reads (kept current by the caller: the cache
 * filler, or a static inventory loaded once). */
typedef struct topo_admission_topology {
    const char *name;
    const char *const *levels;
    size_t nlevels;
    const topo_kv *node_labels;
    size_t nnode_labels;
    topo_admission_policy policy;
    topo_live *live; /* borrowed */
    /* Packing (topo_admission_opts packing): 0, the topology takes no
     * part; else its packing level is levels[npacking_levels - 1] (never
     * the lowest: 1..nlevels - 1). */
    size_t npacking_levels;
} topo_admission_topology;

/* Packing pods without topology requests (docs/webhook.md "Packing pods
 * without topology requests"): how the answer steers them. */
typedef enum topo_admission_packing_mode {
    TOPO_ADMISSION_PACKING_PREFERRED = 0, /* preferred node affinity terms */
    TOPO_ADMISSION_PACKING_REQUIRED,      /* nodeSelector entries */
} topo_admission_packing_mode;

/* At most this many domains are proposed (preferred terms, weights 100,
 * 50, 25, 12). */
#define TOPO_ADMISSION_PACKING_PICKS 4

typedef struct topo_admission_packing {
    const char *const *resources; /* 1.., distinct; the first a pod requests is compared */
    size_t nresources;
    topo_admission_packing_mode mode;
} topo_admission_packing;

/* Why a pod requesting a packed resource passed unchanged, as
 * topo_webhook_packing_pods_total{outcome="passed",reason} counts it. */
typedef enum topo_admission_pack_reason {
    TOPO_ADMISSION_PACK_PINNED = 0, /* its nodeSelector or required affinity names a node or a
                                     * level at or below the packing level */
    TOPO_ADMISSION_PACK_DAEMONSET,  /* owned by a DaemonSet */
    TOPO_ADMISSION_PACK_NAMESPACE,  /* its namespace is labelled topology.topo.io/packing=false */
    TOPO_ADMISSION_PACK_UNSUPPORTED, /* affinity or tolerations unreadable, or beyond the engine */
    TOPO_ADMISSION_PACK_NO_ROOM,    /* no domain in use has room for it */
    TOPO_ADMISSION_PACK_NOT_READY,  /* the cache has not synced */
    TOPO_ADMISSION_PACK_REASONS
} topo_admission_pack_reason;

/* "pinned", "daemonset", "namespace", "unsupported", "no-room", "not-ready". */
extern const char *const topo_admission_pack_reason_names[TOPO_ADMISSION_PACK_REASONS];

/* The namespace label that opts a namespace out of packing (value "false"). */
#define TOPO_ADMISSION_PACKING_NAMESPACE_LABEL "topology.topo.io/packing"

/* 1 when namespace_ opted out of packing (TOPO_ADMISSION_PACKING_NAMESPACE_LABEL
 * "false"); called on request threads: cheap and thread-safe. */
typedef int (*topo_admission_ns_packing_fn)(void *payload, const char *namespace_);
/* 1 when the live snapshots reflect the cluster (the cache synced). */
typedef int (*topo_admission_ready_fn)(void *payload);

/* Per-namespace policy override: 1 and *out set when the namespace has one,
 * else 0. Called on request threads: must be cheap and thread-safe. */
typedef int (*topo_admission_ns_policy_fn)(void *payload, const char *namespace_,
                                           topo_admission_policy *out);

/* What a namespace's ResourceQuotas leave for pods not created yet: per pod
 * resource that some quota of the namespace limits (Kueue units, as
 * topo_quantity_parse_resource gives them: "cpu" in millicores, others in
 * whole units; "pods" for the pod count), the least room (hard - used) over
 * the namespace's quotas (negative when over). Quota names map to pod
 * resources as the API server's quota evaluator does: "requests.X" and, for
 * the standard resources cpu, memory and ephemeral-storage, bare "X"; "pods"
 * and "count/pods"; limits.* and other kinds are not for the webhook. */
typedef struct topo_admission_quota_room {
    const char *resource;
    int64_t room;
} topo_admission_quota_room;

/* 1 with the namespace's room in *out (n entries, from pool) when it has a
 * quota the webhook knows of; 0 when none (or not known yet: the reserved
 * capacity is then only capped by the webhook's own caps); <0 on errors
 * (TOPO_ENOMEM). Called on request threads under the handler's lock: must
 * be cheap and thread-safe (a lookup in memory, no API call). */
typedef int (*topo_admission_quota_fn)(void *payload, const char *namespace_, topo_pool *pool,
                                       const topo_admission_quota_room **out, size_t *n);

/* A field left 0 (or NULL) gets the default named beside it. */
typedef struct topo_admission_opts {
    const topo_admission_topology *topologies; /* 1..TOPO_MAX_TOPOLOGIES, copied (lives borrowed) */
    size_t ntopologies;
    /* Reservations (and Jobs, for a Job pod's PodSet size). Borrowed; the
     * ctx uses it only under its lock, so no other thread may use it. */
    topo_cache *cache;
    int64_t reservation_ttl_s; /* TOPO_ADMISSION_RESERVATION_TTL_DEFAULT */
    topo_admission_ns_policy_fn ns_policy; /* no overrides */
    void *ns_policy_payload;
    int64_t (*clock)(void *payload); /* seconds; time() */
    void *clock_payload;
    /* For pods no topology covers (a level none has): the policy
     * (TOPO_ADMISSION_POLICY_GATE). */
    topo_admission_policy default_policy;
    /* ResourceQuota room per namespace (NULL: quotas are not consulted): a
     * new reservation's unclaimed slots count against it. */
    topo_admission_quota_fn quota;
    void *quota_payload;
    /* Free slots of a reservation hold capacity for this long after the
     * reservation is made or a slot last claimed
     * (TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT); then they are given back,
     * whatever the reservation's TTL. */
    int64_t unclaimed_ttl_s;
    /* Caps on capacity reserved for pods that have not arrived (free
     * slots, times their pods' requests, plus one pod each), per namespace
     * and in all: resource name (Kueue units; "pods" for the slot count)
     * and the most; a new reservation that would pass a cap does not fit.
     * NULL/0: pods capped at TOPO_ADMISSION_UNCLAIMED_PODS_*_DEFAULT. */
    const topo_resource *unclaimed_cap_namespace;
    size_t nunclaimed_cap_namespace;
    const topo_resource *unclaimed_cap_global;
    size_t nunclaimed_cap_global;
    /* Signs the reservation record each placed pod carries
     * (TOPO_CACHE_RECORD_ANNOTATION), from which every replica's cache
     * adopts the reservation, and the seal (TOPO_CACHE_SEAL_ANNOTATION) on
     * every pod it places or gates; copied. NULL: pods carry no record
     * (one replica), and seals are made with a random key of the ctx's
     * own, which only this ctx verifies (no cache binds a slot for it). */
    const topo_keyring *record_keys;
    /* A PodSet whose failed node has no replacement in its domain: 0 (the
     * default) its pods get the no-fit policy with the reason and wait (a
     * gated pod is retried as nodes come back or free up); 1 (after
     * Kueue's TASFailedNodeReplacementFailFast) such a pod is refused
     * (403), each time one claims a slot on the failed node while there
     * is no room; the reservation stays, and its pods on healthy nodes
     * are placed (docs/webhook.md "When nodes fail"). */
    int replace_fail_fast;
    /* Packing pods without topology requests (NULL: off, and such pods
     * cost what they cost before: no decoding beyond their metadata);
     * copied. The topologies taking part say so (npacking_levels). */
    const topo_admission_packing *packing;
    topo_admission_ns_packing_fn ns_packing_off; /* NULL: no namespace opts out */
    void *ns_packing_payload;
    topo_admission_ready_fn packing_ready; /* NULL: always ready (a static inventory) */
    void *packing_ready_payload;
} topo_admission_opts;

/* Default time free slots hold capacity without a pod claiming one. */
#define TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT 120
/* Default caps on reserved-but-unclaimed pods (slots), per namespace and in
 * all: a 2,048-pod job fits; one namespace cannot hold a whole large
 * cluster's pod slots with one pod. */
#define TOPO_ADMISSION_UNCLAIMED_PODS_NAMESPACE_DEFAULT 2048
#define TOPO_ADMISSION_UNCLAIMED_PODS_GLOBAL_DEFAULT 8192

/* The handler's state. A PodSet is placed under one mutex (every placement
 * changes the snapshot the next one reads): the engine on the topology's
 * live snapshot, then the reservation written to the cache (a restart loses
 * nothing) and charged on the live snapshot at once (the next request sees
 * the capacity gone). Pods of PodSets already placed only claim a slot.
 * dryRun requests compute without the mutex and store nothing. */
typedef struct topo_admission_ctx topo_admission_ctx;

/* Loads the reservations the cache holds into the topologies' lives. */
int topo_admission_ctx_create(topo_admission_ctx **out, const topo_admission_opts *opts,
                              topo_err *err) TOPO_MUST_CHECK;
void topo_admission_ctx_free(topo_admission_ctx *ctx);

/* What became of a pod whose slot's node failed or cannot take it
 * (docs/webhook.md "When nodes fail"), as
 * topo_webhook_node_replacements_total{outcome} counts it. */
typedef enum topo_admission_replace_outcome {
    TOPO_ADMISSION_REPLACED = 0,    /* the failed nodes' slots moved to other nodes */
    TOPO_ADMISSION_REPLACE_NO_ROOM, /* no node in the domain takes them: the no-fit policy */
    TOPO_ADMISSION_REPLACE_WAITING, /* unusable, but the PodSet's pods still run there */
    TOPO_ADMISSION_REPLACE_FAIL_FAST, /* no room, replace_fail_fast: the pod refused */
    TOPO_ADMISSION_REPLACE_NEW,     /* a single-Pod PodSet: placed anew, not repaired */
    TOPO_ADMISSION_REPLACE_OUTCOMES
} topo_admission_replace_outcome;

/* "replaced", "no_room", "waiting", "fail_fast", "new". */
extern const char *const topo_admission_replace_outcome_names[TOPO_ADMISSION_REPLACE_OUTCOMES];

typedef struct topo_admission_stats {
    uint64_t placed;       /* pods given a slot */
    uint64_t reserved;     /* PodSets placed (reservations created) */
    uint64_t gated;        /* pods gated (policy gate) */
    uint64_t denied;       /* pods refused (policy deny, or malformed) */
    uint64_t ignored;      /* pods admitted unplaced (policy ignore, slots exhausted, conflicts) */
    uint64_t passed;       /* requests passed through (not ours) */
    uint64_t ungated;      /* pods placed by topo_admission_ungate_pod */
    uint64_t errors;       /* internal errors (cache, memory) */
    uint64_t invalid;      /* of denied: requests Kueue's validation refuses */
    uint64_t unknown_level; /* valid requests naming a level no topology has (then the policy) */
    uint64_t timed_out;    /* requests stopped at their deadline (504, nothing stored) */
    /* packing: pods requesting a packed resource steered (packed) or passed
     * unchanged, by reason (of passed) */
    uint64_t packed;
    uint64_t pack_passed[TOPO_ADMISSION_PACK_REASONS];
    /* topology pods that arrived carrying annotations topo writes without
     * a seal that verifies (removed); the ungater's pods counted when it
     * patches them */
    uint64_t foreign_annotations;
    /* failed-node replacements, by outcome (topo_admission_replace_outcome) */
    uint64_t node_replacements[TOPO_ADMISSION_REPLACE_OUTCOMES];
    /* Events never passed to topo_admission_events_drain's fn: over
     * TOPO_ADMISSION_EVENTS_MAX queued, or their pod not seen within
     * TOPO_ADMISSION_EVENT_TTL_S */
    uint64_t events_dropped;
    uint32_t failing;      /* placements failed here (the cache) in a row */
    size_t reservations;   /* live reservations (cache rows) after the last tick */
    int64_t last_tick;     /* clock of the last topo_admission_tick, 0 before */
} topo_admission_stats;
void topo_admission_get_stats(topo_admission_ctx *ctx, topo_admission_stats *out);

/* Capacity held now for pods not created yet (free slots not given back),
 * per namespace and resource (Kueue units; "pods" for slots): one call
 * each; fn returning non-zero stops and is returned. For /metrics. */
typedef int (*topo_admission_unclaimed_fn)(void *payload, const char *namespace_,
                                           const char *resource, int64_t amount);
int topo_admission_unclaimed_foreach(topo_admission_ctx *ctx, topo_admission_unclaimed_fn fn,
                                     void *payload, topo_err *err) TOPO_MUST_CHECK;

/* A pod topo placed (its slot's host in its nodeSelector) that
 * kube-scheduler has not bound, whose node has since failed: deleted,
 * without a Ready condition, NotReady or cordoned (the pod's tolerations
 * are not known here: taints are not looked at). Nothing recreates such a
 * pod; topo-webhook fails it, as Kueue's node controller does
 * (markPodsFailed), so that its controller replaces it (docs/webhook.md
 * "When nodes fail"). what: "is NotReady", "was deleted", ... Strings
 * live for the call. */
typedef struct topo_admission_stranded {
    const char *namespace_;
    const char *pod_name;
    const char *pod_uid;
    const char *host; /* the slot's kubernetes.io/hostname */
    const char *what;
} topo_admission_stranded;
typedef int (*topo_admission_stranded_fn)(void *payload, const topo_admission_stranded *s);
/* Calls fn for each such pod (topo_cache_foreach_stranded, of a slot whose
 * assignment ends at kubernetes.io/hostname, in a configured topology),
 * outside the ctx's lock; fn returning non-zero stops and is returned.
 * <0 on cache errors. */
int topo_admission_stranded_foreach(topo_admission_ctx *ctx, topo_admission_stranded_fn fn,
                                    void *payload, topo_err *err) TOPO_MUST_CHECK;

/* The generation term of the reservations this ctx makes and repairs
 * from now on (topo_cache_reservation gen_term): the Lease's
 * leaseTransitions when this replica took it, so that a replacement made
 * by a placer that took over outranks one made by the placer before it.
 * 0 until set (one replica, no Lease). Any thread. */
void topo_admission_set_term(topo_admission_ctx *ctx, int64_t term);

/* A Kubernetes Event topo-webhook owes a pod: queued when a placement
 * decides it (a failed node's slot moved, or found no room), posted by the
 * caller once the pod is known. */
typedef struct topo_admission_event {
    const char *namespace_;
    const char *pod_name;
    const char *pod_uid;
    const char *type;    /* "Normal", "Warning" */
    const char *reason;  /* "TopologyNodeReplaced", "TopologyNodeReplacementFailed" */
    const char *message; /* names the failed node and the new one */
} topo_admission_event;

/* The reasons of the Events on a gated pod (docs/webhook.md "Events on
 * gated pods"): Normal both, as Kueue's "Pending" on a Workload that waits
 * for room; TopologyWaiting carries the wait-reason annotation's text. */
#define TOPO_ADMISSION_EVENT_WAITING "TopologyWaiting"
#define TOPO_ADMISSION_EVENT_PLACED "TopologyPlaced"

/* reason as the wait-reason annotation holds it (cut at
 * TOPO_ADMISSION_WAIT_REASON_MAX bytes, at a UTF-8 boundary, ending in
 * "..."): what the annotation and the TopologyWaiting Event say. */
void topo_admission_wait_reason_text(char out[TOPO_ADMISSION_WAIT_REASON_MAX + 1],
                                     const char *reason);

/* 1 when annotation (the pod's wait-reason, NULL: none) already says
 * reason, as the annotation holds it (cut at TOPO_ADMISSION_WAIT_REASON_MAX,
 * ending in "..."): no Event is owed for reason. */
int topo_admission_wait_reason_same(const char *annotation, const char *reason);

/* The JSON Patch that sets a gated pod's wait-reason annotation to reason
 * (cut as admission cuts it), guarded by a "test" of the value it had
 * (old; NULL: the annotation is added, unguarded), so that a pod released
 * or edited meanwhile is refused by the API server (422), not rewritten.
 * *out is a new reference. TOPO_EINVALID (not UTF-8), TOPO_ENOMEM. */
int topo_admission_wait_reason_patch(json_t **out, const char *old, const char *reason,
                                     topo_err *err) TOPO_MUST_CHECK;

/* The domain an ungate patch (topo_admission_ungate_pod_json's) sends its
 * pod to: the nodeSelector entries it adds, as "k=v, k=v" in the patch's
 * order, cut to size - 1 bytes (at a UTF-8 boundary, ending in "...").
 * 0; TOPO_ENOTFOUND when the patch adds no nodeSelector entry (out "").
 * size at least 4. */
int topo_admission_patch_domain_text(char *out, size_t size, const json_t *patch);

/* Events are kept this long for their pod to appear, then dropped. */
#define TOPO_ADMISSION_EVENT_TTL_S 60
/* At most this many are queued; more are dropped (and counted). */
#define TOPO_ADMISSION_EVENTS_MAX 256

/* Calls fn for every queued event whose pod the cache now holds (the pod
 * holding the slot the event is about, or the pod named at admission),
 * oldest first, and forgets it; drops those older than
 * TOPO_ADMISSION_EVENT_TTL_S. The strings live for the call. fn's
 * return value is ignored (an Event is best effort). Returns how many were
 * passed to fn, <0 on errors. From one thread (the ungater's). */
typedef void (*topo_admission_event_fn)(void *payload, const topo_admission_event *ev);
int topo_admission_events_drain(topo_admission_ctx *ctx, topo_admission_event_fn fn,
                                void *payload, topo_err *err);

/* Placements failing for a local reason (the cache refusing writes: disk
 * full, a damaged file) make the webhook unready, so that the API server
 * stops calling a replica that can only admit pods unplaced:
 * TOPO_ADMISSION_FAILING_UNREADY failures in a row, until
 * TOPO_ADMISSION_FAILING_RETRY_S after the last one (then requests try
 * again) or a claim is stored. 1 ready; 0 with the reason in why (may be
 * NULL). */
#define TOPO_ADMISSION_FAILING_UNREADY 3
#define TOPO_ADMISSION_FAILING_RETRY_S 30
int topo_admission_ready(topo_admission_ctx *ctx, char *why, size_t why_size);

/* Housekeeping, every second or so from one thread: deletes reservations
 * that expired and whose pods are gone (topo_cache_reservation_gc), and
 * brings the capacity the lives hold for reservations in line with the
 * cache (slots whose pods are now bound are charged as those pods instead;
 * expired ones are no longer charged). */
int topo_admission_tick(topo_admission_ctx *ctx, topo_err *err) TOPO_MUST_CHECK;

/* 1 when the Pod object (JSON, as the API server returns it) carries
 * scheduling gate TOPO_ADMISSION_WAIT_GATE. */
int topo_admission_pod_json_gated(const json_t *pod);

/* The patch that releases a pod from TOPO_ADMISSION_WAIT_GATE without
 * placing it (topoassign release: topo-webhook is being removed). pod is the
 * object as the API server returns it. The operations: a "test" of its
 * metadata.uid (a pod created since under the same name is not this one),
 * then topo_admission_patch_ungate's (the gate tested at its index and
 * removed, the gate's annotations removed); other gates, annotations and
 * fields are not touched, so the API server applies it to the pod as it is
 * then or refuses it (422) when any of it changed. *out_patch: a new
 * reference to the operations array; NULL when the pod does not carry the
 * gate (nothing to release). TOPO_EINVALID naming the field for an object
 * that is not a Pod with a uid. */
int topo_admission_release_patch(json_t **out_patch, const json_t *pod,
                                 topo_err *err) TOPO_MUST_CHECK;

/* The ungater's entry: places a pod waiting under TOPO_ADMISSION_WAIT_GATE
 * (its object as the API server returns it, JSON), exactly as admission
 * would, reserving and claiming. On success *out_patch (malloc'd) is an RFC
 * 6902 patch for the pod: nodeSelector and annotations added, the wait-reason
 * annotation and the gate removed (guarded by "test" operations, so a pod
 * that changed meanwhile is refused by the API server, not mangled). Its
 * author may have edited the gated pod since admission: annotations of
 * TOPO_ADMISSION_WRITTEN_ANNOTATIONS without a seal that verifies are
 * trusted for nothing and removed by the patch.
 * TOPO_ENOFIT (Kueue's reason in err) when it still does not fit;
 * TOPO_EWAITING when its pod group still waits for some of its pods (the
 * pod is recorded as one of them: each gated member must be tried);
 * TOPO_EINVALID for an object that is not a gated topology pod. */
int topo_admission_ungate_pod(topo_admission_ctx *ctx, const char *pod_json, size_t len,
                              char **out_patch, topo_err *err) TOPO_MUST_CHECK;
/* The same over the pod object the caller holds (the ungater: no text in
 * between); *out_patch is a new reference to the operations array. */
int topo_admission_ungate_pod_json(topo_admission_ctx *ctx, const json_t *pod,
                                   json_t **out_patch, topo_err *err) TOPO_MUST_CHECK;

/* Answers one AdmissionReview body (a wh_handle_fn minus the server's
 * request wrapper). *out_body is malloc'd (caller frees).
 * - body unreadable and no request.uid: 400 {"error": "..."} (413 over the limit);
 * - request.uid readable but the request malformed: 200, allowed=false, code 400;
 * - pass-through classes (topo_admission_classify): 200, allowed, no patch;
 * - topology pods: the topology is the first whose levels have every level
 *   the pod names and whose node labels its nodeSelector allows; the PodSet
 *   is identified (lib/admission/handler_podset.c: Kueue pod group, JobSet
 *   replicated job, LeaderWorkerSet group, Job with its cached parallelism,
 *   topology.topo.io/podset-size, else the pod alone); the first pod places
 *   the whole PodSet with topo_engine_find under the ctx's lock and reserves
 *   it in the cache; every pod claims a slot (its completion index when it
 *   has one and it is in range, else its earlier claim, else the next free
 *   one). Patch: nodeSelector = every level of the slot's domain (for a
 *   by-host assignment the upper levels are the host's labels) +
 *   annotations topology.topo.io/assignment (Kueue's TopologyAssignment,
 *   compact JSON), /reservation, /slot and /seal. dryRun computes the same
 *   answer and neither reserves nor claims. Not fitting: the policy (the
 *   namespace's override, else the topology's). A pod carrying any of
 *   TOPO_ADMISSION_WRITTEN_ANNOTATIONS without a seal that verifies for it
 *   has them removed by the patch (whatever the outcome; none when it is
 *   refused), a warning naming them, and is placed on its own terms.
 * Returns 0 with an answer, TOPO_ENOMEM when out of memory (the server
 * answers 500). */
int topo_admission_handle(topo_admission_ctx *ctx, const char *body, size_t len,
                          char **out_body, size_t *out_len, int *out_status);

/* topo_admission_handle with a deadline (topo_clock_ns nanoseconds; 0:
 * none): a topology pod whose request reaches the placement lock, or leaves
 * the engine, past it stops there, stores nothing, and is answered 504
 * (nobody reads the answer any more; what it would have reserved stays
 * free). */
int topo_admission_handle_until(topo_admission_ctx *ctx, int64_t deadline_ns, const char *body,
                                size_t len, char **out_body, size_t *out_len, int *out_status);

/* Whether answering this AdmissionReview may place (a well-formed review
 * of a topology pod): only such requests need the replica that places;
 * any replica answers the others (passed, or refused as malformed) alike. */
int topo_admission_needs_placer(const char *body, size_t len);

/* topo_admission_handle on a replica that does not place (another one
 * does, or none can be reached): everything is checked and answered as
 * usual — pass-through, invalid requests refused — but a topology pod is
 * answered as one whose PodSet does not fit, with reason why, under its
 * no-fit policy; nothing is reserved, claimed or recorded. */
int topo_admission_handle_unplaced(topo_admission_ctx *ctx, const char *why, const char *body,
                                   size_t len, char **out_body, size_t *out_len,
                                   int *out_status);

#endif
