/* libFuzzer harness for topoassign simulate's CSV trace reader
 * (topo_sim_trace_parse_csv): any bytes give a trace or an error that says
 * what, never a crash or a leak. A trace read is written back and must read
 * the same; a small one is then simulated under topo and kube-default on a
 * four-node cluster, so whatever its annotations ask for also goes through
 * the engine and the event loop. Seeds: fixtures/fuzz/simtrace. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/simulate.h"

#define SMALL_JOBS 32
#define SMALL_PODS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static topo_snapshot *cluster(void)
{
    static const char *const levels[] = {"topology.topo.io/rack", "kubernetes.io/hostname"};
    static const char *const names[] = {"a", "b", "c", "d"};
    topo_snapshot_opts o = {"default", levels, 2, NULL, 0};
    topo_snapshot *snap = NULL;
    if (topo_snapshot_create(&snap, &o, NULL) < 0)
        return NULL;
    for (size_t i = 0; i < 4; i++) {
        topo_kv labels[2] = {{levels[0], i < 2 ? "r1" : "r2"}, {levels[1], names[i]}};
        topo_resource alloc[2] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
        topo_node_spec n;
        memset(&n, 0, sizeof(n));
        n.name = names[i];
        n.labels = labels;
        n.nlabels = 2;
        n.allocatable = alloc;
        n.nallocatable = 2;
        n.ready = 1;
        if (topo_snapshot_add_node(snap, &n, NULL) < 0) {
            topo_snapshot_free(snap);
            return NULL;
        }
    }
    if (topo_snapshot_build(snap, NULL) < 0) {
        topo_snapshot_free(snap);
        return NULL;
    }
    return snap;
}

static int small(const topo_sim_trace *t)
{
    if (topo_sim_trace_count(t) > SMALL_JOBS)
        return 0;
    for (size_t i = 0; i < topo_sim_trace_count(t); i++)
        if (topo_sim_trace_job(t, i)->pods > SMALL_PODS)
            return 0;
    return 1;
}

static void simulate(const topo_sim_trace *t)
{
    topo_snapshot *snap = cluster();
    topo_sim_cluster *c = NULL;
    if (snap == NULL || topo_sim_cluster_create(&c, snap, NULL, NULL) < 0)
        abort();
    for (int p = 0; p < 2; p++) {
        topo_sim_result *r = NULL;
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_sim_run(&r, c, t, p == 0 ? TOPO_SIM_TOPO : TOPO_SIM_KUBE_DEFAULT, NULL,
                              &err);
        if (rc == 0) {
            const topo_sim_metrics *m = topo_sim_result_metrics(r);
            if (m->placed + m->unplaceable != topo_sim_trace_count(t))
                abort(); /* every job starts or is found never to fit */
        } else if (rc != TOPO_EINVALID || err.text[0] == '\0') {
            abort(); /* only a level the cluster lacks, and it says so */
        }
        topo_sim_result_free(r);
    }
    topo_sim_cluster_free(c);
    topo_snapshot_free(snap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_sim_trace *t = NULL, *back = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_buf b = TOPO_BUF_INIT(0);
    if (topo_sim_trace_create(&t, NULL) < 0 || topo_sim_trace_create(&back, NULL) < 0)
        abort();
    if (topo_sim_trace_parse_csv(t, (const char *)data, size, "fuzz.csv", &err) == 0) {
        /* Written back it reads again: the same jobs, bit for bit. */
        if (topo_sim_trace_write_csv(t, &b) != 0 ||
            topo_sim_trace_parse_csv(back, b.ptr, b.len, "back.csv", &err) != 0 ||
            topo_sim_trace_count(back) != topo_sim_trace_count(t))
            abort();
        for (size_t i = 0; i < topo_sim_trace_count(t); i++) {
            const topo_sim_job *x = topo_sim_trace_job(t, i), *y = topo_sim_trace_job(back, i);
            if (strcmp(x->id, y->id) != 0 || x->pods != y->pods || x->gpus != y->gpus ||
                x->arrive != y->arrive || x->duration != y->duration ||
                (x->request < 0) != (y->request < 0))
                abort();
        }
        if (small(t))
            simulate(t);
    } else if (err.text[0] == '\0') {
        abort(); /* every error says what */
    }
    topo_buf_dispose(&b);
    topo_sim_trace_free(back);
    topo_sim_trace_free(t);
    return 0;
}
