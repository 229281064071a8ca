/* The metrics as rows, in the order the table and the report show them;
 * each row is a field of the metrics table (fields.h). */
#include "fields.h"
#include "out_internal.h"

#define WAIT(k, part) SIM_F_CLASS(k, SIM_WAIT_##part)

const sim_row sim_rows[] = {
    {"jobs placed", SIM_ROW_COUNT, SIM_F_PLACED},
    {"jobs that never fit", SIM_ROW_COUNT, SIM_F_UNPLACEABLE},
    {"multi-node jobs", SIM_ROW_COUNT, SIM_F_MULTI_NODE},
    {"in one domain of the tightest", SIM_ROW_HEADING, 0},
    {"  level that fits when empty", SIM_ROW_SHARE, SIM_F_TIGHT},
    {"  level with room at the time", SIM_ROW_SHARE, SIM_F_TIGHT_NOW},
    {"domains spanned (mean)", SIM_ROW_HEADING, 0},
    {NULL, SIM_ROW_SPANNED, SIM_F_SPANNED},
    {"GPU fragmentation", SIM_ROW_HEADING, 0},
    {"  free on partly used nodes", SIM_ROW_SHARE, SIM_F_FRAG},
    {"  free no whole pod can use", SIM_ROW_SHARE, SIM_F_FRAG_POD},
    {"GPU utilisation", SIM_ROW_SHARE, SIM_F_UTILISATION},
    {"goodput (work / capacity)", SIM_ROW_SHARE, SIM_F_GOODPUT},
    {"mean queue length (jobs)", SIM_ROW_NUMBER, SIM_F_QUEUE_LENGTH},
    {"queueing delay p50 / p99", SIM_ROW_HEADING, 0},
    {"  all jobs p50", SIM_ROW_SECONDS, SIM_F_WAIT_P50},
    {"  all jobs p99", SIM_ROW_SECONDS, SIM_F_WAIT_P99},
    {"  1-8 GPUs p50", SIM_ROW_SECONDS, WAIT(0, P50)},
    {"  1-8 GPUs p99", SIM_ROW_SECONDS, WAIT(0, P99)},
    {"  9-127 GPUs p50", SIM_ROW_SECONDS, WAIT(1, P50)},
    {"  9-127 GPUs p99", SIM_ROW_SECONDS, WAIT(1, P99)},
    {"  128+ GPUs p50", SIM_ROW_SECONDS, WAIT(2, P50)},
    {"  128+ GPUs p99", SIM_ROW_SECONDS, WAIT(2, P99)},
    {"modelled slowdown (GPU time)", SIM_ROW_HEADING, 0},
    {"  mean", SIM_ROW_NUMBER, SIM_F_SLOW_MEAN},
    {"  p99", SIM_ROW_NUMBER, SIM_F_SLOW_P99},
    {"job completion time", SIM_ROW_HEADING, 0},
    {"  mean", SIM_ROW_SECONDS, SIM_F_JCT_MEAN},
    {"  p99", SIM_ROW_SECONDS, SIM_F_JCT_P99},
    {"makespan", SIM_ROW_SECONDS, SIM_F_MAKESPAN},
    {"placement attempts", SIM_ROW_COUNT, SIM_F_ATTEMPTS},
};
const size_t sim_nrows = sizeof sim_rows / sizeof sim_rows[0];

/* The same-jobs block: job-level figures over the jobs every policy
 * placed (the table prints its heading and the jobs each policy left
 * unplaced first). */
const sim_row sim_unplaced_row = {"  left unplaced (not counted)", SIM_ROW_COUNT,
                                  SIM_F_UNPLACEABLE};

const sim_row sim_common_rows[] = {
    {"  queueing delay p99", SIM_ROW_SECONDS, SIM_F_WAIT_P99},
    {"  in one domain, tightest empty", SIM_ROW_SHARE, SIM_F_TIGHT},
    {"  slowdown mean", SIM_ROW_NUMBER, SIM_F_SLOW_MEAN},
    {"  completion time mean", SIM_ROW_SECONDS, SIM_F_JCT_MEAN},
    {"  completion time p99", SIM_ROW_SECONDS, SIM_F_JCT_P99},
};
const size_t sim_ncommon_rows = sizeof sim_common_rows / sizeof sim_common_rows[0];

/* What the stretch does to completion, goodput and queueing. */
const sim_row sim_stretched_rows[] = {
    {"  job completion mean", SIM_ROW_SECONDS, SIM_F_JCT_MEAN},
    {"  job completion p99", SIM_ROW_SECONDS, SIM_F_JCT_P99},
    {"  goodput", SIM_ROW_SHARE, SIM_F_GOODPUT},
    {"  queueing delay p99", SIM_ROW_SECONDS, SIM_F_WAIT_P99},
    {"  makespan", SIM_ROW_SECONDS, SIM_F_MAKESPAN},
};
const size_t sim_nstretched_rows = sizeof sim_stretched_rows / sizeof sim_stretched_rows[0];

double sim_row_value(const sim_row *row, const double *v, size_t level)
{
    return v[sim_slot((sim_field_id)row->field, row->kind == SIM_ROW_SPANNED ? level : 0)];
}
