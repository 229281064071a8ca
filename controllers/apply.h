/* A plan applied to the cluster's nodes: for each planned node in the
 * Node view, its labels (topo_plan_node_labels: every owned level but
 * hostname, which is the kubelet's, and topograph's keys when the plan
 * mirrors them) and its provenance annotation handed to the label writer
 * (topo/labelwriter.h), which sends at most one merge PATCH. A node the
 * plan leaves out (incomplete, with incomplete: leaveOut) is held: its
 * labels stay as they are. Nodes the plan does not know are never touched.
 *
 * Metrics (on the registry given): patches sent and failed, nodes
 * converged, held and gone, labels reasserted after drift, reassertions
 * deferred and the nodes in drift backoff, Events. */
#ifndef TOPO_SYNC_APPLY_H
#define TOPO_SYNC_APPLY_H

#include <stdatomic.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/k8s.h"
#include "topo/metrics.h"
#include "topo/plan.h"

typedef struct ctl_apply ctl_apply;

/* The label keys the writer owns (topo_plan_key_owned): those under the
 * plan's prefix, and exactly topograph's keys when the plan mirrors them
 * (topo/labelowner.h). The one list for the writer's diff and the Node
 * view's kept keys. */
typedef struct ctl_owned {
    const char *prefixes[1];
    size_t nprefixes;
    int topograph;
} ctl_owned;
void ctl_apply_owned(ctl_owned *out, const char *prefix, int topograph);

/* k: the writer's own client (its QPS/burst paces the writes), borrowed.
 * dry_run: log each patch instead of sending it. metrics may be NULL. */
int ctl_apply_create(ctl_apply **out, topo_k8s *k, int dry_run, topo_metrics *metrics,
                      topo_err *err);
void ctl_apply_free(ctl_apply *a);

/* Asked before each write: non-zero to go on (the Lease still held, no
 * stop asked). A round that is told to stop ends after the current write. */
typedef int (*ctl_apply_go_fn)(void *payload);

typedef struct ctl_apply_result {
    size_t patched, converged, held, gone, failed, dry_run;
    size_t deferred; /* drift on a node in backoff: reasserted when due */
    int stopped; /* go said no before the end */
} ctl_apply_result;

/* One pass over the plan's nodes present in view (nodes.h's snapshot).
 * Always 0 but for TOPO_ENOMEM: failed writes are counted in *res (the
 * caller retries them at its next round). */
int ctl_apply_round(ctl_apply *a, const topo_plan *plan, const json_t *view,
                     ctl_apply_go_fn go, void *payload, ctl_apply_result *res, topo_err *err);

/* When the earliest reassertion a round deferred is due (ms from now, 0:
 * now), for the loop's next wake-up; -1 when none waits. */
long ctl_apply_due_in_ms(ctl_apply *a);

#endif
