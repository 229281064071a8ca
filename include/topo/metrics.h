/* Metrics for topo's daemons, rendered in the Prometheus text exposition
 * format 0.0.4 (what /metrics serves).
 *
 * A registry holds families (a name, help text, a type and label names),
 * registered once at start-up; a family holds series, one per set of label
 * values, looked up or created on first use. Updating a series is a single
 * atomic operation, so request threads count without a lock; only creating
 * a series takes the family's mutex. Series are never removed, and a family
 * holds at most TOPO_MAX_METRIC_SERIES of them (topo_metrics_create can set
 * another bound): a label fed from requests cannot grow memory without
 * bound. Past the bound topo_metrics_get returns NULL, the updates on it
 * are no-ops, and each such lookup is counted (topo_metrics_dropped).
 *
 *   topo_metrics *m;
 *   topo_metrics_family *req;
 *   static const char *const labels[] = {"code"};
 *   topo_metrics_create(&m, 0, err);
 *   topo_metrics_counter(m, &req, "requests_total", "Requests by code.", labels, 1, err);
 *   ...
 *   const char *v[] = {"200"};
 *   topo_metrics_add(topo_metrics_get(req, v), 1);   // any thread
 *   char *text = topo_metrics_render(m);
 *
 * Values that live elsewhere are read at render time: a render hook
 * (topo_metrics_on_render) copies them into series with topo_metrics_set,
 * and a collected family (topo_metrics_collected) has no stored series but
 * a callback emitting rows whose label sets change between renders.
 *
 * Counters and gauges hold integers (every value topo exports counts
 * something), so they render exactly; histograms observe doubles. */
#ifndef TOPO_METRICS_H
#define TOPO_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "topo/buf.h"
#include "topo/error.h"

typedef enum {
    TOPO_METRICS_COUNTER,
    TOPO_METRICS_GAUGE,
    TOPO_METRICS_HISTOGRAM
} topo_metrics_type;

typedef struct topo_metrics topo_metrics;
typedef struct topo_metrics_family topo_metrics_family;
typedef struct topo_metrics_series topo_metrics_series;
typedef struct topo_metrics_sink topo_metrics_sink;

/* An empty registry. max_series bounds each family's series (0:
 * TOPO_MAX_METRIC_SERIES). 0, or TOPO_ENOMEM. */
int topo_metrics_create(topo_metrics **out, size_t max_series, topo_err *err);
/* Frees the registry, its families and series. NULL-safe. No other thread
 * may use it any more. */
void topo_metrics_free(topo_metrics *m);

/* Registers a family; it renders in registration order. name is a metric
 * name ([a-zA-Z_:][a-zA-Z0-9_:]*), labels[0..nlabels) label names
 * ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", distinct; "le" not in a
 * histogram); help is any text. A family without labels has its one series
 * from the start (it renders 0 before any update). Strings are copied. 0,
 * TOPO_EINVALID (a bad or already registered name), TOPO_ENOMEM. *out is
 * owned by the registry. */
int topo_metrics_counter(topo_metrics *m, topo_metrics_family **out, const char *name,
                         const char *help, const char *const *labels, size_t nlabels,
                         topo_err *err);
int topo_metrics_gauge(topo_metrics *m, topo_metrics_family **out, const char *name,
                       const char *help, const char *const *labels, size_t nlabels,
                       topo_err *err);
/* bounds[0..nbounds): the buckets' upper bounds, finite and strictly
 * increasing (+Inf is implicit). */
int topo_metrics_histogram(topo_metrics *m, topo_metrics_family **out, const char *name,
                           const char *help, const char *const *labels, size_t nlabels,
                           const double *bounds, size_t nbounds, topo_err *err);

/* The series of f with these label values (one per label name; NULL when f
 * has no labels), created on first use (in that order they render). NULL
 * when f holds its maximum of series (the lookup is counted as dropped) or
 * out of memory. Lock-free once the series exists; any thread. */
topo_metrics_series *topo_metrics_get(topo_metrics_family *f, const char *const *values);

/* Updates; each is NULL-safe (a dropped series) and does nothing on a series
 * of another type. Counter: adds n. Gauge: adds n (may be negative). */
void topo_metrics_add(topo_metrics_series *s, int64_t n);
/* Counter or gauge: sets the value (for a render hook copying a value kept
 * elsewhere; a counter copied so must only grow there). */
void topo_metrics_set(topo_metrics_series *s, int64_t v);
/* Histogram: counts v in the first bucket whose bound is >= v. */
void topo_metrics_observe(topo_metrics_series *s, double v);
/* A counter's or gauge's value (0 for NULL or a histogram). */
int64_t topo_metrics_value(const topo_metrics_series *s);

/* Called at the start of every render, in the order added, before anything
 * is read: copies values kept elsewhere into series. It must not register
 * families. 0, TOPO_EINVALID (fn NULL) or TOPO_ENOMEM. */
typedef void (*topo_metrics_hook_fn)(void *payload);
int topo_metrics_on_render(topo_metrics *m, topo_metrics_hook_fn fn, void *payload,
                           topo_err *err);

/* A counter or gauge family whose rows are produced at each render by fn
 * (calling topo_metrics_emit), for label sets that come and go (no stored
 * series: a row missing from one render is gone). At most the registry's
 * series bound of rows render; more are dropped and counted. fn returns 0,
 * or a negative code: the rows it emitted still render. type is
 * TOPO_METRICS_COUNTER or TOPO_METRICS_GAUGE. Same errors as
 * topo_metrics_counter. */
typedef int (*topo_metrics_collect_fn)(void *payload, topo_metrics_sink *sink);
int topo_metrics_collected(topo_metrics *m, topo_metrics_family **out, topo_metrics_type type,
                           const char *name, const char *help, const char *const *labels,
                           size_t nlabels, topo_metrics_collect_fn fn, void *payload,
                           topo_err *err);
/* One row of a collected family: label values as topo_metrics_get. 0,
 * TOPO_ELIMIT (past the bound, dropped) or the render's sticky error. */
int topo_metrics_emit(topo_metrics_sink *sink, const char *const *values, int64_t value);

/* Appends the text of every family to b (Prometheus text format 0.0.4):
 * "# HELP", "# TYPE", then the series in creation order; label values and
 * help escaped. 0, or b's sticky error (TOPO_ENOMEM, TOPO_ELIMIT). Any
 * thread; renders are serialized. */
int topo_metrics_render_buf(topo_metrics *m, topo_buf *b);
/* The text (malloc'd, NUL-terminated; the caller frees), NULL out of
 * memory. */
char *topo_metrics_render(topo_metrics *m);

/* Lookups and emitted rows dropped for the series bound, over every family. */
uint64_t topo_metrics_dropped(const topo_metrics *m);

#endif
