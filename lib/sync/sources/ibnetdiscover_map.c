/* The node-name map of ibnetdiscover --node-name-map: one `0x<guid> "<name>"`
 * a line, '#' comments and blank lines. infiniband-diags reads the GUID
 * with strtoull(base 0), so a GUID without 0x would be decimal or octal
 * there; we ask for the 0x every map in practice has rather than guess. An
 * unquoted name is the rest of the line, trimmed. A GUID named twice the
 * same way is fine (concatenated maps); named two ways is an error naming
 * both lines, since either choice would be silent. */
#include "topo/ibnetdiscover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibnetdiscover_internal.h"
#include "topo/codec.h"
#include "topo/guid.h"
#include "topo/limits.h"

typedef struct entry {
    const char *name;
    int line;
} entry;

struct topo_ibnetdiscover_map {
    topo_pool *pool;
    TOPO_ARRAY(entry) entries;
    topo_strmap *index; /* "<16 hex>" -> index into entries */
};

static const char *guid_key(topo_pool *pool, uint64_t guid)
{
    char key[TOPO_GUID_TEXT_SIZE];
    topo_guid_format(key, guid);
    return topo_pool_strdup(pool, key);
}

/* The name of one line: quoted (to the next quote, then only blanks or a
 * comment) or the trimmed rest. NULL *name with 0 for a line of neither. */
static int line_name(ibd_span t, ibd_span *name)
{
    ibd_skip_blanks(&t);
    if (t.p < t.end && *t.p == '"') {
        const char *close = memchr(t.p + 1, '"', (size_t)(t.end - t.p - 1));
        if (!close)
            return -1;
        *name = (ibd_span){t.p + 1, close};
        ibd_span rest = {close + 1, t.end};
        ibd_skip_blanks(&rest);
        return rest.p == rest.end || *rest.p == '#' ? 0 : -2;
    }
    *name = t;
    ibd_trim(name);
    return 0;
}

static int add_entry(topo_ibnetdiscover_map *m, uint64_t guid, ibd_span name, const char *source,
                     int line, topo_err *err)
{
    const char *key = guid_key(m->pool, guid);
    const char *text = topo_pool_strndup(m->pool, name.p, (size_t)(name.end - name.p));
    if (!key || !text)
        return topo_err_nomem(err, "node-name map");
    int32_t found = topo_strmap_get(m->index, key);
    if (found >= 0) {
        const entry *e = &m->entries.items[found];
        if (strcmp(e->name, text) == 0)
            return 0;
        return ibd_fail(err, TOPO_EINVALID, source, line,
                        "GUID 0x%s is named \"%s\" here and \"%s\" on line %d", key, text, e->name,
                        e->line);
    }
    if (m->entries.n >= TOPO_MAX_FACTS_ENTRIES)
        return ibd_fail(err, TOPO_ELIMIT, source, line, "more than %u names",
                        (unsigned)TOPO_MAX_FACTS_ENTRIES);
    if (TOPO_ARRAY_PUSH(&m->entries, ((entry){text, line})) != 0 ||
        topo_strmap_put(m->index, key, (int32_t)(m->entries.n - 1)) != 0)
        return topo_err_nomem(err, "node-name map");
    return 0;
}

static int map_line(topo_ibnetdiscover_map *m, ibd_span t, const char *source, int line,
                    topo_err *err)
{
    uint64_t guid = 0;
    ibd_span name;
    ibd_skip_blanks(&t);
    if (t.p == t.end || *t.p == '#')
        return 0;
    if (ibd_take_guid(&t, &guid) != 0 || (t.p < t.end && !ibd_is_blank(*t.p)))
        return ibd_fail(err, TOPO_EINVALID, source, line,
                        "expected a GUID (0x and 1 to 16 hex digits) and a name");
    int rc = line_name(t, &name);
    if (rc == -1)
        return ibd_fail(err, TOPO_EINVALID, source, line, "an unterminated quoted name");
    if (rc == -2)
        return ibd_fail(err, TOPO_EINVALID, source, line, "text after the quoted name");
    if (name.p == name.end)
        return ibd_fail(err, TOPO_EINVALID, source, line, "GUID without a name");
    return add_entry(m, guid, name, source, line, err);
}

int topo_ibnetdiscover_map_parse(topo_ibnetdiscover_map **out, const char *text, size_t len,
                                 const char *source, topo_err *err)
{
    int rc = 0, line = 0;
    topo_ibnetdiscover_map *m = NULL;
    *out = NULL;
    if (!source)
        source = "node-name map";
    if (len > TOPO_MAX_NODE_NAME_MAP)
        return topo_err_set(err, TOPO_ELIMIT, "%s: larger than %u bytes", source,
                            (unsigned)TOPO_MAX_NODE_NAME_MAP);
    if (len > 0 && memchr(text, '\0', len))
        return topo_err_set(err, TOPO_EINVALID, "%s: a NUL byte", source);
    m = calloc(1, sizeof(*m));
    if (!m || !(m->pool = topo_pool_create()) || !(m->index = topo_strmap_create(256))) {
        rc = topo_err_nomem(err, "node-name map");
        goto cleanup;
    }
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        ibd_span t = {p, nl ? nl : end};
        if (t.end > t.p && t.end[-1] == '\r')
            t.end--;
        if ((rc = map_line(m, t, source, ++line, err)) != 0)
            goto cleanup;
        p = nl ? nl + 1 : end;
    }
    *out = m;
    m = NULL;
cleanup:
    topo_ibnetdiscover_map_free(m);
    return rc;
}

int topo_ibnetdiscover_map_read_file(topo_ibnetdiscover_map **out, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_NODE_NAME_MAP, err);
    if (rc == 0)
        rc = topo_ibnetdiscover_map_parse(out, text, len, path, err);
    free(text);
    return rc;
}

void topo_ibnetdiscover_map_free(topo_ibnetdiscover_map *map)
{
    if (!map)
        return;
    free(map->entries.items);
    topo_strmap_free(map->index);
    topo_pool_free(map->pool);
    free(map);
}

size_t topo_ibnetdiscover_map_count(const topo_ibnetdiscover_map *map)
{
    return map ? map->entries.n : 0;
}

const char *topo_ibnetdiscover_map_get(const topo_ibnetdiscover_map *map, uint64_t guid)
{
    char key[TOPO_GUID_TEXT_SIZE];
    if (!map)
        return NULL;
    topo_guid_format(key, guid);
    int32_t found = topo_strmap_get(map->index, key);
    return found >= 0 ? map->entries.items[found].name : NULL;
}
