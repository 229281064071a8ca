/* Decoding the human-written fixture format (fixtures/README.md):
 *
 *   description: text                      # optional
 *   defaults:                              # optional, applied to every node
 *     allocatable: {cpu: 224, memory: 2Ti, pods: 110, nvidia.com/gpu: 8}
 *     labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
 *     topologyPrefix: topology.topo.io/    # for the short keys of `topology:`
 *   nodes:
 *     - name: n1                           # also kubernetes.io/hostname unless set
 *       topology: {rack: r1, nvlink: n1}   # → topology.topo.io/rack: r1, ...
 *       labels: {...}                      # over defaults.labels and topology
 *       allocatable: {...}                 # per resource, over defaults
 *       taints: [{key, value, effect}]
 *       unschedulable: false
 *       ready: true                        # default true
 *   pods:                                  # non-TAS usage unless tas: true
 *     - {node: n1, requests: {nvidia.com/gpu: 4}, phase: Running, name: a, namespace: b}
 *
 * Unknown keys are errors, so that typos do not pass silently. */
#include "inventory_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/cfgreader.h"
#include "topo/decode.h"
#include "topo/kueue_names.h"
#include "topo/podreq.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)
#define DEFAULT_TOPOLOGY_PREFIX "topology.topo.io/"

/* obj is a map whose keys are all in allowed: the one unknown-key check
 * (topo/cfgreader.h), with the bare "path: problem" messages the loader
 * prefixes with the file name. */
static int check_keys(const json_t *obj, const char *path, const char *const *allowed,
                      topo_err *err)
{
    const topo_cfg c = {.err = err};
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s",
                            path[0] ? path : "(top level)", topo_decode_type_name(obj));
    return topo_cfg_check_keys(&c, obj, path, allowed);
}

/* Merged label list: later entries replace earlier ones with the same key. */
typedef struct kvlist {
    topo_kv *v;
    size_t n, cap;
} kvlist;

static int kv_set(kvlist *l, const char *key, const char *value, topo_pool *pool)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, key) == 0) {
            l->v[i].value = value;
            return 0;
        }
    }
    int rc = topo_pool_array_reserve(pool, (void **)&l->v, &l->cap, l->n, l->n + 1, sizeof(*l->v));
    if (rc != 0)
        return rc;
    l->v[l->n].key = key;
    l->v[l->n].value = value;
    l->n++;
    return 0;
}

typedef struct rlist {
    topo_resource *v;
    size_t n, cap;
} rlist;

static int res_set(rlist *l, const topo_resource *r, topo_pool *pool)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].name, r->name) == 0) {
            l->v[i].amount = r->amount;
            return 0;
        }
    }
    int rc = topo_pool_array_reserve(pool, (void **)&l->v, &l->cap, l->n, l->n + 1, sizeof(*l->v));
    if (rc != 0)
        return rc;
    l->v[l->n++] = *r;
    return 0;
}

typedef struct defaults {
    topo_kv *labels;
    size_t nlabels;
    topo_resource *alloc;
    size_t nalloc;
    const char *prefix;
} defaults;

static int decode_defaults(defaults *d, const json_t *obj, topo_pool *pool, topo_err *err)
{
    static const char *const keys[] = {"allocatable", "labels", "topologyPrefix", NULL};
    int error;

    memset(d, 0, sizeof(*d));
    d->prefix = DEFAULT_TOPOLOGY_PREFIX;
    if (obj == NULL || json_is_null(obj))
        return 0;
    if ((error = check_keys(obj, "defaults", keys, err)) < 0 ||
        (error = topo_decode_kv(&d->labels, &d->nlabels, json_object_get(obj, "labels"),
                                "defaults.labels", pool, err)) < 0 ||
        (error = topo_decode_resources(&d->alloc, &d->nalloc, json_object_get(obj, "allocatable"),
                                       "defaults.allocatable", pool, err)) < 0 ||
        (error = topo_decode_string(&d->prefix, obj, "topologyPrefix", "defaults", 0, pool,
                                    err)) < 0)
        return error;
    return 0;
}

static int fixture_node(inv_batch *b, const json_t *item, const char *path, const defaults *d,
                        topo_pool *pool, topo_err *err)
{
    static const char *const keys[] = {"name",  "topology",      "labels", "allocatable",
                                       "taints", "unschedulable", "ready",  NULL};
    char p[TOPO_DECODE_PATH_MAX];
    topo_node_spec n;
    topo_kv *topo = NULL, *labels = NULL;
    topo_resource *alloc = NULL;
    topo_taint *taints = NULL;
    size_t ntopo = 0, nlabels = 0, nalloc = 0;
    kvlist merged = {0};
    rlist res = {0};
    int error;

    memset(&n, 0, sizeof(n));
    n.ready = 1;
    if ((error = check_keys(item, path, keys, err)) < 0 ||
        (error = topo_decode_string(&n.name, item, "name", path, 1, pool, err)) < 0)
        return error;
    if (n.name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: must not be empty", P(p, path, "name"));
    if ((error = topo_decode_kv(&topo, &ntopo, json_object_get(item, "topology"),
                                P(p, path, "topology"), pool, err)) < 0 ||
        (error = topo_decode_kv(&labels, &nlabels, json_object_get(item, "labels"),
                                P(p, path, "labels"), pool, err)) < 0 ||
        (error = topo_decode_resources(&alloc, &nalloc, json_object_get(item, "allocatable"),
                                       P(p, path, "allocatable"), pool, err)) < 0 ||
        (error = topo_decode_taints(&taints, &n.ntaints, json_object_get(item, "taints"),
                                    P(p, path, "taints"), pool, err)) < 0 ||
        (error = topo_decode_bool(&n.unschedulable, item, "unschedulable", path, 0, err)) < 0 ||
        (error = topo_decode_bool(&n.ready, item, "ready", path, 0, err)) < 0)
        return error;

    /* Labels: defaults, hostname, topology (prefixed), then the node's own. */
    for (size_t i = 0; i < d->nlabels; i++)
        if (kv_set(&merged, d->labels[i].key, d->labels[i].value, pool) < 0)
            goto nomem;
    if (kv_set(&merged, TOPO_KUEUE_HOSTNAME_LABEL, n.name, pool) < 0)
        goto nomem;
    for (size_t i = 0; i < ntopo; i++) {
        size_t len = strlen(d->prefix) + strlen(topo[i].key) + 1;
        char *key = topo_pool_alloc(pool, len);
        if (key == NULL)
            goto nomem;
        snprintf(key, len, "%s%s", d->prefix, topo[i].key);
        if (kv_set(&merged, key, topo[i].value, pool) < 0)
            goto nomem;
    }
    for (size_t i = 0; i < nlabels; i++)
        if (kv_set(&merged, labels[i].key, labels[i].value, pool) < 0)
            goto nomem;
    for (size_t i = 0; i < d->nalloc; i++)
        if (res_set(&res, &d->alloc[i], pool) < 0)
            goto nomem;
    for (size_t i = 0; i < nalloc; i++)
        if (res_set(&res, &alloc[i], pool) < 0)
            goto nomem;
    n.labels = merged.v;
    n.nlabels = merged.n;
    n.allocatable = res.v;
    n.nallocatable = res.n;
    n.taints = taints;
    return inv_batch_add_node(b, &n, P(p, path, "name"), err);

nomem:
    return topo_err_nomem(err, path);
}

static int valid_phase(const char *phase)
{
    static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
        if (strcmp(phase, phases[i]) == 0)
            return 1;
    return 0;
}

static int fixture_pod(inv_batch *b, const json_t *item, const char *path, int check_nodes,
                       topo_pool *pool, topo_err *err)
{
    static const char *const keys[] = {"name", "namespace", "node", "requests",
                                       "phase", "tas",       NULL};
    char p[TOPO_DECODE_PATH_MAX];
    topo_pod_usage pod;
    topo_resource *req = NULL;
    const char *phase = "Running";
    int error;

    memset(&pod, 0, sizeof(pod));
    pod.name = "";
    pod.namespace_name = "";
    b->seen++;
    if ((error = check_keys(item, path, keys, err)) < 0 ||
        (error = topo_decode_string(&pod.name, item, "name", path, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&pod.namespace_name, item, "namespace", path, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&pod.node, item, "node", path, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&phase, item, "phase", path, 0, pool, err)) < 0 ||
        (error = topo_decode_bool(&pod.tas, item, "tas", path, 0, err)) < 0 ||
        (error = topo_decode_resources(&req, &pod.nrequests, json_object_get(item, "requests"),
                                       P(p, path, "requests"), pool, err)) < 0)
        return error;
    if (!valid_phase(phase))
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: unsupported value \"%s\" (Pending, Running, Succeeded, Failed, "
                            "Unknown)",
                            P(p, path, "phase"), phase);
    pod.requests = req;
    if (pod.node == NULL || pod.node[0] == '\0') {
        b->unbound++;
        return 0;
    }
    if (check_nodes && inv_batch_find_node(b, pod.node) < 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: no node named \"%s\" in nodes",
                            P(p, path, "node"), pod.node);
    if (topo_pod_phase_finished(phase)) {
        b->terminal++;
        return 0;
    }
    return inv_batch_add_pod(b, &pod, err);
}

int inv_decode_fixture(inv_batch *b, const json_t *root, int with_nodes, int with_pods,
                       topo_pool *pool, topo_err *err)
{
    static const char *const keys[] = {"description", "defaults", "nodes", "pods", NULL};
    char ip[TOPO_DECODE_PATH_MAX];
    const json_t *nodes = NULL, *pods = NULL;
    const char *description = NULL;
    defaults d;
    int error;

    if ((error = check_keys(root, "", keys, err)) < 0 ||
        (error = topo_decode_string(&description, root, "description", "", 0, pool, err)) < 0 ||
        (error = topo_decode_member(&nodes, root, "nodes", "", JSON_ARRAY, 0, err)) < 0 ||
        (error = topo_decode_member(&pods, root, "pods", "", JSON_ARRAY, 0, err)) < 0 ||
        (error = decode_defaults(&d, json_object_get(root, "defaults"), pool, err)) < 0)
        return error;
    if (with_nodes) {
        for (size_t i = 0; i < json_array_size(nodes); i++) {
            topo_decode_path_index(ip, sizeof(ip), "nodes", i);
            if ((error = fixture_node(b, json_array_get(nodes, i), ip, &d, pool, err)) < 0)
                return error;
        }
    }
    if (with_pods) {
        for (size_t i = 0; i < json_array_size(pods); i++) {
            topo_decode_path_index(ip, sizeof(ip), "pods", i);
            if ((error = fixture_pod(b, json_array_get(pods, i), ip, with_nodes, pool, err)) < 0)
                return error;
        }
    }
    return 0;
}
