/* topoassign show: the topology tree with free/total capacity per domain. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/array.h"
#include "topo/k8s.h"
#include "topo/limits.h"

#define CMD "show"
#define LIST_MAX 20 /* node names listed per footer line */

typedef struct show_args {
    cli_input_args input;
    const char *resource;
} show_args;

#define O(field) offsetof(show_args, field)

static const topo_opt table[] = {
    TOPO_CLI_FILE_ROWS("Options:"),
    TOPO_CLI_LIVE_ROWS,
    TOPO_CLI_RESOURCE_ROW("the resource counted", resource),
    TOPO_CLI_NODE_LABEL_ROW,
    TOPO_CLI_TOPOLOGY_NAME_ROW("the name printed"),
};

const cli_command cli_show = {
    "show",
    "print the topology tree with free/total GPUs per domain",
    "usage: topoassign show (--nodes FILE [--pods FILE] | --db FILE) --levels L1,L2,...\n"
    "                       [--resource NAME] [--node-label K=V ...] [--topology-name NAME]\n"
    "       topoassign show --live [--kubeconfig FILE] [--context NAME]\n"
    "                       [--levels L1,L2,... | --topology NAME]\n"
    "                       [--resource NAME] [--node-label K=V ...] [--topology-name NAME]\n"
    "       kubectl topo show [--kubeconfig FILE] [--context NAME]\n"
    "                         [--levels L1,L2,... | --topology NAME]\n"
    "                         [--resource NAME] [--node-label K=V ...] [--topology-name NAME]",
    "Prints the topology as a tree: per domain the free/total amount of the resource on "
    "eligible nodes, the largest amount free on a single node, and the eligible node count; "
    "then the nodes left out. With --live, and as kubectl topo show, the cluster is read "
    "now through the kubeconfig, and so are the levels when --levels is not given "
    "(topo-webhook's configuration, else Kueue's Topology). Exit status: 0 shown, 2 bad input "
    "or the cluster could not be read.",
    table,
    sizeof table / sizeof table[0],
    cli_cmd_show,
};

typedef struct row {
    topo_domain_view view;
    int last; /* last child of its parent */
} row;

typedef struct rows {
    row *v;
    size_t n, cap;
    int oom;
} rows;

static int collect(const topo_domain_view *view, void *payload)
{
    rows *r = payload;
    if (topo_array_reserve((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)) != 0) {
        r->oom = 1;
        return TOPO_ENOMEM;
    }
    r->v[r->n].view = *view;
    r->v[r->n].last = 0;
    r->n++;
    return 0;
}

/* Tree prefix of row i: for each ancestor level, a bar when that ancestor has
 * later siblings; then the branch for the row itself. */
static size_t prefix(char *buf, size_t size, const rows *r, size_t i, const int *open)
{
    size_t len = 0, level = r->v[i].view.level;
    buf[0] = '\0';
    if (level == 0)
        return 0;
    for (size_t l = 1; l < level; l++)
        len += (size_t)snprintf(buf + len, size > len ? size - len : 0, "%s",
                                open[l] ? "\xe2\x94\x82   " : "    ");
    len += (size_t)snprintf(buf + len, size > len ? size - len : 0, "%s",
                            r->v[i].last ? "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 "
                                         : "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ");
    return len;
}

/* Display width of UTF-8 text (box-drawing characters are one column). */
static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Amounts in the units people read: cpu in cores (Kueue keeps millicores),
 * byte-sized resources in Gi when large. */
static const char *amount_text(char *buf, size_t size, const char *resource, int64_t v)
{
    const int64_t gi = 1024LL * 1024 * 1024;
    if (strcmp(resource, "cpu") == 0) {
        if (v % 1000 == 0)
            snprintf(buf, size, "%" PRId64, v / 1000);
        else
            snprintf(buf, size, "%" PRId64 ".%03" PRId64, v / 1000, v % 1000);
    } else if ((strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
                strncmp(resource, "hugepages-", 10) == 0) &&
               v >= gi) {
        if (v % gi == 0)
            snprintf(buf, size, "%" PRId64 "Gi", v / gi);
        else
            snprintf(buf, size, "%.1fGi", (double)v / (double)gi);
    } else {
        snprintf(buf, size, "%" PRId64, v);
    }
    return buf;
}

static const char *taint_text(char *buf, size_t size, const topo_taint *t)
{
    if (t->value != NULL && t->value[0] != '\0')
        snprintf(buf, size, "%s=%s:%s", t->key, t->value, t->effect);
    else
        snprintf(buf, size, "%s:%s", t->key, t->effect);
    return buf;
}

static const char *label_of(const topo_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static int in_topology(const topo_node_spec *n, const char *const *levels, size_t nlevels,
                       const topo_kv *flavor, size_t nflavor)
{
    for (size_t i = 0; i < nlevels; i++)
        if (label_of(n, levels[i]) == NULL)
            return 0;
    for (size_t i = 0; i < nflavor; i++) {
        const char *v = label_of(n, flavor[i].key);
        if (v == NULL || strcmp(v, flavor[i].value) != 0)
            return 0;
    }
    return 1;
}

static void footer(const cli_nodes *nodes, const char *const *levels, size_t nlevels,
                   const topo_kv *flavor, size_t nflavor, topo_pool *pool)
{
    size_t nexcluded = 0, ntainted = 0, noutside = 0, shown;
    char t[TOPO_MAX_LABEL_KEY + TOPO_MAX_LABEL_VALUE + 32];

    for (size_t i = 0; i < nodes->n; i++) {
        const topo_node_spec *n = &nodes->v[i];
        if (!in_topology(n, levels, nlevels, flavor, nflavor))
            noutside++;
        else if (!n->ready || n->unschedulable)
            nexcluded++;
        else
            for (size_t k = 0; k < n->ntaints; k++)
                if (strcmp(n->taints[k].effect, "PreferNoSchedule") != 0) {
                    ntainted++;
                    break;
                }
    }
    printf("excluded nodes (%zu, not counted)%s", nexcluded, nexcluded ? ":" : "");
    shown = 0;
    for (size_t i = 0; i < nodes->n && shown < LIST_MAX; i++) {
        const topo_node_spec *n = &nodes->v[i];
        if (!in_topology(n, levels, nlevels, flavor, nflavor) || (n->ready && !n->unschedulable))
            continue;
        printf("%s %s (%s)", shown ? "," : "", cli_safe(pool, n->name),
               !n->ready && n->unschedulable ? "NotReady, unschedulable"
               : !n->ready                   ? "NotReady"
                                             : "unschedulable");
        shown++;
    }
    if (nexcluded > shown)
        printf(", ... and %zu more", nexcluded - shown);
    printf("\n");
    if (ntainted > 0) {
        printf("tainted nodes (%zu, counted; only pods tolerating the taint fit):", ntainted);
        shown = 0;
        for (size_t i = 0; i < nodes->n && shown < LIST_MAX; i++) {
            const topo_node_spec *n = &nodes->v[i];
            if (!in_topology(n, levels, nlevels, flavor, nflavor) || !n->ready || n->unschedulable)
                continue;
            int first = 1;
            for (size_t k = 0; k < n->ntaints; k++) {
                if (strcmp(n->taints[k].effect, "PreferNoSchedule") == 0)
                    continue;
                printf("%s%s%s", first ? (shown ? ", " : " ") : " ",
                       first ? cli_safe(pool, n->name) : "", first ? " (" : "");
                if (!first)
                    printf(", ");
                printf("%s", cli_safe(pool, taint_text(t, sizeof(t), &n->taints[k])));
                first = 0;
            }
            if (!first) {
                printf(")");
                shown++;
            }
        }
        if (ntainted > shown)
            printf(", ... and %zu more", ntainted - shown);
        printf("\n");
    }
    if (noutside > 0)
        printf("outside the topology (missing a level label%s): %zu nodes\n",
               nflavor ? " or a --node-label" : "", noutside);
}

int cli_cmd_show(int argc, char **argv)
{
    show_args f;
    cli_input in;
    cli_cluster cluster = {0};
    cli_topology_flags flags;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory_snapshot_opts sopts = {0};
    topo_pool *pool = NULL;
    topo_inventory *inv = NULL;
    cli_nodes nodes = {NULL, 0};
    topo_snapshot *snap = NULL;
    rows r = {NULL, 0, 0, 0};
    const char *const *levels = NULL;
    size_t nlevels = 0, nflavor = 0, ignored = 0;
    const topo_kv *flavor = NULL;
    const char *resource;
    int rc, walk;
    int open[TOPO_MAX_LEVELS + 1] = {0};

    memset(&f, 0, sizeof(f));
    if ((rc = cli_parse(&cli_show, argc, argv, &f)) >= 0)
        goto cleanup;
    rc = TOPO_CLI_EXIT_BADINPUT;
    resource = f.resource ? f.resource : TOPO_CLI_GPU_RESOURCE;
    if ((pool = topo_pool_create()) == NULL) {
        topo_err_nomem(&err, NULL);
        goto fail;
    }
    cli_input_from_args(&in, &flags, &f.input, &cluster);
    if (cli_topology_opts(&sopts, &in, &flags, pool, &err) < 0 ||
        cli_load_snapshot(&inv, &snap, &nodes, &in, &sopts, &ignored, pool, &err) < 0)
        goto fail;
    levels = sopts.snapshot.levels;
    nlevels = sopts.snapshot.nlevels;
    flavor = sopts.snapshot.flavor_labels;
    nflavor = sopts.snapshot.nflavor_labels;
    walk = topo_snapshot_walk(snap, resource, collect, &r);
    if (walk != 0) {
        topo_err_set(&err, walk, "cannot walk the topology: %s", topo_strerror(walk));
        goto fail;
    }

    /* Label values come from the cluster: escaped for the terminal. */
    for (size_t i = 0; i < r.n; i++)
        r.v[i].view.value = cli_safe(pool, r.v[i].view.value);
    /* Last-child flags: the next row at the same or a shallower level decides. */
    for (size_t i = 0; i < r.n; i++) {
        size_t level = r.v[i].view.level;
        r.v[i].last = 1;
        for (size_t k = i + 1; k < r.n; k++) {
            if (r.v[k].view.level < level)
                break;
            if (r.v[k].view.level == level) {
                r.v[i].last = 0;
                break;
            }
        }
    }

    printf("topology \"%s\":", cli_safe(pool, sopts.snapshot.topology_name));
    for (size_t i = 0; i < nlevels; i++)
        printf("%s%s", i ? " > " : " ", cli_level_short(levels[i]));
    printf("  (%s free/total on eligible nodes)\n", resource);

    char pre[4 * 3 * (TOPO_MAX_LEVELS + 1) + 8];
    size_t width = 0;
    for (size_t i = 0; i < r.n; i++) {
        open[r.v[i].view.level] = !r.v[i].last;
        prefix(pre, sizeof(pre), &r, i, open);
        size_t w = columns(pre) + strlen(r.v[i].view.value);
        if (w > width)
            width = w;
    }
    int64_t total_free = 0, total_cap = 0, total_max = 0;
    char a1[48], a2[48], a3[48];
    size_t total_nodes = 0;
    for (size_t i = 0; i < r.n; i++) {
        const topo_domain_view *v = &r.v[i].view;
        open[v->level] = !r.v[i].last;
        prefix(pre, sizeof(pre), &r, i, open);
        printf("%s%s%*s  %s/%s free", pre, v->value,
               (int)(width - columns(pre) - strlen(v->value)), "",
               amount_text(a1, sizeof(a1), resource, v->free),
               amount_text(a2, sizeof(a2), resource, v->capacity));
        if (v->nodes != 1)
            printf(", max %s on one node, %zu nodes",
                   amount_text(a1, sizeof(a1), resource, v->max_node_free), v->nodes);
        else if (v->level + 1 < nlevels)
            printf(", 1 node");
        printf("\n");
        if (v->level == 0) {
            total_free += v->free;
            total_cap += v->capacity;
            total_nodes += v->nodes;
            if (v->max_node_free > total_max)
                total_max = v->max_node_free;
        }
    }
    printf("total: %s/%s %s free on %zu eligible node%s, max %s on one node\n",
           amount_text(a1, sizeof(a1), resource, total_free),
           amount_text(a2, sizeof(a2), resource, total_cap), resource, total_nodes,
           total_nodes == 1 ? "" : "s", amount_text(a3, sizeof(a3), resource, total_max));
    footer(&nodes, levels, nlevels, flavor, nflavor, pool);
    if (ignored > 0)
        printf("pods on nodes outside the topology (not counted): %zu\n", ignored);
    rc = cli_output_status();
    goto cleanup;

fail:
    rc = cli_fail(CMD, &err);
cleanup:
    cli_cluster_dispose(&cluster);
    free(r.v);
    topo_snapshot_free(snap);
    topo_inventory_free(inv);
    topo_pool_free(pool);
    topo_opts_free(table, sizeof table / sizeof table[0], &f);
    return rc;
}
