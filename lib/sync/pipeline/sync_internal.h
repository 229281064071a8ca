/* What the pipeline's files share beyond include/topo/sync.h. */
#ifndef TOPO_SYNC_INTERNAL_H
#define TOPO_SYNC_INTERNAL_H

#include "topo/error.h"
#include "topo/plan.h"
#include "topo/syncconfig.h"

/* After topo_plan_build: notes (plan text and log) for the nodes made
 * their own NVLink domain and for every level of the topology that more
 * than half the nodes miss, with why and the setting that fixes it. 0 or
 * TOPO_ENOMEM. */
int sync_explain(topo_plan *plan, const topo_sync_settings *s, topo_err *err) TOPO_MUST_CHECK;

/* Warnings for the sources' host names that label no node because they
 * are ambiguous or unmappable: the first ten of each, then how many more. */
void sync_log_hosts(const topo_plan *plan);

#endif
