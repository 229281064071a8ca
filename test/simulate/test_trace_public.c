/* Tests for lib/simulate/trace_public.c: the public traces' fixtures
 * (fixtures/simulate/traces: rows from the traces' own repositories and
 * constructed rows in their columns) read into the jobs worked out by hand
 * from the rows, skips counted by reason, and every error naming the line and
 * the column. */
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

#define NODE 8 /* GPUs per node in every test */

static const char *fixture(char *buf, size_t size, const char *name)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(buf, size, "%s/fixtures/simulate/traces/%s", root ? root : ".", name);
    return buf;
}

static topo_sim_trace *load(topo_sim_trace_format f, const char *name, topo_sim_trace_stats *s)
{
    char path[1024];
    topo_sim_trace *t = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_create(&t, &err), 0);
    if (topo_sim_trace_load_public(t, f, NODE, fixture(path, sizeof path, name), s, &err) < 0)
        fail_msg("%s: %s", name, err.text);
    return t;
}

/* A job as the row says, worked out by hand. */
typedef struct want_job {
    const char *id;
    double arrive, duration;
    int32_t pods, gpus;
} want_job;

static void check_jobs(const topo_sim_trace *t, const want_job *w, size_t n)
{
    assert_int_equal(topo_sim_trace_count(t), n);
    for (size_t i = 0; i < n; i++) {
        const topo_sim_job *j = topo_sim_trace_job(t, i);
        if (strcmp(j->id, w[i].id) != 0 || j->arrive != w[i].arrive ||
            j->duration != w[i].duration || j->pods != w[i].pods || j->gpus != w[i].gpus ||
            j->request != -1)
            fail_msg("job %zu: %s at %g for %g s, %d x %d; want %s at %g for %g s, %d x %d", i,
                     j->id, j->arrive, j->duration, (int)j->pods, (int)j->gpus, w[i].id,
                     w[i].arrive, w[i].duration, (int)w[i].pods, (int)w[i].gpus);
    }
}

static void check_stats(const topo_sim_trace_stats *s, size_t rows, size_t jobs, size_t no_gpu,
                        size_t not_started, size_t no_end, size_t zero_run, size_t rounded,
                        size_t fractional)
{
    assert_int_equal(s->rows, rows);
    assert_int_equal(s->jobs, jobs);
    assert_int_equal(s->skipped[TOPO_SIM_SKIP_NO_GPU], no_gpu);
    assert_int_equal(s->skipped[TOPO_SIM_SKIP_NOT_STARTED], not_started);
    assert_int_equal(s->skipped[TOPO_SIM_SKIP_NO_END], no_end);
    assert_int_equal(s->skipped[TOPO_SIM_SKIP_ZERO_RUN], zero_run);
    assert_int_equal(s->rounded, rounded);
    assert_int_equal(s->fractional, fractional);
}

/* HeliosData's README rows: submissions 18:41:01, :27 and :28; run times
 * end - start (36,848 s, 249 s, 675,233 s, as its duration column says). */
static void test_trace_public__helios(void **state)
{
    (void)state;
    topo_sim_trace_stats s;
    topo_sim_trace *t = load(TOPO_SIM_TRACE_HELIOS, "helios.csv", &s);
    static const want_job real[] = {
        {"1425511", 0, 36848, 1, 1},
        {"1425512", 26, 249, 1, 4},
        {"1425513", 27, 675233, 1, 1},
    };
    check_jobs(t, real, 3);
    check_stats(&s, 3, 3, 0, 0, 0, 0, 0, 0);
    topo_sim_trace_free(t);

    /* Constructed rows: 105 is the first submission (09:59:30) and has no
     * end, so its duration column (3,600 s) is its run time; 102's 12 GPUs
     * are rounded up to two nodes; 107 and 100 arrive together, in the
     * file's order. */
    t = load(TOPO_SIM_TRACE_HELIOS, "helios-constructed.csv", &s);
    static const want_job made[] = {
        {"105", 0, 3600, 1, 2},
        {"100", 30, 7200, 2, 8},
        {"107", 30, 86400, 8, 8},
        {"102", 90, 600, 2, 8},
    };
    check_jobs(t, made, 4);
    check_stats(&s, 8, 4, 1, 1, 1, 1, 1, 0);
    topo_sim_trace_free(t);
}

/* The README's example job (8 GPUs, submitted 01:11:39, run from the first
 * attempt's start to the last attempt's end) and constructed rows with
 * Philly's "None" times. */
static void test_trace_public__philly(void **state)
{
    (void)state;
    topo_sim_trace_stats s;
    topo_sim_trace *t = load(TOPO_SIM_TRACE_PHILLY, "philly.csv", &s);
    static const want_job real[] = {{"application_1506638472019_14199", 0, 193263, 1, 8}};
    check_jobs(t, real, 1);
    check_stats(&s, 1, 1, 0, 0, 0, 0, 0, 0);
    topo_sim_trace_free(t);

    t = load(TOPO_SIM_TRACE_PHILLY, "philly-constructed.csv", &s);
    static const want_job made[] = {
        {"application_1_0001", 0, 3600, 1, 1},
        {"application_1_0003", 120, 600, 3, 8},
    };
    check_jobs(t, made, 2);
    check_stats(&s, 5, 2, 1, 1, 1, 0, 0, 0);
    topo_sim_trace_free(t);
}

/* Acme's README rows. Kalos's duration column is end - submit (18 and 82 s,
 * the queueing included): the run time is end - start, 8 and 70 s. Its
 * 64-GPU jobs are 8 pods of a node. */
static void test_trace_public__acme(void **state)
{
    (void)state;
    topo_sim_trace_stats s;
    topo_sim_trace *t = load(TOPO_SIM_TRACE_ACME, "acme-seren.csv", &s);
    static const want_job seren[] = {{"5778432", 0, 117, 1, 8}, {"5778469", 336, 2693, 1, 8}};
    check_jobs(t, seren, 2);
    check_stats(&s, 2, 2, 0, 0, 0, 0, 0, 0);
    topo_sim_trace_free(t);

    t = load(TOPO_SIM_TRACE_ACME, "acme-kalos.csv", &s);
    static const want_job kalos[] = {
        {"dlctk696s0jbvitv", 0, 8, 8, 8},
        {"dlc1t2ypl09b8qtp", 1664, 70, 8, 8},
    };
    check_jobs(t, kalos, 2);
    topo_sim_trace_free(t);

    /* k1 is submitted at 19:00:00+08:00, 30 s after k4 at 10:59:30Z. */
    t = load(TOPO_SIM_TRACE_ACME, "acme-constructed.csv", &s);
    static const want_job made[] = {{"k4", 0, 1800, 3, 8}, {"k1", 30, 3600, 2, 8}};
    check_jobs(t, made, 2);
    check_stats(&s, 5, 2, 1, 1, 1, 0, 1, 0);
    topo_sim_trace_free(t);
}

/* PAI's README task row, headerless as PAI ships it: 50 % of a GPU is one
 * GPU, 38 s from launch to end. Constructed rows: instances are the pods,
 * 1000 % (10 GPUs) per instance is more than a node, so 2 x 10 GPUs become
 * 3 pods of 8. */
static void test_trace_public__pai(void **state)
{
    (void)state;
    topo_sim_trace_stats s;
    topo_sim_trace *t = load(TOPO_SIM_TRACE_PAI, "pai.csv", &s);
    static const want_job real[] = {{"4f057009a5d481acec67b088/tensorflow", 0, 38, 1, 1}};
    check_jobs(t, real, 1);
    check_stats(&s, 1, 1, 0, 0, 0, 0, 0, 1);
    topo_sim_trace_free(t);

    t = load(TOPO_SIM_TRACE_PAI, "pai-constructed.csv", &s);
    static const want_job made[] = {
        {"j2/tensorflow", 0, 50.5, 1, 1},
        {"j1/worker", 100, 600, 4, 1},
        {"j3/worker", 300, 3600, 3, 8},
        {"j7/worker", 600, 1000, 8, 8},
    };
    check_jobs(t, made, 4);
    check_stats(&s, 8, 4, 1, 1, 1, 1, 1, 1);
    topo_sim_trace_free(t);
}

typedef struct bad_case {
    topo_sim_trace_format format;
    const char *csv;
    const char *message;
} bad_case;

#define HELIOS_HEADER                                                                        \
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration," \
    "queue\n"
#define HELIOS_ROW(gpus, submit, start, end, dur)                                            \
    "1,u,vc," gpus ",1,1,COMPLETED," submit "," start "," end "," dur ",0\n"
#define T0 "2020-06-09 18:41:01"
#define T1 "2020-06-09 18:42:01"

static const bad_case bad[] = {
    {TOPO_SIM_TRACE_HELIOS,
     "job_id,user,vc,cpu_num,node_num,state,submit_time,start_time,end_time,duration\n",
     "t.csv:1: header: no column \"gpu_num\" (helios reads job_id, gpu_num, submit_time, "
     "start_time, end_time, duration)"},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_ROW("1", T0, T0, T1, "60"),
     "t.csv:1: expected a header naming the columns (helios reads job_id, gpu_num, "
     "submit_time, start_time, end_time, duration)"},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("x", T0, T0, T1, "60"),
     "t.csv:2: gpu_num: expected a number, got \"x\""},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("1.5", T0, T0, T1, "60"),
     "t.csv:2: gpu_num: expected a whole number, got \"1.5\""},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("-1", T0, T0, T1, "60"),
     "t.csv:2: gpu_num: expected a number, got \"-1\""},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("1", "2020-06-09T18:41", T0, T1, "60"),
     "t.csv:2: submit_time: expected a time YYYY-MM-DD HH:MM:SS[+HH:MM], got "
     "\"2020-06-09T18:41\""},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("1", "", T0, T1, "60"),
     "t.csv:2: submit_time: missing"},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("1", T0, T1, T0, "60"),
     "t.csv:2: end_time: 2020-06-09 18:41:01 is before start_time 2020-06-09 18:42:01"},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("1", T0, T0, "", "1e3"),
     "t.csv:2: duration: expected a number, got \"1e3\""},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER "1,u,vc,1\n",
     "t.csv:2: 4 columns, the header has 12"},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER "1,\"u,vc,1\n",
     "t.csv:2: column 2: the quote is not closed"},
    {TOPO_SIM_TRACE_HELIOS,
     HELIOS_HEADER HELIOS_ROW("1", T0, T0, T1, "60") HELIOS_ROW("2", T0, T0, T1, "60"),
     "t.csv:3: job_id: job \"1\" is already on line 2"},
    {TOPO_SIM_TRACE_HELIOS, HELIOS_HEADER HELIOS_ROW("90000000", T0, T0, T1, "60"),
     "t.csv:2: gpu_num: 90000000 GPUs make 11250000 pods of 8, more than 100000"},
    {TOPO_SIM_TRACE_HELIOS,
     HELIOS_HEADER "\"a\"\"b\",u,vc,1,1,1,COMPLETED," T0 "," T0 "," T1 ",60,0\n",
     "t.csv:2: job_id: byte 0x22 at offset 1: only printable ASCII without spaces, commas or "
     "quotes"},
    {TOPO_SIM_TRACE_HELIOS,
     HELIOS_HEADER HELIOS_ROW("1", "1970-01-01 00:00:00", "1970-01-01 00:00:00",
                              "9999-01-01 00:00:00", ""),
     "t.csv:2: end_time: ran 253370764800 s, more than 10000000000"},
    {TOPO_SIM_TRACE_ACME,
     "job_id,gpu_num,submit_time,start_time,end_time,duration,job_id\n",
     "t.csv:1: header: column \"job_id\" given twice"},
    {TOPO_SIM_TRACE_PAI, "j,w,1.0,Terminated,10.0,x,600.0,29.0,50.0,T4\n",
     "t.csv:1: end_time: expected a number, got \"x\""},
    {TOPO_SIM_TRACE_PAI, "j,w,1.0,Terminated,10.0,20.0\n",
     "t.csv:1: 6 columns, the header has 10"},
    {TOPO_SIM_TRACE_PAI, "j,w,0.5,Terminated,10.0,20.0,600.0,29.0,50.0,T4\n",
     "t.csv:1: inst_num: expected a whole number, got \"0.5\""},
};

static void test_trace_public__errors(void **state)
{
    (void)state;
    topo_sim_trace *t = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_create(&t, &err), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        topo_err e = TOPO_ERR_INIT;
        int rc = topo_sim_trace_parse_public(t, bad[i].format, NODE, bad[i].csv,
                                             strlen(bad[i].csv), "t.csv", NULL, &e);
        if (rc >= 0)
            fail_msg("case %zu: accepted", i);
        if (strcmp(e.text, bad[i].message) != 0)
            fail_msg("case %zu:\n got  %s\n want %s", i, e.text, bad[i].message);
        assert_int_equal(topo_sim_trace_count(t), 0);
    }
    /* The options themselves. */
    topo_err e = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_parse_public(t, TOPO_SIM_TRACE_TOPO, NODE, "", 0, "t.csv",
                                                 NULL, &e),
                     TOPO_EINVALID);
    assert_int_equal(topo_sim_trace_parse_public(t, TOPO_SIM_TRACE_PAI, 0, "", 0, "t.csv", NULL,
                                                 &e),
                     TOPO_EINVALID);
    assert_string_equal(e.text, "GPUs per node: between 1 and 1024, got 0");
    topo_sim_trace_free(t);
}

/* What a public trace read gives, written as topo's CSV, reads back the
 * same. */
static void test_trace_public__write_read_back(void **state)
{
    (void)state;
    topo_sim_trace_stats s;
    topo_sim_trace *t = load(TOPO_SIM_TRACE_PAI, "pai-constructed.csv", &s), *back = NULL;
    topo_buf b = TOPO_BUF_INIT(0);
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_sim_trace_write_csv(t, &b), 0);
    assert_int_equal(topo_sim_trace_create(&back, &err), 0);
    if (topo_sim_trace_parse_csv(back, b.ptr, b.len, "back.csv", &err) < 0)
        fail_msg("%s\n%s", err.text, b.ptr);
    assert_int_equal(topo_sim_trace_count(back), topo_sim_trace_count(t));
    for (size_t i = 0; i < topo_sim_trace_count(t); i++) {
        const topo_sim_job *x = topo_sim_trace_job(t, i), *y = topo_sim_trace_job(back, i);
        assert_string_equal(x->id, y->id);
        assert_true(x->arrive == y->arrive && x->duration == y->duration &&
                    x->pods == y->pods && x->gpus == y->gpus);
    }
    topo_buf_dispose(&b);
    topo_sim_trace_free(back);
    topo_sim_trace_free(t);
}

static void test_trace_public__names(void **state)
{
    (void)state;
    static const char *const names[] = {"topo", "helios", "philly", "acme", "pai"};
    for (int i = 0; i < TOPO_SIM_TRACE_FORMATS; i++) {
        assert_string_equal(topo_sim_trace_format_name((topo_sim_trace_format)i), names[i]);
        assert_int_equal(topo_sim_trace_format_parse(names[i]), i);
    }
    assert_int_equal(topo_sim_trace_format_parse("csv"), -1);
    assert_string_equal(topo_sim_trace_skip_name(TOPO_SIM_SKIP_NOT_STARTED), "not-started");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_public__helios),
        cmocka_unit_test(test_trace_public__philly),
        cmocka_unit_test(test_trace_public__acme),
        cmocka_unit_test(test_trace_public__pai),
        cmocka_unit_test(test_trace_public__errors),
        cmocka_unit_test(test_trace_public__write_read_back),
        cmocka_unit_test(test_trace_public__names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
