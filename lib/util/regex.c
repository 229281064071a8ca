/* Outside regular expressions compiled within bounds (topo/regex.h). */
#include "topo/regex.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 64
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* Saturating arithmetic: anything over the limit is the limit + 1. */
static size_t cap(size_t v)
{
    return v > TOPO_REGEX_MAX_COPIES ? TOPO_REGEX_MAX_COPIES + 1 : v;
}

static size_t mul(size_t a, size_t b)
{
    return a != 0 && b > (TOPO_REGEX_MAX_COPIES + 1) / a ? TOPO_REGEX_MAX_COPIES + 1 : cap(a * b);
}

/* After '[' at p[i]: the index just past the bracket expression's ']'
 * (its first ']', after an optional '^', is a member), or len. */
static size_t skip_bracket(const char *p, size_t i, size_t len)
{
    i++;
    if (i < len && p[i] == '^')
        i++;
    if (i < len && p[i] == ']')
        i++;
    while (i < len && p[i] != ']') {
        /* [:class:], [=equiv=], [.coll.] hold their own ']' */
        if (p[i] == '[' && i + 1 < len && strchr(":=.", p[i + 1]) != NULL) {
            const char *end = NULL;
            char close[3] = {p[i + 1], ']', '\0'};
            end = strstr(p + i + 2, close);
            i = end != NULL ? (size_t)(end - p) + 2 : len;
            continue;
        }
        i++;
    }
    return i < len ? i + 1 : len;
}

/* The count a {n}, {n,} or {n,m} at p[i] makes of its atom (the copies
 * glibc makes: m, or n + 1 for {n,}), and *next just past its '}'; 0 when
 * it is not a bound (regcomp judges it). */
static size_t bound_copies(const char *p, size_t i, size_t len, size_t *next)
{
    size_t n = 0, m = 0, j = i + 1;
    int digits = 0, comma = 0, mdigits = 0;
    for (; j < len && p[j] >= '0' && p[j] <= '9'; j++, digits++)
        n = cap(n * 10 + (size_t)(p[j] - '0'));
    if (j < len && p[j] == ',') {
        comma = 1;
        for (j++; j < len && p[j] >= '0' && p[j] <= '9'; j++, mdigits++)
            m = cap(m * 10 + (size_t)(p[j] - '0'));
    }
    if (!digits || j >= len || p[j] != '}')
        return 0;
    *next = j + 1;
    if (!comma)
        return n > 0 ? n : 1;
    if (!mdigits)
        return n + 1;
    return m > n ? m : (n > 0 ? n : 1);
}

/* Why compiling the pattern would cost too much, or NULL: the copies of
 * its atoms its repetitions make (saturated), the repetitions applied to
 * one part (stacked, or through the groups around it: glibc nests a star
 * per level, and the closures it computes over them grow faster than the
 * copies: "a*" and nine '+' took 0.13 s, three more seconds), or groups
 * nested too deep. */
static const char *too_costly(const char *p)
{
    size_t len = strlen(p), total[MAX_DEPTH], last[MAX_DEPTH];
    int rep[MAX_DEPTH], inner[MAX_DEPTH]; /* of the last part; the most inside the group */
    int d = 0;
    total[0] = last[0] = 0;
    rep[0] = inner[0] = 0;
    for (size_t i = 0; i < len;) {
        char c = p[i];
        size_t next = i + 1, k = 0;
        if (c == '(') {
            if (++d >= MAX_DEPTH)
                return "its groups nest too deep";
            total[d] = last[d] = 0;
            rep[d] = inner[d] = 0;
        } else if (c == ')' && d > 0) {
            size_t g = total[d] + 1;
            int r = inner[d];
            d--;
            last[d] = cap(g);
            total[d] = cap(total[d] + last[d]);
            rep[d] = r;
        } else if (c == '|') {
            last[d] = 0;
            rep[d] = 0;
        } else if (c == '+' || c == '*' || c == '?' ||
                   (c == '{' && (k = bound_copies(p, i, len, &next)) > 0)) {
            if (++rep[d] > TOPO_REGEX_MAX_NESTING)
                return "more repetitions (+ * ? {n,m}) apply to one part, stacked or through "
                       "groups, than " STRINGIFY(TOPO_REGEX_MAX_NESTING);
            if (c == '+') /* x+ is x x*: one more copy of x */
                k = 2;
            if (k > 1) {
                total[d] = cap(total[d] + mul(last[d], k - 1));
                last[d] = mul(last[d], k);
            }
        } else {
            if (c == '[')
                next = skip_bracket(p, i, len);
            else if (c == '\\' && i + 1 < len)
                next = i + 2;
            last[d] = 1;
            rep[d] = 0;
            total[d] = cap(total[d] + 1);
        }
        if (rep[d] > inner[d])
            inner[d] = rep[d];
        i = next;
        if (total[d] > TOPO_REGEX_MAX_COPIES)
            break;
    }
    while (d > 0)
        total[d - 1] = cap(total[d - 1] + total[d]), d--;
    if (total[0] > TOPO_REGEX_MAX_COPIES)
        return "its repetitions (+, {n,m}, nested or stacked) would compile to more than "
               STRINGIFY(TOPO_REGEX_MAX_COPIES) " copies of its parts";
    return NULL;
}

int topo_regex_compile(regex_t *re, const char *pattern, int cflags, char *why, size_t why_size)
{
    size_t len = strlen(pattern);
    if (len > TOPO_REGEX_MAX_LEN) {
        snprintf(why, why_size, "longer than %d characters", TOPO_REGEX_MAX_LEN);
        return -1;
    }
    const char *cost = too_costly(pattern);
    if (cost != NULL) {
        snprintf(why, why_size, "%s", cost);
        return -1;
    }
    int rc = regcomp(re, pattern, cflags);
    if (rc != 0)
        regerror(rc, NULL, why, why_size);
    return rc;
}
