/* A PodSet from a manifest (a v1 Pod, or a batch/v1 Job whose pod template
 * carries Kueue's TAS annotations). The annotations are read and validated
 * by lib/kueue, exactly as topo-webhook reads a pod's. */
#include "topo/inventory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/count.h"
#include "topo/decode.h"
#include "topo/podreq.h"
#include "topo/kueue.h"
#include "topo/limits.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

/* --- node affinity ------------------------------------------------------------------------ */

static int decode_affinity(topo_podset_spec *ps, const json_t *spec, const char *spath,
                           topo_pool *pool, topo_err *err)
{
    char ap[TOPO_DECODE_PATH_MAX];
    const json_t *aff = NULL;
    topo_node_affinity na;
    int error;

    if ((error = topo_decode_member(&aff, spec, "affinity", spath, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_node_affinity(&na, aff, P(ap, spath, "affinity"), pool, err)) < 0)
        return error;
    ps->required_terms = na.required_terms;
    ps->nrequired_terms = na.nrequired_terms;
    ps->preferred_terms = na.preferred_terms;
    ps->npreferred_terms = na.npreferred_terms;
    return 0;
}

/* A Pod is a PodSet of one, or of its topology.topo.io/podset-size: the
 * same annotation sizes it for topo-webhook. */
static int pod_count(topo_podset_spec *ps, const char *kind, const topo_kv *ann, size_t nann,
                     topo_err *err)
{
    int64_t n = 1;
    int error;
    if (strcmp(kind, "Pod") != 0)
        return 0;
    for (size_t i = 0; i < nann; i++)
        if (strcmp(ann[i].key, TOPO_PODSET_SIZE_ANNOTATION) == 0 &&
            (error = topo_parse_count(&n, ann[i].value,
                                      "metadata.annotations[" TOPO_PODSET_SIZE_ANNOTATION "]", 1,
                                      TOPO_MAX_PODSET_COUNT, err)) < 0)
            return error;
    ps->count = (int32_t)n;
    return 0;
}

/* --- the manifest ------------------------------------------------------------------------ */

static int decode_manifest(topo_podset_spec *ps, const json_t *root, topo_pool *pool,
                           topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX], sp[TOPO_DECODE_PATH_MAX], p[TOPO_DECODE_PATH_MAX];
    const char *kind = NULL, *api = NULL, *tpath;
    const json_t *tmeta = NULL, *tspec = NULL, *jspec = NULL, *tmpl = NULL;
    topo_kv *ann = NULL, *sel = NULL;
    topo_resource *req = NULL;
    topo_toleration *tol = NULL;
    size_t nann = 0;
    int error;

    memset(ps, 0, sizeof(*ps));
    ps->name = "main";
    if (!json_is_object(root))
        return topo_err_set(err, TOPO_EINVALID, "expected a Pod or Job object, got %s",
                            json_is_null(root) ? "an empty document" : topo_decode_type_name(root));
    if ((error = topo_decode_string(&kind, root, "kind", "", 1, pool, err)) < 0 ||
        (error = topo_decode_string(&api, root, "apiVersion", "", 0, pool, err)) < 0)
        return error;
    if (strcmp(kind, "Pod") == 0) {
        if (api != NULL && strcmp(api, "v1") != 0)
            return topo_err_set(err, TOPO_EINVALID, "apiVersion: expected v1 for a Pod, got \"%s\"",
                                api);
        tpath = "";
        ps->count = 1;
        if ((error = topo_decode_member(&tmeta, root, "metadata", "", JSON_OBJECT, 0, err)) < 0 ||
            (error = topo_decode_member(&tspec, root, "spec", "", JSON_OBJECT, 1, err)) < 0)
            return error;
    } else if (strcmp(kind, "Job") == 0) {
        int64_t parallelism = 1, completions = -1;
        if (api != NULL && strcmp(api, "batch/v1") != 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "apiVersion: expected batch/v1 for a Job, got \"%s\"", api);
        tpath = "spec.template";
        if ((error = topo_decode_member(&jspec, root, "spec", "", JSON_OBJECT, 1, err)) < 0 ||
            (error = topo_decode_member(&tmpl, jspec, "template", "spec", JSON_OBJECT, 1, err)) < 0 ||
            (error = topo_decode_member(&tmeta, tmpl, "metadata", tpath, JSON_OBJECT, 0, err)) < 0 ||
            (error = topo_decode_member(&tspec, tmpl, "spec", tpath, JSON_OBJECT, 1, err)) < 0 ||
            (error = topo_decode_int(&parallelism, jspec, "parallelism", "spec", 0, err)) < 0 ||
            (error = topo_decode_int(&completions, jspec, "completions", "spec", 0, err)) < 0)
            return error;
        if (parallelism < 1 || parallelism > TOPO_MAX_PODSET_COUNT)
            return topo_err_set(err, TOPO_EINVALID, "spec.parallelism: must be between 1 and %d, got %lld",
                                TOPO_MAX_PODSET_COUNT, (long long)parallelism);
        if (json_object_get(jspec, "completions") != NULL && completions < 1 &&
            !json_is_null(json_object_get(jspec, "completions")))
            return topo_err_set(err, TOPO_EINVALID, "spec.completions: must be at least 1, got %lld",
                                (long long)completions);
        /* Kueue: the pod count is parallelism, capped by completions. */
        ps->count = (int32_t)parallelism;
        if (completions >= 1 && completions < parallelism)
            ps->count = (int32_t)completions;
    } else {
        return topo_err_set(err, TOPO_EINVALID, "kind: unsupported \"%s\" (expected Pod or Job)",
                            kind);
    }
    P(mp, tpath, "metadata");
    P(sp, tpath, "spec");
    if ((error = topo_decode_kv(&ann, &nann, tmeta ? json_object_get(tmeta, "annotations") : NULL,
                                P(p, mp, "annotations"), pool, err)) < 0 ||
        (error = pod_count(ps, kind, ann, nann, err)) < 0 ||
        (error = topo_kueue_podset_request(ps, ann, nann, mp, pool, err)) < 0 ||
        (error = topo_pod_requests(&req, &ps->nrequests, tspec, sp, pool, err)) < 0 ||
        (error = topo_decode_tolerations(&tol, &ps->ntolerations,
                                         json_object_get(tspec, "tolerations"),
                                         P(p, sp, "tolerations"), pool, err)) < 0 ||
        (error = topo_decode_kv(&sel, &ps->nnode_selector, json_object_get(tspec, "nodeSelector"),
                                P(p, sp, "nodeSelector"), pool, err)) < 0 ||
        (error = decode_affinity(ps, tspec, sp, pool, err)) < 0)
        return error;
    for (size_t i = 0; i < ps->nrequests; i++)
        if (req[i].amount < 0)
            return topo_err_set(err, TOPO_EINVALID, "%s.requests.%s: must not be negative", sp,
                                req[i].name);
    ps->requests = req;
    ps->tolerations = tol;
    ps->node_selector = sel;
    return 0;
}

int topo_podset_load_text(topo_podset_spec *out, const char *text, size_t len,
                          const char *source, topo_pool *pool, topo_err *err)
{
    const char *src = source != NULL ? source : "<input>";
    json_t *root = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    if ((error = topo_codec_parse(&root, text, len, source, err)) < 0)
        goto cleanup;
    if ((error = decode_manifest(out, root, pool, err)) < 0) {
        topo_err_wrap(err, "%s", src);
        memset(out, 0, sizeof(*out));
    }

cleanup:
    json_decref(root);
    return error;
}

int topo_podset_load_file(topo_podset_spec *out, const char *path, topo_pool *pool,
                          topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    const char *source;
    int error;

    memset(out, 0, sizeof(*out));
    if ((error = topo_codec_read_file(&text, &len, path, TOPO_MAX_MANIFEST_FILE, err)) < 0)
        goto cleanup;
    if ((source = topo_pool_strdup(pool, path)) == NULL) {
        error = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    error = topo_podset_load_text(out, text, len, source, pool, err);

cleanup:
    free(text);
    return error;
}
