/* Tests for reservation records and their adoption (lib/cache/cache_adopt.c,
 * cache.h "Adoption"): a reservation made in one cache is made again,
 * identical, in another that sees one of its pods with a record signed with
 * the same key; a record not signed with that key, tampered with, or
 * malformed adopts nothing and never costs the pod its row. */
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

#include "topo/cache.h"
#include "topo/sha256.h"

#include "support/tmpdir.h"

#define GPU "nvidia.com/gpu"
#define HOST "kubernetes.io/hostname"
#define ASSIGNMENT "topology.topo.io/assignment"

static const char *const LEVELS[] = {"topology.topo.io/rack", HOST};
static const unsigned char KEY[] = "a key both replicas derive";
static const unsigned char OTHER_KEY[] = "another installation's key";

typedef struct fx {
    char dir[256];
    topo_cache *placer, *peer;
    topo_pool *pool;
    topo_cache_reservation r; /* the placer's, read back */
    char *record;
} fx;

static void must(int rc, const topo_err *err)
{
    if (rc < 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

/* A ring of one key (none when key is NULL). */
static topo_keyring ring_of(const unsigned char *key, size_t keylen)
{
    topo_keyring ring = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    if (key != NULL)
        must(topo_keyring_add(&ring, key, keylen, "key", &err), &err);
    return ring;
}

static topo_cache *open_cache(fx *f, const char *name, const unsigned char *key, size_t keylen)
{
    char path[400];
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_keyring ring = ring_of(key, keylen);
    topo_cache_opts o = {.record_keys = &ring};
    snprintf(path, sizeof path, "%s/%s.db", f->dir, name);
    must(topo_cache_open(&c, path, &o, &err), &err);
    return c;
}

/* The placer's reservation: 2 slots on n1, 1 on n2, 8 GPUs a pod, in
 * rack r1. */
static const char *const DOMAIN[] = {"r1"};

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (f == NULL || topo_test_tmpdir_make(f->dir, sizeof(f->dir), "adopt-test") < 0)
        return -1;
    f->pool = topo_pool_create();
    f->placer = open_cache(f, "placer", NULL, 0);
    static const char *v1[] = {"r1", "n1"}, *v2[] = {"r1", "n2"};
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {LEVELS, 2, doms, 2};
    static const topo_resource req[] = {{"cpu", 16000}, {GPU, 8}};
    topo_cache_reservation_spec spec = {.id = "default.0123456789abcdef",
                                        .podset_key = "team-a/job/uid-train",
                                        .topology_name = "default",
                                        .levels = LEVELS,
                                        .nlevels = 2,
                                        .assignment = &a,
                                        .requests = req,
                                        .nrequests = 2,
                                        .created_at = 1000,
                                        .expires_at = 4600,
                                        .shape = "shape-digest",
                                        .request = "required=topology.topo.io/rack",
                                        .unclaimed_ttl = 120,
                                        .domain = DOMAIN,
                                        .ndomain = 1};
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_create(f->placer, &spec, &err), &err);
    must(topo_cache_reservation_get(&f->r, f->placer, spec.id, f->pool, &err), &err);
    topo_keyring ring = ring_of(KEY, sizeof KEY);
    must(topo_cache_reservation_record(&f->record, &f->r, &ring, &err), &err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_cache_close(f->placer);
    topo_cache_close(f->peer);
    topo_pool_free(f->pool);
    free(f->record);
    if (topo_test_tmpdir_remove(f->dir) < 0)
        return -1;
    free(f);
    return 0;
}

/* A pod of the reservation (Job uid-train's) as the API server holds it
 * once admitted: its reservation and slot sealed, as topo-webhook does. */
static int put_pod(topo_cache *c, const char *uid, const char *id, const char *slot,
                   const char *assignment, const char *record, topo_err *err)
{
    char seal[TOPO_SHA256_HEX_LEN + 1];
    topo_keyring ring = ring_of(KEY, sizeof KEY);
    topo_cache_seal_fields f = {"team-a", "team-a/job/uid-train", id, slot, NULL};
    must(topo_cache_seal(seal, &ring, &f, err), err);
    topo_kv job[] = {{"batch.kubernetes.io/controller-uid", "uid-train"}};
    topo_kv ann[] = {{"topology.topo.io/reservation", id},
                     {"topology.topo.io/slot", slot},
                     {TOPO_CACHE_SEAL_ANNOTATION, seal},
                     {ASSIGNMENT, assignment},
                     {TOPO_CACHE_RECORD_ANNOTATION, record}};
    topo_cache_pod p = {uid,  "team-a", uid, "", "Pending", NULL, 0, job, 1,
                        ann, record != NULL ? 5 : 4, 0, "7", 0, NULL, NULL, 0};
    return topo_cache_put_pod(c, &p, err);
}

static int has_reservation(topo_cache *c, const char *id, topo_pool *pool)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_cache_reservation_get(&r, c, id, pool, &err);
    if (rc != 0 && rc != TOPO_ENOTFOUND)
        fail_msg("%s", err.text);
    return rc == 0;
}

static int pod_stored(topo_cache *c, const char *uid, topo_pool *pool)
{
    topo_cache_pod p;
    topo_err err = TOPO_ERR_INIT;
    return topo_cache_get_pod(&p, c, uid, pool, &err) == 0;
}

static void test_adopt__same_reservation(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache_reservation got;
    f->peer = open_cache(f, "peer", KEY, sizeof KEY);

    must(put_pod(f->peer, "uid-1", f->r.id, "1", f->r.assignment_json, f->record, &err), &err);
    assert_int_equal(topo_cache_adopted(f->peer), 1);
    must(topo_cache_reservation_get(&got, f->peer, f->r.id, f->pool, &err), &err);
    assert_string_equal(got.podset_key, f->r.podset_key);
    assert_string_equal(got.topology_name, "default");
    assert_int_equal(got.nlevels, 2);
    assert_string_equal(got.levels[1], HOST);
    assert_string_equal(got.assignment_json, f->r.assignment_json);
    assert_int_equal(got.nrequests, 2);
    assert_string_equal(got.requests[1].name, GPU);
    assert_int_equal(got.requests[1].amount, 8);
    assert_int_equal(got.created_at, 1000);
    assert_int_equal(got.expires_at, 4600);
    assert_string_equal(got.shape, "shape-digest");
    assert_string_equal(got.request, "required=topology.topo.io/rack");
    assert_int_equal(got.unclaimed_ttl, 120);
    assert_int_equal(got.ndomain, 1);
    assert_string_equal(got.domain[0], "r1");
    assert_int_equal(got.nslots, 3);
    assert_string_equal(got.slots[2].values[1], "n2");
    /* the pod holds the slot its annotation names, the others are free */
    assert_string_equal(got.slots[1].pod_uid, "uid-1");
    assert_null(got.slots[0].pod_uid);

    /* a second pod of the PodSet binds; nothing is adopted twice */
    must(put_pod(f->peer, "uid-0", f->r.id, "0", f->r.assignment_json, f->record, &err), &err);
    assert_int_equal(topo_cache_adopted(f->peer), 1);
    must(topo_cache_reservation_get(&got, f->peer, f->r.id, f->pool, &err), &err);
    assert_string_equal(got.slots[0].pod_uid, "uid-0");
}

static void test_adopt__refused_records(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char *tampered = strdup(f->record), *p;
    assert_non_null(tampered);
    /* a longer hold than the placer gave */
    assert_non_null(p = strstr(tampered, "\"expires\":4600"));
    p[strlen("\"expires\":")] = '9';

    /* another installation's key; a tampered record; a record naming
     * another reservation id or assignment than the one signed */
    f->peer = open_cache(f, "other", OTHER_KEY, sizeof OTHER_KEY);
    must(put_pod(f->peer, "uid-1", f->r.id, "1", f->r.assignment_json, f->record, &err), &err);
    assert_true(pod_stored(f->peer, "uid-1", f->pool));
    assert_false(has_reservation(f->peer, f->r.id, f->pool));
    topo_cache_close(f->peer);

    f->peer = open_cache(f, "peer", KEY, sizeof KEY);
    must(put_pod(f->peer, "uid-1", f->r.id, "1", f->r.assignment_json, tampered, &err), &err);
    must(put_pod(f->peer, "uid-2", "default.ffffffffffffffff", "1", f->r.assignment_json,
                 f->record, &err),
         &err);
    must(put_pod(f->peer, "uid-3", f->r.id, "1",
                 "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"n9\"],"
                 "\"count\":3}]}",
                 f->record, &err),
         &err);
    assert_true(pod_stored(f->peer, "uid-1", f->pool));
    assert_true(pod_stored(f->peer, "uid-2", f->pool));
    assert_true(pod_stored(f->peer, "uid-3", f->pool));
    assert_false(has_reservation(f->peer, f->r.id, f->pool));
    assert_false(has_reservation(f->peer, "default.ffffffffffffffff", f->pool));
    assert_int_equal(topo_cache_adopted(f->peer), 0);
    topo_cache_close(f->peer);

    /* a cache without a key adopts nothing */
    f->peer = open_cache(f, "keyless", NULL, 0);
    must(put_pod(f->peer, "uid-1", f->r.id, "1", f->r.assignment_json, f->record, &err), &err);
    assert_false(has_reservation(f->peer, f->r.id, f->pool));
    free(tampered);
}

/* Signed, but not what a placer writes: the pod is stored, nothing adopted. */
static void test_adopt__malformed_signed(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    static const char *const bodies[] = {
        "not json",
        "[]",
        "{}",
        "{\"podset\":\"p\",\"topology\":\"default\",\"levels\":[\"kubernetes.io/hostname\"],"
        "\"requests\":{},\"created\":10,\"expires\":5,\"shape\":\"\",\"request\":\"\","
        "\"unclaimedTTL\":0}",
        "{\"podset\":\"p\",\"topology\":\"default\",\"levels\":\"x\",\"requests\":{},"
        "\"created\":1,\"expires\":5,\"shape\":\"\",\"request\":\"\",\"unclaimedTTL\":0}",
        "{\"podset\":\"p\",\"topology\":\"default\",\"levels\":[\"a\",\"b\"],\"requests\":{},"
        "\"created\":1,\"expires\":5,\"shape\":\"\",\"request\":\"\",\"unclaimedTTL\":0}",
    };
    static const char *const assignments[] = {
        "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"n1\"],\"count\":1}]}",
        "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"n1\"],\"count\":0}]}",
        "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[]}",
        "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[],\"count\":1}]}",
        "[1,2]",
    };
    f->peer = open_cache(f, "peer", KEY, sizeof KEY);
    for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++)
        for (size_t a = 0; a < sizeof assignments / sizeof assignments[0]; a++) {
            char mac[TOPO_SHA256_HEX_LEN + 1], msg[2048], record[2048], uid[32];
            snprintf(msg, sizeof msg, "%s\n%s\n%s", "default.1", assignments[a], bodies[b]);
            assert_int_equal(topo_hmac_sha256_hex(mac, KEY, sizeof KEY, msg, strlen(msg)), 0);
            snprintf(record, sizeof record, "%s %s", mac, bodies[b]);
            snprintf(uid, sizeof uid, "uid-%zu-%zu", b, a);
            must(put_pod(f->peer, uid, "default.1", "0", assignments[a], record, &err), &err);
            assert_true(pod_stored(f->peer, uid, f->pool));
        }
    assert_false(has_reservation(f->peer, "default.1", f->pool));
    assert_int_equal(topo_cache_adopted(f->peer), 0);
}

/* --- generations (issue 28: failed-node replacement) ---------------------------------- */

/* "<MAC> <body>" signed with KEY for reservation id and assignment text. */
static void sign(char *out, size_t size, const char *id, const char *assignment,
                 const char *body)
{
    char mac[TOPO_SHA256_HEX_LEN + 1], msg[4096];
    snprintf(msg, sizeof msg, "%s\n%s\n%s", id, assignment, body);
    assert_int_equal(topo_hmac_sha256_hex(mac, KEY, sizeof KEY, msg, strlen(msg)), 0);
    snprintf(out, size, "%s %s", mac, body);
}

/* The record JSON of the fixture's reservation with another gen (gen: the
 * member's text, NULL: none), PodSet and levels. */
static void body_of(char *out, size_t size, const char *gen, const char *podset,
                    const char *levels)
{
    snprintf(out, size,
             "{\"created\":1000,\"expires\":4600,%s%s%s\"levels\":%s,\"podset\":\"%s\","
             "\"request\":\"required=topology.topo.io/rack\",\"requests\":{\"cpu\":16000,"
             "\"nvidia.com/gpu\":8},\"shape\":\"shape-digest\",\"topology\":\"default\","
             "\"unclaimedTTL\":120}",
             gen ? "\"gen\":" : "", gen ? gen : "", gen ? "," : "",
             levels ? levels : "[\"topology.topo.io/rack\",\"kubernetes.io/hostname\"]",
             podset ? podset : "team-a/job/uid-train");
}

/* The slots as "host[/pod] ..." and the generation. */
static const char *slots_of(topo_cache *c, const char *id, topo_pool *pool, char *buf,
                            size_t size)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0;
    must(topo_cache_reservation_get(&r, c, id, pool, &err), &err);
    buf[0] = '\0';
    for (size_t i = 0; i < r.nslots; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s ", r.slots[i].values[1],
                                r.slots[i].pod_uid ? "/" : "",
                                r.slots[i].pod_uid ? r.slots[i].pod_uid : "");
    snprintf(buf + len, size - len, "@%lld.%lld", (long long)r.gen_term, (long long)r.gen_seq);
    return buf;
}

#define ASG_MOVED                                                                                 \
    "{\"levels\":[\"topology.topo.io/rack\",\"kubernetes.io/hostname\"],\"domains\":["           \
    "{\"values\":[\"r1\",\"n1\"],\"count\":1},{\"values\":[\"r1\",\"n3\"],\"count\":1},"          \
    "{\"values\":[\"r1\",\"n2\"],\"count\":1}]}"

/* The placer moves slot 1 from n1 to n3 at generation [term, seq]; its
 * record then, in *out (malloc'd). */
static void placer_moves(fx *f, int64_t term, int64_t seq, char **out)
{
    static const char *v1[] = {"r1", "n1"}, *v3[] = {"r1", "n3"}, *v2[] = {"r1", "n2"};
    topo_assign_domain doms[] = {{v1, 1}, {v3, 1}, {v2, 1}};
    topo_assignment a = {LEVELS, 2, doms, 3};
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    topo_keyring ring = ring_of(KEY, sizeof KEY);
    must(topo_cache_reservation_reassign(f->placer, f->r.id, &a, ASG_MOVED, term, seq, &err),
         &err);
    must(topo_cache_reservation_get(&r, f->placer, f->r.id, f->pool, &err), &err);
    assert_string_equal(r.assignment_json, ASG_MOVED);
    must(topo_cache_reservation_record(out, &r, &ring, &err), &err);
}

/* A record carries the generation ([0, 0]: as records were before), and a
 * cache without the reservation adopts it with it. */
static void test_adopt__record_generation(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char *moved = NULL, buf[256];

    assert_null(strstr(f->record, "\"gen\""));
    placer_moves(f, 2, 1, &moved);
    assert_non_null(strstr(moved, "\"gen\":[2,1]"));
    f->peer = open_cache(f, "peer", KEY, sizeof KEY);
    must(put_pod(f->peer, "uid-1", f->r.id, "1", ASG_MOVED, moved, &err), &err);
    assert_int_equal(topo_cache_adopted(f->peer), 1);
    assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                        "n1 n3/uid-1 n2 @2.1");
    free(moved);
}

/* A peer holding the reservation follows a newer record (a replacement its
 * placer made), keeping its claims; an older or equal one, or one of
 * another PodSet, levels or size, changes nothing. */
static void test_adopt__newer_record_moves_slots(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char *moved = NULL, buf[256], body[1024], record[2048];
    f->peer = open_cache(f, "peer", KEY, sizeof KEY);

    must(put_pod(f->peer, "uid-1", f->r.id, "1", f->r.assignment_json, f->record, &err), &err);
    assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                        "n1 n1/uid-1 n2 @0.0");
    placer_moves(f, 0, 1, &moved);
    must(put_pod(f->peer, "uid-0", f->r.id, "0", ASG_MOVED, moved, &err), &err);
    assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                        "n1/uid-0 n3/uid-1 n2 @0.1");
    topo_cache_reservation got;
    must(topo_cache_reservation_get(&got, f->peer, f->r.id, f->pool, &err), &err);
    assert_string_equal(got.assignment_json, ASG_MOVED);
    assert_int_equal(topo_cache_adopted(f->peer), 1);

    /* A pod placed before the replacement: nothing moves back. */
    must(put_pod(f->peer, "uid-2", f->r.id, "2", f->r.assignment_json, f->record, &err), &err);
    assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                        "n1/uid-0 n3/uid-1 n2/uid-2 @0.1");

    /* Signed with our key, but equal; or newer and not of this reservation. */
    static const char asg_n7[] =
        "{\"levels\":[\"topology.topo.io/rack\",\"kubernetes.io/hostname\"],\"domains\":["
        "{\"values\":[\"r1\",\"n1\"],\"count\":1},{\"values\":[\"r1\",\"n7\"],\"count\":1},"
        "{\"values\":[\"r1\",\"n2\"],\"count\":1}]}";
    static const char asg_four[] =
        "{\"levels\":[\"topology.topo.io/rack\",\"kubernetes.io/hostname\"],\"domains\":["
        "{\"values\":[\"r1\",\"n1\"],\"count\":2},{\"values\":[\"r1\",\"n7\"],\"count\":2}]}";
    static const char asg_hosts[] = "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":["
                                    "{\"values\":[\"n7\"],\"count\":3}]}";
    const struct {
        const char *gen, *podset, *levels, *assignment;
    } refused[] = {
        {"[0,1]", NULL, NULL, asg_n7},                        /* equal */
        {"[0,0]", NULL, NULL, asg_n7},                        /* older */
        {NULL, NULL, NULL, asg_n7},                           /* older: no gen */
        {"[0,5]", "team-a/job/other", NULL, asg_n7},          /* another PodSet */
        {"[0,5]", NULL, "[\"topology.topo.io/block\",\"kubernetes.io/hostname\"]", asg_n7},
        {"[0,5]", NULL, NULL, asg_four},                      /* 4 pods, 3 slots */
        {"[0,5]", NULL, NULL, asg_hosts},                     /* other assignment levels */
        {"[0,-5]", NULL, NULL, asg_n7},                       /* malformed gen */
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char uid[32];
        body_of(body, sizeof body, refused[i].gen, refused[i].podset, refused[i].levels);
        sign(record, sizeof record, f->r.id, refused[i].assignment, body);
        snprintf(uid, sizeof uid, "uid-x%zu", i);
        must(put_pod(f->peer, uid, f->r.id, "9", refused[i].assignment, record, &err), &err);
        assert_true(pod_stored(f->peer, uid, f->pool));
        assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                            "n1/uid-0 n3/uid-1 n2/uid-2 @0.1");
    }
    /* The same path, newer and of this reservation: slot 1 moves on. */
    body_of(body, sizeof body, "[0,6]", NULL, NULL);
    sign(record, sizeof record, f->r.id, asg_n7, body);
    must(put_pod(f->peer, "uid-y", f->r.id, "9", asg_n7, record, &err), &err);
    assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                        "n1/uid-0 n7/uid-1 n2/uid-2 @0.6");
    free(moved);
}

/* "gen" is [term, seq], integers 0 to 2^53: anything else is a malformed
 * record, which adopts nothing. */
static void test_adopt__malformed_generation(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char body[1024], record[2048], buf[256];
    static const char *const gens[] = {
        "[1]",    "[1,2,3]", "[-1,0]",  "[1.5,0]", "\"1,0\"", "[9007199254740993,0]",
        "[0,\"1\"]", "{}",   "null",    "[]",      "[0,null]",
    };
    f->peer = open_cache(f, "peer", KEY, sizeof KEY);
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
        char uid[32];
        body_of(body, sizeof body, gens[i], NULL, NULL);
        sign(record, sizeof record, f->r.id, f->r.assignment_json, body);
        snprintf(uid, sizeof uid, "uid-%zu", i);
        must(put_pod(f->peer, uid, f->r.id, "1", f->r.assignment_json, record, &err), &err);
        assert_true(pod_stored(f->peer, uid, f->pool));
        if (has_reservation(f->peer, f->r.id, f->pool))
            fail_msg("gen %s adopted", gens[i]);
    }
    /* The largest generation is one. */
    body_of(body, sizeof body, "[9007199254740992,3]", NULL, NULL);
    sign(record, sizeof record, f->r.id, f->r.assignment_json, body);
    must(put_pod(f->peer, "uid-ok", f->r.id, "1", f->r.assignment_json, record, &err), &err);
    assert_string_equal(slots_of(f->peer, f->r.id, f->pool, buf, sizeof buf),
                        "n1 n1/uid-ok n2 @9007199254740992.3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_adopt__same_reservation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt__refused_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt__malformed_signed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt__record_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt__newer_record_moves_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt__malformed_generation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
