/* test/support/jsonpatch_apply.h */
#include "support/jsonpatch_apply.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

/* The next reference token of *path (after its '/'), unescaped into tok;
 * -1 when it does not fit or the pointer is malformed. */
static int next_token(const char **path, char *tok, size_t size)
{
    const char *p = *path;
    size_t n = 0;
    if (*p != '/')
        return -1;
    for (p++; *p != '\0' && *p != '/'; p++) {
        char c = *p;
        if (c == '~') {
            c = p[1] == '0' ? '~' : p[1] == '1' ? '/' : '\0';
            if (c == '\0')
                return -1;
            p++;
        }
        if (n + 1 >= size)
            return -1;
        tok[n++] = c;
    }
    tok[n] = '\0';
    *path = p;
    return 0;
}

static int apply_one(json_t *doc, const json_t *op)
{
    const char *name = json_string_value(json_object_get(op, "op"));
    const char *path = json_string_value(json_object_get(op, "path"));
    json_t *value = json_object_get(op, "value");
    json_t *parent = doc;
    char tok[1024];
    if (name == NULL || path == NULL || next_token(&path, tok, sizeof tok) < 0)
        return -1;
    while (*path != '\0') { /* walk to the last token's parent */
        json_t *child = json_is_object(parent) ? json_object_get(parent, tok)
                        : json_is_array(parent) ? json_array_get(parent, strtoul(tok, NULL, 10))
                                                : NULL;
        if (child == NULL || next_token(&path, tok, sizeof tok) < 0)
            return -1;
        parent = child;
    }
    if (json_is_object(parent)) {
        json_t *cur = json_object_get(parent, tok);
        if (strcmp(name, "add") == 0)
            return value ? json_object_set(parent, tok, value) : -1;
        if (strcmp(name, "replace") == 0)
            return cur && value ? json_object_set(parent, tok, value) : -1;
        if (strcmp(name, "remove") == 0)
            return cur ? json_object_del(parent, tok) : -1;
        if (strcmp(name, "test") == 0)
            return cur && value && json_equal(cur, value) ? 0 : -1;
        return -1;
    }
    if (!json_is_array(parent))
        return -1;
    size_t n = json_array_size(parent);
    if (strcmp(name, "add") == 0 && strcmp(tok, "-") == 0)
        return value ? json_array_append(parent, value) : -1;
    char *end = NULL;
    size_t i = strtoul(tok, &end, 10);
    if (end == tok || *end != '\0')
        return -1;
    if (strcmp(name, "add") == 0)
        return value && i <= n ? json_array_insert(parent, i, value) : -1;
    if (i >= n)
        return -1;
    if (strcmp(name, "replace") == 0)
        return value ? json_array_set(parent, i, value) : -1;
    if (strcmp(name, "remove") == 0)
        return json_array_remove(parent, i);
    if (strcmp(name, "test") == 0)
        return value && json_equal(json_array_get(parent, i), value) ? 0 : -1;
    return -1;
}

int test_jsonpatch_apply(json_t *doc, const json_t *ops)
{
    size_t i;
    const json_t *op;
    if (!json_is_array(ops))
        return -1;
    json_array_foreach(ops, i, op) {
        if (apply_one(doc, op) < 0)
            return -1;
    }
    return 0;
}

json_t *test_jsonpatch_of_response(const json_t *resp)
{
    const char *b64 = json_string_value(json_object_get(resp, "patch"));
    if (b64 == NULL)
        return NULL;
    size_t n = strlen(b64);
    unsigned char *buf = malloc(n + 1);
    assert_non_null(buf);
    int m = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)n);
    assert_true(m >= 0);
    /* EVP_DecodeBlock counts the padding's bytes as zeros */
    while (m > 0 && buf[m - 1] == '\0')
        m--;
    json_error_t jerr;
    json_t *ops = json_loadb((const char *)buf, (size_t)m, 0, &jerr);
    free(buf);
    assert_non_null(ops);
    return ops;
}
