/* topo-sync's label writer (include/topo/labelwriter.h): one node's diff
 * sent as one merge PATCH, the Event after it, the counters; a node's
 * repeated drift backed off and its Events aggregated (backoff.h), drift
 * told by what this writer last wrote (written.h) before the record. */
#define _POSIX_C_SOURCE 200809L /* gethostname, clock_gettime */

#include "topo/labelwriter.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backoff.h"
#include "written.h"
#include "topo/clock.h"
#include "topo/json.h"
#include "topo/log.h"
#include "topo/str.h"

/* The counters of topo_labelwriter_stats, updated by the applying thread
 * and read by a metrics thread. */
enum {
    ST_NODES, ST_CONVERGED, ST_HELD, ST_SENT, ST_FAILED, ST_CONFLICTS, ST_GONE, ST_DRY_RUN,
    ST_DRIFT_NODES, ST_DRIFT_LABELS, ST_SET, ST_REMOVED, ST_EVENTS, ST_EVENTS_AGGREGATED,
    ST_EVENTS_FAILED, ST_INVALID, ST_DEFERRED, ST_BACKOFF_NODES, ST_COUNT
};

struct topo_labelwriter {
    topo_k8s *k;
    char *component;
    char *instance;
    char *event_ns;
    int no_events;
    int initial_events;
    int dry_run;
    int max_attempts;
    int64_t event_window_ms;
    drift_backoff backoff; /* the applying thread's */
    label_written written; /* the applying thread's */
    _Atomic uint64_t stats[ST_COUNT];
};

/* The Events' namespace as a resource path: core/v1 events. */
static void count(topo_labelwriter *w, int which, uint64_t n)
{
    atomic_fetch_add_explicit(&w->stats[which], n, memory_order_relaxed);
}

int topo_labelwriter_create(topo_labelwriter **out, topo_k8s *k,
                            const topo_labelwriter_opts *opts, topo_err *err)
{
    topo_labelwriter_opts o = opts != NULL ? *opts : (topo_labelwriter_opts){0};
    topo_labelwriter *w = NULL;
    char host[256];

    *out = NULL;
    if (k == NULL)
        return topo_err_set(err, TOPO_EINVALID, "label writer: no Kubernetes client");
    if (o.instance == NULL) {
        if (gethostname(host, sizeof host) != 0)
            strcpy(host, "unknown");
        host[sizeof host - 1] = '\0';
        o.instance = host;
    }
    if ((w = calloc(1, sizeof *w)) == NULL)
        return topo_err_nomem(err, "label writer");
    w->k = k;
    w->component = topo_strdup(o.component ? o.component : TOPO_LABELWRITER_COMPONENT_DEFAULT);
    w->instance = topo_strdup(o.instance);
    w->event_ns = topo_strdup(o.event_namespace ? o.event_namespace
                                                : TOPO_LABELWRITER_EVENT_NAMESPACE_DEFAULT);
    w->no_events = o.no_events;
    w->initial_events = o.initial_events;
    w->dry_run = o.dry_run;
    w->max_attempts = o.max_attempts > 0 ? o.max_attempts : TOPO_LABELWRITER_MAX_ATTEMPTS_DEFAULT;
    w->event_window_ms =
        o.event_window_ms > 0 ? o.event_window_ms : TOPO_LABELWRITER_EVENT_WINDOW_MS_DEFAULT;
    for (int i = 0; i < ST_COUNT; i++)
        atomic_init(&w->stats[i], 0);
    int rc = drift_backoff_init(
        &w->backoff,
        o.drift_backoff_ms > 0 ? o.drift_backoff_ms : TOPO_LABELWRITER_DRIFT_BACKOFF_MS_DEFAULT,
        o.drift_backoff_max_ms > 0 ? o.drift_backoff_max_ms
                                   : TOPO_LABELWRITER_DRIFT_BACKOFF_MAX_MS_DEFAULT);
    if (rc == 0)
        rc = label_written_init(&w->written, 0);
    if (rc != 0 || w->component == NULL || w->instance == NULL || w->event_ns == NULL) {
        topo_labelwriter_free(w);
        return topo_err_nomem(err, "label writer");
    }
    *out = w;
    return 0;
}

void topo_labelwriter_free(topo_labelwriter *w)
{
    if (w == NULL)
        return;
    free(w->component);
    free(w->instance);
    free(w->event_ns);
    drift_backoff_dispose(&w->backoff);
    label_written_dispose(&w->written);
    free(w);
}

const char *topo_labelwriter_outcome_name(topo_labelwriter_outcome outcome)
{
    switch (outcome) {
    case TOPO_LABELWRITER_CONVERGED: return "converged";
    case TOPO_LABELWRITER_HELD: return "held";
    case TOPO_LABELWRITER_PATCHED: return "patched";
    case TOPO_LABELWRITER_GONE: return "gone";
    case TOPO_LABELWRITER_FAILED: return "failed";
    case TOPO_LABELWRITER_DRY_RUN: return "dry-run";
    case TOPO_LABELWRITER_DEFERRED: return "deferred";
    }
    return "unknown";
}

void topo_labelwriter_get_stats(const topo_labelwriter *w, topo_labelwriter_stats *out)
{
    uint64_t v[ST_COUNT];
    for (int i = 0; i < ST_COUNT; i++)
        v[i] = atomic_load_explicit(&((topo_labelwriter *)w)->stats[i], memory_order_relaxed);
    *out = (topo_labelwriter_stats){
        .nodes = v[ST_NODES], .converged = v[ST_CONVERGED], .held = v[ST_HELD],
        .patches_sent = v[ST_SENT], .patches_failed = v[ST_FAILED],
        .conflicts = v[ST_CONFLICTS], .nodes_gone = v[ST_GONE], .dry_run = v[ST_DRY_RUN],
        .drift_nodes = v[ST_DRIFT_NODES], .drift_labels = v[ST_DRIFT_LABELS],
        .labels_set = v[ST_SET], .labels_removed = v[ST_REMOVED],
        .events_created = v[ST_EVENTS], .events_aggregated = v[ST_EVENTS_AGGREGATED],
        .events_failed = v[ST_EVENTS_FAILED], .invalid = v[ST_INVALID],
        .deferred = v[ST_DEFERRED], .backoff_nodes = v[ST_BACKOFF_NODES]};
}

/* The gauge of nodes in backoff, after each change of it. */
static void publish_backoff(topo_labelwriter *w)
{
    atomic_store_explicit(&w->stats[ST_BACKOFF_NODES], (uint64_t)w->backoff.pending,
                          memory_order_relaxed);
}

long topo_labelwriter_due_in_ms(topo_labelwriter *w)
{
    int64_t now = topo_clock_ms();
    int64_t due = drift_backoff_next_due(&w->backoff, now);
    publish_backoff(w);
    if (due < 0)
        return -1;
    return due > now ? (long)(due - now) : 0;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void event_failed(topo_labelwriter *w, const topo_labeldiff *d, const topo_err *err)
{
    count(w, ST_EVENTS_FAILED, 1);
    topo_log_field f[] = {{"node", topo_labeldiff_node_name(d)}, {"error", err->text}};
    topo_log_kv(TOPO_LOG_WARN, f, 2, "could not create the event of a label change");
}

/* The Event after a write; its failure is logged and counted only. With n
 * (a reassertion), the Event is remembered as the node's for the window. */
static void create_event(topo_labelwriter *w, const topo_labeldiff *d, drift_node *n)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *ev = NULL;
    int64_t now_ns = wall_ns();
    int error;

    if (w->no_events || topo_labeldiff_message(d) == NULL)
        return;
    /* A first labelling moves nothing: an Event for each node of a new
     * cluster would double the requests of its labelling. */
    if (!topo_labeldiff_had_owned(d) && !w->initial_events)
        return;
    if ((error = topo_labelwriter_event(&ev, d, w->component, w->instance, w->event_ns, now_ns,
                                        &err)) == 0)
        error = topo_k8s_create_object(NULL, w->k, &topo_k8s_events, w->event_ns, ev, &err);
    if (error == 0 && n != NULL) {
        const char *name =
            json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
        snprintf(n->event, sizeof n->event, "%s", name != NULL ? name : "");
        n->event_start_ms = topo_clock_ms();
        n->event_first_ns = now_ns;
        n->event_count = 1;
    }
    json_decref(ev);
    if (error < 0) {
        event_failed(w, d, &err);
        return;
    }
    count(w, ST_EVENTS, 1);
}

/* A reassertion's Event: folded into the node's Event of this window (its
 * count, lastTimestamp and message patched), else a new one. An Event gone
 * meanwhile (the API server's event TTL) is created anew. */
static void reassertion_event(topo_labelwriter *w, const topo_labeldiff *d, drift_node *n)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *patch = NULL;
    if (w->no_events || n->event[0] == '\0' ||
        topo_clock_ms() - n->event_start_ms >= w->event_window_ms) {
        create_event(w, d, n);
        return;
    }
    int error = topo_labelwriter_event_update(&patch, d, n->event_count + 1, n->event_first_ns,
                                              wall_ns(), &err);
    if (error == 0 && patch != NULL)
        error = topo_k8s_patch(NULL, w->k, &topo_k8s_events, w->event_ns, n->event,
                               TOPO_K8S_MERGE_PATCH, patch, NULL, &err);
    json_decref(patch);
    if (error == TOPO_ENOTFOUND) {
        n->event[0] = '\0';
        create_event(w, d, n);
        return;
    }
    if (error < 0) {
        event_failed(w, d, &err);
        return;
    }
    n->event_count++;
    count(w, ST_EVENTS_AGGREGATED, 1);
}

/* Logs what the write changes: drift at warn, the rest at info. wait_ms
 * (a reassertion): how long the next reassertion of the node waits. */
static void log_write(const topo_labeldiff *d, const char *what, int64_t wait_ms)
{
    const char *msg = topo_labeldiff_message(d);
    char n[24], wait[48];
    snprintf(n, sizeof n, "%zu", topo_labeldiff_annotation_count(d));
    snprintf(wait, sizeof wait, "%.3gs", (double)wait_ms / 1000.0);
    topo_log_field f[] = {{"node", topo_labeldiff_node_name(d)},
                          {"labels", msg != NULL ? msg : ""},
                          {"annotations", n},
                          {"next_reassertion_after", wait}};
    if (topo_labeldiff_drift_count(d) > 0 && wait_ms > 0)
        topo_log_kv(TOPO_LOG_WARN, f, 4,
                    "%s: owned labels were changed by someone else; reasserting (should they "
                    "change again, the next reassertion waits %s)",
                    what, wait);
    else if (topo_labeldiff_drift_count(d) > 0)
        topo_log_kv(TOPO_LOG_WARN, f, 3, "%s: owned labels were changed by someone else; "
                    "reasserting", what);
    else
        topo_log_kv(TOPO_LOG_INFO, f, 3, "%s", what);
}

static void count_applied(topo_labelwriter *w, const topo_labeldiff *d)
{
    uint64_t set = 0, removed = 0;
    for (size_t i = 0; i < topo_labeldiff_change_count(d); i++) {
        if (topo_labeldiff_change_at(d, i)->new_value != NULL)
            set++;
        else
            removed++;
    }
    count(w, ST_SENT, 1);
    count(w, ST_SET, set);
    count(w, ST_REMOVED, removed);
    if (topo_labeldiff_drift_count(d) > 0) {
        count(w, ST_DRIFT_NODES, 1);
        count(w, ST_DRIFT_LABELS, topo_labeldiff_drift_count(d));
    }
}

/* The PATCH, sent again after a 409 up to max_attempts times. n: the
 * node's drift state when the patch is a reassertion only. */
static int send_patch(topo_labelwriter *w, const topo_labeldiff *d, drift_node *n,
                      topo_labelwriter_outcome *outcome, topo_err *err_out)
{
    const char *name = topo_labeldiff_node_name(d);
    topo_err e = TOPO_ERR_INIT, *err = &e;
    int error = 0;

    for (int attempt = 1; attempt <= w->max_attempts; attempt++) {
        error = topo_k8s_patch(NULL, w->k, &topo_k8s_nodes, NULL, name, TOPO_K8S_MERGE_PATCH,
                               topo_labeldiff_patch(d), NULL, err);
        if (error != TOPO_ECONFLICT)
            break;
        count(w, ST_CONFLICTS, 1);
    }
    if (error == 0) {
        *outcome = TOPO_LABELWRITER_PATCHED;
        count_applied(w, d);
        int64_t wait = n != NULL ? drift_backoff_sent(&w->backoff, n, topo_clock_ms()) : 0;
        publish_backoff(w);
        log_write(d, "labelled node", wait);
        if (n != NULL)
            reassertion_event(w, d, n);
        else
            create_event(w, d, NULL);
        return 0;
    }
    if (error == TOPO_ENOTFOUND) {
        *outcome = TOPO_LABELWRITER_GONE;
        drift_backoff_settled(&w->backoff, name, topo_clock_ms());
        label_written_forget(&w->written, name);
        publish_backoff(w);
        count(w, ST_GONE, 1);
        topo_log_field f[] = {{"node", name}};
        topo_log_kv(TOPO_LOG_INFO, f, 1, "node deleted before its labels were written");
        return 0;
    }
    *outcome = TOPO_LABELWRITER_FAILED;
    count(w, ST_FAILED, 1);
    topo_log_field f[] = {{"node", name}, {"error", e.text}};
    topo_log_kv(TOPO_LOG_WARN, f, 2, "could not write the node's labels");
    if (err_out != NULL)
        *err_out = e;
    return error;
}

static void log_dry_run(const topo_labeldiff *d)
{
    char *text = topo_json_dumps(topo_labeldiff_patch(d), JSON_COMPACT | JSON_SORT_KEYS);
    topo_log_field f[] = {{"node", topo_labeldiff_node_name(d)},
                          {"patch", text != NULL ? text : "(out of memory)"}};
    topo_log_kv(TOPO_LOG_INFO, f, 2, "dry run: would PATCH the node (merge patch)");
    free(text);
}

/* A reassertion the node's backoff puts off: said once per wait. */
static void log_deferred(const topo_labeldiff *d, int64_t due_in_ms)
{
    char due[48];
    snprintf(due, sizeof due, "%.3gs", (double)due_in_ms / 1000.0);
    topo_log_field f[] = {{"node", topo_labeldiff_node_name(d)},
                          {"labels", topo_labeldiff_message(d) ? topo_labeldiff_message(d) : ""},
                          {"due_in", due}};
    topo_log_kv(TOPO_LOG_WARN, f, 3,
                "owned labels changed by someone else again: reasserting in %s (backing off: "
                "another controller may be writing them)",
                due);
}

/* A patch due: sent, unless it only undoes drift on a node in backoff. */
static int patch_node(topo_labelwriter *w, const topo_labeldiff *d,
                      topo_labelwriter_outcome *outcome, topo_err *err)
{
    const char *name = topo_labeldiff_node_name(d);
    int64_t now = topo_clock_ms(), due = 0;
    drift_node *n = NULL;
    if (!topo_labeldiff_reassert_only(d)) {
        drift_backoff_settled(&w->backoff, name, now); /* a change of plan: at once */
        publish_backoff(w);
        return send_patch(w, d, NULL, outcome, err);
    }
    size_t pending = w->backoff.pending;
    int may = drift_backoff_check(&w->backoff, name, now, &due, &n);
    publish_backoff(w);
    if (may < 0)
        return topo_err_nomem(err, "label writer");
    if (may == 0) {
        *outcome = TOPO_LABELWRITER_DEFERRED;
        count(w, ST_DEFERRED, 1);
        if (w->backoff.pending > pending)
            log_deferred(d, due - now);
        return 0;
    }
    return send_patch(w, d, n, outcome, err);
}

/* in as the writer's memory sees it: same_as_last_write when it last wrote
 * this desired state to this node and someone changed the node since
 * (written.h). digest gets the desired state's ("" when it has none). */
static topo_labeldiff_input remembered(topo_labelwriter *w, const topo_labeldiff_input *in,
                                       const json_t *node, char *digest)
{
    topo_labeldiff_input mine = *in;
    const json_t *md = json_object_get(node, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
    mine.same_as_last_write = 0;
    if (name == NULL || label_written_digest(digest, in, uid) != 0) {
        digest[0] = '\0'; /* out of memory: the record alone tells drift */
        return mine;
    }
    mine.same_as_last_write = label_written_again(&w->written, name, digest, rv);
    return mine;
}

/* The node now carries the desired state of digest: written by a PATCH
 * computed from the node at rv_before, or found in place (NULL). Out of
 * memory, the node is not remembered: its drift is told by the record. */
static void remember(topo_labelwriter *w, const topo_labeldiff *d, const char *digest,
                     const char *rv_before)
{
    if (digest[0] != '\0')
        (void)label_written_note(&w->written, topo_labeldiff_node_name(d), digest, rv_before);
}

void topo_labelwriter_forget_unvisited(topo_labelwriter *w)
{
    size_t n = label_written_forget_unvisited(&w->written);
    if (n > 0)
        topo_log(TOPO_LOG_DEBUG, "label writer: forgot what it wrote to %zu nodes no longer "
                 "applied", n);
}

int topo_labelwriter_apply(topo_labelwriter *w, const topo_labeldiff_input *in,
                           const json_t *node, topo_labelwriter_outcome *outcome, topo_err *err)
{
    topo_labelwriter_outcome dummy;
    topo_labeldiff *d = NULL;
    topo_labeldiff_input mine;
    char digest[TOPO_SHA256_HEX_LEN + 1] = "";
    int error;

    if (outcome == NULL)
        outcome = &dummy;
    *outcome = TOPO_LABELWRITER_FAILED;
    if (in != NULL) {
        mine = remembered(w, in, node, digest);
        in = &mine;
    }
    if ((error = topo_labeldiff_compute(&d, in, node, err)) < 0) {
        count(w, error == TOPO_EINVALID ? ST_INVALID : ST_FAILED, 1);
        return error;
    }
    count(w, ST_NODES, 1);
    switch (topo_labeldiff_state_of(d)) {
    case TOPO_LABELDIFF_HELD:
        *outcome = TOPO_LABELWRITER_HELD;
        count(w, ST_HELD, 1);
        drift_backoff_settled(&w->backoff, topo_labeldiff_node_name(d), topo_clock_ms());
        publish_backoff(w);
        break;
    case TOPO_LABELDIFF_CONVERGED:
        *outcome = TOPO_LABELWRITER_CONVERGED;
        count(w, ST_CONVERGED, 1);
        remember(w, d, digest, NULL);
        drift_backoff_settled(&w->backoff, topo_labeldiff_node_name(d), topo_clock_ms());
        publish_backoff(w);
        break;
    case TOPO_LABELDIFF_PATCH:
        if (w->dry_run) {
            *outcome = TOPO_LABELWRITER_DRY_RUN;
            count(w, ST_DRY_RUN, 1);
            log_dry_run(d);
            break;
        }
        error = patch_node(w, d, outcome, err);
        if (*outcome == TOPO_LABELWRITER_PATCHED)
            remember(w, d, digest,
                     json_string_value(json_object_get(json_object_get(node, "metadata"),
                                                       "resourceVersion")));
        break;
    }
    topo_labeldiff_free(d);
    return error;
}
