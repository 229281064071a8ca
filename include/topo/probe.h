/* The plain-HTTP health and metrics port of topo's daemons (topo-webhook,
 * topo-sync): one implementation of Kubernetes' API health endpoints
 * ("API health endpoints", /livez and /readyz; /healthz deprecated since
 * 1.16) and of /metrics.
 *
 * Paths (GET or HEAD; any other method 405 with "Allow: GET, HEAD"):
 *   /livez            200 "ok" while the process runs and every liveness
 *                     check passes, else 503. Liveness never depends on a
 *                     downstream: it has the built-in "ping" and only the
 *                     checks the daemon sets (e.g. cert-manager's
 *                     leaderElection: a function, topo_probe_set_live_check).
 *   /healthz          the deprecated alias of /livez (what topo-webhook has
 *                     always served).
 *   /readyz           200 "ok" once every readiness check passes, 503 while
 *                     one fails and from topo_probe_stopping on (the
 *                     built-in "shutdown" check).
 *   /livez/<check>, /healthz/<check>, /readyz/<check>
 *                     one check: 200 "ok", 503, or 404 for no such check.
 *   ?verbose          every check, one line each ("[+]name ok",
 *                     "[-]name failed"), then "<path> check passed" (or
 *                     failed); a failing answer lists them even without it.
 *   /metrics          the registry's text (Prometheus format 0.0.4, Content-
 *                     Type TOPO_PROBE_METRICS_CONTENT_TYPE) and whatever
 *                     metrics_append adds; 404 when neither is given.
 *   anything else     404.
 * Machines read only the status; the texts are for humans.
 *
 * Bounds: anyone who can reach the pod's IP can reach the port, so
 * connections that send nothing must not lock the kubelet's probes out: at
 * most max_connections_per_client at once from one address (the kubelet
 * probes from the node's), each closed after idle_timeout_s without a byte.
 *
 *   topo_probe_opts o = {.address = "10.0.0.5", .port = 8081, .metrics = reg};
 *   static const char *const needed[] = {"nodes-synced"};
 *   o.ready_checks = needed;   // failing from the start: no window of 200
 *   o.nready_checks = 1;
 *   if (topo_probe_start(&probe, &o, &err) < 0) ...
 *   topo_probe_set_check(probe, "nodes-synced", 1);   // any thread, any time
 *   ...
 *   topo_probe_stopping(probe);   // SIGTERM: /readyz 503 at once
 *   topo_probe_free(probe);
 *
 * Requests are answered on one thread of the probe's own; the functions
 * below may be called from any thread. No global state. */
#ifndef TOPO_PROBE_H
#define TOPO_PROBE_H

#include <stddef.h>

#include "topo/buf.h"
#include "topo/error.h"
#include "topo/metrics.h"

/* What /metrics is sent as (client_golang's expfmt FmtText): label values
 * and help texts are UTF-8. */
#define TOPO_PROBE_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Defaults of the connection bounds. */
#define TOPO_PROBE_IDLE_TIMEOUT_S 5u
#define TOPO_PROBE_PER_CLIENT 16u

/* More /metrics text appended after the registry's (e.g. another
 * registry's topo_metrics_render_buf). 0, or a negative code: the whole
 * text is then dropped (answered 500), never sent half. Called on the
 * probe's thread. */
typedef int (*topo_probe_metrics_fn)(void *payload, topo_buf *out);

/* A liveness check: 1 while it passes, 0 when it fails. Called on the
 * probe's thread at each request that reports it: it must be quick, must
 * not block on a downstream, and must not call topo_probe functions. */
typedef int (*topo_probe_check_fn)(void *payload);

/* Zero means the default throughout. */
typedef struct topo_probe_opts {
    const char *address; /* numeric IPv4 or IPv6 address to bind; NULL: every
                          * interface (IPv6 and IPv4 when the host has both) */
    int port;            /* 0..65535; 0: an ephemeral port (topo_probe_port) */
    int metrics_only;    /* 1: /metrics alone (a metrics port of its own): the
                          * probe paths are 404 */
    /* metrics and metrics_payload must stay valid until topo_probe_free. */
    topo_metrics *metrics; /* rendered at each /metrics; NULL: none */
    topo_probe_metrics_fn metrics_append; /* after metrics; NULL: none */
    void *metrics_payload;
    /* Readiness checks that exist, failing, from the start (a check set
     * with topo_probe_set_check for the first time is added then): /readyz
     * is never 200 before the daemon has said so. Names as
     * topo_probe_set_check; copied. */
    const char *const *ready_checks;
    size_t nready_checks;
    unsigned int idle_timeout_s;             /* TOPO_PROBE_IDLE_TIMEOUT_S */
    unsigned int max_connections_per_client; /* TOPO_PROBE_PER_CLIENT */
} topo_probe_opts;

typedef struct topo_probe topo_probe;

/* Binds the port and starts answering. 0, TOPO_EINVALID (a bad address,
 * port or check name), TOPO_ENOMEM, or TOPO_EGENERIC when the port cannot
 * be bound (in use, no permission); err says which. */
int topo_probe_start(topo_probe **out, const topo_probe_opts *opts, topo_err *err);

/* The port bound (the ephemeral one when opts.port was 0). */
int topo_probe_port(const topo_probe *p);

/* Sets readiness check name (1..TOPO_MAX_PROBE_CHECK_NAME characters of
 * [A-Za-z0-9._-], not "shutdown") to pass (ok non-zero) or fail, adding it
 * on first use. 0, TOPO_EINVALID (a bad name), TOPO_ELIMIT (already
 * TOPO_MAX_PROBE_CHECKS checks). */
int topo_probe_set_check(topo_probe *p, const char *name, int ok);

/* Sets liveness check name (named as above, not "ping") to fn(payload),
 * replacing one of the same name; fn NULL removes it. payload must stay
 * valid until topo_probe_free (a request may still be asking a check just
 * replaced or removed). 0, TOPO_EINVALID, TOPO_ELIMIT. */
int topo_probe_set_live_check(topo_probe *p, const char *name, topo_probe_check_fn fn,
                              void *payload);

/* Shutdown began: /readyz answers 503 from now on ("shutdown" fails), the
 * rest as before. */
void topo_probe_stopping(topo_probe *p);

/* 1 when /readyz would answer 200 now, else 0 (also for NULL). */
int topo_probe_ready(topo_probe *p);

/* The /metrics text (malloc'd, NUL-terminated; the caller frees); NULL
 * when the probe serves no metrics, the text could not be rendered, or p
 * is NULL. */
char *topo_probe_metrics(topo_probe *p);

/* Stops answering (the thread is joined, open connections closed) and
 * frees. NULL-safe. */
void topo_probe_free(topo_probe *p);

/* --- responses over libmicrohttpd (the probe port's and topo-webhook's) ------ */

struct MHD_Connection;

/* A response header; skipped when value is NULL (a header sent only in
 * some cases). */
typedef struct topo_probe_header {
    const char *name;
    const char *value;
} topo_probe_header;

/* A response: its body (len bytes; NULL: empty) and headers. owned: body is
 * malloc'd and freed by topo_probe_respond whatever happens; else it
 * outlives the response (a constant text). */
typedef struct topo_probe_reply {
    char *body;
    size_t len;
    int owned;
    const topo_probe_header *headers;
    size_t nheaders;
} topo_probe_reply;

/* Queues reply with status on conn. Returns what an access handler
 * returns: 1 (MHD_YES) when queued, 0 (MHD_NO: the connection is closed)
 * when the response could not be made or queued. */
int topo_probe_respond(struct MHD_Connection *conn, unsigned int status,
                       const topo_probe_reply *reply);

#endif
