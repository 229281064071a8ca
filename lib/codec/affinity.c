/* Pod spec.affinity.nodeAffinity → the engine's selector terms. One
 * implementation for every reader of pod specs: PodSet manifests
 * (lib/inventory) and admitted pods (lib/admission), which must not link
 * each other. Validated as the API server does for the fields the engine
 * uses (operators, value counts, weights). */
#include <stdint.h>
#include <string.h>

#include "topo/decode.h"
#include "topo/goparse.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

/* One NodeSelectorTerm (a required term or a preference): its
 * matchExpressions. matchFields (by metadata.name) is refused rather than
 * ignored: ignoring it would place pods on nodes the scheduler rejects. */
static int decode_exprs(const topo_match_expr **out, size_t *out_n, const json_t *term,
                        const char *path, topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX], ep[TOPO_DECODE_PATH_MAX], vsp[TOPO_DECODE_PATH_MAX],
        vp[TOPO_DECODE_PATH_MAX];
    const json_t *exprs = NULL, *fields = NULL;
    topo_match_expr *e = NULL;
    size_t n;
    int error;

    *out = NULL;
    *out_n = 0;
    if (term != NULL && !json_is_null(term) && !json_is_object(term))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(term));
    if ((error = topo_decode_member(&exprs, term, "matchExpressions", path, JSON_ARRAY, 0,
                                    err)) < 0 ||
        (error = topo_decode_member(&fields, term, "matchFields", path, JSON_ARRAY, 0, err)) < 0)
        return error;
    if (json_array_size(fields) > 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: not supported (use matchExpressions)",
                            P(p, path, "matchFields"));
    if ((n = json_array_size(exprs)) == 0)
        return 0;
    if ((e = topo_pool_calloc(pool, n, sizeof(*e))) == NULL)
        return topo_err_nomem(err, "node affinity");
    P(p, path, "matchExpressions");
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(exprs, i), *vals = NULL;
        const char **values = NULL;
        topo_decode_path_index(ep, sizeof(ep), p, i);
        if (!json_is_object(x))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", ep,
                                topo_decode_type_name(x));
        if ((error = topo_decode_string(&e[i].key, x, "key", ep, 1, pool, err)) < 0 ||
            (error = topo_decode_string(&e[i].op, x, "operator", ep, 1, pool, err)) < 0 ||
            (error = topo_decode_member(&vals, x, "values", ep, JSON_ARRAY, 0, err)) < 0)
            return error;
        size_t nv = json_array_size(vals);
        P(vsp, ep, "values");
        if (nv > 0 && (values = topo_pool_calloc(pool, nv, sizeof(*values))) == NULL)
            return topo_err_nomem(err, "node affinity");
        for (size_t k = 0; k < nv; k++) {
            const json_t *v = json_array_get(vals, k);
            topo_decode_path_index(vp, sizeof(vp), vsp, k);
            if (!json_is_string(v))
                return topo_err_set(err, TOPO_EINVALID, "%s: expected a string, got %s", vp,
                                    topo_decode_type_name(v));
            if ((values[k] = topo_pool_strdup(pool, json_string_value(v))) == NULL)
                return topo_err_nomem(err, "node affinity");
        }
        e[i].values = values;
        e[i].nvalues = nv;
        const char *op = e[i].op;
        int set = strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0;
        int exists = strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0;
        int cmp = strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0;
        if (!set && !exists && !cmp)
            return topo_err_set(err, TOPO_EINVALID,
                                "%s: unsupported value \"%s\" (In, NotIn, Exists, DoesNotExist, "
                                "Gt, Lt)",
                                P(vp, ep, "operator"), op);
        if (set && nv == 0)
            return topo_err_set(err, TOPO_EINVALID, "%s: must be specified when operator is %s",
                                vsp, op);
        if (exists && nv != 0)
            return topo_err_set(err, TOPO_EINVALID, "%s: may not be specified when operator is %s",
                                vsp, op);
        /* Gt/Lt values must pass strconv.ParseInt(s, 10, 64). */
        int64_t bound;
        if (cmp && (nv != 1 || topo_go_parse_int(values[0], 64, &bound, NULL) != 0))
            return topo_err_set(err, TOPO_EINVALID,
                                "%s: must have one integer element when operator is %s",
                                vsp, op);
    }
    *out = e;
    *out_n = n;
    return 0;
}

static int decode_required(topo_node_affinity *out, const json_t *req, const char *rp,
                           topo_pool *pool, topo_err *err)
{
    char tp[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *terms = NULL;
    int error;

    if ((error = topo_decode_member(&terms, req, "nodeSelectorTerms", rp, JSON_ARRAY, 1, err)) < 0)
        return error;
    P(tp, rp, "nodeSelectorTerms");
    size_t n = json_array_size(terms);
    if (n == 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: must have at least one term", tp);
    topo_selector_term *t = topo_pool_calloc(pool, n, sizeof(*t));
    if (t == NULL)
        return topo_err_nomem(err, "node affinity");
    for (size_t i = 0; i < n; i++) {
        topo_decode_path_index(ip, sizeof(ip), tp, i);
        if ((error = decode_exprs(&t[i].exprs, &t[i].nexprs, json_array_get(terms, i), ip, pool,
                                  err)) < 0)
            return error;
    }
    out->required_terms = t;
    out->nrequired_terms = n;
    return 0;
}

static int decode_preferred(topo_node_affinity *out, const json_t *pref, const char *rp,
                            topo_pool *pool, topo_err *err)
{
    char tp[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    size_t n = json_array_size(pref);
    int error;

    if (n == 0)
        return 0;
    topo_preferred_term *t = topo_pool_calloc(pool, n, sizeof(*t));
    if (t == NULL)
        return topo_err_nomem(err, "node affinity");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(pref, i), *preference = NULL;
        int64_t weight = 0;
        topo_decode_path_index(ip, sizeof(ip), rp, i);
        if (!json_is_object(e))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", ip,
                                topo_decode_type_name(e));
        if ((error = topo_decode_int(&weight, e, "weight", ip, 1, err)) < 0 ||
            (error = topo_decode_member(&preference, e, "preference", ip, JSON_OBJECT, 1,
                                        err)) < 0 ||
            (error = decode_exprs(&t[i].term.exprs, &t[i].term.nexprs, preference,
                                  P(tp, ip, "preference"), pool, err)) < 0)
            return error;
        if (weight < 1 || weight > 100)
            return topo_err_set(err, TOPO_EINVALID, "%s: must be in the range 1-100",
                                P(tp, ip, "weight"));
        t[i].weight = (int32_t)weight;
    }
    out->preferred_terms = t;
    out->npreferred_terms = n;
    return 0;
}

int topo_decode_node_affinity(topo_node_affinity *out, const json_t *obj, const char *path,
                              topo_pool *pool, topo_err *err)
{
    char np[TOPO_DECODE_PATH_MAX], rp[TOPO_DECODE_PATH_MAX];
    const json_t *na = NULL, *req = NULL, *pref = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    if (obj != NULL && !json_is_null(obj) && !json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    P(np, path, "nodeAffinity");
    if ((error = topo_decode_member(&na, obj, "nodeAffinity", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_member(&req, na, "requiredDuringSchedulingIgnoredDuringExecution", np,
                                    JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_member(&pref, na, "preferredDuringSchedulingIgnoredDuringExecution",
                                    np, JSON_ARRAY, 0, err)) < 0)
        return error;
    if (req != NULL &&
        (error = decode_required(out, req,
                                 P(rp, np, "requiredDuringSchedulingIgnoredDuringExecution"), pool,
                                 err)) < 0)
        return error;
    if ((error = decode_preferred(out, pref,
                                  P(rp, np, "preferredDuringSchedulingIgnoredDuringExecution"),
                                  pool, err)) < 0)
        return error;
    return 0;
}
