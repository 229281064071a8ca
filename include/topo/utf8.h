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

#endif
