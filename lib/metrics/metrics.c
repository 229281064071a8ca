/* The metrics registry and its Prometheus text rendering (topo/metrics.h).
 *
 * Series of a family form a singly linked list appended at the tail under
 * the family's mutex and published with a release store, so a lookup walks
 * it with acquire loads and no lock: a series, once reachable, never moves
 * or goes away before topo_metrics_free. */
#define _POSIX_C_SOURCE 200809L
#include "topo/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/limits.h"
#include "topo/str.h"

struct topo_metrics_series {
    _Atomic(topo_metrics_series *) next;
    const topo_metrics_family *family;
    char **values;        /* one per label name */
    atomic_llong value;   /* counter, gauge */
    atomic_ullong count;  /* histogram: observations */
    _Atomic uint64_t sum; /* histogram: the sum's double, as its bits (no atomic double) */
    atomic_ullong *buckets; /* histogram: per bucket, not cumulative (one add per observe) */
};

struct topo_metrics_family {
    topo_metrics *reg;
    topo_metrics_type type;
    char *name;
    char *help;
    char **labels;
    size_t nlabels;
    double *bounds;
    size_t nbounds;
    topo_metrics_collect_fn collect; /* a collected family: rows from it, no series */
    void *payload;
    pthread_mutex_t lock; /* creating series */
    _Atomic(topo_metrics_series *) head;
    topo_metrics_series *tail; /* under lock */
    size_t nseries;            /* under lock */
};

typedef struct metrics_hook {
    topo_metrics_hook_fn fn;
    void *payload;
} metrics_hook;

struct topo_metrics {
    pthread_mutex_t lock; /* families, hooks, and renders (one at a time) */
    TOPO_ARRAY(topo_metrics_family *) families;
    TOPO_ARRAY(metrics_hook) hooks;
    size_t max_series;
    atomic_ullong dropped;
};

struct topo_metrics_sink {
    topo_metrics_family *family;
    topo_buf *buf;
    size_t rows;
};

int topo_metrics_create(topo_metrics **out, size_t max_series, topo_err *err)
{
    *out = NULL;
    topo_metrics *m = calloc(1, sizeof *m);
    if (m == NULL)
        return topo_err_nomem(err, "metrics registry");
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return topo_err_nomem(err, "metrics registry");
    }
    m->max_series = max_series ? max_series : TOPO_MAX_METRIC_SERIES;
    atomic_init(&m->dropped, 0);
    *out = m;
    return 0;
}

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s != NULL && i < n; i++)
        free(s[i]);
    free(s);
}

static void free_series(topo_metrics_series *s, size_t nlabels)
{
    free_strings(s->values, nlabels);
    free(s->buckets);
    free(s);
}

static void free_family(topo_metrics_family *f)
{
    topo_metrics_series *s = atomic_load(&f->head);
    while (s != NULL) {
        topo_metrics_series *next = atomic_load(&s->next);
        free_series(s, f->nlabels);
        s = next;
    }
    pthread_mutex_destroy(&f->lock);
    free(f->name);
    free(f->help);
    free_strings(f->labels, f->nlabels);
    free(f->bounds);
    free(f);
}

void topo_metrics_free(topo_metrics *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->families.n; i++)
        free_family(m->families.items[i]);
    free(m->families.items);
    free(m->hooks.items);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* ---- registration ---- */

static int valid_name(const char *s, int colon)
{
    if (s == NULL || s[0] == '\0')
        return 0;
    for (size_t i = 0; s[i] != '\0'; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static int check_family(const topo_metrics *m, topo_metrics_type type, const char *name,
                        const char *help, const char *const *labels, size_t nlabels,
                        topo_err *err)
{
    if (!valid_name(name, 1))
        return topo_err_set(err, TOPO_EINVALID, "metric name \"%s\" is not [a-zA-Z_:][a-zA-Z0-9_:]*",
                            name ? name : "(null)");
    if (help == NULL)
        return topo_err_set(err, TOPO_EINVALID, "metric %s: no help text", name);
    if (nlabels > 0 && labels == NULL)
        return topo_err_set(err, TOPO_EINVALID, "metric %s: no label names", name);
    for (size_t i = 0; i < nlabels; i++) {
        const char *l = labels[i];
        if (!valid_name(l, 0))
            return topo_err_set(err, TOPO_EINVALID,
                                "metric %s: label name \"%s\" is not [a-zA-Z_][a-zA-Z0-9_]*", name,
                                l ? l : "(null)");
        /* Prometheus keeps "__" names for itself, and "le" for buckets */
        if (strncmp(l, "__", 2) == 0)
            return topo_err_set(err, TOPO_EINVALID, "metric %s: label name \"%s\" is reserved",
                                name, l);
        if (type == TOPO_METRICS_HISTOGRAM && strcmp(l, "le") == 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "metric %s: a histogram cannot have a label \"le\"", name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(labels[j], l) == 0)
                return topo_err_set(err, TOPO_EINVALID, "metric %s: label \"%s\" twice", name,
                                    l);
    }
    for (size_t i = 0; i < m->families.n; i++)
        if (strcmp(m->families.items[i]->name, name) == 0)
            return topo_err_set(err, TOPO_EINVALID, "metric %s registered twice", name);
    return 0;
}

static topo_metrics_series *new_series(const topo_metrics_family *f, const char *const *values)
{
    topo_metrics_series *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->family = f;
    atomic_init(&s->next, NULL);
    atomic_init(&s->value, 0);
    atomic_init(&s->count, 0);
    atomic_init(&s->sum, 0); /* the bits of +0.0 */
    if (f->nlabels > 0) {
        s->values = calloc(f->nlabels, sizeof *s->values);
        if (s->values == NULL)
            goto fail;
        for (size_t i = 0; i < f->nlabels; i++)
            if ((s->values[i] = topo_strdup(values[i])) == NULL)
                goto fail;
    }
    if (f->type == TOPO_METRICS_HISTOGRAM && f->nbounds > 0) {
        s->buckets = calloc(f->nbounds, sizeof *s->buckets);
        if (s->buckets == NULL)
            goto fail;
        for (size_t i = 0; i < f->nbounds; i++)
            atomic_init(&s->buckets[i], 0);
    }
    return s;
fail:
    free_series(s, f->nlabels);
    return NULL;
}

/* Under the family's lock (or before anyone else sees the family). */
static void append_series(topo_metrics_family *f, topo_metrics_series *s)
{
    if (f->tail == NULL)
        atomic_store_explicit(&f->head, s, memory_order_release);
    else
        atomic_store_explicit(&f->tail->next, s, memory_order_release);
    f->tail = s;
    f->nseries++;
}

static int add_family(topo_metrics *m, topo_metrics_family **out, topo_metrics_type type,
                      const char *name, const char *help, const char *const *labels,
                      size_t nlabels, const double *bounds, size_t nbounds,
                      topo_metrics_collect_fn collect, void *payload, topo_err *err)
{
    if (out != NULL)
        *out = NULL;
    pthread_mutex_lock(&m->lock);
    int rc = check_family(m, type, name, help, labels, nlabels, err);
    if (rc != 0)
        goto out;
    rc = TOPO_ARRAY_GROW(&m->families);
    if (rc != 0) {
        rc = topo_err_nomem(err, name);
        goto out;
    }
    topo_metrics_family *f = calloc(1, sizeof *f);
    if (f == NULL || pthread_mutex_init(&f->lock, NULL) != 0) {
        free(f);
        rc = topo_err_nomem(err, name);
        goto out;
    }
    f->reg = m;
    f->type = type;
    f->collect = collect;
    f->payload = payload;
    atomic_init(&f->head, NULL);
    f->nlabels = nlabels;
    f->nbounds = nbounds;
    int ok = (f->name = topo_strdup(name)) != NULL && (f->help = topo_strdup(help)) != NULL;
    if (ok && nlabels > 0 && (f->labels = calloc(nlabels, sizeof *f->labels)) == NULL)
        ok = 0;
    for (size_t i = 0; ok && i < nlabels; i++)
        ok = (f->labels[i] = topo_strdup(labels[i])) != NULL;
    if (ok && nbounds > 0) {
        if ((f->bounds = calloc(nbounds, sizeof *f->bounds)) == NULL)
            ok = 0;
        else
            memcpy(f->bounds, bounds, nbounds * sizeof *bounds);
    }
    /* an unlabelled metric exists from the start, as Prometheus clients do */
    if (ok && nlabels == 0 && collect == NULL) {
        topo_metrics_series *s = new_series(f, NULL);
        if (s == NULL)
            ok = 0;
        else
            append_series(f, s);
    }
    if (!ok) {
        free_family(f);
        rc = topo_err_nomem(err, name);
        goto out;
    }
    m->families.items[m->families.n++] = f;
    if (out != NULL)
        *out = f;
out:
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int topo_metrics_counter(topo_metrics *m, topo_metrics_family **out, const char *name,
                         const char *help, const char *const *labels, size_t nlabels,
                         topo_err *err)
{
    return add_family(m, out, TOPO_METRICS_COUNTER, name, help, labels, nlabels, NULL, 0, NULL,
                      NULL, err);
}

int topo_metrics_gauge(topo_metrics *m, topo_metrics_family **out, const char *name,
                       const char *help, const char *const *labels, size_t nlabels,
                       topo_err *err)
{
    return add_family(m, out, TOPO_METRICS_GAUGE, name, help, labels, nlabels, NULL, 0, NULL,
                      NULL, err);
}

int topo_metrics_histogram(topo_metrics *m, topo_metrics_family **out, const char *name,
                           const char *help, const char *const *labels, size_t nlabels,
                           const double *bounds, size_t nbounds, topo_err *err)
{
    if (nbounds > 0 && bounds == NULL)
        return topo_err_set(err, TOPO_EINVALID, "metric %s: no bucket bounds",
                            name ? name : "(null)");
    for (size_t i = 0; i < nbounds; i++)
        if (!isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
            return topo_err_set(err, TOPO_EINVALID,
                                "metric %s: bucket bounds must be finite and increasing",
                                name ? name : "(null)");
    return add_family(m, out, TOPO_METRICS_HISTOGRAM, name, help, labels, nlabels, bounds,
                      nbounds, NULL, NULL, err);
}

int topo_metrics_collected(topo_metrics *m, topo_metrics_family **out, topo_metrics_type type,
                           const char *name, const char *help, const char *const *labels,
                           size_t nlabels, topo_metrics_collect_fn fn, void *payload,
                           topo_err *err)
{
    if (type == TOPO_METRICS_HISTOGRAM || fn == NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "metric %s: a collected family is a counter or a gauge with a callback",
                            name ? name : "(null)");
    return add_family(m, out, type, name, help, labels, nlabels, NULL, 0, fn, payload, err);
}

int topo_metrics_on_render(topo_metrics *m, topo_metrics_hook_fn fn, void *payload,
                           topo_err *err)
{
    if (fn == NULL)
        return topo_err_set(err, TOPO_EINVALID, "a render hook needs a function");
    pthread_mutex_lock(&m->lock);
    int rc = TOPO_ARRAY_PUSH(&m->hooks, ((metrics_hook){fn, payload}));
    pthread_mutex_unlock(&m->lock);
    return rc != 0 ? topo_err_nomem(err, "metrics render hook") : 0;
}

/* ---- series ---- */

static int same_values(const topo_metrics_series *s, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s->values[i], values[i]) != 0)
            return 0;
    return 1;
}

static topo_metrics_series *find_from(topo_metrics_series *s, const char *const *values,
                                      size_t n)
{
    for (; s != NULL; s = atomic_load_explicit(&s->next, memory_order_acquire))
        if (same_values(s, values, n))
            return s;
    return NULL;
}

topo_metrics_series *topo_metrics_get(topo_metrics_family *f, const char *const *values)
{
    if (f == NULL || f->collect != NULL || (f->nlabels > 0 && values == NULL))
        return NULL;
    for (size_t i = 0; i < f->nlabels; i++)
        if (values[i] == NULL)
            return NULL;
    topo_metrics_series *s =
        find_from(atomic_load_explicit(&f->head, memory_order_acquire), values, f->nlabels);
    if (s != NULL)
        return s;
    pthread_mutex_lock(&f->lock);
    /* another thread may have created it since the walk */
    s = find_from(atomic_load_explicit(&f->head, memory_order_acquire), values, f->nlabels);
    if (s == NULL) {
        if (f->nseries >= f->reg->max_series) {
            atomic_fetch_add(&f->reg->dropped, 1);
        } else if ((s = new_series(f, values)) != NULL) {
            append_series(f, s);
        }
    }
    pthread_mutex_unlock(&f->lock);
    return s;
}

void topo_metrics_add(topo_metrics_series *s, int64_t n)
{
    if (s == NULL || s->family->type == TOPO_METRICS_HISTOGRAM)
        return;
    /* a counter only goes up */
    if (s->family->type == TOPO_METRICS_COUNTER && n < 0)
        return;
    atomic_fetch_add_explicit(&s->value, (long long)n, memory_order_relaxed);
}

void topo_metrics_set(topo_metrics_series *s, int64_t v)
{
    if (s == NULL || s->family->type == TOPO_METRICS_HISTOGRAM)
        return;
    atomic_store_explicit(&s->value, (long long)v, memory_order_relaxed);
}

void topo_metrics_observe(topo_metrics_series *s, double v)
{
    if (s == NULL || s->family->type != TOPO_METRICS_HISTOGRAM)
        return;
    const topo_metrics_family *f = s->family;
    for (size_t i = 0; i < f->nbounds; i++)
        if (v <= f->bounds[i]) {
            atomic_fetch_add_explicit(&s->buckets[i], 1, memory_order_relaxed);
            break;
        }
    uint64_t old = atomic_load_explicit(&s->sum, memory_order_relaxed), next;
    do {
        double d;
        memcpy(&d, &old, sizeof d);
        d += v;
        memcpy(&next, &d, sizeof next);
    } while (!atomic_compare_exchange_weak_explicit(&s->sum, &old, next, memory_order_relaxed,
                                                    memory_order_relaxed));
    atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
}

int64_t topo_metrics_value(const topo_metrics_series *s)
{
    if (s == NULL || s->family->type == TOPO_METRICS_HISTOGRAM)
        return 0;
    return (int64_t)atomic_load_explicit(&((topo_metrics_series *)s)->value,
                                         memory_order_relaxed);
}

uint64_t topo_metrics_dropped(const topo_metrics *m)
{
    return (uint64_t)atomic_load(&((topo_metrics *)m)->dropped);
}

/* ---- rendering ---- */

/* HELP text escapes backslash and newline; a label value also the double
 * quote (text format 0.0.4). */
static void put_escaped(topo_buf *b, const char *s, int quote)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            topo_buf_puts(b, "\\\\");
        else if (*s == '\n')
            topo_buf_puts(b, "\\n");
        else if (quote && *s == '"')
            topo_buf_puts(b, "\\\"");
        else
            topo_buf_putc(b, *s);
    }
}

/* A histogram's sum, with nine decimals as topo-webhook always wrote it
 * (nanoseconds in seconds); Prometheus spells the special values NaN, +Inf
 * and -Inf. */
static void put_sum(topo_buf *b, double v)
{
    if (isnan(v))
        topo_buf_puts(b, "NaN");
    else if (isinf(v))
        topo_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
    else
        topo_buf_printf(b, "%.9f", v);
}

/* name[suffix]{label="value",...[,extra="extra_value"]} and a space. */
static void put_series_name(topo_buf *b, const topo_metrics_family *f, const char *suffix,
                            const char *const *values, const char *extra, const char *extra_value)
{
    topo_buf_puts(b, f->name);
    topo_buf_puts(b, suffix);
    if (f->nlabels > 0 || extra != NULL) {
        topo_buf_putc(b, '{');
        for (size_t i = 0; i < f->nlabels; i++) {
            topo_buf_printf(b, "%s%s=\"", i ? "," : "", f->labels[i]);
            put_escaped(b, values[i], 1);
            topo_buf_putc(b, '"');
        }
        if (extra != NULL) {
            topo_buf_printf(b, "%s%s=\"", f->nlabels ? "," : "", extra);
            topo_buf_puts(b, extra_value);
            topo_buf_putc(b, '"');
        }
        topo_buf_putc(b, '}');
    }
    topo_buf_putc(b, ' ');
}

static void render_histogram(topo_buf *b, const topo_metrics_family *f,
                             topo_metrics_series *s)
{
    const char *const *values = (const char *const *)s->values;
    /* count first: a concurrent observe then shows in the buckets no more
     * than in the count, and _bucket{le="+Inf"} equals _count */
    unsigned long long count = atomic_load(&s->count);
    uint64_t bits = atomic_load(&s->sum);
    double sum;
    memcpy(&sum, &bits, sizeof sum);
    unsigned long long cum = 0;
    char le[64];
    for (size_t i = 0; i < f->nbounds; i++) {
        cum += atomic_load(&s->buckets[i]);
        if (cum > count)
            cum = count;
        snprintf(le, sizeof le, "%g", f->bounds[i]);
        put_series_name(b, f, "_bucket", values, "le", le);
        topo_buf_printf(b, "%llu\n", cum);
    }
    put_series_name(b, f, "_bucket", values, "le", "+Inf");
    topo_buf_printf(b, "%llu\n", count);
    put_series_name(b, f, "_sum", values, NULL, NULL);
    put_sum(b, sum);
    topo_buf_putc(b, '\n');
    put_series_name(b, f, "_count", values, NULL, NULL);
    topo_buf_printf(b, "%llu\n", count);
}

static const char *type_name(topo_metrics_type t)
{
    switch (t) {
    case TOPO_METRICS_COUNTER:
        return "counter";
    case TOPO_METRICS_GAUGE:
        return "gauge";
    case TOPO_METRICS_HISTOGRAM:
        return "histogram";
    }
    return "untyped";
}

int topo_metrics_emit(topo_metrics_sink *sink, const char *const *values, int64_t value)
{
    topo_metrics_family *f = sink->family;
    if (sink->buf->error)
        return sink->buf->error;
    if (f->nlabels > 0 && values == NULL)
        return TOPO_EINVALID;
    for (size_t i = 0; i < f->nlabels; i++)
        if (values[i] == NULL)
            return TOPO_EINVALID;
    if (sink->rows >= f->reg->max_series) {
        atomic_fetch_add(&f->reg->dropped, 1);
        return TOPO_ELIMIT;
    }
    sink->rows++;
    put_series_name(sink->buf, f, "", values, NULL, NULL);
    topo_buf_printf(sink->buf, "%lld\n", (long long)value);
    return sink->buf->error;
}

int topo_metrics_render_buf(topo_metrics *m, topo_buf *b)
{
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->hooks.n; i++)
        m->hooks.items[i].fn(m->hooks.items[i].payload);
    for (size_t i = 0; i < m->families.n && !b->error; i++) {
        topo_metrics_family *f = m->families.items[i];
        topo_buf_printf(b, "# HELP %s ", f->name);
        put_escaped(b, f->help, 0);
        topo_buf_printf(b, "\n# TYPE %s %s\n", f->name, type_name(f->type));
        if (f->collect != NULL) {
            topo_metrics_sink sink = {f, b, 0};
            (void)f->collect(f->payload, &sink);
            continue;
        }
        topo_metrics_series *s = atomic_load_explicit(&f->head, memory_order_acquire);
        for (; s != NULL; s = atomic_load_explicit(&s->next, memory_order_acquire)) {
            if (f->type == TOPO_METRICS_HISTOGRAM) {
                render_histogram(b, f, s);
                continue;
            }
            put_series_name(b, f, "", (const char *const *)s->values, NULL, NULL);
            topo_buf_printf(b, "%lld\n", (long long)atomic_load(&s->value));
        }
    }
    pthread_mutex_unlock(&m->lock);
    return b->error;
}

char *topo_metrics_render(topo_metrics *m)
{
    topo_buf b = TOPO_BUF_INIT(0);
    if (topo_metrics_render_buf(m, &b) != 0) {
        topo_buf_dispose(&b);
        return NULL;
    }
    return topo_buf_take(&b, NULL);
}
