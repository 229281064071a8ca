/* UFM systems and links over the real systems response (3,055 systems) and
 * the links derived from its GUIDs (synthetic wiring: see
 * fixtures/sources/ufm/README.md).
 *
 * Expected numbers were counted with Python over the same files, not with
 * the parser:
 *   systems: collections.Counter(r['type'] for r in S) -> host 2573,
 *     submodule 347, switch 135; hosts = {r['system_name'].split(' ')[0]
 *     for host records} -> 1330;
 *   links: each end's owner found by system_guid, guid or a ports[] prefix
 *     (submodules by their own guid) -> 2576 switch-switch records over 524
 *     distinct switch pairs, 2573 host-switch, 131 switch-submodule;
 *   gpu-0591 HCA-1 -> ibsw31r27u23 (b8599f0300c94dcc); ibsw05r1u23
 *     (b8599f0300aee308) -> director ibsw01-m1 (1c34da0300471144) through
 *     its ASIC b8599f03002513b0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sources/source_fixture.h"
#include "topo/limits.h"
#include "topo/ufm.h"
#include "support/orders.h"

typedef struct ufm_fx {
    topo_facts *facts;
    topo_ufm *ufm;
} ufm_fx;

static ufm_fx make(void)
{
    ufm_fx fx = {new_facts("ufm"), NULL};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_ufm_create(&fx.ufm, fx.facts, &err), 0);
    return fx;
}

static void dispose(ufm_fx *fx)
{
    topo_ufm_free(fx->ufm);
    topo_facts_free(fx->facts);
}

static void add_file(ufm_fx *fx, const char *name, int links)
{
    size_t len = 0;
    char *text = fixture_text(name, &len);
    topo_err err = TOPO_ERR_INIT;
    int rc = links ? topo_ufm_add_links(fx->ufm, text, len, name, &err)
                   : topo_ufm_add_systems(fx->ufm, text, len, name, &err);
    if (rc != 0)
        fail_msg("%s: %s", name, err.text);
    free(text);
}

static int add_text(ufm_fx *fx, const char *text, int links, topo_err *err)
{
    return links ? topo_ufm_add_links(fx->ufm, text, strlen(text), "t.json", err)
                 : topo_ufm_add_systems(fx->ufm, text, strlen(text), "t.json", err);
}

static void test_ufm__real_systems(void **state)
{
    (void)state;
    ufm_fx fx = make();
    add_file(&fx, "ufm/ufm-resources-systems.json", 0);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.switches, 135);
    assert_int_equal(st.adapters, 2573);
    assert_int_equal(st.unnamed_adapters, 0);
    assert_int_equal(st.other_systems, 347);
    assert_int_equal(topo_facts_switch_count(fx.facts), 135);
    assert_int_equal(topo_facts_host_count(fx.facts), 1330);
    assert_int_equal(topo_facts_link_count(fx.facts), 0);
    size_t i = 0;
    assert_int_equal(topo_facts_find_switch(fx.facts, "b8599f0300bfacda", &i), 0);
    assert_string_equal(topo_facts_switch_name(fx.facts, i), "ibsw04-m1");
    assert_int_equal(topo_facts_find_host(fx.facts, "gpu-0591", &i), 0);
    assert_int_equal(topo_facts_find_host(fx.facts, "gpu-0591 HCA-1", &i), TOPO_ENOTFOUND);
    /* the same response again adds nothing */
    add_file(&fx, "ufm/ufm-resources-systems.json", 0);
    assert_int_equal(topo_ufm_get_stats(fx.ufm).switches, 135);
    assert_int_equal(topo_facts_host_count(fx.facts), 1330);
    dispose(&fx);
}

static void test_ufm__derived_links(void **state)
{
    (void)state;
    ufm_fx fx = make();
    size_t hl = 0, sl = 0;
    add_file(&fx, "ufm/ufm-resources-systems.json", 0);
    add_file(&fx, "ufm/derived-links.json", 1);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.host_links, 2573);
    assert_int_equal(st.switch_links, 2576);
    assert_int_equal(st.ignored_links, 131);
    assert_int_equal(st.unmatched_links, 0);
    count_links(fx.facts, &hl, &sl);
    assert_int_equal(hl, 2573);
    assert_int_equal(sl, 524);
    assert_true(has_host_link(fx.facts, "gpu-0591", "HCA-1", "b8599f0300c94dcc"));
    assert_true(has_switch_link(fx.facts, "b8599f0300aee308", "1c34da0300471144"));
    /* links add no switch or host the systems did not */
    assert_int_equal(topo_facts_switch_count(fx.facts), 135);
    assert_int_equal(topo_facts_host_count(fx.facts), 1330);
    dispose(&fx);
}

static void test_ufm__excerpt(void **state)
{
    (void)state;
    ufm_fx fx = make();
    add_file(&fx, "ufm/ufm-resources-systems.excerpt.json", 0);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.switches, 2);
    assert_int_equal(st.adapters, 2);
    assert_int_equal(st.other_systems, 2);
    assert_string_equal(topo_facts_host_name(fx.facts, 0), "gpu-0591");
    assert_string_equal(topo_facts_host_name(fx.facts, 1), "gpu-0881");
    dispose(&fx);
}

/* A host with a UFM agent, a default HCA description, GUID spellings,
 * unknown ends, host-host links. */
static void test_ufm__joins(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(
        add_text(&fx,
                 "[{\"system_guid\":\"AA01\",\"type\":\"switch\",\"system_name\":\"leaf-1\","
                 "\"ports\":[\"aa01_1\",\"aa02_7\"]},"
                 "{\"system_guid\":\"0xbb01\",\"type\":\"switch\"},"
                 "{\"system_guid\":\"cc01\",\"type\":\"host\",\"system_name\":\"gpu-1\","
                 "\"ports\":[\"cc11_1\",\"cc12_1\"]},"
                 "{\"system_guid\":\"dd01\",\"type\":\"host\",\"system_name\":"
                 "\"MT4129 ConnectX7   Mellanox Technologies\"},"
                 "{\"system_guid\":\"ee01\",\"type\":\"host\",\"system_name\":\" gpu-2  mlx5_1 \"},"
                 "{\"system_guid\":\"aa01\",\"guid\":\"ff01\",\"type\":\"submodule\"}]",
                 0, &err),
        0);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.switches, 2);
    assert_int_equal(st.adapters, 3);
    assert_int_equal(st.unnamed_adapters, 1);
    assert_int_equal(st.other_systems, 1);
    size_t i = 0;
    assert_int_equal(topo_facts_find_switch(fx.facts, "000000000000bb01", &i), 0);
    assert_string_equal(topo_facts_switch_name(fx.facts, i), "000000000000bb01");
    assert_int_equal(
        add_text(&fx,
                 /* agent host: the port from the node description, then dname */
                 "[{\"source_guid\":\"CC11\",\"source_port_node_description\":\"gpu-1 HCA-2\","
                 "\"destination_guid\":\"0xAA02\"},"
                 "{\"source_guid\":\"aa01\",\"destination_guid\":\"cc12\","
                 "\"destination_port_node_description\":\"other\","
                 "\"destination_port_dname\":\"mlx5_3\"},"
                 "{\"source_guid\":\"cc01\",\"destination_guid\":\"bb01\"},"
                 /* an adapter without a host name, a host with a padded name */
                 "{\"source_guid\":\"dd01\",\"destination_guid\":\"bb01\"},"
                 "{\"source_guid\":\"bb01\",\"destination_guid\":\"ee01\"},"
                 /* switch-switch (ASIC port GUID), to itself, host-host, other, unknown */
                 "{\"source_guid\":\"bb01\",\"destination_guid\":\"aa02\"},"
                 "{\"source_guid\":\"aa01\",\"destination_guid\":\"aa02\"},"
                 "{\"source_guid\":\"cc01\",\"destination_guid\":\"ee01\"},"
                 "{\"source_guid\":\"ff01\",\"destination_guid\":\"aa01\"},"
                 "{\"source_guid\":\"1234\",\"destination_guid\":\"aa01\"}]",
                 1, &err),
        0);
    st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.host_links, 5);
    assert_int_equal(st.switch_links, 1);
    assert_int_equal(st.ignored_links, 3);
    assert_int_equal(st.unmatched_links, 1);
    assert_true(has_host_link(fx.facts, "gpu-1", "HCA-2", "000000000000aa01"));
    assert_true(has_host_link(fx.facts, "gpu-1", "mlx5_3", "000000000000aa01"));
    assert_true(has_host_link(fx.facts, "gpu-1", NULL, "000000000000bb01"));
    assert_true(has_host_link(fx.facts, NULL, NULL, "000000000000bb01"));
    assert_true(has_host_link(fx.facts, "gpu-2", "mlx5_1", "000000000000bb01"));
    assert_true(has_switch_link(fx.facts, "000000000000aa01", "000000000000bb01"));
    assert_int_equal(topo_facts_host_count(fx.facts), 2);
    dispose(&fx);
}

/* Every host, switch and cable of a is in b and the counts are equal: the
 * same facts in any order (hosts come from the links in one, from the
 * systems in the other). */
static void assert_same_fabric(const topo_facts *a, const topo_facts *b)
{
    size_t ah = 0, as = 0, bh = 0, bs = 0, i = 0;
    count_links(a, &ah, &as);
    count_links(b, &bh, &bs);
    assert_int_equal(topo_facts_host_count(a), topo_facts_host_count(b));
    assert_int_equal(topo_facts_switch_count(a), topo_facts_switch_count(b));
    assert_int_equal(ah, bh);
    assert_int_equal(as, bs);
    for (size_t h = 0; h < topo_facts_host_count(a); h++)
        if (topo_facts_find_host(b, topo_facts_host_name(a, h), &i) != 0)
            fail_msg("host %s missing", topo_facts_host_name(a, h));
    for (size_t k = 0; k < topo_facts_link_count(a); k++) {
        topo_facts_link l = topo_facts_link_at(a, k);
        const char *sw = topo_facts_switch_id(a, l.sw);
        int found =
            l.is_host_link
                ? has_host_link(
                      b, l.host == TOPO_FACTS_NO_HOST ? NULL : topo_facts_host_name(a, l.host),
                      l.port, sw)
                : has_switch_link(b, sw, topo_facts_switch_id(a, l.other));
        if (!found)
            fail_msg("cable %zu of switch %s missing", k, sw);
    }
}

/* The records of one type from a systems file, as UFM's `?type=` filter
 * answers. */
static char *systems_of_type(const char *name, const char *type)
{
    size_t len = 0;
    char *text = fixture_text(name, &len);
    json_error_t je;
    json_t *all = json_loadb(text, len, 0, &je), *out = json_array(), *rec = NULL;
    size_t i = 0;
    assert_non_null(all);
    json_array_foreach(all, i, rec)
    {
        if (strcmp(json_string_value(json_object_get(rec, "type")), type) == 0)
            assert_int_equal(json_array_append(out, rec), 0);
    }
    char *dump = json_dumps(out, JSON_COMPACT);
    json_decref(all);
    json_decref(out);
    free(text);
    return dump;
}

/* `?type=switch` then the links: the facts of the full systems response;
 * each adapter learnt once, from its link. */
static void test_ufm__switch_only_systems(void **state)
{
    (void)state;
    ufm_fx full = make(), sw = make();
    topo_err err = TOPO_ERR_INIT;
    add_file(&full, "ufm/ufm-resources-systems.json", 0);
    add_file(&full, "ufm/derived-links.json", 1);
    char *switches = systems_of_type("ufm/ufm-resources-systems.json", "switch");
    assert_int_equal(add_text(&sw, switches, 0, &err), 0);
    add_file(&sw, "ufm/derived-links.json", 1);
    free(switches);
    assert_same_fabric(full.facts, sw.facts);
    assert_same_fabric(sw.facts, full.facts);
    topo_ufm_stats st = topo_ufm_get_stats(sw.ufm);
    assert_int_equal(st.switches, 135);
    assert_int_equal(st.adapters, 2573);
    assert_int_equal(st.linked_adapters, 2573);
    assert_int_equal(st.host_links, 2573);
    assert_int_equal(st.switch_links, 2576);
    /* the SHArP nodes, unknown now, are unmatched rather than ignored */
    assert_int_equal(st.ignored_links, 0);
    assert_int_equal(st.unmatched_links, 131);
    assert_true(has_host_link(sw.facts, "gpu-0591", "HCA-1", "b8599f0300c94dcc"));
    assert_int_equal(topo_ufm_get_stats(full.ufm).linked_adapters, 0);
    dispose(&full);
    dispose(&sw);
}

/* A systems response that lacks a switch the links name (a truncated or
 * stale `?type=switch` answer: here without the leaf ibsw37r33u23): its
 * links to the directors would make it a host adapter, and its hosts'
 * cables would be lost; their ends at more ports than an adapter has give
 * it away, and the links are refused naming it. */
static void test_ufm__links_name_a_missing_switch(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    char *switches = systems_of_type("ufm/ufm-resources-systems.json", "switch");
    json_error_t je;
    json_t *all = json_loads(switches, 0, &je), *rec = NULL;
    size_t i = 0, gone = SIZE_MAX;
    assert_non_null(all);
    json_array_foreach(all, i, rec)
    {
        if (strcmp(json_string_value(json_object_get(rec, "system_guid")), "b8599f0300c950cc") == 0)
            gone = i;
    }
    assert_int_not_equal(gone, SIZE_MAX);
    assert_int_equal(json_array_remove(all, gone), 0);
    char *fewer = json_dumps(all, JSON_COMPACT);
    assert_int_equal(add_text(&fx, fewer, 0, &err), 0);
    size_t len = 0;
    char *links = fixture_text("ufm/derived-links.json", &len);
    assert_int_equal(topo_ufm_add_links(fx.ufm, links, len, "links.json", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "links.json"));
    assert_non_null(strstr(err.text, ".source_guid: \"b8599f0300c950cc\" is in no system, and "
                                     "its links end at more than 4 of its ports "
                                     "(b8599f0300c950cc_25 here)"));
    free(links);
    free(fewer);
    free(switches);
    json_decref(all);
    dispose(&fx);
}

/* Unknown link ends: a host's adapter only when cabled to a switch and
 * described with a host name; a default description is an unnamed
 * adapter; anything else stays unmatched, as before. */
static void test_ufm__unknown_ends(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(add_text(&fx,
                              "[{\"system_guid\":\"aa01\",\"type\":\"switch\"},"
                              "{\"system_guid\":\"bb01\",\"type\":\"switch\"},"
                              "{\"system_guid\":\"9901\",\"type\":\"gateway\"}]",
                              0, &err),
                     0);
    assert_int_equal(
        add_text(&fx,
                 /* a host's adapter, seen again by its GUID with another port */
                 "[{\"source_guid\":\"0xC101\",\"source_port_node_description\":\"gpu-7 HCA-3\","
                 "\"destination_guid\":\"aa01\"},"
                 "{\"source_guid\":\"bb01\",\"destination_guid\":\"c101\","
                 "\"destination_port_node_description\":\"gpu-7 HCA-3\"},"
                 /* a plainly named host (an agent): the port from the dname */
                 "{\"source_guid\":\"aa01\",\"destination_guid\":\"c201\","
                 "\"destination_port_node_description\":\" gpu-8 \","
                 "\"destination_port_dname\":\"mlx5_0\"},"
                 /* a default description: an unnamed adapter */
                 "{\"source_guid\":\"c301\",\"source_port_node_description\":"
                 "\"MT4129 ConnectX7   Mellanox Technologies\",\"destination_guid\":\"bb01\"},"
                 /* unmatched: SHArP, blank, none, not to a switch, both unknown */
                 "{\"source_guid\":\"aa01\",\"destination_guid\":\"c401\","
                 "\"destination_port_node_description\":"
                 "\"Mellanox Technologies Aggregation Node\"},"
                 "{\"source_guid\":\"c501\",\"source_port_node_description\":\"  \","
                 "\"destination_guid\":\"aa01\"},"
                 "{\"source_guid\":\"c601\",\"destination_guid\":\"aa01\"},"
                 "{\"source_guid\":\"c701\",\"source_port_node_description\":\"gpu-9 HCA-1\","
                 "\"destination_guid\":\"9901\"},"
                 "{\"source_guid\":\"c801\",\"source_port_node_description\":\"gpu-9 HCA-1\","
                 "\"destination_guid\":\"c901\","
                 "\"destination_port_node_description\":\"gpu-10 HCA-1\"}]",
                 1, &err),
        0);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.adapters, 3);
    assert_int_equal(st.linked_adapters, 3);
    assert_int_equal(st.unnamed_adapters, 1);
    assert_int_equal(st.host_links, 4);
    assert_int_equal(st.unmatched_links, 5);
    assert_true(has_host_link(fx.facts, "gpu-7", "HCA-3", "000000000000aa01"));
    assert_true(has_host_link(fx.facts, "gpu-7", "HCA-3", "000000000000bb01"));
    assert_true(has_host_link(fx.facts, "gpu-8", "mlx5_0", "000000000000aa01"));
    assert_true(has_host_link(fx.facts, NULL, NULL, "000000000000bb01"));
    assert_int_equal(topo_facts_host_count(fx.facts), 2);
    dispose(&fx);
}

static void expect_error(int links, const char *text, int code, const char *message)
{
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    if (links)
        assert_int_equal(add_text(&fx, "[{\"system_guid\":\"a1\",\"type\":\"switch\"}]", 0, &err),
                         0);
    assert_int_equal(add_text(&fx, text, links, &err), code);
    if (strstr(err.text, message) == NULL)
        fail_msg("for %s\nexpected \"%s\"\n     got \"%s\"", text, message, err.text);
    dispose(&fx);
}

static void test_ufm__errors_name_the_field(void **state)
{
    (void)state;
    expect_error(0, "[{\"system_guid\":\"a1\",\"type\":\"switch\"},{\"system_guid\":7}]",
                 TOPO_EINVALID, "t.json: [1].system_guid: expected a string, got an integer");
    expect_error(0, "[{\"system_guid\":\"a1\"}]", TOPO_EINVALID, "t.json: [0].type: required");
    expect_error(0, "[{\"system_guid\":\"\",\"type\":\"host\"}]", TOPO_EINVALID,
                 "[0].system_guid: not a GUID: \"\"");
    expect_error(0,
                 "[{\"system_guid\":\"a1\",\"type\":\"switch\",\"ports\":[\"a1_1\",\"a1_2\",3]}]",
                 TOPO_EINVALID, "[0].ports[2]: expected a string, got an integer");
    expect_error(0, "[{\"system_guid\":\"a1\",\"type\":\"switch\",\"system_name\":{}}]",
                 TOPO_EINVALID, "[0].system_name: expected a string, got an object");
    expect_error(0, "[\"a1\"]", TOPO_EINVALID, "[0]: expected an object, got a string");
    expect_error(0, "{\"systems\":[]}", TOPO_EINVALID,
                 "t.json: expected a list of UFM systems, got an object");
    expect_error(0, "[{\"system_guid\":\"a1\",\n\"type\":", TOPO_EINVALID, "t.json:2:");
    expect_error(0, "\xff\xfe", TOPO_EINVALID, "t.json:1:");
    expect_error(1, "[{\"source_guid\":\"a1\"}]", TOPO_EINVALID,
                 "t.json: [0].destination_guid: required");
    expect_error(1,
                 "[{\"source_guid\":\"a1\",\"destination_guid\":\"a1\","
                 "\"source_port_node_description\":1}]",
                 TOPO_EINVALID, "[0].source_port_node_description: expected a string");
    expect_error(1, "{}", TOPO_EINVALID, "expected a list of UFM links, got an object");
    /* GUIDs, wherever they are: the one rule of topo/guid.h */
    expect_error(0, "[{\"system_guid\":\"S-aa01\",\"type\":\"switch\",\"guid\":\"aa01 \"}]",
                 TOPO_EINVALID, "[0].guid: not a GUID: \"aa01 \"");
    expect_error(0,
                 "[{\"system_guid\":\"a1\",\"type\":\"switch\","
                 "\"ports\":[\"a1_1\",\"xa1_2\"]}]",
                 TOPO_EINVALID, "[0].ports[1]: not a GUID: \"xa1\"");
    expect_error(0, "[{\"system_guid\":\"10000000000000000\",\"type\":\"switch\"}]",
                 TOPO_EINVALID, "[0].system_guid: not a GUID");
}

/* A link whose end is no GUID ("", a typo) is skipped and counted, the
 * read going on: one odd link record must not stop every later read of
 * the fabric (a systems record with one is refused: it is an identity). */
static void test_ufm__link_not_a_guid_skipped(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(add_text(&fx,
                              "[{\"system_guid\":\"a1\",\"type\":\"switch\"},"
                              "{\"system_guid\":\"a2\",\"type\":\"switch\"}]",
                              0, &err),
                     0);
    assert_int_equal(add_text(&fx,
                              "[{\"source_guid\":\"\",\"destination_guid\":\"a1\","
                              "\"source_port_node_description\":\"h1 HCA-1\"},"
                              "{\"source_guid\":\"a1\",\"destination_guid\":\"0xg1\"},"
                              "{\"source_guid\":\"S-a1\",\"destination_guid\":\"0xA2\"}]",
                              1, &err),
                     0);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.bad_guid_links, 2);
    assert_int_equal(st.switch_links, 1);
    assert_int_equal(st.adapters, 0); /* no adapter learnt from the bad end */
    dispose(&fx);
}

/* The facts of systems recs (in order) and links, as one line per fact and
 * conflict, for comparing orders. */
static void facts_of(char *out, size_t size, const char *const *recs, const size_t *order,
                     size_t n, const char *links, topo_ufm_stats *st)
{
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    char *systems = test_json_array_in_order(recs, order, n);
    if (add_text(&fx, systems, 0, &err) != 0 || add_text(&fx, links, 1, &err) != 0)
        fail_msg("%s", err.text);
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < topo_facts_link_count(fx.facts); i++) {
        topo_facts_link l = topo_facts_link_at(fx.facts, i);
        const char *a = topo_facts_switch_id(fx.facts, l.sw), *b = NULL;
        if (l.is_host_link)
            b = l.host == TOPO_FACTS_NO_HOST ? "?" : topo_facts_host_name(fx.facts, l.host);
        else if (strcmp(b = topo_facts_switch_id(fx.facts, l.other), a) > 0)
            b = a, a = topo_facts_switch_id(fx.facts, l.other); /* the pair in id order */
        at += (size_t)snprintf(out + at, size - at, "%s-%s\n", b, a);
    }
    for (size_t i = 0; i < topo_facts_conflict_count(fx.facts); i++)
        at += (size_t)snprintf(out + at, size - at, "%s\n", topo_facts_conflict(fx.facts, i));
    *st = topo_ufm_get_stats(fx.ufm);
    free(systems);
    dispose(&fx);
}

/* Facts whose links are sorted lines: the cable order follows the links,
 * which are not permuted here, so the text compares as is. */
static void check_every_order(const char *const *recs, size_t n, const char *links,
                              const char *want)
{
    size_t order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    char got[4096];
    topo_ufm_stats st;
    do {
        facts_of(got, sizeof got, recs, order, n, links, &st);
        if (strcmp(got, want) != 0)
            fail_msg("systems in order %zu %zu %zu %zu %zu:\n%s\nwant:\n%s", order[0], order[1],
                     order[2], order[3], order[4], got, want);
        assert_int_equal(st.duplicate_guids, 1);
    } while (test_next_order(order, n));
}

/* Issue 33 item 3: a host record reusing a switch's GUID. In every order
 * of the records the switch keeps it (its cables stay), the host record
 * gets nothing through any of its GUIDs, and one conflict names both. */
static void test_ufm__duplicate_guid_of_a_switch(void **state)
{
    (void)state;
    static const char *const recs[] = {
        "{\"system_guid\":\"a3\",\"type\":\"switch\",\"system_name\":\"spine\"}",
        "{\"system_guid\":\"a1\",\"type\":\"switch\",\"system_name\":\"leaf\"}",
        "{\"system_guid\":\"b1\",\"type\":\"host\",\"system_name\":\"h1 HCA-1\"}",
        "{\"system_guid\":\"b2\",\"type\":\"host\",\"system_name\":\"h2 HCA-1\"}",
        "{\"system_guid\":\"0xA3\",\"type\":\"host\",\"system_name\":\"bad HCA-1\","
        "\"ports\":[\"c9_1\"]}",
    };
    static const char links[] =
        "[{\"source_guid\":\"b1\",\"destination_guid\":\"a1\"},"
        "{\"source_guid\":\"b2\",\"destination_guid\":\"a1\"},"
        "{\"source_guid\":\"a1\",\"destination_guid\":\"a3\"},"
        /* the distrusted record's own port: no cable, no adapter learnt */
        "{\"source_guid\":\"c9\",\"source_port_node_description\":\"bad HCA-1\","
        "\"destination_guid\":\"a1\"}]";
    check_every_order(recs, 5, links,
                      "h1-00000000000000a1\nh2-00000000000000a1\n"
                      "00000000000000a1-00000000000000a3\n"
                      "duplicate GUID 00000000000000a3: switch \"spine\" and host record "
                      "\"bad HCA-1\" claim it: the switch keeps it; no fabric facts from that "
                      "record\n");
}

/* Issue 33 F3: two switch records claiming one GUID (a second whose ports[]
 * lists the first's GUID). In every order, and whatever their names, the
 * record whose system GUID it is keeps it, and one conflict names both;
 * when none is it, the lowest system GUID keeps it (not the lowest name,
 * not the first record). */
static void test_ufm__duplicate_guid_of_two_switches(void **state)
{
    (void)state;
    static const char *const recs[] = {
        "{\"system_guid\":\"a3\",\"type\":\"switch\",\"system_name\":\"spine\"}",
        "{\"system_guid\":\"a1\",\"type\":\"switch\",\"system_name\":\"leaf\","
        "\"ports\":[\"a1_1\"]}",
        /* named to sort first; lists the leaf's GUID among its ports */
        "{\"system_guid\":\"c9\",\"type\":\"switch\",\"system_name\":\"a-fake\","
        "\"ports\":[\"c9_1\",\"a1_7\"]}",
        "{\"system_guid\":\"b1\",\"type\":\"host\",\"system_name\":\"h1 HCA-1\"}",
    };
    static const char links[] = "[{\"source_guid\":\"b1\",\"destination_guid\":\"a1\"},"
                                "{\"source_guid\":\"a1\",\"destination_guid\":\"a3\"}]";
    check_every_order(recs, 4, links,
                      "h1-00000000000000a1\n00000000000000a1-00000000000000a3\n"
                      "duplicate GUID 00000000000000a1: switches \"leaf\" (system "
                      "00000000000000a1), \"a-fake\" (system 00000000000000c9) claim it: \"leaf\" "
                      "(system 00000000000000a1), whose system GUID it is, keeps it; the others' "
                      "ports listing it are ignored\n");

    /* Neither is it: the lower system GUID keeps it, not the lower name. */
    static const char *const ports_only[] = {
        "{\"system_guid\":\"c2\",\"type\":\"switch\",\"system_name\":\"aa\","
        "\"ports\":[\"a1_1\"]}",
        "{\"system_guid\":\"c1\",\"type\":\"switch\",\"system_name\":\"zz\","
        "\"ports\":[\"a1_2\"]}",
        "{\"system_guid\":\"b1\",\"type\":\"host\",\"system_name\":\"h1 HCA-1\"}",
    };
    check_every_order(ports_only, 3, "[{\"source_guid\":\"b1\",\"destination_guid\":\"a1\"}]",
                      "h1-00000000000000c1\n"
                      "duplicate GUID 00000000000000a1: switches \"zz\" (system "
                      "00000000000000c1), \"aa\" (system 00000000000000c2) claim it: \"zz\" "
                      "(system 00000000000000c1), of the lowest system GUID, keeps it; the "
                      "others' ports listing it are ignored\n");
}

/* Two host records with one GUID: which is right cannot be told, so
 * neither gets a cable through it; other hosts are unaffected. */
static void test_ufm__duplicate_guid_of_two_hosts(void **state)
{
    (void)state;
    static const char *const recs[] = {
        "{\"system_guid\":\"a1\",\"type\":\"switch\",\"system_name\":\"leaf\"}",
        "{\"system_guid\":\"b1\",\"type\":\"host\",\"system_name\":\"h1 HCA-1\"}",
        "{\"system_guid\":\"b1\",\"type\":\"host\",\"system_name\":\"h2 HCA-1\"}",
        "{\"system_guid\":\"b3\",\"type\":\"host\",\"system_name\":\"h3 HCA-1\"}",
        /* the same record twice (a page read again) is one system */
        "{\"system_guid\":\"b3\",\"type\":\"host\",\"system_name\":\"h3 HCA-1\"}",
    };
    static const char links[] =
        "[{\"source_guid\":\"b1\",\"source_port_node_description\":\"h1 HCA-1\","
        "\"destination_guid\":\"a1\"},"
        "{\"source_guid\":\"b3\",\"destination_guid\":\"a1\"}]";
    check_every_order(recs, 5, links,
                      "h3-00000000000000a1\n"
                      "duplicate GUID 00000000000000b1: host records \"h1 HCA-1\", \"h2 HCA-1\" "
                      "claim it: no fabric facts from those records\n");
    size_t order[] = {0, 1, 2, 3, 4};
    char got[4096];
    topo_ufm_stats st;
    facts_of(got, sizeof got, recs, order, 5, links, &st);
    assert_int_equal(st.disputed_links, 1);
    assert_int_equal(st.linked_adapters, 0);
    assert_int_equal(st.adapters, 3);
}

/* Systems that claim no GUID (a gateway's system_guid is not its own),
 * then links: nothing to resolve, every link unmatched (found by
 * fuzz_ufm: the empty claims were copied from a NULL array). */
static void test_ufm__no_claims(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(add_text(&fx, "[{\"system_guid\":\"AA01\",\"type\":\"gateway\"}]", 0, &err),
                     0);
    assert_int_equal(
        add_text(&fx, "[{\"source_guid\":\"cc01\",\"destination_guid\":\"aa01\"}]", 1, &err), 0);
    topo_ufm_stats st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.other_systems, 1);
    assert_int_equal(st.unmatched_links, 1);
    assert_int_equal(topo_facts_conflict_count(fx.facts), 0);
    dispose(&fx);
}

static void test_ufm__order_and_limits(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(add_text(&fx, "[]", 1, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "links before any systems"));
    assert_int_equal(topo_ufm_add_systems(fx.ufm, "[]", TOPO_MAX_UFM_RESPONSE + 1u, "big", &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "big: UFM systems response of"));
    assert_int_equal(topo_ufm_add_systems(fx.ufm, NULL, 0, "none", &err), TOPO_EINVALID);
    dispose(&fx);
    topo_ufm_free(NULL);
}

/* A response read within the limit given (over HTTP, maxResponseBytes),
 * its records counted: the systems and links of the fixtures. */
static void test_ufm__read_within_its_limit(void **state)
{
    (void)state;
    ufm_fx fx = make();
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0, links_len = 0, records = 99;
    char *text = fixture_text("ufm/ufm-resources-systems.json", &len);
    char *links = fixture_text("ufm/derived-links.json", &links_len);
    json_t *systems = json_loads(text, 0, NULL), *link_list = json_loads(links, 0, NULL);
    assert_int_equal(topo_ufm_read_systems(fx.ufm, text, len, len - 1, &records, "s", &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "s: UFM systems response of"));
    assert_int_equal(records, 0);
    if (topo_ufm_read_systems(fx.ufm, text, len, len, &records, "s", &err) != 0)
        fail_msg("%s", err.text);
    assert_int_equal(records, json_array_size(systems));
    if (topo_ufm_read_links(fx.ufm, links, links_len, links_len, &records, "l", &err) != 0)
        fail_msg("%s", err.text);
    assert_int_equal(records, json_array_size(link_list));
    /* Another shape, read whole: no records. */
    assert_int_equal(topo_ufm_read_links(fx.ufm, "{}", 2, 2, &records, "l", &err),
                     TOPO_EINVALID);
    assert_int_equal(records, 0);
    json_decref(systems);
    json_decref(link_list);
    free(text);
    free(links);
    dispose(&fx);
}

/* Every prefix of the excerpt: an error with a position, never a crash. */
static void test_ufm__truncated(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = fixture_text("ufm/ufm-resources-systems.excerpt.json", &len);
    for (size_t cut = 0; cut + 1 < len; cut += 7) {
        ufm_fx fx = make();
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(topo_ufm_add_systems(fx.ufm, text, cut, "cut.json", &err), TOPO_EINVALID);
        assert_true(err.line > 0 && err.column > 0);
        dispose(&fx);
    }
    free(text);
}

/* The stats line's wording, shared by the responses read from files and
 * over HTTP: each count in its place (distinct values, the hosts from the
 * facts), and a short buffer truncated, still a string. */
static void test_ufm__stats_text(void **state)
{
    (void)state;
    topo_ufm_stats st = {.switches = 1, .adapters = 2, .linked_adapters = 3,
                         .unnamed_adapters = 4, .other_systems = 5, .switch_links = 6,
                         .host_links = 7, .ignored_links = 8, .unmatched_links = 9,
                         .duplicate_guids = 10, .disputed_links = 11, .bad_guid_links = 12};
    char text[TOPO_UFM_STATS_TEXT_MAX], small[14];
    assert_ptr_equal(topo_ufm_stats_text(text, sizeof text, &st, 10), text);
    assert_string_equal(text, "1 switches, 2 adapters (4 unnamed, 3 from links), 10 hosts, 6 "
                              "switch links, 7 host links; skipped 5 other systems, 8 ignored, "
                              "9 unmatched and 12 links with an end whose GUID is not one; 10 "
                              "duplicate GUIDs (11 links to them)");
    topo_ufm_stats_text(small, sizeof small, &st, 10);
    assert_string_equal(small, "1 switches, 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ufm__stats_text),
        cmocka_unit_test(test_ufm__real_systems),
        cmocka_unit_test(test_ufm__derived_links),
        cmocka_unit_test(test_ufm__excerpt),
        cmocka_unit_test(test_ufm__joins),
        cmocka_unit_test(test_ufm__switch_only_systems),
        cmocka_unit_test(test_ufm__links_name_a_missing_switch),
        cmocka_unit_test(test_ufm__unknown_ends),
        cmocka_unit_test(test_ufm__errors_name_the_field),
        cmocka_unit_test(test_ufm__order_and_limits),
        cmocka_unit_test(test_ufm__truncated),
        cmocka_unit_test(test_ufm__read_within_its_limit),
        cmocka_unit_test(test_ufm__duplicate_guid_of_a_switch),
        cmocka_unit_test(test_ufm__duplicate_guid_of_two_hosts),
        cmocka_unit_test(test_ufm__duplicate_guid_of_two_switches),
        cmocka_unit_test(test_ufm__no_claims),
        cmocka_unit_test(test_ufm__link_not_a_guid_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
