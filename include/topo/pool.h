/* A bump-pointer arena: many small allocations, one free. Used per engine
 * call and for decoded inputs, so error paths never leak piecemeal. */
#ifndef TOPO_POOL_H
#define TOPO_POOL_H

#include <stdarg.h>
#include <stddef.h>

#include "topo/error.h" /* TOPO_PRINTF */

typedef struct topo_pool topo_pool;

/* Returns NULL when out of memory. */
topo_pool *topo_pool_create(void);
/* Frees every allocation made from the pool. NULL-safe. */
void topo_pool_free(topo_pool *pool);
/* Forgets all allocations but keeps the memory for the next ones. */
void topo_pool_clear(topo_pool *pool);
/* Aligned to max_align_t; NULL when out of memory or on overflow. */
void *topo_pool_alloc(topo_pool *pool, size_t size);
void *topo_pool_calloc(topo_pool *pool, size_t nmemb, size_t size);
char *topo_pool_strdup(topo_pool *pool, const char *s);
char *topo_pool_strndup(topo_pool *pool, const char *s, size_t n);
/* A formatted string in the pool, any length; NULL when out of memory or on
 * a formatting error. */
char *topo_pool_printf(topo_pool *pool, const char *fmt, ...) TOPO_PRINTF(2, 3);
char *topo_pool_vprintf(topo_pool *pool, const char *fmt, va_list ap) TOPO_PRINTF(2, 0);
/* Bytes currently held from the system (for benchmarks). */
size_t topo_pool_footprint(const topo_pool *pool);

#endif
