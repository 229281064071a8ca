/* Input loading shared by `topoassign assign` and `show` (flags are parsed
 * by each command's option table, commands.h). Helpers report problems
 * through topo_err; the commands print them. */
#ifndef TOPO_CLI_COMMON_H
#define TOPO_CLI_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/inventory.h"
#include "topo/k8s.h"
#include "topo/model.h"
#include "topo/options.h"
#include "topo/pool.h"

/* The topology name in Kueue's messages unless --topology-name says. */
#define TOPO_CLI_TOPOLOGY_NAME "default"
/* The resource assign counts GPUs of and show shows unless --resource says. */
#define TOPO_CLI_GPU_RESOURCE "nvidia.com/gpu"

/* The option rows commands share, one text for each: expanded inside a
 * command's topo_opt table, with that file's O(field) (the offset in its
 * own args struct). The rows of the cluster's input land in a
 * cli_input_args member named `input` (assign, show, simulate). */

/* --kubeconfig and --context (help: what the kubeconfig reaches). */
#define TOPO_CLI_KUBECONFIG_ROWS(help, kubeconfig_field, context_field)                           \
    {"--kubeconfig", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, TOPO_K8S_CONFIG_DEFAULT_HELP,      \
     help, O(kubeconfig_field), NULL},                                                             \
    {"--context", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, "its current-context",                \
     "the kubeconfig's context", O(context_field), NULL}

/* --nodes (section: the group it starts). */
#define TOPO_CLI_NODES_ROW(section)                                                                \
    {"--nodes", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL, NULL,                                     \
     "kubectl get nodes -o json, or a fixture YAML", O(input.nodes), section}

/* --nodes, --pods and --db as assign and show read them. */
#define TOPO_CLI_FILE_ROWS(section)                                                                \
    TOPO_CLI_NODES_ROW(section),                                                                   \
    {"--pods", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,                                    \
     "kubectl get pods -A -o json: usage of bound pods", O(input.pods), NULL},                     \
    {"--db", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,                                      \
     "a topo cache file instead of --nodes/--pods: its nodes, pods and unexpired reservations "    \
     "(topoassign cache import makes one)",                                                        \
     O(input.db), NULL}

/* The live cluster's rows (--live, --kubeconfig, --context, --levels,
 * --topology) of assign and show. */
#define TOPO_CLI_LIVE_ROWS                                                                         \
    {"--live", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,                                        \
     "the cluster now, instead of --nodes/--pods or --db: its Nodes and Pods listed once "         \
     "through the kubeconfig into a temporary cache (what kubectl topo does); implied by "         \
     "--kubeconfig and --context",                                                                 \
     O(input.live), NULL},                                                                         \
    TOPO_CLI_KUBECONFIG_ROWS("the live cluster's kubeconfig", input.kubeconfig, input.context),    \
    {"--levels", NULL, TOPO_OPT_STRING, "L1,L2,...", 0, 0, NULL, NULL,                             \
     "topology level labels, coarsest first; without it, the live cluster's (topo-webhook's "      \
     "ConfigMap, else Kueue's Topology, the source said on stderr); required offline",             \
     O(input.levels), NULL},                                                                       \
    {"--topology", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, NULL,                                \
     "without --levels: which of the live cluster's topologies (a topo-webhook topology or a "     \
     "Kueue Topology) gives the levels, when it has several", O(input.topology), NULL}

/* --node-label. */
#define TOPO_CLI_NODE_LABEL_ROW                                                                    \
    {"--node-label", NULL, TOPO_OPT_LIST, "K=V", 0, 0, NULL, NULL,                                 \
     "nodes of the ResourceFlavor", O(input.node_labels), NULL}

/* --topology-name (help: where the name is used). */
#define TOPO_CLI_TOPOLOGY_NAME_ROW(help)                                                           \
    {"--topology-name", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL,                                 \
     "\"" TOPO_CLI_TOPOLOGY_NAME "\", or that of the cluster's topology the levels came from",     \
     help, O(input.topology_name), NULL}

/* --resource (help: what the command does with it). */
#define TOPO_CLI_RESOURCE_ROW(help, field)                                                         \
    {"--resource", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, TOPO_CLI_GPU_RESOURCE, help,         \
     O(field), NULL}

/* --gate (help: whose gates; section: the group it starts). */
#define TOPO_CLI_GATE_ROW(help, field, section)                                                    \
    {"--gate", NULL, TOPO_OPT_LIST, "NAME=BOOL", 0, 0, NULL, NULL, help, O(field), section}

/* --db of the commands that write a cache file (cache import, cache sync). */
#define TOPO_CLI_CACHE_DB_ROW(field)                                                               \
    {"--db", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,                                      \
     "the cache file (created when missing), required", O(field), "Options:"}

/* The values of the input rows above (NULL, 0 or empty when not given). */
typedef struct cli_input_args {
    topo_opt_list nodes, node_labels;
    const char *pods, *db, *levels, *topology, *topology_name, *kubeconfig, *context;
    int live;
} cli_input_args;

/* "a,b,c" → level labels: 1..TOPO_MAX_LEVELS valid label keys, no
 * duplicates, kubernetes.io/hostname only last. */
int cli_parse_levels(const char ***out, size_t *out_n, const char *text, topo_pool *pool,
                          topo_err *err);
/* Index of a level, or -1. */
int cli_level_index(const char *const *levels, size_t n, const char *level);
/* "nvidia.com/gpu=8,cpu=32" → resources in Kueue units. */
int cli_parse_requests(topo_resource **out, size_t *out_n, const char *text,
                            topo_pool *pool, topo_err *err);
/* ["k=v", ...] → pairs. */
int cli_parse_labels(topo_kv **out, size_t *out_n, const char *const *items, size_t n,
                          topo_pool *pool, topo_err *err);

/* Kueue's defaults, then every --gate NAME=true|false in items. */
int cli_parse_gates(topo_gates *gates, const char *const *items, size_t n, topo_pool *pool,
                         topo_err *err);

/* Loads every --nodes file, then the --pods file (may be NULL). */
int cli_load_inventory(topo_inventory **out, const char *const *nodes, size_t nnodes,
                            const char *pods, topo_err *err);

/* The live cluster's configuration, loaded once per command: the levels
 * lookup and the lists share it, and so share one exec credential cache
 * (a plugin runs once per command, and a failed run is not repeated).
 * `= {0}` is empty; cli_cluster_dispose frees it. */
typedef struct cli_cluster {
    topo_k8s_config cfg;
    int loaded;
} cli_cluster;

void cli_cluster_dispose(cli_cluster *c);

/* Where `assign` and `show` read the cluster: --nodes files (with --pods
 * optional), a --db cache file, or the live cluster (--live, implied by
 * --kubeconfig and --context, and by running as kubectl-topo). */
typedef struct cli_input {
    const char *const *nodes;
    size_t nnodes;
    const char *pods, *db;
    int live;
    const char *kubeconfig, *context; /* with live; NULL: kubectl's defaults */
    cli_cluster *cluster;        /* with live: the command's, loaded on first use */
} cli_input;

/* The live cluster's configuration (in->kubeconfig, in->context), loaded
 * into in->cluster the first time; borrowed. */
int cli_cluster_config(const topo_k8s_config **out, const cli_input *in,
                            topo_err *err);

/* The topology flags `assign` and `show` share (each NULL or 0 when not
 * given): --levels, --topology, --node-label, --topology-name. */
typedef struct cli_topology_flags {
    const char *levels;
    const char *topology; /* which of the cluster's topologies, without --levels */
    const char *const *labels;
    size_t nlabels;
    const char *topology_name;
} cli_topology_flags;

/* The input and the topology flags from the rows (live also when
 * --kubeconfig or --context is given); cluster: the command's, for the
 * live cluster (may be NULL without the live rows). */
void cli_input_from_args(cli_input *in, cli_topology_flags *flags,
                              const cli_input_args *a, cli_cluster *cluster);

/* Checks that exactly one input is given (--pods only with --nodes), parses
 * the levels and the --node-label flavor labels into opts->snapshot
 * (topology_name TOPO_CLI_TOPOLOGY_NAME when NULL). Without --levels the
 * live cluster's are read (cli_live_levels), their source said on
 * stderr in one line; offline, --levels is required. Strings live in pool. */
int cli_topology_opts(topo_inventory_snapshot_opts *opts, const cli_input *in,
                           const cli_topology_flags *flags, topo_pool *pool, topo_err *err);

/* Where the live cluster's levels came from. */
typedef struct cli_found_levels {
    const char **levels;
    size_t nlevels;
    const topo_kv *node_labels; /* the webhook topology's nodeLabels (0 for Kueue's) */
    size_t nnode_labels;
    const char *topology; /* its name */
    /* "ConfigMap topo-system/topo-webhook, topology \"default\"", or
     * "Topology \"default\" (kueue.x-k8s.io/v1beta2)" */
    const char *where;
} cli_found_levels;

/* The levels of the live cluster (live_levels.c), in this order:
 * topo-webhook's configuration, from the ConfigMap charts/topo installs
 * (found by its labels in every namespace; a user who may not list
 * ConfigMaps there goes on), each of its topologies; else Kueue's Topology
 * objects (v1beta2, else v1beta1). pick (--topology, may be NULL) keeps
 * the topologies of that name. One topology found: *out; several: an error
 * listing them and asking for --topology; none: an error saying what was
 * tried and asking for --levels. A ConfigMap or Topology that does not
 * validate is an error naming it and the field. Strings live in pool. */
int cli_live_levels(cli_found_levels *out, const cli_input *in, const char *pick,
                         topo_pool *pool, topo_err *err);

/* The nodes behind a snapshot, for output (labels, readiness, taints). */
typedef struct cli_nodes {
    const topo_node_spec *v;
    size_t n;
} cli_nodes;

/* Builds the snapshot from the inventory (every --nodes file, then --pods),
 * from the --db cache file (cli_load_db), or from the live cluster
 * (cli_load_live). *out_nodes lists the nodes (strings in pool or the
 * inventory). *out_ignored (may be NULL) counts pods on unknown nodes. */
int cli_load_snapshot(topo_inventory **out_inv, topo_snapshot **out_snap,
                           cli_nodes *out_nodes, const cli_input *in,
                           const topo_inventory_snapshot_opts *opts, size_t *out_ignored,
                           topo_pool *pool, topo_err *err);

/* The snapshot and nodes of a topo cache file (read-only; reservations
 * charged as of now). */
int cli_load_db(topo_snapshot **out_snap, cli_nodes *out_nodes, const char *db,
                     const topo_inventory_snapshot_opts *opts, size_t *out_ignored,
                     topo_pool *pool, topo_err *err);

/* The live cluster (live.c): Nodes and Pods listed once through the
 * kubeconfig (the filler of `cache sync --once`) into a cache file in a
 * temporary directory, read as cli_load_db reads one, then removed. A
 * SIGINT or SIGTERM meanwhile stops the list and still removes it. */
int cli_load_live(topo_snapshot **out_snap, cli_nodes *out_nodes,
                       const cli_input *in, const topo_inventory_snapshot_opts *opts,
                       size_t *out_ignored, topo_pool *pool, topo_err *err);

/* Installs the SIGINT and SIGTERM handlers that set the returned flag (for
 * topo_filler_opts.stop): the first signal stops a sync, which then ends
 * cleanly. */
const atomic_int *cli_stop_on_signals(void);

/* The program name messages start with: "topoassign", or "kubectl topo"
 * when run as the kubectl plugin (main sets it once, before any command). */
void cli_set_program(const char *name);
const char *cli_program(void);

/* The short name of a level: the part after the last '/'. */
const char *cli_level_short(const char *level);

/* Prints "<program> <cmd>: <message>" on stderr, the message escaped
 * (topo_utf8_escape_controls: it may quote cluster objects). */
void cli_error(const char *cmd, const topo_err *err);
/* Prints as cli_error and returns TOPO_CLI_EXIT_BADINPUT: how a command
 * stopped by an error it reports ends. */
int cli_fail(const char *cmd, const topo_err *err);
/* How a command whose output is written ends: TOPO_CLI_EXIT_OK once stdout
 * is flushed, TOPO_CLI_EXIT_BADINPUT when it cannot be (a closed pipe, a
 * full disk): output that did not arrive is a failure. */
int cli_output_status(void);
/* Prints "<program>: warning: <message>" on stderr, escaped likewise. */
void cli_warn(const char *fmt, ...) TOPO_PRINTF(1, 2);
/* s escaped for a terminal (topo_utf8_escape_controls), in pool when it
 * changes, else s itself: every cluster string a command prints goes
 * through it (names, label values, taints, topology names). */
const char *cli_safe(topo_pool *pool, const char *s);

#endif
