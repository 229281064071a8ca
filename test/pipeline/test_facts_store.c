/* topo-sync's last good facts in the cache (topo/sync_facts.h): real
 * fixtures saved and loaded back equal; a source outage with a restart in
 * the middle loads the facts of the last good fetch; stored documents that
 * do not decode are refused with the field named and left as they are.
 * The sizes of a 10,000-node cluster: test_facts_volume.c. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/source_fixture.h"
#include "pipeline/cache_fixture.h"
#include "topo/cache_facts.h"
#include "topo/facts_json.h"
#include "topo/ibnetdiscover.h"
#include "topo/sync_facts.h"

static topo_facts *ibnetdiscover(const char *name)
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

static topo_facts *load(fx *f, const char *source, int64_t *at)
{
    topo_facts *got = NULL;
    topo_err err = TOPO_ERR_INIT;
    must(topo_sync_facts_load(&got, at, f->cache, source, &err), &err);
    return got;
}

static void test_facts_store__round_trip(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *dump = ibnetdiscover("topograph-example.out"), *got;
    int changed = -1;
    int64_t at = 0;

    open_cache(f);
    must(topo_sync_facts_save(f->cache, dump, 1700000000000, &changed, &err), &err);
    assert_int_equal(changed, 1);
    got = load(f, "ibnetdiscover", &at);
    assert_facts_equal(dump, got);
    assert_int_equal(at, 1700000000000);
    topo_facts_free(got);
    /* The same facts read again from the dump are no change. */
    topo_facts *again = ibnetdiscover("topograph-example.out");
    must(topo_sync_facts_save(f->cache, again, 1700000060000, &changed, &err), &err);
    assert_int_equal(changed, 0);
    /* Another dump is. */
    topo_facts *other = ibnetdiscover("mellanox-small_topo_file.txt");
    must(topo_sync_facts_save(f->cache, other, 1700000120000, &changed, &err), &err);
    assert_int_equal(changed, 1);
    got = load(f, "ibnetdiscover", NULL);
    assert_facts_equal(other, got);
    topo_facts_free(got);
    topo_facts_free(other);
    topo_facts_free(again);
    topo_facts_free(dump);

    assert_int_equal(topo_sync_facts_load(&got, NULL, f->cache, "ufm", &err), TOPO_ENOTFOUND);
    assert_null(got);
    assert_int_equal(topo_sync_facts_save(NULL, NULL, 0, NULL, &err), TOPO_EINVALID);
}

typedef struct one_status {
    topo_cache_facts_status s;
    int seen;
} one_status;

static int keep_ufm(const topo_cache_facts_status *s, void *payload)
{
    one_status *o = payload;
    if (strcmp(s->source, "ufm") == 0) {
        o->s = *s;
        o->s.source = o->s.hash = o->s.error = NULL; /* borrowed */
        o->seen = 1;
    }
    return 0;
}

/* A source fails for several rounds, and the process restarts in the
 * middle: the facts of the last good fetch are what it plans from, and the
 * listing says how old they are and that the source is failing. */
static void test_facts_store__outage_and_restart(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *good = ibnetdiscover("mellanox-small_topo_file.txt"), *got;
    topo_facts *ufm = new_facts("ufm");
    one_status o = {0};
    int64_t at = 0;

    /* Facts of the right name: the small dump's, relabelled as UFM's. */
    for (size_t i = 0; i < topo_facts_link_count(good); i++) {
        topo_facts_link l = topo_facts_link_at(good, i);
        int rc = l.is_host_link
                     ? topo_facts_add_host_link(ufm, l.host == TOPO_FACTS_NO_HOST
                                                         ? NULL
                                                         : topo_facts_host_name(good, l.host),
                                                l.port, topo_facts_switch_id(good, l.sw), &err)
                     : topo_facts_add_switch_link(ufm, topo_facts_switch_id(good, l.sw),
                                                  topo_facts_switch_id(good, l.other), &err);
        must(rc, &err);
    }
    open_cache(f);
    must(topo_sync_facts_save(f->cache, ufm, 1000, NULL, &err), &err);
    must(topo_cache_facts_fail(f->cache, "ufm", "GET /ufmRest/resources/systems: 503", 61000,
                               &err), &err);
    must(topo_cache_facts_fail(f->cache, "ufm", "timed out after 30000 ms", 121000, &err), &err);
    open_cache(f); /* the restart */
    must(topo_cache_facts_fail(f->cache, "ufm", "connect: connection refused", 181000, &err),
         &err);
    got = load(f, "ufm", &at);
    assert_facts_equal(ufm, got);
    assert_int_equal(at, 1000);
    must(topo_cache_facts_list(f->cache, 241000, keep_ufm, &o, &err), &err);
    assert_true(o.seen);
    assert_int_equal(o.s.age_ms, 240000);
    assert_int_equal(o.s.failures, 3);
    assert_int_equal(o.s.error_at_ms, 181000);
    topo_facts_free(got);
    topo_facts_free(ufm);
    topo_facts_free(good);
}

/* A stored document that does not decode is refused with its field named,
 * and left in the store as it was. */
static void test_facts_store__bad_documents(void **state)
{
    fx *f = *state;
    static const struct {
        const char *doc;
        int code;
        const char *message;
    } bad[] = {
        {"not json", TOPO_EINVALID, "cache: facts of ufm:1:"},
        {"{\"cables\":[],\"hosts\":[{\"name\":7}],\"source\":\"ufm\",\"switches\":[],"
         "\"version\":1}",
         TOPO_EINVALID, "cache: facts of ufm: hosts[0].name: expected a string, got an integer"},
        {"{\"cables\":[[3,null,null]],\"hosts\":[],\"source\":\"ufm\",\"switches\":[],"
         "\"version\":1}",
         TOPO_EINVALID, "cache: facts of ufm: cables[0][0]: 3 is not an index of switches"},
        {"{\"cables\":[],\"hosts\":[],\"source\":\"netbox\",\"switches\":[],\"version\":1}",
         TOPO_EINVALID, "cache: facts of ufm: source: the document is of \"netbox\""},
        {"{\"version\":2,\"facts\":{}}", TOPO_EUNSUPPORTED,
         "cache: facts of ufm: version: 2 is newer than this build reads (1)"},
    };
    topo_pool *pool = topo_pool_create();
    open_cache(f);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        topo_facts *got = NULL;
        topo_cache_facts row;
        must(topo_cache_facts_put(f->cache, "ufm", bad[i].doc, strlen(bad[i].doc), 5, NULL,
                                  &err), &err);
        int rc = topo_sync_facts_load(&got, NULL, f->cache, "ufm", &err);
        if (rc != bad[i].code || strstr(err.text, bad[i].message) == NULL)
            fail_msg("case %zu: got %s: %s; want %s: %s", i, topo_err_name(rc), err.text,
                     topo_err_name(bad[i].code), bad[i].message);
        assert_null(got);
        must(topo_cache_facts_get(&row, f->cache, "ufm", pool, &err), &err);
        assert_string_equal(row.document, bad[i].doc);
    }
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_facts_store__round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_facts_store__outage_and_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_facts_store__bad_documents, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
