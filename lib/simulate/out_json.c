/* -o json (topo/simulate.h): keys in a fixed order, every fraction and
 * duration rounded to six decimals and printed with 15 significant digits,
 * so the same results always give the same bytes. */
#include <math.h>
#include <stdlib.h>

#include "out_internal.h"
#include "topo/json.h"

static json_t *num(double v)
{
    return json_real(round(v * 1e6) / 1e6);
}

static json_t *count(size_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *wait_obj(const topo_sim_wait *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "jobs", count(w->jobs));
    json_object_set_new(o, "p50_s", num(w->p50));
    json_object_set_new(o, "p99_s", num(w->p99));
    json_object_set_new(o, "mean_s", num(w->mean));
    return o;
}

/* One policy's metrics (levels named by r): every figure, or with
 * jobs_only the job-level ones only (the same-jobs view, where the window
 * figures would not be over those jobs). */
static json_t *metrics_obj(const topo_sim_metrics *m, const topo_sim_result *r, int jobs_only)
{
    json_t *o = json_object(), *spanned = json_object(), *classes = json_object();
    json_object_set_new(o, "jobs", count(m->jobs));
    json_object_set_new(o, "placed", count(m->placed));
    json_object_set_new(o, "unplaceable", count(m->unplaceable));
    json_object_set_new(o, "multi_node_jobs", count(m->multi_node));
    json_object_set_new(o, "tight_share", num(m->tight_share));
    json_object_set_new(o, "tight_share_now", num(m->tight_share_now));
    for (size_t l = 0; l < m->nlevels; l++)
        json_object_set_new(spanned, topo_sim_result_level(r, l), num(m->spanned[l]));
    json_object_set_new(o, "domains_spanned", spanned);
    if (!jobs_only) {
        json_object_set_new(o, "fragmentation", num(m->fragmentation));
        json_object_set_new(o, "fragmentation_pod", num(m->fragmentation_pod));
        json_object_set_new(o, "utilisation", num(m->utilisation));
        json_object_set_new(o, "goodput", num(m->goodput));
        json_object_set_new(o, "queue_length", num(m->queue_length));
    }
    json_object_set_new(o, "queue_p50_s", num(m->wait.p50));
    json_object_set_new(o, "queue_p99_s", num(m->wait.p99));
    json_object_set_new(o, "queue_mean_s", num(m->wait.mean));
    for (int k = 0; k < TOPO_SIM_CLASSES; k++)
        json_object_set_new(classes, sim_class_names[k], wait_obj(&m->wait_class[k]));
    json_object_set_new(o, "queue_by_gpus", classes);
    json_object_set_new(o, "slowdown_mean", num(m->slowdown_mean));
    json_object_set_new(o, "slowdown_p99", num(m->slowdown_p99));
    json_object_set_new(o, "jct_mean_s", num(m->jct_mean));
    json_object_set_new(o, "jct_p99_s", num(m->jct_p99));
    if (!jobs_only) {
        json_object_set_new(o, "window_s", num(m->window_end - m->window_start));
        json_object_set_new(o, "makespan_s", num(m->makespan - m->window_start));
        json_object_set_new(o, "attempts", json_integer((json_int_t)m->attempts));
    }
    return o;
}

/* {"jobs": N, "policies": {"<name>": {job-level metrics}}} over the jobs
 * every result placed. */
static int common_obj(json_t **out, const topo_sim_result *const *r, size_t n, topo_err *err)
{
    topo_sim_metrics *m = n > 0 ? calloc(n, sizeof(*m)) : NULL;
    size_t jobs = 0;
    int rc;
    if (n > 0 && m == NULL)
        return topo_err_nomem(err, "JSON output");
    if ((rc = topo_sim_common(m, &jobs, r, n, err)) < 0) {
        free(m);
        return rc;
    }
    json_t *o = json_object(), *policies = json_object();
    json_object_set_new(o, "jobs", count(jobs));
    for (size_t i = 0; i < n; i++)
        json_object_set_new(policies, m[i].policy, metrics_obj(&m[i], r[i], 1));
    json_object_set_new(o, "policies", policies);
    free(m);
    *out = o;
    return 0;
}

/* The same policy run with its slowdown applied: what the stretch does to
 * completion, goodput and queueing. */
static json_t *stretched_obj(const topo_sim_result *r)
{
    const topo_sim_metrics *m = topo_sim_result_metrics(r);
    json_t *o = json_object();
    json_object_set_new(o, "jct_mean_s", num(m->jct_mean));
    json_object_set_new(o, "jct_p99_s", num(m->jct_p99));
    json_object_set_new(o, "goodput", num(m->goodput));
    json_object_set_new(o, "queue_p99_s", num(m->wait.p99));
    json_object_set_new(o, "makespan_s", num(m->makespan - m->window_start));
    return o;
}

static json_t *sweep_array(const topo_sim_sweep *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nrows; i++) {
        const topo_sim_sweep_row *row = &s->row[i];
        json_t *o = json_object(), *pol = json_object();
        json_object_set_new(o, "cost_factor", num(row->cost_factor));
        json_object_set_new(o, "share_factor", num(row->share_factor));
        for (size_t p = 0; p < s->npolicies; p++) {
            json_t *c = json_object();
            json_object_set_new(c, "slowdown_mean", num(row->cell[p].slowdown_mean));
            json_object_set_new(c, "jct_mean_s", num(row->cell[p].jct_mean));
            json_object_set_new(c, "goodput", num(row->cell[p].goodput));
            json_object_set_new(pol, s->policy[p], c);
        }
        json_object_set_new(o, "policies", pol);
        json_array_append_new(a, o);
    }
    return a;
}

int topo_sim_format_json(char **out, const topo_sim_info *info, const topo_sim_result *const *r,
                         size_t n, topo_err *err)
{
    json_t *root, *in, *levels, *policies, *common = NULL;
    int rc;
    *out = NULL;
    topo_json_alloc_watch();
    if ((rc = common_obj(&common, r, n, err)) < 0)
        return rc;
    root = json_object();
    in = json_object();
    levels = json_array();
    policies = json_object();
    json_object_set_new(in, "cluster", json_string(info->cluster ? info->cluster : ""));
    json_object_set_new(in, "jobs", json_string(info->jobs ? info->jobs : ""));
    json_object_set_new(in, "seed", json_integer((json_int_t)info->seed));
    json_object_set_new(in, "nodes", count(info->nodes));
    json_object_set_new(in, "capacity", json_integer((json_int_t)info->capacity));
    if (n > 0)
        for (size_t l = 0; l < topo_sim_result_metrics(r[0])->nlevels; l++)
            json_array_append_new(levels, json_string(topo_sim_result_level(r[0], l)));
    json_object_set_new(in, "levels", levels);
    json_object_set_new(root, "simulate", in);
    for (size_t i = 0; i < n; i++) {
        json_t *o = metrics_obj(topo_sim_result_metrics(r[i]), r[i], 0);
        if (info->stretched != NULL && info->stretched[i] != NULL)
            json_object_set_new(o, "stretched", stretched_obj(info->stretched[i]));
        json_object_set_new(policies, topo_sim_result_metrics(r[i])->policy, o);
    }
    json_object_set_new(root, "policies", policies);
    json_object_set_new(root, "common", common);
    if (info->sweep != NULL)
        json_object_set_new(root, "cost_sweep", sweep_array(info->sweep));
    if (!topo_json_alloc_failed())
        *out = topo_json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    json_decref(root);
    if (*out == NULL)
        return topo_err_nomem(err, "JSON output");
    return 0;
}
