/* The elements of a large JSON array one at a time (topo/codec.h
 * topo_codec_json_each). jansson builds a whole document's tree, about ten
 * times the size of its text in small allocations: a 10,000-node cluster's
 * UFM systems response (80,000 adapters) would need 250 MB of tree and
 * spend more time in malloc and page faults than in parsing. Here the
 * brackets, commas and keys around the array are read by hand (JSON's
 * grammar there is a handful of characters) and each element is parsed by
 * jansson on its own (JSON_DISABLE_EOF_CHECK tells how many bytes it took),
 * handed to the caller and freed before the next. The members of an
 * object can be walked the same way without parsing their values at all
 * (topo_codec_json_members): each value's extent is found by its brackets
 * and strings, for the caller to parse one at a time. */
#include "topo/codec.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "topo/json.h"
#include "topo/pool.h"
#include "topo/strmap.h"

typedef struct reader {
    const char *text;
    size_t len, pos;
    const char *source;
    topo_err *err;
} reader;

static void skip_space(reader *r)
{
    while (r->pos < r->len && (r->text[r->pos] == ' ' || r->text[r->pos] == '\t' ||
                               r->text[r->pos] == '\n' || r->text[r->pos] == '\r'))
        r->pos++;
}

/* Line and column (1-based) of offset pos, columns counted in characters
 * as jansson counts them (a byte that can start a UTF-8 sequence is one);
 * counted only for a message, so the happy path never scans twice. */
static void locate(const reader *r, size_t pos, int *line, int *column)
{
    size_t l = 1, c = 1;
    for (size_t i = 0; i < pos && i < r->len; i++) {
        unsigned char b = (unsigned char)r->text[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if (b < 0x80 || (b >= 0xC2 && b <= 0xF4)) {
            c++;
        }
    }
    *line = l > (size_t)INT_MAX ? INT_MAX : (int)l;
    *column = c > (size_t)INT_MAX ? INT_MAX : (int)c;
}

static int fail_at(reader *r, size_t pos, int line_off, int column, const char *what)
{
    int line = 1, col = 1;
    locate(r, pos, &line, &col);
    /* jansson's position is relative to where its parse began. */
    if (line_off > 1) {
        line += line_off - 1;
        col = column;
    } else if (column > 1) {
        col += column - 1;
    }
    const char *src = r->source ? r->source : "<input>";
    topo_err_set(r->err, TOPO_EINVALID, "%s:%d:%d: %s", src, line, col, what);
    topo_err_at(r->err, r->source, line, col);
    return TOPO_EINVALID;
}

/* The last byte of the token at pos as jansson's lexer reads it (a
 * string, a number or a word; else one character): jansson reports an
 * unexpected token at its end, and so do we, for the same line:column. */
static size_t token_last(const reader *r)
{
    size_t p = r->pos;
    char c = r->text[p];
    if (c == '"') {
        for (p++; p < r->len && r->text[p] != '"'; p++)
            if (r->text[p] == '\\' && p + 1 < r->len)
                p++;
        return p < r->len ? p : r->len - 1;
    }
    if (c == '-' || isalnum((unsigned char)c))
        while (p + 1 < r->len && (isalnum((unsigned char)r->text[p + 1]) ||
                                  r->text[p + 1] == '.' || r->text[p + 1] == '+' ||
                                  r->text[p + 1] == '-'))
            p++;
    return p;
}

static int expected(reader *r, const char *what)
{
    char msg[160];
    if (r->pos < r->len) {
        size_t last = token_last(r);
        int n = last - r->pos + 1 > 40 ? 40 : (int)(last - r->pos + 1);
        snprintf(msg, sizeof msg, "%s expected near '%.*s'", what, n, r->text + r->pos);
        return fail_at(r, last, 1, 1, msg);
    }
    /* At the end jansson names the last character read, as here. */
    snprintf(msg, sizeof msg, "%s expected near end of file", what);
    int line = 1, col = 1;
    locate(r, r->len, &line, &col);
    return fail_at(r, r->len > 0 && col > 1 ? r->len - 1 : r->len, 1, 1, msg);
}

/* One JSON value at pos (any type), parsed by jansson; pos moves past it. */
static int value(json_t **out, reader *r)
{
    json_error_t jerr;
    if (r->pos >= r->len)
        return expected(r, "value");
    int rc = topo_json_load(out, r->text + r->pos, r->len - r->pos,
                            JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
                            &jerr);
    if (rc == TOPO_ENOMEM)
        return topo_err_nomem(r->err, r->source ? r->source : "<input>");
    if (rc != 0)
        return fail_at(r, r->pos, jerr.line > 0 ? jerr.line : 1,
                       jerr.column > 0 ? jerr.column : 1, jerr.text);
    r->pos += (size_t)jerr.position;
    return 0;
}

/* The array at pos ('[' already checked): each element to fn. */
static int each_element(reader *r, topo_codec_each_fn fn, void *payload)
{
    size_t index = 0;
    r->pos++;
    skip_space(r);
    if (r->pos < r->len && r->text[r->pos] == ']') {
        r->pos++;
        return 0;
    }
    for (;;) {
        json_t *v = NULL;
        skip_space(r);
        int rc = value(&v, r);
        if (rc == 0)
            rc = fn(v, index++, payload, r->err);
        json_decref(v);
        if (rc != 0)
            return rc;
        skip_space(r);
        if (r->pos < r->len && r->text[r->pos] == ',') {
            r->pos++;
            continue;
        }
        if (r->pos < r->len && r->text[r->pos] == ']') {
            r->pos++;
            return 0;
        }
        return expected(r, "',' or ']'");
    }
}

/* One member's key at pos: a string not seen before; pos moves past the
 * ':' after it. *out is the key (a new reference). */
static int member_key(json_t **out, reader *r, topo_pool *pool, topo_strmap *seen)
{
    if (r->pos >= r->len || r->text[r->pos] != '"')
        return expected(r, "string");
    int rc = value(out, r);
    if (rc != 0)
        return rc;
    const char *k = json_string_value(*out);
    if (topo_strmap_get(seen, k) >= 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "duplicate object key near '\"%.80s\"'", k);
        return fail_at(r, r->pos - 1, 1, 1, msg); /* the key's last byte, as jansson */
    }
    const char *copy = topo_pool_strdup(pool, k);
    if (!copy || topo_strmap_put(seen, copy, 0) != 0)
        return topo_err_nomem(r->err, "JSON member names");
    skip_space(r);
    if (r->pos >= r->len || r->text[r->pos] != ':')
        return expected(r, "':'");
    r->pos++;
    skip_space(r);
    return 0;
}

/* The top-level object's members ('{' already checked): the member's array
 * to how->element, the others parsed (so that the text is checked as a
 * whole parse would) and given to how->other. *found stays 0 when the
 * member is absent or not an array (a member that is not an array goes to
 * nobody: the caller parses the document whole). */
static int each_member(reader *r, const topo_codec_each *how, int *found)
{
    topo_pool *pool = topo_pool_create();
    topo_strmap *seen = topo_strmap_create(16);
    int rc = 0;
    if (!pool || !seen) {
        rc = topo_err_nomem(r->err, "JSON reader");
        goto cleanup;
    }
    r->pos++;
    skip_space(r);
    if (r->pos < r->len && r->text[r->pos] == '}') {
        r->pos++;
        goto cleanup;
    }
    for (;;) {
        json_t *key = NULL, *v = NULL;
        rc = member_key(&key, r, pool, seen);
        int is_member = rc == 0 && strcmp(json_string_value(key), how->member) == 0;
        if (rc == 0 && is_member && r->pos < r->len && r->text[r->pos] == '[') {
            *found = 1;
            rc = each_element(r, how->element, how->payload);
        } else if (rc == 0 && (rc = value(&v, r)) == 0 && how->other && !is_member) {
            rc = how->other(json_string_value(key), v, how->payload, r->err);
        }
        json_decref(v);
        json_decref(key);
        if (rc != 0)
            break;
        skip_space(r);
        if (r->pos < r->len && r->text[r->pos] == ',') {
            r->pos++;
            skip_space(r);
            continue;
        }
        if (r->pos < r->len && r->text[r->pos] == '}') {
            r->pos++;
            break;
        }
        rc = expected(r, "',' or '}'");
        break;
    }
cleanup:
    topo_strmap_free(seen);
    topo_pool_free(pool);
    return rc;
}

int topo_codec_json_each(int *found, const char *text, size_t len, const char *source,
                         const topo_codec_each *how, topo_err *err)
{
    reader r = {.text = text, .len = len, .source = source, .err = err};
    int rc = 0;
    *found = 0;
    /* A NUL byte is no JSON outside a string (and refused inside one), but
     * jansson reads it as the end of what it was given, so that a whole
     * parse and a parse of a part disagree: such text is left to the whole
     * parse (fuzz_netbox found one). */
    if (len > 0 && memchr(text, '\0', len) != NULL)
        return 0;
    skip_space(&r);
    char open = r.pos < len ? text[r.pos] : '\0';
    if (!how->member && open == '[') {
        *found = 1;
        rc = each_element(&r, how->element, how->payload);
    } else if (how->member && open == '{') {
        rc = each_member(&r, how, found);
    } else {
        return 0; /* another shape: the caller parses it whole */
    }
    skip_space(&r);
    if (rc == 0 && r.pos < len)
        rc = fail_at(&r, r.pos, 1, 1, "end of file expected");
    return rc;
}

/* Past the value at pos without building it: a string, or an array or
 * object up to its matching bracket (brackets inside strings do not count),
 * or a scalar up to the next delimiter. Only the extent is found here; the
 * caller's parse of the value checks the rest. */
static int skip_value(reader *r)
{
    if (r->pos >= r->len)
        return expected(r, "value");
    size_t depth = 0, p = r->pos;
    char c = r->text[p];
    if (c != '"' && c != '[' && c != '{') {
        while (p < r->len && !strchr(",}] \t\n\r", r->text[p]))
            p++;
        r->pos = p;
        return 0;
    }
    for (; p < r->len; p++) {
        c = r->text[p];
        if (c == '"') {
            for (p++; p < r->len && r->text[p] != '"'; p++)
                if (r->text[p] == '\\')
                    p++;
            if (p >= r->len)
                break;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        }
        if (depth == 0) {
            r->pos = p + 1;
            return 0;
        }
    }
    r->pos = r->len;
    return expected(r, depth > 0 ? "']' or '}'" : "'\"'");
}

int topo_codec_json_members(int *found, const char *text, size_t len, const char *source,
                            topo_codec_span_fn fn, void *payload, topo_err *err)
{
    reader r = {.text = text, .len = len, .source = source, .err = err};
    *found = 0;
    if (len > 0 && memchr(text, '\0', len) != NULL)
        return 0; /* as topo_codec_json_each: left to the whole parse */
    skip_space(&r);
    if (r.pos >= len || text[r.pos] != '{')
        return 0;
    *found = 1;
    topo_pool *pool = topo_pool_create();
    topo_strmap *seen = topo_strmap_create(16);
    int rc = 0;
    if (!pool || !seen) {
        rc = topo_err_nomem(err, "JSON reader");
        goto cleanup;
    }
    r.pos++;
    skip_space(&r);
    if (r.pos < len && text[r.pos] == '}') {
        r.pos++;
        goto end;
    }
    for (;;) {
        json_t *key = NULL;
        rc = member_key(&key, &r, pool, seen);
        size_t at = r.pos;
        if (rc == 0)
            rc = skip_value(&r);
        if (rc == 0)
            rc = fn(json_string_value(key), at, r.pos - at, payload, err);
        json_decref(key);
        if (rc != 0)
            goto cleanup;
        skip_space(&r);
        if (r.pos < len && text[r.pos] == ',') {
            r.pos++;
            skip_space(&r);
            continue;
        }
        if (r.pos < len && text[r.pos] == '}') {
            r.pos++;
            break;
        }
        rc = expected(&r, "',' or '}'");
        goto cleanup;
    }
end:
    skip_space(&r);
    if (r.pos < len)
        rc = fail_at(&r, r.pos, 1, 1, "end of file expected");
cleanup:
    topo_strmap_free(seen);
    topo_pool_free(pool);
    return rc;
}
