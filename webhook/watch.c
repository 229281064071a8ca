/* topo-webhook's in-memory views (watch.h) over a reflector
 * (topo/reflector.h), which decides when to list, watch and wait: a list
 * fills a fresh view that is swapped in whole, events edit the current one
 * under the write lock. */
#define _POSIX_C_SOURCE 200809L

#include "watch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "topo/log.h"
#include "topo/reflector.h"
#include "topo/str.h"

struct wh_watch {
    char *name;
    const wh_watch_ops *ops;
    void *payload;
    topo_k8s *k;
    topo_reflector *refl;

    pthread_rwlock_t lock; /* guards view */
    void *view;
    atomic_int synced; /* read by any thread */

    void *fresh; /* a list being read (the watch thread's) */

    pthread_t thread;
    int running;
};

static int on_list_begin(topo_err *err, void *payload)
{
    wh_watch *w = payload;
    if ((w->fresh = w->ops->create(w->payload)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "%s: list: out of memory", w->name);
    return 0;
}

static int on_list_object(json_t *object, topo_err *err, void *payload)
{
    wh_watch *w = payload;
    (void)err; /* a code alone: the reflector names the step */
    return w->ops->apply(w->fresh, object, 0, w->payload);
}

/* Swaps the list in whole. */
static int on_list_end(const char *rv, topo_err *err, void *payload)
{
    wh_watch *w = payload;
    int first = !atomic_load(&w->synced);
    void *old;
    (void)rv;
    (void)err;
    pthread_rwlock_wrlock(&w->lock);
    old = w->view;
    w->view = w->fresh;
    pthread_rwlock_unlock(&w->lock);
    w->fresh = NULL;
    w->ops->destroy(old, w->payload);
    if (w->ops->listed != NULL)
        w->ops->listed(w->view, first, w->payload);
    atomic_store(&w->synced, 1);
    return 0;
}

static void on_list_abort(void *payload)
{
    wh_watch *w = payload;
    w->ops->destroy(w->fresh, w->payload);
    w->fresh = NULL;
}

static int on_event(topo_k8s_event_type type, json_t *object, const char *rv, topo_err *err,
                    void *payload)
{
    wh_watch *w = payload;
    int rc;
    (void)rv;
    (void)err;
    pthread_rwlock_wrlock(&w->lock);
    rc = w->ops->apply(w->view, object, type == TOPO_K8S_DELETED, w->payload);
    pthread_rwlock_unlock(&w->lock);
    return rc;
}

/* Every failure is retried: the views serve what they hold meanwhile. */
static const topo_reflector_handler view_handler = {
    .list_begin = on_list_begin,
    .list_object = on_list_object,
    .list_end = on_list_end,
    .list_abort = on_list_abort,
    .event = on_event,
};

static void *watch_main(void *arg)
{
    wh_watch *w = arg;
    (void)topo_reflector_run(w->refl, NULL); /* returns once stopped */
    return NULL;
}

int wh_watch_create(wh_watch **out, const topo_k8s_config *k8s_cfg, const wh_watch_opts *opts,
                    const wh_watch_ops *ops, void *payload, topo_err *err)
{
    wh_watch *w;
    int rc;

    *out = NULL;
    if (k8s_cfg == NULL || opts == NULL || opts->name == NULL || opts->res == NULL ||
        ops == NULL)
        return topo_err_set(err, TOPO_EINVALID, "watch: a resource, a name, callbacks and a "
                                                "Kubernetes configuration are required");
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return topo_err_nomem(err, opts->name);
    pthread_rwlock_init(&w->lock, NULL);
    w->ops = ops;
    w->payload = payload;
    if ((w->name = topo_strdup(opts->name)) == NULL || (w->view = ops->create(payload)) == NULL) {
        rc = topo_err_nomem(err, opts->name);
        goto fail;
    }
    if ((rc = topo_k8s_create(&w->k, k8s_cfg, opts->client.k8s, err)) < 0) {
        topo_err_wrap(err, "%s: ", opts->name);
        goto fail;
    }
    topo_reflector_opts ro = {
        .name = opts->name,
        .res = opts->res,
        .label_selector = opts->label_selector,
        .watch_timeout_s = opts->client.watch_timeout_s,
        .backoff_base_ms = opts->client.backoff_base_ms,
        .backoff_max_ms = opts->client.backoff_max_ms,
    };
    if ((rc = topo_reflector_create(&w->refl, w->k, &ro, &view_handler, w, err)) < 0)
        goto fail;
    *out = w;
    return 0;
fail:
    wh_watch_free(w);
    return rc;
}

int wh_watch_start(wh_watch *w, topo_err *err)
{
    if (w->running)
        return 0;
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0)
        return topo_err_set(err, TOPO_EGENERIC, "%s: cannot start its thread", w->name);
    w->running = 1;
    return 0;
}

const void *wh_watch_read(wh_watch *w)
{
    pthread_rwlock_rdlock(&w->lock);
    return w->view;
}

void wh_watch_read_end(wh_watch *w)
{
    pthread_rwlock_unlock(&w->lock);
}

int wh_watch_synced(wh_watch *w)
{
    return w != NULL && atomic_load(&w->synced);
}

void wh_watch_stop(wh_watch *w)
{
    if (w == NULL || !w->running)
        return;
    topo_reflector_stop(w->refl);
    pthread_join(w->thread, NULL);
    w->running = 0;
}

void wh_watch_free(wh_watch *w)
{
    if (w == NULL)
        return;
    wh_watch_stop(w);
    topo_reflector_free(w->refl);
    topo_k8s_free(w->k);
    if (w->ops != NULL) {
        w->ops->destroy(w->view, w->payload);
        w->ops->destroy(w->fresh, w->payload);
    }
    free(w->name);
    pthread_rwlock_destroy(&w->lock);
    free(w);
}

/* ---- one warning per object and problem ---- */

struct wh_once_entry {
    char *key;
    char *text;
};

static void once_drop(wh_once *o, size_t i)
{
    free(o->e[i].key);
    free(o->e[i].text);
    o->e[i] = o->e[--o->n];
}

int wh_once_new(wh_once *o, const char *key, const char *text)
{
    struct wh_once_entry *ne;
    size_t i;
    /* Linear: only objects with a problem are here, and the API server
     * validates what it stores. */
    for (i = 0; i < o->n; i++) {
        if (strcmp(o->e[i].key, key) == 0) {
            char *nt;
            if (strcmp(o->e[i].text, text) == 0)
                return 0;
            if ((nt = strdup(text)) != NULL) {
                free(o->e[i].text);
                o->e[i].text = nt;
            }
            return 1;
        }
    }
    if ((ne = realloc(o->e, (o->n + 1) * sizeof(*ne))) == NULL)
        return 1;
    o->e = ne;
    ne[o->n].key = strdup(key);
    ne[o->n].text = strdup(text);
    if (ne[o->n].key == NULL || ne[o->n].text == NULL) {
        free(ne[o->n].key);
        free(ne[o->n].text);
        return 1;
    }
    o->n++;
    return 1;
}

void wh_once_forget(wh_once *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++) {
        if (strcmp(o->e[i].key, key) == 0) {
            once_drop(o, i);
            return;
        }
    }
}

void wh_once_prune(wh_once *o, int (*keep)(const char *key, const void *payload),
                   const void *payload)
{
    for (size_t i = 0; i < o->n;) {
        if (keep(o->e[i].key, payload))
            i++;
        else
            once_drop(o, i);
    }
}

void wh_once_free(wh_once *o)
{
    while (o->n > 0)
        once_drop(o, o->n - 1);
    free(o->e);
    o->e = NULL;
}
