/* The packing section of topo-webhook's configuration (docs/webhook.md
 * "Packing pods without topology requests"):
 *
 *   packing: {enabled, resources, mode, level}
 *
 * and which topologies take part: those with `level` (a level above their
 * lowest), or, without `level`, every topology at its level just above the
 * lowest. Its fields are validated whether enabled or not (a typo fails the
 * file now, not the day packing is switched on); which topologies can take
 * part only when enabled: a webhook with packing off starts whatever its
 * topologies are. */
#include <stdio.h>
#include <string.h>

#include "config_internal.h"
#include "topo/decode.h"
#include "topo/kueue_names.h"
#include "topo/labelsyntax.h"

#define P(buf, path, key) topo_decode_path_key(buf, sizeof(buf), path, key)
#define PI(buf, path, i) topo_decode_path_index(buf, sizeof(buf), path, i)

static const char *const default_resources[] = {"nvidia.com/gpu"};
static const char *const mode_names[] = {"preferred", "required", NULL};

static int oom(const topo_cfg *c)
{
    return topo_err_nomem(c->err, c->src ? c->src : "<input>");
}

/* packing.resources: resource names, distinct, at least one. */
static int parse_resources(const topo_cfg *c, adm_packing_config *out, const json_t *obj)
{
    char pi[TOPO_DECODE_PATH_MAX], why[512];
    const json_t *arr = json_object_get(obj, "resources");
    const char *const *read = NULL;
    const char **names;
    size_t n = 0;
    int error = topo_cfg_strings(c, &read, &n, obj, "resources", "packing", 0, 1, 1);
    if (error < 0 || read == NULL)
        return error;
    /* the strings are the tree's, which goes once the file is read */
    if ((names = topo_pool_calloc(c->pool, n, sizeof(*names))) == NULL)
        return oom(c);
    for (size_t i = 0; i < n; i++)
        if ((names[i] = topo_pool_strdup(c->pool, read[i])) == NULL)
            return oom(c);
    for (size_t i = 0; i < n; i++) {
        PI(pi, "packing.resources", i);
        if (!topo_label_key_valid(names[i], why, sizeof(why)))
            return topo_cfg_fail(c, json_array_get(arr, i), arr,
                                 "%s: \"%s\" is not a resource name: %s", pi, names[i], why);
        /* A pod takes one pod slot, it does not request "pods": no pod
         * would ever be a candidate, and the rule's shape counts the slot
         * itself. */
        if (strcmp(names[i], "pods") == 0)
            return topo_cfg_fail(c, json_array_get(arr, i), arr,
                                 "%s: pods is the node's pod count, not a resource a pod requests",
                                 pi);
        /* ResourceQuota's names: no container can request them. */
        if (strncmp(names[i], "requests.", 9) == 0 || strncmp(names[i], "limits.", 7) == 0)
            return topo_cfg_fail(c, json_array_get(arr, i), arr,
                                 "%s: %s is a ResourceQuota name; a pod requests %s", pi,
                                 names[i], strchr(names[i], '.') + 1);
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0)
                return topo_cfg_fail(c, json_array_get(arr, i), arr,
                                     "%s: duplicate resource %s (also packing.resources[%zu])",
                                     pi, names[i], j);
    }
    out->settings.resources = names;
    out->settings.nresources = n;
    return 0;
}

/* Packing asks whether the pod fits on one node of a domain: only a
 * topology whose lowest level is the node itself can say (a lower level of
 * several nodes is one leaf to the engine, which counts neither single nodes
 * nor node filters there). */
static int hostname_lowest(const topo_admission_topology_config *t)
{
    return t->nlevels >= 2 && strcmp(t->levels[t->nlevels - 1], TOPO_KUEUE_HOSTNAME_LABEL) == 0;
}

/* The note for the log: which topologies take no part (NULL: all do). */
static int note_absent(const topo_cfg *c, adm_packing_config *out,
                       const topo_admission_topology_config *topos, size_t n, const char *level)
{
    char text[1024];
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof(text); i++) {
        if (topos[i].npacking_levels > 0)
            continue;
        const topo_admission_topology_config *t = &topos[i];
        int w = t->nlevels >= 2 && !hostname_lowest(t)
                    ? snprintf(text + len, sizeof(text) - len,
                               "%stopology %s's lowest level is %s, not %s: which single node "
                               "fits cannot be told",
                               len ? "; " : "", t->name, t->levels[t->nlevels - 1],
                               TOPO_KUEUE_HOSTNAME_LABEL)
                : level != NULL
                    ? snprintf(text + len, sizeof(text) - len, "%stopology %s has no level %s",
                               len ? "; " : "", t->name, level)
                    : snprintf(text + len, sizeof(text) - len,
                               "%stopology %s has one level (%s): nothing above it to keep whole",
                               len ? "; " : "", t->name, t->levels[0]);
        len += w > 0 ? (size_t)w : 0;
    }
    if (len == 0)
        return 0;
    out->note = topo_pool_printf(c->pool, "packing: some topologies take no part: %s", text);
    return out->note != NULL ? 0 : oom(c);
}

/* Which topologies take part, at which level. */
static int resolve_levels(const topo_cfg *c, adm_packing_config *out, const json_t *obj,
                          const char *level, topo_admission_topology_config *topos, size_t n)
{
    const json_t *at = json_object_get(obj, "level");
    size_t taking = 0;
    for (size_t i = 0; i < n; i++) {
        topo_admission_topology_config *t = &topos[i];
        t->npacking_levels = 0;
        if (!hostname_lowest(t)) {
            continue;
        } else if (level == NULL) {
            t->npacking_levels = t->nlevels >= 2 ? t->nlevels - 1 : 0;
        } else {
            for (size_t j = 0; j < t->nlevels; j++) {
                if (strcmp(t->levels[j], level) != 0)
                    continue;
                if (j + 1 == t->nlevels)
                    return topo_cfg_fail(c, at, obj,
                                         "packing.level: %s is the lowest level of "
                                         "topologies[%zu] (%s): packing keeps whole the domains "
                                         "above the nodes; name a level above it",
                                         level, i, t->name);
                t->npacking_levels = j + 1;
            }
        }
        taking += t->npacking_levels > 0;
    }
    if (taking == 0 && level != NULL) {
        int named = 0;
        for (size_t i = 0; i < n && !named; i++)
            for (size_t j = 0; j < topos[i].nlevels && !named; j++)
                named = strcmp(topos[i].levels[j], level) == 0;
        if (!named)
            return topo_cfg_fail(c, at, obj, "packing.level: no topology has level %s", level);
        return topo_cfg_fail(c, at, obj,
                             "packing.level: no topology with %s as its lowest level has level %s",
                             TOPO_KUEUE_HOSTNAME_LABEL, level);
    }
    if (taking == 0)
        return topo_cfg_fail(c, json_object_get(obj, "enabled"), obj,
                             "packing: no topology can take part: each has one level, or a lowest "
                             "level other than %s (packing needs the nodes themselves and a level "
                             "above them)",
                             TOPO_KUEUE_HOSTNAME_LABEL);
    return note_absent(c, out, topos, n, level);
}

int adm_config_packing_parse(const topo_cfg *c, adm_packing_config *out, const json_t *root,
                             topo_admission_topology_config *topos, size_t n)
{
    static const char *const keys[] = {"enabled", "resources", "mode", "level", NULL};
    char why[512];
    const json_t *obj = NULL;
    const char *level = NULL;
    int mode = TOPO_ADMISSION_PACKING_PREFERRED;
    int error;

    memset(out, 0, sizeof(*out));
    out->settings.resources = default_resources;
    out->settings.nresources = sizeof(default_resources) / sizeof(default_resources[0]);
    if ((error = topo_cfg_member(c, &obj, root, "packing", "", JSON_OBJECT,
                                 "a map with enabled, resources, mode and level", 0)) < 0 ||
        obj == NULL)
        return error;
    if ((error = topo_cfg_check_keys(c, obj, "packing", keys)) < 0 ||
        (error = topo_cfg_bool(c, &out->enabled, obj, "enabled", "packing")) < 0 ||
        (error = parse_resources(c, out, obj)) < 0 ||
        (error = topo_cfg_enum(c, &mode, obj, "mode", "packing", mode_names, "a packing mode")) <
            0 ||
        (error = topo_cfg_string(c, &level, obj, "level", "packing", 0)) < 0)
        return error;
    out->settings.mode = (topo_admission_packing_mode)mode;
    if (level != NULL && level[0] == '\0') /* as the chart's "": the default */
        level = NULL;
    if (level != NULL && !topo_label_key_valid(level, why, sizeof(why)))
        return topo_cfg_fail(c, json_object_get(obj, "level"), obj,
                             "packing.level: invalid label key \"%s\": %s", level, why);
    if (level != NULL && (level = topo_pool_strdup(c->pool, level)) == NULL)
        return oom(c);
    if (!out->enabled) { /* read and checked, but nothing takes part */
        for (size_t i = 0; i < n; i++)
            topos[i].npacking_levels = 0;
        return 0;
    }
    return resolve_levels(c, out, obj, level, topos, n);
}
