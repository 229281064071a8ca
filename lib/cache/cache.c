/* The cache connection: open with pragmas and migrations, the statement
 * cache, transactions (batches and per-call units), watch state, relists,
 * counts, and the JSON column helpers the other files share. */
#include "cache_internal.h"
#include "cache_vfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/json.h"
#include "topo/log.h"

static const char *const stmt_sql[CACHE_STMT_COUNT] = {
#define CACHE_XX_SQL(name, sql) sql,
    CACHE_STMT_MAP(CACHE_XX_SQL)
#undef CACHE_XX_SQL
};

static const char *const kind_names[] = {"nodes", "pods", "jobs"};

const char *topo_cache_kind_name(topo_cache_kind kind)
{
    return (unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind]
                                                                        : "unknown";
}

/* --- errors and statements -------------------------------------------------------------- */

int cache_sql_error(topo_cache *c, int rc, const char *what, topo_err *err)
{
    int code;
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        code = TOPO_ETIMEOUT;
        break;
    case SQLITE_NOMEM:
        code = TOPO_ENOMEM;
        break;
    case SQLITE_CONSTRAINT:
        code = TOPO_ECONFLICT;
        break;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        code = TOPO_EINVALID;
        break;
    default:
        code = TOPO_EIO;
        break;
    }
    const char *msg = c != NULL && c->db != NULL ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc);
    if (code == TOPO_EINVALID && c != NULL)
        c->corrupt = 1;
    return topo_err_set(err, code, "cache: %s: %s", what, msg);
}

sqlite3_stmt *cache_stmt_get(topo_cache *c, cache_stmt which, topo_err *err)
{
    if (c->stmts[which] == NULL) {
        int rc = sqlite3_prepare_v3(c->db, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                    &c->stmts[which], NULL);
        if (rc != SQLITE_OK) {
            cache_sql_error(c, rc, "prepare", err);
            sqlite3_finalize(c->stmts[which]);
            c->stmts[which] = NULL;
            return NULL;
        }
    }
    return c->stmts[which];
}

int cache_stmt_error(const topo_err *err)
{
    return err != NULL && err->code < 0 ? err->code : TOPO_EIO;
}

int cache_nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

void cache_stmt_done(sqlite3_stmt *st)
{
    if (st == NULL)
        return;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

int cache_stmt_run(topo_cache *c, sqlite3_stmt *st, const char *what, topo_err *err)
{
    int rc = sqlite3_step(st);
    int error = 0;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = cache_sql_error(c, rc, what, err);
    cache_stmt_done(st);
    return error;
}

static int run(topo_cache *c, cache_stmt which, const char *what, topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, which, err);
    if (st == NULL)
        return cache_stmt_error(err);
    return cache_stmt_run(c, st, what, err);
}

int cache_bind_text(topo_cache *c, sqlite3_stmt *st, int i, const char *s, topo_err *err)
{
    int rc = s == NULL ? sqlite3_bind_null(st, i) : sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    return rc == SQLITE_OK ? 0 : cache_sql_error(c, rc, "bind", err);
}

int cache_bind_int(topo_cache *c, sqlite3_stmt *st, int i, int64_t v, topo_err *err)
{
    int rc = sqlite3_bind_int64(st, i, (sqlite3_int64)v);
    return rc == SQLITE_OK ? 0 : cache_sql_error(c, rc, "bind", err);
}

int cache_bind_json(topo_cache *c, sqlite3_stmt *st, int i, const json_t *v, topo_err *err)
{
    char *text = v != NULL ? topo_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (text == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "cache: out of memory");
    /* SQLite frees the text with free(), as jansson allocated it. */
    int rc = sqlite3_bind_text(st, i, text, -1, free);
    return rc == SQLITE_OK ? 0 : cache_sql_error(c, rc, "bind", err);
}

/* --- transactions ---------------------------------------------------------------------- */

/* After a failed statement SQLite may have rolled the whole transaction back
 * by itself (SQLITE_FULL, IOERR, NOMEM...): then the batch is gone. */
static void note_autorollback(topo_cache *c)
{
    if (c->batch && sqlite3_get_autocommit(c->db)) {
        c->batch = 0;
        c->relist_kind = -1;
        if (c->batch_durable)
            (void)run(c, CACHE_STMT_SYNC_NORMAL, "synchronous", NULL);
        c->batch_durable = 0;
        topo_log(TOPO_LOG_WARN, "cache: SQLite rolled the open batch back after an error");
    }
}

int cache_op_begin(topo_cache *c, int mode, topo_err *err)
{
    int error;
    if (c == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if (mode == CACHE_OP_READ) {
        /* Reads nest (the snapshot walks nodes, then pods, in one read). */
        if (c->batch || c->reading++ > 0)
            return 0;
        if ((error = run(c, CACHE_STMT_BEGIN, "begin", err)) < 0)
            c->reading = 0;
        return error;
    }
    if (c->reading > 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: write inside a read (from a callback?)");
    if (c->batch)
        return run(c, CACHE_STMT_SAVEPOINT, "savepoint", err);
    if (mode == CACHE_OP_DURABLE &&
        (error = run(c, CACHE_STMT_SYNC_FULL, "synchronous", err)) < 0)
        return error;
    error = run(c, CACHE_STMT_BEGIN_IMMEDIATE, "begin", err);
    if (error < 0 && mode == CACHE_OP_DURABLE)
        (void)run(c, CACHE_STMT_SYNC_NORMAL, "synchronous", NULL);
    return error;
}

int cache_op_end(topo_cache *c, int mode, int error, topo_err *err)
{
    if (mode == CACHE_OP_READ) {
        if (c->batch || c->reading == 0 || --c->reading > 0)
            return error;
        if (!sqlite3_get_autocommit(c->db))
            (void)run(c, CACHE_STMT_COMMIT, "end read", NULL);
        return error;
    }
    if (c->batch) {
        if (error < 0) {
            (void)run(c, CACHE_STMT_ROLLBACK_TO, "rollback", NULL);
            (void)run(c, CACHE_STMT_RELEASE, "release", NULL);
            note_autorollback(c);
            return error;
        }
        error = run(c, CACHE_STMT_RELEASE, "release", err);
        note_autorollback(c);
        return error;
    }
    if (sqlite3_get_autocommit(c->db)) {
        /* SQLite already ended it (after an error). */
    } else if (error < 0) {
        (void)run(c, CACHE_STMT_ROLLBACK, "rollback", NULL);
    } else if ((error = run(c, CACHE_STMT_COMMIT, "commit", err)) < 0) {
        if (!sqlite3_get_autocommit(c->db))
            (void)run(c, CACHE_STMT_ROLLBACK, "rollback", NULL);
    }
    if (mode == CACHE_OP_DURABLE)
        (void)run(c, CACHE_STMT_SYNC_NORMAL, "synchronous", NULL);
    return error;
}

int cache_read_begin(topo_cache *c, cache_stmt which, sqlite3_stmt **out, topo_err *err)
{
    int error;

    *out = NULL;
    if ((error = cache_op_begin(c, CACHE_OP_READ, err)) < 0)
        return error;
    if ((*out = cache_stmt_get(c, which, err)) == NULL)
        return cache_op_end(c, CACHE_OP_READ, cache_stmt_error(err), err);
    return 0;
}

int cache_read_end(topo_cache *c, sqlite3_stmt *st, int error, topo_err *err)
{
    cache_stmt_done(st);
    return cache_op_end(c, CACHE_OP_READ, error, err);
}

static int begin_batch(topo_cache *c, int durable, topo_err *err)
{
    int error;
    if (c == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if (c->batch)
        return topo_err_set(err, TOPO_EINVALID, "cache: a batch is already open");
    if (c->reading > 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: begin inside a read (from a callback?)");
    if ((error = cache_op_begin(c, durable ? CACHE_OP_DURABLE : CACHE_OP_WRITE, err)) < 0)
        return error;
    c->batch = 1;
    c->batch_durable = durable;
    return 0;
}

int topo_cache_begin(topo_cache *cache, topo_err *err)
{
    return begin_batch(cache, 0, err);
}

int topo_cache_begin_durable(topo_cache *cache, topo_err *err)
{
    return begin_batch(cache, 1, err);
}

int topo_cache_commit(topo_cache *cache, topo_err *err)
{
    if (cache == NULL || !cache->batch)
        return topo_err_set(err, TOPO_EINVALID, "cache: commit: no batch is open");
    int mode = cache->batch_durable ? CACHE_OP_DURABLE : CACHE_OP_WRITE;
    cache->batch = 0;
    cache->batch_durable = 0;
    cache->relist_kind = -1;
    return cache_op_end(cache, mode, 0, err);
}

int topo_cache_rollback(topo_cache *cache, topo_err *err)
{
    (void)err;
    if (cache == NULL || !cache->batch)
        return 0;
    int mode = cache->batch_durable ? CACHE_OP_DURABLE : CACHE_OP_WRITE;
    cache->batch = 0;
    cache->batch_durable = 0;
    cache->relist_kind = -1;
    (void)cache_op_end(cache, mode, TOPO_EGENERIC, NULL);
    return 0;
}

int topo_cache_in_batch(const topo_cache *cache)
{
    return cache != NULL && cache->batch;
}

int topo_cache_read_begin(topo_cache *cache, topo_err *err)
{
    return cache_op_begin(cache, CACHE_OP_READ, err);
}

void topo_cache_read_end(topo_cache *cache)
{
    if (cache != NULL)
        (void)cache_op_end(cache, CACHE_OP_READ, 0, NULL);
}

/* --- open, migrate, close --------------------------------------------------------------- */

static int exec_sql(topo_cache *c, const char *sql, const char *what, topo_err *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return 0;
    int error = cache_sql_error(c, rc, what, err);
    if (msg != NULL) {
        topo_err_set(err, error, "cache: %s: %s", what, msg);
        sqlite3_free(msg);
    }
    return error;
}

/* A one-row, one-column query run directly (open time only). */
static int query_int(topo_cache *c, const char *sql, int64_t *out, int *found, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
    int error = 0;
    *found = 0;
    if (rc != SQLITE_OK)
        return cache_sql_error(c, rc, "read schema", err);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *found = 1;
        *out = (int64_t)sqlite3_column_int64(st, 0);
    } else if (rc != SQLITE_DONE) {
        error = cache_sql_error(c, rc, "read schema", err);
    }
    sqlite3_finalize(st);
    return error;
}

/* The file's schema version: 0 for an empty database. */
static int read_version(topo_cache *c, const char *path, int *out, topo_err *err)
{
    int64_t n = 0, v = 0;
    int found = 0, error;

    if ((error = query_int(c, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                              "name = 'meta'",
                           &n, &found, err)) < 0)
        return error;
    if (n == 0) {
        if ((error = query_int(c, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE "
                                  "'sqlite_%'",
                               &n, &found, err)) < 0)
            return error;
        if (n > 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "cache: %s: not a topo cache (tables, but no meta table)", path);
        *out = 0;
        return 0;
    }
    if ((error = query_int(c, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = "
                              "'schema_version'",
                           &v, &found, err)) < 0)
        return error;
    if (!found || v < 1 || v > 1000000)
        return topo_err_set(err, TOPO_EINVALID, "cache: %s: meta.schema_version is missing or bad",
                            path);
    *out = (int)v;
    return 0;
}

static int newer_error(const char *path, int version, topo_err *err)
{
    return topo_err_set(err, TOPO_EUNSUPPORTED,
                        "cache: %s: schema version %d is newer than this build supports (%d); "
                        "use a newer topo, or remove the file to rebuild it from the API server",
                        path, version, TOPO_CACHE_SCHEMA_VERSION);
}

static int migrate(topo_cache *c, const char *path, topo_err *err)
{
    char sql[96];
    int version = 0, error, from;

    /* The common case reads the version without taking the write lock. */
    if ((error = exec_sql(c, "BEGIN", "begin", err)) < 0)
        return error;
    error = read_version(c, path, &version, err);
    (void)exec_sql(c, "COMMIT", "commit", NULL);
    if (error < 0)
        return error;
    if (version > TOPO_CACHE_SCHEMA_VERSION)
        return newer_error(path, version, err);
    if (version == TOPO_CACHE_SCHEMA_VERSION) {
        c->schema_version = version;
        return 0;
    }

    /* Another process may be migrating too: decide again under the lock. */
    if ((error = exec_sql(c, "BEGIN IMMEDIATE", "begin migration", err)) < 0)
        return error;
    if ((error = read_version(c, path, &version, err)) < 0)
        goto cleanup;
    if (version > TOPO_CACHE_SCHEMA_VERSION) {
        error = newer_error(path, version, err);
        goto cleanup;
    }
    from = version;
    for (; version < TOPO_CACHE_SCHEMA_VERSION; version++) {
        if ((error = exec_sql(c, cache_migrations[version], "migration", err)) < 0) {
            topo_err_wrap(err, "%s: schema %d to %d", path, version, version + 1);
            goto cleanup;
        }
    }
    snprintf(sql, sizeof(sql),
             "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '%d')", version);
    if ((error = exec_sql(c, sql, "migration", err)) < 0 ||
        (error = exec_sql(c, "COMMIT", "commit migration", err)) < 0)
        goto cleanup;
    if (from == 0)
        topo_log(TOPO_LOG_DEBUG, "cache: %s: schema version %d created", path, version);
    else
        topo_log(TOPO_LOG_INFO, "cache: %s: schema migrated from version %d to %d", path, from,
                 version);
    c->schema_version = version;
    return 0;

cleanup:
    if (!sqlite3_get_autocommit(c->db))
        (void)exec_sql(c, "ROLLBACK", "rollback", NULL);
    return error;
}

/* A reader's open: the file must already be a cache of this schema. */
static int check_current(topo_cache *c, const char *path, topo_err *err)
{
    int version = 0, error, code;
    if ((error = exec_sql(c, "BEGIN", "begin", err)) < 0)
        return error;
    error = read_version(c, path, &version, err);
    code = sqlite3_errcode(c->db) & 0xff;
    (void)exec_sql(c, "COMMIT", "commit", NULL);
    if (error < 0 && code == SQLITE_NOTADB)
        return topo_err_set(err, TOPO_EINVALID, "cache: %s: not a SQLite database", path);
    if (error < 0)
        return error;
    if (version == 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: %s: empty, not a topo cache", path);
    if (version > TOPO_CACHE_SCHEMA_VERSION)
        return newer_error(path, version, err);
    if (version < TOPO_CACHE_SCHEMA_VERSION)
        return topo_err_set(err, TOPO_EUNSUPPORTED,
                            "cache: %s: schema version %d is older than this build's (%d); a "
                            "writer (topo-webhook, topoassign cache sync) migrates it",
                            path, version, TOPO_CACHE_SCHEMA_VERSION);
    c->schema_version = version;
    return 0;
}

static int set_pragmas(topo_cache *c, const char *path, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc, error = 0;

    if ((error = exec_sql(c, "PRAGMA foreign_keys=ON", "pragma foreign_keys", err)) < 0)
        return error;
    /* The first statement that reads the file: a file that is not a database
     * fails here. */
    rc = sqlite3_prepare_v2(c->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        if (mode == NULL || (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0))
            error = topo_err_set(err, TOPO_EIO, "cache: %s: cannot use WAL mode (journal mode %s)",
                                 path, mode ? mode : "unknown");
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        error = cache_sql_error(c, rc, "pragma journal_mode", err);
        if ((rc & 0xff) == SQLITE_NOTADB)
            topo_err_set(err, TOPO_EINVALID, "cache: %s: not a SQLite database", path);
    }
    if (error < 0)
        return error;
    return exec_sql(c, "PRAGMA synchronous=NORMAL", "pragma synchronous", err);
}

/* PRAGMA quick_check(1): "ok", or the first problem it found (a file that
 * is not a database, or one whose pages cannot be read, fails the pragma
 * itself). Every page of every table and index is read once: linear in the
 * file's size (docs/cache.md "A corrupted file"). */
static int quick_check(topo_cache *c, const char *path, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c->db, "PRAGMA quick_check(1)", -1, &st, NULL);
    int error = 0;
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(st, 0);
        if (res == NULL || strcmp(res, "ok") != 0) {
            /* "*** in database main ***\nOn tree page 53 cell 0: ...": the
             * problem, on one line. */
            char what[160];
            const char *nl = res != NULL ? strrchr(res, '\n') : NULL;
            snprintf(what, sizeof what, "%s", res == NULL ? "no answer" : nl ? nl + 1 : res);
            c->corrupt = 1;
            error = topo_err_set(err, TOPO_EINVALID, "cache: %s: quick_check: %s", path, what);
        }
    } else if (rc != SQLITE_DONE) {
        error = cache_sql_error(c, rc, "quick_check", err);
        topo_err_wrap(err, "%s", path);
    }
    sqlite3_finalize(st);
    return error;
}

int topo_cache_open(topo_cache **out, const char *path, const topo_cache_opts *opts,
                    topo_err *err)
{
    return cache_open_checked(out, path, opts, 0, NULL, err);
}

int cache_open_checked(topo_cache **out, const char *path, const topo_cache_opts *opts,
                       int check, int *out_corrupt, topo_err *err)
{
    topo_cache_opts o = {0};
    topo_cache *c = NULL;
    int error = 0, rc, flags;

    *out = NULL;
    if (opts != NULL)
        o = *opts;
    if (o.reservation_sync_full != 0 && o.reservation_sync_full != 1)
        return topo_err_set(err, TOPO_EINVALID,
                            "cache: options: reservation_sync_full must be 0 or 1, got %d",
                            o.reservation_sync_full);
    if (o.busy_timeout_ms == 0)
        o.busy_timeout_ms = TOPO_CACHE_BUSY_TIMEOUT_MS_DEFAULT;
    if (!cache_nonempty(path))
        return topo_err_set(err, TOPO_EINVALID, "cache: no file name");
    if ((c = calloc(1, sizeof(*c))) == NULL || (c->scratch = topo_pool_create()) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "cache: out of memory");
        goto cleanup;
    }
    c->relist_kind = -1;
    c->reservation_sync_full = o.reservation_sync_full;
    if (o.record_keys != NULL)
        c->record_keys = *o.record_keys;
    if (o.read_only)
        flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
    else
        flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (o.must_exist ? 0 : SQLITE_OPEN_CREATE);
    if ((error = cache_path_check(path, err)) < 0)
        goto cleanup;
    rc = sqlite3_open_v2(path, &c->db, flags, cache_vfs_name());
    if (rc != SQLITE_OK) {
        if (c->db == NULL) {
            error = topo_err_set(err, TOPO_ENOMEM, "cache: out of memory");
        } else if ((rc & 0xff) == SQLITE_CANTOPEN && sqlite3_system_errno(c->db) == ENOENT) {
            error = topo_err_set(err, TOPO_ENOTFOUND, "cache: %s: no such file", path);
        } else {
            error = cache_sql_error(c, rc, "open", err);
            topo_err_wrap(err, "%s", path);
            if (!o.read_only)
                cache_path_explain(path, err);
        }
        goto cleanup;
    }
    sqlite3_extended_result_codes(c->db, 0);
    if ((rc = sqlite3_busy_timeout(c->db, o.busy_timeout_ms > 0 ? o.busy_timeout_ms : 0)) !=
        SQLITE_OK) {
        error = cache_sql_error(c, rc, "busy_timeout", err);
        goto cleanup;
    }
    if (o.manual_checkpoint)
        sqlite3_wal_autocheckpoint(c->db, 0);
    if (o.read_only)
        error = check_current(c, path, err);
    else if ((error = set_pragmas(c, path, err)) == 0 &&
             (!check || (error = quick_check(c, path, err)) == 0))
        error = migrate(c, path, err);
    /* A read-only directory fails the first write (the WAL's creation) with
     * "unable to open database file": say which directory and why. */
    if (error < 0 && error != TOPO_ENOMEM && !o.read_only)
        cache_path_explain(path, err);
    if (error < 0 ||
        (error = exec_sql(c, "CREATE TEMP TABLE relist_seen(key TEXT PRIMARY KEY)", "relist table",
                          err)) < 0)
        goto cleanup;
    *out = c;
    c = NULL;

cleanup:
    if (out_corrupt != NULL)
        *out_corrupt = error < 0 && c != NULL && c->corrupt;
    topo_cache_close(c);
    return error;
}

void topo_cache_close(topo_cache *cache)
{
    if (cache == NULL)
        return;
    if (cache->batch)
        (void)topo_cache_rollback(cache, NULL);
    for (size_t i = 0; i < CACHE_STMT_COUNT; i++)
        sqlite3_finalize(cache->stmts[i]);
    sqlite3_close(cache->db); /* every statement is finalized: this closes */
    topo_pool_free(cache->scratch);
    memset(&cache->record_keys, 0, sizeof(cache->record_keys));
    free(cache);
}

int topo_cache_corrupt(const topo_cache *cache)
{
    return cache != NULL && atomic_load(&cache->corrupt);
}

int topo_cache_schema_version(const topo_cache *cache)
{
    return cache != NULL ? cache->schema_version : 0;
}

int cache_reservation_mode(const topo_cache *c)
{
    return c->reservation_sync_full ? CACHE_OP_DURABLE : CACHE_OP_WRITE;
}

int topo_cache_checkpoint(topo_cache *cache, int *out_pages, topo_err *err)
{
    int log = 0, done = 0;
    if (out_pages != NULL)
        *out_pages = 0;
    if (cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: checkpoint: missing argument");
    int rc = sqlite3_wal_checkpoint_v2(cache->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY)
        return cache_sql_error(cache, rc, "checkpoint", err);
    if (out_pages != NULL)
        *out_pages = log > 0 ? log : 0;
    return 0;
}

int topo_cache_data_version(topo_cache *cache, int64_t *out, topo_err *err)
{
    sqlite3_stmt *st;
    int rc, error = 0;

    if (out != NULL)
        *out = 0;
    if (cache == NULL || out == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: data_version: missing argument");
    if ((st = cache_stmt_get(cache, CACHE_STMT_DATA_VERSION, err)) == NULL)
        return cache_stmt_error(err);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = (int64_t)sqlite3_column_int64(st, 0);
    else
        error = cache_sql_error(cache, rc, "data_version", err);
    cache_stmt_done(st);
    return error;
}

/* --- watch state ------------------------------------------------------------------------ */

static int check_kind(topo_cache_kind kind, topo_err *err)
{
    if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
        return topo_err_set(err, TOPO_EINVALID, "cache: unknown kind %d", (int)kind);
    return 0;
}

int topo_cache_get_watch_rv(topo_cache *cache, topo_cache_kind kind, char *buf, size_t size,
                            topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;

    if ((error = check_kind(kind, err)) < 0)
        return error;
    if (size > 0)
        buf[0] = '\0';
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_WATCH_GET, err)) == NULL) {
        error = cache_stmt_error(err);
        goto cleanup;
    }
    if ((error = cache_bind_text(cache, st, 1, kind_names[kind], err)) < 0)
        goto cleanup;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        error = topo_err_set(err, TOPO_ENOTFOUND, "cache: no watch state for %s", kind_names[kind]);
    } else if (rc != SQLITE_ROW) {
        error = cache_sql_error(cache, rc, "read watch state", err);
    } else {
        const char *rv = (const char *)sqlite3_column_text(st, 0);
        size_t len = rv != NULL ? strlen(rv) : 0;
        if (len + 1 > size)
            error = topo_err_set(err, TOPO_ELIMIT, "cache: resource version of %zu bytes does "
                                                   "not fit a buffer of %zu", len, size);
        else
            memcpy(buf, rv != NULL ? rv : "", len + 1);
    }

cleanup:
    cache_stmt_done(st);
    return cache_op_end(cache, CACHE_OP_READ, error, err);
}

int cache_set_watch_rv(topo_cache *c, topo_cache_kind kind, const char *rv, topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_WATCH_SET, err);
    int error;
    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, kind_names[kind], err)) < 0 ||
        (error = cache_bind_text(c, st, 2, rv, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    return cache_stmt_run(c, st, "write watch state", err);
}

int topo_cache_set_watch_rv(topo_cache *cache, topo_cache_kind kind, const char *rv,
                            topo_err *err)
{
    int error;
    if ((error = check_kind(kind, err)) < 0)
        return error;
    if (rv == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: resource version is NULL");
    if ((error = cache_op_begin(cache, CACHE_OP_WRITE, err)) < 0)
        return error;
    error = cache_set_watch_rv(cache, kind, rv, err);
    return cache_op_end(cache, CACHE_OP_WRITE, error, err);
}

/* --- relist ---------------------------------------------------------------------------- */

int cache_relist_mark(topo_cache *c, topo_cache_kind kind, const char *key, topo_err *err)
{
    sqlite3_stmt *st;
    int error;
    if (c->relist_kind != (int)kind)
        return 0;
    if ((st = cache_stmt_get(c, CACHE_STMT_RELIST_MARK, err)) == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, key, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    return cache_stmt_run(c, st, "relist", err);
}

int topo_cache_relist_begin(topo_cache *cache, topo_cache_kind kind, topo_err *err)
{
    int error;
    if ((error = check_kind(kind, err)) < 0)
        return error;
    if (!cache->batch)
        return topo_err_set(err, TOPO_EINVALID, "cache: relist %s: open a batch first",
                            kind_names[kind]);
    if (cache->relist_kind >= 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: relist %s: a relist of %s is open",
                            kind_names[kind], kind_names[cache->relist_kind]);
    if ((error = run(cache, CACHE_STMT_RELIST_CLEAR, "relist", err)) < 0)
        return error;
    cache->relist_kind = (int)kind;
    return 0;
}

int topo_cache_relist_end(topo_cache *cache, topo_cache_kind kind, size_t *out_deleted,
                          topo_err *err)
{
    static const cache_stmt sweep[] = {CACHE_STMT_RELIST_SWEEP_NODES, CACHE_STMT_RELIST_SWEEP_PODS,
                                       CACHE_STMT_RELIST_SWEEP_JOBS};
    int error;
    size_t deleted = 0;

    if (out_deleted != NULL)
        *out_deleted = 0;
    if ((error = check_kind(kind, err)) < 0)
        return error;
    if (!cache->batch || cache->relist_kind != (int)kind)
        return topo_err_set(err, TOPO_EINVALID, "cache: relist %s: not begun", kind_names[kind]);
    if ((error = cache_op_begin(cache, CACHE_OP_WRITE, err)) < 0)
        return error;
    /* Pods that went away free their reservation slots. */
    if (kind == TOPO_CACHE_PODS &&
        (error = run(cache, CACHE_STMT_RELIST_RELEASE_PODS, "relist", err)) < 0)
        goto cleanup;
    if ((error = run(cache, sweep[kind], "relist", err)) < 0)
        goto cleanup;
    deleted = (size_t)sqlite3_changes(cache->db);
    error = run(cache, CACHE_STMT_RELIST_CLEAR, "relist", err);

cleanup:
    error = cache_op_end(cache, CACHE_OP_WRITE, error, err);
    if (error == 0) {
        cache->relist_kind = -1;
        if (out_deleted != NULL)
            *out_deleted = deleted;
    }
    return error;
}

/* --- counts -------------------------------------------------------------------------- */

static int count(topo_cache *c, cache_stmt which, size_t *a, size_t *b, topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, which, err);
    int rc, error = 0;
    if (st == NULL)
        return cache_stmt_error(err);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *a = (size_t)sqlite3_column_int64(st, 0);
        if (b != NULL)
            *b = (size_t)sqlite3_column_int64(st, 1);
    } else {
        error = cache_sql_error(c, rc, "count", err);
    }
    cache_stmt_done(st);
    return error;
}

int topo_cache_get_stats(topo_cache_stats *out, topo_cache *cache, topo_err *err)
{
    int error;
    memset(out, 0, sizeof(*out));
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        return error;
    if ((error = count(cache, CACHE_STMT_COUNT_NODES, &out->nodes, NULL, err)) < 0 ||
        (error = count(cache, CACHE_STMT_COUNT_PODS, &out->pods, NULL, err)) < 0 ||
        (error = count(cache, CACHE_STMT_COUNT_JOBS, &out->jobs, NULL, err)) < 0 ||
        (error = count(cache, CACHE_STMT_COUNT_RESERVATIONS, &out->reservations, NULL, err)) < 0 ||
        (error = count(cache, CACHE_STMT_COUNT_SLOTS, &out->slots, &out->claimed_slots, err)) < 0)
        memset(out, 0, sizeof(*out));
    return cache_op_end(cache, CACHE_OP_READ, error, err);
}

/* --- JSON columns ----------------------------------------------------------------------- */

int cache_column_text(const char **out, sqlite3_stmt *st, int col, topo_err *err)
{
    /* The type first: reading the text may convert the value. */
    int null = sqlite3_column_type(st, col) == SQLITE_NULL;
    *out = null ? NULL : (const char *)sqlite3_column_text(st, col);
    return *out == NULL && !null ? topo_err_nomem(err, "cache") : 0;
}

int cache_text_json(json_t **out, const char *text, size_t len, const char *what, topo_err *err)
{
    json_error_t jerr;
    int rc;

    *out = NULL;
    if (text == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: %s is NULL", what);
    if ((rc = topo_json_load(out, text, len, JSON_DECODE_ANY, &jerr)) == TOPO_ENOMEM)
        return topo_err_nomem(err, "cache");
    if (rc < 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: %s: %s", what, jerr.text);
    return 0;
}

int cache_column_json(json_t **out, sqlite3_stmt *st, int col, const char *what, topo_err *err)
{
    const char *text;
    int error;

    *out = NULL;
    if ((error = cache_column_text(&text, st, col, err)) < 0)
        return error;
    return cache_text_json(out, text, (size_t)sqlite3_column_bytes(st, col), what, err);
}

char *cache_column_strdup(sqlite3_stmt *st, int col, int null_ok, topo_pool *pool)
{
    const char *text;
    if (cache_column_text(&text, st, col, NULL) < 0)
        return NULL;
    if (text == NULL) {
        if (null_ok)
            return NULL;
        text = "";
    }
    return topo_pool_strdup(pool, text);
}

int cache_json_to_kv(topo_kv **out, size_t *out_n, const json_t *obj, topo_pool *pool,
                     topo_err *err)
{
    const char *key;
    json_t *v;
    size_t n = 0;
    topo_kv *kv;

    *out = NULL;
    *out_n = 0;
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: expected an object");
    if (json_object_size(obj) == 0)
        return 0;
    if ((kv = topo_pool_calloc(pool, json_object_size(obj), sizeof(*kv))) == NULL)
        return topo_err_nomem(err, "cache");
    json_object_foreach((json_t *)obj, key, v) {
        if (!json_is_string(v))
            return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: %s is not a string", key);
        if ((kv[n].key = topo_pool_strdup(pool, key)) == NULL ||
            (kv[n].value = topo_pool_strdup(pool, json_string_value(v))) == NULL)
            return topo_err_nomem(err, "cache");
        n++;
    }
    *out = kv;
    *out_n = n;
    return 0;
}

int cache_json_to_resources(topo_resource **out, size_t *out_n, const json_t *obj,
                            topo_pool *pool, topo_err *err)
{
    const char *key;
    json_t *v;
    size_t n = 0;
    topo_resource *r;

    *out = NULL;
    *out_n = 0;
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: expected an object");
    if (json_object_size(obj) == 0)
        return 0;
    if ((r = topo_pool_calloc(pool, json_object_size(obj), sizeof(*r))) == NULL)
        return topo_err_nomem(err, "cache");
    json_object_foreach((json_t *)obj, key, v) {
        if (!json_is_integer(v))
            return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: %s is not an integer",
                                key);
        if ((r[n].name = topo_pool_strdup(pool, key)) == NULL)
            return topo_err_nomem(err, "cache");
        r[n].amount = (int64_t)json_integer_value(v);
        n++;
    }
    *out = r;
    *out_n = n;
    return 0;
}

int cache_json_to_strings(const char ***out, size_t *out_n, const json_t *arr, topo_pool *pool,
                          topo_err *err)
{
    const char **v;
    size_t n;

    *out = NULL;
    *out_n = 0;
    if (!json_is_array(arr))
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: expected an array");
    if ((n = json_array_size(arr)) == 0)
        return 0;
    if ((v = topo_pool_calloc(pool, n, sizeof(*v))) == NULL)
        return topo_err_nomem(err, "cache");
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(arr, i);
        if (!json_is_string(s))
            return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: expected strings");
        if ((v[i] = topo_pool_strdup(pool, json_string_value(s))) == NULL)
            return topo_err_nomem(err, "cache");
    }
    *out = v;
    *out_n = n;
    return 0;
}

json_t *cache_resources_to_json(const topo_resource *r, size_t n)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj != NULL && i < n; i++) {
        if (json_object_set_new(obj, r[i].name, json_integer((json_int_t)r[i].amount)) < 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

json_t *cache_strings_to_json(const char *const *v, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++) {
        if (json_array_append_new(arr, json_string(v[i])) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}
