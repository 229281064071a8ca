/* NetBox pages: the real pynetbox fixtures (NetBox 2.x shapes) and the
 * synthetic v4 pod of fixtures/sources/netbox (make_v4.py, README.md).
 *
 * Expected numbers were counted with a separate Python classifier over the
 * same files (role slug or name containing "switch" -> switch; host roles;
 * cables with status connected and dcim.interface ends on both sides;
 * interfaces' connected_endpoints of type dcim.interface unless mgmt_only;
 * then kept when both devices are known and not both hosts):
 *   v4, host_roles=gpu-server: hosts 5, switches 3, other 2; 8 host and 3
 *     switch connections, 6 ignored; 7 distinct host cables, 2 switch cables;
 *   v4, default roles: hosts 6 (the PDU too), 9 host connections, 5 ignored;
 *   v4, host_roles=gpu-server, sites=dc-west: hosts 4, 1 filtered, 7 host
 *     connections, 7 ignored;
 *   pynetbox devices.json: 7 of 11 devices have a role slug with "switch";
 *     interfaces.json: 2 connected_interface pairs, both switch-switch. */
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
#include "topo/netbox.h"

static const char *const gpu_roles[] = {"gpu-server"};
static const char *const west[] = {"DC-WEST"};

static topo_netbox *make(const topo_netbox_opts *opts)
{
    topo_netbox *nb = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_netbox_create(&nb, opts, &err) != 0)
        fail_msg("topo_netbox_create: %s", err.text);
    return nb;
}

/* Adds a fixture page; returns its next URL (malloc'd) or NULL. */
static char *add_file(topo_netbox *nb, topo_netbox_kind kind, const char *name)
{
    size_t len = 0;
    char *text = fixture_text(name, &len), *next = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_netbox_add_page(&next, nb, kind, text, len, name, &err) != 0)
        fail_msg("%s: %s", name, err.text);
    free(text);
    return next;
}

static void add_v4(topo_netbox *nb)
{
    char *next = add_file(nb, TOPO_NETBOX_DEVICES, "netbox/v4-devices-page1.json");
    assert_string_equal(next, "https://netbox.example.com/api/dcim/devices/?limit=5&offset=5");
    free(next);
    assert_null(add_file(nb, TOPO_NETBOX_DEVICES, "netbox/v4-devices-page2.json"));
    assert_null(add_file(nb, TOPO_NETBOX_CABLES, "netbox/v4-cables.json"));
    assert_null(add_file(nb, TOPO_NETBOX_INTERFACES, "netbox/v4-interfaces.json"));
    assert_null(add_file(nb, TOPO_NETBOX_RACKS, "netbox/v4-racks.json"));
    assert_null(add_file(nb, TOPO_NETBOX_SITES, "netbox/v4-sites.json"));
}

static topo_facts *finish(topo_netbox *nb)
{
    topo_facts *f = new_facts("netbox");
    topo_err err = TOPO_ERR_INIT;
    if (topo_netbox_finish(nb, f, &err) != 0)
        fail_msg("finish: %s", err.text);
    return f;
}

static const char *level(const topo_facts *f, const char *host, topo_level l)
{
    size_t i = 0;
    if (topo_facts_find_host(f, host, &i) != 0)
        fail_msg("no host %s", host);
    return topo_facts_host_level(f, i, l);
}

static void test_netbox__v4_pod(void **state)
{
    (void)state;
    topo_netbox_opts o = {.host_roles = gpu_roles, .nhost_roles = 1, .nvlink_field = "nvl_domain"};
    topo_netbox *nb = make(&o);
    add_v4(nb);
    topo_facts *f = finish(nb);
    topo_netbox_stats st = topo_netbox_get_stats(nb);
    assert_int_equal(st.hosts, 5);
    assert_int_equal(st.switches, 3);
    assert_int_equal(st.other_devices, 2);
    assert_int_equal(st.filtered_devices, 0);
    assert_int_equal(st.racks, 3);
    assert_int_equal(st.sites, 2);
    assert_int_equal(st.host_links, 8);
    assert_int_equal(st.switch_links, 3);
    assert_int_equal(st.ignored_links, 6);
    assert_int_equal(st.conflicts, 0);

    size_t hl = 0, sl = 0;
    count_links(f, &hl, &sl);
    assert_int_equal(hl, 7);
    assert_int_equal(sl, 2);
    assert_int_equal(topo_facts_host_count(f), 5);
    assert_int_equal(topo_facts_switch_count(f), 3);
    assert_true(has_host_link(f, "gpu-001", "eth0", "leaf-01"));
    assert_true(has_host_link(f, "gpu-001", "eth1", "leaf-02"));
    assert_true(has_host_link(f, "gpu-004", "eth0", "leaf-02"));  /* cable listed B to A */
    assert_true(has_host_link(f, "gpu-003", "eth1", "leaf-02"));  /* traced through a patch panel */
    assert_false(has_host_link(f, "gpu-003", "bmc", "leaf-02"));  /* management only */
    assert_false(has_host_link(f, "gpu-002", "eth1", "leaf-02")); /* planned */
    assert_true(has_switch_link(f, "leaf-01", "spine-01"));
    assert_true(has_switch_link(f, "leaf-02", "spine-01"));

    assert_string_equal(level(f, "gpu-001", TOPO_LEVEL_DATACENTER), "dc-west");
    assert_string_equal(level(f, "gpu-001", TOPO_LEVEL_RACK), "R01");
    assert_string_equal(level(f, "gpu-001", TOPO_LEVEL_NVLINK), "nvl-r01"); /* the rack's */
    assert_string_equal(level(f, "gpu-003", TOPO_LEVEL_NVLINK), "nvl-x");
    assert_string_equal(level(f, "gpu-004", TOPO_LEVEL_NVLINK), "nvl-7"); /* object value */
    assert_string_equal(level(f, "gpu-101", TOPO_LEVEL_DATACENTER), "dc-east");
    assert_string_equal(level(f, "gpu-101", TOPO_LEVEL_RACK), "E01");
    assert_null(level(f, "gpu-101", TOPO_LEVEL_NVLINK));
    topo_facts_free(f);
    /* a second finish recounts, it does not add up */
    f = finish(nb);
    topo_netbox_stats again = topo_netbox_get_stats(nb);
    assert_memory_equal(&st, &again, sizeof(st));
    assert_int_equal(topo_facts_link_count(f), 9);
    topo_facts_free(f);
    topo_netbox_free(nb);
}

static void test_netbox__v4_defaults_and_filters(void **state)
{
    (void)state;
    topo_netbox *nb = make(NULL);
    add_v4(nb);
    topo_facts *f = finish(nb);
    topo_netbox_stats st = topo_netbox_get_stats(nb);
    assert_int_equal(st.hosts, 6);
    assert_int_equal(st.other_devices, 1);
    assert_int_equal(st.host_links, 9);
    assert_int_equal(st.ignored_links, 5);
    assert_true(has_host_link(f, "pdu-r01", "eth0", "leaf-01"));
    assert_null(level(f, "gpu-001", TOPO_LEVEL_NVLINK)); /* no field configured */
    topo_facts_free(f);
    topo_netbox_free(nb);

    topo_netbox_opts o = {.host_roles = gpu_roles, .nhost_roles = 1, .sites = west, .nsites = 1};
    nb = make(&o);
    add_v4(nb);
    f = finish(nb);
    st = topo_netbox_get_stats(nb);
    assert_int_equal(st.hosts, 4);
    assert_int_equal(st.filtered_devices, 1);
    assert_int_equal(st.host_links, 7);
    assert_int_equal(st.ignored_links, 7);
    assert_int_equal(topo_facts_find_host(f, "gpu-101", &(size_t){0}), TOPO_ENOTFOUND);
    topo_facts_free(f);
    topo_netbox_free(nb);

    /* a tag filter: gpu-004 and the switches carry no "compute" tag */
    static const char *const compute[] = {"Compute"};
    topo_netbox_opts t = {.tags = compute, .ntags = 1};
    nb = make(&t);
    add_v4(nb);
    f = finish(nb);
    st = topo_netbox_get_stats(nb);
    assert_int_equal(st.hosts, 4);
    assert_int_equal(st.switches, 0);
    assert_int_equal(st.filtered_devices, 6);
    topo_facts_free(f);
    topo_netbox_free(nb);
}

/* The real 2.x fixtures: device_role-era names, connected_interface,
 * termination_a/b, single objects. */
static void test_netbox__pynetbox(void **state)
{
    (void)state;
    topo_netbox *nb = make(NULL);
    assert_null(add_file(nb, TOPO_NETBOX_DEVICES, "netbox/pynetbox-devices.json"));
    assert_null(add_file(nb, TOPO_NETBOX_DEVICES, "netbox/pynetbox-device.json"));
    assert_null(add_file(nb, TOPO_NETBOX_RACKS, "netbox/pynetbox-racks.json"));
    assert_null(add_file(nb, TOPO_NETBOX_RACKS, "netbox/pynetbox-rack.json"));
    assert_null(add_file(nb, TOPO_NETBOX_SITES, "netbox/pynetbox-sites.json"));
    assert_null(add_file(nb, TOPO_NETBOX_SITES, "netbox/pynetbox-site.json"));
    assert_null(add_file(nb, TOPO_NETBOX_INTERFACES, "netbox/pynetbox-interfaces.json"));
    assert_null(add_file(nb, TOPO_NETBOX_INTERFACES, "netbox/pynetbox-interface.json"));
    assert_null(add_file(nb, TOPO_NETBOX_CABLES, "netbox/pynetbox-cables.json"));
    assert_null(add_file(nb, TOPO_NETBOX_CABLES, "netbox/pynetbox-cable.json"));
    topo_facts *f = finish(nb);
    topo_netbox_stats st = topo_netbox_get_stats(nb);
    assert_int_equal(st.switches, 7);
    assert_int_equal(st.hosts, 4); /* device.json repeats test1-edge1 */
    assert_int_equal(st.racks, 2);
    assert_int_equal(st.sites, 1);
    assert_int_equal(st.switch_links, 2);
    assert_int_equal(st.host_links, 0);
    /* 4 console cables (3 + the single one) and the dcim.device endpoint */
    assert_int_equal(st.ignored_links, 5);
    assert_true(has_switch_link(f, "test1-spine2", "test1-core1"));
    assert_true(has_switch_link(f, "test1-spine2", "test1-core2"));
    assert_string_equal(level(f, "test1-edge1", TOPO_LEVEL_DATACENTER), "test1");
    assert_string_equal(level(f, "test1-pdu2", TOPO_LEVEL_RACK), "A1R2");
    topo_facts_free(f);
    topo_netbox_free(nb);
}

static void add_text(topo_netbox *nb, topo_netbox_kind kind, const char *text)
{
    topo_err err = TOPO_ERR_INIT;
    if (topo_netbox_add_page(NULL, nb, kind, text, strlen(text), "t.json", &err) != 0)
        fail_msg("%s: %s", text, err.text);
}

/* v3.0-3.2 (connected_endpoint, link_peer, device_role), site by id only,
 * breakout cables, a conflict between two devices of one name. */
static void test_netbox__v3_shapes_and_conflicts(void **state)
{
    (void)state;
    static const char *const roles[] = {"Leaf"};
    topo_netbox_opts o = {.switch_roles = roles, .nswitch_roles = 1, .nvlink_field = "nvl"};
    topo_netbox *nb = make(&o);
    add_text(nb, TOPO_NETBOX_SITES,
             "{\"count\":1,\"next\":null,\"results\":[{\"id\":4,"
             "\"name\":\"Site Four\"}]}");
    add_text(nb, TOPO_NETBOX_DEVICES,
             "{\"count\":null,\"next\":null,\"previous\":null,\"results\":["
             "{\"name\":\"h1\",\"device_role\":{\"slug\":\"server\"},\"site\":{\"id\":4},"
             "\"custom_fields\":{\"nvl\":12}},"
             "{\"name\":\"h1\",\"device_role\":{\"slug\":\"server\"},\"site\":{\"slug\":\"s9\"}},"
             "{\"name\":\"h2\",\"device_role\":{\"name\":\"Server\"},"
             "\"custom_fields\":{\"nvl\":{\"value\":\"a\",\"label\":\"Domain A\"}}},"
             "{\"name\":\"sw\",\"device_role\":{\"slug\":\"leaf\"}},"
             "{\"name\":\"sw2\",\"device_role\":{\"slug\":\"tor-switch\"}}]}");
    add_text(nb, TOPO_NETBOX_INTERFACES,
             "{\"results\":[{\"device\":{\"name\":\"h1\"},\"name\":\"e0\","
             "\"connected_endpoint_type\":\"dcim.interface\",\"connected_endpoint\":"
             "{\"device\":{\"name\":\"sw\"},\"name\":\"p1\"}},"
             "{\"device\":{\"name\":\"h2\"},\"name\":\"e0\",\"link_peer_type\":\"dcim.interface\","
             "\"link_peer\":{\"device\":{\"name\":\"sw\"},\"name\":\"p2\"}},"
             "{\"device\":{\"name\":\"h2\"},\"name\":\"e1\",\"link_peers_type\":\"dcim.interface\","
             "\"link_peers\":[{\"device\":{\"name\":\"h1\"},\"name\":\"e1\"}]}]}");
    add_text(nb, TOPO_NETBOX_CABLES,
             "{\"results\":[{\"status\":\"connected\",\"a_terminations\":["
             "{\"object_type\":\"dcim.interface\",\"object\":{\"device\":{\"name\":\"h2\"},"
             "\"name\":\"e2\"}},{\"object_type\":\"dcim.interface\",\"object\":{\"device\":"
             "{\"name\":\"h2\"},\"name\":\"e3\"}}],\"b_terminations\":[{\"object_type\":"
             "\"dcim.interface\",\"object\":{\"device\":{\"name\":\"sw\"},\"name\":\"p3\"}}]},"
             "{\"status\":{\"value\":false},\"termination_a_type\":\"dcim.interface\","
             "\"termination_a\":{\"device\":{\"name\":\"h1\"},\"name\":\"e5\"},"
             "\"termination_b_type\":\"dcim.interface\",\"termination_b\":{\"device\":"
             "{\"name\":\"sw\"},\"name\":\"p5\"}}]}");
    topo_facts *f = finish(nb);
    topo_netbox_stats st = topo_netbox_get_stats(nb);
    assert_int_equal(st.switches, 1); /* sw2's role is not in switch_roles: a host */
    assert_int_equal(st.hosts, 3);
    assert_int_equal(st.conflicts, 1); /* h1: datacenter "Site Four" and "s9" */
    assert_string_equal(level(f, "h1", TOPO_LEVEL_DATACENTER), "Site Four");
    assert_string_equal(level(f, "h1", TOPO_LEVEL_NVLINK), "12");
    assert_string_equal(level(f, "h2", TOPO_LEVEL_NVLINK), "Domain A");
    assert_true(has_host_link(f, "h1", "e0", "sw"));
    assert_true(has_host_link(f, "h2", "e0", "sw"));
    assert_true(has_host_link(f, "h2", "e2", "sw"));
    assert_true(has_host_link(f, "h2", "e3", "sw"));
    assert_int_equal(st.host_links, 4);
    assert_int_equal(st.ignored_links, 2); /* host-host, the unconnected cable */
    topo_facts_free(f);
    topo_netbox_free(nb);
}

static void expect_error(topo_netbox_kind kind, const char *text, int code, const char *message)
{
    topo_netbox_opts o = {.nvlink_field = "nvl"};
    topo_netbox *nb = make(&o);
    topo_err err = TOPO_ERR_INIT;
    char *next = (char *)"untouched";
    assert_int_equal(topo_netbox_add_page(&next, nb, kind, text, strlen(text), "t.json", &err),
                     code);
    assert_null(next);
    if (strstr(err.text, message) == NULL)
        fail_msg("for %s\nexpected \"%s\"\n     got \"%s\"", text, message, err.text);
    topo_netbox_free(nb);
}

static void test_netbox__errors_name_the_field(void **state)
{
    (void)state;
    const topo_netbox_kind D = TOPO_NETBOX_DEVICES;
    expect_error(D, "{\"results\":[{},{},{},{\"name\":\"a\",\"site\":{\"name\":5}}]}",
                 TOPO_EINVALID, "t.json: results[3].site.name: expected a string, got an integer");
    expect_error(D, "{\"results\":[{\"name\":\"a\",\"role\":\"server\"}]}", TOPO_EINVALID,
                 "results[0].role: expected an object, got a string");
    expect_error(D, "{\"results\":[{\"name\":\"a\",\"custom_fields\":{\"nvl\":[1]}}]}",
                 TOPO_EINVALID,
                 "results[0].custom_fields.nvl: expected a string, an integer or "
                 "a selection, got an array");
    expect_error(D, "{\"results\":[{\"name\":\"a\",\"site\":{\"id\":\"x\"}}]}", TOPO_EINVALID,
                 "results[0].site.id: expected an integer");
    expect_error(D, "{\"results\":{}}", TOPO_EINVALID, "results: expected an array, got an object");
    expect_error(D, "{\"results\":[],\"next\":3}", TOPO_EINVALID,
                 "next: expected a string, got an integer");
    expect_error(D, "[1]", TOPO_EINVALID, "expected a NetBox page (an object), got an array");
    expect_error(TOPO_NETBOX_RACKS, "{\"results\":[{\"id\":1}]}", TOPO_EINVALID,
                 "results[0].name: required");
    expect_error(TOPO_NETBOX_SITES, "{\"results\":[{\"name\":\"x\"}]}", TOPO_EINVALID,
                 "results[0].id: required");
    expect_error(TOPO_NETBOX_INTERFACES, "{\"results\":[{\"name\":\"e0\"}]}", TOPO_EINVALID,
                 "results[0].device: required");
    expect_error(TOPO_NETBOX_INTERFACES,
                 "{\"results\":[{\"device\":{\"name\":\"h\"},\"name\":\"e0\","
                 "\"connected_endpoints\":[{\"device\":{\"name\":\"s\"},\"name\":4}]}]}",
                 TOPO_EINVALID, "results[0].connected_endpoints[0].name: expected a string");
    expect_error(TOPO_NETBOX_CABLES,
                 "{\"results\":[{\"a_terminations\":[{\"object\":{}}],\"b_terminations\":[]}]}",
                 TOPO_EINVALID, "results[0].a_terminations[0].object_type: required");
    expect_error(TOPO_NETBOX_CABLES,
                 "{\"results\":[{\"a_terminations\":[{\"object_type\":\"dcim.interface\","
                 "\"object\":{\"device\":{\"name\":\"h\"}}}]}]}",
                 TOPO_EINVALID, "results[0].a_terminations[0].object.name: required");
    expect_error(D, "{\"results\":[\n{\"name\":}]}", TOPO_EINVALID, "t.json:2:");
    expect_error(D, "", TOPO_EINVALID, "t.json:");
    /* A page's results are read one at a time; its next is checked after
     * them, wherever it stands. */
    expect_error(D, "{\"results\":[{\"name\":\"a\"}],\"next\":3}", TOPO_EINVALID,
                 "t.json: next: expected a string, got an integer");

    /* A single object's "next" is no page link (fuzz_netbox found the
     * streamed page refusing what the tree reads). */
    topo_netbox *nb = make(NULL);
    topo_err err = TOPO_ERR_INIT;
    char *next = NULL;
    const char *one = "{\"id\":7,\"name\":\"gpu-9\",\"next\":true}";
    assert_int_equal(topo_netbox_add_page(&next, nb, D, one, strlen(one), "t.json", &err), 0);
    assert_null(next);
    topo_facts *f = NULL;
    assert_int_equal(topo_facts_create(&f, "netbox", &err), 0);
    assert_int_equal(topo_netbox_finish(nb, f, &err), 0);
    assert_int_equal(topo_facts_host_count(f), 1);
    assert_string_equal(topo_facts_host_name(f, 0), "gpu-9");
    topo_facts_free(f);
    topo_netbox_free(nb);
}

static void test_netbox__options_and_limits(void **state)
{
    (void)state;
    static const char *const empty[] = {""};
    topo_netbox *nb = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_netbox_opts o = {.tags = empty, .ntags = 1};
    assert_int_equal(topo_netbox_create(&nb, &o, &err), TOPO_EINVALID);
    assert_null(nb);
    topo_netbox_opts o2 = {.nvlink_field = ""};
    assert_int_equal(topo_netbox_create(&nb, &o2, &err), TOPO_EINVALID);
    nb = make(NULL);
    assert_int_equal(topo_netbox_add_page(NULL, nb, TOPO_NETBOX_DEVICES, "{}",
                                          TOPO_MAX_NETBOX_PAGE + 1u, "big", &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "big: NetBox page of"));
    assert_int_equal(topo_netbox_add_page(NULL, nb, (topo_netbox_kind)99, "{}", 2, NULL, &err),
                     TOPO_EINVALID);
    topo_netbox_free(nb);
    topo_netbox_free(NULL);
    assert_string_equal(topo_netbox_kind_path(TOPO_NETBOX_CABLES), "/api/dcim/cables/");
    assert_null(topo_netbox_kind_path((topo_netbox_kind)99));
}

/* A page over TOPO_MAX_NETBOX_PAGE read within a larger limit (a response's
 * maxResponseBytes), a result at a time, saying what it held for the
 * list's checks; one object read whole says so too. */
static void test_netbox__read_page_within_its_limit(void **state)
{
    (void)state;
    size_t len = 0;
    char *fixture = fixture_text("netbox/v4-devices-page1.json", &len);
    json_t *page = json_loads(fixture, 0, NULL);
    json_t *results = json_object_get(page, "results");
    free(fixture);
    assert_non_null(results);
    json_t *big = json_string_nocheck(""); /* 17 MiB of comments on one device */
    size_t pad = TOPO_MAX_NETBOX_PAGE + (1u << 20);
    char *comments = malloc(pad + 1);
    assert_non_null(comments);
    memset(comments, 'c', pad);
    comments[pad] = '\0';
    assert_int_equal(json_string_set(big, comments), 0);
    free(comments);
    json_object_set_new(json_array_get(results, 0), "comments", big);
    char *text = json_dumps(page, JSON_COMPACT);
    assert_non_null(text);
    len = strlen(text);
    assert_true(len > TOPO_MAX_NETBOX_PAGE);

    topo_netbox *nb = make(NULL);
    topo_err err = TOPO_ERR_INIT;
    topo_netbox_page read = {9, 9, 9};
    char *next = NULL;
    assert_int_equal(topo_netbox_add_page(NULL, nb, TOPO_NETBOX_DEVICES, text, len, "p", &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "p: NetBox page of"));
    if (topo_netbox_read_page(&next, &read, nb, TOPO_NETBOX_DEVICES, text, len,
                              2 * TOPO_MAX_NETBOX_PAGE, "p", &err) != 0)
        fail_msg("%s", err.text);
    assert_int_equal(read.is_list, 1);
    assert_int_equal(read.count, 10);
    assert_int_equal(read.results, 5);
    assert_string_equal(next, "https://netbox.example.com/api/dcim/devices/?limit=5&offset=5");
    free(next);
    /* Its limit is the one given: a byte less than the page is refused. */
    assert_int_equal(topo_netbox_read_page(NULL, &read, nb, TOPO_NETBOX_DEVICES, text, len,
                                           len - 1, "p", &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "exceeds the limit of"));
    free(text);
    json_decref(page);

    /* One object (no results), read whole; a count that is no integer. */
    const char *one = "{\"id\":7,\"name\":\"r1\"}";
    assert_int_equal(topo_netbox_read_page(NULL, &read, nb, TOPO_NETBOX_RACKS, one, strlen(one),
                                           TOPO_MAX_NETBOX_PAGE, "p", &err),
                     0);
    assert_int_equal(read.is_list, 0);
    assert_int_equal(read.count, -1);
    assert_int_equal(read.results, 1);
    const char *odd = "{\"count\":\"3\",\"results\":[{\"id\":8,\"name\":\"r2\"}]}";
    assert_int_equal(topo_netbox_read_page(NULL, &read, nb, TOPO_NETBOX_RACKS, odd, strlen(odd),
                                           TOPO_MAX_NETBOX_PAGE, "p", &err),
                     0);
    assert_true(read.is_list == 1 && read.count == -1 && read.results == 1);
    topo_netbox_free(nb);
}

/* Every prefix of a real page: an error with a position, never a crash. */
static void test_netbox__truncated(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = fixture_text("netbox/v4-cables.json", &len);
    for (size_t cut = 0; cut + 1 < len; cut += 13) {
        topo_netbox *nb = make(NULL);
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(
            topo_netbox_add_page(NULL, nb, TOPO_NETBOX_CABLES, text, cut, "cut.json", &err),
            TOPO_EINVALID);
        assert_true(err.line > 0 && err.column > 0);
        topo_netbox_free(nb);
    }
    free(text);
}

/* The stats line's wording, shared by the pages read from files and over
 * HTTP: each count in its place (distinct values), and a short buffer
 * truncated, still a string. */
static void test_netbox__stats_text(void **state)
{
    (void)state;
    topo_netbox_stats st = {.hosts = 1, .switches = 2, .other_devices = 3,
                            .filtered_devices = 4, .racks = 5, .sites = 6,
                            .host_links = 7, .switch_links = 8, .ignored_links = 9,
                            .conflicts = 10};
    char text[TOPO_NETBOX_STATS_TEXT_MAX], small[12];
    assert_ptr_equal(topo_netbox_stats_text(text, sizeof text, &st), text);
    assert_string_equal(text, "1 hosts, 2 switches, 5 racks, 6 sites, 7 host links, 8 switch "
                              "links; 3 other and 4 filtered devices, 9 ignored links, 10 "
                              "conflicts");
    topo_netbox_stats_text(small, sizeof small, &st);
    assert_string_equal(small, "1 hosts, 2 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_netbox__stats_text),
        cmocka_unit_test(test_netbox__v4_pod),
        cmocka_unit_test(test_netbox__v4_defaults_and_filters),
        cmocka_unit_test(test_netbox__pynetbox),
        cmocka_unit_test(test_netbox__v3_shapes_and_conflicts),
        cmocka_unit_test(test_netbox__errors_name_the_field),
        cmocka_unit_test(test_netbox__options_and_limits),
        cmocka_unit_test(test_netbox__truncated),
        cmocka_unit_test(test_netbox__read_page_within_its_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
