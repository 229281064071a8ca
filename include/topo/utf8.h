/* UTF-8 as Go's unicode/utf8 and JSON want it: well-formed sequences only
 * (no overlongs, surrogates or values past U+10FFFF). */
#ifndef TOPO_UTF8_H
#define TOPO_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the well-formed UTF-8 sequence at s, a NUL-terminated
 * string, with its code point in *rune (may be NULL); 0 when the bytes at s
 * are not one (a NUL ends any sequence, so s is never read past it). */
size_t topo_utf8_decode(const char *s, uint32_t *rune);

/* The length of s (len bytes) cut to at most max bytes without splitting
 * a character: len when it fits, else the largest n <= max where s[n] is
 * no continuation byte (a message kept whole for jansson, which refuses
 * broken UTF-8). */
size_t topo_utf8_cut(const char *s, size_t len, size_t max);

#endif
