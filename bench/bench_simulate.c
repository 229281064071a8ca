/* topoassign simulate's benchmark (bench/README.md "bench_simulate"): a
 * generated cluster (the hgx-h100 shape, 1,000 nodes x 8 GPUs by default),
 * 100,000 generated jobs, every policy in turn; prints each policy's wall
 * time, placements tried and jobs per second, the total against the 60 s
 * target and the peak RSS. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topo/generate.h"
#include "topo/simulate.h"

#define TARGET_SECONDS 60.0

typedef struct bench_opts {
    const char *shape, *preset;
    unsigned long nodes, jobs;
    uint64_t seed;
    double load;
} bench_opts;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : -1.0;
}

static int usage(FILE *out)
{
    fprintf(out, "usage: bench_simulate [--shape hgx-h100|gb200-nvl72] [--nodes N] [--jobs N]\n"
                 "                      [--preset philly|helios|acme] [--load X] [--seed S]\n");
    return out == stdout ? 0 : 2;
}

static int parse(bench_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return usage(stdout) + 1;
        if (v == NULL)
            return usage(stderr);
        if (strcmp(a, "--shape") == 0)
            o->shape = v;
        else if (strcmp(a, "--preset") == 0)
            o->preset = v;
        else if (strcmp(a, "--nodes") == 0)
            o->nodes = strtoul(v, NULL, 10);
        else if (strcmp(a, "--jobs") == 0)
            o->jobs = strtoul(v, NULL, 10);
        else if (strcmp(a, "--seed") == 0)
            o->seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--load") == 0)
            o->load = strtod(v, NULL);
        else
            return usage(stderr);
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o = {"hgx-h100", "philly", 1000, 100000, 1, 0.8};
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_gen_cluster *gc = NULL;
    topo_snapshot *snap = NULL;
    topo_sim_cluster *c = NULL;
    topo_sim_trace *t = NULL;
    const char *const *levels;
    size_t nlevels;
    topo_gen_opts go;
    int rc = parse(&o, argc, argv);
    if (rc != 0)
        return rc == 1 ? 0 : rc;

    topo_sim_shape_opts so = {o.shape, (uint32_t)o.nodes, 0, 0, 0, 0};
    double t0 = now();
    if (pool == NULL || topo_sim_shape(&go, &levels, &nlevels, &so, &err) < 0 ||
        topo_gen_cluster_build(&gc, &go, pool, &err) < 0 ||
        topo_gen_snapshot(&snap, gc, "default", levels, nlevels, &err) < 0 ||
        topo_sim_cluster_create(&c, snap, NULL, &err) < 0 || topo_sim_trace_create(&t, &err) < 0)
        goto fail;
    topo_sim_gen_opts g;
    memset(&g, 0, sizeof(g));
    g.preset = o.preset;
    g.jobs = (uint32_t)o.jobs;
    g.seed = o.seed;
    g.load = o.load;
    g.capacity = topo_sim_cluster_capacity(c);
    g.gpus_per_node = topo_sim_cluster_max_node(c);
    if (topo_sim_trace_generate(t, &g, &err) < 0)
        goto fail;
    double t1 = now();
    printf("cluster %s: %zu nodes, %" PRIu64 " GPUs; %lu jobs (%s, load %g); setup %.2f s\n",
           o.shape, topo_sim_cluster_node_count(c), topo_sim_cluster_capacity(c), o.jobs,
           o.preset, o.load, t1 - t0);
    printf("%-16s %9s %11s %12s %10s %8s\n", "policy", "wall s", "attempts", "jobs/s",
           "tight", "util");
    double total = 0;
    for (int p = 0; p < TOPO_SIM_POLICIES; p++) {
        topo_sim_result *r = NULL;
        double a = now();
        if (topo_sim_run(&r, c, t, (topo_sim_policy)p, NULL, &err) < 0)
            goto fail;
        double s = now() - a;
        const topo_sim_metrics *m = topo_sim_result_metrics(r);
        total += s;
        printf("%-16s %9.2f %11" PRIu64 " %12.0f %9.1f%% %7.1f%%\n", m->policy, s, m->attempts,
               (double)o.jobs / s, 100 * m->tight_share, 100 * m->utilisation);
        fflush(stdout);
        topo_sim_result_free(r);
    }
    printf("all %d policies %.2f s (target <= %.0f s: %s); peak RSS %.1f MiB\n",
           TOPO_SIM_POLICIES, total, TARGET_SECONDS, total <= TARGET_SECONDS ? "ok" : "MISS",
           peak_rss_mib());
    rc = 0;
    goto cleanup;

fail:
    fprintf(stderr, "bench_simulate: %s\n", err.text);
    rc = 1;
cleanup:
    topo_sim_trace_free(t);
    topo_sim_cluster_free(c);
    topo_snapshot_free(snap);
    topo_pool_free(pool);
    return rc;
}
