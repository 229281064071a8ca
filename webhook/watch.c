/* The list+watch loop of topo-webhook's in-memory views (watch.h). */
#define _POSIX_C_SOURCE 200809L

#include "watch.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/http_internal.h" /* topo_http_backoff_ms: the client's own jitter */
#include "topo/log.h"

struct wh_watch {
    char *name;
    char *label_selector;
    const topo_k8s_resource *res;
    long backoff_base_ms, backoff_max_ms, watch_timeout_s;
    const wh_watch_ops *ops;
    void *payload;
    topo_k8s *k;

    pthread_rwlock_t lock; /* guards view */
    void *view;
    atomic_int synced; /* read by any thread */

    /* Touched by the watch thread only. */
    void *fresh; /* a list being read */
    char rv[TOPO_K8S_RV_MAX];
    uint64_t rng;

    pthread_t thread;
    int running;
    atomic_int stop;
};

static int on_item(json_t *item, void *payload)
{
    wh_watch *w = payload;
    return w->ops->apply(w->fresh, item, 0, w->payload);
}

/* Lists into a fresh view and swaps it in whole. */
static int relist(wh_watch *w, topo_err *err)
{
    topo_k8s_list_opts lo = TOPO_K8S_LIST_OPTS_INIT;
    int rc, first = !atomic_load(&w->synced);
    void *old;
    if ((w->fresh = w->ops->create(w->payload)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "%s: list: out of memory", w->name);
    lo.label_selector = w->label_selector;
    if ((rc = topo_k8s_list(w->rv, w->k, w->res, NULL, &lo, on_item, w, err)) != 0) {
        /* A callback's code carries no message of its own. */
        if (rc == TOPO_ENOMEM || rc == TOPO_ELIMIT)
            topo_err_set(err, rc, "%s: list: %s", w->name, topo_strerror(rc));
        w->ops->destroy(w->fresh, w->payload);
        w->fresh = NULL;
        w->rv[0] = '\0';
        return rc;
    }
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

static int on_event(topo_k8s_event_type type, json_t *object, void *payload)
{
    wh_watch *w = payload;
    int rc;
    if (type == TOPO_K8S_BOOKMARK)
        return 0;
    pthread_rwlock_wrlock(&w->lock);
    rc = w->ops->apply(w->view, object, type == TOPO_K8S_DELETED, w->payload);
    pthread_rwlock_unlock(&w->lock);
    return rc;
}

/* Sleeps ms in steps, so that a stop is seen within 50 ms. */
static void nap(wh_watch *w, long ms)
{
    while (ms > 0 && !w->stop) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static void *watch_main(void *arg)
{
    wh_watch *w = arg;
    topo_err err = TOPO_ERR_INIT;
    int failures = 0;

    while (!w->stop) {
        topo_k8s_watch_opts wo = TOPO_K8S_WATCH_OPTS_INIT;
        int rc;
        topo_err_clear(&err);
        if (w->rv[0] == '\0' && (rc = relist(w, &err)) != 0) {
            if (rc == TOPO_EGONE)
                continue; /* a continue token expired mid-list: list again */
            goto failed;
        }
        wo.label_selector = w->label_selector;
        wo.timeout_seconds = w->watch_timeout_s;
        wo.stop = &w->stop;
        rc = topo_k8s_watch(w->k, w->res, NULL, w->rv, &wo, on_event, w, &err);
        if (rc == TOPO_EGONE) {
            /* History compacted past our position: the view stays served
             * until the relist replaces it. */
            topo_log(TOPO_LOG_INFO, "%s: resourceVersion %s expired, listing again", w->name,
                     w->rv);
            w->rv[0] = '\0';
            continue;
        }
        if (rc != 0)
            goto failed;
        failures = 0;
        continue;
    failed:
        if (w->stop)
            break;
        {
            long ms = topo_http_backoff_ms(w->backoff_base_ms, w->backoff_max_ms, failures,
                                           &w->rng);
            topo_log(TOPO_LOG_WARN, "%s: %s; retrying in %ld ms", w->name, err.text, ms);
            nap(w, ms);
        }
        if (failures < 30) /* 2^30 times any base is past any cap */
            failures++;
    }
    return NULL;
}

int wh_watch_create(wh_watch **out, const topo_k8s_config *k8s_cfg, const wh_watch_opts *opts,
                    const wh_watch_ops *ops, void *payload, topo_err *err)
{
    wh_watch *w;
    struct timespec ts;
    int rc;

    *out = NULL;
    if (k8s_cfg == NULL || opts == NULL || opts->name == NULL || opts->res == NULL ||
        ops == NULL)
        return topo_err_set(err, TOPO_EINVALID, "watch: a resource, a name, callbacks and a "
                                                "Kubernetes configuration are required");
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", opts->name);
    pthread_rwlock_init(&w->lock, NULL);
    w->res = opts->res;
    w->ops = ops;
    w->payload = payload;
    w->backoff_base_ms = opts->client.backoff_base_ms > 0 ? opts->client.backoff_base_ms : 200;
    w->backoff_max_ms = opts->client.backoff_max_ms;
    if (w->backoff_max_ms < w->backoff_base_ms)
        w->backoff_max_ms = w->backoff_base_ms > 10000 ? w->backoff_base_ms : 10000;
    w->watch_timeout_s = opts->client.watch_timeout_s > 0 ? opts->client.watch_timeout_s : 0;
    /* Replicas started together must not retry in step. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    w->rng = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)w;
    if ((w->name = strdup(opts->name)) == NULL || (w->view = ops->create(payload)) == NULL ||
        (opts->label_selector != NULL &&
         (w->label_selector = strdup(opts->label_selector)) == NULL)) {
        rc = topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", opts->name);
        goto fail;
    }
    if ((rc = topo_k8s_create(&w->k, k8s_cfg, opts->client.k8s, err)) < 0) {
        topo_err_wrap(err, "%s: ", opts->name);
        goto fail;
    }
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
    w->stop = 0;
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
    w->stop = 1;
    pthread_join(w->thread, NULL);
    w->running = 0;
}

void wh_watch_free(wh_watch *w)
{
    if (w == NULL)
        return;
    wh_watch_stop(w);
    topo_k8s_free(w->k);
    if (w->ops != NULL) {
        w->ops->destroy(w->view, w->payload);
        w->ops->destroy(w->fresh, w->payload);
    }
    free(w->label_selector);
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
