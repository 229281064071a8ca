/* Request deadlines (request_deadline.h). */
#define _POSIX_C_SOURCE 200809L
#include "request_deadline.h"

#include <stdatomic.h>
#include <time.h>

#include "topo/goparse.h"
#include "topo/log.h"

long long wh_request_timeout_ms(const char *timeout)
{
    int64_t ns = 0;
    if (timeout == NULL)
        return -1;
    if (topo_go_parse_duration(timeout, &ns, NULL) != 0 || ns < 0) {
        topo_log(TOPO_LOG_DEBUG, "request: timeout=%.40s ignored: not a duration", timeout);
        return -1;
    }
    return (long long)(ns / 1000000);
}

/* Decimal digits only, at most 15 (milliseconds until the year 33658). */
static int parse_unix_ms(const char *s, int64_t *out)
{
    int64_t v = 0;
    int n = 0;
    for (; s[n] >= '0' && s[n] <= '9'; n++) {
        if (n == 15)
            return -1;
        v = v * 10 + (s[n] - '0');
    }
    if (n == 0 || s[n] != '\0')
        return -1;
    *out = v;
    return 0;
}

int64_t wh_request_deadline(int64_t start_ns, long long timeout_ms, long long cap_ms,
                            const char *deadline_unix_ms, int64_t now_ns, int64_t now_unix_ms)
{
    static atomic_int warned;
    long long budget_ms = timeout_ms > 0 && timeout_ms < cap_ms ? timeout_ms : cap_ms;
    int64_t deadline = start_ns > 0 ? start_ns + budget_ms * 1000000LL : 0;
    int64_t at = 0;
    if (deadline_unix_ms == NULL)
        return deadline;
    if (parse_unix_ms(deadline_unix_ms, &at) < 0) {
        topo_log(TOPO_LOG_DEBUG, "request: %s=%.40s ignored: not milliseconds since the epoch",
                 WH_DEADLINE_PARAM, deadline_unix_ms);
        return deadline;
    }
    int64_t left_ms = at - WH_DEADLINE_SKEW_MS - now_unix_ms;
    if (left_ms > WH_DEADLINE_PLAUSIBLE_MS || left_ms < -WH_DEADLINE_PLAUSIBLE_MS) {
        if (atomic_exchange(&warned, 1) == 0)
            topo_log(TOPO_LOG_WARN,
                     "request: a forward's %s is %lld s from this replica's clock: ignored (the "
                     "replicas' clocks disagree; its relative timeout still holds; logged once)",
                     WH_DEADLINE_PARAM, (long long)(left_ms / 1000));
        return deadline;
    }
    int64_t abs_deadline = now_ns + left_ms * 1000000LL;
    return deadline == 0 || abs_deadline < deadline ? abs_deadline : deadline;
}

int64_t wh_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
