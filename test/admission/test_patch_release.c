/* Tests for the release of a gated pod without placing it
 * (topo_admission_release_patch, lib/admission/patch_release.c, over the ungater's
 * topo_admission_patch_ungate): the patch applied to the pod leaves it
 * without topo's gate and the gate's annotations and otherwise equal (other
 * gates in order, the seal, the author's annotations); it tests the uid and
 * the gate's index, so applied to a pod recreated under the name, or whose
 * gates moved, it fails; a pod without the gate gets no patch. */
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
#include "support/jsonpatch_apply.h"

#define GATE TOPO_ADMISSION_WAIT_GATE

/* A pod as topo-webhook left it gated, with gates (a JSON array's text). */
static json_t *gated_pod(const char *gates)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"metadata\": {\"name\": \"p\", \"namespace\": \"ml\", \"uid\": \"u-1\","
             " \"annotations\": {\"" TOPO_ADMISSION_WAIT_REASON_ANNOTATION "\": \"no room\","
             " \"" TOPO_ADMISSION_PODSET_ANNOTATION "\": \"ml/job/j\","
             " \"topology.topo.io/seal\": \"abc\", \"example.com/owner\": \"a\"}},"
             " \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"i\"}],"
             " \"schedulingGates\": %s}}",
             gates);
    json_error_t e;
    json_t *pod = json_loads(text, 0, &e);
    assert_non_null(pod);
    return pod;
}

/* The pod as the release must leave it: want_gates, the seal and the
 * author's annotation kept. */
static json_t *released(const char *want_gates)
{
    json_t *pod = gated_pod(want_gates);
    json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    json_object_del(ann, TOPO_ADMISSION_WAIT_REASON_ANNOTATION);
    json_object_del(ann, TOPO_ADMISSION_PODSET_ANNOTATION);
    return pod;
}

static void test_release__gate_positions(void **state)
{
    (void)state;
    static const struct {
        const char *gates, *want;
    } cases[] = {
        {"[{\"name\": \"" GATE "\"}]", "[]"},
        {"[{\"name\": \"" GATE "\"}, {\"name\": \"a.io/x\"}, {\"name\": \"b.io/y\"}]",
         "[{\"name\": \"a.io/x\"}, {\"name\": \"b.io/y\"}]"},
        {"[{\"name\": \"a.io/x\"}, {\"name\": \"" GATE "\"}, {\"name\": \"b.io/y\"}]",
         "[{\"name\": \"a.io/x\"}, {\"name\": \"b.io/y\"}]"},
        {"[{\"name\": \"a.io/x\"}, {\"name\": \"b.io/y\"}, {\"name\": \"" GATE "\"}]",
         "[{\"name\": \"a.io/x\"}, {\"name\": \"b.io/y\"}]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        topo_err err = TOPO_ERR_INIT;
        json_t *pod = gated_pod(cases[i].gates), *patch = NULL, *want = released(cases[i].want);
        assert_int_equal(topo_admission_release_patch(&patch, pod, &err), 0);
        assert_non_null(patch);
        /* the uid is tested first */
        json_t *first = json_array_get(patch, 0);
        assert_string_equal(json_string_value(json_object_get(first, "op")), "test");
        assert_string_equal(json_string_value(json_object_get(first, "path")), "/metadata/uid");
        assert_int_equal(test_jsonpatch_apply(pod, patch), 0);
        if (!json_equal(pod, want)) {
            char *got = json_dumps(pod, JSON_SORT_KEYS), *exp = json_dumps(want, JSON_SORT_KEYS);
            fail_msg("case %zu:\n got  %s\n want %s", i, got, exp);
        }
        json_decref(want);
        json_decref(patch);
        json_decref(pod);
    }
}

/* The patch of a pod as read, applied to the pod as it is later. */
static int apply_later(const char *read_gates, json_t *later)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *pod = gated_pod(read_gates), *patch = NULL;
    assert_int_equal(topo_admission_release_patch(&patch, pod, &err), 0);
    assert_non_null(patch);
    int rc = test_jsonpatch_apply(later, patch);
    json_decref(patch);
    json_decref(pod);
    return rc;
}

static void test_release__refused_when_changed(void **state)
{
    (void)state;
    const char *two = "[{\"name\": \"a.io/x\"}, {\"name\": \"" GATE "\"}]";
    /* another controller removed its gate ahead of topo's: the index moved */
    json_t *moved = gated_pod("[{\"name\": \"" GATE "\"}]");
    assert_int_equal(apply_later(two, moved), -1);
    json_decref(moved);
    /* another pod under the same name */
    json_t *other = gated_pod(two);
    json_object_set_new(json_object_get(other, "metadata"), "uid", json_string("u-2"));
    assert_int_equal(apply_later(two, other), -1);
    json_decref(other);
    /* the gate already removed */
    json_t *gone = gated_pod("[{\"name\": \"a.io/x\"}]");
    assert_int_equal(apply_later(two, gone), -1);
    json_decref(gone);
}

static void test_release__nothing_to_release(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    json_t *patch = NULL;
    json_t *pod = gated_pod("[{\"name\": \"a.io/x\"}]");
    assert_int_equal(topo_admission_release_patch(&patch, pod, &err), 0);
    assert_null(patch);
    json_decref(pod);
    /* topo's annotations without its gate are not the release's business */
    pod = gated_pod("[]");
    assert_int_equal(topo_admission_release_patch(&patch, pod, &err), 0);
    assert_null(patch);
    json_decref(pod);
}

static void test_release__needs_a_uid(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    json_t *patch = NULL;
    json_t *pod = gated_pod("[{\"name\": \"" GATE "\"}]");
    json_object_del(json_object_get(pod, "metadata"), "uid");
    assert_int_equal(topo_admission_release_patch(&patch, pod, &err), TOPO_EINVALID);
    assert_null(patch);
    assert_non_null(strstr(err.text, "metadata.uid"));
    json_decref(pod);
    /* a malformed field of the pod is named */
    pod = gated_pod("[{\"name\": \"" GATE "\"}]");
    json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "annotations"), "k",
                        json_integer(1));
    assert_int_equal(topo_admission_release_patch(&patch, pod, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "annotations"));
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release__gate_positions),
        cmocka_unit_test(test_release__refused_when_changed),
        cmocka_unit_test(test_release__nothing_to_release),
        cmocka_unit_test(test_release__needs_a_uid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
