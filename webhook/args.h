/* topo-webhook's command line: one option table (args.c) drives the
 * parsing, the bounds, --help and docs/cli/topo-webhook.md
 * (--help-markdown); the checks between options follow it. */
#ifndef TOPO_WEBHOOK_ARGS_H
#define TOPO_WEBHOOK_ARGS_H

#include "placement.h"
#include "server.h"
#include "topo/admission.h"
#include "topo/options.h"

typedef struct wh_args {
    /* transport (server.h) */
    unsigned long port, health_port, threads, cert_check_s, shutdown_s, request_timeout_s;
    unsigned long max_body_mib, per_client, metrics_port, min_body_rate, idle_timeout_s;
    double header_timeout; /* seconds */
    const char *cert_file, *key_file, *tls_priorities, *health_address, *metrics_address;
    /* logging */
    const char *log_format, *verbosity;
    /* placement (placement.h) */
    const char *config, *levels, *policy, *kubeconfig, *db, *inventory, *pods,
        *lease_namespace;
    unsigned long ungate_s;
    /* several replicas */
    const char *peer_address, *peer_ca_file, *peer_server_name, *lease_name;
    unsigned long lease_s, renew_s, retry_s;
    topo_opt_list record_key_files; /* --record-key-file, repeatable */
    int leader_elect;    /* -1 unset */
    int resource_quotas; /* -1 unset */
    int noop, help_markdown;
} wh_args;

/* Parses argv and checks the options together. 0: go on; 1: help was
 * printed (exit 0); 2: a message was printed to stderr (exit 2). */
int wh_args_parse(wh_args *a, int argc, char **argv);

/* Frees what parsing allocated (the lists); a is empty after. */
void wh_args_free(wh_args *a);

/* The server's and the placement's options from a (the placement's config
 * and policy are the caller's). */
void wh_args_server_opts(const wh_args *a, topo_wh_server_opts *out);
void wh_args_placement_opts(const wh_args *a, wh_placement_opts *out);

#endif
