#define _POSIX_C_SOURCE 200809L
/* Tests for failed-node replacement (lib/admission/replace.c) through
 * topo_admission_handle: the recorded Job pod of fixtures/admission/job-pod
 * (8 GPUs, rack required) on three racks of 8-GPU nodes, r1 = n9 n10 n11,
 * r2 = n1 n2 n3, r3 = m1..m6. A node that fails (Kueue's rules: deleted, no
 * Ready condition, NotReady or an untolerated taint with none of the
 * PodSet's pods still running there) has its slots moved to a node of the
 * PodSet's domain when a pod claims one of them; with a pod still running
 * there the pod waits; without room it waits (or, failFast, is refused);
 * a single pod's PodSet is placed anew; our own output coming back keeps
 * its slot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/keyring.h"
#include "topo/kueue.h"
#include "topo/live.h"
#include "support/jsonpatch_apply.h"

#define RACK "topology.topo.io/rack"
#define HOST "kubernetes.io/hostname"
#define JOB_KEY "team-a/job/0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a"

static const char *const levels[] = {RACK, HOST};

typedef struct fx {
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

static const char *rack_of(const char *host)
{
    return host[0] == 'm' ? "r3" : strcmp(host, "n9") == 0 || strcmp(host, "n10") == 0 ||
                                           strcmp(host, "n11") == 0
                                       ? "r1"
                                       : "r2";
}

/* Node host as the live has it: ready, a Ready condition or none, a taint. */
static void node(fx *f, const char *host, int ready, int ready_missing, const topo_taint *taint)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv labels[] = {{RACK, rack_of(host)}, {HOST, host}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8},
                             {"cpu", 128000},
                             {"memory", (int64_t)1 << 40},
                             {"pods", 110}};
    /* the node's name is its FQDN, the hostname label its short name */
    char name[64];
    snprintf(name, sizeof name, "%s.gpu.example.com", host);
    topo_node_spec n = {name, labels, 2, alloc, 4, taint, taint ? 1 : 0, 0, ready, ready_missing};
    assert_int_equal(topo_live_upsert_node(f->live, &n, &err), 0);
    assert_int_equal(topo_live_commit(f->live, &err), 0);
}

static void node_gone(fx *f, const char *host)
{
    topo_err err = TOPO_ERR_INIT;
    char name[64];
    snprintf(name, sizeof name, "%s.gpu.example.com", host);
    assert_int_equal(topo_live_delete_node(f->live, name, &err), 0);
    assert_int_equal(topo_live_commit(f->live, &err), 0);
}

static void fx_open(fx *f, int fail_fast)
{
    topo_err err = TOPO_ERR_INIT;
    static const char material[] = "test_replace record key: 32 b!!";
    static const char *const hosts[] = {"n9", "n10", "n11", "n1", "n2", "n3",
                                        "m1", "m2",  "m3",  "m4", "m5", "m6"};
    memset(f, 0, sizeof(*f));
    assert_int_equal(topo_keyring_add(&f->keys, material, sizeof material - 1, "test", &err), 0);
    /* the cache verifies the seals with the record keys: the pods bind their slots */
    topo_cache_opts co = {.record_keys = &f->keys};
    assert_int_equal(topo_cache_open(&f->cache, ":memory:", &co, &err), 0);
    topo_snapshot_opts so = {"default", levels, 2, NULL, 0};
    assert_int_equal(topo_live_create(&f->live, &so, &err), 0);
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
        node(f, hosts[i], 1, 0, NULL);
    topo_admission_topology t = {"default", levels, 2, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                 f->live};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f->cache;
    ao.record_keys = &f->keys;
    ao.replace_fail_fast = fail_fast;
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        fail_msg("ctx: %s", err.text);
}

static void fx_close(fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
}

static uint64_t outcome(fx *f, topo_admission_replace_outcome o)
{
    topo_admission_stats st;
    topo_admission_get_stats(f->ctx, &st);
    return st.node_replacements[o];
}

/* The recorded Job pod as completion index idx of a size-pod PodSet. */
static json_t *job_pod(int idx, int size)
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
    snprintf(n, sizeof n, "%d", idx);
    json_object_set_new(json_object_get(meta, "labels"), "batch.kubernetes.io/job-completion-index",
                        json_string(n));
    json_t *ann = json_object_get(meta, "annotations");
    json_object_set_new(ann, "batch.kubernetes.io/job-completion-index", json_string(n));
    snprintf(n, sizeof n, "%d", size);
    json_object_set_new(ann, TOPO_PODSET_SIZE_ANNOTATION, json_string(n));
    return pod;
}

/* The pod's level annotation moved: preferred instead of required. */
static void prefer(json_t *pod)
{
    json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    json_object_del(ann, "kueue.x-k8s.io/podset-required-topology");
    json_object_set_new(ann, "kueue.x-k8s.io/podset-preferred-topology", json_string(RACK));
}

/* A bare pod (no owner: a PodSet of one) named name. */
static json_t *bare_pod(const char *name)
{
    json_t *pod = job_pod(0, 1);
    json_t *meta = json_object_get(pod, "metadata");
    json_object_del(meta, "ownerReferences");
    json_object_del(meta, "generateName");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "labels", json_object());
    json_t *ann = json_object_get(meta, "annotations");
    json_object_del(ann, "batch.kubernetes.io/job-completion-index");
    json_object_del(ann, TOPO_PODSET_SIZE_ANNOTATION);
    return pod;
}

typedef struct said {
    json_t *root;
    json_t *resp;
    json_t *ops;
} said;

static said ask(fx *f, const json_t *pod, const char *uid)
{
    json_t *doc = json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:O}}",
        "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", uid,
        "kind", "group", "", "version", "v1", "kind", "Pod", "resource", "group", "", "version",
        "v1", "resource", "pods", "namespace", "team-a", "name", "", "operation", "CREATE",
        "object", pod);
    assert_non_null(doc);
    char *body = json_dumps(doc, JSON_COMPACT), *out = NULL;
    json_decref(doc);
    size_t len = 0;
    int status = 0;
    assert_int_equal(topo_admission_handle(f->ctx, body, strlen(body), &out, &len, &status), 0);
    free(body);
    assert_int_equal(status, 200);
    said s;
    json_error_t jerr;
    s.root = json_loadb(out, len, 0, &jerr);
    free(out);
    assert_non_null(s.root);
    s.resp = json_object_get(s.root, "response");
    s.ops = test_jsonpatch_of_response(s.resp);
    return s;
}

static void said_free(said *s)
{
    json_decref(s->ops);
    json_decref(s->root);
}

static json_t *patched(const json_t *pod, const said *s)
{
    json_t *out = json_deep_copy(pod);
    assert_non_null(out);
    if (s->ops != NULL)
        assert_int_equal(test_jsonpatch_apply(out, s->ops), 0);
    return out;
}

static const char *selector(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "spec"), "nodeSelector"), key));
}

static const char *annotation(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), key));
}

static int gated(const json_t *pod)
{
    return annotation(pod, TOPO_ADMISSION_WAIT_REASON_ANNOTATION) != NULL;
}

/* Admits pod as request uid; the pod as patched (a new reference). */
static json_t *admit(fx *f, const json_t *pod, const char *uid)
{
    said s = ask(f, pod, uid);
    if (!json_is_true(json_object_get(s.resp, "allowed")))
        fail_msg("refused: %s", json_string_value(json_object_get(
                                    json_object_get(s.resp, "status"), "message")));
    json_t *out = patched(pod, &s);
    said_free(&s);
    return out;
}

/* The pod as the API server would store it: uid, bound to host's node,
 * in phase; stored in the cache (its slot binds under its seal). */
static void store(fx *f, json_t *pod, const char *uid, const char *host, const char *phase)
{
    char name[64];
    topo_err err = TOPO_ERR_INIT;
    json_t *meta = json_object_get(pod, "metadata");
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "name", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string("2026-12-06T10:00:00Z"));
    snprintf(name, sizeof name, "%s.gpu.example.com", host);
    json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(name));
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", phase));
    char *text = json_dumps(pod, JSON_COMPACT);
    if (topo_cache_upsert_pod(f->cache, text, strlen(text), &err) < 0)
        fail_msg("store: %s", err.text);
    free(text);
}

static topo_cache_reservation reservation(fx *f, const char *key, topo_pool *pool)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    if (topo_cache_reservation_get_by_podset(&r, f->cache, key, pool, &err) < 0)
        fail_msg("reservation: %s", err.text);
    return r;
}

/* n9 NotReady and its pod Failed: the replacement for index 0 goes to the
 * rack's free node, the reservation's next generation moves slot 0 only,
 * the record carries it, and the pod of index 1 keeps its node. */
static void test_replace__notready_failed_pod(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *p0 = job_pod(0, 2), *p1 = job_pod(1, 2);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    const char *h0 = selector(a0, HOST), *h1 = selector(a1, HOST), *rack = selector(a0, RACK);
    assert_string_equal(rack, selector(a1, RACK));
    store(&f, a0, "u-0", h0, "Running");
    store(&f, a1, "u-1", h1, "Running");
    node(&f, h0, 0, 0, NULL);
    store(&f, a0, "u-0", h0, "Failed");

    json_t *again = job_pod(0, 2);
    json_t *b0 = admit(&f, again, "r-2");
    assert_false(gated(b0));
    assert_string_equal(selector(b0, RACK), rack);
    assert_string_not_equal(selector(b0, HOST), h0);
    assert_string_not_equal(selector(b0, HOST), h1);
    assert_string_equal(annotation(b0, TOPO_ADMISSION_SLOT_ANNOTATION), "0");
    assert_non_null(strstr(annotation(b0, TOPO_ADMISSION_ASSIGNMENT_ANNOTATION),
                           selector(b0, HOST)));
    assert_null(strstr(annotation(b0, TOPO_ADMISSION_ASSIGNMENT_ANNOTATION), h0));
    assert_non_null(strstr(annotation(b0, TOPO_CACHE_RECORD_ANNOTATION), "\"gen\":[0,1]"));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);

    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r = reservation(&f, JOB_KEY, pool);
    assert_int_equal(r.gen_seq, 1);
    assert_string_equal(r.slots[0].values[r.slots[0].nvalues - 1], selector(b0, HOST));
    assert_string_equal(r.slots[1].values[r.slots[1].nvalues - 1], h1);
    assert_string_equal(r.slots[1].pod_uid, "u-1");

    /* a second replacement pod of index 0 finds the slot moved already */
    json_t *c0 = admit(&f, again, "r-3");
    assert_string_equal(selector(c0, HOST), selector(b0, HOST));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    topo_pool_free(pool);
    json_decref(c0);
    json_decref(b0);
    json_decref(again);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

/* A node deleted with its pod still running fails at once. A node
 * NotReady while the PodSet's pod still runs there does not: the pod for
 * its index waits (gated, the reason names the node); once the old pod
 * has failed and the rack has no room, it waits for a replacement; the
 * node coming back takes it, nothing moves. */
static void test_replace__deleted_then_still_running_waits(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *p0 = job_pod(0, 2), *p1 = job_pod(1, 2);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    const char *h0 = selector(a0, HOST), *h1 = selector(a1, HOST);
    store(&f, a0, "u-0", h0, "Running");
    store(&f, a1, "u-1", h1, "Running");

    node_gone(&f, h1);
    json_t *b1 = admit(&f, p1, "r-2");
    assert_false(gated(b1));
    assert_string_not_equal(selector(b1, HOST), h1);
    assert_string_not_equal(selector(b1, HOST), h0);
    assert_string_equal(selector(b1, RACK), selector(a1, RACK));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);

    node(&f, h0, 0, 0, NULL);
    json_t *b0 = admit(&f, p0, "r-3");
    assert_true(gated(b0));
    const char *why = annotation(b0, TOPO_ADMISSION_WAIT_REASON_ANNOTATION);
    assert_non_null(strstr(why, h0));
    assert_non_null(strstr(why, "still runs"));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_WAITING), 1);

    /* its pod ended; the rack's last node is index 1's now */
    store(&f, a0, "u-0", h0, "Failed");
    json_t *c0 = admit(&f, p0, "r-4");
    assert_true(gated(c0));
    assert_non_null(strstr(annotation(c0, TOPO_ADMISSION_WAIT_REASON_ANNOTATION), "replacement"));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_NO_ROOM), 1);
    /* the node comes back: the pod goes there, nothing moves */
    node(&f, h0, 1, 0, NULL);
    json_t *d0 = admit(&f, p0, "r-5");
    assert_false(gated(d0));
    assert_string_equal(selector(d0, HOST), h0);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    json_decref(d0);
    json_decref(c0);
    json_decref(b0);
    json_decref(b1);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

/* A 4-pod PodSet in r3 (m1..m6): two of its nodes fail, one without a
 * Ready condition, one with an untolerated NoExecute taint; both are
 * replaced inside r3 in one step (one generation). */
static void test_replace__two_failed_nodes_one_step(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *p[4], *a[4];
    const char *h[4];
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "r-%d", i);
        p[i] = job_pod(i, 4);
        a[i] = admit(&f, p[i], uid);
        h[i] = selector(a[i], HOST);
        assert_string_equal(selector(a[i], RACK), "r3");
    }
    static const topo_taint fault = {"example.com/gpu-fault", "xid79", "NoExecute"};
    node(&f, h[0], 0, 1, NULL);
    node(&f, h[1], 1, 0, &fault);
    json_t *b = admit(&f, p[1], "r-9");
    assert_false(gated(b));
    assert_string_equal(selector(b, RACK), "r3");
    for (int i = 0; i < 4; i++)
        assert_string_not_equal(selector(b, HOST), h[i]);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r = reservation(&f, JOB_KEY, pool);
    assert_int_equal(r.gen_seq, 1);
    const char *n0 = r.slots[0].values[r.slots[0].nvalues - 1],
               *n1 = r.slots[1].values[r.slots[1].nvalues - 1];
    assert_string_not_equal(n0, n1);
    for (int i = 0; i < 4; i++) {
        assert_string_not_equal(n0, h[i]);
        assert_string_not_equal(n1, h[i]);
    }
    assert_string_equal(r.slots[2].values[r.slots[2].nvalues - 1], h[2]);
    assert_string_equal(r.slots[3].values[r.slots[3].nvalues - 1], h[3]);
    assert_string_equal(selector(b, HOST), n1);
    topo_pool_free(pool);
    json_decref(b);
    for (int i = 0; i < 4; i++) {
        json_decref(a[i]);
        json_decref(p[i]);
    }
    fx_close(&f);
}

/* A PodSet that tolerates the taint stays; one cordoned node with the
 * PodSet's pod pending there (never bound) is replaced. */
static void test_replace__tolerated_taint_stays_cordon_moves(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *p0 = job_pod(0, 2);
    json_t *tol = json_array_get(json_object_get(json_object_get(p0, "spec"), "tolerations"), 0);
    json_object_set_new(tol, "key", json_string("example.com/gpu-fault"));
    json_object_del(tol, "tolerationSeconds");
    json_t *p1 = json_deep_copy(p0);
    json_t *idx = json_string("1");
    json_object_set(json_object_get(json_object_get(p1, "metadata"), "labels"),
                    "batch.kubernetes.io/job-completion-index", idx);
    json_object_set(json_object_get(json_object_get(p1, "metadata"), "annotations"),
                    "batch.kubernetes.io/job-completion-index", idx);
    json_decref(idx);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    const char *h0 = selector(a0, HOST), *h1 = selector(a1, HOST);
    static const topo_taint fault = {"example.com/gpu-fault", "xid79", "NoExecute"};
    node(&f, h0, 1, 0, &fault);
    json_t *b0 = admit(&f, p0, "r-2");
    assert_string_equal(selector(b0, HOST), h0);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 0);

    /* cordoned: spec.unschedulable, the pod of index 1 pending, unbound */
    char name[64];
    snprintf(name, sizeof name, "%s.gpu.example.com", h1);
    topo_kv labels[] = {{RACK, selector(a1, RACK)}, {HOST, h1}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
    topo_node_spec cordoned = {name, labels, 2, alloc, 2, NULL, 0, 1, 1, 0};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_live_upsert_node(f.live, &cordoned, &err), 0);
    assert_int_equal(topo_live_commit(f.live, &err), 0);
    json_t *b1 = admit(&f, p1, "r-3");
    assert_false(gated(b1));
    assert_string_not_equal(selector(b1, HOST), h1);
    assert_string_not_equal(selector(b1, HOST), h0);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    json_decref(b1);
    json_decref(b0);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

/* No room in the rack: failFast refuses the pod (403), every time. */
static void test_replace__fail_fast_refuses(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 1);
    json_t *p0 = job_pod(0, 2), *p1 = job_pod(1, 2);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    const char *h0 = selector(a0, HOST), *rack = selector(a0, RACK);
    /* the rack's third node NotReady too: nowhere to go inside it */
    static const char *const r1[] = {"n9", "n10", "n11"}, *const r2[] = {"n1", "n2", "n3"};
    const char *const *nodes = strcmp(rack, "r1") == 0 ? r1 : r2;
    for (int i = 0; i < 3; i++)
        if (strcmp(nodes[i], h0) != 0 && strcmp(nodes[i], selector(a1, HOST)) != 0)
            node(&f, nodes[i], 0, 0, NULL);
    node_gone(&f, h0);
    for (int i = 0; i < 2; i++) {
        said s = ask(&f, p0, i ? "r-3" : "r-2");
        assert_false(json_is_true(json_object_get(s.resp, "allowed")));
        json_t *st = json_object_get(s.resp, "status");
        assert_int_equal(json_integer_value(json_object_get(st, "code")), 403);
        assert_non_null(strstr(json_string_value(json_object_get(st, "message")), h0));
        said_free(&s);
    }
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_FAIL_FAST), 2);
    /* the slot was given back: nobody holds slot 0 but its first claimant */
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

/* A bare pod's node fails; the pod recreated under its name is placed
 * anew; our own output sent back (a reinvocation) keeps its slot. */
static void test_replace__single_pod_anew_reinvocation_kept(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *pod = bare_pod("solo");
    json_t *a = admit(&f, pod, "r-0");
    const char *h = selector(a, HOST);
    node(&f, h, 0, 0, NULL);
    json_t *again = admit(&f, a, "r-1"); /* reinvocation: sealed, kept */
    assert_string_equal(selector(again, HOST), h);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_NEW), 0);
    json_t *b = admit(&f, pod, "r-2");
    assert_false(gated(b));
    assert_string_not_equal(selector(b, HOST), h);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_NEW), 1);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 0);
    assert_string_not_equal(annotation(b, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                            annotation(a, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    json_decref(b);
    json_decref(again);
    json_decref(a);
    json_decref(pod);
    fx_close(&f);
}

/* Preferred rack: the replacement stays in the rack while it has room,
 * and goes to another rack when it has none. */
static void test_replace__preferred_same_rack_then_other(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, 0);
    json_t *p0 = job_pod(0, 2), *p1 = job_pod(1, 2);
    prefer(p0);
    prefer(p1);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    const char *h0 = selector(a0, HOST), *h1 = selector(a1, HOST), *rack = selector(a0, RACK);
    node(&f, h0, 0, 0, NULL);
    json_t *b0 = admit(&f, p0, "r-2");
    assert_string_equal(selector(b0, RACK), rack);
    const char *third = selector(b0, HOST);
    /* now index 1's node and the rack's third fail: index 1 leaves the rack */
    node(&f, h1, 0, 0, NULL);
    node(&f, third, 0, 0, NULL);
    json_t *b1 = admit(&f, p1, "r-3");
    assert_false(gated(b1));
    assert_string_not_equal(selector(b1, RACK), rack);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 2);
    json_decref(b1);
    json_decref(b0);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replace__notready_failed_pod),
        cmocka_unit_test(test_replace__deleted_then_still_running_waits),
        cmocka_unit_test(test_replace__two_failed_nodes_one_step),
        cmocka_unit_test(test_replace__tolerated_taint_stays_cordon_moves),
        cmocka_unit_test(test_replace__fail_fast_refuses),
        cmocka_unit_test(test_replace__single_pod_anew_reinvocation_kept),
        cmocka_unit_test(test_replace__preferred_same_rack_then_other),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
