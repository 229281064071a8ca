/* The health and metrics port over libmicrohttpd (topo/probe.h): the port,
 * the paths, the answers. What a probe path answers is checks.c's. With
 * webhook/ the only user of <microhttpd.h>. */
#define _POSIX_C_SOURCE 200809L

#include "topo/probe.h"

#include "probe_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

struct topo_probe {
    topo_probe_opts opts; /* ready_checks not kept (copied into checks) */
    struct MHD_Daemon *mhd;
    probe_checks checks;
    int checks_made;
    int port;
};

/* Queues body (malloc'd: freed whatever happens; NULL with len 0: an empty
 * body) with status. */
static enum MHD_Result queue(struct MHD_Connection *conn, int status, char *body, size_t len,
                             const char *content_type)
{
    const topo_probe_header h[] = {{MHD_HTTP_HEADER_CONTENT_TYPE, content_type}};
    topo_probe_reply reply = {.body = body, .len = len, .owned = 1, .headers = h, .nheaders = 1};
    return topo_probe_respond(conn, (unsigned int)status, &reply) ? MHD_YES : MHD_NO;
}

/* One of this file's own constant texts. */
static enum MHD_Result queue_text(struct MHD_Connection *conn, int status, const char *text)
{
    const topo_probe_header h[] = {
        {MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain"},
        {MHD_HTTP_HEADER_ALLOW, status == MHD_HTTP_METHOD_NOT_ALLOWED ? "GET, HEAD" : NULL},
    };
    topo_probe_reply reply = {
        .body = (char *)text, .len = strlen(text), .headers = h, .nheaders = 2};
    return topo_probe_respond(conn, (unsigned int)status, &reply) ? MHD_YES : MHD_NO;
}

/* "/livez" and the like: the kind, and the check after a slash (NULL:
 * every check); -1 when url is no probe path. */
static int probe_path(const char *url, const char **name, const char **check)
{
    static const struct {
        const char *path;
        probe_kind kind;
    } paths[] = {{"/livez", PROBE_LIVE}, {"/healthz", PROBE_LIVE}, {"/readyz", PROBE_READY}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        size_t n = strlen(paths[i].path);
        if (strncmp(url, paths[i].path, n) != 0)
            continue;
        if (url[n] == '\0')
            *check = NULL;
        else if (url[n] == '/' && url[n + 1] != '\0')
            *check = url + n + 1;
        else
            return -1;
        *name = paths[i].path + 1;
        return (int)paths[i].kind;
    }
    return -1;
}

static enum MHD_Result answer_probe(topo_probe *p, struct MHD_Connection *conn, probe_kind kind,
                                    const char *name, const char *check)
{
    /* "?verbose" has no value: present is enough ("?verbose=1" too). */
    const char *value = NULL;
    size_t value_len = 0;
    int verbose = MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "verbose", 7,
                                                &value, &value_len) == MHD_YES;
    probe_report report;
    probe_checks_report(&p->checks, kind, &report);
    topo_buf body = TOPO_BUF_INIT(0);
    int status = 500;
    probe_answer(&report, name, check, verbose, &body, &status);
    size_t len = 0;
    char *text = topo_buf_take(&body, &len);
    if (!text)
        return queue_text(conn, 500, "internal error\n");
    return queue(conn, status, text, len, "text/plain");
}

static int serves_metrics(const topo_probe *p)
{
    return p->opts.metrics != NULL || p->opts.metrics_append != NULL;
}

static enum MHD_Result access_plain(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls)
{
    topo_probe *p = cls;
    (void)version;
    (void)upload_data;
    if (*con_cls == NULL) {
        /* The headers are in. libmicrohttpd 0.9.75 closes the connection
         * after a response queued now ("early": the body is never read),
         * so a request with nothing more to read is answered at the next
         * call, keeping the connection for the next scrape. */
        *con_cls = p;
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
            strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
            return queue_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
        if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING) == NULL) {
            const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                         MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (cl == NULL || strcmp(cl, "0") == 0)
                return MHD_YES;
        }
        /* a GET with a body: answered now, the body dropped unread */
    } else if (*upload_data_size > 0) {
        return MHD_NO; /* not announced by its headers: nothing to answer */
    }
    const char *name = NULL, *check = NULL;
    int kind = p->opts.metrics_only ? -1 : probe_path(url, &name, &check);
    if (kind >= 0)
        return answer_probe(p, conn, (probe_kind)kind, name, check);
    if (serves_metrics(p) && strcmp(url, "/metrics") == 0) {
        char *text = topo_probe_metrics(p);
        if (!text)
            return queue_text(conn, 500, "cannot render the metrics\n");
        return queue(conn, 200, text, strlen(text), TOPO_PROBE_METRICS_CONTENT_TYPE);
    }
    return queue_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* On address when given (a chart gives the pod's IP, so probes and metrics
 * are not offered on every interface), else on every interface, IPv6 and
 * IPv4 when the host has both. Any pod can reach the pod's IP, so
 * connections that send nothing must not lock the kubelet's probes out
 * (issue 9: 1,030 of them failed topo-webhook's liveness probe). */
static int start_daemon(topo_probe *p, topo_err *err)
{
    uint16_t port = (uint16_t)p->opts.port;
    unsigned int idle = p->opts.idle_timeout_s, per_client = p->opts.max_connections_per_client;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    const char *address = p->opts.address;
    if (address != NULL) {
        struct sockaddr_storage sa;
        memset(&sa, 0, sizeof sa);
        struct sockaddr_in *v4 = (struct sockaddr_in *)&sa;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa;
        if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(port);
        } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(port);
            flags |= MHD_USE_IPv6;
        } else {
            return topo_err_set(err, TOPO_EINVALID, "\"%s\" is not an IP address", address);
        }
        p->mhd = MHD_start_daemon(flags, port, NULL, NULL, access_plain, p, MHD_OPTION_SOCK_ADDR,
                                  (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, idle,
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client, MHD_OPTION_END);
        if (!p->mhd)
            return topo_err_set(err, TOPO_EGENERIC, "cannot serve on %s port %d", address,
                                p->opts.port);
    } else {
        p->mhd = MHD_start_daemon(flags | MHD_USE_DUAL_STACK, port, NULL, NULL, access_plain, p,
                                  MHD_OPTION_CONNECTION_TIMEOUT, idle,
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client, MHD_OPTION_END);
        if (!p->mhd) /* no IPv6 on this host */
            p->mhd = MHD_start_daemon(flags, port, NULL, NULL, access_plain, p,
                                      MHD_OPTION_CONNECTION_TIMEOUT, idle,
                                      MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client,
                                      MHD_OPTION_END);
        if (!p->mhd)
            return topo_err_set(err, TOPO_EGENERIC, "cannot serve on port %d", p->opts.port);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(p->mhd, MHD_DAEMON_INFO_BIND_PORT);
    p->port = di ? (int)di->port : p->opts.port;
    return 0;
}

int topo_probe_start(topo_probe **out, const topo_probe_opts *opts, topo_err *err)
{
    topo_probe *p = NULL;
    int rc = TOPO_EINVALID;

    *out = NULL;
    if (!opts || opts->port < 0 || opts->port > 65535 ||
        (opts->nready_checks > 0 && !opts->ready_checks)) {
        topo_err_set(err, TOPO_EINVALID, "bad probe options (port %d)", opts ? opts->port : -1);
        return TOPO_EINVALID;
    }
    if (!(p = calloc(1, sizeof *p)))
        return topo_err_nomem(err, "health port");
    p->opts = *opts;
    p->opts.ready_checks = NULL;
    p->opts.nready_checks = 0;
    if (!p->opts.idle_timeout_s)
        p->opts.idle_timeout_s = TOPO_PROBE_IDLE_TIMEOUT_S;
    if (!p->opts.max_connections_per_client)
        p->opts.max_connections_per_client = TOPO_PROBE_PER_CLIENT;
    if ((rc = probe_checks_init(&p->checks)) < 0) {
        topo_err_nomem(err, "health port");
        goto cleanup;
    }
    p->checks_made = 1;
    for (size_t i = 0; i < opts->nready_checks; i++)
        if ((rc = probe_checks_set_ready(&p->checks, opts->ready_checks[i], 0)) < 0) {
            topo_err_set(err, rc, "readiness check \"%s\": %s", opts->ready_checks[i],
                         rc == TOPO_ELIMIT ? "too many checks" : "not a check name");
            goto cleanup;
        }
    if ((rc = start_daemon(p, err)) < 0)
        goto cleanup;
    *out = p;
    p = NULL;
    rc = 0;
cleanup:
    topo_probe_free(p);
    return rc;
}

int topo_probe_port(const topo_probe *p)
{
    return p ? p->port : 0;
}

int topo_probe_set_check(topo_probe *p, const char *name, int ok)
{
    return p ? probe_checks_set_ready(&p->checks, name, ok) : TOPO_EINVALID;
}

int topo_probe_set_live_check(topo_probe *p, const char *name, topo_probe_check_fn fn,
                              void *payload)
{
    return p ? probe_checks_set_live(&p->checks, name, fn, payload) : TOPO_EINVALID;
}

void topo_probe_stopping(topo_probe *p)
{
    if (p)
        probe_checks_stopping(&p->checks);
}

int topo_probe_ready(topo_probe *p)
{
    if (!p)
        return 0;
    probe_report report;
    probe_checks_report(&p->checks, PROBE_READY, &report);
    for (size_t i = 0; i < report.n; i++)
        if (!report.r[i].ok)
            return 0;
    return 1;
}

char *topo_probe_metrics(topo_probe *p)
{
    if (!p || !serves_metrics(p))
        return NULL;
    topo_buf b = TOPO_BUF_INIT(0);
    int rc = 0;
    if (p->opts.metrics)
        rc = topo_metrics_render_buf(p->opts.metrics, &b);
    if (rc == 0 && p->opts.metrics_append)
        rc = p->opts.metrics_append(p->opts.metrics_payload, &b);
    if (rc < 0 || b.error != 0) {
        topo_buf_dispose(&b); /* the text is dropped whole, never half */
        return NULL;
    }
    return topo_buf_take(&b, NULL);
}

void topo_probe_free(topo_probe *p)
{
    if (!p)
        return;
    if (p->mhd)
        MHD_stop_daemon(p->mhd);
    if (p->checks_made)
        probe_checks_dispose(&p->checks);
    free(p);
}
