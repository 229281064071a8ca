/* The label writer's per-node memory of drift (backoff.c): when a node's
 * owned labels keep being changed by someone else (another controller
 * fighting topo-sync), each reassertion waits twice as long as the one
 * before, and the Event that tells of them is one per node per window.
 * Pure: the caller gives the time (monotonic milliseconds). */
#ifndef TOPO_LABELS_BACKOFF_H
#define TOPO_LABELS_BACKOFF_H

#include <stddef.h>
#include <stdint.h>

#include "topo/array.h"
#include "topo/pool.h"
#include "topo/strmap.h"

/* Object names are DNS subdomains of at most 253 characters. */
#define DRIFT_EVENT_NAME_MAX 253

typedef struct drift_node {
    const char *name;   /* in the pool */
    int64_t backoff_ms; /* the wait after the last reassertion; 0: none yet */
    int64_t due_ms;     /* no reassertion before this */
    int64_t seen_ms;    /* drift last seen */
    int pending;        /* drift seen before due_ms: a reassertion deferred */
    /* The Event of this window's reassertions (aggregated). */
    char event[DRIFT_EVENT_NAME_MAX + 1]; /* "": none */
    int64_t event_start_ms;               /* when it was created (monotonic) */
    int64_t event_first_ns;               /* and its firstTimestamp (wall clock) */
    uint64_t event_count;
} drift_node;

typedef struct drift_backoff {
    int64_t base_ms, max_ms;
    topo_pool *pool;
    topo_strmap *index; /* name -> position in nodes */
    TOPO_ARRAY(drift_node *) nodes;
    size_t pending; /* nodes with a deferred reassertion */
} drift_backoff;

/* base_ms: the first wait; doubling up to max_ms. 0 or TOPO_ENOMEM. */
int drift_backoff_init(drift_backoff *b, int64_t base_ms, int64_t max_ms);
void drift_backoff_dispose(drift_backoff *b);

/* The least quiet that ends a fight: a node with no drift for twice its
 * wait, and at least this long, starts afresh. Without the floor, a fighter
 * slower than twice the wait (a round bound by the API's QPS limit takes
 * seconds over 469 nodes) reset the wait each time and was answered at
 * once for ever. Ten minutes: the Event aggregation window too. */
#define DRIFT_QUIET_MIN_MS (10 * 60 * 1000)

/* Drift (a reassertion only: topo_labeldiff_reassert_only) seen on node at
 * now. 1: it may be reasserted now; 0: not before *due_ms (the node is
 * pending); TOPO_ENOMEM. A node quiet (no drift seen) for twice its
 * current wait and DRIFT_QUIET_MIN_MS starts afresh: its next reassertion
 * goes at once. *out (may be NULL) the node's state. */
int drift_backoff_check(drift_backoff *b, const char *node, int64_t now, int64_t *due_ms,
                        drift_node **out);

/* The reassertion was sent at now: the next waits base_ms, then twice
 * the last wait, up to max_ms. Returns that wait. */
int64_t drift_backoff_sent(drift_backoff *b, drift_node *n, int64_t now);

/* Node converged, or written for a change of plan, or gone, at now: no
 * reassertion pending for it. Its wait stays (a fight that resumes goes on
 * doubling) until it has been quiet for twice the wait and
 * DRIFT_QUIET_MIN_MS. */
void drift_backoff_settled(drift_backoff *b, const char *node, int64_t now);

/* A pending node not visited again DRIFT_STALE_MS after its due time (it
 * left the plan or the cluster meanwhile) is pending no more. */
#define DRIFT_STALE_MS 1000

/* The earliest due time of a pending node; -1 when none. Forgets the
 * stale ones first. */
int64_t drift_backoff_next_due(drift_backoff *b, int64_t now);

#endif
