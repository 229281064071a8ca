/* --report FILE.html: one self-contained page (inline CSS and SVG, no
 * scripts, nothing fetched) with the table, bar charts of the metrics per
 * policy and the timeline; and --timeline FILE, the timeline as CSV. */
#include <stdio.h>
#include <stdlib.h>

#include "fields.h"
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
    "svg line.grid{stroke:#ddd;stroke-width:1}"
    "svg polyline.line{stroke-width:1.5}";

static void table(topo_buf *b, const topo_sim_result *const *r, size_t n)
{
    char text[64];
    double v[MAX_SERIES][SIM_NVALUES];
    for (size_t i = 0; i < n; i++)
        sim_field_values(v[i], topo_sim_result_metrics(r[i]));
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
                double x = sim_row_value(row, v[i], l);
                if (row->kind == SIM_ROW_SHARE)
                    snprintf(text, sizeof text, "%.1f%%", 100 * x);
                else if (row->kind == SIM_ROW_SECONDS)
                    sim_fmt_duration(text, sizeof text, x);
                else if (row->kind == SIM_ROW_COUNT)
                    snprintf(text, sizeof text, "%.0f", x);
                else
                    snprintf(text, sizeof text, "%.3f", x);
                topo_buf_printf(b, "<td>%s</td>", text);
            }
            topo_buf_puts(b, "</tr>\n");
        }
    }
    topo_buf_puts(b, "</table>\n");
}

static void bar_charts(topo_buf *b, const topo_sim_result *const *r, size_t n,
                       const char *const *names)
{
    double v[TOPO_MAX_LEVELS * MAX_SERIES] = {0};
    const char *levels[TOPO_MAX_LEVELS];
    const topo_sim_metrics *m[MAX_SERIES];
    for (size_t i = 0; i < n; i++)
        m[i] = topo_sim_result_metrics(r[i]);

    static const char *const tight_groups[] = {"tightest level when empty",
                                               "tightest level with room"};
    for (size_t i = 0; i < n; i++) {
        v[i] = m[i]->tight_share;
        v[n + i] = m[i]->tight_share_now;
    }
    sim_svg_bars(b, "chart-tight", "Multi-node jobs inside one domain", tight_groups, 2, names,
                 n, v, SIM_SVG_PERCENT);
    static const char *const frag_groups[] = {"free on partly used nodes",
                                              "free no whole pod can use"};
    for (size_t i = 0; i < n; i++) {
        v[i] = m[i]->fragmentation;
        v[n + i] = m[i]->fragmentation_pod;
    }
    sim_svg_bars(b, "chart-fragmentation", "GPU fragmentation (share of free GPUs)", frag_groups,
                 2, names, n, v, SIM_SVG_PERCENT);
    static const char *const util_groups[] = {"GPU utilisation"};
    for (size_t i = 0; i < n; i++)
        v[i] = m[i]->utilisation;
    sim_svg_bars(b, "chart-utilisation", "GPU utilisation", util_groups, 1, names, n, v,
                 SIM_SVG_PERCENT);
    for (size_t k = 0; k < TOPO_SIM_CLASSES; k++)
        for (size_t i = 0; i < n; i++)
            v[k * n + i] = m[i]->wait_class[k].p99;
    sim_svg_bars(b, "chart-queue", "Queueing delay p99 by GPUs per job", sim_class_names,
                 TOPO_SIM_CLASSES, names, n, v, SIM_SVG_SECONDS);
    static const char *const slow_groups[] = {"mean", "p99"};
    for (size_t i = 0; i < n; i++) {
        v[i] = m[i]->slowdown_mean;
        v[n + i] = m[i]->slowdown_p99;
    }
    sim_svg_bars(b, "chart-slowdown", "Modelled slowdown (GPU-time weighted)", slow_groups, 2,
                 names, n, v, SIM_SVG_NUMBER);
    size_t nl = m[0]->nlevels;
    for (size_t l = 0; l < nl; l++) {
        levels[l] = sim_level_short(topo_sim_result_level(r[0], l));
        for (size_t i = 0; i < n; i++)
            v[l * n + i] = m[i]->spanned[l];
    }
    sim_svg_bars(b, "chart-spanned", "Domains spanned per multi-node job (mean)", levels, nl,
                 names, n, v, SIM_SVG_NUMBER);
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
        sim_svg_lines(b, ids[chart], titles[chart], names, n, data,
                      chart < 2 ? SIM_SVG_PERCENT : SIM_SVG_NUMBER);
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
