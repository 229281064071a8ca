/* topo-webhook's configuration file (format: docs/webhook.md) and the
 * --levels default. The YAML is read into a jansson tree with the position
 * of every value (codec marks), then validated field by field so that each
 * message names the field path and, where known, file:line:column. Unknown
 * keys are errors: a typo in a policy must not silently keep the default. */
#include "topo/admission_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "topo/cfgreader.h"
#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/quantity.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)
#define PI(buf, path, i) topo_decode_path_index(buf, sizeof(buf), path, i)

struct topo_admission_config {
    topo_pool *pool; /* every string and array below */
    topo_admission_topology_config *topologies;
    size_t ntopologies;
    topo_admission_policy default_policy;
    const char *ns_label; /* NULL: disabled */
    int64_t reservation_ttl_s;
    int64_t ungate_interval_ms;
    int64_t unclaimed_ttl_s;
    topo_resource *caps_ns, *caps_all; /* maxUnclaimed; NULL: the defaults */
    size_t ncaps_ns, ncaps_all;
    int replace_fail_fast; /* nodeReplacement.failFast */
    adm_packing_config packing;
};

static int oom(const topo_cfg *c)
{
    return topo_err_nomem(c->err, c->src ? c->src : "<input>");
}

static const char *const policy_names[] = {"gate", "deny", "ignore", NULL};
static const topo_admission_policy policies[] = {
    TOPO_ADMISSION_POLICY_GATE, TOPO_ADMISSION_POLICY_DENY, TOPO_ADMISSION_POLICY_IGNORE};

/* obj.key as a policy; *set 1 when present. */
static int parse_policy(const topo_cfg *c, topo_admission_policy *out, int *set,
                        const json_t *obj, const char *key, const char *path)
{
    int i = -1;
    int error = topo_cfg_enum(c, &i, obj, key, path, policy_names, "a policy");
    *set = i >= 0;
    if (error == 0 && i >= 0)
        *out = policies[i];
    return error;
}

static int parse_levels(const topo_cfg *c, topo_admission_topology_config *t, const json_t *obj,
                        const char *path)
{
    char p[TOPO_DECODE_PATH_MAX], pi[TOPO_DECODE_PATH_MAX], why[512];
    const json_t *arr;
    const char **levels;
    size_t n;
    int error = topo_cfg_member(c, &arr, obj, "levels", path, JSON_ARRAY,
                                "a list of label keys", 1);
    if (error < 0)
        return error;
    P(p, path, "levels");
    n = json_array_size(arr);
    if (n == 0 || n > TOPO_MAX_LEVELS)
        return topo_cfg_fail(c, arr, obj, "%s: %zu levels (expected 1..%d)", p, n,
                             TOPO_MAX_LEVELS);
    levels = topo_pool_calloc(c->pool, n, sizeof(*levels));
    if (levels == NULL)
        return oom(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        PI(pi, p, i);
        if (!json_is_string(v))
            return topo_cfg_fail(c, v, arr, "%s: expected a label key, got %s", pi,
                                 topo_decode_type_name(v));
        if ((levels[i] = topo_pool_strdup(c->pool, json_string_value(v))) == NULL)
            return oom(c);
    }
    size_t bad = 0;
    if (!topo_kueue_levels_valid(levels, n, &bad, why, sizeof(why)))
        return topo_cfg_fail(c, json_array_get(arr, bad), arr, "%s: %s", PI(pi, p, bad), why);
    t->levels = levels;
    t->nlevels = n;
    return 0;
}

static int parse_node_labels(const topo_cfg *c, topo_admission_topology_config *t,
                             const json_t *obj, const char *path)
{
    char p[TOPO_DECODE_PATH_MAX], pk[TOPO_DECODE_PATH_MAX], why[512];
    const json_t *map;
    const char *key;
    json_t *v;
    topo_kv *kv;
    size_t n = 0;
    int error = topo_cfg_member(c, &map, obj, "nodeLabels", path, JSON_OBJECT,
                                "a map of label key: value", 0);
    if (error < 0 || map == NULL)
        return error;
    P(p, path, "nodeLabels");
    if (json_object_size(map) > TOPO_MAX_TOPOLOGY_NODE_LABELS)
        return topo_cfg_fail(c, map, obj, "%s: %zu labels (at most %d)", p,
                             json_object_size(map), TOPO_MAX_TOPOLOGY_NODE_LABELS);
    kv = topo_pool_calloc(c->pool, json_object_size(map) + 1, sizeof(*kv));
    if (kv == NULL)
        return oom(c);
    json_object_foreach((json_t *)map, key, v) {
        P(pk, p, key);
        if (!topo_label_key_valid(key, why, sizeof(why)))
            return topo_cfg_fail(c, v, map, "%s: invalid label key: %s", pk, why);
        /* Label values are strings; an unquoted 8 or true is a YAML number
         * or bool, which Kubernetes would reject too. */
        if (!json_is_string(v))
            return topo_cfg_fail(c, v, map, "%s: expected a string label value, got %s (quote it)",
                                 pk, topo_decode_type_name(v));
        if (!topo_label_value_valid(json_string_value(v), why, sizeof(why)))
            return topo_cfg_fail(c, v, map, "%s: invalid label value \"%s\": %s", pk,
                                 json_string_value(v), why);
        kv[n].key = topo_pool_strdup(c->pool, key);
        kv[n].value = topo_pool_strdup(c->pool, json_string_value(v));
        if (kv[n].key == NULL || kv[n].value == NULL)
            return oom(c);
        n++;
    }
    t->node_labels = kv;
    t->nnode_labels = n;
    return 0;
}

static int parse_topology(const topo_cfg *c, topo_admission_topology_config *t, const json_t *obj,
                          const json_t *list, const char *path,
                          topo_admission_policy default_policy)
{
    static const char *const keys[] = {"name", "levels", "nodeLabels", "policy", NULL};
    char p[TOPO_DECODE_PATH_MAX], why[512];
    const char *name = NULL;
    int error;
    if (!json_is_object(obj))
        return topo_cfg_fail(c, obj, list, "%s: expected a map (name, levels, ...), got %s",
                             path, topo_decode_type_name(obj));
    if ((error = topo_cfg_check_keys(c, obj, path, keys)) < 0 ||
        (error = topo_cfg_string(c, &name, obj, "name", path, 1)) < 0)
        return error;
    /* Kueue's Topology objects are named so; the name is what pods and
     * logs refer to. */
    if (!topo_dns_label_valid(name, why, sizeof(why)))
        return topo_cfg_fail(c, json_object_get(obj, "name"), obj, "%s: \"%s\": %s",
                             P(p, path, "name"), name, why);
    if ((t->name = topo_pool_strdup(c->pool, name)) == NULL)
        return oom(c);
    if ((error = parse_levels(c, t, obj, path)) < 0 ||
        (error = parse_node_labels(c, t, obj, path)) < 0)
        return error;
    t->policy = default_policy;
    return parse_policy(c, &t->policy, &t->policy_set, obj, "policy", path);
}

/* A TTL in whole seconds, 10s..24h; *seconds keeps its default when the
 * key is absent. */
static int parse_ttl(const topo_cfg *c, int64_t *seconds, const json_t *root, const char *key)
{
    int64_t ms = *seconds * 1000;
    int error = topo_cfg_duration(c, &ms, root, key, "",
                                  TOPO_ADMISSION_RESERVATION_TTL_MIN_S * INT64_C(1000),
                                  TOPO_ADMISSION_RESERVATION_TTL_MAX_S * INT64_C(1000));
    if (error < 0)
        return error;
    if (ms % 1000 != 0)
        return topo_cfg_fail(c, json_object_get(root, key), root,
                             "%s: must be a whole number of seconds", key);
    *seconds = ms / 1000;
    return 0;
}

static int config_new(topo_admission_config **out)
{
    topo_admission_config *cfg = calloc(1, sizeof(*cfg));
    *out = NULL;
    if (cfg == NULL)
        return TOPO_ENOMEM;
    if ((cfg->pool = topo_pool_create()) == NULL) {
        free(cfg);
        return TOPO_ENOMEM;
    }
    cfg->default_policy = TOPO_ADMISSION_POLICY_GATE;
    cfg->ns_label = TOPO_ADMISSION_NAMESPACE_POLICY_LABEL;
    cfg->reservation_ttl_s = TOPO_ADMISSION_RESERVATION_TTL_DEFAULT;
    cfg->ungate_interval_ms = TOPO_ADMISSION_UNGATE_INTERVAL_DEFAULT_MS;
    cfg->unclaimed_ttl_s = TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT;
    *out = cfg;
    return 0;
}

/* maxUnclaimed.<which>: resource name -> quantity (Kueue units, "pods" a
 * count); at most TOPO_MAX_UNCLAIMED_CAPS entries. */
static int parse_caps(const topo_cfg *c, topo_resource **out, size_t *n, const json_t *parent,
                      const char *which)
{
    char p[TOPO_DECODE_PATH_MAX], pk[TOPO_DECODE_PATH_MAX];
    const json_t *obj, *v;
    const char *key;
    int error = topo_cfg_member(c, &obj, parent, which, "maxUnclaimed", JSON_OBJECT,
                                "a map of resource name to quantity", 0);
    if (error < 0 || obj == NULL)
        return error;
    P(p, "maxUnclaimed", which);
    if (json_object_size(obj) > TOPO_MAX_UNCLAIMED_CAPS)
        return topo_cfg_fail(c, obj, parent, "%s: %zu entries (at most %d)", p,
                             json_object_size(obj), TOPO_MAX_UNCLAIMED_CAPS);
    topo_resource *caps = topo_pool_calloc(c->pool, json_object_size(obj) + 1, sizeof(*caps));
    if (caps == NULL)
        return oom(c);
    size_t k = 0;
    json_object_foreach((json_t *)obj, key, v) {
        char why[256];
        topo_err qerr = TOPO_ERR_INIT;
        char text[64];
        P(pk, p, key);
        if (strcmp(key, "pods") != 0 && !topo_label_key_valid(key, why, sizeof(why)))
            return topo_cfg_fail(c, v, obj, "%s: \"%s\" is not a resource name: %s", pk, key,
                                 why);
        if (json_is_integer(v))
            snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else if (json_is_string(v) && json_string_length(v) < sizeof(text))
            snprintf(text, sizeof(text), "%s", json_string_value(v));
        else
            return topo_cfg_fail(c, v, obj,
                                 "%s: expected a quantity (\"64\", \"500\", \"1Ti\"), got %s", pk,
                                 topo_decode_type_name(v));
        if (topo_quantity_parse_resource(&caps[k].amount, key, text, &qerr) != 0)
            return topo_cfg_fail(c, v, obj, "%s: %s", pk, qerr.text);
        if (caps[k].amount < 0)
            return topo_cfg_fail(c, v, obj, "%s: must not be negative", pk);
        if ((caps[k].name = topo_pool_strdup(c->pool, key)) == NULL)
            return oom(c);
        k++;
    }
    *out = caps;
    *n = k;
    return 0;
}

/* maxUnclaimed: {perNamespace, total}; absent or null: the defaults. */
static int parse_unclaimed(const topo_cfg *c, topo_admission_config *cfg, const json_t *root)
{
    static const char *const keys[] = {"perNamespace", "total", NULL};
    const json_t *obj;
    int error = topo_cfg_member(c, &obj, root, "maxUnclaimed", "", JSON_OBJECT,
                                "a map with perNamespace and total", 0);
    if (error < 0 || obj == NULL)
        return error;
    if ((error = topo_cfg_check_keys(c, obj, "maxUnclaimed", keys)) < 0 ||
        (error = parse_caps(c, &cfg->caps_ns, &cfg->ncaps_ns, obj, "perNamespace")) < 0)
        return error;
    return parse_caps(c, &cfg->caps_all, &cfg->ncaps_all, obj, "total");
}

/* nodeReplacement: {failFast: <bool>} (docs/webhook.md "When nodes fail");
 * absent or null: the defaults. */
static int parse_node_replacement(const topo_cfg *c, topo_admission_config *cfg,
                                  const json_t *root)
{
    static const char *const keys[] = {"failFast", NULL};
    const json_t *obj;
    int error = topo_cfg_member(c, &obj, root, "nodeReplacement", "", JSON_OBJECT,
                                "a map with failFast", 0);
    if (error < 0 || obj == NULL)
        return error;
    if ((error = topo_cfg_check_keys(c, obj, "nodeReplacement", keys)) < 0)
        return error;
    return topo_cfg_bool(c, &cfg->replace_fail_fast, obj, "failFast", "nodeReplacement");
}

/* namespacePolicyLabel: a label key, or "" to disable. */
static int parse_namespace_label(const topo_cfg *c, topo_admission_config *cfg,
                                 const json_t *root)
{
    char why[512];
    const char *s = NULL;
    int error = topo_cfg_string(c, &s, root, "namespacePolicyLabel", "", 0);
    if (error < 0 || s == NULL)
        return error;
    if (s[0] == '\0') {
        cfg->ns_label = NULL;
        return 0;
    }
    if (!topo_label_key_valid(s, why, sizeof(why)))
        return topo_cfg_fail(c, json_object_get(root, "namespacePolicyLabel"), root,
                             "namespacePolicyLabel: invalid label key \"%s\": %s", s, why);
    if ((cfg->ns_label = topo_pool_strdup(c->pool, s)) == NULL)
        return oom(c);
    return 0;
}

static int parse_topologies(const topo_cfg *c, topo_admission_config *cfg, const json_t *root)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *arr = json_object_get(root, "topologies");
    int error;
    if (arr == NULL || json_is_null(arr))
        return topo_cfg_fail(c, arr, root, "topologies: required (a list of 1..%d topologies)",
                             TOPO_MAX_TOPOLOGIES);
    if ((error = topo_cfg_member(c, &arr, root, "topologies", "", JSON_ARRAY, "a list", 1)) < 0)
        return error;
    if (json_array_size(arr) == 0 || json_array_size(arr) > TOPO_MAX_TOPOLOGIES)
        return topo_cfg_fail(c, arr, root, "topologies: %zu entries (expected 1..%d)",
                             json_array_size(arr), TOPO_MAX_TOPOLOGIES);
    cfg->topologies = topo_pool_calloc(c->pool, json_array_size(arr), sizeof(*cfg->topologies));
    if (cfg->topologies == NULL)
        return oom(c);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *t = json_array_get(arr, i);
        PI(p, "topologies", i);
        if ((error = parse_topology(c, &cfg->topologies[i], t, arr, p, cfg->default_policy)) < 0)
            return error;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cfg->topologies[j].name, cfg->topologies[i].name) == 0) {
                char pn[TOPO_DECODE_PATH_MAX];
                return topo_cfg_fail(c, json_object_get(t, "name"), t,
                                     "%s: duplicate topology name \"%s\" (also topologies[%zu])",
                                     P(pn, p, "name"), cfg->topologies[i].name, j);
            }
        }
        cfg->ntopologies++;
    }
    return 0;
}

static int parse_root(const topo_cfg *c, topo_admission_config *cfg, const json_t *root)
{
    static const char *const keys[] = {"topologies",     "defaultPolicy",
                                       "namespacePolicyLabel", "reservationTTL",
                                       "ungateInterval", "unclaimedTTL",
                                       "maxUnclaimed",   "nodeReplacement",
                                       "packing",        NULL};
    int set, error;

    if (!json_is_object(root))
        return topo_cfg_fail(c, root, NULL, "expected a map with topologies, got %s",
                             json_is_null(root) ? "an empty document"
                                                : topo_decode_type_name(root));
    if ((error = topo_cfg_check_keys(c, root, "", keys)) < 0 ||
        (error = parse_policy(c, &cfg->default_policy, &set, root, "defaultPolicy", "")) < 0 ||
        (error = parse_namespace_label(c, cfg, root)) < 0 ||
        (error = parse_ttl(c, &cfg->reservation_ttl_s, root, "reservationTTL")) < 0 ||
        (error = topo_cfg_duration(c, &cfg->ungate_interval_ms, root, "ungateInterval", "",
                                   TOPO_ADMISSION_UNGATE_INTERVAL_MIN_MS,
                                   TOPO_ADMISSION_UNGATE_INTERVAL_MAX_MS)) < 0 ||
        (error = parse_ttl(c, &cfg->unclaimed_ttl_s, root, "unclaimedTTL")) < 0 ||
        (error = parse_unclaimed(c, cfg, root)) < 0 ||
        (error = parse_node_replacement(c, cfg, root)) < 0 ||
        (error = parse_topologies(c, cfg, root)) < 0)
        return error;
    return adm_config_packing_parse(c, &cfg->packing, root, cfg->topologies, cfg->ntopologies);
}

int topo_admission_config_parse(topo_admission_config **out, const char *text, size_t len,
                                const char *source, topo_err *err)
{
    topo_admission_config *cfg = NULL;
    topo_codec_marks *marks = NULL;
    json_t *root = NULL;
    int error;

    *out = NULL;
    if (len > TOPO_MAX_CONFIG_FILE) {
        error = topo_err_set(err, TOPO_ELIMIT, "%s: %zu bytes, larger than the %u byte limit",
                             source != NULL ? source : "<input>", len, TOPO_MAX_CONFIG_FILE);
        goto cleanup;
    }
    if ((error = topo_codec_yaml_parse_marks(&root, &marks, text, len, source, err)) < 0)
        goto cleanup;
    topo_cfg c = {.src = source, .marks = marks, .err = err};
    if ((error = config_new(&cfg)) < 0) {
        error = oom(&c);
        goto cleanup;
    }
    c.pool = cfg->pool;
    if ((error = parse_root(&c, cfg, root)) < 0)
        goto cleanup;
    *out = cfg;
    cfg = NULL;

cleanup:
    topo_admission_config_free(cfg);
    topo_codec_marks_free(marks);
    json_decref(root);
    return error;
}

int topo_admission_config_load_file(topo_admission_config **out, const char *path,
                                    topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int error;
    *out = NULL;
    if ((error = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_CONFIG_FILE, err)) <
        0)
        return error;
    error = topo_admission_config_parse(out, text, len, path, err);
    free(text);
    return error;
}

int topo_admission_config_from_levels(topo_admission_config **out, const char *levels_csv,
                                      topo_err *err)
{
    topo_admission_config *cfg = NULL;
    topo_admission_topology_config *t;
    const char **levels = NULL;
    size_t n = 0;
    int error = 0;

    *out = NULL;
    if (levels_csv == NULL || levels_csv[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "--levels: required (L1,L2,..., coarsest first)");
    if (config_new(&cfg) < 0)
        return topo_err_set(err, TOPO_ENOMEM, "--levels: out of memory");
    if ((error = topo_kueue_levels_parse(&levels, &n, levels_csv, cfg->pool, err)) < 0) {
        topo_err_wrap(err, "--levels");
        goto cleanup;
    }
    if ((t = topo_pool_calloc(cfg->pool, 1, sizeof(*t))) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "--levels: out of memory");
        goto cleanup;
    }
    t->name = TOPO_ADMISSION_DEFAULT_TOPOLOGY;
    t->levels = levels;
    t->nlevels = n;
    t->policy = cfg->default_policy;
    cfg->topologies = t;
    cfg->ntopologies = 1;
    *out = cfg;
    cfg = NULL;

cleanup:
    topo_admission_config_free(cfg);
    return error;
}

void topo_admission_config_free(topo_admission_config *cfg)
{
    if (cfg == NULL)
        return;
    topo_pool_free(cfg->pool);
    free(cfg);
}

size_t topo_admission_config_topology_count(const topo_admission_config *cfg)
{
    return cfg->ntopologies;
}

const topo_admission_topology_config *
topo_admission_config_topology(const topo_admission_config *cfg, size_t i)
{
    return i < cfg->ntopologies ? &cfg->topologies[i] : NULL;
}

const topo_admission_topology_config *
topo_admission_config_find_topology(const topo_admission_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->ntopologies; i++) {
        if (strcmp(cfg->topologies[i].name, name) == 0)
            return &cfg->topologies[i];
    }
    return NULL;
}

topo_admission_policy topo_admission_config_default_policy(const topo_admission_config *cfg)
{
    return cfg->default_policy;
}

const char *topo_admission_config_namespace_policy_label(const topo_admission_config *cfg)
{
    return cfg->ns_label;
}

int64_t topo_admission_config_reservation_ttl_s(const topo_admission_config *cfg)
{
    return cfg->reservation_ttl_s;
}

int64_t topo_admission_config_ungate_interval_ms(const topo_admission_config *cfg)
{
    return cfg->ungate_interval_ms;
}

int64_t topo_admission_config_unclaimed_ttl_s(const topo_admission_config *cfg)
{
    return cfg->unclaimed_ttl_s;
}

const topo_resource *topo_admission_config_unclaimed_caps(const topo_admission_config *cfg,
                                                          int total, size_t *n)
{
    *n = total ? cfg->ncaps_all : cfg->ncaps_ns;
    return total ? cfg->caps_all : cfg->caps_ns;
}

int topo_admission_config_replace_fail_fast(const topo_admission_config *cfg)
{
    return cfg->replace_fail_fast;
}

const topo_admission_packing *topo_admission_config_packing(const topo_admission_config *cfg)
{
    return cfg->packing.enabled ? &cfg->packing.settings : NULL;
}

const char *topo_admission_config_packing_note(const topo_admission_config *cfg)
{
    return cfg->packing.enabled ? cfg->packing.note : NULL;
}
