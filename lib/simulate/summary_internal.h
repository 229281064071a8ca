/* What the outputs read of a summary over seeds (summary.c) beside the
 * public accessors: the metrics vectors (fields.h) and the level names. */
#ifndef TOPO_SIM_SUMMARY_INTERNAL_H
#define TOPO_SIM_SUMMARY_INTERNAL_H

#include <stddef.h>

#include "fields.h"
#include "topo/simulate.h"

/* Policy p's mean vector (SIM_NVALUES slots) in view (fields.h), NULL
 * when the seeds had no stretched runs; *lo and *hi its interval's ends,
 * NULL with one seed. */
const double *sim_summary_values(const topo_sim_summary *s, size_t p, sim_view view,
                                 const double **lo, const double **hi);
/* The jobs every policy placed (topo_sim_common), the mean over the seeds
 * and its interval's ends (the mean with one seed). */
double sim_summary_common_jobs(const topo_sim_summary *s, double *lo, double *hi);
/* The first seed's metric window (the report's timelines are its). */
void sim_summary_window(const topo_sim_summary *s, double *start, double *end);
/* The levels the domains spanned refer to. */
size_t sim_summary_levels(const topo_sim_summary *s, const char *const **levels);

#endif
