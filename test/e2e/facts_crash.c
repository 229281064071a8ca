/* Crash test of topo-sync's facts store (topo/sync_facts.h over
 * topo/cache_facts.h): a writer process saves generation after generation
 * of three sources' facts (documents of a few hundred bytes to ~300 KB),
 * records a failed fetch now and then, and prints "<source> <generation>
 * <hash>" once each save has returned; it is killed with SIGKILL at a random
 * moment, several times. After every kill the cache must open, PRAGMA
 * integrity_check must say ok, and each source's stored facts must load
 * and be exactly one whole generation: the last one reported, or the one
 * after it (killed between the commit and the print), never an older one,
 * never a mixture, and never changed by a recorded failure.
 *
 * usage: facts_crash [--rounds N] [--seed S] [--keep] */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
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

#include "topo/cache_facts.h"
#include "topo/facts_json.h"
#include "topo/sha256.h"
#include "topo/sync_facts.h"
#include "support/dbfiles.h"

#define NSOURCES 3
static const char *const sources[NSOURCES] = {"ibnetdiscover", "netbox", "ufm"};

static void die(const char *fmt, ...) TOPO_PRINTF(1, 2);
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "facts_crash: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void check(int rc, const topo_err *err, const char *what)
{
    if (rc != 0)
        die("%s: %s", what, err->text);
}

/* The facts of one generation of a source, a pure function of both: the
 * first host is named after the generation, the sizes vary with it. */
static topo_facts *generation(int src, uint64_t gen)
{
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    char host[64], sw[64], value[64];
    size_t hosts = 1 + (size_t)((gen * 2654435761u) % 3000);

    check(topo_facts_create(&f, sources[src], &err), &err, "create");
    snprintf(host, sizeof(host), "gen-%" PRIu64, gen);
    check(topo_facts_add_host(f, host, NULL, &err), &err, "host");
    for (size_t h = 0; h < hosts; h++) {
        snprintf(host, sizeof(host), "gpu-%05zu", h);
        if (src == 1) {
            snprintf(value, sizeof(value), "R%04zu-%" PRIu64, h / 4, gen % 7);
            check(topo_facts_set_level(f, host, TOPO_LEVEL_RACK, value, &err), &err, "level");
        } else {
            snprintf(sw, sizeof(sw), "S-%016zx", h / 32 + (size_t)(gen % 5));
            snprintf(value, sizeof(value), "mlx5_%zu", h % 8);
            check(topo_facts_add_host_link(f, host, value, sw, &err), &err, "cable");
        }
    }
    return f;
}

static void doc_hash(char out[TOPO_SHA256_HEX_LEN + 1], const topo_facts *f)
{
    char *doc = NULL;
    size_t len = 0;
    topo_err err = TOPO_ERR_INIT;
    check(topo_facts_json_encode(&doc, &len, f, &err), &err, "encode");
    if (topo_sha256_hex(out, doc, len) != 0)
        die("sha256");
    free(doc);
}

/* --- the writer ---------------------------------------------------------------------------- */

static void writer(const char *path, uint64_t first_gen)
{
    topo_cache *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_cache_open(&c, path, NULL, &err) < 0)
        die("writer: open: %s", err.text);
    for (uint64_t gen = first_gen;; gen++) {
        int src = (int)(gen % NSOURCES);
        char hash[TOPO_SHA256_HEX_LEN + 1];
        topo_facts *f = generation(src, gen);
        doc_hash(hash, f);
        check(topo_sync_facts_save(c, f, (int64_t)gen, NULL, &err), &err, "writer: save");
        /* Only now is it promised. */
        printf("%s %" PRIu64 " %s\n", sources[src], gen, hash);
        fflush(stdout);
        topo_facts_free(f);
        if (gen % 4 == 0)
            check(topo_cache_facts_fail(c, sources[(src + 1) % NSOURCES], "injected outage",
                                        (int64_t)gen, &err),
                  &err, "writer: fail");
    }
}

/* --- the checker ---------------------------------------------------------------------------- */

typedef struct reported {
    uint64_t gen[NSOURCES]; /* the last generation reported saved, 0: none */
    char hash[NSOURCES][TOPO_SHA256_HEX_LEN + 1];
} reported;

static void integrity(const char *path, int round)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
        die("round %d: integrity_check: %s", round, sqlite3_errmsg(db));
    if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
        die("round %d: integrity_check: %s", round, sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Each source's stored generation is the one reported last, or the one
 * saved after it (its save committed, the print was killed); returns how
 * many were of the second kind. */
static int verify(const char *path, reported *r, uint64_t next_gen, int round)
{
    topo_cache *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    int unreported = 0;

    if (topo_cache_open(&c, path, NULL, &err) < 0)
        die("round %d: the cache does not open after the kill: %s", round, err.text);
    integrity(path, round);
    for (int s = 0; s < NSOURCES; s++) {
        topo_facts *got = NULL;
        int64_t at = 0;
        char hash[TOPO_SHA256_HEX_LEN + 1];
        int rc = topo_sync_facts_load(&got, &at, c, sources[s], &err);
        if (rc == TOPO_ENOTFOUND && r->gen[s] == 0)
            continue; /* nothing was saved yet (the kill came before) */
        if (rc != 0)
            die("round %d: %s: %s", round, sources[s], err.text);
        uint64_t gen = (uint64_t)at;
        topo_facts *want = generation(s, gen);
        char name[64];
        snprintf(name, sizeof(name), "gen-%" PRIu64, gen);
        if (strcmp(topo_facts_host_name(got, 0), name) != 0)
            die("round %d: %s: fetched at %" PRIu64 " but holds %s", round, sources[s], gen,
                topo_facts_host_name(got, 0));
        doc_hash(hash, got);
        char want_hash[TOPO_SHA256_HEX_LEN + 1];
        doc_hash(want_hash, want);
        if (strcmp(hash, want_hash) != 0)
            die("round %d: %s: generation %" PRIu64 " is not whole", round, sources[s], gen);
        if (gen < r->gen[s])
            die("round %d: %s: generation %" PRIu64 " is stored, %" PRIu64 " was reported saved",
                round, sources[s], gen, r->gen[s]);
        if (gen == r->gen[s] && strcmp(hash, r->hash[s]) != 0)
            die("round %d: %s: generation %" PRIu64 " differs from what was saved", round,
                sources[s], gen);
        if (gen > r->gen[s]) {
            /* committed, not reported: only the save the kill interrupted */
            if (gen != next_gen - 1 || gen % NSOURCES != (uint64_t)s)
                die("round %d: %s: generation %" PRIu64 " was never saved", round, sources[s],
                    gen);
            unreported++;
            r->gen[s] = gen;
            snprintf(r->hash[s], sizeof(r->hash[s]), "%s", hash);
        }
        topo_facts_free(want);
        topo_facts_free(got);
    }
    topo_cache_close(c);
    return unreported;
}

/* --- the driver ----------------------------------------------------------------------------- */

static void note(reported *r, char *line, uint64_t *next_gen)
{
    char src[32], hash[TOPO_SHA256_HEX_LEN + 8];
    uint64_t gen;
    if (sscanf(line, "%31s %" SCNu64 " %70s", src, &gen, hash) != 3)
        die("bad line from the writer: %s", line);
    for (int s = 0; s < NSOURCES; s++)
        if (strcmp(sources[s], src) == 0) {
            r->gen[s] = gen;
            snprintf(r->hash[s], sizeof(r->hash[s]), "%s", hash);
        }
    if (gen + 1 > *next_gen)
        *next_gen = gen + 1;
}

/* Runs the writer from first_gen until the kill; returns how many saves it
 * reported. *next_gen: one past the last generation it may have saved. */
static size_t run_round(const char *path, uint64_t first_gen, int kill_after_ms, reported *r,
                        uint64_t *next_gen)
{
    int fds[2], status = 0, killed = 0;
    char buf[65536];
    size_t have = 0, lines = 0;
    pid_t pid;
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
        writer(path, first_gen);
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
        if (rc <= 0)
            continue;
        ssize_t n = read(fds[0], buf + have, sizeof(buf) - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            note(r, line, next_gen);
            lines++;
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
    }
    close(fds[0]);
    if (waitpid(pid, &status, 0) < 0)
        die("waitpid: %s", strerror(errno));
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        die("the writer ended by itself (status %d) before the kill", status);
    /* The save in flight may have committed. */
    *next_gen += 1;
    return lines;
}

int main(int argc, char **argv)
{
    int rounds = 6, keep = 0;
    uint64_t seed = (uint64_t)time(NULL), rng;
    const char *tmp = getenv("TMPDIR");
    char dir[256], path[300];
    reported r;
    size_t total = 0;
    int unreported = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else {
            fprintf(stderr, "usage: facts_crash [--rounds N] [--seed S] [--keep]\n");
            return 2;
        }
    }
    memset(&r, 0, sizeof(r));
    snprintf(dir, sizeof(dir), "%s/topo-facts-crash-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        die("mkdtemp: %s", strerror(errno));
    snprintf(path, sizeof(path), "%s/cache.db", dir);
    printf("facts_crash: seed %" PRIu64 ", %d rounds, %s\n", seed, rounds, path);
    rng = seed;
    for (int round = 1; round <= rounds; round++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        /* The first kill may land while the schema is being created. */
        int after = round == 1 ? (int)((rng >> 33) % 60) : 50 + (int)((rng >> 33) % 400);
        uint64_t first = (uint64_t)round * 1000000, next = first;
        size_t saves = run_round(path, first, after, &r, &next);
        int late = verify(path, &r, next, round);
        printf("round %d: killed after %d ms, %zu saves reported, %d committed but unreported, "
               "every source whole, integrity ok\n", round, after, saves, late);
        total += saves;
        unreported += late;
    }
    if (total == 0)
        die("no save was ever reported: the kills came too early to test anything");
    printf("facts_crash: ok (%zu saves, %d committed but unreported, %d kills)\n", total,
           unreported, rounds);
    if (!keep) {
        topo_test_remove_db(path);
        rmdir(dir);
    }
    return 0;
}
