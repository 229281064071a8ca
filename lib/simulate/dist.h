/* The generator's fitted distributions (dist.c). */
#ifndef TOPO_SIM_DIST_H
#define TOPO_SIM_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "topo/simulate.h"

/* Most size classes a preset has: 1, 2, 4, ... 2048 GPUs. */
#define SIM_MAX_CLASSES 12

/* A preset's jobs drawn jointly by size class: the class from the published
 * job shares, then a runtime from the class's own lognormal, clipped at the
 * published maximum. Every class has the same sigma; its mu makes the class's
 * mean runtime the one its published GPU-time share implies. */
typedef struct sim_classes {
    size_t n;
    uint32_t gpus[SIM_MAX_CLASSES];
    double cdf[SIM_MAX_CLASSES]; /* of the job shares */
    double mu[SIM_MAX_CLASSES];
    double mean[SIM_MAX_CLASSES]; /* of the clipped lognormal: the class's target */
    double sigma, max;
} sim_classes;

/* Fits the classes to the published shares, mean, median and maximum
 * runtime (docs/simulate.md "Presets"): the class means m_c = K s_c / (p_c
 * g_c) with K such that sum p_c m_c = mean, sigma (bisection) such that the
 * mixture's median is the published median. -1 when no fit exists. */
int sim_classes_fit(sim_classes *out, const topo_sim_preset *p);
/* Leaves out the classes above cap GPUs (the distribution conditioned on
 * them not occurring); keeps at least the first. */
void sim_classes_cap(sim_classes *s, uint64_t cap);
/* The class of quantile u of the job shares. */
size_t sim_classes_pick(const sim_classes *s, double u);
/* Quantile u of class c's runtime, seconds. */
double sim_classes_runtime(const sim_classes *s, size_t c, double u);
/* The mean of class c's runtime over its top 1/n of probability (its
 * quantiles above 1 - 1/n), seconds: what the top one of n strata stands for
 * without a draw from the lognormal's unbounded tail. n = 1: the class's
 * mean. */
double sim_classes_top_mean(const sim_classes *s, size_t c, size_t n);
/* The mixture's median runtime. */
double sim_classes_median(const sim_classes *s);

double sim_normal_quantile(double p);

#endif
