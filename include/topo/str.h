/* Owned string copies (malloc'd; the caller frees). NULL in, NULL out; NULL
 * also when out of memory, so callers that pass non-NULL check the result. */
#ifndef TOPO_STR_H
#define TOPO_STR_H

#include <stddef.h>
#include <stdint.h>

char *topo_strdup(const char *s);
/* The first n bytes of s (s need not be NUL-terminated within them), NUL
 * added. */
char *topo_strndup(const char *s, size_t n);

/* FNV-1a, 64 bits (prime 1099511628211, offset basis 1469598103934665603:
 * not the standard basis, and kept so), of a NUL-terminated string: the string maps' hash and
 * the short suffix that keeps normalised label values apart. Stable across
 * builds and machines (label values derived from it must not change). */
uint64_t topo_str_hash(const char *s);

/* Whether all of s is a plain decimal number: digits with an optional
 * fraction (at least one digit in all), and with `exponent` an optional
 * e or E, sign and digits; no sign, blank, inf, nan or hex, which strtod
 * would take. The options, the trace files' seconds and public traces'
 * numbers all mean this by "a number". */
int topo_str_is_decimal(const char *s, int exponent);

#endif
