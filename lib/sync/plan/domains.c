/* The domain tree of a built plan (domains.h). */
#include "domains.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"

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

/* The tree shows the owned levels every labelled node has a value for. */
static void tree_levels(plan_domains *d, const topo_plan *plan)
{
    size_t n = topo_plan_node_count(plan);
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
            d->levels[d->nlevels++] = (topo_level)l;
    }
}

typedef TOPO_ARRAY(plan_domain) domain_array;

/* Domains of depth `depth` over rows [from, to), then their children. */
static int add_domains(plan_domains *d, domain_array *out, const row *rows,
                       size_t from, size_t to, size_t depth, size_t parent, size_t *ordinals)
{
    /* nlevels never exceeds TOPO_LEVEL_COUNT; saying so lets the compiler
     * see values[depth] and ordinals[depth] in bounds. */
    if (depth >= d->nlevels || depth >= TOPO_LEVEL_COUNT)
        return 0;
    for (size_t i = from; i < to;) {
        const char *v = rows[i].values[depth];
        size_t j = i + 1;
        while (j < to && strcmp(rows[j].values[depth], v) == 0)
            j++;
        plan_domain dom = {.depth = depth, .value = v, .parent = parent, .first = i, .end = j,
                           .ordinal = ordinals[depth]++};
        if (TOPO_ARRAY_PUSH(out, dom) != 0)
            return TOPO_ENOMEM;
        int rc = add_domains(d, out, rows, i, j, depth + 1, out->n - 1, ordinals);
        if (rc != 0)
            return rc;
        i = j;
    }
    return 0;
}

int plan_domains_build(plan_domains *d, const topo_plan *plan)
{
    memset(d, 0, sizeof(*d));
    tree_levels(d, plan);
    size_t n = topo_plan_node_count(plan);
    row *rows = malloc((n ? n : 1) * sizeof(*rows));
    d->rows = malloc((n ? n : 1) * sizeof(*d->rows));
    if (!rows || !d->rows) {
        free(rows);
        plan_domains_free(d);
        return TOPO_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (!topo_plan_node_value(plan, i, TOPO_LEVEL_HOSTNAME))
            continue;
        row *r = &rows[d->nrows++];
        r->node = i;
        for (size_t l = 0; l < d->nlevels; l++)
            r->values[l] = topo_plan_node_value(plan, i, d->levels[l]);
        r->values[d->nlevels] = topo_plan_node_name(plan, i);
        r->nvalues = d->nlevels + 1;
    }
    qsort(rows, d->nrows, sizeof(*rows), by_tuple);
    for (size_t i = 0; i < d->nrows; i++)
        d->rows[i] = rows[i].node;
    domain_array doms = TOPO_ARRAY_INIT;
    size_t ordinals[TOPO_LEVEL_COUNT] = {0};
    int rc = add_domains(d, &doms, rows, 0, d->nrows, 0, SIZE_MAX, ordinals);
    free(rows);
    d->domains = doms.items;
    d->ndomains = doms.n;
    if (rc != 0)
        plan_domains_free(d);
    return rc;
}

void plan_domains_free(plan_domains *d)
{
    free(d->rows);
    free(d->domains);
    memset(d, 0, sizeof(*d));
}
