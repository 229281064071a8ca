/* The metrics as rows, in the order the table and the report show them. */
#include "out_internal.h"

static double placed(const topo_sim_metrics *m, int a)
{
    (void)a;
    return (double)m->placed;
}
static double unplaceable(const topo_sim_metrics *m, int a)
{
    (void)a;
    return (double)m->unplaceable;
}
static double multi(const topo_sim_metrics *m, int a)
{
    (void)a;
    return (double)m->multi_node;
}
static double tight(const topo_sim_metrics *m, int a)
{
    return a ? m->tight_share_now : m->tight_share;
}
static double frag(const topo_sim_metrics *m, int a)
{
    return a ? m->fragmentation_pod : m->fragmentation;
}
static double util(const topo_sim_metrics *m, int a)
{
    (void)a;
    return m->utilisation;
}
static double good(const topo_sim_metrics *m, int a)
{
    (void)a;
    return m->goodput;
}
static double qlen(const topo_sim_metrics *m, int a)
{
    (void)a;
    return m->queue_length;
}
/* arg: class * 2 + (p99), class -1 (arg < 0) for all jobs */
static double wait(const topo_sim_metrics *m, int a)
{
    const topo_sim_wait *w = a < 0 ? &m->wait : &m->wait_class[a / 2];
    int p99 = a < 0 ? a == -1 : a % 2;
    return p99 ? w->p99 : w->p50;
}
static double slow(const topo_sim_metrics *m, int a)
{
    return a ? m->slowdown_p99 : m->slowdown_mean;
}
static double jct(const topo_sim_metrics *m, int a)
{
    return a ? m->jct_p99 : m->jct_mean;
}
static double makespan(const topo_sim_metrics *m, int a)
{
    (void)a;
    return m->makespan - m->window_start;
}
static double attempts(const topo_sim_metrics *m, int a)
{
    (void)a;
    return (double)m->attempts;
}

const sim_row sim_rows[] = {
    {"jobs placed", SIM_ROW_COUNT, placed, 0},
    {"jobs that never fit", SIM_ROW_COUNT, unplaceable, 0},
    {"multi-node jobs", SIM_ROW_COUNT, multi, 0},
    {"in one domain of the tightest", SIM_ROW_HEADING, NULL, 0},
    {"  level that fits when empty", SIM_ROW_SHARE, tight, 0},
    {"  level with room at the time", SIM_ROW_SHARE, tight, 1},
    {"domains spanned (mean)", SIM_ROW_HEADING, NULL, 0},
    {NULL, SIM_ROW_SPANNED, NULL, 0},
    {"GPU fragmentation", SIM_ROW_HEADING, NULL, 0},
    {"  free on partly used nodes", SIM_ROW_SHARE, frag, 0},
    {"  free no whole pod can use", SIM_ROW_SHARE, frag, 1},
    {"GPU utilisation", SIM_ROW_SHARE, util, 0},
    {"goodput (work / capacity)", SIM_ROW_SHARE, good, 0},
    {"mean queue length (jobs)", SIM_ROW_NUMBER, qlen, 0},
    {"queueing delay p50 / p99", SIM_ROW_HEADING, NULL, 0},
    {"  all jobs p50", SIM_ROW_SECONDS, wait, -2},
    {"  all jobs p99", SIM_ROW_SECONDS, wait, -1},
    {"  1-8 GPUs p50", SIM_ROW_SECONDS, wait, 0},
    {"  1-8 GPUs p99", SIM_ROW_SECONDS, wait, 1},
    {"  9-127 GPUs p50", SIM_ROW_SECONDS, wait, 2},
    {"  9-127 GPUs p99", SIM_ROW_SECONDS, wait, 3},
    {"  128+ GPUs p50", SIM_ROW_SECONDS, wait, 4},
    {"  128+ GPUs p99", SIM_ROW_SECONDS, wait, 5},
    {"modelled slowdown (GPU time)", SIM_ROW_HEADING, NULL, 0},
    {"  mean", SIM_ROW_NUMBER, slow, 0},
    {"  p99", SIM_ROW_NUMBER, slow, 1},
    {"job completion time", SIM_ROW_HEADING, NULL, 0},
    {"  mean", SIM_ROW_SECONDS, jct, 0},
    {"  p99", SIM_ROW_SECONDS, jct, 1},
    {"makespan", SIM_ROW_SECONDS, makespan, 0},
    {"placement attempts", SIM_ROW_COUNT, attempts, 0},
};
const size_t sim_nrows = sizeof sim_rows / sizeof sim_rows[0];

/* The same-jobs block: job-level figures over the jobs every policy
 * placed (the table prints its heading and the jobs each policy left
 * unplaced first). */
const sim_row sim_common_rows[] = {
    {"  queueing delay p99", SIM_ROW_SECONDS, wait, -1},
    {"  in one domain, tightest empty", SIM_ROW_SHARE, tight, 0},
    {"  slowdown mean", SIM_ROW_NUMBER, slow, 0},
    {"  completion time mean", SIM_ROW_SECONDS, jct, 0},
    {"  completion time p99", SIM_ROW_SECONDS, jct, 1},
};
const size_t sim_ncommon_rows = sizeof sim_common_rows / sizeof sim_common_rows[0];
