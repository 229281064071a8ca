/* The list+watch loop of every mirror of cluster objects (reflector.h):
 * when to list, watch, list again and wait; the owner's callbacks decide
 * what the objects mean. */
#define _POSIX_C_SOURCE 200809L

#include "topo/reflector.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/backoff.h" /* the HTTP client's own policy */
#include "topo/clock.h"
#include "topo/http.h"
#include "topo/log.h"
#include "topo/str.h"

/* What the loop's steps return when a callback or a stop ends the run. */
#define ENDED 1
/* 2^30 times any base is past any cap: the failure count stops there. */
#define MAX_FAILURES_COUNTED 30u

struct topo_reflector {
    char *name, *ns, *label_selector, *field_selector;
    const topo_k8s_resource *res;
    unsigned int page_size;
    int metadata_only;
    long watch_timeout_s, backoff_base_ms, backoff_max_ms;
    topo_reflector_handler h;
    void *payload;
    topo_k8s *k;
    topo_reflector_failures *failures; /* borrowed, may be NULL */
    uint64_t throttled_seen;           /* the client's 429s counted so far */

    /* Touched by the running thread only. */
    char rv[TOPO_K8S_RV_MAX]; /* where the next watch starts; "": list first */
    uint64_t rng;

    /* The stop: `stopped` for the loop, `cancel` for the open watch (the
     * client's cancel flag), both set under mu, which the backoff wait
     * sleeps on. */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    atomic_int stopped;
    atomic_int cancel;
};

static int stopping(topo_reflector *r)
{
    return atomic_load(&r->stopped) != 0;
}

/* Waits ms, or until topo_reflector_stop. */
static void wait_ms(topo_reflector *r, long ms)
{
    struct timespec until = topo_clock_deadline(ms);
    pthread_mutex_lock(&r->mu);
    while (!stopping(r) && pthread_cond_timedwait(&r->wake, &r->mu, &until) == 0)
        ;
    pthread_mutex_unlock(&r->mu);
}

/* A failure a callback reported by its code alone gets a message. */
static int failed_step(topo_reflector *r, int rc, const char *step, topo_err *err)
{
    if (rc < 0 && err->text[0] == '\0')
        topo_err_set(err, rc, "%s: %s: %s", r->name, step, topo_strerror(rc));
    return rc;
}

/* ---- list ---- */

typedef struct list_ctx {
    topo_reflector *r;
    topo_err *err;
} list_ctx;

static int list_item(json_t *item, void *payload)
{
    list_ctx *c = payload;
    /* A stop must not wait for the end of a 100k-object list. */
    if (stopping(c->r))
        return ENDED;
    if (c->r->h.list_object == NULL)
        return 0;
    return c->r->h.list_object(item, c->err, c->r->payload);
}

/* Lists everything; on success the watch starts from the list's rv.
 * *continued: whether a page was asked for with a continue token (a 410
 * then means the token expired, not that the list cannot be served). */
static int list(topo_reflector *r, int *continued, topo_err *err)
{
    topo_k8s_list_opts lo = {0};
    list_ctx c = {r, err};
    char rv[TOPO_K8S_RV_MAX];
    int rc = 0;

    r->rv[0] = '\0'; /* a failed list is listed again */
    lo.label_selector = r->label_selector;
    lo.field_selector = r->field_selector;
    lo.limit = r->page_size;
    lo.metadata_only = r->metadata_only;
    lo.continued = continued;
    *continued = 0;
    if (r->h.list_begin != NULL && (rc = r->h.list_begin(err, r->payload)) != 0)
        goto abort;
    if ((rc = topo_k8s_list(rv, r->k, r->res, r->ns, &lo, list_item, &c, err)) != 0)
        goto abort;
    if (r->h.list_end != NULL && (rc = r->h.list_end(rv, err, r->payload)) != 0)
        goto abort;
    memcpy(r->rv, rv, sizeof(rv));
    return 0;
abort:
    if (r->h.list_abort != NULL)
        r->h.list_abort(r->payload);
    return failed_step(r, rc, "list", err);
}

/* ---- watch ---- */

typedef struct watch_ctx {
    topo_reflector *r;
    topo_err *err;
    uint64_t events;
} watch_ctx;

static int watch_event(topo_k8s_event_type type, json_t *object, void *payload)
{
    watch_ctx *c = payload;
    topo_reflector *r = c->r;
    /* The client checked it is there and fits TOPO_K8S_RV_MAX. */
    const char *rv =
        json_string_value(json_object_get(json_object_get(object, "metadata"), "resourceVersion"));
    int rc = 0;
    if (type == TOPO_K8S_BOOKMARK)
        return r->h.bookmark != NULL ? r->h.bookmark(rv, c->err, r->payload) : 0;
    if (r->h.event != NULL)
        rc = r->h.event(type, object, rv, c->err, r->payload);
    if (rc == 0)
        c->events++;
    return rc;
}

/* Watches from r->rv, which the client moves with every event accepted. */
static int watch(topo_reflector *r, topo_err *err)
{
    topo_k8s_watch_opts wo = {0};
    watch_ctx c = {r, err, 0};
    int rc;
    wo.label_selector = r->label_selector;
    wo.field_selector = r->field_selector;
    wo.timeout_seconds = r->watch_timeout_s;
    wo.stop = &r->cancel;
    wo.metadata_only = r->metadata_only;
    rc = topo_k8s_watch(r->k, r->res, r->ns, r->rv, &wo, watch_event, &c, err);
    if (rc == 0 && r->h.watch_end != NULL && r->h.watch_end(c.events, r->payload) != 0)
        rc = ENDED;
    return failed_step(r, rc, "watch", err);
}

/* ---- failures ---- */

static const char *const reason_names[TOPO_REFLECTOR_REASONS] = {
    [TOPO_REFLECTOR_GONE] = "gone",
    [TOPO_REFLECTOR_THROTTLED] = "throttled",
    [TOPO_REFLECTOR_SERVER] = "server",
    [TOPO_REFLECTOR_FORBIDDEN] = "forbidden",
    [TOPO_REFLECTOR_UNAUTHORIZED] = "unauthorized",
    [TOPO_REFLECTOR_NOT_FOUND] = "not_found",
    [TOPO_REFLECTOR_TIMEOUT] = "timeout",
    [TOPO_REFLECTOR_CONNECT] = "connect",
    [TOPO_REFLECTOR_OTHER] = "other",
    [TOPO_REFLECTOR_CACHE] = "cache",
};

topo_reflector_reason topo_reflector_reason_of(int code)
{
    switch (code) {
    case TOPO_EGONE:
        return TOPO_REFLECTOR_GONE;
    case TOPO_ETHROTTLED:
        return TOPO_REFLECTOR_THROTTLED;
    case TOPO_ESERVER:
        return TOPO_REFLECTOR_SERVER;
    case TOPO_EFORBIDDEN:
        return TOPO_REFLECTOR_FORBIDDEN;
    case TOPO_EUNAUTHORIZED:
    case TOPO_EAUTH:
        return TOPO_REFLECTOR_UNAUTHORIZED;
    case TOPO_ENOTFOUND:
        return TOPO_REFLECTOR_NOT_FOUND;
    case TOPO_ETIMEOUT:
        return TOPO_REFLECTOR_TIMEOUT;
    case TOPO_ECONNECT:
        return TOPO_REFLECTOR_CONNECT;
    default:
        return TOPO_REFLECTOR_OTHER;
    }
}

const char *topo_reflector_reason_name(topo_reflector_reason reason)
{
    return (unsigned)reason < TOPO_REFLECTOR_REASONS ? reason_names[reason] : "other";
}

uint64_t topo_reflector_failures_get(const topo_reflector_failures *f,
                                     topo_reflector_reason reason)
{
    if (f == NULL || (unsigned)reason >= TOPO_REFLECTOR_REASONS)
        return 0;
    return atomic_load(&f->n[reason]);
}

/* One line per failure: what failed (the error names the request, the HTTP
 * status, the Status's reason and message), why, and when the next try is.
 * Credentials, RBAC and a resource not served are an operator's to fix:
 * error, not warning. */
static void log_failure(const topo_reflector *r, const topo_err *e, topo_reflector_reason why,
                        unsigned int failures, long ms)
{
    topo_log_level level = why == TOPO_REFLECTOR_FORBIDDEN ||
                                   why == TOPO_REFLECTOR_UNAUTHORIZED ||
                                   why == TOPO_REFLECTOR_NOT_FOUND
                               ? TOPO_LOG_ERROR
                               : TOPO_LOG_WARN;
    if (!topo_log_enabled(level))
        return;
    char n[24], wait[24];
    snprintf(n, sizeof(n), "%u", failures + 1);
    snprintf(wait, sizeof(wait), "%ld", ms);
    const topo_log_field f[] = {{"resource", r->res->plural},
                                {"reason", topo_reflector_reason_name(why)},
                                {"failures", n},
                                {"retry_ms", wait}};
    topo_log_kv(level, f, sizeof(f) / sizeof(*f), "%s: %s; retrying in %ld ms", r->name, e->text,
                ms);
}

/* ---- the loop ---- */

/* The 429s the HTTP client waited out and resent within the last step
 * count as throttled, as the one it gave up on does (after_failure): the
 * reason counts every 429 answer to this reflector's requests. */
static void count_throttled(topo_reflector *r)
{
    topo_http_stats st;
    topo_k8s_get_http_stats(r->k, &st);
    if (r->failures != NULL && st.throttled > r->throttled_seen)
        atomic_fetch_add(&r->failures->n[TOPO_REFLECTOR_THROTTLED],
                         st.throttled - r->throttled_seen);
    r->throttled_seen = st.throttled;
}

/* After a failed step: 0 to go on (after the backoff), else what
 * topo_reflector_run returns. */
static int after_failure(topo_reflector *r, int rc, topo_err *e, unsigned int *failures,
                         topo_err *err)
{
    if (stopping(r))
        return ENDED; /* a failure caused by, or racing, the stop is no failure */
    if (r->h.error != NULL) {
        int verdict = r->h.error(rc, e, *failures, r->payload);
        if (verdict > 0)
            return ENDED;
        if (verdict < 0) {
            if (err != NULL)
                *err = *e;
            return verdict;
        }
    }
    topo_reflector_reason why = topo_reflector_reason_of(rc);
    if (r->failures != NULL)
        atomic_fetch_add(&r->failures->n[why], 1);
    long ms = topo_backoff_ms(r->backoff_base_ms, r->backoff_max_ms, (int)*failures, &r->rng);
    log_failure(r, e, why, *failures, ms);
    wait_ms(r, ms);
    if (*failures < MAX_FAILURES_COUNTED)
        (*failures)++;
    return 0;
}

int topo_reflector_run(topo_reflector *r, topo_err *err)
{
    topo_err e = TOPO_ERR_INIT;
    unsigned int failures = 0;
    int rc = 0;
    int restarted = 0; /* the list after an expired continue token is running */
    char listed_rv[TOPO_K8S_RV_MAX]; /* the rv of the list just taken */
    topo_http_stats st;

    topo_k8s_get_http_stats(r->k, &st);
    r->throttled_seen = st.throttled;
    while (!stopping(r)) {
        topo_err_clear(&e);
        rc = 0;
        int listed = r->rv[0] == '\0';
        if (listed) {
            int continued = 0;
            rc = list(r, &continued, &e);
            count_throttled(r);
            if (rc == TOPO_EGONE && continued && !restarted && !stopping(r)) {
                /* Compaction passed the snapshot of a long paged list:
                 * normal, start again from the first page, at once, once.
                 * A 410 to a first page is the server failing: backoff. */
                topo_log(TOPO_LOG_DEBUG, "%s: continue token expired, listing again from the "
                         "start", r->name);
                restarted = 1;
                continue;
            }
            restarted = 0;
            memcpy(listed_rv, r->rv, sizeof(listed_rv));
        }
        if (rc == 0) {
            rc = watch(r, &e);
            count_throttled(r);
            if (rc == 0) {
                failures = 0;
                continue;
            }
            if (rc == TOPO_EGONE) {
                /* History compacted past our position: the owner's copy
                 * stays as it is until the list replaces it. A watch 410
                 * at the resourceVersion of the list just taken (no event
                 * or bookmark moved it) is the server failing, or a list
                 * slower than its history: backed off below, or every
                 * LIST would follow the last at once. */
                int stuck = listed && strcmp(r->rv, listed_rv) == 0;
                if (!stuck)
                    topo_log(TOPO_LOG_DEBUG, "%s: resourceVersion %s expired, listing again",
                             r->name, r->rv);
                r->rv[0] = '\0';
                if (!stuck)
                    continue;
            }
        }
        if (rc > 0 || (rc = after_failure(r, rc, &e, &failures, err)) != 0)
            break;
    }
    /* The stop was for this run: a later one starts afresh. */
    pthread_mutex_lock(&r->mu);
    atomic_store(&r->stopped, 0);
    atomic_store(&r->cancel, 0);
    pthread_mutex_unlock(&r->mu);
    return rc < 0 ? rc : 0;
}

void topo_reflector_stop(topo_reflector *r)
{
    if (r == NULL)
        return;
    pthread_mutex_lock(&r->mu);
    atomic_store(&r->stopped, 1);
    atomic_store(&r->cancel, 1);
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->mu);
}

/* ---- lifecycle ---- */

static int copy_opt(char **out, const char *s)
{
    return s == NULL || (*out = topo_strdup(s)) != NULL ? 0 : TOPO_ENOMEM;
}

int topo_reflector_create(topo_reflector **out, topo_k8s *k, const topo_reflector_opts *opts,
                          const topo_reflector_handler *handler, void *payload, topo_err *err)
{
    topo_reflector *r = NULL;
    int rc = 0;

    *out = NULL;
    if (k == NULL || opts == NULL || opts->res == NULL || handler == NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "reflector: a client, a resource and callbacks are required");
    if (opts->resume_rv != NULL && strlen(opts->resume_rv) >= TOPO_K8S_RV_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "reflector: resume_rv longer than %d bytes",
                            TOPO_K8S_RV_MAX - 1);
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return topo_err_nomem(err, "reflector");
    pthread_mutex_init(&r->mu, NULL);
    topo_clock_cond_init(&r->wake);
    atomic_init(&r->stopped, 0);
    r->res = opts->res;
    r->k = k;
    r->h = *handler;
    r->payload = payload;
    r->page_size = opts->page_size > 0 ? opts->page_size : TOPO_K8S_PAGE_DEFAULT;
    r->metadata_only = opts->metadata_only;
    r->failures = opts->failures;
    r->watch_timeout_s = opts->watch_timeout_s > 0 ? opts->watch_timeout_s : 0;
    r->backoff_base_ms = opts->backoff_base_ms > 0 ? opts->backoff_base_ms
                                                   : TOPO_REFLECTOR_BACKOFF_BASE_MS_DEFAULT;
    r->backoff_max_ms = opts->backoff_max_ms;
    if (r->backoff_max_ms < r->backoff_base_ms)
        r->backoff_max_ms = r->backoff_base_ms > TOPO_REFLECTOR_BACKOFF_MAX_MS_DEFAULT
                                ? r->backoff_base_ms
                                : TOPO_REFLECTOR_BACKOFF_MAX_MS_DEFAULT;
    if (opts->resume_rv != NULL)
        memcpy(r->rv, opts->resume_rv, strlen(opts->resume_rv) + 1);
    /* Replicas started together must not retry in step. */
    r->rng = (uint64_t)topo_clock_ns() ^ (uint64_t)(uintptr_t)r;
    if ((rc = copy_opt(&r->name, opts->name != NULL ? opts->name : opts->res->plural)) < 0 ||
        (rc = copy_opt(&r->ns, opts->ns)) < 0 ||
        (rc = copy_opt(&r->label_selector, opts->label_selector)) < 0 ||
        (rc = copy_opt(&r->field_selector, opts->field_selector)) < 0) {
        rc = topo_err_nomem(err, "reflector");
        goto fail;
    }
    *out = r;
    return 0;
fail:
    topo_reflector_free(r);
    return rc;
}

void topo_reflector_free(topo_reflector *r)
{
    if (r == NULL)
        return;
    free(r->name);
    free(r->ns);
    free(r->label_selector);
    free(r->field_selector);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
