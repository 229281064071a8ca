/* A Kueue Topology's levels (topo/kueue_topology.h). The CRD's own schema
 * (1..16 levels, each a nodeLabel that is a label key, no duplicates,
 * kubernetes.io/hostname only last) is checked again here: a Topology
 * written around the API server's validation (an older Kueue, a CRD edited
 * by hand) must not become a wrong --levels. */
#include "topo/kueue_topology.h"

#include <string.h>

#include "topo/decode.h"
#include "topo/kueue.h"
#include "topo/limits.h"

const char *topo_kueue_topology_name(const json_t *topology)
{
    return json_string_value(json_object_get(json_object_get(topology, "metadata"), "name"));
}

int topo_kueue_topology_levels(const char ***out, size_t *out_n, const json_t *topology,
                               topo_pool *pool, topo_err *err)
{
    const char *name = topo_kueue_topology_name(topology);
    const json_t *spec = json_object_get(topology, "spec");
    const json_t *list = json_object_get(spec, "levels");
    const char **levels;
    char why[512];
    size_t n, bad = 0;

    *out = NULL;
    *out_n = 0;
    if (name == NULL)
        name = "";
    if (!json_is_object(topology))
        return topo_err_set(err, TOPO_EINVALID, "Topology: expected an object, got %s",
                            topology ? topo_decode_type_name(topology) : "nothing");
    if (list == NULL || json_is_null(list))
        return topo_err_set(err, TOPO_EINVALID,
                            "Topology \"%s\": spec.levels: required (a list of 1..%d levels)",
                            name, TOPO_MAX_LEVELS);
    if (!json_is_array(list))
        return topo_err_set(err, TOPO_EINVALID,
                            "Topology \"%s\": spec.levels: expected a list, got %s", name,
                            topo_decode_type_name(list));
    n = json_array_size(list);
    if (n == 0 || n > TOPO_MAX_LEVELS)
        return topo_err_set(err, TOPO_EINVALID,
                            "Topology \"%s\": spec.levels: %zu levels (expected 1..%d)", name, n,
                            TOPO_MAX_LEVELS);
    if ((levels = topo_pool_calloc(pool, n, sizeof(*levels))) == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get(list, i);
        const json_t *label = json_object_get(item, "nodeLabel");
        if (!json_is_object(item))
            return topo_err_set(err, TOPO_EINVALID,
                                "Topology \"%s\": spec.levels[%zu]: expected an object with "
                                "nodeLabel, got %s",
                                name, i, topo_decode_type_name(item));
        if (!json_is_string(label))
            return topo_err_set(err, TOPO_EINVALID,
                                "Topology \"%s\": spec.levels[%zu].nodeLabel: %s", name, i,
                                label ? "expected a string" : "required");
        /* A NUL inside would cut the key short into a valid one. */
        if (strlen(json_string_value(label)) != json_string_length(label))
            return topo_err_set(err, TOPO_EINVALID,
                                "Topology \"%s\": spec.levels[%zu].nodeLabel: contains a NUL",
                                name, i);
        if ((levels[i] = topo_pool_strdup(pool, json_string_value(label))) == NULL)
            return topo_err_nomem(err, NULL);
    }
    if (!topo_kueue_levels_valid(levels, n, &bad, why, sizeof why))
        return topo_err_set(err, TOPO_EINVALID, "Topology \"%s\": spec.levels[%zu].nodeLabel: %s",
                            name, bad, why);
    *out = levels;
    *out_n = n;
    return 0;
}
