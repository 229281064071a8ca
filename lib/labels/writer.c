/* topo-sync's label writer (include/topo/labelwriter.h): one node's diff
 * sent as one merge PATCH, the Event after it, the counters. */
#define _POSIX_C_SOURCE 200809L /* gethostname, clock_gettime */

#include "topo/labelwriter.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/json.h"
#include "topo/log.h"
#include "topo/str.h"

/* The counters of topo_labelwriter_stats, updated by the applying thread
 * and read by a metrics thread. */
enum {
    ST_NODES, ST_CONVERGED, ST_HELD, ST_SENT, ST_FAILED, ST_CONFLICTS, ST_GONE, ST_DRY_RUN,
    ST_DRIFT_NODES, ST_DRIFT_LABELS, ST_SET, ST_REMOVED, ST_EVENTS, ST_EVENTS_FAILED,
    ST_INVALID, ST_COUNT
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
    _Atomic uint64_t stats[ST_COUNT];
};

/* The Events' namespace as a resource path: core/v1 events. */
static const topo_k8s_resource events_res = {"", "v1", "events", "Event", 1};

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
    for (int i = 0; i < ST_COUNT; i++)
        atomic_init(&w->stats[i], 0);
    if (w->component == NULL || w->instance == NULL || w->event_ns == NULL) {
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
        .events_created = v[ST_EVENTS], .events_failed = v[ST_EVENTS_FAILED],
        .invalid = v[ST_INVALID]};
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The Event after a write; its failure is logged and counted only. */
static void create_event(topo_labelwriter *w, const topo_labeldiff *d)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *ev = NULL;
    int error;

    if (w->no_events || topo_labeldiff_message(d) == NULL)
        return;
    /* A first labelling moves nothing: an Event for each node of a new
     * cluster would double the requests of its labelling. */
    if (!topo_labeldiff_had_owned(d) && !w->initial_events)
        return;
    if ((error = topo_labelwriter_event(&ev, d, w->component, w->instance, w->event_ns,
                                        wall_ns(), &err)) == 0)
        error = topo_k8s_create_object(NULL, w->k, &events_res, w->event_ns, ev, &err);
    json_decref(ev);
    if (error < 0) {
        count(w, ST_EVENTS_FAILED, 1);
        topo_log_field f[] = {{"node", topo_labeldiff_node_name(d)}, {"error", err.text}};
        topo_log_kv(TOPO_LOG_WARN, f, 2, "could not create the event of a label change");
        return;
    }
    count(w, ST_EVENTS, 1);
}

/* Logs what the write changes: drift at warn, the rest at info. */
static void log_write(const topo_labeldiff *d, const char *what)
{
    const char *msg = topo_labeldiff_message(d);
    char n[24];
    snprintf(n, sizeof n, "%zu", topo_labeldiff_annotation_count(d));
    topo_log_field f[] = {{"node", topo_labeldiff_node_name(d)},
                          {"labels", msg != NULL ? msg : ""},
                          {"annotations", n}};
    if (topo_labeldiff_drift_count(d) > 0)
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

/* The PATCH, sent again after a 409 up to max_attempts times. */
static int send_patch(topo_labelwriter *w, const topo_labeldiff *d,
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
        log_write(d, "labelled node");
        create_event(w, d);
        return 0;
    }
    if (error == TOPO_ENOTFOUND) {
        *outcome = TOPO_LABELWRITER_GONE;
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

int topo_labelwriter_apply(topo_labelwriter *w, const topo_labeldiff_input *in,
                           const json_t *node, topo_labelwriter_outcome *outcome, topo_err *err)
{
    topo_labelwriter_outcome dummy;
    topo_labeldiff *d = NULL;
    int error;

    if (outcome == NULL)
        outcome = &dummy;
    *outcome = TOPO_LABELWRITER_FAILED;
    if ((error = topo_labeldiff_compute(&d, in, node, err)) < 0) {
        count(w, error == TOPO_EINVALID ? ST_INVALID : ST_FAILED, 1);
        return error;
    }
    count(w, ST_NODES, 1);
    switch (topo_labeldiff_state_of(d)) {
    case TOPO_LABELDIFF_HELD:
        *outcome = TOPO_LABELWRITER_HELD;
        count(w, ST_HELD, 1);
        break;
    case TOPO_LABELDIFF_CONVERGED:
        *outcome = TOPO_LABELWRITER_CONVERGED;
        count(w, ST_CONVERGED, 1);
        break;
    case TOPO_LABELDIFF_PATCH:
        if (w->dry_run) {
            *outcome = TOPO_LABELWRITER_DRY_RUN;
            count(w, ST_DRY_RUN, 1);
            log_dry_run(d);
            break;
        }
        error = send_patch(w, d, outcome, err);
        break;
    }
    topo_labeldiff_free(d);
    return error;
}
