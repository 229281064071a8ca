/* The cache filler (include/topo/filler.h, docs/cache.md): a reflector (topo/reflector.h)
 * per kind feeding the SQLite cache, and optionally a live snapshot, in
 * batches; the reflector decides when to list, watch and wait, the
 * callbacks here what a list or an event does to the cache.
 *
 * Locking: one mutex (db) guards the cache connection, the open batch, the
 * live snapshot's writer side and the statistics. Kind threads take it per
 * event (and for a whole relist, which must be one transaction); the
 * committer thread takes it to close the batch every commit_ms. The live
 * snapshots (opts.live and opts.lives, gathered in `lives`) get every node
 * and pod change and are committed with every batch. Per-kind `synced`
 * flags are atomics, read without the lock. */
#define _POSIX_C_SOURCE 200809L
#include "topo/array.h"
#include "topo/backoff.h"
#include "topo/clock.h"
#include "topo/filler.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/decode.h"
#include "topo/podreq.h"
#include "topo/k8s.h"
#include "topo/cache.h"
#include "topo/cache_json.h"
#include "topo/log.h"
#include "topo/pool.h"
#include "topo/reflector.h"
#include "topo/strmap.h"

#define NKINDS 3
/* --once gives up after this many failed attempts in a row. */
#define MAX_FAILURES_ONCE 3
/* What a callback returns to end a list or a watch because of a stop. */
#define STOPPED 1
/* The waits before a kind lists again after the cache refused a write
 * (a full disk, an I/O error): the reflector's own policy. */
#define RESTART_BASE_MS TOPO_REFLECTOR_BACKOFF_BASE_MS_DEFAULT
#define RESTART_MAX_MS TOPO_REFLECTOR_BACKOFF_MAX_MS_DEFAULT

/* The keys the cache holds for a kind (node names, pod uids). */
typedef struct key_list {
    char **keys;
    size_t n, cap;
} key_list;

typedef struct kind_state {
    struct topo_filler *f;
    topo_reflector_failures failures; /* its reflectors' failures, by reason */
    topo_cache_kind kind;
    const topo_k8s_resource *res;
    int enabled;
    pthread_t thread;
    int started;
    topo_k8s *k;
    topo_reflector *refl;             /* while running; set and cleared under db */
    int from_store;                   /* watching from the rv the cache stored */
    char pending_rv[TOPO_K8S_RV_MAX]; /* to store with the next commit */
    atomic_int synced;                /* listed, or resumed from the stored rv */
    int restart;                      /* list again: the cache lost a batch (db) */
    int restarts;                     /* such restarts in a row, for the backoff */
    uint64_t rng;                     /* the backoff's jitter */
    /* The relist in progress (db held from list_begin to its end). */
    key_list before;                  /* keys the cache held (live only) */
    uint64_t listed;                  /* objects listed */
    topo_pool *scratch;               /* per event decoding (live) */
    topo_strmap *seen;                /* keys listed during a relist (live) */
    char **seen_keys;
    size_t nseen, capseen;
} kind_state;

struct topo_filler {
    topo_filler_opts opts;
    topo_live **lives; /* opts.live and opts.lives, without NULLs or repeats */
    size_t nlives;
    topo_k8s_config cfg;
    topo_cache *cache;
    pthread_mutex_t db;
    int batch_open;
    size_t batch_events;
    atomic_int stop; /* set with stop_all */
    int fatal;
    topo_err fatal_err;
    int broken; /* a cache write failed; the kinds restart (db) */
    topo_filler_stats stats;
    kind_state kinds[NKINDS];
    pthread_t committer;
    int committer_started;
    int kinds_running;
    pthread_cond_t done;
};

static const topo_cache_kind kind_of[NKINDS] = {TOPO_CACHE_NODES, TOPO_CACHE_PODS,
                                                TOPO_CACHE_JOBS};

/* ---- small helpers ---- */

static int stopping(const topo_filler *f)
{
    return f->stop || (f->opts.stop != NULL && *f->opts.stop);
}

/* Stops every kind (db held): the running reflectors end their watches,
 * a kind waiting to restart wakes. */
static void stop_all(topo_filler *f)
{
    f->stop = 1;
    for (size_t i = 0; i < NKINDS; i++)
        topo_reflector_stop(f->kinds[i].refl);
    pthread_cond_broadcast(&f->done);
}

/* Errors that end the filler. A one-shot sync reports what another try
 * will not fix at once. A daemon backs off everything that can heal
 * without a new binary or configuration (RBAC fixed, a resource served
 * again, disk space freed): only running out of memory and a cache file
 * SQLite found corrupt end it, and its owner restarts the process (a
 * restart moves a corrupt file aside, and starts with all its memory). */
static int fatal_code(const topo_filler *f, int code)
{
    if (!f->opts.once)
        return code == TOPO_ENOMEM || topo_cache_corrupt(f->cache);
    return code == TOPO_EUNAUTHORIZED || code == TOPO_EFORBIDDEN || code == TOPO_EINVALID ||
           code == TOPO_ENOMEM || code == TOPO_EIO || code == TOPO_ELIMIT ||
           code == TOPO_EUNSUPPORTED || code == TOPO_ENOTFOUND;
}

static void set_fatal(topo_filler *f, const topo_err *err, int code)
{
    if (!f->fatal) {
        f->fatal = code ? code : TOPO_EGENERIC;
        if (err != NULL)
            f->fatal_err = *err;
        else
            topo_err_set(&f->fatal_err, f->fatal, "filler: %s", topo_strerror(f->fatal));
    }
    stop_all(f);
}

/* A callback's own failure (the cache or the live snapshot refused a
 * change; db held), as the callback returns it. A one-shot sync leaves it
 * to on_error. A daemon ends on what cannot heal; otherwise the batch is
 * gone (SQLite rolled it back, or the commit failed) while the reflectors
 * moved past it: every kind stops, is not ready, and lists again after a
 * backoff (kind_main), until a write succeeds. Logged and counted (reason
 * "cache") once per failure, not again by the reflectors being stopped. */
static int cache_failed(topo_filler *f, int rc, const topo_err *err)
{
    if (f->opts.once || rc >= 0 || stopping(f))
        return rc;
    if (fatal_code(f, rc)) {
        set_fatal(f, err, rc);
        return rc;
    }
    if (f->broken)
        return STOPPED; /* this failure was counted; the restart is under way */
    f->broken = 1;
    f->stats.errors++;
    topo_log(TOPO_LOG_ERROR, "filler: %s; not ready, listing every kind again after a backoff",
             err != NULL && err->text[0] != '\0' ? err->text : topo_strerror(rc));
    for (size_t i = 0; i < NKINDS; i++) {
        kind_state *ks = &f->kinds[i];
        if (!ks->enabled)
            continue;
        atomic_fetch_add(&ks->failures.n[TOPO_REFLECTOR_CACHE], 1);
        atomic_store(&ks->synced, 0);
        ks->restart = 1;
        topo_reflector_stop(ks->refl);
    }
    return STOPPED;
}

/* ---- batches (db held) ---- */

static int ensure_batch(topo_filler *f, topo_err *err)
{
    if (f->batch_open)
        return 0;
    int rc = topo_cache_begin(f->cache, err);
    if (rc == 0) {
        f->batch_open = 1;
        f->batch_events = 0;
    }
    return rc;
}

/* Stores the watch positions reached and commits the batch, then publishes
 * the live snapshot's changes. */
static int flush(topo_filler *f, topo_err *err)
{
    int rc = 0;
    if (!f->batch_open)
        return 0;
    for (size_t i = 0; i < NKINDS && rc == 0; i++) {
        kind_state *ks = &f->kinds[i];
        if (ks->pending_rv[0] != '\0') {
            rc = topo_cache_set_watch_rv(f->cache, ks->kind, ks->pending_rv, err);
            ks->pending_rv[0] = '\0';
        }
    }
    if (rc == 0)
        rc = topo_cache_commit(f->cache, err);
    else
        topo_cache_rollback(f->cache, NULL);
    f->batch_open = 0;
    f->batch_events = 0;
    if (rc == 0) {
        f->stats.commits++;
        for (size_t i = 0; i < f->nlives && rc == 0; i++)
            rc = topo_live_commit(f->lives[i], err);
    }
    return rc;
}

/* ---- the live snapshot (db held) ---- */

static const char *meta_string(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(json_object_get(obj, "metadata"), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int live_pod(topo_filler *f, kind_state *ks, const json_t *pod, topo_err *err)
{
    const char *uid = meta_string(pod, "uid");
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *status = json_object_get(pod, "status");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(status, "phase"));
    topo_resource *req = NULL;
    size_t nreq = 0;
    if (uid == NULL)
        return 0;
    topo_pool_clear(ks->scratch);
    if (topo_pod_requests(&req, &nreq, spec, "spec", ks->scratch, err) < 0)
        return 0; /* the cache rejected it too; counted there */
    int terminal = topo_pod_phase_finished(phase);
    /* Every bound pod that still runs takes capacity, whoever placed it. */
    int charged = node != NULL && node[0] != '\0' && !terminal;
    int rc = 0;
    for (size_t i = 0; i < f->nlives && rc == 0; i++)
        rc = topo_live_upsert_pod(f->lives[i], uid, node, charged, req, nreq, err);
    return rc;
}

static int live_node(topo_filler *f, kind_state *ks, const json_t *node, topo_err *err)
{
    topo_node_spec spec;
    topo_pool_clear(ks->scratch);
    if (topo_decode_node(&spec, node, "", ks->scratch, err) < 0)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < f->nlives && rc == 0; i++)
        rc = topo_live_upsert_node(f->lives[i], &spec, err);
    return rc;
}

static int live_upsert(topo_filler *f, kind_state *ks, const json_t *obj, topo_err *err)
{
    if (f->nlives == 0)
        return 0;
    if (ks->kind == TOPO_CACHE_NODES)
        return live_node(f, ks, obj, err);
    if (ks->kind == TOPO_CACHE_PODS)
        return live_pod(f, ks, obj, err);
    return 0;
}

static int live_delete(topo_filler *f, kind_state *ks, const char *key, topo_err *err)
{
    int rc = 0;
    for (size_t i = 0; i < f->nlives && rc == 0; i++) {
        if (ks->kind == TOPO_CACHE_NODES)
            rc = topo_live_delete_node(f->lives[i], key, err);
        else if (ks->kind == TOPO_CACHE_PODS)
            rc = topo_live_delete_pod(f->lives[i], key, err);
    }
    return rc;
}

static const char *key_of(const kind_state *ks, const json_t *obj)
{
    return meta_string(obj, ks->kind == TOPO_CACHE_NODES ? "name" : "uid");
}

/* ---- relist ---- */

static void seen_clear(kind_state *ks)
{
    for (size_t i = 0; i < ks->nseen; i++)
        free(ks->seen_keys[i]);
    ks->nseen = 0;
    topo_strmap_free(ks->seen);
    ks->seen = NULL;
}

static int seen_add(kind_state *ks, const char *key)
{
    if (topo_strmap_get(ks->seen, key) >= 0)
        return 0;
    if (ks->nseen == ks->capseen && topo_array_reserve((void **)&ks->seen_keys, &ks->capseen,
                                                       ks->nseen + 1, sizeof(*ks->seen_keys)) != 0)
        return TOPO_ENOMEM;
    size_t n = strlen(key) + 1;
    char *copy = malloc(n);
    if (copy == NULL)
        return TOPO_ENOMEM;
    memcpy(copy, key, n);
    ks->seen_keys[ks->nseen++] = copy;
    return topo_strmap_put(ks->seen, copy, 0);
}

static int on_list_object(json_t *item, topo_err *err, void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    topo_err local = TOPO_ERR_INIT;
    /* A stop must not wait for the end of a 100k-object list (this thread
     * holds the lock the committer would pass the stop on with). */
    if (stopping(f))
        return STOPPED;
    int rc = topo_cache_upsert_json(f->cache, ks->kind, item, &local);
    if (rc == TOPO_EINVALID) {
        f->stats.rejected++;
        topo_log(TOPO_LOG_WARN, "filler: %s: skipping a malformed object: %s",
                 ks->res->plural, local.text);
        return 0;
    }
    if (rc < 0) {
        *err = local;
        return cache_failed(f, rc, err);
    }
    const char *key = key_of(ks, item);
    /* Only the live snapshot needs to know what the list no longer has. */
    if (f->nlives > 0 && key != NULL && (rc = seen_add(ks, key)) < 0)
        return cache_failed(f, topo_err_set(err, rc, "filler: out of memory"), err);
    if ((rc = live_upsert(f, ks, item, err)) < 0)
        return cache_failed(f, rc, err);
    ks->listed++;
    return 0;
}

static void keys_free(key_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->keys[i]);
    free(l->keys);
    l->keys = NULL;
    l->n = l->cap = 0;
}

static int keys_add(key_list *l, const char *key)
{
    if (l->n == l->cap &&
        topo_array_reserve((void **)&l->keys, &l->cap, l->n + 1, sizeof(*l->keys)) != 0)
        return TOPO_ENOMEM;
    size_t n = strlen(key) + 1;
    if ((l->keys[l->n] = malloc(n)) == NULL)
        return TOPO_ENOMEM;
    memcpy(l->keys[l->n++], key, n);
    return 0;
}

static int collect_node(const topo_node_spec *node, const char *rv, void *payload)
{
    (void)rv;
    return keys_add(payload, node->name);
}

static int collect_pod(const topo_cache_pod *pod, void *payload)
{
    return keys_add(payload, pod->uid);
}

static int collect_keys(topo_filler *f, kind_state *ks, key_list *out, topo_err *err)
{
    int rc = 0;
    if (ks->kind == TOPO_CACHE_NODES)
        rc = topo_cache_foreach_node(f->cache, collect_node, out, err);
    else if (ks->kind == TOPO_CACHE_PODS)
        rc = topo_cache_foreach_pod(f->cache, collect_pod, out, err);
    return rc > 0 ? topo_err_set(err, TOPO_ENOMEM, "filler: out of memory") : rc;
}

/* A relist is one transaction of its own: db is held from on_list_begin
 * until on_list_end commits it or on_list_abort rolls it back. */
static int on_list_begin(topo_err *err, void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    int rc;

    /* A resume the server refused (410): synced again once listed. */
    if (ks->from_store)
        atomic_store(&ks->synced, 0);
    ks->from_store = 0;
    ks->listed = 0;
    pthread_mutex_lock(&f->db);
    /* The relist must be one transaction: close what others batched first,
     * so a failure here rolls back nothing but the relist. */
    if ((rc = flush(f, err)) < 0 || (rc = ensure_batch(f, err)) < 0 ||
        (rc = topo_cache_relist_begin(f->cache, ks->kind, err)) < 0)
        return cache_failed(f, rc, err);
    seen_clear(ks);
    if (f->nlives > 0) {
        if ((ks->seen = topo_strmap_create(1024)) == NULL)
            return cache_failed(f, topo_err_set(err, TOPO_ENOMEM, "filler: out of memory"), err);
        if ((rc = collect_keys(f, ks, &ks->before, err)) < 0)
            return cache_failed(f, rc, err);
    }
    return 0;
}

/* Replaces the kind's rows with the list's and commits. */
static int on_list_end(const char *rv, topo_err *err, void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    size_t deleted = 0;
    int rc;

    if ((rc = topo_cache_relist_end(f->cache, ks->kind, &deleted, err)) < 0 ||
        (rc = topo_cache_set_watch_rv(f->cache, ks->kind, rv, err)) < 0)
        return cache_failed(f, rc, err);
    /* The live snapshot drops what the list no longer has. */
    for (size_t i = 0; i < ks->before.n && rc == 0; i++)
        if (topo_strmap_get(ks->seen, ks->before.keys[i]) < 0)
            rc = live_delete(f, ks, ks->before.keys[i], err);
    if (rc < 0)
        return cache_failed(f, rc, err);
    ks->pending_rv[0] = '\0';
    if ((rc = flush(f, err)) < 0)
        return cache_failed(f, rc, err);
    ks->restarts = 0;
    f->stats.relists++;
    f->stats.listed[ks->kind] += ks->listed;
    atomic_store(&ks->synced, 1);
    pthread_mutex_unlock(&f->db);
    keys_free(&ks->before);
    topo_log(TOPO_LOG_INFO, "filler: listed %llu %s at resourceVersion %s (%zu stale rows removed)",
             (unsigned long long)ks->listed, ks->res->plural, rv, deleted);
    return 0;
}

/* The relist failed or was stopped: rolled back. */
static void on_list_abort(void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    if (f->batch_open) {
        topo_cache_rollback(f->cache, NULL);
        f->batch_open = 0;
    }
    pthread_mutex_unlock(&f->db);
    keys_free(&ks->before);
}

/* ---- watch ---- */

/* Stores rv with the next commit (db held); commits when the batch is full. */
static int reached(topo_filler *f, kind_state *ks, const char *rv, topo_err *err)
{
    if (rv != NULL && strlen(rv) < sizeof(ks->pending_rv))
        strcpy(ks->pending_rv, rv);
    return f->batch_events >= f->opts.batch_max ? flush(f, err) : 0;
}

static int on_event(topo_k8s_event_type type, json_t *obj, const char *rv, topo_err *err,
                    void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    topo_err local = TOPO_ERR_INIT;
    int rc = 0;

    pthread_mutex_lock(&f->db);
    if ((rc = ensure_batch(f, err)) < 0)
        goto out;
    if (type == TOPO_K8S_ADDED || type == TOPO_K8S_MODIFIED) {
        rc = topo_cache_upsert_json(f->cache, ks->kind, obj, &local);
        if (rc == TOPO_EINVALID) {
            f->stats.rejected++;
            topo_log(TOPO_LOG_WARN, "filler: %s: skipping a malformed object: %s",
                     ks->res->plural, local.text);
            rc = 0;
        } else if (rc < 0) {
            *err = local;
            goto out;
        } else if ((rc = live_upsert(f, ks, obj, err)) < 0) {
            goto out;
        }
    } else if (type == TOPO_K8S_DELETED) {
        const char *key = key_of(ks, obj);
        if (key != NULL) {
            if (ks->kind == TOPO_CACHE_NODES)
                rc = topo_cache_delete_node(f->cache, key, NULL, err);
            else if (ks->kind == TOPO_CACHE_PODS)
                rc = topo_cache_delete_pod(f->cache, key, NULL, err);
            else
                rc = topo_cache_delete_job(f->cache, key, NULL, err);
            if (rc == 0)
                rc = live_delete(f, ks, key, err);
            if (rc < 0)
                goto out;
        }
    }
    f->stats.events++;
    f->batch_events++;
    rc = reached(f, ks, rv, err);
out:
    rc = cache_failed(f, rc, err);
    /* Served again after a 401/403/404; not while a restart is due (the
     * cache lost a batch: only the relist makes the kind synced again). */
    if (rc == 0 && !ks->restart)
        atomic_store(&ks->synced, 1);
    pthread_mutex_unlock(&f->db);
    return rc;
}

static int on_bookmark(const char *rv, topo_err *err, void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    int rc;
    pthread_mutex_lock(&f->db);
    if ((rc = ensure_batch(f, err)) == 0)
        rc = reached(f, ks, rv, err);
    rc = cache_failed(f, rc, err);
    /* Served again after a 401/403/404; not while a restart is due (the
     * cache lost a batch: only the relist makes the kind synced again). */
    if (rc == 0 && !ks->restart)
        atomic_store(&ks->synced, 1);
    pthread_mutex_unlock(&f->db);
    return rc;
}

static int on_watch_end(uint64_t events, void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    if (ks->from_store) {
        pthread_mutex_lock(&f->db);
        f->stats.resumed++;
        pthread_mutex_unlock(&f->db);
        ks->from_store = 0;
    }
    return f->opts.once && events == 0; /* synced and quiet */
}

/* Errors that cannot heal end the whole filler (fatal_code); the others
 * are backed off by the reflector, logged and counted there. While the
 * API server refuses us (credentials, RBAC, the resource not served) the
 * kind is not ready: the cache stops following the cluster. */
static int on_error(int code, const topo_err *err, unsigned int failures, void *payload)
{
    kind_state *ks = payload;
    topo_filler *f = ks->f;
    int verdict = 0;
    if (stopping(f))
        return STOPPED; /* a failure caused by, or racing, the stop is no failure */
    pthread_mutex_lock(&f->db);
    if (ks->restart) {
        pthread_mutex_unlock(&f->db);
        return STOPPED; /* the cache failed (counted there): kind_main lists again */
    }
    if (code == TOPO_EUNAUTHORIZED || code == TOPO_EFORBIDDEN || code == TOPO_ENOTFOUND ||
        code == TOPO_EAUTH)
        atomic_store(&ks->synced, 0);
    /* A credential that could not be had (an exec plugin that failed,
     * remembered by the plugin's cache for its back-off) ends a one-shot
     * sync: the user sees the plugin's failure once. A daemon retries. */
    if (fatal_code(f, code) || (f->opts.once && code == TOPO_EAUTH) ||
        (f->opts.once && failures + 1 >= MAX_FAILURES_ONCE)) {
        set_fatal(f, err, code);
        verdict = code;
    } else {
        f->stats.errors++;
    }
    pthread_mutex_unlock(&f->db);
    return verdict;
}

/* ---- the per-kind loop ---- */

static const topo_reflector_handler kind_handler = {
    .list_begin = on_list_begin,
    .list_object = on_list_object,
    .list_end = on_list_end,
    .list_abort = on_list_abort,
    .event = on_event,
    .bookmark = on_bookmark,
    .watch_end = on_watch_end,
    .error = on_error,
};

/* The kind's reflector, resuming from the rv the cache stored (db held). */
static int kind_reflector(kind_state *ks, int list_first, topo_err *err)
{
    topo_filler *f = ks->f;
    char rv[TOPO_K8S_RV_MAX];
    char name[64];
    topo_reflector_opts ro = {
        .res = ks->res, .page_size = f->opts.page_size, .failures = &ks->failures};

    snprintf(name, sizeof(name), "filler: %s", ks->res->plural);
    ro.name = name;
    if (f->opts.once)
        ro.watch_timeout_s = (f->opts.idle_ms + 999) / 1000;
    ks->from_store = !list_first &&
                     topo_cache_get_watch_rv(f->cache, ks->kind, rv, sizeof(rv), NULL) == 0 &&
                     rv[0] != '\0';
    if (ks->from_store)
        ro.resume_rv = rv;
    return topo_reflector_create(&ks->refl, ks->k, &ro, &kind_handler, ks, err);
}

/* Waits the restart backoff (db held), or until a stop. */
static void restart_wait(kind_state *ks)
{
    topo_filler *f = ks->f;
    long ms = topo_backoff_ms(RESTART_BASE_MS, RESTART_MAX_MS, ks->restarts, &ks->rng);
    struct timespec until = topo_clock_deadline(ms);
    if (ks->restarts < 30)
        ks->restarts++;
    while (!stopping(f) && pthread_cond_timedwait(&f->done, &f->db, &until) != ETIMEDOUT)
        ;
}

static void *kind_main(void *arg)
{
    kind_state *ks = arg;
    topo_filler *f = ks->f;
    topo_err err = TOPO_ERR_INIT;
    int rc = 0;

    ks->rng = (uint64_t)(uintptr_t)ks ^ (uint64_t)time(NULL);
    pthread_mutex_lock(&f->db);
    /* Once more after the cache lost a batch: from a list, not the stored
     * resourceVersion (the live snapshot took changes the cache lost). */
    for (int list_first = 0; !stopping(f); list_first = 1) {
        if ((rc = kind_reflector(ks, list_first, &err)) < 0) {
            set_fatal(f, &err, rc);
            break;
        }
        /* Resuming from the stored rv: the cache already holds that state. */
        if (ks->from_store)
            atomic_store(&ks->synced, 1);
        pthread_mutex_unlock(&f->db);
        if (!stopping(f))
            (void)topo_reflector_run(ks->refl, &err); /* failures went through on_error */
        pthread_mutex_lock(&f->db);
        topo_reflector_free(ks->refl);
        ks->refl = NULL;
        if (!ks->restart)
            break;
        restart_wait(ks);
        ks->restart = 0;
        f->broken = 0;
    }
    f->kinds_running--;
    pthread_cond_broadcast(&f->done);
    pthread_mutex_unlock(&f->db);
    return NULL;
}

/* Closes the batch every commit_ms and turns an outside stop request into
 * the flag the watches see. */
static void *committer_main(void *arg)
{
    topo_filler *f = arg;
    pthread_mutex_lock(&f->db);
    while (f->kinds_running > 0) {
        struct timespec until = topo_clock_deadline(f->opts.commit_ms);
        pthread_cond_timedwait(&f->done, &f->db, &until);
        if (f->opts.stop != NULL && *f->opts.stop && !f->stop)
            stop_all(f);
        topo_err err = TOPO_ERR_INIT;
        int rc = flush(f, &err);
        if (rc < 0 && f->opts.once)
            set_fatal(f, &err, rc);
        else
            (void)cache_failed(f, rc, &err);
    }
    pthread_mutex_unlock(&f->db);
    return NULL;
}

/* ---- lifecycle ---- */

static int load_live(topo_filler *f, topo_err *err);

/* f->lives: opts->live, then opts->lives, without NULLs or repeats. */
static int gather_lives(topo_filler *f, const topo_filler_opts *opts, topo_err *err)
{
    size_t max = opts->nlives + 1;
    if (opts->nlives > 4096)
        return topo_err_set(err, TOPO_ELIMIT, "filler: lives: %zu live snapshots (at most 4096)",
                            opts->nlives);
    if ((f->lives = calloc(max, sizeof(*f->lives))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "filler: out of memory");
    for (size_t i = 0; i < max; i++) {
        topo_live *l = i == 0 ? opts->live : opts->lives[i - 1];
        int dup = l == NULL;
        for (size_t j = 0; j < f->nlives && !dup; j++)
            dup = f->lives[j] == l;
        if (!dup)
            f->lives[f->nlives++] = l;
    }
    return 0;
}

int topo_filler_create(topo_filler **out, const topo_filler_opts *opts, topo_err *err)
{
    static const topo_k8s_resource *const res[NKINDS] = {&topo_k8s_nodes, &topo_k8s_pods,
                                                          &topo_k8s_jobs};
    static const unsigned bits[NKINDS] = {TOPO_FILLER_NODES, TOPO_FILLER_PODS, TOPO_FILLER_JOBS};
    topo_filler *f = NULL;
    int rc;

    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "filler: no options");
    if (opts->db_path == NULL || opts->db_path[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "filler: the cache file (--db) is required");
    if (opts->nlives > 0 && opts->lives == NULL)
        return topo_err_set(err, TOPO_EINVALID, "filler: lives: NULL with nlives %zu",
                            opts->nlives);
    if (opts->kinds != 0 && (opts->kinds & TOPO_FILLER_ALL) == 0)
        return topo_err_set(err, TOPO_EINVALID, "filler: no kinds to sync");
    if ((f = calloc(1, sizeof(*f))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "filler: out of memory");
    f->opts = *opts;
    opts = &f->opts;
    if (f->opts.kinds == 0)
        f->opts.kinds = TOPO_FILLER_ALL;
    if (f->opts.page_size == 0)
        f->opts.page_size = TOPO_K8S_PAGE_DEFAULT;
    if (f->opts.commit_ms <= 0)
        f->opts.commit_ms = TOPO_FILLER_COMMIT_MS_DEFAULT;
    if (f->opts.batch_max == 0)
        f->opts.batch_max = TOPO_FILLER_BATCH_MAX_DEFAULT;
    if (f->opts.idle_ms <= 0)
        f->opts.idle_ms = TOPO_FILLER_IDLE_MS_DEFAULT;
    pthread_mutex_init(&f->db, NULL);
    topo_clock_cond_init(&f->done); /* deadlines: topo_clock_deadline */
    topo_k8s_config empty = {0};
    f->cfg = empty;
    const topo_k8s_config *cfg = opts->k8s_config;
    if (cfg == NULL) {
        if ((rc = topo_k8s_config_load_context(&f->cfg, opts->kubeconfig, opts->context, err)) <
            0)
            goto fail;
        cfg = &f->cfg;
    }
    topo_k8s_opts ko = {0};
    ko.qps = opts->qps;
    ko.burst = opts->burst;
    if (opts->once) {
        /* A one-shot sync answers within seconds whether the cluster can be
         * reached; a long-running one keeps trying. */
        ko.max_retries = 1;
        ko.backoff_max_ms = 1000;
        ko.timeout_ms = 10000;
    }
    for (size_t i = 0; i < NKINDS; i++) {
        kind_state *ks = &f->kinds[i];
        ks->f = f;
        ks->kind = kind_of[i];
        ks->res = res[i];
        ks->enabled = (opts->kinds & bits[i]) != 0;
        if (!ks->enabled)
            continue;
        if ((ks->scratch = topo_pool_create()) == NULL) {
            rc = topo_err_set(err, TOPO_ENOMEM, "filler: out of memory");
            goto fail;
        }
        if ((rc = topo_k8s_create(&ks->k, cfg, &ko, err)) < 0)
            goto fail;
    }
    if ((rc = gather_lives(f, opts, err)) < 0)
        goto fail;
    topo_cache_opts co = {.record_keys = opts->record_keys};
    if ((rc = topo_cache_open(&f->cache, opts->db_path, &co, err)) < 0)
        goto fail;
    if (f->nlives > 0 && (rc = load_live(f, err)) < 0)
        goto fail;
    *out = f;
    return 0;
fail:
    topo_filler_free(f);
    return rc;
}

void topo_filler_free(topo_filler *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < NKINDS; i++) {
        topo_k8s_free(f->kinds[i].k);
        topo_pool_free(f->kinds[i].scratch);
        seen_clear(&f->kinds[i]);
        keys_free(&f->kinds[i].before);
        free(f->kinds[i].seen_keys);
    }
    topo_cache_close(f->cache);
    free(f->lives);
    topo_k8s_config_dispose(&f->cfg);
    pthread_cond_destroy(&f->done);
    pthread_mutex_destroy(&f->db);
    free(f);
}

int topo_filler_run(topo_filler *f, topo_err *err)
{
    f->stop = 0;
    f->kinds_running = 0;
    for (size_t i = 0; i < NKINDS; i++) {
        kind_state *ks = &f->kinds[i];
        if (!ks->enabled)
            continue;
        pthread_mutex_lock(&f->db);
        f->kinds_running++;
        pthread_mutex_unlock(&f->db);
        if (pthread_create(&ks->thread, NULL, kind_main, ks) != 0) {
            pthread_mutex_lock(&f->db);
            f->kinds_running--;
            topo_err e = TOPO_ERR_INIT;
            topo_err_set(&e, TOPO_ENOMEM, "filler: cannot start a thread");
            set_fatal(f, &e, TOPO_ENOMEM);
            pthread_mutex_unlock(&f->db);
            break;
        }
        ks->started = 1;
    }
    if (pthread_create(&f->committer, NULL, committer_main, f) == 0)
        f->committer_started = 1;
    for (size_t i = 0; i < NKINDS; i++)
        if (f->kinds[i].started) {
            pthread_join(f->kinds[i].thread, NULL);
            f->kinds[i].started = 0;
        }
    if (f->committer_started) {
        pthread_join(f->committer, NULL);
        f->committer_started = 0;
    }
    pthread_mutex_lock(&f->db);
    topo_err e = TOPO_ERR_INIT;
    int rc = flush(f, &e);
    if (rc < 0)
        set_fatal(f, &e, rc);
    rc = f->fatal;
    if (rc != 0 && err != NULL)
        *err = f->fatal_err;
    pthread_mutex_unlock(&f->db);
    return rc;
}

int topo_filler_synced(topo_filler *f)
{
    int any = 0;
    if (f == NULL)
        return 0;
    for (size_t i = 0; i < NKINDS; i++) {
        if (!f->kinds[i].enabled)
            continue;
        if (!atomic_load(&f->kinds[i].synced))
            return 0;
        any = 1;
    }
    return any;
}

void topo_filler_get_stats(topo_filler *f, topo_filler_stats *out)
{
    pthread_mutex_lock(&f->db);
    *out = f->stats;
    out->adopted = topo_cache_adopted(f->cache);
    out->foreign_claims = topo_cache_foreign_claims(f->cache);
    pthread_mutex_unlock(&f->db);
    for (size_t i = 0; i < NKINDS; i++)
        for (int r = 0; r < TOPO_REFLECTOR_REASONS; r++)
            out->failures[i][r] =
                topo_reflector_failures_get(&f->kinds[i].failures, (topo_reflector_reason)r);
}

/* ---- the live snapshot's starting point: what the cache holds ---- */

static int load_node(const topo_node_spec *node, const char *rv, void *payload)
{
    (void)rv;
    topo_filler *f = payload;
    int rc = 0;
    for (size_t i = 0; i < f->nlives && rc == 0; i++)
        rc = topo_live_upsert_node(f->lives[i], node, NULL);
    return rc;
}

static int load_pod(const topo_cache_pod *pod, void *payload)
{
    topo_filler *f = payload;
    int terminal = topo_pod_phase_finished(pod->phase);
    int charged = pod->node_name[0] != '\0' && !terminal;
    int rc = 0;
    for (size_t i = 0; i < f->nlives && rc == 0; i++)
        rc = topo_live_upsert_pod(f->lives[i], pod->uid,
                                  pod->node_name[0] ? pod->node_name : NULL, charged,
                                  pod->requests, pod->nrequests, NULL);
    return rc;
}

static int load_live(topo_filler *f, topo_err *err)
{
    int rc;
    if ((rc = topo_cache_foreach_node(f->cache, load_node, f, err)) != 0 ||
        (rc = topo_cache_foreach_pod(f->cache, load_pod, f, err)) != 0)
        return rc < 0 ? rc : topo_err_set(err, TOPO_EGENERIC, "filler: loading the live snapshot failed");
    for (size_t i = 0; i < f->nlives && rc == 0; i++)
        rc = topo_live_commit(f->lives[i], err);
    return rc;
}
