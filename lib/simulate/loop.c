/* The event loop (docs/simulate.md "The simulation"): arrivals in trace
 * order, completions, and the end of a held preferred level's wait, in time
 * order (at one instant: completions, then relaxations, then arrivals).
 * A job that does not fit waits in a FIFO queue; whenever jobs complete the
 * queue is tried again in arrival order, as topo-webhook's ungater does, a
 * job that does not fit never blocking those behind it. Jobs are grouped in
 * shapes: a shape that failed since the last completion is not tried again
 * before the next, so a round costs the jobs that start plus one try per
 * shape, however long the queue. Each shape's queue is a binary min-heap
 * of job indices, so every queue operation is O(log n) whatever order jobs
 * join it in (the sorted list it replaces stayed cheap only while held jobs
 * relaxed into their relaxed shape's queue in arrival order). */
#include <math.h>
#include <stdlib.h>

#include "sim_internal.h"
#include "topo/array.h"

#define PROGRESS_EVERY 1000

typedef struct ev {
    double t;
    uint32_t job;
} ev;

typedef struct heap {
    ev *v;
    size_t n, cap;
} heap;

static int ev_less(const ev *a, const ev *b)
{
    return a->t < b->t || (a->t == b->t && a->job < b->job);
}

static int heap_push(heap *h, double t, uint32_t job, topo_err *err)
{
    if (topo_array_reserve((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v)) != 0)
        return topo_err_nomem(err, "simulation");
    size_t i = h->n++;
    h->v[i].t = t;
    h->v[i].job = job;
    while (i > 0 && ev_less(&h->v[i], &h->v[(i - 1) / 2])) {
        ev tmp = h->v[i];
        h->v[i] = h->v[(i - 1) / 2];
        h->v[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
    return 0;
}

static ev heap_pop(heap *h)
{
    ev top = h->v[0];
    h->v[0] = h->v[--h->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->n && ev_less(&h->v[l], &h->v[m]))
            m = l;
        if (l + 1 < h->n && ev_less(&h->v[l + 1], &h->v[m]))
            m = l + 1;
        if (m == i)
            break;
        ev tmp = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = tmp;
        i = m;
    }
    return top;
}

static double heap_top(const heap *h)
{
    return h->n > 0 ? h->v[0].t : INFINITY;
}

/* A shape's queued jobs: a min-heap of job indices (arrival order). A job
 * that leaves the queue other than from its head (a held job relaxing) is
 * left in place and dropped when it reaches the head: it is then no longer
 * queued in this shape, and a job never comes back to a shape it left. */
typedef struct queue {
    int32_t *v;
    size_t n, cap;
} queue;

typedef struct loop {
    sim_run *r;
    heap done, relax;
    heap round; /* shapes to try this round, by their first job (t unused) */
    uint64_t *in_round; /* per shape: the epoch it was last pushed in */
    queue *queues;      /* per shape */
    topo_err *err;
} loop;

/* ---- queues per shape, in arrival (= job index) order ---- */

static void queue_sift_down(queue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < q->n && q->v[l] < q->v[m])
            m = l;
        if (l + 1 < q->n && q->v[l + 1] < q->v[m])
            m = l + 1;
        if (m == i)
            return;
        int32_t tmp = q->v[i];
        q->v[i] = q->v[m];
        q->v[m] = tmp;
        i = m;
    }
}

static void queue_pop(queue *q)
{
    q->v[0] = q->v[--q->n];
    queue_sift_down(q, 0);
}

/* The shape's first queued job, -1 when none; drops the jobs that left. */
static int32_t queue_head(loop *L, int32_t shape)
{
    queue *q = &L->queues[shape];
    while (q->n > 0) {
        const sim_jobstate *s = &L->r->js[q->v[0]];
        if (s->status == SIM_QUEUED && s->shape == shape)
            return q->v[0];
        queue_pop(q);
    }
    return -1;
}

/* Job j out of the queue of its shape. Its entry stays (queue_head drops
 * it) unless it is the head, which is taken out now. */
static void unlink_job(loop *L, int32_t j)
{
    sim_run *r = L->r;
    sim_jobstate *s = &r->js[j];
    queue *q = &L->queues[s->shape];
    if (q->n > 0 && q->v[0] == j)
        queue_pop(q);
    s->status = SIM_PENDING;
    r->queued--;
}

static int enqueue(loop *L, int32_t j)
{
    sim_run *r = L->r;
    sim_jobstate *s = &r->js[j];
    queue *q = &L->queues[s->shape];
    if (topo_array_reserve((void **)&q->v, &q->cap, q->n + 1, sizeof(*q->v)) != 0)
        return topo_err_nomem(L->err, "simulation");
    size_t i = q->n++;
    q->v[i] = j;
    while (i > 0 && q->v[i] < q->v[(i - 1) / 2]) {
        int32_t tmp = q->v[i];
        q->v[i] = q->v[(i - 1) / 2];
        q->v[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
    s->status = SIM_QUEUED;
    r->queued++;
    return 0;
}

/* ---- starting a job ---- */

static int start(loop *L, int32_t j, int32_t tight_now)
{
    sim_run *r = L->r;
    sim_jobstate *s = &r->js[j];
    const topo_sim_job *job = &r->t->jobs[j];
    double slowdown = 1;
    int rc;

    sim_acc_start(r, (size_t)j, &r->shapes[s->shape], tight_now, &slowdown);
    if ((rc = sim_slots_keep(r, (size_t)j, L->err)) < 0)
        return rc;
    s->status = SIM_RUNNING;
    s->start = r->now;
    s->end = r->now + job->duration * (r->o.apply_slowdown ? slowdown : 1);
    r->running++;
    return heap_push(&L->done, s->end, (uint32_t)j, L->err);
}

/* 1 started, 0 does not fit now, < 0 error. */
static int try_start(loop *L, int32_t j)
{
    sim_run *r = L->r;
    sim_shape *sh = &r->shapes[r->js[j].shape];
    int32_t tight_now = 0;
    int rc;

    if (sh->failed_epoch == r->epoch)
        return 0;
    if (!sim_fits(r, sh->pods, sh->gpus)) {
        sh->failed_epoch = r->epoch;
        return 0;
    }
    if ((uint64_t)sh->pods * (uint64_t)sh->gpus > r->c->max_node)
        tight_now = sim_tightest(r->c, r->free, sh->pods, sh->gpus);
    r->attempts++;
    if ((rc = r->ops->place(r, sh, L->err)) < 0)
        return rc;
    if (rc == 0) {
        sh->failed_epoch = r->epoch;
        return 0;
    }
    return (rc = start(L, j, tight_now)) < 0 ? rc : 1;
}

/* Job j did not fit with nothing running: it never will, unless it was
 * holding out for its preferred level, which it now gives up (and waits on
 * as any job, when something started meanwhile). Also a held job's wait
 * running out (relax). */
static int never_fits(loop *L, int32_t j)
{
    sim_run *r = L->r;
    sim_jobstate *s = &r->js[j];
    if (!s->held) {
        s->status = SIM_UNPLACEABLE;
        return 0;
    }
    s->held = 0;
    s->shape = r->shapes[s->shape].relaxed;
    int rc = try_start(L, j);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (r->running == 0) {
        s->status = SIM_UNPLACEABLE;
        return 0;
    }
    return enqueue(L, j);
}

/* ---- events ---- */

static int arrive(loop *L, int32_t j)
{
    sim_run *r = L->r;
    int rc = try_start(L, j);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (r->running == 0)
        return never_fits(L, j);
    if ((rc = enqueue(L, j)) < 0)
        return rc;
    if (r->js[j].held)
        return heap_push(&L->relax, r->t->jobs[j].arrive + r->o.relax_after, (uint32_t)j,
                         L->err);
    return 0;
}

static int relax(loop *L, int32_t j)
{
    sim_run *r = L->r;
    sim_jobstate *s = &r->js[j];
    if (s->status != SIM_QUEUED || !s->held)
        return 0;
    unlink_job(L, j);
    return never_fits(L, j);
}

static int round_push(loop *L, int32_t shape)
{
    sim_run *r = L->r;
    sim_shape *sh = &r->shapes[shape];
    int32_t head = queue_head(L, shape);
    if (head < 0 || sh->failed_epoch == r->epoch || L->in_round[shape] == r->epoch)
        return 0;
    L->in_round[shape] = r->epoch;
    /* The round heap orders shapes by their first job; t carries the shape. */
    return heap_push(&L->round, (double)head, (uint32_t)shape, L->err);
}

/* After completions: every queued job in arrival order, a shape at a time. */
static int retry(loop *L)
{
    sim_run *r = L->r;
    int rc;
    L->round.n = 0;
    for (size_t s = 0; s < r->nshapes && r->queued > 0; s++)
        if ((rc = round_push(L, (int32_t)s)) < 0)
            return rc;
    while (L->round.n > 0 && r->free_total > 0) {
        int32_t shape = (int32_t)heap_pop(&L->round).job;
        sim_shape *sh = &r->shapes[shape];
        int32_t j = queue_head(L, shape);
        L->in_round[shape] = 0;
        if (j < 0)
            continue;
        unlink_job(L, j);
        rc = try_start(L, j);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            /* Back at the head: O(log n), the smallest index in its heap. */
            if ((rc = enqueue(L, j)) < 0)
                return rc;
            if (r->running == 0) {
                /* Nothing runs and it does not fit: neither do the others. */
                int32_t relaxed = sh->relaxed;
                while ((j = queue_head(L, shape)) >= 0) {
                    unlink_job(L, j);
                    if ((rc = never_fits(L, j)) < 0)
                        return rc;
                }
                if (relaxed >= 0 && (rc = round_push(L, relaxed)) < 0)
                    return rc;
            }
            continue;
        }
        if ((rc = round_push(L, shape)) < 0)
            return rc;
    }
    return 0;
}

static int complete(loop *L, int32_t j)
{
    sim_run *r = L->r;
    sim_jobstate *s = &r->js[j];
    int rc = r->ops->release(r, s->slots, s->nslots, r->t->jobs[j].gpus, L->err);
    if (rc < 0)
        return rc;
    s->status = SIM_DONE; /* the slots stay: the result lists them */
    r->running--;
    return 0;
}

static void progress(const sim_run *r, size_t done)
{
    if (r->o.progress != NULL)
        r->o.progress(topo_sim_policy_name(r->policy), done, r->t->njobs, r->o.progress_payload);
}

static int step(loop *L, size_t *next_arrival)
{
    sim_run *r = L->r;
    const topo_sim_trace *t = r->t;
    double ta = *next_arrival < t->njobs ? t->jobs[*next_arrival].arrive : INFINITY;
    double tc = heap_top(&L->done), tr = heap_top(&L->relax);
    double now = fmin(ta, fmin(tc, tr));
    int rc;

    if ((rc = sim_acc_advance(r, now, L->err)) < 0)
        return rc;
    if (tc <= now) {
        while (L->done.n > 0 && L->done.v[0].t <= now)
            if ((rc = complete(L, (int32_t)heap_pop(&L->done).job)) < 0)
                return rc;
        r->epoch++;
        return retry(L);
    }
    if (tr <= now) {
        while (L->relax.n > 0 && L->relax.v[0].t <= now)
            if ((rc = relax(L, (int32_t)heap_pop(&L->relax).job)) < 0)
                return rc;
        return 0;
    }
    size_t j = (*next_arrival)++;
    if ((rc = arrive(L, (int32_t)j)) < 0)
        return rc;
    if (*next_arrival % PROGRESS_EVERY == 0)
        progress(r, *next_arrival);
    return 0;
}

int sim_loop(sim_run *r, topo_err *err)
{
    loop L = {r, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, NULL, NULL, err};
    size_t next = 0;
    int rc = 0;

    if (r->nshapes > 0 && ((L.in_round = calloc(r->nshapes, sizeof(*L.in_round))) == NULL ||
                           (L.queues = calloc(r->nshapes, sizeof(*L.queues))) == NULL)) {
        rc = topo_err_nomem(err, "simulation");
        goto cleanup;
    }
    r->now = r->t->njobs > 0 ? r->t->jobs[0].arrive : 0;
    while (next < r->t->njobs || L.done.n > 0 || L.relax.n > 0)
        if ((rc = step(&L, &next)) < 0)
            goto cleanup;
    /* Nothing runs: whatever still waits would have been found not to fit. */
    for (size_t j = 0; j < r->t->njobs; j++)
        if (r->js[j].status == SIM_QUEUED)
            r->js[j].status = SIM_UNPLACEABLE;
    progress(r, r->t->njobs);

cleanup:
    free(L.done.v);
    free(L.relax.v);
    free(L.round.v);
    free(L.in_round);
    for (size_t s = 0; L.queues != NULL && s < r->nshapes; s++)
        free(L.queues[s].v);
    free(L.queues);
    return rc;
}
