/* Tests for the job-level metrics (lib/simulate/metrics.c, common.c): the
 * per-job outcomes, the metrics over a mask of jobs, the same-jobs view of
 * two policies, job completion time, goodput and the warm-up, on traces
 * worked out by hand. */
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

#define NEAR(x, want) assert_true(fabs((x) - (want)) < 1e-9)

/* test_metrics.c's cluster: racks r1 {a, b} and r2 {c, d} of 8-GPU nodes
 * with 7, 6, 8 and 5 free (26). Under best-fit (worked out there):
 *
 *   job1 t=0  3 x 4, 100 s: a, b, d (both racks): slowdown 1 + 0.3 x 3.4 =
 *             2.02; multi-node, not tight; ends 100.
 *   job2 t=10 2 x 8, 50 s: never fits.
 *   job3 t=20 1 x 2, 30 s: b; slowdown 1; ends 50.
 *   job4 t=30 2 x 3, 40 s: a and c (both racks): 1 + 0.15 x 3.4 = 1.51;
 *             ends 70.
 *   job5 t=40 1 x 6, 10 s: waits for job4, starts 70 on c, ends 80. */
static const char trace_csv[] = "0,job1,3,4,100\n"
                                "10,job2,2,8,50\n"
                                "20,job3,1,2,30\n"
                                "30,job4,2,3,40\n"
                                "40,job5,1,6,10\n";

static const sim_test_node nodes[] = {
    {"a", "r1", 8, 1}, {"b", "r1", 8, 2}, {"c", "r2", 8, 0}, {"d", "r2", 8, 3}};

typedef sim_test_world world; /* its r unused: the tests keep their results */

static void world_make(world *w, const sim_test_node *n, size_t nn, const char *csv)
{
    topo_err err = TOPO_ERR_INIT;
    if (sim_test_world_make(w, n, nn, csv, &err) < 0)
        fail_msg("%s", err.text);
}

static void world_free(world *w)
{
    sim_test_world_free(w);
}

static topo_sim_result *run(world *w, topo_sim_policy p, double warmup, int apply_slowdown)
{
    topo_sim_run_opts o;
    topo_err err = TOPO_ERR_INIT;
    topo_sim_result *r = NULL;
    memset(&o, 0, sizeof(o));
    /* The figures above are worked out with a cross-rack cost of 4.4, pinned
     * here so that they do not move with the default cost model. */
    o.cost[TOPO_SIM_TIER_CLUSTER] = 4.4;
    o.warmup = warmup;
    o.apply_slowdown = apply_slowdown;
    if (topo_sim_run(&r, w->c, w->t, p, &o, &err) < 0)
        fail_msg("run: %s", err.text);
    return r;
}

static void test_job_metrics__outcomes(void **state)
{
    (void)state;
    world w;
    world_make(&w, nodes, 4, trace_csv);
    topo_sim_result *r = run(&w, TOPO_SIM_BEST_FIT, 0, 0);
    topo_sim_outcome o;
    assert_int_equal(topo_sim_result_job_count(r), 5);
    assert_int_equal(topo_sim_result_job(r, 0, &o), 0);
    NEAR(o.arrive, 0);
    NEAR(o.start, 0);
    NEAR(o.end, 100);
    NEAR(o.slowdown, 2.02);
    assert_int_equal(o.gpus, 12);
    NEAR(o.work, 1200);
    assert_int_equal(o.multi_node, 1);
    assert_int_equal(o.tight, 0); /* rack r2 could hold it: counts, not tight */
    assert_int_equal(o.tight_now, 0);
    assert_int_equal(o.spanned[0], 2); /* racks */
    assert_int_equal(o.spanned[1], 3); /* nodes */
    assert_int_equal(topo_sim_result_job(r, 1, &o), 0);
    NEAR(o.start, -1);
    NEAR(o.end, -1);
    assert_int_equal(o.spanned[1], 0);
    assert_int_equal(topo_sim_result_job(r, 4, &o), 0);
    NEAR(o.start, 70);
    NEAR(o.end, 80);
    assert_int_equal(o.multi_node, 0);
    assert_int_equal(o.tight, -1); /* single-node: does not count */
    assert_int_equal(topo_sim_result_job(r, 5, &o), TOPO_EINVALID);
    topo_sim_result_free(r);
    world_free(&w);
}

static void assert_job_figures_equal(const topo_sim_metrics *a, const topo_sim_metrics *b)
{
    assert_int_equal(a->placed, b->placed);
    assert_int_equal(a->multi_node, b->multi_node);
    assert_true(a->tight_share == b->tight_share);
    assert_true(a->tight_share_now == b->tight_share_now);
    for (size_t l = 0; l < TOPO_MAX_LEVELS; l++)
        assert_true(a->spanned[l] == b->spanned[l]);
    assert_memory_equal(&a->wait, &b->wait, sizeof(a->wait));
    assert_memory_equal(a->wait_class, b->wait_class, sizeof(a->wait_class));
    assert_true(a->slowdown_mean == b->slowdown_mean);
    assert_true(a->slowdown_p99 == b->slowdown_p99);
    assert_true(a->jct_mean == b->jct_mean);
    assert_true(a->jct_p99 == b->jct_p99);
}

static void test_job_metrics__mask(void **state)
{
    (void)state;
    world w;
    world_make(&w, nodes, 4, trace_csv);
    topo_sim_result *r = run(&w, TOPO_SIM_BEST_FIT, 0, 0);
    const topo_sim_metrics *all = topo_sim_result_metrics(r);
    topo_sim_metrics m;
    topo_err err = TOPO_ERR_INIT;

    /* The placed jobs: every job-level figure as the run's own. */
    unsigned char placed[5] = {1, 0, 1, 1, 1};
    assert_int_equal(topo_sim_metrics_over(r, placed, &m, &err), 0);
    assert_job_figures_equal(&m, all);
    assert_int_equal(m.jobs, 4);
    assert_int_equal(m.unplaceable, 0);
    NEAR(m.utilisation, all->utilisation); /* window figures are the run's */

    /* job1 and job5 only: waits 0 and 30, completions 100 and 40. */
    unsigned char two[5] = {1, 0, 0, 0, 1};
    assert_int_equal(topo_sim_metrics_over(r, two, &m, &err), 0);
    assert_int_equal(m.jobs, 2);
    assert_int_equal(m.placed, 2);
    assert_int_equal(m.multi_node, 1);
    NEAR(m.spanned[0], 2);
    NEAR(m.wait.p99, 30);
    NEAR(m.wait.mean, 15);
    assert_int_equal(m.wait_class[0].jobs, 1);
    assert_int_equal(m.wait_class[1].jobs, 1);
    NEAR(m.jct_mean, 70);
    NEAR(m.jct_p99, 100);
    NEAR(m.slowdown_mean, (2.02 * 1200 + 60) / 1260);
    topo_sim_result_free(r);
    world_free(&w);
}

static void test_job_metrics__jct(void **state)
{
    (void)state;
    world w;
    world_make(&w, nodes, 4, trace_csv);
    topo_sim_result *r = run(&w, TOPO_SIM_BEST_FIT, 0, 0);
    const topo_sim_metrics *m = topo_sim_result_metrics(r);
    /* Completion - arrival: 100, 30, 40, 40 (job5: 80 - 40). */
    NEAR(m->jct_mean, 210.0 / 4);
    NEAR(m->jct_p99, 100);
    /* Window [0, 40], 26 GPUs: job1 12 GPUs x 40 s / 2.02, job3 2 x 20,
     * job4 6 x 10 / 1.51; job5 starts after it. */
    NEAR(m->goodput, (12 * 40 / 2.02 + 2 * 20 + 6 * 10 / 1.51) / (26 * 40));
    topo_sim_result_free(r);

    /* Stretched: job1 runs 202 s, job4 60.4 (ends 90.4), so job5 starts at
     * 90.4 and ends 100.4: 202, 30, 60.4, 60.4. */
    r = run(&w, TOPO_SIM_BEST_FIT, 0, 1);
    m = topo_sim_result_metrics(r);
    NEAR(m->jct_mean, (202 + 30 + 60.4 + 60.4) / 4);
    NEAR(m->jct_p99, 202);
    topo_sim_result_free(r);
    world_free(&w);
}

static void test_job_metrics__goodput_stretched(void **state)
{
    (void)state;
    /* One 12-GPU job across both racks (slowdown 2.02) and a 1-GPU tick at
     * t=300 that makes the window [0, 300]. Unstretched the job runs 100 s
     * and is worth 12 x 100 / 2.02 GPU-seconds; stretched it runs 202 s and
     * does its whole work, 1,200: goodput is that over 26 x 300. */
    static const char csv[] = "0,big,3,4,100\n300,tick,1,1,1\n";
    world w;
    world_make(&w, nodes, 4, csv);
    topo_sim_result *plain = run(&w, TOPO_SIM_BEST_FIT, 0, 0);
    topo_sim_result *stretched = run(&w, TOPO_SIM_BEST_FIT, 0, 1);
    NEAR(topo_sim_result_metrics(plain)->goodput, 12 * 100 / 2.02 / (26 * 300));
    NEAR(topo_sim_result_metrics(stretched)->goodput, 1200.0 / (26 * 300));
    NEAR(topo_sim_result_metrics(stretched)->utilisation, 12 * 202.0 / (26 * 300));
    NEAR(topo_sim_result_metrics(stretched)->jct_mean, (202 + 1) / 2.0);
    topo_sim_result_free(plain);
    topo_sim_result_free(stretched);
    world_free(&w);
}

/* A warmup of the span as it prints (3801.756) where the times do not add
 * up exactly in binary (3818.717 - 16.961): a window of one instant, its
 * averages 0, not figures over 1e-13 s; a step too fine for the timeline to
 * cover the span is refused, not cut short. */
static void test_job_metrics__window_edges(void **state)
{
    (void)state;
    static const char csv[] = "16.961,a,1,4,5000\n3818.717,b,1,4,100\n";
    world w;
    world_make(&w, nodes, 4, csv);
    topo_sim_result *r = run(&w, TOPO_SIM_BEST_FIT, 3801.756, 0);
    const topo_sim_metrics *m = topo_sim_result_metrics(r);
    assert_true(m->window_start == m->window_end);
    assert_true(m->utilisation == 0 && m->fragmentation == 0 && m->goodput == 0);
    assert_int_equal(m->jobs, 1);
    topo_sim_result_free(r);

    topo_sim_run_opts o;
    topo_err err = TOPO_ERR_INIT;
    memset(&o, 0, sizeof(o));
    o.timeline_step = 0.5; /* 7,604 points for 3,801.756 s */
    assert_int_equal(topo_sim_run(&r, w.c, w.t, TOPO_SIM_BEST_FIT, &o, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "--timeline-step: 0.5 s would need more than 4000 points"));
    o.timeline_step = 1; /* 3,802 points */
    assert_int_equal(topo_sim_run(&r, w.c, w.t, TOPO_SIM_BEST_FIT, &o, &err), 0);
    topo_sim_result_free(r);
    world_free(&w);
}

static void test_job_metrics__warmup(void **state)
{
    (void)state;
    world w;
    world_make(&w, nodes, 4, trace_csv);
    topo_sim_result *r = run(&w, TOPO_SIM_BEST_FIT, 25, 0);
    const topo_sim_metrics *m = topo_sim_result_metrics(r);
    /* The window is [25, 40]: only job4 (t=30) and job5 (t=40) count. */
    NEAR(m->window_start, 25);
    NEAR(m->window_end, 40);
    assert_int_equal(m->jobs, 2);
    assert_int_equal(m->placed, 2);
    assert_int_equal(m->unplaceable, 0); /* job2 arrived before the window */
    assert_int_equal(m->multi_node, 0);
    NEAR(m->wait.p99, 30);
    NEAR(m->wait.mean, 15);
    NEAR(m->jct_mean, 40);
    /* Used 14 on [25, 30), 20 on [30, 40]; job2 waits throughout. */
    NEAR(m->utilisation, (14 * 5 + 20 * 10) / (26.0 * 15));
    NEAR(m->queue_length, 1);
    NEAR(m->goodput, (12 * 15 / 2.02 + 2 * 15 + 6 * 10 / 1.51) / (26 * 15));
    /* The timeline still starts at the first arrival. */
    const topo_sim_sample *s;
    assert_true(topo_sim_result_timeline(r, &s) > 0);
    NEAR(s[0].t, 0);
    topo_sim_result_free(r);

    /* The whole span is allowed (a window of one instant); more is not. */
    r = run(&w, TOPO_SIM_BEST_FIT, 40, 0);
    assert_int_equal(topo_sim_result_metrics(r)->jobs, 1);
    topo_sim_result_free(r);
    topo_sim_run_opts o;
    topo_err err = TOPO_ERR_INIT;
    memset(&o, 0, sizeof(o));
    o.warmup = 41;
    assert_int_equal(topo_sim_run(&r, w.c, w.t, TOPO_SIM_BEST_FIT, &o, &err), TOPO_EINVALID);
    assert_null(r);
    assert_non_null(strstr(err.text, "--warmup: 41 s is longer than the arrivals' span (40 s"));
    world_free(&w);
}

/* Every node has 4 of 8 GPUs free (16 in all, 8 a rack).
 *
 *   j1 t=0  1 x 4, 10 s: both policies place it at once.
 *   j2 t=5  3 x 4, 10 s, required rack: no rack has 12 free, so topo
 *           queues it and finds at t=10, nothing running, that it never
 *           fits; best-fit ignores the request and places it (ends 15).
 *   j3 t=12 2 x 4, 10 s: topo has everything free: no wait, ends 22;
 *           best-fit has one node with 4 free until j2 ends: waits 3 s,
 *           ends 25.
 *
 * Both placed j1 and j3: 2 common jobs. */
static const char common_csv[] =
    "0,j1,1,4,10\n"
    "5,j2,3,4,10,kueue.x-k8s.io/podset-required-topology=" SIM_TEST_RACK "\n"
    "12,j3,2,4,10\n";

static const sim_test_node half_used[] = {
    {"a", "r1", 8, 4}, {"b", "r1", 8, 4}, {"c", "r2", 8, 4}, {"d", "r2", 8, 4}};

static void test_job_metrics__common(void **state)
{
    (void)state;
    world w;
    world_make(&w, half_used, 4, common_csv);
    topo_sim_result *r[2] = {run(&w, TOPO_SIM_TOPO, 0, 0), run(&w, TOPO_SIM_BEST_FIT, 0, 0)};
    const topo_sim_metrics *topo = topo_sim_result_metrics(r[0]);
    const topo_sim_metrics *bf = topo_sim_result_metrics(r[1]);
    topo_sim_metrics m[2];
    size_t jobs = 0;
    topo_err err = TOPO_ERR_INIT;

    /* Each policy's own figures: over the jobs it placed. */
    assert_int_equal(topo->placed, 2);
    assert_int_equal(topo->unplaceable, 1);
    assert_int_equal(bf->placed, 3);
    assert_int_equal(bf->multi_node, 1);
    NEAR(bf->wait.mean, 1);
    NEAR(bf->jct_mean, (10 + 10 + 13) / 3.0);

    assert_int_equal(topo_sim_common(m, &jobs, (const topo_sim_result *const *)r, 2, &err), 0);
    assert_int_equal(jobs, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(m[i].jobs, 2);
        assert_int_equal(m[i].placed, 2);
        assert_int_equal(m[i].unplaceable, 0);
        assert_int_equal(m[i].multi_node, 0);
    }
    assert_string_equal(m[0].policy, "topo");
    NEAR(m[0].wait.p99, 0);
    NEAR(m[0].jct_mean, 10);
    assert_string_equal(m[1].policy, "best-fit");
    NEAR(m[1].wait.p99, 3);
    NEAR(m[1].wait.mean, 1.5);
    NEAR(m[1].jct_mean, (10 + 13) / 2.0);
    NEAR(m[1].jct_p99, 13);

    /* In -o json: "common" beside "policies", job-level keys only. */
    topo_sim_info info = {"c", "t", 1, 4, 16, NULL, NULL, NULL, NULL};
    char *json = NULL;
    assert_int_equal(topo_sim_format_json(&json, &info, (const topo_sim_result *const *)r, 2,
                                          &err),
                     0);
    const char *common = strstr(json, "\"common\": {\n    \"jobs\": 2,");
    assert_non_null(common);
    assert_non_null(strstr(common, "\"jct_mean_s\": 11.5"));
    assert_null(strstr(common, "utilisation"));
    free(json);

    /* The table: unplaced per policy and the common block. */
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_sim_format_table(&b, (const topo_sim_result *const *)r, 2), 0);
    assert_non_null(strstr(b.ptr, "over the 2 jobs every policy placed\n"
                                  "  left unplaced (not counted)              1             0\n"
                                  "  queueing delay p99                     0 s           3 s\n"));
    topo_buf_dispose(&b);

    topo_sim_result_free(r[0]);
    topo_sim_result_free(r[1]);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_metrics__outcomes),
        cmocka_unit_test(test_job_metrics__mask),
        cmocka_unit_test(test_job_metrics__jct),
        cmocka_unit_test(test_job_metrics__goodput_stretched),
        cmocka_unit_test(test_job_metrics__warmup),
        cmocka_unit_test(test_job_metrics__window_edges),
        cmocka_unit_test(test_job_metrics__common),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
