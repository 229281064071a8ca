/* Tests for lib/simulate/metrics.c: every metric of a run whose placements
 * are worked out by hand (best-fit, whose choices are unique here). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "simulate/sim_test.h"
#include "topo/buf.h"

/* Racks r1 {a, b} and r2 {c, d} of 8-GPU nodes; a pod holds 1 GPU of a, 2
 * of b and 3 of d for the whole run: 7, 6, 8 and 5 free, 26 in all.
 *
 *   job1 t=0  3 x 4 GPUs, 100 s: best fit d (5), b (6), a (7): a3 b2 c8 d1.
 *             12 GPUs is more than a node: multi-node. Empty, rack r2 (c
 *             takes 2 pods, d 1) could hold it: it spans both racks, not
 *             tight; at t=0 the cluster is as empty: not tight either.
 *   job2 t=10 2 x 8, 50 s: only c has 8 free: waits; fails again whenever
 *             jobs end, and when job1 ends at t=100 nothing runs: it never
 *             fits.
 *   job3 t=20 1 x 2, 30 s: b (2) -> b0, ends at 50.
 *   job4 t=30 2 x 3, 40 s: a (3) -> a0, then c (8) -> c5; 6 GPUs, one
 *             node's worth (not multi-node) but on two racks; ends at 70.
 *   job5 t=40 1 x 6, 10 s: nothing has 6: waits until job4 ends at 70,
 *             then c (8): wait 30, ends at 80.
 *
 * The window is [0, 40] (first to last arrival). */
static const char trace_csv[] = "t_arrive,job_id,pods,gpus_per_pod,duration_s\n"
                                "0,job1,3,4,100\n"
                                "10,job2,2,8,50\n"
                                "20,job3,1,2,30\n"
                                "30,job4,2,3,40\n"
                                "40,job5,1,6,10\n";

static const sim_test_node nodes[] = {
    {"a", "r1", 8, 1}, {"b", "r1", 8, 2}, {"c", "r2", 8, 0}, {"d", "r2", 8, 3}};

typedef struct fixture {
    topo_snapshot *snap;
    topo_sim_cluster *c;
    topo_sim_trace *t;
    topo_sim_result *r;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    topo_err err = TOPO_ERR_INIT;
    topo_sim_run_opts o;
    memset(&o, 0, sizeof(o));
    o.frag_pod = 4;
    if (f == NULL || (f->snap = sim_test_snapshot(nodes, 4)) == NULL ||
        topo_sim_cluster_create(&f->c, f->snap, NULL, &err) < 0 ||
        topo_sim_trace_create(&f->t, &err) < 0 ||
        topo_sim_trace_parse_csv(f->t, trace_csv, strlen(trace_csv), "t.csv", &err) < 0 ||
        topo_sim_run(&f->r, f->c, f->t, TOPO_SIM_BEST_FIT, &o, &err) < 0) {
        print_error("setup: %s\n", err.text);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    topo_sim_result_free(f->r);
    topo_sim_trace_free(f->t);
    topo_sim_cluster_free(f->c);
    topo_snapshot_free(f->snap);
    free(f);
    return 0;
}

#define NEAR(x, want) assert_true(fabs((x) - (want)) < 1e-9)

static void test_metrics__placements(void **state)
{
    fixture *f = *state;
    assert_int_equal(topo_sim_cluster_capacity(f->c), 26);
    assert_int_equal(sim_test_pods_on(f->r, f->c, 0, "a"), 1);
    assert_int_equal(sim_test_pods_on(f->r, f->c, 0, "b"), 1);
    assert_int_equal(sim_test_pods_on(f->r, f->c, 0, "d"), 1);
    assert_int_equal(sim_test_pods_on(f->r, f->c, 3, "a"), 1);
    assert_int_equal(sim_test_pods_on(f->r, f->c, 3, "c"), 1);
    assert_int_equal(sim_test_pods_on(f->r, f->c, 4, "c"), 1);
    NEAR(topo_sim_result_start(f->r, 0), 0);
    assert_true(topo_sim_result_start(f->r, 1) < 0); /* never started */
    NEAR(topo_sim_result_start(f->r, 4), 70);
}

static void test_metrics__counts_and_tightness(void **state)
{
    const topo_sim_metrics *m = topo_sim_result_metrics(((fixture *)*state)->r);
    assert_int_equal(m->jobs, 5);
    assert_int_equal(m->placed, 4);
    assert_int_equal(m->unplaceable, 1);
    assert_int_equal(m->multi_node, 1);
    NEAR(m->tight_share, 0);
    NEAR(m->tight_share_now, 0);
    assert_int_equal(m->nlevels, 2);
    NEAR(m->spanned[0], 2); /* racks */
    NEAR(m->spanned[1], 3); /* nodes */
}

static void test_metrics__fragmentation_utilisation_queue(void **state)
{
    const topo_sim_metrics *m = topo_sim_result_metrics(((fixture *)*state)->r);
    /* Used by jobs: 12 on [0,20), 14 on [20,30), 20 on [30,40]. */
    NEAR(m->utilisation, 580.0 / (26 * 40));
    /* Free on partly used nodes / free: 6/14 on [0,20), 4/12, 6/6. */
    NEAR(m->fragmentation, 220.0 / 460);
    /* Free on nodes with fewer than 4 free: 6, 6, 4, then 1 (c has 5). */
    NEAR(m->fragmentation_pod, 170.0 / 460);
    NEAR(m->queue_length, 30.0 / 40); /* job2 from t=10 */
    NEAR(m->window_start, 0);
    NEAR(m->window_end, 40);
    NEAR(m->makespan, 100);
}

static void test_metrics__waits(void **state)
{
    const topo_sim_metrics *m = topo_sim_result_metrics(((fixture *)*state)->r);
    /* Placed jobs wait 0, 0, 0 and 30 s; nearest rank. */
    assert_int_equal(m->wait.jobs, 4);
    NEAR(m->wait.p50, 0);
    NEAR(m->wait.p99, 30);
    NEAR(m->wait.mean, 7.5);
    assert_int_equal(m->wait_class[0].jobs, 3);
    NEAR(m->wait_class[0].p99, 30);
    assert_int_equal(m->wait_class[1].jobs, 1);
    NEAR(m->wait_class[1].p99, 0);
    assert_int_equal(m->wait_class[2].jobs, 0);
}

static void test_metrics__slowdown(void **state)
{
    const topo_sim_metrics *m = topo_sim_result_metrics(((fixture *)*state)->r);
    /* job1: 12 GPUs (share 0.3) across racks (cost 4.8): 2.14, weight 1200;
     * job4: 6 GPUs (0.15) across racks: 1.57, weight 240; job3 and job5 on
     * one node: 1, weights 60 and 60. */
    NEAR(m->slowdown_mean, (2.14 * 1200 + 1.57 * 240 + 60 + 60) / 1560);
    NEAR(m->slowdown_p99, 2.14);
}

static void test_metrics__timeline(void **state)
{
    fixture *f = *state;
    const topo_sim_sample *s;
    size_t n = topo_sim_result_timeline(f->r, &s);
    /* Step 40/400 = 0.1 s, from 0 to the last completion at 100. */
    assert_int_equal(n, 1000);
    NEAR(s[0].t, 0);
    NEAR(s[0].utilisation, 12.0 / 26);
    NEAR(s[350].utilisation, 20.0 / 26);
    NEAR(s[350].queue_length, 1);
    NEAR(s[350].fragmentation, 1);
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_sim_format_timeline(&b, (const topo_sim_result *const *)&f->r, 1), 0);
    assert_non_null(strstr(b.ptr, "policy,t_s,utilisation,fragmentation,fragmentation_pod,"
                                  "queue_length\nbest-fit,0.000,0.461538,0.428571,0.428571,0.000\n"));
    topo_buf_dispose(&b);
}

static int sum_free(const topo_domain_view *v, void *payload)
{
    if (v->level == 1)
        *(int64_t *)payload += v->free;
    return 0;
}

static void test_metrics__snapshot_restored(void **state)
{
    fixture *f = *state;
    topo_sim_result *r = NULL;
    topo_err err = TOPO_ERR_INIT;
    int64_t before = 0, after = 0;
    assert_int_equal(topo_snapshot_walk(f->snap, "nvidia.com/gpu", sum_free, &before), 0);
    /* topo charges its placements to the snapshot and takes them out: a
     * second run sees the same cluster and places the same way. */
    assert_int_equal(topo_sim_run(&r, f->c, f->t, TOPO_SIM_TOPO, NULL, &err), 0);
    topo_sim_result *again = NULL;
    assert_int_equal(topo_sim_run(&again, f->c, f->t, TOPO_SIM_TOPO, NULL, &err), 0);
    for (size_t j = 0; j < 5; j++) {
        const topo_sim_slot *x, *y;
        size_t nx = topo_sim_result_placement(r, j, &x), ny = topo_sim_result_placement(again, j, &y);
        assert_int_equal(nx, ny);
        if (nx > 0)
            assert_memory_equal(x, y, nx * sizeof(*x));
    }
    assert_int_equal(topo_sim_result_metrics(r)->unplaceable, 1);
    assert_int_equal(topo_snapshot_walk(f->snap, "nvidia.com/gpu", sum_free, &after), 0);
    assert_int_equal(before, 26);
    assert_int_equal(after, before);
    topo_sim_result_free(r);
    topo_sim_result_free(again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics__placements),
        cmocka_unit_test(test_metrics__counts_and_tightness),
        cmocka_unit_test(test_metrics__fragmentation_utilisation_queue),
        cmocka_unit_test(test_metrics__waits),
        cmocka_unit_test(test_metrics__slowdown),
        cmocka_unit_test(test_metrics__timeline),
        cmocka_unit_test(test_metrics__snapshot_restored),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
