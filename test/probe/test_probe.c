/* lib/probe: the health and metrics port answering real HTTP requests over
 * loopback sockets (libmicrohttpd serving, a plain socket client here):
 * every path and its text, readiness and liveness checks changing, the
 * verbose lists, per-check paths, /metrics and its Content-Type, 404/405,
 * HEAD, keep-alive, the per-client bound and the idle timeout, many
 * concurrent clients, bad options. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "topo/limits.h"
#include "topo/metrics.h"
#include "topo/probe.h"

/* ---- a plain HTTP/1.1 client ---- */

typedef struct response {
    int status;
    char head[4096]; /* the status line and headers */
    char body[65536];
    size_t len;
} response;

/* A connected socket to port on host (IPv4 or IPv6), from source when
 * given (another loopback address is another client to the server); -1
 * when the connection fails. */
static int dial_from(const char *host, int port, const char *source)
{
    struct sockaddr_storage sa;
    memset(&sa, 0, sizeof sa);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa;
    socklen_t salen;
    int family;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        family = v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        salen = sizeof *v4;
    } else {
        assert_int_equal(inet_pton(AF_INET6, host, &v6->sin6_addr), 1);
        family = v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        salen = sizeof *v6;
    }
    int fd = socket(family, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (source != NULL) {
        struct sockaddr_in src;
        memset(&src, 0, sizeof src);
        src.sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, source, &src.sin_addr), 1);
        assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof src), 0);
    }
    if (connect(fd, (struct sockaddr *)&sa, salen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int dial(int port)
{
    return dial_from("127.0.0.1", port, NULL);
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        assert_true(w > 0);
        s += w;
        n -= (size_t)w;
    }
}

/* A header's value in r->head ("" when absent), copied into out. */
static const char *header(const response *r, const char *name, char *out, size_t size)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (const char *line = strstr(r->head, "\r\n"); line != NULL;
         line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
            h += n + 1;
            while (*h == ' ')
                h++;
            size_t v = strcspn(h, "\r");
            if (v >= size)
                v = size - 1;
            memcpy(out, h, v);
            out[v] = '\0';
            break;
        }
    }
    return out;
}

/* Reads one response from fd into r: 0, or -1 when the connection closed
 * (or timed out) before a whole one came. head_only: a HEAD's answer,
 * without a body whatever Content-Length says. */
static int read_response(int fd, response *r, int head_only)
{
    char buf[sizeof r->head + sizeof r->body];
    size_t got = 0;
    char *end = NULL;
    buf[0] = '\0';
    memset(r, 0, sizeof *r);
    while (!(end = strstr(buf, "\r\n\r\n"))) {
        if (got + 1 >= sizeof buf)
            return -1;
        ssize_t n = recv(fd, buf + got, 1, 0); /* byte by byte: nothing of the next response */
        if (n <= 0)
            return -1;
        got += (size_t)n;
        buf[got] = '\0';
    }
    size_t head_len = (size_t)(end - buf) + 2;
    assert_true(head_len < sizeof r->head);
    memcpy(r->head, buf, head_len);
    r->head[head_len] = '\0';
    assert_int_equal(sscanf(r->head, "HTTP/1.1 %d", &r->status), 1);
    char cl[32];
    size_t want = head_only ? 0 : (size_t)strtoul(header(r, "Content-Length", cl, sizeof cl),
                                                  NULL, 10);
    assert_true(want < sizeof r->body);
    while (r->len < want) {
        ssize_t n = recv(fd, r->body + r->len, want - r->len, 0);
        if (n <= 0)
            return -1;
        r->len += (size_t)n;
    }
    r->body[r->len] = '\0';
    return 0;
}

/* One request over a connection of its own. */
static void request(int port, const char *method, const char *path, response *r)
{
    char req[512];
    int fd = dial(port);
    assert_true(fd >= 0);
    snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: localhost\r\n\r\n", method, path);
    send_all(fd, req);
    assert_int_equal(read_response(fd, r, strcmp(method, "HEAD") == 0), 0);
    close(fd);
}

/* GET path: the status, and the body is want (NULL: not checked). */
static void expect_get(int port, const char *path, int status, const char *want)
{
    response r;
    request(port, "GET", path, &r);
    if (r.status != status || (want != NULL && strcmp(r.body, want) != 0))
        fail_msg("GET %s: %d \"%s\", want %d \"%s\"", path, r.status, r.body, status,
                 want ? want : "(any)");
}

static topo_probe *start(const topo_probe_opts *o)
{
    topo_probe *p = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_probe_start(&p, o, &err) != 0)
        fail_msg("topo_probe_start: %s", err.text);
    assert_non_null(p);
    assert_true(topo_probe_port(p) > 0);
    return p;
}

/* 1 when the server closed fd (not a timeout of ours). */
static int closed_by_peer(int fd)
{
    char c;
    errno = 0;
    ssize_t n = recv(fd, &c, 1, 0);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the tests ---- */

static void test_probe__paths(void **state)
{
    (void)state;
    static const char *const needed[] = {"nodes-synced"};
    topo_probe_opts o = {.address = "127.0.0.1", .ready_checks = needed, .nready_checks = 1};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);

    expect_get(port, "/livez", 200, "ok\n");
    expect_get(port, "/healthz", 200, "ok\n");
    expect_get(port, "/livez?verbose", 200, "[+]ping ok\nlivez check passed\n");
    expect_get(port, "/healthz?verbose=1", 200, "[+]ping ok\nhealthz check passed\n");
    expect_get(port, "/livez/ping", 200, "ok\n");
    expect_get(port, "/healthz/ping", 200, "ok\n");
    /* not ready from the start: the check exists, failing */
    expect_get(port, "/readyz", 503,
               "[-]nodes-synced failed\n[+]shutdown ok\nreadyz check failed\n");
    expect_get(port, "/readyz/nodes-synced", 503, "[-]nodes-synced failed\n");
    expect_get(port, "/readyz/shutdown", 200, "ok\n");
    assert_int_equal(topo_probe_ready(p), 0);

    assert_int_equal(topo_probe_set_check(p, "nodes-synced", 1), 0);
    assert_int_equal(topo_probe_ready(p), 1);
    expect_get(port, "/readyz", 200, "ok\n");
    expect_get(port, "/readyz?verbose", 200,
               "[+]nodes-synced ok\n[+]shutdown ok\nreadyz check passed\n");
    expect_get(port, "/readyz/nodes-synced", 200, "ok\n");
    expect_get(port, "/readyz/nodes-synced?verbose", 200, "ok\n");

    /* unknown checks and near misses */
    expect_get(port, "/readyz/nope", 404, "not found\n");
    expect_get(port, "/livez/nodes-synced", 404, "not found\n");
    expect_get(port, "/readyz/ping", 404, "not found\n");
    expect_get(port, "/readyz/", 404, "not found\n");
    expect_get(port, "/readyzz", 404, "not found\n");
    expect_get(port, "/ready", 404, "not found\n");
    expect_get(port, "/", 404, "not found\n");
    expect_get(port, "/nope", 404, "not found\n");
    /* no registry given: no /metrics */
    expect_get(port, "/metrics", 404, "not found\n");

    response r;
    char v[128];
    request(port, "GET", "/livez", &r);
    assert_string_equal(header(&r, "Content-Type", v, sizeof v), "text/plain");
    topo_probe_free(p);
}

static void test_probe__readiness_changes(void **state)
{
    (void)state;
    topo_probe_opts o = {.address = "127.0.0.1"};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);

    /* no check of the daemon's: ready (only "shutdown") */
    expect_get(port, "/readyz?verbose", 200, "[+]shutdown ok\nreadyz check passed\n");
    assert_int_equal(topo_probe_set_check(p, "nodes-listed", 1), 0);
    assert_int_equal(topo_probe_set_check(p, "source.netbox", 0), 0);
    expect_get(port, "/readyz", 503,
               "[+]nodes-listed ok\n[-]source.netbox failed\n[+]shutdown ok\n"
               "readyz check failed\n");
    assert_int_equal(topo_probe_set_check(p, "source.netbox", 1), 0);
    expect_get(port, "/readyz", 200, "ok\n");
    /* a check turning bad again: not ready again */
    assert_int_equal(topo_probe_set_check(p, "nodes-listed", 0), 0);
    expect_get(port, "/readyz", 503, NULL);
    expect_get(port, "/readyz/source.netbox", 200, "ok\n");
    assert_int_equal(topo_probe_set_check(p, "nodes-listed", 1), 0);
    expect_get(port, "/readyz", 200, "ok\n");
    /* liveness does not follow readiness */
    assert_int_equal(topo_probe_set_check(p, "nodes-listed", 0), 0);
    expect_get(port, "/livez", 200, "ok\n");
    assert_int_equal(topo_probe_set_check(p, "nodes-listed", 1), 0);

    /* shutdown: unready whatever the checks say, alive still */
    topo_probe_stopping(p);
    assert_int_equal(topo_probe_ready(p), 0);
    expect_get(port, "/readyz", 503,
               "[+]nodes-listed ok\n[+]source.netbox ok\n[-]shutdown failed\n"
               "readyz check failed\n");
    expect_get(port, "/readyz/shutdown", 503, "[-]shutdown failed\n");
    assert_int_equal(topo_probe_set_check(p, "nodes-listed", 1), 0);
    expect_get(port, "/readyz", 503, NULL);
    expect_get(port, "/livez", 200, "ok\n");
    expect_get(port, "/healthz", 200, "ok\n");
    topo_probe_free(p);
}

static int flag_check(void *payload)
{
    return atomic_load((atomic_int *)payload);
}

static void test_probe__liveness_check(void **state)
{
    (void)state;
    atomic_int leader_ok = 1;
    topo_probe_opts o = {.address = "127.0.0.1"};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);

    assert_int_equal(topo_probe_set_live_check(p, "leaderElection", flag_check, &leader_ok), 0);
    expect_get(port, "/livez", 200, "ok\n");
    expect_get(port, "/livez?verbose", 200,
               "[+]ping ok\n[+]leaderElection ok\nlivez check passed\n");
    expect_get(port, "/livez/leaderElection", 200, "ok\n");

    atomic_store(&leader_ok, 0);
    expect_get(port, "/livez", 503,
               "[+]ping ok\n[-]leaderElection failed\nlivez check failed\n");
    expect_get(port, "/healthz", 503,
               "[+]ping ok\n[-]leaderElection failed\nhealthz check failed\n");
    expect_get(port, "/livez/leaderElection", 503, "[-]leaderElection failed\n");
    expect_get(port, "/livez/ping", 200, "ok\n");
    /* readiness does not follow liveness */
    expect_get(port, "/readyz", 200, "ok\n");

    /* removed: alive again, the path gone */
    assert_int_equal(topo_probe_set_live_check(p, "leaderElection", NULL, NULL), 0);
    expect_get(port, "/livez", 200, "ok\n");
    expect_get(port, "/livez/leaderElection", 404, "not found\n");
    assert_int_equal(topo_probe_set_live_check(p, "absent", NULL, NULL), 0);
    topo_probe_free(p);
}

static void test_probe__check_names(void **state)
{
    (void)state;
    topo_probe_opts o = {.address = "127.0.0.1"};
    topo_probe *p = start(&o);
    char longest[TOPO_MAX_PROBE_CHECK_NAME + 2];
    memset(longest, 'a', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    static const char *const bad[] = {"", "a/b", "a b", "a?b", "caf\xc3\xa9", "x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(topo_probe_set_check(p, bad[i], 1), TOPO_EINVALID);
        assert_int_equal(topo_probe_set_live_check(p, bad[i], flag_check, NULL), TOPO_EINVALID);
    }
    assert_int_equal(topo_probe_set_check(p, NULL, 1), TOPO_EINVALID);
    assert_int_equal(topo_probe_set_check(p, longest, 1), TOPO_EINVALID);
    longest[TOPO_MAX_PROBE_CHECK_NAME] = '\0';
    assert_int_equal(topo_probe_set_check(p, longest, 1), 0);
    /* the built-in names */
    assert_int_equal(topo_probe_set_check(p, "shutdown", 1), TOPO_EINVALID);
    assert_int_equal(topo_probe_set_live_check(p, "ping", flag_check, NULL), TOPO_EINVALID);
    assert_int_equal(topo_probe_set_check(NULL, "x", 1), TOPO_EINVALID);

    /* the bound: TOPO_MAX_PROBE_CHECKS of each kind */
    for (int i = 1; i < TOPO_MAX_PROBE_CHECKS; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        assert_int_equal(topo_probe_set_check(p, name, 1), 0);
    }
    assert_int_equal(topo_probe_set_check(p, "one-more", 1), TOPO_ELIMIT);
    assert_int_equal(topo_probe_set_check(p, "c1", 0), 0); /* an existing one: fine */
    expect_get(topo_probe_port(p), "/readyz/c1", 503, "[-]c1 failed\n");
    expect_get(topo_probe_port(p), "/readyz", 503, NULL);
    topo_probe_free(p);
}

static int append_extra(void *payload, topo_buf *out)
{
    (void)payload;
    return topo_buf_puts(out, "# TYPE extra_total counter\nextra_total 7\n");
}

static int append_fails(void *payload, topo_buf *out)
{
    (void)payload;
    (void)out;
    return TOPO_ENOMEM;
}

static void test_probe__metrics(void **state)
{
    (void)state;
    topo_metrics *m = NULL;
    topo_metrics_family *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_metrics_create(&m, 0, &err), 0);
    static const char *const labels[] = {"source"};
    assert_int_equal(topo_metrics_counter(m, &f, "topo_sync_source_errors_total",
                                          "Errors by source.", labels, 1, &err),
                     0);
    const char *v[] = {"netbox"};
    topo_metrics_add(topo_metrics_get(f, v), 3);

    topo_probe_opts o = {.address = "127.0.0.1", .metrics = m};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);
    char *want = topo_metrics_render(m);
    assert_non_null(want);
    response r;
    char ct[128], cl[32];
    request(port, "GET", "/metrics", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, want);
    assert_non_null(strstr(r.body, "topo_sync_source_errors_total{source=\"netbox\"} 3\n"));
    assert_string_equal(header(&r, "Content-Type", ct, sizeof ct),
                        "text/plain; version=0.0.4; charset=utf-8");
    /* HEAD: the headers of GET, no body */
    request(port, "HEAD", "/metrics", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(strtoul(header(&r, "Content-Length", cl, sizeof cl), NULL, 10),
                     strlen(want));
    free(want);
    /* the probes are on the same port */
    expect_get(port, "/livez", 200, "ok\n");
    expect_get(port, "/metrics/", 404, "not found\n");
    char *text = topo_probe_metrics(p);
    assert_non_null(text);
    free(text);
    topo_probe_free(p);

    /* more text after the registry's; a failing append drops it whole */
    o.metrics_append = append_extra;
    p = start(&o);
    request(topo_probe_port(p), "GET", "/metrics", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "# TYPE topo_sync_source_errors_total counter\n"));
    assert_non_null(strstr(r.body, "errors_total{source=\"netbox\"} 3\n# TYPE extra_total"));
    topo_probe_free(p);
    o.metrics_append = append_fails;
    p = start(&o);
    expect_get(topo_probe_port(p), "/metrics", 500, "cannot render the metrics\n");
    assert_null(topo_probe_metrics(p));
    topo_probe_free(p);

    /* metrics_only: a metrics port, no probes */
    o.metrics_append = NULL;
    o.metrics_only = 1;
    p = start(&o);
    expect_get(topo_probe_port(p), "/metrics", 200, NULL);
    expect_get(topo_probe_port(p), "/livez", 404, "not found\n");
    expect_get(topo_probe_port(p), "/readyz", 404, "not found\n");
    expect_get(topo_probe_port(p), "/healthz", 404, "not found\n");
    topo_probe_free(p);
    topo_metrics_free(m);
}

static void test_probe__methods(void **state)
{
    (void)state;
    topo_metrics *m = NULL;
    assert_int_equal(topo_metrics_create(&m, 0, NULL), 0);
    topo_probe_opts o = {.address = "127.0.0.1", .metrics = m};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);
    static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    static const char *const paths[] = {"/livez", "/readyz", "/metrics", "/nope"};
    response r;
    char allow[64];
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        for (size_t j = 0; j < sizeof paths / sizeof paths[0]; j++) {
            request(port, methods[i], paths[j], &r);
            if (r.status != 405)
                fail_msg("%s %s: %d", methods[i], paths[j], r.status);
            assert_string_equal(r.body, "method not allowed\n");
            assert_string_equal(header(&r, "Allow", allow, sizeof allow), "GET, HEAD");
        }
    /* a POST with a body: refused before it is read */
    int fd = dial(port);
    send_all(fd, "POST /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
    assert_int_equal(read_response(fd, &r, 0), 0);
    assert_int_equal(r.status, 405);
    close(fd);
    /* HEAD of a probe */
    request(port, "HEAD", "/readyz", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    topo_probe_free(p);
    topo_metrics_free(m);
}

static void test_probe__keep_alive(void **state)
{
    (void)state;
    topo_probe_opts o = {.address = "127.0.0.1"};
    topo_probe *p = start(&o);
    int fd = dial(topo_probe_port(p));
    response r;
    for (int i = 0; i < 5; i++) {
        send_all(fd, i % 2 ? "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"
                           : "GET /readyz?verbose HTTP/1.1\r\nHost: x\r\n\r\n");
        if (read_response(fd, &r, 0) != 0)
            fail_msg("request %d on one connection: closed", i);
        assert_int_equal(r.status, 200);
        char v[32];
        assert_string_equal(header(&r, "Connection", v, sizeof v), "");
    }
    close(fd);
    /* a GET with a body: answered, the connection then closed (the body
     * is never read) */
    fd = dial(topo_probe_port(p));
    send_all(fd, "GET /livez HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody");
    assert_int_equal(read_response(fd, &r, 0), 0);
    assert_int_equal(r.status, 200);
    assert_true(closed_by_peer(fd));
    close(fd);
    topo_probe_free(p);
}

/* Idle connections from one address are bounded and cut after the idle
 * timeout; other addresses are answered meanwhile. */
static void test_probe__connection_bounds(void **state)
{
    (void)state;
    topo_probe_opts o = {.address = "127.0.0.1", .idle_timeout_s = 1,
                         .max_connections_per_client = 4};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);
    int idle[4];
    for (int i = 0; i < 4; i++)
        assert_true((idle[i] = dial(port)) >= 0);
    sleep_ms(100); /* accepted by the server */
    /* a fifth from the same address: closed without an answer */
    int fd = dial(port);
    response r;
    if (fd >= 0) {
        send(fd, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n", 33, MSG_NOSIGNAL);
        assert_int_equal(read_response(fd, &r, 0), -1);
        close(fd);
    }
    /* another client (the kubelet from the node's address) is answered */
    fd = dial_from("127.0.0.1", port, "127.0.0.2");
    assert_true(fd >= 0);
    send_all(fd, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_int_equal(read_response(fd, &r, 0), 0);
    assert_int_equal(r.status, 200);
    close(fd);
    /* the idle ones are cut after the idle timeout */
    for (int i = 0; i < 4; i++) {
        assert_true(closed_by_peer(idle[i]));
        close(idle[i]);
    }
    /* and the address is served again (libmicrohttpd forgets a closed
     * connection's address in its next round, a moment after the close) */
    int served = 0;
    for (int i = 0; i < 40 && !served; i++) {
        fd = dial(port);
        if (fd >= 0) {
            send(fd, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n", 33, MSG_NOSIGNAL);
            served = read_response(fd, &r, 0) == 0 && r.status == 200;
            close(fd);
        }
        if (!served)
            sleep_ms(50);
    }
    assert_true(served);
    topo_probe_free(p);
}

typedef struct client_arg {
    int port;
    int ok;
} client_arg;

static void *client_thread(void *arg)
{
    client_arg *a = arg;
    static const char *const paths[] = {"/livez", "/readyz", "/healthz", "/metrics"};
    for (int i = 0; i < 40; i++) {
        response r;
        char req[128];
        int fd = dial(a->port);
        if (fd < 0)
            continue;
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                 paths[i % 4]);
        send_all(fd, req);
        if (read_response(fd, &r, 0) == 0 && r.status == 200)
            a->ok++;
        close(fd);
    }
    return NULL;
}

/* Eight clients at once from one address (under its bound of 16), 320
 * requests: every one answered. */
static void test_probe__many_clients(void **state)
{
    (void)state;
    topo_metrics *m = NULL;
    assert_int_equal(topo_metrics_create(&m, 0, NULL), 0);
    topo_probe_opts o = {.address = "127.0.0.1", .metrics = m};
    topo_probe *p = start(&o);
    pthread_t t[8];
    client_arg a[8];
    for (int i = 0; i < 8; i++) {
        a[i].port = topo_probe_port(p);
        a[i].ok = 0;
        assert_int_equal(pthread_create(&t[i], NULL, client_thread, &a[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ok += a[i].ok;
    }
    assert_int_equal(ok, 8 * 40);
    topo_probe_free(p);
    topo_metrics_free(m);
}

/* Freed with connections open, one of them half-way through a request. */
static void test_probe__free_with_open_connections(void **state)
{
    (void)state;
    topo_probe_opts o = {0};
    topo_probe *p = start(&o);
    int port = topo_probe_port(p);
    expect_get(port, "/livez", 200, "ok\n"); /* every interface: 127.0.0.1 too */
    int a = dial(port), b = dial(port);
    assert_true(a >= 0 && b >= 0);
    send_all(b, "GET /livez HTTP/1.1\r\nHo");
    sleep_ms(50);
    topo_probe_free(p);
    assert_true(closed_by_peer(a));
    assert_true(closed_by_peer(b));
    close(a);
    close(b);
    topo_probe_free(NULL);
}

static void test_probe__ports_and_options(void **state)
{
    (void)state;
    topo_probe *p = NULL, *q = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_probe_opts o = {.address = "127.0.0.1"};
    p = start(&o);
    /* the port taken: refused, saying so */
    o.port = topo_probe_port(p);
    assert_int_equal(topo_probe_start(&q, &o, &err), TOPO_EGENERIC);
    assert_null(q);
    assert_non_null(strstr(err.text, "cannot serve on 127.0.0.1 port"));
    /* two ephemeral ports differ */
    o.port = 0;
    q = start(&o);
    assert_int_not_equal(topo_probe_port(p), topo_probe_port(q));
    topo_probe_free(q);
    topo_probe_free(p);

    o.address = "localhost"; /* numeric only: no resolver in a probe */
    assert_int_equal(topo_probe_start(&q, &o, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "\"localhost\" is not an IP address");
    o.address = "127.0.0.1";
    o.port = 65536;
    assert_int_equal(topo_probe_start(&q, &o, &err), TOPO_EINVALID);
    o.port = -1;
    assert_int_equal(topo_probe_start(&q, &o, &err), TOPO_EINVALID);
    o.port = 0;
    static const char *const bad[] = {"ok", "no/slash"};
    o.ready_checks = bad;
    o.nready_checks = 2;
    assert_int_equal(topo_probe_start(&q, &o, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "no/slash"));
    assert_null(q);
    assert_int_equal(topo_probe_start(&q, NULL, &err), TOPO_EINVALID);
    assert_int_equal(topo_probe_ready(NULL), 0);
    assert_null(topo_probe_metrics(NULL));

    /* IPv6 loopback, where the host has it */
    o = (topo_probe_opts){.address = "::1"};
    if (topo_probe_start(&q, &o, &err) == 0) {
        response r;
        int fd = dial_from("::1", topo_probe_port(q), NULL);
        assert_true(fd >= 0);
        send_all(fd, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_int_equal(read_response(fd, &r, 0), 0);
        assert_int_equal(r.status, 200);
        close(fd);
        topo_probe_free(q);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe__paths),
        cmocka_unit_test(test_probe__readiness_changes),
        cmocka_unit_test(test_probe__liveness_check),
        cmocka_unit_test(test_probe__check_names),
        cmocka_unit_test(test_probe__metrics),
        cmocka_unit_test(test_probe__methods),
        cmocka_unit_test(test_probe__keep_alive),
        cmocka_unit_test(test_probe__connection_bounds),
        cmocka_unit_test(test_probe__many_clients),
        cmocka_unit_test(test_probe__free_with_open_connections),
        cmocka_unit_test(test_probe__ports_and_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
