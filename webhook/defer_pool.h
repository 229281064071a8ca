/* A small pool of threads for work that waits on the network (a forward to
 * the placer), off libmicrohttpd's request threads: a connection whose
 * request waits here is suspended, and the request threads go on answering
 * the others (pass-through pods never wait behind a forward).
 *
 * The queue is bounded: wh_defer_pool_submit refuses a job when it is full
 * (or the pool stops), and the caller answers at once without the slow part.
 *
 * No queued job is answered after its own deadline, whatever the others'
 * are: requests do not share one timeout (the API server sends each webhook
 * configuration's own, up to 30 s). Queued jobs start earliest expiry first
 * (arrival order among equals), and a job whose expiry comes while every
 * worker is busy is run at once by the pool's expiry thread with
 * WH_DEFER_EXPIRED (answer without the slow part: the deadline is gone).
 * Every job submitted runs exactly once. Any thread. */
#ifndef TOPO_WEBHOOK_DEFER_POOL_H
#define TOPO_WEBHOOK_DEFER_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct wh_defer_pool wh_defer_pool;

/* How a job is run. */
typedef enum wh_defer_how {
    WH_DEFER_RUN = 0, /* on a worker, before its expiry: do the slow part */
    WH_DEFER_SHED,    /* the pool stops before it started: answer at once */
    WH_DEFER_EXPIRED  /* its expiry came while it was queued: answer at once */
} wh_defer_how;

typedef void (*wh_defer_fn)(void *arg, wh_defer_how how);

/* threads workers (>= 1), at most queue_max jobs waiting (>= 1). 0, or -1
 * (out of memory, no thread could start). */
int wh_defer_pool_create(wh_defer_pool **out, unsigned int threads, size_t queue_max);

/* Queues fn(arg, WH_DEFER_RUN) for a worker; expire_ns (topo_clock_ns time,
 * 0: none) is when, still queued, it is run with WH_DEFER_EXPIRED instead
 * (the caller's deadline less the time its quick answer needs). 0; -1 when
 * the queue is full or the pool stops (fn not called: the caller answers). */
int wh_defer_pool_submit(wh_defer_pool *p, wh_defer_fn fn, void *arg, int64_t expire_ns);

/* Jobs waiting or running now. */
size_t wh_defer_pool_pending(wh_defer_pool *p);

/* Refuses new jobs, runs those still queued with WH_DEFER_SHED, waits for
 * the running ones and joins the threads. Idempotent; NULL is a no-op. */
void wh_defer_pool_stop(wh_defer_pool *p);

/* wh_defer_pool_stop, then frees; NULL is a no-op. */
void wh_defer_pool_free(wh_defer_pool *p);

#endif
