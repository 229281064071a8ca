/* --report FILE.html: one self-contained page (inline CSS and SVG, no
 * scripts, nothing fetched) with the table, bar charts of the metrics per
 * policy and the timeline; and --timeline FILE, the timeline as CSV. */
#include <stdio.h>
#include <stdlib.h>

#include "fields.h"
#include "out_internal.h"
#include "out_svg.h"
#include "summary_internal.h"

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

/* What the report shows: per policy its metrics vectors (fields.h) per
 * view (its own run, the jobs every policy placed, the stretched run; NULL
 * for a view it lacks) and timeline, over several seeds the means with
 * their intervals' ends. */
typedef struct report {
    size_t n;
    const char *names[MAX_SERIES];
    const double *v[MAX_SERIES], *lo[MAX_SERIES], *hi[MAX_SERIES]; /* its own run */
    const double *view[SIM_VIEWS][MAX_SERIES], *view_lo[SIM_VIEWS][MAX_SERIES],
        *view_hi[SIM_VIEWS][MAX_SERIES];
    double common_jobs, common_half; /* half < 0: one seed */
    const topo_sim_sample *tl[MAX_SERIES], *tl_lo[MAX_SERIES], *tl_hi[MAX_SERIES];
    size_t ntl[MAX_SERIES];
    const char *const *levels;
    size_t nlevels;
    double window_start, window_end;
} report;

static void heading(topo_buf *b, const report *rep, const char *text)
{
    topo_buf_printf(b, "<tr><td class=\"h\" colspan=\"%zu\">", rep->n + 1);
    sim_html_escape(b, text);
    topo_buf_puts(b, "</td></tr>\n");
}

/* rows of view (a heading row for a heading), a cell per policy, "-" where
 * a policy lacks the view. */
static void rows(topo_buf *b, const report *rep, const sim_row *row, size_t nrows,
                 sim_view view)
{
    char text[64];
    for (size_t k = 0; k < nrows; k++, row++) {
        if (row->kind == SIM_ROW_HEADING) {
            heading(b, rep, row->label);
            continue;
        }
        size_t nl = row->kind == SIM_ROW_SPANNED ? rep->nlevels : 1;
        for (size_t l = 0; l < nl; l++) {
            topo_buf_puts(b, "<tr><td>");
            sim_html_escape(b, row->kind == SIM_ROW_SPANNED ? rep->levels[l] : row->label);
            topo_buf_puts(b, "</td>");
            for (size_t i = 0; i < rep->n; i++) {
                if (rep->view[view][i] == NULL)
                    snprintf(text, sizeof text, "-");
                else
                    sim_cell_text(text, sizeof text, row, rep->view[view][i],
                                  rep->view_lo[view][i], rep->view_hi[view][i], l, 3);
                topo_buf_printf(b, "<td>%s</td>", text);
            }
            topo_buf_puts(b, "</tr>\n");
        }
    }
}

/* The metrics, then (as the text table) the same-jobs block with how many
 * jobs each policy left unplaced, and the stretched run's block. */
static void table(topo_buf *b, const report *rep)
{
    char text[128];
    int stretched = 0;
    topo_buf_puts(b, "<table id=\"metrics\">\n<tr><th></th>");
    for (size_t i = 0; i < rep->n; i++) {
        topo_buf_puts(b, "<th>");
        sim_html_escape(b, rep->names[i]);
        topo_buf_puts(b, "</th>");
        stretched |= rep->view[SIM_VIEW_STRETCHED][i] != NULL;
    }
    topo_buf_puts(b, "</tr>\n");
    rows(b, rep, sim_rows, sim_nrows, SIM_VIEW_OWN);
    if (rep->n > 1 && rep->view[SIM_VIEW_COMMON][0] != NULL) {
        if (rep->common_half < 0)
            snprintf(text, sizeof text, "over the %.0f jobs every policy placed",
                     rep->common_jobs);
        else
            snprintf(text, sizeof text, "over the %.1f \xc2\xb1 %.1f jobs every policy placed "
                     "(mean)", rep->common_jobs, rep->common_half);
        heading(b, rep, text);
        rows(b, rep, &sim_unplaced_row, 1, SIM_VIEW_OWN);
        rows(b, rep, sim_common_rows, sim_ncommon_rows, SIM_VIEW_COMMON);
    }
    if (stretched) {
        heading(b, rep, "with the slowdown applied (a second run)");
        rows(b, rep, sim_stretched_rows, sim_nstretched_rows, SIM_VIEW_STRETCHED);
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

/* v[g * n + i]: field f[g] of policy i (fields.h slots). */
static void bar_values(double *v, const report *rep, const size_t *slots, size_t ngroups)
{
    for (size_t g = 0; g < ngroups; g++)
        for (size_t i = 0; i < rep->n; i++)
            v[g * rep->n + i] = rep->v[i][slots[g]];
}

static void bar_charts(topo_buf *b, const report *rep)
{
    double v[TOPO_MAX_LEVELS * MAX_SERIES] = {0};
    const char *levels[TOPO_MAX_LEVELS];
    size_t slots[TOPO_MAX_LEVELS];
    size_t n = rep->n;
    sim_svg_chart c;

    static const char *const tight_groups[] = {"tightest level when empty",
                                               "tightest level with room"};
    static const size_t tight[] = {SIM_F_TIGHT, SIM_F_TIGHT_NOW};
    bar_values(v, rep, tight, 2);
    c = bar_chart("chart-tight", "Multi-node jobs inside one domain", "domain the job could fit",
                  "multi-node jobs in one domain (%)", SIM_SVG_PERCENT);
    sim_svg_bars(b, &c, tight_groups, 2, rep->names, n, v);
    static const char *const frag_groups[] = {"free on partly used nodes",
                                              "free no whole pod can use"};
    static const size_t frag[] = {SIM_F_FRAG, SIM_F_FRAG_POD};
    bar_values(v, rep, frag, 2);
    c = bar_chart("chart-fragmentation", "GPU fragmentation (share of free GPUs)",
                  "free GPUs counted", "free GPUs, time-weighted (%)", SIM_SVG_PERCENT);
    sim_svg_bars(b, &c, frag_groups, 2, rep->names, n, v);
    static const char *const util_groups[] = {"GPU utilisation"};
    static const size_t util[] = {SIM_F_UTILISATION};
    bar_values(v, rep, util, 1);
    c = bar_chart("chart-utilisation", "GPU utilisation", "over the metric window",
                  "GPU utilisation (%)", SIM_SVG_PERCENT);
    sim_svg_bars(b, &c, util_groups, 1, rep->names, n, v);
    for (size_t k = 0; k < TOPO_SIM_CLASSES; k++)
        slots[k] = SIM_F_CLASS(k, SIM_WAIT_P99);
    bar_values(v, rep, slots, TOPO_SIM_CLASSES);
    c = bar_chart("chart-queue", "Queueing delay p99 by GPUs per job", "GPUs per job",
                  "p99 wait, arrival to start (time)", SIM_SVG_SECONDS);
    sim_svg_bars(b, &c, sim_class_names, TOPO_SIM_CLASSES, rep->names, n, v);
    static const char *const slow_groups[] = {"mean", "p99"};
    static const size_t slow[] = {SIM_F_SLOW_MEAN, SIM_F_SLOW_P99};
    bar_values(v, rep, slow, 2);
    c = bar_chart("chart-slowdown", "Modelled slowdown (GPU-time weighted)",
                  "statistic over the jobs", "slowdown (\xc3\x97 runtime at cost 1)",
                  SIM_SVG_FACTOR);
    sim_svg_bars(b, &c, slow_groups, 2, rep->names, n, v);
    for (size_t l = 0; l < rep->nlevels; l++) {
        levels[l] = sim_level_short(rep->levels[l]);
        slots[l] = sim_slot(SIM_F_SPANNED, l);
    }
    bar_values(v, rep, slots, rep->nlevels);
    c = bar_chart("chart-spanned", "Domains spanned per multi-node job (mean)", "level",
                  "domains per multi-node job", SIM_SVG_NUMBER);
    sim_svg_bars(b, &c, levels, rep->nlevels, rep->names, n, v);
}

static double figure(const topo_sim_sample *s, int chart)
{
    return chart == 0 ? s->utilisation : chart == 1 ? s->fragmentation : s->queue_length;
}

/* The three timeline charts, over several seeds each line with its
 * interval as a band; 0, or TOPO_ENOMEM. */
static int line_charts(topo_buf *b, const report *rep)
{
    static const char *const ids[] = {"timeline-utilisation", "timeline-fragmentation",
                                      "timeline-queue"};
    static const char *const titles[] = {"GPU utilisation over time",
                                         "Free GPUs on partly used nodes over time",
                                         "Jobs waiting over time"};
    static const char *const y_titles[] = {"GPU utilisation (%)",
                                           "free GPUs on partly used nodes (%)", "jobs waiting"};
    sim_svg_series data[MAX_SERIES];
    double *buf[MAX_SERIES] = {NULL};
    size_t n = rep->n;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t ns = rep->ntl[i];
        int band = rep->tl_lo[i] != NULL;
        if (ns > 0 && (buf[i] = malloc((band ? 4 : 2) * ns * sizeof(double))) == NULL) {
            rc = TOPO_ENOMEM;
            goto cleanup;
        }
        data[i].t = buf[i];
        data[i].y = buf[i] + ns;
        data[i].lo = band ? buf[i] + 2 * ns : NULL; /* one run a policy: no interval */
        data[i].hi = band ? buf[i] + 3 * ns : NULL;
        data[i].n = ns;
    }
    for (int chart = 0; chart < 3; chart++) {
        for (size_t i = 0; i < n; i++) {
            size_t ns = rep->ntl[i];
            for (size_t k = 0; k < ns; k++) {
                buf[i][k] = rep->tl[i][k].t;
                buf[i][ns + k] = figure(&rep->tl[i][k], chart);
                if (rep->tl_lo[i] != NULL) {
                    buf[i][2 * ns + k] = figure(&rep->tl_lo[i][k], chart);
                    buf[i][3 * ns + k] = figure(&rep->tl_hi[i][k], chart);
                }
            }
        }
        sim_svg_chart c = {ids[chart], titles[chart], "time since first arrival",
                           y_titles[chart], chart < 2 ? SIM_SVG_PERCENT : SIM_SVG_NUMBER,
                           1, rep->window_start, rep->window_end};
        sim_svg_lines(b, &c, rep->names, n, data);
    }

cleanup:
    for (size_t i = 0; i < n; i++)
        free(buf[i]);
    return rc;
}

/* The page; seeds the inputs' sentence about them. */
static int page(topo_buf *b, const topo_sim_info *info, const report *rep, const char *seeds)
{
    topo_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<title>topoassign simulate</title>\n<style>%s</style>\n</head>\n<body>\n"
                       "<h1>topoassign simulate</h1>\n<p id=\"inputs\">Cluster: ",
                    style);
    sim_html_escape(b, info->cluster);
    topo_buf_printf(b, " (%zu nodes, %llu GPUs free). Jobs: ", info->nodes,
                    (unsigned long long)info->capacity);
    sim_html_escape(b, info->jobs);
    topo_buf_printf(b, ". %s Metrics are defined in docs/simulate.md.</p>\n<h2>Metrics</h2>\n",
                    seeds);
    table(b, rep);
    topo_buf_puts(b, "<h2>Per policy</h2>\n<div class=\"charts\">\n");
    bar_charts(b, rep);
    topo_buf_puts(b, "</div>\n<h2>Over time</h2>\n<div class=\"charts\">\n");
    int rc = line_charts(b, rep);
    topo_buf_puts(b, "</div>\n</body>\n</html>\n");
    return rc < 0 ? rc : b->error;
}

int topo_sim_format_html(topo_buf *b, const topo_sim_info *info,
                         const topo_sim_result *const *r, size_t n)
{
    /* One seed's results are a summary of one seed: one page for both. */
    topo_sim_summary *s = NULL;
    int rc;
    if (n == 0 || n > MAX_SERIES)
        return TOPO_EINVALID;
    if ((rc = topo_sim_summary_create(&s, NULL)) < 0 ||
        (rc = topo_sim_summary_add(s, info->seed, r, info->stretched, n, NULL)) < 0 ||
        (rc = topo_sim_format_summary_html(b, info, s)) < 0) {
        topo_sim_summary_free(s);
        return rc;
    }
    topo_sim_summary_free(s);
    return 0;
}

int topo_sim_format_summary_html(topo_buf *b, const topo_sim_info *info,
                                 const topo_sim_summary *s)
{
    const uint64_t *seeds;
    size_t nseeds = topo_sim_summary_seeds(s, &seeds);
    char text[160];
    report rep = {0};
    rep.n = topo_sim_summary_policy_count(s);
    if (rep.n == 0 || rep.n > MAX_SERIES || nseeds == 0)
        return TOPO_EINVALID;
    rep.nlevels = sim_summary_levels(s, &rep.levels);
    sim_summary_window(s, &rep.window_start, &rep.window_end);
    double jobs_lo, jobs_hi;
    rep.common_jobs = sim_summary_common_jobs(s, &jobs_lo, &jobs_hi);
    rep.common_half = nseeds > 1 ? jobs_hi - rep.common_jobs : -1;
    for (size_t i = 0; i < rep.n; i++) {
        rep.names[i] = topo_sim_summary_policy(s, i);
        for (int view = 0; view < SIM_VIEWS; view++)
            rep.view[view][i] = sim_summary_values(s, i, (sim_view)view, &rep.view_lo[view][i],
                                                   &rep.view_hi[view][i]);
        rep.v[i] = rep.view[SIM_VIEW_OWN][i];
        rep.lo[i] = rep.view_lo[SIM_VIEW_OWN][i];
        rep.hi[i] = rep.view_hi[SIM_VIEW_OWN][i];
        rep.ntl[i] = topo_sim_summary_timeline(s, i, &rep.tl[i], &rep.tl_lo[i], &rep.tl_hi[i]);
    }
    if (nseeds == 1)
        snprintf(text, sizeof text, "Seed %llu.", (unsigned long long)seeds[0]);
    else
        snprintf(text, sizeof text,
                 "Seeds %llu to %llu: each figure is the mean over the %zu seeds \xc2\xb1 the "
                 "half-width of its 95 %% interval; the bands on the timelines are that interval "
                 "per point.",
                 (unsigned long long)seeds[0], (unsigned long long)seeds[nseeds - 1], nseeds);
    return page(b, info, &rep, text);
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
