/* Growable arrays with overflow-checked growth. A typed array is three
 * fields in the caller's struct (or a TOPO_ARRAY(T) of its own):
 *
 *   TOPO_ARRAY(topo_resource) reqs = TOPO_ARRAY_INIT;
 *   if (TOPO_ARRAY_PUSH(&reqs, r) != 0) goto cleanup;   // TOPO_ENOMEM / TOPO_ELIMIT
 *   ... reqs.items[i], reqs.n ...
 *   free(reqs.items);
 */
#ifndef TOPO_ARRAY_H
#define TOPO_ARRAY_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/pool.h"

#define TOPO_ARRAY(T)                                                                        \
    struct {                                                                                 \
        T *items;                                                                            \
        size_t n, cap;                                                                       \
    }
#define TOPO_ARRAY_INIT {NULL, 0, 0}

/* Makes *items hold at least `want` elements of elem_size bytes, doubling
 * (from 8); *cap is updated. 0, TOPO_ENOMEM, or TOPO_ELIMIT when the size
 * in bytes would overflow. Elements already there are kept; on failure
 * nothing changes. */
int topo_array_reserve(void **items, size_t *cap, size_t want, size_t elem_size) TOPO_MUST_CHECK;

/* The same for an array in a pool: the grown array is a new zeroed block
 * of the pool that takes the first n elements (the old block stays in the
 * pool until it is cleared). */
int topo_pool_array_reserve(topo_pool *pool, void **items, size_t *cap, size_t n, size_t want,
                            size_t elem_size) TOPO_MUST_CHECK;

/* Room for one more element of the array a (a TOPO_ARRAY or a struct with
 * items/n/cap): 0 or a topo code. */
#define TOPO_ARRAY_GROW(a)                                                                   \
    ((a)->n < (a)->cap ? 0                                                                   \
                       : topo_array_reserve((void **)&(a)->items, &(a)->cap, (a)->n + 1,      \
                                            sizeof(*(a)->items)))
/* Appends v (an expression of the element type): 0, or TOPO_ENOMEM when it
 * could not grow (nothing appended). */
#define TOPO_ARRAY_PUSH(a, v)                                                                \
    (TOPO_ARRAY_GROW(a) != 0 ? TOPO_ENOMEM : ((a)->items[(a)->n++] = (v), 0))

#endif
