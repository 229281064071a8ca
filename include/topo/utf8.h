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

/* 1 when s is NULL or well-formed UTF-8 throughout (what a JSON string can
 * carry), else 0. */
int topo_utf8_valid(const char *s);

/* The length of s (len bytes) cut to at most max bytes without splitting
 * a character: len when it fits, else the largest n <= max where s[n] is
 * no continuation byte (a message kept whole for jansson, which refuses
 * broken UTF-8). */
size_t topo_utf8_cut(const char *s, size_t len, size_t max);

/* src made safe to print on a terminal: every character a terminal acts on
 * is written as an escape, so text from a cluster object (a ConfigMap, a
 * label, a name) can neither move the cursor, recolour, clear the screen
 * nor start a new line that looks like ours. C0 controls become \n, \r,
 * \t or \xNN, DEL \x7f, C1 controls (U+0080..U+009F) \u00NN, the
 * bidirectional marks that reorder a line (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069) \uNNNN, and each byte of invalid
 * UTF-8 \xNN; everything else (printable ASCII,
 * well-formed UTF-8, the backslash) is kept. Like snprintf: writes at most
 * size - 1 bytes and a NUL (never half an escape or a character), returns
 * the length of the whole escaped text (at most 4 * strlen(src)). */
size_t topo_utf8_escape_controls(char *dst, size_t size, const char *src);

#endif
