/* Conformance case files → engine inputs and snapshots (topo/cases.h).
 *
 * Two phases: parse (the JSON is validated and copied into the pool; any
 * problem fails the whole file, naming case and field), then set up (gates,
 * snapshot, usage; a problem there fails only that case, through
 * setup_failure, because it is about the engine rather than the file). */
#include "topo/cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/cfgreader.h"
#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/kueue.h"
#include "topo/limits.h"
#include "topo/podreq.h"
#include "topo/strmap.h"

#define PATH_MAX_LEN TOPO_DECODE_PATH_MAX

/* Matches the usage "source" for TAS usage of a sibling flavor. */
#define USAGE_OTHER_FLAVOR "other-flavor-same-topology"

static const json_t *field(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

/* {levels: [...], domains: [{values: [...], count}]} */
static int decode_assignment(topo_assignment *out, const json_t *obj, const char *path,
                             const topo_cfg *L)
{
    char p[PATH_MAX_LEN], dp[PATH_MAX_LEN];
    const json_t *domains = NULL;
    topo_assign_domain *d = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj))
        return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    if ((rc = topo_cfg_strings(L, &out->levels, &out->nlevels, obj, "levels", path, 1, 1, 1)) < 0)
        return rc;
    if (out->nlevels > TOPO_MAX_LEVELS)
        return topo_err_set(L->err, TOPO_EINVALID, "%s: more than %d levels",
                            topo_decode_path_key(p, sizeof(p), path, "levels"),
                            TOPO_MAX_LEVELS);
    if ((rc = topo_cfg_member(L, &domains, obj, "domains", path, JSON_ARRAY, "a list", 1)) < 0)
        return rc;
    topo_decode_path_key(dp, sizeof(dp), path, "domains");
    size_t n = json_array_size(domains);
    if (n > 0 && (d = topo_pool_calloc(L->pool, n, sizeof(*d))) == NULL)
        return topo_err_nomem(L->err, NULL);
    for (size_t i = 0; i < n; i++) {
        const json_t *dom = json_array_get(domains, i);
        size_t nvalues = 0;
        topo_decode_path_index(p, sizeof(p), dp, i);
        if (!json_is_object(dom))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(dom));
        if ((rc = topo_cfg_strings(L, &d[i].values, &nvalues, dom, "values", p, 1, 1, 0)) < 0)
            return rc;
        if (nvalues != out->nlevels)
            return topo_err_set(L->err, TOPO_EINVALID,
                                "%s.values: %zu value(s) for %zu level(s)", p, nvalues,
                                out->nlevels);
        if ((rc = topo_cfg_require(L, dom, "count", p)) < 0 ||
            (rc = topo_cfg_int32(L, &d[i].count, dom, "count", p, 0, TOPO_MAX_PODSET_COUNT)) < 0)
            return rc;
    }
    out->domains = d;
    out->ndomains = n;
    return 0;
}

/* [{key, operator, values}] */
static int decode_exprs(const topo_match_expr **out, size_t *out_n, const json_t *term,
                        const char *path, const topo_cfg *L)
{
    char p[PATH_MAX_LEN], ep[PATH_MAX_LEN];
    const json_t *arr = NULL;
    topo_match_expr *e = NULL;
    int rc;

    *out = NULL;
    *out_n = 0;
    if ((rc = topo_cfg_array(L, &arr, term, "match_expressions", path)) < 0)
        return rc;
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if ((e = topo_pool_calloc(L->pool, n, sizeof(*e))) == NULL)
        return topo_err_nomem(L->err, NULL);
    topo_decode_path_key(ep, sizeof(ep), path, "match_expressions");
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(arr, i);
        topo_decode_path_index(p, sizeof(p), ep, i);
        if (!json_is_object(x))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(x));
        if ((rc = topo_cfg_name(L, &e[i].key, x, "key", p)) < 0 ||
            (rc = topo_cfg_name(L, &e[i].op, x, "operator", p)) < 0 ||
            (rc = topo_cfg_strings(L, &e[i].values, &e[i].nvalues, x, "values", p, 0, 0, 0)) < 0)
            return rc;
    }
    *out = e;
    *out_n = n;
    return 0;
}

/* node_affinity: {required_terms: [{match_expressions}],
 *                 preferred_terms: [{weight, match_expressions}]} */
static int decode_affinity(topo_podset_spec *ps, const json_t *ps_obj, const char *path,
                           const topo_cfg *L)
{
    char ap[PATH_MAX_LEN], p[PATH_MAX_LEN], tp[PATH_MAX_LEN];
    const json_t *aff = NULL, *req = NULL, *pref = NULL;
    int rc;

    if ((rc = topo_cfg_object(L, &aff, ps_obj, "node_affinity", path)) < 0)
        return rc;
    if (aff == NULL)
        return 0;
    topo_decode_path_key(ap, sizeof(ap), path, "node_affinity");
    if ((rc = topo_cfg_array(L, &req, aff, "required_terms", ap)) < 0 ||
        (rc = topo_cfg_array(L, &pref, aff, "preferred_terms", ap)) < 0)
        return rc;

    size_t nreq = json_array_size(req);
    if (nreq > 0) {
        topo_selector_term *t = topo_pool_calloc(L->pool, nreq, sizeof(*t));
        if (t == NULL)
            return topo_err_nomem(L->err, NULL);
        topo_decode_path_key(tp, sizeof(tp), ap, "required_terms");
        for (size_t i = 0; i < nreq; i++) {
            const json_t *x = json_array_get(req, i);
            topo_decode_path_index(p, sizeof(p), tp, i);
            if (!json_is_object(x))
                return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s",
                                    p, topo_decode_type_name(x));
            if ((rc = decode_exprs(&t[i].exprs, &t[i].nexprs, x, p, L)) < 0)
                return rc;
        }
        ps->required_terms = t;
        ps->nrequired_terms = nreq;
    }
    size_t npref = json_array_size(pref);
    if (npref > 0) {
        topo_preferred_term *t = topo_pool_calloc(L->pool, npref, sizeof(*t));
        if (t == NULL)
            return topo_err_nomem(L->err, NULL);
        topo_decode_path_key(tp, sizeof(tp), ap, "preferred_terms");
        for (size_t i = 0; i < npref; i++) {
            const json_t *x = json_array_get(pref, i);
            topo_decode_path_index(p, sizeof(p), tp, i);
            if (!json_is_object(x))
                return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s",
                                    p, topo_decode_type_name(x));
            if ((rc = topo_cfg_require(L, x, "weight", p)) < 0 ||
                (rc = topo_cfg_int32(L, &t[i].weight, x, "weight", p, 1, 100)) < 0 ||
                (rc = decode_exprs(&t[i].term.exprs, &t[i].term.nexprs, x, p, L)) < 0)
                return rc;
        }
        ps->preferred_terms = t;
        ps->npreferred_terms = npref;
    }
    return 0;
}

/* slice_layers: null or [{level (or topology), size}] */
static int decode_layers(topo_podset_spec *ps, const json_t *ps_obj, const char *path,
                         const topo_cfg *L)
{
    char lp[PATH_MAX_LEN], p[PATH_MAX_LEN];
    const json_t *arr = NULL;
    topo_slice_layer *layers = NULL;
    int rc;

    if ((rc = topo_cfg_array(L, &arr, ps_obj, "slice_layers", path)) < 0)
        return rc;
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    topo_decode_path_key(lp, sizeof(lp), path, "slice_layers");
    if (n > TOPO_MAX_LEVELS)
        return topo_err_set(L->err, TOPO_EINVALID, "%s: more than %d layers", lp,
                            TOPO_MAX_LEVELS);
    if ((layers = topo_pool_calloc(L->pool, n, sizeof(*layers))) == NULL)
        return topo_err_nomem(L->err, NULL);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(arr, i);
        topo_decode_path_index(p, sizeof(p), lp, i);
        if (!json_is_object(x))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(x));
        /* The data file says "level"; Kueue's annotation says "topology". */
        const char *key = field(x, "level") != NULL ? "level" : "topology";
        if ((rc = topo_cfg_name(L, &layers[i].level, x, key, p)) < 0 ||
            (rc = topo_cfg_require(L, x, "size", p)) < 0 ||
            (rc = topo_cfg_int32(L, &layers[i].size, x, "size", p, 1, TOPO_MAX_PODSET_COUNT)) < 0)
            return rc;
    }
    ps->layers = layers;
    ps->nlayers = n;
    return 0;
}

static int decode_podset(topo_podset_spec *ps, const json_t *obj, const char *path,
                         const topo_cfg *L)
{
    char p[PATH_MAX_LEN];
    const json_t *prev = NULL;
    topo_resource *req = NULL;
    topo_toleration *tol = NULL;
    topo_kv *sel = NULL;
    int rc;

    memset(ps, 0, sizeof(*ps));
    if (!json_is_object(obj))
        return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    if ((rc = topo_cfg_name(L, &ps->name, obj, "name", path)) < 0 ||
        (rc = topo_cfg_require(L, obj, "count", path)) < 0 ||
        (rc = topo_cfg_int32(L, &ps->count, obj, "count", path, 0, TOPO_MAX_PODSET_COUNT)) < 0)
        return rc;
    if ((rc = topo_decode_resources(&req, &ps->nrequests, field(obj, "requests"),
                                    topo_decode_path_key(p, sizeof(p), path, "requests"),
                                    L->pool, L->err)) < 0)
        return rc;
    ps->requests = req;
    if ((rc = topo_cfg_string(L, &ps->required, obj, "required", path, 0)) < 0 ||
        (rc = topo_cfg_string(L, &ps->preferred, obj, "preferred", path, 0)) < 0 ||
        (rc = topo_cfg_bool(L, &ps->unconstrained, obj, "unconstrained", path)) < 0 ||
        (rc = topo_cfg_bool(L, &ps->implied, obj, "implied", path)) < 0 ||
        (rc = topo_cfg_string(L, &ps->slice_required, obj, "slice_required", path, 0)) < 0 ||
        (rc = topo_cfg_int32(L, &ps->slice_size, obj, "slice_size", path, 0,
                             TOPO_MAX_PODSET_COUNT)) < 0 ||
        (rc = decode_layers(ps, obj, path, L)) < 0 ||
        (rc = topo_cfg_string(L, &ps->group, obj, "group", path, 0)) < 0)
        return rc;
    if ((rc = topo_decode_tolerations(&tol, &ps->ntolerations, field(obj, "tolerations"),
                                      topo_decode_path_key(p, sizeof(p), path, "tolerations"),
                                      L->pool, L->err)) < 0)
        return rc;
    ps->tolerations = tol;
    if ((rc = topo_decode_kv(&sel, &ps->nnode_selector, field(obj, "node_selector"),
                             topo_decode_path_key(p, sizeof(p), path, "node_selector"), L->pool,
                             L->err)) < 0)
        return rc;
    ps->node_selector = sel;
    if ((rc = decode_affinity(ps, obj, path, L)) < 0)
        return rc;
    if ((rc = topo_cfg_object(L, &prev, obj, "previous_assignment", path)) < 0)
        return rc;
    if (prev != NULL) {
        topo_assignment *a = topo_pool_calloc(L->pool, 1, sizeof(*a));
        if (a == NULL)
            return topo_err_nomem(L->err, NULL);
        if ((rc = decode_assignment(a, prev,
                                    topo_decode_path_key(p, sizeof(p), path,
                                                         "previous_assignment"),
                                    L)) < 0)
            return rc;
        ps->previous = a;
    }
    return 0;
}

static int decode_node(topo_node_spec *n, const json_t *obj, const char *path, const topo_cfg *L)
{
    char p[PATH_MAX_LEN];
    topo_kv *labels = NULL;
    topo_resource *alloc = NULL;
    topo_taint *taints = NULL;
    int rc;

    memset(n, 0, sizeof(*n));
    if (!json_is_object(obj))
        return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    if ((rc = topo_cfg_name(L, &n->name, obj, "name", path)) < 0)
        return rc;
    if ((rc = topo_decode_kv(&labels, &n->nlabels, field(obj, "labels"),
                             topo_decode_path_key(p, sizeof(p), path, "labels"), L->pool,
                             L->err)) < 0 ||
        (rc = topo_decode_resources(&alloc, &n->nallocatable, field(obj, "allocatable"),
                                    topo_decode_path_key(p, sizeof(p), path, "allocatable"),
                                    L->pool, L->err)) < 0 ||
        (rc = topo_decode_taints(&taints, &n->ntaints, field(obj, "taints"),
                                 topo_decode_path_key(p, sizeof(p), path, "taints"), L->pool,
                                 L->err)) < 0)
        return rc;
    n->labels = labels;
    n->allocatable = alloc;
    n->taints = taints;
    if ((rc = topo_cfg_bool(L, &n->unschedulable, obj, "unschedulable", path)) < 0 ||
        (rc = topo_cfg_require(L, obj, "ready", path)) < 0 ||
        (rc = topo_cfg_bool(L, &n->ready, obj, "ready", path)) < 0)
        return rc;
    return 0;
}

static int decode_usage(topo_case_usage *u, const json_t *obj, const char *path, const topo_cfg *L)
{
    char p[PATH_MAX_LEN];
    topo_resource *req = NULL;
    int rc;

    memset(u, 0, sizeof(*u));
    if (!json_is_object(obj))
        return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    if ((rc = topo_cfg_require(L, obj, "tas", path)) < 0 ||
        (rc = topo_cfg_bool(L, &u->tas, obj, "tas", path)) < 0 ||
        (rc = topo_cfg_string(L, &u->node, obj, "node", path, 0)) < 0 ||
        (rc = topo_cfg_string(L, &u->pod, obj, "pod", path, 0)) < 0 ||
        (rc = topo_cfg_string(L, &u->phase, obj, "phase", path, 0)) < 0 ||
        (rc = topo_cfg_string(L, &u->source, obj, "source", path, 0)) < 0)
        return rc;
    if ((rc = topo_decode_resources(&req, &u->nrequests, field(obj, "requests"),
                                    topo_decode_path_key(p, sizeof(p), path, "requests"),
                                    L->pool, L->err)) < 0)
        return rc;
    u->requests = req;
    if (u->tas) {
        if ((rc = topo_cfg_strings(L, &u->domain_values, &u->ndomain_values, obj, "domain_values",
                                   path, 1, 1, 1)) < 0 ||
            (rc = topo_cfg_require(L, obj, "count", path)) < 0 ||
            (rc = topo_cfg_int32(L, &u->count, obj, "count", path, 1, TOPO_MAX_PODSET_COUNT)) < 0)
            return rc;
    } else {
        u->count = 1;
    }
    return 0;
}

static int decode_workload(const topo_workload_spec **out, const json_t *obj, const char *path,
                           const topo_cfg *L)
{
    char p[PATH_MAX_LEN], ap[PATH_MAX_LEN];
    const json_t *owners = NULL, *admission = NULL, *annotations = NULL;
    topo_workload_spec *w = NULL;
    topo_admitted_podset *adm = NULL;
    int rc;

    *out = NULL;
    if ((w = topo_pool_calloc(L->pool, 1, sizeof(*w))) == NULL)
        return topo_err_nomem(L->err, NULL);
    if ((rc = topo_cfg_array(L, &owners, obj, "owner_references", path)) < 0 ||
        (rc = topo_cfg_object(L, &annotations, obj, "annotations", path)) < 0 ||
        (rc = topo_cfg_strings(L, &w->unhealthy_nodes, &w->nunhealthy_nodes, obj, "unhealthy_nodes",
                               path, 0, 1, 0)) < 0 ||
        (rc = topo_cfg_array(L, &admission, obj, "admission", path)) < 0)
        return rc;

    size_t nowners = json_array_size(owners);
    topo_kueue_owner *own = topo_pool_calloc(L->pool, nowners + 1, sizeof(*own));
    topo_kv *ann = NULL;
    size_t nann = 0;
    if (own == NULL)
        return topo_err_nomem(L->err, NULL);
    for (size_t i = 0; i < nowners; i++) {
        const json_t *o = json_array_get(owners, i);
        topo_decode_path_index(p, sizeof(p),
                               topo_decode_path_key(ap, sizeof(ap), path, "owner_references"), i);
        if (!json_is_object(o))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(o));
        if ((rc = topo_cfg_name(L, &own[i].kind, o, "kind", p)) < 0 ||
            (rc = topo_cfg_string(L, &own[i].api_version, o, "apiVersion", p, 0)) < 0)
            return rc;
    }
    if ((rc = topo_decode_kv(&ann, &nann, annotations,
                             topo_decode_path_key(p, sizeof(p), path, "annotations"), L->pool,
                             L->err)) < 0)
        return rc;
    w->single_pod_owned = topo_kueue_owned_by_single_pod(own, nowners, ann, nann);

    size_t nadm = json_array_size(admission);
    if (nadm > 0 && (adm = topo_pool_calloc(L->pool, nadm, sizeof(*adm))) == NULL)
        return topo_err_nomem(L->err, NULL);
    topo_decode_path_key(ap, sizeof(ap), path, "admission");
    for (size_t i = 0; i < nadm; i++) {
        const json_t *a = json_array_get(admission, i);
        const json_t *asg = NULL;
        topo_assignment *as = NULL;
        topo_decode_path_index(p, sizeof(p), ap, i);
        if (!json_is_object(a))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(a));
        if ((rc = topo_cfg_name(L, &adm[i].podset, a, "podset", p)) < 0 ||
            (rc = topo_cfg_require(L, a, "count", p)) < 0 ||
            (rc = topo_cfg_int32(L, &adm[i].count, a, "count", p, 0, TOPO_MAX_PODSET_COUNT)) < 0 ||
            (rc = topo_cfg_member(L, &asg, a, "assignment", p, JSON_OBJECT, "a map", 1)) < 0)
            return rc;
        if ((as = topo_pool_calloc(L->pool, 1, sizeof(*as))) == NULL)
            return topo_err_nomem(L->err, NULL);
        char sp[PATH_MAX_LEN];
        if ((rc = decode_assignment(as, asg, topo_decode_path_key(sp, sizeof(sp), p, "assignment"),
                                    L)) < 0)
            return rc;
        adm[i].assignment = as;
    }
    w->admission = adm;
    w->nadmission = nadm;
    *out = w;
    return 0;
}

static int decode_expect(topo_case *c, const json_t *obj, const topo_cfg *L)
{
    char p[PATH_MAX_LEN];
    const char *key;
    const json_t *value;
    topo_case_expect *ex = NULL;
    size_t n = json_object_size(obj), i = 0;
    int rc;

    if (n > 0 && (ex = topo_pool_calloc(L->pool, n, sizeof(*ex))) == NULL)
        return topo_err_nomem(L->err, NULL);
    json_object_foreach((json_t *)obj, key, value) {
        topo_decode_path_key(p, sizeof(p), "expect", key);
        size_t k;
        for (k = 0; k < c->npodsets; k++)
            if (strcmp(c->podsets[k].name, key) == 0)
                break;
        if (k == c->npodsets)
            return topo_err_set(L->err, TOPO_EINVALID, "%s: no PodSet of that name", p);
        if (!json_is_object(value))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(value));
        ex[i].podset = c->podsets[k].name;
        if (field(value, "error_contains") != NULL) {
            if (field(value, "levels") != NULL || field(value, "domains") != NULL)
                return topo_err_set(L->err, TOPO_EINVALID,
                                    "%s: error_contains and an assignment are exclusive", p);
            if ((rc = topo_cfg_string(L, &ex[i].error, value, "error_contains", p, 1)) < 0)
                return rc;
        } else if ((rc = decode_assignment(&ex[i].assignment, value, p, L)) < 0) {
            return rc;
        }
        i++;
    }
    c->expect = ex;
    c->nexpect = n;
    return 0;
}

static int decode_gates(topo_case *c, const json_t *obj, const topo_cfg *L)
{
    char p[PATH_MAX_LEN];
    const char *key;
    const json_t *value;

    topo_gates_init(&c->gates);
    json_object_foreach((json_t *)obj, key, value) {
        topo_decode_path_key(p, sizeof(p), "feature_gates", key);
        if (!json_is_boolean(value))
            return topo_err_set(L->err, TOPO_EINVALID, "%s: expected a boolean, got %s", p,
                                topo_decode_type_name(value));
        if (c->setup_failure != NULL)
            continue;
        topo_err gerr = TOPO_ERR_INIT;
        int rc = topo_gates_set(&c->gates, key, json_is_true(value), &gerr);
        if (rc == TOPO_ENOMEM)
            return topo_err_nomem(L->err, NULL);
        if (rc < 0) {
            char text[TOPO_ERR_TEXT_MAX + PATH_MAX_LEN + 32];
            snprintf(text, sizeof(text), "%s: %s", p,
                     rc == TOPO_ENOTFOUND ? "unknown feature gate" : gerr.text);
            c->setup_code = rc;
            if ((c->setup_failure = topo_pool_strdup(L->pool, text)) == NULL)
                return topo_err_nomem(L->err, NULL);
        }
    }
    return 0;
}

static int decode_case(topo_case *c, const json_t *obj, const topo_cfg *L)
{
    char p[PATH_MAX_LEN];
    const json_t *arr = NULL, *gates = NULL, *flavor = NULL, *workload = NULL, *expect = NULL;
    topo_kv *flavor_kv = NULL;
    topo_node_spec *nodes = NULL;
    topo_case_usage *usage = NULL;
    topo_podset_spec *podsets = NULL;
    int rc;

    if (!json_is_object(obj))
        return topo_err_set(L->err, TOPO_EINVALID, "expected an object, got %s",
                            topo_decode_type_name(obj));
    if ((rc = topo_cfg_name(L, &c->id, obj, "id", "")) < 0 ||
        (rc = topo_cfg_string(L, &c->source, obj, "source", "", 0)) < 0)
        return rc;

    /* topology */
    if ((rc = topo_cfg_name(L, &c->topology.topology_name, obj, "topology_name", "")) < 0 ||
        (rc = topo_cfg_strings(L, &c->topology.levels, &c->topology.nlevels, obj, "levels", "", 1,
                               1, 1)) < 0)
        return rc;
    if (c->topology.nlevels > TOPO_MAX_LEVELS)
        return topo_err_set(L->err, TOPO_EINVALID, "levels: more than %d levels",
                            TOPO_MAX_LEVELS);
    if ((rc = topo_cfg_object(L, &flavor, obj, "flavor_node_labels", "")) < 0 ||
        (rc = topo_decode_kv(&flavor_kv, &c->topology.nflavor_labels, flavor, "flavor_node_labels",
                             L->pool, L->err)) < 0)
        return rc;
    c->topology.flavor_labels = flavor_kv;

    /* nodes */
    if ((rc = topo_cfg_member(L, &arr, obj, "nodes", "", JSON_ARRAY, "a list", 1)) < 0)
        return rc;
    c->nnodes = json_array_size(arr);
    if (c->nnodes > 0 && (nodes = topo_pool_calloc(L->pool, c->nnodes, sizeof(*nodes))) == NULL)
        return topo_err_nomem(L->err, NULL);
    for (size_t i = 0; i < c->nnodes; i++)
        if ((rc = decode_node(&nodes[i], json_array_get(arr, i),
                              topo_decode_path_index(p, sizeof(p), "nodes", i), L)) < 0)
            return rc;
    c->nodes = nodes;

    /* existing usage */
    if ((rc = topo_cfg_array(L, &arr, obj, "existing_usage", "")) < 0)
        return rc;
    c->nusage = json_array_size(arr);
    if (c->nusage > 0 && (usage = topo_pool_calloc(L->pool, c->nusage, sizeof(*usage))) == NULL)
        return topo_err_nomem(L->err, NULL);
    for (size_t i = 0; i < c->nusage; i++)
        if ((rc = decode_usage(&usage[i], json_array_get(arr, i),
                               topo_decode_path_index(p, sizeof(p), "existing_usage", i), L)) <
            0)
            return rc;
    c->usage = usage;

    /* podsets */
    if ((rc = topo_cfg_member(L, &arr, obj, "podsets", "", JSON_ARRAY, "a list", 1)) < 0)
        return rc;
    c->npodsets = json_array_size(arr);
    if (c->npodsets == 0)
        return topo_err_set(L->err, TOPO_EINVALID, "podsets: must not be empty");
    if ((podsets = topo_pool_calloc(L->pool, c->npodsets, sizeof(*podsets))) == NULL)
        return topo_err_nomem(L->err, NULL);
    for (size_t i = 0; i < c->npodsets; i++) {
        if ((rc = decode_podset(&podsets[i], json_array_get(arr, i),
                                topo_decode_path_index(p, sizeof(p), "podsets", i), L)) < 0)
            return rc;
        for (size_t k = 0; k < i; k++)
            if (strcmp(podsets[k].name, podsets[i].name) == 0)
                return topo_err_set(L->err, TOPO_EINVALID, "%s.name: duplicate PodSet \"%s\"",
                                    p, podsets[i].name);
    }
    c->podsets = podsets;

    /* workload, gates, expectations */
    if ((rc = topo_cfg_object(L, &workload, obj, "workload", "")) < 0)
        return rc;
    if (workload != NULL && (rc = decode_workload(&c->workload, workload, "workload", L)) < 0)
        return rc;
    if ((rc = topo_cfg_object(L, &gates, obj, "feature_gates", "")) < 0 ||
        (rc = decode_gates(c, gates, L)) < 0)
        return rc;
    if ((rc = topo_cfg_member(L, &expect, obj, "expect", "", JSON_OBJECT, "a map", 1)) < 0 ||
        (rc = decode_expect(c, expect, L)) < 0)
        return rc;
    return 0;
}

/* Records why a case cannot run; only ENOMEM is returned as an error. */
static int setup_fail(topo_case *c, int code, const char *what, const topo_err *e,
                      const topo_cfg *L)
{
    char text[TOPO_ERR_TEXT_MAX + 64];
    if (code == TOPO_ENOMEM)
        return topo_err_nomem(L->err, NULL);
    snprintf(text, sizeof(text), "%s: %s", what, e->text[0] != '\0' ? e->text :
                                                 topo_strerror(code));
    c->setup_code = code;
    if ((c->setup_failure = topo_pool_strdup(L->pool, text)) == NULL)
        return topo_err_nomem(L->err, NULL);
    return 0;
}

/* Builds the snapshot and charges the usage. */
static int setup_case(topo_case *c, const topo_cfg *L)
{
    char what[64];
    topo_err e = TOPO_ERR_INIT;
    topo_snapshot *snap = NULL;
    int rc;

    if (c->setup_failure != NULL)
        return 0;
    if ((rc = topo_snapshot_create(&snap, &c->topology, &e)) < 0)
        return setup_fail(c, rc, "snapshot", &e, L);
    for (size_t i = 0; i < c->nnodes; i++) {
        if ((rc = topo_snapshot_add_node(snap, &c->nodes[i], &e)) < 0) {
            snprintf(what, sizeof(what), "nodes[%zu]", i);
            goto fail;
        }
    }
    if ((rc = topo_snapshot_build(snap, &e)) < 0) {
        snprintf(what, sizeof(what), "snapshot");
        goto fail;
    }
    for (size_t i = 0; i < c->nusage; i++) {
        topo_case_usage *u = (topo_case_usage *)&c->usage[i];
        snprintf(what, sizeof(what), "existing_usage[%zu]", i);
        if (!u->tas) {
            if (u->node == NULL || topo_pod_phase_finished(u->phase))
                continue;
            int ignored = 0;
            if ((rc = topo_snapshot_add_pod_usage(snap, u->node, u->requests, u->nrequests,
                                                  &ignored, &e)) < 0)
                goto fail;
            u->charged = !ignored;
        } else {
            if (u->source != NULL && strcmp(u->source, USAGE_OTHER_FLAVOR) == 0 &&
                !c->gates.TASHandleOverlappingFlavors)
                continue;
            if ((rc = topo_snapshot_add_tas_usage(snap, u->domain_values, u->ndomain_values,
                                                  u->count, u->requests, u->nrequests, &e)) < 0)
                goto fail;
            u->charged = 1;
        }
    }
    c->snapshot = snap;
    return 0;

fail:
    topo_snapshot_free(snap);
    return setup_fail(c, rc, what, &e, L);
}

void topo_cases_release(topo_case_file *file)
{
    if (file == NULL)
        return;
    for (size_t i = 0; i < file->ncases; i++) {
        topo_snapshot_free(file->cases[i].snapshot);
        file->cases[i].snapshot = NULL;
    }
}

const topo_case *topo_cases_find(const topo_case_file *file, const char *id)
{
    if (file == NULL || id == NULL)
        return NULL;
    for (size_t i = 0; i < file->ncases; i++)
        if (strcmp(file->cases[i].id, id) == 0)
            return &file->cases[i];
    return NULL;
}

int topo_cases_parse(topo_case_file **out, const char *text, size_t len, const char *source,
                     topo_pool *pool, topo_err *err)
{
    topo_cfg L = {.pool = pool, .err = err, .copy_strings = 1};
    json_t *root = NULL;
    topo_strmap *ids = NULL;
    topo_case_file *file = NULL;
    const char *src = NULL;
    int rc;

    *out = NULL;
    if ((src = topo_pool_strdup(pool, source != NULL ? source : "<cases>")) == NULL) {
        rc = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    if ((rc = topo_codec_json_parse(&root, text, len, src, err)) < 0)
        goto cleanup;
    if (!json_is_array(root)) {
        rc = topo_err_set(err, TOPO_EINVALID, "%s: expected a JSON array of cases, got %s", src,
                          topo_decode_type_name(root));
        goto cleanup;
    }
    if ((file = topo_pool_calloc(pool, 1, sizeof(*file))) == NULL) {
        rc = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    file->source = src;
    size_t n = json_array_size(root);
    if (n > 0 && (file->cases = topo_pool_calloc(pool, n, sizeof(*file->cases))) == NULL) {
        rc = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    if ((ids = topo_strmap_create(n)) == NULL) {
        rc = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        topo_case *c = &file->cases[i];
        if ((rc = decode_case(c, json_array_get(root, i), &L)) < 0) {
            if (rc != TOPO_ENOMEM) {
                if (c->id != NULL)
                    topo_err_wrap(err, "%s: case %zu (\"%s\")", src, i, c->id);
                else
                    topo_err_wrap(err, "%s: case %zu", src, i);
            }
            goto cleanup;
        }
        if (topo_strmap_get(ids, c->id) >= 0) {
            rc = topo_err_set(err, TOPO_EINVALID, "%s: case %zu: id: duplicate id \"%s\"", src,
                              i, c->id);
            goto cleanup;
        }
        if (topo_strmap_put(ids, c->id, (int32_t)i) < 0) {
            rc = topo_err_nomem(err, NULL);
            goto cleanup;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = setup_case(&file->cases[i], &L)) < 0)
            goto cleanup;
        file->ncases = i + 1;
    }
    file->ncases = n;
    *out = file;
    rc = 0;

cleanup:
    if (rc < 0)
        topo_cases_release(file);
    topo_strmap_free(ids);
    json_decref(root);
    return rc;
}

int topo_cases_load_file(topo_case_file **out, const char *path, topo_pool *pool, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    *out = NULL;
    if ((rc = topo_codec_read_file(&text, &len, path, TOPO_MAX_CASES_FILE, err)) < 0)
        return rc;
    rc = topo_cases_parse(out, text, len, path, pool, err);
    free(text);
    return rc;
}
