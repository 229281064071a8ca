/* topoassign release's workers (release_pods.h). One pod per job: the
 * guarded patch built from what was listed (topo_admission_release_patch:
 * the uid and the gate at its index tested first), sent; a 409 or 422 (the
 * pod changed since it was read) reads it again and builds anew. The HTTP
 * client retries 429 and, the patch being guarded, 5xx and lost connections
 * with backoff (topo_k8s_patch_guarded). Serial, 30,000 pods at ~10 ms a
 * patch took the whole 300 s of the hook's deadline; several in flight
 * bring it to what the rate limit allows. */
#include "release_pods.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "topo/admission.h"

/* Writes of one pod: a 409 or 422 (the pod changed since it was read) reads
 * it again and rebuilds the patch, this many times in all. */
#define RELEASE_ATTEMPTS 5

typedef struct result {
    int done;
    cli_release_outcome outcome;
    json_t *pod; /* as last read */
    topo_err err;
} result;

typedef struct pool {
    json_t **pods;
    size_t n;
    atomic_size_t next;  /* the next pod to take */
    pthread_mutex_t mu;  /* results and reported */
    result *results;
    size_t reported;     /* results[0..reported) were reported */
    cli_release_report_fn report;
    void *payload;
} pool;

typedef struct worker {
    pthread_t thread;
    int started;
    topo_k8s *k;
    pool *p;
} worker;

static const char *meta(const json_t *pod, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(pod, "metadata"), key));
    return s != NULL ? s : "";
}

/* Releases one pod, listed as pod (the reference is taken). *out_pod: the pod
 * as last read (a new reference, for the message). */
static cli_release_outcome release_one(json_t **out_pod, topo_k8s *k, json_t *pod, topo_err *err)
{
    const char *ns = meta(pod, "namespace"), *name = meta(pod, "name");
    json_t *cur = pod, *patch = NULL;
    cli_release_outcome out = RELEASE_FAILED;
    int rc = 0;

    for (int attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt++) {
        if ((rc = topo_admission_release_patch(&patch, cur, err)) < 0)
            goto done;
        if (patch == NULL) {
            out = RELEASE_ALREADY;
            goto done;
        }
        rc = topo_k8s_patch_guarded(NULL, k, &topo_k8s_pods, ns, name, patch, err);
        json_decref(patch);
        patch = NULL;
        if (rc == 0) {
            out = RELEASE_RELEASED;
            goto done;
        }
        if (rc == TOPO_ENOTFOUND) {
            out = RELEASE_GONE;
            goto done;
        }
        if (rc != TOPO_ECONFLICT && rc != TOPO_EINVALID)
            goto done;
        /* It changed since it was read: read it again. */
        json_t *fresh = NULL;
        rc = topo_k8s_get(&fresh, k, &topo_k8s_pods, ns, name, err);
        if (rc == TOPO_ENOTFOUND) {
            out = RELEASE_GONE;
            goto done;
        }
        if (rc < 0)
            goto done;
        /* ns and name point into cur: the fresh pod has the same. */
        ns = meta(fresh, "namespace");
        name = meta(fresh, "name");
        json_decref(cur);
        cur = fresh;
    }
    topo_err_wrap(err, "still changing after %d attempts", RELEASE_ATTEMPTS);
done:
    *out_pod = cur;
    return out;
}

/* Reports the completed results that come next in the list's order. Under
 * p->mu. */
static void report_ready(pool *p)
{
    while (p->reported < p->n && p->results[p->reported].done) {
        result *r = &p->results[p->reported];
        p->report(p->reported, r->outcome, r->pod, &r->err, p->payload);
        json_decref(r->pod);
        r->pod = NULL;
        p->reported++;
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    pool *p = w->p;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            break;
        json_t *pod = p->pods[i], *last = NULL;
        topo_err err = TOPO_ERR_INIT;
        p->pods[i] = NULL;
        cli_release_outcome outcome = release_one(&last, w->k, pod, &err);
        pthread_mutex_lock(&p->mu);
        p->results[i] = (result){1, outcome, last, err};
        report_ready(p);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

int cli_release_pods(json_t **pods, size_t n, const topo_k8s_config *cfg,
                 const cli_release_pods_opts *opts, cli_release_report_fn report, void *payload,
                 topo_err *err)
{
    pool p = {.pods = pods, .n = n, .report = report, .payload = payload};
    worker *workers = NULL;
    size_t nw = opts->workers > 0 ? opts->workers : 1, started = 0;
    int rc = 0;

    if (n == 0)
        return 0;
    if (nw > n)
        nw = n;
    atomic_init(&p.next, 0);
    p.results = calloc(n, sizeof(*p.results));
    workers = calloc(nw, sizeof(*workers));
    if (p.results == NULL || workers == NULL) {
        rc = topo_err_nomem(err, "releasing pods");
        goto cleanup;
    }
    pthread_mutex_init(&p.mu, NULL);
    /* The rate limit is the run's: each worker's client gets its share. */
    topo_k8s_opts ko = {.qps = opts->qps / (double)nw,
                        .burst = opts->burst / (double)nw < 1 ? 1 : opts->burst / (double)nw,
                        .timeout_ms = opts->timeout_ms,
                        .user_agent = opts->user_agent};
    for (size_t i = 0; i < nw; i++) {
        workers[i].p = &p;
        if ((rc = topo_k8s_create(&workers[i].k, cfg, &ko, err)) < 0)
            goto join;
    }
    for (size_t i = 0; i < nw; i++) {
        if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0)
            break; /* the started ones take every pod */
        workers[i].started = 1;
        started++;
    }
    if (started == 0)
        work(&workers[0]);
join:
    for (size_t i = 0; i < nw; i++) {
        if (workers[i].started)
            pthread_join(workers[i].thread, NULL);
    }
    for (size_t i = 0; i < nw; i++)
        topo_k8s_free(workers[i].k);
    pthread_mutex_destroy(&p.mu);
cleanup:
    free(workers);
    free(p.results);
    return rc;
}
