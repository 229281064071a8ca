/* Moving a reservation's slots to other domains (failed-node replacement,
 * docs/webhook.md "When nodes fail"): the placer's replacement
 * (topo_cache_reservation_reassign) and a record of a newer generation seen
 * on a pod (cache_adopt.c) go through the same checks and the same write.
 *
 * Slot i stays the i-th pod of the assignment's domains in their order, as
 * at creation: the new assignment may name a domain twice and out of sorted
 * order (slot 3 moved from n9 to n11 while slots 0-2 stay on n9), so it is
 * expanded as written, never merged or sorted. Every slot keeps its index;
 * a moved slot keeps its claim only as CACHE_CLAIM_MOVES says. */
#include "cache_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/json.h"
#include "topo/limits.h"

/* The slots assignment a gives (one per pod), or TOPO_EINVALID/ELIMIT when
 * it is not an assignment: no levels or domains, a count not positive, an
 * empty value. */
static int assignment_slots(size_t *out, const char *id, const topo_assignment *a, topo_err *err)
{
    size_t total = 0;
    if (a == NULL || a->nlevels == 0 || a->nlevels > TOPO_MAX_LEVELS || a->levels == NULL ||
        a->ndomains == 0 || a->domains == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation %s: empty assignment", id);
    for (size_t i = 0; i < a->nlevels; i++)
        if (!cache_nonempty(a->levels[i]))
            return topo_err_set(err, TOPO_EINVALID, "reservation %s: assignment levels[%zu] is "
                                                    "empty", id, i);
    for (size_t d = 0; d < a->ndomains; d++) {
        if (a->domains[d].count <= 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "reservation %s: domains[%zu].count must be positive", id, d);
        for (size_t i = 0; i < a->nlevels; i++)
            if (a->domains[d].values == NULL || !cache_nonempty(a->domains[d].values[i]))
                return topo_err_set(err, TOPO_EINVALID,
                                    "reservation %s: domains[%zu].values[%zu] is empty", id, d, i);
        total += (size_t)a->domains[d].count;
        if (total > TOPO_MAX_PODSET_COUNT)
            return topo_err_set(err, TOPO_ELIMIT, "reservation %s: more than %d slots", id,
                                TOPO_MAX_PODSET_COUNT);
    }
    *out = total;
    return 0;
}

/* Whether stored JSON array arr holds exactly the strings v[0..n). */
static int same_strings(const json_t *arr, const char *const *v, size_t n)
{
    if (!json_is_array(arr) || json_array_size(arr) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (s == NULL || v[i] == NULL || strcmp(s, v[i]) != 0)
            return 0;
    }
    return 1;
}

/* What the reservation holds now, checked against the request. */
static int check_current(topo_cache *c, const topo_cache_reservation_spec *s, int64_t term,
                         int64_t seq, size_t nslots, topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_RES_CURRENT, err);
    json_t *levels = NULL, *assignment = NULL;
    int error, rc;

    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, s->id, err)) < 0)
        goto end;
    if ((rc = sqlite3_step(st)) == SQLITE_DONE) {
        error = topo_err_set(err, TOPO_ENOTFOUND, "no reservation %s", s->id);
        goto end;
    }
    if (rc != SQLITE_ROW) {
        error = cache_sql_error(c, rc, "read reservation", err);
        goto end;
    }
    if ((error = cache_column_json(&levels, st, 1, "reservations.levels", err)) < 0 ||
        (error = cache_column_json(&assignment, st, 2, "reservations.assignment", err)) < 0)
        goto end;
    const char *key = (const char *)sqlite3_column_text(st, 0);
    int64_t cur_term = sqlite3_column_int64(st, 3), cur_seq = sqlite3_column_int64(st, 4);
    int64_t have = sqlite3_column_int64(st, 5);
    if (s->podset_key != NULL && (key == NULL || strcmp(key, s->podset_key) != 0))
        error = topo_err_set(err, TOPO_EINVALID, "reservation %s: of PodSet %s, not %s", s->id,
                             key ? key : "?", s->podset_key);
    else if (s->levels != NULL && !same_strings(levels, s->levels, s->nlevels))
        error = topo_err_set(err, TOPO_EINVALID, "reservation %s: placed in other levels",
                             s->id);
    else if (term < cur_term || (term == cur_term && seq <= cur_seq))
        error = topo_err_set(err, TOPO_ECONFLICT,
                             "reservation %s: generation [%lld, %lld] is not newer than its "
                             "[%lld, %lld]",
                             s->id, (long long)term, (long long)seq, (long long)cur_term,
                             (long long)cur_seq);
    else if (!same_strings(json_object_get(assignment, "levels"), s->assignment->levels,
                           s->assignment->nlevels))
        error = topo_err_set(err, TOPO_EINVALID,
                             "reservation %s: the assignment must keep the levels of its "
                             "assignment",
                             s->id);
    else if ((int64_t)nslots != have)
        error = topo_err_set(err, TOPO_EINVALID,
                             "reservation %s: the assignment places %zu pods, the reservation "
                             "holds %lld slots",
                             s->id, nslots, (long long)have);
end:
    cache_stmt_done(st);
    json_decref(levels);
    json_decref(assignment);
    return error;
}

int cache_reservation_reassign(topo_cache *c, const topo_cache_reservation_spec *s,
                               int64_t gen_term, int64_t gen_seq, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    json_t *encoded = NULL;
    size_t nslots = 0;
    int error;

    if (s == NULL || !cache_nonempty(s->id))
        return topo_err_set(err, TOPO_EINVALID, "reservation reassign: missing id");
    if (gen_term < 0 || gen_term > TOPO_CACHE_GEN_MAX || gen_seq < 0 ||
        gen_seq > TOPO_CACHE_GEN_MAX)
        return topo_err_set(err, TOPO_EINVALID,
                            "reservation %s: generation out of range (0..2^53)", s->id);
    if ((error = assignment_slots(&nslots, s->id, s->assignment, err)) < 0 ||
        (error = check_current(c, s, gen_term, gen_seq, nslots, err)) < 0)
        return error;
    topo_json_alloc_watch();
    if (s->assignment_json == NULL &&
        (encoded = topo_codec_assignment_json(s->assignment)) == NULL)
        return topo_json_alloc_failed()
                   ? topo_err_nomem(err, "cache")
                   : topo_err_set(err, TOPO_EINVALID,
                                  "reservation %s: not encodable (invalid UTF-8?)", s->id);
    /* slot i: the i-th pod of the assignment, in its order (a slot that
     * holds its domain already is left as it is) */
    if ((error = cache_slots_write(c, CACHE_STMT_SLOT_MOVE, s->id, s->assignment, NULL, 0,
                                   err)) < 0)
        goto end;
    if ((st = cache_stmt_get(c, CACHE_STMT_RES_REASSIGN, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    if ((error = cache_bind_text(c, st, 1, s->id, err)) < 0 ||
        (error = encoded != NULL ? cache_bind_json(c, st, 2, encoded, err)
                                 : cache_bind_text(c, st, 2, s->assignment_json, err)) < 0 ||
        (error = cache_bind_int(c, st, 3, gen_term, err)) < 0 ||
        (error = cache_bind_int(c, st, 4, gen_seq, err)) < 0)
        goto end;
    error = cache_stmt_run(c, st, "reassign reservation", err);
    st = NULL;
end:
    cache_stmt_done(st);
    json_decref(encoded);
    return error;
}

int topo_cache_reservation_reassign(topo_cache *cache, const char *id,
                                    const topo_assignment *assignment, const char *assignment_json,
                                    int64_t gen_term, int64_t gen_seq, topo_err *err)
{
    topo_cache_reservation_spec s = {0};
    int error, mode;

    if (cache == NULL || !cache_nonempty(id) || assignment == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation reassign: missing argument");
    s.id = id;
    s.assignment = assignment;
    s.assignment_json = assignment_json;
    /* Durable as reservation_create is: a replacement signed onto a pod
     * must not be lost with the process. */
    mode = cache_reservation_mode(cache);
    if ((error = cache_op_begin(cache, mode, err)) < 0)
        return error;
    error = cache_reservation_reassign(cache, &s, gen_term, gen_seq, err);
    return cache_op_end(cache, mode, error, err);
}
