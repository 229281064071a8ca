/* What the writer of a built plan sets on a node (include/topo/plan.h): its
 * labels in topo's vocabulary and, when asked, topograph's; which label
 * keys it owns; the provenance annotation. --print-labels and
 * --print-annotations print the same. */
#include <stdlib.h>
#include <string.h>

#include "topo/json.h"
#include "topo/labelowner.h"
#include "topo/plan.h"

#include "plan_internal.h"

size_t topo_plan_node_labels(const topo_plan *plan, size_t node,
                             topo_kv out[TOPO_PLAN_MAX_LABELS])
{
    size_t n = 0;
    /* Values exist only for the topology's levels; hostname is not ours. */
    for (int l = 0; l < TOPO_LEVEL_COUNT; l++) {
        const char *v = topo_plan_node_value(plan, node, (topo_level)l);
        if (v && l != TOPO_LEVEL_HOSTNAME)
            out[n++] = (topo_kv){topo_plan_level_key(plan, (topo_level)l), v};
    }
    if (!plan_topograph(plan))
        return n;
    /* Closest first, stopping at the first tier the node lacks. */
    const char *leaf = topo_plan_node_value(plan, node, TOPO_LEVEL_LEAF);
    const char *spine = topo_plan_node_value(plan, node, TOPO_LEVEL_SPINE);
    const char *nvlink = topo_plan_node_value(plan, node, TOPO_LEVEL_NVLINK);
    if (leaf) {
        out[n++] = (topo_kv){TOPO_PLAN_TOPOGRAPH_TIER_PREFIX "0", leaf};
        if (spine)
            out[n++] = (topo_kv){TOPO_PLAN_TOPOGRAPH_TIER_PREFIX "1", spine};
    }
    if (nvlink)
        out[n++] = (topo_kv){TOPO_PLAN_TOPOGRAPH_DOMAIN, nvlink};
    return n;
}

int topo_plan_key_owned(const topo_plan *plan, const char *key)
{
    if (!key)
        return 0;
    for (int l = 0; l < TOPO_LEVEL_COUNT; l++)
        if (l != TOPO_LEVEL_HOSTNAME && strcmp(key, topo_plan_level_key(plan, (topo_level)l)) == 0)
            return 1;
    return plan_topograph(plan) && topo_labelowner_topograph_key(key);
}

json_t *topo_plan_labels_json(const topo_plan *plan)
{
    json_t *all = json_object();
    for (size_t i = 0; all && i < topo_plan_node_count(plan); i++) {
        topo_kv kv[TOPO_PLAN_MAX_LABELS];
        size_t n = topo_plan_node_labels(plan, i, kv);
        json_t *labels = json_object();
        for (size_t k = 0; labels && k < n; k++) {
            if (json_object_set_new(labels, kv[k].key, json_string(kv[k].value)) != 0) {
                json_decref(labels);
                labels = NULL;
            }
        }
        if (!labels || json_object_set_new(all, topo_plan_node_name(plan, i), labels) != 0) {
            json_decref(all);
            all = NULL;
        }
    }
    return all;
}

int topo_plan_node_provenance(char **out, const topo_plan *plan, size_t node)
{
    *out = NULL;
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels = topo_plan_levels(plan, levels);
    /* A node left out has no hostname value either. */
    if (!topo_plan_node_value(plan, node, TOPO_LEVEL_HOSTNAME))
        return 0;
    /* jansson keeps insertion order: the levels' order, coarsest first. */
    json_t *doc = json_object();
    for (size_t l = 0; doc && l < nlevels; l++) {
        if (levels[l] == TOPO_LEVEL_HOSTNAME)
            continue;
        const char *source = topo_plan_node_source(plan, node, levels[l]);
        if (json_object_set_new(doc, topo_level_name(levels[l]),
                                json_string(source ? source : "fallback")) != 0) {
            json_decref(doc);
            doc = NULL;
        }
    }
    *out = doc ? topo_json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return *out ? 0 : TOPO_ENOMEM;
}

json_t *topo_plan_annotations_json(const topo_plan *plan)
{
    json_t *all = json_object();
    for (size_t i = 0; all && i < topo_plan_node_count(plan); i++) {
        char *value = NULL;
        json_t *annotations = json_object();
        int rc = annotations ? topo_plan_node_provenance(&value, plan, i) : TOPO_ENOMEM;
        if (rc == 0 && value)
            rc = json_object_set_new(annotations, topo_plan_provenance_key(plan),
                                     json_string(value));
        free(value);
        if (rc != 0) {
            json_decref(annotations);
            annotations = NULL;
        }
        /* set_new takes annotations, also when it fails. */
        if (!annotations || json_object_set_new(all, topo_plan_node_name(plan, i), annotations) != 0) {
            json_decref(all);
            all = NULL;
        }
    }
    return all;
}
