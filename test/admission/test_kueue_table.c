#define _POSIX_C_SOURCE 200809L
/* The Kueue annotation table (fixtures/kueue/annotations/<case>.json) through
 * both paths that read a pod's Kueue annotations:
 *   A. topoassign's: the pod as a manifest (topo_podset_load_text), then the
 *      engine on the topology's snapshot;
 *   B. topo-webhook's: the same pod as an AdmissionReview through
 *      topo_admission_handle over the same live snapshot.
 * Each case's answer is either the request Kueue builds (checked field by
 * field on path A) or Kueue's message (path A: the manifest error; path B:
 * a 400 with exactly that message). For a valid request both paths must
 * place the pod alike: the same TopologyAssignment, or, when it does not
 * fit, the same reason (B gates the pod with it). */
#include <dirent.h>
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

#include "topo/codec.h"
#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/inventory.h"
#include "topo/kueue.h"
#include "topo/live.h"

static const char *const levels[] = {"topology.topo.io/datacenter", "topology.topo.io/spine",
                                     "topology.topo.io/leaf", "topology.topo.io/rack",
                                     "kubernetes.io/hostname"};

typedef struct table {
    topo_inventory *inv;
    topo_live *live;
    char dir[4096];
} table;

static int setup(void **state)
{
    table *t = calloc(1, sizeof(*t));
    topo_err err = TOPO_ERR_INIT;
    const char *src = getenv("TOPO_SOURCE_DIR");
    char path[4200];
    assert_non_null(t);
    snprintf(t->dir, sizeof t->dir, "%s/fixtures/kueue/annotations", src ? src : ".");
    snprintf(path, sizeof path, "%s/fixtures/clusters/hgx-h100.yaml", src ? src : ".");
    topo_snapshot_opts so = {"default", levels, 5, NULL, 0};
    if (topo_inventory_create(&t->inv, &err) < 0 ||
        topo_inventory_load_nodes_file(t->inv, path, &err) < 0 ||
        topo_live_create(&t->live, &so, &err) < 0)
        fail_msg("setup: %s", err.text);
    for (size_t i = 0; i < topo_inventory_node_count(t->inv); i++)
        if (topo_live_upsert_node(t->live, topo_inventory_node(t->inv, i), &err) < 0)
            fail_msg("setup: %s", err.text);
    if (topo_live_commit(t->live, &err) < 0)
        fail_msg("setup: %s", err.text);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    table *t = *state;
    topo_live_free(t->live);
    topo_inventory_free(t->inv);
    free(t);
    return 0;
}

/* The case's pod: its annotations, podset-size when count > 1, cpu 1. */
static json_t *case_pod(const json_t *c, const char *name)
{
    json_t *ann = json_deep_copy(json_object_get(c, "annotations"));
    json_int_t count = json_integer_value(json_object_get(c, "count"));
    char n[32];
    assert_non_null(ann);
    if (count > 1) {
        snprintf(n, sizeof n, "%lld", (long long)count);
        json_object_set_new(ann, TOPO_PODSET_SIZE_ANNOTATION, json_string(n));
    }
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:[{s:s, s:s, s:{s:{s:s}}}]}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
                            "namespace", "table", "annotations", ann, "spec", "containers",
                            "name", "main", "image", "x", "resources", "requests", "cpu", "1");
    assert_non_null(pod);
    return pod;
}

/* Path A's answer for a valid request: the assignment as compact JSON, or
 * "failure: <reason>". */
static char *engine_answer(table *t, const topo_podset_spec *ps, topo_pool *pool)
{
    topo_podset_result res;
    topo_err err = TOPO_ERR_INIT;
    const topo_snapshot *snap = topo_live_acquire(t->live);
    int rc = topo_engine_find(&res, snap, ps, 1, NULL, NULL, pool, &err);
    char *out = NULL;
    if (rc < 0)
        fail_msg("engine: %s", err.text);
    if (res.assignment != NULL) {
        json_t *doc = topo_codec_assignment_json(res.assignment);
        out = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
    } else {
        size_t n = strlen(res.failure) + 16;
        out = malloc(n);
        snprintf(out, n, "failure: %s", res.failure);
    }
    topo_live_release(t->live, snap);
    return out;
}

/* Path B: the pod as a Pod CREATE review, on a fresh cache (so cases do not
 * share reservations). Returns the response; *patch its decoded patch. */
static json_t *webhook_answer(table *t, json_t *pod, json_t **root, json_t **patch)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *cache = NULL;
    topo_admission_ctx *ctx = NULL;
    topo_admission_topology topo = {"default", levels, 5, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                    t->live, 0};
    topo_admission_opts ao = {0};
    ao.topologies = &topo;
    ao.ntopologies = 1;
    if (topo_cache_open(&cache, ":memory:", NULL, &err) < 0)
        fail_msg("cache: %s", err.text);
    ao.cache = cache;
    if (topo_admission_ctx_create(&ctx, &ao, &err) < 0)
        fail_msg("admission: %s", err.text);
    json_t *review = json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:O}}", "apiVersion",
        "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", "u-1", "kind",
        "group", "", "version", "v1", "kind", "Pod", "resource", "group", "", "version", "v1",
        "resource", "pods", "namespace", "table", "operation", "CREATE", "object", pod);
    char *body = json_dumps(review, JSON_COMPACT), *out = NULL;
    size_t len = 0;
    int status = 0;
    json_decref(review);
    assert_int_equal(topo_admission_handle(ctx, body, strlen(body), &out, &len, &status), 0);
    assert_int_equal(status, 200);
    free(body);
    topo_admission_ctx_free(ctx);
    topo_cache_close(cache);
    json_error_t jerr;
    *root = json_loadb(out, len, 0, &jerr);
    free(out);
    assert_non_null(*root);
    json_t *resp = json_object_get(*root, "response");
    *patch = NULL;
    const char *b64 = json_string_value(json_object_get(resp, "patch"));
    if (b64 != NULL) {
        unsigned char *buf = malloc(strlen(b64) + 1);
        int m = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)strlen(b64));
        while (m > 0 && buf[m - 1] == '\0')
            m--;
        *patch = json_loadb((const char *)buf, (size_t)(m > 0 ? m : 0), 0, &jerr);
        free(buf);
        assert_non_null(*patch);
    }
    return resp;
}

/* The value the patch gives the pod's annotation key, or NULL. */
static const char *patched_annotation(const json_t *ops, const char *key)
{
    size_t i;
    json_t *op;
    json_array_foreach(ops, i, op) {
        const char *path = json_string_value(json_object_get(op, "path"));
        json_t *v = json_object_get(op, "value");
        if (path != NULL && strcmp(path, "/metadata/annotations") == 0)
            return json_string_value(json_object_get(v, key));
        /* "/metadata/annotations/<key with / as ~1>" */
        if (path != NULL && strncmp(path, "/metadata/annotations/", 22) == 0) {
            const char *p = path + 22, *k = key;
            while (*p != '\0' && *k != '\0') {
                if (*k == '/' && strncmp(p, "~1", 2) == 0)
                    p += 2;
                else if (*k == *p)
                    p++;
                else
                    break;
                k++;
            }
            if (*p == '\0' && *k == '\0')
                return json_string_value(v);
        }
    }
    return NULL;
}

static const char *str_or_null(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void check_string(const char *file, const char *what, const char *got, const json_t *want)
{
    const char *w = str_or_null(want);
    if ((got == NULL) != (w == NULL) || (got != NULL && strcmp(got, w) != 0))
        fail_msg("%s: %s: got %s, want %s", file, what, got ? got : "null", w ? w : "null");
}

/* Path A's request against the case's expect.request. */
static void check_request(const char *file, const topo_podset_spec *ps, const json_t *want)
{
    check_string(file, "required", ps->required, json_object_get(want, "required"));
    check_string(file, "preferred", ps->preferred, json_object_get(want, "preferred"));
    check_string(file, "slice_topology", ps->slice_required,
                  json_object_get(want, "slice_topology"));
    check_string(file, "group", ps->group, json_object_get(want, "group"));
    if (ps->unconstrained != json_is_true(json_object_get(want, "unconstrained")))
        fail_msg("%s: unconstrained: got %d", file, ps->unconstrained);
    if (ps->slice_size != json_integer_value(json_object_get(want, "slice_size")))
        fail_msg("%s: slice_size: got %d", file, (int)ps->slice_size);
    const json_t *layers = json_object_get(want, "layers");
    if (ps->nlayers != json_array_size(layers))
        fail_msg("%s: layers: got %zu", file, ps->nlayers);
    for (size_t i = 0; i < ps->nlayers; i++) {
        const json_t *l = json_array_get(layers, i);
        check_string(file, "layers[].topology", ps->layers[i].level,
                      json_object_get(l, "topology"));
        if (ps->layers[i].size != json_integer_value(json_object_get(l, "size")))
            fail_msg("%s: layers[%zu].size: got %d", file, i, (int)ps->layers[i].size);
    }
}

static void run_case(table *t, const char *file, const json_t *c, size_t *nvalid)
{
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    topo_podset_spec ps;
    const json_t *expect = json_object_get(c, "expect");
    const json_t *want_req = json_object_get(expect, "request");
    const char *want_err = str_or_null(json_object_get(expect, "error"));
    json_t *pod = case_pod(c, "table-pod");
    char *text = json_dumps(pod, JSON_COMPACT);
    char prefix[64];
    assert_non_null(pool);
    if ((want_req == NULL) == (want_err == NULL))
        fail_msg("%s: expect needs exactly one of request and error", file);

    /* A: the manifest, as topoassign --podset reads it. */
    int rc = topo_podset_load_text(&ps, text, strlen(text), "pod.json", pool, &err);
    snprintf(prefix, sizeof prefix, "pod.json: ");
    if (want_err != NULL) {
        if (rc != TOPO_EINVALID || strncmp(err.text, prefix, strlen(prefix)) != 0 ||
            strcmp(err.text + strlen(prefix), want_err) != 0)
            fail_msg("%s: topoassign path:\n  got  %d \"%s\"\n  want \"%s%s\"", file, rc,
                     err.text, prefix, want_err);
    } else if (rc != 0) {
        fail_msg("%s: topoassign path refused a valid request: %s", file, err.text);
    } else {
        check_request(file, &ps, want_req);
    }
    char *engine = want_req != NULL ? engine_answer(t, &ps, pool) : NULL;

    /* B: the same pod through the webhook. */
    json_t *root = NULL, *patch = NULL;
    json_t *resp = webhook_answer(t, pod, &root, &patch);
    int allowed = json_is_true(json_object_get(resp, "allowed"));
    const json_t *status = json_object_get(resp, "status");
    if (want_err != NULL) {
        const char *msg = json_string_value(json_object_get(status, "message"));
        if (allowed || json_integer_value(json_object_get(status, "code")) != 400 ||
            msg == NULL || strcmp(msg, want_err) != 0)
            fail_msg("%s: webhook path:\n  got  allowed=%d \"%s\"\n  want 400 \"%s\"", file,
                     allowed, msg ? msg : "", want_err);
    } else {
        const char *as = patched_annotation(patch, TOPO_ADMISSION_ASSIGNMENT_ANNOTATION);
        const char *wait = patched_annotation(patch, TOPO_ADMISSION_WAIT_REASON_ANNOTATION);
        if (!allowed)
            fail_msg("%s: webhook refused a valid request: %s", file,
                     json_string_value(json_object_get(status, "message")));
        if (strncmp(engine, "failure: ", 9) == 0) {
            /* Gated with the engine's reason (cut like the annotation is). */
            size_t n = strlen(engine + 9);
            if (wait == NULL ||
                strncmp(wait, engine + 9, n < TOPO_ADMISSION_WAIT_REASON_MAX - 3
                                              ? n
                                              : TOPO_ADMISSION_WAIT_REASON_MAX - 3) != 0)
                fail_msg("%s: the paths disagree:\n  topoassign: %s\n  webhook gate: %s", file,
                         engine, wait ? wait : "(not gated)");
        } else if (as == NULL || strcmp(as, engine) != 0) {
            fail_msg("%s: the paths disagree:\n  topoassign: %s\n  webhook:    %s", file, engine,
                     as ? as : "(no assignment)");
        }
        (*nvalid)++;
    }
    json_decref(patch);
    json_decref(root);
    json_decref(pod);
    free(text);
    free(engine);
    topo_pool_free(pool);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_case(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

static void test_kueue_table__both_paths(void **state)
{
    table *t = *state;
    struct dirent **names = NULL;
    int n = scandir(t->dir, &names, is_case, by_name);
    size_t nvalid = 0;
    if (n < 0)
        fail_msg("%s: cannot list", t->dir);
    for (int i = 0; i < n; i++) {
        char path[8192];
        json_error_t jerr;
        snprintf(path, sizeof path, "%s/%s", t->dir, names[i]->d_name);
        json_t *c = json_load_file(path, 0, &jerr);
        if (c == NULL)
            fail_msg("%s:%d: %s", names[i]->d_name, jerr.line, jerr.text);
        run_case(t, names[i]->d_name, c, &nvalid);
        json_decref(c);
        free(names[i]);
    }
    free(names);
    /* The issue asks for at least 40 cases; a table that shrank is a bug. */
    assert_true(n >= 40);
    assert_true(nvalid >= 10);
    print_message("%d cases, %zu valid, through both paths\n", n, nvalid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kueue_table__both_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
