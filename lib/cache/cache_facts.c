/* topo-sync's last good facts per source (topo/cache_facts.h): one row per
 * source in source_facts. The document is opaque text here; its hash is
 * computed on the way in and checked on the way out, so a damaged row is
 * reported rather than planned from. */
#include "cache_internal.h"

#include <string.h>

#include "topo/cache_facts.h"
#include "topo/limits.h"
#include "topo/sha256.h"
#include "topo/utf8.h"

static int check_args(topo_cache *cache, const char *source, topo_err *err)
{
    size_t n;
    if (cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if (!cache_nonempty(source))
        return topo_err_set(err, TOPO_EINVALID, "cache: facts: empty source name");
    if ((n = strlen(source)) > TOPO_MAX_FACTS_SOURCE_NAME)
        return topo_err_set(err, TOPO_ELIMIT, "cache: facts: a source name of %zu bytes (at "
                                              "most %u)", n, (unsigned)TOPO_MAX_FACTS_SOURCE_NAME);
    return 0;
}

static int check_document(const char *source, const char *document, size_t len,
                          int64_t fetched_at_ms, topo_err *err)
{
    if (document == NULL || len == 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: facts of %s: empty document", source);
    if (len > TOPO_MAX_FACTS_DOCUMENT)
        return topo_err_set(err, TOPO_ELIMIT, "cache: facts of %s: a document of %zu bytes "
                                              "(at most %u)", source, len,
                            (unsigned)TOPO_MAX_FACTS_DOCUMENT);
    if (memchr(document, '\0', len) != NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: facts of %s: a NUL byte in the "
                                                "document", source);
    if (fetched_at_ms < 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: facts of %s: fetched_at_ms is negative",
                            source);
    return 0;
}

/* Whether the stored hash differs from hash (1 when nothing is stored);
 * inside the put's unit, so that it compares with what the put replaces. */
static int hash_changed(int *out, topo_cache *c, const char *source, const char *hash,
                        topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_FACTS_HASH, err);
    const char *old = NULL;
    int error, rc;
    *out = 1;
    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, source, err)) == 0) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && (error = cache_column_text(&old, st, 0, err)) == 0)
            *out = old == NULL || strcmp(old, hash) != 0;
        else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            error = cache_sql_error(c, rc, "read facts", err);
    }
    cache_stmt_done(st);
    return error;
}

int topo_cache_facts_put(topo_cache *cache, const char *source, const char *document,
                         size_t len, int64_t fetched_at_ms, int *out_changed, topo_err *err)
{
    char hash[TOPO_SHA256_HEX_LEN + 1];
    sqlite3_stmt *st = NULL;
    int error, changed = 1, rc;

    if (out_changed != NULL)
        *out_changed = 0;
    if ((error = check_args(cache, source, err)) < 0 ||
        (error = check_document(source, document, len, fetched_at_ms, err)) < 0)
        return error;
    /* Hashed before the write lock is taken: megabytes take milliseconds. */
    if (topo_sha256_hex(hash, document, len) != 0)
        return topo_err_nomem(err, "cache: facts");
    if ((error = cache_op_begin(cache, CACHE_OP_DURABLE, err)) < 0)
        return error;
    if ((error = hash_changed(&changed, cache, source, hash, err)) < 0)
        goto end;
    if ((st = cache_stmt_get(cache, CACHE_STMT_FACTS_PUT, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, source, err)) < 0 ||
        (error = cache_bind_text(cache, st, 2, hash, err)) < 0 ||
        (error = cache_bind_int(cache, st, 3, (int64_t)len, err)) < 0 ||
        (error = cache_bind_int(cache, st, 4, fetched_at_ms, err)) < 0)
        goto end;
    /* Bound in place: the statement runs before this returns. */
    if ((rc = sqlite3_bind_text(st, 5, document, (int)len, SQLITE_STATIC)) != SQLITE_OK) {
        error = cache_sql_error(cache, rc, "bind", err);
        goto end;
    }
    error = cache_stmt_run(cache, st, "store facts", err);
    st = NULL;
end:
    cache_stmt_done(st);
    error = cache_op_end(cache, CACHE_OP_DURABLE, error, err);
    if (error == 0 && out_changed != NULL)
        *out_changed = changed;
    return error;
}

int topo_cache_facts_fail(topo_cache *cache, const char *source, const char *message,
                          int64_t at_ms, topo_err *err)
{
    const char *msg = cache_nonempty(message) ? message : "unknown error";
    size_t n = strlen(msg);
    sqlite3_stmt *st = NULL;
    int error, rc;

    if ((error = check_args(cache, source, err)) < 0)
        return error;
    n = topo_utf8_cut(msg, n, TOPO_MAX_FACTS_ERROR); /* before a character it would split */
    if ((error = cache_op_begin(cache, CACHE_OP_WRITE, err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_FACTS_FAIL, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, source, err)) < 0 ||
        (error = cache_bind_int(cache, st, 3, at_ms, err)) < 0)
        goto end;
    if ((rc = sqlite3_bind_text(st, 2, msg, (int)n, SQLITE_STATIC)) != SQLITE_OK) {
        error = cache_sql_error(cache, rc, "bind", err);
        goto end;
    }
    error = cache_stmt_run(cache, st, "record a failed fetch", err);
    st = NULL;
end:
    cache_stmt_done(st);
    return cache_op_end(cache, CACHE_OP_WRITE, error, err);
}

/* A FACTS_GET row with a document into out (pool copies). */
static int row_facts(topo_cache_facts *out, sqlite3_stmt *st, topo_pool *pool, topo_err *err)
{
    const char *doc = NULL;
    char *copy;
    int error;

    if ((out->source = cache_column_strdup(st, 0, 0, pool)) == NULL ||
        (out->hash = cache_column_strdup(st, 1, 0, pool)) == NULL)
        return topo_err_nomem(err, "cache");
    if (sqlite3_column_type(st, 4) != SQLITE_NULL &&
        (out->error = cache_column_strdup(st, 4, 0, pool)) == NULL)
        return topo_err_nomem(err, "cache");
    out->fetched_at_ms = (int64_t)sqlite3_column_int64(st, 3);
    out->error_at_ms = (int64_t)sqlite3_column_int64(st, 5);
    out->failures = (int64_t)sqlite3_column_int64(st, 6);
    if ((error = cache_column_text(&doc, st, 7, err)) < 0)
        return error;
    out->document_len = (size_t)sqlite3_column_bytes(st, 7);
    if ((int64_t)out->document_len != (int64_t)sqlite3_column_int64(st, 2))
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: facts of %s: %zu bytes, "
                                                "stored as %lld", out->source, out->document_len,
                            (long long)sqlite3_column_int64(st, 2));
    if ((copy = topo_pool_alloc(pool, out->document_len + 1)) == NULL)
        return topo_err_nomem(err, "cache");
    memcpy(copy, doc, out->document_len);
    copy[out->document_len] = '\0';
    out->document = copy;
    return 0;
}

int topo_cache_facts_get(topo_cache_facts *out, topo_cache *cache, const char *source,
                         topo_pool *pool, topo_err *err)
{
    char hash[TOPO_SHA256_HEX_LEN + 1];
    sqlite3_stmt *st = NULL;
    int error, rc;

    memset(out, 0, sizeof(*out));
    if ((error = check_args(cache, source, err)) < 0)
        return error;
    if (pool == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: facts of %s: no pool", source);
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_FACTS_GET, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, source, err)) < 0)
        goto end;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        error = topo_err_set(err, TOPO_ENOTFOUND, "cache: no facts of %s", source);
    else if (rc != SQLITE_ROW)
        error = cache_sql_error(cache, rc, "read facts", err);
    else if (sqlite3_column_type(st, 7) == SQLITE_NULL)
        error = topo_err_set(err, TOPO_ENOTFOUND, "cache: no facts of %s: no fetch of it "
                                                  "succeeded yet (%lld failed)", source,
                             (long long)sqlite3_column_int64(st, 6));
    else
        error = row_facts(out, st, pool, err);
end:
    cache_stmt_done(st);
    error = cache_op_end(cache, CACHE_OP_READ, error, err);
    /* Checked after the read ends: hashing megabytes need not hold it. */
    if (error == 0 && (error = topo_sha256_hex(hash, out->document, out->document_len)) != 0)
        error = topo_err_nomem(err, "cache: facts");
    else if (error == 0 && strcmp(hash, out->hash) != 0)
        error = topo_err_set(err, TOPO_EINVALID, "cache: damaged row: facts of %s: the "
                                                 "document does not match its hash", source);
    if (error != 0)
        memset(out, 0, sizeof(*out));
    return error;
}

static void row_status(topo_cache_facts_status *s, sqlite3_stmt *st, int64_t now_ms)
{
    memset(s, 0, sizeof(*s));
    s->source = (const char *)sqlite3_column_text(st, 0);
    s->hash = (const char *)sqlite3_column_text(st, 1);
    s->has_facts = sqlite3_column_type(st, 1) != SQLITE_NULL;
    s->age_ms = -1;
    if (s->has_facts) {
        s->document_len = (size_t)sqlite3_column_int64(st, 2);
        s->fetched_at_ms = (int64_t)sqlite3_column_int64(st, 3);
        s->age_ms = now_ms > s->fetched_at_ms ? now_ms - s->fetched_at_ms : 0;
    }
    s->error = (const char *)sqlite3_column_text(st, 4);
    s->error_at_ms = (int64_t)sqlite3_column_int64(st, 5);
    s->failures = (int64_t)sqlite3_column_int64(st, 6);
}

int topo_cache_facts_list(topo_cache *cache, int64_t now_ms, topo_cache_facts_fn fn,
                          void *payload, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (cache == NULL || fn == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: facts list: missing argument");
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_FACTS_LIST, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        topo_cache_facts_status s;
        row_status(&s, st, now_ms);
        /* A NULL from a column that holds text: SQLite ran out of memory. */
        if (s.source == NULL || (s.has_facts && s.hash == NULL) ||
            (s.error == NULL && sqlite3_column_type(st, 4) != SQLITE_NULL)) {
            error = topo_err_nomem(err, "cache");
            goto end;
        }
        if ((error = fn(&s, payload)) != 0)
            goto end;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, "list facts", err);
end:
    cache_stmt_done(st);
    return cache_op_end(cache, CACHE_OP_READ, error, err);
}

int topo_cache_facts_delete(topo_cache *cache, const char *source, int *out_deleted,
                            topo_err *err)
{
    size_t n = 0;
    int error;
    if (out_deleted != NULL)
        *out_deleted = 0;
    if ((error = check_args(cache, source, err)) < 0 ||
        (error = cache_write_one(cache, CACHE_STMT_FACTS_DELETE, source, 0, 0, &n,
                                 "forget facts", err)) < 0)
        return error;
    if (out_deleted != NULL)
        *out_deleted = n > 0;
    return 0;
}
