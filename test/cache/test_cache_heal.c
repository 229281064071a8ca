/* Tests for lib/cache/cache_heal.c (topo_cache_open_healing): a cache file
 * overwritten in the middle, cut to half, or not a database at all is moved
 * aside with its WAL and a new empty cache opened; what is not corruption
 * (a newer schema, another program's database) is refused as before and left
 * untouched; only the newest TOPO_CACHE_CORRUPT_KEEP copies it made are kept.
 * Files live in a fresh directory under $TMPDIR. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/dbfiles.h"
#include "topo/cache.h"
#include "topo/cache_facts.h"
#include "topo/log.h"

#define SOURCES 48
#define DOC_LEN 6000

typedef struct fx {
    topo_test_cachedir tmp;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (f == NULL || topo_test_cachedir_make(&f->tmp, "cache-heal") < 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* Removes every file of the scratch directory, then the directory. */
static int teardown(void **state)
{
    fx *f = *state;
    DIR *d = opendir(f->tmp.dir);
    struct dirent *e;
    char p[600];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", f->tmp.dir, e->d_name);
        remove(p);
    }
    if (d != NULL)
        closedir(d);
    topo_test_cachedir_remove(&f->tmp);
    free(f);
    return 0;
}

/* A cache of SOURCES facts documents (about 300 KB), closed (its WAL
 * checkpointed into the file). */
static void fill(const char *path)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    static char doc[DOC_LEN + 1];
    char name[32];
    if (topo_cache_open(&c, path, NULL, &err) < 0)
        fail_msg("open: %s", err.text);
    for (int i = 0; i < SOURCES; i++) {
        for (size_t j = 0; j < DOC_LEN; j++)
            doc[j] = (char)('a' + (i + (int)j) % 26);
        doc[DOC_LEN] = '\0';
        snprintf(name, sizeof name, "source-%02d", i);
        if (topo_cache_facts_put(c, name, doc, DOC_LEN, 1000 + i, NULL, &err) < 0)
            fail_msg("put: %s", err.text);
    }
    topo_cache_close(c);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* 4 KiB of 0xA5 at half the file: a disk fault, a bad restore. */
static void overwrite_middle(const char *path)
{
    unsigned char junk[4096];
    memset(junk, 0xA5, sizeof junk);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, junk, sizeof junk, (off_t)(file_size(path) / 2)),
                     (ssize_t)sizeof junk);
    close(fd);
}

/* 0xA5 over the first 16 bytes of every 4 KiB page of the file's second
 * half: every page there fails SQLite's own checks when read (a b-tree
 * page's header, an overflow page's next-page number). */
static void overwrite_page_heads(const char *path)
{
    unsigned char junk[16];
    memset(junk, 0xA5, sizeof junk);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    for (long at = file_size(path) / 2 / 4096 * 4096; at < file_size(path); at += 4096)
        assert_int_equal(pwrite(fd, junk, sizeof junk, (off_t)at), (ssize_t)sizeof junk);
    close(fd);
}

static void truncate_half(const char *path)
{
    assert_int_equal(truncate(path, (off_t)(file_size(path) / 2)), 0);
}

/* The names in dir that start with prefix. */
static int count_prefixed(const char *dir, const char *prefix, char *first, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            if (n++ == 0 && first != NULL)
                snprintf(first, size, "%s", e->d_name);
        }
    closedir(d);
    return n;
}

/* What one error line said (the log sink's last error event). */
static char logged[1024];
static void sink(const topo_log_event *ev, void *payload)
{
    (void)payload;
    if (ev->level == TOPO_LOG_ERROR)
        topo_log_format(logged, sizeof logged, ev);
}

static void warn_sink(const topo_log_event *ev, void *payload)
{
    (void)payload;
    if (ev->level == TOPO_LOG_WARN)
        topo_log_format(logged, sizeof logged, ev);
}

/* A corrupted file: today's open fails on it (a daemon's crash loop); the
 * healing open moves it aside, logs it once, and gives an empty cache that
 * works, at the same path. */
static void check_heals(fx *f, void (*corrupt)(const char *))
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_cache_facts got;
    topo_pool *pool = topo_pool_create();
    int recreated = -1, changed = 0;
    char copy[256];

    fill(f->tmp.path);
    corrupt(f->tmp.path);
    /* Whatever the plain open says, the file is not usable as it is. */
    if (topo_cache_open(&c, f->tmp.path, NULL, &err) == 0) {
        topo_err e2 = TOPO_ERR_INIT;
        int n = 0;
        for (int i = 0; i < SOURCES; i++) {
            char name[32];
            snprintf(name, sizeof name, "source-%02d", i);
            n += topo_cache_facts_get(&got, c, name, pool, &e2) < 0;
        }
        topo_cache_close(c);
        c = NULL;
        assert_true(n > 0);
    }

    logged[0] = '\0';
    topo_log_set_sink(sink, NULL);
    err = (topo_err)TOPO_ERR_INIT;
    int rc = topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err);
    topo_log_set_sink(NULL, NULL);
    if (rc < 0)
        fail_msg("healing open: %s", err.text);
    assert_int_equal(recreated, 1);
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", copy, sizeof copy), 1);
    /* YYYYMMDDTHHMMSSZ */
    assert_int_equal(strlen(copy), strlen("cache.db.corrupt-") + 16);
    assert_int_equal(copy[strlen("cache.db.corrupt-") + 8], 'T');
    assert_non_null(strstr(logged, "level=error"));
    assert_non_null(strstr(logged, "file="));
    assert_non_null(strstr(logged, copy));
    assert_non_null(strstr(logged, "error="));
    /* Empty and writable. */
    assert_int_equal(topo_cache_facts_get(&got, c, "source-00", pool, &err), TOPO_ENOTFOUND);
    assert_int_equal(topo_cache_facts_put(c, "source-00", "{}", 2, 1, &changed, &err), 0);
    topo_cache_close(c);
    /* The next start finds a good file: nothing moved. */
    c = NULL;
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
    assert_int_equal(recreated, 0);
    assert_int_equal(topo_cache_facts_get(&got, c, "source-00", pool, &err), 0);
    topo_cache_close(c);
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", NULL, 0), 1);
    topo_pool_free(pool);
}

static void test_cache_heal__overwritten_middle(void **state)
{
    check_heals(*state, overwrite_middle);
}

static void test_cache_heal__truncated_half(void **state)
{
    check_heals(*state, truncate_half);
}

static void not_a_database(const char *path)
{
    FILE *fh = fopen(path, "w");
    assert_non_null(fh);
    for (int i = 0; i < 8192; i++)
        fputc(0xA5, fh);
    fclose(fh);
}

static void test_cache_heal__not_a_database(void **state)
{
    check_heals(*state, not_a_database);
}

/* A WAL beside the corrupt file goes with it (left, it would be replayed
 * into the new file), named so that the copy opens with it: here another
 * connection (a topoassign, say) still holds the WAL open with frames. */
static void test_cache_heal__wal_moved_along(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL, *other = NULL;
    topo_cache_opts o = {.manual_checkpoint = 1};
    topo_cache_facts got;
    topo_pool *pool = topo_pool_create();
    char copy[256], copy_wal[600];
    int recreated = 0;

    fill(f->tmp.path);
    overwrite_middle(f->tmp.path);
    /* A write that stays in the WAL: a new page, not the corrupt ones. */
    assert_int_equal(topo_cache_open(&other, f->tmp.path, &o, &err), 0);
    assert_int_equal(topo_cache_facts_put(other, "late", "{\"x\":1}", 7, 5, NULL, &err), 0);
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
    assert_int_equal(recreated, 1);
    /* The new file did not replay the old WAL. */
    assert_int_equal(topo_cache_facts_get(&got, c, "late", pool, &err), TOPO_ENOTFOUND);
    topo_cache_close(c);
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", copy, sizeof copy), 3);
    char *dash = strchr(copy + strlen("cache.db.corrupt-"), '-');
    if (dash != NULL)
        *dash = '\0';
    snprintf(copy_wal, sizeof copy_wal, "%s/%s-wal", f->tmp.dir, copy);
    assert_true(file_size(copy_wal) > 0);
    topo_cache_close(other);
    topo_pool_free(pool);
}

/* Corruption met while running (the plain open does not check): the call
 * fails, and the connection says the file is corrupt from then on (the
 * webhook's cue to exit and be restarted into the healing open). */
static void test_cache_heal__corrupt_while_running(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_cache_facts got;
    topo_pool *pool = topo_pool_create();
    char name[32];
    int failed = 0;

    fill(f->tmp.path);
    assert_int_equal(topo_cache_open(&c, f->tmp.path, NULL, &err), 0);
    assert_int_equal(topo_cache_corrupt(c), 0);
    topo_cache_close(c);
    c = NULL;
    overwrite_page_heads(f->tmp.path);
    assert_int_equal(topo_cache_open(&c, f->tmp.path, NULL, &err), 0);
    assert_int_equal(topo_cache_corrupt(c), 0);
    for (int i = 0; i < SOURCES; i++) {
        snprintf(name, sizeof name, "source-%02d", i);
        failed += topo_cache_facts_get(&got, c, name, pool, &err) == TOPO_EINVALID;
    }
    assert_true(failed > 0);
    assert_int_equal(topo_cache_corrupt(c), 1);
    assert_int_equal(topo_cache_corrupt(NULL), 0);
    topo_cache_close(c);
    topo_pool_free(pool);
}

/* Not corruption: a newer schema and another program's database are
 * refused as by topo_cache_open, and stay where they are. */
static void test_cache_heal__not_corruption_untouched(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    int recreated = -1;

    topo_test_db_exec(f->tmp.path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                                   "INSERT INTO meta VALUES('schema_version', '99');");
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err),
                     TOPO_EUNSUPPORTED);
    assert_null(c);
    assert_int_equal(recreated, 0);
    assert_non_null(strstr(err.text, "schema version 99 is newer"));
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT value FROM meta"), 99);

    topo_test_remove_db(f->tmp.path);
    topo_test_db_exec(f->tmp.path, "CREATE TABLE accounts(id INTEGER);");
    err = (topo_err)TOPO_ERR_INIT;
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "not a topo cache"));
    assert_int_equal(topo_test_db_int(f->tmp.path, "SELECT count(*) FROM accounts"), 0);
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", NULL, 0), 0);
}

static void touch(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fh = fopen(p, "w");
    assert_non_null(fh);
    fclose(fh);
}

/* A damaged cache as SQLite leaves one: its header, then garbage. */
static void damaged_cache(const char *path)
{
    FILE *fh = fopen(path, "wb");
    assert_non_null(fh);
    fwrite("SQLite format 3", 1, 16, fh);
    for (int i = 0; i < 4080; i++)
        fputc(0xA5, fh);
    fclose(fh);
}

static void damaged_copy(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    damaged_cache(p);
}

static int exists(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* The newest TOPO_CACHE_CORRUPT_KEEP copies are kept, older ones deleted
 * with their -wal and -shm; names the function does not make are never
 * touched, nor files under its names that are no SQLite files. */
static void test_cache_heal__keeps_newest_copies(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    int recreated = 0;
    static const char *const old[] = {
        "cache.db.corrupt-20200101T000000Z", "cache.db.corrupt-20200101T000000Z-wal",
        "cache.db.corrupt-20200101T000000Z.1", "cache.db.corrupt-20210101T000000Z",
        "cache.db.corrupt-20220101T000000Z", "cache.db.corrupt-20220101T000000Z-shm"};
    static const char *const foreign[] = {"cache.db.corrupt-20190101T000000Z.bak",
                                          "cache.db.corrupt-manual", "other.db.corrupt-20190101T000000Z"};

    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
        if (strstr(old[i] + 20, "-wal") == NULL && strstr(old[i] + 20, "-shm") == NULL)
            damaged_copy(f->tmp.dir, old[i]);
        else
            touch(f->tmp.dir, old[i]);
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
        damaged_copy(f->tmp.dir, foreign[i]);
    fill(f->tmp.path);
    truncate_half(f->tmp.path);
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
    assert_int_equal(recreated, 1);
    topo_cache_close(c);
    /* Kept: the new copy only (TOPO_CACHE_CORRUPT_KEEP 1). */
    assert_int_equal(TOPO_CACHE_CORRUPT_KEEP, 1);
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
        assert_false(exists(f->tmp.dir, old[i]));
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
        assert_true(exists(f->tmp.dir, foreign[i]));
    /* The new copy and the 2 names of cache.db.corrupt-* not ours. */
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", NULL, 0), 1 + 2);
}

/* Two corruptions in a row (a crash loop, often within one second: the
 * second copy is then named ".1"): one copy is left, the newest. */
static void test_cache_heal__second_copy_replaces_first(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    char copy[256], full[600];
    int recreated = 0;

    for (int round = 0; round < 2; round++) {
        damaged_cache(f->tmp.path);
        if (round == 1)
            assert_int_equal(truncate(f->tmp.path, 4096), 0); /* tells the copies apart */
        assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
        assert_int_equal(recreated, 1);
        topo_cache_close(c);
        c = NULL;
    }
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", copy, sizeof copy), 1);
    snprintf(full, sizeof full, "%s/%s", f->tmp.dir, copy);
    assert_int_equal(file_size(full), 4096);
}

/* An operator's file at --db (no SQLite file at all) is moved aside at
 * the first heal and never deleted by a later one: a copy is only ever
 * deleted when it is recognisably a damaged cache (SQLite's header). Each
 * healing open says how many such files there are. */
static void test_cache_heal__foreign_copy_never_deleted(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    char copy[256], full[600];
    int recreated = 0;
    FILE *fh = fopen(f->tmp.path, "w");
    assert_non_null(fh);
    fputs("my notes, not a cache\n", fh);
    fclose(fh);
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
    assert_int_equal(recreated, 1);
    topo_cache_close(c);
    c = NULL;
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", copy, sizeof copy), 1);
    /* Two damaged caches in a row: the operator's file stays, with the
     * newest damaged copy; the older damaged copy is pruned. */
    for (int round = 0; round < 2; round++) {
        damaged_cache(f->tmp.path);
        assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
        assert_int_equal(recreated, 1);
        topo_cache_close(c);
        c = NULL;
    }
    snprintf(full, sizeof full, "%s/%s", f->tmp.dir, copy);
    assert_int_equal(file_size(full), (long)strlen("my notes, not a cache\n"));
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", NULL, 0), 2);
    /* A healthy open names it. */
    logged[0] = '\0';
    topo_log_set_sink(warn_sink, NULL);
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
    topo_log_set_sink(NULL, NULL);
    topo_cache_close(c);
    assert_int_equal(recreated, 0);
    assert_non_null(strstr(logged, "1 file(s) named cache.db.corrupt-* in"));
    assert_non_null(strstr(logged, "never deleted"));
}

/* --db a symbolic link to a corrupt file: the file it points to is moved
 * aside beside itself and made again there; the link stays a link. */
static void test_cache_heal__symlink_heals_target(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    char target[600], copy[256];
    int recreated = 0;
    struct stat st;
    snprintf(target, sizeof target, "%s/real.db", f->tmp.dir);
    damaged_cache(target);
    assert_int_equal(symlink("real.db", f->tmp.path), 0);
    assert_int_equal(topo_cache_open_healing(&c, &recreated, f->tmp.path, NULL, &err), 0);
    assert_int_equal(recreated, 1);
    topo_cache_close(c);
    assert_int_equal(lstat(f->tmp.path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(count_prefixed(f->tmp.dir, "real.db.corrupt-", copy, sizeof copy), 1);
    assert_int_equal(count_prefixed(f->tmp.dir, "cache.db.corrupt-", NULL, 0), 0);
    /* The new cache is the target: it opens through the link and alone. */
    assert_int_equal(topo_cache_open(&c, target, NULL, &err), 0);
    topo_cache_close(c);
}

/* A directory or a FIFO at --db: refused with the path and what it is,
 * not SQLite's "disk I/O error" (nor a hang on the FIFO). */
static void test_cache_heal__not_a_regular_file_named(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    assert_int_equal(mkdir(f->tmp.path, 0700), 0);
    assert_true(topo_cache_open_healing(&c, NULL, f->tmp.path, NULL, &err) < 0);
    assert_null(c);
    assert_non_null(strstr(err.text, f->tmp.path));
    assert_non_null(strstr(err.text, "is a directory"));
    assert_int_equal(rmdir(f->tmp.path), 0);
    assert_int_equal(mkfifo(f->tmp.path, 0600), 0);
    topo_err_clear(&err);
    assert_true(topo_cache_open_healing(&c, NULL, f->tmp.path, NULL, &err) < 0);
    assert_null(c);
    assert_non_null(strstr(err.text, f->tmp.path));
    assert_non_null(strstr(err.text, "is a FIFO"));
}

/* A corrupt file in a read-only directory (a read-only mount: chmod does
 * not stop root) cannot be moved aside nor a WAL made: the error names the
 * directory and what the cache needs there. Skipped unless a read-only
 * bind mount can be made (root). */
static void test_cache_heal__read_only_dir_named(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    char cmd[1400];
    damaged_cache(f->tmp.path);
    snprintf(cmd, sizeof cmd,
             "mount --bind '%s' '%s' 2>/dev/null && mount -o remount,bind,ro '%s' 2>/dev/null",
             f->tmp.dir, f->tmp.dir, f->tmp.dir);
    if (geteuid() != 0 || system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "umount '%s' 2>/dev/null", f->tmp.dir);
        (void)system(cmd);
        skip();
    }
    int rc = topo_cache_open_healing(&c, NULL, f->tmp.path, NULL, &err);
    snprintf(cmd, sizeof cmd, "umount '%s'", f->tmp.dir);
    assert_int_equal(system(cmd), 0);
    assert_true(rc < 0);
    assert_null(c);
    assert_non_null(strstr(err.text, "is not writable"));
    assert_non_null(strstr(err.text, f->tmp.dir));
}

/* A healing open never makes a file it was told must exist, nor writes one
 * it was told to only read. */
static void test_cache_heal__options_refused(void **state)
{
    fx *f = *state;
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    topo_cache_opts o = {.read_only = 1};
    assert_int_equal(topo_cache_open_healing(&c, NULL, f->tmp.path, &o, &err), TOPO_EINVALID);
    assert_null(c);
    assert_int_equal(file_size(f->tmp.path), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cache_heal__overwritten_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__truncated_half, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__not_a_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__wal_moved_along, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__corrupt_while_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__not_corruption_untouched, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__keeps_newest_copies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__second_copy_replaces_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__options_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__foreign_copy_never_deleted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__symlink_heals_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__read_only_dir_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_heal__not_a_regular_file_named, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
