/* The Events that say why a gated pod waits when that changes, and that it
 * was released (docs/webhook.md "Events on gated pods"), from the ungater's
 * rounds: only the placer runs them.
 *
 * The pod's wait-reason annotation is the record of what it was last told:
 * admission writes it with the first Event (TopologyWaiting, queued by
 * lib/admission); a round that finds its PodSet still not fitting for
 * another reason notes it here (wh_wait_events_note), and
 * wh_wait_events_run then, pod by pod, PATCHes the annotation (guarded by
 * a "test" of its old value) and posts a TopologyWaiting Event with the new
 * text. So a pod that waits an hour for one reason gets one Event, and a
 * replica that takes over compares with what the pods carry: it posts
 * nothing for reasons already told. At most WH_WAIT_EVENTS_PER_ROUND pods
 * per round (two API calls each); the rest are left for the next rounds
 * (counted as deferred). From the ungater's thread only. */
#ifndef TOPO_WEBHOOK_WAIT_EVENTS_H
#define TOPO_WEBHOOK_WAIT_EVENTS_H

#include <stddef.h>

#include <jansson.h>

#include "topo/cache.h"
#include "topo/error.h"
#include "topo/k8s.h"

#include "pod_events.h"

/* Pods told a new reason per round. */
#define WH_WAIT_EVENTS_PER_ROUND 32
/* PodSets remembered with a reason not yet told to all their pods. */
#define WH_WAIT_EVENTS_PENDING_MAX 1024

typedef struct wh_wait_events wh_wait_events;

int wh_wait_events_create(wh_wait_events **out, topo_err *err);
void wh_wait_events_free(wh_wait_events *w);

/* The PodSet (its podset key; NULL: the lone pod uid) was evaluated and
 * does not fit, for reason: its gated pods are to be told. -1 when it
 * cannot be remembered (over WH_WAIT_EVENTS_PENDING_MAX, out of memory). */
int wh_wait_events_note(wh_wait_events *w, const char *key, const char *uid, const char *reason);
/* The PodSet's pods are being released: nothing more to tell them. */
void wh_wait_events_forget(wh_wait_events *w, const char *key, const char *uid);
/* PodSets with pods still to be told. */
size_t wh_wait_events_pending(const wh_wait_events *w);

/* Tells the noted PodSets' gated pods (read from cache) whose annotation
 * differs, oldest noted first, within the round's budget; a PodSet whose
 * pods all carry its reason (or are gone) is forgotten. Adds to *out
 * (created, failed, deferred, dropped). */
void wh_wait_events_run(wh_wait_events *w, topo_cache *cache, topo_k8s *k, const char *instance,
                        wh_pod_events_result *out);

/* The pod ns/name (uid) was released by patch (an ungate patch): a
 * TopologyPlaced Event naming the domain its nodeSelector now selects. */
void wh_wait_events_placed(topo_k8s *k, const char *instance, const char *ns, const char *name,
                           const char *uid, const json_t *patch, wh_pod_events_result *out);

#endif
