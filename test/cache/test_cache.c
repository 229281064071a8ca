/* Tests for lib/topo/cache: schema creation, migration and refusal; node,
 * pod and job round trips from Kubernetes JSON; malformed objects; watch
 * events, watch state and relists; reservations; snapshots equal to the
 * inventory's; batches. Files live in a fresh directory under $TMPDIR. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "support/keys.h"
#include "topo/cache.h"
#include "topo/engine.h"
#include "topo/inventory.h"
#include "support/dbfiles.h"

#define GPU "nvidia.com/gpu"
#define HOST "kubernetes.io/hostname"
#define RACK "topology.topo.io/rack"

static const char *const LEVELS5[] = {
    "topology.topo.io/datacenter", "topology.topo.io/spine", "topology.topo.io/leaf",
    "topology.topo.io/rack",       "kubernetes.io/hostname",
};

/* --- helpers ------------------------------------------------------------------------- */

typedef struct fx {
    topo_test_cachedir tmp;
    topo_cache *cache;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    if (topo_test_cachedir_make(&f->tmp, "cache-test") < 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_cache_close(f->cache);
    topo_test_cachedir_remove(&f->tmp);
    free(f);
    return 0;
}

/* The record keys the tests' caches hold (slot binding needs a seal). */
#define RECORD_KEY "the cache tests' record key"

static topo_cache *open_cache(fx *f)
{
    topo_err err = TOPO_ERR_INIT;
    topo_keyring ring = test_keyring(RECORD_KEY);
    topo_cache_opts o = {.record_keys = &ring};
    topo_cache_close(f->cache);
    f->cache = NULL;
    if (topo_cache_open(&f->cache, f->tmp.path, &o, &err) < 0)
        fail_msg("open: %s", err.text);
    return f->cache;
}

static const char *fixture(char *buf, size_t size, const char *rel)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(buf, size, "%s/fixtures/%s", root ? root : ".", rel);
    return buf;
}

static int64_t amount(const topo_resource *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            return r[i].amount;
    return -1;
}

static const char *kv_get(const topo_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

static void must(int rc, const topo_err *err)
{
    if (rc < 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

#define UPSERT(fn, c, text, err) must(fn((c), (text), strlen(text), (err)), (err))

static const char NODE_A[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":"
    "\"100\",\"labels\":{\"kubernetes.io/hostname\":\"n1\",\"topology.topo.io/rack\":\"r1\"}},"
    "\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"infer\",\"effect\":\"NoSchedule\"},"
    "{\"key\":\"gpu\",\"effect\":\"PreferNoSchedule\"}]},"
    "\"status\":{\"allocatable\":{\"cpu\":\"223500m\",\"memory\":\"2Ti\",\"nvidia.com/gpu\":\"8\","
    "\"pods\":\"110\"},\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
    "{\"type\":\"Ready\",\"status\":\"True\"}]}}";

static const char POD_A[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"u-1\",\"namespace\":\"ml\",\"name\":\"train-1\","
    "\"resourceVersion\":\"7\",\"creationTimestamp\":\"2024-05-01T12:00:00Z\",\"labels\":{\"app\":\"x\",\"job-name\":\"train\","
    "\"batch.kubernetes.io/job-completion-index\":\"1\",\"jobset.sigs.k8s.io/jobset-name\":\"js\"},"
    "\"annotations\":{\"kueue.x-k8s.io/podset-required-topology\":\"topology.topo.io/rack\","
    "\"topology.topo.io/podset-size\":\"4\",\"unrelated\":\"y\"}},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
    "{\"cpu\":\"2\",\"nvidia.com/gpu\":\"4\"}}},{\"name\":\"d\",\"resources\":{\"limits\":"
    "{\"cpu\":\"500m\"}}}],\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":"
    "{\"cpu\":\"8\"}}}],\"overhead\":{\"cpu\":\"250m\"}},\"status\":{\"phase\":\"Running\"}}";

static char *pod_json(char *buf, size_t size, const char *uid, const char *node, const char *phase,
                      int gpus)
{
    snprintf(buf, size,
             "{\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"p-%s\"},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":"
             "{\"requests\":{\"nvidia.com/gpu\":\"%d\"}}}]},\"status\":{\"phase\":\"%s\"}}",
             uid, uid, node, gpus, phase);
    return buf;
}

static size_t count_of(topo_cache *c, const char *what)
{
    topo_cache_stats s;
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_get_stats(&s, c, &err), &err);
    if (strcmp(what, "nodes") == 0)
        return s.nodes;
    if (strcmp(what, "pods") == 0)
        return s.pods;
    if (strcmp(what, "jobs") == 0)
        return s.jobs;
    if (strcmp(what, "reservations") == 0)
        return s.reservations;
    if (strcmp(what, "slots") == 0)
        return s.slots;
    return s.claimed_slots;
}

/* --- schema ---------------------------------------------------------------------------- */

static void test_cache__schema_fresh(void **state)
{
    fx *f = *state;
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT value FROM meta WHERE key = 'schema_version'"),
        TOPO_CACHE_SCHEMA_VERSION);
    assert_int_equal(topo_test_db_int(f->tmp.path,
                                      "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                      "AND name IN ('nodes', 'pods', 'jobs', 'reservations', "
                                      "'reservation_slots', 'watch_state', 'meta')"),
                     7);
    /* WAL is a property of the file. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(f->tmp.path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* Opening again changes nothing. */
    c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
}

/* Schema version 1 as released (the mirror tables only), with data. */
static const char V1_FILE[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE nodes(name TEXT PRIMARY KEY, labels TEXT NOT NULL, allocatable TEXT NOT NULL,"
    "  taints TEXT NOT NULL, unschedulable INTEGER NOT NULL CHECK(unschedulable IN (0, 1)),"
    "  ready INTEGER NOT NULL CHECK(ready IN (0, 1)), resource_version TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE pods(uid TEXT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    "  node_name TEXT NOT NULL DEFAULT '', phase TEXT NOT NULL DEFAULT '', requests TEXT NOT NULL,"
    "  podset TEXT NOT NULL, is_topology_assigned INTEGER NOT NULL CHECK(is_topology_assigned IN "
    "(0, 1)), resource_version TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE jobs(uid TEXT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    "  parallelism INTEGER NOT NULL, completions INTEGER, resource_version TEXT NOT NULL DEFAULT "
    "'');"
    "CREATE TABLE watch_state(kind TEXT PRIMARY KEY CHECK(kind IN ('nodes', 'pods', 'jobs')),"
    "  resource_version TEXT NOT NULL);"
    "INSERT INTO meta VALUES('schema_version', '1');"
    "INSERT INTO nodes VALUES('old-1', '{\"kubernetes.io/hostname\":\"old-1\"}',"
    "  '{\"nvidia.com/gpu\":8}', '[]', 0, 1, '41');"
    "INSERT INTO watch_state VALUES('nodes', '41');"
    "INSERT INTO pods VALUES('old-pod', 'ns', 'p', '', 'Pending', '{}',"
    "  '{\"labels\":{},\"annotations\":{}}', 0, '3');";

static void test_cache__migrate_from_v1(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_node_spec n;
    char rv[32];

    topo_test_db_exec(f->tmp.path, V1_FILE);
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT value FROM meta WHERE key = 'schema_version'"),
        TOPO_CACHE_SCHEMA_VERSION);
    /* The old rows survive... */
    must(topo_cache_get_node(&n, c, "old-1", pool, &err), &err);
    assert_int_equal(amount(n.allocatable, n.nallocatable, GPU), 8);
    assert_true(n.ready);
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_NODES, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "41");
    topo_cache_pod op;
    must(topo_cache_get_pod(&op, c, "old-pod", pool, &err), &err);
    assert_string_equal(op.name, "p");
    assert_int_equal(op.created_at, 0); /* unknown until the watch sends it again */
    /* ...and the new tables work. */
    const char *values[] = {"old-1"};
    topo_assign_domain dom = {values, 2};
    const char *alevels[] = {HOST};
    topo_assignment a = {alevels, 1, &dom, 1};
    topo_cache_reservation_spec spec = {0};
    spec.id = "r1";
    spec.podset_key = "ns/job";
    spec.topology_name = "default";
    spec.levels = alevels;
    spec.nlevels = 1;
    spec.assignment = &a;
    spec.created_at = 10;
    spec.expires_at = 100;
    must(topo_cache_reservation_create(c, &spec, &err), &err);
    assert_int_equal(count_of(c, "slots"), 2);
    topo_pool_free(pool);
}

static void test_cache__migrate_from_v0(void **state)
{
    fx *f = *state;
    /* An empty SQLite file (version 0: no tables at all). */
    topo_test_db_exec(f->tmp.path, "PRAGMA user_version = 0;");
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
    assert_int_equal(count_of(c, "nodes"), 0);
}

static void test_cache__refuse(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_cache_opts opts = {.must_exist = 1};
    char other[400];
    FILE *fp;

    /* A newer schema. */
    topo_test_db_exec(f->tmp.path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO meta VALUES('schema_version', '99');");
    assert_int_equal(topo_cache_open(&c, f->tmp.path, NULL, &err), TOPO_EUNSUPPORTED);
    assert_null(c);
    assert_non_null(strstr(err.text, "schema version 99 is newer than this build supports (7)"));
    /* Left as it was. */
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT value FROM meta"), 99);

    /* Some other program's database. */
    snprintf(other, sizeof(other), "%s/other.db", f->tmp.dir);
    topo_test_db_exec(other, "CREATE TABLE t(x);");
    assert_int_equal(topo_cache_open(&c, other, NULL, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "not a topo cache"));
    topo_test_remove_db(other);

    /* Not a database. */
    assert_non_null(fp = fopen(other, "w"));
    for (int i = 0; i < 200; i++)
        fputs("this is not a database file, it is text\n", fp);
    fclose(fp);
    assert_int_equal(topo_cache_open(&c, other, NULL, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "not a SQLite database"));
    topo_test_remove_db(other);

    /* Missing, and it must exist. */
    assert_int_equal(topo_cache_open(&c, other, &opts, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "no such file"));
    assert_int_equal(access(other, F_OK), -1);
}

/* --- nodes, pods, jobs ------------------------------------------------------------------ */

static void test_cache__node_round_trip(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_node_spec n;
    int deleted = 0;

    UPSERT(topo_cache_upsert_node, c, NODE_A, &err);
    must(topo_cache_get_node(&n, c, "n1", pool, &err), &err);
    assert_string_equal(n.name, "n1");
    assert_int_equal(n.nlabels, 2);
    assert_string_equal(kv_get(n.labels, n.nlabels, RACK), "r1");
    assert_int_equal(amount(n.allocatable, n.nallocatable, "cpu"), 223500);
    assert_int_equal(amount(n.allocatable, n.nallocatable, "memory"), 2LL << 40);
    assert_int_equal(amount(n.allocatable, n.nallocatable, GPU), 8);
    assert_int_equal(n.ntaints, 2);
    assert_string_equal(n.taints[0].key, "dedicated");
    assert_string_equal(n.taints[0].value, "infer");
    assert_string_equal(n.taints[0].effect, "NoSchedule");
    assert_null(n.taints[1].value);
    assert_true(n.ready);
    assert_false(n.unschedulable);

    /* MODIFIED: cordoned, NotReady, a label gone. */
    const char *modified =
        "{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"101\",\"labels\":{\"a\":\"b\"}},"
        "\"spec\":{\"unschedulable\":true},\"status\":{\"conditions\":[{\"type\":\"Ready\","
        "\"status\":\"Unknown\"}]}}";
    UPSERT(topo_cache_upsert_node, c, modified, &err);
    must(topo_cache_get_node(&n, c, "n1", pool, &err), &err);
    assert_int_equal(n.nlabels, 1);
    assert_string_equal(n.labels[0].key, "a");
    assert_int_equal(n.nallocatable, 0);
    assert_int_equal(n.ntaints, 0);
    assert_true(n.unschedulable);
    assert_false(n.ready);
    assert_int_equal(count_of(c, "nodes"), 1);

    must(topo_cache_delete_node(c, "n1", &deleted, &err), &err);
    assert_int_equal(deleted, 1);
    must(topo_cache_delete_node(c, "n1", &deleted, &err), &err);
    assert_int_equal(deleted, 0);
    assert_int_equal(topo_cache_get_node(&n, c, "n1", pool, &err), TOPO_ENOTFOUND);
    topo_pool_free(pool);
}

static void test_cache__pod_and_job_round_trip(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_cache_pod p;
    topo_cache_job j;

    UPSERT(topo_cache_upsert_pod, c, POD_A, &err);
    must(topo_cache_get_pod(&p, c, "u-1", pool, &err), &err);
    assert_string_equal(p.namespace_name, "ml");
    assert_string_equal(p.name, "train-1");
    assert_string_equal(p.node_name, "n1");
    assert_string_equal(p.phase, "Running");
    assert_string_equal(p.resource_version, "7");
    assert_int_equal(p.created_at, 1714564800);
    /* max(2 + 0.5, 8) + 0.25 cpu (the limit-only container defaults its request). */
    assert_int_equal(amount(p.requests, p.nrequests, "cpu"), 8250);
    assert_int_equal(amount(p.requests, p.nrequests, GPU), 4);
    assert_true(p.tas);
    /* Only the PodSet keys are kept. */
    assert_int_equal(p.nlabels, 3);
    assert_string_equal(kv_get(p.labels, p.nlabels, "job-name"), "train");
    assert_string_equal(kv_get(p.labels, p.nlabels, "batch.kubernetes.io/job-completion-index"),
                        "1");
    assert_string_equal(kv_get(p.labels, p.nlabels, "jobset.sigs.k8s.io/jobset-name"), "js");
    assert_null(kv_get(p.labels, p.nlabels, "app"));
    assert_int_equal(p.nannotations, 2);
    assert_string_equal(kv_get(p.annotations, p.nannotations, "topology.topo.io/podset-size"), "4");
    assert_null(kv_get(p.annotations, p.nannotations, "unrelated"));

    /* The pod finishes. */
    char buf[1024];
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "u-1", "n1", "Succeeded", 4),
           &err);
    must(topo_cache_get_pod(&p, c, "u-1", pool, &err), &err);
    assert_string_equal(p.phase, "Succeeded");
    assert_int_equal(p.created_at, 0); /* this one has no creationTimestamp */
    assert_false(p.tas);
    assert_int_equal(p.nlabels, 0);

    const char *job = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"uid\":\"j-1\","
                      "\"namespace\":\"ml\",\"name\":\"train\",\"resourceVersion\":\"9\"},"
                      "\"spec\":{\"parallelism\":8,\"completions\":16}}";
    UPSERT(topo_cache_upsert_job, c, job, &err);
    must(topo_cache_get_job(&j, c, "j-1", pool, &err), &err);
    assert_string_equal(j.name, "train");
    assert_int_equal(j.parallelism, 8);
    assert_int_equal(j.completions, 16);
    assert_string_equal(j.resource_version, "9");
    UPSERT(topo_cache_upsert_job, c, "{\"metadata\":{\"uid\":\"j-2\",\"name\":\"x\"}}", &err);
    must(topo_cache_get_job(&j, c, "j-2", pool, &err), &err);
    assert_int_equal(j.parallelism, 1);
    assert_int_equal(j.completions, -1);
    int deleted = 0;
    must(topo_cache_delete_job(c, "j-2", &deleted, &err), &err);
    assert_int_equal(deleted, 1);
    must(topo_cache_delete_pod(c, "u-1", &deleted, &err), &err);
    assert_int_equal(deleted, 1);
    assert_int_equal(count_of(c, "pods"), 0);
    assert_int_equal(count_of(c, "jobs"), 1);
    topo_pool_free(pool);
}

static void expect_rejected(topo_cache *c, topo_cache_kind kind, const char *text,
                            const char *message)
{
    topo_err err = TOPO_ERR_INIT;
    int rc = kind == TOPO_CACHE_NODES ? topo_cache_upsert_node(c, text, strlen(text), &err)
             : kind == TOPO_CACHE_PODS ? topo_cache_upsert_pod(c, text, strlen(text), &err)
                                       : topo_cache_upsert_job(c, text, strlen(text), &err);
    assert_int_equal(rc, TOPO_EINVALID);
    if (strstr(err.text, message) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.text, message);
}

static void test_cache__malformed(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_node_spec n;
    topo_cache_pod p;
    char buf[1024];

    UPSERT(topo_cache_upsert_node, c, NODE_A, &err);
    UPSERT(topo_cache_upsert_pod, c, POD_A, &err);

    expect_rejected(c, TOPO_CACHE_NODES,
                    "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"abc\"}}}",
                    "status.allocatable.cpu: invalid quantity \"abc\"");
    expect_rejected(c, TOPO_CACHE_NODES, "{\"metadata\":{\"labels\":{}}}", "metadata.name: required");
    expect_rejected(c, TOPO_CACHE_NODES, "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":1}}}",
                    "metadata.labels.a: expected a string");
    expect_rejected(c, TOPO_CACHE_NODES,
                    "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"key\":\"k\","
                    "\"effect\":\"Sometimes\"}]}}",
                    "spec.taints[0].effect: unsupported value \"Sometimes\"");
    expect_rejected(c, TOPO_CACHE_NODES, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"n1\"}}",
                    "kind: expected Node, got \"Pod\"");
    expect_rejected(c, TOPO_CACHE_NODES, "{\"metadata\":{\"name\":\"n1\"", "node:1:");
    expect_rejected(c, TOPO_CACHE_PODS, "{\"metadata\":{\"name\":\"x\"}}", "metadata.uid: required");
    expect_rejected(c, TOPO_CACHE_PODS,
                    "{\"metadata\":{\"uid\":\"u-1\"},\"spec\":{\"nodeName\":\"n2\",\"containers\":"
                    "[{\"name\":\"c\",\"resources\":{\"requests\":{\"memory\":\"-1Gi\"}}}]}}",
                    "spec.containers[0].resources.requests.memory");
    expect_rejected(c, TOPO_CACHE_PODS,
                    "{\"metadata\":{\"uid\":\"u-1\",\"creationTimestamp\":\"2024-05-01\"}}",
                    "metadata.creationTimestamp: \"2024-05-01\" is not an RFC 3339 time");
    expect_rejected(c, TOPO_CACHE_PODS, "{\"metadata\":{\"uid\":\"u-1\"},\"spec\":[]}",
                    "spec: expected an object, got an array");
    expect_rejected(c, TOPO_CACHE_JOBS, "{\"metadata\":{\"uid\":\"j\"},\"spec\":{\"parallelism\":-2}}",
                    "spec.parallelism: out of range");

    /* The stored rows are untouched. */
    must(topo_cache_get_node(&n, c, "n1", pool, &err), &err);
    assert_int_equal(amount(n.allocatable, n.nallocatable, "cpu"), 223500);
    assert_int_equal(n.nlabels, 2);
    must(topo_cache_get_pod(&p, c, "u-1", pool, &err), &err);
    assert_string_equal(p.node_name, "n1");
    assert_int_equal(count_of(c, "jobs"), 0);

    /* Inside a batch: the bad object is refused, the batch goes on. */
    must(topo_cache_begin(c, &err), &err);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "u-2", "n1", "Running", 1), &err);
    expect_rejected(c, TOPO_CACHE_PODS, "{\"metadata\":{}}", "metadata.uid: required");
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "u-3", "n1", "Running", 1), &err);
    must(topo_cache_commit(c, &err), &err);
    assert_int_equal(count_of(c, "pods"), 3);

    /* A list with one bad item writes nothing. */
    const char *list = "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"uid\":\"u-4\"}},"
                       "{\"metadata\":{\"name\":\"no-uid\"}}]}";
    assert_int_equal(topo_cache_upsert_list(c, TOPO_CACHE_PODS, list, strlen(list), "pods.json",
                                            NULL, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "pods.json: items[1].metadata.uid: required");
    assert_int_equal(count_of(c, "pods"), 3);
    topo_pool_free(pool);
}

/* --- watch events, watch state, relist -------------------------------------------------- */

static void test_cache__watch(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    char rv[8], ev[2048], pod[1024];

    assert_int_equal(topo_cache_get_watch_rv(c, TOPO_CACHE_PODS, rv, sizeof(rv), &err),
                     TOPO_ENOTFOUND);
    must(topo_cache_set_watch_rv(c, TOPO_CACHE_JOBS, "12", &err), &err);
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_JOBS, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "12");
    must(topo_cache_set_watch_rv(c, TOPO_CACHE_JOBS, "123456789", &err), &err);
    assert_int_equal(topo_cache_get_watch_rv(c, TOPO_CACHE_JOBS, rv, sizeof(rv), &err),
                     TOPO_ELIMIT);

    snprintf(ev, sizeof(ev), "{\"type\":\"ADDED\",\"object\":%s}", POD_A);
    must(topo_cache_apply_event(c, TOPO_CACHE_PODS, ev, strlen(ev), &err), &err);
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_PODS, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "7");
    assert_int_equal(count_of(c, "pods"), 1);

    pod_json(pod, sizeof(pod), "u-2", "n1", "Running", 2);
    snprintf(ev, sizeof(ev), "{\"type\":\"MODIFIED\",\"object\":%s}", pod);
    must(topo_cache_apply_event(c, TOPO_CACHE_PODS, ev, strlen(ev), &err), &err);
    assert_int_equal(count_of(c, "pods"), 2);

    const char *del = "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
                      "{\"uid\":\"u-1\",\"resourceVersion\":\"20\"}}}";
    must(topo_cache_apply_event(c, TOPO_CACHE_PODS, del, strlen(del), &err), &err);
    assert_int_equal(count_of(c, "pods"), 1);
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_PODS, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "20");

    const char *bm = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
                     "{\"resourceVersion\":\"25\"}}}";
    must(topo_cache_apply_event(c, TOPO_CACHE_PODS, bm, strlen(bm), &err), &err);
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_PODS, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "25");

    const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
                       "\"message\":\"too old resource version: 1 (25)\",\"reason\":\"Expired\","
                       "\"code\":410}}";
    assert_int_equal(topo_cache_apply_event(c, TOPO_CACHE_PODS, gone, strlen(gone), &err),
                     TOPO_EGONE);
    assert_non_null(strstr(err.text, "too old resource version"));
    const char *bad = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"x\","
                      "\"resourceVersion\":\"30\"}}}";
    assert_int_equal(topo_cache_apply_event(c, TOPO_CACHE_PODS, bad, strlen(bad), &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "object.metadata.uid: required");
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_PODS, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "25"); /* nothing written */
    const char *boom = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
                       "\"message\":\"etcd is sad\"}}";
    assert_int_equal(topo_cache_apply_event(c, TOPO_CACHE_PODS, boom, strlen(boom), &err),
                     TOPO_ESERVER);
    assert_string_equal(err.text, "watch pods: error event (code 500): etcd is sad");
    const char *weird = "{\"type\":\"CHANGED\",\"object\":{}}";
    assert_int_equal(topo_cache_apply_event(c, TOPO_CACHE_PODS, weird, strlen(weird), &err),
                     TOPO_EINVALID);
}

static void test_cache__relist(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    char buf[1024];
    size_t deleted = 0;

    for (int i = 0; i < 3; i++) {
        char uid[16];
        snprintf(uid, sizeof(uid), "u-%d", i);
        UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), uid, "n1", "Running", 1), &err);
    }
    assert_int_equal(topo_cache_relist_begin(c, TOPO_CACHE_PODS, &err), TOPO_EINVALID);
    must(topo_cache_begin(c, &err), &err);
    must(topo_cache_relist_begin(c, TOPO_CACHE_PODS, &err), &err);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "u-0", "n1", "Running", 1), &err);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "u-2", "n1", "Running", 1), &err);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "u-9", "n1", "Running", 1), &err);
    must(topo_cache_relist_end(c, TOPO_CACHE_PODS, &deleted, &err), &err);
    must(topo_cache_commit(c, &err), &err);
    assert_int_equal(deleted, 1);
    assert_int_equal(count_of(c, "pods"), 3);
    topo_pool *pool = topo_pool_create();
    topo_cache_pod p;
    assert_int_equal(topo_cache_get_pod(&p, c, "u-1", pool, &err), TOPO_ENOTFOUND);
    must(topo_cache_get_pod(&p, c, "u-9", pool, &err), &err);
    topo_pool_free(pool);
}

/* --- reservations ------------------------------------------------------------------------ */

/* A reservation of 3 slots, 2 pods on n1 and 1 on n2 (hostname assignment),
 * whose free slots lapse after ttl (0: never); create returns `expect`. */
static void create_res(topo_cache *c, const char *id, const char *key, int64_t created,
                       int64_t expires, int64_t ttl, const topo_resource *req, size_t nreq,
                       int expect)
{
    static const char *v1[] = {"n1"}, *v2[] = {"n2"};
    static const char *alevels[] = {HOST};
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {alevels, 1, doms, 2};
    topo_cache_reservation_spec spec = {0};
    topo_err err = TOPO_ERR_INIT;
    spec.id = id;
    spec.podset_key = key;
    spec.topology_name = "default";
    spec.levels = LEVELS5;
    spec.nlevels = 5;
    spec.assignment = &a;
    spec.requests = req;
    spec.nrequests = nreq;
    spec.created_at = created;
    spec.expires_at = expires;
    spec.unclaimed_ttl = ttl;
    int rc = topo_cache_reservation_create(c, &spec, &err);
    if (rc != expect)
        fail_msg("create %s: got %s, want %s: %s", id, topo_err_name(rc), topo_err_name(expect),
                 err.text);
}

/* r1 for PodSet ns/train: 4 GPUs a pod, free slots never lapse. */
static void create_r1(topo_cache *c, const char *id, const char *key, int64_t created,
                      int64_t expires, int expect)
{
    static const topo_resource req[] = {{GPU, 4}};
    create_res(c, id, key, created, expires, 0, req, 1, expect);
}

static int claim(topo_cache *c, const char *id, const char *pod, int32_t rank, int64_t now,
                 int32_t *out_slot, const char **out_host, topo_pool *pool)
{
    topo_cache_slot s;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_cache_reservation_claim(&s, c, id, pod, rank, now, pool, &err);
    if (out_slot != NULL)
        *out_slot = s.index;
    if (out_host != NULL)
        *out_host = rc == 0 ? s.values[0] : NULL;
    return rc;
}

/* A reservation made with its first pod's slot claimed (what the webhook
 * does for the pod that places its PodSet), its assignment text given:
 * stored as given, the slot the pod's, a later claim by that pod the same
 * slot; a claimant without a name or out of range refused, nothing stored. */
static void test_cache__reservation_created_claimed(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    static const char *v1[] = {"n1"}, *v2[] = {"n2"};
    static const char *alevels[] = {HOST};
    static const topo_resource req[] = {{GPU, 4}};
    static const char text[] = "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":"
                               "[{\"values\":[\"n1\"],\"count\":2},{\"values\":"
                               "[\"n2\"],\"count\":1}]}";
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {alevels, 1, doms, 2};
    topo_cache_reservation_spec spec = {0};
    spec.podset_key = "ns/train";
    spec.topology_name = "default";
    spec.levels = LEVELS5;
    spec.nlevels = 5;
    spec.assignment = &a;
    spec.requests = req;
    spec.nrequests = 1;
    spec.created_at = 100;
    spec.expires_at = 200;
    spec.assignment_json = text;

    spec.id = "bad1";
    spec.claimant = "pod-x";
    spec.claimed_slot = 3;
    assert_int_equal(topo_cache_reservation_create(c, &spec, &err), TOPO_EINVALID);
    spec.id = "bad2";
    spec.claimant = "";
    spec.claimed_slot = 0;
    assert_int_equal(topo_cache_reservation_create(c, &spec, &err), TOPO_EINVALID);
    assert_int_equal(count_of(c, "reservations"), 0);

    spec.id = "r1";
    spec.claimant = "pod-x";
    spec.claimed_slot = 2;
    must(topo_cache_reservation_create(c, &spec, &err), &err);
    topo_cache_reservation r;
    must(topo_cache_reservation_get_by_podset(&r, c, "ns/train", pool, &err), &err);
    assert_int_equal(r.nclaimed, 1);
    assert_null(r.slots[0].pod_uid);
    assert_string_equal(r.slots[2].pod_uid, "pod-x");
    assert_string_equal(r.assignment_json, text);
    /* Taken: the id, then the PodSet (the insert's own constraints, named). */
    spec.podset_key = "ns/other";
    assert_int_equal(topo_cache_reservation_create(c, &spec, &err), TOPO_ECONFLICT);
    assert_non_null(strstr(err.text, "reservation r1: id already exists"));
    spec.id = "r2";
    spec.podset_key = "ns/train";
    assert_int_equal(topo_cache_reservation_create(c, &spec, &err), TOPO_ECONFLICT);
    assert_non_null(strstr(err.text, "PodSet ns/train already holds an unexpired reservation"));
    assert_int_equal(count_of(c, "reservations"), 1);
    assert_int_equal(count_of(c, "slots"), 3);
    int32_t slot = -1;
    const char *host = NULL;
    assert_int_equal(claim(c, "r1", "pod-x", -1, 110, &slot, &host, pool), 0);
    assert_int_equal(slot, 2);
    assert_string_equal(host, "n2");
    assert_int_equal(claim(c, "r1", "pod-y", 2, 110, &slot, NULL, pool), TOPO_ECONFLICT);
    assert_int_equal(claim(c, "r1", "pod-y", -1, 110, &slot, NULL, pool), 0);
    assert_int_equal(slot, 0);
    topo_pool_free(pool);
}

static void test_cache__reservations(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_cache_reservation r;
    int32_t slot = -1;
    const char *host = NULL;
    char buf[1024];

    create_r1(c, "r1", "ns/train", 100, 200, 0);
    create_r1(c, "r1", "ns/other", 100, 200, TOPO_ECONFLICT);   /* id taken */
    create_r1(c, "r2", "ns/train", 150, 250, TOPO_ECONFLICT);   /* PodSet holds one */
    assert_int_equal(count_of(c, "reservations"), 1);
    assert_int_equal(count_of(c, "slots"), 3);

    /* By rank, then the next free. */
    assert_int_equal(claim(c, "r1", "pod-a", 1, 110, &slot, &host, pool), 0);
    assert_int_equal(slot, 1);
    assert_string_equal(host, "n1");
    assert_int_equal(claim(c, "r1", "pod-b", -1, 110, &slot, &host, pool), 0);
    assert_int_equal(slot, 0);
    assert_int_equal(claim(c, "r1", "pod-c", -1, 110, &slot, &host, pool), 0);
    assert_int_equal(slot, 2);
    assert_string_equal(host, "n2");
    assert_int_equal(claim(c, "r1", "pod-d", -1, 110, &slot, NULL, pool), TOPO_ENOFIT);
    /* Idempotent; conflicts; range. */
    assert_int_equal(claim(c, "r1", "pod-a", -1, 110, &slot, NULL, pool), 0);
    assert_int_equal(slot, 1);
    assert_int_equal(claim(c, "r1", "pod-a", 1, 110, &slot, NULL, pool), 0);
    assert_int_equal(claim(c, "r1", "pod-a", 0, 110, &slot, NULL, pool), TOPO_ECONFLICT);
    assert_int_equal(claim(c, "r1", "pod-d", 0, 110, &slot, NULL, pool), TOPO_ECONFLICT);
    assert_int_equal(claim(c, "r1", "pod-d", 3, 110, &slot, NULL, pool), TOPO_EINVALID);
    assert_int_equal(claim(c, "nope", "pod-d", 0, 110, &slot, NULL, pool), TOPO_ENOTFOUND);
    assert_int_equal(count_of(c, "claimed"), 3);

    /* Release frees the slot for the next pod. */
    size_t released = 0;
    must(topo_cache_reservation_release_pod(c, "pod-a", &released, &err), &err);
    assert_int_equal(released, 1);
    assert_int_equal(claim(c, "r1", "pod-d", -1, 110, &slot, NULL, pool), 0);
    assert_int_equal(slot, 1);
    /* A pod the cache sees finished gives its slot up; a deleted one too. */
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "pod-b", "n1", "Failed", 4), &err);
    assert_int_equal(claim(c, "r1", "pod-e", 0, 110, &slot, NULL, pool), 0);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "pod-c", "n2", "Running", 4), &err);
    int deleted = 0;
    must(topo_cache_delete_pod(c, "pod-c", &deleted, &err), &err);
    assert_int_equal(claim(c, "r1", "pod-f", 2, 110, &slot, NULL, pool), 0);

    /* Read back, by id and by PodSet; it survives a reopen. */
    c = open_cache(f);
    must(topo_cache_reservation_get_by_podset(&r, c, "ns/train", pool, &err), &err);
    assert_string_equal(r.id, "r1");
    assert_int_equal(r.nslots, 3);
    assert_int_equal(r.nclaimed, 3);
    assert_string_equal(r.slots[0].pod_uid, "pod-e");
    assert_string_equal(r.slots[1].pod_uid, "pod-d");
    assert_string_equal(r.slots[2].pod_uid, "pod-f");
    assert_string_equal(r.slots[2].values[0], "n2");
    assert_int_equal(r.nlevels, 5);
    assert_int_equal(r.nassignment_levels, 1);
    assert_string_equal(r.assignment_levels[0], HOST);
    assert_int_equal(amount(r.requests, r.nrequests, GPU), 4);
    assert_int_equal(r.created_at, 100);
    assert_int_equal(r.expires_at, 200);
    assert_string_equal(r.assignment_json, "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":"
                                           "[{\"values\":[\"n1\"],\"count\":2},{\"values\":"
                                           "[\"n2\"],\"count\":1}]}");
    assert_int_equal(topo_cache_reservation_get(&r, c, "r9", pool, &err), TOPO_ENOTFOUND);

    /* Expiry: claims stop at expires_at; the PodSet may reserve again. */
    assert_int_equal(claim(c, "r1", "pod-g", -1, 200, &slot, NULL, pool), TOPO_ENOTFOUND);
    create_r1(c, "r2", "ns/train", 200, 300, 0); /* replaces expired r1 */
    assert_int_equal(topo_cache_reservation_get(&r, c, "r1", pool, &err), TOPO_ENOTFOUND);
    create_r1(c, "r3", "ns/eval", 200, 250, 0);
    size_t expired = 0;
    must(topo_cache_reservation_expire(c, 249, &expired, &err), &err);
    assert_int_equal(expired, 0);
    must(topo_cache_reservation_expire(c, 250, &expired, &err), &err);
    assert_int_equal(expired, 1);
    assert_int_equal(count_of(c, "reservations"), 1);
    assert_int_equal(count_of(c, "slots"), 3); /* r3's went with it */
    must(topo_cache_reservation_delete(c, "r2", &deleted, &err), &err);
    assert_int_equal(deleted, 1);
    assert_int_equal(count_of(c, "slots"), 0);

    /* In a batch: a refused create leaves the batch alone; a rollback undoes
     * the claims. */
    create_r1(c, "r4", "ns/batch", 300, 400, 0);
    must(topo_cache_begin_durable(c, &err), &err);
    assert_int_equal(claim(c, "r4", "pod-x", -1, 310, &slot, NULL, pool), 0);
    create_r1(c, "r5", "ns/batch", 300, 400, TOPO_ECONFLICT);
    assert_int_equal(claim(c, "r4", "pod-y", -1, 310, &slot, NULL, pool), 0);
    assert_int_equal(slot, 1);
    assert_int_equal(count_of(c, "claimed"), 2);
    must(topo_cache_rollback(c, &err), &err);
    assert_int_equal(count_of(c, "claimed"), 0);
    must(topo_cache_begin_durable(c, &err), &err);
    assert_int_equal(claim(c, "r4", "pod-x", 2, 310, &slot, NULL, pool), 0);
    must(topo_cache_commit(c, &err), &err);
    assert_int_equal(count_of(c, "claimed"), 1);

    /* Malformed specs. */
    topo_cache_reservation_spec bad = {0};
    bad.id = "x";
    bad.podset_key = "k";
    bad.topology_name = "t";
    assert_int_equal(topo_cache_reservation_create(c, &bad, &err), TOPO_EINVALID);
    topo_pool_free(pool);
}

/* --- snapshots ----------------------------------------------------------------------------- */

typedef struct rows {
    char text[256][160];
    size_t n;
} rows;

static int collect(const topo_domain_view *v, void *payload)
{
    rows *r = payload;
    if (r->n == 256)
        return -1;
    snprintf(r->text[r->n++], sizeof(r->text[0]), "%zu %s nodes=%zu cap=%lld free=%lld max=%lld "
                                                  "pods=%lld",
             v->level, v->value, v->nodes, (long long)v->capacity, (long long)v->free,
             (long long)v->max_node_free, (long long)v->pods_free);
    return 0;
}

static void assert_same_walk(const topo_snapshot *a, const topo_snapshot *b, const char *res)
{
    static rows ra, rb;
    ra.n = rb.n = 0;
    assert_int_equal(topo_snapshot_walk(a, res, collect, &ra), 0);
    assert_int_equal(topo_snapshot_walk(b, res, collect, &rb), 0);
    assert_true(ra.n > 0);
    assert_int_equal(ra.n, rb.n);
    for (size_t i = 0; i < ra.n; i++)
        assert_string_equal(ra.text[i], rb.text[i]);
}

static const char *place(const topo_snapshot *snap, int32_t count, int64_t gpus,
                         const char *required, topo_pool *pool)
{
    static char out[512];
    topo_podset_spec ps;
    topo_podset_result res;
    topo_gates gates;
    topo_resource req[] = {{GPU, gpus}};
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0;

    memset(&ps, 0, sizeof(ps));
    ps.name = "main";
    ps.count = count;
    ps.requests = req;
    ps.nrequests = 1;
    ps.required = required;
    ps.unconstrained = required == NULL;
    topo_gates_init(&gates);
    must(topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, &err), &err);
    if (res.assignment == NULL)
        return res.failure;
    out[0] = '\0';
    for (size_t d = 0; d < res.assignment->ndomains; d++)
        len += (size_t)snprintf(out + len, sizeof(out) - len, "%s=%d ",
                                res.assignment->domains[d].values[res.assignment->nlevels - 1],
                                (int)res.assignment->domains[d].count);
    return out;
}

static void snapshots(topo_snapshot **from_inv, topo_snapshot **from_cache, size_t *ign_inv,
                      size_t *ign_cache, const topo_inventory *inv, topo_cache *c, int64_t now)
{
    topo_inventory_snapshot_opts iopts = {0};
    topo_cache_snapshot_opts copts = {0};
    topo_err err = TOPO_ERR_INIT;
    iopts.snapshot.topology_name = "default";
    iopts.snapshot.levels = LEVELS5;
    iopts.snapshot.nlevels = 5;
    copts.snapshot = iopts.snapshot;
    copts.now = now;
    must(topo_inventory_snapshot(from_inv, inv, &iopts, ign_inv, &err), &err);
    must(topo_cache_snapshot(from_cache, c, &copts, ign_cache, &err), &err);
}

/* A reader's open (topoassign show, cache stats) never writes: an empty
 * file stays empty (it used to get a schema), a file that is no database is
 * named so, an older schema is not migrated; a current cache reads. */
static void test_cache__read_only(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_cache_opts ro = {.must_exist = 1, .read_only = 1};
    struct stat st;
    FILE *fp = fopen(f->tmp.path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(topo_cache_open(&c, f->tmp.path, &ro, &err), TOPO_EINVALID);
    assert_null(c);
    assert_non_null(strstr(err.text, "empty, not a topo cache"));
    assert_int_equal(stat(f->tmp.path, &st), 0);
    assert_int_equal(st.st_size, 0);
    fp = fopen(f->tmp.path, "w");
    fputs("not a database, just text long enough to look like a header....", fp);
    fclose(fp);
    assert_int_equal(topo_cache_open(&c, f->tmp.path, &ro, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "not a SQLite database"));
    topo_test_remove_db(f->tmp.path);
    /* a cache made by a writer reads */
    topo_cache_close(open_cache(f));
    f->cache = NULL;
    must(topo_cache_open(&c, f->tmp.path, &ro, &err), &err);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
    topo_cache_stats s;
    must(topo_cache_get_stats(&s, c, &err), &err);
    topo_cache_close(c);
    /* an older schema is left to a writer */
    topo_test_db_exec(f->tmp.path, "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    assert_int_equal(topo_cache_open(&c, f->tmp.path, &ro, &err), TOPO_EUNSUPPORTED);
    assert_non_null(strstr(err.text, "schema version 2 is older"));
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT value FROM meta WHERE key = 'schema_version'"), 2);
}

/* Members of pod groups: recorded in arrival order, refreshed in place,
 * forgotten when they expire; what a reservation must be claimed with
 * reads back. */
typedef struct seen_members {
    char text[512];
    size_t n;
} seen_members;

static int add_member(const topo_cache_group_member *m, void *payload)
{
    seen_members *s = payload;
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof s->text - len, "%s%s:%d:%s:%s", s->n++ ? " " : "", m->member,
             (int)m->total, m->shape, m->pod_json);
    return 0;
}

static const char *members(topo_cache *c, const char *key, int64_t now, seen_members *s)
{
    topo_err err = TOPO_ERR_INIT;
    memset(s, 0, sizeof(*s));
    must(topo_cache_group_members(c, key, now, add_member, s, &err), &err);
    return s->text;
}

static void test_cache__group_members(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    seen_members s;
    topo_cache_group_member m = {"ns/pod-group/g", "w-2", 3, "aaaa", "required rack", "",
                                 "{\"a\":1}", 100};
    must(topo_cache_group_member_put(c, &m, &err), &err);
    m.member = "leader";
    m.shape = "bbbb";
    must(topo_cache_group_member_put(c, &m, &err), &err);
    m.group_key = "ns/pod-group/other";
    must(topo_cache_group_member_put(c, &m, &err), &err);
    assert_string_equal(members(c, "ns/pod-group/g", 50, &s),
                        "w-2:3:aaaa:{\"a\":1} leader:3:bbbb:{\"a\":1}");
    /* the same member again: refreshed, keeps its place; a shape's template
     * is the pod that came first with it, read on its first member */
    m.group_key = "ns/pod-group/g";
    m.member = "w-2";
    m.pod_json = "{\"b\":2}";
    m.expires_at = 200;
    must(topo_cache_group_member_put(c, &m, &err), &err);
    assert_string_equal(members(c, "ns/pod-group/g", 50, &s),
                        "w-2:3:bbbb:{\"a\":1} leader:3:bbbb:");
    m.shape = "cccc";
    must(topo_cache_group_member_put(c, &m, &err), &err);
    assert_string_equal(members(c, "ns/pod-group/g", 50, &s),
                        "w-2:3:cccc:{\"b\":2} leader:3:bbbb:{\"a\":1}");
    /* past its expiry a member is not read, then expired */
    assert_string_equal(members(c, "ns/pod-group/g", 150, &s), "w-2:3:cccc:{\"b\":2}");
    size_t gone = 0;
    must(topo_cache_group_expire(c, 150, &gone, &err), &err);
    assert_int_equal(gone, 2); /* leader of g, and other's one */
    assert_string_equal(members(c, "ns/pod-group/g", 50, &s), "w-2:3:cccc:{\"b\":2}");
    assert_int_equal(members(c, "ns/pod-group/other", 50, &s)[0], '\0');
    /* incomplete members are refused */
    m.total = 0;
    assert_int_equal(topo_cache_group_member_put(c, &m, &err), TOPO_EINVALID);

    /* a reservation keeps the shape and the request it was placed for */
    static const char *v1[] = {"n1"};
    static const char *alevels[] = {HOST};
    topo_assign_domain doms[] = {{v1, 1}};
    topo_assignment a = {alevels, 1, doms, 1};
    topo_cache_reservation_spec spec = {0};
    spec.id = "r-shape";
    spec.podset_key = "ns/job/j";
    spec.topology_name = "default";
    spec.levels = LEVELS5;
    spec.nlevels = 5;
    spec.assignment = &a;
    spec.created_at = 1;
    spec.expires_at = 100;
    spec.shape = "0123456789abcdef";
    spec.request = "required topology.topo.io/rack";
    must(topo_cache_reservation_create(c, &spec, &err), &err);
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r;
    must(topo_cache_reservation_get_by_podset(&r, c, "ns/job/j", pool, &err), &err);
    assert_string_equal(r.shape, "0123456789abcdef");
    assert_string_equal(r.request, "required topology.topo.io/rack");
    topo_pool_free(pool);
}

static void test_cache__snapshot_equals_inventory_kubectl(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_inventory *inv = NULL;
    topo_snapshot *a = NULL, *b = NULL;
    size_t ia = 0, ib = 0, n = 0;
    char nodes[512], pods[512];

    fixture(nodes, sizeof(nodes), "clusters/kubectl-nodes-small.json");
    fixture(pods, sizeof(pods), "clusters/kubectl-pods-small.json");
    must(topo_inventory_create(&inv, &err), &err);
    must(topo_inventory_load_nodes_file(inv, nodes, &err), &err);
    must(topo_inventory_load_pods_file(inv, pods, &err), &err);
    must(topo_cache_upsert_list_file(c, TOPO_CACHE_NODES, nodes, &n, &err), &err);
    assert_int_equal(n, 4);
    must(topo_cache_upsert_list_file(c, TOPO_CACHE_PODS, pods, &n, &err), &err);
    assert_int_equal(n, 8);

    snapshots(&a, &b, &ia, &ib, inv, c, 0);
    assert_int_equal(ia, ib);
    assert_int_equal(ib, 1); /* ghost-0 on a node that is not there */
    assert_same_walk(a, b, GPU);
    assert_same_walk(a, b, "cpu");
    assert_same_walk(a, b, "memory");
    assert_same_walk(a, b, "pods");
    assert_string_equal(place(a, 1, 2, RACK, pool), place(b, 1, 2, RACK, pool));
    assert_string_equal(place(a, 2, 4, RACK, pool), place(b, 2, 4, RACK, pool));
    assert_string_equal(place(a, 3, 4, NULL, pool), place(b, 3, 4, NULL, pool));

    topo_snapshot_free(a);
    topo_snapshot_free(b);
    topo_inventory_free(inv);
    topo_pool_free(pool);
}

/* The fixture format goes in through the struct API. */
static void put_inventory(topo_cache *c, const topo_inventory *inv)
{
    topo_err err = TOPO_ERR_INIT;
    char uid[32];
    must(topo_cache_begin(c, &err), &err);
    for (size_t i = 0; i < topo_inventory_node_count(inv); i++)
        must(topo_cache_put_node(c, topo_inventory_node(inv, i), NULL, &err), &err);
    for (int tas = 0; tas < 2; tas++) {
        size_t n = tas ? topo_inventory_tas_pod_count(inv) : topo_inventory_pod_count(inv);
        for (size_t i = 0; i < n; i++) {
            const topo_pod_usage *u = tas ? topo_inventory_tas_pod(inv, i) : topo_inventory_pod(inv, i);
            topo_cache_pod p;
            memset(&p, 0, sizeof(p));
            snprintf(uid, sizeof(uid), "%s-%zu", tas ? "tas" : "pod", i);
            p.uid = uid;
            p.namespace_name = u->namespace_name;
            p.name = u->name;
            p.node_name = u->node;
            p.phase = "Running";
            p.requests = u->requests;
            p.nrequests = u->nrequests;
            p.tas = u->tas;
            must(topo_cache_put_pod(c, &p, &err), &err);
        }
    }
    must(topo_cache_commit(c, &err), &err);
}

static void test_cache__snapshot_equals_inventory_fixture(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_inventory *inv = NULL;
    topo_snapshot *a = NULL, *b = NULL;
    size_t ia = 0, ib = 0;
    char path[512];

    must(topo_inventory_create(&inv, &err), &err);
    must(topo_inventory_load_nodes_file(inv, fixture(path, sizeof(path), "clusters/hgx-h100.yaml"),
                                        &err),
         &err);
    must(topo_inventory_load_pods_file(inv, path, &err), &err);
    assert_int_equal(topo_cache_upsert_list_file(c, TOPO_CACHE_NODES, path, NULL, &err),
                     TOPO_EUNSUPPORTED);
    put_inventory(c, inv);

    snapshots(&a, &b, &ia, &ib, inv, c, 0);
    assert_int_equal(ia, ib);
    assert_same_walk(a, b, GPU);
    assert_same_walk(a, b, "cpu");
    assert_string_equal(place(a, 8, 8, "topology.topo.io/leaf", pool),
                        place(b, 8, 8, "topology.topo.io/leaf", pool));
    assert_string_equal(place(a, 4, 8, RACK, pool), place(b, 4, 8, RACK, pool));
    topo_snapshot_free(a);
    topo_snapshot_free(b);
    topo_inventory_free(inv);
    topo_pool_free(pool);
}

static int64_t free_of(const topo_snapshot *s, const char *host)
{
    static rows r;
    r.n = 0;
    assert_int_equal(topo_snapshot_walk(s, GPU, collect, &r), 0);
    for (size_t i = 0; i < r.n; i++) {
        char want[96];
        const char *p;
        snprintf(want, sizeof(want), "4 %s ", host);
        if (strncmp(r.text[i], want, strlen(want)) == 0 && (p = strstr(r.text[i], "free=")))
            return atoll(p + 5);
    }
    fail_msg("no host %s", host);
    return -1;
}

static void test_cache__snapshot_charges_reservations(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_cache_snapshot_opts opts = {0};
    topo_snapshot *s = NULL;
    size_t ignored = 0;
    char buf[2048];

    opts.snapshot.topology_name = "default";
    opts.snapshot.levels = LEVELS5;
    opts.snapshot.nlevels = 5;
    for (int i = 1; i <= 2; i++) {
        snprintf(buf, sizeof(buf),
                 "{\"metadata\":{\"name\":\"n%d\",\"labels\":{\"topology.topo.io/datacenter\":"
                 "\"dc\",\"topology.topo.io/spine\":\"s\",\"topology.topo.io/leaf\":\"l\","
                 "\"topology.topo.io/rack\":\"r\",\"kubernetes.io/hostname\":\"n%d\"}},"
                 "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":8,\"pods\":110},"
                 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
                 i, i);
        UPSERT(topo_cache_upsert_node, c, buf, &err);
    }
    create_r1(c, "r1", "ns/train", 100, 200, 0); /* 2 x 4 GPUs on n1, 1 x 4 on n2 */

    opts.now = 150;
    must(topo_cache_snapshot(&s, c, &opts, &ignored, &err), &err);
    assert_int_equal(free_of(s, "n1"), 0);
    assert_int_equal(free_of(s, "n2"), 4);
    assert_int_equal(ignored, 0);
    topo_snapshot_free(s);

    /* A slot whose pod is bound is charged as the pod; one claimed by a pod
     * not yet scheduled stays charged as the slot. */
    assert_int_equal(claim(c, "r1", "pod-a", 0, 150, NULL, NULL, pool), 0);
    assert_int_equal(claim(c, "r1", "pod-b", 1, 150, NULL, NULL, pool), 0);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "pod-a", "n1", "Running", 4), &err);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "pod-b", "", "Pending", 4), &err);
    must(topo_cache_snapshot(&s, c, &opts, &ignored, &err), &err);
    assert_int_equal(free_of(s, "n1"), 0);
    topo_snapshot_free(s);

    /* Expired: nothing held but the running pod. */
    opts.now = 200;
    must(topo_cache_snapshot(&s, c, &opts, &ignored, &err), &err);
    assert_int_equal(free_of(s, "n1"), 4);
    assert_int_equal(free_of(s, "n2"), 8);
    topo_snapshot_free(s);

    /* A rack-only topology still sees hostname reservations, through the node. */
    static const char *const racks[] = {"topology.topo.io/rack"};
    opts.snapshot.levels = racks;
    opts.snapshot.nlevels = 1;
    opts.now = 150;
    must(topo_cache_snapshot(&s, c, &opts, &ignored, &err), &err);
    assert_int_equal(ignored, 0);
    rows r;
    r.n = 0;
    assert_int_equal(topo_snapshot_walk(s, GPU, collect, &r), 0);
    assert_int_equal(r.n, 1);
    assert_non_null(strstr(r.text[0], "cap=16 free=4 ")); /* 16 - 4 (pod-a) - 4 (pod-b) - 4 (n2) */
    topo_snapshot_free(s);
    topo_pool_free(pool);
}

static int count_node(const topo_node_spec *n, const char *rv, void *payload)
{
    (void)n;
    (void)rv;
    (*(size_t *)payload)++;
    return 0;
}

static int count_pod(const topo_cache_pod *p, void *payload)
{
    size_t *n = payload;
    if (strcmp(p->uid, "u-500") == 0 && amount(p->requests, p->nrequests, GPU) != 1)
        return -100;
    (*n)++;
    return *n == 700 ? 7 : 0; /* stop early */
}

typedef struct writer {
    topo_cache *c;
    int rc;
} writer;

static int write_from_walk(const topo_node_spec *n, const char *rv, void *payload)
{
    writer *w = payload;
    (void)n;
    (void)rv;
    w->rc = topo_cache_set_watch_rv(w->c, TOPO_CACHE_NODES, "5", NULL);
    return 0;
}

/* --- batches ------------------------------------------------------------------------------ */

static void test_cache__batch(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    char buf[1024], uid[16];
    size_t n = 0;

    UPSERT(topo_cache_upsert_node, c, NODE_A, &err);
    assert_int_equal(topo_cache_commit(c, &err), TOPO_EINVALID);
    must(topo_cache_begin(c, &err), &err);
    assert_int_equal(topo_cache_begin(c, &err), TOPO_EINVALID);
    assert_true(topo_cache_in_batch(c));
    for (int i = 0; i < 1000; i++) {
        snprintf(uid, sizeof(uid), "u-%d", i);
        UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), uid, "n1", "Running", 1), &err);
    }
    /* Readers elsewhere see nothing until the commit. */
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT count(*) FROM pods"), 0);
    must(topo_cache_commit(c, &err), &err);
    assert_false(topo_cache_in_batch(c));
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT count(*) FROM pods"), 1000);
    assert_int_equal(count_of(c, "pods"), 1000);

    /* A batch rolled back leaves nothing. */
    must(topo_cache_begin(c, &err), &err);
    for (int i = 1000; i < 1100; i++) {
        snprintf(uid, sizeof(uid), "u-%d", i);
        UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), uid, "n1", "Running", 1), &err);
    }
    must(topo_cache_rollback(c, &err), &err);
    assert_int_equal(count_of(c, "pods"), 1000);

    /* Iterators: every row, and an early stop. */
    n = 0;
    must(topo_cache_foreach_node(c, count_node, &n, &err), &err);
    assert_int_equal(n, 1);
    n = 0;
    assert_int_equal(topo_cache_foreach_pod(c, count_pod, &n, &err), 7);
    assert_int_equal(n, 700);
    /* Writing from inside a walk is refused, not deadlocked. */
    writer w = {c, 0};
    must(topo_cache_foreach_node(c, write_from_walk, &w, &err), &err);
    assert_int_equal(w.rc, TOPO_EINVALID);
    must(topo_cache_set_watch_rv(c, TOPO_CACHE_NODES, "1", &err), &err);
}

/* --- slot binding, GC, data_version, durability --------------------------------------- */

/* The seal topo-webhook writes beside a placed pod's reservation and slot
 * (PodSet "ns/job/<job>"), as hex into out. */
static const char *seal_of(char out[TOPO_SHA256_HEX_LEN + 1], const char *ns, const char *podset,
                           const char *res, const char *slot, const char *role)
{
    topo_keyring ring = test_keyring(RECORD_KEY);
    topo_err err = TOPO_ERR_INIT;
    topo_cache_seal_fields f = {ns, podset, res, slot, role};
    must(topo_cache_seal(out, &ring, &f, &err), &err);
    return out;
}

/* A pod of Job `res` (PodSet "ns/job/<res>": the reservations binding is
 * tested with are that Job's) as topo-webhook placed it: reservation, slot
 * and their seal. */
static char *annotated_pod(char *buf, size_t size, const char *uid, const char *node,
                           const char *phase, const char *res, const char *slot)
{
    char podset[128], seal[TOPO_SHA256_HEX_LEN + 1];
    snprintf(podset, sizeof podset, "ns/job/%s", res);
    snprintf(buf, size,
             "{\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"p-%s\","
             "\"labels\":{\"batch.kubernetes.io/controller-uid\":\"%s\"},"
             "\"annotations\":{\"topology.topo.io/reservation\":\"%s\","
             "\"topology.topo.io/slot\":\"%s\",\"topology.topo.io/seal\":\"%s\"}},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":"
             "{\"requests\":{\"nvidia.com/gpu\":\"4\"}}}]},\"status\":{\"phase\":\"%s\"}}",
             uid, uid, res, res, slot, seal_of(seal, "ns", podset, res, slot, NULL), node, phase);
    return buf;
}

/* Who holds slot `slot` of reservation `id` ("" when free), copied into out. */
static const char *holder(topo_cache *c, const char *id, int32_t slot, char *out, size_t size)
{
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_get(&r, c, id, pool, &err), &err);
    assert_true((size_t)slot < r.nslots);
    snprintf(out, size, "%s", r.slots[slot].pod_uid ? r.slots[slot].pod_uid : "");
    topo_pool_free(pool);
    return out;
}

static void test_cache__slot_binding(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    char buf[2048], ev[2400], who[64];

    create_r1(c, "r1", "ns/job/r1", 100, 200, 0); /* slots 0, 1 on n1; 2 on n2 */
    assert_int_equal(claim(c, "r1", "claim:rank/0", 0, 110, NULL, NULL, pool), 0);
    assert_int_equal(claim(c, "r1", "claim:request/abc", 2, 110, NULL, NULL, pool), 0);

    /* upsert_pod: a slot held by a claimant becomes the pod's */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-0", "", "Pending", "r1", "0"), &err);
    assert_string_equal(holder(c, "r1", 0, who, sizeof(who)), "uid-0");
    /* the annotations are kept */
    topo_cache_pod pod;
    must(topo_cache_get_pod(&pod, c, "uid-0", pool, &err), &err);
    assert_string_equal(kv_get(pod.annotations, pod.nannotations, "topology.topo.io/reservation"),
                        "r1");
    assert_string_equal(kv_get(pod.annotations, pod.nannotations, "topology.topo.io/slot"), "0");
    /* again (MODIFIED, now bound): still its own */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-0", "n1", "Running", "r1", "0"), &err);
    assert_string_equal(holder(c, "r1", 0, who, sizeof(who)), "uid-0");

    /* apply_event: a free slot */
    snprintf(ev, sizeof(ev), "{\"type\":\"ADDED\",\"object\":%s}",
             annotated_pod(buf, sizeof(buf), "uid-1", "n1", "Running", "r1", "1"));
    must(topo_cache_apply_event(c, TOPO_CACHE_PODS, ev, strlen(ev), &err), &err);
    assert_string_equal(holder(c, "r1", 1, who, sizeof(who)), "uid-1");

    /* refused, without an error: another live pod's slot; the pod holds
     * another slot; malformed annotations; no such reservation or slot */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-x", "n1", "Running", "r1", "1"), &err);
    assert_string_equal(holder(c, "r1", 1, who, sizeof(who)), "uid-1");
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-0", "n1", "Running", "r1", "2"), &err);
    assert_string_equal(holder(c, "r1", 2, who, sizeof(who)), "claim:request/abc");
    assert_string_equal(holder(c, "r1", 0, who, sizeof(who)), "uid-0");
    static const char *const bad_slots[] = {"2x", "-1", "", " 2", "+2", "3", "99999999999", "0x2"};
    for (size_t i = 0; i < sizeof(bad_slots) / sizeof(bad_slots[0]); i++)
        UPSERT(topo_cache_upsert_pod, c,
               annotated_pod(buf, sizeof(buf), "uid-m", "", "Pending", "r1", bad_slots[i]), &err);
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-m", "", "Pending", "nope", "2"), &err);
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-m", "", "Pending", "", "2"), &err);
    assert_string_equal(holder(c, "r1", 2, who, sizeof(who)), "claim:request/abc");
    /* a finished pod binds nothing */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-t", "n2", "Succeeded", "r1", "2"), &err);
    assert_string_equal(holder(c, "r1", 2, who, sizeof(who)), "claim:request/abc");

    /* put_pod, through a watch event inside a batch too */
    char seal[TOPO_SHA256_HEX_LEN + 1];
    topo_kv job[] = {{"batch.kubernetes.io/controller-uid", "r1"}};
    topo_kv ann[] = {{"topology.topo.io/reservation", "r1"},
                     {"topology.topo.io/slot", "2"},
                     {TOPO_CACHE_SEAL_ANNOTATION, seal_of(seal, "ns", "ns/job/r1", "r1", "2", NULL)}};
    topo_cache_pod put = {"uid-2", "ns", "p2", "", "Pending", NULL, 0, job, 1, ann, 3, 0, "5", 0,
                          NULL, NULL, 0};
    must(topo_cache_begin(c, &err), &err);
    must(topo_cache_put_pod(c, &put, &err), &err);
    must(topo_cache_commit(c, &err), &err);
    assert_string_equal(holder(c, "r1", 2, who, sizeof(who)), "uid-2");

    /* a replacement takes the slot of a pod that finished */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-1", "n1", "Failed", "r1", "1"), &err);
    assert_string_equal(holder(c, "r1", 1, who, sizeof(who)), "uid-1");
    snprintf(buf, sizeof(buf),
             "{\"kind\":\"PodList\",\"items\":[%s]}",
             annotated_pod(ev, sizeof(ev), "uid-1b", "", "Pending", "r1", "1"));
    must(topo_cache_upsert_list(c, TOPO_CACHE_PODS, buf, strlen(buf), "list", NULL, &err), &err);
    assert_string_equal(holder(c, "r1", 1, who, sizeof(who)), "uid-1b");

    /* a bound slot is released like any claimed one */
    int deleted = 0;
    must(topo_cache_delete_pod(c, "uid-0", &deleted, &err), &err);
    assert_string_equal(holder(c, "r1", 0, who, sizeof(who)), "");
    /* and a free slot is taken by the next annotated pod */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-0b", "", "Pending", "r1", "0"), &err);
    assert_string_equal(holder(c, "r1", 0, who, sizeof(who)), "uid-0b");
    topo_pool_free(pool);
}

typedef struct reserved_sum {
    int32_t slots;
} reserved_sum;

static int sum_reserved(const topo_cache_reserved *r, void *payload)
{
    ((reserved_sum *)payload)->slots += r->count;
    return 0;
}

static int32_t charged_slots(topo_cache *c, int64_t now)
{
    reserved_sum s = {0};
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_foreach_reserved(c, now, sum_reserved, &s, &err), &err);
    return s.slots;
}

static void test_cache__claimant_slots_are_charged(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    char buf[2048];

    create_r1(c, "r1", "ns/job/r1", 100, 200, 0);
    assert_int_equal(charged_slots(c, 150), 3);
    /* a claimant is no pod the cache has: its slot stays charged */
    assert_int_equal(claim(c, "r1", "claim:rank/0", 0, 110, NULL, NULL, pool), 0);
    assert_int_equal(charged_slots(c, 150), 3);
    /* the pod arrives, unscheduled: still charged as the slot */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-0", "", "Pending", "r1", "0"), &err);
    assert_int_equal(charged_slots(c, 150), 3);
    /* bound to a node: charged as itself, no longer as the slot */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "uid-0", "n1", "Running", "r1", "0"), &err);
    assert_int_equal(charged_slots(c, 150), 2);
    topo_pool_free(pool);
}

/* A reservation of 3 slots for 600 s whose free slots lapse after ttl. */
static void create_ttl(topo_cache *c, const char *id, const char *key, int64_t created,
                       int64_t ttl, const topo_resource *req, size_t nreq)
{
    create_res(c, id, key, created, created + 600, ttl, req, nreq, 0);
}

typedef struct unclaimed_sum {
    char seen[256];
    int32_t slots;
} unclaimed_sum;

static int sum_unclaimed(const topo_cache_unclaimed *u, void *payload)
{
    unclaimed_sum *s = payload;
    size_t n = strlen(s->seen);
    snprintf(s->seen + n, sizeof(s->seen) - n, "%s%s/%s=%d", n ? " " : "", u->namespace_,
             u->reservation_id, (int)u->count);
    s->slots += u->count;
    return 0;
}

static int32_t unclaimed(topo_cache *c, int64_t now, char *seen, size_t size)
{
    unclaimed_sum s;
    topo_err err = TOPO_ERR_INIT;
    memset(&s, 0, sizeof(s));
    must(topo_cache_foreach_unclaimed(c, now, sum_unclaimed, &s, &err), &err);
    if (seen != NULL)
        snprintf(seen, size, "%s", s.seen);
    return s.slots;
}

/* Issue 9: a pod with podset-size 3511 held every node's capacity for the
 * reservation's whole TTL. Free slots now lapse unclaimed_ttl after the
 * reservation or its last claim; a PodSet that requests nothing holds
 * nothing; foreach_unclaimed reports what is held for pods not arrived. */
static void test_cache__unclaimed_slots_lapse(void **state)
{
    fx *f = *state;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    topo_resource gpu[] = {{GPU, 4}}, none[] = {{"cpu", 0}};
    char seen[256];

    create_ttl(c, "r1", "team-a/job/train", 100, 60, gpu, 1);
    create_ttl(c, "r2", "team-b/job/idle", 100, 60, none, 1);
    must(topo_cache_reservation_get(&r, c, "r1", pool, &err), &err);
    assert_int_equal(r.unclaimed_ttl, 60);
    assert_int_equal(r.claimed_at, 100);
    /* r2 asks for nothing: it holds nothing, yet places its pods */
    assert_int_equal(charged_slots(c, 120), 3);
    assert_int_equal(unclaimed(c, 120, seen, sizeof(seen)), 3);
    assert_string_equal(seen, "team-a/r1=3");
    assert_int_equal(claim(c, "r2", "uid-idle", -1, 120, NULL, NULL, pool), 0);

    /* a claim at 150 keeps the other free slots held until 210 */
    assert_int_equal(claim(c, "r1", "uid-0", -1, 150, NULL, NULL, pool), 0);
    must(topo_cache_reservation_get(&r, c, "r1", pool, &err), &err);
    assert_int_equal(r.claimed_at, 150);
    assert_int_equal(charged_slots(c, 200), 3);
    assert_int_equal(unclaimed(c, 200, NULL, 0), 2);
    /* past it: the free slots hold nothing and cannot be claimed; the
     * claimed one (its pod not bound yet) stays charged */
    assert_int_equal(charged_slots(c, 210), 1);
    assert_int_equal(unclaimed(c, 210, NULL, 0), 0);
    assert_int_equal(claim(c, "r1", "uid-1", -1, 210, NULL, NULL, pool), TOPO_ENOFIT);
    assert_int_equal(claim(c, "r1", "uid-1", 2, 210, NULL, NULL, pool), TOPO_ENOFIT);
    /* the pod that holds a slot gets it again */
    assert_int_equal(claim(c, "r1", "uid-0", -1, 300, NULL, NULL, pool), 0);

    /* unclaimed_ttl 0 (and reservations made before version 4): free
     * slots last as long as the reservation */
    create_ttl(c, "r3", "team-a/job/other", 100, 0, gpu, 1);
    assert_int_equal(unclaimed(c, 650, seen, sizeof(seen)), 3);
    assert_string_equal(seen, "team-a/r3=3");
    assert_int_equal(claim(c, "r3", "uid-3", -1, 650, NULL, NULL, pool), 0);

    /* a provisional claimant (the pod admitted but never seen: rejected by
     * a later admission step) holds its slot only as long as free ones */
    create_ttl(c, "r4", "team-c/job/rejected", 1000, 60, gpu, 1);
    assert_int_equal(claim(c, "r4", "claim:req-1", -1, 1000, NULL, NULL, pool), 0);
    assert_int_equal(charged_slots(c, 1059), 3);
    assert_int_equal(charged_slots(c, 1060), 0);
    topo_pool_free(pool);
}

static void create_at(topo_cache *c, const char *id, int64_t expires)
{
    char key[64];
    snprintf(key, sizeof(key), "ns/job/%s", id);
    create_r1(c, id, key, 100, expires, 0);
}

static int has_reservation(topo_cache *c, const char *id)
{
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r;
    int rc = topo_cache_reservation_get(&r, c, id, pool, NULL);
    topo_pool_free(pool);
    return rc == 0;
}

static void test_cache__reservation_gc(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    char buf[2048];
    size_t n = 99;

    create_at(c, "run", 200);     /* a pod of it runs */
    create_at(c, "pend", 200);    /* a pod of it is pending */
    create_at(c, "done", 200);    /* a claimant and a finished pod */
    create_at(c, "ghost", 200);   /* a pod the cache does not have */
    create_at(c, "later", 500);   /* not expired */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "p-run", "n1", "Running", "run", "0"), &err);
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "p-pend", "", "Pending", "pend", "2"), &err);
    assert_int_equal(claim(c, "done", "claim:rank/0", 0, 110, NULL, NULL, pool), 0);
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "p-done", "n1", "Running", "done", "1"), &err);
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "p-done", "n1", "Succeeded", "done", "1"), &err);
    assert_int_equal(claim(c, "ghost", "never-seen", 1, 110, NULL, NULL, pool), 0);

    must(topo_cache_reservation_gc(c, 199, &n, &err), &err);
    assert_int_equal(n, 0);
    assert_int_equal(count_of(c, "reservations"), 5);
    must(topo_cache_reservation_gc(c, 200, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_true(has_reservation(c, "run"));
    assert_true(has_reservation(c, "pend"));
    assert_true(has_reservation(c, "later"));
    assert_false(has_reservation(c, "done"));
    assert_false(has_reservation(c, "ghost"));

    /* the running pod finishes, the pending one is deleted: both go */
    UPSERT(topo_cache_upsert_pod, c,
           annotated_pod(buf, sizeof(buf), "p-run", "n1", "Succeeded", "run", "0"), &err);
    int deleted = 0;
    must(topo_cache_delete_pod(c, "p-pend", &deleted, &err), &err);
    must(topo_cache_reservation_gc(c, 300, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_int_equal(count_of(c, "reservations"), 1);
    assert_true(has_reservation(c, "later"));
    assert_int_equal(count_of(c, "slots"), 3); /* the others' slots went with them */
    must(topo_cache_reservation_gc(c, 600, NULL, &err), &err);
    assert_int_equal(count_of(c, "reservations"), 0);
    topo_pool_free(pool);
}

static void test_cache__data_version(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    topo_cache *other = NULL;
    int64_t v0 = 0, v1 = 0, w0 = 0, w1 = 0;
    char buf[1024];

    must(topo_cache_open(&other, f->tmp.path, NULL, &err), &err);
    must(topo_cache_data_version(c, &v0, &err), &err);
    must(topo_cache_data_version(other, &w0, &err), &err);
    /* its own writes do not change it */
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof(buf), "a", "n1", "Running", 1), &err);
    must(topo_cache_data_version(c, &v1, &err), &err);
    assert_true(v1 == v0);
    /* another connection's commit does */
    must(topo_cache_data_version(other, &w1, &err), &err);
    assert_true(w1 != w0);
    UPSERT(topo_cache_upsert_pod, other, pod_json(buf, sizeof(buf), "b", "n1", "Running", 1),
           &err);
    must(topo_cache_data_version(c, &v1, &err), &err);
    assert_true(v1 != v0);
    /* and stays put while nothing else happens */
    must(topo_cache_data_version(c, &v0, &err), &err);
    assert_true(v0 == v1);
    create_r1(other, "r1", "ns/x", 100, 200, 0);
    must(topo_cache_data_version(c, &v1, &err), &err);
    assert_true(v1 != v0);
    topo_cache_close(other);
    assert_int_equal(topo_cache_data_version(NULL, &v0, &err), TOPO_EINVALID);
}

/* Every fsync/fdatasync of this process is counted (and skipped): SQLite
 * syncs the WAL at each commit under synchronous=FULL, not under NORMAL
 * (only at checkpoints). */
static long syncs;

int fsync(int fd);
int fdatasync(int fd);
int fsync(int fd)
{
    (void)fd;
    syncs++;
    return 0;
}
int fdatasync(int fd)
{
    (void)fd;
    syncs++;
    return 0;
}

static long claims_syncs(fx *f, const topo_cache_opts *opts, int durable_batch)
{
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = NULL;
    char pod[32];
    topo_test_remove_db(f->tmp.path);
    must(topo_cache_open(&c, f->tmp.path, opts, &err), &err);
    must(topo_cache_data_version(c, &(int64_t){0}, &err), &err);
    long before = syncs;
    for (int i = 0; i < 8; i++) {
        char id[16], key[16];
        snprintf(id, sizeof(id), "r%d", i);
        snprintf(key, sizeof(key), "ns/%d", i);
        if (durable_batch)
            must(topo_cache_begin_durable(c, &err), &err);
        create_r1(c, id, key, 100, 200, 0);
        snprintf(pod, sizeof(pod), "claim:rank/%d", i);
        assert_int_equal(claim(c, id, pod, 0, 110, NULL, NULL, pool), 0);
        if (durable_batch)
            must(topo_cache_commit(c, &err), &err);
    }
    long n = syncs - before;
    topo_cache_close(c);
    topo_pool_free(pool);
    return n;
}

static void test_cache__reservation_sync_option(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_cache_opts opts = {0};

    /* default NORMAL: 16 reservation commits, (almost) no syncs */
    long normal = claims_syncs(f, NULL, 0);
    opts.reservation_sync_full = 1;
    long full = claims_syncs(f, &opts, 0);
    long durable = claims_syncs(f, NULL, 1);
    print_message("syncs: normal %ld, full %ld, begin_durable %ld\n", normal, full, durable);
    assert_true(full >= 16);
    assert_true(normal < 4);
    assert_true(durable >= 8); /* begin_durable still commits with FULL */

    /* bad values refused */
    opts.reservation_sync_full = 2;
    assert_int_equal(topo_cache_open(&c, f->tmp.path, &opts, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "reservation_sync_full"));
}

/* Writes n one-row transactions (each appends WAL frames) and returns the
 * WAL's size in pages as a checkpoint from a second connection sees it. */
static int wal_pages_after(fx *f, int manual, int n)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL, *ck = NULL;
    topo_cache_opts opts = {.manual_checkpoint = manual};
    topo_resource alloc[1] = {{"cpu", 1000}};
    char name[32];
    int pages = -1;
    remove(f->tmp.path);
    must(topo_cache_open(&c, f->tmp.path, &opts, &err), &err);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "node-%05d", i);
        topo_node_spec spec = {name, NULL, 0, alloc, 1, NULL, 0, 0, 1, 0};
        must(topo_cache_put_node(c, &spec, NULL, &err), &err);
    }
    opts.manual_checkpoint = 1;
    must(topo_cache_open(&ck, f->tmp.path, &opts, &err), &err);
    must(topo_cache_checkpoint(ck, &pages, &err), &err);
    topo_cache_close(ck);
    topo_cache_close(c);
    return pages;
}

/* manual_checkpoint: the writer's commits never checkpoint (the WAL keeps
 * every frame until topo_cache_checkpoint); by default SQLite checkpoints
 * at 1000 pages and the WAL starts over. */
static void test_cache__manual_checkpoint(void **state)
{
    fx *f = *state;
    int manual = wal_pages_after(f, 1, 1500);
    int automatic = wal_pages_after(f, 0, 1500);
    print_message("WAL pages after 1500 commits: manual %d, automatic %d\n", manual, automatic);
    assert_true(manual >= 1500);
    assert_true(automatic < 1100);
    /* in memory: a no-op */
    topo_err err = TOPO_ERR_INIT;
    topo_cache *m = NULL;
    int pages = -1;
    must(topo_cache_open(&m, ":memory:", NULL, &err), &err);
    must(topo_cache_checkpoint(m, &pages, &err), &err);
    assert_int_equal(pages, 0);
    topo_cache_close(m);
}

static int names_of(const topo_cache_pod *p, void *payload)
{
    char *out = payload;
    strcat(out, p->name);
    strcat(out, " ");
    return 0;
}

static int podset_row(const topo_cache_gated_podset *ps, void *payload)
{
    char *out = payload;
    char line[96];
    snprintf(line, sizeof line, "%s:%zu:%lld:%s%s ", ps->key ? ps->key : "-", ps->npods,
             (long long)ps->created_at, ps->key ? "" : ps->oldest->uid,
             ps->reserved ? ":reserved" : "");
    strcat(out, line);
    return 0;
}

/* The ungater's reads: gated PodSets, then one's pods oldest first. */
static void test_cache__gated_podsets(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
#define WAIT {"topology.topo.io/wait-reason", "no rack has room"}
    topo_kv a[] = {WAIT, {"topology.topo.io/podset", "ns/a"}};
    topo_kv b[] = {WAIT, {"topology.topo.io/podset", "ns/b"}};
    topo_kv b_ungated[] = {{"topology.topo.io/podset", "ns/b"}};
    topo_kv alone[] = {WAIT};
#undef WAIT
    const struct {
        const char *uid, *name, *node, *phase;
        topo_kv *ann;
        size_t nann;
        int64_t created;
    } pods[] = {
        {"u-1", "a-1", "", "Pending", a, 2, 100},
        {"u-2", "a-2", "", "Pending", a, 2, 50},
        {"u-3", "a-0", "", "", a, 2, 50},
        {"u-4", "a-3", "n1", "Running", a, 2, 10},       /* bound */
        {"u-5", "solo", "", "Pending", alone, 1, 70},    /* a PodSet of its own */
        {"u-6", "b-1", "", "Pending", b_ungated, 1, 5},  /* not gated */
        {"u-7", "b-2", "", "Failed", b, 2, 5},           /* finished */
    };
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        topo_cache_pod p = {pods[i].uid, "ns", pods[i].name, pods[i].node, pods[i].phase,
                            NULL, 0, NULL, 0, pods[i].ann, pods[i].nann, 0, "1", pods[i].created,
                            NULL, NULL, 0};
        must(topo_cache_put_pod(c, &p, &err), &err);
    }
    char out[256] = "";
    must(topo_cache_foreach_gated_podset(c, podset_row, out, &err), &err);
    assert_string_equal(out, "ns/a:3:50: -:1:70:u-5 ");
    out[0] = '\0';
    must(topo_cache_foreach_gated_pod(c, "ns/a", NULL, names_of, out, &err), &err);
    assert_string_equal(out, "a-0 a-2 a-1 ");
    out[0] = '\0';
    must(topo_cache_foreach_gated_pod(c, NULL, "u-5", names_of, out, &err), &err);
    assert_string_equal(out, "solo ");
    out[0] = '\0';
    must(topo_cache_foreach_gated_pod(c, "ns/b", NULL, names_of, out, &err), &err);
    assert_string_equal(out, "");
    /* u-2 is bound now: it leaves its PodSet's count */
    topo_cache_pod bound = {"u-2", "ns", "a-2", "n1", "Running", NULL, 0, NULL,
                            0,     a,    2,     0,    "2",       50,  NULL, NULL, 0};
    must(topo_cache_put_pod(c, &bound, &err), &err);
    out[0] = '\0';
    must(topo_cache_foreach_gated_podset(c, podset_row, out, &err), &err);
    assert_string_equal(out, "ns/a:2:50: -:1:70:u-5 ");
    /* a reservation of PodSet ns/a (its pods claim slots: the ungater
     * evaluates it whatever else says) */
    const char *values[] = {"n1"};
    topo_assign_domain dom = {values, 2};
    const char *levels[] = {"kubernetes.io/hostname"};
    topo_assignment as = {levels, 1, &dom, 1};
    topo_cache_reservation_spec rs = {0};
    rs.id = "r-a";
    rs.podset_key = "ns/a";
    rs.topology_name = "t";
    rs.levels = levels;
    rs.nlevels = 1;
    rs.assignment = &as;
    rs.created_at = 1;
    rs.expires_at = 1000;
    must(topo_cache_reservation_create(c, &rs, &err), &err);
    out[0] = '\0';
    must(topo_cache_foreach_gated_podset(c, podset_row, out, &err), &err);
    assert_string_equal(out, "ns/a:2:50::reserved -:1:70:u-5 ");
}

/* --- failed nodes (issue 28): schema 7, Ready missing, terminating pods ------------------ */

/* The released steps 0..5 (a file as schema 6 left it). */
extern const char *const cache_migrations[];

static void test_cache__migrate_from_v6(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_node_spec n;
    topo_cache_pod p;
    topo_cache_reservation r;

    for (int i = 0; i < 6; i++)
        topo_test_db_exec(f->tmp.path, cache_migrations[i]);
    topo_test_db_exec(f->tmp.path,
            "INSERT INTO meta VALUES('schema_version', '6');"
            "INSERT INTO nodes(name, labels, allocatable, taints, unschedulable, ready, "
            "  resource_version) VALUES('n9.example.com', '{\"kubernetes.io/hostname\":\"n9\"}',"
            "  '{\"nvidia.com/gpu\":8}', '[]', 0, 1, '41');"
            "INSERT INTO pods(uid, namespace, name, node_name, phase, requests, podset, "
            "  is_topology_assigned, resource_version, created_at) VALUES('u-6', 'ns', 'p6', "
            "  'n9.example.com', 'Running', '{}', '{\"labels\":{},\"annotations\":{}}', 1, '3',"
            "  77);"
            "INSERT INTO reservations(id, podset_key, topology_name, levels, requests, assignment, "
            "  created_at, expires_at) VALUES('r6', 'ns/p', 'default', "
            "  '[\"kubernetes.io/hostname\"]', '{}', "
            "  '{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"n9\"],"
            "\"count\":2}]}', 10, 100);"
            "INSERT INTO reservation_slots VALUES('r6', 0, '[\"n9\"]', 'u-6');"
            "INSERT INTO reservation_slots VALUES('r6', 1, '[\"n9\"]', NULL);");
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), 7);
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT value FROM meta WHERE key = 'schema_version'"), 7);
    /* The rows keep their data; the new columns read as their defaults. */
    must(topo_cache_get_node(&n, c, "n9.example.com", pool, &err), &err);
    assert_true(n.ready);
    assert_false(n.ready_missing);
    assert_int_equal(amount(n.allocatable, n.nallocatable, GPU), 8);
    must(topo_cache_get_pod(&p, c, "u-6", pool, &err), &err);
    assert_string_equal(p.node_name, "n9.example.com");
    assert_int_equal(p.created_at, 77);
    assert_false(p.terminating);
    must(topo_cache_reservation_get(&r, c, "r6", pool, &err), &err);
    assert_int_equal(r.gen_term, 0);
    assert_int_equal(r.gen_seq, 0);
    assert_int_equal(r.nslots, 2);
    assert_string_equal(r.slots[0].pod_uid, "u-6");
    assert_int_equal(topo_test_db_int(f->tmp.path,
                                      "SELECT count(*) FROM reservations WHERE gen_term = 0 AND "
                                      "gen_seq = 0"),
                     1);
    topo_pool_free(pool);
}

static int node_row(const topo_node_spec *n, const char *rv, void *payload)
{
    char *out = payload;
    (void)rv;
    snprintf(out + strlen(out), 256 - strlen(out), "%s:%d%d ", n->name, n->ready,
             n->ready_missing);
    return 0;
}

static int pod_row(const topo_cache_pod *p, void *payload)
{
    char *out = payload;
    snprintf(out + strlen(out), 256 - strlen(out), "%s:%d ", p->uid, p->terminating);
    return 0;
}

static int gated_row(const topo_cache_gated_podset *ps, void *payload)
{
    return pod_row(ps->oldest, payload);
}

/* A node without any Ready condition is told from a NotReady one; every
 * reader gives it back, and a node written as a struct keeps it. */
static void test_cache__node_ready_missing(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_node_spec n;
    char out[256] = "";

    UPSERT(topo_cache_upsert_node, c, NODE_A, &err); /* Ready True */
    UPSERT(topo_cache_upsert_node, c,
           "{\"metadata\":{\"name\":\"n2\"},\"status\":{\"conditions\":[{\"type\":\"Ready\","
           "\"status\":\"False\"}]}}",
           &err);
    UPSERT(topo_cache_upsert_node, c,
           "{\"metadata\":{\"name\":\"n3\"},\"status\":{\"conditions\":[{\"type\":"
           "\"MemoryPressure\",\"status\":\"False\"}]}}",
           &err);
    UPSERT(topo_cache_upsert_node, c, "{\"metadata\":{\"name\":\"n4\"}}", &err);
    must(topo_cache_get_node(&n, c, "n3", pool, &err), &err);
    assert_false(n.ready);
    assert_true(n.ready_missing);
    must(topo_cache_get_node(&n, c, "n2", pool, &err), &err);
    assert_false(n.ready);
    assert_false(n.ready_missing);
    must(topo_cache_foreach_node(c, node_row, out, &err), &err);
    assert_string_equal(out, "n1:10 n2:00 n3:01 n4:01 ");

    /* A Ready condition comes: the flag goes. */
    UPSERT(topo_cache_upsert_node, c,
           "{\"metadata\":{\"name\":\"n3\"},\"status\":{\"conditions\":[{\"type\":\"Ready\","
           "\"status\":\"Unknown\"}]}}",
           &err);
    must(topo_cache_get_node(&n, c, "n3", pool, &err), &err);
    assert_false(n.ready_missing);

    /* From a struct (fixtures). */
    topo_node_spec s = {0};
    s.name = "n5";
    s.ready_missing = 1;
    must(topo_cache_put_node(c, &s, NULL, &err), &err);
    must(topo_cache_get_node(&n, c, "n5", pool, &err), &err);
    assert_true(n.ready_missing);
    assert_false(n.ready);
    topo_pool_free(pool);
}

static const char POD_TERMINATING[] =
    "{\"metadata\":{\"uid\":\"u-t\",\"namespace\":\"ns\",\"name\":\"t\","
    "\"creationTimestamp\":\"2024-05-01T12:00:00Z\","
    "\"deletionTimestamp\":\"2024-05-01T12:30:00.5+02:00\"},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":"
    "{\"requests\":{\"nvidia.com/gpu\":\"4\"}}}]},\"status\":{\"phase\":\"Running\"}}";

/* metadata.deletionTimestamp: the pod is terminating, in every reader; a
 * bad one is refused naming the field and the stored row stays; the
 * snapshot charges a terminating pod as its phase says. */
static void test_cache__pod_terminating(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache *c = open_cache(f);
    topo_cache_pod p;
    char out[256] = "", buf[1024];

    UPSERT(topo_cache_upsert_node, c,
           "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"topology.topo.io/datacenter\":\"dc\","
           "\"topology.topo.io/spine\":\"s\",\"topology.topo.io/leaf\":\"l\","
           "\"topology.topo.io/rack\":\"r\",\"kubernetes.io/hostname\":\"n1\"}},"
           "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":8,\"pods\":110},"
           "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
           &err);
    UPSERT(topo_cache_upsert_pod, c, POD_TERMINATING, &err);
    UPSERT(topo_cache_upsert_pod, c, pod_json(buf, sizeof buf, "u-r", "n1", "Running", 2), &err);
    must(topo_cache_get_pod(&p, c, "u-t", pool, &err), &err);
    assert_true(p.terminating);
    assert_string_equal(p.phase, "Running");
    must(topo_cache_get_pod(&p, c, "u-r", pool, &err), &err);
    assert_false(p.terminating);
    must(topo_cache_foreach_pod(c, pod_row, out, &err), &err);
    assert_string_equal(out, "u-r:0 u-t:1 ");

    /* Still charged as a running pod: 8 - 4 - 2. */
    topo_cache_snapshot_opts so = {0};
    topo_snapshot *snap = NULL;
    so.snapshot.topology_name = "default";
    so.snapshot.levels = LEVELS5;
    so.snapshot.nlevels = 5;
    must(topo_cache_snapshot(&snap, c, &so, NULL, &err), &err);
    assert_int_equal(free_of(snap, "n1"), 2);
    topo_snapshot_free(snap);

    /* A bad time: refused, naming the field; the row stays as it was. */
    const char *bad =
        "{\"metadata\":{\"uid\":\"u-t\",\"namespace\":\"ns\",\"name\":\"t\","
        "\"deletionTimestamp\":\"yesterday\"},\"status\":{\"phase\":\"Failed\"}}";
    assert_int_equal(topo_cache_upsert_pod(c, bad, strlen(bad), &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "metadata.deletionTimestamp"));
    const char *bad_type = "{\"metadata\":{\"uid\":\"u-t\",\"deletionTimestamp\":5}}";
    assert_int_equal(topo_cache_upsert_pod(c, bad_type, strlen(bad_type), &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "metadata.deletionTimestamp"));
    must(topo_cache_get_pod(&p, c, "u-t", pool, &err), &err);
    assert_true(p.terminating);
    assert_string_equal(p.phase, "Running");

    /* null is no deletion; the flag goes with it. */
    UPSERT(topo_cache_upsert_pod, c,
           "{\"metadata\":{\"uid\":\"u-t\",\"namespace\":\"ns\",\"name\":\"t\","
           "\"deletionTimestamp\":null},\"status\":{\"phase\":\"Running\"}}",
           &err);
    must(topo_cache_get_pod(&p, c, "u-t", pool, &err), &err);
    assert_false(p.terminating);

    /* The gated-pod readers, and a pod written as a struct. */
    topo_kv ann[] = {{"topology.topo.io/wait-reason", "no room"},
                     {"topology.topo.io/podset", "ns/a"}};
    topo_cache_pod g = {"u-g", "ns", "g", "", "Pending", NULL, 0, NULL, 0, ann, 2, 0, "1", 5,
                        NULL, NULL, 1};
    must(topo_cache_put_pod(c, &g, &err), &err);
    out[0] = '\0';
    must(topo_cache_foreach_gated_podset(c, gated_row, out, &err), &err);
    assert_string_equal(out, "u-g:1 ");
    out[0] = '\0';
    must(topo_cache_foreach_gated_pod(c, "ns/a", NULL, pod_row, out, &err), &err);
    assert_string_equal(out, "u-g:1 ");
    out[0] = '\0';
    must(topo_cache_foreach_gated_pod(c, NULL, "u-g", pod_row, out, &err), &err);
    assert_string_equal(out, "u-g:1 ");
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cache__schema_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__manual_checkpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__migrate_from_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__migrate_from_v0, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__migrate_from_v6, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__node_ready_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__pod_terminating, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__refuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__node_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__pod_and_job_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__gated_podsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__reservation_created_claimed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__reservations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__group_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__snapshot_equals_inventory_kubectl, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache__snapshot_equals_inventory_fixture, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache__snapshot_charges_reservations, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache__batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__slot_binding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__claimant_slots_are_charged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__unclaimed_slots_lapse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__reservation_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__data_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache__reservation_sync_option, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
