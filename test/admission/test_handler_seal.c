#define _POSIX_C_SOURCE 200809L
/* Tests for the seals on pods (lib/admission/handler_seal.c) through
 * topo_admission_handle and topo_admission_ungate_pod, over the recorded Job
 * pod of fixtures/admission/job-pod and the fixtures/clusters/hgx-h100.yaml
 * snapshot: a placed or gated pod carries topology.topo.io/seal; our own
 * output sent back (a reinvocation) is recognised by it; annotations topo
 * writes, carried without a seal that verifies (forged, copied from another
 * pod, another namespace, another role), are removed first thing in the
 * patch, warned about, counted, and trusted for nothing: the shape check
 * applies, a pod group member's role is its own shape; the ungater removes
 * them from a gated pod its author edited. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/inventory.h"
#include "topo/keyring.h"
#include "topo/kueue.h"
#include "topo/live.h"
#include "support/jsonpatch_apply.h"
#include "support/racks.h"

#define RACK "topology.topo.io/rack"
#define ANN "/metadata/annotations"

static const char *const levels[] = {"topology.topo.io/datacenter", "topology.topo.io/spine",
                                     "topology.topo.io/leaf", "topology.topo.io/rack",
                                     "kubernetes.io/hostname"};

typedef struct fx {
    topo_inventory *inv;
    topo_live *live;
    topo_cache *cache;
    topo_admission_ctx *ctx;
    topo_keyring keys;
} fx;

static const char *source_dir(void)
{
    const char *src = getenv("TOPO_SOURCE_DIR");
    return src ? src : ".";
}

/* The hgx-h100 cluster, reservations in memory, policy gate; keys: sealed
 * with record keys (NULL: none configured). */
static void fx_open(fx *f, int keys)
{
    char path[4096];
    topo_err err = TOPO_ERR_INIT;
    static const char material[] = "test_seal record key: 32 bytes!!";
    memset(f, 0, sizeof(*f));
    snprintf(path, sizeof path, "%s/fixtures/clusters/hgx-h100.yaml", source_dir());
    assert_int_equal(topo_keyring_add(&f->keys, material, sizeof material - 1, "test", &err), 0);
    assert_int_equal(topo_inventory_create(&f->inv, &err), 0);
    assert_int_equal(topo_inventory_load_nodes_file(f->inv, path, &err), 0);
    assert_int_equal(topo_cache_open(&f->cache, ":memory:", NULL, &err), 0);
    topo_snapshot_opts so = {"default", levels, 5, NULL, 0};
    assert_int_equal(topo_live_create(&f->live, &so, &err), 0);
    for (size_t i = 0; i < topo_inventory_node_count(f->inv); i++)
        assert_int_equal(topo_live_upsert_node(f->live, topo_inventory_node(f->inv, i), &err), 0);
    assert_int_equal(topo_live_commit(f->live, &err), 0);
    topo_admission_topology t = {"default", levels, 5, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                 f->live, 0};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f->cache;
    ao.record_keys = keys ? &f->keys : NULL;
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        fail_msg("ctx: %s", err.text);
}

static void fx_close(fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
    topo_inventory_free(f->inv);
}

static uint64_t foreign(fx *f)
{
    topo_admission_stats st;
    topo_admission_get_stats(f->ctx, &st);
    return st.foreign_annotations;
}

static size_t reservations(fx *f)
{
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, f->cache, NULL), 0);
    return st.reservations;
}

/* The recorded Job pod (fixtures/admission/job-pod: Job train-7x2kq of
 * team-a, 8 GPUs, rack required), as completion index idx of a `size`-pod
 * PodSet in namespace ns. A new reference. */
static json_t *job_pod(const char *ns, int idx, int size)
{
    char path[4096], n[16];
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/fixtures/admission/job-pod/request.json", source_dir());
    json_t *review = json_load_file(path, 0, &jerr);
    assert_non_null(review);
    json_t *pod = json_deep_copy(json_object_get(json_object_get(review, "request"), "object"));
    json_decref(review);
    assert_non_null(pod);
    json_t *meta = json_object_get(pod, "metadata");
    json_object_set_new(meta, "namespace", json_string(ns));
    snprintf(n, sizeof n, "%d", idx);
    json_object_set_new(json_object_get(meta, "labels"), "batch.kubernetes.io/job-completion-index",
                        json_string(n));
    json_t *ann = json_object_get(meta, "annotations");
    json_object_set_new(ann, "batch.kubernetes.io/job-completion-index", json_string(n));
    snprintf(n, sizeof n, "%d", size);
    json_object_set_new(ann, TOPO_PODSET_SIZE_ANNOTATION, json_string(n));
    return pod;
}

/* The pod's controller uid (its Job, its PodSet) set to uid. */
static void set_job(json_t *pod, const char *uid)
{
    json_t *meta = json_object_get(pod, "metadata");
    json_object_set_new(json_object_get(meta, "labels"), "batch.kubernetes.io/controller-uid",
                        json_string(uid));
    json_t *owner = json_array_get(json_object_get(meta, "ownerReferences"), 0);
    json_object_set_new(owner, "uid", json_string(uid));
}

/* Pod `name` of pod group "pg" of 2 pods in team-a, gpus each, rack
 * required. A new reference. */
static json_t *group_pod(const char *name, int gpus)
{
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:{s:s, s:s}}, s:{s:[{s:s, s:s, "
                            "s:{s:{s:I, s:s}}}]}}",
                            "kind", "Pod", "apiVersion", "v1", "metadata", "name", name,
                            "namespace", "team-a", "labels", "kueue.x-k8s.io/pod-group-name", "pg",
                            "annotations", "kueue.x-k8s.io/pod-group-total-count", "2",
                            "kueue.x-k8s.io/podset-required-topology", RACK, "spec", "containers",
                            "name", "worker", "image", "x", "resources", "requests",
                            "nvidia.com/gpu", (json_int_t)gpus, "cpu", "16");
    assert_non_null(pod);
    return pod;
}

static void set_annotation(json_t *pod, const char *key, const char *value)
{
    json_t *meta = json_object_get(pod, "metadata");
    if (json_object_get(meta, "annotations") == NULL)
        json_object_set_new(meta, "annotations", json_object());
    json_object_set_new(json_object_get(meta, "annotations"), key, json_string(value));
}

static const char *annotation(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), key));
}

/* One answer: the response and its patch (NULL when none). */
typedef racks_said said;

/* A Pod CREATE review of pod (borrowed) sent to the handler. */
static said ask(fx *f, const json_t *pod, const char *uid, int dry_run)
{
    return racks_review(f->ctx, pod, uid, dry_run);
}

static void said_free(said *s)
{
    racks_said_free(s);
}

static int allowed(const said *s)
{
    return json_is_true(json_object_get(s->resp, "allowed"));
}

static const char *warning(const said *s)
{
    const char *w = json_string_value(json_array_get(json_object_get(s->resp, "warnings"), 0));
    return w ? w : "";
}

/* pod with the answer's patch applied: a new reference. */
static json_t *patched_pod(const json_t *pod, const said *s)
{
    return racks_patched(pod, s);
}

static char *escape(const char *key)
{
    static char esc[512];
    size_t k = 0;
    for (const char *c = key; *c && k + 3 < sizeof esc; c++) {
        if (*c == '~' || *c == '/') {
            esc[k++] = '~';
            esc[k++] = *c == '~' ? '0' : '1';
        } else {
            esc[k++] = *c;
        }
    }
    esc[k] = '\0';
    return esc;
}

/* Index of operation `op` on annotation key, -1 when none. */
static long ann_op(const json_t *ops, const char *op, const char *key)
{
    char path[600];
    size_t i;
    const json_t *o;
    snprintf(path, sizeof path, ANN "/%s", escape(key));
    json_array_foreach(ops, i, o) {
        if (strcmp(json_string_value(json_object_get(o, "op")), op) == 0 &&
            strcmp(json_string_value(json_object_get(o, "path")), path) == 0)
            return (long)i;
    }
    return -1;
}

/* How many operations remove something. */
static size_t removals(const json_t *ops)
{
    size_t i, n = 0;
    const json_t *o;
    json_array_foreach(ops, i, o) {
        n += strcmp(json_string_value(json_object_get(o, "op")), "remove") == 0;
    }
    return n;
}

/* The seal on pod verifies for the fields given under f's keys. */
static int seal_ok(fx *f, const json_t *pod, const char *key, const char *role)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "namespace"));
    topo_cache_seal_fields sf = {ns, key, annotation(pod, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                                 annotation(pod, TOPO_ADMISSION_SLOT_ANNOTATION), role};
    return topo_cache_seal_verify(&f->keys, annotation(pod, TOPO_CACHE_SEAL_ANNOTATION), &sf);
}

#define JOB_KEY "team-a/job/0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a"

/* A placed pod carries a seal over its namespace, PodSet, reservation and
 * slot under the record keys. Sent back with the patch applied (a
 * reinvocation, dryRun or not): its slot, nothing removed, no warning,
 * nothing counted, no second claim. */
static void test_seal__placed_pod_sealed_and_reinvoked(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 1);
    json_t *pod = job_pod("team-a", 0, 2);
    said first = ask(&f, pod, "r-0", 0);
    assert_true(allowed(&first));
    assert_non_null(first.ops);
    json_t *out = patched_pod(pod, &first);
    assert_non_null(annotation(out, TOPO_CACHE_SEAL_ANNOTATION));
    assert_string_equal(annotation(out, TOPO_ADMISSION_SLOT_ANNOTATION), "0");
    assert_int_equal(seal_ok(&f, out, JOB_KEY, NULL), 1);
    /* the same seal names nothing else: another namespace, slot, role */
    json_object_set_new(json_object_get(out, "metadata"), "namespace", json_string("team-b"));
    assert_int_equal(seal_ok(&f, out, JOB_KEY, NULL), 0);
    json_object_set_new(json_object_get(out, "metadata"), "namespace", json_string("team-a"));
    assert_int_equal(seal_ok(&f, out, JOB_KEY, "r"), 0);

    for (int dry = 0; dry < 2; dry++) {
        said again = ask(&f, out, dry ? "r-2" : "r-1", dry);
        assert_true(allowed(&again));
        assert_string_equal(warning(&again), "");
        if (again.ops != NULL) {
            assert_int_equal(removals(again.ops), 0);
            assert_int_equal(ann_op(again.ops, "replace", TOPO_ADMISSION_SLOT_ANNOTATION), -1);
        }
        said_free(&again);
    }
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, f.cache, NULL), 0);
    assert_int_equal(st.claimed_slots, 1);
    assert_int_equal(reservations(&f), 1);
    assert_int_equal(foreign(&f), 0);
    json_decref(out);
    json_decref(pod);
    said_free(&first);
    fx_close(&f);
}

/* The pod of a Job that is not Indexed: no completion index, named by
 * generateName, so its slot is claimed under its request's uid. */
static json_t *plain_job_pod(int size)
{
    json_t *pod = job_pod("team-a", 0, size);
    json_t *meta = json_object_get(pod, "metadata");
    json_object_del(json_object_get(meta, "labels"), "batch.kubernetes.io/job-completion-index");
    json_object_del(json_object_get(meta, "annotations"),
                    "batch.kubernetes.io/job-completion-index");
    return pod;
}

/* A reinvocation comes with a new request uid (the API server makes one for
 * every call of a webhook): a pod claimed under its request's uid gets the
 * slot its sealed output names again, not a second one, so the Job's later
 * pods still find theirs (once, each reinvocation took a slot and the last
 * pods were admitted with no nodeSelector: "all 4 slots are claimed"). */
static void test_seal__reinvoked_with_a_new_uid(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 1);
    json_t *pod = plain_job_pod(4);
    for (int i = 0; i < 4; i++) {
        char uid[32], again_uid[32], slot[16];
        snprintf(uid, sizeof uid, "first-%d", i);
        snprintf(again_uid, sizeof again_uid, "again-%d", i);
        snprintf(slot, sizeof slot, "%d", i);
        said first = ask(&f, pod, uid, 0);
        assert_true(allowed(&first));
        json_t *out = patched_pod(pod, &first);
        assert_string_equal(annotation(out, TOPO_ADMISSION_SLOT_ANNOTATION), slot);
        said again = ask(&f, out, again_uid, 0);
        assert_true(allowed(&again));
        assert_string_equal(warning(&again), "");
        if (again.ops != NULL) {
            assert_int_equal(removals(again.ops), 0);
            assert_int_equal(ann_op(again.ops, "replace", TOPO_ADMISSION_SLOT_ANNOTATION), -1);
        }
        said_free(&again);
        said_free(&first);
        json_decref(out);
    }
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, f.cache, NULL), 0);
    assert_int_equal(st.claimed_slots, 4);
    assert_int_equal(foreign(&f), 0);
    json_decref(pod);
    fx_close(&f);
}

/* Without record keys the ctx seals with a key of its own: its output
 * still comes back as its own, and the seal verifies under no other key. */
static void test_seal__without_record_keys(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *pod = job_pod("team-a", 0, 2);
    said first = ask(&f, pod, "k-0", 0);
    json_t *out = patched_pod(pod, &first);
    assert_non_null(annotation(out, TOPO_CACHE_SEAL_ANNOTATION));
    assert_null(annotation(out, TOPO_CACHE_RECORD_ANNOTATION));
    assert_int_equal(seal_ok(&f, out, JOB_KEY, NULL), 0);
    said again = ask(&f, out, "k-1", 0);
    assert_true(allowed(&again));
    assert_string_equal(warning(&again), "");
    assert_true(again.ops == NULL || removals(again.ops) == 0);
    assert_int_equal(foreign(&f), 0);
    said_free(&again);
    json_decref(out);
    json_decref(pod);
    said_free(&first);
    fx_close(&f);
}

/* The victim's placed pod: its patched object (a new reference). */
static json_t *place_victim(fx *f, const char *ns, int size)
{
    json_t *pod = job_pod(ns, 0, size);
    said s = ask(f, pod, "victim-0", 0);
    assert_true(allowed(&s));
    json_t *out = patched_pod(pod, &s);
    assert_non_null(annotation(out, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    said_free(&s);
    json_decref(pod);
    return out;
}

/* Every annotation topo writes, forged on a topology pod of another PodSet
 * (copied from a placed pod, its seal included, plus a role, a PodSet and a
 * wait reason): each removed before anything is added, whatever the
 * answer (placed; the same for dryRun), named in the warning, counted once;
 * the pod placed on its own terms, in a reservation of its own, sealed for
 * itself. */
static void test_seal__forged_annotations_stripped(void **state)
{
    (void)state;
    static const char *const written[] = TOPO_ADMISSION_WRITTEN_ANNOTATIONS;
    fx f;
    fx_open(&f, 1);
    json_t *victim = place_victim(&f, "team-a", 2);
    json_t *pod = job_pod("team-a", 0, 1);
    set_job(pod, "attacker-job-uid");
    for (size_t i = 0; i < 4; i++) /* assignment, reservation, slot, record */
        set_annotation(pod, written[i], annotation(victim, written[i]));
    set_annotation(pod, TOPO_ADMISSION_SLOT_ANNOTATION, "1");
    set_annotation(pod, TOPO_ADMISSION_ROLE_ANNOTATION, "0123abcd");
    set_annotation(pod, TOPO_ADMISSION_WAIT_REASON_ANNOTATION, "forged");
    set_annotation(pod, TOPO_ADMISSION_PODSET_ANNOTATION, JOB_KEY);
    set_annotation(pod, TOPO_CACHE_SEAL_ANNOTATION, annotation(victim, TOPO_CACHE_SEAL_ANNOTATION));

    for (int dry = 1; dry >= 0; dry--) {
        said s = ask(&f, pod, dry ? "a-dry" : "a-0", dry);
        assert_true(allowed(&s));
        assert_non_null(s.ops);
        for (size_t i = 0; written[i] != NULL; i++)
            assert_int_equal(ann_op(s.ops, "remove", written[i]), (long)i);
        assert_string_equal(warning(&s), "topo-webhook: removed unsealed topology.topo.io/"
                                         "{assignment,reservation,slot,reservation-spec,role,"
                                         "wait-reason,podset..."); /* cut at 120 */
        json_t *out = patched_pod(pod, &s);
        assert_null(annotation(out, TOPO_ADMISSION_ROLE_ANNOTATION));
        assert_null(annotation(out, TOPO_ADMISSION_WAIT_REASON_ANNOTATION));
        assert_null(annotation(out, TOPO_ADMISSION_PODSET_ANNOTATION));
        assert_string_not_equal(annotation(out, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                                annotation(victim, TOPO_ADMISSION_RESERVATION_ANNOTATION));
        assert_string_equal(annotation(out, TOPO_ADMISSION_SLOT_ANNOTATION), "0");
        if (!dry)
            assert_int_equal(seal_ok(&f, out, "team-a/job/attacker-job-uid", NULL), 1);
        json_decref(out);
        said_free(&s);
        assert_int_equal(foreign(&f), dry ? 1 : 2);
    }
    assert_int_equal(reservations(&f), 2);
    json_decref(pod);
    json_decref(victim);
    fx_close(&f);
}

/* A pod of the victim's own PodSet of another shape (4 GPUs instead of 8),
 * carrying the reservation and a slot it was not given: once the shape
 * check was skipped on the mere presence of the reservation annotation and
 * the pod took a slot sized for others; now it is checked and refused. */
static void test_seal__forged_reservation_is_shape_checked(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 1);
    json_t *victim = place_victim(&f, "team-a", 2);
    json_t *pod = job_pod("team-a", 1, 2);
    json_t *c0 = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_t *requests = json_object_get(json_object_get(c0, "resources"), "requests");
    json_object_set_new(requests, "nvidia.com/gpu", json_string("4"));
    set_annotation(pod, TOPO_ADMISSION_RESERVATION_ANNOTATION,
                   annotation(victim, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    set_annotation(pod, TOPO_ADMISSION_SLOT_ANNOTATION, "1");
    set_annotation(pod, TOPO_CACHE_SEAL_ANNOTATION, annotation(victim, TOPO_CACHE_SEAL_ANNOTATION));
    said s = ask(&f, pod, "shape-1", 0);
    assert_false(allowed(&s));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s.resp, "status"), "code")),
                     400);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(s.resp, "status"),
                                                             "message")),
                           "shape"));
    assert_null(s.ops);
    assert_int_equal(foreign(&f), 1);
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, f.cache, NULL), 0);
    assert_int_equal(st.claimed_slots, 1);
    said_free(&s);
    json_decref(pod);
    json_decref(victim);
    fx_close(&f);
}

/* A placed pod's annotations, its genuine seal included, copied onto the
 * same Job's pod in another namespace: the seal names team-a, so they are
 * removed and the pod is placed as its own PodSet's. */
static void test_seal__copied_seal_other_namespace(void **state)
{
    (void)state;
    static const char *const copied[] = {
        TOPO_ADMISSION_ASSIGNMENT_ANNOTATION, TOPO_ADMISSION_RESERVATION_ANNOTATION,
        TOPO_ADMISSION_SLOT_ANNOTATION, TOPO_CACHE_RECORD_ANNOTATION, TOPO_CACHE_SEAL_ANNOTATION};
    fx f;
    fx_open(&f, 1);
    json_t *victim = place_victim(&f, "team-a", 2);
    json_t *pod = job_pod("team-b", 0, 2);
    for (size_t i = 0; i < 5; i++)
        set_annotation(pod, copied[i], annotation(victim, copied[i]));
    said s = ask(&f, pod, "b-0", 0);
    assert_true(allowed(&s));
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(ann_op(s.ops, "remove", copied[i]), (long)i);
    assert_string_equal(warning(&s), "topo-webhook: removed unsealed topology.topo.io/"
                                     "{assignment,reservation,slot,reservation-spec,seal}");
    json_t *out = patched_pod(pod, &s);
    assert_string_not_equal(annotation(out, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                            annotation(victim, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    assert_int_equal(seal_ok(&f, out, "team-b/job/0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a", NULL), 1);
    assert_int_equal(foreign(&f), 1);
    assert_int_equal(reservations(&f), 2);
    json_decref(out);
    said_free(&s);
    json_decref(pod);
    json_decref(victim);
    fx_close(&f);
}

/* A pod group member's role is its shape only under its seal. The first
 * member (8 GPUs) is gated with role and seal; its output sent back keeps
 * both. The second (4 GPUs) arrives claiming the first one's role: without
 * a seal of its own the role is removed and its own shape is its role, so
 * the group is placed as two roles, not as two 8-GPU pods. */
static void test_seal__group_role_only_when_sealed(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 1);
    json_t *w0 = group_pod("w0", 8);
    said g0 = ask(&f, w0, "g-0", 0);
    json_t *out0 = patched_pod(w0, &g0);
    const char *role0 = annotation(out0, TOPO_ADMISSION_ROLE_ANNOTATION);
    assert_non_null(role0);
    char key[200];
    snprintf(key, sizeof key, "team-a/pod-group/pg/role/%s", role0);
    assert_int_equal(seal_ok(&f, out0, key, role0), 1);

    said back = ask(&f, out0, "g-0b", 0); /* our own output, still waiting */
    assert_true(allowed(&back));
    assert_true(back.ops == NULL || removals(back.ops) == 0);
    assert_true(back.ops == NULL ||
                ann_op(back.ops, "replace", TOPO_ADMISSION_ROLE_ANNOTATION) == -1);
    assert_int_equal(foreign(&f), 0);

    json_t *w1 = group_pod("w1", 4);
    set_annotation(w1, TOPO_ADMISSION_ROLE_ANNOTATION, role0);
    said g1 = ask(&f, w1, "g-1", 0);
    assert_true(allowed(&g1));
    assert_int_equal(ann_op(g1.ops, "remove", TOPO_ADMISSION_ROLE_ANNOTATION), 0);
    json_t *out1 = patched_pod(w1, &g1);
    const char *role1 = annotation(out1, TOPO_ADMISSION_ROLE_ANNOTATION);
    assert_non_null(role1);
    assert_string_not_equal(role1, role0);
    assert_int_equal(foreign(&f), 1);
    assert_int_equal(reservations(&f), 2); /* one per role */

    json_decref(out1);
    said_free(&g1);
    json_decref(w1);
    said_free(&back);
    json_decref(out0);
    said_free(&g0);
    json_decref(w0);
    fx_close(&f);
}

/* The gated pod as the API server holds it (its uid, gate, the gating
 * patch applied). A new reference. */
static json_t *stored(const json_t *pod, const said *s, const char *uid)
{
    json_t *out = patched_pod(pod, s);
    json_object_set_new(json_object_get(out, "metadata"), "uid", json_string(uid));
    return out;
}

static json_t *ungate(fx *f, const json_t *pod, int want)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *ops = NULL;
    int rc = topo_admission_ungate_pod_json(f->ctx, pod, &ops, &err);
    if (rc != want)
        fail_msg("ungate: %d: %s", rc, err.text);
    return ops;
}

/* A gated pod is its author's to edit (pod UPDATEs do not reach the
 * webhook): the ungater reads it from the API server, trusts annotations
 * topo writes on it only under its seal, and its patch removes the others
 * (before adding its own), counted once when that patch is made. Unedited,
 * only the gate's annotations go, as before. */
static void test_seal__ungater_removes_unsealed(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 1);
    json_t *w0 = group_pod("w0", 8), *w1 = group_pod("w1", 4);
    said g0 = ask(&f, w0, "u-0", 0);
    json_t *gated0 = stored(w0, &g0, "uid-w0");
    const char *role0 = annotation(gated0, TOPO_ADMISSION_ROLE_ANNOTATION);
    said g1 = ask(&f, w1, "u-1", 0); /* completes the group: placed */
    json_t *placed1 = patched_pod(w1, &g1);
    const char *role1 = annotation(placed1, TOPO_ADMISSION_ROLE_ANNOTATION);
    assert_string_not_equal(role0, role1);
    assert_int_equal(reservations(&f), 2);

    /* w0's author edits it: the 4-GPU role, w1's reservation and slot */
    json_t *edited = json_deep_copy(gated0);
    set_annotation(edited, TOPO_ADMISSION_ROLE_ANNOTATION, role1);
    set_annotation(edited, TOPO_ADMISSION_RESERVATION_ANNOTATION,
                   annotation(placed1, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    set_annotation(edited, TOPO_ADMISSION_SLOT_ANNOTATION, "0");
    json_t *ops = ungate(&f, edited, 0);
    long rm_role = ann_op(ops, "remove", TOPO_ADMISSION_ROLE_ANNOTATION);
    long rm_res = ann_op(ops, "remove", TOPO_ADMISSION_RESERVATION_ANNOTATION);
    long rm_slot = ann_op(ops, "remove", TOPO_ADMISSION_SLOT_ANNOTATION);
    assert_true(rm_role >= 0 && rm_res >= 0 && rm_slot >= 0);
    assert_true(ann_op(ops, "add", TOPO_ADMISSION_RESERVATION_ANNOTATION) > rm_res);
    assert_int_equal(foreign(&f), 1);
    json_t *out = json_deep_copy(edited);
    assert_int_equal(test_jsonpatch_apply(out, ops), 0);
    /* placed in its own (8-GPU) role's reservation, not w1's */
    assert_string_equal(annotation(out, TOPO_ADMISSION_ROLE_ANNOTATION), role0);
    assert_string_not_equal(annotation(out, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                            annotation(placed1, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    assert_null(annotation(out, TOPO_ADMISSION_WAIT_REASON_ANNOTATION));
    assert_null(annotation(out, TOPO_ADMISSION_PODSET_ANNOTATION));
    json_decref(out);
    json_decref(ops);

    /* unedited: the gate's annotations removed, nothing else, not counted */
    ops = ungate(&f, gated0, 0);
    assert_int_equal(removals(ops), 3); /* the gate, wait-reason, podset */
    assert_true(ann_op(ops, "remove", TOPO_ADMISSION_WAIT_REASON_ANNOTATION) >= 0);
    assert_true(ann_op(ops, "remove", TOPO_ADMISSION_PODSET_ANNOTATION) >= 0);
    assert_int_equal(foreign(&f), 1);
    json_decref(ops);

    json_decref(edited);
    json_decref(placed1);
    said_free(&g1);
    json_decref(gated0);
    said_free(&g0);
    json_decref(w1);
    json_decref(w0);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal__placed_pod_sealed_and_reinvoked),
        cmocka_unit_test(test_seal__reinvoked_with_a_new_uid),
        cmocka_unit_test(test_seal__without_record_keys),
        cmocka_unit_test(test_seal__forged_annotations_stripped),
        cmocka_unit_test(test_seal__forged_reservation_is_shape_checked),
        cmocka_unit_test(test_seal__copied_seal_other_namespace),
        cmocka_unit_test(test_seal__group_role_only_when_sealed),
        cmocka_unit_test(test_seal__ungater_removes_unsealed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
