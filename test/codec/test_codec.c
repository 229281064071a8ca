/* Tests for lib/codec: file reading, JSON and YAML parsing with positions. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/codec.h"

#include "topo/limits.h"

/* --- YAML/JSON value cases: input → canonical compact JSON ------------------- */

typedef struct value_case {
    const char *input;
    const char *expected; /* JSON_SORT_KEYS|JSON_COMPACT|JSON_ENCODE_ANY dump */
} value_case;

static const value_case yaml_values[] = {
    {"a: 1", "{\"a\":1}"},
    {"a: -12", "{\"a\":-12}"},
    {"a: +7", "{\"a\":7}"},
    {"a: 012", "{\"a\":12}"},
    {"a: 0o17", "{\"a\":15}"},
    {"a: 0x1F", "{\"a\":31}"},
    {"a: 1.5", "{\"a\":1.5}"},
    {"a: 1e3", "{\"a\":1000.0}"},
    {"a: .5", "{\"a\":0.5}"},
    {"a: true\nb: False\nc: TRUE", "{\"a\":true,\"b\":false,\"c\":true}"},
    {"a: yes\nb: on", "{\"a\":\"yes\",\"b\":\"on\"}"}, /* YAML 1.2: strings */
    {"a: ~\nb: null\nc:", "{\"a\":null,\"b\":null,\"c\":null}"},
    {"a: \"8\"\nb: '1.5'\nc: 'true'\nd: \"null\"",
     "{\"a\":\"8\",\"b\":\"1.5\",\"c\":\"true\",\"d\":\"null\"}"},
    {"a: 500m\nb: 2Ti\nc: 1e3x", "{\"a\":\"500m\",\"b\":\"2Ti\",\"c\":\"1e3x\"}"},
    {"a: !!str 8\nb: !!int \"9\"\nc: !!float 2\nd: ! 10",
     "{\"a\":\"8\",\"b\":9,\"c\":2.0,\"d\":\"10\"}"},
    {"a: 0x\nb: 0o\nc: 1.2.3\nd: +-1\ne: 1_000",
     "{\"a\":\"0x\",\"b\":\"0o\",\"c\":\"1.2.3\",\"d\":\"+-1\",\"e\":\"1_000\"}"},
    {"1: one\ntrue: t", "{\"1\":\"one\",\"true\":\"t\"}"},
    {"- a\n- [1, {b: c}]\n- {}\n- []", "[\"a\",[1,{\"b\":\"c\"}],{},[]]"},
    {"nodes:\n  - name: n1\n    labels:\n      x: \"y\"\n  - name: n2\n",
     "{\"nodes\":[{\"labels\":{\"x\":\"y\"},\"name\":\"n1\"},{\"name\":\"n2\"}]}"},
    {"text: |\n  line1\n  line2\n", "{\"text\":\"line1\\nline2\\n\"}"},
    {"a: &x 1\nb: 2", "{\"a\":1,\"b\":2}"}, /* an anchor alone is harmless */
    {"first: 1\n---\nsecond: 2\n", "{\"first\":1}"},
    {"---\nfirst: 1\n...\n---\n[oops", "{\"first\":1}"},
    {"", "null"},
    {"# only a comment\n", "null"},
    {"plain", "\"plain\""},
    {"\xEF\xBB\xBF" "a: 1", "{\"a\":1}"},
};

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

static void test_codec__yaml_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(yaml_values) / sizeof(yaml_values[0]); i++) {
        const value_case *c = &yaml_values[i];
        json_t *v = NULL;
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_codec_yaml_parse(&v, c->input, strlen(c->input), "t.yaml", &err);
        if (rc != 0)
            fail_msg("case %zu (%s): %s", i, c->input, err.text);
        char *s = dump(v);
        if (strcmp(s, c->expected) != 0)
            fail_msg("case %zu (%s): got %s, want %s", i, c->input, s, c->expected);
        free(s);
        json_decref(v);
    }
}

/* --- malformed input: code and "source:line:column: ..." ----------------------- */

typedef struct error_case {
    int yaml; /* 1: topo_codec_yaml_parse, 0: json */
    const char *input;
    int code;
    int line, column;
    const char *contains; /* substring of the message */
} error_case;

static const error_case error_cases[] = {
    {0, "{\"a\":1,}", TOPO_EINVALID, 1, 8, "t.src:1:8: string or '}' expected"},
    {0, "{\"a\":1,\"a\":2}", TOPO_EINVALID, 1, 10, "duplicate object key"},
    {0, "  \n[1,\n 2,,]", TOPO_EINVALID, 3, 4, "t.src:3:4: unexpected token"},
    {0, "", TOPO_EINVALID, 1, 1, "t.src:1:1:"},
    {0, "{\"a\": 99999999999999999999}", TOPO_EINVALID, 1, 26, "too big integer"},
    {1, "a: [1, 2\nb: 3\n", TOPO_EINVALID, 2, 2, "t.src:2:2: did not find expected ',' or ']'"},
    {1, "a:\n  b: 1\n c: 2\n", TOPO_EINVALID, 3, 2, "t.src:3:2: did not find expected key"},
    {1, "a: 1\nb: *x\n", TOPO_EINVALID, 2, 4, "t.src:2:4: aliases"},
    {1, "a: 1\nb: 2\na: 3\n", TOPO_EINVALID, 3, 1, "t.src:3:1: duplicate key \"a\""},
    {1, "? [a]\n: 1\n", TOPO_EINVALID, 1, 3, "complex mapping keys"},
    {1, "a:\n\tb: 1\n", TOPO_EINVALID, 2, 1, "t.src:2:1:"},
    {1, "a: \"unterminated\n", TOPO_EINVALID, 2, 1, "found unexpected end of stream"},
    {1, "a: b\n- c\n", TOPO_EINVALID, 2, 1, "t.src:2:1: did not find expected key"},
    {1, "a: 99999999999999999999\n", TOPO_EINVALID, 1, 4, "t.src:1:4: integer 99999999999999999999 out of range"},
    {1, "a: .inf\n", TOPO_EINVALID, 1, 4, "infinity and NaN"},
    {1, "a: !!int abc\n", TOPO_EINVALID, 1, 4, "is not an integer"},
    {1, "a: !custom x\n", TOPO_EINVALID, 1, 4, "unsupported tag !custom"},
    {1, "a: b\xff\n", TOPO_EINVALID, 1, 5, "t.src:1:5: invalid leading UTF-8 octet"},
};

static void test_codec__errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
        const error_case *c = &error_cases[i];
        json_t *v = (json_t *)1;
        topo_err err = TOPO_ERR_INIT;
        int rc = c->yaml ? topo_codec_yaml_parse(&v, c->input, strlen(c->input), "t.src", &err)
                         : topo_codec_json_parse(&v, c->input, strlen(c->input), "t.src", &err);
        if (rc != c->code || err.code != c->code)
            fail_msg("case %zu: rc %d (%s), want %d", i, rc, err.text, c->code);
        assert_null(v);
        if (strstr(err.text, c->contains) == NULL)
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.text, c->contains);
        if (err.line != c->line || err.column != c->column)
            fail_msg("case %zu: at %d:%d, want %d:%d (%s)", i, err.line, err.column, c->line,
                     c->column, err.text);
        assert_string_equal(err.source, "t.src");
    }
}

/* A configuration's second document would never be read: the readers'
 * parse (topo_codec_yaml_parse_marks) refuses it at its marker; markers
 * around the one document are fine; the plain parse still reads a
 * manifest stream's first document. */
static void test_codec__config_one_document(void **state)
{
    static const struct {
        const char *input;
        const char *expected; /* NULL: refused at line:column */
        int line, column;
    } cases[] = {
        {"a: 1\n", "{\"a\":1}", 0, 0},
        {"---\na: 1\n", "{\"a\":1}", 0, 0},
        {"--- # leading marker\na: 1\n...\n", "{\"a\":1}", 0, 0},
        {"a: 1\n...\n# the end\n", "{\"a\":1}", 0, 0},
        {"---\n", "null", 0, 0},
        {"", "null", 0, 0},
        {"a: 1\n---\nlabels: {prefix: kubernetes.io/}\n", NULL, 2, 1},
        {"---\na: 1\n---\nbogus: 1\n", NULL, 3, 1},
        {"a: 1\n...\n---\nbogus: 1\n", NULL, 3, 1},
        {"a: 1\n--- {bogus: 1}\n", NULL, 2, 1},
        {"a: 1\n---\n", NULL, 2, 1},
        {"{\"a\": 1}\n---\n{}\n", NULL, 2, 1},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = NULL;
        topo_codec_marks *m = NULL;
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_codec_yaml_parse_marks(&v, &m, cases[i].input, strlen(cases[i].input),
                                             "c.yaml", &err);
        if (cases[i].expected == NULL) {
            char want[64];
            snprintf(want, sizeof want, "c.yaml:%d:%d: a second YAML document", cases[i].line,
                     cases[i].column);
            if (rc != TOPO_EINVALID || strstr(err.text, want) == NULL ||
                strstr(err.text, "one configuration document expected") == NULL)
                fail_msg("case %zu: rc %d (%s), want %s", i, rc, err.text, want);
            assert_null(v);
            assert_null(m);
            continue;
        }
        if (rc != 0)
            fail_msg("case %zu: %s", i, err.text);
        char *s = dump(v);
        if (strcmp(s, cases[i].expected) != 0)
            fail_msg("case %zu: got %s, want %s", i, s, cases[i].expected);
        free(s);
        json_decref(v);
        topo_codec_marks_free(m);
    }
    /* Not configuration: a stream of manifests gives its first document. */
    json_t *v = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_codec_yaml_parse(&v, "a: 1\n---\nb: 2\n", 14, "m.yaml", &err), 0);
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 1);
    assert_null(json_object_get(v, "b"));
    json_decref(v);
}

static void test_codec__yaml_depth_limit(void **state)
{
    (void)state;
    size_t n = TOPO_MAX_DOCUMENT_DEPTH + 10;
    char *text = malloc(2 * n + 1);
    assert_non_null(text);
    memset(text, '[', n);
    memset(text + n, ']', n);
    text[2 * n] = '\0';
    json_t *v = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_codec_yaml_parse(&v, text, 2 * n, "deep.yaml", &err), TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "nesting deeper than"));
    assert_null(v);
    /* Exactly at the limit is fine. */
    n = TOPO_MAX_DOCUMENT_DEPTH;
    memset(text, '[', n);
    memset(text + n, ']', n);
    assert_int_equal(topo_codec_yaml_parse(&v, text, 2 * n, "deep.yaml", &err), 0);
    json_decref(v);
    free(text);
}

static void test_codec__null_err_accepted(void **state)
{
    (void)state;
    json_t *v = NULL;
    assert_int_equal(topo_codec_yaml_parse(&v, "a: [", 4, NULL, NULL), TOPO_EINVALID);
    assert_int_equal(topo_codec_json_parse(&v, "{", 1, NULL, NULL), TOPO_EINVALID);
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_codec_json_parse(&v, "{", 1, NULL, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "<input>:1:"));
}

static void test_codec__yaml_dump_round_trip(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"h100-r03-n1\"],\"count\":1}]}",
        "{\"s\":[\"8\",\"true\",\"null\",\"\",\"1e3\",\"0x1F\",\"~\",\"a: b\",\"- x\",\"#c\",\"multi\\nline\"]}",
        "{\"n\":[1,-2,1.5,2.0,true,false,null],\"e\":{},\"a\":[],\"8\":\"key that looks like an int\"}",
        "[[1,[2,[3]]],{\"x\":{\"y\":{\"z\":\"\u00e9\"}}}]",
        "\"plain\"",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_error_t jerr;
        json_t *in = json_loads(docs[i], JSON_DECODE_ANY, &jerr), *back = NULL;
        char *yaml = NULL;
        topo_err err = TOPO_ERR_INIT;
        assert_non_null(in);
        assert_int_equal(topo_codec_yaml_dump(&yaml, in, &err), 0);
        if (topo_codec_yaml_parse(&back, yaml, strlen(yaml), "dump", &err) != 0)
            fail_msg("doc %zu: %s\n%s", i, err.text, yaml);
        if (!json_equal(in, back)) {
            char *a = dump(in), *b = dump(back);
            fail_msg("doc %zu: %s\nread back as %s\nfrom:\n%s", i, a, b, yaml);
        }
        free(yaml);
        json_decref(in);
        json_decref(back);
    }
    /* The assignment reads as a person would write it. */
    json_t *a = json_loads("{\"levels\":[\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"n1\"],\"count\":2}]}", 0, NULL);
    char *yaml = NULL;
    assert_int_equal(topo_codec_yaml_dump(&yaml, a, NULL), 0);
    assert_string_equal(yaml, "levels:\n- kubernetes.io/hostname\ndomains:\n- values:\n  - n1\n  count: 2\n");
    free(yaml);
    json_decref(a);
}

/* --- files --------------------------------------------------------------------- */

static char tmpdir[64];

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/topo-codec-XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_tmp(const char *name, const char *content)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    return path;
}

static void test_codec__read_file(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    topo_err err = TOPO_ERR_INIT;
    const char *p = write_tmp("small.txt", "hello\n");

    assert_int_equal(topo_codec_read_file(&buf, &len, p, 100, &err), 0);
    assert_int_equal(len, 6);
    assert_string_equal(buf, "hello\n");
    free(buf);

    assert_int_equal(topo_codec_read_file(&buf, &len, p, 6, &err), 0);
    free(buf);
    assert_int_equal(topo_codec_read_file(&buf, &len, p, 5, &err), TOPO_ELIMIT);
    assert_null(buf);
    assert_non_null(strstr(err.text, "larger than the limit of 5 bytes"));

    assert_int_equal(topo_codec_read_file(&buf, &len, "/nonexistent/x.json", 100, &err),
                     TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "/nonexistent/x.json: "));
    assert_int_equal(topo_codec_read_file(&buf, &len, tmpdir, 100, &err), TOPO_EIO);
    assert_null(buf);

    /* Non-regular input (a pipe has no size): the limit still holds. */
    assert_int_equal(topo_codec_read_file(&buf, &len, "/dev/zero", 100000, &err), TOPO_ELIMIT);
    assert_null(buf);

    /* A larger file that grows the buffer several times. */
    char *big = malloc(300001);
    assert_non_null(big);
    memset(big, 'x', 300000);
    big[300000] = '\0';
    p = write_tmp("big.txt", big);
    assert_int_equal(topo_codec_read_file(&buf, &len, p, 300000, &err), 0);
    assert_int_equal(len, 300000);
    assert_memory_equal(buf, big, 300000);
    free(buf);
    free(big);
}

static void test_codec__load_file_detects_format(void **state)
{
    (void)state;
    json_t *v = NULL;
    topo_err err = TOPO_ERR_INIT;
    char *s;

    const char *p = write_tmp("a.json", "\n  {\"a\": [1, 2]}\n");
    assert_int_equal(topo_codec_load_file(&v, p, 1000, &err), 0);
    s = dump(v);
    assert_string_equal(s, "{\"a\":[1,2]}");
    free(s);
    json_decref(v);

    p = write_tmp("a.yaml", "# comment\na:\n  - 1\n  - two\n");
    assert_int_equal(topo_codec_load_file(&v, p, 1000, &err), 0);
    s = dump(v);
    assert_string_equal(s, "{\"a\":[1,\"two\"]}");
    free(s);
    json_decref(v);

    /* A YAML flow mapping starting with '{' is parsed as JSON: errors say so. */
    p = write_tmp("bad.json", "{\n  \"a\": 1,\n  b: 2\n}\n");
    assert_int_equal(topo_codec_load_file(&v, p, 1000, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "bad.json:3:3: "));
    assert_int_equal(err.line, 3);

    p = write_tmp("bad.yaml", "nodes:\n  - name: a\n   labels: {}\n");
    assert_int_equal(topo_codec_load_file(&v, p, 1000, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "bad.yaml:3:"));
    assert_int_equal(err.line, 3);
    assert_string_equal(err.source, p);
}

int main(void)
{
    const struct CMUnitTest parse[] = {
        cmocka_unit_test(test_codec__yaml_values),
        cmocka_unit_test(test_codec__errors),
        cmocka_unit_test(test_codec__config_one_document),
        cmocka_unit_test(test_codec__yaml_depth_limit),
        cmocka_unit_test(test_codec__null_err_accepted),
        cmocka_unit_test(test_codec__yaml_dump_round_trip),
    };
    const struct CMUnitTest files[] = {
        cmocka_unit_test(test_codec__read_file),
        cmocka_unit_test(test_codec__load_file_detects_format),
    };
    int failed = cmocka_run_group_tests_name("codec.parse", parse, NULL, NULL);
    failed += cmocka_run_group_tests_name("codec.files", files, setup_tmp, teardown_tmp);
    return failed;
}
