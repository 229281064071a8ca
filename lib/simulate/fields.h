/* The metrics of a policy as one table (fields.c): the keys of its -o json
 * object and of its "ci95" object, the rows of the table and the summary
 * over seeds all come from it, so they stay one list. A metric is read from
 * topo_sim_metrics into a vector of doubles, one slot per field, the
 * domains spanned per level at the end. */
#ifndef TOPO_SIM_FIELDS_H
#define TOPO_SIM_FIELDS_H

#include <stddef.h>

#include "topo/json.h"
#include "topo/simulate.h"

/* In -o json order. */
typedef enum sim_field_id {
    SIM_F_JOBS,
    SIM_F_PLACED,
    SIM_F_UNPLACEABLE,
    SIM_F_MULTI_NODE,
    SIM_F_TIGHT,
    SIM_F_TIGHT_NOW,
    SIM_F_SPANNED, /* one value per level, at SIM_F_COUNT + level */
    SIM_F_FRAG,
    SIM_F_FRAG_POD,
    SIM_F_UTILISATION,
    SIM_F_GOODPUT,
    SIM_F_QUEUE_LENGTH,
    SIM_F_WAIT_P50,
    SIM_F_WAIT_P99,
    SIM_F_WAIT_MEAN,
    SIM_F_CLASS0, /* per class: jobs, p50, p99, mean (SIM_F_CLASS(k, part)) */
    SIM_F_SLOW_MEAN = SIM_F_CLASS0 + 4 * TOPO_SIM_CLASSES,
    SIM_F_SLOW_P99,
    SIM_F_JCT_MEAN,
    SIM_F_JCT_P99,
    SIM_F_WINDOW,
    SIM_F_MAKESPAN,
    SIM_F_ATTEMPTS,
    SIM_F_COUNT
} sim_field_id;

typedef enum sim_wait_part {
    SIM_WAIT_JOBS,
    SIM_WAIT_P50,
    SIM_WAIT_P99,
    SIM_WAIT_MEAN
} sim_wait_part;
#define SIM_F_CLASS(k, part) (SIM_F_CLASS0 + 4 * (k) + (part))

/* The metrics vectors a policy has: its run's own, the same-jobs view's
 * (topo_sim_common) and its stretched run's (topo_sim_info.stretched). */
typedef enum sim_view { SIM_VIEW_OWN, SIM_VIEW_COMMON, SIM_VIEW_STRETCHED, SIM_VIEWS } sim_view;

/* Slots of a metrics vector. */
#define SIM_NVALUES (SIM_F_COUNT + TOPO_MAX_LEVELS)

typedef enum sim_field_kind {
    SIM_FIELD_COUNT, /* a size_t: an integer in -o json with one seed */
    SIM_FIELD_U64,   /* a uint64_t, the same */
    SIM_FIELD_REAL,  /* a double, rounded to six decimals */
} sim_field_kind;

typedef struct sim_field {
    const char *group; /* the object it sits in: NULL (the policy's own) or a key */
    const char *sub;   /* an object inside group (a queueing class), or NULL */
    const char *key;   /* NULL for the domains spanned: the level names */
    sim_field_kind kind;
    size_t offset; /* in topo_sim_metrics */
    size_t minus;  /* a field subtracted from it (window_start), or SIM_FIELD_NONE */
    /* A figure of the run's window (it integrates over time, or is the
     * window itself), not of its jobs: left out of the same-jobs view
     * (topo_sim_common), whose jobs it would not be over. */
    int window;
} sim_field;

#define SIM_FIELD_NONE ((size_t)-1)

extern const sim_field sim_fields[SIM_F_COUNT];

/* The slot of field f (level l for SIM_F_SPANNED). */
static inline size_t sim_slot(sim_field_id f, size_t level)
{
    return f == SIM_F_SPANNED ? (size_t)SIM_F_COUNT + level : (size_t)f;
}

/* A fraction or a duration as -o json writes every one: rounded to six
 * decimals (the same results give the same bytes). */
json_t *sim_json_num(double v);

/* Reads every field of m into v[SIM_NVALUES] (unused slots 0). */
void sim_field_values(double *v, const topo_sim_metrics *m);

/* Finds a field by its -o json name, nested keys joined by '.': the slot,
 * or -1. levels name the domains spanned. */
int sim_field_find(const char *name, const char *const *levels, size_t nlevels);

/* A policy's object: each field's value from v, or with lo and hi given
 * [lo, hi] per field (its "ci95" object); with jobs_only the job-level
 * fields only (the same-jobs view). Counts are integers when exact (one
 * seed), else rounded reals like the rest. NULL when out of memory. */
json_t *sim_fields_json(const double *v, const double *lo, const double *hi,
                        const char *const *levels, size_t nlevels, int exact, int jobs_only);
/* The same for the n ungrouped fields ids[] in that order (the stretched
 * run's object). */
json_t *sim_fields_json_list(const double *v, const double *lo, const double *hi,
                             const int *ids, size_t n, int exact);

#endif
