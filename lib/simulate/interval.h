/* The t-interval's parts that the summary's running timelines share with
 * topo_sim_mean_ci95 (interval.c). */
#ifndef TOPO_SIM_INTERVAL_H
#define TOPO_SIM_INTERVAL_H

#include <stddef.h>

/* Student's t, the 0.975 quantile with df >= 1 degrees of freedom. */
double sim_t975(size_t df);
/* The half-width t(0.975, n - 1) * sqrt(variance / n) of n samples of that
 * sample variance; 0 for n < 2. */
double sim_ci95_half(size_t n, double variance);

#endif
