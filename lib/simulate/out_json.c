/* -o json (topo/simulate.h): keys in a fixed order, every fraction and
 * duration rounded to six decimals and printed with 15 significant digits,
 * so the same results always give the same bytes. Each policy's object is
 * the metrics table (fields.h); over several seeds its figures are means
 * and its "ci95" object has the same keys, each [low, high]. */
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
    return in;
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
    size_t nlevels = n > 0 ? topo_sim_result_metrics(r[0])->nlevels : 0;
    json_t *root, *policies;
    *out = NULL;
    for (size_t l = 0; l < nlevels; l++)
        levels[l] = topo_sim_result_level(r[0], l);
    topo_json_alloc_watch();
    root = json_object();
    json_object_set_new(root, "simulate", inputs(info, levels, nlevels));
    policies = json_object();
    for (size_t i = 0; i < n; i++) {
        const topo_sim_metrics *m = topo_sim_result_metrics(r[i]);
        sim_field_values(v, m);
        json_object_set_new(policies, m->policy,
                            sim_fields_json(v, NULL, NULL, levels, m->nlevels, 1));
    }
    json_object_set_new(root, "policies", policies);
    return dump(out, root, err);
}

int topo_sim_format_summary_json(char **out, const topo_sim_info *info,
                                 const topo_sim_summary *s, topo_err *err)
{
    const char *const *levels;
    const uint64_t *seeds;
    size_t nlevels = sim_summary_levels(s, &levels), nseeds = topo_sim_summary_seeds(s, &seeds);
    json_t *root, *in, *list, *policies;
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
    for (size_t p = 0; p < topo_sim_summary_policy_count(s); p++) {
        const double *lo, *hi, *v = sim_summary_values(s, p, &lo, &hi);
        json_t *o = sim_fields_json(v, NULL, NULL, levels, nlevels, nseeds == 1);
        if (lo != NULL)
            json_object_set_new(o, "ci95", sim_fields_json(v, lo, hi, levels, nlevels, 0));
        json_object_set_new(policies, topo_sim_summary_policy(s, p), o);
    }
    json_object_set_new(root, "policies", policies);
    return dump(out, root, err);
}
