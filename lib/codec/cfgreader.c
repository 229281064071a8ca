/* Configuration fields with messages that name them (topo/cfgreader.h). */
#include "topo/cfgreader.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topo/decode.h"
#include "topo/goparse.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

int topo_cfg_fail(const topo_cfg *c, const json_t *at, const json_t *fallback, const char *fmt,
                  ...)
{
    char msg[TOPO_ERR_TEXT_MAX];
    int line = 0, column = 0;
    const char *src = c->src ? c->src : "<input>";
    int bare = c->src == NULL && c->marks == NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!topo_codec_marks_find(c->marks, at, &line, &column))
        topo_codec_marks_find(c->marks, fallback, &line, &column);
    if (line > 0) {
        topo_err_set(c->err, TOPO_EINVALID, "%s:%d:%d: %s", src, line, column, msg);
        topo_err_at(c->err, c->src, line, column);
    } else if (bare) {
        topo_err_set(c->err, TOPO_EINVALID, "%s", msg);
    } else {
        topo_err_set(c->err, TOPO_EINVALID, "%s: %s", src, msg);
    }
    return TOPO_EINVALID;
}

int topo_cfg_check_keys(const topo_cfg *c, const json_t *obj, const char *path,
                        const char *const *allowed)
{
    char p[TOPO_DECODE_PATH_MAX];
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        int ok = 0;
        for (size_t i = 0; allowed[i] != NULL && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (ok)
            continue;
        char list[512] = "";
        for (size_t i = 0; allowed[i] != NULL; i++) {
            strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
            strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
        }
        return topo_cfg_fail(c, v, obj, "%s: unknown field (expected one of: %s)",
                             P(p, path, key), list);
    }
    return 0;
}

/* The member, or NULL when absent or null (obj itself may be absent: NULL
 * or null); *rc set for a required one, or for obj that is not a map. */
static const json_t *member(const topo_cfg *c, const json_t *obj, const char *key,
                            const char *path, int required, int *rc)
{
    char p[TOPO_DECODE_PATH_MAX];
    *rc = 0;
    if (obj != NULL && !json_is_object(obj) && !json_is_null(obj)) {
        *rc = topo_cfg_fail(c, obj, NULL, "%s: expected an object, got %s",
                            path != NULL && path[0] ? path : "(top level)",
                            topo_decode_type_name(obj));
        return NULL;
    }
    const json_t *v = obj != NULL ? json_object_get(obj, key) : NULL;
    if (v == NULL || json_is_null(v)) {
        if (required)
            *rc = topo_cfg_fail(c, v, obj, "%s: required", P(p, path, key));
        return NULL;
    }
    return v;
}

static int wrong_type(const topo_cfg *c, const json_t *v, const json_t *obj, const char *key,
                      const char *path, const char *want)
{
    char p[TOPO_DECODE_PATH_MAX];
    return topo_cfg_fail(c, v, obj, "%s: expected %s, got %s", P(p, path, key), want,
                         topo_decode_type_name(v));
}

int topo_cfg_require(const topo_cfg *c, const json_t *obj, const char *key, const char *path)
{
    int rc;
    member(c, obj, key, path, 1, &rc);
    return rc;
}

/* "path.key", or "path[index]" when key is NULL: built only for a message,
 * never on the way of a good value (the decoders read every Pod with it). */
static const char *where(char *buf, size_t size, const char *path, const char *key, size_t index)
{
    return key != NULL ? topo_decode_path_key(buf, size, path, key)
                       : topo_decode_path_index(buf, size, path, index);
}

/* The C string of v (borrowed, or copied when the context says so), or an
 * error at v's path for a NUL byte. */
static int string_value(const topo_cfg *c, const char **out, const json_t *v,
                        const json_t *parent, const char *path, const char *key, size_t index)
{
    char p[TOPO_DECODE_PATH_MAX];
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return topo_cfg_fail(c, v, parent, "%s: NUL byte in the string",
                             where(p, sizeof(p), path, key, index));
    if (c->copy_strings && (s = topo_pool_strdup(c->pool, s)) == NULL)
        return topo_err_nomem(c->err, path);
    *out = s;
    return 0;
}

int topo_cfg_string(const topo_cfg *c, const char **out, const json_t *obj, const char *key,
                    const char *path, int required)
{
    int rc;
    const json_t *v = member(c, obj, key, path, required, &rc);
    if (!v)
        return rc;
    if (!json_is_string(v))
        return wrong_type(c, v, obj, key, path, "a string");
    return string_value(c, out, v, obj, path, key, 0);
}

int topo_cfg_name(const topo_cfg *c, const char **out, const json_t *obj, const char *key,
                  const char *path)
{
    char p[TOPO_DECODE_PATH_MAX];
    const char *s = NULL;
    int rc = topo_cfg_string(c, &s, obj, key, path, 1);
    if (rc != 0)
        return rc;
    if (s[0] == '\0')
        return topo_cfg_fail(c, json_object_get(obj, key), obj, "%s: must not be empty",
                             P(p, path, key));
    *out = s;
    return 0;
}

int topo_cfg_strings(const topo_cfg *c, const char *const **out, size_t *out_n, const json_t *obj,
                     const char *key, const char *path, int required, int nonempty_items,
                     size_t min_items)
{
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *list = NULL;
    int rc = topo_cfg_member(c, &list, obj, key, path, JSON_ARRAY, "a list", required);
    if (rc != 0 || list == NULL)
        return rc;
    P(p, path, key);
    size_t n = json_array_size(list);
    if (n < min_items) {
        if (min_items == 1)
            return topo_cfg_fail(c, list, obj, "%s: must not be empty", p);
        return topo_cfg_fail(c, list, obj, "%s: at least %zu entries", p, min_items);
    }
    const char **v = topo_pool_calloc(c->pool, n ? n : 1, sizeof(*v));
    if (v == NULL)
        return topo_err_nomem(c->err, p);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(list, i);
        if (!json_is_string(s))
            return topo_cfg_fail(c, s, list, "%s: expected a string, got %s",
                                 topo_decode_path_index(ip, sizeof(ip), p, i),
                                 topo_decode_type_name(s));
        if (nonempty_items && json_string_length(s) == 0)
            return topo_cfg_fail(c, s, list, "%s: must not be empty",
                                 topo_decode_path_index(ip, sizeof(ip), p, i));
        if ((rc = string_value(c, &v[i], s, list, p, NULL, i)) != 0)
            return rc;
    }
    *out = v;
    *out_n = n;
    return 0;
}

int topo_cfg_bool(const topo_cfg *c, int *out, const json_t *obj, const char *key,
                  const char *path)
{
    int rc;
    const json_t *v = member(c, obj, key, path, 0, &rc);
    if (!v)
        return rc;
    if (!json_is_boolean(v))
        return wrong_type(c, v, obj, key, path, "true or false");
    *out = json_is_true(v);
    return 0;
}

int topo_cfg_int(const topo_cfg *c, int64_t *out, const json_t *obj, const char *key,
                 const char *path, int64_t min, int64_t max)
{
    int rc;
    int64_t n;
    const json_t *v = member(c, obj, key, path, 0, &rc);
    if (!v)
        return rc;
    /* A whole real ("2.0": JSON writers and YAML may give one) is the integer. */
    double d = json_is_real(v) ? json_real_value(v) : 0.5;
    if (json_is_integer(v))
        n = (int64_t)json_integer_value(v);
    else if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18)
        n = (int64_t)d;
    else
        return wrong_type(c, v, obj, key, path, "an integer");
    if (n < min || n > max) {
        char p[TOPO_DECODE_PATH_MAX];
        return topo_cfg_fail(c, v, obj, "%s: %" PRId64 " is out of range (%" PRId64 "..%" PRId64
                                        ")",
                             P(p, path, key), n, min, max);
    }
    *out = n;
    return 0;
}

int topo_cfg_int32(const topo_cfg *c, int32_t *out, const json_t *obj, const char *key,
                   const char *path, int32_t min, int32_t max)
{
    int64_t v = *out;
    int rc = topo_cfg_int(c, &v, obj, key, path, min, max);
    if (rc == 0)
        *out = (int32_t)v;
    return rc;
}

int topo_cfg_number(const topo_cfg *c, double *out, const json_t *obj, const char *key,
                    const char *path, double min, double max, int min_open)
{
    int rc;
    const json_t *v = member(c, obj, key, path, 0, &rc);
    if (!v)
        return rc;
    if (!json_is_number(v))
        return wrong_type(c, v, obj, key, path, "a number");
    double d = json_number_value(v);
    /* NaN fails both comparisons' negations: !(d >= min) catches it. */
    if (!(min_open ? d > min : d >= min) || !(d <= max)) {
        char p[TOPO_DECODE_PATH_MAX];
        return topo_cfg_fail(c, v, obj, "%s: %g is out of range (%s %g and <= %g)",
                             P(p, path, key), d, min_open ? ">" : ">=", min, max);
    }
    *out = d;
    return 0;
}

/* ms as Go writes a round duration: "24h", "10m", "30s", "500ms". */
static void duration_text(char *buf, size_t size, int64_t ms)
{
    if (ms != 0 && ms % 3600000 == 0)
        snprintf(buf, size, "%" PRId64 "h", ms / 3600000);
    else if (ms != 0 && ms % 60000 == 0)
        snprintf(buf, size, "%" PRId64 "m", ms / 60000);
    else if (ms != 0 && ms % 1000 == 0)
        snprintf(buf, size, "%" PRId64 "s", ms / 1000);
    else
        snprintf(buf, size, "%" PRId64 "ms", ms);
}

int topo_cfg_duration(const topo_cfg *c, int64_t *out_ms, const json_t *obj, const char *key,
                      const char *path, int64_t min_ms, int64_t max_ms)
{
    int rc;
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *v = member(c, obj, key, path, 0, &rc);
    if (!v)
        return rc;
    if (!json_is_string(v))
        return wrong_type(c, v, obj, key, path, "a duration such as \"30s\", \"10m\" or \"1h\"");
    topo_err why = TOPO_ERR_INIT;
    int64_t ns = 0;
    if (topo_go_parse_duration(json_string_value(v), &ns, &why) != 0)
        return topo_cfg_fail(c, v, obj, "%s: %s", P(p, path, key), why.text);
    int64_t ms = ns / 1000000;
    if (ms < min_ms || ms > max_ms) {
        char lo[32], hi[32];
        duration_text(lo, sizeof(lo), min_ms);
        duration_text(hi, sizeof(hi), max_ms);
        return topo_cfg_fail(c, v, obj, "%s: %s is out of range (%s..%s)", P(p, path, key),
                             json_string_value(v), lo, hi);
    }
    *out_ms = ms;
    return 0;
}

int topo_cfg_enum(const topo_cfg *c, int *out, const json_t *obj, const char *key,
                  const char *path, const char *const *names, const char *what)
{
    const char *s = NULL;
    int rc = topo_cfg_string(c, &s, obj, key, path, 0);
    if (rc != 0 || s == NULL)
        return rc;
    size_t n = 0;
    for (; names[n] != NULL; n++) {
        if (strcmp(s, names[n]) == 0) {
            *out = (int)n;
            return 0;
        }
    }
    /* "a, b or c" */
    char list[256] = "";
    for (size_t i = 0; i < n; i++) {
        strncat(list, i == 0 ? "" : i + 1 == n ? " or " : ", ", sizeof(list) - strlen(list) - 1);
        strncat(list, names[i], sizeof(list) - strlen(list) - 1);
    }
    char p[TOPO_DECODE_PATH_MAX];
    return topo_cfg_fail(c, json_object_get(obj, key), obj, "%s: \"%s\" is not %s (expected %s)",
                         P(p, path, key), s, what, list);
}

int topo_cfg_member(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                    const char *path, json_type type, const char *want, int required)
{
    int rc;
    const json_t *v = member(c, obj, key, path, required, &rc);
    *out = NULL;
    if (!v)
        return rc;
    /* Either boolean for JSON_TRUE or JSON_FALSE, an integer for a number. */
    int ok = json_typeof(v) == type ||
             ((type == JSON_TRUE || type == JSON_FALSE) && json_is_boolean(v)) ||
             (type == JSON_REAL && json_is_integer(v));
    if (!ok)
        return wrong_type(c, v, obj, key, path, want);
    *out = v;
    return 0;
}

int topo_cfg_object(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                    const char *path)
{
    return topo_cfg_member(c, out, obj, key, path, JSON_OBJECT, "a map", 0);
}

int topo_cfg_array(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                   const char *path)
{
    return topo_cfg_member(c, out, obj, key, path, JSON_ARRAY, "a list", 0);
}
