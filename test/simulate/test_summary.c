/* Tests for lib/simulate/interval.c and summary.c: the t-interval on
 * samples worked out by hand, and a summary of two policies over three
 * seeds of generated jobs against each seed's own run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "simulate/sim_test.h"
#include "topo/buf.h"

#define SEEDS 3
#define NEAR(x, want, tol) assert_true(fabs((x) - (want)) <= (tol))
#define NPOL 2

static const sim_test_node nodes[] = {{"a", "r1", 8, 0}, {"b", "r1", 8, 0}, {"c", "r1", 8, 0},
                                      {"d", "r2", 8, 0}, {"e", "r2", 8, 0}, {"f", "r2", 8, 0}};
static const topo_sim_policy policies[NPOL] = {TOPO_SIM_TOPO, TOPO_SIM_RANDOM};

typedef struct fixture {
    topo_snapshot *snap;
    topo_sim_cluster *c;
    topo_sim_trace *t[SEEDS];
    topo_sim_result *r[SEEDS][NPOL];
    topo_sim_result *st[SEEDS][NPOL]; /* the same runs with the slowdown applied */
} fixture;

static topo_sim_run_opts run_opts(uint64_t seed)
{
    topo_sim_run_opts o;
    memset(&o, 0, sizeof(o));
    o.seed = seed;
    o.timeline_step = 600; /* one step for every seed: points line up */
    return o;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    topo_err err = TOPO_ERR_INIT;
    if (f == NULL || (f->snap = sim_test_snapshot(nodes, 6)) == NULL ||
        topo_sim_cluster_create(&f->c, f->snap, NULL, &err) < 0)
        return -1;
    for (size_t k = 0; k < SEEDS; k++) {
        topo_sim_gen_opts g;
        memset(&g, 0, sizeof(g));
        g.jobs = 80;
        g.seed = k + 1;
        g.capacity = topo_sim_cluster_capacity(f->c);
        g.gpus_per_node = 8;
        if (topo_sim_trace_create(&f->t[k], &err) < 0 ||
            topo_sim_trace_generate(f->t[k], &g, &err) < 0)
            return -1;
        topo_sim_run_opts o = run_opts(k + 1);
        for (size_t p = 0; p < NPOL; p++)
            if (topo_sim_run(&f->r[k][p], f->c, f->t[k], policies[p], &o, &err) < 0)
                return -1;
        o.apply_slowdown = 1;
        for (size_t p = 0; p < NPOL; p++)
            if (topo_sim_run(&f->st[k][p], f->c, f->t[k], policies[p], &o, &err) < 0)
                return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (size_t k = 0; k < SEEDS; k++) {
        for (size_t p = 0; p < NPOL; p++) {
            topo_sim_result_free(f->r[k][p]);
            topo_sim_result_free(f->st[k][p]);
        }
        topo_sim_trace_free(f->t[k]);
    }
    topo_sim_cluster_free(f->c);
    topo_snapshot_free(f->snap);
    free(f);
    return 0;
}

/* A summary of seeds first..first+n-1. */
static topo_sim_summary *summary(const fixture *f, size_t n)
{
    topo_sim_summary *s = NULL;
    assert_int_equal(topo_sim_summary_create(&s, NULL), 0);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(topo_sim_summary_add(s, k + 1, (const topo_sim_result *const *)f->r[k],
                                              (const topo_sim_result *const *)f->st[k], NPOL,
                                              NULL),
                         0);
    return s;
}

/* 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303, half 4.303 / sqrt(3). */
static void test_summary__interval_known_samples(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3};
    double mean, half;
    assert_int_equal(topo_sim_mean_ci95(&mean, &half, x, 3), 1);
    NEAR(mean, 2, 1e-12);
    NEAR(half, 2.484338208, 1e-9);
    /* One sample: the mean, no interval. */
    assert_int_equal(topo_sim_mean_ci95(&mean, &half, x + 2, 1), 0);
    NEAR(mean, 3, 1e-12);
    NEAR(half, 0, 0);
    assert_int_equal(topo_sim_mean_ci95(&mean, &half, x, 0), TOPO_EINVALID);
    /* 20 zeros and 20 ones, past the table: s^2 = 10 / 39, t(0.975, 39)
     * = 2.022691 (the expansion). */
    double y[40];
    for (int i = 0; i < 40; i++)
        y[i] = i % 2;
    assert_int_equal(topo_sim_mean_ci95(&mean, &half, y, 40), 1);
    NEAR(mean, 0.5, 1e-12);
    NEAR(half, 2.022691 * sqrt(10.0 / 39 / 40), 1e-6);
    /* Three equal values that a plain sum / 3 rounds: the value itself,
     * exactly, and no interval (a policy without random choices). */
    const double same[] = {31062.122564316458, 31062.122564316458, 31062.122564316458};
    assert_int_equal(topo_sim_mean_ci95(&mean, &half, same, 3), 1);
    assert_true(mean == same[0]);
    assert_true(half == 0);
}

/* Each metric's mean and interval are those of the three seeds' runs. */
static void test_summary__three_seeds(void **state)
{
    fixture *f = *state;
    topo_sim_summary *s = summary(f, SEEDS);
    const uint64_t *seeds;
    assert_int_equal(topo_sim_summary_seeds(s, &seeds), SEEDS);
    assert_int_equal(seeds[2], 3);
    assert_int_equal(topo_sim_summary_policy_count(s), NPOL);
    assert_string_equal(topo_sim_summary_policy(s, 1), "random");
    for (size_t p = 0; p < NPOL; p++) {
        double util[SEEDS], rack[SEEDS], p99[SEEDS], window[SEEDS], placed[SEEDS];
        for (size_t k = 0; k < SEEDS; k++) {
            const topo_sim_metrics *m = topo_sim_result_metrics(f->r[k][p]);
            util[k] = m->utilisation;
            rack[k] = m->spanned[0];
            p99[k] = m->wait_class[0].p99;
            window[k] = m->window_end - m->window_start;
            placed[k] = (double)m->placed;
        }
        static const char *const names[] = {"utilisation", "domains_spanned." SIM_TEST_RACK,
                                            "queue_by_gpus.1-8.p99_s", "window_s", "placed"};
        const double *want[] = {util, rack, p99, window, placed};
        for (size_t i = 0; i < 5; i++) {
            double mean, half, got, lo, hi;
            assert_int_equal(topo_sim_mean_ci95(&mean, &half, want[i], SEEDS), 1);
            assert_int_equal(topo_sim_summary_metric(s, p, names[i], &got, &lo, &hi), 1);
            NEAR(got, mean, 1e-9);
            NEAR(lo, mean - half, 1e-9);
            NEAR(hi, mean + half, 1e-9);
        }
    }
    /* The seeds differ: some interval is not empty. */
    double m, lo, hi;
    assert_int_equal(topo_sim_summary_metric(s, 0, "utilisation", &m, &lo, &hi), 1);
    assert_true(hi > lo);
    assert_int_equal(topo_sim_summary_metric(s, 0, "no_such_metric", &m, &lo, &hi),
                     TOPO_ENOTFOUND);
    assert_int_equal(topo_sim_summary_metric(s, 0, "domains_spanned.zone", &m, &lo, &hi),
                     TOPO_ENOTFOUND);
    assert_int_equal(topo_sim_summary_metric(s, NPOL, "utilisation", &m, &lo, &hi),
                     TOPO_ENOTFOUND);
    topo_sim_summary_free(s);
}

/* Point k of the mean timeline is the mean of the seeds' points k, as long
 * as the shortest seed's timeline. */
static void test_summary__timeline(void **state)
{
    fixture *f = *state;
    topo_sim_summary *s = summary(f, SEEDS);
    const topo_sim_sample *mean, *lo, *hi, *x[SEEDS];
    size_t shortest = SIZE_MAX;
    for (size_t k = 0; k < SEEDS; k++) {
        size_t n = topo_sim_result_timeline(f->r[k][1], &x[k]);
        shortest = n < shortest ? n : shortest;
    }
    assert_true(shortest > 2);
    assert_int_equal(topo_sim_summary_timeline(s, 1, &mean, &lo, &hi), shortest);
    assert_non_null(lo);
    for (size_t i = 0; i < shortest; i++) {
        double u[SEEDS], q[SEEDS], want, half;
        for (size_t k = 0; k < SEEDS; k++) {
            u[k] = x[k][i].utilisation;
            q[k] = x[k][i].queue_length;
        }
        NEAR(mean[i].t, x[0][i].t, 0);
        (void)topo_sim_mean_ci95(&want, &half, u, SEEDS);
        NEAR(mean[i].utilisation, want, 1e-9);
        NEAR(hi[i].utilisation, want + half, 1e-9);
        (void)topo_sim_mean_ci95(&want, &half, q, SEEDS);
        NEAR(lo[i].queue_length, want - half, 1e-9);
    }
    topo_sim_summary_free(s);
    /* One seed: its own timeline, no interval. */
    s = summary(f, 1);
    assert_int_equal(topo_sim_summary_timeline(s, 0, &mean, &lo, &hi),
                     topo_sim_result_timeline(f->r[0][0], &x[0]));
    assert_null(lo);
    assert_null(hi);
    NEAR(mean[3].fragmentation, x[0][3].fragmentation, 0);
    topo_sim_summary_free(s);
}

/* One seed: the summary's table is the run's; the same seeds give the
 * same bytes; JSON has ci95 only with several seeds. */
static void test_summary__outputs(void **state)
{
    fixture *f = *state;
    topo_sim_info info = {"c", "j", 1, 6, 48, NULL, NULL, NULL, NULL};
    topo_buf a = TOPO_BUF_INIT(0), b = TOPO_BUF_INIT(0);
    char *ja = NULL, *jb = NULL;
    topo_sim_summary *s = summary(f, 1);
    assert_int_equal(topo_sim_format_table(&a, (const topo_sim_result *const *)f->r[0], NPOL), 0);
    assert_int_equal(topo_sim_format_stretched(&a, (const topo_sim_result *const *)f->r[0],
                                               (const topo_sim_result *const *)f->st[0], NPOL),
                     0);
    assert_int_equal(topo_sim_format_summary_table(&b, s), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.ptr, b.ptr, a.len);
    assert_int_equal(topo_sim_format_summary_json(&ja, &info, s, NULL), 0);
    assert_null(strstr(ja, "ci95"));
    assert_non_null(strstr(ja, "\"seeds\""));
    free(ja);
    topo_sim_summary_free(s);

    topo_sim_summary *s1 = summary(f, SEEDS), *s2 = summary(f, SEEDS);
    assert_int_equal(topo_sim_format_summary_json(&ja, &info, s1, NULL), 0);
    assert_int_equal(topo_sim_format_summary_json(&jb, &info, s2, NULL), 0);
    assert_string_equal(ja, jb);
    assert_non_null(strstr(ja, "\"ci95\": {\n        \"jobs\": [\n"));
    assert_non_null(strstr(ja, "\"placed\": 80.0,"));
    free(ja);
    free(jb);
    topo_buf_dispose(&a);
    topo_buf_dispose(&b);
    assert_int_equal(topo_sim_format_summary_table(&a, s1), 0);
    assert_non_null(strstr(a.ptr, " ± "));
    topo_buf_dispose(&a);
    topo_sim_summary_free(s1);
    topo_sim_summary_free(s2);
}

/* The same-jobs view and the stretched runs: per seed what topo_sim_common
 * and the stretched run give, averaged with their own intervals. */
static void test_summary__common_and_stretched(void **state)
{
    fixture *f = *state;
    topo_sim_summary *s = summary(f, SEEDS);
    static const char *const keys[] = {"jct_mean_s", "queue_p99_s", "placed"};
    double mean, lo, hi;
    for (size_t p = 0; p < NPOL; p++) {
        double common[3][SEEDS], st[SEEDS], want, half;
        for (size_t k = 0; k < SEEDS; k++) {
            topo_sim_metrics m[NPOL];
            size_t jobs;
            assert_int_equal(topo_sim_common(m, &jobs, (const topo_sim_result *const *)f->r[k],
                                             NPOL, NULL),
                             0);
            common[0][k] = m[p].jct_mean;
            common[1][k] = m[p].wait.p99;
            common[2][k] = (double)m[p].placed;
            st[k] = topo_sim_result_metrics(f->st[k][p])->jct_mean;
        }
        for (int i = 0; i < 3; i++) {
            char name[64];
            snprintf(name, sizeof name, "common.%s", keys[i]);
            assert_int_equal(topo_sim_summary_metric(s, p, name, &mean, &lo, &hi), 1);
            assert_true(topo_sim_mean_ci95(&want, &half, common[i], SEEDS) >= 0);
            NEAR(mean, want, 1e-9);
            NEAR(hi - mean, half, 1e-9);
        }
        assert_int_equal(topo_sim_summary_metric(s, p, "stretched.jct_mean_s", &mean, &lo, &hi),
                         1);
        assert_true(topo_sim_mean_ci95(&want, &half, st, SEEDS) >= 0);
        NEAR(mean, want, 1e-9);
        NEAR(hi - mean, half, 1e-9);
        /* Stretching changes the figure: the stretched mean is not the run's. */
        assert_int_equal(topo_sim_summary_metric(s, p, "jct_mean_s", &want, &lo, &hi), 1);
        assert_true(mean > want);
    }
    /* Not in -o json: the window's figures over the same jobs, the
     * stretched run's other keys. */
    assert_int_equal(topo_sim_summary_metric(s, 0, "common.utilisation", &mean, &lo, &hi),
                     TOPO_ENOTFOUND);
    assert_int_equal(topo_sim_summary_metric(s, 0, "stretched.tight_share", &mean, &lo, &hi),
                     TOPO_ENOTFOUND);
    topo_sim_summary_free(s);
}

/* Runs that do not line up are refused and leave the summary as it was. */
static void test_summary__mismatches(void **state)
{
    fixture *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_sim_summary *s = summary(f, 1);
    const topo_sim_result *swapped[NPOL] = {f->r[1][1], f->r[1][0]};
    assert_int_equal(topo_sim_summary_add(s, 2, swapped, NULL, NPOL, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "other policies"));
    assert_int_equal(topo_sim_summary_add(s, 1, (const topo_sim_result *const *)f->r[1],
                                          (const topo_sim_result *const *)f->st[1], NPOL, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "seed 1 added twice"));
    /* Another timeline step. */
    topo_sim_run_opts o = run_opts(2);
    topo_sim_result *other = NULL;
    o.timeline_step = 900;
    assert_int_equal(topo_sim_run(&other, f->c, f->t[1], TOPO_SIM_TOPO, &o, NULL), 0);
    const topo_sim_result *mixed[NPOL] = {other, f->r[1][1]};
    assert_int_equal(topo_sim_summary_add(s, 2, mixed, NULL, NPOL, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "timeline_step"));
    topo_sim_result_free(other);
    /* The first seed had stretched runs: every seed must. */
    assert_int_equal(topo_sim_summary_add(s, 2, (const topo_sim_result *const *)f->r[1], NULL,
                                          NPOL, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "has no stretched runs"));
    const uint64_t *seeds;
    assert_int_equal(topo_sim_summary_seeds(s, &seeds), 1);
    topo_sim_summary_free(s);
    topo_sim_summary_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary__interval_known_samples),
        cmocka_unit_test(test_summary__three_seeds),
        cmocka_unit_test(test_summary__timeline),
        cmocka_unit_test(test_summary__outputs),
        cmocka_unit_test(test_summary__common_and_stretched),
        cmocka_unit_test(test_summary__mismatches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
