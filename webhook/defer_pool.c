/* Threads for requests that wait on the network (defer_pool.h). */
#define _POSIX_C_SOURCE 200809L
#include "defer_pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "topo/clock.h"

/* A job without expiry sorts after every job with one. */
#define NEVER INT64_MAX

typedef struct job {
    wh_defer_fn fn;
    void *arg;
    int64_t expire_ns; /* NEVER: none */
    uint64_t seq;      /* arrival order among equal expiries */
} job;

struct wh_defer_pool {
    pthread_mutex_t mu;
    pthread_cond_t more;  /* a job queued, or stopping: the workers */
    pthread_cond_t sooner; /* the earliest expiry moved, or stopping: the expirer */
    job *heap;            /* queue_max slots, a binary min-heap of n jobs */
    size_t queue_max, n;
    uint64_t seq;
    size_t running;
    int stopping;
    pthread_t *threads;
    unsigned int nthreads; /* started */
    pthread_t expirer;
    int expirer_started;
};

static int before(const job *a, const job *b)
{
    return a->expire_ns < b->expire_ns || (a->expire_ns == b->expire_ns && a->seq < b->seq);
}

static void swap(job *a, job *b)
{
    job t = *a;
    *a = *b;
    *b = t;
}

static void push(wh_defer_pool *p, job j)
{
    size_t i = p->n++;
    p->heap[i] = j;
    while (i > 0 && before(&p->heap[i], &p->heap[(i - 1) / 2])) {
        swap(&p->heap[i], &p->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static job pop(wh_defer_pool *p)
{
    job top = p->heap[0];
    p->heap[0] = p->heap[--p->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < p->n && before(&p->heap[l], &p->heap[m]))
            m = l;
        if (r < p->n && before(&p->heap[r], &p->heap[m]))
            m = r;
        if (m == i)
            break;
        swap(&p->heap[i], &p->heap[m]);
        i = m;
    }
    return top;
}

/* Runs j unlocked, counted as running. */
static void run(wh_defer_pool *p, job j, wh_defer_how how)
{
    p->running++;
    pthread_mutex_unlock(&p->mu);
    j.fn(j.arg, how);
    pthread_mutex_lock(&p->mu);
    p->running--;
}

static void *worker(void *arg)
{
    wh_defer_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->n == 0 && !p->stopping)
            pthread_cond_wait(&p->more, &p->mu);
        if (p->n == 0)
            break; /* stopping, nothing left */
        job j = pop(p);
        pthread_cond_signal(&p->sooner); /* the expirer's earliest may have gone */
        wh_defer_how how = WH_DEFER_RUN;
        if (p->stopping)
            how = WH_DEFER_SHED;
        else if (j.expire_ns != NEVER && j.expire_ns <= topo_clock_ns())
            how = WH_DEFER_EXPIRED; /* the expirer had not reached it yet */
        run(p, j, how);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Sleeps until the earliest queued expiry and answers what expired while
 * every worker was busy: a job is never answered after its own deadline
 * because others with longer ones hold the workers. */
static void *expirer(void *arg)
{
    wh_defer_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stopping) {
        if (p->n == 0 || p->heap[0].expire_ns == NEVER) {
            pthread_cond_wait(&p->sooner, &p->mu);
            continue;
        }
        int64_t at = p->heap[0].expire_ns;
        if (at > topo_clock_ns()) {
            struct timespec ts = topo_clock_at_ms(at / 1000000 + 1);
            pthread_cond_timedwait(&p->sooner, &p->mu, &ts);
            continue;
        }
        run(p, pop(p), WH_DEFER_EXPIRED);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int wh_defer_pool_create(wh_defer_pool **out, unsigned int threads, size_t queue_max)
{
    *out = NULL;
    if (threads == 0 || queue_max == 0)
        return -1;
    wh_defer_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->more, NULL);
    if (topo_clock_cond_init(&p->sooner) != 0) {
        pthread_cond_destroy(&p->more);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return -1;
    }
    p->queue_max = queue_max;
    p->heap = calloc(queue_max, sizeof *p->heap);
    p->threads = calloc(threads, sizeof *p->threads);
    if (p->heap == NULL || p->threads == NULL) {
        wh_defer_pool_free(p);
        return -1;
    }
    p->expirer_started = pthread_create(&p->expirer, NULL, expirer, p) == 0;
    for (; p->expirer_started && p->nthreads < threads; p->nthreads++)
        if (pthread_create(&p->threads[p->nthreads], NULL, worker, p) != 0)
            break;
    if (p->nthreads == 0) {
        wh_defer_pool_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int wh_defer_pool_submit(wh_defer_pool *p, wh_defer_fn fn, void *arg, int64_t expire_ns)
{
    int rc = -1;
    pthread_mutex_lock(&p->mu);
    if (!p->stopping && p->n < p->queue_max) {
        uint64_t seq = p->seq++;
        push(p, (job){fn, arg, expire_ns > 0 ? expire_ns : NEVER, seq});
        pthread_cond_signal(&p->more);
        if (p->heap[0].seq == seq)
            pthread_cond_signal(&p->sooner); /* the new job expires first */
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

size_t wh_defer_pool_pending(wh_defer_pool *p)
{
    pthread_mutex_lock(&p->mu);
    size_t n = p->n + p->running;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void wh_defer_pool_stop(wh_defer_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    int joined = p->stopping == 2;
    p->stopping = p->stopping ? p->stopping : 1;
    pthread_cond_broadcast(&p->more);
    pthread_cond_broadcast(&p->sooner);
    pthread_mutex_unlock(&p->mu);
    if (joined)
        return;
    /* the workers drain the queue (shed) before they see it empty */
    for (unsigned int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    if (p->expirer_started)
        pthread_join(p->expirer, NULL);
    pthread_mutex_lock(&p->mu);
    p->stopping = 2;
    pthread_mutex_unlock(&p->mu);
}

void wh_defer_pool_free(wh_defer_pool *p)
{
    if (p == NULL)
        return;
    wh_defer_pool_stop(p);
    pthread_cond_destroy(&p->sooner);
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p->heap);
    free(p);
}
