/* Tests for lib/simulate/cost_model.c (the --cost-model file) and
 * cost_sweep.c (--cost-sweep). */
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

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void check_model(const topo_sim_cost_model *m, double nvlink, double leaf, double spine,
                        double cluster, double small, double large)
{
    NEAR(m->cost[TOPO_SIM_TIER_NVLINK], nvlink);
    NEAR(m->cost[TOPO_SIM_TIER_LEAF], leaf);
    NEAR(m->cost[TOPO_SIM_TIER_SPINE], spine);
    NEAR(m->cost[TOPO_SIM_TIER_CLUSTER], cluster);
    NEAR(m->comm_small, small);
    NEAR(m->comm_large, large);
}

static int parse(topo_sim_cost_model *m, const char *text, topo_err *err)
{
    return topo_sim_cost_model_parse(m, text, strlen(text), "cost.yaml", err);
}

/* The shipped sample is the compiled-in defaults, and both are what
 * docs/simulate.md derives: leaf 1.2, the spine and cluster 2x and 4x it. */
static void test_cost_model__sample_file_is_the_default(void **state)
{
    (void)state;
    const char *src = getenv("TOPO_SOURCE_DIR");
    char path[4096];
    topo_sim_cost_model def, file;
    topo_err err = TOPO_ERR_INIT;
    topo_sim_cost_model_default(&def);
    check_model(&def, 1.0, 1.2, 2.4, 4.8, 0.15, 0.3);
    snprintf(path, sizeof path, "%s/fixtures/simulate/cost-model.yaml", src ? src : ".");
    memset(&file, 0, sizeof(file));
    if (topo_sim_cost_model_load(&file, path, &err) < 0)
        fail_msg("%s", err.text);
    assert_memory_equal(&file, &def, sizeof(def));
}

static void test_cost_model__good_files(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double nvlink, leaf, spine, cluster, small, large;
    } cases[] = {
        /* empty: every default */
        {"", 1.0, 1.2, 2.4, 4.8, 0.15, 0.3},
        {"{}", 1.0, 1.2, 2.4, 4.8, 0.15, 0.3},
        /* the example: every tier given */
        {"tiers: {nvlink: 1.0, leaf: 2.0, spine: 2.4, cluster: 3.1}\n"
         "communication: {small: 0.15, large: 0.3}\n",
         1.0, 2.0, 2.4, 3.1, 0.15, 0.3},
        /* the leaf alone: spine and cluster follow it through the ratios */
        {"tiers: {leaf: 1.5}\n", 1.0, 1.5, 3.0, 6.0, 0.15, 0.3},
        /* non-blocking above the leaf (a DGX SuperPOD) */
        {"oversubscription: {spine: 1, cluster: 1}\n", 1.0, 1.2, 1.2, 1.2, 0.15, 0.3},
        /* a given spine with the cluster still derived; integers are numbers */
        {"tiers: {spine: 3}\noversubscription: {cluster: 3}\ncommunication: {large: 1}\n", 1.0,
         1.2, 3.0, 3.6, 0.15, 1.0},
        /* JSON is YAML */
        {"{\"communication\": {\"small\": 0.05}}", 1.0, 1.2, 2.4, 4.8, 0.05, 0.3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        topo_sim_cost_model m;
        topo_err err = TOPO_ERR_INIT;
        memset(&m, 0, sizeof(m));
        if (parse(&m, cases[i].text, &err) < 0)
            fail_msg("case %zu: %s", i, err.text);
        check_model(&m, cases[i].nvlink, cases[i].leaf, cases[i].spine, cases[i].cluster,
                    cases[i].small, cases[i].large);
    }
}

static void test_cost_model__errors_name_file_line_and_field(void **state)
{
    (void)state;
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"tier: {leaf: 2}\n", "cost.yaml:1:7: tier: unknown field (expected one of: tiers, "
                               "oversubscription, communication)"},
        {"tiers: {leaf: 2, rack: 3}\n", "tiers.rack: unknown"},
        {"communication: {small: 0.1, medium: 0.2}\n", "communication.medium: unknown"},
        {"oversubscription: {leaf: 2}\n", "oversubscription.leaf: unknown"},
        {"tiers: [1, 2]\n", "cost.yaml:1:8: tiers: expected a mapping"},
        {"- 1\n", "cost.yaml:1:1: expected a mapping"},
        {"tiers:\n  leaf: fast\n", "cost.yaml:2:9: tiers.leaf: expected a number"},
        {"tiers:\n  leaf: 0\n", "cost.yaml:2:9: tiers.leaf: 0 is out of range (>= 1 and <= 100)"},
        {"tiers: {nvlink: 0.5}\n", "cost.yaml:1:17: tiers.nvlink: 0.5 is out of range (>= 1 and "
                                    "<= 100)"},
        {"tiers:\n  leaf: -1\n", "tiers.leaf: -1 is out of range"},
        {"tiers:\n  cluster: 101\n", "cost.yaml:2:12: tiers.cluster: 101 is out of range"},
        {"tiers:\n  leaf: 3\n  spine: 2\n",
         "cost.yaml:3:10: tiers.spine: 2 is below tiers.leaf (3): a coarser tier cannot cost "
         "less"},
        {"tiers:\n  nvlink: 2\n  leaf: 1.5\n", "cost.yaml:3:9: tiers.leaf: 1.5 is below "
                                                "tiers.nvlink (2)"},
        /* A tier derived from the leaf is named by the oversubscription
         * that made it, at its position. */
        {"tiers: {spine: 2}\noversubscription: {cluster: 1}\n",
         "cost.yaml:2:29: oversubscription.cluster: tiers.leaf x 1 = 1.2 is below tiers.spine "
         "(2)"},
        {"tiers: {spine: 2}\noversubscription:\n  spine: 2\n",
         "cost.yaml:3:10: oversubscription.spine: tiers.spine is given too: give one of them"},
        {"oversubscription:\n  spine: 0.5\n",
         "cost.yaml:2:10: oversubscription.spine: 0.5 is out of range (>= 1 and <= 64)"},
        {"tiers: {leaf: 50}\noversubscription: {cluster: 4}\n",
         "tiers.cluster: tiers.leaf x oversubscription.cluster = 200 is above 100"},
        {"communication:\n  small: 0\n",
         "cost.yaml:2:10: communication.small: 0 is out of range (> 0 and <= 1)"},
        {"communication:\n  large: 1.5\n", "communication.large: 1.5 is out of range"},
        {"tiers: {leaf: 2}\n---\ntiers: {leaf: 3}\n", "a second YAML document"},
        {"tiers: {leaf: .inf}\n", "infinity and NaN cannot be represented"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        topo_sim_cost_model m, before;
        topo_err err = TOPO_ERR_INIT;
        memset(&m, 0x5a, sizeof(m));
        before = m;
        int rc = parse(&m, cases[i].text, &err);
        if (rc != TOPO_EINVALID || strstr(err.text, cases[i].message) == NULL)
            fail_msg("case %zu: rc %d, \"%s\", expected \"%s\"", i, rc, err.text,
                     cases[i].message);
        /* Nothing written on error. */
        assert_memory_equal(&m, &before, sizeof(m));
    }
}

static void test_cost_model__missing_file(void **state)
{
    (void)state;
    topo_sim_cost_model m;
    topo_err err = TOPO_ERR_INIT;
    assert_int_not_equal(topo_sim_cost_model_load(&m, "/nonexistent/cost.yaml", &err), 0);
    assert_non_null(strstr(err.text, "/nonexistent/cost.yaml"));
}

/* ---- the sweep ---- */

/* Two racks of two 8-GPU nodes, a and c half used: j1's two 4-GPU pods
 * best-fit onto a and c, the fullest nodes, in different racks, so
 * best-fit's slowdown is above 1 and scales with the model. */
static const sim_test_node sweep_nodes[] = {
    {"a", "r1", 8, 4}, {"b", "r1", 8, 0}, {"c", "r2", 8, 4}, {"d", "r2", 8, 0}};

static const char sweep_csv[] = "0,j1,2,4,100\n"
                                "10,j2,1,8,50\n"
                                "20,j3,3,4,80\n"
                                "30,j4,2,4,40\n";

static void test_cost_model__sweep_is_monotone_and_exact(void **state)
{
    (void)state;
    topo_snapshot *snap = sim_test_snapshot(sweep_nodes, 4);
    topo_sim_cluster *c = NULL;
    topo_sim_trace *t = NULL;
    topo_sim_result *base[2] = {NULL, NULL};
    topo_sim_policy pol[2] = {TOPO_SIM_BEST_FIT, TOPO_SIM_TOPO};
    topo_sim_sweep *s = calloc(1, sizeof(*s));
    topo_sim_run_opts o;
    topo_err err = TOPO_ERR_INIT;

    memset(&o, 0, sizeof(o));
    assert_non_null(snap);
    assert_non_null(s);
    if (topo_sim_cluster_create(&c, snap, NULL, &err) < 0 ||
        topo_sim_trace_create(&t, &err) < 0 ||
        topo_sim_trace_parse_csv(t, sweep_csv, strlen(sweep_csv), "s.csv", &err) < 0)
        fail_msg("%s", err.text);
    for (int p = 0; p < 2; p++)
        if (topo_sim_run(&base[p], c, t, pol[p], &o, &err) < 0)
            fail_msg("%s", err.text);
    /* best-fit spans the racks, so its slowdown is above 1 */
    double s0 = topo_sim_result_metrics(base[0])->slowdown_mean;
    assert_true(s0 > 1);
    if (topo_sim_cost_sweep(s, c, t, (const topo_sim_result *const *)base, 2, &o, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(s->nrows, TOPO_SIM_SWEEP_ROWS);
    assert_int_equal(s->npolicies, 2);
    assert_string_equal(s->policy[0], "best-fit");
    /* 12 rows, 8 distinct products, each run once per policy */
    assert_int_equal(s->runs, 8 * 2);
    for (size_t i = 0; i < s->nrows; i++) {
        const topo_sim_sweep_row *r = &s->row[i];
        double k = r->cost_factor * r->share_factor;
        NEAR(r->cell[0].slowdown_mean, 1 + k * (s0 - 1));
        if (k == 1)
            NEAR(r->cell[0].slowdown_mean, s0);
        /* higher cost, higher slowdown, for the policy that spans racks */
        for (size_t j = 0; j < s->nrows; j++) {
            double kj = s->row[j].cost_factor * s->row[j].share_factor;
            if (kj > k)
                assert_true(s->row[j].cell[0].slowdown_mean > r->cell[0].slowdown_mean);
            if (kj == k) {
                NEAR(s->row[j].cell[0].jct_mean, r->cell[0].jct_mean);
                NEAR(s->row[j].cell[0].goodput, r->cell[0].goodput);
            }
        }
    }
    /* grid order: cost factors outer, share factors inner */
    NEAR(s->row[0].cost_factor, 0.5);
    NEAR(s->row[0].share_factor, 0.5);
    NEAR(s->row[11].cost_factor, 2.0);
    NEAR(s->row[11].share_factor, 2.0);

    free(s);
    for (int p = 0; p < 2; p++)
        topo_sim_result_free(base[p]);
    topo_sim_trace_free(t);
    topo_sim_cluster_free(c);
    topo_snapshot_free(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_model__sample_file_is_the_default),
        cmocka_unit_test(test_cost_model__good_files),
        cmocka_unit_test(test_cost_model__errors_name_file_line_and_field),
        cmocka_unit_test(test_cost_model__missing_file),
        cmocka_unit_test(test_cost_model__sweep_is_monotone_and_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
