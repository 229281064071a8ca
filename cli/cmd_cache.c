/* topoassign cache: make and inspect topo cache files (tests, demos, and
 * `assign --db` / `show --db` without a cluster). */
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/cache.h"

#define CMD "cache"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: topoassign cache import --db FILE [--nodes FILE ...] [--pods FILE ...]\n"
            "                               [--jobs FILE ...]\n"
            "       topoassign cache stats --db FILE\n"
            "       topoassign cache sync --db FILE [--kubeconfig FILE] [--once] ...\n"
            "                               (see 'topoassign cache sync --help')\n"
            "import   loads Kubernetes objects into a topo cache file (created when missing;\n"
            "         objects already there are updated), in one transaction:\n"
            "  --db FILE     the cache file\n"
            "  --nodes FILE  kubectl get nodes -o json|yaml (a NodeList, a List or one Node),\n"
            "                or a fixture YAML (its nodes, and its pods as uid fixture-NAME-I)\n"
            "  --pods FILE   kubectl get pods -A -o json|yaml, or a fixture's pods\n"
            "  --jobs FILE   kubectl get jobs -A -o json|yaml\n"
            "stats    prints the schema version and the rows the cache holds\n"
            "exit status: 0 done, 2 bad input\n");
}

enum { F_DB, F_NODES, F_PODS, F_JOBS, F_NFLAGS };

typedef struct counts {
    size_t nodes, pods, jobs;
} counts;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* A fixture document through lib/inventory: its nodes (when nodes) and the
 * pods it charges, under uids made from the file name. */
static int import_fixture(topo_cache *cache, const char *path, int nodes, counts *n,
                          topo_err *err)
{
    topo_inventory *inv = NULL;
    char uid[256];
    int error;

    if ((error = topo_inventory_create(&inv, err)) < 0)
        return error;
    if ((error = nodes ? topo_inventory_load_nodes_file(inv, path, err)
                       : topo_inventory_load_pods_file(inv, path, err)) < 0)
        goto cleanup;
    for (size_t i = 0; nodes && i < topo_inventory_node_count(inv); i++) {
        if ((error = topo_cache_put_node(cache, topo_inventory_node(inv, i), NULL, err)) < 0)
            goto cleanup;
        n->nodes++;
    }
    size_t k = 0;
    for (int tas = 0; tas < 2; tas++) {
        size_t np = tas ? topo_inventory_tas_pod_count(inv) : topo_inventory_pod_count(inv);
        for (size_t i = 0; i < np; i++, k++) {
            const topo_pod_usage *u = tas ? topo_inventory_tas_pod(inv, i)
                                          : topo_inventory_pod(inv, i);
            topo_cache_pod p;
            memset(&p, 0, sizeof(p));
            snprintf(uid, sizeof(uid), "fixture-%s-%zu", base_name(path), k);
            p.uid = uid;
            p.namespace_name = u->namespace_name;
            p.name = u->name;
            p.node_name = u->node;
            p.phase = "Running"; /* the inventory keeps bound, non-terminal pods only */
            p.requests = u->requests;
            p.nrequests = u->nrequests;
            p.tas = u->tas;
            if ((error = topo_cache_put_pod(cache, &p, err)) < 0)
                goto cleanup;
            n->pods++;
        }
    }

cleanup:
    topo_inventory_free(inv);
    return error;
}

static int import_file(topo_cache *cache, topo_cache_kind kind, const char *path, counts *n,
                       topo_err *err)
{
    size_t k = 0;
    int error = topo_cache_upsert_list_file(cache, kind, path, &k, err);
    if (error == TOPO_EUNSUPPORTED && kind != TOPO_CACHE_JOBS) {
        topo_err_clear(err);
        return import_fixture(cache, path, kind == TOPO_CACHE_NODES, n, err);
    }
    if (error < 0)
        return error;
    if (kind == TOPO_CACHE_NODES)
        n->nodes += k;
    else if (kind == TOPO_CACHE_PODS)
        n->pods += k;
    else
        n->jobs += k;
    return 0;
}

static int cmd_import(topo_cli_flag *f, topo_err *err)
{
    static const topo_cache_kind kinds[] = {TOPO_CACHE_NODES, TOPO_CACHE_PODS, TOPO_CACHE_JOBS};
    topo_cache *cache = NULL;
    counts n = {0, 0, 0};
    int error;

    if (f[F_NODES].n + f[F_PODS].n + f[F_JOBS].n == 0)
        return topo_err_set(err, TOPO_EINVALID, "import: give --nodes, --pods or --jobs");
    if ((error = topo_cache_open(&cache, f[F_DB].values[0], NULL, err)) < 0 ||
        (error = topo_cache_begin(cache, err)) < 0)
        goto cleanup;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < f[F_NODES + k].n; i++)
            if ((error = import_file(cache, kinds[k], f[F_NODES + k].values[i], &n, err)) < 0)
                goto cleanup;
    if ((error = topo_cache_commit(cache, err)) < 0)
        goto cleanup;
    printf("imported %zu node%s, %zu pod%s, %zu job%s into %s\n", n.nodes, n.nodes == 1 ? "" : "s",
           n.pods, n.pods == 1 ? "" : "s", n.jobs, n.jobs == 1 ? "" : "s", f[F_DB].values[0]);

cleanup:
    topo_cache_close(cache); /* rolls back a batch left open by an error */
    return error;
}

static int cmd_stats(topo_cli_flag *f, topo_err *err)
{
    topo_cache_opts opts = {.must_exist = 1, .read_only = 1};
    topo_cache *cache = NULL;
    topo_cache_stats s;
    char rv[3][128];
    int error;

    if (f[F_NODES].n + f[F_PODS].n + f[F_JOBS].n > 0)
        return topo_err_set(err, TOPO_EINVALID, "stats: takes --db only");
    if ((error = topo_cache_open(&cache, f[F_DB].values[0], &opts, err)) < 0 ||
        (error = topo_cache_get_stats(&s, cache, err)) < 0)
        goto cleanup;
    for (int k = 0; k < 3; k++) {
        error = topo_cache_get_watch_rv(cache, (topo_cache_kind)k, rv[k], sizeof(rv[k]), err);
        if (error == TOPO_ENOTFOUND || error == TOPO_ELIMIT) {
            snprintf(rv[k], sizeof(rv[k]), "-");
            topo_err_clear(err);
            error = 0;
        }
        if (error < 0)
            goto cleanup;
    }
    printf("%s: schema version %d\n", f[F_DB].values[0], topo_cache_schema_version(cache));
    printf("nodes         %zu (watch at %s)\n", s.nodes, rv[TOPO_CACHE_NODES]);
    printf("pods          %zu (watch at %s)\n", s.pods, rv[TOPO_CACHE_PODS]);
    printf("jobs          %zu (watch at %s)\n", s.jobs, rv[TOPO_CACHE_JOBS]);
    printf("reservations  %zu (%zu slots, %zu claimed)\n", s.reservations, s.slots,
           s.claimed_slots);

cleanup:
    topo_cache_close(cache);
    return error;
}

int topo_cli_cmd_cache(int argc, char **argv)
{
    topo_cli_flag f[F_NFLAGS] = {
        [F_DB] = {"--db", 1, 0, NULL, {0}, 0},
        [F_NODES] = {"--nodes", 1, 1, NULL, {0}, 0},
        [F_PODS] = {"--pods", 1, 1, NULL, {0}, 0},
        [F_JOBS] = {"--jobs", 1, 1, NULL, {0}, 0},
    };
    topo_err err = TOPO_ERR_INIT;
    const char *sub = argc > 1 ? argv[1] : NULL;
    int help = 0, error;

    if (sub == NULL || strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
        usage(sub == NULL ? stderr : stdout);
        return sub == NULL ? TOPO_CLI_EXIT_BADINPUT : TOPO_CLI_EXIT_OK;
    }
    if (strcmp(sub, "sync") == 0)
        return topo_cli_cmd_cache_sync(argc - 1, argv + 1);
    if (strcmp(sub, "import") != 0 && strcmp(sub, "stats") != 0) {
        fprintf(stderr, "topoassign cache: unknown subcommand '%s' (import, stats, sync)\n", sub);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (topo_cli_parse_flags(f, F_NFLAGS, argc - 1, argv + 1, &help, &err) < 0) {
        fprintf(stderr, "topoassign cache %s: %s (see 'topoassign cache --help')\n", sub,
                err.text);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (help) {
        usage(stdout);
        return TOPO_CLI_EXIT_OK;
    }
    if (f[F_DB].n == 0) {
        fprintf(stderr, "topoassign cache %s: --db: required\n", sub);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    error = strcmp(sub, "import") == 0 ? cmd_import(f, &err) : cmd_stats(f, &err);
    if (error < 0) {
        topo_cli_error(CMD, &err);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    return fflush(stdout) == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_BADINPUT;
}
