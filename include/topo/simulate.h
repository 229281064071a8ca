/* topoassign simulate: replay a stream of GPU jobs over a cluster under
 * several placement policies and measure what each does to topology,
 * fragmentation, utilisation and queueing (docs/simulate.md defines every
 * metric). Deterministic: the same inputs and seed give the same results bit
 * for bit. The library prints nothing and reads no clock; progress goes
 * through a callback.
 *
 *   cluster  a built snapshot whose last level is kubernetes.io/hostname
 *            (from fixtures, kubectl dumps, a cache or a --shape preset);
 *   trace    jobs from a CSV file or from the seeded generator;
 *   run      one policy over the trace: a result with its metrics and
 *            timeline;
 *   format   the results side by side: a table, JSON, a timeline CSV, an
 *            HTML report with SVG charts.
 *
 * Errors are topo codes with a message in the caller's topo_err. */
#ifndef TOPO_SIMULATE_H
#define TOPO_SIMULATE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/buf.h"
#include "topo/engine.h"
#include "topo/error.h"
#include "topo/generate.h"
#include "topo/model.h"

/* ---- the cluster ---------------------------------------------------------------------- */

typedef struct topo_sim_cluster topo_sim_cluster;

/* The communication tiers of the slowdown model, finest first. */
typedef enum topo_sim_tier {
    TOPO_SIM_TIER_NVLINK = 0,  /* one node or one NVLink domain */
    TOPO_SIM_TIER_LEAF = 1,    /* one leaf switch (a rack hangs off one) */
    TOPO_SIM_TIER_SPINE = 2,   /* one spine group, across leaves */
    TOPO_SIM_TIER_CLUSTER = 3, /* across spine groups */
} topo_sim_tier;
#define TOPO_SIM_TIERS 4

/* "nvlink", "leaf", "spine", "cluster"; "?" for anything else. */
const char *topo_sim_tier_name(topo_sim_tier t);

typedef struct topo_sim_cluster_opts {
    const char *resource; /* the resource jobs ask for; NULL: nvidia.com/gpu */
    /* "LEVEL=TIER" (TIER one of nvlink, leaf, spine, cluster) over the tier
     * each level gets from its name (docs/simulate.md "Metrics", slowdown). */
    const char *const *tiers;
    size_t ntiers;
} topo_sim_cluster_opts;

/* Reads the snapshot's eligible nodes, their free amount of the resource and
 * their domains. The snapshot is borrowed and must outlive the cluster: the
 * topo policy charges its placements in it during a run and takes them out
 * again before the run returns. TOPO_EINVALID when the last level is not
 * kubernetes.io/hostname or no eligible node has the resource. */
int topo_sim_cluster_create(topo_sim_cluster **out, topo_snapshot *snap,
                            const topo_sim_cluster_opts *opts, topo_err *err) TOPO_MUST_CHECK;
void topo_sim_cluster_free(topo_sim_cluster *c);
size_t topo_sim_cluster_node_count(const topo_sim_cluster *c);
/* The resource free on eligible nodes at the start (the simulation's
 * capacity), and the most any one node has. */
uint64_t topo_sim_cluster_capacity(const topo_sim_cluster *c);
uint32_t topo_sim_cluster_max_node(const topo_sim_cluster *c);
/* Node i's hostname (the nodes in the topology's depth-first order). */
const char *topo_sim_cluster_node(const topo_sim_cluster *c, size_t i);
/* The level mixed-pack packs into for a --pack-level of `level` (NULL: the
 * default, the level above the hostname) into *out (the cluster's string).
 * TOPO_EINVALID for a level the cluster does not have, the hostname level,
 * or a cluster with nothing above the hostname. */
int topo_sim_cluster_pack_level(const char **out, const topo_sim_cluster *c, const char *level,
                                topo_err *err) TOPO_MUST_CHECK;

/* ---- shapes: generated clusters ------------------------------------------------------ */

/* A --shape preset, scaled: every field 0 means the preset's value. */
typedef struct topo_sim_shape_opts {
    const char *name; /* "hgx-h100", "gb200-nvl72" */
    uint32_t nodes, gpus_per_node, nodes_per_rack, racks_per_leaf, leaves_per_spine;
} topo_sim_shape_opts;

/* The names, comma separated, for help texts. */
const char *topo_sim_shape_names(void);
/* The generator's options and the preset's levels (static strings, coarsest
 * first, hostname last). TOPO_EINVALID for an unknown name. */
int topo_sim_shape(topo_gen_opts *out, const char *const **out_levels, size_t *out_nlevels,
                   const topo_sim_shape_opts *opts, topo_err *err) TOPO_MUST_CHECK;

/* ---- the trace -------------------------------------------------------------------------- */

typedef struct topo_sim_trace topo_sim_trace;

/* One job: a PodSet of `pods` pods of `gpus` each, arriving at `arrive`
 * seconds and running `duration` seconds once started. */
typedef struct topo_sim_job {
    const char *id;
    double arrive;
    double duration;
    int32_t pods;
    int32_t gpus;
    int32_t request; /* index of its topology request (topo_sim_trace_request), -1: none */
    uint32_t seq;    /* its place in the file or the generator's order */
} topo_sim_job;

/* A topology request. The level "auto" (a trace's or the generator's)
 * stands for the tightest level one of whose domains could hold the job on
 * the empty cluster, resolved per job at run time. */
typedef struct topo_sim_request {
    topo_podset_spec spec; /* name, count and requests are set per job */
    int auto_level;        /* the required or preferred level is "auto" */
    const char *text;      /* canonical (topo_kueue_request_text) */
    const char *annotations; /* the trace file's form: KEY=VALUE;KEY=VALUE */
} topo_sim_request;

int topo_sim_trace_create(topo_sim_trace **out, topo_err *err) TOPO_MUST_CHECK;
void topo_sim_trace_free(topo_sim_trace *t);

/* Parses a CSV trace (docs/simulate.md "Trace files"): an optional header,
 * then `t_arrive,job_id,pods,gpus_per_pod,duration_s[,annotations]` per
 * line, annotations being Kueue's PodSet annotations as KEY=VALUE separated
 * by ';'. At most TOPO_MAX_SIM_JOBS jobs; errors name the line and the field
 * ("trace.csv:12: field 4 (gpus_per_pod): ..."). Jobs are kept in arrival
 * order (the file's order among equal times). On error the trace is left
 * empty. */
int topo_sim_trace_parse_csv(topo_sim_trace *t, const char *text, size_t len,
                             const char *source, topo_err *err) TOPO_MUST_CHECK;
/* The same from a file of at most TOPO_MAX_SIM_TRACE_FILE bytes. */
int topo_sim_trace_load_csv(topo_sim_trace *t, const char *path, topo_err *err) TOPO_MUST_CHECK;
/* Writes the trace in the format parse_csv reads (generated jobs' "auto"
 * levels as the level they name in the comment line). */
int topo_sim_trace_write_csv(const topo_sim_trace *t, topo_buf *out);

/* Public cluster traces read by their own CSV columns (docs/simulate.md
 * "Trace files"): Helios's cluster_log.csv, Philly's job log as the Helios
 * artifact's philly_trace.csv converts it, Acme's trace_seren.csv and
 * trace_kalos.csv, PAI's pai_task_table.csv. */
typedef enum topo_sim_trace_format {
    TOPO_SIM_TRACE_TOPO = 0, /* topo's own CSV (topo_sim_trace_parse_csv) */
    TOPO_SIM_TRACE_HELIOS = 1,
    TOPO_SIM_TRACE_PHILLY = 2,
    TOPO_SIM_TRACE_ACME = 3,
    TOPO_SIM_TRACE_PAI = 4,
} topo_sim_trace_format;
#define TOPO_SIM_TRACE_FORMATS 5

const char *topo_sim_trace_format_name(topo_sim_trace_format f);
/* The format of that name, or -1. */
int topo_sim_trace_format_parse(const char *name);

/* Why a row of a public trace gave no job. */
typedef enum topo_sim_trace_skip {
    TOPO_SIM_SKIP_NO_GPU = 0,    /* asked for no GPU (a CPU job) */
    TOPO_SIM_SKIP_NOT_STARTED,   /* no start time: it never ran */
    TOPO_SIM_SKIP_NO_END,        /* no end time or run time: still running when traced */
    TOPO_SIM_SKIP_ZERO_RUN,      /* ran 0 seconds */
} topo_sim_trace_skip;
#define TOPO_SIM_TRACE_SKIPS 4

/* "no-gpu", "not-started", "no-end", "zero-run". */
const char *topo_sim_trace_skip_name(topo_sim_trace_skip s);

typedef struct topo_sim_trace_stats {
    size_t rows;                           /* data rows read */
    size_t jobs;                           /* jobs made of them */
    size_t skipped[TOPO_SIM_TRACE_SKIPS];  /* rows skipped, by reason */
    size_t rounded;    /* multi-node jobs rounded up to whole nodes */
    size_t fractional; /* PAI rows asking for a fraction of a GPU per instance, rounded up */
} topo_sim_trace_stats;

/* Reads a public trace of `format` (not TOPO_SIM_TRACE_TOPO): columns found
 * by the header's names (PAI's headerless files in the published column
 * order), one job per row that ran, arrivals relative to the first
 * submission, jobs of more than gpus_per_node GPUs as pods of gpus_per_node.
 * Errors name the line and the column ("helios.csv:12: gpu_num: ..."), or
 * the column a header lacks. Same limits as parse_csv; on error the trace is
 * left empty. stats may be NULL. */
int topo_sim_trace_parse_public(topo_sim_trace *t, topo_sim_trace_format format,
                                uint32_t gpus_per_node, const char *text, size_t len,
                                const char *source, topo_sim_trace_stats *stats,
                                topo_err *err) TOPO_MUST_CHECK;
/* The same from a file of at most TOPO_MAX_SIM_TRACE_FILE bytes. */
int topo_sim_trace_load_public(topo_sim_trace *t, topo_sim_trace_format format,
                               uint32_t gpus_per_node, const char *path,
                               topo_sim_trace_stats *stats, topo_err *err) TOPO_MUST_CHECK;

size_t topo_sim_trace_count(const topo_sim_trace *t);
const topo_sim_job *topo_sim_trace_job(const topo_sim_trace *t, size_t i);
size_t topo_sim_trace_request_count(const topo_sim_trace *t);
const topo_sim_request *topo_sim_trace_request(const topo_sim_trace *t, size_t i);

/* ---- the generator ---------------------------------------------------------------------- */

/* One size class of a preset: the published trace's jobs of lo..gpus GPUs
 * (a power-of-two bin), all generated with `gpus`; their published shares of
 * the trace's jobs and GPU time, as fractions. */
typedef struct topo_sim_size_class {
    uint32_t lo, gpus;
    double job_share, gpu_time_share;
} topo_sim_size_class;

/* A preset's published statistics and size classes (docs/simulate.md
 * "Presets"); the classes ascend by size. */
typedef struct topo_sim_preset {
    const char *name;
    const char *source;
    double gpus_mean, gpus_median, gpus_max;
    double runtime_mean, runtime_median, runtime_max; /* seconds */
    const topo_sim_size_class *classes;
    size_t nclasses;
} topo_sim_preset;

/* The preset of that name, NULL if none; names for help texts. */
const topo_sim_preset *topo_sim_preset_find(const char *name);
const char *topo_sim_preset_names(void);

/* What a cluster of `capacity` GPUs leaves out of the preset: the generator
 * drops the classes above half of it and renormalises the rest's shares.
 * Returns the share of the preset's GPU time left out (0 when capacity is 0
 * or everything fits); *jobs_out (may be NULL) the share of its jobs. */
double topo_sim_preset_cut(const topo_sim_preset *p, uint64_t capacity, double *jobs_out);

/* Generator options; every 0 means the default. */
typedef struct topo_sim_gen_opts {
    const char *preset;    /* NULL: philly */
    uint32_t jobs;         /* required, 1..TOPO_MAX_SIM_JOBS */
    uint64_t seed;
    double load;           /* offered GPU-seconds / (capacity x span); 0: 0.8 */
    uint64_t capacity;     /* GPUs of the cluster: jobs of more than half of it are
                            * left out; 0: no cluster (sizes up to the preset's max,
                            * load against 1,000 GPUs) */
    uint32_t gpus_per_node; /* larger jobs become pods of this many; 0: 8 */
    uint32_t max_node;     /* most GPUs any node has; 0: gpus_per_node */
    double daily_amplitude; /* arrival rate 1 +/- this over a day; < 0: none, 0: 0.5 */
    /* Multi-node jobs' topology requests: shares of required and preferred
     * (the rest unconstrained), at request_level (NULL: auto). */
    double required_share, preferred_share; /* < 0: none; 0: 0.2 and 0.6 */
    const char *request_level;
    /* A share of multi-node jobs also asks for slices of slice_size pods in
     * slice_level (only jobs whose pod count it divides). */
    double slice_share;
    const char *slice_level;
    int32_t slice_size;
} topo_sim_gen_opts;

#define TOPO_SIM_LOAD_DEFAULT 0.8
#define TOPO_SIM_DAILY_AMPLITUDE_DEFAULT 0.5
#define TOPO_SIM_REQUIRED_SHARE_DEFAULT 0.2
#define TOPO_SIM_PREFERRED_SHARE_DEFAULT 0.6

/* Replaces the trace's jobs with generated ones. TOPO_EINVALID for bad
 * options (the message names the option). */
int topo_sim_trace_generate(topo_sim_trace *t, const topo_sim_gen_opts *opts,
                            topo_err *err) TOPO_MUST_CHECK;

/* ---- a run ------------------------------------------------------------------------------ */

typedef enum topo_sim_policy {
    TOPO_SIM_TOPO = 0,         /* the engine (Kueue's TAS) */
    TOPO_SIM_KUBE_DEFAULT = 1, /* kube-scheduler: filter, LeastAllocated, random ties */
    TOPO_SIM_FIRST_FIT = 2,    /* first node that fits in a shuffled order */
    TOPO_SIM_BEST_FIT = 3,     /* the node with the least free that fits (shuffled ties) */
    TOPO_SIM_RANDOM = 4,       /* any node that fits */
    /* New policies go last: a policy's number seeds its random choices, so
     * renumbering would change the results of the ones before. */
    TOPO_SIM_FIRST_FIT_FABRIC = 5, /* first node that fits in the topology's own order */
    TOPO_SIM_KUBE_BINPACK = 6,     /* kube-scheduler with MostAllocated for GPUs */
    TOPO_SIM_SLURM_TREE = 7,       /* Slurm's topology/tree: lowest fitting switch, best fit */
    /* Jobs with a topology request by the engine (as topo), the others by
     * kube-default; both charged to the engine's snapshot. */
    TOPO_SIM_MIXED = 8,
    /* mixed, the others first steered by the packing rule (topo/packing.h)
     * at pack_level, as a weight-100 preferred node affinity. */
    TOPO_SIM_MIXED_PACK = 9,
} topo_sim_policy;
#define TOPO_SIM_POLICIES 10

const char *topo_sim_policy_name(topo_sim_policy p);
/* The policy of that name, or -1. */
int topo_sim_policy_parse(const char *name);

typedef void (*topo_sim_progress_fn)(const char *policy, size_t jobs_done, size_t jobs,
                                     void *payload);

/* The slowdown model's and the metrics' parameters; 0 means the default. */
typedef struct topo_sim_run_opts {
    uint64_t seed;            /* the baselines' random choices */
    const topo_gates *gates;  /* topo's Kueue gates (profiles); NULL: Kueue's defaults */
    double relax_after;       /* > 0: a preferred level is held as required this long */
    double cost[TOPO_SIM_TIERS]; /* relative communication cost per tier */
    double comm_small, comm_large; /* communication share up to and above 8 GPUs */
    int apply_slowdown;       /* stretch each job's duration by its slowdown */
    uint32_t frag_pod;        /* the pod size of the second fragmentation; 0: 8 */
    double timeline_step;     /* seconds per timeline point; 0: the span / 400 */
    double warmup;            /* the window starts this long after the first arrival (at most
                               * the arrivals' span); job-level metrics count only jobs
                               * arriving in it */
    const char *pack_level;   /* mixed-pack's level; NULL: the level above hostname */
    topo_sim_progress_fn progress; /* called every 1,000 arrivals and at the end */
    void *progress_payload;
} topo_sim_run_opts;

/* The default cost model, derived in docs/simulate.md "The cost model":
 * a tier's cost is NCCL all-reduce bus bandwidth inside an NVLink domain
 * over the bus bandwidth at that tier (leaf: 470 / 400 GB/s, rounded), and
 * above the leaf the leaf's cost times the oversubscription (an assumption:
 * 2:1 above the leaf, another 2:1 above the spine). The communication
 * shares are assumptions (docs: swept 0.5x to 2x by --cost-sweep). */
#define TOPO_SIM_COST_NVLINK_DEFAULT 1.0
#define TOPO_SIM_COST_LEAF_DEFAULT 1.2
#define TOPO_SIM_OVERSUB_SPINE_DEFAULT 2.0
#define TOPO_SIM_OVERSUB_CLUSTER_DEFAULT 4.0
#define TOPO_SIM_COST_SPINE_DEFAULT 2.4   /* leaf x 2 */
#define TOPO_SIM_COST_CLUSTER_DEFAULT 4.8 /* leaf x 4 */
#define TOPO_SIM_COMM_SMALL_DEFAULT 0.15
#define TOPO_SIM_COMM_LARGE_DEFAULT 0.3
#define TOPO_SIM_FRAG_POD_DEFAULT 8
#define TOPO_SIM_TIMELINE_POINTS 400

/* Queueing classes by GPUs per job: 1-8, 9-127 (16-64 with power-of-two
 * sizes), 128 and more. */
#define TOPO_SIM_CLASSES 3

typedef struct topo_sim_wait {
    size_t jobs;
    double p50, p99, mean; /* seconds from arrival to start */
} topo_sim_wait;

typedef struct topo_sim_metrics {
    const char *policy;
    size_t jobs;          /* in the trace */
    size_t placed;        /* started (all of them, unless unplaceable) */
    size_t unplaceable;   /* did not fit the cluster even with no job running */
    size_t multi_node;    /* placed jobs with more GPUs than the largest node */
    /* Of the multi-node jobs one domain below the whole cluster could hold
     * on the empty cluster: the share inside one domain of the tightest such
     * level. */
    double tight_share;
    /* Of those one such domain had room for when they started: the share
     * inside one domain of the tightest level that had room then. */
    double tight_share_now;
    size_t nlevels;
    double spanned[TOPO_MAX_LEVELS]; /* mean domains per level over multi_node */
    double fragmentation;     /* free on partly used nodes / free, time-weighted */
    double fragmentation_pod; /* free no frag_pod-GPU pod could use / free */
    double utilisation;       /* used by jobs / capacity over the window */
    double queue_length;      /* mean jobs waiting over the window */
    topo_sim_wait wait;       /* every placed job */
    topo_sim_wait wait_class[TOPO_SIM_CLASSES];
    double slowdown_mean, slowdown_p99; /* GPU-time weighted */
    /* Job completion time (completion - arrival: the wait and the time run,
     * stretched with apply_slowdown) over the placed jobs, nearest rank, and
     * goodput: the GPU-seconds of useful work done inside the window (a job
     * slowed down s times does 1/s of a GPU-second's work per GPU-second)
     * over capacity x window. */
    double jct_mean, jct_p99;
    double goodput;
    double window_start, window_end; /* first arrival + warmup, last arrival */
    double makespan;                 /* last completion (makespan_s: from window_start) */
    uint64_t attempts;               /* placements tried (engine calls for topo) */
} topo_sim_metrics;

/* One timeline point: averages over [t, t + step). */
typedef struct topo_sim_sample {
    double t;
    double utilisation, fragmentation, fragmentation_pod, queue_length;
} topo_sim_sample;

typedef struct topo_sim_result topo_sim_result;

/* Runs one policy over the trace on the cluster. TOPO_EINVALID when a job's
 * request names a level the cluster does not have; TOPO_ENOMEM. */
int topo_sim_run(topo_sim_result **out, topo_sim_cluster *c, const topo_sim_trace *t,
                 topo_sim_policy policy, const topo_sim_run_opts *opts,
                 topo_err *err) TOPO_MUST_CHECK;
void topo_sim_result_free(topo_sim_result *r);
const topo_sim_metrics *topo_sim_result_metrics(const topo_sim_result *r);
/* The level names the metrics' spanned[] refers to. */
const char *topo_sim_result_level(const topo_sim_result *r, size_t i);
size_t topo_sim_result_timeline(const topo_sim_result *r, const topo_sim_sample **out);
/* Where job i started (seconds), or -1 if it never did. */
double topo_sim_result_start(const topo_sim_result *r, size_t job);

/* What happened to one job, as the job-level metrics see it. */
typedef struct topo_sim_outcome {
    double arrive;     /* from the trace */
    double start, end; /* when it started and completed; both -1 if it never started */
    double slowdown;   /* the modelled slowdown of where it ran; 1 if it never started */
    uint64_t gpus;     /* pods x gpus_per_pod */
    double work;       /* gpus x duration (unstretched): its weight in the slowdown */
    uint8_t multi_node; /* started, with more GPUs than the largest node */
    /* For the tight shares (multi-node jobs only): -1 the job does not count
     * (no level below the whole cluster could hold it), else whether its
     * pods sat in one domain of that level: the tightest level that could
     * hold it on the empty cluster (tight), with room when it started
     * (tight_now). */
    int8_t tight, tight_now;
    /* Domains of each level (topo_sim_result_level) its pods span; 0 if it
     * never started. */
    uint32_t spanned[TOPO_MAX_LEVELS];
} topo_sim_outcome;

/* The trace's jobs, which every result of a run over it has. */
size_t topo_sim_result_job_count(const topo_sim_result *r);
/* Job i's outcome into *out; TOPO_EINVALID past the last job. */
int topo_sim_result_job(const topo_sim_result *r, size_t job, topo_sim_outcome *out);

/* The result's metrics with every job-level figure (jobs, placed,
 * unplaceable, multi_node, the tight shares, spanned, the waits, the
 * slowdowns, jct) recomputed over the jobs mask[j] != 0 selects (one byte a
 * job, topo_sim_result_job_count of them); the window figures
 * (utilisation, fragmentation, queue length, goodput) are the result's, as
 * they integrate over time, not over jobs. The run's own metrics are this
 * over the jobs arriving inside the window. TOPO_ENOMEM. */
int topo_sim_metrics_over(const topo_sim_result *r, const unsigned char *mask,
                          topo_sim_metrics *out, topo_err *err) TOPO_MUST_CHECK;

/* The same-jobs view of results of one trace: the jobs every result placed
 * among those each counts (arriving inside the window), their number in
 * *out_jobs, and out[i] the job-level metrics of r[i] over them.
 * TOPO_EINVALID when the results are not of one trace and window. */
int topo_sim_common(topo_sim_metrics *out, size_t *out_jobs, const topo_sim_result *const *r,
                    size_t n, topo_err *err) TOPO_MUST_CHECK;

/* Pods of one job on one node (topo_sim_cluster_node). */
typedef struct topo_sim_slot {
    int32_t node, count;
} topo_sim_slot;

/* Where job i's pods went, by node; 0 slots if it never started. */
size_t topo_sim_result_placement(const topo_sim_result *r, size_t job,
                                 const topo_sim_slot **out);

/* ---- the cost model ----------------------------------------------------------------------- */

/* The slowdown model's parameters (topo_sim_run_opts takes them): a job
 * whose pods the finest tier t holds runs 1 + share x (cost[t] - 1) times
 * as long, share being comm_small up to 8 GPUs and comm_large above. */
typedef struct topo_sim_cost_model {
    double cost[TOPO_SIM_TIERS];
    double comm_small, comm_large;
} topo_sim_cost_model;

/* Costs are relative to one NVLink domain, the fastest a job can talk: none
 * is below 1 (a slowdown below 1 would make a job faster for spreading),
 * and a tier 100 times slower than NVLink is a typo. */
#define TOPO_SIM_COST_MIN 1.0
#define TOPO_SIM_COST_MAX 100.0
#define TOPO_SIM_OVERSUB_MAX 64.0

/* The defaults above. */
void topo_sim_cost_model_default(topo_sim_cost_model *out);

/* Reads a --cost-model file (YAML or JSON, docs/simulate.md "The cost
 * model"), every key optional:
 *
 *   tiers: {nvlink: 1.0, leaf: 1.2, spine: 2.4, cluster: 4.8}
 *   oversubscription: {spine: 2, cluster: 4}
 *   communication: {small: 0.15, large: 0.3}
 *
 * An absent tiers.spine or tiers.cluster is tiers.leaf times that tier's
 * oversubscription (relative to the leaf); giving both is an error. Costs
 * are in [TOPO_SIM_COST_MIN, TOPO_SIM_COST_MAX] and must not decrease from nvlink to
 * cluster, oversubscriptions in [1, TOPO_SIM_OVERSUB_MAX], shares in
 * (0, 1]. Unknown keys are refused. TOPO_EINVALID with
 * "source:line:column: path: problem"; *out is written only on success
 * (the defaults with the file's values over them). */
int topo_sim_cost_model_parse(topo_sim_cost_model *out, const char *text, size_t len,
                              const char *source, topo_err *err) TOPO_MUST_CHECK;
/* The rule every cost model keeps, whether it comes from a file, flags or
 * both: a coarser tier's traffic crosses the finer tiers' links as well,
 * so its cost cannot be lower. The first tier costing less than the one
 * below it, or -1. */
int topo_sim_cost_model_decrease(const topo_sim_cost_model *m);
/* The same from a file of at most TOPO_MAX_CONFIG_FILE bytes. */
int topo_sim_cost_model_load(topo_sim_cost_model *out, const char *path,
                             topo_err *err) TOPO_MUST_CHECK;

/* ---- the cost sweep ------------------------------------------------------------------------ */

/* The sensitivity sweep (--cost-sweep): every cost factor a (scaling each
 * tier's cost - 1) against every share factor b. Since a job's slowdown is
 * 1 + share x (cost - 1), a and b act only through a x b: each distinct
 * product is run once. */
#define TOPO_SIM_SWEEP_COST_FACTORS {0.5, 1.0, 1.5, 2.0}
#define TOPO_SIM_SWEEP_SHARE_FACTORS {0.5, 1.0, 2.0}
#define TOPO_SIM_SWEEP_NCOST 4
#define TOPO_SIM_SWEEP_NSHARE 3
#define TOPO_SIM_SWEEP_ROWS (TOPO_SIM_SWEEP_NCOST * TOPO_SIM_SWEEP_NSHARE)

typedef struct topo_sim_sweep_cell {
    /* The unstretched run's GPU-time weighted mean slowdown: placement does
     * not depend on the costs, so this is 1 + a b (slowdown_mean - 1) of the
     * run given, exactly. */
    double slowdown_mean;
    /* A run with the slowdown applied under the scaled model. */
    double jct_mean, goodput;
} topo_sim_sweep_cell;

typedef struct topo_sim_sweep_row {
    double cost_factor, share_factor;
    topo_sim_sweep_cell cell[TOPO_SIM_POLICIES]; /* in the order of the results given */
} topo_sim_sweep_row;

typedef struct topo_sim_sweep {
    size_t npolicies;
    const char *policy[TOPO_SIM_POLICIES]; /* static names */
    size_t nrows;
    topo_sim_sweep_row row[TOPO_SIM_SWEEP_ROWS];
    size_t runs; /* stretched runs made */
} topo_sim_sweep;

/* Sweeps the n policies whose unstretched results (apply_slowdown off,
 * under opts' cost model) are base[], rerunning each stretched once per
 * distinct product of factors. opts->apply_slowdown is ignored. */
int topo_sim_cost_sweep(topo_sim_sweep *out, topo_sim_cluster *c, const topo_sim_trace *t,
                        const topo_sim_result *const *base, size_t n,
                        const topo_sim_run_opts *opts, topo_err *err) TOPO_MUST_CHECK;

/* ---- output ----------------------------------------------------------------------------- */

/* What the outputs say about the inputs. */
typedef struct topo_sim_info {
    const char *cluster; /* "hgx-h100 shape, 64 nodes", a file name... */
    const char *jobs;    /* "generated: philly, 2000 jobs, load 0.8", "trace.csv" */
    uint64_t seed;
    size_t nodes;
    uint64_t capacity;
    /* Optional: per result, the same policy run again with its slowdown
     * applied (NULL: none; the table and JSON then show no stretched run). */
    const topo_sim_result *const *stretched;
    const topo_sim_sweep *sweep; /* optional: --cost-sweep */
    /* Optional: the cost model the runs used, written to -o json's inputs
     * so that a figure can be reproduced from its file alone. */
    const topo_sim_cost_model *cost;
    /* Optional: the level mixed-pack packed into, default resolved
     * (topo_sim_cluster_pack_level); NULL when no run packs. */
    const char *pack_level;
} topo_sim_info;

/* The metrics side by side, one column per result; with two results or
 * more, the same-jobs block after them. */
int topo_sim_format_table(topo_buf *out, const topo_sim_result *const *r, size_t n);
/* Below the table: the stretched[] runs' completion time, goodput, queue
 * p99 and makespan under the same columns (nothing when stretched is NULL). */
int topo_sim_format_stretched(topo_buf *out, const topo_sim_result *const *r,
                              const topo_sim_result *const *stretched, size_t n);
/* The cost sweep as a table block: a row per cost and share factor, per
 * policy the slowdown mean, the stretched mean completion time and goodput. */
int topo_sim_format_sweep(topo_buf *out, const topo_sim_sweep *s);
/* {"simulate": {inputs}, "policies": {"<name>": {metrics}, ...}, "common":
 * {"jobs": N, "policies": {"<name>": {job-level metrics}}}} (topo_sim_common), keys in a
 * fixed order, numbers rounded: the same results give the same bytes.
 * *out is malloc'd. */
int topo_sim_format_json(char **out, const topo_sim_info *info, const topo_sim_result *const *r,
                         size_t n, topo_err *err) TOPO_MUST_CHECK;
/* policy,t_s,utilisation,fragmentation,fragmentation_pod,queue_length */
int topo_sim_format_timeline(topo_buf *out, const topo_sim_result *const *r, size_t n);
/* One self-contained HTML page: the table and SVG charts, no scripts. */
int topo_sim_format_html(topo_buf *out, const topo_sim_info *info,
                         const topo_sim_result *const *r, size_t n);

/* ---- several seeds ---------------------------------------------------------------------- */

/* The mean of x[0..n) and the half-width of its 95 % confidence interval,
 * Student's t with n - 1 degrees of freedom: mean +/- t * s / sqrt(n), s the
 * sample standard deviation. Returns 1 with an interval, 0 for n = 1 (no
 * interval: *half is 0), TOPO_EINVALID for n = 0. */
int topo_sim_mean_ci95(double *mean, double *half, const double *x, size_t n);

/* The runs of the same policies over several seeds (--seeds): per policy
 * the mean of every metric of -o json and its 95 % interval, and the mean
 * timeline with its interval per point (docs/simulate.md "Seeds and
 * intervals"). */
typedef struct topo_sim_summary topo_sim_summary;

int topo_sim_summary_create(topo_sim_summary **out, topo_err *err) TOPO_MUST_CHECK;
void topo_sim_summary_free(topo_sim_summary *s);
/* Adds one seed's runs: the same policies in the same order and the same
 * levels every time, their timelines of one step (point k of every seed is
 * k steps after its window's start; give the runs one timeline_step), all
 * of one trace (the seed's same-jobs view, topo_sim_common, is kept too).
 * stretched: per run the same policy run with its slowdown applied, or
 * NULL for none; every seed gives them or none does. TOPO_EINVALID when
 * they differ or past TOPO_MAX_SIM_SEEDS seeds. */
int topo_sim_summary_add(topo_sim_summary *s, uint64_t seed, const topo_sim_result *const *r,
                         const topo_sim_result *const *stretched, size_t n,
                         topo_err *err) TOPO_MUST_CHECK;
/* The seeds in the order added. */
size_t topo_sim_summary_seeds(const topo_sim_summary *s, const uint64_t **out);
size_t topo_sim_summary_policy_count(const topo_sim_summary *s);
const char *topo_sim_summary_policy(const topo_sim_summary *s, size_t policy);
/* One metric by its -o json name, nested names joined by '.'
 * ("tight_share", "queue_by_gpus.1-8.p99_s", "domains_spanned.<level>"),
 * "stretched.<key>" for the stretched runs' and "common.<key>" for the
 * same-jobs view's (a job-level key):
 * its mean over the seeds and interval. Returns 1 with an interval, 0
 * without (one seed: *lo = *hi = *mean), TOPO_ENOTFOUND for an unknown name
 * or policy. */
int topo_sim_summary_metric(const topo_sim_summary *s, size_t policy, const char *name,
                            double *mean, double *lo, double *hi);
/* The policy's mean timeline and, with two seeds or more, the interval's
 * low and high per point (NULL with one seed): as many points as the
 * shortest seed's timeline, t the first seed's. Borrowed from s. */
size_t topo_sim_summary_timeline(const topo_sim_summary *s, size_t policy,
                                 const topo_sim_sample **mean, const topo_sim_sample **lo,
                                 const topo_sim_sample **hi);

/* The outputs over several seeds: every figure the mean; the table shows
 * "mean +/- half" (the half-width) in every block (the same-jobs view, the
 * stretched runs), -o json adds "seeds" and "ci95" objects (the same keys
 * and nesting as the metrics they sit beside, each [low, high]) per
 * policy, in its "stretched" object and in "common", the timeline CSV adds
 * a _lo and a _hi column per figure, and the report draws each timeline's
 * interval as a band. With one seed the table and the timeline equal the
 * outputs above and -o json only adds "seeds". */
int topo_sim_format_summary_table(topo_buf *out, const topo_sim_summary *s);
int topo_sim_format_summary_json(char **out, const topo_sim_info *info,
                                 const topo_sim_summary *s, topo_err *err) TOPO_MUST_CHECK;
int topo_sim_format_summary_timeline(topo_buf *out, const topo_sim_summary *s);
int topo_sim_format_summary_html(topo_buf *out, const topo_sim_info *info,
                                 const topo_sim_summary *s);

#endif
