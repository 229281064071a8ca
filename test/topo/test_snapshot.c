/* The snapshot: level validation, eligibility (Ready, unschedulable, missing
 * labels, flavor labels), duplicate names, and the walk's aggregates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/model.h"

static const char *levels[] = {"rack", "kubernetes.io/hostname"};

static void test_snapshot__level_validation(void **state)
{
    (void)state;
    topo_snapshot *snap = NULL;
    topo_err err = TOPO_ERR_INIT;
    const char *dup[] = {"rack", "rack"};
    topo_snapshot_opts o1 = {NULL, dup, 2, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &o1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "duplicate level"));
    const char *host_first[] = {"kubernetes.io/hostname", "rack"};
    topo_snapshot_opts o2 = {NULL, host_first, 2, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &o2, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "last level"));
    topo_snapshot_opts o3 = {NULL, levels, 0, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &o3, &err), TOPO_EINVALID);
    assert_null(snap);
}

typedef struct seen {
    int n;
    char line[16][64];
} seen;

static int record(const topo_domain_view *v, void *payload)
{
    seen *s = payload;
    if (s->n < 16)
        snprintf(s->line[s->n++], 64, "%zu %s n=%zu cap=%lld free=%lld max=%lld", v->level,
                 v->value, v->nodes, (long long)v->capacity, (long long)v->free,
                 (long long)v->max_node_free);
    return 0;
}

static void add(topo_snapshot *snap, const char *name, const char *rack, int ready, int unsched,
                const char *pool)
{
    topo_kv labels[] = {{"rack", rack}, {"kubernetes.io/hostname", name}, {"pool", pool}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 10}};
    topo_node_spec node = {name, labels, rack ? 3u : 0u, alloc, 2, NULL, 0, unsched, ready, 0};
    if (rack == NULL) {
        node.labels = &labels[1];
        node.nlabels = 1;
    }
    assert_int_equal(topo_snapshot_add_node(snap, &node, NULL), 0);
}

static void test_snapshot__eligibility_and_walk(void **state)
{
    (void)state;
    topo_snapshot *snap = NULL;
    topo_kv flavor[] = {{"pool", "gpu"}};
    topo_snapshot_opts opts = {"t", levels, 2, flavor, 1};
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    add(snap, "n1", "r1", 1, 0, "gpu");
    add(snap, "n2", "r1", 0, 0, "gpu");   /* NotReady */
    add(snap, "n3", "r1", 1, 1, "gpu");   /* cordoned */
    add(snap, "n4", "r2", 1, 0, "cpu");   /* other flavor */
    add(snap, "n5", NULL, 1, 0, "gpu");   /* no rack label */
    add(snap, "n6", "r2", 1, 0, "gpu");
    topo_err err = TOPO_ERR_INIT;
    topo_kv l[] = {{"rack", "r9"}};
    topo_node_spec dup = {"n1", l, 1, NULL, 0, NULL, 0, 0, 1, 0};
    assert_int_equal(topo_snapshot_add_node(snap, &dup, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "duplicate node name"));
    topo_resource three[] = {{"nvidia.com/gpu", 3}};
    int ignored = 0;
    assert_int_equal(topo_snapshot_add_pod_usage(snap, "n6", three, 1, &ignored, NULL), 0);
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    assert_int_equal(topo_snapshot_add_pod_usage(snap, "n2", three, 1, &ignored, NULL), 0);
    assert_int_equal(ignored, 1);
    assert_int_equal((int)topo_snapshot_node_count(snap), 6);
    seen s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", record, &s), 0);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.line[0], "0 r1 n=1 cap=8 free=8 max=8");
    assert_string_equal(s.line[1], "1 n1 n=1 cap=8 free=8 max=8");
    assert_string_equal(s.line[2], "0 r2 n=1 cap=8 free=5 max=5");
    assert_string_equal(s.line[3], "1 n6 n=1 cap=8 free=5 max=5");
    /* a node's labels by name, eligible or not */
    assert_string_equal(topo_snapshot_node_label(snap, "n6", "rack"), "r2");
    assert_string_equal(topo_snapshot_node_label(snap, "n4", "pool"), "cpu");
    assert_null(topo_snapshot_node_label(snap, "n5", "rack"));
    assert_null(topo_snapshot_node_label(snap, "n7", "rack"));
    assert_null(topo_snapshot_node_label(snap, NULL, "rack"));
    topo_snapshot_free(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot__level_validation),
        cmocka_unit_test(test_snapshot__eligibility_and_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
