/* The terminal table: one column per policy, one row per metric
 * (topo/simulate.h); over several seeds each figure is "mean ± half", the
 * half-width of its 95 % interval. */
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "out_internal.h"
#include "summary_internal.h"

#define LABEL_WIDTH 30
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

/* One column: a policy's metrics vector (fields.h) and, over several seeds,
 * its interval's ends. */
typedef struct column {
    const char *name;
    const double *v, *lo, *hi;
    int width;
} column;

/* Row's cell in column c (level l for the domains spanned). */
static void cell(char *buf, size_t size, const sim_row *row, const column *c, size_t l)
{
    size_t slot = sim_slot((sim_field_id)row->field, row->kind == SIM_ROW_SPANNED ? l : 0);
    double v = c->v[slot], half = c->hi != NULL ? c->hi[slot] - v : 0;
    double div;
    const char *unit;
    int prec;
    switch (row->kind) {
    case SIM_ROW_COUNT:
        snprintf(buf, size, c->hi ? "%.0f ± %.0f" : "%.0f", v, half);
        break;
    case SIM_ROW_SHARE:
        snprintf(buf, size, c->hi ? "%.1f ± %.1f%%" : "%.1f%%", 100 * v, 100 * half);
        break;
    case SIM_ROW_SECONDS:
        duration_unit(v, &div, &unit, &prec);
        if (c->hi != NULL)
            snprintf(buf, size, "%.*f ± %.*f %s", prec, v / div, prec, half / div, unit);
        else
            snprintf(buf, size, "%.*f %s", prec, v / div, unit);
        break;
    case SIM_ROW_SPANNED:
        snprintf(buf, size, c->hi ? "%.2f ± %.2f" : "%.2f", v, half);
        break;
    default:
        snprintf(buf, size, c->hi ? "%.3f ± %.3f" : "%.3f", v, half);
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

/* Column c's width: COLUMN_WIDTH, or wider for a long policy name
 * (first-fit-fabric), which would otherwise run into its neighbour, and
 * over several seeds for the widest of its cells. */
static int column_width(const column *c, size_t nlevels)
{
    char text[CELL_SIZE];
    int w = (int)strlen(c->name) + COLUMN_GAP;
    if (w < COLUMN_WIDTH)
        w = COLUMN_WIDTH;
    for (size_t k = 0; c->hi != NULL && k < sim_nrows; k++) {
        size_t nl = sim_rows[k].kind == SIM_ROW_SPANNED ? nlevels : 1;
        for (size_t l = 0; sim_rows[k].kind != SIM_ROW_HEADING && l < nl; l++) {
            cell(text, sizeof text, &sim_rows[k], c, l);
            if (text_width(text) + COLUMN_GAP > w)
                w = text_width(text) + COLUMN_GAP;
        }
    }
    return w;
}

static int format(topo_buf *out, column *cols, size_t n, const char *const *levels,
                  size_t nlevels)
{
    char label[128], text[CELL_SIZE];
    if (n == 0)
        return 0;
    topo_buf_printf(out, "%-*s", LABEL_WIDTH, "");
    for (size_t i = 0; i < n; i++) {
        cols[i].width = column_width(&cols[i], nlevels);
        topo_buf_printf(out, "%*s", cols[i].width, cols[i].name);
    }
    topo_buf_putc(out, '\n');
    for (size_t k = 0; k < sim_nrows; k++) {
        const sim_row *row = &sim_rows[k];
        if (row->kind == SIM_ROW_HEADING) {
            topo_buf_printf(out, "%s\n", row->label);
            continue;
        }
        /* The domains spanned: one row per level above the node. */
        size_t nl = row->kind == SIM_ROW_SPANNED ? nlevels : 1;
        for (size_t l = 0; l < nl; l++) {
            if (row->kind == SIM_ROW_SPANNED)
                snprintf(label, sizeof label, "  %s", sim_level_short(levels[l]));
            topo_buf_printf(out, "%-*s", LABEL_WIDTH,
                            row->kind == SIM_ROW_SPANNED ? label : row->label);
            for (size_t i = 0; i < n; i++) {
                cell(text, sizeof text, row, &cols[i], l);
                put_cell(out, text, cols[i].width);
            }
            topo_buf_putc(out, '\n');
        }
    }
    return out->error;
}

int topo_sim_format_table(topo_buf *out, const topo_sim_result *const *r, size_t n)
{
    double v[TOPO_SIM_POLICIES][SIM_NVALUES];
    column cols[TOPO_SIM_POLICIES];
    const char *levels[TOPO_MAX_LEVELS];
    if (n == 0)
        return 0;
    if (n > TOPO_SIM_POLICIES)
        return TOPO_EINVALID;
    size_t nlevels = topo_sim_result_metrics(r[0])->nlevels;
    for (size_t l = 0; l < nlevels; l++)
        levels[l] = topo_sim_result_level(r[0], l);
    for (size_t i = 0; i < n; i++) {
        sim_field_values(v[i], topo_sim_result_metrics(r[i]));
        cols[i] = (column){topo_sim_result_metrics(r[i])->policy, v[i], NULL, NULL, 0};
    }
    return format(out, cols, n, levels, nlevels);
}

int topo_sim_format_summary_table(topo_buf *out, const topo_sim_summary *s)
{
    column cols[TOPO_SIM_POLICIES];
    const char *const *levels;
    size_t n = topo_sim_summary_policy_count(s), nlevels = sim_summary_levels(s, &levels);
    for (size_t i = 0; i < n; i++) {
        cols[i].name = topo_sim_summary_policy(s, i);
        cols[i].v = sim_summary_values(s, i, &cols[i].lo, &cols[i].hi);
    }
    return format(out, cols, n, levels, nlevels);
}
