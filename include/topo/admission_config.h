/* topo-webhook's configuration: the topologies it places pods in (Kueue
 * Topology levels + ResourceFlavor-like nodeLabels), the policy for pods
 * that do not fit (per topology, a default, and the namespace label that
 * overrides it), and the reservation and ungate timings. Read from a YAML
 * file (--config, format in docs/webhook.md) or built from --levels.
 *
 * Ownership: a topo_admission_config owns every string and array it hands
 * out; views (const pointers) live until topo_admission_config_free. A
 * loaded config is immutable, so it may be read from any thread. */
#ifndef TOPO_ADMISSION_CONFIG_H
#define TOPO_ADMISSION_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "topo/admission.h"
#include "topo/error.h"
#include "topo/limits.h"
#include "topo/model.h"

/* The name of the topology from_levels builds. */
#define TOPO_ADMISSION_DEFAULT_TOPOLOGY "default"
/* The default namespacePolicyLabel. */
#define TOPO_ADMISSION_NAMESPACE_POLICY_LABEL "topology.topo.io/no-fit-policy"
/* Defaults and bounds of the timings, in seconds / milliseconds (the
 * reservation TTL's default is the handler's,
 * TOPO_ADMISSION_RESERVATION_TTL_DEFAULT). */
#define TOPO_ADMISSION_RESERVATION_TTL_MIN_S 10
#define TOPO_ADMISSION_RESERVATION_TTL_MAX_S (24 * 3600)
#define TOPO_ADMISSION_UNGATE_INTERVAL_DEFAULT_MS 5000
#define TOPO_ADMISSION_UNGATE_INTERVAL_MIN_MS 1000
#define TOPO_ADMISSION_UNGATE_INTERVAL_MAX_MS (10 * 60 * 1000)

/* One topology: a read-only view owned by its config. */
typedef struct topo_admission_topology_config {
    const char *name;            /* DNS-1123 label, unique in the config */
    const char *const *levels;   /* label keys, coarsest first */
    size_t nlevels;              /* 1..TOPO_MAX_LEVELS */
    const topo_kv *node_labels;  /* a node is in the topology when it has all of them */
    size_t nnode_labels;         /* 0: every node */
    topo_admission_policy policy; /* effective: its own policy, else defaultPolicy */
    int policy_set;              /* the topology set `policy` itself */
    /* packing on: its packing level is levels[npacking_levels - 1]; 0: it
     * takes no part (packing off, packing.level not one of its levels, or
     * a topology with one level: nothing above the hostname) */
    size_t npacking_levels;
} topo_admission_topology_config;

typedef struct topo_admission_config topo_admission_config;

/* Parses a configuration (YAML, or JSON as YAML's subset) of at most
 * TOPO_MAX_CONFIG_FILE bytes. source names it in messages (NULL:
 * "<input>") and must outlive err. Every problem is TOPO_EINVALID with
 * "source:line:column: field.path: problem" (the position when the YAML
 * layer knows it, e.g. "config.yaml:7:9: topologies[1].levels[2]: duplicate
 * level topology.topo.io/rack"); unknown fields are errors. */
int topo_admission_config_parse(topo_admission_config **out, const char *text, size_t len,
                                const char *source, topo_err *err) TOPO_MUST_CHECK;

/* Reads path (TOPO_ENOTFOUND when missing, TOPO_ELIMIT over 1 MiB) and
 * parses it as topo_admission_config_parse, messages naming path. path must
 * outlive err. */
int topo_admission_config_load_file(topo_admission_config **out, const char *path,
                                    topo_err *err) TOPO_MUST_CHECK;

/* The configuration without a file: one topology "default" over all nodes
 * with the comma-separated levels (validated as in a file), policy gate,
 * every other field at its default. */
int topo_admission_config_from_levels(topo_admission_config **out, const char *levels_csv,
                                      topo_err *err) TOPO_MUST_CHECK;

void topo_admission_config_free(topo_admission_config *cfg);

/* Accessors; cfg must be non-NULL. Pointers are borrowed from cfg. */
size_t topo_admission_config_topology_count(const topo_admission_config *cfg);
/* NULL when i is out of range. */
const topo_admission_topology_config *
topo_admission_config_topology(const topo_admission_config *cfg, size_t i);
/* The topology of that name, or NULL. */
const topo_admission_topology_config *
topo_admission_config_find_topology(const topo_admission_config *cfg, const char *name);
topo_admission_policy topo_admission_config_default_policy(const topo_admission_config *cfg);
/* The namespace label that overrides the policy, NULL when disabled (""). */
const char *topo_admission_config_namespace_policy_label(const topo_admission_config *cfg);
int64_t topo_admission_config_reservation_ttl_s(const topo_admission_config *cfg);
int64_t topo_admission_config_ungate_interval_ms(const topo_admission_config *cfg);
/* unclaimedTTL (default TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT). */
int64_t topo_admission_config_unclaimed_ttl_s(const topo_admission_config *cfg);
/* maxUnclaimed.perNamespace (total 0) or maxUnclaimed.total (total 1): n
 * caps, NULL with n 0 when the file sets none (then the ctx's defaults). */
const topo_resource *topo_admission_config_unclaimed_caps(const topo_admission_config *cfg,
                                                          int total, size_t *n);

/* nodeReplacement.failFast (default 0): see topo_admission_opts
 * replace_fail_fast. */
int topo_admission_config_replace_fail_fast(const topo_admission_config *cfg);

/* packing (docs/webhook.md "Packing pods without topology requests"):
 * NULL when off (no packing key, enabled false, or --levels). */
const topo_admission_packing *topo_admission_config_packing(const topo_admission_config *cfg);
/* What the operator should know of a valid packing configuration (the
 * topologies that take no part, and why), for the log at start; NULL when
 * nothing. */
const char *topo_admission_config_packing_note(const topo_admission_config *cfg);

/* Names (label keys and values, a Topology's DNS-1123 name) are checked by
 * topo/labelsyntax.h. */

#endif
