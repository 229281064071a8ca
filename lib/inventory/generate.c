/* Synthetic GPU clusters (topo/generate.h). */
#include "topo/generate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "topo/json.h"
#include "topo/limits.h"
#include "topo/rand.h"

/* Per GPU on a node: CPU cores and memory; pods per node. */
#define GEN_CPU_PER_GPU 16
#define GEN_MEM_GIB_PER_GPU 250
#define GEN_PODS_PER_NODE 110
/* Per GPU of a load pod. */
#define GEN_POD_CPU_PER_GPU 12
#define GEN_POD_MEM_GIB_PER_GPU 200
#define GEN_NODE_LABELS 7
/* Share of busy nodes whose pod takes only part of the GPUs. */
#define GEN_PARTIAL_SHARE 0.25
#define GEN_GIB (1024LL * 1024LL * 1024LL)
#define GEN_LOAD_NAMESPACE "load"

void topo_gen_opts_init(topo_gen_opts *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->datacenters = TOPO_GEN_DATACENTERS_DEFAULT;
    opts->leaves_per_spine = TOPO_GEN_LEAVES_PER_SPINE_DEFAULT;
    opts->racks_per_leaf = TOPO_GEN_RACKS_PER_LEAF_DEFAULT;
    opts->nodes_per_rack = TOPO_GEN_NODES_PER_RACK_DEFAULT;
    opts->nvlink_nodes = TOPO_GEN_NVLINK_NODES_DEFAULT;
    opts->gpus_per_node = TOPO_GEN_GPUS_PER_NODE_DEFAULT;
    opts->usage_fraction = TOPO_GEN_USAGE_FRACTION_DEFAULT;
}

static int digits(uint64_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

static int width(uint64_t n)
{
    int d = digits(n);
    return d < 2 ? 2 : d;
}

/* a * b, saturating at UINT64_MAX. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

static int check_range(uint32_t v, uint32_t min, uint32_t max, const char *name, topo_err *err)
{
    if (v < min || v > max)
        return topo_err_set(err, TOPO_EINVALID, "%s: %" PRIu32 " is out of range [%" PRIu32
                            ", %" PRIu32 "]", name, v, min, max);
    return 0;
}

static int validate(topo_gen_opts *o, topo_err *err)
{
    int rc;
    if ((rc = check_range(o->nodes, 1, TOPO_MAX_GEN_NODES, "nodes", err)) < 0 ||
        (rc = check_range(o->datacenters, 1, TOPO_MAX_GEN_FANOUT, "datacenters", err)) < 0 ||
        (rc = check_range(o->spines_per_dc, 0, TOPO_MAX_GEN_FANOUT, "spines-per-dc", err)) < 0 ||
        (rc = check_range(o->leaves_per_spine, 1, TOPO_MAX_GEN_FANOUT, "leaves-per-spine",
                          err)) < 0 ||
        (rc = check_range(o->racks_per_leaf, 1, TOPO_MAX_GEN_FANOUT, "racks-per-leaf", err)) <
            0 ||
        (rc = check_range(o->nodes_per_rack, 1, TOPO_MAX_GEN_FANOUT, "nodes-per-rack", err)) <
            0 ||
        (rc = check_range(o->nvlink_nodes, 1, TOPO_MAX_GEN_FANOUT, "nvlink-nodes", err)) < 0 ||
        (rc = check_range(o->gpus_per_node, 1, TOPO_MAX_GEN_GPUS, "gpus-per-node", err)) < 0)
        return rc;
    if (o->nodes_per_rack % o->nvlink_nodes != 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "nvlink-nodes: %" PRIu32 " does not divide nodes-per-rack %" PRIu32,
                            o->nvlink_nodes, o->nodes_per_rack);
    if (o->with_usage && !(o->usage_fraction >= 0.0 && o->usage_fraction <= 1.0))
        return topo_err_set(err, TOPO_EINVALID, "usage-fraction: %g is not within [0, 1]",
                            o->usage_fraction);

    uint64_t per_spine = mul_sat(mul_sat(o->leaves_per_spine, o->racks_per_leaf),
                                 o->nodes_per_rack);
    if (o->spines_per_dc == 0) {
        uint64_t per_row = mul_sat(per_spine, o->datacenters);
        uint64_t s = (o->nodes + per_row - 1) / per_row;
        o->spines_per_dc = (uint32_t)(s == 0 ? 1 : s);
    }
    uint64_t cap = mul_sat(mul_sat(per_spine, o->spines_per_dc), o->datacenters);
    if (cap < o->nodes)
        return topo_err_set(err, TOPO_EINVALID,
                            "nodes: %" PRIu32 " do not fit the shape (%" PRIu32
                            " datacenter(s) x %" PRIu32 " spines x %" PRIu32 " leaves x %" PRIu32
                            " racks x %" PRIu32 " nodes = %" PRIu64 ")",
                            o->nodes, o->datacenters, o->spines_per_dc, o->leaves_per_spine,
                            o->racks_per_leaf, o->nodes_per_rack, cap);
    return 0;
}

/* The resources of a load pod using k GPUs (Kueue units). */
static int pod_requests(topo_resource *r, uint32_t k)
{
    r[0].name = "cpu";
    r[0].amount = (int64_t)k * GEN_POD_CPU_PER_GPU * 1000;
    r[1].name = "memory";
    r[1].amount = (int64_t)k * GEN_POD_MEM_GIB_PER_GPU * GEN_GIB;
    r[2].name = TOPO_GEN_GPU_RESOURCE;
    r[2].amount = (int64_t)k;
    return 3;
}

int topo_gen_cluster_build(topo_gen_cluster **out, const topo_gen_opts *opts, topo_pool *pool,
                           topo_err *err)
{
    topo_gen_cluster *c = NULL;
    topo_resource *alloc = NULL, *pod_req = NULL;
    topo_kv *labels = NULL;
    topo_gen_opts o = *opts;
    int rc;

    *out = NULL;
    if ((rc = validate(&o, err)) < 0)
        return rc;
    const uint32_t G = o.gpus_per_node, K = o.nodes_per_rack, R = o.racks_per_leaf,
                   L = o.leaves_per_spine, S = o.spines_per_dc, M = o.nvlink_nodes;
    const int ws = width(S), wl = width(L), wr = width(R), wn = width(K), wv = width(K / M);

    if ((c = topo_pool_calloc(pool, 1, sizeof(*c))) == NULL ||
        (c->nodes = topo_pool_calloc(pool, o.nodes, sizeof(*c->nodes))) == NULL ||
        (labels = topo_pool_calloc(pool, (size_t)o.nodes * GEN_NODE_LABELS, sizeof(*labels))) ==
            NULL ||
        (alloc = topo_pool_calloc(pool, 4, sizeof(*alloc))) == NULL)
        goto oom;
    c->shape = o;
    c->nnodes = o.nodes;

    /* Every node has the same allocatable: share one array. */
    alloc[0] = (topo_resource){"cpu", (int64_t)G * GEN_CPU_PER_GPU * 1000};
    alloc[1] = (topo_resource){"memory", (int64_t)G * GEN_MEM_GIB_PER_GPU * GEN_GIB};
    alloc[2] = (topo_resource){TOPO_GEN_GPU_RESOURCE, (int64_t)G};
    alloc[3] = (topo_resource){"pods", GEN_PODS_PER_NODE};

    /* Domain values are shared by the nodes of a domain. */
    const char *dc = NULL, *spine = NULL, *leaf = NULL, *rack = NULL, *nvl = NULL;
    for (uint32_t n = 0; n < o.nodes; n++) {
        uint32_t in_rack = n % K;
        uint32_t rack_g = n / K;
        uint32_t leaf_g = rack_g / R;
        uint32_t spine_g = leaf_g / L;
        if (n == 0 || (in_rack == 0 && rack_g % R == 0 && leaf_g % L == 0 && spine_g % S == 0))
            if ((dc = topo_pool_printf(pool, "dc%" PRIu32, spine_g / S + 1)) == NULL)
                goto oom;
        if (n == 0 || (in_rack == 0 && rack_g % R == 0 && leaf_g % L == 0))
            if ((spine = topo_pool_printf(pool, "%s-sp%0*" PRIu32, dc, ws, spine_g % S + 1)) == NULL)
                goto oom;
        if (n == 0 || (in_rack == 0 && rack_g % R == 0))
            if ((leaf = topo_pool_printf(pool, "%s-lf%0*" PRIu32, spine, wl, leaf_g % L + 1)) == NULL)
                goto oom;
        if (n == 0 || in_rack == 0)
            if ((rack = topo_pool_printf(pool, "%s-r%0*" PRIu32, leaf, wr, rack_g % R + 1)) == NULL)
                goto oom;
        const char *host = topo_pool_printf(pool, "%s-n%0*" PRIu32, rack, wn, in_rack + 1);
        if (host == NULL)
            goto oom;
        if (M == 1)
            nvl = host;
        else if (in_rack % M == 0 &&
                 (nvl = topo_pool_printf(pool, "%s-nvl%0*" PRIu32, rack, wv, in_rack / M + 1)) == NULL)
            goto oom;

        topo_kv *l = &labels[(size_t)n * GEN_NODE_LABELS];
        l[0] = (topo_kv){TOPO_GEN_LABEL_DATACENTER, dc};
        l[1] = (topo_kv){TOPO_GEN_LABEL_SPINE, spine};
        l[2] = (topo_kv){TOPO_GEN_LABEL_BLOCK, spine};
        l[3] = (topo_kv){TOPO_GEN_LABEL_LEAF, leaf};
        l[4] = (topo_kv){TOPO_GEN_LABEL_RACK, rack};
        l[5] = (topo_kv){TOPO_GEN_LABEL_NVLINK, nvl};
        l[6] = (topo_kv){TOPO_GEN_LABEL_HOSTNAME, host};
        c->nodes[n] = (topo_node_spec){.name = host,
                                       .labels = l,
                                       .nlabels = GEN_NODE_LABELS,
                                       .allocatable = alloc,
                                       .nallocatable = 4,
                                       .unschedulable = 0,
                                       .ready = 1};
    }
    c->gpus_total = (uint64_t)o.nodes * G;

    if (o.with_usage) {
        uint64_t state = o.usage_seed;
        uint32_t *used = topo_pool_calloc(pool, o.nodes, sizeof(*used));
        if (used == NULL || (pod_req = topo_pool_calloc(pool, (size_t)G * 3, sizeof(*pod_req))) ==
                                NULL)
            goto oom;
        for (uint32_t k = 1; k <= G; k++)
            pod_requests(&pod_req[(k - 1) * 3], k);
        size_t npods = 0;
        /* A busy node runs one pod: usually the whole node, as GPU jobs do,
         * otherwise a part of it. */
        for (uint32_t n = 0; n < o.nodes; n++) {
            if (!(topo_rand_unit(&state) < o.usage_fraction))
                continue;
            used[n] = G;
            if (G > 1 && topo_rand_unit(&state) < GEN_PARTIAL_SHARE)
                used[n] = 1 + (uint32_t)(topo_rand_unit(&state) * (double)(G - 1));
            npods++;
        }
        if (npods > 0 && (c->pods = topo_pool_calloc(pool, npods, sizeof(*c->pods))) == NULL)
            goto oom;
        for (uint32_t n = 0; n < o.nodes; n++) {
            if (used[n] == 0)
                continue;
            topo_gen_pod *p = &c->pods[c->npods++];
            p->namespace_name = GEN_LOAD_NAMESPACE;
            if ((p->name = topo_pool_printf(pool, "load-%s", c->nodes[n].name)) == NULL)
                goto oom;
            p->node = n;
            p->gpus = used[n];
            p->requests = &pod_req[(used[n] - 1) * 3];
            p->nrequests = 3;
            c->gpus_used += used[n];
        }
    }
    *out = c;
    return 0;

oom:
    return topo_err_nomem(err, NULL);
}

/* Builds JSON without checking each call: a failed allocation makes a NULL
 * that json_object_set_new rejects, which sets *bad. */
static void put(json_t *obj, const char *key, json_t *value, int *bad)
{
    if (json_object_set_new(obj, key, value) < 0)
        *bad = 1;
}

static json_t *quantity(int64_t v, const char *suffix)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64 "%s", v, suffix);
    return json_string(buf);
}

/* Kueue units back to the quantities a kubelet would report. */
static json_t *resources_json(const topo_resource *r, size_t n)
{
    json_t *obj = json_object();
    int bad = obj == NULL;
    for (size_t i = 0; i < n && !bad; i++) {
        json_t *q;
        if (strcmp(r[i].name, "cpu") == 0)
            q = r[i].amount % 1000 == 0 ? quantity(r[i].amount / 1000, "")
                                        : quantity(r[i].amount, "m");
        else if (strcmp(r[i].name, "memory") == 0 && r[i].amount % GEN_GIB == 0)
            q = quantity(r[i].amount / GEN_GIB, "Gi");
        else
            q = quantity(r[i].amount, "");
        put(obj, r[i].name, q, &bad);
    }
    if (bad) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

static json_t *node_json(const topo_node_spec *n)
{
    json_t *node = json_object(), *meta = json_object(), *labels = json_object(),
           *status = json_object(), *conds = json_array(), *ready = json_object();
    int bad = 0;

    for (size_t i = 0; i < n->nlabels; i++)
        put(labels, n->labels[i].key, json_string(n->labels[i].value), &bad);
    put(meta, "name", json_string(n->name), &bad);
    put(meta, "labels", labels, &bad);
    put(ready, "type", json_string("Ready"), &bad);
    put(ready, "status", json_string("True"), &bad);
    put(ready, "reason", json_string("KubeletReady"), &bad);
    if (json_array_append_new(conds, ready) < 0)
        bad = 1;
    put(status, "capacity", resources_json(n->allocatable, n->nallocatable), &bad);
    put(status, "allocatable", resources_json(n->allocatable, n->nallocatable), &bad);
    put(status, "conditions", conds, &bad);
    put(node, "apiVersion", json_string("v1"), &bad);
    put(node, "kind", json_string("Node"), &bad);
    put(node, "metadata", meta, &bad);
    put(node, "spec", json_object(), &bad);
    put(node, "status", status, &bad);
    if (bad) {
        json_decref(node);
        return NULL;
    }
    return node;
}

static json_t *pod_json(const topo_gen_cluster *c, const topo_gen_pod *p)
{
    json_t *pod = json_object(), *meta = json_object(), *spec = json_object(),
           *containers = json_array(), *ctr = json_object(), *res = json_object(),
           *limits = json_object(), *status = json_object();
    int bad = 0;

    put(meta, "name", json_string(p->name), &bad);
    put(meta, "namespace", json_string(p->namespace_name), &bad);
    put(limits, TOPO_GEN_GPU_RESOURCE, quantity((int64_t)p->gpus, ""), &bad);
    put(res, "requests", resources_json(p->requests, p->nrequests), &bad);
    put(res, "limits", limits, &bad);
    put(ctr, "name", json_string("main"), &bad);
    put(ctr, "image", json_string("registry.k8s.io/pause:3.9"), &bad);
    put(ctr, "resources", res, &bad);
    if (json_array_append_new(containers, ctr) < 0)
        bad = 1;
    put(spec, "nodeName", json_string(c->nodes[p->node].name), &bad);
    put(spec, "containers", containers, &bad);
    put(status, "phase", json_string("Running"), &bad);
    put(pod, "apiVersion", json_string("v1"), &bad);
    put(pod, "kind", json_string("Pod"), &bad);
    put(pod, "metadata", meta, &bad);
    put(pod, "spec", spec, &bad);
    put(pod, "status", status, &bad);
    if (bad) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

static int write_json(json_t *root, const char *path, topo_err *err)
{
    int to_stdout = path == NULL || strcmp(path, "-") == 0;
    const char *name = to_stdout ? "<stdout>" : path;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    int rc = 0;

    if (f == NULL)
        return topo_err_set(err, TOPO_EIO, "%s: cannot open for writing: %s", name,
                            strerror(errno));
    /* Streamed (a large cluster is not held twice), watched as topo/json.h says. */
    topo_json_alloc_watch();
    if (json_dumpf(root, f, JSON_INDENT(2)) < 0 || fputc('\n', f) == EOF)
        rc = topo_err_set(err, TOPO_EIO, "%s: write failed", name);
    else if (topo_json_alloc_failed())
        rc = topo_err_set(err, TOPO_ENOMEM, "%s: out of memory while writing", name);
    if (to_stdout) {
        if (fflush(f) != 0 && rc == 0)
            rc = topo_err_set(err, TOPO_EIO, "%s: write failed: %s", name, strerror(errno));
    } else if (fclose(f) != 0 && rc == 0) {
        rc = topo_err_set(err, TOPO_EIO, "%s: write failed: %s", name, strerror(errno));
    }
    return rc;
}

static json_t *list_json(json_t *items)
{
    json_t *list = json_object(), *meta = json_object();
    int bad = items == NULL;
    put(meta, "resourceVersion", json_string(""), &bad);
    put(list, "apiVersion", json_string("v1"), &bad);
    put(list, "kind", json_string("List"), &bad);
    put(list, "metadata", meta, &bad);
    put(list, "items", items, &bad);
    if (bad) {
        json_decref(list);
        return NULL;
    }
    return list;
}

/* Writes a List of n items to path, item i made by make(cluster, i). */
static int write_list(const topo_gen_cluster *cluster, size_t n,
                      json_t *(*make)(const topo_gen_cluster *, size_t), const char *path,
                      topo_err *err)
{
    json_t *items = json_array(), *root = NULL;
    int rc;
    for (size_t i = 0; i < n && items != NULL; i++) {
        if (json_array_append_new(items, make(cluster, i)) < 0) {
            json_decref(items);
            items = NULL;
        }
    }
    if ((root = list_json(items)) == NULL)
        return topo_err_nomem(err, NULL);
    rc = write_json(root, path, err);
    json_decref(root);
    return rc;
}

static json_t *nth_node_json(const topo_gen_cluster *cluster, size_t i)
{
    return node_json(&cluster->nodes[i]);
}

static json_t *nth_pod_json(const topo_gen_cluster *cluster, size_t i)
{
    return pod_json(cluster, &cluster->pods[i]);
}

int topo_gen_write_nodes(const topo_gen_cluster *cluster, const char *path, topo_err *err)
{
    return write_list(cluster, cluster->nnodes, nth_node_json, path, err);
}

int topo_gen_write_pods(const topo_gen_cluster *cluster, const char *path, topo_err *err)
{
    return write_list(cluster, cluster->npods, nth_pod_json, path, err);
}

int topo_gen_snapshot(topo_snapshot **out, const topo_gen_cluster *cluster,
                      const char *topology_name, const char *const *levels, size_t nlevels,
                      topo_err *err)
{
    topo_snapshot *snap = NULL;
    topo_snapshot_opts opts = {topology_name, levels, nlevels, NULL, 0};
    int rc;

    *out = NULL;
    if ((rc = topo_snapshot_create(&snap, &opts, err)) < 0)
        return rc;
    for (size_t i = 0; i < cluster->nnodes; i++)
        if ((rc = topo_snapshot_add_node(snap, &cluster->nodes[i], err)) < 0)
            goto cleanup;
    if ((rc = topo_snapshot_build(snap, err)) < 0)
        goto cleanup;
    for (size_t i = 0; i < cluster->npods; i++) {
        const topo_gen_pod *p = &cluster->pods[i];
        if ((rc = topo_snapshot_add_pod_usage(snap, cluster->nodes[p->node].name, p->requests,
                                              p->nrequests, NULL, err)) < 0)
            goto cleanup;
    }
    *out = snap;
    snap = NULL;
    rc = 0;

cleanup:
    topo_snapshot_free(snap);
    return rc;
}
