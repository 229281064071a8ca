/* topo-sync's sources kept fresh: one thread reads every configured source
 * but the Node objects (files, or HTTP through lib/sync/fetch as the settings
 * say) on its interval, with jitter, and backs off after a failure. A
 * source's facts are replaced only by a whole successful read: a failed
 * one (5xx, timeout, garbage, a truncated or inconsistent input) keeps the
 * last good facts, so an outage never changes a label. A sudden drop (a
 * read with fewer hosts than min_hosts_percent of the last good facts) is
 * held the same way until the same counts come twice in a row: a fabric
 * that really shrank is then accepted. A source that never answered holds no facts, and the
 * controller does not plan without it (ctl_sources_ready). With a cache
 * file, each success is saved there before it is used, and the saved facts
 * are loaded at start.
 *
 * Metrics (registered on the registry given): per source the time of the
 * last success, the last read's duration, failures by reason (invalid: the
 * input was refused; drop: a sudden drop held; error: anything else), and
 * the hosts, switches and links it held.
 *
 * Threads: the refresher runs on its own thread; the reconcile loop reads
 * the facts under ctl_sources_lock. */
#ifndef TOPO_SYNC_SOURCES_H
#define TOPO_SYNC_SOURCES_H

#include <stdint.h>

#include "topo/error.h"
#include "topo/facts.h"
#include "topo/metrics.h"
#include "topo/sync.h"

typedef struct ctl_sources ctl_sources;

typedef struct ctl_sources_opts {
    const topo_sync_settings *settings; /* borrowed, outlives the refresher */
    long interval_ms;                   /* between reads of one source (jittered ±10 %) */
    long backoff_base_ms, backoff_max_ms; /* after failures in a row (then the interval) */
    long stale_ms; /* warn when a source's last success is older than this; 0: never */
    /* A read with fewer hosts than this percent of the last good facts'
     * (read, or loaded from db) is held as failed until the same counts
     * come twice in a row; 0: never held. */
    int min_hosts_percent;
    topo_metrics *metrics;              /* may be NULL */
    /* The cache file keeping each source's last good facts (topo/sync_facts.h),
     * or NULL: none kept across restarts. Facts found there count as the
     * source's until a read replaces them, so a restart during an outage
     * plans as before it. */
    const char *db;
    /* Called on the refresher's thread after a source's facts changed
     * (not after a read that gave the same facts). */
    void (*changed)(void *payload);
    void *payload;
} ctl_sources_opts;

int ctl_sources_create(ctl_sources **out, const ctl_sources_opts *opts, topo_err *err);
/* Stops the thread (if started) and frees. NULL-safe. */
void ctl_sources_free(ctl_sources *s);

/* Reads every source once, on the caller's thread (for --once, and before
 * the thread starts): 0 when all answered, else the first failure's code
 * (err filled); the sources that answered keep their facts. */
int ctl_sources_read_all(ctl_sources *s, topo_err *err);

/* Starts the refresher's thread. */
int ctl_sources_start(ctl_sources *s, topo_err *err);

/* Whether every configured source has facts. */
int ctl_sources_ready(ctl_sources *s);

/* The facts by topo_sync_source (NULL for a source without), valid until
 * ctl_sources_unlock; the refresher waits meanwhile. facts[TOPO_SYNC_GPU]
 * is always NULL: the Node objects are the controller's. */
void ctl_sources_lock(ctl_sources *s, topo_facts *facts[TOPO_SYNC_SOURCE_COUNT]);
void ctl_sources_unlock(ctl_sources *s);

#endif
