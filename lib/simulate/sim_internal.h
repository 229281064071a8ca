/* What the simulator's files share (topo/simulate.h is the public side):
 * the cluster's node table, the trace's storage, and one run's state, which
 * the event loop (loop.c) drives, the policies (policy_*.c) change through
 * sim_take/sim_give, and the metrics (metrics.c) watch. */
#ifndef TOPO_SIM_INTERNAL_H
#define TOPO_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/simulate.h"
#include "topo/strmap.h"

/* ---- cluster.c ---- */

/* The tiers' names, finest first, NULL-terminated (a list of keys): the
 * --tier values, the cost model's keys and its JSON. */
extern const char *const sim_tier_names[TOPO_SIM_TIERS + 1];

struct topo_sim_cluster {
    topo_snapshot *snap;
    const char *resource;
    size_t nlevels;                      /* hostname last */
    const char *levels[TOPO_MAX_LEVELS]; /* borrowed from the snapshot */
    topo_sim_tier tier[TOPO_MAX_LEVELS];
    size_t nnodes;
    const char **host; /* hostname per node, in the snapshot's depth-first order */
    int32_t *cap;      /* capacity of the resource per node */
    int32_t *free0;    /* free at the start */
    int32_t *dom;      /* nnodes x nlevels: a domain id per level; level nlevels-1 is the node */
    const char **dname[TOPO_MAX_LEVELS]; /* per level, per domain id: its label value */
    size_t ndom[TOPO_MAX_LEVELS];
    topo_strmap *by_host;
    uint64_t capacity;
    uint32_t max_node;
    topo_pool *pool;
};

static inline int32_t sim_dom(const topo_sim_cluster *c, size_t node, size_t level)
{
    return c->dom[node * c->nlevels + level];
}

/* The finest level (0..nlevels-2) one of whose domains could take `pods`
 * pods of `gpus` given `free`; -1 when only the whole cluster can (a level
 * of a single domain counts as the whole cluster), -2 when not even that.
 * Nodes are in depth-first order, so a domain's nodes are contiguous and
 * one pass suffices. */
int sim_tightest(const topo_sim_cluster *c, const int32_t *free, int32_t pods, int32_t gpus);

/* ---- trace.c, trace_csv.c, generate.c ---- */

struct topo_sim_trace {
    topo_pool *pool;
    topo_sim_job *jobs;
    size_t njobs, capjobs;
    topo_sim_request *requests;
    size_t nrequests, caprequests;
    topo_strmap *by_text; /* request text -> index */
};

void sim_trace_reset(topo_sim_trace *t);

/* trace_lines.c: the lines of a trace file as both readers take them. */
typedef struct sim_lines {
    const char *source;
    size_t line; /* of the line last returned, from 1 */
    const char *p, *end;
    char *buf;
    topo_err *err;
} sim_lines;

/* TOPO_ELIMIT when text is larger than TOPO_MAX_SIM_TRACE_FILE. Closed with
 * sim_lines_close, also after an error. */
int sim_lines_open(sim_lines *L, const char *text, size_t len, const char *source,
                   topo_err *err);
void sim_lines_close(sim_lines *L);
/* The next line (without its line break, a CR before it or the first line's
 * UTF-8 byte order mark; valid until the next call) in *out: 1, 0 at the
 * end, < 0 for a line too long or holding a NUL byte. */
int sim_lines_next(sim_lines *L, char **out);
/* "SOURCE:LINE: message" in L->err, with the position; returns code. */
int sim_lines_error(const sim_lines *L, int code, const char *fmt, ...) TOPO_PRINTF(3, 4);
/* s without leading and trailing blanks and tabs (in place). */
char *sim_trim(char *s);
/* A job id is printable ASCII without spaces, commas or quotes, at most
 * TOPO_MAX_SIM_JOB_ID bytes and not already in ids; field names it in the
 * message ("field 2 (job_id)"). */
int sim_check_job_id(const sim_lines *L, const char *field, const char *id,
                     const topo_strmap *ids);
/* The index of the request with that canonical text, adding *r (copied)
 * when new. */
int sim_trace_intern(topo_sim_trace *t, const topo_sim_request *r, int32_t *out, topo_err *err);
int sim_trace_push(topo_sim_trace *t, const topo_sim_job *j, topo_err *err);
/* Stable sort by arrival. */
int sim_trace_sort(topo_sim_trace *t, topo_err *err);

/* ---- a run ---- */

enum { SIM_PENDING = 0, SIM_QUEUED, SIM_RUNNING, SIM_DONE, SIM_UNPLACEABLE };

/* Jobs that are alike for placement: same pods, GPUs and effective request.
 * Whatever failed since the last release fails again (placement only gets
 * harder while nothing is freed), so a shape is tried once per release. */
typedef struct sim_shape {
    int32_t pods, gpus;
    topo_podset_spec spec; /* topo: the effective request */
    int32_t relaxed;       /* the shape a held job moves to, -1 */
    uint64_t failed_epoch; /* failed since the release numbered so */
    int32_t tight_empty;   /* sim_tightest on the empty cluster */
    uint8_t engine;        /* with a topology request: the engine places it (topo, mixed*) */
} sim_shape;

/* Whether the policy has the engine place the jobs with a topology
 * request (topo, mixed, mixed-pack). */
static inline int sim_engine_places_requests(topo_sim_policy p)
{
    return p == TOPO_SIM_TOPO || p == TOPO_SIM_MIXED || p == TOPO_SIM_MIXED_PACK;
}

/* One placed job's share of a node. */
typedef topo_sim_slot sim_slot;

typedef struct sim_jobstate {
    double start, end;
    int32_t shape;
    uint8_t status;
    uint8_t held;
    int32_t nslots;
    sim_slot *slots; /* once started */
} sim_jobstate;

/* What the job-level metrics need of each job (topo_sim_outcome without
 * the spans, which are kept apart for the cluster's levels only). */
typedef struct sim_outcome {
    double arrive, start, end, slowdown, work;
    uint64_t gpus;
    uint8_t multi_node;
    int8_t tight, tight_now;
} sim_outcome;

/* The jobs of a run as the job-level metrics see them; the result keeps
 * them. */
typedef struct sim_jobs {
    sim_outcome *out; /* per job, by index */
    uint32_t *span;   /* per job, nlevels: domains spanned per level */
    uint32_t *order;  /* the placed jobs in the order they started */
    size_t njobs, nplaced, nlevels;
} sim_jobs;

/* The metrics' accumulators (metrics.c). */
typedef struct sim_acc {
    /* Over the window: integrals of GPUs used, free, free on partly used
     * nodes, free no frag_pod-GPU pod can use, jobs waiting. */
    double used_dt, free_dt, frag_dt, fragpod_dt, queue_dt;
    sim_jobs jobs;
    /* The timeline. */
    topo_sim_sample *tl;
    size_t ntl, captl;
    double tl_used, tl_free, tl_frag, tl_fragpod, tl_queue; /* integrals in the open bin */
} sim_acc;

typedef struct sim_run sim_run;

/* A policy: place a job of shape s (fill r->slots/r->nslots and take the
 * GPUs with sim_take) or leave everything as it was. */
typedef struct sim_policy_ops {
    int (*init)(sim_run *r, topo_err *err);
    /* 1 placed, 0 does not fit, < 0 error. */
    int (*place)(sim_run *r, const sim_shape *s, topo_err *err);
    /* Gives back what place took (sim_give for every slot). */
    int (*release)(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus, topo_err *err);
    void (*dispose)(sim_run *r);
} sim_policy_ops;

extern const sim_policy_ops sim_policy_topo;
extern const sim_policy_ops sim_policy_baseline;
extern const sim_policy_ops sim_policy_slurm;
/* mixed and mixed-pack (policy_mixed.c): topo's ops for the jobs with a
 * request, the baseline's kube-default for the others, every placement
 * charged to the snapshot. */
extern const sim_policy_ops sim_policy_mixed;

/* policy_topo.c: charges (sign 1) or uncharges (-1) the slots to the
 * snapshot as admitted TAS usage; on error the snapshot is as it was. */
int sim_topo_charge(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus, int sign,
                    topo_err *err);

/* ---- pack.c: the packing rule over the run's free GPUs ---- */

typedef struct sim_pack sim_pack;

/* The rule at level (NULL: the level above hostname); TOPO_EINVALID when
 * the cluster has no such level below the top or it is the hostname. */
int sim_pack_create(sim_pack **out, const sim_run *r, const char *level, topo_err *err);
void sim_pack_free(sim_pack *p);
/* The level's index and the domain the rule prefers for one pod of gpus
 * (-1: none, the pod is left alone). */
size_t sim_pack_level(const sim_pack *p);
int sim_pack_prefer(sim_pack *p, const sim_run *r, int32_t gpus, int32_t *out_dom,
                    topo_err *err);

struct sim_run {
    topo_sim_cluster *c;
    const topo_sim_trace *t;
    topo_sim_policy policy;
    topo_sim_run_opts o;
    const sim_policy_ops *ops;
    uint64_t rng;

    int32_t *free;
    uint64_t free_total;
    int64_t *fit; /* fit[g]: pods of g GPUs the nodes could take, g = 1..max_node */
    uint64_t frag_free, fragpod_free; /* current values of the fragmentation sums */

    sim_shape *shapes;
    size_t nshapes, capshapes;
    topo_strmap *shape_by_key;
    topo_pool *pool; /* shape keys and specs */

    sim_jobstate *js;
    size_t running, queued;
    uint64_t epoch;
    uint64_t attempts;

    sim_slot *slots; /* the placement being made */
    int32_t nslots;
    size_t capslots;
    int32_t *slot_of; /* per node: its index in slots, or -1 */

    double now;
    double t0;           /* the first arrival: the timeline's origin */
    double w0, w1, step; /* window (t0 + warmup to the last arrival) and timeline step */
    sim_acc acc;

    void *policy_state;
};

/* Changes a node's free GPUs by -amount (take) or +amount (give), keeping
 * the totals, the fit counters and the fragmentation sums current. */
void sim_take(sim_run *r, int32_t node, int32_t amount);
void sim_give(sim_run *r, int32_t node, int32_t amount);
/* Adds count pods on node to the placement being made (merged per node). */
int sim_slot_add(sim_run *r, int32_t node, int32_t count, topo_err *err);
/* Undoes the placement being made (sim_give for each slot) and empties it. */
void sim_slots_undo(sim_run *r, int32_t gpus);
/* Hands the placement being made to job j (a copy) and empties it. */
int sim_slots_keep(sim_run *r, size_t j, topo_err *err);
/* Whether the free GPUs could take `pods` pods of `gpus` at all, ignoring
 * topology: a necessary condition every policy shares, in O(1). */
int sim_fits(const sim_run *r, int32_t pods, int32_t gpus);

/* The timeline stops after this many points (a long job far beyond the
 * last arrival would otherwise make it grow without bound); a step that
 * would need more over the arrivals' span is refused (run.c). */
#define SIM_TIMELINE_MAX (10 * TOPO_SIM_TIMELINE_POINTS)

/* ---- loop.c ---- */

/* Arrivals, completions and relaxations in time order until every job has
 * finished or is known not to fit. */
int sim_loop(sim_run *r, topo_err *err);

/* ---- metrics.c ---- */

int sim_acc_init(sim_run *r, topo_err *err);
void sim_acc_dispose(sim_acc *a);
/* Time passes from r->now to t in the current state. */
int sim_acc_advance(sim_run *r, double t, topo_err *err);
/* Job j of shape s starts with the slots of r (before sim_take is undone:
 * the state is after the placement); tight_now is sim_tightest before it. */
void sim_acc_start(sim_run *r, size_t j, const sim_shape *s, int32_t tight_now,
                   double *out_slowdown);
/* The metrics at the end (the result's figures); the jobs' outcomes stay
 * in r->acc.jobs for the result to take. */
int sim_acc_finish(sim_run *r, topo_sim_metrics *m, topo_err *err);
void sim_jobs_dispose(sim_jobs *j);
/* The job-level figures of m (topo_sim_metrics_over's list) over the jobs
 * mask selects; the rest of m is left as it is. */
int sim_job_metrics(topo_sim_metrics *m, const sim_jobs *jobs, const unsigned char *mask,
                    topo_err *err);

/* ---- run.c ---- */

const sim_jobs *sim_result_jobs(const topo_sim_result *r);

#endif
