/* A PodSet's annotations → the engine's topology request, validated as
 * Kueue's webhook validates them (pkg/controller/jobframework/
 * tas_validation.go at ff69552e) and built as its podSetTopologyRequest
 * builder builds them (tas.go). The order of the checks is Kueue's, so
 * several errors read as Kueue would list them. */
#include "kueue_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "topo/goparse.h"
#include "topo/json.h"
#include "topo/limits.h"

/* The Go type the constraints annotation is decoded into (named in
 * encoding/json's messages). */
#define CONSTRAINT_TYPE "PodsetSliceRequiredTopologyConstraint"

static const char *annotation(const topo_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (kv[i].key != NULL && strcmp(kv[i].key, key) == 0)
            return kv[i].value != NULL ? kv[i].value : "";
    return NULL;
}

int topo_kueue_has_topology_request(const topo_kv *annotations, size_t n)
{
    static const char *const tas[] = TOPO_KUEUE_TAS_ANNOTATIONS;
    for (size_t i = 0; tas[i] != NULL; i++)
        if (annotation(annotations, n, tas[i]) != NULL)
            return 1;
    return 0;
}

int topo_kueue_has_podset_annotation(const topo_kv *annotations, size_t n)
{
    return topo_kueue_has_topology_request(annotations, n) ||
           annotation(annotations, n, TOPO_KUEUE_SLICE_SIZE) != NULL ||
           annotation(annotations, n, TOPO_KUEUE_GROUP_NAME) != NULL;
}

/* metavalidation.ValidateLabelName: one error per message. */
static void label_name(kueue_errs *e, const char *value, const char *field)
{
    const char *msgs[TOPO_LABEL_MAX_KEY_ERRORS];
    size_t n = topo_label_key_errors(value, msgs);
    for (size_t i = 0; i < n; i++)
        kueue_invalid(e, field, value, msgs[i]);
}

/* --- the constraints annotation, decoded as encoding/json would ------------------ */

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "bool";
    case JSON_NULL: return "null";
    }
    return "value";
}

/* One entry {"topology": string, "size": int32}; Go matches keys without
 * regard to case, ignores unknown ones, and leaves null fields zero. */
static const char *decode_layer(topo_slice_layer *l, const json_t *v, topo_pool *pool)
{
    const char *key;
    const json_t *f;
    l->level = "";
    l->size = 0;
    if (json_is_null(v))
        return NULL;
    if (!json_is_object(v))
        return topo_pool_printf(pool,
                                "json: cannot unmarshal %s into Go value of type "
                                "v1beta2." CONSTRAINT_TYPE,
                                json_kind(v));
    json_object_foreach((json_t *)v, key, f) {
        if (json_is_null(f))
            continue;
        if (strcasecmp(key, "topology") == 0) {
            if (!json_is_string(f))
                return topo_pool_printf(pool,
                                        "json: cannot unmarshal %s into Go struct field "
                                        CONSTRAINT_TYPE ".topology of type string",
                                        json_kind(f));
            l->level = json_string_value(f);
        } else if (strcasecmp(key, "size") == 0) {
            json_int_t s = json_is_integer(f) ? json_integer_value(f) : 0;
            if (!json_is_integer(f) || s < INT32_MIN || s > INT32_MAX) {
                if (json_is_number(f))
                    return topo_pool_printf(pool,
                                            "json: cannot unmarshal number %s into Go struct "
                                            "field " CONSTRAINT_TYPE ".size of type int32",
                                            json_is_integer(f)
                                                ? topo_pool_printf(pool, "%lld", (long long)s)
                                                : topo_pool_printf(pool, "%g", json_real_value(f)));
                return topo_pool_printf(pool,
                                        "json: cannot unmarshal %s into Go struct field "
                                        CONSTRAINT_TYPE ".size of type int32",
                                        json_kind(f));
            }
            l->size = (int32_t)s;
        }
    }
    return NULL;
}

/* The layers of text into *out (pool), or the decoder's complaint in *why. */
static int decode_layers(topo_slice_layer **out, size_t *out_n, const char **why,
                         const char *text, topo_pool *pool)
{
    json_error_t jerr;
    json_t *root = NULL;
    int rc = topo_json_load(&root, text, strlen(text), JSON_DECODE_ANY, &jerr);
    *out = NULL;
    *out_n = 0;
    *why = NULL;
    if (rc == TOPO_ENOMEM)
        return rc;
    rc = 0;
    if (root == NULL) {
        *why = topo_pool_printf(pool, "%s", jerr.text);
        return *why != NULL ? 0 : TOPO_ENOMEM;
    }
    if (!json_is_array(root) && !json_is_null(root)) {
        *why = topo_pool_printf(pool,
                                "json: cannot unmarshal %s into Go value of type "
                                "[]v1beta2." CONSTRAINT_TYPE,
                                json_kind(root));
        rc = *why != NULL ? 0 : TOPO_ENOMEM;
        goto cleanup;
    }
    size_t n = json_array_size(root);
    topo_slice_layer *layers = topo_pool_calloc(pool, n + 1, sizeof(*layers));
    if (layers == NULL) {
        rc = TOPO_ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < n && *why == NULL; i++) {
        *why = decode_layer(&layers[i], json_array_get(root, i), pool);
        /* strings live in the pool, past the JSON tree */
        if (*why == NULL && (layers[i].level = topo_pool_strdup(pool, layers[i].level)) == NULL)
            rc = TOPO_ENOMEM;
    }
    *out = layers;
    *out_n = n;
cleanup:
    json_decref(root);
    return rc;
}

/* validateSliceRequiredTopologyConstraintsAnnotation */
static void check_layers(kueue_errs *e, const char *apath, const char *text, int slice_found,
                         int size_found, int group_found, topo_slice_layer **layers,
                         size_t *nlayers)
{
    char fld[256], ip[300];
    const char *why = NULL;
    snprintf(fld, sizeof fld, "%s[" TOPO_KUEUE_SLICE_CONSTRAINTS "]", apath);
    if (slice_found)
        kueue_forbidden(e, fld, "may not be set when '" TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY
                                "' is specified");
    if (size_found)
        kueue_forbidden(e, fld, "may not be set when '" TOPO_KUEUE_SLICE_SIZE "' is specified");
    if (group_found) {
        char gp[256];
        snprintf(gp, sizeof gp, "%s[" TOPO_KUEUE_GROUP_NAME "]", apath);
        kueue_forbidden(e, gp, "may not be set when '" TOPO_KUEUE_SLICE_CONSTRAINTS
                               "' is specified");
    }
    if (decode_layers(layers, nlayers, &why, text, e->pool) < 0) {
        e->oom = 1;
        return;
    }
    if (why != NULL) {
        kueue_invalid(e, fld, text, topo_pool_printf(e->pool, "must be a valid JSON array: %s", why));
        *nlayers = 0;
        return;
    }
    if (*nlayers == 0 || *nlayers > TOPO_MAX_SLICE_LAYERS) {
        kueue_invalid(e, fld, text, "topology constraints must contain between 1 and 3 entries");
        *nlayers = 0;
        return;
    }
    const topo_slice_layer *l = *layers;
    for (size_t i = 0; i < *nlayers; i++) {
        snprintf(ip, sizeof ip, "%s[%zu].topology", fld, i);
        label_name(e, l[i].level, ip);
        if (l[i].size < 1) {
            snprintf(ip, sizeof ip, "%s[%zu].size", fld, i);
            kueue_invalid_int(e, ip, l[i].size, "must be greater than or equal to 1");
        }
    }
    for (size_t i = 1; i < *nlayers; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(l[i].level, l[j].level) == 0) {
                snprintf(ip, sizeof ip, "%s[%zu].topology", fld, i);
                kueue_duplicate(e, ip,
                                topo_pool_printf(e->pool, "%s (also at index %zu)", l[i].level, j));
                break;
            }
    for (size_t i = 0; i + 1 < *nlayers; i++)
        if (l[i + 1].size > 0 && l[i].size % l[i + 1].size != 0) {
            snprintf(ip, sizeof ip, "%s[%zu].size", fld, i + 1);
            kueue_invalid_int(e, ip, l[i + 1].size,
                              topo_pool_printf(e->pool, "must evenly divide the parent layer size %d",
                                               (int)l[i].size));
        }
}

int topo_kueue_podset_request(topo_podset_spec *ps, const topo_kv *kv, size_t n,
                              const char *meta_path, topo_pool *pool, topo_err *err)
{
    char apath[128], fld[256];
    const char *req = annotation(kv, n, TOPO_KUEUE_REQUIRED_TOPOLOGY);
    const char *pref = annotation(kv, n, TOPO_KUEUE_PREFERRED_TOPOLOGY);
    const char *unc = annotation(kv, n, TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY);
    const char *sreq = annotation(kv, n, TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY);
    const char *ssize = annotation(kv, n, TOPO_KUEUE_SLICE_SIZE);
    const char *scon = annotation(kv, n, TOPO_KUEUE_SLICE_CONSTRAINTS);
    const char *group = annotation(kv, n, TOPO_KUEUE_GROUP_NAME);
    topo_slice_layer *layers = NULL;
    size_t nlayers = 0;
    int64_t size = 0;
    int unconstrained = 0;
    uint64_t group_number;
    kueue_errs e;
    int rc;

    memset(&e, 0, sizeof e);
    e.pool = pool;
    snprintf(apath, sizeof apath, "%s.annotations",
             meta_path != NULL && meta_path[0] != '\0' ? meta_path : "metadata");
#define KEY(k) (snprintf(fld, sizeof fld, "%s[%s]", apath, (k)), fld)

    if ((req != NULL) + (pref != NULL) + (unc != NULL) > 1)
        kueue_invalid_omit(&e, apath,
                           "must not contain more than one topology annotation: [\"" 
                           TOPO_KUEUE_REQUIRED_TOPOLOGY "\", \"" TOPO_KUEUE_PREFERRED_TOPOLOGY
                           "\", \"" TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY "\"]");
    if (req != NULL)
        label_name(&e, req, KEY(TOPO_KUEUE_REQUIRED_TOPOLOGY));
    if (pref != NULL)
        label_name(&e, pref, KEY(TOPO_KUEUE_PREFERRED_TOPOLOGY));
    if (sreq != NULL)
        label_name(&e, sreq, KEY(TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY));
    if (group != NULL) {
        KEY(TOPO_KUEUE_GROUP_NAME);
        if (topo_go_parse_uint(group, 64, &group_number, NULL) == 0)
            kueue_invalid(&e, fld, group, "must not be a number");
        if (ssize != NULL)
            kueue_forbidden(&e, fld, "may not be set when '" TOPO_KUEUE_SLICE_SIZE
                                     "' is specified");
        if (sreq != NULL)
            kueue_forbidden(&e, fld, "may not be set when '" TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY
                                     "' is specified");
        if (req == NULL && pref == NULL)
            kueue_forbidden(&e, fld,
                            "may not be set when neither '" TOPO_KUEUE_PREFERRED_TOPOLOGY
                            "' nor '" TOPO_KUEUE_REQUIRED_TOPOLOGY "' is specified");
    }
    if (unc != NULL && topo_go_parse_bool(unc, &unconstrained, NULL) != 0)
        kueue_invalid(&e, KEY(TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY), unc, "must be a boolean value");
    if (ssize != NULL) {
        if (topo_go_parse_int(ssize, 32, &size, NULL) != 0)
            kueue_invalid(&e, KEY(TOPO_KUEUE_SLICE_SIZE), ssize, "must be a numeric value");
        else if (size < 1)
            kueue_invalid(&e, KEY(TOPO_KUEUE_SLICE_SIZE), ssize,
                          "must be greater than or equal to 1");
    }
    if (sreq != NULL && ssize == NULL)
        kueue_required(&e, KEY(TOPO_KUEUE_SLICE_SIZE),
                       "must be set when '" TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY "' is specified");
    if (sreq == NULL && ssize != NULL)
        kueue_forbidden(&e, KEY(TOPO_KUEUE_SLICE_SIZE),
                        "may not be set when '" TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY
                        "' is not specified");
    if (scon != NULL)
        check_layers(&e, apath, scon, sreq != NULL, ssize != NULL, group != NULL, &layers,
                     &nlayers);

    /* ValidateSliceSizeAnnotationUpperBound: only once the rest holds. */
    if (e.n == 0 && !e.oom && ssize != NULL && size > ps->count)
        kueue_invalid(&e, KEY(TOPO_KUEUE_SLICE_SIZE), ssize,
                      topo_pool_printf(pool, "must not be greater than pod set count %d",
                                       (int)ps->count));
    if (e.n == 0 && !e.oom && nlayers > 0 && layers[0].size > ps->count)
        kueue_invalid_int(&e, KEY(TOPO_KUEUE_SLICE_CONSTRAINTS), layers[0].size,
                          topo_pool_printf(pool, "must not be greater than pod set count %d",
                                           (int)ps->count));
#undef KEY
    if ((rc = kueue_errs_finish(&e, err)) < 0)
        return rc;

    /* podSetTopologyRequestBuilder.Build */
    ps->required = req;
    ps->preferred = req == NULL ? pref : NULL;
    ps->unconstrained = req == NULL && pref == NULL && unc != NULL && unconstrained;
    ps->slice_required = NULL;
    ps->slice_size = 0;
    ps->layers = NULL;
    ps->nlayers = 0;
    if (nlayers > 0) {
        ps->layers = layers;
        ps->nlayers = nlayers;
    } else if (sreq != NULL && ssize != NULL) {
        ps->slice_required = sreq;
        ps->slice_size = (int32_t)size;
    }
    ps->group = group != NULL && (req != NULL || pref != NULL) ? group : NULL;
    return 0;
}

const char *topo_kueue_request_text(const topo_podset_spec *ps, topo_pool *pool)
{
    const char *t = ps->required      ? topo_pool_printf(pool, "required %s", ps->required)
                    : ps->preferred   ? topo_pool_printf(pool, "preferred %s", ps->preferred)
                    : ps->unconstrained ? "unconstrained"
                                        : "no level";
    if (t != NULL && ps->slice_required != NULL)
        t = topo_pool_printf(pool, "%s, slices of %d in %s", t, (int)ps->slice_size,
                             ps->slice_required);
    for (size_t i = 0; t != NULL && i < ps->nlayers; i++)
        t = topo_pool_printf(pool, "%s%s%s:%d", t, i == 0 ? ", layers " : "/",
                             ps->layers[i].level, (int)ps->layers[i].size);
    if (t != NULL && ps->group != NULL)
        t = topo_pool_printf(pool, "%s, group %s", t, ps->group);
    return t;
}
