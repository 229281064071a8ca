/* The topology cache's representation, shared by its files. The only
 * place (with the cache's .c files) that includes <sqlite3.h>. */
#ifndef TOPO_CACHE_INTERNAL_H
#define TOPO_CACHE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "topo/cache.h"
#include "topo/podreq.h"

/* Every statement the cache runs, prepared once per connection on first use
 * (SQLITE_PREPARE_PERSISTENT) and reset after each use. */
/* Whether the free slots of reservation `r` still hold capacity (and can
 * be claimed) at time `now`, a statement parameter: unclaimed_ttl after the
 * reservation or its last claim (topo_cache_reservation_spec). One
 * condition for every statement that counts or claims free slots. */
#define CACHE_FREE_SLOTS_HELD(now)                                                                \
    "(r.unclaimed_ttl = 0 OR r.claimed_at + r.unclaimed_ttl > " now ")"

/* Gated pods (topo_cache_foreach_gated_podset): the PodSet key topo-webhook
 * writes beside its gate, exactly as index pods_gated (schema 6) has it, and
 * what else makes a pod gated and waiting. */
#define CACHE_GATED_KEY "json_extract(podset, '$.annotations.\"topology.topo.io/podset\"')"
/* A gated pod's PodSet key names a PodSet of the pod's own namespace: a pod
 * naming another namespace's PodSet must not join it (nor, gated under a
 * name that is not its own, be a PodSet of its own). */
#define CACHE_GATED_OWN                                                                            \
    "substr(" CACHE_GATED_KEY ", 1, length(namespace) + 1) = namespace || '/'"
/* The gate's reason annotation is on the pod (topo-webhook writes it with
 * its gate and removes it when ungating). */
#define CACHE_GATED_MARK "instr(podset, '\"topology.topo.io/wait-reason\"') > 0"
#define CACHE_GATED_WHERE "phase NOT IN " TOPO_POD_PHASES_FINISHED_SQL " AND " CACHE_GATED_MARK
/* Pods waiting on their slot's node (topo_cache_foreach_stranded): the
 * unbound pods first, through index pods_gated (its WHERE is node_name =
 * ''; CROSS JOIN keeps SQLite from starting at the slots, which are one
 * per pod of every PodSet), then their slot by index and its reservation
 * by key. Never a scan of the bound pods or of the slots. A pod being
 * deleted is not to be failed. */
#define CACHE_STRANDED_SQL                                                                         \
    "SELECT p.uid, p.namespace, p.name, s.reservation_id, s.slot, s.domain_values, "              \
    "json_extract(r.assignment, '$.levels'), "                                                    \
    "json_extract(p.podset, '$.annotations.\"topology.topo.io/assignment\"'), r.levels, "          \
    "r.domain "                                                                                   \
    "FROM pods p INDEXED BY pods_gated CROSS JOIN "                                               \
    "reservation_slots s ON s.pod_uid = p.uid JOIN reservations r ON r.id = s.reservation_id "    \
    "WHERE p.node_name = '' AND p.phase NOT IN " TOPO_POD_PHASES_FINISHED_SQL                     \
    " AND p.terminating = 0 "                                                                     \
    "AND NOT (" CACHE_GATED_MARK ")"

/* Whether a slot's claim moves with it to another domain (a failed node
 * replaced, topo_cache_reservation_reassign): a provisional claim, or a pod
 * not bound yet (pinned to the old node, and failed there as a stranded
 * pod, after which its replacement takes the slot) keep it; a pod bound
 * (to the failed node: gone, ended or being deleted there), finished,
 * being deleted or unknown gives it up: left there, it would keep the slot
 * from the pod that replaces it and have the new node's capacity charged
 * to a pod bound elsewhere. */
#define CACHE_CLAIM_MOVES                                                                          \
    "pod_uid IS NULL OR substr(pod_uid, 1, 6) = 'claim:' OR EXISTS (SELECT 1 FROM pods p "       \
    "WHERE p.uid = reservation_slots.pod_uid AND p.node_name = '' AND p.terminating = 0 AND "    \
    "p.phase NOT IN " TOPO_POD_PHASES_FINISHED_SQL ")"

/* The columns every node read returns, in cache_row_node's order. */
#define CACHE_NODE_COLUMNS                                                                         \
    "name, labels, allocatable, taints, unschedulable, ready, resource_version, ready_missing"

/* The columns every reservation read returns, in load_reservation's order. */
#define CACHE_RES_COLUMNS                                                                          \
    "id, podset_key, topology_name, levels, requests, assignment, created_at, expires_at, "       \
    "shape, request, unclaimed_ttl, claimed_at, gen_term, gen_seq, domain"

#define CACHE_STMT_MAP(XX)                                                                        \
    XX(BEGIN, "BEGIN")                                                                            \
    XX(BEGIN_IMMEDIATE, "BEGIN IMMEDIATE")                                                        \
    XX(COMMIT, "COMMIT")                                                                          \
    XX(ROLLBACK, "ROLLBACK")                                                                      \
    XX(SAVEPOINT, "SAVEPOINT topo_op")                                                            \
    XX(RELEASE, "RELEASE topo_op")                                                                \
    XX(ROLLBACK_TO, "ROLLBACK TO topo_op")                                                        \
    XX(SYNC_FULL, "PRAGMA synchronous=FULL")                                                      \
    XX(SYNC_NORMAL, "PRAGMA synchronous=NORMAL")                                                  \
    XX(NODE_UPSERT,                                                                               \
       "INSERT INTO nodes(name, labels, allocatable, taints, unschedulable, ready, "              \
       "resource_version, ready_missing) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "                  \
       "ON CONFLICT(name) DO UPDATE SET "                                                         \
       "labels=excluded.labels, allocatable=excluded.allocatable, taints=excluded.taints, "       \
       "unschedulable=excluded.unschedulable, ready=excluded.ready, "                             \
       "resource_version=excluded.resource_version, ready_missing=excluded.ready_missing")        \
    XX(NODE_DELETE, "DELETE FROM nodes WHERE name = ?1")                                          \
    XX(NODE_GET,                                                                                  \
       "SELECT " CACHE_NODE_COLUMNS " FROM nodes WHERE name = ?1")                                \
    XX(NODE_ALL,                                                                                  \
       "SELECT " CACHE_NODE_COLUMNS " FROM nodes ORDER BY name")                                  \
    XX(POD_UPSERT,                                                                                \
       "INSERT INTO pods(uid, namespace, name, node_name, phase, requests, podset, "              \
       "is_topology_assigned, resource_version, created_at, terminating) "                       \
       "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "                                     \
       "ON CONFLICT(uid) DO UPDATE SET namespace=excluded.namespace, name=excluded.name, "        \
       "node_name=excluded.node_name, phase=excluded.phase, requests=excluded.requests, "         \
       "podset=excluded.podset, is_topology_assigned=excluded.is_topology_assigned, "             \
       "resource_version=excluded.resource_version, created_at=excluded.created_at, "             \
       "terminating=excluded.terminating")                                                        \
    XX(POD_DELETE, "DELETE FROM pods WHERE uid = ?1")                                             \
    XX(POD_GET,                                                                                   \
       "SELECT uid, namespace, name, node_name, phase, requests, podset, is_topology_assigned, "   \
       "resource_version, created_at, terminating FROM pods WHERE uid = ?1")                      \
    XX(POD_ALL,                                                                                   \
       "SELECT uid, namespace, name, node_name, phase, requests, podset, is_topology_assigned, "   \
       "resource_version, created_at, terminating FROM pods ORDER BY uid")                        \
    XX(GATED_PODSETS,                                                                             \
       "SELECT uid, namespace, name, node_name, phase, requests, podset, is_topology_assigned, "   \
       "resource_version, min(created_at), terminating, count(*), " CACHE_GATED_KEY ", EXISTS "   \
       "(SELECT 1 FROM "                                                                          \
       "reservations r WHERE r.podset_key = " CACHE_GATED_KEY ") FROM pods WHERE "                 \
       "node_name = '' AND " CACHE_GATED_KEY " IS NOT NULL AND " CACHE_GATED_OWN " AND "          \
       CACHE_GATED_WHERE                                                                          \
       " GROUP BY " CACHE_GATED_KEY " UNION ALL "                                                 \
       "SELECT uid, namespace, name, node_name, phase, requests, podset, is_topology_assigned, "   \
       "resource_version, created_at, terminating, 1, NULL, 0 FROM pods WHERE node_name = '' "    \
       "AND "                                                                                     \
       CACHE_GATED_KEY " IS NULL AND " CACHE_GATED_WHERE)                                          \
    XX(GATED_PODS,                                                                                \
       "SELECT uid, namespace, name, node_name, phase, requests, podset, is_topology_assigned, "   \
       "resource_version, created_at, terminating FROM pods WHERE node_name = '' AND "           \
       CACHE_GATED_KEY                                                                            \
       " = ?1 AND " CACHE_GATED_OWN " AND " CACHE_GATED_WHERE " ORDER BY created_at, name")        \
    XX(GATED_POD,                                                                                 \
       "SELECT uid, namespace, name, node_name, phase, requests, podset, is_topology_assigned, "   \
       "resource_version, created_at, terminating FROM pods WHERE uid = ?1 AND node_name = '' "   \
       "AND "                                                                                     \
       CACHE_GATED_WHERE)                                               \
    XX(JOB_UPSERT,                                                                                \
       "INSERT INTO jobs(uid, namespace, name, parallelism, completions, resource_version) "      \
       "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(uid) DO UPDATE SET "                           \
       "namespace=excluded.namespace, name=excluded.name, parallelism=excluded.parallelism, "     \
       "completions=excluded.completions, resource_version=excluded.resource_version")            \
    XX(JOB_DELETE, "DELETE FROM jobs WHERE uid = ?1")                                             \
    XX(JOB_GET,                                                                                   \
       "SELECT uid, namespace, name, parallelism, completions, resource_version FROM jobs "       \
       "WHERE uid = ?1")                                                                          \
    XX(JOB_ALL,                                                                                   \
       "SELECT uid, namespace, name, parallelism, completions, resource_version FROM jobs "       \
       "ORDER BY uid")                                                                            \
    XX(WATCH_GET, "SELECT resource_version FROM watch_state WHERE kind = ?1")                     \
    XX(WATCH_SET,                                                                                 \
       "INSERT INTO watch_state(kind, resource_version) VALUES(?1, ?2) ON CONFLICT(kind) "        \
       "DO UPDATE SET resource_version=excluded.resource_version")                                \
    XX(RELIST_CLEAR, "DELETE FROM temp.relist_seen")                                              \
    XX(RELIST_MARK, "INSERT OR IGNORE INTO temp.relist_seen(key) VALUES(?1)")                     \
    XX(RELIST_SWEEP_NODES,                                                                        \
       "DELETE FROM nodes WHERE name NOT IN (SELECT key FROM temp.relist_seen)")                  \
    XX(RELIST_RELEASE_PODS,                                                                       \
       "UPDATE reservation_slots SET pod_uid = NULL WHERE pod_uid IN "                            \
       "(SELECT uid FROM pods WHERE uid NOT IN (SELECT key FROM temp.relist_seen))")              \
    XX(RELIST_SWEEP_PODS, "DELETE FROM pods WHERE uid NOT IN (SELECT key FROM temp.relist_seen)") \
    XX(RELIST_SWEEP_JOBS, "DELETE FROM jobs WHERE uid NOT IN (SELECT key FROM temp.relist_seen)") \
    XX(COUNT_NODES, "SELECT count(*) FROM nodes")                                                 \
    XX(COUNT_PODS, "SELECT count(*) FROM pods")                                                   \
    XX(COUNT_JOBS, "SELECT count(*) FROM jobs")                                                   \
    XX(COUNT_RESERVATIONS, "SELECT count(*) FROM reservations")                                   \
    XX(COUNT_SLOTS, "SELECT count(*), count(pod_uid) FROM reservation_slots")                     \
    XX(RES_INSERT,                                                                                \
       "INSERT INTO reservations(id, podset_key, topology_name, levels, requests, assignment, "   \
       "created_at, expires_at, shape, request, unclaimed_ttl, claimed_at, gen_term, gen_seq, "   \
       "domain) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?7, ?12, ?13, ?14)")          \
    XX(RES_DELETE_EXPIRED_KEY, "DELETE FROM reservations WHERE podset_key = ?1 AND expires_at <= ?2") \
    XX(RES_GEN, "SELECT gen_term, gen_seq FROM reservations WHERE id = ?1")                       \
    XX(RES_CURRENT,                                                                               \
       "SELECT podset_key, levels, assignment, gen_term, gen_seq, (SELECT count(*) FROM "         \
       "reservation_slots WHERE reservation_id = ?1) FROM reservations WHERE id = ?1")            \
    XX(RES_REASSIGN,                                                                              \
       "UPDATE reservations SET assignment = ?2, gen_term = ?3, gen_seq = ?4 WHERE id = ?1")      \
    XX(SLOT_MOVE,                                                                                 \
       "UPDATE reservation_slots SET domain_values = ?3, pod_uid = CASE WHEN "                   \
       CACHE_CLAIM_MOVES " THEN pod_uid END WHERE reservation_id = ?1 AND slot = ?2 AND "         \
       "domain_values <> ?3")                                                                     \
    XX(RES_PODSET_KEY, "SELECT podset_key FROM reservations WHERE id = ?1")                       \
    XX(SLOT_INSERT,                                                                               \
       "INSERT INTO reservation_slots(reservation_id, slot, domain_values, pod_uid) "              \
       "VALUES(?1, ?2, ?3, ?4)")                                                                  \
    XX(RES_LIVE, "SELECT (SELECT count(*) FROM reservation_slots WHERE reservation_id = ?1), "    \
                 CACHE_FREE_SLOTS_HELD("?2") " FROM reservations r WHERE r.id = ?1 AND "          \
                 "r.expires_at > ?2")                                                             \
    XX(RES_CLAIMED_AT,                                                                            \
       "UPDATE reservations SET claimed_at = ?2 WHERE id = ?1 AND claimed_at < ?2")               \
    XX(SLOT_OF_POD,                                                                               \
       "SELECT slot, domain_values FROM reservation_slots WHERE reservation_id = ?1 AND "         \
       "pod_uid = ?2")                                                                            \
    XX(SLOT_AT,                                                                                   \
       "SELECT s.domain_values, s.pod_uid, (s.pod_uid IS NULL OR EXISTS (SELECT 1 FROM pods p "   \
       "WHERE p.uid = s.pod_uid AND p.phase IN " TOPO_POD_PHASES_FINISHED_SQL                     \
       ")) FROM reservation_slots "                                                               \
       "s WHERE s.reservation_id = ?1 AND s.slot = ?2")                                           \
    XX(SLOT_NEXT_FREE,                                                                            \
       "SELECT s.slot, s.domain_values FROM reservation_slots s WHERE s.reservation_id = ?1 AND " \
       "((s.pod_uid IS NULL AND ?2) OR EXISTS (SELECT 1 FROM pods p WHERE p.uid = s.pod_uid AND " \
       "p.phase IN " TOPO_POD_PHASES_FINISHED_SQL ")) ORDER BY s.slot LIMIT 1")                    \
    XX(SLOT_CLAIM,                                                                                \
       "UPDATE reservation_slots SET pod_uid = ?3 WHERE reservation_id = ?1 AND slot = ?2")       \
    XX(SLOT_RELEASE_POD, "UPDATE reservation_slots SET pod_uid = NULL WHERE pod_uid = ?1")        \
    XX(SLOT_UNCLAIM,                                                                              \
       "UPDATE reservation_slots SET pod_uid = NULL WHERE reservation_id = ?1 AND slot = ?2 AND " \
       "pod_uid = ?3")                                                                            \
    XX(RES_DELETE, "DELETE FROM reservations WHERE id = ?1")                                      \
    XX(RES_EXPIRE, "DELETE FROM reservations WHERE expires_at <= ?1")                             \
    XX(RES_GC,                                                                                    \
       "DELETE FROM reservations WHERE expires_at <= ?1 AND NOT EXISTS (SELECT 1 FROM "           \
       "reservation_slots s JOIN pods p ON p.uid = s.pod_uid WHERE s.reservation_id = "           \
       "reservations.id AND p.phase NOT IN " TOPO_POD_PHASES_FINISHED_SQL ")")                     \
    XX(SLOT_BIND,                                                                                 \
       "UPDATE reservation_slots SET pod_uid = ?3 WHERE reservation_id = ?1 AND slot = ?2 AND "   \
       "(pod_uid IS NULL OR pod_uid = ?3 OR substr(pod_uid, 1, 6) = 'claim:' OR EXISTS "          \
       "(SELECT 1 FROM pods p WHERE p.uid = reservation_slots.pod_uid AND p.phase IN "            \
       TOPO_POD_PHASES_FINISHED_SQL ")) AND NOT EXISTS (SELECT 1 FROM reservation_slots o WHERE "  \
       "o.reservation_id = ?1 AND o.pod_uid = ?3 AND o.slot <> ?2)")                              \
    XX(DATA_VERSION, "PRAGMA data_version")                                                       \
    XX(FACTS_HASH, "SELECT hash FROM source_facts WHERE source = ?1")                             \
    XX(FACTS_PUT,                                                                                 \
       "INSERT INTO source_facts(source, hash, size, fetched_at, failures, document) "            \
       "VALUES(?1, ?2, ?3, ?4, 0, ?5) ON CONFLICT(source) DO UPDATE SET hash = excluded.hash, "   \
       "size = excluded.size, fetched_at = excluded.fetched_at, failures = 0, "                   \
       "document = excluded.document")                                                            \
    XX(FACTS_FAIL,                                                                                \
       "INSERT INTO source_facts(source, error, error_at, failures) VALUES(?1, ?2, ?3, 1) "       \
       "ON CONFLICT(source) DO UPDATE SET error = excluded.error, error_at = excluded.error_at, "  \
       "failures = failures + 1")                                                                 \
    XX(FACTS_GET,                                                                                 \
       "SELECT source, hash, size, fetched_at, error, error_at, failures, document "              \
       "FROM source_facts WHERE source = ?1")                                                     \
    XX(FACTS_LIST,                                                                                \
       "SELECT source, hash, size, fetched_at, error, error_at, failures FROM source_facts "      \
       "ORDER BY source")                                                                         \
    XX(FACTS_DELETE, "DELETE FROM source_facts WHERE source = ?1")                                                       \
    XX(RES_GET,                                                                                   \
       "SELECT " CACHE_RES_COLUMNS " FROM reservations WHERE id = ?1")                          \
    XX(RES_GET_BY_KEY,                                                                            \
       "SELECT " CACHE_RES_COLUMNS " FROM reservations WHERE "                                  \
       "podset_key = ?1")                                                                         \
    XX(RES_ALL,                                                                                   \
       "SELECT " CACHE_RES_COLUMNS " FROM reservations ORDER BY id")                            \
    XX(GROUP_PUT,                                                                                 \
       "INSERT INTO group_members(group_key, member, total, shape, request, podset_group, seq, "  \
       "expires_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, (SELECT coalesce(max(seq), 0) + 1 FROM "       \
       "group_members WHERE group_key = ?1), ?7) ON CONFLICT(group_key, member) DO UPDATE SET "   \
       "total = excluded.total, shape = excluded.shape, request = excluded.request, "             \
       "podset_group = excluded.podset_group, expires_at = excluded.expires_at")                  \
    XX(GROUP_ROLE_PUT,                                                                            \
       "INSERT INTO group_roles(group_key, shape, pod, expires_at) VALUES(?1, ?2, ?3, ?4) "       \
       "ON CONFLICT(group_key, shape) DO UPDATE SET "                                             \
       "expires_at = max(expires_at, excluded.expires_at)")                                       \
    XX(GROUP_GET,                                                                                 \
       "SELECT m.group_key, m.member, m.total, m.shape, m.request, CASE WHEN row_number() OVER "   \
       "(PARTITION BY m.shape ORDER BY m.seq, m.member) = 1 THEN coalesce(r.pod, '') ELSE '' "    \
       "END, m.expires_at, m.podset_group FROM group_members m LEFT JOIN group_roles r ON "       \
       "r.group_key = m.group_key AND r.shape = m.shape WHERE m.group_key = ?1 AND "              \
       "m.expires_at > ?2 ORDER BY m.seq, m.member")                                              \
    XX(GROUP_EXPIRE, "DELETE FROM group_members WHERE expires_at <= ?1")                          \
    XX(GROUP_ROLE_EXPIRE, "DELETE FROM group_roles WHERE expires_at <= ?1")                       \
    XX(COUNT_GROUP_MEMBERS, "SELECT count(*) FROM group_members")                                 \
    XX(RES_SLOTS,                                                                                 \
       "SELECT slot, domain_values, pod_uid FROM reservation_slots WHERE reservation_id = ?1 "    \
       "ORDER BY slot")                                                                           \
    XX(RESERVED,                                                                                  \
       "SELECT r.id, r.levels, r.assignment, r.requests, s.domain_values, count(*) "              \
       "FROM reservation_slots s JOIN reservations r ON r.id = s.reservation_id "                 \
       "WHERE r.expires_at > ?1 AND NOT EXISTS (SELECT 1 FROM pods p WHERE p.uid = s.pod_uid "    \
       "AND p.node_name <> '' AND p.phase NOT IN " TOPO_POD_PHASES_FINISHED_SQL                   \
       ") AND ((s.pod_uid IS NOT "                                                                \
       "NULL AND substr(s.pod_uid, 1, 6) <> 'claim:') OR " CACHE_FREE_SLOTS_HELD("?1") ") "         \
       "GROUP BY r.id, s.domain_values ORDER BY r.id, min(s.slot)")                               \
    XX(UNCLAIMED,                                                                                 \
       "SELECT substr(r.podset_key, 1, instr(r.podset_key, '/') - 1) AS ns, r.id, r.requests, "   \
       "count(*) FROM reservation_slots s JOIN reservations r ON r.id = s.reservation_id "        \
       "WHERE r.expires_at > ?1 AND s.pod_uid IS NULL AND " CACHE_FREE_SLOTS_HELD("?1")            \
       " GROUP BY r.id ORDER BY ns, r.id")                                                       \
    XX(STRANDED, CACHE_STRANDED_SQL)

typedef enum cache_stmt {
#define CACHE_XX_ENUM(name, sql) CACHE_STMT_##name,
    CACHE_STMT_MAP(CACHE_XX_ENUM)
#undef CACHE_XX_ENUM
        CACHE_STMT_COUNT
} cache_stmt;

struct topo_cache {
    sqlite3 *db;
    sqlite3_stmt *stmts[CACHE_STMT_COUNT];
    int batch;         /* an explicit batch is open */
    int batch_durable; /* ... committed with synchronous=FULL */
    int reservation_sync_full; /* topo_cache_opts.reservation_sync_full */
    int relist_kind;   /* the kind being relisted, or -1 */
    int reading;       /* depth of nested reads outside a batch */
    int schema_version;
    topo_pool *scratch; /* per-call decoding: public entry points clear it first */
    topo_keyring record_keys; /* topo_cache_opts.record_keys; n == 0: none */
    uint64_t adopted; /* reservations adopted from pods' records */
    uint64_t foreign_claims; /* reservation claims of pods not sealed for them */
    /* SQLite said SQLITE_CORRUPT or SQLITE_NOTADB, or quick_check failed;
     * read by other threads (topo_cache_corrupt) */
    atomic_int corrupt;
};

/* topo_cache_open, with PRAGMA quick_check before the schema is read when
 * check is 1; *out_corrupt (may be NULL) is 1 when the open failed because
 * SQLite found the file corrupt or not a database (cache_heal.c), 0
 * otherwise (a newer schema, a file of another program, I/O...). */
int cache_open_checked(topo_cache **out, const char *path, const topo_cache_opts *opts,
                       int check, int *out_corrupt, topo_err *err);

/* Modes of cache_op_begin. */
enum { CACHE_OP_READ = 0, CACHE_OP_WRITE = 1, CACHE_OP_DURABLE = 2 };

/* An error from SQLite as a topo code with "cache: <what>: <sqlite message>":
 * BUSY/LOCKED → TOPO_ETIMEOUT, NOMEM → TOPO_ENOMEM, CONSTRAINT →
 * TOPO_ECONFLICT, NOTADB/CORRUPT → TOPO_EINVALID, the rest TOPO_EIO. */
int cache_sql_error(topo_cache *c, int rc, const char *what, topo_err *err);

/* The prepared statement, reset and unbound; NULL with err set on failure. */
sqlite3_stmt *cache_stmt_get(topo_cache *c, cache_stmt which, topo_err *err);
/* The code a failed cache_stmt_get left in err; TOPO_EIO when err is NULL
 * or holds none. */
int cache_stmt_error(const topo_err *err);
/* 1 when s is a string with at least one character. */
int cache_nonempty(const char *s);
/* Runs a statement that returns no rows (binds already done) and resets it. */
int cache_stmt_run(topo_cache *c, sqlite3_stmt *st, const char *what, topo_err *err);
/* Resets and unbinds (NULL-safe). */
void cache_stmt_done(sqlite3_stmt *st);

/* Binds text (NULL binds SQL NULL); int64; returns a topo code. */
int cache_bind_text(topo_cache *c, sqlite3_stmt *st, int i, const char *s, topo_err *err);
int cache_bind_int(topo_cache *c, sqlite3_stmt *st, int i, int64_t v, topo_err *err);
/* Binds a JSON value as compact text (sorted keys not required). */
int cache_bind_json(topo_cache *c, sqlite3_stmt *st, int i, const json_t *v, topo_err *err);

/* One call's atomic unit: its own transaction outside a batch (BEGIN for
 * reads, BEGIN IMMEDIATE for writes, with synchronous=FULL for durable
 * ones), a savepoint for writes inside one. cache_op_end commits (error
 * == 0) or rolls back, and returns error, or the commit's error. */
int cache_op_begin(topo_cache *c, int mode, topo_err *err);
int cache_op_end(topo_cache *c, int mode, int error, topo_err *err);
/* A read of one statement: cache_read_begin starts the read and gives the
 * statement in *out (on failure the read is already ended and the code
 * returned); cache_read_end resets st (NULL-safe) and ends the read as
 * cache_op_end does. */
int cache_read_begin(topo_cache *c, cache_stmt which, sqlite3_stmt **out, topo_err *err);
int cache_read_end(topo_cache *c, sqlite3_stmt *st, int error, topo_err *err);

/* One statement binding one key (text, or num when use_num) run as a
 * reservation write (its own unit outside a batch); *out_changes (may be
 * NULL) gets the rows it changed. */
int cache_write_one(topo_cache *c, cache_stmt which, const char *text, int64_t num, int use_num,
                    size_t *out_changes, const char *what, topo_err *err);

/* The unit mode of a reservation write: CACHE_OP_DURABLE when the cache was
 * opened with reservation_sync_full, else CACHE_OP_WRITE. */
int cache_reservation_mode(const topo_cache *c);

/* Binds the pod to the reservation slot its topology.topo.io/reservation and
 * topology.topo.io/slot annotations name, when that slot is free, held by a
 * "claim:" claimant or already the pod's (see topo_cache_upsert_pod); inside
 * an open unit, after the pod row is written. Never an error for the pod. */
int cache_bind_reserved_slot(topo_cache *c, const topo_cache_pod *p, topo_err *err);
/* Whether the pod may take a slot of reservation id as its annotations ask
 * (slot: the annotation's text): *out_own 1 when the reservation's PodSet is
 * of the pod's namespace, the pod's seal verifies for it and the pod is of
 * that PodSet (cache.h "Slot binding"); 0 otherwise, counted as a foreign
 * claim when the reservation exists. Errors are the cache's own. */
int cache_claim_is_own(int *out_own, topo_cache *c, const topo_cache_pod *p, const char *id,
                       const char *slot, topo_err *err);
/* Counts and logs a claim refused for why. */
void cache_foreign_claim(topo_cache *c, const topo_cache_pod *p, const char *id, const char *why);
/* 1 when p carries a reservation record for reservation id, with its
 * assignment, signed with one of the record keys (cache.h "Adoption"); 0
 * when not (none, malformed, another key); <0 when the cache fails. */
int cache_record_verifies(topo_cache *c, const topo_cache_pod *p, const char *id, topo_err *err);
/* The value of one of a pod's kept annotations, or NULL. */
const char *cache_pod_annotation(const topo_cache_pod *p, const char *key);
/* Writes a reservation and its slots inside the caller's transaction, of
 * generation [spec->gen_term, gen_seq] (a new placement: gen_seq 0; an
 * adopted record: the record's). */
int cache_reservation_insert(topo_cache *c, const topo_cache_reservation_spec *spec,
                             int64_t gen_seq, topo_err *err);
/* Writes one row per pod of assignment a, slot i the i-th pod in a's order
 * (never merged or sorted), with statement which: SLOT_INSERT (?4 the
 * claimant on claimed_slot, else NULL) or SLOT_MOVE (its domain only).
 * Inside the caller's unit. */
int cache_slots_write(topo_cache *c, cache_stmt which, const char *id,
                      const topo_assignment *a, const char *claimant, int32_t claimed_slot,
                      topo_err *err);
/* The largest generation term or seq (2^53: what a JSON number holds
 * exactly, so a record's "gen" reads back as written). */
#define TOPO_CACHE_GEN_MAX ((int64_t)1 << 53)
/* Moves reservation spec->id's slots to spec->assignment (its JSON
 * spec->assignment_json, or encoded here when NULL) at generation
 * [gen_term, gen_seq], inside the caller's unit: the checks and the write
 * of topo_cache_reservation_reassign. When spec->podset_key or spec->levels
 * is set, the reservation must also be of that PodSet and those levels
 * (TOPO_EINVALID otherwise: a record that is not of it). */
int cache_reservation_reassign(topo_cache *c, const topo_cache_reservation_spec *spec,
                               int64_t gen_term, int64_t gen_seq, topo_err *err);
/* Kueue's TopologyAssignment JSON (as topo_codec_assignment_json writes it:
 * a pod's topology.topo.io/assignment) into *a, from pool; TOPO_EINVALID
 * naming what is wrong. */
int cache_decode_assignment(topo_assignment *a, const json_t *doc, topo_pool *pool,
                            topo_err *err);
/* A record's "gen" ([term, seq], each 0..TOPO_CACHE_GEN_MAX; absent:
 * [0, 0]); TOPO_EINVALID (no message) when it is anything else. */
int cache_record_gen(int64_t *out_term, int64_t *out_seq, const json_t *record);
/* Creates reservation id from the pod's signed record when the cache lacks
 * it (cache.h "Adoption"); 0 when there is nothing to adopt. */
int cache_adopt_reservation(topo_cache *c, const topo_cache_pod *p, const char *id,
                            topo_err *err);

/* Writes the kind's watch state, inside an open unit. */
int cache_set_watch_rv(topo_cache *c, topo_cache_kind kind, const char *rv, topo_err *err);

/* Records a key for an open relist of that kind (no-op otherwise). */
int cache_relist_mark(topo_cache *c, topo_cache_kind kind, const char *key, topo_err *err);

/* A text column: sqlite3_column_text gives NULL both for a NULL column and
 * when out of memory; this tells them apart. 0 with *out (NULL for a NULL
 * column), or TOPO_ENOMEM. */
int cache_column_text(const char **out, sqlite3_stmt *st, int col, topo_err *err);
/* Parses stored JSON text of a column (the cache wrote it: failures other
 * than TOPO_ENOMEM mean a damaged file). */
int cache_column_json(json_t **out, sqlite3_stmt *st, int col, const char *what, topo_err *err);
/* Parses stored JSON text (NULL: a NULL column) as cache_column_json does. */
int cache_text_json(json_t **out, const char *text, size_t len, const char *what, topo_err *err);
/* A text column copied into pool ("" for NULL unless null_ok, then NULL);
 * NULL when out of memory. */
char *cache_column_strdup(sqlite3_stmt *st, int col, int null_ok, topo_pool *pool);

/* Stored JSON shapes back to model structs, allocated from pool. */
int cache_json_to_kv(topo_kv **out, size_t *out_n, const json_t *obj, topo_pool *pool,
                     topo_err *err);
int cache_json_to_resources(topo_resource **out, size_t *out_n, const json_t *obj,
                            topo_pool *pool, topo_err *err);
int cache_json_to_strings(const char ***out, size_t *out_n, const json_t *arr, topo_pool *pool,
                          topo_err *err);
json_t *cache_resources_to_json(const topo_resource *r, size_t n);
json_t *cache_strings_to_json(const char *const *v, size_t n);

/* A node row (NODE_GET / NODE_ALL columns) as a node spec in pool. */
int cache_row_node(topo_node_spec *out, const char **out_rv, sqlite3_stmt *st, topo_pool *pool,
                   topo_err *err);
/* A pod row (POD_GET / POD_ALL columns). */
int cache_row_pod(topo_cache_pod *out, sqlite3_stmt *st, topo_pool *pool, topo_err *err);

/* The migration scripts: script i (0-based) takes a file from version i to
 * i + 1. */
extern const char *const cache_migrations[];
extern const size_t cache_nmigrations;

/* cache_path.c: the --db path as the file system sees it. */
/* dir and base name of path, into dir and *base; -1 when dir is too small. */
int cache_path_dir(char *dir, size_t size, const char **base, const char *path);
/* TOPO_EINVALID naming what path is when it exists and is no regular file
 * (a directory, a FIFO...): SQLite would say "disk I/O error". */
int cache_path_check(const char *path, topo_err *err);
/* After a failed open for writing: when path's directory is not writable,
 * err's message is prefixed with that and what the cache needs there. */
void cache_path_explain(const char *path, topo_err *err);

#endif
