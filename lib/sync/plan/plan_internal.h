/* What the files of lib/sync/plan share beyond include/topo/plan.h. */
#ifndef TOPO_PLAN_INTERNAL_H
#define TOPO_PLAN_INTERNAL_H

#include "topo/plan.h"

/* 1 when the plan also gives topograph's labels (topo_plan_opts.topograph). */
int plan_topograph(const topo_plan *plan);

/* The notes topo_plan_add_note added, in order. */
size_t plan_note_count(const topo_plan *plan);
const char *plan_note(const topo_plan *plan, size_t i);

#endif
