/* The option parsing of every command, and input loading shared by assign
 * and show. */
#define _POSIX_C_SOURCE 200809L
#include "cli_common.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "topo/buf.h"
#include "topo/array.h"
#include "topo/cache.h"
#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/limits.h"
#include "topo/quantity.h"
#include "topo/utf8.h"

/* Set once by main before any command runs (as getprogname() would be). */
static const char *program = "topoassign";

void cli_set_program(const char *name)
{
    program = name;
}

const char *cli_program(void)
{
    return program;
}

/* Set by on_signal: C11 lets a signal handler store to a lock-free atomic
 * (7.14.1.1), and the threads reading it need an atomic anyway. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");
static atomic_int stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

const atomic_int *cli_stop_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &stop_requested;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, void *args)
{
    return cli_parse_given(cmd, argc, argv, args, NULL);
}

int cli_parse_given(const cli_command *cmd, int argc, char **argv, void *args,
                         unsigned char *given)
{
    char why[512];
    topo_opts_defaults(cmd->opts, cmd->nopts, args);
    int rc = topo_opts_parse_given(cmd->opts, cmd->nopts, argc, argv, args, given, why,
                                   sizeof why);
    if (rc == 1) {
        topo_buf b = TOPO_BUF_INIT(0);
        topo_opts_help_intro(cmd->opts, cmd->nopts, cmd->usage, cmd->intro, &b);
        char *text = topo_buf_take(&b, NULL);
        if (text == NULL) {
            fprintf(stderr, "%s %s: out of memory\n", program, cmd->name);
            return TOPO_CLI_EXIT_BADINPUT;
        }
        fputs(text, stdout);
        free(text);
        return cli_output_status();
    }
    if (rc != 0) {
        fprintf(stderr, "%s %s: %s (see '%s %s --help')\n", program, cmd->name, why, program,
                cmd->name);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    return -1;
}

void cli_input_from_args(cli_input *in, cli_topology_flags *flags,
                              const cli_input_args *a, cli_cluster *cluster)
{
    *in = (cli_input){.nodes = a->nodes.v,
                           .nnodes = a->nodes.n,
                           .pods = a->pods,
                           .db = a->db,
                           .live = a->live || a->kubeconfig != NULL || a->context != NULL,
                           .kubeconfig = a->kubeconfig,
                           .context = a->context,
                           .cluster = cluster};
    *flags = (cli_topology_flags){a->levels, a->topology, a->node_labels.v,
                                       a->node_labels.n, a->topology_name};
}

int cli_level_index(const char *const *levels, size_t n, const char *level)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(levels[i], level) == 0)
            return (int)i;
    return -1;
}

int cli_parse_levels(const char ***out, size_t *out_n, const char *text, topo_pool *pool,
                          topo_err *err)
{
    int rc = topo_kueue_levels_parse(out, out_n, text, pool, err);
    return rc == TOPO_EINVALID ? topo_err_wrap(err, "--levels") : rc;
}

int cli_parse_requests(topo_resource **out, size_t *out_n, const char *text,
                            topo_pool *pool, topo_err *err)
{
    topo_resource *res;
    size_t n = 1, k = 0;
    const char *p = text;

    *out = NULL;
    *out_n = 0;
    for (const char *c = text; *c; c++)
        n += *c == ',';
    if ((res = topo_pool_calloc(pool, n, sizeof(*res))) == NULL)
        return topo_err_nomem(err, NULL);
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        char *item = topo_pool_strndup(pool, p, len);
        if (item == NULL)
            return topo_err_nomem(err, NULL);
        char *eq = strchr(item, '=');
        if (eq == NULL || eq == item || eq[1] == '\0')
            return topo_err_set(err, TOPO_EINVALID,
                                "--request: expected NAME=QUANTITY, got \"%s\"", item);
        *eq = '\0';
        for (size_t i = 0; i < k; i++)
            if (strcmp(res[i].name, item) == 0)
                return topo_err_set(err, TOPO_EINVALID, "--request: %s given twice", item);
        topo_err qerr = TOPO_ERR_INIT;
        if (topo_quantity_parse_resource(&res[k].amount, item, eq + 1, &qerr) < 0)
            return topo_err_set(err, TOPO_EINVALID, "--request: %s: invalid quantity \"%s\"",
                                item, eq + 1);
        if (res[k].amount < 0)
            return topo_err_set(err, TOPO_EINVALID, "--request: %s: must not be negative", item);
        res[k].name = item;
        k++;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    *out = res;
    *out_n = k;
    return 0;
}

int cli_parse_labels(topo_kv **out, size_t *out_n, const char *const *items, size_t n,
                          topo_pool *pool, topo_err *err)
{
    topo_kv *kv = NULL;
    *out = NULL;
    *out_n = 0;
    if (n == 0)
        return 0;
    if ((kv = topo_pool_calloc(pool, n, sizeof(*kv))) == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < n; i++) {
        char *item = topo_pool_strdup(pool, items[i]);
        if (item == NULL)
            return topo_err_nomem(err, NULL);
        char *eq = strchr(item, '=');
        if (eq == NULL || eq == item)
            return topo_err_set(err, TOPO_EINVALID, "--node-label: expected KEY=VALUE, got \"%s\"",
                                items[i]);
        *eq = '\0';
        char why[512];
        if (!topo_label_key_valid(item, why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID,
                                "--node-label: \"%s\" is not a valid label key: %s", item, why);
        if (!topo_label_value_valid(eq + 1, why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID,
                                "--node-label: %s: \"%s\" is not a valid label value: %s", item,
                                eq + 1, why);
        kv[i].key = item;
        kv[i].value = eq + 1;
    }
    *out = kv;
    *out_n = n;
    return 0;
}

int cli_load_inventory(topo_inventory **out, const char *const *nodes, size_t nnodes,
                            const char *pods, topo_err *err)
{
    topo_inventory *inv = NULL;
    int error;

    *out = NULL;
    if ((error = topo_inventory_create(&inv, err)) < 0)
        goto cleanup;
    for (size_t i = 0; i < nnodes; i++)
        if ((error = topo_inventory_load_nodes_file(inv, nodes[i], err)) < 0)
            goto cleanup;
    if (pods != NULL && (error = topo_inventory_load_pods_file(inv, pods, err)) < 0)
        goto cleanup;
    *out = inv;
    inv = NULL;

cleanup:
    topo_inventory_free(inv);
    return error;
}

int cli_parse_gates(topo_gates *gates, const char *const *items, size_t n, topo_pool *pool,
                         topo_err *err)
{
    topo_gates_init(gates);
    for (size_t i = 0; i < n; i++) {
        char *name = topo_pool_strdup(pool, items[i]);
        char *eq = name ? strchr(name, '=') : NULL;
        if (name == NULL)
            return topo_err_nomem(err, NULL);
        if (eq == NULL || (strcmp(eq + 1, "true") != 0 && strcmp(eq + 1, "false") != 0))
            return topo_err_set(err, TOPO_EINVALID, "--gate: expected NAME=true|false, got \"%s\"",
                                items[i]);
        *eq = '\0';
        if (topo_gates_set(gates, name, strcmp(eq + 1, "true") == 0, err) < 0)
            return topo_err_wrap(err, "--gate");
    }
    return 0;
}

const char *cli_level_short(const char *level)
{
    const char *slash = strrchr(level, '/');
    return slash != NULL ? slash + 1 : level;
}

/* Errors carry text from the cluster (names, labels, a ConfigMap's
 * config): printed escaped (topo_utf8_escape_controls), whole. */
void cli_error(const char *cmd, const topo_err *err)
{
    static char safe[4 * TOPO_ERR_TEXT_MAX + 1];
    topo_utf8_escape_controls(safe, sizeof safe,
                              err->text[0] ? err->text : topo_strerror(err->code));
    fprintf(stderr, "%s %s: %s\n", program, cmd, safe);
}

int cli_fail(const char *cmd, const topo_err *err)
{
    cli_error(cmd, err);
    return TOPO_CLI_EXIT_BADINPUT;
}

int cli_output_status(void)
{
    return fflush(stdout) == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_BADINPUT;
}

void cli_warn(const char *fmt, ...)
{
    char text[TOPO_ERR_TEXT_MAX];
    static char safe[4 * TOPO_ERR_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    topo_utf8_escape_controls(safe, sizeof safe, text);
    fprintf(stderr, "%s: warning: %s\n", program, safe);
}

const char *cli_safe(topo_pool *pool, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = topo_utf8_escape_controls(NULL, 0, s);
    if (n == strlen(s)) /* escapes only ever lengthen */
        return s;
    char *out = topo_pool_alloc(pool, n + 1);
    if (out == NULL)
        return "(out of memory)";
    topo_utf8_escape_controls(out, n + 1, s);
    return out;
}

/* The levels and nodes of the live cluster's topology (cli_live_levels),
 * --node-label and --topology-name still winning; one line on stderr says
 * where they came from (stdout stays the answer). */
static int live_topology(topo_inventory_snapshot_opts *opts, const cli_input *in,
                         const cli_topology_flags *flags, topo_pool *pool, topo_err *err)
{
    cli_found_levels found;
    topo_buf line = TOPO_BUF_INIT(0);
    int rc = cli_live_levels(&found, in, flags->topology, pool, err);
    if (rc < 0)
        return rc;
    opts->snapshot.levels = found.levels;
    opts->snapshot.nlevels = found.nlevels;
    if (flags->nlabels == 0) {
        opts->snapshot.flavor_labels = found.node_labels;
        opts->snapshot.nflavor_labels = found.nnode_labels;
    }
    if (flags->topology_name == NULL)
        opts->snapshot.topology_name = found.topology;
    topo_buf_printf(&line, "levels from %s", found.where);
    for (size_t i = 0; i < found.nlevels; i++)
        topo_buf_printf(&line, "%s%s", i ? "," : ": ", found.levels[i]);
    for (size_t i = 0; flags->nlabels == 0 && i < found.nnode_labels; i++)
        topo_buf_printf(&line, "%s%s=%s", i ? "," : " (nodes with ", found.node_labels[i].key,
                        found.node_labels[i].value);
    if (flags->nlabels == 0 && found.nnode_labels > 0)
        topo_buf_putc(&line, ')');
    if (line.error != 0 || line.ptr == NULL) {
        topo_buf_dispose(&line);
        return topo_err_nomem(err, NULL);
    }
    fprintf(stderr, "%s\n", cli_safe(pool, line.ptr));
    topo_buf_dispose(&line);
    return 0;
}

int cli_topology_opts(topo_inventory_snapshot_opts *opts, const cli_input *in,
                           const cli_topology_flags *flags, topo_pool *pool, topo_err *err)
{
    const char **levels = NULL;
    size_t nlevels = 0, nflavor = 0;
    topo_kv *flavor = NULL;
    if (in->live && in->nnodes > 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "--nodes cannot be combined with the live cluster (--live, "
                            "--kubeconfig, --context, kubectl topo): it is read from the API "
                            "server");
    if (in->live && in->db != NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "--db cannot be combined with the live cluster (--live, "
                            "--kubeconfig, --context, kubectl topo): it is read from the API "
                            "server");
    if (in->db != NULL && in->nnodes > 0)
        return topo_err_set(err, TOPO_EINVALID, "--db and --nodes are mutually exclusive");
    if ((in->db != NULL || in->live) && in->pods != NULL)
        return topo_err_set(err, TOPO_EINVALID, "--pods cannot be combined with %s",
                            in->db != NULL ? "--db (the cache holds the pods)"
                                           : "the live cluster (its pods are listed)");
    if (in->nnodes == 0 && in->db == NULL && !in->live)
        return topo_err_set(err, TOPO_EINVALID,
                            "--nodes: required (kubectl get nodes -o json, or a fixture), or "
                            "--db FILE (a topo cache), or --live (the cluster now)");
    if (flags->topology != NULL && flags->levels != NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "--topology and --levels are mutually exclusive (--topology picks "
                            "the levels of one of the cluster's topologies)");
    if (flags->topology != NULL && !in->live)
        return topo_err_set(err, TOPO_EINVALID,
                            "--topology: only with the live cluster (--live, --kubeconfig, "
                            "--context, kubectl topo); a file has no topologies: give --levels");
    if (flags->levels == NULL && !in->live)
        return topo_err_set(err, TOPO_EINVALID, "--levels: required, e.g. --levels "
                                                "topology.topo.io/rack,kubernetes.io/hostname");
    if (cli_parse_labels(&flavor, &nflavor, flags->labels, flags->nlabels, pool, err) < 0)
        return err ? err->code : TOPO_EINVALID;
    opts->snapshot.topology_name =
        flags->topology_name ? flags->topology_name : TOPO_CLI_TOPOLOGY_NAME;
    opts->snapshot.flavor_labels = flavor;
    opts->snapshot.nflavor_labels = nflavor;
    if (flags->levels == NULL)
        return live_topology(opts, in, flags, pool, err);
    if (cli_parse_levels(&levels, &nlevels, flags->levels, pool, err) < 0)
        return err ? err->code : TOPO_EINVALID;
    opts->snapshot.levels = levels;
    opts->snapshot.nlevels = nlevels;
    return 0;
}

/* --- --db --------------------------------------------------------------------------------- */

typedef struct node_list {
    topo_node_spec *v;
    size_t n, cap;
    topo_pool *pool;
    topo_err *err;
} node_list;

static char *dup_or_null(topo_pool *pool, const char *s, int *oom)
{
    char *d = s != NULL ? topo_pool_strdup(pool, s) : NULL;
    if (s != NULL && d == NULL)
        *oom = 1;
    return d;
}

/* Deep copy: the cache lends the strings for the call only. */
static int keep_node(const topo_node_spec *n, const char *rv, void *payload)
{
    node_list *l = payload;
    topo_node_spec *c;
    topo_kv *labels = NULL;
    topo_resource *alloc = NULL;
    topo_taint *taints = NULL;
    int oom = 0;
    (void)rv;

    int rc = topo_pool_array_reserve(l->pool, (void **)&l->v, &l->cap, l->n, l->n + 1,
                                     sizeof(*l->v));
    if (rc != 0)
        return topo_err_set(l->err, rc, "%s", topo_strerror(rc));
    c = &l->v[l->n];
    *c = *n;
    if ((n->nlabels && !(labels = topo_pool_calloc(l->pool, n->nlabels, sizeof(*labels)))) ||
        (n->nallocatable &&
         !(alloc = topo_pool_calloc(l->pool, n->nallocatable, sizeof(*alloc)))) ||
        (n->ntaints && !(taints = topo_pool_calloc(l->pool, n->ntaints, sizeof(*taints)))))
        return topo_err_nomem(l->err, NULL);
    c->name = dup_or_null(l->pool, n->name, &oom);
    for (size_t i = 0; i < n->nlabels; i++) {
        labels[i].key = dup_or_null(l->pool, n->labels[i].key, &oom);
        labels[i].value = dup_or_null(l->pool, n->labels[i].value, &oom);
    }
    for (size_t i = 0; i < n->nallocatable; i++) {
        alloc[i].name = dup_or_null(l->pool, n->allocatable[i].name, &oom);
        alloc[i].amount = n->allocatable[i].amount;
    }
    for (size_t i = 0; i < n->ntaints; i++) {
        taints[i].key = dup_or_null(l->pool, n->taints[i].key, &oom);
        taints[i].value = dup_or_null(l->pool, n->taints[i].value, &oom);
        taints[i].effect = dup_or_null(l->pool, n->taints[i].effect, &oom);
    }
    if (oom)
        return topo_err_nomem(l->err, NULL);
    c->labels = labels;
    c->allocatable = alloc;
    c->taints = taints;
    l->n++;
    return 0;
}

int cli_load_db(topo_snapshot **out_snap, cli_nodes *out_nodes, const char *db,
                     const topo_inventory_snapshot_opts *opts, size_t *out_ignored,
                     topo_pool *pool, topo_err *err)
{
    /* A reader: a missing file is an error, not a new cache, and it never
     * writes (no schema into an empty file). */
    topo_cache_opts copts = {.must_exist = 1, .read_only = 1};
    topo_cache_snapshot_opts sopts = {0};
    topo_cache *cache = NULL;
    node_list l = {NULL, 0, 0, pool, err};
    int error, reading = 0;

    sopts.snapshot = opts->snapshot;
    sopts.skip_tas_pods = opts->skip_tas_pods;
    sopts.now = (int64_t)time(NULL);
    if ((error = topo_cache_open(&cache, db, &copts, err)) < 0 ||
        (error = topo_cache_read_begin(cache, err)) < 0)
        goto cleanup;
    reading = 1;
    /* The node list and the snapshot come from the same read. */
    if ((error = topo_cache_foreach_node(cache, keep_node, &l, err)) < 0 ||
        (error = topo_cache_snapshot(out_snap, cache, &sopts, out_ignored, err)) < 0)
        goto cleanup;
    out_nodes->v = l.v;
    out_nodes->n = l.n;

cleanup:
    if (reading)
        topo_cache_read_end(cache);
    topo_cache_close(cache);
    return error;
}

int cli_load_snapshot(topo_inventory **out_inv, topo_snapshot **out_snap,
                           cli_nodes *out_nodes, const cli_input *in,
                           const topo_inventory_snapshot_opts *opts, size_t *out_ignored,
                           topo_pool *pool, topo_err *err)
{
    topo_node_spec *v = NULL;
    size_t n;
    int rc;

    *out_inv = NULL;
    *out_snap = NULL;
    out_nodes->v = NULL;
    out_nodes->n = 0;
    if (in->live)
        return cli_load_live(out_snap, out_nodes, in, opts, out_ignored, pool, err);
    if (in->db != NULL)
        return cli_load_db(out_snap, out_nodes, in->db, opts, out_ignored, pool, err);
    if ((rc = cli_load_inventory(out_inv, in->nodes, in->nnodes, in->pods, err)) < 0)
        return rc;
    n = topo_inventory_node_count(*out_inv);
    if (n > 0 && (v = topo_pool_calloc(pool, n, sizeof(*v))) == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = *topo_inventory_node(*out_inv, i);
    out_nodes->v = v;
    out_nodes->n = n;
    return topo_inventory_snapshot(out_snap, *out_inv, opts, out_ignored, err);
}
