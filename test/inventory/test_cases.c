/* Tests for lib/inventory/cases.c and cases_run.c: the conformance case
 * loader (valid and malformed files under fixtures/conformance/) and the
 * runner's verdicts. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/cases.h"

static const char *fixture(char *buf, size_t size, const char *rel)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(buf, size, "%s/fixtures/conformance/%s", root != NULL ? root : ".", rel);
    return buf;
}

typedef struct loaded {
    topo_pool *pool;
    topo_case_file *file;
} loaded;

static int load(loaded *l, const char *rel, topo_err *err)
{
    char path[1024];
    l->pool = topo_pool_create();
    assert_non_null(l->pool);
    l->file = NULL;
    return topo_cases_load_file(&l->file, fixture(path, sizeof(path), rel), l->pool, err);
}

static void unload(loaded *l)
{
    topo_cases_release(l->file);
    topo_pool_free(l->pool);
}

static void test_kueue_table_loads(void **state)
{
    (void)state;
    loaded l;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(load(&l, "kueue-tas-cases.json", &err), 0);
    assert_int_equal(l.file->ncases, 95);
    for (size_t i = 0; i < l.file->ncases; i++) {
        const topo_case *c = &l.file->cases[i];
        if (c->setup_failure != NULL)
            fail_msg("%s: %s", c->id, c->setup_failure);
        assert_non_null(c->snapshot);
        assert_true(c->npodsets >= 1);
        assert_int_equal(c->nexpect, c->npodsets);
    }

    const topo_case *c =
        topo_cases_find(l.file, "kueue-node-replacement-skipped-for-single-pod-owned-workload-gate-on");
    assert_non_null(c);
    assert_string_equal(c->topology.topology_name, "default");
    assert_int_equal(c->topology.nlevels, 1);
    assert_string_equal(c->topology.levels[0], "kubernetes.io/hostname");
    assert_int_equal(c->nnodes, 2);
    assert_false(c->nodes[0].ready);
    assert_true(c->nodes[1].ready);
    assert_int_equal(c->gates.SkipReassignmentForPodOwnedWorkloads, 1);
    assert_non_null(c->workload);
    assert_true(c->workload->single_pod_owned);
    assert_int_equal(c->workload->nunhealthy_nodes, 1);
    assert_string_equal(c->workload->unhealthy_nodes[0], "x1");
    assert_int_equal(c->workload->nadmission, 1);
    assert_string_equal(c->workload->admission[0].podset, "main");
    assert_int_equal(c->workload->admission[0].assignment->ndomains, 1);
    assert_null(topo_cases_find(l.file, "no-such-case"));
    unload(&l);
}

static const topo_resource *find_res(const topo_resource *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            return &r[i];
    return NULL;
}

static void test_valid_file_fields(void **state)
{
    (void)state;
    loaded l;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(load(&l, "loader/valid.json", &err), 0);
    assert_int_equal(l.file->ncases, 2);

    const topo_case *c = &l.file->cases[0];
    assert_string_equal(c->id, "small-required-rack");
    assert_null(c->workload);
    assert_int_equal(c->npodsets, 1);
    const topo_podset_spec *ps = &c->podsets[0];
    assert_string_equal(ps->name, "main");
    assert_int_equal(ps->count, 2);
    assert_string_equal(ps->required, "cloud.com/topology-rack");
    assert_null(ps->preferred);
    assert_null(ps->slice_required);
    assert_int_equal(ps->slice_size, 0);
    assert_int_equal(ps->nlayers, 0);
    assert_null(ps->group);
    const topo_resource *cpu = find_res(ps->requests, ps->nrequests, "cpu");
    assert_non_null(cpu);
    assert_int_equal(cpu->amount, 1000);
    assert_int_equal(c->nexpect, 1);
    assert_null(c->expect[0].error);
    assert_int_equal(c->expect[0].assignment.ndomains, 2);
    assert_string_equal(c->expect[0].assignment.domains[1].values[0], "x2");

    c = &l.file->cases[1];
    assert_string_equal(c->id, "small-usage-and-workload");
    assert_int_equal(c->nusage, 4);
    assert_false(c->usage[0].tas);
    assert_true(c->usage[0].charged);                 /* bound, Running */
    assert_int_equal(c->usage[0].requests[0].amount, 500);
    assert_false(c->usage[1].charged);                /* unbound */
    assert_null(c->usage[1].node);
    assert_false(c->usage[2].charged);                /* Succeeded */
    assert_true(c->usage[3].tas);
    assert_true(c->usage[3].charged);
    assert_int_equal(c->usage[3].count, 1);
    assert_int_equal(c->usage[3].ndomain_values, 1);
    ps = &c->podsets[0];
    assert_int_equal(ps->nlayers, 1);
    assert_string_equal(ps->layers[0].level, "kubernetes.io/hostname");
    assert_int_equal(ps->layers[0].size, 1);
    assert_int_equal(ps->npreferred_terms, 1);
    assert_int_equal(ps->preferred_terms[0].weight, 10);
    assert_int_equal(ps->preferred_terms[0].term.nexprs, 1);
    assert_string_equal(ps->preferred_terms[0].term.exprs[0].op, "In");
    assert_int_equal(ps->preferred_terms[0].term.exprs[0].nvalues, 2);
    assert_int_equal(ps->ntolerations, 1);
    assert_string_equal(ps->tolerations[0].key, "example.com/gpu");
    assert_non_null(c->workload);
    assert_true(c->workload->single_pod_owned);
    assert_string_equal(c->expect[0].error,
                        "topology \"default\" doesn't allow to fit any of 2 pod(s)");
    unload(&l);
}

typedef struct bad_case {
    const char *file;
    int code;
    const char *contains[3]; /* substrings of the message */
} bad_case;

static const bad_case bad_cases[] = {
    {"bad/missing-id.json", TOPO_EINVALID, {"missing-id.json: case 1", "id", "required"}},
    {"bad/bad-quantity.json", TOPO_EINVALID,
     {"case 0 (\"small-required-rack\")", "nodes[1].allocatable.cpu", "12x"}},
    {"bad/bad-count.json", TOPO_EINVALID,
     {"case 0 (\"small-required-rack\")", "podsets[0].count", "-1 is out of range (0.."}},
    {"bad/count-not-integer.json", TOPO_EINVALID, {"podsets[0].count", NULL, NULL}},
    {"bad/not-an-array.json", TOPO_EINVALID, {"not-an-array.json", "array", NULL}},
    {"bad/expect-unknown-podset.json", TOPO_EINVALID, {"expect.other", "no PodSet", NULL}},
    {"bad/duplicate-id.json", TOPO_EINVALID, {"case 1", "duplicate", "small-required-rack"}},
    {"bad/domain-values-mismatch.json", TOPO_EINVALID,
     {"expect.main.domains[0].values", "2 value(s) for 1 level(s)", NULL}},
    {"bad/missing-ready.json", TOPO_EINVALID, {"nodes[0].ready", NULL, NULL}},
    {"bad/syntax-error.json", TOPO_EINVALID, {"syntax-error.json:2:", NULL, NULL}},
    {"bad/no-such-file.json", TOPO_ENOTFOUND, {"no-such-file.json", NULL, NULL}},
};

static void test_malformed_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const bad_case *b = &bad_cases[i];
        loaded l;
        topo_err err = TOPO_ERR_INIT;
        int rc = load(&l, b->file, &err);
        if (rc != b->code)
            fail_msg("%s: got %s (%s), want %s", b->file, topo_err_name(rc), err.text,
                     topo_err_name(b->code));
        assert_null(l.file);
        for (size_t k = 0; k < 3 && b->contains[k] != NULL; k++)
            if (strstr(err.text, b->contains[k]) == NULL)
                fail_msg("%s: message \"%s\" lacks \"%s\"", b->file, err.text, b->contains[k]);
        unload(&l);
    }
}

static void test_unknown_gate_fails_the_case(void **state)
{
    (void)state;
    loaded l;
    topo_err err = TOPO_ERR_INIT;
    topo_case_outcome o;
    assert_int_equal(load(&l, "bad/unknown-gate.json", &err), 0);
    assert_int_equal(l.file->ncases, 1);
    const topo_case *c = &l.file->cases[0];
    assert_non_null(c->setup_failure);
    assert_non_null(strstr(c->setup_failure, "feature_gates.TASNoSuchGate"));
    assert_null(c->snapshot);
    assert_int_equal(topo_case_run(&o, c, l.pool, &err), 0);
    assert_false(o.passed);
    assert_non_null(strstr(o.reason, "TASNoSuchGate"));
    unload(&l);
}

static void test_parse_in_memory(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_case_file *file = NULL;
    topo_err err = TOPO_ERR_INIT;
    const char *empty = "[]";
    assert_int_equal(topo_cases_parse(&file, empty, strlen(empty), "empty", pool, &err), 0);
    assert_int_equal(file->ncases, 0);
    topo_cases_release(file);

    const char *no_podsets = "[{\"id\":\"a\",\"topology_name\":\"t\",\"levels\":[\"h\"],"
                             "\"nodes\":[],\"podsets\":[],\"expect\":{}}]";
    assert_int_equal(topo_cases_parse(&file, no_podsets, strlen(no_podsets), "mem", pool, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "mem: case 0 (\"a\"): podsets: must not be empty"));
    topo_cases_release(NULL);
    topo_pool_free(pool);
}

/* workload.single_pod_owned is Kueue's OwnedBySinglePod, condition by
 * condition (the loader once looked at the owner's kind alone). */
static void test_single_pod_owned(void **state)
{
    (void)state;
    static const struct {
        const char *workload;
        int want;
    } rows[] = {
        {"{\"owner_references\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\"}]}", 1},
        {"{\"owner_references\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\"}],"
         "\"annotations\":{\"kueue.x-k8s.io/is-group-workload\":\"true\"}}", 0},
        {"{\"owner_references\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\"}],"
         "\"annotations\":{\"kueue.x-k8s.io/is-group-workload\":\"false\"}}", 1},
        {"{\"owner_references\":[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Pod\",\"name\":\"p\"}]}",
         0},
        {"{\"owner_references\":[{\"kind\":\"Pod\",\"name\":\"p\"}]}", 0},
        {"{\"owner_references\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\"}]}", 0},
        {"{\"owner_references\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\"},"
         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"q\"}]}", 0},
        {"{\"owner_references\":[]}", 0},
    };
    topo_pool *pool = topo_pool_create();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[1024];
        topo_case_file *file = NULL;
        topo_err err = TOPO_ERR_INIT;
        snprintf(text, sizeof text,
                 "[{\"id\":\"w\",\"topology_name\":\"t\",\"levels\":[\"kubernetes.io/hostname\"],"
                 "\"nodes\":[],\"podsets\":[{\"name\":\"main\",\"count\":1,\"requests\":{}}],"
                 "\"workload\":%s,\"expect\":{}}]",
                 rows[i].workload);
        if (topo_cases_parse(&file, text, strlen(text), "mem", pool, &err) != 0)
            fail_msg("row %zu: %s", i, err.text);
        assert_non_null(file->cases[0].workload);
        if (file->cases[0].workload->single_pod_owned != rows[i].want)
            fail_msg("row %zu: single_pod_owned %d, want %d", i,
                     file->cases[0].workload->single_pod_owned, rows[i].want);
        topo_cases_release(file);
    }
    topo_pool_free(pool);
}

/* Runner verdicts over synthetic engine answers are covered through the
 * real engine: the valid file's first case must pass, and a wrong
 * expectation must produce a compact difference. */
static void test_run_verdicts(void **state)
{
    (void)state;
    loaded l;
    topo_err err = TOPO_ERR_INIT;
    topo_case_outcome o;
    assert_int_equal(load(&l, "loader/valid.json", &err), 0);
    topo_case *c = &l.file->cases[0];
    assert_int_equal(topo_case_run(&o, c, l.pool, &err), 0);
    if (o.unsupported)
        skip();
    if (!o.passed)
        fail_msg("%s: %s", c->id, o.reason);
    assert_int_equal(o.nresults, 1);

    /* Expect x1:2 instead of x1:1, x2:1. */
    topo_case_expect *ex = (topo_case_expect *)&c->expect[0];
    topo_assign_domain *d = (topo_assign_domain *)&ex->assignment.domains[0];
    d->count = 2;
    ex->assignment.ndomains = 1;
    assert_int_equal(topo_case_run(&o, c, l.pool, &err), 0);
    assert_false(o.passed);
    assert_string_equal(o.reason, "main: want x1:2; got x1:1, x2:1");

    /* Expect an error instead. */
    ex->error = "nope";
    assert_int_equal(topo_case_run(&o, c, l.pool, &err), 0);
    assert_false(o.passed);
    assert_string_equal(o.reason, "main: want error \"nope\"; got x1:1, x2:1");

    /* No expectation: placed is enough. */
    c->nexpect = 0;
    assert_int_equal(topo_case_run(&o, c, l.pool, &err), 0);
    assert_true(o.passed);
    unload(&l);
}

static void test_format_assignment(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    const char *levels[] = {"block", "rack"};
    const char *v1[] = {"b1", "r1"}, *v2[] = {"b1", "r2"};
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {levels, 2, doms, 2};
    assert_string_equal(topo_case_format_assignment(&a, 0, pool), "b1/r1:2, b1/r2:1");
    assert_string_equal(topo_case_format_assignment(&a, 1, pool),
                        "[block,rack] b1/r1:2, b1/r2:1");
    a.ndomains = 0;
    assert_string_equal(topo_case_format_assignment(&a, 0, pool), "(no domains)");
    assert_string_equal(topo_case_format_assignment(NULL, 0, pool), "(none)");
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kueue_table_loads),
        cmocka_unit_test(test_valid_file_fields),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_unknown_gate_fails_the_case),
        cmocka_unit_test(test_parse_in_memory),
        cmocka_unit_test(test_single_pod_owned),
        cmocka_unit_test(test_run_verdicts),
        cmocka_unit_test(test_format_assignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
