/* --cost-sweep (topo/simulate.h): how much the comparison depends on the
 * cost model. For each cost factor a and share factor b a job's slowdown
 * becomes 1 + a b share (cost - 1). The unstretched slowdown needs no run:
 * placement never reads the costs, and the GPU-time weighted mean of
 * 1 + k (s - 1) is 1 + k (mean - 1). The stretched figures (completion
 * times, goodput) do: longer jobs change the queue and so every later
 * placement. Only the product a b matters, so each distinct product is run
 * once per policy, with the shares scaled by it (the same slowdowns as
 * scaling cost - 1, and never a cost at or below 0). */
#include <string.h>

#include "topo/simulate.h"

static const double cost_factors[TOPO_SIM_SWEEP_NCOST] = TOPO_SIM_SWEEP_COST_FACTORS;
static const double share_factors[TOPO_SIM_SWEEP_NSHARE] = TOPO_SIM_SWEEP_SHARE_FACTORS;

/* The row before `row` with the same product, or -1. */
static int same_product(const topo_sim_sweep *s, size_t row)
{
    double k = s->row[row].cost_factor * s->row[row].share_factor;
    for (size_t i = 0; i < row; i++)
        if (s->row[i].cost_factor * s->row[i].share_factor == k)
            return (int)i;
    return -1;
}

int topo_sim_cost_sweep(topo_sim_sweep *out, topo_sim_cluster *c, const topo_sim_trace *t,
                        const topo_sim_result *const *base, size_t n,
                        const topo_sim_run_opts *opts, topo_err *err)
{
    topo_sim_run_opts o;
    topo_sim_policy pol[TOPO_SIM_POLICIES];
    int rc;

    memset(out, 0, sizeof(*out));
    if (n > TOPO_SIM_POLICIES)
        return topo_err_set(err, TOPO_EINVALID, "cost sweep: more than %d results",
                            TOPO_SIM_POLICIES);
    out->npolicies = n;
    for (size_t p = 0; p < n; p++) {
        const char *name = topo_sim_result_metrics(base[p])->policy;
        int k = topo_sim_policy_parse(name);
        if (k < 0)
            return topo_err_set(err, TOPO_EINVALID, "cost sweep: unknown policy \"%s\"", name);
        pol[p] = (topo_sim_policy)k;
        out->policy[p] = topo_sim_policy_name(pol[p]);
    }
    for (size_t a = 0; a < TOPO_SIM_SWEEP_NCOST; a++)
        for (size_t b = 0; b < TOPO_SIM_SWEEP_NSHARE; b++) {
            topo_sim_sweep_row *row = &out->row[out->nrows++];
            row->cost_factor = cost_factors[a];
            row->share_factor = share_factors[b];
        }

    memset(&o, 0, sizeof(o));
    if (opts != NULL)
        o = *opts;
    o.apply_slowdown = 1;
    double small = o.comm_small > 0 ? o.comm_small : TOPO_SIM_COMM_SMALL_DEFAULT;
    double large = o.comm_large > 0 ? o.comm_large : TOPO_SIM_COMM_LARGE_DEFAULT;
    for (size_t i = 0; i < out->nrows; i++) {
        topo_sim_sweep_row *row = &out->row[i];
        double k = row->cost_factor * row->share_factor;
        int prev = same_product(out, i);
        o.comm_small = small * k;
        o.comm_large = large * k;
        for (size_t p = 0; p < n; p++) {
            topo_sim_sweep_cell *cell = &row->cell[p];
            cell->slowdown_mean = 1 + k * (topo_sim_result_metrics(base[p])->slowdown_mean - 1);
            if (prev >= 0) {
                cell->jct_mean = out->row[prev].cell[p].jct_mean;
                cell->goodput = out->row[prev].cell[p].goodput;
                continue;
            }
            topo_sim_result *r = NULL;
            if ((rc = topo_sim_run(&r, c, t, pol[p], &o, err)) < 0)
                return topo_err_wrap(err, "cost sweep %gx cost, %gx share", row->cost_factor,
                                     row->share_factor);
            cell->jct_mean = topo_sim_result_metrics(r)->jct_mean;
            cell->goodput = topo_sim_result_metrics(r)->goodput;
            topo_sim_result_free(r);
            out->runs++;
        }
    }
    return 0;
}
