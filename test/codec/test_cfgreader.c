/* Tests for lib/codec/cfgreader: the one reader context's typed field
 * readers (enum, typed member, duration, string lists, names, int32) and
 * their messages, with the
 * file:line:column the codec's marks give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/cfgreader.h"
#include "topo/codec.h"
#include "topo/decode.h"

static const char doc[] = "policy: reject\n"
                          "mode: deny\n"
                          "levels: 8\n"
                          "list: [a, b]\n"
                          "ttl: 25h\n"
                          "short: 500ms\n"
                          "n: ~\n"
                          "names: [x, '', 3]\n"
                          "empty: []\n"
                          "blank: ''\n"
                          "big: 3000000000\n"
                          "whole: 4.0\n"
                          "half: 2.5\n";

typedef struct fixture {
    json_t *root;
    topo_codec_marks *marks;
    topo_err err;
    topo_cfg c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->err = (topo_err)TOPO_ERR_INIT;
    if (topo_codec_yaml_parse_marks(&f->root, &f->marks, doc, strlen(doc), "c.yaml", &f->err) !=
        0)
        return -1;
    f->c = (topo_cfg){.src = "c.yaml", .marks = f->marks, .err = &f->err};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    topo_codec_marks_free(f->marks);
    json_decref(f->root);
    free(f);
    return 0;
}

static const char *const policies[] = {"gate", "deny", "ignore", NULL};

static void test_cfgreader__enum(void **state)
{
    fixture *f = *state;
    int i = -1;
    assert_int_equal(topo_cfg_enum(&f->c, &i, f->root, "mode", "", policies, "a policy"), 0);
    assert_int_equal(i, 1);
    i = 7;
    assert_int_equal(topo_cfg_enum(&f->c, &i, f->root, "absent", "", policies, "a policy"), 0);
    assert_int_equal(i, 7); /* absent: the caller's default stays */
    assert_int_equal(topo_cfg_enum(&f->c, &i, f->root, "n", "", policies, "a policy"), 0);
    assert_int_equal(i, 7); /* null is absent */
    assert_int_equal(topo_cfg_enum(&f->c, &i, f->root, "policy", "", policies, "a policy"),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text,
                        "c.yaml:1:9: policy: \"reject\" is not a policy (expected gate, deny or "
                        "ignore)");
    assert_int_equal(f->err.line, 1);
    assert_int_equal(f->err.column, 9);
    assert_int_equal(topo_cfg_enum(&f->c, &i, f->root, "levels", "", policies, "a policy"),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:3:9: levels: expected a string, got an integer");
}

static void test_cfgreader__member(void **state)
{
    fixture *f = *state;
    const json_t *v = (const json_t *)1;
    assert_int_equal(topo_cfg_member(&f->c, &v, f->root, "list", "", JSON_ARRAY, "a list", 1),
                     0);
    assert_int_equal(json_array_size(v), 2);
    assert_int_equal(topo_cfg_member(&f->c, &v, f->root, "n", "", JSON_ARRAY, "a list", 0), 0);
    assert_null(v);
    assert_int_equal(topo_cfg_member(&f->c, &v, f->root, "n", "top", JSON_ARRAY, "a list", 1),
                     TOPO_EINVALID);
    /* jansson's null is one shared value without a mark: the map's position */
    assert_string_equal(f->err.text, "c.yaml:1:1: top.n: required");
    assert_int_equal(topo_cfg_member(&f->c, &v, f->root, "levels", "", JSON_ARRAY,
                                     "a list of label keys", 0),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text,
                        "c.yaml:3:9: levels: expected a list of label keys, got an integer");
    assert_null(v);
}

/* Bounds read as Go writes durations, the form the file uses. */
static void test_cfgreader__duration_bounds(void **state)
{
    fixture *f = *state;
    int64_t ms = 5;
    assert_int_equal(topo_cfg_duration(&f->c, &ms, f->root, "ttl", "", 10000, 86400000),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:5:6: ttl: 25h is out of range (10s..24h)");
    assert_int_equal(topo_cfg_duration(&f->c, &ms, f->root, "short", "", 1000, 600000),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:6:8: short: 500ms is out of range (1s..10m)");
    assert_int_equal(topo_cfg_duration(&f->c, &ms, f->root, "short", "", 1, 90500), 0);
    assert_int_equal(ms, 500);
    assert_int_equal(topo_cfg_duration(&f->c, &ms, f->root, "ttl", "", 0, 1500),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:5:6: ttl: 25h is out of range (0ms..1500ms)");
    assert_int_equal(topo_cfg_duration(&f->c, &ms, f->root, "levels", "", 0, 1), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:3:9: levels: expected a duration such as \"30s\", "
                                     "\"10m\" or \"1h\", got an integer");
}

/* Without a source or marks the message is bare, for readers that add
 * their own name (facts documents, fixtures), and it lists the keys. */
static void test_cfgreader__bare_unknown_key(void **state)
{
    fixture *f = *state;
    static const char *const keys[] = {"policy", "mode", NULL};
    const topo_cfg bare = {.err = &f->err};
    assert_int_equal(topo_cfg_check_keys(&bare, f->root, "top", keys), TOPO_EINVALID);
    assert_string_equal(f->err.text, "top.levels: unknown field (expected one of: policy, mode)");
    assert_int_equal(topo_cfg_check_keys(&f->c, f->root, "", keys), TOPO_EINVALID);
    assert_string_equal(f->err.text,
                        "c.yaml:3:9: levels: unknown field (expected one of: policy, mode)");
}

/* A list of strings: borrowed, or copied into the pool when the tree is
 * freed after reading (the conformance cases); items and length checked. */
static void test_cfgreader__strings(void **state)
{
    fixture *f = *state;
    const char *const *v = NULL;
    size_t n = 9;
    const char *a = json_string_value(json_array_get(json_object_get(f->root, "list"), 0));
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    topo_cfg copy = f->c;
    copy.pool = pool;
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "list", "", 1, 1, 1), 0);
    assert_int_equal(n, 2);
    assert_string_equal(v[1], "b");
    assert_ptr_equal(v[0], a);
    copy.copy_strings = 1;
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "list", "", 1, 1, 1), 0);
    assert_ptr_not_equal(v[0], a);
    assert_string_equal(v[0], "a");
    /* An empty list reads as a non-NULL array of none, unless refused. */
    v = NULL;
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "empty", "", 1, 1, 0), 0);
    assert_non_null(v);
    assert_int_equal(n, 0);
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "empty", "top", 1, 1, 1),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:9:8: top.empty: must not be empty");
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "names", "", 0, 1, 0),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:8:12: names[1]: must not be empty");
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "names", "", 0, 0, 0),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:8:16: names[2]: expected a string, got an integer");
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "levels", "", 0, 1, 0),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:3:9: levels: expected a list, got an integer");
    /* Absent: untouched unless required. */
    v = NULL;
    n = 7;
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "n", "", 0, 1, 1), 0);
    assert_null(v);
    assert_int_equal(n, 7);
    assert_int_equal(topo_cfg_strings(&copy, &v, &n, f->root, "none", "top", 1, 1, 0),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:1:1: top.none: required");
    topo_pool_free(pool);
}

/* A name is a required non-empty string; require is the presence check
 * the readers without a `required` argument lack; int32 keeps its bounds. */
static void test_cfgreader__name_require_int32(void **state)
{
    fixture *f = *state;
    const char *s = "kept";
    assert_int_equal(topo_cfg_name(&f->c, &s, f->root, "blank", ""), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:10:8: blank: must not be empty");
    assert_string_equal(s, "kept");
    assert_int_equal(topo_cfg_name(&f->c, &s, f->root, "none", "top"), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:1:1: top.none: required");
    assert_int_equal(topo_cfg_name(&f->c, &s, f->root, "mode", ""), 0);
    assert_string_equal(s, "deny");
    assert_int_equal(topo_cfg_require(&f->c, f->root, "levels", ""), 0);
    assert_int_equal(topo_cfg_require(&f->c, f->root, "n", "top"), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:1:1: top.n: required");
    int32_t i = 3;
    assert_int_equal(topo_cfg_int32(&f->c, &i, f->root, "levels", "", 0, 100), 0);
    assert_int_equal(i, 8);
    assert_int_equal(topo_cfg_int32(&f->c, &i, f->root, "big", "", 0, INT32_MAX),
                     TOPO_EINVALID);
    assert_string_equal(f->err.text,
                        "c.yaml:11:6: big: 3000000000 is out of range (0..2147483647)");
    assert_int_equal(i, 8);
    assert_int_equal(topo_cfg_int32(&f->c, &i, f->root, "n", "", 0, 1), 0);
    assert_int_equal(i, 8);
}

/* One reader for configuration and Kubernetes objects (decode.h's getters
 * are these): a whole real is the integer, a non-map holding the field is
 * named, and a getter's message is the reader's. */
static void test_cfgreader__shared_with_decode(void **state)
{
    fixture *f = *state;
    int64_t n = 0;
    assert_int_equal(topo_cfg_int(&f->c, &n, f->root, "whole", "", 0, 10), 0);
    assert_int_equal(n, 4);
    assert_int_equal(topo_cfg_int(&f->c, &n, f->root, "half", "", 0, 10), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:13:7: half: expected an integer, got a number");
    const char *s = "kept";
    const json_t *list = json_object_get(f->root, "list");
    assert_int_equal(topo_cfg_string(&f->c, &s, list, "k", "list", 0), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:4:7: list: expected an object, got an array");
    assert_int_equal(topo_cfg_string(&f->c, &s, NULL, "k", "x", 0), 0);
    assert_string_equal(s, "kept");
    int b = 0;
    assert_int_equal(topo_decode_bool(&b, f->root, "mode", "top", 0, &f->err), TOPO_EINVALID);
    assert_string_equal(f->err.text, "top.mode: expected true or false, got a string");
    assert_int_equal(topo_decode_int(&n, f->root, "whole", "", 1, &f->err), 0);
    assert_int_equal(n, 4);
    json_t *o = json_pack("{s:s#}", "k", "a\0b", (size_t)3);
    assert_non_null(o);
    assert_int_equal(topo_decode_string(&s, o, "k", "o", 0, NULL, &f->err), TOPO_EINVALID);
    assert_string_equal(f->err.text, "o.k: NUL byte in the string");
    json_decref(o);
}

/* Numbers: an integer or a real, within [min, max] or (min, max]; absent
 * or null keeps the default; anything else is named with its position. */
static void test_cfgreader__number(void **state)
{
    fixture *f = *state;
    double d = 7;
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "half", "", 0, 10, 1), 0);
    assert_true(d == 2.5);
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "levels", "", 0, 10, 1), 0);
    assert_true(d == 8);
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "n", "", 0, 10, 1), 0);
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "absent", "", 0, 10, 1), 0);
    assert_true(d == 8);
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "half", "", 2.5, 10, 1), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:13:7: half: 2.5 is out of range (> 2.5 and <= 10)");
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "half", "", 2.5, 10, 0), 0);
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "whole", "", 0, 3, 0), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:12:8: whole: 4 is out of range (>= 0 and <= 3)");
    assert_int_equal(topo_cfg_number(&f->c, &d, f->root, "mode", "", 0, 3, 0), TOPO_EINVALID);
    assert_string_equal(f->err.text, "c.yaml:2:7: mode: expected a number, got a string");
    assert_true(d == 2.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cfgreader__enum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__member, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__duration_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__bare_unknown_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__name_require_int32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__shared_with_decode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cfgreader__number, setup, teardown),
    };
    return cmocka_run_group_tests_name("codec.cfgreader", tests, NULL, NULL);
}
