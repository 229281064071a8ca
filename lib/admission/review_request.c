/* AdmissionReview v1 request decoding. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/podreq.h"
#include "review_internal.h"
#include "topo/admission.h"
#include "topo/admission_review.h"
#include "topo/kueue.h"
#include "topo/json.h"
#include "topo/limits.h"

#define P_OBJ "request.object"

static const char *kvget(const topo_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

const char *topo_admission_kv_get(const topo_kv *kv, size_t n, const char *key)
{
    return key == NULL ? NULL : kvget(kv, n, key);
}

/* The entries of kv whose key starts with prefix, copied into a pool array. */
static int kv_prefixed(const topo_kv **out, size_t *out_n, const topo_kv *kv, size_t n,
                       const char *prefix, topo_pool *pool, topo_err *err)
{
    size_t len = strlen(prefix), m = 0;
    topo_kv *sel;

    *out = NULL;
    *out_n = 0;
    for (size_t i = 0; i < n; i++)
        m += strncmp(kv[i].key, prefix, len) == 0;
    if (m == 0)
        return 0;
    sel = topo_pool_calloc(pool, m, sizeof(*sel));
    if (sel == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "%s labels: out of memory", prefix);
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(kv[i].key, prefix, len) == 0)
            sel[m++] = kv[i];
    *out = sel;
    *out_n = m;
    return 0;
}

static int decode_gvk(topo_admission_gvk *out, const json_t *obj, const char *key,
                      const char *last, topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *m = NULL;
    int rc;

    topo_decode_path_key(p, sizeof(p), "request", key);
    if ((rc = topo_decode_member(&m, obj, key, "request", JSON_OBJECT, 0, err)) < 0)
        return rc;
    if (m == NULL)
        return 0;
    if ((rc = topo_decode_string(&out->group, m, "group", p, 0, pool, err)) < 0 ||
        (rc = topo_decode_string(&out->version, m, "version", p, 0, pool, err)) < 0 ||
        (rc = topo_decode_string(&out->kind, m, last, p, 0, pool, err)) < 0)
        return rc;
    return 0;
}

static int decode_owners(topo_admission_pod *pod, const json_t *meta, topo_pool *pool,
                         topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *arr = NULL, *ref;
    topo_admission_owner *owners;
    size_t i;
    int rc;

    if ((rc = topo_decode_member(&arr, meta, "ownerReferences", P_OBJ ".metadata", JSON_ARRAY, 0,
                                 err)) < 0)
        return rc;
    if (arr == NULL || json_array_size(arr) == 0)
        return 0;
    owners = topo_pool_calloc(pool, json_array_size(arr), sizeof(*owners));
    if (owners == NULL)
        return topo_err_set(err, TOPO_ENOMEM, P_OBJ ".metadata.ownerReferences: out of memory");
    json_array_foreach(arr, i, ref) {
        topo_decode_path_index(p, sizeof(p), P_OBJ ".metadata.ownerReferences", i);
        if (!json_is_object(ref))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(ref));
        if ((rc = topo_decode_string(&owners[i].api_version, ref, "apiVersion", p, 0, pool,
                                     err)) < 0 ||
            (rc = topo_decode_string(&owners[i].kind, ref, "kind", p, 1, pool, err)) < 0 ||
            (rc = topo_decode_string(&owners[i].name, ref, "name", p, 1, pool, err)) < 0 ||
            (rc = topo_decode_string(&owners[i].uid, ref, "uid", p, 0, pool, err)) < 0 ||
            (rc = topo_decode_bool(&owners[i].controller, ref, "controller", p, 0, err)) < 0)
            return rc;
    }
    pod->owners = owners;
    pod->nowners = json_array_size(arr);
    return 0;
}

static int decode_gates(topo_admission_pod *pod, const json_t *spec, topo_pool *pool,
                        topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *arr = NULL, *g;
    const char **names;
    size_t i;
    int rc;

    if ((rc = topo_decode_member(&arr, spec, "schedulingGates", P_OBJ ".spec", JSON_ARRAY, 0,
                                 err)) < 0)
        return rc;
    if (arr == NULL)
        return 0;
    pod->has_scheduling_gates = 1;
    if (json_array_size(arr) == 0)
        return 0;
    names = topo_pool_calloc(pool, json_array_size(arr), sizeof(*names));
    if (names == NULL)
        return topo_err_set(err, TOPO_ENOMEM, P_OBJ ".spec.schedulingGates: out of memory");
    json_array_foreach(arr, i, g) {
        topo_decode_path_index(p, sizeof(p), P_OBJ ".spec.schedulingGates", i);
        if (!json_is_object(g))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(g));
        if ((rc = topo_decode_string(&names[i], g, "name", p, 1, pool, err)) < 0)
            return rc;
    }
    pod->scheduling_gates = names;
    pod->nscheduling_gates = json_array_size(arr);
    return 0;
}

int adm_decode_requests(topo_admission_pod *pod, const json_t *spec, topo_pool *pool,
                        topo_err *err)
{
    topo_resource *res = NULL;
    size_t n = 0;
    int rc = topo_pod_requests(&res, &n, spec, P_OBJ ".spec", pool, err);
    if (rc < 0)
        return rc;
    pod->requests = res;
    pod->nrequests = n;
    return 0;
}

/* spec.tolerations and spec.affinity.nodeAffinity (what the engine places
 * by besides nodeSelector and the requests), and how much of the path to
 * the preferred terms the pod has (a patch appending to them adds the
 * rest). */
static int decode_node_terms(topo_admission_pod *pod, const json_t *spec, topo_pool *pool,
                             topo_err *err)
{
    const json_t *m = NULL;
    topo_toleration *tol = NULL;
    topo_node_affinity na;
    size_t n = 0;
    int rc;

    if ((rc = topo_decode_member(&m, spec, "tolerations", P_OBJ ".spec", JSON_ARRAY, 0, err)) < 0 ||
        (rc = topo_decode_tolerations(&tol, &n, m, P_OBJ ".spec.tolerations", pool, err)) < 0)
        return rc;
    pod->tolerations = tol;
    pod->ntolerations = n;
    if ((rc = topo_decode_member(&m, spec, "affinity", P_OBJ ".spec", JSON_OBJECT, 0, err)) < 0 ||
        (rc = topo_decode_node_affinity(&na, m, P_OBJ ".spec.affinity", pool, err)) < 0)
        return rc;
    pod->required_terms = na.required_terms;
    pod->nrequired_terms = na.nrequired_terms;
    pod->preferred_terms = na.preferred_terms;
    pod->npreferred_terms = na.npreferred_terms;
    const json_t *node = json_object_get(m, "nodeAffinity");
    pod->affinity_parents =
        m == NULL                          ? 0
        : !json_is_object(node)            ? 1
        : !json_is_array(json_object_get(node, "preferredDuringSchedulingIgnoredDuringExecution"))
            ? 2
            : 3;
    return 0;
}

/* An array or object at path inside obj holding more than max entries. */
static int over(const json_t *v, size_t max, const char *path, topo_err *err)
{
    size_t n = json_is_array(v) ? json_array_size(v) : json_is_object(v) ? json_object_size(v) : 0;
    if (n <= max)
        return 0;
    return topo_err_set(err, TOPO_ELIMIT, "%s: %zu entries, more than %zu (topo-webhook's limit "
                                          "for a topology pod)",
                        path, n, max);
}

/* The terms of a node selector (required) or of preferences, and their
 * expressions and values, within the limits. */
static int terms_within(const json_t *terms, int preferred, const char *path, topo_err *err)
{
    char tp[TOPO_DECODE_PATH_MAX], ep[TOPO_DECODE_PATH_MAX], xp[TOPO_DECODE_PATH_MAX],
        vp[TOPO_DECODE_PATH_MAX];
    int rc;
    if ((rc = over(terms, TOPO_MAX_POD_AFFINITY_TERMS, path, err)) < 0)
        return rc;
    for (size_t i = 0; i < json_array_size(terms); i++) {
        const json_t *t = json_array_get(terms, i);
        const json_t *exprs = json_object_get(preferred ? json_object_get(t, "preference") : t,
                                              "matchExpressions");
        topo_decode_path_index(tp, sizeof tp, path, i);
        topo_decode_path_key(ep, sizeof ep, tp,
                             preferred ? "preference.matchExpressions" : "matchExpressions");
        if ((rc = over(exprs, TOPO_MAX_POD_TERM_EXPRESSIONS, ep, err)) < 0)
            return rc;
        for (size_t k = 0; k < json_array_size(exprs); k++) {
            topo_decode_path_index(xp, sizeof xp, ep, k);
            topo_decode_path_key(vp, sizeof vp, xp, "values");
            if ((rc = over(json_object_get(json_array_get(exprs, k), "values"),
                           TOPO_MAX_POD_EXPRESSION_VALUES, vp, err)) < 0)
                return rc;
        }
    }
    return 0;
}

int adm_decode_node_terms(topo_admission_pod *pod, const json_t *spec, topo_pool *pool,
                          topo_err *err)
{
    int rc = adm_pod_within_limits(spec, err);
    return rc < 0 ? rc : decode_node_terms(pod, spec, pool, err);
}

/* What a topology pod may carry (limits.h): checked before it is decoded,
 * so that the placement's work stays bounded. */
int adm_pod_within_limits(const json_t *spec, topo_err *err)
{
    const json_t *na = json_object_get(json_object_get(spec, "affinity"), "nodeAffinity");
    int rc;
    if ((rc = over(json_object_get(spec, "containers"), TOPO_MAX_POD_CONTAINERS,
                   P_OBJ ".spec.containers", err)) < 0 ||
        (rc = over(json_object_get(spec, "initContainers"), TOPO_MAX_POD_CONTAINERS,
                   P_OBJ ".spec.initContainers", err)) < 0 ||
        (rc = over(json_object_get(spec, "tolerations"), TOPO_MAX_POD_TOLERATIONS,
                   P_OBJ ".spec.tolerations", err)) < 0 ||
        (rc = over(json_object_get(spec, "nodeSelector"), TOPO_MAX_POD_SELECTOR_LABELS,
                   P_OBJ ".spec.nodeSelector", err)) < 0)
        return rc;
    const json_t *required = json_object_get(
        json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    if ((rc = terms_within(required, 0,
                           P_OBJ ".spec.affinity.nodeAffinity."
                                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                           err)) < 0)
        return rc;
    return terms_within(json_object_get(na, "preferredDuringSchedulingIgnoredDuringExecution"), 1,
                        P_OBJ ".spec.affinity.nodeAffinity."
                              "preferredDuringSchedulingIgnoredDuringExecution",
                        err);
}

/* The pod's shape, and for a pod-group pod its object as text. */
static int decode_shape(topo_admission_pod *pod, const json_t *obj, topo_pool *pool,
                        topo_err *err)
{
    char shape[TOPO_POD_SHAPE_LEN + 1];
    if (topo_pod_shape(shape, json_object_get(obj, "spec")) < 0 ||
        (pod->shape = topo_pool_strdup(pool, shape)) == NULL)
        return topo_err_nomem(err, NULL);
    if (pod->pod_group_name == NULL || pod->pod_group_name[0] == '\0')
        return 0;
    char *text = topo_json_dumps(obj, JSON_COMPACT);
    pod->object_json = text != NULL ? topo_pool_strdup(pool, text) : NULL;
    free(text);
    return pod->object_json != NULL ? 0 : topo_err_nomem(err, NULL);
}

static int decode_pod(topo_admission_pod *pod, const json_t *obj, topo_pool *pool, topo_err *err)
{
    const json_t *meta = NULL, *spec = NULL, *m = NULL;
    topo_kv *kv;
    size_t n;
    int rc;

    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, P_OBJ ": expected an object, got %s",
                            topo_decode_type_name(obj));
    if ((rc = topo_decode_member(&meta, obj, "metadata", P_OBJ, JSON_OBJECT, 0, err)) < 0 ||
        (rc = topo_decode_member(&spec, obj, "spec", P_OBJ, JSON_OBJECT, 0, err)) < 0)
        return rc;
    if ((rc = topo_decode_string(&pod->name, meta, "name", P_OBJ ".metadata", 0, pool, err)) < 0 ||
        (rc = topo_decode_string(&pod->generate_name, meta, "generateName", P_OBJ ".metadata", 0,
                                 pool, err)) < 0 ||
        (rc = topo_decode_string(&pod->namespace_, meta, "namespace", P_OBJ ".metadata", 0, pool,
                                 err)) < 0)
        return rc;

    if ((rc = topo_decode_member(&m, meta, "labels", P_OBJ ".metadata", JSON_OBJECT, 0, err)) < 0 ||
        (rc = topo_decode_kv(&kv, &n, m, P_OBJ ".metadata.labels", pool, err)) < 0)
        return rc;
    pod->has_labels = m != NULL;
    pod->labels = kv;
    pod->nlabels = n;
    if ((rc = topo_decode_member(&m, meta, "annotations", P_OBJ ".metadata", JSON_OBJECT, 0,
                                 err)) < 0 ||
        (rc = topo_decode_kv(&kv, &n, m, P_OBJ ".metadata.annotations", pool, err)) < 0)
        return rc;
    pod->has_annotations = m != NULL;
    pod->annotations = kv;
    pod->nannotations = n;
    if ((rc = decode_owners(pod, meta, pool, err)) < 0)
        return rc;

    if ((rc = topo_decode_string(&pod->node_name, spec, "nodeName", P_OBJ ".spec", 0, pool,
                                 err)) < 0)
        return rc;
    if ((rc = topo_decode_member(&m, spec, "nodeSelector", P_OBJ ".spec", JSON_OBJECT, 0,
                                 err)) < 0 ||
        (rc = topo_decode_kv(&kv, &n, m, P_OBJ ".spec.nodeSelector", pool, err)) < 0)
        return rc;
    pod->has_node_selector = m != NULL;
    pod->node_selector = kv;
    pod->nnode_selector = n;
    if ((rc = decode_gates(pod, spec, pool, err)) < 0)
        return rc;
    /* Annotations and labels are already copied: point into them. */
    {
        const topo_kv *a = pod->annotations, *l = pod->labels;
        size_t na = pod->nannotations, nl = pod->nlabels;
        pod->pod_group_name = kvget(l, nl, TOPO_KUEUE_POD_GROUP_NAME);
        if (pod->pod_group_name == NULL)
            pod->pod_group_name = kvget(a, na, TOPO_KUEUE_POD_GROUP_NAME);
        pod->pod_group_total_count = kvget(a, na, TOPO_KUEUE_POD_GROUP_TOTAL_COUNT);
        pod->queue_name = kvget(l, nl, TOPO_KUEUE_QUEUE_LABEL);
        pod->job_name = kvget(l, nl, "batch.kubernetes.io/job-name");
        if (pod->job_name == NULL)
            pod->job_name = kvget(l, nl, "job-name");
        pod->controller_uid = kvget(l, nl, "batch.kubernetes.io/controller-uid");
        if (pod->controller_uid == NULL)
            pod->controller_uid = kvget(l, nl, "controller-uid");
        pod->job_completion_index = kvget(l, nl, "batch.kubernetes.io/job-completion-index");
        if (pod->job_completion_index == NULL)
            pod->job_completion_index = kvget(a, na, "batch.kubernetes.io/job-completion-index");
        pod->podset_size = kvget(a, na, TOPO_PODSET_SIZE_ANNOTATION);
        if ((rc = kv_prefixed(&pod->jobset_labels, &pod->njobset_labels, l, nl,
                              "jobset.sigs.k8s.io/", pool, err)) < 0 ||
            (rc = kv_prefixed(&pod->lws_labels, &pod->nlws_labels, l, nl,
                              "leaderworkerset.sigs.k8s.io/", pool, err)) < 0)
            return rc;
    }
    return 0;
}

/* request.uid, read on its own so that it is known even when the rest fails. */
static void read_uid(topo_admission_request *out, const json_t *req, topo_pool *pool)
{
    const json_t *uid = json_object_get(req, "uid");
    if (json_is_string(uid) && json_string_length(uid) > 0 &&
        strlen(json_string_value(uid)) == json_string_length(uid))
        out->uid = topo_pool_strdup(pool, json_string_value(uid));
}

int adm_gvk_is_pod(const topo_admission_gvk *k)
{
    return k->kind != NULL && strcmp(k->kind, "Pod") == 0 &&
           (k->group == NULL || k->group[0] == '\0') && k->version != NULL &&
           strcmp(k->version, "v1") == 0;
}

int topo_admission_decode(topo_admission_request *out, const char *body, size_t len,
                          topo_pool *pool, topo_err *err)
{
    return adm_decode_body(out, NULL, body, len, pool, err);
}

int adm_decode_body(topo_admission_request *out, json_t **root_out, const char *body,
                    size_t len, topo_pool *pool, topo_err *err)
{
    json_t *root = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (root_out != NULL)
        *root_out = NULL;
    if (len > TOPO_MAX_ADMISSION_BODY)
        return topo_err_set(err, TOPO_ELIMIT, "body: %zu bytes, more than the limit of %u", len,
                            TOPO_MAX_ADMISSION_BODY);
    if (body == NULL || len == 0)
        return topo_err_set(err, TOPO_EINVALID, "body: empty");
    if ((rc = topo_codec_json_parse(&root, body, len, "body", err)) < 0)
        return rc;
    rc = topo_admission_decode_json(out, root, pool, err);
    if (root_out != NULL)
        *root_out = root;
    else
        json_decref(root);
    return rc;
}

int topo_admission_decode_json(topo_admission_request *out, const json_t *root, topo_pool *pool,
                               topo_err *err)
{
    const json_t *req, *obj = NULL;
    const char *api = NULL, *kind = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(root)) {
        rc = topo_err_set(err, TOPO_EUNSUPPORTED, "body: expected an AdmissionReview object, got %s",
                          topo_decode_type_name(root));
        goto cleanup;
    }
    /* The uid first: every later failure can still be answered. */
    req = json_object_get(root, "request");
    if (json_is_object(req))
        read_uid(out, req, pool);
    if ((rc = topo_decode_string(&api, root, "apiVersion", "", 1, pool, err)) < 0 ||
        (rc = topo_decode_string(&kind, root, "kind", "", 1, pool, err)) < 0) {
        rc = TOPO_EUNSUPPORTED;
        if (err != NULL)
            err->code = rc;
        goto cleanup;
    }
    if (strcmp(api, "admission.k8s.io/v1") != 0 || strcmp(kind, "AdmissionReview") != 0) {
        rc = topo_err_set(err, TOPO_EUNSUPPORTED,
                          "body: apiVersion \"%s\" kind \"%s\": want admission.k8s.io/v1 "
                          "AdmissionReview",
                          api, kind);
        goto cleanup;
    }
    if (req == NULL || json_is_null(req)) {
        rc = topo_err_set(err, TOPO_EUNSUPPORTED, "request: required");
        goto cleanup;
    }
    if (!json_is_object(req)) {
        rc = topo_err_set(err, TOPO_EINVALID, "request: expected an object, got %s",
                          topo_decode_type_name(req));
        goto cleanup;
    }
    if (out->uid == NULL) {
        const json_t *u = json_object_get(req, "uid");
        rc = topo_err_set(err, TOPO_EINVALID, "request.uid: %s",
                          u == NULL || json_is_null(u) ? "required"
                          : json_is_string(u)           ? "must be a non-empty string"
                                                        : "expected a string");
        goto cleanup;
    }
    if ((rc = decode_gvk(&out->kind, req, "kind", "kind", pool, err)) < 0 ||
        (rc = decode_gvk(&out->resource, req, "resource", "resource", pool, err)) < 0 ||
        (rc = topo_decode_string(&out->sub_resource, req, "subResource", "request", 0, pool,
                                 err)) < 0 ||
        (rc = topo_decode_string(&out->operation, req, "operation", "request", 1, pool, err)) < 0 ||
        (rc = topo_decode_string(&out->namespace_, req, "namespace", "request", 0, pool, err)) < 0 ||
        (rc = topo_decode_string(&out->name, req, "name", "request", 0, pool, err)) < 0 ||
        (rc = topo_decode_bool(&out->dry_run, req, "dryRun", "request", 0, err)) < 0)
        goto cleanup;
    obj = json_object_get(req, "object");
    if (adm_gvk_is_pod(&out->kind) && obj != NULL && !json_is_null(obj)) {
        if ((rc = decode_pod(&out->pod, obj, pool, err)) < 0)
            goto cleanup;
        out->has_pod = 1;
        /* The requests, tolerations and node affinity are read for
         * topology pods only: a pod the webhook passes through costs no
         * more than its metadata, and is never refused over fields the
         * webhook does not use (DaemonSet pods carry matchFields terms,
         * which the engine cannot honour). Packing reads them itself. */
        const json_t *spec = json_object_get(obj, "spec");
        if (topo_admission_classify(out) == TOPO_ADMISSION_TOPOLOGY_POD &&
            ((rc = adm_pod_within_limits(spec, err)) < 0 ||
             (rc = adm_decode_requests(&out->pod, spec, pool, err)) < 0 ||
             (rc = decode_node_terms(&out->pod, spec, pool, err)) < 0 ||
             (rc = decode_shape(&out->pod, obj, pool, err)) < 0))
            goto cleanup;
    }
    rc = 0;

cleanup:
    return rc;
}

int adm_decode_pod(topo_admission_pod *out, const json_t *pod, topo_pool *pool, topo_err *err)
{
    memset(out, 0, sizeof(*out));
    return decode_pod(out, pod, pool, err);
}

json_t *adm_pod_review(const json_t *pod, const char *uid)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:O}}",
                     "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request",
                     "uid", uid, "kind", "group", "", "version", "v1", "kind", "Pod",
                     "resource", "group", "", "version", "v1", "resource", "pods", "operation",
                     "CREATE", "object", pod);
}
