/* Retry policy: which failures are retried, and what Retry-After asks for
 * (the wait itself: topo/backoff.h). */
#include "http_internal.h"

#include <limits.h>
#include <string.h>

long net_http_retry_after_ms(const char *value, long cap_ms)
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

int net_http_method_idempotent(const char *method)
{
    static const char *const idempotent[] = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"};
    for (size_t i = 0; i < sizeof(idempotent) / sizeof(idempotent[0]); i++) {
        if (strcmp(method, idempotent[i]) == 0)
            return 1;
    }
    return 0;
}

int net_http_status_retriable(long status, int idempotent)
{
    if (status == 429)
        return 1;
    /* 501 Not Implemented will not change on a retry. */
    return idempotent && status >= 500 && status <= 599 && status != 501;
}
