/* The HTTP client over libcurl: one easy handle per topo_http (connection and
 * TLS session reuse), bounded bodies, retries with jittered backoff, a token
 * bucket, credentials from rotating files (http_auth.c), and line-by-line
 * streaming.
 * The only file of topo that includes <curl/curl.h>. */
#define _POSIX_C_SOURCE 200809L

#include "topo/str.h"
#include "topo/http.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "http_internal.h"
#include "topo/buf.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/version.h"

/* CURLOPT_CAINFO_BLOB (7.77), CURLOPT_PROTOCOLS_STR (7.85), curl_easy_header
 * (7.84) and CURLOPT_CA_CACHE_TIMEOUT (7.87): Debian 12 ships 7.88. */
#if LIBCURL_VERSION_NUM < 0x075700
#error "topo needs libcurl 7.87 or newer"
#endif

#define DEFAULT_USER_AGENT "topo/" TOPO_VERSION

/* A CA file is re-read for new connections at least this often (ca.crt of a
 * service account can rotate too). */
#define CA_CACHE_SECONDS 60L
/* TCP keepalive probes notice a peer that vanished without a FIN/RST. */
#define KEEPALIVE_IDLE_SECONDS 30L
#define KEEPALIVE_INTERVAL_SECONDS 10L
/* Larger limits are taken as this (buffer arithmetic stays far from SIZE_MAX). */
#define LIMIT_CLAMP (SIZE_MAX / 4)
/* First allocation of a response body or stream line. */
#define BODY_INITIAL_CAP (16u * 1024u)
#define LINE_INITIAL_CAP (4u * 1024u)
/* Client-side throttling this long or longer is logged. */
#define THROTTLE_LOG_NS 1000000000u

struct topo_http {
    CURL *curl;
    char *base_url; /* without a trailing slash */
    size_t base_len;
    char *url; /* TOPO_MAX_HTTP_URL + 1 bytes: base_url + path of the current request */
    topo_http_auth auth; /* token or Basic, files re-read (http_auth.c) */
    long timeout_ms;
    long stream_idle_ms;
    size_t max_body;
    int max_retries;
    long backoff_base_ms;
    long backoff_max_ms;
    topo_ratelimit limiter;
    uint64_t rng;
    uint64_t throttled_ns;
    topo_http_stats stats;
    struct curl_slist *connect_to; /* CURLOPT_CONNECT_TO, or NULL */
    char errbuf[CURL_ERROR_SIZE];
};

/* --- libcurl global state --------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* --- small helpers ---------------------------------------------------------- */

/* Non-zero when s has a byte that would break or extend a header line. */
static int has_control(const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return 1;
    }
    return 0;
}

static int setopt_failed(topo_err *err, const char *name, CURLcode rc)
{
    return topo_err_set(err, rc == CURLE_OUT_OF_MEMORY ? TOPO_ENOMEM : TOPO_EUNSUPPORTED,
                        "http: libcurl refused %s: %s", name, curl_easy_strerror(rc));
}

/* curl_easy_setopt with its result checked; needs `error`, `err` and a
 * `cleanup` label in scope. */
#define SETOPT(handle, option, value)                                  \
    do {                                                               \
        CURLcode setopt_rc_ = curl_easy_setopt((handle), option, value); \
        if (setopt_rc_ != CURLE_OK) {                                  \
            error = setopt_failed(err, #option, setopt_rc_);           \
            goto cleanup;                                              \
        }                                                              \
    } while (0)

static int set_pem_blob(CURL *curl, CURLoption option, const char *name, const char *pem,
                        topo_err *err)
{
    /* CURL_BLOB_COPY: libcurl keeps its own copy. */
    struct curl_blob blob;
    blob.data = (void *)(uintptr_t)pem;
    blob.len = strlen(pem);
    blob.flags = CURL_BLOB_COPY;
    CURLcode rc = curl_easy_setopt(curl, option, &blob);
    return rc == CURLE_OK ? 0 : setopt_failed(err, name, rc);
}

/* The same, or the option cleared when pem is NULL. */
static int set_pem_blob_or_none(CURL *curl, CURLoption option, const char *name, const char *pem,
                                topo_err *err)
{
    if (pem != NULL)
        return set_pem_blob(curl, option, name, pem, err);
    CURLcode rc = curl_easy_setopt(curl, option, (struct curl_blob *)NULL);
    return rc == CURLE_OK ? 0 : setopt_failed(err, name, rc);
}

static void headers_free(struct curl_slist *list)
{
    /* The Authorization line carries the token: no copy left in freed memory. */
    for (struct curl_slist *l = list; l != NULL; l = l->next) {
        if (l->data != NULL)
            net_http_wipe(l->data, strlen(l->data));
    }
    curl_slist_free_all(list);
}

static int header_addf(struct curl_slist **list, const char *fmt, ...) TOPO_PRINTF(2, 3);

static int header_addf(struct curl_slist **list, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TOPO_EINVALID;
    char *line = malloc((size_t)n + 1);
    if (line == NULL)
        return TOPO_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(line, (size_t)n + 1, fmt, ap);
    va_end(ap);
    struct curl_slist *grown = curl_slist_append(*list, line);
    net_http_wipe(line, (size_t)n);
    free(line);
    if (grown == NULL)
        return TOPO_ENOMEM;
    *list = grown;
    return 0;
}

static int configure_tls(topo_http *h, const topo_http_opts *opts, topo_err *err)
{
    int error = 0;
    CURL *c = h->curl;

    SETOPT(c, CURLOPT_SSL_VERIFYPEER, opts->insecure_skip_verify ? 0L : 1L);
    SETOPT(c, CURLOPT_SSL_VERIFYHOST, opts->insecure_skip_verify ? 0L : 2L);
    if (opts->ca_data != NULL || opts->ca_file != NULL) {
        /* Trust only the given CA: drop the build's default CA directory. */
        SETOPT(c, CURLOPT_CAPATH, (char *)NULL);
        if (opts->ca_data != NULL) {
            if ((error = set_pem_blob(c, CURLOPT_CAINFO_BLOB, "CURLOPT_CAINFO_BLOB",
                                      opts->ca_data, err)) < 0)
                goto cleanup;
        } else {
            SETOPT(c, CURLOPT_CAINFO, opts->ca_file);
            SETOPT(c, CURLOPT_CA_CACHE_TIMEOUT, CA_CACHE_SECONDS);
        }
    }
    if (opts->client_cert_data != NULL) {
        if ((error = set_pem_blob(c, CURLOPT_SSLCERT_BLOB, "CURLOPT_SSLCERT_BLOB",
                                  opts->client_cert_data, err)) < 0)
            goto cleanup;
        SETOPT(c, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (opts->client_cert_file != NULL) {
        SETOPT(c, CURLOPT_SSLCERT, opts->client_cert_file);
        SETOPT(c, CURLOPT_SSLCERTTYPE, "PEM");
    }
    /* An empty passphrase for every client key, also an exec plugin's set
     * later: without one, libcurl 7.88 hands OpenSSL a callback that
     * strlen()s a NULL passphrase for a key blob (SIGSEGV), and OpenSSL's own
     * prompt on /dev/tty for a key file. An encrypted key then fails the
     * handshake (TOPO_ECONNECT) instead; kubeconfig.c and exec_cred.c refuse
     * it earlier with a clearer message (pem_keypair.c). */
    SETOPT(c, CURLOPT_KEYPASSWD, "");
    if (opts->client_key_data != NULL) {
        if ((error = set_pem_blob(c, CURLOPT_SSLKEY_BLOB, "CURLOPT_SSLKEY_BLOB",
                                  opts->client_key_data, err)) < 0)
            goto cleanup;
        SETOPT(c, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (opts->client_key_file != NULL) {
        SETOPT(c, CURLOPT_SSLKEY, opts->client_key_file);
        SETOPT(c, CURLOPT_SSLKEYTYPE, "PEM");
    }

cleanup:
    return error;
}

static int configure_handle(topo_http *h, const topo_http_opts *opts, long connect_timeout_ms,
                            topo_err *err)
{
    int error = 0;
    CURL *c = h->curl;
    const char *agent = opts->user_agent != NULL ? opts->user_agent : DEFAULT_USER_AGENT;

    if (has_control(agent))
        return topo_err_set(err, TOPO_EINVALID, "http: user_agent has a control character");
    SETOPT(c, CURLOPT_ERRORBUFFER, h->errbuf);
    /* No signals: safe with threads; timeouts still work (threaded resolver). */
    SETOPT(c, CURLOPT_NOSIGNAL, 1L);
    SETOPT(c, CURLOPT_PROTOCOLS_STR, "http,https");
    SETOPT(c, CURLOPT_FOLLOWLOCATION, 0L);
    SETOPT(c, CURLOPT_USERAGENT, agent);
    /* Every encoding this libcurl decodes (gzip, br, zstd...); the body limit
     * applies to the decoded bytes. */
    SETOPT(c, CURLOPT_ACCEPT_ENCODING, "");
    SETOPT(c, CURLOPT_TCP_KEEPALIVE, 1L);
    SETOPT(c, CURLOPT_TCP_KEEPIDLE, KEEPALIVE_IDLE_SECONDS);
    SETOPT(c, CURLOPT_TCP_KEEPINTVL, KEEPALIVE_INTERVAL_SECONDS);
    SETOPT(c, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    if (opts->connect_to != NULL) {
        /* "::HOST:PORT": whatever the URL names, connect there (the URL's
         * name is still what the certificate is checked against). */
        char entry[TOPO_MAX_HTTP_URL];
        int n = snprintf(entry, sizeof entry, "::%s", opts->connect_to);
        if (n < 0 || (size_t)n >= sizeof entry || has_control(opts->connect_to))
            return topo_err_set(err, TOPO_EINVALID, "http: connect_to: too long or malformed");
        if ((h->connect_to = curl_slist_append(NULL, entry)) == NULL)
            return topo_err_set(err, TOPO_ENOMEM, "http: out of memory");
        SETOPT(c, CURLOPT_CONNECT_TO, h->connect_to);
    }
    error = configure_tls(h, opts, err);

cleanup:
    return error;
}

int topo_http_create(topo_http **out, const topo_http_opts *opts, topo_err *err)
{
    int error = 0;
    topo_http *h = NULL;

    if (out == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: NULL output");
    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: no options");
    if (opts->base_url == NULL || (strncmp(opts->base_url, "https://", 8) != 0 &&
                                   strncmp(opts->base_url, "http://", 7) != 0))
        return topo_err_set(err, TOPO_EINVALID, "http: base_url must start with https:// or http://");
    if (has_control(opts->base_url) || strchr(opts->base_url, ' ') != NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: base_url has a space or control character");

    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return topo_err_set(err, TOPO_EGENERIC, "http: libcurl initialisation failed: %s",
                            curl_easy_strerror(global_rc));

    if ((h = calloc(1, sizeof(*h))) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "http: out of memory");
        goto cleanup;
    }
    h->base_len = strlen(opts->base_url);
    while (h->base_len > 0 && opts->base_url[h->base_len - 1] == '/')
        h->base_len--;
    if (h->base_len >= TOPO_MAX_HTTP_URL) {
        error = topo_err_set(err, TOPO_ELIMIT, "http: base_url is longer than %u bytes",
                             TOPO_MAX_HTTP_URL);
        goto cleanup;
    }
    h->base_url = malloc(h->base_len + 1);
    h->url = malloc(TOPO_MAX_HTTP_URL + 1);
    if (h->base_url == NULL || h->url == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "http: out of memory");
        goto cleanup;
    }
    memcpy(h->base_url, opts->base_url, h->base_len);
    h->base_url[h->base_len] = '\0';

    h->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : TOPO_HTTP_TIMEOUT_MS_DEFAULT;
    h->stream_idle_ms =
        opts->stream_idle_ms > 0 ? opts->stream_idle_ms : TOPO_HTTP_STREAM_IDLE_MS_DEFAULT;
    h->max_body = opts->max_body > 0 ? opts->max_body : TOPO_MAX_K8S_RESPONSE;
    if (h->max_body > LIMIT_CLAMP)
        h->max_body = LIMIT_CLAMP;
    h->max_retries = opts->max_retries < 0    ? 0
                     : opts->max_retries == 0 ? TOPO_HTTP_MAX_RETRIES_DEFAULT
                                              : opts->max_retries;
    if (h->max_retries > TOPO_MAX_HTTP_RETRIES)
        h->max_retries = TOPO_MAX_HTTP_RETRIES;
    h->backoff_base_ms =
        opts->backoff_base_ms > 0 ? opts->backoff_base_ms : TOPO_HTTP_BACKOFF_BASE_MS_DEFAULT;
    h->backoff_max_ms =
        opts->backoff_max_ms > 0 ? opts->backoff_max_ms : TOPO_HTTP_BACKOFF_MAX_MS_DEFAULT;
    if (h->backoff_max_ms < h->backoff_base_ms)
        h->backoff_max_ms = h->backoff_base_ms;
    double qps = opts->qps == 0 ? TOPO_HTTP_QPS_DEFAULT : opts->qps; /* negative: unlimited */
    double burst = opts->burst > 0 ? opts->burst : TOPO_HTTP_BURST_DEFAULT;
    uint64_t now = (uint64_t)topo_clock_ns();
    net_ratelimit_init(&h->limiter, qps, burst, now);
    h->rng = now ^ ((uint64_t)(uintptr_t)h << 16) ^ ((uint64_t)getpid() << 40);

    if ((error = net_http_auth_init(&h->auth, opts, err)) < 0)
        goto cleanup;
    if ((h->curl = curl_easy_init()) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "http: curl_easy_init failed");
        goto cleanup;
    }
    long connect_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
                                                   : TOPO_HTTP_CONNECT_TIMEOUT_MS_DEFAULT;
    if ((error = configure_handle(h, opts, connect_ms, err)) < 0)
        goto cleanup;

    *out = h;
    h = NULL;

cleanup:
    topo_http_free(h);
    return error;
}

void topo_http_free(topo_http *http)
{
    if (http == NULL)
        return;
    if (http->curl != NULL)
        curl_easy_cleanup(http->curl);
    net_http_auth_dispose(&http->auth);
    curl_slist_free_all(http->connect_to);
    free(http->url);
    free(http->base_url);
    free(http);
}

void topo_http_get_stats(const topo_http *http, topo_http_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (http == NULL)
        return;
    *out = http->stats;
    out->token_reloads = http->auth.reloads;
    out->throttled_ms = http->throttled_ns / 1000000u;
}

void topo_http_response_dispose(topo_http_response *resp)
{
    if (resp == NULL)
        return;
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
    resp->status = 0;
}

int topo_http_status_code(long status)
{
    if (status >= 200 && status <= 299)
        return 0;
    switch (status) {
    case 400:
    case 422:
        return TOPO_EINVALID;
    case 401:
        return TOPO_EUNAUTHORIZED;
    case 403:
        return TOPO_EFORBIDDEN;
    case 404:
        return TOPO_ENOTFOUND;
    case 408:
    case 504:
        return TOPO_ETIMEOUT;
    case 409:
        return TOPO_ECONFLICT;
    case 410:
        return TOPO_EGONE;
    case 413:
        return TOPO_ELIMIT;
    case 415:
        return TOPO_EUNSUPPORTED;
    case 429:
        return TOPO_ETHROTTLED;
    default:
        return status >= 500 && status <= 599 ? TOPO_ESERVER : TOPO_EGENERIC;
    }
}

/* --- one attempt ------------------------------------------------------------ */

static int request_check(const topo_http_request *req, topo_err *err)
{
    if (req->method == NULL || req->path == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: request without method or path");
    size_t mlen = strlen(req->method);
    if (mlen == 0 || mlen > TOPO_MAX_HTTP_METHOD)
        return topo_err_set(err, TOPO_EINVALID, "http: bad method \"%.16s\"", req->method);
    for (size_t i = 0; i < mlen; i++) {
        if (req->method[i] < 'A' || req->method[i] > 'Z')
            return topo_err_set(err, TOPO_EINVALID, "http: bad method \"%.16s\"", req->method);
    }
    if (req->path[0] != '/')
        return topo_err_set(err, TOPO_EINVALID, "http: %s %.200s: path must start with '/'",
                            req->method, req->path);
    for (const char *p = req->path; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= 0x20 || c >= 0x7f)
            return topo_err_set(err, TOPO_EINVALID,
                                "http: %s %.200s: path has a space, control or non-ASCII byte "
                                "(escape it)",
                                req->method, req->path);
    }
    if (req->body == NULL && req->body_len > 0)
        return topo_err_set(err, TOPO_EINVALID, "http: %s %.200s: body_len without body",
                            req->method, req->path);
    if (req->content_type != NULL && has_control(req->content_type))
        return topo_err_set(err, TOPO_EINVALID, "http: %s %.200s: bad content type",
                            req->method, req->path);
    if (req->accept != NULL && (req->accept[0] == '\0' || has_control(req->accept)))
        return topo_err_set(err, TOPO_EINVALID, "http: %s %.200s: bad Accept value", req->method,
                            req->path);
    if (req->timeout_ms < 0)
        return topo_err_set(err, TOPO_EINVALID, "http: %s %.200s: negative timeout",
                            req->method, req->path);
    return 0;
}

static int set_method(topo_http *h, const topo_http_request *req, topo_err *err)
{
    int error = 0;
    CURL *c = h->curl;
    const char *m = req->method;
    int sends_body = req->body != NULL || strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 ||
                     strcmp(m, "PATCH") == 0;

    /* HTTPGET resets what an earlier request on this handle set (POST, HEAD). */
    SETOPT(c, CURLOPT_HTTPGET, 1L);
    SETOPT(c, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    if (strcmp(m, "HEAD") == 0) {
        SETOPT(c, CURLOPT_NOBODY, 1L);
    } else if (sends_body) {
        /* Size first: setting it after the data would drop the data. */
        SETOPT(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        SETOPT(c, CURLOPT_POSTFIELDS, req->body != NULL ? req->body : "");
        if (strcmp(m, "POST") != 0)
            SETOPT(c, CURLOPT_CUSTOMREQUEST, m);
    } else if (strcmp(m, "GET") != 0) {
        SETOPT(c, CURLOPT_CUSTOMREQUEST, m);
    }

cleanup:
    return error;
}

static int build_headers(topo_http *h, const topo_http_request *req, struct curl_slist **out,
                         topo_err *err)
{
    int error = 0;
    struct curl_slist *list = NULL;
    char *auth = NULL;

    if ((error = header_addf(&list, "Accept: %s",
                             req->accept != NULL ? req->accept : "application/json")) < 0 ||
        (error = header_addf(&list, "Expect:")) < 0)
        goto cleanup;
    /* "Content-Type:" with no value stops libcurl adding its form type. */
    if (req->content_type != NULL)
        error = header_addf(&list, "Content-Type: %s", req->content_type);
    else
        error = header_addf(&list, "Content-Type:");
    if (error < 0)
        goto cleanup;
    if ((error = net_http_auth_header(&auth, &h->auth)) < 0 ||
        (auth != NULL && (error = header_addf(&list, "%s", auth)) < 0))
        goto cleanup;
    *out = list;
    list = NULL;

cleanup:
    net_http_token_free(auth);
    headers_free(list);
    if (error < 0)
        topo_err_set(err, error, "http: building request headers: %s", topo_strerror(error));
    return error;
}

/* Everything before curl_easy_perform: the rate limiter, the token, the URL,
 * method, body, headers and timeouts. *headers must be freed after the
 * transfer (attempt_done). */
static int attempt_setup(topo_http *h, const topo_http_request *req, long timeout_ms,
                         struct curl_slist **headers, topo_err *err)
{
    int error = 0;
    CURL *c = h->curl;

    size_t plen = strlen(req->path);
    if (plen > TOPO_MAX_HTTP_URL - h->base_len)
        return topo_err_set(err, TOPO_ELIMIT, "http: %s %.200s...: URL longer than %u bytes",
                            req->method, req->path, TOPO_MAX_HTTP_URL);
    memcpy(h->url, h->base_url, h->base_len);
    memcpy(h->url + h->base_len, req->path, plen + 1);

    uint64_t wait = net_ratelimit_reserve(&h->limiter, (uint64_t)topo_clock_ns());
    if (wait > 0) {
        if (wait >= THROTTLE_LOG_NS)
            topo_log(TOPO_LOG_INFO, "http: waiting %.2f s for the client-side rate limit "
                                    "(qps %g, burst %g)",
                     (double)wait / 1e9, h->limiter.qps, h->limiter.burst);
        topo_clock_sleep_ns((int64_t)wait);
        h->throttled_ns += wait;
    }
    if ((error = net_http_auth_prepare(&h->auth, err)) < 0)
        goto cleanup;
    /* An exec plugin's new client certificate: a connection made with the
     * old one is not reused (client-go closes them all). */
    long fresh = h->auth.exec_cert_changed;
    if (h->auth.exec_cert_changed) {
        const topo_exec_credential *x = &h->auth.exec_cur;
        if ((error = set_pem_blob_or_none(c, CURLOPT_SSLCERT_BLOB, "CURLOPT_SSLCERT_BLOB",
                                          x->client_cert_data, err)) < 0 ||
            (error = set_pem_blob_or_none(c, CURLOPT_SSLKEY_BLOB, "CURLOPT_SSLKEY_BLOB",
                                          x->client_key_data, err)) < 0)
            goto cleanup;
        SETOPT(c, CURLOPT_SSLCERTTYPE, "PEM");
        SETOPT(c, CURLOPT_SSLKEYTYPE, "PEM");
        h->auth.exec_cert_changed = 0;
    }
    SETOPT(c, CURLOPT_FRESH_CONNECT, fresh);

    if ((error = build_headers(h, req, headers, err)) < 0)
        goto cleanup;
    if ((error = set_method(h, req, err)) < 0)
        goto cleanup;
    SETOPT(c, CURLOPT_URL, h->url);
    SETOPT(c, CURLOPT_HTTPHEADER, *headers);
    SETOPT(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    h->errbuf[0] = '\0';

cleanup:
    return error;
}

/* After curl_easy_perform: counters, and no borrowed pointer (headers, the
 * caller's body) left in the handle between calls. */
static void attempt_done(topo_http *h, struct curl_slist **headers)
{
    long connects = 0;
    h->stats.requests++;
    if (curl_easy_getinfo(h->curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0)
        h->stats.connects += (uint64_t)connects;
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, (char *)NULL);
    curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
    headers_free(*headers);
    *headers = NULL;
}

enum retry_class { RETRY_NEVER, RETRY_IDEMPOTENT, RETRY_ALWAYS };

/* A status that may mean a credential has rotated: worth one re-read. */
static int refused(long status)
{
    return status == 401 || status == 403;
}

/* Maps a transfer failure to a topo code and says when it may be retried:
 * always when nothing can have reached the server, for idempotent methods
 * when the request may have been sent. */
static int transport_code(topo_http *h, CURLcode cc, enum retry_class *retry)
{
    long sent = 0;
    *retry = RETRY_NEVER;
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
        *retry = RETRY_ALWAYS;
        return TOPO_ECONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        /* No request bytes sent: the connect or TLS handshake timed out. */
        curl_easy_getinfo(h->curl, CURLINFO_REQUEST_SIZE, &sent);
        *retry = sent == 0 ? RETRY_ALWAYS : RETRY_IDEMPOTENT;
        return TOPO_ETIMEOUT;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_BAD_CONTENT_ENCODING:
        *retry = RETRY_IDEMPOTENT;
        return TOPO_ECONNECT;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        return TOPO_ECONNECT;
    case CURLE_FILESIZE_EXCEEDED:
        return TOPO_ELIMIT;
    case CURLE_OUT_OF_MEMORY:
        return TOPO_ENOMEM;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_BAD_FUNCTION_ARGUMENT:
        return TOPO_EINVALID;
    default:
        return TOPO_EGENERIC;
    }
}

static const char *transport_text(topo_http *h, CURLcode cc)
{
    return h->errbuf[0] != '\0' ? h->errbuf : curl_easy_strerror(cc);
}

static int transport_error(topo_http *h, const topo_http_request *req, CURLcode cc, int code,
                           int attempts, topo_err *err)
{
    const char *what = cc == CURLE_PEER_FAILED_VERIFICATION
                           ? "TLS: the server's certificate is not trusted: "
                           : "";
    if (attempts > 1)
        return topo_err_set(err, code, "%s %s: %s%s (%d attempts)", req->method, h->url, what,
                            transport_text(h, cc), attempts);
    return topo_err_set(err, code, "%s %s: %s%s", req->method, h->url, what,
                        transport_text(h, cc));
}

static long retry_after_ms(topo_http *h)
{
    struct curl_header *hdr = NULL;
    if (curl_easy_header(h->curl, "Retry-After", 0, CURLH_HEADER, -1, &hdr) != CURLHE_OK)
        return -1;
    return net_http_retry_after_ms(hdr->value, h->backoff_max_ms);
}

static void retry_wait(topo_http *h, const topo_http_request *req, int retry, long delay_ms,
                       const char *why)
{
    topo_log(TOPO_LOG_INFO, "http: %s %.200s: %s; retry %d/%d in %ld ms", req->method, req->path,
             why, retry + 1, h->max_retries, delay_ms);
    h->stats.retries++;
    topo_clock_sleep_ns((int64_t)delay_ms * 1000000);
}

/* --- topo_http_do ----------------------------------------------------------- */

/* The response body: a topo_buf bounded by the client's max_body. */
static size_t body_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    topo_buf *b = userdata;
    size_t n = size * nmemb;
    if (b->cap == 0) /* most bodies fit the first allocation */
        (void)topo_buf_reserve(b, b->max < BODY_INITIAL_CAP ? b->max : BODY_INITIAL_CAP);
    /* Past the limit, or out of memory: != n, libcurl aborts the transfer. */
    return topo_buf_put(b, ptr, n) == 0 ? n : 0;
}

int topo_http_do(topo_http *http, const topo_http_request *req, topo_http_response *resp,
                 topo_err *err)
{
    int error = 0;
    topo_buf sink = TOPO_BUF_INIT(0);
    struct curl_slist *headers = NULL;
    int retries = 0, auth_retried = 0;
    long status = 0;
    char why[96];

    if (resp != NULL) {
        resp->status = 0;
        resp->body = NULL;
        resp->len = 0;
    }
    if (http == NULL || req == NULL || resp == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: NULL argument");
    if ((error = request_check(req, err)) < 0)
        return error;
    int idempotent = net_http_method_idempotent(req->method) || req->resend_safe;
    long timeout_ms = req->timeout_ms > 0 ? req->timeout_ms : http->timeout_ms;
    sink.max = http->max_body;

    for (;;) {
        topo_buf_clear(&sink);
        if ((error = attempt_setup(http, req, timeout_ms, &headers, err)) < 0)
            goto cleanup;
        SETOPT(http->curl, CURLOPT_WRITEFUNCTION, body_write);
        SETOPT(http->curl, CURLOPT_WRITEDATA, &sink);
        SETOPT(http->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)sink.max);
        SETOPT(http->curl, CURLOPT_NOPROGRESS, 1L);
        CURLcode cc = curl_easy_perform(http->curl);
        attempt_done(http, &headers);
        status = 0;
        curl_easy_getinfo(http->curl, CURLINFO_RESPONSE_CODE, &status);

        if (cc == CURLE_OK) {
            /* A rotated credential: re-read now and resend once. 403 too:
             * NetBox refuses a bad token with 403, not 401. */
            if (refused(status) && net_http_auth_renewable(&http->auth) && !auth_retried) {
                auth_retried = 1;
                if (net_http_auth_reload(&http->auth, status) > 0) {
                    topo_log(TOPO_LOG_INFO, "http: %s %.200s: %ld with a credential that has "
                                            "since rotated; resending with the new one",
                             req->method, req->path, status);
                    http->stats.retries++;
                    continue;
                }
            }
            if (net_http_status_retriable(status, idempotent) && retries < http->max_retries) {
                long delay = retry_after_ms(http);
                if (delay < 0)
                    delay = topo_backoff_ms(http->backoff_base_ms, http->backoff_max_ms,
                                            retries, &http->rng);
                snprintf(why, sizeof(why), "status %ld", status);
                if (status == 429)
                    http->stats.throttled++;
                retry_wait(http, req, retries, delay, why);
                retries++;
                continue;
            }
            break;
        }

        enum retry_class retry = RETRY_NEVER;
        int code = transport_code(http, cc, &retry);
        if (sink.error != 0) {
            retry = RETRY_NEVER;
            code = sink.error;
        }
        if ((retry == RETRY_ALWAYS || (retry == RETRY_IDEMPOTENT && idempotent)) &&
            retries < http->max_retries) {
            retry_wait(http, req, retries,
                       topo_backoff_ms(http->backoff_base_ms, http->backoff_max_ms, retries,
                                       &http->rng),
                       transport_text(http, cc));
            retries++;
            continue;
        }
        if (sink.error == TOPO_ELIMIT || cc == CURLE_FILESIZE_EXCEEDED)
            error = topo_err_set(err, TOPO_ELIMIT, "%s %s: response body exceeds the limit of %zu "
                                                   "bytes",
                                 req->method, http->url, sink.max);
        else if (sink.error == TOPO_ENOMEM)
            error = topo_err_set(err, TOPO_ENOMEM, "%s %s: out of memory for the response body",
                                 req->method, http->url);
        else
            error = transport_error(http, req, cc, code, retries + 1, err);
        goto cleanup;
    }

    if ((resp->body = topo_buf_take(&sink, &resp->len)) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "http: out of memory");
        goto cleanup;
    }
    resp->status = status;

cleanup:
    if (headers != NULL) /* a failure between setup and perform */
        curl_easy_setopt(http->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    headers_free(headers);
    topo_buf_dispose(&sink);
    return error;
}

/* --- topo_http_stream ------------------------------------------------------- */

typedef struct line_sink {
    topo_http *http;
    topo_http_line_fn fn;
    void *payload;
    topo_buf line; /* the current partial line (or a non-2xx body), bounded */
    long status;
    int status_known;
    int error_body; /* non-2xx: the body is collected and delivered as one line */
    int stopped;
    int fn_rc;
    int idle;
    const atomic_int *cancel;
    int cancelled;
    uint64_t idle_ns;
    uint64_t last_data_ns;
} line_sink;

static int line_append(line_sink *s, const char *p, size_t n)
{
    if (s->line.cap == 0)
        (void)topo_buf_reserve(&s->line,
                               s->line.max < LINE_INITIAL_CAP ? s->line.max : LINE_INITIAL_CAP);
    return topo_buf_put(&s->line, p, n) == 0 ? 0 : -1;
}

/* Delivers the collected line (without a trailing "\r"); -1 when fn stops. */
static int line_emit(line_sink *s)
{
    size_t n = s->line.len;
    s->line.len = 0;
    if (n > 0 && s->line.ptr[n - 1] == '\r')
        n--;
    if (n == 0)
        return 0;
    s->line.ptr[n] = '\0';
    int rc = s->fn(s->line.ptr, n, s->payload);
    if (rc != 0) {
        s->stopped = 1;
        s->fn_rc = rc;
        return -1;
    }
    return 0;
}

static size_t line_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    line_sink *s = userdata;
    size_t n = size * nmemb;
    s->last_data_ns = (uint64_t)topo_clock_ns();
    if (!s->status_known) {
        curl_easy_getinfo(s->http->curl, CURLINFO_RESPONSE_CODE, &s->status);
        s->status_known = 1;
        s->error_body = s->status < 200 || s->status > 299;
    }
    if (s->error_body)
        return line_append(s, ptr, n) < 0 ? 0 : n;
    const char *p = ptr, *end = ptr + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t piece = (size_t)((nl != NULL ? nl : end) - p);
        if (line_append(s, p, piece) < 0)
            return 0;
        if (nl == NULL)
            break;
        if (line_emit(s) < 0)
            return 0;
        p = nl + 1;
    }
    return n;
}

/* Called by libcurl about once a second while a stream is open, even when no
 * data arrives: a connection that stays silent too long is given up. */
static int line_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                         curl_off_t ulnow)
{
    line_sink *s = clientp;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    if (s->cancel != NULL && atomic_load(s->cancel)) {
        s->cancelled = 1;
        return 1;
    }
    if ((uint64_t)topo_clock_ns() - s->last_data_ns > s->idle_ns) {
        s->idle = 1;
        return 1;
    }
    return 0;
}

int topo_http_stream(topo_http *http, const topo_http_request *req, size_t max_line,
                     topo_http_line_fn fn, void *payload, long *out_status, topo_err *err)
{
    int error = 0;
    struct curl_slist *headers = NULL;
    int auth_retried = 0;
    line_sink s;

    memset(&s, 0, sizeof(s));
    if (out_status != NULL)
        *out_status = 0;
    if (http == NULL || req == NULL || fn == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: NULL argument");
    if (max_line == 0)
        return topo_err_set(err, TOPO_EINVALID, "http: max_line must be positive");
    if ((error = request_check(req, err)) < 0)
        return error;
    s.http = http;
    s.fn = fn;
    s.payload = payload;
    s.line.max = max_line < LIMIT_CLAMP ? max_line : LIMIT_CLAMP;
    s.idle_ns = (uint64_t)http->stream_idle_ms * 1000000u;
    s.cancel = req->cancel;

    for (;;) {
        topo_buf_clear(&s.line);
        s.status = 0;
        s.status_known = 0;
        s.error_body = 0;
        if ((error = attempt_setup(http, req, req->timeout_ms, &headers, err)) < 0)
            goto cleanup;
        s.last_data_ns = (uint64_t)topo_clock_ns(); /* after the rate limiter's wait */
        SETOPT(http->curl, CURLOPT_WRITEFUNCTION, line_write);
        SETOPT(http->curl, CURLOPT_WRITEDATA, &s);
        SETOPT(http->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)0);
        SETOPT(http->curl, CURLOPT_NOPROGRESS, 0L);
        SETOPT(http->curl, CURLOPT_XFERINFOFUNCTION, line_progress);
        SETOPT(http->curl, CURLOPT_XFERINFODATA, &s);
        CURLcode cc = curl_easy_perform(http->curl);
        attempt_done(http, &headers);
        curl_easy_setopt(http->curl, CURLOPT_NOPROGRESS, 1L);
        long status = 0;
        curl_easy_getinfo(http->curl, CURLINFO_RESPONSE_CODE, &status);
        if (out_status != NULL)
            *out_status = status;

        if (s.stopped) {
            error = s.fn_rc;
            goto cleanup;
        }
        if (s.cancelled) {
            error = 0;
            goto cleanup;
        }
        if (s.line.error == TOPO_ELIMIT) {
            error = topo_err_set(err, TOPO_ELIMIT, "%s %s: a line of the stream exceeds the "
                                                   "limit of %zu bytes",
                                 req->method, http->url, max_line);
            goto cleanup;
        }
        if (s.line.error == TOPO_ENOMEM) {
            error = topo_err_set(err, TOPO_ENOMEM, "%s %s: out of memory for a stream line",
                                 req->method, http->url);
            goto cleanup;
        }
        if (s.idle) {
            error = topo_err_set(err, TOPO_ETIMEOUT, "%s %s: no data for %ld ms; the connection "
                                                     "is presumed dead",
                                 req->method, http->url, http->stream_idle_ms);
            goto cleanup;
        }
        if (cc != CURLE_OK) {
            enum retry_class retry;
            error = transport_error(http, req, cc, transport_code(http, cc, &retry), 1, err);
            goto cleanup;
        }
        if (status >= 200 && status <= 299) {
            /* A last line without "\n" at the end of the stream. */
            if (line_emit(&s) < 0)
                error = s.fn_rc;
            goto cleanup;
        }
        if (refused(status) && net_http_auth_renewable(&http->auth) && !auth_retried) {
            auth_retried = 1;
            if (net_http_auth_reload(&http->auth, status) > 0) {
                http->stats.retries++;
                continue;
            }
        }
        /* A non-2xx status: its body (a Status object) as one line. */
        while (s.line.len > 0 &&
               (s.line.ptr[s.line.len - 1] == '\n' || s.line.ptr[s.line.len - 1] == '\r'))
            s.line.len--;
        if (line_emit(&s) < 0)
            error = s.fn_rc;
        goto cleanup;
    }

cleanup:
    if (headers != NULL) /* a failure between setup and perform */
        curl_easy_setopt(http->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    headers_free(headers);
    topo_buf_dispose(&s.line);
    return error;
}
