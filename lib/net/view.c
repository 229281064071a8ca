/* A view over a reflector (view.h): a list fills a fresh set that is
 * swapped in whole, events edit the current one under the write lock, and
 * the generation tells waiters that something they read changed. */
#define _POSIX_C_SOURCE 200809L

#include "topo/view.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "topo/clock.h"

struct topo_view {
    const topo_view_ops *ops;
    void *payload;
    topo_reflector *refl; /* NULL: fed through topo_view_handler */

    pthread_rwlock_t lock; /* guards set; generation and synced move under it */
    void *set;
    _Atomic uint64_t generation;
    atomic_int synced;

    /* The waiters (topo_view_wait) sleep on cv; wakes counts topo_view_wake. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t wakes;

    void *fresh;   /* a list being read (the reflector's thread only) */
    int once;      /* topo_view_list: the first list ends the run */
    pthread_t thread;
    int running;
};

/* After the generation moved: waiters look again. Taking mu orders this
 * after a waiter's check, so no wake is lost. */
static void announce(topo_view *v)
{
    pthread_mutex_lock(&v->mu);
    pthread_cond_broadcast(&v->cv);
    pthread_mutex_unlock(&v->mu);
}

static int on_list_begin(topo_err *err, void *payload)
{
    topo_view *v = payload;
    v->ops->destroy(v->fresh, v->payload);
    if ((v->fresh = v->ops->create(v->payload)) == NULL)
        return topo_err_nomem(err, "view: list");
    return 0;
}

static int on_list_object(json_t *object, topo_err *err, void *payload)
{
    topo_view *v = payload;
    int rc = v->ops->apply(v->fresh, object, 0, err, v->payload);
    return rc < 0 ? rc : 0;
}

/* Swaps the list in whole. */
static int on_list_end(const char *rv, topo_err *err, void *payload)
{
    topo_view *v = payload;
    int first = !atomic_load(&v->synced);
    void *old;
    (void)rv;
    (void)err;
    if (v->ops->listed != NULL)
        v->ops->listed(v->fresh, first, v->payload);
    pthread_rwlock_wrlock(&v->lock);
    old = v->set;
    int changed = first || v->ops->differ == NULL || v->ops->differ(old, v->fresh, v->payload);
    v->set = v->fresh;
    if (changed)
        atomic_fetch_add(&v->generation, 1);
    atomic_store(&v->synced, 1);
    pthread_rwlock_unlock(&v->lock);
    v->fresh = NULL;
    if (changed)
        announce(v);
    v->ops->destroy(old, v->payload);
    return v->once ? 1 : 0;
}

static void on_list_abort(void *payload)
{
    topo_view *v = payload;
    v->ops->destroy(v->fresh, v->payload);
    v->fresh = NULL;
}

static int on_event(topo_k8s_event_type type, json_t *object, const char *rv, topo_err *err,
                    void *payload)
{
    topo_view *v = payload;
    (void)rv;
    pthread_rwlock_wrlock(&v->lock);
    int rc = v->ops->apply(v->set, object, type == TOPO_K8S_DELETED, err, v->payload);
    if (rc > 0)
        atomic_fetch_add(&v->generation, 1);
    pthread_rwlock_unlock(&v->lock);
    if (rc > 0)
        announce(v);
    return rc < 0 ? rc : 0;
}

/* Every failure is retried (no error callback): a view serves what it
 * holds meanwhile. */
static const topo_reflector_handler view_handler = {
    .list_begin = on_list_begin,
    .list_object = on_list_object,
    .list_end = on_list_end,
    .list_abort = on_list_abort,
    .event = on_event,
};

const topo_reflector_handler *topo_view_handler(void)
{
    return &view_handler;
}

int topo_view_create(topo_view **out, topo_k8s *k, const topo_reflector_opts *ro,
                     const topo_view_ops *ops, void *payload, topo_err *err)
{
    topo_view *v;
    int rc;

    *out = NULL;
    if (ops == NULL || ops->create == NULL || ops->destroy == NULL || ops->apply == NULL ||
        (k != NULL && ro == NULL))
        return topo_err_set(err, TOPO_EINVALID, "view: callbacks (and, with a client, "
                                                "what to list) are required");
    if ((v = calloc(1, sizeof(*v))) == NULL)
        return topo_err_nomem(err, "view");
    v->ops = ops;
    v->payload = payload;
    atomic_init(&v->generation, 0);
    atomic_init(&v->synced, 0);
    if (pthread_rwlock_init(&v->lock, NULL) != 0) {
        free(v);
        return topo_err_nomem(err, "view");
    }
    /* A monotonic clock: a wall-clock step must not stretch a wait. */
    if (topo_clock_cond_init(&v->cv) != 0 || pthread_mutex_init(&v->mu, NULL) != 0) {
        pthread_rwlock_destroy(&v->lock);
        free(v);
        return topo_err_nomem(err, "view");
    }
    if ((v->set = ops->create(payload)) == NULL) {
        rc = topo_err_nomem(err, ro != NULL && ro->name != NULL ? ro->name : "view");
        goto fail;
    }
    if (k != NULL && (rc = topo_reflector_create(&v->refl, k, ro, &view_handler, v, err)) < 0)
        goto fail;
    *out = v;
    return 0;
fail:
    topo_view_free(v);
    return rc;
}

static void *view_main(void *arg)
{
    topo_view *v = arg;
    (void)topo_reflector_run(v->refl, NULL); /* returns once stopped */
    return NULL;
}

int topo_view_start(topo_view *v, topo_err *err)
{
    if (v->running)
        return 0;
    if (v->refl == NULL)
        return topo_err_set(err, TOPO_EINVALID, "view: no client to list with");
    v->once = 0;
    if (pthread_create(&v->thread, NULL, view_main, v) != 0)
        return topo_err_set(err, TOPO_EGENERIC, "view: cannot start its thread");
    v->running = 1;
    return 0;
}

int topo_view_list(topo_view *v, topo_err *err)
{
    if (v->refl == NULL)
        return topo_err_set(err, TOPO_EINVALID, "view: no client to list with");
    v->once = 1;
    int rc = topo_reflector_run(v->refl, err);
    v->once = 0;
    return rc;
}

void topo_view_stop(topo_view *v)
{
    if (v == NULL || v->refl == NULL)
        return;
    topo_reflector_stop(v->refl);
    if (v->running) {
        pthread_join(v->thread, NULL);
        v->running = 0;
    }
}

void topo_view_free(topo_view *v)
{
    if (v == NULL)
        return;
    topo_view_stop(v);
    topo_reflector_free(v->refl);
    v->ops->destroy(v->set, v->payload);
    v->ops->destroy(v->fresh, v->payload);
    pthread_cond_destroy(&v->cv);
    pthread_mutex_destroy(&v->mu);
    pthread_rwlock_destroy(&v->lock);
    free(v);
}

const void *topo_view_read(topo_view *v)
{
    pthread_rwlock_rdlock(&v->lock);
    return v->set;
}

void topo_view_read_end(topo_view *v)
{
    pthread_rwlock_unlock(&v->lock);
}

int topo_view_synced(const topo_view *v)
{
    return v != NULL && atomic_load(&v->synced);
}

uint64_t topo_view_generation(const topo_view *v)
{
    return atomic_load(&v->generation);
}

uint64_t topo_view_wait(topo_view *v, uint64_t seen, int64_t deadline_ms)
{
    struct timespec ts = topo_clock_at_ms(deadline_ms);
    pthread_mutex_lock(&v->mu);
    uint64_t wakes = v->wakes;
    while (atomic_load(&v->generation) == seen && v->wakes == wakes) {
        if (pthread_cond_timedwait(&v->cv, &v->mu, &ts) != 0)
            break; /* the deadline (ETIMEDOUT); nothing else is returned here */
    }
    pthread_mutex_unlock(&v->mu);
    return atomic_load(&v->generation);
}

void topo_view_wake(topo_view *v)
{
    pthread_mutex_lock(&v->mu);
    v->wakes++;
    pthread_cond_broadcast(&v->cv);
    pthread_mutex_unlock(&v->mu);
}
