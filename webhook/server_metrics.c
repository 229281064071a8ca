/* The metrics of topo-webhook's HTTP server (see server_metrics.h). */
#include "server_metrics.h"

#include <stdio.h>
#include <string.h>

/* Status codes counted separately; anything else counts as "other". */
static const int wh_codes[] = {200, 400, 404, 405, 413, 500, 503, 0};
#define WH_NCODES (sizeof wh_codes / sizeof wh_codes[0])
static const char *const wh_outcome_names[WH_NOUTCOMES] = {"handled", "handler_error",
                                                           "rejected"};
/* The API server's webhook latency buckets (apiserver admission metrics.go). */
static const double wh_buckets[] = {0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25};
#define WH_NBUCKETS (sizeof wh_buckets / sizeof wh_buckets[0])

static size_t code_index(int status)
{
    for (size_t i = 0; i + 1 < WH_NCODES; i++)
        if (wh_codes[i] == status)
            return i;
    return WH_NCODES - 1;
}

static const char *code_label(size_t ci, char *buf, size_t size)
{
    if (wh_codes[ci] == 0)
        return "other";
    snprintf(buf, size, "%d", wh_codes[ci]);
    return buf;
}

void wh_metrics_request(wh_metrics *m, int status, wh_outcome outcome, long long start_ns,
                        long long now_ns)
{
    char cb[16];
    const char *code = code_label(code_index(status), cb, sizeof cb);
    const char *by_code[] = {WH_MUTATE_PATH, code};
    const char *by_outcome[] = {code, wh_outcome_names[outcome]};
    topo_metrics_add(topo_metrics_get(m->cr_requests, by_code), 1);
    topo_metrics_add(topo_metrics_get(m->requests, by_outcome), 1);
    if (start_ns > 0) {
        long long d = now_ns - start_ns;
        if (d < 0)
            d = 0;
        topo_metrics_observe(topo_metrics_get(m->latency, by_code), (double)d / 1e9);
    }
}

/* One series of a family registered just before (NULL values: no labels). */
static topo_metrics_series *fixed_series(topo_metrics_family *f, const char *value)
{
    const char *v[] = {value};
    return topo_metrics_get(f, value ? v : NULL);
}

/* The series with a fixed label set exist from the start (they show 0). */
int wh_metrics_init(wh_metrics *m, topo_metrics_hook_fn refresh, void *payload, topo_err *err)
{
    static const char *const webhook_code[] = {"webhook", "code"};
    static const char *const code_outcome[] = {"code", "outcome"};
    static const char *const webhook[] = {"webhook"};
    static const char *const reason[] = {"reason"};
    static const char *const state[] = {"state"};
    static const char *const result[] = {"result"};
    topo_metrics_family *f;
    int rc;
    memset(m, 0, sizeof *m);
    if ((rc = topo_metrics_create(&m->reg, 0, err)) != 0 ||
        (rc = topo_metrics_counter(m->reg, &m->cr_requests,
                                   "controller_runtime_webhook_requests_total",
                                   "Total number of admission requests by HTTP status code.",
                                   webhook_code, 2, err)) != 0 ||
        (rc = topo_metrics_counter(m->reg, &m->requests, "topo_webhook_requests_total",
                                   "Requests to the HTTPS port by status code and outcome "
                                   "(handled, handler_error, rejected by the server).",
                                   code_outcome, 2, err)) != 0 ||
        (rc = topo_metrics_histogram(m->reg, &m->latency,
                                     "controller_runtime_webhook_latency_seconds",
                                     "Histogram of the latency of processing admission requests.",
                                     webhook_code, 2, wh_buckets, WH_NBUCKETS, err)) != 0)
        return rc;
    if ((rc = topo_metrics_gauge(m->reg, &f, "controller_runtime_webhook_requests_in_flight",
                                 "Current number of admission requests being served.", webhook,
                                 1, err)) != 0)
        return rc;
    m->in_flight = fixed_series(f, WH_MUTATE_PATH);
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_body_rejections_total",
                                   "Request bodies refused for size.", reason, 1, err)) != 0)
        return rc;
    m->body_too_large = fixed_series(f, "too_large");
    m->body_over_budget = fixed_series(f, "over_budget");
    if ((rc = topo_metrics_gauge(m->reg, &f, "topo_webhook_body_bytes_held",
                                 "Request body buffer bytes held now (counted against "
                                 "--max-body-memory as bodies arrive).",
                                 NULL, 0, err)) != 0)
        return rc;
    m->body_bytes_held = fixed_series(f, NULL);
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_tls_reloads_total",
                                   "Serving certificate reloads by result.", result, 1, err)) != 0)
        return rc;
    m->tls_reloads_ok = fixed_series(f, "ok");
    m->tls_reloads_failed = fixed_series(f, "error");
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_connections_total",
                                   "TLS connections accepted.", NULL, 0, err)) != 0)
        return rc;
    m->connections_total = fixed_series(f, NULL);
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_connections_cut_total",
                                   "TLS connections closed by the server past an absolute "
                                   "deadline: TLS handshake and headers (header_timeout), a body "
                                   "under the minimum rate (slow_body), keep-alive idle or an "
                                   "unread response (idle).",
                                   reason, 1, err)) != 0)
        return rc;
    for (size_t r = 0; r < WH_NCUTS; r++)
        m->cut[r] = fixed_series(f, wh_cut_reason_names[r]);
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_connections_evicted_total",
                                   "TLS connections closed by the server at the connection cap "
                                   "to make room for a new one, by what they were doing: TLS "
                                   "handshake or headers not complete (pending), keep-alive "
                                   "between requests (idle).",
                                   state, 1, err)) != 0)
        return rc;
    for (size_t e = 0; e < WH_NEVICTS; e++)
        m->evicted[e] = fixed_series(f, wh_evict_state_names[e]);
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_connections_refused_total",
                                   "New TLS connections closed at once at the connection cap: "
                                   "every other connection had a request in progress.",
                                   NULL, 0, err)) != 0)
        return rc;
    m->refused = fixed_series(f, NULL);
    if ((rc = topo_metrics_gauge(m->reg, &f, "topo_webhook_ready", "Whether /readyz answers 200.",
                                 NULL, 0, err)) != 0)
        return rc;
    m->ready = fixed_series(f, NULL);
    if ((rc = topo_metrics_counter(m->reg, &f, "topo_webhook_deferred_total",
                                   "Requests whose work waits on the network (a forward to the "
                                   "placer), run off the request threads on the defer pool; "
                                   "shed: the pool was full, answered at once without it; "
                                   "expired: its deadline came while it was queued, answered "
                                   "at once without it.",
                                   result, 1, err)) != 0)
        return rc;
    m->deferred = fixed_series(f, "deferred");
    m->deferred_shed = fixed_series(f, "shed");
    m->deferred_expired = fixed_series(f, "expired");
    if ((rc = topo_metrics_on_render(m->reg, refresh, payload, err)) != 0)
        return rc;
    /* a fixed series missing (out of memory) would silently never count */
    if (!m->in_flight || !m->body_too_large || !m->body_over_budget || !m->body_bytes_held ||
        !m->tls_reloads_ok || !m->tls_reloads_failed || !m->connections_total || !m->ready ||
        !m->refused || !m->deferred || !m->deferred_shed || !m->deferred_expired)
        return topo_err_nomem(err, "metrics");
    for (size_t r = 0; r < WH_NCUTS; r++)
        if (!m->cut[r])
            return topo_err_nomem(err, "metrics");
    for (size_t e = 0; e < WH_NEVICTS; e++)
        if (!m->evicted[e])
            return topo_err_nomem(err, "metrics");
    return 0;
}

void wh_metrics_dispose(wh_metrics *m)
{
    topo_metrics_free(m->reg);
    m->reg = NULL;
}
