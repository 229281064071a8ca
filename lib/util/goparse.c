/* Go's strconv.ParseBool / ParseInt / ParseUint (base 10) and
 * time.ParseDuration, written from Go's src/strconv/atob.go, atoi.go and
 * src/time/format.go so that topo accepts, refuses and reports exactly what
 * the Go components of a cluster do.
 *
 * Where Go's order of checks decides which error is reported, it is kept:
 * "99999999999999999999x" is out of range (the overflow is met before the
 * 'x'), and an empty string is a syntax error before a bad bit size is.
 *
 * Error texts quote the input as Go does. time's own quote() is reproduced
 * exactly (see time_quote). strconv.Quote is reproduced for ASCII and for
 * invalid UTF-8; valid non-ASCII characters are copied as they are except
 * the C1 controls (U+0080..U+009F, written \u00XX), where Go would also
 * escape the other characters unicode.IsPrint refuses (U+00A0, U+00AD,
 * U+2028, unassigned code points...): topo carries no Unicode tables for an
 * error message. */
#include "topo/goparse.h"
#include "topo/utf8.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* 1<<63: the magnitude bound of time.ParseDuration's uint64 accumulators
 * (-1<<63 ns is a valid duration, 1<<63 ns is not). */
#define DUR_LIMIT ((uint64_t)1 << 63)

static const char lowerhex[] = "0123456789abcdef";

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* ---- quoting for error messages ---- */

/* Bounded output. Go's messages have no length limit and ours do: a quote
 * that would not fit in the message ends with `..."` after its last whole
 * escape, so the message stays well formed. */
#define QUOTE_TAIL 5 /* ...", then NUL */

typedef struct quote_buf {
    char *p;
    size_t len;
    size_t cap; /* >= QUOTE_TAIL + 1 */
    bool full;
} quote_buf;

static void qb_put(quote_buf *b, const char *text, size_t n)
{
    if (b->full || n > b->cap - QUOTE_TAIL - b->len) {
        b->full = true;
        return;
    }
    memcpy(b->p + b->len, text, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void qb_hex_byte(quote_buf *b, unsigned char c)
{
    char e[4] = {'\\', 'x', lowerhex[c >> 4], lowerhex[c & 0xf]};
    qb_put(b, e, sizeof(e));
}

static void qb_open(quote_buf *b, char *buf, size_t cap)
{
    b->p = buf;
    b->len = 0;
    b->cap = cap;
    b->full = false;
    buf[0] = '\0';
    qb_put(b, "\"", 1);
}

/* Room was kept for the tail: this always fits. */
static char *qb_close(quote_buf *b)
{
    const char *tail = b->full ? "...\"" : "\"";
    size_t n = strlen(tail);
    memcpy(b->p + b->len, tail, n + 1);
    b->len += n;
    return b->p;
}

/* How much of the message a quote may take, given the length of the rest. */
static size_t quote_room(size_t rest)
{
    size_t min = QUOTE_TAIL + 2;
    return rest + min < TOPO_ERR_TEXT_MAX ? TOPO_ERR_TEXT_MAX - rest : min;
}

/* time's quote(): '"' and '\\' escaped, every byte below ' ' or at or above
 * 0x80 (so each byte of a non-ASCII character) written \xNN, the rest (DEL
 * included) as is. */
static char *time_quote(char *buf, size_t cap, const char *s, size_t n)
{
    quote_buf b;
    qb_open(&b, buf, cap);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < ' ' || c >= 0x80) {
            qb_hex_byte(&b, c);
            continue;
        }
        if (c == '"' || c == '\\')
            qb_put(&b, "\\", 1);
        qb_put(&b, &s[i], 1);
    }
    return qb_close(&b);
}

/* strconv.Quote, up to the Unicode tables (see the top of this file). */
static char *strconv_quote(char *buf, size_t cap, const char *s)
{
    static const char named[] = "\a\b\f\n\r\t\v";
    static const char letters[] = "abfnrtv";
    quote_buf b;
    qb_open(&b, buf, cap);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        if (c >= 0x80) {
            uint32_t r = 0;
            size_t n = topo_utf8_decode((const char *)p, &r);
            if (n == 0) {
                qb_hex_byte(&b, c);
                p++;
            } else if (r <= 0x9f) {
                char e[7] = {'\\', 'u', '0', '0', lowerhex[r >> 4], lowerhex[r & 0xf], '\0'};
                qb_put(&b, e, 6);
                p += n;
            } else {
                qb_put(&b, (const char *)p, n);
                p += n;
            }
            continue;
        }
        const char *nm = strchr(named, c); /* c is not NUL here */
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            qb_put(&b, e, 2);
        } else if (nm != NULL) {
            char e[2] = {'\\', letters[nm - named]};
            qb_put(&b, e, 2);
        } else if (c < ' ' || c == 0x7f) {
            qb_hex_byte(&b, c);
        } else {
            qb_put(&b, (const char *)p, 1);
        }
        p++;
    }
    return qb_close(&b);
}

char *topo_go_quote(topo_pool *pool, const char *s)
{
    if (s == NULL)
        s = "";
    size_t n = strlen(s);
    /* At most 4 bytes per input byte (\xNN), the opening quote, and the tail
     * room qb_put keeps: never cut. */
    if (n > (SIZE_MAX - QUOTE_TAIL - 2) / 4)
        return NULL;
    size_t cap = 4 * n + 2 + QUOTE_TAIL;
    char *buf = topo_pool_alloc(pool, cap);
    if (buf == NULL)
        return NULL;
    return strconv_quote(buf, cap, s);
}

/* strconv's NumError text: strconv.<fn>: parsing "<s>": <reason>. */
static int num_error(topo_err *err, const char *fn, const char *s, const char *reason)
{
    if (err == NULL)
        return TOPO_EINVALID;
    char q[TOPO_ERR_TEXT_MAX];
    size_t rest = strlen("strconv.: parsing : ") + strlen(fn) + strlen(reason);
    return topo_err_set(err, TOPO_EINVALID, "strconv.%s: parsing %s: %s", fn,
                        strconv_quote(q, quote_room(rest), s), reason);
}

static int bit_size_error(topo_err *err, const char *fn, const char *s, int bits)
{
    char reason[32];
    snprintf(reason, sizeof(reason), "invalid bit size %d", bits);
    return num_error(err, fn, s, reason);
}

/* ---- strconv ---- */

int topo_go_parse_bool(const char *s, int *out, topo_err *err)
{
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
    if (s == NULL)
        s = "";
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return num_error(err, "ParseBool", s, "invalid syntax");
}

typedef enum { NUM_OK, NUM_SYNTAX, NUM_RANGE } num_status;

/* ParseUint's loop for base 10 over a non-empty s: the first non-digit is a
 * syntax error, unless an overflow comes first; on overflow *out is max, as
 * in Go. */
static num_status scan_decimal(const char *s, uint64_t max, uint64_t *out)
{
    const uint64_t cutoff = UINT64_MAX / 10u + 1u; /* n * 10 overflows from here */
    uint64_t n = 0;
    for (const char *p = s; *p; p++) {
        if (!is_digit(*p))
            return NUM_SYNTAX;
        if (n >= cutoff) {
            *out = max;
            return NUM_RANGE;
        }
        n *= 10u;
        uint64_t n1 = n + (uint64_t)(*p - '0');
        if (n1 < n || n1 > max) {
            *out = max;
            return NUM_RANGE;
        }
        n = n1;
    }
    *out = n;
    return NUM_OK;
}

static bool bits_ok(int bits)
{
    return bits >= 0 && bits <= 64;
}

/* Largest unsigned value of `bits` bits (1..64); 1<<64 would be undefined. */
static uint64_t uint_max(int bits)
{
    return bits == 64 ? UINT64_MAX : ((uint64_t)1 << (unsigned)bits) - 1u;
}

int topo_go_parse_uint(const char *s, int bits, uint64_t *out, topo_err *err)
{
    if (s == NULL)
        s = "";
    if (*s == '\0')
        return num_error(err, "ParseUint", s, "invalid syntax");
    if (!bits_ok(bits))
        return bit_size_error(err, "ParseUint", s, bits);
    if (bits == 0)
        bits = 64;
    uint64_t n = 0;
    switch (scan_decimal(s, uint_max(bits), &n)) {
    case NUM_OK:
        *out = n;
        return 0;
    case NUM_RANGE:
        return num_error(err, "ParseUint", s, "value out of range");
    case NUM_SYNTAX:
    default:
        return num_error(err, "ParseUint", s, "invalid syntax");
    }
}

int topo_go_parse_int(const char *s, int bits, int64_t *out, topo_err *err)
{
    if (s == NULL)
        s = "";
    const char *digits = s;
    bool neg = false;
    if (*digits == '+' || *digits == '-')
        neg = *digits++ == '-';
    /* Covers "" and a lone sign: Go's ParseUint sees "" either way. */
    if (*digits == '\0')
        return num_error(err, "ParseInt", s, "invalid syntax");
    if (!bits_ok(bits))
        return bit_size_error(err, "ParseInt", s, bits);
    if (bits == 0)
        bits = 64;

    uint64_t un = 0;
    if (scan_decimal(digits, uint_max(bits), &un) == NUM_SYNTAX)
        return num_error(err, "ParseInt", s, "invalid syntax");
    /* An unsigned overflow left un at the unsigned maximum, which the signed
     * checks below refuse, as Go's ParseInt relies on. (At 1 bit they do not:
     * Go's ParseInt("-2", 10, 1) returns -1 without error, and so do we.) */
    uint64_t cutoff = (uint64_t)1 << (unsigned)(bits - 1);
    if ((!neg && un >= cutoff) || (neg && un > cutoff))
        return num_error(err, "ParseInt", s, "value out of range");
    /* un <= 1<<63 here; negate without forming -(1<<63) from a positive. */
    *out = neg && un > 0 ? -(int64_t)(un - 1u) - 1 : (int64_t)un;
    return 0;
}

/* ---- time.ParseDuration ---- */

typedef struct dur_unit {
    const char *name;
    uint64_t ns;
} dur_unit;

static const dur_unit dur_units[] = {
    {"ns", 1u},
    {"us", 1000u},
    {"\xc2\xb5s", 1000u}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000u}, /* U+03BC Greek small letter mu */
    {"ms", 1000000u},
    {"s", UINT64_C(1000000000)},
    {"m", UINT64_C(60000000000)},
    {"h", UINT64_C(3600000000000)},
};

static uint64_t dur_unit_ns(const char *u, size_t n)
{
    for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++)
        if (strlen(dur_units[i].name) == n && memcmp(dur_units[i].name, u, n) == 0)
            return dur_units[i].ns;
    return 0;
}

static int dur_error(topo_err *err, const char *what, const char *s)
{
    if (err == NULL)
        return TOPO_EINVALID;
    char q[TOPO_ERR_TEXT_MAX];
    size_t rest = strlen("time:  ") + strlen(what);
    return topo_err_set(err, TOPO_EINVALID, "time: %s %s", what,
                        time_quote(q, quote_room(rest), s, strlen(s)));
}

/* The unit may take half the message, the duration what is left. */
static int dur_unknown_unit(topo_err *err, const char *u, size_t n, const char *s)
{
    if (err == NULL)
        return TOPO_EINVALID;
    char qu[TOPO_ERR_TEXT_MAX], qs[TOPO_ERR_TEXT_MAX];
    size_t rest = strlen("time: unknown unit  in duration ");
    time_quote(qu, quote_room(rest + TOPO_ERR_TEXT_MAX / 2), u, n);
    time_quote(qs, quote_room(rest + strlen(qu)), s, strlen(s));
    return topo_err_set(err, TOPO_EINVALID, "time: unknown unit %s in duration %s", qu, qs);
}

/* Go's structure, step for step: a sign, then groups of integer part,
 * optional fraction and unit, summed as magnitudes up to 1<<63.
 *
 * The fraction's contribution is computed in float64 as Go does,
 * uint64(float64(f) * (float64(unit) / scale)), and so gives the same
 * nanosecond as Go where the exact value would round differently
 * ("0.05909789484000h" is 212752421423ns in Go, one less than exact). The
 * double is always finite and within [0, unit] (f < scale), so the
 * conversion is defined. */
int topo_go_parse_duration(const char *s, int64_t *out_ns, topo_err *err)
{
    const char *orig = s != NULL ? s : "";
    const char *p = orig;
    uint64_t d = 0;
    bool neg = false;

    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (strcmp(p, "0") == 0) {
        *out_ns = 0;
        return 0;
    }
    if (*p == '\0')
        return dur_error(err, "invalid duration", orig);
    while (*p != '\0') {
        uint64_t v = 0, f = 0;
        double scale = 1; /* the value of this group is v + f / scale */

        if (*p != '.' && !is_digit(*p))
            return dur_error(err, "invalid duration", orig);
        /* [0-9]*: an overflow of 1<<63 is an error. */
        const char *start = p;
        for (; is_digit(*p); p++) {
            if (v > DUR_LIMIT / 10u)
                return dur_error(err, "invalid duration", orig);
            v = v * 10u + (uint64_t)(*p - '0');
            if (v > DUR_LIMIT)
                return dur_error(err, "invalid duration", orig);
        }
        bool pre = p != start;
        /* (\.[0-9]*)?: digits past what fits are read and ignored. */
        bool post = false;
        if (*p == '.') {
            const char *fstart = ++p;
            bool overflow = false;
            for (; is_digit(*p); p++) {
                if (overflow)
                    continue;
                if (f > (DUR_LIMIT - 1u) / 10u) {
                    overflow = true;
                    continue;
                }
                uint64_t y = f * 10u + (uint64_t)(*p - '0');
                if (y > DUR_LIMIT) {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10;
            }
            post = p != fstart;
        }
        if (!pre && !post) /* ".s", "-.s" */
            return dur_error(err, "invalid duration", orig);

        /* The unit is everything up to the next '.' or digit. */
        const char *u = p;
        while (*p != '\0' && *p != '.' && !is_digit(*p))
            p++;
        size_t ulen = (size_t)(p - u);
        if (ulen == 0)
            return dur_error(err, "missing unit in duration", orig);
        uint64_t unit = dur_unit_ns(u, ulen);
        if (unit == 0)
            return dur_unknown_unit(err, u, ulen, orig);
        if (v > DUR_LIMIT / unit)
            return dur_error(err, "invalid duration", orig);
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > DUR_LIMIT)
                return dur_error(err, "invalid duration", orig);
        }
        d += v; /* both <= 1<<63: no wrap */
        if (d > DUR_LIMIT)
            return dur_error(err, "invalid duration", orig);
    }
    if (neg) {
        *out_ns = d > 0 ? -(int64_t)(d - 1u) - 1 : 0;
        return 0;
    }
    if (d > (uint64_t)INT64_MAX)
        return dur_error(err, "invalid duration", orig);
    *out_ns = (int64_t)d;
    return 0;
}
