/* topo-sync's Node view (nodes.h). The view is a jansson object keyed by
 * node name; a list builds a new one beside it and swaps it in at list_end. */
#define _POSIX_C_SOURCE 200809L

#include "nodes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/clock.h"
#include "topo/labeldiff.h"
#include "topo/log.h"

struct sync_nodes {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    json_t *view;    /* name -> trimmed node; guarded by mu */
    json_t *listing; /* the list in progress (the reflector's thread only) */
    sync_nodes_keep keep;
    int keep_all;
    uint64_t generation;
    uint64_t wakes; /* sync_nodes_wake calls, so that a wait sees one */
    int synced;
};

int sync_nodes_create(sync_nodes **out, const sync_nodes_keep *keep, topo_err *err)
{
    *out = NULL;
    sync_nodes *n = calloc(1, sizeof(*n));
    if (!n || !(n->view = json_object()))
        goto nomem;
    if (keep)
        n->keep = *keep;
    n->keep_all = !keep;
    /* A monotonic clock: a wall-clock step must not stretch a wait. */
    if (topo_clock_cond_init(&n->cv) != 0)
        goto nomem;
    if (pthread_mutex_init(&n->mu, NULL) != 0) {
        pthread_cond_destroy(&n->cv);
        goto nomem;
    }
    *out = n;
    return 0;
nomem:
    if (n)
        json_decref(n->view);
    free(n);
    return topo_err_nomem(err, "nodes");
}

void sync_nodes_free(sync_nodes *n)
{
    if (!n)
        return;
    json_decref(n->view);
    json_decref(n->listing);
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
    free(n);
}

/* A string-to-string map of the object's kept keys, or an empty one:
 * labels and annotations are read as the API server guarantees them,
 * anything else is dropped rather than trusted. */
static json_t *string_map(const json_t *obj, int all, const char *const *prefixes,
                          size_t nprefixes, const char *const *keys, size_t nkeys, int topograph)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    if (!out || !json_is_object(obj))
        return out;
    json_object_foreach ((json_t *)obj, k, v) {
        /* What the writer owns is what the view keeps: one rule (labeldiff.h). */
        if (!json_is_string(v) ||
            !(all || topo_labeldiff_owns(&(topo_labeldiff_owned){prefixes, nprefixes, keys,
                                                                  nkeys, topograph},
                                         k)))
            continue;
        if (json_object_set(out, k, v) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static const char *str_field(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* {"uid", "resourceVersion", "labels", "annotations"} of a Node (what n
 * keeps of them), with its name in *name_out; NULL when it has no name (or
 * out of memory). The resourceVersion tells the label writer a view that
 * does not show its last write yet from a node someone changed since. */
static json_t *trim(const sync_nodes *n, const json_t *node, const char **name_out,
                    topo_err *err)
{
    const json_t *md = json_object_get(node, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const sync_nodes_keep *k = &n->keep;
    if (!name || !*name) {
        topo_err_set(err, TOPO_EINVALID, "nodes: an object without metadata.name");
        return NULL;
    }
    json_t *out = json_pack(
        "{s:s, s:s, s:o?, s:o?}", "uid", str_field(md, "uid"), "resourceVersion",
        str_field(md, "resourceVersion"), "labels",
        string_map(json_object_get(md, "labels"), n->keep_all, k->label_prefixes,
                   k->nlabel_prefixes, k->label_keys, k->nlabel_keys, k->label_topograph),
        "annotations",
        string_map(json_object_get(md, "annotations"), n->keep_all, k->annotation_prefixes,
                   k->nannotation_prefixes, k->annotation_keys, k->nannotation_keys, 0));
    if (!out || !json_object_get(out, "labels") || !json_object_get(out, "annotations")) {
        json_decref(out);
        topo_err_nomem(err, "nodes");
        return NULL;
    }
    *name_out = name;
    return out;
}

/* Whether a node changed in what the controller reads. */
static int differs(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a != b;
    return !json_equal(json_object_get(a, "labels"), json_object_get(b, "labels")) ||
           !json_equal(json_object_get(a, "annotations"), json_object_get(b, "annotations")) ||
           !json_equal(json_object_get(a, "uid"), json_object_get(b, "uid"));
}

/* Whether two views differ in what the controller reads (a relist that
 * brings only newer resourceVersions wakes no round). */
static int views_differ(const json_t *a, const json_t *b)
{
    const char *name;
    const json_t *v;
    if (!a || !b || json_object_size(a) != json_object_size(b))
        return 1;
    json_object_foreach((json_t *)a, name, v)
        if (differs(v, json_object_get(b, name)))
            return 1;
    return 0;
}

static void bump(sync_nodes *n)
{
    n->generation++;
    pthread_cond_broadcast(&n->cv);
}

static int list_begin(topo_err *err, void *payload)
{
    sync_nodes *n = payload;
    json_decref(n->listing);
    n->listing = json_object();
    return n->listing ? 0 : topo_err_nomem(err, "nodes");
}

static int list_object(json_t *object, topo_err *err, void *payload)
{
    sync_nodes *n = payload;
    const char *name = NULL;
    json_t *t = trim(n, object, &name, err);
    if (!t)
        return err->code == TOPO_EINVALID ? 0 : err->code; /* a nameless object is skipped */
    return json_object_set_new(n->listing, name, t) == 0 ? 0 : topo_err_nomem(err, "nodes");
}

static int list_end(const char *rv, topo_err *err, void *payload)
{
    (void)rv;
    (void)err;
    sync_nodes *n = payload;
    pthread_mutex_lock(&n->mu);
    int changed = views_differ(n->view, n->listing) || !n->synced;
    json_decref(n->view);
    n->view = n->listing;
    n->listing = NULL;
    n->synced = 1;
    if (changed)
        bump(n);
    size_t count = json_object_size(n->view);
    pthread_mutex_unlock(&n->mu);
    topo_log(TOPO_LOG_INFO, "nodes: listed %zu", count);
    return 0;
}

static void list_abort(void *payload)
{
    sync_nodes *n = payload;
    json_decref(n->listing);
    n->listing = NULL;
}

static int event(topo_k8s_event_type type, json_t *object, const char *rv, topo_err *err,
                 void *payload)
{
    (void)rv;
    sync_nodes *n = payload;
    const char *name = NULL;
    json_t *t = trim(n, object, &name, err);
    if (!t)
        return err->code == TOPO_EINVALID ? 0 : err->code;
    int rc = 0;
    pthread_mutex_lock(&n->mu);
    json_t *old = json_object_get(n->view, name);
    if (type == TOPO_K8S_DELETED) {
        if (old) {
            json_object_del(n->view, name);
            bump(n);
        }
        json_decref(t);
    } else {
        /* Unchanged in what is read: the node kept, with the resourceVersion
         * of its last change of labels, annotations or uid (what the label
         * writer compares). */
        if (old && !differs(old, t))
            json_decref(t);
        else if (json_object_set_new(n->view, name, t) != 0)
            rc = topo_err_nomem(err, "nodes");
        else
            bump(n);
    }
    pthread_mutex_unlock(&n->mu);
    return rc;
}

const topo_reflector_handler *sync_nodes_handler(void)
{
    static const topo_reflector_handler h = {
        .list_begin = list_begin,
        .list_object = list_object,
        .list_end = list_end,
        .list_abort = list_abort,
        .event = event,
    };
    return &h;
}

int sync_nodes_synced(const sync_nodes *n)
{
    sync_nodes *m = (sync_nodes *)n;
    pthread_mutex_lock(&m->mu);
    int s = m->synced;
    pthread_mutex_unlock(&m->mu);
    return s;
}

uint64_t sync_nodes_generation(const sync_nodes *n)
{
    sync_nodes *m = (sync_nodes *)n;
    pthread_mutex_lock(&m->mu);
    uint64_t g = m->generation;
    pthread_mutex_unlock(&m->mu);
    return g;
}

json_t *sync_nodes_snapshot(sync_nodes *n, uint64_t *generation_out)
{
    pthread_mutex_lock(&n->mu);
#ifdef JANSSON_THREAD_SAFE_REFCOUNT
    /* Shallow: a new object holding a reference to each node's trimmed
     * object. The view never edits one (an event or a relist replaces it
     * whole), so the copy and the view share them read-only, which jansson
     * allows across threads, and its atomic reference counts let either
     * thread drop the last reference. A deep copy held 20 MB more in every
     * round at 10,000 nodes (bench/README.md "bench/sync"). */
    json_t *copy = json_copy(n->view);
#else
    /* Without atomic reference counts nothing may be shared across threads. */
    json_t *copy = json_deep_copy(n->view);
#endif
    if (generation_out)
        *generation_out = n->generation;
    pthread_mutex_unlock(&n->mu);
    return copy;
}

uint64_t sync_nodes_wait(sync_nodes *n, uint64_t seen, int64_t deadline_ms)
{
    struct timespec ts = topo_clock_at_ms(deadline_ms);
    pthread_mutex_lock(&n->mu);
    uint64_t wakes = n->wakes;
    while (n->generation == seen && n->wakes == wakes) {
        if (pthread_cond_timedwait(&n->cv, &n->mu, &ts) != 0)
            break; /* the deadline (ETIMEDOUT); nothing else is returned here */
    }
    uint64_t g = n->generation;
    pthread_mutex_unlock(&n->mu);
    return g;
}

void sync_nodes_wake(sync_nodes *n)
{
    pthread_mutex_lock(&n->mu);
    n->wakes++;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
}
