/* topo-sync's view of the cluster's Node objects, kept by a reflector
 * (topo/reflector.h): per node only what the controller reads — its uid and
 * the labels and annotations it is told to keep (sync_nodes_keep: the owned
 * ones, and the labels the GPU facts are read from) — so that 10,000 nodes
 * cost a few megabytes, not the hundreds a full list holds.
 *
 * The generation moves only when the set of nodes, a node's uid or a kept
 * label or annotation changes: status heartbeats and other labels (GFD's
 * nvidia.com/gfd.timestamp, rewritten every minute) do not wake the
 * reconcile loop. A relist replaces the view in one step when its last page
 * arrived; until the first list ends the view is not synced.
 *
 * Threads: the reflector's thread feeds it through the handler; any thread
 * takes a snapshot, an object of its own (a mutex guards the view) whose
 * node values it shares with the view: read them, never change them. */
#ifndef TOPO_SYNC_NODES_H
#define TOPO_SYNC_NODES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/reflector.h"

typedef struct sync_nodes sync_nodes;

/* What the view keeps of a node's labels and of its annotations: the keys
 * under one of the prefixes (the whole prefix, topo_labelowner_under), equal
 * to one of the keys or, for labels with label_topograph, topograph's
 * (topo_labelowner_topograph_key). Borrowed: the strings must outlive the
 * view. */
typedef struct sync_nodes_keep {
    const char *const *label_prefixes;
    size_t nlabel_prefixes;
    const char *const *label_keys;
    size_t nlabel_keys;
    int label_topograph;
    const char *const *annotation_prefixes;
    size_t nannotation_prefixes;
    const char *const *annotation_keys;
    size_t nannotation_keys;
} sync_nodes_keep;

/* keep NULL: every label and annotation. */
int sync_nodes_create(sync_nodes **out, const sync_nodes_keep *keep, topo_err *err);
void sync_nodes_free(sync_nodes *n);

/* The reflector callbacks feeding n (payload = n). */
const topo_reflector_handler *sync_nodes_handler(void);

/* Whether a list ended, and the generation (0 before that). */
int sync_nodes_synced(const sync_nodes *n);
uint64_t sync_nodes_generation(const sync_nodes *n);

/* A copy of the view: an object name -> {"uid", "labels", "annotations"},
 * those values shared read-only (a node's is replaced, never edited);
 * *generation_out (may be NULL) the generation it is. NULL when out of
 * memory. */
json_t *sync_nodes_snapshot(sync_nodes *n, uint64_t *generation_out);

/* Blocks until the generation differs from seen, the deadline (a
 * monotonic time in ms, topo_clock_ms) passes, or
 * sync_nodes_wake is called. Returns the generation. */
uint64_t sync_nodes_wait(sync_nodes *n, uint64_t seen, int64_t deadline_ms);
/* Ends every wait now (a source changed, a stop was asked). Any thread. */
void sync_nodes_wake(sync_nodes *n);

#endif
