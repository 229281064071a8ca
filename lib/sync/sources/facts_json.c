/* Facts as a canonical JSON document and back (topo/facts_json.h). The
 * encoder builds a jansson tree in the facts' order and dumps it compact
 * with sorted keys; the decoder checks every field before it adds anything
 * to the facts, so that what it accepts is exactly what the encoder could
 * have written (up to spelling), and reports the first problem by its path. */
#include "topo/facts_json.h"

#include <stdlib.h>
#include <string.h>

#include "srcjson_internal.h"
#include "topo/buf.h"
#include "topo/cfgreader.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/utf8.h"

static const char hex_digits[] = "0123456789abcdef";

/* --- encode ------------------------------------------------------------------------- */

/* The document is written element by element into one buffer: a jansson
 * tree of a 10,000-node fabric's facts (120,000 cables) would take some
 * 80 MB, the text takes 3. jansson still writes every string (its escaping,
 * UTF-8 checks); what is written by hand here is only the fixed punctuation
 * and the integers of the canonical form, exactly as json_dumps would lay
 * them out with JSON_COMPACT | JSON_SORT_KEYS (the tests compare them). */

/* The levels in the order of their names, as sorted keys come. */
static const topo_level sorted_levels[] = {TOPO_LEVEL_DATACENTER, TOPO_LEVEL_HOSTNAME,
                                           TOPO_LEVEL_LEAF,       TOPO_LEVEL_NVLINK,
                                           TOPO_LEVEL_RACK,       TOPO_LEVEL_SPINE};
_Static_assert(sizeof(sorted_levels) / sizeof(sorted_levels[0]) == TOPO_LEVEL_COUNT,
               "every level, in the order of its name");

/* A facts string as JSON: itself when it is UTF-8, else {"hex": its bytes}
 * (JSON strings cannot carry other bytes). NULL when out of memory. */
static json_t *text_json(const char *s)
{
    if (topo_utf8_valid(s))
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
    v = json_pack("{s:s}", "hex", hex);
    free(hex);
    return v;
}

/* Appends s as text_json writes it. 0 or TOPO_ENOMEM (or b's error). */
static int put_text(topo_buf *b, const char *s)
{
    const size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
    char small[256];
    json_t *v;
    size_t n;

    topo_json_alloc_watch();
    if ((v = text_json(s)) == NULL)
        return TOPO_ENOMEM;
    n = json_dumpb(v, small, sizeof(small), flags);
    if (n > 0 && n <= sizeof(small)) {
        (void)topo_buf_put(b, small, n);
    } else if (n > 0 && topo_buf_reserve(b, n) == 0) {
        n = json_dumpb(v, b->ptr + b->len, n, flags);
        topo_buf_grown(b, n);
    }
    json_decref(v);
    /* dumpb's only allocation is the key list of {"hex": ...}. */
    if (n == 0 || topo_json_alloc_failed())
        return TOPO_ENOMEM;
    return b->error;
}

static int put_index(topo_buf *b, size_t i)
{
    return topo_buf_printf(b, "%zu", i);
}

static int put_host(topo_buf *b, const topo_facts *f, size_t i)
{
    int rc = 0, any = 0;
    for (size_t k = 0; rc == 0 && k < TOPO_LEVEL_COUNT; k++) {
        const char *v = topo_facts_host_level(f, i, sorted_levels[k]);
        if (v == NULL)
            continue;
        rc = topo_buf_puts(b, any ? ",\"" : "{\"levels\":{\"");
        if (rc == 0)
            rc = topo_buf_printf(b, "%s\":", topo_level_name(sorted_levels[k]));
        if (rc == 0)
            rc = put_text(b, v);
        any = 1;
    }
    if (rc == 0)
        rc = topo_buf_puts(b, any ? "},\"name\":" : "{\"name\":");
    if (rc == 0)
        rc = put_text(b, topo_facts_host_name(f, i));
    return rc == 0 ? topo_buf_putc(b, '}') : rc;
}

static int put_switch(topo_buf *b, const topo_facts *f, size_t i)
{
    const char *id = topo_facts_switch_id(f, i), *name = topo_facts_switch_name(f, i);
    int rc = topo_buf_puts(b, "{\"id\":");
    if (rc == 0)
        rc = put_text(b, id);
    if (rc == 0 && strcmp(name, id) != 0 && (rc = topo_buf_puts(b, ",\"name\":")) == 0)
        rc = put_text(b, name);
    return rc == 0 ? topo_buf_putc(b, '}') : rc;
}

/* [switch, host, port] (null for an unknown host or port) or [switch,
 * switch]: tuples, not objects, since cables are most of a document. */
static int put_cable(topo_buf *b, const topo_facts *f, size_t i)
{
    topo_facts_link l = topo_facts_link_at(f, i);
    int rc = topo_buf_putc(b, '[');
    if (rc == 0)
        rc = put_index(b, l.sw);
    if (rc == 0)
        rc = topo_buf_putc(b, ',');
    if (rc == 0 && !l.is_host_link)
        rc = put_index(b, l.other);
    else if (rc == 0)
        rc = l.host != TOPO_FACTS_NO_HOST ? put_index(b, l.host) : topo_buf_puts(b, "null");
    if (rc == 0 && l.is_host_link && (rc = topo_buf_putc(b, ',')) == 0)
        rc = l.port != NULL ? put_text(b, l.port) : topo_buf_puts(b, "null");
    return rc == 0 ? topo_buf_putc(b, ']') : rc;
}

typedef int (*put_fn)(topo_buf *b, const topo_facts *f, size_t i);

/* "key":[put(0),put(1),...] */
static int put_table(topo_buf *b, const char *key, const topo_facts *f, size_t n, put_fn put)
{
    int rc = topo_buf_printf(b, "\"%s\":[", key);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((rc = i > 0 ? topo_buf_putc(b, ',') : 0) == 0)
            rc = put(b, f, i);
    return rc == 0 ? topo_buf_putc(b, ']') : rc;
}

int topo_facts_json_encode(char **out, size_t *out_len, const topo_facts *facts, topo_err *err)
{
    topo_buf b = TOPO_BUF_INIT(TOPO_MAX_FACTS_DOCUMENT);
    int rc;

    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    if (facts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "facts document: no facts");
    /* The keys in sorted order: cables, hosts, source, switches, version. */
    rc = topo_buf_putc(&b, '{');
    if (rc == 0)
        rc = put_table(&b, "cables", facts, topo_facts_link_count(facts), put_cable);
    if (rc == 0 && (rc = topo_buf_putc(&b, ',')) == 0)
        rc = put_table(&b, "hosts", facts, topo_facts_host_count(facts), put_host);
    if (rc == 0 && (rc = topo_buf_puts(&b, ",\"source\":")) == 0)
        rc = put_text(&b, topo_facts_source(facts));
    if (rc == 0 && (rc = topo_buf_putc(&b, ',')) == 0)
        rc = put_table(&b, "switches", facts, topo_facts_switch_count(facts), put_switch);
    if (rc == 0)
        rc = topo_buf_printf(&b, ",\"version\":%d}", TOPO_FACTS_JSON_VERSION);
    if (rc != 0) {
        topo_buf_dispose(&b);
        return rc == TOPO_ELIMIT
                   ? topo_err_set(err, TOPO_ELIMIT, "facts document: more than %u bytes",
                                  (unsigned)TOPO_MAX_FACTS_DOCUMENT)
                   : topo_err_nomem(err, "facts document");
    }
    *out = topo_buf_take(&b, out_len);
    return 0;
}

/* --- decode ------------------------------------------------------------------------- */

typedef struct decoder {
    topo_facts *facts;
    topo_pool *pool; /* strings decoded from hex */
    topo_err *err;
    topo_cfg cfg; /* err without a source or marks: bare "path: problem" messages */
} decoder;

static int invalid(decoder *d, const char *path, const char *problem)
{
    return topo_err_set(d->err, TOPO_EINVALID, "%s: %s", path, problem);
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

    if ((rc = topo_cfg_check_keys(&d->cfg, obj, path, keys)) != 0 ||
        (rc = topo_decode_string(&hex, obj, "hex", path, 1, NULL, d->err)) != 0)
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
    if (topo_utf8_valid(bytes))
        return invalid(d, p, "UTF-8 text is written as a string, not in hex");
    *out = bytes;
    return 0;
}

/* A facts string at path: a non-empty JSON string or {"hex": ...}; v NULL
 * or JSON null is absent (*out NULL), an error when required. */
static int text_value(const char **out, decoder *d, const json_t *v, const char *path,
                      int required)
{
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return required ? invalid(d, path, "required") : 0;
    if (json_is_object(v))
        return decode_hex(out, d, v, path);
    if (!json_is_string(v))
        return topo_err_set(d->err, TOPO_EINVALID, "%s: expected a string, got %s", path,
                            topo_decode_type_name(v));
    /* Facts keep C strings (jansson refuses \u0000 anyway). */
    if (strlen(json_string_value(v)) != json_string_length(v))
        return invalid(d, path, "NUL byte in string");
    if (json_string_length(v) == 0)
        return invalid(d, path, "must not be empty");
    *out = json_string_value(v);
    return 0;
}

static int get_text(const char **out, decoder *d, const json_t *obj, const char *key,
                    const char *path, int required)
{
    char p[TOPO_DECODE_PATH_MAX];
    return text_value(out, d, json_object_get(obj, key),
                      topo_decode_path_key(p, sizeof(p), path, key), required);
}

/* An index at path into a table of count entries (what names them). */
static int index_value(size_t *out, decoder *d, const json_t *v, const char *path, size_t count,
                       const char *what)
{
    if (!json_is_integer(v))
        return topo_err_set(d->err, TOPO_EINVALID, "%s: expected an index of %s, got %s", path,
                            what, topo_decode_type_name(v));
    json_int_t i = json_integer_value(v);
    if (i < 0 || (size_t)i >= count)
        return topo_err_set(d->err, TOPO_EINVALID, "%s: %lld is not an index of %s (%zu of them)",
                            path, (long long)i, what, count);
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
        if ((rc = topo_cfg_check_keys(&d->cfg, h, p, keys)) != 0 ||
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
        if ((rc = topo_cfg_check_keys(&d->cfg, s, p, keys)) != 0 ||
            (rc = get_text(&id, d, s, "id", p, 1)) != 0 ||
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

/* [switch, host, port]: host and port each null when unknown. */
static int decode_host_cable(decoder *d, const json_t *c, const char *path)
{
    char p[3][TOPO_DECODE_PATH_MAX];
    size_t sw = 0, host = TOPO_FACTS_NO_HOST;
    const json_t *h = json_array_get(c, 1);
    const char *port = NULL;
    int rc;

    for (size_t k = 0; k < 3; k++)
        topo_decode_path_index(p[k], sizeof(p[k]), path, k);
    if ((rc = index_value(&sw, d, json_array_get(c, 0), p[0], topo_facts_switch_count(d->facts),
                          "switches")) != 0 ||
        (!json_is_null(h) &&
         (rc = index_value(&host, d, h, p[1], topo_facts_host_count(d->facts), "hosts")) != 0) ||
        (rc = text_value(&port, d, json_array_get(c, 2), p[2], 0)) != 0)
        return rc;
    rc = topo_facts_add_host_link(d->facts,
                                  host == TOPO_FACTS_NO_HOST ? NULL
                                                             : topo_facts_host_name(d->facts, host),
                                  port, topo_facts_switch_id(d->facts, sw), d->err);
    return rc != 0 ? facts_failed(d, rc, path) : 0;
}

/* [switch, switch], in either order (the facts keep the lower first). */
static int decode_switch_cable(decoder *d, const json_t *c, const char *path)
{
    char p[TOPO_DECODE_PATH_MAX];
    size_t ends[2] = {0, 0};
    int rc;
    for (size_t k = 0; k < 2; k++)
        if ((rc = index_value(&ends[k], d, json_array_get(c, k),
                              topo_decode_path_index(p, sizeof(p), path, k),
                              topo_facts_switch_count(d->facts), "switches")) != 0)
            return rc;
    if (ends[0] == ends[1])
        return invalid(d, path, "a cable from a switch to itself");
    rc = topo_facts_add_switch_link(d->facts, topo_facts_switch_id(d->facts, ends[0]),
                                    topo_facts_switch_id(d->facts, ends[1]), d->err);
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
        if (!json_is_array(c) || (json_array_size(c) != 2 && json_array_size(c) != 3))
            return topo_err_set(d->err, TOPO_EINVALID,
                                "%s: expected [switch, host, port] (a host cable) or [switch, "
                                "switch], got %s%s", p, topo_decode_type_name(c),
                                json_is_array(c) ? " of another length" : "");
        rc = json_array_size(c) == 3 ? decode_host_cable(d, c, p) : decode_switch_cable(d, c, p);
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
    if ((rc = check_version(d, doc)) != 0 ||
        (rc = topo_cfg_check_keys(&d->cfg, doc, "", keys)) != 0 ||
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
    decoder d = {.err = err, .cfg = {.err = err}};
    json_t *doc = NULL;
    const char *name = what != NULL ? what : "facts document";
    int rc;

    *out = NULL;
    /* topo-sync's own document, not a source's payload: its size limit,
     * no parse budget (a compact document's tree is many times its text). */
    if (len > TOPO_MAX_FACTS_DOCUMENT)
        return topo_err_set(err, TOPO_ELIMIT, "%s: document of %zu bytes exceeds the limit of %zu",
                            name, len, (size_t)TOPO_MAX_FACTS_DOCUMENT);
    if (text == NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s: no document", name);
    if ((rc = topo_codec_json_parse(&doc, text, len, name, err)) != 0)
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
