#define _POSIX_C_SOURCE 200809L
/* Tests for topo_admission_handle (lib/admission/handler.c) over the
 * fixtures/clusters/hgx-h100.yaml snapshot: an Indexed Job placed in one
 * rack with distinct, stable slots; the no-fit policies (gate, deny,
 * ignore); dryRun; pass-through and malformed requests. */
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
#include "topo/live.h"

static const char *const levels[] = {"topology.topo.io/datacenter", "topology.topo.io/spine",
                                     "topology.topo.io/leaf", "topology.topo.io/rack",
                                     "kubernetes.io/hostname"};

typedef struct fx {
    topo_inventory *inv;
    topo_live *live;
    topo_cache *cache;
    topo_admission_ctx *ctx;
} fx;

/* The hgx-h100 fixture in a live snapshot, reservations in an in-memory
 * cache, one topology "default" with the given policy. */
static int make_fx(fx *f, topo_admission_policy policy)
{
    char path[4096];
    const char *src = getenv("TOPO_SOURCE_DIR");
    topo_err err = TOPO_ERR_INIT;
    topo_snapshot_opts so = {"default", levels, 5, NULL, 0};
    snprintf(path, sizeof path, "%s/fixtures/clusters/hgx-h100.yaml", src ? src : ".");
    memset(f, 0, sizeof(*f));
    if (topo_inventory_create(&f->inv, &err) < 0 ||
        topo_inventory_load_nodes_file(f->inv, path, &err) < 0 ||
        topo_live_create(&f->live, &so, &err) < 0 ||
        topo_cache_open(&f->cache, ":memory:", NULL, &err) < 0)
        goto fail;
    for (size_t i = 0; i < topo_inventory_node_count(f->inv); i++)
        if (topo_live_upsert_node(f->live, topo_inventory_node(f->inv, i), &err) < 0)
            goto fail;
    if (topo_live_commit(f->live, &err) < 0)
        goto fail;
    topo_admission_topology t = {"default", levels, 5, NULL, 0, policy, f->live};
    topo_admission_opts ao = TOPO_ADMISSION_OPTS_INIT;
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f->cache;
    ao.default_policy = policy;
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "fixture: %s\n", err.text);
    return -1;
}

static void free_fx(fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
    topo_inventory_free(f->inv);
}

static size_t reservations(fx *f)
{
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, f->cache, NULL), 0);
    return st.reservations;
}

static size_t claimed(fx *f)
{
    topo_cache_stats st;
    assert_int_equal(topo_cache_get_stats(&st, f->cache, NULL), 0);
    return st.claimed_slots;
}

/* A Pod CREATE review. labels/annotations are stolen (may be NULL). */
static char *review(const char *uid, const char *name, const char *gen, json_t *labels,
                    json_t *annotations, int gpus, int dry_run)
{
    json_t *meta = json_object();
    json_object_set_new(meta, "namespace", json_string("team-a"));
    if (name)
        json_object_set_new(meta, "name", json_string(name));
    if (gen)
        json_object_set_new(meta, "generateName", json_string(gen));
    if (labels)
        json_object_set_new(meta, "labels", labels);
    if (annotations)
        json_object_set_new(meta, "annotations", annotations);
    json_t *doc = json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:b, "
        "s:{s:s, s:s, s:o, s:{s:[{s:s, s:s, s:{s:{s:I, s:s}}}]}}}}",
        "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", uid,
        "kind", "group", "", "version", "v1", "kind", "Pod", "resource", "group", "",
        "version", "v1", "resource", "pods", "namespace", "team-a", "name", name ? name : "",
        "operation", "CREATE", "dryRun", dry_run, "object", "kind", "Pod", "apiVersion", "v1",
        "metadata", meta, "spec", "containers", "name", "worker", "image", "x", "resources",
        "requests", "nvidia.com/gpu", (json_int_t)gpus, "cpu", "16");
    assert_non_null(doc);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

/* Job pod of job "train" (controller-uid "u-train"), index idx, podset-size size. */
static char *job_pod(const char *uid, int idx, int size, const char *topo_key,
                     const char *topo_level, int gpus, int dry_run)
{
    char sidx[16], ssize[16];
    snprintf(sidx, sizeof sidx, "%d", idx);
    snprintf(ssize, sizeof ssize, "%d", size);
    json_t *labels = json_pack("{s:s, s:s, s:s}", "batch.kubernetes.io/controller-uid",
                               "u-train", "batch.kubernetes.io/job-name", "train",
                               "batch.kubernetes.io/job-completion-index", sidx);
    json_t *ann = json_pack("{s:s, s:s}", topo_key, topo_level,
                            TOPO_ADMISSION_PODSET_SIZE_ANNOTATION, ssize);
    return review(uid, NULL, "train-", labels, ann, gpus, dry_run);
}

/* Posts body; returns the response object (caller decrefs the returned root
 * through *root) and checks HTTP 200 and the uid echo. */
static json_t *post(topo_admission_ctx *ctx, char *body, const char *uid, json_t **root)
{
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    assert_int_equal(topo_admission_handle(ctx, body, strlen(body), &out, &len, &status), 0);
    free(body);
    assert_int_equal(status, 200);
    json_error_t jerr;
    *root = json_loadb(out, len, 0, &jerr);
    free(out);
    assert_non_null(*root);
    json_t *resp = json_object_get(*root, "response");
    assert_non_null(resp);
    assert_string_equal(json_string_value(json_object_get(resp, "uid")), uid);
    return resp;
}

/* The decoded JSON Patch of a response, or NULL when it has none. */
static json_t *patch_of(const json_t *resp)
{
    const char *b64 = json_string_value(json_object_get(resp, "patch"));
    if (b64 == NULL)
        return NULL;
    size_t n = strlen(b64);
    unsigned char *buf = malloc(n + 1);
    assert_non_null(buf);
    int m = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)n);
    assert_true(m >= 0);
    while (m > 0 && buf[m - 1] == '\0')
        m--;
    json_error_t jerr;
    json_t *ops = json_loadb((const char *)buf, (size_t)m, 0, &jerr);
    free(buf);
    assert_non_null(ops);
    return ops;
}

/* Value the patch gives to a map entry (/spec/nodeSelector or
 * /metadata/annotations, whole-map add or per-key add), or NULL. */
static const char *patched(const json_t *ops, const char *map, const char *key)
{
    size_t i;
    json_t *op;
    char esc[512];
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
    json_array_foreach(ops, i, op) {
        const char *path = json_string_value(json_object_get(op, "path"));
        json_t *value = json_object_get(op, "value");
        if (strcmp(path, map) == 0 && json_is_object(value) && json_object_get(value, key))
            return json_string_value(json_object_get(value, key));
        if (strncmp(path, map, strlen(map)) == 0 && path[strlen(map)] == '/' &&
            strcmp(path + strlen(map) + 1, esc) == 0)
            return json_string_value(value);
    }
    return NULL;
}

static int has_gate(const json_t *ops, const char *gate)
{
    size_t i;
    json_t *op;
    json_array_foreach(ops, i, op) {
        json_t *v = json_object_get(op, "value");
        if (json_is_array(v) && json_array_size(v) > 0)
            v = json_array_get(v, 0);
        const char *path = json_string_value(json_object_get(op, "path"));
        if (strncmp(path, "/spec/schedulingGates", 21) == 0 &&
            strcmp(json_string_value(json_object_get(v, "name")), gate) == 0)
            return 1;
    }
    return 0;
}

/* 4-pod Indexed Job, required rack: 4 distinct hosts in one rack; the same
 * pod asked again gets the same host; one reservation, 4 claims. */
static void test_indexed_job_one_rack(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    char hosts[4][64];
    const char *assignment0 = NULL;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++) {
            char uid[32];
            snprintf(uid, sizeof uid, "uid-%d-%d", round, i);
            json_t *root;
            json_t *resp = post(
                f.ctx,
                job_pod(uid, i, 4, "kueue.x-k8s.io/podset-required-topology",
                        "topology.topo.io/rack", 8, 0),
                uid, &root);
            assert_true(json_is_true(json_object_get(resp, "allowed")));
            json_t *ops = patch_of(resp);
            assert_non_null(ops);
            const char *host = patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname");
            assert_non_null(host);
            /* a hostname topology: only the hostname, as Kueue does */
            assert_null(patched(ops, "/spec/nodeSelector", "topology.topo.io/rack"));
            const char *a = patched(ops, "/metadata/annotations",
                                    TOPO_ADMISSION_ASSIGNMENT_ANNOTATION);
            assert_non_null(a);
            assert_non_null(strstr(a, "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":"));
            if (round == 0) {
                snprintf(hosts[i], sizeof hosts[i], "%s", host);
                for (int j = 0; j < i; j++)
                    assert_string_not_equal(hosts[j], host);
                /* h100-rNN-nM: one rack */
                assert_memory_equal(hosts[0], host, 8);
                if (i == 0)
                    assignment0 = strdup(a);
                else
                    assert_string_equal(assignment0, a);
            } else {
                assert_string_equal(hosts[i], host);
            }
            json_decref(ops);
            json_decref(root);
        }
    }
    assert_int_equal(reservations(&f), 1);
    assert_int_equal(claimed(&f), 4);
    free((void *)assignment0);
    free_fx(&f);
}

/* A second PodSet does not get the first one's nodes (reservation charged). */
static void test_reservation_charged(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    char first[64] = "", second[64] = "";
    for (int k = 0; k < 2; k++) {
        json_t *labels = json_pack("{s:s}", "batch.kubernetes.io/controller-uid",
                                   k == 0 ? "job-a" : "job-b");
        json_t *ann = json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology",
                                "topology.topo.io/rack");
        json_t *root;
        json_t *resp =
            post(f.ctx, review(k ? "b" : "a", k ? "pb" : "pa", NULL, labels, ann, 8, 0),
                 k ? "b" : "a", &root);
        json_t *ops = patch_of(resp);
        assert_non_null(ops);
        snprintf(k ? second : first, 64, "%s",
                 patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname"));
        json_decref(ops);
        json_decref(root);
    }
    assert_string_not_equal(first, second);
    assert_int_equal(reservations(&f), 2);
    free_fx(&f);
}

/* 16 GPUs per pod fit no node: the three policies. */
static void test_no_fit_policies(void **state)
{
    (void)state;
    static const topo_admission_policy policies[] = {
        TOPO_ADMISSION_POLICY_GATE, TOPO_ADMISSION_POLICY_DENY, TOPO_ADMISSION_POLICY_IGNORE};
    for (size_t p = 0; p < 3; p++) {
        fx f;
        assert_int_equal(make_fx(&f, policies[p]), 0);
        json_t *root;
        json_t *resp = post(f.ctx,
                            job_pod("nf", 0, 1, "kueue.x-k8s.io/podset-required-topology",
                                    "topology.topo.io/rack", 16, 0),
                            "nf", &root);
        json_t *ops = patch_of(resp);
        int allowed = json_is_true(json_object_get(resp, "allowed"));
        if (policies[p] == TOPO_ADMISSION_POLICY_GATE) {
            assert_true(allowed);
            assert_non_null(ops);
            assert_true(has_gate(ops, TOPO_ADMISSION_WAIT_GATE));
            const char *why = patched(ops, "/metadata/annotations",
                                      TOPO_ADMISSION_WAIT_REASON_ANNOTATION);
            assert_non_null(why);
            assert_true(strlen(why) <= TOPO_ADMISSION_WAIT_REASON_MAX);
            assert_non_null(strstr(why, "topology \"default\""));
            assert_null(patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname"));
        } else if (policies[p] == TOPO_ADMISSION_POLICY_DENY) {
            assert_false(allowed);
            assert_null(ops);
            json_t *st = json_object_get(resp, "status");
            assert_int_equal(json_integer_value(json_object_get(st, "code")), 403);
            const char *msg = json_string_value(json_object_get(st, "message"));
            assert_non_null(msg);
            assert_non_null(strstr(msg, "topology.topo.io/rack (required)"));
            assert_non_null(strstr(msg, "1 pod(s) x {"));
            assert_non_null(strstr(msg, "nvidia.com/gpu: 16"));
            assert_non_null(strstr(msg, "topology \"default\""));
        } else {
            assert_true(allowed);
            assert_null(ops);
            assert_true(json_array_size(json_object_get(resp, "warnings")) >= 1);
        }
        json_decref(ops);
        json_decref(root);
        assert_int_equal(reservations(&f), 0);
        free_fx(&f);
    }
}

/* dryRun: the same answer as a real request, nothing reserved or claimed. */
static void test_dry_run(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    char dry[64];
    json_t *root;
    json_t *resp = post(f.ctx,
                        job_pod("d1", 2, 4, "kueue.x-k8s.io/podset-required-topology",
                                "topology.topo.io/rack", 8, 1),
                        "d1", &root);
    json_t *ops = patch_of(resp);
    assert_non_null(ops);
    snprintf(dry, sizeof dry, "%s", patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname"));
    json_decref(ops);
    json_decref(root);
    assert_int_equal(reservations(&f), 0);
    assert_int_equal(claimed(&f), 0);
    resp = post(f.ctx,
                job_pod("d2", 2, 4, "kueue.x-k8s.io/podset-required-topology",
                        "topology.topo.io/rack", 8, 0),
                "d2", &root);
    ops = patch_of(resp);
    assert_string_equal(dry, patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname"));
    json_decref(ops);
    json_decref(root);
    assert_int_equal(reservations(&f), 1);
    assert_int_equal(claimed(&f), 1);
    free_fx(&f);
}

/* No topology annotation, Kueue-managed, not a CREATE: allowed, no patch. */
static void test_pass_through(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_DENY), 0);
    char *bodies[2];
    bodies[0] = review("p0", "plain", NULL, NULL, NULL, 8, 0);
    bodies[1] = review("p1", "kq", NULL,
                       json_pack("{s:s}", TOPO_ADMISSION_KUEUE_QUEUE_LABEL, "q"),
                       json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology",
                                 "topology.topo.io/rack"),
                       16, 0);
    for (int i = 0; i < 2; i++) {
        json_t *root;
        json_t *resp = post(f.ctx, bodies[i], i ? "p1" : "p0", &root);
        assert_true(json_is_true(json_object_get(resp, "allowed")));
        assert_null(json_object_get(resp, "patch"));
        json_decref(root);
    }
    assert_int_equal(reservations(&f), 0);
    free_fx(&f);
}

/* A bad podset-size refuses with 400; an unreadable body without uid is an
 * HTTP 400 error body. */
static void test_malformed(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    json_t *root;
    json_t *resp = post(f.ctx,
                        review("m1", "m", NULL, NULL,
                               json_pack("{s:s, s:s}", "kueue.x-k8s.io/podset-required-topology",
                                         "topology.topo.io/rack",
                                         TOPO_ADMISSION_PODSET_SIZE_ANNOTATION, "-3"),
                               8, 0),
                        "m1", &root);
    assert_false(json_is_true(json_object_get(resp, "allowed")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(resp, "status"), "code")),
                     400);
    json_decref(root);
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    assert_int_equal(topo_admission_handle(f.ctx, "{not json", 9, &out, &len, &status), 0);
    assert_int_equal(status, 400);
    assert_non_null(strstr(out, "\"error\""));
    free(out);
    free_fx(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexed_job_one_rack), cmocka_unit_test(test_reservation_charged),
        cmocka_unit_test(test_no_fit_policies),      cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_pass_through),         cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
