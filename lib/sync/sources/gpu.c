/* NVLink domains from GPU Feature Discovery's node labels
 * (include/topo/gpu.h). */
#include "topo/gpu.h"

#include <stdlib.h>
#include <string.h>

#include "srcjson_internal.h"
#include "topo/limits.h"

#define GFD_COUNT "nvidia.com/gpu.count"
#define GFD_PRODUCT "nvidia.com/gpu.product"
#define GFD_PRESENT "nvidia.com/gpu.present"

static const char *label(const topo_kv *labels, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (labels[i].key != NULL && strcmp(labels[i].key, key) == 0)
            return labels[i].value;
    return NULL;
}

/* GFD labels GPU nodes only; a count of "0" is a node whose GPUs are gone. */
static int has_gpus(const topo_kv *labels, size_t n)
{
    const char *count = label(labels, n, GFD_COUNT), *present = label(labels, n, GFD_PRESENT);
    if (count != NULL)
        return strtol(count, NULL, 10) > 0;
    return label(labels, n, GFD_PRODUCT) != NULL ||
           (present != NULL && strcmp(present, "true") == 0);
}

int topo_gpu_add_labels(topo_gpu_stats *stats, topo_facts *facts, const char *node,
                        const topo_kv *labels, size_t nlabels, topo_err *err)
{
    topo_gpu_stats none = {0, 0, 0};
    const char *clique = label(labels, nlabels, TOPO_GPU_CLIQUE_LABEL);
    int rc;
    if (stats == NULL)
        stats = &none;
    if ((rc = topo_facts_add_host(facts, node, NULL, err)) != 0)
        return rc;
    stats->nodes++;
    int gpus = has_gpus(labels, nlabels);
    if (gpus)
        stats->gpu_nodes++;
    if (clique == NULL)
        return 0;
    if (*clique == '\0')
        return topo_err_set(err, TOPO_EINVALID, "node %s: empty %s label", node,
                            TOPO_GPU_CLIQUE_LABEL);
    stats->cliques++;
    return topo_facts_set_level(facts, node, TOPO_LEVEL_NVLINK, clique, err);
}

/* metadata.labels as key/value pairs borrowed from the tree (at most max
 * of them; more is TOPO_ELIMIT). */
static int node_labels(topo_kv *out, size_t *n, size_t max, const json_t *meta, const char *path,
                       topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *labels = NULL, *v;
    const char *key;
    int rc;
    *n = 0;
    if ((rc = topo_decode_member(&labels, meta, "labels", path, JSON_OBJECT, 0, err)) != 0 ||
        labels == NULL)
        return rc;
    topo_decode_path_key(p, sizeof(p), path, "labels");
    if (json_object_size(labels) > max)
        return topo_err_set(err, TOPO_ELIMIT, "%s: more than %zu labels", p, max);
    json_object_foreach((json_t *)labels, key, v)
    {
        const char *value = NULL;
        if ((rc = topo_decode_string(&value, labels, key, p, 1, NULL, err)) != 0)
            return rc;
        out[*n].key = key;
        out[*n].value = value;
        ++*n;
    }
    return 0;
}

/* Kubernetes allows any number of labels within the object's size; GFD
 * sets a few dozen. */
#define GPU_MAX_LABELS 4096

/* The kinds a node document may state (none is fine: only metadata is
 * read). A Node whole (the API, `kubectl get nodes -o json`) or metadata
 * only (a PartialObjectMetadata: kube-apiserver's answer to
 * "Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1"). */
static const char *const node_kinds[] = {"Node", "PartialObjectMetadata", NULL};
static const char *const list_kinds[] = {"NodeList", "List", "PartialObjectMetadataList", NULL};

/* path.kind, when present, a string among kinds (expected names them). */
static int check_kind(const json_t *kind, const char *path, const char *const *kinds,
                      const char *expected, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    if (kind == NULL)
        return 0;
    topo_decode_path_key(p, sizeof(p), path, "kind");
    const char *k = json_string_value(kind);
    if (k == NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s: expected a string, got %s", p,
                            topo_decode_type_name(kind));
    for (size_t i = 0; kinds[i] != NULL; i++)
        if (strcmp(k, kinds[i]) == 0)
            return 0;
    return topo_err_set(err, TOPO_EINVALID, "%s: expected %s, got \"%.64s\"", p, expected, k);
}

#define NODE_KINDS "Node or PartialObjectMetadata"
#define LIST_KINDS "NodeList, List or PartialObjectMetadataList"

int topo_gpu_add_node(topo_gpu_stats *stats, topo_facts *facts, const json_t *node,
                      const char *path, topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX];
    const json_t *meta = NULL;
    const char *name = NULL;
    topo_kv *labels = NULL;
    size_t n = 0;
    int rc;
    if (!json_is_object(node))
        return topo_err_set(err, TOPO_EINVALID, "%s%sexpected a Node object, got %s",
                            path ? path : "", path && *path ? ": " : "",
                            node ? topo_decode_type_name(node) : "nothing");
    if ((rc = check_kind(json_object_get(node, "kind"), path ? path : "", node_kinds, NODE_KINDS,
                         err)) != 0 ||
        (rc = topo_decode_member(&meta, node, "metadata", path, JSON_OBJECT, 1, err)) != 0)
        return rc;
    topo_decode_path_key(mp, sizeof(mp), path, "metadata");
    if ((rc = topo_decode_string(&name, meta, "name", mp, 1, NULL, err)) != 0)
        return rc;
    if (*name == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s.name: empty", mp);
    size_t want = json_object_size(json_object_get(meta, "labels"));
    if (want > GPU_MAX_LABELS)
        return topo_err_set(err, TOPO_ELIMIT, "%s.labels: more than %d labels", mp, GPU_MAX_LABELS);
    labels = malloc((want ? want : 1) * sizeof(*labels));
    if (labels == NULL)
        return topo_err_nomem(err, "gpu: labels");
    if ((rc = node_labels(labels, &n, want, meta, mp, err)) == 0)
        rc = topo_gpu_add_labels(stats, facts, name, labels, n, err);
    free(labels);
    return rc;
}

typedef struct gpu_walk {
    topo_gpu_stats *stats;
    topo_facts *facts;
    json_t *kind; /* the document's kind, checked once it is known to be a list */
} gpu_walk;

static int node_each(const json_t *node, size_t i, void *payload, topo_err *err)
{
    const gpu_walk *w = payload;
    char p[TOPO_DECODE_PATH_MAX];
    return topo_gpu_add_node(w->stats, w->facts, node,
                             topo_decode_path_index(p, sizeof(p), "items", i), err);
}

/* The document's own members: its kind is kept, to be checked as a list's
 * when the document is one (the walk cannot tell before its end). */
static int list_member(const char *key, const json_t *value, void *payload, topo_err *err)
{
    gpu_walk *w = payload;
    (void)err;
    if (strcmp(key, "kind") == 0) {
        json_decref(w->kind);
        w->kind = json_incref((json_t *)value);
    }
    return 0;
}

/* A list of 10,000 Nodes is tens of megabytes of text: its items are read
 * one at a time (srcjson_each); a single Node, or a document of another
 * shape, is parsed whole. Both shapes of each: full objects or metadata
 * only (node_kinds). */
int topo_gpu_parse(topo_gpu_stats *stats, topo_facts *facts, const char *text, size_t len,
                   const char *source, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const char *what = "node document";
    gpu_walk w = {stats, facts, NULL};
    int found = 0;
    topo_codec_each how = {
        .member = "items", .element = node_each, .other = list_member, .payload = &w};
    int rc = srcjson_each(&found, text, len, TOPO_MAX_K8S_RESPONSE, what, source, &how, err);
    if (rc == 0 && found)
        rc = check_kind(w.kind, "", list_kinds, LIST_KINDS, err);
    json_decref(w.kind);
    if (rc != 0 || found)
        return rc != 0 ? srcjson_wrap(err, rc, source) : 0;
    json_t *doc = NULL;
    const json_t *items = NULL;
    rc = srcjson_parse(&doc, text, len, TOPO_MAX_K8S_RESPONSE, what, source, err);
    if (rc == 0 && json_is_object(doc) && json_object_get(doc, "items") != NULL) {
        rc = check_kind(json_object_get(doc, "kind"), "", list_kinds, LIST_KINDS, err);
        if (rc == 0)
            rc = topo_decode_member(&items, doc, "items", "", JSON_ARRAY, 1, err);
        for (size_t i = 0; rc == 0 && i < json_array_size(items); i++)
            rc = topo_gpu_add_node(stats, facts, json_array_get(items, i),
                                   topo_decode_path_index(p, sizeof(p), "items", i), err);
    } else if (rc == 0) {
        rc = topo_gpu_add_node(stats, facts, doc, "", err);
    }
    json_decref(doc);
    return rc != 0 ? srcjson_wrap(err, rc, source) : 0;
}
