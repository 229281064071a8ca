/* Effective pod requests (k8s.io/component-helpers/resource PodRequests). */
#include "topo/podreq.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/decode.h"
#include "topo/array.h"
#include "topo/strmap.h"

/* A growable list of resources; names are pool strings. Past a few
 * entries it keeps a name index: a pod can name thousands of resources (one
 * per sidecar, say), and a scan per lookup made its requests cubic in
 * them. */
#define RL_INDEX_FROM 16

typedef struct rlist {
    topo_resource *v;
    size_t n, cap;
    topo_strmap *index; /* name -> position, once n reached RL_INDEX_FROM */
} rlist;

static void rl_reset(rlist *l)
{
    topo_strmap_free(l->index);
    l->index = NULL;
    l->n = 0;
}

static void rl_dispose(rlist *l)
{
    rl_reset(l);
    free(l->v);
    l->v = NULL;
    l->cap = 0;
}

static topo_resource *rl_find(rlist *l, const char *name)
{
    if (l->index != NULL) {
        int32_t i = topo_strmap_get(l->index, name);
        return i >= 0 ? &l->v[i] : NULL;
    }
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    return NULL;
}

static int rl_append(rlist *l, const char *name, int64_t amount)
{
    if (l->n == l->cap && topo_array_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0)
        return TOPO_ENOMEM;
    if (l->n >= INT32_MAX)
        return TOPO_ENOMEM;
    l->v[l->n].name = name;
    l->v[l->n].amount = amount;
    l->n++;
    if (l->index == NULL && l->n >= RL_INDEX_FROM) {
        if ((l->index = topo_strmap_create(l->n * 2)) == NULL)
            return TOPO_ENOMEM;
        for (size_t i = 0; i < l->n; i++)
            if (topo_strmap_put(l->index, l->v[i].name, (int32_t)i) < 0)
                return TOPO_ENOMEM;
    } else if (l->index != NULL &&
               topo_strmap_put(l->index, name, (int32_t)(l->n - 1)) < 0) {
        return TOPO_ENOMEM;
    }
    return 0;
}

static int overflow(topo_err *err, const char *path, const char *name)
{
    return topo_err_set(err, TOPO_ELIMIT, "%s: total request of %s overflows", path, name);
}

/* How rl_merge combines an amount with the one dst already has: added up
 * (containers running side by side) or the larger kept (init containers,
 * which run one at a time). */
typedef enum { RL_SUM, RL_MAX } rl_combine;

/* Merges src into dst: a name dst lacks is appended, a known one combined. */
static int rl_merge(rlist *dst, rl_combine how, const topo_resource *src, size_t n,
                    const char *path, topo_err *err)
{
    for (size_t i = 0; i < n; i++) {
        topo_resource *r = rl_find(dst, src[i].name);
        if (r == NULL) {
            if (rl_append(dst, src[i].name, src[i].amount) < 0)
                return topo_err_nomem(err, path);
        } else if (how == RL_SUM) {
            if (src[i].amount > INT64_MAX - r->amount)
                return overflow(err, path, src[i].name);
            r->amount += src[i].amount;
        } else if (src[i].amount > r->amount) {
            r->amount = src[i].amount;
        }
    }
    return 0;
}

static int rl_set(rlist *dst, const char *name, int64_t amount, const char *path, topo_err *err)
{
    topo_resource *r = rl_find(dst, name);
    if (r != NULL) {
        r->amount = amount;
        return 0;
    }
    if (rl_append(dst, name, amount) < 0)
        return topo_err_nomem(err, path);
    return 0;
}

/* requests of a `resources` object, each missing request defaulting to the
 * limit. `path` names the resources object. */
static int resources_requests(rlist *out, const json_t *resources, const char *path,
                              topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    topo_resource *req = NULL, *lim = NULL;
    size_t nreq = 0, nlim = 0;
    int error;

    rl_reset(out);
    if (resources == NULL || json_is_null(resources))
        return 0;
    if (!json_is_object(resources))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(resources));
    if ((error = topo_decode_resources(&req, &nreq, json_object_get(resources, "requests"),
                                       topo_decode_path_key(p, sizeof(p), path, "requests"),
                                       pool, err)) < 0 ||
        (error = topo_decode_resources(&lim, &nlim, json_object_get(resources, "limits"),
                                       topo_decode_path_key(p, sizeof(p), path, "limits"), pool,
                                       err)) < 0)
        return error;
    if ((error = rl_merge(out, RL_SUM, req, nreq, path, err)) < 0)
        return error;
    for (size_t i = 0; i < nlim; i++) {
        if (rl_find(out, lim[i].name) == NULL &&
            (error = rl_append(out, lim[i].name, lim[i].amount)) < 0)
            return topo_err_nomem(err, path);
    }
    return 0;
}

static int container_list(const json_t **out, const json_t *spec, const char *key,
                          const char *path, topo_err *err)
{
    return topo_decode_member(out, spec, key, path, JSON_ARRAY, 0, err);
}

static int cmp_resource(const void *a, const void *b)
{
    return strcmp(((const topo_resource *)a)->name, ((const topo_resource *)b)->name);
}

static int pod_level_resource(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
           strncmp(name, "hugepages-", 10) == 0;
}

int topo_pod_requests(topo_resource **out, size_t *out_n, const json_t *spec, const char *path,
                      topo_pool *pool, topo_err *err)
{
    char cp[TOPO_DECODE_PATH_MAX], rp[TOPO_DECODE_PATH_MAX], lp[TOPO_DECODE_PATH_MAX];
    rlist reqs = {0}, sidecars = {0}, inits = {0}, one = {0}, podlevel = {0};
    const json_t *containers = NULL, *init_containers = NULL, *overhead = NULL, *podres = NULL;
    topo_resource *ov = NULL, *res = NULL;
    size_t nov = 0;
    int error;

    *out = NULL;
    *out_n = 0;
    if (spec == NULL || json_is_null(spec))
        return 0;
    if (!json_is_object(spec)) {
        error = topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                             topo_decode_type_name(spec));
        goto cleanup;
    }
    if ((error = container_list(&containers, spec, "containers", path, err)) < 0 ||
        (error = container_list(&init_containers, spec, "initContainers", path, err)) < 0)
        goto cleanup;

    /* App containers: summed. */
    topo_decode_path_key(lp, sizeof(lp), path, "containers");
    for (size_t i = 0; i < json_array_size(containers); i++) {
        const json_t *c = json_array_get(containers, i);
        const json_t *r = NULL;
        topo_decode_path_index(cp, sizeof(cp), lp, i);
        if ((error = topo_decode_member(&r, c, "resources", cp, JSON_OBJECT, 0, err)) < 0 ||
            (error = resources_requests(&one, r, topo_decode_path_key(rp, sizeof(rp), cp, "resources"),
                                        pool, err)) < 0 ||
            (error = rl_merge(&reqs, RL_SUM, one.v, one.n, cp, err)) < 0)
            goto cleanup;
    }

    /* Init containers: restartable ones (sidecars) run alongside the app
     * containers and every later init container. */
    topo_decode_path_key(lp, sizeof(lp), path, "initContainers");
    for (size_t i = 0; i < json_array_size(init_containers); i++) {
        const json_t *c = json_array_get(init_containers, i);
        const json_t *r = NULL;
        const char *policy = NULL;
        topo_decode_path_index(cp, sizeof(cp), lp, i);
        if ((error = topo_decode_member(&r, c, "resources", cp, JSON_OBJECT, 0, err)) < 0 ||
            (error = topo_decode_string(&policy, c, "restartPolicy", cp, 0, pool, err)) < 0 ||
            (error = resources_requests(&one, r, topo_decode_path_key(rp, sizeof(rp), cp, "resources"),
                                        pool, err)) < 0)
            goto cleanup;
        /* The peak while container i starts: its own requests plus the
         * sidecars started before it (a sidecar counts itself). Only the
         * resources it names can rise above the peaks so far: for every
         * other one the sidecars' sum is already among them (invariant:
         * inits >= sidecars, resource by resource). Linear in the
         * resources named, whatever the number of sidecars. */
        int sidecar = policy != NULL && strcmp(policy, "Always") == 0;
        if (sidecar && ((error = rl_merge(&reqs, RL_SUM, one.v, one.n, cp, err)) < 0 ||
                        (error = rl_merge(&sidecars, RL_SUM, one.v, one.n, cp, err)) < 0))
            goto cleanup;
        for (size_t k = 0; k < one.n; k++) {
            const topo_resource *s = rl_find(&sidecars, one.v[k].name);
            topo_resource peak = {one.v[k].name, sidecar ? s->amount : one.v[k].amount};
            if (!sidecar && s != NULL) {
                if (s->amount > INT64_MAX - peak.amount) {
                    error = overflow(err, cp, peak.name);
                    goto cleanup;
                }
                peak.amount += s->amount;
            }
            if ((error = rl_merge(&inits, RL_MAX, &peak, 1, cp, err)) < 0)
                goto cleanup;
        }
    }
    if ((error = rl_merge(&reqs, RL_MAX, inits.v, inits.n, path, err)) < 0)
        goto cleanup;

    /* Pod-level resources replace the aggregate for the resources they support. */
    if ((error = topo_decode_member(&podres, spec, "resources", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = resources_requests(&podlevel, podres,
                                    topo_decode_path_key(rp, sizeof(rp), path, "resources"), pool,
                                    err)) < 0)
        goto cleanup;
    for (size_t i = 0; i < podlevel.n; i++) {
        if (pod_level_resource(podlevel.v[i].name) &&
            (error = rl_set(&reqs, podlevel.v[i].name, podlevel.v[i].amount, path, err)) < 0)
            goto cleanup;
    }

    if ((error = topo_decode_member(&overhead, spec, "overhead", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_resources(&ov, &nov, overhead,
                                       topo_decode_path_key(rp, sizeof(rp), path, "overhead"), pool,
                                       err)) < 0 ||
        (error = rl_merge(&reqs, RL_SUM, ov, nov, path, err)) < 0)
        goto cleanup;

    if (reqs.n > 0) {
        qsort(reqs.v, reqs.n, sizeof(*reqs.v), cmp_resource);
        res = topo_pool_calloc(pool, reqs.n, sizeof(*res));
        if (res == NULL) {
            error = topo_err_nomem(err, path);
            goto cleanup;
        }
        memcpy(res, reqs.v, reqs.n * sizeof(*res));
    }
    *out = res;
    *out_n = reqs.n;

cleanup:
    rl_dispose(&reqs);
    rl_dispose(&sidecars);
    rl_dispose(&inits);
    rl_dispose(&one);
    rl_dispose(&podlevel);
    return error;
}

int topo_pod_is_tas(const json_t *annotations)
{
    static const char *const keys[] = TOPO_KUEUE_TAS_ANNOTATIONS;
    if (!json_is_object(annotations))
        return 0;
    for (size_t i = 0; keys[i] != NULL; i++)
        if (json_object_get(annotations, keys[i]) != NULL)
            return 1;
    return 0;
}

int topo_pod_phase_finished(const char *phase)
{
    return phase != NULL && (strcmp(phase, TOPO_POD_PHASE_SUCCEEDED) == 0 ||
                            strcmp(phase, TOPO_POD_PHASE_FAILED) == 0);
}
