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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan__fused_from_sources),
        cmocka_unit_test(test_plan__conflict_and_precedence),
        cmocka_unit_test(test_plan__fallback_and_node_set),
        cmocka_unit_test(test_plan__host_without_levels_reported),
        cmocka_unit_test(test_plan__bad_options_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
