/* topo-webhook's configuration file (format: docs/webhook.md) and the
 * --levels default. The YAML is read into a jansson tree with the position
 * of every value (codec marks), then validated field by field so that each
 * message names the field path and, where known, file:line:column. Unknown
 * keys are errors: a typo in a policy must not silently keep the default. */
#include "topo/admission_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/cfgreader.h"
#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/goparse.h"
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
};

/* What the validators need to report an error. */
typedef struct reader {
    topo_cfg cfg;    /* file name, marks and err for topo/cfgreader.h */
    const char *src; /* for messages */
    const char *source; /* as given, for topo_err_at */
    const topo_codec_marks *marks;
    const json_t *root;
    topo_pool *pool;
    topo_err *err;
} reader;

/* "src:line:col: path: message", at the position of `at` (or of the nearest
 * enclosing value the caller passes as fallback). */
static int fail(const reader *r, const json_t *at, const json_t *fallback, const char *fmt, ...)
    TOPO_PRINTF(4, 5);
static int fail(const reader *r, const json_t *at, const json_t *fallback, const char *fmt, ...)
{
    char msg[TOPO_ERR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return topo_cfg_fail(&r->cfg, at, fallback, "%s", msg);
}

static int oom(const reader *r)
{
    return topo_err_nomem(r->err, r->src);
}

/* --- field readers ------------------------------------------------------------------ */

static int check_keys(const reader *r, const json_t *obj, const char *path,
                      const char *const *allowed)
{
    return topo_cfg_check_keys(&r->cfg, obj, path, allowed);
}

/* A string field, or NULL in *out when absent. */
static int get_string(const reader *r, const char **out, const json_t *obj, const char *key,
                      const char *path, int required)
{
    *out = NULL;
    return topo_cfg_string(&r->cfg, out, obj, key, path, required);
}

static int parse_policy(const reader *r, topo_admission_policy *out, int *set, const json_t *obj,
                        const char *path)
{
    char p[TOPO_DECODE_PATH_MAX];
    const char *s;
    int error;
    *set = 0;
    if ((error = get_string(r, &s, obj, "policy", path, 0)) < 0 || s == NULL)
        return error;
    if (topo_admission_policy_parse(out, s) != 0)
        return fail(r, json_object_get(obj, "policy"), obj,
                    "%s: \"%s\" is not a policy (expected gate, deny or ignore)",
                    P(p, path, "policy"), s);
    *set = 1;
    return 0;
}

static int parse_levels(const reader *r, topo_admission_topology_config *t, const json_t *obj,
                        const char *path)
{
    char p[TOPO_DECODE_PATH_MAX], pi[TOPO_DECODE_PATH_MAX], why[512];
    const json_t *arr = json_object_get(obj, "levels");
    const char **levels;
    size_t n;
    P(p, path, "levels");
    if (arr == NULL || json_is_null(arr))
        return fail(r, arr, obj, "%s: required", p);
    if (!json_is_array(arr))
        return fail(r, arr, obj, "%s: expected a list of label keys, got %s", p,
                    topo_decode_type_name(arr));
    n = json_array_size(arr);
    if (n == 0 || n > TOPO_MAX_LEVELS)
        return fail(r, arr, obj, "%s: %zu levels (expected 1..%d)", p, n, TOPO_MAX_LEVELS);
    levels = topo_pool_calloc(r->pool, n, sizeof(*levels));
    if (levels == NULL)
        return oom(r);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        PI(pi, p, i);
        if (!json_is_string(v))
            return fail(r, v, arr, "%s: expected a label key, got %s", pi,
                        topo_decode_type_name(v));
        if ((levels[i] = topo_pool_strdup(r->pool, json_string_value(v))) == NULL)
            return oom(r);
    }
    size_t bad = 0;
    if (!topo_kueue_levels_valid(levels, n, &bad, why, sizeof(why)))
        return fail(r, json_array_get(arr, bad), arr, "%s: %s", PI(pi, p, bad), why);
    t->levels = levels;
    t->nlevels = n;
    return 0;
}

static int parse_node_labels(const reader *r, topo_admission_topology_config *t,
                             const json_t *obj, const char *path)
{
    char p[TOPO_DECODE_PATH_MAX], pk[TOPO_DECODE_PATH_MAX], why[512];
    const json_t *map = json_object_get(obj, "nodeLabels");
    const char *key;
    json_t *v;
    topo_kv *kv;
    size_t n = 0;
    P(p, path, "nodeLabels");
    if (map == NULL || json_is_null(map))
        return 0;
    if (!json_is_object(map))
        return fail(r, map, obj, "%s: expected a map of label key: value, got %s", p,
                    topo_decode_type_name(map));
    if (json_object_size(map) > TOPO_MAX_TOPOLOGY_NODE_LABELS)
        return fail(r, map, obj, "%s: %zu labels (at most %d)", p, json_object_size(map),
                    TOPO_MAX_TOPOLOGY_NODE_LABELS);
    kv = topo_pool_calloc(r->pool, json_object_size(map) + 1, sizeof(*kv));
    if (kv == NULL)
        return oom(r);
    json_object_foreach((json_t *)map, key, v) {
        P(pk, p, key);
        if (!topo_label_key_valid(key, why, sizeof(why)))
            return fail(r, v, map, "%s: invalid label key: %s", pk, why);
        /* Label values are strings; an unquoted 8 or true is a YAML number
         * or bool, which Kubernetes would reject too. */
        if (!json_is_string(v))
            return fail(r, v, map, "%s: expected a string label value, got %s (quote it)", pk,
                        topo_decode_type_name(v));
        if (!topo_label_value_valid(json_string_value(v), why, sizeof(why)))
            return fail(r, v, map, "%s: invalid label value \"%s\": %s", pk,
                        json_string_value(v), why);
        kv[n].key = topo_pool_strdup(r->pool, key);
        kv[n].value = topo_pool_strdup(r->pool, json_string_value(v));
        if (kv[n].key == NULL || kv[n].value == NULL)
            return oom(r);
        n++;
    }
    t->node_labels = kv;
    t->nnode_labels = n;
    return 0;
}

static int parse_topology(const reader *r, topo_admission_topology_config *t, const json_t *obj,
                          const char *path, topo_admission_policy default_policy)
{
    static const char *const keys[] = {"name", "levels", "nodeLabels", "policy", NULL};
    char p[TOPO_DECODE_PATH_MAX], why[512];
    const char *name;
    int error;
    if (!json_is_object(obj))
        return fail(r, obj, r->root, "%s: expected a map (name, levels, ...), got %s", path,
                    topo_decode_type_name(obj));
    if ((error = check_keys(r, obj, path, keys)) < 0)
        return error;
    if ((error = get_string(r, &name, obj, "name", path, 1)) < 0)
        return error;
    /* Kueue's Topology objects are named so; the name is what pods and
     * logs refer to. */
    if (!topo_dns_label_valid(name, why, sizeof(why)))
        return fail(r, json_object_get(obj, "name"), obj, "%s: \"%s\": %s", P(p, path, "name"),
                    name, why);
    if ((t->name = topo_pool_strdup(r->pool, name)) == NULL)
        return oom(r);
    if ((error = parse_levels(r, t, obj, path)) < 0)
        return error;
    if ((error = parse_node_labels(r, t, obj, path)) < 0)
        return error;
    t->policy = default_policy;
    return parse_policy(r, &t->policy, &t->policy_set, obj, path);
}

static int parse_duration(const reader *r, int64_t *out_ms, const char *key, int64_t min_ms,
                          int64_t max_ms, const char *bounds)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return fail(r, v, r->root, "%s: expected a duration such as \"30s\", \"10m\" or \"1h\", got %s",
                    key, topo_decode_type_name(v));
    /* Go's time.ParseDuration, as Kubernetes configurations take them. */
    topo_err gerr = TOPO_ERR_INIT;
    int64_t ns = 0;
    if (topo_go_parse_duration(json_string_value(v), &ns, &gerr) != 0)
        return fail(r, v, r->root, "%s: %s", key, gerr.text);
    *out_ms = ns / 1000000;
    if (*out_ms < min_ms || *out_ms > max_ms)
        return fail(r, v, r->root, "%s: %s is out of range (%s)", key, json_string_value(v),
                    bounds);
    return 0;
}

/* A TTL in whole seconds, 10s..24h; *seconds keeps its default when the
 * key is absent. */
static int parse_ttl(const reader *r, int64_t *seconds, const char *key)
{
    int64_t ms = *seconds * 1000;
    int error = parse_duration(r, &ms, key, TOPO_ADMISSION_RESERVATION_TTL_MIN_S * INT64_C(1000),
                               TOPO_ADMISSION_RESERVATION_TTL_MAX_S * INT64_C(1000), "10s..24h");
    if (error < 0)
        return error;
    if (ms % 1000 != 0)
        return fail(r, json_object_get(r->root, key), r->root,
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
static int parse_caps(const reader *r, topo_resource **out, size_t *n, const json_t *parent,
                      const char *which, topo_pool *pool)
{
    char p[TOPO_DECODE_PATH_MAX], pk[TOPO_DECODE_PATH_MAX];
    const json_t *obj = json_object_get(parent, which), *v;
    const char *key;
    P(p, "maxUnclaimed", which);
    if (obj == NULL || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return fail(r, obj, parent, "%s: expected a map of resource name to quantity, got %s", p,
                    topo_decode_type_name(obj));
    if (json_object_size(obj) > TOPO_MAX_UNCLAIMED_CAPS)
        return fail(r, obj, parent, "%s: %zu entries (at most %d)", p, json_object_size(obj),
                    TOPO_MAX_UNCLAIMED_CAPS);
    topo_resource *caps = topo_pool_calloc(pool, json_object_size(obj) + 1, sizeof(*caps));
    if (caps == NULL)
        return oom(r);
    size_t k = 0;
    json_object_foreach((json_t *)obj, key, v) {
        char why[256];
        topo_err qerr = TOPO_ERR_INIT;
        char text[64];
        P(pk, p, key);
        if (strcmp(key, "pods") != 0 && !topo_label_key_valid(key, why, sizeof(why)))
            return fail(r, v, obj, "%s: \"%s\" is not a resource name: %s", pk, key, why);
        if (json_is_integer(v))
            snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else if (json_is_string(v) && json_string_length(v) < sizeof(text))
            snprintf(text, sizeof(text), "%s", json_string_value(v));
        else
            return fail(r, v, obj, "%s: expected a quantity (\"64\", \"500\", \"1Ti\"), got %s",
                        pk, topo_decode_type_name(v));
        if (topo_quantity_parse_resource(&caps[k].amount, key, text, &qerr) != 0)
            return fail(r, v, obj, "%s: %s", pk, qerr.text);
        if (caps[k].amount < 0)
            return fail(r, v, obj, "%s: must not be negative", pk);
        if ((caps[k].name = topo_pool_strdup(pool, key)) == NULL)
            return oom(r);
        k++;
    }
    *out = caps;
    *n = k;
    return 0;
}

/* nodeReplacement: {failFast: <bool>} (docs/webhook.md "When nodes fail");
 * absent or null: the defaults. */
static int parse_node_replacement(const reader *r, topo_admission_config *cfg)
{
    static const char *const keys[] = {"failFast", NULL};
    const json_t *obj = json_object_get(r->root, "nodeReplacement");
    int error;
    if (obj == NULL || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return fail(r, obj, r->root, "nodeReplacement: expected a map with failFast, got %s",
                    topo_decode_type_name(obj));
    if ((error = check_keys(r, obj, "nodeReplacement", keys)) < 0)
        return error;
    return topo_cfg_bool(&r->cfg, &cfg->replace_fail_fast, obj, "failFast", "nodeReplacement");
}

static int parse_root(const reader *r, topo_admission_config *cfg)
{
    static const char *const keys[] = {"topologies",     "defaultPolicy",
                                       "namespacePolicyLabel", "reservationTTL",
                                       "ungateInterval", "unclaimedTTL",
                                       "maxUnclaimed",   "nodeReplacement",
                                       NULL};
    static const char *const cap_keys[] = {"perNamespace", "total", NULL};
    char p[TOPO_DECODE_PATH_MAX], why[512];
    const json_t *root = r->root, *arr;
    const char *s;
    int error;

    if (!json_is_object(root))
        return fail(r, root, NULL, "expected a map with topologies, got %s",
                    json_is_null(root) ? "an empty document" : topo_decode_type_name(root));
    if ((error = check_keys(r, root, "", keys)) < 0)
        return error;

    if ((error = get_string(r, &s, root, "defaultPolicy", "", 0)) < 0)
        return error;
    if (s != NULL && topo_admission_policy_parse(&cfg->default_policy, s) != 0)
        return fail(r, json_object_get(root, "defaultPolicy"), root,
                    "defaultPolicy: \"%s\" is not a policy (expected gate, deny or ignore)", s);

    if ((error = get_string(r, &s, root, "namespacePolicyLabel", "", 0)) < 0)
        return error;
    if (s != NULL && s[0] == '\0') {
        cfg->ns_label = NULL;
    } else if (s != NULL) {
        if (!topo_label_key_valid(s, why, sizeof(why)))
            return fail(r, json_object_get(root, "namespacePolicyLabel"), root,
                        "namespacePolicyLabel: invalid label key \"%s\": %s", s, why);
        if ((cfg->ns_label = topo_pool_strdup(cfg->pool, s)) == NULL)
            return oom(r);
    }

    if ((error = parse_ttl(r, &cfg->reservation_ttl_s, "reservationTTL")) < 0)
        return error;
    if ((error = parse_duration(r, &cfg->ungate_interval_ms, "ungateInterval",
                                TOPO_ADMISSION_UNGATE_INTERVAL_MIN_MS,
                                TOPO_ADMISSION_UNGATE_INTERVAL_MAX_MS, "1s..10m")) < 0)
        return error;
    if ((error = parse_ttl(r, &cfg->unclaimed_ttl_s, "unclaimedTTL")) < 0)
        return error;
    arr = json_object_get(root, "maxUnclaimed");
    if (arr != NULL && !json_is_null(arr)) {
        if (!json_is_object(arr))
            return fail(r, arr, root, "maxUnclaimed: expected a map with perNamespace and total, "
                                      "got %s",
                        topo_decode_type_name(arr));
        if ((error = check_keys(r, arr, "maxUnclaimed", cap_keys)) < 0 ||
            (error = parse_caps(r, &cfg->caps_ns, &cfg->ncaps_ns, arr, "perNamespace",
                                cfg->pool)) < 0 ||
            (error = parse_caps(r, &cfg->caps_all, &cfg->ncaps_all, arr, "total", cfg->pool)) < 0)
            return error;
    }

    if ((error = parse_node_replacement(r, cfg)) < 0)
        return error;

    arr = json_object_get(root, "topologies");
    if (arr == NULL || json_is_null(arr))
        return fail(r, arr, root, "topologies: required (a list of 1..%d topologies)",
                    TOPO_MAX_TOPOLOGIES);
    if (!json_is_array(arr))
        return fail(r, arr, root, "topologies: expected a list, got %s",
                    topo_decode_type_name(arr));
    if (json_array_size(arr) == 0 || json_array_size(arr) > TOPO_MAX_TOPOLOGIES)
        return fail(r, arr, root, "topologies: %zu entries (expected 1..%d)",
                    json_array_size(arr), TOPO_MAX_TOPOLOGIES);
    cfg->topologies = topo_pool_calloc(cfg->pool, json_array_size(arr), sizeof(*cfg->topologies));
    if (cfg->topologies == NULL)
        return oom(r);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *t = json_array_get(arr, i);
        PI(p, "topologies", i);
        if ((error = parse_topology(r, &cfg->topologies[i], t, p, cfg->default_policy)) < 0)
            return error;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cfg->topologies[j].name, cfg->topologies[i].name) == 0) {
                char pn[TOPO_DECODE_PATH_MAX];
                return fail(r, json_object_get(t, "name"), t,
                            "%s: duplicate topology name \"%s\" (also topologies[%zu])",
                            P(pn, p, "name"), cfg->topologies[i].name, j);
            }
        }
        cfg->ntopologies++;
    }
    return 0;
}

int topo_admission_config_parse(topo_admission_config **out, const char *text, size_t len,
                                const char *source, topo_err *err)
{
    topo_admission_config *cfg = NULL;
    topo_codec_marks *marks = NULL;
    json_t *root = NULL;
    reader r;
    int error;

    *out = NULL;
    memset(&r, 0, sizeof(r));
    r.src = source != NULL ? source : "<input>";
    r.source = source;
    r.err = err;
    if (len > TOPO_MAX_CONFIG_FILE) {
        error = topo_err_set(err, TOPO_ELIMIT, "%s: %zu bytes, larger than the %u byte limit",
                             r.src, len, TOPO_MAX_CONFIG_FILE);
        goto cleanup;
    }
    if ((error = topo_codec_yaml_parse_marks(&root, &marks, text, len, source, err)) < 0)
        goto cleanup;
    if ((error = config_new(&cfg)) < 0) {
        error = oom(&r);
        goto cleanup;
    }
    r.marks = marks;
    r.cfg = (topo_cfg){.src = source, .marks = marks, .err = err};
    r.root = root;
    r.pool = cfg->pool;
    if ((error = parse_root(&r, cfg)) < 0)
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
