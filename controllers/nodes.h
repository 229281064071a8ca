/* topo-sync's view of the cluster's Node objects (a topo_view, topo/view.h:
 * a reflector's list and watch): per node only what the controller reads —
 * its uid and the labels and annotations it is told to keep
 * (ctl_nodes_keep: the owned ones, and the labels the GPU facts are read
 * from) — so that 10,000 nodes cost a few megabytes, not the hundreds a
 * full list holds.
 *
 * The set is a jansson object: node name -> {"uid", "resourceVersion",
 * "labels", "annotations"}. Its generation (topo_view_generation) moves
 * only when the set of nodes, a node's uid or a kept label or annotation
 * changes: status heartbeats and other labels (GFD's
 * nvidia.com/gfd.timestamp, rewritten every minute) do not wake the
 * reconcile loop.
 *
 * Threads: the view's; any thread takes a snapshot, an object of its own
 * whose node values it shares with the view: read them, never change them. */
#ifndef TOPO_SYNC_NODES_H
#define TOPO_SYNC_NODES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/view.h"

/* What the view keeps of a node's labels and of its annotations: the keys
 * under one of the prefixes (the whole prefix, topo_labelowner_under), equal
 * to one of the keys or, for labels with label_topograph, topograph's
 * (topo_labelowner_topograph_key). Borrowed: the strings must outlive the
 * view. */
typedef struct ctl_nodes_keep {
    const char *const *label_prefixes;
    size_t nlabel_prefixes;
    const char *const *label_keys;
    size_t nlabel_keys;
    int label_topograph;
    const char *const *annotation_prefixes;
    size_t nannotation_prefixes;
    const char *const *annotation_keys;
    size_t nannotation_keys;
} ctl_nodes_keep;

/* The Node set's callbacks; their payload is a const ctl_nodes_keep *
 * (outliving the view), or NULL: every label and annotation. */
extern const topo_view_ops ctl_nodes_ops;

/* A copy of the set, those values shared read-only (a node's is replaced,
 * never edited); *generation_out (may be NULL) the generation it is. NULL
 * when out of memory. */
json_t *ctl_nodes_snapshot(topo_view *v, uint64_t *generation_out);

#endif
