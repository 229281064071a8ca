/* What a built plan prints: the labels as JSON (--print-labels) and the
 * plan for people (the domain tree with node counts, incomplete nodes,
 * conflicts). */
#include <stdlib.h>
#include <string.h>

#include "topo/plan.h"

#include "domains.h"

json_t *topo_plan_labels_json(const topo_plan *plan)
{
    json_t *all = json_object();
    for (size_t i = 0; all && i < topo_plan_node_count(plan); i++) {
        json_t *labels = json_object();
        /* Values exist only for the topology's levels; hostname is not ours. */
        for (int l = 0; labels && l < TOPO_LEVEL_COUNT; l++) {
            const char *v = topo_plan_node_value(plan, i, (topo_level)l);
            if (v && l != TOPO_LEVEL_HOSTNAME &&
                json_object_set_new(labels, topo_plan_level_key(plan, (topo_level)l),
                                    json_string(v)) != 0) {
                json_decref(labels);
                labels = NULL;
            }
        }
        if (!labels || json_object_set_new(all, topo_plan_node_name(plan, i), labels) != 0) {
            json_decref(all);
            all = NULL;
        }
    }
    return all;
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
    return out->error;
}
