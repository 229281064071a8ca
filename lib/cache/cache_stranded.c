/* Pods waiting for the node of their slot (topo_cache_foreach_stranded):
 * what topo-webhook checks every ungater round for a node that failed
 * under a pod it pinned there before kube-scheduler bound it. Read every
 * few seconds at any cluster size, so only from the index of the unbound
 * pods (CACHE_STRANDED_SQL). */
#include <string.h>

#include "topo/json.h"

#include "cache_internal.h"

/* The domain the pod was sent to: the slot-th pod of the assignment its
 * own topology.topo.io/assignment annotation (column 7) carries, where its
 * nodeSelector pins it. The slot may have moved since (a failed node
 * replaced) while the pod stays pinned where it was; an annotation that is
 * absent or does not read leaves the slot's domain. */
static void pinned_domain(topo_cache_stranded *out, sqlite3_stmt *st, topo_pool *pool)
{
    const char *text = (const char *)sqlite3_column_text(st, 7);
    json_error_t jerr;
    json_t *doc = NULL;
    if (text != NULL)
        if (topo_json_load(&doc, text, strlen(text), 0, &jerr) != 0) /* doc NULL when it fails */
            doc = NULL;
    topo_assignment a;
    int64_t left = out->slot;
    if (doc != NULL && cache_decode_assignment(&a, doc, pool, NULL) == 0 &&
        a.nlevels == out->nassignment_levels) {
        for (size_t d = 0; d < a.ndomains; left -= a.domains[d].count, d++)
            if (left < a.domains[d].count) {
                out->values = a.domains[d].values;
                out->nvalues = a.nlevels;
                break;
            }
    }
    json_decref(doc);
}

/* One row as the callback sees it, its strings in the cache's scratch pool. */
static int load_row(topo_cache_stranded *out, topo_cache *c, sqlite3_stmt *st, topo_err *err)
{
    json_t *levels = NULL, *values = NULL, *tlevels = NULL, *domain = NULL;
    const char **lv = NULL, **vals = NULL, **tl = NULL, **dom = NULL;
    int error = 0;

    memset(out, 0, sizeof(*out));
    if ((out->pod_uid = cache_column_strdup(st, 0, 0, c->scratch)) == NULL ||
        (out->namespace_ = cache_column_strdup(st, 1, 0, c->scratch)) == NULL ||
        (out->pod_name = cache_column_strdup(st, 2, 0, c->scratch)) == NULL ||
        (out->reservation_id = cache_column_strdup(st, 3, 0, c->scratch)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto cleanup;
    }
    out->slot = (int32_t)sqlite3_column_int(st, 4);
    if ((error = cache_column_json(&values, st, 5, "reservation_slots.domain_values", err)) < 0 ||
        (error = cache_column_json(&levels, st, 6, "reservations.assignment levels", err)) < 0 ||
        (error = cache_json_to_strings(&vals, &out->nvalues, values, c->scratch, err)) < 0 ||
        (error = cache_json_to_strings(&lv, &out->nassignment_levels, levels, c->scratch,
                                       err)) < 0 ||
        (error = cache_column_json(&tlevels, st, 8, "reservations.levels", err)) < 0 ||
        (error = cache_column_json(&domain, st, 9, "reservations.domain", err)) < 0 ||
        (error = cache_json_to_strings(&tl, &out->nlevels, tlevels, c->scratch, err)) < 0 ||
        (error = cache_json_to_strings(&dom, &out->ndomain, domain, c->scratch, err)) < 0)
        goto cleanup;
    out->values = vals;
    out->assignment_levels = lv;
    out->levels = tl;
    out->domain = dom;
    pinned_domain(out, st, c->scratch);

cleanup:
    json_decref(levels);
    json_decref(values);
    json_decref(tlevels);
    json_decref(domain);
    return error;
}

int topo_cache_foreach_stranded(topo_cache *cache, topo_cache_stranded_fn fn, void *payload,
                                topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (cache == NULL || fn == NULL)
        return topo_err_set(err, TOPO_EINVALID, "stranded foreach: missing argument");
    if ((error = cache_op_begin(cache, CACHE_OP_READ, err)) < 0)
        return error;
    if ((st = cache_stmt_get(cache, CACHE_STMT_STRANDED, err)) == NULL) {
        error = cache_stmt_error(err);
        goto end;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        topo_cache_stranded s;
        topo_pool_clear(cache->scratch);
        if ((error = load_row(&s, cache, st, err)) < 0 || (error = fn(&s, payload)) != 0)
            goto end;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, "read pods waiting on their slots", err);

end:
    cache_stmt_done(st);
    return cache_op_end(cache, CACHE_OP_READ, error, err);
}
