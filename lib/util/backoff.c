/* Exponential backoff with equal jitter (topo/backoff.h). */
#include "topo/backoff.h"

#include "topo/rand.h"

long topo_backoff_ms(long base_ms, long cap_ms, int retry, uint64_t *rng)
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
    return d - half + (long)(topo_rand_next(rng) % ((uint64_t)half + 1));
}
