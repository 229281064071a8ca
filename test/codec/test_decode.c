/* Tests for lib/codec/decode: resource maps, string maps, taints,
 * tolerations and typed getters, with path-naming errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/codec.h"
#include "topo/decode.h"

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

static json_t *yaml(const char *text)
{
    json_t *v = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_codec_yaml_parse(&v, text, strlen(text), "t.yaml", &err) != 0)
        fail_msg("fixture YAML does not parse: %s", err.text);
    return v;
}

/* --- resources ------------------------------------------------------------------ */

typedef struct res_case {
    const char *input; /* YAML map */
    int code;
    const char *expected; /* "name=amount,..." in input order, or the error text */
} res_case;

static const res_case res_cases[] = {
    {"{cpu: 500m, nvidia.com/gpu: 8}", 0, "cpu=500,nvidia.com/gpu=8"},
    {"{cpu: 224, memory: 2Ti, pods: 110}", 0, "cpu=224000,memory=2199023255552,pods=110"},
    {"{cpu: \"1.5\", memory: 1Gi}", 0, "cpu=1500,memory=1073741824"},
    {"{cpu: 0.5, ephemeral-storage: 1.5}", 0, "cpu=500,ephemeral-storage=2"},
    {"{memory: 1e3, cpu: 2e-3}", 0, "memory=1000,cpu=2"},
    {"{nvidia.com/gpu: \"0\"}", 0, "nvidia.com/gpu=0"},
    {"{}", 0, ""},
    {"null", 0, ""},
    {"{cpu: abc}", TOPO_EINVALID, "res.cpu: invalid quantity \"abc\""},
    {"{cpu: \"\"}", TOPO_EINVALID, "res.cpu: invalid quantity \"\""},
    {"{memory: 12XB}", TOPO_EINVALID, "res.memory: invalid quantity \"12XB\""},
    {"{cpu: -1}", TOPO_EINVALID, "res.cpu: quantity \"-1\" must not be negative"},
    {"{nvidia.com/gpu: true}", TOPO_EINVALID, "res.nvidia.com/gpu: expected a quantity, got a boolean"},
    {"{cpu: [1]}", TOPO_EINVALID, "res.cpu: expected a quantity, got an array"},
    {"[cpu]", TOPO_EINVALID, "res: expected an object, got an array"},
    {"\"8\"", TOPO_EINVALID, "res: expected an object, got a string"},
};

static void test_decode__resources(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(res_cases) / sizeof(res_cases[0]); i++) {
        const res_case *c = &res_cases[i];
        json_t *v = yaml(c->input);
        topo_resource *r = NULL;
        size_t n = 99;
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_decode_resources(&r, &n, v, "res", pool, &err);
        if (rc != c->code)
            fail_msg("case %zu (%s): rc %d (%s), want %d", i, c->input, rc, err.text, c->code);
        if (rc == 0) {
            char got[256] = "";
            for (size_t k = 0; k < n; k++) {
                char one[96];
                snprintf(one, sizeof(one), "%s%s=%lld", k ? "," : "", r[k].name,
                         (long long)r[k].amount);
                strcat(got, one);
            }
            if (strcmp(got, c->expected) != 0)
                fail_msg("case %zu (%s): got %s, want %s", i, c->input, got, c->expected);
        } else if (strcmp(err.text, c->expected) != 0) {
            fail_msg("case %zu (%s): message \"%s\", want \"%s\"", i, c->input, err.text,
                     c->expected);
        }
        json_decref(v);
    }
}

/* The strings do not borrow from the JSON tree. */
static void test_decode__copies_strings(void **state)
{
    (void)state;
    json_t *v = yaml("{a: b, c: d}");
    topo_kv *kv = NULL;
    size_t n = 0;
    assert_int_equal(topo_decode_kv(&kv, &n, v, "labels", pool, NULL), 0);
    json_decref(v);
    assert_int_equal(n, 2);
    assert_string_equal(kv[0].key, "a");
    assert_string_equal(kv[0].value, "b");
    assert_string_equal(kv[1].key, "c");
    assert_string_equal(kv[1].value, "d");
}

/* --- string maps, taints, tolerations: error table --------------------------------- */

typedef enum { KV, TAINTS, TOLERATIONS } kind;

typedef struct shape_case {
    kind what;
    const char *input;
    int code;
    const char *expected; /* count as text ("2") on success, else the message */
} shape_case;

static const shape_case shape_cases[] = {
    {KV, "{topology.topo.io/rack: r1, kubernetes.io/hostname: n1}", 0, "2"},
    {KV, "{}", 0, "0"},
    {KV, "{a: 1}", TOPO_EINVALID, "f.a: expected a string, got an integer (quote the value)"},
    {KV, "{a: true}", TOPO_EINVALID, "f.a: expected a string, got a boolean (quote the value)"},
    {KV, "{a: {b: c}}", TOPO_EINVALID, "f.a: expected a string, got an object"},
    {KV, "[a]", TOPO_EINVALID, "f: expected an object, got an array"},
    {TAINTS, "[{key: k, value: v, effect: NoSchedule}, {key: g, effect: NoExecute, timeAdded: x}]", 0, "2"},
    {TAINTS, "[]", 0, "0"},
    {TAINTS, "{key: k}", TOPO_EINVALID, "f: expected an array, got an object"},
    {TAINTS, "[{key: k, effect: NoSchedule}, 3]", TOPO_EINVALID, "f[1]: expected an object, got an integer"},
    {TAINTS, "[{effect: NoSchedule}]", TOPO_EINVALID, "f[0].key: required"},
    {TAINTS, "[{key: \"\", effect: NoSchedule}]", TOPO_EINVALID, "f[0].key: must not be empty"},
    {TAINTS, "[{key: k}]", TOPO_EINVALID, "f[0].effect: required"},
    {TAINTS, "[{key: k, effect: Sometimes}]", TOPO_EINVALID,
     "f[0].effect: unsupported value \"Sometimes\" (NoSchedule, PreferNoSchedule, NoExecute)"},
    {TAINTS, "[{key: k, value: 3, effect: NoSchedule}]", TOPO_EINVALID, "f[0].value: expected a string, got an integer"},
    {TOLERATIONS, "[{key: k, operator: Equal, value: v, effect: NoSchedule}, {operator: Exists}, "
                  "{key: g, operator: Exists, effect: NoExecute, tolerationSeconds: 30}, {key: x, value: y}]",
     0, "4"},
    {TOLERATIONS, "[{key: k, operator: Like}]", TOPO_EINVALID,
     "f[0].operator: unsupported value \"Like\" (Equal, Exists)"},
    {TOLERATIONS, "[{key: k, operator: Exists, value: v}]", TOPO_EINVALID,
     "f[0].value: must be empty when operator is Exists"},
    {TOLERATIONS, "[{value: v}]", TOPO_EINVALID, "f[0].operator: must be Exists when key is empty"},
    {TOLERATIONS, "[{key: k, effect: Never}]", TOPO_EINVALID,
     "f[0].effect: unsupported value \"Never\" (NoSchedule, PreferNoSchedule, NoExecute)"},
    {TOLERATIONS, "[{key: k, tolerationSeconds: soon}]", TOPO_EINVALID,
     "f[0].tolerationSeconds: expected an integer, got a string"},
};

static void test_decode__shapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(shape_cases) / sizeof(shape_cases[0]); i++) {
        const shape_case *c = &shape_cases[i];
        json_t *v = yaml(c->input);
        size_t n = 99;
        topo_err err = TOPO_ERR_INIT;
        int rc;
        if (c->what == KV) {
            topo_kv *out;
            rc = topo_decode_kv(&out, &n, v, "f", pool, &err);
        } else if (c->what == TAINTS) {
            topo_taint *out;
            rc = topo_decode_taints(&out, &n, v, "f", pool, &err);
        } else {
            topo_toleration *out;
            rc = topo_decode_tolerations(&out, &n, v, "f", pool, &err);
        }
        if (rc != c->code)
            fail_msg("case %zu (%s): rc %d (%s), want %d", i, c->input, rc, err.text, c->code);
        if (rc == 0) {
            char got[16];
            snprintf(got, sizeof(got), "%zu", n);
            if (strcmp(got, c->expected) != 0)
                fail_msg("case %zu: %s entries, want %s", i, got, c->expected);
        } else if (strcmp(err.text, c->expected) != 0) {
            fail_msg("case %zu (%s): message \"%s\", want \"%s\"", i, c->input, err.text,
                     c->expected);
        }
        json_decref(v);
    }
}

static void test_decode__toleration_defaults(void **state)
{
    (void)state;
    json_t *v = yaml("[{key: k, value: v}, {operator: Exists}]");
    topo_toleration *t = NULL;
    size_t n = 0;
    assert_int_equal(topo_decode_tolerations(&t, &n, v, "tolerations", pool, NULL), 0);
    assert_int_equal(n, 2);
    assert_string_equal(t[0].op, "Equal");
    assert_string_equal(t[0].effect, "");
    assert_string_equal(t[1].key, "");
    assert_string_equal(t[1].op, "Exists");
    json_decref(v);

    v = yaml("[{key: dedicated, value: gpu, effect: NoSchedule}]");
    topo_taint *taints = NULL;
    assert_int_equal(topo_decode_taints(&taints, &n, v, "spec.taints", pool, NULL), 0);
    assert_string_equal(taints[0].key, "dedicated");
    assert_string_equal(taints[0].value, "gpu");
    assert_string_equal(taints[0].effect, "NoSchedule");
    json_decref(v);
}

/* --- typed getters ------------------------------------------------------------------ */

static void test_decode__getters(void **state)
{
    (void)state;
    json_t *v = yaml("{name: n1, count: 4, ready: true, real: 2.0, frac: 2.5, obj: {}, nul: null}");
    const char *s = NULL;
    int64_t i = 0;
    int b = 0;
    const json_t *m = NULL;
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(topo_decode_string(&s, v, "name", "items[0]", 1, pool, &err), 0);
    assert_string_equal(s, "n1");
    assert_ptr_not_equal(s, json_string_value(json_object_get(v, "name")));
    /* No pool: borrowed from the tree (the sources read so). */
    s = NULL;
    assert_int_equal(topo_decode_string(&s, v, "name", "items[0]", 1, NULL, &err), 0);
    assert_ptr_equal(s, json_string_value(json_object_get(v, "name")));
    assert_int_equal(topo_decode_int(&i, v, "count", "items[0]", 1, &err), 0);
    assert_int_equal(i, 4);
    assert_int_equal(topo_decode_int(&i, v, "real", "items[0]", 1, &err), 0);
    assert_int_equal(i, 2);
    assert_int_equal(topo_decode_bool(&b, v, "ready", "items[0]", 1, &err), 0);
    assert_true(b);
    assert_int_equal(topo_decode_member(&m, v, "obj", "items[0]", JSON_OBJECT, 1, &err), 0);
    assert_non_null(m);

    /* Optional and absent (or null): untouched, 0. */
    s = "keep";
    assert_int_equal(topo_decode_string(&s, v, "missing", "items[0]", 0, pool, &err), 0);
    assert_string_equal(s, "keep");
    assert_int_equal(topo_decode_string(&s, v, "nul", "items[0]", 0, pool, &err), 0);
    assert_string_equal(s, "keep");

    assert_int_equal(topo_decode_string(&s, v, "missing", "items[0]", 1, pool, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "items[0].missing: required");
    assert_int_equal(topo_decode_string(&s, v, "count", "items[0]", 1, pool, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "items[0].count: expected a string, got an integer");
    assert_int_equal(topo_decode_int(&i, v, "frac", "items[0]", 1, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "items[0].frac: expected an integer, got a number");
    assert_int_equal(topo_decode_bool(&b, v, "name", "items[0]", 1, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "items[0].name: expected true or false, got a string");
    assert_int_equal(topo_decode_member(&m, v, "obj", "items[0]", JSON_ARRAY, 1, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "items[0].obj: expected an array, got an object");
    json_decref(v);

    v = yaml("[1]");
    assert_int_equal(topo_decode_string(&s, v, "name", "items[0]", 1, pool, &err),
                     TOPO_EINVALID);
    assert_string_equal(err.text, "items[0]: expected an object, got an array");
    json_decref(v);

    char buf[TOPO_DECODE_PATH_MAX];
    assert_string_equal(topo_decode_path_key(buf, sizeof(buf), "", "items"), "items");
    assert_string_equal(topo_decode_path_key(buf, sizeof(buf), "a.b", "c"), "a.b.c");
    assert_string_equal(topo_decode_path_index(buf, sizeof(buf), "items", 12), "items[12]");
}

/* RFC 3339 as Kubernetes writes metadata.creationTimestamp, and what it must
 * refuse. Expected values from `date -u -d ... +%s`. */
static void test_decode__time(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t want; /* -1: refused */
    } cases[] = {
        {"1970-01-01T00:00:00Z", 0},
        {"2024-05-01T12:00:00Z", 1714564800},
        {"2024-02-29T23:59:59Z", 1709251199},
        {"2024-05-01T12:00:00.123456Z", 1714564800},
        {"2024-05-01T14:30:00+02:30", 1714564800},
        {"2024-05-01T09:00:00-03:00", 1714564800},
        {"2024-05-01t12:00:00z", 1714564800},
        {"2023-02-29T00:00:00Z", -1},
        {"2024-05-01 12:00:00Z", -1},
        {"2024-05-01T12:00:00", -1},
        {"2024-05-01T24:00:00Z", -1},
        {"2024-13-01T00:00:00Z", -1},
        {"1969-12-31T23:59:59Z", -1},
        {"2024-05-01T12:00:00.Z", -1},
        {"2024-05-01T12:00:00Zjunk", -1},
        {"", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t t = -2;
        int rc = topo_decode_parse_time(&t, cases[i].text);
        if (cases[i].want < 0) {
            if (rc != TOPO_EINVALID)
                fail_msg("%s: accepted as %lld", cases[i].text, (long long)t);
        } else if (rc != 0 || t != cases[i].want) {
            fail_msg("%s: rc %d, %lld, want %lld", cases[i].text, rc, (long long)t,
                     (long long)cases[i].want);
        }
    }
    /* Traces' wall times: a space for the T, the zone optional (UTC without). */
    static const struct {
        const char *text;
        long long want;
    } wall[] = {
        {"2024-05-01 12:00:00", 1714564800},
        {"2024-05-01T12:00:00", 1714564800},
        {"2023-03-01 00:18:22+08:00", 1677601102},
        {"2024-05-01 12:00:00Z", 1714564800},
        {"2024-05-01  12:00:00", -1},
        {"2024-05-01 12:00", -1},
        {"2024-05-01 12:00:00 ", -1},
        {"None", -1},
    };
    for (size_t i = 0; i < sizeof(wall) / sizeof(wall[0]); i++) {
        int64_t w = -2;
        int rc = topo_decode_parse_wall_time(&w, wall[i].text);
        if (wall[i].want < 0 ? rc != TOPO_EINVALID : rc != 0 || w != wall[i].want)
            fail_msg("%s: rc %d, %lld, want %lld", wall[i].text, rc, (long long)w, wall[i].want);
    }
    topo_err err = TOPO_ERR_INIT;
    int64_t t = 7;
    json_t *v = yaml("{creationTimestamp: 2024-05-01T12:00:00Z, bad: yesterday, n: 3}");
    assert_int_equal(topo_decode_time(&t, v, "creationTimestamp", "metadata", 1, &err), 0);
    assert_int_equal(t, 1714564800);
    assert_int_equal(topo_decode_time(&t, v, "bad", "metadata", 0, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "metadata.bad: \"yesterday\" is not an RFC 3339 time "
                                  "(YYYY-MM-DDTHH:MM:SSZ)");
    assert_int_equal(topo_decode_time(&t, v, "n", "metadata", 0, &err), TOPO_EINVALID);
    assert_string_equal(err.text, "metadata.n: expected an RFC 3339 time, got an integer");
    t = 7;
    assert_int_equal(topo_decode_time(&t, v, "absent", "metadata", 0, &err), 0);
    assert_int_equal(t, 7);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode__resources),
        cmocka_unit_test(test_decode__copies_strings),
        cmocka_unit_test(test_decode__shapes),
        cmocka_unit_test(test_decode__toleration_defaults),
        cmocka_unit_test(test_decode__getters),
        cmocka_unit_test(test_decode__time),
    };
    return cmocka_run_group_tests_name("inventory.decode", tests, setup, teardown);
}
