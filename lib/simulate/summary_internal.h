/* What the outputs read of a summary over seeds (summary.c) beside the
 * public accessors: the metrics vectors (fields.h) and the level names. */
#ifndef TOPO_SIM_SUMMARY_INTERNAL_H
#define TOPO_SIM_SUMMARY_INTERNAL_H

#include <stddef.h>

#include "topo/simulate.h"

/* Policy p's mean vector (SIM_NVALUES slots); *lo and *hi its interval's
 * ends, NULL with one seed. */
const double *sim_summary_values(const topo_sim_summary *s, size_t p, const double **lo,
                                 const double **hi);
/* The levels the domains spanned refer to. */
size_t sim_summary_levels(const topo_sim_summary *s, const char *const **levels);

#endif
