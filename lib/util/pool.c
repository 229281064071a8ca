/* Bump-pointer arena in chained blocks. Large requests get a block of their
 * own so they do not waste the tail of the current one. */
#include "topo/pool.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL_BLOCK_SIZE (64u * 1024u)
#define POOL_ALIGN (alignof(max_align_t))

typedef struct pool_block {
    struct pool_block *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    alignas(max_align_t) unsigned char data[];
} pool_block;

struct topo_pool {
    pool_block *head;
    pool_block *spare; /* blocks kept by topo_pool_clear for reuse */
    size_t footprint;
};

static pool_block *block_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(pool_block))
        return NULL;
    pool_block *b = malloc(sizeof(pool_block) + size);
    if (b == NULL)
        return NULL;
    b->next = NULL;
    b->size = size;
    b->used = 0;
    return b;
}

topo_pool *topo_pool_create(void)
{
    topo_pool *pool = calloc(1, sizeof(*pool));
    if (pool == NULL)
        return NULL;
    pool->head = block_new(POOL_BLOCK_SIZE);
    if (pool->head == NULL) {
        free(pool);
        return NULL;
    }
    pool->footprint = POOL_BLOCK_SIZE;
    return pool;
}

static void free_chain(pool_block *b)
{
    while (b != NULL) {
        pool_block *next = b->next;
        free(b);
        b = next;
    }
}

void topo_pool_free(topo_pool *pool)
{
    if (pool == NULL)
        return;
    free_chain(pool->head);
    free_chain(pool->spare);
    free(pool);
}

/* Keeps every block for reuse: a pool cleared between calls of the same
 * shape (one engine call per request) then allocates from memory it already
 * holds instead of going back to malloc and fresh pages each time. */
void topo_pool_clear(topo_pool *pool)
{
    if (pool == NULL || pool->head == NULL)
        return;
    pool_block *b = pool->head;
    while (b->next != NULL) {
        pool_block *next = b->next;
        b->used = 0;
        b->next = pool->spare;
        pool->spare = b;
        b = next;
    }
    b->used = 0;
    pool->head = b;
}

/* A spare block of at least size bytes, unlinked, or a new one. */
static pool_block *take_block(topo_pool *pool, size_t size)
{
    for (pool_block **pp = &pool->spare; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->size >= size) {
            pool_block *b = *pp;
            *pp = b->next;
            b->next = NULL;
            return b;
        }
    }
    pool_block *b = block_new(size);
    if (b != NULL)
        pool->footprint += size;
    return b;
}

void *topo_pool_alloc(topo_pool *pool, size_t size)
{
    if (pool == NULL)
        return NULL;
    if (size == 0)
        size = 1;
    if (size > SIZE_MAX - POOL_ALIGN)
        return NULL;
    size_t rounded = (size + POOL_ALIGN - 1) & ~(POOL_ALIGN - 1);
    pool_block *b = pool->head;
    if (b->size - b->used < rounded) {
        size_t bsize = rounded > POOL_BLOCK_SIZE / 4 ? rounded : POOL_BLOCK_SIZE;
        pool_block *nb = take_block(pool, bsize);
        if (nb == NULL)
            return NULL;
        if (bsize == rounded && b->size - b->used >= POOL_ALIGN) {
            /* Dedicated block: keep allocating from the current one. */
            nb->next = b->next;
            b->next = nb;
            nb->used = rounded;
            return nb->data;
        }
        nb->next = b;
        pool->head = nb;
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += rounded;
    return p;
}

void *topo_pool_calloc(topo_pool *pool, size_t nmemb, size_t size)
{
    if (size != 0 && nmemb > SIZE_MAX / size)
        return NULL;
    void *p = topo_pool_alloc(pool, nmemb * size);
    if (p != NULL)
        memset(p, 0, nmemb * size);
    return p;
}

char *topo_pool_strndup(topo_pool *pool, const char *s, size_t n)
{
    if (s == NULL)
        return NULL;
    char *p = topo_pool_alloc(pool, n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *topo_pool_vprintf(topo_pool *pool, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n < 0 ? NULL : topo_pool_alloc(pool, (size_t)n + 1);
    if (s != NULL)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

char *topo_pool_printf(topo_pool *pool, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = topo_pool_vprintf(pool, fmt, ap);
    va_end(ap);
    return s;
}

char *topo_pool_strdup(topo_pool *pool, const char *s)
{
    if (s == NULL)
        return NULL;
    return topo_pool_strndup(pool, s, strlen(s));
}

size_t topo_pool_footprint(const topo_pool *pool)
{
    return pool == NULL ? 0 : pool->footprint;
}
