/* The topology plan of topo-sync: which owned labels every node should
 * carry, fused from the facts of every source. For each level a per-level
 * source precedence picks the value (the first source in the list that has
 * one wins); a different value from another source is a conflict, recorded
 * and counted, never merged; which source gave each level is kept
 * (provenance). Host names are mapped to node names by one name map for
 * every source; then a host name that names no node but differs from
 * exactly one node's name by a domain is that node (the source's
 * "gpu1.cluster.example.com" is the node "gpu1", its "gpu1" the node
 * "gpu1.cluster.example.com"; two names that both have a domain never
 * match). A short name that matches several nodes matches none and is
 * reported (topo_plan_ambiguous). Without a node set, a short name and
 * the one host name with a domain it matches are one host, under the
 * latter.
 *
 * Raw values become label values by topo_labelvalue_assign_scoped
 * (deterministic; two different domains never share a label value). A
 * domain is a raw value within the scope its source names it in: a rack
 * within the datacenter, an NVLink domain within the datacenter and rack,
 * that the same source gives the same host (NetBox's rack names repeat
 * across sites, a custom field "1" across racks); switch ids and GPU
 * cliques are unique everywhere. A scoped domain always gets a hash suffix
 * of its scope and name, and a name the normaliser changes one of the
 * name, so a domain's value never depends on which other domains exist.
 *
 * A node that lacks a level of the topology is incomplete, with the reason;
 * by default it gets no labels at all (Kueue ignores nodes that miss a level
 * anyway, and a half-labelled node would look placed), or, when configured,
 * a fallback value for what is missing.
 *
 * Optionally the same tiers are also labelled in NVIDIA topograph's
 * vocabulary (v1.0 and later, SOURCE-FORMATS.md §1.2), so that consumers of
 * topograph's labels keep working: fabric.topograph.run/tier-0 is the leaf
 * (tier 0 is the switch tier closest to the node), tier-1 the spine, and
 * accelerator.topograph.run/domain the NVLink domain, each with the value of
 * the node's own label of that level (the two vocabularies group nodes the
 * same way; for InfiniBand the value is the lowest switch GUID of the group,
 * topograph's "S-<guid>" without the "S-": topo/guid.h). Only levels of the
 * topology are mirrored, and tier-1 only under a tier-0 (topograph's tiers
 * are closest-first and stop at the first missing one). These keys lie outside the owned prefix:
 * the writer owns them only when this option is on (topo_plan_key_owned),
 * and topograph itself must then not write them too.
 *
 * Provenance: which source gave each level of a node, as the annotation the
 * writer sets beside the labels (topo_plan_node_provenance). */
#ifndef TOPO_PLAN_H
#define TOPO_PLAN_H

#include <stddef.h>

#include <jansson.h>

#include "topo/buf.h"
#include "topo/error.h"
#include "topo/facts.h"
#include "topo/labelowner.h"
#include "topo/namemap.h"
#include "topo/types.h"

#define TOPO_PLAN_DEFAULT_PREFIX "topology.topo.io/"
#define TOPO_PLAN_DEFAULT_FALLBACK "unknown"

/* topograph's label keys (topo/labelowner.h). */
#define TOPO_PLAN_TOPOGRAPH_TIER_PREFIX TOPO_LABELOWNER_TOPOGRAPH_TIER
#define TOPO_PLAN_TOPOGRAPH_DOMAIN TOPO_LABELOWNER_TOPOGRAPH_DOMAIN
#define TOPO_PLAN_TOPOGRAPH_SUBDOMAIN TOPO_LABELOWNER_TOPOGRAPH_SUBDOMAIN
/* The source named for an NVLink domain the plan gives a node from its own
 * name (topo_plan_opts.nvlink_own_node), in provenance and the plan text. */
#define TOPO_PLAN_OWN_NODE_SOURCE "node"
/* The provenance annotation's key: the prefix and this. */
#define TOPO_PLAN_PROVENANCE_NAME "provenance"
/* The writer's record annotation's key (labeldiff.h "The record"): the
 * prefix and this. */
#define TOPO_PLAN_RECORD_NAME "applied-labels"
/* The most labels one node gets: its owned levels (hostname is not ours)
 * and topograph's tier-0, tier-1 and domain. */
#define TOPO_PLAN_MAX_LABELS (TOPO_LEVEL_COUNT - 1 + 3)

typedef enum topo_plan_incomplete {
    TOPO_PLAN_LEAVE_OUT = 0, /* incomplete nodes get no owned labels */
    TOPO_PLAN_FALLBACK,      /* missing levels get opts.fallback */
} topo_plan_incomplete;

typedef struct topo_plan_opts {
    /* The owned label keys' prefix: a DNS subdomain and '/', in no other
     * owner's namespace (topo_labelowner_prefix_valid); NULL:
     * TOPO_PLAN_DEFAULT_PREFIX. */
    const char *prefix;
    /* The topology's levels, coarsest first; none: all of them. The
     * hostname level is the node's kubernetes.io/hostname, never owned. */
    const topo_level *levels;
    size_t nlevels;
    /* Per level, source names in precedence order (first wins). Sources
     * not named rank after the named ones, in the order they were added. */
    const char *const *precedence[TOPO_LEVEL_COUNT];
    size_t nprecedence[TOPO_LEVEL_COUNT];
    const topo_namemap *names; /* NULL: host names are node names; borrowed */
    topo_plan_incomplete incomplete;
    const char *fallback; /* NULL: TOPO_PLAN_DEFAULT_FALLBACK */
    int topograph;        /* also topograph's labels for leaf, spine, nvlink */
    /* A node that no source gives an NVLink domain is its own, named by
     * the node's name, source TOPO_PLAN_OWN_NODE_SOURCE. NVLink reaches
     * past a node only on multi-node NVLink systems (GB200 NVL72), which
     * GPU Feature Discovery labels with a clique; every other node's
     * NVLink, if any, is its NVSwitch inside (HGX, DGX). Applied after
     * every source, so it never outranks or contradicts one. */
    int nvlink_own_node;
} topo_plan_opts;

typedef struct topo_plan topo_plan;

/* opts may be NULL (all defaults); its strings are copied, names borrowed.
 * TOPO_EINVALID naming the field for a prefix topo may not own ("prefix:
 * \"kubernetes.io/\": is under kubernetes.io: ..."), a repeated level, or a
 * fallback that is not a label value. */
int topo_plan_create(topo_plan **out, const topo_plan_opts *opts, topo_err *err) TOPO_MUST_CHECK;
void topo_plan_free(topo_plan *plan);

/* The nodes to plan for (from the API server). When none is added, the
 * nodes are the hosts the sources name. Hosts that name no added node are
 * counted (topo_plan_unknown_hosts), not planned. */
int topo_plan_add_node(topo_plan *plan, const char *node, topo_err *err) TOPO_MUST_CHECK;

/* A host a source knows of, whatever it knows of it: with no level from
 * any source it is planned (when no node set is given) and reported
 * incomplete, instead of being silently absent (a fabric host cabled to no
 * leaf). Names are mapped and refused names counted as for levels. */
int topo_plan_add_host(topo_plan *plan, const char *host, topo_err *err) TOPO_MUST_CHECK;

/* One source's stated levels. A host whose name the name map refuses is
 * counted and reported (topo_plan_unmapped_hosts), not fatal. */
int topo_plan_add_facts(topo_plan *plan, const topo_facts *facts, topo_err *err) TOPO_MUST_CHECK;

/* A level derived for a host by a source (leaf and spine from the fabric
 * tiers, nvlink from GPU labels). host is the source's name for it. */
int topo_plan_add_level(topo_plan *plan, const char *source, const char *host, topo_level level,
                        const char *value, topo_err *err) TOPO_MUST_CHECK;

/* Decides every node's labels. Call once, after the last add. */
int topo_plan_build(topo_plan *plan, topo_err *err) TOPO_MUST_CHECK;

/* After topo_plan_build. Nodes are sorted by name. */
size_t topo_plan_node_count(const topo_plan *plan);
const char *topo_plan_node_name(const topo_plan *plan, size_t node);
/* 1 when every level of the topology has a value from a source. */
int topo_plan_node_complete(const topo_plan *plan, size_t node);
/* Why a node is incomplete ("no leaf, no rack"); NULL when complete. */
const char *topo_plan_node_reason(const topo_plan *plan, size_t node);
/* The label value of a level (NULL when the node gets none) and the source
 * it came from (NULL for a fallback or no value). */
const char *topo_plan_node_value(const topo_plan *plan, size_t node, topo_level level);
const char *topo_plan_node_source(const topo_plan *plan, size_t node, topo_level level);
/* The topology's levels, coarsest first, into out; returns how many. */
size_t topo_plan_levels(const topo_plan *plan, topo_level out[TOPO_LEVEL_COUNT]);
/* The owned label key of a level (prefix + level name). */
const char *topo_plan_level_key(const topo_plan *plan, topo_level level);

size_t topo_plan_incomplete_count(const topo_plan *plan);
/* How many planned nodes no source (nor the own-node rule) gives a value
 * of level, a level of the topology (the nodes it makes incomplete); 0
 * for a level outside it. */
size_t topo_plan_level_missing(const topo_plan *plan, topo_level level);

/* A line for people about this plan (why most nodes are held and what
 * setting fixes it), printed by topo_plan_write_text after the counts.
 * Copied. Before or after topo_plan_build. */
int topo_plan_add_note(topo_plan *plan, const char *text, topo_err *err) TOPO_MUST_CHECK;
size_t topo_plan_conflict_count(const topo_plan *plan);
/* "node n1: rack: netbox says \"r1\", ufm says \"r2\"; netbox wins". */
const char *topo_plan_conflict(const topo_plan *plan, size_t i);
/* The distinct host names the name map refused, over all sources: a host
 * named by two sources at three levels counts once. */
size_t topo_plan_unmapped_hosts(const topo_plan *plan);
/* Why the name map refused the i-th of them, in the order they were met:
 * "host \"GPU-01\": \"GPU-01\" is not a valid node name (...)". */
const char *topo_plan_unmapped(const topo_plan *plan, size_t i);
/* Hosts that name no node (not counting the ambiguous ones). */
size_t topo_plan_unknown_hosts(const topo_plan *plan);
/* Host names whose short name matches several nodes (or, without a node
 * set, several hosts named with a domain), sorted: "host gpu1: its short
 * name matches the nodes gpu1.a.example, gpu1.b.example; matched to
 * none". */
size_t topo_plan_ambiguous_count(const topo_plan *plan);
const char *topo_plan_ambiguous(const topo_plan *plan, size_t i);

/* Every label a node should carry: its owned levels coarsest first, then
 * topograph's when that option is on (tier-0, tier-1, domain); none for a
 * node left out. Keys and values are borrowed from the plan. Returns how
 * many were written to out. */
size_t topo_plan_node_labels(const topo_plan *plan, size_t node,
                             topo_kv out[TOPO_PLAN_MAX_LABELS]);

/* 1 when the writer of the plan owns label key, i.e. sets it where the plan
 * says and removes it where the plan says nothing: the prefix and any
 * level's name (also levels outside the topology, so that a level dropped
 * from the configuration is removed from the nodes) and, only when the
 * topograph option is on, every fabric.topograph.run/tier-<N> (a tier a
 * former topograph wrote above the spine would otherwise stay, stale) and
 * topograph's accelerator domain and sub-domain. */
int topo_plan_key_owned(const topo_plan *plan, const char *key);

/* {"<node>": {"<key>": "<value>", ...}, ...} for every planned node, its
 * labels as topo_plan_node_labels gives them (incomplete ones left out get
 * {}): what --print-labels prints. New reference, NULL when out of memory. */
json_t *topo_plan_labels_json(const topo_plan *plan);

/* The owned label keys' prefix (opts.prefix, else TOPO_PLAN_DEFAULT_PREFIX). */
const char *topo_plan_prefix(const topo_plan *plan);

/* The provenance annotation's key: the prefix and "provenance"
 * ("topology.topo.io/provenance"). */
const char *topo_plan_provenance_key(const topo_plan *plan);

/* The writer's record annotation's key: the prefix and "applied-labels"
 * ("topology.topo.io/applied-labels"), under the prefix like every key
 * topo-sync writes. */
const char *topo_plan_record_key(const topo_plan *plan);

/* A node's provenance annotation value into *out (malloc'd): compact JSON
 * naming, for each owned level of the topology in order (coarsest first),
 * the source its value came from, or "fallback":
 * {"datacenter":"netbox","spine":"ufm","leaf":"ufm","rack":"netbox"}.
 * The same plan always gives the same bytes, so the writer can compare it
 * with the node's annotation. *out is NULL for a node that gets no labels
 * (the writer removes the annotation). 0 or TOPO_ENOMEM. */
int topo_plan_node_provenance(char **out, const topo_plan *plan, size_t node) TOPO_MUST_CHECK;

/* {"<node>": {"<provenance key>": "<value>"}, ...} for every planned node
 * ({} for nodes left out): what --print-annotations prints. New reference,
 * NULL when out of memory. */
json_t *topo_plan_annotations_json(const topo_plan *plan);

/* The human-readable plan: a line of counts, the notes ("note: ..."), a
 * line of which sources gave each level how many values ("sources: leaf:
 * ufm 9990, fallback 10; rack: netbox 10000"), a line of how many nodes
 * miss each level ("missing: nvlink 463"), the tree of domains with node
 * counts, then incomplete nodes with why, then conflicts, then ambiguous
 * host names, then unmappable host names with why. */
int topo_plan_write_text(const topo_plan *plan, topo_buf *out) TOPO_MUST_CHECK;

#endif
