/* lldpd neighbour documents, both shapes, over real SONiC outputs and
 * json0 documents derived from them (fixtures/sources/lldp/README.md).
 *
 * Expected numbers were counted independently of the parser with Python
 * over the same files, e.g. for sonic-lldpctl.json:
 *   for e in d['lldp']['interface']: for ifname, v in e.items(): ch = v['chassis']
 *     one neighbour named ch['id']['value'] when ch['id'] has a value, else one
 *     per key of ch
 * gives 33 neighbours on 33 interfaces and 3 distinct switches (switch13 x31,
 * switch218ad08 x1, 00:11:22:33:44:55 x1: Ethernet96 advertises no SysName). */
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
#include "topo/lldp.h"

/* Parses a fixture for host "node-a"; returns the facts. */
static topo_facts *parse_fixture(const char *name, size_t *neighbours)
{
    size_t len = 0;
    char *text = fixture_text(name, &len);
    topo_facts *f = new_facts("lldp");
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_lldp_parse(neighbours, f, "node-a", text, len, name, &err);
    if (rc != 0)
        fail_msg("%s: %s", name, err.text);
    free(text);
    return f;
}

static int parse_text(topo_facts *f, const char *text, topo_err *err)
{
    size_t n = 0;
    return topo_lldp_parse(&n, f, "node-a", text, strlen(text), "t.json", err);
}

static void test_lldp__keyed_list_of_33(void **state)
{
    (void)state;
    size_t n = 0, hl = 0, sl = 0;
    topo_facts *f = parse_fixture("lldp/sonic-lldpctl.json", &n);
    assert_int_equal(n, 33);
    assert_int_equal(topo_facts_host_count(f), 1);
    assert_string_equal(topo_facts_host_name(f, 0), "node-a");
    assert_int_equal(topo_facts_switch_count(f), 3);
    count_links(f, &hl, &sl);
    assert_int_equal(hl, 33);
    assert_int_equal(sl, 0);
    assert_true(has_host_link(f, "node-a", "eth0", "switch218ad08"));
    assert_true(has_host_link(f, "node-a", "Ethernet0", "switch13"));
    assert_true(has_host_link(f, "node-a", "Ethernet92", "switch13"));
    /* no SysName: the chassis id names the switch, and the name is the id */
    assert_true(has_host_link(f, "node-a", "Ethernet96", "00:11:22:33:44:55"));
    size_t i = 0;
    assert_int_equal(topo_facts_find_switch(f, "00:11:22:33:44:55", &i), 0);
    assert_string_equal(topo_facts_switch_name(f, i), "00:11:22:33:44:55");
    topo_facts_free(f);
}

/* The json0 rewrite of the same document gives the same cables, in order. */
static void test_lldp__json0_matches_json(void **state)
{
    (void)state;
    size_t n0 = 0, n1 = 0;
    topo_facts *a = parse_fixture("lldp/sonic-lldpctl.json", &n0);
    topo_facts *b = parse_fixture("lldp/derived-json0-lldpctl.json", &n1);
    assert_int_equal(n0, n1);
    assert_int_equal(topo_facts_link_count(a), topo_facts_link_count(b));
    for (size_t i = 0; i < topo_facts_link_count(a); i++) {
        topo_facts_link la = topo_facts_link_at(a, i), lb = topo_facts_link_at(b, i);
        assert_string_equal(la.port, lb.port);
        assert_string_equal(topo_facts_switch_id(a, la.sw), topo_facts_switch_id(b, lb.sw));
    }
    topo_facts_free(a);
    topo_facts_free(b);

    a = parse_fixture("lldp/derived-json0-interface_only.json", &n0);
    assert_int_equal(n0, 2);
    assert_true(has_host_link(a, "node-a", "Ethernet0", "00:11:22:33:44:55"));
    assert_true(has_host_link(a, "node-a", "Ethernet100", "switch13"));
    topo_facts_free(a);
}

static void test_lldp__shapes(void **state)
{
    (void)state;
    size_t n = 0;
    /* lldp.interface an object keyed by the one ifname (Juniper peer) */
    topo_facts *f = parse_fixture("lldp/sonic-lldpctl_mgmt_only.json", &n);
    assert_int_equal(n, 1);
    assert_true(has_host_link(f, "node-a", "eth0", "switchad11"));
    topo_facts_free(f);
    /* first chassis unkeyed (no SysName), second keyed */
    f = parse_fixture("lldp/sonic-interface_only.json", &n);
    assert_int_equal(n, 2);
    assert_true(has_host_link(f, "node-a", "Ethernet0", "00:11:22:33:44:55"));
    assert_true(has_host_link(f, "node-a", "Ethernet100", "switch13"));
    assert_int_equal(topo_facts_switch_count(f), 2);
    topo_facts_free(f);
    f = parse_fixture("lldp/sonic-lldpctl_single_loc_mgmt_ip.json", &n);
    assert_int_equal(n, 2);
    assert_true(has_host_link(f, "node-a", "eth0", "switch218ad08"));
    assert_true(has_host_link(f, "node-a", "Ethernet0", "switch13"));
    topo_facts_free(f);
}

/* No neighbours in any shape: the host is still reported, with no cable. */
static void test_lldp__no_neighbours(void **state)
{
    (void)state;
    static const char *const files[] = {"lldp/sonic-short_short.json",
                                        "lldp/sonic-lldpctl_no_neighbors_loc_mgmt_ip.json",
                                        "lldp/derived-json0-no-neighbors.json"};
    static const char *const texts[] = {"{\"lldp\":[]}", "{\"lldp\":[{\"interface\":[]}]}",
                                        "{\"lldp\":{\"interface\":[]}}",
                                        "{\"lldp\":{\"interface\":null}}"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        size_t n = 99;
        topo_facts *f = parse_fixture(files[i], &n);
        assert_int_equal(n, 0);
        assert_int_equal(topo_facts_host_count(f), 1);
        assert_int_equal(topo_facts_link_count(f), 0);
        topo_facts_free(f);
    }
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        topo_facts *f = new_facts("lldp");
        assert_int_equal(parse_text(f, texts[i], &err), 0);
        assert_int_equal(topo_facts_host_count(f), 1);
        topo_facts_free(f);
    }
}

/* The json0 structure lldpd's integration test expects, and variants. */
static void test_lldp__json0_inline(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("lldp");
    assert_int_equal(
        parse_text(f,
                   "{\"lldp\":[{\"interface\":[{\"name\":\"eth0\",\"via\":\"LLDP\",\"rid\":\"1\","
                   "\"chassis\":[{\"id\":[{\"type\":\"mac\",\"value\":\"00:00:00:00:00:02\"}],"
                   "\"name\":[{\"value\":\"ns-2.example.com\"}],"
                   "\"mgmt-ip\":[{\"value\":\"fe80::200:ff:fe00:2\"}]}],"
                   "\"port\":[{\"id\":[{\"type\":\"mac\",\"value\":\"00:00:00:00:00:02\"}],"
                   "\"descr\":[{\"value\":\"eth1\"}]}]},"
                   "{\"name\":\"eth1\",\"chassis\":[{\"id\":[{\"type\":\"mac\",\"value\":"
                   "\"0a:0b\"}]}]}]}]}",
                   &err),
        0);
    assert_true(has_host_link(f, "node-a", "eth0", "ns-2.example.com"));
    assert_true(has_host_link(f, "node-a", "eth1", "0a:0b"));
    topo_facts_free(f);
}

static void expect_error(const char *text, int code, const char *message)
{
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("lldp");
    assert_int_equal(parse_text(f, text, &err), code);
    if (strstr(err.text, message) == NULL)
        fail_msg("for %s\nexpected \"%s\"\n     got \"%s\"", text, message, err.text);
    topo_facts_free(f);
}

static void test_lldp__errors_name_the_field(void **state)
{
    (void)state;
    expect_error("{\"lldp\":{\"interface\":{\"eth0\":{\"chassis\":\"x\"}}}}", TOPO_EINVALID,
                 "t.json: lldp.interface.eth0.chassis: expected a chassis object or list, got a "
                 "string");
    expect_error("{\"lldp\":{\"interface\":{\"eth0\":{}}}}", TOPO_EINVALID,
                 "lldp.interface.eth0.chassis: expected a chassis object or list, got nothing");
    expect_error("{\"lldp\":[{\"interface\":[{\"name\":\"eth0\",\"chassis\":[{\"descr\":"
                 "[{\"value\":\"x\"}]}]}]}]}",
                 TOPO_EINVALID,
                 "lldp[0].interface[0].chassis[0]: the neighbour has neither a SysName nor a "
                 "chassis id");
    expect_error("{\"lldp\":[{\"interface\":[{\"name\":\"eth0\",\"chassis\":[{\"name\":"
                 "[{\"value\":5}]}]}]}]}",
                 TOPO_EINVALID,
                 "lldp[0].interface[0].chassis[0].name[0].value: expected a "
                 "string, got an integer");
    expect_error("{\"lldp\":[{\"interface\":[{\"chassis\":[]}]}]}", TOPO_EINVALID,
                 "lldp[0].interface[0]: empty interface name");
    expect_error("{\"lldp\":[{\"interface\":{\"eth0\":{}}}]}", TOPO_EINVALID,
                 "lldp[0].interface: expected an array, got an object");
    expect_error("{\"lldp\":{\"interface\":[3]}}", TOPO_EINVALID,
                 "lldp.interface[0]: expected an object, got an integer");
    expect_error("{\"lldp\":{\"interface\":{\"eth0\":{\"chassis\":{}}}}}", TOPO_EINVALID,
                 "lldp.interface.eth0.chassis: empty chassis");
    expect_error("{\"lldp\":{\"interface\":{\"eth0\":{\"chassis\":{\"sw\":[1]}}}}}", TOPO_EINVALID,
                 "lldp.interface.eth0.chassis.sw: expected an object, got an array");
    expect_error("{\"lldp\":[{\"interface\":[{\"name\":[[[[[\"x\"]]]]],\"chassis\":[]}]}]}",
                 TOPO_EINVALID, "lldp[0].interface[0].name[0][0][0][0]: nested too deeply");
    expect_error("{\"lldp\":7}", TOPO_EINVALID,
                 "lldp: expected an object or an array, got an "
                 "integer");
    expect_error("{}", TOPO_EINVALID, "t.json: lldp: required");
    expect_error("[]", TOPO_EINVALID, "expected an lldpd document (an object), got an array");
    /* syntax errors carry line:column */
    expect_error("{\"lldp\":\n {\"interface\": }", TOPO_EINVALID, "t.json:2:");
    expect_error("\x01\xff garbage", TOPO_EINVALID, "t.json:1:");
    expect_error("", TOPO_EINVALID, "t.json:");
}

static void test_lldp__host_required_and_limit(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = new_facts("lldp");
    size_t n = 0;
    const char *text = "{\"lldp\":{}}";
    assert_int_equal(topo_lldp_parse(&n, f, "", text, strlen(text), "t.json", &err), TOPO_EINVALID);
    assert_int_equal(topo_lldp_parse(&n, f, NULL, text, strlen(text), NULL, &err), TOPO_EINVALID);
    /* the size is checked before the text is read */
    assert_int_equal(
        topo_lldp_parse(&n, f, "node-a", text, TOPO_MAX_LLDP_DOCUMENT + 1u, "big", &err),
        TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "big: lldp document of"));
    assert_int_equal(topo_facts_host_count(f), 0);
    topo_facts_free(f);
}

/* Every prefix of the real documents is an error with a position or, for
 * the few that are complete JSON, a result: never a crash (ASan build). */
static void test_lldp__truncated(void **state)
{
    (void)state;
    static const char *const files[] = {"lldp/sonic-interface_only.json",
                                        "lldp/sonic-lldpctl_mgmt_only.json",
                                        "lldp/derived-json0-interface_only.json"};
    for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
        size_t len = 0;
        char *text = fixture_text(files[k], &len);
        for (size_t cut = 0; cut < len; cut++) {
            topo_err err = TOPO_ERR_INIT;
            topo_facts *f = new_facts("lldp");
            size_t n = 0;
            int rc = topo_lldp_parse(&n, f, "node-a", text, cut, "cut.json", &err);
            /* only blanks (CR LF, LF) follow the closing brace */
            if (rc == 0)
                assert_true(strspn(text + cut, " \r\n") == len - cut);
            else
                assert_true(err.line > 0 && err.column > 0);
            topo_facts_free(f);
        }
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lldp__keyed_list_of_33),
        cmocka_unit_test(test_lldp__json0_matches_json),
        cmocka_unit_test(test_lldp__shapes),
        cmocka_unit_test(test_lldp__no_neighbours),
        cmocka_unit_test(test_lldp__json0_inline),
        cmocka_unit_test(test_lldp__errors_name_the_field),
        cmocka_unit_test(test_lldp__host_required_and_limit),
        cmocka_unit_test(test_lldp__truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
