/* lldpd's neighbour JSON, both shapes (include/topo/lldp.h): -f json0
 * wraps every value in a list of {"value": ...} objects and never keys by
 * name; -f json keys interfaces by ifname and the chassis by SysName and
 * collapses one-element lists. Both reduce to (local ifname, neighbour
 * chassis fields, SysName when keyed), read by one function. */
#include "topo/lldp.h"

#include <stdio.h>
#include <string.h>

#include "srcjson_internal.h"
#include "topo/decode.h"
#include "topo/limits.h"

/* Fields are wrapped at most as deep as json0 does ([{"value": "x"}]); a
 * deeper nesting is not lldpd's and is refused rather than followed. */
#define LLDP_MAX_WRAP 4

typedef struct lldp_ctx {
    topo_facts *facts;
    const char *host;
    size_t neighbours;
    topo_err *err;
} lldp_ctx;

/* The text of a field, whatever its wrapping: "x", {"value": "x"},
 * [{"value": "x"}] or ["x"]; *out NULL when absent, null or an empty list. */
static int field_text(const char **out, const json_t *v, const char *path, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    snprintf(p, sizeof(p), "%s", path);
    *out = NULL;
    for (int depth = 0; v != NULL && !json_is_null(v); depth++) {
        char next[TOPO_DECODE_PATH_MAX];
        if (depth == LLDP_MAX_WRAP)
            return topo_err_set(err, TOPO_EINVALID, "%s: nested too deeply for an lldpd value", p);
        if (json_is_string(v)) {
            if (strlen(json_string_value(v)) != json_string_length(v))
                return topo_err_set(err, TOPO_EINVALID, "%s: NUL byte in string", p);
            *out = json_string_value(v);
            return 0;
        }
        if (json_is_array(v)) {
            if (json_array_size(v) == 0)
                return 0;
            v = json_array_get(v, 0);
            topo_decode_path_index(next, sizeof(next), p, 0);
        } else if (json_is_object(v) && json_object_get(v, "value") != NULL) {
            v = json_object_get(v, "value");
            topo_decode_path_key(next, sizeof(next), p, "value");
        } else {
            return topo_err_set(err, TOPO_EINVALID, "%s: expected a string, got %s", p,
                                topo_decode_type_name(v));
        }
        memcpy(p, next, sizeof(p));
    }
    return 0;
}

static int member_text(const char **out, const json_t *obj, const char *key, const char *path,
                       topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    return field_text(out, json_object_get(obj, key), topo_decode_path_key(p, sizeof(p), path, key),
                      err);
}

/* One neighbour: SysName (from the chassis key, or its name field), else
 * the chassis id, names the switch at the other end of ifname. */
static int neighbour(lldp_ctx *c, const char *ifname, const char *sysname, const json_t *fields,
                     const char *path)
{
    int rc = 0;
    if (!json_is_object(fields))
        return topo_err_set(c->err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(fields));
    if ((sysname == NULL || *sysname == '\0') &&
        (rc = member_text(&sysname, fields, "name", path, c->err)) != 0)
        return rc;
    if ((sysname == NULL || *sysname == '\0') &&
        (rc = member_text(&sysname, fields, "id", path, c->err)) != 0)
        return rc;
    if (sysname == NULL || *sysname == '\0')
        return topo_err_set(c->err, TOPO_EINVALID,
                            "%s: the neighbour has neither a SysName nor a chassis id", path);
    if ((rc = topo_facts_add_host_link(c->facts, c->host, ifname, sysname, c->err)) != 0)
        return rc;
    c->neighbours++;
    return 0;
}

/* A chassis that holds its fields directly (json0, or json without a
 * SysName) rather than under the SysName: its "id" is the chassis id
 * itself, a string or {type, value} or a list, never a keyed chassis. */
static int unkeyed_chassis(const json_t *chassis)
{
    const json_t *id = json_object_get(chassis, "id");
    return id != NULL && (json_is_string(id) || json_is_array(id) ||
                          (json_is_object(id) && json_object_get(id, "value") != NULL));
}

static int chassis_object(lldp_ctx *c, const char *ifname, const json_t *chassis, const char *path)
{
    char p[TOPO_DECODE_PATH_MAX];
    const char *key;
    const json_t *v;
    int rc;
    if (unkeyed_chassis(chassis))
        return neighbour(c, ifname, NULL, chassis, path);
    if (json_object_size(chassis) == 0)
        return topo_err_set(c->err, TOPO_EINVALID, "%s: empty chassis", path);
    json_object_foreach((json_t *)chassis, key, v)
    {
        if ((rc = neighbour(c, ifname, key, v, topo_decode_path_key(p, sizeof(p), path, key))) != 0)
            return rc;
    }
    return 0;
}

/* One interface entry: its chassis is an object (-f json: keyed by SysName
 * or not) or a list of unkeyed chassis (-f json0, whose SysName is a
 * "name" field). */
static int interface(lldp_ctx *c, const char *ifname, const json_t *iface, const char *path)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *chassis = NULL;
    int rc;
    if (!json_is_object(iface))
        return topo_err_set(c->err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(iface));
    if (ifname == NULL || *ifname == '\0')
        return topo_err_set(c->err, TOPO_EINVALID, "%s: empty interface name", path);
    chassis = json_object_get(iface, "chassis");
    topo_decode_path_key(p, sizeof(p), path, "chassis");
    if (json_is_object(chassis))
        return chassis_object(c, ifname, chassis, p);
    if (!json_is_array(chassis) || json_array_size(chassis) == 0)
        return topo_err_set(c->err, TOPO_EINVALID, "%s: expected a chassis object or list, got %s",
                            p, chassis ? topo_decode_type_name(chassis) : "nothing");
    for (size_t i = 0; i < json_array_size(chassis); i++) {
        char ip[TOPO_DECODE_PATH_MAX];
        const json_t *e = json_array_get(chassis, i);
        topo_decode_path_index(ip, sizeof(ip), p, i);
        if ((rc = neighbour(c, ifname, NULL, e, ip)) != 0)
            return rc;
    }
    return 0;
}

/* -f json: {"lldp": {"interface": {ifname: {...}} or [{ifname: {...}}, ...]}}. */
static int keyed_document(lldp_ctx *c, const json_t *lldp)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *ifaces = json_object_get(lldp, "interface");
    const char *key;
    const json_t *v;
    int rc;
    if (ifaces == NULL || json_is_null(ifaces))
        return 0; /* {"lldp": {}}: no neighbours */
    if (json_is_object(ifaces)) {
        json_object_foreach((json_t *)ifaces, key, v)
        {
            topo_decode_path_key(p, sizeof(p), "lldp.interface", key);
            if ((rc = interface(c, key, v, p)) != 0)
                return rc;
        }
        return 0;
    }
    if (!json_is_array(ifaces))
        return topo_err_set(c->err, TOPO_EINVALID,
                            "lldp.interface: expected an object or an array, got %s",
                            topo_decode_type_name(ifaces));
    for (size_t i = 0; i < json_array_size(ifaces); i++) {
        char ip[TOPO_DECODE_PATH_MAX];
        const json_t *e = json_array_get(ifaces, i);
        topo_decode_path_index(ip, sizeof(ip), "lldp.interface", i);
        if (!json_is_object(e))
            return topo_err_set(c->err, TOPO_EINVALID, "%s: expected an object, got %s", ip,
                                topo_decode_type_name(e));
        json_object_foreach((json_t *)e, key, v)
        {
            if ((rc = interface(c, key, v, topo_decode_path_key(p, sizeof(p), ip, key))) != 0)
                return rc;
        }
    }
    return 0;
}

/* -f json0: {"lldp": [{"interface": [{"name": ifname, "chassis": [...]}]}]}. */
static int json0_document(lldp_ctx *c, const json_t *lldp)
{
    char ep[TOPO_DECODE_PATH_MAX], p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    int rc;
    for (size_t i = 0; i < json_array_size(lldp); i++) {
        const json_t *e = json_array_get(lldp, i), *ifaces = NULL;
        topo_decode_path_index(ep, sizeof(ep), "lldp", i);
        if (!json_is_object(e))
            return topo_err_set(c->err, TOPO_EINVALID, "%s: expected an object, got %s", ep,
                                topo_decode_type_name(e));
        if ((rc = topo_decode_member(&ifaces, e, "interface", ep, JSON_ARRAY, 0, c->err)) != 0)
            return rc;
        topo_decode_path_key(p, sizeof(p), ep, "interface");
        for (size_t j = 0; ifaces != NULL && j < json_array_size(ifaces); j++) {
            const json_t *iface = json_array_get(ifaces, j);
            const char *name = NULL;
            topo_decode_path_index(ip, sizeof(ip), p, j);
            if (json_is_object(iface) && (rc = member_text(&name, iface, "name", ip, c->err)) != 0)
                return rc;
            if ((rc = interface(c, name, iface, ip)) != 0)
                return rc;
        }
    }
    return 0;
}

int topo_lldp_parse_json(size_t *out_neighbours, topo_facts *facts, const char *host,
                         const json_t *doc, const char *source, topo_err *err)
{
    lldp_ctx c = {facts, host, 0, err};
    const json_t *lldp = json_is_object(doc) ? json_object_get(doc, "lldp") : NULL;
    int rc;
    if (out_neighbours)
        *out_neighbours = 0;
    if ((rc = topo_facts_add_host(facts, host, NULL, err)) != 0)
        return srcjson_wrap(err, rc, source);
    if (!json_is_object(doc))
        rc = topo_err_set(err, TOPO_EINVALID, "expected an lldpd document (an object), got %s",
                          doc ? topo_decode_type_name(doc) : "nothing");
    else if (json_is_object(lldp))
        rc = keyed_document(&c, lldp);
    else if (json_is_array(lldp))
        rc = json0_document(&c, lldp);
    else if (lldp == NULL)
        rc = topo_err_set(err, TOPO_EINVALID, "lldp: required");
    else
        rc = topo_err_set(err, TOPO_EINVALID, "lldp: expected an object or an array, got %s",
                          topo_decode_type_name(lldp));
    if (out_neighbours)
        *out_neighbours = c.neighbours;
    return rc != 0 ? srcjson_wrap(err, rc, source) : 0;
}

int topo_lldp_parse(size_t *out_neighbours, topo_facts *facts, const char *host, const char *text,
                    size_t len, const char *source, topo_err *err)
{
    json_t *doc = NULL;
    if (out_neighbours)
        *out_neighbours = 0;
    int rc = srcjson_parse(&doc, text, len, TOPO_MAX_LLDP_DOCUMENT, "lldp document", source, err);
    if (rc == 0)
        rc = topo_lldp_parse_json(out_neighbours, facts, host, doc, source, err);
    json_decref(doc);
    return rc;
}

int topo_lldp_add_json(int *refused, size_t *out_neighbours, topo_facts *facts, const char *host,
                       const json_t *doc, const char *source, topo_err *err)
{
    topo_facts *alone = NULL;
    *refused = 0;
    if (out_neighbours)
        *out_neighbours = 0;
    /* Read twice: on its own first, so a document refused halfway leaves
     * nothing of itself in facts (a host with half its cables). */
    int rc = topo_facts_create(&alone, topo_facts_source(facts), err);
    if (rc == 0)
        rc = topo_lldp_parse_json(NULL, alone, host, doc, source, err);
    topo_facts_free(alone);
    if (rc != 0) {
        /* Whatever refuses it on its own is the document's (a conflict
         * within it too), but for memory. */
        *refused = rc != TOPO_ENOMEM;
        return rc;
    }
    return topo_lldp_parse_json(out_neighbours, facts, host, doc, source, err);
}

int topo_lldp_add(int *refused, size_t *out_neighbours, topo_facts *facts, const char *host,
                  const char *text, size_t len, const char *source, topo_err *err)
{
    json_t *doc = NULL;
    *refused = 0;
    if (out_neighbours)
        *out_neighbours = 0;
    int rc = srcjson_parse(&doc, text, len, TOPO_MAX_LLDP_DOCUMENT, "lldp document", source, err);
    if (rc != 0)
        *refused = rc != TOPO_ENOMEM;
    else
        rc = topo_lldp_add_json(refused, out_neighbours, facts, host, doc, source, err);
    json_decref(doc);
    return rc;
}
