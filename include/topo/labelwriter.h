/* topo-sync's label writer: one node's plan (topo/labeldiff.h) against the
 * node as the API server has it, turned into at most one write.
 *
 *   - One JSON merge PATCH (application/merge-patch+json) per node whose
 *     owned labels or annotations differ, naming only owned keys; nothing
 *     for a converged or held node.
 *   - No resourceVersion precondition: the patch sets and removes only keys
 *     topo-sync owns, and the result for those keys is what the plan says
 *     whatever else changed on the node meanwhile (kubelet's status, other
 *     controllers' labels, which a precondition would turn into needless
 *     409s). A concurrent writer of an owned key loses, which is the rule
 *     for owned keys anyway (reassert). The API server can still answer
 *     409 when its own retries of the update lost to other writers: the
 *     same patch is sent again, up to max_attempts.
 *   - 404 (the node was deleted after it was read) is no error: counted in
 *     nodes_gone. 429: the HTTP client waits Retry-After and retries
 *     (topo_k8s_opts.max_retries); still throttled after that, or any other
 *     failure, is returned and counted in patches_failed: the caller
 *     retries the node later (its per-node backoff).
 *   - The client-side rate limit is the topo_k8s client's token bucket
 *     (topo_k8s_opts.qps/burst, shared by the PATCHes and Events it sends):
 *     give the writer a client of its own.
 *   - A core/v1 Event on the Node (namespace "default", involvedObject
 *     kind Node with name and uid, source.component and reportingComponent
 *     the component, reportingInstance the instance) after each successful
 *     write that changed labels of a node that already carried owned labels
 *     (a first labelling only with initial_events), so that `kubectl
 *     describe node` shows what moved: reason TopologyLabelsChanged (Normal)
 *     or TopologyLabelsReasserted (Warning, drift). Failing to create it is
 *     logged and counted (events_failed), never a failed write.
 *   - Drift (an owned label someone else changed) is logged at warn, counted
 *     and reasserted. The writer remembers per node what it last wrote (the
 *     desired labels and annotations, the node's uid, the resourceVersion
 *     the write was computed from): while the desired state is unchanged, a
 *     node that differs again and is newer than that is drift, whoever
 *     rewrote the record annotation (another topo-sync with other sources
 *     rewrites it too); the record tells drift only for nodes it has not
 *     written (a restart). A node whose drift keeps coming back (another
 *     controller fighting for the label) is reasserted less and less often:
 *     a patch that only undoes drift (topo_labeldiff_reassert_only) goes at
 *     once the first time, then no sooner than drift_backoff_ms after it,
 *     then twice that, ... up to drift_backoff_max_ms; until then the node
 *     is DEFERRED (nothing sent) and topo_labelwriter_due_in_ms says when
 *     to come back. A node quiet (no drift seen) for twice its current wait
 *     starts afresh. A patch that moves the plan is sent at once, always.
 *     Reassertions are told by one Event per node per event_window_ms: the
 *     first creates it, each later one in the window PATCHes its count,
 *     lastTimestamp and message ("reasserted 4 times in the last 8s: leaf:
 *     a → b"), which `kubectl describe node` shows as "(x4 over 8s)".
 *
 * Threads: a writer uses its topo_k8s from the calling thread only (one
 * thread applies); topo_labelwriter_get_stats may be called from any thread
 * (metrics). */
#ifndef TOPO_LABELWRITER_H
#define TOPO_LABELWRITER_H

#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/k8s.h"
#include "topo/labeldiff.h"

#define TOPO_LABELWRITER_COMPONENT_DEFAULT "topo-sync"
#define TOPO_LABELWRITER_EVENT_NAMESPACE_DEFAULT "default"
#define TOPO_LABELWRITER_MAX_ATTEMPTS_DEFAULT 3
#define TOPO_LABELWRITER_DRIFT_BACKOFF_MS_DEFAULT 1000        /* 1 s, 2 s, 4 s, ... */
#define TOPO_LABELWRITER_DRIFT_BACKOFF_MAX_MS_DEFAULT 3600000 /* ... up to 1 h */
#define TOPO_LABELWRITER_EVENT_WINDOW_MS_DEFAULT 600000       /* one Event per node per 10 min */

/* A field left 0 (or NULL) gets the default named beside it. Strings are
 * copied. */
typedef struct topo_labelwriter_opts {
    const char *component;       /* TOPO_LABELWRITER_COMPONENT_DEFAULT */
    const char *instance;        /* reportingInstance: the host name */
    const char *event_namespace; /* TOPO_LABELWRITER_EVENT_NAMESPACE_DEFAULT (where
                                    kube-apiserver wants events of cluster-scoped objects) */
    int no_events;               /* non-zero: create no Events */
    int initial_events;          /* non-zero: an Event also for a node's first labelling
                                    (it carried no owned label): off by default, so that
                                    labelling a new cluster is one request per node */
    int dry_run;                 /* non-zero: log each patch (info), send nothing */
    int max_attempts;            /* PATCHes of one node on 409;
                                    TOPO_LABELWRITER_MAX_ATTEMPTS_DEFAULT */
    long drift_backoff_ms;       /* TOPO_LABELWRITER_DRIFT_BACKOFF_MS_DEFAULT */
    long drift_backoff_max_ms;   /* TOPO_LABELWRITER_DRIFT_BACKOFF_MAX_MS_DEFAULT */
    long event_window_ms;        /* TOPO_LABELWRITER_EVENT_WINDOW_MS_DEFAULT */
} topo_labelwriter_opts;

typedef enum topo_labelwriter_outcome {
    TOPO_LABELWRITER_CONVERGED = 0, /* nothing to write */
    TOPO_LABELWRITER_HELD,          /* plan not authoritative: left alone */
    TOPO_LABELWRITER_PATCHED,       /* one PATCH applied */
    TOPO_LABELWRITER_GONE,          /* the node no longer exists (404) */
    TOPO_LABELWRITER_FAILED,        /* the write failed (the call's code) */
    TOPO_LABELWRITER_DRY_RUN,       /* a patch was due, logged, not sent */
    TOPO_LABELWRITER_DEFERRED       /* drift again too soon: reasserted when due */
} topo_labelwriter_outcome;

/* Counters since creation, for /metrics. */
typedef struct topo_labelwriter_stats {
    uint64_t nodes;          /* topo_labelwriter_apply calls with a valid input */
    uint64_t converged;      /* nodes that needed no write */
    uint64_t held;           /* nodes left alone (plan not authoritative) */
    uint64_t patches_sent;   /* PATCHes applied (2xx) */
    uint64_t patches_failed; /* nodes whose write failed */
    uint64_t conflicts;      /* 409 answers, each followed by another attempt or a failure */
    uint64_t nodes_gone;     /* 404 on PATCH */
    uint64_t dry_run;        /* patches logged instead of sent */
    uint64_t drift_nodes;    /* writes that reasserted labels someone else changed */
    uint64_t drift_labels;   /* labels reasserted */
    uint64_t labels_set;     /* labels set by applied PATCHes */
    uint64_t labels_removed; /* labels removed by applied PATCHes */
    uint64_t events_created;
    uint64_t events_aggregated; /* reassertions folded into their window's Event */
    uint64_t events_failed;
    uint64_t invalid;        /* inputs refused (TOPO_EINVALID before any request) */
    uint64_t deferred;       /* reassertions put off (the node in backoff) */
    uint64_t backoff_nodes;  /* a gauge: nodes whose reassertion is deferred now */
} topo_labelwriter_stats;

typedef struct topo_labelwriter topo_labelwriter;

/* k is borrowed (it must outlive the writer); opts may be NULL. */
int topo_labelwriter_create(topo_labelwriter **out, topo_k8s *k,
                            const topo_labelwriter_opts *opts, topo_err *err) TOPO_MUST_CHECK;
void topo_labelwriter_free(topo_labelwriter *w);

/* Brings one node to its plan: computes the diff of in against node (a
 * Node object or a trimmed copy with metadata name, uid, labels and
 * annotations, and resourceVersion when known: the last state seen by a
 * list or watch), sends the patch, creates the Event. in's
 * same_as_last_write is the writer's own (its memory), not the caller's.
 * *outcome (may be NULL) gets what happened. Returns 0 for every outcome
 * but FAILED; then the code (TOPO_EINVALID for a refused
 * input, before any request; TOPO_ECONFLICT after max_attempts 409s;
 * TOPO_ETHROTTLED, TOPO_ESERVER, TOPO_EFORBIDDEN, ...) with the message in
 * err. */
int topo_labelwriter_apply(topo_labelwriter *w, const topo_labeldiff_input *in,
                           const json_t *node, topo_labelwriter_outcome *outcome,
                           topo_err *err);

/* Forgets what it wrote to the nodes not given to topo_labelwriter_apply
 * since the last call (they left the plan or the cluster): call it after
 * each whole round, so that its memory is of the current nodes only. */
void topo_labelwriter_forget_unvisited(topo_labelwriter *w);

/* How long until the earliest deferred reassertion is due (ms, 0 when it is
 * now); -1 when none is deferred. From the applying thread. */
long topo_labelwriter_due_in_ms(topo_labelwriter *w);

/* "converged", "held", "patched", "gone", "failed", "dry-run", "deferred". */
const char *topo_labelwriter_outcome_name(topo_labelwriter_outcome outcome);

void topo_labelwriter_get_stats(const topo_labelwriter *w, topo_labelwriter_stats *out);

/* The core/v1 Event the writer creates for a diff with label changes, at
 * wall-clock time now_ns (nanoseconds since the epoch: it names the event,
 * "<node>.<hex now_ns>" as client-go does, and gives its timestamps). New
 * reference in *out; *out NULL when the diff changes no label. */
int topo_labelwriter_event(json_t **out, const topo_labeldiff *d, const char *component,
                           const char *instance, const char *ns, int64_t now_ns,
                           topo_err *err) TOPO_MUST_CHECK;

/* The merge patch that folds a reassertion into its window's Event: count,
 * lastTimestamp (now_ns) and the message "reasserted <count> times in the
 * last <now - first_ns>: <the diff's message>" (at most
 * TOPO_LABELDIFF_MESSAGE_MAX bytes). New reference in *out; NULL when the
 * diff changes no label. */
int topo_labelwriter_event_update(json_t **out, const topo_labeldiff *d, uint64_t count,
                                  int64_t first_ns, int64_t now_ns, topo_err *err) TOPO_MUST_CHECK;

#endif
