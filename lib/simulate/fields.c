/* The table of a policy's metrics (fields.h): -o json keys, where each is
 * in topo_sim_metrics, and the JSON writer that walks it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fields.h"
#include "out_internal.h"

#define M(field) offsetof(topo_sim_metrics, field)
#define W0 M(window_start)
#define NONE SIM_FIELD_NONE
#define CLASS(k, name)                                                                         \
    [SIM_F_CLASS(k, SIM_WAIT_JOBS)] = {"queue_by_gpus", name, "jobs", SIM_FIELD_COUNT,         \
                                       M(wait_class[k].jobs), NONE, 0},                        \
    [SIM_F_CLASS(k, SIM_WAIT_P50)] = {"queue_by_gpus", name, "p50_s", SIM_FIELD_REAL,          \
                                      M(wait_class[k].p50), NONE, 0},                          \
    [SIM_F_CLASS(k, SIM_WAIT_P99)] = {"queue_by_gpus", name, "p99_s", SIM_FIELD_REAL,          \
                                      M(wait_class[k].p99), NONE, 0},                          \
    [SIM_F_CLASS(k, SIM_WAIT_MEAN)] = {"queue_by_gpus", name, "mean_s", SIM_FIELD_REAL,        \
                                       M(wait_class[k].mean), NONE, 0}

const sim_field sim_fields[SIM_F_COUNT] = {
    [SIM_F_JOBS] = {NULL, NULL, "jobs", SIM_FIELD_COUNT, M(jobs), NONE, 0},
    [SIM_F_PLACED] = {NULL, NULL, "placed", SIM_FIELD_COUNT, M(placed), NONE, 0},
    [SIM_F_UNPLACEABLE] = {NULL, NULL, "unplaceable", SIM_FIELD_COUNT, M(unplaceable), NONE, 0},
    [SIM_F_MULTI_NODE] = {NULL, NULL, "multi_node_jobs", SIM_FIELD_COUNT, M(multi_node), NONE,
                          0},
    [SIM_F_TIGHT] = {NULL, NULL, "tight_share", SIM_FIELD_REAL, M(tight_share), NONE, 0},
    [SIM_F_TIGHT_NOW] = {NULL, NULL, "tight_share_now", SIM_FIELD_REAL, M(tight_share_now), NONE,
                         0},
    [SIM_F_SPANNED] = {"domains_spanned", NULL, NULL, SIM_FIELD_REAL, M(spanned), NONE, 0},
    [SIM_F_FRAG] = {NULL, NULL, "fragmentation", SIM_FIELD_REAL, M(fragmentation), NONE, 1},
    [SIM_F_FRAG_POD] = {NULL, NULL, "fragmentation_pod", SIM_FIELD_REAL, M(fragmentation_pod),
                        NONE, 1},
    [SIM_F_UTILISATION] = {NULL, NULL, "utilisation", SIM_FIELD_REAL, M(utilisation), NONE, 1},
    [SIM_F_GOODPUT] = {NULL, NULL, "goodput", SIM_FIELD_REAL, M(goodput), NONE, 1},
    [SIM_F_QUEUE_LENGTH] = {NULL, NULL, "queue_length", SIM_FIELD_REAL, M(queue_length), NONE,
                            1},
    [SIM_F_WAIT_P50] = {NULL, NULL, "queue_p50_s", SIM_FIELD_REAL, M(wait.p50), NONE, 0},
    [SIM_F_WAIT_P99] = {NULL, NULL, "queue_p99_s", SIM_FIELD_REAL, M(wait.p99), NONE, 0},
    [SIM_F_WAIT_MEAN] = {NULL, NULL, "queue_mean_s", SIM_FIELD_REAL, M(wait.mean), NONE, 0},
    CLASS(0, "1-8"),
    CLASS(1, "9-127"),
    CLASS(2, "128+"),
    [SIM_F_SLOW_MEAN] = {NULL, NULL, "slowdown_mean", SIM_FIELD_REAL, M(slowdown_mean), NONE, 0},
    [SIM_F_SLOW_P99] = {NULL, NULL, "slowdown_p99", SIM_FIELD_REAL, M(slowdown_p99), NONE, 0},
    [SIM_F_JCT_MEAN] = {NULL, NULL, "jct_mean_s", SIM_FIELD_REAL, M(jct_mean), NONE, 0},
    [SIM_F_JCT_P99] = {NULL, NULL, "jct_p99_s", SIM_FIELD_REAL, M(jct_p99), NONE, 0},
    [SIM_F_WINDOW] = {NULL, NULL, "window_s", SIM_FIELD_REAL, M(window_end), W0, 1},
    [SIM_F_MAKESPAN] = {NULL, NULL, "makespan_s", SIM_FIELD_REAL, M(makespan), W0, 1},
    [SIM_F_ATTEMPTS] = {NULL, NULL, "attempts", SIM_FIELD_U64, M(attempts), NONE, 1},
};

static double read_field(const topo_sim_metrics *m, const sim_field *f, size_t offset)
{
    const char *base = (const char *)m;
    double v;
    if (f->kind == SIM_FIELD_COUNT) {
        size_t x;
        memcpy(&x, base + offset, sizeof x);
        v = (double)x;
    } else if (f->kind == SIM_FIELD_U64) {
        uint64_t x;
        memcpy(&x, base + offset, sizeof x);
        v = (double)x;
    } else {
        memcpy(&v, base + offset, sizeof v);
    }
    if (f->minus != SIM_FIELD_NONE) {
        double w;
        memcpy(&w, base + f->minus, sizeof w);
        v -= w;
    }
    return v;
}

void sim_field_values(double *v, const topo_sim_metrics *m)
{
    memset(v, 0, SIM_NVALUES * sizeof(*v));
    for (size_t f = 0; f < SIM_F_COUNT; f++) {
        if (f == SIM_F_SPANNED) {
            for (size_t l = 0; l < m->nlevels && l < TOPO_MAX_LEVELS; l++)
                v[sim_slot(SIM_F_SPANNED, l)] = m->spanned[l];
            continue;
        }
        v[f] = read_field(m, &sim_fields[f], sim_fields[f].offset);
    }
}

/* Whether name starts with part followed by '.', and where after it. */
static const char *prefix(const char *name, const char *part)
{
    size_t n = strlen(part);
    return strncmp(name, part, n) == 0 && name[n] == '.' ? name + n + 1 : NULL;
}

int sim_field_find(const char *name, const char *const *levels, size_t nlevels)
{
    for (size_t f = 0; f < SIM_F_COUNT; f++) {
        const sim_field *d = &sim_fields[f];
        const char *rest = name;
        if (d->group != NULL && (rest = prefix(rest, d->group)) == NULL)
            continue;
        if (d->sub != NULL && (rest = prefix(rest, d->sub)) == NULL)
            continue;
        if (d->key != NULL) {
            if (strcmp(rest, d->key) == 0)
                return (int)f;
            continue;
        }
        for (size_t l = 0; l < nlevels; l++)
            if (strcmp(rest, levels[l]) == 0)
                return (int)sim_slot(SIM_F_SPANNED, l);
    }
    return -1;
}

json_t *sim_json_num(double v)
{
    return json_real(round(v * 1e6) / 1e6);
}

static json_t *value(const sim_field *f, double v, int exact)
{
    return exact && f->kind != SIM_FIELD_REAL ? json_integer((json_int_t)v) : sim_json_num(v);
}

/* The object field f goes in: o itself, or its group's (and sub's), made
 * on first use so that keys keep the table's order. */
static json_t *parent(json_t *o, const sim_field *f)
{
    const char *path[2] = {f->group, f->sub};
    for (int i = 0; i < 2 && path[i] != NULL; i++) {
        json_t *child = json_object_get(o, path[i]);
        if (child == NULL) {
            child = json_object();
            json_object_set_new(o, path[i], child);
        }
        o = child;
    }
    return o;
}

json_t *sim_fields_json(const double *v, const double *lo, const double *hi,
                        const char *const *levels, size_t nlevels, int exact, int jobs_only)
{
    json_t *o = json_object();
    for (size_t f = 0; f < SIM_F_COUNT; f++) {
        const sim_field *d = &sim_fields[f];
        if (jobs_only && d->window)
            continue;
        json_t *into = parent(o, d);
        size_t n = f == SIM_F_SPANNED ? nlevels : 1;
        for (size_t l = 0; l < n; l++) {
            size_t slot = sim_slot((sim_field_id)f, l);
            const char *key = d->key != NULL ? d->key : levels[l];
            if (lo == NULL)
                json_object_set_new(into, key, value(d, v[slot], exact));
            else
                json_object_set_new(into, key, json_pack("[oo]", sim_json_num(lo[slot]),
                                                         sim_json_num(hi[slot])));
        }
    }
    return o;
}

json_t *sim_fields_json_list(const double *v, const double *lo, const double *hi,
                             const int *ids, size_t n, int exact)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++) {
        const sim_field *d = &sim_fields[ids[i]];
        if (lo == NULL)
            json_object_set_new(o, d->key, value(d, v[ids[i]], exact));
        else
            json_object_set_new(o, d->key, json_pack("[oo]", sim_json_num(lo[ids[i]]),
                                                     sim_json_num(hi[ids[i]])));
    }
    return o;
}
