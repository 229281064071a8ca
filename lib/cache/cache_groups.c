/* Kueue pod groups waiting to be complete (cache.h, "pod groups"): the
 * admission handler records each pod of a group as it arrives, and places
 * the group's roles together once all of them are there. Written like
 * reservations (their own unit outside a batch, durable when configured). */
#include "cache_internal.h"

#include <string.h>

int topo_cache_group_member_put(topo_cache *cache, const topo_cache_group_member *m,
                                topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error;
    if (cache == NULL || m == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: group member: missing argument");
    if (!cache_nonempty(m->group_key) || !cache_nonempty(m->member) || m->total < 1 || m->shape == NULL ||
        m->request == NULL || m->podset_group == NULL || m->pod_json == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: group member: incomplete");
    if ((error = cache_op_begin(cache, cache_reservation_mode(cache), err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_GROUP_PUT, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, m->group_key, err)) < 0 ||
        (error = cache_bind_text(cache, st, 2, m->member, err)) < 0 ||
        (error = cache_bind_int(cache, st, 3, m->total, err)) < 0 ||
        (error = cache_bind_text(cache, st, 4, m->shape, err)) < 0 ||
        (error = cache_bind_text(cache, st, 5, m->request, err)) < 0 ||
        (error = cache_bind_text(cache, st, 6, m->podset_group, err)) < 0 ||
        (error = cache_bind_int(cache, st, 7, m->expires_at, err)) < 0 ||
        (error = cache_stmt_run(cache, st, "record group member", err)) < 0)
        goto end;
    /* The first pod of a shape is its role's template; later ones only
     * keep it as long as they live. */
    if ((st = cache_stmt_get(cache, CACHE_STMT_GROUP_ROLE_PUT, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, m->group_key, err)) < 0 ||
        (error = cache_bind_text(cache, st, 2, m->shape, err)) < 0 ||
        (error = cache_bind_text(cache, st, 3, m->pod_json, err)) < 0 ||
        (error = cache_bind_int(cache, st, 4, m->expires_at, err)) < 0)
        goto end;
    error = cache_stmt_run(cache, st, "record group role", err);
    st = NULL;
end:
    cache_stmt_done(st);
    return cache_op_end(cache, cache_reservation_mode(cache), error, err);
}

int topo_cache_group_members(topo_cache *cache, const char *group_key, int64_t now,
                             topo_cache_group_member_fn fn, void *payload, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;
    if (cache == NULL || fn == NULL || group_key == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: group members: missing argument");
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_GROUP_GET, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, group_key, err)) < 0 ||
        (error = cache_bind_int(cache, st, 2, now, err)) < 0)
        goto end;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        topo_cache_group_member m = {
            (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
            (int32_t)sqlite3_column_int(st, 2),       (const char *)sqlite3_column_text(st, 3),
            (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 7),
            (const char *)sqlite3_column_text(st, 5), (int64_t)sqlite3_column_int64(st, 6)};
        if (m.group_key == NULL || m.member == NULL || m.shape == NULL || m.request == NULL ||
            m.podset_group == NULL || m.pod_json == NULL) {
            error = topo_err_set(err, TOPO_ENOMEM, "cache: out of memory");
            goto end;
        }
        if ((error = fn(&m, payload)) != 0)
            goto end;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, "read group members", err);
end:
    cache_stmt_done(st);
    return cache_op_end(cache, CACHE_OP_READ, error, err);
}

int topo_cache_group_expire(topo_cache *cache, int64_t now, size_t *out_deleted, topo_err *err)
{
    int rc = cache_write_one(cache, CACHE_STMT_GROUP_EXPIRE, NULL, now, 1, out_deleted,
                             "expire group members", err);
    return rc < 0 ? rc
                  : cache_write_one(cache, CACHE_STMT_GROUP_ROLE_EXPIRE, NULL, now, 1, NULL,
                                    "expire group roles", err);
}
