/* The Events topo-webhook owes pods (a failed node's slot moved, or no room
 * for it: docs/webhook.md "When nodes fail"), posted by the ungater thread
 * each round as core/v1 Events in the pods' namespaces
 * (topo_admission_events_drain finds the pods; topo/k8s_event.h builds
 * them). Best effort: a POST that fails is logged once and counted, never
 * retried. From one thread (the ungater's: its client). */
#ifndef TOPO_WEBHOOK_POD_EVENTS_H
#define TOPO_WEBHOOK_POD_EVENTS_H

#include <stdint.h>

#include "topo/admission.h"
#include "topo/k8s.h"

/* source.component of every Event topo-webhook posts. */
#define WH_EVENT_COMPONENT "topo-webhook"

typedef struct wh_pod_events_result {
    uint64_t created;  /* POSTed */
    uint64_t failed;   /* refused or unanswered (logged) */
    uint64_t deferred; /* wait_events.h: a pod's new reason left for a later round */
    uint64_t dropped;  /* wait_events.h: a PodSet's new reason not remembered */
} wh_pod_events_result;

/* Drains ctx's due Events and POSTs each to /api/v1/namespaces/<ns>/events
 * through k; instance: reportingInstance (NULL: none). Adds to *out. */
void wh_pod_events_post(topo_admission_ctx *ctx, topo_k8s *k, const char *instance,
                        wh_pod_events_result *out);

/* POSTs one Event about the pod ev names, counted in *out. */
void wh_pod_events_post_one(topo_k8s *k, const char *instance, const topo_admission_event *ev,
                            wh_pod_events_result *out);

#endif
