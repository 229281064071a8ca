/* The topology cache: one SQLite file (WAL mode) holding what the engine and
 * the webhook need from the cluster — nodes, pods and jobs as the watch last
 * saw them, where each watch stopped, and topology reservations (a PodSet's
 * assignment as slots that its pods claim). Written by the cache filler and
 * the reservation code, read by the engine through a topo_snapshot and by
 * `topoassign --db`. topo-sync keeps the last good facts of each of its
 * sources in it too (topo/cache_facts.h).
 *
 * Threads: a topo_cache is one SQLite connection; use it from one thread at
 * a time (give every thread its own). Several processes may open the same
 * file: writers take turns (busy_timeout), readers never block.
 *
 * Transactions: every write outside topo_cache_begin/commit is its own
 * transaction. Between begin and commit, writes are batched (a filler applies
 * hundreds of watch events per transaction); each call is still atomic on its
 * own: a call that fails (say, a malformed object) changes nothing and leaves
 * the batch open and intact.
 *
 * Durability: synchronous=NORMAL in WAL mode. A commit survives the process
 * being killed (kill -9: the WAL is in the OS page cache); on power loss or an
 * OS crash the last commits may roll back, but the database stays consistent.
 * That is safe for nodes, pods, jobs and watch state: they mirror the API
 * server, and the resource version a watch resumes from is written in the
 * same transaction as the rows, so a lost tail is simply replayed.
 * Reservations exist nowhere else, so losing a tail of them to a power loss
 * loses promises; but the webhook's cache file usually lives on an emptyDir,
 * which a power loss (a node reboot) takes with it anyway, while an fsync per
 * admission costs milliseconds. So reservation writes made outside a batch
 * are committed with synchronous=NORMAL too, unless the cache was opened
 * with topo_cache_opts.reservation_sync_full = 1 (a file on durable
 * storage): then with synchronous=FULL. A batch opened with
 * topo_cache_begin_durable is always committed with synchronous=FULL.
 *
 * Strings and arrays handed to callbacks are borrowed for the duration of
 * the call; results returned through a topo_pool live as long as the pool.
 * Callbacks must not call back into the same topo_cache. Times (created_at,
 * expires_at, now) are whatever clock the caller uses, typically seconds
 * since the epoch: the cache only compares them and never reads a clock. */
#ifndef TOPO_CACHE_H
#define TOPO_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/keyring.h"
#include "topo/sha256.h"
#include "topo/model.h"
#include "topo/pool.h"

/* The schema version this build creates and reads. Older files are migrated
 * when opened; newer ones are refused (TOPO_EUNSUPPORTED). */
#define TOPO_CACHE_SCHEMA_VERSION 7

typedef struct topo_cache topo_cache;

/* How long a connection waits for another writer unless told otherwise. */
#define TOPO_CACHE_BUSY_TIMEOUT_MS_DEFAULT 5000

/* Zero is the default for every field: `topo_cache_opts o = {.read_only = 1};`. */
typedef struct topo_cache_opts {
    int must_exist;      /* 1: TOPO_ENOTFOUND when the file is missing (0: it is created) */
    /* How long to wait for another writer: 0 TOPO_CACHE_BUSY_TIMEOUT_MS_DEFAULT,
     * negative: not at all. */
    int busy_timeout_ms;
    /* 1: commit reservation writes made outside a batch with
     * synchronous=FULL (survives power loss); 0: NORMAL (survives the
     * process being killed). See "Durability" above. */
    int reservation_sync_full;
    /* 1: this connection never checkpoints the WAL on its own (SQLite does
     * it at some commit, which then takes milliseconds: a latency spike on a
     * request path); the owner calls topo_cache_checkpoint, typically from
     * another connection on another thread. */
    int manual_checkpoint;
    /* 1: open for reading only (topoassign show, cache stats): nothing is
     * created, migrated or written; a file that is empty, or of an older
     * schema, is refused rather than made into a cache. */
    int read_only;
    /* The keys reservation records are signed with (topo-webhook's record
     * keys: every replica holds them, no pod author does); any of them
     * verifies, the first signs; copied. NULL or empty: records on pods are
     * ignored (see "Slot binding"). */
    const topo_keyring *record_keys;
} topo_cache_opts;

/* Opens (or creates) the cache file and migrates its schema to
 * TOPO_CACHE_SCHEMA_VERSION in one transaction. opts may be NULL (defaults).
 * TOPO_ENOTFOUND when the file is missing and must_exist is 1; TOPO_EUNSUPPORTED
 * for a schema newer than this build; TOPO_EINVALID for a file that is not a
 * SQLite database or not a topo cache. */
int topo_cache_open(topo_cache **out, const char *path, const topo_cache_opts *opts,
                    topo_err *err) TOPO_MUST_CHECK;
/* How many corrupt copies of a file topo_cache_open_healing keeps: the
 * newest only. It is evidence for a post-mortem (the log line and the
 * daemons' counters tell how often); topo-webhook's file lives on a tmpfs
 * emptyDir (the chart's sizeLimit 256Mi, counted as the pod's memory)
 * where each copy costs a whole cache, and an emptyDir over its sizeLimit
 * gets the pod evicted. */
#define TOPO_CACHE_CORRUPT_KEEP 1

/* The daemons' open of their --db (topo-sync, topo-webhook): topo_cache_open
 * (never read_only or must_exist), with PRAGMA quick_check before the schema
 * is read. A file SQLite finds corrupt (SQLITE_CORRUPT or SQLITE_NOTADB while
 * opening or reading the schema, or quick_check not "ok") is closed and moved
 * aside to <path>.corrupt-<UTC time as YYYYMMDDTHHMMSSZ> (".1", ".2"... for a
 * second copy in the same second), its -wal and -shm to that name plus
 * "-wal" and "-shm"; one error is logged (fields file, error, moved_to);
 * copies beyond the newest TOPO_CACHE_CORRUPT_KEEP that this function made
 * (by their names) are deleted; and a new, empty cache is opened at path:
 * *out_recreated (may be NULL) is then 1. A file that cannot be moved is
 * TOPO_EIO and left where it is; a newer schema (TOPO_EUNSUPPORTED) or a
 * SQLite file that is not a topo cache (TOPO_EINVALID) are errors as for
 * topo_cache_open, the file untouched. Corruption met later, while running,
 * is an error of that call (TOPO_EINVALID), not healed here. */
int topo_cache_open_healing(topo_cache **out, int *out_recreated, const char *path,
                            const topo_cache_opts *opts, topo_err *err) TOPO_MUST_CHECK;
/* Rolls back an open batch. NULL-safe. */
void topo_cache_close(topo_cache *cache);

/* 1 once SQLite reported this connection's file corrupt (SQLITE_CORRUPT,
 * SQLITE_NOTADB) on any call: what it holds can no longer be trusted, and
 * topo-webhook exits so that its restart's healing open moves the file
 * aside. Any thread may ask. NULL: 0. */
int topo_cache_corrupt(const topo_cache *cache);

/* The schema version of an open cache (always TOPO_CACHE_SCHEMA_VERSION). */
int topo_cache_schema_version(const topo_cache *cache);

/* Copies the WAL's committed pages into the database file without waiting
 * for readers or blocking writers (a PASSIVE checkpoint). *out_pages (may be
 * NULL) gets the WAL's size in pages. A no-op for an in-memory cache. */
int topo_cache_checkpoint(topo_cache *cache, int *out_pages, topo_err *err) TOPO_MUST_CHECK;

/* SQLite's PRAGMA data_version of this connection: it changes when ANOTHER
 * connection (in this or another process) committed a change to the file
 * since the last call, never for this connection's own writes. A reader
 * compares it with the value it last saw to skip work when nothing
 * changed. */
int topo_cache_data_version(topo_cache *cache, int64_t *out, topo_err *err) TOPO_MUST_CHECK;

/* --- transactions ------------------------------------------------------------------- */

/* Opens a batch (BEGIN IMMEDIATE: it waits up to busy_timeout_ms for another
 * writer). TOPO_EINVALID when a batch is already open. */
int topo_cache_begin(topo_cache *cache, topo_err *err) TOPO_MUST_CHECK;
/* The same, committed with synchronous=FULL: for batches that write
 * reservations. */
int topo_cache_begin_durable(topo_cache *cache, topo_err *err) TOPO_MUST_CHECK;
/* Makes the batch durable and visible. On failure the batch is rolled back. */
int topo_cache_commit(topo_cache *cache, topo_err *err) TOPO_MUST_CHECK;
/* Drops the batch. A no-op when none is open. */
int topo_cache_rollback(topo_cache *cache, topo_err *err);
/* 1 while a batch is open. */
int topo_cache_in_batch(const topo_cache *cache);

/* Several reads that must see one state (say, foreach_node then
 * topo_cache_snapshot): between read_begin and read_end every read comes
 * from the same snapshot of the file. Writers elsewhere are not blocked
 * (WAL); this connection must not write until read_end. Pairs nest. */
int topo_cache_read_begin(topo_cache *cache, topo_err *err) TOPO_MUST_CHECK;
void topo_cache_read_end(topo_cache *cache);

/* --- nodes, pods and jobs from Kubernetes objects --------------------------------------- */

typedef enum topo_cache_kind {
    TOPO_CACHE_NODES = 0,
    TOPO_CACHE_PODS = 1,
    TOPO_CACHE_JOBS = 2
} topo_cache_kind;

/* "nodes", "pods", "jobs". */
const char *topo_cache_kind_name(topo_cache_kind kind);

/* Upserts one object from its JSON text (a v1 Node, a v1 Pod, a batch/v1
 * Job, as the API server sends it; `kind`, when present, must match). The
 * cache keeps only what the engine and the webhook use:
 *   Node: name, labels, allocatable (Kueue units), taints, unschedulable,
 *         Ready, resourceVersion;
 *   Pod:  uid, namespace, name, creationTimestamp (RFC 3339, validated),
 *         nodeName, phase, effective requests (as
 *         Kubernetes counts them: containers, init containers, sidecars,
 *         overhead, pod-level resources), the labels and annotations that tie
 *         it to a PodSet (see topo_cache_pod), whether it carries a Kueue TAS
 *         annotation, resourceVersion;
 *   Job:  uid, namespace, name, parallelism (default 1), completions,
 *         resourceVersion.
 * A malformed object is TOPO_EINVALID with a message naming the field
 * ("metadata.uid: required", "status.allocatable.cpu: invalid quantity
 * \"x\"") and leaves every stored row as it was.
 *
 * Slot binding: whenever a pod is stored (these upserts, watch events,
 * lists, topo_cache_put_pod) and it carries the annotations
 * topology.topo.io/reservation (an existing reservation's id) and
 * topology.topo.io/slot (a slot index of it, plain decimal), the claim is
 * checked first, since anyone who reads a placed pod can copy both: it is
 * the pod's own only when (1) the reservation's podset_key starts with the
 * pod's namespace and "/", (2) the pod's TOPO_CACHE_SEAL_ANNOTATION verifies
 * under record_keys for {its namespace, that podset_key, the reservation,
 * the slot annotation as written, its topology.topo.io/role or NULL}, and
 * (3) the pod is of that PodSet: its key, derived from the stored fields by
 * topo_podset_key_derive exactly as admission derives it (a pod with a
 * generateName also as admission saw it, without its name), is the
 * podset_key. A PodSet of the request kind ("<ns>/request/<uid>", a
 * generateName pod with nothing else) cannot be derived again once the pod
 * has a name: for it (1) and (2) decide. A pod placed before seals existed
 * carries none: for it (2) is its reservation record (TOPO_CACHE_RECORD_
 * ANNOTATION) verifying under record_keys for the reservation, and the
 * request kind, which (3) cannot check, never binds that way. A claim that
 * fails binds nothing
 * and is counted (topo_cache_foreign_claims); without record_keys none
 * passes. An own claim takes the slot (its pod_uid becomes the pod's uid)
 * when the slot is free (no pod, or a pod the cache sees Succeeded or
 * Failed), held by a provisional claimant whose name starts with "claim:"
 * (the webhook's, made before the API server gave the pod a uid), or
 * already the pod's. Otherwise — the slot is another live pod's, the pod
 * holds another slot of the reservation, no such reservation or slot, a
 * malformed annotation, or the pod itself has finished — nothing changes,
 * and it is not an error for the pod. From then on the slot is released as
 * any claimed one (pod deleted, or gone in a relist); a later event of the
 * pod that fails the check does not unbind it. The reservation's expiry
 * does not matter.
 *
 * Adoption: when that reservation is not in this cache and the pod also
 * carries topology.topo.io/assignment and a reservation record
 * (TOPO_CACHE_RECORD_ANNOTATION, topo_cache_reservation_record) signed with
 * one of this cache's record_keys for a PodSet of the pod's namespace (its
 * key starts with "<namespace>/"), the reservation is created from them
 * first, with the id, PodSet, times, shape, request and generation its
 * placer gave it; the slot is then bound as above. When the cache holds
 * the reservation already, a record of a higher generation (and the same
 * PodSet, levels and number of slots) moves its slots to the record's
 * assignment (topo_cache_reservation_reassign); an older or equal one
 * changes nothing, so a pod placed before a replacement never moves the
 * reservation back. So every replica of topo-webhook holds
 * the reservations of every created pod, and one that takes over placement
 * has them already (docs/webhook.md "Several replicas"). A record that is
 * absent, malformed or not signed with the key adopts nothing; one of
 * another namespace's PodSet adopts nothing and is counted as a foreign
 * claim; neither is an error for the pod. */
int topo_cache_upsert_node(topo_cache *cache, const char *json, size_t len,
                           topo_err *err) TOPO_MUST_CHECK;
int topo_cache_upsert_pod(topo_cache *cache, const char *json, size_t len,
                          topo_err *err) TOPO_MUST_CHECK;
int topo_cache_upsert_job(topo_cache *cache, const char *json, size_t len,
                          topo_err *err) TOPO_MUST_CHECK;
/* Deletes by key (node name, pod uid, job uid); a missing row is not an
 * error. *out_deleted (may be NULL) is 1 when a row went. A pod that goes
 * (here, by a DELETED event or in a relist) frees the reservation slots it
 * held, so its replacement can claim them. */
int topo_cache_delete_node(topo_cache *cache, const char *name, int *out_deleted,
                           topo_err *err) TOPO_MUST_CHECK;
int topo_cache_delete_pod(topo_cache *cache, const char *uid, int *out_deleted,
                          topo_err *err) TOPO_MUST_CHECK;
int topo_cache_delete_job(topo_cache *cache, const char *uid, int *out_deleted,
                          topo_err *err) TOPO_MUST_CHECK;

/* Applies one watch event line, {"type": ..., "object": {...}}:
 * ADDED/MODIFIED upsert, DELETED deletes, and each of these and BOOKMARK
 * records the object's metadata.resourceVersion as the kind's watch state,
 * in the same transaction. An ERROR event is returned as TOPO_EGONE (410:
 * relist) or TOPO_ESERVER with the Status message; nothing is written. */
int topo_cache_apply_event(topo_cache *cache, topo_cache_kind kind, const char *json, size_t len,
                           topo_err *err) TOPO_MUST_CHECK;

/* Upserts every item of a list (a v1 List, NodeList, PodList or JobList, as
 * `kubectl get -o json|yaml` or one page of a paged list prints it) or a
 * single object of the kind, all or nothing. source names the text in
 * messages ("items[3].metadata.uid: required"). *out_count (may be NULL) is
 * the number of objects upserted. */
int topo_cache_upsert_list(topo_cache *cache, topo_cache_kind kind, const char *text,
                           size_t len, const char *source, size_t *out_count,
                           topo_err *err) TOPO_MUST_CHECK;
/* The same from a JSON or YAML file of at most TOPO_MAX_INVENTORY_FILE bytes.
 * A topo fixture document (top-level `nodes:`/`pods:`) is TOPO_EUNSUPPORTED:
 * load it with lib/inventory and use topo_cache_put_node/put_pod. */
int topo_cache_upsert_list_file(topo_cache *cache, topo_cache_kind kind, const char *path,
                                size_t *out_count, topo_err *err) TOPO_MUST_CHECK;

/* Relist after a watch expired (410): between relist_begin and relist_end,
 * inside one batch, the kind's upserts mark their rows; relist_end deletes
 * the rows that were not upserted since relist_begin. *out_deleted may be
 * NULL. TOPO_EINVALID outside a batch, or when another relist is open. */
int topo_cache_relist_begin(topo_cache *cache, topo_cache_kind kind,
                            topo_err *err) TOPO_MUST_CHECK;
int topo_cache_relist_end(topo_cache *cache, topo_cache_kind kind, size_t *out_deleted,
                          topo_err *err) TOPO_MUST_CHECK;

/* --- watch state --------------------------------------------------------------------- */

/* The resourceVersion to resume the kind's watch from, copied into buf.
 * TOPO_ENOTFOUND when none was recorded; TOPO_ELIMIT when buf is too small. */
int topo_cache_get_watch_rv(topo_cache *cache, topo_cache_kind kind, char *buf, size_t size,
                            topo_err *err) TOPO_MUST_CHECK;
int topo_cache_set_watch_rv(topo_cache *cache, topo_cache_kind kind, const char *rv,
                            topo_err *err) TOPO_MUST_CHECK;

/* --- reading rows back (no SQL needed) ------------------------------------------------- */

/* A stored pod. labels/annotations hold only the keys that tie a pod to its
 * PodSet: those under kueue.x-k8s.io/, batch.kubernetes.io/,
 * jobset.sigs.k8s.io/, leaderworkerset.sigs.k8s.io/ and topology.topo.io/,
 * plus job-name and controller-uid; with owner_uid and generate_name, all
 * that its PodSet key (codec podset_key.h) is derived from. */
typedef struct topo_cache_pod {
    const char *uid;
    const char *namespace_name;
    const char *name;
    const char *node_name; /* "" when unbound */
    const char *phase;     /* "" when unknown */
    const topo_resource *requests; /* effective per-pod requests, sorted by name */
    size_t nrequests;
    const topo_kv *labels;
    size_t nlabels;
    const topo_kv *annotations;
    size_t nannotations;
    int tas; /* carries a Kueue TAS annotation (Kueue placed it) */
    const char *resource_version;
    int64_t created_at; /* metadata.creationTimestamp, seconds since the epoch; 0: unknown */
    /* The controller ownerReference's uid and metadata.generateName; NULL:
     * none (or a row stored before they were kept: the next list or event
     * of the pod stores them). */
    const char *owner_uid;
    const char *generate_name;
    /* metadata.deletionTimestamp is set: the pod is being deleted (a node
     * that died keeps its pods Terminating until it comes back or is
     * deleted). Counts as its phase says for usage; never as progressing
     * on a node (docs/webhook.md "When nodes fail"). */
    int terminating;
} topo_cache_pod;

typedef struct topo_cache_job {
    const char *uid;
    const char *namespace_name;
    const char *name;
    int32_t parallelism;
    int32_t completions; /* -1 when unset */
    const char *resource_version;
} topo_cache_job;

typedef int (*topo_cache_node_fn)(const topo_node_spec *node, const char *resource_version,
                                  void *payload);
typedef int (*topo_cache_pod_fn)(const topo_cache_pod *pod, void *payload);
typedef int (*topo_cache_job_fn)(const topo_cache_job *job, void *payload);

/* Calls fn for every row (nodes by name, pods and jobs by uid), all from one
 * consistent read. A non-zero return from fn stops the walk and is returned
 * (a callback's error message, if any, is its own business). */
int topo_cache_foreach_node(topo_cache *cache, topo_cache_node_fn fn, void *payload,
                            topo_err *err);
int topo_cache_foreach_pod(topo_cache *cache, topo_cache_pod_fn fn, void *payload,
                           topo_err *err);
int topo_cache_foreach_job(topo_cache *cache, topo_cache_job_fn fn, void *payload,
                           topo_err *err);
/* Gated PodSets, as topo-webhook's ungater reads them each round. A gated
 * pod is unbound (no nodeName), neither Succeeded nor Failed, and carries
 * annotation topology.topo.io/wait-reason; its PodSet is its
 * topology.topo.io/podset annotation (topo-webhook writes both with its
 * gate; a gated pod without one is a PodSet of its own). From an index of
 * the unbound pods by PodSet: one row per PodSet, not one per pod, and never
 * the cluster's bound pods.
 * topo_cache_foreach_gated_podset calls fn once per PodSet (in no particular
 * order); topo_cache_foreach_gated_pod for each gated pod of one, oldest
 * first, ties by name: key as foreach_gated_podset gave it, or NULL and the
 * pod's uid for a PodSet of its own. */
typedef struct topo_cache_gated_podset {
    const char *key;              /* the podset annotation; NULL: oldest alone */
    size_t npods;                 /* its gated pods */
    int64_t created_at;           /* its oldest pod's creation time (0: unknown) */
    const topo_cache_pod *oldest; /* a pod of it with that time */
    int reserved;                 /* a reservation's podset_key is its key */
} topo_cache_gated_podset;
typedef int (*topo_cache_gated_podset_fn)(const topo_cache_gated_podset *ps, void *payload);
int topo_cache_foreach_gated_podset(topo_cache *cache, topo_cache_gated_podset_fn fn,
                                    void *payload, topo_err *err);
int topo_cache_foreach_gated_pod(topo_cache *cache, const char *key, const char *uid,
                                 topo_cache_pod_fn fn, void *payload, topo_err *err);

/* One row by key, copied into pool. TOPO_ENOTFOUND when absent. */
int topo_cache_get_node(topo_node_spec *out, topo_cache *cache, const char *name,
                        topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
int topo_cache_get_pod(topo_cache_pod *out, topo_cache *cache, const char *uid,
                       topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
int topo_cache_get_job(topo_cache_job *out, topo_cache *cache, const char *uid,
                       topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* Stores a node or a pod given as structs rather than JSON (fixtures, tests;
 * resource_version may be NULL). pod->uid must be set; the requests are taken
 * as the effective ones. */
int topo_cache_put_node(topo_cache *cache, const topo_node_spec *node,
                        const char *resource_version, topo_err *err) TOPO_MUST_CHECK;
int topo_cache_put_pod(topo_cache *cache, const topo_cache_pod *pod,
                       topo_err *err) TOPO_MUST_CHECK;

typedef struct topo_cache_stats {
    size_t nodes, pods, jobs;
    size_t reservations, slots, claimed_slots;
} topo_cache_stats;

int topo_cache_get_stats(topo_cache_stats *out, topo_cache *cache,
                         topo_err *err) TOPO_MUST_CHECK;

/* --- reservations -------------------------------------------------------------------- */

/* A PodSet's assignment held as slots: one slot per pod of every domain
 * (domains in the assignment's order, slot index = rank). */
typedef struct topo_cache_reservation_spec {
    const char *id;            /* unique, caller-chosen */
    const char *podset_key;    /* unique among reservations: one per PodSet */
    const char *topology_name;
    const char *const *levels; /* the topology's levels, coarsest first */
    size_t nlevels;
    const topo_assignment *assignment; /* Kueue's TopologyAssignment */
    const topo_resource *requests;     /* per pod, charged per unclaimed slot */
    size_t nrequests;
    int64_t created_at; /* also "now": an expired reservation of the same podset_key is replaced */
    int64_t expires_at;
    /* What the PodSet's pods share (NULL: ""): the shape of the pod it was
     * placed for (codec topo_pod_shape) and its Kueue request
     * (topo_kueue_request_text). Kept for the admission handler to refuse
     * a pod that claims the PodSet without matching it. */
    const char *shape;
    const char *request;
    /* Free slots (no pod has claimed them) hold capacity and can
     * be claimed only until unclaimed_ttl seconds after the reservation is
     * made or a slot last claimed: capacity for pods that never arrive is
     * given back long before the reservation expires. 0: until it expires.
     * Slots of "claim:" claimants (admitted, never seen: another admission
     * step may have rejected the pod) stop holding capacity then too; the
     * pod, should it still show up, binds its slot and counts again. */
    int64_t unclaimed_ttl;
    /* A pod that claims a slot as the reservation is made (NULL: every
     * slot starts free) and that slot, as topo_cache_reservation_claim
     * would give it right after: its rank when in range, else slot 0. One
     * statement less per PodSet placed, and its slot never counted free. */
    const char *claimant;
    int32_t claimed_slot;
    /* The assignment as compact JSON when the caller has it (stored as
     * given, so it must be assignment's; NULL: encoded here). */
    const char *assignment_json;
    /* The generation the placer gives it (see topo_cache_reservation
     * gen_term): a new reservation is [term, 0]. 0 to 2^53 (what a
     * record's JSON number holds exactly), else TOPO_EINVALID. */
    int64_t gen_term;
    /* The PodSet's domain at its required level: the values of levels[0]
     * .. levels[ndomain - 1], the required one last (NULL/0: none: no
     * required level above the lowest). Kept, and carried by the record, so
     * that a node that no longer is in it (relabelled, re-created under the
     * same hostname elsewhere) is failed for the PodSet. At most nlevels. */
    const char *const *domain;
    size_t ndomain;
} topo_cache_reservation_spec;

/* How a provisional claimant's name starts (a claim made at admission,
 * before the API server gave the pod a uid): "claim:rank/<index>",
 * "claim:pod/<name>", "claim:request/<uid>". */
#define TOPO_CACHE_CLAIMANT_PREFIX "claim:"

typedef struct topo_cache_slot {
    int32_t index;
    const char *const *values; /* the domain, one value per assignment level */
    size_t nvalues;
    const char *pod_uid; /* NULL while free */
} topo_cache_slot;

typedef struct topo_cache_reservation {
    const char *id;
    const char *podset_key;
    const char *topology_name;
    const char *const *levels;
    size_t nlevels;
    const char *const *assignment_levels; /* the levels slot values are in */
    size_t nassignment_levels;
    const char *assignment_json; /* Kueue TopologyAssignment, compact JSON */
    const topo_resource *requests;
    size_t nrequests;
    int64_t created_at;
    int64_t expires_at;
    const char *shape;   /* "" when not recorded */
    const char *request; /* "" when not recorded */
    int64_t unclaimed_ttl; /* 0: free slots last as long as the reservation */
    int64_t claimed_at;    /* the last claim of a slot (created_at before one) */
    const topo_cache_slot *slots;
    size_t nslots;
    size_t nclaimed;
    /* Its generation, [term, seq] compared in that order: term is the
     * placer's (the Lease's leaseTransitions when it took the Lease; 0
     * without leader election), seq counts the times its slots moved to
     * other domains (node replacement, topo_cache_reservation_reassign).
     * The record on its pods carries it; a record of a higher generation
     * updates the reservation where a cache holds an older one, a lower
     * or equal one changes nothing (see "Adoption"). [0, 0] for
     * reservations made before generations. */
    int64_t gen_term;
    int64_t gen_seq;
    const char *const *domain; /* see topo_cache_reservation_spec */
    size_t ndomain;
} topo_cache_reservation;

/* The annotation that carries a reservation on its pods, beside
 * topology.topo.io/reservation, /slot and /assignment. Its value is
 * "<HMAC-SHA256 hex> <JSON>": the JSON holds the PodSet key, topology,
 * levels, per-pod requests, times, shape, request, unclaimed TTL,
 * generation ("gen": [term, seq]; absent: [0, 0]) and domain ("domain":
 * its values; absent: none); the
 * MAC covers the reservation id, the assignment annotation's text and the
 * JSON. */
#define TOPO_CACHE_RECORD_ANNOTATION "topology.topo.io/reservation-spec"

/* The seal on a pod topo-webhook answered: a MAC, under the record keys,
 * over the pod's namespace, its PodSet and what topo wrote on it that
 * decides where it goes (its reservation and slot when placed, its pod
 * group role). It tells topo's own output (a reinvocation, the ungater's
 * read, another replica's cache) from the same annotations written by
 * anyone else, who can read them on any placed pod but cannot seal them
 * for another namespace or PodSet (docs/webhook.md "Threat model"). */
#define TOPO_CACHE_SEAL_ANNOTATION "topology.topo.io/seal"

typedef struct topo_cache_seal_fields {
    const char *namespace_name; /* the pod's */
    const char *podset_key;     /* its PodSet's (a reservation's podset_key) */
    const char *reservation;    /* annotation topology.topo.io/reservation; NULL: none */
    const char *slot;           /* annotation topology.topo.io/slot, as written; NULL: none */
    const char *role;           /* annotation topology.topo.io/role; NULL: none */
} topo_cache_seal_fields;

/* The seal of f under the first key of keys, as hex. TOPO_EINVALID when
 * keys is empty or f lacks a namespace or PodSet. */
int topo_cache_seal(char out[TOPO_SHA256_HEX_LEN + 1], const topo_keyring *keys,
                    const topo_cache_seal_fields *f, topo_err *err) TOPO_MUST_CHECK;

/* 1 when seal is f's under any key of keys; 0 otherwise (no keys, no seal,
 * another value of any field); TOPO_ENOMEM when that cannot be told. */
int topo_cache_seal_verify(const topo_keyring *keys, const char *seal,
                           const topo_cache_seal_fields *f);

/* The record of r for its pods, malloc'd into *out, signed with the first
 * key of keys. */
int topo_cache_reservation_record(char **out, const topo_cache_reservation *r,
                                  const topo_keyring *keys, topo_err *err) TOPO_MUST_CHECK;

/* How many reservations this connection adopted from pods' records. */
uint64_t topo_cache_adopted(const topo_cache *cache);
/* How many claims on a reservation (its id and slot on a pod, or its record)
 * this connection refused: the pod was not of the reservation's PodSet, its
 * namespace or its seal (see "Slot binding"). A pod's every event counts. */
uint64_t topo_cache_foreign_claims(const topo_cache *cache);

/* Creates the reservation and all of its slots atomically (its own
 * transaction outside a batch, see "Durability"). TOPO_ECONFLICT when the id is taken or the PodSet already holds
 * an unexpired reservation (another replica won the race: read it with
 * topo_cache_get_reservation_by_podset); TOPO_EINVALID for a malformed spec. */
int topo_cache_reservation_create(topo_cache *cache, const topo_cache_reservation_spec *spec,
                                  topo_err *err) TOPO_MUST_CHECK;

/* Claims a slot of an unexpired reservation for a pod: slot `rank` when
 * rank >= 0 (Job completion index, JobSet/LWS index), else the lowest free
 * slot. A slot held by a pod the cache sees Succeeded or Failed counts as
 * free (a replacement pod takes it over). Idempotent: a pod that already
 * holds a slot of the reservation gets it again. Fills *out from pool. TOPO_ENOTFOUND (no such unexpired
 * reservation), TOPO_EINVALID (rank out of range), TOPO_ECONFLICT (slot
 * `rank` is another pod's, or the pod holds a different one), TOPO_ENOFIT
 * (every slot is claimed, or the free ones were given back: see
 * unclaimed_ttl). A new claim restarts the free slots' unclaimed_ttl. */
int topo_cache_reservation_claim(topo_cache_slot *out, topo_cache *cache, const char *id,
                                 const char *pod_uid, int32_t rank, int64_t now,
                                 topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
/* Moves a reservation's slots to other domains (failed-node replacement,
 * docs/webhook.md "When nodes fail"), in its own transaction outside a
 * batch: assignment (in the reservation's assignment levels, its JSON in
 * assignment_json exactly as the pods' annotation carries it) expanded in
 * domain order gives slot i its domain, as at creation; every slot keeps
 * its index, and its claim unless the slot moved and its holder is a pod
 * bound to a node, finished, being deleted or unknown (it was on the
 * failed node: its replacement takes the slot; a provisional claim, or a
 * pod not bound yet, keeps it); the reservation's generation becomes
 * [gen_term, gen_seq]. TOPO_ENOTFOUND (no such reservation), TOPO_EINVALID
 * (other levels, or not exactly one domain per slot: the pod count must be
 * the reservation's; a term or seq outside 0..2^53), TOPO_ECONFLICT (the
 * generation is not higher than the stored one: a replacement computed on a
 * stale copy, or a record older than what the cache holds; nothing
 * changes). */
int topo_cache_reservation_reassign(topo_cache *cache, const char *id,
                                    const topo_assignment *assignment, const char *assignment_json,
                                    int64_t gen_term, int64_t gen_seq,
                                    topo_err *err) TOPO_MUST_CHECK;
/* Gives back one slot a claimant took (the pod was admitted without it);
 * a slot held by another claimant is left alone. *out_released (may be
 * NULL) is 1 when the slot was freed. */
int topo_cache_reservation_unclaim(topo_cache *cache, const char *id, int32_t slot,
                                   const char *claimant, int *out_released,
                                   topo_err *err) TOPO_MUST_CHECK;
/* Frees every slot the pod holds (the pod went away). *out_released may be
 * NULL. */
int topo_cache_reservation_release_pod(topo_cache *cache, const char *pod_uid,
                                       size_t *out_released, topo_err *err) TOPO_MUST_CHECK;
/* Deletes one reservation and its slots. *out_deleted may be NULL. */
int topo_cache_reservation_delete(topo_cache *cache, const char *id, int *out_deleted,
                                  topo_err *err) TOPO_MUST_CHECK;
/* Deletes every reservation with expires_at <= now. */
int topo_cache_reservation_expire(topo_cache *cache, int64_t now, size_t *out_expired,
                                  topo_err *err) TOPO_MUST_CHECK;
/* Deletes every reservation with expires_at <= now none of whose slots is
 * held by a pod the cache has and that is not Succeeded or Failed (pending
 * or running pods keep their reservation, so the PodSet's replacement pods
 * land in the same domains); "claim:" claimants and pods the cache does not
 * have keep nothing. *out_deleted (may be NULL) counts the reservations
 * deleted. */
int topo_cache_reservation_gc(topo_cache *cache, int64_t now, size_t *out_deleted,
                              topo_err *err) TOPO_MUST_CHECK;

/* --- pod groups waiting to be complete ------------------------------------------------- */

/* One pod of a Kueue pod group, as the admission handler saw it. */
typedef struct topo_cache_group_member {
    const char *group_key; /* the group's PodSet key ("<ns>/pod-group/<name>") */
    const char *member;    /* the pod: its name, else its admission request's uid */
    int32_t total;         /* the pod's pod-group-total-count */
    const char *shape;     /* codec topo_pod_shape */
    const char *request;   /* topo_kueue_request_text */
    const char *podset_group; /* its kueue.x-k8s.io/podset-group-name, "" for none */
    /* put: the Pod object it was admitted as, kept as its role's template
     * when it is the first of its shape; read: that template on the first
     * member of each shape (in arrival order), "" on the others */
    const char *pod_json;
    int64_t expires_at;
} topo_cache_group_member;

/* Records (or refreshes: same group_key and member) a member; a new one
 * comes after those already recorded. */
int topo_cache_group_member_put(topo_cache *cache, const topo_cache_group_member *m,
                                topo_err *err) TOPO_MUST_CHECK;
typedef int (*topo_cache_group_member_fn)(const topo_cache_group_member *m, void *payload);
/* The group's unexpired members in arrival order (strings borrowed for the
 * call); fn returning non-zero stops and is returned. */
int topo_cache_group_members(topo_cache *cache, const char *group_key, int64_t now,
                             topo_cache_group_member_fn fn, void *payload,
                             topo_err *err) TOPO_MUST_CHECK;
/* Forgets every member with expires_at <= now; *out_deleted may be NULL. */
int topo_cache_group_expire(topo_cache *cache, int64_t now, size_t *out_deleted,
                            topo_err *err) TOPO_MUST_CHECK;

/* One reservation with its slots, copied into pool. TOPO_ENOTFOUND. */
int topo_cache_reservation_get(topo_cache_reservation *out, topo_cache *cache, const char *id,
                               topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
int topo_cache_reservation_get_by_podset(topo_cache_reservation *out, topo_cache *cache,
                                         const char *podset_key, topo_pool *pool,
                                         topo_err *err) TOPO_MUST_CHECK;
typedef int (*topo_cache_reservation_fn)(const topo_cache_reservation *r, void *payload);
/* Every reservation (expired ones too, until expired), by id. */
int topo_cache_reservation_foreach(topo_cache *cache, topo_cache_reservation_fn fn,
                                   void *payload, topo_err *err);

/* Whether a reservation with these per-pod requests holds capacity at all:
 * one whose pods request nothing (every amount 0, or none) holds nothing,
 * not even pod slots, so a PodSet of any size that asks for nothing cannot
 * take the cluster's pod capacity. Its slots still place its pods. */
int topo_cache_requests_hold_capacity(const topo_resource *requests, size_t nrequests);

/* What reservations hold, as topo_snapshot_add_tas_usage takes it: per
 * reservation and slot domain, the number of slots still to be charged.
 * A reservation whose requests hold no capacity (above) is left out. A
 * slot is charged while its reservation is unexpired (expires_at > now)
 * and it is free (and not given back: unclaimed_ttl), or claimed by a pod
 * the cache does not yet see bound to a node (admitted but not scheduled):
 * a bound pod is charged as itself. A slot held by a provisional "claim:"
 * claimant (no such pod in the cache: the pod has not arrived yet) is
 * charged like a free one, so its capacity stays held until the pod
 * arrives, binds the slot and is bound to a node, or the free slots are
 * given back. */
typedef struct topo_cache_reserved {
    const char *reservation_id;
    const char *const *levels; /* the topology's levels */
    size_t nlevels;
    const char *const *assignment_levels;
    size_t nassignment_levels;
    const char *const *values; /* one per assignment level */
    size_t nvalues;
    int32_t count;
    const topo_resource *requests; /* per pod */
    size_t nrequests;
} topo_cache_reserved;

typedef int (*topo_cache_reserved_fn)(const topo_cache_reserved *r, void *payload);
int topo_cache_foreach_reserved(topo_cache *cache, int64_t now, topo_cache_reserved_fn fn,
                                void *payload, topo_err *err);

/* Capacity held for pods that have not arrived: per unexpired reservation
 * that holds capacity, its free slots not given back (count) and its
 * namespace (the PodSet key's first part). Ordered by namespace. */
typedef struct topo_cache_unclaimed {
    const char *namespace_;
    const char *reservation_id;
    int32_t count;
    const topo_resource *requests; /* per pod */
    size_t nrequests;
} topo_cache_unclaimed;

typedef int (*topo_cache_unclaimed_fn)(const topo_cache_unclaimed *u, void *payload);
int topo_cache_foreach_unclaimed(topo_cache *cache, int64_t now, topo_cache_unclaimed_fn fn,
                                 void *payload, topo_err *err) TOPO_MUST_CHECK;

/* Pods waiting for the node of their slot (docs/webhook.md "When nodes
 * fail"): unbound (no nodeName), neither Succeeded nor Failed, not being
 * deleted, not gated (no topology.topo.io/wait-reason annotation) and
 * holding a slot of a
 * reservation (the cache bound the slot to the pod: topo's sealed output
 * for that PodSet). Should the slot's node fail, such a pod stays Pending
 * for ever; topo-webhook fails it, as Kueue's node controller does, so
 * that its controller replaces it. Expired reservations count too (a
 * reservation with pending pods outlives its expiry). From the index of
 * the unbound pods (pods_gated): the cluster's bound pods are never read. */
typedef struct topo_cache_stranded {
    const char *pod_uid;
    const char *namespace_;
    const char *pod_name;
    const char *reservation_id;
    int32_t slot;
    const char *const *assignment_levels; /* the reservation's assignment's */
    size_t nassignment_levels;
    /* the domain the pod was sent to: the slot-th pod of its own
     * topology.topo.io/assignment annotation (its nodeSelector's), which
     * stays where it was when the slot moves (a failed node replaced);
     * without a readable annotation, the slot's domain. One per level. */
    const char *const *values;
    size_t nvalues;
    /* the reservation's topology levels and its PodSet's domain in them
     * (topo_cache_reservation_spec domain; 0: none) */
    const char *const *levels;
    size_t nlevels;
    const char *const *domain;
    size_t ndomain;
} topo_cache_stranded;

typedef int (*topo_cache_stranded_fn)(const topo_cache_stranded *s, void *payload);
/* Calls fn for each such pod (in no particular order) from one consistent
 * read; fn returning non-zero stops and is returned. */
int topo_cache_foreach_stranded(topo_cache *cache, topo_cache_stranded_fn fn, void *payload,
                                topo_err *err) TOPO_MUST_CHECK;

/* --- the engine's snapshot ------------------------------------------------------------- */

typedef struct topo_cache_snapshot_opts {
    topo_snapshot_opts snapshot; /* topology name, levels, flavor labels */
    /* 1: do not charge bound pods carrying a Kueue TAS annotation as TAS
     * usage on their node's leaf (as topo_inventory_snapshot does). */
    int skip_tas_pods;
    /* 1: do not charge reservations (see topo_cache_foreach_reserved). */
    int skip_reservations;
    int64_t now; /* reservations with expires_at <= now are not charged */
} topo_cache_snapshot_opts;

/* Builds the engine's snapshot from one consistent read of the cache: every
 * node; bound, non-terminal pods without a TAS annotation as pod usage (and
 * TAS ones as TAS usage, see skip_tas_pods); reservations as TAS usage, so
 * capacity promised to a PodSet is not sold twice. A reservation is charged
 * when its levels are the snapshot's, or when its assignment is by hostname
 * (mapped through the node's labels). *out_ignored (may be NULL) counts pods
 * and reserved slots that fell outside the topology. Equal to
 * topo_inventory_snapshot over the same objects. */
int topo_cache_snapshot(topo_snapshot **out, topo_cache *cache,
                        const topo_cache_snapshot_opts *opts, size_t *out_ignored,
                        topo_err *err) TOPO_MUST_CHECK;

#endif
