/* Tests for reservation generations and topo_cache_reservation_reassign
 * (lib/cache/cache_reassign.c): a new reservation is [term, 0]; a
 * replacement moves only the slots whose domain changed, by index, keeping
 * every claim, at a strictly higher generation; a refused call changes
 * nothing; the readers of slots see a domain named twice. */
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

#include "support/dbfiles.h"
#include "topo/cache.h"
#include "topo/keyring.h"

#define GPU "nvidia.com/gpu"
#define HOST "kubernetes.io/hostname"
#define RACK "topology.topo.io/rack"
#define ID "default.00000000000000r1"

static const char *const DOMAIN[] = {"r1"};
static const char *const LEVELS[] = {RACK, HOST};

typedef struct fx {
    topo_test_cachedir tmp;
    topo_cache *cache;
    topo_pool *pool;
} fx;

static void must(int rc, const topo_err *err)
{
    if (rc < 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

/* An assignment in LEVELS of domains given as "host:count" in order, all
 * in rack r1; its JSON as a pod's annotation carries it. */
typedef struct asg {
    const char *values[8][2];
    topo_assign_domain doms[8];
    topo_assignment a;
    char json[1024];
} asg;

static void make_asg(asg *out, const char *const *hosts, const int32_t *counts, size_t n)
{
    size_t len;
    memset(out, 0, sizeof(*out));
    len = (size_t)snprintf(out->json, sizeof out->json,
                           "{\"levels\":[\"%s\",\"%s\"],\"domains\":[", RACK, HOST);
    for (size_t i = 0; i < n; i++) {
        out->values[i][0] = "r1";
        out->values[i][1] = hosts[i];
        out->doms[i].values = out->values[i];
        out->doms[i].count = counts[i];
        len += (size_t)snprintf(out->json + len, sizeof out->json - len,
                                "%s{\"values\":[\"r1\",\"%s\"],\"count\":%d}", i ? "," : "",
                                hosts[i], (int)counts[i]);
    }
    snprintf(out->json + len, sizeof out->json - len, "]}");
    out->a.levels = LEVELS;
    out->a.nlevels = 2;
    out->a.domains = out->doms;
    out->a.ndomains = n;
}

/* The reservation: 2 pods on n9, 2 on n10, 8 GPUs a pod, term 3. */
static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    topo_err err = TOPO_ERR_INIT;
    static const char *hosts[] = {"n9", "n10"};
    static const int32_t counts[] = {2, 2};
    static const topo_resource req[] = {{GPU, 8}};
    asg a;

    if (f == NULL)
        return -1;
    if (topo_test_cachedir_make(&f->tmp, "reassign-test") < 0)
        return -1;
    f->pool = topo_pool_create();
    must(topo_cache_open(&f->cache, f->tmp.path, NULL, &err), &err);
    make_asg(&a, hosts, counts, 2);
    topo_cache_reservation_spec spec = {.id = ID,
                                        .podset_key = "ns/job/uid",
                                        .topology_name = "default",
                                        .levels = LEVELS,
                                        .nlevels = 2,
                                        .assignment = &a.a,
                                        .assignment_json = a.json,
                                        .requests = req,
                                        .nrequests = 1,
                                        .created_at = 100,
                                        .expires_at = 1000,
                                        .gen_term = 3,
                                        .domain = DOMAIN,
                                        .ndomain = 1};
    must(topo_cache_reservation_create(f->cache, &spec, &err), &err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_cache_close(f->cache);
    topo_pool_free(f->pool);
    topo_test_cachedir_remove(&f->tmp);
    free(f);
    return 0;
}

/* The slots as "host[/pod] ..." and the generation, e.g. "n9/p0 n9 n10 n10 @3.0". */
static const char *slots_of(fx *f, char *buf, size_t size)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    size_t len = 0;
    must(topo_cache_reservation_get(&r, f->cache, ID, f->pool, &err), &err);
    buf[0] = '\0';
    for (size_t i = 0; i < r.nslots; i++) {
        assert_int_equal(r.slots[i].index, (int32_t)i);
        assert_int_equal(r.slots[i].nvalues, 2);
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s ", r.slots[i].values[1],
                                r.slots[i].pod_uid ? "/" : "",
                                r.slots[i].pod_uid ? r.slots[i].pod_uid : "");
    }
    snprintf(buf + len, size - len, "@%lld.%lld", (long long)r.gen_term, (long long)r.gen_seq);
    return buf;
}

static const char *assignment_of(fx *f)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_get(&r, f->cache, ID, f->pool, &err), &err);
    return r.assignment_json;
}

static void claim(fx *f, const char *pod, int32_t rank)
{
    topo_cache_slot s;
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_claim(&s, f->cache, ID, pod, rank, 200, f->pool, &err), &err);
}

static int reassign(fx *f, const char *const *hosts, const int32_t *counts, size_t n,
                    int64_t term, int64_t seq, topo_err *err)
{
    asg a;
    make_asg(&a, hosts, counts, n);
    return topo_cache_reservation_reassign(f->cache, ID, &a.a, a.json, term, seq, err);
}

/* A new reservation: generation [term, 0], its PodSet's domain kept, read
 * back, and carried by its record (which a moved reservation keeps). */
static void test_reassign__create_generation(void **state)
{
    fx *f = *state;
    char buf[256];
    topo_err err = TOPO_ERR_INIT;
    assert_string_equal(slots_of(f, buf, sizeof buf), "n9 n9 n10 n10 @3.0");
    topo_cache_reservation r;
    must(topo_cache_reservation_get(&r, f->cache, ID, f->pool, &err), &err);
    assert_int_equal(r.ndomain, 1);
    assert_string_equal(r.domain[0], "r1");
    topo_keyring keys = TOPO_KEYRING_INIT;
    static const char key[] = "test_cache_reassign record key!!";
    must(topo_keyring_add(&keys, key, sizeof key - 1, "k", &err), &err);
    char *record = NULL;
    must(topo_cache_reservation_record(&record, &r, &keys, &err), &err);
    assert_non_null(strstr(record, "\"domain\":[\"r1\"]"));
    free(record);
    static const char *h[] = {"n11"};
    static const int32_t c[] = {4};
    must(reassign(f, h, c, 1, 3, 1, &err), &err);
    must(topo_cache_reservation_get(&r, f->cache, ID, f->pool, &err), &err);
    assert_int_equal(r.ndomain, 1);
    assert_string_equal(r.domain[0], "r1");
}

/* A pod as the cache holds it: bound to node ("" unbound), in phase. */
static void pod(fx *f, const char *uid, const char *node, const char *phase, int terminating)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache_pod p = {uid,  "ns", uid,  node, phase, NULL, 0,           NULL, 0,
                        NULL, 0,    0,    "1",  1,     NULL, NULL,        terminating};
    must(topo_cache_put_pod(f->cache, &p, &err), &err);
}

/* n10 failed under slot 3: it moves to n11, slots 0-2 stay, every claim
 * stays (p3 is pending, not bound yet); then slot 0 of n9 moves to n11
 * too, so n11 is named twice and not in sorted order. */
static void test_reassign__moves_slots_by_index(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char buf[256];

    pod(f, "p0", "", "Pending", 0);
    pod(f, "p3", "", "Pending", 0);
    claim(f, "p0", 0);
    claim(f, "p3", 3);
    static const char *h1[] = {"n9", "n10", "n11"};
    static const int32_t c1[] = {2, 1, 1};
    must(reassign(f, h1, c1, 3, 3, 1, &err), &err);
    assert_string_equal(slots_of(f, buf, sizeof buf), "n9/p0 n9 n10 n11/p3 @3.1");
    assert_non_null(strstr(assignment_of(f), "{\"values\":[\"r1\",\"n11\"],\"count\":1}]}"));

    static const char *h2[] = {"n11", "n9", "n10", "n11"};
    static const int32_t c2[] = {1, 1, 1, 1};
    asg a;
    make_asg(&a, h2, c2, 4);
    must(topo_cache_reservation_reassign(f->cache, ID, &a.a, a.json, 4, 0, &err), &err);
    assert_string_equal(slots_of(f, buf, sizeof buf), "n11/p0 n9 n10 n11/p3 @4.0");
    /* stored exactly as given */
    assert_string_equal(assignment_of(f), a.json);

    /* A claim still finds its slot; the next free one is slot 1 (n9). */
    topo_cache_slot s;
    must(topo_cache_reservation_claim(&s, f->cache, ID, "p3", -1, 300, f->pool, &err), &err);
    assert_int_equal(s.index, 3);
    assert_string_equal(s.values[1], "n11");
    must(topo_cache_reservation_claim(&s, f->cache, ID, "p1", -1, 300, f->pool, &err), &err);
    assert_int_equal(s.index, 1);
    assert_string_equal(s.values[1], "n9");
}

/* A moved slot's claim: a provisional one and a pod not bound yet keep it;
 * a pod bound (to the failed node), finished, being deleted or unknown to
 * the cache gives it up, so that its replacement takes the slot. A slot
 * that does not move keeps whatever holds it. */
static void test_reassign__moved_claims(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char buf[256];

    pod(f, "pending", "", "Pending", 0);
    pod(f, "bound", "n9.example.com", "Running", 0);
    claim(f, "pending", 0);
    claim(f, "bound", 1);
    claim(f, "claim:rank/2", 2);
    claim(f, "unknown", 3);
    static const char *h[] = {"n11", "n12"};
    static const int32_t c[] = {2, 2};
    must(reassign(f, h, c, 2, 3, 1, &err), &err);
    assert_string_equal(slots_of(f, buf, sizeof buf),
                        "n11/pending n11 n12/claim:rank/2 n12 @3.1");

    /* finished, or being deleted: given up too */
    pod(f, "done", "", "Failed", 0);
    pod(f, "going", "", "Pending", 1);
    claim(f, "done", 1);
    claim(f, "going", 3);
    static const char *h2[] = {"n9", "n10"};
    must(reassign(f, h2, c, 2, 3, 2, &err), &err);
    assert_string_equal(slots_of(f, buf, sizeof buf), "n9/pending n9 n10/claim:rank/2 n10 @3.2");

    /* not moved: kept, whoever holds it */
    claim(f, "bound", 1);
    static const char *h3[] = {"n9", "n10", "n12"};
    static const int32_t c3[] = {2, 1, 1};
    must(reassign(f, h3, c3, 3, 3, 3, &err), &err);
    assert_string_equal(slots_of(f, buf, sizeof buf),
                        "n9/pending n9/bound n10/claim:rank/2 n12 @3.3");
}

/* Nothing changes after a refused call. */
static void test_reassign__refused(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char before[256], after[256];
    static const char *h[] = {"n9", "n11"};
    static const int32_t c[] = {2, 2};

    pod(f, "p1", "", "Pending", 0); /* not bound yet: its claim moves with its slot */
    claim(f, "p1", 1);
    must(reassign(f, h, c, 2, 3, 2, &err), &err);
    slots_of(f, before, sizeof before);
    assert_string_equal(before, "n9 n9/p1 n11 n11 @3.2");
    char *json_before = strdup(assignment_of(f));

    static const char *h2[] = {"n12", "n11"};
    /* not newer: equal, lower seq, lower term */
    assert_int_equal(reassign(f, h2, c, 2, 3, 2, &err), TOPO_ECONFLICT);
    assert_non_null(strstr(err.text, "not newer"));
    assert_int_equal(reassign(f, h2, c, 2, 3, 1, &err), TOPO_ECONFLICT);
    assert_int_equal(reassign(f, h2, c, 2, 2, 9, &err), TOPO_ECONFLICT);
    /* not one domain per slot */
    static const int32_t c3[] = {2, 1};
    assert_int_equal(reassign(f, h2, c3, 2, 3, 3, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "3 pods"));
    static const int32_t c5[] = {2, 3};
    assert_int_equal(reassign(f, h2, c5, 2, 3, 3, &err), TOPO_EINVALID);
    /* other levels (the hostname only) */
    static const char *const hostonly[] = {HOST};
    static const char *v[] = {"n12"};
    topo_assign_domain d = {v, 4};
    topo_assignment other = {hostonly, 1, &d, 1};
    assert_int_equal(topo_cache_reservation_reassign(f->cache, ID, &other, NULL, 3, 3, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "levels"));
    /* a count not positive, an empty value, a negative generation */
    static const int32_t c0[] = {4, 0};
    assert_int_equal(reassign(f, h2, c0, 2, 3, 3, &err), TOPO_EINVALID);
    static const char *hempty[] = {"", "n11"};
    assert_int_equal(reassign(f, hempty, c, 2, 3, 3, &err), TOPO_EINVALID);
    assert_int_equal(reassign(f, h2, c, 2, -1, 9, &err), TOPO_EINVALID);
    /* no such reservation */
    asg a;
    make_asg(&a, h2, c, 2);
    assert_int_equal(
        topo_cache_reservation_reassign(f->cache, "default.missing", &a.a, a.json, 9, 9, &err),
        TOPO_ENOTFOUND);

    assert_string_equal(slots_of(f, after, sizeof after), before);
    assert_string_equal(assignment_of(f), json_before);
    free(json_before);

    /* A higher term wins over any seq. */
    must(reassign(f, h2, c, 2, 4, 0, &err), &err);
    assert_string_equal(slots_of(f, after, sizeof after), "n12 n12/p1 n11 n11 @4.0");
}

static int sum_reserved(const topo_cache_reserved *r, void *payload)
{
    char *out = payload;
    size_t len = strlen(out);
    snprintf(out + len, 256 - len, "%s:%d ", r->values[1], (int)r->count);
    return 0;
}

static int sum_unclaimed(const topo_cache_unclaimed *u, void *payload)
{
    *(int32_t *)payload += u->count;
    return 0;
}

/* The readers of slots with a domain named twice, apart: each domain
 * charged once with all its slots; the free ones counted; GC as before. */
static void test_reassign__readers_see_repeated_domains(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char out[256] = "";
    int32_t unclaimed = 0;
    size_t deleted = 9;
    static const char *h[] = {"n9", "n10", "n9"};
    static const int32_t c[] = {1, 2, 1};

    claim(f, "p2", 2);
    must(reassign(f, h, c, 3, 3, 1, &err), &err);
    must(topo_cache_foreach_reserved(f->cache, 200, sum_reserved, out, &err), &err);
    assert_string_equal(out, "n9:2 n10:2 ");
    must(topo_cache_foreach_unclaimed(f->cache, 200, sum_unclaimed, &unclaimed, &err), &err);
    assert_int_equal(unclaimed, 3);
    must(topo_cache_reservation_gc(f->cache, 500, &deleted, &err), &err);
    assert_int_equal(deleted, 0);
    must(topo_cache_reservation_gc(f->cache, 1000, &deleted, &err), &err);
    assert_int_equal(deleted, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reassign__create_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reassign__moves_slots_by_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reassign__moved_claims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reassign__refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reassign__readers_see_repeated_domains, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
