/* Crash test of the topology cache: a writer process commits reservations
 * (with their slots, a claim and the PodSet's pods) in durable batches and
 * prints each id once COMMIT has returned; it is killed with SIGKILL at a
 * random moment, several times. After every kill the cache must open,
 * PRAGMA integrity_check must say ok, every reported reservation must be
 * there with all of its slots, pods and claim, no reservation may be half
 * written, and no rolled-back one may appear.
 *
 * usage: cache_crash [--rounds N] [--seed S] [--keep]
 * (the writer is this program forked, not exec'd: the parent never holds the
 * database open across fork). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "topo/cache.h"
#include "support/dbfiles.h"

#define MAX_IDS 200000
#define HOSTS 4
#define PODS_PER_TXN 40

static const char *const LEVELS[] = {"topology.topo.io/rack", "kubernetes.io/hostname"};

static void die(const char *fmt, ...) TOPO_PRINTF(1, 2);
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cache_crash: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- the writer ---------------------------------------------------------------------------- */

/* Reservation "r<round>-<seq>-k<slots>": its slots spread over up to HOSTS
 * hosts (slot i on host i % hosts); pods "p-<id>-<j>" for j < PODS_PER_TXN;
 * slot 0 claimed by pod j = 0. */
static void write_one(topo_cache *c, const char *id, int k, int commit)
{
    static const char *hostnames[HOSTS] = {"h0", "h1", "h2", "h3"};
    static const char *racks[HOSTS] = {"r0", "r0", "r1", "r1"};
    const char *values[HOSTS][2];
    topo_assign_domain doms[HOSTS];
    topo_resource req[] = {{"nvidia.com/gpu", 1}};
    topo_cache_reservation_spec spec = {0};
    topo_assignment a;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_cache_slot slot;
    char pod[512], uid[128], key[160];
    int nd = k < HOSTS ? k : HOSTS;

    for (int d = 0; d < nd; d++) {
        values[d][0] = racks[d];
        values[d][1] = hostnames[d];
        doms[d].values = values[d];
        doms[d].count = k / nd + (d < k % nd ? 1 : 0);
    }
    a.levels = LEVELS;
    a.nlevels = 2;
    a.domains = doms;
    a.ndomains = (size_t)nd;
    snprintf(key, sizeof(key), "ns/%s", id);
    spec.id = id;
    spec.podset_key = key;
    spec.topology_name = "default";
    spec.levels = LEVELS;
    spec.nlevels = 2;
    spec.assignment = &a;
    spec.requests = req;
    spec.nrequests = 1;
    spec.created_at = 1;
    spec.expires_at = 1000000;

    if (topo_cache_begin_durable(c, &err) < 0 || topo_cache_reservation_create(c, &spec, &err) < 0)
        die("writer: %s", err.text);
    for (int j = 0; j < PODS_PER_TXN; j++) {
        snprintf(uid, sizeof(uid), "p-%s-%d", id, j);
        snprintf(pod, sizeof(pod),
                 "{\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"%s\","
                 "\"labels\":{\"job-name\":\"%s\"}},\"spec\":{\"nodeName\":\"%s\","
                 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
                 "{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}",
                 uid, uid, id, hostnames[j % HOSTS]);
        if (topo_cache_upsert_pod(c, pod, strlen(pod), &err) < 0)
            die("writer: %s", err.text);
    }
    snprintf(uid, sizeof(uid), "p-%s-0", id);
    if (topo_cache_reservation_claim(&slot, c, id, uid, 0, 2, pool, &err) < 0)
        die("writer: claim: %s", err.text);
    if (commit) {
        if (topo_cache_commit(c, &err) < 0)
            die("writer: commit: %s", err.text);
        /* Only now is it promised. */
        printf("%s\n", id);
        fflush(stdout);
    } else {
        (void)topo_cache_rollback(c, &err);
    }
    topo_pool_free(pool);
}

static void writer(const char *path, int round, uint64_t seed)
{
    topo_cache *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    char id[64];

    rng_state = seed;
    if (topo_cache_open(&c, path, NULL, &err) < 0)
        die("writer: open: %s", err.text);
    for (int seq = 0;; seq++) {
        int k = 1 + (int)(rnd() % 64);
        snprintf(id, sizeof(id), "r%d-%d-k%d", round, seq, k);
        write_one(c, id, k, 1);
        if (seq % 5 == 4) {
            snprintf(id, sizeof(id), "x%d-%d-k%d", round, seq, k);
            write_one(c, id, k, 0); /* rolled back: must never be seen */
        }
    }
}

/* --- the checker ---------------------------------------------------------------------------- */

typedef struct idset {
    char **v;
    size_t n;
} idset;

static int has(const idset *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], id) == 0)
            return 1;
    return 0;
}

static void add(idset *s, const char *id)
{
    if (s->n == MAX_IDS)
        die("too many ids");
    if ((s->v[s->n++] = strdup(id)) == NULL)
        die("out of memory");
}

static int slots_of(const char *id)
{
    const char *k = strrchr(id, 'k');
    return k != NULL ? atoi(k + 1) : -1;
}

typedef struct check {
    const idset *reported;
    idset found; /* reservations in the file this round */
    const char *bad;
} check;

/* The callback only looks at the reservation (callbacks must not call
 * back into the cache); pods are checked afterwards. */
static int check_reservation(const topo_cache_reservation *r, void *payload)
{
    check *ck = payload;
    char uid[128];
    int k = slots_of(r->id), hosts;

    if (r->id[0] != 'r')
        die("rolled-back reservation %s is in the file", r->id);
    if (k <= 0 || (size_t)k != r->nslots)
        die("reservation %s has %zu slots, want %d (half written)", r->id, r->nslots, k);
    hosts = k < HOSTS ? k : HOSTS;
    for (size_t i = 0, d = 0, left = 0; i < r->nslots; i++, left--) {
        char want[8];
        if (left == 0) { /* next domain: k / hosts slots, one more for the first k % hosts */
            left = (size_t)(k / hosts + ((int)d < k % hosts ? 1 : 0));
            d++;
        }
        snprintf(want, sizeof(want), "h%zu", d - 1);
        if (r->slots[i].index != (int32_t)i || r->slots[i].nvalues != 2 ||
            strcmp(r->slots[i].values[1], want) != 0)
            die("reservation %s: slot %zu is damaged", r->id, i);
    }
    snprintf(uid, sizeof(uid), "p-%s-0", r->id);
    if (r->nclaimed != 1 || r->slots[0].pod_uid == NULL || strcmp(r->slots[0].pod_uid, uid) != 0)
        die("reservation %s: %zu claimed slots, want slot 0 held by %s", r->id, r->nclaimed, uid);
    add(&ck->found, r->id);
    return 0;
}

static void verify(const char *path, const idset *reported, idset *known, int round)
{
    topo_cache *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    topo_pool *pool = topo_pool_create();
    topo_cache_stats stats;
    check ck;
    size_t unreported = 0;

    memset(&ck, 0, sizeof(ck));
    ck.reported = reported;
    if ((ck.found.v = calloc(MAX_IDS, sizeof(char *))) == NULL || pool == NULL)
        die("out of memory");
    if (topo_cache_open(&c, path, NULL, &err) < 0)
        die("round %d: the cache does not open after the kill: %s", round, err.text);

    /* integrity_check through a plain connection. */
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
        die("round %d: integrity_check: %s", round, sqlite3_errmsg(db));
    if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
        die("round %d: integrity_check: %s", round, sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* Nothing half written, nothing rolled back. */
    if (topo_cache_reservation_foreach(c, check_reservation, &ck, &err) < 0)
        die("round %d: %s", round, err.text);
    /* Every reported reservation is there (and whole: it was walked). */
    for (size_t i = 0; i < reported->n; i++)
        if (!has(&ck.found, reported->v[i]))
            die("round %d: committed reservation %s is missing", round, reported->v[i]);
    /* Each one's pods came in the same transaction. */
    for (size_t i = 0; i < ck.found.n; i++) {
        for (int j = 0; j < PODS_PER_TXN; j++) {
            topo_cache_pod pod;
            char uid[128];
            snprintf(uid, sizeof(uid), "p-%s-%d", ck.found.v[i], j);
            topo_pool_clear(pool);
            if (topo_cache_get_pod(&pod, c, uid, pool, &err) < 0)
                die("round %d: pod %s of %s is missing", round, uid, ck.found.v[i]);
        }
        if (!has(reported, ck.found.v[i]) && !has(known, ck.found.v[i])) {
            unreported++;
            add(known, ck.found.v[i]);
        }
    }
    if (unreported > 1)
        die("round %d: %zu committed reservations were never reported (at most 1: killed "
            "between COMMIT and the print)", round, unreported);
    if (topo_cache_get_stats(&stats, c, &err) < 0)
        die("round %d: %s", round, err.text);
    if (stats.pods != stats.reservations * PODS_PER_TXN)
        die("round %d: %zu pods for %zu reservations (want %d each)", round, stats.pods,
            stats.reservations, PODS_PER_TXN);
    printf("round %d: %zu reservations (%zu slots, %zu pods) intact, %zu committed but unreported, "
           "integrity ok\n",
           round, stats.reservations, stats.slots, stats.pods, unreported);
    fflush(stdout);
    for (size_t i = 0; i < ck.found.n; i++)
        free(ck.found.v[i]);
    free(ck.found.v);
    topo_cache_close(c);
    topo_pool_free(pool);
}

/* --- the driver ----------------------------------------------------------------------------- */

/* Reads the writer's lines into ids until the deadline, then kills it and
 * drains what it managed to print. */
static int run_round(const char *path, int round, uint64_t seed, int kill_after_ms, idset *ids)
{
    int fds[2];
    char buf[65536];
    size_t have = 0;
    pid_t pid;
    int status = 0, killed = 0;
    int64_t deadline;

    if (pipe(fds) < 0)
        die("pipe: %s", strerror(errno));
    fflush(stdout);
    if ((pid = fork()) < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        if (dup2(fds[1], STDOUT_FILENO) < 0)
            _exit(3);
        close(fds[1]);
        writer(path, round, seed);
        _exit(0);
    }
    close(fds[1]);
    deadline = now_ms() + kill_after_ms;
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int64_t left = deadline - now_ms();
        if (!killed && left <= 0) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        int rc = poll(&p, 1, killed ? 1000 : (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        ssize_t n = read(fds[0], buf + have, sizeof(buf) - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* EOF: the writer is gone */
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            add(ids, line);
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
    }
    close(fds[0]);
    if (waitpid(pid, &status, 0) < 0)
        die("waitpid: %s", strerror(errno));
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        die("round %d: the writer ended by itself (status %d) before the kill", round, status);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = 8, keep = 0;
    uint64_t seed = (uint64_t)time(NULL);
    const char *tmp = getenv("TMPDIR");
    char dir[256], path[300];
    idset reported = {NULL, 0}, known = {NULL, 0};

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else {
            fprintf(stderr, "usage: cache_crash [--rounds N] [--seed S] [--keep]\n");
            return 2;
        }
    }
    snprintf(dir, sizeof(dir), "%s/topo-cache-crash-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        die("mkdtemp: %s", strerror(errno));
    snprintf(path, sizeof(path), "%s/cache.db", dir);
    if ((reported.v = calloc(MAX_IDS, sizeof(char *))) == NULL ||
        (known.v = calloc(MAX_IDS, sizeof(char *))) == NULL)
        die("out of memory");
    printf("cache_crash: seed %llu, %d rounds, %s\n", (unsigned long long)seed, rounds, path);
    rng_state = seed;
    for (int round = 1; round <= rounds; round++) {
        /* The first kill may land while the schema is being created. */
        int after = round == 1 ? (int)(rnd() % 40) : 30 + (int)(rnd() % 400);
        size_t before = reported.n;
        run_round(path, round, seed + (uint64_t)round * 7919, after, &reported);
        printf("round %d: killed after %d ms, %zu reservations reported committed\n", round,
               after, reported.n - before);
        verify(path, &reported, &known, round);
    }
    if (reported.n == 0)
        die("no reservation was ever committed: the kills came too early to test anything");
    printf("cache_crash: ok (%zu committed reservations survived %d kills)\n", reported.n,
           rounds);
    if (!keep) {
        topo_test_remove_db(path);
        rmdir(dir);
    }
    for (size_t i = 0; i < reported.n; i++)
        free(reported.v[i]);
    for (size_t i = 0; i < known.n; i++)
        free(known.v[i]);
    free(reported.v);
    free(known.v);
    return 0;
}
