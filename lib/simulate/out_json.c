/* -o json (topo/simulate.h): keys in a fixed order, every fraction and
 * duration rounded to six decimals and printed with 15 significant digits,
 * so the same results always give the same bytes. Each policy's object,
 * its "stretched" object and its same-jobs object are the metrics table
 * (fields.h); over several seeds their figures are means and each gains a
 * "ci95" object with the same keys, each [low, high]. */
#include <stdlib.h>

#include "fields.h"
#include "out_internal.h"
#include "summary_internal.h"
#include "topo/json.h"


static json_t *count(size_t v)
{
    return json_integer((json_int_t)v);
}

/* {"cluster": ..., "levels": [...]} */
static json_t *inputs(const topo_sim_info *info, const char *const *levels, size_t nlevels)
{
    json_t *in = json_object(), *lv = json_array();
    json_object_set_new(in, "cluster", json_string(info->cluster ? info->cluster : ""));
    json_object_set_new(in, "jobs", json_string(info->jobs ? info->jobs : ""));
    json_object_set_new(in, "seed", json_integer((json_int_t)info->seed));
    json_object_set_new(in, "nodes", count(info->nodes));
    json_object_set_new(in, "capacity", json_integer((json_int_t)info->capacity));
    for (size_t l = 0; l < nlevels; l++)
        json_array_append_new(lv, json_string(levels[l]));
    json_object_set_new(in, "levels", lv);
    if (info->cost != NULL) {
        /* In a --cost-model file's form: the file that reproduces it. */
        json_t *cm = json_object(), *tiers = json_object(), *comm = json_object();
        for (int t = 0; t < TOPO_SIM_TIERS; t++)
            json_object_set_new(tiers, topo_sim_tier_name((topo_sim_tier)t),
                                sim_json_num(info->cost->cost[t]));
        json_object_set_new(comm, "small", sim_json_num(info->cost->comm_small));
        json_object_set_new(comm, "large", sim_json_num(info->cost->comm_large));
        json_object_set_new(cm, "tiers", tiers);
        json_object_set_new(cm, "communication", comm);
        json_object_set_new(in, "cost_model", cm);
    }
    if (info->pack_level != NULL)
        json_object_set_new(in, "pack_level", json_string(info->pack_level));
    return in;
}

/* The stretched object's fields: the stretched block's rows. */
static size_t stretched_ids(int *ids)
{
    for (size_t k = 0; k < sim_nstretched_rows; k++)
        ids[k] = sim_stretched_rows[k].field;
    return sim_nstretched_rows;
}

/* A metrics object and, with lo given, its "ci95" inside it. */
static json_t *with_ci(json_t *o, json_t *ci)
{
    if (ci != NULL)
        json_object_set_new(o, "ci95", ci);
    return o;
}

/* The stretched run's object from its vector (and interval). */
static json_t *stretched_obj(const double *v, const double *lo, const double *hi, int exact)
{
    int ids[SIM_F_COUNT];
    size_t n = stretched_ids(ids);
    return with_ci(sim_fields_json_list(v, NULL, NULL, ids, n, exact),
                   lo != NULL ? sim_fields_json_list(v, lo, hi, ids, n, 0) : NULL);
}

static json_t *sweep_array(const topo_sim_sweep *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nrows; i++) {
        const topo_sim_sweep_row *row = &s->row[i];
        json_t *o = json_object(), *pol = json_object();
        json_object_set_new(o, "cost_factor", sim_json_num(row->cost_factor));
        json_object_set_new(o, "share_factor", sim_json_num(row->share_factor));
        for (size_t p = 0; p < s->npolicies; p++) {
            json_t *c = json_object();
            json_object_set_new(c, "slowdown_mean",
                                sim_json_num(row->cell[p].slowdown_mean));
            json_object_set_new(c, "jct_mean_s", sim_json_num(row->cell[p].jct_mean));
            json_object_set_new(c, "goodput", sim_json_num(row->cell[p].goodput));
            json_object_set_new(pol, s->policy[p], c);
        }
        json_object_set_new(o, "policies", pol);
        json_array_append_new(a, o);
    }
    return a;
}

/* Dumps root into *out and releases it. */
static int dump(char **out, json_t *root, topo_err *err)
{
    if (!topo_json_alloc_failed())
        *out = topo_json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    json_decref(root);
    if (*out == NULL)
        return topo_err_nomem(err, "JSON output");
    return 0;
}

int topo_sim_format_json(char **out, const topo_sim_info *info, const topo_sim_result *const *r,
                         size_t n, topo_err *err)
{
    const char *levels[TOPO_MAX_LEVELS];
    double v[SIM_NVALUES];
    size_t nlevels = n > 0 ? topo_sim_result_metrics(r[0])->nlevels : 0, jobs = 0;
    topo_sim_metrics *common = n > 0 ? calloc(n, sizeof(*common)) : NULL;
    json_t *root, *policies, *cobj, *cpol;
    int rc;
    *out = NULL;
    if (n > 0 && common == NULL)
        return topo_err_nomem(err, "JSON output");
    if ((rc = topo_sim_common(common, &jobs, r, n, err)) < 0) {
        free(common);
        return rc;
    }
    for (size_t l = 0; l < nlevels; l++)
        levels[l] = topo_sim_result_level(r[0], l);
    topo_json_alloc_watch();
    root = json_object();
    json_object_set_new(root, "simulate", inputs(info, levels, nlevels));
    policies = json_object();
    cobj = json_object();
    cpol = json_object();
    for (size_t i = 0; i < n; i++) {
        const topo_sim_metrics *m = topo_sim_result_metrics(r[i]);
        sim_field_values(v, m);
        json_t *o = sim_fields_json(v, NULL, NULL, levels, m->nlevels, 1, 0);
        if (info->stretched != NULL && info->stretched[i] != NULL) {
            sim_field_values(v, topo_sim_result_metrics(info->stretched[i]));
            json_object_set_new(o, "stretched", stretched_obj(v, NULL, NULL, 1));
        }
        json_object_set_new(policies, m->policy, o);
        sim_field_values(v, &common[i]);
        json_object_set_new(cpol, m->policy, sim_fields_json(v, NULL, NULL, levels, nlevels, 1, 1));
    }
    free(common);
    json_object_set_new(root, "policies", policies);
    json_object_set_new(cobj, "jobs", count(jobs));
    json_object_set_new(cobj, "policies", cpol);
    json_object_set_new(root, "common", cobj);
    if (info->sweep != NULL)
        json_object_set_new(root, "cost_sweep", sweep_array(info->sweep));
    return dump(out, root, err);
}

int topo_sim_format_summary_json(char **out, const topo_sim_info *info,
                                 const topo_sim_summary *s, topo_err *err)
{
    const char *const *levels;
    const uint64_t *seeds;
    size_t nlevels = sim_summary_levels(s, &levels), nseeds = topo_sim_summary_seeds(s, &seeds);
    json_t *root, *in, *list, *policies, *cobj, *cpol;
    double jobs_lo, jobs_hi, jobs = sim_summary_common_jobs(s, &jobs_lo, &jobs_hi);
    int exact = nseeds == 1;
    *out = NULL;
    topo_json_alloc_watch();
    root = json_object();
    in = inputs(info, levels, nlevels);
    list = json_array();
    for (size_t i = 0; i < nseeds; i++)
        json_array_append_new(list, json_integer((json_int_t)seeds[i]));
    json_object_set_new(in, "seeds", list);
    json_object_set_new(root, "simulate", in);
    policies = json_object();
    cpol = json_object();
    for (size_t p = 0; p < topo_sim_summary_policy_count(s); p++) {
        const char *name = topo_sim_summary_policy(s, p);
        const double *lo, *hi, *v = sim_summary_values(s, p, SIM_VIEW_OWN, &lo, &hi);
        json_t *o = sim_fields_json(v, NULL, NULL, levels, nlevels, exact, 0);
        json_t *ci = lo != NULL ? sim_fields_json(v, lo, hi, levels, nlevels, 0, 0) : NULL;
        const double *sv = sim_summary_values(s, p, SIM_VIEW_STRETCHED, &lo, &hi);
        if (sv != NULL)
            json_object_set_new(o, "stretched", stretched_obj(sv, lo, hi, exact));
        json_object_set_new(policies, name, with_ci(o, ci));
        v = sim_summary_values(s, p, SIM_VIEW_COMMON, &lo, &hi);
        o = sim_fields_json(v, NULL, NULL, levels, nlevels, exact, 1);
        ci = lo != NULL ? sim_fields_json(v, lo, hi, levels, nlevels, 0, 1) : NULL;
        json_object_set_new(cpol, name, with_ci(o, ci));
    }
    json_object_set_new(root, "policies", policies);
    cobj = json_object();
    json_object_set_new(cobj, "jobs", exact ? count((size_t)jobs) : sim_json_num(jobs));
    json_object_set_new(cobj, "policies", cpol);
    json_object_set_new(root, "common", cobj);
    return dump(out, root, err);
}
