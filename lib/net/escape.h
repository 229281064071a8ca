/* URL escaping for request paths and query values (RFC 3986), without curl:
 * used by the Kubernetes client and any other layer that builds API paths. */
#ifndef TOPO_NET_ESCAPE_H
#define TOPO_NET_ESCAPE_H

#include <stddef.h>

/* Percent-encodes the NUL-terminated src: every byte outside RFC 3986's
 * unreserved set (ALPHA DIGIT "-" "." "_" "~") becomes %XX (upper-case hex),
 * so the result is safe as one path segment or one query value. Like
 * snprintf: writes at most size - 1 bytes and a NUL when size > 0, and
 * returns the length the whole encoding needs (compare with size to detect
 * truncation). dst may be NULL when size is 0. */
size_t topo_http_escape(char *dst, size_t size, const char *src);

#endif
