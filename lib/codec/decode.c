/* Decoding helpers for Kubernetes-shaped JSON: resource maps, string maps,
 * taints, tolerations and typed fields, with path-naming errors. */
#include "topo/decode.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "topo/cfgreader.h"
#include "topo/quantity.h"

char *topo_decode_path_key(char *buf, size_t size, const char *path, const char *key)
{
    if (path == NULL || path[0] == '\0')
        snprintf(buf, size, "%s", key);
    else
        snprintf(buf, size, "%s.%s", path, key);
    return buf;
}

char *topo_decode_path_index(char *buf, size_t size, const char *path, size_t index)
{
    snprintf(buf, size, "%s[%zu]", path != NULL ? path : "", index);
    return buf;
}

/* The words for a jansson type in messages: "expected <type_word(want)>,
 * got <topo_decode_type_name(value)>" use the same ones. */
static const char *type_word(json_type type)
{
    switch (type) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
    default:
        return "null";
    }
}

const char *topo_decode_type_name(const json_t *value)
{
    return type_word(json_typeof(value));
}

static int absent(const json_t *v)
{
    return v == NULL || json_is_null(v);
}

/* The typed getters are topo/cfgreader.h's readers over a context with no
 * source and no marks (messages stay "path.key: problem"): one type check,
 * one bound and one message for configuration files and Kubernetes objects.
 * The context lives on the stack: nothing is allocated for a good value but
 * the copy a pool asks for. */
#define DECODE_CFG(pool_, err_) {.pool = (pool_), .err = (err_), .copy_strings = (pool_) != NULL}

int topo_decode_member(const json_t **out, const json_t *obj, const char *key, const char *path,
                       json_type type, int required, topo_err *err)
{
    const topo_cfg c = DECODE_CFG(NULL, err);
    *out = NULL;
    return topo_cfg_member(&c, out, obj, key, path, type, type_word(type), required);
}

int topo_decode_string(const char **out, const json_t *obj, const char *key, const char *path,
                       int required, topo_pool *pool, topo_err *err)
{
    const topo_cfg c = DECODE_CFG(pool, err);
    return topo_cfg_string(&c, out, obj, key, path, required);
}

int topo_decode_int(int64_t *out, const json_t *obj, const char *key, const char *path,
                    int required, topo_err *err)
{
    const topo_cfg c = DECODE_CFG(NULL, err);
    int error = required ? topo_cfg_require(&c, obj, key, path) : 0;
    return error != 0 ? error : topo_cfg_int(&c, out, obj, key, path, INT64_MIN, INT64_MAX);
}

/* --- RFC 3339 times ------------------------------------------------------------------ */

/* n decimal digits at *s, advanced past them; -1 when not digits. */
static int digits(const char **s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*s)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *s += n;
    return v;
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (Howard Hinnant's
 * days_from_civil): no timegm, which is neither C11 nor POSIX. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* RFC 3339, or with `wall` also a space between date and time and no zone
 * (then the wall time is read as UTC). */
static int parse_time(int64_t *out, const char *text, int wall)
{
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *s = text;
    int y, mo, d, h, mi, sec, off = 0;
    if (s == NULL || (y = digits(&s, 4)) < 1970 || *s++ != '-' || (mo = digits(&s, 2)) < 1 ||
        mo > 12 || *s++ != '-' || (d = digits(&s, 2)) < 1 || d > mdays[mo - 1] ||
        (*s != 'T' && *s != 't' && !(wall && *s == ' ')) || (++s, (h = digits(&s, 2)) < 0) ||
        h > 23 || *s++ != ':' ||
        (mi = digits(&s, 2)) < 0 || mi > 59 || *s++ != ':' || (sec = digits(&s, 2)) < 0 ||
        sec > 60)
        return TOPO_EINVALID;
    if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
        return TOPO_EINVALID;
    if (*s == '.') {
        const char *f = ++s;
        while (*s >= '0' && *s <= '9')
            s++;
        if (s == f || s - f > 9)
            return TOPO_EINVALID;
    }
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        int sign = *s++ == '-' ? -1 : 1, oh, om;
        if ((oh = digits(&s, 2)) < 0 || oh > 23 || *s++ != ':' || (om = digits(&s, 2)) < 0 ||
            om > 59)
            return TOPO_EINVALID;
        off = sign * (oh * 3600 + om * 60);
    } else if (!wall || *s != '\0') {
        return TOPO_EINVALID;
    }
    if (*s != '\0')
        return TOPO_EINVALID;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + (sec > 59 ? 59 : sec) - off;
    return 0;
}

int topo_decode_parse_time(int64_t *out, const char *text)
{
    return parse_time(out, text, 0);
}

int topo_decode_parse_wall_time(int64_t *out, const char *text)
{
    return parse_time(out, text, 1);
}

int topo_decode_time(int64_t *out, const json_t *obj, const char *key, const char *path,
                     int required, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const topo_cfg c = DECODE_CFG(NULL, err);
    const json_t *v = NULL;
    int error;

    if ((error = topo_cfg_member(&c, &v, obj, key, path, JSON_STRING, "an RFC 3339 time",
                                 required)) < 0 ||
        v == NULL)
        return error;
    if (topo_decode_parse_time(out, json_string_value(v)) < 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: \"%.40s\" is not an RFC 3339 time (YYYY-MM-DDTHH:MM:SSZ)",
                            topo_decode_path_key(p, sizeof(p), path, key), json_string_value(v));
    return 0;
}

int topo_decode_bool(int *out, const json_t *obj, const char *key, const char *path,
                     int required, topo_err *err)
{
    const topo_cfg c = DECODE_CFG(NULL, err);
    int error = required ? topo_cfg_require(&c, obj, key, path) : 0;
    return error != 0 ? error : topo_cfg_bool(&c, out, obj, key, path);
}

/* --- resources ------------------------------------------------------------------ */

/* The skeleton of every map field (resources, labels): absent or empty is
 * none (*out NULL); another value than a map an error; else room for its
 * entries from pool, zeroed. */
static int map_room(void **out, const json_t *obj, const char *path, size_t size,
                    topo_pool *pool, topo_err *err)
{
    *out = NULL;
    if (absent(obj))
        return 0;
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    if (json_object_size(obj) == 0)
        return 0;
    if ((*out = topo_pool_calloc(pool, json_object_size(obj), size)) == NULL)
        return topo_err_nomem(err, path);
    return 0;
}

static int parse_amount(int64_t *out, const char *name, const json_t *v, const char *p,
                        topo_err *err)
{
    char text[64];
    const char *qty;
    topo_err qerr = TOPO_ERR_INIT;
    int error;

    if (json_is_string(v)) {
        qty = json_string_value(v);
    } else if (json_is_integer(v)) {
        snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        qty = text;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d))
            return topo_err_set(err, TOPO_EINVALID, "%s: invalid quantity", p);
        snprintf(text, sizeof(text), "%.15g", d);
        qty = text;
    } else {
        return topo_err_set(err, TOPO_EINVALID, "%s: expected a quantity, got %s", p,
                            topo_decode_type_name(v));
    }
    if ((error = topo_quantity_parse_resource(out, name, qty, &qerr)) < 0) {
        if (error == TOPO_ENOMEM)
            return topo_err_set(err, error, "%s: out of memory", p);
        if (error == TOPO_ELIMIT)
            return topo_err_set(err, error, "%s: quantity \"%s\" out of range", p, qty);
        return topo_err_set(err, TOPO_EINVALID, "%s: invalid quantity \"%s\"", p, qty);
    }
    if (*out < 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: quantity \"%s\" must not be negative", p,
                            qty);
    return 0;
}

int topo_decode_resources(topo_resource **out, size_t *out_n, const json_t *obj,
                          const char *path, topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    topo_resource *res = NULL;
    const char *key;
    json_t *v;
    size_t n = 0;
    int error;

    void *room = NULL;

    *out = NULL;
    *out_n = 0;
    if ((error = map_room(&room, obj, path, sizeof(*res), pool, err)) < 0 || room == NULL)
        return error;
    res = room;
    json_object_foreach((json_t *)obj, key, v) {
        topo_decode_path_key(p, sizeof(p), path, key);
        if (key[0] == '\0')
            return topo_err_set(err, TOPO_EINVALID, "%s: empty resource name", path);
        if ((error = parse_amount(&res[n].amount, key, v, p, err)) < 0)
            return error;
        if ((res[n].name = topo_pool_strdup(pool, key)) == NULL)
            return topo_err_nomem(err, path);
        n++;
    }
    *out = res;
    *out_n = n;
    return 0;
}

/* --- string maps ----------------------------------------------------------------- */

int topo_decode_kv(topo_kv **out, size_t *out_n, const json_t *obj, const char *path,
                   topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    topo_kv *kv;
    const char *key;
    json_t *v;
    size_t n = 0;

    void *room = NULL;
    int error;

    *out = NULL;
    *out_n = 0;
    if ((error = map_room(&room, obj, path, sizeof(*kv), pool, err)) < 0 || room == NULL)
        return error;
    kv = room;
    json_object_foreach((json_t *)obj, key, v) {
        if (!json_is_string(v))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected a string, got %s%s",
                                topo_decode_path_key(p, sizeof(p), path, key),
                                topo_decode_type_name(v),
                                json_is_object(v) || json_is_array(v) ? ""
                                                                       : " (quote the value)");
        kv[n].key = topo_pool_strdup(pool, key);
        kv[n].value = topo_pool_strdup(pool, json_string_value(v));
        if (kv[n].key == NULL || kv[n].value == NULL)
            return topo_err_nomem(err, path);
        n++;
    }
    *out = kv;
    *out_n = n;
    return 0;
}

/* --- taints and tolerations ------------------------------------------------------- */

static int valid_effect(const char *e)
{
    return strcmp(e, "NoSchedule") == 0 || strcmp(e, "PreferNoSchedule") == 0 ||
           strcmp(e, "NoExecute") == 0;
}

static int check_array(const json_t *obj, const char *path, topo_err *err)
{
    if (!json_is_array(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an array, got %s", path,
                            topo_decode_type_name(obj));
    return 0;
}

/* Decodes one element of an array of objects: e (an object) at path into
 * elem. */
typedef int (*decode_element_fn)(void *elem, const json_t *e, const char *path, topo_pool *pool,
                                 topo_err *err);

/* The skeleton of every array-of-objects field: absent or empty is none;
 * else n elements of size bytes from pool (zeroed), each decoded by one
 * from its object at "path[i]". *out and *out_n stay NULL and 0 on error. */
static int decode_objects(void **out, size_t *out_n, const json_t *obj, const char *path,
                          size_t size, decode_element_fn one, topo_pool *pool, topo_err *err)
{
    char ip[TOPO_DECODE_PATH_MAX];
    unsigned char *elems;
    size_t i, n;
    int error;

    *out = NULL;
    *out_n = 0;
    if (absent(obj))
        return 0;
    if ((error = check_array(obj, path, err)) < 0)
        return error;
    if ((n = json_array_size(obj)) == 0)
        return 0;
    if ((elems = topo_pool_calloc(pool, n, size)) == NULL)
        return topo_err_nomem(err, path);
    for (i = 0; i < n; i++) {
        const json_t *e = json_array_get(obj, i);
        topo_decode_path_index(ip, sizeof(ip), path, i);
        if (!json_is_object(e))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", ip,
                                topo_decode_type_name(e));
        if ((error = one(elems + i * size, e, ip, pool, err)) < 0)
            return error;
    }
    *out = elems;
    *out_n = n;
    return 0;
}

static int decode_taint(void *elem, const json_t *e, const char *ip, topo_pool *pool,
                        topo_err *err)
{
    char fp[TOPO_DECODE_PATH_MAX];
    topo_taint *t = elem;
    int error;

    if ((error = topo_decode_string(&t->key, e, "key", ip, 1, pool, err)) < 0 ||
        (error = topo_decode_string(&t->value, e, "value", ip, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&t->effect, e, "effect", ip, 1, pool, err)) < 0)
        return error;
    if (t->key[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: must not be empty",
                            topo_decode_path_key(fp, sizeof(fp), ip, "key"));
    if (!valid_effect(t->effect))
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: unsupported value \"%s\" (NoSchedule, PreferNoSchedule, "
                            "NoExecute)",
                            topo_decode_path_key(fp, sizeof(fp), ip, "effect"), t->effect);
    return 0;
}

int topo_decode_taints(topo_taint **out, size_t *out_n, const json_t *obj, const char *path,
                       topo_pool *pool, topo_err *err)
{
    void *elems = NULL;
    int error = decode_objects(&elems, out_n, obj, path, sizeof(**out), decode_taint, pool, err);
    *out = elems;
    return error;
}

static int decode_toleration(void *elem, const json_t *e, const char *ip, topo_pool *pool,
                             topo_err *err)
{
    char fp[TOPO_DECODE_PATH_MAX];
    topo_toleration *t = elem;
    int64_t seconds = 0;
    int error;

    t->key = "";
    t->op = "Equal";
    t->value = "";
    t->effect = "";
    if ((error = topo_decode_string(&t->key, e, "key", ip, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&t->op, e, "operator", ip, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&t->value, e, "value", ip, 0, pool, err)) < 0 ||
        (error = topo_decode_string(&t->effect, e, "effect", ip, 0, pool, err)) < 0 ||
        (error = topo_decode_int(&seconds, e, "tolerationSeconds", ip, 0, err)) < 0)
        return error;
    if (t->op[0] == '\0')
        t->op = "Equal";
    if (strcmp(t->op, "Equal") != 0 && strcmp(t->op, "Exists") != 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: unsupported value \"%s\" (Equal, Exists)",
                            topo_decode_path_key(fp, sizeof(fp), ip, "operator"), t->op);
    if (strcmp(t->op, "Exists") == 0 && t->value[0] != '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: must be empty when operator is Exists",
                            topo_decode_path_key(fp, sizeof(fp), ip, "value"));
    if (t->key[0] == '\0' && strcmp(t->op, "Exists") != 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: must be Exists when key is empty",
                            topo_decode_path_key(fp, sizeof(fp), ip, "operator"));
    if (t->effect[0] != '\0' && !valid_effect(t->effect))
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: unsupported value \"%s\" (NoSchedule, PreferNoSchedule, "
                            "NoExecute)",
                            topo_decode_path_key(fp, sizeof(fp), ip, "effect"), t->effect);
    return 0;
}

int topo_decode_tolerations(topo_toleration **out, size_t *out_n, const json_t *obj,
                            const char *path, topo_pool *pool, topo_err *err)
{
    void *elems = NULL;
    int error =
        decode_objects(&elems, out_n, obj, path, sizeof(**out), decode_toleration, pool, err);
    *out = elems;
    return error;
}

static int ready_condition(int *ready, int *missing, const json_t *status, const char *path,
                           topo_pool *pool, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX], cp[TOPO_DECODE_PATH_MAX];
    const json_t *conds = NULL;
    int error;

    *ready = 0;
    *missing = 1;
    if ((error = topo_decode_member(&conds, status, "conditions", path, JSON_ARRAY, 0, err)) < 0)
        return error;
    topo_decode_path_key(p, sizeof(p), path, "conditions");
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const char *type = NULL, *st = NULL;
        topo_decode_path_index(cp, sizeof(cp), p, i);
        if ((error = topo_decode_string(&type, json_array_get(conds, i), "type", cp, 1, pool,
                                        err)) < 0)
            return error;
        if (strcmp(type, "Ready") != 0)
            continue;
        if ((error = topo_decode_string(&st, json_array_get(conds, i), "status", cp, 1, pool,
                                        err)) < 0)
            return error;
        *ready = strcmp(st, "True") == 0;
        *missing = 0;
        return 0;
    }
    return 0;
}

int topo_decode_node(topo_node_spec *out, const json_t *node, const char *path, topo_pool *pool,
                     topo_err *err)
{
    char mp[TOPO_DECODE_PATH_MAX], sp[TOPO_DECODE_PATH_MAX], tp[TOPO_DECODE_PATH_MAX],
        np[TOPO_DECODE_PATH_MAX];
    const json_t *meta = NULL, *spec = NULL, *status = NULL;
    topo_kv *labels = NULL;
    topo_resource *alloc = NULL;
    topo_taint *taints = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    topo_decode_path_key(mp, sizeof(mp), path, "metadata");
    topo_decode_path_key(sp, sizeof(sp), path, "spec");
    topo_decode_path_key(tp, sizeof(tp), path, "status");
    if ((error = topo_decode_member(&meta, node, "metadata", path, JSON_OBJECT, 1, err)) < 0 ||
        (error = topo_decode_member(&spec, node, "spec", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_member(&status, node, "status", path, JSON_OBJECT, 0, err)) < 0 ||
        (error = topo_decode_string(&out->name, meta, "name", mp, 1, pool, err)) < 0)
        return error;
    if (out->name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: must not be empty",
                            topo_decode_path_key(np, sizeof(np), mp, "name"));
    if ((error = topo_decode_kv(&labels, &out->nlabels, json_object_get(meta, "labels"),
                                topo_decode_path_key(np, sizeof(np), mp, "labels"), pool,
                                err)) < 0 ||
        (error = topo_decode_resources(&alloc, &out->nallocatable,
                                       status ? json_object_get(status, "allocatable") : NULL,
                                       topo_decode_path_key(np, sizeof(np), tp, "allocatable"),
                                       pool, err)) < 0 ||
        (error = topo_decode_taints(&taints, &out->ntaints,
                                    spec ? json_object_get(spec, "taints") : NULL,
                                    topo_decode_path_key(np, sizeof(np), sp, "taints"), pool,
                                    err)) < 0 ||
        (error = topo_decode_bool(&out->unschedulable, spec, "unschedulable", sp, 0, err)) < 0 ||
        (error = ready_condition(&out->ready, &out->ready_missing, status, tp, pool, err)) < 0)
        return error;
    out->labels = labels;
    out->allocatable = alloc;
    out->taints = taints;
    return 0;
}
