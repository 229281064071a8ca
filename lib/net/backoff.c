/* Retry policy: which failures are retried, and how long to wait. */
#include "http_internal.h"

#include <limits.h>
#include <string.h>

#include "topo/rand.h"

uint64_t topo_http_rand(uint64_t *state)
{
    return topo_rand_next(state);
}

long topo_http_backoff_ms(long base_ms, long cap_ms, int retry, uint64_t *rng)
{
    if (base_ms < 1)
        base_ms = 1;
    if (cap_ms < base_ms)
        cap_ms = base_ms;
    long d = base_ms;
    for (int i = 0; i < retry && d < cap_ms; i++)
        d = d > cap_ms / 2 ? cap_ms : d * 2;
    if (d > cap_ms)
        d = cap_ms;
    long half = d / 2;
    return d - half + (long)(topo_http_rand(rng) % ((uint64_t)half + 1));
}

long topo_http_retry_after_ms(const char *value, long cap_ms)
{
    long seconds = 0;
    const char *p = value;
    if (p == NULL)
        return -1;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (seconds <= LONG_MAX / 10000)
            seconds = seconds * 10 + (*p - '0');
    }
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '\0')
        return -1;
    if (seconds > cap_ms / 1000)
        return cap_ms;
    return seconds * 1000;
}

int topo_http_method_idempotent(const char *method)
{
    static const char *const idempotent[] = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"};
    for (size_t i = 0; i < sizeof(idempotent) / sizeof(idempotent[0]); i++) {
        if (strcmp(method, idempotent[i]) == 0)
            return 1;
    }
    return 0;
}

int topo_http_status_retriable(long status, int idempotent)
{
    if (status == 429)
        return 1;
    /* 501 Not Implemented will not change on a retry. */
    return idempotent && status >= 500 && status <= 599 && status != 501;
}
