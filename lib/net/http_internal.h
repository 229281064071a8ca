/* Internals of the HTTP client (lib/net/http*.c, ratelimit.c, backoff.c),
 * kept free of libcurl types so the unit tests can drive them directly. */
#ifndef TOPO_NET_HTTP_INTERNAL_H
#define TOPO_NET_HTTP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/http.h"

/* --- clock (ratelimit.c) ---------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t topo_http_now_ns(void);
/* Sleeps ns nanoseconds with nanosleep, resuming after signal interruptions. */
void topo_http_sleep_ns(uint64_t ns);

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

void topo_ratelimit_init(topo_ratelimit *rl, double qps, double burst, uint64_t now_ns);
/* Takes one token at time now_ns and returns how many nanoseconds the caller
 * must wait before using it (0 when the bucket had one). */
uint64_t topo_ratelimit_reserve(topo_ratelimit *rl, uint64_t now_ns);

/* --- backoff (backoff.c) --------------------------------------------------- */

/* topo_http_rand and topo_http_backoff_ms: topo/http.h. */
/* Parses a Retry-After value in delta-seconds ("120"); an HTTP date or
 * anything else gives -1. Values are capped at cap_ms. Returns milliseconds. */
long topo_http_retry_after_ms(const char *value, long cap_ms);

/* --- retry policy (backoff.c) ---------------------------------------------- */

/* Non-zero for methods HTTP defines as idempotent (GET HEAD PUT DELETE
 * OPTIONS TRACE). */
int topo_http_method_idempotent(const char *method);
/* Non-zero when a response with this status should be retried. */
int topo_http_status_retriable(long status, int idempotent);

/* --- bearer token (http_token.c) ------------------------------------------- */

/* Reads a bearer token file (opened directly, at most
 * TOPO_MAX_CREDENTIAL_FILE bytes), trims surrounding whitespace and checks
 * it (topo_http_token_check). *out is malloc'd; free it with
 * topo_http_token_free. */
int topo_http_token_read(char **out, const char *path, topo_err *err);
/* A token must be non-empty visible ASCII without spaces (RFC 6750 b64token
 * is stricter; we only refuse what would break or inject into the header). */
int topo_http_token_check(const char *token, size_t len, topo_err *err);
/* Overwrites a NUL-terminated secret with zeros and frees it; NULL is a no-op. */
void topo_http_token_free(char *token);
/* Overwrites n bytes with zeros in a way the compiler does not remove. */
void topo_http_wipe(void *p, size_t n);

#endif
