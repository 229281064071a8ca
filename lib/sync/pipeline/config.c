/* topo-sync's configuration file (include/topo/syncconfig.h). Read into a
 * jansson tree with positions, then field by field through the codec's
 * configuration reader, so that every message names file:line:column and
 * the field. Patterns are compiled here, so that a bad one is reported at
 * its line rather than when the first source runs. */
#include "topo/labelsyntax.h"
#include "topo/syncconfig.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "topo/cfgreader.h"
#include "topo/codec.h"
#include "topo/regex.h"
#include "topo/decode.h"
#include "topo/kueue.h"
#include "topo/labelowner.h"
#include "topo/limits.h"
#include "topo/pool.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)
#define PI(buf, path, i) topo_decode_path_index(buf, sizeof(buf), path, i)

struct topo_syncconfig {
    topo_pool *pool;
    json_t *root; /* the settings' strings point into it */
    topo_sync_settings settings;
    topo_level levels[TOPO_LEVEL_COUNT];
};

static int config_new(topo_syncconfig **out, topo_err *err)
{
    topo_syncconfig *cfg = calloc(1, sizeof(*cfg));
    if (!cfg || !(cfg->pool = topo_pool_create())) {
        free(cfg);
        return topo_err_nomem(err, "sync config");
    }
    cfg->settings.nvlink_hostname_fallback = 1;
    cfg->settings.min_hosts_percent = -1;
    /* A node name has no upper case (DNS-1123), so lower-casing a source's
     * "GPU-01" can only make it match: without, it is unmappable. */
    cfg->settings.names.lowercase = 1;
    *out = cfg;
    return 0;
}

void topo_syncconfig_free(topo_syncconfig *cfg)
{
    if (!cfg)
        return;
    json_decref(cfg->root);
    topo_pool_free(cfg->pool);
    free(cfg);
}

int topo_syncconfig_default(topo_syncconfig **out, topo_err *err)
{
    return config_new(out, err);
}

topo_sync_settings *topo_syncconfig_settings(topo_syncconfig *cfg)
{
    return &cfg->settings;
}

/* A list of strings (borrowed) into a pool array. */
static int parse_levels(const topo_cfg *c, topo_syncconfig *cfg, const json_t *labels)
{
    static const char *const allowed[] = {"prefix",     "levels",    "incomplete", "fallback",
                                          "precedence", "topograph", NULL};
    topo_plan_opts *o = &cfg->settings.plan;
    char p[TOPO_DECODE_PATH_MAX];
    static const char *const incomplete_names[] = {"leaveOut", "fallback", NULL};
    const json_t *levels = NULL, *prec = NULL;
    int incomplete = 0;
    int rc = topo_cfg_check_keys(c, labels, "labels", allowed);
    if (rc == 0)
        rc = topo_cfg_string(c, &o->prefix, labels, "prefix", "labels", 0);
    if (rc == 0)
        rc = topo_cfg_string(c, &o->fallback, labels, "fallback", "labels", 0);
    if (rc == 0)
        rc = topo_cfg_enum(c, &incomplete, labels, "incomplete", "labels", incomplete_names,
                           "a choice for incomplete nodes");
    if (rc == 0)
        rc = topo_cfg_array(c, &levels, labels, "levels", "labels");
    if (rc == 0)
        rc = topo_cfg_object(c, &prec, labels, "precedence", "labels");
    if (rc == 0)
        rc = topo_cfg_bool(c, &o->topograph, labels, "topograph", "labels");
    if (rc != 0)
        return rc;
    char why[512];
    if (o->prefix && !topo_labelowner_prefix_valid(o->prefix, why, sizeof why))
        return topo_cfg_fail(c, json_object_get(labels, "prefix"), labels,
                             "labels.prefix: \"%s\": %s", o->prefix, why);
    o->incomplete = incomplete == 1 ? TOPO_PLAN_FALLBACK : TOPO_PLAN_LEAVE_OUT;
    for (size_t i = 0; levels && i < json_array_size(levels); i++) {
        const json_t *v = json_array_get(levels, i);
        topo_level l;
        if (i >= TOPO_LEVEL_COUNT || !json_is_string(v) ||
            topo_level_parse(&l, json_string_value(v)) != 0)
            return topo_cfg_fail(c, v, levels,
                                 "%s: expected one of datacenter, spine, leaf, rack, nvlink, "
                                 "hostname, each once",
                                 PI(p, "labels.levels", i));
        cfg->levels[i] = l;
        size_t bad;
        if (topo_level_order_check(&bad, cfg->levels, i + 1, why, sizeof why) != 0)
            return topo_cfg_fail(c, json_array_get(levels, bad), levels, "%s: %s",
                                 PI(p, "labels.levels", bad), why);
        o->levels = cfg->levels;
        o->nlevels = i + 1;
    }
    const char *key;
    json_t *list;
    json_object_foreach((json_t *)prec, key, list) {
        topo_level l;
        char path[TOPO_DECODE_PATH_MAX];
        P(path, "labels.precedence", key);
        if (topo_level_parse(&l, key) != 0 || l == TOPO_LEVEL_HOSTNAME)
            return topo_cfg_fail(c, list, prec, "%s: not a level with sources", path);
        if (!json_is_array(list))
            return topo_cfg_fail(c, list, prec, "%s: expected a list of source names", path);
        if ((rc = topo_cfg_strings(c, &o->precedence[l], &o->nprecedence[l], prec, key,
                                   "labels.precedence", 1, 1, 0)) != 0)
            return rc;
    }
    /* The plan checks the prefix and fallback and the levels as a whole:
     * building one here reports them at this file's position. */
    topo_plan *probe = NULL;
    topo_err perr = TOPO_ERR_INIT;
    if (topo_plan_create(&probe, o, &perr) != 0)
        return topo_cfg_fail(c, labels, NULL, "labels.%s", perr.text);
    topo_plan_free(probe);
    return 0;
}

static int parse_names(const topo_cfg *c, topo_syncconfig *cfg, const json_t *names)
{
    static const char *const allowed[] = {"stripDomain", "stripSuffix", "lowercase", "pattern",
                                          "replacement", NULL};
    topo_namemap_opts *o = &cfg->settings.names;
    int rc = topo_cfg_check_keys(c, names, "nodeNames", allowed);
    if (rc == 0)
        rc = topo_cfg_bool(c, &o->strip_domain, names, "stripDomain", "nodeNames");
    if (rc == 0)
        rc = topo_cfg_string(c, &o->strip_suffix, names, "stripSuffix", "nodeNames", 0);
    if (rc == 0)
        rc = topo_cfg_bool(c, &o->lowercase, names, "lowercase", "nodeNames");
    if (rc == 0)
        rc = topo_cfg_string(c, &o->pattern, names, "pattern", "nodeNames", 0);
    if (rc == 0)
        rc = topo_cfg_string(c, &o->replacement, names, "replacement", "nodeNames", 0);
    if (rc != 0)
        return rc;
    topo_namemap *probe = NULL;
    topo_err why = TOPO_ERR_INIT;
    if (topo_namemap_create(&probe, o, &why) != 0)
        return topo_cfg_fail(c, json_object_get(names, "pattern"), names, "%s", why.text);
    topo_namemap_free(probe);
    return 0;
}

static int parse_fabric(const topo_cfg *c, topo_syncconfig *cfg, const json_t *fabric)
{
    static const char *const allowed[] = {"includeSwitch", "excludeSwitch", "includePort",
                                          "excludePort", NULL};
    const char **fields[] = {&cfg->settings.planes.include_switch,
                             &cfg->settings.planes.exclude_switch,
                             &cfg->settings.planes.include_port,
                             &cfg->settings.planes.exclude_port};
    int rc = topo_cfg_check_keys(c, fabric, "fabric", allowed);
    for (size_t i = 0; rc == 0 && i < 4; i++) {
        rc = topo_cfg_string(c, fields[i], fabric, allowed[i], "fabric", 0);
        regex_t re;
        if (rc != 0 || !*fields[i] || !**fields[i])
            continue;
        char why[256];
        if (topo_regex_compile(&re, *fields[i], REG_EXTENDED | REG_NOSUB, why, sizeof why) != 0) {
            char p[TOPO_DECODE_PATH_MAX];
            return topo_cfg_fail(c, json_object_get(fabric, allowed[i]), fabric, "%s: %s",
                                 P(p, "fabric", allowed[i]), why);
        }
        regfree(&re);
    }
    return rc;
}

static int parse_ibnetdiscover(const topo_cfg *c, topo_syncconfig *cfg, const json_t *list)
{
    static const char *const allowed[] = {"file", "nodeNameMap", NULL};
    char p[TOPO_DECODE_PATH_MAX];
    size_t n = json_array_size(list);
    topo_sync_ibnetdiscover *ib = topo_pool_calloc(c->pool, n ? n : 1, sizeof(*ib));
    if (!ib)
        return topo_err_nomem(c->err, "sync config");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(list, i);
        PI(p, "sources.ibnetdiscover", i);
        if (!json_is_object(e))
            return topo_cfg_fail(c, e, list, "%s: expected a map with file", p);
        int rc = topo_cfg_check_keys(c, e, p, allowed);
        if (rc == 0)
            rc = topo_cfg_string(c, &ib[i].file, e, "file", p, 1);
        if (rc == 0)
            rc = topo_cfg_string(c, &ib[i].node_name_map, e, "nodeNameMap", p, 0);
        if (rc != 0)
            return rc;
    }
    cfg->settings.ibnetdiscover = ib;
    cfg->settings.nibnetdiscover = n;
    return 0;
}

static int parse_netbox_files(const topo_cfg *c, topo_syncconfig *cfg, const json_t *files)
{
    /* In topo_netbox_kind order. */
    static const char *const kinds[] = {"devices", "racks", "sites", "interfaces", "cables",
                                        NULL};
    topo_sync_netbox_files *f = &cfg->settings.netbox_files;
    int rc = topo_cfg_check_keys(c, files, "sources.netbox.files", kinds);
    for (size_t k = 0; rc == 0 && kinds[k]; k++)
        rc = topo_cfg_strings(c, &f->files[k], &f->nfiles[k], files, kinds[k],
                              "sources.netbox.files", 0, 1, 0);
    if (rc == 0 && f->nfiles[TOPO_NETBOX_DEVICES] == 0)
        return topo_cfg_fail(c, files, NULL,
                             "sources.netbox.files.devices: required (at least one page)");
    return rc;
}

static int parse_netbox(const topo_cfg *c, topo_syncconfig *cfg, const json_t *nb)
{
    const char *allowed[SYNC_CFG_MAX_KEYS] = {"files", "switchRoles", "hostRoles", "sites",
                                              "tags",  "nvlinkField"};
    size_t nkeys = 6;
    const char *const path = "sources.netbox";
    topo_netbox_opts *o = &cfg->settings.netbox;
    const json_t *files = NULL;
    sync_cfg_http_keys(allowed, &nkeys, TOPO_FETCH_NETBOX);
    int rc = topo_cfg_check_keys(c, nb, path, allowed);
    if (rc == 0)
        rc = topo_cfg_strings(c, &o->switch_roles, &o->nswitch_roles, nb, "switchRoles", path, 0,
                              1, 0);
    if (rc == 0)
        rc = topo_cfg_strings(c, &o->host_roles, &o->nhost_roles, nb, "hostRoles", path, 0, 1,
                              0);
    if (rc == 0)
        rc = topo_cfg_strings(c, &o->sites, &o->nsites, nb, "sites", path, 0, 1, 0);
    if (rc == 0)
        rc = topo_cfg_strings(c, &o->tags, &o->ntags, nb, "tags", path, 0, 1, 0);
    if (rc == 0)
        rc = topo_cfg_string(c, &o->nvlink_field, nb, "nvlinkField", path, 0);
    if (rc == 0 && o->nvlink_field && !*o->nvlink_field)
        return topo_cfg_fail(c, json_object_get(nb, "nvlinkField"), nb,
                             "sources.netbox.nvlinkField: expected a non-empty string");
    if (rc == 0)
        rc = topo_cfg_object(c, &files, nb, "files", path);
    if (rc == 0)
        rc = sync_cfg_http(c, &cfg->settings.netbox_http, TOPO_FETCH_NETBOX, nb, path);
    if (rc != 0)
        return rc;
    if (files && cfg->settings.netbox_http.url)
        return topo_cfg_fail(c, json_object_get(nb, "url"), nb,
                             "sources.netbox: url and files exclude each other");
    if (!files && !cfg->settings.netbox_http.url)
        return topo_cfg_fail(c, nb, NULL,
                             "sources.netbox: url or files required (the API, or saved pages)");
    return files ? parse_netbox_files(c, cfg, files) : 0;
}

/* sources.ufm: the saved responses, or the API. */
static int parse_ufm(const topo_cfg *c, topo_syncconfig *cfg, const json_t *ufm)
{
    const char *allowed[SYNC_CFG_MAX_KEYS] = {"systemsFile", "linksFile"};
    size_t nkeys = 2;
    const char *const path = "sources.ufm";
    topo_sync_settings *s = &cfg->settings;
    sync_cfg_http_keys(allowed, &nkeys, TOPO_FETCH_UFM);
    int rc = topo_cfg_check_keys(c, ufm, path, allowed);
    if (rc == 0)
        rc = topo_cfg_string(c, &s->ufm_systems_file, ufm, "systemsFile", path, 0);
    if (rc == 0)
        rc = topo_cfg_string(c, &s->ufm_links_file, ufm, "linksFile", path, 0);
    if (rc == 0)
        rc = sync_cfg_http(c, &s->ufm_http, TOPO_FETCH_UFM, ufm, path);
    if (rc != 0)
        return rc;
    if (s->ufm_http.url && (s->ufm_systems_file || s->ufm_links_file))
        return topo_cfg_fail(c, json_object_get(ufm, "url"), ufm,
                             "sources.ufm: url and systemsFile/linksFile exclude each other");
    if (!s->ufm_http.url && !s->ufm_systems_file)
        return topo_cfg_fail(c, ufm, NULL,
                             "sources.ufm.systemsFile: required (or url, to fetch from UFM)");
    return 0;
}

/* sources.lldp: a directory of documents, or a collector's URL. */
static int parse_lldp(const topo_cfg *c, topo_syncconfig *cfg, const json_t *lldp)
{
    const char *allowed[SYNC_CFG_MAX_KEYS] = {"dir"};
    size_t nkeys = 1;
    const char *const path = "sources.lldp";
    topo_sync_settings *s = &cfg->settings;
    sync_cfg_http_keys(allowed, &nkeys, TOPO_FETCH_LLDP);
    int rc = topo_cfg_check_keys(c, lldp, path, allowed);
    if (rc == 0)
        rc = topo_cfg_string(c, &s->lldp_dir, lldp, "dir", path, 0);
    if (rc == 0)
        rc = sync_cfg_http(c, &s->lldp_http, TOPO_FETCH_LLDP, lldp, path);
    if (rc != 0)
        return rc;
    if (s->lldp_http.url && s->lldp_dir)
        return topo_cfg_fail(c, json_object_get(lldp, "url"), lldp,
                             "sources.lldp: url and dir exclude each other");
    if (!s->lldp_http.url && !s->lldp_dir)
        return topo_cfg_fail(c, lldp, NULL, "sources.lldp.dir: required (or url, a collector)");
    return 0;
}

static int parse_sources(const topo_cfg *c, topo_syncconfig *cfg, const json_t *src)
{
    static const char *const allowed[] = {"ibnetdiscover", "lldp", "ufm", "netbox", "nodes",
                                          NULL};
    static const char *const nodes_keys[] = {"file", "nvlinkHostnameFallback", NULL};
    topo_sync_settings *s = &cfg->settings;
    const json_t *ib = NULL, *lldp = NULL, *ufm = NULL, *nodes = NULL, *nb = NULL;
    int rc = topo_cfg_check_keys(c, src, "sources", allowed);
    if (rc == 0)
        rc = topo_cfg_array(c, &ib, src, "ibnetdiscover", "sources");
    if (rc == 0 && ib)
        rc = parse_ibnetdiscover(c, cfg, ib);
    if (rc == 0)
        rc = topo_cfg_object(c, &lldp, src, "lldp", "sources");
    if (rc == 0 && lldp)
        rc = parse_lldp(c, cfg, lldp);
    if (rc == 0)
        rc = topo_cfg_object(c, &ufm, src, "ufm", "sources");
    if (rc == 0 && ufm)
        rc = parse_ufm(c, cfg, ufm);
    if (rc == 0)
        rc = topo_cfg_object(c, &nb, src, "netbox", "sources");
    if (rc == 0 && nb)
        rc = parse_netbox(c, cfg, nb);
    if (rc == 0)
        rc = topo_cfg_object(c, &nodes, src, "nodes", "sources");
    if (rc == 0 && nodes &&
        (rc = topo_cfg_check_keys(c, nodes, "sources.nodes", nodes_keys)) == 0 &&
        (rc = topo_cfg_string(c, &s->nodes_file, nodes, "file", "sources.nodes", 0)) == 0)
        rc = topo_cfg_bool(c, &s->nvlink_hostname_fallback, nodes, "nvlinkHostnameFallback",
                           "sources.nodes");
    return rc;
}

/* exports.kueue.flavorLabels: a map of label keys to values, checked
 * here so that a bad one is reported at its line. */
static int parse_flavor_labels(const topo_cfg *c, topo_syncconfig *cfg, const json_t *map)
{
    const char *const path = "exports.kueue.flavorLabels";
    char p[TOPO_DECODE_PATH_MAX], why[512];
    size_t n = json_object_size(map);
    if (n > TOPO_MAX_TOPOLOGY_NODE_LABELS)
        return topo_cfg_fail(c, map, NULL, "%s: more than %d labels", path,
                             TOPO_MAX_TOPOLOGY_NODE_LABELS);
    topo_kv *kv = topo_pool_calloc(c->pool, n ? n : 1, sizeof(*kv));
    if (!kv)
        return topo_err_nomem(c->err, "sync config");
    const char *key;
    json_t *v;
    size_t i = 0;
    json_object_foreach((json_t *)map, key, v) {
        P(p, path, key);
        if (!json_is_string(v))
            return topo_cfg_fail(c, v, map, "%s: expected a string, got %s (quote \"true\")", p,
                                 topo_decode_type_name(v));
        if (!topo_label_key_valid(key, why, sizeof why) ||
            !topo_label_value_valid(json_string_value(v), why, sizeof why))
            return topo_cfg_fail(c, v, map, "%s: %s", p, why);
        kv[i++] = (topo_kv){key, json_string_value(v)};
    }
    cfg->settings.kueue.flavor_labels = kv;
    cfg->settings.kueue.nflavor_labels = n;
    return 0;
}

static int parse_exports(const topo_cfg *c, topo_syncconfig *cfg, const json_t *exports)
{
    static const char *const allowed[] = {"kueue", NULL};
    static const char *const kueue_keys[] = {"topologyName", "apiVersion", "flavorLabels", NULL};
    topo_export_kueue_opts *o = &cfg->settings.kueue;
    const json_t *kueue = NULL, *labels = NULL;
    int rc = topo_cfg_check_keys(c, exports, "exports", allowed);
    if (rc == 0)
        rc = topo_cfg_object(c, &kueue, exports, "kueue", "exports");
    if (rc != 0 || !kueue)
        return rc;
    if ((rc = topo_cfg_check_keys(c, kueue, "exports.kueue", kueue_keys)) == 0 &&
        (rc = topo_cfg_string(c, &o->topology_name, kueue, "topologyName", "exports.kueue", 0)) ==
            0 &&
        (rc = topo_cfg_string(c, &o->api_version, kueue, "apiVersion", "exports.kueue", 0)) == 0)
        rc = topo_cfg_object(c, &labels, kueue, "flavorLabels", "exports.kueue");
    if (rc == 0 && labels)
        rc = parse_flavor_labels(c, cfg, labels);
    if (rc == 0 && o->topology_name && !topo_dns_subdomain_valid(o->topology_name))
        return topo_cfg_fail(c, json_object_get(kueue, "topologyName"), kueue,
                             "exports.kueue.topologyName: \"%s\" is not a valid object name",
                             o->topology_name);
    if (rc == 0 && o->api_version && strcmp(o->api_version, "kueue.x-k8s.io/v1beta2") != 0 &&
        strcmp(o->api_version, "kueue.x-k8s.io/v1beta1") != 0)
        return topo_cfg_fail(c, json_object_get(kueue, "apiVersion"), kueue,
                             "exports.kueue.apiVersion: \"%s\" (served: kueue.x-k8s.io/v1beta2, "
                             "kueue.x-k8s.io/v1beta1)",
                             o->api_version);
    return rc;
}

/* refresh: {interval, staleAfter, minHostsPercent, sources: {<source>:
 * <interval>}}: the controller's reads (a day at most; a minute of
 * staleness at least; a percent of the last good read's hosts). */
static int parse_refresh(const topo_cfg *c, topo_syncconfig *cfg, const json_t *refresh)
{
    static const char *const allowed[] = {"interval", "staleAfter", "minHostsPercent", "sources",
                                          NULL};
    /* In topo_sync_source order (topo/sync.h), which the config cannot include. */
    static const char *const names[] = {"gpu", "ufm", "ibnetdiscover", "lldp", "netbox", NULL};
    static const char *const per_source[] = {"ufm", "ibnetdiscover", "lldp", "netbox", NULL};
    topo_sync_settings *s = &cfg->settings;
    const json_t *src = NULL;
    int rc = topo_cfg_check_keys(c, refresh, "refresh", allowed);
    if (rc == 0)
        rc = topo_cfg_duration(c, &s->refresh_ms, refresh, "interval", "refresh", 1000,
                               86400 * 1000LL);
    if (rc == 0)
        rc = topo_cfg_duration(c, &s->stale_after_ms, refresh, "staleAfter", "refresh", 60 * 1000,
                               7 * 86400 * 1000LL);
    if (rc == 0)
        rc = topo_cfg_int(c, &s->min_hosts_percent, refresh, "minHostsPercent", "refresh", 0, 100);
    if (rc == 0)
        rc = topo_cfg_object(c, &src, refresh, "sources", "refresh");
    if (rc == 0 && src)
        rc = topo_cfg_check_keys(c, src, "refresh.sources", per_source);
    for (size_t i = 1; rc == 0 && src && names[i]; i++)
        rc = topo_cfg_duration(c, &s->source_refresh_ms[i], src, names[i], "refresh.sources",
                               1000, 86400 * 1000LL);
    return rc;
}

static int parse_root(const topo_cfg *c, topo_syncconfig *cfg, const json_t *root)
{
    static const char *const allowed[] = {"labels",  "nodeNames", "fabric", "sources",
                                          "exports", "refresh",   NULL};
    const json_t *labels = NULL, *names = NULL, *fabric = NULL, *sources = NULL, *exports = NULL,
                 *refresh = NULL;
    if (json_is_null(root))
        return 0; /* an empty file: every default */
    if (!json_is_object(root))
        return topo_cfg_fail(c, root, NULL, "expected a map at the top, got %s",
                             topo_decode_type_name(root));
    int rc = topo_cfg_check_keys(c, root, "", allowed);
    if (rc == 0)
        rc = topo_cfg_object(c, &labels, root, "labels", "");
    if (rc == 0 && labels)
        rc = parse_levels(c, cfg, labels);
    if (rc == 0)
        rc = topo_cfg_object(c, &names, root, "nodeNames", "");
    if (rc == 0 && names)
        rc = parse_names(c, cfg, names);
    if (rc == 0)
        rc = topo_cfg_object(c, &fabric, root, "fabric", "");
    if (rc == 0 && fabric)
        rc = parse_fabric(c, cfg, fabric);
    if (rc == 0)
        rc = topo_cfg_object(c, &sources, root, "sources", "");
    if (rc == 0 && sources)
        rc = parse_sources(c, cfg, sources);
    if (rc == 0)
        rc = topo_cfg_object(c, &exports, root, "exports", "");
    if (rc == 0 && exports)
        rc = parse_exports(c, cfg, exports);
    if (rc == 0)
        rc = topo_cfg_object(c, &refresh, root, "refresh", "");
    if (rc == 0 && refresh)
        rc = parse_refresh(c, cfg, refresh);
    return rc;
}

int topo_syncconfig_parse(topo_syncconfig **out, const char *text, size_t len, const char *source,
                          topo_err *err)
{
    *out = NULL;
    const char *src = source ? source : "<input>";
    if (len > TOPO_MAX_SYNC_CONFIG)
        return topo_err_set(err, TOPO_ELIMIT, "%s: %zu bytes, larger than the %u byte limit", src,
                            len, (unsigned)TOPO_MAX_SYNC_CONFIG);
    topo_syncconfig *cfg = NULL;
    topo_codec_marks *marks = NULL;
    json_t *root = NULL;
    int rc = topo_codec_yaml_parse_marks(&root, &marks, text, len, source, err);
    if (rc == 0)
        rc = config_new(&cfg, err);
    if (rc == 0) {
        cfg->root = root;
        root = NULL;
        topo_cfg c = {.src = src, .marks = marks, .pool = cfg->pool, .err = err};
        rc = parse_root(&c, cfg, cfg->root);
    }
    topo_codec_marks_free(marks);
    json_decref(root);
    if (rc != 0) {
        topo_syncconfig_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int topo_syncconfig_load_file(topo_syncconfig **out, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_SYNC_CONFIG, err);
    if (rc == 0)
        rc = topo_syncconfig_parse(out, text, len, path, err);
    free(text);
    return rc;
}
