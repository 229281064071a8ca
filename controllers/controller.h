/* topo-sync's controller (issue 12): keeps every node's owned topology
 * labels equal to the plan. Nodes by list+watch (nodes.h), sources on their
 * intervals (sources.h), a plan recomputed when either changes or at every
 * resync, one merge PATCH per node that differs, written only by the Lease
 * holder. --once runs a single round and exits. */
#ifndef TOPO_SYNC_CONTROLLER_H
#define TOPO_SYNC_CONTROLLER_H

#include <stdatomic.h>

#include "topo/syncconfig.h"

/* Exit statuses of topo-sync. */
enum { SYNC_EXIT_OK = 0, SYNC_EXIT_FAILED = 1, SYNC_EXIT_BAD_INPUT = 2 };

typedef struct ctl_opts {
    const topo_sync_settings *settings; /* nodes_live set */
    const char *kubeconfig;             /* NULL: controller-runtime's precedence */
    int once, dry_run;
    int print_labels, print_annotations, print_plan; /* --once: on stdout after the round */
    int leader_elect;                   /* not with --once */
    const char *lease_namespace;        /* NULL: the client's */
    const char *lease_name;
    long lease_ms;                      /* 0: the leader election's default */
    long source_interval_ms, resync_ms, stale_ms;
    int min_hosts_percent;              /* the sudden-drop hold (sources.h) */
    const char *db;                     /* last good facts per source, or NULL */
    int kueue_objects;                  /* apply Topology/ResourceFlavors when served */
    double qps, burst;                  /* the writer's client */
    const char *health_address;         /* NULL: every interface */
    unsigned health_port, metrics_port; /* 0: none */
    /* Exports written after every round whose plan changed (NULL: none). */
    const char *export_kueue, *export_slurm_tree, *export_slurm_block, *export_volcano;
    const char *export_configmap; /* "NS/NAME": the exports in a ConfigMap (configmap.h) */
} ctl_opts;

/* Runs until *stop (--once: one round). Returns an exit status. */
int ctl_run(const ctl_opts *o, const atomic_int *stop);

#endif
