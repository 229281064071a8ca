/* The metrics of a run (docs/simulate.md "Metrics"): integrals of the
 * cluster's state over the window, per-job figures as jobs start, the
 * timeline, and the summary at the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/array.h"

/* The timeline stops after this many points (a long job far beyond the
 * last arrival would otherwise make it grow without bound). */
#define TIMELINE_MAX (10 * TOPO_SIM_TIMELINE_POINTS)

int sim_acc_init(sim_run *r, topo_err *err)
{
    sim_acc *a = &r->acc;
    size_t n = r->t->njobs;
    memset(a, 0, sizeof(*a));
    if (n > 0 && ((a->wait = malloc(n * sizeof(*a->wait))) == NULL ||
                  (a->klass = malloc(n * sizeof(*a->klass))) == NULL ||
                  (a->slow = malloc(n * sizeof(*a->slow))) == NULL ||
                  (a->weight = malloc(n * sizeof(*a->weight))) == NULL))
        return topo_err_nomem(err, "simulation");
    r->w0 = n > 0 ? r->t->jobs[0].arrive : 0;
    r->w1 = n > 0 ? r->t->jobs[n - 1].arrive : 0;
    r->step = r->o.timeline_step > 0 ? r->o.timeline_step
                                      : (r->w1 - r->w0) / TOPO_SIM_TIMELINE_POINTS;
    if (!(r->step > 0))
        r->step = 1;
    return 0;
}

void sim_acc_dispose(sim_acc *a)
{
    free(a->wait);
    free(a->klass);
    free(a->slow);
    free(a->weight);
    free(a->tl);
    memset(a, 0, sizeof(*a));
}

static int close_bin(sim_run *r, double len, topo_err *err)
{
    sim_acc *a = &r->acc;
    if (topo_array_reserve((void **)&a->tl, &a->captl, a->ntl + 1, sizeof(*a->tl)) != 0)
        return topo_err_nomem(err, "timeline");
    topo_sim_sample *s = &a->tl[a->ntl];
    s->t = r->w0 + (double)a->ntl * r->step;
    s->utilisation = a->tl_used / ((double)r->c->capacity * len);
    s->fragmentation = a->tl_free > 0 ? a->tl_frag / a->tl_free : 0;
    s->fragmentation_pod = a->tl_free > 0 ? a->tl_fragpod / a->tl_free : 0;
    s->queue_length = a->tl_queue / len;
    a->ntl++;
    a->tl_used = a->tl_free = a->tl_frag = a->tl_fragpod = a->tl_queue = 0;
    return 0;
}

int sim_acc_advance(sim_run *r, double t, topo_err *err)
{
    sim_acc *a = &r->acc;
    double used = (double)(r->c->capacity - r->free_total), free = (double)r->free_total;
    double frag = (double)r->frag_free, fragpod = (double)r->fragpod_free;
    double queue = (double)r->queued;
    int rc;

    if (!(t > r->now))
        return 0;
    double lo = fmax(r->now, r->w0), hi = fmin(t, r->w1);
    if (hi > lo) {
        double dt = hi - lo;
        a->used_dt += used * dt;
        a->free_dt += free * dt;
        a->frag_dt += frag * dt;
        a->fragpod_dt += fragpod * dt;
        a->queue_dt += queue * dt;
    }
    /* Timeline bins: [w0 + k step, w0 + (k+1) step). */
    for (double x = fmax(r->now, r->w0); x < t && a->ntl < TIMELINE_MAX;) {
        double end = r->w0 + (double)(a->ntl + 1) * r->step;
        double seg = fmin(t, end) - x;
        a->tl_used += used * seg;
        a->tl_free += free * seg;
        a->tl_frag += frag * seg;
        a->tl_fragpod += fragpod * seg;
        a->tl_queue += queue * seg;
        if (t < end)
            break;
        if ((rc = close_bin(r, r->step, err)) < 0)
            return rc;
        x = end;
    }
    r->now = t;
    return 0;
}

static int by_node(const void *a, const void *b)
{
    const sim_slot *x = a, *y = b;
    return (x->node > y->node) - (x->node < y->node);
}

/* Domains spanned per level by the slots (sorted by node here: a domain's
 * nodes are contiguous in node order, so each change of id is a new one). */
static void spans(const sim_run *r, sim_slot *slots, int32_t n, int32_t *span)
{
    const topo_sim_cluster *c = r->c;
    if (n > 1)
        qsort(slots, (size_t)n, sizeof(*slots), by_node);
    for (size_t l = 0; l < c->nlevels; l++) {
        span[l] = n > 0;
        for (int32_t i = 1; i < n; i++)
            span[l] += sim_dom(c, (size_t)slots[i].node, l) !=
                       sim_dom(c, (size_t)slots[i - 1].node, l);
    }
}

void sim_acc_start(sim_run *r, size_t j, const sim_shape *s, int32_t tight_now,
                   double *out_slowdown)
{
    const topo_sim_cluster *c = r->c;
    const topo_sim_job *job = &r->t->jobs[j];
    sim_acc *a = &r->acc;
    int32_t span[TOPO_MAX_LEVELS];
    uint64_t gpus = (uint64_t)s->pods * (uint64_t)s->gpus;

    spans(r, r->slots, r->nslots, span);
    if (gpus > c->max_node) {
        a->multi++;
        for (size_t l = 0; l < c->nlevels; l++)
            a->spanned[l] += span[l];
        /* Only the whole cluster could hold it: no level to be tight in. */
        if (s->tight_empty >= 0) {
            a->tight_of++;
            a->tight += span[s->tight_empty] == 1;
        }
        if (tight_now >= 0) {
            a->tight_now_of++;
            a->tight_now += span[tight_now] == 1;
        }
    }
    /* The cost of the finest level holding every pod. */
    double cost = r->o.cost[TOPO_SIM_TIER_CLUSTER];
    for (size_t l = c->nlevels; l-- > 0;)
        if (span[l] == 1) {
            cost = r->o.cost[c->tier[l]];
            break;
        }
    double share = gpus <= 8 ? r->o.comm_small : r->o.comm_large;
    double slowdown = 1 + share * (cost - 1);
    size_t k = a->nplaced++;
    a->wait[k] = r->now - job->arrive;
    a->klass[k] = gpus <= 8 ? 0 : gpus < 128 ? 1 : 2;
    a->slow[k] = slowdown;
    a->weight[k] = (double)gpus * job->duration;
    *out_slowdown = slowdown;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p of them at or below. */
static double rank(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)ceil(p * (double)n);
    return sorted[i == 0 ? 0 : i - 1];
}

static void wait_stats(topo_sim_wait *w, double *v, size_t n)
{
    double sum = 0;
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    w->jobs = n;
    w->p50 = rank(v, n, 0.50);
    w->p99 = rank(v, n, 0.99);
    w->mean = n > 0 ? sum / (double)n : 0;
}

typedef struct wslow {
    double slow, weight;
} wslow;

static int cmp_wslow(const void *a, const void *b)
{
    const wslow *x = a, *y = b;
    return (x->slow > y->slow) - (x->slow < y->slow);
}

/* GPU-time weighted mean and 99th percentile of the slowdowns. */
static int slowdowns(topo_sim_metrics *m, const sim_acc *a, topo_err *err)
{
    wslow *v = a->nplaced > 0 ? malloc(a->nplaced * sizeof(*v)) : NULL;
    double total = 0, sum = 0, acc = 0;
    if (a->nplaced > 0 && v == NULL)
        return topo_err_nomem(err, "simulation");
    for (size_t i = 0; i < a->nplaced; i++) {
        v[i].slow = a->slow[i];
        v[i].weight = a->weight[i];
        total += a->weight[i];
        sum += a->slow[i] * a->weight[i];
    }
    if (a->nplaced > 1)
        qsort(v, a->nplaced, sizeof(*v), cmp_wslow);
    m->slowdown_mean = total > 0 ? sum / total : 1;
    m->slowdown_p99 = 1;
    for (size_t i = 0; i < a->nplaced; i++) {
        acc += v[i].weight;
        if (acc >= 0.99 * total) {
            m->slowdown_p99 = v[i].slow;
            break;
        }
    }
    free(v);
    return 0;
}

int sim_acc_finish(sim_run *r, topo_sim_metrics *m, topo_err *err)
{
    sim_acc *a = &r->acc;
    double *v = NULL;
    int rc;

    memset(m, 0, sizeof(*m));
    if (a->tl_free > 0 || a->tl_used > 0 || a->tl_queue > 0) {
        double len = r->now - (r->w0 + (double)a->ntl * r->step);
        if (len > 0 && a->ntl < TIMELINE_MAX && (rc = close_bin(r, len, err)) < 0)
            return rc;
    }
    m->jobs = r->t->njobs;
    for (size_t j = 0; j < r->t->njobs; j++)
        m->unplaceable += r->js[j].status == SIM_UNPLACEABLE;
    m->placed = a->nplaced;
    m->multi_node = a->multi;
    m->tight_share = a->tight_of > 0 ? (double)a->tight / (double)a->tight_of : 0;
    m->tight_share_now = a->tight_now_of > 0 ? (double)a->tight_now / (double)a->tight_now_of : 0;
    m->nlevels = r->c->nlevels;
    for (size_t l = 0; l < r->c->nlevels; l++)
        m->spanned[l] = a->multi > 0 ? a->spanned[l] / (double)a->multi : 0;
    double len = r->w1 - r->w0;
    m->fragmentation = a->free_dt > 0 ? a->frag_dt / a->free_dt : 0;
    m->fragmentation_pod = a->free_dt > 0 ? a->fragpod_dt / a->free_dt : 0;
    m->utilisation = len > 0 ? a->used_dt / ((double)r->c->capacity * len) : 0;
    m->queue_length = len > 0 ? a->queue_dt / len : 0;
    m->window_start = r->w0;
    m->window_end = r->w1;
    m->makespan = r->now;

    if (a->nplaced > 0 && (v = malloc(a->nplaced * sizeof(*v))) == NULL)
        return topo_err_nomem(err, "simulation");
    if (a->nplaced > 0)
        memcpy(v, a->wait, a->nplaced * sizeof(*v));
    wait_stats(&m->wait, v, a->nplaced);
    for (int k = 0; k < TOPO_SIM_CLASSES; k++) {
        size_t n = 0;
        for (size_t i = 0; i < a->nplaced; i++)
            if (a->klass[i] == k)
                v[n++] = a->wait[i];
        wait_stats(&m->wait_class[k], v, n);
    }
    free(v);
    return slowdowns(m, a, err);
}
