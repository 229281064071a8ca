/* Tests for the policies mixed and mixed-pack on small clusters worked out
 * by hand: a pod without a request goes to the used rack under mixed-pack
 * and spreads under mixed; the engine sees kube-default's placements (one
 * snapshot); the same seed gives the same placements; --pack-level is
 * checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "simulate/sim_test.h"

#define REQ_RACK "kueue.x-k8s.io/podset-required-topology=" SIM_TEST_RACK

typedef sim_test_world world;

static void setup(world *w, const sim_test_node *nodes, size_t n, const char *csv)
{
    topo_err err = TOPO_ERR_INIT;
    if (sim_test_world_make(w, nodes, n, csv, &err) < 0)
        fail_msg("%s", err.text);
}

static void run_seed(world *w, topo_sim_policy p, uint64_t seed)
{
    topo_err err = TOPO_ERR_INIT;
    topo_sim_run_opts o;
    memset(&o, 0, sizeof(o));
    o.seed = seed;
    if (sim_test_world_run(w, p, &o, &err) < 0)
        fail_msg("%s", err.text);
}

static void done(world *w)
{
    sim_test_world_free(w);
}

/* Rack r1 half used (a full, b empty), rack r2 empty. */
static const sim_test_node half_used[] = {
    {"a", "r1", 8, 8}, {"b", "r1", 8, 0}, {"c", "r2", 8, 0}, {"d", "r2", 8, 0}};

static void test_policy_mixed__pack_prefers_used_rack(void **state)
{
    (void)state;
    world w;
    int outside = 0;
    setup(&w, half_used, 4, "0,j,1,2,10\n");
    /* kube-default scores b, c and d alike (75): mixed picks any of them;
     * mixed-pack's affinity toward r1 leaves only b. */
    for (uint64_t seed = 1; seed <= 40; seed++) {
        run_seed(&w, TOPO_SIM_MIXED_PACK, seed);
        assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "b"), 1);
        run_seed(&w, TOPO_SIM_MIXED, seed);
        outside += sim_test_pods_on(w.r, w.c, 0, "b") == 0;
    }
    assert_true(outside > 10); /* 2 in 3 expected: about 27 */
    done(&w);
}

static void test_policy_mixed__pack_leaves_pod_alone_without_used_room(void **state)
{
    (void)state;
    world w;
    /* r1's only free node is full: no used rack has room, so the pod is
     * kube-default's (c or d, both 75), never refused. */
    static const sim_test_node full[] = {{"a", "r1", 8, 8}, {"c", "r2", 8, 0}, {"d", "r2", 8, 0}};
    setup(&w, full, 3, "0,j,1,2,10\n");
    run_seed(&w, TOPO_SIM_MIXED_PACK, 1);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "c") + sim_test_pods_on(w.r, w.c, 0, "d"),
                     1);
    done(&w);
}

static void test_policy_mixed__engine_sees_kube_placements(void **state)
{
    (void)state;
    world w;
    static const sim_test_node empty[] = {
        {"a", "r1", 8, 0}, {"b", "r1", 8, 0}, {"c", "r2", 8, 0}, {"d", "r2", 8, 0}};
    /* j1 (no request) takes a whole node from kube-default; j2 needs a
     * whole rack: only the rack without j1 has room, and j2 must start at
     * once there, never on j1's node. */
    setup(&w, empty, 4, "0,j1,1,8,1000\n1,j2,2,8,10," REQ_RACK "\n");
    for (topo_sim_policy p = TOPO_SIM_MIXED; p <= TOPO_SIM_MIXED_PACK; p++) {
        for (uint64_t seed = 1; seed <= 12; seed++) {
            run_seed(&w, p, seed);
            const topo_sim_slot *s1, *s2;
            assert_int_equal(topo_sim_result_placement(w.r, 0, &s1), 1);
            assert_int_equal(topo_sim_result_placement(w.r, 1, &s2), 2);
            assert_true(topo_sim_result_start(w.r, 1) == 1);
            for (int i = 0; i < 2; i++)
                assert_int_not_equal(s2[i].node, s1[0].node);
            /* Nodes are in rack order: a b | c d. */
            assert_int_equal(s2[0].node / 2, s2[1].node / 2);
            assert_int_not_equal(s2[0].node / 2, s1[0].node / 2);
        }
    }
    done(&w);
}

static void test_policy_mixed__deterministic(void **state)
{
    (void)state;
    world w;
    static const char csv[] = "0,j1,1,2,50\n1,j2,2,8,30," REQ_RACK "\n2,j3,3,1,40\n"
                              "3,j4,1,4,20\n4,j5,2,4,60\n5,j6,1,8,10\n";
    static const sim_test_node nodes[] = {{"a", "r1", 8, 2}, {"b", "r1", 8, 0},
                                          {"c", "r2", 8, 0}, {"d", "r2", 8, 4},
                                          {"e", "r3", 8, 0}, {"f", "r3", 8, 0}};
    setup(&w, nodes, 6, csv);
    for (topo_sim_policy p = TOPO_SIM_MIXED; p <= TOPO_SIM_MIXED_PACK; p++) {
        topo_sim_slot first[6][4];
        size_t nfirst[6];
        run_seed(&w, p, 7);
        for (size_t j = 0; j < 6; j++) {
            const topo_sim_slot *s;
            nfirst[j] = topo_sim_result_placement(w.r, j, &s);
            assert_true(nfirst[j] > 0 && nfirst[j] <= 4);
            memcpy(first[j], s, nfirst[j] * sizeof(*s));
        }
        run_seed(&w, p, 7);
        for (size_t j = 0; j < 6; j++) {
            const topo_sim_slot *s;
            assert_int_equal(topo_sim_result_placement(w.r, j, &s), nfirst[j]);
            assert_memory_equal(s, first[j], nfirst[j] * sizeof(*s));
        }
    }
    done(&w);
}

static void test_policy_mixed__bad_pack_level(void **state)
{
    (void)state;
    world w;
    topo_err err = TOPO_ERR_INIT;
    topo_sim_run_opts o;
    setup(&w, half_used, 4, "0,j,1,2,10\n");
    memset(&o, 0, sizeof(o));
    o.pack_level = "zone";
    assert_int_equal(topo_sim_run(&w.r, w.c, w.t, TOPO_SIM_MIXED_PACK, &o, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "--pack-level: \"zone\" is not one of the levels");
    o.pack_level = SIM_TEST_HOST;
    assert_int_equal(topo_sim_run(&w.r, w.c, w.t, TOPO_SIM_MIXED_PACK, &o, &err),
                     TOPO_EINVALID);
    assert_null(w.r);
    o.pack_level = SIM_TEST_RACK;
    assert_int_equal(topo_sim_run(&w.r, w.c, w.t, TOPO_SIM_MIXED_PACK, &o, &err), 0);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "b"), 1);
    done(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_mixed__pack_prefers_used_rack),
        cmocka_unit_test(test_policy_mixed__pack_leaves_pod_alone_without_used_room),
        cmocka_unit_test(test_policy_mixed__engine_sees_kube_placements),
        cmocka_unit_test(test_policy_mixed__deterministic),
        cmocka_unit_test(test_policy_mixed__bad_pack_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
