/* Tests for who may take a reserved slot (lib/cache/cache_claim.c, cache.h
 * "Slot binding" and "Adoption"): a placed pod's reservation, slot and seal
 * can be read and copied by anyone; only a pod of the reservation's own
 * namespace and PodSet, sealed by topo-webhook, binds its slot. Others bind
 * nothing and are counted. The pods are the recorded Job pod of
 * fixtures/admission/job-pod as the API server holds it once created. */
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

#include "support/keys.h"
#include "support/tmpdir.h"
#include "topo/cache.h"
#include "topo/sha256.h"

#define HOST "kubernetes.io/hostname"
#define JOB_UID "0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a" /* the fixture's Job */
#define PODSET "team-a/job/" JOB_UID
#define RES "default.00000000000000a1"
#define ASSIGNMENT "topology.topo.io/assignment"

static const char *const LEVELS[] = {HOST};
#define KEY "the replicas' record key, 32 b."

typedef struct fx {
    char dir[256];
    topo_cache *cache, *peer;
    topo_pool *pool;
    json_t *pod; /* the fixture's pod object */
    char *record;
    topo_cache_reservation r;
} fx;

static void must(int rc, const topo_err *err)
{
    if (rc < 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

static topo_cache *open_cache(fx *f, const char *name)
{
    char path[400];
    topo_err err = TOPO_ERR_INIT;
    topo_keyring ring = test_keyring(KEY);
    topo_cache_opts o = {.record_keys = &ring};
    topo_cache *c = NULL;
    snprintf(path, sizeof path, "%s/%s.db", f->dir, name);
    must(topo_cache_open(&c, path, &o, &err), &err);
    return c;
}

/* PodSet PODSET's reservation RES: 2 slots on n1, 1 on n2. */
static void create_reservation(topo_cache *c, const char *podset)
{
    static const char *v1[] = {"n1"}, *v2[] = {"n2"};
    topo_assign_domain doms[] = {{v1, 2}, {v2, 1}};
    topo_assignment a = {LEVELS, 1, doms, 2};
    static const topo_resource req[] = {{"nvidia.com/gpu", 8}};
    topo_cache_reservation_spec spec = {.id = RES,
                                        .podset_key = podset,
                                        .topology_name = "default",
                                        .levels = LEVELS,
                                        .nlevels = 1,
                                        .assignment = &a,
                                        .requests = req,
                                        .nrequests = 1,
                                        .created_at = 1000,
                                        .expires_at = 4600};
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_create(c, &spec, &err), &err);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    const char *root = getenv("TOPO_SOURCE_DIR");
    char path[512];
    json_error_t jerr;
    topo_err err = TOPO_ERR_INIT;
    if (f == NULL || topo_test_tmpdir_make(f->dir, sizeof(f->dir), "claims-test") < 0)
        return -1;
    snprintf(path, sizeof path, "%s/fixtures/admission/job-pod/request.json", root ? root : ".");
    json_t *review = json_load_file(path, 0, &jerr);
    if (review == NULL)
        fail_msg("%s: %s", path, jerr.text);
    f->pod = json_deep_copy(json_object_get(json_object_get(review, "request"), "object"));
    json_decref(review);
    f->pool = topo_pool_create();
    f->cache = open_cache(f, "cache");
    create_reservation(f->cache, PODSET);
    topo_keyring ring = test_keyring(KEY);
    must(topo_cache_reservation_get(&f->r, f->cache, RES, f->pool, &err), &err);
    must(topo_cache_reservation_record(&f->record, &f->r, &ring, &err), &err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    topo_cache_close(f->cache);
    topo_cache_close(f->peer);
    topo_pool_free(f->pool);
    json_decref(f->pod);
    free(f->record);
    if (topo_test_tmpdir_remove(f->dir) < 0)
        return -1;
    free(f);
    return 0;
}

static void set_string(json_t *obj, const char *key, const char *value)
{
    if (value == NULL)
        json_object_del(obj, key);
    else if (json_object_set_new(obj, key, json_string(value)) < 0)
        fail_msg("out of memory");
}

/* The fixture's pod created: uid and name given, in namespace ns, carrying
 * the reservation, slot and seal (NULL: left out) topo-webhook wrote on it;
 * the seal computed for {seal_ns, seal_podset}. Malloc'd JSON text. */
static char *pod_text(const fx *f, const char *uid, const char *name, const char *ns,
                      const char *slot, const char *seal_ns, const char *seal_podset)
{
    char seal[TOPO_SHA256_HEX_LEN + 1];
    topo_err err = TOPO_ERR_INIT;
    json_t *pod = json_deep_copy(f->pod), *meta = json_object_get(pod, "metadata");
    json_t *ann = json_object_get(meta, "annotations");
    set_string(meta, "uid", uid);
    set_string(meta, "name", name);
    set_string(meta, "namespace", ns);
    set_string(meta, "resourceVersion", "10");
    set_string(ann, "topology.topo.io/reservation", RES);
    set_string(ann, "topology.topo.io/slot", slot);
    if (seal_ns != NULL) {
        topo_keyring ring = test_keyring(KEY);
        topo_cache_seal_fields sf = {seal_ns, seal_podset, RES, slot, NULL};
        must(topo_cache_seal(seal, &ring, &sf, &err), &err);
        set_string(ann, TOPO_CACHE_SEAL_ANNOTATION, seal);
    }
    char *text = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    assert_non_null(text);
    return text;
}

static void upsert(topo_cache *c, char *text)
{
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_upsert_pod(c, text, strlen(text), &err), &err);
    free(text);
}

/* Who holds slot `slot` of RES ("" when free). */
static const char *holder(topo_cache *c, int32_t slot, topo_pool *pool)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    must(topo_cache_reservation_get(&r, c, RES, pool, &err), &err);
    assert_true((size_t)slot < r.nslots);
    return r.slots[slot].pod_uid ? r.slots[slot].pod_uid : "";
}

/* The attack of issue 27: a tenant of another namespace copies a placed
 * pod's reservation, slot and seal onto pods of its own. */
static void test_claims__foreign_namespace_binds_nothing(void **state)
{
    fx *f = *state;
    /* copied verbatim (the seal is team-a's), and sealed for team-b with
     * the victim's PodSet (no seal for it can exist: the key is topo's) */
    upsert(f->cache, pod_text(f, "uid-x1", "thief-1", "team-b", "1", "team-a", PODSET));
    upsert(f->cache, pod_text(f, "uid-x2", "thief-2", "team-b", "2", "team-b", PODSET));
    assert_string_equal(holder(f->cache, 1, f->pool), "");
    assert_string_equal(holder(f->cache, 2, f->pool), "");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 2);
    /* the victim's own pod still takes its slot */
    upsert(f->cache, pod_text(f, "uid-v1", "train-7x2kq-abcde", "team-a", "1", "team-a", PODSET));
    assert_string_equal(holder(f->cache, 1, f->pool), "uid-v1");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 2);
}

/* A pod of the same namespace without a seal, with a seal for another slot,
 * or of another Job carrying the Job's pod's sealed annotations. */
static void test_claims__same_namespace_other_podset(void **state)
{
    fx *f = *state;
    topo_pool *pool = f->pool;
    upsert(f->cache, pod_text(f, "uid-n", "unsealed", "team-a", "0", NULL, NULL));
    assert_string_equal(holder(f->cache, 0, pool), "");
    char *text = pod_text(f, "uid-s", "other-slot", "team-a", "0", "team-a", PODSET);
    /* the seal of slot 0 on a pod asking for slot 2 */
    char *p = strstr(text, "\"topology.topo.io/slot\":\"0\"");
    assert_non_null(p);
    p[strlen("\"topology.topo.io/slot\":\"")] = '2';
    upsert(f->cache, text);
    assert_string_equal(holder(f->cache, 2, pool), "");

    /* another Job's pod (its own controller-uid) with the sealed copy */
    json_t *labels = json_object_get(json_object_get(f->pod, "metadata"), "labels");
    set_string(labels, "batch.kubernetes.io/controller-uid", "uid-of-another-job");
    set_string(labels, "controller-uid", "uid-of-another-job");
    upsert(f->cache, pod_text(f, "uid-o", "other-job-1", "team-a", "0", "team-a", PODSET));
    assert_string_equal(holder(f->cache, 0, pool), "");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 3);
}

/* The right pod binds, and stays bound through a MODIFIED event and a
 * relist of it. */
static void test_claims__own_pod_stays_bound(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    char *text = pod_text(f, "uid-0", "train-7x2kq-zz9p4", "team-a", "0", "team-a", PODSET);
    char ev[8192];
    snprintf(ev, sizeof ev, "{\"type\":\"ADDED\",\"object\":%s}", text);
    must(topo_cache_apply_event(f->cache, TOPO_CACHE_PODS, ev, strlen(ev), &err), &err);
    assert_string_equal(holder(f->cache, 0, f->pool), "uid-0");
    snprintf(ev, sizeof ev, "{\"type\":\"MODIFIED\",\"object\":%s}", text);
    must(topo_cache_apply_event(f->cache, TOPO_CACHE_PODS, ev, strlen(ev), &err), &err);
    assert_string_equal(holder(f->cache, 0, f->pool), "uid-0");
    snprintf(ev, sizeof ev, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"11\"},"
                            "\"items\":[%s]}", text);
    must(topo_cache_begin(f->cache, &err), &err);
    must(topo_cache_relist_begin(f->cache, TOPO_CACHE_PODS, &err), &err);
    must(topo_cache_upsert_list(f->cache, TOPO_CACHE_PODS, ev, strlen(ev), "relist", NULL, &err),
         &err);
    must(topo_cache_relist_end(f->cache, TOPO_CACHE_PODS, NULL, &err), &err);
    must(topo_cache_commit(f->cache, &err), &err);
    assert_string_equal(holder(f->cache, 0, f->pool), "uid-0");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 0);
    /* what the key was derived from is kept */
    topo_cache_pod got;
    must(topo_cache_get_pod(&got, f->cache, "uid-0", f->pool, &err), &err);
    assert_string_equal(got.owner_uid, JOB_UID);
    assert_string_equal(got.generate_name, "train-7x2kq-");
    free(text);
}

/* The pod text with the reservation's signed record and assignment added,
 * as topo-webhook wrote them before seals existed. Frees text. */
static char *with_record(const fx *f, char *text)
{
    json_error_t jerr;
    json_t *pod = json_loads(text, 0, &jerr);
    free(text);
    assert_non_null(pod);
    json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    set_string(ann, ASSIGNMENT, f->r.assignment_json);
    set_string(ann, TOPO_CACHE_RECORD_ANNOTATION, f->record);
    char *out = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    assert_non_null(out);
    return out;
}

/* A pod placed by a version before seals: no seal, but the reservation's
 * signed record. It keeps its slot after an upgrade (a new replica lists
 * it), when it is of the PodSet and in its namespace; the same record
 * copied onto another namespace's or another Job's pod binds nothing, and
 * a seal that does not verify is never taken for a missing one. */
static void test_claims__placed_before_seals(void **state)
{
    fx *f = *state;
    topo_pool *pool = f->pool;
    upsert(f->cache, with_record(f, pod_text(f, "uid-b", "thief", "team-b", "1", NULL, NULL)));
    assert_string_equal(holder(f->cache, 1, pool), "");
    char *text = with_record(f, pod_text(f, "uid-w", "bad-seal", "team-a", "1", "team-a",
                                         "team-a/job/another"));
    upsert(f->cache, text);
    assert_string_equal(holder(f->cache, 1, pool), "");
    upsert(f->cache, with_record(f, pod_text(f, "uid-0", "train-7x2kq-a", "team-a", "0", NULL,
                                             NULL)));
    assert_string_equal(holder(f->cache, 0, pool), "uid-0");
    json_t *labels = json_object_get(json_object_get(f->pod, "metadata"), "labels");
    set_string(labels, "batch.kubernetes.io/controller-uid", "uid-of-another-job");
    set_string(labels, "controller-uid", "uid-of-another-job");
    upsert(f->cache, with_record(f, pod_text(f, "uid-o", "other-job", "team-a", "2", NULL, NULL)));
    assert_string_equal(holder(f->cache, 2, pool), "");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 3);
}

/* A Kueue pod group's pod: its reservation is its role's
 * ("<group key>/role/<shape>"), and it binds under a seal over its role;
 * the same pod with another role, or of another group, binds nothing (once
 * every member of a placed group was refused, its slots charged on top of
 * its running pods and counted as foreign). */
static void test_claims__pod_group_role(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    int deleted = 0;
    const char *role_key = "team-a/pod-group/g/role/shape-1";
    must(topo_cache_reservation_delete(f->cache, RES, &deleted, &err), &err);
    create_reservation(f->cache, role_key);
    json_t *meta = json_object_get(f->pod, "metadata");
    set_string(json_object_get(meta, "labels"), "kueue.x-k8s.io/pod-group-name", "g");
    const char *roles[] = {"shape-2", "shape-1"}, *slots[] = {"1", "0"};
    for (int i = 0; i < 2; i++) {
        char seal[TOPO_SHA256_HEX_LEN + 1], uid[16];
        topo_keyring ring = test_keyring(KEY);
        topo_cache_seal_fields sf = {"team-a", role_key, RES, slots[i], roles[i]};
        must(topo_cache_seal(seal, &ring, &sf, &err), &err);
        char *text = pod_text(f, "uid-unused", "member", "team-a", slots[i], NULL, NULL);
        json_error_t jerr;
        json_t *pod = json_loads(text, 0, &jerr);
        free(text);
        json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
        snprintf(uid, sizeof uid, "uid-m%d", i);
        set_string(json_object_get(pod, "metadata"), "uid", uid);
        set_string(ann, "topology.topo.io/role", roles[i]);
        set_string(ann, TOPO_CACHE_SEAL_ANNOTATION, seal);
        upsert(f->cache, json_dumps(pod, JSON_COMPACT));
        json_decref(pod);
    }
    /* sealed for role shape-2, which is not the reservation's role */
    assert_string_equal(holder(f->cache, 1, f->pool), "");
    assert_string_equal(holder(f->cache, 0, f->pool), "uid-m1");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 1);
}

/* Adoption: a record signed for a PodSet of team-a, copied with the
 * reservation, slot and seal onto a pod of team-b, is not adopted by a
 * replica that lacks the reservation. */
static void test_claims__adoption_refused_across_namespaces(void **state)
{
    fx *f = *state;
    f->peer = open_cache(f, "peer");
    json_t *ann = json_object_get(json_object_get(f->pod, "metadata"), "annotations");
    set_string(ann, ASSIGNMENT, f->r.assignment_json);
    set_string(ann, TOPO_CACHE_RECORD_ANNOTATION, f->record);
    upsert(f->peer, pod_text(f, "uid-x", "thief", "team-b", "0", "team-a", PODSET));
    topo_cache_reservation r;
    assert_int_equal(topo_cache_reservation_get(&r, f->peer, RES, f->pool, NULL), TOPO_ENOTFOUND);
    assert_int_equal(topo_cache_adopted(f->peer), 0);
    assert_int_equal(topo_cache_foreign_claims(f->peer), 1);
    /* the same record on the PodSet's own pod is adopted and binds */
    upsert(f->peer, pod_text(f, "uid-1", "train-7x2kq-q8w2n", "team-a", "1", "team-a", PODSET));
    assert_int_equal(topo_cache_adopted(f->peer), 1);
    assert_string_equal(holder(f->peer, 1, f->pool), "uid-1");
}

/* A generateName pod of a Job's owner without podset-size: admission saw it
 * without a name and keyed it by owner and rank; the cache, which sees it
 * named, keys it the same. A request-kind PodSet (nothing else to key it
 * by) is bound by its seal alone. */
static void test_claims__derived_as_admitted(void **state)
{
    fx *f = *state;
    json_t *meta = json_object_get(f->pod, "metadata"), *labels = json_object_get(meta, "labels");
    json_object_clear(labels);
    set_string(labels, "batch.kubernetes.io/job-completion-index", "3");
    topo_err err = TOPO_ERR_INIT;
    int deleted = 0;
    must(topo_cache_reservation_delete(f->cache, RES, &deleted, &err), &err);
    const char *owner_rank = "team-a/owner/" JOB_UID "/3";
    create_reservation(f->cache, owner_rank);
    upsert(f->cache, pod_text(f, "uid-r", "train-7x2kq-r3", "team-a", "0", "team-a", owner_rank));
    assert_string_equal(holder(f->cache, 0, f->pool), "uid-r");

    must(topo_cache_reservation_delete(f->cache, RES, &deleted, &err), &err);
    const char *request = "team-a/request/705ab4f5-6393-11e8-b7cc-42010a800002";
    create_reservation(f->cache, request);
    json_object_del(meta, "ownerReferences");
    json_object_clear(json_object_get(meta, "annotations"));
    upsert(f->cache, pod_text(f, "uid-q", "train-7x2kq-q1", "team-a", "0", "team-a", request));
    assert_string_equal(holder(f->cache, 0, f->pool), "uid-q");
    /* ...but not across namespaces, sealed or not */
    upsert(f->cache, pod_text(f, "uid-b", "train-7x2kq-q2", "team-b", "1", "team-b", request));
    assert_string_equal(holder(f->cache, 1, f->pool), "");
    assert_int_equal(topo_cache_foreign_claims(f->cache), 1);
}

static int podset_row(const topo_cache_gated_podset *ps, void *payload)
{
    char *out = payload;
    char line[128];
    snprintf(line, sizeof line, "%s:%zu ", ps->key ? ps->key : ps->oldest->uid, ps->npods);
    strcat(out, line);
    return 0;
}

static int names_of(const topo_cache_pod *p, void *payload)
{
    strcat(payload, p->name);
    strcat(payload, " ");
    return 0;
}

/* The ungater's PodSets: a gated pod of team-b naming team-a's PodSet does
 * not join it (nor make a PodSet of its own). */
static void test_claims__gated_podset_of_another_namespace(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_kv gated[] = {{"topology.topo.io/wait-reason", "no rack has room"},
                       {"topology.topo.io/podset", "team-a/job/train"}};
    const struct {
        const char *uid, *ns, *name;
    } pods[] = {{"u-1", "team-a", "train-0"}, {"u-2", "team-a", "train-1"},
                {"u-3", "team-b", "intruder"}};
    for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++) {
        topo_cache_pod p = {pods[i].uid, pods[i].ns, pods[i].name, "", "Pending", NULL, 0, NULL,
                            0, gated, 2, 0, "1", 100 + (int64_t)i, NULL, NULL, 0};
        must(topo_cache_put_pod(f->cache, &p, &err), &err);
    }
    char out[256] = "";
    must(topo_cache_foreach_gated_podset(f->cache, podset_row, out, &err), &err);
    assert_string_equal(out, "team-a/job/train:2 ");
    out[0] = '\0';
    must(topo_cache_foreach_gated_pod(f->cache, "team-a/job/train", NULL, names_of, out, &err),
         &err);
    assert_string_equal(out, "train-0 train-1 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_claims__foreign_namespace_binds_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_claims__same_namespace_other_podset, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_claims__own_pod_stays_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims__placed_before_seals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims__pod_group_role, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims__adoption_refused_across_namespaces, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_claims__derived_as_admitted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims__gated_podset_of_another_namespace, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
