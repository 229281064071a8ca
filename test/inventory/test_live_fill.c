/* topo_inventory_fill_live: an inventory's nodes and bound pods into a live
 * snapshot, as topo-webhook's static mode (--inventory --pods) and
 * bench_admission serve them. The small kubectl fixtures: 4 nodes (one
 * not eligible); bound,
 * non-terminal pods on three of them (one a Kueue TAS pod, charged per node
 * like the others) and one on a node that does not exist. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/inventory.h"
#include "topo/live.h"

#define GPU "nvidia.com/gpu"

static const char *const levels[] = {"topology.topo.io/rack", "kubernetes.io/hostname"};

static char path_buf[2][1024];

static const char *fixture(int slot, const char *rel)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s/fixtures/%s", root ? root : ".", rel);
    return path_buf[slot];
}

static int64_t amount(const topo_resource *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            return r[i].amount;
    return 0;
}

typedef struct seen {
    const topo_inventory *inv;
    size_t hosts;
    size_t busy; /* hosts with GPUs in use */
} seen;

/* Each host's free GPUs must be its allocatable minus the GPUs of the
 * inventory's pods on it (TAS pods too). */
static int check_host(const topo_domain_view *v, void *payload)
{
    seen *s = payload;
    if (v->level != 1)
        return 0;
    int32_t i = topo_inventory_find_node(s->inv, v->value);
    assert_true(i >= 0);
    const topo_node_spec *n = topo_inventory_node(s->inv, (size_t)i);
    int64_t used = 0;
    size_t np = topo_inventory_pod_count(s->inv), nt = topo_inventory_tas_pod_count(s->inv);
    for (size_t k = 0; k < np + nt; k++) {
        const topo_pod_usage *u =
            k < np ? topo_inventory_pod(s->inv, k) : topo_inventory_tas_pod(s->inv, k - np);
        if (strcmp(u->node, v->value) == 0)
            used += amount(u->requests, u->nrequests, GPU);
    }
    int64_t cap = amount(n->allocatable, n->nallocatable, GPU);
    assert_int_equal(v->capacity, cap);
    assert_int_equal(v->free, cap - used > 0 ? cap - used : 0);
    s->hosts++;
    s->busy += used > 0;
    return 0;
}

/* Nodes that form domains: Ready, schedulable, with every level. */
static size_t eligible(const topo_inventory *inv)
{
    size_t n = 0;
    for (size_t i = 0; i < topo_inventory_node_count(inv); i++) {
        const topo_node_spec *node = topo_inventory_node(inv, i);
        int racked = 0;
        for (size_t l = 0; l < node->nlabels; l++)
            racked |= strcmp(node->labels[l].key, levels[0]) == 0;
        n += node->ready && !node->unschedulable && racked;
    }
    return n;
}

static void test_fill_live__nodes_and_pods_charged(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory *inv = NULL;
    topo_live *live = NULL;
    topo_snapshot_opts so = {"default", levels, 2, NULL, 0};
    assert_int_equal(topo_inventory_create(&inv, &err), 0);
    assert_int_equal(
        topo_inventory_load_nodes_file(inv, fixture(0, "clusters/kubectl-nodes-small.json"), &err),
        0);
    assert_int_equal(
        topo_inventory_load_pods_file(inv, fixture(1, "clusters/kubectl-pods-small.json"), &err),
        0);
    /* the fixture's pods as the loader keeps them: one TAS pod apart */
    assert_true(topo_inventory_pod_count(inv) >= 3);
    assert_int_equal(topo_inventory_tas_pod_count(inv), 1);
    assert_int_equal(topo_live_create(&live, &so, &err), 0);

    assert_int_equal(topo_inventory_fill_live(live, inv, &err), 0);

    topo_live_stats st;
    topo_live_get_stats(live, &st);
    assert_int_equal(st.nodes, topo_inventory_node_count(inv));
    assert_int_equal(st.pods, topo_inventory_pod_count(inv) + topo_inventory_tas_pod_count(inv));
    assert_int_equal(st.commits, 1); /* published at once, in one commit */
    seen s = {inv, 0, 0};
    const topo_snapshot *snap = topo_live_acquire(live);
    assert_int_equal(topo_snapshot_walk(snap, GPU, check_host, &s), 0);
    topo_live_release(live, snap);
    assert_int_equal(s.hosts, eligible(inv));
    assert_true(s.busy >= 2); /* the pods' GPUs charged, the TAS pod's too */
    topo_live_free(live);
    topo_inventory_free(inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_live__nodes_and_pods_charged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
