/* topo-sync's last good facts per source in the cache (topo/cache_facts.h):
 * put and get with the hash and the changed flag, surviving a reopen;
 * failures recorded without touching the document; bad input refused with
 * the store unchanged; a write that fails half-way (a trigger injected into
 * the file) changes nothing, in a batch or not; damaged rows reported and
 * left alone; the listing with ages; the upgrade of a schema 4 file as
 * released, its rows kept. Files live in a fresh directory under $TMPDIR. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "topo/cache.h"
#include "topo/cache_facts.h"
#include "topo/sha256.h"
#include "support/dbfiles.h"

/* --- helpers ------------------------------------------------------------------------- */

typedef struct fx {
    topo_test_cachedir tmp;
    topo_cache *cache;
    topo_pool *pool;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (f == NULL || (f->pool = topo_pool_create()) == NULL)
        return -1;
    if (topo_test_cachedir_make(&f->tmp, "facts-test") < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_cache_close(f->cache);
    topo_test_cachedir_remove(&f->tmp);
    topo_pool_free(f->pool);
    free(f);
    return 0;
}

static topo_cache *open_cache(fx *f)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache_close(f->cache);
    f->cache = NULL;
    if (topo_cache_open(&f->cache, f->tmp.path, NULL, &err) < 0)
        fail_msg("open: %s", err.text);
    return f->cache;
}

static void must(int rc, const topo_err *err)
{
    if (rc < 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

static int put(topo_cache *c, const char *source, const char *doc, int64_t at, topo_err *err)
{
    int changed = -1;
    int rc = topo_cache_facts_put(c, source, doc, strlen(doc), at, &changed, err);
    return rc < 0 ? rc : changed;
}

/* The stored document of source must be doc, fetched at at. */
static topo_cache_facts expect_doc(fx *f, const char *source, const char *doc, int64_t at)
{
    topo_cache_facts got;
    topo_err err = TOPO_ERR_INIT;
    char hash[TOPO_SHA256_HEX_LEN + 1];
    must(topo_cache_facts_get(&got, f->cache, source, f->pool, &err), &err);
    assert_string_equal(got.source, source);
    assert_string_equal(got.document, doc);
    assert_int_equal(got.document_len, strlen(doc));
    assert_int_equal(topo_sha256_hex(hash, doc, strlen(doc)), 0);
    assert_string_equal(got.hash, hash);
    assert_int_equal(got.fetched_at_ms, at);
    return got;
}

static const char DOC_A[] = "{\"cables\":[],\"hosts\":[{\"name\":\"h1\"}],\"source\":\"ufm\","
                            "\"switches\":[],\"version\":1}";
static const char DOC_B[] = "{\"cables\":[],\"hosts\":[{\"name\":\"h2\"}],\"source\":\"ufm\","
                            "\"switches\":[],\"version\":1}";

/* --- put, get, fail --------------------------------------------------------------------- */

static void test_cache_facts__put_get(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);

    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    topo_cache_facts got = expect_doc(f, "ufm", DOC_A, 1000);
    assert_null(got.error);
    assert_int_equal(got.failures, 0);
    /* The same bytes again: not a change, but a newer fetch. */
    assert_int_equal(put(c, "ufm", DOC_A, 2000, &err), 0);
    expect_doc(f, "ufm", DOC_A, 2000);
    assert_int_equal(put(c, "ufm", DOC_B, 3000, &err), 1);
    /* Another source is its own row. */
    assert_int_equal(put(c, "netbox", DOC_A, 3500, &err), 1);
    /* What was committed survives the connection. */
    c = open_cache(f);
    expect_doc(f, "ufm", DOC_B, 3000);
    expect_doc(f, "netbox", DOC_A, 3500);
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT count(*) FROM source_facts"), 2);
    /* changed may be NULL. */
    must(topo_cache_facts_put(c, "gpu", DOC_A, strlen(DOC_A), 1, NULL, &err), &err);
}

static void test_cache_facts__not_found(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache_facts got;
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_facts_get(&got, c, "ufm", f->pool, &err), TOPO_ENOTFOUND);
    assert_string_equal(err.text, "cache: no facts of ufm");
    /* A source that has only failed has no facts either. */
    must(topo_cache_facts_fail(c, "ufm", "connect: refused", 10, &err), &err);
    must(topo_cache_facts_fail(c, "ufm", "connect: refused", 20, &err), &err);
    assert_int_equal(topo_cache_facts_get(&got, c, "ufm", f->pool, &err), TOPO_ENOTFOUND);
    assert_string_equal(err.text,
                        "cache: no facts of ufm: no fetch of it succeeded yet (2 failed)");
    assert_null(got.document);
}

static void test_cache_facts__fail_keeps_facts(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    char long_msg[TOPO_MAX_FACTS_ERROR + 8];

    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    must(topo_cache_facts_fail(c, "ufm", "GET /ufmRest/resources/systems: 503", 2000, &err), &err);
    must(topo_cache_facts_fail(c, "ufm", "timed out after 30 s", 3000, &err), &err);
    must(topo_cache_facts_fail(c, "ufm", NULL, 4000, &err), &err);
    topo_cache_facts got = expect_doc(f, "ufm", DOC_A, 1000);
    assert_string_equal(got.error, "unknown error");
    assert_int_equal(got.error_at_ms, 4000);
    assert_int_equal(got.failures, 3);

    /* A good fetch clears the count; the last failure stays on record. */
    assert_int_equal(put(c, "ufm", DOC_A, 5000, &err), 0);
    got = expect_doc(f, "ufm", DOC_A, 5000);
    assert_int_equal(got.failures, 0);
    assert_string_equal(got.error, "unknown error");
    assert_int_equal(got.error_at_ms, 4000);

    /* A long message is cut before the character it would split. */
    memset(long_msg, 'a', TOPO_MAX_FACTS_ERROR - 1);
    memcpy(long_msg + TOPO_MAX_FACTS_ERROR - 1, "\xc3\xa9xyz", 6);
    must(topo_cache_facts_fail(c, "ufm", long_msg, 6000, &err), &err);
    got = expect_doc(f, "ufm", DOC_A, 5000);
    assert_int_equal(strlen(got.error), TOPO_MAX_FACTS_ERROR - 1);
    assert_int_equal(got.failures, 1);
}

/* --- bad input and failures half-way ---------------------------------------------------- */

static void expect_unchanged(fx *f)
{
    topo_cache_facts got = expect_doc(f, "ufm", DOC_A, 1000);
    assert_int_equal(got.failures, 0);
    assert_null(got.error);
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT count(*) FROM source_facts"), 1);
}

static void test_cache_facts__bad_input(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    char name[TOPO_MAX_FACTS_SOURCE_NAME + 2];
    static const char with_nul[] = "{\"a\":1}\0{}";
    const struct {
        const char *source;
        const char *doc;
        size_t len;
        int64_t at;
        int code;
        const char *message;
    } bad[] = {
        {NULL, DOC_B, sizeof(DOC_B) - 1, 1, TOPO_EINVALID, "cache: facts: empty source name"},
        {"", DOC_B, sizeof(DOC_B) - 1, 1, TOPO_EINVALID, "cache: facts: empty source name"},
        {"ufm", NULL, 10, 1, TOPO_EINVALID, "cache: facts of ufm: empty document"},
        {"ufm", DOC_B, 0, 1, TOPO_EINVALID, "cache: facts of ufm: empty document"},
        {"ufm", with_nul, sizeof(with_nul) - 1, 1, TOPO_EINVALID,
         "cache: facts of ufm: a NUL byte in the document"},
        {"ufm", DOC_B, TOPO_MAX_FACTS_DOCUMENT + 1u, 1, TOPO_ELIMIT,
         "cache: facts of ufm: a document of 268435457 bytes (at most 268435456)"},
        {"ufm", DOC_B, sizeof(DOC_B) - 1, -1, TOPO_EINVALID,
         "cache: facts of ufm: fetched_at_ms is negative"},
        {name, DOC_B, sizeof(DOC_B) - 1, 1, TOPO_ELIMIT,
         "cache: facts: a source name of 257 bytes (at most 256)"},
    };

    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        topo_err e = TOPO_ERR_INIT;
        int changed = -1;
        int rc = topo_cache_facts_put(c, bad[i].source, bad[i].doc, bad[i].len, bad[i].at,
                                      &changed, &e);
        if (rc != bad[i].code || strcmp(e.text, bad[i].message) != 0)
            fail_msg("case %zu: got %s: %s; want %s: %s", i, topo_err_name(rc), e.text,
                     topo_err_name(bad[i].code), bad[i].message);
        assert_int_equal(changed, 0);
        expect_unchanged(f);
    }
    assert_int_equal(topo_cache_facts_fail(c, "", "x", 1, &err), TOPO_EINVALID);
    assert_int_equal(topo_cache_facts_fail(c, name, "x", 1, &err), TOPO_ELIMIT);
    assert_int_equal(topo_cache_facts_fail(NULL, "ufm", "x", 1, &err), TOPO_EINVALID);
    assert_int_equal(topo_cache_facts_put(NULL, "ufm", DOC_B, 3, 1, NULL, &err), TOPO_EINVALID);
    topo_cache_facts got;
    assert_int_equal(topo_cache_facts_get(&got, c, "ufm", NULL, &err), TOPO_EINVALID);
    expect_unchanged(f);
}

/* A write that fails after its transaction began — here a trigger added to
 * the file raises in the middle of the statement, as a full disk or an I/O
 * error would — leaves the document, the failure count and every other
 * write of an open batch as they were. */
static void test_cache_facts__failure_half_way(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    static const char doc_c[] = "{\"injected\":1}";

    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    topo_test_db_exec(f->tmp.path, "CREATE TRIGGER inject_update BEFORE UPDATE ON source_facts "
                     "WHEN NEW.document = '{\"injected\":1}' BEGIN SELECT RAISE(ABORT, 'injected "
                     "failure'); END;"
                     "CREATE TRIGGER inject_insert BEFORE INSERT ON source_facts "
                     "WHEN NEW.document = '{\"injected\":1}' BEGIN SELECT RAISE(ABORT, 'injected "
                     "failure'); END;");
    /* Alone: its own transaction rolls back. */
    assert_true(put(c, "ufm", doc_c, 9000, &err) < 0);
    assert_non_null(strstr(err.text, "injected failure"));
    expect_unchanged(f);
    /* A source seen for the first time gets no row. */
    assert_true(put(c, "netbox", doc_c, 9000, &err) < 0);
    expect_unchanged(f);

    /* In a batch: the failed put rolls back to its savepoint, the batch
     * stays open with the writes before it, and commits them. */
    must(topo_cache_begin(c, &err), &err);
    must(topo_cache_facts_fail(c, "gpu", "no nodes", 9500, &err), &err);
    assert_true(put(c, "ufm", doc_c, 9600, &err) < 0);
    assert_true(topo_cache_in_batch(c));
    must(topo_cache_commit(c, &err), &err);
    expect_doc(f, "ufm", DOC_A, 1000);
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT failures FROM source_facts WHERE source = 'gpu'"), 1);
    /* A batch rolled back takes a good put with it. */
    must(topo_cache_begin(c, &err), &err);
    assert_int_equal(put(c, "ufm", DOC_B, 9700, &err), 1);
    must(topo_cache_rollback(c, &err), &err);
    expect_doc(f, "ufm", DOC_A, 1000);
    /* Once the cause is gone, the same put works. */
    topo_test_db_exec(f->tmp.path, "DROP TRIGGER inject_update; DROP TRIGGER inject_insert;");
    assert_int_equal(put(c, "ufm", doc_c, 9800, &err), 1);
    expect_doc(f, "ufm", doc_c, 9800);
}

/* A row damaged outside topo (a disk, a hand edit) is reported, not used,
 * and left for an operator to look at; the next good put replaces it. */
static void test_cache_facts__damaged_row(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache_facts got;
    topo_cache *c = open_cache(f);

    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    topo_test_db_exec(f->tmp.path,
                      "UPDATE source_facts SET document = replace(document, 'h1', 'h9')");
    assert_int_equal(topo_cache_facts_get(&got, c, "ufm", f->pool, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "cache: damaged row: facts of ufm: the document does not match "
                                  "its hash");
    assert_null(got.document);
    topo_test_db_exec(f->tmp.path, "UPDATE source_facts SET size = 5");
    assert_int_equal(topo_cache_facts_get(&got, c, "ufm", f->pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "bytes, stored as 5"));
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT count(*) FROM source_facts WHERE size = 5"), 1);
    /* The schema refuses half a row. */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->tmp.path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE source_facts SET hash = NULL", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    sqlite3_close(db);
    assert_int_equal(put(c, "ufm", DOC_B, 2000, &err), 1);
    expect_doc(f, "ufm", DOC_B, 2000);
}

/* --- listing, deleting ------------------------------------------------------------------ */

typedef struct listed {
    topo_cache_facts_status s[8];
    char names[8][32];
    char errors[8][64];
    size_t n;
    int stop_after;
} listed;

static int collect(const topo_cache_facts_status *s, void *payload)
{
    listed *l = payload;
    assert_true(l->n < 8);
    l->s[l->n] = *s;
    snprintf(l->names[l->n], sizeof(l->names[0]), "%s", s->source);
    l->s[l->n].source = l->names[l->n];
    if (s->error != NULL) {
        snprintf(l->errors[l->n], sizeof(l->errors[0]), "%s", s->error);
        l->s[l->n].error = l->errors[l->n];
    }
    l->s[l->n].hash = NULL; /* borrowed: checked in the callback */
    if (s->has_facts) {
        assert_non_null(s->hash);
        assert_int_equal(strlen(s->hash), TOPO_SHA256_HEX_LEN);
    } else {
        assert_null(s->hash);
    }
    l->n++;
    return l->stop_after > 0 && (int)l->n == l->stop_after ? 42 : 0;
}

static void test_cache_facts__list_ages(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = open_cache(f);
    listed l = {0};

    must(topo_cache_facts_list(c, 0, collect, &l, &err), &err);
    assert_int_equal(l.n, 0);

    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    assert_int_equal(put(c, "netbox", DOC_B, 5000, &err), 1);
    must(topo_cache_facts_fail(c, "gpu", "list nodes: 401", 6000, &err), &err);
    must(topo_cache_facts_fail(c, "netbox", "GET /api/dcim/devices/: 502", 7000, &err), &err);

    must(topo_cache_facts_list(c, 10000, collect, &l, &err), &err);
    assert_int_equal(l.n, 3);
    /* by name: gpu (only failures), netbox (failing since 7000), ufm (fine) */
    assert_string_equal(l.s[0].source, "gpu");
    assert_false(l.s[0].has_facts);
    assert_int_equal(l.s[0].age_ms, -1);
    assert_int_equal(l.s[0].document_len, 0);
    assert_int_equal(l.s[0].failures, 1);
    assert_string_equal(l.s[0].error, "list nodes: 401");
    assert_string_equal(l.s[1].source, "netbox");
    assert_true(l.s[1].has_facts);
    assert_int_equal(l.s[1].age_ms, 5000);
    assert_int_equal(l.s[1].fetched_at_ms, 5000);
    assert_int_equal(l.s[1].document_len, strlen(DOC_B));
    assert_int_equal(l.s[1].failures, 1);
    assert_int_equal(l.s[1].error_at_ms, 7000);
    assert_string_equal(l.s[1].error, "GET /api/dcim/devices/: 502");
    assert_string_equal(l.s[2].source, "ufm");
    assert_int_equal(l.s[2].age_ms, 9000);
    assert_int_equal(l.s[2].failures, 0);
    assert_null(l.s[2].error);

    /* A clock behind the fetch gives age 0, not a negative one. */
    memset(&l, 0, sizeof(l));
    must(topo_cache_facts_list(c, 500, collect, &l, &err), &err);
    assert_int_equal(l.s[2].age_ms, 0);
    /* The callback stops the walk with its value. */
    memset(&l, 0, sizeof(l));
    l.stop_after = 2;
    assert_int_equal(topo_cache_facts_list(c, 500, collect, &l, &err), 42);
    assert_int_equal(l.n, 2);
    assert_int_equal(topo_cache_facts_list(c, 0, NULL, NULL, &err), TOPO_EINVALID);
}

static void test_cache_facts__delete(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache_facts got;
    topo_cache *c = open_cache(f);
    int deleted = -1;
    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    assert_int_equal(put(c, "lldp", DOC_A, 1000, &err), 1);
    must(topo_cache_facts_delete(c, "ufm", &deleted, &err), &err);
    assert_int_equal(deleted, 1);
    must(topo_cache_facts_delete(c, "ufm", &deleted, &err), &err);
    assert_int_equal(deleted, 0);
    assert_int_equal(topo_cache_facts_get(&got, c, "ufm", f->pool, &err), TOPO_ENOTFOUND);
    expect_doc(f, "lldp", DOC_A, 1000);
}

/* A reader (read_only) sees the facts a writer stored. */
static void test_cache_facts__read_only(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *r = NULL;
    topo_cache_facts got;
    topo_cache_opts ro = {.read_only = 1};
    listed l = {0};
    assert_int_equal(put(open_cache(f), "ufm", DOC_A, 1000, &err), 1);
    must(topo_cache_open(&r, f->tmp.path, &ro, &err), &err);
    must(topo_cache_facts_get(&got, r, "ufm", f->pool, &err), &err);
    assert_string_equal(got.document, DOC_A);
    must(topo_cache_facts_list(r, 2000, collect, &l, &err), &err);
    assert_int_equal(l.n, 1);
    assert_true(topo_cache_facts_put(r, "ufm", DOC_B, strlen(DOC_B), 2, NULL, &err) < 0);
    topo_cache_close(r);
    expect_doc(f, "ufm", DOC_A, 1000);
}

/* --- schema upgrade ------------------------------------------------------------------- */

/* Schema version 4 as released (migrations 0 to 3, as SQLite keeps them),
 * with a node, a watch position, a reservation with a claimed slot and a
 * pod-group member. */
static const char V4_FILE[] =
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
    "CREATE TABLE reservations(id TEXT PRIMARY KEY, podset_key TEXT NOT NULL UNIQUE,"
    "  topology_name TEXT NOT NULL, levels TEXT NOT NULL, requests TEXT NOT NULL,"
    "  assignment TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,"
    "  shape TEXT NOT NULL DEFAULT '', request TEXT NOT NULL DEFAULT '',"
    "  unclaimed_ttl INTEGER NOT NULL DEFAULT 0, claimed_at INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX reservations_expiry ON reservations(expires_at);"
    "CREATE TABLE reservation_slots(reservation_id TEXT NOT NULL REFERENCES reservations(id) ON "
    "  DELETE CASCADE, slot INTEGER NOT NULL CHECK(slot >= 0), domain_values TEXT NOT NULL,"
    "  pod_uid TEXT, UNIQUE(reservation_id, slot));"
    "CREATE UNIQUE INDEX reservation_slots_pod ON reservation_slots(pod_uid, reservation_id)"
    "  WHERE pod_uid IS NOT NULL;"
    "CREATE TABLE group_members(group_key TEXT NOT NULL, member TEXT NOT NULL,"
    "  total INTEGER NOT NULL CHECK(total >= 1), shape TEXT NOT NULL, request TEXT NOT NULL,"
    "  podset_group TEXT NOT NULL, seq INTEGER NOT NULL, expires_at INTEGER NOT NULL,"
    "  PRIMARY KEY(group_key, member));"
    "CREATE TABLE group_roles(group_key TEXT NOT NULL, shape TEXT NOT NULL, pod TEXT NOT NULL,"
    "  expires_at INTEGER NOT NULL, PRIMARY KEY(group_key, shape));"
    "CREATE INDEX group_roles_expiry ON group_roles(expires_at);"
    "CREATE INDEX group_members_expiry ON group_members(expires_at);"
    "CREATE INDEX reservation_slots_free ON reservation_slots(reservation_id)"
    "  WHERE pod_uid IS NULL;"
    "INSERT INTO meta VALUES('schema_version', '4');"
    "INSERT INTO nodes VALUES('old-1', '{\"kubernetes.io/hostname\":\"old-1\"}',"
    "  '{\"nvidia.com/gpu\":8}', '[]', 0, 1, '41');"
    "INSERT INTO watch_state VALUES('nodes', '41');"
    "INSERT INTO reservations VALUES('r1', 'ns/job', 'default', '[\"kubernetes.io/hostname\"]',"
    "  '{\"nvidia.com/gpu\":1}', '{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":"
    "[{\"values\":[\"old-1\"],\"count\":2}]}', 10, 1000000, '', '', 0, 10);"
    "INSERT INTO reservation_slots VALUES('r1', 0, '[\"old-1\"]', 'pod-a');"
    "INSERT INTO reservation_slots VALUES('r1', 1, '[\"old-1\"]', NULL);"
    "INSERT INTO group_members VALUES('ns/pod-group/g', 'p0', 2, 's', 'r', '', 1, 1000000);";

static void test_cache_facts__migrate_from_v4(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_node_spec n;
    topo_cache_reservation r;
    topo_cache_stats stats;
    char rv[32];

    topo_test_db_exec(f->tmp.path, V4_FILE);
    topo_cache *c = open_cache(f);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
    assert_int_equal(
        topo_test_db_int(f->tmp.path, "SELECT value FROM meta WHERE key = 'schema_version'"),
        TOPO_CACHE_SCHEMA_VERSION);
    /* Everything of version 4 is still there... */
    must(topo_cache_get_node(&n, c, "old-1", f->pool, &err), &err);
    assert_true(n.ready);
    must(topo_cache_get_watch_rv(c, TOPO_CACHE_NODES, rv, sizeof(rv), &err), &err);
    assert_string_equal(rv, "41");
    must(topo_cache_reservation_get(&r, c, "r1", f->pool, &err), &err);
    assert_int_equal(r.nslots, 2);
    assert_int_equal(r.nclaimed, 1);
    must(topo_cache_get_stats(&stats, c, &err), &err);
    assert_int_equal(stats.nodes, 1);
    assert_int_equal(stats.reservations, 1);
    /* ...and the facts store works, also after reopening. */
    assert_int_equal(put(c, "ufm", DOC_A, 1000, &err), 1);
    c = open_cache(f);
    expect_doc(f, "ufm", DOC_A, 1000);
    assert_int_equal(topo_cache_schema_version(c), TOPO_CACHE_SCHEMA_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cache_facts__put_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__fail_keeps_facts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__failure_half_way, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__damaged_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__list_ages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_facts__migrate_from_v4, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
