/* Owned string copies (topo/str.h): one implementation instead of a private
 * strdup per file (POSIX strndup is not C11). */
#include "topo/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *topo_strndup(const char *s, size_t n)
{
    if (s == NULL || n == SIZE_MAX)
        return NULL;
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

uint64_t topo_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

char *topo_strdup(const char *s)
{
    return s != NULL ? topo_strndup(s, strlen(s)) : NULL;
}

int topo_str_is_decimal(const char *s, int exponent)
{
    size_t digits = 0;
    while (*s >= '0' && *s <= '9')
        s++, digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (digits == 0)
        return 0;
    if (exponent && (*s == 'e' || *s == 'E')) {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}
