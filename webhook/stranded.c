/* Pods stranded on a failed node (stranded.h). */
#define _POSIX_C_SOURCE 200809L
#include "stranded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "topo/k8s_event.h"
#include "topo/kueue_names.h"
#include "topo/log.h"
#include "topo/str.h"

typedef struct done {
    char *uid;
    int64_t until_ms;
} done;

struct wh_stranded {
    done *done; /* ring of WH_STRANDED_REMEMBER_MAX: pods failed lately */
    size_t next, n;
};

int wh_stranded_create(wh_stranded **out, topo_err *err)
{
    wh_stranded *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->done = calloc(WH_STRANDED_REMEMBER_MAX, sizeof(*s->done))) == NULL) {
        free(s);
        return topo_err_nomem(err, "stranded pods");
    }
    *out = s;
    return 0;
}

void wh_stranded_free(wh_stranded *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < WH_STRANDED_REMEMBER_MAX; i++)
        free(s->done[i].uid);
    free(s->done);
    free(s);
}

static int remembered(const wh_stranded *s, const char *uid, int64_t now_ms)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->done[i].uid != NULL && s->done[i].until_ms > now_ms &&
            strcmp(s->done[i].uid, uid) == 0)
            return 1;
    return 0;
}

/* Best effort: forgetting a pod only costs a GET that finds it Failed. */
static void remember(wh_stranded *s, const char *uid, int64_t now_ms)
{
    done *d = &s->done[s->next];
    free(d->uid);
    d->uid = topo_strdup(uid);
    d->until_ms = now_ms + WH_STRANDED_REMEMBER_MS;
    s->next = (s->next + 1) % WH_STRANDED_REMEMBER_MAX;
    if (s->n < WH_STRANDED_REMEMBER_MAX)
        s->n++;
}

/* ---- is it still the pod stranded there? ---- */

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* Why the pod as the API server has it is not to be failed (NULL: it is):
 * Kueue's getPodsToTerminate (unbound, Pending, not gated), and still the
 * pod the cache saw, pinned to that host (the cache lags). */
static const char *not_stranded(const json_t *pod, const topo_admission_stranded *p)
{
    const char *uid = str_at(pod, "metadata", "uid");
    const char *node = str_at(pod, "spec", "nodeName");
    const char *phase = str_at(pod, "status", "phase");
    const char *pinned = json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "spec"), "nodeSelector"), TOPO_KUEUE_HOSTNAME_LABEL));
    if (uid == NULL || strcmp(uid, p->pod_uid) != 0)
        return "another pod of that name";
    if (node != NULL && node[0] != '\0')
        return "bound";
    if (phase != NULL && strcmp(phase, "Pending") != 0)
        return "not Pending";
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL)
        return "being deleted";
    if (topo_admission_pod_json_gated(pod))
        return "gated";
    if (pinned == NULL || strcmp(pinned, p->host) != 0)
        return "not pinned to the node";
    return NULL;
}

/* ---- failing it ---- */

/* Now as the API server's timestamps give it (the Events' format). */
static void rfc3339_now(char out[TOPO_K8S_EVENT_STAMP_SIZE])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (topo_k8s_event_stamp(out, (int64_t)ts.tv_sec * 1000000000LL, NULL) < 0)
        snprintf(out, TOPO_K8S_EVENT_STAMP_SIZE, "1970-01-01T00:00:00Z");
}

/* The status patch (strategic merge: the condition is merged into the
 * pod's conditions by type) with the uid as a precondition. */
static json_t *fail_patch(const topo_admission_stranded *p)
{
    char when[TOPO_K8S_EVENT_STAMP_SIZE], msg[512];
    rfc3339_now(when);
    snprintf(msg, sizeof msg,
             "topo-webhook: node %s %s: the pod cannot run on the node it was placed on; its "
             "controller replaces it",
             p->host, p->what);
    return json_pack("{s:{s:s}, s:{s:s, s:[{s:s, s:s, s:s, s:s, s:s}]}}", "metadata", "uid",
                     p->pod_uid, "status", "phase", "Failed", "conditions", "type",
                     WH_STRANDED_CONDITION, "status", "True", "reason", WH_STRANDED_REASON,
                     "message", msg, "lastTransitionTime", when);
}

static void log_pod(topo_log_level level, const topo_admission_stranded *p, const char *outcome,
                    const char *detail)
{
    topo_log_field f[6] = {{"ns", p->namespace_}, {"pod", p->pod_name}, {"node", p->host},
                           {"reason", p->what},   {"outcome", outcome}, {"detail", detail}};
    topo_log_kv(level, f, detail != NULL ? 6u : 5u, "stranded pod: %s", outcome);
}

typedef struct pass {
    wh_stranded *s;
    topo_k8s *k;
    int64_t now_ms;
    wh_stranded_result *out;
} pass;

/* 0 to go on, 1 to end the pass (a call failed). */
static int fail_one(void *payload, const topo_admission_stranded *p)
{
    pass *ps = payload;
    topo_err err = TOPO_ERR_INIT;
    json_t *pod = NULL, *patch = NULL;
    int stop = 0;

    if (remembered(ps->s, p->pod_uid, ps->now_ms))
        return 0;
    int rc = topo_k8s_get(&pod, ps->k, &topo_k8s_pods, p->namespace_, p->pod_name, &err);
    if (rc == TOPO_ENOTFOUND)
        return 0;
    if (rc < 0) {
        log_pod(TOPO_LOG_WARN, p, "get-failed", err.text);
        ps->out->errors++;
        return 1;
    }
    const char *why = not_stranded(pod, p);
    if (why != NULL) {
        log_pod(TOPO_LOG_DEBUG, p, "skipped", why);
        goto done;
    }
    const char *rv = str_at(pod, "metadata", "resourceVersion");
    if ((patch = fail_patch(p)) == NULL) {
        log_pod(TOPO_LOG_WARN, p, "error", "out of memory");
        ps->out->errors++;
        stop = 1;
        goto done;
    }
    rc = topo_k8s_patch_subresource(NULL, ps->k, &topo_k8s_pods, p->namespace_, p->pod_name,
                                    "status", TOPO_K8S_STRATEGIC_MERGE_PATCH, patch, rv, &err);
    if (rc == 0) {
        log_pod(TOPO_LOG_INFO, p, "failed", NULL);
        ps->out->failed++;
        remember(ps->s, p->pod_uid, ps->now_ms);
    } else if (rc == TOPO_ENOTFOUND || rc == TOPO_ECONFLICT) {
        log_pod(TOPO_LOG_DEBUG, p, "changed", err.text);
    } else {
        log_pod(TOPO_LOG_WARN, p, "patch-failed", err.text);
        ps->out->errors++;
        stop = 1;
    }
done:
    json_decref(patch);
    json_decref(pod);
    return stop;
}

int wh_stranded_run(wh_stranded *s, topo_admission_ctx *ctx, topo_k8s *k, int64_t now_ms,
                    wh_stranded_result *out, topo_err *err)
{
    pass ps = {s, k, now_ms, out};
    memset(out, 0, sizeof(*out));
    int rc = topo_admission_stranded_foreach(ctx, fail_one, &ps, err);
    return rc < 0 ? rc : 0;
}
