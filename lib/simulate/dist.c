/* The generator's distributions, fitted to published figures
 * (docs/simulate.md "Presets"): a size class from the published job shares,
 * then a lognormal runtime per class whose mean is the one the class's
 * published GPU-time share implies, clipped at the published maximum, with
 * one sigma for all classes that gives the published median. */
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

/* The mu whose clipped mean is `mean` (it rises with mu). */
static double mu_for_mean(double mean, double sigma, double cap)
{
    double lo = log(mean) - sigma * sigma / 2 - 1, hi = log(mean) + 1;
    while (clipped_mean(lo, sigma, cap) > mean)
        lo -= 1;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (clipped_mean(mid, sigma, cap) < mean)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* P(runtime <= t) over the mixture of classes, for t below the maximum. */
static double mixture_cdf(const sim_classes *s, double t)
{
    double f = 0, prev = 0;
    for (size_t c = 0; c < s->n; c++) {
        f += (s->cdf[c] - prev) * phi((log(t) - s->mu[c]) / s->sigma);
        prev = s->cdf[c];
    }
    return f;
}

double sim_classes_median(const sim_classes *s)
{
    double lo = 0, hi = log(s->max);
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (mixture_cdf(s, exp(mid)) < 0.5)
            lo = mid;
        else
            hi = mid;
    }
    return exp((lo + hi) / 2);
}

/* The class means for sigma; -1 when a class mean is out of reach. */
static int set_sigma(sim_classes *s, const double *mean, double sigma)
{
    s->sigma = sigma;
    for (size_t c = 0; c < s->n; c++) {
        if (!(mean[c] > 0 && mean[c] < s->max))
            return -1;
        s->mu[c] = mu_for_mean(mean[c], sigma, s->max);
        s->mean[c] = mean[c];
    }
    return 0;
}

int sim_classes_fit(sim_classes *out, const topo_sim_preset *p)
{
    double mean[SIM_MAX_CLASSES], k = 0, acc = 0;

    if (p->nclasses < 1 || p->nclasses > SIM_MAX_CLASSES ||
        !(p->runtime_median > 0 && p->runtime_mean > p->runtime_median &&
          p->runtime_max > p->runtime_mean))
        return -1;
    out->n = p->nclasses;
    out->max = p->runtime_max;
    for (size_t c = 0; c < p->nclasses; c++) {
        const topo_sim_size_class *sc = &p->classes[c];
        if (!(sc->job_share > 0 && sc->gpu_time_share > 0 && sc->gpus > 0))
            return -1;
        out->gpus[c] = sc->gpus;
        acc += sc->job_share;
        out->cdf[c] = acc;
        k += sc->gpu_time_share / sc->gpus;
    }
    for (size_t c = 0; c < p->nclasses; c++) {
        out->cdf[c] /= acc; /* the published shares add up to 1 within rounding */
        mean[c] = p->runtime_mean / k * p->classes[c].gpu_time_share /
                  (p->classes[c].job_share / acc * p->classes[c].gpus);
    }
    out->cdf[out->n - 1] = 1.0;
    /* The median falls as sigma grows (every class mean stays put): the
     * first sigma whose median is at most the published one, then bisect. */
    double lo = 0, hi = 0;
    for (double sg = 0.05; sg <= 5.0; sg += 0.05) {
        if (set_sigma(out, mean, sg) < 0)
            return -1;
        if (sim_classes_median(out) <= p->runtime_median) {
            hi = sg;
            break;
        }
        lo = sg;
    }
    if (hi == 0 || lo == 0)
        return -1;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (set_sigma(out, mean, mid) < 0)
            return -1;
        if (sim_classes_median(out) <= p->runtime_median)
            hi = mid;
        else
            lo = mid;
    }
    return set_sigma(out, mean, (lo + hi) / 2);
}

void sim_classes_cap(sim_classes *s, uint64_t cap)
{
    size_t n = s->n;
    while (n > 1 && s->gpus[n - 1] > cap)
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

size_t sim_classes_pick(const sim_classes *s, double u)
{
    for (size_t i = 0; i < s->n; i++)
        if (u < s->cdf[i])
            return i;
    return s->n - 1;
}

double sim_classes_top_mean(const sim_classes *s, size_t c, size_t n)
{
    double mu = s->mu[c], sg = s->sigma, lm = log(s->max);
    if (n <= 1)
        return clipped_mean(mu, sg, s->max);
    double z = sim_normal_quantile(1 - 1.0 / (double)n);
    if (mu + sg * z >= lm) /* the whole stratum is clipped */
        return s->max;
    /* E[min(X, max); X > q] / P(X > q), q = e^(mu + sigma z). */
    double below = exp(mu + sg * sg / 2) * (phi((lm - mu - sg * sg) / sg) - phi(z - sg));
    return (below + s->max * (1 - phi((lm - mu) / sg))) * (double)n;
}

double sim_classes_runtime(const sim_classes *s, size_t c, double u)
{
    double x = exp(s->mu[c] + s->sigma * sim_normal_quantile(u));
    return x < s->max ? x : s->max;
}
