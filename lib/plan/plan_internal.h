/* What the files of lib/plan share beyond include/topo/plan.h. */
#ifndef TOPO_PLAN_INTERNAL_H
#define TOPO_PLAN_INTERNAL_H

#include "topo/plan.h"

/* 1 when the plan also gives topograph's labels (topo_plan_opts.topograph). */
int plan_topograph(const topo_plan *plan);

#endif
