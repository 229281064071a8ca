#define _POSIX_C_SOURCE 200809L
/* Tests for topo_admission_stranded_foreach (lib/admission/stranded.c):
 * pods topo placed (admitted through topo_admission_handle, stored in the
 * cache unbound: their slots bind under their seals) whose slot's node
 * then failed are reported; healthy, tainted-only, bound pods are not.
 * The fixture is test_replace.c's: the recorded Job pod of
 * fixtures/admission/job-pod (8 GPUs, rack required) on racks r1 = n9 n10
 * n11, r2 = n1 n2 n3, r3 = m1..m6. */
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

/* Node host as the live has it: ready, a Ready condition or none, a taint,
 * cordoned. */
static void node(fx *f, const char *host, int ready, int ready_missing, const topo_taint *taint,
                 int cordoned)
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
    topo_node_spec n = {name,         labels, 2,     alloc,        4,
                        taint,        taint ? 1 : 0, cordoned, ready, ready_missing};
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

static void fx_open(fx *f)
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
        node(f, hosts[i], 1, 0, NULL, 0);
    topo_admission_topology t = {"default", levels, 2, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                 f->live};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f->cache;
    ao.record_keys = &f->keys;
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        fail_msg("ctx: %s", err.text);
}

static void fx_close(fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
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

/* The pod as the API server would store it: uid, unbound (host NULL) or
 * bound to host's node, in phase; stored in the cache (its slot binds
 * under its seal). */
static void store(fx *f, json_t *pod, const char *uid, const char *host, const char *phase)
{
    char name[64];
    topo_err err = TOPO_ERR_INIT;
    json_t *meta = json_object_get(pod, "metadata");
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "name", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string("2026-12-06T10:00:00Z"));
    if (host != NULL) {
        snprintf(name, sizeof name, "%s.gpu.example.com", host);
        json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(name));
    } else {
        json_object_del(json_object_get(pod, "spec"), "nodeName");
    }
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", phase));
    char *text = json_dumps(pod, JSON_COMPACT);
    if (topo_cache_upsert_pod(f->cache, text, strlen(text), &err) < 0)
        fail_msg("store: %s", err.text);
    free(text);
}

static int collect(void *payload, const topo_admission_stranded *s)
{
    char *out = payload;
    char line[200];
    snprintf(line, sizeof line, "%s/%s(%s) %s %s; ", s->namespace_, s->pod_name, s->pod_uid,
             s->host, s->what);
    strcat(out, line);
    return 0;
}

static const char *stranded(fx *f, char *out)
{
    topo_err err = TOPO_ERR_INIT;
    out[0] = '\0';
    if (topo_admission_stranded_foreach(f->ctx, collect, out, &err) != 0)
        fail_msg("stranded: %s", err.text);
    return out;
}

/* A 2-pod Job admitted, its pods unbound: healthy nodes strand nothing; the
 * node of index 0 NotReady, deleted, without Ready or cordoned strands its
 * pod (named with its node and why); a taint alone does not (the pod's
 * tolerations are unknown here); a bound pod is kube-scheduler's. */
static void test_stranded__failed_node_reports_unbound_pod(void **state)
{
    (void)state;
    fx f;
    char out[512], want[512];
    fx_open(&f);
    json_t *p0 = job_pod(0, 2), *p1 = job_pod(1, 2);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    const char *h0 = selector(a0, HOST), *h1 = selector(a1, HOST);
    assert_string_not_equal(h0, h1);
    store(&f, a0, "u-0", NULL, "Pending");
    store(&f, a1, "u-1", NULL, "Pending");
    assert_string_equal(stranded(&f, out), "");

    node(&f, h0, 0, 0, NULL, 0);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s is NotReady; ", h0);
    assert_string_equal(stranded(&f, out), want);

    node(&f, h0, 1, 1, NULL, 0);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s has no Ready condition; ", h0);
    assert_string_equal(stranded(&f, out), want);

    node(&f, h0, 1, 0, NULL, 1);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s is cordoned; ", h0);
    assert_string_equal(stranded(&f, out), want);

    static const topo_taint fault = {"example.com/gpu-fault", "xid79", "NoExecute"};
    node(&f, h0, 1, 0, &fault, 0);
    assert_string_equal(stranded(&f, out), "");

    node_gone(&f, h0);
    node_gone(&f, h1);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s was deleted; team-a/u-1(u-1) %s was deleted; ",
             h0, h1);
    char alt[512];
    snprintf(alt, sizeof alt, "team-a/u-1(u-1) %s was deleted; team-a/u-0(u-0) %s was deleted; ",
             h1, h0);
    stranded(&f, out);
    if (strcmp(out, want) != 0)
        assert_string_equal(out, alt);

    /* bound (kube-scheduler took it) or finished: not ours to fail */
    store(&f, a1, "u-1", h1, "Pending");
    store(&f, a0, "u-0", NULL, "Failed");
    assert_string_equal(stranded(&f, out), "");

    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

static int stop(void *payload, const topo_admission_stranded *s)
{
    (void)s;
    (*(int *)payload)++;
    return 5;
}

/* fn's non-zero return stops and is returned; missing arguments refused. */
static void test_stranded__stop_and_arguments(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    fx_open(&f);
    json_t *p0 = job_pod(0, 2), *p1 = job_pod(1, 2);
    json_t *a0 = admit(&f, p0, "r-0"), *a1 = admit(&f, p1, "r-1");
    store(&f, a0, "u-0", NULL, "Pending");
    store(&f, a1, "u-1", NULL, "Pending");
    node_gone(&f, selector(a0, HOST));
    node_gone(&f, selector(a1, HOST));
    int calls = 0;
    assert_int_equal(topo_admission_stranded_foreach(f.ctx, stop, &calls, &err), 5);
    assert_int_equal(calls, 1);
    assert_int_equal(topo_admission_stranded_foreach(f.ctx, NULL, NULL, &err), TOPO_EINVALID);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stranded__failed_node_reports_unbound_pod),
        cmocka_unit_test(test_stranded__stop_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
