/* A PodSet from a manifest (a v1 Pod, or a batch/v1 Job whose pod template
 * carries Kueue's TAS annotations), validated as Kueue's webhook does
 * (pkg/controller/jobframework/tas_validation.go; KUEUE-TAS.md §2). */
#include "topo/inventory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/decode.h"
#include "codec/podreq.h"
#include "topo/limits.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

/* --- label names ------------------------------------------------------------------- */

static int alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The name part of a qualified name: 1..63, alnum at both ends, [-_.] inside. */
static int valid_name_part(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !alnum(s[0]) || !alnum(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* A DNS-1123 subdomain: 1..253, lower-case labels of [a-z0-9-] joined by dots. */
static int valid_dns_subdomain(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            size_t l = i - start;
            if (l == 0 || l > 63)
                return 0;
            const char *lab = s + start;
            for (size_t k = 0; k < l; k++) {
                char c = lab[k];
                int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                if (!ok || ((k == 0 || k == l - 1) && c == '-'))
                    return 0;
            }
            start = i + 1;
        }
    }
    return 1;
}

int topo_label_key_valid(const char *key)
{
    if (key == NULL)
        return 0;
    const char *slash = strchr(key, '/');
    if (slash == NULL)
        return valid_name_part(key, strlen(key));
    if (strchr(slash + 1, '/') != NULL)
        return 0;
    return valid_dns_subdomain(key, (size_t)(slash - key)) &&
           valid_name_part(slash + 1, strlen(slash + 1));
}

/* --- struct-level validation ---------------------------------------------------------- */

int topo_podset_validate(const topo_podset_spec *ps, topo_err *err)
{
    int modes = (ps->required != NULL) + (ps->preferred != NULL) + (ps->unconstrained != 0);

    if (ps->count < 1 || ps->count > TOPO_MAX_PODSET_COUNT)
        return topo_err_set(err, TOPO_EINVALID, "count: must be between 1 and %d, got %d",
                            TOPO_MAX_PODSET_COUNT, (int)ps->count);
    if (modes > 1)
        return topo_err_set(err, TOPO_EINVALID,
                            "must not contain more than one topology annotation: [\"%s\", "
                            "\"%s\", \"%s\"]",
                            TOPO_KUEUE_REQUIRED_TOPOLOGY, TOPO_KUEUE_PREFERRED_TOPOLOGY,
                            TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY);
    if (ps->required != NULL && !topo_label_key_valid(ps->required))
        return topo_err_set(err, TOPO_EINVALID, "%s: invalid label name \"%s\"",
                            TOPO_KUEUE_REQUIRED_TOPOLOGY, ps->required);
    if (ps->preferred != NULL && !topo_label_key_valid(ps->preferred))
        return topo_err_set(err, TOPO_EINVALID, "%s: invalid label name \"%s\"",
                            TOPO_KUEUE_PREFERRED_TOPOLOGY, ps->preferred);
    if (ps->slice_required != NULL && !topo_label_key_valid(ps->slice_required))
        return topo_err_set(err, TOPO_EINVALID, "%s: invalid label name \"%s\"",
                            TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY, ps->slice_required);
    if (ps->slice_required != NULL && ps->slice_size == 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: slice size is required if slice topology is requested",
                            TOPO_KUEUE_SLICE_SIZE);
    if (ps->slice_required == NULL && ps->slice_size != 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: cannot be set when '%s' is not present",
                            TOPO_KUEUE_SLICE_SIZE, TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY);
    if (ps->slice_required != NULL && ps->slice_size < 1)
        return topo_err_set(err, TOPO_EINVALID, "%s: must be greater than or equal to 1",
                            TOPO_KUEUE_SLICE_SIZE);
    if (ps->slice_required != NULL && ps->slice_size > ps->count)
        return topo_err_set(err, TOPO_EINVALID, "%s: must not be greater than pod set count %d",
                            TOPO_KUEUE_SLICE_SIZE, (int)ps->count);
    if (ps->nlayers > 0) {
        if (ps->slice_required != NULL || ps->slice_size != 0)
            return topo_err_set(err, TOPO_EINVALID, "%s: must not be combined with %s or %s",
                                TOPO_KUEUE_SLICE_CONSTRAINTS, TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY,
                                TOPO_KUEUE_SLICE_SIZE);
        if (ps->nlayers > TOPO_MAX_SLICE_LAYERS)
            return topo_err_set(err, TOPO_EINVALID, "%s: at most %d layers, got %zu",
                                TOPO_KUEUE_SLICE_CONSTRAINTS, TOPO_MAX_SLICE_LAYERS, ps->nlayers);
        for (size_t i = 0; i < ps->nlayers; i++) {
            const topo_slice_layer *l = &ps->layers[i];
            if (!topo_label_key_valid(l->level))
                return topo_err_set(err, TOPO_EINVALID, "%s[%zu].topology: invalid label name \"%s\"",
                                    TOPO_KUEUE_SLICE_CONSTRAINTS, i, l->level ? l->level : "");
            if (l->size < 1)
                return topo_err_set(err, TOPO_EINVALID,
                                    "%s[%zu].size: must be greater than or equal to 1",
                                    TOPO_KUEUE_SLICE_CONSTRAINTS, i);
            for (size_t k = 0; k < i; k++)
                if (strcmp(ps->layers[k].level, l->level) == 0)
                    return topo_err_set(err, TOPO_EINVALID, "%s[%zu].topology: duplicate level \"%s\"",
                                        TOPO_KUEUE_SLICE_CONSTRAINTS, i, l->level);
            if (i == 0 && l->size > ps->count)
                return topo_err_set(err, TOPO_EINVALID,
                                    "%s[0].size: must not be greater than pod set count %d",
                                    TOPO_KUEUE_SLICE_CONSTRAINTS, (int)ps->count);
            if (i > 0 && ps->layers[i - 1].size % l->size != 0)
                return topo_err_set(err, TOPO_EINVALID,
                                    "%s[%zu].size: %d must evenly divide parent layer size %d",
                                    TOPO_KUEUE_SLICE_CONSTRAINTS, i, (int)l->size,
                                    (int)ps->layers[i - 1].size);
        }
    }
    for (size_t i = 0; i < ps->nrequests; i++)
        if (ps->requests[i].amount < 0)
            return topo_err_set(err, TOPO_EINVALID, "requests.%s: must not be negative",
                                ps->requests[i].name);
    return 0;
}

/* --- annotations ----------------------------------------------------------------------- */

static const char *annotation(const topo_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

/* strconv.ParseBool */
static int parse_go_bool(const char *s, int *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(s, t[i]) == 0) {
            *out = 1;
            return 1;
        }
        if (strcmp(s, f[i]) == 0) {
            *out = 0;
            return 1;
        }
    }
    return 0;
}

/* strconv.ParseInt(s, 10, 64) */
static int parse_go_int(const char *s, long long *out)
{
    const char *d = s;
    if (*d == '+' || *d == '-')
        d++;
    if (*d == '\0')
        return 0;
    for (const char *c = d; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    errno = 0;
    *out = strtoll(s, NULL, 10);
    return errno == 0;
}

static int annotation_error(topo_err *err, const char *apath, const char *key, const char *value,
                            const char *problem)
{
    if (value != NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s[%s]: invalid value \"%s\": %s", apath, key,
                            value, problem);
    return topo_err_set(err, TOPO_EINVALID, "%s[%s]: %s", apath, key, problem);
}

static int decode_layers(topo_podset_spec *ps, const char *text, const char *apath,
                         topo_pool *pool, topo_err *err)
{
    char src[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    json_t *root = NULL;
    topo_slice_layer *layers = NULL;
    size_t n;
    int error = 0;

    snprintf(src, sizeof(src), "%s[%s]", apath, TOPO_KUEUE_SLICE_CONSTRAINTS);
    if ((error = topo_codec_json_parse(&root, text, strlen(text), src, err)) < 0) {
        topo_err_at(err, NULL, 0, 0); /* src is a local buffer */
        goto cleanup;
    }
    if (!json_is_array(root)) {
        error = topo_err_set(err, TOPO_EINVALID, "%s: expected a JSON array, got %s", src,
                             topo_decode_type_name(root));
        goto cleanup;
    }
    n = json_array_size(root);
    if (n < 1 || n > TOPO_MAX_SLICE_LAYERS) {
        error = topo_err_set(err, TOPO_EINVALID, "%s: must have 1 to %d entries, got %zu", src,
                             TOPO_MAX_SLICE_LAYERS, n);
        goto cleanup;
    }
    if ((layers = topo_pool_calloc(pool, n, sizeof(*layers))) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(root, i);
        int64_t size = 0;
        topo_decode_path_index(ip, sizeof(ip), src, i);
        if ((error = topo_decode_string(&layers[i].level, e, "topology", ip, 1, pool, err)) < 0 ||
            (error = topo_decode_int(&size, e, "size", ip, 1, err)) < 0)
            goto cleanup;
        if (size < 1 || size > TOPO_MAX_PODSET_COUNT) {
            error = topo_err_set(err, TOPO_EINVALID, "%s.size: must be between 1 and %d", ip,
                                 TOPO_MAX_PODSET_COUNT);
            goto cleanup;
        }
        layers[i].size = (int32_t)size;
    }
    ps->layers = layers;
    ps->nlayers = n;

cleanup:
    json_decref(root);
    return error;
}

static int decode_annotations(topo_podset_spec *ps, const topo_kv *kv, size_t n,
                              const char *apath, topo_pool *pool, topo_err *err)
{
    const char *req = annotation(kv, n, TOPO_KUEUE_REQUIRED_TOPOLOGY);
    const char *pref = annotation(kv, n, TOPO_KUEUE_PREFERRED_TOPOLOGY);
    const char *unc = annotation(kv, n, TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY);
    const char *sreq = annotation(kv, n, TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY);
    const char *ssize = annotation(kv, n, TOPO_KUEUE_SLICE_SIZE);
    const char *scon = annotation(kv, n, TOPO_KUEUE_SLICE_CONSTRAINTS);
    const char *group = annotation(kv, n, TOPO_KUEUE_GROUP_NAME);
    int error;

    if ((req != NULL) + (pref != NULL) + (unc != NULL) > 1)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: must not contain more than one topology annotation: [\"%s\", "
                            "\"%s\", \"%s\"]",
                            apath, TOPO_KUEUE_REQUIRED_TOPOLOGY, TOPO_KUEUE_PREFERRED_TOPOLOGY,
                            TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY);
    if (req != NULL && !topo_label_key_valid(req))
        return annotation_error(err, apath, TOPO_KUEUE_REQUIRED_TOPOLOGY, req,
                                "must be a valid label name");
    if (pref != NULL && !topo_label_key_valid(pref))
        return annotation_error(err, apath, TOPO_KUEUE_PREFERRED_TOPOLOGY, pref,
                                "must be a valid label name");
    if (unc != NULL && !parse_go_bool(unc, &ps->unconstrained))
        return annotation_error(err, apath, TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY, unc,
                                "must be a boolean value");
    if (sreq != NULL && !topo_label_key_valid(sreq))
        return annotation_error(err, apath, TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY, sreq,
                                "must be a valid label name");
    if (ssize != NULL) {
        long long v = 0;
        if (!parse_go_int(ssize, &v))
            return annotation_error(err, apath, TOPO_KUEUE_SLICE_SIZE, ssize,
                                    "must be a numeric value");
        if (v < 1)
            return annotation_error(err, apath, TOPO_KUEUE_SLICE_SIZE, ssize,
                                    "must be greater than or equal to 1");
        if (v > ps->count) {
            char msg[96];
            snprintf(msg, sizeof(msg), "must not be greater than pod set count %d",
                     (int)ps->count);
            return annotation_error(err, apath, TOPO_KUEUE_SLICE_SIZE, ssize, msg);
        }
        ps->slice_size = (int32_t)v;
    }
    if (sreq != NULL && ssize == NULL)
        return annotation_error(err, apath, TOPO_KUEUE_SLICE_SIZE, NULL,
                                "slice size is required if slice topology is requested");
    if (sreq == NULL && ssize != NULL)
        return annotation_error(err, apath, TOPO_KUEUE_SLICE_SIZE, NULL,
                                "cannot be set when '" TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY
                                "' is not present");
    if (scon != NULL) {
        if (sreq != NULL || ssize != NULL)
            return annotation_error(err, apath, TOPO_KUEUE_SLICE_CONSTRAINTS, NULL,
                                    "must not be combined with " TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY
                                    " or " TOPO_KUEUE_SLICE_SIZE);
        if ((error = decode_layers(ps, scon, apath, pool, err)) < 0)
            return error;
    }
    if (group != NULL)
        return annotation_error(err, apath, TOPO_KUEUE_GROUP_NAME, group,
                                "a PodSet group needs two PodSets (leader and workers); "
                                "a single Pod or Job manifest has one");
    ps->required = req;
    ps->preferred = pref;
    ps->slice_required = sreq;
    return 0;
}

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
        (error = decode_annotations(ps, ann, nann, p, pool, err)) < 0 ||
        (error = topo_pod_requests(&req, &ps->nrequests, tspec, sp, pool, err)) < 0 ||
        (error = topo_decode_tolerations(&tol, &ps->ntolerations,
                                         json_object_get(tspec, "tolerations"),
                                         P(p, sp, "tolerations"), pool, err)) < 0 ||
        (error = topo_decode_kv(&sel, &ps->nnode_selector, json_object_get(tspec, "nodeSelector"),
                                P(p, sp, "nodeSelector"), pool, err)) < 0 ||
        (error = decode_affinity(ps, tspec, sp, pool, err)) < 0)
        return error;
    ps->requests = req;
    ps->tolerations = tol;
    ps->node_selector = sel;
    return topo_podset_validate(ps, err);
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
        error = topo_err_set(err, TOPO_ENOMEM, "out of memory");
        goto cleanup;
    }
    error = topo_podset_load_text(out, text, len, source, pool, err);

cleanup:
    free(text);
    return error;
}
