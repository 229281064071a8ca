/* Facts as a canonical JSON document and back (topo/facts_json.h): every
 * real fixture of fixtures/sources parsed with its real parser, encoded,
 * decoded and compared entry by entry and byte by byte; the same facts give
 * the same bytes (and hash); the documented format exactly, non-UTF-8 bytes
 * included; every malformed document refused with the field named; the
 * fuzzer's seeds (fixtures/fuzz/facts) are what the encoder writes today.
 *
 * TOPO_WRITE_FACTS_SEEDS=1 rewrites fixtures/fuzz/facts/ from the fixtures
 * (after a deliberate format change, with a new version). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sources/source_fixture.h"
#include "topo/facts_json.h"
#include "topo/gpu.h"
#include "topo/ibnetdiscover.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/lldp.h"
#include "topo/netbox.h"
#include "topo/sha256.h"
#include "topo/ufm.h"

/* --- facts from the fixtures, with the real parsers ----------------------------------- */

static topo_facts *from_ibnetdiscover(const char *name)
{
    char path[1024];
    const char *root = getenv("TOPO_SOURCE_DIR");
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("ibnetdiscover");
    snprintf(path, sizeof(path), "%s/fixtures/sources/ibnetdiscover/%s", root ? root : ".", name);
    if (topo_ibnetdiscover_read_file(f, path, NULL, NULL, &err) != 0)
        fail_msg("%s: %s", name, err.text);
    return f;
}

static topo_facts *from_ufm(const char *systems, const char *links)
{
    topo_facts *f = new_facts("ufm");
    topo_ufm *u = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0;
    char *text;
    assert_int_equal(topo_ufm_create(&u, f, &err), 0);
    text = fixture_text(systems, &len);
    if (topo_ufm_add_systems(u, text, len, systems, &err) != 0)
        fail_msg("%s: %s", systems, err.text);
    free(text);
    if (links != NULL) {
        text = fixture_text(links, &len);
        if (topo_ufm_add_links(u, text, len, links, &err) != 0)
            fail_msg("%s: %s", links, err.text);
        free(text);
    }
    topo_ufm_free(u);
    return f;
}

/* Every lldpd document, each as the neighbours of its own host. */
static topo_facts *from_lldp(void)
{
    static const char *const files[] = {
        "derived-json0-interface_only.json",  "derived-json0-lldpctl.json",
        "sonic-interface_only.json",          "sonic-lldpctl.json",
        "sonic-lldpctl_mgmt_only.json",       "sonic-lldpctl_single_loc_mgmt_ip.json",
        "sonic-lldpctl_no_neighbors_loc_mgmt_ip.json",
    };
    topo_facts *f = new_facts("lldp");
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char rel[256], host[32];
        size_t len = 0, n = 0;
        topo_err err = TOPO_ERR_INIT;
        snprintf(rel, sizeof(rel), "lldp/%s", files[i]);
        snprintf(host, sizeof(host), "node-%zu", i);
        char *text = fixture_text(rel, &len);
        if (topo_lldp_parse(&n, f, host, text, len, files[i], &err) != 0)
            fail_msg("%s: %s", files[i], err.text);
        free(text);
    }
    return f;
}

static void netbox_add(topo_netbox *nb, topo_netbox_kind kind, const char *rel)
{
    size_t len = 0;
    char *text = fixture_text(rel, &len), *next = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_netbox_add_page(&next, nb, kind, text, len, rel, &err) != 0)
        fail_msg("%s: %s", rel, err.text);
    free(next);
    free(text);
}

static topo_facts *from_netbox(int v4)
{
    static const char *const gpu_roles[] = {"gpu-server"};
    topo_netbox_opts o = {.host_roles = gpu_roles, .nhost_roles = 1, .nvlink_field = "nvl_domain"};
    topo_netbox *nb = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("netbox");
    assert_int_equal(topo_netbox_create(&nb, v4 ? &o : NULL, &err), 0);
    if (v4) {
        netbox_add(nb, TOPO_NETBOX_DEVICES, "netbox/v4-devices-page1.json");
        netbox_add(nb, TOPO_NETBOX_DEVICES, "netbox/v4-devices-page2.json");
        netbox_add(nb, TOPO_NETBOX_CABLES, "netbox/v4-cables.json");
        netbox_add(nb, TOPO_NETBOX_INTERFACES, "netbox/v4-interfaces.json");
        netbox_add(nb, TOPO_NETBOX_RACKS, "netbox/v4-racks.json");
        netbox_add(nb, TOPO_NETBOX_SITES, "netbox/v4-sites.json");
    } else {
        netbox_add(nb, TOPO_NETBOX_DEVICES, "netbox/pynetbox-devices.json");
        netbox_add(nb, TOPO_NETBOX_RACKS, "netbox/pynetbox-racks.json");
        netbox_add(nb, TOPO_NETBOX_SITES, "netbox/pynetbox-sites.json");
        netbox_add(nb, TOPO_NETBOX_INTERFACES, "netbox/pynetbox-interfaces.json");
        netbox_add(nb, TOPO_NETBOX_CABLES, "netbox/pynetbox-cables.json");
    }
    if (topo_netbox_finish(nb, f, &err) != 0)
        fail_msg("netbox: %s", err.text);
    topo_netbox_free(nb);
    return f;
}

static topo_facts *from_gpu(void)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("gpu");
    size_t len = 0;
    char *text = fixture_text("gpu/gb200-nodes.json", &len);
    if (topo_gpu_parse(NULL, f, text, len, "gb200-nodes.json", &err) != 0)
        fail_msg("gpu: %s", err.text);
    free(text);
    return f;
}

/* --- helpers -------------------------------------------------------------------------- */

static char *encode(const topo_facts *f, size_t *len)
{
    char *text = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_facts_json_encode(&text, len, f, &err) != 0)
        fail_msg("encode: %s", err.text);
    assert_int_equal(strlen(text), *len);
    return text;
}

/* The encoder writes the document element by element; it must be exactly
 * what jansson writes for the same tree with compact, sorted keys. */
static void assert_jansson_canonical(const char *text, size_t len)
{
    json_t *tree = NULL;
    json_error_t jerr;
    if (topo_json_load(&tree, text, len, JSON_REJECT_DUPLICATES, &jerr) != 0)
        fail_msg("not JSON: %s", jerr.text);
    char *dumped = topo_json_dumps(tree, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(dumped);
    assert_int_equal(strlen(dumped), len);
    assert_memory_equal(dumped, text, len);
    free(dumped);
    json_decref(tree);
}

/* Encodes f, decodes the document, and checks the facts are f's and
 * encode to the same bytes again. Returns the document. */
static char *round_trip(const topo_facts *f, size_t *len)
{
    topo_facts *g = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t len2 = 0;
    char *text = encode(f, len), *again;
    assert_jansson_canonical(text, *len);
    if (topo_facts_json_decode(&g, text, *len, "doc", &err) != 0)
        fail_msg("decode: %s", err.text);
    assert_facts_equal(f, g);
    again = encode(g, &len2);
    assert_int_equal(len2, *len);
    assert_memory_equal(again, text, *len);
    free(again);
    topo_facts_free(g);
    return text;
}

/* The seed of fixtures/fuzz/facts/<name> must be text; rewritten when
 * TOPO_WRITE_FACTS_SEEDS is set. */
static void check_seed(const char *name, const char *text, size_t len)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    char path[1024];
    char *seed = NULL;
    size_t seed_len = 0;
    topo_err err = TOPO_ERR_INIT;
    snprintf(path, sizeof(path), "%s/fixtures/fuzz/facts/%s", root ? root : ".", name);
    if (getenv("TOPO_WRITE_FACTS_SEEDS") != NULL) {
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(text, 1, len, fp), len);
        assert_int_equal(fclose(fp), 0);
    }
    if (topo_codec_read_file(&seed, &seed_len, path, TOPO_MAX_FACTS_DOCUMENT, &err) != 0)
        fail_msg("%s: %s", path, err.text);
    if (seed_len != len || memcmp(seed, text, len) != 0)
        fail_msg("%s is not what the encoder writes today (a format change needs a new "
                 "version; TOPO_WRITE_FACTS_SEEDS=1 rewrites the seeds)", path);
    free(seed);
}

typedef topo_facts *(*facts_fn)(void);

static topo_facts *ib_small(void)
{
    return from_ibnetdiscover("mellanox-small_topo_file.txt");
}

static topo_facts *ib_selene(void)
{
    return from_ibnetdiscover("mellanox-selene.compute.txt");
}

static topo_facts *ib_topograph(void)
{
    return from_ibnetdiscover("topograph-example.out");
}

static topo_facts *ib_topograph_bad(void)
{
    return from_ibnetdiscover("topograph-example-bad.out");
}

static topo_facts *ufm_full(void)
{
    return from_ufm("ufm/ufm-resources-systems.json", "ufm/derived-links.json");
}

static topo_facts *ufm_excerpt(void)
{
    return from_ufm("ufm/ufm-resources-systems.excerpt.json", NULL);
}

static topo_facts *netbox_v4(void)
{
    return from_netbox(1);
}

static topo_facts *netbox_v2(void)
{
    return from_netbox(0);
}

static const struct {
    const char *name;
    facts_fn make;
    const char *seed; /* its document is a fuzzer seed (small ones only) */
} fixtures[] = {
    {"ibnetdiscover mellanox-small", ib_small, "ibnetdiscover-mellanox-small.json"},
    {"ibnetdiscover selene", ib_selene, NULL},
    {"ibnetdiscover topograph", ib_topograph, NULL},
    {"ibnetdiscover topograph-bad", ib_topograph_bad, "ibnetdiscover-topograph-bad.json"},
    {"ufm systems and links", ufm_full, NULL},
    {"ufm excerpt", ufm_excerpt, "ufm-excerpt.json"},
    {"lldp", from_lldp, "lldp.json"},
    {"netbox v4", netbox_v4, "netbox-v4.json"},
    {"netbox pynetbox", netbox_v2, "netbox-pynetbox.json"},
    {"gpu", from_gpu, "gpu-gb200.json"},
};

/* --- round trips ------------------------------------------------------------------------ */

static void test_facts_json__fixtures_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        topo_facts *f = fixtures[i].make(), *again = fixtures[i].make();
        size_t len = 0, len2 = 0;
        char *text = round_trip(f, &len), *text2 = encode(again, &len2);
        char h1[TOPO_SHA256_HEX_LEN + 1], h2[TOPO_SHA256_HEX_LEN + 1];
        /* Something was read, and the same input gives the same bytes. */
        assert_true(topo_facts_host_count(f) + topo_facts_switch_count(f) > 0);
        assert_int_equal(len2, len);
        assert_memory_equal(text2, text, len);
        assert_int_equal(topo_sha256_hex(h1, text, len), 0);
        assert_int_equal(topo_sha256_hex(h2, text2, len2), 0);
        assert_string_equal(h1, h2);
        if (fixtures[i].seed != NULL)
            check_seed(fixtures[i].seed, text, len);
        print_message("%-28s %6zu hosts %5zu switches %6zu cables: %8zu bytes\n",
                      fixtures[i].name, topo_facts_host_count(f), topo_facts_switch_count(f),
                      topo_facts_link_count(f), len);
        free(text);
        free(text2);
        topo_facts_free(f);
        topo_facts_free(again);
    }
}

/* Every shape facts can hold: levels, a switch named and unnamed, an
 * unnamed adapter with and without a port, a host cable without a port, a
 * switch cable given high index first, strings that need escaping, and
 * bytes that are not UTF-8. */
static topo_facts *edge_facts(void)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("ibnetdiscover:dump\xff.txt");
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_RACK, "r 1", &err), 0);
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_DATACENTER, "dc1", &err), 0);
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_NVLINK, "uuid.7", &err), 0);
    assert_int_equal(topo_facts_add_host(f, "caf\xc3\xa9\t\"q\"", NULL, &err), 0);
    assert_int_equal(topo_facts_set_level(f, "bad\xfe", TOPO_LEVEL_RACK, "r\x80", &err), 0);
    assert_int_equal(topo_facts_add_switch(f, "S-1", "leaf \"one\"", NULL, &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "HCA-1", "S-1", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, NULL, "HCA-2", "S-1", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, NULL, NULL, "S-2", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "bad\xfe", NULL, "S-\xff", &err), 0);
    assert_int_equal(topo_facts_add_switch_link(f, "S-\xff", "S-1", &err), 0);
    return f;
}

static void test_facts_json__format(void **state)
{
    (void)state;
    static const char want[] =
        "{\"cables\":[[0,0,\"HCA-1\"],[0,null,\"HCA-2\"],[1,null,null],[2,2,null],[0,2]],"
        "\"hosts\":[{\"levels\":{\"datacenter\":\"dc1\",\"nvlink\":\"uuid.7\",\"rack\":\"r 1\"},"
        "\"name\":\"gpu-1\"},{\"name\":\"caf\xc3\xa9\\t\\\"q\\\"\"},"
        "{\"levels\":{\"rack\":{\"hex\":\"7280\"}},\"name\":{\"hex\":\"626164fe\"}}],"
        "\"source\":{\"hex\":\"69626e6574646973636f7665723a64756d70ff2e747874\"},"
        "\"switches\":[{\"id\":\"S-1\",\"name\":\"leaf \\\"one\\\"\"},{\"id\":\"S-2\"},"
        "{\"id\":{\"hex\":\"532dff\"}}],\"version\":1}";
    topo_facts *f = edge_facts();
    size_t len = 0;
    char *text = round_trip(f, &len);
    assert_string_equal(text, want);
    check_seed("edge.json", text, len);
    free(text);
    topo_facts_free(f);

    /* No facts at all. */
    f = new_facts("gpu");
    text = round_trip(f, &len);
    assert_string_equal(text, "{\"cables\":[],\"hosts\":[],\"source\":\"gpu\",\"switches\":[],"
                              "\"version\":1}");
    free(text);
    topo_facts_free(f);
}

/* Canonical spelling is not required: any key order, whitespace, nulls for
 * absent members, a switch name equal to its id, a switch cable high index
 * first; the facts are the same and encode canonically. */
static void test_facts_json__lenient_spelling(void **state)
{
    (void)state;
    static const char doc[] =
        "{ \"version\": 1, \"source\": \"s\",\n"
        "  \"switches\": [ {\"name\": \"a\", \"id\": \"a\"}, {\"id\": \"b\"} ],\n"
        "  \"hosts\": [ {\"name\": \"h\", \"levels\": {}}, {\"name\": \"k\", \"levels\": null} ],\n"
        "  \"cables\": [ [1, 0], [ 1, null, null ], [0, 1, \"eth0\"] ]"
        " }\n";
    static const char canonical[] =
        "{\"cables\":[[0,1],[1,null,null],[0,1,\"eth0\"]],\"hosts\":[{\"name\":\"h\"},"
        "{\"name\":\"k\"}],\"source\":\"s\",\"switches\":[{\"id\":\"a\"},{\"id\":\"b\"}],"
        "\"version\":1}";
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0;
    if (topo_facts_json_decode(&f, doc, strlen(doc), NULL, &err) != 0)
        fail_msg("%s", err.text);
    char *text = encode(f, &len);
    assert_string_equal(text, canonical);
    free(text);
    topo_facts_free(f);
}

/* --- malformed documents ---------------------------------------------------------------- */

#define DOC(cables, hosts, source, switches)                                                      \
    "{\"cables\":" cables ",\"hosts\":" hosts ",\"source\":" source ",\"switches\":" switches    \
    ",\"version\":1}"
#define CABLES "[[0,0,\"p\"],[0,1]]"
#define HOSTS "[{\"levels\":{\"rack\":\"r1\"},\"name\":\"h\"}]"
#define SWITCHES "[{\"id\":\"a\"},{\"id\":\"b\",\"name\":\"B\"}]"
#define SRC "\"s\""
#define NAMED(name) "[{\"name\":" name "}]"
#define CABLE(c) "[" c "]"

static const struct {
    const char *doc;
    int code;
    const char *message;
} bad[] = {
    {"", TOPO_EINVALID, "doc:1:"},
    {"{\"version\":1", TOPO_EINVALID, "doc:1:"},
    {DOC(CABLES, HOSTS, SRC, SWITCHES) "x", TOPO_EINVALID, "doc:1:"},
    {"{\"version\":1,\"version\":1}", TOPO_EINVALID, "duplicate object key"},
    {DOC(CABLES, NAMED("\"a\\u0000b\""), SRC, SWITCHES), TOPO_EINVALID, "doc:1:"},
    {"[]", TOPO_EINVALID, "doc: expected an object, got an array"},
    {"{}", TOPO_EINVALID, "doc: version: required"},
    {"{\"version\":\"1\"}", TOPO_EINVALID, "doc: version: expected an integer, got a string"},
    {"{\"version\":2,\"future\":[]}", TOPO_EUNSUPPORTED,
     "doc: version: 2 is newer than this build reads (1)"},
    {"{\"version\":0}", TOPO_EINVALID, "doc: version: 0 is not a version (1 is)"},
    {"{\"cables\":[],\"hosts\":[],\"source\":\"s\",\"switches\":[],\"version\":1,\"x\":0}",
     TOPO_EINVALID, "doc: x: unknown field"},
    {"{\"cables\":[],\"hosts\":[],\"switches\":[],\"version\":1}", TOPO_EINVALID,
     "doc: source: required"},
    {DOC(CABLES, HOSTS, "\"\"", SWITCHES), TOPO_EINVALID, "doc: source: must not be empty"},
    {DOC(CABLES, HOSTS, "5", SWITCHES), TOPO_EINVALID,
     "doc: source: expected a string, got an integer"},
    {"{\"cables\":[],\"source\":\"s\",\"switches\":[],\"version\":1}", TOPO_EINVALID,
     "doc: hosts: required"},
    {DOC(CABLES, "{}", SRC, SWITCHES), TOPO_EINVALID,
     "doc: hosts: expected an array, got an object"},
    {DOC("[]", "[\"h\"]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0]: expected an object, got a string"},
    {DOC("[]", "[{\"levels\":{}}]", SRC, "[]"), TOPO_EINVALID, "doc: hosts[0].name: required"},
    {DOC("[]", "[{\"name\":\"h\",\"ip\":\"10.0.0.1\"}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].ip: unknown field"},
    {DOC("[]", "[{\"name\":\"h\"},{\"name\":\"k\"},{\"name\":\"h\"}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[2].name: the name of hosts[0] too"},
    {DOC("[]", NAMED("\"\""), SRC, "[]"), TOPO_EINVALID, "doc: hosts[0].name: must not be empty"},
    {DOC("[]", NAMED("[]"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name: expected a string, got an array"},
    {DOC("[]", "[{\"name\":\"h\",\"levels\":[]}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].levels: expected an object, got an array"},
    {DOC("[]", "[{\"name\":\"h\",\"levels\":{\"leaf\":\"l1\"}}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].levels.leaf: not a level a source states (datacenter, rack or nvlink)"},
    {DOC("[]", "[{\"name\":\"h\",\"levels\":{\"block\":\"b\"}}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].levels.block: unknown level (datacenter, rack or nvlink)"},
    {DOC("[]", "[{\"name\":\"h\",\"levels\":{\"rack\":3}}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].levels.rack: expected a string, got an integer"},
    {DOC("[]", "[{\"name\":\"h\",\"levels\":{\"rack\":\"\"}}]", SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].levels.rack: must not be empty"},
    {DOC("[]", NAMED("{\"hex\":\"zz\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: expected lower-case hex digits"},
    {DOC("[]", NAMED("{\"hex\":\"FF\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: expected lower-case hex digits"},
    {DOC("[]", NAMED("{\"hex\":\"fff\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: expected an even number of hex digits"},
    {DOC("[]", NAMED("{\"hex\":\"\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: expected an even number of hex digits"},
    {DOC("[]", NAMED("{\"hex\":\"ff00\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: a NUL byte"},
    {DOC("[]", NAMED("{\"hex\":\"6869\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: UTF-8 text is written as a string, not in hex"},
    {DOC("[]", NAMED("{\"hex\":5}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.hex: expected a string, got an integer"},
    {DOC("[]", NAMED("{\"hex\":\"ff\",\"text\":\"x\"}"), SRC, "[]"), TOPO_EINVALID,
     "doc: hosts[0].name.text: unknown field (expected one of: hex)"},
    {DOC("[]", NAMED("{}"), SRC, "[]"), TOPO_EINVALID, "doc: hosts[0].name.hex: required"},
    {DOC("[]", "[]", SRC, "[{\"name\":\"x\"}]"), TOPO_EINVALID, "doc: switches[0].id: required"},
    {DOC("[]", "[]", SRC, "[{\"id\":\"a\"},{\"id\":\"a\",\"name\":\"x\"}]"), TOPO_EINVALID,
     "doc: switches[1].id: the id of switches[0] too"},
    {DOC("[]", "[]", SRC, "[{\"id\":\"a\",\"name\":\"\"}]"), TOPO_EINVALID,
     "doc: switches[0].name: must not be empty"},
    {DOC("[]", "[]", SRC, "[{\"id\":\"a\",\"guid\":\"0x1\"}]"), TOPO_EINVALID,
     "doc: switches[0].guid: unknown field (expected one of: id, name)"},
    {DOC("[]", "[]", SRC, "[1]"), TOPO_EINVALID,
     "doc: switches[0]: expected an object, got an integer"},
    {DOC(CABLE("{\"switch\":0}"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0]: expected [switch, host, port] (a host cable) or [switch, switch], got an "
     "object"},
    {DOC(CABLE("1"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0]: expected [switch, host, port] (a host cable) or [switch, switch], got an "
     "integer"},
    {DOC(CABLE("[0]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0]: expected [switch, host, port] (a host cable) or [switch, switch], got an "
     "array of another length"},
    {DOC(CABLE("[0,0,null,null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "got an array of another length"},
    {DOC(CABLE("[2,0,\"p\"]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][0]: 2 is not an index of switches (2 of them)"},
    {DOC(CABLE("[-1,0,null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][0]: -1 is not an index of switches (2 of them)"},
    {DOC(CABLE("[1.0,0,null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][0]: expected an index of switches, got a number"},
    {DOC(CABLE("[null,0,null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][0]: expected an index of switches, got null"},
    {DOC(CABLE("[0,1,null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][1]: 1 is not an index of hosts (1 of them)"},
    {DOC(CABLE("[0,\"h\",null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][1]: expected an index of hosts, got a string"},
    {DOC(CABLE("[0,0,\"\"]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][2]: must not be empty"},
    {DOC(CABLE("[0,0,5]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][2]: expected a string, got an integer"},
    {DOC(CABLE("[0,0,{\"hex\":\"zz\"}]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][2].hex: expected lower-case hex digits"},
    {DOC(CABLE("[1,1]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0]: a cable from a switch to itself"},
    {DOC(CABLE("[0,\"1\"]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][1]: expected an index of switches, got a string"},
    {DOC(CABLE("[0,7]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[0][1]: 7 is not an index of switches (2 of them)"},
    {DOC(CABLE("[0,1],[1,0]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[1]: the same cable as an earlier one"},
    {DOC(CABLE("[0,0,null],[0,0,null]"), HOSTS, SRC, SWITCHES), TOPO_EINVALID,
     "doc: cables[1]: the same cable as an earlier one"},
    {DOC(CABLE("[0,null,\"p\"],[1,null,\"p\"],[0,null,\"p\"]"), HOSTS, SRC, SWITCHES),
     TOPO_EINVALID, "doc: cables[2]: the same cable as an earlier one"},
};

static void test_facts_json__malformed(void **state)
{
    (void)state;
    /* The base document is valid and canonical. */
    static const char base[] = DOC(CABLES, HOSTS, SRC, SWITCHES);
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0;
    if (topo_facts_json_decode(&f, base, strlen(base), "doc", &err) != 0)
        fail_msg("base: %s", err.text);
    char *text = encode(f, &len);
    assert_string_equal(text, base);
    free(text);
    topo_facts_free(f);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        topo_err e = TOPO_ERR_INIT;
        topo_facts *g = (topo_facts *)&e; /* must come back NULL */
        int rc = topo_facts_json_decode(&g, bad[i].doc, strlen(bad[i].doc), "doc", &e);
        if (rc != bad[i].code || strstr(e.text, bad[i].message) == NULL)
            fail_msg("case %zu: %s\n  got %s: %s\n  want %s: %s", i, bad[i].doc,
                     topo_err_name(rc), e.text, topo_err_name(bad[i].code), bad[i].message);
        assert_null(g);
    }
}

static void test_facts_json__limits(void **state)
{
    (void)state;
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    /* The length is checked before a byte is read. */
    assert_int_equal(topo_facts_json_decode(&f, "{}", TOPO_MAX_FACTS_DOCUMENT + 1u, NULL, &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "facts document: document of 268435457 bytes exceeds the "
                                     "limit"));
    assert_null(f);
    assert_int_equal(topo_facts_json_decode(&f, NULL, 0, "doc", &err), TOPO_EINVALID);
    assert_string_equal(err.text, "doc: no document");
    char *text = (char *)&err;
    assert_int_equal(topo_facts_json_encode(&text, NULL, NULL, &err), TOPO_EINVALID);
    assert_null(text);
}

/* Every prefix of a real document fails cleanly (and none crashes). */
static void test_facts_json__prefixes(void **state)
{
    (void)state;
    topo_facts *f = edge_facts(), *g = NULL;
    size_t len = 0;
    char *text = encode(f, &len);
    for (size_t n = 0; n < len; n++) {
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(topo_facts_json_decode(&g, text, n, "doc", &err), TOPO_EINVALID);
        assert_null(g);
    }
    free(text);
    topo_facts_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts_json__fixtures_round_trip),
        cmocka_unit_test(test_facts_json__format),
        cmocka_unit_test(test_facts_json__lenient_spelling),
        cmocka_unit_test(test_facts_json__malformed),
        cmocka_unit_test(test_facts_json__limits),
        cmocka_unit_test(test_facts_json__prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
