/* The generator's fitted distributions (dist.c). */
#ifndef TOPO_SIM_DIST_H
#define TOPO_SIM_DIST_H

#include <stddef.h>
#include <stdint.h>

/* Sizes 1, 2, 4, ... up to 2^(SIM_SIZE_CLASSES-1) GPUs. */
#define SIM_SIZE_CLASSES 16

typedef struct sim_sizes {
    size_t n;
    uint32_t size[SIM_SIZE_CLASSES];
    double cdf[SIM_SIZE_CLASSES];
} sim_sizes;

/* P(1) = single_share (>= 0.5: the median is 1), the rest on 2, 4, ...,
 * max with weights falling (or rising) geometrically, the ratio chosen so
 * that the mean is `mean`. -1 when no such distribution exists. */
int sim_sizes_fit(sim_sizes *out, double single_share, double mean, double max);
/* Leaves out the sizes above cap (the distribution conditioned on them not
 * occurring); keeps at least size 1. */
void sim_sizes_cap(sim_sizes *s, uint64_t cap);
uint32_t sim_sizes_quantile(const sim_sizes *s, double u);
double sim_sizes_mean(const sim_sizes *s);

/* min(X, max) with X lognormal(mu, sigma), mu = ln(median), sigma such that
 * the clipped mean is `mean`. */
typedef struct sim_runtime {
    double mu, sigma, max;
} sim_runtime;

int sim_runtime_fit(sim_runtime *out, double median, double mean, double max);
double sim_runtime_quantile(const sim_runtime *d, double u);

double sim_normal_quantile(double p);

#endif
