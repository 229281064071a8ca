/* NetBox interfaces and cables into connections between two devices'
 * interfaces (netbox_internal.h): the field names of every API version
 * from 2.0 to 4.x, and only interface ends (console, power, front and rear
 * ports and circuit terminations carry no fabric adjacency). */
#include <stdio.h>
#include <string.h>

#include "srcjson_internal.h"
#include "netbox_internal.h"
#include "topo/limits.h"

#define NB_INTERFACE "dcim.interface"

void nb_ignore(topo_netbox *nb)
{
    nb->ignored_read++;
    nb->stats.ignored_links++;
}

int nb_string(const char **out, const json_t *obj, const char *key, const char *path, topo_err *err)
{
    *out = NULL;
    return topo_decode_string(out, obj, key, path, 0, NULL, err);
}

/* An interface as NetBox nests it ({device: {name}, name}): *dev NULL when
 * the device has no name. */
static int iface_end(const char **dev, const char **name, const json_t *obj, const char *path,
                     topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *device = NULL;
    int rc;
    *dev = *name = NULL;
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(obj));
    if ((rc = topo_decode_member(&device, obj, "device", path, JSON_OBJECT, 1, err)) != 0 ||
        (rc = nb_string(dev, device, "name", topo_decode_path_key(p, sizeof(p), path, "device"),
                        err)) != 0)
        return rc;
    return topo_decode_string(name, obj, "name", path, 1, NULL, err);
}

static int add_conn(topo_netbox *nb, const char *dev_a, const char *port_a, const char *dev_b,
                    const char *port_b, topo_err *err)
{
    if (dev_a == NULL || dev_b == NULL || *port_a == '\0' || *port_b == '\0') {
        nb_ignore(nb);
        return 0;
    }
    if (nb->conns.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u NetBox connections",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    nb_conn c = {topo_pool_strdup(nb->pool, dev_a), topo_pool_strdup(nb->pool, port_a),
                 topo_pool_strdup(nb->pool, dev_b), topo_pool_strdup(nb->pool, port_b)};
    if (!c.dev_a || !c.port_a || !c.dev_b || !c.port_b || TOPO_ARRAY_PUSH(&nb->conns, c) != 0)
        return topo_err_nomem(err, "netbox: connections");
    return 0;
}

/* Where an interface's far end is written, newest first: the traced path
 * (through patch panels) before the cable's direct peer. */
static const struct peer_field {
    const char *name;
    const char *type; /* the field naming the peers' object type, or NULL */
    int list;
} peer_fields[] = {
    {"connected_endpoints", "connected_endpoints_type", 1}, /* v3.3+ */
    {"connected_endpoint", "connected_endpoint_type", 0},   /* v2.5-v3.2 */
    {"connected_interface", NULL, 0},                       /* v2.0-v2.4 */
    {"link_peers", "link_peers_type", 1},                   /* v3.3+ */
    {"link_peer", "link_peer_type", 0},                     /* v3.0-v3.2 */
};

static int mark_mgmt(topo_netbox *nb, const char *dev, const char *name, topo_err *err)
{
    const char *key = topo_pool_printf(nb->pool, "%s\x1f%s", dev, name);
    if (key == NULL || topo_strmap_put(nb->mgmt, key, 1) != 0)
        return topo_err_nomem(err, "netbox: interfaces");
    return 0;
}

int nb_read_interface(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const char *dev = NULL, *name = NULL, *type = NULL;
    int mgmt = 0, rc;
    if ((rc = iface_end(&dev, &name, rec, path, err)) != 0 ||
        (rc = topo_decode_bool(&mgmt, rec, "mgmt_only", path, 0, err)) != 0)
        return rc;
    if (mgmt && dev != NULL)
        return mark_mgmt(nb, dev, name, err);
    for (size_t f = 0; f < sizeof(peer_fields) / sizeof(peer_fields[0]); f++) {
        const struct peer_field *pf = &peer_fields[f];
        const json_t *v = json_object_get(rec, pf->name);
        if (v == NULL || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0))
            continue;
        topo_decode_path_key(p, sizeof(p), path, pf->name);
        if (pf->type != NULL && (rc = nb_string(&type, rec, pf->type, path, err)) != 0)
            return rc;
        if (type != NULL && strcmp(type, NB_INTERFACE) != 0) {
            nb_ignore(nb);
            return 0;
        }
        if (!pf->list) {
            const char *pdev = NULL, *pname = NULL;
            if ((rc = iface_end(&pdev, &pname, v, p, err)) != 0)
                return rc;
            return add_conn(nb, dev, name, pdev, pname, err);
        }
        if (!json_is_array(v))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an array, got %s", p,
                                topo_decode_type_name(v));
        for (size_t i = 0; i < json_array_size(v); i++) {
            const char *pdev = NULL, *pname = NULL;
            topo_decode_path_index(ip, sizeof(ip), p, i);
            if ((rc = iface_end(&pdev, &pname, json_array_get(v, i), ip, err)) != 0 ||
                (rc = add_conn(nb, dev, name, pdev, pname, err)) != 0)
                return rc;
        }
        return 0;
    }
    return 0;
}

/* The interfaces at one end of a cable, into ends (at most max; more is
 * TOPO_ELIMIT): v3.3+ "<side>_terminations" [{object_type, object}], else
 * "termination_<side>" with "termination_<side>_type". */
typedef struct nb_end {
    const char *dev, *name;
} nb_end;

#define NB_MAX_TERMINATIONS 64

static int cable_ends(nb_end *ends, size_t *n, const json_t *rec, char side, const char *path,
                      topo_err *err)
{
    char key[32], p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX], op[TOPO_DECODE_PATH_MAX];
    const json_t *list = NULL, *obj = NULL;
    const char *type = NULL;
    int rc;
    *n = 0;
    snprintf(key, sizeof(key), "%c_terminations", side);
    if ((rc = topo_decode_member(&list, rec, key, path, JSON_ARRAY, 0, err)) != 0)
        return rc;
    if (list == NULL) {
        snprintf(key, sizeof(key), "termination_%c_type", side);
        if ((rc = nb_string(&type, rec, key, path, err)) != 0)
            return rc;
        snprintf(key, sizeof(key), "termination_%c", side);
        if ((rc = topo_decode_member(&obj, rec, key, path, JSON_OBJECT, 0, err)) != 0 ||
            obj == NULL || (type != NULL && strcmp(type, NB_INTERFACE) != 0))
            return rc;
        rc = iface_end(&ends[0].dev, &ends[0].name, obj,
                       topo_decode_path_key(p, sizeof(p), path, key), err);
        *n = rc == 0 ? 1 : 0;
        return rc;
    }
    topo_decode_path_key(p, sizeof(p), path, key);
    if (json_array_size(list) > NB_MAX_TERMINATIONS)
        return topo_err_set(err, TOPO_ELIMIT, "%s: more than %d terminations", p,
                            NB_MAX_TERMINATIONS);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *t = json_array_get(list, i);
        topo_decode_path_index(ip, sizeof(ip), p, i);
        if (!json_is_object(t))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", ip,
                                topo_decode_type_name(t));
        if ((rc = topo_decode_string(&type, t, "object_type", ip, 1, NULL, err)) != 0)
            return rc;
        if (strcmp(type, NB_INTERFACE) != 0)
            continue;
        if ((rc = topo_decode_member(&obj, t, "object", ip, JSON_OBJECT, 1, err)) != 0 ||
            (rc = iface_end(&ends[*n].dev, &ends[*n].name, obj,
                            topo_decode_path_key(op, sizeof(op), ip, "object"), err)) != 0)
            return rc;
        ++*n;
    }
    return 0;
}

/* A cable's status: v3+ {value: "connected"|"planned"|"decommissioning"},
 * v2 {value: true|false}; absent counts as connected. */
static int cable_connected(int *out, const json_t *rec, const char *path, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *status = json_object_get(rec, "status"), *v = NULL;
    *out = 1;
    if (status == NULL || json_is_null(status))
        return 0;
    if (json_is_string(status)) {
        v = status;
    } else if (json_is_object(status)) {
        v = json_object_get(status, "value");
    } else {
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s",
                            topo_decode_path_key(p, sizeof(p), path, "status"),
                            topo_decode_type_name(status));
    }
    if (json_is_string(v))
        *out = strcmp(json_string_value(v), "connected") == 0;
    else if (json_is_false(v))
        *out = 0;
    return 0;
}

int nb_read_cable(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err)
{
    nb_end a[NB_MAX_TERMINATIONS], b[NB_MAX_TERMINATIONS];
    size_t na = 0, nbe = 0;
    int connected = 1, rc;
    if (!json_is_object(rec))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(rec));
    if ((rc = cable_connected(&connected, rec, path, err)) != 0 ||
        (rc = cable_ends(a, &na, rec, 'a', path, err)) != 0 ||
        (rc = cable_ends(b, &nbe, rec, 'b', path, err)) != 0)
        return rc;
    if (!connected || na == 0 || nbe == 0) {
        nb_ignore(nb);
        return 0;
    }
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nbe; j++)
            if ((rc = add_conn(nb, a[i].dev, a[i].name, b[j].dev, b[j].name, err)) != 0)
                return rc;
    return 0;
}
