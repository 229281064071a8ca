/* The only HTTP client of topo, over libcurl (no other file includes curl).
 * One topo_http per thread: it keeps one curl handle, so connections and TLS
 * sessions are reused. Every body read is bounded; retriable failures
 * (connection errors, 429 with Retry-After, 5xx on idempotent requests) are
 * retried with jittered exponential backoff; a token bucket limits QPS.
 * Bearer tokens are read from a file, re-read every token_reload_ms and
 * immediately after a 401 (bound service-account tokens rotate). */
#ifndef TOPO_HTTP_H
#define TOPO_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"

typedef struct topo_http topo_http;

typedef struct topo_http_opts {
    unsigned int version;
    const char *base_url;         /* "https://10.0.0.1:6443", no trailing slash */
    const char *ca_file;          /* PEM bundle to verify the server, or NULL */
    const char *ca_data;          /* PEM text (kubeconfig certificate-authority-data), or NULL */
    const char *client_cert_file; /* or client_cert_data (PEM text) */
    const char *client_cert_data;
    const char *client_key_file; /* or client_key_data (PEM text) */
    const char *client_key_data;
    int insecure_skip_verify;
    const char *token;            /* a fixed bearer token, or NULL */
    const char *token_file;       /* re-read periodically and after 401, or NULL */
    long token_reload_ms;         /* default 60000 */
    long timeout_ms;              /* whole request (not streams), default 30000 */
    long connect_timeout_ms;      /* default 5000 */
    size_t max_body;              /* default TOPO_MAX_K8S_RESPONSE */
    double qps;                   /* default 50 */
    double burst;                 /* default 100 */
    int max_retries;              /* default 5 */
    long backoff_base_ms;         /* default 200 */
    long backoff_max_ms;          /* default 30000 */
    const char *user_agent;       /* default "topo/<version>" */
} topo_http_opts;

#define TOPO_HTTP_OPTS_VERSION 1
#define TOPO_HTTP_OPTS_INIT                                                               \
    {TOPO_HTTP_OPTS_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, 60000, \
     30000, 5000, 0, 50.0, 100.0, 5, 200, 30000, NULL}

typedef struct topo_http_request {
    const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *path;         /* path and query, already escaped: "/api/v1/nodes?limit=500" */
    const char *content_type; /* for the body, or NULL */
    const char *body;
    size_t body_len;
    long timeout_ms;          /* 0: the client's default */
} topo_http_request;

typedef struct topo_http_response {
    long status;
    char *body; /* NUL-terminated, owned: topo_http_response_dispose */
    size_t len;
} topo_http_response;

#define TOPO_HTTP_RESPONSE_INIT {0, NULL, 0}

int topo_http_create(topo_http **out, const topo_http_opts *opts, topo_err *err);
void topo_http_free(topo_http *http);

/* Sends a request, with retries. Returns 0 when a response arrived (any
 * status: the caller maps it), or a code: TOPO_ECONNECT, TOPO_ETIMEOUT,
 * TOPO_ELIMIT (body too big), TOPO_ETHROTTLED / TOPO_ESERVER when retries ran
 * out, TOPO_ENOMEM. */
int topo_http_do(topo_http *http, const topo_http_request *req, topo_http_response *resp,
                 topo_err *err);
void topo_http_response_dispose(topo_http_response *resp);

/* Streams a response line by line (watch: one JSON event per line) without
 * buffering the stream; each line at most max_line bytes. fn returns 0 to
 * continue, non-zero to stop (returned as is). *out_status gets the HTTP
 * status; a non-2xx status delivers its body as one line. No retries: the
 * caller resumes. */
typedef int (*topo_http_line_fn)(const char *line, size_t len, void *payload);
int topo_http_stream(topo_http *http, const topo_http_request *req, size_t max_line,
                     topo_http_line_fn fn, void *payload, long *out_status, topo_err *err);

/* Counters for metrics and tests. */
typedef struct topo_http_stats {
    uint64_t requests;      /* attempts sent */
    uint64_t retries;
    uint64_t token_reloads;
    uint64_t throttled_ms;  /* time spent waiting in the rate limiter */
} topo_http_stats;
void topo_http_get_stats(const topo_http *http, topo_http_stats *out);

#endif
