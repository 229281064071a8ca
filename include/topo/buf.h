/* A bounded growable byte buffer, NUL-terminated, for building text (a
 * request URL, a log line, /metrics) or collecting a body: each instance has
 * a maximum, and the first failure (past the maximum, or out of memory)
 * sticks, so a sequence of appends is checked once at the end and a
 * half-built text is never used.
 *
 *   topo_buf b = TOPO_BUF_INIT(TOPO_MAX_HTTP_URL);
 *   topo_buf_puts(&b, base);
 *   topo_buf_printf(&b, "/namespaces/%s", ns);
 *   char *url = topo_buf_take(&b, NULL);   // NULL when an append failed
 */
#ifndef TOPO_BUF_H
#define TOPO_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "topo/error.h"

typedef struct topo_buf {
    char *ptr;  /* NUL-terminated once anything was appended; NULL before */
    size_t len; /* bytes held, without the NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* most bytes it may hold (0: no bound but SIZE_MAX) */
    int error;  /* 0, or the first failure: TOPO_ELIMIT, TOPO_ENOMEM */
} topo_buf;

#define TOPO_BUF_INIT(max_bytes) {NULL, 0, 0, (max_bytes), 0}

/* Appends n bytes. 0, or the buffer's sticky error (nothing appended). */
int topo_buf_put(topo_buf *b, const void *data, size_t n);
int topo_buf_puts(topo_buf *b, const char *s);
int topo_buf_putc(topo_buf *b, char c);
int topo_buf_printf(topo_buf *b, const char *fmt, ...) TOPO_PRINTF(2, 3);
int topo_buf_vprintf(topo_buf *b, const char *fmt, va_list ap) TOPO_PRINTF(2, 0);

/* Room for `more` bytes after len (and the NUL) without another allocation:
 * for a reader that writes into ptr + len, then calls topo_buf_grown. */
int topo_buf_reserve(topo_buf *b, size_t more);
/* Counts n bytes written at ptr + len (after topo_buf_reserve). */
void topo_buf_grown(topo_buf *b, size_t n);

/* The text (malloc'd, NUL-terminated, "" when nothing was appended) and its
 * length into *len (may be NULL); the caller frees it. NULL when an append
 * failed (the memory is freed). Either way b is empty and reusable. */
char *topo_buf_take(topo_buf *b, size_t *len);
/* Empties b, keeping its memory and its maximum; clears the error. */
void topo_buf_clear(topo_buf *b);
/* Frees the memory; b is empty (its maximum kept). NULL-safe. */
void topo_buf_dispose(topo_buf *b);

#endif
