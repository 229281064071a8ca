/* The HTTP side of topo-webhook (see server.h): requests on the HTTPS port,
 * the health and metrics ports (lib/probe), shutdown. With tls_reload.c (the
 * HTTPS port's socket and certificate generations) and lib/probe the only
 * files of topo that include <microhttpd.h>. */
#define _POSIX_C_SOURCE 200809L

#include "server.h"

#include "conn_deadline.h"
#include "defer_pool.h"
#include "request_deadline.h"
#include "server_metrics.h"
#include "topo/clock.h"
#include "tls_reload.h"

#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#include "topo/buf.h"
#include "topo/log.h"
#include "topo/metrics.h"
#include "topo/probe.h"

/* Shutdown: once nothing was in flight and nothing new arrived for this
 * long, the remaining (idle) keep-alive connections are closed. */
#define WH_SETTLE_NS (300LL * 1000000LL)
/* The readiness check of the health port: the admission handler can
 * answer (wh_server_set_ready). */
#define WH_READY_CHECK "admission"
/* libmicrohttpd's own connection limit is max_connections plus this share
 * of it (at least WH_MHD_HEADROOM_MIN): room for connections evicted
 * (shut down) that the library has not closed yet. At its limit the library
 * stops accepting, and a connection waiting in the backlog cannot evict
 * anything; below it, the cap is ours (wh_conns_make_room). */
#define WH_MHD_HEADROOM_DIV 4
#define WH_MHD_HEADROOM_MIN 16
/* The defer pool by default: forwards wait on the network, not on a core,
 * so a few per request thread; the queue a few per worker. */
#define WH_DEFER_PER_THREAD 4
#define WH_DEFER_THREADS_MAX 64
#define WH_DEFER_QUEUE_PER_WORKER 4

struct wh_server {
    wh_server_opts opts;
    wh_tls *tls; /* the HTTPS port */
    topo_probe *health;
    atomic_int stopping;
    atomic_ullong last_activity_ns;
    atomic_ullong body_bytes; /* buffer bytes all requests hold now */
    wh_conns *conns;          /* every TLS connection's deadline */
    topo_probe *metrics_d; /* --metrics-port, or NULL */
    wh_defer_pool *pool;   /* WH_HANDLE_DEFER's work */
    wh_metrics m;
};

/* Per-request state, in MHD's *con_cls. */
typedef struct wh_req {
    char *body;
    size_t len;
    size_t cap;
    size_t charged;  /* bytes counted in srv->body_bytes for this request */
    size_t declared; /* Content-Length, or 0 when absent (chunked) */
    int has_length;
    int refuse;       /* 413 or 503 to answer once the body ended, 0: none */
    size_t discarded; /* body bytes dropped since the refusal */
    wh_conn *conn;    /* the connection's deadline, NULL if untracked */
    long long start_ns;
    int responded;
    /* deferred (WH_HANDLE_DEFER): the connection is suspended until a pool
     * thread stored the handler's answer below and resumed it */
    int deferred;
    struct MHD_Connection *mconn;
    wh_tls_gen *gen;
    wh_request req;
    char *out;
    size_t out_len;
    int status, rc;
} wh_req;

static void record(wh_server *srv, int status, wh_outcome outcome, long long start_ns)
{
    wh_metrics_request(&srv->m, status, outcome, start_ns, topo_clock_ns());
}

/* Queues body (malloc'd: freed whatever happens; NULL: an empty body)
 * with status. */
static enum MHD_Result queue(struct MHD_Connection *conn, const wh_tls_gen *g, int status,
                             char *body, size_t len, const char *content_type)
{
    /* A retired generation or a stopping server sends clients elsewhere;
     * after a 413 the unread body makes the connection unusable. */
    int closing = (g && wh_tls_gen_retiring(g)) || status == MHD_HTTP_CONTENT_TOO_LARGE;
    const topo_probe_header h[] = {
        {MHD_HTTP_HEADER_CONTENT_TYPE, content_type},
        {MHD_HTTP_HEADER_ALLOW, status == MHD_HTTP_METHOD_NOT_ALLOWED ? "POST" : NULL},
        {MHD_HTTP_HEADER_CONNECTION, closing ? "close" : NULL},
    };
    topo_probe_reply reply = {.body = body, .len = len, .owned = 1, .headers = h, .nheaders = 3};
    return topo_probe_respond(conn, (unsigned int)status, &reply) ? MHD_YES : MHD_NO;
}

/* An error the server answers itself, counted with its outcome: msg is one
 * of this file's own phrases (nothing in it needs escaping). */
static enum MHD_Result answer_error(struct MHD_Connection *conn, const wh_tls_gen *g, int status,
                                    wh_outcome outcome, const char *msg, long long start_ns)
{
    record(wh_tls_gen_payload(g), status, outcome, start_ns);
    topo_buf b = TOPO_BUF_INIT(0);
    size_t len = 0;
    topo_buf_printf(&b, "{\"error\":\"%s\"}\n", msg);
    char *body = topo_buf_take(&b, &len);
    return queue(conn, g, status, body, body ? len : 0, "application/json");
}

/* Counts n more bytes of request bodies held; 0 when within the budget,
 * -1 (nothing counted) past it. Many slow large bodies at once must not
 * exhaust memory: past the budget a request is refused (the API server
 * retries or applies the failure policy) rather than the process killed. */
static int charge_body(wh_server *srv, wh_req *rq, size_t want)
{
    if (want <= rq->charged)
        return 0;
    size_t more = want - rq->charged;
    unsigned long long held = atomic_fetch_add(&srv->body_bytes, more);
    if (held + more > srv->opts.max_body_bytes_held) {
        atomic_fetch_sub(&srv->body_bytes, more);
        topo_metrics_add(srv->m.body_over_budget, 1);
        topo_log(TOPO_LOG_WARN, "request bodies held over the budget (%zu bytes)",
                 srv->opts.max_body_bytes_held);
        return -1;
    }
    rq->charged = want;
    return 0;
}

static wh_conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Answers now, before any body: the next request's headers are then due
 * within the idle timeout. */
static enum MHD_Result reject_early(struct MHD_Connection *conn, const wh_tls_gen *g,
                                    int status, const char *msg, long long start_ns)
{
    wh_server *srv = wh_tls_gen_payload(g);
    wh_conn_responding(srv->conns, conn_of(conn), topo_clock_ns());
    return answer_error(conn, g, status, WH_OUT_REJECTED, msg, start_ns);
}

/* A body refused half-way (over max_body when chunked, over the memory
 * budget): its memory goes back at once, the rest of it is read and dropped,
 * and the status is answered when it ends. libmicrohttpd 0.9.75 queues a
 * response only before a request's body or after all of it
 * (MHD_queue_response refuses it while the body arrives, and the connection
 * was then closed without an answer). No more than max_body bytes are
 * dropped: past that the connection is closed. */
static void refuse_body(wh_server *srv, wh_req *rq, int status)
{
    rq->refuse = status;
    atomic_fetch_sub(&srv->body_bytes, rq->charged);
    rq->charged = 0;
    free(rq->body);
    rq->body = NULL;
    rq->len = rq->cap = 0;
}

/* Buffer capacity for need bytes: doubling from 16 KiB, never over the
 * declared length (+1 for the NUL) or max_body + 1. What is allocated is what
 * is charged to the budget. */
static size_t body_cap(const wh_server *srv, const wh_req *rq, size_t need)
{
    size_t limit = srv->opts.max_body + 1;
    if (rq->has_length && rq->declared + 1 < limit)
        limit = rq->declared + 1;
    size_t cap = rq->cap ? rq->cap : 16384;
    while (cap < need)
        cap *= 2;
    return cap < limit ? cap : (need > limit ? need : limit);
}

/* A request's headers are complete: refused now (path, method, declared
 * length), or its state in *con_cls. */
static enum MHD_Result begin_request(const wh_tls_gen *g, struct MHD_Connection *conn,
                                     const char *url, const char *method, void **con_cls)
{
    wh_server *srv = wh_tls_gen_payload(g);
    long long start = topo_clock_ns();
    atomic_store(&srv->last_activity_ns, (unsigned long long)start);
    if (strcmp(url, WH_MUTATE_PATH) != 0)
        return reject_early(conn, g, MHD_HTTP_NOT_FOUND, "not found", start);
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return reject_early(conn, g, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", start);
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long declared = 0;
    if (cl) {
        char *end = NULL;
        errno = 0;
        declared = strtoull(cl, &end, 10);
        if (errno != 0 || end == cl || declared > srv->opts.max_body) {
            topo_metrics_add(srv->m.body_too_large, 1);
            topo_log(TOPO_LOG_WARN, "request body over the limit (Content-Length %s)", cl);
            return reject_early(conn, g, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large",
                                start);
        }
    }
    wh_req *rq = calloc(1, sizeof *rq);
    if (!rq)
        return MHD_NO;
    /* Nothing is charged to the body budget yet: what a request holds is
     * counted as its bytes arrive, so connections that declare large bodies
     * and send none hold (almost) nothing. */
    rq->has_length = cl != NULL;
    rq->declared = (size_t)declared;
    rq->start_ns = start;
    rq->conn = conn_of(conn);
    wh_conn_body_start(srv->conns, rq->conn, start);
    *con_cls = rq;
    topo_metrics_add(srv->m.in_flight, 1);
    return MHD_YES;
}

/* n more bytes of the body: kept, or dropped once the body is refused. */
static enum MHD_Result take_body(wh_server *srv, wh_req *rq, const char *data, size_t n)
{
    wh_conn_body_bytes(srv->conns, rq->conn, n);
    if (rq->refuse) {
        if (n > srv->opts.max_body - rq->discarded)
            return MHD_NO; /* an endless body: no answer is worth reading it */
        rq->discarded += n;
        return MHD_YES;
    }
    if (n > srv->opts.max_body - rq->len) {
        topo_metrics_add(srv->m.body_too_large, 1);
        topo_log(TOPO_LOG_WARN, "request body over the limit (%zu bytes)", srv->opts.max_body);
        refuse_body(srv, rq, MHD_HTTP_CONTENT_TOO_LARGE);
        rq->discarded = n;
        return MHD_YES;
    }
    if (rq->len + n + 1 > rq->cap) {
        size_t cap = body_cap(srv, rq, rq->len + n + 1);
        if (charge_body(srv, rq, cap) < 0) {
            refuse_body(srv, rq, MHD_HTTP_SERVICE_UNAVAILABLE);
            rq->discarded = n;
            return MHD_YES;
        }
        char *nb = realloc(rq->body, cap);
        if (!nb)
            return MHD_NO;
        rq->body = nb;
        rq->cap = cap;
    }
    memcpy(rq->body + rq->len, data, n);
    rq->len += n;
    rq->body[rq->len] = '\0';
    return MHD_YES;
}

/* The handler's answer (rc, status and out as wh_handle_fn's), sent. */
static enum MHD_Result answer_handled(const wh_tls_gen *g, struct MHD_Connection *conn,
                                      wh_req *rq, int rc, char *out, size_t out_len, int status)
{
    wh_server *srv = wh_tls_gen_payload(g);
    wh_conn_responding(srv->conns, rq->conn, topo_clock_ns());
    if (rc != 0 || status < 100 || status > 599) {
        free(out);
        topo_log(TOPO_LOG_ERROR, "admission handler failed (rc %d, status %d)", rc, status);
        return answer_error(conn, g, 500, WH_OUT_HANDLER_ERROR, "internal error", rq->start_ns);
    }
    record(srv, status, WH_OUT_HANDLED, rq->start_ns);
    return queue(conn, g, status, out, out_len, "application/json");
}

/* A deferred request's second handler call (a pool thread, or the request
 * thread when the pool refused it): the answer is stored and the connection
 * resumed; rq belongs to libmicrohttpd again from the resume on. */
static void run_deferred(void *arg, wh_defer_how how)
{
    wh_req *rq = arg;
    wh_server *srv = wh_tls_gen_payload(rq->gen);
    struct MHD_Connection *conn = rq->mconn;
    wh_tls_gen *g = rq->gen;
    rq->req.phase = how == WH_DEFER_SHED      ? WH_PHASE_SHED
                    : how == WH_DEFER_EXPIRED ? WH_PHASE_EXPIRED
                                              : WH_PHASE_DEFERRED;
    if (how == WH_DEFER_EXPIRED)
        topo_metrics_add(srv->m.deferred_expired, 1);
    rq->rc = srv->opts.handle(&rq->req, rq->body ? rq->body : "", rq->len, &rq->out,
                              &rq->out_len, &rq->status);
    if (rq->rc == WH_HANDLE_DEFER)
        rq->rc = -1; /* deferred once only */
    wh_tls_gen_suspended(g, -1);
    MHD_resume_connection(conn); /* a mutex in it orders the stores above before the
                                  * request thread's reads */
}

/* WH_HANDLE_DEFER: the connection waits suspended (its request thread
 * answers others) while the pool runs the handler again; a full pool has
 * it run at once for the quick answer (WH_PHASE_SHED). */
static enum MHD_Result defer_request(const wh_tls_gen *g, struct MHD_Connection *conn,
                                     wh_req *rq, const wh_request *req)
{
    wh_server *srv = wh_tls_gen_payload(g);
    rq->deferred = 1;
    rq->mconn = conn;
    rq->gen = (wh_tls_gen *)(uintptr_t)g; /* the generation's own counter */
    rq->req = *req;
    topo_metrics_add(srv->m.deferred, 1);
    wh_tls_gen_suspended(rq->gen, 1);
    MHD_suspend_connection(conn);
    /* answered from the queue while its quick answer still has time */
    int64_t expire = 0;
    if (req->deadline_ns > 0) {
        expire = req->deadline_ns - WH_ANSWER_MARGIN_MS * 1000000LL;
        expire = expire > 0 ? expire : 1;
    }
    if (srv->pool == NULL || wh_defer_pool_submit(srv->pool, run_deferred, rq, expire) < 0) {
        topo_metrics_add(srv->m.deferred_shed, 1);
        run_deferred(rq, WH_DEFER_SHED);
    }
    return MHD_YES;
}

/* The whole body is here (or was dropped): the refusal, or the handler's
 * answer. */
static enum MHD_Result answer_request(const wh_tls_gen *g, struct MHD_Connection *conn,
                                      wh_req *rq)
{
    wh_server *srv = wh_tls_gen_payload(g);
    rq->responded = 1;
    if (rq->refuse) {
        wh_conn_responding(srv->conns, rq->conn, topo_clock_ns());
        return answer_error(conn, g, rq->refuse, WH_OUT_REJECTED,
                            rq->refuse == MHD_HTTP_CONTENT_TOO_LARGE
                                ? "request body too large"
                                : "too many request bodies in flight",
                            rq->start_ns);
    }
    wh_request req = {srv->opts.handler_ctx, -1, rq->start_ns, 0,
                      MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "forwardedBy"),
                      WH_PHASE_NOW};
    req.timeout_ms =
        wh_request_timeout_ms(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "timeout"));
    /* only a forward's absolute deadline is read: the API server sends none */
    const char *abs = req.forwarded_by != NULL ? MHD_lookup_connection_value(
                                                     conn, MHD_GET_ARGUMENT_KIND, WH_DEADLINE_PARAM)
                                               : NULL;
    req.deadline_ns = wh_request_deadline(rq->start_ns, req.timeout_ms,
                                          srv->opts.request_timeout_ms, abs, topo_clock_ns(),
                                          wh_unix_ms());
    char *out = NULL;
    size_t out_len = 0;
    int status = 0;
    wh_conn_handling(srv->conns, rq->conn);
    int rc = srv->opts.handle(&req, rq->body ? rq->body : "", rq->len, &out, &out_len, &status);
    if (rc == WH_HANDLE_DEFER) {
        free(out);
        rq->responded = 0;
        return defer_request(g, conn, rq, &req);
    }
    return answer_handled(g, conn, rq, rc, out, out_len, status);
}

/* The HTTPS port's requests; cls is the TLS generation (tls_reload.h). */
static enum MHD_Result access_tls(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    const wh_tls_gen *g = cls;
    wh_req *rq = *con_cls;
    (void)version;

    if (!rq)
        return begin_request(g, conn, url, method, con_cls);
    if (rq->deferred) {
        /* resumed: the pool's answer (called only once it was stored) */
        rq->deferred = 0;
        rq->responded = 1;
        char *out = rq->out;
        rq->out = NULL;
        return answer_handled(g, conn, rq, rq->rc, out, rq->out_len, rq->status);
    }
    if (rq->responded) {
        *upload_data_size = 0; /* answered: nothing more to keep */
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return take_body(wh_tls_gen_payload(g), rq, upload_data, n);
    }
    return answer_request(g, conn, rq);
}

static void completed_tls(void *cls, struct MHD_Connection *conn, void **con_cls,
                          enum MHD_RequestTerminationCode toe)
{
    wh_server *srv = wh_tls_gen_payload(cls);
    wh_req *rq = *con_cls;
    (void)toe;
    /* the response is out: the keep-alive idle time starts (and the
     * connection may be evicted at the cap from now on) */
    wh_conn_idle(srv->conns, conn_of(conn), topo_clock_ns());
    if (!rq)
        return;
    atomic_fetch_sub(&srv->body_bytes, rq->charged);
    free(rq->body);
    free(rq->out);
    free(rq);
    *con_cls = NULL;
    topo_metrics_add(srv->m.in_flight, -1);
    atomic_store(&srv->last_activity_ns, (unsigned long long)topo_clock_ns());
}

/* A TLS connection starts or ends (the generation counts it): its
 * deadline. */
static void notify_conn(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    wh_server *srv = wh_tls_gen_payload(cls);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        topo_metrics_add(srv->m.connections_total, 1);
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        char peer[INET6_ADDRSTRLEN] = "";
        if (ai && ai->client_addr) {
            const struct sockaddr *sa = ai->client_addr;
            if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
                          peer, sizeof peer);
            else if (sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
                          peer, sizeof peer);
        }
        wh_conn *c = fi ? wh_conns_add(srv->conns, (int)fi->connect_fd, peer, topo_clock_ns()) : NULL;
        *socket_context = c;
        /* past the cap, this connection takes the place of one that waits
         * (or is refused): connections that send nothing must not keep the
         * API server's own out until their deadlines */
        (void)wh_conns_make_room(srv->conns, c);
    } else {
        /* libmicrohttpd notifies this before it closes the socket: from
         * here on the sweep no longer touches the descriptor */
        wh_conns_remove(srv->conns, *socket_context);
        *socket_context = NULL;
    }
}

/* ---- /metrics ---- */

/* Values the server keeps for its own decisions, copied at each render. */
static void metrics_refresh(void *payload)
{
    wh_server *srv = payload;
    topo_metrics_set(srv->m.body_bytes_held, (int64_t)atomic_load(&srv->body_bytes));
    for (size_t r = 0; r < WH_NCUTS; r++)
        topo_metrics_set(srv->m.cut[r],
                         (int64_t)wh_conns_cut_total(srv->conns, (wh_cut_reason)r));
    for (size_t e = 0; e < WH_NEVICTS; e++)
        topo_metrics_set(srv->m.evicted[e],
                         (int64_t)wh_conns_evicted_total(srv->conns, (wh_evict_state)e));
    topo_metrics_set(srv->m.refused, (int64_t)wh_conns_refused_total(srv->conns));
    topo_metrics_set(srv->m.ready, topo_probe_ready(srv->health));
}

/* The owner's metrics (opts.metrics_extra) after the server's own. */
static int metrics_append(void *payload, topo_buf *out)
{
    wh_server *srv = payload;
    char *extra = srv->opts.metrics_extra(srv->opts.metrics_payload);
    if (extra == NULL)
        return TOPO_ENOMEM; /* the text is dropped whole, never half */
    int rc = topo_buf_puts(out, extra);
    free(extra);
    return rc;
}

char *wh_server_metrics(wh_server *srv)
{
    return topo_probe_metrics(srv->metrics_d ? srv->metrics_d : srv->health);
}

/* ---- the server ---- */

/* The health port (opts.health_port: the probes, and /metrics unless
 * metrics_port gives it a port of its own) and the metrics port, both
 * lib/probe's: not ready until wh_server_set_ready(1). */
static int start_plain(wh_server *srv, topo_err *err)
{
    static const char *const checks[] = {WH_READY_CHECK};
    const wh_server_opts *o = &srv->opts;
    topo_probe_opts po = {.address = o->health_address,
                          .port = o->health_port,
                          .ready_checks = checks,
                          .nready_checks = 1};
    topo_probe_opts mo = {.address = o->metrics_address,
                          .port = o->metrics_port,
                          .metrics_only = 1,
                          .metrics = srv->m.reg,
                          .metrics_append = o->metrics_extra ? metrics_append : NULL,
                          .metrics_payload = srv};
    if (o->metrics_port == 0) {
        po.metrics = mo.metrics;
        po.metrics_append = mo.metrics_append;
        po.metrics_payload = srv;
    }
    if (topo_probe_start(&srv->health, &po, err) < 0) {
        if (err && err->code == TOPO_EINVALID)
            topo_err_wrap(err, "--health-address");
        return -1;
    }
    if (o->metrics_port > 0 && topo_probe_start(&srv->metrics_d, &mo, err) < 0) {
        if (err && err->code == TOPO_EINVALID)
            topo_err_wrap(err, "--metrics-address");
        return -1;
    }
    return 0;
}

unsigned int wh_server_threads(const wh_server *srv)
{
    return srv->opts.threads;
}

int wh_server_start(wh_server **out, const wh_server_opts *opts, topo_err *err)
{
    wh_server *srv = NULL;
    int rc = -1;

    *out = NULL;
    if (!opts || !opts->handle || !opts->cert_file || !opts->key_file) {
        topo_err_set(err, TOPO_EINVALID, "a handler, a certificate file and a key file are needed");
        return -1;
    }
    if (opts->port <= 0 || opts->port > 65535 || opts->health_port <= 0 ||
        opts->health_port > 65535 || opts->port == opts->health_port ||
        opts->metrics_port < 0 || opts->metrics_port > 65535 ||
        (opts->metrics_port > 0 &&
         (opts->metrics_port == opts->port || opts->metrics_port == opts->health_port))) {
        topo_err_set(err, TOPO_EINVALID, "bad ports %d, %d and %d", opts->port,
                     opts->health_port, opts->metrics_port);
        return -1;
    }
    if (!(srv = calloc(1, sizeof *srv)))
        return topo_err_nomem(err, "webhook server");
    srv->opts = *opts;
    if (!srv->opts.threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        srv->opts.threads = n > 0 ? (unsigned int)n : 1;
    }
    if (!srv->opts.max_body)
        srv->opts.max_body = TOPO_WH_MAX_BODY;
    if (!srv->opts.cert_check_ms)
        srv->opts.cert_check_ms = 2000;
    if (!srv->opts.max_connections)
        srv->opts.max_connections = 1024;
    if (!srv->opts.max_connections_per_client)
        srv->opts.max_connections_per_client = 256;
    if (srv->opts.max_body_bytes_held < srv->opts.max_body + 1)
        srv->opts.max_body_bytes_held = srv->opts.max_body + 1;
    if (!srv->opts.idle_timeout_s)
        srv->opts.idle_timeout_s = 90;
    if (!srv->opts.header_timeout_ms)
        srv->opts.header_timeout_ms = TOPO_WH_HEADER_TIMEOUT_MS;
    if (!srv->opts.request_timeout_ms)
        srv->opts.request_timeout_ms = 10000;
    if (!srv->opts.defer_threads) {
        unsigned int n = srv->opts.threads * WH_DEFER_PER_THREAD;
        srv->opts.defer_threads = n < WH_DEFER_THREADS_MAX ? n : WH_DEFER_THREADS_MAX;
    }
    if (!srv->opts.defer_queue)
        srv->opts.defer_queue = (size_t)srv->opts.defer_threads * WH_DEFER_QUEUE_PER_WORKER;
    if (wh_metrics_init(&srv->m, metrics_refresh, srv, err) < 0)
        goto cleanup;
    if (wh_defer_pool_create(&srv->pool, srv->opts.defer_threads, srv->opts.defer_queue) < 0) {
        topo_err_set(err, TOPO_ENOMEM, "webhook server: the defer pool's %u threads",
                     srv->opts.defer_threads);
        goto cleanup;
    }
    {
        wh_deadline_limits lim = {(long long)srv->opts.header_timeout_ms * 1000000LL,
                                  (long long)srv->opts.idle_timeout_s * 1000000000LL,
                                  (long long)TOPO_WH_BODY_GRACE_S * 1000000000LL,
                                  srv->opts.min_body_rate, srv->opts.max_connections};
        if (!(srv->conns = wh_conns_new(&lim)))
            goto cleanup;
    }
    unsigned int headroom = srv->opts.max_connections / WH_MHD_HEADROOM_DIV;
    if (headroom < WH_MHD_HEADROOM_MIN)
        headroom = WH_MHD_HEADROOM_MIN;
    wh_tls_opts tls = {opts->port,
                       opts->cert_file,
                       opts->key_file,
                       opts->tls_priorities ? opts->tls_priorities : TOPO_WH_TLS_PRIORITIES,
                       srv->opts.threads,
                       srv->opts.idle_timeout_s,
                       srv->opts.max_connections + headroom,
                       srv->opts.max_connections_per_client,
                       srv->opts.cert_check_ms,
                       access_tls,
                       completed_tls,
                       notify_conn,
                       srv};
    if (wh_tls_start(&srv->tls, &tls, topo_clock_ns(), err) < 0)
        goto cleanup;
    if (start_plain(srv, err) < 0)
        goto cleanup;
    *out = srv;
    srv = NULL;
    rc = 0;
cleanup:
    wh_server_free(srv);
    return rc;
}

void wh_server_set_ready(wh_server *srv, int ready)
{
    if (srv)
        (void)topo_probe_set_check(srv->health, WH_READY_CHECK, ready);
}

void wh_server_tick(wh_server *srv)
{
    if (!srv)
        return;
    long long now = topo_clock_ns();
    wh_conns_sweep(srv->conns, now);
    if (atomic_load(&srv->stopping))
        return;
    int reload = wh_tls_tick(srv->tls, now);
    if (reload != 0)
        topo_metrics_add(reload > 0 ? srv->m.tls_reloads_ok : srv->m.tls_reloads_failed, 1);
}

long wh_server_shutdown(wh_server *srv, unsigned int timeout_ms)
{
    if (!srv)
        return 0;
    atomic_store(&srv->stopping, 1);
    topo_probe_stopping(srv->health);
    wh_tls_close(srv->tls, topo_clock_ns());
    long long start = topo_clock_ns();
    long long deadline = start + (long long)timeout_ms * 1000000LL;
    atomic_store(&srv->last_activity_ns, (unsigned long long)start);
    for (;;) {
        long long now = topo_clock_ns();
        long long inflight = (long long)topo_metrics_value(srv->m.in_flight);
        if (wh_tls_connections(srv->tls) == 0)
            break;
        /* Idle keep-alives: nothing in flight and nothing new for a while. */
        if (inflight == 0 &&
            now - (long long)atomic_load(&srv->last_activity_ns) > WH_SETTLE_NS)
            break;
        if (now >= deadline)
            break;
        wh_conns_sweep(srv->conns, now);
        topo_clock_sleep_ns(10 * 1000000);
    }
    long left = (long)topo_metrics_value(srv->m.in_flight);
    /* Deferred requests end within their deadlines (those still queued are
     * answered at once): none may stay suspended when the daemons stop. */
    wh_defer_pool_stop(srv->pool);
    wh_tls_stop(srv->tls);
    return left;
}

void wh_server_free(wh_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->stopping, 1);
    wh_defer_pool_stop(srv->pool); /* before the daemons: it resumes their connections */
    wh_tls_free(srv->tls);
    wh_defer_pool_free(srv->pool);
    topo_probe_free(srv->health);
    topo_probe_free(srv->metrics_d);
    wh_conns_free(srv->conns);
    wh_metrics_dispose(&srv->m);
    free(srv);
}
