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
    topo_opt_daemon d; /* the rows shared with topo-sync (topo/options.h) */
    unsigned long port, threads, cert_check_s, shutdown_s, request_timeout_s;
    unsigned long max_body_mib, per_client, metrics_port, min_body_rate, idle_timeout_s;
    double header_timeout; /* seconds */
    const char *cert_file, *key_file, *tls_priorities, *metrics_address;
    /* placement (placement.h) */
    const char *config, *levels, *policy, *db, *inventory, *pods;
    unsigned long ungate_s;
    /* several replicas */
    const char *peer_address, *peer_ca_file, *peer_server_name;
    unsigned long renew_s, retry_s;
    topo_opt_list record_key_files; /* --record-key-file, repeatable */
    int resource_quotas; /* -1 unset */
    int noop;
} wh_args;

/* Parses argv and checks the options together. 0: go on; 1: help was
 * printed, or the version (exit 0); 2: a message was printed to stderr (exit 2). */
int wh_args_parse(wh_args *a, int argc, char **argv);

/* Frees what parsing allocated (the lists); a is empty after. */
void wh_args_free(wh_args *a);

/* The server's and the placement's options from a (the placement's config
 * and policy are the caller's). */
void wh_args_server_opts(const wh_args *a, wh_server_opts *out);
void wh_args_placement_opts(const wh_args *a, wh_placement_opts *out);

#endif
