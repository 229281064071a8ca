/* Nodes, pods and jobs from Kubernetes objects: decoding (validated, with
 * field paths in messages) into the few fields the cache keeps, and the
 * writes: upserts, deletes, watch events and whole lists. Every object is
 * decoded before anything is written, so a malformed one changes nothing. */
#include "cache_internal.h"
#include "topo/cache_json.h"

#include <string.h>

#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/podreq.h"
#include "topo/json.h"
#include "topo/limits.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

static const char *const object_kinds[] = {"Node", "Pod", "Job"};
static const char *const list_kinds[] = {"NodeList", "PodList", "JobList"};

/* `kind`, when present, must be the expected one. */
static int check_kind(const json_t *obj, const char *path, topo_cache_kind kind, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *kv;
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s",
                            path[0] ? path : "(top level)", topo_decode_type_name(obj));
    kv = json_object_get(obj, "kind");
    if (kv != NULL && (!json_is_string(kv) || strcmp(json_string_value(kv), object_kinds[kind]) != 0))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected %s, got %s%s%s", P(p, path, "kind"),
                            object_kinds[kind], json_is_string(kv) ? "\"" : "",
                            json_is_string(kv) ? json_string_value(kv) : topo_decode_type_name(kv),
                            json_is_string(kv) ? "\"" : "");
    return 0;
}

/* metadata (required), its resourceVersion (optional, "" when absent). */
static int decode_meta(const json_t **meta, const char **rv, const json_t *obj, const char *path,
                       topo_pool *pool, topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX];
    int error;
    *rv = "";
    if ((error = topo_decode_member(meta, obj, "metadata", path, JSON_OBJECT, 1, err)) < 0)
        return error;
    return topo_decode_string(rv, *meta, "resourceVersion", P(mp, path, "metadata"), 0, pool, err);
}

/* A required, non-empty string field. */
static int decode_key(const char **out, const json_t *obj, const char *key, const char *path,
                      topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    int error;
    if ((error = topo_decode_string(out, obj, key, path, 1, pool, err)) < 0)
        return error;
    if ((*out)[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: must not be empty", P(p, path, key));
    return 0;
}

/* --- nodes ---------------------------------------------------------------------------- */

static int decode_node(topo_node_spec *n, const char **rv, const json_t *obj, const char *path,
                       topo_pool *pool, topo_err *err)
{
    const json_t *meta = NULL;
    int error;
    if ((error = check_kind(obj, path, TOPO_CACHE_NODES, err)) < 0 ||
        (error = decode_meta(&meta, rv, obj, path, pool, err)) < 0 ||
        (error = topo_decode_node(n, obj, path, pool, err)) < 0)
        return error;
    return 0;
}

static json_t *labels_json(const topo_kv *kv, size_t n)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj != NULL && i < n; i++) {
        if (json_object_set_new(obj, kv[i].key, json_string(kv[i].value)) < 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

static json_t *taints_json(const topo_taint *t, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++) {
        /* The _new setters take the value's reference even when they fail. */
        json_t *o = json_object();
        if (o == NULL || json_object_set_new(o, "key", json_string(t[i].key)) < 0 ||
            (t[i].value != NULL && json_object_set_new(o, "value", json_string(t[i].value)) < 0) ||
            json_object_set_new(o, "effect", json_string(t[i].effect)) < 0) {
            json_decref(o);
            json_decref(arr);
            return NULL;
        }
        if (json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* Inside an open unit. */
static int store_node(topo_cache *c, const topo_node_spec *n, const char *rv, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    json_t *labels = NULL, *alloc = NULL, *taints = NULL;
    int error;

    if (!cache_nonempty(n->name))
        return topo_err_set(err, TOPO_EINVALID, "metadata.name: required");
    topo_json_alloc_watch();
    if ((labels = labels_json(n->labels, n->nlabels)) == NULL ||
        (alloc = cache_resources_to_json(n->allocatable, n->nallocatable)) == NULL ||
        (taints = taints_json(n->taints, n->ntaints)) == NULL) {
        error = topo_json_alloc_failed()
                    ? topo_err_nomem(err, "cache")
                    : topo_err_set(err, TOPO_EINVALID,
                                   "node \"%s\": labels, allocatable or taints not encodable "
                                   "(invalid UTF-8?)", n->name);
        goto cleanup;
    }
    if ((st = cache_stmt_get(c, CACHE_STMT_NODE_UPSERT, err)) == NULL) {
        error = cache_stmt_error(err);
        goto cleanup;
    }
    if ((error = cache_bind_text(c, st, 1, n->name, err)) < 0 ||
        (error = cache_bind_json(c, st, 2, labels, err)) < 0 ||
        (error = cache_bind_json(c, st, 3, alloc, err)) < 0 ||
        (error = cache_bind_json(c, st, 4, taints, err)) < 0 ||
        (error = cache_bind_int(c, st, 5, n->unschedulable ? 1 : 0, err)) < 0 ||
        (error = cache_bind_int(c, st, 6, n->ready ? 1 : 0, err)) < 0 ||
        (error = cache_bind_text(c, st, 7, rv != NULL ? rv : "", err)) < 0 ||
        (error = cache_bind_int(c, st, 8, n->ready_missing ? 1 : 0, err)) < 0)
        goto cleanup;
    error = cache_stmt_run(c, st, "upsert node", err);
    st = NULL;
    if (error == 0)
        error = cache_relist_mark(c, TOPO_CACHE_NODES, n->name, err);

cleanup:
    cache_stmt_done(st);
    json_decref(labels);
    json_decref(alloc);
    json_decref(taints);
    return error;
}

/* --- pods ----------------------------------------------------------------------------- */

/* The label and annotation keys that tie a pod to its PodSet. */
static int podset_key(const char *key)
{
    static const char *const prefixes[] = {
        "kueue.x-k8s.io/",           "batch.kubernetes.io/",         "jobset.sigs.k8s.io/",
        "leaderworkerset.sigs.k8s.io/", "topology.topo.io/",
    };
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return strcmp(key, "job-name") == 0 || strcmp(key, "controller-uid") == 0;
}

/* The kept pairs of a string map, validated whole. */
static int podset_pairs(const topo_kv **out, size_t *out_n, const json_t *obj, const char *path,
                        topo_pool *pool, topo_err *err)
{
    topo_kv *kv = NULL;
    size_t n = 0, k = 0;
    int error;

    if ((error = topo_decode_kv(&kv, &n, obj, path, pool, err)) < 0)
        return error;
    for (size_t i = 0; i < n; i++)
        if (podset_key(kv[i].key))
            kv[k++] = kv[i];
    *out = k > 0 ? kv : NULL;
    *out_n = k;
    return 0;
}

/* The uid of the pod's controller ownerReference (the first with
 * controller true and a uid, as admission reads it), NULL when none. */
static int decode_owner(const char **out, const json_t *meta, const char *path, topo_pool *pool,
                        topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *refs = NULL;
    int error;

    *out = NULL;
    if ((error = topo_decode_member(&refs, meta, "ownerReferences", path, JSON_ARRAY, 0, err)) < 0)
        return error;
    P(p, path, "ownerReferences");
    for (size_t i = 0; i < json_array_size(refs); i++) {
        const json_t *ref = json_array_get(refs, i);
        const char *uid = NULL;
        int controller = 0;
        topo_decode_path_index(ip, sizeof(ip), p, i);
        if (!json_is_object(ref))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", ip,
                                topo_decode_type_name(ref));
        if ((error = topo_decode_string(&uid, ref, "uid", ip, 0, pool, err)) < 0 ||
            (error = topo_decode_bool(&controller, ref, "controller", ip, 0, err)) < 0)
            return error;
        if (controller && cache_nonempty(uid)) {
            *out = uid;
            return 0;
        }
    }
    return 0;
}

static int decode_pod(topo_cache_pod *p, const json_t *obj, const char *path, topo_pool *pool,
                      topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX], sp[TOPO_DECODE_PATH_MAX], tp[TOPO_DECODE_PATH_MAX],
        np[TOPO_DECODE_PATH_MAX];
    const json_t *meta = NULL, *spec = NULL, *status = NULL, *annotations = NULL;
    topo_resource *req = NULL;
    int64_t deleting = -1; /* RFC 3339 times decode to 0 or more */
    int error;

    memset(p, 0, sizeof(*p));
    p->namespace_name = p->name = p->node_name = p->phase = "";
    P(mp, path, "metadata");
    P(sp, path, "spec");
    P(tp, path, "status");
    if ((error = check_kind(obj, path, TOPO_CACHE_PODS, err)) < 0 ||
        (error = decode_meta(&meta, &p->resource_version, obj, path, pool, err)) < 0 ||
        (error = topo_decode_member(&spec, obj, "spec", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_member(&status, obj, "status", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = decode_key(&p->uid, meta, "uid", mp, pool, err)) < 0 ||
        (error = topo_decode_string(&p->namespace_name, meta, "namespace", mp, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&p->name, meta, "name", mp, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&p->generate_name, meta, "generateName", mp, 0, pool,
                                    err)) < 0 ||
        (error = decode_owner(&p->owner_uid, meta, mp, pool, err)) < 0 ||
        (error = topo_decode_time(&p->created_at, meta, "creationTimestamp", mp, 0, err)) < 0 ||
        (error = topo_decode_time(&deleting, meta, "deletionTimestamp", mp, 0, err)) < 0 ||
        (error = topo_decode_member(&annotations, meta, "annotations", mp, JSON_OBJECT, 0, err)) < 0 ||
        (error = podset_pairs(&p->labels, &p->nlabels, json_object_get(meta, "labels"),
                              P(np, mp, "labels"), pool, err)) < 0 ||
        (error = podset_pairs(&p->annotations, &p->nannotations, annotations,
                              P(np, mp, "annotations"), pool, err)) < 0 ||
        (error = topo_decode_string(&p->node_name, spec, "nodeName", sp, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&p->phase, status, "phase", tp, 0, pool, err)) < 0 ||
        (error = topo_pod_requests(&req, &p->nrequests, spec, sp, pool, err)) < 0)
        return error;
    p->requests = req;
    p->tas = topo_pod_is_tas(annotations);
    p->terminating = deleting >= 0;
    return 0;
}

static int store_pod(topo_cache *c, const topo_cache_pod *p, topo_err *err)
{
    sqlite3_stmt *st = NULL;
    json_t *req = NULL, *podset = NULL;
    int error;

    if (!cache_nonempty(p->uid))
        return topo_err_set(err, TOPO_EINVALID, "metadata.uid: required");
    if ((req = cache_resources_to_json(p->requests, p->nrequests)) == NULL ||
        (podset = json_object()) == NULL ||
        json_object_set_new(podset, "labels", labels_json(p->labels, p->nlabels)) < 0 ||
        json_object_set_new(podset, "annotations",
                            labels_json(p->annotations, p->nannotations)) < 0 ||
        (p->owner_uid != NULL &&
         json_object_set_new(podset, "owner", json_string(p->owner_uid)) < 0) ||
        (cache_nonempty(p->generate_name) &&
         json_object_set_new(podset, "generateName", json_string(p->generate_name)) < 0)) {
        error = topo_err_set(err, TOPO_EINVALID, "pod %s: requests, labels or annotations not "
                                                 "encodable (invalid UTF-8?)", p->uid);
        goto cleanup;
    }
    if ((st = cache_stmt_get(c, CACHE_STMT_POD_UPSERT, err)) == NULL) {
        error = cache_stmt_error(err);
        goto cleanup;
    }
    if ((error = cache_bind_text(c, st, 1, p->uid, err)) < 0 ||
        (error = cache_bind_text(c, st, 2, p->namespace_name ? p->namespace_name : "", err)) < 0 ||
        (error = cache_bind_text(c, st, 3, p->name ? p->name : "", err)) < 0 ||
        (error = cache_bind_text(c, st, 4, p->node_name ? p->node_name : "", err)) < 0 ||
        (error = cache_bind_text(c, st, 5, p->phase ? p->phase : "", err)) < 0 ||
        (error = cache_bind_json(c, st, 6, req, err)) < 0 ||
        (error = cache_bind_json(c, st, 7, podset, err)) < 0 ||
        (error = cache_bind_int(c, st, 8, p->tas ? 1 : 0, err)) < 0 ||
        (error = cache_bind_text(c, st, 9, p->resource_version ? p->resource_version : "",
                                 err)) < 0 ||
        (error = cache_bind_int(c, st, 10, p->created_at, err)) < 0 ||
        (error = cache_bind_int(c, st, 11, p->terminating ? 1 : 0, err)) < 0)
        goto cleanup;
    error = cache_stmt_run(c, st, "upsert pod", err);
    st = NULL;
    if (error == 0)
        error = cache_relist_mark(c, TOPO_CACHE_PODS, p->uid, err);
    /* The slot the webhook promised this pod becomes the pod's, so that its
     * deletion or end frees it like any claimed slot. */
    if (error == 0)
        error = cache_bind_reserved_slot(c, p, err);

cleanup:
    cache_stmt_done(st);
    json_decref(req);
    json_decref(podset);
    return error;
}

/* --- jobs ----------------------------------------------------------------------------- */

static int decode_count(int32_t *out, const json_t *spec, const char *key, const char *path,
                        topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    int64_t v = *out;
    int error;
    if ((error = topo_decode_int(&v, spec, key, path, 0, err)) < 0)
        return error;
    if (v < 0 || v > INT32_MAX)
        return topo_err_set(err, TOPO_EINVALID, "%s: out of range (0..%d)", P(p, path, key),
                            INT32_MAX);
    *out = (int32_t)v;
    return 0;
}

static int decode_job(topo_cache_job *j, const json_t *obj, const char *path, topo_pool *pool,
                      topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX], sp[TOPO_DECODE_PATH_MAX];
    const json_t *meta = NULL, *spec = NULL;
    int error;

    memset(j, 0, sizeof(*j));
    j->namespace_name = j->name = "";
    j->parallelism = 1; /* the API server's default */
    j->completions = -1;
    P(mp, path, "metadata");
    P(sp, path, "spec");
    if ((error = check_kind(obj, path, TOPO_CACHE_JOBS, err)) < 0 ||
        (error = decode_meta(&meta, &j->resource_version, obj, path, pool, err)) < 0 ||
        (error = topo_decode_member(&spec, obj, "spec", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = decode_key(&j->uid, meta, "uid", mp, pool, err)) < 0 ||
        (error = topo_decode_string(&j->namespace_name, meta, "namespace", mp, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&j->name, meta, "name", mp, 0, pool, err)) < 0 ||
        (error = decode_count(&j->parallelism, spec, "parallelism", sp, err)) < 0)
        return error;
    if (spec != NULL && json_object_get(spec, "completions") != NULL &&
        !json_is_null(json_object_get(spec, "completions"))) {
        j->completions = 0;
        if ((error = decode_count(&j->completions, spec, "completions", sp, err)) < 0)
            return error;
    }
    return 0;
}

static int store_job(topo_cache *c, const topo_cache_job *j, topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_JOB_UPSERT, err);
    int error;
    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, j->uid, err)) < 0 ||
        (error = cache_bind_text(c, st, 2, j->namespace_name, err)) < 0 ||
        (error = cache_bind_text(c, st, 3, j->name, err)) < 0 ||
        (error = cache_bind_int(c, st, 4, j->parallelism, err)) < 0 ||
        (error = j->completions < 0 ? cache_bind_text(c, st, 5, NULL, err)
                                    : cache_bind_int(c, st, 5, j->completions, err)) < 0 ||
        (error = cache_bind_text(c, st, 6, j->resource_version, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    if ((error = cache_stmt_run(c, st, "upsert job", err)) < 0)
        return error;
    return cache_relist_mark(c, TOPO_CACHE_JOBS, j->uid, err);
}

/* --- one object of any kind ------------------------------------------------------------- */

typedef struct decoded {
    topo_cache_kind kind;
    const char *rv;
    union {
        topo_node_spec node;
        topo_cache_pod pod;
        topo_cache_job job;
    } u;
} decoded;

static int decode_object(decoded *d, topo_cache_kind kind, const json_t *obj, const char *path,
                         topo_pool *pool, topo_err *err)
{
    int error;
    d->kind = kind;
    switch (kind) {
    case TOPO_CACHE_NODES:
        return decode_node(&d->u.node, &d->rv, obj, path, pool, err);
    case TOPO_CACHE_PODS:
        error = decode_pod(&d->u.pod, obj, path, pool, err);
        d->rv = d->u.pod.resource_version;
        return error;
    case TOPO_CACHE_JOBS:
        error = decode_job(&d->u.job, obj, path, pool, err);
        d->rv = d->u.job.resource_version;
        return error;
    }
    return topo_err_set(err, TOPO_EINVALID, "cache: unknown kind %d", (int)kind);
}

static int store_object(topo_cache *c, const decoded *d, topo_err *err)
{
    switch (d->kind) {
    case TOPO_CACHE_NODES:
        return store_node(c, &d->u.node, d->rv, err);
    case TOPO_CACHE_PODS:
        return store_pod(c, &d->u.pod, err);
    case TOPO_CACHE_JOBS:
        return store_job(c, &d->u.job, err);
    }
    return TOPO_EINVALID;
}

static const char *kind_word(topo_cache_kind kind)
{
    return kind == TOPO_CACHE_NODES ? "node" : kind == TOPO_CACHE_PODS ? "pod" : "job";
}

int topo_cache_upsert_json(topo_cache *c, topo_cache_kind kind, const json_t *obj,
                           topo_err *err)
{
    decoded d;
    int error;

    if (c == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    topo_pool_clear(c->scratch);
    if ((error = decode_object(&d, kind, obj, "", c->scratch, err)) < 0)
        return error;
    if ((error = cache_op_begin(c, CACHE_OP_WRITE, err)) < 0)
        return error;
    error = store_object(c, &d, err);
    return cache_op_end(c, CACHE_OP_WRITE, error, err);
}

static int upsert_text(topo_cache *c, topo_cache_kind kind, const char *json, size_t len,
                       topo_err *err)
{
    json_t *root = NULL;
    int error;

    if (c == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if ((error = topo_codec_json_parse(&root, json, len, kind_word(kind), err)) < 0)
        return error;
    error = topo_cache_upsert_json(c, kind, root, err);
    json_decref(root);
    return error;
}

int topo_cache_upsert_node(topo_cache *cache, const char *json, size_t len, topo_err *err)
{
    return upsert_text(cache, TOPO_CACHE_NODES, json, len, err);
}

int topo_cache_upsert_pod(topo_cache *cache, const char *json, size_t len, topo_err *err)
{
    return upsert_text(cache, TOPO_CACHE_PODS, json, len, err);
}

int topo_cache_upsert_job(topo_cache *cache, const char *json, size_t len, topo_err *err)
{
    return upsert_text(cache, TOPO_CACHE_JOBS, json, len, err);
}

int topo_cache_put_node(topo_cache *cache, const topo_node_spec *node,
                        const char *resource_version, topo_err *err)
{
    int error;
    if ((error = cache_op_begin(cache, CACHE_OP_WRITE, err)) < 0)
        return error;
    error = store_node(cache, node, resource_version, err);
    return cache_op_end(cache, CACHE_OP_WRITE, error, err);
}

int topo_cache_put_pod(topo_cache *cache, const topo_cache_pod *pod, topo_err *err)
{
    int error;
    if ((error = cache_op_begin(cache, CACHE_OP_WRITE, err)) < 0)
        return error;
    error = store_pod(cache, pod, err);
    return cache_op_end(cache, CACHE_OP_WRITE, error, err);
}

/* --- deletes --------------------------------------------------------------------------- */

static int delete_row(topo_cache *c, topo_cache_kind kind, const char *key, int *out_deleted,
                      topo_err *err)
{
    static const cache_stmt del[] = {CACHE_STMT_NODE_DELETE, CACHE_STMT_POD_DELETE,
                                     CACHE_STMT_JOB_DELETE};
    sqlite3_stmt *st;
    int error;

    if (out_deleted != NULL)
        *out_deleted = 0;
    /* A pod that is gone frees its reservation slots. */
    if (kind == TOPO_CACHE_PODS) {
        if ((st = cache_stmt_get(c, CACHE_STMT_SLOT_RELEASE_POD, err)) == NULL)
            return cache_stmt_error(err);
        if ((error = cache_bind_text(c, st, 1, key, err)) < 0) {
            cache_stmt_done(st);
            return error;
        }
        if ((error = cache_stmt_run(c, st, "release slots", err)) < 0)
            return error;
    }
    if ((st = cache_stmt_get(c, del[kind], err)) == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, key, err)) < 0) {
        cache_stmt_done(st);
        return error;
    }
    if ((error = cache_stmt_run(c, st, "delete", err)) < 0)
        return error;
    if (out_deleted != NULL)
        *out_deleted = sqlite3_changes(c->db) > 0;
    return 0;
}

static int delete_key(topo_cache *c, topo_cache_kind kind, const char *key, int *out_deleted,
                      topo_err *err)
{
    int error;
    if (out_deleted != NULL)
        *out_deleted = 0;
    if (c == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if (!cache_nonempty(key))
        return topo_err_set(err, TOPO_EINVALID, "cache: delete %s: empty key", kind_word(kind));
    if ((error = cache_op_begin(c, CACHE_OP_WRITE, err)) < 0)
        return error;
    error = delete_row(c, kind, key, out_deleted, err);
    return cache_op_end(c, CACHE_OP_WRITE, error, err);
}

int topo_cache_delete_node(topo_cache *cache, const char *name, int *out_deleted, topo_err *err)
{
    return delete_key(cache, TOPO_CACHE_NODES, name, out_deleted, err);
}

int topo_cache_delete_pod(topo_cache *cache, const char *uid, int *out_deleted, topo_err *err)
{
    return delete_key(cache, TOPO_CACHE_PODS, uid, out_deleted, err);
}

int topo_cache_delete_job(topo_cache *cache, const char *uid, int *out_deleted, topo_err *err)
{
    return delete_key(cache, TOPO_CACHE_JOBS, uid, out_deleted, err);
}

/* --- watch events ----------------------------------------------------------------------- */

static int event_error(const json_t *status, topo_cache_kind kind, topo_err *err)
{
    const json_t *code = json_object_get(status, "code");
    const json_t *msg = json_object_get(status, "message");
    const char *text = json_is_string(msg) ? json_string_value(msg) : "(no message)";
    if (json_is_integer(code) && json_integer_value(code) == 410)
        return topo_err_set(err, TOPO_EGONE, "watch %s: 410 Gone: %s", topo_cache_kind_name(kind),
                            text);
    return topo_err_set(err, TOPO_ESERVER, "watch %s: error event (code %lld): %s",
                        topo_cache_kind_name(kind),
                        json_is_integer(code) ? (long long)json_integer_value(code) : 0LL, text);
}

int topo_cache_apply_event(topo_cache *cache, topo_cache_kind kind, const char *json, size_t len,
                           topo_err *err)
{
    json_t *root = NULL;
    const json_t *obj = NULL, *meta = NULL;
    const char *type = NULL, *rv = "", *key = NULL;
    decoded d;
    int error, op = -1;

    if (cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if ((unsigned)kind > TOPO_CACHE_JOBS)
        return topo_err_set(err, TOPO_EINVALID, "cache: unknown kind %d", (int)kind);
    topo_pool_clear(cache->scratch);
    if ((error = topo_codec_json_parse(&root, json, len, "event", err)) < 0)
        goto cleanup;
    if (!json_is_object(root)) {
        error = topo_err_set(err, TOPO_EINVALID, "event: expected an object, got %s",
                             topo_decode_type_name(root));
        goto cleanup;
    }
    if ((error = topo_decode_string(&type, root, "type", "", 1, cache->scratch, err)) < 0 ||
        (error = topo_decode_member(&obj, root, "object", "", JSON_OBJECT, 1, err)) < 0)
        goto cleanup;
    if (strcmp(type, "ERROR") == 0) {
        error = event_error(obj, kind, err);
        goto cleanup;
    }
    if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0) {
        op = 0;
        if ((error = decode_object(&d, kind, obj, "object", cache->scratch, err)) < 0)
            goto cleanup;
        rv = d.rv;
    } else if (strcmp(type, "DELETED") == 0) {
        op = 1;
        if ((error = check_kind(obj, "object", kind, err)) < 0 ||
            (error = decode_meta(&meta, &rv, obj, "object", cache->scratch, err)) < 0 ||
            (error = decode_key(&key, meta, kind == TOPO_CACHE_NODES ? "name" : "uid",
                                "object.metadata", cache->scratch, err)) < 0)
            goto cleanup;
    } else if (strcmp(type, "BOOKMARK") == 0) {
        op = 2;
        if ((error = decode_meta(&meta, &rv, obj, "object", cache->scratch, err)) < 0)
            goto cleanup;
        if (rv[0] == '\0') {
            error = topo_err_set(err, TOPO_EINVALID, "object.metadata.resourceVersion: required");
            goto cleanup;
        }
    } else {
        error = topo_err_set(err, TOPO_EINVALID,
                             "type: unknown event type \"%s\" (ADDED, MODIFIED, DELETED, "
                             "BOOKMARK, ERROR)", type);
        goto cleanup;
    }
    if ((error = cache_op_begin(cache, CACHE_OP_WRITE, err)) < 0)
        goto cleanup;
    if (op == 0)
        error = store_object(cache, &d, err);
    else if (op == 1)
        error = delete_row(cache, kind, key, NULL, err);
    if (error == 0 && rv[0] != '\0')
        error = cache_set_watch_rv(cache, kind, rv, err);
    error = cache_op_end(cache, CACHE_OP_WRITE, error, err);

cleanup:
    json_decref(root);
    return error;
}

/* --- lists ----------------------------------------------------------------------------- */

static int is_fixture(const json_t *root)
{
    return json_object_get(root, "items") == NULL && json_object_get(root, "kind") == NULL &&
           (json_object_get(root, "nodes") != NULL || json_object_get(root, "pods") != NULL);
}

static int upsert_root(topo_cache *c, topo_cache_kind kind, const json_t *root, const char *src,
                       size_t *out_count, topo_err *err)
{
    char ip[TOPO_DECODE_PATH_MAX];
    const json_t *items = NULL, *kv;
    decoded *all = NULL;
    size_t n = 0;
    int error = 0, single = 0;

    if (!json_is_object(root))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected a %s, a List or a %s object, got %s",
                            src, list_kinds[kind], object_kinds[kind], topo_decode_type_name(root));
    if (is_fixture(root))
        return topo_err_set(err, TOPO_EUNSUPPORTED,
                            "%s: a topo fixture document, not Kubernetes objects", src);
    kv = json_object_get(root, "kind");
    if (kv != NULL && !json_is_string(kv))
        return topo_err_set(err, TOPO_EINVALID, "%s: kind: expected a string, got %s", src,
                            topo_decode_type_name(kv));
    if (kv != NULL && strcmp(json_string_value(kv), object_kinds[kind]) == 0) {
        single = 1;
        n = 1;
    } else {
        if (kv != NULL && strcmp(json_string_value(kv), list_kinds[kind]) != 0 &&
            strcmp(json_string_value(kv), "List") != 0)
            return topo_err_set(err, TOPO_EINVALID, "%s: kind: expected %s, List or %s, got \"%s\"",
                                src, list_kinds[kind], object_kinds[kind], json_string_value(kv));
        if ((error = topo_decode_member(&items, root, "items", "", JSON_ARRAY, 1, err)) < 0)
            return topo_err_wrap(err, "%s", src);
        n = json_array_size(items);
    }
    if (n > 0 && (all = topo_pool_calloc(c->scratch, n, sizeof(*all))) == NULL)
        return topo_err_nomem(err, "cache");
    for (size_t i = 0; i < n; i++) {
        const json_t *item = single ? root : json_array_get(items, i);
        if (!single)
            topo_decode_path_index(ip, sizeof(ip), "items", i);
        if ((error = decode_object(&all[i], kind, item, single ? "" : ip, c->scratch, err)) < 0)
            return topo_err_wrap(err, "%s", src);
    }
    if ((error = cache_op_begin(c, CACHE_OP_WRITE, err)) < 0)
        return error;
    for (size_t i = 0; i < n && error == 0; i++)
        error = store_object(c, &all[i], err);
    if ((error = cache_op_end(c, CACHE_OP_WRITE, error, err)) < 0)
        return error;
    if (out_count != NULL)
        *out_count = n;
    return 0;
}

/* What both list entry points check and reset before reading their input. */
static int upsert_start(topo_cache *cache, topo_cache_kind kind, size_t *out_count, topo_err *err)
{
    if (out_count != NULL)
        *out_count = 0;
    if (cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "cache: not open");
    if ((unsigned)kind > TOPO_CACHE_JOBS)
        return topo_err_set(err, TOPO_EINVALID, "cache: unknown kind %d", (int)kind);
    topo_pool_clear(cache->scratch);
    return 0;
}

int topo_cache_upsert_list(topo_cache *cache, topo_cache_kind kind, const char *text,
                           size_t len, const char *source, size_t *out_count, topo_err *err)
{
    const char *src = source != NULL ? source : "<input>";
    json_t *root = NULL;
    int error;

    if ((error = upsert_start(cache, kind, out_count, err)) < 0)
        return error;
    if ((error = topo_codec_parse(&root, text, len, src, err)) == 0)
        error = upsert_root(cache, kind, root, src, out_count, err);
    json_decref(root);
    return error;
}

int topo_cache_upsert_list_file(topo_cache *cache, topo_cache_kind kind, const char *path,
                                size_t *out_count, topo_err *err)
{
    json_t *root = NULL;
    int error;

    if ((error = upsert_start(cache, kind, out_count, err)) < 0)
        return error;
    if ((error = topo_codec_load_file(&root, path, TOPO_MAX_INVENTORY_FILE, err)) == 0)
        error = upsert_root(cache, kind, root, path, out_count, err);
    json_decref(root);
    return error;
}
