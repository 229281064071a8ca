/* The cache's schema, as the list of migration steps that build it. Step i
 * takes a file from schema version i to i + 1; a new version appends a step
 * and never edits a released one. topo_cache_open runs the missing steps and
 * records the version in meta.schema_version, all in one transaction. */
#include "cache_internal.h"

const char *const cache_migrations[] = {
    /* 0 → 1: the mirror of the API server (nodes, pods, jobs) and where each
     * watch stopped. JSON columns hold what the engine reads back: labels
     * {key: value}, allocatable and requests {resource: amount in Kueue
     * units}, taints [{key, value, effect}], podset {"labels": {...},
     * "annotations": {...}} (the keys that tie a pod to its PodSet). */
    "CREATE TABLE meta(\n"
    "  key TEXT PRIMARY KEY,\n"
    "  value TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE nodes(\n"
    "  name TEXT PRIMARY KEY,\n"
    "  labels TEXT NOT NULL,\n"
    "  allocatable TEXT NOT NULL,\n"
    "  taints TEXT NOT NULL,\n"
    "  unschedulable INTEGER NOT NULL CHECK(unschedulable IN (0, 1)),\n"
    "  ready INTEGER NOT NULL CHECK(ready IN (0, 1)),\n"
    "  resource_version TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE TABLE pods(\n"
    "  uid TEXT PRIMARY KEY,\n"
    "  namespace TEXT NOT NULL,\n"
    "  name TEXT NOT NULL,\n"
    "  node_name TEXT NOT NULL DEFAULT '',\n"
    "  phase TEXT NOT NULL DEFAULT '',\n"
    "  requests TEXT NOT NULL,\n"
    "  podset TEXT NOT NULL,\n"
    "  is_topology_assigned INTEGER NOT NULL CHECK(is_topology_assigned IN (0, 1)),\n"
    "  resource_version TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE TABLE jobs(\n"
    "  uid TEXT PRIMARY KEY,\n"
    "  namespace TEXT NOT NULL,\n"
    "  name TEXT NOT NULL,\n"
    "  parallelism INTEGER NOT NULL,\n"
    "  completions INTEGER,\n"
    "  resource_version TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE TABLE watch_state(\n"
    "  kind TEXT PRIMARY KEY CHECK(kind IN ('nodes', 'pods', 'jobs')),\n"
    "  resource_version TEXT NOT NULL\n"
    ");\n",

    /* 1 → 2: reservations. A reservation is a PodSet's assignment (Kueue
     * TopologyAssignment JSON, in the levels of the assignment) held as one
     * slot per pod; levels are the topology's, requests the per-pod requests
     * charged for each slot not yet taken by a bound pod. A slot's pod_uid
     * stays NULL until a pod claims it. */
    "CREATE TABLE reservations(\n"
    "  id TEXT PRIMARY KEY,\n"
    "  podset_key TEXT NOT NULL UNIQUE,\n"
    "  topology_name TEXT NOT NULL,\n"
    "  levels TEXT NOT NULL,\n"
    "  requests TEXT NOT NULL,\n"
    "  assignment TEXT NOT NULL,\n"
    "  created_at INTEGER NOT NULL,\n"
    "  expires_at INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX reservations_expiry ON reservations(expires_at);\n"
    "CREATE TABLE reservation_slots(\n"
    "  reservation_id TEXT NOT NULL REFERENCES reservations(id) ON DELETE CASCADE,\n"
    "  slot INTEGER NOT NULL CHECK(slot >= 0),\n"
    "  domain_values TEXT NOT NULL,\n"
    "  pod_uid TEXT,\n"
    "  UNIQUE(reservation_id, slot)\n"
    ");\n"
    "CREATE UNIQUE INDEX reservation_slots_pod ON reservation_slots(pod_uid, reservation_id)\n"
    "  WHERE pod_uid IS NOT NULL;\n",

    /* 2 → 3: what a PodSet's pods must share, and pod groups waiting to be
     * complete. A reservation keeps the shape (codec topo_pod_shape) and the
     * Kueue request (topo_kueue_request_text) it was placed for: a pod that
     * claims it with another is refused ('' on reservations made before:
     * not checked). group_members holds the pods of a Kueue pod group seen
     * at admission until the group is placed: one row per pod (member: its
     * name, else the admission request's uid) with its podset-group-name
     * ('' for none), in arrival order; group_roles the pod object that
     * first arrived with each shape (its role's template), kept as long as
     * the last member of that shape. */
    "ALTER TABLE reservations ADD COLUMN shape TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE reservations ADD COLUMN request TEXT NOT NULL DEFAULT '';\n"
    "CREATE TABLE group_members(\n"
    "  group_key TEXT NOT NULL,\n"
    "  member TEXT NOT NULL,\n"
    "  total INTEGER NOT NULL CHECK(total >= 1),\n"
    "  shape TEXT NOT NULL,\n"
    "  request TEXT NOT NULL,\n"
    "  podset_group TEXT NOT NULL,\n"
    "  seq INTEGER NOT NULL,\n"
    "  expires_at INTEGER NOT NULL,\n"
    "  PRIMARY KEY(group_key, member)\n"
    ");\n"
    "CREATE TABLE group_roles(\n"
    "  group_key TEXT NOT NULL,\n"
    "  shape TEXT NOT NULL,\n"
    "  pod TEXT NOT NULL,\n"
    "  expires_at INTEGER NOT NULL,\n"
    "  PRIMARY KEY(group_key, shape)\n"
    ");\n"
    "CREATE INDEX group_roles_expiry ON group_roles(expires_at);\n"
    "CREATE INDEX group_members_expiry ON group_members(expires_at);\n",

    /* 3 → 4: free slots are given back when no pod claims one for a while.
     * unclaimed_ttl (0: never, as for reservations made before) and the
     * time of the last claim; see topo_cache_reservation_spec. The free
     * slots indexed: a new PodSet sums them (topo_cache_foreach_unclaimed). */
    "ALTER TABLE reservations ADD COLUMN unclaimed_ttl INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE reservations ADD COLUMN claimed_at INTEGER NOT NULL DEFAULT 0;\n"
    "UPDATE reservations SET claimed_at = created_at;\n"
    "CREATE INDEX reservation_slots_free ON reservation_slots(reservation_id)\n"
    "  WHERE pod_uid IS NULL;\n",

    /* 4 → 5: topo-sync's last good facts per source (topo/cache_facts.h):
     * the facts document of the last successful fetch (opaque text to the
     * cache: lib/sync/sources writes and reads it), its SHA-256, its size and
     * when it was fetched (wall clock, ms), and the last failure and when,
     * with the failures since that fetch. A source that has only failed
     * has a row without a document. The document is the last column, so
     * that listing the others does not read its overflow pages. */
    "CREATE TABLE source_facts(\n"
    "  source TEXT PRIMARY KEY CHECK(length(source) > 0),\n"
    "  hash TEXT,\n"
    "  size INTEGER,\n"
    "  fetched_at INTEGER,\n"
    "  error TEXT,\n"
    "  error_at INTEGER,\n"
    "  failures INTEGER NOT NULL DEFAULT 0 CHECK(failures >= 0),\n"
    "  document TEXT,\n"
    "  CHECK((document IS NULL) = (hash IS NULL) AND (document IS NULL) = (size IS NULL) AND\n"
    "        (document IS NULL) = (fetched_at IS NULL)),\n"
    "  CHECK((error IS NULL) = (error_at IS NULL))\n"
    ");\n",

    /* 5 → 6: when each pod was created (metadata.creationTimestamp, seconds
     * since the epoch; 0 when unknown, as for pods stored before): the
     * ungater retries gated PodSets oldest first. Rows written before get
     * theirs with the watch's next event or relist. */
    "ALTER TABLE pods ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;\n"
    /* ...and reads the gated PodSets, not every pod: the unbound pods by
     * the PodSet key topo-webhook writes beside its gate (the expression is
     * CACHE_GATED_KEY's), then age and name (topo_cache_foreach_gated_podset). */
    "CREATE INDEX pods_gated ON pods(json_extract(podset, "
    "'$.annotations.\"topology.topo.io/podset\"'), created_at, name) WHERE node_name = '';\n",

    /* 6 → 7: failed-node replacement (docs/webhook.md "When nodes fail").
     * A node without any Ready condition (Kueue replaces it at once, where
     * a NotReady one waits for its pods to end); a pod being deleted
     * (metadata.deletionTimestamp set: it no longer holds its node); a
     * reservation's generation [gen_term, gen_seq] (topo_cache_reservation),
     * so that a record of an older placement never moves its slots back.
     * Rows written before read as Ready present, not terminating and
     * generation [0, 0]; nodes and pods get theirs with the watch's next
     * event or relist. */
    "ALTER TABLE nodes ADD COLUMN ready_missing INTEGER NOT NULL DEFAULT 0\n"
    "  CHECK(ready_missing IN (0, 1));\n"
    "ALTER TABLE pods ADD COLUMN terminating INTEGER NOT NULL DEFAULT 0\n"
    "  CHECK(terminating IN (0, 1));\n"
    "ALTER TABLE reservations ADD COLUMN gen_term INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE reservations ADD COLUMN gen_seq INTEGER NOT NULL DEFAULT 0;\n"
    /* ...and the PodSet's domain down to its required level (the values of
     * the topology's first levels, a JSON array; [] for none or before):
     * a node relabelled or re-created outside it is failed for the PodSet. */
    "ALTER TABLE reservations ADD COLUMN domain TEXT NOT NULL DEFAULT '[]';\n",
};

const size_t cache_nmigrations = sizeof(cache_migrations) / sizeof(cache_migrations[0]);

_Static_assert(sizeof(cache_migrations) / sizeof(cache_migrations[0]) ==
                   TOPO_CACHE_SCHEMA_VERSION,
               "one migration step per schema version");
