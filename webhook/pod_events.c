/* Posting the Events admission owes pods (pod_events.h). */
#define _POSIX_C_SOURCE 200809L
#include "pod_events.h"

#include <time.h>

#include <jansson.h>

#include "topo/k8s_event.h"
#include "topo/log.h"

typedef struct post {
    topo_k8s *k;
    const char *instance;
    wh_pod_events_result *out;
} post;

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void post_one(void *payload, const topo_admission_event *ev)
{
    post *p = payload;
    topo_err err = TOPO_ERR_INIT;
    json_t *doc = NULL;
    topo_k8s_event_spec spec = {.namespace_ = ev->namespace_,
                                .kind = "Pod",
                                .name = ev->pod_name,
                                .object_namespace = ev->namespace_,
                                .uid = ev->pod_uid,
                                .type = ev->type,
                                .reason = ev->reason,
                                .message = ev->message,
                                .component = WH_EVENT_COMPONENT,
                                .instance = p->instance};
    int rc = topo_k8s_event_build(&doc, &spec, wall_ns(), &err);
    if (rc == 0)
        rc = topo_k8s_create_object(NULL, p->k, &topo_k8s_events, ev->namespace_, doc, &err);
    json_decref(doc);
    if (rc < 0) {
        topo_log_field f[4] = {{"ns", ev->namespace_},
                               {"pod", ev->pod_name},
                               {"reason", ev->reason},
                               {"error", err.text}};
        topo_log_kv(TOPO_LOG_WARN, f, 4, "event not created");
        p->out->failed++;
        return;
    }
    p->out->created++;
}

void wh_pod_events_post_one(topo_k8s *k, const char *instance, const topo_admission_event *ev,
                            wh_pod_events_result *out)
{
    post p = {k, instance, out};
    post_one(&p, ev);
}

void wh_pod_events_post(topo_admission_ctx *ctx, topo_k8s *k, const char *instance,
                        wh_pod_events_result *out)
{
    topo_err err = TOPO_ERR_INIT;
    post p = {k, instance, out};
    if (topo_admission_events_drain(ctx, post_one, &p, &err) < 0)
        topo_log(TOPO_LOG_WARN, "events: %s", err.text);
}
