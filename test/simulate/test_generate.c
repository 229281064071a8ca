/* Tests for lib/simulate's generator (generate.c, dist.c): each preset
 * reproduces its published mean and median GPUs and runtime within a few
 * per cent over 100,000 jobs; the offered load, the daily cycle, the
 * request mix, the cap at half the cluster; the same seed, the same jobs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/simulate.h"

#define JOBS 100000

static topo_sim_trace *generate(const topo_sim_gen_opts *g)
{
    topo_sim_trace *t = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_create(&t, NULL), 0);
    if (topo_sim_trace_generate(t, g, &err) < 0)
        fail_msg("%s", err.text);
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void within(const char *what, double got, double want, double tolerance)
{
    if (fabs(got - want) > tolerance * want)
        fail_msg("%s: %g, published %g (more than %.0f%% off)", what, got, want, tolerance * 100);
}

static void test_generate__presets_match_published(void **state)
{
    (void)state;
    static const char *const names[] = {"philly", "helios", "acme"};
    double *gpus = malloc(JOBS * sizeof(*gpus)), *run = malloc(JOBS * sizeof(*run));
    assert_non_null(gpus);
    assert_non_null(run);
    for (size_t p = 0; p < 3; p++) {
        const topo_sim_preset *pr = topo_sim_preset_find(names[p]);
        topo_sim_gen_opts g;
        memset(&g, 0, sizeof(g));
        g.preset = names[p];
        g.jobs = JOBS;
        g.seed = 2024;
        topo_sim_trace *t = generate(&g);
        double sg = 0, sr = 0, maxg = 0, maxr = 0;
        for (size_t i = 0; i < JOBS; i++) {
            const topo_sim_job *j = topo_sim_trace_job(t, i);
            gpus[i] = (double)j->pods * j->gpus;
            run[i] = j->duration;
            sg += gpus[i];
            sr += run[i];
            maxg = fmax(maxg, gpus[i]);
            maxr = fmax(maxr, run[i]);
        }
        char what[64];
        snprintf(what, sizeof what, "%s GPUs mean", names[p]);
        within(what, sg / JOBS, pr->gpus_mean, 0.03);
        snprintf(what, sizeof what, "%s runtime mean", names[p]);
        within(what, sr / JOBS, pr->runtime_mean, 0.03);
        snprintf(what, sizeof what, "%s GPUs median", names[p]);
        within(what, median(gpus, JOBS), pr->gpus_median, 0.001);
        snprintf(what, sizeof what, "%s runtime median", names[p]);
        within(what, median(run, JOBS), pr->runtime_median, 0.01);
        assert_true(maxg <= pr->gpus_max);
        assert_true(maxr <= pr->runtime_max);
        topo_sim_trace_free(t);
    }
    free(gpus);
    free(run);
}

static void test_generate__load_cycle_and_determinism(void **state)
{
    (void)state;
    topo_sim_gen_opts g;
    memset(&g, 0, sizeof(g));
    g.preset = "helios";
    g.jobs = 20000;
    g.seed = 7;
    g.capacity = 4096;
    g.load = 0.1; /* a span of days: the daily cycle shows */
    topo_sim_trace *t = generate(&g), *u = generate(&g);
    size_t n = topo_sim_trace_count(t), by_hour[24] = {0};
    double work = 0;
    for (size_t i = 0; i < n; i++) {
        const topo_sim_job *j = topo_sim_trace_job(t, i), *k = topo_sim_trace_job(u, i);
        assert_true(j->arrive == k->arrive && j->duration == k->duration);
        assert_true(j->pods == k->pods && j->gpus == k->gpus && j->request == k->request);
        assert_string_equal(j->id, k->id);
        if (i > 0)
            assert_true(j->arrive >= topo_sim_trace_job(t, i - 1)->arrive);
        assert_true((uint64_t)j->pods * (uint64_t)j->gpus <= 2048); /* half the cluster */
        work += (double)j->pods * j->gpus * j->duration;
        by_hour[(size_t)fmod(j->arrive / 3600, 24)]++;
    }
    /* Offered GPU-time over capacity times the span: the load. */
    double span = topo_sim_trace_job(t, n - 1)->arrive - topo_sim_trace_job(t, 0)->arrive;
    within("load", work / (4096 * span), 0.1, 0.02);
    /* Rate 1 - 0.5 cos(2 pi t / day): noon three times midnight. */
    double noon = (double)(by_hour[11] + by_hour[12]), night = (double)(by_hour[23] + by_hour[0]);
    if (!(noon > 2.3 * night && noon < 3.9 * night))
        fail_msg("noon %g, midnight %g, span %g", noon, night, span);
    g.seed = 8;
    topo_sim_trace *v = generate(&g);
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += topo_sim_trace_job(t, i)->duration == topo_sim_trace_job(v, i)->duration;
    assert_true(same < n / 2);
    topo_sim_trace_free(t);
    topo_sim_trace_free(u);
    topo_sim_trace_free(v);
}

static void test_generate__request_mix(void **state)
{
    (void)state;
    topo_sim_gen_opts g;
    memset(&g, 0, sizeof(g));
    g.preset = "acme";
    g.jobs = 20000;
    g.seed = 3;
    g.capacity = 8192;
    g.required_share = 0.25;
    g.preferred_share = 0.5;
    g.slice_share = 1;
    g.slice_level = "topology.topo.io/rack";
    g.slice_size = 4;
    topo_sim_trace *t = generate(&g);
    size_t multi = 0, req = 0, pref = 0, unc = 0, sliced = 0;
    for (size_t i = 0; i < topo_sim_trace_count(t); i++) {
        const topo_sim_job *j = topo_sim_trace_job(t, i);
        if (j->pods * j->gpus <= 8) {
            assert_int_equal(j->request, -1);
            assert_int_equal(j->pods, 1);
            continue;
        }
        multi++;
        assert_true(j->request >= 0);
        const topo_sim_request *r = topo_sim_trace_request(t, (size_t)j->request);
        assert_true(r->auto_level || r->spec.unconstrained);
        req += r->spec.required != NULL;
        pref += r->spec.preferred != NULL;
        unc += r->spec.unconstrained != 0;
        if (r->spec.slice_required != NULL) {
            sliced++;
            assert_int_equal(j->pods % 4, 0);
            assert_true(j->pods > 4);
        } else {
            assert_true(j->pods % 4 != 0 || j->pods <= 4);
        }
    }
    assert_true(multi > 1000);
    within("required share", (double)req / (double)multi, 0.25, 0.1);
    within("preferred share", (double)pref / (double)multi, 0.5, 0.1);
    within("unconstrained share", (double)unc / (double)multi, 0.25, 0.1);
    assert_true(sliced > 0);
    topo_sim_trace_free(t);
}

static void test_generate__bad_options(void **state)
{
    (void)state;
    topo_sim_trace *t = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_sim_gen_opts g;
    assert_int_equal(topo_sim_trace_create(&t, NULL), 0);
    memset(&g, 0, sizeof(g));
    g.jobs = 10;
    g.preset = "alibaba";
    assert_int_equal(topo_sim_trace_generate(t, &g, &err), TOPO_EINVALID);
    assert_string_equal(err.text,
                        "--preset: expected one of philly, helios, acme, got \"alibaba\"");
    g.preset = NULL;
    g.required_share = 0.7;
    g.preferred_share = 0.7;
    assert_int_equal(topo_sim_trace_generate(t, &g, &err), TOPO_EINVALID);
    g.required_share = g.preferred_share = 0;
    g.jobs = 0;
    assert_int_equal(topo_sim_trace_generate(t, &g, &err), TOPO_EINVALID);
    assert_int_equal(topo_sim_trace_count(t), 0);
    topo_sim_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate__presets_match_published),
        cmocka_unit_test(test_generate__load_cycle_and_determinism),
        cmocka_unit_test(test_generate__request_mix),
        cmocka_unit_test(test_generate__bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
