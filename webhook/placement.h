/* Everything topo-webhook places pods with, started and stopped as one:
 * the configuration, one live snapshot per topology, the SQLite cache
 * holding reservations, the admission handler over them, and where the
 * cluster's state comes from — either a static inventory loaded once (no API
 * server: demo, tests, benchmarks) or the API server (a cache filler thread
 * doing list+watch, the per-namespace policy watcher, the ResourceQuota
 * view, the ungater). */
#ifndef TOPO_WEBHOOK_PLACEMENT_H
#define TOPO_WEBHOOK_PLACEMENT_H

#include <stdint.h>

#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/error.h"

#include "server.h"

typedef struct wh_placement_opts {
    const topo_admission_config *config; /* borrowed; outlives the placement */
    const char *db_path;    /* the cache file; NULL with an inventory: in memory */
    const char *inventory;  /* static nodes (NodeList JSON or fixture YAML), or NULL */
    const char *pods;       /* static pods using capacity, or NULL */
    const char *kubeconfig; /* without an inventory: NULL = $KUBECONFIG, in-cluster, ~/.kube */
    long ungate_interval_ms;     /* 0: the config's */
    int leader_election;         /* the ungater competes for a Lease */
    const char *lease_namespace; /* NULL: the client's namespace */
    const char *lease_name;      /* NULL: TOPO_UNGATER_LEASE_NAME */
    int policy; /* a topo_admission_policy for every topology and the default (--policy
                 * with --levels), or -1: the config's */
    int resource_quotas; /* from the API server: keep the namespaces' ResourceQuota room
                          * (quota.c) and give it to the handler (--resource-quotas) */
    /* Several replicas (docs/webhook.md "Several replicas", placer.h): */
    const char *peer_address;     /* HOST:PORT the others reach this one at, or NULL */
    const char *peer_ca_file;     /* the CA of the placer's certificate, or NULL */
    const char *peer_server_name; /* NULL: the first DNS name of cert_file */
    const char *cert_file, *key_file; /* the serving pair (the record key, the name) */
    const char *const *record_key_files; /* --record-key-file, in order (peer.h) */
    size_t nrecord_key_files;
    long lease_ms, renew_deadline_ms, retry_ms; /* 0: client-go's defaults */
} wh_placement_opts;

typedef struct wh_placement wh_placement;

/* Builds and starts everything (threads included). Errors name what failed. */
int wh_placement_start(wh_placement **out, const wh_placement_opts *opts, topo_err *err);
/* The handler's state, for the server's handler and the ungater. */
topo_admission_ctx *wh_placement_ctx(wh_placement *p);
/* Answers one AdmissionReview: placed here, or by the placer (placer.h). */
int wh_placement_handle(wh_placement *p, wh_phase phase, int64_t deadline_ns,
                        const char *forwarded_by, const char *body, size_t len, char **out_body,
                        size_t *out_len, int *out_status);
/* 1 when requests can be answered from current data: a static inventory at
 * once; from the API server, once every kind was listed (and the namespace
 * policies and the ResourceQuotas, when configured) and, with leader
 * election, the Lease was read once (who places is known). */
int wh_placement_ready(wh_placement *p);
/* 1 once SQLite found the cache file (--db) corrupt while running (a
 * request's or the checkpointer's connection): every later answer from it
 * is suspect; the owner exits, and the restart heals the file
 * (topo_cache_open_healing). */
int wh_placement_cache_corrupt(wh_placement *p);

/* The cache filler ended on an error that cannot heal (out of memory, a
 * corrupt cache file): the process must restart (it exits 1). */
int wh_placement_filler_stopped(wh_placement *p);
/* Housekeeping every second or so (reservations, ungater kicks). */
void wh_placement_tick(wh_placement *p);
/* The placement's /metrics text (Prometheus format), malloc'd. */
char *wh_placement_metrics(void *p);
/* Stops every thread (joined), then frees. NULL-safe. */
void wh_placement_free(wh_placement *p);

#endif
