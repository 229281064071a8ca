/* Reservations: a PodSet's assignment held as slots that its pods claim.
 * Outside a batch every write is its own transaction, committed with
 * synchronous=FULL when the cache was opened with reservation_sync_full
 * (NORMAL otherwise: it survives the process being killed). Also the
 * binding of an arriving pod to the slot its annotations name. */
#include "cache_internal.h"

#include "topo/count.h"

#include "topo/codec.h"

#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/json.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"
#include "topo/podreq.h"

/* --- create ----------------------------------------------------------------------------- */

static int validate_spec(const topo_cache_reservation_spec *s, size_t *out_slots, topo_err *err)
{
    const topo_assignment *a;
    size_t total = 0;

    if (s == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation: no spec");
    if (!cache_nonempty(s->id) || !cache_nonempty(s->podset_key))
        return topo_err_set(err, TOPO_EINVALID, "reservation: id and podset key are required");
    if (s->topology_name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: topology name is required",
                            s->id);
    if (s->nlevels == 0 || s->nlevels > TOPO_MAX_LEVELS)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: 1 to %d levels, got %zu", s->id,
                            TOPO_MAX_LEVELS, s->nlevels);
    for (size_t i = 0; i < s->nlevels; i++)
        if (!cache_nonempty(s->levels[i]))
            return topo_err_set(err, TOPO_EINVALID, "reservation %s: levels[%zu] is empty", s->id,
                                i);
    if (s->ndomain > s->nlevels)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: domain: at most %zu values",
                            s->id, s->nlevels);
    for (size_t i = 0; i < s->ndomain; i++)
        if (!cache_nonempty(s->domain[i]))
            return topo_err_set(err, TOPO_EINVALID, "reservation %s: domain[%zu] is empty", s->id,
                                i);
    if ((a = s->assignment) == NULL || a->nlevels == 0 || a->ndomains == 0)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: empty assignment", s->id);
    /* Kueue writes every level, or only the hostname when that is the lowest. */
    int same = a->nlevels == s->nlevels;
    for (size_t i = 0; same && i < a->nlevels; i++)
        same = a->levels[i] != NULL && strcmp(a->levels[i], s->levels[i]) == 0;
    if (!same && !(a->nlevels == 1 && a->levels[0] != NULL &&
                   strcmp(a->levels[0], s->levels[s->nlevels - 1]) == 0 &&
                   strcmp(a->levels[0], TOPO_KUEUE_HOSTNAME_LABEL) == 0))
        return topo_err_set(err, TOPO_EINVALID,
                            "reservation %s: assignment levels must be the topology's levels, or "
                            "only %s when it is the lowest", s->id, TOPO_KUEUE_HOSTNAME_LABEL);
    for (size_t d = 0; d < a->ndomains; d++) {
        if (a->domains[d].count <= 0)
            return topo_err_set(err, TOPO_EINVALID, "reservation %s: domains[%zu].count must be "
                                                    "positive", s->id, d);
        for (size_t i = 0; i < a->nlevels; i++)
            if (a->domains[d].values == NULL || !cache_nonempty(a->domains[d].values[i]))
                return topo_err_set(err, TOPO_EINVALID,
                                    "reservation %s: domains[%zu].values[%zu] is empty", s->id, d,
                                    i);
        total += (size_t)a->domains[d].count;
        if (total > TOPO_MAX_PODSET_COUNT)
            return topo_err_set(err, TOPO_ELIMIT, "reservation %s: more than %d slots", s->id,
                                TOPO_MAX_PODSET_COUNT);
    }
    for (size_t i = 0; i < s->nrequests; i++)
        if (!cache_nonempty(s->requests[i].name) || s->requests[i].amount < 0)
            return topo_err_set(err, TOPO_EINVALID, "reservation %s: requests[%zu] is invalid",
                                s->id, i);
    if (s->expires_at <= s->created_at)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: expires_at must be after "
                                                "created_at", s->id);
    if (s->unclaimed_ttl < 0)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: unclaimed_ttl is negative",
                            s->id);
    if (s->gen_term < 0 || s->gen_term > TOPO_CACHE_GEN_MAX)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: gen_term out of range (0..2^53)",
                            s->id);
    if (s->claimant != NULL &&
        (!cache_nonempty(s->claimant) || s->claimed_slot < 0 || (size_t)s->claimed_slot >= total))
        return topo_err_set(err, TOPO_EINVALID,
                            "reservation %s: the claimant needs a name and one of its %zu slots",
                            s->id, total);
    *out_slots = total;
    return 0;
}

int cache_slots_write(topo_cache *c, cache_stmt which, const char *id,
                      const topo_assignment *a, const char *claimant, int32_t claimed_slot,
                      topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, which, err);
    int32_t slot = 0;
    int error = 0;

    if (st == NULL)
        return cache_stmt_error(err);
    int with_claimant = sqlite3_bind_parameter_count(st) >= 4;
    for (size_t d = 0; d < a->ndomains && error == 0; d++) {
        json_t *values = cache_strings_to_json(a->domains[d].values, a->nlevels);
        char *text = values ? topo_json_dumps(values, JSON_COMPACT) : NULL;
        json_decref(values);
        if (text == NULL) {
            cache_stmt_done(st);
            return topo_err_nomem(err, "cache");
        }
        for (int32_t k = 0; k < a->domains[d].count && error == 0; k++, slot++) {
            int rc = SQLITE_OK;
            if ((error = cache_bind_text(c, st, 1, id, err)) < 0 ||
                (error = cache_bind_int(c, st, 2, slot, err)) < 0)
                break;
            if ((rc = sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC)) != SQLITE_OK ||
                (with_claimant && (rc = claimant != NULL && slot == claimed_slot
                                            ? sqlite3_bind_text(st, 4, claimant, -1,
                                                                SQLITE_STATIC)
                                            : sqlite3_bind_null(st, 4)) != SQLITE_OK)) {
                error = cache_sql_error(c, rc, "bind", err);
                break;
            }
            error = cache_stmt_run(c, st, with_claimant ? "insert slot" : "move slot", err);
        }
        cache_stmt_done(st);
        free(text);
    }
    return error;
}

/* Writes the reservation and its slots inside the caller's transaction. */
int cache_reservation_insert(topo_cache *cache, const topo_cache_reservation_spec *spec,
                             int64_t gen_seq, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    json_t *levels = NULL, *requests = NULL, *assignment = NULL, *domain = NULL;
    size_t nslots = 0;
    int error;

    if ((error = validate_spec(spec, &nslots, err)) < 0)
        return error;
    topo_json_alloc_watch();
    if ((levels = cache_strings_to_json(spec->levels, spec->nlevels)) == NULL ||
        (domain = cache_strings_to_json(spec->domain, spec->ndomain)) == NULL ||
        (requests = cache_resources_to_json(spec->requests, spec->nrequests)) == NULL ||
        (spec->assignment_json == NULL &&
         (assignment = topo_codec_assignment_json(spec->assignment)) == NULL)) {
        error = topo_json_alloc_failed()
                    ? topo_err_nomem(err, "cache")
                    : topo_err_set(err, TOPO_EINVALID,
                                   "reservation %s: not encodable (invalid UTF-8?)", spec->id);
        goto end;
    }
    /* An expired reservation of the same PodSet gives way. */
    if ((st = cache_stmt_get(cache, CACHE_STMT_RES_DELETE_EXPIRED_KEY, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, spec->podset_key, err)) < 0 ||
        (error = cache_bind_int(cache, st, 2, spec->created_at, err)) < 0 ||
        (error = cache_stmt_run(cache, st, "replace expired reservation", err)) < 0)
        goto end;
    st = NULL;
    if ((st = cache_stmt_get(cache, CACHE_STMT_RES_INSERT, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, spec->id, err)) < 0 ||
        (error = cache_bind_text(cache, st, 2, spec->podset_key, err)) < 0 ||
        (error = cache_bind_text(cache, st, 3, spec->topology_name, err)) < 0 ||
        (error = cache_bind_json(cache, st, 4, levels, err)) < 0 ||
        (error = cache_bind_json(cache, st, 5, requests, err)) < 0 ||
        (error = assignment != NULL
                     ? cache_bind_json(cache, st, 6, assignment, err)
                     : cache_bind_text(cache, st, 6, spec->assignment_json, err)) < 0 ||
        (error = cache_bind_int(cache, st, 7, spec->created_at, err)) < 0 ||
        (error = cache_bind_int(cache, st, 8, spec->expires_at, err)) < 0 ||
        (error = cache_bind_text(cache, st, 9, spec->shape ? spec->shape : "", err)) < 0 ||
        (error = cache_bind_text(cache, st, 10, spec->request ? spec->request : "", err)) < 0 ||
        (error = cache_bind_int(cache, st, 11, spec->unclaimed_ttl, err)) < 0 ||
        (error = cache_bind_int(cache, st, 12, spec->gen_term, err)) < 0 ||
        (error = cache_bind_int(cache, st, 13, gen_seq, err)) < 0 ||
        (error = cache_bind_json(cache, st, 14, domain, err)) < 0)
        goto end;
    /* A taken id or PodSet is the insert's constraint (the table's
     * primary key, podset_key's UNIQUE): no lookups before it. */
    if ((error = cache_stmt_run(cache, st, "insert reservation", err)) == TOPO_ECONFLICT) {
        if (sqlite3_extended_errcode(cache->db) == SQLITE_CONSTRAINT_PRIMARYKEY)
            topo_err_set(err, TOPO_ECONFLICT, "reservation %s: id already exists", spec->id);
        else
            topo_err_set(err, TOPO_ECONFLICT,
                         "reservation %s: PodSet %s already holds an unexpired reservation",
                         spec->id, spec->podset_key);
    }
    st = NULL;
    if (error < 0)
        goto end;
    error = cache_slots_write(cache, CACHE_STMT_SLOT_INSERT, spec->id, spec->assignment,
                              spec->claimant, spec->claimed_slot, err);
end:
    cache_stmt_done(st);
    json_decref(levels);
    json_decref(domain);
    json_decref(requests);
    json_decref(assignment);
    return error;
}

int topo_cache_reservation_create(topo_cache *cache, const topo_cache_reservation_spec *spec,
                                  topo_err *err)
{
    int error;
    size_t nslots = 0;

    if (cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    /* Refused before a transaction is opened for it. */
    if ((error = validate_spec(spec, &nslots, err)) < 0)
        return error;
    if ((error = cache_op_begin(cache, cache_reservation_mode(cache), err)) < 0)
        return error;
    /* A new placement: its slots never moved yet. */
    error = cache_reservation_insert(cache, spec, 0, err);
    return cache_op_end(cache, cache_reservation_mode(cache), error, err);
}

/* --- claim and release ------------------------------------------------------------------ */

static int values_from_text(const char *const **out, size_t *out_n, const char *text,
                            topo_pool *pool, topo_err *err)
{
    json_t *v = NULL;
    const char **strs = NULL;
    int error;
    if ((error = cache_text_json(&v, text, text ? strlen(text) : 0, "slot domain values", err)) <
        0)
        return error;
    error = cache_json_to_strings(&strs, out_n, v, pool, err);
    json_decref(v);
    *out = strs;
    return error;
}

/* Steps a lookup whose keys are bound; *found says whether a row came. */
static int step_row(topo_cache *c, sqlite3_stmt *st, int *found, const char *what, topo_err *err)
{
    int rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return 0;
    return cache_sql_error(c, rc, what, err);
}

/* Runs lookup `which` with (id, text) bound, or (id, num) when text is
 * NULL: 0 with *st stepped to its first row when *found (the caller
 * cache_stmt_done()s it), or an error with *st NULL. */
static int first_row(sqlite3_stmt **st, topo_cache *c, cache_stmt which, const char *id,
                     const char *text, int64_t num, int *found, const char *what, topo_err *err)
{
    int error;
    *found = 0;
    if ((*st = cache_stmt_get(c, which, err)) == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, *st, 1, id, err)) < 0 ||
        (error = text != NULL ? cache_bind_text(c, *st, 2, text, err)
                              : cache_bind_int(c, *st, 2, num, err)) < 0 ||
        (error = step_row(c, *st, found, what, err)) < 0) {
        cache_stmt_done(*st);
        *st = NULL;
    }
    return error;
}

static int lapsed(topo_err *err, const char *id)
{
    return topo_err_set(err, TOPO_ENOFIT,
                        "reservation %s: its free slots were given back (no pod claimed one in "
                        "time)",
                        id);
}

/* The reservation's slot count and whether its free slots are still held
 * (not given back for want of a claim). TOPO_ENOTFOUND when it is not live. */
static int read_live(topo_cache *c, const char *id, int64_t now, int64_t *nslots, int *free_open,
                     topo_err *err)
{
    sqlite3_stmt *st;
    int found, error = first_row(&st, c, CACHE_STMT_RES_LIVE, id, NULL, now, &found,
                                 "read reservation", err);
    if (error < 0)
        return error;
    if (!found) {
        error = topo_err_set(err, TOPO_ENOTFOUND, "reservation %s: not found or expired", id);
    } else {
        *nslots = sqlite3_column_int64(st, 0);
        *free_open = sqlite3_column_int(st, 1);
    }
    cache_stmt_done(st);
    return error;
}

/* The slot pod_uid holds already (a claim is idempotent): *slot and its
 * domain values (in the cache's scratch pool; NULL when out of memory), or
 * *slot -1. TOPO_ECONFLICT when it is not rank's (rank >= 0). */
static int slot_of_pod(topo_cache *c, const char *id, const char *pod_uid, int32_t rank,
                       int32_t *slot, char **values, topo_err *err)
{
    sqlite3_stmt *st;
    int found, error = first_row(&st, c, CACHE_STMT_SLOT_OF_POD, id, pod_uid, 0, &found,
                                 "read slot", err);
    *slot = -1;
    if (error < 0)
        return error;
    if (found) {
        *slot = (int32_t)sqlite3_column_int(st, 0);
        if (rank >= 0 && rank != *slot)
            error = topo_err_set(err, TOPO_ECONFLICT,
                                 "reservation %s: pod %s holds slot %d, not %d", id, pod_uid,
                                 (int)*slot, (int)rank);
        else
            *values = topo_pool_strdup(c->scratch, (const char *)sqlite3_column_text(st, 1));
    }
    cache_stmt_done(st);
    return error;
}

/* Slot rank when it is free (and still held, or claimed before), else
 * TOPO_ECONFLICT, TOPO_ENOFIT (given back), TOPO_EINVALID (out of range). */
static int free_slot_at(topo_cache *c, const char *id, int32_t rank, int64_t nslots,
                        int free_open, char **values, topo_err *err)
{
    sqlite3_stmt *st;
    int found, error;
    if (rank >= nslots)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: rank %d out of range (%lld slots)",
                            id, (int)rank, (long long)nslots);
    if ((error = first_row(&st, c, CACHE_STMT_SLOT_AT, id, NULL, rank, &found, "read slot",
                           err)) < 0)
        return error;
    if (!found)
        error = topo_err_set(err, TOPO_EIO, "reservation %s: slot %d is missing", id, (int)rank);
    else if (!sqlite3_column_int(st, 2))
        error = topo_err_set(err, TOPO_ECONFLICT, "reservation %s: slot %d is held by pod %s", id,
                             (int)rank, (const char *)sqlite3_column_text(st, 1));
    else if (!free_open && sqlite3_column_type(st, 1) == SQLITE_NULL)
        error = lapsed(err, id);
    else
        *values = topo_pool_strdup(c->scratch, (const char *)sqlite3_column_text(st, 0));
    cache_stmt_done(st);
    return error;
}

/* The first free slot (among those claimed before once the free ones were
 * given back), else TOPO_ENOFIT. */
static int next_free_slot(topo_cache *c, const char *id, int64_t nslots, int free_open,
                          int32_t *slot, char **values, topo_err *err)
{
    sqlite3_stmt *st;
    int found, error = first_row(&st, c, CACHE_STMT_SLOT_NEXT_FREE, id, NULL, free_open, &found,
                                 "read slot", err);
    if (error < 0)
        return error;
    if (!found) {
        error = free_open ? topo_err_set(err, TOPO_ENOFIT,
                                         "reservation %s: all %lld slots are claimed", id,
                                         (long long)nslots)
                          : lapsed(err, id);
    } else {
        *slot = (int32_t)sqlite3_column_int(st, 0);
        *values = topo_pool_strdup(c->scratch, (const char *)sqlite3_column_text(st, 1));
    }
    cache_stmt_done(st);
    return error;
}

/* Slot `slot` becomes pod_uid's, and the reservation records the claim. */
static int take_slot(topo_cache *c, const char *id, int32_t slot, const char *pod_uid,
                     int64_t now, topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_SLOT_CLAIM, err);
    int error;
    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, id, err)) < 0 ||
        (error = cache_bind_int(c, st, 2, slot, err)) < 0 ||
        (error = cache_bind_text(c, st, 3, pod_uid, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    if ((error = cache_stmt_run(c, st, "claim slot", err)) < 0)
        return error;
    /* A pod arrived: the PodSet's other pods are on their way, so its free
     * slots stay held for another unclaimed_ttl. Not rewritten when it
     * holds this second already (the claims of one PodSet come together):
     * a row left as it is costs its commit no page. */
    if ((st = cache_stmt_get(c, CACHE_STMT_RES_CLAIMED_AT, err)) == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, id, err)) < 0 ||
        (error = cache_bind_int(c, st, 2, now, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    return cache_stmt_run(c, st, "record the claim", err);
}

int topo_cache_reservation_claim(topo_cache_slot *out, topo_cache *cache, const char *id,
                                 const char *pod_uid, int32_t rank, int64_t now,
                                 topo_pool *pool, topo_err *err)
{
    int64_t nslots = 0;
    int32_t slot = -1;
    char *values = NULL;
    int error, free_open = 0;

    memset(out, 0, sizeof(*out));
    out->index = -1;
    if (cache == NULL || !cache_nonempty(id) || !cache_nonempty(pod_uid) || pool == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation claim: missing argument");
    topo_pool_clear(cache->scratch);
    if ((error = cache_op_begin(cache, cache_reservation_mode(cache), err)) < 0)
        return error;

    if ((error = read_live(cache, id, now, &nslots, &free_open, err)) < 0 ||
        (error = slot_of_pod(cache, id, pod_uid, rank, &slot, &values, err)) < 0)
        goto end;
    if (slot < 0) {
        if (rank >= 0) {
            slot = rank;
            error = free_slot_at(cache, id, rank, nslots, free_open, &values, err);
        } else {
            error = next_free_slot(cache, id, nslots, free_open, &slot, &values, err);
        }
        if (error < 0 || (error = take_slot(cache, id, slot, pod_uid, now, err)) < 0)
            goto end;
    }
    if (values == NULL) {
        error = topo_err_nomem(err, "cache");
        goto end;
    }
    if ((error = values_from_text(&out->values, &out->nvalues, values, pool, err)) < 0)
        goto end;
    if ((out->pod_uid = topo_pool_strdup(pool, pod_uid)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto end;
    }
    out->index = slot;

end:
    error = cache_op_end(cache, cache_reservation_mode(cache), error, err);
    if (error < 0) {
        memset(out, 0, sizeof(*out));
        out->index = -1;
    }
    return error;
}

/* A one-statement reservation write with one bound key; *out_changes rows. */
int cache_write_one(topo_cache *c, cache_stmt which, const char *text, int64_t num, int use_num,
                     size_t *out_changes, const char *what, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error;

    if (out_changes != NULL)
        *out_changes = 0;
    if (c == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if (!use_num && !cache_nonempty(text))
        return topo_err_set(err, TOPO_EINVALID, "cache: %s: empty key", what);
    if ((error = cache_op_begin(c, cache_reservation_mode(c), err)) < 0)
        return error;
    if ((st = cache_stmt_get(c, which, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    error = use_num ? cache_bind_int(c, st, 1, num, err) : cache_bind_text(c, st, 1, text, err);
    if (error < 0)
        goto end;
    error = cache_stmt_run(c, st, what, err);
    st = NULL;
    if (error == 0 && out_changes != NULL)
        *out_changes = (size_t)sqlite3_changes(c->db);

end:
    cache_stmt_done(st);
    return cache_op_end(c, cache_reservation_mode(c), error, err);
}

int topo_cache_reservation_unclaim(topo_cache *cache, const char *id, int32_t slot,
                                   const char *claimant, int *out_released, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error;
    if (out_released != NULL)
        *out_released = 0;
    if (cache == NULL || !cache_nonempty(id) || !cache_nonempty(claimant))
        return topo_err_set(err, TOPO_EINVALID, "cache: unclaim: missing argument");
    if ((error = cache_op_begin(cache, cache_reservation_mode(cache), err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_SLOT_UNCLAIM, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(cache, st, 1, id, err)) < 0 ||
        (error = cache_bind_int(cache, st, 2, slot, err)) < 0 ||
        (error = cache_bind_text(cache, st, 3, claimant, err)) < 0)
        goto end;
    error = cache_stmt_run(cache, st, "unclaim slot", err);
    st = NULL;
    if (error == 0 && out_released != NULL)
        *out_released = sqlite3_changes(cache->db) > 0;
end:
    cache_stmt_done(st);
    return cache_op_end(cache, cache_reservation_mode(cache), error, err);
}

int topo_cache_reservation_release_pod(topo_cache *cache, const char *pod_uid,
                                       size_t *out_released, topo_err *err)
{
    return cache_write_one(cache, CACHE_STMT_SLOT_RELEASE_POD, pod_uid, 0, 0, out_released,
                     "release slots", err);
}

int topo_cache_reservation_delete(topo_cache *cache, const char *id, int *out_deleted,
                                  topo_err *err)
{
    size_t n = 0;
    int error = cache_write_one(cache, CACHE_STMT_RES_DELETE, id, 0, 0, &n, "delete reservation", err);
    if (out_deleted != NULL)
        *out_deleted = error == 0 && n > 0;
    return error;
}

int topo_cache_reservation_expire(topo_cache *cache, int64_t now, size_t *out_expired,
                                  topo_err *err)
{
    return cache_write_one(cache, CACHE_STMT_RES_EXPIRE, NULL, now, 1, out_expired,
                     "expire reservations", err);
}

int topo_cache_reservation_gc(topo_cache *cache, int64_t now, size_t *out_deleted,
                              topo_err *err)
{
    return cache_write_one(cache, CACHE_STMT_RES_GC, NULL, now, 1, out_deleted,
                     "collect reservations", err);
}

/* --- binding an arriving pod to its annotated slot ------------------------------------- */

#define ANNOTATION_RESERVATION "topology.topo.io/reservation"
#define ANNOTATION_SLOT "topology.topo.io/slot"

const char *cache_pod_annotation(const topo_cache_pod *p, const char *key)
{
    for (size_t i = 0; i < p->nannotations; i++)
        if (p->annotations[i].key != NULL && strcmp(p->annotations[i].key, key) == 0)
            return p->annotations[i].value;
    return NULL;
}

/* A slot index as the webhook writes it: plain decimal digits, no sign, no
 * spaces, below TOPO_MAX_PODSET_COUNT. -1 when it is anything else. */
/* A slot annotation: a count below the largest PodSet, else -1. */
static int32_t parse_slot(const char *text)
{
    int64_t v = 0;
    return topo_parse_count(&v, text, "slot", 0, TOPO_MAX_PODSET_COUNT - 1, NULL) == 0
               ? (int32_t)v
               : -1;
}

int cache_bind_reserved_slot(topo_cache *c, const topo_cache_pod *p, topo_err *err)
{
    const char *id = cache_pod_annotation(p, ANNOTATION_RESERVATION);
    int32_t slot = parse_slot(cache_pod_annotation(p, ANNOTATION_SLOT));
    sqlite3_stmt *st;
    int error, own = 0;

    /* Malformed or missing annotations are the webhook's business, not a
     * reason to refuse the pod; a finished pod needs no capacity held. */
    if (!cache_nonempty(id) || strlen(id) > TOPO_MAX_RESERVATION_ID || slot < 0 ||
        !cache_nonempty(p->uid))
        return 0;
    if (topo_pod_phase_finished(p->phase))
        return 0;
    /* A reservation another replica made: this cache holds it too from now. */
    if ((error = cache_adopt_reservation(c, p, id, err)) < 0)
        return error;
    /* Anyone can copy a placed pod's annotations: only topo's own claim,
     * on a pod of the reservation's PodSet, takes a slot. */
    if ((error = cache_claim_is_own(&own, c, p, id, cache_pod_annotation(p, ANNOTATION_SLOT),
                                    err)) < 0 ||
        !own)
        return error;
    if ((st = cache_stmt_get(c, CACHE_STMT_SLOT_BIND, err)) == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, id, err)) < 0 ||
        (error = cache_bind_int(c, st, 2, slot, err)) < 0 ||
        (error = cache_bind_text(c, st, 3, p->uid, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    /* No row changes when the reservation or slot does not exist, the slot
     * is another live pod's, or the pod holds another slot of it. */
    return cache_stmt_run(c, st, "bind reserved slot", err);
}

/* --- reading ---------------------------------------------------------------------------- */

/* A RES_GET / RES_ALL row and its slots, into pool. */
static int load_reservation(topo_cache_reservation *out, topo_cache *c, sqlite3_stmt *row,
                            topo_pool *pool, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    json_t *levels = NULL, *requests = NULL, *assignment = NULL, *domain = NULL;
    const char **lv = NULL, **alv = NULL, **dom = NULL;
    topo_resource *req = NULL;
    topo_cache_slot *slots = NULL;
    size_t cap = 0;
    char *last_text = NULL; /* the previous slot's domain, as stored */
    int error, rc;

    memset(out, 0, sizeof(*out));
    if ((out->id = cache_column_strdup(row, 0, 0, pool)) == NULL ||
        (out->podset_key = cache_column_strdup(row, 1, 0, pool)) == NULL ||
        (out->topology_name = cache_column_strdup(row, 2, 0, pool)) == NULL ||
        (out->assignment_json = cache_column_strdup(row, 5, 0, pool)) == NULL ||
        (out->shape = cache_column_strdup(row, 8, 0, pool)) == NULL ||
        (out->request = cache_column_strdup(row, 9, 0, pool)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto cleanup;
    }
    out->created_at = (int64_t)sqlite3_column_int64(row, 6);
    out->expires_at = (int64_t)sqlite3_column_int64(row, 7);
    out->unclaimed_ttl = (int64_t)sqlite3_column_int64(row, 10);
    out->claimed_at = (int64_t)sqlite3_column_int64(row, 11);
    out->gen_term = (int64_t)sqlite3_column_int64(row, 12);
    out->gen_seq = (int64_t)sqlite3_column_int64(row, 13);
    if ((error = cache_column_json(&levels, row, 3, "reservations.levels", err)) < 0 ||
        (error = cache_column_json(&requests, row, 4, "reservations.requests", err)) < 0 ||
        (error = cache_column_json(&assignment, row, 5, "reservations.assignment", err)) < 0 ||
        (error = cache_json_to_strings(&lv, &out->nlevels, levels, pool, err)) < 0 ||
        (error = cache_json_to_strings(&alv, &out->nassignment_levels,
                                       json_object_get(assignment, "levels"), pool, err)) < 0 ||
        (error = cache_json_to_resources(&req, &out->nrequests, requests, pool, err)) < 0 ||
        (error = cache_column_json(&domain, row, 14, "reservations.domain", err)) < 0 ||
        (error = cache_json_to_strings(&dom, &out->ndomain, domain, pool, err)) < 0)
        goto cleanup;
    out->levels = lv;
    out->assignment_levels = alv;
    out->requests = req;
    out->domain = dom;

    if ((st = cache_stmt_get(c, CACHE_STMT_RES_SLOTS, err)) == NULL) {
        error = cache_stmt_error(err);
        goto cleanup;
    }
    if ((error = cache_bind_text(c, st, 1, out->id, err)) < 0)
        goto cleanup;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((error = topo_pool_array_reserve(pool, (void **)&slots, &cap, out->nslots,
                                             out->nslots + 1, sizeof(*slots))) != 0) {
            error = topo_err_set(err, error, "cache: %s", topo_strerror(error));
            goto cleanup;
        }
        topo_cache_slot *s = &slots[out->nslots];
        s->index = (int32_t)sqlite3_column_int(st, 0);
        const char *values;
        if ((error = cache_column_text(&values, st, 1, err)) < 0)
            goto cleanup;
        /* A domain's slots are consecutive: its values are parsed once and
         * shared (a 64-pod PodSet on one node is one parse, not 64). */
        if (last_text != NULL && strcmp(values, last_text) == 0) {
            s->values = s[-1].values;
            s->nvalues = s[-1].nvalues;
        } else if ((error = values_from_text(&s->values, &s->nvalues, values, pool, err)) < 0) {
            goto cleanup;
        } else if ((last_text = topo_pool_strdup(pool, values)) == NULL) {
            error = topo_err_nomem(err, "cache");
            goto cleanup;
        }
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
            if ((s->pod_uid = cache_column_strdup(st, 2, 1, pool)) == NULL) {
                error = topo_err_nomem(err, "cache");
                goto cleanup;
            }
            out->nclaimed++;
        }
        out->nslots++;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(c, rc, "read slots", err);
    out->slots = slots;

cleanup:
    cache_stmt_done(st);
    json_decref(levels);
    json_decref(domain);
    json_decref(requests);
    json_decref(assignment);
    return error;
}

static int get_reservation(topo_cache_reservation *out, topo_cache *c, const char *id,
                           const char *podset_key, topo_pool *pool, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, found = 0;

    memset(out, 0, sizeof(*out));
    if (c == NULL || pool == NULL || !cache_nonempty(id ? id : podset_key))
        return topo_err_set(err, TOPO_EINVALID, "reservation get: missing argument");
    /* By id, or by PodSet in one lookup (its key is unique and indexed). */
    if ((error = cache_read_begin(c, id ? CACHE_STMT_RES_GET : CACHE_STMT_RES_GET_BY_KEY, &st,
                                  err)) < 0)
        return error;
    if ((error = cache_bind_text(c, st, 1, id ? id : podset_key, err)) < 0 ||
        (error = step_row(c, st, &found, "read reservation", err)) < 0)
        goto end;
    if (!found) {
        error = id ? topo_err_set(err, TOPO_ENOTFOUND, "no reservation %s", id)
                   : topo_err_set(err, TOPO_ENOTFOUND, "no reservation for PodSet %s", podset_key);
        goto end;
    }
    error = load_reservation(out, c, st, pool, err);

end:
    return cache_read_end(c, st, error, err);
}

int topo_cache_reservation_get(topo_cache_reservation *out, topo_cache *cache, const char *id,
                               topo_pool *pool, topo_err *err)
{
    if (id == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation get: missing id");
    return get_reservation(out, cache, id, NULL, pool, err);
}

int topo_cache_reservation_get_by_podset(topo_cache_reservation *out, topo_cache *cache,
                                         const char *podset_key, topo_pool *pool,
                                         topo_err *err)
{
    if (podset_key == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation get: missing PodSet key");
    return get_reservation(out, cache, NULL, podset_key, pool, err);
}

int topo_cache_reservation_foreach(topo_cache *cache, topo_cache_reservation_fn fn,
                                   void *payload, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (cache == NULL || fn == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation foreach: missing argument");
    if ((error = cache_read_begin(cache, CACHE_STMT_RES_ALL, &st, err)) < 0)
        return error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        topo_cache_reservation r;
        topo_pool_clear(cache->scratch);
        if ((error = load_reservation(&r, cache, st, cache->scratch, err)) < 0 ||
            (error = fn(&r, payload)) != 0)
            goto end;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, "read reservations", err);

end:
    return cache_read_end(cache, st, error, err);
}

int topo_cache_requests_hold_capacity(const topo_resource *requests, size_t nrequests)
{
    for (size_t i = 0; i < nrequests; i++)
        if (requests[i].amount > 0)
            return 1;
    return 0;
}

/* One row of a slot read, decoded and handed to the caller's callback;
 * its strings live in cache->scratch, cleared before each row. */
typedef int (*slot_row_fn)(topo_cache *cache, sqlite3_stmt *st, void *walk, topo_err *err);

/* One kind of slot read (reserved, unclaimed): its statement, its row
 * decoder and its words in messages. */
typedef struct slot_read {
    cache_stmt which;
    slot_row_fn row;
    const char *missing; /* "reserved foreach: missing argument" */
    const char *what;    /* "read reserved slots" */
} slot_read;

/* A public walk: the caller's callback (the one its slot_read's row calls)
 * and payload. */
typedef struct slot_walk {
    union {
        topo_cache_reserved_fn reserved;
        topo_cache_unclaimed_fn unclaimed;
    } fn;
    void *payload;
} slot_walk;

/* Reads the slots how->which finds alive at now, a row at a time; a
 * missing cache or callback (has_fn 0) is refused first. */
static int foreach_slot(topo_cache *cache, const slot_read *how, int64_t now, int has_fn,
                        slot_walk *walk, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (cache == NULL || !has_fn)
        return topo_err_set(err, TOPO_EINVALID, "%s", how->missing);
    if ((error = cache_read_begin(cache, how->which, &st, err)) < 0)
        return error;
    if ((error = cache_bind_int(cache, st, 1, now, err)) < 0)
        goto end;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        topo_pool_clear(cache->scratch);
        if ((error = how->row(cache, st, walk, err)) != 0)
            goto end;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, how->what, err);

end:
    return cache_read_end(cache, st, error, err);
}

static int reserved_row(topo_cache *cache, sqlite3_stmt *st, void *walk, topo_err *err)
{
    const slot_walk *w = walk;
    json_t *levels = NULL, *assignment = NULL, *requests = NULL, *values = NULL;
    const char **lv = NULL, **alv = NULL, **vals = NULL;
    topo_resource *req = NULL;
    topo_cache_reserved r;
    int error = 0;

    memset(&r, 0, sizeof(r));
    if ((r.reservation_id = cache_column_strdup(st, 0, 0, cache->scratch)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto end;
    }
    if ((error = cache_column_json(&levels, st, 1, "reservations.levels", err)) < 0 ||
        (error = cache_column_json(&assignment, st, 2, "reservations.assignment", err)) < 0 ||
        (error = cache_column_json(&requests, st, 3, "reservations.requests", err)) < 0 ||
        (error = cache_column_json(&values, st, 4, "reservation_slots.domain_values", err)) < 0 ||
        (error = cache_json_to_strings(&lv, &r.nlevels, levels, cache->scratch, err)) < 0 ||
        (error = cache_json_to_strings(&alv, &r.nassignment_levels,
                                       json_object_get(assignment, "levels"), cache->scratch,
                                       err)) < 0 ||
        (error = cache_json_to_strings(&vals, &r.nvalues, values, cache->scratch, err)) < 0 ||
        (error = cache_json_to_resources(&req, &r.nrequests, requests, cache->scratch, err)) < 0)
        goto end;
    r.levels = lv;
    r.assignment_levels = alv;
    r.values = vals;
    r.requests = req;
    r.count = (int32_t)sqlite3_column_int(st, 5);
    if (topo_cache_requests_hold_capacity(r.requests, r.nrequests))
        error = w->fn.reserved(&r, w->payload);

end:
    json_decref(levels);
    json_decref(assignment);
    json_decref(requests);
    json_decref(values);
    return error;
}

int topo_cache_foreach_reserved(topo_cache *cache, int64_t now, topo_cache_reserved_fn fn,
                                void *payload, topo_err *err)
{
    static const slot_read reserved = {CACHE_STMT_RESERVED, reserved_row,
                                       "reserved foreach: missing argument",
                                       "read reserved slots"};
    slot_walk w = {.fn.reserved = fn, .payload = payload};
    return foreach_slot(cache, &reserved, now, fn != NULL, &w, err);
}

static int unclaimed_row(topo_cache *cache, sqlite3_stmt *st, void *walk, topo_err *err)
{
    const slot_walk *w = walk;
    json_t *requests = NULL;
    topo_resource *req = NULL;
    topo_cache_unclaimed u;
    int error = 0;

    memset(&u, 0, sizeof(u));
    if ((u.namespace_ = cache_column_strdup(st, 0, 0, cache->scratch)) == NULL ||
        (u.reservation_id = cache_column_strdup(st, 1, 0, cache->scratch)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto end;
    }
    if ((error = cache_column_json(&requests, st, 2, "reservations.requests", err)) < 0 ||
        (error = cache_json_to_resources(&req, &u.nrequests, requests, cache->scratch, err)) < 0)
        goto end;
    u.requests = req;
    u.count = (int32_t)sqlite3_column_int(st, 3);
    if (topo_cache_requests_hold_capacity(u.requests, u.nrequests))
        error = w->fn.unclaimed(&u, w->payload);

end:
    json_decref(requests);
    return error;
}

int topo_cache_foreach_unclaimed(topo_cache *cache, int64_t now, topo_cache_unclaimed_fn fn,
                                 void *payload, topo_err *err)
{
    static const slot_read unclaimed = {CACHE_STMT_UNCLAIMED, unclaimed_row,
                                        "unclaimed foreach: missing argument",
                                        "read unclaimed slots"};
    slot_walk w = {.fn.unclaimed = fn, .payload = payload};
    return foreach_slot(cache, &unclaimed, now, fn != NULL, &w, err);
}
