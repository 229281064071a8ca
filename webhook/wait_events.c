/* Events on gated pods from the ungater's rounds (wait_events.h). */
#define _POSIX_C_SOURCE 200809L
#include "wait_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/admission.h"
#include "topo/array.h"
#include "topo/log.h"
#include "topo/str.h"

/* A PodSet whose pods are to be told why they wait. */
typedef struct pending {
    char *key;    /* its podset key; NULL: the lone pod uid */
    char *uid;
    char *reason; /* as the engine said it (cut when written) */
} pending;

struct wh_wait_events {
    pending *items; /* oldest noted first */
    size_t n, cap;
};

/* A gated pod of a pending PodSet, copied out of the cache. */
typedef struct member {
    char *ns, *name, *uid, *annotation; /* annotation NULL: none */
} member;

typedef struct members {
    member *items;
    size_t n, cap;
    int oom;
} members;

static void pending_dispose(pending *p)
{
    free(p->key);
    free(p->uid);
    free(p->reason);
}

int wh_wait_events_create(wh_wait_events **out, topo_err *err)
{
    *out = calloc(1, sizeof(**out));
    return *out != NULL ? 0 : topo_err_nomem(err, "wait events");
}

void wh_wait_events_free(wh_wait_events *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; i < w->n; i++)
        pending_dispose(&w->items[i]);
    free(w->items);
    free(w);
}

/* The entry of the PodSet, or NULL. */
static pending *find(wh_wait_events *w, const char *key, const char *uid)
{
    for (size_t i = 0; i < w->n; i++) {
        pending *p = &w->items[i];
        if (key != NULL ? p->key != NULL && strcmp(p->key, key) == 0
                        : p->key == NULL && strcmp(p->uid, uid) == 0)
            return p;
    }
    return NULL;
}

int wh_wait_events_note(wh_wait_events *w, const char *key, const char *uid, const char *reason)
{
    pending *p = find(w, key, uid);
    char *r = topo_strdup(reason);
    if (r == NULL)
        return -1;
    if (p != NULL) {
        free(p->reason);
        p->reason = r;
        return 0;
    }
    pending e = {key != NULL ? topo_strdup(key) : NULL, topo_strdup(uid), r};
    if (w->n >= WH_WAIT_EVENTS_PENDING_MAX || (key != NULL && e.key == NULL) || e.uid == NULL ||
        topo_array_reserve((void **)&w->items, &w->cap, w->n + 1, sizeof(*w->items)) != 0) {
        pending_dispose(&e);
        return -1;
    }
    w->items[w->n++] = e;
    return 0;
}

static void drop_at(wh_wait_events *w, size_t i)
{
    pending_dispose(&w->items[i]);
    memmove(&w->items[i], &w->items[i + 1], (w->n - i - 1) * sizeof(*w->items));
    w->n--;
}

void wh_wait_events_forget(wh_wait_events *w, const char *key, const char *uid)
{
    pending *p = find(w, key, uid);
    if (p != NULL)
        drop_at(w, (size_t)(p - w->items));
}

size_t wh_wait_events_pending(const wh_wait_events *w)
{
    return w->n;
}

static void members_dispose(members *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->items[i].ns);
        free(m->items[i].name);
        free(m->items[i].uid);
        free(m->items[i].annotation);
    }
    free(m->items);
}

static int collect(const topo_cache_pod *pod, void *payload)
{
    members *m = payload;
    const char *ann = NULL;
    for (size_t i = 0; i < pod->nannotations; i++)
        if (strcmp(pod->annotations[i].key, TOPO_ADMISSION_WAIT_REASON_ANNOTATION) == 0)
            ann = pod->annotations[i].value;
    if (topo_array_reserve((void **)&m->items, &m->cap, m->n + 1, sizeof(*m->items)) != 0) {
        m->oom = 1;
        return TOPO_ENOMEM;
    }
    member *c = &m->items[m->n];
    *c = (member){topo_strdup(pod->namespace_name), topo_strdup(pod->name), topo_strdup(pod->uid),
                  ann != NULL ? topo_strdup(ann) : NULL};
    m->n++; /* disposed with the rest, whole or not */
    if (c->ns == NULL || c->name == NULL || c->uid == NULL || (ann != NULL && c->annotation == NULL)) {
        m->oom = 1;
        return TOPO_ENOMEM;
    }
    return 0;
}

static void log_pod(topo_log_level level, const member *c, const char *outcome,
                    const char *detail)
{
    topo_log_field f[4] = {{"ns", c->ns}, {"pod", c->name}, {"outcome", outcome},
                           {"detail", detail}};
    topo_log_kv(level, f, detail != NULL ? 4u : 3u, "wait events: %s", outcome);
}

/* How telling one pod ended. */
enum { TOLD, GONE, RETRY };

/* The annotation first (the record of what the pod was told), then the
 * Event: a pod whose PATCH is refused is told nothing. */
static int tell(const member *c, const char *reason, topo_k8s *k, const char *instance,
                wh_pod_events_result *out)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *patch = NULL;
    int rc = topo_admission_wait_reason_patch(&patch, c->annotation, reason, &err);
    if (rc == 0)
        rc = topo_k8s_patch(NULL, k, &topo_k8s_pods, c->ns, c->name, TOPO_K8S_JSON_PATCH, patch,
                            NULL, &err);
    json_decref(patch);
    if (rc == TOPO_ENOTFOUND)
        return GONE;
    if (rc == TOPO_ECONFLICT || rc == TOPO_EINVALID) {
        /* 422: the annotation is not what the cache says (released, or
         * changed meanwhile): looked at again once the cache has caught up */
        log_pod(TOPO_LOG_DEBUG, c, "changed", err.text);
        return RETRY;
    }
    if (rc < 0) {
        log_pod(TOPO_LOG_WARN, c, "patch-failed", err.text);
        out->failed++;
        return RETRY;
    }
    /* the Event says what the annotation now says */
    char text[TOPO_ADMISSION_WAIT_REASON_MAX + 1];
    topo_admission_wait_reason_text(text, reason);
    topo_admission_event ev = {c->ns,   c->name, c->uid, "Normal", TOPO_ADMISSION_EVENT_WAITING,
                               text};
    wh_pod_events_post_one(k, instance, &ev, out);
    return TOLD;
}

/* One PodSet's pods; 1 when every one carries its reason (or is gone). */
static int run_one(const pending *p, topo_cache *cache, topo_k8s *k, const char *instance,
                   size_t *budget, wh_pod_events_result *out)
{
    topo_err err = TOPO_ERR_INIT;
    members m = {0};
    if (topo_cache_foreach_gated_pod(cache, p->key, p->key == NULL ? p->uid : NULL, collect, &m,
                                     &err) != 0) {
        topo_log(TOPO_LOG_WARN, "wait events: reading the cache: %s",
                 m.oom ? "out of memory" : err.text);
        members_dispose(&m);
        return 0;
    }
    int done = 1;
    for (size_t i = 0; i < m.n; i++) {
        const member *c = &m.items[i];
        if (topo_admission_wait_reason_same(c->annotation, p->reason))
            continue;
        if (*budget == 0) {
            out->deferred++;
            done = 0;
            continue;
        }
        (*budget)--;
        if (tell(c, p->reason, k, instance, out) == RETRY)
            done = 0;
    }
    members_dispose(&m);
    return done;
}

void wh_wait_events_run(wh_wait_events *w, topo_cache *cache, topo_k8s *k, const char *instance,
                        wh_pod_events_result *out)
{
    size_t budget = WH_WAIT_EVENTS_PER_ROUND;
    for (size_t i = 0; i < w->n;) {
        if (run_one(&w->items[i], cache, k, instance, &budget, out))
            drop_at(w, i);
        else
            i++;
    }
}

void wh_wait_events_placed(topo_k8s *k, const char *instance, const char *ns, const char *name,
                           const char *uid, const json_t *patch, wh_pod_events_result *out)
{
    char domain[TOPO_ADMISSION_WAIT_REASON_MAX + 1];
    char message[TOPO_ADMISSION_WAIT_REASON_MAX + 128];
    if (topo_admission_patch_domain_text(domain, sizeof domain, patch) != 0)
        snprintf(domain, sizeof domain, "its reserved domain");
    snprintf(message, sizeof message,
             "topo-webhook placed the pod in %s (nodeSelector set, scheduling gate %s removed)",
             domain, TOPO_ADMISSION_WAIT_GATE);
    topo_admission_event ev = {ns, name, uid, "Normal", TOPO_ADMISSION_EVENT_PLACED, message};
    wh_pod_events_post_one(k, instance, &ev, out);
}
