/* The snapshot's internals, shared by the model (snapshot.c) and the engine.
 * Nothing outside lib/topo includes this. */
#ifndef TOPO_SNAPSHOT_INTERNAL_H
#define TOPO_SNAPSHOT_INTERNAL_H

#include <stdint.h>

#include "topo/model.h"
#include "topo/pool.h"
#include "topo/strmap.h"

typedef struct snap_node {
    const char *name;
    topo_kv *labels;
    size_t nlabels;
    topo_taint *taints;
    size_t ntaints;
    topo_resource *allocatable; /* names interned in snapshot->resource_names */
    size_t nallocatable;
    int ready;
    int ready_missing;
    int unschedulable;
    int in_topology; /* has every level and flavor label */
    int32_t leaf;    /* leaf index, -1 when not eligible */
    int64_t *used;   /* non-TAS usage per resource index (eligible nodes) */
} snap_node;

typedef struct snap_domain {
    int level;
    const char **values; /* level + 1 values */
    const char *id;      /* Kueue's domain ID: values joined by ','; the hostname for hostname leaves */
    const char *joined;  /* values joined by ',' always (used for prefix checks and merge order) */
    int32_t parent;      /* -1 for roots */
    int32_t *children;
    int32_t nchildren;
    int32_t leaf; /* leaf index, -1 for inner domains */
    int32_t rank; /* position among its level's domains in level-value order */
} snap_domain;

typedef struct snap_leaf {
    int32_t domain;
    int64_t *free; /* allocatable minus non-TAS usage, per resource index */
    int64_t *tas;  /* admitted TAS usage (positive), per resource index */
    int64_t *room; /* free - tas: what the engine reads, rows contiguous */
    int32_t node;  /* first node of the leaf */
    int32_t nnodes;
} snap_leaf;

typedef struct pending_usage {
    struct pending_usage *next;
    int tas;
    const char *node;          /* non-TAS */
    const char **values;       /* TAS */
    size_t nvalues;
    int32_t count;
    topo_resource *requests;
    size_t nrequests;
} pending_usage;

struct topo_snapshot {
    topo_pool *pool;
    const char *topology_name;
    const char **levels;
    size_t nlevels;
    topo_kv *flavor_labels;
    size_t nflavor_labels;
    int hostname_lowest;
    int has_taints; /* some eligible node has a taint */

    snap_node *nodes;
    size_t nnodes;
    size_t cap_nodes;
    topo_strmap *node_by_name;
    topo_strmap *node_by_hostname; /* kubernetes.io/hostname label -> node (the first added) */

    const char **resource_names; /* interned; index = resource id */
    size_t nresources;
    size_t cap_resources;
    topo_strmap *resource_by_name;

    int built;
    snap_domain *domains;
    size_t ndomains;
    topo_strmap *domain_by_id;
    snap_leaf *leaves;
    size_t nleaves;
    int32_t **level_domains; /* per level: domain indices sorted by values */
    size_t *level_ndomains;
    int32_t *roots;
    size_t nroots;

    pending_usage *pending;
    pending_usage **pending_tail;

    /* The engine's per-request-shape counts, kept current by every usage
     * change after the build (snapshot_agg.c). */
    struct snap_agg *agg;
    /* Per-domain sums of the resources packing asks about, kept current
     * the same way (snapshot_sums.c). */
    struct snap_sums_set *sums;
};

/* snapshot_agg.c: the aggregates' side the model calls. */
struct snap_agg *snap_agg_create(void);
void snap_agg_free(struct snap_agg *agg);
/* Forgets every shape (the tree was built anew). */
void snap_agg_reset(topo_snapshot *snap);
/* Computes on a freshly built snapshot the shapes another one kept. */
void snap_agg_inherit(topo_snapshot *fresh, const topo_snapshot *old);
/* A leaf's room changed: its counts and its ancestors', in every shape. */
void snap_agg_leaf_changed(topo_snapshot *snap, int32_t leaf);

/* snapshot_sums.c: one resource's capacity and free per domain, over its
 * eligible nodes (free: the leaves' room, never below 0, summed), as
 * topo_snapshot_walk counts them. Indexed by domain. */
typedef struct snap_sums {
    int32_t resource;
    int64_t *capacity;
    int64_t *free;
} snap_sums;

struct snap_sums_set *snap_sums_create(void);
void snap_sums_free(struct snap_sums_set *set);
/* The sums of resource index r on a built snapshot, tracked from now on
 * (computed on the first call, O(nodes)); NULL for an index the snapshot
 * does not have or when out of memory. Borrowed from the snapshot. */
const snap_sums *snap_sums_get(const topo_snapshot *snap, int32_t r);
/* A leaf's room changed: its free and its ancestors', in every sum. */
void snap_sums_leaf_changed(topo_snapshot *snap, int32_t leaf);
/* Tracks on a freshly built snapshot the resources another one tracked. */
void snap_sums_inherit(topo_snapshot *fresh, const topo_snapshot *old);

/* Kueue's domain ID: the values joined by ','. From the pool, or malloc'd
 * (caller frees) when pool is NULL. NULL when out of memory. */
char *snap_join(topo_pool *pool, const char *const *values, size_t n);
/* Resource index of a name, or -1 when no node exposes it. */
int32_t snap_resource_index(const topo_snapshot *snap, const char *name);
/* Compare domains by their level values, element by element, byte order. */
int snap_compare_values(const snap_domain *a, const snap_domain *b);

#endif
