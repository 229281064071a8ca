/* Inline SVG charts for the HTML report: grouped bars and line charts,
 * plain SVG 1.1 elements with their own sizes, no scripts, no styles from
 * outside. */
#include "out_svg.h"

#include <math.h>
#include <stdio.h>

#define W 640.0
#define H 280.0
#define LEFT 60.0
#define RIGHT 20.0
#define TOP 40.0
#define BOTTOM 50.0
#define MAX_LINE_POINTS 800

static const char *const palette[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                      "#66a61e", "#e6ab02", "#a6761d", "#666666"};
#define NCOLOURS (sizeof palette / sizeof palette[0])

const char *sim_svg_colour(size_t series)
{
    return palette[series % NCOLOURS];
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

/* A round upper bound for an axis: 1, 2 or 5 times a power of ten (of
 * minutes or hours for durations). */
static double nice_max(double v);

static double axis_max(double v, sim_svg_unit unit)
{
    if (unit == SIM_SVG_SECONDS && v > 3600)
        return 3600 * nice_max(v / 3600);
    if (unit == SIM_SVG_SECONDS && v > 60)
        return 60 * nice_max(v / 60);
    return unit == SIM_SVG_PERCENT && v <= 1 + 1e-9 ? 1 : nice_max(v); /* 1 + rounding */
}

static double nice_max(double v)
{
    if (!(v > 0))
        return 1;
    double p = pow(10, floor(log10(v)));
    double m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void value_text(char *buf, size_t size, double v, sim_svg_unit unit)
{
    if (unit == SIM_SVG_PERCENT)
        snprintf(buf, size, "%.1f%%", 100 * v);
    else if (unit == SIM_SVG_SECONDS) {
        if (v < 60)
            snprintf(buf, size, "%.0fs", v);
        else if (v < 3600)
            snprintf(buf, size, "%.0fm", v / 60);
        else if (v < 86400)
            snprintf(buf, size, "%.1fh", v / 3600);
        else
            snprintf(buf, size, "%.1fd", v / 86400);
    } else
        snprintf(buf, size, "%.3g", v);
}

static void frame(topo_buf *b, const char *id, const char *title, double ymax, sim_svg_unit unit,
                  const char *const *series, size_t nseries)
{
    char t[32];
    topo_buf_printf(b,
                    "<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
                    "<title>",
                    id, W, H, W, H);
    sim_html_escape(b, title);
    topo_buf_printf(b, "</title>\n<text x=\"%.0f\" y=\"16\" class=\"title\">", LEFT);
    sim_html_escape(b, title);
    topo_buf_puts(b, "</text>\n");
    /* Legend on the top line, right of the title. */
    for (size_t s = 0; s < nseries; s++) {
        double x = W - RIGHT - (double)(nseries - s) * 110;
        topo_buf_printf(b,
                        "<rect x=\"%.0f\" y=\"24\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                        "<text x=\"%.0f\" y=\"33\" class=\"legend\">",
                        x, sim_svg_colour(s), x + 14);
        sim_html_escape(b, series[s]);
        topo_buf_puts(b, "</text>\n");
    }
    /* Axis and grid: five steps. */
    for (int i = 0; i <= 4; i++) {
        double v = ymax * i / 4, y = H - BOTTOM - (H - TOP - BOTTOM) * i / 4;
        value_text(t, sizeof t, v, unit);
        topo_buf_printf(b,
                        "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/>"
                        "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">%s</text>\n",
                        LEFT, y, W - RIGHT, y, LEFT - 6, y + 4, t);
    }
}

void sim_svg_bars(topo_buf *b, const char *id, const char *title, const char *const *groups,
                  size_t ngroups, const char *const *series, size_t nseries, const double *v,
                  sim_svg_unit unit)
{
    double top = 0;
    char t[32];
    for (size_t i = 0; i < ngroups * nseries; i++)
        top = v[i] > top ? v[i] : top;
    double ymax = axis_max(top, unit);
    frame(b, id, title, ymax, unit, series, nseries);
    double gw = (W - LEFT - RIGHT) / (double)(ngroups ? ngroups : 1);
    double bw = gw * 0.8 / (double)(nseries ? nseries : 1);
    for (size_t g = 0; g < ngroups; g++) {
        double gx = LEFT + gw * (double)g + gw * 0.1;
        for (size_t s = 0; s < nseries; s++) {
            double val = v[g * nseries + s];
            double h = (H - TOP - BOTTOM) * (val > 0 ? val : 0) / ymax;
            double x = gx + bw * (double)s, y = H - BOTTOM - h;
            value_text(t, sizeof t, val, unit);
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
                        LEFT + gw * ((double)g + 0.5), H - BOTTOM + 16);
        sim_html_escape(b, groups[g]);
        topo_buf_puts(b, "</text>\n");
    }
    topo_buf_puts(b, "</svg>\n");
}

void sim_svg_lines(topo_buf *b, const char *id, const char *title, const char *const *series,
                   size_t nseries, const sim_svg_series *data, sim_svg_unit unit)
{
    double t0 = INFINITY, t1 = -INFINITY, top = 0;
    char t[32];
    for (size_t s = 0; s < nseries; s++)
        for (size_t i = 0; i < data[s].n; i++) {
            double x = data[s].t[i], y = data[s].y[i];
            t0 = x < t0 ? x : t0;
            t1 = x > t1 ? x : t1;
            top = y > top ? y : top;
        }
    if (!(t1 > t0)) {
        t0 = 0;
        t1 = 1;
    }
    double ymax = axis_max(top, unit);
    frame(b, id, title, ymax, unit, series, nseries);
    /* The time axis in hours (or days) from the first point. */
    double span = t1 - t0, per = span > 4 * 86400 ? 86400 : 3600;
    for (int i = 0; i <= 4; i++) {
        double x = LEFT + (W - LEFT - RIGHT) * i / 4;
        snprintf(t, sizeof t, "%.1f %s", span * i / 4 / per, per == 86400 ? "d" : "h");
        topo_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">%s"
                           "</text>\n",
                        x, H - BOTTOM + 16, t);
    }
    for (size_t s = 0; s < nseries; s++) {
        size_t n = data[s].n, every = n > MAX_LINE_POINTS ? (n + MAX_LINE_POINTS - 1) / MAX_LINE_POINTS : 1;
        topo_buf_printf(b, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" points=\"",
                        sim_svg_colour(s));
        for (size_t i = 0; i < n; i += every) {
            double x = data[s].t[i], y = data[s].y[i];
            topo_buf_printf(b, "%.1f,%.1f ", LEFT + (W - LEFT - RIGHT) * (x - t0) / (t1 - t0),
                            H - BOTTOM - (H - TOP - BOTTOM) * (y > 0 ? y : 0) / ymax);
        }
        topo_buf_puts(b, "\"><title>");
        sim_html_escape(b, series[s]);
        topo_buf_puts(b, "</title></polyline>\n");
    }
    topo_buf_puts(b, "</svg>\n");
}
