/* ibnetdiscover dumps into facts: the real dumps of fixtures/sources/ibnetdiscover
 * (figures counted independently with a Python one-off over the same files:
 * stanzas by their first word, distinct unordered switch pairs, distinct
 * (host, hca, switch) cables with Aggregation Nodes left out), the shapes
 * real dumps vary in, every malformed line with its line number, the
 * node-name map. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#include "topo/codec.h"
#include "topo/ibnetdiscover.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "support/orders.h"

static const char *fixture(char *buf, size_t size, const char *name)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(buf, size, "%s/fixtures/sources/ibnetdiscover/%s", root ? root : ".", name);
    return buf;
}

static topo_facts *read_fixture(const char *name, topo_ibnetdiscover_stats *stats)
{
    char path[1024];
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = NULL;
    assert_int_equal(topo_facts_create(&f, "ibnetdiscover", &err), 0);
    if (topo_ibnetdiscover_read_file(f, fixture(path, sizeof(path), name), NULL, stats, &err) != 0)
        fail_msg("%s: %s", name, err.text);
    return f;
}

/* Parses text as "dump.txt" with an optional map; returns the code. */
static int parse_text(topo_facts **out, const char *text, const topo_ibnetdiscover_map *map,
                      topo_ibnetdiscover_stats *stats, topo_err *err)
{
    topo_ibnetdiscover_opts opts = {.source = "dump.txt", .map = map};
    assert_int_equal(topo_facts_create(out, "ibnetdiscover:dump.txt", err), 0);
    return topo_ibnetdiscover_parse(*out, text, strlen(text), &opts, stats, err);
}

typedef struct counts {
    size_t host_links, unnamed_links, switch_links;
} counts;

static counts count_links(const topo_facts *f)
{
    counts c = {0};
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (!l.is_host_link)
            c.switch_links++;
        else if (l.host == TOPO_FACTS_NO_HOST)
            c.unnamed_links++;
        else
            c.host_links++;
    }
    return c;
}

/* The cable of host (named) on port to switch id, or 0. */
static int has_host_link(const topo_facts *f, const char *host, const char *port, const char *sw)
{
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (!l.is_host_link || l.host == TOPO_FACTS_NO_HOST)
            continue;
        if (strcmp(topo_facts_host_name(f, l.host), host) == 0 &&
            strcmp(topo_facts_switch_id(f, l.sw), sw) == 0 &&
            ((!port && !l.port) || (port && l.port && strcmp(port, l.port) == 0)))
            return 1;
    }
    return 0;
}

static const char *switch_name(const topo_facts *f, const char *id)
{
    size_t i = 0;
    return topo_facts_find_switch(f, id, &i) == 0 ? topo_facts_switch_name(f, i) : NULL;
}

static void test_ibnetdiscover__small_lab_fabric(void **state)
{
    (void)state;
    topo_ibnetdiscover_stats st;
    topo_facts *f = read_fixture("mellanox-small_topo_file.txt", &st);
    /* 2 Switch and 13 Ca stanzas; one Ca is the MQM8700's Aggregation
     * Node. The SX6036's four loopback cables (ports 25-26, 28-29) are
     * dropped: one switch-switch cable is left (sw95 [3] - sw226 [1]). */
    assert_int_equal(st.lines, 126);
    assert_int_equal(st.switches, 2);
    assert_int_equal(st.adapters, 12);
    assert_int_equal(st.aggregation_nodes, 1);
    assert_int_equal(st.adapters_unnamed, 0);
    assert_int_equal(st.skipped_lines, 0);
    assert_int_equal(topo_facts_switch_count(f), 2);
    assert_string_equal(switch_name(f, "b8599f0300fc6de4"), "MF0;r-ufm-sw95:MQM8700/U1");
    assert_string_equal(switch_name(f, "0002c903007b78b0"), "MF0;r-ufm-sw226:SX6036/U1");
    assert_int_equal(topo_facts_host_count(f), 5); /* r-dcs96, r-dmz-ufm128/131/134/137 */
    counts c = count_links(f);
    assert_int_equal(c.switch_links, 1);
    assert_int_equal(c.host_links, 12);
    assert_int_equal(c.unnamed_links, 0);
    /* r-dcs96 has HCA-1/2 on sw95 and HCA-3/4 on sw226 */
    assert_true(has_host_link(f, "r-dcs96", "HCA-1", "b8599f0300fc6de4"));
    assert_true(has_host_link(f, "r-dcs96", "HCA-3", "0002c903007b78b0"));
    assert_false(has_host_link(f, "r-dcs96", "HCA-3", "b8599f0300fc6de4"));
    topo_facts_free(f);
}

static void test_ibnetdiscover__selene(void **state)
{
    (void)state;
    topo_ibnetdiscover_stats st;
    topo_facts *f = read_fixture("mellanox-selene.compute.txt", &st);
    /* 666 Switch and 4,341 Ca stanzas: 666 Aggregation Nodes (one in every
     * switch), 3,664 luna adapters (458 DGX A100 x 8) and 11 adapters of 11
     * management hosts; 469 hosts. 6,482 distinct switch pairs. */
    assert_int_equal(st.switches, 666);
    assert_int_equal(st.aggregation_nodes, 666);
    assert_int_equal(st.adapters, 3675);
    assert_int_equal(st.adapters_unnamed, 0);
    assert_int_equal(st.routers, 0);
    assert_int_equal(topo_facts_switch_count(f), 666);
    assert_int_equal(topo_facts_host_count(f), 469);
    counts c = count_links(f);
    assert_int_equal(c.switch_links, 6482);
    assert_int_equal(c.host_links, 3675);
    assert_int_equal(c.unnamed_links, 0);
    /* "selene-slurm-01 mlx5_1 ": the trailing blank is trimmed, the host kept */
    assert_true(has_host_link(f, "selene-slurm-01", "mlx5_1", "1c34da0300728966"));
    assert_true(has_host_link(f, "luna-0001", "mlx5_0", "1c34da03006b267a")); /* LG01-01 */
    assert_string_equal(switch_name(f, "1c34da0300728866"), "MF0;MLG01-02:MQM8700/U1");
    topo_facts_free(f);
}

static void test_ibnetdiscover__topograph_ndr_example(void **state)
{
    (void)state;
    topo_ibnetdiscover_stats st;
    topo_facts *f = read_fixture("topograph-example.out", &st);
    /* 40 switches, 582 Ca stanzas: 40 Aggregation Nodes, 542 adapters of
     * which 69 carry "MT4129 ConnectX7   Mellanox Technologies"; 122 hosts
     * (a0N/b0N DGX nodes, two CUFM servers, "localhost", "ubuntu"). The 69
     * unnamed adapters sit on 19 distinct switches: one unnamed cable per
     * switch, which keeps it a leaf. */
    assert_int_equal(st.switches, 40);
    assert_int_equal(st.aggregation_nodes, 40);
    assert_int_equal(st.adapters, 542);
    assert_int_equal(st.adapters_unnamed, 69);
    assert_int_equal(topo_facts_host_count(f), 122);
    counts c = count_links(f);
    assert_int_equal(c.switch_links, 269);
    assert_int_equal(c.host_links, 473);
    assert_int_equal(c.unnamed_links, 19);
    assert_true(has_host_link(f, "a06-p1-dgx-02-c01", "HCA-6", "2c5eab0300b87bc0"));
    assert_true(has_host_link(f, "a08-p1-dgx-04-c01", "mlx5_5", "2c5eab0300b87b40"));
    assert_string_equal(switch_name(f, "2c5eab0300b87b40"), "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
    topo_facts_free(f);
}

static void test_ibnetdiscover__isolated_adapter(void **state)
{
    (void)state;
    topo_ibnetdiscover_stats st;
    topo_facts *f = read_fixture("topograph-example-bad.out", &st);
    /* A GB200 node that saw only its own adapter: its host, nothing else. */
    assert_int_equal(st.switches, 0);
    assert_int_equal(st.adapters, 1);
    assert_int_equal(topo_facts_switch_count(f), 0);
    assert_int_equal(topo_facts_link_count(f), 0);
    assert_int_equal(topo_facts_host_count(f), 1);
    assert_string_equal(topo_facts_host_name(f, 0), "dgx-gb200-n01-c1");
    topo_facts_free(f);
}

/* One switch with host descriptions in every shape, each adapter declared
 * by its own Ca stanza, as ibnetdiscover prints them: the Ca header's
 * description is the one read, and wins over the switch line's (port 5). */
#define CA_OF_AA(g, desc)                                                                          \
    "\ncaguid=0x" g "\n"                                                                           \
    "Ca\t1 \"H-000000000000000" g "\"\t\t# \"" desc "\"\n"                                         \
    "[1](" g ") \t\"S-00000000000000aa\"[" g                                                       \
    "]\t\t# lid 9 lmc 0 \" leaf \"x\" #1 \" lid 1 4xNDR\n"

static const char DESCRIPTIONS[] =
    "#\n# Topology file: generated on Sun Feb 21 16:30:17 2021\n#\n"
    "vendid=0x2c9\r\n"
    "sysimgguid=0xAA\r\n"
    "switchguid=0xaa(aa)\r\n"
    "Switch\t41 \"S-00000000000000AA\"\t\t# \" leaf \"x\" #1 \" enhanced port 0 lid 1 lmc 0\r\n"
    "[1]\t\"H-0000000000000001\"[1](1) \t\t# \"gpu-1 mlx5_0\" lid 2 4xNDR\r\n"
    "[2]\t\"H-0000000000000002\"[1](2) \t\t# \"gpu-2\tHCA-1  \" lid 3 4xNDR\n"
    "[3]\t\"H-0000000000000003\"[1](3) \t\t# \"MT4129 ConnectX7   Mellanox Technologies\" lid 4 "
    "4xNDR\n"
    "[4]\t\"H-0000000000000004\"[1](4) \t\t# \"lonely\" lid 5 4xNDR\n"
    "[5]\t\"H-0000000000000005\"[1](5) \t\t# \"on switch line\" lid 6 4xNDR\n"
    "[6]\t\"H-0000000000000006\"[1](6) \t\t# \"NVIDIA Technologies Aggregation Node\" lid 7 "
    "4xNDR\n"
    "[7][ext 3]\t\"H-0000000000000007\"[1](7) \t\t# \"  gpu-7   HCA-2\" lid 8 4xNDR\n" CA_OF_AA(
        "1", "gpu-1 mlx5_0") CA_OF_AA("2", "gpu-2\tHCA-1  ")
        CA_OF_AA("3", "MT4129 ConnectX7   Mellanox Technologies") CA_OF_AA("4", "lonely")
            CA_OF_AA("5", "gpu-5 HCA-9") CA_OF_AA("6", "NVIDIA Technologies Aggregation Node")
                CA_OF_AA("7", "  gpu-7   HCA-2");

static void test_ibnetdiscover__descriptions(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_ibnetdiscover_stats st;
    topo_facts *f = NULL;
    assert_int_equal(parse_text(&f, DESCRIPTIONS, NULL, &st, &err), 0);
    /* ids lower-cased and padded; a name holding quotes and '#' read whole,
     * then trimmed */
    assert_int_equal(topo_facts_switch_count(f), 1);
    assert_string_equal(topo_facts_switch_id(f, 0), "00000000000000aa");
    assert_string_equal(topo_facts_switch_name(f, 0), "leaf \"x\" #1");
    const char *sw = "00000000000000aa";
    assert_true(has_host_link(f, "gpu-1", "mlx5_0", sw));
    assert_true(has_host_link(f, "gpu-2", "HCA-1", sw)); /* a tab between, blanks after */
    assert_true(has_host_link(f, "gpu-7", "HCA-2", sw)); /* [ext 3] skipped, blanks before */
    assert_true(has_host_link(f, "gpu-5", "HCA-9", sw)); /* the Ca stanza wins */
    assert_int_equal(topo_facts_find_host(f, "on", &(size_t){0}), TOPO_ENOTFOUND);
    /* "MT4129 ..." and "lonely" (one word) name no host: one unnamed cable
     * (no port name either) */
    assert_int_equal(topo_facts_find_host(f, "lonely", &(size_t){0}), TOPO_ENOTFOUND);
    counts c = count_links(f);
    assert_int_equal(c.host_links, 4);
    assert_int_equal(c.unnamed_links, 1);
    assert_int_equal(topo_facts_host_count(f), 4);
    assert_int_equal(st.adapters, 6);
    assert_int_equal(st.adapters_unnamed, 2);  /* MT4129..., lonely */
    assert_int_equal(st.aggregation_nodes, 1); /* port 6 */
    topo_facts_free(f);
}

/* An Aggregation Node known by its system image GUID alone, a router, an
 * adapter-to-adapter cable, and lines of kinds the parser does not know. */
static const char SKIPPED[] =
    "sysimgguid=0x10\n"
    "switchguid=0x10(10)\n"
    "Switch\t41 \"S-0000000000000010\"\t\t# \"leaf\" base port 0 lid 1 lmc 0\n"
    "[1]\t\"H-0000000000000011\"[1](11) \t\t# \"sharp engine\" lid 2 4xHDR\n"
    "[2]\t\"R-0000000000000020\"[1]\t\t# \"router\" lid 3 4xHDR\n"
    "[3]\t\"H-0000000000000012\"[1](12) \t\t# \"gpu-12 HCA-1\" lid 4 4xHDR\n"
    "Chassis 1 (guid 0x10)\n"
    "\n"
    "sysimgguid=0x10\n"
    "caguid=0x11\n"
    "Ca\t1 \"H-0000000000000011\"\t\t# \"sharp engine\"\n"
    "[1](11) \t\"S-0000000000000010\"[1]\t\t# lid 2 lmc 0 \"leaf\" lid 1 4xHDR\n"
    "\n"
    "rtguid=0x20\n"
    "Rt\t2 \"R-0000000000000020\"\t\t# \"router\"\n"
    "[1]\t\"S-0000000000000010\"[2]\t\t# \"leaf\" lid 1 4xHDR\n"
    "\n"
    "caguid=0x12\n"
    "Ca\t2 \"H-0000000000000012\"\t\t# \"gpu-12 HCA-1\"\n"
    "[1](12) \t\"S-0000000000000010\"[3]\t\t# lid 4 lmc 0 \"leaf\" lid 1 4xHDR\n"
    "[2](13) \t\"H-0000000000000014\"[1]\t\t# lid 9 lmc 0 \"gpu-14 HCA-1\" lid 9 4xHDR\n"
    "\n"
    "caguid=0x14\n"
    "Ca\t1 \"H-0000000000000014\"\t\t# \"gpu-14 HCA-1\"\n"
    "[1](14) \t\"H-0000000000000012\"[2]\t\t# lid 9 lmc 0 \"gpu-12 HCA-1\" lid 4 4xHDR\n"
    "sysimgguid=broken\n"
    "some future line\n";

static void test_ibnetdiscover__skipped(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_ibnetdiscover_stats st;
    topo_facts *f = NULL;
    topo_log_level old = topo_log_get_level();
    topo_log_set_level(TOPO_LOG_OFF); /* the skipped lines' warnings */
    assert_int_equal(parse_text(&f, SKIPPED, NULL, &st, &err), 0);
    topo_log_set_level(old);
    assert_int_equal(st.aggregation_nodes, 1);
    assert_int_equal(st.adapters, 2); /* gpu-12, gpu-14 */
    assert_int_equal(st.routers, 1);
    assert_int_equal(st.router_ports, 2);
    assert_int_equal(st.adapter_links, 2); /* gpu-12 - gpu-14, from both ends */
    assert_int_equal(st.skipped_lines, 3); /* Chassis, broken sysimgguid, future line */
    counts c = count_links(f);
    assert_int_equal(c.host_links, 1);
    assert_int_equal(c.unnamed_links, 0);
    assert_int_equal(c.switch_links, 0);
    /* gpu-14, cabled to no switch, is a host the fabric cannot place */
    assert_int_equal(topo_facts_host_count(f), 2);
    topo_facts_free(f);
}

typedef struct bad_case {
    const char *text;
    const char *message; /* after "dump.txt:" */
} bad_case;

#define SW "Switch\t41 \"S-0000000000000010\"\t\t# \"leaf\" enhanced port 0 lid 1 lmc 0\n"

static const bad_case BAD[] = {
    {"[1]\t\"S-0000000000000010\"[1]\n", "1: a port line outside a Switch, Ca or Rt stanza"},
    {SW "\n[1]\t\"S-0000000000000011\"[1]\n", "3: a port line outside"},
    {SW "[x]\t\"S-0000000000000011\"[1]\n", "2: a port line that does not start with \"[<port>]\""},
    {SW "[1]\t\"S-00000000000000011\"[1]\n", "2: a port line without a quoted remote"},
    {SW "[1]\t\"X-11\"[1]\n", "2: a port line without a quoted remote"},
    {SW "[1]\t\"S-\"[1]\n", "2: a port line without a quoted remote"},
    {SW "[1]\t\"S-11[1]\n", "2: a port line without a quoted remote"},
    {SW "[1]\t\"S-11\"\t# \"x\"\n", "2: a port line without the remote \"[<port>]\""},
    {SW "[1]\t\"H-11\"[1](zz)\n", "2: a port line without the remote"},
    {SW "[1]\t\"S-11\"[1] lid 3\n", "2: unexpected text after the remote port"},
    {SW "[1]\t\"S-11\"[1]\t# \"leaf 2 lid 3\n", "2: an unterminated remote description"},
    {"Switch\t\"S-10\"\n", "1: a node header without its port count"},
    {"Switch\t41 S-10\n", "1: a node header without a quoted"},
    {"Ca\t1 \"S-10\"\t# \"x\"\n", "1: a node header whose id is of another kind"},
    {"Rt\t1 \"H-10\"\n", "1: a node header whose id is of another kind"},
    {"Ca\t1 \"H-10\"\t# \"gpu-1 HCA-1\n", "1: an unterminated node description"},
    /* A dump cut while written, or inconsistent: every line above well
     * formed, but not what ibnetdiscover prints. */
    {SW "[1]\t\"S-11\"[1]\n", "2: a port line without the comment ibnetdiscover always"},
    {SW "[1]\t\"S-11\"[1]\t# \"spine\"\n", "2: a port line without the comment"},
    {SW "[1]\t\"S-11\"[1]\t# \"spine\" lid 2\n", "2: a port line without the comment"},
    {SW "[1]\t\"S-11\"[1]\t# \"spine\" lid 2 NDR\n", "2: a port line without the comment"},
    {SW "[17]\t\"S-11\"[1]", "2: the last line has no newline: a dump cut while written"},
    {SW "[1]\t\"S-10\"[1]\t# \"leaf\" lid 1 4xNDR\n\n# end", "4: the last line has no newline"},
    {SW "[1]\t\"S-11\"[2]\t# \"spine\" lid 2 4xNDR\n",
     "2: \"S-0000000000000011\"[2] is named here but never declared"},
    {SW "[1]\t\"H-12\"[1](12)\t# \"gpu-1 HCA-1\" lid 3 4xNDR\n",
     "2: \"H-0000000000000012\"[1] is named here but never declared"},
    /* S-11's stanza cut short: no line for its port 2 */
    {SW "[1]\t\"S-11\"[2]\t# \"spine\" lid 2 4xNDR\n\n"
        "Switch\t41 \"S-11\"\t# \"spine\" enhanced port 0 lid 2 lmc 0\n",
     "2: port [1] of \"S-0000000000000010\" reaches \"S-0000000000000011\"[2], whose stanza does "
     "not print that cable back"},
    /* ... or printing another cable from that port */
    {SW "[1]\t\"S-11\"[2]\t# \"spine\" lid 2 4xNDR\n\n"
        "Switch\t41 \"S-11\"\t# \"spine\" enhanced port 0 lid 2 lmc 0\n"
        "[2]\t\"S-10\"[3]\t# \"leaf\" lid 1 4xNDR\n",
     "2: port [1] of \"S-0000000000000010\" reaches \"S-0000000000000011\"[2]"},
};

static void test_ibnetdiscover__malformed_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        topo_facts *f = NULL;
        char want[256];
        snprintf(want, sizeof(want), "dump.txt:%s", BAD[i].message);
        int rc = parse_text(&f, BAD[i].text, NULL, NULL, &err);
        if (rc != TOPO_EINVALID || strncmp(err.text, want, strlen(want)) != 0)
            fail_msg("case %zu: rc %d, \"%s\", want \"%s\"", i, rc, err.text, want);
        assert_string_equal(err.source, "dump.txt");
        assert_int_equal(err.line, atoi(BAD[i].message));
        /* nothing of a dump with an error reaches the facts */
        assert_int_equal(topo_facts_switch_count(f) + topo_facts_host_count(f), 0);
        topo_facts_free(f);
    }
}

static void test_ibnetdiscover__nul_and_limits(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = NULL;
    char path[1024];
    static const char nul[] = SW "[1]\t\"S-11\"[1]\n\n# x\0y\n";
    assert_int_equal(topo_facts_create(&f, "ibnetdiscover", &err), 0);
    assert_int_equal(topo_ibnetdiscover_parse(f, nul, sizeof(nul) - 1, NULL, NULL, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "ibnetdiscover:4: a NUL byte");
    /* the size is checked before a byte is read */
    assert_int_equal(
        topo_ibnetdiscover_parse(f, "", (size_t)TOPO_MAX_IBNETDISCOVER_DUMP + 1, NULL, NULL, &err),
        TOPO_ELIMIT);
    assert_int_equal(topo_ibnetdiscover_read_file(f, fixture(path, sizeof(path), "missing.txt"),
                                                  NULL, NULL, &err),
                     TOPO_ENOTFOUND);
    /* empty input, or comments alone: the file `ibnetdiscover > file` has
     * just emptied, refused (ibnetdiscover prints at least its own node) */
    assert_int_equal(topo_ibnetdiscover_parse(f, "", 0, NULL, NULL, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "ibnetdiscover:1: no Switch, Ca or Rt stanza (ibnetdiscover "
                                  "prints at least the node it ran from): an empty or cut dump");
    static const char comments[] = "#\n# Topology file\n";
    assert_int_equal(topo_ibnetdiscover_parse(f, comments, sizeof(comments) - 1, NULL, NULL, &err),
                     TOPO_EINVALID);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.text, "no Switch, Ca or Rt stanza"));
    assert_int_equal(topo_facts_switch_count(f) + topo_facts_host_count(f), 0);
    topo_facts_free(f);
}

static const char MAP[] = "# node-name map\n"
                          "0x0000000000000003 \"gpu-3\"  # default description\n"
                          "0X4 \"gpu-4 HCA-7\"\n"
                          "\n"
                          "  0xaa   spine one  \n"
                          "0x3 \"gpu-3\"\n";

static void test_ibnetdiscover__node_name_map(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_ibnetdiscover_map *map = NULL;
    topo_ibnetdiscover_stats st;
    topo_facts *f = NULL;
    assert_int_equal(topo_ibnetdiscover_map_parse(&map, MAP, strlen(MAP), "map.txt", &err), 0);
    assert_int_equal(topo_ibnetdiscover_map_count(map), 3);
    assert_string_equal(topo_ibnetdiscover_map_get(map, 3), "gpu-3");
    assert_string_equal(topo_ibnetdiscover_map_get(map, 0xaa), "spine one");
    assert_null(topo_ibnetdiscover_map_get(map, 5));
    assert_null(topo_ibnetdiscover_map_get(NULL, 5));

    assert_int_equal(parse_text(&f, DESCRIPTIONS, map, &st, &err), 0);
    const char *sw = "00000000000000aa";
    assert_string_equal(topo_facts_switch_name(f, 0), "spine one");
    /* the default description named by the map (one word: a host alone) */
    assert_true(has_host_link(f, "gpu-3", NULL, sw));
    /* the map wins over a description that names a host */
    assert_true(has_host_link(f, "gpu-4", "HCA-7", sw));
    assert_false(has_host_link(f, "lonely", NULL, sw));
    counts c = count_links(f);
    assert_int_equal(c.host_links, 6);
    assert_int_equal(c.unnamed_links, 0); /* the map names both default descriptions' hosts */
    topo_facts_free(f);
    topo_ibnetdiscover_map_free(map);
}

static void test_ibnetdiscover__node_name_map_errors(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"0x10\n", "1: GUID without a name"},
        {"# c\n10 \"x\"\n", "2: expected a GUID (0x and 1 to 16 hex digits) and a name"},
        {"0x \"x\"\n", "1: expected a GUID"},
        {"0x10\"x\"\n", "1: expected a GUID"},
        {"0x11111111111111111 \"x\"\n", "1: expected a GUID"},
        {"0x10 \"x\n", "1: an unterminated quoted name"},
        {"0x10 \"x\" y\n", "1: text after the quoted name"},
        {"0x10 \"\"\n", "1: GUID without a name"},
        {"0x10 \"a\"\n0x010 \"b\"\n", "2: GUID 0x0000000000000010 is named \"b\" here and \"a\" "
                                      "on line 1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        topo_ibnetdiscover_map *map = NULL;
        char want[256];
        snprintf(want, sizeof(want), "map.txt:%s", cases[i].message);
        int rc = topo_ibnetdiscover_map_parse(&map, cases[i].text, strlen(cases[i].text), "map.txt",
                                              &err);
        if (rc != TOPO_EINVALID || strncmp(err.text, want, strlen(want)) != 0)
            fail_msg("case %zu: rc %d, \"%s\", want \"%s\"", i, rc, err.text, want);
        assert_null(map);
    }
    topo_err err = TOPO_ERR_INIT;
    topo_ibnetdiscover_map *map = NULL;
    assert_int_equal(topo_ibnetdiscover_map_read_file(&map, "/nonexistent/map.txt", &err),
                     TOPO_ENOTFOUND);
    assert_int_equal(topo_ibnetdiscover_map_parse(&map, "0x1 a\0", 6, NULL, &err), TOPO_EINVALID);
    assert_int_equal(topo_ibnetdiscover_map_count(NULL), 0);
    topo_ibnetdiscover_map_free(NULL);
}

static void assert_same_str(const char *a, const char *b)
{
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

/* The streamed file read and the in-memory parse of the same text give the
 * same facts, in the same order, and the same stats. */
static void assert_same_facts(const topo_facts *a, const topo_facts *b)
{
    assert_int_equal(topo_facts_switch_count(a), topo_facts_switch_count(b));
    for (size_t i = 0; i < topo_facts_switch_count(a); i++) {
        assert_string_equal(topo_facts_switch_id(a, i), topo_facts_switch_id(b, i));
        assert_same_str(topo_facts_switch_name(a, i), topo_facts_switch_name(b, i));
    }
    assert_int_equal(topo_facts_host_count(a), topo_facts_host_count(b));
    for (size_t i = 0; i < topo_facts_host_count(a); i++)
        assert_string_equal(topo_facts_host_name(a, i), topo_facts_host_name(b, i));
    assert_int_equal(topo_facts_link_count(a), topo_facts_link_count(b));
    for (size_t i = 0; i < topo_facts_link_count(a); i++) {
        topo_facts_link x = topo_facts_link_at(a, i), y = topo_facts_link_at(b, i);
        assert_int_equal(x.is_host_link, y.is_host_link);
        assert_int_equal(x.sw, y.sw);
        assert_int_equal(x.other, y.other);
        assert_int_equal(x.host, y.host);
        assert_same_str(x.port, y.port);
    }
}

static void test_ibnetdiscover__streamed_file_matches_text(void **state)
{
    (void)state;
    static const char *const names[] = {"mellanox-small_topo_file.txt",
                                        "mellanox-selene.compute.txt", "topograph-example.out",
                                        "topograph-example-bad.out"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[1024];
        char *text = NULL;
        size_t len = 0;
        topo_err err = TOPO_ERR_INIT;
        topo_ibnetdiscover_stats st_file, st_text;
        topo_facts *from_file = read_fixture(names[i], &st_file), *from_text = NULL;
        fixture(path, sizeof(path), names[i]);
        assert_int_equal(topo_codec_read_file(&text, &len, path, TOPO_MAX_IBNETDISCOVER_DUMP, &err),
                         0);
        topo_ibnetdiscover_opts opts = {.source = path};
        assert_int_equal(topo_facts_create(&from_text, "ibnetdiscover", &err), 0);
        assert_int_equal(topo_ibnetdiscover_parse(from_text, text, len, &opts, &st_text, &err), 0);
        assert_same_facts(from_file, from_text);
        assert_memory_equal(&st_file, &st_text, sizeof(st_file));
        free(text);
        topo_facts_free(from_file);
        topo_facts_free(from_text);
    }
}

/* Errors from the streamed read name the same lines as the in-memory parse:
 * a NUL byte wins over an earlier bad line, as it does in text. */
static void test_ibnetdiscover__streamed_file_errors(void **state)
{
    (void)state;
    static const char bad_then_nul[] = SW "[1]\t\"S-11\"[1]\n\nCa 1 x\n# x\0y\n";
    static const char bad_line[] = SW "\r\n[1]\t\"S-11\"[1]\r\n\r\n[2]\t\"S-12\"[1]\r\n";
    /* the cut last line wins over an earlier bad line; an undeclared node */
    static const char cut[] = SW "[1]\t\"S-11\"[1]\n\n[2]\t\"S-12\"[1]";
    static const char undeclared[] = SW "[1]\t\"S-11\"[2]\t# \"spine\" lid 2 4xNDR\n";
    const struct {
        const char *text;
        size_t len;
    } cases[] = {{bad_then_nul, sizeof(bad_then_nul) - 1},
                 {bad_line, sizeof(bad_line) - 1},
                 {cut, sizeof(cut) - 1},
                 {undeclared, sizeof(undeclared) - 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[] = "/tmp/test_ibnetdiscover_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, cases[i].text, cases[i].len), (ssize_t)cases[i].len);
        close(fd);
        topo_err e_file = TOPO_ERR_INIT, e_text = TOPO_ERR_INIT;
        topo_facts *f = NULL;
        topo_ibnetdiscover_opts opts = {.source = "dump.txt"};
        assert_int_equal(topo_facts_create(&f, "ibnetdiscover", &e_file), 0);
        int rc_file = topo_ibnetdiscover_read_file(f, path, &opts, NULL, &e_file);
        int rc_text = topo_ibnetdiscover_parse(f, cases[i].text, cases[i].len, &opts, NULL, &e_text);
        assert_int_equal(rc_file, TOPO_EINVALID);
        assert_int_equal(rc_text, TOPO_EINVALID);
        assert_string_equal(e_file.text, e_text.text);
        unlink(path);
        topo_facts_free(f);
    }
}

/* Issue 33 item 3 in one dump: an adapter whose GUID is the leaf's, and
 * one adapter id declared by two Ca stanzas naming different hosts. Every
 * order of the stanzas gives the same cables and the same two conflicts:
 * the switch keeps its GUID, neither claimant of b2 gets a cable, h1 keeps
 * its own; the claimants are hosts without a cable. */
static const char *const DUP_BLOCKS[] = {
    "Switch\t41 \"S-00000000000000a1\"\t\t# \"leaf\" enhanced port 0 lid 1 lmc 0\n"
    "[1]\t\"H-00000000000000b1\"[1](b1) \t\t# \"h1 HCA-1\" lid 2 4xNDR\n"
    "[2]\t\"H-00000000000000b2\"[1](b2) \t\t# \"h2 HCA-1\" lid 3 4xNDR\n"
    "[3]\t\"H-00000000000000a1\"[1](a1) \t\t# \"bad HCA-1\" lid 4 4xNDR\n\n",
    "Ca\t1 \"H-00000000000000b1\"\t\t# \"h1 HCA-1\"\n"
    "[1](b1) \t\"S-00000000000000a1\"[1]\t\t# lid 2 lmc 0 \"leaf\" lid 1 4xNDR\n\n",
    "Ca\t1 \"H-00000000000000B2\"\t\t# \"h2 HCA-1\"\n"
    "[1](b2) \t\"S-00000000000000a1\"[2]\t\t# lid 3 lmc 0 \"leaf\" lid 1 4xNDR\n\n",
    "Ca\t1 \"H-00000000000000b2\"\t\t# \"h9 HCA-1\"\n"
    "[1](b2) \t\"S-00000000000000a1\"[2]\t\t# lid 3 lmc 0 \"leaf\" lid 1 4xNDR\n\n",
    "Ca\t1 \"H-00000000000000a1\"\t\t# \"bad HCA-1\"\n"
    "[1](a1) \t\"S-00000000000000a1\"[3]\t\t# lid 4 lmc 0 \"leaf\" lid 1 4xNDR\n\n",
};

static void test_ibnetdiscover__duplicate_guids(void **state)
{
    (void)state;
    size_t order[] = {0, 1, 2, 3, 4}, orders = 0;
    do {
        char text[4096] = "# Topology file\n\n";
        for (size_t i = 0; i < 5; i++)
            strcat(text, DUP_BLOCKS[order[i]]);
        topo_err err = TOPO_ERR_INIT;
        topo_ibnetdiscover_stats st;
        topo_facts *f = NULL;
        size_t at = 0;
        if (parse_text(&f, text, NULL, &st, &err) != 0)
            fail_msg("%s\n%s", err.text, text);
        counts c = count_links(f);
        assert_int_equal(c.host_links, 1);
        assert_true(has_host_link(f, "h1", "HCA-1", "00000000000000a1"));
        for (size_t i = 0; i < 3; i++) /* the claimants: hosts, unplaced */
            assert_int_equal(topo_facts_find_host(f, (const char *[]){"h2", "h9", "bad"}[i], &at),
                             0);
        assert_int_equal(st.duplicate_guids, 2);
        assert_int_equal(topo_facts_conflict_count(f), 2);
        assert_string_equal(topo_facts_conflict(f, 0),
                            "duplicate GUID 00000000000000a1: switch \"leaf\" and host record "
                            "\"bad HCA-1\" claim it: the switch keeps it; no fabric facts from "
                            "that record");
        assert_string_equal(topo_facts_conflict(f, 1),
                            "duplicate GUID 00000000000000b2: host records \"h2 HCA-1\", \"h9 "
                            "HCA-1\" claim it: no fabric facts from those records");
        topo_facts_free(f);
        orders++;
    } while (test_next_order(order, 5));
    assert_int_equal(orders, 120);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ibnetdiscover__small_lab_fabric),
        cmocka_unit_test(test_ibnetdiscover__selene),
        cmocka_unit_test(test_ibnetdiscover__topograph_ndr_example),
        cmocka_unit_test(test_ibnetdiscover__isolated_adapter),
        cmocka_unit_test(test_ibnetdiscover__descriptions),
        cmocka_unit_test(test_ibnetdiscover__skipped),
        cmocka_unit_test(test_ibnetdiscover__malformed_lines),
        cmocka_unit_test(test_ibnetdiscover__nul_and_limits),
        cmocka_unit_test(test_ibnetdiscover__node_name_map),
        cmocka_unit_test(test_ibnetdiscover__node_name_map_errors),
        cmocka_unit_test(test_ibnetdiscover__streamed_file_matches_text),
        cmocka_unit_test(test_ibnetdiscover__streamed_file_errors),
        cmocka_unit_test(test_ibnetdiscover__duplicate_guids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
