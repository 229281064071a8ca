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
    assert_int_equal(topo_facts_find_switch(fx.facts, "bb01", &i), 0);
    assert_string_equal(topo_facts_switch_name(fx.facts, i), "bb01");
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
                 "{\"source_guid\":\"1234\",\"destination_guid\":\"aa01\"},"
                 "{\"source_guid\":\"\",\"destination_guid\":\"aa01\"}]",
                 1, &err),
        0);
    st = topo_ufm_get_stats(fx.ufm);
    assert_int_equal(st.host_links, 5);
    assert_int_equal(st.switch_links, 1);
    assert_int_equal(st.ignored_links, 3);
    assert_int_equal(st.unmatched_links, 2);
    assert_true(has_host_link(fx.facts, "gpu-1", "HCA-2", "aa01"));
    assert_true(has_host_link(fx.facts, "gpu-1", "mlx5_3", "aa01"));
    assert_true(has_host_link(fx.facts, "gpu-1", NULL, "bb01"));
    assert_true(has_host_link(fx.facts, NULL, NULL, "bb01"));
    assert_true(has_host_link(fx.facts, "gpu-2", "mlx5_1", "bb01"));
    assert_true(has_switch_link(fx.facts, "aa01", "bb01"));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ufm__real_systems),
        cmocka_unit_test(test_ufm__derived_links),
        cmocka_unit_test(test_ufm__excerpt),
        cmocka_unit_test(test_ufm__joins),
        cmocka_unit_test(test_ufm__errors_name_the_field),
        cmocka_unit_test(test_ufm__order_and_limits),
        cmocka_unit_test(test_ufm__truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
