/* The three-rack cluster of racks.h. */
#define _POSIX_C_SOURCE 200809L
#include "support/racks.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/jsonpatch_apply.h"
#include "topo/kueue.h"

static const char *const levels[] = {RACKS_RACK, RACKS_HOST};

static const char *source_dir(void)
{
    const char *src = getenv("TOPO_SOURCE_DIR");
    return src ? src : ".";
}

static const char *rack_of(const char *host)
{
    if (host[0] == 'm')
        return "r3";
    return strcmp(host, "n9") == 0 || strcmp(host, "n10") == 0 || strcmp(host, "n11") == 0
               ? "r1"
               : "r2";
}

static void upsert(racks_fx *f, const char *host, const char *rack, int ready, int ready_missing,
                   const topo_taint *taint, int cordoned)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv labels[] = {{RACKS_RACK, rack}, {RACKS_HOST, host}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8},
                             {"cpu", 128000},
                             {"memory", (int64_t)1 << 40},
                             {"pods", 110}};
    char name[64];
    snprintf(name, sizeof name, "%s.gpu.example.com", host);
    topo_node_spec n = {name,  labels,        2,        alloc, 4,
                        taint, taint ? 1 : 0, cordoned, ready, ready_missing};
    assert_int_equal(topo_live_upsert_node(f->live, &n, &err), 0);
    assert_int_equal(topo_live_commit(f->live, &err), 0);
}

void racks_node(racks_fx *f, const char *host, int ready, int ready_missing,
                const topo_taint *taint, int cordoned)
{
    upsert(f, host, rack_of(host), ready, ready_missing, taint, cordoned);
}

void racks_node_in(racks_fx *f, const char *host, const char *rack)
{
    upsert(f, host, rack, 1, 0, NULL, 0);
}

void racks_node_gone(racks_fx *f, const char *host)
{
    topo_err err = TOPO_ERR_INIT;
    char name[64];
    snprintf(name, sizeof name, "%s.gpu.example.com", host);
    assert_int_equal(topo_live_delete_node(f->live, name, &err), 0);
    assert_int_equal(topo_live_commit(f->live, &err), 0);
}

void racks_open(racks_fx *f, int fail_fast)
{
    topo_err err = TOPO_ERR_INIT;
    static const char material[] = "test racks record key: 32 bytes";
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
        racks_node(f, hosts[i], 1, 0, NULL, 0);
    topo_admission_topology t = {"default", levels, 2, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                 f->live, 0};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f->cache;
    ao.record_keys = &f->keys;
    ao.replace_fail_fast = fail_fast;
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        fail_msg("ctx: %s", err.text);
}

void racks_close(racks_fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
}

json_t *racks_job_pod(int idx, int size)
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

racks_said racks_review(topo_admission_ctx *ctx, const json_t *pod, const char *uid,
                        int dry_run)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "namespace"));
    json_t *doc = json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:b, s:O}}",
        "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", uid,
        "kind", "group", "", "version", "v1", "kind", "Pod", "resource", "group", "", "version",
        "v1", "resource", "pods", "namespace", ns ? ns : "team-a", "name", "", "operation",
        "CREATE", "dryRun", dry_run, "object", pod);
    assert_non_null(doc);
    char *body = json_dumps(doc, JSON_COMPACT), *out = NULL;
    json_decref(doc);
    size_t len = 0;
    int status = 0;
    assert_int_equal(topo_admission_handle(ctx, body, strlen(body), &out, &len, &status), 0);
    free(body);
    assert_int_equal(status, 200);
    racks_said s;
    json_error_t jerr;
    s.root = json_loadb(out, len, 0, &jerr);
    free(out);
    assert_non_null(s.root);
    s.resp = json_object_get(s.root, "response");
    s.ops = test_jsonpatch_of_response(s.resp);
    return s;
}

racks_said racks_ask(racks_fx *f, const json_t *pod, const char *uid)
{
    return racks_review(f->ctx, pod, uid, 0);
}

void racks_said_free(racks_said *s)
{
    json_decref(s->ops);
    json_decref(s->root);
}

json_t *racks_patched(const json_t *pod, const racks_said *s)
{
    json_t *out = json_deep_copy(pod);
    assert_non_null(out);
    if (s->ops != NULL)
        assert_int_equal(test_jsonpatch_apply(out, s->ops), 0);
    return out;
}

json_t *racks_admit(racks_fx *f, const json_t *pod, const char *uid)
{
    racks_said s = racks_ask(f, pod, uid);
    if (!json_is_true(json_object_get(s.resp, "allowed")))
        fail_msg("refused: %s", json_string_value(json_object_get(
                                    json_object_get(s.resp, "status"), "message")));
    json_t *out = racks_patched(pod, &s);
    racks_said_free(&s);
    return out;
}

const char *racks_selector(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "spec"), "nodeSelector"), key));
}

const char *racks_annotation(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), key));
}

void racks_store(racks_fx *f, json_t *pod, const char *uid, const char *host, const char *phase)
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
