/* One UTF-8 decoder for the log sink's quoting and Go's strconv.Quote. */
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
