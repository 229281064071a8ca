/* A live snapshot: the engine's view of the cluster kept current from watch
 * events, for many reader threads. Pod and reservation changes are applied
 * in place (they only move capacity); node changes, which reshape the domain
 * tree, build a new snapshot beside the published one and swap it in. Either
 * way a batch becomes visible at once, at topo_live_commit, and a reader
 * between topo_live_acquire and topo_live_release always sees one consistent
 * snapshot.
 *
 * Threads: any number of readers. The writer side may be called from
 * several threads (the filler's, the webhook's request threads): an internal
 * writer mutex is taken by every writer call, by topo_live_commit and by
 * topo_live_get_stats, so calls never interleave. A batch is shared: a
 * commit publishes every pending change, whichever thread made it. Readers
 * never take the writer mutex. */
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

/* --- writer side (any thread, serialised); changes are pending until commit,
 * except reserve_now/unreserve_now --- */

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

/* Like upsert_reserved, but visible at once: the entry is recorded (later
 * rebuilds charge it) and charged on the published snapshot under the
 * write lock, bumping the generation, without publishing any other pending
 * change. Replacing an id applies the difference (the old charge out, the
 * new one in). The leaf domain must be in the published snapshot: otherwise
 * TOPO_ENOTFOUND and nothing changes (a node change not yet committed is
 * not seen). count 0 is unreserve_now. An id last set by upsert_reserved is
 * replaced too, but its old charge leaves only with the next commit (until
 * then both are held). A reservation whose nodes later vanish is kept and
 * charged again when its domain comes back. */
int topo_live_reserve_now(topo_live *live, const char *id, const char *const *values,
                          size_t nvalues, int32_t count, const topo_resource *requests,
                          size_t nrequests, topo_err *err);
/* Removes an id made by reserve_now at once; one made by upsert_reserved
 * leaves with the next commit (as delete_reserved); unknown ids are
 * ignored. */
int topo_live_unreserve_now(topo_live *live, const char *id, topo_err *err);

/* --- reader side (any thread) --- */

/* The current snapshot, held until topo_live_release; never NULL. Readers
 * must not hold it across a long wait: commits wait for them. */
const topo_snapshot *topo_live_acquire(topo_live *live);
void topo_live_release(topo_live *live, const topo_snapshot *snap);
/* Increases with every commit that changed anything. */
uint64_t topo_live_generation(topo_live *live);
/* Increases with every published change that may have given capacity back:
 * usage removed or replaced by a different one (a pod gone, finished or
 * changed, a reservation released or shrunk) or nodes changed. While it
 * stays the same, usage only grew: a request that did not fit still does
 * not (the ungater skips such PodSets). */
uint64_t topo_live_freed(topo_live *live);

typedef struct topo_live_stats {
    uint64_t commits;
    uint64_t rebuilds;      /* commits that reshaped the tree */
    uint64_t applied;       /* in-place pod/reservation changes */
    size_t nodes;
    size_t pods;
    size_t reserved;        /* batched and immediate reservations */
} topo_live_stats;
void topo_live_get_stats(topo_live *live, topo_live_stats *out);

#endif
