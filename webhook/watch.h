/* What topo-webhook's in-memory views of cluster objects (namespace
 * policies, ResourceQuotas) share beside lib/net's view (topo/view.h: a
 * reflector's list and watch into a set swapped in whole and read under a
 * read lock): how a view talks to the API server, and one warning per
 * object and problem.
 *
 * Threads: wh_watch_open on the owner's; wh_once is the view's reflector
 * thread's. */
#ifndef TOPO_WEBHOOK_WATCH_H
#define TOPO_WEBHOOK_WATCH_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/k8s.h"
#include "topo/view.h"

/* How a view talks to the API server: what the views' create functions
 * take (wh_ns_policy_opts, wh_quota_opts are this type). A field left 0
 * (or NULL) gets the default of the client (topo/k8s.h) or of the
 * reflector (topo/reflector.h). */
typedef struct wh_watch_client_opts {
    const topo_k8s_opts *k8s; /* client options */
    /* Waits after failures in a row double from base to max, each drawn
     * between half and all of that (replicas do not retry in step). */
    long backoff_base_ms;
    long backoff_max_ms;  /* at least base */
    long watch_timeout_s; /* server-side watch timeout, 0: random 300..599 */
} wh_watch_client_opts;

typedef struct wh_watch_opts {
    const char *name;             /* for logs ("ns-policy"); copied */
    const topo_k8s_resource *res; /* borrowed: a static constant */
    const char *label_selector;   /* NULL: every object; copied */
    wh_watch_client_opts client;
} wh_watch_opts;

/* A view (not started) over its own client, made from k8s_cfg (copied):
 * free the view, then the client (topo_view_free, topo_k8s_free). ops and
 * payload must outlive the view. */
int wh_watch_open(topo_view **view_out, topo_k8s **k_out, const topo_k8s_config *k8s_cfg,
                  const wh_watch_opts *opts, const topo_view_ops *ops, void *payload,
                  topo_err *err) TOPO_MUST_CHECK;

/* ---- one warning per object and problem ---- */

/* What a view warned about, per object key: a problem that persists is
 * said once, not at every event or relist; a new one is said again.
 * Remembering is best effort (out of memory: the warning may repeat). */
typedef struct wh_once {
    struct wh_once_entry *e;
    size_t n;
} wh_once;

#define WH_ONCE_INIT {NULL, 0}

/* 1 when text is not what was last said for key (the caller says it;
 * remembered), 0 when it was. */
int wh_once_new(wh_once *o, const char *key, const char *text);
/* The key's problem is gone. */
void wh_once_forget(wh_once *o, const char *key);
/* Forgets every key for which keep(key, payload) is 0. */
void wh_once_prune(wh_once *o, int (*keep)(const char *key, const void *payload),
                   const void *payload);
void wh_once_free(wh_once *o);

#endif
