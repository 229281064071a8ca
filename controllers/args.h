/* topo-sync's command line: the option table (args.c), --help and the
 * Markdown page docs/cli/topo-sync.md from it. */
#ifndef TOPO_SYNC_ARGS_H
#define TOPO_SYNC_ARGS_H

#include "topo/options.h"

/* The Lease topo-sync elects its writer with when --lease-name is not given
 * (the option row shows it, main.c applies it). */
#define CTL_LEASE_NAME_DEFAULT "topo-sync"

typedef struct ctl_args {
    const char *config;
    int once, dry_run, print_labels, print_annotations, print_plan;
    topo_opt_list ibnetdiscover; /* every --ibnetdiscover */
    const char *node_name_map;
    const char *lldp_dir;
    const char *ufm_systems_file, *ufm_links_file;
    const char *netbox_url, *netbox_token_file;
    const char *ufm_url, *ufm_username, *ufm_password_file, *ufm_token_file;
    const char *lldp_url;
    const char *nodes_file;
    const char *levels, *prefix;
    int topograph_labels;
    topo_opt_list kueue_flavor_labels; /* every --kueue-flavor-label KEY=VALUE */
    const char *export_kueue, *export_slurm_tree, *export_slurm_block, *export_volcano;
    const char *export_configmap;
    topo_opt_daemon d; /* the rows shared with topo-webhook (topo/options.h) */
    const char *db;
    int kueue_objects;
    unsigned long source_interval_s, resync_s, stale_after_s, min_hosts_percent;
    double kube_qps, kube_burst;
    unsigned long metrics_port;
} ctl_args;

/* 0: run; 1: help, the reference page or the version was printed (exit
 * 0); 2: a bad command line, the message printed (exit 2). Free with
 * ctl_args_free either way. */
int ctl_args_parse(ctl_args *a, int argc, char **argv);
void ctl_args_free(ctl_args *a);

#endif
