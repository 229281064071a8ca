/* The machinery behind topo-webhook's in-memory views of cluster objects
 * (namespace policies, ResourceQuotas): one background thread runs a
 * reflector (topo/reflector.h: list, watch from the list's
 * resourceVersion, list again on 410 Gone, back off on errors) and keeps
 * the view current. What the objects mean stays with the view's owner
 * (wh_watch_ops); this file decides how the view is swapped and locked, so
 * every view recovers from the same failures the same way.
 *
 * A (re)list fills a fresh, private view and swaps it in whole under the
 * write lock (objects deleted while the watch was down disappear); watch
 * events edit the current view under the write lock. Readers take the read
 * lock (wh_watch_read): the admission path never waits for the API server.
 *
 * Threads: wh_watch_read/_read_end and wh_watch_synced from any thread;
 * the callbacks run on the watch thread (and create/destroy on the
 * owner's, in wh_watch_create/_free); the rest from the owner's. */
#ifndef TOPO_WEBHOOK_WATCH_H
#define TOPO_WEBHOOK_WATCH_H

#include <stddef.h>

#include "topo/k8s.h"
#include "topo/error.h"

typedef struct wh_watch wh_watch;

typedef struct wh_watch_ops {
    /* An empty view, NULL when out of memory. */
    void *(*create)(void *payload);
    /* NULL-safe. */
    void (*destroy)(void *view, void *payload);
    /* One object's state (borrowed) into view; deleted: the object is
     * gone. Non-zero ends the list or the watch (a watch resumes from the
     * previous event). */
    int (*apply)(void *view, const json_t *object, int deleted, void *payload);
    /* Optional: a list was swapped in (first: the first one); view is the
     * current view, which only this thread changes. */
    void (*listed)(const void *view, int first, void *payload);
} wh_watch_ops;

#define WH_WATCH_BACKOFF_BASE_MS_DEFAULT 200L
#define WH_WATCH_BACKOFF_MAX_MS_DEFAULT 10000L

/* How a view talks to the API server: what the views' create functions
 * take (topo_ns_policy_opts, topo_quota_opts are this type). A field left 0
 * (or NULL) gets the default named beside it. */
typedef struct wh_watch_client_opts {
    const topo_k8s_opts *k8s; /* client options; the client's defaults */
    /* Waits after failures in a row double from base to max, each drawn
     * between half and all of that (topo_reflector_opts: replicas do not
     * retry in step). */
    long backoff_base_ms; /* WH_WATCH_BACKOFF_BASE_MS_DEFAULT */
    long backoff_max_ms;  /* WH_WATCH_BACKOFF_MAX_MS_DEFAULT (at least base) */
    long watch_timeout_s; /* server-side watch timeout, 0: random 300..599 */
} wh_watch_client_opts;

typedef struct wh_watch_opts {
    const char *name;             /* for logs ("ns-policy"); copied */
    const topo_k8s_resource *res; /* borrowed: a static constant */
    const char *label_selector;   /* NULL: every object; copied */
    wh_watch_client_opts client;
} wh_watch_opts;

/* k8s_cfg is copied; ops and payload must outlive the watch. Creates the
 * (empty) current view. Nothing runs until wh_watch_start. */
int wh_watch_create(wh_watch **out, const topo_k8s_config *k8s_cfg, const wh_watch_opts *opts,
                    const wh_watch_ops *ops, void *payload, topo_err *err) TOPO_MUST_CHECK;

/* Starts the thread; returns at once. */
int wh_watch_start(wh_watch *w, topo_err *err) TOPO_MUST_CHECK;

/* The current view under the read lock, until wh_watch_read_end. */
const void *wh_watch_read(wh_watch *w);
void wh_watch_read_end(wh_watch *w);

/* 1 once a list has been applied (and stays 1). NULL-safe. */
int wh_watch_synced(wh_watch *w);

/* Ends the thread (within about a second, or the client's request timeout
 * when a list is in flight) and joins it. Idempotent; NULL-safe. */
void wh_watch_stop(wh_watch *w);

/* Stops if running, then frees (the views too). NULL-safe. */
void wh_watch_free(wh_watch *w);

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
