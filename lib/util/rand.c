/* splitmix64 and what is built on it (topo/rand.h). */
#include "topo/rand.h"

#include <string.h>

uint64_t topo_rand_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double topo_rand_unit(uint64_t *state)
{
    return (double)(topo_rand_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t topo_rand_below(uint64_t *state, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Draws below the largest multiple of n are uniform modulo n. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = topo_rand_next(state);
    while (v >= limit);
    return v % n;
}

void topo_rand_shuffle(uint64_t *state, void *items, size_t n, size_t size)
{
    unsigned char tmp[64], *p = items;
    if (size > sizeof tmp)
        return;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)topo_rand_below(state, i);
        if (j == i - 1)
            continue;
        memcpy(tmp, p + (i - 1) * size, size);
        memcpy(p + (i - 1) * size, p + j * size, size);
        memcpy(p + j * size, tmp, size);
    }
}
