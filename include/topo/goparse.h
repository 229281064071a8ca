/* Go standard-library parsing (strconv.ParseBool, ParseInt, ParseUint with
 * base 10, time.ParseDuration), reproduced exactly: Kubernetes objects and
 * API-server requests carry values that Go code will read with these
 * functions, so topo must accept and refuse the same strings.
 *
 * Every function writes *out only on success. Errors are TOPO_EINVALID with
 * Go's own message text, e.g. `strconv.ParseInt: parsing "x": invalid syntax`
 * or `time: unknown unit "d" in duration "1d"`. */
#ifndef TOPO_GOPARSE_H
#define TOPO_GOPARSE_H

#include <stdint.h>

#include "topo/error.h"
#include "topo/pool.h"

/* strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" give 1; "0", "f",
 * "F", "FALSE", "false", "False" give 0; nothing else is accepted. */
int topo_go_parse_bool(const char *s, int *out, topo_err *err) TOPO_MUST_CHECK;

/* strconv.ParseInt(s, 10, bits): an optional '+' or '-' and at least one
 * ASCII digit, within the range of a signed integer of `bits` bits (1..64;
 * 0 means 64). No spaces, no underscores, no base prefix. */
int topo_go_parse_int(const char *s, int bits, int64_t *out, topo_err *err) TOPO_MUST_CHECK;

/* strconv.ParseUint(s, 10, bits): ASCII digits only (no sign), within
 * `bits` bits (1..64; 0 means 64). */
int topo_go_parse_uint(const char *s, int bits, uint64_t *out, topo_err *err) TOPO_MUST_CHECK;

/* time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+ or a lone "0", with
 * units ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h; "1h30m", "-1.5h",
 * ".5s". The result, in nanoseconds, must fit int64. */
int topo_go_parse_duration(const char *s, int64_t *out_ns, topo_err *err) TOPO_MUST_CHECK;

/* strconv.Quote(s) (Go's %q of a string), in pool memory, whole; NULL when
 * out of memory. ASCII and invalid UTF-8 are escaped exactly as Go does;
 * valid non-ASCII characters are copied, except the C1 controls (written
 * \u0080..\u009f), where Go also escapes the few others unicode.IsPrint
 * refuses (U+00A0, U+00AD, U+2028, ...). NULL s quotes as "". */
char *topo_go_quote(topo_pool *pool, const char *s);

#endif
