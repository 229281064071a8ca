/* The HTTPS transport of topo-webhook (libmicrohttpd), knowing nothing about
 * admission.
 *
 * - POST /mutate: the body is accumulated per connection up to max_body
 *   (a larger Content-Length gets 413 before any of the body is read), then
 *   handed to the caller's handler, whose answer is sent as application/json.
 *   Other paths get 404, other methods on /mutate 405.
 * - A thread pool (threads, default: online cores), HTTP/1.1 keep-alive, TLS
 *   1.2/1.3 from PEM files.
 * - Certificate rotation without a restart: wh_server_tick() (called by
 *   the owner's loop every second or so) checks the cert/key files' inode,
 *   size and mtime every cert_check_ms; on a change it starts a new daemon on
 *   a dup() of the same listening socket with the new pair, then quiesces the
 *   old one (it accepts nothing more, answers the connections it has with
 *   "Connection: close", and is stopped once they are gone or idle). A pair
 *   that fails to load leaves the old daemon serving.
 * - A plain-HTTP health port on health_port (lib/probe, topo/probe.h):
 *   GET /healthz and /livez (200 while the process runs), /readyz (200 once
 *   wh_server_set_ready(1): its check "admission"; 503 otherwise and
 *   during shutdown), ?verbose and per-check paths, /metrics (Prometheus
 *   text) unless metrics_port gives /metrics a plain-HTTP port of its own.
 * - Absolute connection deadlines (conn_deadline.h): handshake and headers
 *   within header_timeout_ms of the accept, a body at min_body_rate after a
 *   grace, the next keep-alive request within idle_timeout_s.
 * - Work that waits on the network (a forward to the placer) runs on a
 *   small pool of its own, the connection suspended meanwhile
 *   (WH_HANDLE_DEFER): the request threads keep answering.
 * - At most max_connections TLS connections: one accepted past it evicts
 *   the connection pending (handshake, headers) or idle the longest
 *   (conn_deadline.h), never one with a request in progress.
 *
 * No global state: everything lives in the wh_server. The functions
 * below are called from one owner thread; the handler runs on the pool's
 * threads, concurrently. */
#ifndef TOPO_WEBHOOK_SERVER_H
#define TOPO_WEBHOOK_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/limits.h"

/* The default max_body: the API server refuses larger request bodies. */
#define TOPO_WH_MAX_BODY TOPO_MAX_ADMISSION_BODY

/* Where a handler call runs (wh_request.phase). */
typedef enum wh_phase {
    WH_PHASE_NOW = 0,  /* on a request thread: answer, or return WH_HANDLE_DEFER for work
                        * that waits on the network (a forward) */
    WH_PHASE_DEFERRED, /* the same request again, on a thread of the defer pool: do it */
    WH_PHASE_SHED,     /* the same request again, the pool full or stopping: answer at once
                        * without the slow part */
    WH_PHASE_EXPIRED   /* the same request again, its deadline (less WH_ANSWER_MARGIN_MS)
                        * came while it waited in the pool: answer at once without the
                        * slow part */
} wh_phase;

/* A request waiting to be answered (a forward, a queued deferred job) is
 * answered without its slow part this long before its deadline, so that the
 * quick answer (the no-fit policy) still reaches the API server in time. */
#define WH_ANSWER_MARGIN_MS 300LL

/* A handler's return in WH_PHASE_NOW: call me again off the request threads. */
#define WH_HANDLE_DEFER 1

/* What a handler call gets as its ctx argument (a const wh_request *). */
typedef struct wh_request {
    void *user;            /* wh_server_opts.handler_ctx */
    long long timeout_ms;  /* the API server's ?timeout= (e.g. 10s), -1 if absent */
    long long start_ns;    /* topo_clock_ns when the request's headers were complete (the
                            * request threads never wait on the network: its arrival) */
    int64_t deadline_ns;   /* topo_clock_ns when its answer stops being read: the timeout
                            * capped by request_timeout_ms, a forward's absolute deadline
                            * (request_deadline.h); 0: none */
    const char *forwarded_by; /* ?forwardedBy= of a request another replica forwarded, or NULL */
    wh_phase phase;
} wh_request;

/* Answers one POST /mutate. ctx is a const wh_request *. On return 0,
 * *out_body (malloc'd, may be NULL when *out_len is 0; the server frees it)
 * is sent with *out_status. In WH_PHASE_NOW it may return WH_HANDLE_DEFER
 * (nothing in *out_body): the connection is suspended and the handler called
 * again with the same request and body in WH_PHASE_DEFERRED on a thread of
 * the defer pool (or WH_PHASE_SHED when that is full, WH_PHASE_EXPIRED when
 * its deadline came while it was queued), whose answer is sent;
 * the request threads meanwhile answer other connections. Another non-zero
 * return is answered with 500. Called on several threads at once. */
typedef int (*wh_handle_fn)(void *ctx, const char *body, size_t len, char **out_body,
                                 size_t *out_len, int *out_status);

typedef struct wh_server_opts {
    int port;                 /* HTTPS, default 9443 */
    int health_port;          /* plain HTTP, default 8081 */
    const char *cert_file;    /* PEM, required */
    const char *key_file;     /* PEM, required */
    unsigned int threads;     /* 0: online cores */
    size_t max_body;          /* default TOPO_WH_MAX_BODY */
    unsigned int cert_check_ms;    /* default 2000 */
    unsigned int idle_timeout_s;   /* keep-alive idle timeout, default 90 */
    unsigned int max_connections;  /* TLS connections at once, default 1024 */
    unsigned int max_connections_per_client; /* from one IP address, default 256: one
                                              * client cannot take every connection */
    size_t max_body_bytes_held;    /* request body buffers held at once, default 256 MiB:
                                    * beyond it a request gets 503 */
    const char *tls_priorities;    /* GnuTLS priority string; NULL: TOPO_WH_TLS_PRIORITIES */
    const char *health_address;    /* numeric IPv4/IPv6 address the health port binds;
                                    * NULL: every interface */
    wh_handle_fn handle;
    void *handler_ctx;
    /* More /metrics text (Prometheus format, malloc'd; NULL on failure),
     * appended to the server's own; NULL: none. Called on the health
     * daemon's thread. */
    char *(*metrics_extra)(void *payload);
    void *metrics_payload;
    /* Absolute bounds on a connection (libmicrohttpd's idle_timeout_s is
     * reset by every byte, so alone it lets a trickling client stay): */
    unsigned int header_timeout_ms; /* accept to complete headers (TLS handshake
                                     * included), default TOPO_WH_HEADER_TIMEOUT_MS */
    unsigned long long min_body_rate; /* bytes/s a body must keep to (after a
                                       * TOPO_WH_BODY_GRACE_S grace), default 65536 */
    /* A separate plain-HTTP port for /metrics only (0: /metrics stays on
     * the health port); metrics_address as health_address. */
    int metrics_port;
    const char *metrics_address;
    /* The defer pool (WH_HANDLE_DEFER): threads (0: 4 x threads, at most
     * 64) and jobs waiting at most (0: 4 x its threads). */
    unsigned int defer_threads;
    size_t defer_queue;
    /* The cap on a request's deadline (--request-timeout), ms; 0: 10000. */
    long long request_timeout_ms;
} wh_server_opts;

#define TOPO_WH_SERVER_OPTS_INIT                                                     \
    {                                                                                \
        9443, 8081, NULL, NULL, 0, TOPO_WH_MAX_BODY, 2000, 90, 1024, 256, 256u << 20, NULL, \
            NULL, NULL, NULL, NULL, NULL, TOPO_WH_HEADER_TIMEOUT_MS, 65536, 0, NULL, 0, 0, 0 \
    }

/* The default header_timeout_ms: half the 2 s the chart gives the API
 * server (timeoutSeconds), so that a connection that never completes its
 * handshake or headers is gone while the API server still waits, and a
 * round trip or two of a TLS handshake fits many times over. */
#define TOPO_WH_HEADER_TIMEOUT_MS 1000

/* Seconds a body gets before min_body_rate applies (the client's first
 * bytes, a slow start). */
#define TOPO_WH_BODY_GRACE_S 5

/* TLS 1.3, and TLS 1.2 with forward-secret key exchange and AEAD ciphers
 * only: no static RSA key exchange, no CBC, no SHA-1 MACs (GnuTLS's NORMAL
 * accepts all three). */
#define TOPO_WH_TLS_PRIORITIES                                                        \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA:-CIPHER-ALL:+AES-256-GCM:"       \
    "+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD"

typedef struct wh_server wh_server;

/* Loads the cert/key, binds both ports and starts serving (not ready yet). */
int wh_server_start(wh_server **out, const wh_server_opts *opts, topo_err *err);
/* The worker threads it serves with (opts.threads, or the online cores when
 * that was 0). */
unsigned int wh_server_threads(const wh_server *srv);
/* Readiness as /readyz reports it (ignored once shutdown began). */
void wh_server_set_ready(wh_server *srv, int ready);
/* Periodic work: certificate change checks, stopping retired daemons. */
void wh_server_tick(wh_server *srv);
/* Graceful stop: unready at once, stop accepting, answer every request
 * already received (responses carry Connection: close), then close the
 * remaining idle keep-alive connections; waits at most timeout_ms for
 * in-flight requests. Returns the number of requests still in flight when it
 * gave up (0: clean). */
long wh_server_shutdown(wh_server *srv, unsigned int timeout_ms);
/* Stops whatever still runs and frees; NULL is a no-op. */
void wh_server_free(wh_server *srv);

/* The /metrics text, for tests and debugging (malloc'd, NUL-terminated). */
char *wh_server_metrics(wh_server *srv);

#endif
