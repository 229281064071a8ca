/* Kueue pod groups (Kueue's pod integration): a group of
 * kueue.x-k8s.io/pod-group-total-count pods whose PodSets are its roles,
 * the pods of one shape each. Kueue builds the Workload only once every pod
 * of the group exists, one PodSet per role, and places them together; so
 * does the handler: each pod is recorded in the cache as it arrives (and
 * gated), and the group is placed when its last pod arrives or when the
 * ungater retries one of them. A pod whose total count contradicts the
 * group's, or whose Kueue request contradicts its role's, is refused. */
#include <stdlib.h>
#include <string.h>

#include "admission_internal.h"
#include "topo/limits.h"

typedef struct reader {
    topo_group_view *v;
    const topo_podset_id *id;
    const char *member, *shape, *request;
    size_t cap;
    topo_pool *pool;
} reader;

static topo_group_role *role_of(topo_group_view *v, const char *shape)
{
    for (size_t i = 0; i < v->nroles; i++)
        if (strcmp(v->roles[i].shape, shape) == 0)
            return &v->roles[i];
    return NULL;
}

static int add_role(reader *r, const topo_cache_group_member *m)
{
    topo_group_view *v = r->v;
    if (v->nroles == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        topo_group_role *roles = topo_pool_calloc(r->pool, cap, sizeof(*roles));
        if (roles == NULL)
            return TOPO_ENOMEM;
        if (v->nroles > 0)
            memcpy(roles, v->roles, v->nroles * sizeof(*roles));
        v->roles = roles; /* the old array stays in the pool */
        r->cap = cap;
    }
    topo_group_role *role = &v->roles[v->nroles];
    if ((role->shape = topo_pool_strdup(r->pool, m->shape)) == NULL ||
        (role->request = topo_pool_strdup(r->pool, m->request)) == NULL ||
        (role->pod_json = topo_pool_strdup(r->pool, m->pod_json)) == NULL)
        return TOPO_ENOMEM;
    role->count = 1;
    v->nroles++;
    return 0;
}

static int read_member(const topo_cache_group_member *m, void *payload)
{
    reader *r = payload;
    topo_group_view *v = r->v;
    int self = strcmp(m->member, r->member) == 0;
    v->nmembers++;
    v->self_recorded |= self;
    /* The pod's own earlier record says nothing against it. */
    if (v->refusal == NULL && !self && m->total != r->id->size)
        v->refusal = topo_pool_printf(r->pool,
                                      "pod group %s: its pod-group-total-count %d contradicts "
                                      "the %d of its pod %s",
                                      r->id->key, (int)r->id->size, (int)m->total, m->member);
    if (v->refusal == NULL && !self && strcmp(m->shape, r->shape) == 0 &&
        strcmp(m->request, r->request) != 0)
        v->refusal = topo_pool_printf(r->pool,
                                      "pod group %s: its Kueue request (%s) contradicts that "
                                      "of its pod %s of the same shape (%s)",
                                      r->id->key, r->request, m->member, m->request);
    topo_group_role *role = role_of(v, m->shape);
    if (role == NULL)
        return add_role(r, m);
    role->count++;
    /* the cache keeps one pod per shape: the template, wherever it is */
    if (role->pod_json[0] == '\0' && m->pod_json[0] != '\0' &&
        (role->pod_json = topo_pool_strdup(r->pool, m->pod_json)) == NULL)
        return TOPO_ENOMEM;
    return 0;
}

/* One role more than a Workload can hold would never be admitted by Kueue. */
static const char *too_many_roles(const topo_group_view *v, const topo_podset_id *id,
                                  const char *shape, topo_pool *pool)
{
    if (v->nroles < TOPO_MAX_POD_GROUP_ROLES || role_of((topo_group_view *)v, shape) != NULL)
        return NULL;
    return topo_pool_printf(pool,
                            "pod group %s already has %d roles (pods of %d shapes), the most "
                            "PodSets a Kueue Workload holds; this pod's shape would be one more",
                            id->key, TOPO_MAX_POD_GROUP_ROLES, TOPO_MAX_POD_GROUP_ROLES);
}

static int by_shape(const void *a, const void *b)
{
    return strcmp(((const topo_group_role *)a)->shape, ((const topo_group_role *)b)->shape);
}

int topo_admission_group_view(topo_group_view *out, topo_cache *cache, const topo_podset_id *id,
                              const char *member, const char *shape, const char *request,
                              int64_t now, topo_pool *pool, topo_err *err)
{
    reader r = {out, id, member, shape, request, 0, pool};
    memset(out, 0, sizeof(*out));
    int rc = topo_cache_group_members(cache, id->key, now, read_member, &r, err);
    if (rc != 0)
        return rc < 0 ? rc : topo_err_set(err, TOPO_ENOMEM, "out of memory");
    if (out->refusal == NULL && !out->self_recorded)
        out->refusal = too_many_roles(out, id, shape, pool);
    /* A group that is complete without this pod has no room for it: its
     * shape matched none of the roles placed (or it would have claimed). */
    if (out->refusal == NULL && !out->self_recorded && out->nmembers >= (size_t)id->size)
        out->refusal = topo_pool_printf(pool,
                                        "pod group %s already has its %d pods, and none of "
                                        "its roles has this pod's shape",
                                        id->key, (int)id->size);
    /* Kueue orders a group's PodSets by role name. */
    if (out->nroles > 1)
        qsort(out->roles, out->nroles, sizeof(*out->roles), by_shape);
    return 0;
}

int topo_admission_group_specs(topo_podset_spec **out, const topo_group_view *v, topo_pool *pool,
                               topo_err *err)
{
    topo_podset_spec *specs = topo_pool_calloc(pool, v->nroles + 1, sizeof(*specs));
    int rc = 0;
    *out = NULL;
    if (specs == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    for (size_t i = 0; i < v->nroles && rc == 0; i++) {
        const topo_group_role *role = &v->roles[i];
        json_error_t jerr;
        json_t *pod = json_loads(role->pod_json, 0, &jerr);
        char *review = pod != NULL ? topo_admission_pod_review(pod, "group") : NULL;
        topo_admission_request req;
        if (review == NULL)
            rc = topo_err_set(err, pod != NULL ? TOPO_ENOMEM : TOPO_EIO,
                              "role %s: the stored pod does not read back", role->shape);
        else if ((rc = topo_admission_decode(&req, review, strlen(review), pool, err)) == 0 &&
                 (rc = topo_admission_podset_spec(&specs[i], &req.pod, role->count, pool, err)) ==
                     0)
            specs[i].name = role->shape;
        free(review);
        json_decref(pod);
    }
    if (rc < 0)
        return rc;
    *out = specs;
    return 0;
}
