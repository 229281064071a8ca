/* Client-side rate limiting: a token bucket on the monotonic clock
 * (topo/clock.h; the caller passes the time). */
#include "http_internal.h"

void net_ratelimit_init(topo_ratelimit *rl, double qps, double burst, uint64_t now_ns)
{
    rl->qps = qps > 0 ? qps : 0;
    rl->burst = burst >= 1 ? burst : 1;
    rl->tokens = rl->burst;
    rl->last_ns = now_ns;
}

uint64_t net_ratelimit_reserve(topo_ratelimit *rl, uint64_t now_ns)
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
