/* The domain tree of a built plan, for whatever prints or exports it (the
 * text plan, Slurm's topology.conf, Volcano HyperNodes): the labelled nodes
 * sorted by their values level by level, and every domain (a distinct
 * prefix of values) with its place in that order. Internal to lib/sync/plan. */
#ifndef TOPO_PLAN_DOMAINS_H
#define TOPO_PLAN_DOMAINS_H

#include <stddef.h>

#include "topo/plan.h"

typedef struct plan_domain {
    size_t depth;       /* index into levels */
    const char *value;  /* the label value at that level */
    size_t parent;      /* index of the domain one level up; SIZE_MAX at depth 0 */
    size_t first, end;  /* the domain's nodes: rows [first, end) */
    size_t ordinal;     /* 0-based among the domains of its depth, in order */
} plan_domain;

typedef struct plan_domains {
    topo_level levels[TOPO_LEVEL_COUNT]; /* owned levels every labelled node has */
    size_t nlevels;
    size_t *rows; /* node indices of the plan, sorted by their values */
    size_t nrows;
    plan_domain *domains; /* depth-first order: a domain before its children */
    size_t ndomains;
} plan_domains;

/* 0 or TOPO_ENOMEM. */
int plan_domains_build(plan_domains *out, const topo_plan *plan);
void plan_domains_free(plan_domains *d);

#endif
