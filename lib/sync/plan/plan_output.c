/* The plan for people (--print-plan): the sources of each level, the
 * domain tree with node counts, incomplete nodes, conflicts, ambiguous
 * host names. */
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/plan.h"

#include "domains.h"
#include "plan_internal.h"

typedef struct source_count {
    const char *source; /* NULL: the fallback */
    size_t nodes;
} source_count;

/* One line: for each owned level of the topology, how many labelled nodes
 * each source gave their value ("leaf: ufm 9990, fallback 10"), sources
 * in the order they first appear among the nodes, fallback last. */
static int write_sources(const topo_plan *plan, topo_buf *out)
{
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels = topo_plan_levels(plan, levels), nnodes = topo_plan_node_count(plan);
    TOPO_ARRAY(source_count) seen = TOPO_ARRAY_INIT;
    size_t printed = 0;
    int rc = 0;
    for (size_t l = 0; rc == 0 && l < nlevels; l++) {
        if (levels[l] == TOPO_LEVEL_HOSTNAME)
            continue;
        size_t fallback = 0;
        seen.n = 0;
        for (size_t i = 0; rc == 0 && i < nnodes; i++) {
            if (!topo_plan_node_value(plan, i, levels[l]))
                continue;
            const char *src = topo_plan_node_source(plan, i, levels[l]);
            size_t k = 0;
            while (src && k < seen.n && strcmp(seen.items[k].source, src) != 0)
                k++;
            if (!src)
                fallback++;
            else if (k < seen.n)
                seen.items[k].nodes++;
            else
                rc = TOPO_ARRAY_PUSH(&seen, ((source_count){src, 1}));
        }
        if (rc != 0 || (seen.n == 0 && fallback == 0))
            continue;
        topo_buf_printf(out, "%s%s:", printed++ ? "; " : "sources: ", topo_level_name(levels[l]));
        for (size_t k = 0; k < seen.n; k++)
            topo_buf_printf(out, "%s %s %zu", k ? "," : "", seen.items[k].source,
                            seen.items[k].nodes);
        if (fallback)
            topo_buf_printf(out, "%s fallback %zu", seen.n ? "," : "", fallback);
    }
    if (printed)
        topo_buf_puts(out, "\n");
    free(seen.items);
    return rc;
}

/* One line: for each level of the topology that some planned node has no
 * value of, how many ("missing: nvlink 463, rack 12"): the levels that
 * hold nodes back, in the topology's order. */
static void write_missing(const topo_plan *plan, topo_buf *out)
{
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels = topo_plan_levels(plan, levels), printed = 0;
    for (size_t l = 0; l < nlevels; l++) {
        size_t n = topo_plan_level_missing(plan, levels[l]);
        if (n > 0)
            topo_buf_printf(out, "%s%s %zu", printed++ ? ", " : "missing: ",
                            topo_level_name(levels[l]), n);
    }
    if (printed)
        topo_buf_puts(out, "\n");
}

int topo_plan_write_text(const topo_plan *plan, topo_buf *out)
{
    plan_domains d;
    if (plan_domains_build(&d, plan) != 0)
        return TOPO_ENOMEM;
    topo_buf_printf(out,
                    "nodes: %zu planned, %zu labelled, %zu incomplete; conflicts: %zu; "
                    "unmapped hosts: %zu; hosts that are no node: %zu\n",
                    topo_plan_node_count(plan), d.nrows, topo_plan_incomplete_count(plan),
                    topo_plan_conflict_count(plan), topo_plan_unmapped_hosts(plan),
                    topo_plan_unknown_hosts(plan));
    for (size_t i = 0; i < plan_note_count(plan); i++)
        topo_buf_printf(out, "note: %s\n", plan_note(plan, i));
    if (write_sources(plan, out) != 0) {
        plan_domains_free(&d);
        return TOPO_ENOMEM;
    }
    write_missing(plan, out);
    for (size_t i = 0; i < d.ndomains; i++) {
        const plan_domain *dom = &d.domains[i];
        size_t count = dom->end - dom->first;
        topo_buf_printf(out, "%*s%s=%s (%zu node%s)\n", (int)(2 * dom->depth), "",
                        topo_level_name(d.levels[dom->depth]), dom->value, count,
                        count == 1 ? "" : "s");
    }
    plan_domains_free(&d);
    if (topo_plan_incomplete_count(plan) > 0) {
        topo_buf_printf(out, "incomplete (%zu):\n", topo_plan_incomplete_count(plan));
        for (size_t i = 0; i < topo_plan_node_count(plan); i++)
            if (topo_plan_node_reason(plan, i))
                topo_buf_printf(out, "  %s: %s\n", topo_plan_node_name(plan, i),
                                topo_plan_node_reason(plan, i));
    }
    if (topo_plan_conflict_count(plan) > 0) {
        topo_buf_printf(out, "conflicts (%zu):\n", topo_plan_conflict_count(plan));
        for (size_t i = 0; i < topo_plan_conflict_count(plan); i++)
            topo_buf_printf(out, "  %s\n", topo_plan_conflict(plan, i));
    }
    if (topo_plan_ambiguous_count(plan) > 0) {
        topo_buf_printf(out, "ambiguous host names (%zu):\n", topo_plan_ambiguous_count(plan));
        for (size_t i = 0; i < topo_plan_ambiguous_count(plan); i++)
            topo_buf_printf(out, "  %s\n", topo_plan_ambiguous(plan, i));
    }
    if (topo_plan_unmapped_hosts(plan) > 0) {
        topo_buf_printf(out, "unmappable host names (%zu):\n", topo_plan_unmapped_hosts(plan));
        for (size_t i = 0; i < topo_plan_unmapped_hosts(plan); i++)
            topo_buf_printf(out, "  %s\n", topo_plan_unmapped(plan, i));
    }
    return out->error;
}
