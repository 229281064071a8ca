/* Facts as a canonical JSON document and back (topo/facts_json.h). The
 * encoder builds a jansson tree in the facts' order and dumps it compact
 * with sorted keys; the decoder checks every field before it adds anything
 * to the facts, so that what it accepts is exactly what the encoder could
 * have written (up to spelling), and reports the first problem by its path. */
#include "topo/facts_json.h"

#include <stdlib.h>
#include <string.h>

#include "json_internal.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/utf8.h"

static const char hex_digits[] = "0123456789abcdef";

/* --- encode ------------------------------------------------------------------------- */

static int is_utf8(const char *s)
{
    while (*s != '\0') {
        size_t n = topo_utf8_decode(s, NULL);
        if (n == 0)
            return 0;
        s += n;
    }
    return 1;
}

/* A facts string as JSON: itself when it is UTF-8, else {"hex": its bytes}
 * (JSON strings cannot carry other bytes). NULL when out of memory. */
static json_t *text_json(const char *s)
{
    if (is_utf8(s))
        return json_string(s);
    size_t n = strlen(s);
    char *hex = malloc(2 * n + 1);
    json_t *v = NULL;
    if (hex == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = hex_digits[(unsigned char)s[i] >> 4];
        hex[2 * i + 1] = hex_digits[(unsigned char)s[i] & 0x0f];
    }
    hex[2 * n] = '\0';
    v = json_object();
    if (v != NULL && json_object_set_new(v, "hex", json_string(hex)) < 0) {
        json_decref(v);
        v = NULL;
    }
    free(hex);
    return v;
}

/* json_object_set_new and json_array_append_new drop the value when they
 * fail; a NULL value (its constructor ran out of memory) fails too. */
static int set(json_t *obj, const char *key, json_t *v)
{
    return v != NULL && json_object_set_new(obj, key, v) == 0 ? 0 : -1;
}

static int append(json_t *arr, json_t *v)
{
    return v != NULL && json_array_append_new(arr, v) == 0 ? 0 : -1;
}

static json_t *encode_host(const topo_facts *f, size_t i)
{
    json_t *h = json_object(), *levels = json_object();
    if (h == NULL || levels == NULL || set(h, "name", text_json(topo_facts_host_name(f, i))) < 0)
        goto fail;
    for (int l = 0; l < TOPO_LEVEL_COUNT; l++) {
        const char *v = topo_facts_host_level(f, i, (topo_level)l);
        if (v != NULL && set(levels, topo_level_name((topo_level)l), text_json(v)) < 0)
            goto fail;
    }
    if (json_object_size(levels) > 0) {
        int rc = set(h, "levels", levels);
        levels = NULL;
        if (rc < 0)
            goto fail;
    }
    json_decref(levels);
    return h;
fail:
    json_decref(levels);
    json_decref(h);
    return NULL;
}

static json_t *encode_switch(const topo_facts *f, size_t i)
{
    const char *id = topo_facts_switch_id(f, i), *name = topo_facts_switch_name(f, i);
    json_t *s = json_object();
    if (s == NULL || set(s, "id", text_json(id)) < 0 ||
        (strcmp(name, id) != 0 && set(s, "name", text_json(name)) < 0)) {
        json_decref(s);
        return NULL;
    }
    return s;
}

static json_t *encode_cable(const topo_facts *f, size_t i)
{
    topo_facts_link l = topo_facts_link_at(f, i);
    json_t *c = json_object();
    int rc = c != NULL ? 0 : -1;
    if (rc == 0 && l.is_host_link) {
        rc = set(c, "switch", json_integer((json_int_t)l.sw));
        if (rc == 0 && l.host != TOPO_FACTS_NO_HOST)
            rc = set(c, "host", json_integer((json_int_t)l.host));
        if (rc == 0 && l.port != NULL)
            rc = set(c, "port", text_json(l.port));
    } else if (rc == 0) {
        rc = set(c, "switches",
                 json_pack("[II]", (json_int_t)l.sw, (json_int_t)l.other));
    }
    if (rc < 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static json_t *encode(const topo_facts *f)
{
    json_t *root = json_object(), *hosts = json_array(), *switches = json_array(),
           *cables = json_array();
    int rc = root && hosts && switches && cables ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < topo_facts_host_count(f); i++)
        rc = append(hosts, encode_host(f, i));
    for (size_t i = 0; rc == 0 && i < topo_facts_switch_count(f); i++)
        rc = append(switches, encode_switch(f, i));
    for (size_t i = 0; rc == 0 && i < topo_facts_link_count(f); i++)
        rc = append(cables, encode_cable(f, i));
    if (rc == 0)
        rc = set(root, "version", json_integer(TOPO_FACTS_JSON_VERSION));
    if (rc == 0)
        rc = set(root, "source", text_json(topo_facts_source(f)));
    /* set() takes the arrays whether it succeeds or not. */
    rc = rc == 0 ? set(root, "hosts", hosts) : (json_decref(hosts), -1);
    rc = rc == 0 ? set(root, "switches", switches) : (json_decref(switches), -1);
    rc = rc == 0 ? set(root, "cables", cables) : (json_decref(cables), -1);
    if (rc < 0) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int topo_facts_json_encode(char **out, size_t *out_len, const topo_facts *facts, topo_err *err)
{
    json_t *root;
    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    if (facts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "facts document: no facts");
    /* Every string is checked for UTF-8 before jansson sees it: a failure
     * here can only be memory. */
    if ((root = encode(facts)) == NULL)
        return topo_err_nomem(err, "facts document");
    *out = topo_json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    if (*out == NULL)
        return topo_err_nomem(err, "facts document");
    if (out_len != NULL)
        *out_len = strlen(*out);
    return 0;
}

/* --- decode ------------------------------------------------------------------------- */

typedef struct decoder {
    topo_facts *facts;
    topo_pool *pool; /* strings decoded from hex */
    topo_err *err;
} decoder;

static int invalid(decoder *d, const char *path, const char *problem)
{
    return topo_err_set(d->err, TOPO_EINVALID, "%s: %s", path, problem);
}

/* Fails on a member of obj whose name is not in keys (NULL-terminated). */
static int check_keys(decoder *d, const json_t *obj, const char *path, const char *const *keys)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        size_t i = 0;
        while (keys[i] != NULL && strcmp(keys[i], key) != 0)
            i++;
        if (keys[i] == NULL) {
            char p[TOPO_DECODE_PATH_MAX];
            return invalid(d, topo_decode_path_key(p, sizeof(p), path, key), "unknown field");
        }
    }
    return 0;
}

static int hex_value(char c)
{
    const char *at = c != '\0' ? strchr(hex_digits, c) : NULL;
    return at != NULL ? (int)(at - hex_digits) : -1;
}

/* {"hex": "..."} back to the bytes it spells, which must not be UTF-8
 * (that is written as a string) and hold no NUL. */
static int decode_hex(const char **out, decoder *d, const json_t *obj, const char *path)
{
    static const char *const keys[] = {"hex", NULL};
    const char *hex = NULL;
    char p[TOPO_DECODE_PATH_MAX], *bytes;
    size_t n;
    int rc;

    if ((rc = check_keys(d, obj, path, keys)) != 0 ||
        (rc = srcjson_string(&hex, obj, "hex", path, 1, d->err)) != 0)
        return rc;
    topo_decode_path_key(p, sizeof(p), path, "hex");
    n = strlen(hex);
    if (n == 0 || n % 2 != 0)
        return invalid(d, p, "expected an even number of hex digits");
    if ((bytes = topo_pool_alloc(d->pool, n / 2 + 1)) == NULL)
        return topo_err_nomem(d->err, "facts document");
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return invalid(d, p, "expected lower-case hex digits");
        if (hi == 0 && lo == 0)
            return invalid(d, p, "a NUL byte");
        bytes[i / 2] = (char)(hi << 4 | lo);
    }
    bytes[n / 2] = '\0';
    if (is_utf8(bytes))
        return invalid(d, p, "UTF-8 text is written as a string, not in hex");
    *out = bytes;
    return 0;
}

/* A facts string: a non-empty JSON string or {"hex": ...}. *out is NULL
 * when the member is absent and not required. */
static int get_text(const char **out, decoder *d, const json_t *obj, const char *key,
                    const char *path, int required)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = NULL;
    topo_decode_path_key(p, sizeof(p), path, key);
    if (v == NULL || json_is_null(v))
        return required ? invalid(d, p, "required") : 0;
    if (json_is_object(v))
        return decode_hex(out, d, v, p);
    if ((rc = srcjson_string(out, obj, key, path, 1, d->err)) != 0)
        return rc;
    return **out == '\0' ? invalid(d, p, "must not be empty") : 0;
}

/* An index into a table of count entries (what names them: "hosts"). */
static int get_index(size_t *out, decoder *d, const json_t *obj, const char *key,
                     const char *path, size_t count, const char *what)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *v = NULL;
    int rc = topo_decode_member(&v, obj, key, path, JSON_INTEGER, 1, d->err);
    if (rc != 0)
        return rc;
    json_int_t i = json_integer_value(v);
    if (i < 0 || (size_t)i >= count)
        return topo_err_set(d->err, TOPO_EINVALID, "%s: %lld is not an index of %s (%zu of them)",
                            topo_decode_path_key(p, sizeof(p), path, key), (long long)i, what,
                            count);
    *out = (size_t)i;
    return 0;
}

/* A facts call failed although the document was checked first: only
 * memory can run out, but name where. */
static int facts_failed(decoder *d, int rc, const char *path)
{
    if (rc != TOPO_ENOMEM)
        topo_err_wrap(d->err, "%s", path);
    return rc;
}

static int decode_levels(decoder *d, const char *host, const json_t *levels, const char *path)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)levels, key, v) {
        char p[TOPO_DECODE_PATH_MAX];
        const char *value = NULL;
        topo_level level = TOPO_LEVEL_COUNT;
        int rc;
        topo_decode_path_key(p, sizeof(p), path, key);
        if (topo_level_parse(&level, key) != 0)
            return invalid(d, p, "unknown level (datacenter, rack or nvlink)");
        if (level == TOPO_LEVEL_SPINE || level == TOPO_LEVEL_LEAF || level == TOPO_LEVEL_HOSTNAME)
            return invalid(d, p, "not a level a source states (datacenter, rack or nvlink)");
        if ((rc = get_text(&value, d, levels, key, path, 1)) != 0)
            return rc;
        if ((rc = topo_facts_set_level(d->facts, host, level, value, d->err)) != 0)
            return facts_failed(d, rc, p);
    }
    return 0;
}

static int decode_hosts(decoder *d, const json_t *hosts)
{
    static const char *const keys[] = {"name", "levels", NULL};
    size_t i;
    const json_t *h;
    json_array_foreach(hosts, i, h) {
        char p[TOPO_DECODE_PATH_MAX], lp[TOPO_DECODE_PATH_MAX];
        const char *name = NULL;
        const json_t *levels = NULL;
        size_t at = 0;
        int rc;
        topo_decode_path_index(p, sizeof(p), "hosts", i);
        if (!json_is_object(h))
            return topo_err_set(d->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(h));
        if ((rc = check_keys(d, h, p, keys)) != 0 ||
            (rc = get_text(&name, d, h, "name", p, 1)) != 0 ||
            (rc = topo_decode_member(&levels, h, "levels", p, JSON_OBJECT, 0, d->err)) != 0)
            return rc;
        if (topo_facts_find_host(d->facts, name, &at) == 0)
            return topo_err_set(d->err, TOPO_EINVALID, "%s.name: the name of hosts[%zu] too", p,
                                at);
        if ((rc = topo_facts_add_host(d->facts, name, NULL, d->err)) != 0)
            return facts_failed(d, rc, p);
        if (levels != NULL &&
            (rc = decode_levels(d, name, levels, topo_decode_path_key(lp, sizeof(lp), p,
                                                                      "levels"))) != 0)
            return rc;
    }
    return 0;
}

static int decode_switches(decoder *d, const json_t *switches)
{
    static const char *const keys[] = {"id", "name", NULL};
    size_t i;
    const json_t *s;
    json_array_foreach(switches, i, s) {
        char p[TOPO_DECODE_PATH_MAX];
        const char *id = NULL, *name = NULL;
        size_t at = 0;
        int rc;
        topo_decode_path_index(p, sizeof(p), "switches", i);
        if (!json_is_object(s))
            return topo_err_set(d->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(s));
        if ((rc = check_keys(d, s, p, keys)) != 0 || (rc = get_text(&id, d, s, "id", p, 1)) != 0 ||
            (rc = get_text(&name, d, s, "name", p, 0)) != 0)
            return rc;
        if (topo_facts_find_switch(d->facts, id, &at) == 0)
            return topo_err_set(d->err, TOPO_EINVALID, "%s.id: the id of switches[%zu] too", p,
                                at);
        if ((rc = topo_facts_add_switch(d->facts, id, name, NULL, d->err)) != 0)
            return facts_failed(d, rc, p);
    }
    return 0;
}

static int decode_switch_cable(decoder *d, const json_t *c, const char *path)
{
    static const char *const keys[] = {"switches", NULL};
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *pair = NULL;
    size_t ends[2] = {0, 0}, nsw = topo_facts_switch_count(d->facts);
    int rc;

    if ((rc = check_keys(d, c, path, keys)) != 0 ||
        (rc = topo_decode_member(&pair, c, "switches", path, JSON_ARRAY, 1, d->err)) != 0)
        return rc;
    topo_decode_path_key(p, sizeof(p), path, "switches");
    if (json_array_size(pair) != 2)
        return invalid(d, p, "expected two switch indices");
    for (size_t k = 0; k < 2; k++) {
        const json_t *v = json_array_get(pair, k);
        topo_decode_path_index(ip, sizeof(ip), p, k);
        if (!json_is_integer(v))
            return topo_err_set(d->err, TOPO_EINVALID, "%s: expected an integer, got %s", ip,
                                topo_decode_type_name(v));
        if (json_integer_value(v) < 0 || (size_t)json_integer_value(v) >= nsw)
            return topo_err_set(d->err, TOPO_EINVALID,
                                "%s: %lld is not an index of switches (%zu of them)", ip,
                                (long long)json_integer_value(v), nsw);
        ends[k] = (size_t)json_integer_value(v);
    }
    if (ends[0] == ends[1])
        return invalid(d, p, "a cable from a switch to itself");
    rc = topo_facts_add_switch_link(d->facts, topo_facts_switch_id(d->facts, ends[0]),
                                    topo_facts_switch_id(d->facts, ends[1]), d->err);
    return rc != 0 ? facts_failed(d, rc, path) : 0;
}

static int decode_host_cable(decoder *d, const json_t *c, const char *path)
{
    static const char *const keys[] = {"switch", "host", "port", NULL};
    size_t sw = 0, host = TOPO_FACTS_NO_HOST;
    const json_t *named = json_object_get(c, "host");
    const char *port = NULL;
    int rc;

    if ((rc = check_keys(d, c, path, keys)) != 0 ||
        (rc = get_index(&sw, d, c, "switch", path, topo_facts_switch_count(d->facts),
                        "switches")) != 0 ||
        (named != NULL && !json_is_null(named) &&
         (rc = get_index(&host, d, c, "host", path, topo_facts_host_count(d->facts), "hosts")) !=
             0) ||
        (rc = get_text(&port, d, c, "port", path, 0)) != 0)
        return rc;
    rc = topo_facts_add_host_link(d->facts,
                                  host == TOPO_FACTS_NO_HOST ? NULL
                                                             : topo_facts_host_name(d->facts, host),
                                  port, topo_facts_switch_id(d->facts, sw), d->err);
    return rc != 0 ? facts_failed(d, rc, path) : 0;
}

static int decode_cables(decoder *d, const json_t *cables)
{
    size_t i;
    const json_t *c;
    json_array_foreach(cables, i, c) {
        char p[TOPO_DECODE_PATH_MAX];
        size_t before = topo_facts_link_count(d->facts);
        int rc;
        topo_decode_path_index(p, sizeof(p), "cables", i);
        if (!json_is_object(c))
            return topo_err_set(d->err, TOPO_EINVALID, "%s: expected an object, got %s", p,
                                topo_decode_type_name(c));
        if (json_object_get(c, "switches") != NULL && json_object_get(c, "switch") != NULL)
            return invalid(d, p, "a host cable has \"switch\", a switch cable \"switches\": "
                                 "not both");
        rc = json_object_get(c, "switches") != NULL ? decode_switch_cable(d, c, p)
                                                    : decode_host_cable(d, c, p);
        if (rc != 0)
            return rc;
        /* The facts keep a cable once: a second one would be lost. */
        if (topo_facts_link_count(d->facts) == before)
            return invalid(d, p, "the same cable as an earlier one");
    }
    return 0;
}

/* The version first: a document of another version is refused as such, not
 * for the fields it has that this one lacks. */
static int check_version(decoder *d, const json_t *doc)
{
    int64_t version = 0;
    int rc = topo_decode_int(&version, doc, "version", "", 1, d->err);
    if (rc != 0)
        return rc;
    if (version > TOPO_FACTS_JSON_VERSION)
        return topo_err_set(d->err, TOPO_EUNSUPPORTED,
                            "version: %lld is newer than this build reads (%d)",
                            (long long)version, TOPO_FACTS_JSON_VERSION);
    if (version != TOPO_FACTS_JSON_VERSION)
        return topo_err_set(d->err, TOPO_EINVALID, "version: %lld is not a version (%d is)",
                            (long long)version, TOPO_FACTS_JSON_VERSION);
    return 0;
}

static int get_table(const json_t **out, decoder *d, const json_t *doc, const char *key)
{
    int rc = topo_decode_member(out, doc, key, "", JSON_ARRAY, 1, d->err);
    if (rc == 0 && json_array_size(*out) > TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(d->err, TOPO_ELIMIT, "%s: more than %u entries", key,
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    return rc;
}

static int decode_doc(topo_facts **out, decoder *d, const json_t *doc)
{
    static const char *const keys[] = {"version", "source", "hosts", "switches", "cables", NULL};
    const json_t *hosts = NULL, *switches = NULL, *cables = NULL;
    const char *source = NULL;
    int rc;

    if (!json_is_object(doc))
        return topo_err_set(d->err, TOPO_EINVALID, "expected an object, got %s",
                            topo_decode_type_name(doc));
    if ((rc = check_version(d, doc)) != 0 || (rc = check_keys(d, doc, "", keys)) != 0 ||
        (rc = get_text(&source, d, doc, "source", "", 1)) != 0 ||
        (rc = get_table(&hosts, d, doc, "hosts")) != 0 ||
        (rc = get_table(&switches, d, doc, "switches")) != 0 ||
        (rc = get_table(&cables, d, doc, "cables")) != 0)
        return rc;
    if ((rc = topo_facts_create(&d->facts, source, d->err)) != 0)
        return rc;
    if ((rc = decode_hosts(d, hosts)) != 0 || (rc = decode_switches(d, switches)) != 0 ||
        (rc = decode_cables(d, cables)) != 0)
        return rc;
    *out = d->facts;
    d->facts = NULL;
    return 0;
}

int topo_facts_json_decode(topo_facts **out, const char *text, size_t len, const char *what,
                           topo_err *err)
{
    decoder d = {.err = err};
    json_t *doc = NULL;
    const char *name = what != NULL ? what : "facts document";
    int rc;

    *out = NULL;
    if ((rc = srcjson_parse(&doc, text, len, TOPO_MAX_FACTS_DOCUMENT, "document", name,
                            err)) != 0)
        return rc;
    if ((d.pool = topo_pool_create()) == NULL)
        rc = topo_err_nomem(err, name);
    else
        rc = decode_doc(out, &d, doc);
    if (rc != 0)
        srcjson_wrap(err, rc, name);
    topo_facts_free(d.facts);
    topo_pool_free(d.pool);
    json_decref(doc);
    return rc;
}
