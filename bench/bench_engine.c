/* bench_engine: snapshot build time, assignment latency and peak RSS of the
 * placement engine over generated GPU clusters. Prints figures, not
 * pass/fail (targets are shown beside them). See bench/README.md. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "topo/engine.h"
#include "topo/generate.h"
#include "topo/limits.h"
#include "topo/model.h"
#include "topo/pool.h"

#define MAX_SIZES 16
#define GPUS_PER_NODE 8

/* Targets (DESIGN: the webhook answers within its admission budget). */
#define TARGET_10K_P99_64_US 100.0
#define TARGET_10K_BUILD_MS 50.0
#define TARGET_10K_RSS_MIB 64.0
#define TARGET_60K_P99_US 1000.0

typedef struct shape {
    const char *name;
    const char *const *levels;
    size_t nlevels;
    const char *rack;  /* required level */
    const char *block; /* preferred level */
    const char *block_name;
} shape;

static const char *const levels3[] = {TOPO_GEN_LABEL_BLOCK, TOPO_GEN_LABEL_RACK,
                                      TOPO_GEN_LABEL_HOSTNAME};
static const char *const levels6[] = {TOPO_GEN_LABEL_DATACENTER, TOPO_GEN_LABEL_SPINE,
                                      TOPO_GEN_LABEL_LEAF,       TOPO_GEN_LABEL_RACK,
                                      TOPO_GEN_LABEL_NVLINK,     TOPO_GEN_LABEL_HOSTNAME};

static const shape shapes[] = {
    {"block/rack/hostname", levels3, 3, TOPO_GEN_LABEL_RACK, TOPO_GEN_LABEL_BLOCK, "block"},
    {"dc/spine/leaf/rack/nvlink/hostname", levels6, 6, TOPO_GEN_LABEL_RACK,
     TOPO_GEN_LABEL_SPINE, "spine"},
};

typedef enum { MODE_REQUIRED, MODE_PREFERRED, MODE_UNCONSTRAINED } mode;

static const int32_t podset_sizes[] = {8, 64, 512};

typedef struct bench_opts {
    uint32_t sizes[MAX_SIZES];
    size_t nsizes;
    int shape_mask; /* bit i: shapes[i] */
    uint32_t max_iters;
    uint32_t min_iters;
    double budget_s; /* per row */
    double usage;
    uint64_t seed;
    int fork_each;
} bench_opts;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *v, size_t n, double p)
{
    size_t rank = (size_t)(p * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

static const char *verdict(double value, double target)
{
    return value <= target ? "ok" : "MISS";
}

typedef struct row_result {
    const char *outcome;
    uint32_t iters;
    double p50_us;
    double p99_us;
    double first_us; /* the warm-up call: counts a new request shape */
    size_t domains;
} row_result;

static int run_row(row_result *out, const topo_snapshot *snap, const shape *sh, mode m,
                   int32_t count, const bench_opts *o, topo_pool *pool)
{
    topo_resource req[] = {{TOPO_GEN_GPU_RESOURCE, GPUS_PER_NODE}};
    topo_podset_spec ps;
    topo_podset_result res;
    topo_gates gates;
    topo_err err = TOPO_ERR_INIT;
    double *samples = NULL;
    int rc = 0;

    memset(&ps, 0, sizeof(ps));
    ps.name = "bench";
    ps.count = count;
    ps.requests = req;
    ps.nrequests = 1;
    if (m == MODE_REQUIRED)
        ps.required = sh->rack;
    else if (m == MODE_PREFERRED)
        ps.preferred = sh->block;
    else
        ps.unconstrained = 1;
    topo_gates_init(&gates);

    if ((samples = calloc(o->max_iters, sizeof(*samples))) == NULL)
        return -1;
    /* One warm-up call, which also gives the outcome. */
    topo_pool_clear(pool);
    double w0 = now_s();
    rc = topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, &err);
    out->first_us = (now_s() - w0) * 1e6;
    if (rc < 0) {
        fprintf(stderr, "bench_engine: %s\n", err.text);
        free(samples);
        return rc;
    }
    out->outcome = res.assignment != NULL ? "placed" : "nofit";
    out->domains = res.assignment != NULL ? res.assignment->ndomains : 0;

    double start = now_s();
    uint32_t n = 0;
    while (n < o->max_iters && (n < o->min_iters || now_s() - start < o->budget_s)) {
        topo_pool_clear(pool);
        double t0 = now_s();
        rc = topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, &err);
        double t1 = now_s();
        if (rc < 0) {
            fprintf(stderr, "bench_engine: %s\n", err.text);
            free(samples);
            return rc;
        }
        samples[n++] = (t1 - t0) * 1e6;
    }
    qsort(samples, n, sizeof(*samples), cmp_double);
    out->iters = n;
    out->p50_us = percentile(samples, n, 0.50);
    out->p99_us = percentile(samples, n, 0.99);
    free(samples);
    return 0;
}

/* The aggregates' upkeep: charge a 64-pod assignment as TAS usage and take
 * it back (what a reservation and its release do to the snapshot), timed as
 * one update. The snapshot keeps the request shapes the rows used. */
static int run_update_row(row_result *out, topo_snapshot *snap, const bench_opts *o,
                          topo_pool *pool)
{
    topo_resource req[] = {{TOPO_GEN_GPU_RESOURCE, GPUS_PER_NODE}};
    topo_podset_spec ps;
    topo_podset_result res;
    topo_err err = TOPO_ERR_INIT;
    memset(&ps, 0, sizeof(ps));
    ps.name = "bench";
    ps.count = 64;
    ps.requests = req;
    ps.nrequests = 1;
    ps.unconstrained = 1;
    topo_pool_clear(pool);
    if (topo_engine_find(&res, snap, &ps, 1, NULL, NULL, pool, &err) < 0 ||
        res.assignment == NULL) {
        fprintf(stderr, "bench_engine: update row: %s\n", res.failure ? res.failure : err.text);
        return -1;
    }
    const topo_assignment *a = res.assignment;
    double *samples = calloc(o->max_iters, sizeof(*samples));
    if (samples == NULL)
        return -1;
    double start = now_s();
    uint32_t n = 0;
    while (n < o->max_iters && (n < o->min_iters || now_s() - start < o->budget_s)) {
        double t0 = now_s();
        for (size_t i = 0; i < a->ndomains; i++)
            topo_snapshot_add_tas_usage(snap, a->domains[i].values, a->nlevels,
                                        a->domains[i].count, req, 1, NULL);
        for (size_t i = 0; i < a->ndomains; i++)
            topo_snapshot_remove_tas_usage(snap, a->domains[i].values, a->nlevels,
                                           a->domains[i].count, req, 1, NULL);
        samples[n++] = (now_s() - t0) * 1e6;
    }
    qsort(samples, n, sizeof(*samples), cmp_double);
    out->outcome = "done";
    out->iters = n;
    out->domains = a->ndomains;
    out->p50_us = percentile(samples, n, 0.50);
    out->p99_us = percentile(samples, n, 0.99);
    free(samples);
    return 0;
}

/* One cluster size in one level shape: generate, build, run every row. */
static int run_config(uint32_t nodes, const shape *sh, const bench_opts *o)
{
    topo_pool *gen_pool = topo_pool_create(), *pool = topo_pool_create();
    topo_gen_cluster *cluster = NULL;
    topo_snapshot *snap = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts g;
    int rc = -1;

    if (gen_pool == NULL || pool == NULL)
        goto cleanup;
    topo_gen_opts_init(&g);
    g.nodes = nodes;
    g.nvlink_nodes = 1;
    g.gpus_per_node = GPUS_PER_NODE;
    g.with_usage = o->usage > 0.0;
    g.usage_seed = o->seed;
    g.usage_fraction = o->usage;
    if (topo_gen_cluster_build(&cluster, &g, gen_pool, &err) < 0) {
        fprintf(stderr, "bench_engine: %s\n", err.text);
        goto cleanup;
    }

    double t0 = now_s();
    if (topo_gen_snapshot(&snap, cluster, "bench", sh->levels, sh->nlevels, &err) < 0) {
        fprintf(stderr, "bench_engine: snapshot: %s\n", err.text);
        goto cleanup;
    }
    double build_ms = (now_s() - t0) * 1e3;
    size_t busy = cluster->npods;
    /* The generated cluster is input, not engine state: drop it before
     * measuring the engine's footprint. */
    topo_pool_free(gen_pool);
    gen_pool = NULL;
    cluster = NULL;

    printf("\n%" PRIu32 " nodes x %d GPUs, %s (%zu busy nodes)\n", nodes, GPUS_PER_NODE,
           sh->name, busy);
    printf("  snapshot build  %9.2f ms", build_ms);
    if (nodes == 10000)
        printf("   target <= %.0f ms: %s", TARGET_10K_BUILD_MS,
               verdict(build_ms, TARGET_10K_BUILD_MS));
    printf("\n");
    printf("  %5s  %-20s %-7s %4s %7s %10s %10s %10s   %s\n", "pods", "request", "result",
           "doms", "iters", "1st us", "p50 us", "p99 us", "target");

    static const char *const mode_names[] = {"required rack", "preferred", "unconstrained"};
    for (size_t s = 0; s < sizeof(podset_sizes) / sizeof(podset_sizes[0]); s++) {
        for (int m = MODE_REQUIRED; m <= MODE_UNCONSTRAINED; m++) {
            row_result r;
            char label[48];
            if (m == MODE_PREFERRED)
                snprintf(label, sizeof(label), "preferred %s", sh->block_name);
            else
                snprintf(label, sizeof(label), "%s", mode_names[m]);
            if (run_row(&r, snap, sh, (mode)m, podset_sizes[s], o, pool) < 0)
                goto cleanup;
            printf("  %5" PRId32 "  %-20s %-7s %4zu %7" PRIu32 " %10.1f %10.1f %10.1f",
                   podset_sizes[s], label, r.outcome, r.domains, r.iters, r.first_us, r.p50_us,
                   r.p99_us);
            if (nodes == 10000 && podset_sizes[s] == 64)
                printf("   p99 <= %.0f us: %s", TARGET_10K_P99_64_US,
                       verdict(r.p99_us, TARGET_10K_P99_64_US));
            else if (nodes == 60000)
                printf("   p99 <= %.0f us: %s", TARGET_60K_P99_US,
                       verdict(r.p99_us, TARGET_60K_P99_US));
            printf("\n");
            fflush(stdout);
        }
    }
    row_result u;
    if (run_update_row(&u, snap, o, pool) < 0)
        goto cleanup;
    printf("  %5d  %-20s %-7s %4zu %7" PRIu32 " %10s %10.1f %10.1f\n", 64, "reserve+release",
           u.outcome, u.domains, u.iters, "", u.p50_us, u.p99_us);
    double rss = peak_rss_mib();
    printf("  peak RSS        %9.1f MiB%s", rss, o->fork_each ? "" : " (whole process so far)");
    if (nodes == 10000)
        printf("  target <= %.0f MiB: %s", TARGET_10K_RSS_MIB, verdict(rss, TARGET_10K_RSS_MIB));
    printf("\n");
    rc = 0;

cleanup:
    fflush(stdout);
    topo_snapshot_free(snap);
    topo_pool_free(pool);
    topo_pool_free(gen_pool);
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_engine [--quick] [--sizes N,N,...] [--shape 3|6|all]\n"
            "                    [--iterations N] [--budget SECONDS] [--usage F] [--seed S]\n"
            "                    [--no-fork]\n"
            "\n"
            "  --quick          1k and 10k nodes, fewer iterations\n"
            "  --sizes          node counts (default 1000,10000,60000)\n"
            "  --shape          3 = block/rack/hostname, 6 = dc/spine/leaf/rack/nvlink/\n"
            "                   hostname, all (default)\n"
            "  --iterations N   most timed calls per row (default 2000)\n"
            "  --budget S       time per row before stopping early (default 1.0)\n"
            "  --usage F        share of busy nodes (default 0.3)\n"
            "  --seed S         usage seed (default 1)\n"
            "  --no-fork        run every configuration in this process (peak RSS is then\n"
            "                   cumulative)\n");
}

static int parse_sizes(bench_opts *o, const char *text)
{
    const char *p = text;
    o->nsizes = 0;
    while (*p != '\0') {
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (errno != 0 || end == p || v == 0 || v > TOPO_MAX_GEN_NODES || o->nsizes == MAX_SIZES)
            return -1;
        o->sizes[o->nsizes++] = (uint32_t)v;
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        p = end;
    }
    return o->nsizes > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench_opts o = {{1000, 10000, 60000}, 3, 3, 2000, 20, 1.0, 0.3, 1, 1};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            o.sizes[0] = 1000;
            o.sizes[1] = 10000;
            o.nsizes = 2;
            o.max_iters = 300;
            o.min_iters = 10;
            o.budget_s = 0.2;
        } else if (strcmp(a, "--no-fork") == 0) {
            o.fork_each = 0;
        } else if (v == NULL) {
            fprintf(stderr, "bench_engine: %s needs a value\n", a);
            return 2;
        } else if (strcmp(a, "--sizes") == 0) {
            if (parse_sizes(&o, v) < 0) {
                fprintf(stderr, "bench_engine: --sizes: bad list \"%s\"\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--shape") == 0) {
            if (strcmp(v, "3") == 0)
                o.shape_mask = 1;
            else if (strcmp(v, "6") == 0)
                o.shape_mask = 2;
            else if (strcmp(v, "all") == 0)
                o.shape_mask = 3;
            else {
                fprintf(stderr, "bench_engine: --shape: 3, 6 or all\n");
                return 2;
            }
            i++;
        } else if (strcmp(a, "--iterations") == 0) {
            unsigned long n = strtoul(v, &end, 10);
            if (*end != '\0' || n == 0 || n > 10000000) {
                fprintf(stderr, "bench_engine: --iterations: bad number \"%s\"\n", v);
                return 2;
            }
            o.max_iters = (uint32_t)n;
            if (o.min_iters > o.max_iters)
                o.min_iters = o.max_iters;
            i++;
        } else if (strcmp(a, "--budget") == 0 || strcmp(a, "--usage") == 0) {
            double d = strtod(v, &end);
            int is_usage = strcmp(a, "--usage") == 0;
            if (*end != '\0' || !(d >= 0.0) || (is_usage && d > 1.0)) {
                fprintf(stderr, "bench_engine: %s: bad number \"%s\"\n", a, v);
                return 2;
            }
            if (is_usage)
                o.usage = d;
            else
                o.budget_s = d;
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            o.seed = strtoull(v, &end, 10);
            if (*end != '\0') {
                fprintf(stderr, "bench_engine: --seed: bad number \"%s\"\n", v);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "bench_engine: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    printf("topo engine benchmark: %d GPUs per node, pods request %d GPUs each, "
           "%.0f%% of nodes busy (seed %" PRIu64 ")\n",
           GPUS_PER_NODE, GPUS_PER_NODE, o.usage * 100.0, o.seed);
    printf("racks of 8 nodes, leaves of 4 racks, spines of 8 leaves; "
           "timings per topo_engine_find call (CLOCK_MONOTONIC)\n");
    fflush(stdout);

    int failures = 0;
    for (size_t s = 0; s < o.nsizes; s++) {
        for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
            if (!(o.shape_mask & (1 << k)))
                continue;
            if (!o.fork_each) {
                failures += run_config(o.sizes[s], &shapes[k], &o) < 0;
                continue;
            }
            /* A child per configuration, so its peak RSS is its own. */
            pid_t pid = fork();
            if (pid < 0) {
                perror("bench_engine: fork");
                return 1;
            }
            if (pid == 0)
                _exit(run_config(o.sizes[s], &shapes[k], &o) < 0 ? 1 : 0);
            int status = 0;
            if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                failures++;
        }
    }
    return failures == 0 ? 0 : 1;
}
