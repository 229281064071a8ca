/* The only HTTP client of topo, over libcurl (no other file includes curl).
 *
 * Threads: one topo_http per thread. A topo_http keeps one curl easy handle,
 * so connections and TLS sessions are reused between its requests, and is not
 * safe to use from two threads at once; distinct topo_http objects may be used
 * concurrently (libcurl's global init runs once, thread-safely).
 *
 * Every body read is bounded (max_body, max_line). Retriable failures are
 * retried with jittered exponential backoff (see topo_http_do); a token bucket
 * (qps, burst) shared by all requests of one topo_http limits the request
 * rate. Credentials: a token sent as "Authorization: <scheme> <token>"
 * (scheme "Bearer" unless token_scheme says otherwise: NetBox v1 tokens use
 * "Token", UFM's /ufmRestV3 tokens literally "Basic"), or HTTP Basic from a
 * username and a password file. Each credential file is re-read every
 * token_reload_ms and immediately after a 401 or 403 (NetBox refuses a bad
 * token with 403), after which the request is sent once more when the
 * credential changed (bound service-account tokens rotate, so do passwords
 * in mounted Secrets). Credentials appear in no log line and no error
 * message. Redirects are not followed (a credential
 * never goes to another host). */
#ifndef TOPO_HTTP_H
#define TOPO_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/exec_cred.h"

typedef struct topo_http topo_http;

/* The defaults of topo_http_opts (and of topo_k8s_opts, which passes its
 * fields on). */
#define TOPO_HTTP_TOKEN_RELOAD_MS_DEFAULT 60000L
#define TOPO_HTTP_TIMEOUT_MS_DEFAULT 30000L
#define TOPO_HTTP_CONNECT_TIMEOUT_MS_DEFAULT 5000L
#define TOPO_HTTP_QPS_DEFAULT 50 /* plain literals: topoassign's help prints them */
#define TOPO_HTTP_BURST_DEFAULT 100
#define TOPO_HTTP_MAX_RETRIES_DEFAULT 5
#define TOPO_HTTP_BACKOFF_BASE_MS_DEFAULT 200L
#define TOPO_HTTP_BACKOFF_MAX_MS_DEFAULT 30000L
#define TOPO_HTTP_STREAM_IDLE_MS_DEFAULT 180000L
/* The default User-Agent is "topo/" TOPO_VERSION (topo/version.h). */

/* String options are copied by topo_http_create. For the CA, client
 * certificate and key, the _data form (PEM text) takes precedence over the
 * _file form, as in kubeconfig. When a CA is given only that CA is trusted
 * (not the system store); a CA file is re-read for new connections at least
 * every 60 s. A field left 0 (or NULL) gets the default named beside it;
 * negative numbers mean the same unless noted. */
typedef struct topo_http_opts {
    const char *base_url;         /* "https://10.0.0.1:6443" (http:// also allowed), no trailing slash */
    const char *connect_to;       /* "HOST:PORT" to connect to instead of base_url's host and
                                     port, whose name the certificate must still carry (one
                                     replica of a Service reached at its pod IP), or NULL */
    const char *ca_file;          /* PEM bundle to verify the server, or NULL */
    const char *ca_data;          /* PEM text (kubeconfig certificate-authority-data), or NULL */
    const char *client_cert_file; /* or client_cert_data (PEM text) */
    const char *client_cert_data;
    const char *client_key_file; /* or client_key_data (PEM text) */
    const char *client_key_data;
    int insecure_skip_verify;
    const char *token;            /* a fixed bearer token, or NULL */
    const char *token_file;       /* re-read periodically and after 401/403, or NULL; wins
                                     over token */
    const char *token_scheme;     /* the Authorization scheme of the token: "Bearer" (NULL),
                                     "Token", "Basic", ... (an RFC 9110 token) */
    /* HTTP Basic (RFC 7617), instead of a token: the username fixed or from
     * a file, the password from a file. Both files are read like the token
     * file; a username or password file loses only its trailing line end
     * ("\n" or "\r\n": inner and other blanks belong to the credential). */
    const char *username;         /* or NULL with username_file */
    const char *username_file;    /* wins over username */
    const char *password_file;    /* required for Basic */
    /* A kubeconfig's exec credential plugin (topo/exec_cred.h), instead of a
     * token, Basic or a client certificate: its token is sent as "Bearer",
     * its client certificate and key used for TLS (a changed certificate
     * opens a new connection). It runs before the first request, once its
     * credential expired, and after a 401 (then the request is sent once
     * more with the new credential); a plugin that fails fails the
     * request. topo_http_create takes a reference: several clients (threads)
     * share it. */
    topo_exec_cred *exec;
    long token_reload_ms;         /* credential files' re-read period,
                                     TOPO_HTTP_TOKEN_RELOAD_MS_DEFAULT */
    long timeout_ms;              /* whole request (not streams), TOPO_HTTP_TIMEOUT_MS_DEFAULT */
    long connect_timeout_ms;      /* TOPO_HTTP_CONNECT_TIMEOUT_MS_DEFAULT */
    size_t max_body;              /* TOPO_MAX_K8S_RESPONSE */
    double qps;                   /* TOPO_HTTP_QPS_DEFAULT; negative: no client-side limit */
    double burst;                 /* TOPO_HTTP_BURST_DEFAULT (at least 1) */
    int max_retries;              /* TOPO_HTTP_MAX_RETRIES_DEFAULT; negative: none */
    long backoff_base_ms;         /* TOPO_HTTP_BACKOFF_BASE_MS_DEFAULT */
    long backoff_max_ms;          /* TOPO_HTTP_BACKOFF_MAX_MS_DEFAULT; also caps a server's
                                     Retry-After */
    const char *user_agent;       /* "topo/<version>" */
    long stream_idle_ms;          /* a stream with no byte for this long fails with
                                     TOPO_ETIMEOUT (dead connection);
                                     TOPO_HTTP_STREAM_IDLE_MS_DEFAULT */
} topo_http_opts;

typedef struct topo_http_request {
    const char *method;       /* "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE" (any token) */
    const char *path;         /* path and query, already escaped: "/api/v1/nodes?limit=500" */
    const char *content_type; /* for the body, or NULL (no Content-Type header) */
    const char *body;         /* borrowed for the call; NULL with body_len 0 for none */
    size_t body_len;
    long timeout_ms;          /* 0: the client's default (topo_http_do), none (streams) */
    /* Streams only: when it becomes non-zero the stream ends within about a
     * second, even with no data arriving, and topo_http_stream returns 0.
     * Any thread may set it, and a signal handler (atomic_int is lock-free
     * where topo builds: ATOMIC_INT_LOCK_FREE 2). NULL: never. */
    const atomic_int *cancel;
    /* The Accept header's value (a media type with parameters, or a list of
     * them: the API server's metadata-only answers); NULL: application/json. */
    const char *accept;
    /* Non-zero: the request is safe to send again although its method is
     * not idempotent, because it fails its own precondition once it has
     * applied (a JSON patch whose "test" operations no longer hold after
     * it): it is retried as GET and PUT are, after a 5xx and after a
     * failure once it went out. */
    int resend_safe;
} topo_http_request;

/* `topo_http_response r = {0};` before the first use. */
typedef struct topo_http_response {
    long status;
    char *body; /* NUL-terminated, owned: topo_http_response_dispose */
    size_t len;
} topo_http_response;

/* Requests send "Accept: application/json" (unless the request names
 * another) and accept any compressed
 * encoding libcurl decodes. Fails with TOPO_EINVALID on bad options (a token
 * and Basic together, a username without a password file or the reverse, a
 * bad scheme) and with a credential file's error when it cannot be read
 * (for the token file: and no fixed token is set). An exec plugin does
 * not run here (see topo_http_opts.exec). */
int topo_http_create(topo_http **out, const topo_http_opts *opts, topo_err *err);
void topo_http_free(topo_http *http);

/* Sends a request, with retries, and stores the response in *resp (which is
 * overwritten, not freed: pass it initialised or disposed).
 *
 * Returns 0 when a response arrived, whatever its status: the caller maps it
 * (topo_http_status_code). Retried before that, with backoff:
 *   - connection failures before anything was sent (refused, DNS, TLS
 *     handshake, connect timeout): every method;
 *   - 429: every method, waiting Retry-After seconds when the server sends it;
 *   - 5xx except 501, and failures after the request went out (reset, dropped
 *     mid-response, timeout): idempotent methods only (GET, HEAD, PUT, DELETE,
 *     OPTIONS), and requests marked resend_safe; waiting Retry-After seconds
 *     when the server sends it (503), else the backoff.
 * When retries run out on a 429/5xx, that last response is returned (0).
 * Otherwise a code: TOPO_ECONNECT (connection failed or dropped, or the
 * server's certificate was not trusted), TOPO_ETIMEOUT, TOPO_ELIMIT (body
 * over max_body), TOPO_EINVALID (bad request or TLS files), TOPO_ENOMEM. */
int topo_http_do(topo_http *http, const topo_http_request *req, topo_http_response *resp,
                 topo_err *err);
void topo_http_response_dispose(topo_http_response *resp);

/* Streams a response line by line (watch: one JSON event per line) without
 * buffering the stream; each line at most max_line bytes (else TOPO_ELIMIT).
 * Lines are passed without their "\n" (or "\r\n"), NUL-terminated, borrowed
 * for the call; empty lines are skipped. fn returns 0 to continue, non-zero
 * to stop: the transfer is aborted and that value returned as is.
 * *out_status (may be NULL) gets the HTTP status, 0 when none arrived; a
 * non-2xx status delivers its body as one line, and the call returns 0. A
 * stream that ends normally returns 0; one with no byte for stream_idle_ms,
 * or running past req->timeout_ms, returns TOPO_ETIMEOUT. No retries (the
 * caller resumes), except one after a 401 or 403 when a credential file
 * changed. */
typedef int (*topo_http_line_fn)(const char *line, size_t len, void *payload);
int topo_http_stream(topo_http *http, const topo_http_request *req, size_t max_line,
                     topo_http_line_fn fn, void *payload, long *out_status, topo_err *err);

/* The code a status maps to, for callers of topo_http_do: 2xx 0,
 * 401 TOPO_EUNAUTHORIZED, 403 TOPO_EFORBIDDEN, 404 TOPO_ENOTFOUND,
 * 409 TOPO_ECONFLICT, 410 TOPO_EGONE, 429 TOPO_ETHROTTLED, 5xx TOPO_ESERVER,
 * 400/422 TOPO_EINVALID, 413 TOPO_ELIMIT, 408/504 TOPO_ETIMEOUT, other
 * statuses TOPO_EGENERIC. */
int topo_http_status_code(long status);

/* Counters for metrics and tests. */
typedef struct topo_http_stats {
    uint64_t requests;      /* attempts sent */
    uint64_t retries;       /* attempts after the first of a call (incl. after a 401/403) */
    uint64_t token_reloads; /* successful re-reads of a credential file (token,
                               username, password) after the first read */
    uint64_t throttled_ms;  /* time spent waiting in the rate limiter */
    uint64_t connects;      /* new connections opened (the rest reused one) */
    uint64_t throttled;     /* 429 answers waited out (Retry-After or backoff) and resent */
} topo_http_stats;
void topo_http_get_stats(const topo_http *http, topo_http_stats *out);

/* RFC 3986 percent-encoding for request paths and query values (any layer
 * that builds API paths): every byte outside the unreserved set (ALPHA
 * DIGIT "-" "." "_" "~") becomes %XX (upper-case hex), so the result is safe
 * as one path segment or one query value. Like snprintf: writes at most
 * size - 1 bytes and a NUL when size > 0, and returns the length the whole
 * encoding needs (compare with size to detect truncation). dst may be NULL
 * when size is 0. */
size_t topo_http_escape(char *dst, size_t size, const char *src);

#endif
