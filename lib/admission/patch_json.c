/* RFC 6902 JSON Patch builder and RFC 6901 pointer escaping (jansson). */
#include "topo/jsonpatch.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/json.h"

struct topo_jsonpatch {
    json_t *ops; /* array of operation objects */
};

int topo_jsonpatch_new(topo_jsonpatch **out)
{
    topo_jsonpatch *p = calloc(1, sizeof(*p));
    *out = NULL;
    if (p == NULL)
        return TOPO_ENOMEM;
    p->ops = json_array();
    if (p->ops == NULL) {
        free(p);
        return TOPO_ENOMEM;
    }
    *out = p;
    return 0;
}

void topo_jsonpatch_free(topo_jsonpatch *patch)
{
    if (patch == NULL)
        return;
    json_decref(patch->ops);
    free(patch);
}

size_t topo_jsonpatch_count(const topo_jsonpatch *patch)
{
    return patch == NULL ? 0 : json_array_size(patch->ops);
}

void topo_jsonpatch_truncate(topo_jsonpatch *patch, size_t n)
{
    while (json_array_size(patch->ops) > n)
        json_array_remove(patch->ops, json_array_size(patch->ops) - 1);
}

int topo_json_pointer_join(char **out, const char *parent, const char *token)
{
    size_t plen = strlen(parent), extra = 0, n;
    char *s;

    *out = NULL;
    for (const char *c = token; *c; c++)
        extra += *c == '~' || *c == '/';
    s = malloc(plen + 1 + strlen(token) + extra + 1);
    if (s == NULL)
        return TOPO_ENOMEM;
    memcpy(s, parent, plen);
    n = plen;
    s[n++] = '/';
    for (const char *c = token; *c; c++) {
        if (*c == '~' || *c == '/') {
            s[n++] = '~';
            s[n++] = *c == '~' ? '0' : '1';
        } else {
            s[n++] = *c;
        }
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

/* Appends {"op": op, "path": path[, "value": value]}; steals value. */
static int push_new(topo_jsonpatch *patch, const char *op, const char *path, json_t *value)
{
    json_t *o = json_object();
    int bad = o == NULL || json_object_set_new(o, "op", json_string(op)) != 0 ||
              json_object_set_new(o, "path", json_string(path)) != 0;
    if (!bad && value != NULL) {
        bad = json_object_set_new(o, "value", value) != 0;
        value = NULL;
    }
    if (!bad) {
        bad = json_array_append_new(patch->ops, o) != 0;
        o = NULL;
    }
    json_decref(value);
    json_decref(o);
    return bad ? TOPO_ENOMEM : 0;
}

static int push_string(topo_jsonpatch *patch, const char *op, const char *path, const char *v)
{
    json_t *s = json_string(v);
    if (s == NULL) /* NULL or not UTF-8 (or, rarely, out of memory) */
        return TOPO_EINVALID;
    return push_new(patch, op, path, s);
}

int topo_jsonpatch_add_string(topo_jsonpatch *patch, const char *path, const char *value)
{
    return push_string(patch, "add", path, value);
}

int topo_jsonpatch_replace_string(topo_jsonpatch *patch, const char *path, const char *value)
{
    return push_string(patch, "replace", path, value);
}

int topo_jsonpatch_test_string(topo_jsonpatch *patch, const char *path, const char *value)
{
    return push_string(patch, "test", path, value);
}

int topo_jsonpatch_remove(topo_jsonpatch *patch, const char *path)
{
    return push_new(patch, "remove", path, NULL);
}

int topo_jsonpatch_add_new(topo_jsonpatch *patch, const char *path, json_t *value)
{
    return value == NULL ? TOPO_ENOMEM : push_new(patch, "add", path, value);
}

int topo_jsonpatch_add_map(topo_jsonpatch *patch, const char *path, const topo_kv *kv, size_t n)
{
    json_t *m = json_object();
    if (m == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_string(kv[i].value);
        if (v == NULL || json_object_set_new(m, kv[i].key, v) != 0) {
            json_decref(m);
            return TOPO_EINVALID;
        }
    }
    return push_new(patch, "add", path, m);
}

static json_t *named(const char *name)
{
    json_t *o = json_object();
    if (o != NULL && json_object_set_new(o, "name", json_string(name)) != 0) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

int topo_jsonpatch_add_named(topo_jsonpatch *patch, const char *path, const char *name)
{
    json_t *o = named(name);
    return o == NULL ? TOPO_ENOMEM : push_new(patch, "add", path, o);
}

int topo_jsonpatch_add_named_list(topo_jsonpatch *patch, const char *path, const char *name)
{
    json_t *a = json_array(), *o = named(name);
    if (a == NULL || o == NULL || json_array_append_new(a, o) != 0) {
        json_decref(a);
        return TOPO_ENOMEM;
    }
    return push_new(patch, "add", path, a);
}

json_t *topo_jsonpatch_json(const topo_jsonpatch *patch)
{
    return json_incref(patch->ops);
}

int topo_jsonpatch_dump(char **out, const topo_jsonpatch *patch)
{
    *out = topo_json_dumps(patch->ops, JSON_COMPACT);
    return *out == NULL ? TOPO_ENOMEM : 0;
}
