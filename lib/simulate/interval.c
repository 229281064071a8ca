/* 95 % confidence intervals over seeds (topo/simulate.h): Student's t with
 * n - 1 degrees of freedom, mean +/- t * s / sqrt(n). */
#include <math.h>

#include "interval.h"
#include "topo/simulate.h"

/* t(0.975, df) for df = 1..30: NIST/SEMATECH e-Handbook of Statistical
 * Methods, section 1.3.6.7.2, "Critical Values of the Student's t
 * Distribution" (column 0.975), three decimals as printed there. */
static const double t975[] = {
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};
#define T_TABLE (sizeof t975 / sizeof t975[0])

/* Beyond the table, the Cornish-Fisher expansion of t's quantile in powers
 * of 1/df around the normal's (Abramowitz and Stegun, Handbook of
 * Mathematical Functions, 26.7.5): within 1e-6 of the exact value from 30
 * degrees of freedom on, where the table's rounding is 5e-4. */
static double t975_expansion(double df)
{
    const double z = 1.959963984540054; /* the normal's 0.975 quantile */
    double z2 = z * z;
    double g1 = (z2 + 1) * z / 4;
    double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
    return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

double sim_t975(size_t df)
{
    return df <= T_TABLE ? t975[df - 1] : t975_expansion((double)df);
}

double sim_ci95_half(size_t n, double variance)
{
    if (n < 2 || !(variance > 0))
        return 0;
    return sim_t975(n - 1) * sqrt(variance / (double)n);
}

int topo_sim_mean_ci95(double *mean, double *half, const double *x, size_t n)
{
    double sum = 0, ss = 0;
    *mean = *half = 0;
    if (n == 0)
        return TOPO_EINVALID;
    /* Summed as differences from the first value: equal values (a policy
     * without random choices over a trace file) give exactly that value and
     * no interval, where a plain sum / n can be off in the last digit. */
    for (size_t i = 1; i < n; i++)
        sum += x[i] - x[0];
    *mean = x[0] + sum / (double)n;
    if (n == 1)
        return 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *half = sim_ci95_half(n, ss / (double)(n - 1));
    return 1;
}
