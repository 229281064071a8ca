/* Pods stranded on a failed node, failed so that their controller replaces
 * them (docs/webhook.md "When nodes fail"), as Kueue's node controller
 * does (pkg/controller/tas/node_controller.go: markPodsFailed).
 *
 * A pod topo placed carries its slot's kubernetes.io/hostname in its
 * nodeSelector; should that node fail before kube-scheduler binds the pod,
 * nothing recreates it and it stays Pending for ever. Each round of the
 * ungater (the placer's) asks admission for such pods
 * (topo_admission_stranded_foreach), GETs each and, when it is still that
 * pod (uid), unbound, Pending, not gated by topo and pinned to that host,
 * PATCHes its status subresource (strategic merge patch, the read
 * resourceVersion and the uid as preconditions): phase Failed and a
 * condition TerminatedByTopo (reason UnschedulableOnAssignedNode). Its Job
 * then creates a replacement, whose slot admission repairs (replace.c).
 * 404 and 409 are skipped silently (gone, or changed: the next round looks
 * again); another failed call ends the pass (the next round retries). A
 * pod failed is not patched again for WH_STRANDED_REMEMBER_MS
 * (the watch shows it Failed long before).
 *
 * One thread (the ungater's): no locking. */
#ifndef TOPO_WEBHOOK_STRANDED_H
#define TOPO_WEBHOOK_STRANDED_H

#include <stdint.h>

#include "topo/admission.h"
#include "topo/error.h"
#include "topo/k8s.h"

#define WH_STRANDED_CONDITION "TerminatedByTopo"
#define WH_STRANDED_REASON "UnschedulableOnAssignedNode"
/* How long a pod failed here is not looked at again. */
#define WH_STRANDED_REMEMBER_MS 60000L
/* At most this many pods remembered (the oldest forgotten first). */
#define WH_STRANDED_REMEMBER_MAX 4096u

typedef struct wh_stranded wh_stranded;

int wh_stranded_create(wh_stranded **out, topo_err *err) TOPO_MUST_CHECK;
void wh_stranded_free(wh_stranded *s);

/* What one pass did. */
typedef struct wh_stranded_result {
    uint64_t failed; /* pods patched to Failed */
    uint64_t errors; /* failed API calls (other than 404, 409): the pass ended there */
} wh_stranded_result;

/* One pass over the stranded pods of ctx, through client k, at now_ms
 * (monotonic). <0 only when admission's read failed (err). */
int wh_stranded_run(wh_stranded *s, topo_admission_ctx *ctx, topo_k8s *k, int64_t now_ms,
                    wh_stranded_result *out, topo_err *err);

#endif
