/* topo-sync's view of the cluster's Node objects, kept by a reflector
 * (topo/reflector.h): per node only what the controller reads — its uid,
 * resourceVersion, labels and annotations — so that 10,000 nodes cost a few
 * megabytes, not the hundreds a full list holds.
 *
 * The generation moves only when the set of nodes or a node's labels or
 * annotations change: status heartbeats (most MODIFIED events) do not wake
 * the reconcile loop. A relist replaces the view in one step when its last
 * page arrived; until the first list ends the view is not synced.
 *
 * Threads: the reflector's thread feeds it through the handler; any thread
 * reads a snapshot (a mutex guards the view). */
#ifndef TOPO_SYNC_NODES_H
#define TOPO_SYNC_NODES_H

#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/reflector.h"

typedef struct sync_nodes sync_nodes;

int sync_nodes_create(sync_nodes **out, topo_err *err);
void sync_nodes_free(sync_nodes *n);

/* The reflector callbacks feeding n (payload = n). */
const topo_reflector_handler *sync_nodes_handler(void);

/* Whether a list ended, and the generation (0 before that). */
int sync_nodes_synced(const sync_nodes *n);
uint64_t sync_nodes_generation(const sync_nodes *n);

/* A copy of the view: an object name -> {"uid", "resourceVersion",
 * "labels", "annotations"}; *generation_out (may be NULL) the generation
 * it is. NULL when out of memory. */
json_t *sync_nodes_snapshot(sync_nodes *n, uint64_t *generation_out);

/* Blocks until the generation differs from seen, the deadline (a
 * CLOCK_MONOTONIC time in ms, as topo_leader_now_ms) passes, or
 * sync_nodes_wake is called. Returns the generation. */
uint64_t sync_nodes_wait(sync_nodes *n, uint64_t seen, int64_t deadline_ms);
/* Ends every wait now (a source changed, a stop was asked). Any thread. */
void sync_nodes_wake(sync_nodes *n);

#endif
