/* Conformance cases: Kueue's TAS test table as data (fixtures/conformance,
 * schema in fixtures/conformance/README.md). Loading turns every case into
 * the engine's input structs plus a built topo_snapshot; running places the
 * case's PodSets with topo_engine_find and compares with the expectation.
 *
 * Everything except the snapshots lives in the caller's pool; the snapshots
 * are freed by topo_cases_release. */
#ifndef TOPO_CASES_H
#define TOPO_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/model.h"
#include "topo/pool.h"

/* One existing_usage entry, as written in the case. */
typedef struct topo_case_usage {
    int tas;                           /* admitted TAS usage vs one non-TAS pod */
    const char *node;                  /* NULL: unbound pod (ignored) */
    const char *pod;                   /* non-TAS: pod name, may be NULL */
    const char *phase;                 /* non-TAS: NULL when absent */
    const char *const *domain_values;  /* TAS: leaf domain values */
    size_t ndomain_values;
    int32_t count;                     /* TAS: pods; non-TAS: 1 */
    const char *source;                /* TAS: "same-flavor", "other-flavor-same-topology" */
    const topo_resource *requests;     /* per pod, Kueue units */
    size_t nrequests;
    int charged;                       /* 1 when it was charged to the snapshot */
} topo_case_usage;

/* What one PodSet must produce. */
typedef struct topo_case_expect {
    const char *podset;
    const char *error;           /* error_contains (whole message), NULL when placed */
    topo_assignment assignment;  /* valid when error is NULL */
} topo_case_expect;

typedef struct topo_case {
    const char *id;
    const char *source;               /* "<file>:<test>/<case name>", may be NULL */
    topo_snapshot_opts topology;      /* name, levels, flavor node labels */
    const topo_node_spec *nodes;
    size_t nnodes;
    const topo_case_usage *usage;
    size_t nusage;
    topo_gates gates;
    const topo_podset_spec *podsets;
    size_t npodsets;
    const topo_workload_spec *workload; /* NULL when the case has none */
    const topo_case_expect *expect;
    size_t nexpect;
    topo_snapshot *snapshot;          /* NULL when setup_failure is set */
    /* Why the case cannot run (unknown feature gate, snapshot not built,
     * usage rejected): the case is a FAIL with this reason. NULL when none. */
    const char *setup_failure;
    int setup_code;                   /* the topo code behind setup_failure */
} topo_case;

typedef struct topo_case_file {
    const char *source; /* the path or name given when loading */
    topo_case *cases;
    size_t ncases;
} topo_case_file;

/* Reads and validates a case file (a JSON array) and builds every case's
 * snapshot. A malformed file is TOPO_EINVALID with a message naming the
 * source, the case (index and id) and the field; TOPO_ENOTFOUND/TOPO_EIO/
 * TOPO_ELIMIT for the file itself (TOPO_MAX_CASES_FILE); TOPO_ENOMEM.
 * Problems that concern only the engine side of one case (an unknown gate,
 * a snapshot the model rejects) do not fail the load: they set that case's
 * setup_failure. On error *out is NULL and nothing needs releasing. */
int topo_cases_load_file(topo_case_file **out, const char *path, topo_pool *pool,
                         topo_err *err) TOPO_MUST_CHECK;

/* The same over JSON text in memory; source names it in messages and must
 * outlive the result. */
int topo_cases_parse(topo_case_file **out, const char *text, size_t len, const char *source,
                     topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* Frees the cases' snapshots; the rest goes with the pool. NULL-safe. */
void topo_cases_release(topo_case_file *file);

/* Finds a case by id, or NULL. */
const topo_case *topo_cases_find(const topo_case_file *file, const char *id);

/* The verdict on one case. */
typedef struct topo_case_outcome {
    int passed;
    int unsupported;                   /* the engine lacks a feature the case needs */
    const char *reason;                /* what differed (pool), NULL when passed */
    const topo_podset_result *results; /* the engine's answers, NULL when it did not run */
    size_t nresults;
} topo_case_outcome;

/* Runs one case: topo_engine_find over its PodSets, then compares every
 * PodSet with `expect`: levels and ordered domains with counts, or the whole
 * failure message. A PodSet that `expect` does not name must have been placed.
 * Returns 0 when a verdict was reached (including FAIL), TOPO_ENOMEM
 * otherwise. Results and reason are allocated from pool. */
int topo_case_run(topo_case_outcome *out, const topo_case *c, topo_pool *pool,
                  topo_err *err) TOPO_MUST_CHECK;

/* Compact text of an assignment: domains as "v1/v2/...:count" separated by
 * ", ", prefixed by "[level,...] " when with_levels. From pool; NULL on OOM. */
const char *topo_case_format_assignment(const topo_assignment *a, int with_levels,
                                        topo_pool *pool);

#endif
