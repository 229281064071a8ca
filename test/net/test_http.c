/* lib/net/http.c against a real HTTPS server: test/e2e/fake_http_server.py
 * runs as a subprocess with a PKI made by test/e2e/make_test_pki.sh in a
 * temp dir. TLS verification (right CA, wrong CA, CA as PEM data, insecure),
 * client certificates, token rotation, retries (429 + Retry-After, 5xx,
 * dropped connections, refused connections) per method, body and line
 * limits, timeouts, streaming, the rate limiter and keep-alive reuse; plus
 * the pure parts (backoff, Retry-After, token bucket) on a fake clock. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp, posix_spawn */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "../../lib/net/http_internal.h" /* white-box */
#include "topo/http.h"
#include "topo/log.h"

#include "http_server_fixture.h"

/* --- TLS ------------------------------------------------------------------------- */

static void test_http__tls_verify_with_ca_file_and_data(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    topo_http *h = client(&o);
    topo_http_response r = {0};
    assert_int_equal(call(h, "GET", "/json", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(strlen(r.body), r.len);
    assert_non_null(strstr(r.body, "\"kind\": \"List\""));
    topo_http_response_dispose(&r);
    assert_null(r.body);
    topo_http_free(h);

    /* certificate-authority-data: the CA as PEM text (CURLOPT_CAINFO_BLOB). */
    char *pem = strdup(read_text(fx.ca));
    o = base_opts();
    o.ca_file = fx.other_ca; /* data wins over file */
    o.ca_data = pem;
    h = client(&o);
    get_ok(h, "/json");
    topo_http_free(h);

    /* The server certificate names localhost too. */
    char url[80];
    snprintf(url, sizeof(url), "https://localhost:%s/", strrchr(fx.base, ':') + 1);
    o = base_opts();
    o.base_url = url; /* a trailing slash is dropped */
    h = client(&o);
    get_ok(h, "/json");
    topo_http_free(h);
    free(pem);
}

static void test_http__tls_wrong_ca_fails_clearly(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.ca_file = fx.other_ca;
    topo_http *h = client(&o);
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(call(h, "GET", "/json", NULL, &r, &err), TOPO_ECONNECT);
    assert_int_equal(err.code, TOPO_ECONNECT);
    assert_non_null(strstr(err.text, "not trusted"));
    assert_non_null(strstr(err.text, fx.base));
    assert_null(r.body);
    assert_int_equal(stats_of(h).retries, 0); /* a trust failure is not retried */
    topo_http_free(h);

    /* Same with the unrelated CA as data. */
    char *pem = strdup(read_text(fx.other_ca));
    o = base_opts();
    o.ca_file = NULL;
    o.ca_data = pem;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/json", NULL, &r, &err), TOPO_ECONNECT);
    topo_http_free(h);
    free(pem);

    /* No CA given: the system store does not know the test CA either. */
    o = base_opts();
    o.ca_file = NULL;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/json", NULL, &r, &err), TOPO_ECONNECT);
    topo_http_free(h);

    /* insecure_skip_verify accepts it. */
    o = base_opts();
    o.ca_file = fx.other_ca;
    o.insecure_skip_verify = 1;
    h = client(&o);
    get_ok(h, "/json");
    topo_http_free(h);

    /* A CA file that does not exist is a configuration error. */
    o = base_opts();
    o.ca_file = "/nonexistent/ca.pem";
    o.max_retries = -1;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/json", NULL, &r, &err), TOPO_EINVALID);
    topo_http_free(h);
}

static void expect_cn(topo_http *h, const char *cn)
{
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    int rc = call(h, "GET", "/whoami", NULL, &r, &err);
    if (rc != 0)
        fail_msg("GET /whoami: %s", err.text);
    assert_int_equal(r.status, 200);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "cn")), cn);
    json_decref(j);
    topo_http_response_dispose(&r);
}

static void test_http__client_certificate(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.base_url = fx.mtls_base;
    o.client_cert_file = fx.client_cert;
    o.client_key_file = fx.client_key;
    topo_http *h = client(&o);
    expect_cn(h, "topo-test-client");
    topo_http_free(h);

    /* client-certificate-data / client-key-data (PEM blobs). */
    char *cert = strdup(read_text(fx.client_cert));
    char *key = strdup(read_text(fx.client_key));
    o = base_opts();
    o.base_url = fx.mtls_base;
    o.client_cert_data = cert;
    o.client_key_data = key;
    h = client(&o);
    expect_cn(h, "topo-test-client");
    topo_http_free(h);
    free(cert);
    free(key);

    server_stats before = server_get(NULL);
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    /* No certificate: refused. */
    o = base_opts();
    o.base_url = fx.mtls_base;
    o.max_retries = -1;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/whoami", NULL, &r, &err), TOPO_ECONNECT);
    assert_null(r.body);
    topo_http_free(h);
    /* A certificate from another CA: refused. */
    o.client_cert_file = fx.other_client_cert;
    o.client_key_file = fx.other_client_key;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/whoami", NULL, &r, &err), TOPO_ECONNECT);
    topo_http_free(h);
    /* The server counts a failed handshake after sending its alert: the
     * client may have its error first, so wait a little for the count. */
    json_int_t failures = 0;
    for (int i = 0; i < 200 && failures < 2; i++) {
        failures = server_get(NULL).handshake_failures - before.handshake_failures;
        if (failures < 2)
            topo_clock_sleep_ns(10000000);
    }
    assert_int_equal(failures, 2);

    /* A key file that does not exist. */
    o.client_cert_file = fx.client_cert;
    o.client_key_file = "/nonexistent/client.key";
    h = client(&o);
    assert_int_equal(call(h, "GET", "/whoami", NULL, &r, &err), TOPO_EINVALID);
    topo_http_free(h);
}

/* An encrypted client key that reaches the client unchecked (the kubeconfig
 * and exec checks refuse it earlier): the request fails as a TLS setup
 * error, no crash (libcurl's passphrase callback with no passphrase set
 * strlen()s NULL for a key blob) and no passphrase prompt on the terminal
 * (OpenSSL's default for a key file). */
static void test_http__encrypted_client_key_fails_cleanly(void **state)
{
    (void)state;
    char enc[PATH_MAX_LEN], pass_arg[] = "pass:topo-test";
    char openssl[] = "openssl", pkey[] = "pkey", in[] = "-in", out[] = "-out", aes[] = "-aes256",
         passout[] = "-passout";
    join(enc, fx.dir, "client-encrypted.key");
    char *argv[] = {openssl, pkey, in, fx.client_key, aes, passout, pass_arg, out, enc, NULL};
    pid_t pid;
    assert_int_equal(spawn(&pid, argv, -1, -1), 0);
    assert_int_equal(wait_exit(pid, 30), 0);
    char *key = strdup(read_text(enc));
    assert_non_null(strstr(key, "ENCRYPTED"));

    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    topo_http_opts o = base_opts();
    o.base_url = fx.mtls_base;
    o.max_retries = -1;
    o.client_cert_file = fx.client_cert;
    o.client_key_data = key;
    topo_http *h = client(&o);
    assert_int_equal(call(h, "GET", "/whoami", NULL, &r, &err), TOPO_EINVALID);
    assert_null(r.body);
    topo_http_free(h);

    o.client_key_data = NULL;
    o.client_key_file = enc;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/whoami", NULL, &r, &err), TOPO_EINVALID);
    assert_null(r.body);
    topo_http_free(h);
    free(key);
}

/* --- bearer tokens --------------------------------------------------------------- */

static void test_http__token_rotation_fails_no_request(void **state)
{
    (void)state;
    write_file(fx.token_file, "token-1\n");
    topo_http_opts o = base_opts();
    o.token_file = fx.token_file;
    o.token_reload_ms = 600000; /* only a 401 makes it re-read */
    topo_http *h = client(&o);
    server_stats before = server_get(NULL);

    char tok[32];
    for (int i = 0; i < 40; i++) {
        if (i > 0 && i % 10 == 0) {
            snprintf(tok, sizeof(tok), "token-%d\n", 1 + i / 10);
            write_file(fx.token_file, tok);
        }
        get_ok(h, "/auth/json");
    }
    topo_http_stats s = stats_of(h);
    assert_int_equal(s.token_reloads, 3);
    assert_int_equal(s.retries, 3);
    assert_int_equal(s.requests, 43);
    assert_int_equal(server_get(NULL).unauthorized - before.unauthorized, 3);

    /* A 401 that a re-read does not cure is returned, not looped on. */
    topo_http_response r = {0};
    write_file(fx.token_file, "token-for-nobody");
    topo_http_opts so = base_opts();
    so.token = "wrong";
    topo_http *fixed = client(&so);
    assert_int_equal(call(fixed, "GET", "/auth/json", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 401);
    assert_int_equal(topo_http_status_code(r.status), TOPO_EUNAUTHORIZED);
    assert_non_null(strstr(r.body, "Unauthorized"));
    topo_http_response_dispose(&r);
    assert_int_equal(stats_of(fixed).retries, 0);
    topo_http_free(fixed);
    topo_http_free(h);
}

static void test_http__token_periodic_reload(void **state)
{
    (void)state;
    /* The client's own copy of the token, so it can vanish while the server
     * still knows the valid one. */
    char mine[PATH_MAX_LEN];
    join(mine, fx.dir, "client-token");
    write_file(fx.token_file, "periodic-1");
    write_file(mine, "periodic-1");
    topo_http_opts o = base_opts();
    o.token_file = mine;
    o.token_reload_ms = 50;
    topo_http *h = client(&o);
    get_ok(h, "/auth/json");
    server_stats before = server_get(NULL);
    write_file(fx.token_file, "periodic-2");
    write_file(mine, "  periodic-2 \r\n"); /* surrounding blanks are trimmed */
    topo_clock_sleep_ns(120000000);
    get_ok(h, "/auth/json"); /* re-read before sending: no 401 */
    assert_int_equal(server_get(NULL).unauthorized, before.unauthorized);
    topo_http_stats s = stats_of(h);
    assert_int_equal(s.retries, 0);
    assert_int_equal(s.token_reloads, 1);

    /* The file vanishing (or turning bad) keeps the current token working. */
    assert_int_equal(unlink(mine), 0);
    topo_clock_sleep_ns(120000000);
    topo_log_set_level(TOPO_LOG_OFF);
    get_ok(h, "/auth/json");
    write_file(mine, "bad token");
    topo_clock_sleep_ns(120000000);
    get_ok(h, "/auth/json");
    topo_log_set_level(TOPO_LOG_WARN);
    assert_int_equal(stats_of(h).token_reloads, 1);
    assert_int_equal(server_get(NULL).unauthorized, before.unauthorized);
    topo_http_free(h);
}

static void test_http__token_options(void **state)
{
    (void)state;
    topo_http *h = NULL;
    topo_err err = TOPO_ERR_INIT;
    char missing[PATH_MAX_LEN];
    join(missing, fx.dir, "no-such-token");

    topo_http_opts o = base_opts();
    o.token_file = missing;
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_ENOTFOUND);
    assert_null(h);
    assert_non_null(strstr(err.text, "no-such-token"));

    char bad[PATH_MAX_LEN];
    join(bad, fx.dir, "bad-token");
    write_file(bad, "two words\n");
    o.token_file = bad;
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    write_file(bad, "\n\n");
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);

    o = base_opts();
    o.token = "inject\r\nX-Evil: 1";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);

    /* An unreadable file with a fixed token: the fixed one is used. */
    o = base_opts();
    o.token_file = missing;
    o.token = "fixed-token";
    topo_log_set_level(TOPO_LOG_OFF);
    h = client(&o);
    topo_log_set_level(TOPO_LOG_WARN);
    topo_http_response r = {0};
    assert_int_equal(call(h, "GET", "/echo", NULL, &r, NULL), 0);
    assert_non_null(strstr(r.body, "\"authorization\": \"Bearer fixed-token\""));
    topo_http_response_dispose(&r);
    topo_http_free(h);
}

/* --- retries --------------------------------------------------------------------- */

static void test_http__429_waits_retry_after(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.backoff_max_ms = 5000; /* Retry-After is capped at it */
    topo_http *h = client(&o);
    double t0 = now_s();
    get_ok(h, "/status/429?n=1&retry_after=1&key=ra-get");
    double took = now_s() - t0;
    assert_true(took >= 0.95);
    assert_true(took < 5);
    assert_int_equal(stats_of(h).retries, 1);
    assert_int_equal(server_get("ra-get").key_count, 2);

    /* 429 is retried for POST too (nothing was done); without Retry-After
     * the backoff applies. */
    topo_http_response r = {0};
    assert_int_equal(call(h, "POST", "/status/429?n=2&key=ra-post", "{}", &r, NULL), 0);
    assert_int_equal(r.status, 200);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("ra-post").key_count, 3);

    /* Retry-After is capped at backoff_max_ms. */
    topo_http_free(h);
    o = base_opts();
    h = client(&o);
    t0 = now_s();
    get_ok(h, "/status/429?n=1&retry_after=3600&key=ra-cap");
    assert_true(now_s() - t0 < 3);

    /* Retries run out: the last 429 comes back for the caller to map. */
    assert_int_equal(call(h, "GET", "/status/429?key=ra-always", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 429);
    assert_int_equal(topo_http_status_code(r.status), TOPO_ETHROTTLED);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("ra-always").key_count, 4);
    topo_http_free(h);
}

static void test_http__5xx_retried_for_idempotent_only(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    topo_http *h = client(&o);
    topo_http_response r = {0};

    get_ok(h, "/status/500?n=2&key=e-get");
    assert_int_equal(server_get("e-get").key_count, 3);
    assert_int_equal(stats_of(h).retries, 2);

    assert_int_equal(call(h, "PUT", "/status/503?n=1&key=e-put", "{}", &r, NULL), 0);
    assert_int_equal(r.status, 200);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-put").key_count, 2);

    assert_int_equal(call(h, "POST", "/status/500?n=2&key=e-post", "{}", &r, NULL), 0);
    assert_int_equal(r.status, 500);
    assert_int_equal(topo_http_status_code(r.status), TOPO_ESERVER);
    assert_non_null(strstr(r.body, "InternalError"));
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-post").key_count, 1);

    assert_int_equal(call(h, "PATCH", "/status/502?n=2&key=e-patch", "{}", &r, NULL), 0);
    assert_int_equal(r.status, 502);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-patch").key_count, 1);

    /* A PATCH that guards itself (resend_safe): retried as a PUT is, the
     * 503's Retry-After waited for. */
    topo_http_request guarded = {.method = "PATCH",
                                 .path = "/status/502?n=1&key=e-guarded",
                                 .content_type = "application/json-patch+json",
                                 .body = "[]",
                                 .body_len = 2,
                                 .resend_safe = 1};
    assert_int_equal(topo_http_do(h, &guarded, &r, NULL), 0);
    assert_int_equal(r.status, 200);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-guarded").key_count, 2);
    guarded.path = "/status/503?n=1&retry_after=1&key=e-guarded-ra";
    topo_http_opts slow = base_opts();
    slow.backoff_max_ms = 5000; /* Retry-After is capped at it */
    topo_http *hs = client(&slow);
    double t0 = now_s();
    assert_int_equal(topo_http_do(hs, &guarded, &r, NULL), 0);
    topo_http_free(hs);
    assert_int_equal(r.status, 200);
    topo_http_response_dispose(&r);
    assert_true(now_s() - t0 >= 0.95);
    assert_int_equal(server_get("e-guarded-ra").key_count, 2);
    /* ... but not a 501. */
    guarded.path = "/status/501?n=1&key=e-guarded-501";
    assert_int_equal(topo_http_do(h, &guarded, &r, NULL), 0);
    assert_int_equal(r.status, 501);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-guarded-501").key_count, 1);

    /* 501 will not change. */
    assert_int_equal(call(h, "GET", "/status/501?n=1&key=e-501", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 501);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-501").key_count, 1);

    /* Retries run out: the last response (status > 0) is returned. */
    o.max_retries = 2;
    topo_http *h2 = client(&o);
    assert_int_equal(call(h2, "GET", "/status/503?key=e-always", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 503);
    topo_http_response_dispose(&r);
    assert_int_equal(server_get("e-always").key_count, 3);
    assert_int_equal(stats_of(h2).retries, 2);
    topo_http_free(h2);
    topo_http_free(h);
}

static void test_http__dropped_connection(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    topo_http *h = client(&o);
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(get_ok(h, "/drop?n=2&key=d-get"), strlen("{\"ok\": true, \"hits\": 3}\n"));
    assert_int_equal(server_get("d-get").key_count, 3);

    assert_int_equal(call(h, "DELETE", "/drop?n=1&key=d-delete", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 200);
    topo_http_response_dispose(&r);

    /* POST may have been acted on: not resent. */
    uint64_t retries = stats_of(h).retries;
    assert_int_equal(call(h, "POST", "/drop?n=1&key=d-post", "{}", &r, &err), TOPO_ECONNECT);
    assert_null(r.body);
    assert_int_equal(server_get("d-post").key_count, 1);
    assert_int_equal(stats_of(h).retries, retries);

    /* Dropped every time: the code after the retries. */
    assert_int_equal(call(h, "GET", "/drop?key=d-always", NULL, &r, &err), TOPO_ECONNECT);
    assert_non_null(strstr(err.text, "(4 attempts)"));
    assert_int_equal(server_get("d-always").key_count, 4);
    topo_http_free(h);
}

static void test_http__connection_refused(void **state)
{
    (void)state;
    /* A bound port nobody listens on: connect() gets RST. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t alen = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    char url[64];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", ntohs(a.sin_port));

    topo_http_opts o = base_opts();
    o.base_url = url;
    o.max_retries = 2;
    topo_http *h = client(&o);
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    topo_log_set_level(TOPO_LOG_OFF);
    assert_int_equal(call(h, "GET", "/json", NULL, &r, &err), TOPO_ECONNECT);
    assert_int_equal(stats_of(h).retries, 2);
    assert_non_null(strstr(err.text, "(3 attempts)"));
    /* Nothing was sent: safe to retry a POST too. */
    assert_int_equal(call(h, "POST", "/json", "{}", &r, &err), TOPO_ECONNECT);
    assert_int_equal(stats_of(h).retries, 4);
    topo_log_set_level(TOPO_LOG_WARN);
    topo_http_free(h);
    close(fd);
}

/* --- limits and timeouts --------------------------------------------------------- */

static int on_line_count(const char *line, size_t len, void *payload)
{
    (void)line;
    (void)len;
    (void)payload;
    return 0;
}

static void test_http__body_limit(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.max_body = 1u << 20;
    topo_http *h = client(&o);
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(get_ok(h, "/huge?bytes=1048576"), 1u << 20);
    assert_int_equal(get_ok(h, "/huge?bytes=1048576&chunked=1"), 1u << 20);
    /* Content-Length over the limit: refused before reading. */
    assert_int_equal(call(h, "GET", "/huge?bytes=1048577", NULL, &r, &err), TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "1048576"));
    assert_null(r.body);
    /* Chunked: stopped when the limit is crossed. */
    assert_int_equal(call(h, "GET", "/huge?bytes=4194304&chunked=1", NULL, &r, &err),
                     TOPO_ELIMIT);
    assert_int_equal(stats_of(h).retries, 0);
    /* Compressed bodies are decoded and the limit counts decoded bytes: 8 MiB
     * of 'x' arrive as 8 KiB of gzip. */
    assert_int_equal(get_ok(h, "/gzip?bytes=100000"), 100000);
    assert_int_equal(call(h, "GET", "/gzip?bytes=8388608", NULL, &r, &err), TOPO_ELIMIT);
    /* The client works on afterwards. */
    get_ok(h, "/json");
    topo_http_free(h);

    /* Absurd limits are clamped, not overflowed. */
    o.max_body = SIZE_MAX;
    h = client(&o);
    assert_int_equal(get_ok(h, "/huge?bytes=100000&chunked=1"), 100000);
    topo_http_request req = {"GET", "/stream?lines=3", NULL, NULL, 0, 0, NULL, NULL, 0};
    long status = 0;
    assert_int_equal(topo_http_stream(h, &req, SIZE_MAX, on_line_count, NULL, &status, &err), 0);
    assert_int_equal(status, 200);
    topo_http_free(h);
}

/* --- threads --------------------------------------------------------------------- */

typedef struct worker {
    pthread_t thread;
    int ok;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    topo_http_opts o = base_opts();
    topo_http *h = NULL;
    if (topo_http_create(&h, &o, NULL) != 0)
        return NULL;
    for (int i = 0; i < 50; i++) {
        topo_http_response r = {0};
        if (call(h, "GET", "/json", NULL, &r, NULL) == 0 && r.status == 200)
            w->ok++;
        topo_http_response_dispose(&r);
    }
    topo_http_free(h);
    return NULL;
}

/* One topo_http per thread, several threads at once. */
static void test_http__one_client_per_thread(void **state)
{
    (void)state;
    worker w[4];
    memset(w, 0, sizeof(w));
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(w[i].thread, NULL), 0);
        assert_int_equal(w[i].ok, 50);
    }
}

static void test_http__timeouts(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.max_retries = 1;
    topo_http *h = client(&o);
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;

    topo_log_set_level(TOPO_LOG_OFF);
    topo_http_request req = {
        "GET", "/slow?bytes=100&delay_ms=100", NULL, NULL, 0, 300, NULL, NULL, 0};
    double t0 = now_s();
    assert_int_equal(topo_http_do(h, &req, &r, &err), TOPO_ETIMEOUT);
    double took = now_s() - t0;
    assert_true(took >= 0.55);
    assert_true(took < 4);
    assert_int_equal(stats_of(h).retries, 1);
    assert_null(r.body);

    /* POST: not resent after a timeout (the server may have acted). */
    topo_http_request post = {
        "POST", "/slow?bytes=100&delay_ms=100", "application/json", "{}", 2, 300, NULL, NULL, 0};
    assert_int_equal(topo_http_do(h, &post, &r, &err), TOPO_ETIMEOUT);
    assert_int_equal(stats_of(h).retries, 1);
    topo_log_set_level(TOPO_LOG_WARN);

    /* The client's timeout applies when the request sets none. */
    topo_http_free(h);
    o.timeout_ms = 300;
    o.max_retries = -1;
    h = client(&o);
    assert_int_equal(call(h, "GET", "/slow?bytes=100&delay_ms=100", NULL, &r, &err),
                     TOPO_ETIMEOUT);
    topo_http_free(h);
}

/* --- methods, headers, bad requests ---------------------------------------------- */

static json_t *echo(topo_http *h, const topo_http_request *req)
{
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_http_do(h, req, &r, &err);
    if (rc != 0)
        fail_msg("%s %s: %s", req->method, req->path, err.text);
    assert_int_equal(r.status, 200);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    assert_non_null(j);
    topo_http_response_dispose(&r);
    return j;
}

static const char *echo_header(json_t *j, const char *name)
{
    return json_string_value(json_object_get(json_object_get(j, "headers"), name));
}

static void test_http__methods_and_headers(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.user_agent = "topo-test/1";
    o.token = "abc.def";
    topo_http *h = client(&o);

    static const char patch[] = "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}";
    static const struct {
        const char *method, *content_type, *body;
    } cases[] = {
        {"GET", NULL, NULL},
        {"DELETE", NULL, NULL},
        {"POST", "application/json", "{\"kind\":\"Lease\"}"},
        {"POST", NULL, NULL},
        {"PUT", "application/json", "{}"},
        {"PATCH", "application/merge-patch+json", patch},
        {"PATCH", "application/apply-patch+yaml", "a: b\n"},
        {"DELETE", "application/json", "{\"propagationPolicy\":\"Background\"}"},
        {"GET", NULL, NULL}, /* after bodies: a plain GET again */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *body = cases[i].body;
        topo_http_request req = {cases[i].method,
                                 "/echo?x=1",
                                 cases[i].content_type,
                                 body,
                                 body != NULL ? strlen(body) : 0,
                                 0,
                                 NULL,
                                 NULL,
                                 0};
        json_t *j = echo(h, &req);
        assert_string_equal(json_string_value(json_object_get(j, "method")), cases[i].method);
        assert_string_equal(json_string_value(json_object_get(j, "path")), "/echo?x=1");
        assert_string_equal(json_string_value(json_object_get(j, "body")),
                            body != NULL ? body : "");
        if (cases[i].content_type != NULL)
            assert_string_equal(echo_header(j, "content-type"), cases[i].content_type);
        else
            assert_null(echo_header(j, "content-type"));
        assert_string_equal(echo_header(j, "accept"), "application/json");
        assert_string_equal(echo_header(j, "user-agent"), "topo-test/1");
        assert_string_equal(echo_header(j, "authorization"), "Bearer abc.def");
        assert_null(echo_header(j, "expect"));
        assert_non_null(echo_header(j, "accept-encoding"));
        json_decref(j);
    }
    /* A request's own Accept (the API server's metadata-only answers). */
    topo_http_request meta = {
        .method = "GET",
        .path = "/echo",
        .accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"};
    json_t *mj = echo(h, &meta);
    assert_string_equal(echo_header(mj, "accept"),
                        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
    json_decref(mj);

    /* HEAD: a status, no body. */
    topo_http_response r = {0};
    assert_int_equal(call(h, "HEAD", "/json", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    assert_string_equal(r.body, "");
    topo_http_response_dispose(&r);
    /* 404 is a response, not a failure. */
    assert_int_equal(call(h, "GET", "/nowhere", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 404);
    assert_int_equal(topo_http_status_code(r.status), TOPO_ENOTFOUND);
    topo_http_response_dispose(&r);

    /* Requests refused before anything is sent. */
    static const topo_http_request bad[] = {
        {"get", "/json", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"", "/json", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"GET\r\nX", "/json", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"GET", "json", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"GET", "/a b", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"GET", "/a\r\nHost: x", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"POST", "/json", NULL, NULL, 3, 0, NULL, NULL, 0},
        {"POST", "/json", "text/plain\r\nX-Evil: 1", "{}", 2, 0, NULL, NULL, 0},
        {"GET", "/json", NULL, NULL, 0, 0, NULL, "application/json\r\nX-Evil: 1", 0},
        {"GET", "/json", NULL, NULL, 0, 0, NULL, "", 0},
        {"GET", "/json", NULL, NULL, 0, -1, NULL, NULL, 0},
        {NULL, "/json", NULL, NULL, 0, 0, NULL, NULL, 0},
        {"GET", NULL, NULL, NULL, 0, 0, NULL, NULL, 0},
    };
    uint64_t sent = stats_of(h).requests;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(topo_http_do(h, &bad[i], &r, &err), TOPO_EINVALID);
        assert_int_equal(err.code, TOPO_EINVALID);
        assert_null(r.body);
    }
    assert_int_equal(stats_of(h).requests, sent);

    /* A URL over the limit. */
    size_t n = 20000;
    char *longpath = malloc(n + 1);
    assert_non_null(longpath);
    longpath[0] = '/';
    memset(longpath + 1, 'a', n - 1);
    longpath[n] = '\0';
    assert_int_equal(call(h, "GET", longpath, NULL, &r, NULL), TOPO_ELIMIT);
    free(longpath);
    topo_http_free(h);
}

static void test_http__create_and_null_arguments(void **state)
{
    (void)state;
    topo_http *h = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_http_opts o = base_opts();

    assert_int_equal(topo_http_create(&h, NULL, &err), TOPO_EINVALID);
    assert_int_equal(topo_http_create(NULL, &o, NULL), TOPO_EINVALID);
    o.base_url = "ftp://127.0.0.1";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    o.base_url = NULL;
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    o.base_url = "https://127.0.0.1\r\n";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    o = base_opts();
    o.user_agent = "a\nb";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    assert_null(h);

    topo_http_free(NULL);
    topo_http_response_dispose(NULL);
    topo_http_stats s;
    memset(&s, 0xff, sizeof(s));
    topo_http_get_stats(NULL, &s);
    assert_int_equal(s.requests, 0);
    topo_http_get_stats(NULL, NULL);

    topo_http_response r = {0};
    topo_http_request req = {"GET", "/json", NULL, NULL, 0, 0, NULL, NULL, 0};
    assert_int_equal(topo_http_do(NULL, &req, &r, &err), TOPO_EINVALID);
    o = base_opts();
    h = client(&o);
    assert_int_equal(topo_http_do(h, NULL, &r, &err), TOPO_EINVALID);
    assert_int_equal(topo_http_do(h, &req, NULL, &err), TOPO_EINVALID);
    assert_int_equal(topo_http_stream(h, &req, 0, NULL, NULL, NULL, &err), TOPO_EINVALID);
    topo_http_free(h);
}

/* --- streaming ------------------------------------------------------------------- */

typedef struct lines {
    int count;
    int stop_at;       /* return 42 at this count; 0: never */
    int in_order;      /* every seq was count-1 */
    int saw_cr;        /* a line kept its "\r" */
    int not_terminated;
    size_t longest;
    char first[512];
    char last[512];
} lines;

static int on_line(const char *line, size_t len, void *payload)
{
    lines *l = payload;
    if (line[len] != '\0' || strlen(line) != len)
        l->not_terminated = 1;
    if (memchr(line, '\r', len) != NULL)
        l->saw_cr = 1;
    if (len > l->longest)
        l->longest = len;
    json_t *j = json_loadb(line, len, 0, NULL);
    json_t *seq = json_object_get(json_object_get(j, "object"), "seq");
    if (j == NULL || !json_is_integer(seq) || json_integer_value(seq) != l->count)
        l->in_order = 0;
    json_decref(j);
    if (l->count == 0)
        snprintf(l->first, sizeof(l->first), "%.*s", (int)len, line);
    snprintf(l->last, sizeof(l->last), "%.*s", (int)len, line);
    l->count++;
    return l->stop_at != 0 && l->count == l->stop_at ? 42 : 0;
}

/* Streams GET path into *l as it is (counts continue). */
static int stream_more(topo_http *h, const char *path, long timeout_ms, size_t max_line, lines *l,
                       long *status, topo_err *err)
{
    topo_http_request req = {"GET", path, NULL, NULL, 0, timeout_ms, NULL, NULL, 0};
    return topo_http_stream(h, &req, max_line, on_line, l, status, err);
}

/* Streams GET path into a cleared *l. */
static int stream(topo_http *h, const char *path, long timeout_ms, size_t max_line, lines *l,
                  long *status, topo_err *err)
{
    memset(l, 0, sizeof(*l));
    l->in_order = 1;
    return stream_more(h, path, timeout_ms, max_line, l, status, err);
}

static void test_http__stream_lines(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    topo_http *h = client(&o);
    lines l;
    long status = -1;
    topo_err err = TOPO_ERR_INIT;

    /* 2000 events of ~1 KiB (2 MiB) in chunks of 7 lines cut in two, read
     * with a 2 KiB line limit: delivered line by line, in order. */
    int rc = stream(h, "/stream?lines=2000&batch=7&split=1&pad=1000", 0, 2048, &l, &status, &err);
    if (rc != 0)
        fail_msg("stream: %s", err.text);
    assert_int_equal(status, 200);
    assert_int_equal(l.count, 2000);
    assert_true(l.in_order);
    assert_false(l.not_terminated);
    assert_true(l.longest > 1000 && l.longest < 2048);

    /* CRLF line ends and a last line without one. */
    assert_int_equal(stream(h, "/stream?lines=5&crlf=1&no_final_newline=1", 0, 4096, &l, &status,
                            &err),
                     0);
    assert_int_equal(l.count, 5);
    assert_true(l.in_order);
    assert_false(l.saw_cr);

    /* Stopping early returns fn's value and ends the transfer at once. */
    double t0 = now_s();
    memset(&l, 0, sizeof(l));
    l.in_order = 1;
    l.stop_at = 10;
    assert_int_equal(stream_more(h, "/stream?lines=1000&delay_ms=5", 0, 4096, &l, &status, &err),
                     42);
    assert_int_equal(l.count, 10);
    assert_true(now_s() - t0 < 2.5);

    /* A line over max_line. */
    assert_int_equal(stream(h, "/stream?lines=5&long_line=2&long_bytes=100000", 0, 65536, &l,
                            &status, &err),
                     TOPO_ELIMIT);
    assert_int_equal(l.count, 2);
    assert_non_null(strstr(err.text, "65536"));

    /* A non-2xx status: its body as one line. */
    assert_int_equal(stream(h, "/status/410?key=s-410", 0, 4096, &l, &status, &err), 0);
    assert_int_equal(status, 410);
    assert_int_equal(l.count, 1);
    assert_non_null(strstr(l.first, "\"code\": 410"));
    assert_null(strchr(l.first, '\n'));

    /* The client is still usable for plain requests. */
    get_ok(h, "/json");
    topo_http_free(h);
}

static void test_http__stream_timeouts(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.stream_idle_ms = 1000;
    topo_http *h = client(&o);
    lines l;
    long status = -1;
    topo_err err = TOPO_ERR_INIT;

    /* One event, then silence: the connection is presumed dead. */
    double t0 = now_s();
    assert_int_equal(stream(h, "/stream?lines=1&hang_ms=20000", 0, 4096, &l, &status, &err),
                     TOPO_ETIMEOUT);
    double took = now_s() - t0;
    assert_int_equal(l.count, 1);
    assert_int_equal(status, 200);
    assert_true(took >= 0.9);
    assert_true(took < 5);
    assert_non_null(strstr(err.text, "no data"));

    /* req->timeout_ms bounds the whole stream. */
    t0 = now_s();
    assert_int_equal(stream(h, "/stream?lines=100&delay_ms=50", 300, 4096, &l, &status, &err),
                     TOPO_ETIMEOUT);
    assert_true(now_s() - t0 < 3);
    assert_true(l.count >= 1 && l.count < 100);
    assert_true(l.in_order);

    /* A quiet but alive stream (an event every 400 ms, longer than the idle
     * limit in all) is not idle. */
    assert_int_equal(stream(h, "/stream?lines=3&delay_ms=400", 0, 4096, &l, &status, &err), 0);
    assert_int_equal(l.count, 3);
    topo_http_free(h);
}

static void test_http__stream_token_rotation(void **state)
{
    (void)state;
    write_file(fx.token_file, "stream-1");
    topo_http_opts o = base_opts();
    o.token_file = fx.token_file;
    topo_http *h = client(&o);
    lines l;
    long status = -1;
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(stream(h, "/auth/stream?lines=3", 0, 4096, &l, &status, &err), 0);
    assert_int_equal(l.count, 3);
    write_file(fx.token_file, "stream-2");
    assert_int_equal(stream(h, "/auth/stream?lines=3", 0, 4096, &l, &status, &err), 0);
    assert_int_equal(status, 200);
    assert_int_equal(l.count, 3);
    assert_true(l.in_order);
    assert_int_equal(stats_of(h).token_reloads, 1);
    topo_http_free(h);
}

/* --- rate limiting and connection reuse ------------------------------------------ */

static void test_http__rate_limiter(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.qps = 20;
    o.burst = 5;
    topo_http *h = client(&o);
    double t0 = now_s();
    for (int i = 0; i < 25; i++)
        get_ok(h, "/json");
    double took = now_s() - t0;
    topo_http_stats s = stats_of(h);
    print_message("rate limiter: 25 requests at qps 20 / burst 5 took %.3f s, %llu ms "
                  "throttled\n",
                  took, (unsigned long long)s.throttled_ms);
    assert_true(took >= 0.95);
    assert_true(took < 5);
    assert_true(s.throttled_ms >= 500); /* the rest of the second went into the requests */
    topo_http_free(h);
}

static void test_http__keepalive_reuses_one_connection(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    topo_http *h = client(&o);
    server_reset();
    const int n = 300;
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        get_ok(h, "/json");
    double took = now_s() - t0;
    server_stats s = server_get(NULL);
    assert_int_equal(s.requests, n);
    assert_int_equal(s.connections, 1);
    topo_http_stats cs = stats_of(h);
    assert_int_equal(cs.connects, 1);
    assert_int_equal(cs.requests, (uint64_t)n);
    print_message("keep-alive: %d sequential GETs over 1 TLS connection: %.0f requests/s "
                  "(python server)\n",
                  n, n / took);

    /* Fresh connections for comparison: one topo_http per request. */
    const int m = 30;
    t0 = now_s();
    for (int i = 0; i < m; i++) {
        topo_http *once = client(&o);
        get_ok(once, "/json");
        topo_http_free(once);
    }
    took = now_s() - t0;
    print_message("no reuse: %d GETs with a new client (TCP + TLS handshake) each: %.0f "
                  "requests/s\n",
                  m, m / took);
    topo_http_free(h);
}

/* --- the pure parts -------------------------------------------------------------- */

static void test_http__status_codes(void **state)
{
    (void)state;
    static const struct {
        long status;
        int code;
    } cases[] = {
        {200, 0},
        {201, 0},
        {204, 0},
        {400, TOPO_EINVALID},
        {401, TOPO_EUNAUTHORIZED},
        {403, TOPO_EFORBIDDEN},
        {404, TOPO_ENOTFOUND},
        {408, TOPO_ETIMEOUT},
        {409, TOPO_ECONFLICT},
        {410, TOPO_EGONE},
        {413, TOPO_ELIMIT},
        {422, TOPO_EINVALID},
        {429, TOPO_ETHROTTLED},
        {500, TOPO_ESERVER},
        {503, TOPO_ESERVER},
        {504, TOPO_ETIMEOUT},
        {301, TOPO_EGENERIC},
        {0, TOPO_EGENERIC},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(topo_http_status_code(cases[i].status), cases[i].code);

    assert_true(net_http_method_idempotent("GET"));
    assert_true(net_http_method_idempotent("PUT"));
    assert_true(net_http_method_idempotent("DELETE"));
    assert_true(net_http_method_idempotent("HEAD"));
    assert_false(net_http_method_idempotent("POST"));
    assert_false(net_http_method_idempotent("PATCH"));
    assert_true(net_http_status_retriable(429, 0));
    assert_true(net_http_status_retriable(503, 1));
    assert_false(net_http_status_retriable(503, 0));
    assert_false(net_http_status_retriable(501, 1));
    assert_false(net_http_status_retriable(409, 1));
}

/* The delays themselves: test/util/test_backoff.c. */
static void test_http__retry_after(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        long ms;
    } ra[] = {
        {"1", 1000},
        {" 2 ", 2000},
        {"0", 0},
        {"120", 30000},
        {"99999999999999999999999", 30000},
        {"Wed, 21 Oct 2015 07:28:00 GMT", -1},
        {"", -1},
        {"1.5", -1},
        {"-1", -1},
        {"3x", -1},
    };
    for (size_t i = 0; i < sizeof(ra) / sizeof(ra[0]); i++)
        assert_int_equal(net_http_retry_after_ms(ra[i].value, 30000), ra[i].ms);
    assert_int_equal(net_http_retry_after_ms(NULL, 30000), -1);
}

static void test_http__token_bucket(void **state)
{
    (void)state;
    topo_ratelimit rl;
    const uint64_t ms = 1000000u;
    uint64_t t = 1000 * ms;

    net_ratelimit_init(&rl, 10, 5, t);
    for (int i = 0; i < 5; i++)
        assert_int_equal(net_ratelimit_reserve(&rl, t), 0);
    uint64_t w = net_ratelimit_reserve(&rl, t);
    assert_true(w >= 99 * ms && w <= 101 * ms);
    /* The next caller queues behind the first. */
    w = net_ratelimit_reserve(&rl, t);
    assert_true(w >= 199 * ms && w <= 201 * ms);
    /* A long pause refills to burst, not beyond. */
    t += 10000 * ms;
    for (int i = 0; i < 5; i++)
        assert_int_equal(net_ratelimit_reserve(&rl, t), 0);
    assert_true(net_ratelimit_reserve(&rl, t) > 0);
    /* Steady state: one token per 1/qps. */
    t += 10000 * ms;
    net_ratelimit_init(&rl, 10, 1, t);
    assert_int_equal(net_ratelimit_reserve(&rl, t), 0);
    t += 100 * ms;
    assert_int_equal(net_ratelimit_reserve(&rl, t), 0);
    t += 50 * ms;
    w = net_ratelimit_reserve(&rl, t);
    assert_true(w >= 49 * ms && w <= 51 * ms);

    /* qps <= 0: unlimited; burst below 1 counts as 1. */
    net_ratelimit_init(&rl, 0, 0, t);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(net_ratelimit_reserve(&rl, t), 0);
    net_ratelimit_init(&rl, 1, 0.2, t);
    assert_int_equal(net_ratelimit_reserve(&rl, t), 0);
    assert_true(net_ratelimit_reserve(&rl, t) > 0);
}

static void test_http__token_check(void **state)
{
    (void)state;
    assert_int_equal(net_http_token_check("eyJhbGciOi.J9.x-_~+/=", 21, NULL), 0);
    assert_int_equal(net_http_token_check("", 0, NULL), TOPO_EINVALID);
    assert_int_equal(net_http_token_check("a b", 3, NULL), TOPO_EINVALID);
    assert_int_equal(net_http_token_check("a\nb", 3, NULL), TOPO_EINVALID);
    assert_int_equal(net_http_token_check("a\x7f", 2, NULL), TOPO_EINVALID);
    assert_int_equal(net_http_token_check("\xc3\xa9", 2, NULL), TOPO_EINVALID);
    net_http_token_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http__status_codes),
        cmocka_unit_test(test_http__retry_after),
        cmocka_unit_test(test_http__token_bucket),
        cmocka_unit_test(test_http__token_check),
        cmocka_unit_test(test_http__create_and_null_arguments),
        cmocka_unit_test(test_http__tls_verify_with_ca_file_and_data),
        cmocka_unit_test(test_http__tls_wrong_ca_fails_clearly),
        cmocka_unit_test(test_http__client_certificate),
        cmocka_unit_test(test_http__encrypted_client_key_fails_cleanly),
        cmocka_unit_test(test_http__token_rotation_fails_no_request),
        cmocka_unit_test(test_http__token_periodic_reload),
        cmocka_unit_test(test_http__token_options),
        cmocka_unit_test(test_http__429_waits_retry_after),
        cmocka_unit_test(test_http__5xx_retried_for_idempotent_only),
        cmocka_unit_test(test_http__dropped_connection),
        cmocka_unit_test(test_http__connection_refused),
        cmocka_unit_test(test_http__body_limit),
        cmocka_unit_test(test_http__timeouts),
        cmocka_unit_test(test_http__one_client_per_thread),
        cmocka_unit_test(test_http__methods_and_headers),
        cmocka_unit_test(test_http__stream_lines),
        cmocka_unit_test(test_http__stream_timeouts),
        cmocka_unit_test(test_http__stream_token_rotation),
        cmocka_unit_test(test_http__rate_limiter),
        cmocka_unit_test(test_http__keepalive_reuses_one_connection),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
