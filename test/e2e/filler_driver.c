/* Drives lib/filler for filler_e2e.py: one `--once` sync into DB feeding two
 * live snapshots of different topologies (racks+hosts, hosts only) through
 * topo_filler_opts.live and .lives (with a repeat and a NULL, which must be
 * skipped), while the main thread polls topo_filler_synced. Prints one JSON
 * line: whether synced was 0 before the run and became 1 during it, and per
 * live snapshot its node and pod counts and whether its walk equals a
 * snapshot built from the cache afterwards.
 *
 * usage: filler_driver --db DB --kubeconfig FILE */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/cache.h"
#include "topo/filler.h"
#include "topo/live.h"

static const char *const levels_rack[] = {"topology.topo.io/rack", "kubernetes.io/hostname"};
static const char *const levels_host[] = {"kubernetes.io/hostname"};

typedef struct run_arg {
    topo_filler *filler;
    topo_err err;
    int rc;
    atomic_int done;
} run_arg;

static void *run_main(void *p)
{
    run_arg *a = p;
    a->rc = topo_filler_run(a->filler, &a->err);
    atomic_store(&a->done, 1);
    return NULL;
}

typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static int walk_line(const topo_domain_view *v, void *payload)
{
    text *t = payload;
    char line[512];
    int n = snprintf(line, sizeof(line), "%zu %s n=%zu cap=%lld free=%lld max=%lld pods=%lld\n",
                     v->level, v->value, v->nodes, (long long)v->capacity, (long long)v->free,
                     (long long)v->max_node_free, (long long)v->pods_free);
    if (n < 0)
        return 1;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 65536;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *b = realloc(t->buf, cap);
        if (b == NULL)
            return 1;
        t->buf = b;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
    return 0;
}

static int walk_all(text *t, const topo_snapshot *snap)
{
    static const char *const res[] = {"nvidia.com/gpu", "cpu", "pods"};
    for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
        if (topo_snapshot_walk(snap, res[i], walk_line, t) != 0)
            return -1;
    return 0;
}

/* 1 when the live snapshot's walk equals the cache's snapshot of the same
 * topology, 0 when not, -1 on failure. */
static int consistent(topo_live *live, const char *db, const char *const *levels, size_t n)
{
    topo_cache *cache = NULL;
    topo_snapshot *fresh = NULL;
    topo_cache_snapshot_opts co = {0};
    topo_err err = TOPO_ERR_INIT;
    text a = {NULL, 0, 0}, b = {NULL, 0, 0};
    int rc = -1;

    co.snapshot.topology_name = "t";
    co.snapshot.levels = levels;
    co.snapshot.nlevels = n;
    co.skip_reservations = 1;
    if (topo_cache_open(&cache, db, NULL, &err) < 0 ||
        topo_cache_snapshot(&fresh, cache, &co, NULL, &err) < 0) {
        fprintf(stderr, "filler_driver: %s\n", err.text);
        goto cleanup;
    }
    const topo_snapshot *cur = topo_live_acquire(live);
    int wa = walk_all(&a, cur);
    topo_live_release(live, cur);
    if (wa < 0 || walk_all(&b, fresh) < 0)
        goto cleanup;
    rc = a.len > 0 && a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0;
    if (!rc)
        fprintf(stderr, "filler_driver: live (%zu bytes) differs from the cache (%zu bytes)\n",
                a.len, b.len);
cleanup:
    free(a.buf);
    free(b.buf);
    topo_snapshot_free(fresh);
    topo_cache_close(cache);
    return rc;
}

int main(int argc, char **argv)
{
    const char *db = NULL, *kubeconfig = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--db") == 0)
            db = argv[i + 1];
        else if (strcmp(argv[i], "--kubeconfig") == 0)
            kubeconfig = argv[i + 1];
    }
    if (db == NULL || kubeconfig == NULL) {
        fprintf(stderr, "usage: filler_driver --db DB --kubeconfig FILE\n");
        return 2;
    }
    topo_err err = TOPO_ERR_INIT;
    topo_snapshot_opts so_rack = {"t", levels_rack, 2, NULL, 0};
    topo_snapshot_opts so_host = {"t", levels_host, 1, NULL, 0};
    topo_live *rack = NULL, *host = NULL;
    if (topo_live_create(&rack, &so_rack, &err) < 0 || topo_live_create(&host, &so_host, &err) < 0) {
        fprintf(stderr, "filler_driver: %s\n", err.text);
        return 1;
    }
    topo_live *const lives[] = {host, NULL, rack};
    topo_filler_opts o = {0};
    o.db_path = db;
    o.kubeconfig = kubeconfig;
    o.once = 1;
    o.live = rack;
    o.lives = lives;
    o.nlives = 3;
    run_arg a;
    memset(&a, 0, sizeof(a));
    if (topo_filler_create(&a.filler, &o, &err) < 0) {
        fprintf(stderr, "filler_driver: %s\n", err.text);
        return 1;
    }
    int synced_before = topo_filler_synced(a.filler);
    int synced_during = 0;
    pthread_t th;
    if (pthread_create(&th, NULL, run_main, &a) != 0)
        return 1;
    while (!atomic_load(&a.done)) {
        if (!synced_during && topo_filler_synced(a.filler))
            synced_during = 1;
        struct timespec ts = {0, 2000000L};
        nanosleep(&ts, NULL);
    }
    pthread_join(th, NULL);
    if (a.rc != 0) {
        fprintf(stderr, "filler_driver: %s\n", a.err.text);
        return 1;
    }
    topo_filler_stats st;
    topo_filler_get_stats(a.filler, &st);
    int synced_after = topo_filler_synced(a.filler);
    topo_filler_free(a.filler);

    topo_live_stats rs, hs;
    topo_live_get_stats(rack, &rs);
    topo_live_get_stats(host, &hs);
    printf("{\"synced_before\": %d, \"synced_during\": %d, \"synced_after\": %d, "
           "\"relists\": %llu, \"resumed\": %llu, \"lives\": ["
           "{\"nodes\": %zu, \"pods\": %zu, \"commits\": %llu, \"consistent\": %d}, "
           "{\"nodes\": %zu, \"pods\": %zu, \"commits\": %llu, \"consistent\": %d}]}\n",
           synced_before, synced_during, synced_after, (unsigned long long)st.relists,
           (unsigned long long)st.resumed, rs.nodes, rs.pods, (unsigned long long)rs.commits,
           consistent(rack, db, levels_rack, 2), hs.nodes, hs.pods,
           (unsigned long long)hs.commits, consistent(host, db, levels_host, 1));
    topo_live_free(rack);
    topo_live_free(host);
    return 0;
}
