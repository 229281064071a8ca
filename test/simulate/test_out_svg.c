/* Tests for lib/simulate/out_svg.c, the report's charts: interval bands
 * (one polygon per banded series, twice the line's points, under the line),
 * the metric window's marker, axis titles with units, and lines that differ
 * in colour, dash and marker. The SVG text is read back element by element. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/simulate/out_svg.h" /* white-box: the chart API is internal */
#include "topo/buf.h"

/* The layout's plot area, as out_svg.c draws it. */
#define X0 72.0
#define X1 620.0

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The i-th (from 0) occurrence of needle, or NULL. */
static const char *nth(const char *s, const char *needle, size_t i)
{
    const char *p = strstr(s, needle);
    for (; p != NULL && i > 0; i--)
        p = strstr(p + 1, needle);
    return p;
}

/* The value of attribute name in the element starting at elem, copied to
 * out; 0 if the element has no such attribute. */
static int attr(const char *elem, const char *name, char *out, size_t size)
{
    char key[64];
    const char *end = strchr(elem, '>');
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(elem, key);
    if (p == NULL || end == NULL || p > end)
        return 0;
    p += strlen(key);
    const char *q = strchr(p, '"');
    size_t n = (size_t)(q - p) < size - 1 ? (size_t)(q - p) : size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* The points of a polygon's or polyline's points attribute. */
static size_t npoints(const char *elem, double *xs, double *ys, size_t max)
{
    static char pts[65536];
    size_t n = 0;
    if (!attr(elem, "points", pts, sizeof pts))
        return 0;
    for (char *p = pts; *p;) {
        double x, y;
        int used;
        if (sscanf(p, "%lf,%lf%n", &x, &y, &used) != 2)
            break;
        if (n < max) {
            xs[n] = x;
            ys[n] = y;
        }
        n++;
        p += used;
        while (*p == ' ')
            p++;
    }
    return n;
}

/* A marker path's shape wherever it is drawn: its commands, absolute
 * coordinates taken relative to its first point. */
static void shape_of(const char *d, char *out, size_t size)
{
    double x0 = NAN, y0 = NAN;
    size_t len = 0;
    out[0] = '\0';
    while (*d && len + 16 < size) {
        char cmd = *d++;
        double v[8];
        int n = 0, used;
        while (n < 8 && sscanf(d, "%lf%n", &v[n], &used) == 1) {
            d += used;
            n++;
        }
        if (cmd == 'M' && isnan(x0)) {
            x0 = v[0];
            y0 = v[1];
        }
        len += (size_t)snprintf(out + len, size - len, "%c", cmd);
        for (int i = 0; i < n && len + 16 < size; i++) {
            double rel = v[i];
            if (cmd == 'M' || cmd == 'L')
                rel -= i % 2 ? y0 : x0;
            else if (cmd == 'H')
                rel -= x0;
            else if (cmd == 'V')
                rel -= y0;
            len += (size_t)snprintf(out + len, size - len, " %.1f", rel);
        }
    }
}

/* s reduced to its letters (a path's commands). */
static void letters(char *s)
{
    char *o = s;
    for (; *s; s++)
        if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
            *o++ = *s;
    *o = '\0';
}

static char *render_lines(const sim_svg_chart *c, const char *const *names, size_t n,
                          const sim_svg_series *data)
{
    topo_buf b = TOPO_BUF_INIT(0);
    sim_svg_lines(&b, c, names, n, data);
    assert_int_equal(b.error, 0);
    return topo_buf_take(&b, NULL);
}

static const char *const names[] = {"topo", "kube-default", "first-fit", "best-fit",
                                    "random", "first-fit-fabric", "kube-binpack", "slurm-tree"};

/* Three series, the first and the last with intervals: two polygons, each
 * with the upper ends left to right and the lower ends back, drawn before
 * (under) its line; a 2,000-point series is thinned as its line is. */
static void test_out_svg__bands(void **state)
{
    (void)state;
    static double t[2000], y[2000], lo[2000], hi[2000];
    for (size_t i = 0; i < 2000; i++) {
        t[i] = (double)i * 60;
        y[i] = 0.5;
        lo[i] = 0.25;
        hi[i] = 0.75;
    }
    sim_svg_series data[3] = {
        {t, y, lo, hi, 5},
        {t, y, NULL, NULL, 7},
        {t, y, lo, hi, 2000}, /* 800 points at most a line: every 3rd, 667 */
    };
    sim_svg_chart c = {"c", "Utilisation", "time since first arrival", "GPU utilisation (%)",
                       SIM_SVG_PERCENT, 0, 0, 0};
    char *svg = render_lines(&c, names, 3, data);
    double xs[2000], ys[2000];
    assert_int_equal(count(svg, "<polygon"), 2);
    const char *band0 = nth(svg, "<polygon", 0), *band2 = nth(svg, "<polygon", 1);
    char fill[32];
    assert_true(attr(band0, "fill", fill, sizeof fill));
    assert_string_equal(fill, sim_svg_colour(0));
    assert_true(attr(band2, "fill", fill, sizeof fill));
    assert_string_equal(fill, sim_svg_colour(2));
    assert_true(attr(band0, "fill-opacity", fill, sizeof fill));
    assert_true(atof(fill) > 0 && atof(fill) < 0.5);

    assert_int_equal(npoints(band0, xs, ys, 2000), 10);
    /* y grows downwards: the upper ends (0.75) above the lower (0.25). */
    for (size_t i = 0; i < 5; i++) {
        assert_true(ys[i] < ys[9 - i]);
        assert_true(fabs(xs[i] - xs[9 - i]) < 1e-9);
    }
    assert_true(xs[0] < xs[4]);
    const char *line0 = nth(svg, "<polyline", 0);
    double lx[8], ly[8];
    assert_int_equal(npoints(line0, lx, ly, 8), 5);
    assert_true(ys[0] < ly[0] && ly[0] < ys[9]); /* the line inside its band */
    assert_true(band0 < line0);                  /* and drawn over it */

    assert_int_equal(npoints(band2, xs, ys, 2000), 2 * 667);
    assert_int_equal(npoints(nth(svg, "<polyline", 2), xs, ys, 2000), 667);
    assert_true(band2 < nth(svg, "<polyline", 0)); /* every band under every line */
    free(svg);
}

/* The window [10 min, 50 min] of a 100-minute timeline: two labelled lines
 * at 10 % and 50 % of the plot's width, the time before and after shaded,
 * and the legend's "metric window"; none of it without a window. */
static void test_out_svg__window(void **state)
{
    (void)state;
    double t[101], y[101];
    for (size_t i = 0; i <= 100; i++) {
        t[i] = 1000 + (double)i * 60; /* from the first arrival at 1000 s */
        y[i] = 3;
    }
    sim_svg_series data[1] = {{t, y, NULL, NULL, 101}};
    sim_svg_chart c = {"q", "Jobs waiting", "time since first arrival", "jobs waiting",
                       SIM_SVG_NUMBER, 1, 1000 + 600, 1000 + 3000};
    char *svg = render_lines(&c, names, 1, data);
    char v[32];
    assert_int_equal(count(svg, "<line class=\"window\""), 2);
    const char *start = nth(svg, "<line class=\"window\"", 0);
    const char *end = nth(svg, "<line class=\"window\"", 1);
    assert_true(attr(start, "x1", v, sizeof v));
    assert_true(fabs(atof(v) - (X0 + (X1 - X0) * 0.1)) < 0.06);
    assert_true(attr(end, "x1", v, sizeof v));
    assert_true(fabs(atof(v) - (X0 + (X1 - X0) * 0.5)) < 0.06);
    assert_non_null(strstr(svg, ">window start</text>"));
    assert_non_null(strstr(svg, ">window end</text>"));
    assert_non_null(strstr(svg, ">metric window</text>"));
    /* Shaded: the legend's swatch, before the start and after the end
     * (the drain) up to the plot's right edge. */
    assert_int_equal(count(svg, "<rect class=\"outside-window\""), 3);
    const char *after = nth(svg, "<rect class=\"outside-window\"", 2);
    assert_true(attr(after, "x", v, sizeof v));
    double x = atof(v);
    assert_true(fabs(x - (X0 + (X1 - X0) * 0.5)) < 0.06);
    assert_true(attr(after, "width", v, sizeof v));
    assert_true(fabs(x + atof(v) - X1) < 0.11);
    free(svg);

    c.window = 0;
    svg = render_lines(&c, names, 1, data);
    assert_null(strstr(svg, "window"));
    free(svg);
}

/* Both axis titles; the x one in the unit its ticks use, which follows the
 * span (minutes, hours, days); tick labels carry the unit. */
static void test_out_svg__axis_titles(void **state)
{
    (void)state;
    static const struct {
        double span;
        const char *x_title, *tick;
    } cases[] = {
        {30 * 60, "time since first arrival (min)</text>", ">10 min</text>"},
        {10 * 3600, "time since first arrival (h)</text>", ">2 h</text>"},
        {6 * 86400, "time since first arrival (d)</text>", ">2 d</text>"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double t[2] = {0, cases[k].span}, y[2] = {0.2, 0.4};
        sim_svg_series data[1] = {{t, y, NULL, NULL, 2}};
        sim_svg_chart c = {"u", "GPU utilisation over time", "time since first arrival",
                           "GPU utilisation (%)", SIM_SVG_PERCENT, 0, 0, 0};
        char *svg = render_lines(&c, names, 1, data);
        assert_non_null(strstr(svg, cases[k].x_title));
        assert_non_null(strstr(svg, cases[k].tick));
        assert_non_null(strstr(svg, ">GPU utilisation (%)</text>"));
        assert_non_null(strstr(svg, ">50.0%</text>"));
        assert_non_null(strstr(svg, "class=\"title\">GPU utilisation over time</text>"));
        free(svg);
    }

    static const char *const groups[] = {"mean", "p99"};
    double v[4] = {1.2, 1.3, 1.5, 1.6};
    sim_svg_chart c = {"s", "Slowdown", "statistic", "slowdown (\xc3\x97 runtime)",
                       SIM_SVG_FACTOR, 0, 0, 0};
    topo_buf b = TOPO_BUF_INIT(0);
    sim_svg_bars(&b, &c, groups, 2, names, 2, v);
    char *svg = topo_buf_take(&b, NULL);
    assert_non_null(svg);
    assert_non_null(strstr(svg, "class=\"axis-title x-title\" x=\"346.0\" y=\"310\" "
                                "text-anchor=\"middle\">statistic</text>"));
    assert_non_null(strstr(svg, "transform=\"rotate(-90 14 "));
    assert_non_null(strstr(svg, ">slowdown (\xc3\x97 runtime)</text>"));
    assert_non_null(strstr(svg, ">1&#215;</text>")); /* a tick: 1 of 2 in four steps */
    assert_int_equal(count(svg, "class=\"bar\""), 4);
    free(svg);
}

/* Eight policies on the same values: eight lines, each its own colour and
 * dash pattern and slightly transparent, each with markers, and the legend
 * showing each line's colour, dash and marker. */
static void test_out_svg__lines_distinct(void **state)
{
    (void)state;
    double t[100], y[100];
    for (size_t i = 0; i < 100; i++) {
        t[i] = (double)i * 3600;
        y[i] = 0.5;
    }
    sim_svg_series data[8];
    for (size_t s = 0; s < 8; s++)
        data[s] = (sim_svg_series){t, y, NULL, NULL, 100};
    sim_svg_chart c = {"u", "Utilisation", "time since first arrival", "GPU utilisation (%)",
                       SIM_SVG_PERCENT, 1, 0, 50 * 3600};
    char *svg = render_lines(&c, names, 8, data);
    char stroke[8][32], dash[8][32], v[32];
    assert_int_equal(count(svg, "<polyline"), 8);
    for (size_t s = 0; s < 8; s++) {
        const char *line = nth(svg, "<polyline", s);
        assert_true(attr(line, "stroke", stroke[s], sizeof stroke[s]));
        assert_true(attr(line, "stroke-dasharray", dash[s], sizeof dash[s]));
        assert_true(attr(line, "stroke-opacity", v, sizeof v));
        assert_true(atof(v) > 0.5 && atof(v) < 1);
        for (size_t o = 0; o < s; o++) {
            assert_string_not_equal(stroke[s], stroke[o]);
            assert_string_not_equal(dash[s], dash[o]);
        }
        /* The legend's sample: the same colour and dash. */
        const char *sample = nth(svg, "<line class=\"legend-line\"", s);
        assert_non_null(sample);
        assert_true(attr(sample, "stroke-dasharray", v, sizeof v));
        assert_string_equal(v, dash[s]);
        assert_true(attr(sample, "stroke", v, sizeof v));
        assert_string_equal(v, stroke[s]);
    }
    /* Markers: one path in the legend and one along each line, each with
     * its own shape; along the line about ten, at another offset per line. */
    assert_int_equal(count(svg, "<path class=\"marker\""), 16);
    char shape[8][256], d[4096];
    for (size_t s = 0; s < 8; s++) {
        const char *legend = nth(svg, "<path class=\"marker\"", s);
        const char *along = nth(svg, "<path class=\"marker\"", 8 + s);
        assert_true(attr(legend, "d", d, sizeof d));
        shape_of(d, shape[s], sizeof shape[s]);
        for (size_t o = 0; o < s; o++)
            assert_string_not_equal(shape[s], shape[o]);
        assert_true(along > nth(svg, "<polyline", s));
        assert_true(attr(along, "d", d, sizeof d));
        /* The markers along the line are drawn as the legend's is (the
         * same commands; the coordinates round differently elsewhere). */
        char legend_cmds[64], along_cmds[256];
        assert_true(attr(legend, "d", legend_cmds, sizeof legend_cmds));
        letters(legend_cmds);
        strncpy(along_cmds, d, sizeof along_cmds - 1);
        along_cmds[sizeof along_cmds - 1] = '\0';
        letters(along_cmds);
        assert_memory_equal(along_cmds, legend_cmds, strlen(legend_cmds));
        assert_true(count(d, "M") >= 9);
    }
    free(svg);
}

/* All ten policies in one chart: past the eighth the colours come round
 * again, each then with another dash pattern, so no two lines (colour and
 * dash together) look alike. */
static void test_out_svg__ten_lines_apart(void **state)
{
    (void)state;
    static const char *const ten[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
    double t[10], y[10];
    for (size_t i = 0; i < 10; i++) {
        t[i] = (double)i * 3600;
        y[i] = 0.5;
    }
    sim_svg_series data[10];
    for (size_t s = 0; s < 10; s++)
        data[s] = (sim_svg_series){t, y, NULL, NULL, 10};
    sim_svg_chart c = {"u", "Utilisation", "time since first arrival", "GPU utilisation (%)",
                       SIM_SVG_PERCENT, 1, 0, 9 * 3600};
    char *svg = render_lines(&c, ten, 10, data);
    char style[10][80], stroke[32], dash[32];
    assert_int_equal(count(svg, "<polyline"), 10);
    for (size_t s = 0; s < 10; s++) {
        const char *line = nth(svg, "<polyline", s);
        assert_true(attr(line, "stroke", stroke, sizeof stroke));
        assert_true(attr(line, "stroke-dasharray", dash, sizeof dash));
        snprintf(style[s], sizeof style[s], "%s/%s", stroke, dash);
        for (size_t o = 0; o < s; o++)
            assert_string_not_equal(style[s], style[o]);
    }
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_svg__bands),
        cmocka_unit_test(test_out_svg__window),
        cmocka_unit_test(test_out_svg__axis_titles),
        cmocka_unit_test(test_out_svg__lines_distinct),
        cmocka_unit_test(test_out_svg__ten_lines_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
