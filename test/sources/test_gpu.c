/* NVLink domains from GPU Feature Discovery labels: the clique label,
 * no domain stated without one (the own-node rule is the plan's), nodes without GPUs.
 * Fixtures: fixtures/sources/gpu/gb200-nodes.json (synthetic, README), the
 * same nodes as a metadata-only list (gb200-nodes-metadata.json) and
 * fixtures/clusters/kubectl-nodes-small.json.
 *
 * Expected numbers counted with Python over gb200-nodes.json:
 * Counter(labels.get('nvidia.com/gpu.clique')) -> 3 distinct cliques on 8
 * nodes (4 + 2 + 2), 3 nodes without; 10 of 11 carry nvidia.com/gpu.count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sources/source_fixture.h"
#include "topo/gpu.h"
#include "topo/limits.h"

#define RACK_A "7b968a6d-c8aa-45e1-9e07-e1e51be99c31"
#define RACK_B "0f5c1e2a-93d4-4b7e-8a61-2c9de0b4a7f3"

static topo_facts *parse_fixture(const char *name, topo_gpu_stats *st)
{
    size_t len = 0;
    char *text = fixture_text(name, &len);
    topo_facts *f = new_facts("gpu");
    topo_err err = TOPO_ERR_INIT;
    if (topo_gpu_parse(st, f, text, len, name, &err) != 0)
        fail_msg("%s: %s", name, err.text);
    free(text);
    return f;
}

static const char *nvlink(const topo_facts *f, const char *host)
{
    size_t i = 0;
    if (topo_facts_find_host(f, host, &i) != 0)
        fail_msg("no host %s", host);
    return topo_facts_host_level(f, i, TOPO_LEVEL_NVLINK);
}

/* Only a clique states an NVLink domain: the own-node rule for the others
 * is the plan's (test_plan), after every source. */
static void test_gpu__cliques(void **state)
{
    (void)state;
    topo_gpu_stats st = {0, 0, 0};
    topo_facts *f = parse_fixture("gpu/gb200-nodes.json", &st);
    assert_int_equal(st.nodes, 11);
    assert_int_equal(st.gpu_nodes, 10);
    assert_int_equal(st.cliques, 8);
    assert_int_equal(topo_facts_host_count(f), 11);
    assert_string_equal(nvlink(f, "gb200-a-01"), RACK_A ".1");
    assert_string_equal(nvlink(f, "gb200-a-04"), RACK_A ".1");
    assert_string_equal(nvlink(f, "gb200-b-02"), RACK_B ".1");
    assert_string_equal(nvlink(f, "gb200-b-03"), RACK_B ".2");
    /* Fabric Manager not up, an HGX node, a CPU node: no clique, no domain */
    assert_null(nvlink(f, "gb200-c-01"));
    assert_null(nvlink(f, "hgx-h100-01"));
    assert_null(nvlink(f, "cpu-01"));
    topo_facts_free(f);

    memset(&st, 0, sizeof(st));
    f = parse_fixture("../clusters/kubectl-nodes-small.json", &st);
    assert_int_equal(st.nodes, 4);
    assert_int_equal(st.gpu_nodes, 4);
    assert_null(nvlink(f, "a100-r2-b"));
    topo_facts_free(f);
}

/* The same nodes whole (kind List of Node) and metadata only (kind
 * PartialObjectMetadataList of PartialObjectMetadata): the same facts. */
static void test_gpu__metadata_only(void **state)
{
    (void)state;
    topo_gpu_stats full = {0, 0, 0}, meta = {0, 0, 0};
    topo_facts *f = parse_fixture("gpu/gb200-nodes.json", &full);
    topo_facts *m = parse_fixture("gpu/gb200-nodes-metadata.json", &meta);
    assert_memory_equal(&full, &meta, sizeof(full));
    assert_int_equal(meta.nodes, 11);
    assert_int_equal(topo_facts_host_count(m), topo_facts_host_count(f));
    for (size_t i = 0; i < topo_facts_host_count(f); i++) {
        const char *host = topo_facts_host_name(f, i), *want = nvlink(f, host);
        const char *got = nvlink(m, host);
        if (want == NULL ? got != NULL : got == NULL || strcmp(want, got) != 0)
            fail_msg("%s: nvlink %s whole, %s metadata only", host, want ? want : "none",
                     got ? got : "none");
    }
    assert_string_equal(nvlink(m, "gb200-b-03"), RACK_B ".2");
    topo_facts_free(f);
    topo_facts_free(m);

    /* One object of each shape, parsed whole (not a list). */
    static const char *const one[] = {
        "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":"
        "{\"name\":\"n1\",\"labels\":{\"nvidia.com/gpu.clique\":\"u.1\"}}}",
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\",\"labels\":"
        "{\"nvidia.com/gpu.clique\":\"u.1\"}},\"status\":{\"images\":[]}}",
    };
    for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        topo_facts *g = new_facts("gpu");
        if (topo_gpu_parse(NULL, g, one[i], strlen(one[i]), "one.json", &err) != 0)
            fail_msg("%s: %s", one[i], err.text);
        assert_string_equal(nvlink(g, "n1"), "u.1");
        topo_facts_free(g);
    }
}

static void test_gpu__labels(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("gpu");
    topo_gpu_stats st = {0, 0, 0};
    const topo_kv zero[] = {{"nvidia.com/gpu.count", "0"}, {"nvidia.com/gpu.product", "X"}};
    const topo_kv present[] = {{"nvidia.com/gpu.present", "true"}};
    const topo_kv c1[] = {{"nvidia.com/gpu.clique", "u.1"}};
    const topo_kv c2[] = {{"nvidia.com/gpu.clique", "u.2"}};
    const topo_kv empty[] = {{"nvidia.com/gpu.clique", ""}};
    assert_int_equal(topo_gpu_add_labels(&st, f, "n0", zero, 2, &err), 0);
    assert_null(nvlink(f, "n0"));
    assert_int_equal(topo_gpu_add_labels(&st, f, "n1", present, 1, &err), 0);
    assert_null(nvlink(f, "n1"));
    assert_int_equal(topo_gpu_add_labels(NULL, f, "n2", c1, 1, &err), 0);
    assert_int_equal(topo_gpu_add_labels(NULL, f, "n2", c1, 1, &err), 0);
    assert_int_equal(topo_gpu_add_labels(NULL, f, "n2", c2, 1, &err), TOPO_ECONFLICT);
    assert_non_null(strstr(err.text, "nvlink is both \"u.1\" and \"u.2\""));
    assert_int_equal(topo_gpu_add_labels(NULL, f, "n3", empty, 1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "node n3: empty nvidia.com/gpu.clique label"));
    assert_int_equal(topo_gpu_add_labels(NULL, f, "", NULL, 0, &err), TOPO_EINVALID);
    assert_int_equal(st.nodes, 2);
    assert_int_equal(st.gpu_nodes, 1);
    topo_facts_free(f);
}

static void expect_error(const char *text, int code, const char *message)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("gpu");
    assert_int_equal(topo_gpu_parse(NULL, f, text, strlen(text), "t.json", &err), code);
    if (strstr(err.text, message) == NULL)
        fail_msg("for %s\nexpected \"%s\"\n     got \"%s\"", text, message, err.text);
    topo_facts_free(f);
}

static void test_gpu__errors_name_the_field(void **state)
{
    (void)state;
    expect_error("{\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\","
                 "\"labels\":{\"nvidia.com/gpu.clique\":5}}}]}",
                 TOPO_EINVALID,
                 "t.json: items[1].metadata.labels.nvidia.com/gpu.clique: expected a string, got "
                 "an integer");
    expect_error("{\"items\":[{\"metadata\":{}}]}", TOPO_EINVALID,
                 "items[0].metadata.name: required");
    expect_error("{\"items\":[{\"metadata\":{\"name\":\"\"}}]}", TOPO_EINVALID,
                 "items[0].metadata.name: empty");
    expect_error("{\"items\":[3]}", TOPO_EINVALID,
                 "items[0]: expected a Node object, got an "
                 "integer");
    expect_error("{\"items\":{}}", TOPO_EINVALID, "items: expected an array, got an object");
    expect_error("{\"kind\":\"Node\"}", TOPO_EINVALID, "metadata: required");
    expect_error("{\"metadata\":{\"name\":\"a\",\"labels\":[]}}", TOPO_EINVALID,
                 "metadata.labels: expected an object, got an array");
    expect_error("[]", TOPO_EINVALID, "expected a Node object, got an array");
    /* Kinds: a list of something else, or an item that is not a Node,
     * wherever the list's kind stands (read a record at a time or whole). */
    expect_error("{\"kind\":\"PodList\",\"items\":[]}", TOPO_EINVALID,
                 "t.json: kind: expected NodeList, List or PartialObjectMetadataList, got "
                 "\"PodList\"");
    expect_error("{\"items\":[],\"kind\":\"PodList\"}", TOPO_EINVALID,
                 "kind: expected NodeList, List or PartialObjectMetadataList, got \"PodList\"");
    expect_error("{\"kind\":\"PodList\",\"items\":{}}", TOPO_EINVALID,
                 "kind: expected NodeList, List or PartialObjectMetadataList, got \"PodList\"");
    expect_error("{\"kind\":5,\"items\":[]}", TOPO_EINVALID,
                 "kind: expected a string, got an integer");
    expect_error("{\"kind\":\"PartialObjectMetadataList\",\"items\":[{\"kind\":"
                 "\"PartialObjectMetadata\",\"metadata\":{\"name\":\"a\"}},{\"kind\":\"Pod\","
                 "\"metadata\":{\"name\":\"b\"}}]}",
                 TOPO_EINVALID,
                 "t.json: items[1].kind: expected Node or PartialObjectMetadata, got "
                 "\"Pod\"");
    expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}", TOPO_EINVALID,
                 "kind: expected Node or PartialObjectMetadata, got \"Pod\"");
    expect_error("{\"kind\":\"PartialObjectMetadataList\",\"items\":[{\"kind\":"
                 "\"PartialObjectMetadata\",\"metadata\":{}}]}",
                 TOPO_EINVALID, "items[0].metadata.name: required");
    expect_error("{\"items\":[\n\n{\"metadata\":", TOPO_EINVALID, "t.json:3:");
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("gpu");
    assert_int_equal(topo_gpu_parse(NULL, f, "{}", TOPO_MAX_K8S_RESPONSE + 1u, "big", &err),
                     TOPO_ELIMIT);
    topo_facts_free(f);
}

static void test_gpu__truncated(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = fixture_text("gpu/gb200-nodes.json", &len);
    for (size_t cut = 0; cut + 1 < len; cut += 11) {
        topo_err err = TOPO_ERR_INIT;
        topo_facts *f = new_facts("gpu");
        assert_int_equal(topo_gpu_parse(NULL, f, text, cut, "cut.json", &err), TOPO_EINVALID);
        assert_true(err.line > 0 && err.column > 0);
        topo_facts_free(f);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu__cliques),
        cmocka_unit_test(test_gpu__metadata_only),
        cmocka_unit_test(test_gpu__labels),
        cmocka_unit_test(test_gpu__errors_name_the_field),
        cmocka_unit_test(test_gpu__truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
