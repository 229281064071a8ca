/* The switch graph and its tiers: the real dumps of fixtures/sources/ibnetdiscover
 * and synthetic fabrics (rail-optimised units, a storage plane, a broken
 * cable, three tiers, overlapping upward sets, the leaf pitfall).
 *
 * The figures asserted for the real dumps were counted independently by
 * test/fabric/tiers_reference.py (Python, its own parse of the dump and
 * its own grouping with dicts of frozensets); it gives every host the same
 * tier list as the C code, for each dump and each filter used here. The
 * checks of consistent_with_graph() are derived from the facts directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/fabric.h"
#include "topo/ibnetdiscover.h"

static topo_facts *read_dump(const char *name)
{
    char path[1024];
    const char *root = getenv("TOPO_SOURCE_DIR");
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = NULL;
    snprintf(path, sizeof(path), "%s/fixtures/sources/ibnetdiscover/%s", root ? root : ".", name);
    assert_int_equal(topo_facts_create(&f, name, &err), 0);
    if (topo_ibnetdiscover_read_file(f, path, NULL, NULL, &err) != 0)
        fail_msg("%s: %s", name, err.text);
    return f;
}

static topo_fabric *build(const topo_facts *f, const topo_fabric_opts *opts)
{
    topo_err err = TOPO_ERR_INIT;
    topo_fabric *fab = NULL;
    const topo_facts *all[1] = {f};
    if (topo_fabric_build(&fab, all, 1, opts, &err) != 0)
        fail_msg("build: %s", err.text);
    return fab;
}

static size_t host_at(const topo_fabric *fab, const char *name)
{
    size_t i = 0;
    if (topo_fabric_find_host(fab, name, &i) != 0)
        fail_msg("no host %s", name);
    return i;
}

/* The tier list of a host, " "-joined: "L S C". */
static const char *tiers_of(const topo_fabric *fab, const char *name, char *buf, size_t size)
{
    size_t h = host_at(fab, name), used = 0;
    buf[0] = '\0';
    for (size_t t = 0; t < topo_fabric_host_tier_count(fab, h); t++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", t ? " " : "",
                                 topo_fabric_host_tier(fab, h, t));
    return buf;
}

#define assert_tiers(fab, host, want)                                                              \
    do {                                                                                           \
        char buf_[512];                                                                            \
        assert_string_equal(tiers_of((fab), (host), buf_, sizeof(buf_)), (want));                  \
    } while (0)

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The facts' own view: which switches each host is cabled to, which
 * switches are leaves, who is cabled to whom. */
typedef struct graph {
    size_t nsw, nhosts;
    unsigned char *leaf;   /* [nsw] */
    unsigned char *adj;    /* [nsw * nsw] */
    unsigned char *cabled; /* [nhosts * nsw] */
} graph;

static graph graph_of(const topo_facts *f)
{
    graph g = {topo_facts_switch_count(f), topo_facts_host_count(f), NULL, NULL, NULL};
    g.leaf = calloc(g.nsw + 1, 1);
    g.adj = calloc(g.nsw * g.nsw + 1, 1);
    g.cabled = calloc(g.nhosts * g.nsw + 1, 1);
    assert_non_null(g.leaf);
    assert_non_null(g.adj);
    assert_non_null(g.cabled);
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (!l.is_host_link) {
            g.adj[l.sw * g.nsw + l.other] = g.adj[l.other * g.nsw + l.sw] = 1;
            continue;
        }
        g.leaf[l.sw] = 1;
        if (l.host != TOPO_FACTS_NO_HOST)
            g.cabled[l.host * g.nsw + l.sw] = 1;
    }
    return g;
}

static void graph_free(graph *g)
{
    free(g->leaf);
    free(g->adj);
    free(g->cabled);
}

static size_t facts_switch(const topo_facts *f, const char *id)
{
    size_t i = 0;
    assert_int_equal(topo_facts_find_switch(f, id, &i), 0);
    return i;
}

/* Every placed host is cabled to a leaf of its leaf domain, and only to
 * leaves of it when it is not ambiguous; its spine group is exactly the
 * non-leaf switches cabled to its leaf domain; hosts cabled to the same
 * set of leaves have the same leaf value. Returns the hosts checked. */
static size_t consistent_with_graph(const topo_facts *f, const topo_fabric *fab)
{
    graph g = graph_of(f);
    size_t checked = 0;
    char **sig = calloc(g.nhosts + 1, sizeof(*sig));
    assert_non_null(sig);
    for (size_t fh = 0; fh < g.nhosts; fh++) {
        size_t h = host_at(fab, topo_facts_host_name(f, fh));
        topo_fabric_status st = topo_fabric_host_status(fab, h);
        if (st != TOPO_FABRIC_HOST_PLACED && st != TOPO_FABRIC_HOST_AMBIGUOUS)
            continue;
        checked++;
        size_t d = topo_fabric_host_group(fab, h, 0);
        topo_fabric_group dom = topo_fabric_group_at(fab, 0, d);
        unsigned char *in_dom = calloc(g.nsw + 1, 1);
        assert_non_null(in_dom);
        size_t hits = 0;
        for (size_t k = 0; k < dom.nswitches; k++) {
            size_t s = facts_switch(f, topo_fabric_group_switch(fab, 0, d, k));
            in_dom[s] = 1;
            hits += g.cabled[fh * g.nsw + s];
        }
        assert_true(hits > 0);
        size_t siglen = 0;
        sig[fh] = calloc(g.nsw * 24 + 1, 1);
        for (size_t s = 0; s < g.nsw; s++) {
            if (!g.cabled[fh * g.nsw + s])
                continue;
            if (st == TOPO_FABRIC_HOST_PLACED)
                assert_true(in_dom[s]);
            siglen += (size_t)sprintf(sig[fh] + siglen, "%zu,", s);
        }
        /* the spine group: the non-leaf neighbours of the domain's leaves */
        if (topo_fabric_host_tier_count(fab, h) > 1) {
            size_t sg = topo_fabric_host_group(fab, h, 1), n = 0;
            topo_fabric_group spine = topo_fabric_group_at(fab, 1, sg);
            const char **want = calloc(g.nsw + 1, sizeof(*want));
            for (size_t s = 0; s < g.nsw; s++) {
                int up = 0;
                for (size_t m = 0; m < g.nsw && !up; m++)
                    up = in_dom[m] && g.adj[m * g.nsw + s];
                if (up && !g.leaf[s])
                    want[n++] = topo_facts_switch_id(f, s);
            }
            qsort(want, n, sizeof(*want), cmp_str);
            assert_int_equal(spine.nswitches, n);
            for (size_t k = 0; k < n; k++)
                assert_string_equal(topo_fabric_group_switch(fab, 1, sg, k), want[k]);
            free(want);
        }
        free(in_dom);
    }
    /* the same leaf set, the same leaf value */
    for (size_t a = 0; a < g.nhosts; a++)
        for (size_t b = a + 1; sig[a] && b < g.nhosts; b++)
            if (sig[b] && strcmp(sig[a], sig[b]) == 0)
                assert_string_equal(
                    topo_fabric_host_tier(fab, host_at(fab, topo_facts_host_name(f, a)), 0),
                    topo_fabric_host_tier(fab, host_at(fab, topo_facts_host_name(f, b)), 0));
    for (size_t i = 0; i < g.nhosts; i++)
        free(sig[i]);
    free(sig);
    graph_free(&g);
    return checked;
}

static void assert_group_counts(const topo_fabric *fab, const size_t *want, size_t n)
{
    assert_int_equal(topo_fabric_tier_count(fab), n);
    for (size_t t = 0; t < n; t++)
        assert_int_equal(topo_fabric_group_count(fab, t), want[t]);
}

static void test_fabric__selene(void **state)
{
    (void)state;
    topo_facts *f = read_dump("mellanox-selene.compute.txt");
    topo_fabric *fab = build(f, NULL);
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    /* 203 leaves: 200 LGxx-yy (25 scalable units of 8 rail leaves) and 3
     * management leaves MLG01-01/02/04. Tiers: 28 leaf domains (25 units +
     * 3 MLG leaves alone); 7 spine groups: 4 of 80 CSPINE switches (units
     * 1-7, 8-14, 15-21, 22-28 as far as present: 7, 7, 4 and 7 units) and
     * the single spines above the management leaves; 3 core groups (140
     * CCORE above the compute pods; 7 and 14 above the management spines);
     * then MSPINE4-01 and MLG01-05, a management leaf with no adapter in
     * this dump, reached upwards through the cores. */
    assert_int_equal(st.switches, 666);
    assert_int_equal(st.leaves, 203);
    assert_int_equal(st.switches_unplaced, 0);
    assert_int_equal(st.hosts, 469);
    assert_int_equal(st.hosts_placed, 469);
    assert_int_equal(st.hosts_ambiguous, 0);
    assert_int_equal(st.host_cables, 3675);
    assert_group_counts(fab, (const size_t[]){28, 7, 3, 1, 1}, 5);
    /* units of 8 leaves and their 14-20 DGX */
    size_t units = 0;
    for (size_t i = 0; i < topo_fabric_group_count(fab, 0); i++) {
        topo_fabric_group g = topo_fabric_group_at(fab, 0, i);
        if (g.nswitches == 8) {
            units++;
            assert_in_range(g.nhosts, 14, 20);
        }
    }
    assert_int_equal(units, 25);
    /* LG01's lowest id is LG01-08's; pod 1's spines' lowest CSPINE1-51 */
    assert_tiers(fab, "luna-0001",
                 "0c42a1030060ab50 0c42a1030055678a 0c42a1030055a8da 0c42a1030079ae0c "
                 "0c42a1030079aeec");
    assert_tiers(fab, "luna-0458",
                 "0c42a103009d7a56 0c42a1030015c0a0 0c42a1030055a8da 0c42a1030079ae0c "
                 "0c42a1030079aeec");
    /* "selene-slurm-01 mlx5_1 ": on MLG01-01, under CSPINE1-40 */
    assert_tiers(fab, "selene-slurm-01",
                 "1c34da0300728966 1c34da030047f840 0c42a1030060ac90");
    topo_fabric_group spine = topo_fabric_group_at(fab, 1, 3);
    assert_string_equal(spine.id, "0c42a1030055678a");
    assert_string_equal(spine.name, "MF0;CSPINE1-51:MQM8700/U1");
    assert_int_equal(spine.nswitches, 80);
    assert_int_equal(spine.nchildren, 7);
    assert_int_equal(spine.nhosts, 132);
    assert_int_equal(consistent_with_graph(f, fab), 469);
    topo_fabric_free(fab);
    topo_facts_free(f);
}

static void test_fabric__selene_without_management_plane(void **state)
{
    (void)state;
    topo_facts *f = read_dump("mellanox-selene.compute.txt");
    /* MLG01-01/02/04/05 and MSPINE3-01/4-01 left out: the compute fabric is
     * 25 units under 4 pods under one core group; the 11 management hosts'
     * cables all went to left-out switches. */
    topo_fabric_opts opts = {.exclude_switch = "^MF0;M"};
    topo_fabric *fab = build(f, &opts);
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    assert_int_equal(st.switches, 660);
    assert_int_equal(st.switches_excluded, 6);
    assert_int_equal(st.leaves, 200);
    assert_int_equal(st.hosts_placed, 458);
    assert_int_equal(st.hosts_excluded, 11);
    assert_int_equal(st.host_cables_excluded, 11);
    assert_group_counts(fab, (const size_t[]){25, 4, 1}, 3);
    assert_tiers(fab, "luna-0001", "0c42a1030060ab50 0c42a1030055678a 0c42a1030055a8da");
    size_t h = host_at(fab, "selene-slurm-01");
    assert_int_equal(topo_fabric_host_status(fab, h), TOPO_FABRIC_HOST_EXCLUDED);
    assert_int_equal(topo_fabric_host_tier_count(fab, h), 0);
    assert_null(topo_fabric_host_tier(fab, h, 0));
    assert_string_equal(topo_fabric_status_name(TOPO_FABRIC_HOST_EXCLUDED), "excluded");
    topo_fabric_free(fab);
    topo_facts_free(f);
}

static void test_fabric__topograph_ndr_example(void **state)
{
    (void)state;
    topo_facts *f = read_dump("topograph-example.out");
    topo_fabric *fab = build(f, NULL);
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    /* 31 IBLEAF switches are the leaves; the 9 IBSPINE switches are each
     * cabled to leaves of every unit and fold into one spine group, whose
     * id is topograph's merged spine, the lowest: 2c5eab0300c25f00
     * (IBSPINE-07). 9 leaf domains: units a05 (3 leaves in the dump), a06,
     * a07, a08, b05, b06, b07 (4 each), and b08 split in two: IBLEAF-03-08
     * and -04-08 also serve the two CUFM servers and "ubuntu". The 14 b08
     * DGX are cabled 2 + 2 to both halves: ambiguous, placed on the tie's
     * lowest id, IBLEAF-01-08's 2c5eab0300b87c40. */
    assert_int_equal(st.switches, 40);
    assert_int_equal(st.leaves, 31);
    assert_int_equal(st.hosts, 122);
    assert_int_equal(st.hosts_placed, 108);
    assert_int_equal(st.hosts_ambiguous, 14);
    assert_int_equal(st.unnamed_cables, 19);
    assert_group_counts(fab, (const size_t[]){9, 1}, 2);
    topo_fabric_group spine = topo_fabric_group_at(fab, 1, 0);
    assert_string_equal(spine.id, "2c5eab0300c25f00");
    assert_string_equal(spine.name, "MF0;B10-P1-IBSPINE-07:MQM9701/U1");
    assert_int_equal(spine.nswitches, 9);
    assert_int_equal(spine.nchildren, 9);
    assert_int_equal(spine.nhosts, 122);
    assert_null(topo_fabric_group_switch(fab, 1, 0, 9));
    size_t leaves = 0;
    for (size_t i = 0; i < 9; i++)
        leaves += topo_fabric_group_at(fab, 0, i).nswitches;
    assert_int_equal(leaves, 31);
    assert_tiers(fab, "a06-p1-dgx-02-c01", "2c5eab0300b87a80 2c5eab0300c25f00");
    assert_tiers(fab, "b08-p1-dgx-08-c01", "2c5eab0300b87c40 2c5eab0300c25f00");
    assert_tiers(fab, "B11-P1-CUFM-02", "2c5eab0300c26400 2c5eab0300c25f00");
    size_t h = host_at(fab, "b08-p1-dgx-08-c01");
    assert_int_equal(topo_fabric_host_status(fab, h), TOPO_FABRIC_HOST_AMBIGUOUS);
    assert_int_equal(topo_fabric_host_leaf_domains(fab, h), 2);
    assert_int_equal(consistent_with_graph(f, fab), 122);
    topo_fabric_free(fab);
    topo_facts_free(f);
}

static void test_fabric__small_and_isolated(void **state)
{
    (void)state;
    /* Two leaves cabled to each other, nothing above: one tier. r-dcs96
     * has two adapters on each: ambiguous, placed on the lower id. */
    topo_facts *f = read_dump("mellanox-small_topo_file.txt");
    topo_fabric *fab = build(f, NULL);
    assert_group_counts(fab, (const size_t[]){2}, 1);
    assert_tiers(fab, "r-dcs96", "0002c903007b78b0");
    assert_tiers(fab, "r-dmz-ufm131", "0002c903007b78b0");
    assert_int_equal(topo_fabric_host_status(fab, host_at(fab, "r-dcs96")),
                     TOPO_FABRIC_HOST_AMBIGUOUS);
    assert_null(topo_fabric_host_tier(fab, host_at(fab, "r-dcs96"), 1));
    assert_int_equal(topo_fabric_group_at(fab, 0, 0).parent, TOPO_FABRIC_NONE);
    topo_fabric_free(fab);
    topo_facts_free(f);

    /* topograph's bad GB200 example: a host, no switch, no tier */
    f = read_dump("topograph-example-bad.out");
    fab = build(f, NULL);
    assert_int_equal(topo_fabric_tier_count(fab), 0);
    assert_int_equal(topo_fabric_group_count(fab, 0), 0);
    assert_null(topo_fabric_group_at(fab, 0, 0).id);
    assert_null(topo_fabric_group_switch(fab, 0, 0, 0));
    size_t h = host_at(fab, "dgx-gb200-n01-c1");
    assert_int_equal(topo_fabric_host_status(fab, h), TOPO_FABRIC_HOST_NO_LEAF);
    assert_string_equal(topo_fabric_status_name(topo_fabric_host_status(fab, h)), "no-leaf");
    assert_int_equal(topo_fabric_host_tier_count(fab, h), 0);
    assert_int_equal(topo_fabric_get_stats(fab).hosts_no_leaf, 1);
    topo_fabric_free(fab);
    topo_facts_free(f);
}

/* ---- synthetic fabrics ---- */

static void host_link(topo_facts *f, const char *host, const char *port, const char *sw)
{
    topo_err err = TOPO_ERR_INIT;
    if (topo_facts_add_host_link(f, host, port, sw, &err) != 0)
        fail_msg("%s", err.text);
}

static void switch_link(topo_facts *f, const char *a, const char *b)
{
    topo_err err = TOPO_ERR_INIT;
    if (topo_facts_add_switch_link(f, a, b, &err) != 0)
        fail_msg("%s", err.text);
}

static topo_facts *new_facts(const char *source)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = NULL;
    assert_int_equal(topo_facts_create(&f, source, &err), 0);
    return f;
}

/* Two DGX-style units of 4 hosts x 4 rails: unit u's rail leaf "leaf-u-r"
 * takes adapter mlx5_r of each of its hosts; spines "spine-1/2" take every
 * rail leaf. A storage plane of its own: "storage-leaf" takes every host's
 * mlx5_s, under "storage-spine". Built in the order asked (0 or 1) so that
 * orders can be compared. */
static void rail_fabric(topo_facts *f, int reverse, int broken)
{
    for (int i = 0; i < 2 * 4 * 4; i++) {
        int k = reverse ? 31 - i : i, u = k / 16, r = (k / 4) % 4, n = k % 4;
        char host[32], port[16], leaf[32];
        snprintf(host, sizeof(host), "gpu-%d-%d", u, n);
        snprintf(port, sizeof(port), "mlx5_%d", r);
        snprintf(leaf, sizeof(leaf), "leaf-%d-%d", u, r);
        if (!(broken && u == 0 && r == 2 && n == 0)) /* one cable down */
            host_link(f, host, port, leaf);
        if (n == 0) {
            switch_link(f, leaf, reverse ? "spine-2" : "spine-1");
            switch_link(f, reverse ? "spine-1" : "spine-2", leaf);
        }
        if (r == 0)
            host_link(f, host, "mlx5_s", "storage-leaf");
    }
    switch_link(f, "storage-leaf", "storage-spine");
}

static void test_fabric__rail_optimised(void **state)
{
    (void)state;
    topo_facts *f = new_facts("synthetic");
    rail_fabric(f, 0, 0);
    topo_fabric *fab = build(f, NULL);
    /* the storage leaf serves all 8 hosts: a domain of its own, under its
     * own spine; each host has 4 cables in its unit's domain and 1 on
     * storage: ambiguous, placed by its most cables */
    assert_group_counts(fab, (const size_t[]){3, 2}, 2);
    assert_tiers(fab, "gpu-0-0", "leaf-0-0 spine-1");
    assert_tiers(fab, "gpu-0-3", "leaf-0-0 spine-1");
    assert_tiers(fab, "gpu-1-2", "leaf-1-0 spine-1");
    assert_int_equal(topo_fabric_host_status(fab, host_at(fab, "gpu-1-2")),
                     TOPO_FABRIC_HOST_AMBIGUOUS);
    topo_fabric_group unit = topo_fabric_group_at(fab, 0, 0);
    assert_string_equal(unit.id, "leaf-0-0");
    assert_int_equal(unit.nswitches, 4);
    assert_int_equal(unit.nhosts, 4);
    assert_string_equal(topo_fabric_group_switch(fab, 0, 0, 3), "leaf-0-3");
    assert_string_equal(topo_fabric_group_at(fab, 1, 1).id, "storage-spine");
    assert_int_equal(topo_fabric_group_at(fab, 1, 1).nhosts, 0);
    topo_fabric_free(fab);

    /* the plane filter by port: the storage leaf serves no host but stays a
     * leaf (not a tier above anything); every host is placed cleanly */
    topo_fabric_opts by_port = {.exclude_port = "^mlx5_s$"};
    fab = build(f, &by_port);
    assert_group_counts(fab, (const size_t[]){3, 2}, 2);
    assert_int_equal(topo_fabric_get_stats(fab).hosts_placed, 8);
    assert_int_equal(topo_fabric_get_stats(fab).leaves, 9);
    assert_int_equal(topo_fabric_get_stats(fab).host_cables_excluded, 8);
    assert_tiers(fab, "gpu-1-2", "leaf-1-0 spine-1");
    topo_fabric_free(fab);

    /* the same by including the compute rails only */
    topo_fabric_opts include = {.include_port = "^mlx5_[0-9]+$"};
    fab = build(f, &include);
    assert_int_equal(topo_fabric_get_stats(fab).hosts_placed, 8);
    topo_fabric_free(fab);

    /* the plane filter by switch: the storage plane is gone */
    topo_fabric_opts by_switch = {.exclude_switch = "^storage-"};
    fab = build(f, &by_switch);
    assert_group_counts(fab, (const size_t[]){2, 1}, 2);
    assert_int_equal(topo_fabric_get_stats(fab).switches_excluded, 2);
    assert_int_equal(topo_fabric_get_stats(fab).hosts_placed, 8);
    assert_tiers(fab, "gpu-1-2", "leaf-1-0 spine-1");
    topo_fabric_free(fab);
    topo_facts_free(f);
}

static void test_fabric__broken_cable(void **state)
{
    (void)state;
    /* gpu-0-0's rail-2 cable is down: leaf-0-2 serves a smaller set and is
     * a domain of its own, but every unit-0 host still has most of its
     * cables in the unit's domain and keeps its leaf value */
    topo_facts *f = new_facts("synthetic");
    rail_fabric(f, 0, 1);
    topo_fabric_opts opts = {.exclude_switch = "^storage-"};
    topo_fabric *fab = build(f, &opts);
    assert_group_counts(fab, (const size_t[]){3, 1}, 2);
    for (int n = 0; n < 4; n++) {
        char host[16];
        snprintf(host, sizeof(host), "gpu-0-%d", n);
        assert_tiers(fab, host, "leaf-0-0 spine-1");
    }
    assert_int_equal(topo_fabric_host_status(fab, host_at(fab, "gpu-0-0")),
                     TOPO_FABRIC_HOST_PLACED);
    assert_int_equal(topo_fabric_host_status(fab, host_at(fab, "gpu-0-1")),
                     TOPO_FABRIC_HOST_AMBIGUOUS);
    topo_fabric_free(fab);
    topo_facts_free(f);
}

/* Every host's tier list and every group, as one text. */
static char *describe(const topo_fabric *fab)
{
    size_t size = 1 << 20, used = 0;
    char *out = calloc(size, 1);
    assert_non_null(out);
    for (size_t t = 0; t < topo_fabric_tier_count(fab); t++)
        for (size_t i = 0; i < topo_fabric_group_count(fab, t); i++) {
            topo_fabric_group g = topo_fabric_group_at(fab, t, i);
            used += (size_t)snprintf(out + used, size - used, "%zu %s %s %zu %zu %zu %zu:", t, g.id,
                                     g.name, g.nswitches, g.parent, g.nchildren, g.nhosts);
            for (size_t k = 0; k < g.nswitches; k++)
                used += (size_t)snprintf(out + used, size - used, " %s",
                                         topo_fabric_group_switch(fab, t, i, k));
            used += (size_t)snprintf(out + used, size - used, "\n");
        }
    for (size_t h = 0; h < topo_fabric_host_count(fab); h++) {
        used += (size_t)snprintf(out + used, size - used, "%s %d", topo_fabric_host_name(fab, h),
                                 topo_fabric_host_status(fab, h));
        for (size_t t = 0; t < topo_fabric_host_tier_count(fab, h); t++)
            used +=
                (size_t)snprintf(out + used, size - used, " %s", topo_fabric_host_tier(fab, h, t));
        used += (size_t)snprintf(out + used, size - used, "\n");
        assert_true(used < size);
    }
    return out;
}

/* The facts of f again, switches, hosts and cables in reverse order. */
static topo_facts *reversed(const topo_facts *f)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *r = new_facts("reversed");
    for (size_t i = topo_facts_switch_count(f); i-- > 0;)
        assert_int_equal(topo_facts_add_switch(r, topo_facts_switch_id(f, i),
                                               topo_facts_switch_name(f, i), NULL, &err),
                         0);
    for (size_t i = topo_facts_host_count(f); i-- > 0;)
        assert_int_equal(topo_facts_add_host(r, topo_facts_host_name(f, i), NULL, &err), 0);
    for (size_t i = topo_facts_link_count(f); i-- > 0;) {
        topo_facts_link l = topo_facts_link_at(f, i);
        const char *sw = topo_facts_switch_id(f, l.sw);
        if (l.is_host_link)
            host_link(r, l.host == TOPO_FACTS_NO_HOST ? NULL : topo_facts_host_name(f, l.host),
                      l.port, sw);
        else
            switch_link(r, topo_facts_switch_id(f, l.other), sw);
    }
    return r;
}

static void test_fabric__any_order(void **state)
{
    (void)state;
    topo_facts *a = new_facts("a"), *b = new_facts("b");
    rail_fabric(a, 0, 1);
    rail_fabric(b, 1, 1);
    topo_fabric *fa = build(a, NULL), *fb = build(b, NULL);
    char *da = describe(fa), *db = describe(fb);
    assert_string_equal(da, db);
    free(db);
    topo_fabric_free(fb);
    /* split over two facts, given in either order */
    topo_facts *half1 = new_facts("h1"), *half2 = new_facts("h2");
    for (size_t i = 0; i < topo_facts_link_count(a); i++) {
        topo_facts_link l = topo_facts_link_at(a, i);
        topo_facts *to = i % 2 ? half1 : half2;
        if (l.is_host_link)
            host_link(to, topo_facts_host_name(a, l.host), l.port, topo_facts_switch_id(a, l.sw));
        else
            switch_link(to, topo_facts_switch_id(a, l.sw), topo_facts_switch_id(a, l.other));
    }
    const topo_facts *order[2][2] = {{half1, half2}, {half2, half1}};
    for (int o = 0; o < 2; o++) {
        topo_err err = TOPO_ERR_INIT;
        topo_fabric *fh = NULL;
        assert_int_equal(topo_fabric_build(&fh, order[o], 2, NULL, &err), 0);
        db = describe(fh);
        assert_string_equal(da, db);
        free(db);
        topo_fabric_free(fh);
    }
    free(da);
    topo_fabric_free(fa);
    topo_facts_free(a);
    topo_facts_free(b);
    topo_facts_free(half1);
    topo_facts_free(half2);

    /* Selene, every entry in reverse */
    topo_facts *s = read_dump("mellanox-selene.compute.txt"), *r = reversed(s);
    fa = build(s, NULL);
    fb = build(r, NULL);
    da = describe(fa);
    db = describe(fb);
    assert_string_equal(da, db);
    free(da);
    free(db);
    topo_fabric_free(fa);
    topo_fabric_free(fb);
    topo_facts_free(s);
    topo_facts_free(r);
}

static void test_fabric__three_tiers_and_overlaps(void **state)
{
    (void)state;
    topo_facts *f = new_facts("synthetic");
    /* pod p: leaves lp1, lp2 (one host each) under spines sp1, sp2; cores
     * c1, c2 above every spine. Pod 3's two leaves hang off spines that
     * overlap: l31 under {s31, s32}, l32 under {s31, s33}: two spine groups
     * with the same lowest member, s31 and s31.2. */
    static const char *const pods[2] = {"1", "2"};
    for (int p = 0; p < 2; p++)
        for (int l = 1; l <= 2; l++) {
            char leaf[16], host[16], sp[16];
            snprintf(leaf, sizeof(leaf), "l%s%d", pods[p], l);
            snprintf(host, sizeof(host), "h%s%d", pods[p], l);
            host_link(f, host, "HCA-1", leaf);
            for (int s = 1; s <= 2; s++) {
                snprintf(sp, sizeof(sp), "s%s%d", pods[p], s);
                switch_link(f, leaf, sp);
                switch_link(f, sp, "c1");
                switch_link(f, sp, "c2");
            }
        }
    host_link(f, "h31", "HCA-1", "l31");
    host_link(f, "h32", "HCA-1", "l32");
    switch_link(f, "l31", "s31");
    switch_link(f, "l31", "s32");
    switch_link(f, "l32", "s31");
    switch_link(f, "l32", "s33");
    /* a leaf of unnamed adapters only (default descriptions) under pod 1's
     * spines: still a leaf, never a tier above them (topograph's pitfall) */
    host_link(f, NULL, NULL, "l19");
    switch_link(f, "l19", "s11");
    switch_link(f, "l19", "s12");
    /* a host without a cable, a switch reached from no leaf */
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_facts_add_host(f, "h-nowhere", NULL, &err), 0);
    switch_link(f, "island-1", "island-2");

    topo_fabric *fab = build(f, NULL);
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    assert_int_equal(st.leaves, 7);
    assert_int_equal(st.switches_unplaced, 2);
    assert_int_equal(st.unnamed_cables, 1);
    assert_int_equal(st.hosts_no_leaf, 1);
    /* 7 domains; spine groups {s11,s12} (l11, l12, l19 share it), {s21,s22},
     * {s31,s32}, {s31,s33}; cores {c1,c2} above pods 1 and 2 only */
    assert_group_counts(fab, (const size_t[]){7, 4, 1}, 3);
    assert_tiers(fab, "h11", "l11 s11 c1");
    assert_tiers(fab, "h22", "l22 s21 c1");
    assert_tiers(fab, "h31", "l31 s31");
    assert_tiers(fab, "h32", "l32 s31.2");
    topo_fabric_group g = topo_fabric_group_at(fab, 1, 0);
    assert_string_equal(g.id, "s11");
    assert_int_equal(g.nchildren, 3);
    assert_int_equal(g.nhosts, 2);
    assert_int_equal(topo_fabric_group_at(fab, 2, 0).nchildren, 2);
    assert_int_equal(topo_fabric_group_at(fab, 2, 0).nhosts, 4);
    assert_int_equal(topo_fabric_host_status(fab, host_at(fab, "h-nowhere")),
                     TOPO_FABRIC_HOST_NO_LEAF);
    assert_int_equal(topo_fabric_find_host(fab, "nobody", &(size_t){0}), TOPO_ENOTFOUND);
    assert_null(topo_fabric_host_name(fab, 999));
    assert_int_equal(topo_fabric_host_group(fab, 999, 0), TOPO_FABRIC_NONE);
    topo_fabric_free(fab);
    topo_facts_free(f);
}

static void test_fabric__names_and_options(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *a = new_facts("a"), *b = new_facts("b");
    assert_int_equal(topo_facts_add_switch(a, "S-1", "zeta", NULL, &err), 0);
    assert_int_equal(topo_facts_add_switch(b, "S-1", "alpha", NULL, &err), 0);
    host_link(a, "h1", "HCA-1", "S-1");
    host_link(b, "h1", "HCA-1", "S-1"); /* the same cable in both: once */
    const topo_facts *both[2] = {a, b};
    topo_fabric *fab = NULL;
    assert_int_equal(topo_fabric_build(&fab, both, 2, NULL, &err), 0);
    assert_string_equal(topo_fabric_group_at(fab, 0, 0).name, "alpha");
    assert_int_equal(topo_fabric_get_stats(fab).host_cables, 1);
    topo_fabric_free(fab);

    /* the filter matches names; a switch without a name by its id */
    topo_fabric_opts inc = {.include_switch = "^alph"};
    assert_int_equal(topo_fabric_build(&fab, both, 2, &inc, &err), 0);
    assert_int_equal(topo_fabric_get_stats(fab).switches, 1);
    topo_fabric_free(fab);

    static const struct {
        topo_fabric_opts opts;
        const char *message;
    } bad[] = {
        {{.include_switch = "("}, "fabric: include_switch \"(\": "},
        {{.exclude_switch = "a{2"}, "fabric: exclude_switch \"a{2\": "},
        {{.include_port = "[x"}, "fabric: include_port \"[x\": "},
        {{.exclude_port = "*?+"}, "fabric: exclude_port \"*?+\": "},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(topo_fabric_build(&fab, both, 2, &bad[i].opts, &err), TOPO_EINVALID);
        assert_null(fab);
        if (strncmp(err.text, bad[i].message, strlen(bad[i].message)) != 0)
            fail_msg("case %zu: \"%s\"", i, err.text);
    }
    /* nothing at all */
    assert_int_equal(topo_fabric_build(&fab, NULL, 0, NULL, &err), 0);
    assert_int_equal(topo_fabric_tier_count(fab), 0);
    assert_int_equal(topo_fabric_host_count(fab), 0);
    topo_fabric_free(fab);
    topo_fabric_free(NULL);
    topo_facts_free(a);
    topo_facts_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fabric__selene),
        cmocka_unit_test(test_fabric__selene_without_management_plane),
        cmocka_unit_test(test_fabric__topograph_ndr_example),
        cmocka_unit_test(test_fabric__small_and_isolated),
        cmocka_unit_test(test_fabric__rail_optimised),
        cmocka_unit_test(test_fabric__broken_cable),
        cmocka_unit_test(test_fabric__any_order),
        cmocka_unit_test(test_fabric__three_tiers_and_overlaps),
        cmocka_unit_test(test_fabric__names_and_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
