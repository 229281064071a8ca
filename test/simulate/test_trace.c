/* Tests for lib/simulate/trace_csv.c: CSV traces read (fields, header,
 * comments, Kueue annotations through Kueue's validation, "auto", order),
 * every error naming the line and the field, limits, and the writer's
 * output read back unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/buf.h"
#include "topo/limits.h"
#include "topo/simulate.h"

static topo_sim_trace *parse_ok(const char *csv)
{
    topo_sim_trace *t = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_create(&t, &err), 0);
    if (topo_sim_trace_parse_csv(t, csv, strlen(csv), "t.csv", &err) < 0)
        fail_msg("%s", err.text);
    return t;
}

static void test_trace__fields_and_order(void **state)
{
    (void)state;
    topo_sim_trace *t = parse_ok(
        "# a comment\n"
        "t_arrive,job_id,pods,gpus_per_pod,duration_s,annotations\n"
        "\n"
        "5.5, late , 2 , 8 , 100\r\n"
        "0,first,1,4,1e3,\n"
        "5.5,tie,4,8,60,kueue.x-k8s.io/podset-preferred-topology=topology.topo.io/rack ; "
        "kueue.x-k8s.io/podset-slice-required-topology=topology.topo.io/rack;"
        "kueue.x-k8s.io/podset-slice-size=2\n"
        "6,again,4,8,60,kueue.x-k8s.io/podset-slice-size=2;"
        "kueue.x-k8s.io/podset-preferred-topology=topology.topo.io/rack;"
        "kueue.x-k8s.io/podset-slice-required-topology=topology.topo.io/rack\n"
        "7,auto,2,8,60,kueue.x-k8s.io/podset-required-topology=auto\n");
    assert_int_equal(topo_sim_trace_count(t), 5);
    const topo_sim_job *j = topo_sim_trace_job(t, 0);
    assert_string_equal(j->id, "first");
    assert_true(j->arrive == 0 && j->duration == 1000 && j->pods == 1 && j->gpus == 4);
    assert_int_equal(j->request, -1);
    /* Equal times keep the file's order. */
    assert_string_equal(topo_sim_trace_job(t, 1)->id, "late");
    assert_string_equal(topo_sim_trace_job(t, 2)->id, "tie");
    /* The same request in another order is one request. */
    assert_int_equal(topo_sim_trace_request_count(t), 2);
    assert_int_equal(topo_sim_trace_job(t, 2)->request, topo_sim_trace_job(t, 3)->request);
    const topo_sim_request *r = topo_sim_trace_request(t, (size_t)topo_sim_trace_job(t, 2)->request);
    assert_string_equal(r->spec.preferred, "topology.topo.io/rack");
    assert_int_equal(r->spec.slice_size, 2);
    assert_false(r->auto_level);
    r = topo_sim_trace_request(t, (size_t)topo_sim_trace_job(t, 4)->request);
    assert_true(r->auto_level);
    assert_string_equal(r->spec.required, "auto");
    topo_sim_trace_free(t);
}

typedef struct bad_case {
    const char *csv;
    size_t len; /* 0: strlen */
    int line;
    const char *message;
} bad_case;

#define NUL_CSV "0,a,1,8,10\n0,b\0,1,8,10\n"

static const bad_case bad[] = {
    {"0,a,1,8\n", 0, 1,
     "t.csv:1: expected t_arrive,job_id,pods,gpus_per_pod,duration_s[,annotations], got 4 "
     "fields"},
    {"t_arrive,job,pods,gpus_per_pod,duration_s\n", 0, 1,
     "t.csv:1: header: column 2 is \"job\", expected \"job_id\""},
    {"# c\n-1,a,1,8,10\n", 0, 2,
     "t.csv:2: field 1 (t_arrive): expected a number of seconds, got \"-1\""},
    {"nan,a,1,8,10\n", 0, 1, "t.csv:1: field 1 (t_arrive): expected a number of seconds, got \"nan\""},
    {"0x10,a,1,8,10\n", 0, 1,
     "t.csv:1: field 1 (t_arrive): expected a number of seconds, got \"0x10\""},
    {"1e11,a,1,8,10\n", 0, 1,
     "t.csv:1: field 1 (t_arrive): must be 0 or more and at most 10000000000, got \"1e11\""},
    {"0,,1,8,10\n", 0, 1, "t.csv:1: field 2 (job_id): must not be empty"},
    {"0,a b,1,8,10\n", 0, 1,
     "t.csv:1: field 2 (job_id): byte 0x20 at offset 1: only printable ASCII without spaces, "
     "commas or quotes"},
    {"0,\"a\",1,8,10\n", 0, 1, "t.csv:1: field 2 (job_id): quoted fields are not supported"},
    {"0,a,1,8,10\n1,a,1,8,10\n", 0, 2, "t.csv:2: field 2 (job_id): job \"a\" is already on line 1"},
    {"0,a,0,8,10\n", 0, 1, "t.csv:1: field 3 (pods): must be between 1 and 100000, got \"0\""},
    {"0,a,x,8,10\n", 0, 1, "t.csv:1: field 3 (pods): expected a whole number, got \"x\""},
    {"0,a,1,99999999999,10\n", 0, 1,
     "t.csv:1: field 4 (gpus_per_pod): must be between 1 and 1024, got \"99999999999\""},
    {"0,a,1,8,0\n", 0, 1,
     "t.csv:1: field 5 (duration_s): must be greater than 0 and at most 10000000000, got \"0\""},
    {"0,a,1,8,10,foo\n", 0, 1, "t.csv:1: field 6 (annotations): expected KEY=VALUE, got \"foo\""},
    {"0,a,1,8,10,app=x\n", 0, 1,
     "t.csv:1: field 6 (annotations): \"app\" is not one of Kueue's PodSet annotations "
     "(kueue.x-k8s.io/podset-*)"},
    {"0,a,1,8,10,kueue.x-k8s.io/podset-required-topology=r;"
     "kueue.x-k8s.io/podset-required-topology=r\n",
     0, 1, "t.csv:1: field 6 (annotations): kueue.x-k8s.io/podset-required-topology is given twice"},
    /* Kueue's validation and its message, as for a Pod. */
    {"0,a,4,8,10,kueue.x-k8s.io/podset-required-topology=r;"
     "kueue.x-k8s.io/podset-preferred-topology=r\n",
     0, 1,
     "t.csv:1: field 6 (annotations): metadata.annotations: Invalid value: must not contain more "
     "than one topology annotation: [\"kueue.x-k8s.io/podset-required-topology\", "
     "\"kueue.x-k8s.io/podset-preferred-topology\", "
     "\"kueue.x-k8s.io/podset-unconstrained-topology\"]"},
    {"0,a,2,8,10,kueue.x-k8s.io/podset-slice-required-topology=auto;"
     "kueue.x-k8s.io/podset-slice-size=1\n",
     0, 1,
     "t.csv:1: field 6 (annotations): the level \"auto\" is for the required or preferred "
     "topology only"},
    {NUL_CSV, sizeof NUL_CSV - 1, 2, "t.csv:2: contains a NUL byte"},
};

static void test_trace__errors(void **state)
{
    (void)state;
    topo_sim_trace *t = NULL;
    assert_int_equal(topo_sim_trace_create(&t, NULL), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        topo_err err = TOPO_ERR_INIT;
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].csv);
        int rc = topo_sim_trace_parse_csv(t, bad[i].csv, len, "t.csv", &err);
        if (rc != TOPO_EINVALID)
            fail_msg("case %zu: rc %d (%s)", i, rc, err.text);
        if (strcmp(err.text, bad[i].message) != 0)
            fail_msg("case %zu:\n got  %s\n want %s", i, err.text, bad[i].message);
        assert_int_equal(err.line, bad[i].line);
        assert_int_equal(topo_sim_trace_count(t), 0); /* nothing kept */
    }
    topo_sim_trace_free(t);
}

static void test_trace__limits(void **state)
{
    (void)state;
    topo_sim_trace *t = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_create(&t, NULL), 0);
    char *line = malloc(TOPO_MAX_SIM_LINE + 16);
    assert_non_null(line);
    memset(line, '1', TOPO_MAX_SIM_LINE + 1);
    line[TOPO_MAX_SIM_LINE + 1] = '\n';
    assert_int_equal(topo_sim_trace_parse_csv(t, line, TOPO_MAX_SIM_LINE + 2, "t.csv", &err),
                     TOPO_ELIMIT);
    assert_string_equal(err.text, "t.csv:1: line longer than 8192 bytes");
    free(line);

    /* The file itself. */
    assert_int_equal(topo_sim_trace_parse_csv(t, "", (size_t)TOPO_MAX_SIM_TRACE_FILE + 1,
                                              "t.csv", &err),
                     TOPO_ELIMIT);
    assert_string_equal(err.text, "t.csv: larger than 268435456 bytes");
    assert_int_equal(topo_sim_trace_load_csv(t, "/nonexistent/t.csv", &err), TOPO_ENOTFOUND);

    /* A spreadsheet's UTF-8 byte order mark before the header is skipped, as
     * the public formats' reader does (one line reader for both). */
    static const char bom[] = "\xef\xbb\xbft_arrive,job_id,pods,gpus_per_pod,duration_s\r\n"
                              "0,a,1,2,10\r\n";
    assert_int_equal(topo_sim_trace_parse_csv(t, bom, sizeof bom - 1, "t.csv", &err), 0);
    assert_int_equal(topo_sim_trace_count(t), 1);
    assert_int_equal(topo_sim_trace_job(t, 0)->gpus, 2);
    topo_sim_trace_free(t);
}

static void test_trace__write_read_back(void **state)
{
    (void)state;
    topo_sim_trace *t = NULL, *back = NULL;
    topo_sim_gen_opts g;
    topo_buf b = TOPO_BUF_INIT(0);
    topo_err err = TOPO_ERR_INIT;
    memset(&g, 0, sizeof(g));
    g.preset = "acme";
    g.jobs = 3000;
    g.seed = 9;
    g.capacity = 512;
    g.slice_share = 0.5;
    g.slice_level = "topology.topo.io/rack";
    g.slice_size = 2;
    assert_int_equal(topo_sim_trace_create(&t, NULL), 0);
    assert_int_equal(topo_sim_trace_create(&back, NULL), 0);
    if (topo_sim_trace_generate(t, &g, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(topo_sim_trace_write_csv(t, &b), 0);
    if (topo_sim_trace_parse_csv(back, b.ptr, b.len, "out.csv", &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(topo_sim_trace_count(back), 3000);
    for (size_t i = 0; i < 3000; i++) {
        const topo_sim_job *x = topo_sim_trace_job(t, i), *y = topo_sim_trace_job(back, i);
        assert_string_equal(x->id, y->id);
        assert_true(x->arrive == y->arrive && x->duration == y->duration);
        assert_int_equal(x->pods, y->pods);
        assert_int_equal(x->gpus, y->gpus);
        assert_int_equal(x->request < 0, y->request < 0);
        if (x->request >= 0)
            assert_string_equal(topo_sim_trace_request(t, (size_t)x->request)->text,
                                topo_sim_trace_request(back, (size_t)y->request)->text);
    }
    topo_buf_dispose(&b);
    topo_sim_trace_free(t);
    topo_sim_trace_free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace__fields_and_order),
        cmocka_unit_test(test_trace__errors),
        cmocka_unit_test(test_trace__limits),
        cmocka_unit_test(test_trace__write_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
