/* Kubernetes resource quantities, parsed exactly (no floating point).
 *
 * Grammar (k8s.io/apimachinery/pkg/api/resource, ParseQuantity):
 *
 *   quantity := [+-] number suffix
 *   number   := digits | digits "." | digits "." digits | "." digits
 *   suffix   := "" | n u m k M G T P E          (decimal SI)
 *             | Ki Mi Gi Ti Pi Ei                (binary SI)
 *             | (e|E) [+-] digits                (decimal exponent)
 *
 * Differences from Kubernetes, all on inputs no real object carries:
 * - a number needs at least one digit: Kubernetes reads "m", "+" and "." as 0;
 * - a value beyond int64 is an error (TOPO_ELIMIT) instead of being capped;
 * - negative values round toward +inf (ceil). Kubernetes' int64 fast path
 *   rounds them away from zero ("-1.5" has Value() -2 there, -1 here). Like
 *   ParseQuantity we first round a magnitude up to a whole nano-unit.
 *
 * The value is held as significant decimal digits D, a power of two and a
 * power of ten (value = D * 2^exp2 * 10^exp10); scaling multiplies the digits
 * by 2^exp2 in base 10 and reads the integer part and what the fraction needs
 * for rounding. */
#include "topo/quantity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "topo/limits.h"

/* 2^60 (Ei) has 19 decimal digits: the most a binary suffix adds. */
#define QTY_BINARY_DIGITS 19
/* Exponents are clamped to this magnitude once parsed; any non-zero value
 * beyond it is far outside int64 either way. */
#define QTY_EXP_CLAMP ((int64_t)1 << 40)
/* How much of the offending text an error message quotes. */
#define QTY_QUOTE_MAX 64
/* The milli and whole-unit scales, as powers of ten; nano is 9. */
#define QTY_SCALE_MILLI 3
#define QTY_SCALE_UNIT 0
#define QTY_SCALE_NANO 9

typedef struct qty {
    bool negative;
    /* Least significant digit first; ndigits == 0 means the value is 0. */
    unsigned char digits[TOPO_MAX_QUANTITY_DIGITS + QTY_BINARY_DIGITS + 1];
    size_t ndigits;
    int64_t exp10;
    unsigned exp2; /* 0, 10, ..., 60 */
} qty;

typedef struct qty_suffix {
    const char *text;
    int exp10;
    unsigned exp2;
} qty_suffix;

static const qty_suffix suffixes[] = {
    {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},
    {"M", 6, 0},  {"G", 9, 0},  {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
    {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50},
    {"Ei", 0, 60},
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int64_t clamp_exp(int64_t e)
{
    if (e > QTY_EXP_CLAMP)
        return QTY_EXP_CLAMP;
    if (e < -QTY_EXP_CLAMP)
        return -QTY_EXP_CLAMP;
    return e;
}

/* "e" or "E", an optional sign, then at least one digit, within int64 as
 * strconv.ParseInt requires. */
static int parse_exponent(int64_t *out, const char *s, const char *text, topo_err *err)
{
    const char *p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!is_digit(*p))
        return topo_err_set(err, TOPO_EINVALID, "invalid quantity '%.*s': unknown suffix '%.*s'",
                            QTY_QUOTE_MAX, text, QTY_QUOTE_MAX, s);
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; is_digit(*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10u)
            return topo_err_set(err, TOPO_EINVALID,
                                "invalid quantity '%.*s': exponent '%.*s' out of range",
                                QTY_QUOTE_MAX, text, QTY_QUOTE_MAX, s);
        v = v * 10u + d;
    }
    if (*p != '\0')
        return topo_err_set(err, TOPO_EINVALID, "invalid quantity '%.*s': unknown suffix '%.*s'",
                            QTY_QUOTE_MAX, text, QTY_QUOTE_MAX, s);
    /* Clamp before negating so INT64_MIN needs no special case. */
    int64_t mag = v > (uint64_t)QTY_EXP_CLAMP ? QTY_EXP_CLAMP : (int64_t)v;
    *out = neg ? -mag : mag;
    return 0;
}

static int parse_suffix(qty *q, const char *s, const char *text, topo_err *err)
{
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strcmp(s, suffixes[i].text) == 0) {
            q->exp10 += suffixes[i].exp10;
            q->exp2 = suffixes[i].exp2;
            return 0;
        }
    }
    if ((s[0] == 'e' || s[0] == 'E') && s[1] != '\0') {
        int64_t e = 0;
        int error = parse_exponent(&e, s, text, err);
        if (error < 0)
            return error;
        q->exp10 = clamp_exp(q->exp10 + e);
        return 0;
    }
    return topo_err_set(err, TOPO_EINVALID, "invalid quantity '%.*s': unknown suffix '%.*s'",
                        QTY_QUOTE_MAX, text, QTY_QUOTE_MAX, s);
}

/* Reads sign, digits and suffix into q: D * 10^exp10 with D free of leading
 * and trailing zeros, and exp2 from a binary suffix. */
static int qty_parse(qty *q, const char *text, topo_err *err)
{
    unsigned char msd_first[TOPO_MAX_QUANTITY_DIGITS];
    size_t n = 0;
    int64_t pending_zeros = 0; /* zeros seen after the first significant digit */
    int64_t frac_digits = 0;
    size_t seen_digits = 0;
    bool in_fraction = false;

    memset(q, 0, sizeof(*q));
    if (text == NULL)
        return topo_err_set(err, TOPO_EINVALID, "invalid quantity: NULL");
    if (text[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "invalid quantity '': empty");

    const char *p = text;
    if (*p == '+' || *p == '-')
        q->negative = *p++ == '-';
    for (;; p++) {
        if (*p == '.' && !in_fraction) {
            in_fraction = true;
            continue;
        }
        if (!is_digit(*p))
            break;
        seen_digits++;
        if (in_fraction && frac_digits < QTY_EXP_CLAMP)
            frac_digits++;
        if (*p == '0') {
            if (n > 0 && pending_zeros < QTY_EXP_CLAMP)
                pending_zeros++;
            continue;
        }
        if (n + (size_t)pending_zeros + 1 > TOPO_MAX_QUANTITY_DIGITS)
            return topo_err_set(err, TOPO_ELIMIT,
                                "quantity '%.*s' has more than %d significant digits",
                                QTY_QUOTE_MAX, text, TOPO_MAX_QUANTITY_DIGITS);
        for (; pending_zeros > 0; pending_zeros--)
            msd_first[n++] = 0;
        msd_first[n++] = (unsigned char)(*p - '0');
    }
    if (seen_digits == 0)
        return topo_err_set(err, TOPO_EINVALID, "invalid quantity '%.*s': expected a number",
                            QTY_QUOTE_MAX, text);

    /* Trailing zeros left pending scale the value by 10 each. */
    q->exp10 = pending_zeros - frac_digits;
    int error = parse_suffix(q, p, text, err);
    if (error < 0)
        return error;
    for (size_t i = 0; i < n; i++)
        q->digits[i] = msd_first[n - 1 - i];
    q->ndigits = n;
    if (n == 0)
        q->negative = false;
    return 0;
}

/* Returns q * 10^scale as an integer, rounded as described at the top, or
 * TOPO_ELIMIT when it does not fit in int64. */
static int qty_scale(int64_t *out, const qty *q, int scale, const char *unit, const char *text,
                     topo_err *err)
{
    unsigned char d[sizeof(q->digits)];
    size_t n = q->ndigits;

    if (n == 0) {
        *out = 0;
        return 0;
    }
    memcpy(d, q->digits, n);
    for (unsigned k = 0; k < q->exp2; k += 10) {
        unsigned carry = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned v = (unsigned)d[i] * 1024u + carry;
            d[i] = (unsigned char)(v % 10u);
            carry = v / 10u;
        }
        while (carry > 0) {
            d[n++] = (unsigned char)(carry % 10u);
            carry /= 10u;
        }
    }

    /* Digit i sits at decimal place i + e; places < 0 are the fraction. */
    int64_t e = q->exp10 + scale;
    int64_t int_len = (int64_t)n + e;
    if (int_len > 20)
        goto overflow;

    uint64_t whole = 0;
    for (int64_t place = int_len - 1; place >= 0; place--) {
        int64_t i = place - e;
        unsigned digit = (i >= 0 && i < (int64_t)n) ? d[i] : 0u;
        if (whole > (UINT64_MAX - digit) / 10u)
            goto overflow;
        whole = whole * 10u + digit;
    }

    /* Fraction digits are d[0 .. frac_end); when int_len < 0 they follow
     * -int_len zeros. */
    size_t frac_end = e >= 0 ? 0 : (-e >= (int64_t)n ? n : (size_t)-e);
    bool fraction = false;
    for (size_t i = 0; i < frac_end && !fraction; i++)
        fraction = d[i] != 0;

    bool bump;
    if (!q->negative) {
        bump = fraction; /* ceil */
    } else {
        /* Rounding the magnitude up to a nano-unit first, then toward +inf
         * to 10^-scale, adds one to the magnitude exactly when the fraction
         * exceeds 1 - 10^-k: its first k digits are 9 and more follow. */
        int64_t k = QTY_SCALE_NANO - scale;
        bump = false;
        if (int_len >= 0 && frac_end > (size_t)k) {
            bool nines = true;
            for (int64_t j = 0; j < k && nines; j++)
                nines = d[frac_end - 1 - (size_t)j] == 9;
            if (nines) {
                for (size_t i = 0; i < frac_end - (size_t)k && !bump; i++)
                    bump = d[i] != 0;
            }
        }
    }
    if (bump) {
        if (whole == UINT64_MAX)
            goto overflow;
        whole++;
    }
    if (q->negative) {
        if (whole > (uint64_t)INT64_MAX + 1u)
            goto overflow;
        *out = whole == 0 ? 0 : -(int64_t)(whole - 1u) - 1;
    } else {
        if (whole > (uint64_t)INT64_MAX)
            goto overflow;
        *out = (int64_t)whole;
    }
    return 0;

overflow:
    return topo_err_set(err, TOPO_ELIMIT, "quantity '%.*s' overflows int64 %s", QTY_QUOTE_MAX,
                        text, unit);
}

static int parse_scaled(int64_t *out, const char *text, int scale, const char *unit,
                        topo_err *err)
{
    qty q;
    int64_t v = 0;
    int error;

    if (out == NULL)
        return topo_err_set(err, TOPO_EINVALID, "quantity: no output");
    if ((error = qty_parse(&q, text, err)) < 0)
        return error;
    if ((error = qty_scale(&v, &q, scale, unit, text, err)) < 0)
        return error;
    *out = v;
    return 0;
}

int topo_quantity_parse_milli(int64_t *out, const char *text, topo_err *err)
{
    return parse_scaled(out, text, QTY_SCALE_MILLI, "milli-units", err);
}

int topo_quantity_parse_value(int64_t *out, const char *text, topo_err *err)
{
    return parse_scaled(out, text, QTY_SCALE_UNIT, "units", err);
}

int topo_quantity_parse_resource(int64_t *out, const char *resource_name, const char *text,
                                 topo_err *err)
{
    if (resource_name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "quantity: no resource name");
    int error = strcmp(resource_name, "cpu") == 0 ? topo_quantity_parse_milli(out, text, err)
                                                  : topo_quantity_parse_value(out, text, err);
    if (error < 0)
        topo_err_wrap(err, "resource '%.*s'", QTY_QUOTE_MAX, resource_name);
    return error;
}
