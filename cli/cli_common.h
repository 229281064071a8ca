/* Input loading shared by `topoassign assign` and `show` (flags are parsed
 * by each command's option table, commands.h). Helpers report problems
 * through topo_err; the commands print them. */
#ifndef TOPO_CLI_COMMON_H
#define TOPO_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/inventory.h"
#include "topo/model.h"
#include "topo/pool.h"

/* The topology name in Kueue's messages unless --topology-name says. */
#define TOPO_CLI_TOPOLOGY_NAME "default"
/* The resource assign counts GPUs of and show shows unless --resource says. */
#define TOPO_CLI_GPU_RESOURCE "nvidia.com/gpu"

/* "a,b,c" → level labels: 1..TOPO_MAX_LEVELS valid label keys, no
 * duplicates, kubernetes.io/hostname only last. */
int topo_cli_parse_levels(const char ***out, size_t *out_n, const char *text, topo_pool *pool,
                          topo_err *err);
/* Index of a level, or -1. */
int topo_cli_level_index(const char *const *levels, size_t n, const char *level);
/* "nvidia.com/gpu=8,cpu=32" → resources in Kueue units. */
int topo_cli_parse_requests(topo_resource **out, size_t *out_n, const char *text,
                            topo_pool *pool, topo_err *err);
/* ["k=v", ...] → pairs. */
int topo_cli_parse_labels(topo_kv **out, size_t *out_n, const char *const *items, size_t n,
                          topo_pool *pool, topo_err *err);

/* Kueue's defaults, then every --gate NAME=true|false in items. */
int topo_cli_parse_gates(topo_gates *gates, const char *const *items, size_t n, topo_pool *pool,
                         topo_err *err);

/* Loads every --nodes file, then the --pods file (may be NULL). */
int topo_cli_load_inventory(topo_inventory **out, const char *const *nodes, size_t nnodes,
                            const char *pods, topo_err *err);

/* The topology flags `assign` and `show` share: checks that the input is
 * either --nodes (nnodes, with --pods optional) or --db (never both, and no
 * --pods with --db) and that --levels is present, parses the levels and the
 * --node-label flavor labels into opts->snapshot (topology_name
 * TOPO_CLI_TOPOLOGY_NAME when NULL). Strings live in pool. */
int topo_cli_topology_opts(topo_inventory_snapshot_opts *opts, size_t nnodes, const char *pods,
                           const char *db, const char *levels_text, const char *const *labels,
                           size_t nlabels, const char *topology_name, topo_pool *pool,
                           topo_err *err);

/* The nodes behind a snapshot, for output (labels, readiness, taints). */
typedef struct topo_cli_nodes {
    const topo_node_spec *v;
    size_t n;
} topo_cli_nodes;

/* Builds the snapshot from the inventory (every --nodes file, then --pods)
 * or, when db is set, from that cache file (topo_cache_snapshot, reservations
 * charged as of now). *out_nodes lists the nodes (strings in pool or the
 * inventory). *out_ignored (may be NULL) counts pods on unknown nodes. */
int topo_cli_load_snapshot(topo_inventory **out_inv, topo_snapshot **out_snap,
                           topo_cli_nodes *out_nodes, const char *const *nodes, size_t nnodes,
                           const char *pods, const char *db,
                           const topo_inventory_snapshot_opts *opts, size_t *out_ignored,
                           topo_pool *pool, topo_err *err);

/* The short name of a level: the part after the last '/'. */
const char *topo_cli_level_short(const char *level);

/* Prints "topoassign <cmd>: <message>" on stderr. */
void topo_cli_error(const char *cmd, const topo_err *err);

#endif
