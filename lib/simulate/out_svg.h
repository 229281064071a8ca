/* Inline SVG charts for the HTML report (out_svg.c). */
#ifndef TOPO_SIM_OUT_SVG_H
#define TOPO_SIM_OUT_SVG_H

#include <stddef.h>

#include "topo/buf.h"

typedef enum sim_svg_unit {
    SIM_SVG_PERCENT, /* fractions, shown as percentages */
    SIM_SVG_SECONDS, /* shown as s, m, h or d */
    SIM_SVG_NUMBER,  /* a count: the axis title names what is counted */
    SIM_SVG_FACTOR,  /* a ratio, shown as 1.5× */
} sim_svg_unit;

/* One chart's frame: its id (the svg element's), the title above it, the
 * axis titles and how the values are shown. y_title names its unit; a line
 * chart's x_title gets the time unit its ticks use appended, " (h)". */
typedef struct sim_svg_chart {
    const char *id, *title;
    const char *x_title, *y_title;
    sim_svg_unit unit;
    /* Line charts: nonzero marks [window_start, window_end] (the metrics'
     * window) with two labelled lines and the time outside it shaded. */
    int window;
    double window_start, window_end;
} sim_svg_chart;

/* One line: n points (t[i], y[i]). lo and hi are NULL, or n points each:
 * an interval drawn as a translucent band under the line. */
typedef struct sim_svg_series {
    const double *t, *y;
    const double *lo, *hi;
    size_t n;
} sim_svg_series;

/* The colour of series i, the same in every chart. */
const char *sim_svg_colour(size_t series);
/* The stroke-dasharray of series i in line charts ("none" for the first). */
const char *sim_svg_dash(size_t series);
/* s with &, <, > and " escaped. */
void sim_html_escape(topo_buf *b, const char *s);
/* Grouped bars: v[g * nseries + s] is series s in group g; the x axis
 * names the groups. */
void sim_svg_bars(topo_buf *b, const sim_svg_chart *c, const char *const *groups, size_t ngroups,
                  const char *const *series, size_t nseries, const double *v);
/* One line per series over time, in seconds; the x axis counts from the
 * first point. */
void sim_svg_lines(topo_buf *b, const sim_svg_chart *c, const char *const *series, size_t nseries,
                   const sim_svg_series *data);

#endif
