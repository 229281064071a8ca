/* The ungater: releases pods that admission gated (TOPO_ADMISSION_WAIT_GATE)
 * once their PodSet fits, through the API server.
 *
 * One thread. Every interval (sooner after wh_ungater_kick), while this
 * replica is the placer (it holds the placer's Lease, placer_lease.h, which
 * this thread keeps), it reads the gated PodSets
 * (unbound, non-terminal pods grouped by their topology.topo.io/podset
 * annotation: topo_cache_foreach_gated_podset, one row per PodSet) from its
 * own connection to the cache file and, PodSet by PodSet, reads its gated
 * pods, GETs each pod, asks topo_admission_ungate_pod for the patch and PATCHes the pod
 * (JSON Patch, resourceVersion precondition). A PodSet that still does not
 * fit is left for the next round; so is a pod that changed meanwhile.
 * PodSets go oldest first (their oldest pod's creationTimestamp, then
 * namespace and name); one that did not fit is passed over until capacity
 * may have come back for it (ungater_skip.h). No lock is held across a
 * round: admissions interleave with it, PodSet by PodSet. Each round it
 * also posts the Events admission owes pods (pod_events.h), and while it
 * holds the Lease it gives admission the Lease's term
 * (topo_admission_set_term). */
#ifndef TOPO_WEBHOOK_UNGATER_H
#define TOPO_WEBHOOK_UNGATER_H

#include <stdint.h>

#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/error.h"
#include "topo/limits.h"
#include "topo/live.h"
#include "topo/metrics.h"

#include "placer_lease.h"
/* Bounds of interval_ms. */
#define TOPO_UNGATER_INTERVAL_MIN_MS 10L
#define TOPO_UNGATER_INTERVAL_MAX_MS 3600000L

typedef struct wh_ungater wh_ungater;

typedef struct wh_ungater_opts {
    const char *db_path;         /* the cache file the filler keeps current (required) */
    const char *kubeconfig;      /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    /* A configuration already loaded (borrowed, must outlive the ungater),
     * or NULL (then kubeconfig is loaded): the daemon's other clients' one,
     * so that an exec credential plugin runs once for all of them. */
    const struct topo_k8s_config *k8s_config;
    topo_admission_ctx *ctx;     /* borrowed (required); must outlive the ungater */
    long interval_ms;            /* 0: TOPO_ADMISSION_UNGATE_INTERVAL_DEFAULT_MS */
    /* The placer's Lease (wh_placer_lease_opts): */
    const char *lease_namespace; /* NULL: the client's namespace, else "default" */
    const char *lease_name;      /* NULL: TOPO_UNGATER_LEASE_NAME */
    const char *identity;        /* NULL: <hostname>_<pid> */
    int leader_election;         /* 0: always act (one replica) */
    long lease_ms, renew_deadline_ms, retry_ms; /* 0: client-go's defaults (topo/k8s.h) */
    long settle_ms;              /* 0: TOPO_UNGATER_SETTLE_MS_DEFAULT */
    /* The live snapshots admission places on (borrowed, must outlive the
     * ungater): PodSets that did not fit are evaluated again only when
     * these say they might now (ungater_skip.h). None: every round
     * evaluates every PodSet. */
    topo_live *const *lives;
    size_t nlives;
    /* Whether the cache the rounds read follows the cluster (NULL: always).
     * While it does not (the filler lists, or backs off a 403 or a full
     * disk) the replica does not lead: it lets the Lease go if it holds it
     * and does not try to take it, so that a ready replica places. Called
     * on the ungater's thread. */
    int (*cache_ready)(void *payload);
    void *cache_ready_payload;
} wh_ungater_opts;

/* Loads the Kubernetes configuration, opens the cache and starts the
 * thread. Strings are copied. TOPO_EINVALID for bad options (named). */
int wh_ungater_start(wh_ungater **out, const wh_ungater_opts *opts,
                       topo_err *err) TOPO_MUST_CHECK;
/* Asks for a round now (capacity changed). Any thread; NULL-safe. */
void wh_ungater_kick(wh_ungater *u);
/* Stops the thread and joins it (a round in progress ends after its current
 * pod); releases the lease when held. NULL-safe, idempotent. */
void wh_ungater_stop(wh_ungater *u);
/* Stops if needed, then frees. NULL-safe. */
void wh_ungater_free(wh_ungater *u);

typedef struct wh_ungater_stats {
    /* Counters since start, except waiting and leader. */
    uint64_t rounds;   /* rounds run (as leader) */
    uint64_t attempts; /* pods handed to topo_admission_ungate_pod */
    uint64_t ungated;  /* pods patched: gate removed, nodeSelector set */
    uint64_t waiting;  /* gauge: pods the last complete round left gated (PodSet does
                        * not fit, pod changed meanwhile, over TOPO_MAX_UNGATER_PODS) */
    /* gauge: the creationTimestamp (seconds since the epoch) of the oldest
     * PodSet's oldest pod the last complete round left gated; 0: none (or
     * none with a known creation time). Its age is what an operator alerts on. */
    int64_t oldest_waiting_created;
    uint64_t errors;   /* failed API calls, unexpected answers */
    int leader;        /* this replica acts now */
    uint64_t takeovers;      /* times this replica took the Lease */
    int64_t last_settle_ms;  /* how long the last takeover waited before placing */
    uint64_t skipped;        /* PodSets a round passed over (ungater_skip.h) */
    uint64_t remembered;     /* gauge: PodSets remembered as not fitting */
    int64_t last_round_us;   /* how long the last round took */
    /* Events posted on pods (pod_events.h), and those whose POST failed;
     * wait-reason changes left for a later round (over
     * WH_WAIT_EVENTS_PER_ROUND, counted each round they wait) and not
     * remembered (wait_events.h) */
    uint64_t events_created, events_failed, events_deferred, events_dropped;
    uint64_t stranded_failed; /* pods failed on a failed node (stranded.h) */
    uint64_t stranded_errors; /* ... API calls for them that failed */
} wh_ungater_stats;

/* The placer's Lease as the ungater's thread keeps it (placer_lease.h).
 * Its name: */
const char *wh_ungater_lease_name(const wh_ungater *u);

/* wh_placer_lease_known: until it is known who places, the replica is not
 * ready (wh_placement_ready). Any thread. */
int wh_ungater_placer_known(wh_ungater *u);

/* Who places now (wh_placer_lease_state). Any thread. */
wh_ungater_placer_state wh_ungater_placer(wh_ungater *u, char *holder, size_t size,
                                              long *wait_ms);

/* Every round's duration is observed (seconds) into histogram from now on
 * (NULL: none). Any thread. */
void wh_ungater_observe_rounds(wh_ungater *u, topo_metrics_series *histogram);

/* Thread-safe snapshot of the counters. */
void wh_ungater_get_stats(wh_ungater *u, wh_ungater_stats *out);

#endif
