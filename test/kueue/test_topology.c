/* A Kueue Topology's levels (topo/kueue_topology.h): the levels of a
 * Topology as the API server sends it, coarsest first; every way a
 * Topology can be wrong names the Topology and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/kueue_topology.h"
#include "topo/limits.h"

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (v == NULL)
        fail_msg("bad test JSON %s: %s", text, jerr.text);
    return v;
}

static void test_topology__levels(void **state)
{
    (void)state;
    /* kubectl get topologies.kueue.x-k8s.io default -o json, trimmed. */
    json_t *t = parse("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Topology\","
                      " \"metadata\": {\"name\": \"default\", \"resourceVersion\": \"7\"},"
                      " \"spec\": {\"levels\": [{\"nodeLabel\": \"topology.topo.io/spine\"},"
                      " {\"nodeLabel\": \"topology.topo.io/rack\"},"
                      " {\"nodeLabel\": \"kubernetes.io/hostname\"}]}}");
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    const char **levels = NULL;
    size_t n = 0;
    assert_non_null(pool);
    assert_string_equal(topo_kueue_topology_name(t), "default");
    assert_int_equal(topo_kueue_topology_levels(&levels, &n, t, pool, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(levels[0], "topology.topo.io/spine");
    assert_string_equal(levels[1], "topology.topo.io/rack");
    assert_string_equal(levels[2], "kubernetes.io/hostname");
    json_decref(t);
    topo_pool_free(pool);
}

static void test_topology__invalid(void **state)
{
    (void)state;
    char many[2048] = "{\"metadata\": {\"name\": \"big\"}, \"spec\": {\"levels\": [";
    for (int i = 0; i <= TOPO_MAX_LEVELS; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s{\"nodeLabel\": \"l%d\"}",
                 i ? ", " : "", i);
    strcat(many, "]}}");
    const struct {
        const char *json;
        const char *message; /* a part of err.text */
    } rows[] = {
        {"{\"metadata\": {\"name\": \"t\"}}", "Topology \"t\": spec.levels: required"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": null}}",
         "Topology \"t\": spec.levels: required"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": \"a,b\"}}",
         "Topology \"t\": spec.levels: expected a list, got a string"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": []}}",
         "Topology \"t\": spec.levels: 0 levels (expected 1..16)"},
        {many, "Topology \"big\": spec.levels: 17 levels (expected 1..16)"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": [\"rack\"]}}",
         "Topology \"t\": spec.levels[0]: expected an object with nodeLabel, got a string"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": [{\"nodeLabel\": \"a\"}, "
         "{\"label\": \"b\"}]}}",
         "Topology \"t\": spec.levels[1].nodeLabel: required"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": [{\"nodeLabel\": 3}]}}",
         "Topology \"t\": spec.levels[0].nodeLabel: expected a string"},
        /* Not a label key: the CRD's pattern, and Kubernetes' message. */
        {"{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"levels\": [{\"nodeLabel\": \"a\"}, "
         "{\"nodeLabel\": \"rack x\"}]}}",
         "Topology \"gpu\": spec.levels[1].nodeLabel: invalid label key \"rack x\""},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": [{\"nodeLabel\": \"a\"}, "
         "{\"nodeLabel\": \"a\"}]}}",
         "Topology \"t\": spec.levels[1].nodeLabel: duplicate level a"},
        {"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"levels\": "
         "[{\"nodeLabel\": \"kubernetes.io/hostname\"}, {\"nodeLabel\": \"rack\"}]}}",
         "spec.levels[0].nodeLabel: kubernetes.io/hostname must be the last level"},
        {"[]", "Topology: expected an object, got an array"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *t = parse(rows[i].json);
        topo_pool *pool = topo_pool_create();
        topo_err err = TOPO_ERR_INIT;
        const char **levels = (const char **)1;
        size_t n = 7;
        assert_non_null(pool);
        assert_int_equal(topo_kueue_topology_levels(&levels, &n, t, pool, &err), TOPO_EINVALID);
        if (strstr(err.text, rows[i].message) == NULL)
            fail_msg("row %zu: want \"%s\" in \"%s\"", i, rows[i].message, err.text);
        assert_null(levels);
        assert_int_equal(n, 0);
        json_decref(t);
        topo_pool_free(pool);
    }
}

/* A NUL inside a key (JSON \u0000, which jansson takes with
 * JSON_ALLOW_NUL) must not be cut into the valid key before it. */
static void test_topology__nul_in_label(void **state)
{
    (void)state;
    json_t *t = json_pack("{s:{s:s}, s:{s:[{s:s%}]}}", "metadata", "name", "t", "spec", "levels",
                          "nodeLabel", "rack\0evil", (size_t)9);
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    const char **levels = NULL;
    size_t n = 0;
    assert_non_null(t);
    assert_int_equal(topo_kueue_topology_levels(&levels, &n, t, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "spec.levels[0].nodeLabel: contains a NUL"));
    json_decref(t);
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topology__levels),
        cmocka_unit_test(test_topology__invalid),
        cmocka_unit_test(test_topology__nul_in_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
