/* The terminal table: one column per policy, one row per metric
 * (topo/simulate.h), then the same-jobs block and the stretched runs'
 * block; over several seeds each figure is "mean ± half", the half-width of
 * its 95 % interval. */
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "out_internal.h"
#include "summary_internal.h"

#define LABEL_WIDTH SIM_LABEL_WIDTH
#define COLUMN_WIDTH 14
#define COLUMN_GAP 2 /* at least, before a policy's name */
#define CELL_SIZE 64

const char *const sim_class_names[TOPO_SIM_CLASSES] = {"1-8", "9-127", "128+"};

/* The unit a duration of s seconds is shown in. */
static void duration_unit(double s, double *div, const char **unit, int *prec)
{
    *prec = 1;
    if (s < 60) {
        *div = 1, *unit = "s", *prec = 0;
    } else if (s < 3600) {
        *div = 60, *unit = "min";
    } else if (s < 86400) {
        *div = 3600, *unit = "h";
    } else {
        *div = 86400, *unit = "d";
    }
}

void sim_fmt_duration(char *buf, size_t size, double s)
{
    double div;
    const char *unit;
    int prec;
    duration_unit(s, &div, &unit, &prec);
    snprintf(buf, size, "%.*f %s", prec, s / div, unit);
}

const char *sim_level_short(const char *level)
{
    const char *slash = strrchr(level, '/');
    return slash != NULL ? slash + 1 : level;
}

void sim_cell_text(char *buf, size_t size, const sim_row *row, const double *vec,
                   const double *lo, const double *hi, size_t l, int spanned_prec)
{
    size_t slot = sim_slot((sim_field_id)row->field, row->kind == SIM_ROW_SPANNED ? l : 0);
    double v = vec[slot], half = hi != NULL ? hi[slot] - v : 0;
    double div;
    const char *unit;
    int prec;
    (void)lo; /* the interval is symmetric: mean ± (hi - mean) */
    switch (row->kind) {
    case SIM_ROW_COUNT:
        snprintf(buf, size, hi ? "%.0f ± %.0f" : "%.0f", v, half);
        break;
    case SIM_ROW_SHARE:
        snprintf(buf, size, hi ? "%.1f ± %.1f%%" : "%.1f%%", 100 * v, 100 * half);
        break;
    case SIM_ROW_SECONDS:
        duration_unit(v, &div, &unit, &prec);
        if (hi != NULL)
            snprintf(buf, size, "%.*f ± %.*f %s", prec, v / div, prec, half / div, unit);
        else
            snprintf(buf, size, "%.*f %s", prec, v / div, unit);
        break;
    case SIM_ROW_SPANNED:
        snprintf(buf, size, hi ? "%.*f ± %.*f" : "%.*f", spanned_prec, v, spanned_prec, half);
        break;
    default:
        snprintf(buf, size, hi ? "%.3f ± %.3f" : "%.3f", v, half);
        break;
    }
}

/* Characters (not bytes: ± is two) of a UTF-8 text. */
static int text_width(const char *s)
{
    int n = 0;
    for (; *s != '\0'; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void put_cell(topo_buf *out, const char *text, int width)
{
    topo_buf_printf(out, "%*s%s", width - text_width(text), "", text);
}

/* COLUMN_WIDTH, or wider for a long policy name (first-fit-fabric), which
 * would otherwise run into its neighbour. */
int sim_column_width(const char *policy)
{
    size_t name = strlen(policy) + COLUMN_GAP;
    return name > COLUMN_WIDTH ? (int)name : COLUMN_WIDTH;
}

/* One column: a policy's metrics vectors (fields.h) per view, NULL for a
 * view it lacks, and over several seeds their intervals' ends. */
typedef struct column {
    const char *name;
    const double *v[SIM_VIEWS], *lo[SIM_VIEWS], *hi[SIM_VIEWS];
    int width;
} column;

/* The table's columns and what its rows need. */
typedef struct table {
    column *cols;
    size_t n;
    const char *const *levels;
    size_t nlevels;
} table;

/* Row's cell of column c in view (level l); "-" where c lacks the view. */
static void cell(char *buf, size_t size, const sim_row *row, const column *c, sim_view view,
                 size_t l)
{
    if (c->v[view] == NULL)
        snprintf(buf, size, "-");
    else
        sim_cell_text(buf, size, row, c->v[view], c->lo[view], c->hi[view], l, 2);
}

/* Widens c for the widest of rows' cells in view. */
static void fit(column *c, const sim_row *rows, size_t nrows, sim_view view, size_t nlevels)
{
    char text[CELL_SIZE];
    for (size_t k = 0; k < nrows; k++) {
        size_t nl = rows[k].kind == SIM_ROW_SPANNED ? nlevels : 1;
        for (size_t l = 0; rows[k].kind != SIM_ROW_HEADING && l < nl; l++) {
            cell(text, sizeof text, &rows[k], c, view, l);
            if (text_width(text) + COLUMN_GAP > c->width)
                c->width = text_width(text) + COLUMN_GAP;
        }
    }
}

/* Column widths: by the policy's name, and over several seeds by the
 * widest cell of every block. */
static void widths(table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        column *c = &t->cols[i];
        c->width = sim_column_width(c->name);
        if (c->hi[SIM_VIEW_OWN] == NULL)
            continue;
        fit(c, sim_rows, sim_nrows, SIM_VIEW_OWN, t->nlevels);
        fit(c, &sim_unplaced_row, 1, SIM_VIEW_OWN, t->nlevels);
        fit(c, sim_common_rows, sim_ncommon_rows, SIM_VIEW_COMMON, t->nlevels);
        fit(c, sim_stretched_rows, sim_nstretched_rows, SIM_VIEW_STRETCHED, t->nlevels);
    }
}

static void header(topo_buf *out, const table *t)
{
    topo_buf_printf(out, "%-*s", LABEL_WIDTH, "");
    for (size_t i = 0; i < t->n; i++)
        topo_buf_printf(out, "%*s", t->cols[i].width, t->cols[i].name);
    topo_buf_putc(out, '\n');
}

/* rows of every column's view. */
static void rows_block(topo_buf *out, const table *t, const sim_row *rows, size_t nrows,
                       sim_view view)
{
    char label[128], text[CELL_SIZE];
    for (size_t k = 0; k < nrows; k++) {
        const sim_row *row = &rows[k];
        if (row->kind == SIM_ROW_HEADING) {
            topo_buf_printf(out, "%s\n", row->label);
            continue;
        }
        /* The domains spanned: one row per level above the node. */
        size_t nl = row->kind == SIM_ROW_SPANNED ? t->nlevels : 1;
        for (size_t l = 0; l < nl; l++) {
            if (row->kind == SIM_ROW_SPANNED)
                snprintf(label, sizeof label, "  %s", sim_level_short(t->levels[l]));
            topo_buf_printf(out, "%-*s", LABEL_WIDTH,
                            row->kind == SIM_ROW_SPANNED ? label : row->label);
            for (size_t i = 0; i < t->n; i++) {
                cell(text, sizeof text, row, &t->cols[i], view, l);
                put_cell(out, text, t->cols[i].width);
            }
            topo_buf_putc(out, '\n');
        }
    }
}

/* The same-jobs view: how many jobs each policy left unplaced, then the
 * job-level figures over the jobs every policy placed (jobs, and over
 * several seeds its interval's half-width, half < 0 for one seed). */
static void common_block(topo_buf *out, const table *t, double jobs, double half)
{
    if (half < 0)
        topo_buf_printf(out, "over the %.0f jobs every policy placed\n", jobs);
    else
        topo_buf_printf(out, "over the %.1f ± %.1f jobs every policy placed (mean)\n", jobs,
                        half);
    rows_block(out, t, &sim_unplaced_row, 1, SIM_VIEW_OWN);
    rows_block(out, t, sim_common_rows, sim_ncommon_rows, SIM_VIEW_COMMON);
}

static void stretched_block(topo_buf *out, const table *t)
{
    topo_buf_printf(out, "with the slowdown applied (a second run)\n");
    rows_block(out, t, sim_stretched_rows, sim_nstretched_rows, SIM_VIEW_STRETCHED);
}

/* Columns of results r[] with the vectors in v[i][view]. */
static void result_table(table *t, column *cols, double (*v)[SIM_VIEWS][SIM_NVALUES],
                         const char **levels, const topo_sim_result *const *r, size_t n)
{
    memset(cols, 0, n * sizeof(*cols));
    t->cols = cols;
    t->n = n;
    t->nlevels = topo_sim_result_metrics(r[0])->nlevels;
    for (size_t l = 0; l < t->nlevels; l++)
        levels[l] = topo_sim_result_level(r[0], l);
    t->levels = levels;
    for (size_t i = 0; i < n; i++) {
        cols[i].name = topo_sim_result_metrics(r[i])->policy;
        sim_field_values(v[i][SIM_VIEW_OWN], topo_sim_result_metrics(r[i]));
        cols[i].v[SIM_VIEW_OWN] = v[i][SIM_VIEW_OWN];
    }
    widths(t);
}

int topo_sim_format_table(topo_buf *out, const topo_sim_result *const *r, size_t n)
{
    double v[TOPO_SIM_POLICIES][SIM_VIEWS][SIM_NVALUES];
    topo_sim_metrics common[TOPO_SIM_POLICIES];
    column cols[TOPO_SIM_POLICIES];
    const char *levels[TOPO_MAX_LEVELS];
    size_t jobs = 0;
    table t;
    int rc;
    if (n == 0)
        return 0;
    if (n > TOPO_SIM_POLICIES)
        return TOPO_EINVALID;
    result_table(&t, cols, v, levels, r, n);
    header(out, &t);
    rows_block(out, &t, sim_rows, sim_nrows, SIM_VIEW_OWN);
    if (n == 1)
        return out->error;
    if ((rc = topo_sim_common(common, &jobs, r, n, NULL)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        sim_field_values(v[i][SIM_VIEW_COMMON], &common[i]);
        cols[i].v[SIM_VIEW_COMMON] = v[i][SIM_VIEW_COMMON];
    }
    common_block(out, &t, (double)jobs, -1);
    return out->error;
}

int topo_sim_format_stretched(topo_buf *out, const topo_sim_result *const *r,
                              const topo_sim_result *const *stretched, size_t n)
{
    double v[TOPO_SIM_POLICIES][SIM_VIEWS][SIM_NVALUES];
    column cols[TOPO_SIM_POLICIES];
    const char *levels[TOPO_MAX_LEVELS];
    table t;
    if (stretched == NULL || n == 0)
        return 0;
    if (n > TOPO_SIM_POLICIES)
        return TOPO_EINVALID;
    result_table(&t, cols, v, levels, r, n);
    for (size_t i = 0; i < n; i++) {
        if (stretched[i] == NULL)
            continue;
        sim_field_values(v[i][SIM_VIEW_STRETCHED], topo_sim_result_metrics(stretched[i]));
        cols[i].v[SIM_VIEW_STRETCHED] = v[i][SIM_VIEW_STRETCHED];
    }
    stretched_block(out, &t);
    return out->error;
}

int topo_sim_format_summary_table(topo_buf *out, const topo_sim_summary *s)
{
    column cols[TOPO_SIM_POLICIES];
    const char *const *levels;
    size_t n = topo_sim_summary_policy_count(s), nlevels = sim_summary_levels(s, &levels);
    table t = {cols, n, levels, nlevels};
    double jobs_lo, jobs_hi, jobs;
    int stretched = 0;
    if (n == 0)
        return 0;
    memset(cols, 0, sizeof cols);
    for (size_t i = 0; i < n; i++) {
        cols[i].name = topo_sim_summary_policy(s, i);
        for (int view = 0; view < SIM_VIEWS; view++)
            cols[i].v[view] = sim_summary_values(s, i, (sim_view)view, &cols[i].lo[view],
                                                 &cols[i].hi[view]);
        stretched |= cols[i].v[SIM_VIEW_STRETCHED] != NULL;
    }
    widths(&t);
    header(out, &t);
    rows_block(out, &t, sim_rows, sim_nrows, SIM_VIEW_OWN);
    jobs = sim_summary_common_jobs(s, &jobs_lo, &jobs_hi);
    if (n > 1)
        common_block(out, &t, jobs, cols[0].hi[SIM_VIEW_OWN] != NULL ? jobs_hi - jobs : -1);
    if (stretched)
        stretched_block(out, &t);
    return out->error;
}
