/* Inline SVG charts for the HTML report (out_svg.c). */
#ifndef TOPO_SIM_OUT_SVG_H
#define TOPO_SIM_OUT_SVG_H

#include <stddef.h>

#include "topo/buf.h"

typedef enum sim_svg_unit {
    SIM_SVG_PERCENT, /* fractions, shown as percentages */
    SIM_SVG_SECONDS,
    SIM_SVG_NUMBER,
} sim_svg_unit;

/* One line: n points (t[i], y[i]). */
typedef struct sim_svg_series {
    const double *t, *y;
    size_t n;
} sim_svg_series;

/* The colour of series i, the same in every chart. */
const char *sim_svg_colour(size_t series);
/* s with &, <, > and " escaped. */
void sim_html_escape(topo_buf *b, const char *s);
/* Grouped bars: v[g * nseries + s] is series s in group g. */
void sim_svg_bars(topo_buf *b, const char *id, const char *title, const char *const *groups,
                  size_t ngroups, const char *const *series, size_t nseries, const double *v,
                  sim_svg_unit unit);
/* One line per series over time. */
void sim_svg_lines(topo_buf *b, const char *id, const char *title, const char *const *series,
                   size_t nseries, const sim_svg_series *data, sim_svg_unit unit);

#endif
