/* topoassign cache sync: mirror a cluster's Nodes, Pods and Jobs into a
 * cache file with the filler (list+watch), once or until a signal
 * (docs/cache.md "The filler's rules"). */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/buf.h"
#include "topo/clock.h"
#include "topo/cache.h"
#include "topo/filler.h"
#include "topo/http.h"
#include "topo/k8s.h"
#include "topo/json.h"
#include "topo/live.h"
#include "topo/model.h"

#define CMD "cache sync"

typedef struct ctl_args {
    const char *db, *kubeconfig, *context, *kinds, *levels;
    unsigned long idle_ms, page_size; /* the table's defaults, the filler's */
    double qps, burst;
    int once, stats, verify_live;
} ctl_args;

#define O(field) offsetof(ctl_args, field)
#define D(constant) TOPO_OPT_DEFAULT(constant)

static const topo_opt table[] = {
    TOPO_CLI_CACHE_DB_ROW(db),
    TOPO_CLI_KUBECONFIG_ROWS("the cluster", kubeconfig, context),
    {"--kinds", NULL, TOPO_OPT_STRING, "LIST", 0, 0, NULL, "nodes,pods,jobs",
     "what to mirror, comma-separated", O(kinds), NULL},
    {"--once", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "stop once every kind is synced and its watch has been quiet for --idle-ms; without it, "
     "runs until SIGINT or SIGTERM",
     O(once), NULL},
    {"--idle-ms", NULL, TOPO_OPT_UINT, "N", 1, 3600000, NULL, D(TOPO_FILLER_IDLE_MS_DEFAULT),
     "with --once: the quiet time, counted in whole seconds", O(idle_ms), NULL},
    {"--page-size", NULL, TOPO_OPT_UINT, "N", 1, 10000, NULL, D(TOPO_K8S_PAGE_DEFAULT),
     "objects per list page", O(page_size), NULL},
    {"--qps", NULL, TOPO_OPT_POSITIVE, "Q", 0, 1000000, NULL, D(TOPO_HTTP_QPS_DEFAULT),
     "client-side rate limit per kind, requests per second", O(qps), NULL},
    {"--burst", NULL, TOPO_OPT_POSITIVE, "B", 0, 1000000, NULL, D(TOPO_HTTP_BURST_DEFAULT),
     "client-side burst per kind", O(burst), NULL},
    {"--stats", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "print one JSON line of figures at exit", O(stats), NULL},
    {"--verify-live", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "with --levels: also keep an in-memory live snapshot of that topology current from the "
     "events (as topo-webhook does) and, at exit, check it against a snapshot built from the "
     "cache",
     O(verify_live), NULL},
    {"--levels", NULL, TOPO_OPT_STRING, "L1,L2,...", 0, 0, NULL, NULL,
     "the topology of --verify-live, coarsest first", O(levels), NULL},
};

const cli_command cli_cache_sync = {
    "cache sync",
    "mirror a cluster's Nodes, Pods and Jobs into a topo cache file",
    "usage: topoassign cache sync --db FILE [--kubeconfig FILE] [--context NAME]\n"
    "                             [--kinds nodes,pods,jobs] [--once] [--idle-ms N]\n"
    "                             [--page-size N] [--qps Q] [--burst B] [--stats]\n"
    "                             [--verify-live --levels L1,L2,...]",
    "Mirrors the cluster's Nodes, Pods and Jobs into the cache file (created when missing): "
    "resumes each watch from where the cache stopped, else lists (paged) and replaces the "
    "kind's rows; then applies watch events in batches; lists again when the API server "
    "answers 410 Gone. Exit status: 0 done, 1 the sync failed, 2 bad input.",
    table,
    sizeof table / sizeof table[0],
    cli_cmd_cache_sync,
};

/* The walk of a snapshot over a few resources, as text (a topo_buf), to
 * compare two. */
static int walk_line(const topo_domain_view *v, void *payload)
{
    return topo_buf_printf(payload, "%zu %s nodes=%zu cap=%lld free=%lld max=%lld pods=%lld\n",
                           v->level, v->value, v->nodes, (long long)v->capacity,
                           (long long)v->free, (long long)v->max_node_free,
                           (long long)v->pods_free) != 0;
}

static int walk_all(topo_buf *w, const topo_snapshot *snap)
{
    static const char *const res[] = {"nvidia.com/gpu", "cpu", "memory", "pods"};
    for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
        if (topo_snapshot_walk(snap, res[i], walk_line, w) != 0 || w->error != 0)
            return -1;
    return 0;
}

/* The live snapshot the events built against a fresh one from the cache. */
static int verify_live(topo_live *live, const char *db, const topo_snapshot_opts *sopts,
                       topo_err *err)
{
    topo_cache *cache = NULL;
    topo_snapshot *fresh = NULL;
    /* The live snapshot holds no reservations here. */
    topo_cache_snapshot_opts co = {.snapshot = *sopts, .skip_reservations = 1};
    topo_buf a = TOPO_BUF_INIT(0), b = TOPO_BUF_INIT(0);
    int rc;

    if ((rc = topo_cache_open(&cache, db, NULL, err)) < 0 ||
        (rc = topo_cache_snapshot(&fresh, cache, &co, NULL, err)) < 0)
        goto cleanup;
    const topo_snapshot *cur = topo_live_acquire(live);
    int wa = walk_all(&a, cur);
    topo_live_release(live, cur);
    if (wa < 0 || walk_all(&b, fresh) < 0) {
        rc = topo_err_set(err, TOPO_ENOMEM, "verify: out of memory");
        goto cleanup;
    }
    if (a.len != b.len || (a.len > 0 && memcmp(a.ptr, b.ptr, a.len) != 0)) {
        size_t i = 0;
        while (i < a.len && i < b.len && a.ptr[i] == b.ptr[i])
            i++;
        size_t line = i;
        while (line > 0 && a.ptr[line - 1] != '\n')
            line--;
        rc = topo_err_set(err, TOPO_EGENERIC,
                          "verify: the live snapshot differs from the cache's at \"%.120s\" "
                          "(cache: \"%.120s\")",
                          a.ptr ? a.ptr + line : "", b.ptr ? b.ptr + line : "");
        goto cleanup;
    }
    fprintf(stderr, "topoassign %s: live snapshot consistent with the cache (%zu bytes of walk)\n",
            CMD, a.len);
    rc = 0;
cleanup:
    topo_buf_dispose(&a);
    topo_buf_dispose(&b);
    topo_snapshot_free(fresh);
    topo_cache_close(cache);
    return rc;
}

static int parse_kinds(unsigned *out, const char *text, topo_err *err)
{
    *out = 0;
    char buf[128];
    if (strlen(text) >= sizeof(buf))
        return topo_err_set(err, TOPO_EINVALID, "--kinds: too long");
    strcpy(buf, text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "nodes") == 0)
            *out |= TOPO_FILLER_NODES;
        else if (strcmp(tok, "pods") == 0)
            *out |= TOPO_FILLER_PODS;
        else if (strcmp(tok, "jobs") == 0)
            *out |= TOPO_FILLER_JOBS;
        else
            return topo_err_set(err, TOPO_EINVALID,
                                "--kinds: unknown kind \"%s\" (nodes, pods, jobs)", tok);
    }
    if (*out == 0)
        return topo_err_set(err, TOPO_EINVALID, "--kinds: empty");
    return 0;
}

static int print_stats(const topo_filler_stats *st, const char *db, double seconds)
{
    topo_cache *cache = NULL;
    topo_cache_stats cs;
    topo_cache_opts co = {.must_exist = 1};
    struct rusage ru;
    memset(&cs, 0, sizeof(cs));
    if (topo_cache_open(&cache, db, &co, NULL) == 0 &&
        topo_cache_get_stats(&cs, cache, NULL) < 0)
        memset(&cs, 0, sizeof(cs));
    topo_cache_close(cache);
    getrusage(RUSAGE_SELF, &ru);
    json_t *o = json_pack("{s:I,s:I,s:I,s:{s:I,s:I,s:I},s:I,s:I,s:I,s:I,s:I,s:f,s:I}",
                          "nodes", (json_int_t)cs.nodes, "pods", (json_int_t)cs.pods, "jobs",
                          (json_int_t)cs.jobs, "listed", "nodes", (json_int_t)st->listed[0],
                          "pods", (json_int_t)st->listed[1], "jobs", (json_int_t)st->listed[2],
                          "relists", (json_int_t)st->relists, "resumed",
                          (json_int_t)st->resumed, "events", (json_int_t)st->events, "errors",
                          (json_int_t)st->errors, "rejected", (json_int_t)st->rejected,
                          "seconds", seconds, "peak_rss_kib", (json_int_t)ru.ru_maxrss);
    if (o == NULL)
        return -1;
    char *text = topo_json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (text == NULL)
        return -1;
    printf("%s\n", text);
    free(text);
    return 0;
}

/* The filler's options from the flags (the table's defaults are the
 * filler's); a live snapshot of --levels with --verify-live. */
static int filler_opts(topo_filler_opts *o, topo_live **live, topo_snapshot_opts *sopts,
                       topo_pool **pool, const ctl_args *f, topo_err *err)
{
    if (f->db == NULL)
        return topo_err_set(err, TOPO_EINVALID, "--db: required");
    o->db_path = f->db;
    o->kubeconfig = f->kubeconfig;
    o->context = f->context;
    o->once = f->once;
    if (f->kinds != NULL && parse_kinds(&o->kinds, f->kinds, err) < 0)
        return TOPO_EINVALID;
    o->idle_ms = (long)f->idle_ms;
    o->page_size = (unsigned)f->page_size;
    o->qps = f->qps;
    o->burst = f->burst;
    if (f->verify_live) {
        const char **levels = NULL;
        if (f->levels == NULL)
            return topo_err_set(err, TOPO_EINVALID, "--verify-live: needs --levels");
        if ((*pool = topo_pool_create()) == NULL)
            return topo_err_nomem(err, NULL);
        int rc = cli_parse_levels(&levels, &sopts->nlevels, f->levels, *pool, err);
        if (rc < 0)
            return rc;
        sopts->levels = levels;
        if ((rc = topo_live_create(live, sopts, err)) < 0)
            return rc;
        o->live = *live;
    }
    return 0;
}

int cli_cmd_cache_sync(int argc, char **argv)
{
    ctl_args f;
    topo_live *live = NULL;
    topo_snapshot_opts sopts = {.topology_name = TOPO_CLI_TOPOLOGY_NAME};
    topo_pool *pool = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_filler_opts o = {0};
    topo_filler *filler = NULL;
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = cli_parse(&cli_cache_sync, argc, argv, &f)) >= 0)
        return rc;
    if (filler_opts(&o, &live, &sopts, &pool, &f, &err) < 0)
        goto bad;

    o.stop = cli_stop_on_signals();

    int64_t t0 = topo_clock_ns();
    if ((rc = topo_filler_create(&filler, &o, &err)) < 0)
        goto bad; /* configuration: kubeconfig, cache file */
    rc = topo_filler_run(filler, &err);
    int64_t t1 = topo_clock_ns();
    topo_filler_stats st;
    topo_filler_get_stats(filler, &st);
    topo_filler_free(filler);
    if (f.stats)
        print_stats(&st, o.db_path,
                    (double)(t1 - t0) / 1e9);
    if (rc == 0 && live != NULL)
        rc = verify_live(live, o.db_path, &sopts, &err);
    topo_live_free(live);
    topo_pool_free(pool);
    if (rc != 0) {
        cli_error(CMD, &err);
        return TOPO_CLI_EXIT_NOFIT; /* 1: the sync failed */
    }
    return fflush(stdout) == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_NOFIT;
bad:
    cli_error(CMD, &err);
    topo_live_free(live);
    topo_pool_free(pool);
    return TOPO_CLI_EXIT_BADINPUT;
}
