/* One source's facts: hosts and their stated levels (a contradiction is a
 * conflict, never overwritten), switches, cables deduplicated from either
 * end, levels that only the switch graph may give refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/facts.h"

static topo_facts *make(void)
{
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_facts_create(&f, "netbox", &err), 0);
    return f;
}

static void test_facts__levels_by_name(void **state)
{
    (void)state;
    topo_level l = TOPO_LEVEL_COUNT;
    assert_string_equal(topo_level_name(TOPO_LEVEL_DATACENTER), "datacenter");
    assert_string_equal(topo_level_name(TOPO_LEVEL_NVLINK), "nvlink");
    assert_null(topo_level_name(TOPO_LEVEL_COUNT));
    assert_int_equal(topo_level_parse(&l, "rack"), 0);
    assert_int_equal(l, TOPO_LEVEL_RACK);
    assert_int_equal(topo_level_parse(&l, "block"), TOPO_ENOTFOUND);
    assert_int_equal(topo_level_parse(&l, NULL), TOPO_ENOTFOUND);
}

static void test_facts__hosts_and_levels(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = make();
    size_t a = 99, b = 99, again = 99;
    assert_int_equal(topo_facts_add_host(f, "gpu-1", &a, &err), 0);
    assert_int_equal(topo_facts_add_host(f, "gpu-2", &b, &err), 0);
    assert_int_equal(topo_facts_add_host(f, "gpu-1", &again, &err), 0);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    assert_int_equal(again, 0);
    assert_int_equal(topo_facts_host_count(f), 2);

    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_RACK, "r1", &err), 0);
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_RACK, "r1", &err), 0);
    /* A host named only by a level is added. */
    assert_int_equal(topo_facts_set_level(f, "gpu-3", TOPO_LEVEL_DATACENTER, "dc1", &err), 0);
    assert_int_equal(topo_facts_host_count(f), 3);
    assert_string_equal(topo_facts_host_level(f, a, TOPO_LEVEL_RACK), "r1");
    assert_null(topo_facts_host_level(f, b, TOPO_LEVEL_RACK));

    /* A contradiction is reported with both values; the first stays. */
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_RACK, "r2", &err), TOPO_ECONFLICT);
    assert_non_null(strstr(err.text, "netbox: host gpu-1: rack is both \"r1\" and \"r2\""));
    assert_string_equal(topo_facts_host_level(f, a, TOPO_LEVEL_RACK), "r1");

    /* Spine and leaf come from the switch graph, hostname from the node. */
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_LEAF, "l1", &err), TOPO_EINVALID);
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_HOSTNAME, "x", &err),
                     TOPO_EINVALID);
    assert_int_equal(topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_RACK, "", &err), TOPO_EINVALID);
    assert_int_equal(topo_facts_add_host(f, "", NULL, &err), TOPO_EINVALID);

    size_t found = 0;
    assert_int_equal(topo_facts_find_host(f, "gpu-2", &found), 0);
    assert_int_equal(found, 1);
    assert_int_equal(topo_facts_find_host(f, "gpu-9", &found), TOPO_ENOTFOUND);
    topo_facts_free(f);
}

static void test_facts__switches_and_cables(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = make();
    size_t leaf = 0, spine = 0;
    assert_int_equal(topo_facts_add_switch(f, "S-01", "leaf-01", &leaf, &err), 0);
    assert_int_equal(topo_facts_add_switch(f, "S-02", NULL, &spine, &err), 0);
    /* The first name stays; a switch without one is named by its id. */
    assert_int_equal(topo_facts_add_switch(f, "S-01", "other", NULL, &err), 0);
    assert_string_equal(topo_facts_switch_name(f, leaf), "leaf-01");
    assert_string_equal(topo_facts_switch_name(f, spine), "S-02");

    /* The same cable from both ends, a loopback, and a host cable twice. */
    assert_int_equal(topo_facts_add_switch_link(f, "S-01", "S-02", &err), 0);
    assert_int_equal(topo_facts_add_switch_link(f, "S-02", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_switch_link(f, "S-02", "S-02", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "HCA-1", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "HCA-1", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "HCA-2", "S-01", &err), 0);
    /* An adapter without a host, on a switch seen first here. */
    assert_int_equal(topo_facts_add_host_link(f, NULL, NULL, "S-03", &err), 0);
    assert_int_equal(topo_facts_link_count(f), 4);
    assert_int_equal(topo_facts_switch_count(f), 3);

    topo_facts_link l = topo_facts_link_at(f, 0);
    assert_false(l.is_host_link);
    assert_int_equal(l.sw, leaf);
    assert_int_equal(l.other, spine);
    l = topo_facts_link_at(f, 2);
    assert_true(l.is_host_link);
    assert_string_equal(topo_facts_host_name(f, l.host), "gpu-1");
    assert_string_equal(l.port, "HCA-2");
    l = topo_facts_link_at(f, 3);
    assert_true(l.is_host_link);
    assert_int_equal(l.host, TOPO_FACTS_NO_HOST);
    assert_null(l.port);
    assert_string_equal(topo_facts_switch_id(f, l.sw), "S-03");

    assert_int_equal(topo_facts_add_switch(f, "", NULL, NULL, &err), TOPO_EINVALID);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", NULL, NULL, &err), TOPO_EINVALID);
    size_t found = 0;
    assert_int_equal(topo_facts_find_switch(f, "S-03", &found), 0);
    assert_int_equal(found, 2);
    assert_int_equal(topo_facts_find_switch(f, "S-04", &found), TOPO_ENOTFOUND);
    topo_facts_free(f);
}

/* Shrunk facts read the same, and a cable added afterwards is still
 * deduplicated against the earlier ones (the index is rebuilt), the port
 * names shared. */
static void test_facts__shrink(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = make();
    assert_int_equal(topo_facts_add_switch_link(f, "S-01", "S-02", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "mlx5_0", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, NULL, "mlx5_0", "S-01", &err), 0);
    topo_facts_shrink(f);
    topo_facts_shrink(f);
    topo_facts_shrink(NULL);
    assert_int_equal(topo_facts_link_count(f), 3);
    assert_string_equal(topo_facts_link_at(f, 1).port, "mlx5_0");

    assert_int_equal(topo_facts_add_switch_link(f, "S-02", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "mlx5_0", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_host_link(f, NULL, "mlx5_0", "S-01", &err), 0);
    assert_int_equal(topo_facts_link_count(f), 3);
    /* The same port on another switch is another cable. */
    assert_int_equal(topo_facts_add_host_link(f, "gpu-1", "mlx5_0", "S-02", &err), 0);
    assert_int_equal(topo_facts_link_count(f), 4);
    topo_facts_link l = topo_facts_link_at(f, 3);
    assert_ptr_equal(l.port, topo_facts_link_at(f, 1).port);
    assert_string_equal(topo_facts_switch_id(f, l.sw), "S-02");
    topo_facts_free(f);
}

static void test_facts__source_named(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = NULL;
    assert_int_equal(topo_facts_create(&f, "", &err), TOPO_EINVALID);
    assert_null(f);
    f = make();
    assert_string_equal(topo_facts_source(f), "netbox");
    topo_facts_free(f);
    topo_facts_free(NULL);
}

/* One host's part copied from a source's last good facts: the host, its
 * level values, its cables with their switches and the switches' names;
 * nothing of the other hosts, nothing for a host it does not hold. */
static void test_facts__copy_host(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *from = make(), *into = make();
    size_t h = 0, sw = 0;
    int found = -1;
    assert_int_equal(topo_facts_set_level(from, "gpu-1", TOPO_LEVEL_RACK, "r1", &err), 0);
    assert_int_equal(topo_facts_add_switch(from, "S-01", "leaf one", NULL, &err), 0);
    assert_int_equal(topo_facts_add_host_link(from, "gpu-1", "eth0", "S-01", &err), 0);
    assert_int_equal(topo_facts_add_host_link(from, "gpu-1", "eth1", "S-02", &err), 0);
    assert_int_equal(topo_facts_add_host_link(from, "gpu-2", "eth0", "S-03", &err), 0);
    assert_int_equal(topo_facts_add_switch_link(from, "S-01", "S-09", &err), 0);

    assert_int_equal(topo_facts_copy_host(&found, into, from, "gpu-1", &err), 0);
    assert_int_equal(found, 1);
    assert_int_equal(topo_facts_host_count(into), 1);
    assert_int_equal(topo_facts_find_host(into, "gpu-1", &h), 0);
    assert_string_equal(topo_facts_host_level(into, h, TOPO_LEVEL_RACK), "r1");
    assert_int_equal(topo_facts_switch_count(into), 2);
    assert_int_equal(topo_facts_find_switch(into, "S-01", &sw), 0);
    assert_string_equal(topo_facts_switch_name(into, sw), "leaf one");
    assert_int_equal(topo_facts_link_count(into), 2);
    topo_facts_link l = topo_facts_link_at(into, 1);
    assert_true(l.is_host_link);
    assert_int_equal(l.host, h);
    assert_string_equal(l.port, "eth1");
    assert_string_equal(topo_facts_switch_id(into, l.sw), "S-02");

    assert_int_equal(topo_facts_copy_host(&found, into, from, "gpu-9", &err), 0);
    assert_int_equal(found, 0);
    assert_int_equal(topo_facts_copy_host(&found, into, NULL, "gpu-2", &err), 0);
    assert_int_equal(found, 0);
    assert_int_equal(topo_facts_host_count(into), 1);
    /* a value into already states otherwise is a conflict, as any add's */
    assert_int_equal(topo_facts_set_level(into, "gpu-2", TOPO_LEVEL_RACK, "r7", &err), 0);
    assert_int_equal(topo_facts_set_level(from, "gpu-2", TOPO_LEVEL_RACK, "r2", &err), 0);
    assert_int_equal(topo_facts_copy_host(&found, into, from, "gpu-2", &err), TOPO_ECONFLICT);
    topo_facts_free(from);
    topo_facts_free(into);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts__levels_by_name),
        cmocka_unit_test(test_facts__hosts_and_levels),
        cmocka_unit_test(test_facts__switches_and_cables),
        cmocka_unit_test(test_facts__shrink),
        cmocka_unit_test(test_facts__source_named),
        cmocka_unit_test(test_facts__copy_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
