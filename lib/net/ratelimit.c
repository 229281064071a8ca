/* Client-side rate limiting: a token bucket on the monotonic clock. */
#define _POSIX_C_SOURCE 200809L

#include "http_internal.h"

#include <errno.h>
#include <time.h>

uint64_t topo_http_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void topo_http_sleep_ns(uint64_t ns)
{
    struct timespec req, rem;
    if (ns == 0)
        return;
    req.tv_sec = (time_t)(ns / 1000000000u);
    req.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}

void topo_ratelimit_init(topo_ratelimit *rl, double qps, double burst, uint64_t now_ns)
{
    rl->qps = qps > 0 ? qps : 0;
    rl->burst = burst >= 1 ? burst : 1;
    rl->tokens = rl->burst;
    rl->last_ns = now_ns;
}

uint64_t topo_ratelimit_reserve(topo_ratelimit *rl, uint64_t now_ns)
{
    if (rl->qps <= 0)
        return 0;
    if (now_ns > rl->last_ns) {
        rl->tokens += (double)(now_ns - rl->last_ns) * rl->qps / 1e9;
        if (rl->tokens > rl->burst)
            rl->tokens = rl->burst;
        rl->last_ns = now_ns;
    }
    rl->tokens -= 1;
    if (rl->tokens >= 0)
        return 0;
    double wait_ns = -rl->tokens / rl->qps * 1e9;
    /* Round up: waking a hair early would find the bucket still short. */
    return (uint64_t)wait_ns + 1;
}
