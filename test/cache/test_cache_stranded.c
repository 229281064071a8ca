#define _POSIX_C_SOURCE 200809L
/* Tests for topo_cache_foreach_stranded (lib/cache/cache_stranded.c): the
 * pods topo-webhook pinned to a slot's node that kube-scheduler has not
 * bound yet, read from the index of the unbound pods only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "../../lib/cache/cache_internal.h"
#include "support/dbfiles.h"
#include "topo/cache.h"

#define RACK "topology.topo.io/rack"
#define HOST "kubernetes.io/hostname"

typedef struct fx {
    topo_test_cachedir tmp;
    topo_cache *cache;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    topo_err err = TOPO_ERR_INIT;
    if (f == NULL)
        return -1;
    if (topo_test_cachedir_make(&f->tmp, "stranded-test") < 0) {
        free(f);
        return -1;
    }
    if (topo_cache_open(&f->cache, f->tmp.path, NULL, &err) < 0) {
        print_error("open: %s\n", err.text);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_cache_close(f->cache);
    topo_test_cachedir_remove(&f->tmp);
    free(f);
    return 0;
}

static void must(int rc, const topo_err *err)
{
    if (rc != 0)
        fail_msg("%s", err->text);
}

/* Reservation id of PodSet key over two racks' hosts (one pod each), its
 * slots claimed by claimants[i] (NULL: free). */
static void reserve(fx *f, const char *id, const char *key, const char *const *hosts, size_t n,
                    const char *const *claimants)
{
    topo_err err = TOPO_ERR_INIT;
    static const char *const levels[] = {RACK, HOST};
    const char *values[8][2];
    topo_assign_domain doms[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        values[i][0] = "r1";
        values[i][1] = hosts[i];
        doms[i].values = values[i];
        doms[i].count = 1;
    }
    topo_assignment as = {levels, 2, doms, n};
    topo_cache_reservation_spec rs = {0};
    rs.id = id;
    rs.podset_key = key;
    rs.topology_name = "default";
    rs.levels = levels;
    rs.nlevels = 2;
    rs.assignment = &as;
    rs.created_at = 1;
    rs.expires_at = 1000;
    must(topo_cache_reservation_create(f->cache, &rs, &err), &err);
    for (size_t i = 0; i < n; i++) {
        topo_cache_slot s;
        topo_pool *pool = topo_pool_create();
        if (claimants[i] != NULL)
            must(topo_cache_reservation_claim(&s, f->cache, id, claimants[i], (int32_t)i, 2,
                                              pool, &err),
                 &err);
        topo_pool_free(pool);
    }
}

static void pod(fx *f, const char *uid, const char *node, const char *phase, int gated)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv ann[] = {{"topology.topo.io/wait-reason", "no rack has room"}};
    topo_cache_pod p = {uid, "ns",  uid,  node, phase, NULL, 0,    NULL,
                        0,   ann,   gated ? 1u : 0u, 0, "1", 1, NULL, NULL, 0};
    must(topo_cache_put_pod(f->cache, &p, &err), &err);
}

static int collect(const topo_cache_stranded *s, void *payload)
{
    char *out = payload;
    char line[160];
    assert_int_equal(s->nvalues, s->nassignment_levels);
    snprintf(line, sizeof line, "%s/%s %s %s#%d %s=%s ", s->namespace_, s->pod_name, s->pod_uid,
             s->reservation_id, (int)s->slot, s->assignment_levels[s->nassignment_levels - 1],
             s->values[s->nvalues - 1]);
    strcat(out, line);
    return 0;
}

/* Only the unbound, unfinished, ungated pods holding a slot come back,
 * with their slot's domain. */
static void test_cache_stranded__filters(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    static const char *const hosts[] = {"n9", "n10", "n11", "n12", "n13", "n14"};
    static const char *const claimants[] = {"u-pending", "u-bound", "u-gated",
                                            "u-failed", "claim:r-1", "u-done"};
    reserve(f, "default.a", "ns/job/a", hosts, 6, claimants);
    pod(f, "u-pending", "", "Pending", 0); /* reported */
    pod(f, "u-bound", "n10.example.com", "Pending", 0);
    pod(f, "u-gated", "", "Pending", 1);
    pod(f, "u-failed", "", "Failed", 0);
    pod(f, "u-done", "", "Succeeded", 0);
    pod(f, "u-noslot", "", "Pending", 0); /* no slot */

    char out[512] = "";
    must(topo_cache_foreach_stranded(f->cache, collect, out, &err), &err);
    assert_string_equal(out, "ns/u-pending u-pending default.a#0 " HOST "=n9 ");

    /* once bound, it leaves; an unknown phase ("") counts as not finished */
    pod(f, "u-pending", "n9.example.com", "Running", 0);
    pod(f, "u-failed", "", "", 0);
    out[0] = '\0';
    must(topo_cache_foreach_stranded(f->cache, collect, out, &err), &err);
    assert_string_equal(out, "ns/u-failed u-failed default.a#3 " HOST "=n12 ");

    /* being deleted: its controller replaces it already */
    topo_kv none[] = {{"topology.topo.io/slot", "3"}};
    topo_cache_pod gone = {"u-failed", "ns", "u-failed", "", "Pending", NULL, 0, NULL,
                           0,          none, 0,          0,  "2",       1,        NULL, NULL, 1};
    must(topo_cache_put_pod(f->cache, &gone, &err), &err);
    out[0] = '\0';
    must(topo_cache_foreach_stranded(f->cache, collect, out, &err), &err);
    assert_string_equal(out, "");
}

static int stop_at_first(const topo_cache_stranded *s, void *payload)
{
    (void)s;
    (*(int *)payload)++;
    return 7;
}

/* fn's non-zero return stops the walk and is returned. */
static void test_cache_stranded__stop(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    static const char *const hosts[] = {"n1", "n2"};
    static const char *const claimants[] = {"u-1", "u-2"};
    reserve(f, "default.b", "ns/job/b", hosts, 2, claimants);
    pod(f, "u-1", "", "Pending", 0);
    pod(f, "u-2", "", "Pending", 0);
    int calls = 0;
    assert_int_equal(topo_cache_foreach_stranded(f->cache, stop_at_first, &calls, &err), 7);
    assert_int_equal(calls, 1);
    assert_int_equal(topo_cache_foreach_stranded(NULL, stop_at_first, &calls, &err),
                     TOPO_EINVALID);
}

/* The read starts at the index of the unbound pods and reaches slots and
 * reservations by key: never a scan of the bound pods, the slots or the
 * reservations (60k of each at scale, every few seconds). */
static void test_cache_stranded__indexed(void **state)
{
    fx *f = *state;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char plan[1024] = "";
    assert_int_equal(sqlite3_open(f->tmp.path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN " CACHE_STRANDED_SQL, -1, &st, NULL),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        strncat(plan, (const char *)sqlite3_column_text(st, 3), sizeof plan - strlen(plan) - 2);
        strcat(plan, "\n");
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_non_null(strstr(plan, "SCAN p USING INDEX pods_gated\n"));
    assert_non_null(strstr(plan, "SEARCH s USING INDEX reservation_slots_pod (pod_uid=?)\n"));
    assert_non_null(strstr(plan, "SEARCH r USING"));
    assert_null(strstr(plan, "SCAN s"));
    assert_null(strstr(plan, "SCAN r"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cache_stranded__filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_stranded__stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_stranded__indexed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
