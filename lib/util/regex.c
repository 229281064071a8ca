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
 * glibc makes: m, or n + 1 for {n,}), *least its n, *unbounded whether it
 * is {n,}, and *next just past its '}'; 0 when it is not a bound (regcomp
 * judges it). */
static size_t bound_copies(const char *p, size_t i, size_t len, size_t *least, int *unbounded,
                           size_t *next)
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
    *least = n;
    *unbounded = comma && !mdigits;
    if (!comma)
        return n > 0 ? n : 1;
    if (!mdigits)
        return n + 1;
    return m > n ? m : (n > 0 ? n : 1);
}

/* Whether the atom at p[i] matches no character: an anchor, or one of
 * glibc's word-boundary and buffer escapes. */
static int zero_width(const char *p, size_t i, size_t len)
{
    if (p[i] == '^' || p[i] == '$')
        return 1;
    /* i + 1 < len: p[i + 1] is no NUL, which strchr would find */
    return p[i] == '\\' && i + 1 < len && strchr("bB<>`'", p[i + 1]) != NULL;
}

/* One level of groups as the scan goes: what its parts so far cost. */
typedef struct {
    size_t total;     /* copies of atoms in the group so far */
    size_t last;      /* copies in its last part (what a repetition repeats) */
    int rep;          /* repetitions applied to the last part */
    int inner;        /* the most repetitions applied to one part inside */
    int null_last;    /* the last part can match the empty string */
    int null_before;  /* the branch before the last part could */
    int null_branch;  /* the branch so far could */
    int null_group;   /* an earlier branch (before a '|') could */
} level;

/* Why compiling the pattern would cost too much, or NULL: the copies of
 * its atoms its repetitions make (saturated), the repetitions applied to
 * one part (stacked, or through the groups around it: glibc nests a star
 * per level, and the closures it computes over them grow faster than the
 * copies: "a*" and nine '+' took 0.13 s, three more seconds), a
 * repetition other than ? of a part that can match the empty string (the
 * closures glibc computes over such copies and stars reach through each
 * other: "(a*+){800}" took 3.7 s, "(a*){4000}" 0.6 s, and a pattern mixing a
 * few within every other bound 23 s; repeating such a part adds nothing a
 * plain bound cannot say), or groups nested too deep. */
static const char *too_costly(const char *p)
{
    size_t len = strlen(p);
    level lv[MAX_DEPTH];
    int d = 0;
    memset(&lv[0], 0, sizeof lv[0]);
    lv[0].null_branch = 1;
    for (size_t i = 0; i < len;) {
        char c = p[i];
        size_t next = i + 1, k = 0, least = 1;
        int unbounded = c == '*' || c == '+';
        level *l = &lv[d];
        if (c == '(') {
            if (d + 1 >= MAX_DEPTH)
                return "its groups nest too deep";
            l = &lv[++d];
            memset(l, 0, sizeof *l);
            l->null_branch = 1;
        } else if (c == ')' && d > 0) {
            int empty = l->null_group || l->null_branch;
            size_t g = cap(l->total + 1);
            int r = l->inner;
            l = &lv[--d];
            l->null_before = l->null_branch;
            l->null_last = empty;
            l->null_branch = l->null_branch && empty;
            l->last = g;
            l->total = cap(l->total + g);
            l->rep = r;
        } else if (c == '|') {
            l->null_group = l->null_group || l->null_branch;
            l->null_branch = 1;
            l->null_last = 0;
            l->last = 0;
            l->rep = 0;
        } else if (c == '+' || c == '*' || c == '?' ||
                   (c == '{' && (k = bound_copies(p, i, len, &least, &unbounded, &next)) > 0)) {
            if (++l->rep > TOPO_REGEX_MAX_NESTING)
                return "more repetitions (+ * ? {n,m}) apply to one part, stacked or through "
                       "groups, than " STRINGIFY(TOPO_REGEX_MAX_NESTING);
            if (c == '+') /* x+ is x x*: one more copy of x */
                k = 2;
            if (c == '*' || c == '?')
                least = 0;
            if (l->null_last && (unbounded || k > 1))
                return "it repeats a part that can match the empty string (as \"(a*)+\" or "
                       "\"(a?){3}\"; write \"a*\" or \"a{0,3}\"): only ? may apply to one";
            if (k > 1) {
                l->total = cap(l->total + mul(l->last, k - 1));
                l->last = mul(l->last, k);
            }
            if (least == 0) {
                l->null_last = 1;
                l->null_branch = l->null_before;
            }
        } else {
            int empty = zero_width(p, i, len);
            if (c == '[')
                next = skip_bracket(p, i, len);
            else if (c == '\\' && i + 1 < len)
                next = i + 2;
            l->null_before = l->null_branch;
            l->null_last = empty;
            l->null_branch = l->null_branch && empty;
            l->last = 1;
            l->rep = 0;
            l->total = cap(l->total + 1);
        }
        if (l->rep > l->inner)
            l->inner = l->rep;
        i = next;
        if (l->total > TOPO_REGEX_MAX_COPIES)
            break;
    }
    for (; d > 0; d--)
        lv[d - 1].total = cap(lv[d - 1].total + lv[d].total);
    if (lv[0].total > TOPO_REGEX_MAX_COPIES)
        return "its repetitions (+, {n,m}, nested or stacked) would compile to more than "
               STRINGIFY(TOPO_REGEX_MAX_COPIES) " copies of its parts";
    return NULL;
}

int topo_regex_compile(regex_t *re, const char *pattern, int cflags, char *why, size_t why_size)
{
    size_t len = strlen(pattern);
    if (!(cflags & REG_EXTENDED)) { /* the bounds below read ERE's syntax */
        snprintf(why, why_size, "not compiled as an extended expression");
        return -1;
    }
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
