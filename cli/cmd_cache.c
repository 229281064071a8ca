/* topoassign cache: make and inspect topo cache files (tests, demos, and
 * `assign --db` / `show --db` without a cluster; docs/cache.md). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/cache.h"

#define CMD "cache"

static const char usage_text[] =
    "usage: topoassign cache import --db FILE [--nodes FILE ...] [--pods FILE ...] "
    "[--jobs FILE ...]\n"
    "       topoassign cache stats --db FILE\n"
    "       topoassign cache sync --db FILE [--kubeconfig FILE] [--once] ...\n"
    "'topoassign cache <import|stats|sync> --help' describes each.\n";

typedef struct cache_args {
    const char *db;
    topo_opt_list nodes, pods, jobs;
} cache_args;

#define O(field) offsetof(cache_args, field)

static const topo_opt import_opts[] = {
    TOPO_CLI_CACHE_DB_ROW(db),
    {"--nodes", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL, NULL,
     "kubectl get nodes -o json|yaml (a NodeList, a List or one Node), or a fixture YAML "
     "(its nodes, and its pods as uid fixture-NAME-I)",
     O(nodes), NULL},
    {"--pods", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL, NULL,
     "kubectl get pods -A -o json|yaml, or a fixture's pods", O(pods), NULL},
    {"--jobs", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL, NULL, "kubectl get jobs -A -o json|yaml",
     O(jobs), NULL},
};

static const topo_opt stats_opts[] = {
    {"--db", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL, "the cache file, required", O(db),
     "Options:"},
};

static int cmd_import(int argc, char **argv);
static int cmd_stats(int argc, char **argv);
static int cmd_cache(int argc, char **argv);

const cli_command cli_cache = {
    "cache", "topo cache files: import objects, stats, sync a cluster", usage_text, NULL, NULL, 0,
    cmd_cache,
};

const cli_command cli_cache_import = {
    "cache import",
    "load Kubernetes objects into a topo cache file",
    "usage: topoassign cache import --db FILE [--nodes FILE ...] [--pods FILE ...] "
    "[--jobs FILE ...]",
    "Loads Kubernetes objects into a topo cache file (created when missing; objects already "
    "there are updated), in one transaction. Exit status: 0 done, 2 bad input.",
    import_opts,
    sizeof import_opts / sizeof import_opts[0],
    cmd_import,
};

const cli_command cli_cache_stats = {
    "cache stats",
    "print a topo cache file's schema version and rows",
    "usage: topoassign cache stats --db FILE",
    "Prints the schema version and the rows the cache holds. Exit status: 0 done, 2 bad input.",
    stats_opts,
    sizeof stats_opts / sizeof stats_opts[0],
    cmd_stats,
};

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

static int import(const cache_args *f, topo_err *err)
{
    static const topo_cache_kind kinds[] = {TOPO_CACHE_NODES, TOPO_CACHE_PODS, TOPO_CACHE_JOBS};
    const topo_opt_list *files[] = {&f->nodes, &f->pods, &f->jobs};
    topo_cache *cache = NULL;
    counts n = {0, 0, 0};
    int error;

    if (f->nodes.n + f->pods.n + f->jobs.n == 0)
        return topo_err_set(err, TOPO_EINVALID, "import: give --nodes, --pods or --jobs");
    if ((error = topo_cache_open(&cache, f->db, NULL, err)) < 0 ||
        (error = topo_cache_begin(cache, err)) < 0)
        goto cleanup;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < files[k]->n; i++)
            if ((error = import_file(cache, kinds[k], files[k]->v[i], &n, err)) < 0)
                goto cleanup;
    if ((error = topo_cache_commit(cache, err)) < 0)
        goto cleanup;
    printf("imported %zu node%s, %zu pod%s, %zu job%s into %s\n", n.nodes, n.nodes == 1 ? "" : "s",
           n.pods, n.pods == 1 ? "" : "s", n.jobs, n.jobs == 1 ? "" : "s", f->db);

cleanup:
    topo_cache_close(cache); /* rolls back a batch left open by an error */
    return error;
}

static int stats(const cache_args *f, topo_err *err)
{
    topo_cache_opts opts = {.must_exist = 1, .read_only = 1};
    topo_cache *cache = NULL;
    topo_cache_stats s;
    char rv[3][128];
    int error;

    if ((error = topo_cache_open(&cache, f->db, &opts, err)) < 0 ||
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
    printf("%s: schema version %d\n", f->db, topo_cache_schema_version(cache));
    printf("nodes         %zu (watch at %s)\n", s.nodes, rv[TOPO_CACHE_NODES]);
    printf("pods          %zu (watch at %s)\n", s.pods, rv[TOPO_CACHE_PODS]);
    printf("jobs          %zu (watch at %s)\n", s.jobs, rv[TOPO_CACHE_JOBS]);
    printf("reservations  %zu (%zu slots, %zu claimed)\n", s.reservations, s.slots,
           s.claimed_slots);

cleanup:
    topo_cache_close(cache);
    return error;
}

/* import or stats: parse, check --db, run. */
static int run(const cli_command *cmd, int (*fn)(const cache_args *, topo_err *), int argc,
               char **argv)
{
    cache_args f;
    topo_err err = TOPO_ERR_INIT;
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = cli_parse(cmd, argc, argv, &f)) < 0) {
        if (f.db == NULL) {
            fprintf(stderr, "topoassign %s: --db: required\n", cmd->name);
            rc = TOPO_CLI_EXIT_BADINPUT;
        } else if (fn(&f, &err) < 0) {
            rc = cli_fail(CMD, &err);
        } else {
            rc = cli_output_status();
        }
    }
    topo_opts_free(cmd->opts, cmd->nopts, &f);
    return rc;
}

static int cmd_import(int argc, char **argv)
{
    return run(&cli_cache_import, import, argc, argv);
}

static int cmd_stats(int argc, char **argv)
{
    return run(&cli_cache_stats, stats, argc, argv);
}

static int cmd_cache(int argc, char **argv)
{
    static const cli_command *const subs[] = {&cli_cache_import,
                                                   &cli_cache_stats, &cli_cache_sync};
    const char *sub = argc > 1 ? argv[1] : NULL;

    if (sub == NULL || strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
        fputs(usage_text, sub == NULL ? stderr : stdout);
        return sub == NULL ? TOPO_CLI_EXIT_BADINPUT : TOPO_CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(sub, subs[i]->name + strlen("cache ")) == 0)
            return subs[i]->run(argc - 1, argv + 1);
    fprintf(stderr, "topoassign cache: unknown subcommand '%s' (import, stats, sync)\n", sub);
    return TOPO_CLI_EXIT_BADINPUT;
}
