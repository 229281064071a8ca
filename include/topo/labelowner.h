/* Which label keys topo may own: the one rule for "is this key under that
 * prefix" and "may topo take this prefix", used by every place that decides
 * what topo-sync writes or removes (--prefix, labels.prefix, the plan, the
 * label writer, the controller's Node view). docs/sync.md "The prefix rule".
 *
 * An owned prefix is a DNS subdomain (RFC 1123, at most 253 characters)
 * followed by exactly one '/' and nothing else ("topology.topo.io/"), and a
 * key is under it when it is the prefix and a non-empty name without '/':
 * ownership is decided on the whole prefix, so "topology.topo.io/" owns
 * "topology.topo.io/rack" and never "topology.topo.io.evil/x". Prefixes in
 * a namespace another owner labels nodes under are refused, whatever their
 * form: Kubernetes' reserved kubernetes.io and k8s.io with every subdomain,
 * and the well-known owners that share GPU nodes with topo (one table,
 * lib/kueue/labelowner.c, each entry with its reason). topograph's keys are
 * owned only as exactly its keys (topo_labelowner_topograph_key), through
 * the plan's topograph option, never through a prefix. */
#ifndef TOPO_LABELOWNER_H
#define TOPO_LABELOWNER_H

#include <stddef.h>

/* topograph's label keys (SOURCE-FORMATS.md §1.2): its fabric tiers are
 * this and a decimal number ("fabric.topograph.run/tier-0"). */
#define TOPO_LABELOWNER_TOPOGRAPH_TIER "fabric.topograph.run/tier-"
#define TOPO_LABELOWNER_TOPOGRAPH_DOMAIN "accelerator.topograph.run/domain"
#define TOPO_LABELOWNER_TOPOGRAPH_SUBDOMAIN "accelerator.topograph.run/sub-domain"

/* 1 when prefix may be an owned prefix; else 0 with why (may be NULL) saying
 * what is wrong, without the prefix itself (the caller names the field and
 * value): "must end in '/' (a DNS subdomain and '/', e.g.
 * 'topology.topo.io/')", "is under kubernetes.io: Kubernetes reserves it
 * ...". NULL or empty: 0. */
int topo_labelowner_prefix_valid(const char *prefix, char *why, size_t why_size);

/* 1 when key is under prefix: prefix ends in its only '/', and key is
 * prefix followed by a non-empty name without '/'. 0 for anything else,
 * NULL included: a prefix without '/' owns nothing. */
int topo_labelowner_under(const char *key, const char *prefix);

/* 1 when key is one of topograph's keys topo may own: a fabric tier
 * (TOPO_LABELOWNER_TOPOGRAPH_TIER and decimal digits, as topograph's own
 * stale-label cleanup recognises them), the accelerator domain or its
 * sub-domain. "fabric.topograph.run/tier-0x", "fabric.topograph.run/other":
 * 0. */
int topo_labelowner_topograph_key(const char *key);

#endif
