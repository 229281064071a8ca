/* Owned string copies (malloc'd; the caller frees). NULL in, NULL out; NULL
 * also when out of memory, so callers that pass non-NULL check the result. */
#ifndef TOPO_STR_H
#define TOPO_STR_H

#include <stddef.h>

char *topo_strdup(const char *s);
/* The first n bytes of s (s need not be NUL-terminated within them), NUL
 * added. */
char *topo_strndup(const char *s, size_t n);

#endif
