/* The exporters: Slurm hostlists; topology.conf in tree form byte for byte
 * against topograph's expected output over the same hierarchy, and in block
 * form against its node lists and sizes; Kueue's Topology and
 * ResourceFlavors and Volcano's HyperNodes read back as YAML. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/codec.h"
#include "topo/export.h"

static void must(int rc, const topo_err *err)
{
    if (rc != 0)
        fail_msg("%s", err->text);
}

static char *read_fixture(const char *rel)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/fixtures/%s", root ? root : ".", rel);
    char *text = NULL;
    size_t len = 0;
    topo_err err = TOPO_ERR_INIT;
    must(topo_codec_read_file(&text, &len, path, 1u << 20, &err), &err);
    return text;
}

static void hostlist_is(const char *const *names, size_t n, const char *want)
{
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_export_hostlist(&b, names, n), 0);
    assert_string_equal(b.ptr ? b.ptr : "", want);
    topo_buf_dispose(&b);
}

static void test_export__hostlist(void **state)
{
    (void)state;
    const char *srv[] = {"srv1103", "srv1101", "srv1102", "srv1104"};
    hostlist_is(srv, 4, "srv[1101-1104]");
    const char *tux[] = {"tux0", "tux1", "tux2", "tux3", "tux12"};
    hostlist_is(tux, 5, "tux[0-3,12]");
    const char *padded[] = {"n01", "n02", "n10", "n1"};
    hostlist_is(padded, 4, "n[1,10],n[01-02]");
    const char *mixed[] = {"gpu-b2", "gpu-a1", "login", "gpu-a2", "gpu-a2"};
    hostlist_is(mixed, 5, "gpu-a[1-2],gpu-b2,login");
    const char *one[] = {"switch.2.1"};
    hostlist_is(one, 1, "switch.2.1");
    hostlist_is(NULL, 0, "");
}

/* topograph's simulated OCI model: core > spine-1..6 > leaf-i-1, leaf-i-2
 * > srv<i><j>01..08. */
static topo_plan *oci_model(int with_nvlink)
{
    topo_err err = TOPO_ERR_INIT;
    topo_level levels[] = {TOPO_LEVEL_DATACENTER, TOPO_LEVEL_SPINE, TOPO_LEVEL_LEAF,
                           TOPO_LEVEL_NVLINK, TOPO_LEVEL_HOSTNAME};
    topo_plan_opts o = {.levels = levels, .nlevels = 5};
    if (!with_nvlink) {
        levels[3] = TOPO_LEVEL_HOSTNAME;
        o.nlevels = 4;
    }
    topo_plan *p = NULL;
    must(topo_plan_create(&p, &o, &err), &err);
    for (int i = 1; i <= 6; i++)
        for (int j = 1; j <= 2; j++)
            for (int k = 1; k <= 8; k++) {
                char host[32], spine[32], leaf[32], nvl[32];
                snprintf(host, sizeof host, "srv%d%d%02d", i, j, k);
                snprintf(spine, sizeof spine, "spine-%d", i);
                snprintf(leaf, sizeof leaf, "leaf-%d-%d", i, j);
                snprintf(nvl, sizeof nvl, "nvl-%d-%d", i, j);
                must(topo_plan_add_level(p, "sim", host, TOPO_LEVEL_DATACENTER, "core", &err),
                     &err);
                must(topo_plan_add_level(p, "sim", host, TOPO_LEVEL_SPINE, spine, &err), &err);
                must(topo_plan_add_level(p, "sim", host, TOPO_LEVEL_LEAF, leaf, &err), &err);
                if (with_nvlink)
                    must(topo_plan_add_level(p, "gpu", host, TOPO_LEVEL_NVLINK, nvl, &err), &err);
            }
    must(topo_plan_build(p, &err), &err);
    return p;
}

static void test_export__slurm_tree_as_topograph(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_plan *p = oci_model(0);
    topo_buf b = TOPO_BUF_INIT(0);
    must(topo_export_slurm_tree(p, &b, &err), &err);
    char *want = read_fixture("exports/topograph/expected.slinky-oci-sim-tree.topology.conf");
    assert_string_equal(b.ptr, want);
    free(want);
    topo_buf_dispose(&b);
    topo_plan_free(p);
}

/* The "Nodes=" lists of a block topology.conf, in order, and its sizes. */
static void block_lists(const char *text, char *lists, size_t size, char *sizes, size_t ssize)
{
    lists[0] = sizes[0] = '\0';
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *nodes = strstr(line, " Nodes=");
        if (strncmp(line, "BlockName=", 10) == 0 && nodes && nodes < line + len)
            snprintf(lists + strlen(lists), size - strlen(lists), "%.*s;",
                     (int)(line + len - nodes - 7), nodes + 7);
        if (strncmp(line, "BlockSizes=", 11) == 0)
            snprintf(sizes, ssize, "%.*s", (int)(len - 11), line + 11);
        line = end ? end + 1 : NULL;
    }
}

static void test_export__slurm_block(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_plan *p = oci_model(1);
    int sizes[] = {8, 16, 32};
    topo_export_block_opts o = {.sizes = sizes, .nsizes = 3};
    topo_buf b = TOPO_BUF_INIT(0);
    must(topo_export_slurm_block(p, &o, &b, &err), &err);
    char *want = read_fixture("exports/topograph/expected.slinky-dra-block.topology.conf");
    char got_lists[4096], want_lists[4096], got_sizes[64], want_sizes[64];
    block_lists(b.ptr, got_lists, sizeof got_lists, got_sizes, sizeof got_sizes);
    block_lists(want, want_lists, sizeof want_lists, want_sizes, sizeof want_sizes);
    assert_string_equal(got_lists, want_lists);
    assert_string_equal(got_sizes, want_sizes);
    assert_non_null(strstr(b.ptr, "# block.1=nvl-1-1\nBlockName=block.1 Nodes=srv[1101-1108]\n"));
    free(want);

    /* Inferred: smallest block 8, 12 blocks: 8, 16, 32, 64. */
    topo_buf_clear(&b);
    must(topo_export_slurm_block(p, NULL, &b, &err), &err);
    assert_non_null(strstr(b.ptr, "\nBlockSizes=8,16,32,64\n"));
    /* By leaf: the same groups here. */
    topo_buf_clear(&b);
    topo_export_block_opts leaf = {.by_leaf = 1};
    must(topo_export_slurm_block(p, &leaf, &b, &err), &err);
    assert_non_null(strstr(b.ptr, "# block.12=leaf-6-2\nBlockName=block.12 Nodes=srv[6201-6208]\n"));

    int bad[] = {8, 24};
    topo_export_block_opts o2 = {.sizes = bad, .nsizes = 2};
    assert_int_equal(topo_export_slurm_block(p, &o2, &b, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "blockSizes[1]: 24 is not a power-of-two multiple of 8");
    topo_buf_dispose(&b);
    topo_plan_free(p);

    /* No NVLink level: no blocks to write. */
    p = oci_model(0);
    topo_buf c = TOPO_BUF_INIT(0);
    assert_int_equal(topo_export_slurm_block(p, NULL, &c, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "no nvlink level"));
    topo_buf_dispose(&c);
    topo_plan_free(p);
}

/* A file that other tools read line by line ends in exactly one newline. */
static void ends_in_one_newline(const topo_buf *b)
{
    assert_true(b->len >= 2);
    assert_int_equal(b->ptr[b->len - 1], '\n');
    assert_int_not_equal(b->ptr[b->len - 2], '\n');
}

static json_t *yaml_doc(const char *text, size_t index)
{
    /* Documents are separated by "---\n" lines. */
    const char *start = text;
    for (size_t i = 0; i < index; i++) {
        start = strstr(start, "---\n");
        assert_non_null(start);
        start += 4;
    }
    const char *end = strstr(start, "---\n");
    size_t len = end ? (size_t)(end - start) : strlen(start);
    json_t *doc = NULL;
    topo_err err = TOPO_ERR_INIT;
    must(topo_codec_yaml_parse(&doc, start, len, "export", &err), &err);
    return doc;
}

static void test_export__kueue(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_plan *p = oci_model(0);
    topo_buf b = TOPO_BUF_INIT(0);
    must(topo_export_kueue(p, NULL, &b, &err), &err);
    json_t *topology = yaml_doc(b.ptr, 0), *flavor = yaml_doc(b.ptr, 1);
    char *t = json_dumps(topology, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(t, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\","
                           "\"metadata\":{\"name\":\"topo\"},\"spec\":{\"levels\":["
                           "{\"nodeLabel\":\"topology.topo.io/datacenter\"},"
                           "{\"nodeLabel\":\"topology.topo.io/spine\"},"
                           "{\"nodeLabel\":\"topology.topo.io/leaf\"},"
                           "{\"nodeLabel\":\"kubernetes.io/hostname\"}]}}");
    free(t);
    t = json_dumps(flavor, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(t, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
                           "\"metadata\":{\"name\":\"topo-core\"},\"spec\":{\"nodeLabels\":"
                           "{\"topology.topo.io/datacenter\":\"core\"},\"topologyName\":\"topo\"}}");
    free(t);
    json_decref(topology);
    json_decref(flavor);
    assert_null(strstr(b.ptr + 4, "---\n---"));
    ends_in_one_newline(&b);

    /* Given labels: one flavor named like the topology, v1beta1 served. */
    topo_kv gpu = {"nvidia.com/gpu.present", "true"};
    topo_export_kueue_opts o = {.topology_name = "gpus", .api_version = "kueue.x-k8s.io/v1beta1",
                                .flavor_labels = &gpu, .nflavor_labels = 1};
    topo_buf_clear(&b);
    must(topo_export_kueue(p, &o, &b, &err), &err);
    flavor = yaml_doc(b.ptr, 1);
    assert_string_equal(json_string_value(json_object_get(flavor, "apiVersion")),
                        "kueue.x-k8s.io/v1beta1");
    /* "true" stays a string through YAML. */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(flavor, "spec"), "nodeLabels"),
                            "nvidia.com/gpu.present")),
                        "true");
    json_decref(flavor);
    ends_in_one_newline(&b);

    topo_export_kueue_opts bad = {.api_version = "kueue.x-k8s.io/v1alpha1"};
    assert_int_equal(topo_export_kueue(p, &bad, &b, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "apiVersion \"kueue.x-k8s.io/v1alpha1\""));
    topo_buf_dispose(&b);
    topo_plan_free(p);
}

/* A topology without a datacenter level (the spine at the top): the
 * flavor's nodeLabels must be given (Kueue requires at least one when the
 * flavor names a topology), and then one flavor selects by them. */
static void test_export__kueue_without_datacenter(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_level levels[] = {TOPO_LEVEL_SPINE, TOPO_LEVEL_LEAF, TOPO_LEVEL_HOSTNAME};
    topo_plan_opts po = {.levels = levels, .nlevels = 3};
    topo_plan *p = NULL;
    must(topo_plan_create(&p, &po, &err), &err);
    must(topo_plan_add_level(p, "ufm", "n1", TOPO_LEVEL_SPINE, "S-1", &err), &err);
    must(topo_plan_add_level(p, "ufm", "n1", TOPO_LEVEL_LEAF, "S-2", &err), &err);
    must(topo_plan_build(p, &err), &err);
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_export_kueue(p, NULL, &b, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "a ResourceFlavor needs nodeLabels"));
    topo_buf_clear(&b);
    topo_kv labels[] = {{"nvidia.com/gpu.present", "true"}, {"node-pool", "h100"}};
    topo_export_kueue_opts o = {.topology_name = "h100",
                                .flavor_labels = labels,
                                .nflavor_labels = 2};
    must(topo_export_kueue(p, &o, &b, &err), &err);
    ends_in_one_newline(&b);
    json_t *flavor = yaml_doc(b.ptr, 1);
    char *t = json_dumps(flavor, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(t, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
                           "\"metadata\":{\"name\":\"h100\"},\"spec\":{\"nodeLabels\":"
                           "{\"node-pool\":\"h100\",\"nvidia.com/gpu.present\":\"true\"},"
                           "\"topologyName\":\"h100\"}}");
    free(t);
    json_decref(flavor);
    assert_null(strstr(b.ptr, "---\n---"));
    topo_kv bad = {"node pool", "x"};
    o.flavor_labels = &bad;
    o.nflavor_labels = 1;
    assert_int_equal(topo_export_kueue(p, &o, &b, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "flavor label node pool=x"));
    topo_buf_dispose(&b);
    topo_plan_free(p);
}

static void test_export__volcano(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_plan *p = oci_model(0);
    topo_buf b = TOPO_BUF_INIT(0);
    must(topo_export_volcano(p, &b, &err), &err);
    /* 12 leaves (tier 1), 6 spines (tier 2), 1 datacenter (tier 3). */
    size_t docs = 1;
    for (const char *s = b.ptr; (s = strstr(s, "---\n")) != NULL; s += 4)
        docs++;
    assert_int_equal(docs, 19);
    json_t *leaf = yaml_doc(b.ptr, 0), *top = yaml_doc(b.ptr, 18);
    json_t *spec = json_object_get(leaf, "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "tier")), 1);
    assert_string_equal(json_string_value(json_object_get(spec, "tierName")), "leaf");
    json_t *members = json_object_get(spec, "members");
    assert_int_equal(json_array_size(members), 8);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(json_array_get(members, 0), "selector"), "exactMatch"),
            "name")),
        "srv1101");
    spec = json_object_get(top, "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "tier")), 3);
    assert_int_equal(json_array_size(json_object_get(spec, "members")), 6);
    const char *name = json_string_value(json_object_get(json_object_get(top, "metadata"), "name"));
    assert_int_equal(strncmp(name, "datacenter-", 11), 0);
    assert_int_equal(strlen(name), 21);
    json_decref(leaf);
    json_decref(top);
    ends_in_one_newline(&b);
    topo_buf_dispose(&b);
    topo_plan_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export__hostlist),
        cmocka_unit_test(test_export__slurm_tree_as_topograph),
        cmocka_unit_test(test_export__slurm_block),
        cmocka_unit_test(test_export__kueue),
        cmocka_unit_test(test_export__kueue_without_datacenter),
        cmocka_unit_test(test_export__volcano),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
