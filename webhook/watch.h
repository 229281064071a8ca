/* The list+watch loop behind topo-webhook's in-memory views of cluster
 * objects (namespace policies, ResourceQuotas): one background thread lists
 * a resource type, then watches it from the list's resourceVersion, lists
 * again on 410 Gone and backs off on errors. What the objects mean stays
 * with the view; this file only decides when to list, watch and wait, so
 * every view recovers from the same failures the same way.
 *
 * The view's callbacks run on the watch thread. A (re)list fills a fresh,
 * private view (list_begin, list_item per object, list_end(ok=1) swaps it
 * in whole, so that objects which went away while the watch was down
 * disappear); watch events (event) edit the current view, under whatever
 * lock the view's readers take.
 *
 * Threads: wh_watch_synced may be called from any thread; the rest from the
 * owner's. */
#ifndef TOPO_WEBHOOK_WATCH_H
#define TOPO_WEBHOOK_WATCH_H

#include "net/k8s.h"
#include "topo/error.h"

typedef struct wh_watch wh_watch;

typedef struct wh_watch_ops {
    /* A list starts: prepare an empty private view. 0 or a topo_code. */
    int (*list_begin)(void *payload);
    /* One listed object (borrowed) into the private view. Non-zero ends
     * the list (then list_end(0)). */
    int (*list_item)(json_t *item, void *payload);
    /* ok: the list is complete, make the private view current (first: this
     * is the first list applied). !ok: drop it, the current view stays. */
    void (*list_end)(int ok, int first, void *payload);
    /* One watch event (never a bookmark) applied to the current view.
     * Non-zero ends the watch; it resumes from the previous event. */
    int (*event)(topo_k8s_event_type type, json_t *object, void *payload);
} wh_watch_ops;

typedef struct wh_watch_opts {
    const char *name;              /* for logs ("ns-policy"); copied */
    const topo_k8s_resource *res;  /* borrowed: a static constant */
    const char *label_selector;    /* NULL: every object; copied */
    const topo_k8s_opts *k8s;      /* client options; NULL: the client's defaults */
    long backoff_base_ms;          /* first wait after a failure, default 200 */
    long backoff_max_ms;           /* longest wait, default 10000 */
    long watch_timeout_s;          /* server-side watch timeout, 0: random 300..599 */
} wh_watch_opts;

/* k8s_cfg is copied; ops and payload must outlive the watch. Nothing runs
 * until wh_watch_start. */
int wh_watch_create(wh_watch **out, const topo_k8s_config *k8s_cfg, const wh_watch_opts *opts,
                    const wh_watch_ops *ops, void *payload, topo_err *err) TOPO_MUST_CHECK;

/* Starts the thread; returns at once. */
int wh_watch_start(wh_watch *w, topo_err *err) TOPO_MUST_CHECK;

/* 1 once a list has been applied (and stays 1). NULL-safe. */
int wh_watch_synced(wh_watch *w);

/* Ends the thread (within about a second, or the client's request timeout
 * when a list is in flight) and joins it. Idempotent; NULL-safe. */
void wh_watch_stop(wh_watch *w);

/* Stops if running, then frees. NULL-safe. */
void wh_watch_free(wh_watch *w);

#endif
