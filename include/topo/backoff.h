/* How long to wait before a retry: one policy for every loop that retries or
 * repeats after a failure (the HTTP client, the reflector, topo-sync's source
 * refreshes and rounds), so that they all back off alike. */
#ifndef TOPO_BACKOFF_H
#define TOPO_BACKOFF_H

#include <stdint.h>

/* The delay before retry number `retry` (0 for the first retry): with
 * d = min(cap_ms, base_ms * 2^retry), a value in [d/2, d] ("equal jitter":
 * retries of many clients spread out, none retries immediately). The jitter
 * comes from *rng (topo/rand.h; seed it with anything that differs between
 * processes). base_ms below 1 counts as 1, cap_ms below base_ms as base_ms. */
long topo_backoff_ms(long base_ms, long cap_ms, int retry, uint64_t *rng);

#endif
