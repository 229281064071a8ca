/* The table's blocks about the cost model (topo/simulate.h): the stretched
 * runs beside the unstretched ones, and the --cost-sweep. */
#include <stdio.h>

#include "out_internal.h"

typedef struct stretched_row {
    const char *label;
    int seconds; /* a duration, else a share */
    double (*value)(const topo_sim_metrics *m);
} stretched_row;

static double jct_mean(const topo_sim_metrics *m)
{
    return m->jct_mean;
}
static double jct_p99(const topo_sim_metrics *m)
{
    return m->jct_p99;
}
static double goodput(const topo_sim_metrics *m)
{
    return m->goodput;
}
static double queue_p99(const topo_sim_metrics *m)
{
    return m->wait.p99;
}
static double makespan(const topo_sim_metrics *m)
{
    return m->makespan - m->window_start;
}

static const stretched_row stretched_rows[] = {
    {"  job completion mean", 1, jct_mean}, {"  job completion p99", 1, jct_p99},
    {"  goodput", 0, goodput},              {"  queueing delay p99", 1, queue_p99},
    {"  makespan", 1, makespan},
};

int topo_sim_format_stretched(topo_buf *out, const topo_sim_result *const *r,
                              const topo_sim_result *const *stretched, size_t n)
{
    char text[64];
    if (stretched == NULL || n == 0)
        return 0;
    topo_buf_printf(out, "with the slowdown applied (a second run)\n");
    for (size_t k = 0; k < sizeof stretched_rows / sizeof stretched_rows[0]; k++) {
        const stretched_row *row = &stretched_rows[k];
        topo_buf_printf(out, "%-*s", SIM_LABEL_WIDTH, row->label);
        for (size_t i = 0; i < n; i++) {
            double v = stretched[i] != NULL ? row->value(topo_sim_result_metrics(stretched[i]))
                                            : 0;
            if (stretched[i] == NULL)
                snprintf(text, sizeof text, "-");
            else if (row->seconds)
                sim_fmt_duration(text, sizeof text, v);
            else
                snprintf(text, sizeof text, "%.1f%%", 100 * v);
            topo_buf_printf(out, "%*s", sim_column_width(topo_sim_result_metrics(r[i])->policy),
                            text);
        }
        topo_buf_putc(out, '\n');
    }
    return out->error;
}

/* A sweep cell holds three figures ("1.216 2.1 h 71.3%"). */
static int sweep_width(const char *policy)
{
    int w = sim_column_width(policy);
    return w > 22 ? w : 22;
}

int topo_sim_format_sweep(topo_buf *out, const topo_sim_sweep *s)
{
    char text[64], jct[32];
    if (s == NULL || s->nrows == 0)
        return 0;
    topo_buf_printf(out, "\ncost sweep: cost - 1 and communication share scaled; per policy the "
                         "slowdown mean, then (stretched runs) mean completion and goodput; %zu "
                         "runs\n",
                    s->runs);
    topo_buf_printf(out, "%-*s", SIM_LABEL_WIDTH, "  cost x, share x");
    for (size_t p = 0; p < s->npolicies; p++)
        topo_buf_printf(out, "%*s", sweep_width(s->policy[p]), s->policy[p]);
    topo_buf_putc(out, '\n');
    for (size_t i = 0; i < s->nrows; i++) {
        const topo_sim_sweep_row *row = &s->row[i];
        snprintf(text, sizeof text, "  %gx, %gx", row->cost_factor, row->share_factor);
        topo_buf_printf(out, "%-*s", SIM_LABEL_WIDTH, text);
        for (size_t p = 0; p < s->npolicies; p++) {
            const topo_sim_sweep_cell *c = &row->cell[p];
            sim_fmt_duration(jct, sizeof jct, c->jct_mean);
            snprintf(text, sizeof text, "%.3f %s %.1f%%", c->slowdown_mean, jct,
                     100 * c->goodput);
            topo_buf_printf(out, "%*s", sweep_width(s->policy[p]), text);
        }
        topo_buf_putc(out, '\n');
    }
    return out->error;
}
