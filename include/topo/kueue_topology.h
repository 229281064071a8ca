/* A Kueue Topology object (kueue.x-k8s.io v1beta1 and v1beta2 alike:
 * spec.levels[].nodeLabel, coarsest first) read as topo's level list, with
 * the validation Kueue's CRD gives it (topo_kueue_levels_valid): what
 * `kubectl topo` takes as --levels when the user gives none. */
#ifndef TOPO_KUEUE_TOPOLOGY_H
#define TOPO_KUEUE_TOPOLOGY_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/pool.h"

/* The Topology's metadata.name, or NULL when it has none (borrowed from
 * topology). */
const char *topo_kueue_topology_name(const json_t *topology);

/* The levels of a Topology (a JSON object as the API server sends it; its
 * other fields are not read), strings from pool. TOPO_EINVALID names the
 * object and the field: "Topology \"gpu\": spec.levels[1].nodeLabel:
 * invalid label key \"rack x\": ...", "Topology \"gpu\": spec.levels:
 * required (a list of 1..16 levels)"; TOPO_ENOMEM. */
int topo_kueue_topology_levels(const char ***out, size_t *out_n, const json_t *topology,
                               topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

#endif
