/* Public GPU cluster traces read by their own CSV columns (topo/simulate.h,
 * docs/simulate.md "Trace files"): one table row per format says which
 * columns hold a job's id, GPUs, times and run time; one reader maps every
 * format's rows to jobs. Outside input: columns are found by name, every
 * value is checked, every message names the line and the column, the file,
 * each line and the job count have limits. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/str.h"

#define MAX_COLUMNS 64

enum { COL_ID, COL_ID2, COL_GPUS, COL_PODS, COL_SUBMIT, COL_START, COL_END, COL_DURATION, NCOLS };

typedef struct format_def {
    const char *name;
    /* Column names by role, NULL where the format has none: the id (PAI's
     * is job_name/task_name), GPUs, pods (PAI's instances), submission,
     * start, end and run time. */
    const char *col[NCOLS];
    int epoch;        /* times are seconds (PAI), else "YYYY-MM-DD HH:MM:SS[+HH:MM]" */
    int gpu_percent;  /* GPUs per instance in percent of a GPU (PAI's plan_gpu) */
    /* The column order of a file without a header (PAI ships its tables
     * headerless with the names in pai_task_table.header), NULL: a header
     * is required. */
    const char *const *headerless;
    size_t nheaderless;
} format_def;

/* cluster-trace-gpu-v2020/data/pai_task_table.header */
static const char *const pai_task_columns[] = {
    "job_name", "task_name", "inst_num", "status", "start_time",
    "end_time", "plan_cpu", "plan_mem", "plan_gpu", "gpu_type",
};

static const format_def formats[TOPO_SIM_TRACE_FORMATS] = {
    [TOPO_SIM_TRACE_TOPO] = {"topo", {NULL}, 0, 0, NULL, 0},
    /* S-Lab-System-Group/HeliosData data/<cluster>/cluster_log.csv */
    [TOPO_SIM_TRACE_HELIOS] = {"helios",
                               {"job_id", NULL, "gpu_num", NULL, "submit_time", "start_time",
                                "end_time", "duration"},
                               0, 0, NULL, 0},
    /* S-Lab-System-Group/HeliosArtifact "analysis/1_compare with Philly
     * trace/philly_trace.csv": the Philly job log in Helios's columns. */
    [TOPO_SIM_TRACE_PHILLY] = {"philly",
                               {"jobname", NULL, "gpu_num", NULL, "submit_time", "start_time",
                                "end_time", "duration"},
                               0, 0, NULL, 0},
    /* InternLM/AcmeTrace data/job_trace/trace_seren.csv, trace_kalos.csv */
    [TOPO_SIM_TRACE_ACME] = {"acme",
                             {"job_id", NULL, "gpu_num", NULL, "submit_time", "start_time",
                              "end_time", "duration"},
                             0, 0, NULL, 0},
    /* alibaba/clusterdata cluster-trace-gpu-v2020 pai_task_table.csv: no
     * submission time in it, a task arrives when it starts. */
    [TOPO_SIM_TRACE_PAI] = {"pai",
                            {"job_name", "task_name", "plan_gpu", "inst_num", NULL, "start_time",
                             "end_time", NULL},
                            1, 1, pai_task_columns,
                            sizeof pai_task_columns / sizeof pai_task_columns[0]},
};

static const char *const skip_names[TOPO_SIM_TRACE_SKIPS] = {
    [TOPO_SIM_SKIP_NO_GPU] = "no-gpu",
    [TOPO_SIM_SKIP_NOT_STARTED] = "not-started",
    [TOPO_SIM_SKIP_NO_END] = "no-end",
    [TOPO_SIM_SKIP_ZERO_RUN] = "zero-run",
};

const char *topo_sim_trace_format_name(topo_sim_trace_format f)
{
    return (unsigned)f < TOPO_SIM_TRACE_FORMATS ? formats[f].name : NULL;
}

int topo_sim_trace_format_parse(const char *name)
{
    for (int i = 0; name != NULL && i < TOPO_SIM_TRACE_FORMATS; i++)
        if (strcmp(name, formats[i].name) == 0)
            return i;
    return -1;
}

const char *topo_sim_trace_skip_name(topo_sim_trace_skip s)
{
    return (unsigned)s < TOPO_SIM_TRACE_SKIPS ? skip_names[s] : NULL;
}

typedef struct pub_ctx {
    topo_sim_trace *t;
    const format_def *f;
    uint32_t node; /* GPUs per node: larger jobs become pods of this many */
    sim_lines L;
    int index[NCOLS]; /* the column of each role, -1: none */
    size_t ncolumns;
    topo_strmap *ids; /* job id -> line */
    topo_sim_trace_stats *stats;
} pub_ctx;

#define COLUMN_ERROR(x, role, fmt, ...)                                                      \
    sim_lines_error(&(x)->L, TOPO_EINVALID, "%s: " fmt, (x)->f->col[(role)], __VA_ARGS__)

/* RFC 4180 fields of one line, in place: quoted fields may hold commas and
 * doubled quotes (pandas writes them so), not line breaks. */
static int split(const pub_ctx *x, char *line, char **f, size_t *nf)
{
    char *r = line;
    *nf = 0;
    for (;;) {
        if (*nf == MAX_COLUMNS)
            return sim_lines_error(&x->L, TOPO_ELIMIT, "more than %d columns", MAX_COLUMNS);
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r == '"') {
            char *w = ++r;
            f[(*nf)++] = w;
            for (;; r++) {
                if (*r == '\0')
                    return sim_lines_error(&x->L, TOPO_EINVALID, "column %zu: the quote is not closed",
                                      *nf);
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            *w = '\0';
            r++;
            while (*r == ' ' || *r == '\t')
                r++;
            if (*r != ',' && *r != '\0')
                return sim_lines_error(&x->L, TOPO_EINVALID, "column %zu: text after the closing quote",
                                  *nf);
        } else {
            f[(*nf)++] = r;
            r += strcspn(r, ",\"");
            if (*r == '"')
                return sim_lines_error(&x->L, TOPO_EINVALID, "column %zu: a quote inside a field", *nf);
        }
        if (*r == '\0')
            break;
        *r++ = '\0';
    }
    for (size_t i = 0; i < *nf; i++)
        f[i] = sim_trim(f[i]);
    return 0;
}

/* The names the format reads, for messages. */
static void needed(const format_def *fd, char *out, size_t size)
{
    out[0] = '\0';
    for (int r = 0; r < NCOLS; r++)
        if (fd->col[r] != NULL)
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? ", " : "",
                     fd->col[r]);
}

/* Finds each role's column among the names; 0, or an error naming the
 * first column missing. */
static int map_columns(pub_ctx *x, char *const *names, size_t n)
{
    x->ncolumns = n;
    for (int r = 0; r < NCOLS; r++) {
        x->index[r] = -1;
        if (x->f->col[r] == NULL)
            continue;
        for (size_t i = 0; i < n && x->index[r] < 0; i++)
            if (strcmp(names[i], x->f->col[r]) == 0)
                x->index[r] = (int)i;
        if (x->index[r] < 0) {
            char list[256];
            needed(x->f, list, sizeof list);
            return sim_lines_error(&x->L, TOPO_EINVALID, "header: no column \"%s\" (%s reads %s)",
                              x->f->col[r], x->f->name, list);
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++)
            if (names[i][0] != '\0' && strcmp(names[i], names[k]) == 0)
                return sim_lines_error(&x->L, TOPO_EINVALID, "header: column \"%s\" given twice",
                                  names[i]);
    return 0;
}

/* Whether the line is a header: it names one of the format's columns. */
static int is_header(const format_def *fd, char *const *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int r = 0; r < NCOLS; r++)
            if (fd->col[r] != NULL && strcmp(f[i], fd->col[r]) == 0)
                return 1;
    return 0;
}

/* Empty, or how pandas and Philly write a missing time or number. */
static int absent(const char *s)
{
    return *s == '\0' || strcmp(s, "None") == 0 || strcmp(s, "NaT") == 0 ||
           strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0;
}

/* A plain decimal number (digits, one optional point; pandas writes whole
 * numbers as "8.0"): no sign, exponent, inf or nan, at most `max`. */
static int parse_number(const pub_ctx *x, int role, const char *s, double max, double *out)
{
    if (!topo_str_is_decimal(s, 0))
        return COLUMN_ERROR(x, role, "expected a number, got \"%s\"", s);
    double v = strtod(s, NULL);
    if (!isfinite(v) || v > max)
        return COLUMN_ERROR(x, role, "at most %.0f, got \"%s\"", max, s);
    *out = v;
    return 0;
}

/* A count that must be whole ("8" or "8.0"). */
static int parse_whole(const pub_ctx *x, int role, const char *s, double max, double *out)
{
    int rc = parse_number(x, role, s, max, out);
    if (rc == 0 && *out != floor(*out))
        return COLUMN_ERROR(x, role, "expected a whole number, got \"%s\"", s);
    return rc;
}

/* A time in seconds; *present 0 when the field is empty. */
static int parse_time(const pub_ctx *x, int role, const char *s, double *out, int *present)
{
    *present = !absent(s);
    if (!*present)
        return 0;
    if (x->f->epoch)
        return parse_number(x, role, s, TOPO_MAX_SIM_SECONDS, out);
    int64_t v;
    if (topo_decode_parse_wall_time(&v, s) < 0)
        return COLUMN_ERROR(x, role, "expected a time YYYY-MM-DD HH:MM:SS[+HH:MM], got \"%s\"",
                            s);
    *out = (double)v;
    return 0;
}

static void skip(const pub_ctx *x, topo_sim_trace_skip why)
{
    x->stats->skipped[why]++;
}

/* The job's pods: whole GPUs per pod up to a node, larger jobs as pods of
 * a whole node each, a remainder rounded up to one more whole node. */
static int shape(const pub_ctx *x, double pods, double per_pod, topo_sim_job *j)
{
    double total = pods * per_pod;
    if (per_pod > x->node) {
        pods = ceil(total / x->node);
        if (pods * x->node != total)
            x->stats->rounded++;
        per_pod = x->node;
    }
    if (pods > TOPO_MAX_SIM_PODS)
        return COLUMN_ERROR(x, COL_GPUS, "%.0f GPUs make %.0f pods of %u, more than %u",
                            total, pods, (unsigned)x->node, TOPO_MAX_SIM_PODS);
    j->pods = (int32_t)pods;
    j->gpus = (int32_t)per_pod;
    return 0;
}

/* One data row: a job, a skip counted, or an error. */
static int row(pub_ctx *x, char **f, size_t nf)
{
    const char *v[NCOLS];
    double gpus = 0, pods = 1, submit = 0, start = 0, end = 0, run = 0;
    int has_submit = 0, has_start = 0, has_end = 0, rc;
    topo_sim_job j;

    if (nf != x->ncolumns)
        return sim_lines_error(&x->L, TOPO_EINVALID, "%zu columns, the header has %zu", nf, x->ncolumns);
    for (int r = 0; r < NCOLS; r++)
        v[r] = x->index[r] >= 0 ? f[x->index[r]] : NULL;
    x->stats->rows++;

    /* GPUs: a count, or PAI's percent of a GPU per instance rounded up to
     * whole GPUs (a fraction of a GPU is one GPU to a scheduler of whole
     * devices). */
    double max_gpus = (double)TOPO_MAX_SIM_PODS * TOPO_MAX_SIM_GPUS_PER_POD;
    if (!absent(v[COL_GPUS])) {
        if (x->f->gpu_percent)
            rc = parse_number(x, COL_GPUS, v[COL_GPUS], max_gpus * 100, &gpus);
        else
            rc = parse_whole(x, COL_GPUS, v[COL_GPUS], max_gpus, &gpus);
        if (rc < 0)
            return rc;
    }
    if (v[COL_PODS] != NULL && !absent(v[COL_PODS]) &&
        (rc = parse_whole(x, COL_PODS, v[COL_PODS], TOPO_MAX_SIM_PODS, &pods)) < 0)
        return rc;
    if (v[COL_PODS] != NULL && absent(v[COL_PODS]))
        pods = 0;
    if ((rc = parse_time(x, COL_START, v[COL_START], &start, &has_start)) < 0 ||
        (rc = parse_time(x, COL_END, v[COL_END], &end, &has_end)) < 0)
        return rc;
    if (v[COL_SUBMIT] != NULL &&
        (rc = parse_time(x, COL_SUBMIT, v[COL_SUBMIT], &submit, &has_submit)) < 0)
        return rc;
    if (v[COL_DURATION] != NULL && !absent(v[COL_DURATION]) &&
        (rc = parse_number(x, COL_DURATION, v[COL_DURATION], TOPO_MAX_SIM_SECONDS, &run)) < 0)
        return rc;
    if (v[COL_SUBMIT] != NULL && !has_submit)
        return COLUMN_ERROR(x, COL_SUBMIT, "%s", "missing");

    if (gpus == 0 || pods == 0) {
        skip(x, TOPO_SIM_SKIP_NO_GPU);
        return 0;
    }
    if (!has_start) {
        skip(x, TOPO_SIM_SKIP_NOT_STARTED);
        return 0;
    }
    /* The run time: end - start, the duration column only without an end
     * (Acme's Kalos rows have duration = end - submit, queueing included). */
    if (has_end) {
        if (end < start)
            return COLUMN_ERROR(x, COL_END, "%s is before %s %s", v[COL_END],
                                x->f->col[COL_START], v[COL_START]);
        run = end - start;
    } else if (v[COL_DURATION] == NULL || absent(v[COL_DURATION])) {
        skip(x, TOPO_SIM_SKIP_NO_END);
        return 0;
    }
    if (!(run > 0)) {
        skip(x, TOPO_SIM_SKIP_ZERO_RUN);
        return 0;
    }
    if (run > TOPO_MAX_SIM_SECONDS)
        return COLUMN_ERROR(x, COL_END, "ran %.0f s, more than %.0f", run, TOPO_MAX_SIM_SECONDS);

    memset(&j, 0, sizeof(j));
    double per_pod = gpus;
    if (x->f->gpu_percent) {
        per_pod = ceil(gpus / 100);
        if (per_pod * 100 != gpus)
            x->stats->fractional++;
    }
    if ((rc = shape(x, pods, per_pod, &j)) < 0)
        return rc;
    /* Absolute for now: made relative to the first submission once all
     * rows are read. */
    j.arrive = x->f->col[COL_SUBMIT] != NULL ? submit : start;
    j.duration = run;
    j.request = -1;

    char id[TOPO_MAX_SIM_JOB_ID + 2];
    if (v[COL_ID2] != NULL)
        snprintf(id, sizeof id, "%s/%s", v[COL_ID], v[COL_ID2]);
    else
        snprintf(id, sizeof id, "%s", v[COL_ID]);
    if (strlen(v[COL_ID]) + (v[COL_ID2] ? strlen(v[COL_ID2]) + 1 : 0) > TOPO_MAX_SIM_JOB_ID)
        return COLUMN_ERROR(x, COL_ID, "the id is longer than %u bytes", TOPO_MAX_SIM_JOB_ID);
    if ((rc = sim_check_job_id(&x->L, x->f->col[COL_ID], id, x->ids)) < 0)
        return rc;
    if ((j.id = topo_pool_strdup(x->t->pool, id)) == NULL ||
        topo_strmap_put(x->ids, j.id, (int32_t)(x->L.line > INT32_MAX ? INT32_MAX : x->L.line)) != 0)
        return topo_err_nomem(x->L.err, "trace");
    if ((rc = sim_trace_push(x->t, &j, x->L.err)) < 0)
        return sim_lines_error(&x->L, rc, "%s", x->L.err ? x->L.err->text : "too many jobs");
    x->stats->jobs++;
    return 0;
}

/* Arrivals relative to the first one, in [0, TOPO_MAX_SIM_SECONDS]. */
static int relative_arrivals(pub_ctx *x)
{
    double first = INFINITY;
    for (size_t i = 0; i < x->t->njobs; i++)
        first = fmin(first, x->t->jobs[i].arrive);
    for (size_t i = 0; i < x->t->njobs; i++) {
        x->t->jobs[i].arrive -= first;
        if (x->t->jobs[i].arrive > TOPO_MAX_SIM_SECONDS)
            return topo_err_set(x->L.err, TOPO_ELIMIT, "%s: arrivals span more than %.0f s",
                                x->L.source, TOPO_MAX_SIM_SECONDS);
    }
    return sim_trace_sort(x->t, x->L.err);
}

int topo_sim_trace_parse_public(topo_sim_trace *t, topo_sim_trace_format format,
                                uint32_t gpus_per_node, const char *text, size_t len,
                                const char *source, topo_sim_trace_stats *stats,
                                topo_err *err)
{
    topo_sim_trace_stats local;
    pub_ctx x;
    char *line;
    int rc, seen_header = 0;

    sim_trace_reset(t);
    memset(&x, 0, sizeof(x));
    memset(&local, 0, sizeof(local));
    x.t = t;
    x.node = gpus_per_node;
    x.stats = stats != NULL ? stats : &local;
    memset(x.stats, 0, sizeof(*x.stats));
    if (format == TOPO_SIM_TRACE_TOPO || (unsigned)format >= TOPO_SIM_TRACE_FORMATS)
        return topo_err_set(err, TOPO_EINVALID, "trace format %d: not a public trace format",
                            (int)format);
    x.f = &formats[format];
    if (gpus_per_node < 1 || gpus_per_node > TOPO_MAX_SIM_GPUS_PER_POD)
        return topo_err_set(err, TOPO_EINVALID, "GPUs per node: between 1 and %u, got %u",
                            TOPO_MAX_SIM_GPUS_PER_POD, (unsigned)gpus_per_node);
    if ((rc = sim_lines_open(&x.L, text, len, source, err)) < 0)
        goto cleanup;
    if ((x.ids = topo_strmap_create(1024)) == NULL) {
        rc = topo_err_nomem(err, "trace");
        goto cleanup;
    }
    while ((rc = sim_lines_next(&x.L, &line)) > 0) {
        char *f[MAX_COLUMNS];
        size_t nf;
        if (*sim_trim(line) == '\0')
            continue;
        if ((rc = split(&x, line, f, &nf)) < 0)
            goto cleanup;
        if (!seen_header) {
            seen_header = 1;
            if (is_header(x.f, f, nf)) {
                rc = map_columns(&x, f, nf);
                if (rc < 0)
                    goto cleanup;
                continue;
            }
            if (x.f->headerless == NULL) {
                char list[256];
                needed(x.f, list, sizeof list);
                rc = sim_lines_error(&x.L, TOPO_EINVALID, "expected a header naming the columns (%s "
                                "reads %s)", x.f->name, list);
                goto cleanup;
            }
            if ((rc = map_columns(&x, (char *const *)x.f->headerless, x.f->nheaderless)) < 0)
                goto cleanup;
        }
        if ((rc = row(&x, f, nf)) < 0)
            goto cleanup;
    }
    if (rc == 0)
        rc = relative_arrivals(&x);

cleanup:
    if (rc < 0)
        sim_trace_reset(t);
    sim_lines_close(&x.L);
    topo_strmap_free(x.ids);
    return rc;
}

int topo_sim_trace_load_public(topo_sim_trace *t, topo_sim_trace_format format,
                               uint32_t gpus_per_node, const char *path,
                               topo_sim_trace_stats *stats, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = topo_codec_read_file(&text, &len, path, TOPO_MAX_SIM_TRACE_FILE, err);
    if (rc == 0)
        rc = topo_sim_trace_parse_public(t, format, gpus_per_node, text, len, path, stats, err);
    free(text);
    return rc;
}
