/* Bounded growable buffers (topo/buf.h) and array growth (topo/array.h). */
#include "topo/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"

static size_t limit_of(const topo_buf *b)
{
    return b->max ? b->max : SIZE_MAX - 1;
}

int topo_buf_reserve(topo_buf *b, size_t more)
{
    if (b->error)
        return b->error;
    if (more > limit_of(b) - b->len) {
        b->error = TOPO_ELIMIT;
        return b->error;
    }
    size_t need = b->len + more + 1; /* the NUL */
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    /* never allocate far past the maximum: a bounded buffer near its bound
     * holds max + 1 bytes, not twice that */
    if (cap > limit_of(b) + 1)
        cap = limit_of(b) + 1 < need ? need : limit_of(b) + 1;
    char *p = realloc(b->ptr, cap);
    if (p == NULL) {
        b->error = TOPO_ENOMEM;
        return b->error;
    }
    if (b->ptr == NULL)
        p[0] = '\0';
    b->ptr = p;
    b->cap = cap;
    return 0;
}

void topo_buf_grown(topo_buf *b, size_t n)
{
    if (b->error || b->ptr == NULL || n > b->cap - b->len - 1)
        return;
    b->len += n;
    b->ptr[b->len] = '\0';
}

int topo_buf_put(topo_buf *b, const void *data, size_t n)
{
    int rc = topo_buf_reserve(b, n);
    if (rc != 0)
        return rc;
    if (n > 0)
        memcpy(b->ptr + b->len, data, n);
    b->len += n;
    b->ptr[b->len] = '\0';
    return 0;
}

int topo_buf_puts(topo_buf *b, const char *s)
{
    return topo_buf_put(b, s, strlen(s));
}

int topo_buf_putc(topo_buf *b, char c)
{
    return topo_buf_put(b, &c, 1);
}

int topo_buf_vprintf(topo_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    int rc = n < 0 ? TOPO_EINVALID : topo_buf_reserve(b, (size_t)n);
    if (rc == 0) {
        vsnprintf(b->ptr + b->len, b->cap - b->len, fmt, again);
        b->len += (size_t)n;
    } else if (b->error == 0) {
        b->error = rc;
    }
    va_end(again);
    return rc;
}

int topo_buf_printf(topo_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = topo_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *topo_buf_take(topo_buf *b, size_t *len)
{
    char *p = NULL;
    if (b->error == 0 && topo_buf_reserve(b, 0) == 0) {
        p = b->ptr;
        if (len != NULL)
            *len = b->len;
        b->ptr = NULL;
    }
    topo_buf_dispose(b);
    if (p == NULL && len != NULL)
        *len = 0;
    return p;
}

void topo_buf_clear(topo_buf *b)
{
    b->len = 0;
    b->error = 0;
    if (b->ptr != NULL)
        b->ptr[0] = '\0';
}

void topo_buf_dispose(topo_buf *b)
{
    if (b == NULL)
        return;
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->error = 0;
}

/* cap doubled (from 8) until it holds want elements of elem_size bytes;
 * 0 when the size in bytes would overflow. */
static size_t grown_cap(size_t cap, size_t want, size_t elem_size)
{
    size_t ncap = cap ? cap : 8;
    while (ncap < want) {
        if (ncap > SIZE_MAX / 2)
            return 0;
        ncap *= 2;
    }
    if (elem_size != 0 && ncap > SIZE_MAX / elem_size)
        return 0;
    return ncap;
}

int topo_array_reserve(void **items, size_t *cap, size_t want, size_t elem_size)
{
    if (want <= *cap)
        return 0;
    size_t ncap = grown_cap(*cap, want, elem_size);
    if (ncap == 0)
        return TOPO_ELIMIT;
    void *p = realloc(*items, ncap * elem_size);
    if (p == NULL)
        return TOPO_ENOMEM;
    *items = p;
    *cap = ncap;
    return 0;
}

int topo_pool_array_reserve(topo_pool *pool, void **items, size_t *cap, size_t n, size_t want,
                            size_t elem_size)
{
    if (want <= *cap)
        return 0;
    size_t ncap = grown_cap(*cap, want, elem_size);
    if (ncap == 0)
        return TOPO_ELIMIT;
    void *p = topo_pool_calloc(pool, ncap, elem_size);
    if (p == NULL)
        return TOPO_ENOMEM;
    if (n > 0)
        memcpy(p, *items, n * elem_size);
    *items = p;
    *cap = ncap;
    return 0;
}
