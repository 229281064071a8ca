/* The trace: jobs in arrival order and their distinct topology requests
 * (topo/simulate.h). The CSV reader and writer are trace_csv.c, the
 * generator generate.c. */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/array.h"

int topo_sim_trace_create(topo_sim_trace **out, topo_err *err)
{
    topo_sim_trace *t = calloc(1, sizeof(*t));
    *out = NULL;
    if (t == NULL || (t->pool = topo_pool_create()) == NULL ||
        (t->by_text = topo_strmap_create(16)) == NULL) {
        topo_sim_trace_free(t);
        return topo_err_nomem(err, "trace");
    }
    *out = t;
    return 0;
}

void topo_sim_trace_free(topo_sim_trace *t)
{
    if (t == NULL)
        return;
    free(t->jobs);
    free(t->requests);
    topo_strmap_free(t->by_text);
    topo_pool_free(t->pool);
    free(t);
}

void sim_trace_reset(topo_sim_trace *t)
{
    t->njobs = 0;
    t->nrequests = 0;
    topo_strmap_free(t->by_text);
    t->by_text = topo_strmap_create(16); /* NULL is caught by the next intern */
    topo_pool_clear(t->pool);
}

int sim_trace_push(topo_sim_trace *t, const topo_sim_job *j, topo_err *err)
{
    if (t->njobs >= TOPO_MAX_SIM_JOBS)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u jobs", TOPO_MAX_SIM_JOBS);
    if (topo_array_reserve((void **)&t->jobs, &t->capjobs, t->njobs + 1, sizeof(*t->jobs)) != 0)
        return topo_err_nomem(err, "trace");
    t->jobs[t->njobs++] = *j;
    return 0;
}

static const char *keep(topo_pool *pool, const char *s, int *oom)
{
    if (s == NULL)
        return NULL;
    const char *c = topo_pool_strdup(pool, s);
    if (c == NULL)
        *oom = 1;
    return c;
}

int sim_trace_intern(topo_sim_trace *t, const topo_sim_request *r, int32_t *out, topo_err *err)
{
    int32_t found = t->by_text != NULL ? topo_strmap_get(t->by_text, r->text) : -1;
    if (found >= 0) {
        *out = found;
        return 0;
    }
    if (t->by_text == NULL)
        return topo_err_nomem(err, "trace");
    if (t->nrequests >= TOPO_MAX_SIM_REQUESTS)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u distinct topology requests",
                            TOPO_MAX_SIM_REQUESTS);
    if (topo_array_reserve((void **)&t->requests, &t->caprequests, t->nrequests + 1,
                           sizeof(*t->requests)) != 0)
        return topo_err_nomem(err, "trace");
    /* A deep copy: the caller's strings are scratch. */
    topo_sim_request c = *r;
    topo_slice_layer *layers = NULL;
    int oom = 0;
    memset(&c.spec, 0, sizeof(c.spec));
    c.spec.required = keep(t->pool, r->spec.required, &oom);
    c.spec.preferred = keep(t->pool, r->spec.preferred, &oom);
    c.spec.unconstrained = r->spec.unconstrained;
    c.spec.implied = r->spec.implied;
    c.spec.slice_required = keep(t->pool, r->spec.slice_required, &oom);
    c.spec.slice_size = r->spec.slice_size;
    c.spec.group = keep(t->pool, r->spec.group, &oom);
    if (r->spec.nlayers > 0) {
        layers = topo_pool_calloc(t->pool, r->spec.nlayers, sizeof(*layers));
        oom |= layers == NULL;
        for (size_t i = 0; layers != NULL && i < r->spec.nlayers; i++) {
            layers[i].level = keep(t->pool, r->spec.layers[i].level, &oom);
            layers[i].size = r->spec.layers[i].size;
        }
        c.spec.layers = layers;
        c.spec.nlayers = r->spec.nlayers;
    }
    c.text = keep(t->pool, r->text, &oom);
    c.annotations = keep(t->pool, r->annotations, &oom);
    if (oom)
        return topo_err_nomem(err, "trace");
    int32_t idx = (int32_t)t->nrequests;
    if (topo_strmap_put(t->by_text, c.text, idx) != 0)
        return topo_err_nomem(err, "trace");
    t->requests[t->nrequests++] = c;
    *out = idx;
    return 0;
}

static int by_arrival(const void *a, const void *b)
{
    const topo_sim_job *x = a, *y = b;
    if (x->arrive != y->arrive)
        return x->arrive < y->arrive ? -1 : 1;
    /* The file's order among equal times: ids were numbered in it. */
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int sim_trace_sort(topo_sim_trace *t, topo_err *err)
{
    (void)err;
    for (size_t i = 0; i < t->njobs; i++)
        t->jobs[i].seq = (uint32_t)i;
    if (t->njobs > 1)
        qsort(t->jobs, t->njobs, sizeof(*t->jobs), by_arrival);
    return 0;
}

size_t topo_sim_trace_count(const topo_sim_trace *t)
{
    return t->njobs;
}

const topo_sim_job *topo_sim_trace_job(const topo_sim_trace *t, size_t i)
{
    return i < t->njobs ? &t->jobs[i] : NULL;
}

size_t topo_sim_trace_request_count(const topo_sim_trace *t)
{
    return t->nrequests;
}

const topo_sim_request *topo_sim_trace_request(const topo_sim_trace *t, size_t i)
{
    return i < t->nrequests ? &t->requests[i] : NULL;
}
