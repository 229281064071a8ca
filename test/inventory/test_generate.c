/* Tests for lib/inventory/generate.c: shape, labels, determinism, usage,
 * the written NodeList/PodList, and the snapshot built from a cluster. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "topo/generate.h"
#include "topo/inventory.h"

static const char *label(const topo_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static void test_shape_and_labels(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts o;
    topo_gen_opts_init(&o);
    o.nodes = 70;
    o.datacenters = 2;
    o.leaves_per_spine = 2;
    o.racks_per_leaf = 2;
    o.nodes_per_rack = 4;
    o.nvlink_nodes = 2;
    o.gpus_per_node = 4;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), 0);
    assert_int_equal(c->nnodes, 70);
    /* 16 nodes per spine, 2 DCs: ceil(70 / 32) = 3 spines per DC. */
    assert_int_equal(c->shape.spines_per_dc, 3);
    assert_int_equal(c->npods, 0);
    assert_int_equal(c->gpus_total, 280);

    const topo_node_spec *n = &c->nodes[0];
    assert_string_equal(n->name, "dc1-sp01-lf01-r01-n01");
    assert_string_equal(label(n, TOPO_GEN_LABEL_HOSTNAME), n->name);
    assert_string_equal(label(n, TOPO_GEN_LABEL_DATACENTER), "dc1");
    assert_string_equal(label(n, TOPO_GEN_LABEL_SPINE), "dc1-sp01");
    assert_string_equal(label(n, TOPO_GEN_LABEL_BLOCK), "dc1-sp01");
    assert_string_equal(label(n, TOPO_GEN_LABEL_LEAF), "dc1-sp01-lf01");
    assert_string_equal(label(n, TOPO_GEN_LABEL_RACK), "dc1-sp01-lf01-r01");
    assert_string_equal(label(n, TOPO_GEN_LABEL_NVLINK), "dc1-sp01-lf01-r01-nvl01");
    assert_string_equal(label(&c->nodes[1], TOPO_GEN_LABEL_NVLINK), "dc1-sp01-lf01-r01-nvl01");
    assert_string_equal(label(&c->nodes[2], TOPO_GEN_LABEL_NVLINK), "dc1-sp01-lf01-r01-nvl02");
    assert_string_equal(c->nodes[5].name, "dc1-sp01-lf01-r02-n02");
    assert_string_equal(c->nodes[8].name, "dc1-sp01-lf02-r01-n01");
    assert_string_equal(c->nodes[16].name, "dc1-sp02-lf01-r01-n01");
    assert_string_equal(c->nodes[48].name, "dc2-sp01-lf01-r01-n01");
    assert_string_equal(c->nodes[69].name, "dc2-sp02-lf01-r02-n02");
    assert_true(n->ready);
    assert_false(n->unschedulable);
    int64_t gpus = -1;
    for (size_t i = 0; i < n->nallocatable; i++)
        if (strcmp(n->allocatable[i].name, TOPO_GEN_GPU_RESOURCE) == 0)
            gpus = n->allocatable[i].amount;
    assert_int_equal(gpus, 4);

    /* Single-node NVLink: the nvlink value is the hostname. */
    o.nvlink_nodes = 1;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), 0);
    assert_string_equal(label(&c->nodes[3], TOPO_GEN_LABEL_NVLINK), c->nodes[3].name);
    topo_pool_free(pool);
}

static void test_invalid_options(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts o;

    topo_gen_opts_init(&o);
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "nodes"));
    assert_null(c);

    o.nodes = 10;
    o.nvlink_nodes = 3;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "nvlink-nodes"));

    topo_gen_opts_init(&o);
    o.nodes = 300;
    o.spines_per_dc = 1; /* 8 x 4 x 8 = 256 per spine */
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "= 256"));

    topo_gen_opts_init(&o);
    o.nodes = 10;
    o.with_usage = 1;
    o.usage_fraction = 1.5;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "usage-fraction"));
    topo_pool_free(pool);
}

static void test_usage_deterministic(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *a = NULL, *b = NULL, *d = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts o;
    topo_gen_opts_init(&o);
    o.nodes = 1000;
    o.with_usage = 1;
    o.usage_seed = 7;
    o.usage_fraction = 0.25;
    assert_int_equal(topo_gen_cluster_build(&a, &o, pool, &err), 0);
    assert_int_equal(topo_gen_cluster_build(&b, &o, pool, &err), 0);
    o.usage_seed = 8;
    assert_int_equal(topo_gen_cluster_build(&d, &o, pool, &err), 0);

    assert_int_equal(a->npods, b->npods);
    int same_as_other_seed = a->npods == d->npods;
    for (size_t i = 0; i < a->npods; i++) {
        assert_int_equal(a->pods[i].node, b->pods[i].node);
        assert_int_equal(a->pods[i].gpus, b->pods[i].gpus);
        assert_string_equal(a->pods[i].name, b->pods[i].name);
        assert_true(a->pods[i].gpus >= 1 && a->pods[i].gpus <= 8);
        if (same_as_other_seed &&
            (a->pods[i].node != d->pods[i].node || a->pods[i].gpus != d->pods[i].gpus))
            same_as_other_seed = 0;
    }
    assert_false(same_as_other_seed);
    /* About a quarter of the nodes are busy, mostly whole nodes. */
    double busy = (double)a->npods / (double)a->nnodes;
    assert_true(busy > 0.22 && busy < 0.28);
    double f = (double)a->gpus_used / (double)a->gpus_total;
    assert_true(f > busy * 0.8 && f < busy);
    size_t whole = 0;
    for (size_t i = 0; i < a->npods; i++)
        whole += a->pods[i].gpus == 8;
    assert_true(whole > a->npods / 2 && whole < a->npods);
    topo_pool_free(pool);
}

static void test_written_lists_parse(void **state)
{
    (void)state;
    char nodes_path[] = "/tmp/topo-gen-nodes-XXXXXX", pods_path[] = "/tmp/topo-gen-pods-XXXXXX";
    int fd1 = mkstemp(nodes_path), fd2 = mkstemp(pods_path);
    assert_true(fd1 >= 0 && fd2 >= 0);
    close(fd1);
    close(fd2);

    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts o;
    topo_gen_opts_init(&o);
    o.nodes = 40;
    o.with_usage = 1;
    o.usage_seed = 3;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), 0);
    assert_int_equal(topo_gen_write_nodes(c, nodes_path, &err), 0);
    assert_int_equal(topo_gen_write_pods(c, pods_path, &err), 0);

    json_error_t jerr;
    json_t *nodes = json_load_file(nodes_path, 0, &jerr);
    assert_non_null(nodes);
    assert_string_equal(json_string_value(json_object_get(nodes, "apiVersion")), "v1");
    assert_string_equal(json_string_value(json_object_get(nodes, "kind")), "List");
    json_t *items = json_object_get(nodes, "items");
    assert_int_equal(json_array_size(items), 40);
    json_t *n7 = json_array_get(items, 7);
    assert_string_equal(json_string_value(json_object_get(n7, "kind")), "Node");
    json_t *meta = json_object_get(n7, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "name")), c->nodes[7].name);
    json_t *labels = json_object_get(meta, "labels");
    assert_string_equal(json_string_value(json_object_get(labels, TOPO_GEN_LABEL_RACK)),
                        "dc1-sp01-lf01-r01");
    json_t *status = json_object_get(n7, "status");
    json_t *alloc = json_object_get(status, "allocatable");
    assert_string_equal(json_string_value(json_object_get(alloc, "cpu")), "128");
    assert_string_equal(json_string_value(json_object_get(alloc, "memory")), "2000Gi");
    assert_string_equal(json_string_value(json_object_get(alloc, "nvidia.com/gpu")), "8");
    assert_string_equal(json_string_value(json_object_get(alloc, "pods")), "110");
    json_t *cond = json_array_get(json_object_get(status, "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(cond, "type")), "Ready");
    assert_string_equal(json_string_value(json_object_get(cond, "status")), "True");
    json_decref(nodes);

    json_t *pods = json_load_file(pods_path, 0, &jerr);
    assert_non_null(pods);
    items = json_object_get(pods, "items");
    assert_int_equal(json_array_size(items), c->npods);
    assert_true(c->npods > 0);
    json_t *p0 = json_array_get(items, 0);
    json_t *spec = json_object_get(p0, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "nodeName")),
                        c->nodes[c->pods[0].node].name);
    json_t *req = json_object_get(
        json_object_get(json_object_get(json_array_get(json_object_get(spec, "containers"), 0),
                                        "resources"),
                        "requests"),
        "nvidia.com/gpu");
    char want[16];
    snprintf(want, sizeof(want), "%u", (unsigned)c->pods[0].gpus);
    assert_string_equal(json_string_value(req), want);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(p0, "status"), "phase")), "Running");
    json_decref(pods);

    assert_int_equal(topo_gen_write_nodes(c, "/nonexistent-dir/x.json", &err), TOPO_EIO);
    unlink(nodes_path);
    unlink(pods_path);
    topo_pool_free(pool);
}

static void test_snapshot(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *c = NULL;
    topo_snapshot *snap = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts o;
    topo_gen_opts_init(&o);
    o.nodes = 100;
    o.with_usage = 1;
    o.usage_seed = 1;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), 0);
    const char *levels[] = {TOPO_GEN_LABEL_BLOCK, TOPO_GEN_LABEL_RACK, TOPO_GEN_LABEL_HOSTNAME};
    int rc = topo_gen_snapshot(&snap, c, "bench", levels, 3, &err);
    if (rc == TOPO_EUNSUPPORTED)
        skip();
    if (rc != 0)
        fail_msg("%s", err.text);
    assert_int_equal(topo_snapshot_node_count(snap), 100);
    assert_int_equal(topo_snapshot_level_count(snap), 3);
    topo_snapshot_free(snap);
    topo_pool_free(pool);
}

typedef struct walk_sum {
    int64_t free;
    int64_t capacity;
    size_t domains;
} walk_sum;

static int sum_domains(const topo_domain_view *v, void *payload)
{
    walk_sum *w = payload;
    if (v->level == 0) {
        w->free += v->free;
        w->capacity += v->capacity;
    }
    w->domains++;
    return 0;
}

/* What generate writes, the kubectl-JSON inventory loader reads back into
 * the same nodes, pods and free capacity. */
static void test_inventory_roundtrip(void **state)
{
    (void)state;
    char nodes_path[] = "/tmp/topo-gen-rt-nodes-XXXXXX", pods_path[] = "/tmp/topo-gen-rt-pods-XXXXXX";
    int fd1 = mkstemp(nodes_path), fd2 = mkstemp(pods_path);
    assert_true(fd1 >= 0 && fd2 >= 0);
    close(fd1);
    close(fd2);

    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *c = NULL;
    topo_inventory *inv = NULL;
    topo_snapshot *a = NULL, *b = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts o;
    topo_gen_opts_init(&o);
    o.nodes = 300;
    o.nvlink_nodes = 4;
    o.with_usage = 1;
    o.usage_seed = 11;
    o.usage_fraction = 0.4;
    assert_int_equal(topo_gen_cluster_build(&c, &o, pool, &err), 0);
    assert_int_equal(topo_gen_write_nodes(c, nodes_path, &err), 0);
    assert_int_equal(topo_gen_write_pods(c, pods_path, &err), 0);

    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_nodes_file(inv, nodes_path, &err) < 0 ||
        topo_inventory_load_pods_file(inv, pods_path, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(topo_inventory_node_count(inv), 300);
    assert_int_equal(topo_inventory_pod_count(inv), c->npods);
    assert_int_equal(topo_inventory_tas_pod_count(inv), 0);

    const char *levels[] = {TOPO_GEN_LABEL_DATACENTER, TOPO_GEN_LABEL_SPINE,
                            TOPO_GEN_LABEL_LEAF,       TOPO_GEN_LABEL_RACK,
                            TOPO_GEN_LABEL_NVLINK,     TOPO_GEN_LABEL_HOSTNAME};
    topo_inventory_snapshot_opts so = {0};
    so.snapshot.topology_name = "rt";
    so.snapshot.levels = levels;
    so.snapshot.nlevels = 6;
    if (topo_inventory_snapshot(&a, inv, &so, NULL, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(topo_gen_snapshot(&b, c, "rt", levels, 6, &err), 0);

    walk_sum wa = {0, 0, 0}, wb = {0, 0, 0};
    assert_int_equal(topo_snapshot_walk(a, TOPO_GEN_GPU_RESOURCE, sum_domains, &wa), 0);
    assert_int_equal(topo_snapshot_walk(b, TOPO_GEN_GPU_RESOURCE, sum_domains, &wb), 0);
    assert_int_equal(wa.capacity, 2400);
    assert_int_equal(wa.capacity, wb.capacity);
    assert_int_equal(wa.free, wb.free);
    assert_int_equal(wa.free, (int64_t)(c->gpus_total - c->gpus_used));
    assert_int_equal(wa.domains, wb.domains);

    topo_snapshot_free(a);
    topo_snapshot_free(b);
    topo_inventory_free(inv);
    unlink(nodes_path);
    unlink(pods_path);
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_and_labels),
        cmocka_unit_test(test_invalid_options),
        cmocka_unit_test(test_usage_deterministic),
        cmocka_unit_test(test_written_lists_parse),
        cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_inventory_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
