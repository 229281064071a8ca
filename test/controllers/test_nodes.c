/* topo-sync's node view (controllers/nodes.c) fed by the reflector's
 * callbacks as the API server sends Nodes: whole (kind Node) and metadata
 * only (kind PartialObjectMetadata, apiVersion meta.k8s.io/v1: the answer
 * to a metadata-only list or watch), and both mixed, as after a server
 * refused metadata-only answers (406) and the client asked again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nodes.h"

static const char *const label_keys[] = {"nvidia.com/gpu.clique"};
static const char *const prefixes[] = {"topology.topo.io/"};

static const ctl_nodes_keep keep_gpu = {.label_prefixes = prefixes,
                                         .nlabel_prefixes = 1,
                                         .label_keys = label_keys,
                                         .nlabel_keys = 1,
                                         .annotation_prefixes = prefixes,
                                         .nannotation_prefixes = 1};

/* The view alone (no client), fed through topo_view_handler as its
 * reflector would. */
static topo_view *new_view(const ctl_nodes_keep *keep)
{
    topo_view *n = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_view_create(&n, NULL, NULL, &ctl_nodes_ops, (void *)keep, &err), 0);
    return n;
}

/* A Node whole: status and spec beside the metadata. */
static json_t *full_node(const char *name, const char *clique, const char *image)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}}, s:{s:s}, "
                          "s:{s:[{s:[s], s:i}], s:{s:s}}}",
                          "kind", "Node", "apiVersion", "v1", "metadata", "name", name, "uid",
                          "u-1", "resourceVersion", "7", "labels", "nvidia.com/gpu.clique", clique,
                          "topology.topo.io/rack", "r1", "team", "ml", "annotations",
                          "topology.topo.io/x", "y", "node.alpha.kubernetes.io/ttl", "0", "spec",
                          "podCIDR", "10.0.0.0/24", "status", "images", "names", image, "sizeBytes",
                          123456789, "allocatable", "nvidia.com/gpu", "4");
    assert_non_null(o);
    return o;
}

/* The same node's PartialObjectMetadata (metadata only). */
static json_t *partial_node(const char *name, const char *clique)
{
    json_t *o =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}}}", "kind",
                  "PartialObjectMetadata", "apiVersion", "meta.k8s.io/v1", "metadata", "name", name,
                  "uid", "u-1", "resourceVersion", "8", "labels", "nvidia.com/gpu.clique", clique,
                  "topology.topo.io/rack", "r1", "team", "ml", "annotations", "topology.topo.io/x",
                  "y", "node.alpha.kubernetes.io/ttl", "0");
    assert_non_null(o);
    return o;
}

static void expect_node(json_t *view, const char *name, const char *clique)
{
    json_t *n = json_object_get(view, name);
    assert_non_null(n);
    assert_string_equal(json_string_value(json_object_get(n, "uid")), "u-1");
    json_t *labels = json_object_get(n, "labels");
    assert_int_equal(json_object_size(labels), 2); /* "team" is not kept */
    assert_string_equal(json_string_value(json_object_get(labels, "nvidia.com/gpu.clique")),
                        clique);
    assert_string_equal(json_string_value(json_object_get(labels, "topology.topo.io/rack")), "r1");
    json_t *notes = json_object_get(n, "annotations");
    assert_int_equal(json_object_size(notes), 1);
    assert_string_equal(json_string_value(json_object_get(notes, "topology.topo.io/x")), "y");
    assert_null(json_object_get(n, "status"));
}

static void test_nodes__both_shapes_listed(void **state)
{
    (void)state;
    topo_view *n = new_view(&keep_gpu);
    const topo_reflector_handler *h = topo_view_handler();
    topo_err err = TOPO_ERR_INIT;
    json_t *a = partial_node("a", "c.1"), *b = full_node("b", "c.2", "img:1");
    json_t *nameless = json_pack("{s:s, s:{}}", "kind", "PartialObjectMetadata", "metadata");
    assert_int_equal(h->list_begin(&err, n), 0);
    assert_int_equal(h->list_object(a, &err, n), 0);
    assert_int_equal(h->list_object(b, &err, n), 0);
    assert_int_equal(h->list_object(nameless, &err, n), 0); /* skipped */
    assert_int_equal(h->list_end("9", &err, n), 0);
    assert_true(topo_view_synced(n));
    json_t *view = ctl_nodes_snapshot(n, NULL);
    assert_int_equal(json_object_size(view), 2);
    expect_node(view, "a", "c.1");
    expect_node(view, "b", "c.2");
    json_decref(view);
    json_decref(a);
    json_decref(b);
    json_decref(nameless);
    topo_view_free(n);
}

/* The same node in the other shape wakes no round; a kept label's change
 * in either shape does, a status change does not. */
static void test_nodes__shape_change_is_no_change(void **state)
{
    (void)state;
    topo_view *n = new_view(&keep_gpu);
    const topo_reflector_handler *h = topo_view_handler();
    topo_err err = TOPO_ERR_INIT;
    json_t *full = full_node("a", "c.1", "img:1");
    assert_int_equal(h->list_begin(&err, n), 0);
    assert_int_equal(h->list_object(full, &err, n), 0);
    assert_int_equal(h->list_end("9", &err, n), 0);
    uint64_t g = topo_view_generation(n);

    json_t *partial = partial_node("a", "c.1");
    assert_int_equal(h->event(TOPO_K8S_MODIFIED, partial, "10", &err, n), 0);
    assert_int_equal(topo_view_generation(n), g);
    json_t *other_image = full_node("a", "c.1", "img:2");
    assert_int_equal(h->event(TOPO_K8S_MODIFIED, other_image, "11", &err, n), 0);
    assert_int_equal(topo_view_generation(n), g);

    json_t *moved = partial_node("a", "c.9");
    assert_int_equal(h->event(TOPO_K8S_MODIFIED, moved, "12", &err, n), 0);
    assert_int_equal(topo_view_generation(n), g + 1);
    json_t *view = ctl_nodes_snapshot(n, NULL);
    expect_node(view, "a", "c.9");
    json_decref(view);

    assert_int_equal(h->event(TOPO_K8S_DELETED, moved, "13", &err, n), 0);
    assert_int_equal(topo_view_generation(n), g + 2);
    view = ctl_nodes_snapshot(n, NULL);
    assert_int_equal(json_object_size(view), 0);
    json_decref(view);
    json_decref(full);
    json_decref(partial);
    json_decref(other_image);
    json_decref(moved);
    topo_view_free(n);
}

/* Ownership on the whole prefix: "topology.topo.io/" keeps neither
 * "topology.topo.io.evil/x" nor "topology.topo.iox/y", a prefix without '/'
 * ("t") keeps nothing ("team" stays out), and with topograph exactly its
 * keys are kept ("fabric.topograph.run/tier-0x" and ".../other" are not). */
static void test_nodes__kept_on_whole_prefix(void **state)
{
    (void)state;
    static const char *const pre[] = {"topology.topo.io/", "t"};
    static const ctl_nodes_keep keep = {.label_prefixes = pre,
                                         .nlabel_prefixes = 2,
                                         .label_topograph = 1,
                                         .annotation_prefixes = pre,
                                         .nannotation_prefixes = 2};
    topo_view *n = new_view(&keep);
    topo_err err = TOPO_ERR_INIT;
    const topo_reflector_handler *h = topo_view_handler();
    json_t *node = json_pack(
        "{s:s, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}, s:{s:s, s:s}}}",
        "kind", "PartialObjectMetadata", "metadata", "name", "a", "uid", "u-1", "labels",
        "topology.topo.io/rack", "r1", "topology.topo.io.evil/x", "1", "topology.topo.iox/y", "2",
        "team", "ml", "fabric.topograph.run/tier-0", "s0", "fabric.topograph.run/tier-0x", "3",
        "fabric.topograph.run/other", "4", "accelerator.topograph.run/domain", "d",
        "accelerator.topograph.run/other", "5", "annotations", "topology.topo.io/provenance",
        "{}", "topology.topo.io.evil/p", "6");
    assert_non_null(node);
    assert_int_equal(h->list_begin(&err, n), 0);
    assert_int_equal(h->list_object(node, &err, n), 0);
    assert_int_equal(h->list_end("9", &err, n), 0);
    json_t *view = ctl_nodes_snapshot(n, NULL);
    json_t *a = json_object_get(view, "a");
    char *labels = json_dumps(json_object_get(a, "labels"), JSON_SORT_KEYS | JSON_COMPACT);
    char *notes = json_dumps(json_object_get(a, "annotations"), JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(labels, "{\"accelerator.topograph.run/domain\":\"d\","
                                "\"fabric.topograph.run/tier-0\":\"s0\","
                                "\"topology.topo.io/rack\":\"r1\"}");
    assert_string_equal(notes, "{\"topology.topo.io/provenance\":\"{}\"}");
    free(labels);
    free(notes);
    json_decref(view);
    json_decref(node);
    topo_view_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes__kept_on_whole_prefix),
        cmocka_unit_test(test_nodes__both_shapes_listed),
        cmocka_unit_test(test_nodes__shape_change_is_no_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
