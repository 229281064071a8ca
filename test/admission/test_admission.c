/* Tests for lib/admission: every fixtures/admission/<case>/ directory is one
 * table row (request.json in; case.json says what to expect; the response and
 * patch are compared with expected-response.json / expected-patch.json after
 * canonical dumping), plus tables for pointers, warnings, gates and limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>

#include <cmocka.h>

#include "topo/codec.h"
#include "topo/admission.h"
#include "topo/admission_patch.h"
#include "topo/admission_review.h"
#include "topo/jsonpatch.h"
#include "topo/kueue.h"
#include "topo/limits.h"

static topo_pool *pool;

static int setup(void **state)
{
    (void)state;
    pool = topo_pool_create();
    return pool == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    topo_pool_free(pool);
    return 0;
}

static char *canon(const char *text, size_t len, const char *what)
{
    json_error_t jerr;
    json_t *v = json_loadb(text, len, 0, &jerr);
    char *s;
    if (v == NULL)
        fail_msg("%s: not JSON: %s", what, jerr.text);
    s = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    return s;
}

static char *canon_file(const char *path)
{
    char *text = NULL, *s;
    size_t len = 0;
    topo_err err = TOPO_ERR_INIT;
    if (topo_codec_read_file(&text, &len, path, TOPO_MAX_MANIFEST_FILE, &err) != 0)
        return NULL;
    s = canon(text, len, path);
    free(text);
    return s;
}

static int code_of(const char *name)
{
    static const struct {
        const char *name;
        int code;
    } codes[] = {{"OK", 0},
                 {"EINVALID", TOPO_EINVALID},
                 {"EUNSUPPORTED", TOPO_EUNSUPPORTED},
                 {"ELIMIT", TOPO_ELIMIT},
                 {"ECONFLICT", TOPO_ECONFLICT}};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(codes[i].name, name) == 0)
            return codes[i].code;
    fail_msg("unknown code %s", name);
    return 1;
}

static topo_kv *kv_of(const json_t *obj, size_t *n)
{
    topo_kv *kv = topo_pool_calloc(pool, json_object_size(obj) + 1, sizeof(*kv));
    const char *k;
    json_t *v;
    *n = 0;
    json_object_foreach((json_t *)obj, k, v) {
        kv[*n].key = k;
        kv[*n].value = json_string_value(v);
        (*n)++;
    }
    return kv;
}

static void check_case(const char *dir, const char *name)
{
    char path[1024];
    char *body = NULL, *out = NULL, *got, *want;
    size_t len = 0, outlen = 0, nsel = 0, nann = 0;
    json_t *c;
    json_error_t jerr;
    topo_err err = TOPO_ERR_INIT, perr = TOPO_ERR_INIT;
    topo_admission_request req;
    topo_admission_response resp = TOPO_ADMISSION_RESPONSE_INIT;
    topo_jsonpatch *patch = NULL;
    const json_t *juid;
    int rc, prc = 0;

    snprintf(path, sizeof(path), "%s/%s/case.json", dir, name);
    c = json_load_file(path, 0, &jerr);
    if (c == NULL)
        fail_msg("%s: %s", path, jerr.text);
    snprintf(path, sizeof(path), "%s/%s/request.json", dir, name);
    if (topo_codec_read_file(&body, &len, path, TOPO_MAX_ADMISSION_BODY, &err) != 0)
        fail_msg("%s: %s", path, err.text);

    rc = topo_admission_decode(&req, body, len, pool, &err);
    if (rc != code_of(json_string_value(json_object_get(c, "code"))))
        fail_msg("%s: decode rc %d (%s)", name, rc, err.text);
    juid = json_object_get(c, "uid");
    if (json_is_string(juid)) {
        if (req.uid == NULL || strcmp(req.uid, json_string_value(juid)) != 0)
            fail_msg("%s: uid %s", name, req.uid ? req.uid : "(null)");
    } else if (req.uid != NULL) {
        fail_msg("%s: uid %s, want none", name, req.uid);
    }
    assert_int_equal(topo_jsonpatch_new(&patch), 0);
    resp.uid = req.uid;
    if (rc != 0) {
        const char *e = json_string_value(json_object_get(c, "error"));
        if (strncmp(err.text, e, strlen(e)) != 0)
            fail_msg("%s: error \"%s\", want \"%s...\"", name, err.text, e);
        resp.allowed = 0;
        resp.status_code = 400;
        resp.status_message = err.text;
    } else {
        topo_admission_class cls = topo_admission_classify(&req);
        const char *want_cls = json_string_value(json_object_get(c, "class"));
        if (strcmp(topo_admission_class_name(cls), want_cls) != 0)
            fail_msg("%s: class %s, want %s", name, topo_admission_class_name(cls), want_cls);
        if (cls == TOPO_ADMISSION_TOPOLOGY_POD) {
            topo_kv *sel = kv_of(json_object_get(c, "nodeSelector"), &nsel);
            topo_kv *ann = kv_of(json_object_get(c, "annotations"), &nann);
            const char *gate = json_string_value(json_object_get(c, "gate"));
            prc = topo_admission_patch_pod(patch, &req.pod, sel, nsel, ann, nann, &perr);
            if (prc == 0 && gate != NULL)
                prc = topo_admission_patch_gate(patch, &req.pod, gate, &perr);
            const json_t *pc = json_object_get(c, "patchCode");
            if (prc != (pc ? code_of(json_string_value(pc)) : 0))
                fail_msg("%s: patch rc %d (%s)", name, prc, perr.text);
            if (prc != 0) {
                assert_string_equal(perr.text,
                                    json_string_value(json_object_get(c, "patchError")));
                assert_int_equal(topo_jsonpatch_count(patch), 0);
                resp.allowed = 0;
                resp.status_code = 409;
                resp.status_message = perr.text;
            } else {
                char *ptext = NULL;
                assert_int_equal(topo_jsonpatch_dump(&ptext, patch), 0);
                snprintf(path, sizeof(path), "%s/%s/expected-patch.json", dir, name);
                want = canon_file(path);
                got = canon(ptext, strlen(ptext), "patch");
                if (want == NULL || strcmp(got, want) != 0)
                    fail_msg("%s: patch\n got %s\nwant %s", name, got, want ? want : "(no file)");
                free(got);
                free(want);
                free(ptext);
                resp.patch = patch;
            }
        }
    }
    snprintf(path, sizeof(path), "%s/%s/expected-response.json", dir, name);
    want = canon_file(path);
    if (req.uid != NULL) {
        if (topo_admission_encode(&out, &outlen, &resp, &err) != 0)
            fail_msg("%s: encode: %s", name, err.text);
        got = canon(out, outlen, "response");
        if (want == NULL || strcmp(got, want) != 0)
            fail_msg("%s: response\n got %s\nwant %s", name, got, want ? want : "(no file)");
        free(got);
        free(out);
    } else if (want != NULL) {
        fail_msg("%s: expected-response.json but no uid", name);
    }
    free(want);
    topo_jsonpatch_free(patch);
    free(body);
    json_decref(c);
    topo_pool_clear(pool);
}

static void test_admission__fixtures(void **state)
{
    char dir[1024];
    const char *root = getenv("TOPO_SOURCE_DIR");
    DIR *d;
    struct dirent *e;
    int n = 0;
    (void)state;
    snprintf(dir, sizeof(dir), "%s/fixtures/admission", root ? root : ".");
    d = opendir(dir);
    if (d == NULL)
        fail_msg("cannot open %s (set TOPO_SOURCE_DIR)", dir);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        check_case(dir, e->d_name);
        n++;
    }
    closedir(d);
    assert_true(n >= 15);
}

/* A job pod's decoded fields, beyond what the response shows. */
static void test_admission__job_pod_fields(void **state)
{
    char path[1024], *body = NULL;
    size_t len;
    topo_err err = TOPO_ERR_INIT;
    topo_admission_request req;
    const char *root = getenv("TOPO_SOURCE_DIR");
    (void)state;
    snprintf(path, sizeof(path), "%s/fixtures/admission/job-pod/request.json", root ? root : ".");
    assert_int_equal(topo_codec_read_file(&body, &len, path, TOPO_MAX_ADMISSION_BODY, &err), 0);
    assert_int_equal(topo_admission_decode(&req, body, len, pool, &err), 0);
    assert_string_equal(req.operation, "CREATE");
    assert_string_equal(req.name, "");
    assert_string_equal(req.namespace_, "team-a");
    assert_string_equal(req.kind.kind, "Pod");
    assert_string_equal(req.resource.kind, "pods");
    assert_int_equal(req.dry_run, 0);
    assert_null(req.pod.name);
    assert_string_equal(req.pod.generate_name, "train-7x2kq-");
    assert_string_equal(req.pod.job_name, "train-7x2kq");
    assert_string_equal(req.pod.controller_uid, "0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a");
    assert_string_equal(req.pod.job_completion_index, "3");
    assert_string_equal(topo_admission_kv_get(req.pod.annotations, req.pod.nannotations,
                                              TOPO_KUEUE_REQUIRED_TOPOLOGY),
                        "topology.topo.io/rack");
    assert_int_equal(req.pod.has_node_selector, 0);
    assert_int_equal(req.pod.nowners, 1);
    assert_string_equal(req.pod.owners[0].kind, "Job");
    assert_int_equal(req.pod.owners[0].controller, 1);
    assert_int_equal(req.pod.nrequests, 3);
    assert_string_equal(req.pod.requests[0].name, "cpu");
    assert_int_equal(req.pod.requests[0].amount, 32000);
    assert_string_equal(req.pod.requests[2].name, "nvidia.com/gpu");
    assert_int_equal(req.pod.requests[2].amount, 8);
    free(body);

    snprintf(path, sizeof(path), "%s/fixtures/admission/jobset-pod/request.json",
             root ? root : ".");
    assert_int_equal(topo_codec_read_file(&body, &len, path, TOPO_MAX_ADMISSION_BODY, &err), 0);
    assert_int_equal(topo_admission_decode(&req, body, len, pool, &err), 0);
    assert_int_equal(req.pod.njobset_labels, 5);
    assert_string_equal(req.pod.podset_size, "8");
    assert_string_equal(topo_admission_kv_get(req.pod.annotations, req.pod.nannotations,
                                              TOPO_KUEUE_SLICE_SIZE),
                        "2");
    assert_int_equal(req.pod.nscheduling_gates, 1);
    free(body);
    topo_pool_clear(pool);
}

/* Over the limit: refused before parsing, TOPO_ELIMIT. */
static void test_admission__oversized(void **state)
{
    size_t len = TOPO_MAX_ADMISSION_BODY + 1;
    char *body = malloc(len);
    topo_admission_request req;
    topo_err err = TOPO_ERR_INIT;
    (void)state;
    assert_non_null(body);
    memset(body, ' ', len);
    memcpy(body, "{\"apiVersion\":\"admission.k8s.io/v1\"", 35);
    assert_int_equal(topo_admission_decode(&req, body, len, pool, &err), TOPO_ELIMIT);
    assert_null(req.uid);
    /* At the limit, blank padding is fine JSON-wise and only the content matters. */
    body[len - 2] = '}';
    assert_int_equal(topo_admission_decode(&req, body, len - 1, pool, &err), TOPO_EUNSUPPORTED);
    free(body);
    topo_pool_clear(pool);
}

typedef struct ptr_case {
    const char *parent, *token, *expected;
} ptr_case;

static void test_admission__pointer(void **state)
{
    static const ptr_case cases[] = {
        {"/spec/nodeSelector", "topology.kubernetes.io/zone",
         "/spec/nodeSelector/topology.kubernetes.io~1zone"},
        {"/metadata/annotations", "a~b/c", "/metadata/annotations/a~0b~1c"},
        {"", "~/", "/~0~1"},
        {"/x", "", "/x/"},
        {"/x", "~1", "/x/~01"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = NULL;
        assert_int_equal(topo_json_pointer_join(&s, cases[i].parent, cases[i].token), 0);
        assert_string_equal(s, cases[i].expected);
        free(s);
    }
}

static void test_admission__ops(void **state)
{
    topo_jsonpatch *p = NULL;
    char *s = NULL;
    (void)state;
    assert_int_equal(topo_jsonpatch_new(&p), 0);
    assert_int_equal(topo_jsonpatch_dump(&s, p), 0);
    assert_string_equal(s, "[]");
    free(s);
    assert_int_equal(topo_jsonpatch_test_string(p, "/a", "x"), 0);
    assert_int_equal(topo_jsonpatch_replace_string(p, "/a", "y"), 0);
    assert_int_equal(topo_jsonpatch_remove(p, "/b"), 0);
    assert_int_equal(topo_jsonpatch_add_string(p, "/c", "\"q\"\n"), 0);
    assert_int_equal(topo_jsonpatch_add_string(p, "/d", "\xff"), TOPO_EINVALID);
    assert_int_equal(topo_jsonpatch_count(p), 4);
    assert_int_equal(topo_jsonpatch_dump(&s, p), 0);
    assert_string_equal(s, "[{\"op\":\"test\",\"path\":\"/a\",\"value\":\"x\"},"
                           "{\"op\":\"replace\",\"path\":\"/a\",\"value\":\"y\"},"
                           "{\"op\":\"remove\",\"path\":\"/b\"},"
                           "{\"op\":\"add\",\"path\":\"/c\",\"value\":\"\\\"q\\\"\\n\"}]");
    free(s);
    topo_jsonpatch_free(p);
    topo_jsonpatch_free(NULL);
}

/* An annotation of ours with another value is replaced; a second run of the
 * same helper on the patched pod adds nothing. */
static void test_admission__annotation_replace(void **state)
{
    static const topo_kv have[] = {{"topology.topo.io/assignment", "old"}};
    static const topo_kv want[] = {{"topology.topo.io/assignment", "new"}};
    topo_admission_pod pod;
    topo_jsonpatch *p = NULL;
    char *s = NULL;
    topo_err err = TOPO_ERR_INIT;
    (void)state;
    memset(&pod, 0, sizeof(pod));
    pod.has_annotations = 1;
    pod.annotations = have;
    pod.nannotations = 1;
    assert_int_equal(topo_jsonpatch_new(&p), 0);
    assert_int_equal(topo_admission_patch_pod(p, &pod, NULL, 0, want, 1, &err), 0);
    assert_int_equal(topo_jsonpatch_dump(&s, p), 0);
    assert_string_equal(s, "[{\"op\":\"replace\",\"path\":\"/metadata/annotations/"
                           "topology.topo.io~1assignment\",\"value\":\"new\"}]");
    free(s);
    pod.annotations = want;
    assert_int_equal(topo_admission_patch_pod(p, &pod, NULL, 0, want, 1, &err), 0);
    assert_int_equal(topo_jsonpatch_count(p), 1);
    topo_jsonpatch_free(p);
}

typedef struct warn_case {
    const char *input;
    size_t want_chars; /* code points in the result */
    int cut;
} warn_case;

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void test_admission__warnings(void **state)
{
    char long_ascii[301], exact[121], long_utf8[400];
    const char *w[4];
    topo_admission_response resp = TOPO_ADMISSION_RESPONSE_INIT;
    char *out = NULL;
    size_t len;
    json_t *v, *ws;
    topo_err err = TOPO_ERR_INIT;
    (void)state;
    memset(long_ascii, 'a', 300);
    long_ascii[300] = '\0';
    memset(exact, 'b', 120);
    exact[120] = '\0';
    long_utf8[0] = '\0';
    for (int i = 0; i < 130; i++)
        strcat(long_utf8, "\xc3\xa9"); /* é */
    w[0] = long_ascii;
    w[1] = exact;
    w[2] = long_utf8;
    w[3] = "short";
    resp.uid = "u-1";
    resp.allowed = 1;
    resp.warnings = w;
    resp.nwarnings = 4;
    resp.status_code = 403; /* ignored when allowed */
    assert_int_equal(topo_admission_encode(&out, &len, &resp, &err), 0);
    v = json_loads(out, 0, NULL);
    assert_non_null(v);
    assert_null(json_object_get(json_object_get(v, "response"), "status"));
    ws = json_object_get(json_object_get(v, "response"), "warnings");
    assert_int_equal(json_array_size(ws), 4);
    assert_int_equal(utf8_chars(json_string_value(json_array_get(ws, 0))), 120);
    assert_non_null(strstr(json_string_value(json_array_get(ws, 0)), "aaa..."));
    assert_string_equal(json_string_value(json_array_get(ws, 1)), exact);
    assert_int_equal(utf8_chars(json_string_value(json_array_get(ws, 2))), 120);
    assert_string_equal(json_string_value(json_array_get(ws, 3)), "short");
    json_decref(v);
    free(out);

    resp.uid = NULL;
    assert_int_equal(topo_admission_encode(&out, &len, &resp, &err), TOPO_EINVALID);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission__fixtures),
        cmocka_unit_test(test_admission__job_pod_fields),
        cmocka_unit_test(test_admission__oversized),
        cmocka_unit_test(test_admission__pointer),
        cmocka_unit_test(test_admission__ops),
        cmocka_unit_test(test_admission__annotation_replace),
        cmocka_unit_test(test_admission__warnings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
