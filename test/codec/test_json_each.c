/* topo_codec_json_each: the elements of an array (the document, or a
 * member of its object) one at a time, with the same verdicts and the same
 * line:column as a whole parse (topo_codec_json_parse) for malformed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/codec.h"

/* Each element's compact JSON, joined by ' '; stops with TOPO_ELIMIT at
 * the element `stop_at`. */
typedef struct seen {
    char text[1024];
    size_t calls;
    size_t stop_at;
} seen;

static int record(const json_t *e, size_t index, void *payload, topo_err *err)
{
    seen *s = payload;
    if (index != s->calls)
        return topo_err_set(err, TOPO_EINVALID, "index %zu after %zu calls", index, s->calls);
    if (++s->calls == s->stop_at)
        return topo_err_set(err, TOPO_ELIMIT, "stopped at %zu", index);
    char *t = json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%s%s", n ? " " : "", t ? t : "?");
    free(t);
    return 0;
}

static int each(seen *s, int *found, const char *text, const char *member, topo_err *err)
{
    memset(s->text, 0, sizeof s->text);
    s->calls = 0;
    topo_codec_each how = {.member = member, .element = record, .payload = s};
    return topo_codec_json_each(found, text, strlen(text), "doc.json", &how, err);
}

static void test_json_each__elements(void **state)
{
    (void)state;
    seen s = {.stop_at = 0};
    int found = -1;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(each(&s, &found, " [1, \"a\",{\"x\": [2, {}]},\n[ ] ,null,true ]\n", NULL,
                          &err),
                     0);
    assert_int_equal(found, 1);
    assert_string_equal(s.text, "1 \"a\" {\"x\":[2,{}]} [] null true");
    assert_int_equal(each(&s, &found, "[]", NULL, &err), 0);
    assert_int_equal(found, 1);
    assert_int_equal(s.calls, 0);
    assert_int_equal(each(&s, &found, "\t[ \n ]", NULL, &err), 0);
    assert_int_equal(found, 1);

    /* A member of the top-level object; the others parsed and dropped. */
    const char *list = "{\"apiVersion\": \"v1\", \"items\": [{\"a\": 1}, {\"b\": [2]}],\n"
                       " \"kind\": \"List\", \"metadata\": {\"resourceVersion\": \"\"}}";
    assert_int_equal(each(&s, &found, list, "items", &err), 0);
    assert_int_equal(found, 1);
    assert_string_equal(s.text, "{\"a\":1} {\"b\":[2]}");
    assert_int_equal(each(&s, &found, "{}", "items", &err), 0);
    assert_int_equal(found, 0);

    /* Other shapes: nothing called, found 0, for the caller to parse whole. */
    const char *other[][2] = {{"{\"items\": 5}", "items"}, {"{\"kind\": \"Node\"}", "items"},
                              {"[1]", "items"},            {"{\"a\": 1}", NULL},
                              {"5", NULL},                 {"", NULL}};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        assert_int_equal(each(&s, &found, other[i][0], other[i][1], &err), 0);
        assert_int_equal(found, 0);
        assert_int_equal(s.calls, 0);
    }

    /* A NUL byte: left to the whole parse, which jansson reads its own way. */
    const char nul[] = "[1, {\"a\": 1\0}, 2]";
    topo_codec_each how = {.element = record, .payload = &s};
    assert_int_equal(topo_codec_json_each(&found, nul, sizeof nul - 1, "doc.json", &how, &err), 0);
    assert_int_equal(found, 0);

    /* The callback's error stops the walk and comes back unchanged. */
    s.stop_at = 2;
    assert_int_equal(each(&s, &found, "[1, 2, 3]", NULL, &err), TOPO_ELIMIT);
    assert_int_equal(s.calls, 2);
    assert_string_equal(err.text, "stopped at 1");
}

typedef struct members_seen {
    char keys[256]; /* "key=value" of each other member */
    size_t elements;
} members_seen;

static int other_key(const char *key, const json_t *v, void *payload, topo_err *err)
{
    char *keys = ((members_seen *)payload)->keys;
    (void)err;
    size_t n = strlen(keys);
    snprintf(keys + n, sizeof((members_seen *)payload)->keys - n, "%s%s=%s", n ? " " : "", key,
             json_is_string(v) ? json_string_value(v) : json_is_null(v) ? "null" : "?");
    return strcmp(key, "stop") == 0 ? TOPO_ECONFLICT : 0;
}

static int count_element(const json_t *e, size_t index, void *payload, topo_err *err)
{
    (void)e;
    (void)index;
    (void)err;
    ((members_seen *)payload)->elements++;
    return 0;
}

/* The other members of the top-level object reach `other`, in order, the
 * array's elements `element`; its error stops the walk. */
static void test_json_each__other_members(void **state)
{
    (void)state;
    members_seen got = {"", 0};
    topo_codec_each how = {.member = "results", .element = count_element, .other = other_key,
                           .payload = &got};
    topo_err err = TOPO_ERR_INIT;
    int found = 0;
    const char *page = "{\"count\": 2, \"next\": \"https://nb/?offset=2\", \"previous\": null,"
                       " \"results\": [{\"id\": 1}, {\"id\": 2}], \"tail\": \"x\"}";
    assert_int_equal(topo_codec_json_each(&found, page, strlen(page), "p.json", &how, &err), 0);
    assert_int_equal(found, 1);
    assert_int_equal(got.elements, 2);
    assert_string_equal(got.keys, "count=? next=https://nb/?offset=2 previous=null tail=x");
    const char *stop = "{\"stop\": null, \"results\": [1]}";
    got.keys[0] = '\0';
    got.elements = 0;
    assert_int_equal(topo_codec_json_each(&found, stop, strlen(stop), "p.json", &how, &err),
                     TOPO_ECONFLICT);
    assert_int_equal(got.elements, 0);
    /* A member that is not an array goes to nobody: found 0. */
    const char *one = "{\"id\": 4, \"results\": 5}";
    got.keys[0] = '\0';
    assert_int_equal(topo_codec_json_each(&found, one, strlen(one), "p.json", &how, &err), 0);
    assert_int_equal(found, 0);
    assert_string_equal(got.keys, "id=?");
}

/* "doc.json:L:C:" of an error message, or "" */
static void position(char *out, size_t size, const char *msg)
{
    const char *p = msg;
    int colons = 0;
    while (*p && colons < 3)
        if (*p++ == ':')
            colons++;
    snprintf(out, size, "%.*s", colons == 3 ? (int)(p - msg) : 0, msg);
}

static void test_json_each__errors_as_a_whole_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *member;
    } bad[] = {
        {"[1,\n 2,\n x]", NULL},
        {"[1 2]", NULL},
        {"[1,]", NULL},
        {"[1, 2", NULL},
        {"[", NULL},
        {"[{\"a\": 1, \"a\": 2}]", NULL},
        {"[1]\n x", NULL},
        {"[\"\\u12\"]", NULL},
        {"{\"items\": [1], \"items\": [2]}", "items"},
        {"{\"items\": [1, 2}", "items"},
        {"{\"kind\" 1, \"items\": []}", "items"},
        {"{\"kind\": 1 \"items\": []}", "items"},
        {"{\"items\": [],}", "items"},
        {"{\"items\": []", "items"},
        {"{\"kind\": \"List\",\n  \"items\": [\n    {\"a\": tru}\n  ]}", "items"},
        {"{\"items\": []} []", "items"},
        {"[1 23]", NULL},
        {"[1 \"ab\\\"c\"]", NULL},
        {"{\"kind\": 1\n  \"items\": []}", "items"},
        {"[1,\n\n", NULL},
        {"[1, 2\n", NULL},
        {"{\"items\": [1]\n", "items"},
        {"{\"items\": [1] true}", "items"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        seen s = {.stop_at = 0};
        int found = 0;
        topo_err each_err = TOPO_ERR_INIT, whole_err = TOPO_ERR_INIT;
        json_t *doc = NULL;
        int rc = each(&s, &found, bad[i].text, bad[i].member, &each_err);
        int whole = topo_codec_json_parse(&doc, bad[i].text, strlen(bad[i].text), "doc.json",
                                          &whole_err);
        json_decref(doc);
        if (rc != TOPO_EINVALID || whole != TOPO_EINVALID)
            fail_msg("case %zu: rc %d, whole parse %d (%s)", i, rc, whole, each_err.text);
        char a[64], b[64];
        position(a, sizeof a, each_err.text);
        position(b, sizeof b, whole_err.text);
        if (strcmp(a, b) != 0)
            fail_msg("case %zu: \"%s\", whole parse \"%s\"", i, each_err.text, whole_err.text);
        assert_int_equal(each_err.line, whole_err.line);
        assert_int_equal(each_err.column, whole_err.column);
    }
}


/* topo_codec_json_members: each member's key and value text, in order. */
typedef struct spans {
    const char *text;
    char got[1024];
    size_t calls, stop_at;
} spans;

static int record_span(const char *key, size_t offset, size_t len, void *payload, topo_err *err)
{
    spans *s = payload;
    if (++s->calls == s->stop_at)
        return topo_err_set(err, TOPO_ELIMIT, "stopped at %s", key);
    size_t n = strlen(s->got);
    snprintf(s->got + n, sizeof s->got - n, "%s%s=%.*s", n ? " " : "", key, (int)len,
             s->text + offset);
    return 0;
}

static int members(spans *s, int *found, const char *text, topo_err *err)
{
    memset(s->got, 0, sizeof s->got);
    s->text = text;
    s->calls = 0;
    return topo_codec_json_members(found, text, strlen(text), "doc.json", record_span, s, err);
}

static void test_json_members__spans(void **state)
{
    (void)state;
    spans s = {.stop_at = 0};
    int found = -1;
    topo_err err = TOPO_ERR_INIT;
    /* Brackets and quotes inside strings do not end a value. */
    assert_int_equal(members(&s, &found,
                             " {\"a\" : {\"x\":\"}]\\\"{\"} ,\"b\":[1,[2,{}]],\n"
                             "\"c\":\"s}\",\"d\":-1.5e3 , \"e\":null}\n",
                             &err),
                     0);
    assert_int_equal(found, 1);
    assert_string_equal(s.got, "a={\"x\":\"}]\\\"{\"} b=[1,[2,{}]] c=\"s}\" d=-1.5e3 e=null");
    assert_int_equal(members(&s, &found, "{ }", &err), 0);
    assert_int_equal(found, 1);
    assert_int_equal(s.calls, 0);
    /* A callback's error stops the walk. */
    s.stop_at = 2;
    assert_int_equal(members(&s, &found, "{\"a\":1,\"b\":2,\"c\":3}", &err), TOPO_ELIMIT);
    assert_string_equal(err.text, "stopped at b");
    assert_int_equal(s.calls, 2);
}

static void test_json_members__other_shapes_and_errors(void **state)
{
    (void)state;
    spans s = {.stop_at = 0};
    int found = -1;
    topo_err err = TOPO_ERR_INIT;
    /* Not an object: left to the caller's whole parse. */
    assert_int_equal(members(&s, &found, "[{\"a\":1}]", &err), 0);
    assert_int_equal(found, 0);
    assert_int_equal(members(&s, &found, "", &err), 0);
    assert_int_equal(found, 0);
    assert_int_equal(topo_codec_json_members(&found, "{\"a\":\"\0\"}", 8, "doc.json",
                                             record_span, &s, &err),
                     0);
    assert_int_equal(found, 0);
    assert_int_equal(s.calls, 0);
    /* The object's own syntax, as a whole parse reports it. */
    assert_int_equal(members(&s, &found, "{\"a\":1,\"a\":2}", &err), TOPO_EINVALID);
    assert_int_equal(found, 1);
    assert_non_null(strstr(err.text, "doc.json:1:10: duplicate object key"));
    assert_int_equal(members(&s, &found, "{\"a\":1 \"b\":2}", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "',' or '}' expected"));
    assert_int_equal(members(&s, &found, "{\"a\":1} x", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "end of file expected"));
    assert_int_equal(members(&s, &found, "{a:1}", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "string expected"));
    /* A value cut in the middle never runs past the text. */
    const char *cut[] = {"{\"a\":{\"b\":[1,2", "{\"a\":\"abc", "{\"a\":\"ab\\", "{\"a\":",
                         "{\"a\""};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
        s.calls = 0;
        assert_int_equal(members(&s, &found, cut[i], &err), TOPO_EINVALID);
        assert_int_equal(s.calls, 0);
        assert_non_null(strstr(err.text, "doc.json:1:"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_each__elements),
        cmocka_unit_test(test_json_each__other_members),
        cmocka_unit_test(test_json_each__errors_as_a_whole_parse),
        cmocka_unit_test(test_json_members__spans),
        cmocka_unit_test(test_json_members__other_shapes_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
