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
#include "summary_internal.h"
#include "topo/limits.h"
#include "topo/pool.h"

/* The timeline's figures, in topo_sim_sample's order after t. */
#define FIGURES 4

typedef struct summary_policy {
    const char *name;
    double mean[SIM_NVALUES], lo[SIM_NVALUES], hi[SIM_NVALUES];
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
    double *values; /* TOPO_MAX_SIM_SEEDS x TOPO_SIM_POLICIES x SIM_NVALUES, by seed */
};

static double *seed_values(const topo_sim_summary *s, size_t seed, size_t p)
{
    return s->values + (seed * TOPO_SIM_POLICIES + p) * SIM_NVALUES;
}

int topo_sim_summary_create(topo_sim_summary **out, topo_err *err)
{
    topo_sim_summary *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (s == NULL || (s->pool = topo_pool_create()) == NULL ||
        (s->values = malloc((size_t)TOPO_MAX_SIM_SEEDS * TOPO_SIM_POLICIES *
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
                      size_t n, topo_err *err)
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
    return 0;
}

/* The first seed: names, levels and the timeline's storage. */
static int first_seed(topo_sim_summary *s, const topo_sim_result *const *r, size_t n,
                      topo_err *err)
{
    const topo_sim_metrics *m0 = topo_sim_result_metrics(r[0]);
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
    for (size_t slot = 0; slot < SIM_NVALUES; slot++) {
        double mean, half;
        for (size_t i = 0; i < s->nseeds; i++)
            x[i] = seed_values(s, i, p)[slot];
        (void)topo_sim_mean_ci95(&mean, &half, x, s->nseeds);
        sp->mean[slot] = mean;
        sp->lo[slot] = mean - half;
        sp->hi[slot] = mean + half;
    }
}

int topo_sim_summary_add(topo_sim_summary *s, uint64_t seed, const topo_sim_result *const *r,
                         size_t n, topo_err *err)
{
    int rc;
    if ((rc = check_runs(s, seed, r, n, err)) < 0)
        return rc;
    if (s->nseeds == 0 && (rc = first_seed(s, r, n, err)) < 0) {
        forget_policies(s);
        return rc;
    }
    for (size_t p = 0; p < n; p++)
        sim_field_values(seed_values(s, s->nseeds, p), topo_sim_result_metrics(r[p]));
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
    int slot = policy < s->npol && s->nseeds > 0
                   ? sim_field_find(name, s->levels, s->nlevels)
                   : -1;
    if (slot < 0)
        return TOPO_ENOTFOUND;
    *mean = s->pol[policy].mean[slot];
    *lo = s->pol[policy].lo[slot];
    *hi = s->pol[policy].hi[slot];
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

const double *sim_summary_values(const topo_sim_summary *s, size_t p, const double **lo,
                                 const double **hi)
{
    *lo = s->nseeds >= 2 ? s->pol[p].lo : NULL;
    *hi = s->nseeds >= 2 ? s->pol[p].hi : NULL;
    return s->pol[p].mean;
}

size_t sim_summary_levels(const topo_sim_summary *s, const char *const **levels)
{
    *levels = s->levels;
    return s->nlevels;
}
