/* Tests for lib/admission/patch_event_text.c: the wait-reason text as the
 * annotation and the TopologyWaiting Event hold it, whether a reason is
 * new to a pod, the guarded patch that records it, and the domain an
 * ungate patch names. Pure. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/admission.h"

static void test_event_text__same(void **state)
{
    (void)state;
    assert_true(topo_admission_wait_reason_same("no rack has room", "no rack has room"));
    /* the counts in Kueue's words moved: a new reason */
    assert_false(topo_admission_wait_reason_same("excluded: resource \"nvidia.com/gpu\": 16",
                                                 "excluded: resource \"nvidia.com/gpu\": 12"));
    assert_false(topo_admission_wait_reason_same(NULL, "no rack has room"));
    /* a long reason is compared as the annotation holds it: cut, "..." */
    char longer[600];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    char cut[TOPO_ADMISSION_WAIT_REASON_MAX + 1];
    topo_admission_wait_reason_text(cut, longer);
    assert_int_equal(strlen(cut), TOPO_ADMISSION_WAIT_REASON_MAX);
    assert_string_equal(cut + TOPO_ADMISSION_WAIT_REASON_MAX - 3, "...");
    assert_true(topo_admission_wait_reason_same(cut, longer));
    assert_false(topo_admission_wait_reason_same(longer, longer));
}

/* Cut at a UTF-8 boundary: no half character before the "...". */
static void test_event_text__cut_utf8(void **state)
{
    (void)state;
    char s[400] = "";
    while (strlen(s) < 300)
        strcat(s, "é"); /* 2 bytes */
    char cut[TOPO_ADMISSION_WAIT_REASON_MAX + 1];
    topo_admission_wait_reason_text(cut, s);
    size_t n = strlen(cut);
    assert_true(n <= TOPO_ADMISSION_WAIT_REASON_MAX);
    assert_string_equal(cut + n - 3, "...");
    assert_int_equal((n - 3) % 2, 0);
}

static void test_event_text__patch(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    json_t *p = NULL;
    assert_int_equal(topo_admission_wait_reason_patch(&p, "old reason", "new reason", &err), 0);
    char *text = json_dumps(p, JSON_COMPACT);
    assert_string_equal(text,
                        "[{\"op\":\"test\",\"path\":\"/metadata/annotations/"
                        "topology.topo.io~1wait-reason\",\"value\":\"old reason\"},"
                        "{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                        "topology.topo.io~1wait-reason\",\"value\":\"new reason\"}]");
    free(text);
    json_decref(p);
    /* no annotation: added, nothing to test */
    assert_int_equal(topo_admission_wait_reason_patch(&p, NULL, "why", &err), 0);
    assert_int_equal(json_array_size(p), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "op")), "add");
    json_decref(p);
    /* not UTF-8: refused, named */
    assert_int_equal(topo_admission_wait_reason_patch(&p, NULL, "bad \xff", &err), TOPO_EINVALID);
    assert_null(p);
}

static void test_event_text__domain(void **state)
{
    (void)state;
    char out[128];
    /* the whole map added (the pod had no nodeSelector) */
    json_t *p = json_loads(
        "[{\"op\":\"test\",\"path\":\"/spec/schedulingGates/0/name\",\"value\":\"x\"},"
        "{\"op\":\"add\",\"path\":\"/spec/nodeSelector\",\"value\":{\"topology.topo.io/block\":"
        "\"b1\",\"topology.topo.io/rack\":\"r2\"}},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations/a\",\"value\":\"v\"}]",
        0, NULL);
    assert_non_null(p);
    assert_int_equal(topo_admission_patch_domain_text(out, sizeof out, p), 0);
    assert_string_equal(out, "topology.topo.io/block=b1, topology.topo.io/rack=r2");
    json_decref(p);
    /* entries added one by one, their keys escaped */
    p = json_loads("[{\"op\":\"add\",\"path\":\"/spec/nodeSelector/kubernetes.io~1hostname\","
                   "\"value\":\"n3\"},{\"op\":\"remove\",\"path\":\"/spec/nodeSelector/x\"}]",
                   0, NULL);
    assert_int_equal(topo_admission_patch_domain_text(out, sizeof out, p), 0);
    assert_string_equal(out, "kubernetes.io/hostname=n3");
    /* cut to the buffer, ending in "..." */
    char small[12];
    assert_int_equal(topo_admission_patch_domain_text(small, sizeof small, p), 0);
    assert_string_equal(small, "kubernet...");
    json_decref(p);
    /* nothing selected */
    p = json_loads("[]", 0, NULL);
    assert_int_equal(topo_admission_patch_domain_text(out, sizeof out, p), TOPO_ENOTFOUND);
    assert_string_equal(out, "");
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_text__same),
        cmocka_unit_test(test_event_text__cut_utf8),
        cmocka_unit_test(test_event_text__patch),
        cmocka_unit_test(test_event_text__domain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
