/* Kueue pod groups (Kueue's pod integration): a group of
 * kueue.x-k8s.io/pod-group-total-count pods whose PodSets are its roles,
 * the pods of one shape each. Kueue builds the Workload only once every pod
 * of the group exists, one PodSet per role, and places them together; so
 * does the handler: each pod is recorded in the cache as it arrives (and
 * gated), and the group is placed when its last pod arrives or when the
 * ungater retries one of them. A pod whose total count contradicts the
 * group's, or whose Kueue request contradicts its role's, is refused; so is
 * one that breaks Kueue's rules for PodSets sharing a podset-group-name
 * (ValidatePodSetGroupingTopology), as soon as the break is certain. */
#include <stdlib.h>
#include <string.h>

#include "handler_internal.h"
#include "review_internal.h"
#include "topo/admission_review.h"
#include "topo/goparse.h"
#include "topo/json.h"
#include "topo/kueue.h"
#include "topo/array.h"
#include "topo/limits.h"

typedef struct reader {
    topo_group_view *v;
    const topo_podset_id *id;
    const topo_group_pod *pod;
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

/* A new role (from pool), its first pod as the template. */
static topo_group_role *add_role(reader *r, const char *shape, const char *request,
                                 const char *podset_group, const char *pod_json)
{
    topo_group_view *v = r->v;
    if (topo_pool_array_reserve(r->pool, (void **)&v->roles, &r->cap, v->nroles, v->nroles + 1,
                                sizeof(*v->roles)) != 0)
        return NULL;
    topo_group_role *role = &v->roles[v->nroles];
    if ((role->shape = topo_pool_strdup(r->pool, shape)) == NULL ||
        (role->request = topo_pool_strdup(r->pool, request)) == NULL ||
        (role->podset_group = topo_pool_strdup(r->pool, podset_group)) == NULL ||
        (role->pod_json = topo_pool_strdup(r->pool, pod_json)) == NULL)
        return NULL;
    role->count = 0;
    v->nroles++;
    return role;
}

static int read_member(const topo_cache_group_member *m, void *payload)
{
    reader *r = payload;
    topo_group_view *v = r->v;
    int self = strcmp(m->member, r->pod->member) == 0;
    v->nmembers++;
    v->self_recorded |= self;
    /* The pod's own earlier record says nothing against it. */
    if (v->refusal == NULL && !self && m->total != r->id->size)
        v->refusal = topo_pool_printf(r->pool,
                                      "pod group %s: its pod-group-total-count %d contradicts "
                                      "the %d of its pod %s",
                                      r->id->key, (int)r->id->size, (int)m->total, m->member);
    if (v->refusal == NULL && !self && strcmp(m->shape, r->pod->shape) == 0 &&
        strcmp(m->request, r->pod->request) != 0)
        v->refusal = topo_pool_printf(r->pool,
                                      "pod group %s: its Kueue request (%s) contradicts that "
                                      "of its pod %s of the same shape (%s)",
                                      r->id->key, r->pod->request, m->member, m->request);
    topo_group_role *role = role_of(v, m->shape);
    if (role == NULL &&
        (role = add_role(r, m->shape, m->request, m->podset_group, m->pod_json)) == NULL)
        return TOPO_ENOMEM;
    role->count++;
    /* the cache keeps one pod per shape: the template, wherever it is */
    if (role->pod_json[0] == '\0' && m->pod_json[0] != '\0' &&
        (role->pod_json = topo_pool_strdup(r->pool, m->pod_json)) == NULL)
        return TOPO_ENOMEM;
    return 0;
}

static int by_shape(const void *a, const void *b)
{
    return strcmp(((const topo_group_role *)a)->shape, ((const topo_group_role *)b)->shape);
}

/* Kueue's ValidatePodSetGroupingTopology over the roles, with the message
 * it gives (one per PodSet there, the same text for every pod here, so one
 * after the aggregate's deduplication). Before the group is complete only
 * what more pods cannot mend: a third role, or inconsistent requests. */
static const char *grouping_error(const topo_group_view *v, int complete, topo_pool *pool)
{
    for (size_t i = 0; i < v->nroles; i++) {
        const topo_group_role *a = &v->roles[i];
        const topo_group_role *other = NULL;
        size_t n = 0;
        if (a->podset_group[0] == '\0')
            continue;
        for (size_t j = 0; j < v->nroles; j++)
            if (strcmp(v->roles[j].podset_group, a->podset_group) == 0) {
                n++;
                if (j != i)
                    other = &v->roles[j];
            }
        const char *q = topo_go_quote(pool, a->podset_group);
        if (q == NULL)
            return NULL;
        if (n > 2 || (complete && n == 1))
            return topo_pool_printf(pool,
                                    "metadata.annotations[" TOPO_KUEUE_GROUP_NAME "]: Invalid "
                                    "value: %s: can only define groups of exactly 2 pod sets, "
                                    "got: %zu pod set(s)",
                                    q, n);
        if (other != NULL && strcmp(a->request, other->request) != 0)
            return topo_pool_printf(pool,
                                    "metadata.annotations: Invalid value: must specify '"
                                    TOPO_KUEUE_REQUIRED_TOPOLOGY "' or '"
                                    TOPO_KUEUE_PREFERRED_TOPOLOGY "' topology consistent with "
                                    "'metadata.annotations' in group '%s'",
                                    a->podset_group);
        if (complete && other != NULL && a->count != 1 && other->count != 1)
            return topo_pool_printf(pool,
                                    "metadata.annotations[" TOPO_KUEUE_GROUP_NAME "]: Invalid "
                                    "value: %s: can only define groups where at least one pod "
                                    "set has only 1 replica, got: %d replica(s) and %d "
                                    "replica(s) in the group",
                                    q, (int)a->count, (int)other->count);
    }
    return NULL;
}

int adm_group_view(topo_group_view *out, topo_cache *cache, const topo_podset_id *id,
                   const topo_group_pod *pod, int64_t now, topo_pool *pool, topo_err *err)
{
    reader r = {out, id, pod, 0, pool};
    memset(out, 0, sizeof(*out));
    int rc = topo_cache_group_members(cache, id->key, now, read_member, &r, err);
    if (rc != 0)
        return rc < 0 ? rc : topo_err_nomem(err, NULL);
    /* What the group would be with this pod in it. */
    size_t members = out->nmembers;
    topo_group_role *mine = role_of(out, pod->shape);
    if (!out->self_recorded && pod->adding) {
        members++;
        if (mine == NULL && out->nroles < TOPO_MAX_POD_GROUP_ROLES &&
            (mine = add_role(&r, pod->shape, pod->request, pod->podset_group, "")) == NULL)
            return topo_err_nomem(err, NULL);
        if (mine != NULL)
            mine->count++;
    }
    if (out->refusal == NULL && !out->self_recorded && mine == NULL)
        out->refusal = topo_pool_printf(pool,
                                        "pod group %s already has %d roles (pods of %d shapes), "
                                        "the most PodSets a Kueue Workload holds; this pod's "
                                        "shape would be one more",
                                        id->key, TOPO_MAX_POD_GROUP_ROLES,
                                        TOPO_MAX_POD_GROUP_ROLES);
    /* A group that is complete without this pod has no room for it: its
     * shape matched none of the roles placed (or it would have claimed). */
    if (out->refusal == NULL && !out->self_recorded && out->nmembers >= (size_t)id->size)
        out->refusal = topo_pool_printf(pool,
                                        "pod group %s already has its %d pods, and none of "
                                        "its roles has this pod's shape",
                                        id->key, (int)id->size);
    if (out->refusal == NULL &&
        (out->refusal = grouping_error(out, members >= (size_t)id->size, pool)) != NULL)
        out->kueue_refusal = 1;
    /* Kueue orders a group's PodSets by role name. */
    if (out->nroles > 1)
        qsort(out->roles, out->nroles, sizeof(*out->roles), by_shape);
    return 0;
}

int adm_group_specs(topo_podset_spec **out, const topo_group_view *v, topo_pool *pool,
                    topo_err *err)
{
    topo_podset_spec *specs = topo_pool_calloc(pool, v->nroles + 1, sizeof(*specs));
    int rc = 0;
    *out = NULL;
    if (specs == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < v->nroles && rc == 0; i++) {
        const topo_group_role *role = &v->roles[i];
        json_error_t jerr;
        json_t *pod = NULL;
        int loaded = topo_json_load(&pod, role->pod_json, strlen(role->pod_json), 0, &jerr);
        json_t *review = pod != NULL ? adm_pod_review(pod, "group") : NULL;
        topo_admission_request req;
        if (loaded == TOPO_ENOMEM)
            rc = topo_err_nomem(err, "role");
        else if (review == NULL)
            rc = topo_err_set(err, pod != NULL ? TOPO_ENOMEM : TOPO_EIO,
                              "role %s: the stored pod does not read back", role->shape);
        else if ((rc = topo_admission_decode_json(&req, review, pool, err)) == 0 &&
                 (rc = adm_podset_spec(&specs[i], &req.pod, role->count, pool, err)) == 0)
            specs[i].name = role->shape;
        json_decref(review);
        json_decref(pod);
    }
    if (rc < 0)
        return rc;
    *out = specs;
    return 0;
}
