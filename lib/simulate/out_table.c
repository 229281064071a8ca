/* The terminal table: one column per policy, one row per metric
 * (topo/simulate.h). */
#include <stdio.h>
#include <string.h>

#include "out_internal.h"

#define LABEL_WIDTH SIM_LABEL_WIDTH
#define COLUMN_WIDTH 14
#define COLUMN_GAP 2 /* at least, before a policy's name */

const char *const sim_class_names[TOPO_SIM_CLASSES] = {"1-8", "9-127", "128+"};

void sim_fmt_duration(char *buf, size_t size, double s)
{
    if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%.1f min", s / 60);
    else if (s < 86400)
        snprintf(buf, size, "%.1f h", s / 3600);
    else
        snprintf(buf, size, "%.1f d", s / 86400);
}

const char *sim_level_short(const char *level)
{
    const char *slash = strrchr(level, '/');
    return slash != NULL ? slash + 1 : level;
}

/* One cell's text for row `row` of metrics m. */
static void cell(char *buf, size_t size, const sim_row *row, const topo_sim_metrics *m)
{
    double v = row->value(m, row->arg);
    switch (row->kind) {
    case SIM_ROW_COUNT:
        snprintf(buf, size, "%.0f", v);
        break;
    case SIM_ROW_SHARE:
        snprintf(buf, size, "%.1f%%", 100 * v);
        break;
    case SIM_ROW_SECONDS:
        sim_fmt_duration(buf, size, v);
        break;
    default:
        snprintf(buf, size, "%.3f", v);
        break;
    }
}

/* Column i's width: COLUMN_WIDTH, or wider for a long policy name
 * (first-fit-fabric), which would otherwise run into its neighbour. */
int sim_column_width(const char *policy)
{
    size_t name = strlen(policy) + COLUMN_GAP;
    return name > COLUMN_WIDTH ? (int)name : COLUMN_WIDTH;
}

static int column_width(const topo_sim_result *r)
{
    return sim_column_width(topo_sim_result_metrics(r)->policy);
}

/* The same-jobs view: how many jobs each policy left unplaced, then the
 * job-level figures over the jobs every policy placed. */
static int common_block(topo_buf *out, const topo_sim_result *const *r, size_t n)
{
    topo_sim_metrics m[TOPO_SIM_POLICIES];
    char text[64];
    size_t jobs = 0;
    int rc;
    if (n > TOPO_SIM_POLICIES || (rc = topo_sim_common(m, &jobs, r, n, NULL)) < 0)
        return n > TOPO_SIM_POLICIES ? TOPO_EINVALID : rc;
    topo_buf_printf(out, "over the %zu jobs every policy placed\n", jobs);
    topo_buf_printf(out, "%-*s", LABEL_WIDTH, "  left unplaced (not counted)");
    for (size_t i = 0; i < n; i++)
        topo_buf_printf(out, "%*zu", column_width(r[i]),
                        topo_sim_result_metrics(r[i])->unplaceable);
    topo_buf_putc(out, '\n');
    for (size_t k = 0; k < sim_ncommon_rows; k++) {
        topo_buf_printf(out, "%-*s", LABEL_WIDTH, sim_common_rows[k].label);
        for (size_t i = 0; i < n; i++) {
            cell(text, sizeof text, &sim_common_rows[k], &m[i]);
            topo_buf_printf(out, "%*s", column_width(r[i]), text);
        }
        topo_buf_putc(out, '\n');
    }
    return out->error;
}

int topo_sim_format_table(topo_buf *out, const topo_sim_result *const *r, size_t n)
{
    char label[128], text[64];
    if (n == 0)
        return 0;
    topo_buf_printf(out, "%-*s", LABEL_WIDTH, "");
    for (size_t i = 0; i < n; i++)
        topo_buf_printf(out, "%*s", column_width(r[i]), topo_sim_result_metrics(r[i])->policy);
    topo_buf_putc(out, '\n');
    for (size_t k = 0; k < sim_nrows; k++) {
        const sim_row *row = &sim_rows[k];
        if (row->kind == SIM_ROW_SPANNED) {
            /* One row per level above the node. */
            const topo_sim_metrics *m0 = topo_sim_result_metrics(r[0]);
            for (size_t l = 0; l < m0->nlevels; l++) {
                snprintf(label, sizeof label, "  %s", sim_level_short(topo_sim_result_level(r[0], l)));
                topo_buf_printf(out, "%-*s", LABEL_WIDTH, label);
                for (size_t i = 0; i < n; i++)
                    topo_buf_printf(out, "%*.2f", column_width(r[i]),
                                    topo_sim_result_metrics(r[i])->spanned[l]);
                topo_buf_putc(out, '\n');
            }
            continue;
        }
        if (row->kind == SIM_ROW_HEADING) {
            topo_buf_printf(out, "%s\n", row->label);
            continue;
        }
        topo_buf_printf(out, "%-*s", LABEL_WIDTH, row->label);
        for (size_t i = 0; i < n; i++) {
            cell(text, sizeof text, row, topo_sim_result_metrics(r[i]));
            topo_buf_printf(out, "%*s", column_width(r[i]), text);
        }
        topo_buf_putc(out, '\n');
    }
    return n > 1 ? common_block(out, r, n) : out->error;
}
