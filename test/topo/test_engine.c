/* The engine on a GPU cluster built in code: 2 blocks x 2 racks x 4 nodes of
 * 8 GPUs, with non-TAS usage on two nodes, checked against placements worked
 * out by hand from Kueue's rules (docs/engine.md "Kueue's rules"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/engine.h"
#include "topo/model.h"
#include "topo/pool.h"

static const char *levels3[] = {"topology.topo.io/block", "topology.topo.io/rack",
                                "kubernetes.io/hostname"};

static topo_snapshot *gpu_cluster(void)
{
    topo_snapshot *snap = NULL;
    topo_snapshot_opts opts = {"gpus", levels3, 3, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    for (int i = 1; i <= 16; i++) {
        char name[8], block[8], rack[8];
        snprintf(name, sizeof(name), "h%02d", i);
        snprintf(block, sizeof(block), "b%d", (i - 1) / 8 + 1);
        snprintf(rack, sizeof(rack), "r%d", (i - 1) / 4 + 1);
        topo_kv labels[] = {{levels3[0], block}, {levels3[1], rack}, {levels3[2], name}};
        topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"cpu", 224000}, {"pods", 110}};
        topo_node_spec node = {name, labels, 3, alloc, 3, NULL, 0, 0, 1, 0};
        assert_int_equal(topo_snapshot_add_node(snap, &node, NULL), 0);
    }
    topo_resource full[] = {{"nvidia.com/gpu", 8}};
    topo_resource half[] = {{"nvidia.com/gpu", 4}};
    assert_int_equal(topo_snapshot_add_pod_usage(snap, "h01", full, 1, NULL, NULL), 0);
    assert_int_equal(topo_snapshot_add_pod_usage(snap, "h05", half, 1, NULL, NULL), 0);
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    return snap;
}

/* "h02:1,h03:1" or "error: <message>" */
static void render(char *out, size_t len, const topo_podset_result *r)
{
    if (r->failure != NULL) {
        snprintf(out, len, "error: %s", r->failure);
        return;
    }
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; r->assignment && i < r->assignment->ndomains; i++) {
        const topo_assign_domain *d = &r->assignment->domains[i];
        w += (size_t)snprintf(out + w, len - w, "%s%s:%d", i ? "," : "",
                              d->values[r->assignment->nlevels - 1], d->count);
    }
}

typedef struct engine_case {
    const char *name;
    int32_t count;
    const char *required;
    const char *preferred;
    int unconstrained;
    const char *slice_level;
    int32_t slice_size;
    const char *expected;
} engine_case;

static const engine_case cases[] = {
    {"required rack, the first roomiest rack fits", 4, "topology.topo.io/rack", NULL, 0, NULL, 0,
     "h09:1,h10:1,h11:1,h12:1"},
    {"required rack, best fit picks the tightest rack", 3, "topology.topo.io/rack", NULL, 0,
     NULL, 0, "h02:1,h03:1,h04:1"},
    {"required rack, too big for any rack", 5, "topology.topo.io/rack", NULL, 0, NULL, 0,
     "error: topology \"gpus\" allows to fit only 4 out of 5 pod(s). Total nodes: 16; "
     "excluded: resource \"nvidia.com/gpu\": 2"},
    {"preferred rack goes up to the tightest block", 5, NULL, "topology.topo.io/rack", 0, NULL,
     0, "h02:1,h03:1,h04:1,h06:1,h07:1"},
    {"unconstrained packs least free first", 2, NULL, NULL, 1, NULL, 0, "h02:1,h03:1"},
    {"required block in rack slices of 2", 4, "topology.topo.io/block", NULL, 0,
     "topology.topo.io/rack", 2, "h02:1,h03:1,h06:1,h07:1"},
    {"nothing fits the whole cluster", 15, NULL, "topology.topo.io/rack", 0, NULL, 0,
     "error: topology \"gpus\" allows to fit only 14 out of 15 pod(s). Total nodes: 16; "
     "excluded: resource \"nvidia.com/gpu\": 2"},
    {"required hostname: one node", 1, "kubernetes.io/hostname", NULL, 0, NULL, 0, "h02:1"},
    {"unknown level", 1, "topology.topo.io/zone", NULL, 0, NULL, 0,
     "error: no requested topology level: topology.topo.io/zone"},
};

static void test_engine__gpu_table(void **state)
{
    (void)state;
    topo_snapshot *snap = gpu_cluster();
    topo_pool *pool = topo_pool_create();
    topo_gates gates;
    topo_gates_init(&gates);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const engine_case *c = &cases[i];
        topo_resource req[] = {{"nvidia.com/gpu", 8}};
        topo_podset_spec ps;
        memset(&ps, 0, sizeof(ps));
        ps.name = "main";
        ps.count = c->count;
        ps.requests = req;
        ps.nrequests = 1;
        ps.required = c->required;
        ps.preferred = c->preferred;
        ps.unconstrained = c->unconstrained;
        ps.slice_required = c->slice_level;
        ps.slice_size = c->slice_size;
        topo_podset_result res;
        assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, NULL), 0);
        char got[1024];
        render(got, sizeof(got), &res);
        if (strcmp(got, c->expected) != 0)
            fail_msg("%s: want [%s] got [%s]", c->name, c->expected, got);
        topo_pool_clear(pool);
    }
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

/* TASBalancedPlacement with fewer pods than one slice (count / slice size
 * is 0) divided by zero selected domains and killed the process (SIGFPE).
 * With nothing to balance the gate must change nothing. */
static void test_engine__balanced_smaller_than_a_slice(void **state)
{
    (void)state;
    topo_snapshot *snap = gpu_cluster();
    topo_pool *pool = topo_pool_create();
    char with_gate[1024], without[1024];
    for (int on = 0; on < 2; on++) {
        topo_gates gates;
        topo_gates_init(&gates);
        assert_int_equal(topo_gates_set(&gates, "TASBalancedPlacement", on, NULL), 0);
        topo_resource req[] = {{"nvidia.com/gpu", 8}};
        topo_podset_spec ps;
        memset(&ps, 0, sizeof(ps));
        ps.name = "main";
        ps.count = 1;
        ps.requests = req;
        ps.nrequests = 1;
        ps.preferred = "topology.topo.io/block";
        ps.slice_required = "topology.topo.io/rack";
        ps.slice_size = 4;
        topo_podset_result res;
        assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, &gates, pool, NULL), 0);
        render(on ? with_gate : without, sizeof(with_gate), &res);
        topo_pool_clear(pool);
    }
    assert_string_equal(with_gate, without);
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

static void test_engine__assumed_usage_between_podsets(void **state)
{
    (void)state;
    topo_snapshot *snap = gpu_cluster();
    topo_pool *pool = topo_pool_create();
    topo_resource req[] = {{"nvidia.com/gpu", 8}};
    topo_podset_spec ps[2];
    memset(ps, 0, sizeof(ps));
    for (int i = 0; i < 2; i++) {
        ps[i].name = i ? "second" : "first";
        ps[i].count = 4;
        ps[i].requests = req;
        ps[i].nrequests = 1;
        ps[i].required = "topology.topo.io/rack";
    }
    topo_podset_result res[2];
    assert_int_equal(topo_engine_find(res, snap, ps, 2, NULL, NULL, pool, NULL), 0);
    char got[512];
    render(got, sizeof(got), &res[0]);
    assert_string_equal(got, "h09:1,h10:1,h11:1,h12:1");
    /* r3 is now full: the second PodSet must take r4. */
    render(got, sizeof(got), &res[1]);
    assert_string_equal(got, "h13:1,h14:1,h15:1,h16:1");
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

static void test_engine__tas_usage_and_taints(void **state)
{
    (void)state;
    topo_snapshot *snap = NULL;
    topo_snapshot_opts opts = {"default", levels3, 3, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        topo_kv labels[] = {{levels3[0], "b1"}, {levels3[1], "r1"}, {levels3[2], names[i]}};
        topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
        topo_taint taint = {"nvidia.com/gpu", "present", "NoSchedule"};
        topo_node_spec node = {names[i], labels, 3, alloc, 2, i == 2 ? &taint : NULL,
                               i == 2 ? 1u : 0u, 0, 1, 0};
        assert_int_equal(topo_snapshot_add_node(snap, &node, NULL), 0);
    }
    const char *dom[] = {"a"};
    topo_resource six[] = {{"nvidia.com/gpu", 6}};
    assert_int_equal(topo_snapshot_add_tas_usage(snap, dom, 1, 1, six, 1, NULL), 0);
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    topo_pool *pool = topo_pool_create();
    topo_resource req[] = {{"nvidia.com/gpu", 4}};
    topo_podset_spec ps;
    memset(&ps, 0, sizeof(ps));
    ps.name = "main";
    ps.count = 3;
    ps.requests = req;
    ps.nrequests = 1;
    ps.required = "topology.topo.io/rack";
    topo_podset_result res;
    assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, NULL, pool, NULL), 0);
    char got[512];
    render(got, sizeof(got), &res);
    assert_string_equal(got, "error: topology \"default\" allows to fit only 2 out of 3 pod(s). "
                             "Total nodes: 3; excluded: resource \"nvidia.com/gpu\": 1, taint "
                             "\"nvidia.com/gpu=present:NoSchedule\": 1");
    topo_toleration tol = {"nvidia.com/gpu", "Exists", NULL, NULL};
    ps.tolerations = &tol;
    ps.ntolerations = 1;
    topo_pool_clear(pool);
    assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, NULL, pool, NULL), 0);
    render(got, sizeof(got), &res);
    assert_string_equal(got, "b:2,c:1");
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

static void test_engine__gates_by_name(void **state)
{
    (void)state;
    topo_gates g;
    topo_gates_init(&g);
    assert_int_equal(g.TASProfileMixed, 1);
    assert_int_equal(g.TASBalancedPlacement, 0);
    assert_int_equal(topo_gates_set(&g, "TASBalancedPlacement", 1, NULL), 0);
    assert_int_equal(g.TASBalancedPlacement, 1);
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_gates_set(&g, "NoSuchGate", 1, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "NoSuchGate"));
}

static void test_engine__rejects_negative_count(void **state)
{
    (void)state;
    topo_snapshot *snap = gpu_cluster();
    topo_pool *pool = topo_pool_create();
    topo_podset_spec ps;
    memset(&ps, 0, sizeof(ps));
    ps.name = "main";
    ps.count = -1;
    ps.required = "topology.topo.io/rack";
    topo_podset_result res;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, NULL, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "count"));
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

/* Orderings of large domain lists take a linear counting sort when the
 * affinity gate is off and a comparison merge sort when it is on; with no
 * preferred terms the two must agree exactly. */
static void test_engine__sort_paths_agree_on_large_cluster(void **state)
{
    (void)state;
    topo_snapshot *snap = NULL;
    topo_snapshot_opts opts = {"big", levels3, 3, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    uint64_t x = 42;
    for (int i = 0; i < 600; i++) {
        char name[16], block[8], rack[8];
        snprintf(name, sizeof(name), "n%04d", i);
        snprintf(block, sizeof(block), "b%d", i / 200);
        snprintf(rack, sizeof(rack), "r%d", i / 10);
        topo_kv labels[] = {{levels3[0], block}, {levels3[1], rack}, {levels3[2], name}};
        topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
        topo_node_spec node = {name, labels, 3, alloc, 2, NULL, 0, 0, 1, 0};
        assert_int_equal(topo_snapshot_add_node(snap, &node, NULL), 0);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        topo_resource used[] = {{"nvidia.com/gpu", (int64_t)((x >> 33) % 9)}};
        assert_int_equal(topo_snapshot_add_pod_usage(snap, name, used, 1, NULL, NULL), 0);
    }
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    topo_pool *pool = topo_pool_create();
    const char *modes[][2] = {{"topology.topo.io/rack", NULL},
                              {NULL, "topology.topo.io/rack"},
                              {NULL, NULL}};
    int32_t counts[] = {3, 17, 40, 150};
    for (size_t m = 0; m < 3; m++) {
        for (size_t c = 0; c < 4; c++) {
            topo_resource req[] = {{"nvidia.com/gpu", 2}};
            topo_podset_spec ps;
            memset(&ps, 0, sizeof(ps));
            ps.name = "main";
            ps.count = counts[c];
            ps.requests = req;
            ps.nrequests = 1;
            ps.required = modes[m][0];
            ps.preferred = modes[m][1];
            ps.unconstrained = modes[m][0] == NULL && modes[m][1] == NULL;
            char got[2][16384];
            for (int affinity = 0; affinity < 2; affinity++) {
                topo_gates g;
                topo_gates_init(&g);
                g.TASRespectNodeAffinityPreferred = affinity;
                topo_podset_result res;
                assert_int_equal(topo_engine_find(&res, snap, &ps, 1, NULL, &g, pool, NULL), 0);
                render(got[affinity], sizeof(got[affinity]), &res);
                topo_pool_clear(pool);
            }
            if (strcmp(got[0], got[1]) != 0)
                fail_msg("mode %zu count %d: counting [%s] merge [%s]", m, counts[c], got[0],
                         got[1]);
        }
    }
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine__gpu_table),
        cmocka_unit_test(test_engine__assumed_usage_between_podsets),
        cmocka_unit_test(test_engine__balanced_smaller_than_a_slice),
        cmocka_unit_test(test_engine__tas_usage_and_taints),
        cmocka_unit_test(test_engine__gates_by_name),
        cmocka_unit_test(test_engine__rejects_negative_count),
        cmocka_unit_test(test_engine__sort_paths_agree_on_large_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
