/* --timeline FILE over several seeds (topo/simulate.h): the mean timeline
 * of each policy and its 95 % interval per point; with one seed the same
 * columns as topo_sim_format_timeline. */
#include "out_internal.h"

int topo_sim_format_summary_timeline(topo_buf *b, const topo_sim_summary *s)
{
    const uint64_t *seeds;
    int several = topo_sim_summary_seeds(s, &seeds) >= 2;
    if (several)
        topo_buf_puts(b, "policy,t_s,utilisation,utilisation_lo,utilisation_hi,fragmentation,"
                         "fragmentation_lo,fragmentation_hi,fragmentation_pod,"
                         "fragmentation_pod_lo,fragmentation_pod_hi,queue_length,queue_length_lo,"
                         "queue_length_hi\n");
    else
        topo_buf_puts(b, "policy,t_s,utilisation,fragmentation,fragmentation_pod,queue_length\n");
    for (size_t p = 0; p < topo_sim_summary_policy_count(s); p++) {
        const topo_sim_sample *m, *lo, *hi;
        const char *name = topo_sim_summary_policy(s, p);
        size_t n = topo_sim_summary_timeline(s, p, &m, &lo, &hi);
        for (size_t k = 0; k < n && b->error == 0; k++) {
            if (!several) {
                topo_buf_printf(b, "%s,%.3f,%.6f,%.6f,%.6f,%.3f\n", name, m[k].t,
                                m[k].utilisation, m[k].fragmentation, m[k].fragmentation_pod,
                                m[k].queue_length);
                continue;
            }
            topo_buf_printf(b,
                            "%s,%.3f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.3f,%.3f,"
                            "%.3f\n",
                            name, m[k].t, m[k].utilisation, lo[k].utilisation, hi[k].utilisation,
                            m[k].fragmentation, lo[k].fragmentation, hi[k].fragmentation,
                            m[k].fragmentation_pod, lo[k].fragmentation_pod,
                            hi[k].fragmentation_pod, m[k].queue_length, lo[k].queue_length,
                            hi[k].queue_length);
        }
    }
    return b->error;
}
