/* topoassign simulate's benchmark (bench/README.md "bench_simulate"): a
 * generated cluster (the hgx-h100 shape, 1,000 nodes x 8 GPUs by default),
 * 100,000 generated jobs, every policy in turn; prints each policy's wall
 * time, placements tried and jobs per second, the total against the 60 s
 * target and the peak RSS. --queue-heavy PAIRS: instead, the trace of
 * issue 33 item 9 on 8 nodes, whose queue holds PAIRS jobs that cannot
 * start (each policy against 3 s for 50,000 pairs, 100,008 jobs). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topo/buf.h"
#include "topo/generate.h"
#include "topo/simulate.h"

#define TARGET_SECONDS 60.0
#define QUEUE_HEAVY_TARGET_SECONDS 3.0

typedef struct bench_opts {
    const char *shape, *preset;
    unsigned long nodes, jobs;
    uint64_t seed;
    double load;
    unsigned long queue_heavy; /* pairs; 0: the generated trace */
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
                 "                      [--preset philly|helios|acme] [--load X] [--seed S]\n"
                 "       bench_simulate --queue-heavy PAIRS\n");
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
        else if (strcmp(a, "--queue-heavy") == 0)
            o->queue_heavy = strtoul(v, NULL, 10);
        else
            return usage(stderr);
    }
    return 0;
}

/* Issue 33 item 9's trace: on 8 whole HGX nodes, 7 whole-node jobs and a
 * half-node job that outlast the run, then pairs of a whole-node 100 s job
 * (never fits: it queues) and a 1-GPU 10 s job (fits in the half node, and
 * each one's end retries the queue), one pair a second. */
static int queue_heavy_trace(topo_sim_trace *t, unsigned long pairs, topo_err *err)
{
    topo_buf b = TOPO_BUF_INIT(0);
    topo_buf_printf(&b, "t_arrive,job_id,pods,gpus_per_pod,duration_s\n");
    for (int i = 0; i < 7; i++)
        topo_buf_printf(&b, "0,long-%d,1,8,100000000\n", i);
    topo_buf_printf(&b, "0,half,1,4,100000000\n");
    for (unsigned long i = 0; i < pairs; i++)
        topo_buf_printf(&b, "%lu,big-%lu,1,8,100\n%lu,small-%lu,1,1,10\n", i + 1, i, i + 1, i);
    int rc = b.error != 0 ? topo_err_nomem(err, "queue-heavy trace")
                          : topo_sim_trace_parse_csv(t, b.ptr, b.len, "queue-heavy", err);
    topo_buf_dispose(&b);
    return rc;
}

int main(int argc, char **argv)
{
    bench_opts o = {"hgx-h100", "philly", 1000, 100000, 1, 0.8, 0};
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

    if (o.queue_heavy > 0) {
        o.shape = "hgx-h100";
        o.nodes = 8;
        o.jobs = 2 * o.queue_heavy + 8;
    }
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
    if (o.queue_heavy > 0 ? queue_heavy_trace(t, o.queue_heavy, &err) < 0
                          : topo_sim_trace_generate(t, &g, &err) < 0)
        goto fail;
    double t1 = now();
    if (o.queue_heavy > 0)
        printf("cluster %s: %zu nodes, %" PRIu64 " GPUs; %lu jobs (queue-heavy, %lu pairs); "
               "setup %.2f s\n",
               o.shape, topo_sim_cluster_node_count(c), topo_sim_cluster_capacity(c), o.jobs,
               o.queue_heavy, t1 - t0);
    else
        printf("cluster %s: %zu nodes, %" PRIu64 " GPUs; %lu jobs (%s, load %g); setup %.2f s\n",
               o.shape, topo_sim_cluster_node_count(c), topo_sim_cluster_capacity(c), o.jobs,
               o.preset, o.load, t1 - t0);
    printf("%-16s %9s %11s %12s %10s %8s\n", "policy", "wall s", "attempts", "jobs/s",
           "tight", "util");
    double total = 0, slowest = 0;
    for (int p = 0; p < TOPO_SIM_POLICIES; p++) {
        topo_sim_result *r = NULL;
        double a = now();
        if (topo_sim_run(&r, c, t, (topo_sim_policy)p, NULL, &err) < 0)
            goto fail;
        double s = now() - a;
        const topo_sim_metrics *m = topo_sim_result_metrics(r);
        total += s;
        slowest = s > slowest ? s : slowest;
        printf("%-16s %9.2f %11" PRIu64 " %12.0f %9.1f%% %7.1f%%\n", m->policy, s, m->attempts,
               (double)o.jobs / s, 100 * m->tight_share, 100 * m->utilisation);
        fflush(stdout);
        topo_sim_result_free(r);
    }
    if (o.queue_heavy > 0)
        printf("slowest policy %.2f s (target <= %.0f s each: %s); all %d %.2f s; peak RSS "
               "%.1f MiB\n",
               slowest, QUEUE_HEAVY_TARGET_SECONDS,
               slowest <= QUEUE_HEAVY_TARGET_SECONDS ? "ok" : "MISS", TOPO_SIM_POLICIES, total,
               peak_rss_mib());
    else
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
