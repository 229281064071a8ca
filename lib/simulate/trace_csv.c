/* CSV traces in and out (topo/simulate.h, docs/simulate.md "Trace files").
 * Outside input: every field is checked, every message names the line and
 * the field, the file and each line have a size limit. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/codec.h"
#include "topo/kueue.h"
#include "topo/str.h"

#define SIM_AUTO_LEVEL "auto"
#define NCOLUMNS 6

static const char *const columns[NCOLUMNS] = {
    "t_arrive", "job_id", "pods", "gpus_per_pod", "duration_s", "annotations",
};

typedef struct csv_ctx {
    topo_sim_trace *t;
    sim_lines L;
    topo_pool *scratch; /* per line */
    topo_strmap *ids;   /* job id -> line */
} csv_ctx;

#define FIELD_ERROR(x, i, fmt, ...)                                                          \
    sim_lines_error(&(x)->L, TOPO_EINVALID, "field %d (%s): " fmt, (i) + 1, columns[(i)], __VA_ARGS__)

/* A plain decimal number of seconds (digits, one optional point and
 * exponent; no sign, inf, nan or hex) in [0, TOPO_MAX_SIM_SECONDS]. */
static int parse_seconds(const csv_ctx *x, int field, const char *s, int positive, double *out)
{
    if (!topo_str_is_decimal(s, 1))
        return FIELD_ERROR(x, field, "expected a number of seconds, got \"%s\"", s);
    double v = strtod(s, NULL);
    if (!isfinite(v) || v > TOPO_MAX_SIM_SECONDS || (positive && !(v > 0)))
        return FIELD_ERROR(x, field, "must be %s and at most %.0f, got \"%s\"",
                           positive ? "greater than 0" : "0 or more", TOPO_MAX_SIM_SECONDS, s);
    *out = v;
    return 0;
}

static int parse_count(const csv_ctx *x, int field, const char *s, uint32_t max, int32_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (uint64_t)(*p - '0')) > max)
            break;
    if (p == s || (*p != '\0' && !(*p >= '0' && *p <= '9')))
        return FIELD_ERROR(x, field, "expected a whole number, got \"%s\"", s);
    if (*p != '\0' || v < 1 || v > max)
        return FIELD_ERROR(x, field, "must be between 1 and %u, got \"%s\"", max, s);
    *out = (int32_t)v;
    return 0;
}

/* "KEY=VALUE;KEY=VALUE" into pairs (in the scratch pool) and the normalised
 * text. Only Kueue's PodSet annotations, each once. */
static int split_annotations(const csv_ctx *x, char *text, topo_kv *kv, size_t *n,
                             topo_buf *norm)
{
    *n = 0;
    for (char *item = text, *next; item != NULL; item = next) {
        next = strchr(item, ';');
        if (next != NULL)
            *next++ = '\0';
        item = sim_trim(item);
        if (*item == '\0')
            continue;
        char *eq = strchr(item, '=');
        if (eq == NULL || eq == item)
            return FIELD_ERROR(x, 5, "expected KEY=VALUE, got \"%s\"", item);
        *eq = '\0';
        char *key = sim_trim(item), *value = sim_trim(eq + 1);
        topo_kv one = {key, value};
        if (!topo_kueue_has_podset_annotation(&one, 1))
            return FIELD_ERROR(x, 5, "\"%s\" is not one of Kueue's PodSet annotations "
                               "(kueue.x-k8s.io/podset-*)", key);
        for (size_t i = 0; i < *n; i++)
            if (strcmp(kv[i].key, key) == 0)
                return FIELD_ERROR(x, 5, "%s is given twice", key);
        if (*n == TOPO_MAX_SIM_ANNOTATIONS)
            return FIELD_ERROR(x, 5, "more than %u annotations", TOPO_MAX_SIM_ANNOTATIONS);
        kv[(*n)++] = one;
        topo_buf_printf(norm, "%s%s=%s", *n > 1 ? ";" : "", key, value);
    }
    return norm->error != 0 ? topo_err_nomem(x->L.err, "trace") : 0;
}

/* The job's request from its annotations, Kueue's validation and messages. */
static int request_of(const csv_ctx *x, char *text, int32_t pods, int32_t *out)
{
    topo_kv kv[TOPO_MAX_SIM_ANNOTATIONS];
    topo_buf norm = TOPO_BUF_INIT(TOPO_MAX_SIM_LINE);
    topo_sim_request r;
    topo_err e = TOPO_ERR_INIT;
    size_t n = 0;
    int rc;

    *out = -1;
    memset(&r, 0, sizeof(r));
    if ((rc = split_annotations(x, text, kv, &n, &norm)) < 0 || n == 0)
        goto cleanup;
    r.spec.count = pods;
    /* Kueue's messages name the field as on a Pod: metadata.annotations[...]. */
    if ((rc = topo_kueue_podset_request(&r.spec, kv, n, "metadata", x->scratch, &e)) < 0) {
        rc = rc == TOPO_EINVALID ? FIELD_ERROR(x, 5, "%s", e.text)
                                 : topo_err_nomem(x->L.err, "trace");
        goto cleanup;
    }
    if (!topo_kueue_has_topology_request(kv, n))
        goto cleanup; /* a group name alone asks for no placement */
    if (r.spec.slice_required != NULL && strcmp(r.spec.slice_required, SIM_AUTO_LEVEL) == 0) {
        rc = FIELD_ERROR(x, 5, "%s", "the level \"auto\" is for the required or preferred "
                         "topology only");
        goto cleanup;
    }
    r.auto_level = (r.spec.required != NULL && strcmp(r.spec.required, SIM_AUTO_LEVEL) == 0) ||
                   (r.spec.preferred != NULL && strcmp(r.spec.preferred, SIM_AUTO_LEVEL) == 0);
    r.text = topo_kueue_request_text(&r.spec, x->scratch);
    r.annotations = norm.ptr;
    if (r.text == NULL) {
        rc = topo_err_nomem(x->L.err, "trace");
        goto cleanup;
    }
    rc = sim_trace_intern(x->t, &r, out, x->L.err);

cleanup:
    topo_buf_dispose(&norm);
    return rc;
}

static int header(const csv_ctx *x, char **f, size_t nf)
{
    for (size_t i = 0; i < nf; i++)
        if (strcmp(f[i], columns[i]) != 0)
            return sim_lines_error(&x->L, TOPO_EINVALID, "header: column %zu is \"%s\", expected \"%s\"",
                              i + 1, f[i], columns[i]);
    return 0;
}

/* One line's fields: the first five split at commas, the annotations the
 * rest of the line (their values may hold commas: slice constraints are
 * JSON). */
static int split(const csv_ctx *x, char *line, char **f, size_t *nf)
{
    *nf = 0;
    for (char *p = line;;) {
        if (*nf == NCOLUMNS - 1) {
            f[(*nf)++] = p;
            break;
        }
        char *comma = strchr(p, ',');
        f[(*nf)++] = p;
        if (comma == NULL)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    for (size_t i = 0; i < *nf; i++) {
        f[i] = sim_trim(f[i]);
        if (i < NCOLUMNS - 1 && strchr(f[i], '"') != NULL)
            return FIELD_ERROR(x, (int)i, "%s", "quoted fields are not supported");
    }
    if (*nf < NCOLUMNS - 1)
        return sim_lines_error(&x->L, TOPO_EINVALID,
                          "expected t_arrive,job_id,pods,gpus_per_pod,duration_s[,annotations], "
                          "got %zu field%s",
                          *nf, *nf == 1 ? "" : "s");
    return 0;
}

static int job_line(csv_ctx *x, char **f, size_t nf)
{
    topo_sim_job j;
    int rc;
    memset(&j, 0, sizeof(j));
    if ((rc = parse_seconds(x, 0, f[0], 0, &j.arrive)) < 0 || (rc = sim_check_job_id(&x->L, "field 2 (job_id)", f[1], x->ids)) < 0 ||
        (rc = parse_count(x, 2, f[2], TOPO_MAX_SIM_PODS, &j.pods)) < 0 ||
        (rc = parse_count(x, 3, f[3], TOPO_MAX_SIM_GPUS_PER_POD, &j.gpus)) < 0 ||
        (rc = parse_seconds(x, 4, f[4], 1, &j.duration)) < 0)
        return rc;
    j.request = -1;
    if (nf == NCOLUMNS && (rc = request_of(x, f[5], j.pods, &j.request)) < 0)
        return rc;
    if ((j.id = topo_pool_strdup(x->t->pool, f[1])) == NULL)
        return topo_err_nomem(x->L.err, "trace");
    if (topo_strmap_put(x->ids, j.id, (int32_t)(x->L.line > INT32_MAX ? INT32_MAX : x->L.line)) != 0)
        return topo_err_nomem(x->L.err, "trace");
    if ((rc = sim_trace_push(x->t, &j, x->L.err)) < 0)
        return sim_lines_error(&x->L, rc, "%s", x->L.err ? x->L.err->text : "too many jobs");
    return 0;
}

int topo_sim_trace_parse_csv(topo_sim_trace *t, const char *text, size_t len,
                             const char *source, topo_err *err)
{
    csv_ctx x = {t, {0}, NULL, NULL};
    char *line;
    int rc, seen_content = 0;

    sim_trace_reset(t);
    if ((rc = sim_lines_open(&x.L, text, len, source, err)) < 0)
        goto cleanup;
    if ((x.scratch = topo_pool_create()) == NULL || (x.ids = topo_strmap_create(1024)) == NULL) {
        rc = topo_err_nomem(err, "trace");
        goto cleanup;
    }
    while ((rc = sim_lines_next(&x.L, &line)) > 0) {
        char *f[NCOLUMNS];
        size_t nf;
        line = sim_trim(line);
        if (*line == '\0' || *line == '#')
            continue;
        topo_pool_clear(x.scratch);
        if ((rc = split(&x, line, f, &nf)) < 0)
            goto cleanup;
        if (!seen_content++ && strcmp(f[0], columns[0]) == 0)
            rc = header(&x, f, nf);
        else
            rc = job_line(&x, f, nf);
        if (rc < 0)
            goto cleanup;
    }
    if (rc == 0)
        rc = sim_trace_sort(t, err);

cleanup:
    if (rc < 0)
        sim_trace_reset(t);
    sim_lines_close(&x.L);
    topo_strmap_free(x.ids);
    topo_pool_free(x.scratch);
    return rc;
}

int topo_sim_trace_load_csv(topo_sim_trace *t, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = topo_codec_read_file(&text, &len, path, TOPO_MAX_SIM_TRACE_FILE, err);
    if (rc == 0)
        rc = topo_sim_trace_parse_csv(t, text, len, path, err);
    free(text);
    return rc;
}

/* Seconds to the millisecond when that is exact (generated traces),
 * else every digit: what is written reads back bit for bit. */
static const char *seconds(char *buf, size_t size, double v)
{
    snprintf(buf, size, "%.3f", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, size, "%.17g", v);
    return buf;
}

int topo_sim_trace_write_csv(const topo_sim_trace *t, topo_buf *out)
{
    char at[64], dur[64];
    topo_buf_puts(out, "# topoassign simulate trace: times in seconds; annotations are Kueue's "
                       "PodSet annotations, the level \"auto\" the tightest level that could "
                       "hold the job on the empty cluster\n");
    topo_buf_printf(out, "%s,%s,%s,%s,%s,%s\n", columns[0], columns[1], columns[2], columns[3],
                    columns[4], columns[5]);
    for (size_t i = 0; i < t->njobs && out->error == 0; i++) {
        const topo_sim_job *j = &t->jobs[i];
        const char *a = j->request >= 0 ? t->requests[j->request].annotations : NULL;
        topo_buf_printf(out, "%s,%s,%d,%d,%s,%s\n", seconds(at, sizeof at, j->arrive), j->id,
                        (int)j->pods, (int)j->gpus, seconds(dur, sizeof dur, j->duration),
                        a != NULL ? a : "");
    }
    return out->error;
}
