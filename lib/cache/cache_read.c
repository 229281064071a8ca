/* Reading nodes, pods and jobs back: rows to model structs, per-row
 * callbacks over one consistent read, and single rows by key. */
#include "cache_internal.h"

#include <string.h>

static int row_taints(topo_taint **out, size_t *out_n, const json_t *arr, topo_pool *pool,
                      topo_err *err)
{
    topo_taint *t;
    size_t n;

    *out = NULL;
    *out_n = 0;
    if (!json_is_array(arr))
        return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: taints");
    if ((n = json_array_size(arr)) == 0)
        return 0;
    if ((t = topo_pool_calloc(pool, n, sizeof(*t))) == NULL)
        return topo_err_nomem(err, "cache");
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(arr, i);
        const json_t *k = json_object_get(o, "key"), *v = json_object_get(o, "value"),
                     *e = json_object_get(o, "effect");
        if (!json_is_string(k) || !json_is_string(e) || (v != NULL && !json_is_string(v)))
            return topo_err_set(err, TOPO_EINVALID, "cache: damaged row: taints[%zu]", i);
        if ((t[i].key = topo_pool_strdup(pool, json_string_value(k))) == NULL ||
            (t[i].effect = topo_pool_strdup(pool, json_string_value(e))) == NULL ||
            (v != NULL && (t[i].value = topo_pool_strdup(pool, json_string_value(v))) == NULL))
            return topo_err_nomem(err, "cache");
    }
    *out = t;
    *out_n = n;
    return 0;
}

int cache_row_node(topo_node_spec *out, const char **out_rv, sqlite3_stmt *st, topo_pool *pool,
                   topo_err *err)
{
    json_t *labels = NULL, *alloc = NULL, *taints = NULL;
    topo_kv *kv = NULL;
    topo_resource *res = NULL;
    topo_taint *t = NULL;
    const char *rv;
    int error;

    memset(out, 0, sizeof(*out));
    if ((out->name = cache_column_strdup(st, 0, 0, pool)) == NULL ||
        (rv = cache_column_strdup(st, 6, 0, pool)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto cleanup;
    }
    if ((error = cache_column_json(&labels, st, 1, "nodes.labels", err)) < 0 ||
        (error = cache_column_json(&alloc, st, 2, "nodes.allocatable", err)) < 0 ||
        (error = cache_column_json(&taints, st, 3, "nodes.taints", err)) < 0 ||
        (error = cache_json_to_kv(&kv, &out->nlabels, labels, pool, err)) < 0 ||
        (error = cache_json_to_resources(&res, &out->nallocatable, alloc, pool, err)) < 0 ||
        (error = row_taints(&t, &out->ntaints, taints, pool, err)) < 0)
        goto cleanup;
    out->labels = kv;
    out->allocatable = res;
    out->taints = t;
    out->unschedulable = sqlite3_column_int(st, 4) != 0;
    out->ready = sqlite3_column_int(st, 5) != 0;
    out->ready_missing = sqlite3_column_int(st, 7) != 0;
    if (out_rv != NULL)
        *out_rv = rv;

cleanup:
    json_decref(labels);
    json_decref(alloc);
    json_decref(taints);
    return error;
}

/* An optional string of pods.podset (absent in rows stored before it was
 * kept): NULL when absent. */
static int podset_string(const char **out, const json_t *podset, const char *key,
                         topo_pool *pool, topo_err *err)
{
    const char *v = json_string_value(json_object_get(podset, key));
    *out = NULL;
    if (v != NULL && (*out = topo_pool_strdup(pool, v)) == NULL)
        return topo_err_nomem(err, "cache");
    return 0;
}

int cache_row_pod(topo_cache_pod *out, sqlite3_stmt *st, topo_pool *pool, topo_err *err)
{
    json_t *req = NULL, *podset = NULL;
    topo_resource *res = NULL;
    topo_kv *labels = NULL, *annotations = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    if ((out->uid = cache_column_strdup(st, 0, 0, pool)) == NULL ||
        (out->namespace_name = cache_column_strdup(st, 1, 0, pool)) == NULL ||
        (out->name = cache_column_strdup(st, 2, 0, pool)) == NULL ||
        (out->node_name = cache_column_strdup(st, 3, 0, pool)) == NULL ||
        (out->phase = cache_column_strdup(st, 4, 0, pool)) == NULL ||
        (out->resource_version = cache_column_strdup(st, 8, 0, pool)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto cleanup;
    }
    if ((error = cache_column_json(&req, st, 5, "pods.requests", err)) < 0 ||
        (error = cache_column_json(&podset, st, 6, "pods.podset", err)) < 0 ||
        (error = cache_json_to_resources(&res, &out->nrequests, req, pool, err)) < 0 ||
        (error = cache_json_to_kv(&labels, &out->nlabels, json_object_get(podset, "labels"), pool,
                                  err)) < 0 ||
        (error = cache_json_to_kv(&annotations, &out->nannotations,
                                  json_object_get(podset, "annotations"), pool, err)) < 0)
        goto cleanup;
    out->requests = res;
    out->labels = labels;
    out->annotations = annotations;
    out->tas = sqlite3_column_int(st, 7) != 0;
    out->created_at = sqlite3_column_int64(st, 9);
    out->terminating = sqlite3_column_int(st, 10) != 0;
    if ((error = podset_string(&out->owner_uid, podset, "owner", pool, err)) < 0 ||
        (error = podset_string(&out->generate_name, podset, "generateName", pool, err)) < 0)
        goto cleanup;

cleanup:
    json_decref(req);
    json_decref(podset);
    return error;
}

static int row_job(topo_cache_job *out, sqlite3_stmt *st, topo_pool *pool, topo_err *err)
{
    memset(out, 0, sizeof(*out));
    if ((out->uid = cache_column_strdup(st, 0, 0, pool)) == NULL ||
        (out->namespace_name = cache_column_strdup(st, 1, 0, pool)) == NULL ||
        (out->name = cache_column_strdup(st, 2, 0, pool)) == NULL ||
        (out->resource_version = cache_column_strdup(st, 5, 0, pool)) == NULL)
        return topo_err_nomem(err, "cache");
    out->parallelism = (int32_t)sqlite3_column_int(st, 3);
    out->completions =
        sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : (int32_t)sqlite3_column_int(st, 4);
    return 0;
}

/* --- walks ----------------------------------------------------------------------------- */

typedef struct walk {
    topo_cache_kind kind;
    topo_cache_node_fn node_fn;
    topo_cache_pod_fn pod_fn;
    topo_cache_job_fn job_fn;
    void *payload;
} walk;

static int visit_row(topo_cache *c, const walk *w, sqlite3_stmt *st, topo_err *err)
{
    int error;
    topo_pool_clear(c->scratch);
    switch (w->kind) {
    case TOPO_CACHE_NODES: {
        topo_node_spec n;
        const char *rv = NULL;
        if ((error = cache_row_node(&n, &rv, st, c->scratch, err)) < 0)
            return error;
        return w->node_fn(&n, rv, w->payload);
    }
    case TOPO_CACHE_PODS: {
        topo_cache_pod p;
        if ((error = cache_row_pod(&p, st, c->scratch, err)) < 0)
            return error;
        return w->pod_fn(&p, w->payload);
    }
    case TOPO_CACHE_JOBS: {
        topo_cache_job j;
        if ((error = row_job(&j, st, c->scratch, err)) < 0)
            return error;
        return w->job_fn(&j, w->payload);
    }
    }
    return TOPO_EINVALID;
}

static int foreach_row(topo_cache *c, const walk *w, topo_err *err)
{
    static const cache_stmt all[] = {CACHE_STMT_NODE_ALL, CACHE_STMT_POD_ALL, CACHE_STMT_JOB_ALL};
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (c == NULL || (w->node_fn == NULL && w->pod_fn == NULL && w->job_fn == NULL))
        return topo_err_set(err, TOPO_EINVALID, "cache: not open, or no callback");
    if ((error = cache_read_begin(c, all[w->kind], &st, err)) < 0)
        return error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if ((error = visit_row(c, w, st, err)) != 0)
            goto cleanup;
    if (rc != SQLITE_DONE)
        error = cache_sql_error(c, rc, "read", err);

cleanup:
    return cache_read_end(c, st, error, err);
}

int topo_cache_foreach_node(topo_cache *cache, topo_cache_node_fn fn, void *payload,
                            topo_err *err)
{
    walk w = {TOPO_CACHE_NODES, fn, NULL, NULL, payload};
    return foreach_row(cache, &w, err);
}

int topo_cache_foreach_pod(topo_cache *cache, topo_cache_pod_fn fn, void *payload,
                           topo_err *err)
{
    walk w = {TOPO_CACHE_PODS, NULL, fn, NULL, payload};
    return foreach_row(cache, &w, err);
}

int topo_cache_foreach_job(topo_cache *cache, topo_cache_job_fn fn, void *payload,
                           topo_err *err)
{
    walk w = {TOPO_CACHE_JOBS, NULL, NULL, fn, payload};
    return foreach_row(cache, &w, err);
}

/* --- gated PodSets ------------------------------------------------------------------- */

int topo_cache_foreach_gated_podset(topo_cache *cache, topo_cache_gated_podset_fn fn,
                                    void *payload, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (cache == NULL || fn == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open, or no callback");
    if ((error = cache_read_begin(cache, CACHE_STMT_GATED_PODSETS, &st, err)) < 0)
        return error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        topo_cache_pod pod;
        topo_cache_gated_podset ps;
        topo_pool_clear(cache->scratch);
        if ((error = cache_row_pod(&pod, st, cache->scratch, err)) < 0)
            goto cleanup;
        ps.key = sqlite3_column_type(st, 12) == SQLITE_NULL
                     ? NULL
                     : cache_column_strdup(st, 12, 0, cache->scratch);
        if (sqlite3_column_type(st, 12) != SQLITE_NULL && ps.key == NULL) {
            error = topo_err_nomem(err, "cache");
            goto cleanup;
        }
        ps.npods = (size_t)sqlite3_column_int64(st, 11);
        ps.reserved = sqlite3_column_int(st, 13) != 0;
        ps.created_at = pod.created_at;
        ps.oldest = &pod;
        if ((error = fn(&ps, payload)) != 0)
            goto cleanup;
    }
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, "read", err);

cleanup:
    return cache_read_end(cache, st, error, err);
}

int topo_cache_foreach_gated_pod(topo_cache *cache, const char *key, const char *uid,
                                 topo_cache_pod_fn fn, void *payload, topo_err *err)
{
    walk w = {TOPO_CACHE_PODS, NULL, fn, NULL, payload};
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (cache == NULL || fn == NULL || (key == NULL && uid == NULL))
        return topo_err_set(err, TOPO_EINVALID, "cache: gated pods: no PodSet, or no callback");
    if ((error = cache_read_begin(cache, key != NULL ? CACHE_STMT_GATED_PODS : CACHE_STMT_GATED_POD,
                                  &st, err)) < 0)
        return error;
    if ((error = cache_bind_text(cache, st, 1, key != NULL ? key : uid, err)) < 0)
        goto cleanup;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if ((error = visit_row(cache, &w, st, err)) != 0)
            goto cleanup;
    if (rc != SQLITE_DONE)
        error = cache_sql_error(cache, rc, "read", err);

cleanup:
    return cache_read_end(cache, st, error, err);
}

/* --- single rows ----------------------------------------------------------------------- */

/* One row by key: statement which when it is not CACHE_STMT_COUNT, else the
 * kind's lookup by its own key. */
static int get_row(topo_cache *c, topo_cache_kind kind, cache_stmt which, const char *key,
                   void *out, topo_pool *pool, topo_err *err)
{
    static const cache_stmt get[] = {CACHE_STMT_NODE_GET, CACHE_STMT_POD_GET, CACHE_STMT_JOB_GET};
    static const char *const what[] = {"node", "pod", "job"};
    sqlite3_stmt *st = NULL;
    int error, rc;

    if (c == NULL || key == NULL || pool == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: get: missing argument");
    if ((error = cache_read_begin(c, which != CACHE_STMT_COUNT ? which : get[kind], &st, err)) < 0)
        return error;
    if ((error = cache_bind_text(c, st, 1, key, err)) < 0)
        goto cleanup;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        error = topo_err_set(err, TOPO_ENOTFOUND, "cache: no %s \"%s\"", what[kind], key);
    else if (rc != SQLITE_ROW)
        error = cache_sql_error(c, rc, "read", err);
    else if (kind == TOPO_CACHE_NODES)
        error = cache_row_node(out, NULL, st, pool, err);
    else if (kind == TOPO_CACHE_PODS)
        error = cache_row_pod(out, st, pool, err);
    else
        error = row_job(out, st, pool, err);

cleanup:
    return cache_read_end(c, st, error, err);
}

int topo_cache_get_node(topo_node_spec *out, topo_cache *cache, const char *name,
                        topo_pool *pool, topo_err *err)
{
    return get_row(cache, TOPO_CACHE_NODES, CACHE_STMT_COUNT, name, out, pool, err);
}

int topo_cache_get_pod(topo_cache_pod *out, topo_cache *cache, const char *uid,
                       topo_pool *pool, topo_err *err)
{
    return get_row(cache, TOPO_CACHE_PODS, CACHE_STMT_COUNT, uid, out, pool, err);
}

int topo_cache_get_job(topo_cache_job *out, topo_cache *cache, const char *uid,
                       topo_pool *pool, topo_err *err)
{
    return get_row(cache, TOPO_CACHE_JOBS, CACHE_STMT_COUNT, uid, out, pool, err);
}
