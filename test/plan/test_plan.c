/* The plan: levels fused from several sources by precedence, conflicts
 * recorded with both values, provenance, name mapping for every source,
 * incomplete nodes left out or given the fallback, the node set from the
 * API server, and what --print-labels and the text plan show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/plan.h"

#define P "topology.topo.io/"

static void must(int rc, const topo_err *err)
{
    if (rc != 0)
        fail_msg("%s", err->text);
}

/* netbox: site and rack for n1..n3 (and N4 under another spelling); the
 * fabric: leaf and spine for n1..n3; gpu: nvlink for n1, n2. */
static void feed(topo_plan *p)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *nb = NULL;
    must(topo_facts_create(&nb, "netbox", &err), &err);
    const char *hosts[] = {"n1.dc.example", "n2.dc.example", "n3.dc.example", "N4.dc.example"};
    for (size_t i = 0; i < 4; i++) {
        must(topo_facts_set_level(nb, hosts[i], TOPO_LEVEL_DATACENTER, "DC 1", &err), &err);
        must(topo_facts_set_level(nb, hosts[i], TOPO_LEVEL_RACK, i < 2 ? "r01" : "r02", &err),
             &err);
    }
    must(topo_plan_add_facts(p, nb, &err), &err);
    topo_facts_free(nb);
    const char *leaf[] = {"MF0;LEAF-1:MQM9700/U1", "MF0;LEAF-1:MQM9700/U1", "MF0;LEAF-2:MQM9700/U1"};
    for (size_t i = 0; i < 3; i++) {
        char host[16];
        snprintf(host, sizeof host, "n%zu", i + 1);
        must(topo_plan_add_level(p, "ufm", host, TOPO_LEVEL_LEAF, leaf[i], &err), &err);
        must(topo_plan_add_level(p, "ufm", host, TOPO_LEVEL_SPINE, "S-0001", &err), &err);
    }
    must(topo_plan_add_level(p, "gpu", "n1", TOPO_LEVEL_NVLINK, "n1", &err), &err);
    must(topo_plan_add_level(p, "gpu", "n2", TOPO_LEVEL_NVLINK, "n2", &err), &err);
    must(topo_plan_add_level(p, "gpu", "n3", TOPO_LEVEL_NVLINK, "n3", &err), &err);
}

static topo_plan *make(const topo_plan_opts *o, topo_namemap **names)
{
    topo_err err = TOPO_ERR_INIT;
    topo_namemap_opts nm = {.strip_domain = 1, .lowercase = 1};
    must(topo_namemap_create(names, &nm, &err), &err);
    topo_plan_opts opts = o ? *o : (topo_plan_opts){0};
    opts.names = *names;
    topo_plan *p = NULL;
    must(topo_plan_create(&p, &opts, &err), &err);
    return p;
}

static size_t find(const topo_plan *p, const char *name)
{
    for (size_t i = 0; i < topo_plan_node_count(p); i++)
        if (strcmp(topo_plan_node_name(p, i), name) == 0)
            return i;
    fail_msg("node %s not in the plan", name);
    return 0;
}

static void test_plan__fused_from_sources(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    topo_plan *p = make(NULL, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);

    /* Names mapped: N4.dc.example is n4, the same node as nothing else. */
    assert_int_equal(topo_plan_node_count(p), 4);
    size_t n1 = find(p, "n1"), n3 = find(p, "n3"), n4 = find(p, "n4");
    assert_true(topo_plan_node_complete(p, n1));
    assert_string_equal(topo_plan_node_value(p, n1, TOPO_LEVEL_DATACENTER), "DC-1");
    assert_string_equal(topo_plan_node_value(p, n1, TOPO_LEVEL_LEAF), "MF0-LEAF-1-MQM9700-U1");
    assert_string_equal(topo_plan_node_value(p, n3, TOPO_LEVEL_LEAF), "MF0-LEAF-2-MQM9700-U1");
    assert_string_equal(topo_plan_node_value(p, n1, TOPO_LEVEL_HOSTNAME), "n1");
    assert_string_equal(topo_plan_node_source(p, n1, TOPO_LEVEL_RACK), "netbox");
    assert_string_equal(topo_plan_node_source(p, n1, TOPO_LEVEL_SPINE), "ufm");
    assert_string_equal(topo_plan_node_source(p, n1, TOPO_LEVEL_NVLINK), "gpu");

    /* n4 has neither fabric nor GPU facts: incomplete, left out. */
    assert_false(topo_plan_node_complete(p, n4));
    assert_string_equal(topo_plan_node_reason(p, n4), "no spine, no leaf, no nvlink");
    assert_null(topo_plan_node_value(p, n4, TOPO_LEVEL_RACK));
    assert_null(topo_plan_node_value(p, n4, TOPO_LEVEL_HOSTNAME));
    assert_int_equal(topo_plan_incomplete_count(p), 1);
    assert_int_equal(topo_plan_conflict_count(p), 0);

    json_t *labels = topo_plan_labels_json(p);
    char *text = json_dumps(labels, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        text, "{\"n1\":{\"" P "datacenter\":\"DC-1\",\"" P "leaf\":\"MF0-LEAF-1-MQM9700-U1\",\"" P
              "nvlink\":\"n1\",\"" P "rack\":\"r01\",\"" P "spine\":\"S-0001\"},"
              "\"n2\":{\"" P "datacenter\":\"DC-1\",\"" P "leaf\":\"MF0-LEAF-1-MQM9700-U1\",\"" P
              "nvlink\":\"n2\",\"" P "rack\":\"r01\",\"" P "spine\":\"S-0001\"},"
              "\"n3\":{\"" P "datacenter\":\"DC-1\",\"" P "leaf\":\"MF0-LEAF-2-MQM9700-U1\",\"" P
              "nvlink\":\"n3\",\"" P "rack\":\"r02\",\"" P "spine\":\"S-0001\"},\"n4\":{}}");
    free(text);
    json_decref(labels);

    topo_buf out = TOPO_BUF_INIT(0);
    assert_int_equal(topo_plan_write_text(p, &out), 0);
    assert_string_equal(out.ptr,
                        "nodes: 4 planned, 3 labelled, 1 incomplete; conflicts: 0; unmapped "
                        "hosts: 0; hosts that are no node: 0\n"
                        "sources: datacenter: netbox 3; spine: ufm 3; leaf: ufm 3; rack: "
                        "netbox 3; nvlink: gpu 3\n"
                        "datacenter=DC-1 (3 nodes)\n"
                        "  spine=S-0001 (3 nodes)\n"
                        "    leaf=MF0-LEAF-1-MQM9700-U1 (2 nodes)\n"
                        "      rack=r01 (2 nodes)\n"
                        "        nvlink=n1 (1 node)\n"
                        "        nvlink=n2 (1 node)\n"
                        "    leaf=MF0-LEAF-2-MQM9700-U1 (1 node)\n"
                        "      rack=r02 (1 node)\n"
                        "        nvlink=n3 (1 node)\n"
                        "incomplete (1):\n"
                        "  n4: no spine, no leaf, no nvlink\n");
    topo_buf_dispose(&out);
    topo_plan_free(p);
    topo_namemap_free(names);
}

static void test_plan__conflict_and_precedence(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    /* For racks, ufm's rack groups outrank netbox. */
    const char *rack_order[] = {"ufm", "netbox"};
    topo_plan_opts o = {.precedence[TOPO_LEVEL_RACK] = rack_order,
                        .nprecedence[TOPO_LEVEL_RACK] = 2};
    topo_plan *p = make(&o, &names);
    feed(p);
    must(topo_plan_add_level(p, "ufm", "n1", TOPO_LEVEL_RACK, "r09", &err), &err);
    /* The same value from a second source is agreement, not a conflict. */
    must(topo_plan_add_level(p, "ufm", "n2", TOPO_LEVEL_RACK, "r01", &err), &err);
    must(topo_plan_build(p, &err), &err);
    size_t n1 = find(p, "n1"), n2 = find(p, "n2");
    assert_string_equal(topo_plan_node_value(p, n1, TOPO_LEVEL_RACK), "r09");
    assert_string_equal(topo_plan_node_source(p, n1, TOPO_LEVEL_RACK), "ufm");
    assert_string_equal(topo_plan_node_source(p, n2, TOPO_LEVEL_RACK), "ufm");
    assert_int_equal(topo_plan_conflict_count(p), 1);
    assert_string_equal(topo_plan_conflict(p, 0),
                        "node n1: rack: ufm says \"r09\", netbox says \"r01\"; ufm wins");
    topo_plan_free(p);
    topo_namemap_free(names);

    /* Without precedence the first source added wins. */
    p = make(NULL, &names);
    feed(p);
    must(topo_plan_add_level(p, "ufm", "n1", TOPO_LEVEL_RACK, "r09", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_string_equal(topo_plan_node_value(p, find(p, "n1"), TOPO_LEVEL_RACK), "r01");
    assert_string_equal(topo_plan_conflict(p, 0),
                        "node n1: rack: netbox says \"r01\", ufm says \"r09\"; netbox wins");
    topo_plan_free(p);
    topo_namemap_free(names);
}

static void test_plan__fallback_and_node_set(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    topo_level levels[] = {TOPO_LEVEL_DATACENTER, TOPO_LEVEL_LEAF, TOPO_LEVEL_HOSTNAME};
    topo_plan_opts o = {.levels = levels, .nlevels = 3, .incomplete = TOPO_PLAN_FALLBACK,
                        .fallback = "none"};
    topo_plan *p = make(&o, &names);
    /* The API server's nodes: n4 and n5 (n5 named by no source). */
    must(topo_plan_add_node(p, "n4", &err), &err);
    must(topo_plan_add_node(p, "n5", &err), &err);
    must(topo_plan_add_node(p, "n1", &err), &err);
    feed(p);
    /* A host with no level is planned only as a node of the node set. */
    must(topo_plan_add_host(p, "n6", &err), &err);
    /* A host name the map cannot make a node name. */
    must(topo_plan_add_level(p, "ufm", "bad_name", TOPO_LEVEL_LEAF, "x", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_node_count(p), 3);
    assert_int_equal(topo_plan_unknown_hosts(p), 3); /* n2, n3, n6 */
    assert_int_equal(topo_plan_unmapped_hosts(p), 1);
    size_t n4 = find(p, "n4"), n5 = find(p, "n5");
    assert_string_equal(topo_plan_node_reason(p, n4), "no leaf");
    assert_string_equal(topo_plan_node_value(p, n4, TOPO_LEVEL_LEAF), "none");
    assert_null(topo_plan_node_source(p, n4, TOPO_LEVEL_LEAF));
    assert_string_equal(topo_plan_node_value(p, n4, TOPO_LEVEL_DATACENTER), "DC-1");
    assert_string_equal(topo_plan_node_reason(p, n5), "no datacenter, no leaf");
    /* Levels outside the topology are not labelled. */
    assert_null(topo_plan_node_value(p, find(p, "n1"), TOPO_LEVEL_RACK));
    topo_plan_free(p);
    topo_namemap_free(names);
}

/* A host a source knows of but gives no level (a fabric host cabled to no
 * leaf) is planned and incomplete, not silently absent. */
static void test_plan__host_without_levels_reported(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    topo_plan *p = make(NULL, &names);
    feed(p);
    must(topo_plan_add_host(p, "n9.dc.example", &err), &err);
    must(topo_plan_add_host(p, "n1", &err), &err); /* known already: nothing changes */
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_node_count(p), 5);
    size_t n9 = find(p, "n9");
    assert_string_equal(topo_plan_node_reason(p, n9),
                        "no datacenter, no spine, no leaf, no rack, no nvlink");
    assert_true(topo_plan_node_complete(p, find(p, "n1")));
    topo_plan_free(p);
    topo_namemap_free(names);
}

/* A host whose name the map refuses counts once, however many sources and
 * levels name it: the count is of distinct names, not of claims. */
static void test_plan__unmapped_counts_names(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    topo_plan *p = make(NULL, &names);
    feed(p);
    topo_facts *nb = NULL;
    must(topo_facts_create(&nb, "netbox", &err), &err);
    must(topo_facts_set_level(nb, "gpu_07.dc.example", TOPO_LEVEL_DATACENTER, "DC 1", &err), &err);
    must(topo_facts_set_level(nb, "gpu_07.dc.example", TOPO_LEVEL_RACK, "r01", &err), &err);
    must(topo_plan_add_facts(p, nb, &err), &err);
    topo_facts_free(nb);
    /* The same name from the fabric, at two levels, and as a bare host. */
    must(topo_plan_add_level(p, "ufm", "gpu_07.dc.example", TOPO_LEVEL_LEAF, "L1", &err), &err);
    must(topo_plan_add_level(p, "ufm", "gpu_07.dc.example", TOPO_LEVEL_SPINE, "S1", &err), &err);
    must(topo_plan_add_host(p, "gpu_07.dc.example", &err), &err);
    /* A second refused name, once. */
    must(topo_plan_add_level(p, "ufm", "gpu_08", TOPO_LEVEL_LEAF, "L1", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_unmapped_hosts(p), 2);
    assert_int_equal(topo_plan_node_count(p), 4); /* n1..n4; no node from a refused name */
    topo_plan_free(p);
    topo_namemap_free(names);
}

static void test_plan__bad_options_named(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_plan *p = NULL;
    topo_plan_opts bad_prefix = {.prefix = "Not A Prefix/"};
    assert_int_equal(topo_plan_create(&p, &bad_prefix, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "prefix: \"Not A Prefix/\" gives the key"));
    topo_level twice[] = {TOPO_LEVEL_RACK, TOPO_LEVEL_RACK};
    topo_plan_opts rep = {.levels = twice, .nlevels = 2};
    assert_int_equal(topo_plan_create(&p, &rep, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "levels[1]: rack repeated");
    topo_plan_opts fb = {.fallback = "-x"};
    assert_int_equal(topo_plan_create(&p, &fb, &err), TOPO_EINVALID);
    assert_null(p);
    must(topo_plan_create(&p, NULL, &err), &err);
    assert_int_equal(topo_plan_add_node(p, "Bad Node", &err), TOPO_EINVALID);
    assert_int_equal(topo_plan_add_level(p, "s", "n1", TOPO_LEVEL_HOSTNAME, "x", &err),
                     TOPO_EINVALID);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_build(p, &err), TOPO_EINVALID);
    assert_int_equal(topo_plan_add_level(p, "s", "n1", TOPO_LEVEL_RACK, "x", &err), TOPO_EINVALID);
    topo_plan_free(p);
}

static char *labels_of(const topo_plan *p, size_t node)
{
    topo_kv kv[TOPO_PLAN_MAX_LABELS];
    size_t n = topo_plan_node_labels(p, node, kv);
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, kv[i].key, json_string(kv[i].value));
    char *text = json_dumps(o, JSON_COMPACT); /* in the order given */
    json_decref(o);
    return text;
}

#define TG "fabric.topograph.run/tier-"
#define TD "accelerator.topograph.run/domain"

/* topograph's vocabulary beside ours: tier-0 the leaf, tier-1 the spine,
 * the accelerator domain the NVLink domain, each with our value; closest
 * first, so no tier-1 without a tier-0; only the topology's levels. */
static void test_plan__topograph_labels(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    topo_plan_opts o = {.topograph = 1};
    topo_plan *p = make(&o, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    char *t = labels_of(p, find(p, "n1"));
    assert_string_equal(t, "{\"" P "datacenter\":\"DC-1\",\"" P "spine\":\"S-0001\",\"" P
                           "leaf\":\"MF0-LEAF-1-MQM9700-U1\",\"" P "rack\":\"r01\",\"" P
                           "nvlink\":\"n1\",\"" TG "0\":\"MF0-LEAF-1-MQM9700-U1\",\"" TG
                           "1\":\"S-0001\",\"" TD "\":\"n1\"}");
    free(t);
    /* A node left out gets none of either vocabulary. */
    topo_kv kv[TOPO_PLAN_MAX_LABELS];
    assert_int_equal(topo_plan_node_labels(p, find(p, "n4"), kv), 0);
    /* --print-labels shows them too. */
    json_t *all = topo_plan_labels_json(p);
    assert_string_equal(json_string_value(json_object_get(json_object_get(all, "n3"), TG "0")),
                        "MF0-LEAF-2-MQM9700-U1");
    json_decref(all);

    /* Owned keys: every level under the prefix (in the topology or not),
     * topograph's tiers, domain and sub-domain; never hostname. */
    assert_true(topo_plan_key_owned(p, P "leaf"));
    assert_true(topo_plan_key_owned(p, TG "0"));
    assert_true(topo_plan_key_owned(p, TG "12"));
    assert_true(topo_plan_key_owned(p, TD));
    assert_true(topo_plan_key_owned(p, "accelerator.topograph.run/sub-domain"));
    assert_false(topo_plan_key_owned(p, TG));
    assert_false(topo_plan_key_owned(p, TG "1a"));
    assert_false(topo_plan_key_owned(p, "kubernetes.io/hostname"));
    assert_false(topo_plan_key_owned(p, "nvidia.com/gpu.clique"));
    assert_false(topo_plan_key_owned(p, P "provenance"));
    topo_plan_free(p);
    topo_namemap_free(names);

    /* Without a spine level: tier-0 and the domain only. Without a leaf
     * level: no tier at all (topograph's tiers stop at the first gap). */
    topo_level no_spine[] = {TOPO_LEVEL_LEAF, TOPO_LEVEL_NVLINK, TOPO_LEVEL_HOSTNAME};
    topo_level no_leaf[] = {TOPO_LEVEL_SPINE, TOPO_LEVEL_RACK, TOPO_LEVEL_HOSTNAME};
    o.levels = no_spine;
    o.nlevels = 3;
    p = make(&o, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    t = labels_of(p, find(p, "n2"));
    assert_string_equal(t, "{\"" P "leaf\":\"MF0-LEAF-1-MQM9700-U1\",\"" P "nvlink\":\"n2\",\"" TG
                           "0\":\"MF0-LEAF-1-MQM9700-U1\",\"" TD "\":\"n2\"}");
    free(t);
    topo_plan_free(p);
    topo_namemap_free(names);
    o.levels = no_leaf;
    p = make(&o, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    t = labels_of(p, find(p, "n2"));
    assert_string_equal(t, "{\"" P "spine\":\"S-0001\",\"" P "rack\":\"r01\"}");
    free(t);
    topo_plan_free(p);
    topo_namemap_free(names);

    /* Off (the default): topograph's keys are neither given nor owned. */
    p = make(NULL, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_node_labels(p, find(p, "n1"), kv), 5);
    assert_false(topo_plan_key_owned(p, TG "0"));
    assert_false(topo_plan_key_owned(p, TD));
    assert_true(topo_plan_key_owned(p, P "nvlink"));
    topo_plan_free(p);
    topo_namemap_free(names);
}

/* The provenance annotation: the source of each owned level in the
 * topology's order, "fallback" for a fallback value, none for a node left
 * out; the key follows the prefix. */
static void test_plan__provenance(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_namemap *names = NULL;
    const char *rack_order[] = {"ufm", "netbox"};
    topo_level levels[] = {TOPO_LEVEL_DATACENTER, TOPO_LEVEL_LEAF, TOPO_LEVEL_RACK,
                           TOPO_LEVEL_HOSTNAME};
    topo_plan_opts o = {.levels = levels,
                        .nlevels = 4,
                        .incomplete = TOPO_PLAN_FALLBACK,
                        .precedence[TOPO_LEVEL_RACK] = rack_order,
                        .nprecedence[TOPO_LEVEL_RACK] = 2};
    topo_plan *p = make(&o, &names);
    feed(p);
    must(topo_plan_add_level(p, "ufm", "n2", TOPO_LEVEL_RACK, "r01", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_string_equal(topo_plan_provenance_key(p), P "provenance");
    char *v = NULL;
    must(topo_plan_node_provenance(&v, p, find(p, "n1")), &err);
    assert_string_equal(v, "{\"datacenter\":\"netbox\",\"leaf\":\"ufm\",\"rack\":\"netbox\"}");
    free(v);
    must(topo_plan_node_provenance(&v, p, find(p, "n2")), &err);
    assert_string_equal(v, "{\"datacenter\":\"netbox\",\"leaf\":\"ufm\",\"rack\":\"ufm\"}");
    free(v);
    must(topo_plan_node_provenance(&v, p, find(p, "n4")), &err);
    assert_string_equal(v, "{\"datacenter\":\"netbox\",\"leaf\":\"fallback\",\"rack\":\"netbox\"}");
    free(v);
    json_t *all = topo_plan_annotations_json(p);
    char *text = json_dumps(all, JSON_SORT_KEYS | JSON_COMPACT);
    assert_non_null(strstr(text, "\"n4\":{\"" P "provenance\":\"{\\\"datacenter\\\":"));
    free(text);
    json_decref(all);
    topo_buf out = TOPO_BUF_INIT(0);
    must(topo_plan_write_text(p, &out), &err);
    assert_non_null(strstr(out.ptr, "sources: datacenter: netbox 4; leaf: ufm 3, fallback 1; "
                                     "rack: netbox 3, ufm 1\n"));
    topo_buf_dispose(&out);
    topo_plan_free(p);
    topo_namemap_free(names);

    /* Left out: no annotation; another prefix, another key. */
    topo_plan_opts o2 = {.prefix = "example.com/topo-"};
    p = make(&o2, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    assert_string_equal(topo_plan_provenance_key(p), "example.com/topo-provenance");
    v = (char *)"x";
    must(topo_plan_node_provenance(&v, p, find(p, "n4")), &err);
    assert_null(v);
    must(topo_plan_node_provenance(&v, p, find(p, "n3")), &err);
    assert_string_equal(v, "{\"datacenter\":\"netbox\",\"spine\":\"ufm\",\"leaf\":\"ufm\","
                           "\"rack\":\"netbox\",\"nvlink\":\"gpu\"}");
    free(v);
    all = topo_plan_annotations_json(p);
    text = json_dumps(json_object_get(all, "n4"), JSON_COMPACT);
    assert_string_equal(text, "{}");
    free(text);
    json_decref(all);
    topo_plan_free(p);
    topo_namemap_free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan__fused_from_sources),
        cmocka_unit_test(test_plan__conflict_and_precedence),
        cmocka_unit_test(test_plan__fallback_and_node_set),
        cmocka_unit_test(test_plan__host_without_levels_reported),
        cmocka_unit_test(test_plan__unmapped_counts_names),
        cmocka_unit_test(test_plan__bad_options_named),
        cmocka_unit_test(test_plan__topograph_labels),
        cmocka_unit_test(test_plan__provenance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
