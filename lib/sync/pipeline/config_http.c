/* The HTTP settings of topo-sync's sources in its configuration file
 * (config_internal.h): one reader for NetBox, UFM and LLDP, which differ
 * only in the credentials they take and NetBox's paging. */
#include "config_internal.h"

#include <string.h>

#include "topo/decode.h"
#include "topo/limits.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)

/* In topo_netbox_kind order: the names of sources.netbox.lists. */
static const char *const netbox_lists[] = {"devices", "racks", "sites", "interfaces", "cables"};

void sync_cfg_http_keys(const char **keys, size_t *n, topo_fetch_kind kind)
{
    static const char *const common[] = {"url",     "caFile",  "insecureSkipVerify", "timeout",
                                         "retries", "backoff", "maxResponseBytes",   "tokenFile",
                                         NULL};
    static const char *const netbox[] = {"tokenScheme", "pageSize", "lists", NULL};
    static const char *const ufm[] = {"username", "usernameFile", "passwordFile", NULL};
    static const char *const lldp[] = {"tokenScheme", NULL};
    const char *const *own = kind == TOPO_FETCH_NETBOX ? netbox
                             : kind == TOPO_FETCH_UFM  ? ufm
                                                       : lldp;
    for (size_t i = 0; common[i] != NULL && *n + 1 < SYNC_CFG_MAX_KEYS; i++)
        keys[(*n)++] = common[i];
    for (size_t i = 0; own[i] != NULL && *n + 1 < SYNC_CFG_MAX_KEYS; i++)
        keys[(*n)++] = own[i];
    keys[*n] = NULL;
}

static int read_lists(const topo_cfg *c, unsigned *out, const json_t *obj, const char *path)
{
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *list = NULL;
    int rc = topo_cfg_array(c, &list, obj, "lists", path);
    if (rc != 0 || list == NULL)
        return rc;
    P(p, path, "lists");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *v = json_array_get(list, i);
        size_t k = 0;
        while (k < sizeof(netbox_lists) / sizeof(netbox_lists[0]) &&
               !(json_is_string(v) && strcmp(json_string_value(v), netbox_lists[k]) == 0))
            k++;
        if (k == sizeof(netbox_lists) / sizeof(netbox_lists[0]))
            return topo_cfg_fail(c, v, list,
                                 "%s: expected one of devices, racks, sites, interfaces, cables",
                                 topo_decode_path_index(ip, sizeof(ip), p, i));
        *out |= TOPO_FETCH_NETBOX_LIST(k);
    }
    return 0;
}

/* Timeouts, retries and the body limit. */
static int read_limits(const topo_cfg *c, topo_fetch_opts *o, const json_t *obj, const char *path)
{
    int64_t timeout = 0, backoff = 0, retries = -1, max = 0;
    int rc = topo_cfg_duration(c, &timeout, obj, "timeout", path, 1, 3600 * 1000);
    if (rc == 0)
        rc = topo_cfg_duration(c, &backoff, obj, "backoff", path, 1, 600 * 1000);
    if (rc == 0)
        rc = topo_cfg_int(c, &retries, obj, "retries", path, 0, TOPO_MAX_HTTP_RETRIES);
    if (rc == 0)
        rc = topo_cfg_int(c, &max, obj, "maxResponseBytes", path, 1, INT64_C(1) << 40);
    o->timeout_ms = (long)timeout;
    o->backoff_ms = (long)backoff;
    /* 0 retries in the file means none; 0 in the options means the default. */
    o->retries = retries < 0 ? 0 : retries == 0 ? -1 : (int)retries;
    o->max_response = (size_t)max;
    return rc;
}

static int read_credentials(const topo_cfg *c, topo_fetch_opts *o, topo_fetch_kind kind,
                            const json_t *obj, const char *path)
{
    int rc = topo_cfg_string(c, &o->token_file, obj, "tokenFile", path, 0);
    if (rc == 0 && kind != TOPO_FETCH_UFM)
        rc = topo_cfg_string(c, &o->token_scheme, obj, "tokenScheme", path, 0);
    if (rc == 0 && kind == TOPO_FETCH_UFM)
        rc = topo_cfg_string(c, &o->username, obj, "username", path, 0);
    if (rc == 0 && kind == TOPO_FETCH_UFM)
        rc = topo_cfg_string(c, &o->username_file, obj, "usernameFile", path, 0);
    if (rc == 0 && kind == TOPO_FETCH_UFM)
        rc = topo_cfg_string(c, &o->password_file, obj, "passwordFile", path, 0);
    return rc;
}

int sync_cfg_http(const topo_cfg *c, topo_fetch_opts *o, topo_fetch_kind kind, const json_t *obj,
                  const char *path)
{
    int64_t page = 0;
    int rc = topo_cfg_string(c, &o->url, obj, "url", path, 0);
    if (rc == 0)
        rc = topo_cfg_string(c, &o->ca_file, obj, "caFile", path, 0);
    if (rc == 0)
        rc = topo_cfg_bool(c, &o->insecure_skip_verify, obj, "insecureSkipVerify", path);
    if (rc == 0)
        rc = read_limits(c, o, obj, path);
    if (rc == 0)
        rc = read_credentials(c, o, kind, obj, path);
    if (rc == 0 && kind == TOPO_FETCH_NETBOX)
        rc = topo_cfg_int(c, &page, obj, "pageSize", path, 1, 100000);
    if (rc == 0 && kind == TOPO_FETCH_NETBOX)
        rc = read_lists(c, &o->netbox_lists, obj, path);
    o->page_size = (int)page;
    if (rc != 0 || o->url == NULL)
        return rc;
    topo_err why = TOPO_ERR_INIT;
    if (topo_fetch_check(kind, o, &why) != 0)
        /* why starts with the kind's name: "sources.ufm: credentials required..." */
        return topo_cfg_fail(c, json_object_get(obj, "url"), obj, "sources.%s", why.text);
    return 0;
}
