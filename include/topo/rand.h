/* A seeded pseudo-random generator: splitmix64 (Steele, Lea, Flood 2014,
 * "Fast splittable pseudorandom number generators"). Its state is one
 * uint64_t the caller owns, so a generator costs nothing to create and the
 * same seed gives the same sequence on every platform (integer arithmetic;
 * the doubles are exact conversions). For simulations, synthetic clusters and
 * retry jitter; never for anything secret. */
#ifndef TOPO_RAND_H
#define TOPO_RAND_H

#include <stddef.h>
#include <stdint.h>

/* The next 64 random bits; advances *state. */
uint64_t topo_rand_next(uint64_t *state);
/* Uniform in [0, 1), 53 bits. */
double topo_rand_unit(uint64_t *state);
/* Uniform in [0, n) without modulo bias; 0 when n is 0. */
uint64_t topo_rand_below(uint64_t *state, uint64_t n);
/* Shuffles n elements of size bytes in place (Fisher-Yates); size at most 64. */
void topo_rand_shuffle(uint64_t *state, void *items, size_t n, size_t size);

#endif
