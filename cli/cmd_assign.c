/* topoassign assign: place one PodSet on an inventory, as Kueue TAS would. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/k8s.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"
#include "topo/strmap.h"

#define CMD "assign"

typedef struct assign_args {
    cli_input_args input;
    topo_opt_list gates;
    const char *request, *required, *preferred, *slice_level, *podset, *output;
    unsigned long count, slice_size; /* 0: not given */
    int unconstrained;
} assign_args;

#define O(field) offsetof(assign_args, field)

static const char *const formats[] = {"table", "json", "yaml", NULL};

static const topo_opt table[] = {
    TOPO_CLI_FILE_ROWS("The cluster:"),
    TOPO_CLI_LIVE_ROWS,
    TOPO_CLI_NODE_LABEL_ROW,
    TOPO_CLI_TOPOLOGY_NAME_ROW("name used in Kueue's messages"),
    {"--count", NULL, TOPO_OPT_UINT, "N", 1, TOPO_MAX_PODSET_COUNT, NULL, NULL,
     "pods in the PodSet", O(count), "The PodSet (flags, or --podset):"},
    {"--request", NULL, TOPO_OPT_STRING, "R=Q,...", 0, 0, NULL, NULL,
     "per-pod requests, e.g. nvidia.com/gpu=8,cpu=32,memory=256Gi", O(request), NULL},
    {"--required", NULL, TOPO_OPT_STRING, "LEVEL", 0, 0, NULL, NULL,
     "all pods in one domain of LEVEL", O(required), NULL},
    {"--preferred", NULL, TOPO_OPT_STRING, "LEVEL", 0, 0, NULL, NULL,
     "one domain of LEVEL if possible, else the fewest above it", O(preferred), NULL},
    {"--unconstrained", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "any nodes (least free capacity first)", O(unconstrained), NULL},
    {"--slice-size", NULL, TOPO_OPT_UINT, "S", 1, TOPO_MAX_PODSET_COUNT, NULL, NULL,
     "pods per slice (at most --count), each slice within one domain of --slice-level",
     O(slice_size), NULL},
    {"--slice-level", NULL, TOPO_OPT_STRING, "LEVEL", 0, 0, NULL, NULL,
     "the level of --slice-size's slices", O(slice_level), NULL},
    {"--podset", NULL, TOPO_OPT_STRING, "MANIFEST", 0, 0, NULL, NULL,
     "a Pod or Job (JSON/YAML) carrying Kueue's TAS annotations, instead of "
     "--count/--request/--required/...",
     O(podset), NULL},
    TOPO_CLI_GATE_ROW("set a Kueue feature gate", gates, "Output:"),
    {"--output", "-o", TOPO_OPT_CHOICE, "FORMAT", 0, 0, formats, "table",
     "json and yaml print Kueue's TopologyAssignment", O(output), NULL},
};

const cli_command cli_assign = {
    "assign",
    "place one PodSet on a cluster, as Kueue TAS would",
    "usage: topoassign assign (--nodes FILE [--pods FILE] | --db FILE) --levels L1,L2,...\n"
    "                         --count N --request NAME=QTY[,NAME=QTY...]\n"
    "                         (--required LEVEL | --preferred LEVEL | --unconstrained)\n"
    "                         [--slice-size S --slice-level LEVEL]\n"
    "       topoassign assign (--nodes FILE [--pods FILE] | --db FILE) --levels L1,L2,...\n"
    "                         --podset MANIFEST\n"
    "       topoassign assign --live [--kubeconfig FILE] [--context NAME]\n"
    "                         [--levels L1,L2,... | --topology NAME]\n"
    "                         (--count N --request ... (--required LEVEL | ...) |\n"
    "                          --podset MANIFEST)\n"
    "       kubectl topo assign [--kubeconfig FILE] [--context NAME]\n"
    "                           [--levels L1,L2,... | --topology NAME]\n"
    "                           (--count N --request ... (--required LEVEL | ...) |\n"
    "                            --podset MANIFEST)",
    "Places one PodSet on the cluster as Kueue's Topology-Aware Scheduling would and prints "
    "where its pods go. With --live, and as kubectl topo assign, the cluster is read now "
    "through the kubeconfig: where there is room for this PodSet right now; without --levels, "
    "its levels too (topo-webhook's configuration, else Kueue's Topology). Exit status: 0 "
    "placed, 1 does not fit (Kueue's message on stderr), 2 bad input or the cluster could "
    "not be read.",
    table,
    sizeof table / sizeof table[0],
    cli_cmd_assign,
};

typedef struct assign_ctx {
    topo_pool *pool;
    topo_inventory *inv;
    cli_nodes nodes;
    topo_snapshot *snap;
    topo_strmap *by_hostname;
    const char **levels;
    size_t nlevels;
} assign_ctx;

/* --- request building --------------------------------------------------------------- */

static int check_level(const assign_ctx *c, const char *what, const char *level, topo_err *err)
{
    char list[512] = "";
    if (level == NULL || cli_level_index(c->levels, c->nlevels, level) >= 0)
        return 0;
    for (size_t i = 0; i < c->nlevels; i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, c->levels[i], sizeof(list) - strlen(list) - 1);
    }
    return topo_err_set(err, TOPO_EINVALID, "%s: unknown level \"%s\" (not in --levels: %s)", what,
                        level, list);
}

static int podset_from_flags(topo_podset_spec *ps, const assign_args *f, const assign_ctx *c,
                             topo_err *err)
{
    topo_resource *req = NULL;
    int error, modes;

    memset(ps, 0, sizeof(*ps));
    ps->name = "main";
    if (f->count == 0)
        return topo_err_set(err, TOPO_EINVALID, "--count: required (or give --podset)");
    ps->count = (int32_t)f->count;
    if (f->request == NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "--request: required, e.g. --request nvidia.com/gpu=8");
    if ((error = cli_parse_requests(&req, &ps->nrequests, f->request, c->pool, err)) < 0)
        return error;
    ps->requests = req;
    modes = (f->required != NULL) + (f->preferred != NULL) + (f->unconstrained != 0);
    if (modes == 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "one of --required LEVEL, --preferred LEVEL or --unconstrained is "
                            "required");
    if (modes > 1)
        return topo_err_set(err, TOPO_EINVALID,
                            "--required, --preferred and --unconstrained are mutually exclusive");
    ps->required = f->required;
    ps->preferred = f->preferred;
    ps->unconstrained = f->unconstrained;
    if ((f->slice_size > 0) != (f->slice_level != NULL))
        return topo_err_set(err, TOPO_EINVALID, "--slice-size and --slice-level go together");
    if (f->slice_size > 0) {
        if (f->slice_size > f->count)
            return topo_err_set(err, TOPO_EINVALID,
                                "--slice-size: must be between 1 and %lu, got %lu", f->count,
                                f->slice_size);
        ps->slice_size = (int32_t)f->slice_size;
        ps->slice_required = f->slice_level;
    }
    if ((error = check_level(c, "--required", ps->required, err)) < 0 ||
        (error = check_level(c, "--preferred", ps->preferred, err)) < 0 ||
        (error = check_level(c, "--slice-level", ps->slice_required, err)) < 0)
        return error;
    /* Each level is one of --levels (valid label keys) and the slice size
     * is within the count: the flags cannot say more than that. */
    return 0;
}

static int podset_from_manifest(topo_podset_spec *ps, const assign_args *f, const assign_ctx *c,
                                topo_err *err)
{
    const struct {
        int given;
        const char *name;
    } exclusive[] = {
        {f->count > 0, "--count"},
        {f->request != NULL, "--request"},
        {f->required != NULL, "--required"},
        {f->preferred != NULL, "--preferred"},
        {f->unconstrained, "--unconstrained"},
        {f->slice_size > 0, "--slice-size"},
        {f->slice_level != NULL, "--slice-level"},
    };
    int error;

    for (size_t i = 0; i < sizeof(exclusive) / sizeof(exclusive[0]); i++)
        if (exclusive[i].given)
            return topo_err_set(err, TOPO_EINVALID,
                                "%s: cannot be combined with --podset (the manifest sets it)",
                                exclusive[i].name);
    if ((error = topo_podset_load_file(ps, f->podset, c->pool, err)) < 0)
        return error;
    if ((error = check_level(c, "kueue.x-k8s.io/podset-required-topology", ps->required, err)) < 0 ||
        (error = check_level(c, "kueue.x-k8s.io/podset-preferred-topology", ps->preferred, err)) < 0 ||
        (error = check_level(c, "kueue.x-k8s.io/podset-slice-required-topology",
                             ps->slice_required, err)) < 0)
        return topo_err_wrap(err, "%s", f->podset);
    for (size_t i = 0; i < ps->nlayers; i++)
        if ((error = check_level(c, "kueue.x-k8s.io/podset-slice-required-topology-constraints",
                                 ps->layers[i].level, err)) < 0)
            return topo_err_wrap(err, "%s", f->podset);
    if (ps->required == NULL && ps->preferred == NULL && !ps->unconstrained &&
        ps->slice_required == NULL && ps->nlayers == 0)
        ps->implied = 1; /* no TAS annotation: as on a TAS-only ClusterQueue */
    return 0;
}

/* --- output ----------------------------------------------------------------------------- */

static void raw_values(const char **out, const assign_ctx *c, const topo_assignment *a,
                       size_t d);

/* Full level values of an assigned domain (hostname topologies carry only
 * the hostname: the rest comes from the node's labels), escaped for the
 * terminal (label values come from the cluster). */
static void full_values(const char **out, const assign_ctx *c, const topo_assignment *a, size_t d)
{
    raw_values(out, c, a, d);
    for (size_t i = 0; i < c->nlevels; i++)
        out[i] = cli_safe(c->pool, out[i]);
}

static void raw_values(const char **out, const assign_ctx *c, const topo_assignment *a, size_t d)
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
    int64_t gpus = request_of(ps, TOPO_CLI_GPU_RESOURCE);
    int64_t total = 0;
    const char *mode_level = ps->required ? ps->required : ps->preferred;
    int mode_idx = mode_level ? cli_level_index(c->levels, c->nlevels, mode_level) : -1;
    size_t distinct = 0;
    const char *first_mode_value = NULL;

    for (size_t i = 0; i < c->nlevels; i++)
        width[i] = strlen(cli_level_short(c->levels[i]));
    for (size_t d = 0; d < a->ndomains; d++) {
        full_values(vals, c, a, d);
        for (size_t i = 0; i < c->nlevels; i++)
            if (strlen(vals[i]) > width[i])
                width[i] = strlen(vals[i]);
    }
    for (size_t i = 0; i < c->nlevels; i++) {
        const char *s = cli_level_short(c->levels[i]);
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
        printf(" (%" PRId64 " %s)", gpus * total, TOPO_CLI_GPU_RESOURCE);
    printf(" on %zu %s", a->ndomains,
           a->nlevels == 1 && strcmp(a->levels[0], TOPO_KUEUE_HOSTNAME_LABEL) == 0
               ? (a->ndomains == 1 ? "node" : "nodes")
               : (a->ndomains == 1 ? "domain" : "domains"));
    if (mode_idx >= 0) {
        const char *short_name = cli_level_short(mode_level);
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
               cli_level_short(ps->slice_required));
    printf("\n");
    return 0;
}

/* --- the command ------------------------------------------------------------------------- */

static int hostname_index(assign_ctx *c, topo_err *err)
{
    size_t n = c->nodes.n;
    if ((c->by_hostname = topo_strmap_create(n ? n : 1)) == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < n && i < INT32_MAX; i++) {
        const topo_node_spec *node = &c->nodes.v[i];
        for (size_t k = 0; k < node->nlabels; k++)
            if (strcmp(node->labels[k].key, TOPO_KUEUE_HOSTNAME_LABEL) == 0 &&
                topo_strmap_put(c->by_hostname, node->labels[k].value, (int32_t)i) < 0)
                return topo_err_nomem(err, NULL);
    }
    return 0;
}

int cli_cmd_assign(int argc, char **argv)
{
    assign_args f;
    cli_input in;
    cli_cluster cluster = {0};
    cli_topology_flags flags;
    assign_ctx c;
    topo_err err = TOPO_ERR_INIT;
    topo_inventory_snapshot_opts sopts = {0};
    topo_podset_spec ps;
    topo_podset_result result;
    topo_gates gates;
    char *text = NULL;
    int format = -1, rc;

    memset(&f, 0, sizeof(f));
    memset(&c, 0, sizeof(c));
    memset(&result, 0, sizeof(result));
    if ((rc = cli_parse(&cli_assign, argc, argv, &f)) >= 0)
        goto cleanup;
    rc = TOPO_CLI_EXIT_BADINPUT;
    if ((c.pool = topo_pool_create()) == NULL) {
        topo_err_nomem(&err, NULL);
        goto fail;
    }
    cli_input_from_args(&in, &flags, &f.input, &cluster);
    if (cli_topology_opts(&sopts, &in, &flags, c.pool, &err) < 0)
        goto fail;
    c.levels = (const char **)sopts.snapshot.levels;
    c.nlevels = sopts.snapshot.nlevels;
    if (f.output != NULL && strcmp(f.output, "json") == 0)
        format = TOPO_FORMAT_JSON;
    else if (f.output != NULL && strcmp(f.output, "yaml") == 0)
        format = TOPO_FORMAT_YAML;
    if ((f.podset != NULL ? podset_from_manifest(&ps, &f, &c, &err)
                          : podset_from_flags(&ps, &f, &c, &err)) < 0 ||
        cli_parse_gates(&gates, f.gates.v, f.gates.n, c.pool, &err) < 0)
        goto fail;
    if (cli_load_snapshot(&c.inv, &c.snap, &c.nodes, &in, &sopts, NULL, c.pool, &err) < 0 ||
        hostname_index(&c, &err) < 0)
        goto fail;
    if (topo_engine_find(&result, c.snap, &ps, 1, NULL, &gates, c.pool, &err) < 0)
        goto fail;
    if (result.failure != NULL || result.assignment == NULL) {
        fprintf(stderr, "does not fit: %s\n",
                result.failure ? cli_safe(c.pool, result.failure) : "no assignment returned");
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
    rc = cli_output_status();
    goto cleanup;

fail:
    rc = cli_fail(CMD, &err);
cleanup:
    cli_cluster_dispose(&cluster);
    free(text);
    topo_snapshot_free(c.snap);
    topo_strmap_free(c.by_hostname);
    topo_inventory_free(c.inv);
    topo_pool_free(c.pool);
    topo_opts_free(table, sizeof table / sizeof table[0], &f);
    return rc;
}
