/* topo-sync's sources' table (topo/sync_source.h, lib/sync/fetch/
 * fetch_sources.c): each source's name, fabric and live flags as the
 * pipeline and the controller's refresher ask them, which settings make a
 * source configured and which make it read, and the transport one entry
 * takes: its files (NetBox pages from files keep their `next` links
 * unfollowed, with a debug line) or HTTP when a url is given. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/fetch.h"
#include "topo/log.h"
#include "topo/sync_source.h"

static void test_sync_source__names_and_fabric(void **state)
{
    (void)state;
    static const struct {
        topo_sync_source src;
        const char *name;
        int fabric;
    } want[] = {
        {TOPO_SYNC_GPU, "gpu", 0},
        {TOPO_SYNC_UFM, "ufm", 1},
        {TOPO_SYNC_IBNETDISCOVER, "ibnetdiscover", 1},
        {TOPO_SYNC_LLDP, "lldp", 1},
        {TOPO_SYNC_NETBOX, "netbox", 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_string_equal(topo_sync_source_name(want[i].src), want[i].name);
        assert_int_equal(topo_sync_source_fabric(want[i].src), want[i].fabric);
    }
    assert_null(topo_sync_source_name(TOPO_SYNC_SOURCE_COUNT));
    assert_int_equal(topo_sync_source_fabric(TOPO_SYNC_SOURCE_COUNT), 0);
    /* One entry: the HTTP kinds are the same sources, under the same names. */
    assert_string_equal(topo_fetch_kind_name(TOPO_FETCH_UFM), "ufm");
    assert_string_equal(topo_fetch_kind_name(TOPO_FETCH_LLDP), "lldp");
    assert_string_equal(topo_fetch_kind_name(TOPO_FETCH_NETBOX), "netbox");
    assert_null(topo_fetch_kind_name((topo_fetch_kind)3));
}

/* The GPU source's live Node objects configure it but are not read:
 * the controller hands them over itself. */
static void test_sync_source__configured_and_readable(void **state)
{
    (void)state;
    topo_sync_settings s = {0};
    topo_err err = TOPO_ERR_INIT;
    for (int i = 0; i < TOPO_SYNC_SOURCE_COUNT; i++) {
        assert_false(topo_sync_source_configured(&s, (topo_sync_source)i));
        assert_false(topo_sync_source_readable(&s, (topo_sync_source)i));
    }
    s.nodes_live = 1;
    assert_true(topo_sync_source_configured(&s, TOPO_SYNC_GPU));
    assert_false(topo_sync_source_readable(&s, TOPO_SYNC_GPU));
    assert_false(topo_sync_source_configured(&s, TOPO_SYNC_UFM)); /* live is the GPU's alone */
    assert_int_equal(topo_sync_source_read(NULL, &s, TOPO_SYNC_GPU, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "not configured to be read"));
    s.nodes_file = "nodes.json";
    assert_true(topo_sync_source_readable(&s, TOPO_SYNC_GPU));

    /* A url configures an HTTP source; ibnetdiscover has files only. */
    s.ufm_http.url = "https://ufm.example.com";
    s.lldp_dir = "lldp";
    assert_true(topo_sync_source_readable(&s, TOPO_SYNC_UFM));
    assert_true(topo_sync_source_readable(&s, TOPO_SYNC_LLDP));
    assert_false(topo_sync_source_readable(&s, TOPO_SYNC_NETBOX));
    assert_false(topo_sync_source_readable(&s, TOPO_SYNC_IBNETDISCOVER));
    assert_false(topo_sync_source_configured(&s, TOPO_SYNC_SOURCE_COUNT));
}

/* A url wins over the files: the read goes to the server (here none,
 * refused at once), not to the directory that does not exist. */
static void test_sync_source__url_takes_http(void **state)
{
    (void)state;
    topo_sync_settings s = {0};
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    s.lldp_dir = "/nonexistent/lldp";
    assert_int_equal(topo_facts_create(&f, "lldp", NULL), 0);
    assert_int_equal(topo_sync_source_read(f, &s, TOPO_SYNC_LLDP, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "cannot open the directory"));
    s.lldp_http = (topo_fetch_opts){.url = "http://127.0.0.1:1/lldp", .retries = -1};
    err = (topo_err)TOPO_ERR_INIT;
    assert_int_equal(topo_sync_source_read(f, &s, TOPO_SYNC_LLDP, &err), TOPO_ECONNECT);
    assert_non_null(strstr(err.text, "lldp"));
    assert_null(strstr(err.text, "directory"));
    topo_facts_free(f);
}

typedef struct captured {
    char text[4096];
} captured;

static void capture(const topo_log_event *e, void *payload)
{
    captured *c = payload;
    size_t n = strlen(c->text);
    snprintf(c->text + n, sizeof c->text - n, "%s\n", e->msg);
}

/* NetBox pages from files: a page's `next` link is not followed (offline),
 * and a debug line says so; the page's devices are read. */
static void test_sync_source__netbox_files_keep_next(void **state)
{
    (void)state;
    char path[4096];
    const char *root = getenv("TOPO_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/fixtures/sources/netbox/v4-devices-page1.json",
             root ? root : ".");
    const char *devices[] = {path};
    topo_sync_settings s = {0};
    s.netbox_files.files[TOPO_NETBOX_DEVICES] = devices;
    s.netbox_files.nfiles[TOPO_NETBOX_DEVICES] = 1;
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    captured log = {{0}};
    topo_log_level old = topo_log_get_level();
    topo_log_set_level(TOPO_LOG_DEBUG);
    topo_log_set_sink(capture, &log);
    assert_int_equal(topo_facts_create(&f, "netbox", NULL), 0);
    int rc = topo_sync_source_read(f, &s, TOPO_SYNC_NETBOX, &err);
    topo_log_set_sink(NULL, NULL);
    topo_log_set_level(old);
    if (rc != 0)
        fail_msg("%s (set TOPO_SOURCE_DIR)", err.text);
    assert_non_null(strstr(log.text, "has a next page; offline, give it as a file"));
    assert_non_null(strstr(log.text, "source netbox: "));
    assert_null(strstr(log.text, "fetched")); /* the HTTP transport's line */
    assert_true(topo_facts_host_count(f) > 0);
    topo_facts_free(f);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The leaf switch of a host in facts: the one switch its cables reach. */
static const char *switch_of(const topo_facts *f, const char *host)
{
    size_t h = 0;
    if (topo_facts_find_host(f, host, &h) != 0)
        return NULL;
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (l.is_host_link && l.host == h)
            return topo_facts_switch_id(f, l.sw);
    }
    return NULL;
}

#define LLDP_DOC(sw)                                                                      \
    "{\"lldp\":{\"interface\":{\"eth0\":{\"chassis\":{\"" sw "\":{\"id\":{\"type\":\"mac\"," \
    "\"value\":\"00:11:22:33:44:55\"}}},\"port\":{\"id\":{\"type\":\"ifname\","          \
    "\"value\":\"Ethernet1\"}}}}}}"

/* An LLDP directory where one host's file cannot be read (a FIFO nobody
 * writes, which a plain open would wait on for ever; a directory): the
 * files are skipped and counted, their hosts keep what the last good facts
 * held, the other hosts are read as they are now. */
static void test_sync_source__lldp_keeps_unreadable_hosts(void **state)
{
    (void)state;
    char dir[] = "/tmp/topo-lldp-XXXXXX", path[256];
    topo_err err = TOPO_ERR_INIT;
    topo_sync_settings s = {0};
    topo_sync_skipped skipped = {9, 9, 9};
    topo_facts *last = NULL, *now = NULL;
    assert_non_null(mkdtemp(dir));
    s.lldp_dir = dir;
    snprintf(path, sizeof path, "%s/node-a.json", dir);
    write_text(path, LLDP_DOC("leaf-1"));
    snprintf(path, sizeof path, "%s/node-b.json", dir);
    write_text(path, LLDP_DOC("leaf-1"));
    assert_int_equal(topo_facts_create(&last, "lldp", &err), 0);
    assert_int_equal(
        topo_sync_source_read_keeping(last, &s, TOPO_SYNC_LLDP, NULL, &skipped, &err), 0);
    assert_int_equal(skipped.unreadable + skipped.too_large, 0);
    assert_string_equal(switch_of(last, "node-b"), "leaf-1");

    /* node-a moves to leaf-2; node-b's file becomes a FIFO, node-c's a directory */
    snprintf(path, sizeof path, "%s/node-a.json", dir);
    write_text(path, LLDP_DOC("leaf-2"));
    snprintf(path, sizeof path, "%s/node-b.json", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/node-c.json", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(topo_facts_create(&now, "lldp", &err), 0);
    assert_int_equal(
        topo_sync_source_read_keeping(now, &s, TOPO_SYNC_LLDP, last, &skipped, &err), 0);
    assert_int_equal(skipped.unreadable, 2);
    assert_int_equal(skipped.too_large, 0);
    assert_string_equal(switch_of(now, "node-a"), "leaf-2");
    assert_string_equal(switch_of(now, "node-b"), "leaf-1"); /* kept */
    assert_null(switch_of(now, "node-c"));                   /* nothing to keep */
    assert_int_equal(topo_facts_host_count(now), 2);
    topo_facts_free(now);

    /* without last good facts (--once): skipped all the same, no host */
    assert_int_equal(topo_facts_create(&now, "lldp", &err), 0);
    assert_int_equal(topo_sync_source_read(now, &s, TOPO_SYNC_LLDP, &err), 0);
    assert_null(switch_of(now, "node-b"));
    assert_string_equal(switch_of(now, "node-a"), "leaf-2");
    topo_facts_free(now);
    topo_facts_free(last);
    assert_int_equal(rmdir(path), 0);
    snprintf(path, sizeof path, "%s/node-b.json", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/node-a.json", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* An LLDP directory where one host's file holds a document that cannot be
 * read (empty, cut mid-write, over its parse budget though under 1 MiB):
 * that host is skipped and counted as invalid, keeping its last good
 * facts, and the other hosts are read; only when every host's file is
 * refused does the source fail, with the first one's error. */
static void test_sync_source__lldp_skips_invalid_hosts(void **state)
{
    (void)state;
    char dir[] = "/tmp/topo-lldp-XXXXXX", path[256];
    const char *doc = LLDP_DOC("leaf-1");
    topo_err err = TOPO_ERR_INIT;
    topo_sync_settings s = {0};
    topo_sync_skipped skipped = {9, 9, 9};
    topo_facts *last = NULL, *now = NULL;
    assert_non_null(mkdtemp(dir));
    s.lldp_dir = dir;
    const char *hosts[] = {"node-a", "node-b", "node-c", "node-d"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s.json", dir, hosts[i]);
        write_text(path, doc);
    }
    assert_int_equal(topo_facts_create(&last, "lldp", &err), 0);
    assert_int_equal(
        topo_sync_source_read_keeping(last, &s, TOPO_SYNC_LLDP, NULL, &skipped, &err), 0);
    assert_int_equal(skipped.invalid, 0);

    /* node-a moves to leaf-2; node-b's file is empty, node-c's cut in the
     * middle, node-d's 600 KB of empty objects (past its parse budget) */
    snprintf(path, sizeof path, "%s/node-a.json", dir);
    write_text(path, LLDP_DOC("leaf-2"));
    snprintf(path, sizeof path, "%s/node-b.json", dir);
    write_text(path, "");
    char cut[64];
    snprintf(cut, sizeof cut, "%.40s", doc);
    snprintf(path, sizeof path, "%s/node-c.json", dir);
    write_text(path, cut);
    size_t n = 200000;
    char *big = malloc(3 * n + 16);
    assert_non_null(big);
    strcpy(big, "{\"lldp\":[");
    size_t at = strlen(big);
    for (size_t i = 0; i < n; i++, at += 3)
        memcpy(big + at, i + 1 < n ? "{}," : "{} ", 3);
    strcpy(big + at, "]}");
    snprintf(path, sizeof path, "%s/node-d.json", dir);
    write_text(path, big);
    free(big);
    assert_int_equal(topo_facts_create(&now, "lldp", &err), 0);
    assert_int_equal(
        topo_sync_source_read_keeping(now, &s, TOPO_SYNC_LLDP, last, &skipped, &err), 0);
    assert_int_equal(skipped.invalid, 3);
    assert_int_equal(skipped.unreadable + skipped.too_large, 0);
    assert_string_equal(switch_of(now, "node-a"), "leaf-2");
    for (size_t i = 1; i < 4; i++)
        assert_string_equal(switch_of(now, hosts[i]), "leaf-1"); /* kept */
    topo_facts_free(now);

    /* --once: nothing to keep, node-a read all the same */
    assert_int_equal(topo_facts_create(&now, "lldp", &err), 0);
    assert_int_equal(topo_sync_source_read(now, &s, TOPO_SYNC_LLDP, &err), 0);
    assert_string_equal(switch_of(now, "node-a"), "leaf-2");
    assert_null(switch_of(now, "node-b"));
    assert_int_equal(topo_facts_host_count(now), 1);
    topo_facts_free(now);

    /* node-a's file cut too: no host read, the source fails naming the first */
    snprintf(path, sizeof path, "%s/node-a.json", dir);
    write_text(path, cut);
    assert_int_equal(topo_facts_create(&now, "lldp", &err), 0);
    assert_int_equal(topo_sync_source_read(now, &s, TOPO_SYNC_LLDP, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "node-a.json"));
    topo_facts_free(now);
    topo_facts_free(last);
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s.json", dir, hosts[i]);
        assert_int_equal(unlink(path), 0);
    }
    assert_int_equal(rmdir(dir), 0);
}

/* Two ibnetdiscover dumps, one source: a Ca of one whose GUID is a switch
 * of the other is disputed as it is within one dump (no cable, one conflict
 * line naming both; the switch keeps it), whichever dump comes first. */
static void test_sync_source__ibnetdiscover_dup_across_dumps(void **state)
{
    (void)state;
    char dir[] = "/tmp/topo-ibd-XXXXXX", a[256], b[256];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    write_text(a, "Switch\t36 \"S-aa00000000000001\"\t\t# \"LEAF-A\" enhanced port 0 lid 14 lmc 0\n"
                  "[1]\t\"H-aa00000000000101\"[1](aa00000000000101) \t\t# \"h1 mlx5_0\" lid 10 "
                  "4xNDR\n\n"
                  "Ca\t1 \"H-aa00000000000101\"\t\t# \"h1 mlx5_0\"\n"
                  "[1](aa00000000000101) \t\"S-aa00000000000001\"[1]\t\t# lid 10 lmc 0 "
                  "\"LEAF-A\" lid 14 4xNDR\n");
    write_text(b, "Switch\t36 \"S-bb00000000000001\"\t\t# \"LEAF-B\" enhanced port 0 lid 3 lmc 0\n"
                  "[5]\t\"H-aa00000000000001\"[1](aa00000000000001) \t\t# \"h9 mlx5_0\" lid 14 "
                  "4xNDR\n"
                  "[6]\t\"H-bb00000000000106\"[1](bb00000000000106) \t\t# \"h6 mlx5_0\" lid 16 "
                  "4xNDR\n\n"
                  "Ca\t1 \"H-aa00000000000001\"\t\t# \"h9 mlx5_0\"\n"
                  "[1](aa00000000000001) \t\"S-bb00000000000001\"[5]\t\t# lid 14 lmc 0 "
                  "\"LEAF-B\" lid 3 4xNDR\n\n"
                  "Ca\t1 \"H-bb00000000000106\"\t\t# \"h6 mlx5_0\"\n"
                  "[1](bb00000000000106) \t\"S-bb00000000000001\"[6]\t\t# lid 16 lmc 0 "
                  "\"LEAF-B\" lid 3 4xNDR\n");
    for (int order = 0; order < 2; order++) {
        topo_sync_ibnetdiscover dumps[2] = {{.file = order ? b : a}, {.file = order ? a : b}};
        topo_sync_settings s = {.ibnetdiscover = dumps, .nibnetdiscover = 2};
        topo_err err = TOPO_ERR_INIT;
        topo_facts *f = NULL;
        assert_int_equal(topo_facts_create(&f, "ibnetdiscover", &err), 0);
        assert_int_equal(topo_sync_source_read(f, &s, TOPO_SYNC_IBNETDISCOVER, &err), 0);
        assert_int_equal(topo_facts_conflict_count(f), 1);
        const char *c = topo_facts_conflict(f, 0);
        assert_non_null(strstr(c, "duplicate GUID aa00000000000001: switch \"LEAF-A\""));
        assert_non_null(strstr(c, "host record \"h9 mlx5_0\""));
        assert_null(switch_of(f, "h9"));           /* no cable from a disputed record */
        size_t h9 = 0;
        assert_int_equal(topo_facts_find_host(f, "h9", &h9), 0); /* still named */
        assert_string_equal(switch_of(f, "h1"), "aa00000000000001");
        assert_string_equal(switch_of(f, "h6"), "bb00000000000001");
        topo_facts_free(f);
    }
    assert_int_equal(unlink(a), 0);
    assert_int_equal(unlink(b), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_source__names_and_fabric),
        cmocka_unit_test(test_sync_source__configured_and_readable),
        cmocka_unit_test(test_sync_source__url_takes_http),
        cmocka_unit_test(test_sync_source__netbox_files_keep_next),
        cmocka_unit_test(test_sync_source__lldp_keeps_unreadable_hosts),
        cmocka_unit_test(test_sync_source__lldp_skips_invalid_hosts),
        cmocka_unit_test(test_sync_source__ibnetdiscover_dup_across_dumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
