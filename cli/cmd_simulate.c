/* topoassign simulate: replay a job trace over a cluster under topo's
 * placement and topology-unaware baselines, and compare them
 * (lib/simulate, docs/simulate.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/clock.h"
#include "topo/generate.h"
#include "topo/limits.h"
#include "topo/simulate.h"

#define CMD "simulate"
#define PROGRESS_SECONDS 2.0
#define SIM_SEED_DEFAULT 1
/* -o json writes seeds as JSON integers, which jansson holds signed: a seed
 * above this would be printed negative, and a reader could not rerun it. */
#define SIM_SEED_MAX ((uint64_t)INT64_MAX)
#define SIM_PRESET_DEFAULT "philly"
#define SIM_POLICIES_DEFAULT "topo,kube-default,first-fit,best-fit,random"

typedef struct simulate_args {
    cli_input_args input; /* --nodes, --pods, --db, --levels, --node-label */
    topo_opt_list tiers, gates;
    const char *shape, *resource;
    unsigned long shape_nodes, gpus_per_node, nodes_per_rack, racks_per_leaf, leaves_per_spine;
    const char *trace, *trace_format, *preset, *request_level, *slice, *trace_out;
    topo_opt_u64 seed;
    const char *seeds;
    unsigned long jobs;
    double load, daily_amplitude, required_share, preferred_share, slice_share;
    const char *policies, *profile;
    double relax_after;
    const char *pack_level;
    const char *cost_model;
    double cost_nvlink, cost_leaf, cost_spine, cost_cluster, comm_small, comm_large;
    int apply_slowdown, stretched, cost_sweep;
    unsigned long frag_pod;
    const char *output, *timeline, *report;
    double timeline_step, warmup;
    int quiet;
} simulate_args;

#define O(field) offsetof(simulate_args, field)
#define D(constant) TOPO_OPT_DEFAULT(constant)

static const char *const formats[] = {"table", "json", NULL};
static const char *const profiles[] = {"mixed", "best-fit", "least-free-capacity", NULL};
/* topo_sim_trace_format's names, in its order. */
static const char *const trace_formats[] = {"topo", "helios", "philly", "acme", "pai", NULL};

static const topo_opt table[] = {
    TOPO_CLI_NODES_ROW("The cluster (one of three):"),
    {"--pods", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "kubectl get pods -A -o json: GPUs already in use, for the whole run", O(input.pods), NULL},
    {"--db", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "a topo cache file: its nodes, pods and unexpired reservations", O(input.db), NULL},
    {"--shape", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, NULL,
     "a generated cluster: hgx-h100 (8 GPUs a node, 4 nodes a rack, 32 a leaf, 128 a spine "
     "group; 128 nodes) or gb200-nvl72 (racks of 18 4-GPU nodes, one NVLink domain each, 2 "
     "racks a leaf, 8 leaves a spine group; 144 nodes)",
     O(shape), NULL},
    {"--shape-nodes", NULL, TOPO_OPT_UINT, "N", 1, TOPO_MAX_GEN_NODES, NULL, "the preset's",
     "nodes of the --shape", O(shape_nodes), NULL},
    {"--gpus-per-node", NULL, TOPO_OPT_UINT, "G", 1, TOPO_MAX_GEN_GPUS, NULL, "the preset's",
     "GPUs per node of the --shape", O(gpus_per_node), NULL},
    {"--nodes-per-rack", NULL, TOPO_OPT_UINT, "K", 1, TOPO_MAX_GEN_FANOUT, NULL, "the preset's",
     "nodes per rack of the --shape", O(nodes_per_rack), NULL},
    {"--racks-per-leaf", NULL, TOPO_OPT_UINT, "R", 1, TOPO_MAX_GEN_FANOUT, NULL, "the preset's",
     "racks per leaf of the --shape", O(racks_per_leaf), NULL},
    {"--leaves-per-spine", NULL, TOPO_OPT_UINT, "L", 1, TOPO_MAX_GEN_FANOUT, NULL,
     "the preset's", "leaves per spine group of the --shape", O(leaves_per_spine), NULL},
    {"--levels", NULL, TOPO_OPT_STRING, "L1,L2,...", 0, 0, NULL, "the shape's",
     "topology level labels, coarsest first, kubernetes.io/hostname last; required with --nodes "
     "and --db",
     O(input.levels), NULL},
    TOPO_CLI_NODE_LABEL_ROW,
    TOPO_CLI_RESOURCE_ROW("the resource jobs ask for", resource),
    {"--trace", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "jobs from a CSV file: t_arrive,job_id,pods,gpus_per_pod,duration_s[,annotations]",
     O(trace), "The jobs (--trace or --jobs):"},
    {"--trace-format", NULL, TOPO_OPT_CHOICE, "NAME", 0, 0, trace_formats, "topo",
     "the --trace's columns: topo's own, or a public trace's CSV as published: helios "
     "(cluster_log.csv), philly (the Helios artifact's philly_trace.csv), acme "
     "(trace_seren.csv, trace_kalos.csv), pai (pai_task_table.csv); jobs larger than a node "
     "become pods of the cluster's largest node, rows that never ran or use no GPU are skipped "
     "(counts on stderr)",
     O(trace_format), NULL},
    {"--jobs", NULL, TOPO_OPT_UINT, "N", 1, TOPO_MAX_SIM_JOBS, NULL, NULL,
     "generate N jobs", O(jobs), NULL},
    {"--preset", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, SIM_PRESET_DEFAULT,
     "sizes and runtimes fitted to a published trace: philly, helios or acme", O(preset), NULL},
    {"--load", NULL, TOPO_OPT_POSITIVE, "X", 0, 100, NULL, D(TOPO_SIM_LOAD_DEFAULT),
     "offered GPU-time over the capacity's for the span of the arrivals", O(load), NULL},
    {"--seed", NULL, TOPO_OPT_U64, "N", 0, SIM_SEED_MAX, NULL, D(SIM_SEED_DEFAULT),
     "seed of the generator and of the baselines' random choices", O(seed), NULL},
    {"--seeds", NULL, TOPO_OPT_STRING, "A-B|N", 0, 0, NULL, NULL,
     "run every policy once per seed, seeds A to B or 1 to N, and show each figure's mean "
     "and 95 % interval; not with --seed",
     O(seeds), NULL},
    {"--daily-amplitude", NULL, TOPO_OPT_NUMBER, "A", 0, 1, NULL,
     D(TOPO_SIM_DAILY_AMPLITUDE_DEFAULT),
     "arrival rate 1 - A cos(2 pi t / day), below 1; 0 for a steady rate", O(daily_amplitude),
     NULL},
    {"--required-share", NULL, TOPO_OPT_NUMBER, "F", 0, 1, NULL,
     D(TOPO_SIM_REQUIRED_SHARE_DEFAULT), "multi-node jobs with a required level",
     O(required_share), NULL},
    {"--preferred-share", NULL, TOPO_OPT_NUMBER, "F", 0, 1, NULL,
     D(TOPO_SIM_PREFERRED_SHARE_DEFAULT),
     "multi-node jobs with a preferred level (the rest are unconstrained)", O(preferred_share),
     NULL},
    {"--request-level", NULL, TOPO_OPT_STRING, "LEVEL", 0, 0, NULL, "auto",
     "the level they ask for; auto: the tightest level that could hold the job on the empty "
     "cluster",
     O(request_level), NULL},
    {"--slice", NULL, TOPO_OPT_STRING, "LEVEL:SIZE", 0, 0, NULL, NULL,
     "slices of SIZE pods, each in one domain of LEVEL, for --slice-share of them",
     O(slice), NULL},
    {"--slice-share", NULL, TOPO_OPT_NUMBER, "F", 0, 1, NULL, "0",
     "multi-node jobs (whose pods SIZE divides) asking for --slice", O(slice_share), NULL},
    {"--trace-out", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write the jobs as a CSV trace (--trace reads it back); one seed only", O(trace_out),
     NULL},
    {"--policies", NULL, TOPO_OPT_STRING, "P,...", 0, 0, NULL, SIM_POLICIES_DEFAULT,
     "the policies to run, in this order",
     O(policies), "Policies:"},
    {"--profile", NULL, TOPO_OPT_CHOICE, "NAME", 0, 0, profiles, "mixed",
     "topo's Kueue profile: mixed (BestFit, LeastFreeCapacity for unconstrained), best-fit, "
     "least-free-capacity",
     O(profile), NULL},
    TOPO_CLI_GATE_ROW("set a Kueue feature gate for topo (after --profile)", gates, NULL),
    {"--relax-after", NULL, TOPO_OPT_POSITIVE, "SECONDS", 0, (unsigned long)1e9, NULL, NULL,
     "topo holds a preferred level as required this long, then takes what fits", O(relax_after),
     NULL},
    {"--pack-level", NULL, TOPO_OPT_STRING, "LEVEL", 0, 0, NULL, NULL,
     "mixed-pack steers jobs without a topology request into used domains of this level "
     "(default: the level above hostname)",
     O(pack_level), NULL},
    {"--cost-model", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "YAML: tiers {nvlink, leaf, spine, cluster}, oversubscription {spine, cluster} above the "
     "leaf, communication {small, large}; every key optional, defaults as derived in "
     "docs/simulate.md (the --cost-* and --comm-* flags below override the file)",
     O(cost_model), "The slowdown model:"},
    {"--cost-nvlink", NULL, TOPO_OPT_NUMBER, "C", (unsigned long)TOPO_SIM_COST_MIN,
     (unsigned long)TOPO_SIM_COST_MAX, NULL,
     D(TOPO_SIM_COST_NVLINK_DEFAULT), "communication cost inside a node or NVLink domain",
     O(cost_nvlink), NULL},
    {"--cost-leaf", NULL, TOPO_OPT_NUMBER, "C", (unsigned long)TOPO_SIM_COST_MIN,
     (unsigned long)TOPO_SIM_COST_MAX, NULL, D(TOPO_SIM_COST_LEAF_DEFAULT),
     "inside one leaf (or rack)", O(cost_leaf), NULL},
    {"--cost-spine", NULL, TOPO_OPT_NUMBER, "C", (unsigned long)TOPO_SIM_COST_MIN,
     (unsigned long)TOPO_SIM_COST_MAX, NULL,
     D(TOPO_SIM_COST_SPINE_DEFAULT), "across leaves of one spine group (the leaf's x 2:1 "
     "oversubscription)", O(cost_spine), NULL},
    {"--cost-cluster", NULL, TOPO_OPT_NUMBER, "C", (unsigned long)TOPO_SIM_COST_MIN,
     (unsigned long)TOPO_SIM_COST_MAX, NULL,
     D(TOPO_SIM_COST_CLUSTER_DEFAULT), "across spine groups (the leaf's x 4)", O(cost_cluster),
     NULL},
    {"--comm-small", NULL, TOPO_OPT_POSITIVE, "F", 0, 1, NULL, D(TOPO_SIM_COMM_SMALL_DEFAULT),
     "share of run time spent communicating, jobs of up to 8 GPUs (an assumption)",
     O(comm_small), NULL},
    {"--comm-large", NULL, TOPO_OPT_POSITIVE, "F", 0, 1, NULL, D(TOPO_SIM_COMM_LARGE_DEFAULT),
     "the same above 8 GPUs", O(comm_large), NULL},
    {"--tier", NULL, TOPO_OPT_LIST, "LEVEL=TIER", 0, 0, NULL, NULL,
     "the tier of a level (nvlink, leaf, spine, cluster) instead of the one its name suggests",
     O(tiers), NULL},
    {"--apply-slowdown", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "jobs run their duration times their slowdown", O(apply_slowdown), NULL},
    {"--stretched", NULL, TOPO_OPT_BOOL, "true|false", 0, 0, NULL, "true",
     "also run each policy with its slowdown applied and show its completion times, goodput, "
     "queue p99 and makespan beside the unstretched run (twice the run time; not with "
     "--apply-slowdown, whose run is the stretched one)",
     O(stretched), NULL},
    {"--cost-sweep", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "sensitivity: cost - 1 scaled 0.5x, 1x, 1.5x, 2x against the communication shares 0.5x, "
     "1x, 2x; per policy the slowdown mean (from the run, exact) and a stretched run's mean "
     "completion and goodput per distinct product of the two (8 more runs a policy); one seed "
     "only",
     O(cost_sweep), NULL},
    {"--frag-pod", NULL, TOPO_OPT_UINT, "G", 1, TOPO_MAX_SIM_GPUS_PER_POD, NULL,
     D(TOPO_SIM_FRAG_POD_DEFAULT),
     "the pod size of the second fragmentation figure (free GPUs no such pod can use)",
     O(frag_pod), NULL},
    {"--warmup", NULL, TOPO_OPT_NUMBER, "SECONDS", 0, (unsigned long)1e9, NULL, "0",
     "the metrics' window starts this long after the first arrival; job-level metrics count "
     "only jobs arriving in it (at most the arrivals' span)",
     O(warmup), "Metrics:"},
    {"--output", "-o", TOPO_OPT_CHOICE, "FORMAT", 0, 0, formats, "table",
     "the metrics side by side, or JSON", O(output), "Output:"},
    {"--timeline", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "utilisation, fragmentation and queue length over time, CSV", O(timeline), NULL},
    {"--timeline-step", NULL, TOPO_OPT_POSITIVE, "SECONDS", 0, (unsigned long)1e9, NULL,
     "the arrivals' span / 400", "seconds per timeline point", O(timeline_step), NULL},
    {"--report", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "an HTML page with the table and SVG charts (with --seeds: the means, ± and interval "
     "bands)",
     O(report), NULL},
    {"--quiet", "-q", TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL, "no progress on stderr", O(quiet),
     NULL},
};
#define NOPTS (sizeof table / sizeof table[0])

const cli_command cli_simulate = {
    "simulate",
    "replay a job trace under topo and the default scheduler, compare placement quality",
    "usage: topoassign simulate (--nodes FILE [--pods FILE] | --db FILE | --shape NAME)\n"
    "                           [--levels L1,...] (--trace FILE [--trace-format NAME] |\n"
    "                           --jobs N [--preset NAME]\n"
    "                           [--load X]) [--seed N | --seeds A-B] [--policies P,...]\n"
    "                           [-o table|json] [--timeline FILE] [--report FILE.html]",
    "Replays a stream of GPU jobs (a CSV trace, or generated from a preset fitted to a "
    "published trace) over the cluster, once per policy: topo (Kueue's TAS through topo's "
    "engine), kube-default (kube-scheduler without topology: per-pod filtering, "
    "LeastAllocated, random ties), kube-binpack (the same with MostAllocated), first-fit "
    "(shuffled node order), first-fit-fabric (nodes in the topology's order: level values, "
    "then hostname), best-fit (shuffled order), random, slurm-tree (Slurm's topology/tree: the "
    "lowest switch with room, best fit among them and among its leaves), mixed (topo for jobs "
    "with a topology request, kube-default for the rest) and mixed-pack (the same, the rest "
    "steered into used domains of --pack-level as a preferred affinity); gangs all or nothing, a "
    "FIFO "
    "queue retried whenever jobs end. Prints per policy how many multi-node jobs landed in one "
    "domain, domains spanned, GPU fragmentation and utilisation, queueing delay and a modelled "
    "slowdown (docs/simulate.md). The same inputs and seed give the same output. Exit status: "
    "0 done, 2 bad input.",
    table,
    NOPTS,
    cli_cmd_simulate,
};

/* ---- progress ---- */

typedef struct progress {
    int quiet;
    int64_t start_ns, last_ns; /* topo_clock_ns */
} progress;

static double since(int64_t a_ns, int64_t b_ns)
{
    return (double)(b_ns - a_ns) / 1e9;
}

static void on_progress(const char *policy, size_t done, size_t jobs, void *payload)
{
    progress *p = payload;
    int64_t now = topo_clock_ns();
    if (p->quiet || (done < jobs && since(p->last_ns, now) < PROGRESS_SECONDS))
        return;
    if (done < jobs || since(p->start_ns, now) >= PROGRESS_SECONDS)
        fprintf(stderr, "topoassign simulate: %s: %zu/%zu jobs arrived, %.1f s\n", policy, done,
                jobs, since(p->start_ns, now));
    p->last_ns = now;
}

/* ---- inputs ---- */

typedef struct sim_inputs {
    topo_pool *pool;
    topo_inventory *inv;
    topo_snapshot *snap;
    topo_sim_cluster *cluster;
    topo_sim_trace *trace;
    const char *cluster_text, *jobs_text;
    uint64_t seed;
    topo_sim_cost_model cost; /* what the runs used, for -o json */
    const char *pack_level;   /* mixed-pack's, default resolved; NULL: no run packs */
} sim_inputs;

static int shape_given(const simulate_args *f)
{
    return f->shape_nodes || f->gpus_per_node || f->nodes_per_rack || f->racks_per_leaf ||
           f->leaves_per_spine;
}

static int load_shape(sim_inputs *in, const simulate_args *f, topo_err *err)
{
    topo_sim_shape_opts so = {f->shape, (uint32_t)f->shape_nodes, (uint32_t)f->gpus_per_node,
                              (uint32_t)f->nodes_per_rack, (uint32_t)f->racks_per_leaf,
                              (uint32_t)f->leaves_per_spine};
    topo_gen_opts go;
    topo_gen_cluster *gc = NULL;
    const char *const *levels;
    const char **parsed = NULL;
    size_t nlevels;
    int rc;

    if (f->input.nodes.n > 0 || f->input.db != NULL || f->input.pods != NULL)
        return topo_err_set(err, TOPO_EINVALID, "--shape: not with --nodes, --pods or --db");
    if ((rc = topo_sim_shape(&go, &levels, &nlevels, &so, err)) < 0)
        return rc;
    if (f->input.levels != NULL) {
        if ((rc = cli_parse_levels(&parsed, &nlevels, f->input.levels, in->pool, err)) < 0)
            return rc;
        levels = parsed;
    }
    if ((rc = topo_gen_cluster_build(&gc, &go, in->pool, err)) < 0 ||
        (rc = topo_gen_snapshot(&in->snap, gc, TOPO_CLI_TOPOLOGY_NAME, levels, nlevels, err)) < 0)
        return rc == TOPO_EINVALID ? topo_err_wrap(err, "--shape %s", f->shape) : rc;
    in->cluster_text = topo_pool_printf(in->pool, "%s shape, %zu nodes x %u GPUs", f->shape,
                                        gc->nnodes, (unsigned)go.gpus_per_node);
    return in->cluster_text != NULL ? 0 : topo_err_nomem(err, NULL);
}

static int load_cluster(sim_inputs *in, const simulate_args *f, topo_err *err)
{
    topo_inventory_snapshot_opts sopts = {0};
    topo_sim_cluster_opts copts = {f->resource, f->tiers.v, f->tiers.n};
    cli_nodes nodes;
    int rc;

    if (f->shape == NULL && shape_given(f))
        return topo_err_set(err, TOPO_EINVALID,
                            "--shape-nodes, --gpus-per-node, --nodes-per-rack, --racks-per-leaf "
                            "and --leaves-per-spine scale a --shape");
    cli_input cin;
    cli_topology_flags tflags;
    cli_input_from_args(&cin, &tflags, &f->input, NULL);
    if (f->shape != NULL)
        rc = load_shape(in, f, err);
    else if ((rc = cli_topology_opts(&sopts, &cin, &tflags, in->pool, err)) == 0 &&
             (rc = cli_load_snapshot(&in->inv, &in->snap, &nodes, &cin, &sopts, NULL,
                                          in->pool, err)) == 0)
        in->cluster_text = f->input.db != NULL ? f->input.db : f->input.nodes.v[0];
    if (rc < 0)
        return rc;
    return topo_sim_cluster_create(&in->cluster, in->snap, &copts, err);
}

/* "LEVEL:SIZE" */
static int parse_slice(topo_sim_gen_opts *g, const char *text, topo_pool *pool, topo_err *err)
{
    const char *colon = strrchr(text, ':');
    char *end = NULL;
    long size = colon != NULL ? strtol(colon + 1, &end, 10) : 0;
    if (colon == NULL || colon == text || end == colon + 1 || *end != '\0' || size < 1 ||
        size > (long)TOPO_MAX_SIM_PODS)
        return topo_err_set(err, TOPO_EINVALID, "--slice: expected LEVEL:SIZE, got \"%s\"", text);
    g->slice_level = topo_pool_strndup(pool, text, (size_t)(colon - text));
    g->slice_size = (int32_t)size;
    return g->slice_level != NULL ? 0 : topo_err_nomem(err, NULL);
}

/* A share for the generator, where 0 is its default and a negative
 * share none. */
static double share(double v)
{
    return v == 0 ? -1 : v;
}

/* One line on stderr: what a public trace's rows became. */
static void print_trace_stats(const char *path, const topo_sim_trace_stats *s)
{
    char skipped[256] = "";
    for (int i = 0; i < TOPO_SIM_TRACE_SKIPS; i++)
        snprintf(skipped + strlen(skipped), sizeof skipped - strlen(skipped), "%s%zu %s",
                 i == 0 ? "" : ", ", s->skipped[i],
                 topo_sim_trace_skip_name((topo_sim_trace_skip)i));
    fprintf(stderr,
            "topoassign simulate: %s: %zu rows, %zu jobs; skipped %s; %zu rounded up to whole "
            "nodes, %zu fractional GPUs rounded up\n",
            path, s->rows, s->jobs, skipped, s->rounded, s->fractional);
}

static int load_trace(sim_inputs *in, const simulate_args *f, topo_err *err)
{
    int format = topo_sim_trace_format_parse(f->trace_format ? f->trace_format : "topo");
    topo_sim_trace_stats stats;
    int rc;
    if (format <= TOPO_SIM_TRACE_TOPO)
        return topo_sim_trace_load_csv(in->trace, f->trace, err);
    rc = topo_sim_trace_load_public(in->trace, (topo_sim_trace_format)format,
                                    topo_sim_cluster_max_node(in->cluster), f->trace, &stats,
                                    err);
    if (rc < 0)
        return rc;
    print_trace_stats(f->trace, &stats);
    in->jobs_text = topo_pool_printf(in->pool, "%s (%s trace)", f->trace,
                                     topo_sim_trace_format_name((topo_sim_trace_format)format));
    return in->jobs_text != NULL ? 0 : topo_err_nomem(err, NULL);
}

/* The rows that shape generated jobs, refused with --trace. */
static const char *const generator_rows[] = {
    "--preset", "--load", "--daily-amplitude", "--required-share", "--preferred-share",
    "--request-level", "--slice", "--slice-share",
};

static int load_jobs(sim_inputs *in, const simulate_args *f, const unsigned char *given,
                     topo_err *err)
{
    int rc;
    if ((f->trace != NULL) == (f->jobs != 0))
        return topo_err_set(err, TOPO_EINVALID, "give --trace FILE or --jobs N (one of them)");
    if (f->trace == NULL && f->trace_format != NULL && strcmp(f->trace_format, "topo") != 0)
        return topo_err_set(err, TOPO_EINVALID, "--trace-format: says how to read --trace");
    if ((rc = topo_sim_trace_create(&in->trace, err)) < 0)
        return rc;
    if (f->trace != NULL) {
        for (size_t i = 0; i < sizeof generator_rows / sizeof generator_rows[0]; i++)
            if (topo_opts_given(table, NOPTS, given, generator_rows[i]))
                return topo_err_set(err, TOPO_EINVALID,
                                    "--preset, --load, --daily-amplitude, the shares, "
                                    "--request-level and --slice shape generated jobs, not "
                                    "--trace");
        in->jobs_text = f->trace;
        if ((rc = load_trace(in, f, err)) < 0)
            return rc;
        /* Nothing to replay: every figure would be a zero that says nothing. */
        if (topo_sim_trace_count(in->trace) == 0)
            return topo_err_set(err, TOPO_EINVALID, "--trace: %s: no jobs to replay", f->trace);
        return 0;
    }
    topo_sim_gen_opts g;
    memset(&g, 0, sizeof(g));
    g.preset = f->preset;
    g.jobs = (uint32_t)f->jobs;
    g.seed = in->seed;
    g.load = f->load;
    g.capacity = topo_sim_cluster_capacity(in->cluster);
    g.gpus_per_node = topo_sim_cluster_max_node(in->cluster);
    g.daily_amplitude = share(f->daily_amplitude);
    g.required_share = share(f->required_share);
    g.preferred_share = share(f->preferred_share);
    g.request_level = f->request_level;
    g.slice_share = f->slice_share;
    if (f->slice != NULL && (rc = parse_slice(&g, f->slice, in->pool, err)) < 0)
        return rc;
    if ((rc = topo_sim_trace_generate(in->trace, &g, err)) < 0)
        return rc;
    /* Say what the cluster's size cut leaves out of the preset: its shares
     * are renormalised over what is left, which a reader comparing with
     * the published trace must know. */
    const char *name = f->preset ? f->preset : SIM_PRESET_DEFAULT;
    double cut_jobs = 0, cut_time = topo_sim_preset_cut(topo_sim_preset_find(name), g.capacity,
                                                        &cut_jobs);
    char cut[160] = "";
    if (cut_time > 0)
        snprintf(cut, sizeof cut,
                 " (jobs over half the cluster left out: %.3g%% of the preset's jobs, %.3g%% "
                 "of its GPU time)",
                 100 * cut_jobs, 100 * cut_time);
    in->jobs_text = topo_pool_printf(in->pool, "generated: %s, %lu jobs, load %g%s", name,
                                     f->jobs, f->load, cut);
    return in->jobs_text != NULL ? 0 : topo_err_nomem(err, NULL);
}

/* ---- policies and options ---- */

static int parse_policies(topo_sim_policy *out, size_t *n, const char *text, topo_pool *pool,
                          topo_err *err)
{
    char *copy = topo_pool_strdup(pool, text ? text : SIM_POLICIES_DEFAULT);
    *n = 0;
    if (copy == NULL)
        return topo_err_nomem(err, NULL);
    for (char *p = copy, *next; p != NULL; p = next) {
        next = strchr(p, ',');
        if (next != NULL)
            *next++ = '\0';
        int k = topo_sim_policy_parse(p);
        if (k < 0) {
            char names[256] = "";
            for (int i = 0; i < TOPO_SIM_POLICIES; i++)
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                         i == 0 ? "" : i + 1 < TOPO_SIM_POLICIES ? ", " : " or ",
                         topo_sim_policy_name((topo_sim_policy)i));
            return topo_err_set(err, TOPO_EINVALID, "--policies: expected %s, got \"%s\"", names,
                                p);
        }
        for (size_t i = 0; i < *n; i++)
            if (out[i] == (topo_sim_policy)k)
                return topo_err_set(err, TOPO_EINVALID, "--policies: %s given twice", p);
        out[(*n)++] = (topo_sim_policy)k;
    }
    return 0;
}

/* The cost model: the defaults, a --cost-model file over them, and each
 * --cost-* or --comm-* flag given over both. */
static int cost_model(topo_sim_cost_model *m, const simulate_args *f, const unsigned char *given,
                      topo_err *err)
{
    const struct {
        const char *flag;
        double value, *to;
    } flags[] = {
        {"--cost-nvlink", f->cost_nvlink, &m->cost[TOPO_SIM_TIER_NVLINK]},
        {"--cost-leaf", f->cost_leaf, &m->cost[TOPO_SIM_TIER_LEAF]},
        {"--cost-spine", f->cost_spine, &m->cost[TOPO_SIM_TIER_SPINE]},
        {"--cost-cluster", f->cost_cluster, &m->cost[TOPO_SIM_TIER_CLUSTER]},
        {"--comm-small", f->comm_small, &m->comm_small},
        {"--comm-large", f->comm_large, &m->comm_large},
    };
    int rc;
    topo_sim_cost_model_default(m);
    if (f->cost_model != NULL && (rc = topo_sim_cost_model_load(m, f->cost_model, err)) < 0)
        return rc;
    int set[TOPO_SIM_TIERS] = {0};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (topo_opts_given(table, NOPTS, given, flags[i].flag)) {
            *flags[i].to = flags[i].value;
            if (i < TOPO_SIM_TIERS)
                set[i] = 1;
        }
    /* A flag sets its value alone, so it can break the order a file keeps. */
    int k = topo_sim_cost_model_decrease(m);
    if (k < 0)
        return 0;
    char name[2][512];
    for (int i = 0; i < 2; i++) {
        int t = k - i;
        if (set[t])
            snprintf(name[i], sizeof name[i], "%s", flags[t].flag);
        else if (f->cost_model != NULL)
            snprintf(name[i], sizeof name[i], "%s's %s cost", f->cost_model,
                     topo_sim_tier_name((topo_sim_tier)t));
        else
            snprintf(name[i], sizeof name[i], "the default %s cost",
                     topo_sim_tier_name((topo_sim_tier)t));
    }
    return topo_err_set(err, TOPO_EINVALID,
                        "%s %g is below %s %g: a coarser tier cannot cost less than a finer one",
                        name[0], m->cost[k], name[1], m->cost[k - 1]);
}

static int run_opts(topo_sim_run_opts *o, topo_gates *gates, const simulate_args *f,
                    const unsigned char *given, sim_inputs *in, progress *p,
                    topo_err *err)
{
    topo_sim_cost_model m;
    int rc;
    memset(o, 0, sizeof(*o));
    if ((rc = cost_model(&m, f, given, err)) < 0)
        return rc;
    in->cost = m;
    if (f->cost_sweep && f->apply_slowdown)
        return topo_err_set(err, TOPO_EINVALID,
                            "--cost-sweep: not with --apply-slowdown (the sweep scales the "
                            "unstretched runs' slowdown and makes its own stretched runs)");
    if ((rc = cli_parse_gates(gates, NULL, 0, in->pool, err)) < 0)
        return rc;
    if (f->profile != NULL && strcmp(f->profile, "best-fit") == 0) {
        gates->TASProfileMixed = 0;
        gates->TASProfileBestFit = 1;
    } else if (f->profile != NULL && strcmp(f->profile, "least-free-capacity") == 0) {
        gates->TASProfileMixed = 0;
        gates->TASProfileLeastFreeCapacity = 1;
    }
    for (size_t i = 0; i < f->gates.n; i++) {
        topo_gates one;
        /* Each --gate over the profile: parse alone, then copy the one gate. */
        if ((rc = cli_parse_gates(&one, &f->gates.v[i], 1, in->pool, err)) < 0)
            return rc;
        const char *eq = strchr(f->gates.v[i], '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - f->gates.v[i]), f->gates.v[i]);
        if ((rc = topo_gates_set(gates, name, strcmp(eq + 1, "true") == 0, err)) < 0)
            return rc;
    }
    o->seed = in->seed;
    o->gates = gates;
    o->relax_after = f->relax_after;
    o->pack_level = f->pack_level;
    for (int t = 0; t < TOPO_SIM_TIERS; t++)
        o->cost[t] = m.cost[t];
    o->comm_small = m.comm_small;
    o->comm_large = m.comm_large;
    o->apply_slowdown = f->apply_slowdown;
    o->frag_pod = (uint32_t)f->frag_pod;
    o->timeline_step = f->timeline_step;
    o->warmup = f->warmup;
    o->progress = on_progress;
    o->progress_payload = p;
    return 0;
}

/* ---- output ---- */

/* An output file named by a flag: opened before anything runs, so that a
 * path that cannot be written fails at once and names its flag; written
 * (files first, stdout last) once everything is computed; removed again if
 * the command fails before writing it. */
typedef struct out_file {
    const char *flag, *path;
    FILE *fp;
} out_file;

typedef struct sim_outs {
    out_file timeline, report, trace;
} sim_outs;

static int out_open(out_file *o, const char *flag, const char *path, topo_err *err)
{
    o->flag = flag;
    o->path = path;
    o->fp = NULL;
    if (path == NULL)
        return 0;
    o->fp = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (o->fp == NULL)
        return topo_err_set(err, TOPO_EIO, "%s: %s: %s", flag, path, strerror(errno));
    return 0;
}

/* Writes what a format put in b to o and closes it. */
static int out_write(out_file *o, topo_buf *b, topo_err *err)
{
    size_t len = 0;
    char *text = topo_buf_take(b, &len);
    if (text == NULL)
        return topo_err_nomem(err, o->path);
    int bad = fwrite(text, 1, len, o->fp) != len;
    bad |= o->fp == stdout ? fflush(o->fp) != 0 : fclose(o->fp) != 0;
    o->fp = NULL;
    free(text);
    return bad ? topo_err_set(err, TOPO_EIO, "%s: %s: write failed", o->flag, o->path) : 0;
}

/* After a failure: what was opened and not written is closed and removed. */
static void out_abandon(out_file *o)
{
    if (o->fp == NULL || o->fp == stdout)
        return;
    fclose(o->fp);
    remove(o->path);
    o->fp = NULL;
}

static int outs_open(sim_outs *o, const simulate_args *f, topo_err *err)
{
    int rc;
    memset(o, 0, sizeof(*o));
    if ((rc = out_open(&o->timeline, "--timeline", f->timeline, err)) < 0 ||
        (rc = out_open(&o->report, "--report", f->report, err)) < 0 ||
        (rc = out_open(&o->trace, "--trace-out", f->trace_out, err)) < 0)
        return rc;
    return 0;
}

static void outs_abandon(sim_outs *o)
{
    out_abandon(&o->timeline);
    out_abandon(&o->report);
    out_abandon(&o->trace);
}

/* Writes what fmt put in a buffer to stdout. */
static int write_stdout(topo_buf *b, topo_err *err)
{
    out_file o = {"stdout", "-", stdout};
    return out_write(&o, b, err);
}

static int outputs(const simulate_args *f, const sim_inputs *in, sim_outs *outs,
                   const topo_sim_result *const *res, const topo_sim_result *const *stretched,
                   const topo_sim_sweep *sweep, size_t n, topo_err *err)
{
    topo_sim_info info = {in->cluster_text, in->jobs_text, in->seed,
                          topo_sim_cluster_node_count(in->cluster),
                          topo_sim_cluster_capacity(in->cluster), stretched, sweep, &in->cost,
                          in->pack_level};
    topo_buf b = TOPO_BUF_INIT(0);
    char *json = NULL;
    int rc = 0;

    if (outs->timeline.fp != NULL) {
        topo_sim_format_timeline(&b, res, n);
        if ((rc = out_write(&outs->timeline, &b, err)) < 0)
            return rc;
    }
    if (outs->report.fp != NULL) {
        topo_sim_format_html(&b, &info, res, n);
        if ((rc = out_write(&outs->report, &b, err)) < 0)
            return rc;
    }
    if (f->output != NULL && strcmp(f->output, "json") == 0) {
        if ((rc = topo_sim_format_json(&json, &info, res, n, err)) < 0)
            return rc;
        topo_buf_puts(&b, json);
        topo_buf_putc(&b, '\n');
        free(json);
    } else {
        topo_buf_printf(&b, "cluster: %s (%zu nodes, %llu GPUs free); jobs: %s; seed %llu\n\n",
                        info.cluster, info.nodes, (unsigned long long)info.capacity, info.jobs,
                        (unsigned long long)info.seed);
        topo_sim_format_table(&b, res, n);
        topo_sim_format_stretched(&b, res, stretched, n);
        topo_sim_format_sweep(&b, sweep);
    }
    return write_stdout(&b, err);
}

static int trace_out(out_file *o, const topo_sim_trace *t, topo_err *err)
{
    topo_buf b = TOPO_BUF_INIT(0);
    if (o->fp == NULL)
        return 0;
    topo_sim_trace_write_csv(t, &b);
    return out_write(o, &b, err);
}

/* ---- several seeds ---- */

/* --seeds A-B (A to B) or N (1 to N): the first seed and how many. */
static int parse_seeds(uint64_t *first, size_t *n, const simulate_args *f, topo_err *err)
{
    unsigned long long a = 1, b;
    char *end;
    const char *text = f->seeds, *dash;
    *first = f->seed.value;
    *n = 1;
    if (text == NULL)
        return 0;
    if (f->seed.given)
        return topo_err_set(err, TOPO_EINVALID, "--seeds: not with --seed");
    dash = strchr(text, '-');
    errno = 0;
    if (dash != NULL) {
        a = strtoull(text, &end, 10);
        if (end != dash || text[0] < '0' || text[0] > '9')
            goto bad;
        text = dash + 1;
    }
    b = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] < '0' || text[0] > '9' || errno != 0)
        goto bad;
    if (dash == NULL && b == 0)
        return topo_err_set(err, TOPO_EINVALID, "--seeds: N must be at least 1, got 0");
    if (b < a)
        return topo_err_set(err, TOPO_EINVALID, "--seeds: %llu-%llu: the first is above the last",
                            a, b);
    if (b > SIM_SEED_MAX)
        return topo_err_set(err, TOPO_EINVALID, "--seeds: %llu is above %llu", b,
                            (unsigned long long)SIM_SEED_MAX);
    if (b - a >= TOPO_MAX_SIM_SEEDS)
        return topo_err_set(err, TOPO_EINVALID, "--seeds: %llu seeds, at most %u",
                            b - a == UINT64_MAX ? b - a : b - a + 1, TOPO_MAX_SIM_SEEDS);
    *first = a;
    *n = (size_t)(b - a + 1);
    return 0;
bad:
    return topo_err_set(err, TOPO_EINVALID, "--seeds: expected A-B or N, got \"%s\"", f->seeds);
}

/* What several seeds cannot do, refused before anything runs. */
static int check_seeds(const simulate_args *f, size_t nseeds, topo_err *err)
{
    if (nseeds > 1 && f->trace_out != NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "--trace-out: writes one seed's jobs, give --seed, not --seeds");
    if (nseeds > 1 && f->cost_sweep)
        return topo_err_set(err, TOPO_EINVALID,
                            "--cost-sweep: sweeps one seed's runs, give --seed, not --seeds");
    return 0;
}

/* --pack-level is mixed-pack's alone: given without it, a typo would pass
 * unseen. With mixed-pack, the level it packs into is resolved (and checked)
 * before anything runs, for -o json to record. */
static int pack_level(sim_inputs *in, const simulate_args *f, const topo_sim_policy *pol,
                      size_t n, topo_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (pol[i] == TOPO_SIM_MIXED_PACK)
            return topo_sim_cluster_pack_level(&in->pack_level, in->cluster, f->pack_level, err);
    if (f->pack_level == NULL)
        return 0;
    return topo_err_set(err, TOPO_EINVALID,
                        "--pack-level: only the mixed-pack policy packs (add it to --policies)");
}

/* --stretched asks for a second, stretched run; --apply-slowdown makes the
 * first run that one: given both, which did the user mean? */
static int check_stretched(const simulate_args *f, const unsigned char *given, topo_err *err)
{
    if (f->apply_slowdown && topo_opts_given(table, NOPTS, given, "--stretched"))
        return topo_err_set(err, TOPO_EINVALID,
                            "--stretched: not with --apply-slowdown, whose runs are the "
                            "stretched ones");
    return 0;
}

/* Seconds per timeline point for every seed: the first seed's default
 * (its arrivals' span / TOPO_SIM_TIMELINE_POINTS), so that point k is k
 * steps after each seed's first arrival. */
static double common_step(const simulate_args *f, const topo_sim_trace *t)
{
    size_t n = topo_sim_trace_count(t);
    double span = n > 0 ? topo_sim_trace_job(t, n - 1)->arrive - topo_sim_trace_job(t, 0)->arrive
                        : 0;
    if (f->timeline_step > 0)
        return f->timeline_step;
    return span > 0 ? span / TOPO_SIM_TIMELINE_POINTS : 1;
}

static int summary_outputs(const simulate_args *f, const sim_inputs *in, sim_outs *outs,
                           const topo_sim_summary *s, uint64_t first, size_t nseeds,
                           topo_err *err)
{
    topo_sim_info info = {in->cluster_text, in->jobs_text, first,
                          topo_sim_cluster_node_count(in->cluster),
                          topo_sim_cluster_capacity(in->cluster), NULL, NULL, &in->cost,
                          in->pack_level};
    topo_buf b = TOPO_BUF_INIT(0);
    char *json = NULL;
    int rc;

    if (outs->timeline.fp != NULL) {
        topo_sim_format_summary_timeline(&b, s);
        if ((rc = out_write(&outs->timeline, &b, err)) < 0)
            return rc;
    }
    if (outs->report.fp != NULL) {
        if ((rc = topo_sim_format_summary_html(&b, &info, s)) < 0) {
            topo_buf_dispose(&b);
            return topo_err_set(err, rc, "--report: could not write the report");
        }
        if ((rc = out_write(&outs->report, &b, err)) < 0)
            return rc;
    }
    if (f->output != NULL && strcmp(f->output, "json") == 0) {
        if ((rc = topo_sim_format_summary_json(&json, &info, s, err)) < 0)
            return rc;
        topo_buf_puts(&b, json);
        topo_buf_putc(&b, '\n');
        free(json);
    } else {
        topo_buf_printf(&b,
                        "cluster: %s (%zu nodes, %llu GPUs free); jobs: %s; seeds %llu-%llu "
                        "(mean ± half-width of the 95 %% interval)\n\n",
                        info.cluster, info.nodes, (unsigned long long)info.capacity, info.jobs,
                        (unsigned long long)first, (unsigned long long)(first + nseeds - 1));
        topo_sim_format_summary_table(&b, s);
    }
    return write_stdout(&b, err);
}

/* Every policy once per seed into a summary; generated jobs are generated
 * anew per seed, a --trace file's are the same for every seed. */
static int run_seeds(const simulate_args *f, const unsigned char *given, sim_inputs *in,
                     sim_outs *outs, const topo_sim_policy *pol, size_t npol,
                     topo_sim_run_opts *ro, progress *prog, uint64_t first, size_t nseeds,
                     topo_err *err)
{
    topo_sim_summary *s = NULL;
    topo_sim_result *res[TOPO_SIM_POLICIES] = {NULL};
    topo_sim_result *stretched[TOPO_SIM_POLICIES] = {NULL};
    /* The stretched twins, as with one seed (cli_cmd_simulate). */
    int twin = f->stretched && !f->apply_slowdown;
    topo_sim_run_opts so;
    int rc;

    if ((rc = topo_sim_summary_create(&s, err)) < 0)
        return rc;
    for (size_t k = 0; k < nseeds; k++) {
        in->seed = ro->seed = first + k;
        if (k > 0 && f->trace == NULL) {
            topo_sim_trace_free(in->trace);
            in->trace = NULL;
            if ((rc = load_jobs(in, f, given, err)) < 0)
                goto cleanup;
        }
        if (k == 0)
            ro->timeline_step = common_step(f, in->trace);
        so = *ro;
        so.apply_slowdown = 1;
        for (size_t i = 0; i < npol; i++) {
            prog->start_ns = prog->last_ns = topo_clock_ns();
            if ((rc = topo_sim_run(&res[i], in->cluster, in->trace, pol[i], ro, err)) < 0)
                goto cleanup;
        }
        for (size_t i = 0; twin && i < npol; i++) {
            prog->start_ns = prog->last_ns = topo_clock_ns();
            if ((rc = topo_sim_run(&stretched[i], in->cluster, in->trace, pol[i], &so, err)) < 0)
                goto cleanup;
        }
        if ((rc = topo_sim_summary_add(s, in->seed, (const topo_sim_result *const *)res,
                                       twin ? (const topo_sim_result *const *)stretched : NULL,
                                       npol, err)) < 0)
            goto cleanup;
        for (size_t i = 0; i < npol; i++) {
            topo_sim_result_free(res[i]);
            topo_sim_result_free(stretched[i]);
            res[i] = stretched[i] = NULL;
        }
    }
    rc = summary_outputs(f, in, outs, s, first, nseeds, err);

cleanup:
    for (size_t i = 0; i < npol; i++) {
        topo_sim_result_free(res[i]);
        topo_sim_result_free(stretched[i]);
    }
    topo_sim_summary_free(s);
    return rc;
}

int cli_cmd_simulate(int argc, char **argv)
{
    simulate_args f;
    unsigned char given[NOPTS];
    sim_inputs in;
    topo_err err = TOPO_ERR_INIT;
    topo_sim_policy pol[TOPO_SIM_POLICIES];
    topo_sim_result *res[TOPO_SIM_POLICIES] = {NULL};
    topo_sim_result *stretched[TOPO_SIM_POLICIES] = {NULL};
    topo_sim_sweep *sweep = NULL;
    sim_outs outs;
    topo_sim_run_opts ro;
    topo_gates gates;
    progress prog;
    size_t npol = 0, nseeds = 1;
    uint64_t first_seed;
    int rc;

    memset(&f, 0, sizeof(f));
    memset(&in, 0, sizeof(in));
    memset(&outs, 0, sizeof(outs));
    if ((rc = cli_parse_given(&cli_simulate, argc, argv, &f, given)) >= 0)
        goto cleanup;
    rc = TOPO_CLI_EXIT_BADINPUT;
    if (parse_seeds(&first_seed, &nseeds, &f, &err) < 0 || check_seeds(&f, nseeds, &err) < 0 ||
        check_stretched(&f, given, &err) < 0)
        goto fail;
    in.seed = first_seed;
    memset(&prog, 0, sizeof(prog));
    prog.quiet = f.quiet;
    prog.start_ns = prog.last_ns = topo_clock_ns();
    if ((in.pool = topo_pool_create()) == NULL) {
        topo_err_nomem(&err, NULL);
        goto fail;
    }
    if (parse_policies(pol, &npol, f.policies, in.pool, &err) < 0 ||
        load_cluster(&in, &f, &err) < 0 || pack_level(&in, &f, pol, npol, &err) < 0 || load_jobs(&in, &f, given, &err) < 0 ||
        outs_open(&outs, &f, &err) < 0 || trace_out(&outs.trace, in.trace, &err) < 0 ||
        run_opts(&ro, &gates, &f, given, &in, &prog, &err) < 0)
        goto fail;
    if (nseeds > 1) {
        if (run_seeds(&f, given, &in, &outs, pol, npol, &ro, &prog, first_seed, nseeds, &err) <
            0)
            goto fail;
        rc = TOPO_CLI_EXIT_OK;
        goto cleanup;
    }
    for (size_t i = 0; i < npol; i++) {
        prog.start_ns = prog.last_ns = topo_clock_ns();
        if (topo_sim_run(&res[i], in.cluster, in.trace, pol[i], &ro, &err) < 0)
            goto fail;
    }
    /* The same policies again with the slowdown applied, unless the runs
     * above already had it. */
    int twin = f.stretched && !f.apply_slowdown;
    if (twin) {
        topo_sim_run_opts so = ro;
        so.apply_slowdown = 1;
        for (size_t i = 0; i < npol; i++) {
            prog.start_ns = prog.last_ns = topo_clock_ns();
            if (topo_sim_run(&stretched[i], in.cluster, in.trace, pol[i], &so, &err) < 0)
                goto fail;
        }
    }
    if (f.cost_sweep) {
        if ((sweep = malloc(sizeof(*sweep))) == NULL) {
            topo_err_nomem(&err, "cost sweep");
            goto fail;
        }
        if (topo_sim_cost_sweep(sweep, in.cluster, in.trace, (const topo_sim_result *const *)res,
                                npol, &ro, &err) < 0)
            goto fail;
    }
    if (outputs(&f, &in, &outs, (const topo_sim_result *const *)res,
                twin ? (const topo_sim_result *const *)stretched : NULL, sweep, npol, &err) < 0)
        goto fail;
    rc = TOPO_CLI_EXIT_OK;
    goto cleanup;

fail:
    rc = cli_fail(CMD, &err);
cleanup:
    outs_abandon(&outs);
    for (size_t i = 0; i < TOPO_SIM_POLICIES; i++) {
        topo_sim_result_free(res[i]);
        topo_sim_result_free(stretched[i]);
    }
    free(sweep);
    topo_sim_trace_free(in.trace);
    topo_sim_cluster_free(in.cluster);
    topo_snapshot_free(in.snap);
    topo_inventory_free(in.inv);
    topo_pool_free(in.pool);
    topo_opts_free(table, NOPTS, &f);
    return rc;
}
