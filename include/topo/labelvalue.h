/* Kubernetes label values from infrastructure names. Switch names such as
 * "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", NetBox rack names with spaces or
 * UUID-like clique ids must become label values (at most 63 characters,
 * alphanumeric at both ends, '-', '_' and '.' inside), deterministically:
 * the same input always gives the same value, on every run and machine,
 * because topo-sync compares the values it computes with those already on
 * the nodes.
 *
 * A domain's value depends on its own name (and scope) only, never on which
 * other domains exist, so adding a rack in the inventory relabels no other
 * rack. A valid value is kept as it is. Otherwise every other character
 * becomes '-', characters that may not end a value are trimmed from both
 * ends, the result is cut to leave room, and '-' and a short hash of the
 * raw name always follow ("rack 1" -> "rack-1-1dd1a01c21", whether or not a
 * "rack-1" exists; "rack-1" stays "rack-1").
 *
 * Names repeat under different parents in real inventories (a rack "R1" in
 * every site, an NVLink field "1" in every rack), and a nodeSelector may name
 * the rack without the site, so the value alone must tell them apart: a
 * domain named within a scope (topo_labelvalue_assign_scoped) always gets
 * the normalised name and the hash suffix of its identity, the key
 * "<decimal length of scope>:<scope><name>" ("R1-d968dd201c"), whether or
 * not another scope has the same name.
 *
 * Over a set of domains two different ones never share a value. What can
 * still meet (a valid name a source spelt like another's suffixed value, a
 * hash collision) is separated from the colliding domains alone: the
 * suffixed ones get the 16-digit suffix of their key; if that is not enough
 * the set is refused (TOPO_ECONFLICT). */
#ifndef TOPO_LABELVALUE_H
#define TOPO_LABELVALUE_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/limits.h"
#include "topo/pool.h"

/* Hex digits of the hash suffix ("-" plus these). */
#define TOPO_LABELVALUE_HASH_LEN 10

/* One unscoped raw name on its own into out (NUL-terminated): the value
 * topo_labelvalue_assign gives it unless another name collides with it.
 * Returns 1 when the value differs from raw (and then carries the hash
 * suffix), 0 when raw was already a valid value. */
int topo_labelvalue_normalize(char out[TOPO_MAX_LABEL_VALUE + 1], const char *raw);

/* Values for a set of raw names: out[i] (from pool) for raw[i]. Equal raw
 * names get equal values; different ones always different values. 0,
 * TOPO_ENOMEM, or TOPO_EINVALID for a NULL name. */
int topo_labelvalue_assign(const char **out, const char *const *raw, size_t n, topo_pool *pool,
                           topo_err *err) TOPO_MUST_CHECK;

/* The same over domains that are names within scopes: scope[i] (any text;
 * NULL: unscoped, as topo_labelvalue_assign) is where raw[i] is named, and
 * a scoped name is always suffixed. scope may be NULL (none scoped). Equal
 * (scope, name) pairs get equal values, different ones different values;
 * the same set in any order gives the same values. */
int topo_labelvalue_assign_scoped(const char **out, const char *const *raw,
                                  const char *const *scope, size_t n, topo_pool *pool,
                                  topo_err *err) TOPO_MUST_CHECK;

#endif
