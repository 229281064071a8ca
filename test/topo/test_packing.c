/* Tests for the packing rule (topo/packing.h): the used domains that fit
 * one pod on one node, least free first, ties by name, at most k; nothing
 * when no used domain fits; bad input named. Then topo_packing_find, the
 * rule over a live snapshot: which racks, node filters, reservations,
 * repeated rack values, bad levels (test_packing_diff.c checks it against a
 * reference over random usage). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/live.h"
#include "topo/packing.h"

typedef struct rank_case {
    const char *what;
    topo_packing_domain d[4];
    size_t n, k;
    int64_t request;
    size_t want_n;
    size_t want[4];
} rank_case;

static const rank_case cases[] = {
    {"tightest used first; the empty rack never",
     {{"r1", 8, 24, 8}, {"r2", 0, 32, 8}, {"r3", 28, 4, 4}, {"r4", 16, 16, 8}},
     4, 4, 2, 3, {2, 3, 0}},
    {"ties on free go by name, not by position",
     {{"rb", 8, 8, 8}, {"ra", 8, 8, 8}, {"rc", 4, 4, 4}},
     3, 4, 2, 3, {2, 1, 0}},
    {"at most k",
     {{"r1", 8, 24, 8}, {"r2", 16, 16, 8}, {"r3", 28, 4, 4}},
     3, 1, 2, 1, {2}},
    {"nothing used: unchanged",
     {{"r1", 0, 32, 8}, {"r2", 0, 32, 8}},
     2, 4, 1, 0, {0}},
    {"no room anywhere: unchanged",
     {{"r1", 31, 1, 1}, {"r2", 32, 0, 0}},
     2, 4, 2, 0, {0}},
    {"room spread over nodes does not fit one pod",
     {{"r1", 24, 8, 2}, {"r2", 0, 32, 8}},
     2, 4, 4, 0, {0}},
    {"k 0 asks for nothing", {{"r1", 8, 24, 8}}, 1, 0, 1, 0, {0}},
};

static void test_packing__rank_table(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const rank_case *t = &cases[c];
        size_t out[4] = {99, 99, 99, 99}, n = 99;
        topo_err err = TOPO_ERR_INIT;
        if (topo_packing_rank(out, &n, t->k, t->d, t->n, t->request, &err) != 0)
            fail_msg("%s: %s", t->what, err.text);
        if (n != t->want_n)
            fail_msg("%s: %zu domains, want %zu", t->what, n, t->want_n);
        for (size_t i = 0; i < n; i++)
            if (out[i] != t->want[i])
                fail_msg("%s: [%zu] = %zu, want %zu", t->what, i, out[i], t->want[i]);
    }
}

static void test_packing__rejects_bad_input(void **state)
{
    (void)state;
    topo_packing_domain d[2] = {{"r1", 8, 24, 8}, {NULL, 8, 24, 8}};
    size_t out[2], n = 7;
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(topo_packing_rank(out, &n, 2, d, 1, 0, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "request"));
    assert_int_equal(n, 0);
    assert_int_equal(topo_packing_rank(out, &n, 2, d, 2, 1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "name"));
    d[1].name = "r2";
    d[1].free = -1;
    assert_int_equal(topo_packing_rank(out, &n, 2, d, 2, 1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "r2: free"));
}

/* ---- topo_packing_find over a live snapshot ---- */

#define GPU "nvidia.com/gpu"
#define L_BLOCK "topology.topo.io/block"
#define L_RACK "topology.topo.io/rack"
#define L_HOST "kubernetes.io/hostname"

static const char *const levels3[] = {L_BLOCK, L_RACK, L_HOST};
static const topo_snapshot_opts opts3 = {"gpu", levels3, 3, NULL, 0};

/* One node of a test cluster: 8 GPUs, 64 cores, 110 pods. */
typedef struct tnode {
    const char *name, *block, *rack;
    const char *pool;  /* a "pool" label, NULL: none */
    int tainted;       /* gpu=reserved:NoSchedule */
} tnode;

static void add_nodes(topo_live *live, const tnode *nodes, size_t n)
{
    static const topo_taint taint = {"gpu", "reserved", "NoSchedule"};
    for (size_t i = 0; i < n; i++) {
        topo_kv labels[4] = {{L_BLOCK, nodes[i].block},
                             {L_RACK, nodes[i].rack},
                             {L_HOST, nodes[i].name},
                             {"pool", nodes[i].pool}};
        topo_resource alloc[3] = {{GPU, 8}, {"cpu", 64000}, {"pods", 110}};
        topo_node_spec spec = {nodes[i].name, labels, nodes[i].pool ? 4 : 3, alloc, 3,
                               &taint, nodes[i].tainted ? 1 : 0, 0, 1, 0};
        assert_int_equal(topo_live_upsert_node(live, &spec, NULL), 0);
    }
}

static void bind(topo_live *live, const char *uid, const char *node, int64_t gpus)
{
    topo_resource req[2] = {{GPU, gpus}, {"cpu", 1000}};
    assert_int_equal(topo_live_upsert_pod(live, uid, node, 1, req, 2, NULL), 0);
}

static topo_live *cluster(const tnode *nodes, size_t n)
{
    topo_live *live = NULL;
    assert_int_equal(topo_live_create(&live, &opts3, NULL), 0);
    add_nodes(live, nodes, n);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    return live;
}

/* A 1-core pod asking `gpus` GPUs, with optional node filters. */
typedef struct tpod {
    topo_resource req[2];
    topo_podset_spec spec;
} tpod;

static void pod_init(tpod *p, int64_t gpus)
{
    memset(p, 0, sizeof(*p));
    p->req[0] = (topo_resource){GPU, gpus};
    p->req[1] = (topo_resource){"cpu", 1000};
    p->spec.name = "main";
    p->spec.count = 1;
    p->spec.requests = p->req;
    p->spec.nrequests = 2;
}

/* The picks of topo_packing_find as "block,rack free/used;..." (rc < 0:
 * the error code and its text). */
static int picks_text(topo_live *live, const topo_podset_spec *pod, const char *level, size_t k,
                      char *text, size_t len, topo_err *err)
{
    topo_packing_pick picks[8];
    size_t n = 99, at = 0;
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    const topo_snapshot *snap = topo_live_acquire(live);
    int rc = topo_packing_find(picks, &n, k, snap, pod, level, GPU, pool, err);
    /* the picks must survive the snapshot's release */
    topo_live_release(live, snap);
    text[0] = '\0';
    if (rc != 0)
        assert_int_equal(n, 0);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        for (size_t v = 0; v < picks[i].nvalues; v++)
            at += (size_t)snprintf(text + at, len - at, "%s%s", v ? "," : "", picks[i].values[v]);
        at += (size_t)snprintf(text + at, len - at, " %lld/%lld;", (long long)picks[i].free,
                               (long long)picks[i].used);
    }
    topo_pool_free(pool);
    return rc;
}

static void expect_picks(topo_live *live, const topo_podset_spec *pod, size_t k, const char *want)
{
    char text[512];
    topo_err err = TOPO_ERR_INIT;
    if (picks_text(live, pod, L_RACK, k, text, sizeof(text), &err) != 0)
        fail_msg("topo_packing_find: %s", err.text);
    if (strcmp(text, want) != 0)
        fail_msg("picks \"%s\", want \"%s\"", text, want);
}

/* Four racks of two nodes (16 GPUs each): r1 4 in use, r2 empty, r3 14,
 * r4 8 (one node full), r5 8 (spread: 4 + 4). */
static const tnode racks[] = {
    {"n11", "b1", "r1", NULL, 0}, {"n12", "b1", "r1", NULL, 0},
    {"n21", "b1", "r2", NULL, 0}, {"n22", "b1", "r2", NULL, 0},
    {"n31", "b1", "r3", NULL, 0}, {"n32", "b1", "r3", NULL, 0},
    {"n41", "b2", "r4", NULL, 0}, {"n42", "b2", "r4", NULL, 0},
    {"n51", "b2", "r5", NULL, 0}, {"n52", "b2", "r5", NULL, 0},
};

static topo_live *racks_in_use(void)
{
    topo_live *live = cluster(racks, sizeof(racks) / sizeof(racks[0]));
    bind(live, "p1", "n11", 4);
    bind(live, "p3a", "n31", 8);
    bind(live, "p3b", "n32", 6);
    bind(live, "p4", "n41", 8);
    bind(live, "p5a", "n51", 4);
    bind(live, "p5b", "n52", 4);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    return live;
}

static void test_packing__find_used_racks_tightest_first(void **state)
{
    (void)state;
    topo_live *live = racks_in_use();
    tpod p;
    pod_init(&p, 2);
    /* r3 (2 free), then r4 and r5 (8 free each: by name), then r1; r2
     * (nothing running) never */
    expect_picks(live, &p.spec, 8, "b1,r3 2/14;b2,r4 8/8;b2,r5 8/8;b1,r1 12/4;");
    expect_picks(live, &p.spec, 2, "b1,r3 2/14;b2,r4 8/8;");
    /* 6 GPUs: r3's 2 are on one node, r5's 8 are 4 + 4: neither fits */
    pod_init(&p, 6);
    expect_picks(live, &p.spec, 8, "b2,r4 8/8;b1,r1 12/4;");
    /* a pod that asks no GPU: nothing in use matters for it */
    pod_init(&p, 0);
    expect_picks(live, &p.spec, 8, "");
    topo_live_free(live);
}

static void test_packing__find_no_room_or_no_nodes(void **state)
{
    (void)state;
    tpod p;
    pod_init(&p, 2);
    /* an empty cluster */
    topo_live *live = cluster(NULL, 0);
    expect_picks(live, &p.spec, 8, "");
    topo_live_free(live);
    /* every used rack full; only the empty one has room */
    static const tnode two[] = {{"n11", "b1", "r1", NULL, 0}, {"n21", "b1", "r2", NULL, 0}};
    live = cluster(two, 2);
    bind(live, "p1", "n11", 8);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    expect_picks(live, &p.spec, 8, "");
    /* the job ends: r1 is empty again, nothing is in use */
    assert_int_equal(topo_live_delete_pod(live, "p1", NULL), 0);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    expect_picks(live, &p.spec, 8, "");
    topo_live_free(live);
}

static void test_packing__find_honours_node_filters(void **state)
{
    (void)state;
    static const tnode nodes[] = {
        {"n11", "b1", "r1", "a", 0}, {"n12", "b1", "r1", "a", 0},
        {"n21", "b1", "r2", "b", 0}, {"n22", "b1", "r2", "b", 0},
        {"n31", "b1", "r3", "a", 1}, {"n32", "b1", "r3", "a", 1},
    };
    topo_live *live = cluster(nodes, 6);
    bind(live, "p1", "n11", 2);
    bind(live, "p2", "n21", 4);
    bind(live, "p3", "n31", 6);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    tpod p;
    pod_init(&p, 2);
    /* r3's nodes are tainted: without the toleration, not proposed */
    expect_picks(live, &p.spec, 8, "b1,r2 12/4;b1,r1 14/2;");
    topo_toleration tol = {"gpu", "Equal", "reserved", "NoSchedule"};
    p.spec.tolerations = &tol;
    p.spec.ntolerations = 1;
    expect_picks(live, &p.spec, 8, "b1,r3 10/6;b1,r2 12/4;b1,r1 14/2;");
    /* nodeSelector pool=a: r2's nodes are pool b */
    topo_kv sel = {"pool", "a"};
    p.spec.node_selector = &sel;
    p.spec.nnode_selector = 1;
    expect_picks(live, &p.spec, 8, "b1,r3 10/6;b1,r1 14/2;");
    /* required node affinity pool NotIn [a] */
    const char *const a[] = {"a"};
    topo_match_expr expr = {"pool", "NotIn", a, 1};
    topo_selector_term term = {&expr, 1};
    p.spec.node_selector = NULL;
    p.spec.nnode_selector = 0;
    p.spec.required_terms = &term;
    p.spec.nrequired_terms = 1;
    expect_picks(live, &p.spec, 8, "b1,r2 12/4;");
    topo_live_free(live);
}

static void test_packing__find_counts_reservations(void **state)
{
    (void)state;
    static const tnode two[] = {{"n11", "b1", "r1", NULL, 0}, {"n21", "b1", "r2", NULL, 0}};
    topo_live *live = cluster(two, 2);
    tpod p;
    pod_init(&p, 2);
    expect_picks(live, &p.spec, 8, "");
    /* a reservation holds 2 x 2 GPUs on n21: r2 is in use */
    const char *const where[] = {"b1", "r2", "n21"};
    topo_resource req[] = {{GPU, 2}};
    assert_int_equal(topo_live_reserve_now(live, "w1", where, 3, 2, req, 1, NULL), 0);
    expect_picks(live, &p.spec, 8, "b1,r2 4/4;");
    /* 6 GPUs do not fit beside it */
    pod_init(&p, 6);
    expect_picks(live, &p.spec, 8, "");
    assert_int_equal(topo_live_unreserve_now(live, "w1", NULL), 0);
    pod_init(&p, 2);
    expect_picks(live, &p.spec, 8, "");
    topo_live_free(live);
}

/* The same through a snapshot's TAS usage, no topo_live. */
static void test_packing__find_on_a_plain_snapshot(void **state)
{
    (void)state;
    topo_snapshot *snap = NULL;
    assert_int_equal(topo_snapshot_create(&snap, &opts3, NULL), 0);
    static const char *const hosts[] = {"n11", "n21"}, *const rk[] = {"r1", "r2"};
    for (size_t i = 0; i < 2; i++) {
        topo_kv labels[3] = {{L_BLOCK, "b1"}, {L_RACK, rk[i]}, {L_HOST, hosts[i]}};
        topo_resource alloc[2] = {{GPU, 8}, {"pods", 110}};
        topo_node_spec spec = {hosts[i], labels, 3, alloc, 2, NULL, 0, 0, 1, 0};
        assert_int_equal(topo_snapshot_add_node(snap, &spec, NULL), 0);
    }
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    topo_pool *pool = topo_pool_create();
    tpod p;
    pod_init(&p, 2);
    p.spec.nrequests = 1;
    topo_packing_pick picks[4];
    size_t n = 9;
    assert_int_equal(topo_packing_find(picks, &n, 4, snap, &p.spec, L_RACK, GPU, pool, NULL), 0);
    assert_int_equal(n, 0);
    const char *const where[] = {"b1", "r1", "n11"};
    topo_resource req[] = {{GPU, 3}};
    assert_int_equal(topo_snapshot_add_tas_usage(snap, where, 3, 1, req, 1, NULL), 0);
    assert_int_equal(topo_packing_find(picks, &n, 4, snap, &p.spec, L_RACK, GPU, pool, NULL), 0);
    assert_int_equal(n, 1);
    assert_string_equal(picks[0].values[1], "r1");
    assert_int_equal(picks[0].free, 5);
    assert_int_equal(picks[0].used, 3);
    /* the block level: b1 holds both racks */
    assert_int_equal(topo_packing_find(picks, &n, 4, snap, &p.spec, L_BLOCK, GPU, pool, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(picks[0].nvalues, 1);
    assert_string_equal(picks[0].values[0], "b1");
    assert_int_equal(picks[0].free, 13);
    assert_int_equal(topo_snapshot_remove_tas_usage(snap, where, 3, 1, req, 1, NULL), 0);
    assert_int_equal(topo_packing_find(picks, &n, 4, snap, &p.spec, L_RACK, GPU, pool, NULL), 0);
    assert_int_equal(n, 0);
    /* a resource no node exposes: nothing uses it */
    assert_int_equal(
        topo_packing_find(picks, &n, 4, snap, &p.spec, L_RACK, "amd.com/gpu", pool, NULL), 0);
    assert_int_equal(n, 0);
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

static void test_packing__find_repeated_rack_values(void **state)
{
    (void)state;
    static const tnode nodes[] = {{"n11", "b1", "r1", NULL, 0}, {"n21", "b2", "r1", NULL, 0},
                                  {"n31", "b2", "r2", NULL, 0}};
    topo_live *live = cluster(nodes, 3);
    bind(live, "p1", "n11", 2);
    bind(live, "p2", "n21", 2);
    assert_int_equal(topo_live_commit(live, NULL), 0);
    tpod p;
    pod_init(&p, 1);
    /* two racks named r1, each with its own block */
    expect_picks(live, &p.spec, 8, "b1,r1 6/2;b2,r1 6/2;");
    topo_live_free(live);
}

static void test_packing__find_rejects_bad_level(void **state)
{
    (void)state;
    topo_live *live = racks_in_use();
    tpod p;
    pod_init(&p, 2);
    char text[64];
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(picks_text(live, &p.spec, "topology.topo.io/zone", 8, text, sizeof(text),
                                &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "level"));
    assert_non_null(strstr(err.text, "topology.topo.io/zone"));
    err = (topo_err)TOPO_ERR_INIT;
    assert_int_equal(picks_text(live, &p.spec, L_HOST, 8, text, sizeof(text), &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "level"));
    assert_non_null(strstr(err.text, "lowest"));
    err = (topo_err)TOPO_ERR_INIT;
    assert_int_equal(picks_text(live, &p.spec, NULL, 8, text, sizeof(text), &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "level"));
    topo_live_free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packing__rank_table),
        cmocka_unit_test(test_packing__rejects_bad_input),
        cmocka_unit_test(test_packing__find_used_racks_tightest_first),
        cmocka_unit_test(test_packing__find_no_room_or_no_nodes),
        cmocka_unit_test(test_packing__find_honours_node_filters),
        cmocka_unit_test(test_packing__find_counts_reservations),
        cmocka_unit_test(test_packing__find_on_a_plain_snapshot),
        cmocka_unit_test(test_packing__find_repeated_rack_values),
        cmocka_unit_test(test_packing__find_rejects_bad_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
