/* The engine's node replacement (Kueue's findReplacementAssignment and
 * topo's replace_all, prefer_same_domain and `replacement`) on a small GPU
 * cluster: block b1 holds rack r1 (n9..n12) and rack r2 (n13..n18, the
 * roomiest), block b2 holds rack r3 (n19, n20, the tightest). A node has 8
 * GPUs and a pod asks for 4, so a node takes two pods. Failed nodes are not
 * Ready, so the snapshot leaves them out, as Kueue's node cache does.
 * Expectations are worked out from Kueue's rules (docs/engine.md "Kueue's rules"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/engine.h"
#include "topo/model.h"
#include "topo/pool.h"

#define RACK "topology.topo.io/rack"
#define MAXN 8

static const char *levels3[] = {"topology.topo.io/block", RACK, "kubernetes.io/hostname"};
static const topo_resource pod_req[] = {{"nvidia.com/gpu", 4}};

/* A node's block and rack from its number. */
static void place_of(int i, const char **block, const char **rack)
{
    *block = i <= 18 ? "b1" : "b2";
    *rack = i <= 12 ? "r1" : i <= 18 ? "r2" : "r3";
}

static int listed(const char *const *names, const char *name)
{
    for (size_t i = 0; i < MAXN && names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

typedef struct scenario {
    const char *name;
    const char *down[MAXN]; /* not Ready */
    const char *full[MAXN]; /* a non-TAS pod takes all 8 GPUs */
    const char *half[MAXN]; /* a non-TAS pod takes 4 */
    int32_t count;
    const char *required;
    const char *preferred;
    const char *existing[MAXN]; /* "n9:1": the PodSet's admitted assignment */
    const char *unhealthy[MAXN];
    int replace_all;
    int prefer_same_domain;
    int single_pod_owned;
    const char *want;             /* "n10:1,n11:1" or "error: <message>" */
    const char *want_replacement; /* NULL: none */
} scenario;

/* The parsed "host:count" list. The lowest level is the hostname, so an
 * assignment holds that level only, as Kueue's does. */
typedef struct admitted {
    char hosts[MAXN][8];
    const char *values[MAXN][1];
    topo_assign_domain domains[MAXN];
    topo_assignment a;
} admitted;

static void parse_existing(admitted *ad, const char *const *existing)
{
    size_t n = 0;
    memset(ad, 0, sizeof(*ad));
    for (; n < MAXN && existing[n] != NULL; n++) {
        int host = 0, count = 0;
        assert_int_equal(sscanf(existing[n], "n%d:%d", &host, &count), 2);
        snprintf(ad->hosts[n], sizeof(ad->hosts[n]), "n%d", host);
        ad->values[n][0] = ad->hosts[n];
        ad->domains[n].values = ad->values[n];
        ad->domains[n].count = count;
    }
    ad->a = (topo_assignment){levels3 + 2, 1, ad->domains, n};
}

/* The cluster of a scenario, with its admitted pods charged on the nodes
 * that are still Ready. */
static topo_snapshot *cluster(const scenario *sc, const admitted *ad)
{
    topo_snapshot *snap = NULL;
    topo_snapshot_opts opts = {"gpus", levels3, 3, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &opts, NULL), 0);
    for (int i = 9; i <= 20; i++) {
        char name[8];
        const char *block, *rack;
        snprintf(name, sizeof(name), "n%d", i);
        place_of(i, &block, &rack);
        topo_kv labels[] = {{levels3[0], block}, {levels3[1], rack}, {levels3[2], name}};
        topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
        topo_node_spec node = {name, labels, 3, alloc, 2, NULL, 0, 0, !listed(sc->down, name), 0};
        assert_int_equal(topo_snapshot_add_node(snap, &node, NULL), 0);
        topo_resource full[] = {{"nvidia.com/gpu", 8}};
        if (listed(sc->full, name))
            assert_int_equal(topo_snapshot_add_pod_usage(snap, name, full, 1, NULL, NULL), 0);
        if (listed(sc->half, name))
            assert_int_equal(topo_snapshot_add_pod_usage(snap, name, pod_req, 1, NULL, NULL), 0);
    }
    for (size_t i = 0; i < ad->a.ndomains; i++)
        if (!listed(sc->down, ad->hosts[i]))
            assert_int_equal(topo_snapshot_add_tas_usage(snap, ad->values[i], 1,
                                                         ad->domains[i].count, pod_req, 1, NULL),
                             0);
    assert_int_equal(topo_snapshot_build(snap, NULL), 0);
    return snap;
}

static void render_assignment(char *out, size_t len, const topo_assignment *a)
{
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; i < a->ndomains && w < len; i++)
        w += (size_t)snprintf(out + w, len - w, "%s%s:%d", i ? "," : "",
                              a->domains[i].values[a->nlevels - 1], a->domains[i].count);
}

/* Stands for memory the engine did not write: a result must say NULL. */
static const topo_assign_domain unwritten_domain = {levels3, 0};
static const topo_assignment unwritten = {levels3, 1, &unwritten_domain, 1};

typedef struct outcome {
    char got[512];
    char replacement[512]; /* "NULL" when none */
} outcome;

static void run(const scenario *sc, outcome *out)
{
    admitted ad;
    parse_existing(&ad, sc->existing);
    topo_snapshot *snap = cluster(sc, &ad);
    topo_pool *pool = topo_pool_create();
    topo_gates gates;
    topo_gates_init(&gates);
    topo_podset_spec ps;
    memset(&ps, 0, sizeof(ps));
    ps.name = "main";
    ps.count = sc->count;
    ps.requests = pod_req;
    ps.nrequests = 1;
    ps.required = sc->required;
    ps.preferred = sc->preferred;
    size_t nunhealthy = 0;
    while (nunhealthy < MAXN && sc->unhealthy[nunhealthy] != NULL)
        nunhealthy++;
    topo_admitted_podset adm = {"main", sc->count, &ad.a};
    topo_workload_spec wl = {sc->single_pod_owned, sc->unhealthy, nunhealthy, &adm, 1,
                             sc->replace_all, sc->prefer_same_domain};
    topo_podset_result res;
    res.replacement = &unwritten;
    topo_err err = TOPO_ERR_INIT;
    if (topo_engine_find(&res, snap, &ps, 1, &wl, &gates, pool, &err) != 0)
        fail_msg("%s: %s", sc->name, err.text);
    if (res.failure != NULL)
        snprintf(out->got, sizeof(out->got), "error: %s", res.failure);
    else
        render_assignment(out->got, sizeof(out->got), res.assignment);
    if (res.replacement == NULL)
        snprintf(out->replacement, sizeof(out->replacement), "NULL");
    else if (res.replacement == &unwritten)
        snprintf(out->replacement, sizeof(out->replacement), "(not written)");
    else
        render_assignment(out->replacement, sizeof(out->replacement), res.replacement);
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

/* Returns 1 when the scenario gives what it expects; prints it otherwise. */
static int check(const scenario *sc)
{
    outcome o;
    run(sc, &o);
    const char *want_repl = sc->want_replacement ? sc->want_replacement : "NULL";
    if (strcmp(o.got, sc->want) == 0 && strcmp(o.replacement, want_repl) == 0)
        return 1;
    print_error("%s:\n want [%s] replacement [%s]\n got  [%s] replacement [%s]\n", sc->name,
                sc->want, want_repl, o.got, o.replacement);
    return 0;
}

/* n10 is half taken by another pod, so with this PodSet's pod it is full:
 * r1's free nodes are n11 and n12. r2 has the most room, r3 the least (n20
 * has room for one pod): Kueue's best fit for one pod anywhere is n20. */
#define R1_N10_FULL "n10", "n20"
#define R3_ONE_LEFT "n19"

static const scenario cases[] = {
    {"required rack: n9's pod goes to a free node of r1, not to r2 or r3",
     {"n9"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"}, {"n9"}, 0, 0, 0,
     "n10:1,n11:1", "n11:1"},
    {"required rack, replace_all with one node: the same as Kueue's",
     {"n9"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"}, {"n9"}, 1, 0, 0,
     "n10:1,n11:1", "n11:1"},
    {"replace_all: n9 and n10 replaced in one search inside r1",
     {"n9", "n10"}, {R3_ONE_LEFT}, {"n20", "n11"}, 3, RACK, NULL, {"n9:1", "n10:1", "n11:1"},
     {"n9", "n10"}, 1, 0, 0, "n11:1,n12:2", "n12:2"},
    {"without replace_all only n9 is replaced, and n10 makes the assignment stale",
     {"n9", "n10"}, {R3_ONE_LEFT}, {"n20", "n11"}, 3, RACK, NULL, {"n9:1", "n10:1", "n11:1"},
     {"n9", "n10"}, 0, 0, 0,
     "error: Cannot replace the node, because the existing topologyAssignment is invalid, as "
     "it contains the stale domain n10",
     NULL},
    {"replace_all: a node outside the assignment holds no pods and does not fail it",
     {"n9", "n13"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"},
     {"n13", "n9"}, 1, 0, 0, "n10:1,n11:1", "n11:1"},
    {"replace_all: no unhealthy node in the assignment keeps it",
     {"n13"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"}, {"n13"}, 1, 0, 0,
     "n9:1,n10:1", NULL},
    {"Kueue: an unhealthy node outside the assignment has nothing to replace",
     {"n13"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"}, {"n13"}, 0, 0, 0,
     "error: cannot find replacement assignment for unhealthy node: n13", NULL},
    {"no room in r1: Kueue's message, though r2 and r3 have room",
     {"n9"}, {R3_ONE_LEFT, "n11", "n12"}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"},
     {"n9"}, 1, 0, 0,
     "error: topology \"gpus\" doesn't allow to fit any of 1 pod(s). Total nodes: 11; "
     "excluded: resource \"nvidia.com/gpu\": 3, topologyDomain: 8",
     NULL},
    {"preferred rack, prefer_same_domain: r1 has room",
     {"n9"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, NULL, RACK, {"n9:1", "n10:1"}, {"n9"}, 1, 1, 0,
     "n10:1,n11:1", "n11:1"},
    {"preferred rack, Kueue's choice: anywhere, the tightest rack",
     {"n9"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 2, NULL, RACK, {"n9:1", "n10:1"}, {"n9"}, 1, 0, 0,
     "n10:1,n20:1", "n20:1"},
    {"preferred rack, prefer_same_domain: r1 full, Kueue's choice",
     {"n9"}, {R3_ONE_LEFT, "n11", "n12"}, {R1_N10_FULL}, 2, NULL, RACK, {"n9:1", "n10:1"},
     {"n9"}, 1, 1, 0, "n10:1,n20:1", "n20:1"},
    {"required rack: prefer_same_domain changes nothing",
     {"n9"}, {R3_ONE_LEFT, "n11", "n12"}, {R1_N10_FULL}, 2, RACK, NULL, {"n9:1", "n10:1"},
     {"n9"}, 1, 1, 0,
     "error: topology \"gpus\" doesn't allow to fit any of 1 pod(s). Total nodes: 11; "
     "excluded: resource \"nvidia.com/gpu\": 3, topologyDomain: 8",
     NULL},
    {"single-Pod owned: the assignment is kept, nothing replaced",
     {"n9"}, {R3_ONE_LEFT}, {R1_N10_FULL}, 1, RACK, NULL, {"n9:1"}, {"n9"}, 1, 0, 1, "n9:1",
     NULL},
    {"every node failed: placed anew in one rack (the tightest that fits)",
     {"n9", "n10"}, {R3_ONE_LEFT}, {"n20"}, 2, RACK, NULL, {"n9:1", "n10:1"}, {"n9", "n10"}, 1, 0,
     0, "n11:2", "n11:2"},
};

static void test_engine_replace__table(void **state)
{
    (void)state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        failed += !check(&cases[i]);
    assert_int_equal(failed, 0);
}

/* prefer_same_domain moves the search only while the remaining pods' rack
 * has room; with r1 full its fallback is exactly Kueue's choice (the result
 * without the option). */
static void test_engine_replace__preferred_same_domain_or_kueues(void **state)
{
    (void)state;
    const scenario *pairs[] = {&cases[8], &cases[10]}; /* r1 with room, r1 full */
    for (size_t i = 0; i < 2; i++) {
        scenario sc = *pairs[i];
        outcome with, without;
        assert_int_equal(sc.prefer_same_domain, 1);
        run(&sc, &with);
        sc.prefer_same_domain = 0;
        run(&sc, &without);
        if (i == 0) {
            assert_string_not_equal(with.got, without.got);
        } else {
            assert_string_equal(with.got, without.got);
            assert_string_equal(with.replacement, without.replacement);
        }
    }
}

/* An unhealthy list with a NULL entry, an assignment without levels: a
 * malformed request, not a crash. */
static void test_engine_replace__malformed_workload(void **state)
{
    (void)state;
    scenario sc = cases[0];
    admitted ad;
    parse_existing(&ad, sc.existing);
    topo_snapshot *snap = cluster(&sc, &ad);
    topo_pool *pool = topo_pool_create();
    topo_podset_spec ps;
    memset(&ps, 0, sizeof(ps));
    ps.name = "main";
    ps.count = 2;
    ps.requests = pod_req;
    ps.nrequests = 1;
    ps.required = RACK;
    const char *unhealthy[] = {"n9", NULL};
    topo_admitted_podset adm = {"main", 2, &ad.a};
    topo_workload_spec wl = {0, unhealthy, 2, &adm, 1, 1, 0};
    topo_podset_result res;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_engine_find(&res, snap, &ps, 1, &wl, NULL, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "unhealthy_nodes[1]"));
    /* an assignment without levels has no hostname to compare */
    unhealthy[1] = "n10";
    topo_assignment no_levels = ad.a;
    no_levels.nlevels = 0;
    adm.assignment = &no_levels;
    err = (topo_err)TOPO_ERR_INIT;
    assert_int_equal(topo_engine_find(&res, snap, &ps, 1, &wl, NULL, pool, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "assignment has no levels"));
    topo_pool_free(pool);
    topo_snapshot_free(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_replace__table),
        cmocka_unit_test(test_engine_replace__preferred_same_domain_or_kueues),
        cmocka_unit_test(test_engine_replace__malformed_workload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
