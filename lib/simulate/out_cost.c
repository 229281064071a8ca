/* The table's block about the cost model (topo/simulate.h): the
 * --cost-sweep (the stretched runs' block is out_table.c's). */
#include <stdio.h>

#include "out_internal.h"

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
