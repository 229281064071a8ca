/* topo-sync's source refresher (sources.h). */
#define _POSIX_C_SOURCE 200809L

#include "sources.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "topo/backoff.h"
#include "topo/cache_facts.h"
#include "topo/clock.h"
#include "topo/log.h"
#include "topo/rand.h"
#include "topo/sync_facts.h"

#define SRC_N TOPO_SYNC_SOURCE_COUNT

typedef struct source_state {
    int configured;
    long interval_ms; /* the settings' for this source, else the common one */
    topo_facts *facts; /* the last good, or NULL; guarded by mu */
    int64_t next_ms;   /* when to read next (monotonic) */
    unsigned failures; /* in a row */
    int64_t last_ok_ms; /* monotonic, 0: never */
    int stale_warned;
    /* A sudden drop held (its counts), until the same read comes again. */
    int held;
    size_t held_hosts, held_switches, held_links;
} source_state;

struct ctl_sources {
    ctl_sources_opts o;
    source_state src[SRC_N];
    pthread_mutex_t mu; /* the facts, stop */
    pthread_cond_t cv;  /* stop */
    pthread_t thread;
    int started, stop;
    uint64_t rng;
    topo_cache *cache; /* last good facts (opts.db), or NULL; one thread at a time */
    topo_metrics_family *m_last_ok, *m_duration, *m_failures, *m_objects, *m_recreated,
        *m_skipped;
};

/* Wall-clock time in ms: what the cache records as when facts were fetched. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int register_metrics(ctl_sources *s, topo_err *err)
{
    static const char *const by_source[] = {"source"};
    static const char *const by_kind[] = {"source", "kind"};
    static const char *const by_reason[] = {"source", "reason"};
    topo_metrics *m = s->o.metrics;
    if (!m)
        return 0;
    int rc = topo_metrics_gauge(m, &s->m_last_ok, "topo_sync_source_last_success_seconds",
                                "Unix time of the source's last successful read.", by_source, 1,
                                err);
    if (rc == 0)
        rc = topo_metrics_gauge(m, &s->m_duration, "topo_sync_source_read_milliseconds",
                                "How long the source's last read took, failed or not.", by_source,
                                1, err);
    if (rc == 0)
        rc = topo_metrics_counter(m, &s->m_failures, "topo_sync_source_failures_total",
                                  "Reads of the source that failed (its last good facts kept), "
                                  "by reason: invalid (the input was refused: malformed, "
                                  "truncated, inconsistent), drop (far fewer hosts than the "
                                  "last good read, held), error (anything else).",
                                  by_reason, 2, err);
    if (rc == 0)
        rc = topo_metrics_counter(m, &s->m_skipped, "topo_sync_source_files_skipped_total",
                                  "Files of one host each (an LLDP directory's HOST.json, a "
                                  "host of an LLDP collector's answer) a read skipped, the host "
                                  "keeping its last good facts, by reason: unreadable (not a "
                                  "regular file, no permission, gone), too_large, invalid (its "
                                  "document refused: empty, cut, malformed, over its budget).",
                                  by_reason, 2, err);
    if (rc == 0)
        rc = topo_metrics_gauge(m, &s->m_objects, "topo_sync_source_objects",
                                "What the source's last good facts hold, by kind (hosts, "
                                "switches, links).",
                                by_kind, 2, err);
    if (rc == 0)
        rc = topo_metrics_counter(m, &s->m_recreated, "topo_sync_cache_recreated_total",
                                  "Times the cache file (--db) was found corrupt at start, moved "
                                  "aside to <db>.corrupt-<time> and made anew (the sources' last "
                                  "good facts lost: each source is read before any write).",
                                  NULL, 0, err);
    return rc;
}

static void count_objects(ctl_sources *s, const char *name, const topo_facts *f);

/* The cache file and the facts it kept: each source's until a read
 * replaces them. A stored document that does not load is reported and
 * left (the next good read replaces it); the source then waits for a read. */
static int load_stored(ctl_sources *s, topo_err *err)
{
    int recreated = 0;
    int rc = topo_cache_open_healing(&s->cache, &recreated, s->o.db, NULL, err);
    if (rc != 0)
        return topo_err_wrap(err, "sources");
    if (s->m_recreated)
        topo_metrics_add(topo_metrics_get(s->m_recreated, NULL), recreated);
    int64_t wall = wall_ms(), mono = topo_clock_ms();
    for (int i = 0; i < SRC_N; i++) {
        source_state *st = &s->src[i];
        const char *name = topo_sync_source_name((topo_sync_source)i);
        int64_t at = 0;
        topo_err e = TOPO_ERR_INIT;
        if (!st->configured)
            continue;
        rc = topo_sync_facts_load(&st->facts, &at, s->cache, name, &e);
        if (rc == TOPO_ENOMEM)
            return topo_err_nomem(err, "sources");
        if (rc == TOPO_ENOTFOUND)
            continue;
        if (rc != 0) {
            topo_log(TOPO_LOG_WARN, "source %s: its stored facts are not usable: %s", name,
                     e.text);
            continue;
        }
        topo_facts_shrink(st->facts); /* kept until a read replaces them */
        /* Its age, on the monotonic clock the refresher counts in. */
        st->last_ok_ms = mono - (wall > at ? wall - at : 0);
        count_objects(s, name, st->facts);
        topo_log(TOPO_LOG_INFO, "source %s: last good facts from %lld s ago loaded (%zu hosts)",
                 name, (long long)((wall - at) / 1000), topo_facts_host_count(st->facts));
    }
    return 0;
}

int ctl_sources_create(ctl_sources **out, const ctl_sources_opts *opts, topo_err *err)
{
    *out = NULL;
    ctl_sources *s = calloc(1, sizeof(*s));
    if (!s)
        return topo_err_nomem(err, "sources");
    s->o = *opts;
    if (s->o.interval_ms <= 0)
        s->o.interval_ms = 300000;
    if (s->o.backoff_base_ms <= 0)
        s->o.backoff_base_ms = 1000;
    if (s->o.backoff_max_ms < s->o.backoff_base_ms)
        s->o.backoff_max_ms = s->o.interval_ms;
    s->rng = (uint64_t)getpid() ^ (uint64_t)time(NULL) << 20;
    for (int i = 0; i < SRC_N; i++) {
        /* Not the GPU source's live Node objects: the controller's own. */
        s->src[i].configured = topo_sync_source_readable(opts->settings, (topo_sync_source)i);
        int64_t own = opts->settings->source_refresh_ms[i];
        s->src[i].interval_ms = own > 0 ? (long)own : s->o.interval_ms;
    }
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return topo_err_nomem(err, "sources");
    }
    if (topo_clock_cond_init(&s->cv) != 0) { /* deadlines: topo_clock_deadline */
        pthread_mutex_destroy(&s->mu);
        free(s);
        return topo_err_nomem(err, "sources");
    }
    int rc = register_metrics(s, err);
    if (rc == 0 && opts->db)
        rc = load_stored(s, err);
    if (rc != 0) {
        ctl_sources_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void ctl_sources_free(ctl_sources *s)
{
    if (!s)
        return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    for (int i = 0; i < SRC_N; i++)
        topo_facts_free(s->src[i].facts);
    topo_cache_close(s->cache);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void set_metric(topo_metrics_family *f, const char *source, const char *kind, int64_t v)
{
    const char *values[2] = {source, kind};
    topo_metrics_set(topo_metrics_get(f, values), v);
}

static void count_objects(ctl_sources *s, const char *name, const topo_facts *f)
{
    if (!s->m_objects)
        return;
    set_metric(s->m_objects, name, "hosts", (int64_t)topo_facts_host_count(f));
    set_metric(s->m_objects, name, "switches", (int64_t)topo_facts_switch_count(f));
    set_metric(s->m_objects, name, "links", (int64_t)topo_facts_link_count(f));
}

/* A failed read of source i (err filled): the last good facts kept, the
 * reason counted and logged, recorded in the cache file. */
static int failed(ctl_sources *s, int i, const char *reason, topo_err *err)
{
    const char *name = topo_sync_source_name((topo_sync_source)i);
    source_state *st = &s->src[i];
    if (s->m_failures)
        topo_metrics_add(topo_metrics_get(s->m_failures, (const char *[]){name, reason}), 1);
    topo_log(TOPO_LOG_WARN, "source %s: %s; %s", name, err->text,
             st->facts ? "keeping its last good facts" : "no facts from it yet");
    topo_err e = TOPO_ERR_INIT;
    if (s->cache &&
        topo_cache_facts_fail(s->cache, name, err->text, wall_ms(), &e) != 0)
        topo_log(TOPO_LOG_WARN, "source %s: cannot record the failure: %s", name, e.text);
    return err->code;
}

/* Whether a good read f of source i is a sudden drop to hold: fewer hosts
 * than min_hosts_percent of the last good facts, and not the same counts
 * as the drop held by the read before (a second one in a row is a fabric
 * that really shrank: accepted). err filled when held. */
static int hold_drop(ctl_sources *s, int i, const topo_facts *f, topo_err *err)
{
    source_state *st = &s->src[i];
    size_t last = st->facts ? topo_facts_host_count(st->facts) : 0;
    size_t hosts = topo_facts_host_count(f), switches = topo_facts_switch_count(f),
           links = topo_facts_link_count(f);
    int was_held = st->held;
    st->held = 0;
    if (s->o.min_hosts_percent <= 0 || last == 0 ||
        (double)hosts * 100.0 >= (double)last * s->o.min_hosts_percent)
        return 0;
    const char *name = topo_sync_source_name((topo_sync_source)i);
    if (was_held && st->held_hosts == hosts && st->held_switches == switches &&
        st->held_links == links) {
        topo_log(TOPO_LOG_WARN,
                 "source %s: %zu hosts where its last good read had %zu, the same read twice "
                 "in a row: accepted",
                 name, hosts, last);
        return 0;
    }
    st->held = 1;
    st->held_hosts = hosts;
    st->held_switches = switches;
    st->held_links = links;
    topo_err_set(err, TOPO_EGENERIC,
                 "%zu hosts where its last good read had %zu (below minHostsPercent %d %%): "
                 "held as a failed read until the same read comes again",
                 hosts, last, s->o.min_hosts_percent);
    return 1;
}

/* One read of source i, on whichever thread: the facts replace the last
 * good ones only when the whole read succeeded and is not a drop held. */
static int read_one(ctl_sources *s, int i, topo_err *err)
{
    const char *name = topo_sync_source_name((topo_sync_source)i);
    source_state *st = &s->src[i];
    topo_facts *f = NULL;
    topo_sync_skipped skipped = {0};
    int64_t t0 = topo_clock_ms();
    int rc = topo_facts_create(&f, name, err);
    /* st->facts is replaced by this function only, so it is read here
     * without the lock: a host whose file cannot be read keeps its part. */
    if (rc == 0)
        rc = topo_sync_source_read_keeping(f, s->o.settings, (topo_sync_source)i, st->facts,
                                           &skipped, err);
    int64_t t1 = topo_clock_ms();
    if (s->m_skipped && skipped.unreadable)
        topo_metrics_add(topo_metrics_get(s->m_skipped, (const char *[]){name, "unreadable"}),
                         (int64_t)skipped.unreadable);
    if (s->m_skipped && skipped.too_large)
        topo_metrics_add(topo_metrics_get(s->m_skipped, (const char *[]){name, "too_large"}),
                         (int64_t)skipped.too_large);
    if (s->m_skipped && skipped.invalid)
        topo_metrics_add(topo_metrics_get(s->m_skipped, (const char *[]){name, "invalid"}),
                         (int64_t)skipped.invalid);
    if (s->m_duration)
        set_metric(s->m_duration, name, NULL, t1 - t0);
    if (rc != 0) {
        topo_facts_free(f);
        st->failures++;
        st->held = 0; /* a drop must come twice in a row */
        return failed(s, i, rc == TOPO_EINVALID ? "invalid" : "error", err);
    }
    if (hold_drop(s, i, f, err)) {
        /* No backoff: the read that may confirm it comes at the interval. */
        topo_facts_free(f);
        return failed(s, i, "drop", err);
    }
    /* Kept until the next good read: what only adding needed goes now. */
    topo_facts_shrink(f);
    /* Durable before any label is written from it; unchanged facts wake no
     * round. Without a cache file every read counts as a change. */
    int changed = 1;
    if (s->cache &&
        (rc = topo_sync_facts_save(s->cache, f, wall_ms(), &changed, err)) != 0) {
        topo_log(TOPO_LOG_WARN, "source %s: cannot save its facts: %s", name, err->text);
        changed = 1; /* used all the same: only a restart would lack them */
    }
    pthread_mutex_lock(&s->mu);
    topo_facts *old = st->facts;
    st->facts = f;
    pthread_mutex_unlock(&s->mu);
    topo_facts_free(old);
    /* A read's transient memory (the parse of a large dump or response)
     * sits in this thread's malloc arena after it: give it back, or the
     * process keeps the read's peak for good (glibc). */
    malloc_trim(0);
    st->failures = 0;
    st->last_ok_ms = t1;
    st->stale_warned = 0;
    if (s->m_last_ok)
        set_metric(s->m_last_ok, name, NULL, (int64_t)time(NULL));
    count_objects(s, name, f);
    if (changed && s->o.changed)
        s->o.changed(s->o.payload);
    return 0;
}

int ctl_sources_read_all(ctl_sources *s, topo_err *err)
{
    int first = 0;
    for (int i = 0; i < SRC_N; i++) {
        topo_err e = TOPO_ERR_INIT;
        if (!s->src[i].configured)
            continue;
        int rc = read_one(s, i, &e);
        if (rc != 0 && first == 0) {
            first = rc;
            *err = e;
        }
    }
    return first;
}

/* The next read of source i: the interval (±10 %) after a success, a
 * jittered backoff after failures, never later than the interval. */
static int64_t next_read(ctl_sources *s, const source_state *st, int64_t now)
{
    long wait;
    if (st->failures == 0) {
        long tenth = st->interval_ms / 10;
        wait = st->interval_ms - tenth + (long)(topo_rand_next(&s->rng) % (uint64_t)(2 * tenth + 1));
    } else {
        wait = topo_backoff_ms(s->o.backoff_base_ms, s->o.backoff_max_ms, (int)st->failures - 1,
                               &s->rng);
        if (wait > st->interval_ms)
            wait = st->interval_ms;
    }
    return now + wait;
}

static void warn_stale(ctl_sources *s, int i, int64_t now)
{
    source_state *st = &s->src[i];
    if (s->o.stale_ms <= 0 || st->stale_warned || !st->facts || now - st->last_ok_ms < s->o.stale_ms)
        return;
    st->stale_warned = 1;
    topo_log(TOPO_LOG_WARN, "source %s: its last good facts are %lld s old (staleAfter %ld s)",
             topo_sync_source_name((topo_sync_source)i), (long long)((now - st->last_ok_ms) / 1000),
             s->o.stale_ms / 1000);
}

static void *refresher(void *arg)
{
    ctl_sources *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        int64_t now = topo_clock_ms(), soonest = now + s->o.interval_ms;
        for (int i = 0; i < SRC_N && !s->stop; i++) {
            source_state *st = &s->src[i];
            if (!st->configured)
                continue;
            if (st->next_ms <= now) {
                topo_err err = TOPO_ERR_INIT;
                pthread_mutex_unlock(&s->mu);
                (void)read_one(s, i, &err);
                pthread_mutex_lock(&s->mu);
                now = topo_clock_ms();
                st->next_ms = next_read(s, st, now);
            }
            warn_stale(s, i, now);
            if (st->next_ms < soonest)
                soonest = st->next_ms;
        }
        int64_t wait = soonest - topo_clock_ms();
        if (wait > 0 && !s->stop) {
            struct timespec ts = topo_clock_deadline(wait);
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int ctl_sources_start(ctl_sources *s, topo_err *err)
{
    for (int i = 0; i < SRC_N; i++)
        s->src[i].next_ms = 0; /* the first read at once */
    if (pthread_create(&s->thread, NULL, refresher, s) != 0)
        return topo_err_set(err, TOPO_EGENERIC, "sources: cannot start the refresher's thread");
    s->started = 1;
    return 0;
}

int ctl_sources_ready(ctl_sources *s)
{
    int ready = 1;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < SRC_N; i++)
        if (s->src[i].configured && !s->src[i].facts)
            ready = 0;
    pthread_mutex_unlock(&s->mu);
    return ready;
}

void ctl_sources_lock(ctl_sources *s, topo_facts *facts[TOPO_SYNC_SOURCE_COUNT])
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < SRC_N; i++)
        facts[i] = s->src[i].facts; /* NULL for a source not read here (the GPU's) */
}

void ctl_sources_unlock(ctl_sources *s)
{
    pthread_mutex_unlock(&s->mu);
}
