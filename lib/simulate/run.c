/* One run of one policy (topo/simulate.h): its state, the shapes jobs are
 * grouped into, the bookkeeping of free GPUs every policy goes through, and
 * the result. The event loop is loop.c, the metrics metrics.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/array.h"
#include "topo/kueue_names.h"

#define SIM_FIT_MAX 64 /* fit counters for pods of up to this many GPUs */

struct topo_sim_result {
    topo_sim_metrics m;
    const char *levels[TOPO_MAX_LEVELS];
    topo_sim_sample *tl;
    size_t ntl;
    sim_jobs jobs; /* what the job-level metrics need, per job */
    size_t njobs;
    size_t *pl_off; /* job j's slots: pl[pl_off[j] .. pl_off[j + 1]) */
    topo_sim_slot *pl;
    topo_pool *pool;
};

static const char *const policy_names[TOPO_SIM_POLICIES] = {
    "topo", "kube-default", "first-fit", "best-fit", "random", "first-fit-fabric", "kube-binpack",
    "slurm-tree", "mixed", "mixed-pack",
};

const char *topo_sim_policy_name(topo_sim_policy p)
{
    return (unsigned)p < TOPO_SIM_POLICIES ? policy_names[p] : "?";
}

int topo_sim_policy_parse(const char *name)
{
    for (int i = 0; i < TOPO_SIM_POLICIES; i++)
        if (name != NULL && strcmp(name, policy_names[i]) == 0)
            return i;
    return -1;
}

/* ---- free GPUs ---- */

static void node_set(sim_run *r, int32_t node, int32_t now)
{
    const topo_sim_cluster *c = r->c;
    int32_t was = r->free[node], cap = c->cap[node];
    int32_t k = (int32_t)r->o.frag_pod < cap ? (int32_t)r->o.frag_pod : cap;
    int32_t gmax = c->max_node < SIM_FIT_MAX ? (int32_t)c->max_node : SIM_FIT_MAX;

    for (int32_t g = 1; g <= gmax; g++)
        r->fit[g] += now / g - was / g;
    r->frag_free += (uint64_t)(now > 0 && now < cap ? now : 0);
    r->frag_free -= (uint64_t)(was > 0 && was < cap ? was : 0);
    r->fragpod_free += (uint64_t)(now < k ? now : 0);
    r->fragpod_free -= (uint64_t)(was < k ? was : 0);
    r->free_total += (uint64_t)now;
    r->free_total -= (uint64_t)was;
    r->free[node] = now;
}

void sim_take(sim_run *r, int32_t node, int32_t amount)
{
    node_set(r, node, r->free[node] - amount);
}

void sim_give(sim_run *r, int32_t node, int32_t amount)
{
    node_set(r, node, r->free[node] + amount);
}

int sim_slot_add(sim_run *r, int32_t node, int32_t count, topo_err *err)
{
    int32_t i = r->slot_of[node];
    if (i >= 0) {
        r->slots[i].count += count;
        return 0;
    }
    if (topo_array_reserve((void **)&r->slots, &r->capslots, (size_t)r->nslots + 1,
                           sizeof(*r->slots)) != 0)
        return topo_err_nomem(err, "simulation");
    r->slot_of[node] = r->nslots;
    r->slots[r->nslots].node = node;
    r->slots[r->nslots].count = count;
    r->nslots++;
    return 0;
}

static void slots_forget(sim_run *r)
{
    for (int32_t i = 0; i < r->nslots; i++)
        r->slot_of[r->slots[i].node] = -1;
    r->nslots = 0;
}

void sim_slots_undo(sim_run *r, int32_t gpus)
{
    for (int32_t i = 0; i < r->nslots; i++)
        sim_give(r, r->slots[i].node, r->slots[i].count * gpus);
    slots_forget(r);
}

int sim_fits(const sim_run *r, int32_t pods, int32_t gpus)
{
    if (gpus <= SIM_FIT_MAX && (uint32_t)gpus <= r->c->max_node)
        return r->fit[gpus] >= pods;
    return (uint64_t)gpus <= r->c->max_node && r->free_total >= (uint64_t)pods * (uint64_t)gpus;
}

/* Hands the placement being made to job j (its slots copied) and forgets
 * it. */
int sim_slots_keep(sim_run *r, size_t j, topo_err *err)
{
    sim_jobstate *s = &r->js[j];
    s->slots = malloc((size_t)r->nslots * sizeof(*s->slots));
    if (s->slots == NULL)
        return topo_err_nomem(err, "simulation");
    memcpy(s->slots, r->slots, (size_t)r->nslots * sizeof(*s->slots));
    s->nslots = r->nslots;
    slots_forget(r);
    return 0;
}

/* ---- shapes ---- */

static int level_known(const topo_sim_cluster *c, const char *level)
{
    for (size_t l = 0; l < c->nlevels; l++)
        if (strcmp(c->levels[l], level) == 0)
            return 1;
    return 0;
}

/* Every level a request names is one of the cluster's. */
static int check_levels(const sim_run *r, const topo_podset_spec *s, const topo_sim_job *j,
                        topo_err *err)
{
    const char *names[3 + TOPO_MAX_SLICE_LAYERS] = {s->required, s->preferred,
                                                    s->slice_required};
    size_t n = 3;
    for (size_t i = 0; i < s->nlayers && i < TOPO_MAX_SLICE_LAYERS; i++)
        names[n++] = s->layers[i].level;
    for (size_t i = 0; i < n; i++)
        if (names[i] != NULL && !level_known(r->c, names[i]))
            return topo_err_set(err, TOPO_EINVALID,
                                "job %s: the level %s is not one of the cluster's levels", j->id,
                                names[i]);
    return 0;
}

/* The shape of that key, made from spec when new. */
static int shape_get(sim_run *r, const char *key, int32_t pods, int32_t gpus,
                     const topo_podset_spec *spec, int32_t tight, int32_t *out, topo_err *err)
{
    int32_t id = topo_strmap_get(r->shape_by_key, key);
    if (id >= 0) {
        *out = id;
        return 0;
    }
    char *k = topo_pool_strdup(r->pool, key);
    if (k == NULL || topo_array_reserve((void **)&r->shapes, &r->capshapes, r->nshapes + 1,
                                        sizeof(*r->shapes)) != 0)
        return topo_err_nomem(err, "simulation");
    sim_shape *s = &r->shapes[r->nshapes];
    memset(s, 0, sizeof(*s));
    s->pods = pods;
    s->gpus = gpus;
    if (spec != NULL)
        s->spec = *spec;
    else
        s->spec.implied = 1;
    s->engine = spec != NULL;
    s->relaxed = -1;
    s->tight_empty = tight;
    id = (int32_t)r->nshapes++;
    if (topo_strmap_put(r->shape_by_key, k, id) != 0)
        return topo_err_nomem(err, "simulation");
    *out = id;
    return 0;
}

/* The tightest level of the empty cluster for a job of that size, from a
 * cache per size. */
static int tight_empty(sim_run *r, topo_strmap *cache, int32_t pods, int32_t gpus,
                       int32_t *out, topo_err *err)
{
    char key[48];
    snprintf(key, sizeof key, "%d/%d", (int)pods, (int)gpus);
    int32_t v = topo_strmap_get(cache, key);
    if (v >= 0) {
        *out = v - 2;
        return 0;
    }
    *out = sim_tightest(r->c, r->c->free0, pods, gpus);
    char *k = topo_pool_strdup(r->pool, key);
    if (k == NULL || topo_strmap_put(cache, k, *out + 2) != 0)
        return topo_err_nomem(err, "simulation");
    return 0;
}

/* The effective request of job j for topo: "auto" resolved, and, when
 * preferred levels are held, the held (required) variant as *held. */
static int topo_shapes(sim_run *r, const topo_sim_job *j, int32_t tight, int32_t *out,
                       int *held, topo_err *err)
{
    const topo_sim_request *q = &r->t->requests[j->request];
    topo_podset_spec spec = q->spec;
    char key[TOPO_MAX_SIM_LINE + 64];
    int rc;

    if (q->auto_level) {
        /* The tightest level that could hold it; none but the cluster: a
         * required request cannot be met, it becomes unconstrained. */
        const char *lvl = tight >= 0 ? r->c->levels[tight] : NULL;
        if (spec.required != NULL) {
            spec.required = lvl;
            spec.unconstrained = lvl == NULL;
        } else {
            spec.preferred = lvl != NULL ? lvl : r->c->levels[0];
        }
    }
    if ((rc = check_levels(r, &spec, j, err)) < 0)
        return rc;
    snprintf(key, sizeof key, "%d/%d/%s/%s/%s", (int)j->pods, (int)j->gpus, q->text,
             spec.required ? spec.required : "", spec.preferred ? spec.preferred : "");
    if ((rc = shape_get(r, key, j->pods, j->gpus, &spec, tight, out, err)) < 0)
        return rc;
    *held = 0;
    if (r->o.relax_after > 0 && spec.preferred != NULL) {
        int32_t relaxed = *out;
        spec.required = spec.preferred;
        spec.preferred = NULL;
        snprintf(key, sizeof key, "%d/%d/%s/%s/held", (int)j->pods, (int)j->gpus, q->text,
                 spec.required);
        if ((rc = shape_get(r, key, j->pods, j->gpus, &spec, tight, out, err)) < 0)
            return rc;
        r->shapes[*out].relaxed = relaxed;
        *held = 1;
    }
    return 0;
}

static int build_shapes(sim_run *r, topo_err *err)
{
    topo_strmap *cache = topo_strmap_create(64);
    int rc = 0;
    if (cache == NULL || (r->shape_by_key = topo_strmap_create(64)) == NULL) {
        rc = topo_err_nomem(err, "simulation");
        goto cleanup;
    }
    for (size_t i = 0; i < r->t->njobs; i++) {
        const topo_sim_job *j = &r->t->jobs[i];
        char key[48];
        int32_t tight, id;
        int held = 0;
        if ((rc = tight_empty(r, cache, j->pods, j->gpus, &tight, err)) < 0)
            goto cleanup;
        if (sim_engine_places_requests(r->policy) && j->request >= 0) {
            rc = topo_shapes(r, j, tight, &id, &held, err);
        } else {
            snprintf(key, sizeof key, "%d/%d", (int)j->pods, (int)j->gpus);
            rc = shape_get(r, key, j->pods, j->gpus, NULL, tight, &id, err);
        }
        if (rc < 0)
            goto cleanup;
        r->js[i].shape = id;
        r->js[i].held = (uint8_t)held;
    }

cleanup:
    topo_strmap_free(cache);
    return rc;
}

/* ---- the run ---- */

static void defaults(topo_sim_run_opts *o)
{
    static const double cost[TOPO_SIM_TIERS] = {
        TOPO_SIM_COST_NVLINK_DEFAULT, TOPO_SIM_COST_LEAF_DEFAULT, TOPO_SIM_COST_SPINE_DEFAULT,
        TOPO_SIM_COST_CLUSTER_DEFAULT};
    for (int i = 0; i < TOPO_SIM_TIERS; i++)
        if (!(o->cost[i] > 0))
            o->cost[i] = cost[i];
    if (!(o->comm_small > 0))
        o->comm_small = TOPO_SIM_COMM_SMALL_DEFAULT;
    if (!(o->comm_large > 0))
        o->comm_large = TOPO_SIM_COMM_LARGE_DEFAULT;
    if (o->frag_pod == 0)
        o->frag_pod = TOPO_SIM_FRAG_POD_DEFAULT;
}

static int run_init(sim_run *r, topo_err *err)
{
    const topo_sim_cluster *c = r->c;
    size_t n = c->nnodes, gmax = c->max_node < SIM_FIT_MAX ? c->max_node : SIM_FIT_MAX;

    if ((r->pool = topo_pool_create()) == NULL ||
        (r->free = malloc(n * sizeof(*r->free))) == NULL ||
        (r->slot_of = malloc(n * sizeof(*r->slot_of))) == NULL ||
        (r->fit = calloc(gmax + 1, sizeof(*r->fit))) == NULL ||
        (r->t->njobs > 0 && (r->js = calloc(r->t->njobs, sizeof(*r->js))) == NULL))
        return topo_err_nomem(err, "simulation");
    /* Start from nothing free, then set every node: the sums follow. */
    memset(r->free, 0, n * sizeof(*r->free));
    for (size_t i = 0; i < n; i++) {
        r->slot_of[i] = -1;
        node_set(r, (int32_t)i, c->free0[i]);
    }
    for (size_t i = 0; i < r->t->njobs; i++)
        r->js[i].start = -1;
    r->epoch = 1;
    r->rng = r->o.seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(r->policy + 1));
    r->ops = r->policy == TOPO_SIM_TOPO         ? &sim_policy_topo
             : r->policy == TOPO_SIM_SLURM_TREE ? &sim_policy_slurm
             : sim_engine_places_requests(r->policy) ? &sim_policy_mixed
                                                : &sim_policy_baseline;
    return 0;
}

static void run_dispose(sim_run *r)
{
    if (r->js != NULL) {
        for (size_t i = 0; i < r->t->njobs; i++) {
            sim_jobstate *s = &r->js[i];
            /* After an error: what is still placed leaves the snapshot. */
            if (s->status == SIM_RUNNING && r->ops != NULL)
                r->ops->release(r, s->slots, s->nslots, r->t->jobs[i].gpus, NULL);
            free(s->slots);
        }
    }
    if (r->ops != NULL && r->ops->dispose != NULL)
        r->ops->dispose(r);
    sim_acc_dispose(&r->acc);
    free(r->js);
    free(r->free);
    free(r->slot_of);
    free(r->fit);
    free(r->slots);
    free(r->shapes);
    topo_strmap_free(r->shape_by_key);
    topo_pool_free(r->pool);
}

static int make_result(topo_sim_result **out, sim_run *r, topo_err *err)
{
    topo_sim_result *res = calloc(1, sizeof(*res));
    int rc;
    if (res == NULL || (res->pool = topo_pool_create()) == NULL) {
        rc = topo_err_nomem(err, "simulation");
        goto fail;
    }
    if ((rc = sim_acc_finish(r, &res->m, err)) < 0)
        goto fail;
    res->m.policy = topo_sim_policy_name(r->policy);
    res->m.attempts = r->attempts;
    for (size_t l = 0; l < r->c->nlevels; l++)
        if ((res->levels[l] = topo_pool_strdup(res->pool, r->c->levels[l])) == NULL) {
            rc = topo_err_nomem(err, "simulation");
            goto fail;
        }
    size_t nslots = 0;
    for (size_t i = 0; i < r->t->njobs; i++)
        nslots += (size_t)r->js[i].nslots;
    if ((res->pl_off = malloc((r->t->njobs + 1) * sizeof(*res->pl_off))) == NULL ||
        (nslots > 0 && (res->pl = malloc(nslots * sizeof(*res->pl))) == NULL)) {
        rc = topo_err_nomem(err, "simulation");
        goto fail;
    }
    nslots = 0;
    for (size_t i = 0; i < r->t->njobs; i++) {
        res->pl_off[i] = nslots;
        for (int32_t k = 0; k < r->js[i].nslots; k++)
            res->pl[nslots++] = r->js[i].slots[k];
    }
    res->pl_off[r->t->njobs] = nslots;
    res->njobs = r->t->njobs;
    res->tl = r->acc.tl;
    res->ntl = r->acc.ntl;
    r->acc.tl = NULL;
    res->jobs = r->acc.jobs;
    memset(&r->acc.jobs, 0, sizeof(r->acc.jobs));
    *out = res;
    return 0;

fail:
    topo_sim_result_free(res);
    return rc;
}

/* The window must keep at least its end: the last arrival; and the
 * timeline must reach it (times printed with enough digits to tell a value
 * just past the span from the span). */
static int check_window(const topo_sim_trace *t, const topo_sim_run_opts *o, topo_err *err)
{
    double span = t->njobs > 0 ? t->jobs[t->njobs - 1].arrive - t->jobs[0].arrive : 0;
    if (!(o->warmup >= 0))
        return topo_err_set(err, TOPO_EINVALID, "--warmup: expected 0 or more seconds, got %g",
                            o->warmup);
    if (o->warmup > span)
        return topo_err_set(err, TOPO_EINVALID,
                            "--warmup: %.9g s is longer than the arrivals' span (%.9g s, first "
                            "to last arrival)",
                            o->warmup, span);
    if (o->timeline_step > 0 && span / o->timeline_step > SIM_TIMELINE_MAX)
        return topo_err_set(err, TOPO_EINVALID,
                            "--timeline-step: %g s would need more than %d points to cover the "
                            "arrivals' span (%.9g s); give at least %.9g s",
                            o->timeline_step, SIM_TIMELINE_MAX, span, span / SIM_TIMELINE_MAX);
    return 0;
}

int topo_sim_run(topo_sim_result **out, topo_sim_cluster *c, const topo_sim_trace *t,
                 topo_sim_policy policy, const topo_sim_run_opts *opts, topo_err *err)
{
    sim_run r;
    int rc;

    *out = NULL;
    if ((unsigned)policy >= TOPO_SIM_POLICIES)
        return topo_err_set(err, TOPO_EINVALID, "unknown policy %d", (int)policy);
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.t = t;
    r.policy = policy;
    if (opts != NULL)
        r.o = *opts;
    defaults(&r.o);
    if ((rc = check_window(t, &r.o, err)) < 0)
        return rc;
    if ((rc = run_init(&r, err)) < 0 || (rc = build_shapes(&r, err)) < 0 ||
        (rc = r.ops->init(&r, err)) < 0 || (rc = sim_acc_init(&r, err)) < 0 ||
        (rc = sim_loop(&r, err)) < 0 || (rc = make_result(out, &r, err)) < 0)
        goto cleanup;

cleanup:
    run_dispose(&r);
    return rc;
}

void topo_sim_result_free(topo_sim_result *res)
{
    if (res == NULL)
        return;
    free(res->tl);
    sim_jobs_dispose(&res->jobs);
    free(res->pl_off);
    free(res->pl);
    topo_pool_free(res->pool);
    free(res);
}

const topo_sim_metrics *topo_sim_result_metrics(const topo_sim_result *res)
{
    return &res->m;
}

const char *topo_sim_result_level(const topo_sim_result *res, size_t i)
{
    return i < res->m.nlevels ? res->levels[i] : NULL;
}

size_t topo_sim_result_timeline(const topo_sim_result *res, const topo_sim_sample **out)
{
    *out = res->tl;
    return res->ntl;
}

double topo_sim_result_start(const topo_sim_result *res, size_t job)
{
    return job < res->njobs ? res->jobs.out[job].start : -1;
}

size_t topo_sim_result_job_count(const topo_sim_result *res)
{
    return res->njobs;
}

int topo_sim_result_job(const topo_sim_result *res, size_t job, topo_sim_outcome *out)
{
    memset(out, 0, sizeof(*out));
    if (job >= res->njobs)
        return TOPO_EINVALID;
    const sim_outcome *o = &res->jobs.out[job];
    out->arrive = o->arrive;
    out->start = o->start;
    out->end = o->end;
    out->slowdown = o->slowdown;
    out->gpus = o->gpus;
    out->work = o->work;
    out->multi_node = o->multi_node;
    out->tight = o->tight;
    out->tight_now = o->tight_now;
    for (size_t l = 0; l < res->jobs.nlevels; l++)
        out->spanned[l] = res->jobs.span[job * res->jobs.nlevels + l];
    return 0;
}

const sim_jobs *sim_result_jobs(const topo_sim_result *res)
{
    return &res->jobs;
}

size_t topo_sim_result_placement(const topo_sim_result *res, size_t job,
                                 const topo_sim_slot **out)
{
    if (job >= res->njobs) {
        *out = NULL;
        return 0;
    }
    *out = res->pl + res->pl_off[job];
    return res->pl_off[job + 1] - res->pl_off[job];
}
