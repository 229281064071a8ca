/* The runs of the same policies over several seeds (topo/simulate.h,
 * docs/simulate.md "Seeds and intervals"): every metric of every seed is
 * kept (at most TOPO_MAX_SIM_SEEDS x the policies x SIM_NVALUES numbers)
 * and the means and intervals recomputed as seeds come; the timelines are
 * folded in point by point as they come (Welford's running mean and sum of
 * squares), as a seed's timeline can have thousands of points. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "interval.h"
#include "out_internal.h"
#include "summary_internal.h"
#include "topo/limits.h"
#include "topo/pool.h"

/* The timeline's figures, in topo_sim_sample's order after t. */
#define FIGURES 4

typedef struct summary_policy {
    const char *name;
    /* Per view (fields.h): its own run, the same-jobs view, the stretched run. */
    double mean[SIM_VIEWS][SIM_NVALUES], lo[SIM_VIEWS][SIM_NVALUES], hi[SIM_VIEWS][SIM_NVALUES];
    double step; /* the first seed's timeline step, 0 with fewer than 2 points */
    size_t ntl;  /* timeline points every seed so far has */
    double *run_mean, *run_m2; /* ntl x FIGURES */
    topo_sim_sample *tl, *tl_lo, *tl_hi;
} summary_policy;

struct topo_sim_summary {
    uint64_t seeds[TOPO_MAX_SIM_SEEDS];
    size_t nseeds;
    size_t npol;
    summary_policy pol[TOPO_SIM_POLICIES];
    size_t nlevels;
    const char *levels[TOPO_MAX_LEVELS];
    topo_pool *pool; /* the names */
    /* TOPO_MAX_SIM_SEEDS x TOPO_SIM_POLICIES x SIM_VIEWS x SIM_NVALUES, by seed */
    double *values;
    double common_jobs[TOPO_MAX_SIM_SEEDS], jobs_mean, jobs_lo, jobs_hi;
    int stretched; /* the seeds came with stretched runs */
    double window_start, window_end; /* the first seed's, for the report's marker */
};

static double *seed_values(const topo_sim_summary *s, size_t seed, size_t p, sim_view view)
{
    return s->values + ((seed * TOPO_SIM_POLICIES + p) * SIM_VIEWS + view) * SIM_NVALUES;
}

int topo_sim_summary_create(topo_sim_summary **out, topo_err *err)
{
    topo_sim_summary *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (s == NULL || (s->pool = topo_pool_create()) == NULL ||
        (s->values = calloc((size_t)TOPO_MAX_SIM_SEEDS * TOPO_SIM_POLICIES * SIM_VIEWS,
                                         SIM_NVALUES * sizeof(double))) == NULL) {
        topo_sim_summary_free(s);
        return topo_err_nomem(err, "summary");
    }
    *out = s;
    return 0;
}

/* Back to no policies (after a first seed that ran out of memory). */
static void forget_policies(topo_sim_summary *s)
{
    for (size_t p = 0; p < s->npol; p++) {
        summary_policy *sp = &s->pol[p];
        free(sp->run_mean);
        free(sp->run_m2);
        free(sp->tl);
        free(sp->tl_lo);
        free(sp->tl_hi);
        memset(sp, 0, sizeof(*sp));
    }
    s->npol = 0;
}

void topo_sim_summary_free(topo_sim_summary *s)
{
    if (s == NULL)
        return;
    forget_policies(s);
    topo_pool_free(s->pool);
    free(s->values);
    free(s);
}

static double figure(const topo_sim_sample *x, int j)
{
    return j == 0 ? x->utilisation : j == 1 ? x->fragmentation : j == 2 ? x->fragmentation_pod
                                                                        : x->queue_length;
}

static void set_figure(topo_sim_sample *x, int j, double v)
{
    if (j == 0)
        x->utilisation = v;
    else if (j == 1)
        x->fragmentation = v;
    else if (j == 2)
        x->fragmentation_pod = v;
    else
        x->queue_length = v;
}

static double timeline_step(const topo_sim_result *r)
{
    const topo_sim_sample *x;
    size_t n = topo_sim_result_timeline(r, &x);
    return n >= 2 ? x[1].t - x[0].t : 0;
}

/* That this seed's runs line up with the first seed's. */
static int check_runs(const topo_sim_summary *s, uint64_t seed, const topo_sim_result *const *r,
                      const topo_sim_result *const *stretched, size_t n, topo_err *err)
{
    if (n == 0 || n > TOPO_SIM_POLICIES)
        return topo_err_set(err, TOPO_EINVALID, "summary: %zu policies, expected 1 to %d", n,
                            TOPO_SIM_POLICIES);
    if (s->nseeds == TOPO_MAX_SIM_SEEDS)
        return topo_err_set(err, TOPO_EINVALID, "summary: more than %u seeds",
                            TOPO_MAX_SIM_SEEDS);
    for (size_t i = 0; i < s->nseeds; i++)
        if (s->seeds[i] == seed)
            return topo_err_set(err, TOPO_EINVALID, "summary: seed %llu added twice",
                                (unsigned long long)seed);
    for (size_t p = 0; p < n; p++) {
        const topo_sim_metrics *m = topo_sim_result_metrics(r[p]);
        if (stretched != NULL && stretched[p] == NULL)
            return topo_err_set(err, TOPO_EINVALID, "summary: seed %llu: no stretched %s run",
                                (unsigned long long)seed, m->policy);
        if (m->nlevels != topo_sim_result_metrics(r[0])->nlevels || m->nlevels > TOPO_MAX_LEVELS)
            return topo_err_set(err, TOPO_EINVALID, "summary: the runs' levels differ");
        if (s->nseeds == 0)
            continue;
        const summary_policy *sp = &s->pol[p];
        double step = timeline_step(r[p]);
        if (n != s->npol || strcmp(m->policy, sp->name) != 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "summary: seed %llu runs other policies than the first seed",
                                (unsigned long long)seed);
        if (m->nlevels != s->nlevels)
            return topo_err_set(err, TOPO_EINVALID, "summary: seed %llu has other levels",
                                (unsigned long long)seed);
        for (size_t l = 0; l < m->nlevels; l++)
            if (strcmp(topo_sim_result_level(r[p], l), s->levels[l]) != 0)
                return topo_err_set(err, TOPO_EINVALID, "summary: seed %llu has other levels",
                                    (unsigned long long)seed);
        /* Points are matched by index: they must be as far apart. */
        if (step > 0 && sp->step > 0 && fabs(step - sp->step) > 1e-6 * sp->step)
            return topo_err_set(err, TOPO_EINVALID,
                                "summary: seed %llu's %s timeline has a step of %g s, the "
                                "first seed's %g s (give the runs one timeline_step)",
                                (unsigned long long)seed, m->policy, step, sp->step);
    }
    if (s->nseeds > 0 && (stretched != NULL) != s->stretched)
        return topo_err_set(err, TOPO_EINVALID,
                            "summary: seed %llu %s stretched runs, the first seed %s",
                            (unsigned long long)seed, stretched != NULL ? "has" : "has no",
                            s->stretched ? "had" : "had none");
    return 0;
}

/* The first seed: names, levels and the timeline's storage. */
static int first_seed(topo_sim_summary *s, const topo_sim_result *const *r, size_t n,
                      topo_err *err)
{
    const topo_sim_metrics *m0 = topo_sim_result_metrics(r[0]);
    s->window_start = m0->window_start;
    s->window_end = m0->window_end;
    for (size_t l = 0; l < m0->nlevels; l++) {
        if ((s->levels[l] = topo_pool_strdup(s->pool, topo_sim_result_level(r[0], l))) == NULL)
            return topo_err_nomem(err, "summary");
        s->nlevels = l + 1;
    }
    for (size_t p = 0; p < n; p++) {
        summary_policy *sp = &s->pol[p];
        const topo_sim_sample *x;
        size_t nx = topo_sim_result_timeline(r[p], &x);
        s->npol = p + 1;
        sp->name = topo_pool_strdup(s->pool, topo_sim_result_metrics(r[p])->policy);
        sp->step = timeline_step(r[p]);
        sp->ntl = nx;
        if (sp->name == NULL ||
            (nx > 0 && ((sp->run_mean = calloc(nx * FIGURES, sizeof(double))) == NULL ||
                        (sp->run_m2 = calloc(nx * FIGURES, sizeof(double))) == NULL ||
                        (sp->tl = calloc(nx, sizeof(*sp->tl))) == NULL ||
                        (sp->tl_lo = calloc(nx, sizeof(*sp->tl))) == NULL ||
                        (sp->tl_hi = calloc(nx, sizeof(*sp->tl))) == NULL)))
            return topo_err_nomem(err, "summary");
        for (size_t k = 0; k < nx; k++)
            sp->tl[k].t = sp->tl_lo[k].t = sp->tl_hi[k].t = x[k].t;
    }
    return 0;
}

/* Folds seed number n's timeline (n counting from 1) into policy p's. */
static void add_timeline(summary_policy *sp, const topo_sim_result *r, size_t n)
{
    const topo_sim_sample *x;
    size_t nx = topo_sim_result_timeline(r, &x);
    if (nx < sp->ntl)
        sp->ntl = nx;
    for (size_t k = 0; k < sp->ntl; k++) {
        for (int j = 0; j < FIGURES; j++) {
            double *mean = &sp->run_mean[k * FIGURES + (size_t)j];
            double *m2 = &sp->run_m2[k * FIGURES + (size_t)j];
            double v = figure(&x[k], j), d = v - *mean;
            *mean += d / (double)n;
            *m2 += d * (v - *mean);
            double half = n >= 2 ? sim_ci95_half(n, *m2 / (double)(n - 1)) : 0;
            set_figure(&sp->tl[k], j, *mean);
            set_figure(&sp->tl_lo[k], j, *mean - half);
            set_figure(&sp->tl_hi[k], j, *mean + half);
        }
    }
}

/* Policy p's means and intervals over the seeds so far. */
static void recompute(topo_sim_summary *s, size_t p)
{
    summary_policy *sp = &s->pol[p];
    double x[TOPO_MAX_SIM_SEEDS];
    for (int view = 0; view < SIM_VIEWS; view++) {
        for (size_t slot = 0; slot < SIM_NVALUES; slot++) {
            double mean, half;
            for (size_t i = 0; i < s->nseeds; i++)
                x[i] = seed_values(s, i, p, (sim_view)view)[slot];
            (void)topo_sim_mean_ci95(&mean, &half, x, s->nseeds);
            sp->mean[view][slot] = mean;
            sp->lo[view][slot] = mean - half;
            sp->hi[view][slot] = mean + half;
        }
    }
}

/* This seed's same-jobs view (topo_sim_common) into its vectors. */
static int add_common(topo_sim_summary *s, const topo_sim_result *const *r, size_t n,
                      topo_err *err)
{
    topo_sim_metrics m[TOPO_SIM_POLICIES];
    size_t jobs = 0;
    double half;
    int rc;
    if ((rc = topo_sim_common(m, &jobs, r, n, err)) < 0)
        return rc;
    for (size_t p = 0; p < n; p++)
        sim_field_values(seed_values(s, s->nseeds, p, SIM_VIEW_COMMON), &m[p]);
    s->common_jobs[s->nseeds] = (double)jobs;
    (void)topo_sim_mean_ci95(&s->jobs_mean, &half, s->common_jobs, s->nseeds + 1);
    s->jobs_lo = s->jobs_mean - half;
    s->jobs_hi = s->jobs_mean + half;
    return 0;
}

int topo_sim_summary_add(topo_sim_summary *s, uint64_t seed, const topo_sim_result *const *r,
                         const topo_sim_result *const *stretched, size_t n, topo_err *err)
{
    int rc;
    if ((rc = check_runs(s, seed, r, stretched, n, err)) < 0)
        return rc;
    if (s->nseeds == 0 && (rc = first_seed(s, r, n, err)) < 0) {
        forget_policies(s);
        return rc;
    }
    if ((rc = add_common(s, r, n, err)) < 0) {
        if (s->nseeds == 0)
            forget_policies(s);
        return rc;
    }
    s->stretched = stretched != NULL;
    for (size_t p = 0; p < n; p++) {
        sim_field_values(seed_values(s, s->nseeds, p, SIM_VIEW_OWN),
                         topo_sim_result_metrics(r[p]));
        if (stretched != NULL)
            sim_field_values(seed_values(s, s->nseeds, p, SIM_VIEW_STRETCHED),
                             topo_sim_result_metrics(stretched[p]));
    }
    s->seeds[s->nseeds++] = seed;
    for (size_t p = 0; p < n; p++) {
        add_timeline(&s->pol[p], r[p], s->nseeds);
        recompute(s, p);
    }
    return 0;
}

size_t topo_sim_summary_seeds(const topo_sim_summary *s, const uint64_t **out)
{
    *out = s->seeds;
    return s->nseeds;
}

size_t topo_sim_summary_policy_count(const topo_sim_summary *s)
{
    return s->npol;
}

const char *topo_sim_summary_policy(const topo_sim_summary *s, size_t policy)
{
    return policy < s->npol ? s->pol[policy].name : NULL;
}

int topo_sim_summary_metric(const topo_sim_summary *s, size_t policy, const char *name,
                            double *mean, double *lo, double *hi)
{
    sim_view view = SIM_VIEW_OWN;
    if (strncmp(name, "stretched.", 10) == 0)
        view = SIM_VIEW_STRETCHED, name += 10;
    else if (strncmp(name, "common.", 7) == 0)
        view = SIM_VIEW_COMMON, name += 7;
    int slot = policy < s->npol && s->nseeds > 0
                   ? sim_field_find(name, s->levels, s->nlevels)
                   : -1;
    /* Only what -o json shows: the stretched run's keys, if it was run,
     * and the same-jobs view's job-level ones. */
    if (slot >= 0 && slot < SIM_F_COUNT && view == SIM_VIEW_COMMON && sim_fields[slot].window)
        slot = -1;
    if (slot >= 0 && view == SIM_VIEW_STRETCHED) {
        int shown = s->stretched && slot < SIM_F_COUNT && sim_fields[slot].group == NULL;
        for (size_t k = 0; shown && k < sim_nstretched_rows; k++)
            if (sim_stretched_rows[k].field == slot)
                shown = 2;
        slot = shown == 2 ? slot : -1;
    }
    if (slot < 0)
        return TOPO_ENOTFOUND;
    *mean = s->pol[policy].mean[view][slot];
    *lo = s->pol[policy].lo[view][slot];
    *hi = s->pol[policy].hi[view][slot];
    return s->nseeds >= 2;
}

size_t topo_sim_summary_timeline(const topo_sim_summary *s, size_t policy,
                                 const topo_sim_sample **mean, const topo_sim_sample **lo,
                                 const topo_sim_sample **hi)
{
    const summary_policy *sp = policy < s->npol ? &s->pol[policy] : NULL;
    *mean = sp != NULL ? sp->tl : NULL;
    *lo = sp != NULL && s->nseeds >= 2 ? sp->tl_lo : NULL;
    *hi = sp != NULL && s->nseeds >= 2 ? sp->tl_hi : NULL;
    return sp != NULL ? sp->ntl : 0;
}

const double *sim_summary_values(const topo_sim_summary *s, size_t p, sim_view view,
                                 const double **lo, const double **hi)
{
    int absent = view == SIM_VIEW_STRETCHED && !s->stretched;
    *lo = s->nseeds >= 2 && !absent ? s->pol[p].lo[view] : NULL;
    *hi = s->nseeds >= 2 && !absent ? s->pol[p].hi[view] : NULL;
    return absent ? NULL : s->pol[p].mean[view];
}

double sim_summary_common_jobs(const topo_sim_summary *s, double *lo, double *hi)
{
    *lo = s->jobs_lo;
    *hi = s->jobs_hi;
    return s->jobs_mean;
}

size_t sim_summary_levels(const topo_sim_summary *s, const char *const **levels)
{
    *levels = s->levels;
    return s->nlevels;
}

void sim_summary_window(const topo_sim_summary *s, double *start, double *end)
{
    *start = s->window_start;
    *end = s->window_end;
}
