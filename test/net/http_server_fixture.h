/* The fake HTTPS server of the lib/net unit tests (test_http.c,
 * test_http_auth.c): test/e2e/fake_http_server.py started once per group
 * with a PKI made by test/e2e/make_test_pki.sh in a temporary directory and
 * a token file, a control client for its counters, and the helpers the
 * tests share. Functions are static inline: each test uses a part. */
#ifndef TOPO_TEST_NET_HTTP_SERVER_FIXTURE_H
#define TOPO_TEST_NET_HTTP_SERVER_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "../../lib/net/http_internal.h" /* white-box */
#include "topo/clock.h"
#include "topo/http.h"
#include "topo/log.h"

extern char **environ;

#define PATH_MAX_LEN 512

/* One server for the whole group. */
static struct {
    char dir[PATH_MAX_LEN];
    char ca[PATH_MAX_LEN];
    char other_ca[PATH_MAX_LEN];
    char client_cert[PATH_MAX_LEN];
    char client_key[PATH_MAX_LEN];
    char other_client_cert[PATH_MAX_LEN];
    char other_client_key[PATH_MAX_LEN];
    char token_file[PATH_MAX_LEN];
    char base[64];
    char mtls_base[64];
    pid_t pid;
    int stdin_fd;  /* the server's stdin: closing it stops the server */
    int stdout_fd; /* where it printed its ports */
    topo_http *ctl; /* for /control requests */
} fx = {.pid = -1, .stdin_fd = -1, .stdout_fd = -1};

/* --- process and file helpers ---------------------------------------------------- */

static inline double now_s(void)
{
    return (double)topo_clock_ns() / 1e9;
}

static inline int spawn(pid_t *pid, char *const argv[], int in_fd, int out_fd)
{
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return rc;
    if (in_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

static inline int wait_exit(pid_t pid, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -1;
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        topo_clock_sleep_ns(10000000);
    }
}

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static inline void write_file(const char *path, const char *text)
{
    char tmp[PATH_MAX_LEN + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    /* Atomic, as the kubelet's symlink swap is. */
    assert_int_equal(rename(tmp, path), 0);
}

static inline char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static inline void join(char *out, const char *dir, const char *name)
{
    snprintf(out, PATH_MAX_LEN, "%s/%s", dir, name);
}

/* Reads one line from fd within timeout_s. */
static inline int read_line(int fd, char *buf, size_t size, double timeout_s)
{
    size_t len = 0;
    double deadline = now_s() + timeout_s;
    while (len + 1 < size) {
        struct pollfd p = {fd, POLLIN, 0};
        int ms = (int)((deadline - now_s()) * 1000);
        if (ms <= 0 || poll(&p, 1, ms) <= 0)
            return -1;
        ssize_t n = read(fd, buf + len, 1);
        if (n <= 0)
            return -1;
        if (buf[len] == '\n')
            break;
        len++;
    }
    buf[len] = '\0';
    return 0;
}

/* --- the server ------------------------------------------------------------------ */

static inline int group_setup(void **state)
{
    (void)state;
    const char *src = getenv("TOPO_SOURCE_DIR");
    char script[PATH_MAX_LEN], server[PATH_MAX_LEN], line[128];
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
    pid_t pid;

    if (src == NULL) {
        fprintf(stderr, "test_http: TOPO_SOURCE_DIR is not set\n");
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    /* The server is on loopback: no proxy from the environment. */
    unsetenv("http_proxy");
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("ALL_PROXY");
    unsetenv("all_proxy");
    topo_log_set_level(TOPO_LOG_WARN);

    const char *tmp = getenv("TMPDIR");
    snprintf(fx.dir, sizeof(fx.dir), "%s/topo-http-XXXXXX", tmp != NULL ? tmp : "/tmp");
    if (mkdtemp(fx.dir) == NULL)
        return -1;
    join(fx.ca, fx.dir, "ca.pem");
    join(fx.other_ca, fx.dir, "other-ca.pem");
    join(fx.client_cert, fx.dir, "client.pem");
    join(fx.client_key, fx.dir, "client.key");
    join(fx.other_client_cert, fx.dir, "other-client.pem");
    join(fx.other_client_key, fx.dir, "other-client.key");
    join(fx.token_file, fx.dir, "token");

    snprintf(script, sizeof(script), "%s/test/e2e/make_test_pki.sh", src);
    char sh[] = "sh";
    char *pki_argv[] = {sh, script, fx.dir, NULL};
    if (spawn(&pid, pki_argv, -1, -1) != 0 || wait_exit(pid, 60) != 0) {
        fprintf(stderr, "test_http: make_test_pki.sh failed\n");
        return -1;
    }
    write_file(fx.token_file, "token-0\n");

    snprintf(server, sizeof(server), "%s/test/e2e/fake_http_server.py", src);
    /* argv strings must be writable (posix_spawn takes char *const []). */
    /* The interpreter CMake found (TOPO_PYTHON3, cmake/TopoPython.cmake), not
     * PATH's python3: a version manager's shim costs half a second a start. */
    char python[PATH_MAX_LEN] = "python3", pki[] = "--pki", token[] = "--token-file", life[] = "--lifetime",
         secs[] = "300", eof[] = "--exit-on-stdin-eof";
    const char *configured = getenv("TOPO_PYTHON3");
    if (configured != NULL && configured[0] != '\0')
        snprintf(python, sizeof python, "%s", configured);
    char *srv_argv[] = {python, server, pki, fx.dir, token, fx.token_file, life, secs, eof, NULL};
    if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0)
        return -1;
    fcntl(in_pipe[1], F_SETFD, FD_CLOEXEC);
    fcntl(out_pipe[0], F_SETFD, FD_CLOEXEC);
    int rc = spawn(&fx.pid, srv_argv, in_pipe[0], out_pipe[1]);
    close(in_pipe[0]);
    close(out_pipe[1]);
    fx.stdin_fd = in_pipe[1];
    fx.stdout_fd = out_pipe[0];
    if (rc != 0) {
        fprintf(stderr, "test_http: cannot start python3: %s\n", strerror(rc));
        fx.pid = -1;
        return -1;
    }
    int port = 0, mtls_port = 0;
    if (read_line(fx.stdout_fd, line, sizeof(line), 20) != 0 ||
        sscanf(line, "%d %d", &port, &mtls_port) != 2) {
        fprintf(stderr, "test_http: fake_http_server.py did not print its ports\n");
        return -1;
    }
    snprintf(fx.base, sizeof(fx.base), "https://127.0.0.1:%d", port);
    snprintf(fx.mtls_base, sizeof(fx.mtls_base), "https://127.0.0.1:%d", mtls_port);

    topo_http_opts o = {.base_url = fx.base, .ca_file = fx.ca, .qps = -1};
    topo_err err = TOPO_ERR_INIT;
    if (topo_http_create(&fx.ctl, &o, &err) != 0) {
        fprintf(stderr, "test_http: control client: %s\n", err.text);
        return -1;
    }
    return 0;
}

static inline int group_teardown(void **state)
{
    (void)state;
    topo_http_free(fx.ctl);
    fx.ctl = NULL;
    if (fx.stdin_fd >= 0)
        close(fx.stdin_fd);
    if (fx.pid > 0)
        wait_exit(fx.pid, 10);
    if (fx.stdout_fd >= 0)
        close(fx.stdout_fd);
    if (fx.dir[0] != '\0')
        nftw(fx.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    topo_log_set_level(TOPO_LOG_INFO);
    return 0;
}

typedef struct server_stats {
    json_int_t connections;
    json_int_t handshake_failures;
    json_int_t requests;
    json_int_t unauthorized;
    json_int_t key_count;
} server_stats;

static inline server_stats server_get(const char *key)
{
    char path[256];
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    server_stats s;

    snprintf(path, sizeof(path), "/control/stats?key=%s", key != NULL ? key : "");
    topo_http_request req = {"GET", path, NULL, NULL, 0, 0, NULL, NULL, 0};
    assert_int_equal(topo_http_do(fx.ctl, &req, &r, &err), 0);
    assert_int_equal(r.status, 200);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    assert_non_null(j);
    s.connections = json_integer_value(json_object_get(j, "connections"));
    s.handshake_failures = json_integer_value(json_object_get(j, "handshake_failures"));
    s.requests = json_integer_value(json_object_get(j, "requests"));
    s.unauthorized = json_integer_value(json_object_get(j, "unauthorized"));
    s.key_count = json_integer_value(json_object_get(j, "key_count"));
    json_decref(j);
    topo_http_response_dispose(&r);
    return s;
}

static inline void server_reset(void)
{
    topo_http_response r = {0};
    topo_http_request req = {"POST", "/control/reset", NULL, NULL, 0, 0, NULL, NULL, 0};
    assert_int_equal(topo_http_do(fx.ctl, &req, &r, NULL), 0);
    assert_int_equal(r.status, 200);
    topo_http_response_dispose(&r);
}

/* --- client helpers -------------------------------------------------------------- */

/* Options every test starts from: the main listener, the right CA, no rate
 * limit, quick backoff. */
static inline topo_http_opts base_opts(void)
{
    topo_http_opts o = {.base_url = fx.base,
                        .ca_file = fx.ca,
                        .qps = -1,
                        .max_retries = 3,
                        .backoff_base_ms = 10,
                        .backoff_max_ms = 100,
                        .timeout_ms = 10000};
    return o;
}

static inline topo_http *client(const topo_http_opts *o)
{
    topo_http *h = NULL;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_http_create(&h, o, &err);
    if (rc != 0)
        fail_msg("topo_http_create: %s (%s)", err.text, topo_err_name(rc));
    return h;
}

/* One request; returns the code, the response in *r (dispose it). */
static inline int call(topo_http *h, const char *method, const char *path, const char *body,
                topo_http_response *r, topo_err *err)
{
    topo_http_request req = {method,
                             path,
                             body != NULL ? "application/json" : NULL,
                             body,
                             body != NULL ? strlen(body) : 0,
                             0,
                             NULL,
                             NULL,
                             0};
    return topo_http_do(h, &req, r, err);
}

/* GET that must succeed with 200; returns the body's length. */
static inline size_t get_ok(topo_http *h, const char *path)
{
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    int rc = call(h, "GET", path, NULL, &r, &err);
    if (rc != 0)
        fail_msg("GET %s: %s (%s)", path, err.text, topo_err_name(rc));
    assert_int_equal(r.status, 200);
    size_t len = r.len;
    topo_http_response_dispose(&r);
    return len;
}

static inline topo_http_stats stats_of(const topo_http *h)
{
    topo_http_stats s;
    topo_http_get_stats(h, &s);
    return s;
}

#endif
