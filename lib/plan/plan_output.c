/* What a built plan prints: the labels as JSON (--print-labels) and the
 * plan for people (the domain tree with node counts, incomplete nodes,
 * conflicts). */
#include <stdlib.h>
#include <string.h>

#include "topo/plan.h"

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

typedef struct tree_ctx {
    const topo_plan *plan;
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels;
} tree_ctx;

/* One labelled node with its values in the tree's level order, so that the
 * sort needs no context (C11's qsort has none). */
typedef struct row {
    size_t node;
    size_t nvalues;
    const char *values[TOPO_LEVEL_COUNT + 1]; /* the tree's levels, then the name */
} row;

static int by_tuple(const void *a, const void *b)
{
    const row *x = a, *y = b;
    for (size_t l = 0; l < x->nvalues; l++) {
        int c = strcmp(x->values[l], y->values[l]);
        if (c != 0)
            return c;
    }
    return 0;
}

/* Nodes [from, to) of order share the values of levels 0..depth-1: prints
 * each distinct value at depth with its node count, then recurses. */
static void write_domains(const tree_ctx *t, const row *order, size_t from, size_t to,
                          size_t depth, topo_buf *out)
{
    if (depth >= t->nlevels)
        return;
    topo_level level = t->levels[depth];
    for (size_t i = from; i < to;) {
        const char *v = order[i].values[depth];
        size_t j = i + 1;
        while (j < to && strcmp(order[j].values[depth], v) == 0)
            j++;
        topo_buf_printf(out, "%*s%s=%s (%zu node%s)\n", (int)(2 * depth), "",
                        topo_level_name(level), v, j - i, j - i == 1 ? "" : "s");
        write_domains(t, order, i, j, depth + 1, out);
        i = j;
    }
}

int topo_plan_write_text(const topo_plan *plan, topo_buf *out)
{
    size_t n = topo_plan_node_count(plan);
    tree_ctx t = {.plan = plan};
    /* The tree shows the levels every labelled node has a value for. */
    for (int l = 0; l < TOPO_LEVEL_COUNT; l++) {
        if (l == TOPO_LEVEL_HOSTNAME)
            continue;
        int all = 1, any = 0;
        for (size_t i = 0; i < n; i++) {
            if (!topo_plan_node_value(plan, i, TOPO_LEVEL_HOSTNAME))
                continue;
            any = 1;
            all &= topo_plan_node_value(plan, i, (topo_level)l) != NULL;
        }
        if (any && all)
            t.levels[t.nlevels++] = (topo_level)l;
    }
    row *order = malloc((n ? n : 1) * sizeof(*order));
    if (!order)
        return TOPO_ENOMEM;
    size_t labelled = 0;
    for (size_t i = 0; i < n; i++) {
        if (!topo_plan_node_value(plan, i, TOPO_LEVEL_HOSTNAME))
            continue;
        row *r = &order[labelled++];
        r->node = i;
        for (size_t l = 0; l < t.nlevels; l++)
            r->values[l] = topo_plan_node_value(plan, i, t.levels[l]);
        r->values[t.nlevels] = topo_plan_node_name(plan, i);
        r->nvalues = t.nlevels + 1;
    }
    qsort(order, labelled, sizeof(*order), by_tuple);

    topo_buf_printf(out,
                    "nodes: %zu planned, %zu labelled, %zu incomplete; conflicts: %zu; "
                    "unmapped hosts: %zu; hosts that are no node: %zu\n",
                    n, labelled, topo_plan_incomplete_count(plan), topo_plan_conflict_count(plan),
                    topo_plan_unmapped_hosts(plan), topo_plan_unknown_hosts(plan));
    write_domains(&t, order, 0, labelled, 0, out);
    free(order);
    if (topo_plan_incomplete_count(plan) > 0) {
        topo_buf_printf(out, "incomplete (%zu):\n", topo_plan_incomplete_count(plan));
        for (size_t i = 0; i < n; i++)
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
