/* Everything topo-webhook places pods with, started and stopped as one:
 * the configuration, one live snapshot per topology, the SQLite cache
 * holding reservations, the admission handler over them, and where the
 * cluster's state comes from — either a static inventory loaded once (no API
 * server: demo, tests, benchmarks) or the API server (a cache filler thread
 * doing list+watch, the per-namespace policy watcher, the ResourceQuota
 * view, the ungater). */
#ifndef TOPO_WEBHOOK_PLACEMENT_H
#define TOPO_WEBHOOK_PLACEMENT_H

#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/error.h"

typedef struct wh_placement_opts {
    const topo_admission_config *config; /* borrowed; outlives the placement */
    const char *db_path;    /* the cache file; NULL with an inventory: in memory */
    const char *inventory;  /* static nodes (NodeList JSON or fixture YAML), or NULL */
    const char *pods;       /* static pods using capacity, or NULL */
    const char *kubeconfig; /* without an inventory: NULL = $KUBECONFIG, in-cluster, ~/.kube */
    long ungate_interval_ms;     /* 0: the config's */
    int leader_election;         /* the ungater competes for a Lease */
    const char *lease_namespace; /* NULL: the client's namespace */
    int policy; /* a topo_admission_policy for every topology and the default (--policy
                 * with --levels), or -1: the config's */
    int resource_quotas; /* from the API server: keep the namespaces' ResourceQuota room
                          * (quota.c) and give it to the handler (--resource-quotas) */
} wh_placement_opts;

typedef struct wh_placement wh_placement;

/* Builds and starts everything (threads included). Errors name what failed. */
int wh_placement_start(wh_placement **out, const wh_placement_opts *opts, topo_err *err);
/* The handler's state, for the server's handler and the ungater. */
topo_admission_ctx *wh_placement_ctx(wh_placement *p);
/* 1 when requests can be answered from current data: a static inventory at
 * once; from the API server, once every kind was listed (and the namespace
 * policies and the ResourceQuotas, when configured). */
int wh_placement_ready(wh_placement *p);
/* Housekeeping every second or so (reservations, ungater kicks). */
void wh_placement_tick(wh_placement *p);
/* The placement's /metrics text (Prometheus format), malloc'd. */
char *wh_placement_metrics(void *p);
/* Stops every thread (joined), then frees. NULL-safe. */
void wh_placement_free(wh_placement *p);

#endif
