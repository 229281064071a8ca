/* A corrupted cache file heals instead of stopping its daemon for ever
 * (topo_cache_open_healing, cache.h): the file is a cache of what the API
 * server and the sources hold, so one SQLite finds corrupt is moved aside,
 * as evidence, and a new one is built at the same path. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */

#include "cache_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/log.h"

/* ".corrupt-" then the UTC time, YYYYMMDDTHHMMSSZ. */
#define CORRUPT_TAG ".corrupt-"
#define STAMP_LEN 16
/* SQLite's files beside a database file, moved with it. */
static const char *const companions[] = {"-wal", "-shm"};
#define NCOMPANIONS (sizeof(companions) / sizeof(companions[0]))

static int is_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* The length of the copy's own name when name (a directory entry) is one
 * of base's copies as this file makes them: base CORRUPT_TAG stamp, then
 * ".N" for a second copy in the same second, then "-wal" or "-shm" for a
 * companion; 0 for any other name (never ours to delete). */
static size_t copy_name_len(const char *name, const char *base)
{
    size_t nb = strlen(base), nt = strlen(CORRUPT_TAG);
    if (strncmp(name, base, nb) != 0 || strncmp(name + nb, CORRUPT_TAG, nt) != 0)
        return 0;
    const char *s = name + nb + nt;
    if (strlen(s) < STAMP_LEN || !is_digits(s, 8) || s[8] != 'T' || !is_digits(s + 9, 6) ||
        s[15] != 'Z')
        return 0;
    size_t len = nb + nt + STAMP_LEN;
    s += STAMP_LEN;
    if (s[0] == '.' && s[1] >= '1' && s[1] <= '9') {
        s += 2;
        len += 2;
    }
    if (s[0] == '\0')
        return len;
    for (size_t i = 0; i < NCOMPANIONS; i++)
        if (strcmp(s, companions[i]) == 0)
            return len;
    return 0;
}

/* The 16 bytes every SQLite database file starts with. */
static const char sqlite_header[16] = "SQLite format 3";

/* Whether dir/name starts with SQLite's header: a copy of a cache SQLite
 * found damaged inside. Any other file under a copy's name (an operator's
 * file at --db moved aside, a cache whose very header was overwritten) may
 * be someone's data: never deleted. */
static int is_sqlite_file(const char *dir, const char *name)
{
    char full[PATH_MAX], head[sizeof sqlite_header];
    if (snprintf(full, sizeof full, "%s/%s", dir, name) >= (int)sizeof full)
        return 0;
    FILE *fh = fopen(full, "rb");
    if (fh == NULL)
        return 0;
    size_t n = fread(head, 1, sizeof head, fh);
    fclose(fh);
    return n == sizeof head && memcmp(head, sqlite_header, sizeof head) == 0;
}

static int exists_in(const char *dir, const char *name)
{
    char full[PATH_MAX];
    return snprintf(full, sizeof full, "%s/%s", dir, name) < (int)sizeof full &&
           access(full, F_OK) == 0;
}

static int cmp_desc(const void *a, const void *b)
{
    return strcmp(*(char *const *)b, *(char *const *)a);
}

/* With prune, deletes the copies of path's file older than the newest
 * keep (their companions with them), only those that are SQLite files
 * (is_sqlite_file); best effort: a failure is logged, never fatal. Returns
 * how many copies are not (kept whatever their age), -1 when the directory
 * cannot be read. */
static int prune_copies(const char *dir, const char *base, int keep, int prune)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;

    int foreign = 0;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        if (copy_name_len(e->d_name, base) == 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof(*names));
            if (grown == NULL)
                goto cleanup;
            names = grown;
            cap = ncap;
        }
        if ((names[n] = strdup(e->d_name)) == NULL)
            goto cleanup;
        n++;
    }
    /* Newest first: the stamps sort by time, ".N" after its second's first copy. */
    if (n > 1) /* names is NULL when none */
        qsort(names, n, sizeof(*names), cmp_desc);
    int copies = 0, ours = 0;
    const char *last = NULL;
    size_t last_len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = copy_name_len(names[i], base);
        if (last == NULL || len != last_len || strncmp(names[i], last, len) != 0) {
            /* A new copy: its own file decides for its companions (a
             * companion without it is left alone). */
            char main_name[PATH_MAX];
            last = names[i];
            last_len = len;
            snprintf(main_name, sizeof main_name, "%.*s", (int)len, names[i]);
            ours = is_sqlite_file(dir, main_name);
            if (ours)
                copies++;
            else if (exists_in(dir, main_name))
                foreign++;
        }
        if (!ours || copies <= keep || !prune)
            continue;
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%s/%s", dir, names[i]) >= (int)sizeof full)
            continue;
        if (remove(full) != 0)
            topo_log(TOPO_LOG_WARN, "cache: could not delete the old corrupt copy %s: %s", full,
                     strerror(errno));
    }

cleanup:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return foreign;
}

/* At every healing open: the copies never deleted, said once, so that an
 * operator sees them (and what a corrupt copy made of an unrecognisable
 * file is: theirs to keep or delete). */
static void report_foreign(const char *dir, const char *base, int foreign)
{
    if (foreign <= 0)
        return;
    char n[16];
    snprintf(n, sizeof n, "%d", foreign);
    topo_log_field f[] = {{"dir", dir}, {"copies", n}};
    topo_log_kv(TOPO_LOG_WARN, f, 2,
                "cache: %d file(s) named %s" CORRUPT_TAG "* in %s are not SQLite files: never "
                "deleted by topo (an operator's file moved aside, or a cache whose header was "
                "overwritten); delete them when no longer needed",
                foreign, base, dir);
}

/* Moves path, then its -wal and -shm, to <path>.corrupt-<stamp>[.N] and the
 * same name with the companion's suffix (so the copy opens with its WAL, as
 * it was); the name taken is written to moved_to. A companion that does not
 * exist is skipped; one that cannot be moved is an error: left beside the
 * new file, a stale WAL would be replayed into it. */
static int move_aside(char *moved_to, size_t size, const char *path, topo_err *err)
{
    char stamp[STAMP_LEN + 1], from[PATH_MAX], to[PATH_MAX];
    time_t now = time(NULL);
    struct tm tm;

    if (gmtime_r(&now, &tm) == NULL || strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm) == 0)
        return topo_err_set(err, TOPO_EIO, "cache: %s: no clock to name the corrupt copy", path);
    /* A second copy in the same second (a crash loop) gets .1, .2 ... */
    for (int i = 0;; i++) {
        int n = i == 0 ? snprintf(moved_to, size, "%s" CORRUPT_TAG "%s", path, stamp)
                       : snprintf(moved_to, size, "%s" CORRUPT_TAG "%s.%d", path, stamp, i);
        if (n < 0 || (size_t)n + 4 >= size)
            return topo_err_set(err, TOPO_EINVALID, "cache: %s: path too long", path);
        if (access(moved_to, F_OK) != 0)
            break;
        if (i == 9)
            return topo_err_set(err, TOPO_EIO, "cache: %s: 10 corrupt copies this second", path);
    }
    if (rename(path, moved_to) != 0)
        return topo_err_set(err, TOPO_EIO,
                            "cache: %s is corrupt but cannot be moved aside to %s: %s; move or "
                            "delete it to start with an empty cache",
                            path, moved_to, strerror(errno));
    for (size_t i = 0; i < NCOMPANIONS; i++) {
        snprintf(from, sizeof from, "%s%s", path, companions[i]);
        snprintf(to, sizeof to, "%s%s", moved_to, companions[i]);
        if (rename(from, to) != 0 && errno != ENOENT)
            return topo_err_set(err, TOPO_EIO,
                                "cache: %s was moved aside to %s, but %s cannot be: %s; move or "
                                "delete it before starting again",
                                path, moved_to, from, strerror(errno));
    }
    return 0;
}

int topo_cache_open_healing(topo_cache **out, int *out_recreated, const char *path,
                            const topo_cache_opts *opts, topo_err *err)
{
    topo_err first = TOPO_ERR_INIT;
    char moved_to[PATH_MAX], dir[PATH_MAX];
    const char *base = NULL;
    int corrupt = 0, error;

    *out = NULL;
    if (out_recreated != NULL)
        *out_recreated = 0;
    if (opts != NULL && (opts->read_only || opts->must_exist))
        return topo_err_set(err, TOPO_EINVALID,
                            "cache: a healing open creates the file: not read_only or must_exist");
    /* --db a symbolic link (to a volume, say): the file it points to is
     * the cache. A corrupt one is moved aside beside itself and made again
     * there; moving the link instead would leave the target behind, never
     * used again, and a regular file where the operator put the link. */
    char real[PATH_MAX];
    const char *target = realpath(path, real) != NULL ? real : path;
    error = cache_open_checked(out, path, opts, 1, &corrupt, &first);
    if (error == 0 && strcmp(path, ":memory:") != 0 &&
        cache_path_dir(dir, sizeof dir, &base, target) == 0)
        report_foreign(dir, base, prune_copies(dir, base, TOPO_CACHE_CORRUPT_KEEP, 0));
    if (error == 0 || !corrupt || strcmp(path, ":memory:") == 0) {
        if (error < 0 && err != NULL)
            *err = first;
        return error;
    }
    if ((error = move_aside(moved_to, sizeof moved_to, target, err)) < 0) {
        topo_err_wrap(err, "%s", first.text);
        return error;
    }
    topo_log_field f[] = {{"file", path}, {"error", first.text}, {"moved_to", moved_to}};
    topo_log_kv(TOPO_LOG_ERROR, f, 3,
                "cache: %s is corrupt (%s): moved aside to %s; starting from an empty cache",
                path, first.text, moved_to);
    if (out_recreated != NULL)
        *out_recreated = 1;
    if (cache_path_dir(dir, sizeof dir, &base, target) == 0)
        report_foreign(dir, base, prune_copies(dir, base, TOPO_CACHE_CORRUPT_KEEP, 1));
    return cache_open_checked(out, path, opts, 0, NULL, err);
}
