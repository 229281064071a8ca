/* A small pool of threads for work that waits on the network (a forward to
 * the placer), off libmicrohttpd's request threads: a connection whose
 * request waits here is suspended, and the request threads go on answering
 * the others (pass-through pods never wait behind a forward).
 *
 * The queue is bounded: wh_defer_pool_submit refuses a job when it is full
 * (or the pool stops), and the caller answers at once without the slow part.
 * Jobs start in arrival order; each job bounds its own wait by its
 * request's deadline, so with one timeout for every request (the API server
 * sends the same one) a queued job starts before its own deadline. Every job
 * submitted runs exactly once: with shed = 1 when the pool stops before it
 * started (answer at once). Any thread. */
#ifndef TOPO_WEBHOOK_DEFER_POOL_H
#define TOPO_WEBHOOK_DEFER_POOL_H

#include <stddef.h>

typedef struct wh_defer_pool wh_defer_pool;

/* shed: 1 when the job must be answered at once (the pool stops). */
typedef void (*wh_defer_fn)(void *arg, int shed);

/* threads workers (>= 1), at most queue_max jobs waiting (>= 1). 0, or -1
 * (out of memory, no thread could start). */
int wh_defer_pool_create(wh_defer_pool **out, unsigned int threads, size_t queue_max);

/* Queues fn(arg, 0) for a worker. 0; -1 when the queue is full or the pool
 * stops (fn not called: the caller answers). */
int wh_defer_pool_submit(wh_defer_pool *p, wh_defer_fn fn, void *arg);

/* Jobs waiting or running now. */
size_t wh_defer_pool_pending(wh_defer_pool *p);

/* Refuses new jobs, runs those still queued with shed = 1, waits for the
 * running ones and joins the workers. Idempotent; NULL is a no-op. */
void wh_defer_pool_stop(wh_defer_pool *p);

/* wh_defer_pool_stop, then frees; NULL is a no-op. */
void wh_defer_pool_free(wh_defer_pool *p);

#endif
