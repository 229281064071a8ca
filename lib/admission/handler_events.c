/* The Events topo-webhook owes pods (adm_event_queue,
 * topo_admission_events_drain): a placement decides them under ctx->mu,
 * before the pod exists; the ungater posts them once the cache shows it.
 *
 * Locking: the queue is under events_mu alone, so that a placement queues
 * without waiting for a drain's cache reads. A drain takes the whole queue
 * out under events_mu, looks its pods up under ctx->mu (the cache
 * connection), calls fn under neither, and puts back what is still waiting,
 * before anything queued meanwhile (oldest first). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/log.h"
#include "topo/pool.h"
#include "topo/str.h"

#include "handler_internal.h"

struct adm_event {
    /* gated_podset: the pod was gated (no room): found among the gated pods
     * of that PodSet; NULL: found by the slot it holds */
    char *ns, *reservation_id, *gated_podset;
    char *type, *reason, *message;
    int32_t slot;
    int64_t at; /* when queued (the ctx's clock, seconds) */
};

typedef struct adm_event event;

/* A gated pod an Event went to (ctx->posted). */
struct adm_posted {
    char *uid, *reason;
    int64_t at;
};

/* The posted pods are remembered this long (an Event waits at most
 * TOPO_ADMISSION_EVENT_TTL_S for its pod) and at most this many. */
#define POSTED_TTL_S (2 * TOPO_ADMISSION_EVENT_TTL_S)
#define POSTED_MAX (4 * TOPO_ADMISSION_EVENTS_MAX)
/* A gated pod created this long before its Event was queued is not the
 * pod the Event is about (the API server's clock against ours). */
#define GATED_SKEW_S 30

/* A pod found for an event: copied into the drain's pool. */
typedef struct found {
    const char *name, *uid;
    int want_gated; /* the slot has no real pod: look among the PodSet's gated pods */
} found;

static void event_dispose(event *e)
{
    free(e->ns);
    free(e->reservation_id);
    free(e->gated_podset);
    free(e->type);
    free(e->reason);
    free(e->message);
}

static void events_dispose(event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        event_dispose(&ev[i]);
    free(ev);
}

static void posted_dispose(struct adm_posted *p)
{
    free(p->uid);
    free(p->reason);
}

void adm_events_free(topo_admission_ctx *ctx)
{
    events_dispose(ctx->events, ctx->nevents);
    ctx->events = NULL;
    ctx->nevents = ctx->cap_events = 0;
    for (size_t i = 0; i < ctx->nposted; i++)
        posted_dispose(&ctx->posted[i]);
    free(ctx->posted);
    ctx->posted = NULL;
    ctx->nposted = 0;
}

/* Forgets the posted pods older than POSTED_TTL_S (oldest first). */
static void posted_expire(topo_admission_ctx *ctx, int64_t now)
{
    size_t keep = 0;
    for (size_t i = 0; i < ctx->nposted; i++) {
        if (now - ctx->posted[i].at > POSTED_TTL_S)
            posted_dispose(&ctx->posted[i]);
        else
            ctx->posted[keep++] = ctx->posted[i];
    }
    ctx->nposted = keep;
}

/* Remembers that uid got an Event of reason; the oldest goes past
 * POSTED_MAX. Out of memory: not remembered (a sibling may get a second
 * Event; nothing is lost). */
static void posted_add(topo_admission_ctx *ctx, const char *uid, const char *reason, int64_t now)
{
    if (ctx->posted == NULL &&
        (ctx->posted = calloc(POSTED_MAX, sizeof(*ctx->posted))) == NULL)
        return;
    if (ctx->nposted == POSTED_MAX) {
        posted_dispose(&ctx->posted[0]);
        memmove(ctx->posted, ctx->posted + 1, (POSTED_MAX - 1) * sizeof(*ctx->posted));
        ctx->nposted--;
    }
    struct adm_posted p = {topo_strdup(uid), topo_strdup(reason), now};
    if (p.uid == NULL || p.reason == NULL) {
        posted_dispose(&p);
        return;
    }
    ctx->posted[ctx->nposted++] = p;
}

static int posted_has(const topo_admission_ctx *ctx, const char *uid, const char *reason)
{
    for (size_t i = 0; i < ctx->nposted; i++)
        if (strcmp(ctx->posted[i].uid, uid) == 0 && strcmp(ctx->posted[i].reason, reason) == 0)
            return 1;
    return 0;
}

/* Room for one more under events_mu; 0, or -1 (full, or out of memory). */
static int reserve_one(topo_admission_ctx *ctx)
{
    if (ctx->nevents >= TOPO_ADMISSION_EVENTS_MAX)
        return -1;
    if (ctx->nevents < ctx->cap_events)
        return 0;
    size_t cap = ctx->cap_events ? ctx->cap_events * 2 : 8;
    if (cap > TOPO_ADMISSION_EVENTS_MAX)
        cap = TOPO_ADMISSION_EVENTS_MAX;
    event *grown = realloc(ctx->events, cap * sizeof(*grown));
    if (grown == NULL)
        return -1;
    ctx->events = grown;
    ctx->cap_events = cap;
    return 0;
}

void adm_event_queue(topo_admission_ctx *ctx, const char *ns, const char *reservation_id,
                     int32_t slot, const char *gated_podset, const char *type, const char *reason,
                     const char *message, int64_t now)
{
    event e = {topo_strdup(ns),   topo_strdup(reservation_id), topo_strdup(gated_podset),
               topo_strdup(type), topo_strdup(reason),         topo_strdup(message),
               slot,              now};
    if (e.ns == NULL || e.reservation_id == NULL ||
        (gated_podset != NULL && e.gated_podset == NULL) ||
        e.type == NULL || e.reason == NULL || e.message == NULL) {
        event_dispose(&e);
        atomic_fetch_add(&ctx->events_dropped, 1);
        return;
    }
    pthread_mutex_lock(&ctx->events_mu);
    int rc = reserve_one(ctx);
    if (rc == 0)
        ctx->events[ctx->nevents++] = e;
    pthread_mutex_unlock(&ctx->events_mu);
    if (rc != 0) {
        topo_log(TOPO_LOG_DEBUG, "event %s for slot %d of reservation %s dropped: %d queued",
                 reason, (int)slot, reservation_id, TOPO_ADMISSION_EVENTS_MAX);
        event_dispose(&e);
        atomic_fetch_add(&ctx->events_dropped, 1);
    }
}

/* The pod of slot e->slot, when the cache holds one (a claimant that is a
 * real pod's uid, not a provisional claim). 0 (found->uid NULL: not yet),
 * or an error other than TOPO_ENOTFOUND. */
static int find_by_slot(found *f, topo_admission_ctx *ctx, const event *e, topo_pool *pool,
                        topo_err *err)
{
    topo_cache_reservation r;
    topo_cache_pod pod;
    if (e->reservation_id[0] == '\0') {
        /* gated before its PodSet was ever placed: no slot to look at */
        f->want_gated = e->gated_podset != NULL;
        return 0;
    }
    int rc = topo_cache_reservation_get(&r, ctx->cache, e->reservation_id, pool, err);
    if (rc == TOPO_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    const char *uid = NULL;
    for (size_t i = 0; i < r.nslots; i++)
        if (r.slots[i].index == e->slot)
            uid = r.slots[i].pod_uid;
    if (uid == NULL || strncmp(uid, TOPO_CACHE_CLAIMANT_PREFIX,
                               strlen(TOPO_CACHE_CLAIMANT_PREFIX)) == 0) {
        f->want_gated = e->gated_podset != NULL;
        return 0;
    }
    rc = topo_cache_get_pod(&pod, ctx->cache, uid, pool, err);
    if (rc == TOPO_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    if (strcmp(pod.namespace_name, e->ns) != 0)
        return 0;
    f->name = pod.name;
    f->uid = pod.uid;
    return 0;
}

/* The newest gated pod of the event's PodSet in its namespace that has
 * not had an Event of that reason yet (from an earlier drain, or from an
 * earlier event of this one): the pod the event is about was gated
 * moments ago (it carries no slot; a Job's pod has no name at admission),
 * and the pods of a PodSet gated together get one each. */
typedef struct gated_walk {
    const topo_admission_ctx *ctx;
    const event *e;
    const event *ev; /* this drain's events before e, and their pods */
    const found *prev;
    size_t nprev;
    found *f;
    topo_pool *pool;
    int oom;
} gated_walk;

static int taken(const gated_walk *g, const char *uid)
{
    for (size_t i = 0; i < g->nprev; i++)
        if (g->prev[i].uid != NULL && strcmp(g->prev[i].uid, uid) == 0 &&
            strcmp(g->ev[i].reason, g->e->reason) == 0)
            return 1;
    return posted_has(g->ctx, uid, g->e->reason);
}

static int gated_row(const topo_cache_pod *pod, void *payload)
{
    gated_walk *g = payload;
    if (strcmp(pod->namespace_name, g->e->ns) != 0 ||
        (pod->created_at != 0 && pod->created_at < g->e->at - GATED_SKEW_S) ||
        taken(g, pod->uid))
        return 0;
    /* oldest first: the last one seen is the newest */
    g->f->name = topo_pool_strdup(g->pool, pod->name);
    g->f->uid = topo_pool_strdup(g->pool, pod->uid);
    if (g->f->name == NULL || g->f->uid == NULL) {
        g->oom = 1;
        return 1;
    }
    return 0;
}

/* Under ctx->mu: the pod of each event, where the cache has it. */
static int find_pods(found *f, topo_admission_ctx *ctx, const event *ev, size_t n,
                     topo_pool *pool, topo_err *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = find_by_slot(&f[i], ctx, &ev[i], pool, err);
        if (rc == 0 && f[i].want_gated) {
            gated_walk g = {ctx, &ev[i], ev, f, i, &f[i], pool, 0};
            rc = topo_cache_foreach_gated_pod(ctx->cache, ev[i].gated_podset, NULL, gated_row,
                                              &g, err);
            if (g.oom)
                rc = topo_err_nomem(err, "events");
            else if (rc > 0)
                rc = 0;
        }
    }
    return rc;
}

/* Puts back the events still waiting (kept, oldest first) before those
 * queued during the drain; beyond TOPO_ADMISSION_EVENTS_MAX the newest go. */
static void requeue(topo_admission_ctx *ctx, event *kept, size_t nkept)
{
    size_t dropped = 0;
    pthread_mutex_lock(&ctx->events_mu);
    size_t total = nkept + ctx->nevents;
    size_t n = total > TOPO_ADMISSION_EVENTS_MAX ? TOPO_ADMISSION_EVENTS_MAX : total;
    event *all = n > 0 ? malloc(n * sizeof(*all)) : NULL;
    if (n > 0 && all == NULL) {
        /* Out of memory: what was queued meanwhile stays, kept ones go. */
        dropped = nkept;
        events_dispose(kept, nkept);
    } else {
        for (size_t i = 0; i < total; i++) {
            event *e = i < nkept ? &kept[i] : &ctx->events[i - nkept];
            if (i < n) {
                all[i] = *e;
            } else {
                event_dispose(e);
                dropped++;
            }
        }
        free(kept);
        free(ctx->events);
        ctx->events = all;
        ctx->nevents = ctx->cap_events = n;
    }
    pthread_mutex_unlock(&ctx->events_mu);
    if (dropped > 0)
        atomic_fetch_add(&ctx->events_dropped, dropped);
}

int topo_admission_events_drain(topo_admission_ctx *ctx, topo_admission_event_fn fn,
                                void *payload, topo_err *err)
{
    int64_t now = adm_now_s(ctx);
    posted_expire(ctx, now);
    pthread_mutex_lock(&ctx->events_mu);
    event *ev = ctx->events;
    size_t n = ctx->nevents;
    ctx->events = NULL;
    ctx->nevents = ctx->cap_events = 0;
    pthread_mutex_unlock(&ctx->events_mu);

    /* Too old: the pod never came (its creation failed, another replica
     * placed it), or it came and went. */
    size_t live = 0, expired = 0;
    for (size_t i = 0; i < n; i++) {
        if (now - ev[i].at > TOPO_ADMISSION_EVENT_TTL_S) {
            event_dispose(&ev[i]);
            expired++;
        } else {
            ev[live++] = ev[i];
        }
    }
    if (expired > 0)
        atomic_fetch_add(&ctx->events_dropped, expired);
    if (live == 0) {
        free(ev);
        return 0;
    }

    int rc = 0, passed = 0;
    topo_pool *pool = topo_pool_create();
    found *f = calloc(live, sizeof(*f));
    if (pool == NULL || f == NULL) {
        rc = topo_err_nomem(err, "events");
    } else {
        pthread_mutex_lock(&ctx->mu);
        rc = find_pods(f, ctx, ev, live, pool, err);
        pthread_mutex_unlock(&ctx->mu);
    }

    size_t kept = 0;
    for (size_t i = 0; i < live; i++) {
        if (f == NULL || f[i].uid == NULL) {
            ev[kept++] = ev[i];
            continue;
        }
        topo_admission_event out = {ev[i].ns,     f[i].name,      f[i].uid,
                                    ev[i].type,   ev[i].reason,   ev[i].message};
        if (ev[i].gated_podset != NULL)
            posted_add(ctx, f[i].uid, ev[i].reason, now);
        fn(payload, &out);
        passed++;
        event_dispose(&ev[i]);
    }
    requeue(ctx, ev, kept);
    free(f);
    topo_pool_free(pool);
    return rc < 0 ? rc : passed;
}
