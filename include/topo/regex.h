/* Compiling a regular expression that comes from outside (configuration,
 * flags): POSIX regcomp, after refusing patterns whose compiled form would
 * be too large. glibc copies a repeated subexpression once per `+` and per
 * count of `{n,m}`, so stacked or nested repetitions grow it exponentially:
 * "x(a+)" followed by twenty `+` took gigabytes to compile, and "a*" followed
 * by a dozen took seconds (both found by fuzz_sync_config); repeating a part
 * that can match the empty string costs far more ("(a*+){800}" took 3.7 s),
 * so only ? may apply to such a part. */
#ifndef TOPO_REGEX_H
#define TOPO_REGEX_H

#include <regex.h>
#include <stddef.h>

/* The longest pattern accepted, the most copies of its atoms that its
 * repetitions may make, and the most repetitions that may apply to one part
 * (stacked, as in "a+*", or through groups, as in "(a+)*"). */
#define TOPO_REGEX_MAX_LEN 1024
#define TOPO_REGEX_MAX_COPIES 4096
#define TOPO_REGEX_MAX_NESTING 6

/* regcomp(re, pattern, cflags) when the pattern is within the limits above
 * (read as an extended expression: without REG_EXTENDED in cflags it is
 * refused).
 * 0, or nonzero with why (NUL-terminated, why_size > 0) saying what is
 * wrong: the limit, or regcomp's own message; re is then not to be freed. */
int topo_regex_compile(regex_t *re, const char *pattern, int cflags, char *why, size_t why_size);

#endif
