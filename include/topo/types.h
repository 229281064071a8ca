/* The plain value types every layer shares: labels, resources, taints, a
 * node as the API server describes it, tolerations and node-selector terms,
 * and Kueue's TopologyAssignment. No functions and no dependencies, so a
 * decoder (lib/codec) can fill them without standing on the engine.
 *
 * Strings are borrowed: whoever fills a struct owns what it points at. */
#ifndef TOPO_TYPES_H
#define TOPO_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef struct topo_kv {
    const char *key;
    const char *value;
} topo_kv;

/* A resource amount in Kueue's units: "cpu" in millicores, everything else in
 * whole base units (see topo_quantity_parse_resource). */
typedef struct topo_resource {
    const char *name;
    int64_t amount;
} topo_resource;

typedef struct topo_taint {
    const char *key;
    const char *value;  /* may be NULL or "" */
    const char *effect; /* NoSchedule, PreferNoSchedule, NoExecute */
} topo_taint;

typedef struct topo_node_spec {
    const char *name;
    const topo_kv *labels;
    size_t nlabels;
    const topo_resource *allocatable;
    size_t nallocatable;
    const topo_taint *taints;
    size_t ntaints;
    int unschedulable;
    int ready;         /* its Ready condition is True */
    int ready_missing; /* it has no Ready condition at all (Kueue: failed at once) */
} topo_node_spec;

typedef struct topo_toleration {
    const char *key;      /* NULL or "" matches every key (with Exists) */
    const char *op;       /* "Equal" (default when NULL) or "Exists" */
    const char *value;
    const char *effect;   /* NULL or "" matches every effect */
} topo_toleration;

typedef struct topo_match_expr {
    const char *key;
    const char *op; /* In, NotIn, Exists, DoesNotExist, Gt, Lt */
    const char *const *values;
    size_t nvalues;
} topo_match_expr;

typedef struct topo_selector_term {
    const topo_match_expr *exprs;
    size_t nexprs;
} topo_selector_term;

typedef struct topo_preferred_term {
    int32_t weight;
    topo_selector_term term;
} topo_preferred_term;

typedef struct topo_slice_layer {
    const char *level;
    int32_t size;
} topo_slice_layer;

typedef struct topo_assign_domain {
    const char *const *values;
    int32_t count;
} topo_assign_domain;

/* Kueue's TopologyAssignment (v1beta1 logical form). */
typedef struct topo_assignment {
    const char *const *levels;
    size_t nlevels;
    const topo_assign_domain *domains;
    size_t ndomains;
} topo_assignment;

#endif
