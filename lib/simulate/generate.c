/* The seeded job generator (topo/simulate.h, docs/simulate.md "Generated
 * jobs"): sizes and runtimes drawn jointly from a preset's size classes,
 * fitted to a published trace, by stratified sampling so that any number of
 * jobs reproduces each class's job shares, and each class's runtimes scaled
 * so that its GPU-time share holds for every seed; arrivals of a Poisson
 * process with a daily cycle over the span that makes the offered load the
 * target; topology requests for multi-node jobs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "sim_internal.h"
#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/rand.h"

#define DAY 86400.0
#define NO_CLUSTER_GPUS 1000 /* the load's reference without a cluster */

/* Two files of the AcmeTrace repository (https://github.com/InternLM/AcmeTrace,
 * commit 6d6ac9c, CC BY 4.0), from Hu et al., "Characterization of Large
 * Language Model Development in the Datacenter", NSDI '24, which treats its
 * own Kalos trace and the earlier Philly and Helios traces alike (GPU jobs of
 * every final state):
 * - data/cluster_summary.csv: GPUs (avg_gpu_num, med_gpu_num, max_gpu) and
 *   runtimes (avg_run_time_gpu, med_run_time_gpu, max_run_time_gpu);
 * - figure/cdf_job_gpunum.pdf, the paper's CDFs of jobs (a) and GPU time (b)
 *   by GPUs per job: the size classes' shares below, read from the figure's
 *   vector paths at 1, 2, 4, ... GPUs (to +-0.05 percentage points, the
 *   resolution matplotlib's path simplification leaves; docs). */

/* Microsoft Philly (Jeon et al., ATC '19). The figure draws one straight
 * segment from 32 to 1,024 GPUs and the trace's largest job has 128: the
 * 0.021 % of jobs above 32 GPUs are put on 128. */
static const topo_sim_size_class philly_classes[] = {
    {1, 1, 0.82421, 0.16425},    {2, 2, 0.02063, 0.02970},   {3, 4, 0.07563, 0.18769},
    {5, 8, 0.06859, 0.49862},    {9, 16, 0.00899, 0.09168},  {17, 32, 0.00174, 0.02800},
    {33, 128, 0.00021, 0.00004},
};

/* SenseTime Helios, all four clusters (Hu et al., SC '21). The figure draws
 * one straight segment from 200 to 1,024 GPUs: the 0.036 % of jobs between
 * 257 and 1,024 are put on 512; its x axis ends at "1024+", the rest (the
 * trace's largest job has 2,048 GPUs) on 2,048. */
static const topo_sim_size_class helios_classes[] = {
    {1, 1, 0.72189, 0.05441},       {2, 2, 0.02557, 0.01721},       {3, 4, 0.05725, 0.04976},
    {5, 8, 0.14219, 0.29207},       {9, 16, 0.03031, 0.20156},      {17, 32, 0.01629, 0.25132},
    {33, 64, 0.00383, 0.07747},     {65, 128, 0.00160, 0.03098},    {129, 256, 0.00066, 0.02454},
    {257, 1024, 0.00036, 0.00019},  {1025, 2048, 0.00005, 0.00050},
};

/* Shanghai AI Lab Acme, Kalos cluster (Hu et al., NSDI '24): no jobs of 3 or
 * 4 GPUs; the 2-GPU jobs' GPU time (0.001 %) is below the figure's
 * resolution. */
static const topo_sim_size_class acme_classes[] = {
    {1, 1, 0.86281, 0.00157},       {2, 2, 0.02075, 0.00001},       {5, 8, 0.05561, 0.00465},
    {9, 16, 0.00342, 0.00008},      {17, 32, 0.00392, 0.01327},     {33, 64, 0.00653, 0.01300},
    {65, 128, 0.00377, 0.00488},    {129, 256, 0.01216, 0.21137},   {257, 512, 0.01176, 0.25562},
    {513, 1024, 0.01928, 0.49554},
};

#define CLASSES(a) a, sizeof a / sizeof a[0]

static const topo_sim_preset presets[] = {
    {"philly", "Microsoft Philly (Jeon et al., ATC '19)", 1.928, 1, 128, 18006.055, 874, 4240676,
     CLASSES(philly_classes)},
    {"helios", "SenseTime Helios (Hu et al., SC '21)", 3.716, 1, 2048, 6651.681, 206, 4320009,
     CLASSES(helios_classes)},
    {"acme", "Shanghai AI Lab Acme, Kalos cluster (Hu et al., NSDI '24)", 26.77, 1, 1024,
     1259.689, 124, 625740, CLASSES(acme_classes)},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

const topo_sim_preset *topo_sim_preset_find(const char *name)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (name != NULL && strcmp(name, presets[i].name) == 0)
            return &presets[i];
    return NULL;
}

const char *topo_sim_preset_names(void)
{
    return "philly, helios, acme";
}

/* The largest job a cluster of `capacity` GPUs gets: half of it. The
 * published traces' largest jobs took a third to a half of their clusters,
 * and a job as large as the whole cluster waits for it to drain completely. */
static uint64_t size_cap(uint64_t capacity)
{
    return capacity / 2 > 0 ? capacity / 2 : 1;
}

double topo_sim_preset_cut(const topo_sim_preset *p, uint64_t capacity, double *jobs_out)
{
    double jobs = 0, all_jobs = 0, time = 0, all_time = 0;
    for (size_t c = 0; c < p->nclasses; c++) {
        int out = capacity > 0 && c > 0 && p->classes[c].gpus > size_cap(capacity);
        all_jobs += p->classes[c].job_share;
        all_time += p->classes[c].gpu_time_share;
        jobs += out ? p->classes[c].job_share : 0;
        time += out ? p->classes[c].gpu_time_share : 0;
    }
    if (jobs_out != NULL)
        *jobs_out = jobs / all_jobs;
    return time / all_time;
}

/* Cumulative arrival intensity of rate 1 - A cos(2 pi t / day) (lowest at
 * midnight, highest at noon). */
static double cum_rate(double t, double amp)
{
    return t - amp * DAY / (2 * 3.14159265358979323846) * sin(2 * 3.14159265358979323846 * t / DAY);
}

/* The t in [0, span] with cum_rate(t) = y (it is increasing). */
static double inverse_rate(double y, double amp, double span)
{
    double lo = 0, hi = span;
    for (int i = 0; i < 64 && hi - lo > 1e-4; i++) {
        double mid = (lo + hi) / 2;
        if (cum_rate(mid, amp) < y)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* Strata 0..n-1 in a random order: job i draws its quantile from stratum
 * perm[i]. */
static uint32_t *strata(uint64_t *rng, size_t n)
{
    uint32_t *perm = malloc(n * sizeof(*perm));
    if (perm == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    topo_rand_shuffle(rng, perm, n, sizeof(*perm));
    return perm;
}

typedef struct gen_cfg {
    const topo_sim_preset *preset;
    uint32_t jobs;
    double load, amp, req_share, pref_share, slice_share;
    uint64_t capacity;
    uint32_t gpn, max_node;
    const char *level;
} gen_cfg;

static int configure(gen_cfg *g, const topo_sim_gen_opts *o, topo_err *err)
{
    memset(g, 0, sizeof(*g));
    g->preset = topo_sim_preset_find(o->preset ? o->preset : "philly");
    if (g->preset == NULL)
        return topo_err_set(err, TOPO_EINVALID, "--preset: expected one of %s, got \"%s\"",
                            topo_sim_preset_names(), o->preset);
    if (o->jobs < 1 || o->jobs > TOPO_MAX_SIM_JOBS)
        return topo_err_set(err, TOPO_EINVALID, "--jobs: must be between 1 and %u",
                            TOPO_MAX_SIM_JOBS);
    g->jobs = o->jobs;
    g->load = o->load > 0 ? o->load : TOPO_SIM_LOAD_DEFAULT;
    g->amp = o->daily_amplitude < 0 ? 0 : o->daily_amplitude > 0 ? o->daily_amplitude
                                                                   : TOPO_SIM_DAILY_AMPLITUDE_DEFAULT;
    if (!(g->load <= 100) || !(g->amp < 1))
        return topo_err_set(err, TOPO_EINVALID, "%s",
                            !(g->load <= 100) ? "--load: at most 100"
                                              : "--daily-amplitude: must be below 1");
    g->req_share = o->required_share < 0 ? 0 : o->required_share > 0 ? o->required_share
                                                                     : TOPO_SIM_REQUIRED_SHARE_DEFAULT;
    g->pref_share = o->preferred_share < 0 ? 0 : o->preferred_share > 0
                                                     ? o->preferred_share
                                                     : TOPO_SIM_PREFERRED_SHARE_DEFAULT;
    if (g->req_share + g->pref_share > 1 + 1e-9)
        return topo_err_set(err, TOPO_EINVALID,
                            "--required-share and --preferred-share add up to more than 1");
    g->slice_share = o->slice_share;
    if (g->slice_share > 0 && (o->slice_level == NULL || o->slice_size < 1))
        return topo_err_set(err, TOPO_EINVALID, "--slice-share needs --slice LEVEL:SIZE");
    g->capacity = o->capacity;
    g->gpn = o->gpus_per_node ? o->gpus_per_node : 8;
    g->max_node = o->max_node ? o->max_node : g->gpn;
    g->level = o->request_level ? o->request_level : "auto";
    char why[256];
    if (!topo_label_key_valid(g->level, why, sizeof why))
        return topo_err_set(err, TOPO_EINVALID, "--request-level: %s", why);
    return 0;
}

/* The request of one multi-node job: kind 0 required, 1 preferred, 2
 * unconstrained; slices when asked and the pod count allows. */
static int request_for(topo_sim_trace *t, const gen_cfg *g, const topo_sim_gen_opts *o, int kind,
                       int slices, int32_t *out, topo_err *err)
{
    topo_sim_request r;
    char text[1024], ann[1024];
    size_t n = 0;

    memset(&r, 0, sizeof(r));
    if (kind == 0) {
        r.spec.required = g->level;
        n += (size_t)snprintf(ann + n, sizeof ann - n, "%s=%s", TOPO_KUEUE_REQUIRED_TOPOLOGY,
                              g->level);
    } else if (kind == 1) {
        r.spec.preferred = g->level;
        n += (size_t)snprintf(ann + n, sizeof ann - n, "%s=%s", TOPO_KUEUE_PREFERRED_TOPOLOGY,
                              g->level);
    } else {
        r.spec.unconstrained = 1;
        n += (size_t)snprintf(ann + n, sizeof ann - n, "%s=true",
                              TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY);
    }
    if (slices) {
        r.spec.slice_required = o->slice_level;
        r.spec.slice_size = o->slice_size;
        snprintf(ann + n, sizeof ann - n, ";%s=%s;%s=%d", TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY,
                 o->slice_level, TOPO_KUEUE_SLICE_SIZE, (int)o->slice_size);
    }
    r.auto_level = kind < 2 && strcmp(g->level, "auto") == 0;
    /* The same canonical form as a trace file's (topo_kueue_request_text). */
    topo_pool *scratch = topo_pool_create();
    const char *canon = scratch != NULL ? topo_kueue_request_text(&r.spec, scratch) : NULL;
    if (canon == NULL) {
        topo_pool_free(scratch);
        return topo_err_nomem(err, "generator");
    }
    snprintf(text, sizeof text, "%s", canon);
    topo_pool_free(scratch);
    r.text = text;
    r.annotations = ann;
    return sim_trace_intern(t, &r, out, err);
}

/* Scales class c's runtimes by f[c] so that the class's total is exactly
 * target[c], with no runtime above the maximum: the runtimes the maximum
 * clips stay at it and the others take up the rest (they rise to meet it as
 * the clipped set grows, so a few passes settle it). */
static void scale_to_targets(const double *raw, const uint8_t *cls, size_t n, size_t nclasses,
                             const double *target, double max, double *f)
{
    for (int pass = 0; pass < 32; pass++) {
        double free_sum[SIM_MAX_CLASSES] = {0}, clipped[SIM_MAX_CLASSES] = {0};
        for (size_t i = 0; i < n; i++) {
            if (raw[i] * f[cls[i]] >= max)
                clipped[cls[i]] += max;
            else
                free_sum[cls[i]] += raw[i];
        }
        int moved = 0;
        for (size_t c = 0; c < nclasses; c++) {
            if (!(free_sum[c] > 0))
                continue;
            double nf = (target[c] - clipped[c]) / free_sum[c];
            moved |= nf != f[c];
            f[c] = nf;
        }
        if (!moved)
            return;
    }
}

/* Sizes and runtimes jointly: job i's class from stratum ps[i] of the job
 * shares, its runtime from the class's own lognormal, stratified within the
 * class (the c-th job of a class of n_c draws from stratum perm_c of n_c).
 * The top stratum takes its conditional mean instead of a draw: a draw there
 * reaches into the tail, where one job of a small class could hold a fifth
 * of all GPU time. Then each class's runtimes are scaled so that its GPU
 * time is exactly n_c times its size times its fitted mean, whatever the
 * seed: its share of the total (docs/simulate.md "Presets"). */
static int draw_jobs(topo_sim_trace *t, const gen_cfg *g, uint64_t seed, double *work,
                     topo_err *err)
{
    sim_classes cl;
    uint64_t r1 = seed ^ 0x5349455AULL, r2 = seed ^ 0x52554E54ULL, r3 = seed ^ 0x4A495454ULL;
    uint32_t *ps = NULL, *pr = NULL;
    uint8_t *cls = NULL;
    double *raw = NULL, sum[SIM_MAX_CLASSES] = {0}, target[SIM_MAX_CLASSES] = {0};
    double f[SIM_MAX_CLASSES] = {0}, top[SIM_MAX_CLASSES] = {0};
    size_t count[SIM_MAX_CLASSES] = {0}, at[SIM_MAX_CLASSES] = {0};
    int rc = 0;

    const topo_sim_preset *p = g->preset;
    if (sim_classes_fit(&cl, p) < 0)
        return topo_err_set(err, TOPO_EGENERIC, "preset %s: no distribution fits", p->name);
    if (g->capacity > 0)
        sim_classes_cap(&cl, size_cap(g->capacity));
    cls = malloc(g->jobs);
    raw = malloc(g->jobs * sizeof(*raw));
    if (cls == NULL || raw == NULL || (ps = strata(&r1, g->jobs)) == NULL ||
        (pr = malloc(g->jobs * sizeof(*pr))) == NULL) {
        rc = topo_err_nomem(err, "generator");
        goto cleanup;
    }
    for (uint32_t i = 0; i < g->jobs; i++) {
        double us = ((double)ps[i] + topo_rand_unit(&r3)) / g->jobs;
        cls[i] = (uint8_t)sim_classes_pick(&cl, us);
        count[cls[i]]++;
    }
    /* pr holds each class's strata in a random order, class after class. */
    for (size_t c = 0, off = 0; c < cl.n; off += count[c], c++) {
        at[c] = off;
        for (size_t k = 0; k < count[c]; k++)
            pr[off + k] = (uint32_t)k;
        topo_rand_shuffle(&r2, pr + off, count[c], sizeof(*pr));
        top[c] = count[c] > 0 ? sim_classes_top_mean(&cl, c, count[c]) : 0;
        target[c] = (double)count[c] * cl.mean[c];
    }
    for (uint32_t i = 0; i < g->jobs; i++) {
        size_t c = cls[i], k = pr[at[c]++];
        double u = topo_rand_unit(&r3); /* drawn for every job: the stream stays aligned */
        double q = ((double)k + u) / (double)count[c];
        raw[i] = k + 1 == count[c] ? top[c] : sim_classes_runtime(&cl, c, q);
        sum[c] += raw[i];
    }
    for (size_t c = 0; c < cl.n; c++)
        f[c] = sum[c] > 0 ? target[c] / sum[c] : 1;
    scale_to_targets(raw, cls, g->jobs, cl.n, target, cl.max, f);
    *work = 0;
    for (uint32_t i = 0; i < g->jobs; i++) {
        char id[32];
        topo_sim_job j;
        memset(&j, 0, sizeof(j));
        uint32_t total = cl.gpus[cls[i]];
        if (total <= g->max_node) {
            j.pods = 1;
            j.gpus = (int32_t)total;
        } else {
            j.pods = (int32_t)((total + g->gpn - 1) / g->gpn);
            j.gpus = (int32_t)g->gpn;
        }
        /* Whole seconds, as the traces record them. */
        j.duration = floor(fmin(raw[i] * f[cls[i]], cl.max) + 0.5);
        if (j.duration < 1)
            j.duration = 1;
        j.request = -1;
        j.seq = i;
        snprintf(id, sizeof id, "job-%06u", (unsigned)(i + 1));
        if ((j.id = topo_pool_strdup(t->pool, id)) == NULL) {
            rc = topo_err_nomem(err, "generator");
            goto cleanup;
        }
        *work += (double)j.pods * j.gpus * j.duration;
        if ((rc = sim_trace_push(t, &j, err)) < 0)
            goto cleanup;
    }

cleanup:
    free(cls);
    free(raw);
    free(ps);
    free(pr);
    return rc;
}

/* Arrival times: n points of a Poisson process with rate 1 - A cos(2 pi t /
 * day), given that n arrive in [0, span]: sorted uniforms (normalised
 * exponential spacings) mapped through the inverse cumulative rate. */
static void arrivals(topo_sim_trace *t, const gen_cfg *g, uint64_t seed, double span)
{
    uint64_t rng = seed ^ 0x41525249ULL;
    double total = 0, acc = 0, y_end = cum_rate(span, g->amp);
    for (size_t i = 0; i <= t->njobs; i++)
        total -= log(1 - topo_rand_unit(&rng));
    rng = seed ^ 0x41525249ULL;
    for (size_t i = 0; i < t->njobs; i++) {
        acc -= log(1 - topo_rand_unit(&rng));
        double at = inverse_rate(acc / total * y_end, g->amp, span);
        t->jobs[i].arrive = floor(at * 1000 + 0.5) / 1000; /* milliseconds */
        if (i > 0 && t->jobs[i].arrive < t->jobs[i - 1].arrive)
            t->jobs[i].arrive = t->jobs[i - 1].arrive;
    }
}

static int requests(topo_sim_trace *t, const gen_cfg *g, const topo_sim_gen_opts *o,
                    uint64_t seed, topo_err *err)
{
    uint64_t rng = seed ^ 0x544F504FULL;
    int rc;
    for (size_t i = 0; i < t->njobs; i++) {
        topo_sim_job *j = &t->jobs[i];
        /* Draw for every job, so that one job's request does not depend on
         * the others' sizes. */
        double u = topo_rand_unit(&rng), us = topo_rand_unit(&rng);
        if ((uint64_t)j->pods * (uint64_t)j->gpus <= g->max_node)
            continue;
        int kind = u < g->req_share ? 0 : u < g->req_share + g->pref_share ? 1 : 2;
        int slices = us < g->slice_share && j->pods % o->slice_size == 0 &&
                     j->pods > o->slice_size;
        if ((rc = request_for(t, g, o, kind, slices, &j->request, err)) < 0)
            return rc;
    }
    return 0;
}

int topo_sim_trace_generate(topo_sim_trace *t, const topo_sim_gen_opts *o, topo_err *err)
{
    gen_cfg g;
    double work = 0;
    int rc;

    sim_trace_reset(t);
    if ((rc = configure(&g, o, err)) < 0 || (rc = draw_jobs(t, &g, o->seed, &work, err)) < 0)
        goto fail;
    double cap = g.capacity > 0 ? (double)g.capacity : NO_CLUSTER_GPUS;
    double span = work / (g.load * cap);
    arrivals(t, &g, o->seed, span);
    if ((rc = requests(t, &g, o, o->seed, err)) < 0)
        goto fail;
    return 0;

fail:
    sim_trace_reset(t);
    return rc;
}
