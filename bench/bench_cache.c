/* bench_cache: how fast the topology cache takes what a filler sends it.
 *
 *   1. upsert N nodes (kubectl-shaped JSON) in batches;
 *   2. upsert M pods in batches;
 *   3. apply E pod MODIFIED watch events (phase, node, resourceVersion
 *      changes) in batches, as a filler does after the initial list;
 *   4. build the engine's snapshot from the file (topo_cache_snapshot).
 *
 * Each step prints rows/s; the time counted is the cache calls only (the
 * JSON text is generated between them). Then the file size and peak RSS.
 *
 * usage: bench_cache [--nodes N] [--pods N] [--events N] [--batch N] [--keep FILE] */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "topo/cache.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const topo_err *err)
{
    fprintf(stderr, "bench_cache: %s: %s\n", what, err->text);
    exit(1);
}

static int node_json(char *buf, size_t size, int i)
{
    return snprintf(
        buf, size,
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%05d\","
        "\"resourceVersion\":\"%d\",\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\","
        "\"kubernetes.io/arch\":\"amd64\",\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\","
        "\"topology.topo.io/datacenter\":\"dc1\",\"topology.topo.io/spine\":\"spine-%d\","
        "\"topology.topo.io/leaf\":\"leaf-%d\",\"topology.topo.io/rack\":\"rack-%d\","
        "\"topology.topo.io/nvlink\":\"node-%05d\"}},\"spec\":{\"podCIDR\":\"10.%d.%d.0/24\"},"
        "\"status\":{\"capacity\":{\"cpu\":\"224\",\"memory\":\"2113389504Ki\","
        "\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"223500m\","
        "\"memory\":\"2113287104Ki\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\","
        "\"ephemeral-storage\":\"28Ti\"},\"conditions\":[{\"type\":\"MemoryPressure\","
        "\"status\":\"False\"},{\"type\":\"DiskPressure\",\"status\":\"False\"},"
        "{\"type\":\"PIDPressure\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\","
        "\"reason\":\"KubeletReady\"}]}}",
        i, 1000 + i, i, i / 256, i / 32, i / 8, i, (i / 256) % 256, i % 256);
}

static int pod_json(char *buf, size_t size, int i, int nnodes, int version, const char *phase)
{
    return snprintf(
        buf, size,
        "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
        "{\"name\":\"train-%d\",\"namespace\":\"ml\",\"uid\":\"9b1f%04x-0000-4000-8000-%012d\","
        "\"resourceVersion\":\"%d\",\"labels\":{\"app\":\"train\",\"job-name\":\"train-%d\","
        "\"controller-uid\":\"c-%d\",\"batch.kubernetes.io/job-completion-index\":\"%d\"},"
        "\"annotations\":{\"kueue.x-k8s.io/pod-group-total-count\":\"8\"}},\"spec\":{\"nodeName\":"
        "\"node-%05d\",\"containers\":[{\"name\":\"trainer\",\"image\":\"nvcr.io/pytorch:24.10\","
        "\"resources\":{\"requests\":{\"cpu\":\"16\",\"memory\":\"128Gi\",\"nvidia.com/gpu\":\"1\"},"
        "\"limits\":{\"nvidia.com/gpu\":\"1\"}}},{\"name\":\"sidecar\",\"resources\":{\"requests\":"
        "{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}],\"initContainers\":[{\"name\":\"init\","
        "\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],\"tolerations\":[{\"key\":"
        "\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]},"
        "\"status\":{\"phase\":\"%s\",\"qosClass\":\"Burstable\"}}}",
        i, i & 0xffff, i, version, i / 8, i / 8, i % 8, i % nnodes, phase);
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void report(const char *what, long rows, double secs)
{
    printf("%-34s %8ld rows  %8.3f s  %10.0f rows/s\n", what, rows, secs,
           secs > 0 ? (double)rows / secs : 0.0);
}

int main(int argc, char **argv)
{
    long nnodes = 10000, npods = 100000, nevents = 100000, batch = 1000;
    const char *keep = NULL;
    char path[256], buf[4096], wal[300];
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    double t, spent;

    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--nodes") == 0)
            nnodes = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--pods") == 0)
            npods = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--events") == 0)
            nevents = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--batch") == 0)
            batch = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--keep") == 0)
            keep = argv[++i];
        else {
            fprintf(stderr, "usage: bench_cache [--nodes N] [--pods N] [--events N] [--batch N] "
                            "[--keep FILE]\n");
            return 2;
        }
    }
    if (nnodes < 1 || npods < 0 || nevents < 0 || batch < 1)
        return 2;
    if (keep != NULL)
        snprintf(path, sizeof(path), "%s", keep);
    else
        snprintf(path, sizeof(path), "%s/bench_cache_%ld.db",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    snprintf(wal, sizeof(wal), "%s-wal", path);
    unlink(path);
    unlink(wal);
    if (topo_cache_open(&c, path, NULL, &err) < 0)
        die("open", &err);
    printf("bench_cache: %ld nodes, %ld pods, %ld pod events, %ld rows per transaction, %s\n",
           nnodes, npods, nevents, batch, path);

    /* 1. nodes */
    spent = 0;
    for (long i = 0; i < nnodes; i++) {
        size_t len = (size_t)node_json(buf, sizeof(buf), (int)i);
        t = now_s();
        if (i % batch == 0 && topo_cache_begin(c, &err) < 0)
            die("begin", &err);
        if (topo_cache_upsert_node(c, buf, len, &err) < 0)
            die("upsert node", &err);
        if ((i % batch == batch - 1 || i == nnodes - 1) && topo_cache_commit(c, &err) < 0)
            die("commit", &err);
        spent += now_s() - t;
    }
    report("upsert nodes", nnodes, spent);

    /* 2. pods (the object of the event line) */
    spent = 0;
    for (long i = 0; i < npods; i++) {
        pod_json(buf, sizeof(buf), (int)i, (int)nnodes, 2000000 + (int)i, "Running");
        const char *obj = strstr(buf, "\"object\":") + 9;
        size_t len = strlen(obj) - 1; /* without the event's closing brace */
        t = now_s();
        if (i % batch == 0 && topo_cache_begin(c, &err) < 0)
            die("begin", &err);
        if (topo_cache_upsert_pod(c, obj, len, &err) < 0)
            die("upsert pod", &err);
        if ((i % batch == batch - 1 || i == npods - 1) && topo_cache_commit(c, &err) < 0)
            die("commit", &err);
        spent += now_s() - t;
    }
    report("upsert pods", npods, spent);

    /* 3. watch events on those pods */
    spent = 0;
    for (long i = 0; i < nevents && npods > 0; i++) {
        int p = (int)((i * 7919) % npods);
        size_t len = (size_t)pod_json(buf, sizeof(buf), p, (int)nnodes, 3000000 + (int)i,
                                      i % 3 == 0 ? "Succeeded" : "Running");
        t = now_s();
        if (i % batch == 0 && topo_cache_begin(c, &err) < 0)
            die("begin", &err);
        if (topo_cache_apply_event(c, TOPO_CACHE_PODS, buf, len, &err) < 0)
            die("apply event", &err);
        if ((i % batch == batch - 1 || i == nevents - 1) && topo_cache_commit(c, &err) < 0)
            die("commit", &err);
        spent += now_s() - t;
    }
    report("apply pod MODIFIED events", nevents, spent);

    /* 4. the engine's snapshot from the file */
    static const char *const levels[] = {"topology.topo.io/spine", "topology.topo.io/leaf",
                                         "topology.topo.io/rack", "kubernetes.io/hostname"};
    topo_cache_snapshot_opts so = {0};
    topo_snapshot *snap = NULL;
    so.snapshot.topology_name = "default";
    so.snapshot.levels = levels;
    so.snapshot.nlevels = 4;
    t = now_s();
    if (topo_cache_snapshot(&snap, c, &so, NULL, &err) < 0)
        die("snapshot", &err);
    spent = now_s() - t;
    printf("%-34s %8zu nodes %8.3f s\n", "snapshot from the cache", topo_snapshot_node_count(snap),
           spent);
    topo_snapshot_free(snap);

    topo_cache_close(c);
    struct stat st;
    long size = stat(path, &st) == 0 ? (long)st.st_size : -1;
    printf("file %.1f MiB, peak RSS %.1f MiB\n", (double)size / 1048576.0,
           (double)peak_rss_kib() / 1024.0);
    if (keep == NULL) {
        unlink(path);
        unlink(wal);
        snprintf(wal, sizeof(wal), "%s-shm", path);
        unlink(wal);
    }
    return 0;
}
