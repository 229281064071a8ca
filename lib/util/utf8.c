/* One UTF-8 decoder for the log sink's quoting and Go's strconv.Quote,
 * and the escaping of text for a terminal. */
#include "topo/utf8.h"

size_t topo_utf8_decode(const char *str, uint32_t *rune)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xbf; /* bounds of the second byte */
    size_t n;
    if (c < 0x80) {
        n = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n > 1 && (s[1] < lo || s[1] > hi))
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    if (rune != NULL) {
        uint32_t r = n == 1 ? c : (uint32_t)c & (0xffu >> (n + 1));
        for (size_t i = 1; i < n; i++)
            r = (r << 6) | ((uint32_t)s[i] & 0x3fu);
        *rune = r;
    }
    return n;
}

size_t topo_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* The invisible marks that reorder a terminal line (the "Trojan Source"
 * characters): a name could show as another. */
static int is_bidi_control(uint32_t r)
{
    return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) ||
           (r >= 0x2066 && r <= 0x2069);
}

size_t topo_utf8_escape_controls(char *dst, size_t size, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0, full = 0; /* written; the whole text's length */
    const char *p = src;
    while (*p != '\0') {
        char esc[8];
        const char *piece = esc;
        size_t k;
        uint32_t r = 0;
        size_t len = topo_utf8_decode(p, &r);
        unsigned char c = (unsigned char)*p;
        if (len == 0) { /* one byte of invalid UTF-8 */
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15u];
            k = 4;
            len = 1;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\', esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            k = 2;
        } else if (r < 0x20 || r == 0x7f) {
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[r >> 4], esc[3] = hex[r & 15u];
            k = 4;
        } else if ((r >= 0x80 && r <= 0x9f) || is_bidi_control(r)) {
            esc[0] = '\\', esc[1] = 'u', esc[2] = hex[r >> 12], esc[3] = hex[(r >> 8) & 15u],
            esc[4] = hex[(r >> 4) & 15u], esc[5] = hex[r & 15u];
            k = 6;
        } else {
            piece = p;
            k = len;
        }
        if (full == n && size > 0 && n + k <= size - 1) {
            for (size_t i = 0; i < k; i++)
                dst[n + i] = piece[i];
            n += k;
        }
        full += k;
        p += len;
    }
    if (size > 0)
        dst[n] = '\0';
    return full;
}

int topo_utf8_valid(const char *s)
{
    if (s == NULL)
        return 1;
    while (*s != '\0') {
        size_t n = topo_utf8_decode(s, NULL);
        if (n == 0)
            return 0;
        s += n;
    }
    return 1;
}
