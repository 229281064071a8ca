/* bench_packing: CPU per topo_packing_find call (the packing rule over a
 * snapshot, what topo-webhook runs for a GPU pod without a topology
 * request) on generated GPU clusters, half of whose racks are partly used.
 * Prints figures, not pass/fail. See bench/README.md. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/engine.h"
#include "topo/generate.h"
#include "topo/model.h"
#include "topo/packing.h"
#include "topo/pool.h"

#define GPUS_PER_NODE 8
#define ITERS 20000
#define PICKS 4
/* More distinct pod shapes than the snapshot keeps (8): every call counts
 * its shape over the nodes again. */
#define ROTATING_SHAPES 12
/* Topology placements topo-webhook makes meanwhile: fewer than the
 * snapshot keeps, so alone every call finds its shape counted. */
#define TOPOLOGY_SHAPES 6

static const char *const levels3[] = {TOPO_GEN_LABEL_BLOCK, TOPO_GEN_LABEL_RACK,
                                      TOPO_GEN_LABEL_HOSTNAME};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *v, size_t n, double p)
{
    size_t i = (size_t)(p * (double)n + 0.999999);
    return n == 0 ? 0.0 : v[(i == 0 ? 1 : i > n ? n : i) - 1];
}

typedef struct row {
    double first_us, p50_us, p99_us;
    size_t picks;
    uint32_t iters;
} row;

/* Timed calls for a pod of `gpus` GPUs and `cpu` millicores; rotate > 0
 * varies the cpu request over that many values, one per call. */
static int run_row(row *out, const topo_snapshot *snap, int64_t gpus, int64_t cpu, int rotate,
                   uint32_t iters)
{
    topo_pool *pool = topo_pool_create();
    double *samples = calloc(iters, sizeof(*samples));
    topo_packing_pick picks[PICKS];
    topo_resource req[2] = {{TOPO_GEN_GPU_RESOURCE, gpus}, {"cpu", cpu}};
    topo_podset_spec pod;
    topo_err err = TOPO_ERR_INIT;
    int rc = -1;
    if (pool == NULL || samples == NULL)
        goto cleanup;
    memset(&pod, 0, sizeof(pod));
    pod.name = "main";
    pod.count = 1;
    pod.requests = req;
    pod.nrequests = 2;
    for (uint32_t i = 0; i <= iters; i++) {
        if (rotate > 0)
            req[1].amount = cpu + 100 * (int64_t)(i % (uint32_t)rotate);
        double t0 = now_s();
        if (topo_packing_find(picks, &out->picks, PICKS, snap, &pod, TOPO_GEN_LABEL_RACK,
                              TOPO_GEN_GPU_RESOURCE, pool, &err) != 0) {
            fprintf(stderr, "bench_packing: %s\n", err.text);
            goto cleanup;
        }
        double us = (now_s() - t0) * 1e6;
        if (i == 0)
            out->first_us = us; /* counts the shape and the sums */
        else
            samples[i - 1] = us;
        topo_pool_clear(pool);
    }
    qsort(samples, iters, sizeof(*samples), cmp_double);
    out->iters = iters;
    out->p50_us = percentile(samples, iters, 0.50);
    out->p99_us = percentile(samples, iters, 0.99);
    rc = 0;
cleanup:
    free(samples);
    topo_pool_free(pool);
    return rc;
}

/* The 12 pods of a cluster's GPU workloads without topology requests:
 * 1, 2, 4 or 8 GPUs, each with its own cpu and memory (notebooks, every
 * team's inference replicas). */
static void mixed_pod(topo_resource req[3], uint32_t i)
{
    static const int64_t gpus[4] = {1, 2, 4, 8};
    uint32_t k = i % ROTATING_SHAPES;
    req[0] = (topo_resource){TOPO_GEN_GPU_RESOURCE, gpus[k % 4]};
    req[1] = (topo_resource){"cpu", 1000 + 250 * (int64_t)k};
    req[2] = (topo_resource){"memory", ((int64_t)k + 1) << 30};
}

/* Timed packing calls over the 12 pods in turn. */
static int run_mixed_row(row *out, const topo_snapshot *snap, uint32_t iters)
{
    topo_pool *pool = topo_pool_create();
    double *samples = calloc(iters, sizeof(*samples));
    topo_packing_pick picks[PICKS];
    topo_resource req[3];
    topo_podset_spec pod;
    topo_err err = TOPO_ERR_INIT;
    int rc = -1;
    if (pool == NULL || samples == NULL)
        goto cleanup;
    memset(&pod, 0, sizeof(pod));
    pod.name = "main";
    pod.count = 1;
    pod.requests = req;
    pod.nrequests = 3;
    for (uint32_t i = 0; i <= iters; i++) {
        mixed_pod(req, i);
        double t0 = now_s();
        if (topo_packing_find(picks, &out->picks, PICKS, snap, &pod, TOPO_GEN_LABEL_RACK,
                              TOPO_GEN_GPU_RESOURCE, pool, &err) != 0) {
            fprintf(stderr, "bench_packing: %s\n", err.text);
            goto cleanup;
        }
        double us = (now_s() - t0) * 1e6;
        if (i == 0)
            out->first_us = us;
        else
            samples[i - 1] = us;
        topo_pool_clear(pool);
    }
    qsort(samples, iters, sizeof(*samples), cmp_double);
    out->iters = iters;
    out->p50_us = percentile(samples, iters, 0.50);
    out->p99_us = percentile(samples, iters, 0.99);
    rc = 0;
cleanup:
    free(samples);
    topo_pool_free(pool);
    return rc;
}

/* topo_engine_find timed for topology requests of TOPOLOGY_SHAPES shapes
 * in turn (8-, 4-, 2- and 1-GPU pods required in a rack, 8-GPU pods
 * preferred in a block), with two untimed packing calls of the 12 pods
 * between placements: what the placements cost while packing runs. */
static int run_placement_row(row *out, const topo_snapshot *snap, uint32_t iters)
{
    static const struct {
        int64_t gpus, cpu;
        int32_t count;
        int block;
    } shapes[TOPOLOGY_SHAPES] = {{8, 32000, 8, 0}, {4, 16000, 8, 0}, {2, 8000, 16, 0},
                                 {1, 4000, 32, 0}, {8, 32000, 16, 1}, {8, 64000, 4, 0}};
    topo_pool *pool = topo_pool_create();
    double *samples = calloc(iters, sizeof(*samples));
    topo_packing_pick picks[PICKS];
    topo_resource mixed[3], req[2];
    topo_podset_spec pod, ps;
    topo_podset_result res;
    topo_gates gates;
    topo_err err = TOPO_ERR_INIT;
    size_t npicks;
    int rc = -1;
    if (pool == NULL || samples == NULL)
        goto cleanup;
    topo_gates_init(&gates);
    memset(&pod, 0, sizeof(pod));
    pod.name = "main";
    pod.count = 1;
    pod.requests = mixed;
    pod.nrequests = 3;
    memset(&ps, 0, sizeof(ps));
    ps.name = "workers";
    ps.requests = req;
    ps.nrequests = 2;
    out->picks = 0;
    for (uint32_t i = 0; i <= iters; i++) {
        uint32_t t = i % TOPOLOGY_SHAPES;
        req[0] = (topo_resource){TOPO_GEN_GPU_RESOURCE, shapes[t].gpus};
        req[1] = (topo_resource){"cpu", shapes[t].cpu};
        ps.count = shapes[t].count;
        ps.required = shapes[t].block ? NULL : TOPO_GEN_LABEL_RACK;
        ps.preferred = shapes[t].block ? TOPO_GEN_LABEL_BLOCK : NULL;
        double t0 = now_s();
        if (topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, &err) != 0) {
            fprintf(stderr, "bench_packing: %s\n", err.text);
            goto cleanup;
        }
        double us = (now_s() - t0) * 1e6;
        if (i == 0)
            out->first_us = us;
        else
            samples[i - 1] = us;
        if (res.assignment != NULL)
            out->picks++; /* this row's picks: the calls that placed */
        topo_pool_clear(pool);
        for (uint32_t j = 0; j < 2; j++) {
            mixed_pod(mixed, 2 * i + j);
            if (topo_packing_find(picks, &npicks, PICKS, snap, &pod, TOPO_GEN_LABEL_RACK,
                                  TOPO_GEN_GPU_RESOURCE, pool, &err) != 0) {
                fprintf(stderr, "bench_packing: %s\n", err.text);
                goto cleanup;
            }
            topo_pool_clear(pool);
        }
    }
    qsort(samples, iters, sizeof(*samples), cmp_double);
    out->iters = iters;
    out->p50_us = percentile(samples, iters, 0.50);
    out->p99_us = percentile(samples, iters, 0.99);
    rc = 0;
cleanup:
    free(samples);
    topo_pool_free(pool);
    return rc;
}

/* Fills the shape cache: 8 packing shapes (1 to 8 GPUs) and 8 placement
 * shapes (1, 2, 4 or 8 GPUs with 1 or 2 cores, 2 pods required in a rack),
 * each of the 8 + 8 used last; before packing had a budget of its own the
 * snapshot kept 8 shapes in all. */
static int fill_shapes(const topo_snapshot *snap)
{
    static const int64_t gpus[4] = {1, 2, 4, 8};
    topo_pool *pool = topo_pool_create();
    topo_packing_pick picks[PICKS];
    topo_resource req[2];
    topo_podset_spec pod;
    topo_podset_result res;
    topo_err err = TOPO_ERR_INIT;
    size_t npicks;
    int rc = 0;
    if (pool == NULL)
        return -1;
    memset(&pod, 0, sizeof(pod));
    pod.name = "fill";
    pod.requests = req;
    pod.nrequests = 2;
    for (int i = 0; i < 8 && rc == 0; i++) {
        pod.count = 1;
        pod.required = NULL;
        req[0] = (topo_resource){TOPO_GEN_GPU_RESOURCE, 1 + i};
        req[1] = (topo_resource){"cpu", 1000};
        rc = topo_packing_find(picks, &npicks, PICKS, snap, &pod, TOPO_GEN_LABEL_RACK,
                               TOPO_GEN_GPU_RESOURCE, pool, &err);
        pod.count = 2;
        pod.required = TOPO_GEN_LABEL_RACK;
        req[0].amount = gpus[i % 4];
        req[1].amount = 1000 * (1 + i / 4);
        if (rc == 0)
            rc = topo_engine_find(&res, snap, &pod, 1, NULL, NULL, pool, &err);
        topo_pool_clear(pool);
    }
    if (rc != 0)
        fprintf(stderr, "bench_packing: %s\n", err.text);
    topo_pool_free(pool);
    return rc;
}

/* A pod bound and finished on one node, with the packing shape and sums
 * tracked: the upkeep every usage change pays. */
static void run_upkeep(row *out, topo_snapshot *snap, const char *node, uint32_t iters)
{
    topo_resource req[2] = {{TOPO_GEN_GPU_RESOURCE, 1}, {"cpu", 1000}};
    double *samples = calloc(iters, sizeof(*samples));
    if (samples == NULL)
        return;
    for (uint32_t i = 0; i < iters; i++) {
        double t0 = now_s();
        (void)topo_snapshot_add_pod_usage(snap, node, req, 2, NULL, NULL);
        (void)topo_snapshot_remove_pod_usage(snap, node, req, 2, NULL);
        samples[i] = (now_s() - t0) * 1e6;
    }
    qsort(samples, iters, sizeof(*samples), cmp_double);
    out->iters = iters;
    out->p50_us = percentile(samples, iters, 0.50);
    out->p99_us = percentile(samples, iters, 0.99);
    free(samples);
}

static void print_row(const char *label, const row *r)
{
    printf("  %-34s %5zu %7" PRIu32 " %10.1f %10.1f %10.1f\n", label, r->picks, r->iters,
           r->first_us, r->p50_us, r->p99_us);
}

static int run_config(uint32_t nodes)
{
    topo_pool *gen_pool = topo_pool_create();
    topo_gen_cluster *cluster = NULL;
    topo_snapshot *snap = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gen_opts g;
    int rc = -1;
    size_t used_racks = 0;
    row r;

    if (gen_pool == NULL)
        goto cleanup;
    topo_gen_opts_init(&g);
    g.nodes = nodes;
    g.gpus_per_node = GPUS_PER_NODE;
    g.with_usage = 0;
    if (topo_gen_cluster_build(&cluster, &g, gen_pool, &err) < 0 ||
        topo_gen_snapshot(&snap, cluster, "bench", levels3, 3, &err) < 0) {
        fprintf(stderr, "bench_packing: %s\n", err.text);
        goto cleanup;
    }
    /* Half the racks partly used: every other rack runs a 3-GPU pod on
     * its first node and a whole-node one on its second. */
    uint32_t per_rack = cluster->shape.nodes_per_rack;
    topo_resource part[2] = {{TOPO_GEN_GPU_RESOURCE, 3}, {"cpu", 8000}};
    topo_resource whole[2] = {{TOPO_GEN_GPU_RESOURCE, GPUS_PER_NODE}, {"cpu", 32000}};
    for (size_t i = 0; i + 1 < cluster->nnodes; i += 2 * (size_t)per_rack) {
        if (topo_snapshot_add_pod_usage(snap, cluster->nodes[i].name, part, 2, NULL, &err) < 0 ||
            topo_snapshot_add_pod_usage(snap, cluster->nodes[i + 1].name, whole, 2, NULL,
                                        &err) < 0) {
            fprintf(stderr, "bench_packing: %s\n", err.text);
            goto cleanup;
        }
        used_racks++;
    }
    printf("\n%" PRIu32 " nodes x %d GPUs, block/rack/hostname, %zu of %zu racks partly used\n",
           nodes, GPUS_PER_NODE, used_racks, (cluster->nnodes + per_rack - 1) / per_rack);
    printf("  %-34s %5s %7s %10s %10s %10s\n", "call", "picks", "iters", "1st us", "p50 us",
           "p99 us");
    if (run_row(&r, snap, 1, 4000, 0, ITERS) < 0)
        goto cleanup;
    print_row("1 GPU, same shape", &r);
    if (run_row(&r, snap, 4, 16000, 0, ITERS) < 0)
        goto cleanup;
    print_row("4 GPUs, same shape", &r);
    if (run_row(&r, snap, 2, 8000, ROTATING_SHAPES, ITERS / 20) < 0)
        goto cleanup;
    print_row("2 GPUs, cpu in 12 values in turn", &r);
    if (run_mixed_row(&r, snap, ITERS / 20) < 0)
        goto cleanup;
    print_row("12 pods: 1-8 GPUs, cpu/mem vary", &r);
    if (run_placement_row(&r, snap, ITERS / 40) < 0)
        goto cleanup;
    print_row("topology placement while packing", &r);
    r.picks = 0;
    r.first_us = 0;
    run_upkeep(&r, snap, cluster->nodes[0].name, ITERS);
    print_row("upkeep: pod bound+finished", &r);
    if (fill_shapes(snap) != 0)
        goto cleanup;
    run_upkeep(&r, snap, cluster->nodes[0].name, ITERS);
    print_row("upkeep, 8+8 shapes used", &r);
    rc = 0;
cleanup:
    fflush(stdout);
    topo_snapshot_free(snap);
    topo_pool_free(gen_pool);
    return rc;
}

int main(int argc, char **argv)
{
    uint32_t sizes[8] = {10000, 60000};
    size_t n = 2;
    if (argc > 1) {
        n = 0;
        for (int i = 1; i < argc && n < 8; i++)
            sizes[n++] = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    printf("topo packing benchmark: topo_packing_find at the rack level, k = %d; "
           "CLOCK_MONOTONIC per call\n",
           PICKS);
    for (size_t i = 0; i < n; i++)
        if (run_config(sizes[i]) != 0)
            return 1;
    return 0;
}
