/* A set of indices into a table the caller owns, found by a hash of the
 * entry each one names: it deduplicates records (a fabric's cables, a
 * dump's nodes) without a key string per record, 8 bytes a slot at most
 * half full. The caller hashes (topo_idxset_mix) and compares; an index
 * is stored once per add, whether or not an equal entry is there.
 *
 *   int32_t at = topo_idxset_find(set, h, same_cable, &probe, facts);
 *   if (at < 0) { push the record; topo_idxset_add(set, h, index); }
 */
#ifndef TOPO_IDXSET_H
#define TOPO_IDXSET_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"

typedef struct topo_idxset topo_idxset;

/* Room for `expected` indices before it grows; NULL when out of memory. */
topo_idxset *topo_idxset_create(size_t expected);
void topo_idxset_free(topo_idxset *set);
size_t topo_idxset_size(const topo_idxset *set);

/* Whether the entry at index equals the probe (payload: the caller's). */
typedef int (*topo_idxset_eq_fn)(uint32_t index, const void *probe, const void *payload);

/* The first index added under hash whose entry eq finds equal to probe,
 * or -1. */
int32_t topo_idxset_find(const topo_idxset *set, uint64_t hash, topo_idxset_eq_fn eq,
                         const void *probe, const void *payload);
/* Adds index (at most INT32_MAX, else TOPO_ELIMIT) under hash: 0, or
 * TOPO_ENOMEM. */
int topo_idxset_add(topo_idxset *set, uint64_t hash, uint32_t index) TOPO_MUST_CHECK;

/* A hash of h with one more value folded in (start from 0): for entries
 * made of integers. Stable, but only ever compared within one process. */
uint64_t topo_idxset_mix(uint64_t h, uint64_t value);

#endif
