/* Kueue's Topology and ResourceFlavor objects (topo/export.h) applied to the
 * API server when Kueue's CRDs are served: created when absent, updated when
 * what topo-sync sets differs (the Topology's levels; a flavor's nodeLabels
 * and topologyName), every other field an operator set kept; never deleted.
 * Only objects topo-sync created (owned.h) are updated: one of the same name
 * without the marker is someone else's and is left as it is (not_owned,
 * counted among failed).
 * When the CRDs are not served, nothing is sent (the --export-kueue file is
 * the way then). */
#ifndef TOPO_SYNC_KUEUE_H
#define TOPO_SYNC_KUEUE_H

#include "topo/error.h"
#include "topo/export.h"
#include "topo/k8s.h"
#include "topo/plan.h"

typedef struct ctl_kueue_result {
    int served; /* the CRDs of the export's apiVersion answer */
    size_t created, updated, unchanged, failed, not_owned;
} ctl_kueue_result;

/* One pass. dry_run: logs what it would create or update. 0, or the first
 * failure's code (the rest are still tried); TOPO_EINVALID when the plan
 * cannot be exported (opts). */
int ctl_kueue_apply(topo_k8s *k, const topo_plan *plan, const topo_export_kueue_opts *opts,
                     int dry_run, ctl_kueue_result *res, topo_err *err);

#endif
