/* The switch graph of one or more sources' facts (ibnetdiscover, UFM) and
 * its tiers: which leaf domain, spine group and higher groups each host is
 * under, closest first.
 *
 * - A leaf is a switch with ANY host cable, named host or not (an adapter
 *   with a default description still makes its switch a leaf), and whatever
 *   the plane filter keeps of it: unlike topograph, which makes a leaf only
 *   of a switch with hosts of the requested set and so puts a leaf of other
 *   hosts on top of the tree (SOURCE-FORMATS.md §1.5).
 * - Leaves that serve the same (non-empty) set of named hosts form one
 *   leaf domain: the 8 rail leaves of a DGX SuperPOD scalable unit, each
 *   cabled to one adapter of every node, are one domain; so is a single
 *   leaf of its own hosts. A leaf that serves no named host is a domain of
 *   its own.
 * - Tiers are found upwards, level by level: the switches of tier k+1 are
 *   those not yet placed that are cabled to a switch of tier k. The upward
 *   set of a tier-k group is the tier-k+1 switches cabled to any of its
 *   members; groups with identical upward sets form one tier-k+1 group
 *   whose members are that set (the spines of a fat tree, each cabled to
 *   every leaf, fold into one spine group). Groups above tier 0 may share
 *   switches; each group has at most one parent, so every host has one
 *   value per tier. A group with no upward set is a top.
 * - A host cabled to leaves of several leaf domains is placed in the domain
 *   it has most cables to, the lowest id on a tie, and reported ambiguous.
 *
 * Ids: a group's id is the lowest (strcmp) id of its member switches, as
 *   topograph's merged vertex keeps the lowest id (a GUID, topo/guid.h);
 *   its name is that switch's name. Two groups of one tier with the same
 *   lowest member (overlapping upward sets) are told apart by a suffix
 *   ".2", ".3"... in the order of their sorted member lists. The plan turns
 *   ids into label values.
 *
 * The plane filter (POSIX extended regular expressions, unanchored):
 *   switches whose name matches exclude_switch, or not include_switch when
 *   set, are left out with their cables; host cables whose port (the host
 *   side's adapter, "" when unknown) matches exclude_port, or not
 *   include_port when set, count for no host, but their switch still is a
 *   leaf: a storage leaf stays a leaf, it does not become a tier above the
 *   compute spines.
 *
 * Deterministic: switches are ordered by id and hosts by name before
 * anything is grouped, so the order of the facts, of their entries and of
 * the facts passed gives the same result. A switch named differently by two
 * facts takes the lowest of the names that are not its id. */
#ifndef TOPO_FABRIC_H
#define TOPO_FABRIC_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/facts.h"

typedef struct topo_fabric topo_fabric;

#define TOPO_FABRIC_NONE ((size_t)-1)

typedef struct topo_fabric_opts {
    const char *include_switch; /* NULL or "": every switch */
    const char *exclude_switch; /* NULL or "": none */
    const char *include_port;
    const char *exclude_port;
} topo_fabric_opts;

/* Builds the graph of nfacts facts (opts may be NULL). TOPO_EINVALID naming
 * the option for a pattern that does not compile, TOPO_ENOMEM. */
int topo_fabric_build(topo_fabric **out, const topo_facts *const *facts, size_t nfacts,
                      const topo_fabric_opts *opts, topo_err *err) TOPO_MUST_CHECK;
void topo_fabric_free(topo_fabric *fabric);

typedef struct topo_fabric_stats {
    size_t switches;          /* in the graph, after the switch filter */
    size_t switches_excluded; /* by the switch filter */
    size_t leaves;
    size_t switches_unplaced;    /* reached from no leaf (no tier) */
    size_t host_cables;          /* distinct cables of named hosts kept */
    size_t host_cables_excluded; /* ... left out by the port or the switch filter */
    size_t unnamed_cables;       /* cables of adapters that name no host */
    size_t hosts;
    size_t hosts_placed;    /* in exactly one leaf domain */
    size_t hosts_ambiguous; /* in several (placed in one) */
    size_t hosts_no_leaf;   /* no cable at all */
    size_t hosts_excluded;  /* cables, but every one left out by the filter */
} topo_fabric_stats;

topo_fabric_stats topo_fabric_get_stats(const topo_fabric *fabric);

/* Tier 0 is the leaf domains, 1 the spine groups, and so on; 0 tiers when
 * the graph has no leaf. */
size_t topo_fabric_tier_count(const topo_fabric *fabric);
size_t topo_fabric_group_count(const topo_fabric *fabric, size_t tier);

typedef struct topo_fabric_group {
    const char *id; /* borrowed from the fabric */
    const char *name;
    size_t nswitches;
    size_t parent;    /* index in tier + 1, or TOPO_FABRIC_NONE for a top */
    size_t nchildren; /* groups of tier - 1 whose parent it is */
    size_t nhosts;    /* hosts placed under it */
} topo_fabric_group;

/* Groups of a tier are ordered by id. i < topo_fabric_group_count. */
topo_fabric_group topo_fabric_group_at(const topo_fabric *fabric, size_t tier, size_t i);
/* The k-th member switch's id (ordered by id), or NULL past the end. */
const char *topo_fabric_group_switch(const topo_fabric *fabric, size_t tier, size_t i, size_t k);

typedef enum topo_fabric_status {
    TOPO_FABRIC_HOST_PLACED = 0,
    TOPO_FABRIC_HOST_AMBIGUOUS, /* cabled to several leaf domains; placed in one */
    TOPO_FABRIC_HOST_NO_LEAF,   /* no cable to a switch of the graph */
    TOPO_FABRIC_HOST_EXCLUDED   /* cables, all left out by the plane filter */
} topo_fabric_status;

/* "placed", "ambiguous", "no-leaf", "excluded". */
const char *topo_fabric_status_name(topo_fabric_status status);

/* Every host of every facts, ordered by name. */
size_t topo_fabric_host_count(const topo_fabric *fabric);
const char *topo_fabric_host_name(const topo_fabric *fabric, size_t host);
/* 0, or TOPO_ENOTFOUND. */
int topo_fabric_find_host(const topo_fabric *fabric, const char *name, size_t *out_index);
topo_fabric_status topo_fabric_host_status(const topo_fabric *fabric, size_t host);
/* How many leaf domains the host's kept cables reach. */
size_t topo_fabric_host_leaf_domains(const topo_fabric *fabric, size_t host);
/* How many tiers are above the host (0 when it is not placed). */
size_t topo_fabric_host_tier_count(const topo_fabric *fabric, size_t host);
/* The id of the host's group in a tier (0: its leaf domain, 1: its spine
 * group, ...), or NULL past its tier count. */
const char *topo_fabric_host_tier(const topo_fabric *fabric, size_t host, size_t tier);
/* The same as a group index, or TOPO_FABRIC_NONE. */
size_t topo_fabric_host_group(const topo_fabric *fabric, size_t host, size_t tier);

#endif
