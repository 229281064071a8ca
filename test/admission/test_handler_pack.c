#define _POSIX_C_SOURCE 200809L
/* Tests for packing pods without topology requests through
 * topo_admission_handle (lib/admission/handler_pack.c, review_packing.c,
 * patch_pod.c's preferred terms), over a live snapshot with the real
 * topo_packing_find: two blocks of three racks of two 8-GPU nodes, the
 * racks named alike in both blocks (r1..r3), pods running on some. The
 * answer in both modes (no affinity, the pod's own affinity kept, a
 * nodeSelector, keys escaped), every pass reason, pods not counted, two
 * topologies merged, and packing off answering as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "support/jsonpatch_apply.h"
#include "support/racks.h"
#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/live.h"

#define BLOCK "topology.topo.io/block"
#define RACK "topology.topo.io/rack"
#define HOST "kubernetes.io/hostname"
#define POOL "example.com/pool"
#define PREF "preferredDuringSchedulingIgnoredDuringExecution"

static const char *const levels[] = {BLOCK, RACK, HOST};
static const char *const rack_levels[] = {RACK, HOST};
static const char *const gpu[] = {"nvidia.com/gpu"};
static const topo_kv pool_a[] = {{POOL, "a"}};
static const topo_kv pool_b[] = {{POOL, "b"}};

typedef struct fx {
    topo_live *live, *live_b;
    topo_cache *cache;
    topo_admission_ctx *ctx;
    int ready;
} fx;

typedef struct fx_conf {
    int off;      /* packing NULL */
    int required; /* mode required */
    int two;      /* a second topology: pool b, levels rack, hostname */
} fx_conf;

static int opted_out(void *payload, const char *ns)
{
    (void)payload;
    return strcmp(ns, "opted-out") == 0;
}

static int is_ready(void *payload)
{
    return ((const fx *)payload)->ready;
}

static void node(topo_live *live, const char *host, const char *block, const char *rack,
                 const char *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv labels[] = {{BLOCK, block}, {RACK, rack}, {HOST, host}, {POOL, pool}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"cpu", 64000}, {"pods", 110}};
    topo_node_spec n = {host, labels, 4, alloc, 3, NULL, 0, 0, 1, 0};
    if (topo_live_upsert_node(live, &n, &err) != 0)
        fail_msg("node %s: %s", host, err.text);
}

static void running(topo_live *live, const char *uid, const char *host, int64_t gpus)
{
    topo_err err = TOPO_ERR_INIT;
    topo_resource req[] = {{"nvidia.com/gpu", gpus}};
    assert_int_equal(topo_live_upsert_pod(live, uid, host, 1, req, 1, &err), 0);
}

/* GPUs used per rack (free of 16): b2/r1 6 (10), b1/r1 4 (12), b1/r3 3
 * (13), b2/r2 2 (14), b1/r2 1 (15); b2/r3 empty. */
static void open_fx(fx *f, const fx_conf *c)
{
    static const char *const hosts[] = {"h1", "h2", "h3", "h4", "h5",  "h6",
                                        "h7", "h8", "h9", "h10", "h11", "h12"};
    static const char *const racks[] = {"r1", "r1", "r2", "r2", "r3", "r3"};
    topo_err err = TOPO_ERR_INIT;
    memset(f, 0, sizeof(*f));
    f->ready = 1;
    assert_int_equal(topo_cache_open(&f->cache, ":memory:", NULL, &err), 0);
    topo_snapshot_opts so = {"gpus", levels, 3, pool_a, 1};
    assert_int_equal(topo_live_create(&f->live, &so, &err), 0);
    for (size_t i = 0; i < 12; i++)
        node(f->live, hosts[i], i < 6 ? "b1" : "b2", racks[i % 6], "a");
    running(f->live, "p1", "h7", 6);
    running(f->live, "p2", "h1", 4);
    running(f->live, "p3", "h5", 3);
    running(f->live, "p4", "h9", 2);
    running(f->live, "p5", "h3", 1);
    assert_int_equal(topo_live_commit(f->live, &err), 0);

    topo_admission_topology t[2] = {
        {"gpus", levels, 3, pool_a, 1, TOPO_ADMISSION_POLICY_GATE, f->live, 2}};
    if (c->two) {
        /* pool b: rack rb1 (h20, h21) with 14 of 16 used: the tightest */
        topo_snapshot_opts sb = {"pool-b", rack_levels, 2, pool_b, 1};
        assert_int_equal(topo_live_create(&f->live_b, &sb, &err), 0);
        node(f->live_b, "h20", "bx", "rb1", "b");
        node(f->live_b, "h21", "bx", "rb1", "b");
        running(f->live_b, "q1", "h20", 8);
        running(f->live_b, "q2", "h21", 6);
        assert_int_equal(topo_live_commit(f->live_b, &err), 0);
        t[1] = (topo_admission_topology){
            "pool-b", rack_levels, 2, pool_b, 1, TOPO_ADMISSION_POLICY_GATE, f->live_b, 1};
    }
    topo_admission_packing pk = {gpu, 1,
                                 c->required ? TOPO_ADMISSION_PACKING_REQUIRED
                                             : TOPO_ADMISSION_PACKING_PREFERRED};
    topo_admission_opts ao = {0};
    ao.topologies = t;
    ao.ntopologies = c->two ? 2 : 1;
    ao.cache = f->cache;
    if (!c->off) {
        ao.packing = &pk;
        ao.ns_packing_off = opted_out;
        ao.packing_ready = is_ready;
        ao.packing_ready_payload = f;
    }
    if (topo_admission_ctx_create(&f->ctx, &ao, &err) < 0)
        fail_msg("ctx: %s", err.text);
}

static void close_fx(fx *f)
{
    topo_admission_ctx_free(f->ctx);
    topo_cache_close(f->cache);
    topo_live_free(f->live);
    topo_live_free(f->live_b);
}

/* A pod requesting gpus (as a string quantity: "0" too), in ns, without a
 * topology annotation; spec_extra merged into its spec (stolen; NULL). */
static json_t *gpu_pod(const char *ns, const char *gpus, json_t *spec_extra)
{
    json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s, s:{s:{s:s, s:s}}}]}}", "metadata",
                            "name", "nb-0", "namespace", ns, "spec", "containers", "name", "main",
                            "image", "x", "resources", "requests", "nvidia.com/gpu", gpus, "cpu",
                            "1");
    assert_non_null(pod);
    if (spec_extra != NULL) {
        assert_int_equal(json_object_update(json_object_get(pod, "spec"), spec_extra), 0);
        json_decref(spec_extra);
    }
    return pod;
}

static json_t *from_text(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (v == NULL)
        fail_msg("test JSON: %s: %s", jerr.text, text);
    return v;
}

/* The pod's preferred node-affinity terms after the answer's patch (a new
 * reference; asserts the patch applies). */
static json_t *patched(const json_t *pod, const racks_said *s)
{
    return racks_patched(pod, s);
}

static const json_t *preferred(const json_t *pod)
{
    return json_object_get(
        json_object_get(json_object_get(json_object_get(pod, "spec"), "affinity"),
                        "nodeAffinity"),
        PREF);
}

/* Term i is {weight, matchExpressions: [block In [b], rack In [r]]}
 * (block NULL: rack only). */
static void assert_term(const json_t *terms, size_t i, int weight, const char *block,
                        const char *rack)
{
    const json_t *t = json_array_get(terms, i);
    json_t *want = block != NULL
                       ? json_pack("{s:i, s:{s:[{s:s, s:s, s:[s]}, {s:s, s:s, s:[s]}]}}",
                                   "weight", weight, "preference", "matchExpressions", "key",
                                   BLOCK, "operator", "In", "values", block, "key", RACK,
                                   "operator", "In", "values", rack)
                       : json_pack("{s:i, s:{s:[{s:s, s:s, s:[s]}]}}", "weight", weight,
                                   "preference", "matchExpressions", "key", RACK, "operator",
                                   "In", "values", rack);
    if (!json_equal(t, want)) {
        char *got = json_dumps(t, JSON_COMPACT), *exp = json_dumps(want, JSON_COMPACT);
        fail_msg("term %zu:\n  got  %s\n  want %s", i, got ? got : "(none)", exp);
    }
    json_decref(want);
}

static topo_admission_stats stats(fx *f)
{
    topo_admission_stats s;
    topo_admission_get_stats(f->ctx, &s);
    return s;
}

/* A 2-GPU pod without affinity: one preferred term per used rack that
 * fits, tightest first, at most four, weights halving; the empty rack
 * never; block and rack both named (r1 is in both blocks). */
static void test_pack__preferred_no_affinity(void **state)
{
    (void)state;
    fx f;
    open_fx(&f, &(fx_conf){0});
    json_t *pod = gpu_pod("team-a", "2", NULL);
    racks_said s = racks_review(f.ctx, pod, "u1", 0);
    assert_true(json_is_true(json_object_get(s.resp, "allowed")));
    assert_non_null(s.ops);
    /* one operation: the whole affinity added */
    assert_int_equal(json_array_size(s.ops), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(s.ops, 0), "path")),
                        "/spec/affinity");
    json_t *out = patched(pod, &s);
    const json_t *terms = preferred(out);
    assert_int_equal(json_array_size(terms), 4);
    assert_term(terms, 0, 100, "b2", "r1");
    assert_term(terms, 1, 50, "b1", "r1");
    assert_term(terms, 2, 25, "b1", "r3");
    assert_term(terms, 3, 12, "b2", "r2");
    topo_admission_stats st = stats(&f);
    assert_int_equal(st.packed, 1);
    assert_int_equal(st.passed, 1); /* a pass-through pod still, for the admissions count */
    for (size_t i = 0; i < TOPO_ADMISSION_PACK_REASONS; i++)
        assert_int_equal(st.pack_passed[i], 0);
    /* no reservation, nothing cached */
    assert_int_equal(st.reservations, 0);
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);
    close_fx(&f);
}

/* The pod's own affinity stays: its required term, its own preferred term
 * (first), its pod anti-affinity; ours are appended one by one. A pod with
 * only pod anti-affinity gets nodeAffinity added beside it. */
static void test_pack__preferred_keeps_own_affinity(void **state)
{
    (void)state;
    fx f;
    open_fx(&f, &(fx_conf){0});
    json_t *pod = gpu_pod(
        "team-a", "2",
        from_text("{\"affinity\": {\"nodeAffinity\": {"
                  "\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": "
                  "[{\"matchExpressions\": [{\"key\": \"" BLOCK "\", \"operator\": \"In\", "
                  "\"values\": [\"b1\"]}]}]},"
                  "\"" PREF "\": [{\"weight\": 7, \"preference\": {\"matchExpressions\": "
                  "[{\"key\": \"" POOL "\", \"operator\": \"In\", \"values\": [\"a\"]}]}}]},"
                  "\"podAntiAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
                  "[{\"topologyKey\": \"" HOST "\", \"labelSelector\": {\"matchLabels\": "
                  "{\"app\": \"nb\"}}}]}}}"));
    json_t *before = json_deep_copy(json_object_get(pod, "spec"));
    racks_said s = racks_review(f.ctx, pod, "u2", 0);
    assert_non_null(s.ops);
    /* block b1 required: only its used racks, tightest first */
    assert_int_equal(json_array_size(s.ops), 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(s.ops, i), "path")),
            "/spec/affinity/nodeAffinity/" PREF "/-");
    json_t *out = patched(pod, &s);
    const json_t *terms = preferred(out);
    assert_int_equal(json_array_size(terms), 4);
    assert_true(json_equal(json_array_get(terms, 0),
                           json_array_get(preferred(pod), 0))); /* its own, first */
    assert_term(terms, 1, 100, "b1", "r1");
    assert_term(terms, 2, 50, "b1", "r3");
    assert_term(terms, 3, 25, "b1", "r2");
    const json_t *aff = json_object_get(json_object_get(out, "spec"), "affinity");
    const json_t *aff0 = json_object_get(before, "affinity");
    assert_true(json_equal(json_object_get(aff, "podAntiAffinity"),
                           json_object_get(aff0, "podAntiAffinity")));
    assert_true(json_equal(
        json_object_get(json_object_get(aff, "nodeAffinity"),
                        "requiredDuringSchedulingIgnoredDuringExecution"),
        json_object_get(json_object_get(aff0, "nodeAffinity"),
                        "requiredDuringSchedulingIgnoredDuringExecution")));
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);
    json_decref(before);

    /* only pod anti-affinity: nodeAffinity added beside it */
    pod = gpu_pod("team-a", "2",
                  from_text("{\"affinity\": {\"podAntiAffinity\": {}}, \"nodeSelector\": {}}"));
    s = racks_review(f.ctx, pod, "u3", 0);
    assert_int_equal(json_array_size(s.ops), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(s.ops, 0), "path")),
                        "/spec/affinity/nodeAffinity");
    out = patched(pod, &s);
    assert_non_null(json_object_get(json_object_get(json_object_get(out, "spec"), "affinity"),
                                    "podAntiAffinity"));
    assert_int_equal(json_array_size(preferred(out)), 4);
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);
    assert_int_equal(stats(&f).packed, 2);
    close_fx(&f);
}

/* Mode required: the best pick only, as nodeSelector entries from the
 * coarsest level down to the packing level: the whole map added when the
 * pod has none, one escaped "add" per missing key beside its own. */
static void test_pack__required(void **state)
{
    (void)state;
    fx f;
    open_fx(&f, &(fx_conf){.required = 1});
    json_t *pod = gpu_pod("team-a", "2", NULL);
    racks_said s = racks_review(f.ctx, pod, "u1", 0);
    assert_int_equal(json_array_size(s.ops), 1);
    json_t *out = patched(pod, &s);
    assert_string_equal(racks_selector(out, BLOCK), "b2");
    assert_string_equal(racks_selector(out, RACK), "r1");
    assert_null(json_object_get(json_object_get(out, "spec"), "affinity"));
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);

    /* its own nodeSelector (block b1: above the packing level, not a pin) */
    pod = gpu_pod("team-a", "2",
                  from_text("{\"nodeSelector\": {\"" BLOCK "\": \"b1\", \"" POOL "\": \"a\"}}"));
    s = racks_review(f.ctx, pod, "u2", 0);
    assert_int_equal(json_array_size(s.ops), 1);
    const json_t *op = json_array_get(s.ops, 0);
    assert_string_equal(json_string_value(json_object_get(op, "op")), "add");
    assert_string_equal(json_string_value(json_object_get(op, "path")),
                        "/spec/nodeSelector/topology.topo.io~1rack");
    assert_string_equal(json_string_value(json_object_get(op, "value")), "r1");
    out = patched(pod, &s);
    assert_string_equal(racks_selector(out, BLOCK), "b1");
    assert_string_equal(racks_selector(out, POOL), "a");
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);
    assert_int_equal(stats(&f).packed, 2);
    close_fx(&f);
}

/* Each reason a pod requesting a packed resource passes unchanged, counted. */
static void test_pack__pass_reasons(void **state)
{
    (void)state;
    static const struct {
        const char *ns, *gpus, *spec, *meta;
        topo_admission_pack_reason reason;
    } cases[] = {
        {"team-a", "1", "{\"nodeSelector\": {\"" HOST "\": \"h3\"}}", NULL,
         TOPO_ADMISSION_PACK_PINNED},
        {"team-a", "1", "{\"nodeSelector\": {\"" RACK "\": \"r2\"}}", NULL,
         TOPO_ADMISSION_PACK_PINNED},
        {"team-a", "1",
         "{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
         "{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"" POOL "\", \"operator\": "
         "\"Exists\"}]}, {\"matchExpressions\": [{\"key\": \"" RACK "\", \"operator\": \"In\", "
         "\"values\": [\"r3\"]}]}]}}}}",
         NULL, TOPO_ADMISSION_PACK_PINNED},
        {"team-a", "1",
         "{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
         "{\"nodeSelectorTerms\": [{\"matchFields\": [{\"key\": \"metadata.name\", \"operator\": "
         "\"In\", \"values\": [\"h3\"]}]}]}}}}",
         NULL, TOPO_ADMISSION_PACK_PINNED},
        {"team-a", "1", NULL,
         "{\"ownerReferences\": [{\"apiVersion\": \"apps/v1\", \"kind\": \"DaemonSet\", "
         "\"name\": \"dcgm\", \"uid\": \"d1\", \"controller\": true}]}",
         TOPO_ADMISSION_PACK_DAEMONSET},
        {"opted-out", "1", NULL, NULL, TOPO_ADMISSION_PACK_NAMESPACE},
        {"team-a", "1",
         "{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
         "{\"nodeSelectorTerms\": [{\"matchFields\": [{\"key\": \"metadata.uid\", \"operator\": "
         "\"In\", \"values\": [\"x\"]}]}]}}}}",
         NULL, TOPO_ADMISSION_PACK_UNSUPPORTED},
        {"team-a", "1", "{\"tolerations\": [{\"key\": \"a\", \"operator\": \"Sometimes\"}]}", NULL,
         TOPO_ADMISSION_PACK_UNSUPPORTED},
        {"team-a", "1", "{\"affinity\": {\"nodeAffinity\": 5}}", NULL,
         TOPO_ADMISSION_PACK_UNSUPPORTED},
        /* more than one node has: no used rack fits */
        {"team-a", "9", NULL, NULL, TOPO_ADMISSION_PACK_NO_ROOM},
        /* no node it selects is in a used rack (none at all) */
        {"team-a", "1", "{\"nodeSelector\": {\"" POOL "\": \"c\"}}", NULL,
         TOPO_ADMISSION_PACK_NO_ROOM},
    };
    fx f;
    open_fx(&f, &(fx_conf){0});
    uint64_t want[TOPO_ADMISSION_PACK_REASONS] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *pod = gpu_pod(cases[i].ns, cases[i].gpus,
                              cases[i].spec ? from_text(cases[i].spec) : NULL);
        if (cases[i].meta != NULL) {
            json_t *meta = from_text(cases[i].meta);
            assert_int_equal(json_object_update(json_object_get(pod, "metadata"), meta), 0);
            json_decref(meta);
        }
        racks_said s = racks_review(f.ctx, pod, "u", 0);
        if (!json_is_true(json_object_get(s.resp, "allowed")) || s.ops != NULL)
            fail_msg("case %zu: not passed unchanged", i);
        want[cases[i].reason]++;
        topo_admission_stats st = stats(&f);
        for (size_t r = 0; r < TOPO_ADMISSION_PACK_REASONS; r++)
            if (st.pack_passed[r] != want[r])
                fail_msg("case %zu: %s %llu, want %llu", i, topo_admission_pack_reason_names[r],
                         (unsigned long long)st.pack_passed[r], (unsigned long long)want[r]);
        assert_int_equal(st.packed, 0);
        racks_said_free(&s);
        json_decref(pod);
    }
    /* not ready: the cache has not synced */
    f.ready = 0;
    json_t *pod = gpu_pod("team-a", "1", NULL);
    racks_said s = racks_review(f.ctx, pod, "u", 0);
    assert_null(s.ops);
    assert_int_equal(stats(&f).pack_passed[TOPO_ADMISSION_PACK_NOT_READY], 1);
    racks_said_free(&s);
    f.ready = 1;
    s = racks_review(f.ctx, pod, "u", 0); /* and once ready, packed */
    assert_non_null(s.ops);
    assert_int_equal(stats(&f).packed, 1);
    racks_said_free(&s);
    json_decref(pod);
    close_fx(&f);
}

/* Pods that request no packed resource (or "0" of it), Kueue's pods and
 * topology pods are not packing's: no patch, not counted; a topology
 * pod needs the placer, a packed one does not. */
static void test_pack__not_candidates(void **state)
{
    (void)state;
    fx f;
    open_fx(&f, &(fx_conf){0});
    json_t *pods[3];
    pods[0] = gpu_pod("team-a", "0", NULL);
    pods[1] = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s, s:{s:{s:s}}}]}}", "metadata", "name",
                        "cpu-0", "namespace", "team-a", "spec", "containers", "name", "main",
                        "image", "x", "resources", "requests", "cpu", "4");
    pods[2] = gpu_pod("team-a", "2", NULL);
    json_object_set_new(json_object_get(pods[2], "metadata"), "labels",
                        json_pack("{s:s}", "kueue.x-k8s.io/queue-name", "q"));
    for (size_t i = 0; i < 3; i++) {
        racks_said s = racks_review(f.ctx, pods[i], "u", 0);
        if (s.ops != NULL)
            fail_msg("pod %zu patched", i);
        racks_said_free(&s);
        json_decref(pods[i]);
    }
    topo_admission_stats st = stats(&f);
    assert_int_equal(st.packed, 0);
    for (size_t r = 0; r < TOPO_ADMISSION_PACK_REASONS; r++)
        assert_int_equal(st.pack_passed[r], 0);

    /* needs_placer: false for a GPU pod (any replica packs), true for a
     * topology pod */
    json_t *pod = gpu_pod("team-a", "2", NULL);
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:s, s:O}}", "apiVersion",
                            "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid",
                            "u", "kind", "group", "", "version", "v1", "kind", "Pod",
                            "operation", "CREATE", "object", pod);
    char *body = json_dumps(doc, JSON_COMPACT);
    assert_int_equal(topo_admission_needs_placer(body, strlen(body)), 0);
    free(body);
    json_object_set_new(json_object_get(json_object_get(json_object_get(doc, "request"),
                                                        "object"),
                                        "metadata"),
                        "annotations",
                        json_pack("{s:s}", "kueue.x-k8s.io/podset-required-topology", RACK));
    body = json_dumps(doc, JSON_COMPACT);
    assert_int_equal(topo_admission_needs_placer(body, strlen(body)), 1);
    free(body);
    json_decref(doc);
    json_decref(pod);
    close_fx(&f);
}

/* Two topologies taking part: their picks ranked together by the one
 * rule (pool b's rack, 2 free, is the tightest), each term over its own
 * topology's levels. */
static void test_pack__two_topologies(void **state)
{
    (void)state;
    fx f;
    open_fx(&f, &(fx_conf){.two = 1});
    json_t *pod = gpu_pod("team-a", "2", NULL);
    racks_said s = racks_review(f.ctx, pod, "u1", 0);
    json_t *out = patched(pod, &s);
    const json_t *terms = preferred(out);
    assert_int_equal(json_array_size(terms), 4);
    assert_term(terms, 0, 100, NULL, "rb1");
    assert_term(terms, 1, 50, "b2", "r1");
    assert_term(terms, 2, 25, "b1", "r1");
    assert_term(terms, 3, 12, "b1", "r3");
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);
    close_fx(&f);
}

/* What looks like a pin and is not: NotIn and Exists on the hostname or the
 * packing level only rule nodes out (the pod is packed within what they
 * leave); a DaemonSet owner outside the apps group is anyone's CRD, not a
 * DaemonSet. Each is packed. matchFields other than In on metadata.name
 * cannot be honoured: unsupported. */
static void test_pack__not_pinned(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *meta;
    } packed[] = {
        {"{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
         "{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"" HOST "\", \"operator\": "
         "\"NotIn\", \"values\": [\"h7\"]}]}]}}}}",
         NULL},
        {"{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
         "{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"" RACK "\", \"operator\": "
         "\"Exists\"}]}]}}}}",
         NULL},
        {NULL, "{\"ownerReferences\": [{\"apiVersion\": \"evil.example.com/v1\", \"kind\": "
               "\"DaemonSet\", \"name\": \"x\", \"uid\": \"x1\", \"controller\": true}]}"},
    };
    fx f;
    open_fx(&f, &(fx_conf){0});
    for (size_t i = 0; i < sizeof packed / sizeof packed[0]; i++) {
        json_t *pod = gpu_pod("team-a", "2", packed[i].spec ? from_text(packed[i].spec) : NULL);
        if (packed[i].meta != NULL) {
            json_t *meta = from_text(packed[i].meta);
            assert_int_equal(json_object_update(json_object_get(pod, "metadata"), meta), 0);
            json_decref(meta);
        }
        racks_said s = racks_review(f.ctx, pod, "u", 0);
        if (s.ops == NULL)
            fail_msg("case %zu: not packed", i);
        json_t *out = patched(pod, &s);
        /* NotIn [h7] leaves b2/r1's other node: still the tightest */
        assert_term(preferred(out), 0, 100, "b2", "r1");
        json_decref(out);
        racks_said_free(&s);
        json_decref(pod);
        assert_int_equal(stats(&f).packed, i + 1);
    }
    json_t *pod = gpu_pod("team-a", "2",
                          from_text("{\"affinity\": {\"nodeAffinity\": {\"requiredDuringScheduling"
                                    "IgnoredDuringExecution\": {\"nodeSelectorTerms\": "
                                    "[{\"matchFields\": [{\"key\": \"metadata.name\", \"operator\": "
                                    "\"NotIn\", \"values\": [\"h7\"]}]}]}}}}"));
    racks_said s = racks_review(f.ctx, pod, "u", 0);
    assert_null(s.ops);
    assert_int_equal(stats(&f).pack_passed[TOPO_ADMISSION_PACK_UNSUPPORTED], 1);
    assert_int_equal(stats(&f).pack_passed[TOPO_ADMISSION_PACK_PINNED], 0);
    racks_said_free(&s);
    json_decref(pod);
    close_fx(&f);
}

/* Requests the webhook cannot read (a quantity out of range, a negative
 * one beside the GPUs): the pod passes unchanged and, as it names a packed
 * resource, is counted (unsupported), not lost from the metrics. */
static void test_pack__unreadable_requests_counted(void **state)
{
    (void)state;
    static const char *const gpus[] = {"9999999999999999999", "-1"};
    fx f;
    open_fx(&f, &(fx_conf){0});
    for (size_t i = 0; i < 2; i++) {
        json_t *pod = gpu_pod("team-a", gpus[i], NULL);
        racks_said s = racks_review(f.ctx, pod, "u", 0);
        assert_true(json_is_true(json_object_get(s.resp, "allowed")));
        assert_null(s.ops);
        assert_int_equal(stats(&f).pack_passed[TOPO_ADMISSION_PACK_UNSUPPORTED], i + 1);
        racks_said_free(&s);
        json_decref(pod);
    }
    /* a cpu quantity out of range beside 2 GPUs */
    json_t *pod = gpu_pod("team-a", "2", NULL);
    json_t *req = json_object_get(json_object_get(json_array_get(json_object_get(
                                      json_object_get(pod, "spec"), "containers"), 0),
                                                  "resources"),
                                  "requests");
    json_object_set_new(req, "cpu", json_string("9999999999999999999999"));
    racks_said s = racks_review(f.ctx, pod, "u", 0);
    assert_null(s.ops);
    assert_int_equal(stats(&f).pack_passed[TOPO_ADMISSION_PACK_UNSUPPORTED], 3);
    assert_int_equal(stats(&f).packed, 0);
    racks_said_free(&s);
    json_decref(pod);
    close_fx(&f);
}

/* A handler over two topologies of their own lives (packing on,
 * preferred), for the tests that build their clusters by hand; freed by
 * close_two. */
typedef struct two {
    topo_live *lives[2];
    topo_cache *cache;
    topo_admission_ctx *ctx;
} two;

static void open_two(two *w, const topo_admission_topology *t)
{
    static const topo_admission_packing pk = {gpu, 1, TOPO_ADMISSION_PACKING_PREFERRED};
    topo_err err = TOPO_ERR_INIT;
    topo_admission_opts ao = {0};
    assert_int_equal(topo_cache_open(&w->cache, ":memory:", NULL, &err), 0);
    ao.topologies = t;
    ao.ntopologies = 2;
    ao.cache = w->cache;
    ao.packing = &pk;
    if (topo_admission_ctx_create(&w->ctx, &ao, &err) < 0)
        fail_msg("ctx: %s", err.text);
}

static void close_two(two *w)
{
    topo_admission_ctx_free(w->ctx);
    topo_cache_close(w->cache);
    topo_live_free(w->lives[0]);
    topo_live_free(w->lives[1]);
}

/* Two topologies over the same nodes. With the same levels, both propose
 * the same terms, and a term is written once: four racks, not two twice.
 * With racks alone in the second, its terms are not the first's (rack ra
 * of any block, which may be other nodes): both are kept, the tie between
 * the two ra to "blocks" by name. */
static void test_pack__overlapping_topologies(void **state)
{
    (void)state;
    static const char *const rk[] = {"ra", "rb", "rc", "rd", "re"};
    static const int64_t used[] = {6, 5, 4, 3, 0};
    for (int same = 1; same >= 0; same--) {
        topo_err err = TOPO_ERR_INIT;
        two w;
        topo_live **lives = w.lives;
        topo_snapshot_opts so[2] = {{"blocks", levels, 3, NULL, 0},
                                    same ? (topo_snapshot_opts){"racks", levels, 3, NULL, 0}
                                         : (topo_snapshot_opts){"racks", rack_levels, 2, NULL, 0}};
        for (size_t t = 0; t < 2; t++) {
            assert_int_equal(topo_live_create(&lives[t], &so[t], &err), 0);
            for (size_t r = 0; r < 5; r++) {
                char host[8], uid[8];
                snprintf(host, sizeof host, "n%zu", r);
                snprintf(uid, sizeof uid, "p%zu", r);
                node(lives[t], host, "b1", rk[r], "a");
                if (used[r] > 0)
                    running(lives[t], uid, host, used[r]);
            }
            assert_int_equal(topo_live_commit(lives[t], &err), 0);
        }
        topo_admission_topology t[2] = {
            {"blocks", levels, 3, NULL, 0, TOPO_ADMISSION_POLICY_GATE, lives[0], 2},
            {"racks", so[1].levels, so[1].nlevels, NULL, 0, TOPO_ADMISSION_POLICY_GATE, lives[1],
             so[1].nlevels - 1}};
        open_two(&w, t);
        json_t *pod = gpu_pod("team-a", "2", NULL);
        racks_said s = racks_review(w.ctx, pod, "u", 0);
        json_t *out = patched(pod, &s);
        const json_t *terms = preferred(out);
        assert_int_equal(json_array_size(terms), 4);
        assert_term(terms, 0, 100, "b1", "ra");
        if (same) {
            assert_term(terms, 1, 50, "b1", "rb");
            assert_term(terms, 2, 25, "b1", "rc");
            assert_term(terms, 3, 12, "b1", "rd");
        } else {
            assert_term(terms, 1, 50, NULL, "ra");
            assert_term(terms, 2, 25, "b1", "rb");
            assert_term(terms, 3, 12, NULL, "rb");
        }
        json_decref(out);
        racks_said_free(&s);
        json_decref(pod);
        close_two(&w);
    }
}

/* Two pools (topologies told apart by nodeLabels) over the same levels,
 * their racks named alike (r1 in every site): the same rack name under
 * another block is another domain, each proposed, tightest first. */
static void test_pack__same_names_two_pools(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    two w;
    topo_live **lives = w.lives;
    const topo_kv *pools[2] = {pool_a, pool_b};
    static const char *const blocks[2] = {"ab1", "bb1"};
    static const char *const hosts[2][2] = {{"a1", "a2"}, {"b1", "b2"}};
    static const int64_t used[2] = {4, 2};
    topo_snapshot_opts so[2] = {{"h100", levels, 3, pool_a, 1}, {"a100", levels, 3, pool_b, 1}};
    for (size_t t = 0; t < 2; t++) {
        assert_int_equal(topo_live_create(&lives[t], &so[t], &err), 0);
        for (size_t h = 0; h < 2; h++)
            node(lives[t], hosts[t][h], blocks[t], "r1", pools[t][0].value);
        running(lives[t], t ? "pb" : "pa", hosts[t][0], used[t]);
        assert_int_equal(topo_live_commit(lives[t], &err), 0);
    }
    topo_admission_topology t[2] = {
        {"h100", levels, 3, pool_a, 1, TOPO_ADMISSION_POLICY_GATE, lives[0], 2},
        {"a100", levels, 3, pool_b, 1, TOPO_ADMISSION_POLICY_GATE, lives[1], 2}};
    open_two(&w, t);
    json_t *pod = gpu_pod("team-a", "1", NULL);
    racks_said s = racks_review(w.ctx, pod, "u", 0);
    json_t *out = patched(pod, &s);
    const json_t *terms = preferred(out);
    assert_int_equal(json_array_size(terms), 2);
    assert_term(terms, 0, 100, "ab1", "r1"); /* 12 free */
    assert_term(terms, 1, 50, "bb1", "r1");  /* 14 free */
    json_decref(out);
    racks_said_free(&s);
    json_decref(pod);

    /* Requests it cannot read, the packed resource named in its overhead
     * alone: counted (unsupported), passed unchanged. */
    pod = gpu_pod("team-a", "1", from_text("{\"overhead\": {\"nvidia.com/gpu\": \"1\"}}"));
    json_t *c0 = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_object_del(json_object_get(json_object_get(c0, "resources"), "requests"),
                    "nvidia.com/gpu");
    json_object_set_new(json_object_get(json_object_get(c0, "resources"), "requests"), "memory",
                        json_string("9999999999999999999999"));
    s = racks_review(w.ctx, pod, "u", 0);
    assert_null(s.ops);
    topo_admission_stats st;
    topo_admission_get_stats(w.ctx, &st);
    assert_int_equal(st.pack_passed[TOPO_ADMISSION_PACK_UNSUPPORTED], 1);
    racks_said_free(&s);
    json_decref(pod);
    close_two(&w);
}

/* Packing off (the default): a GPU pod is answered exactly as before,
 * byte for byte, even one whose affinity packing could not read. */
static void test_pack__off_unchanged(void **state)
{
    (void)state;
    fx f;
    open_fx(&f, &(fx_conf){.off = 1});
    static const char want[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                               "\"AdmissionReview\",\"response\":{\"uid\":\"u1\",\"allowed\":"
                               "true}}";
    json_t *pods[2] = {gpu_pod("team-a", "2", NULL),
                       gpu_pod("team-a", "2", from_text("{\"affinity\": {\"nodeAffinity\": 5}}"))};
    for (size_t i = 0; i < 2; i++) {
        json_t *doc = json_pack(
            "{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:O}}",
            "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid",
            "u1", "kind", "group", "", "version", "v1", "kind", "Pod", "resource", "group", "",
            "version", "v1", "resource", "pods", "namespace", "team-a", "operation", "CREATE",
            "object", pods[i]);
        char *body = json_dumps(doc, JSON_COMPACT), *out = NULL;
        size_t len = 0;
        int status = 0;
        assert_int_equal(topo_admission_handle(f.ctx, body, strlen(body), &out, &len, &status),
                         0);
        assert_int_equal(status, 200);
        assert_string_equal(out, want);
        free(out);
        free(body);
        json_decref(doc);
        json_decref(pods[i]);
    }
    topo_admission_stats st = stats(&f);
    assert_int_equal(st.packed, 0);
    assert_int_equal(st.passed, 2);
    close_fx(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack__preferred_no_affinity),
        cmocka_unit_test(test_pack__preferred_keeps_own_affinity),
        cmocka_unit_test(test_pack__required),
        cmocka_unit_test(test_pack__pass_reasons),
        cmocka_unit_test(test_pack__not_candidates),
        cmocka_unit_test(test_pack__two_topologies),
        cmocka_unit_test(test_pack__not_pinned),
        cmocka_unit_test(test_pack__unreadable_requests_counted),
        cmocka_unit_test(test_pack__overlapping_topologies),
        cmocka_unit_test(test_pack__same_names_two_pools),
        cmocka_unit_test(test_pack__off_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
