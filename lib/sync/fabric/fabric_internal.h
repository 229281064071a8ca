/* The fabric's graph as fabric.c builds it from facts, and the tiers
 * tiers.c finds in it. Every array lives in the fabric's pool. Switches are
 * indexed in id order and hosts in name order, so index order is the
 * deterministic order everything is grouped in. */
#ifndef TOPO_FABRIC_INTERNAL_H
#define TOPO_FABRIC_INTERNAL_H

#include <stddef.h>

#include "topo/array.h"
#include "topo/fabric.h"
#include "topo/pool.h"

/* A set of indices: sorted, distinct. */
typedef struct fab_set {
    const size_t *v;
    size_t n;
} fab_set;

typedef struct fab_switch {
    const char *id;
    const char *name;
    int leaf;      /* any host cable */
    int level;     /* its tier, -1 when not reached from a leaf */
    fab_set nbrs;  /* switches cabled to it */
    fab_set hosts; /* named hosts of its kept cables */
    size_t domain; /* its leaf domain (leaves) */
} fab_switch;

typedef struct fab_group {
    const char *id;
    const char *name;
    fab_set members; /* switches */
    size_t parent;
    size_t nchildren;
    size_t nhosts;
} fab_group;

typedef struct fab_tier {
    fab_group *groups;
    size_t n;
} fab_tier;

typedef struct fab_host {
    const char *name;
    const size_t *cables; /* switch of each kept cable, ascending, repeats kept */
    size_t ncables;
    int excluded;  /* had a cable the filter left out */
    size_t domain; /* its leaf domain, or TOPO_FABRIC_NONE */
    size_t ndomains;
    topo_fabric_status status;
} fab_host;

struct topo_fabric {
    topo_pool *pool;
    fab_switch *sw;
    size_t nsw;
    fab_host *hosts;
    size_t nhosts;
    TOPO_ARRAY(fab_tier) tiers;
    topo_fabric_stats stats;
};

/* Leaf domains, then the tiers above them, then each host's domain and
 * the host counts of its groups. 0 or TOPO_ENOMEM. */
int fab_tiers_build(topo_fabric *f, topo_err *err);

/* A copy of n indices in the pool (NULL when n is 0 or out of memory:
 * callers tell them apart by n). */
size_t *fab_copy(topo_pool *pool, const size_t *v, size_t n);
/* Sorts v and drops repeats; returns the new count. */
size_t fab_sort_unique(size_t *v, size_t n);
/* Lexicographic order of two sets (a proper prefix first). */
int fab_set_cmp(fab_set a, fab_set b);

#endif
