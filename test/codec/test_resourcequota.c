/* Tests for lib/codec/resourcequota.c: which quota names limit pods, the
 * room per pod resource of realistic quotas (fixtures/resourcequotas), and
 * hostile objects (bad quantities, wrong types, missing fields, 10,000
 * entries). */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/codec.h"
#include "topo/resourcequota.h"

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", je.text, text);
    return v;
}

/* The room of res, or fails when absent. */
static int64_t room_of(const topo_resourcequota *q, const char *res)
{
    for (size_t i = 0; i < q->nroom; i++)
        if (strcmp(q->room[i].name, res) == 0)
            return q->room[i].amount;
    fail_msg("%s/%s: no room for %s", q->namespace_, q->name, res);
    return 0;
}

static int has_room(const topo_resourcequota *q, const char *res)
{
    for (size_t i = 0; i < q->nroom; i++)
        if (strcmp(q->room[i].name, res) == 0)
            return 1;
    return 0;
}

static void decode_ok(topo_resourcequota *q, const char *text, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *v = parse(text);
    int rc = topo_resourcequota_decode(q, v, pool, &err);
    json_decref(v);
    assert_int_equal(rc, 0);
}

static void test_pod_resource_names(void **state)
{
    (void)state;
    static const struct {
        const char *quota, *pod;
    } cases[] = {
        {"pods", "pods"},
        {"count/pods", "pods"},
        {"cpu", "cpu"},
        {"memory", "memory"},
        {"ephemeral-storage", "ephemeral-storage"},
        {"requests.cpu", "cpu"},
        {"requests.memory", "memory"},
        {"requests.ephemeral-storage", "ephemeral-storage"},
        {"requests.nvidia.com/gpu", "nvidia.com/gpu"},
        {"requests.example.com/Fancy_res.1", "example.com/Fancy_res.1"},
        {"requests.hugepages-2Mi", "hugepages-2Mi"},
        /* not what a pod requests */
        {"limits.cpu", NULL},
        {"limits.nvidia.com/gpu", NULL},
        {"requests.storage", NULL},
        {"requests.pods", NULL},
        {"persistentvolumeclaims", NULL},
        {"services", NULL},
        {"count/jobs.batch", NULL},
        {"nvidia.com/gpu", NULL}, /* an extended resource only with requests. */
        {"requests.hugepages-", NULL},
        {"requests.kubernetes.io/foo", NULL},
        {"requests.node.kubernetes.io/foo", NULL},
        {"requests.requests.example.com/x", NULL},
        {"requests.Example.com/x", NULL},
        {"requests./x", NULL},
        {"requests.example.com/", NULL},
        {"requests.a/b/c", NULL},
        {"requests.example.com/x y", NULL},
        {"requests.", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = topo_resourcequota_pod_resource(cases[i].quota);
        if (cases[i].pod == NULL) {
            if (got != NULL)
                fail_msg("%s: %s, expected none", cases[i].quota, got);
        } else if (got == NULL || strcmp(got, cases[i].pod) != 0) {
            fail_msg("%s: %s, expected %s", cases[i].quota, got ? got : "(none)", cases[i].pod);
        }
    }
    assert_null(topo_resourcequota_pod_resource(NULL));
}

/* The kubectl dump: every quota as the webhook must count it. */
static void test_fixture(void **state)
{
    (void)state;
    const char *src = getenv("TOPO_SOURCE_DIR");
    char path[4096], *text = NULL;
    size_t len = 0;
    json_t *list = NULL, *item;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    size_t i;
    assert_non_null(src);
    assert_non_null(pool);
    snprintf(path, sizeof path, "%s/fixtures/resourcequotas/kubectl-resourcequotas.json", src);
    assert_int_equal(topo_codec_read_file(&text, &len, path, 1u << 20, &err), 0);
    assert_int_equal(topo_codec_json_parse(&list, text, len, path, &err), 0);
    assert_int_equal(json_array_size(json_object_get(list, "items")), 4);
    json_array_foreach(json_object_get(list, "items"), i, item) {
        topo_resourcequota q;
        assert_int_equal(topo_resourcequota_decode(&q, item, pool, &err), 0);
        assert_int_equal(q.nproblems, 0);
        for (size_t j = 1; j < q.nroom; j++)
            assert_true(strcmp(q.room[j - 1].name, q.room[j].name) < 0);
        if (strcmp(q.name, "compute") == 0) {
            assert_string_equal(q.namespace_, "team-a");
            assert_int_equal(q.nroom, 4); /* limits.cpu is not for pods */
            assert_int_equal(room_of(&q, "cpu"), 64000 - 12500);
            assert_int_equal(room_of(&q, "memory"), (int64_t)(512 - 96) << 30);
            assert_int_equal(room_of(&q, "nvidia.com/gpu"), 8);
            /* pods 50-7 and count/pods 40-7: both are enforced */
            assert_int_equal(room_of(&q, "pods"), 33);
        } else if (strcmp(q.name, "gpu-cap") == 0) {
            assert_int_equal(q.nroom, 2);
            assert_int_equal(room_of(&q, "nvidia.com/gpu"), 4);
            assert_int_equal(room_of(&q, "pods"), 93);
        } else if (strcmp(q.name, "new-quota") == 0) {
            /* no status yet: spec.hard, nothing used; services skipped */
            assert_string_equal(q.namespace_, "team-b");
            assert_int_equal(q.nroom, 3);
            assert_int_equal(room_of(&q, "cpu"), 8000);
            assert_int_equal(room_of(&q, "memory"), (int64_t)32 << 30);
            assert_int_equal(room_of(&q, "pods"), 10);
        } else {
            assert_string_equal(q.name, "over");
            assert_int_equal(q.nroom, 2);
            assert_int_equal(room_of(&q, "nvidia.com/gpu"), -2); /* over: negative */
            assert_int_equal(room_of(&q, "hugepages-2Mi"), 512 << 20);
        }
    }
    json_decref(list);
    free(text);
    topo_pool_free(pool);
}

/* status.hard wins over spec.hard (the API server admits against it, and a
 * spec changed a moment ago is not enforced yet); a resource status.used
 * lacks counts as nothing used; aliases give the least room. */
static void test_status_and_aliases(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_resourcequota q;
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},"
              "\"spec\":{\"hard\":{\"cpu\":\"100\",\"requests.cpu\":\"100\"}},"
              "\"status\":{\"hard\":{\"cpu\":\"4\",\"requests.cpu\":\"6\",\"pods\":\"3\"},"
              "\"used\":{\"cpu\":\"1500m\",\"requests.cpu\":\"1\"}}}",
              pool);
    assert_int_equal(q.nproblems, 0);
    assert_int_equal(q.nroom, 2);
    assert_int_equal(room_of(&q, "cpu"), 2500); /* min(4000-1500, 6000-1000) */
    assert_int_equal(room_of(&q, "pods"), 3);
    /* an empty quota and one without spec or status: no room entries */
    decode_ok(&q, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"spec\":{}}", pool);
    assert_int_equal(q.nroom, 0);
    decode_ok(&q, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"}}", pool);
    assert_int_equal(q.nroom, 0);
    assert_int_equal(q.nproblems, 0);
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"spec\":{\"hard\":{}},"
              "\"status\":{\"hard\":null,\"used\":null}}",
              pool);
    assert_int_equal(q.nroom, 0);
    assert_int_equal(q.nproblems, 0);
    topo_pool_free(pool);
}

static void test_missing_metadata(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{}",
        "[]",
        "null",
        "\"quota\"",
        "{\"metadata\":{\"name\":\"q\"}}",
        "{\"metadata\":{\"namespace\":\"ns\"}}",
        "{\"metadata\":{\"name\":\"\",\"namespace\":\"ns\"}}",
        "{\"metadata\":{\"name\":7,\"namespace\":\"ns\"}}",
        "{\"metadata\":{\"name\":\"q\",\"namespace\":[\"ns\"]}}",
        "{\"metadata\":\"q\",\"spec\":{\"hard\":{\"pods\":\"1\"}}}",
    };
    topo_pool *pool = topo_pool_create();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        topo_resourcequota q;
        topo_err err = TOPO_ERR_INIT;
        json_t *v = json_loads(bad[i], JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        assert_int_equal(topo_resourcequota_decode(&q, v, pool, &err), TOPO_EINVALID);
        assert_non_null(strstr(err.text, "metadata."));
        json_decref(v);
    }
    /* 254 bytes: longer than any object name */
    char name[300], text[512];
    memset(name, 'a', 254);
    name[254] = '\0';
    snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"%s\"}}", name);
    {
        topo_resourcequota q;
        topo_err err = TOPO_ERR_INIT;
        json_t *v = parse(text);
        assert_int_equal(topo_resourcequota_decode(&q, v, pool, &err), TOPO_EINVALID);
        json_decref(v);
        name[253] = '\0';
        snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"%s\"}}", name);
        v = parse(text);
        assert_int_equal(topo_resourcequota_decode(&q, v, pool, &err), 0);
        json_decref(v);
    }
    topo_pool_free(pool);
}

/* Bad values: that entry is ignored (it limits nothing) and named; the
 * others still count. */
static void test_bad_entries(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_resourcequota q;
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"status\":{"
              "\"hard\":{\"requests.cpu\":\"1e30\",\"requests.memory\":7,"
              "\"requests.a.com/x\":\"ten\",\"requests.b.com/y\":\"5\",\"pods\":\"10\","
              "\"requests.c.com/z\":\"4\",\"requests.d.com/w\":null,\"limits.cpu\":\"junk\"},"
              "\"used\":{\"pods\":{\"n\":1},\"requests.c.com/z\":\"-3\","
              "\"requests.b.com/y\":\"\"}}}",
              pool);
    /* limits.cpu is junk but not ours: no problem for it */
    assert_int_equal(q.nproblems, 6);
    assert_int_equal(q.nroom, 1);
    assert_int_equal(room_of(&q, "c.com/z"), 7); /* 4 - (-3) */
    int named_cpu = 0, named_pods = 0, named_memory = 0;
    for (size_t i = 0; i < q.nproblems; i++) {
        assert_non_null(q.problems[i]);
        named_cpu += strncmp(q.problems[i], "status.hard[requests.cpu]: ", 27) == 0;
        named_memory +=
            strcmp(q.problems[i], "status.hard[requests.memory]: not a quantity string") == 0;
        named_pods += strcmp(q.problems[i], "status.used[pods]: not a quantity string") == 0;
    }
    assert_int_equal(named_cpu + named_memory + named_pods, 3);

    /* used that is no map: nothing can be counted */
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"status\":{"
              "\"hard\":{\"pods\":\"10\"},\"used\":[\"pods\"]}}",
              pool);
    assert_int_equal(q.nroom, 0);
    assert_int_equal(q.nproblems, 1);
    assert_string_equal(q.problems[0], "status.used[]: not an object");

    /* status.hard that is no map: spec.hard as if not computed, named */
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"spec\":{\"hard\":"
              "{\"pods\":\"4\"}},\"status\":{\"hard\":\"pods=10\",\"used\":{\"pods\":\"1\"}}}",
              pool);
    assert_int_equal(q.nproblems, 1);
    assert_int_equal(room_of(&q, "pods"), 4);
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"spec\":{\"hard\":5},"
              "\"status\":7}",
              pool);
    assert_int_equal(q.nproblems, 2);
    assert_int_equal(q.nroom, 0);
    topo_pool_free(pool);
}

/* Amounts at the ends of int64: parsed or refused, never wrapped. */
static void test_huge_quantities(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    topo_resourcequota q;
    decode_ok(&q,
              "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"status\":{"
              "\"hard\":{\"pods\":\"9223372036854775807\",\"memory\":\"8Ei\","
              "\"requests.x.io/a\":\"-9223372036854775807\",\"cpu\":\"9223372036854775807\","
              "\"requests.x.io/b\":\"1\"},"
              "\"used\":{\"pods\":\"-5\",\"requests.x.io/a\":\"9223372036854775807\","
              "\"requests.x.io/b\":\"99999999999999999999999\"}}}",
              pool);
    assert_int_equal(room_of(&q, "pods"), INT64_MAX);       /* saturated, not wrapped */
    assert_int_equal(room_of(&q, "x.io/a"), INT64_MIN);     /* saturated the other way */
    assert_false(has_room(&q, "cpu"));    /* 2^63-1 cores in millicores overflow: ignored */
    assert_false(has_room(&q, "memory")); /* 8Ei = 2^63 bytes: overflow */
    assert_false(has_room(&q, "x.io/b")); /* used unreadable */
    assert_int_equal(q.nproblems, 3);
    topo_pool_free(pool);
}

/* 10,000 entries (and as many bad ones): all counted, sorted, fast; the
 * problems are counted but only the first few kept; a long key is cut in
 * the message. */
static void test_many_entries(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    json_t *hard = json_object(), *used = json_object(), *obj;
    topo_resourcequota q;
    topo_err err = TOPO_ERR_INIT;
    char key[128], val[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof key, "requests.example.com/r%05d", 9999 - i);
        snprintf(val, sizeof val, "%d", i + 10);
        json_object_set_new(hard, key, json_string(val));
        snprintf(val, sizeof val, "%d", i);
        json_object_set_new(used, key, json_string(val));
        snprintf(key, sizeof key, "requests.example.com/bad%05d", i);
        json_object_set_new(hard, key, json_string("1Qi"));
    }
    char longkey[2048];
    snprintf(longkey, sizeof longkey, "requests.example.com/");
    memset(longkey + strlen(longkey), 'k', 1000);
    longkey[1021] = '\0';
    json_object_set_new(hard, longkey, json_string("1"));
    obj = json_pack("{s:{s:s,s:s},s:{s:o,s:o}}", "metadata", "name", "big", "namespace", "ns",
                    "status", "hard", hard, "used", used);
    assert_non_null(obj);
    assert_int_equal(topo_resourcequota_decode(&q, obj, pool, &err), 0);
    assert_int_equal(q.nroom, 10000); /* the long key is not a resource name: skipped */
    for (size_t i = 0; i < q.nroom; i++) {
        snprintf(key, sizeof key, "example.com/r%05zu", i);
        assert_string_equal(q.room[i].name, key);
        assert_int_equal(q.room[i].amount, 10);
    }
    assert_int_equal(q.nproblems, 10000);
    for (size_t i = 0; i < TOPO_RESOURCEQUOTA_PROBLEMS_MAX; i++)
        assert_non_null(strstr(q.problems[i], "requests.example.com/bad"));
    json_decref(obj);

    /* a bad entry with a long key: the message quotes 64 bytes of it */
    hard = json_object();
    snprintf(longkey, sizeof longkey, "requests.example.com/");
    memset(longkey + strlen(longkey), 'k', 200);
    longkey[221] = '\0';
    json_object_set_new(hard, longkey, json_string("x"));
    obj = json_pack("{s:{s:s,s:s},s:{s:o}}", "metadata", "name", "q", "namespace", "ns", "spec",
                    "hard", hard);
    assert_int_equal(topo_resourcequota_decode(&q, obj, pool, &err), 0);
    assert_int_equal(q.nproblems, 1);
    assert_true(strlen(q.problems[0]) < 200);
    json_decref(obj);
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_resource_names), cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_status_and_aliases), cmocka_unit_test(test_missing_metadata),
        cmocka_unit_test(test_bad_entries),        cmocka_unit_test(test_huge_quantities),
        cmocka_unit_test(test_many_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
