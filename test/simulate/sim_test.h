/* Small clusters and traces for the simulator's tests: nodes in racks with
 * some GPUs already in use, a trace from CSV text, one policy run. */
#ifndef TOPO_TEST_SIM_TEST_H
#define TOPO_TEST_SIM_TEST_H

#include <stdint.h>
#include <string.h>

#include "topo/simulate.h"

#define SIM_TEST_RACK "topology.topo.io/rack"
#define SIM_TEST_HOST "kubernetes.io/hostname"

typedef struct sim_test_node {
    const char *name, *rack;
    int64_t gpus, used;
} sim_test_node;

/* A snapshot over rack/hostname with each node's GPUs, `used` of them taken
 * by a pod that stays for the whole run. NULL on any failure. */
static inline topo_snapshot *sim_test_snapshot(const sim_test_node *nodes, size_t n)
{
    static const char *const levels[] = {SIM_TEST_RACK, SIM_TEST_HOST};
    topo_snapshot_opts o = {"default", levels, 2, NULL, 0};
    topo_snapshot *snap = NULL;
    if (topo_snapshot_create(&snap, &o, NULL) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        topo_kv labels[2] = {{SIM_TEST_RACK, nodes[i].rack}, {SIM_TEST_HOST, nodes[i].name}};
        topo_resource alloc[2] = {{"nvidia.com/gpu", nodes[i].gpus}, {"pods", 110}};
        topo_node_spec spec;
        memset(&spec, 0, sizeof(spec));
        spec.name = nodes[i].name;
        spec.labels = labels;
        spec.nlabels = 2;
        spec.allocatable = alloc;
        spec.nallocatable = 2;
        spec.ready = 1;
        if (topo_snapshot_add_node(snap, &spec, NULL) < 0)
            goto fail;
    }
    if (topo_snapshot_build(snap, NULL) < 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        topo_resource use = {"nvidia.com/gpu", nodes[i].used};
        if (nodes[i].used > 0 &&
            topo_snapshot_add_pod_usage(snap, nodes[i].name, &use, 1, NULL, NULL) < 0)
            goto fail;
    }
    return snap;
fail:
    topo_snapshot_free(snap);
    return NULL;
}

/* What a simulator test runs on: the nodes' snapshot, its cluster, a trace
 * and the last run's result. */
typedef struct sim_test_world {
    topo_snapshot *snap;
    topo_sim_cluster *c;
    topo_sim_trace *t;
    topo_sim_result *r;
} sim_test_world;

/* The world of the nodes and the CSV trace; < 0 with err set (or
 * TOPO_ENOMEM for the snapshot) on failure. Freed by sim_test_world_free
 * either way. */
static inline int sim_test_world_make(sim_test_world *w, const sim_test_node *nodes, size_t n,
                                      const char *csv, topo_err *err)
{
    int rc;
    memset(w, 0, sizeof(*w));
    if ((w->snap = sim_test_snapshot(nodes, n)) == NULL)
        return topo_err_nomem(err, "test snapshot");
    if ((rc = topo_sim_cluster_create(&w->c, w->snap, NULL, err)) < 0 ||
        (rc = topo_sim_trace_create(&w->t, err)) < 0)
        return rc;
    return topo_sim_trace_parse_csv(w->t, csv, strlen(csv), "t.csv", err);
}

/* Runs policy p with o (NULL: defaults) in place of the last result. */
static inline int sim_test_world_run(sim_test_world *w, topo_sim_policy p,
                                     const topo_sim_run_opts *o, topo_err *err)
{
    topo_sim_result_free(w->r);
    w->r = NULL;
    return topo_sim_run(&w->r, w->c, w->t, p, o, err);
}

static inline void sim_test_world_free(sim_test_world *w)
{
    topo_sim_result_free(w->r);
    topo_sim_trace_free(w->t);
    topo_sim_cluster_free(w->c);
    topo_snapshot_free(w->snap);
    memset(w, 0, sizeof(*w));
}

/* The index of the node of that name in the simulated cluster, or -1. */
static inline int32_t sim_test_node_index(const topo_sim_cluster *c, const char *name)
{
    for (size_t i = 0; i < topo_sim_cluster_node_count(c); i++)
        if (strcmp(topo_sim_cluster_node(c, i), name) == 0)
            return (int32_t)i;
    return -1;
}

/* Pods of job j on the node of that name. */
static inline int32_t sim_test_pods_on(const topo_sim_result *r, const topo_sim_cluster *c,
                                       size_t j, const char *name)
{
    const topo_sim_slot *s;
    size_t n = topo_sim_result_placement(r, j, &s);
    int32_t node = sim_test_node_index(c, name);
    for (size_t i = 0; i < n; i++)
        if (s[i].node == node)
            return s[i].count;
    return 0;
}

#endif
