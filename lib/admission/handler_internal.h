/* The admission handler's internal header (the wire format below it has
 * review_internal.h and includes nothing of this one). Not a public header.
 * Its files, bottom up: each calls only files on its own line or above.
 *
 *   handler_util.c      the ctx's clock, local failures, string copies
 *   handler_memo.c      reservations kept in memory
 *   handler_mirror.c    capacity held in the live snapshots
 *   handler_podset.c    the PodSet a pod belongs to
 *   handler_fairness.c  room held for pods not created yet
 *   handler_groups.c    Kueue pod groups
 *   handler_events.c    Events owed to pods
 *   handler_reserve.c, handler_replace.c, handler_answer.c, handler_seal.c
 *                       reservations stored and claimed, failed-node
 *                       replacement, answers and patches, seals: one layer
 *                       (reserve and replace, answer and seal call each other)
 *   handler_place.c     a PodSet placed, a pod group placed
 *   handler_pack.c      a pod without a topology request steered (packing)
 *   handler_tick.c      topo_admission_tick: the periodic work
 *   handler_ctx.c       the context: create/free, stats, readiness
 *   handler.c, handler_stranded.c
 *                       the entry points; pods stranded on failed nodes
 *
 * The context, the memo and the mirror used to call each other (ctx <->
 * memo, mirror -> ctx): the helpers all three need are in handler_util.c,
 * the tick that drives the memo and the mirror in handler_tick.c. */
#ifndef TOPO_ADMISSION_HANDLER_INTERNAL_H
#define TOPO_ADMISSION_HANDLER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "topo/admission.h"
#include "topo/admission_review.h"
#include "topo/jsonpatch.h"

#include "topo/cache.h"
#include "topo/engine.h"
#include "topo/strmap.h"

/* --- handler_podset.c: the PodSet a pod belongs to ------------------------ */

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
int adm_podset_identify(topo_podset_id *id, const topo_admission_pod *pod, const char *request_ns,
                        const char *request_uid, const char *pod_uid, topo_cache *cache,
                        topo_pool *pool, topo_err *err);

/* --- handler_fairness.c: room held for pods not created yet ---------------- */

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
int adm_fair_check(const topo_fairness *f, topo_cache *cache, int64_t now, const char *ns,
                   const topo_resource *req, size_t nreq, int32_t size, int32_t arriving,
                   topo_pool *pool, const char **why, topo_err *err) TOPO_MUST_CHECK;

/* Per namespace and resource ("pods" too), what is held for pods not
 * created yet; fn returning non-zero stops and is returned. */
int adm_fair_report(topo_cache *cache, int64_t now, topo_admission_unclaimed_fn fn, void *payload,
                    topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* --- handler_groups.c: Kueue pod groups ------------------------------------ */

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
int adm_group_view(topo_group_view *out, topo_cache *cache, const topo_podset_id *id,
                   const topo_group_pod *pod, int64_t now, topo_pool *pool,
                   topo_err *err) TOPO_MUST_CHECK;

/* The engine's PodSets for a complete group: one per role, its count and
 * its first pod's spec, named by shape. *out has v->nroles entries. */
int adm_group_specs(topo_podset_spec **out, const topo_group_view *v, topo_pool *pool,
                    topo_err *err) TOPO_MUST_CHECK;

/* The PodSet's request for the engine: count pods shaped like pod, with the
 * Kueue request lib/kueue reads from its annotations (one reading for
 * every path: topoassign, the ungater, the case loader). TOPO_EINVALID
 * carries Kueue's message; TOPO_ENOMEM. */
int adm_podset_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count,
                    topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
/* Its part that the pod alone gives: count pods with its requests,
 * nodeSelector, tolerations and node affinity, no topology request (a
 * pod packed is steered as a one-pod PodSet of it). */
void adm_pod_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count);

/* Without a cache change, the reserved capacity is re-read at least this
 * often (expiry is the only change that needs no write). */
#define RESYNC_MAX_S 30

/* Capacity this ctx holds in a live snapshot for one reservation domain. */
typedef struct pushed {
    char *key; /* "<reservation id>|<value>|<value>..." (label values have no '|') */
    size_t topo;
    int32_t count;
    int seen; /* during a resync */
} pushed;

typedef struct topology {
    topo_admission_topology t; /* strings in the ctx's pool */
} topology;

struct topo_admission_ctx {
    pthread_mutex_t mu; /* the cache connection, the pushed table */
    topology *topos;
    size_t ntopos;
    topo_pool *pool; /* the topologies' strings */
    /* The engine's working memory under mu, cleared (blocks kept) after
     * each placement: at 10k nodes a call needs about a megabyte, which a
     * fresh pool would take from mmap and fault in on every request. */
    topo_pool *engine_pool;
    topo_cache *cache;
    int64_t ttl;
    int64_t unclaimed_ttl; /* free slots' hold without a claim */
    topo_fairness fair;    /* caps in pool */
    topo_admission_policy default_policy;
    topo_admission_ns_policy_fn ns_policy;
    void *ns_policy_payload;
    int64_t (*clock)(void *);
    void *clock_payload;
    topo_gates gates;
    /* The record keys, else one random key of this ctx's own: seals are
     * made and checked with them; reservation records are written only
     * under record keys (records: 1), which other caches can verify. */
    topo_keyring keys;
    int records;
    /* Random bytes for reservation ids, drawn in bulk under mu (one
     * RAND_bytes call per id cost as much as storing the reservation's
     * rows); rand_left of them unused, at the end of the buffer. */
    unsigned char rand_buf[256];
    size_t rand_left;
    /* Reservations of PodSets placed or looked up lately (handler_memo.c): index
     * key -> entry in memo, strings in memo_pool. */
    topo_cache_reservation *memo;
    size_t nmemo;
    topo_strmap *memo_index;
    topo_pool *memo_pool;

    pushed *pushed;
    size_t npushed, cap_pushed;
    topo_strmap *pushed_index; /* key -> index into pushed */
    int64_t data_version;
    int64_t next_resync;
    size_t reservations;

    _Atomic uint64_t placed, reserved, gated, denied, ignored, passed, ungated, errors, invalid,
        unknown_level, timed_out, foreign;
    /* Failed-node replacement (handler_replace.c): the generation term of what
     * this ctx reserves and repairs (topo_admission_set_term), whether a
     * pod whose failed slot has no room is refused, and the outcomes. */
    _Atomic int64_t term;
    int replace_fail_fast;
    _Atomic uint64_t node_replacements[TOPO_ADMISSION_REPLACE_OUTCOMES];
    /* What handler_replace.c reported (counted, logged, an Event) in the current
     * window, by "<outcome>|<reservation>|<slot>" (keys in reported_pool),
     * under mu: anyone can send AdmissionReviews, and each one for a slot
     * without room would report it again. */
    topo_strmap *reported;
    topo_pool *reported_pool;
    int64_t reported_since;
    /* Events owed to pods (handler_events.c), under events_mu (not mu: the
     * ungater drains them while requests place). */
    pthread_mutex_t events_mu;
    struct adm_event *events; /* oldest first */
    size_t nevents, cap_events;
    /* Gated pods given an Event found among their PodSet's gated pods
     * lately, by uid and reason: the drain's own (no lock), so that the
     * Events of a PodSet's pods gated together go one to each pod. */
    struct adm_posted *posted;
    size_t nposted;
    _Atomic uint64_t events_dropped;
    _Atomic int64_t last_tick;
    /* Placements failing for a local reason (the cache: disk full, a
     * damaged file): how many in a row, and when the last one failed. */
    _Atomic uint32_t failing;
    _Atomic int64_t last_failure;
    /* Packing pods without topology requests (handler_pack.c): NULL off;
     * copied into pool. pin_keys: the node label keys whose mention in a
     * pod's nodeSelector or required affinity pins it (the hostname and
     * every level at or below a taking-part topology's packing level). */
    const topo_admission_packing *packing;
    const char *const *pin_keys;
    size_t npin_keys;
    topo_admission_ns_packing_fn ns_packing_off;
    void *ns_packing_payload;
    topo_admission_ready_fn packing_ready;
    void *packing_ready_payload;
    _Atomic uint64_t packed, pack_passed[TOPO_ADMISSION_PACK_REASONS];
};

typedef enum mode { MODE_ADMIT, MODE_UNGATE } mode;

typedef struct answer {
    topo_admission_response resp;
    topo_jsonpatch *patch;
    const char *role; /* a pod-group pod's shape: annotated, for the ungater to read back */
    const char *podset_key; /* what the pod's seal names: its PodSet's (its role's) key */
    const char *warnings[4];
    const char *failure; /* ungate: why it still does not fit */
    int64_t deadline_ns; /* topo_clock_ns; 0: none (the ungater) */
    int timed_out;       /* stopped at the deadline, nothing stored */
    const char *unplaced; /* this replica does not place: why (the no-fit policy answers) */
    int waiting_group;    /* its pod group waits for more pods */
    /* The seal (handler_seal.c): the pod carried annotations topo writes and a
     * seal that verifies for them (our own output coming back); or they
     * are removed, first thing in any patch (strip), and foreign names
     * those not expected there ("k, k", NULL when none). */
    int sealed;
    const char *const *strip;
    size_t nstrip;
    const char *foreign;
} answer;

/* A slot: where a pod goes. */
typedef struct placement {
    const char *reservation_id;
    int32_t slot;
    const char *const *levels; /* the assignment's */
    const char *const *values;
    size_t nlevels;
    const char *assignment_json;
    int claimed;          /* 0: the slot is another live pod's (sticky index) or dryRun */
    const char *claimant; /* who claimed it (claimed), or would (a slot shared: not claimed) */
    const topo_cache_reservation *res; /* its reservation, for the pod's record */
} placement;

/* What a new reservation records beside its assignment. */
typedef struct podset_terms {
    const char *key;   /* the PodSet's */
    const char *shape; /* what its pods share */
    const char *request;
} podset_terms;

/* --- handler_util.c ------------------------------------------------------ */

int64_t adm_now_s(topo_admission_ctx *ctx);

const char **adm_dup_strings(topo_pool *pool, const char *const *s, size_t n);

/* A placement that failed here, not in the cluster: counted, and for
 * readiness. */
void adm_failed_locally(topo_admission_ctx *ctx);

/* --- handler_mirror.c ---------------------------------------------------- */

/* Sets what topology t's live holds under key (count 0: nothing). mu held. */
int adm_push(topo_admission_ctx *ctx, size_t t, const char *id, const char *const *values,
             size_t nvalues, int32_t count, const topo_resource *req, size_t nreq, topo_err *err);

/* Brings the pushed table in line with the cache (reservations moved or
 * gone through a write of ours that the table does not follow). mu held. */
int adm_resync(topo_admission_ctx *ctx, int64_t now, topo_err *err);

/* A reservation id is "<topology name>.<random>": its topology survives a
 * restart without another lookup. */
long adm_topology_of_id(const topo_admission_ctx *ctx, const char *id);

/* --- handler_reserve.c --------------------------------------------------- */

/* Claims a slot of reservation r for the pod. 0 with *p filled; 1 when the
 * pod cannot have one (*why set); <0 on cache errors. mu held. */
int adm_claim(topo_admission_ctx *ctx, placement *p, const topo_cache_reservation *r,
              const topo_podset_id *id, int dry_run, int64_t now, const char **why, topo_pool *pool,
              topo_err *err);

/* Kueue's TopologyAssignment as compact JSON in pool: the pods' annotation
 * and the cache's column. NULL when out of memory. */
const char *adm_assignment_text(const topo_assignment *as, topo_pool *pool);

/* Stores n reservations (one per PodSet placed together), the pod's slot
 * in reservation `mine` claimed as it is written, in one transaction (mu
 * held). 0 with *p filled; <0 on errors, nothing stored. r has room for n. */
int adm_reserve_and_claim(topo_admission_ctx *ctx, size_t t, const topo_podset_id *id,
                          const podset_terms *terms, const topo_podset_spec *ps,
                          topo_assignment *const *as, size_t n, size_t mine, int64_t now,
                          topo_cache_reservation *r, placement *p, topo_pool *pool,
                          topo_err *err);

/* The live, unexpired reservation of the PodSet into *r: 1 found, 0 not.
 * memo: from the memo when it has it (its slots then all unclaimed: not
 * for dryRun's peek); a claim that then finds no reservation means the
 * memo is stale (adm_memo_clear, and look up again without it). */
int adm_lookup(topo_admission_ctx *ctx, const char *key, int64_t now, int memo,
               topo_cache_reservation *r, topo_pool *pool, topo_err *err);

/* Why a pod cannot claim reservation r (NULL when it can): it is not
 * shaped like the pods the PodSet was placed for, or asks Kueue for
 * something else. terms->shape NULL: not checked. */
const char *adm_contradicts(const topo_cache_reservation *r, const podset_terms *terms,
                            topo_pool *pool);

/* --- handler_memo.c ------------------------------------------------------ */

/* The memo's reservation of PodSet key copied into pool: 1, 0 when it has
 * none, TOPO_ENOMEM. mu held. */
int adm_memo_get(topo_admission_ctx *ctx, const char *key, topo_cache_reservation *out,
                 topo_pool *pool);

/* Keeps (a copy of) r, as stored in the cache. Best effort. mu held. */
void adm_memo_put(topo_admission_ctx *ctx, const topo_cache_reservation *r);

/* Forgets every reservation (after deletions, or a stale one). mu held. */
void adm_memo_clear(topo_admission_ctx *ctx);

void adm_memo_free(topo_admission_ctx *ctx);

/* --- handler_answer.c ---------------------------------------------------- */

/* Past the request's deadline nobody reads the answer (the API server has
 * applied its failure policy): a request that waited that long for the lock
 * or the engine stops before it stores anything, so no room is reserved
 * for a pod that will not carry our patch. */
int adm_past_deadline(answer *a);

void adm_warn(answer *a, const char *w);

void adm_refuse(answer *a, int code, const char *msg);

/* Not fitting: the policy. */
int adm_no_fit(topo_admission_ctx *ctx, answer *a, mode m, topo_admission_policy policy,
               const topo_admission_request *req, const topo_podset_id *id, const char *need,
               const char *failure, topo_pool *pool);

int adm_patch_placed(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
                     long t, const placement *p, topo_pool *pool);

/* dryRun: the slot the pod would get in a fresh assignment (its rank's,
 * else the first), nothing stored. */
int adm_dry_run_slot(placement *p, const topo_assignment *as, int64_t rank, topo_pool *pool);

/* Its PodSet is placed but holds no slot for it: admitted as it is. */
int adm_unplaced(topo_admission_ctx *ctx, answer *a, mode m, const char *why, topo_pool *pool);

int adm_refuse_podset(topo_admission_ctx *ctx, answer *a, const topo_podset_id *id, const char *why,
                      topo_pool *pool);

/* The reservation key of a pod group's role. */
const char *adm_role_key(const topo_podset_id *id, const char *shape, topo_pool *pool);

/* Why no configured topology takes the pod; a level none has is counted. */
const char *adm_no_topology(topo_admission_ctx *ctx, const char *missing, topo_pool *pool);

/* The cache failed: admit unchanged rather than stall the cluster. what
 * names the PodSet in the log ("PodSet <key>", "pod group <key>"). */
int adm_internal_error(topo_admission_ctx *ctx, answer *a, mode m, const char *what,
                       const char *key, const topo_err *err, topo_pool *pool);

/* A pod of a group still waiting for some of its pods: gated whatever the
 * no-fit policy (the group cannot be placed without them). */
int adm_wait_for_group(topo_admission_ctx *ctx, answer *a, mode m,
                       const topo_admission_request *req, const topo_podset_id *id, size_t arrived,
                       topo_pool *pool);

/* --- handler_seal.c ------------------------------------------------------ */

/* ctx->keys: the record keys, else one random key drawn now; ctx->records
 * whether they were given. */
int adm_seal_keys_init(topo_admission_ctx *ctx, const topo_keyring *record_keys, topo_err *err);

/* The pod's namespace: metadata.namespace, else the request's. */
const char *adm_pod_namespace(const topo_admission_request *req);

/* The seal (topo_cache_seal) for the pod of req over podset_key and what
 * the patch writes (NULL: not written), in pool; NULL on errors (logged). */
const char *adm_seal(topo_admission_ctx *ctx, const topo_admission_request *req,
                     const char *podset_key, const char *reservation, const char *slot,
                     const char *role, topo_pool *pool);

/* wait-reason and podset: written when gating, removed when ungating. */
int adm_is_gate_annotation(const char *key);

/* Whether the pod of req is topo's own output: when it carries any of
 * TOPO_ADMISSION_WRITTEN_ANNOTATIONS, a->sealed when its seal verifies for
 * {its namespace, id's PodSet (its role's), reservation, slot, role};
 * else those annotations go in a->strip (and a->foreign), a warning and
 * the count in MODE_ADMIT. *view is req with the pod's annotations
 * without them: what the handler reads from then on. 0 or TOPO_ENOMEM. */
int adm_check_seal(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
                   const topo_podset_id *id, topo_admission_request *view, topo_pool *pool);

/* a->patch, created with the removal of a->strip first when there is none
 * yet (every patch of an answer starts there). 0 or TOPO_ENOMEM. */
int adm_patch_start(answer *a);

/* --- handler_events.c ---------------------------------------------------- */

/* Queues an Event for the pod that holds (or will hold) slot `slot` of
 * reservation `reservation_id` in namespace ns: posted by
 * topo_admission_events_drain once the cache shows that pod, dropped after
 * TOPO_ADMISSION_EVENT_TTL_S or beyond TOPO_ADMISSION_EVENTS_MAX queued
 * (counted in events_dropped). gated_podset: the pod was gated rather
 * than given the slot: the key its topology.topo.io/podset annotation
 * carries, and the event goes to the newest gated pod of that PodSet in
 * ns (NULL: to the pod that holds the slot). Strings are copied. Best
 * effort: nothing to report. Any thread (not under events_mu). */
void adm_event_queue(topo_admission_ctx *ctx, const char *ns, const char *reservation_id,
                     int32_t slot, const char *gated_podset, const char *type, const char *reason,
                     const char *message, int64_t now);
/* Frees the queue (ctx_free). */
void adm_events_free(topo_admission_ctx *ctx);

/* --- handler_replace.c --------------------------------------------------- */

/* How a node stands for a pod: ok; gone at once (deleted, no Ready
 * condition: failed whatever runs there); or unusable (NotReady, a taint
 * the pod does not tolerate, cordoned: failed when none of the PodSet's
 * pods still runs there). */
typedef enum host_state { HOST_OK, HOST_GONE, HOST_UNUSABLE } host_state;

typedef struct host_check {
    host_state state;
    const char *node_name; /* HOST_UNUSABLE: the node's name (its FQDN, where the host is not) */
    const char *what;      /* "is NotReady", "was deleted", ... (in pool) */
} host_check;

/* The labels at the topology's first n levels of the node whose
 * kubernetes.io/hostname is host (its name may be its FQDN), as topology
 * tp's live snapshot has it: out[i] the value copied into pool, NULL where
 * the node has no such label. 1 found, 0 when no node has that hostname,
 * TOPO_ENOMEM. Any thread. */
int adm_host_labels(const topology *tp, const char *host, size_t n, const char **out,
                    topo_pool *pool);

/* A PodSet's domain (topo_cache_reservation domain): the values of levels
 * [0, n) a node of it carries. */
typedef struct adm_domain {
    const char *const *levels;
    const char *const *values;
    size_t n;
} adm_domain;

/* The domain of values over levels as a reservation (or the stranded-pod
 * read) keeps them; none when there are more values than levels (a row
 * that does not read as one). */
adm_domain adm_domain_of(const char *const *levels, size_t nlevels, const char *const *values,
                         size_t nvalues);

/* The node whose kubernetes.io/hostname is host, as topology t's live
 * snapshot has it now (the watch's view, or the static inventory's), for
 * a pod of request ps: its tolerations decide which taints and whether a
 * cordon count (NULL: taints are not looked at, a cordon counts); a node
 * outside domain (may be NULL), relabelled or re-created elsewhere since,
 * is unusable too. 0 or
 * TOPO_ENOMEM. Any thread holding mu or not (it reads the live only). */
int adm_check_host(topo_admission_ctx *ctx, long t, const char *host, const topo_podset_spec *ps,
                   const adm_domain *domain, host_check *out, topo_pool *pool, topo_err *err);

/* What adm_repair made of a pod's slot. */
enum {
    ADM_REPAIR_NONE = 0, /* its node takes the pod: p as it was */
    ADM_REPAIR_MOVED,    /* its node failed: the PodSet's failed slots moved, p and r the new */
    ADM_REPAIR_WAIT,     /* the node cannot take it now (*why): the no-fit policy */
    ADM_REPAIR_REFUSE,   /* no room and nodeReplacement.failFast (*why): refused */
    ADM_REPAIR_NEW       /* a single pod's PodSet: its reservation deleted, place it anew */
};

/* The slot p of reservation r a pod claimed (or shares): when its node
 * failed or cannot take the pod (docs/webhook.md "When nodes fail"), the
 * PodSet's failed nodes are replaced inside its domain in one step (r and
 * p then describe the new generation, as the cache holds it), counted,
 * logged and an Event queued. ps: the pod's request (tolerations, count
 * unused); gate_key: the PodSet key a gate of the pod writes (its Event
 * then finds it). A slot not on a node (an assignment without the hostname
 * level) is left alone. One of ADM_REPAIR_*, or <0 (cache errors, with
 * err). The caller gives back a claim it took for WAIT and REFUSE. mu held. */
/* Frees what adm_repair keeps between calls. */
void adm_repair_free(topo_admission_ctx *ctx);

int adm_repair(topo_admission_ctx *ctx, mode m, placement *p, topo_cache_reservation *r,
               const topo_podset_spec *ps, const topo_admission_request *req,
               const char *gate_key, int64_t now, const char **why, topo_pool *pool,
               topo_err *err);

/* --- handler_pack.c ------------------------------------------------------ */

/* A pod CREATE without a topology request (TOPO_ADMISSION_PASS_NO_TOPOLOGY)
 * while packing is on: steered into the domains in use that fit it, or
 * passed unchanged; counted when it requests a packed resource. obj is the
 * Pod object of the review (its spec is read here, nothing before). 0 (the
 * answer in a), TOPO_ENOMEM. Any thread: no lock, nothing stored. */
int adm_pack(topo_admission_ctx *ctx, answer *a, topo_admission_request *req, const json_t *obj,
             topo_pool *pool);

/* Copies the packing options into ctx (handler_ctx.c at create). */
int adm_pack_init(topo_admission_ctx *ctx, const topo_admission_opts *o, topo_err *err);

/* --- handler_place.c ----------------------------------------------------- */

/* A topology pod: place, reserve, claim, patch. pod_uid: ungating only. */
int adm_place(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
              const char *pod_uid, topo_pool *pool);

#endif
