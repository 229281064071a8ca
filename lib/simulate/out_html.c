/* --report FILE.html: one self-contained page (inline CSS and SVG, no
 * scripts, nothing fetched) with the table, bar charts of the metrics per
 * policy and the timeline; and --timeline FILE, the timeline as CSV. */
#include <stdio.h>
#include <stdlib.h>

#include "out_internal.h"
#include "out_svg.h"

#define MAX_SERIES TOPO_SIM_POLICIES

static const char style[] =
    "body{font-family:sans-serif;margin:2em;color:#222;max-width:1400px}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{padding:2px 12px;text-align:right;border-bottom:1px solid #eee}"
    "th:first-child,td:first-child{text-align:left}"
    "td.h{font-weight:bold;padding-top:8px}"
    ".charts{display:flex;flex-wrap:wrap;gap:16px}"
    "svg text{font-family:sans-serif;font-size:11px;fill:#333}"
    "svg text.title{font-size:13px;font-weight:bold}"
    "svg text.axis-title{font-size:12px}"
    "svg text.window-label{font-size:10px;fill:#444}";

static void table(topo_buf *b, const topo_sim_result *const *r, size_t n)
{
    char text[64];
    topo_buf_puts(b, "<table id=\"metrics\">\n<tr><th></th>");
    for (size_t i = 0; i < n; i++) {
        topo_buf_puts(b, "<th>");
        sim_html_escape(b, topo_sim_result_metrics(r[i])->policy);
        topo_buf_puts(b, "</th>");
    }
    topo_buf_puts(b, "</tr>\n");
    for (size_t k = 0; k < sim_nrows; k++) {
        const sim_row *row = &sim_rows[k];
        if (row->kind == SIM_ROW_HEADING) {
            topo_buf_printf(b, "<tr><td class=\"h\" colspan=\"%zu\">", n + 1);
            sim_html_escape(b, row->label);
            topo_buf_puts(b, "</td></tr>\n");
            continue;
        }
        size_t nl = row->kind == SIM_ROW_SPANNED ? topo_sim_result_metrics(r[0])->nlevels : 1;
        for (size_t l = 0; l < nl; l++) {
            topo_buf_puts(b, "<tr><td>");
            sim_html_escape(b, row->kind == SIM_ROW_SPANNED ? topo_sim_result_level(r[0], l)
                                                            : row->label);
            topo_buf_puts(b, "</td>");
            for (size_t i = 0; i < n; i++) {
                const topo_sim_metrics *m = topo_sim_result_metrics(r[i]);
                double v = row->kind == SIM_ROW_SPANNED ? m->spanned[l] : row->value(m, row->arg);
                if (row->kind == SIM_ROW_SHARE)
                    snprintf(text, sizeof text, "%.1f%%", 100 * v);
                else if (row->kind == SIM_ROW_SECONDS)
                    sim_fmt_duration(text, sizeof text, v);
                else if (row->kind == SIM_ROW_COUNT)
                    snprintf(text, sizeof text, "%.0f", v);
                else
                    snprintf(text, sizeof text, "%.3f", v);
                topo_buf_printf(b, "<td>%s</td>", text);
            }
            topo_buf_puts(b, "</tr>\n");
        }
    }
    topo_buf_puts(b, "</table>\n");
}

/* One bar chart: its id, title, axis titles and unit. */
static sim_svg_chart bar_chart(const char *id, const char *title, const char *x_title,
                               const char *y_title, sim_svg_unit unit)
{
    sim_svg_chart c = {id, title, x_title, y_title, unit, 0, 0, 0};
    return c;
}

static void bar_charts(topo_buf *b, const topo_sim_result *const *r, size_t n,
                       const char *const *names)
{
    double v[TOPO_MAX_LEVELS * MAX_SERIES] = {0};
    const char *levels[TOPO_MAX_LEVELS];
    const topo_sim_metrics *m[MAX_SERIES];
    sim_svg_chart c;
    for (size_t i = 0; i < n; i++)
        m[i] = topo_sim_result_metrics(r[i]);

    static const char *const tight_groups[] = {"tightest level when empty",
                                               "tightest level with room"};
    for (size_t i = 0; i < n; i++) {
        v[i] = m[i]->tight_share;
        v[n + i] = m[i]->tight_share_now;
    }
    c = bar_chart("chart-tight", "Multi-node jobs inside one domain", "domain the job could fit",
                  "multi-node jobs in one domain (%)", SIM_SVG_PERCENT);
    sim_svg_bars(b, &c, tight_groups, 2, names, n, v);
    static const char *const frag_groups[] = {"free on partly used nodes",
                                              "free no whole pod can use"};
    for (size_t i = 0; i < n; i++) {
        v[i] = m[i]->fragmentation;
        v[n + i] = m[i]->fragmentation_pod;
    }
    c = bar_chart("chart-fragmentation", "GPU fragmentation (share of free GPUs)",
                  "free GPUs counted", "free GPUs, time-weighted (%)", SIM_SVG_PERCENT);
    sim_svg_bars(b, &c, frag_groups, 2, names, n, v);
    static const char *const util_groups[] = {"GPU utilisation"};
    for (size_t i = 0; i < n; i++)
        v[i] = m[i]->utilisation;
    c = bar_chart("chart-utilisation", "GPU utilisation", "over the metric window",
                  "GPU utilisation (%)", SIM_SVG_PERCENT);
    sim_svg_bars(b, &c, util_groups, 1, names, n, v);
    for (size_t k = 0; k < TOPO_SIM_CLASSES; k++)
        for (size_t i = 0; i < n; i++)
            v[k * n + i] = m[i]->wait_class[k].p99;
    c = bar_chart("chart-queue", "Queueing delay p99 by GPUs per job", "GPUs per job",
                  "p99 wait, arrival to start (time)", SIM_SVG_SECONDS);
    sim_svg_bars(b, &c, sim_class_names, TOPO_SIM_CLASSES, names, n, v);
    static const char *const slow_groups[] = {"mean", "p99"};
    for (size_t i = 0; i < n; i++) {
        v[i] = m[i]->slowdown_mean;
        v[n + i] = m[i]->slowdown_p99;
    }
    c = bar_chart("chart-slowdown", "Modelled slowdown (GPU-time weighted)",
                  "statistic over the jobs", "slowdown (\xc3\x97 runtime at cost 1)",
                  SIM_SVG_FACTOR);
    sim_svg_bars(b, &c, slow_groups, 2, names, n, v);
    size_t nl = m[0]->nlevels;
    for (size_t l = 0; l < nl; l++) {
        levels[l] = sim_level_short(topo_sim_result_level(r[0], l));
        for (size_t i = 0; i < n; i++)
            v[l * n + i] = m[i]->spanned[l];
    }
    c = bar_chart("chart-spanned", "Domains spanned per multi-node job (mean)", "level",
                  "domains per multi-node job", SIM_SVG_NUMBER);
    sim_svg_bars(b, &c, levels, nl, names, n, v);
}

/* The three timeline charts; 0, or TOPO_ENOMEM. */
static int line_charts(topo_buf *b, const topo_sim_result *const *r, size_t n,
                       const char *const *names)
{
    static const char *const ids[] = {"timeline-utilisation", "timeline-fragmentation",
                                      "timeline-queue"};
    static const char *const titles[] = {"GPU utilisation over time",
                                         "Free GPUs on partly used nodes over time",
                                         "Jobs waiting over time"};
    static const char *const y_titles[] = {"GPU utilisation (%)",
                                           "free GPUs on partly used nodes (%)", "jobs waiting"};
    /* Every policy runs the same trace, so their windows are the same. */
    const topo_sim_metrics *m = topo_sim_result_metrics(r[0]);
    sim_svg_series data[MAX_SERIES];
    double *buf[MAX_SERIES] = {NULL};
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const topo_sim_sample *s;
        size_t ns = topo_sim_result_timeline(r[i], &s);
        if (ns > 0 && (buf[i] = malloc(2 * ns * sizeof(double))) == NULL) {
            rc = TOPO_ENOMEM;
            goto cleanup;
        }
        data[i].t = buf[i];
        data[i].y = buf[i] + ns;
        data[i].lo = data[i].hi = NULL; /* one run a policy: no interval */
        data[i].n = ns;
    }
    for (int chart = 0; chart < 3; chart++) {
        for (size_t i = 0; i < n; i++) {
            const topo_sim_sample *s;
            size_t ns = topo_sim_result_timeline(r[i], &s);
            for (size_t k = 0; k < ns; k++) {
                buf[i][k] = s[k].t;
                buf[i][ns + k] = chart == 0   ? s[k].utilisation
                                 : chart == 1 ? s[k].fragmentation
                                              : s[k].queue_length;
            }
        }
        sim_svg_chart c = {ids[chart], titles[chart], "time since first arrival",
                           y_titles[chart], chart < 2 ? SIM_SVG_PERCENT : SIM_SVG_NUMBER,
                           1, m->window_start, m->window_end};
        sim_svg_lines(b, &c, names, n, data);
    }

cleanup:
    for (size_t i = 0; i < n; i++)
        free(buf[i]);
    return rc;
}

int topo_sim_format_html(topo_buf *b, const topo_sim_info *info,
                         const topo_sim_result *const *r, size_t n)
{
    const char *names[MAX_SERIES];
    if (n == 0 || n > MAX_SERIES)
        return TOPO_EINVALID;
    for (size_t i = 0; i < n; i++)
        names[i] = topo_sim_result_metrics(r[i])->policy;
    topo_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<title>topoassign simulate</title>\n<style>%s</style>\n</head>\n<body>\n"
                       "<h1>topoassign simulate</h1>\n<p id=\"inputs\">Cluster: ",
                    style);
    sim_html_escape(b, info->cluster);
    topo_buf_printf(b, " (%zu nodes, %llu GPUs free). Jobs: ", info->nodes,
                    (unsigned long long)info->capacity);
    sim_html_escape(b, info->jobs);
    topo_buf_printf(b, ". Seed %llu. Metrics are defined in docs/simulate.md.</p>\n"
                       "<h2>Metrics</h2>\n",
                    (unsigned long long)info->seed);
    table(b, r, n);
    topo_buf_puts(b, "<h2>Per policy</h2>\n<div class=\"charts\">\n");
    bar_charts(b, r, n, names);
    topo_buf_puts(b, "</div>\n<h2>Over time</h2>\n<div class=\"charts\">\n");
    int rc = line_charts(b, r, n, names);
    topo_buf_puts(b, "</div>\n</body>\n</html>\n");
    return rc < 0 ? rc : b->error;
}

int topo_sim_format_timeline(topo_buf *b, const topo_sim_result *const *r, size_t n)
{
    topo_buf_puts(b, "policy,t_s,utilisation,fragmentation,fragmentation_pod,queue_length\n");
    for (size_t i = 0; i < n; i++) {
        const topo_sim_sample *s;
        size_t ns = topo_sim_result_timeline(r[i], &s);
        for (size_t k = 0; k < ns && b->error == 0; k++)
            topo_buf_printf(b, "%s,%.3f,%.6f,%.6f,%.6f,%.3f\n",
                            topo_sim_result_metrics(r[i])->policy, s[k].t, s[k].utilisation,
                            s[k].fragmentation, s[k].fragmentation_pod, s[k].queue_length);
    }
    return b->error;
}
