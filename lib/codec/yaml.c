/* YAML text → jansson tree, from libyaml's event stream. The only file that
 * includes <yaml.h>. Plain scalars resolve by the YAML 1.2 core schema. */
#define _POSIX_C_SOURCE 200809L

#include "topo/codec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "topo/array.h"
#include "topo/buf.h"
#include "topo/limits.h"

#define TAG_STR "tag:yaml.org,2002:str"
#define TAG_INT "tag:yaml.org,2002:int"
#define TAG_FLOAT "tag:yaml.org,2002:float"
#define TAG_BOOL "tag:yaml.org,2002:bool"
#define TAG_NULL "tag:yaml.org,2002:null"

typedef struct frame {
    json_t *container; /* borrowed: owned by its parent (or the root) */
    char *key;         /* pending mapping key, malloc'd; NULL when none */
    yaml_mark_t key_mark;
} frame;

/* Where each value of the tree started (topo_codec_yaml_parse_marks), so
 * that a reader validating the tree afterwards can name file:line:column. */
typedef struct mark_entry {
    const json_t *value;
    int line, column;
} mark_entry;

struct topo_codec_marks {
    mark_entry *v;
    size_t n, cap;
};

typedef struct builder {
    const char *source; /* as given, for topo_err_at */
    const char *src;    /* for messages */
    json_t *root;
    frame stack[TOPO_MAX_DOCUMENT_DEPTH];
    size_t depth;
    topo_err *err;
    topo_codec_marks *marks; /* NULL: positions not recorded */
    int one_document;        /* a second document is an error, not ignored */
    int first_done;          /* the first document has ended */
} builder;

static int fail_at(builder *b, int code, yaml_mark_t mark, const char *fmt, ...)
    TOPO_PRINTF(4, 5);
static int fail_at(builder *b, int code, yaml_mark_t mark, const char *fmt, ...)
{
    int line = (int)mark.line + 1;
    int column = (int)mark.column + 1;
    char msg[TOPO_ERR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    topo_err_set(b->err, code, "%s:%d:%d: %s", b->src, line, column, msg);
    topo_err_at(b->err, b->source, line, column);
    return code;
}

/* --- core schema resolution ------------------------------------------------ */

static int is_null_text(const char *s)
{
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

static int bool_text(const char *s, int *out)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0) {
        *out = 1;
        return 1;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0) {
        *out = 0;
        return 1;
    }
    return 0;
}

static int all_digits(const char *s, int base)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        char c = *s;
        int ok = base == 8    ? (c >= '0' && c <= '7')
                 : base == 10 ? (c >= '0' && c <= '9')
                              : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                                 (c >= 'A' && c <= 'F'));
        if (!ok)
            return 0;
    }
    return 1;
}

/* 1: is an int (value in *out), 0: not an int, -1: an int out of range. */
static int int_text(const char *s, json_int_t *out)
{
    const char *digits = s;
    int base = 10;
    if (s[0] == '0' && s[1] == 'o') {
        digits = s + 2;
        base = 8;
    } else if (s[0] == '0' && s[1] == 'x') {
        digits = s + 2;
        base = 16;
    } else if (s[0] == '-' || s[0] == '+') {
        digits = s + 1;
    }
    if (!all_digits(digits, base))
        return 0;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(base == 10 ? s : digits, &end, base);
    if (errno == ERANGE || end == NULL || *end != '\0')
        return -1;
    *out = (json_int_t)v;
    return 1;
}

static int float_text(const char *s, double *out, int *special)
{
    const char *p = s;
    *special = 0;
    if (*p == '-' || *p == '+')
        p++;
    if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0 ||
        strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0) {
        *special = 1;
        return 1;
    }
    /* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
    size_t nd = 0;
    while (*p >= '0' && *p <= '9') {
        p++;
        nd++;
    }
    if (*p == '.') {
        p++;
        size_t nf = 0;
        while (*p >= '0' && *p <= '9') {
            p++;
            nf++;
        }
        if (nd == 0 && nf == 0)
            return 0;
    } else if (nd == 0) {
        return 0;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p != '\0')
        return 0;
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE && isinf(v)) {
        *special = 1;
        return 1;
    }
    *out = v;
    return 1;
}

static int scalar_value(builder *b, const yaml_event_t *ev, json_t **out)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    yaml_mark_t mark = ev->start_mark;
    json_int_t iv;
    double dv;
    int bv, special, r;

    *out = NULL;
    if (tag == NULL) {
        if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
            *out = json_stringn(text, len);
            goto done;
        }
        if (is_null_text(text)) {
            *out = json_null();
            goto done;
        }
        if (bool_text(text, &bv)) {
            *out = json_boolean(bv);
            goto done;
        }
        if ((r = int_text(text, &iv)) != 0) {
            if (r < 0)
                return fail_at(b, TOPO_EINVALID, mark, "integer %s out of range", text);
            *out = json_integer(iv);
            goto done;
        }
        if (float_text(text, &dv, &special)) {
            if (special)
                return fail_at(b, TOPO_EINVALID, mark,
                               "%s: infinity and NaN cannot be represented", text);
            *out = json_real(dv);
            goto done;
        }
        *out = json_stringn(text, len);
        goto done;
    }
    if (strcmp(tag, TAG_STR) == 0 || strcmp(tag, "!") == 0) {
        *out = json_stringn(text, len);
    } else if (strcmp(tag, TAG_NULL) == 0) {
        if (!is_null_text(text))
            return fail_at(b, TOPO_EINVALID, mark, "\"%s\" is not a null", text);
        *out = json_null();
    } else if (strcmp(tag, TAG_BOOL) == 0) {
        if (!bool_text(text, &bv))
            return fail_at(b, TOPO_EINVALID, mark, "\"%s\" is not a boolean", text);
        *out = json_boolean(bv);
    } else if (strcmp(tag, TAG_INT) == 0) {
        r = int_text(text, &iv);
        if (r == 0)
            return fail_at(b, TOPO_EINVALID, mark, "\"%s\" is not an integer", text);
        if (r < 0)
            return fail_at(b, TOPO_EINVALID, mark, "integer %s out of range", text);
        *out = json_integer(iv);
    } else if (strcmp(tag, TAG_FLOAT) == 0) {
        if (int_text(text, &iv) == 1) {
            *out = json_real((double)iv);
        } else if (float_text(text, &dv, &special) && !special) {
            *out = json_real(dv);
        } else {
            return fail_at(b, TOPO_EINVALID, mark, "\"%s\" is not a finite float", text);
        }
    } else {
        return fail_at(b, TOPO_EINVALID, mark, "unsupported tag %s", tag);
    }
done:
    if (*out == NULL)
        return fail_at(b, TOPO_ENOMEM, mark, "%s", "out of memory");
    return 0;
}

/* --- tree building ----------------------------------------------------------- */

/* Records where value starts. true/false/null are shared singletons in
 * jansson, so their position would be ambiguous: they are not recorded. */
static int record_mark(builder *b, const json_t *value, yaml_mark_t mark)
{
    topo_codec_marks *m = b->marks;
    if (m == NULL || json_is_true(value) || json_is_false(value) || json_is_null(value))
        return 0;
    if (m->n == m->cap && topo_array_reserve((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v)) != 0)
        return fail_at(b, TOPO_ENOMEM, mark, "%s", "out of memory");
    m->v[m->n].value = value;
    m->v[m->n].line = (int)mark.line + 1;
    m->v[m->n].column = (int)mark.column + 1;
    m->n++;
    return 0;
}

/* Attaches a new value (reference stolen) to the current container. */
static int attach(builder *b, json_t *value, yaml_mark_t mark)
{
    int error;
    if ((error = record_mark(b, value, mark)) < 0) {
        json_decref(value);
        return error;
    }
    if (b->depth == 0) {
        b->root = value;
        return 0;
    }
    frame *top = &b->stack[b->depth - 1];
    if (json_is_array(top->container)) {
        if (json_array_append_new(top->container, value) < 0)
            return fail_at(b, TOPO_ENOMEM, mark, "%s", "out of memory");
        return 0;
    }
    /* A mapping: value for the pending key. */
    if (json_object_get(top->container, top->key) != NULL) {
        json_decref(value);
        return fail_at(b, TOPO_EINVALID, top->key_mark, "duplicate key \"%s\"", top->key);
    }
    if (json_object_set_new(top->container, top->key, value) < 0)
        return fail_at(b, TOPO_ENOMEM, mark, "%s", "out of memory");
    free(top->key);
    top->key = NULL;
    return 0;
}

static int expecting_key(const builder *b)
{
    if (b->depth == 0)
        return 0;
    const frame *top = &b->stack[b->depth - 1];
    return json_is_object(top->container) && top->key == NULL;
}

static int on_scalar(builder *b, const yaml_event_t *ev)
{
    json_t *value = NULL;
    int error;

    if (expecting_key(b)) {
        frame *top = &b->stack[b->depth - 1];
        /* Keys are strings in JSON: any scalar's text is the key. */
        if (strlen((const char *)ev->data.scalar.value) != ev->data.scalar.length)
            return fail_at(b, TOPO_EINVALID, ev->start_mark, "%s", "NUL byte in a mapping key");
        top->key = strdup((const char *)ev->data.scalar.value);
        if (top->key == NULL)
            return fail_at(b, TOPO_ENOMEM, ev->start_mark, "%s", "out of memory");
        top->key_mark = ev->start_mark;
        return 0;
    }
    if ((error = scalar_value(b, ev, &value)) < 0)
        return error;
    return attach(b, value, ev->start_mark);
}

static int on_collection_start(builder *b, const yaml_event_t *ev, int is_map)
{
    json_t *value;
    int error;

    if (expecting_key(b))
        return fail_at(b, TOPO_EINVALID, ev->start_mark, "%s",
                       "complex mapping keys are not supported");
    if (b->depth >= TOPO_MAX_DOCUMENT_DEPTH) {
        char limit[32];
        snprintf(limit, sizeof(limit), "%d", TOPO_MAX_DOCUMENT_DEPTH);
        return fail_at(b, TOPO_ELIMIT, ev->start_mark, "nesting deeper than %s levels", limit);
    }
    value = is_map ? json_object() : json_array();
    if (value == NULL)
        return fail_at(b, TOPO_ENOMEM, ev->start_mark, "%s", "out of memory");
    if ((error = attach(b, value, ev->start_mark)) < 0)
        return error;
    b->stack[b->depth].container = value;
    b->stack[b->depth].key = NULL;
    b->depth++;
    return 0;
}

static int parser_error(builder *b, const yaml_parser_t *p, const char *text, size_t len)
{
    yaml_mark_t mark = p->problem_mark;
    const char *problem = p->problem != NULL ? p->problem : "invalid YAML";
    char msg[TOPO_ERR_TEXT_MAX];

    if (p->error == YAML_MEMORY_ERROR)
        return topo_err_nomem(b->err, b->src);
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors carry a byte offset, not a mark. */
        mark.line = 0;
        mark.column = 0;
        for (size_t i = 0; i < p->problem_offset && i < len; i++) {
            if (text[i] == '\n') {
                mark.line++;
                mark.column = 0;
            } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
                mark.column++;
            }
        }
    }
    if (p->context != NULL)
        snprintf(msg, sizeof(msg), "%s (%s at line %zu, column %zu)", problem, p->context,
                 p->context_mark.line + 1, p->context_mark.column + 1);
    else
        snprintf(msg, sizeof(msg), "%s", problem);
    return fail_at(b, TOPO_EINVALID, mark, "%s", msg);
}

static int parse_yaml(json_t **out, topo_codec_marks *marks, int one_document, const char *text,
                      size_t len, const char *source, topo_err *err)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    builder b;
    int error = 0, done = 0, have_event = 0, have_parser = 0;

    *out = NULL;
    memset(&b, 0, sizeof(b));
    b.source = source;
    b.src = source != NULL ? source : "<input>";
    b.err = err;
    b.marks = marks;
    b.one_document = one_document;

    if (!yaml_parser_initialize(&parser)) {
        error = topo_err_nomem(err, b.src);
        goto cleanup;
    }
    have_parser = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

    while (!done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            error = parser_error(&b, &parser, text, len);
            goto cleanup;
        }
        have_event = 1;
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            /* A configuration read in two documents would silently lose
             * the second's fields: refuse it where it starts. */
            if (b.first_done)
                error = fail_at(&b, TOPO_EINVALID, ev.start_mark, "%s",
                                "a second YAML document: one configuration document expected");
            break;
        case YAML_DOCUMENT_END_EVENT:
            /* Only the first document; a configuration reader reads on to
             * the stream's end to be sure there is no other. */
            b.first_done = 1;
            done = !b.one_document;
            break;
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_ALIAS_EVENT:
            error = fail_at(&b, TOPO_EINVALID, ev.start_mark, "%s",
                            "aliases (*name) are not supported");
            break;
        case YAML_SCALAR_EVENT:
            error = on_scalar(&b, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            error = on_collection_start(&b, &ev, 0);
            break;
        case YAML_MAPPING_START_EVENT:
            error = on_collection_start(&b, &ev, 1);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (b.depth > 0)
                b.depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
        have_event = 0;
        if (error < 0)
            goto cleanup;
    }
    if (b.root == NULL) {
        b.root = json_null(); /* an empty stream */
    }
    *out = b.root;
    b.root = NULL;

cleanup:
    if (have_event)
        yaml_event_delete(&ev);
    for (size_t i = 0; i < TOPO_MAX_DOCUMENT_DEPTH; i++)
        free(b.stack[i].key);
    json_decref(b.root);
    if (have_parser)
        yaml_parser_delete(&parser);
    return error;
}

int topo_codec_yaml_parse(json_t **out, const char *text, size_t len, const char *source,
                          topo_err *err)
{
    return parse_yaml(out, NULL, 0, text, len, source, err);
}

int topo_codec_yaml_parse_marks(json_t **out, topo_codec_marks **marks_out, const char *text,
                                size_t len, const char *source, topo_err *err)
{
    topo_codec_marks *m;
    int error;

    *out = NULL;
    *marks_out = NULL;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return topo_err_nomem(err, source != NULL ? source : "<input>");
    if ((error = parse_yaml(out, m, 1, text, len, source, err)) < 0) {
        topo_codec_marks_free(m);
        return error;
    }
    *marks_out = m;
    return 0;
}

int topo_codec_marks_find(const topo_codec_marks *marks, const json_t *value, int *line,
                          int *column)
{
    if (marks == NULL || value == NULL)
        return 0;
    for (size_t i = 0; i < marks->n; i++) {
        if (marks->v[i].value == value) {
            *line = marks->v[i].line;
            *column = marks->v[i].column;
            return 1;
        }
    }
    return 0;
}

void topo_codec_marks_free(topo_codec_marks *marks)
{
    if (marks == NULL)
        return;
    free(marks->v);
    free(marks);
}

/* --- emitting ------------------------------------------------------------------ */

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    return topo_buf_put(data, buffer, size) == 0;
}

/* A string that a plain scalar would not give back (8, true, null, "")
 * must be quoted. */
static int needs_quotes(const char *s)
{
    json_int_t iv;
    double dv;
    int bv, special;
    return is_null_text(s) || bool_text(s, &bv) || int_text(s, &iv) != 0 ||
           float_text(s, &dv, &special);
}

static int emit_scalar(yaml_emitter_t *em, const char *text, size_t len, int quote)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)text, (int)len,
                                      1, 1,
                                      quote ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                            : YAML_ANY_SCALAR_STYLE))
        return -1;
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int emit_value(yaml_emitter_t *em, const json_t *v, int depth)
{
    yaml_event_t ev;
    char num[64];

    if (depth > TOPO_MAX_DOCUMENT_DEPTH)
        return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *child;
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        json_object_foreach((json_t *)v, key, child) {
            if (emit_scalar(em, key, strlen(key), needs_quotes(key)) < 0 ||
                emit_value(em, child, depth + 1) < 0)
                return -1;
        }
        if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
            return -1;
        return 0;
    }
    case JSON_ARRAY: {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        for (size_t i = 0; i < json_array_size(v); i++)
            if (emit_value(em, json_array_get(v, i), depth + 1) < 0)
                return -1;
        if (!yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
            return -1;
        return 0;
    }
    case JSON_STRING: {
        const char *s = json_string_value(v);
        return emit_scalar(em, s, json_string_length(v), needs_quotes(s));
    }
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(em, num, strlen(num), 0);
    case JSON_REAL: {
        double d = json_real_value(v);
        snprintf(num, sizeof(num), "%.17g", d);
        if (strspn(num, "-0123456789") == strlen(num)) /* keep it a float */
            strncat(num, ".0", sizeof(num) - strlen(num) - 1);
        return emit_scalar(em, num, strlen(num), 0);
    }
    case JSON_TRUE:
        return emit_scalar(em, "true", 4, 0);
    case JSON_FALSE:
        return emit_scalar(em, "false", 5, 0);
    case JSON_NULL:
    default:
        return emit_scalar(em, "null", 4, 0);
    }
}

int topo_codec_yaml_dump(char **out, const json_t *value, topo_err *err)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    topo_buf o = TOPO_BUF_INIT(0);
    int error = 0, have_emitter = 0;

    *out = NULL;
    if (!yaml_emitter_initialize(&em)) {
        error = topo_err_set(err, TOPO_ENOMEM, "yaml: out of memory");
        goto cleanup;
    }
    have_emitter = 1;
    yaml_emitter_set_output(&em, write_handler, &o);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_emitter_set_indent(&em, 2);
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
        !yaml_emitter_emit(&em, &ev) ||
        !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
        !yaml_emitter_emit(&em, &ev) || emit_value(&em, value, 0) < 0 ||
        !yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&em, &ev) ||
        !yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&em, &ev) ||
        !yaml_emitter_flush(&em)) {
        error = o.error != 0 || em.error == YAML_MEMORY_ERROR
                    ? topo_err_set(err, TOPO_ENOMEM, "yaml: out of memory")
                    : topo_err_set(err, TOPO_EINVALID, "yaml: cannot emit: %s",
                                   em.problem ? em.problem : "nesting too deep");
        goto cleanup;
    }
    if ((*out = topo_buf_take(&o, NULL)) == NULL)
        error = topo_err_set(err, TOPO_ENOMEM, "yaml: out of memory");

cleanup:
    topo_buf_dispose(&o);
    if (have_emitter)
        yaml_emitter_delete(&em);
    return error;
}
