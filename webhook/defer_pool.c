/* Threads for requests that wait on the network (defer_pool.h). */
#define _POSIX_C_SOURCE 200809L
#include "defer_pool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct job {
    wh_defer_fn fn;
    void *arg;
} job;

struct wh_defer_pool {
    pthread_mutex_t mu;
    pthread_cond_t more;
    job *ring; /* queue_max slots, head..head+n */
    size_t queue_max, head, n;
    size_t running;
    int stopping;
    pthread_t *threads;
    unsigned int nthreads; /* started */
};

static void *worker(void *arg)
{
    wh_defer_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->n == 0 && !p->stopping)
            pthread_cond_wait(&p->more, &p->mu);
        if (p->n == 0)
            break; /* stopping, nothing left */
        job j = p->ring[p->head];
        p->head = (p->head + 1) % p->queue_max;
        p->n--;
        int shed = p->stopping;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        j.fn(j.arg, shed);
        pthread_mutex_lock(&p->mu);
        p->running--;
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
    p->queue_max = queue_max;
    p->ring = calloc(queue_max, sizeof *p->ring);
    p->threads = calloc(threads, sizeof *p->threads);
    if (p->ring == NULL || p->threads == NULL) {
        wh_defer_pool_free(p);
        return -1;
    }
    for (; p->nthreads < threads; p->nthreads++)
        if (pthread_create(&p->threads[p->nthreads], NULL, worker, p) != 0)
            break;
    if (p->nthreads == 0) {
        wh_defer_pool_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int wh_defer_pool_submit(wh_defer_pool *p, wh_defer_fn fn, void *arg)
{
    int rc = -1;
    pthread_mutex_lock(&p->mu);
    if (!p->stopping && p->n < p->queue_max) {
        p->ring[(p->head + p->n) % p->queue_max] = (job){fn, arg};
        p->n++;
        pthread_cond_signal(&p->more);
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
    pthread_mutex_unlock(&p->mu);
    if (joined)
        return;
    /* the workers drain the queue (shed) before they see it empty */
    for (unsigned int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_lock(&p->mu);
    p->stopping = 2;
    pthread_mutex_unlock(&p->mu);
}

void wh_defer_pool_free(wh_defer_pool *p)
{
    if (p == NULL)
        return;
    wh_defer_pool_stop(p);
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p->ring);
    free(p);
}
