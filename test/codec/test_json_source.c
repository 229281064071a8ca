/* topo_codec_json_parse_source and topo_codec_json_each_source: a source's
 * payload parsed within a memory budget (a multiple of its size) and a
 * nesting depth, refused with TOPO_ELIMIT naming the source; a real payload
 * parses as topo_codec_json_parse parses it, and the budget ends with the
 * call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/codec.h"
#include "topo/limits.h"

/* prefix [{},{},...] suffix: size bytes of text, a tree of over 70 times
 * that. malloc'd. */
static char *empty_objects(const char *prefix, const char *suffix, size_t size, size_t *len)
{
    size_t p = strlen(prefix), s = strlen(suffix), n = (size - p - s - 2) / 3;
    char *t = malloc(size + 1), *at = t;
    assert_non_null(t);
    memcpy(at, prefix, p);
    at += p;
    *at++ = '[';
    for (size_t i = 0; i < n; i++) {
        memcpy(at, i + 1 < n ? "{}," : "{}", i + 1 < n ? 3 : 2);
        at += i + 1 < n ? 3 : 2;
    }
    *at++ = ']';
    memcpy(at, suffix, s);
    at += s;
    *at = '\0';
    *len = (size_t)(at - t);
    return t;
}

static void test_json_source__budget(void **state)
{
    (void)state;
    size_t len = 0;
    /* 1 MiB of text: a budget of 16 MiB, a tree of some 75 MB */
    char *text = empty_objects("{\"h1\":{\"lldp\":{\"interface\":", "}}}", 1u << 20, &len);
    json_t *doc = NULL;
    topo_err err = TOPO_ERR_INIT;
    char want[256];
    assert_int_equal(topo_codec_json_parse_source(&doc, text, len, "lldp: GET /lldp", &err),
                     TOPO_ELIMIT);
    assert_null(doc);
    snprintf(want, sizeof want,
             "lldp: GET /lldp: the body of %zu bytes needs more than %zu bytes of memory once "
             "parsed",
             len, (size_t)TOPO_PARSE_MEMORY_RATIO * len);
    assert_non_null(strstr(err.text, want));
    /* the budget ended with the call: the same text parses outside it */
    topo_err_clear(&err);
    assert_int_equal(topo_codec_json_parse(&doc, text, len, "x", &err), 0);
    assert_int_equal(json_array_size(json_object_get(
                         json_object_get(json_object_get(doc, "h1"), "lldp"), "interface")),
                     (len - 31) / 3);
    json_decref(doc);
    free(text);
}

/* One element of an array read a record at a time: each record within the
 * whole body's budget; a record that alone needs more is refused. */
static int count(const json_t *e, size_t index, void *payload, topo_err *err)
{
    (void)e;
    (void)index;
    (void)err;
    (*(size_t *)payload)++;
    return 0;
}

static void test_json_source__each_budget(void **state)
{
    (void)state;
    size_t len = 0, n = 0;
    char *text = empty_objects("[{\"system_guid\":\"aa01\",\"ports\":", "}]", 1u << 20, &len);
    int found = 0;
    topo_err err = TOPO_ERR_INIT;
    topo_codec_each how = {.element = count, .payload = &n};
    assert_int_equal(topo_codec_json_each_source(&found, text, len, "ufm systems", &how, &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "ufm systems: the body of "));
    assert_int_equal(n, 0);
    free(text);
    /* many small records: each freed before the next, well within it */
    const char *rec = "{\"system_guid\":\"aa00000000000001\",\"type\":\"switch\"},";
    size_t rl = strlen(rec), m = 20000;
    char *list = malloc(rl * m + 3);
    assert_non_null(list);
    list[0] = '[';
    for (size_t i = 0; i < m; i++)
        memcpy(list + 1 + i * rl, rec, rl);
    list[rl * m] = ']'; /* over the last comma */
    list[rl * m + 1] = '\0';
    topo_err_clear(&err);
    assert_int_equal(topo_codec_json_each_source(&found, list, rl * m + 1, "ufm", &how, &err), 0);
    assert_int_equal(found, 1);
    assert_int_equal(n, m);
    free(list);
}

static void test_json_source__tiny_and_bounds(void **state)
{
    (void)state;
    json_t *doc = NULL;
    topo_err err = TOPO_ERR_INIT;
    /* a tiny document: its tree is many times its 2 bytes, within the floor */
    assert_int_equal(topo_codec_json_parse_source(&doc, "{}", 2, "s", &err), 0);
    json_decref(doc);
    assert_int_equal(topo_codec_source_budget(0), TOPO_MIN_PARSE_MEMORY);
    assert_int_equal(topo_codec_source_budget(1u << 20), (size_t)TOPO_PARSE_MEMORY_RATIO << 20);
    assert_int_equal(topo_codec_source_budget((size_t)1 << 40), TOPO_MAX_PARSE_MEMORY);
}

static void test_json_source__depth(void **state)
{
    (void)state;
    char text[512];
    json_t *doc = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t d = TOPO_MAX_SOURCE_DEPTH;
    /* as deep as allowed, with brackets in a string that are not nesting */
    memset(text, '[', d);
    snprintf(text + d, sizeof text - d, "\"[[[[{{{{\\\"[\"");
    memset(text + strlen(text), ']', d);
    text[d + 13 + d] = '\0';
    assert_int_equal(topo_codec_json_parse_source(&doc, text, strlen(text), "s", &err), 0);
    json_decref(doc);
    /* one deeper: refused before jansson builds anything */
    memset(text, '[', d + 1);
    memset(text + d + 1, ']', d + 1);
    text[2 * d + 2] = '\0';
    assert_int_equal(topo_codec_json_parse_source(&doc, text, strlen(text), "netbox page", &err),
                     TOPO_ELIMIT);
    assert_null(doc);
    assert_non_null(strstr(err.text, "netbox page: nested deeper than 64"));
    int found = 0;
    topo_codec_each how = {.element = count, .payload = &(size_t){0}};
    assert_int_equal(topo_codec_json_each_source(&found, text, strlen(text), "s", &how, &err),
                     TOPO_ELIMIT);
    assert_int_equal(found, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_source__budget),
        cmocka_unit_test(test_json_source__each_budget),
        cmocka_unit_test(test_json_source__tiny_and_bounds),
        cmocka_unit_test(test_json_source__depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
