/* Decoding `kubectl get nodes -o json` and `kubectl get pods -A -o json`. */
#include "inventory_internal.h"

#include <string.h>

#include "topo/decode.h"
#include "topo/podreq.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

/* The items of a List/NodeList/PodList, or the object itself when its kind is
 * the single-object kind. Sets *items (borrowed) or *single. */
static int list_items(const json_t **items, int *single, const json_t *root, const char *list_kind,
                      const char *kind, topo_err *err)
{
    const char *k = NULL;
    const json_t *kv = json_object_get(root, "kind");

    *items = NULL;
    *single = 0;
    if (kv != NULL && !json_is_string(kv))
        return topo_err_set(err, TOPO_EINVALID, "kind: expected a string, got %s",
                            topo_decode_type_name(kv));
    k = kv != NULL ? json_string_value(kv) : NULL;
    if (k != NULL && strcmp(k, kind) == 0) {
        *single = 1;
        return 0;
    }
    if (k != NULL && strcmp(k, list_kind) != 0 && strcmp(k, "List") != 0)
        return topo_err_set(err, TOPO_EINVALID, "kind: expected %s, List or %s, got \"%s\"",
                            list_kind, kind, k);
    return topo_decode_member(items, root, "items", "", JSON_ARRAY, 1, err);
}

/* An item of a List must be of the expected kind (kind may be omitted, as in
 * typed lists). */
static int check_item_kind(const json_t *item, const char *path, const char *kind, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *kv;
    if (!json_is_object(item))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(item));
    kv = json_object_get(item, "kind");
    if (kv != NULL && (!json_is_string(kv) || strcmp(json_string_value(kv), kind) != 0))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected %s, got %s%s%s", P(p, path, "kind"),
                            kind, json_is_string(kv) ? "\"" : "",
                            json_is_string(kv) ? json_string_value(kv) : topo_decode_type_name(kv),
                            json_is_string(kv) ? "\"" : "");
    return 0;
}

/* --- nodes --------------------------------------------------------------------------- */

static int kube_node(inv_batch *b, const json_t *item, const char *path, topo_pool *pool,
                     topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX], np[TOPO_DECODE_PATH_MAX];
    topo_node_spec n;
    int error;

    if ((error = topo_decode_node(&n, item, path, pool, err)) < 0)
        return error;
    P(mp, path, "metadata");
    return inv_batch_add_node(b, &n, P(np, mp, "name"), err);
}

int inv_decode_kube_nodes(inv_batch *b, const json_t *root, topo_pool *pool, topo_err *err)
{
    char ip[TOPO_DECODE_PATH_MAX];
    const json_t *items = NULL;
    int single = 0, error;

    if ((error = list_items(&items, &single, root, "NodeList", "Node", err)) < 0)
        return error;
    if (single)
        return kube_node(b, root, "", pool, err);
    for (size_t i = 0; i < json_array_size(items); i++) {
        const json_t *item = json_array_get(items, i);
        topo_decode_path_index(ip, sizeof(ip), "items", i);
        if ((error = check_item_kind(item, ip, "Node", err)) < 0 ||
            (error = kube_node(b, item, ip, pool, err)) < 0)
            return error;
    }
    return 0;
}

/* --- pods ---------------------------------------------------------------------------- */

static int kube_pod(inv_batch *b, const json_t *item, const char *path, topo_pool *pool,
                    topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX], sp[TOPO_DECODE_PATH_MAX], tp[TOPO_DECODE_PATH_MAX];
    const json_t *meta = NULL, *spec = NULL, *status = NULL, *annotations = NULL;
    const char *phase = "";
    topo_pod_usage pod;
    topo_resource *req = NULL;
    int error;

    memset(&pod, 0, sizeof(pod));
    pod.namespace_name = "";
    pod.name = "";
    b->seen++;
    P(mp, path, "metadata");
    P(sp, path, "spec");
    P(tp, path, "status");
    if ((error = topo_decode_member(&meta, item, "metadata", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_member(&spec, item, "spec", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_member(&status, item, "status", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_string(&pod.name, meta, "name", mp, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&pod.namespace_name, meta, "namespace", mp, 0, pool, err)) < 0 ||
        (error = topo_decode_member(&annotations, meta, "annotations", mp, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_string(&pod.node, spec, "nodeName", sp, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&phase, status, "phase", tp, 0, pool, err)) < 0)
        return error;
    if (pod.node == NULL || pod.node[0] == '\0') {
        b->unbound++;
        return 0;
    }
    if (topo_pod_phase_finished(phase)) {
        b->terminal++;
        return 0;
    }
    if ((error = topo_pod_requests(&req, &pod.nrequests, spec, sp, pool, err)) < 0)
        return error;
    pod.requests = req;
    pod.tas = topo_pod_is_tas(annotations);
    return inv_batch_add_pod(b, &pod, err);
}

int inv_decode_kube_pods(inv_batch *b, const json_t *root, topo_pool *pool, topo_err *err)
{
    char ip[TOPO_DECODE_PATH_MAX];
    const json_t *items = NULL;
    int single = 0, error;

    if ((error = list_items(&items, &single, root, "PodList", "Pod", err)) < 0)
        return error;
    if (single)
        return kube_pod(b, root, "", pool, err);
    for (size_t i = 0; i < json_array_size(items); i++) {
        const json_t *item = json_array_get(items, i);
        topo_decode_path_index(ip, sizeof(ip), "items", i);
        if ((error = check_item_kind(item, ip, "Pod", err)) < 0 ||
            (error = kube_pod(b, item, ip, pool, err)) < 0)
            return error;
    }
    return 0;
}
