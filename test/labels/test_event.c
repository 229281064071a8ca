/* The core/v1 Event of a label change (topo_labelwriter_event): the fields
 * `kubectl describe node` reads, the name as client-go forms it, a node name
 * too long for the suffix, no Event without a label change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/labelwriter.h"

#define P "topology.topo.io/"

static const char *const prefixes[] = {P};
static const topo_labeldiff_owned owned = {prefixes, 1, NULL, 0, 0};

/* 2026-01-05T08:00:00Z and 123 ns. */
static const int64_t NOW = 1767600000LL * 1000000000LL + 123;

static void check_event(const json_t *ev, const char *name, const char *reason,
                        const char *type, const char *message)
{
    const json_t *md = json_object_get(ev, "metadata");
    const json_t *io = json_object_get(ev, "involvedObject");
    assert_string_equal(json_string_value(json_object_get(ev, "apiVersion")), "v1");
    assert_string_equal(json_string_value(json_object_get(ev, "kind")), "Event");
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), "default");
    assert_string_equal(json_string_value(json_object_get(io, "kind")), "Node");
    assert_string_equal(json_string_value(json_object_get(io, "apiVersion")), "v1");
    assert_string_equal(json_string_value(json_object_get(io, "name")), name);
    assert_string_equal(json_string_value(json_object_get(io, "uid")), "7c3f-uid");
    assert_null(json_object_get(io, "namespace"));
    assert_string_equal(json_string_value(json_object_get(ev, "reason")), reason);
    assert_string_equal(json_string_value(json_object_get(ev, "type")), type);
    assert_string_equal(json_string_value(json_object_get(ev, "message")), message);
    assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "source"),
                                                          "component")), "topo-sync");
    assert_string_equal(json_string_value(json_object_get(ev, "reportingComponent")),
                        "topo-sync");
    assert_string_equal(json_string_value(json_object_get(ev, "reportingInstance")), "pod-a");
    assert_string_equal(json_string_value(json_object_get(ev, "firstTimestamp")),
                        "2026-01-05T08:00:00Z");
    assert_string_equal(json_string_value(json_object_get(ev, "lastTimestamp")),
                        "2026-01-05T08:00:00Z");
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 1);
    /* Legacy form: no eventTime (it would make reportingInstance and action
     * required). */
    assert_null(json_object_get(ev, "eventTime"));
    const char *ename = json_string_value(json_object_get(md, "name"));
    assert_true(strlen(ename) <= 253);
    assert_true(topo_dns_subdomain_valid(ename));
}

static void test_event__changed(void **state)
{
    (void)state;
    topo_kv want[] = {{P "leaf", "lf2"}, {P "rack", "r12"}};
    topo_labeldiff_input in = {&owned, 1, want, 2, NULL, 0, TOPO_LABELDIFF_RECORD_KEY_DEFAULT, 0};
    json_t *node = json_pack("{s:{s:s, s:s, s:{s:s}}}", "metadata", "name", "gpu-0591", "uid",
                             "7c3f-uid", "labels", P "leaf", "lf1");
    topo_labeldiff *d = NULL;
    json_t *ev = NULL;
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labelwriter_event(&ev, d, "topo-sync", "pod-a", "default", NOW, NULL),
                     0);
    check_event(ev, "gpu-0591", "TopologyLabelsChanged", "Normal",
                "leaf: lf1 \xe2\x86\x92 lf2, rack: (none) \xe2\x86\x92 r12");
    char want_name[64];
    snprintf(want_name, sizeof want_name, "gpu-0591.%llx", (unsigned long long)NOW);
    assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "metadata"),
                                                          "name")), want_name);
    json_decref(ev);
    topo_labeldiff_free(d);
    json_decref(node);
}

static void test_event__drift_is_warning(void **state)
{
    (void)state;
    topo_kv want[] = {{P "leaf", "lf2"}};
    topo_labeldiff_input in = {&owned, 1, want, 1, NULL, 0, TOPO_LABELDIFF_RECORD_KEY_DEFAULT, 0};
    json_t *node = json_pack("{s:{s:s, s:s, s:{s:s}, s:{s:s}}}", "metadata", "name", "n1",
                             "uid", "7c3f-uid", "labels", P "leaf", "evil", "annotations",
                             TOPO_LABELDIFF_RECORD_KEY_DEFAULT, P "leaf=lf2");
    topo_labeldiff *d = NULL;
    json_t *ev = NULL;
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labelwriter_event(&ev, d, "topo-sync", "pod-a", "default", NOW, NULL),
                     0);
    check_event(ev, "n1", "TopologyLabelsReasserted", "Warning",
                "leaf: evil \xe2\x86\x92 lf2");
    json_decref(ev);
    topo_labeldiff_free(d);
    json_decref(node);
}

/* A 253-character node name: the event's name is cut to fit, and still a
 * valid name. */
/* A later reassertion folded into the window's Event: count, lastTimestamp
 * and a message with the count and the span since the first. */
static void test_event__update_counts(void **state)
{
    (void)state;
    topo_kv want[] = {{P "leaf", "lf2"}};
    topo_labeldiff_input in = {&owned, 1, want, 1, NULL, 0, TOPO_LABELDIFF_RECORD_KEY_DEFAULT, 0};
    json_t *node = json_pack("{s:{s:s, s:s, s:{s:s}, s:{s:s}}}", "metadata", "name", "n1", "uid",
                             "7c3f-uid", "labels", P "leaf", "evil", "annotations",
                             TOPO_LABELDIFF_RECORD_KEY_DEFAULT, P "leaf=lf2");
    topo_labeldiff *d = NULL;
    json_t *patch = NULL;
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    const int64_t s = 1000000000LL;
    assert_int_equal(topo_labelwriter_event_update(&patch, d, 4, NOW, NOW + 8 * s, NULL), 0);
    assert_int_equal(json_integer_value(json_object_get(patch, "count")), 4);
    assert_string_equal(json_string_value(json_object_get(patch, "lastTimestamp")),
                        "2026-01-05T08:00:08Z");
    assert_string_equal(json_string_value(json_object_get(patch, "message")),
                        "reasserted 4 times in the last 8s: leaf: evil \xe2\x86\x92 lf2");
    assert_int_equal(json_object_size(patch), 3); /* nothing else changes */
    json_decref(patch);
    assert_int_equal(topo_labelwriter_event_update(&patch, d, 27, NOW, NOW + 599 * s, NULL), 0);
    assert_string_equal(json_string_value(json_object_get(patch, "message")),
                        "reasserted 27 times in the last 9m: leaf: evil \xe2\x86\x92 lf2");
    json_decref(patch);
    assert_int_equal(topo_labelwriter_event_update(&patch, d, 2, NOW, NOW + 7300 * s, NULL), 0);
    assert_string_equal(json_string_value(json_object_get(patch, "message")),
                        "reasserted 2 times in the last 2h: leaf: evil \xe2\x86\x92 lf2");
    json_decref(patch);
    topo_labeldiff_free(d);
    json_decref(node);

    /* A message at its limit: the prefix pushes its end off, cut on a
     * character (the arrows are 3 bytes), still within the limit. */
    topo_kv many[40];
    char keys[40][32];
    json_t *labels = json_object();
    for (int i = 0; i < 40; i++) {
        snprintf(keys[i], sizeof keys[i], P "level-%02d", i);
        many[i] = (topo_kv){keys[i], "abcdefghij"};
        json_object_set_new(labels, keys[i], json_string("0123456789"));
    }
    topo_labeldiff_input in2 = {&owned, 1, many, 40, NULL, 0, NULL, 0};
    node = json_pack("{s:{s:s, s:o}}", "metadata", "name", "n1", "labels", labels);
    assert_int_equal(topo_labeldiff_compute(&d, &in2, node, NULL), 0);
    /* Counts of 1 to 20 digits move the cut over 20 bytes: across arrows. */
    uint64_t count = 1;
    for (int digits = 1; digits <= 20; digits++, count = count * 10 + 1) {
        /* json_pack refuses a message cut inside a character */
        assert_int_equal(topo_labelwriter_event_update(&patch, d, count, NOW, NOW, NULL), 0);
        const char *m = json_string_value(json_object_get(patch, "message"));
        assert_true(strlen(m) <= TOPO_LABELDIFF_MESSAGE_MAX);
        assert_true(strlen(m) >= TOPO_LABELDIFF_MESSAGE_MAX - 3);
        json_decref(patch);
    }
    topo_labeldiff_free(d);
    json_decref(node);
}

static void test_event__long_node_name(void **state)
{
    (void)state;
    char name[254];
    memset(name, 'a', 253);
    name[253] = '\0';
    name[235] = '.'; /* the cut would end on it: dropped */
    topo_kv want[] = {{P "leaf", "lf2"}};
    topo_labeldiff_input in = {&owned, 1, want, 1, NULL, 0, NULL, 0};
    json_t *node = json_pack("{s:{s:s, s:s}}", "metadata", "name", name, "uid", "7c3f-uid");
    topo_labeldiff *d = NULL;
    json_t *ev = NULL;
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labelwriter_event(&ev, d, "topo-sync", "pod-a", "default", NOW, NULL),
                     0);
    check_event(ev, name, "TopologyLabelsChanged", "Normal", "leaf: (none) \xe2\x86\x92 lf2");
    const char *ename = json_string_value(json_object_get(json_object_get(ev, "metadata"),
                                                          "name"));
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%llx", (unsigned long long)NOW);
    assert_int_equal(strlen(ename), 235 + strlen(suffix));
    assert_memory_equal(ename, name, 235);
    json_decref(ev);
    topo_labeldiff_free(d);
    json_decref(node);
}

/* Only annotations change (or nothing does): no Event. */
static void test_event__none_without_label_change(void **state)
{
    (void)state;
    topo_kv want[] = {{P "leaf", "lf2"}};
    topo_labeldiff_input in = {&owned, 1, want, 1, NULL, 0, TOPO_LABELDIFF_RECORD_KEY_DEFAULT, 0};
    json_t *node = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "n1", "labels",
                             P "leaf", "lf2");
    topo_labeldiff *d = NULL;
    json_t *ev = (json_t *)1;
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_PATCH); /* the record */
    assert_int_equal(topo_labelwriter_event(&ev, d, "topo-sync", "pod-a", "default", NOW, NULL),
                     0);
    assert_null(ev);
    topo_labeldiff_free(d);
    json_decref(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event__changed),
        cmocka_unit_test(test_event__drift_is_warning),
        cmocka_unit_test(test_event__update_counts),
        cmocka_unit_test(test_event__long_node_name),
        cmocka_unit_test(test_event__none_without_label_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
