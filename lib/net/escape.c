/* RFC 3986 percent-encoding (topo_http_escape in topo/http.h). */
#include "topo/http.h"

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

size_t topo_http_escape(char *dst, size_t size, const char *src)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p != '\0'; p++) {
        char enc[3];
        size_t k = 1;
        if (unreserved(*p)) {
            enc[0] = (char)*p;
        } else {
            enc[0] = '%';
            enc[1] = hex[*p >> 4];
            enc[2] = hex[*p & 15u];
            k = 3;
        }
        for (size_t i = 0; i < k; i++, n++)
            if (size > 0 && n < size - 1)
                dst[n] = enc[i];
    }
    if (size > 0)
        dst[n < size - 1 ? n : size - 1] = '\0';
    return n;
}
