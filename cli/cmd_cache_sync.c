/* topoassign cache sync: mirror a cluster's Nodes, Pods and Jobs into a
 * cache file with the filler (list+watch), once or until a signal. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/buf.h"
#include "topo/cache.h"
#include "topo/filler.h"
#include "topo/json.h"
#include "topo/live.h"
#include "topo/model.h"

#define CMD "cache sync"

/* Set by on_signal: C11 lets a signal handler store to a lock-free atomic
 * (7.14.1.1), and the threads reading it need an atomic anyway. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");
static atomic_int stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: topoassign cache sync --db FILE [--kubeconfig FILE] [--kinds nodes,pods,jobs]\n"
            "                             [--once] [--idle-ms N] [--page-size N] [--qps Q]\n"
            "                             [--burst B] [--stats]\n"
            "Mirrors the cluster's Nodes, Pods and Jobs into the cache file (created when\n"
            "missing): resumes each watch from where the cache stopped, else lists (paged)\n"
            "and replaces the kind's rows; then applies watch events in batches; lists\n"
            "again when the API server answers 410 Gone.\n"
            "  --db FILE         the cache file\n"
            "  --kubeconfig FILE the cluster (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
            "  --kinds LIST      what to mirror (default nodes,pods,jobs)\n"
            "  --once            stop once every kind is synced and its watch has been quiet\n"
            "                    for --idle-ms (default 500, counted in whole seconds);\n"
            "                    without it, runs until SIGINT or SIGTERM\n"
            "  --page-size N     objects per list page (default 500)\n"
            "  --qps Q, --burst B  client-side rate limit per kind (default 50, 100)\n"
            "  --stats           print one JSON line of figures at exit\n"
            "  --verify-live --levels L1,L2,...\n"
            "                    also keep an in-memory live snapshot of that topology\n"
            "                    current from the events (as topo-webhook does) and, at\n"
            "                    exit, check it against a snapshot built from the cache\n"
            "exit status: 0 done, 1 the sync failed, 2 bad input\n");
}

enum {
    F_DB,
    F_KUBECONFIG,
    F_KINDS,
    F_ONCE,
    F_IDLE,
    F_PAGE,
    F_QPS,
    F_BURST,
    F_STATS,
    F_VERIFY,
    F_LEVELS,
    F_N
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
    topo_cache_snapshot_opts co = TOPO_CACHE_SNAPSHOT_OPTS_INIT;
    topo_buf a = TOPO_BUF_INIT(0), b = TOPO_BUF_INIT(0);
    int rc;

    co.snapshot = *sopts;
    co.charge_reservations = 0; /* the live snapshot holds none here */
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

static int parse_double(double *out, const char *text, const char *flag, topo_err *err)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0) || v > 1e6)
        return topo_err_set(err, TOPO_EINVALID, "%s: expected a positive number, got \"%s\"",
                            flag, text);
    *out = v;
    return 0;
}

static int print_stats(const topo_filler_stats *st, const char *db, double seconds)
{
    topo_cache *cache = NULL;
    topo_cache_stats cs;
    topo_cache_opts co = TOPO_CACHE_OPTS_INIT;
    struct rusage ru;
    co.create = 0;
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

int topo_cli_cmd_cache_sync(int argc, char **argv)
{
    topo_cli_flag f[F_N] = {
        [F_DB] = {"--db", 1, 0, NULL, {0}, 0},
        [F_KUBECONFIG] = {"--kubeconfig", 1, 0, NULL, {0}, 0},
        [F_KINDS] = {"--kinds", 1, 0, NULL, {0}, 0},
        [F_ONCE] = {"--once", 0, 0, NULL, {0}, 0},
        [F_IDLE] = {"--idle-ms", 1, 0, NULL, {0}, 0},
        [F_PAGE] = {"--page-size", 1, 0, NULL, {0}, 0},
        [F_QPS] = {"--qps", 1, 0, NULL, {0}, 0},
        [F_BURST] = {"--burst", 1, 0, NULL, {0}, 0},
        [F_STATS] = {"--stats", 0, 0, NULL, {0}, 0},
        [F_VERIFY] = {"--verify-live", 0, 0, NULL, {0}, 0},
        [F_LEVELS] = {"--levels", 1, 0, NULL, {0}, 0},
    };
    topo_live *live = NULL;
    topo_snapshot_opts sopts = {"default", NULL, 0, NULL, 0};
    topo_pool *pool = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_filler_opts o = TOPO_FILLER_OPTS_INIT;
    topo_filler *filler = NULL;
    int help = 0, rc;
    int64_t v;

    if (topo_cli_parse_flags(f, F_N, argc, argv, &help, &err) < 0) {
        fprintf(stderr, "topoassign %s: %s (see 'topoassign cache sync --help')\n", CMD, err.text);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (help) {
        usage(stdout);
        return TOPO_CLI_EXIT_OK;
    }
    if (f[F_DB].n == 0) {
        topo_err_set(&err, TOPO_EINVALID, "--db: required");
        goto bad;
    }
    o.db_path = f[F_DB].values[0];
    o.kubeconfig = f[F_KUBECONFIG].n ? f[F_KUBECONFIG].values[0] : NULL;
    o.once = f[F_ONCE].n > 0;
    if (f[F_KINDS].n && parse_kinds(&o.kinds, f[F_KINDS].values[0], &err) < 0)
        goto bad;
    if (f[F_IDLE].n) {
        if (topo_cli_parse_int(&v, f[F_IDLE].values[0], 1, 3600000, &err) < 0) {
            topo_err_wrap(&err, "--idle-ms");
            goto bad;
        }
        o.idle_ms = (long)v;
    }
    if (f[F_PAGE].n) {
        if (topo_cli_parse_int(&v, f[F_PAGE].values[0], 1, 10000, &err) < 0) {
            topo_err_wrap(&err, "--page-size");
            goto bad;
        }
        o.page_size = (unsigned)v;
    }
    if ((f[F_QPS].n && parse_double(&o.qps, f[F_QPS].values[0], "--qps", &err) < 0) ||
        (f[F_BURST].n && parse_double(&o.burst, f[F_BURST].values[0], "--burst", &err) < 0))
        goto bad;
    o.stop = &stop_requested;
    if (f[F_VERIFY].n) {
        const char **levels = NULL;
        if (f[F_LEVELS].n == 0) {
            topo_err_set(&err, TOPO_EINVALID, "--verify-live: needs --levels");
            goto bad;
        }
        if ((pool = topo_pool_create()) == NULL ||
            topo_cli_parse_levels(&levels, &sopts.nlevels, f[F_LEVELS].values[0], pool, &err) < 0 ||
            topo_live_create(&live, (sopts.levels = levels, &sopts), &err) < 0)
            goto bad;
        o.live = live;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((rc = topo_filler_create(&filler, &o, &err)) < 0)
        goto bad; /* configuration: kubeconfig, cache file */
    rc = topo_filler_run(filler, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    topo_filler_stats st;
    topo_filler_get_stats(filler, &st);
    topo_filler_free(filler);
    if (f[F_STATS].n)
        print_stats(&st, o.db_path,
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    if (rc == 0 && live != NULL)
        rc = verify_live(live, o.db_path, &sopts, &err);
    topo_live_free(live);
    topo_pool_free(pool);
    if (rc != 0) {
        topo_cli_error(CMD, &err);
        return TOPO_CLI_EXIT_NOFIT; /* 1: the sync failed */
    }
    return fflush(stdout) == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_NOFIT;
bad:
    topo_cli_error(CMD, &err);
    topo_live_free(live);
    topo_pool_free(pool);
    return TOPO_CLI_EXIT_BADINPUT;
}
