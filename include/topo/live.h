/* A live snapshot: the engine's view of the cluster kept current from watch
 * events, for many reader threads. Pod and reservation changes are applied
 * in place (they only move capacity); node changes, which reshape the domain
 * tree, build a new snapshot beside the published one and swap it in. Either
 * way a batch becomes visible at once, at topo_live_commit, and a reader
 * between topo_live_acquire and topo_live_release always sees one consistent
 * snapshot. One writer thread; any number of readers. */
#ifndef TOPO_LIVE_H
#define TOPO_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/model.h"

typedef struct topo_live topo_live;

/* opts are copied. The first published snapshot is empty. */
int topo_live_create(topo_live **out, const topo_snapshot_opts *opts, topo_err *err);
void topo_live_free(topo_live *live);

/* --- writer side (one thread); changes are pending until commit --- */

/* Adds or replaces a node (all of its fields are copied). An update that
 * changes none of them (a heartbeat) is a no-op. */
int topo_live_upsert_node(topo_live *live, const topo_node_spec *node, topo_err *err);
/* Removes a node; unknown names are ignored. */
int topo_live_delete_node(topo_live *live, const char *name, topo_err *err);
/* Adds or replaces a pod's usage: `charged` says whether it counts (bound,
 * not terminal, and not accounted for by a reservation). node_name may be
 * NULL for an unbound pod. */
int topo_live_upsert_pod(topo_live *live, const char *uid, const char *node_name, int charged,
                         const topo_resource *requests, size_t nrequests, topo_err *err);
int topo_live_delete_pod(topo_live *live, const char *uid, topo_err *err);
/* Adds or replaces TAS usage held under an id (a reservation's unclaimed
 * slots on one leaf domain: values as topo_snapshot_add_tas_usage takes). */
int topo_live_upsert_reserved(topo_live *live, const char *id, const char *const *values,
                              size_t nvalues, int32_t count, const topo_resource *requests,
                              size_t nrequests, topo_err *err);
int topo_live_delete_reserved(topo_live *live, const char *id, topo_err *err);
/* Publishes every change since the last commit, atomically. */
int topo_live_commit(topo_live *live, topo_err *err);

/* --- reader side (any thread) --- */

/* The current snapshot, held until topo_live_release; never NULL. Readers
 * must not hold it across a long wait: commits wait for them. */
const topo_snapshot *topo_live_acquire(topo_live *live);
void topo_live_release(topo_live *live, const topo_snapshot *snap);
/* Increases with every commit that changed anything. */
uint64_t topo_live_generation(topo_live *live);

typedef struct topo_live_stats {
    uint64_t commits;
    uint64_t rebuilds;      /* commits that reshaped the tree */
    uint64_t applied;       /* in-place pod/reservation changes */
    size_t nodes;
    size_t pods;
    size_t reserved;
} topo_live_stats;
void topo_live_get_stats(topo_live *live, topo_live_stats *out);

#endif
