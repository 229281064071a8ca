/* The ungater (ungater.h).
 *
 * Locking: one mutex (mu) guards stop, kicked and the statistics; the thread
 * drops it for every API call and cache read. The cache connection, the
 * Kubernetes client and the stepping of the placer's Lease (placer_lease.h)
 * belong to the thread alone (the client and cache are single-thread
 * objects). */
#define _POSIX_C_SOURCE 200809L
#include "ungater.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "topo/array.h"
#include "topo/clock.h"
#include "topo/k8s.h"
#include "topo/limits.h"
#include "topo/str.h"
#include "topo/admission_config.h"
#include "topo/cache.h"
#include "topo/kueue_names.h"
#include "topo/log.h"
#include "topo/metrics.h"

#include "pod_events.h"
#include "stranded.h"
#include "ungater_skip.h"
#include "wait_events.h"

/* How often a replica whose cache is not synced looks again. */
#define CACHE_POLL_MS 500

struct wh_ungater {
    char *db_path, *kubeconfig;
    topo_admission_ctx *ctx;
    long interval_ms;
    int (*cache_ready)(void *payload);
    void *cache_ready_payload;
    int led;           /* the last step's answer (the thread's) */
    int waiting_cache; /* the last step found the cache not synced (the thread's) */

    topo_k8s_config cfg;
    topo_k8s *k; /* pods: GET and PATCH */
    wh_placer_lease *lease; /* stepped by the thread (placer_lease.h) */
    topo_cache *cache;
    wh_skip *skip;                           /* the thread's */
    wh_stranded *stranded;                   /* the thread's */
    wh_wait_events *wait_events;             /* the thread's */
    _Atomic(topo_metrics_series *) rounds_h; /* topo_webhook_ungater_round_seconds */

    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* kick or stop */
    int stop;
    int kicked;
    wh_ungater_stats stats;
};

/* One gated pod of a PodSet being evaluated, copied out of the cache. */
typedef struct candidate {
    char *ns, *name, *podset; /* podset NULL: a PodSet of its own */
} candidate;

typedef struct members {
    candidate *items;
    size_t n, cap;
    int oom;
} members;

/* One gated PodSet of the cache (topo_cache_foreach_gated_podset). */
typedef struct gated {
    char *key;               /* its podset annotation; NULL: uid's pod alone */
    char *uid, *ns, *name;   /* its oldest pod */
    char *level;             /* its required level, or NULL */
    topo_resource *requests; /* per pod (the cache's effective requests) */
    size_t nrequests;
    int pod_group;           /* a Kueue pod group's (never skipped) */
    int reserved;            /* holds a reservation: its pods claim slots (never skipped) */
    int64_t created_at;      /* its oldest pod's creationTimestamp; 0: unknown */
    size_t npods;            /* its gated pods */
} gated;

typedef struct scan {
    gated *items;
    size_t n, cap;
    size_t dropped, dropped_pods; /* over TOPO_MAX_UNGATER_PODS PodSets */
    int64_t dropped_oldest;       /* their oldest creation time (0: none known) */
    int oom;
} scan;

/* How one round ended for the thread. */
enum { ROUND_DONE = 0, ROUND_ABORT = 1 };

static void gated_dispose(gated *g)
{
    free(g->key);
    free(g->uid);
    free(g->ns);
    free(g->name);
    free(g->level);
    for (size_t i = 0; i < g->nrequests; i++)
        free((char *)g->requests[i].name);
    free(g->requests);
}

static void members_dispose(members *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->items[i].ns);
        free(m->items[i].name);
        free(m->items[i].podset);
    }
    free(m->items);
    memset(m, 0, sizeof(*m));
}

static void add_stat(wh_ungater *u, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&u->mu);
    *field += n;
    pthread_mutex_unlock(&u->mu);
}

static int stopping(wh_ungater *u)
{
    pthread_mutex_lock(&u->mu);
    int s = u->stop;
    pthread_mutex_unlock(&u->mu);
    return s;
}

static void log_pod(topo_log_level level, const candidate *c, const char *outcome,
                    const char *detail)
{
    topo_log_field f[5] = {{"ns", c->ns},
                           {"pod", c->name},
                           {"podset", c->podset != NULL ? c->podset : ""},
                           {"outcome", outcome},
                           {"detail", detail}};
    topo_log_kv(level, f, detail != NULL ? 5u : 4u, "ungater: %s", outcome);
}

/* One election step when due; whether this replica may act now. A
 * replica whose cache does not follow the cluster would place and ungate
 * from stale rows while a ready one waits: it lets the Lease go instead
 * (and is not ready, wh_placement_ready). */
static int lead(wh_ungater *u)
{
    u->waiting_cache = u->cache_ready != NULL && !u->cache_ready(u->cache_ready_payload);
    if (u->waiting_cache) {
        if (u->led) {
            topo_log(TOPO_LOG_WARN, "ungater: the cache is not synced: releasing the lease");
            wh_placer_lease_release(u->lease);
        }
        return u->led = 0;
    }
    return u->led = wh_placer_lease_step(u->lease);
}

/* ---- the cache's gated pods ---- */

static const char *annotation(const topo_cache_pod *pod, const char *key)
{
    for (size_t i = 0; i < pod->nannotations; i++)
        if (strcmp(pod->annotations[i].key, key) == 0)
            return pod->annotations[i].value;
    return NULL;
}

static const char *label(const topo_cache_pod *pod, const char *key)
{
    for (size_t i = 0; i < pod->nlabels; i++)
        if (strcmp(pod->labels[i].key, key) == 0)
            return pod->labels[i].value;
    return NULL;
}

/* What the skip check reads: the required level and the requests. */
static int copy_need(gated *g, const topo_cache_pod *pod)
{
    const char *level = annotation(pod, TOPO_KUEUE_REQUIRED_TOPOLOGY);
    if (level != NULL && (g->level = topo_strdup(level)) == NULL)
        return TOPO_ENOMEM;
    if (pod->nrequests > 0 && (g->requests = calloc(pod->nrequests, sizeof(*g->requests))) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < pod->nrequests; i++) {
        if ((g->requests[i].name = topo_strdup(pod->requests[i].name)) == NULL)
            return TOPO_ENOMEM;
        g->requests[i].amount = pod->requests[i].amount;
        g->nrequests++;
    }
    g->pod_group = label(pod, TOPO_KUEUE_POD_GROUP_NAME) != NULL ||
                   annotation(pod, TOPO_KUEUE_POD_GROUP_NAME) != NULL;
    return 0;
}

/* The older of two creation times, 0 (unknown) being neither. */
static int64_t older(int64_t a, int64_t b)
{
    if (a <= 0)
        return b > 0 ? b : 0;
    return b > 0 && b < a ? b : a;
}

static int collect(const topo_cache_gated_podset *ps, void *payload)
{
    scan *s = payload;
    const topo_cache_pod *pod = ps->oldest;
    if (s->n == TOPO_MAX_UNGATER_PODS) {
        s->dropped++;
        s->dropped_pods += ps->npods;
        s->dropped_oldest = older(s->dropped_oldest, ps->created_at);
        return 0;
    }
    if (topo_array_reserve((void **)&s->items, &s->cap, s->n + 1, sizeof(*s->items)) != 0) {
        s->oom = 1;
        return TOPO_ENOMEM;
    }
    gated *g = &s->items[s->n];
    memset(g, 0, sizeof(*g));
    g->created_at = ps->created_at;
    g->npods = ps->npods;
    g->reserved = ps->reserved;
    if ((ps->key != NULL && (g->key = topo_strdup(ps->key)) == NULL) ||
        (g->uid = topo_strdup(pod->uid)) == NULL ||
        (g->ns = topo_strdup(pod->namespace_name)) == NULL ||
        (g->name = topo_strdup(pod->name)) == NULL || copy_need(g, pod) != 0) {
        gated_dispose(g);
        s->oom = 1;
        return TOPO_ENOMEM;
    }
    s->n++;
    return 0;
}

/* Arrival order: the oldest PodSet first (its oldest pod's creation time;
 * 0, unknown, counts as oldest: rows cached before schema 6), ties by
 * namespace, then PodSet (or lone pod) name. */
static int by_arrival(const void *a, const void *b)
{
    const gated *x = a, *y = b;
    int c;
    if (x->created_at != y->created_at)
        return x->created_at < y->created_at ? -1 : 1;
    if ((c = strcmp(x->ns, y->ns)) != 0)
        return c;
    if ((c = strcmp(x->key ? x->key : x->name, y->key ? y->key : y->name)) != 0)
        return c;
    return strcmp(x->uid, y->uid);
}

static void scan_dispose(scan *s)
{
    for (size_t i = 0; i < s->n; i++)
        gated_dispose(&s->items[i]);
    free(s->items);
    memset(s, 0, sizeof(*s));
}

/* A PodSet's gated pods, oldest first (topo_cache_foreach_gated_pod). */
static int collect_member(const topo_cache_pod *pod, void *payload)
{
    members *m = payload;
    const char *podset = annotation(pod, TOPO_ADMISSION_PODSET_ANNOTATION);
    if (topo_array_reserve((void **)&m->items, &m->cap, m->n + 1, sizeof(*m->items)) != 0) {
        m->oom = 1;
        return TOPO_ENOMEM;
    }
    candidate *c = &m->items[m->n];
    memset(c, 0, sizeof(*c));
    c->ns = topo_strdup(pod->namespace_name);
    c->name = topo_strdup(pod->name);
    c->podset = podset != NULL && podset[0] != '\0' ? topo_strdup(podset) : NULL;
    if (c->ns == NULL || c->name == NULL || (podset != NULL && podset[0] && c->podset == NULL)) {
        free(c->ns);
        free(c->name);
        free(c->podset);
        m->oom = 1;
        return TOPO_ENOMEM;
    }
    m->n++;
    return 0;
}

/* ---- one pod ---- */

typedef enum outcome {
    OUT_UNGATED = 0,
    OUT_SKIPPED,  /* gone, bound, or no longer gated: nothing to do */
    OUT_NOFIT,    /* the PodSet does not fit yet */
    OUT_WAITING,  /* its pod group waits for more of its pods (this one is recorded) */
    OUT_CHANGED,  /* the pod changed under us: next round */
    OUT_ERROR,    /* counted; the round goes on */
    OUT_API_DOWN  /* the API server is not answering: end the round */
} outcome;

static void add_events(wh_ungater *u, const wh_pod_events_result *r)
{
    pthread_mutex_lock(&u->mu);
    u->stats.events_created += r->created;
    u->stats.events_failed += r->failed;
    u->stats.events_deferred += r->deferred;
    u->stats.events_dropped += r->dropped;
    pthread_mutex_unlock(&u->mu);
}

static int api_down(int rc)
{
    return rc == TOPO_ECONNECT || rc == TOPO_ETIMEOUT || rc == TOPO_ESERVER ||
           rc == TOPO_ETHROTTLED || rc == TOPO_EUNAUTHORIZED || rc == TOPO_EFORBIDDEN;
}

/* The instance name Events carry (reportingInstance). */
static const char *instance(const wh_ungater *u)
{
    return wh_placer_lease_identity(u->lease);
}

/* left: the pods of the PodSet from this one on (for the log). why (size
 * TOPO_ERR_TEXT_MAX): OUT_NOFIT's reason. */
static outcome ungate_one(wh_ungater *u, const candidate *c, size_t left, char *why)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *pod = NULL, *patch = NULL;
    outcome out = OUT_ERROR;

    int rc = topo_k8s_get(&pod, u->k, &topo_k8s_pods, c->ns, c->name, &err);
    if (rc == TOPO_ENOTFOUND) {
        log_pod(TOPO_LOG_DEBUG, c, "gone", NULL);
        return OUT_SKIPPED;
    }
    if (rc < 0) {
        log_pod(TOPO_LOG_WARN, c, "get-failed", err.text);
        return api_down(rc) ? OUT_API_DOWN : OUT_ERROR;
    }
    /* The cache lags the API server: a pod released last round, or bound,
     * still looks gated there for a moment. */
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (!topo_admission_pod_json_gated(pod) || (node != NULL && node[0] != '\0')) {
        log_pod(TOPO_LOG_DEBUG, c, "not-gated", NULL);
        out = OUT_SKIPPED;
        goto done;
    }
    const char *rv = json_string_value(
        json_object_get(json_object_get(pod, "metadata"), "resourceVersion"));
    add_stat(u, &u->stats.attempts, 1);
    rc = topo_admission_ungate_pod_json(u->ctx, pod, &patch, &err);
    if (rc == TOPO_EWAITING) {
        /* Recorded as one of its group's pods: the next may complete it
         * (after a takeover this placer knows only the members it tried). */
        log_pod(TOPO_LOG_DEBUG, c, "group-waiting", err.text);
        out = OUT_WAITING;
        goto done;
    }
    if (rc == TOPO_ENOFIT) {
        snprintf(why, TOPO_ERR_TEXT_MAX, "%s", err.text);
        /* One line for the PodSet: its other pods are not tried this round. */
        char n[32];
        snprintf(n, sizeof(n), "%zu", left);
        topo_log_field f[5] = {{"ns", c->ns},
                               {"pod", c->name},
                               {"podset", c->podset != NULL ? c->podset : ""},
                               {"waiting", n},
                               {"reason", err.text}};
        topo_log_kv(TOPO_LOG_INFO, f, 5, "ungater: does not fit yet");
        out = OUT_NOFIT;
        goto done;
    }
    if (rc < 0) {
        log_pod(TOPO_LOG_WARN, c, "error", err.text);
        goto done;
    }
    /* The resourceVersion we read is the precondition: the slot was chosen
     * for that object; a pod changed since is looked at again next round
     * (its slot claim is idempotent). */
    rc = topo_k8s_patch(NULL, u->k, &topo_k8s_pods, c->ns, c->name, TOPO_K8S_JSON_PATCH, patch,
                        rv, &err);
    if (rc == 0) {
        log_pod(TOPO_LOG_INFO, c, "ungated", NULL);
        out = OUT_UNGATED;
        wh_pod_events_result r = {0, 0, 0, 0};
        wh_wait_events_placed(u->k, instance(u), c->ns, c->name,
                              json_string_value(json_object_get(
                                  json_object_get(pod, "metadata"), "uid")),
                              patch, &r);
        add_events(u, &r);
    } else if (rc == TOPO_ENOTFOUND) {
        log_pod(TOPO_LOG_INFO, c, "gone", NULL);
        out = OUT_SKIPPED;
    } else if (rc == TOPO_ECONFLICT || rc == TOPO_EINVALID) {
        /* 409 (stale resourceVersion) or 422 (a "test" op failed). */
        log_pod(TOPO_LOG_INFO, c, "changed", err.text);
        out = OUT_CHANGED;
    } else {
        log_pod(TOPO_LOG_WARN, c, "patch-failed", err.text);
        out = api_down(rc) ? OUT_API_DOWN : OUT_ERROR;
    }
done:
    json_decref(patch);
    json_decref(pod);
    return out;
}

/* ---- one round ---- */

/* Whether the PodSet can be passed over this round (ungater_skip.h);
 * *freed: what to remember when it does not fit. */
static int skip_podset(wh_ungater *u, const gated *g, uint64_t *freed)
{
    *freed = 0;
    if (u->skip == NULL || g->key == NULL || g->pod_group)
        return 0;
    wh_skip_need need = {g->key, g->level, g->requests, g->nrequests, (int64_t)g->npods};
    wh_skip_verdict v = wh_skip_check(u->skip, &need, freed);
    if (v == WH_SKIP_EVALUATE || g->reserved)
        return 0;
    if (topo_log_enabled(TOPO_LOG_DEBUG)) {
        topo_log_field f[3] = {{"ns", g->ns},
                               {"podset", g->key},
                               {"detail", v == WH_SKIP_UNCHANGED
                                              ? "no capacity freed since it last did not fit"
                                              : "no domain has room for it"}};
        topo_log_kv(TOPO_LOG_DEBUG, f, 3, "ungater: skipped");
    }
    return 1;
}

/* One PodSet: its pods oldest first until one does not fit. */
static int round_podset(wh_ungater *u, const gated *g, uint64_t freed, size_t *waiting)
{
    topo_err err = TOPO_ERR_INIT;
    members m;
    memset(&m, 0, sizeof(m));
    if (topo_cache_foreach_gated_pod(u->cache, g->key, g->key == NULL ? g->uid : NULL,
                                     collect_member, &m, &err) != 0) {
        topo_log(TOPO_LOG_ERROR, "ungater: reading the cache: %s",
                 m.oom ? "out of memory" : err.text);
        add_stat(u, &u->stats.errors, 1);
        members_dispose(&m);
        return ROUND_ABORT;
    }
    int result = ROUND_DONE;
    char why[TOPO_ERR_TEXT_MAX];
    for (size_t j = 0; j < m.n; j++) {
        /* A round can outlast the renew deadline: keep the lease, and
         * stop acting the moment it is lost. */
        if (stopping(u) || !lead(u)) {
            result = ROUND_ABORT;
            break;
        }
        outcome o = ungate_one(u, &m.items[j], m.n - j, why);
        if (o == OUT_UNGATED) {
            wh_wait_events_forget(u->wait_events, g->key, g->uid);
            add_stat(u, &u->stats.ungated, 1);
        } else if (o == OUT_CHANGED || o == OUT_WAITING) {
            (*waiting)++;
        } else if (o == OUT_ERROR) {
            add_stat(u, &u->stats.errors, 1);
        } else if (o == OUT_API_DOWN) {
            add_stat(u, &u->stats.errors, 1);
            result = ROUND_ABORT;
            break;
        } else if (o == OUT_NOFIT) {
            /* The PodSet goes as a whole: its other pods wait too, and
             * are told why when that changed (wait_events.h). */
            *waiting += m.n - j;
            if (wh_wait_events_note(u->wait_events, g->key, g->uid, why) < 0)
                add_stat(u, &u->stats.events_dropped, 1);
            if (u->skip != NULL && g->key != NULL &&
                wh_skip_failed(u->skip, g->key, freed, topo_clock_ms()) < 0)
                topo_log(TOPO_LOG_WARN, "ungater: out of memory (PodSet %s not remembered)",
                         g->key);
            break;
        }
    }
    members_dispose(&m);
    return result;
}

/* Pods pinned to a node that failed before they were bound (stranded.h):
 * once this replica places (not while it settles after a takeover: the
 * cache may not show the previous placer's pods yet). */
static void fail_stranded(wh_ungater *u)
{
    topo_err err = TOPO_ERR_INIT;
    wh_stranded_result r;
    int64_t now = topo_clock_ms();
    if (!wh_placer_lease_placing(u->lease, now))
        return;
    if (wh_stranded_run(u->stranded, u->ctx, u->k, now, &r, &err) < 0)
        topo_log(TOPO_LOG_ERROR, "ungater: stranded pods: %s", err.text);
    pthread_mutex_lock(&u->mu);
    u->stats.stranded_failed += r.failed;
    u->stats.stranded_errors += r.errors;
    pthread_mutex_unlock(&u->mu);
}

/* One round. The placement lock is never held here: each pod's evaluation
 * (topo_admission_ungate_pod_json) takes it for its own placement only, so
 * an admission waits for at most one PodSet's engine pass. */
static int round_run(wh_ungater *u)
{
    topo_err err = TOPO_ERR_INIT;
    scan s;
    int64_t t0 = topo_clock_ns() / 1000;
    memset(&s, 0, sizeof(s));
    /* One read: the PodSets and whether each holds a reservation. */
    if (topo_cache_foreach_gated_podset(u->cache, collect, &s, &err) != 0) {
        topo_log(TOPO_LOG_ERROR, "ungater: reading the cache: %s",
                 s.oom ? "out of memory" : err.text);
        add_stat(u, &u->stats.errors, 1);
        scan_dispose(&s);
        return ROUND_ABORT;
    }
    if (s.dropped > 0)
        topo_log(TOPO_LOG_WARN,
                 "ungater: %zu gated PodSets beyond the first %u wait for a later round",
                 s.dropped, TOPO_MAX_UNGATER_PODS);
    if (s.n > 1)
        qsort(s.items, s.n, sizeof(*s.items), by_arrival);

    int result = ROUND_DONE;
    size_t waiting = 0, skipped = 0;
    /* The oldest PodSet left gated: one passed over, or one with pods
     * still waiting after its turn. */
    int64_t oldest = s.dropped_oldest;
    if (u->skip != NULL)
        wh_skip_round_begin(u->skip, topo_clock_ms());
    for (size_t i = 0; result == ROUND_DONE && i < s.n; i++) {
        uint64_t freed = 0;
        size_t before = waiting;
        if (skip_podset(u, &s.items[i], &freed)) {
            waiting += s.items[i].npods;
            skipped++;
        } else {
            result = round_podset(u, &s.items[i], freed, &waiting);
        }
        if (waiting > before)
            oldest = older(oldest, s.items[i].created_at);
    }
    if (u->skip != NULL)
        wh_skip_round_end(u->skip, result == ROUND_DONE);
    if (result == ROUND_DONE && !stopping(u) && lead(u))
        fail_stranded(u);
    if (!stopping(u) && lead(u)) {
        wh_pod_events_result r = {0, 0, 0, 0};
        wh_wait_events_run(u->wait_events, u->cache, u->k, instance(u), &r);
        add_events(u, &r);
    }
    int64_t took = topo_clock_ns() / 1000 - t0;
    topo_metrics_observe(atomic_load(&u->rounds_h), (double)took / 1e6);
    pthread_mutex_lock(&u->mu);
    u->stats.skipped += skipped;
    u->stats.last_round_us = took;
    u->stats.remembered = u->skip != NULL ? wh_skip_remembered(u->skip) : 0;
    /* A gauge, set by complete rounds only (an aborted one saw too little). */
    if (result == ROUND_DONE) {
        u->stats.waiting = (uint64_t)(waiting + s.dropped_pods);
        u->stats.oldest_waiting_created = oldest;
    }
    pthread_mutex_unlock(&u->mu);
    scan_dispose(&s);
    return result;
}

/* ---- the thread ---- */

static void post_events(wh_ungater *u)
{
    wh_pod_events_result r = {0, 0, 0, 0};
    wh_pod_events_post(u->ctx, u->k, instance(u), &r);
    add_events(u, &r);
}

static void *ungater_main(void *arg)
{
    wh_ungater *u = arg;
    int64_t next_round = 0; /* the first round at once */
    for (;;) {
        int leader = lead(u);
        int64_t now = topo_clock_ms();
        pthread_mutex_lock(&u->mu);
        int due = u->kicked || now >= next_round;
        if (u->stop) {
            pthread_mutex_unlock(&u->mu);
            break;
        }
        if (due)
            u->kicked = 0;
        pthread_mutex_unlock(&u->mu);

        /* Admission's Events first: a pod gated just now is told why
         * before a round tells it the reason changed. */
        if (due && leader)
            post_events(u);
        if (due && leader) {
            round_run(u);
            add_stat(u, &u->stats.rounds, 1);
        }
        /* Events queued by this replica's placements, led or not (it may
         * have placed them just before it let go). */
        if (due)
            post_events(u);
        if (due)
            next_round = topo_clock_ms() + u->interval_ms;

        /* Sleep until the next round or election step, a kick, or stop. */
        now = topo_clock_ms();
        int64_t wake = next_round;
        /* Not stepping while the cache is not synced: look again soon. */
        int64_t step = u->waiting_cache ? now + CACHE_POLL_MS
                                        : wh_placer_lease_next_step_ms(u->lease);
        if (step < wake)
            wake = step;
        long ms = wake > now ? (long)(wake - now) : 0;
        pthread_mutex_lock(&u->mu);
        if (ms > 0 && !u->stop && !u->kicked) {
            struct timespec until = topo_clock_deadline(ms);
            pthread_cond_timedwait(&u->cv, &u->mu, &until);
        }
        pthread_mutex_unlock(&u->mu);
    }
    wh_placer_lease_release(u->lease);
    return NULL;
}

/* ---- lifecycle ---- */

static void destroy(wh_ungater *u)
{
    wh_placer_lease_free(u->lease);
    topo_k8s_free(u->k);
    topo_k8s_config_dispose(&u->cfg);
    topo_cache_close(u->cache);
    wh_skip_free(u->skip);
    wh_stranded_free(u->stranded);
    wh_wait_events_free(u->wait_events);
    pthread_cond_destroy(&u->cv);
    pthread_mutex_destroy(&u->mu);
    free(u->db_path);
    free(u->kubeconfig);
    free(u);
}

int wh_ungater_start(wh_ungater **out, const wh_ungater_opts *opts, topo_err *err)
{
    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ungater: no options");
    if (opts->db_path == NULL || opts->db_path[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "ungater: db_path: the cache file is required");
    if (opts->ctx == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ungater: ctx: the admission context is required");
    long interval =
        opts->interval_ms != 0 ? opts->interval_ms : TOPO_ADMISSION_UNGATE_INTERVAL_DEFAULT_MS;
    if (interval < TOPO_UNGATER_INTERVAL_MIN_MS || interval > TOPO_UNGATER_INTERVAL_MAX_MS)
        return topo_err_set(err, TOPO_EINVALID, "ungater: interval_ms: %ld not in %ld..%ld",
                            opts->interval_ms, TOPO_UNGATER_INTERVAL_MIN_MS,
                            TOPO_UNGATER_INTERVAL_MAX_MS);

    wh_ungater *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ungater: out of memory");
    pthread_mutex_init(&u->mu, NULL);
    topo_clock_cond_init(&u->cv); /* deadlines: topo_clock_deadline */
    topo_k8s_config empty = {0};
    u->cfg = empty;
    u->ctx = opts->ctx;
    u->interval_ms = interval;
    u->cache_ready = opts->cache_ready;
    u->cache_ready_payload = opts->cache_ready_payload;
    atomic_init(&u->rounds_h, NULL);
    int rc;
    u->db_path = topo_strdup(opts->db_path);
    u->kubeconfig = topo_strdup(opts->kubeconfig);
    if (u->db_path == NULL || (opts->kubeconfig != NULL && u->kubeconfig == NULL)) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ungater: out of memory");
        goto fail;
    }
    /* Short client-side retries: the next round retries anyway, and a stop
     * (SIGTERM) waits for the call in flight. Rate limits: the defaults. */
    topo_k8s_opts ko = {.timeout_ms = 10000, .max_retries = 2, .backoff_max_ms = 2000};
    const topo_k8s_config *cfg = opts->k8s_config;
    if (cfg == NULL) {
        if ((rc = topo_k8s_config_load(&u->cfg, u->kubeconfig, err)) < 0)
            goto wrapped;
        cfg = &u->cfg;
    }
    if ((rc = topo_k8s_create(&u->k, cfg, &ko, err)) < 0)
        goto wrapped;
    wh_placer_lease_opts lo = {.k8s_config = cfg,
                               .k8s_opts = &ko,
                               .ctx = u->ctx,
                               .lease_namespace = opts->lease_namespace,
                               .lease_name = opts->lease_name,
                               .identity = opts->identity,
                               .leader_election = opts->leader_election,
                               .lease_ms = opts->lease_ms,
                               .renew_deadline_ms = opts->renew_deadline_ms,
                               .retry_ms = opts->retry_ms,
                               .settle_ms = opts->settle_ms};
    if ((rc = wh_placer_lease_create(&u->lease, &lo, err)) < 0)
        goto wrapped;
    if ((rc = topo_cache_open(&u->cache, u->db_path, NULL, err)) < 0)
        goto wrapped;
    if (opts->nlives > 0 && (rc = wh_skip_create(&u->skip, opts->lives, opts->nlives, err)) < 0)
        goto wrapped;
    if ((rc = wh_stranded_create(&u->stranded, err)) < 0 ||
        (rc = wh_wait_events_create(&u->wait_events, err)) < 0)
        goto wrapped;
    if (pthread_create(&u->thread, NULL, ungater_main, u) != 0) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ungater: cannot start a thread");
        goto fail;
    }
    u->started = 1;
    topo_log(TOPO_LOG_INFO, "ungater: started (interval %ld ms, leader election %s)",
             u->interval_ms, opts->leader_election ? "on" : "off");
    *out = u;
    return 0;
wrapped:
    topo_err_wrap(err, "ungater");
fail:
    destroy(u);
    return rc;
}

void wh_ungater_kick(wh_ungater *u)
{
    if (u == NULL)
        return;
    pthread_mutex_lock(&u->mu);
    u->kicked = 1;
    pthread_cond_signal(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

void wh_ungater_stop(wh_ungater *u)
{
    if (u == NULL)
        return;
    pthread_mutex_lock(&u->mu);
    u->stop = 1;
    pthread_cond_signal(&u->cv);
    int started = u->started;
    u->started = 0;
    pthread_mutex_unlock(&u->mu);
    if (started)
        pthread_join(u->thread, NULL);
}

void wh_ungater_free(wh_ungater *u)
{
    if (u == NULL)
        return;
    wh_ungater_stop(u);
    destroy(u);
}

const char *wh_ungater_lease_name(const wh_ungater *u)
{
    return wh_placer_lease_name(u->lease);
}

int wh_ungater_placer_known(wh_ungater *u)
{
    return wh_placer_lease_known(u->lease);
}

wh_ungater_placer_state wh_ungater_placer(wh_ungater *u, char *holder, size_t size,
                                              long *wait_ms)
{
    return wh_placer_lease_state(u->lease, holder, size, wait_ms);
}

void wh_ungater_observe_rounds(wh_ungater *u, topo_metrics_series *histogram)
{
    if (u != NULL)
        atomic_store(&u->rounds_h, histogram);
}

void wh_ungater_get_stats(wh_ungater *u, wh_ungater_stats *out)
{
    wh_placer_lease_stats ls;
    wh_placer_lease_get_stats(u->lease, &ls);
    pthread_mutex_lock(&u->mu);
    *out = u->stats;
    pthread_mutex_unlock(&u->mu);
    out->leader = ls.leader;
    out->takeovers = ls.takeovers;
    out->last_settle_ms = ls.last_settle_ms;
}
