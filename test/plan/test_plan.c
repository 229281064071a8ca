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

#include "topo/netbox.h"
#include "topo/plan.h"
#include "sources/source_fixture.h"

#define P "topology.topo.io/"

static void must(int rc, const topo_err *err)
{
    if (rc != 0)
        fail_msg("%s", err->text);
}

/* The values feed gives, each name the normaliser changes or a rack
 * within its site with the FNV-1a of its raw name or key, computed
 * independently: "DC 1", "MF0;LEAF-1:MQM9700/U1", "MF0;LEAF-2:MQM9700/U1"
 * "18:datacenter:4:DC 1;r01" and its r02. */
#define DC1 "DC-1-e35ec4d8ac"
#define LEAF1 "MF0-LEAF-1-MQM9700-U1-fd5ced49b2"
#define LEAF2 "MF0-LEAF-2-MQM9700-U1-0e11936852"
#define R01 "r01-10eff23993"
#define R02 "r02-10eff33993"

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
    assert_string_equal(topo_plan_node_value(p, n1, TOPO_LEVEL_DATACENTER), DC1);
    assert_string_equal(topo_plan_node_value(p, n1, TOPO_LEVEL_LEAF), LEAF1);
    assert_string_equal(topo_plan_node_value(p, n3, TOPO_LEVEL_LEAF), LEAF2);
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
        text, "{\"n1\":{\"" P "datacenter\":\"" DC1 "\",\"" P "leaf\":\"" LEAF1 "\",\"" P
              "nvlink\":\"n1\",\"" P "rack\":\"" R01 "\",\"" P "spine\":\"S-0001\"},"
              "\"n2\":{\"" P "datacenter\":\"" DC1 "\",\"" P "leaf\":\"" LEAF1 "\",\"" P
              "nvlink\":\"n2\",\"" P "rack\":\"" R01 "\",\"" P "spine\":\"S-0001\"},"
              "\"n3\":{\"" P "datacenter\":\"" DC1 "\",\"" P "leaf\":\"" LEAF2 "\",\"" P
              "nvlink\":\"n3\",\"" P "rack\":\"" R02 "\",\"" P "spine\":\"S-0001\"},\"n4\":{}}");
    free(text);
    json_decref(labels);

    topo_buf out = TOPO_BUF_INIT(0);
    assert_int_equal(topo_plan_write_text(p, &out), 0);
    assert_string_equal(out.ptr,
                        "nodes: 4 planned, 3 labelled, 1 incomplete; conflicts: 0; unmapped "
                        "hosts: 0; hosts that are no node: 0\n"
                        "sources: datacenter: netbox 3; spine: ufm 3; leaf: ufm 3; rack: "
                        "netbox 3; nvlink: gpu 3\n"
                        "missing: spine 1, leaf 1, nvlink 1\n"
                        "datacenter=" DC1 " (3 nodes)\n"
                        "  spine=S-0001 (3 nodes)\n"
                        "    leaf=" LEAF1 " (2 nodes)\n"
                        "      rack=" R01 " (2 nodes)\n"
                        "        nvlink=n1 (1 node)\n"
                        "        nvlink=n2 (1 node)\n"
                        "    leaf=" LEAF2 " (1 node)\n"
                        "      rack=" R02 " (1 node)\n"
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
    assert_string_equal(topo_plan_node_value(p, find(p, "n1"), TOPO_LEVEL_RACK), R01);
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
    assert_string_equal(topo_plan_node_value(p, n4, TOPO_LEVEL_DATACENTER), DC1);
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
    assert_non_null(strstr(err.text, "prefix: \"Not A Prefix/\": the part before '/' must be"));
    /* A prefix that would own other owners' labels (issue 26 §2): "t" owned
     * "team", "kubernetes.io/" kubernetes.io/os, the one without '/'
     * node-role.kubernetes.io/worker. */
    static const struct {
        const char *prefix, *why;
    } refused[] = {
        {"t", "prefix: \"t\": must end in '/'"},
        {"node-role.kubernetes.io", "must end in '/'"},
        {"a//", "exactly one '/'"},
        {"a/b/", "exactly one '/'"},
        {"example.com/topo-", "exactly one '/'"},
        {"kubernetes.io/", "prefix: \"kubernetes.io/\": is under kubernetes.io"},
        {"node-role.kubernetes.io/", "is under kubernetes.io"},
        {"x.k8s.io/", "is under k8s.io"},
        {"kueue.x-k8s.io/", "is under x-k8s.io"},
        {"nvidia.com/", "is under nvidia.com"},
        {"fabric.topograph.run/", "is under topograph.run"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        topo_plan_opts o = {.prefix = refused[i].prefix};
        if (topo_plan_create(&p, &o, &err) != TOPO_EINVALID || !strstr(err.text, refused[i].why))
            fail_msg("prefix \"%s\": \"%s\" lacks \"%s\"", refused[i].prefix, err.text,
                     refused[i].why);
        assert_null(p);
    }
    topo_level twice[] = {TOPO_LEVEL_RACK, TOPO_LEVEL_RACK};
    topo_plan_opts rep = {.levels = twice, .nlevels = 2};
    assert_int_equal(topo_plan_create(&p, &rep, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "levels[1]: rack repeated");
    /* Out of order: the plan would nest datacenter > rack while a Kueue
     * Topology lists rack first; hostname only last. */
    topo_level upside[] = {TOPO_LEVEL_RACK, TOPO_LEVEL_DATACENTER, TOPO_LEVEL_HOSTNAME};
    topo_plan_opts ord = {.levels = upside, .nlevels = 3};
    assert_int_equal(topo_plan_create(&p, &ord, &err), TOPO_EINVALID);
    assert_null(p);
    assert_string_equal(err.text, "levels[1]: rack before datacenter: levels go coarsest first "
                                  "(datacenter, spine, leaf, rack, nvlink, hostname)");
    topo_level host_first[] = {TOPO_LEVEL_SPINE, TOPO_LEVEL_HOSTNAME, TOPO_LEVEL_LEAF};
    ord = (topo_plan_opts){.levels = host_first, .nlevels = 3};
    assert_int_equal(topo_plan_create(&p, &ord, &err), TOPO_EINVALID);
    assert_null(p);
    static const char host_why[] = "levels[2]: hostname before leaf: levels go coarsest first";
    assert_memory_equal(err.text, host_why, sizeof host_why - 1);
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
    assert_string_equal(t, "{\"" P "datacenter\":\"" DC1 "\",\"" P "spine\":\"S-0001\",\"" P
                           "leaf\":\"" LEAF1 "\",\"" P "rack\":\"" R01 "\",\"" P
                           "nvlink\":\"n1\",\"" TG "0\":\"" LEAF1 "\",\"" TG
                           "1\":\"S-0001\",\"" TD "\":\"n1\"}");
    free(t);
    /* A node left out gets none of either vocabulary. */
    topo_kv kv[TOPO_PLAN_MAX_LABELS];
    assert_int_equal(topo_plan_node_labels(p, find(p, "n4"), kv), 0);
    /* --print-labels shows them too. */
    json_t *all = topo_plan_labels_json(p);
    assert_string_equal(json_string_value(json_object_get(json_object_get(all, "n3"), TG "0")),
                        LEAF2);
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
    assert_false(topo_plan_key_owned(p, TG "0x"));
    assert_false(topo_plan_key_owned(p, "fabric.topograph.run/other"));
    assert_false(topo_plan_key_owned(p, "accelerator.topograph.run/other"));
    assert_false(topo_plan_key_owned(p, "topology.topo.io.evil/leaf"));
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
    assert_string_equal(t, "{\"" P "leaf\":\"" LEAF1 "\",\"" P "nvlink\":\"n2\",\"" TG
                           "0\":\"" LEAF1 "\",\"" TD "\":\"n2\"}");
    free(t);
    topo_plan_free(p);
    topo_namemap_free(names);
    o.levels = no_leaf;
    p = make(&o, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    t = labels_of(p, find(p, "n2"));
    assert_string_equal(t, "{\"" P "spine\":\"S-0001\",\"" P "rack\":\"" R01 "\"}");
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
    assert_string_equal(topo_plan_record_key(p), P "applied-labels");
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
    topo_plan_opts o2 = {.prefix = "example.com/"};
    p = make(&o2, &names);
    feed(p);
    must(topo_plan_build(p, &err), &err);
    assert_string_equal(topo_plan_provenance_key(p), "example.com/provenance");
    assert_string_equal(topo_plan_record_key(p), "example.com/applied-labels");
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

/* A node no source gives an NVLink domain is its own (HGX: NVSwitch inside
 * the node), after every source: a clique or NetBox's field always wins,
 * without a conflict. Off, such nodes miss nvlink, counted per level. */
static void test_plan__nvlink_own_node(void **state)
{
    (void)state;
    static const topo_level levels[] = {TOPO_LEVEL_LEAF, TOPO_LEVEL_NVLINK, TOPO_LEVEL_HOSTNAME};
    for (int own = 0; own <= 1; own++) {
        topo_err err = TOPO_ERR_INIT;
        topo_plan *p = NULL;
        topo_plan_opts o = {.levels = levels, .nlevels = 3, .nvlink_own_node = own};
        must(topo_plan_create(&p, &o, &err), &err);
        const char *nodes[] = {"gb-1", "gb-2", "hgx-1", "hgx-2", "hgx-3"};
        for (size_t i = 0; i < 5; i++) {
            must(topo_plan_add_node(p, nodes[i], &err), &err);
            must(topo_plan_add_level(p, "ibnetdiscover", nodes[i], TOPO_LEVEL_LEAF, "S-1", &err),
                 &err);
        }
        must(topo_plan_add_level(p, "gpu", "gb-1", TOPO_LEVEL_NVLINK, "uuid.1", &err), &err);
        must(topo_plan_add_level(p, "netbox", "gb-2", TOPO_LEVEL_NVLINK, "nvl-7", &err), &err);
        must(topo_plan_build(p, &err), &err);
        assert_int_equal(topo_plan_conflict_count(p), 0);
        assert_string_equal(topo_plan_node_value(p, 0, TOPO_LEVEL_NVLINK), "uuid.1");
        assert_string_equal(topo_plan_node_value(p, 1, TOPO_LEVEL_NVLINK), "nvl-7");
        assert_string_equal(topo_plan_node_source(p, 1, TOPO_LEVEL_NVLINK), "netbox");
        assert_int_equal(topo_plan_level_missing(p, TOPO_LEVEL_LEAF), 0);
        if (own) {
            assert_int_equal(topo_plan_incomplete_count(p), 0);
            assert_int_equal(topo_plan_level_missing(p, TOPO_LEVEL_NVLINK), 0);
            assert_string_equal(topo_plan_node_value(p, 3, TOPO_LEVEL_NVLINK), "hgx-2");
            assert_string_equal(topo_plan_node_source(p, 3, TOPO_LEVEL_NVLINK),
                                TOPO_PLAN_OWN_NODE_SOURCE);
            char *prov = NULL;
            must(topo_plan_node_provenance(&prov, p, 4), &err);
            assert_string_equal(prov, "{\"leaf\":\"ibnetdiscover\",\"nvlink\":\"node\"}");
            free(prov);
        } else {
            assert_int_equal(topo_plan_incomplete_count(p), 3);
            assert_int_equal(topo_plan_level_missing(p, TOPO_LEVEL_NVLINK), 3);
            assert_null(topo_plan_node_value(p, 3, TOPO_LEVEL_NVLINK));
            assert_string_equal(topo_plan_node_reason(p, 3), "no nvlink");
            must(topo_plan_add_note(p, "nvlink: 3 of 5 nodes have no value", &err), &err);
            topo_buf text = TOPO_BUF_INIT(0);
            must(topo_plan_write_text(p, &text), &err);
            assert_non_null(strstr(text.ptr, "\nnote: nvlink: 3 of 5 nodes have no value\n"));
            assert_non_null(strstr(text.ptr, "\nmissing: nvlink 3\n"));
            topo_buf_dispose(&text);
        }
        topo_plan_free(p);
    }
}

/* A plan with no name map (names as the sources give them) and nodes. */
static topo_plan *plain(const topo_level *levels, size_t nlevels, const char *const *nodes,
                        size_t nnodes)
{
    topo_err err = TOPO_ERR_INIT;
    topo_plan_opts o = {.levels = levels, .nlevels = nlevels};
    topo_plan *p = NULL;
    must(topo_plan_create(&p, &o, &err), &err);
    for (size_t i = 0; i < nnodes; i++)
        must(topo_plan_add_node(p, nodes[i], &err), &err);
    return p;
}

static char *plan_text(const topo_plan *p)
{
    topo_buf out = TOPO_BUF_INIT(0);
    assert_int_equal(topo_plan_write_text(p, &out), 0);
    return topo_buf_take(&out, NULL);
}

static char *all_labels(const topo_plan *p)
{
    json_t *labels = topo_plan_labels_json(p);
    char *text = json_dumps(labels, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(labels);
    return text;
}

/* By default, without nodeNames: an inventory's FQDN is the node of its
 * short name, a fabric's short name the node named with its FQDN, when
 * exactly one node is meant; levels fuse across the two spellings. */
static void test_plan__fqdn_and_short_names_match_nodes(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_level levels[] = {TOPO_LEVEL_LEAF, TOPO_LEVEL_RACK, TOPO_LEVEL_HOSTNAME};
    const char *short_nodes[] = {"gpu-111-05", "gpu-111-06"};
    topo_plan *p = plain(levels, 3, short_nodes, 2);
    must(topo_plan_add_level(p, "netbox", "gpu-111-05.cluster.example.com", TOPO_LEVEL_RACK, "R1",
                             &err),
         &err);
    must(topo_plan_add_level(p, "ufm", "gpu-111-05", TOPO_LEVEL_LEAF, "S-01", &err), &err);
    must(topo_plan_add_host(p, "gpu-111-06.cluster.example.com", &err), &err);
    must(topo_plan_build(p, &err), &err);
    char *text = all_labels(p);
    assert_string_equal(text, "{\"gpu-111-05\":{\"" P "leaf\":\"S-01\",\"" P "rack\":\"R1\"},"
                              "\"gpu-111-06\":{}}");
    free(text);
    assert_int_equal(topo_plan_unknown_hosts(p), 0);
    assert_string_equal(topo_plan_node_reason(p, find(p, "gpu-111-06")), "no leaf, no rack");
    topo_plan_free(p);

    /* Nodes named with their FQDN, a dump with short names. */
    const char *fqdn_nodes[] = {"gpu1.cluster.example.com", "gpu2.cluster.example.com"};
    p = plain(levels, 3, fqdn_nodes, 2);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu1", TOPO_LEVEL_LEAF, "S-01", &err), &err);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu2", TOPO_LEVEL_LEAF, "S-02", &err), &err);
    must(topo_plan_add_level(p, "netbox", "gpu1.cluster.example.com", TOPO_LEVEL_RACK, "R1", &err),
         &err);
    must(topo_plan_add_level(p, "netbox", "gpu2", TOPO_LEVEL_RACK, "R1", &err), &err);
    must(topo_plan_build(p, &err), &err);
    text = all_labels(p);
    assert_string_equal(text, "{\"gpu1.cluster.example.com\":{\"" P "leaf\":\"S-01\",\"" P "rack\":"
                              "\"R1\"},\"gpu2.cluster.example.com\":{\"" P "leaf\":\"S-02\",\"" P
                              "rack\":\"R1\"}}");
    free(text);
    assert_int_equal(topo_plan_unknown_hosts(p), 0);
    assert_int_equal(topo_plan_incomplete_count(p), 0);
    topo_plan_free(p);
}

/* A short name that two nodes' FQDNs share matches neither, and says so;
 * two FQDNs are two hosts even with the same short name. */
static void test_plan__ambiguous_short_name_reported(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_level levels[] = {TOPO_LEVEL_LEAF, TOPO_LEVEL_HOSTNAME};
    const char *nodes[] = {"gpu1.a.example", "gpu1.b.example", "gpu2.a.example"};
    topo_plan *p = plain(levels, 2, nodes, 3);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu1", TOPO_LEVEL_LEAF, "S-01", &err), &err);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu2.b.example", TOPO_LEVEL_LEAF, "S-01", &err),
         &err);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_incomplete_count(p), 3);
    assert_int_equal(topo_plan_unknown_hosts(p), 1); /* gpu2.b.example */
    char *text = plan_text(p);
    assert_string_equal(text, "nodes: 3 planned, 0 labelled, 3 incomplete; conflicts: 0; "
                              "unmapped hosts: 0; hosts that are no node: 1\n"
                              "missing: leaf 3\n"
                              "incomplete (3):\n"
                              "  gpu1.a.example: no leaf\n"
                              "  gpu1.b.example: no leaf\n"
                              "  gpu2.a.example: no leaf\n"
                              "ambiguous host names (1):\n"
                              "  host gpu1: its short name matches the nodes gpu1.a.example, "
                              "gpu1.b.example; matched to none\n");
    free(text);
    topo_plan_free(p);
}

/* Without a node set the names stay as the sources give them, except that
 * a short name and the one FQDN it abbreviates are one host (the FQDN); a
 * short name two FQDNs share stays apart, reported. nodeNames.stripDomain
 * still makes every name short first. */
static void test_plan__offline_short_and_fqdn_merged(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_level levels[] = {TOPO_LEVEL_LEAF, TOPO_LEVEL_RACK, TOPO_LEVEL_HOSTNAME};
    topo_plan *p = plain(levels, 3, NULL, 0);
    must(topo_plan_add_level(p, "netbox", "gpu1.cluster.example.com", TOPO_LEVEL_RACK, "R1", &err),
         &err);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu1", TOPO_LEVEL_LEAF, "S-01", &err), &err);
    must(topo_plan_add_level(p, "netbox", "gpu3.a.example", TOPO_LEVEL_RACK, "R1", &err), &err);
    must(topo_plan_add_level(p, "netbox", "gpu3.b.example", TOPO_LEVEL_RACK, "R2", &err), &err);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu3", TOPO_LEVEL_LEAF, "S-01", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_node_count(p), 4);
    size_t g1 = find(p, "gpu1.cluster.example.com");
    assert_true(topo_plan_node_complete(p, g1));
    assert_string_equal(topo_plan_node_value(p, g1, TOPO_LEVEL_LEAF), "S-01");
    assert_string_equal(topo_plan_node_reason(p, find(p, "gpu3")), "no rack");
    char *text = plan_text(p);
    assert_non_null(strstr(text, "ambiguous host names (1):\n  host gpu3: its short name matches "
                                 "the hosts gpu3.a.example, gpu3.b.example; kept apart\n"));
    free(text);
    topo_plan_free(p);

    topo_namemap *names = NULL;
    topo_namemap_opts nm = {.strip_domain = 1};
    must(topo_namemap_create(&names, &nm, &err), &err);
    topo_plan_opts o = {.levels = levels, .nlevels = 3, .names = names};
    must(topo_plan_create(&p, &o, &err), &err);
    must(topo_plan_add_level(p, "netbox", "gpu3.a.example", TOPO_LEVEL_RACK, "R1", &err), &err);
    must(topo_plan_add_level(p, "ibnetdiscover", "gpu3", TOPO_LEVEL_LEAF, "S-01", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_int_equal(topo_plan_node_count(p), 1);
    assert_true(topo_plan_node_complete(p, find(p, "gpu3")));
    topo_plan_free(p);
    topo_namemap_free(names);
}

/* Racks named alike in two sites are two domains, as are NetBox NVLink
 * fields "1" in two racks: each scoped domain gets the name with the hash
 * of its scope and name (FNV-1a of "18:datacenter:4:dc-a;R1", computed
 * independently), whatever the levels of the topology, unique names too
 * (their value must not depend on whether another site has the name);
 * switch ids and GPU cliques are never scoped. */
static void feed_two_sites(topo_plan *p, int reversed)
{
    topo_err err = TOPO_ERR_INIT;
    static const struct {
        const char *host, *dc, *rack, *nvlink;
    } hosts[] = {
        {"a1", "dc-a", "R1", "1"}, {"a2", "dc-a", "R1", "1"}, {"a3", "dc-a", "R2", "1"},
        {"b1", "dc-b", "R1", "1"}, {"b2", "dc-b", "R3", "2"},
    };
    size_t n = sizeof hosts / sizeof hosts[0];
    for (size_t k = 0; k < n; k++) {
        size_t i = reversed ? n - 1 - k : k;
        must(topo_plan_add_level(p, "netbox", hosts[i].host, TOPO_LEVEL_DATACENTER, hosts[i].dc,
                                 &err),
             &err);
        must(topo_plan_add_level(p, "netbox", hosts[i].host, TOPO_LEVEL_RACK, hosts[i].rack, &err),
             &err);
        must(topo_plan_add_level(p, "netbox", hosts[i].host, TOPO_LEVEL_NVLINK, hosts[i].nvlink,
                                 &err),
             &err);
        /* One leaf switch for all, in both sites: one domain. */
        must(topo_plan_add_level(p, "ufm", hosts[i].host, TOPO_LEVEL_LEAF, "S-01", &err), &err);
    }
}

static void test_plan__names_repeated_under_other_parents(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_level levels[] = {TOPO_LEVEL_LEAF, TOPO_LEVEL_RACK, TOPO_LEVEL_NVLINK,
                           TOPO_LEVEL_HOSTNAME};
    char *first = NULL;
    for (int reversed = 0; reversed < 2; reversed++) {
        topo_plan *p = plain(levels, 4, NULL, 0);
        feed_two_sites(p, reversed);
        must(topo_plan_build(p, &err), &err);
        char *text = all_labels(p);
        assert_string_equal(text, "{\"a1\":{\"" P "leaf\":\"S-01\",\"" P
                                  "nvlink\":\"1-5b877d65e0\",\"" P "rack\":\"R1-ddd0fa1484\"},"
                                  "\"a2\":{\"" P "leaf\":\"S-01\",\"" P
                                  "nvlink\":\"1-5b877d65e0\",\"" P "rack\":\"R1-ddd0fa1484\"},"
                                  "\"a3\":{\"" P "leaf\":\"S-01\",\"" P
                                  "nvlink\":\"1-52a0d865db\",\"" P "rack\":\"R2-ddd0fd1484\"},"
                                  "\"b1\":{\"" P "leaf\":\"S-01\",\"" P
                                  "nvlink\":\"1-879a33c2b1\",\"" P "rack\":\"R1-0c99022c92\"},"
                                  "\"b2\":{\"" P "leaf\":\"S-01\",\"" P
                                  "nvlink\":\"2-999dfec2bb\",\"" P "rack\":\"R3-0c99042c92\"}}");
        /* The same values whatever order the sources gave the hosts in. */
        if (first)
            assert_string_equal(text, first);
        free(first);
        first = text;
        topo_plan_free(p);
    }
    free(first);

    /* A GPU clique (first by precedence here) is scoped by nothing: one
     * clique across two racks stays one domain, beside NetBox's. */
    const char *order[] = {"gpu", "netbox"};
    topo_plan *p = NULL;
    topo_plan_opts o = {.levels = levels,
                        .nlevels = 4,
                        .precedence[TOPO_LEVEL_NVLINK] = order,
                        .nprecedence[TOPO_LEVEL_NVLINK] = 2};
    must(topo_plan_create(&p, &o, &err), &err);
    feed_two_sites(p, 0);
    must(topo_plan_add_level(p, "gpu", "a1", TOPO_LEVEL_NVLINK, "7b968a6d.1", &err), &err);
    must(topo_plan_add_level(p, "gpu", "a3", TOPO_LEVEL_NVLINK, "7b968a6d.1", &err), &err);
    must(topo_plan_build(p, &err), &err);
    assert_string_equal(topo_plan_node_value(p, find(p, "a1"), TOPO_LEVEL_NVLINK), "7b968a6d.1");
    assert_string_equal(topo_plan_node_value(p, find(p, "a3"), TOPO_LEVEL_NVLINK), "7b968a6d.1");
    assert_string_equal(topo_plan_node_value(p, find(p, "a2"), TOPO_LEVEL_NVLINK), "1-5b877d65e0");
    topo_plan_free(p);
}

/* NetBox pages as NetBox 4 gives them (the v4 fixtures) plus a second
 * site's rack "R01" with the same NVLink field as the first site's, and a
 * server in it: two rack domains and two NVLink domains named alike, even
 * in a topology without the datacenter level. */
static void test_plan__netbox_racks_named_alike_in_two_sites(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    const char *nb_hosts[] = {"gpu-server"};
    topo_netbox_opts no = {.host_roles = nb_hosts, .nhost_roles = 1, .nvlink_field = "nvl_domain"};
    topo_netbox *nb = NULL;
    must(topo_netbox_create(&nb, &no, &err), &err);
    static const struct {
        topo_netbox_kind kind;
        const char *file;
    } pages[] = {{TOPO_NETBOX_DEVICES, "netbox/v4-devices-page1.json"},
                 {TOPO_NETBOX_DEVICES, "netbox/v4-devices-page2.json"},
                 {TOPO_NETBOX_RACKS, "netbox/v4-racks.json"},
                 {TOPO_NETBOX_SITES, "netbox/v4-sites.json"}};
    json_t *racks = NULL, *devices = NULL;
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        size_t len = 0;
        char *text = fixture_text(pages[i].file, &len);
        json_t *page = json_loadb(text, len, 0, NULL);
        assert_non_null(page);
        must(topo_netbox_add_page_json(NULL, nb, pages[i].kind, page, pages[i].file, &err), &err);
        if (i == 1)
            devices = json_incref(page);
        if (i == 2)
            racks = json_incref(page);
        json_decref(page);
        free(text);
    }
    /* dc-east (site 2) gets a rack R01 (id 13) cloned from dc-west's, with
     * its nvl_domain, and gpu-201, dc-east's gpu-101 moved into it. */
    json_t *rack = json_deep_copy(json_array_get(json_object_get(racks, "results"), 0));
    json_object_set_new(rack, "id", json_integer(13));
    json_object_set_new(rack, "site",
                        json_pack("{s:i,s:s,s:s}", "id", 2, "name", "DC East", "slug", "dc-east"));
    json_t *dev = NULL;
    json_t *results = json_object_get(devices, "results");
    for (size_t i = 0; i < json_array_size(results); i++) {
        json_t *d = json_array_get(results, i);
        if (json_is_string(json_object_get(d, "name")) &&
            strcmp(json_string_value(json_object_get(d, "name")), "gpu-101") == 0)
            dev = json_deep_copy(d);
    }
    assert_non_null(dev);
    json_object_set_new(dev, "id", json_integer(201));
    json_object_set_new(dev, "name", json_string("gpu-201"));
    json_object_set_new(dev, "rack", json_pack("{s:i,s:s}", "id", 13, "name", "R01"));
    must(topo_netbox_add_page_json(NULL, nb, TOPO_NETBOX_RACKS, rack, "rack 13", &err), &err);
    must(topo_netbox_add_page_json(NULL, nb, TOPO_NETBOX_DEVICES, dev, "device 201", &err), &err);
    json_decref(rack);
    json_decref(dev);
    json_decref(racks);
    json_decref(devices);
    topo_facts *f = NULL;
    must(topo_facts_create(&f, "netbox", &err), &err);
    must(topo_netbox_finish(nb, f, &err), &err);
    topo_netbox_free(nb);

    topo_level levels[] = {TOPO_LEVEL_RACK, TOPO_LEVEL_NVLINK, TOPO_LEVEL_HOSTNAME};
    topo_plan *p = plain(levels, 3, NULL, 0);
    must(topo_plan_add_facts(p, f, &err), &err);
    topo_facts_free(f);
    must(topo_plan_build(p, &err), &err);
    /* FNV-1a of "21:datacenter:7:dc-west;R01" and "21:datacenter:7:dc-east;R01";
     * of "32:datacenter:7:dc-west;rack:3:R01;nvl-r01" and its dc-east twin;
     * of dc-west's "R02" and of its NVLink fields "nvl-x" and "nvl-7". */
#define WEST_R01 "b0097ac751"
#define EAST_R01 "d570879e0b"
#define WEST_NVL "ffefc04655"
#define EAST_NVL "cb94b41072"
#define WEST_R02 "b00977c751"
#define WEST_NVLX "ee79f9cc9d"
#define WEST_NVL7 "ee79c8cc9d"
    char *text = all_labels(p);
    assert_string_equal(text, "{\"gpu-001\":{\"" P "nvlink\":\"nvl-r01-" WEST_NVL "\",\"" P
                              "rack\":\"R01-" WEST_R01 "\"},\"gpu-002\":{\"" P
                              "nvlink\":\"nvl-r01-" WEST_NVL "\",\"" P "rack\":\"R01-" WEST_R01
                              "\"},\"gpu-003\":{\"" P "nvlink\":\"nvl-x-" WEST_NVLX "\",\"" P
                              "rack\":\"R02-" WEST_R02 "\"},\"gpu-004\":{\"" P
                              "nvlink\":\"nvl-7-" WEST_NVL7 "\",\"" P "rack\":\"R02-" WEST_R02
                              "\"},"
                              "\"gpu-101\":{},"
                              "\"gpu-201\":{\"" P "nvlink\":\"nvl-r01-" EAST_NVL "\",\"" P
                              "rack\":\"R01-" EAST_R01 "\"}}");
    free(text);
    topo_plan_free(p);
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
        cmocka_unit_test(test_plan__nvlink_own_node),
        cmocka_unit_test(test_plan__fqdn_and_short_names_match_nodes),
        cmocka_unit_test(test_plan__ambiguous_short_name_reported),
        cmocka_unit_test(test_plan__offline_short_and_fqdn_merged),
        cmocka_unit_test(test_plan__names_repeated_under_other_parents),
        cmocka_unit_test(test_plan__netbox_racks_named_alike_in_two_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
