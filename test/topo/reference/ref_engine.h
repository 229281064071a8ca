/* The reference engine's entry points: lib/topo's engine as it was before
 * the incremental aggregates, built from the copies in this folder with a
 * ref_ prefix (ref_rename.h). For the differential test only. */
#ifndef TOPO_REF_ENGINE_H
#define TOPO_REF_ENGINE_H

#include "topo/engine.h"

int topo_ref_engine_find(topo_podset_result *out, const topo_snapshot *snap,
                         const topo_podset_spec *podsets, size_t npodsets,
                         const topo_workload_spec *workload, const topo_gates *gates,
                         topo_pool *pool, topo_err *err);

#endif
