#define _POSIX_C_SOURCE 200809L
/* Tests for topo_admission_handle (lib/admission/handler.c) over the
 * fixtures/clusters/hgx-h100.yaml snapshot, with real SQLite caches and live
 * snapshots: an Indexed Job placed in one rack with distinct, stable slots;
 * the no-fit policies (gate, deny, ignore); dryRun; pass-through and
 * malformed requests; tolerations and node affinity; restarts on a cache
 * file; slots bound and freed by cached pods; expiry; PodSet sizes from
 * cached Jobs, JobSets and LeaderWorkerSets; the choice among topologies;
 * namespace policies; ungating; stats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <sqlite3.h>

#include "support/keys.h"
#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/inventory.h"
#include "topo/kueue.h"
#include "topo/limits.h"
#include "topo/live.h"
#include "support/dbfiles.h"
#include "support/jsonpatch_apply.h"

static const char *const levels[] = {"topology.topo.io/datacenter", "topology.topo.io/spine",
                                     "topology.topo.io/leaf", "topology.topo.io/rack",
                                     "kubernetes.io/hostname"};

/* Every node outside rack-08 carries the GPU taint of the tainted fixtures. */
static const topo_taint gpu_taint = {"nvidia.com/gpu", "present", "NoSchedule"};

/* The spine-topo pair's second topology covers spine-b only. */
static const char *const spine_levels[] = {"topology.topo.io/spine", "kubernetes.io/hostname"};
static const char *const rack_levels[] = {"topology.topo.io/leaf", "topology.topo.io/rack",
                                          "kubernetes.io/hostname"};
static const topo_kv spine_b[] = {{"topology.topo.io/spine", "spine-b"}};

typedef struct fx_conf {
    topo_admission_policy policy; /* the topologies' and the default one */
    const char *db;               /* NULL: ":memory:" */
    int taint;                    /* gpu_taint on every node outside rack-08 */
    int two;                      /* "spine-topo" (spine-b) then "rack-topo", no "default" */
    int clock;                    /* the ctx reads fx.now */
    int64_t ttl;
    topo_admission_ns_policy_fn ns_policy;
    /* bounds on room held for pods not created yet (0/NULL: defaults) */
    const topo_resource *caps_ns, *caps_all;
    size_t ncaps_ns, ncaps_all;
    topo_admission_quota_fn quota;
} fx_conf;

typedef struct fx {
    topo_inventory *inv;
    topo_live *live, *live2;
    topo_cache *cache;
    topo_admission_ctx *ctx;
    int64_t now;
} fx;

static int64_t fake_clock(void *payload)
{
    return *(const int64_t *)payload;
}

static int fill_live(fx *f, topo_live **out, const topo_snapshot_opts *so, int taint,
                     topo_err *err)
{
    if (topo_live_create(out, so, err) < 0)
        return -1;
    for (size_t i = 0; i < topo_inventory_node_count(f->inv); i++) {
        topo_node_spec n = *topo_inventory_node(f->inv, i);
        if (taint && strncmp(n.name, "h100-r08-", 9) != 0) {
            n.taints = &gpu_taint;
            n.ntaints = 1;
        }
        if (topo_live_upsert_node(*out, &n, err) < 0)
            return -1;
    }
    return topo_live_commit(*out, err);
}

/* The record keys every fixture's ctx signs and seals with and its cache
 * binds slots by, as replicas share theirs: one ctx verifies what another
 * wrote (cache.h "Slot binding"). */
#define RECORD_KEY "the handler tests' record key"

/* The hgx-h100 fixture in live snapshots, reservations in a cache (in
 * memory or the file c->db), the topologies c asks for. */
static int make_fx_conf(fx *f, const fx_conf *c)
{
    topo_keyring ring = test_keyring(RECORD_KEY);
    topo_cache_opts co = {.record_keys = &ring};
    char path[4096];
    const char *src = getenv("TOPO_SOURCE_DIR");
    topo_err err = TOPO_ERR_INIT;
    snprintf(path, sizeof path, "%s/fixtures/clusters/hgx-h100.yaml", src ? src : ".");
    int64_t now = f->now;
    memset(f, 0, sizeof(*f));
    f->now = now;
    if (topo_inventory_create(&f->inv, &err) < 0 ||
        topo_inventory_load_nodes_file(f->inv, path, &err) < 0 ||
        topo_cache_open(&f->cache, c->db ? c->db : ":memory:", &co, &err) < 0)
        goto fail;
    topo_admission_topology t[2];
    size_t nt = 1;
    if (c->two) {
        topo_snapshot_opts s1 = {"spine-topo", spine_levels, 2, spine_b, 1};
        topo_snapshot_opts s2 = {"rack-topo", rack_levels, 3, NULL, 0};
        if (fill_live(f, &f->live, &s1, c->taint, &err) < 0 ||
            fill_live(f, &f->live2, &s2, c->taint, &err) < 0)
            goto fail;
        t[0] = (topo_admission_topology){"spine-topo", spine_levels, 2, spine_b, 1, c->policy,
                                         f->live, 0};
        t[1] = (topo_admission_topology){"rack-topo", rack_levels, 3, NULL, 0, c->policy,
                                         f->live2, 0};
        nt = 2;
    } else {
        topo_snapshot_opts so = {"default", levels, 5, NULL, 0};
        if (fill_live(f, &f->live, &so, c->taint, &err) < 0)
            goto fail;
        t[0] = (topo_admission_topology){"default", levels, 5, NULL, 0, c->policy, f->live, 0};
    }
    topo_admission_opts ao = {0};
    ao.topologies = t;
    ao.ntopologies = nt;
    ao.cache = f->cache;
    ao.default_policy = c->policy;
    ao.reservation_ttl_s = c->ttl;
    ao.ns_policy = c->ns_policy;
    ao.unclaimed_cap_namespace = c->caps_ns;
    ao.nunclaimed_cap_namespace = c->ncaps_ns;
    ao.unclaimed_cap_global = c->caps_all;
    ao.nunclaimed_cap_global = c->ncaps_all;
    ao.quota = c->quota;
    ao.record_keys = &ring;
    if (c->clock) {
        ao.clock = fake_clock;
        ao.clock_payload = &f->now;
    }
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "fixture: %s\n", err.text);
    return -1;
}

static int make_fx(fx *f, topo_admission_policy policy)
{
    fx_conf c = {policy, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f->now = 0;
    return make_fx_conf(f, &c);
}

static void free_fx(fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
    topo_live_free(f->live2);
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

/* What a Pod CREATE review carries. labels, annotations and spec_extra are
 * stolen (may be NULL); spec_extra's members are merged into the spec
 * (tolerations, affinity, nodeSelector). ns NULL: "team-a". */
typedef struct rq {
    const char *uid, *ns, *name, *gen;
    json_t *labels, *annotations;
    int gpus, dry_run;
    json_t *spec_extra;
} rq;

static json_t *pod_object(const rq *r)
{
    const char *ns = r->ns ? r->ns : "team-a";
    json_t *meta = json_object();
    json_object_set_new(meta, "namespace", json_string(ns));
    if (r->name)
        json_object_set_new(meta, "name", json_string(r->name));
    if (r->gen)
        json_object_set_new(meta, "generateName", json_string(r->gen));
    if (r->labels)
        json_object_set_new(meta, "labels", r->labels);
    if (r->annotations)
        json_object_set_new(meta, "annotations", r->annotations);
    json_t *spec = json_pack("{s:[{s:s, s:s, s:{s:{s:I, s:s}}}]}", "containers", "name",
                             "worker", "image", "x", "resources", "requests", "nvidia.com/gpu",
                             (json_int_t)r->gpus, "cpu", "16");
    assert_non_null(spec);
    if (r->spec_extra) {
        assert_int_equal(json_object_update(spec, r->spec_extra), 0);
        json_decref(r->spec_extra);
    }
    json_t *pod = json_pack("{s:s, s:s, s:o, s:o}", "kind", "Pod", "apiVersion", "v1",
                            "metadata", meta, "spec", spec);
    assert_non_null(pod);
    return pod;
}

/* A Pod CREATE review of pod (stolen) in namespace ns. */
static char *review_of(const char *uid, const char *ns, const char *name, int dry_run, json_t *pod)
{
    json_t *doc = json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:b, s:o}}",
        "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", uid,
        "kind", "group", "", "version", "v1", "kind", "Pod", "resource", "group", "",
        "version", "v1", "resource", "pods", "namespace", ns, "name", name ? name : "",
        "operation", "CREATE", "dryRun", dry_run, "object", pod);
    assert_non_null(doc);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

static char *review_rq(const rq *r)
{
    return review_of(r->uid, r->ns ? r->ns : "team-a", r->name, r->dry_run, pod_object(r));
}

/* A Pod CREATE review in team-a. labels/annotations are stolen (may be NULL). */
static char *review(const char *uid, const char *name, const char *gen, json_t *labels,
                    json_t *annotations, int gpus, int dry_run)
{
    rq r = {uid, NULL, name, gen, labels, annotations, gpus, dry_run, NULL};
    return review_rq(&r);
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
                            TOPO_PODSET_SIZE_ANNOTATION, ssize);
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

/* One answer, reduced to what the tests check. */
typedef struct got {
    int allowed;
    int code;           /* status.code when refused */
    char msg[1024];     /* status.message */
    char host[64];      /* nodeSelector kubernetes.io/hostname, "" when none */
    char rack[64];      /* nodeSelector topology.topo.io/rack, "" when none */
    char reservation[128];
    int slot;           /* -1 when none */
    int gated;
    char warning[512];  /* the first warning */
    char role[64];      /* annotation topology.topo.io/role, "" when none */
    char wait[256];     /* annotation topology.topo.io/wait-reason, "" when none */
    char seal[80];      /* annotation topology.topo.io/seal, "" when none */
} got;

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

static got ask(topo_admission_ctx *ctx, char *body, const char *uid)
{
    got g;
    json_t *root;
    memset(&g, 0, sizeof g);
    g.slot = -1;
    json_t *resp = post(ctx, body, uid, &root);
    g.allowed = json_is_true(json_object_get(resp, "allowed"));
    json_t *st = json_object_get(resp, "status");
    g.code = (int)json_integer_value(json_object_get(st, "code"));
    copy_str(g.msg, sizeof g.msg, json_string_value(json_object_get(st, "message")));
    copy_str(g.warning, sizeof g.warning,
             json_string_value(json_array_get(json_object_get(resp, "warnings"), 0)));
    json_t *ops = test_jsonpatch_of_response(resp);
    if (ops != NULL) {
        copy_str(g.host, sizeof g.host,
                 patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname"));
        copy_str(g.rack, sizeof g.rack,
                 patched(ops, "/spec/nodeSelector", "topology.topo.io/rack"));
        copy_str(g.reservation, sizeof g.reservation,
                 patched(ops, "/metadata/annotations", TOPO_ADMISSION_RESERVATION_ANNOTATION));
        const char *slot = patched(ops, "/metadata/annotations", TOPO_ADMISSION_SLOT_ANNOTATION);
        if (slot != NULL)
            g.slot = atoi(slot);
        g.gated = has_gate(ops, TOPO_ADMISSION_WAIT_GATE);
        copy_str(g.role, sizeof g.role,
                 patched(ops, "/metadata/annotations", TOPO_ADMISSION_ROLE_ANNOTATION));
        copy_str(g.wait, sizeof g.wait,
                 patched(ops, "/metadata/annotations", TOPO_ADMISSION_WAIT_REASON_ANNOTATION));
        copy_str(g.seal, sizeof g.seal,
                 patched(ops, "/metadata/annotations", TOPO_CACHE_SEAL_ANNOTATION));
        json_decref(ops);
    }
    json_decref(root);
    return g;
}

/* "h100-r05-n3" -> 5 */
static int rack_no(const char *host)
{
    assert_int_equal(strncmp(host, "h100-r", 6), 0);
    return atoi(host + 6);
}

/* Pod of Job name/uid with completion index idx (idx < 0: none); size > 0
 * adds the podset-size annotation; topology: required rack. */
static char *job_pod_of(const char *uid, const char *job, const char *job_uid, int idx, int size,
                        const char *level, int gpus)
{
    json_t *labels = json_pack("{s:s, s:s}", "batch.kubernetes.io/controller-uid", job_uid,
                               "batch.kubernetes.io/job-name", job);
    if (idx >= 0) {
        char sidx[16];
        snprintf(sidx, sizeof sidx, "%d", idx);
        json_object_set_new(labels, "batch.kubernetes.io/job-completion-index", json_string(sidx));
    }
    json_t *ann = json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology", level);
    if (size > 0) {
        char ssize[16];
        snprintf(ssize, sizeof ssize, "%d", size);
        json_object_set_new(ann, TOPO_PODSET_SIZE_ANNOTATION, json_string(ssize));
    }
    char gen[80];
    snprintf(gen, sizeof gen, "%s-", job);
    return review(uid, NULL, gen, labels, ann, gpus, 0);
}

static topo_cache_reservation podset_reservation(fx *f, const char *key, topo_pool *pool)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_cache_reservation_get_by_podset(&r, f->cache, key, pool, &err);
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", key, err.text);
    assert_int_equal(rc, 0);
    return r;
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
            json_t *ops = test_jsonpatch_of_response(resp);
            assert_non_null(ops);
            const char *host = patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname");
            assert_non_null(host);
            /* a hostname topology: the assignment has the hostname only, as
             * Kueue writes it; the selector has every level, the upper ones
             * the host's own labels (h100-rNN-nM is in rack-NN of leaf-...) */
            const char *rack = patched(ops, "/spec/nodeSelector", "topology.topo.io/rack");
            assert_non_null(rack);
            assert_memory_equal(rack + strlen("rack-"), host + strlen("h100-r"), 2);
            assert_string_equal(patched(ops, "/spec/nodeSelector", "topology.topo.io/datacenter"),
                                "dc1");
            assert_non_null(patched(ops, "/spec/nodeSelector", "topology.topo.io/leaf"));
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
        json_t *ops = test_jsonpatch_of_response(resp);
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
        json_t *ops = test_jsonpatch_of_response(resp);
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
    json_t *ops = test_jsonpatch_of_response(resp);
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
    ops = test_jsonpatch_of_response(resp);
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
                       json_pack("{s:s}", TOPO_KUEUE_QUEUE_LABEL, "q"),
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
                                         TOPO_PODSET_SIZE_ANNOTATION, "-3"),
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

#define RACK "topology.topo.io/rack"

static void assert_contains(const char *s, const char *part)
{
    if (strstr(s, part) == NULL)
        fail_msg("\"%s\" does not contain \"%s\"", s, part);
}

/* A named pod (PodSet of one) requiring `level`, with spec members extra. */
static char *named_pod(const char *uid, const char *ns, const char *name, const char *level,
                       int gpus, json_t *extra)
{
    rq r = {uid, ns, name, NULL, NULL,
            json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology", level), gpus, 0,
            extra};
    return review_rq(&r);
}

/* Every node outside rack-08 is tainted nvidia.com/gpu=present:NoSchedule:
 * a PodSet without the toleration goes to rack-08 while it has room, then
 * nowhere; a toleration of another value does not help; a tolerating pod
 * goes to a tainted rack. */
static void test_tolerations(void **state)
{
    (void)state;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 1, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "t%d", i);
        got g = ask(f.ctx, job_pod_of(uid, "plain", "u-plain", i, 4, RACK, 8), uid);
        assert_true(g.allowed);
        assert_int_equal(rack_no(g.host), 8);
    }
    got g = ask(f.ctx, named_pod("t4", NULL, "late", RACK, 8, NULL), "t4");
    assert_true(g.allowed);
    assert_true(g.gated);
    assert_string_equal(g.host, "");
    g = ask(f.ctx,
            named_pod("t5", NULL, "wrong-value", RACK, 8,
                      json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "tolerations", "key",
                                "nvidia.com/gpu", "operator", "Equal", "value", "absent",
                                "effect", "NoSchedule")),
            "t5");
    assert_true(g.gated);
    assert_string_equal(g.host, "");
    g = ask(f.ctx,
            named_pod("t6", NULL, "tolerating", RACK, 8,
                      json_pack("{s:[{s:s, s:s, s:s}]}", "tolerations", "key", "nvidia.com/gpu",
                                "operator", "Exists", "effect", "NoSchedule")),
            "t6");
    assert_true(g.allowed);
    assert_false(g.gated);
    assert_int_not_equal(rack_no(g.host), 8);
    free_fx(&f);
}

static json_t *rack_affinity(const char *op, const char *rack)
{
    return json_pack("{s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}}", "affinity", "nodeAffinity",
                     "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                     "matchExpressions", "key", RACK, "operator", op, "values", rack);
}

/* Required node affinity rack In [rack-06]: the PodSet lands there, and a
 * second one with the same affinity finds the rack full (though seven other
 * racks are free). */
static void test_required_affinity(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "a%d", i);
        json_t *labels = json_pack("{s:s, s:s}", "batch.kubernetes.io/controller-uid", "u-aff",
                                   "batch.kubernetes.io/job-completion-index",
                                   i == 0 ? "0" : i == 1 ? "1" : i == 2 ? "2" : "3");
        rq r = {uid, NULL, NULL, "aff-", labels,
                json_pack("{s:s, s:s}", "kueue.x-k8s.io/podset-required-topology", RACK,
                          TOPO_PODSET_SIZE_ANNOTATION, "4"),
                8, 0, rack_affinity("In", "rack-06")};
        got g = ask(f.ctx, review_rq(&r), uid);
        assert_int_equal(rack_no(g.host), 6);
        assert_int_equal(g.slot, i);
    }
    got g = ask(f.ctx, named_pod("a4", NULL, "more", RACK, 8, rack_affinity("In", "rack-06")),
                "a4");
    assert_true(g.gated);
    assert_string_equal(g.host, "");
    /* NotIn every rack but rack-02: rack-02 */
    json_t *aff = json_pack("{s:{s:{s:{s:[{s:[{s:s, s:s, s:[s, s, s, s, s, s, s]}]}]}}}}",
                            "affinity", "nodeAffinity",
                            "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                            "matchExpressions", "key", RACK, "operator", "NotIn", "values",
                            "rack-01", "rack-03", "rack-04", "rack-05", "rack-06", "rack-07",
                            "rack-08");
    g = ask(f.ctx, named_pod("a5", NULL, "notin", RACK, 8, aff), "a5");
    assert_int_equal(rack_no(g.host), 2);
    free_fx(&f);
}

/* Malformed tolerations or affinity of a topology pod: 400 naming the
 * field; the same on a pod the webhook does not place: admitted. */
static void test_malformed_affinity(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    got g = ask(f.ctx, named_pod("m1", NULL, "bad-op", RACK, 8, rack_affinity("Near", "rack-01")),
                "m1");
    assert_false(g.allowed);
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "request.object.spec.affinity.nodeAffinity."
                           "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                           "matchExpressions[0].operator");
    assert_contains(g.msg, "\"Near\"");
    /* the second expression of a term is named as such */
    g = ask(f.ctx,
            named_pod("m1b", NULL, "bad-second", RACK, 8,
                      json_pack("{s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}, {s:s, s:s}]}]}}}}",
                                "affinity", "nodeAffinity",
                                "requiredDuringSchedulingIgnoredDuringExecution",
                                "nodeSelectorTerms", "matchExpressions", "key", RACK, "operator",
                                "In", "values", "rack-01", "key", "gpu", "operator", "In")),
            "m1b");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "nodeSelectorTerms[0].matchExpressions[1].values: must be specified "
                           "when operator is In");
    g = ask(f.ctx,
            named_pod("m2", NULL, "bad-type", RACK, 8, json_pack("{s:s}", "affinity", "x")),
            "m2");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "request.object.spec.affinity: expected an object");
    g = ask(f.ctx,
            named_pod("m3", NULL, "bad-weight", RACK, 8,
                      json_pack("{s:{s:{s:[{s:i, s:{s:[{s:s, s:s}]}}]}}}", "affinity",
                                "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution",
                                "weight", 0, "preference", "matchExpressions", "key", RACK,
                                "operator", "Exists")),
            "m3");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "request.object.spec.affinity.nodeAffinity."
                           "preferredDuringSchedulingIgnoredDuringExecution[0].weight");
    g = ask(f.ctx,
            named_pod("m4", NULL, "bad-tol", RACK, 8,
                      json_pack("{s:[{s:s, s:s}]}", "tolerations", "key", "k", "operator",
                                "Maybe")),
            "m4");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "request.object.spec.tolerations[0].operator");
    assert_int_equal(reservations(&f), 0);
    /* no topology annotation: not ours, not refused */
    rq r = {"m5", NULL, "plain", NULL, NULL, NULL, 8, 0, rack_affinity("Near", "rack-01")};
    g = ask(f.ctx, review_rq(&r), "m5");
    assert_true(g.allowed);
    assert_string_equal(g.host, "");
    free_fx(&f);
}

/* A restart (ctx, cache and lives made again on the same cache file) keeps
 * the reservation: the same pods get the same hosts, a rival PodSet gets
 * other nodes. */
static void test_restart(void **state)
{
    (void)state;
    char hosts[4][64];
    topo_test_cachedir tmp;
    assert_int_equal(topo_test_cachedir_make(&tmp, "handler-test"), 0);
    const char *db = tmp.path;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, db, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "r%d", i);
        got g = ask(f.ctx, job_pod_of(uid, "train", "u-train", i, 4, RACK, 8), uid);
        assert_string_not_equal(g.host, "");
        snprintf(hosts[i], sizeof hosts[i], "%s", g.host);
    }
    free_fx(&f);
    assert_int_equal(make_fx_conf(&f, &c), 0);
    assert_int_equal(reservations(&f), 1);
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.reservations, 1);
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "R%d", i);
        got g = ask(f.ctx, job_pod_of(uid, "train", "u-train", i, 4, RACK, 8), uid);
        assert_string_equal(g.host, hosts[i]);
    }
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "v%d", i);
        got g = ask(f.ctx, job_pod_of(uid, "rival", "u-rival", i, 4, RACK, 8), uid);
        assert_string_not_equal(g.host, "");
        assert_int_not_equal(rack_no(g.host), rack_no(hosts[0]));
    }
    assert_int_equal(reservations(&f), 2);
    free_fx(&f);
    topo_test_cachedir_remove(&tmp);
}

/* The pod as the API server stores it after our patch: uid, the
 * reservation and slot annotations and their seal, bound to host. */
static char *stored_pod(const char *uid, const char *name, const char *job_uid, int idx,
                        const char *reservation, int slot, const char *host)
{
    char sidx[16], sslot[16], podset[128], seal[TOPO_SHA256_HEX_LEN + 1];
    topo_keyring ring = test_keyring(RECORD_KEY);
    topo_err err = TOPO_ERR_INIT;
    snprintf(sidx, sizeof sidx, "%d", idx);
    snprintf(sslot, sizeof sslot, "%d", slot);
    snprintf(podset, sizeof podset, "team-a/job/%s", job_uid);
    topo_cache_seal_fields sf = {"team-a", podset, reservation, sslot, NULL};
    if (topo_cache_seal(seal, &ring, &sf, &err) < 0)
        fail_msg("%s", err.text);
    json_t *pod = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}}, "
        "s:{s:s, s:[{s:s, s:s, s:{s:{s:i}}}]}, s:{s:s}}",
        "apiVersion", "v1", "kind", "Pod", "metadata", "uid", uid, "name", name, "namespace",
        "team-a", "resourceVersion", "7", "labels", "batch.kubernetes.io/controller-uid",
        job_uid, "batch.kubernetes.io/job-completion-index", sidx, "annotations",
        "kueue.x-k8s.io/podset-required-topology", RACK, TOPO_ADMISSION_RESERVATION_ANNOTATION,
        reservation, TOPO_ADMISSION_SLOT_ANNOTATION, sslot, TOPO_CACHE_SEAL_ANNOTATION, seal,
        "spec", "nodeName", host,
        "containers", "name", "worker", "image", "x", "resources", "requests", "nvidia.com/gpu",
        8, "status", "phase", "Running");
    assert_non_null(pod);
    char *s = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return s;
}

/* A cached pod carrying the slot annotations binds the slot (a replacement
 * of the same index meanwhile goes to the same host without taking it);
 * deleting the pod frees the slot and the replacement claims it. */
static void test_cached_pod_binds_slot(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    got g0 = ask(f.ctx, job_pod_of("b0", "bind", "u-bind", 0, 2, RACK, 8), "b0");
    got g1 = ask(f.ctx, job_pod_of("b1", "bind", "u-bind", 1, 2, RACK, 8), "b1");
    assert_int_equal(g0.slot, 0);
    assert_int_equal(g1.slot, 1);
    assert_string_equal(g0.reservation, g1.reservation);
    char *json = stored_pod("pod-0", "bind-0", "u-bind", 0, g0.reservation, 0, g0.host);
    assert_int_equal(topo_cache_upsert_pod(f.cache, json, strlen(json), &err), 0);
    free(json);
    topo_cache_reservation r = podset_reservation(&f, "team-a/job/u-bind", pool);
    assert_int_equal(r.nslots, 2);
    assert_non_null(r.slots[0].pod_uid);
    assert_string_equal(r.slots[0].pod_uid, "pod-0");

    got g = ask(f.ctx, job_pod_of("b2", "bind", "u-bind", 0, 2, RACK, 8), "b2");
    assert_string_equal(g.host, g0.host);
    r = podset_reservation(&f, "team-a/job/u-bind", pool);
    assert_string_equal(r.slots[0].pod_uid, "pod-0");

    int deleted = 0;
    assert_int_equal(topo_cache_delete_pod(f.cache, "pod-0", &deleted, &err), 0);
    assert_int_equal(deleted, 1);
    r = podset_reservation(&f, "team-a/job/u-bind", pool);
    assert_null(r.slots[0].pod_uid);
    g = ask(f.ctx, job_pod_of("b3", "bind", "u-bind", 0, 2, RACK, 8), "b3");
    assert_string_equal(g.host, g0.host);
    assert_int_equal(g.slot, 0);
    r = podset_reservation(&f, "team-a/job/u-bind", pool);
    assert_non_null(r.slots[0].pod_uid);
    assert_int_equal(r.nclaimed, 2);
    topo_pool_free(pool);
    free_fx(&f);
}

/* A 32-pod PodSet takes the whole cluster and its pods never arrive: until
 * the TTL nothing else fits; after it, a tick deletes the reservation and
 * frees its capacity. */
static void test_expiry(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    topo_admission_stats st;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 0, 0, 1, 60, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 1000;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    got g = ask(f.ctx,
                job_pod_of("e0", "fill", "u-fill", 0, 32, "topology.topo.io/datacenter", 8),
                "e0");
    assert_string_not_equal(g.host, "");
    g = ask(f.ctx, named_pod("e1", NULL, "late", RACK, 8, NULL), "e1");
    assert_true(g.gated);

    f.now = 1059;
    assert_int_equal(topo_admission_tick(f.ctx, &err), 0);
    assert_int_equal(reservations(&f), 1);
    g = ask(f.ctx, named_pod("e2", NULL, "late", RACK, 8, NULL), "e2");
    assert_true(g.gated);

    f.now = 1061;
    assert_int_equal(topo_admission_tick(f.ctx, &err), 0);
    assert_int_equal(reservations(&f), 0);
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.reservations, 0);
    assert_int_equal(st.last_tick, 1061);
    g = ask(f.ctx, named_pod("e3", NULL, "late", RACK, 8, NULL), "e3");
    assert_false(g.gated);
    assert_string_not_equal(g.host, "");
    /* the new reservation expires at the new clock + TTL */
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r = podset_reservation(&f, "team-a/pod/late", pool);
    assert_int_equal(r.expires_at, 1061 + 60);
    topo_pool_free(pool);
    free_fx(&f);
}

static void put_job(fx *f, const char *uid, const char *name, int parallelism, int completions)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *job = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i}}", "apiVersion", "batch/v1",
                            "kind", "Job", "metadata", "uid", uid, "name", name, "namespace",
                            "team-a", "spec", "parallelism", parallelism);
    if (completions > 0)
        json_object_set_new(json_object_get(job, "spec"), "completions",
                            json_integer(completions));
    char *s = json_dumps(job, JSON_COMPACT);
    json_decref(job);
    assert_int_equal(topo_cache_upsert_job(f->cache, s, strlen(s), &err), 0);
    free(s);
}

/* A Job pod without podset-size: the cached Job's parallelism (capped by
 * completions) sizes the PodSet; a Job not cached: one pod and a warning. */
static void test_job_size_from_cache(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    topo_pool *pool = topo_pool_create();
    put_job(&f, "u-j4", "j4", 4, 0);
    put_job(&f, "u-j2", "j2", 4, 2);
    got g = ask(f.ctx, job_pod_of("j0", "j4", "u-j4", 0, 0, RACK, 8), "j0");
    assert_string_not_equal(g.host, "");
    assert_string_equal(g.warning, "");
    assert_int_equal(podset_reservation(&f, "team-a/job/u-j4", pool).nslots, 4);
    g = ask(f.ctx, job_pod_of("j1", "j2", "u-j2", 0, 0, RACK, 8), "j1");
    assert_int_equal(podset_reservation(&f, "team-a/job/u-j2", pool).nslots, 2);
    g = ask(f.ctx, job_pod_of("j2", "j5", "u-j5", 0, 0, RACK, 8), "j2");
    assert_string_not_equal(g.host, "");
    assert_contains(g.warning, "Job j5 not in the cache");
    assert_int_equal(podset_reservation(&f, "team-a/job/u-j5", pool).nslots, 1);
    topo_pool_free(pool);
    free_fx(&f);
}

static char *jobset_pod(const char *uid, int job_index, int idx)
{
    char job_uid[32], job_name[32], sji[8], sidx[8];
    snprintf(job_uid, sizeof job_uid, "u-js-%d", job_index);
    snprintf(job_name, sizeof job_name, "js-workers-%d", job_index);
    snprintf(sji, sizeof sji, "%d", job_index);
    snprintf(sidx, sizeof sidx, "%d", idx);
    json_t *labels = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "jobset.sigs.k8s.io/jobset-name", "js",
        "jobset.sigs.k8s.io/replicatedjob-name", "workers",
        "jobset.sigs.k8s.io/replicatedjob-replicas", "2", "jobset.sigs.k8s.io/job-index", sji,
        "batch.kubernetes.io/controller-uid", job_uid, "batch.kubernetes.io/job-name", job_name,
        "batch.kubernetes.io/job-completion-index", sidx);
    char gen[48];
    snprintf(gen, sizeof gen, "%s-", job_name);
    return review(uid, NULL, gen, labels,
                  json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology", RACK), 8, 0);
}

static char *lws_pod(const char *uid, const char *name, const char *worker)
{
    json_t *labels = json_pack("{s:s, s:s, s:s}", "leaderworkerset.sigs.k8s.io/name", "lws",
                               "leaderworkerset.sigs.k8s.io/group-index", "0",
                               "leaderworkerset.sigs.k8s.io/worker-index", worker);
    json_t *ann = json_pack("{s:s, s:s}", "kueue.x-k8s.io/podset-required-topology", RACK,
                            "leaderworkerset.sigs.k8s.io/size", "4");
    return review(uid, name, NULL, labels, ann, 8, 0);
}

/* JobSet: one PodSet per replicated job, replicas x parallelism pods,
 * ranked job-index x parallelism + index. LWS: the leader alone, the
 * size-1 workers ranked worker-index - 1. */
static void test_jobset_and_lws(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    topo_pool *pool = topo_pool_create();
    put_job(&f, "u-js-0", "js-workers-0", 2, 0);
    put_job(&f, "u-js-1", "js-workers-1", 2, 0);
    got a = ask(f.ctx, jobset_pod("s0", 1, 1), "s0");
    assert_int_equal(a.slot, 3);
    got b = ask(f.ctx, jobset_pod("s1", 0, 1), "s1");
    assert_int_equal(b.slot, 1);
    assert_string_equal(a.reservation, b.reservation);
    assert_string_not_equal(a.host, b.host);
    assert_int_equal(rack_no(a.host), rack_no(b.host));
    topo_cache_reservation r = podset_reservation(&f, "team-a/jobset/js/workers", pool);
    assert_int_equal(r.nslots, 4);
    assert_int_equal(r.nclaimed, 2);

    got l = ask(f.ctx, lws_pod("l0", "lws-0", "0"), "l0");
    assert_int_equal(l.slot, 0);
    assert_int_equal(podset_reservation(&f, "team-a/lws/lws/0/leader", pool).nslots, 1);
    got w2 = ask(f.ctx, lws_pod("l2", "lws-0-2", "2"), "l2");
    assert_int_equal(w2.slot, 1);
    got w1 = ask(f.ctx, lws_pod("l1", "lws-0-1", "1"), "l1");
    assert_int_equal(w1.slot, 0);
    assert_string_equal(w1.reservation, w2.reservation);
    assert_string_not_equal(w1.reservation, l.reservation);
    r = podset_reservation(&f, "team-a/lws/lws/0/workers", pool);
    assert_int_equal(r.nslots, 3);
    assert_int_equal(reservations(&f), 3);
    topo_pool_free(pool);
    free_fx(&f);
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* spine-topo (levels spine/hostname, nodes of spine-b) before rack-topo
 * (leaf/rack/hostname, every node), default policy deny. */
static void test_two_topologies(void **state)
{
    (void)state;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_DENY, NULL, 0, 1, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    /* a level only spine-topo has */
    got g = ask(f.ctx, named_pod("w1", NULL, "spine", "topology.topo.io/spine", 8, NULL), "w1");
    assert_true(has_prefix(g.reservation, "spine-topo."));
    assert_true(rack_no(g.host) >= 5);
    /* a level only rack-topo has */
    g = ask(f.ctx, named_pod("w2", NULL, "rack", RACK, 8, NULL), "w2");
    assert_true(has_prefix(g.reservation, "rack-topo."));
    /* both have hostname: the first */
    g = ask(f.ctx, named_pod("w3", NULL, "host", "kubernetes.io/hostname", 8, NULL), "w3");
    assert_true(has_prefix(g.reservation, "spine-topo."));
    assert_true(rack_no(g.host) >= 5);
    /* a nodeSelector contradicting spine-topo's node labels skips it */
    g = ask(f.ctx,
            named_pod("w4", NULL, "host-a", "kubernetes.io/hostname", 8,
                      json_pack("{s:{s:s}}", "nodeSelector", "topology.topo.io/spine",
                                "spine-a")),
            "w4");
    assert_true(has_prefix(g.reservation, "rack-topo."));
    assert_true(rack_no(g.host) <= 4);
    /* a level no topology has: the default policy */
    g = ask(f.ctx, named_pod("w5", NULL, "zone", "topology.topo.io/zone", 8, NULL), "w5");
    assert_false(g.allowed);
    assert_int_equal(g.code, 403);
    assert_contains(g.msg, "no configured topology has level topology.topo.io/zone");
    assert_int_equal(reservations(&f), 4);
    free_fx(&f);
}

static int strict_ns(void *payload, const char *ns, topo_admission_policy *out)
{
    (*(int *)payload)++;
    if (strcmp(ns, "strict") != 0)
        return 0;
    *out = TOPO_ADMISSION_POLICY_DENY;
    return 1;
}

/* The namespace hook overrides the topology's policy (gate) for "strict". */
static void test_namespace_policy(void **state)
{
    (void)state;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    /* the hook needs a payload: a ctx made with it */
    topo_admission_ctx_free(f.ctx);
    int calls = 0;
    topo_err err = TOPO_ERR_INIT;
    topo_admission_topology t = {"default", levels, 5, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                 f.live, 0};
    topo_admission_opts ao = {0};
    ao.topologies = &t;
    ao.ntopologies = 1;
    ao.cache = f.cache;
    ao.ns_policy = strict_ns;
    ao.ns_policy_payload = &calls;
    assert_int_equal(topo_admission_ctx_create(&f.ctx, &ao, &err), 0);

    got g = ask(f.ctx, named_pod("n1", "strict", "big", RACK, 16, NULL), "n1");
    assert_false(g.allowed);
    assert_int_equal(g.code, 403);
    g = ask(f.ctx, named_pod("n2", "team-a", "big", RACK, 16, NULL), "n2");
    assert_true(g.allowed);
    assert_true(g.gated);
    /* a pod that fits is placed whatever its namespace's policy */
    g = ask(f.ctx, named_pod("n3", "strict", "small", RACK, 8, NULL), "n3");
    assert_true(g.allowed);
    assert_string_not_equal(g.host, "");
    assert_true(calls >= 3);
    free_fx(&f);
}

static char *gated_pod(const char *uid, const char *name, int gated)
{
    json_t *pod = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:[{s:s, s:s, s:{s:{s:i}}}]}}",
        "apiVersion", "v1", "kind", "Pod", "metadata", "uid", uid, "name", name, "namespace",
        "team-a", "annotations", "kueue.x-k8s.io/podset-required-topology", RACK,
        TOPO_ADMISSION_WAIT_REASON_ANNOTATION, "does not fit", TOPO_ADMISSION_PODSET_ANNOTATION,
        "team-a/pod/gp", "spec", "containers", "name", "worker", "image", "x", "resources",
        "requests", "nvidia.com/gpu", 8);
    assert_non_null(pod);
    if (gated)
        json_object_set_new(json_object_get(pod, "spec"), "schedulingGates",
                            json_pack("[{s:s}]", "name", TOPO_ADMISSION_WAIT_GATE));
    char *s = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return s;
}

/* Index of the operation (op, path[, value]) in ops, -1 when absent. */
static long find_op(const json_t *ops, const char *op, const char *path, const char *value)
{
    size_t i;
    json_t *o;
    json_array_foreach(ops, i, o) {
        const char *v = json_string_value(json_object_get(o, "value"));
        if (strcmp(json_string_value(json_object_get(o, "op")), op) == 0 &&
            strcmp(json_string_value(json_object_get(o, "path")), path) == 0 &&
            (value == NULL || (v != NULL && strcmp(v, value) == 0)))
            return (long)i;
    }
    return -1;
}

/* ungate_pod: TOPO_ENOFIT while a reservation fills the cluster; once
 * another connection deleted it and a tick saw that, a patch that tests and
 * removes the gate, removes the wait annotations and adds the nodeSelector.
 * A pod without the gate: TOPO_EINVALID. */
static void test_ungate_pod(void **state)
{
    (void)state;
    topo_test_cachedir tmp;
    assert_int_equal(topo_test_cachedir_make(&tmp, "handler-test"), 0);
    const char *db = tmp.path;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, db, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    topo_err err = TOPO_ERR_INIT;
    got fill = ask(f.ctx,
                   job_pod_of("u0", "fill", "u-fill", 0, 32, "topology.topo.io/datacenter", 8),
                   "u0");
    assert_string_not_equal(fill.reservation, "");

    char *pod = gated_pod("gp-uid", "gp", 1), *patch = NULL;
    assert_int_equal(topo_admission_ungate_pod(f.ctx, pod, strlen(pod), &patch, &err),
                     TOPO_ENOFIT);
    assert_null(patch);

    /* another replica (its own connection) drops the reservation */
    topo_cache *other = NULL;
    int deleted = 0;
    assert_int_equal(topo_cache_open(&other, db, NULL, &err), 0);
    assert_int_equal(topo_cache_reservation_delete(other, fill.reservation, &deleted, &err), 0);
    assert_int_equal(deleted, 1);
    topo_cache_close(other);
    assert_int_equal(topo_admission_tick(f.ctx, &err), 0);

    assert_int_equal(topo_admission_ungate_pod(f.ctx, pod, strlen(pod), &patch, &err), 0);
    free(pod);
    json_error_t jerr;
    json_t *ops = json_loads(patch, 0, &jerr);
    free(patch);
    assert_non_null(ops);
    long t = find_op(ops, "test", "/spec/schedulingGates/0/name", TOPO_ADMISSION_WAIT_GATE);
    long r = find_op(ops, "remove", "/spec/schedulingGates/0", NULL);
    assert_true(t >= 0);
    assert_true(r > t);
    assert_true(find_op(ops, "remove", "/metadata/annotations/topology.topo.io~1wait-reason",
                        NULL) >= 0);
    assert_true(find_op(ops, "remove", "/metadata/annotations/topology.topo.io~1podset", NULL) >=
                0);
    const char *host = patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname");
    assert_non_null(host);
    (void)rack_no(host);
    assert_non_null(patched(ops, "/metadata/annotations", TOPO_ADMISSION_RESERVATION_ANNOTATION));
    json_decref(ops);
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.ungated, 1);

    pod = gated_pod("free-uid", "free", 0);
    assert_int_equal(topo_admission_ungate_pod(f.ctx, pod, strlen(pod), &patch, &err),
                     TOPO_EINVALID);
    assert_null(patch);
    free(pod);
    free_fx(&f);
    topo_test_cachedir_remove(&tmp);
}

/* The other pods of a PodSet claim its reservation from memory (handler_memo.c);
 * one deleted meanwhile through another connection (no tick between: a
 * replica's adopted in its place) is found out by the claim, and the next
 * pod is placed anew from the cache's truth, not failed. */
static void test_memo_stale_reservation(void **state)
{
    (void)state;
    topo_test_cachedir tmp;
    assert_int_equal(topo_test_cachedir_make(&tmp, "handler-test"), 0);
    const char *db = tmp.path;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, db, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    topo_err err = TOPO_ERR_INIT;
    got g0 = ask(f.ctx, job_pod_of("m0", "memo", "u-memo", 0, 4, "topology.topo.io/rack", 8), "m0");
    got g1 = ask(f.ctx, job_pod_of("m1", "memo", "u-memo", 1, 4, "topology.topo.io/rack", 8), "m1");
    assert_true(g0.allowed && g1.allowed);
    assert_string_not_equal(g0.reservation, "");
    assert_string_equal(g0.reservation, g1.reservation);

    topo_cache *other = NULL;
    int deleted = 0;
    assert_int_equal(topo_cache_open(&other, db, NULL, &err), 0);
    assert_int_equal(topo_cache_reservation_delete(other, g0.reservation, &deleted, &err), 0);
    assert_int_equal(deleted, 1);
    topo_cache_close(other);

    got g2 = ask(f.ctx, job_pod_of("m2", "memo", "u-memo", 2, 4, "topology.topo.io/rack", 8), "m2");
    assert_true(g2.allowed);
    assert_string_equal(g2.warning, "");
    assert_string_not_equal(g2.reservation, "");
    assert_string_not_equal(g2.reservation, g0.reservation);
    assert_int_equal(g2.slot, 2);
    got g3 = ask(f.ctx, job_pod_of("m3", "memo", "u-memo", 3, 4, "topology.topo.io/rack", 8), "m3");
    assert_string_equal(g3.reservation, g2.reservation);
    assert_int_equal(reservations(&f), 1);
    free_fx(&f);
    topo_test_cachedir_remove(&tmp);
}

/* --- Kueue pod groups ---------------------------------------------------------------- */

/* Pod `name` of pod group "pg" (total pods), required level; gpus 0: a
 * CPU-only leader. lw: co-located by podset-group-name "lw" (Kueue: a
 * leader and its workers, exactly two roles). */
static rq group_rq(const char *uid, const char *name, int total, int gpus, const char *level,
                   int lw)
{
    char n[16];
    snprintf(n, sizeof n, "%d", total);
    rq r = {uid, NULL, name, NULL,
            json_pack("{s:s}", "kueue.x-k8s.io/pod-group-name", "pg"),
            json_pack("{s:s, s:s}", "kueue.x-k8s.io/pod-group-total-count", n,
                      "kueue.x-k8s.io/podset-required-topology", level),
            gpus, 0, NULL};
    if (lw)
        json_object_set_new(r.annotations, "kueue.x-k8s.io/podset-group-name", json_string("lw"));
    return r;
}

static char *group_pod(const char *uid, const char *name, int total, int gpus, int lw)
{
    rq r = group_rq(uid, name, total, gpus, RACK, lw);
    return review_rq(&r);
}

/* The pod as the API server holds it after gating (its uid, the gate and
 * the gating answer's annotations, its seal among them), for
 * topo_admission_ungate_pod. */
static char *stored_gated_pod(const char *uid, const char *name, int gpus, const got *g)
{
    rq r = group_rq(uid, name, 5, gpus, RACK, 1);
    json_t *pod = pod_object(&r);
    json_t *meta = json_object_get(pod, "metadata");
    json_t *ann = json_object_get(meta, "annotations");
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(ann, TOPO_ADMISSION_WAIT_REASON_ANNOTATION, json_string(g->wait));
    json_object_set_new(ann, TOPO_ADMISSION_PODSET_ANNOTATION, json_string("team-a/pod-group/pg"));
    json_object_set_new(ann, TOPO_ADMISSION_ROLE_ANNOTATION, json_string(g->role));
    json_object_set_new(ann, TOPO_CACHE_SEAL_ANNOTATION, json_string(g->seal));
    json_object_set_new(json_object_get(pod, "spec"), "schedulingGates",
                        json_pack("[{s:s}]", "name", TOPO_ADMISSION_WAIT_GATE));
    char *text = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return text;
}

/* Several replicas: a placer that took over knows nothing of the pods of a
 * pod group the previous one gated. The ungater tries each gated pod: each
 * is recorded (TOPO_EWAITING, "n of its 5 pods have arrived"), and the pod
 * that completes the group places it. */
static void test_pod_group_takeover(void **state)
{
    (void)state;
    fx old, f;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(make_fx(&old, TOPO_ADMISSION_POLICY_GATE), 0);
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    const char *names[5] = {"leader", "w1", "w2", "w3", "w4"};
    const char *uids[5] = {"g0", "g1", "g2", "g3", "g4"};
    got g[4];
    for (int i = 0; i < 4; i++)
        g[i] = ask(old.ctx, group_pod(uids[i], names[i], 5, i == 0 ? 0 : 8, 1), uids[i]);
    for (int i = 0; i < 4; i++) {
        char *pod = stored_gated_pod(uids[i], names[i], i == 0 ? 0 : 8, &g[i]), *patch = NULL;
        assert_int_equal(topo_admission_ungate_pod(f.ctx, pod, strlen(pod), &patch, &err),
                         TOPO_EWAITING);
        char want[64];
        snprintf(want, sizeof want, "pod group: %d of its 5 pods have arrived", i + 1);
        assert_string_equal(err.text, want);
        assert_null(patch);
        free(pod);
    }
    assert_int_equal(reservations(&f), 0);
    got last = ask(f.ctx, group_pod(uids[4], names[4], 5, 8, 1), uids[4]);
    assert_false(last.gated);
    assert_string_not_equal(last.host, "");
    assert_int_equal(reservations(&f), 2);
    free_fx(&old);
    free_fx(&f);
}

/* Issue 8's group: a CPU-only leader arrives first, then four 8-GPU
 * workers. Nothing is placed on the leader's terms: every pod is gated
 * until the fifth arrives; then both roles are placed together (one
 * reservation each, the leader in the workers' rack) and the others are
 * released one by one. */
static void test_pod_group_roles(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_DENY), 0);
    const char *names[5] = {"leader", "w1", "w2", "w3", "w4"};
    const char *uids[5] = {"g0", "g1", "g2", "g3", "g4"};
    got g[5];
    for (int i = 0; i < 4; i++) {
        g[i] = ask(f.ctx, group_pod(uids[i], names[i], 5, i == 0 ? 0 : 8, 1), uids[i]);
        /* gated even under the deny policy: the group is not complete */
        assert_true(g[i].allowed);
        assert_true(g[i].gated);
        assert_string_equal(g[i].host, "");
        char want[64];
        snprintf(want, sizeof want, "pod group: %d of its 5 pods have arrived", i + 1);
        assert_string_equal(g[i].wait, want);
    }
    assert_string_not_equal(g[0].role, g[1].role); /* two roles */
    assert_string_equal(g[1].role, g[3].role);
    assert_int_equal(reservations(&f), 0);

    /* the fifth pod completes the group: placed with the others' roles */
    g[4] = ask(f.ctx, group_pod(uids[4], names[4], 5, 8, 1), uids[4]);
    assert_true(g[4].allowed);
    assert_false(g[4].gated);
    assert_string_not_equal(g[4].host, "");
    assert_int_equal(reservations(&f), 2);
    char key[200];
    snprintf(key, sizeof key, "team-a/pod-group/pg/role/%s", g[1].role);
    topo_cache_reservation workers = podset_reservation(&f, key, pool);
    assert_int_equal(workers.nslots, 4);
    snprintf(key, sizeof key, "team-a/pod-group/pg/role/%s", g[0].role);
    topo_cache_reservation leader = podset_reservation(&f, key, pool);
    assert_int_equal(leader.nslots, 1);

    /* our own output coming back (reinvocation): the fifth pod with the
     * patch it got applied (its role, slot and seal), sent again: its slot,
     * nothing new */
    rq again = group_rq("g4b", "w4", 5, 8, RACK, 1);
    json_t *out = pod_object(&again);
    json_t *root = NULL,
           *first = test_jsonpatch_of_response(post(
               f.ctx, review_of("g4b", "team-a", "w4", 0, json_deep_copy(out)), "g4b", &root));
    assert_non_null(first);
    assert_int_equal(test_jsonpatch_apply(out, first), 0);
    json_decref(first);
    json_decref(root);
    got back = ask(f.ctx, review_of("g4c", "team-a", "w4", 0, out), "g4c");
    assert_true(back.allowed);
    assert_int_equal(back.code, 0);
    assert_false(back.gated);
    assert_string_equal(back.host, ""); /* it has its nodeSelector: nothing to add */
    assert_string_equal(back.warning, "");
    assert_int_equal(reservations(&f), 2);

    /* the gated pods, as the ungater sees them */
    char hosts[5][64];
    snprintf(hosts[4], sizeof hosts[4], "%s", g[4].host);
    for (int i = 0; i < 4; i++) {
        char *pod = stored_gated_pod(uids[i], names[i], i == 0 ? 0 : 8, &g[i]), *patch = NULL;
        int rc = topo_admission_ungate_pod(f.ctx, pod, strlen(pod), &patch, &err);
        if (rc != 0)
            fail_msg("%s: %s", names[i], err.text);
        json_error_t jerr;
        json_t *ops = json_loads(patch, 0, &jerr);
        assert_non_null(ops);
        const char *host = patched(ops, "/spec/nodeSelector", "kubernetes.io/hostname");
        assert_non_null(host);
        snprintf(hosts[i], sizeof hosts[i], "%s", host);
        json_decref(ops);
        free(patch);
        free(pod);
    }
    /* four workers on four hosts (8 GPUs each), all in the leader's rack */
    for (int i = 1; i < 5; i++) {
        assert_int_equal(rack_no(hosts[i]), rack_no(hosts[0]));
        for (int j = 1; j < i; j++)
            assert_string_not_equal(hosts[i], hosts[j]);
    }
    assert_int_equal(claimed(&f), 5);
    print_message("pod group: leader %s, workers %s %s %s %s\n", hosts[0], hosts[1], hosts[2],
                  hosts[3], hosts[4]);
    topo_pool_free(pool);
    free_fx(&f);
}

/* A pod that contradicts its group is refused, naming what: its total
 * count; its Kueue request against a pod of its shape; a shape no role of
 * the placed group has. A PodSet of a Job: a pod of another shape or
 * request than the pods it was placed for. */
static void test_podset_contradictions(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    got g = ask(f.ctx, group_pod("c0", "w0", 2, 8, 0), "c0");
    assert_true(g.gated);
    g = ask(f.ctx, group_pod("c1", "w1", 3, 8, 0), "c1");
    assert_false(g.allowed);
    assert_int_equal(g.code, 400);
    assert_string_equal(g.msg, "topo-webhook: PodSet team-a/pod-group/pg: pod group "
                               "team-a/pod-group/pg: its pod-group-total-count 3 contradicts "
                               "the 2 of its pod w0");
    rq r = group_rq("c2", "w2", 2, 8, "topology.topo.io/leaf", 0);
    g = ask(f.ctx, review_rq(&r), "c2");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "its Kueue request (required topology.topo.io/leaf) "
                           "contradicts that of its pod w0 of the same shape "
                           "(required topology.topo.io/rack)");
    /* the same pod again is not a contradiction of itself; the group of two
     * completes with w3 */
    g = ask(f.ctx, group_pod("c0b", "w0", 2, 8, 0), "c0b");
    assert_true(g.gated);
    g = ask(f.ctx, group_pod("c3", "w3", 2, 8, 0), "c3");
    assert_string_not_equal(g.host, "");
    /* placed: a pod of another shape has no role to join */
    g = ask(f.ctx, group_pod("c4", "w4", 2, 4, 0), "c4");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "already has its 2 pods, and none of its roles has this pod's shape");

    /* A Job's pods share one template. */
    g = ask(f.ctx, job_pod_of("j0", "tmpl", "u-tmpl", 0, 2, RACK, 8), "j0");
    assert_string_not_equal(g.host, "");
    g = ask(f.ctx, job_pod_of("j1", "tmpl", "u-tmpl", 1, 2, RACK, 4), "j1");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "PodSet team-a/job/u-tmpl: the pod's shape (");
    assert_contains(g.msg, "a PodSet's pods share one template");
    g = ask(f.ctx, job_pod_of("j2", "tmpl", "u-tmpl", 1, 2, "topology.topo.io/leaf", 8), "j2");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "the pod's Kueue request (required topology.topo.io/leaf) contradicts "
                           "its PodSet's (required topology.topo.io/rack)");
    g = ask(f.ctx, job_pod_of("j3", "tmpl", "u-tmpl", 1, 2, RACK, 8), "j3");
    assert_string_not_equal(g.host, "");
    free_fx(&f);
}

/* Kueue's rules for PodSets sharing a podset-group-name, in its words: a
 * third role, inconsistent requests (as soon as they appear), one role
 * alone, or no role of one pod (once the group is complete). */
static void test_pod_group_grouping_rules(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    /* inconsistent: a leader asking for a leaf, workers for a rack */
    rq r = group_rq("i0", "lead", 3, 0, "topology.topo.io/leaf", 1);
    got g = ask(f.ctx, review_rq(&r), "i0");
    assert_true(g.gated);
    g = ask(f.ctx, group_pod("i1", "w1", 3, 8, 1), "i1");
    assert_int_equal(g.code, 400);
    assert_string_equal(g.msg, "metadata.annotations: Invalid value: must specify "
                               "'kueue.x-k8s.io/podset-required-topology' or "
                               "'kueue.x-k8s.io/podset-preferred-topology' topology consistent "
                               "with 'metadata.annotations' in group 'lw'");
    /* the refused pod left no record: its twin is refused alike */
    g = ask(f.ctx, group_pod("i2", "w2", 3, 8, 1), "i2");
    assert_int_equal(g.code, 400);
    free_fx(&f);

    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    g = ask(f.ctx, group_pod("t0", "a", 4, 0, 1), "t0");
    g = ask(f.ctx, group_pod("t1", "b", 4, 1, 1), "t1");
    assert_true(g.gated);
    g = ask(f.ctx, group_pod("t2", "c", 4, 2, 1), "t2");
    assert_int_equal(g.code, 400);
    assert_string_equal(g.msg, "metadata.annotations[kueue.x-k8s.io/podset-group-name]: Invalid "
                               "value: \"lw\": can only define groups of exactly 2 pod sets, "
                               "got: 3 pod set(s)");
    /* two roles of two pods each: the group completes broken */
    g = ask(f.ctx, group_pod("t3", "a2", 4, 0, 1), "t3");
    assert_true(g.gated);
    g = ask(f.ctx, group_pod("t4", "b2", 4, 1, 1), "t4");
    assert_int_equal(g.code, 400);
    assert_string_equal(g.msg, "metadata.annotations[kueue.x-k8s.io/podset-group-name]: Invalid "
                               "value: \"lw\": can only define groups where at least one pod set "
                               "has only 1 replica, got: 2 replica(s) and 2 replica(s) in the "
                               "group");
    assert_int_equal(reservations(&f), 0);
    free_fx(&f);

    /* one role alone in its group */
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    g = ask(f.ctx, group_pod("s0", "x", 2, 8, 1), "s0");
    assert_true(g.gated);
    g = ask(f.ctx, group_pod("s1", "y", 2, 8, 1), "s1");
    assert_int_equal(g.code, 400);
    assert_string_equal(g.msg, "metadata.annotations[kueue.x-k8s.io/podset-group-name]: Invalid "
                               "value: \"lw\": can only define groups of exactly 2 pod sets, "
                               "got: 1 pod set(s)");
    free_fx(&f);
}

/* A pod of a waiting group admitted again with another shape (deleted
 * and created anew) moves to that role; the role it left keeps its
 * template for its other pods (the fuzzer found the role left without one:
 * "the stored pod does not read back"). Once the group is placed, a pod
 * recreated with a shape none of its roles has is refused (the fuzzer
 * found it placing the group a second time). */
static void test_pod_group_member_changes_shape(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    assert_true(ask(f.ctx, group_pod("m0", "a", 3, 8, 0), "m0").gated);
    assert_true(ask(f.ctx, group_pod("m1", "b", 3, 8, 0), "m1").gated);
    assert_true(ask(f.ctx, group_pod("m2", "a", 3, 4, 0), "m2").gated);
    got g = ask(f.ctx, group_pod("m3", "c", 3, 4, 0), "m3");
    assert_true(g.allowed);
    assert_string_equal(g.warning, "");
    assert_string_not_equal(g.host, "");
    assert_int_equal(reservations(&f), 2); /* 8-GPU role (b), 4-GPU role (a, c) */
    /* placed: a pod of the group recreated with a shape no role has */
    g = ask(f.ctx, group_pod("m4", "a", 3, 2, 0), "m4");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "is placed, and none of its roles has this pod's shape");
    assert_int_equal(reservations(&f), 2);
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.errors, 0);
    free_fx(&f);
}

/* A group is bounded: at most 8 roles (a Kueue Workload's PodSets), at
 * most TOPO_MAX_POD_GROUP_COUNT pods. */
static void test_pod_group_bounds(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    for (int i = 0; i < 9; i++) {
        char uid[16], name[16];
        snprintf(uid, sizeof uid, "b%d", i);
        snprintf(name, sizeof name, "p%d", i);
        got g = ask(f.ctx, group_pod(uid, name, 20, i, 0), uid); /* i GPUs: i-th shape */
        if (i < 8) {
            assert_true(g.gated);
        } else {
            assert_int_equal(g.code, 400);
            assert_contains(g.msg, "already has 8 roles (pods of 8 shapes)");
        }
    }
    got g = ask(f.ctx, group_pod("big", "big", 10001, 1, 0), "big");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "\"10001\" is not a count in 1..10000");
    free_fx(&f);
}

/* Issue 8's crash: one pod whose slice is larger than its PodSet. Refused
 * with Kueue's message (it once killed the process); "True" is a bool. */
static void test_kueue_validation(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    got g = ask(f.ctx,
                review("k0", "slice3", NULL, NULL,
                       json_pack("{s:s, s:s, s:s}", "kueue.x-k8s.io/podset-required-topology",
                                 RACK, "kueue.x-k8s.io/podset-slice-required-topology",
                                 "kubernetes.io/hostname", "kueue.x-k8s.io/podset-slice-size",
                                 "3"),
                       8, 0),
                "k0");
    assert_false(g.allowed);
    assert_int_equal(g.code, 400);
    assert_string_equal(g.msg, "metadata.annotations[kueue.x-k8s.io/podset-slice-size]: Invalid "
                               "value: \"3\": must not be greater than pod set count 1");
    g = ask(f.ctx,
            review("k1", "uncon", NULL, NULL,
                   json_pack("{s:s}", "kueue.x-k8s.io/podset-unconstrained-topology", "True"), 8,
                   0),
            "k1");
    assert_true(g.allowed);
    assert_false(g.gated);
    assert_string_not_equal(g.host, "");
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.invalid, 1);
    assert_int_equal(st.denied, 1);
    free_fx(&f);
}

/* Slices that do not divide the PodSet (valid in Kueue): the engine places
 * whole slices only, so the pods past the last one have no domain. They are
 * admitted unplaced with a warning, whether real or dryRun: a slot without
 * a domain once crashed the process. */
static void test_pods_past_the_last_slice(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    char *pods[6];
    for (int i = 0; i < 6; i++) {
        char uid[8], sidx[8];
        snprintf(uid, sizeof uid, "s%d", i);
        snprintf(sidx, sizeof sidx, "%d", i);
        rq r = {uid, NULL, NULL, "sl-",
                json_pack("{s:s, s:s, s:s}", "batch.kubernetes.io/controller-uid", "u-sl",
                          "batch.kubernetes.io/job-name", "sl",
                          "batch.kubernetes.io/job-completion-index", sidx),
                json_pack("{s:s, s:s, s:s, s:s}", "kueue.x-k8s.io/podset-required-topology", RACK,
                          "kueue.x-k8s.io/podset-slice-required-topology",
                          "kubernetes.io/hostname", "kueue.x-k8s.io/podset-slice-size", "4",
                          TOPO_PODSET_SIZE_ANNOTATION, "6"),
                1, i == 5, NULL};
        pods[i] = review_rq(&r);
    }
    /* dryRun of the last pod first: no domain for it */
    got g = ask(f.ctx, pods[5], "s5");
    assert_true(g.allowed);
    assert_string_equal(g.host, "");
    assert_contains(g.warning, "its slot has no topology domain");
    for (int i = 0; i < 5; i++) {
        char uid[8];
        snprintf(uid, sizeof uid, "s%d", i);
        g = ask(f.ctx, pods[i], uid);
        assert_true(g.allowed);
        if (i < 4) {
            assert_string_not_equal(g.host, "");
        } else {
            assert_string_equal(g.host, "");
            assert_contains(g.warning, "not placed");
        }
    }
    free_fx(&f);
}

/* Issue 9: a pod asking for 2^63-1 pods once divided by zero in the
 * engine (the pod itself added to it overflowed): now it fits nowhere and
 * is gated; the process answers the next pod. */
static void test_extreme_pods_request(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    rq r = {"x0", NULL, "huge", NULL, NULL,
            json_pack("{s:s}", "kueue.x-k8s.io/podset-unconstrained-topology", "true"), 0, 0,
            json_pack("{s:[{s:s, s:s, s:{s:{s:s}}}]}", "containers", "name", "w", "image", "x",
                      "resources", "requests", "pods", "9223372036854775807")};
    got g = ask(f.ctx, review_rq(&r), "x0");
    assert_true(g.allowed);
    assert_true(g.gated);
    assert_contains(g.wait, "pods");
    g = ask(f.ctx, named_pod("x1", NULL, "next", RACK, 8, NULL), "x1");
    assert_string_not_equal(g.host, "");
    free_fx(&f);
}

/* Issue 9: a message cut inside a UTF-8 character made jansson refuse the
 * answer (HTTP 500, and with failurePolicy Ignore the pod went through
 * unplaced). Long non-ASCII values now give whole answers. */
static void test_long_utf8_values(void **state)
{
    (void)state;
    fx f;
    char value[2 * 1200 + 1];
    for (size_t i = 0; i < 1200; i++)
        memcpy(value + 2 * i, "\xc3\xa9", 2); /* é */
    value[2 * 1200] = '\0';
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    for (size_t n = 230; n <= 1200; n += 97) {
        char v[2 * 1200 + 1];
        memcpy(v, value, 2 * n);
        v[2 * n] = '\0';
        got g = ask(f.ctx,
                    review("u8", "u8", NULL, NULL,
                           json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology", v), 8,
                           0),
                    "u8");
        assert_int_equal(g.code, 400); /* not a label name: Kueue's message */
        assert_contains(g.msg, "metadata.annotations[kueue.x-k8s.io/podset-required-topology]");
        g = ask(f.ctx,
                review("u9", NULL, "u9-", NULL,
                       json_pack("{s:s, s:s}", "kueue.x-k8s.io/podset-required-topology", RACK,
                                 "kueue.x-k8s.io/podset-group-name", v),
                       8, 1),
                "u9");
        assert_true(g.allowed);
    }
    free_fx(&f);
}

/* Issue 9: a pod admitted unplaced because its own nodeSelector pins a
 * level elsewhere kept the slot it had claimed, and the pod that could use
 * it found every slot taken. At admission such a pod is now refused (it is
 * not shaped like its PodSet); the ungater, which does not re-check shapes,
 * can still meet it: the slot goes back. */
static rq tj_rq(const char *uid, const char *pin)
{
    rq r = {uid, NULL, NULL, "tj-",
            json_pack("{s:s, s:s}", "batch.kubernetes.io/controller-uid", "u-tj",
                      "batch.kubernetes.io/job-name", "tj"),
            json_pack("{s:s, s:s}", "kueue.x-k8s.io/podset-required-topology", RACK,
                      TOPO_PODSET_SIZE_ANNOTATION, "2"),
            8, 0, pin ? json_pack("{s:{s:s}}", "nodeSelector", RACK, pin) : NULL};
    return r;
}

static void test_unplaced_pod_gives_its_slot_back(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    rq r = tj_rq("t0", NULL);
    got g = ask(f.ctx, review_rq(&r), "t0");
    assert_string_not_equal(g.rack, "");
    char other[64];
    snprintf(other, sizeof other, "%s", strcmp(g.rack, "rack-01") == 0 ? "rack-02" : "rack-01");
    /* at admission: refused, the template differs */
    r = tj_rq("t1", other);
    g = ask(f.ctx, review_rq(&r), "t1");
    assert_int_equal(g.code, 400);
    assert_contains(g.msg, "a PodSet's pods share one template");
    /* the same pod gated earlier, as the ungater retries it: not placed,
     * and no slot kept */
    r = tj_rq("t1", other);
    json_t *pod = pod_object(&r);
    json_t *meta = json_object_get(pod, "metadata");
    json_object_set_new(meta, "uid", json_string("uid-t1"));
    json_object_set_new(json_object_get(meta, "annotations"), TOPO_ADMISSION_WAIT_REASON_ANNOTATION,
                        json_string("waiting"));
    json_object_set_new(json_object_get(pod, "spec"), "schedulingGates",
                        json_pack("[{s:s}]", "name", TOPO_ADMISSION_WAIT_GATE));
    char *text = json_dumps(pod, JSON_COMPACT), *patch = NULL;
    json_decref(pod);
    assert_int_equal(topo_admission_ungate_pod(f.ctx, text, strlen(text), &patch, &err),
                     TOPO_ENOFIT);
    free(text);
    assert_int_equal(claimed(&f), 1);
    /* a pod that can take the slot gets it */
    r = tj_rq("t2", NULL);
    g = ask(f.ctx, review_rq(&r), "t2");
    assert_string_not_equal(g.host, "");
    assert_int_equal(claimed(&f), 2);
    free_fx(&f);
}


/* A Job pod of `size` pods in namespace ns asking `gpus` GPUs (and 16 CPUs)
 * at level (required; "true": unconstrained); dry_run as a probe. No
 * requests at all when gpus < 0. */
static char *fair_pod(const char *uid, const char *ns, const char *job, int size,
                      const char *level, int gpus, int dry_run)
{
    char ssize[16];
    snprintf(ssize, sizeof ssize, "%d", size);
    rq r = {uid, ns, NULL, "w-",
            json_pack("{s:s, s:s}", "batch.kubernetes.io/controller-uid", job,
                      "batch.kubernetes.io/job-name", job),
            json_pack("{s:s, s:s}", strcmp(level, "true") == 0
                                        ? TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY
                                        : "kueue.x-k8s.io/podset-required-topology",
                      level, TOPO_PODSET_SIZE_ANNOTATION, ssize),
            gpus < 0 ? 0 : gpus, dry_run,
            gpus < 0 ? json_pack("{s:[{s:s, s:s}]}", "containers", "name", "w", "image", "x")
                     : NULL};
    return review_rq(&r);
}

/* Issue 9: one pod with podset-size 3511 and no requests held every node's
 * pod capacity, and every later topology pod waited. A PodSet whose pods
 * request nothing is still placed (its pods get their domains) but holds
 * nothing: a 32 x 8-GPU PodSet after it fits. */
static void test_request_nothing_holds_nothing(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    got g = ask(f.ctx, fair_pod("n0", NULL, "idle", 3511, "true", -1, 0), "n0");
    assert_string_not_equal(g.host, "");
    assert_int_equal(reservations(&f), 1);
    g = ask(f.ctx, fair_pod("n1", NULL, "train", 32, "topology.topo.io/datacenter", 8, 0), "n1");
    assert_false(g.gated);
    assert_string_not_equal(g.host, "");
    assert_int_equal(reservations(&f), 2);
    free_fx(&f);
}

/* Issue 9: room held for pods that never come is given back after the
 * unclaimed TTL (120 s by default; the live snapshot learns it at its next
 * resync, at most 30 s later), long before the reservation's own (600 s
 * here); a late pod of that PodSet is then admitted unplaced. */
static void test_unclaimed_slots_given_back(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 0, 0, 1, 600, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 1000;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    /* 32 x 8 GPUs: every GPU of the 32 nodes */
    got g = ask(f.ctx, fair_pod("u0", NULL, "big", 32, "topology.topo.io/datacenter", 8, 0), "u0");
    assert_string_not_equal(g.host, "");
    g = ask(f.ctx, fair_pod("x0", NULL, "small", 1, RACK, 8, 0), "x0");
    assert_true(g.gated);

    f.now = 1000 + TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT - 1;
    assert_int_equal(topo_admission_tick(f.ctx, &err), 0);
    g = ask(f.ctx, fair_pod("x1", NULL, "small", 1, RACK, 8, 0), "x1");
    assert_true(g.gated);

    /* given back at the next resync: within 30 s (RESYNC_MAX_S) */
    f.now = 1000 + TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT + 30;
    assert_int_equal(topo_admission_tick(f.ctx, &err), 0);
    assert_int_equal(reservations(&f), 1);
    g = ask(f.ctx, fair_pod("x2", NULL, "small", 1, RACK, 8, 0), "x2");
    assert_false(g.gated);
    assert_string_not_equal(g.host, "");
    g = ask(f.ctx, fair_pod("u1", NULL, "big", 32, "topology.topo.io/datacenter", 8, 0), "u1");
    assert_true(g.allowed);
    assert_string_equal(g.host, "");
    assert_contains(g.warning, "free slots were given back");
    free_fx(&f);
}

typedef struct unclaimed_seen {
    char text[512];
} unclaimed_seen;

static int note_unclaimed(void *payload, const char *ns, const char *resource, int64_t amount)
{
    unclaimed_seen *u = payload;
    size_t n = strlen(u->text);
    snprintf(u->text + n, sizeof u->text - n, "%s/%s=%lld ", ns, resource, (long long)amount);
    return 0;
}

/* Issue 9: caps on room held for pods not created yet, per namespace and in
 * all; over one the PodSet does not fit (gated with the reason), a dry run
 * included; other namespaces and resources are not held back. */
static void test_unclaimed_caps(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    static const topo_resource per_ns[] = {{"nvidia.com/gpu", 64}};
    static const topo_resource all[] = {{"pods", 100}};
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 0, 0, 0, 0, NULL, per_ns, all, 1, 1, NULL};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    const char *dc = "topology.topo.io/datacenter";
    /* 15 pods to come x 8 GPUs = 120 > 64 */
    got g = ask(f.ctx, fair_pod("a0", NULL, "a", 16, dc, 8, 0), "a0");
    assert_true(g.gated);
    assert_contains(g.wait, "namespace team-a would hold 120 nvidia.com/gpu reserved for pods "
                            "not created yet (0 before this PodSet), over the cap of 64");
    /* 7 x 8 = 56, then 56 + 8 = 64: within */
    g = ask(f.ctx, fair_pod("b0", NULL, "b", 8, dc, 8, 0), "b0");
    assert_string_not_equal(g.host, "");
    g = ask(f.ctx, fair_pod("c0", NULL, "c", 2, dc, 8, 0), "c0");
    assert_string_not_equal(g.host, "");
    /* 72: over, as a dry run too (it tells no more than a real request) */
    g = ask(f.ctx, fair_pod("d0", NULL, "d", 2, dc, 8, 1), "d0");
    assert_true(g.gated);
    assert_contains(g.wait, "would hold 72 nvidia.com/gpu");
    g = ask(f.ctx, fair_pod("d1", NULL, "d", 2, dc, 8, 0), "d1");
    assert_true(g.gated);
    /* another namespace has its own cap */
    g = ask(f.ctx, fair_pod("e0", "team-b", "e", 8, dc, 8, 0), "e0");
    assert_string_not_equal(g.host, "");
    /* the cluster's cap on pods: 7 + 1 + 7 held, 89 more is 104 > 100 */
    g = ask(f.ctx, fair_pod("f0", "team-c", "f", 90, dc, 0, 0), "f0");
    assert_true(g.gated);
    assert_contains(g.wait, "the cluster would hold 104 pods reserved");
    g = ask(f.ctx, fair_pod("f1", "team-c", "f2", 86, dc, 0, 0), "f1");
    assert_string_not_equal(g.host, "");
    /* a PodSet asking for nothing is not held back */
    g = ask(f.ctx, fair_pod("g0", "team-c", "g", 500, "true", -1, 0), "g0");
    assert_string_not_equal(g.host, "");

    unclaimed_seen u;
    memset(&u, 0, sizeof u);
    assert_int_equal(topo_admission_unclaimed_foreach(f.ctx, note_unclaimed, &u, &err), 0);
    assert_contains(u.text, "team-a/pods=8 ");
    assert_contains(u.text, "team-a/nvidia.com/gpu=64 ");
    assert_contains(u.text, "team-a/cpu=128000 ");
    assert_contains(u.text, "team-b/nvidia.com/gpu=56 ");
    assert_contains(u.text, "team-c/pods=85 ");
    free_fx(&f);
}

/* The namespace's ResourceQuota room, as webhook/quota.c would give it:
 * team-a may still create 4 pods' worth of GPUs (32), team-b has none. */
static int fake_quota(void *payload, const char *ns, topo_pool *pool,
                      const topo_admission_quota_room **out, size_t *n)
{
    (void)payload;
    if (strcmp(ns, "team-a") != 0)
        return 0;
    topo_admission_quota_room *r = topo_pool_calloc(pool, 2, sizeof(*r));
    if (r == NULL)
        return TOPO_ENOMEM;
    r[0] = (topo_admission_quota_room){"nvidia.com/gpu", 32};
    r[1] = (topo_admission_quota_room){"pods", 1000};
    *out = r;
    *n = 2;
    return 1;
}

/* Issue 9: ResourceQuota saw one pod while its PodSet held 194 GPUs. A new
 * reservation counts against the room the namespace's quota leaves. */
static void test_resource_quota_room(void **state)
{
    (void)state;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0,
                 fake_quota};
    f.now = 0;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    const char *dc = "topology.topo.io/datacenter";
    got g = ask(f.ctx, fair_pod("q0", NULL, "q", 8, dc, 8, 0), "q0");
    assert_true(g.gated);
    assert_contains(g.wait, "namespace team-a: its ResourceQuota leaves 32 nvidia.com/gpu, the "
                            "PodSet's 8 pods need 64 (0 held for pods not created yet before it)");
    g = ask(f.ctx, fair_pod("q1", NULL, "q1", 4, dc, 8, 0), "q1");
    assert_string_not_equal(g.host, "");
    /* 24 held for its 3 pods to come: one more pod of 8 GPUs is 32, two 40 */
    g = ask(f.ctx, fair_pod("q2", NULL, "q2", 2, dc, 8, 0), "q2");
    assert_true(g.gated);
    assert_contains(g.wait, "(24 held for pods not created yet before it)");
    g = ask(f.ctx, fair_pod("q3", "team-b", "q3", 8, dc, 8, 0), "q3");
    assert_string_not_equal(g.host, "");
    free_fx(&f);
}


/* Issue 9: a request's deadline is enforced while it is handled: one that
 * reaches the placement lock past it stops there, reserves nothing and is
 * answered 504; within it, placed as ever. */
static void test_deadline(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    char *body = fair_pod("t0", NULL, "late", 4, RACK, 8, 0), *out = NULL;
    size_t len = 0;
    int status = 0;
    assert_int_equal(
        topo_admission_handle_until(f.ctx, now_ns - 1, body, strlen(body), &out, &len, &status),
        0);
    assert_int_equal(status, 504);
    assert_non_null(strstr(out, "nothing was reserved"));
    free(out);
    assert_int_equal(reservations(&f), 0);
    assert_int_equal(claimed(&f), 0);
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.timed_out, 1);
    out = NULL;
    assert_int_equal(topo_admission_handle_until(f.ctx, now_ns + 60 * INT64_C(1000000000), body,
                                                 strlen(body), &out, &len, &status),
                     0);
    assert_int_equal(status, 200);
    assert_non_null(strstr(out, "\"allowed\":true"));
    free(out);
    free(body);
    assert_int_equal(reservations(&f), 1);
    free_fx(&f);
}

/* Issue 9: what a topology pod may carry is bounded (limits.h); past a
 * limit, a 400 naming the field. At the limit, placed. */
static void test_pod_limits(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    const struct {
        const char *field; /* spec member filled */
        size_t n;
        const char *want; /* NULL: placed */
    } rows[] = {
        {"tolerations", TOPO_MAX_POD_TOLERATIONS, NULL},
        {"tolerations", TOPO_MAX_POD_TOLERATIONS + 1,
         "request.object.spec.tolerations: 257 entries, more than 256"},
        {"initContainers", TOPO_MAX_POD_CONTAINERS + 1,
         "request.object.spec.initContainers: 257 entries, more than 256"},
        {"terms", TOPO_MAX_POD_AFFINITY_TERMS + 1,
         "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: 65 entries"},
        {"values", TOPO_MAX_POD_EXPRESSION_VALUES + 1,
         "nodeSelectorTerms[0].matchExpressions[0].values: 513 entries, more than 512"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *extra = json_object();
        json_t *arr = json_array();
        for (size_t k = 0; k < rows[i].n; k++) {
            char v[32];
            snprintf(v, sizeof v, "v%zu", k);
            if (strcmp(rows[i].field, "tolerations") == 0)
                json_array_append_new(arr, json_pack("{s:s, s:s}", "key", v, "operator", "Exists"));
            else if (strcmp(rows[i].field, "initContainers") == 0)
                json_array_append_new(arr, json_pack("{s:s, s:s}", "name", v, "image", "x"));
            else if (strcmp(rows[i].field, "terms") == 0)
                json_array_append_new(arr, json_pack("{s:[{s:s, s:s}]}", "matchExpressions", "key",
                                                     v, "operator", "Exists"));
            else
                json_array_append_new(arr, json_string(v));
        }
        if (strcmp(rows[i].field, "terms") == 0)
            json_object_set_new(extra, "affinity",
                                json_pack("{s:{s:{s:o}}}", "nodeAffinity",
                                          "requiredDuringSchedulingIgnoredDuringExecution",
                                          "nodeSelectorTerms", arr));
        else if (strcmp(rows[i].field, "values") == 0)
            json_object_set_new(
                extra, "affinity",
                json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:o}]}]}}}", "nodeAffinity",
                          "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                          "matchExpressions", "key", "k", "operator", "In", "values", arr));
        else
            json_object_set_new(extra, rows[i].field, arr);
        got g = ask(f.ctx, named_pod("lim", NULL, "lim", RACK, 1, extra), "lim");
        if (rows[i].want == NULL) {
            assert_true(g.allowed);
            assert_string_not_equal(g.host, "");
        } else {
            assert_int_equal(g.code, 400);
            assert_contains(g.msg, rows[i].want);
        }
    }
    free_fx(&f);
}

/* A valid request naming a level no topology has: gated, and counted. */
static void test_unknown_level(void **state)
{
    (void)state;
    fx f;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    got g = ask(f.ctx, named_pod("l0", NULL, "zone", "topology.kubernetes.io/zone", 8, NULL),
                "l0");
    assert_true(g.gated);
    assert_string_equal(g.wait, "no configured topology has level topology.kubernetes.io/zone");
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.unknown_level, 1);
    assert_int_equal(st.invalid, 0);
    free_fx(&f);
}

/* Issue 9: /readyz stayed 200 while every placement failed for a local
 * reason. Three failures in a row make the handler unready; 30 s after
 * the last one it is ready again (requests try again), and a stored claim
 * ends it. The cache is broken from another connection: its reservation
 * tables dropped. */
static void test_unready_while_placements_fail(void **state)
{
    (void)state;
    char why[256];
    topo_test_cachedir tmp;
    assert_int_equal(topo_test_cachedir_make(&tmp, "handler-test"), 0);
    const char *db = tmp.path;
    fx f;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, db, 0, 0, 1, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 1000;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    assert_int_equal(topo_admission_ready(f.ctx, why, sizeof why), 1);
    got g = ask(f.ctx, named_pod("r0", NULL, "ok", RACK, 8, NULL), "r0");
    assert_string_not_equal(g.host, "");

    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "ALTER TABLE reservation_slots RENAME TO hidden_slots",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    for (int i = 1; i <= 3; i++) {
        char uid[8], name[8];
        snprintf(uid, sizeof uid, "r%d", i);
        snprintf(name, sizeof name, "p%d", i);
        g = ask(f.ctx, named_pod(uid, NULL, name, RACK, 8, NULL), uid);
        assert_true(g.allowed);
        assert_contains(g.warning, "internal error");
        assert_int_equal(topo_admission_ready(f.ctx, NULL, 0), i < 3);
    }
    assert_int_equal(topo_admission_ready(f.ctx, why, sizeof why), 0);
    assert_contains(why, "3 placements in a row failed here");
    f.now += 29;
    assert_int_equal(topo_admission_ready(f.ctx, NULL, 0), 0);
    f.now += 1;
    assert_int_equal(topo_admission_ready(f.ctx, NULL, 0), 1);
    /* repaired: the next placement stores its claim, and it is over */
    assert_int_equal(sqlite3_exec(raw, "ALTER TABLE hidden_slots RENAME TO reservation_slots",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    g = ask(f.ctx, named_pod("r9", NULL, "again", RACK, 8, NULL), "r9");
    assert_string_not_equal(g.host, "");
    topo_admission_stats st;
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.failing, 0);
    free_fx(&f);
    topo_test_cachedir_remove(&tmp);
}

/* AdmissionReviews anyone who reaches the webhook can send, for pods of a
 * PodSet that are never created, claim its free slots provisionally. The
 * PodSet's real pods then take those slots over, each its own, in the
 * PodSet's rack (once, they were admitted with no domain: "all 4 slots are
 * claimed"); a slot taken over is not taken again by the next forged
 * request, which is admitted unplaced. */
static void test_forged_reviews_take_no_slot_from_real_pods(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(make_fx(&f, TOPO_ADMISSION_POLICY_GATE), 0);
    got g0 = ask(f.ctx, job_pod_of("r0", "fj", "u-fj", -1, 4, RACK, 8), "r0");
    assert_int_equal(g0.slot, 0);
    char *json = stored_pod("pod-r0", "fj-r0", "u-fj", 0, g0.reservation, 0, g0.host);
    assert_int_equal(topo_cache_upsert_pod(f.cache, json, strlen(json), &err), 0);
    free(json);
    for (int i = 1; i <= 3; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "forged-%d", i);
        got x = ask(f.ctx, job_pod_of(uid, "fj", "u-fj", -1, 4, RACK, 8), uid);
        assert_int_equal(x.slot, i);
    }
    int seen[4] = {1, 0, 0, 0};
    for (int i = 1; i <= 3; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "real-%d", i);
        got g = ask(f.ctx, job_pod_of(uid, "fj", "u-fj", -1, 4, RACK, 8), uid);
        assert_string_equal(g.warning, "");
        assert_string_equal(g.reservation, g0.reservation);
        assert_string_equal(g.rack, g0.rack);
        assert_true(g.slot >= 1 && g.slot <= 3 && !seen[g.slot]);
        seen[g.slot] = 1;
    }
    got extra = ask(f.ctx, job_pod_of("forged-4", "fj", "u-fj", -1, 4, RACK, 8), "forged-4");
    assert_string_equal(extra.host, "");
    assert_contains(extra.warning, "not placed");
    free_fx(&f);
}

/* The counters follow what the handler did. */
static void test_stats(void **state)
{
    (void)state;
    fx f;
    topo_err err = TOPO_ERR_INIT;
    topo_admission_stats st;
    fx_conf c = {TOPO_ADMISSION_POLICY_GATE, NULL, 0, 0, 1, 0, NULL, NULL, NULL, 0, 0, NULL};
    f.now = 500;
    assert_int_equal(make_fx_conf(&f, &c), 0);
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.placed + st.reserved + st.gated + st.denied + st.passed, 0);
    assert_int_equal(st.last_tick, 500); /* ctx_create ticks */
    got s0 = ask(f.ctx, job_pod_of("s0", "st", "u-st", 0, 2, RACK, 8), "s0");
    got s1 = ask(f.ctx, job_pod_of("s1", "st", "u-st", 1, 2, RACK, 8), "s1");
    /* both created (no slot held only provisionally): a third pod of the
     * two-pod PodSet (index beyond it) finds no slot left */
    for (int i = 0; i < 2; i++) {
        const got *g = i ? &s1 : &s0;
        char uid[16], name[16];
        snprintf(uid, sizeof uid, "pod-s%d", i);
        snprintf(name, sizeof name, "st-%d", i);
        char *json = stored_pod(uid, name, "u-st", i, g->reservation, i, g->host);
        assert_int_equal(topo_cache_upsert_pod(f.cache, json, strlen(json), &err), 0);
        free(json);
    }
    got g = ask(f.ctx, job_pod_of("s2", "st", "u-st", 2, 2, RACK, 8), "s2");
    assert_string_equal(g.host, "");
    assert_contains(g.warning, "not placed");
    (void)ask(f.ctx, review("s3", "plain", NULL, NULL, NULL, 8, 0), "s3");
    (void)ask(f.ctx, named_pod("s4", NULL, "big", RACK, 16, NULL), "s4");
    (void)ask(f.ctx,
              review("s5", "bad", NULL, NULL,
                     json_pack("{s:s, s:s}", "kueue.x-k8s.io/podset-required-topology", RACK,
                               TOPO_PODSET_SIZE_ANNOTATION, "x"),
                     8, 0),
              "s5");
    f.now = 510;
    assert_int_equal(topo_admission_tick(f.ctx, &err), 0);
    topo_admission_get_stats(f.ctx, &st);
    assert_int_equal(st.placed, 2);
    assert_int_equal(st.reserved, 1);
    assert_int_equal(st.ignored, 1);
    assert_int_equal(st.passed, 1);
    assert_int_equal(st.gated, 1);
    assert_int_equal(st.denied, 1);
    assert_int_equal(st.ungated, 0);
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.reservations, 1);
    assert_int_equal(st.last_tick, 510);
    free_fx(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexed_job_one_rack), cmocka_unit_test(test_reservation_charged),
        cmocka_unit_test(test_no_fit_policies),      cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_pass_through),         cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_tolerations),          cmocka_unit_test(test_required_affinity),
        cmocka_unit_test(test_malformed_affinity),   cmocka_unit_test(test_restart),
        cmocka_unit_test(test_cached_pod_binds_slot), cmocka_unit_test(test_expiry),
        cmocka_unit_test(test_forged_reviews_take_no_slot_from_real_pods),
        cmocka_unit_test(test_job_size_from_cache),  cmocka_unit_test(test_jobset_and_lws),
        cmocka_unit_test(test_two_topologies),       cmocka_unit_test(test_namespace_policy),
        cmocka_unit_test(test_ungate_pod),           cmocka_unit_test(test_stats),
        cmocka_unit_test(test_memo_stale_reservation),
        cmocka_unit_test(test_pod_group_roles), cmocka_unit_test(test_pod_group_takeover),      cmocka_unit_test(test_podset_contradictions),
        cmocka_unit_test(test_kueue_validation),     cmocka_unit_test(test_unknown_level),
        cmocka_unit_test(test_pods_past_the_last_slice), cmocka_unit_test(test_pod_group_bounds),
        cmocka_unit_test(test_pod_group_grouping_rules),
        cmocka_unit_test(test_pod_group_member_changes_shape),
        cmocka_unit_test(test_extreme_pods_request), cmocka_unit_test(test_long_utf8_values),
        cmocka_unit_test(test_unplaced_pod_gives_its_slot_back),
        cmocka_unit_test(test_pod_limits),
        cmocka_unit_test(test_request_nothing_holds_nothing),
        cmocka_unit_test(test_unclaimed_slots_given_back),
        cmocka_unit_test(test_unclaimed_caps),
        cmocka_unit_test(test_resource_quota_room),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_unready_while_placements_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
