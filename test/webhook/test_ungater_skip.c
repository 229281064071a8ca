/* Which gated PodSets a round of the ungater re-evaluates (webhook/ungater_skip.c),
 * against a real live snapshot: 2 racks of 2 nodes with 8 GPUs each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/live.h"
#include "ungater_skip.h"

#define RACK "topology.topo.io/rack"
#define HOST "kubernetes.io/hostname"
#define GPU "nvidia.com/gpu"

static const char *levels[] = {RACK, HOST};
static const topo_snapshot_opts opts = {"t", levels, 2, NULL, 0};

typedef struct fx {
    topo_live *live;
    wh_skip *skip;
} fx;

static void add_node(topo_live *live, const char *name, const char *rack)
{
    topo_kv labels[] = {{RACK, rack}, {HOST, name}};
    topo_resource alloc[] = {{GPU, 8}, {"pods", 110}};
    topo_node_spec n = {name, labels, 2, alloc, 2, NULL, 0, 0, 1, 0};
    assert_int_equal(topo_live_upsert_node(live, &n, NULL), 0);
}

static int setup(void **state)
{
    static fx f;
    memset(&f, 0, sizeof f);
    assert_int_equal(topo_live_create(&f.live, &opts, NULL), 0);
    add_node(f.live, "n1", "r1");
    add_node(f.live, "n2", "r1");
    add_node(f.live, "n3", "r2");
    add_node(f.live, "n4", "r2");
    assert_int_equal(topo_live_commit(f.live, NULL), 0);
    assert_int_equal(wh_skip_create(&f.skip, &f.live, 1, NULL), 0);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    wh_skip_free(f->skip);
    topo_live_free(f->live);
    return 0;
}

static void bind(fx *f, const char *uid, const char *node, int64_t gpus, int charged)
{
    topo_resource r[] = {{GPU, gpus}};
    assert_int_equal(topo_live_upsert_pod(f->live, uid, node, charged, r, 1, NULL), 0);
    assert_int_equal(topo_live_commit(f->live, NULL), 0);
}

static const topo_resource eight[] = {{GPU, 8}};

/* key needs `pods` pods of 8 GPUs in one rack; the verdict of one round. */
static wh_skip_verdict round_check(fx *f, int64_t now_ms, const char *key, int64_t pods,
                                   uint64_t *freed)
{
    wh_skip_need need = {key, RACK, eight, 1, pods};
    wh_skip_round_begin(f->skip, now_ms);
    wh_skip_verdict v = wh_skip_check(f->skip, &need, freed);
    return v;
}

static void test_ungater_skip__failed_podsets_wait_for_capacity(void **state)
{
    fx *f = *state;
    uint64_t freed = 0;
    /* the cluster full: every node runs an 8-GPU pod */
    bind(f, "p1", "n1", 8, 1);
    bind(f, "p2", "n2", 8, 1);
    bind(f, "p3", "n3", 8, 1);
    bind(f, "p4", "n4", 8, 1);

    /* Never seen: evaluated; it does not fit and is remembered. */
    assert_int_equal(round_check(f, 1000, "ns/big", 2, &freed), WH_SKIP_EVALUATE);
    assert_int_equal(wh_skip_failed(f->skip, "ns/big", freed, 1000), 0);
    wh_skip_round_end(f->skip, 1);
    assert_int_equal(wh_skip_remembered(f->skip), 1);

    /* Nothing freed: passed over, also when usage grows. */
    assert_int_equal(round_check(f, 2000, "ns/big", 2, &freed), WH_SKIP_UNCHANGED);
    wh_skip_round_end(f->skip, 1);
    bind(f, "p5", "n1", 0, 1); /* a pod asking for nothing more */
    assert_int_equal(round_check(f, 3000, "ns/big", 2, &freed), WH_SKIP_UNCHANGED);
    wh_skip_round_end(f->skip, 1);

    /* One pod finishes: 8 GPUs free in rack r1, 16 needed in one rack. */
    bind(f, "p1", "n1", 8, 0);
    assert_int_equal(round_check(f, 4000, "ns/big", 2, &freed), WH_SKIP_NO_ROOM);
    wh_skip_round_end(f->skip, 1);
    /* ...and without another change, the bound is not even computed again */
    assert_int_equal(round_check(f, 5000, "ns/big", 2, &freed), WH_SKIP_UNCHANGED);
    wh_skip_round_end(f->skip, 1);

    /* 8 GPUs free in each rack: still no rack with 16. */
    bind(f, "p3", "n3", 8, 0);
    assert_int_equal(round_check(f, 6000, "ns/big", 2, &freed), WH_SKIP_NO_ROOM);
    wh_skip_round_end(f->skip, 1);

    /* Rack r1 empties: it may fit now, so it is evaluated. */
    bind(f, "p2", "n2", 8, 0);
    assert_int_equal(round_check(f, 7000, "ns/big", 2, &freed), WH_SKIP_EVALUATE);
    assert_int_equal(freed, topo_live_freed(f->live));
    wh_skip_round_end(f->skip, 1);

    /* Four pods of 8 in one rack never fit here: ruled out by the bound. */
    assert_int_equal(round_check(f, 8000, "ns/huge", 4, &freed), WH_SKIP_EVALUATE);
    assert_int_equal(wh_skip_failed(f->skip, "ns/huge", freed - 1, 8000), 0);
    wh_skip_round_end(f->skip, 1);
    assert_int_equal(round_check(f, 9000, "ns/huge", 4, &freed), WH_SKIP_NO_ROOM);
    wh_skip_round_end(f->skip, 1);

    /* A round that did not look at a PodSet forgets it (it is no longer
     * gated: ns/big went with the rounds since 8000); a round cut short
     * forgets nothing. */
    assert_int_equal(wh_skip_remembered(f->skip), 1);
    wh_skip_round_begin(f->skip, 10000);
    wh_skip_round_end(f->skip, 0);
    assert_int_equal(wh_skip_remembered(f->skip), 1);
    wh_skip_round_begin(f->skip, 10000);
    wh_skip_round_end(f->skip, 1);
    assert_int_equal(wh_skip_remembered(f->skip), 0);
    assert_int_equal(round_check(f, 11000, "ns/huge", 4, &freed), WH_SKIP_EVALUATE);
}

/* What the live snapshot cannot show (quotas, reserved-room bounds) is
 * caught by evaluating each failed PodSet again after
 * TOPO_UNGATER_RECHECK_MS, a few per round. */
static void test_ungater_skip__recheck_after_a_while_a_few_per_round(void **state)
{
    fx *f = *state;
    char key[32];
    uint64_t freed = 0;
    enum { N = TOPO_UNGATER_RECHECKS_PER_ROUND + 4 };
    wh_skip_round_begin(f->skip, 0);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "ns/p%d", i);
        assert_int_equal(wh_skip_failed(f->skip, key, topo_live_freed(f->live), 0), 0);
    }
    wh_skip_round_end(f->skip, 1);

    int evaluated = 0;
    wh_skip_round_begin(f->skip, TOPO_UNGATER_RECHECK_MS);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "ns/p%d", i);
        wh_skip_need need = {key, RACK, eight, 1, 1};
        wh_skip_verdict v = wh_skip_check(f->skip, &need, &freed);
        if (v == WH_SKIP_EVALUATE) {
            evaluated++;
            assert_int_equal(wh_skip_failed(f->skip, key, freed, TOPO_UNGATER_RECHECK_MS), 0);
        } else {
            assert_int_equal(v, WH_SKIP_UNCHANGED);
        }
    }
    wh_skip_round_end(f->skip, 1);
    assert_int_equal(evaluated, TOPO_UNGATER_RECHECKS_PER_ROUND);
    /* the rest come in the next round */
    evaluated = 0;
    wh_skip_round_begin(f->skip, TOPO_UNGATER_RECHECK_MS + 1000);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "ns/p%d", i);
        wh_skip_need need = {key, RACK, eight, 1, 1};
        evaluated += wh_skip_check(f->skip, &need, &freed) == WH_SKIP_EVALUATE;
    }
    wh_skip_round_end(f->skip, 1);
    assert_int_equal(evaluated, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ungater_skip__failed_podsets_wait_for_capacity,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_ungater_skip__recheck_after_a_while_a_few_per_round,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
