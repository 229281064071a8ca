/* lib/metrics/metrics.c: the exact text of counters, gauges and histograms
 * with labels, escaping, name validation, render hooks and collected
 * families, the series bound, and concurrent updates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "topo/limits.h"
#include "topo/metrics.h"

static topo_metrics *new_registry(size_t max_series)
{
    topo_metrics *m = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_metrics_create(&m, max_series, &err), 0);
    assert_non_null(m);
    return m;
}

static void assert_render(topo_metrics *m, const char *want)
{
    char *text = topo_metrics_render(m);
    assert_non_null(text);
    assert_string_equal(text, want);
    free(text);
}

static void test_metrics__counter_and_gauge(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(0);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *req, *total, *flight;
    static const char *const labels[] = {"code", "outcome"};
    assert_int_equal(
        topo_metrics_counter(m, &req, "req_total", "Requests by code.", labels, 2, &err), 0);
    assert_int_equal(topo_metrics_counter(m, &total, "conns_total", "Connections.", NULL, 0, &err),
                     0);
    assert_int_equal(topo_metrics_gauge(m, &flight, "in_flight", "Now.", NULL, 0, &err), 0);
    /* labelled families show no series before the first update; plain ones 0 */
    assert_render(m, "# HELP req_total Requests by code.\n"
                     "# TYPE req_total counter\n"
                     "# HELP conns_total Connections.\n"
                     "# TYPE conns_total counter\n"
                     "conns_total 0\n"
                     "# HELP in_flight Now.\n"
                     "# TYPE in_flight gauge\n"
                     "in_flight 0\n");

    const char *v404[] = {"404", "rejected"}, *v200[] = {"200", "handled"};
    topo_metrics_add(topo_metrics_get(req, v404), 1);
    topo_metrics_add(topo_metrics_get(req, v200), 5);
    topo_metrics_add(topo_metrics_get(req, v404), 2);
    assert_ptr_equal(topo_metrics_get(req, v200), topo_metrics_get(req, v200));
    topo_metrics_add(topo_metrics_get(total, NULL), 7);
    topo_metrics_add(topo_metrics_get(total, NULL), -3); /* a counter never goes down */
    topo_metrics_series *g = topo_metrics_get(flight, NULL);
    topo_metrics_add(g, 3);
    topo_metrics_add(g, -5);
    assert_int_equal(topo_metrics_value(g), -2);
    assert_int_equal(topo_metrics_value(topo_metrics_get(req, v404)), 3);
    /* series in creation order, not sorted */
    assert_render(m, "# HELP req_total Requests by code.\n"
                     "# TYPE req_total counter\n"
                     "req_total{code=\"404\",outcome=\"rejected\"} 3\n"
                     "req_total{code=\"200\",outcome=\"handled\"} 5\n"
                     "# HELP conns_total Connections.\n"
                     "# TYPE conns_total counter\n"
                     "conns_total 7\n"
                     "# HELP in_flight Now.\n"
                     "# TYPE in_flight gauge\n"
                     "in_flight -2\n");
    topo_metrics_set(g, 9);
    topo_metrics_set(topo_metrics_get(total, NULL), 12345678901LL);
    char *text = topo_metrics_render(m);
    assert_non_null(strstr(text, "\nconns_total 12345678901\n"));
    assert_non_null(strstr(text, "\nin_flight 9\n"));
    free(text);
    /* NULL (a dropped series) is a no-op everywhere */
    topo_metrics_add(NULL, 1);
    topo_metrics_set(NULL, 1);
    topo_metrics_observe(NULL, 1.0);
    assert_int_equal(topo_metrics_value(NULL), 0);
    topo_metrics_free(m);
    topo_metrics_free(NULL);
}

static void test_metrics__histogram(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(0);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *lat, *plain;
    static const char *const labels[] = {"webhook", "code"};
    static const double bounds[] = {0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25};
    assert_int_equal(topo_metrics_histogram(m, &lat, "lat_seconds", "Latency.", labels, 2, bounds,
                                            8, &err),
                     0);
    static const double one[] = {1};
    assert_int_equal(
        topo_metrics_histogram(m, &plain, "size", "Sizes.", NULL, 0, one, 1, &err), 0);
    const char *v[] = {"/mutate", "200"};
    topo_metrics_series *s = topo_metrics_get(lat, v);
    topo_metrics_observe(s, 0.001);
    topo_metrics_observe(s, 0.005); /* a bound belongs to its bucket */
    topo_metrics_observe(s, 0.3);
    topo_metrics_observe(s, 30.0); /* only in +Inf */
    topo_metrics_observe(topo_metrics_get(plain, NULL), 0.5);
    topo_metrics_observe(topo_metrics_get(plain, NULL), 2);
    assert_render(m,
                  "# HELP lat_seconds Latency.\n"
                  "# TYPE lat_seconds histogram\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"0.005\"} 2\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"0.025\"} 2\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"0.1\"} 2\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"0.5\"} 3\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"1\"} 3\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"2.5\"} 3\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"10\"} 3\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"25\"} 3\n"
                  "lat_seconds_bucket{webhook=\"/mutate\",code=\"200\",le=\"+Inf\"} 4\n"
                  "lat_seconds_sum{webhook=\"/mutate\",code=\"200\"} 30.306000000\n"
                  "lat_seconds_count{webhook=\"/mutate\",code=\"200\"} 4\n"
                  "# HELP size Sizes.\n"
                  "# TYPE size histogram\n"
                  "size_bucket{le=\"1\"} 1\n"
                  "size_bucket{le=\"+Inf\"} 2\n"
                  "size_sum 2.500000000\n"
                  "size_count 2\n");
    /* counter and gauge updates do nothing on a histogram, and back */
    topo_metrics_add(s, 5);
    assert_int_equal(topo_metrics_value(s), 0);
    topo_metrics_free(m);
}

static void test_metrics__escaping(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(0);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *f;
    static const char *const labels[] = {"namespace"};
    assert_int_equal(topo_metrics_gauge(m, &f, "held", "Back\\slash and\nnewline, \"quotes\" kept.",
                                        labels, 1, &err),
                     0);
    const char *v[] = {"a\\b\"c\nd"};
    topo_metrics_set(topo_metrics_get(f, v), 1);
    const char *empty[] = {""};
    topo_metrics_set(topo_metrics_get(f, empty), 2);
    assert_render(m, "# HELP held Back\\\\slash and\\nnewline, \"quotes\" kept.\n"
                     "# TYPE held gauge\n"
                     "held{namespace=\"a\\\\b\\\"c\\nd\"} 1\n"
                     "held{namespace=\"\"} 2\n");
    topo_metrics_free(m);
}

static void test_metrics__names(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(0);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *f = NULL;
    static const char *const ok[] = {"a_b", "_x9"};
    assert_int_equal(topo_metrics_counter(m, &f, "ns:sub_total9", "h", ok, 2, &err), 0);
    assert_non_null(f);

    const char *bad_names[] = {"", "9lives", "a-b", "a b", "é", NULL};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        topo_err_clear(&err);
        assert_int_equal(topo_metrics_counter(m, &f, bad_names[i], "h", NULL, 0, &err),
                         TOPO_EINVALID);
        assert_null(f);
        assert_int_equal(err.code, TOPO_EINVALID);
        assert_non_null(strstr(err.text, "metric name"));
    }
    const char *bad_labels[][2] = {{"ok", "a:b"}, {"9a", "ok"}, {"__name", "ok"},
                                   {"x", "x"},    {"", "ok"},   {"a.b", "ok"}};
    for (size_t i = 0; i < sizeof bad_labels / sizeof bad_labels[0]; i++) {
        topo_err_clear(&err);
        assert_int_equal(topo_metrics_gauge(m, &f, "good", "h", bad_labels[i], 2, &err),
                         TOPO_EINVALID);
        assert_null(f);
        assert_non_null(strstr(err.text, "label"));
    }
    /* registered once; a histogram's "le" is its own */
    assert_int_equal(topo_metrics_gauge(m, &f, "ns:sub_total9", "h", NULL, 0, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "twice"));
    static const char *const le[] = {"le"};
    static const double b[] = {1, 2}, unordered[] = {2, 1}, same[] = {1, 1};
    assert_int_equal(topo_metrics_histogram(m, &f, "h1", "h", le, 1, b, 2, &err), TOPO_EINVALID);
    assert_int_equal(topo_metrics_gauge(m, &f, "h1", "h", le, 1, &err), 0); /* fine elsewhere */
    assert_int_equal(topo_metrics_histogram(m, &f, "h2", "h", NULL, 0, unordered, 2, &err),
                     TOPO_EINVALID);
    assert_int_equal(topo_metrics_histogram(m, &f, "h2", "h", NULL, 0, same, 2, &err),
                     TOPO_EINVALID);
    assert_int_equal(topo_metrics_gauge(m, &f, "h2", NULL, NULL, 0, &err), TOPO_EINVALID);
    /* nothing failed got registered */
    assert_render(m, "# HELP ns:sub_total9 h\n"
                     "# TYPE ns:sub_total9 counter\n"
                     "# HELP h1 h\n"
                     "# TYPE h1 gauge\n");
    /* a lookup needs every label value */
    const char *partial[] = {"x", NULL};
    topo_metrics_family *c;
    assert_int_equal(topo_metrics_counter(m, &c, "c", "h", ok, 2, &err), 0);
    assert_null(topo_metrics_get(c, partial));
    assert_null(topo_metrics_get(c, NULL));
    topo_metrics_free(m);
}

static void test_metrics__series_bound(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(3);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *f, *g;
    static const char *const labels[] = {"ns"};
    assert_int_equal(topo_metrics_counter(m, &f, "per_ns_total", "h", labels, 1, &err), 0);
    assert_int_equal(topo_metrics_counter(m, &g, "other_total", "h", labels, 1, &err), 0);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++) {
        const char *v[] = {names[i]};
        topo_metrics_add(topo_metrics_get(f, v), 1);
    }
    /* d and e were dropped, counted; known series still update */
    assert_int_equal(topo_metrics_dropped(m), 2);
    const char *a[] = {"a"}, *d[] = {"d"};
    assert_null(topo_metrics_get(f, d));
    assert_int_equal(topo_metrics_dropped(m), 3);
    topo_metrics_add(topo_metrics_get(f, a), 1);
    /* the bound is per family */
    topo_metrics_add(topo_metrics_get(g, d), 4);
    assert_render(m, "# HELP per_ns_total h\n"
                     "# TYPE per_ns_total counter\n"
                     "per_ns_total{ns=\"a\"} 2\n"
                     "per_ns_total{ns=\"b\"} 1\n"
                     "per_ns_total{ns=\"c\"} 1\n"
                     "# HELP other_total h\n"
                     "# TYPE other_total counter\n"
                     "other_total{ns=\"d\"} 4\n");
    topo_metrics_free(m);

    /* the default bound */
    m = new_registry(0);
    assert_int_equal(topo_metrics_gauge(m, &f, "many", "h", labels, 1, &err), 0);
    char name[32];
    for (unsigned i = 0; i < TOPO_MAX_METRIC_SERIES + 10; i++) {
        snprintf(name, sizeof name, "n%u", i);
        const char *v[] = {name};
        topo_metrics_set(topo_metrics_get(f, v), 1);
    }
    assert_int_equal(topo_metrics_dropped(m), 10);
    topo_metrics_free(m);
}

/* ---- render-time values ---- */

typedef struct {
    int64_t ready;
    topo_metrics_series *ready_s;
    int calls;
} hook_state;

static void copy_ready(void *payload)
{
    hook_state *h = payload;
    h->calls++;
    topo_metrics_set(h->ready_s, h->ready);
}

typedef struct {
    const char *ns[4];
    int64_t amount[4];
    size_t n;
} rows;

static int emit_rows(void *payload, topo_metrics_sink *sink)
{
    const rows *r = payload;
    for (size_t i = 0; i < r->n; i++) {
        const char *v[] = {r->ns[i], "pods"};
        int rc = topo_metrics_emit(sink, v, r->amount[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void test_metrics__render_time(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(2);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *ready, *unclaimed;
    hook_state h = {0, NULL, 0};
    rows r = {{"team-a", "x\"y", "c", NULL}, {24, 3, 1, 0}, 0};
    static const char *const labels[] = {"namespace", "resource"};
    assert_int_equal(topo_metrics_gauge(m, &ready, "ready", "Ready.", NULL, 0, &err), 0);
    assert_int_equal(topo_metrics_collected(m, &unclaimed, TOPO_METRICS_GAUGE, "unclaimed",
                                            "Reserved.", labels, 2, emit_rows, &r, &err),
                     0);
    assert_int_equal(topo_metrics_collected(m, NULL, TOPO_METRICS_HISTOGRAM, "nope", "h", NULL, 0,
                                            emit_rows, &r, &err),
                     TOPO_EINVALID);
    h.ready_s = topo_metrics_get(ready, NULL);
    assert_int_equal(topo_metrics_on_render(m, copy_ready, &h, &err), 0);
    assert_int_equal(topo_metrics_on_render(m, NULL, &h, &err), TOPO_EINVALID);
    /* a collected family has no stored series */
    assert_null(topo_metrics_get(unclaimed, labels));
    assert_render(m, "# HELP ready Ready.\n"
                     "# TYPE ready gauge\n"
                     "ready 0\n"
                     "# HELP unclaimed Reserved.\n"
                     "# TYPE unclaimed gauge\n");
    h.ready = 1;
    r.n = 2;
    assert_render(m, "# HELP ready Ready.\n"
                     "# TYPE ready gauge\n"
                     "ready 1\n"
                     "# HELP unclaimed Reserved.\n"
                     "# TYPE unclaimed gauge\n"
                     "unclaimed{namespace=\"team-a\",resource=\"pods\"} 24\n"
                     "unclaimed{namespace=\"x\\\"y\",resource=\"pods\"} 3\n");
    /* rows come and go; past the bound (2 here) they are dropped, counted */
    r.ns[0] = "team-b";
    r.n = 3;
    assert_render(m, "# HELP ready Ready.\n"
                     "# TYPE ready gauge\n"
                     "ready 1\n"
                     "# HELP unclaimed Reserved.\n"
                     "# TYPE unclaimed gauge\n"
                     "unclaimed{namespace=\"team-b\",resource=\"pods\"} 24\n"
                     "unclaimed{namespace=\"x\\\"y\",resource=\"pods\"} 3\n");
    assert_int_equal(topo_metrics_dropped(m), 1);
    assert_int_equal(h.calls, 3);
    /* into a caller's bounded buffer: a render too large fails whole */
    topo_buf b = TOPO_BUF_INIT(40);
    assert_int_equal(topo_metrics_render_buf(m, &b), TOPO_ELIMIT);
    topo_buf_dispose(&b);
    topo_metrics_free(m);
}

/* ---- concurrency ---- */

#define NTHREADS 4
#define NITER 20000

typedef struct {
    topo_metrics_family *counter, *hist;
    topo_metrics *m;
    int id;
} worker_arg;

static void *worker(void *p)
{
    const worker_arg *a = p;
    static const char *const codes[] = {"200", "400", "500"};
    for (int i = 0; i < NITER; i++) {
        /* every thread creates the same series, racing on the first */
        const char *v[] = {codes[i % 3]};
        topo_metrics_add(topo_metrics_get(a->counter, v), 1);
        topo_metrics_observe(topo_metrics_get(a->hist, v), (i % 2) ? 0.25 : 2.0);
        if (i % 1000 == 0)
            free(topo_metrics_render(a->m)); /* renders race with updates */
    }
    return NULL;
}

static void test_metrics__concurrent(void **state)
{
    (void)state;
    topo_metrics *m = new_registry(0);
    topo_err err = TOPO_ERR_INIT;
    topo_metrics_family *c, *h;
    static const char *const labels[] = {"code"};
    static const double bounds[] = {1};
    assert_int_equal(topo_metrics_counter(m, &c, "n_total", "h", labels, 1, &err), 0);
    assert_int_equal(topo_metrics_histogram(m, &h, "d", "h", labels, 1, bounds, 1, &err), 0);
    pthread_t t[NTHREADS];
    worker_arg args[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        args[i] = (worker_arg){c, h, m, i};
        assert_int_equal(pthread_create(&t[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    int64_t total = 0;
    static const char *const codes[] = {"200", "400", "500"};
    for (int k = 0; k < 3; k++) {
        const char *v[] = {codes[k]};
        total += topo_metrics_value(topo_metrics_get(c, v));
    }
    assert_int_equal(total, (int64_t)NTHREADS * NITER);
    /* one series per code however the creations raced */
    char *text = topo_metrics_render(m);
    assert_non_null(text);
    size_t lines = 0;
    for (const char *p = text; (p = strstr(p, "n_total{")) != NULL; p++)
        lines++;
    assert_int_equal(lines, 3);
    /* 20000 iterations: codes get 6667, 6667 and 6666 per thread; half of
     * the observations are 0.25 (in le="1"), the sum exact in binary */
    assert_non_null(strstr(text, "n_total{code=\"200\"} 26668\n"));
    assert_non_null(strstr(text, "n_total{code=\"500\"} 26664\n"));
    assert_non_null(strstr(text, "d_count{code=\"200\"} 26668\n"));
    assert_non_null(strstr(text, "d_bucket{code=\"200\",le=\"1\"} 13332\n"));
    assert_non_null(strstr(text, "d_sum{code=\"200\"} 30005.000000000\n"));
    free(text);
    assert_int_equal(topo_metrics_dropped(m), 0);
    topo_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics__counter_and_gauge),
        cmocka_unit_test(test_metrics__histogram),
        cmocka_unit_test(test_metrics__escaping),
        cmocka_unit_test(test_metrics__names),
        cmocka_unit_test(test_metrics__series_bound),
        cmocka_unit_test(test_metrics__render_time),
        cmocka_unit_test(test_metrics__concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
