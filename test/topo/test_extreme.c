/* Extreme quantities everywhere (issue 9): allocatable, non-TAS usage, TAS
 * usage and requests drawn from {0, 1, 2^31-1, 2^62, 2^63-2, 2^63-1}, PodSet
 * counts from 1 to TOPO_MAX_PODSET_COUNT, every mode. Each combination is
 * built, walked and placed; the test build runs under UBSan with
 * halt_on_error, so a signed overflow or a division by zero fails it (a
 * pods request of 2^63-1 once divided by zero in the engine, and three
 * 2^63-1 GPU requests on one node wrapped its usage). What is checked
 * besides: the engine answers, a placement's counts add up to the PodSet's,
 * and a node charged past its capacity offers nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/engine.h"
#include "topo/limits.h"
#include "topo/model.h"
#include "topo/pool.h"

static const char *levels[] = {"rack", "kubernetes.io/hostname"};
static const int64_t extremes[] = {0, 1, INT32_MAX, INT64_C(1) << 62, INT64_MAX - 1, INT64_MAX};
#define NEXT (sizeof extremes / sizeof extremes[0])

/* Two racks of two nodes, every allocatable `alloc`; node n1 charged with
 * three pods of `used` GPUs, node n2 with a TAS pod of `tas` GPUs. */
static topo_snapshot *cluster(int64_t alloc, int64_t used, int64_t tas)
{
    topo_snapshot *snap = NULL;
    topo_snapshot_opts opts = {"x", levels, 2, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    for (int i = 0; i < 4; i++) {
        char name[8], rack[8];
        snprintf(name, sizeof name, "n%d", i);
        snprintf(rack, sizeof rack, "r%d", i / 2);
        topo_kv labels[] = {{levels[0], rack}, {levels[1], name}};
        topo_resource a[] = {{"cpu", alloc}, {"nvidia.com/gpu", alloc}, {"pods", alloc}};
        topo_node_spec node = {name, labels, 2, a, 3, NULL, 0, 0, 1, 0};
        assert_int_equal(topo_snapshot_add_node(snap, &node, NULL), 0);
    }
    topo_resource u[] = {{"nvidia.com/gpu", used}, {"cpu", used}};
    for (int k = 0; k < 3; k++)
        assert_int_equal(topo_snapshot_add_pod_usage(snap, "n1", u, 2, NULL, NULL), 0);
    const char *where[] = {"n2"};
    topo_resource t[] = {{"nvidia.com/gpu", tas}};
    assert_int_equal(topo_snapshot_add_tas_usage(snap, where, 1, 1, t, 1, NULL), 0);
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    return snap;
}

typedef struct walked {
    size_t domains;
    int64_t n1_free; /* gpu free on n1's domain */
} walked;

static int visit(const topo_domain_view *v, void *payload)
{
    walked *w = payload;
    w->domains++;
    assert_true(v->free >= 0);
    assert_true(v->pods_free >= 0);
    if (v->level == 1 && strcmp(v->value, "n1") == 0)
        w->n1_free = v->free;
    return 0;
}

static void place(const topo_snapshot *snap, int64_t req, int32_t count, int mode, topo_pool *pool)
{
    topo_resource r[] = {{"cpu", 1}, {"nvidia.com/gpu", req}, {"pods", req}};
    topo_podset_spec ps;
    memset(&ps, 0, sizeof ps);
    ps.name = "main";
    ps.count = count;
    ps.requests = r;
    ps.nrequests = 3;
    switch (mode) {
    case 0: ps.required = "rack"; break;
    case 1: ps.preferred = "rack"; break;
    case 2: ps.unconstrained = 1; break;
    default:
        ps.required = "rack";
        ps.slice_required = "kubernetes.io/hostname";
        ps.slice_size = 1;
        break;
    }
    topo_podset_result res;
    topo_err err = TOPO_ERR_INIT;
    if (topo_engine_find(&res, snap, &ps, 1, NULL, NULL, pool, &err) != 0)
        fail_msg("engine: %s", err.text);
    if (res.assignment != NULL) {
        int64_t total = 0;
        for (size_t d = 0; d < res.assignment->ndomains; d++)
            total += res.assignment->domains[d].count;
        assert_int_equal(total, count);
    } else {
        assert_non_null(res.failure);
    }
    topo_pool_clear(pool);
}

static void test_extreme__everywhere(void **state)
{
    (void)state;
    static const int32_t counts[] = {1, 2, 3, TOPO_MAX_PODSET_COUNT};
    topo_pool *pool = topo_pool_create();
    size_t runs = 0;
    for (size_t a = 0; a < NEXT; a++)
        for (size_t u = 0; u < NEXT; u++)
            for (size_t t = 0; t < NEXT; t++) {
                topo_snapshot *snap = cluster(extremes[a], extremes[u], extremes[t]);
                walked w = {0, -1};
                assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", visit, &w), 0);
                assert_int_equal(w.domains, 2 + 4);
                /* three pods of `used` on n1: nothing left once they exceed it */
                if (extremes[u] > 0 && extremes[u] >= extremes[a] / 3 + 1)
                    assert_int_equal(w.n1_free, 0);
                for (size_t q = 0; q < NEXT; q++)
                    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                        for (int mode = 0; mode < 4; mode++, runs++)
                            place(snap, extremes[q], counts[c], mode, pool);
                topo_snapshot_free(snap);
            }
    print_message("%zu placements over %zu clusters\n", runs, (size_t)(NEXT * NEXT * NEXT));
    topo_pool_free(pool);
}

/* The pod: pods 2^63-1 (the engine adds the pod itself to it,
 * saturating) fits no node of a real cluster (110 pods each). */
static void test_extreme__pods_request(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_snapshot *snap = cluster(110, 0, 0);
    topo_resource r[] = {{"pods", INT64_MAX}};
    topo_podset_spec ps;
    memset(&ps, 0, sizeof ps);
    ps.name = "main";
    ps.count = 1;
    ps.requests = r;
    ps.nrequests = 1;
    ps.unconstrained = 1;
    topo_podset_result res;
    assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, NULL, pool, NULL), 0);
    assert_null(res.assignment);
    assert_non_null(strstr(res.failure, "resource \"pods\""));
    topo_snapshot_free(snap);
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extreme__everywhere),
        cmocka_unit_test(test_extreme__pods_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
