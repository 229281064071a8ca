/* Tests for lib/simulate's policies and event loop on small clusters worked
 * out by hand: kube-default (LeastAllocated, random ties, spreading),
 * kube-binpack (MostAllocated: the fullest node, packing), first-fit (packs),
 * first-fit-fabric (the topology's order, whatever the seed), slurm-tree
 * (the tightest rack that fits, else the fewest racks), best-fit
 * (least free that fits), random (any node that
 * fits, uniformly), gangs all or nothing, topo's required and preferred
 * levels, the FIFO queue with backfill, held preferred levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "simulate/sim_test.h"

#define REQ_RACK "kueue.x-k8s.io/podset-required-topology=" SIM_TEST_RACK
#define PREF_RACK "kueue.x-k8s.io/podset-preferred-topology=" SIM_TEST_RACK

typedef sim_test_world world;

/* Runs the trace on the nodes under one policy; the world holds it all. */
static void run(world *w, const sim_test_node *nodes, size_t n, const char *csv,
                topo_sim_policy p, const topo_sim_run_opts *o)
{
    topo_err err = TOPO_ERR_INIT;
    if (sim_test_world_make(w, nodes, n, csv, &err) < 0 || sim_test_world_run(w, p, o, &err) < 0)
        fail_msg("%s", err.text);
}

static void rerun(world *w, topo_sim_policy p, const topo_sim_run_opts *o)
{
    topo_err err = TOPO_ERR_INIT;
    if (sim_test_world_run(w, p, o, &err) < 0)
        fail_msg("%s", err.text);
}

static void done(world *w)
{
    sim_test_world_free(w);
}

static size_t slots(const world *w, size_t job)
{
    const topo_sim_slot *s;
    return topo_sim_result_placement(w->r, job, &s);
}

/* Free 8, 6, 4 and 2 GPUs on four 8-GPU nodes of one rack. */
static const sim_test_node graded[] = {
    {"a", "r1", 8, 0}, {"b", "r1", 8, 2}, {"c", "r1", 8, 4}, {"d", "r1", 8, 6}};
static const sim_test_node four_free[] = {
    {"a", "r1", 8, 0}, {"b", "r1", 8, 0}, {"c", "r1", 8, 0}, {"d", "r1", 8, 0}};

static void test_policies__kube_default_least_allocated(void **state)
{
    (void)state;
    world w;
    /* Scores (free - 2) * 100 / 8: a 75, b 50, c 25, d 0. */
    run(&w, graded, 4, "0,j,1,2,10\n", TOPO_SIM_KUBE_DEFAULT, NULL);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "a"), 1);
    done(&w);
    /* Four 1-GPU pods on four empty nodes: each pod lowers its node's score
     * (87 -> 75), so the next goes elsewhere: one pod a node. */
    run(&w, four_free, 4, "0,j,4,1,10\n", TOPO_SIM_KUBE_DEFAULT, NULL);
    assert_int_equal(slots(&w, 0), 4);
    done(&w);
}

static void test_policies__kube_default_random_ties(void **state)
{
    (void)state;
    world w;
    int seen[4] = {0};
    run(&w, four_free, 4, "0,j,1,1,10\n", TOPO_SIM_KUBE_DEFAULT, NULL);
    for (uint64_t seed = 1; seed <= 200; seed++) {
        topo_sim_run_opts o;
        memset(&o, 0, sizeof(o));
        o.seed = seed;
        rerun(&w, TOPO_SIM_KUBE_DEFAULT, &o);
        const topo_sim_slot *s;
        assert_int_equal(topo_sim_result_placement(w.r, 0, &s), 1);
        seen[s[0].node]++;
    }
    for (int i = 0; i < 4; i++) /* 50 expected each */
        assert_true(seen[i] > 25);
    done(&w);
}

static void test_policies__first_fit_packs(void **state)
{
    (void)state;
    world w;
    /* Whatever the shuffled order, the first node with room takes pods
     * until it is full. */
    run(&w, four_free, 4, "0,j1,2,4,10\n0,j2,3,4,10\n", TOPO_SIM_FIRST_FIT, NULL);
    assert_int_equal(slots(&w, 0), 1);
    assert_int_equal(slots(&w, 1), 2);
    done(&w);
}

static void test_policies__kube_binpack_most_allocated(void **state)
{
    (void)state;
    world w;
    /* Scores (8 - free + 2) * 100 / 8: a 25, b 50, c 75, d 100: the fullest
     * node that fits, where kube-default takes the emptiest. */
    run(&w, graded, 4, "0,j,1,2,10\n", TOPO_SIM_KUBE_BINPACK, NULL);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "d"), 1);
    done(&w);
    /* A 3-GPU pod: d (2 free) is filtered out, c (4 free) scores 87. */
    run(&w, graded, 4, "0,j,1,3,10\n", TOPO_SIM_KUBE_BINPACK, NULL);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "c"), 1);
    done(&w);
    /* Four 1-GPU pods on four empty nodes: the first raises its node's score
     * (12 -> 25), so the others follow it, whatever the seed: one node. */
    run(&w, four_free, 4, "0,j,4,1,10\n", TOPO_SIM_KUBE_BINPACK, NULL);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        topo_sim_run_opts o;
        memset(&o, 0, sizeof(o));
        o.seed = seed;
        rerun(&w, TOPO_SIM_KUBE_BINPACK, &o);
        const topo_sim_slot *sl;
        assert_int_equal(topo_sim_result_placement(w.r, 0, &sl), 1);
        assert_int_equal(sl[0].count, 4);
    }
    done(&w);
}

static void test_policies__first_fit_fabric_order(void **state)
{
    (void)state;
    world w;
    /* Listed out of order; the fabric's order is rack, then hostname:
     * r1/b, r1/c, r2/a, r2/z. b has 2 GPUs in use, so whole-node jobs go
     * to c, a, z in turn, and a 2-GPU one to b, with any seed (a shuffled
     * first-fit would follow the seed). */
    static const sim_test_node n[] = {
        {"z", "r2", 8, 0}, {"b", "r1", 8, 2}, {"a", "r2", 8, 0}, {"c", "r1", 8, 0}};
    static const char *const expect[] = {"c", "a", "z", "b"};
    run(&w, n, 4, "0,j1,1,8,100\n1,j2,1,8,100\n2,j3,1,8,100\n3,j4,1,2,100\n",
        TOPO_SIM_FIRST_FIT_FABRIC, NULL);
    for (uint64_t seed = 0; seed <= 20; seed++) {
        topo_sim_run_opts o;
        memset(&o, 0, sizeof(o));
        o.seed = seed;
        rerun(&w, TOPO_SIM_FIRST_FIT_FABRIC, &o);
        for (size_t j = 0; j < 4; j++)
            assert_int_equal(sim_test_pods_on(w.r, w.c, j, expect[j]), 1);
    }
    done(&w);
}

static void test_policies__slurm_tree_tightest_rack(void **state)
{
    (void)state;
    world w;
    /* Racks in the fabric's order: r1 four empty nodes, r2 two empty and g
     * with 2 GPUs free, r3 three empty. j1 (2 nodes) fits r1, r2 and r3;
     * r2 has the fewest free that fit (2 nodes), so e and f, where
     * first-fit-fabric would take a and b. j2 (5 nodes) fits no rack: the
     * leaves with the most free first, r1 (4), then the tightest for the
     * one left, r3: 2 racks (first-fit-fabric: c, d, e, f, h, 3 racks).
     * j3 (one 2-GPU pod): r2 has room for one such pod, on g, the least of
     * any rack. Any seed. */
    static const sim_test_node n[] = {
        {"a", "r1", 8, 0}, {"b", "r1", 8, 0}, {"c", "r1", 8, 0}, {"d", "r1", 8, 0},
        {"e", "r2", 8, 0}, {"f", "r2", 8, 0}, {"g", "r2", 8, 6}, {"h", "r3", 8, 0},
        {"i", "r3", 8, 0}, {"k", "r3", 8, 0}};
    static const char *const j1[] = {"e", "f"}, *const j2[] = {"a", "b", "c", "d", "h"};
    run(&w, n, 10, "0,j1,2,8,100\n1,j2,5,8,100\n2,j3,1,2,100\n", TOPO_SIM_SLURM_TREE, NULL);
    for (uint64_t seed = 0; seed <= 5; seed++) {
        topo_sim_run_opts o;
        memset(&o, 0, sizeof(o));
        o.seed = seed;
        rerun(&w, TOPO_SIM_SLURM_TREE, &o);
        assert_int_equal(slots(&w, 0), 2);
        for (size_t i = 0; i < 2; i++)
            assert_int_equal(sim_test_pods_on(w.r, w.c, 0, j1[i]), 1);
        assert_int_equal(slots(&w, 1), 5);
        for (size_t i = 0; i < 5; i++)
            assert_int_equal(sim_test_pods_on(w.r, w.c, 1, j2[i]), 1);
        assert_int_equal(sim_test_pods_on(w.r, w.c, 2, "g"), 1);
        const topo_sim_metrics *m = topo_sim_result_metrics(w.r);
        assert_int_equal(m->multi_node, 2);
        assert_true(m->spanned[0] == 1.5); /* racks: 1 and 2 */
    }
    /* first-fit-fabric on the same trace: a and b, then three racks. */
    rerun(&w, TOPO_SIM_FIRST_FIT_FABRIC, NULL);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "a"), 1);
    assert_true(topo_sim_result_metrics(w.r)->spanned[0] == 2);
    done(&w);
}

static void test_policies__best_fit(void **state)
{
    (void)state;
    world w;
    /* 4 GPUs: c (4 free) fits exactly; then 3: b (6) is the least of a, b;
     * then 2: d (2). */
    run(&w, graded, 4, "0,j1,1,4,10\n1,j2,1,3,10\n2,j3,1,2,10\n", TOPO_SIM_BEST_FIT, NULL);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "c"), 1);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 1, "b"), 1);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 2, "d"), 1);
    done(&w);
}

static void test_policies__random_uniform_over_fitting(void **state)
{
    (void)state;
    world w;
    int seen[4] = {0};
    /* b has 1 free: never; a, c and d about a third each. */
    static const sim_test_node n[] = {
        {"a", "r1", 8, 0}, {"b", "r1", 8, 7}, {"c", "r1", 8, 0}, {"d", "r1", 8, 0}};
    run(&w, n, 4, "0,j,1,2,10\n", TOPO_SIM_RANDOM, NULL);
    for (uint64_t seed = 1; seed <= 300; seed++) {
        topo_sim_run_opts o;
        memset(&o, 0, sizeof(o));
        o.seed = seed;
        rerun(&w, TOPO_SIM_RANDOM, &o);
        const topo_sim_slot *s;
        assert_int_equal(topo_sim_result_placement(w.r, 0, &s), 1);
        seen[s[0].node]++;
    }
    assert_int_equal(seen[sim_test_node_index(w.c, "b")], 0);
    static const char *const fitting[] = {"a", "c", "d"};
    for (size_t i = 0; i < 3; i++) /* 100 expected each */
        assert_true(seen[sim_test_node_index(w.c, fitting[i])] > 70);
    done(&w);
}

static void test_policies__gang_all_or_nothing(void **state)
{
    (void)state;
    /* 3 pods of 6: only a and b have 6 free; no pod may stay behind, so
     * the 8-GPU pod after it still finds a empty. */
    for (int p = 0; p < TOPO_SIM_POLICIES; p++) {
        world w;
        run(&w, graded, 4, "0,big,3,6,10\n1,whole,1,8,10\n", (topo_sim_policy)p, NULL);
        const topo_sim_metrics *m = topo_sim_result_metrics(w.r);
        assert_int_equal(m->unplaceable, 1);
        assert_int_equal(slots(&w, 0), 0);
        assert_int_equal(sim_test_pods_on(w.r, w.c, 1, "a"), 1);
        done(&w);
    }
}

static const sim_test_node two_racks[] = {
    {"a", "r1", 8, 0}, {"b", "r1", 8, 0}, {"c", "r2", 8, 0}, {"d", "r2", 8, 0}};

static void test_policies__topo_required_rack(void **state)
{
    (void)state;
    world w;
    /* One rack is taken by the first job (all of it), the second must go
     * to the other rack whole; a third asking for three nodes of one rack
     * never fits. */
    run(&w, two_racks, 4,
        "0,j1,2,8,100," REQ_RACK "\n1,j2,2,8,100," REQ_RACK "\n2,j3,3,8,100," REQ_RACK "\n",
        TOPO_SIM_TOPO, NULL);
    const topo_sim_metrics *m = topo_sim_result_metrics(w.r);
    assert_int_equal(m->placed, 2);
    assert_int_equal(m->unplaceable, 1);
    assert_true(m->tight_share == 1.0);
    assert_true(m->spanned[0] == 1.0);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "a") + sim_test_pods_on(w.r, w.c, 1, "a"), 1);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "a"), sim_test_pods_on(w.r, w.c, 0, "b"));
    done(&w);
}

static void test_policies__auto_level(void **state)
{
    (void)state;
    world w;
    /* "auto": the tightest level that could hold 2 x 8 when empty is the
     * rack; required there, the job stays in one rack. */
    run(&w, two_racks, 4, "0,j1,2,8,100,kueue.x-k8s.io/podset-required-topology=auto\n",
        TOPO_SIM_TOPO, NULL);
    assert_true(topo_sim_result_metrics(w.r)->tight_share == 1.0);
    assert_true(topo_sim_result_metrics(w.r)->spanned[0] == 1.0);
    done(&w);
}

static void test_policies__fifo_and_backfill(void **state)
{
    (void)state;
    world w;
    static const sim_test_node one[] = {{"a", "r1", 8, 0}};
    /* j2 (8 GPUs) waits for j1; j3 (2 GPUs) arrives later but fits beside
     * j1 at once: a job that does not fit never blocks those behind it.
     * j4 (8) waits behind j2 in arrival order: j2 at 10, j4 at 20. */
    run(&w, one, 1, "0,j1,1,6,10\n1,j2,1,8,10\n2,j3,1,2,1\n3,j4,1,8,10\n", TOPO_SIM_BEST_FIT,
        NULL);
    assert_true(topo_sim_result_start(w.r, 0) == 0);
    assert_true(topo_sim_result_start(w.r, 1) == 10);
    assert_true(topo_sim_result_start(w.r, 2) == 2);
    assert_true(topo_sim_result_start(w.r, 3) == 20);
    done(&w);
}

static void test_policies__held_preferred(void **state)
{
    (void)state;
    world w;
    /* b and d are busy for the whole run; e (1 GPU, rack r3) takes the
     * small job for 1000 s (least free capacity first), so something runs.
     * 2 x 8 fits no rack: preferred, it spreads over a and c at once; held
     * for 50 s as required, it starts at 51. */
    static const sim_test_node n[] = {{"a", "r1", 8, 0}, {"b", "r1", 8, 8}, {"c", "r2", 8, 0},
                                      {"d", "r2", 8, 8}, {"e", "r3", 1, 0}};
    run(&w, n, 5, "0,small,1,1,1000\n1,big,2,8,100," PREF_RACK "\n", TOPO_SIM_TOPO, NULL);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 0, "e"), 1);
    assert_true(topo_sim_result_start(w.r, 1) == 1);
    topo_sim_run_opts o;
    memset(&o, 0, sizeof(o));
    o.relax_after = 50;
    rerun(&w, TOPO_SIM_TOPO, &o);
    assert_true(topo_sim_result_start(w.r, 1) == 51);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 1, "a"), 1);
    assert_int_equal(sim_test_pods_on(w.r, w.c, 1, "c"), 1);
    done(&w);
}

static void test_policies__deterministic(void **state)
{
    (void)state;
    world w;
    topo_sim_result *first = NULL;
    topo_err err = TOPO_ERR_INIT;
    run(&w, four_free, 4, "0,j1,3,2,10\n1,j2,2,3,10\n2,j3,1,5,10\n", TOPO_SIM_RANDOM, NULL);
    assert_int_equal(topo_sim_run(&first, w.c, w.t, TOPO_SIM_RANDOM, NULL, &err), 0);
    for (size_t j = 0; j < 3; j++) {
        const topo_sim_slot *x, *y;
        size_t nx = topo_sim_result_placement(w.r, j, &x);
        assert_int_equal(nx, topo_sim_result_placement(first, j, &y));
        assert_memory_equal(x, y, nx * sizeof(*x));
    }
    topo_sim_result_free(first);
    done(&w);
}

static void test_policies__bad_level(void **state)
{
    (void)state;
    world w;
    topo_sim_result *r = NULL;
    topo_err err = TOPO_ERR_INIT;
    run(&w, four_free, 4, "0,j1,1,2,10\n", TOPO_SIM_TOPO, NULL);
    static const char csv[] = "0,j1,2,2,10,kueue.x-k8s.io/podset-required-topology=zone\n";
    assert_int_equal(topo_sim_trace_parse_csv(w.t, csv, strlen(csv), "t.csv", &err), 0);
    assert_int_equal(topo_sim_run(&r, w.c, w.t, TOPO_SIM_TOPO, NULL, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "job j1: the level zone is not one of the cluster's levels");
    assert_null(r);
    done(&w);
}

static void test_policies__empty_trace(void **state)
{
    (void)state;
    world w;
    /* The fuzzer's first find: no jobs at all (a comment only). */
    run(&w, four_free, 4, "# nothing\n", TOPO_SIM_KUBE_DEFAULT, NULL);
    const topo_sim_metrics *m = topo_sim_result_metrics(w.r);
    assert_int_equal(m->jobs, 0);
    assert_int_equal(m->placed, 0);
    assert_true(m->utilisation == 0 && m->wait.p99 == 0 && m->slowdown_mean == 1);
    done(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policies__kube_default_least_allocated),
        cmocka_unit_test(test_policies__kube_default_random_ties),
        cmocka_unit_test(test_policies__kube_binpack_most_allocated),
        cmocka_unit_test(test_policies__first_fit_fabric_order),
        cmocka_unit_test(test_policies__slurm_tree_tightest_rack),
        cmocka_unit_test(test_policies__first_fit_packs),
        cmocka_unit_test(test_policies__best_fit),
        cmocka_unit_test(test_policies__random_uniform_over_fitting),
        cmocka_unit_test(test_policies__gang_all_or_nothing),
        cmocka_unit_test(test_policies__topo_required_rack),
        cmocka_unit_test(test_policies__auto_level),
        cmocka_unit_test(test_policies__fifo_and_backfill),
        cmocka_unit_test(test_policies__held_preferred),
        cmocka_unit_test(test_policies__deterministic),
        cmocka_unit_test(test_policies__bad_level),
        cmocka_unit_test(test_policies__empty_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
