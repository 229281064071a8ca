/* The label writer's diff (topo/labeldiff.h): converged nodes, changed,
 * new and stale owned labels, labels outside the owned keys, the record and
 * drift, held and authoritative-empty plans, owned annotations, extra owned
 * prefixes and keys, the Event's message and its bound, refused inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/labeldiff.h"

#define P "topology.topo.io/"
#define REC TOPO_LABELDIFF_RECORD_KEY_DEFAULT
#define ARROW " \xe2\x86\x92 "

static const char *const prefixes[] = {P};
static const topo_labeldiff_owned owned = {prefixes, 1, NULL, 0, 0};

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, text);
    return v;
}

/* A node with these labels and annotations (JSON object texts). */
static json_t *node(const char *labels, const char *annotations)
{
    json_t *n = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "n1", "uid", "u-1",
                          "resourceVersion", "7");
    json_t *md = json_object_get(n, "metadata");
    if (labels != NULL)
        json_object_set_new(md, "labels", parse(labels));
    if (annotations != NULL)
        json_object_set_new(md, "annotations", parse(annotations));
    return n;
}

static void assert_json(const json_t *got, const char *want)
{
    json_t *w = parse(want);
    if (!json_equal((json_t *)got, w)) {
        char *g = got != NULL ? json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
        fprintf(stderr, "got  %s\nwant %s\n", g ? g : "NULL", want);
        free(g);
        json_decref(w);
        fail();
    }
    json_decref(w);
}

static topo_labeldiff *diff(const topo_labeldiff_input *in, json_t *n)
{
    topo_labeldiff *d = NULL;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_labeldiff_compute(&d, in, n, &err);
    if (rc != 0)
        fail_msg("compute: %s", err.text);
    return d;
}

static const topo_kv want3[] = {
    {P "spine", "sp1"}, {P "leaf", "lf2"}, {P "rack", "r12"}};

static void test_labeldiff__converged(void **state)
{
    (void)state;
    topo_kv ann[] = {{"topology.topo.io/provenance", "leaf=ufm"}};
    topo_labeldiff_input in = {&owned, 1, want3, 3, ann, 1, REC, 0};
    json_t *n = node("{\"" P "leaf\": \"lf2\", \"" P "rack\": \"r12\", \"" P "spine\": \"sp1\","
                     " \"kubernetes.io/hostname\": \"n1\", \"nvidia.com/gpu.clique\": \"c.1\"}",
                     "{\"" REC "\": \"" P "leaf=lf2," P "rack=r12," P "spine=sp1\","
                     " \"topology.topo.io/provenance\": \"leaf=ufm\", \"other\": \"x\"}");
    topo_labeldiff *d = diff(&in, n);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_CONVERGED);
    assert_null(topo_labeldiff_patch(d));
    assert_int_equal(topo_labeldiff_change_count(d), 0);
    assert_int_equal(topo_labeldiff_annotation_count(d), 0);
    assert_null(topo_labeldiff_message(d));
    assert_null(topo_labeldiff_reason(d));
    assert_string_equal(topo_labeldiff_node_name(d), "n1");
    assert_string_equal(topo_labeldiff_node_uid(d), "u-1");
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Changed, new and stale owned labels in one patch; labels outside the
 * prefix (even one that looks like it) never named. */
static void test_labeldiff__changed_new_stale(void **state)
{
    (void)state;
    topo_labeldiff_input in = {&owned, 1, want3, 3, NULL, 0, REC, 0};
    json_t *n = node("{\"" P "leaf\": \"lf1\", \"" P "spine\": \"sp1\", \"" P "block\": \"b1\","
                     " \"topology.topo.io.other/leaf\": \"z\", \"kubernetes.io/hostname\": \"n1\"}",
                     "{\"" REC "\": \"" P "block=b1," P "leaf=lf1," P "spine=sp1\"}");
    topo_labeldiff *d = diff(&in, n);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_PATCH);
    assert_json(topo_labeldiff_patch(d),
                "{\"metadata\": {\"labels\": {\"" P "leaf\": \"lf2\", \"" P "rack\": \"r12\","
                " \"" P "block\": null}, \"annotations\": {\"" REC "\": \"" P "leaf=lf2,"
                P "rack=r12," P "spine=sp1\"}}}");
    assert_int_equal(topo_labeldiff_change_count(d), 3);
    const topo_labeldiff_change *c = topo_labeldiff_change_at(d, 2);
    assert_string_equal(c->key, P "block");
    assert_string_equal(c->old_value, "b1");
    assert_null(c->new_value);
    assert_null(topo_labeldiff_change_at(d, 1)->old_value);
    assert_null(topo_labeldiff_change_at(d, 3));
    assert_int_equal(topo_labeldiff_drift_count(d), 0);
    assert_int_equal(topo_labeldiff_annotation_count(d), 1);
    assert_true(topo_labeldiff_had_owned(d));
    assert_string_equal(topo_labeldiff_message(d), "leaf: lf1" ARROW "lf2, rack: (none)" ARROW
                                                   "r12, block: b1" ARROW "(none)");
    assert_string_equal(topo_labeldiff_reason(d), TOPO_LABELDIFF_REASON_CHANGED);
    assert_string_equal(topo_labeldiff_event_type(d), "Normal");
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Someone else changed an owned label and added one: drift, reasserted. */
static void test_labeldiff__drift(void **state)
{
    (void)state;
    topo_labeldiff_input in = {&owned, 1, want3, 3, NULL, 0, REC, 0};
    json_t *n = node("{\"" P "leaf\": \"hacked\", \"" P "rack\": \"r12\", \"" P "spine\": \"sp1\","
                     " \"" P "extra\": \"e\"}",
                     "{\"" REC "\": \"" P "leaf=lf2," P "rack=r12," P "spine=sp1\"}");
    topo_labeldiff *d = diff(&in, n);
    assert_json(topo_labeldiff_patch(d), "{\"metadata\": {\"labels\": {\"" P "leaf\": \"lf2\","
                                         " \"" P "extra\": null}}}");
    assert_int_equal(topo_labeldiff_drift_count(d), 2);
    assert_true(topo_labeldiff_change_at(d, 0)->drift);
    assert_true(topo_labeldiff_change_at(d, 1)->drift);
    assert_int_equal(topo_labeldiff_annotation_count(d), 0);
    assert_string_equal(topo_labeldiff_message(d),
                        "leaf: hacked" ARROW "lf2, extra: e" ARROW "(none)");
    assert_string_equal(topo_labeldiff_reason(d), TOPO_LABELDIFF_REASON_REASSERTED);
    assert_string_equal(topo_labeldiff_event_type(d), "Warning");
    /* Every change puts back what the record holds: a reassertion only. */
    assert_true(topo_labeldiff_reassert_only(d));
    topo_labeldiff_free(d);
    json_decref(n);

    /* A plan change next to a drifted key: only that key is drift. */
    n = node("{\"" P "leaf\": \"lf1\", \"" P "rack\": \"r99\", \"" P "spine\": \"sp1\"}",
             "{\"" REC "\": \"" P "leaf=lf1," P "rack=r12," P "spine=sp1\"}");
    d = diff(&in, n);
    assert_int_equal(topo_labeldiff_change_count(d), 2);
    assert_false(topo_labeldiff_change_at(d, 0)->drift);
    assert_true(topo_labeldiff_change_at(d, 1)->drift);
    assert_int_equal(topo_labeldiff_drift_count(d), 1);
    assert_string_equal(topo_labeldiff_reason(d), TOPO_LABELDIFF_REASON_REASSERTED);
    assert_false(topo_labeldiff_reassert_only(d)); /* the plan moved leaf: at once */
    topo_labeldiff_free(d);
    json_decref(n);

    /* Drift onto a key whose plan moved too: not a reassertion only. */
    n = node("{\"" P "leaf\": \"hacked\", \"" P "rack\": \"r12\", \"" P "spine\": \"sp1\"}",
             "{\"" REC "\": \"" P "leaf=lf1," P "rack=r12," P "spine=sp1\"}");
    d = diff(&in, n);
    assert_int_equal(topo_labeldiff_drift_count(d), 1);
    assert_false(topo_labeldiff_reassert_only(d));
    topo_labeldiff_free(d);
    json_decref(n);
}

/* No record (first write, or a broken one), or no record key: no drift. */
static void test_labeldiff__no_record_no_drift(void **state)
{
    (void)state;
    const char *records[] = {NULL, "garbage", P "leaf=lf1,", "=x", ""};
    for (size_t i = 0; i < sizeof records / sizeof *records; i++) {
        topo_labeldiff_input in = {&owned, 1, want3, 3, NULL, 0, REC, 0};
        json_t *n = node("{\"" P "leaf\": \"x\", \"" P "old\": \"o\"}", NULL);
        if (records[i] != NULL)
            json_object_set_new(json_object_get(n, "metadata"), "annotations",
                                json_pack("{s:s}", REC, records[i]));
        topo_labeldiff *d = diff(&in, n);
        assert_int_equal(topo_labeldiff_change_count(d), 4);
        /* "" is a valid record (nothing written): x and o are then drift. */
        assert_int_equal(topo_labeldiff_drift_count(d), i == 4 ? 2 : 0);
        assert_int_equal(topo_labeldiff_annotation_count(d), 1);
        topo_labeldiff_free(d);
        json_decref(n);
    }
    /* Without a record key, the record annotation is neither read nor written. */
    topo_labeldiff_input in = {&owned, 1, want3, 3, NULL, 0, NULL, 0};
    json_t *n = node("{\"" P "leaf\": \"x\"}", "{\"" REC "\": \"" P "leaf=lf2\"}");
    topo_labeldiff *d = diff(&in, n);
    assert_int_equal(topo_labeldiff_drift_count(d), 0);
    assert_json(topo_labeldiff_patch(d), "{\"metadata\": {\"labels\": {\"" P "leaf\": \"lf2\","
                                         " \"" P "rack\": \"r12\", \"" P "spine\": \"sp1\"}}}");
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Labels right but no record yet (labelled by hand, or before records):
 * one patch adds the record, no label change, no Event. */
static void test_labeldiff__adopt_record_only(void **state)
{
    (void)state;
    topo_labeldiff_input in = {&owned, 1, want3, 3, NULL, 0, REC, 0};
    json_t *n = node("{\"" P "leaf\": \"lf2\", \"" P "rack\": \"r12\", \"" P "spine\": \"sp1\"}",
                     NULL);
    topo_labeldiff *d = diff(&in, n);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_PATCH);
    assert_json(topo_labeldiff_patch(d), "{\"metadata\": {\"annotations\": {\"" REC "\": \""
                                         P "leaf=lf2," P "rack=r12," P "spine=sp1\"}}}");
    assert_int_equal(topo_labeldiff_change_count(d), 0);
    assert_null(topo_labeldiff_message(d));
    assert_null(topo_labeldiff_event_type(d));
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Not authoritative: nothing written, whatever the node carries. */
static void test_labeldiff__held(void **state)
{
    (void)state;
    topo_labeldiff_input in = {&owned, 0, NULL, 0, NULL, 0, REC, 0};
    json_t *n = node("{\"" P "leaf\": \"lf1\", \"" P "rack\": \"r1\"}", NULL);
    topo_labeldiff *d = diff(&in, n);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_HELD);
    assert_null(topo_labeldiff_patch(d));
    assert_int_equal(topo_labeldiff_change_count(d), 0);
    assert_null(topo_labeldiff_message(d));
    topo_labeldiff_free(d);
    /* Even with a (partial) plan given. */
    topo_labeldiff_input partial = {&owned, 0, want3, 1, NULL, 0, REC, 0};
    d = diff(&partial, n);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_HELD);
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Authoritative and empty: every owned label removed, the record says so. */
static void test_labeldiff__authoritative_empty(void **state)
{
    (void)state;
    topo_kv ann[] = {{"topology.topo.io/provenance", NULL}};
    topo_labeldiff_input in = {&owned, 1, NULL, 0, ann, 1, REC, 0};
    json_t *n = node("{\"" P "rack\": \"r1\", \"" P "leaf\": \"lf1\", \"a.io/b\": \"c\"}",
                     "{\"topology.topo.io/provenance\": \"x\"}");
    topo_labeldiff *d = diff(&in, n);
    assert_json(topo_labeldiff_patch(d),
                "{\"metadata\": {\"labels\": {\"" P "leaf\": null, \"" P "rack\": null},"
                " \"annotations\": {\"topology.topo.io/provenance\": null, \"" REC "\": \"\"}}}");
    /* removed keys sorted */
    assert_string_equal(topo_labeldiff_change_at(d, 0)->key, P "leaf");
    assert_string_equal(topo_labeldiff_message(d),
                        "leaf: lf1" ARROW "(none), rack: r1" ARROW "(none)");
    topo_labeldiff_free(d);
    json_decref(n);

    /* A node with no labels and no annotations at all (and null maps). */
    n = json_pack("{s:{s:s, s:n, s:n}}", "metadata", "name", "n2", "labels", "annotations");
    topo_labeldiff_input none = {&owned, 1, NULL, 0, NULL, 0, REC, 0};
    d = diff(&none, n);
    assert_json(topo_labeldiff_patch(d), "{\"metadata\": {\"annotations\": {\"" REC "\": \"\"}}}");
    assert_null(topo_labeldiff_node_uid(d));
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Owned annotations: set when different, removed (null) when present and
 * not wanted, left alone when absent and not wanted. */
static void test_labeldiff__annotations(void **state)
{
    (void)state;
    topo_kv ann[] = {{"topology.topo.io/provenance", "leaf=ufm,rack=netbox"},
                     {"topology.topo.io/gone", NULL},
                     {"topology.topo.io/never", NULL}};
    topo_labeldiff_input in = {&owned, 1, want3, 3, ann, 3, NULL, 0};
    json_t *n = node("{\"" P "leaf\": \"lf2\", \"" P "rack\": \"r12\", \"" P "spine\": \"sp1\"}",
                     "{\"topology.topo.io/provenance\": \"leaf=ufm\", \"topology.topo.io/gone\":"
                     " \"1\", \"x.io/y\": \"keep\"}");
    topo_labeldiff *d = diff(&in, n);
    assert_json(topo_labeldiff_patch(d),
                "{\"metadata\": {\"annotations\": {\"topology.topo.io/provenance\": "
                "\"leaf=ufm,rack=netbox\", \"topology.topo.io/gone\": null}}}");
    assert_int_equal(topo_labeldiff_annotation_count(d), 2);
    assert_null(topo_labeldiff_message(d));
    topo_labeldiff_free(d);
    json_decref(n);
}

/* topograph's vocabulary owned too (exactly its keys, beside the main
 * prefix) and an exact key: shown whole in the message; siblings not owned
 * untouched. */
static void test_labeldiff__extra_owned(void **state)
{
    (void)state;
    const char *const keys[] = {"example.com/pool"};
    topo_labeldiff_owned own = {prefixes, 1, keys, 1, 1};
    topo_kv want[] = {{P "leaf", "lf1"},
                      {"fabric.topograph.run/tier-1", "s1"},
                      {"accelerator.topograph.run/domain", "nvl1"},
                      {"example.com/pool", "p1"}};
    topo_labeldiff_input in = {&own, 1, want, 4, NULL, 0, NULL, 0};
    json_t *n = node("{\"" P "leaf\": \"lf1\", \"fabric.topograph.run/tier-1\": \"s1\","
                     " \"fabric.topograph.run/tier-3\": \"s3\", \"example.com/pool\": \"p1\","
                     " \"example.com/other\": \"keep\","
                     " \"accelerator.topograph.run/other\": \"keep\"}",
                     NULL);
    topo_labeldiff *d = diff(&in, n);
    assert_json(topo_labeldiff_patch(d), "{\"metadata\": {\"labels\": {"
                                         "\"accelerator.topograph.run/domain\": \"nvl1\","
                                         " \"fabric.topograph.run/tier-3\": null}}}");
    assert_string_equal(topo_labeldiff_message(d),
                        "accelerator.topograph.run/domain: (none)" ARROW "nvl1, "
                        "fabric.topograph.run/tier-3: s3" ARROW "(none)");
    assert_true(topo_labeldiff_owns(&own, "fabric.topograph.run/tier-9"));
    assert_true(topo_labeldiff_owns(&own, "accelerator.topograph.run/sub-domain"));
    assert_false(topo_labeldiff_owns(&own, "fabric.topograph.run/tier-9x"));
    assert_false(topo_labeldiff_owns(&own, "accelerator.topograph.run/other"));
    assert_false(topo_labeldiff_owns(&own, "example.com/other"));
    assert_false(topo_labeldiff_owns(NULL, P "leaf"));
    topo_labeldiff_free(d);
    json_decref(n);
}

/* The labels of other owners survive whatever the plan: an authoritative
 * empty plan under topo's prefix removes only topo's labels, and an owned
 * prefix that is not "<DNS subdomain>/" or lies in another owner's
 * namespace ("t" owned "team", "topology.topo.io" owned
 * "topology.topo.io.evil/x", "kubernetes.io/" owned kubernetes.io/os) is
 * refused before anything is computed (issue 26 §2). */
static void test_labeldiff__foreign_labels_kept(void **state)
{
    (void)state;
    json_t *n = node("{\"" P "leaf\": \"lf1\", \"fabric.topograph.run/tier-2\": \"s\","
                     " \"accelerator.topograph.run/domain\": \"d\","
                     " \"kubernetes.io/hostname\": \"n1\", \"kubernetes.io/os\": \"linux\","
                     " \"node-role.kubernetes.io/worker\": \"\", \"team\": \"ml\","
                     " \"topology.topo.io.evil/x\": \"1\", \"topology.topo.iox/y\": \"2\","
                     " \"fabric.topograph.run/tier-0x\": \"3\","
                     " \"fabric.topograph.run/other\": \"4\","
                     " \"accelerator.topograph.run/other\": \"5\"}",
                     "{\"" P "provenance\": \"x\", \"topology.topo.io.evil/p\": \"y\"}");
    /* topo's prefix and topograph's keys: only those go. */
    topo_labeldiff_owned own = {prefixes, 1, NULL, 0, 1};
    topo_kv gone[] = {{P "provenance", NULL}, {P "never", NULL}};
    topo_labeldiff_input in = {&own, 1, NULL, 0, gone, 2, NULL, 0};
    topo_labeldiff *d = diff(&in, n);
    assert_json(topo_labeldiff_patch(d),
                "{\"metadata\": {\"labels\": {\"" P "leaf\": null,"
                " \"fabric.topograph.run/tier-2\": null,"
                " \"accelerator.topograph.run/domain\": null},"
                " \"annotations\": {\"" P "provenance\": null}}}");
    topo_labeldiff_free(d);

    /* Prefixes that would reach other owners' labels: refused, nothing
     * computed. */
    static const char *const bad[] = {"t",
                                      "topology.topo.io",
                                      "node-role.kubernetes.io",
                                      "kubernetes.io/",
                                      "node-role.kubernetes.io/",
                                      "k8s.io/",
                                      "nvidia.com/",
                                      "fabric.topograph.run/",
                                      "a//",
                                      "a/b/",
                                      "fabric.topograph.run/tier-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *const pre[] = {P, bad[i]};
        topo_labeldiff_owned o = {pre, 2, NULL, 0, 0};
        topo_labeldiff_input all = {&o, 1, NULL, 0, NULL, 0, REC, 0};
        topo_err err = TOPO_ERR_INIT;
        topo_labeldiff *x = (topo_labeldiff *)1;
        if (topo_labeldiff_compute(&x, &all, n, &err) != TOPO_EINVALID)
            fail_msg("owned prefix \"%s\" accepted", bad[i]);
        assert_null(x);
        assert_non_null(strstr(err.text, "owned prefix 1"));
        /* Whatever the shape, a prefix owns only keys under its whole self. */
        assert_false(topo_labeldiff_owns(&o, "team"));
        assert_false(topo_labeldiff_owns(&o, "topology.topo.io.evil/x"));
        assert_false(topo_labeldiff_owns(&o, "node-role.kubernetes.io/worker") &&
                     strcmp(bad[i], "node-role.kubernetes.io/") != 0);
    }
    /* Exact keys in another owner's namespace: refused too. */
    static const char *const bad_keys[] = {"kubernetes.io/os", "team",
                                           "accelerator.topograph.run/domain", "nvidia.com/x"};
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
        topo_labeldiff_owned o = {prefixes, 1, &bad_keys[i], 1, 0};
        topo_labeldiff_input all = {&o, 1, NULL, 0, NULL, 0, REC, 0};
        topo_err err = TOPO_ERR_INIT;
        topo_labeldiff *x = (topo_labeldiff *)1;
        if (topo_labeldiff_compute(&x, &all, n, &err) != TOPO_EINVALID)
            fail_msg("owned key \"%s\" accepted", bad_keys[i]);
        assert_null(x);
        assert_non_null(strstr(err.text, "owned key 0"));
    }
    /* Annotations and the record outside the owned prefixes: refused. */
    topo_kv evil_ann[] = {{"topology.topo.io.evil/p", NULL}};
    topo_labeldiff_input ann = {&owned, 1, NULL, 0, evil_ann, 1, REC, 0};
    topo_labeldiff_input rec = {&owned, 1, NULL, 0, NULL, 0, "kubernetes.io/os", 0};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_labeldiff_compute(&d, &ann, n, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "annotations[0]: key \"topology.topo.io.evil/p\" is not "
                                     "under an owned prefix"));
    assert_int_equal(topo_labeldiff_compute(&d, &rec, n, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "record key \"kubernetes.io/os\" is not under an owned "
                                     "prefix"));
    json_decref(n);
}

/* Many changes: the message stays within its bound and says how many were
 * left out; every change is still in the patch. */
static void test_labeldiff__message_bound(void **state)
{
    (void)state;
    enum { N = TOPO_LABELDIFF_MAX_KEYS };
    static char keys[N][80], vals[N][64];
    topo_kv want[N];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], P "level-with-a-rather-long-name-%02d", i);
        snprintf(vals[i], sizeof vals[i], "value-%02d-%.40s", i,
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        want[i] = (topo_kv){keys[i], vals[i]};
    }
    topo_labeldiff_input in = {&owned, 1, want, N, NULL, 0, REC, 0};
    json_t *n = node("{\"kubernetes.io/hostname\": \"n1\"}", NULL);
    topo_labeldiff *d = diff(&in, n);
    assert_false(topo_labeldiff_had_owned(d)); /* a first labelling */
    const char *msg = topo_labeldiff_message(d);
    assert_true(strlen(msg) <= TOPO_LABELDIFF_MESSAGE_MAX);
    assert_true(strlen(msg) > TOPO_LABELDIFF_MESSAGE_MAX - 120);
    const char *more = strstr(msg, ", and ");
    assert_non_null(more);
    unsigned shown = 0, left = 0;
    for (const char *p = msg; (p = strstr(p, "(none)")) != NULL; p++)
        shown++;
    assert_int_equal(sscanf(more, ", and %u more", &left), 1);
    assert_int_equal(shown + left, N);
    assert_int_equal(json_object_size(json_object_get(json_object_get(topo_labeldiff_patch(d),
                                                                      "metadata"), "labels")),
                     N);
    topo_labeldiff_free(d);
    json_decref(n);
}

/* Refused inputs name what is wrong; nothing is computed. */
static void test_labeldiff__invalid(void **state)
{
    (void)state;
    static const char *const empty_prefix[] = {""};
    static const topo_labeldiff_owned none = {NULL, 0, NULL, 0, 0};
    static const topo_labeldiff_owned bad_owned = {empty_prefix, 1, NULL, 0, 0};
    static topo_kv many[TOPO_LABELDIFF_MAX_KEYS + 1];
    static char many_keys[TOPO_LABELDIFF_MAX_KEYS + 1][40];
    for (int i = 0; i <= TOPO_LABELDIFF_MAX_KEYS; i++) {
        snprintf(many_keys[i], sizeof many_keys[i], P "k%d", i);
        many[i] = (topo_kv){many_keys[i], "v"};
    }
    topo_kv not_owned[] = {{"kubernetes.io/hostname", "n1"}};
    topo_kv bad_value[] = {{P "leaf", "bad value"}};
    topo_kv bad_key[] = {{P "bad key", "v"}};
    topo_kv twice[] = {{P "leaf", "a"}, {P "leaf", "b"}};
    topo_kv null_value[] = {{P "leaf", NULL}};
    topo_kv ann_record[] = {{REC, "x"}};
    topo_kv ann_twice[] = {{P "p", "x"}, {P "p", "y"}};
    topo_kv ann_utf8[] = {{P "p", "\xff\xfe"}};
    struct {
        topo_labeldiff_input in;
        const char *node;
        const char *want;
    } cases[] = {
        {{&none, 1, NULL, 0, NULL, 0, REC, 0}, NULL, "no owned prefix or key"},
        {{&bad_owned, 1, NULL, 0, NULL, 0, REC, 0}, NULL,
         "owned prefix 0 \"\": must not be empty"},
        {{&owned, 1, not_owned, 1, NULL, 0, REC, 0}, NULL,
         "\"kubernetes.io/hostname\" is not owned"},
        {{&owned, 1, bad_value, 1, NULL, 0, REC, 0}, NULL, "value \"bad value\""},
        {{&owned, 1, bad_key, 1, NULL, 0, REC, 0}, NULL, "labels[0]: key \"" P "bad key\""},
        {{&owned, 1, twice, 2, NULL, 0, REC, 0}, NULL, "given twice"},
        {{&owned, 1, null_value, 1, NULL, 0, REC, 0}, NULL, "key and value required"},
        {{&owned, 1, many, TOPO_LABELDIFF_MAX_KEYS + 1, NULL, 0, REC, 0}, NULL, "more than 64"},
        {{&owned, 1, NULL, 0, ann_record, 1, REC, 0}, NULL, "is the record key"},
        {{&owned, 1, NULL, 0, ann_twice, 2, REC, 0}, NULL, "annotations[1]: key \"" P "p\" given"},
        {{&owned, 1, NULL, 0, ann_utf8, 1, REC, 0}, NULL, "not UTF-8"},
        {{&owned, 1, NULL, 0, NULL, 0, "bad key/x/y", 0}, NULL, "record key"},
        {{&owned, 1, NULL, 0, NULL, 0, REC, 0}, "{\"metadata\": {}}", "metadata.name is missing"},
        {{&owned, 1, NULL, 0, NULL, 0, REC, 0}, "{}", "metadata.name is missing"},
        {{&owned, 1, NULL, 0, NULL, 0, REC, 0}, "{\"metadata\": {\"name\": \"n\", \"labels\": []}}",
         "n: node: metadata.labels is not an object"},
        {{&owned, 1, NULL, 0, NULL, 0, REC, 0},
         "{\"metadata\": {\"name\": \"n\", \"annotations\": {\"a\": 1}}}",
         "metadata.annotations.a is not a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        topo_err err = TOPO_ERR_INIT;
        topo_labeldiff *d = (topo_labeldiff *)1;
        json_t *n = cases[i].node ? parse(cases[i].node) : node(NULL, NULL);
        assert_int_equal(topo_labeldiff_compute(&d, &cases[i].in, n, &err), TOPO_EINVALID);
        assert_null(d);
        if (strstr(err.text, cases[i].want) == NULL)
            fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, err.text, cases[i].want);
        json_decref(n);
    }
    topo_labeldiff *d = NULL;
    assert_int_equal(topo_labeldiff_compute(&d, NULL, NULL, NULL), TOPO_EINVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labeldiff__converged),
        cmocka_unit_test(test_labeldiff__changed_new_stale),
        cmocka_unit_test(test_labeldiff__drift),
        cmocka_unit_test(test_labeldiff__no_record_no_drift),
        cmocka_unit_test(test_labeldiff__adopt_record_only),
        cmocka_unit_test(test_labeldiff__held),
        cmocka_unit_test(test_labeldiff__authoritative_empty),
        cmocka_unit_test(test_labeldiff__annotations),
        cmocka_unit_test(test_labeldiff__extra_owned),
        cmocka_unit_test(test_labeldiff__foreign_labels_kept),
        cmocka_unit_test(test_labeldiff__message_bound),
        cmocka_unit_test(test_labeldiff__invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
