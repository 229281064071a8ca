/* Namespace -> no-fit policy, kept by list+watch of labelled namespaces
 * (ns_policy.h). The view is a topo_strmap from the namespace name to an
 * index into `slots` (the malloc'd names the map borrows, and their
 * policies). A (re)list builds a fresh view and swaps it in whole, so that
 * namespaces which lost the label while the watch was down disappear; watch
 * events edit the current view in place. One rwlock guards the view:
 * lookups, on the admission path, only read. */
#define _POSIX_C_SOURCE 200809L

#include "ns_policy.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/log.h"
#include "topo/strmap.h"

/* core/v1 Namespace (lib/net has no constant for it: only we watch them). */
static const topo_k8s_resource namespaces_res = {"", "v1", "namespaces", "Namespace", 0};

typedef struct slot {
    char *name; /* NULL: free */
    topo_admission_policy policy;
} slot;

typedef struct view {
    topo_strmap *map; /* name -> index into slots */
    slot *slots;
    size_t nslots, cap;
    size_t count; /* used slots */
} view;

/* Namespaces already warned about, with the invalid value warned for. */
typedef struct warned {
    char *name;
    char *value;
} warned;

struct topo_ns_policy {
    char *label;
    topo_k8s *k;
    topo_ns_policy_opts opts;

    pthread_rwlock_t lock; /* guards v */
    view *v;
    atomic_int synced; /* read by any thread */

    /* Touched by the watcher thread only. */
    warned *warned;
    size_t nwarned;
    char rv[TOPO_K8S_RV_MAX];

    pthread_t thread;
    int running;
    volatile sig_atomic_t stop;
};

/* ---- the view ---- */

static void view_free(view *v)
{
    if (v == NULL)
        return;
    topo_strmap_free(v->map);
    for (size_t i = 0; i < v->nslots; i++)
        free(v->slots[i].name);
    free(v->slots);
    free(v);
}

static view *view_new(void)
{
    view *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return NULL;
    if ((v->map = topo_strmap_create(64)) == NULL) {
        free(v);
        return NULL;
    }
    return v;
}

static void view_remove(view *v, const char *name)
{
    int32_t i = topo_strmap_remove(v->map, name);
    if (i < 0)
        return;
    free(v->slots[i].name);
    v->slots[i].name = NULL;
    v->count--;
}

static int view_set(view *v, const char *name, topo_admission_policy policy)
{
    int32_t i = topo_strmap_get(v->map, name);
    size_t j;
    if (i >= 0) {
        v->slots[i].policy = policy;
        return 0;
    }
    /* A free slot, else a new one. Slots are few (labelled namespaces). */
    for (j = 0; j < v->nslots && v->slots[j].name != NULL; j++)
        ;
    if (j == v->nslots) {
        if (v->nslots == v->cap) {
            size_t ncap = v->cap ? v->cap * 2 : 16;
            slot *ns;
            if (ncap > INT32_MAX)
                return TOPO_ELIMIT;
            if ((ns = realloc(v->slots, ncap * sizeof(*ns))) == NULL)
                return TOPO_ENOMEM;
            v->slots = ns;
            v->cap = ncap;
        }
        v->slots[v->nslots].name = NULL;
        v->nslots++;
    }
    if ((v->slots[j].name = strdup(name)) == NULL)
        return TOPO_ENOMEM;
    if (topo_strmap_put(v->map, v->slots[j].name, (int32_t)j) != 0) {
        free(v->slots[j].name);
        v->slots[j].name = NULL;
        return TOPO_ENOMEM;
    }
    v->slots[j].policy = policy;
    v->count++;
    return 0;
}

/* ---- warnings, once per namespace and value ---- */

static void unwarn(topo_ns_policy *p, const char *name)
{
    for (size_t i = 0; i < p->nwarned; i++) {
        if (strcmp(p->warned[i].name, name) == 0) {
            free(p->warned[i].name);
            free(p->warned[i].value);
            p->warned[i] = p->warned[--p->nwarned];
            return;
        }
    }
}

static void warn_invalid(topo_ns_policy *p, const char *name, const char *value)
{
    size_t i;
    for (i = 0; i < p->nwarned; i++) {
        if (strcmp(p->warned[i].name, name) == 0) {
            if (strcmp(p->warned[i].value, value) == 0)
                return; /* said already */
            break;
        }
    }
    topo_log(TOPO_LOG_WARN,
             "ns-policy: namespace %s: label %s=\"%s\" is not a policy (gate, deny or ignore); "
             "ignored",
             name, p->label, value);
    if (i < p->nwarned) {
        char *nv = strdup(value);
        if (nv != NULL) {
            free(p->warned[i].value);
            p->warned[i].value = nv;
        }
        return;
    }
    /* Remembering is best effort: when it fails, the warning may repeat. */
    warned *nw = realloc(p->warned, (p->nwarned + 1) * sizeof(*nw));
    if (nw == NULL)
        return;
    p->warned = nw;
    nw[p->nwarned].name = strdup(name);
    nw[p->nwarned].value = strdup(value);
    if (nw[p->nwarned].name == NULL || nw[p->nwarned].value == NULL) {
        free(nw[p->nwarned].name);
        free(nw[p->nwarned].value);
        return;
    }
    p->nwarned++;
}

/* ---- decoding a namespace ---- */

/* The namespace's name and its label value (NULL when it has no label). */
static int ns_fields(const json_t *obj, const char *label, const char **name, const char **value)
{
    const json_t *md = json_object_get(obj, "metadata");
    const json_t *v = json_object_get(md, "name");
    if (!json_is_string(v) || json_string_length(v) == 0)
        return -1;
    *name = json_string_value(v);
    v = json_object_get(json_object_get(md, "labels"), label);
    *value = json_is_string(v) ? json_string_value(v) : NULL;
    return 0;
}

/* Applies one namespace's current state to v (v locked for writing, or
 * private). */
static int apply(topo_ns_policy *p, view *v, const json_t *obj, int deleted)
{
    const char *name, *value;
    topo_admission_policy policy;
    if (ns_fields(obj, p->label, &name, &value) != 0) {
        topo_log(TOPO_LOG_WARN, "ns-policy: a namespace without metadata.name; skipped");
        return 0;
    }
    if (deleted || value == NULL) {
        view_remove(v, name);
        unwarn(p, name);
        return 0;
    }
    if (topo_admission_policy_parse(&policy, value) != 0) {
        view_remove(v, name);
        warn_invalid(p, name, value);
        return 0;
    }
    unwarn(p, name);
    return view_set(v, name, policy);
}

/* ---- list + watch ---- */

static int on_item(json_t *item, void *payload)
{
    void **args = payload;
    return apply(args[0], args[1], item, 0);
}

static int relist(topo_ns_policy *p, topo_err *err)
{
    topo_k8s_list_opts lo = TOPO_K8S_LIST_OPTS_INIT;
    view *fresh = view_new(), *old;
    void *args[2] = {p, fresh};
    int rc;
    if (fresh == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
    lo.label_selector = p->label;
    if ((rc = topo_k8s_list(p->rv, p->k, &namespaces_res, NULL, &lo, on_item, args, err)) != 0) {
        if (rc == TOPO_ENOMEM || rc == TOPO_ELIMIT)
            topo_err_set(err, rc, "ns-policy: list: %s", topo_strerror(rc));
        view_free(fresh);
        p->rv[0] = '\0';
        return rc;
    }
    pthread_rwlock_wrlock(&p->lock);
    old = p->v;
    p->v = fresh;
    pthread_rwlock_unlock(&p->lock);
    view_free(old);
    if (!atomic_load(&p->synced))
        topo_log(TOPO_LOG_INFO, "ns-policy: synced: %zu namespaces override the policy (label %s)",
                 fresh->count, p->label);
    atomic_store(&p->synced, 1);
    return 0;
}

static int on_event(topo_k8s_event_type type, json_t *object, void *payload)
{
    topo_ns_policy *p = payload;
    int rc;
    if (type == TOPO_K8S_BOOKMARK)
        return 0;
    pthread_rwlock_wrlock(&p->lock);
    rc = apply(p, p->v, object, type == TOPO_K8S_DELETED);
    pthread_rwlock_unlock(&p->lock);
    return rc;
}

static void nap(topo_ns_policy *p, long ms)
{
    while (ms > 0 && !p->stop) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static long jitter_ms(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ms + (long)(ts.tv_nsec % (ms / 4 + 1));
}

static void *watcher_main(void *arg)
{
    topo_ns_policy *p = arg;
    topo_err err = TOPO_ERR_INIT;
    long backoff = p->opts.backoff_base_ms;

    while (!p->stop) {
        topo_k8s_watch_opts wo = TOPO_K8S_WATCH_OPTS_INIT;
        int rc;
        topo_err_clear(&err);
        if (p->rv[0] == '\0' && (rc = relist(p, &err)) != 0) {
            if (rc == TOPO_EGONE)
                continue; /* a continue token expired mid-list: list again */
            goto failed;
        }
        wo.label_selector = p->label;
        wo.timeout_seconds = p->opts.watch_timeout_s;
        wo.stop = &p->stop;
        rc = topo_k8s_watch(p->k, &namespaces_res, NULL, p->rv, &wo, on_event, p, &err);
        if (rc == TOPO_EGONE) {
            /* History compacted past our position: the view stays served
             * until the relist replaces it. */
            topo_log(TOPO_LOG_INFO, "ns-policy: resourceVersion %s expired, listing again",
                     p->rv);
            p->rv[0] = '\0';
            continue;
        }
        if (rc != 0)
            goto failed;
        backoff = p->opts.backoff_base_ms;
        continue;
    failed:
        if (p->stop)
            break;
        topo_log(TOPO_LOG_WARN, "ns-policy: %s; retrying in %ld ms", err.text, backoff);
        nap(p, jitter_ms(backoff));
        backoff = backoff > p->opts.backoff_max_ms / 2 ? p->opts.backoff_max_ms : backoff * 2;
    }
    return NULL;
}

/* ---- API ---- */

int topo_ns_policy_create(topo_ns_policy **out, const char *label,
                          const topo_k8s_config *k8s_cfg, const topo_ns_policy_opts *opts,
                          topo_err *err)
{
    topo_ns_policy *p = NULL;
    int rc;

    *out = NULL;
    if (label == NULL || label[0] == '\0' || k8s_cfg == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ns-policy: a label and a Kubernetes "
                                                "configuration are required");
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
    pthread_rwlock_init(&p->lock, NULL);
    if (opts != NULL)
        p->opts = *opts;
    else
        p->opts = (topo_ns_policy_opts)TOPO_NS_POLICY_OPTS_INIT;
    if (p->opts.backoff_base_ms <= 0)
        p->opts.backoff_base_ms = 200;
    if (p->opts.backoff_max_ms < p->opts.backoff_base_ms)
        p->opts.backoff_max_ms = p->opts.backoff_base_ms > 10000 ? p->opts.backoff_base_ms
                                                                 : 10000;
    if (p->opts.watch_timeout_s < 0)
        p->opts.watch_timeout_s = 0;
    if ((p->label = strdup(label)) == NULL || (p->v = view_new()) == NULL) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
        goto fail;
    }
    if ((rc = topo_k8s_create(&p->k, k8s_cfg, p->opts.k8s, err)) < 0) {
        topo_err_wrap(err, "ns-policy: ");
        goto fail;
    }
    p->opts.k8s = NULL; /* borrowed for the call only */
    *out = p;
    return 0;
fail:
    topo_ns_policy_free(p);
    return rc;
}

int topo_ns_policy_start(topo_ns_policy *p, topo_err *err)
{
    if (p->running)
        return 0;
    p->stop = 0;
    if (pthread_create(&p->thread, NULL, watcher_main, p) != 0)
        return topo_err_set(err, TOPO_EGENERIC, "ns-policy: cannot start its thread");
    p->running = 1;
    return 0;
}

int topo_ns_policy_lookup(topo_ns_policy *p, const char *namespace_, topo_admission_policy *out)
{
    int32_t i;
    int found = 0;
    if (p == NULL || namespace_ == NULL)
        return 0;
    pthread_rwlock_rdlock(&p->lock);
    i = topo_strmap_get(p->v->map, namespace_);
    if (i >= 0) {
        *out = p->v->slots[i].policy;
        found = 1;
    }
    pthread_rwlock_unlock(&p->lock);
    return found;
}

int topo_ns_policy_synced(topo_ns_policy *p)
{
    return p != NULL && atomic_load(&p->synced);
}

size_t topo_ns_policy_count(topo_ns_policy *p)
{
    size_t n;
    if (p == NULL)
        return 0;
    pthread_rwlock_rdlock(&p->lock);
    n = p->v->count;
    pthread_rwlock_unlock(&p->lock);
    return n;
}

void topo_ns_policy_stop(topo_ns_policy *p)
{
    if (p == NULL || !p->running)
        return;
    p->stop = 1;
    pthread_join(p->thread, NULL);
    p->running = 0;
}

void topo_ns_policy_free(topo_ns_policy *p)
{
    if (p == NULL)
        return;
    topo_ns_policy_stop(p);
    topo_k8s_free(p->k);
    view_free(p->v);
    for (size_t i = 0; i < p->nwarned; i++) {
        free(p->warned[i].name);
        free(p->warned[i].value);
    }
    free(p->warned);
    free(p->label);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}
