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
#define TIMELINE_MAX SIM_TIMELINE_MAX

int sim_acc_init(sim_run *r, topo_err *err)
{
    sim_acc *a = &r->acc;
    sim_jobs *J = &a->jobs;
    size_t n = r->t->njobs, nl = r->c->nlevels;
    memset(a, 0, sizeof(*a));
    J->njobs = n;
    J->nlevels = nl;
    if (n > 0 && ((J->out = malloc(n * sizeof(*J->out))) == NULL ||
                  (J->span = calloc(n * nl, sizeof(*J->span))) == NULL ||
                  (J->order = malloc(n * sizeof(*J->order))) == NULL))
        return topo_err_nomem(err, "simulation");
    for (size_t j = 0; j < n; j++) {
        const topo_sim_job *job = &r->t->jobs[j];
        sim_outcome *o = &J->out[j];
        o->arrive = job->arrive;
        o->start = o->end = -1;
        o->slowdown = 1;
        o->gpus = (uint64_t)job->pods * (uint64_t)job->gpus;
        o->work = (double)o->gpus * job->duration;
        o->multi_node = 0;
        o->tight = o->tight_now = -1;
    }
    r->t0 = n > 0 ? r->t->jobs[0].arrive : 0;
    r->w1 = n > 0 ? r->t->jobs[n - 1].arrive : 0;
    /* A warmup of the whole span is a window of one instant, exactly: t0 +
     * warmup can round past w1 or short of it and leave a window of 1e-13 s
     * whose averages mean nothing. So can a warmup typed to the span's
     * printed digits: within a billionth of the times, it is the span. */
    r->w0 = r->t0 + r->o.warmup;
    if (r->w0 > r->w1 || r->w1 - r->w0 <= 1e-9 * fmax(1, fabs(r->w1)))
        r->w0 = r->w1;
    r->step = r->o.timeline_step > 0 ? r->o.timeline_step
                                      : (r->w1 - r->t0) / TOPO_SIM_TIMELINE_POINTS;
    if (!(r->step > 0))
        r->step = 1;
    return 0;
}

void sim_jobs_dispose(sim_jobs *j)
{
    free(j->out);
    free(j->span);
    free(j->order);
    memset(j, 0, sizeof(*j));
}

void sim_acc_dispose(sim_acc *a)
{
    sim_jobs_dispose(&a->jobs);
    free(a->tl);
    memset(a, 0, sizeof(*a));
}

static int close_bin(sim_run *r, double len, topo_err *err)
{
    sim_acc *a = &r->acc;
    if (topo_array_reserve((void **)&a->tl, &a->captl, a->ntl + 1, sizeof(*a->tl)) != 0)
        return topo_err_nomem(err, "timeline");
    topo_sim_sample *s = &a->tl[a->ntl];
    s->t = r->t0 + (double)a->ntl * r->step;
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
    /* Timeline bins: [t0 + k step, t0 + (k+1) step), the warm-up included. */
    for (double x = fmax(r->now, r->t0); x < t && a->ntl < TIMELINE_MAX;) {
        double end = r->t0 + (double)(a->ntl + 1) * r->step;
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
    sim_jobs *J = &r->acc.jobs;
    sim_outcome *o = &J->out[j];
    int32_t span[TOPO_MAX_LEVELS];
    uint64_t gpus = (uint64_t)s->pods * (uint64_t)s->gpus;

    spans(r, r->slots, r->nslots, span);
    for (size_t l = 0; l < c->nlevels; l++)
        J->span[j * c->nlevels + l] = (uint32_t)span[l];
    if (gpus > c->max_node) {
        o->multi_node = 1;
        /* Only the whole cluster could hold it: no level to be tight in. */
        if (s->tight_empty >= 0)
            o->tight = span[s->tight_empty] == 1;
        if (tight_now >= 0)
            o->tight_now = span[tight_now] == 1;
    }
    /* The cost of the finest level holding every pod. */
    double cost = r->o.cost[TOPO_SIM_TIER_CLUSTER];
    for (size_t l = c->nlevels; l-- > 0;)
        if (span[l] == 1) {
            cost = r->o.cost[c->tier[l]];
            break;
        }
    double share = gpus <= 8 ? r->o.comm_small : r->o.comm_large;
    o->slowdown = 1 + share * (cost - 1);
    o->start = r->now;
    J->order[J->nplaced++] = (uint32_t)j;
    *out_slowdown = o->slowdown;
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

/* GPU-time weighted mean and 99th percentile of the slowdowns of the n
 * jobs in v. */
static void slowdowns(topo_sim_metrics *m, wslow *v, size_t n)
{
    double total = 0, sum = 0, acc = 0;
    for (size_t i = 0; i < n; i++) {
        total += v[i].weight;
        sum += v[i].slow * v[i].weight;
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_wslow);
    m->slowdown_mean = total > 0 ? sum / total : 1;
    m->slowdown_p99 = 1;
    for (size_t i = 0; i < n; i++) {
        acc += v[i].weight;
        if (acc >= 0.99 * total) {
            m->slowdown_p99 = v[i].slow;
            break;
        }
    }
}

static int selected(const unsigned char *mask, size_t j)
{
    return mask == NULL || mask[j] != 0;
}

/* One implementation of every job-level figure, over the placed jobs in
 * the order they started (the order the sums have always been taken in, so
 * the all-jobs figures stay the same bit for bit). */
int sim_job_metrics(topo_sim_metrics *m, const sim_jobs *J, const unsigned char *mask,
                    topo_err *err)
{
    size_t n = 0, multi = 0, tight_of = 0, tight = 0, now_of = 0, now = 0;
    double spanned[TOPO_MAX_LEVELS] = {0};
    double *wait = NULL, *v = NULL;
    uint8_t *klass = NULL;
    wslow *ws = NULL;

    m->jobs = m->unplaceable = 0;
    for (size_t j = 0; j < J->njobs; j++)
        if (selected(mask, j)) {
            m->jobs++;
            m->unplaceable += J->out[j].start < 0;
        }
    if (J->nplaced > 0 && ((wait = malloc(J->nplaced * sizeof(*wait))) == NULL ||
                           (v = malloc(J->nplaced * sizeof(*v))) == NULL ||
                           (klass = malloc(J->nplaced)) == NULL ||
                           (ws = malloc(J->nplaced * sizeof(*ws))) == NULL)) {
        free(wait);
        free(v);
        free(klass);
        return topo_err_nomem(err, "simulation");
    }
    for (size_t k = 0; k < J->nplaced; k++) {
        size_t j = J->order[k];
        const sim_outcome *o = &J->out[j];
        if (!selected(mask, j))
            continue;
        if (o->multi_node) {
            multi++;
            for (size_t l = 0; l < J->nlevels; l++)
                spanned[l] += J->span[j * J->nlevels + l];
            tight_of += o->tight >= 0;
            tight += o->tight == 1;
            now_of += o->tight_now >= 0;
            now += o->tight_now == 1;
        }
        wait[n] = o->start - o->arrive;
        klass[n] = o->gpus <= 8 ? 0 : o->gpus < 128 ? 1 : 2;
        ws[n].slow = o->slowdown;
        ws[n].weight = o->work;
        v[n] = o->end - o->arrive;
        n++;
    }
    m->placed = n;
    m->multi_node = multi;
    m->tight_share = tight_of > 0 ? (double)tight / (double)tight_of : 0;
    m->tight_share_now = now_of > 0 ? (double)now / (double)now_of : 0;
    m->nlevels = J->nlevels;
    for (size_t l = 0; l < TOPO_MAX_LEVELS; l++)
        m->spanned[l] = l < J->nlevels && multi > 0 ? spanned[l] / (double)multi : 0;

    topo_sim_wait jct;
    wait_stats(&jct, v, n);
    m->jct_mean = jct.mean;
    m->jct_p99 = jct.p99;
    slowdowns(m, ws, n);
    for (size_t i = 0; i < n; i++)
        v[i] = wait[i];
    wait_stats(&m->wait, v, n);
    for (int c = 0; c < TOPO_SIM_CLASSES; c++) {
        size_t nc = 0;
        for (size_t i = 0; i < n; i++)
            if (klass[i] == c)
                v[nc++] = wait[i];
        wait_stats(&m->wait_class[c], v, nc);
    }
    free(wait);
    free(v);
    free(klass);
    free(ws);
    return 0;
}

/* Goodput: the GPU-seconds of work done inside the window, each placed
 * job's GPUs x the part of its run inside [w0, w1] / its slowdown, over
 * capacity x window: the integral of sum(gpus / slowdown) over the running
 * jobs, taken job by job. */
static double goodput(const sim_run *r)
{
    const sim_jobs *J = &r->acc.jobs;
    double len = r->w1 - r->w0, sum = 0;
    if (!(len > 0))
        return 0;
    for (size_t j = 0; j < J->njobs; j++) {
        const sim_outcome *o = &J->out[j];
        double run = fmin(o->end, r->w1) - fmax(o->start, r->w0);
        if (o->start >= 0 && run > 0)
            sum += (double)o->gpus * run / o->slowdown;
    }
    return sum / ((double)r->c->capacity * len);
}

int sim_acc_finish(sim_run *r, topo_sim_metrics *m, topo_err *err)
{
    sim_acc *a = &r->acc;
    sim_jobs *J = &a->jobs;
    unsigned char *in_window = NULL;
    int rc;

    memset(m, 0, sizeof(*m));
    if (a->tl_free > 0 || a->tl_used > 0 || a->tl_queue > 0) {
        double len = r->now - (r->t0 + (double)a->ntl * r->step);
        if (len > 0 && a->ntl < TIMELINE_MAX && (rc = close_bin(r, len, err)) < 0)
            return rc;
    }
    for (size_t j = 0; j < J->njobs; j++)
        if (r->js[j].start >= 0)
            J->out[j].end = r->js[j].end;
    double len = r->w1 - r->w0;
    m->fragmentation = a->free_dt > 0 ? a->frag_dt / a->free_dt : 0;
    m->fragmentation_pod = a->free_dt > 0 ? a->fragpod_dt / a->free_dt : 0;
    m->utilisation = len > 0 ? a->used_dt / ((double)r->c->capacity * len) : 0;
    m->queue_length = len > 0 ? a->queue_dt / len : 0;
    m->goodput = goodput(r);
    m->window_start = r->w0;
    m->window_end = r->w1;
    m->makespan = r->now;

    /* Job-level figures count the jobs arriving inside the window. */
    if (J->njobs > 0 && (in_window = malloc(J->njobs)) == NULL)
        return topo_err_nomem(err, "simulation");
    for (size_t j = 0; j < J->njobs; j++)
        in_window[j] = J->out[j].arrive >= r->w0;
    rc = sim_job_metrics(m, J, in_window, err);
    free(in_window);
    return rc;
}
