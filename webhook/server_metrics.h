/* The metrics of topo-webhook's HTTP server (topo/metrics.h): its families,
 * in the order /metrics has always listed them, and how a request on the
 * HTTPS port is counted. The server updates the series itself (they are
 * atomic); values it keeps for its own decisions are copied in by the
 * refresh hook it registers, before each render. */
#ifndef TOPO_WEBHOOK_SERVER_METRICS_H
#define TOPO_WEBHOOK_SERVER_METRICS_H

#include "conn_deadline.h"

#include "topo/error.h"
#include "topo/metrics.h"

/* The admission path: also the metrics' webhook label. */
#define WH_MUTATE_PATH "/mutate"

/* What became of a request on the HTTPS port. */
typedef enum {
    WH_OUT_HANDLED,       /* the handler answered */
    WH_OUT_HANDLER_ERROR, /* the handler failed: 500 */
    WH_OUT_REJECTED,      /* refused by the server (path, method, body) */
    WH_NOUTCOMES
} wh_outcome;

/* Series with a fixed label set are looked up once at init; those by
 * status code are created by the first request with that code, so a code
 * never seen shows no line. */
typedef struct wh_metrics {
    topo_metrics *reg;
    topo_metrics_family *cr_requests; /* {webhook, code} */
    topo_metrics_family *requests;    /* {code, outcome} */
    topo_metrics_family *latency;     /* {webhook, code} */
    topo_metrics_series *in_flight;   /* also what the shutdown waits on */
    topo_metrics_series *body_too_large, *body_over_budget;
    topo_metrics_series *body_bytes_held; /* copied in by the refresh hook */
    topo_metrics_series *tls_reloads_ok, *tls_reloads_failed;
    topo_metrics_series *connections_total;
    topo_metrics_series *cut[WH_NCUTS]; /* copied in by the refresh hook */
    topo_metrics_series *evicted[WH_NEVICTS]; /* copied in by the refresh hook */
    topo_metrics_series *refused;             /* copied in by the refresh hook */
    topo_metrics_series *ready;         /* computed by the refresh hook */
    topo_metrics_series *deferred, *deferred_shed; /* WH_HANDLE_DEFER: to the pool, or shed */
    topo_metrics_series *deferred_expired;         /* queued past its deadline */
} wh_metrics;

/* Registers every family; refresh(payload) runs before each render. On
 * failure wh_metrics_dispose() still frees what was made. */
int wh_metrics_init(wh_metrics *m, topo_metrics_hook_fn refresh, void *payload, topo_err *err);

/* One answered request: by status code and outcome, and its latency from
 * start_ns to now_ns (topo_clock_ns) unless start_ns is 0. */
void wh_metrics_request(wh_metrics *m, int status, wh_outcome outcome, long long start_ns,
                        long long now_ns);

void wh_metrics_dispose(wh_metrics *m);

#endif
