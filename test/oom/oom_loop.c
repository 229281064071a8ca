/* Out of memory at every step (test/support/failalloc.h) of the operations
 * that run with requests in flight: the admission handler placing the first
 * pod of a PodSet (decode, engine, reservation, claim, patch), a
 * reservation claim in the cache file, a snapshot build, and topo-sync's
 * label diff of one node with its Event; and of topo-sync's saving and
 * loading a source's last good facts (the store keeps the old facts or
 * holds the new ones whole). For N = 1, 2,
 * ... until the operation no longer reaches its Nth allocation: fresh state,
 * the Nth allocation fails, and then
 * - the result is a success or a clean error: TOPO_ENOMEM with a message
 *   (the handler: a 200 answer admitting the pod, or TOPO_ENOMEM and no
 *   body);
 * - the state still works: the operation run again without failures
 *   succeeds and leaves what an undisturbed run leaves (reservations, claims,
 *   the capacity the live snapshot holds for them);
 * - once everything is freed, no allocation is left over (a leak).
 * Skipped in sanitizer builds, whose runtimes own malloc.
 *
 * To look at one failure: OOM_ONLY="admission handler" OOM_FROM=N runs only
 * that loop from allocation N (under gdb: break in failalloc.c fail_now
 * where it sets fired). */
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
#include <jansson.h>

#include "support/failalloc.h"
#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/facts_json.h"
#include "topo/engine.h"
#include "topo/inventory.h"
#include "topo/labeldiff.h"
#include "topo/labelwriter.h"
#include "topo/live.h"
#include "topo/log.h"
#include "topo/model.h"
#include "topo/sync_facts.h"

/* A bound on N: an operation still failing past it loops forever. */
#define OOM_MAX_STEPS 100000

static const char *const levels[] = {"topology.topo.io/datacenter", "topology.topo.io/spine",
                                     "topology.topo.io/leaf", "topology.topo.io/rack",
                                     "kubernetes.io/hostname"};

typedef struct group {
    topo_inventory *inv; /* fixtures/clusters/hgx-h100.yaml, read-only */
    char dir[256];       /* for the claim's cache file */
    char db[300];        /* the claim's (the handler's is in memory) */
} group;

/* One run with allocation n failing (0: none); returns failalloc_disarm(). */
typedef int (*oom_step_fn)(group *g, size_t n);

/* Who asked for the allocation that failed (a library, or this program). */
static const char *failed_in(void)
{
    const char *in = failalloc_failed_in();
    const char *base = in != NULL ? strrchr(in, '/') : NULL;
    return base != NULL ? base + 1 : in != NULL ? in : "?";
}

/* The loop: a run without failures first (so that what libraries set up
 * once, OpenSSL's and SQLite's globals, is not taken for a leak), then every
 * allocation failed in turn. */
static void oom_loop(group *g, const char *what, oom_step_fn step)
{
    const char *only = getenv("OOM_ONLY"), *from = getenv("OOM_FROM");
    if (only != NULL && strcmp(only, what) != 0)
        return;
    step(g, 0);
    for (size_t n = from != NULL ? strtoul(from, NULL, 10) : 1; n < OOM_MAX_STEPS; n++) {
        long before = failalloc_live();
        int fired = step(g, n);
        long after = failalloc_live();
        if (after != before)
            fail_msg("%s: with allocation %zu (in %s) failed, %ld blocks are never freed", what,
                     n, failed_in(), after - before);
        if (!fired) {
            print_message("%s: %zu allocations, each failed in turn\n", what, n - 1);
            return;
        }
    }
    fail_msg("%s: still allocating after %d steps", what, OOM_MAX_STEPS);
}

/* A clean error: out of memory, said so. */
static void check_clean_error(const char *what, size_t n, int rc, const topo_err *err)
{
    if (rc != TOPO_ENOMEM || err->text[0] == '\0')
        fail_msg("%s: allocation %zu (in %s) failed: %s (%s), want TOPO_ENOMEM with a message",
                 what, n, failed_in(), topo_err_name(rc), err->text);
}

/* --- label diff ------------------------------------------------------------------- */

/* A node with a changed, a new, a stale and a drifted owned label, an
 * owned annotation and the record: every allocation of the diff, the patch,
 * the message and the Event. */
static int labeldiff_step(group *g, size_t n)
{
    (void)g;
    static char *want_patch, *want_event;
    static const char *const prefixes[] = {"topology.topo.io/"};
    static const topo_labeldiff_owned owned = {prefixes, 1, NULL, 0, 0};
    const topo_kv labels[] = {{"topology.topo.io/leaf", "lf2"}, {"topology.topo.io/rack", "r12"},
                              {"topology.topo.io/spine", "sp1"}};
    const topo_kv ann[] = {{"topology.topo.io/provenance", "leaf=ufm,rack=netbox"}};
    topo_labeldiff_input in = {&owned, 1, labels, 3, ann, 1, TOPO_LABELDIFF_RECORD_KEY_DEFAULT, 0};
    json_t *node = json_loads(
        "{\"metadata\": {\"name\": \"n1\", \"uid\": \"u1\", \"labels\": {"
        "\"topology.topo.io/leaf\": \"lf1\", \"topology.topo.io/spine\": \"x\","
        "\"topology.topo.io/block\": \"b\", \"kubernetes.io/hostname\": \"n1\"},"
        "\"annotations\": {\"topology.topo.io/applied-labels\":"
        "\"topology.topo.io/block=b,topology.topo.io/leaf=lf1,topology.topo.io/spine=sp1\"}}}",
        0, NULL);
    assert_non_null(node);
    topo_labeldiff *d = NULL;
    json_t *ev = NULL;
    topo_err err = TOPO_ERR_INIT;

    failalloc_arm(n);
    int rc = topo_labeldiff_compute(&d, &in, node, &err);
    if (rc == 0)
        rc = topo_labelwriter_event(&ev, d, "topo-sync", "pod-a", "default", 123, &err);
    int fired = failalloc_disarm();

    if (rc == 0) {
        char *patch = json_dumps(topo_labeldiff_patch(d), JSON_SORT_KEYS | JSON_COMPACT);
        char *event = json_dumps(ev, JSON_SORT_KEYS | JSON_COMPACT);
        assert_non_null(patch);
        assert_non_null(event);
        assert_int_equal(topo_labeldiff_drift_count(d), 1);
        if (n == 0) {
            free(want_patch);
            free(want_event);
            want_patch = patch;
            want_event = event;
        } else {
            assert_string_equal(patch, want_patch);
            assert_string_equal(event, want_event);
            free(patch);
            free(event);
        }
    } else {
        check_clean_error("label diff", n, rc, &err);
    }
    json_decref(ev);
    topo_labeldiff_free(d);
    json_decref(node);
    return fired; /* want_* stay (reachable) for the next loop's first run */
}

static void test_oom__label_diff(void **state)
{
    oom_loop(*state, "label diff", labeldiff_step);
}

/* --- snapshot build ---------------------------------------------------------------- */

typedef struct walk_sum {
    size_t domains;
    int64_t capacity, free;
} walk_sum;

static int sum_domain(const topo_domain_view *v, void *payload)
{
    walk_sum *s = payload;
    s->domains++;
    s->capacity += v->capacity;
    s->free += v->free;
    return 0;
}

static int snapshot_step(group *g, size_t n)
{
    static walk_sum want;
    topo_snapshot *snap = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_snapshot_opts so = {"default", levels, 5, NULL, 0};
    assert_int_equal(topo_snapshot_create(&snap, &so, NULL), 0);
    for (size_t i = 0; i < topo_inventory_node_count(g->inv); i++)
        assert_int_equal(topo_snapshot_add_node(snap, topo_inventory_node(g->inv, i), NULL), 0);
    for (size_t i = 0; i < topo_inventory_pod_count(g->inv); i++) {
        const topo_pod_usage *p = topo_inventory_pod(g->inv, i);
        assert_int_equal(
            topo_snapshot_add_pod_usage(snap, p->node, p->requests, p->nrequests, NULL, NULL), 0);
    }

    failalloc_arm(n);
    int rc = topo_snapshot_build(snap, &err);
    int fired = failalloc_disarm();

    if (rc == 0) {
        walk_sum got = {0, 0, 0};
        assert_int_equal(topo_snapshot_walk(snap, "nvidia.com/gpu", sum_domain, &got), 0);
        if (n == 0)
            want = got;
        assert_int_equal(got.domains, want.domains);
        assert_int_equal(got.capacity, want.capacity);
        assert_int_equal(got.free, want.free);
    } else {
        check_clean_error("snapshot build", n, rc, &err);
    }
    topo_snapshot_free(snap);
    return fired;
}

static void test_oom__snapshot_build(void **state)
{
    oom_loop(*state, "snapshot build", snapshot_step);
}

/* --- reservation claim ------------------------------------------------------------- */

/* r1: 3 slots for ns/train, 2 pods on n1 and 1 on n2. */
static void create_r1(topo_cache *c)
{
    static const char *const v1[] = {"n1"}, *const v2[] = {"n2"};
    static const char *const alevels[] = {"kubernetes.io/hostname"};
    static const topo_resource req[] = {{"nvidia.com/gpu", 4}};
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {alevels, 1, doms, 2};
    topo_cache_reservation_spec spec = {0};
    topo_err err = TOPO_ERR_INIT;
    spec.id = "r1";
    spec.podset_key = "ns/train";
    spec.topology_name = "default";
    spec.levels = levels;
    spec.nlevels = 5;
    spec.assignment = &a;
    spec.requests = req;
    spec.nrequests = 1;
    spec.created_at = 100;
    spec.expires_at = 1000;
    if (topo_cache_reservation_create(c, &spec, &err) < 0)
        fail_msg("create r1: %s", err.text);
}

static size_t claimed_slots(topo_cache *c)
{
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, c, NULL), 0);
    return st.claimed_slots;
}

/* Claims the lowest free slot of r1 for pod-a: slot 0 on n1. */
static int claim(topo_cache *c, topo_pool *pool, topo_err *err)
{
    topo_cache_slot s;
    int rc = topo_cache_reservation_claim(&s, c, "r1", "pod-a", -1, 110, pool, err);
    if (rc == 0) {
        assert_int_equal(s.index, 0);
        assert_string_equal(s.values[0], "n1");
    }
    return rc;
}

/* The cache file (its schema and r1) is made once; each step opens it,
 * claims, and gives the slot back. */
static int claim_step(group *g, size_t n)
{
    topo_cache *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    if (topo_cache_open(&c, g->db, NULL, &err) < 0)
        fail_msg("open: %s", err.text);
    if (n == 0)
        create_r1(c);
    assert_int_equal(claimed_slots(c), 0);

    failalloc_arm(n);
    int rc = claim(c, pool, &err);
    int fired = failalloc_disarm();

    if (rc < 0)
        check_clean_error("reservation claim", n, rc, &err);
    /* All or nothing, and the claim still works. */
    if (claimed_slots(c) != (rc == 0 ? 1u : 0u))
        fail_msg("reservation claim: allocation %zu (in %s) failed: %s, yet %zu slots claimed", n,
                 failed_in(), topo_err_name(rc), claimed_slots(c));
    topo_pool_clear(pool);
    if ((rc = claim(c, pool, &err)) < 0)
        fail_msg("claim after allocation %zu failed: %s", n, err.text);
    assert_int_equal(claimed_slots(c), 1);
    size_t released = 0;
    assert_int_equal(topo_cache_reservation_release_pod(c, "pod-a", &released, NULL), 0);
    assert_int_equal(released, 1);
    topo_cache_close(c);
    topo_pool_free(pool);
    return fired;
}

static void test_oom__reservation_claim(void **state)
{
    oom_loop(*state, "reservation claim", claim_step);
}

/* --- topo-sync's facts store -------------------------------------------------------- */

/* Small facts of every shape (levels, cables with and without a host or a
 * port, a switch cable, a name that is not UTF-8); version changes them. */
static topo_facts *oom_facts(int version)
{
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    char rack[16];
    snprintf(rack, sizeof(rack), "r%d", version);
    if (topo_facts_create(&f, "netbox", &err) != 0 ||
        topo_facts_set_level(f, "gpu-1", TOPO_LEVEL_RACK, rack, &err) != 0 ||
        topo_facts_set_level(f, "gpu-2", TOPO_LEVEL_DATACENTER, "dc1", &err) != 0 ||
        topo_facts_add_switch(f, "leaf-1", "Leaf 1", NULL, &err) != 0 ||
        topo_facts_add_host_link(f, "gpu-1", "eth0", "leaf-1", &err) != 0 ||
        topo_facts_add_host_link(f, NULL, "eth1", "leaf-2", &err) != 0 ||
        topo_facts_add_host_link(f, "bad\xfe", NULL, "leaf-2", &err) != 0 ||
        topo_facts_add_switch_link(f, "leaf-1", "spine-1", &err) != 0)
        fail_msg("facts: %s", err.text);
    return f;
}

/* The stored facts of "netbox" must be those of version. */
static void expect_facts(topo_cache *c, int version, const char *what, size_t n)
{
    topo_facts *got = NULL, *want = oom_facts(version);
    topo_err err = TOPO_ERR_INIT;
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    if (topo_sync_facts_load(&got, NULL, c, "netbox", &err) != 0)
        fail_msg("%s: after allocation %zu failed, the facts do not load: %s", what, n, err.text);
    assert_int_equal(topo_facts_json_encode(&a, &la, got, &err), 0);
    assert_int_equal(topo_facts_json_encode(&b, &lb, want, &err), 0);
    if (la != lb || memcmp(a, b, la) != 0)
        fail_msg("%s: allocation %zu (in %s) failed: stored %s, want version %d", what, n,
                 failed_in(), a, version);
    free(a);
    free(b);
    topo_facts_free(got);
    topo_facts_free(want);
}

static topo_cache *facts_cache(group *g, int version)
{
    topo_cache *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_facts *f = oom_facts(version);
    if (topo_cache_open(&c, g->db, NULL, &err) < 0 ||
        topo_sync_facts_save(c, f, 1000, NULL, &err) != 0)
        fail_msg("facts: %s", err.text);
    topo_facts_free(f);
    return c;
}

/* Saving version 2 over version 1: all or nothing, and it still works. */
static int facts_save_step(group *g, size_t n)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = facts_cache(g, 1);
    topo_facts *f = oom_facts(2);
    int changed = -1;

    failalloc_arm(n);
    int rc = topo_sync_facts_save(c, f, 2000, &changed, &err);
    int fired = failalloc_disarm();

    if (rc != 0)
        check_clean_error("facts save", n, rc, &err);
    else
        assert_int_equal(changed, 1);
    expect_facts(c, rc == 0 ? 2 : 1, "facts save", n);
    if (topo_sync_facts_save(c, f, 3000, NULL, &err) != 0)
        fail_msg("facts save after allocation %zu failed: %s", n, err.text);
    expect_facts(c, 2, "facts save", n);
    topo_facts_free(f);
    topo_cache_close(c);
    return fired;
}

static void test_oom__facts_save(void **state)
{
    oom_loop(*state, "facts save", facts_save_step);
}

/* Loading: the facts or a clean error, and the store as it was. */
static int facts_load_step(group *g, size_t n)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = facts_cache(g, 1);
    topo_facts *got = NULL;

    failalloc_arm(n);
    int rc = topo_sync_facts_load(&got, NULL, c, "netbox", &err);
    int fired = failalloc_disarm();

    if (rc != 0) {
        check_clean_error("facts load", n, rc, &err);
        assert_null(got);
    }
    topo_facts_free(got);
    expect_facts(c, 1, "facts load", n);
    topo_cache_close(c);
    return fired;
}

static void test_oom__facts_load(void **state)
{
    oom_loop(*state, "facts load", facts_load_step);
}

/* --- admission handler -------------------------------------------------------------- */

/* Pod 0 of a 4-pod Indexed Job asking for one rack: the first pod places
 * the whole PodSet (a reservation of 4 slots) and claims slot 0. */
static const char review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"oom-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"namespace\":\"team-a\",\"operation\":\"CREATE\",\"object\":{\"kind\":\"Pod\","
    "\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"team-a\",\"generateName\":\"train-\","
    "\"labels\":{\"batch.kubernetes.io/controller-uid\":\"u-train\","
    "\"batch.kubernetes.io/job-name\":\"train\","
    "\"batch.kubernetes.io/job-completion-index\":\"0\"},"
    "\"annotations\":{\"kueue.x-k8s.io/podset-required-topology\":\"topology.topo.io/rack\","
    "\"topology.topo.io/podset-size\":\"4\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"worker\",\"image\":\"x\",\"resources\":"
    "{\"requests\":{\"nvidia.com/gpu\":\"8\",\"cpu\":\"16\"}}}]}}}}";

typedef struct hfx {
    topo_live *live;
    topo_cache *cache;
    topo_admission_ctx *ctx;
} hfx;

static void make_hfx(hfx *h, const group *g)
{
    topo_err err = TOPO_ERR_INIT;
    topo_snapshot_opts so = {"default", levels, 5, NULL, 0};
    memset(h, 0, sizeof(*h));
    if (topo_live_create(&h->live, &so, &err) < 0 ||
        topo_cache_open(&h->cache, ":memory:", NULL, &err) < 0)
        fail_msg("fixture: %s", err.text);
    for (size_t i = 0; i < topo_inventory_node_count(g->inv); i++)
        if (topo_live_upsert_node(h->live, topo_inventory_node(g->inv, i), &err) < 0)
            fail_msg("fixture: %s", err.text);
    if (topo_live_commit(h->live, &err) < 0)
        fail_msg("fixture: %s", err.text);
    topo_admission_topology t = {"default", levels, 5, NULL, 0, TOPO_ADMISSION_POLICY_DENY,
                                 h->live, 0};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = h->cache;
    if (topo_admission_ctx_create(&h->ctx, &ao, &err) < 0)
        fail_msg("fixture: %s", err.text);
}

static void free_hfx(hfx *h)
{
    topo_admission_ctx_free(h->ctx);
    topo_cache_close(h->cache);
    topo_live_free(h->live);
}

/* A 200 answer to review that admits the pod: placed, or unplaced after an
 * internal error. The no-fit policy is deny, so that a failure taken for
 * "does not fit" (or for a malformed request) shows as a refusal. */
static void check_answer(size_t n, const char *body, size_t len, int status)
{
    json_error_t jerr;
    json_t *root = json_loadb(body, len, 0, &jerr);
    json_t *resp = json_object_get(root, "response");
    const char *uid = json_string_value(json_object_get(resp, "uid"));
    if (status != 200 || !json_is_true(json_object_get(resp, "allowed")) || uid == NULL ||
        strcmp(uid, "oom-1") != 0)
        fail_msg("admission: allocation %zu (in %s) failed: HTTP %d %.*s", n, failed_in(),
                 status, (int)len, body);
    json_decref(root);
}

/* What the handler leaves: reservations and claims in the cache, the
 * capacity the live snapshot holds for reservations. */
typedef struct handler_state {
    size_t reservations, slots, claimed, live_reserved;
} handler_state;

static handler_state state_of(hfx *h)
{
    topo_cache_stats cs;
    topo_live_stats ls;
    assert_int_equal(topo_cache_get_stats(&cs, h->cache, NULL), 0);
    topo_live_get_stats(h->live, &ls);
    return (handler_state){cs.reservations, cs.slots, cs.claimed_slots, ls.reserved};
}

static int handler_step(group *g, size_t n)
{
    static handler_state want;
    hfx h;
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    make_hfx(&h, g);

    failalloc_arm(n);
    int rc = topo_admission_handle(h.ctx, review, strlen(review), &out, &len, &status);
    int fired = failalloc_disarm();

    if (rc == 0) {
        assert_non_null(out);
        check_answer(n, out, len, status);
    } else if (rc != TOPO_ENOMEM || out != NULL) {
        fail_msg("admission: allocation %zu (in %s) failed: %s, want 0 or TOPO_ENOMEM without a "
                 "body", n, failed_in(), topo_err_name(rc));
    }
    free(out);
    out = NULL;

    /* The same pod again is placed, and leaves what an undisturbed run
     * leaves once the housekeeping tick has run. */
    rc = topo_admission_handle(h.ctx, review, strlen(review), &out, &len, &status);
    assert_int_equal(rc, 0);
    check_answer(n, out, len, status);
    if (strstr(out, "\"patch\"") == NULL)
        fail_msg("admission: after allocation %zu failed, the pod is not placed: %s", n, out);
    free(out);
    topo_err err = TOPO_ERR_INIT;
    if (topo_admission_tick(h.ctx, &err) < 0)
        fail_msg("tick: %s", err.text);
    handler_state got = state_of(&h);
    if (n == 0)
        want = got;
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("admission: after allocation %zu failed and a retry: %zu reservations, %zu "
                 "slots, %zu claimed, %zu held live; want %zu, %zu, %zu, %zu",
                 n, got.reservations, got.slots, got.claimed, got.live_reserved,
                 want.reservations, want.slots, want.claimed, want.live_reserved);
    free_hfx(&h);
    return fired;
}

static void test_oom__admission_handler(void **state)
{
    oom_loop(*state, "admission handler", handler_step);
}

/* --- group ----------------------------------------------------------------------- */

static int group_setup(void **state)
{
    group *g = calloc(1, sizeof(*g));
    const char *src = getenv("TOPO_SOURCE_DIR");
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    topo_err err = TOPO_ERR_INIT;
    if (g == NULL)
        return -1;
    /* What fails is checked here; the warnings about it are noise. */
    topo_log_set_level(TOPO_LOG_ERROR);
    snprintf(path, sizeof path, "%s/fixtures/clusters/hgx-h100.yaml", src ? src : ".");
    if (topo_inventory_create(&g->inv, &err) < 0 ||
        topo_inventory_load_nodes_file(g->inv, path, &err) < 0) {
        fprintf(stderr, "fixture: %s\n", err.text);
        return -1;
    }
    /* On tmpfs when there is one: every step closes the cache, and the
     * checkpoint at close would otherwise wait for the disk each time. */
    if (access("/dev/shm", W_OK) == 0)
        tmp = "/dev/shm";
    snprintf(g->dir, sizeof g->dir, "%s/topo-oom-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(g->dir) == NULL)
        return -1;
    snprintf(g->db, sizeof g->db, "%s/claim.db", g->dir);
    *state = g;
    return 0;
}

static int group_teardown(void **state)
{
    group *g = *state;
    char p[400];
    const char *const suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", g->db, suffixes[i]);
        unlink(p);
    }
    rmdir(g->dir);
    topo_inventory_free(g->inv);
    free(g);
    return 0;
}

int main(void)
{
    if (!failalloc_available()) {
        printf("oom_loop: skipped (a sanitizer owns malloc in this build)\n");
        return 77; /* ctest: SKIP_RETURN_CODE */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom__snapshot_build),
        cmocka_unit_test(test_oom__reservation_claim),
        cmocka_unit_test(test_oom__facts_save),
        cmocka_unit_test(test_oom__facts_load),
        cmocka_unit_test(test_oom__admission_handler),
        cmocka_unit_test(test_oom__label_diff),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
