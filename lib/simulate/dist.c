/* The generator's distributions, fitted to published summary statistics
 * (docs/simulate.md "Presets"): job sizes on powers of two with a given
 * single-GPU share and mean, and a lognormal runtime with the published
 * median, clipped at the published maximum, whose mean is the published
 * mean. */
#include "dist.h"

#include <math.h>

/* Standard normal CDF. */
static double phi(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

/* Inverse of the standard normal CDF: Acklam's rational approximation
 * (relative error 1.15e-9), polished by one Halley step on erfc, which
 * brings it to full double precision. p in (0, 1). */
double sim_normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    const double lo = 0.02425, hi = 1 - lo;
    double q, r, x;

    if (p <= 0)
        return -INFINITY;
    if (p >= 1)
        return INFINITY;
    if (p < lo) {
        q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p <= hi) {
        q = p - 0.5;
        r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    } else {
        q = sqrt(-2 * log(1 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    double e = phi(x) - p;
    double u = e * 2.5066282746310002 * exp(x * x / 2); /* e sqrt(2 pi) e^(x^2/2) */
    return x - u / (1 + x * u / 2);
}

/* E[min(X, cap)] for X lognormal(mu, sigma). */
static double clipped_mean(double mu, double sigma, double cap)
{
    double lc = log(cap);
    return exp(mu + sigma * sigma / 2) * phi((lc - mu - sigma * sigma) / sigma) +
           cap * (1 - phi((lc - mu) / sigma));
}

int sim_runtime_fit(sim_runtime *out, double median, double mean, double max)
{
    if (!(median > 0 && mean > median && max > mean))
        return -1;
    double mu = log(median), lo = 0.0, hi = 0.0;
    /* The clipped mean rises from the median as sigma grows, then falls back
     * towards max/2: take the first crossing. */
    for (double s = 0.01; s <= 8.0; s += 0.01) {
        if (clipped_mean(mu, s, max) >= mean) {
            hi = s;
            break;
        }
        lo = s;
    }
    if (hi == 0.0)
        return -1;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (clipped_mean(mu, mid, max) >= mean)
            hi = mid;
        else
            lo = mid;
    }
    out->mu = mu;
    out->sigma = (lo + hi) / 2;
    out->max = max;
    return 0;
}

double sim_runtime_quantile(const sim_runtime *d, double u)
{
    double x = exp(d->mu + d->sigma * sim_normal_quantile(u));
    return x < d->max ? x : d->max;
}

/* Mean of the sizes 2..max with weights r^(k-1) on 2^k. */
static double tail_mean(double r, int k_max)
{
    double w = 1, sw = 0, sx = 0;
    for (int k = 1; k <= k_max; k++) {
        sw += w;
        sx += w * (double)(1u << k);
        w *= r;
    }
    return sx / sw;
}

int sim_sizes_fit(sim_sizes *out, double single_share, double mean, double max)
{
    int k_max = 0;
    while (k_max < SIM_SIZE_CLASSES - 1 && (double)(1u << (k_max + 1)) <= max)
        k_max++;
    if (!(single_share >= 0.5 && single_share < 1 && k_max >= 1))
        return -1;
    double want = (mean - single_share) / (1 - single_share); /* the multi-GPU jobs' mean */
    if (!(want > 2 && want < (double)(1u << k_max)))
        return -1;
    /* tail_mean grows with r from 2 (r -> 0) to max (r -> infinity). */
    double lo = 1e-6, hi = 1e6;
    for (int i = 0; i < 200; i++) {
        double mid = sqrt(lo * hi);
        if (tail_mean(mid, k_max) < want)
            lo = mid;
        else
            hi = mid;
    }
    double r = sqrt(lo * hi), w = 1, sw = 0;
    for (int k = 1; k <= k_max; k++, w *= r)
        sw += w;
    out->n = (size_t)k_max + 1;
    out->size[0] = 1;
    out->cdf[0] = single_share;
    w = 1;
    for (int k = 1; k <= k_max; k++, w *= r) {
        out->size[k] = 1u << k;
        out->cdf[k] = out->cdf[k - 1] + (1 - single_share) * w / sw;
    }
    out->cdf[k_max] = 1.0;
    return 0;
}

void sim_sizes_cap(sim_sizes *s, uint64_t cap)
{
    size_t n = s->n;
    while (n > 1 && s->size[n - 1] > cap)
        n--;
    if (n == s->n)
        return;
    /* The distribution conditioned on fitting. */
    double top = s->cdf[n - 1];
    for (size_t i = 0; i < n; i++)
        s->cdf[i] /= top;
    s->cdf[n - 1] = 1.0;
    s->n = n;
}

uint32_t sim_sizes_quantile(const sim_sizes *s, double u)
{
    for (size_t i = 0; i < s->n; i++)
        if (u < s->cdf[i])
            return s->size[i];
    return s->size[s->n - 1];
}

double sim_sizes_mean(const sim_sizes *s)
{
    double m = 0, prev = 0;
    for (size_t i = 0; i < s->n; i++) {
        m += (s->cdf[i] - prev) * s->size[i];
        prev = s->cdf[i];
    }
    return m;
}
