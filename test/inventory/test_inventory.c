/* Tests for lib/inventory: kubectl node and pod lists, fixture YAML, effective
 * pod requests, PodSet manifests, and the snapshot bridge. Fixture files are
 * read from $TOPO_SOURCE_DIR/fixtures. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/podreq.h"
#include "topo/codec.h"
#include "topo/inventory.h"
#include "topo/limits.h"

static char fixture_buf[1024];

static const char *fixture(const char *rel)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(fixture_buf, sizeof(fixture_buf), "%s/fixtures/%s", root ? root : ".", rel);
    return fixture_buf;
}

static int64_t amount(const topo_resource *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            return r[i].amount;
    return -1;
}

static const char *label(const topo_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static const topo_node_spec *node_named(const topo_inventory *inv, const char *name)
{
    int32_t i = topo_inventory_find_node(inv, name);
    if (i < 0)
        fail_msg("no node %s", name);
    return topo_inventory_node(inv, (size_t)i);
}

static const topo_pod_usage *pod_named(const topo_inventory *inv, const char *name)
{
    for (size_t i = 0; i < topo_inventory_pod_count(inv); i++)
        if (strcmp(topo_inventory_pod(inv, i)->name, name) == 0)
            return topo_inventory_pod(inv, i);
    fail_msg("no pod %s", name);
    return NULL;
}

#define GI (1024LL * 1024 * 1024)
#define MI (1024LL * 1024)

/* --- kubectl ---------------------------------------------------------------------- */

static void test_inventory__kubectl_nodes(void **state)
{
    (void)state;
    topo_inventory *inv = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_nodes_file(inv, fixture("clusters/kubectl-nodes-small.json"), &err))
        fail_msg("%s", err.text);
    assert_int_equal(topo_inventory_node_count(inv), 4);

    const topo_node_spec *n = node_named(inv, "a100-r1-a");
    assert_true(n->ready);
    assert_false(n->unschedulable);
    assert_int_equal(n->ntaints, 0);
    assert_string_equal(label(n, "topology.topo.io/rack"), "rack-1");
    assert_string_equal(label(n, "kubernetes.io/hostname"), "a100-r1-a");
    assert_int_equal(amount(n->allocatable, n->nallocatable, "cpu"), 95690);
    assert_int_equal(amount(n->allocatable, n->nallocatable, "memory"), 1140544300LL * 1024);
    assert_int_equal(amount(n->allocatable, n->nallocatable, "nvidia.com/gpu"), 8);
    assert_int_equal(amount(n->allocatable, n->nallocatable, "pods"), 110);
    assert_int_equal(amount(n->allocatable, n->nallocatable, "hugepages-1Gi"), 0);

    n = node_named(inv, "a100-r1-b");
    assert_int_equal(n->ntaints, 1);
    assert_string_equal(n->taints[0].key, "nvidia.com/gpu");
    assert_string_equal(n->taints[0].value, "present");
    assert_string_equal(n->taints[0].effect, "NoSchedule");

    n = node_named(inv, "a100-r2-b");
    assert_false(n->ready); /* Ready: Unknown */
    assert_int_equal(n->ntaints, 2);
    assert_null(n->taints[0].value);

    assert_int_equal(topo_inventory_find_node(inv, "nope"), -1);
    topo_inventory_free(inv);
}

static void test_inventory__kubectl_pods(void **state)
{
    (void)state;
    topo_inventory *inv = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory_stats st;
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_pods_file(inv, fixture("clusters/kubectl-pods-small.json"), &err))
        fail_msg("%s", err.text);
    topo_inventory_get_stats(inv, &st);
    assert_int_equal(st.pods_seen, 8);
    assert_int_equal(st.pods_unbound, 1);
    assert_int_equal(st.pods_terminal, 2);
    assert_int_equal(topo_inventory_pod_count(inv), 4);
    assert_int_equal(topo_inventory_tas_pod_count(inv), 1);
    assert_string_equal(topo_inventory_tas_pod(inv, 0)->name, "tas-worker-0");
    assert_true(topo_inventory_tas_pod(inv, 0)->tas);

    /* Sidecar then init container: max(8 + 0.5, 16 + 0.5) cpu. */
    const topo_pod_usage *p = pod_named(inv, "train-0");
    assert_string_equal(p->namespace_name, "ml");
    assert_string_equal(p->node, "a100-r1-a");
    assert_int_equal(p->nrequests, 3);
    assert_string_equal(p->requests[0].name, "cpu"); /* sorted */
    assert_int_equal(amount(p->requests, p->nrequests, "cpu"), 16500);
    assert_int_equal(amount(p->requests, p->nrequests, "memory"), 64 * GI + 512 * MI);
    assert_int_equal(amount(p->requests, p->nrequests, "nvidia.com/gpu"), 4);

    /* Limits only, plus overhead. */
    p = pod_named(inv, "infer-0");
    assert_int_equal(amount(p->requests, p->nrequests, "cpu"), 4250);
    assert_int_equal(amount(p->requests, p->nrequests, "memory"), 32 * GI + 120 * MI);
    assert_int_equal(amount(p->requests, p->nrequests, "nvidia.com/gpu"), 2);

    p = pod_named(inv, "nvidia-device-plugin-7xk2p");
    assert_int_equal(amount(p->requests, p->nrequests, "cpu"), 50);
    assert_int_equal(amount(p->requests, p->nrequests, "memory"), 64 * MI);

    p = pod_named(inv, "ghost-0"); /* unknown node: kept, ignored by the snapshot */
    assert_string_equal(p->node, "a100-gone");
    topo_inventory_free(inv);
}

/* --- effective requests: table -------------------------------------------------------- */

typedef struct req_case {
    const char *spec; /* YAML PodSpec */
    const char *expected; /* "cpu=..,memory=.." sorted, or an error message */
} req_case;

static const req_case req_cases[] = {
    {"{containers: [{resources: {requests: {cpu: 1}}}, {resources: {requests: {cpu: 500m, memory: 1Gi}}}]}",
     "cpu=1500,memory=1073741824"},
    {"{containers: [{resources: {limits: {cpu: 2, memory: 1Gi}, requests: {cpu: 1}}}]}",
     "cpu=1000,memory=1073741824"},
    /* init container larger than the app containers */
    {"{initContainers: [{resources: {requests: {cpu: 4}}}], containers: [{resources: {requests: {cpu: 1}}}]}",
     "cpu=4000"},
    /* a sidecar after the init container does not run beside it */
    {"{initContainers: [{resources: {requests: {cpu: 4}}}, {restartPolicy: Always, resources: {requests: {cpu: 1}}}],"
     " containers: [{resources: {requests: {cpu: 2}}}]}",
     "cpu=4000"},
    /* a sidecar before it does */
    {"{initContainers: [{restartPolicy: Always, resources: {requests: {cpu: 1}}}, {resources: {requests: {cpu: 4}}}],"
     " containers: [{resources: {requests: {cpu: 2}}}]}",
     "cpu=5000"},
    /* sidecars add to the app containers */
    {"{initContainers: [{restartPolicy: Always, resources: {requests: {cpu: 1, nvidia.com/gpu: 0}}}],"
     " containers: [{resources: {requests: {cpu: 2, nvidia.com/gpu: 8}}}]}",
     "cpu=3000,nvidia.com/gpu=8"},
    /* sidecars, an init container between them, resources they do not share */
    {"{initContainers: [{restartPolicy: Always, resources: {requests: {cpu: 1, memory: 1Gi}}},"
     " {resources: {requests: {cpu: 1}}}, {restartPolicy: Always, resources: {requests: {memory: 2Gi}}},"
     " {resources: {requests: {memory: 1Gi, example.com/x: 2}}}],"
     " containers: [{resources: {requests: {cpu: 1}}}]}",
     "cpu=2000,example.com/x=2,memory=4294967296"},
    {"{containers: [{resources: {requests: {cpu: 1}}}], overhead: {cpu: 100m, memory: 10Mi}}",
     "cpu=1100,memory=10485760"},
    /* pod-level resources replace cpu/memory, not extended resources */
    {"{resources: {requests: {cpu: 8, memory: 2Gi}}, containers: [{resources: {requests: {cpu: 1, nvidia.com/gpu: 2}}}]}",
     "cpu=8000,memory=2147483648,nvidia.com/gpu=2"},
    {"{containers: [{name: c}]}", ""},
    {"{}", ""},
    {"{containers: [{resources: {requests: {cpu: lots}}}]}",
     "spec.containers[0].resources.requests.cpu: invalid quantity \"lots\""},
    {"{initContainers: [{}, {resources: {limits: {memory: 1Qi}}}]}",
     "spec.initContainers[1].resources.limits.memory: invalid quantity \"1Qi\""},
    {"{containers: {}}", "spec.containers: expected an array, got an object"},
    {"{containers: [3]}", "spec.containers[0]: expected an object, got an integer"},
    {"{containers: [{restartPolicy: 3}], initContainers: [{restartPolicy: 3}]}",
     "spec.initContainers[0].restartPolicy: expected a string, got an integer"},
    {"{overhead: [1]}", "spec.overhead: expected an object, got an array"},
};

static void test_inventory__pod_requests(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    for (size_t i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
        const req_case *c = &req_cases[i];
        json_t *spec = NULL;
        topo_err err = TOPO_ERR_INIT;
        topo_resource *r = NULL;
        size_t n = 0;
        assert_int_equal(topo_codec_yaml_parse(&spec, c->spec, strlen(c->spec), "t", &err), 0);
        int rc = topo_pod_requests(&r, &n, spec, "spec", pool, &err);
        char got[256] = "";
        if (rc == 0) {
            for (size_t k = 0; k < n; k++) {
                char one[96];
                snprintf(one, sizeof(one), "%s%s=%lld", k ? "," : "", r[k].name,
                         (long long)r[k].amount);
                strcat(got, one);
            }
        } else {
            snprintf(got, sizeof(got), "%s", err.text);
        }
        if (strcmp(got, c->expected) != 0)
            fail_msg("case %zu (%s): got \"%s\", want \"%s\"", i, c->spec, got, c->expected);
        json_decref(spec);
    }
    topo_pool_free(pool);
}

/* 4,000 sidecars, each naming a resource of its own, then an init
 * container: linear work (it was cubic: 45 s for such a pod in the
 * webhook), and the values Kubernetes computes. */
static void test_inventory__pod_requests_many_sidecars(void **state)
{
    (void)state;
    enum { N = 4000 };
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    json_t *inits = json_array();
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "example.com/r%d", i);
        json_array_append_new(inits, json_pack("{s:s, s:{s:{s:s, s:s}}}", "restartPolicy",
                                               "Always", "resources", "requests", "cpu", "10m",
                                               name, "1"));
    }
    json_array_append_new(inits, json_pack("{s:{s:{s:s}}}", "resources", "requests", "cpu", "4"));
    json_t *spec = json_pack("{s:o, s:[{s:{s:{s:s}}}]}", "initContainers", inits, "containers",
                             "resources", "requests", "cpu", "1");
    topo_resource *r = NULL;
    size_t n = 0;
    assert_int_equal(topo_pod_requests(&r, &n, spec, "spec", pool, &err), 0);
    assert_int_equal(n, N + 1);
    /* cpu: the last init container (4) beside every sidecar (40) is more
     * than the app container (1) beside them */
    assert_string_equal(r[0].name, "cpu");
    assert_int_equal(r[0].amount, 44000);
    for (size_t i = 1; i < n; i++)
        assert_int_equal(r[i].amount, 1);
    json_decref(spec);
    topo_pool_free(pool);
}

/* --- fixtures --------------------------------------------------------------------------- */

static void test_inventory__fixture_hgx(void **state)
{
    (void)state;
    topo_inventory *inv = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory_stats st;
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_nodes_file(inv, fixture("clusters/hgx-h100.yaml"), &err))
        fail_msg("%s", err.text);
    assert_int_equal(topo_inventory_node_count(inv), 32);
    const topo_node_spec *n = node_named(inv, "h100-r05-n3");
    assert_string_equal(label(n, "topology.topo.io/datacenter"), "dc1");
    assert_string_equal(label(n, "topology.topo.io/spine"), "spine-b");
    assert_string_equal(label(n, "topology.topo.io/leaf"), "leaf-3");
    assert_string_equal(label(n, "topology.topo.io/rack"), "rack-05");
    assert_string_equal(label(n, "topology.topo.io/nvlink"), "h100-r05-n3");
    assert_string_equal(label(n, "kubernetes.io/hostname"), "h100-r05-n3");
    assert_string_equal(label(n, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
    assert_int_equal(amount(n->allocatable, n->nallocatable, "cpu"), 224000);
    assert_int_equal(amount(n->allocatable, n->nallocatable, "memory"), 2048 * GI);
    assert_int_equal(amount(n->allocatable, n->nallocatable, "nvidia.com/gpu"), 8);
    assert_true(n->ready);
    topo_inventory_get_stats(inv, &st);
    assert_int_equal(st.pods_seen, 11);
    assert_int_equal(st.pods_terminal, 1);
    assert_int_equal(st.pods_unbound, 1);
    assert_int_equal(topo_inventory_pod_count(inv), 8);
    assert_int_equal(topo_inventory_tas_pod_count(inv), 1);
    const topo_pod_usage *p = pod_named(inv, "vllm-70b-0");
    assert_int_equal(amount(p->requests, p->nrequests, "nvidia.com/gpu"), 4);
    assert_int_equal(amount(p->requests, p->nrequests, "memory"), 512 * GI);
    topo_inventory_free(inv);
}

static void test_inventory__fixture_gb200_and_fragmented(void **state)
{
    (void)state;
    topo_inventory *inv = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_nodes_file(inv, fixture("clusters/gb200-nvl72.yaml"), &err))
        fail_msg("%s", err.text);
    assert_int_equal(topo_inventory_node_count(inv), 72);
    const topo_node_spec *n = node_named(inv, "gb200-r3-n07");
    assert_string_equal(label(n, "nvidia.com/gpu.clique"),
                        "9b7d3e5f-1a2c-4d8b-8e6a-7c0f2b9d4e16.32766");
    assert_string_equal(label(n, "topology.topo.io/nvlink"),
                        "9b7d3e5f-1a2c-4d8b-8e6a-7c0f2b9d4e16.32766");
    assert_int_equal(amount(n->allocatable, n->nallocatable, "nvidia.com/gpu"), 4);
    assert_false(node_named(inv, "gb200-r4-n18")->ready);
    assert_int_equal(topo_inventory_pod_count(inv), 13);

    /* A second file adds to the same inventory. */
    if (topo_inventory_load_nodes_file(inv, fixture("clusters/fragmented.yaml"), &err))
        fail_msg("%s", err.text);
    assert_int_equal(topo_inventory_node_count(inv), 80);
    assert_false(node_named(inv, "frag-r1-n3")->ready);
    assert_true(node_named(inv, "frag-r2-n4")->unschedulable);
    assert_int_equal(node_named(inv, "frag-r2-n2")->ntaints, 1);
    assert_int_equal(topo_inventory_pod_count(inv), 13 + 8);

    /* Loading the same file again: every name is a duplicate, nothing changes. */
    assert_int_equal(topo_inventory_load_nodes_file(inv, fixture("clusters/fragmented.yaml"), &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "nodes[0].name: duplicate node name \"frag-r1-n1\""));
    assert_int_equal(topo_inventory_node_count(inv), 80);
    assert_int_equal(topo_inventory_pod_count(inv), 21);
    topo_inventory_free(inv);
}

/* --- malformed input: table --------------------------------------------------------------- */

typedef struct bad_case {
    int pods; /* load as pods (1) or nodes (0) */
    const char *text;
    const char *message; /* exact */
    int line, column;    /* 0: not a syntax error */
} bad_case;

#define READY "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]"

static const bad_case bad_cases[] = {
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\"},\"status\":{\"allocatable\":{\"cpu\":\"1\"}}},\n"
        "{\"metadata\":{\"name\":\"b\"},\"status\":{\"allocatable\":{\"cpu\":\"abc\"}}}]}",
     "t.src: items[1].status.allocatable.cpu: invalid quantity \"abc\"", 0, 0},
    {0, "{\"kind\":\"NodeList\",\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"a\"}}]}",
     "t.src: items[1].metadata.name: duplicate node name \"a\"", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[\n  {\"metadata\":{\"name\":\"a\"},}\n]}",
     "t.src:2:28: string or '}' expected near '}'", 2, 28},
    {0, "{\"kind\":\"PodList\",\"items\":[]}", "t.src: kind: expected NodeList, List or Node, got \"PodList\"", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}]}",
     "t.src: items[0].kind: expected Node, got \"Pod\"", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{}}]}", "t.src: items[0].metadata.name: required", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"\"}}]}",
     "t.src: items[0].metadata.name: must not be empty", 0, 0},
    {0, "{\"kind\":\"List\"}", "t.src: items: required", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":{}}", "t.src: items: expected an array, got an object", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":1}}}]}",
     "t.src: items[0].metadata.labels.x: expected a string, got an integer (quote the value)", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":[{\"type\":\"Ready\"}]}}]}",
     "t.src: items[0].status.conditions[0].status: required", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"unschedulable\":\"yes\"}," READY "}]}",
     "t.src: items[0].spec.unschedulable: expected true or false, got a string", 0, 0},
    {0, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":\"Maybe\"}]}}]}",
     "t.src: items[0].spec.taints[0].effect: unsupported value \"Maybe\" (NoSchedule, PreferNoSchedule, NoExecute)", 0, 0},
    {0, "[1, 2]", "t.src: expected an object at the top level (NodeList, List of Nodes, Node or a fixture with nodes:), got an array", 0, 0},
    {0, "", "t.src: expected an object at the top level (NodeList, List of Nodes, Node or a fixture with nodes:), got an empty document", 0, 0},
    /* fixture YAML */
    {0, "nodes:\n  - name: a\n    topology: {rack: r1}\n  - name: b\n   topology: {rack: r1}\n",
     NULL, 5, 4},
    {0, "nodes:\n  - name: a\n    alocatable: {cpu: 1}\n",
     "t.src: nodes[0].alocatable: unknown field (expected one of: name, topology, labels, allocatable, taints, unschedulable, ready)", 0, 0},
    {0, "nodes:\n  - {name: a, allocatable: {nvidia.com/gpu: eight}}\n",
     "t.src: nodes[0].allocatable.nvidia.com/gpu: invalid quantity \"eight\"", 0, 0},
    {0, "defaults: {allocatable: {cpu: x}}\nnodes: []\n",
     "t.src: defaults.allocatable.cpu: invalid quantity \"x\"", 0, 0},
    {0, "nodes:\n  - {name: a}\n  - {name: a}\n", "t.src: nodes[1].name: duplicate node name \"a\"", 0, 0},
    {0, "nodes:\n  - {name: a, ready: yes}\n", "t.src: nodes[0].ready: expected true or false, got a string", 0, 0},
    {0, "nodes:\n  - {name: a, labels: {gpu.count: 8}}\n",
     "t.src: nodes[0].labels.gpu.count: expected a string, got an integer (quote the value)", 0, 0},
    {0, "nodes:\n  - {name: a}\npods:\n  - {node: b, requests: {cpu: 1}}\n",
     "t.src: pods[0].node: no node named \"b\" in nodes", 0, 0},
    {0, "nodes:\n  - {name: a}\npods:\n  - {node: a, phase: Done}\n",
     "t.src: pods[0].phase: unsupported value \"Done\" (Pending, Running, Succeeded, Failed, Unknown)", 0, 0},
    {0, "nodes: {a: 1}\n", "t.src: nodes: expected an array, got an object", 0, 0},
    /* pods */
    {1, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\",\"containers\":"
        "[{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"eight\"}}}]}}]}",
     "t.src: items[0].spec.containers[0].resources.requests.nvidia.com/gpu: invalid quantity \"eight\"", 0, 0},
    {1, "{\"kind\":\"NodeList\",\"items\":[]}", "t.src: kind: expected PodList, List or Pod, got \"NodeList\"", 0, 0},
    {1, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":7}}]}",
     "t.src: items[0].spec.nodeName: expected a string, got an integer", 0, 0},
    {1, "pods:\n  - {node: a, requests: {cpu: [1]}}\n",
     "t.src: pods[0].requests.cpu: expected a quantity, got an array", 0, 0},
};

static void test_inventory__malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const bad_case *c = &bad_cases[i];
        topo_inventory *inv = NULL;
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(topo_inventory_create(&inv, &err), 0);
        int rc = c->pods ? topo_inventory_load_pods_text(inv, c->text, strlen(c->text), "t.src", &err)
                         : topo_inventory_load_nodes_text(inv, c->text, strlen(c->text), "t.src", &err);
        if (rc != TOPO_EINVALID)
            fail_msg("case %zu: rc %d (%s), want TOPO_EINVALID", i, rc, err.text);
        if (c->message != NULL && strcmp(err.text, c->message) != 0)
            fail_msg("case %zu: message\n  \"%s\"\nwant\n  \"%s\"", i, err.text, c->message);
        if (c->line != 0) {
            char prefix[32];
            snprintf(prefix, sizeof(prefix), "t.src:%d:%d: ", c->line, c->column);
            if (strncmp(err.text, prefix, strlen(prefix)) != 0 || err.line != c->line ||
                err.column != c->column)
                fail_msg("case %zu: \"%s\" (at %d:%d), want position %s", i, err.text, err.line,
                         err.column, prefix);
        }
        assert_int_equal(topo_inventory_node_count(inv), 0);
        assert_int_equal(topo_inventory_pod_count(inv), 0);
        topo_inventory_free(inv);
    }
}

static void test_inventory__malformed_files(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int pods;
        const char *contains;
    } files[] = {
        {"inventory/nodes-bad-quantity.json", 0,
         "nodes-bad-quantity.json: items[1].status.allocatable.cpu: invalid quantity \"abc\""},
        {"inventory/nodes-duplicate.json", 0,
         "nodes-duplicate.json: items[2].metadata.name: duplicate node name \"gpu-1\""},
        {"inventory/nodes-syntax-error.json", 0, "nodes-syntax-error.json:6:59: "},
        {"inventory/cluster-syntax-error.yaml", 0, "cluster-syntax-error.yaml:8:"},
        {"inventory/cluster-unknown-field.yaml", 0, "nodes[0].alocatable: unknown field"},
        {"inventory/pods-bad-request.json", 1,
         "pods-bad-request.json: items[1].spec.containers[0].resources.requests.nvidia.com/gpu: "
         "invalid quantity \"eight\""},
    };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        topo_inventory *inv = NULL;
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(topo_inventory_create(&inv, &err), 0);
        const char *path = fixture(files[i].file);
        int rc = files[i].pods ? topo_inventory_load_pods_file(inv, path, &err)
                               : topo_inventory_load_nodes_file(inv, path, &err);
        if (rc != TOPO_EINVALID || strstr(err.text, files[i].contains) == NULL)
            fail_msg("%s: rc %d, \"%s\" lacks \"%s\"", files[i].file, rc, err.text,
                     files[i].contains);
        topo_inventory_free(inv);
    }
}

static void test_inventory__file_limits(void **state)
{
    (void)state;
    topo_inventory *inv = NULL;
    topo_err err = TOPO_ERR_INIT;
    char path[] = "/tmp/topo-inv-big-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* A sparse file one byte over the limit: refused before reading. */
    assert_int_equal(ftruncate(fd, (off_t)TOPO_MAX_INVENTORY_FILE + 1), 0);
    close(fd);
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    assert_int_equal(topo_inventory_load_nodes_file(inv, path, &err), TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "larger than the limit"));
    assert_int_equal(topo_inventory_load_pods_file(inv, path, &err), TOPO_ELIMIT);
    unlink(path);
    assert_int_equal(topo_inventory_load_nodes_file(inv, "/nonexistent/nodes.json", &err),
                     TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "/nonexistent/nodes.json"));
    topo_inventory_free(inv);
    topo_inventory_free(NULL);
}

/* --- PodSet manifests ----------------------------------------------------------------------- */

static void test_inventory__podset_files(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_podset_spec ps;
    topo_err err = TOPO_ERR_INIT;

    if (topo_podset_load_file(&ps, fixture("podsets/job-rack-4x8.yaml"), pool, &err))
        fail_msg("%s", err.text);
    assert_string_equal(ps.name, "main");
    assert_int_equal(ps.count, 4);
    assert_string_equal(ps.required, "topology.topo.io/rack");
    assert_null(ps.preferred);
    assert_false(ps.unconstrained);
    assert_int_equal(amount(ps.requests, ps.nrequests, "nvidia.com/gpu"), 8);
    assert_int_equal(amount(ps.requests, ps.nrequests, "cpu"), 32000);
    assert_int_equal(amount(ps.requests, ps.nrequests, "memory"), 256 * GI);

    if (topo_podset_load_file(&ps, fixture("podsets/pod-preferred-rack.json"), pool, &err))
        fail_msg("%s", err.text);
    assert_int_equal(ps.count, 1);
    assert_string_equal(ps.preferred, "topology.topo.io/rack");
    assert_int_equal(ps.ntolerations, 1);
    assert_string_equal(ps.tolerations[0].key, "dedicated");
    assert_string_equal(ps.tolerations[0].value, "inference");
    assert_int_equal(ps.nnode_selector, 1);
    assert_string_equal(ps.node_selector[0].value, "NVIDIA-H100-80GB-HBM3");

    if (topo_podset_load_file(&ps, fixture("podsets/job-gb200-slices.yaml"), pool, &err))
        fail_msg("%s", err.text);
    assert_int_equal(ps.count, 32);
    assert_string_equal(ps.required, "topology.topo.io/spine");
    assert_string_equal(ps.slice_required, "topology.topo.io/nvlink");
    assert_int_equal(ps.slice_size, 16);
    assert_int_equal(amount(ps.requests, ps.nrequests, "nvidia.com/gpu"), 4);

    assert_int_equal(topo_podset_load_file(&ps, fixture("podsets/job-two-modes.yaml"), pool, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "job-two-modes.yaml: spec.template.metadata.annotations: "
                                     "Invalid value: must not contain more than one topology "
                                     "annotation"));
    assert_int_equal(topo_podset_load_file(&ps, fixture("podsets/job-slice-too-big.yaml"), pool, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: "
                                     "Invalid value: \"8\": must not be greater than pod set count 4"));
    topo_pool_free(pool);
}

typedef struct podset_case {
    const char *yaml;
    const char *expected; /* summary "count=..,req=..,pref=..,unc=..,slice=..@..,layers=.." or error */
} podset_case;

/* "--- " first: a document starting with '{' is read as JSON. */
#define JOB(par, ann) \
    "--- {apiVersion: batch/v1, kind: Job, spec: {parallelism: " par ", template: {metadata: {annotations: {" ann "}}, " \
    "spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}}}}"
#define A "kueue.x-k8s.io/podset-"
#define ANN "spec.template.metadata.annotations"

static const podset_case podset_cases[] = {
    {JOB("4", A "required-topology: topology.topo.io/rack"), "count=4,req=topology.topo.io/rack"},
    {JOB("4", A "preferred-topology: topology.topo.io/rack"), "count=4,pref=topology.topo.io/rack"},
    {JOB("4", A "unconstrained-topology: \"true\""), "count=4,unc=1"},
    {JOB("4", A "unconstrained-topology: \"false\""), "count=4"},
    {JOB("8", A "required-topology: s, " A "slice-required-topology: r, " A "slice-size: \"4\""),
     "count=8,req=s,slice=4@r"},
    {JOB("8", A "slice-required-topology-constraints: '[{\"topology\":\"r\",\"size\":4},{\"topology\":\"h\",\"size\":2}]'"),
     "count=8,layers=r:4/h:2"},
    {JOB("4", ""), "count=4"},
    {"--- {apiVersion: batch/v1, kind: Job, spec: {template: {spec: {containers: []}}}}", "count=1"},
    {"--- {apiVersion: batch/v1, kind: Job, spec: {parallelism: 6, completions: 3, template: {spec: {containers: []}}}}",
     "count=3"},
    {"--- {apiVersion: v1, kind: Pod, metadata: {annotations: {" A "required-topology: kubernetes.io/hostname}}, spec: {containers: []}}",
     "count=1,req=kubernetes.io/hostname"},
    /* errors, as Kueue's webhook reports them */
    {JOB("4", A "required-topology: r, " A "unconstrained-topology: \"true\""),
     "t.src: " ANN ": Invalid value: must not contain more than one topology annotation: [\"kueue.x-k8s.io/podset-required-topology\", "
     "\"kueue.x-k8s.io/podset-preferred-topology\", \"kueue.x-k8s.io/podset-unconstrained-topology\"]"},
    {JOB("4", A "unconstrained-topology: \"yes\""),
     "t.src: " ANN "[kueue.x-k8s.io/podset-unconstrained-topology]: Invalid value: \"yes\": must be a boolean value"},
    {JOB("4", A "required-topology: r, " A "slice-required-topology: h, " A "slice-size: \"two\""),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"two\": must be a numeric value"},
    {JOB("4", A "required-topology: r, " A "slice-required-topology: h, " A "slice-size: \"0\""),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"0\": must be greater than or equal to 1"},
    {JOB("4", A "required-topology: r, " A "slice-required-topology: h"),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-size]: Required value: must be set when "
     "'kueue.x-k8s.io/podset-slice-required-topology' is specified"},
    {JOB("4", A "required-topology: r, " A "slice-size: \"2\""),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-size]: Forbidden: may not be set when "
     "'kueue.x-k8s.io/podset-slice-required-topology' is not specified"},
    {JOB("8", A "slice-required-topology-constraints: '[{\"topology\":\"r\",\"size\":4},{\"topology\":\"h\",\"size\":3}]'"),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-required-topology-constraints][1].size: Invalid value: 3: "
     "must evenly divide the parent layer size 4"},
    {JOB("8", A "slice-required-topology-constraints: '[]'"),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-required-topology-constraints]: Invalid value: \"[]\": "
     "topology constraints must contain between 1 and 3 entries"},
    {JOB("8", A "slice-required-topology-constraints: '[{\"topology\":\"r\"}]'"),
     "t.src: " ANN "[kueue.x-k8s.io/podset-slice-required-topology-constraints][0].size: Invalid value: 0: "
     "must be greater than or equal to 1"},
    {JOB("8", A "slice-required-topology-constraints: '[{\"topology\":\"r\",\"size\":4}'"),
     NULL},
    /* Kueue keeps a group name next to a required level; alone, the
     * PodSet is placed as one. */
    {JOB("8", A "required-topology: r, " A "group-name: g"), "count=8,req=r"},
    {JOB("0", ""), "t.src: spec.parallelism: must be between 1 and 150000, got 0"},
    {"--- {apiVersion: apps/v1, kind: Deployment, spec: {}}", "t.src: kind: unsupported \"Deployment\" (expected Pod or Job)"},
    {"--- {kind: Job, apiVersion: batch/v1, spec: {parallelism: 2}}", "t.src: spec.template: required"},
    {"--- {apiVersion: v1, kind: Pod, spec: {containers: [], tolerations: [{operator: Sometimes}]}}",
     "t.src: spec.tolerations[0].operator: unsupported value \"Sometimes\" (Equal, Exists)"},
    {"--- {apiVersion: v1, kind: Pod, spec: {containers: [], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In}]}]}}}}}",
     "t.src: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values: must be specified when operator is In"},
    {"apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n", NULL},
};

static void summarize(char *buf, size_t size, const topo_podset_spec *ps)
{
    size_t len = 0;
    len += (size_t)snprintf(buf + len, size - len, "count=%d", (int)ps->count);
    if (ps->required)
        len += (size_t)snprintf(buf + len, size - len, ",req=%s", ps->required);
    if (ps->preferred)
        len += (size_t)snprintf(buf + len, size - len, ",pref=%s", ps->preferred);
    if (ps->unconstrained)
        len += (size_t)snprintf(buf + len, size - len, ",unc=1");
    if (ps->slice_required)
        len += (size_t)snprintf(buf + len, size - len, ",slice=%d@%s", (int)ps->slice_size,
                                ps->slice_required);
    for (size_t i = 0; i < ps->nlayers; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s:%d", i ? "/" : ",layers=",
                                ps->layers[i].level, (int)ps->layers[i].size);
}

static void test_inventory__podset_table(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    for (size_t i = 0; i < sizeof(podset_cases) / sizeof(podset_cases[0]); i++) {
        const podset_case *c = &podset_cases[i];
        topo_podset_spec ps;
        topo_err err = TOPO_ERR_INIT;
        char got[512];
        int rc = topo_podset_load_text(&ps, c->yaml, strlen(c->yaml), "t.src", pool, &err);
        if (rc == 0)
            summarize(got, sizeof(got), &ps);
        else
            snprintf(got, sizeof(got), "%s", err.text);
        if (c->expected == NULL) { /* a syntax error somewhere: just the code and position */
            if (rc != TOPO_EINVALID || strncmp(got, "t.src", 5) != 0)
                fail_msg("case %zu: rc %d, \"%s\"", i, rc, got);
            continue;
        }
        if (strcmp(got, c->expected) != 0)
            fail_msg("case %zu:\n  got  \"%s\"\n  want \"%s\"", i, got, c->expected);
    }
    topo_pool_free(pool);
}

/* --- snapshot bridge ------------------------------------------------------------------------ */

typedef struct walk_acc {
    int64_t root_free, root_capacity, root_max;
    size_t root_nodes, domains;
} walk_acc;

static int visit(const topo_domain_view *v, void *payload)
{
    walk_acc *acc = payload;
    acc->domains++;
    if (v->level == 0) {
        acc->root_free += v->free;
        acc->root_capacity += v->capacity;
        if (v->max_node_free > acc->root_max)
            acc->root_max = v->max_node_free;
        acc->root_nodes += v->nodes;
    }
    return 0;
}

static void test_inventory__snapshot(void **state)
{
    (void)state;
    static const char *const levels[] = {"topology.topo.io/datacenter", "topology.topo.io/spine",
                                         "topology.topo.io/leaf", "topology.topo.io/rack",
                                         "kubernetes.io/hostname"};
    topo_inventory *inv = NULL;
    topo_snapshot *snap = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory_snapshot_opts opts = {0};
    size_t ignored = 99;
    walk_acc acc = {0};

    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_nodes_file(inv, fixture("clusters/fragmented.yaml"), &err))
        fail_msg("%s", err.text);
    opts.snapshot.topology_name = "default";
    opts.snapshot.levels = levels;
    opts.snapshot.nlevels = 5;
    int rc = topo_inventory_snapshot(&snap, inv, &opts, &ignored, &err);
    if (rc == TOPO_EUNSUPPORTED) {
        topo_inventory_free(inv);
        skip(); /* the model is still a link stub */
    }
    if (rc != 0)
        fail_msg("%s", err.text);
    assert_int_equal(ignored, 0);
    assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", visit, &acc), 0);
    /* 6 schedulable nodes (one of them tainted) with 16 GPUs free, 4 at most on one node. */
    assert_int_equal(acc.root_nodes, 6);
    assert_int_equal(acc.root_capacity, 48);
    assert_int_equal(acc.root_free, 16);
    assert_int_equal(acc.root_max, 4);
    topo_snapshot_free(snap);

    /* Kubectl lists: the TAS pod is charged as TAS usage, the pod on an unknown node ignored. */
    topo_inventory_free(inv);
    inv = NULL;
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    if (topo_inventory_load_nodes_file(inv, fixture("clusters/kubectl-nodes-small.json"), &err) ||
        topo_inventory_load_pods_file(inv, fixture("clusters/kubectl-pods-small.json"), &err))
        fail_msg("%s", err.text);
    if (topo_inventory_snapshot(&snap, inv, &opts, &ignored, &err))
        fail_msg("%s", err.text);
    assert_int_equal(ignored, 1);
    memset(&acc, 0, sizeof(acc));
    assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", visit, &acc), 0);
    assert_int_equal(acc.root_nodes, 3);
    assert_int_equal(acc.root_capacity, 24);
    /* a100-r1-a: 8 - 4 - 2; a100-r1-b: 8 (tainted); a100-r2-a: 8 - 8 (TAS pod). */
    assert_int_equal(acc.root_free, 10);
    topo_snapshot_free(snap);
    topo_inventory_free(inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inventory__kubectl_nodes),
        cmocka_unit_test(test_inventory__kubectl_pods),
        cmocka_unit_test(test_inventory__pod_requests),
        cmocka_unit_test(test_inventory__pod_requests_many_sidecars),
        cmocka_unit_test(test_inventory__fixture_hgx),
        cmocka_unit_test(test_inventory__fixture_gb200_and_fragmented),
        cmocka_unit_test(test_inventory__malformed),
        cmocka_unit_test(test_inventory__malformed_files),
        cmocka_unit_test(test_inventory__file_limits),
        cmocka_unit_test(test_inventory__podset_files),
        cmocka_unit_test(test_inventory__podset_table),
        cmocka_unit_test(test_inventory__snapshot),
    };
    return cmocka_run_group_tests_name("inventory", tests, NULL, NULL);
}
