/* topo_packing_find and the engine's shape cache (snapshot_agg.c): a pod's
 * packing shape is its GPU request and "pods: 1" (plus node filters), so
 * pods that differ only in cpu or memory share it; and packing's shapes
 * have a budget of their own, so a burst of packed pods never evicts the
 * shape a topology placement uses. Observed through the count of shapes
 * counted over the snapshot (snap_agg_counted, the lookups that missed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine_internal.h"
#include "topo/live.h"
#include "topo/packing.h"

#define GPU "nvidia.com/gpu"
#define L_RACK "topology.topo.io/rack"

static const char *const levels3[] = {"topology.topo.io/block", L_RACK, "kubernetes.io/hostname"};
static const topo_snapshot_opts opts3 = {"gpu", levels3, 3, NULL, 0};

/* Four racks of two 8-GPU nodes, pool a or b; r1 and r3 in use. */
static topo_live *cluster(void)
{
    static const char *const hosts[] = {"n11", "n12", "n21", "n22", "n31", "n32", "n41", "n42"};
    static const char *const racks[] = {"r1", "r1", "r2", "r2", "r3", "r3", "r4", "r4"};
    topo_live *live = NULL;
    assert_int_equal(topo_live_create(&live, &opts3, NULL), 0);
    for (size_t i = 0; i < 8; i++) {
        topo_kv labels[4] = {{levels3[0], "b1"},
                             {L_RACK, racks[i]},
                             {levels3[2], hosts[i]},
                             {"pool", i % 2 ? "b" : "a"}};
        topo_resource alloc[4] = {
            {GPU, 8}, {"cpu", 64000}, {"memory", INT64_C(1) << 40}, {"pods", 110}};
        topo_node_spec spec = {hosts[i], labels, 4, alloc, 4, NULL, 0, 0, 1, 0};
        assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
    }
    topo_resource req[2] = {{GPU, 3}, {"cpu", 1000}};
    assert_int_equal(topo_live_upsert_pod(live, "p1", "n11", 1, req, 2, NULL), 0);
    assert_int_equal(topo_live_upsert_pod(live, "p3", "n31", 1, req, 2, NULL), 0);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    return live;
}

/* topo_packing_find for a pod of gpus GPUs, cpu millicores and mem bytes,
 * nodeSelector pool=<pool> unless NULL; the number of picks. */
static size_t pack(const topo_snapshot *snap, int64_t gpus, int64_t cpu, int64_t mem,
                   const char *pool_label)
{
    topo_resource req[3] = {{GPU, gpus}, {"cpu", cpu}, {"memory", mem}};
    topo_kv sel = {"pool", pool_label};
    topo_podset_spec pod;
    memset(&pod, 0, sizeof(pod));
    pod.name = "main";
    pod.count = 1;
    pod.requests = req;
    pod.nrequests = 3;
    pod.node_selector = pool_label != NULL ? &sel : NULL;
    pod.nnode_selector = pool_label != NULL ? 1 : 0;
    topo_packing_pick picks[4];
    size_t n = 99;
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    assert_non_null(pool);
    if (topo_packing_find(picks, &n, 4, snap, &pod, L_RACK, GPU, pool, &err) != 0)
        fail_msg("topo_packing_find: %s", err.text);
    topo_pool_free(pool);
    return n;
}

/* A topology placement: 4 pods of 2 GPUs and 4 cores required in a rack. */
static void place(const topo_snapshot *snap)
{
    topo_resource req[2] = {{GPU, 2}, {"cpu", 4000}};
    topo_podset_spec ps;
    topo_podset_result res;
    topo_gates gates;
    memset(&ps, 0, sizeof(ps));
    ps.name = "workers";
    ps.count = 4;
    ps.requests = req;
    ps.nrequests = 2;
    ps.required = L_RACK;
    topo_gates_init(&gates);
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    assert_non_null(pool);
    if (topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, &err) != 0)
        fail_msg("topo_engine_find: %s", err.text);
    assert_non_null(res.assignment);
    topo_pool_free(pool);
}

static void test_packing_shapes__cpu_and_memory_share_the_shape(void **state)
{
    (void)state;
    topo_live *live = cluster();
    const topo_snapshot *snap = topo_live_acquire(live);
    assert_int_equal(pack(snap, 2, 1000, INT64_C(1) << 30, NULL), 2);
    uint64_t counted = snap_agg_counted(snap);
    assert_true(counted >= 1);
    /* a notebook, an inference replica, ...: other cpu and memory, same
     * GPUs: no new count over the nodes, the same answer */
    for (int64_t i = 1; i <= 12; i++)
        assert_int_equal(pack(snap, 2, 1000 + 250 * i, (i + 1) << 30, NULL), 2);
    assert_int_equal(snap_agg_counted(snap), counted);
    /* another GPU count is another shape */
    assert_int_equal(pack(snap, 4, 1000, INT64_C(1) << 30, NULL), 2);
    assert_int_equal(snap_agg_counted(snap), counted + 1);
    topo_live_release(live, snap);
    topo_live_free(live);
}

static void test_packing_shapes__packing_does_not_evict_placements(void **state)
{
    (void)state;
    topo_live *live = cluster();
    const topo_snapshot *snap = topo_live_acquire(live);
    place(snap);
    uint64_t counted = snap_agg_counted(snap);
    place(snap);
    assert_int_equal(snap_agg_counted(snap), counted); /* kept */
    /* 16 packing shapes in turn: 1 to 8 GPUs, with and without a
     * nodeSelector, twice the packing budget */
    for (int round = 0; round < 2; round++)
        for (int64_t g = 1; g <= 8; g++) {
            (void)pack(snap, g, 1000, INT64_C(1) << 30, NULL);
            (void)pack(snap, g, 1000, INT64_C(1) << 30, "a");
        }
    uint64_t after_packing = snap_agg_counted(snap);
    assert_int_equal(after_packing, counted + 32); /* more than packing keeps: all missed */
    /* the placement's shape is still counted: its next call is a hit */
    place(snap);
    assert_int_equal(snap_agg_counted(snap), after_packing);
    /* and packing's own budget keeps 8 of its shapes: in turn, hits */
    for (int round = 0; round < 3; round++)
        for (int64_t g = 1; g <= 8; g++)
            (void)pack(snap, g, 2000, INT64_C(2) << 30, NULL);
    assert_int_equal(snap_agg_counted(snap), after_packing + 8);
    topo_live_release(live, snap);
    topo_live_free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packing_shapes__cpu_and_memory_share_the_shape),
        cmocka_unit_test(test_packing_shapes__packing_does_not_evict_placements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
