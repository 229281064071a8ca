/* topoassign assign: place one PodSet on an inventory, as Kueue TAS would. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/limits.h"
#include "topo/strmap.h"

#define CMD "assign"
#define HOSTNAME_LABEL "kubernetes.io/hostname"
#define GPU_RESOURCE "nvidia.com/gpu"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: topoassign assign (--nodes FILE [--pods FILE] | --db FILE) --levels L1,L2,...\n"
            "                         --count N --request NAME=QTY[,NAME=QTY...]\n"
            "                         (--required LEVEL | --preferred LEVEL | --unconstrained)\n"
            "                         [--slice-size S --slice-level LEVEL]\n"
            "       topoassign assign (--nodes FILE [--pods FILE] | --db FILE) --levels L1,L2,...\n"
            "                         --podset MANIFEST\n"
            "options:\n"
            "  --nodes FILE          kubectl get nodes -o json, or a fixture YAML (repeatable)\n"
            "  --pods FILE           kubectl get pods -A -o json: usage of bound pods\n"
            "  --db FILE             a topo cache file instead of --nodes/--pods: its nodes, pods\n"
            "                        and unexpired reservations (topoassign cache import makes one)\n"
            "  --levels L1,L2,...    topology level labels, coarsest first (Kueue Topology levels)\n"
            "  --count N             pods in the PodSet\n"
            "  --request R=Q,...     per-pod requests, e.g. nvidia.com/gpu=8,cpu=32,memory=256Gi\n"
            "  --required LEVEL      all pods in one domain of LEVEL\n"
            "  --preferred LEVEL     one domain of LEVEL if possible, else the fewest above it\n"
            "  --unconstrained       any nodes (least free capacity first)\n"
            "  --slice-size S        pods per slice, each slice within one domain of --slice-level\n"
            "  --slice-level LEVEL\n"
            "  --podset MANIFEST     a Pod or Job (JSON/YAML) carrying Kueue's TAS annotations,\n"
            "                        instead of --count/--request/--required/... \n"
            "  --node-label K=V      nodes of the ResourceFlavor (repeatable)\n"
            "  --topology-name NAME  name used in Kueue's messages (default \"default\")\n"
            "  --gate NAME=BOOL      set a Kueue feature gate (repeatable)\n"
            "  -o, --output FORMAT   table (default), json or yaml: Kueue's TopologyAssignment\n"
            "exit status: 0 placed, 1 does not fit (message on stderr), 2 bad input\n");
}

enum {
    F_NODES,
    F_PODS,
    F_DB,
    F_LEVELS,
    F_COUNT,
    F_REQUEST,
    F_REQUIRED,
    F_PREFERRED,
    F_UNCONSTRAINED,
    F_SLICE_SIZE,
    F_SLICE_LEVEL,
    F_PODSET,
    F_NODE_LABEL,
    F_TOPOLOGY_NAME,
    F_GATE,
    F_OUTPUT,
    F_COUNT_OF_FLAGS
};

typedef struct assign_ctx {
    topo_pool *pool;
    topo_inventory *inv;
    topo_cli_nodes nodes;
    topo_snapshot *snap;
    topo_strmap *by_hostname;
    const char **levels;
    size_t nlevels;
} assign_ctx;

/* --- request building --------------------------------------------------------------- */

static int check_level(const assign_ctx *c, const char *what, const char *level, topo_err *err)
{
    char list[512] = "";
    if (level == NULL || topo_cli_level_index(c->levels, c->nlevels, level) >= 0)
        return 0;
    for (size_t i = 0; i < c->nlevels; i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, c->levels[i], sizeof(list) - strlen(list) - 1);
    }
    return topo_err_set(err, TOPO_EINVALID, "%s: unknown level \"%s\" (not in --levels: %s)", what,
                        level, list);
}

static int podset_from_flags(topo_podset_spec *ps, topo_cli_flag *f, const assign_ctx *c,
                             topo_err *err)
{
    topo_resource *req = NULL;
    int64_t v = 0;
    int error, modes;

    memset(ps, 0, sizeof(*ps));
    ps->name = "main";
    if (f[F_COUNT].n == 0)
        return topo_err_set(err, TOPO_EINVALID, "--count: required (or give --podset)");
    if (topo_cli_parse_int(&v, f[F_COUNT].values[0], 1, TOPO_MAX_PODSET_COUNT, err) < 0)
        return topo_err_wrap(err, "--count");
    ps->count = (int32_t)v;
    if (f[F_REQUEST].n == 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "--request: required, e.g. --request nvidia.com/gpu=8");
    if ((error = topo_cli_parse_requests(&req, &ps->nrequests, f[F_REQUEST].values[0], c->pool,
                                         err)) < 0)
        return error;
    ps->requests = req;
    modes = (f[F_REQUIRED].n > 0) + (f[F_PREFERRED].n > 0) + (f[F_UNCONSTRAINED].n > 0);
    if (modes == 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "one of --required LEVEL, --preferred LEVEL or --unconstrained is "
                            "required");
    if (modes > 1)
        return topo_err_set(err, TOPO_EINVALID,
                            "--required, --preferred and --unconstrained are mutually exclusive");
    if (f[F_REQUIRED].n > 0)
        ps->required = f[F_REQUIRED].values[0];
    if (f[F_PREFERRED].n > 0)
        ps->preferred = f[F_PREFERRED].values[0];
    ps->unconstrained = f[F_UNCONSTRAINED].n > 0;
    if ((f[F_SLICE_SIZE].n > 0) != (f[F_SLICE_LEVEL].n > 0))
        return topo_err_set(err, TOPO_EINVALID, "--slice-size and --slice-level go together");
    if (f[F_SLICE_SIZE].n > 0) {
        if (topo_cli_parse_int(&v, f[F_SLICE_SIZE].values[0], 1, ps->count, err) < 0)
            return topo_err_wrap(err, "--slice-size");
        ps->slice_size = (int32_t)v;
        ps->slice_required = f[F_SLICE_LEVEL].values[0];
    }
    if ((error = check_level(c, "--required", ps->required, err)) < 0 ||
        (error = check_level(c, "--preferred", ps->preferred, err)) < 0 ||
        (error = check_level(c, "--slice-level", ps->slice_required, err)) < 0)
        return error;
    /* Each level is one of --levels (valid label keys) and the slice size
     * is within the count: the flags cannot say more than that. */
    return 0;
}

static int podset_from_manifest(topo_podset_spec *ps, topo_cli_flag *f, const assign_ctx *c,
                                topo_err *err)
{
    static const int exclusive[] = {F_COUNT,         F_REQUEST,    F_REQUIRED,   F_PREFERRED,
                                    F_UNCONSTRAINED, F_SLICE_SIZE, F_SLICE_LEVEL};
    int error;

    for (size_t i = 0; i < sizeof(exclusive) / sizeof(exclusive[0]); i++)
        if (f[exclusive[i]].n > 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "%s: cannot be combined with --podset (the manifest sets it)",
                                f[exclusive[i]].name);
    if ((error = topo_podset_load_file(ps, f[F_PODSET].values[0], c->pool, err)) < 0)
        return error;
    if ((error = check_level(c, "kueue.x-k8s.io/podset-required-topology", ps->required, err)) < 0 ||
        (error = check_level(c, "kueue.x-k8s.io/podset-preferred-topology", ps->preferred, err)) < 0 ||
        (error = check_level(c, "kueue.x-k8s.io/podset-slice-required-topology",
                             ps->slice_required, err)) < 0)
        return topo_err_wrap(err, "%s", f[F_PODSET].values[0]);
    for (size_t i = 0; i < ps->nlayers; i++)
        if ((error = check_level(c, "kueue.x-k8s.io/podset-slice-required-topology-constraints",
                                 ps->layers[i].level, err)) < 0)
            return topo_err_wrap(err, "%s", f[F_PODSET].values[0]);
    if (ps->required == NULL && ps->preferred == NULL && !ps->unconstrained &&
        ps->slice_required == NULL && ps->nlayers == 0)
        ps->implied = 1; /* no TAS annotation: as on a TAS-only ClusterQueue */
    return 0;
}

/* --- output ----------------------------------------------------------------------------- */

/* Full level values of an assigned domain (hostname topologies carry only
 * the hostname: the rest comes from the node's labels). */
static void full_values(const char **out, const assign_ctx *c, const topo_assignment *a, size_t d)
{
    for (size_t i = 0; i < c->nlevels; i++)
        out[i] = "-";
    if (a->nlevels == c->nlevels) {
        for (size_t i = 0; i < c->nlevels; i++)
            out[i] = a->domains[d].values[i];
        return;
    }
    if (a->nlevels != 1 || c->by_hostname == NULL)
        return;
    out[c->nlevels - 1] = a->domains[d].values[0];
    int32_t idx = topo_strmap_get(c->by_hostname, a->domains[d].values[0]);
    if (idx < 0)
        return;
    const topo_node_spec *n = &c->nodes.v[idx];
    for (size_t i = 0; i < c->nlevels; i++)
        for (size_t k = 0; k < n->nlabels; k++)
            if (strcmp(n->labels[k].key, c->levels[i]) == 0)
                out[i] = n->labels[k].value;
}

static int64_t request_of(const topo_podset_spec *ps, const char *name)
{
    for (size_t i = 0; i < ps->nrequests; i++)
        if (strcmp(ps->requests[i].name, name) == 0)
            return ps->requests[i].amount;
    return -1;
}

static int print_table(const assign_ctx *c, const topo_podset_spec *ps, const topo_assignment *a)
{
    const char *vals[TOPO_MAX_LEVELS];
    size_t width[TOPO_MAX_LEVELS];
    int64_t gpus = request_of(ps, GPU_RESOURCE);
    int64_t total = 0;
    const char *mode_level = ps->required ? ps->required : ps->preferred;
    int mode_idx = mode_level ? topo_cli_level_index(c->levels, c->nlevels, mode_level) : -1;
    size_t distinct = 0;
    const char *first_mode_value = NULL;

    for (size_t i = 0; i < c->nlevels; i++)
        width[i] = strlen(topo_cli_level_short(c->levels[i]));
    for (size_t d = 0; d < a->ndomains; d++) {
        full_values(vals, c, a, d);
        for (size_t i = 0; i < c->nlevels; i++)
            if (strlen(vals[i]) > width[i])
                width[i] = strlen(vals[i]);
    }
    for (size_t i = 0; i < c->nlevels; i++) {
        const char *s = topo_cli_level_short(c->levels[i]);
        for (const char *p = s; *p; p++)
            putchar(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        printf("%*s  ", (int)(width[i] - strlen(s)), "");
    }
    printf("PODS%s\n", gpus >= 0 ? "  GPUS" : "");
    /* Domains arrive sorted by full level values: distinct values at the
     * requested level are counted as changes of the prefix. */
    const char *prev[TOPO_MAX_LEVELS] = {0};
    for (size_t d = 0; d < a->ndomains; d++) {
        full_values(vals, c, a, d);
        for (size_t i = 0; i < c->nlevels; i++)
            printf("%-*s  ", (int)width[i], vals[i]);
        printf("%4d", (int)a->domains[d].count);
        if (gpus >= 0)
            printf("  %4" PRId64, gpus * a->domains[d].count);
        printf("\n");
        total += a->domains[d].count;
        if (mode_idx >= 0) {
            int same = d > 0;
            for (int i = 0; i <= mode_idx && same; i++)
                same = strcmp(prev[i], vals[i]) == 0;
            if (!same) {
                distinct++;
                if (first_mode_value == NULL)
                    first_mode_value = vals[mode_idx];
            }
            for (int i = 0; i <= mode_idx; i++)
                prev[i] = vals[i];
        }
    }
    printf("placed %" PRId64 " pod%s", total, total == 1 ? "" : "s");
    if (gpus > 0)
        printf(" (%" PRId64 " %s)", gpus * total, GPU_RESOURCE);
    printf(" on %zu %s", a->ndomains,
           a->nlevels == 1 && strcmp(a->levels[0], HOSTNAME_LABEL) == 0
               ? (a->ndomains == 1 ? "node" : "nodes")
               : (a->ndomains == 1 ? "domain" : "domains"));
    if (mode_idx >= 0) {
        const char *short_name = topo_cli_level_short(mode_level);
        if (distinct == 1)
            printf(", all in %s %s", short_name, first_mode_value);
        else
            printf(", across %zu %ss", distinct, short_name);
        printf(" (%s %s)", ps->required ? "required" : "preferred", mode_level);
    } else if (ps->unconstrained || ps->implied) {
        printf(" (unconstrained)");
    }
    if (ps->slice_required != NULL)
        printf(", slices of %d per %s", (int)ps->slice_size,
               topo_cli_level_short(ps->slice_required));
    printf("\n");
    return 0;
}

/* --- the command ------------------------------------------------------------------------- */

static int hostname_index(assign_ctx *c, topo_err *err)
{
    size_t n = c->nodes.n;
    if ((c->by_hostname = topo_strmap_create(n ? n : 1)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && i < INT32_MAX; i++) {
        const topo_node_spec *node = &c->nodes.v[i];
        for (size_t k = 0; k < node->nlabels; k++)
            if (strcmp(node->labels[k].key, HOSTNAME_LABEL) == 0 &&
                topo_strmap_put(c->by_hostname, node->labels[k].value, (int32_t)i) < 0)
                return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    }
    return 0;
}

int topo_cli_cmd_assign(int argc, char **argv)
{
    topo_cli_flag f[F_COUNT_OF_FLAGS] = {
        [F_NODES] = {"--nodes", 1, 1, NULL, {0}, 0},
        [F_PODS] = {"--pods", 1, 0, NULL, {0}, 0},
        [F_DB] = {"--db", 1, 0, NULL, {0}, 0},
        [F_LEVELS] = {"--levels", 1, 0, NULL, {0}, 0},
        [F_COUNT] = {"--count", 1, 0, NULL, {0}, 0},
        [F_REQUEST] = {"--request", 1, 0, NULL, {0}, 0},
        [F_REQUIRED] = {"--required", 1, 0, NULL, {0}, 0},
        [F_PREFERRED] = {"--preferred", 1, 0, NULL, {0}, 0},
        [F_UNCONSTRAINED] = {"--unconstrained", 0, 0, NULL, {0}, 0},
        [F_SLICE_SIZE] = {"--slice-size", 1, 0, NULL, {0}, 0},
        [F_SLICE_LEVEL] = {"--slice-level", 1, 0, NULL, {0}, 0},
        [F_PODSET] = {"--podset", 1, 0, NULL, {0}, 0},
        [F_NODE_LABEL] = {"--node-label", 1, 1, NULL, {0}, 0},
        [F_TOPOLOGY_NAME] = {"--topology-name", 1, 0, NULL, {0}, 0},
        [F_GATE] = {"--gate", 1, 1, NULL, {0}, 0},
        [F_OUTPUT] = {"--output", 1, 0, "-o", {0}, 0},
    };
    assign_ctx c;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory_snapshot_opts sopts = {0};
    topo_podset_spec ps;
    topo_podset_result result;
    topo_gates gates;
    char *text = NULL;
    int help = 0, format = -1, rc = TOPO_CLI_EXIT_BADINPUT;

    memset(&c, 0, sizeof(c));
    memset(&result, 0, sizeof(result));
    if (topo_cli_parse_flags(f, F_COUNT_OF_FLAGS, argc, argv, &help, &err) < 0) {
        fprintf(stderr, "topoassign assign: %s (see 'topoassign assign --help')\n", err.text);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (help) {
        usage(stdout);
        return TOPO_CLI_EXIT_OK;
    }
    if ((c.pool = topo_pool_create()) == NULL) {
        topo_err_set(&err, TOPO_ENOMEM, "out of memory");
        goto fail;
    }
    if (topo_cli_topology_opts(&sopts, f[F_NODES].n, f[F_PODS].n ? f[F_PODS].values[0] : NULL,
                               f[F_DB].n ? f[F_DB].values[0] : NULL,
                               f[F_LEVELS].n ? f[F_LEVELS].values[0] : NULL,
                               f[F_NODE_LABEL].values, f[F_NODE_LABEL].n,
                               f[F_TOPOLOGY_NAME].n ? f[F_TOPOLOGY_NAME].values[0] : NULL, c.pool,
                               &err) < 0)
        goto fail;
    c.levels = (const char **)sopts.snapshot.levels;
    c.nlevels = sopts.snapshot.nlevels;
    const char *output = f[F_OUTPUT].n ? f[F_OUTPUT].values[0] : "table";
    if (strcmp(output, "table") == 0)
        format = -1;
    else if (strcmp(output, "json") == 0)
        format = TOPO_FORMAT_JSON;
    else if (strcmp(output, "yaml") == 0)
        format = TOPO_FORMAT_YAML;
    else {
        topo_err_set(&err, TOPO_EINVALID, "--output: expected table, json or yaml, got \"%s\"",
                     output);
        goto fail;
    }
    if ((f[F_PODSET].n > 0 ? podset_from_manifest(&ps, f, &c, &err)
                           : podset_from_flags(&ps, f, &c, &err)) < 0)
        goto fail;
    topo_gates_init(&gates);
    for (size_t i = 0; i < f[F_GATE].n; i++) {
        char *name = topo_pool_strdup(c.pool, f[F_GATE].values[i]);
        char *eq = name ? strchr(name, '=') : NULL;
        int on;
        if (eq == NULL || (strcmp(eq + 1, "true") != 0 && strcmp(eq + 1, "false") != 0)) {
            topo_err_set(&err, TOPO_EINVALID, "--gate: expected NAME=true|false, got \"%s\"",
                         f[F_GATE].values[i]);
            goto fail;
        }
        *eq = '\0';
        on = strcmp(eq + 1, "true") == 0;
        if (topo_gates_set(&gates, name, on, &err) < 0) {
            topo_err_wrap(&err, "--gate");
            goto fail;
        }
    }
    if (topo_cli_load_snapshot(&c.inv, &c.snap, &c.nodes, f[F_NODES].values, f[F_NODES].n,
                               f[F_PODS].n ? f[F_PODS].values[0] : NULL,
                               f[F_DB].n ? f[F_DB].values[0] : NULL, &sopts, NULL, c.pool,
                               &err) < 0 ||
        hostname_index(&c, &err) < 0)
        goto fail;
    if (topo_engine_find(&result, c.snap, &ps, 1, NULL, &gates, c.pool, &err) < 0)
        goto fail;
    if (result.failure != NULL || result.assignment == NULL) {
        fprintf(stderr, "does not fit: %s\n",
                result.failure ? result.failure : "no assignment returned");
        rc = TOPO_CLI_EXIT_NOFIT;
        goto cleanup;
    }
    if (format < 0) {
        print_table(&c, &ps, result.assignment);
    } else {
        if (topo_assignment_format(&text, result.assignment, (topo_format)format, &err) < 0)
            goto fail;
        fputs(text, stdout);
    }
    rc = fflush(stdout) == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_BADINPUT;
    goto cleanup;

fail:
    topo_cli_error(CMD, &err);
    rc = TOPO_CLI_EXIT_BADINPUT;
cleanup:
    free(text);
    topo_snapshot_free(c.snap);
    topo_strmap_free(c.by_hostname);
    topo_inventory_free(c.inv);
    topo_pool_free(c.pool);
    return rc;
}
