/* Tests for lib/codec/k8s_event.c: the core/v1 Event about a Pod as
 * topo-webhook posts it (every field kubectl describe reads, the
 * involvedObject's namespace and uid, client-go's name), an object name too
 * long for the suffix, the timestamps, and what it refuses. The Node form
 * is checked through topo_labelwriter_event (test/labels/test_event.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/k8s_event.h"

/* 2026-01-05T08:00:00Z and 123 ns. */
static const int64_t NOW = 1767600000LL * 1000000000LL + 123;

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static topo_k8s_event_spec pod_event(const char *name)
{
    topo_k8s_event_spec s = {.namespace_ = "team-a",
                             .kind = "Pod",
                             .name = name,
                             .object_namespace = "team-a",
                             .uid = "9d1a-uid",
                             .type = "Normal",
                             .reason = "TopologyNodeReplaced",
                             .message = "node n9 failed: slot 0 moved to n11",
                             .component = "topo-webhook"};
    return s;
}

static void test_k8s_event__pod(void **state)
{
    (void)state;
    topo_k8s_event_spec s = pod_event("train-0");
    json_t *ev = NULL;
    assert_int_equal(topo_k8s_event_build(&ev, &s, NOW, NULL), 0);
    const json_t *md = json_object_get(ev, "metadata");
    const json_t *io = json_object_get(ev, "involvedObject");
    assert_string_equal(str(ev, "apiVersion"), "v1");
    assert_string_equal(str(ev, "kind"), "Event");
    char want[64];
    snprintf(want, sizeof want, "train-0.%llx", (unsigned long long)NOW);
    assert_string_equal(str(md, "name"), want);
    assert_string_equal(str(md, "namespace"), "team-a");
    assert_string_equal(str(io, "apiVersion"), "v1");
    assert_string_equal(str(io, "kind"), "Pod");
    assert_string_equal(str(io, "name"), "train-0");
    assert_string_equal(str(io, "namespace"), "team-a");
    assert_string_equal(str(io, "uid"), "9d1a-uid");
    assert_string_equal(str(ev, "type"), "Normal");
    assert_string_equal(str(ev, "reason"), "TopologyNodeReplaced");
    assert_string_equal(str(ev, "message"), "node n9 failed: slot 0 moved to n11");
    assert_string_equal(str(json_object_get(ev, "source"), "component"), "topo-webhook");
    assert_string_equal(str(ev, "reportingComponent"), "topo-webhook");
    assert_null(json_object_get(ev, "reportingInstance")); /* none given */
    assert_string_equal(str(ev, "firstTimestamp"), "2026-01-05T08:00:00Z");
    assert_string_equal(str(ev, "lastTimestamp"), "2026-01-05T08:00:00Z");
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 1);
    assert_null(json_object_get(ev, "eventTime"));
    json_decref(ev);

    /* a cluster-scoped object: no namespace, no uid when unknown */
    s.kind = "Node";
    s.object_namespace = NULL;
    s.uid = NULL;
    s.instance = "pod-a";
    assert_int_equal(topo_k8s_event_build(&ev, &s, NOW, NULL), 0);
    io = json_object_get(ev, "involvedObject");
    assert_null(json_object_get(io, "namespace"));
    assert_null(json_object_get(io, "uid"));
    assert_string_equal(str(ev, "reportingInstance"), "pod-a");
    json_decref(ev);
}

/* A 253-character name: the Event's name is cut to fit, without ending on
 * a dot, and is still a valid name. */
static void test_k8s_event__long_name(void **state)
{
    (void)state;
    char name[254];
    memset(name, 'a', 253);
    name[253] = '\0';
    name[235] = '.'; /* the cut would end on it: dropped */
    topo_k8s_event_spec s = pod_event(name);
    json_t *ev = NULL;
    assert_int_equal(topo_k8s_event_build(&ev, &s, NOW, NULL), 0);
    const char *ename = str(json_object_get(ev, "metadata"), "name");
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%llx", (unsigned long long)NOW);
    assert_int_equal(strlen(ename), 235 + strlen(suffix));
    assert_memory_equal(ename, name, 235);
    assert_true(strlen(ename) <= TOPO_K8S_EVENT_NAME_MAX);
    assert_string_equal(str(json_object_get(ev, "involvedObject"), "name"), name);
    json_decref(ev);
}

static void test_k8s_event__refused(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    json_t *ev = (json_t *)1;
    topo_k8s_event_spec s = pod_event("p");
    s.message = "bad \xff byte";
    assert_int_equal(topo_k8s_event_build(&ev, &s, NOW, &err), TOPO_EINVALID);
    assert_null(ev);
    assert_non_null(strstr(err.text, "not UTF-8"));
    s = pod_event("p");
    s.uid = "\xc3";
    assert_int_equal(topo_k8s_event_build(&ev, &s, NOW, &err), TOPO_EINVALID);
    s = pod_event("p");
    s.reason = NULL;
    assert_int_equal(topo_k8s_event_build(&ev, &s, NOW, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "required"));
    char stamp[TOPO_K8S_EVENT_STAMP_SIZE];
    assert_int_equal(topo_k8s_event_stamp(stamp, NOW + 8000000000LL, NULL), 0);
    assert_string_equal(stamp, "2026-01-05T08:00:08Z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_event__pod),
        cmocka_unit_test(test_k8s_event__long_name),
        cmocka_unit_test(test_k8s_event__refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
