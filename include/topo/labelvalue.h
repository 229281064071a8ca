/* Kubernetes label values from infrastructure names. Switch names such as
 * "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", NetBox rack names with spaces or
 * UUID-like clique ids must become label values (at most 63 characters,
 * alphanumeric at both ends, '-', '_' and '.' inside), deterministically:
 * the same input always gives the same value, on every run and machine,
 * because topo-sync compares the values it computes with those already on
 * the nodes.
 *
 * A valid value is kept as it is. Otherwise every other character becomes
 * '-', characters that may not end a value are trimmed from both ends, and
 * when that alone cannot give a value (too long, or nothing left) the value
 * is cut and ends in '-' and a short hash of the raw name. Over a set of
 * names (topo_labelvalue_assign), two different names never share a value:
 * those changed by the normalisation get the hash suffix too.
 *
 * Names repeat under different parents in real inventories (a rack "R1" in
 * every site, an NVLink field "1" in every rack): there a domain is a name
 * within a scope (topo_labelvalue_assign_scoped). A name that occurs under
 * one scope only keeps the value above, so values of unique names never
 * change; a name that occurs under two or more scopes gives each of its
 * domains the normalised name and the hash suffix of that domain's identity,
 * the key "<decimal length of scope>:<scope><name>" ("R1-3fa2..."), so each
 * domain's value depends on its own scope and name, the same every round. */
#ifndef TOPO_LABELVALUE_H
#define TOPO_LABELVALUE_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/limits.h"
#include "topo/pool.h"

/* Hex digits of the hash suffix ("-" plus these). */
#define TOPO_LABELVALUE_HASH_LEN 10

/* One raw name on its own into out (NUL-terminated). Returns 1 when the
 * value differs from raw, 0 when raw was already a valid value. */
int topo_labelvalue_normalize(char out[TOPO_MAX_LABEL_VALUE + 1], const char *raw);

/* Values for a set of raw names: out[i] (from pool) for raw[i]. Equal raw
 * names get equal values; different ones always different values. 0,
 * TOPO_ENOMEM, or TOPO_EINVALID for a NULL name. */
int topo_labelvalue_assign(const char **out, const char *const *raw, size_t n, topo_pool *pool,
                           topo_err *err) TOPO_MUST_CHECK;

/* The same over domains that are names within scopes: scope[i] (any text;
 * NULL: unscoped, as topo_labelvalue_assign) is where raw[i] is named.
 * scope may be NULL (none scoped). Equal (scope, name) pairs get equal
 * values, different ones different values. */
int topo_labelvalue_assign_scoped(const char **out, const char *const *raw,
                                  const char *const *scope, size_t n, topo_pool *pool,
                                  topo_err *err) TOPO_MUST_CHECK;

#endif
