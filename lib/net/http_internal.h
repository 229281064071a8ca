/* Internals of the HTTP client (lib/net/http*.c, ratelimit.c, backoff.c),
 * kept free of libcurl types so the unit tests can drive them directly. */
#ifndef TOPO_NET_HTTP_INTERNAL_H
#define TOPO_NET_HTTP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "topo/backoff.h"
#include "topo/clock.h"
#include "topo/error.h"
#include "topo/http.h"

/* --- token bucket (ratelimit.c) -------------------------------------------- */

/* A token bucket refilled at qps tokens per second up to burst tokens, and
 * full at start. Tokens may go negative: a caller that takes a token the
 * bucket does not have yet is told how long to wait for it, and the next
 * caller queues behind it. Not locked: one per topo_http, one thread. */
typedef struct topo_ratelimit {
    double qps;   /* <= 0: unlimited */
    double burst; /* >= 1 */
    double tokens;
    uint64_t last_ns;
} topo_ratelimit;

void net_ratelimit_init(topo_ratelimit *rl, double qps, double burst, uint64_t now_ns);
/* Takes one token at time now_ns and returns how many nanoseconds the caller
 * must wait before using it (0 when the bucket had one). */
uint64_t net_ratelimit_reserve(topo_ratelimit *rl, uint64_t now_ns);

/* --- backoff (backoff.c) --------------------------------------------------- */

/* The delay between attempts: topo/backoff.h. */
/* Parses a Retry-After value in delta-seconds ("120"); an HTTP date or
 * anything else gives -1. Values are capped at cap_ms. Returns milliseconds. */
long net_http_retry_after_ms(const char *value, long cap_ms);

/* --- retry policy (backoff.c) ---------------------------------------------- */

/* Non-zero for methods HTTP defines as idempotent (GET HEAD PUT DELETE
 * OPTIONS TRACE). */
int net_http_method_idempotent(const char *method);
/* Non-zero when a response with this status should be retried. */
int net_http_status_retriable(long status, int idempotent);

/* --- credentials (http_auth.c) -------------------------------------------- */

/* What a credential file holds, which decides how it is trimmed and checked. */
typedef enum topo_http_secret_kind {
    /* Surrounding whitespace trimmed (token files usually end in "\n";
     * kubectl and client-go trim it too); then net_http_token_check. */
    TOPO_HTTP_SECRET_TOKEN,
    /* Only a trailing "\n" or "\r\n" removed (blanks may be part of it);
     * non-empty, no control character (UTF-8 is allowed: RFC 7617). */
    TOPO_HTTP_SECRET_PASSWORD,
    /* As a password, and no ':' (RFC 7617 user-id). */
    TOPO_HTTP_SECRET_USERNAME,
} topo_http_secret_kind;

/* Reads a credential file (opened directly, at most
 * TOPO_MAX_CREDENTIAL_FILE bytes), trimmed and checked for its kind. *out
 * is malloc'd; free it with net_http_token_free. Messages name the file,
 * never its content. */
int net_http_secret_read(char **out, const char *path, topo_http_secret_kind kind,
                          topo_err *err);
/* A token must be non-empty visible ASCII without spaces (RFC 6750 b64token
 * is stricter; we only refuse what would break or inject into the header). */
int net_http_token_check(const char *token, size_t len, topo_err *err);
/* Overwrites a NUL-terminated secret with zeros and frees it; NULL is a no-op. */
void net_http_token_free(char *token);
/* Overwrites n bytes with zeros in a way the compiler does not remove. */
void net_http_wipe(void *p, size_t n);

/* One credential: a fixed value, or a file re-read every reload period and
 * after a 401 or 403 (then the value is what the file last held readably). */
typedef struct topo_http_secret {
    topo_http_secret_kind kind;
    const char *what; /* "bearer token", "username", "password": for messages */
    char *file;       /* NULL: fixed */
    char *value;      /* NULL: none; wiped when replaced */
    uint64_t read_ns; /* last read of the file */
} topo_http_secret;

/* The credentials of one topo_http: a token with its scheme, or Basic, or
 * an exec plugin's credential (its token in token.value, fixed). */
typedef struct topo_http_auth {
    char *scheme; /* of the token: "Bearer", "Token", "Basic"... */
    topo_http_secret token;
    topo_exec_cred *exec;           /* a reference, or NULL */
    topo_exec_credential exec_cur;  /* this client's copy of the plugin's credential */
    int exec_had_cert;              /* the last credential applied had a certificate */
    int exec_cert_changed;          /* exec_cur's certificate is to be applied (http.c) */
    topo_http_secret username;
    topo_http_secret password;
    int basic;
    long reload_ms;
    uint64_t reloads; /* successful re-reads after the first read */
} topo_http_auth;

/* From the options (topo/http.h): reads the files once. On error the auth
 * is disposed. TOPO_EINVALID for options that do not go together. */
int net_http_auth_init(topo_http_auth *auth, const topo_http_opts *opts, topo_err *err);
/* Wipes and frees; safe on a zeroed or disposed auth. */
void net_http_auth_dispose(topo_http_auth *auth);
/* Non-zero when a credential comes from a file (a 401 or 403 is worth a
 * re-read). */
int net_http_auth_has_file(const topo_http_auth *auth);
/* Non-zero when a refused request may succeed with a renewed credential:
 * a file, or an exec plugin. */
int net_http_auth_renewable(const topo_http_auth *auth);
/* Before each request: the files whose period has passed are re-read, and
 * an exec plugin's credential is fetched (running the plugin when none is
 * cached or it expired). A plugin's failure is returned (the request cannot
 * be authenticated); exec_cert_changed says when the TLS client
 * certificate is to be set again. */
int net_http_auth_prepare(topo_http_auth *auth, topo_err *err);
/* Re-reads each file whose period has passed (before a request). */
void net_http_auth_refresh_if_due(topo_http_auth *auth);
/* After a refused request (status 401 or 403): re-reads every file now,
 * and after a 401 runs an exec plugin again (unless another client already
 * renewed the refused credential). 1 when a credential changed, 0 when none
 * did or none could be had (a file unreadable during a rotation keeps its
 * current value; a plugin failing is logged). */
int net_http_auth_reload(topo_http_auth *auth, long status);
/* The header line, "Authorization: Bearer <token>" or "Authorization:
 * Basic <base64(user:password)>", malloc'd into *out (free it with
 * net_http_token_free: it is wiped), or NULL without credentials.
 * 0 or TOPO_ENOMEM. */
int net_http_auth_header(char **out, const topo_http_auth *auth);

#endif
