/* Packing's skip rules (docs/webhook.md "Packing pods without topology
 * requests"), beside the ones that decide whether a pod is topo's to place
 * (review_classify.c): which pods without a topology request are steered,
 * and why the others pass unchanged. Pure: the namespace's opt-out and the
 * keys that pin come from the caller. */
#include <string.h>

#include "review_internal.h"
#include "topo/admission.h"

int topo_admission_packing_resource(const topo_admission_pod *pod, const char *const *resources,
                                    size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < pod->nrequests; k++)
            if (strcmp(pod->requests[k].name, resources[i]) == 0 && pod->requests[k].amount > 0)
                return (int)i;
    return -1;
}

/* apps/v1 DaemonSet, by its group: a kind of that name in another group
 * (anyone's CRD) is not one, or any tenant could opt its pods out. */
int topo_admission_pod_is_daemonset(const topo_admission_pod *pod)
{
    for (size_t i = 0; i < pod->nowners; i++) {
        const topo_admission_owner *o = &pod->owners[i];
        if (o->controller && o->kind != NULL && strcmp(o->kind, "DaemonSet") == 0 &&
            o->api_version != NULL && strncmp(o->api_version, "apps/", 5) == 0)
            return 1;
    }
    return 0;
}

/* Whether a container list names resource in its requests or limits. */
static int containers_name(const json_t *list, const char *resource)
{
    size_t i;
    const json_t *c;
    json_array_foreach(list, i, c) {
        const json_t *res = json_object_get(c, "resources");
        if (json_object_get(json_object_get(res, "requests"), resource) != NULL ||
            json_object_get(json_object_get(res, "limits"), resource) != NULL)
            return 1;
    }
    return 0;
}

int adm_pack_spec_names(const json_t *spec, const char *const *resources, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (containers_name(json_object_get(spec, "containers"), resources[i]) ||
            containers_name(json_object_get(spec, "initContainers"), resources[i]) ||
            json_object_get(json_object_get(spec, "overhead"), resources[i]) != NULL)
            return 1;
    return 0;
}

static int is_pin_key(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; key != NULL && i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

/* Some requirement of exprs (a matchExpressions or matchFields list) is
 * `In` on one of keys (or, fields, on metadata.name: the node itself): a
 * choice made. NotIn, Exists, DoesNotExist, Gt and Lt only rule nodes out
 * (a notebook avoiding one bad node): the engine honours them, the pod is
 * packed within what they leave. */
static int exprs_pin(const json_t *exprs, int fields, const char *const *keys, size_t n)
{
    size_t i;
    const json_t *e;
    json_array_foreach(exprs, i, e) {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        if (key == NULL || op == NULL || strcmp(op, "In") != 0)
            continue;
        if (fields ? strcmp(key, "metadata.name") == 0 : is_pin_key(key, keys, n))
            return 1;
    }
    return 0;
}

/* Read from the object as it came, before anything is decoded: a pod
 * pinned through matchFields (metadata.name), which the decoder refuses,
 * is pinned, not unsupported. */
static int pod_pinned(const json_t *spec, const char *const *keys, size_t n)
{
    const char *key;
    const json_t *v, *t;
    size_t i;
    json_object_foreach((json_t *)json_object_get(spec, "nodeSelector"), key, v)
        if (is_pin_key(key, keys, n))
            return 1;
    const json_t *terms = json_object_get(
        json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
                        "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms");
    json_array_foreach(terms, i, t) {
        if (exprs_pin(json_object_get(t, "matchExpressions"), 0, keys, n) ||
            exprs_pin(json_object_get(t, "matchFields"), 1, keys, n))
            return 1;
    }
    return 0;
}

int adm_pack_classify(topo_admission_pod *pod, const json_t *spec, const char *const *pin_keys,
                      size_t npin_keys, int ready, int ns_opted_out, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    if (topo_admission_pod_is_daemonset(pod))
        return TOPO_ADMISSION_PACK_DAEMONSET;
    /* Before the namespaces are known, an opted-out one looks like any. */
    if (!ready)
        return TOPO_ADMISSION_PACK_NOT_READY;
    if (ns_opted_out)
        return TOPO_ADMISSION_PACK_NAMESPACE;
    if (pod_pinned(spec, pin_keys, npin_keys))
        return TOPO_ADMISSION_PACK_PINNED;
    /* A pass-through pod is never refused over its spec: what cannot be
     * read passes as it is. */
    int rc = adm_decode_node_terms(pod, spec, pool, &err);
    if (rc == TOPO_ENOMEM)
        return rc;
    return rc < 0 ? TOPO_ADMISSION_PACK_UNSUPPORTED : TOPO_ADMISSION_PACK_REASONS;
}
