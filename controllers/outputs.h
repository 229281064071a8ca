/* What topo-sync prints and exports from a plan, for the offline run and
 * for the controller's rounds: the --print-labels JSON and the text plan on
 * stdout, and the export files (Kueue, Slurm tree and block, Volcano). */
#ifndef TOPO_SYNC_OUTPUTS_H
#define TOPO_SYNC_OUTPUTS_H

#include "topo/error.h"
#include "topo/export.h"
#include "topo/plan.h"

/* Paths; NULL: that export is not written. kueue_opts: the Topology's
 * name, apiVersion and flavor labels (syncconfig's exports.kueue). */
typedef struct ctl_exports {
    const char *kueue, *slurm_tree, *slurm_block, *volcano;
    const topo_export_kueue_opts *kueue_opts;
} ctl_exports;

/* Writes every export asked for, each replaced whole (written beside it,
 * then renamed, so a reader never sees half a file). The first failure
 * stops them: its code, err naming the path. */
int ctl_exports_write(const topo_plan *plan, const ctl_exports *paths, topo_err *err);

/* On stdout, in this order: each node's labels as one JSON object
 * (labels), each node's annotations (annotations), the text plan
 * (text_plan). 0, or -1 when stdout cannot be written. */
int ctl_print(const topo_plan *plan, int labels, int annotations, int text_plan);

#endif
