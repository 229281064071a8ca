/* Job-level metrics over a chosen set of jobs, and the same-jobs view of
 * several results (docs/simulate.md "Metrics", "Same jobs"): each policy's
 * own figures cover the jobs it placed, which differ between policies; over
 * the jobs every policy placed they compare like with like. */
#include <stdlib.h>

#include "sim_internal.h"

int topo_sim_metrics_over(const topo_sim_result *r, const unsigned char *mask,
                          topo_sim_metrics *out, topo_err *err)
{
    *out = *topo_sim_result_metrics(r);
    return sim_job_metrics(out, sim_result_jobs(r), mask, err);
}

int topo_sim_common(topo_sim_metrics *out, size_t *out_jobs, const topo_sim_result *const *r,
                    size_t n, topo_err *err)
{
    size_t njobs = n > 0 ? topo_sim_result_job_count(r[0]) : 0;
    unsigned char *mask = NULL;
    int rc = 0;

    *out_jobs = 0;
    for (size_t i = 1; i < n; i++) {
        const topo_sim_metrics *a = topo_sim_result_metrics(r[0]);
        const topo_sim_metrics *b = topo_sim_result_metrics(r[i]);
        if (topo_sim_result_job_count(r[i]) != njobs || a->window_start != b->window_start ||
            a->window_end != b->window_end)
            return topo_err_set(err, TOPO_EINVALID,
                                "same jobs: %s and %s are not runs of one trace and window",
                                a->policy, b->policy);
    }
    if (njobs > 0 && (mask = malloc(njobs)) == NULL)
        return topo_err_nomem(err, "simulation");
    for (size_t j = 0; j < njobs; j++) {
        const sim_outcome *o = &sim_result_jobs(r[0])->out[j];
        mask[j] = o->arrive >= topo_sim_result_metrics(r[0])->window_start;
        for (size_t i = 0; i < n && mask[j]; i++)
            mask[j] = sim_result_jobs(r[i])->out[j].start >= 0;
        *out_jobs += mask[j];
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = topo_sim_metrics_over(r[i], mask, &out[i], err);
    free(mask);
    return rc;
}
