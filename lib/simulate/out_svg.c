/* Inline SVG charts for the HTML report: grouped bars and line charts,
 * plain SVG 1.1 elements with their own sizes and colours, no scripts, no
 * styles from outside. Every chart has a title, axis titles with units and
 * tick labels with units; line charts mark the metrics' window.
 *
 * Lines must stay apart when they lie on top of each other (two policies
 * often give the same utilisation for hours): each series has its own
 * colour from a palette colour-blind readers can tell apart, its own dash
 * pattern and its own marker shape every few points, and is drawn slightly
 * transparent so a line under another still shows. */
#include "out_svg.h"

#include <math.h>
#include <stdio.h>

#define W 640.0
#define H 320.0
#define LEFT 72.0
#define RIGHT 20.0
#define BOTTOM 56.0
#define LEGEND_TOP 34.0
#define LEGEND_ROW 16.0
#define LEGEND_PER_ROW 4
#define MAX_LINE_POINTS 800
#define MARKERS_PER_LINE 10
#define MARKER_R 3.5

/* Okabe and Ito's colour-blind safe palette (M. Okabe, K. Ito, "Color
 * Universal Design (CUD): how to make figures and presentations that are
 * friendly to colorblind people", 2008, https://jfly.uni-koeln.de/color/),
 * yellow last: it is the hardest to see on white. One colour per policy for
 * the first eight; past them the colours come round again with another dash
 * pattern and marker (style_of), so no two series of a chart look alike. */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#F0E442"};
#define NCOLOURS (sizeof palette / sizeof palette[0])

/* One dash pattern per colour: solid, dashed, dotted and their mixes. */
static const char *const dashes[NCOLOURS] = {"none",    "7 3",         "2 2",     "9 3 2 3",
                                             "4 4",     "12 3 3 3 3 3", "1 4",     "6 2 1 2"};

typedef enum marker_shape {
    MARK_CIRCLE,
    MARK_SQUARE,
    MARK_TRIANGLE,
    MARK_DIAMOND,
    MARK_TRIANGLE_DOWN,
    MARK_PLUS, /* this one and those after it are strokes, not filled */
    MARK_CROSS,
    MARK_ASTERISK,
} marker_shape;

/* The plot area inside the frame. */
typedef struct plot_box {
    double x0, x1, y0, y1; /* y0 the top */
} plot_box;

/* Series s's dash pattern and marker: its colour's own for the first round
 * of colours, shifted for each round after it. */
static size_t style_of(size_t series, size_t shift)
{
    return (series + shift * (series / NCOLOURS)) % NCOLOURS;
}

const char *sim_svg_colour(size_t series)
{
    return palette[series % NCOLOURS];
}

const char *sim_svg_dash(size_t series)
{
    return dashes[style_of(series, 3)];
}

static marker_shape marker_of(size_t series)
{
    return (marker_shape)style_of(series, 5);
}

void sim_html_escape(topo_buf *b, const char *s)
{
    for (; s != NULL && *s; s++) {
        switch (*s) {
        case '&':
            topo_buf_puts(b, "&amp;");
            break;
        case '<':
            topo_buf_puts(b, "&lt;");
            break;
        case '>':
            topo_buf_puts(b, "&gt;");
            break;
        case '"':
            topo_buf_puts(b, "&quot;");
            break;
        default:
            topo_buf_putc(b, *s);
        }
    }
}

/* The smallest of 1, 2 or 5 times a power of ten at or above v. */
static double nice_ceil(double v)
{
    if (!(v > 0))
        return 1;
    double p = pow(10, floor(log10(v)));
    double m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* A round upper bound for an axis (of minutes or hours for durations). */
static double axis_max(double v, sim_svg_unit unit)
{
    if (unit == SIM_SVG_SECONDS && v > 3600)
        return 3600 * nice_ceil(v / 3600);
    if (unit == SIM_SVG_SECONDS && v > 60)
        return 60 * nice_ceil(v / 60);
    return unit == SIM_SVG_PERCENT && v <= 1 + 1e-9 ? 1 : nice_ceil(v); /* 1 + rounding */
}

static void value_text(char *buf, size_t size, double v, sim_svg_unit unit)
{
    if (unit == SIM_SVG_PERCENT)
        snprintf(buf, size, "%.1f%%", 100 * v);
    else if (unit == SIM_SVG_SECONDS) {
        if (v < 60)
            snprintf(buf, size, "%.0f s", v);
        else if (v < 3600)
            snprintf(buf, size, "%.0f min", v / 60);
        else if (v < 86400)
            snprintf(buf, size, "%.1f h", v / 3600);
        else
            snprintf(buf, size, "%.1f d", v / 86400);
    } else if (unit == SIM_SVG_FACTOR)
        snprintf(buf, size, "%.3g&#215;", v);
    else
        snprintf(buf, size, "%.3g", v);
}

/* The svg element, its accessible title and the visible one. */
static void open_chart(topo_buf *b, const sim_svg_chart *c)
{
    topo_buf_printf(b,
                    "<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
                    "<title>",
                    c->id, W, H, W, H);
    sim_html_escape(b, c->title);
    topo_buf_printf(b, "</title>\n<text x=\"%.0f\" y=\"16\" class=\"title\">", LEFT);
    sim_html_escape(b, c->title);
    topo_buf_puts(b, "</text>\n");
}

/* The legend's rows below the title (entries of them, LEGEND_PER_ROW a
 * row) and the plot area under them. */
static plot_box layout(size_t entries)
{
    size_t rows = (entries + LEGEND_PER_ROW - 1) / LEGEND_PER_ROW;
    plot_box p = {LEFT, W - RIGHT, LEGEND_TOP + LEGEND_ROW * (double)(rows ? rows : 1) + 4,
                  H - BOTTOM};
    return p;
}

static void legend_at(size_t entry, double *x, double *y)
{
    *x = LEFT + (W - LEFT - RIGHT) / LEGEND_PER_ROW * (double)(entry % LEGEND_PER_ROW);
    *y = LEGEND_TOP + LEGEND_ROW * (double)(entry / LEGEND_PER_ROW);
}

static void legend_text(topo_buf *b, double x, double y, const char *label)
{
    topo_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">", x + 28, y);
    sim_html_escape(b, label);
    topo_buf_puts(b, "</text>\n");
}

/* One marker's outline at (x, y), appended to a path's d. */
static void marker(topo_buf *b, marker_shape shape, double x, double y)
{
    double r = MARKER_R;
    switch (shape) {
    case MARK_CIRCLE:
        topo_buf_printf(b, "M%.1f %.1fa%.1f %.1f 0 1 0 %.1f 0a%.1f %.1f 0 1 0 %.1f 0Z", x - r, y,
                        r, r, 2 * r, r, r, -2 * r);
        break;
    case MARK_SQUARE:
        topo_buf_printf(b, "M%.1f %.1fh%.1fv%.1fh%.1fZ", x - r, y - r, 2 * r, 2 * r, -2 * r);
        break;
    case MARK_TRIANGLE:
        topo_buf_printf(b, "M%.1f %.1fL%.1f %.1fL%.1f %.1fZ", x, y - 1.2 * r, x + r, y + r, x - r,
                        y + r);
        break;
    case MARK_DIAMOND:
        topo_buf_printf(b, "M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ", x, y - 1.3 * r,
                        x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y);
        break;
    case MARK_TRIANGLE_DOWN:
        topo_buf_printf(b, "M%.1f %.1fL%.1f %.1fL%.1f %.1fZ", x, y + 1.2 * r, x + r, y - r, x - r,
                        y - r);
        break;
    case MARK_ASTERISK: /* a vertical bar and the cross */
        topo_buf_printf(b, "M%.1f %.1fV%.1f", x, y - r, y + r);
        marker(b, MARK_CROSS, x, y);
        break;
    case MARK_CROSS:
        topo_buf_printf(b, "M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f", x - r, y - r, x + r, y + r,
                        x - r, y + r, x + r, y - r);
        break;
    case MARK_PLUS:
        topo_buf_printf(b, "M%.1f %.1fH%.1fM%.1f %.1fV%.1f", x - r, y, x + r, x, y - r, y + r);
        break;
    }
}

static void open_markers(topo_buf *b, size_t series)
{
    marker_shape shape = marker_of(series);
    topo_buf_printf(b, "<path class=\"marker\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.2\" d=\"",
                    shape >= MARK_PLUS ? "none" : sim_svg_colour(series), sim_svg_colour(series));
}

/* Series s in the legend as it is drawn: colour, dash and marker. */
static void legend_line(topo_buf *b, size_t s, double x, double y, const char *label)
{
    topo_buf_printf(b,
                    "<line class=\"legend-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-dasharray=\"%s\" stroke-width=\"1.5\"/>",
                    x, y - 4, x + 24, y - 4, sim_svg_colour(s), sim_svg_dash(s));
    open_markers(b, s);
    marker(b, marker_of(s), x + 12, y - 4);
    topo_buf_puts(b, "\"/>");
    legend_text(b, x, y, label);
}

/* Grid lines and tick labels over [0, ymax] in five steps, the axes and
 * both axis titles (the y one turned upright along the axis; the x one
 * followed by x_unit in brackets unless NULL). */
static void axes(topo_buf *b, const sim_svg_chart *c, const plot_box *p, double ymax,
                 const char *x_unit)
{
    char t[32];
    for (int i = 0; i <= 4; i++) {
        double v = ymax * i / 4, y = p->y1 - (p->y1 - p->y0) * i / 4;
        value_text(t, sizeof t, v, c->unit);
        topo_buf_printf(b,
                        "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\" "
                        "stroke=\"#ddd\"/><text x=\"%.0f\" y=\"%.1f\" class=\"axis\" "
                        "text-anchor=\"end\">%s</text>\n",
                        p->x0, y, p->x1, y, p->x0 - 6, y + 4, t);
    }
    topo_buf_printf(b,
                    "<path class=\"axis-line\" fill=\"none\" stroke=\"#666\" "
                    "d=\"M%.0f %.1fV%.1fH%.0f\"/>\n",
                    p->x0, p->y0, p->y1, p->x1);
    double cy = (p->y0 + p->y1) / 2;
    topo_buf_printf(b,
                    "<text class=\"axis-title y-title\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
                    "transform=\"rotate(-90 14 %.1f)\">",
                    cy, cy);
    sim_html_escape(b, c->y_title);
    topo_buf_printf(b,
                    "</text>\n<text class=\"axis-title x-title\" x=\"%.1f\" y=\"%.0f\" "
                    "text-anchor=\"middle\">",
                    (p->x0 + p->x1) / 2, H - 10);
    sim_html_escape(b, c->x_title);
    if (x_unit != NULL)
        topo_buf_printf(b, " (%s)", x_unit);
    topo_buf_puts(b, "</text>\n");
}

void sim_svg_bars(topo_buf *b, const sim_svg_chart *c, const char *const *groups, size_t ngroups,
                  const char *const *series, size_t nseries, const double *v)
{
    double top = 0, lx, ly;
    char t[32];
    for (size_t i = 0; i < ngroups * nseries; i++)
        top = v[i] > top ? v[i] : top;
    double ymax = axis_max(top, c->unit);
    plot_box p = layout(nseries);
    open_chart(b, c);
    for (size_t s = 0; s < nseries; s++) {
        legend_at(s, &lx, &ly);
        topo_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"24\" height=\"10\" fill=\"%s\"/>",
                        lx, ly - 9, sim_svg_colour(s));
        legend_text(b, lx, ly, series[s]);
    }
    axes(b, c, &p, ymax, NULL);
    double gw = (p.x1 - p.x0) / (double)(ngroups ? ngroups : 1);
    double bw = gw * 0.8 / (double)(nseries ? nseries : 1);
    for (size_t g = 0; g < ngroups; g++) {
        double gx = p.x0 + gw * (double)g + gw * 0.1;
        for (size_t s = 0; s < nseries; s++) {
            double val = v[g * nseries + s];
            double h = (p.y1 - p.y0) * (val > 0 ? val : 0) / ymax;
            double x = gx + bw * (double)s, y = p.y1 - h;
            value_text(t, sizeof t, val, c->unit);
            topo_buf_printf(b,
                            "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                            "height=\"%.1f\" fill=\"%s\"><title>",
                            x, y, bw * 0.9, h, sim_svg_colour(s));
            sim_html_escape(b, series[s]);
            topo_buf_printf(b, ": %s</title></rect>\n", t);
            if (bw >= 28)
                topo_buf_printf(b,
                                "<text x=\"%.1f\" y=\"%.1f\" class=\"value\" "
                                "text-anchor=\"middle\">%s</text>\n",
                                x + bw * 0.45, y - 3, t);
        }
        topo_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">",
                        p.x0 + gw * ((double)g + 0.5), p.y1 + 16);
        sim_html_escape(b, groups[g]);
        topo_buf_puts(b, "</text>\n");
    }
    topo_buf_puts(b, "</svg>\n");
}

/* The time axis' unit for a span: minutes, hours or days. */
static double time_unit(double span, const char **name)
{
    double per = span >= 4 * 86400 ? 86400 : span >= 2 * 3600 ? 3600 : 60;
    *name = per == 86400 ? "d" : per == 3600 ? "h" : "min";
    return per;
}

/* The time axis' ticks: round steps of the unit from t0. */
static void time_ticks(topo_buf *b, const plot_box *p, double span)
{
    const char *unit;
    double per = time_unit(span, &unit);
    double step = nice_ceil(span / per / 5);
    for (int i = 0; i <= 10 && step * i <= span / per * (1 + 1e-9); i++) {
        double x = p->x0 + (p->x1 - p->x0) * step * i * per / span;
        topo_buf_printf(b,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#666\"/>"
                        "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">"
                        "%g %s</text>\n",
                        x, p->y1, x, p->y1 + 4, x, p->y1 + 16, step * i, unit);
    }
}

static double px(const plot_box *p, double t, double t0, double t1)
{
    return p->x0 + (p->x1 - p->x0) * (t - t0) / (t1 - t0);
}

static double py(const plot_box *p, double v, double ymax)
{
    return p->y1 - (p->y1 - p->y0) * (v > 0 ? v : 0) / ymax;
}

/* Points drawn of a line of n: every how many'th, at most MAX_LINE_POINTS. */
static size_t thin(size_t n)
{
    return n > MAX_LINE_POINTS ? (n + MAX_LINE_POINTS - 1) / MAX_LINE_POINTS : 1;
}

/* The metrics' window: the time before and after it shaded, its two ends
 * drawn and named. */
static void window_marker(topo_buf *b, const sim_svg_chart *c, const plot_box *p, double t0,
                          double t1)
{
    double xs = fmax(p->x0, fmin(p->x1, px(p, c->window_start, t0, t1)));
    double xe = fmax(xs, fmin(p->x1, px(p, c->window_end, t0, t1)));
    if (xs > p->x0)
        topo_buf_printf(b,
                        "<rect class=\"outside-window\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.1f\" fill=\"#000\" fill-opacity=\"0.07\"/>\n",
                        p->x0, p->y0, xs - p->x0, p->y1 - p->y0);
    if (xe < p->x1)
        topo_buf_printf(b,
                        "<rect class=\"outside-window\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.1f\" fill=\"#000\" fill-opacity=\"0.07\"/>\n",
                        xe, p->y0, p->x1 - xe, p->y1 - p->y0);
    /* The end's label goes inside the window unless the window is too
     * narrow for both labels; then it goes after the end. */
    int end_inside = xe - xs > 130;
    topo_buf_printf(b,
                    "<line class=\"window\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#444\" stroke-width=\"1.2\"/>"
                    "<text class=\"window-label\" x=\"%.1f\" y=\"%.1f\">window start</text>\n"
                    "<line class=\"window\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#444\" stroke-width=\"1.2\"/>"
                    "<text class=\"window-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">"
                    "window end</text>\n",
                    xs, p->y0, xs, p->y1, xs + 3, p->y0 + 11, xe, p->y0, xe, p->y1,
                    end_inside ? xe - 3 : xe + 3, p->y0 + 11, end_inside ? "end" : "start");
}

/* Series s's interval: its upper ends left to right, then its lower ends
 * back, one polygon with twice the line's points. */
static void band(topo_buf *b, const sim_svg_series *d, size_t s, const char *name,
                 const plot_box *p, double t0, double t1, double ymax, size_t every)
{
    size_t drawn = d->n == 0 ? 0 : (d->n - 1) / every + 1;
    topo_buf_printf(b,
                    "<polygon class=\"band\" fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" "
                    "points=\"",
                    sim_svg_colour(s));
    for (size_t j = 0; j < drawn; j++)
        topo_buf_printf(b, "%.1f,%.1f ", px(p, d->t[j * every], t0, t1),
                        py(p, d->hi[j * every], ymax));
    for (size_t j = drawn; j-- > 0;)
        topo_buf_printf(b, "%.1f,%.1f ", px(p, d->t[j * every], t0, t1),
                        py(p, d->lo[j * every], ymax));
    topo_buf_puts(b, "\"><title>");
    sim_html_escape(b, name);
    topo_buf_puts(b, ": interval</title></polygon>\n");
}

void sim_svg_lines(topo_buf *b, const sim_svg_chart *c, const char *const *series, size_t nseries,
                   const sim_svg_series *data)
{
    double t0 = INFINITY, t1 = -INFINITY, top = 0, lx, ly;
    const char *unit;
    for (size_t s = 0; s < nseries; s++)
        for (size_t i = 0; i < data[s].n; i++) {
            double x = data[s].t[i], y = data[s].hi ? fmax(data[s].y[i], data[s].hi[i])
                                                    : data[s].y[i];
            t0 = x < t0 ? x : t0;
            t1 = x > t1 ? x : t1;
            top = y > top ? y : top;
        }
    if (c->window) {
        t0 = fmin(t0, c->window_start);
        t1 = fmax(t1, c->window_end);
    }
    if (!(t1 > t0) || !isfinite(t1 - t0)) {
        t0 = 0;
        t1 = 1;
    }
    double ymax = axis_max(top, c->unit);
    plot_box p = layout(nseries + (c->window ? 1 : 0));
    open_chart(b, c);
    for (size_t s = 0; s < nseries; s++) {
        legend_at(s, &lx, &ly);
        legend_line(b, s, lx, ly, series[s]);
    }
    if (c->window) { /* the window's legend: a clear box between shaded ends */
        legend_at(nseries, &lx, &ly);
        topo_buf_printf(b,
                        "<rect class=\"outside-window\" x=\"%.1f\" y=\"%.1f\" width=\"24\" "
                        "height=\"10\" fill=\"#000\" fill-opacity=\"0.07\"/>"
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#fff\" "
                        "stroke=\"#444\" stroke-width=\"1.2\"/>",
                        lx, ly - 9, lx + 6, ly - 9);
        legend_text(b, lx, ly, "metric window");
        window_marker(b, c, &p, t0, t1);
    }
    time_unit(t1 - t0, &unit);
    axes(b, c, &p, ymax, unit);
    time_ticks(b, &p, t1 - t0);
    for (size_t s = 0; s < nseries; s++) {
        const sim_svg_series *d = &data[s];
        if (d->lo != NULL && d->hi != NULL)
            band(b, d, s, series[s], &p, t0, t1, ymax, thin(d->n));
    }
    for (size_t s = 0; s < nseries; s++) {
        const sim_svg_series *d = &data[s];
        size_t n = d->n, every = thin(n);
        topo_buf_printf(b,
                        "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" "
                        "stroke-dasharray=\"%s\" stroke-width=\"1.5\" stroke-opacity=\"0.85\" "
                        "points=\"",
                        sim_svg_colour(s), sim_svg_dash(s));
        for (size_t i = 0; i < n; i += every)
            topo_buf_printf(b, "%.1f,%.1f ", px(&p, d->t[i], t0, t1), py(&p, d->y[i], ymax));
        topo_buf_puts(b, "\"><title>");
        sim_html_escape(b, series[s]);
        topo_buf_puts(b, "</title></polyline>\n");
        /* A marker every k drawn points, each series starting at another
         * offset so markers of lines on top of each other do not hide
         * one another. */
        size_t drawn = n == 0 ? 0 : (n - 1) / every + 1;
        size_t k = drawn / MARKERS_PER_LINE ? drawn / MARKERS_PER_LINE : 1;
        size_t first = k * s / (nseries ? nseries : 1);
        open_markers(b, s);
        for (size_t j = first; j < drawn; j += k)
            marker(b, marker_of(s), px(&p, d->t[j * every], t0, t1),
                   py(&p, d->y[j * every], ymax));
        topo_buf_printf(b, "\" fill-opacity=\"0.85\" stroke-opacity=\"0.85\"/>\n");
    }
    topo_buf_puts(b, "</svg>\n");
}
