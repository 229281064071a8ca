/* Tests for lib/kueue: level lists (the label syntax itself is
 * test/util/test_labelsyntax.c's), counts, Kueue's OwnedBySinglePod (one
 * test per condition),
 * the TAS-pod test, and the request builder's edges that the annotation
 * table (fixtures/kueue/annotations, test/admission/test_kueue_table.c)
 * does not reach: the Job path prefix, encoding/json's leniency, errors
 * repeated in an aggregate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/kueue.h"
#include "topo/limits.h"

static void test_kueue__levels(void **state)
{
    (void)state;
    char why[1024];
    size_t bad = 99;
    const char *ok[] = {"topology.topo.io/block", "topology.topo.io/rack", "kubernetes.io/hostname"};
    assert_int_equal(topo_kueue_levels_valid(ok, 3, &bad, why, sizeof why), 1);
    const char *dup[] = {"a", "b", "a"};
    assert_int_equal(topo_kueue_levels_valid(dup, 3, &bad, why, sizeof why), 0);
    assert_int_equal(bad, 2);
    assert_string_equal(why, "duplicate level a");
    const char *host[] = {"kubernetes.io/hostname", "rack"};
    assert_int_equal(topo_kueue_levels_valid(host, 2, &bad, why, sizeof why), 0);
    assert_int_equal(bad, 0);
    assert_string_equal(why, "kubernetes.io/hostname must be the last level");
    const char *key[] = {"rack", "Bad.io/x"};
    assert_int_equal(topo_kueue_levels_valid(key, 2, &bad, why, sizeof why), 0);
    assert_int_equal(bad, 1);
    assert_non_null(strstr(why, "invalid label key \"Bad.io/x\": prefix part a lowercase"));
    assert_int_equal(topo_kueue_levels_valid(ok, 0, &bad, why, sizeof why), 0);
    assert_string_equal(why, "0 levels (expected 1..16)");
    const char *many[17];
    char names[17][8];
    for (size_t i = 0; i < 17; i++) {
        snprintf(names[i], sizeof names[i], "l%zu", i);
        many[i] = names[i];
    }
    assert_int_equal(topo_kueue_levels_valid(many, 16, NULL, why, sizeof why), 1);
    assert_int_equal(topo_kueue_levels_valid(many, 17, &bad, why, sizeof why), 0);
    assert_int_equal(bad, 17);
}

/* OwnedBySinglePod, one condition at a time. */
static void test_kueue__owned_by_single_pod(void **state)
{
    (void)state;
    const topo_kueue_owner pod = {"v1", "Pod"};
    const topo_kueue_owner two[] = {{"v1", "Pod"}, {"v1", "Pod"}};
    const topo_kueue_owner job = {"batch/v1", "Job"};
    const topo_kueue_owner other_api = {"example.com/v1", "Pod"};
    const topo_kueue_owner no_api = {NULL, "Pod"};
    const topo_kv group[] = {{"kueue.x-k8s.io/is-group-workload", "true"}};
    const topo_kv not_group[] = {{"kueue.x-k8s.io/is-group-workload", "false"}};
    const topo_kv other[] = {{"x", "true"}};
    assert_int_equal(topo_kueue_owned_by_single_pod(&pod, 1, NULL, 0), 1);
    assert_int_equal(topo_kueue_owned_by_single_pod(&pod, 1, other, 1), 1);
    assert_int_equal(topo_kueue_owned_by_single_pod(&pod, 1, not_group, 1), 1);
    /* not exactly one owner */
    assert_int_equal(topo_kueue_owned_by_single_pod(NULL, 0, NULL, 0), 0);
    assert_int_equal(topo_kueue_owned_by_single_pod(two, 2, NULL, 0), 0);
    /* a pod group's workload */
    assert_int_equal(topo_kueue_owned_by_single_pod(&pod, 1, group, 1), 0);
    /* not a Pod */
    assert_int_equal(topo_kueue_owned_by_single_pod(&job, 1, NULL, 0), 0);
    /* a Pod of another API group */
    assert_int_equal(topo_kueue_owned_by_single_pod(&other_api, 1, NULL, 0), 0);
    assert_int_equal(topo_kueue_owned_by_single_pod(&no_api, 1, NULL, 0), 0);
}

static void test_kueue__has_topology_request(void **state)
{
    (void)state;
    const topo_kv none[] = {{"kueue.x-k8s.io/podset-group-name", "g"},
                            {"kueue.x-k8s.io/podset-slice-size", "2"}};
    assert_int_equal(topo_kueue_has_topology_request(none, 2), 0);
    const char *tas[] = TOPO_KUEUE_TAS_ANNOTATIONS;
    for (size_t i = 0; tas[i] != NULL; i++) {
        topo_kv one = {tas[i], ""};
        assert_int_equal(topo_kueue_has_topology_request(&one, 1), 1);
    }
}

/* The request's annotations, with count; the error text or "" into msg. */
static int request(topo_podset_spec *ps, const topo_kv *kv, size_t n, int32_t count,
                   const char *meta, topo_pool *pool, char *msg, size_t size)
{
    topo_err err = TOPO_ERR_INIT;
    memset(ps, 0, sizeof(*ps));
    ps->count = count;
    int rc = topo_kueue_podset_request(ps, kv, n, meta, pool, &err);
    snprintf(msg, size, "%s", rc < 0 ? err.text : "");
    return rc;
}

static void test_kueue__request_edges(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_podset_spec ps;
    char msg[TOPO_ERR_TEXT_MAX];
    assert_non_null(pool);

    /* A Job's template: the path Kueue names. */
    const topo_kv size0[] = {{TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY, "rack"},
                             {TOPO_KUEUE_SLICE_SIZE, "0"}};
    assert_int_equal(request(&ps, size0, 2, 4, "spec.template.metadata", pool, msg, sizeof msg),
                     TOPO_EINVALID);
    assert_string_equal(msg, "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]"
                             ": Invalid value: \"0\": must be greater than or equal to 1");

    /* encoding/json: keys without regard to case, unknown keys ignored. */
    const topo_kv lenient[] = {
        {TOPO_KUEUE_REQUIRED_TOPOLOGY, "block"},
        {TOPO_KUEUE_SLICE_CONSTRAINTS,
         "[{\"TOPOLOGY\":\"rack\",\"Size\":4,\"extra\":[1]},{\"topology\":\"host\",\"size\":2}]"}};
    assert_int_equal(request(&ps, lenient, 2, 8, NULL, pool, msg, sizeof msg), 0);
    assert_int_equal(ps.nlayers, 2);
    assert_string_equal(ps.layers[0].level, "rack");
    assert_int_equal(ps.layers[0].size, 4);
    assert_string_equal(ps.layers[1].level, "host");
    assert_string_equal(ps.required, "block");

    /* encoding/json's type errors, as Go words them. */
    const topo_kv typed[] = {{TOPO_KUEUE_SLICE_CONSTRAINTS, "[{\"topology\":\"rack\",\"size\":\"4\"}]"}};
    assert_int_equal(request(&ps, typed, 1, 8, NULL, pool, msg, sizeof msg), TOPO_EINVALID);
    assert_non_null(strstr(msg, "must be a valid JSON array: json: cannot unmarshal string into "
                                "Go struct field PodsetSliceRequiredTopologyConstraint.size of "
                                "type int32"));
    const topo_kv big[] = {{TOPO_KUEUE_SLICE_CONSTRAINTS, "[{\"topology\":\"rack\",\"size\":4294967296}]"}};
    assert_int_equal(request(&ps, big, 1, 8, NULL, pool, msg, sizeof msg), TOPO_EINVALID);
    assert_non_null(strstr(msg, "cannot unmarshal number 4294967296 into Go struct field"));
    const topo_kv obj[] = {{TOPO_KUEUE_SLICE_CONSTRAINTS, "{\"topology\":\"rack\"}"}};
    assert_int_equal(request(&ps, obj, 1, 8, NULL, pool, msg, sizeof msg), TOPO_EINVALID);
    assert_non_null(strstr(msg, "cannot unmarshal object into Go value of type "
                                "[]v1beta2.PodsetSliceRequiredTopologyConstraint"));
    const topo_kv syntax[] = {{TOPO_KUEUE_SLICE_CONSTRAINTS, "[{"}};
    assert_int_equal(request(&ps, syntax, 1, 8, NULL, pool, msg, sizeof msg), TOPO_EINVALID);
    assert_non_null(strstr(msg, "Invalid value: \"[{\": must be a valid JSON array: "));

    /* One message twice is printed once (the aggregate drops repeats). */
    const topo_kv twice[] = {{TOPO_KUEUE_SLICE_CONSTRAINTS,
                              "[{\"topology\":\"a\",\"size\":0},{\"topology\":\"b\",\"size\":0}]"}};
    assert_int_equal(request(&ps, twice, 1, 8, NULL, pool, msg, sizeof msg), TOPO_EINVALID);
    assert_string_equal(
        msg, "[metadata.annotations[kueue.x-k8s.io/podset-slice-required-topology-constraints]"
             "[0].size: Invalid value: 0: must be greater than or equal to 1, "
             "metadata.annotations[kueue.x-k8s.io/podset-slice-required-topology-constraints]"
             "[1].size: Invalid value: 0: must be greater than or equal to 1]");

    /* An invalid request leaves the spec as it was. */
    memset(&ps, 0, sizeof ps);
    ps.count = 1;
    ps.required = "kept";
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_kueue_podset_request(&ps, size0, 2, NULL, pool, &err), TOPO_EINVALID);
    assert_string_equal(ps.required, "kept");

    /* Values are quoted as Go's %q does. */
    const topo_kv quoted[] = {{TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY, "a\"b\\c\n"}};
    assert_int_equal(request(&ps, quoted, 1, 1, NULL, pool, msg, sizeof msg), TOPO_EINVALID);
    assert_string_equal(msg, "metadata.annotations[kueue.x-k8s.io/podset-unconstrained-topology]"
                             ": Invalid value: \"a\\\"b\\\\c\\n\": must be a boolean value");
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kueue__levels),
        cmocka_unit_test(test_kueue__owned_by_single_pod),
        cmocka_unit_test(test_kueue__has_topology_request),
        cmocka_unit_test(test_kueue__request_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
