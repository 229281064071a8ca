/* The cache's VFS (lib/cache/cache_vfs.c): a transaction's WAL frames reach
 * the file in one write; every frame is in the file when the commit
 * returns (a copy of the files taken then holds it) and before another
 * connection can read it; transactions that spill pages before they commit,
 * or that roll back after spilling, leave the database whole; a write that
 * fails (the parent VFS's, or the file's space refused by RLIMIT_FSIZE)
 * fails its transaction and loses nothing committed before. The parent VFS
 * under it here is SQLite's own with the WAL's writes counted, and made to
 * fail on demand; space is refused with RLIMIT_FSIZE, also after another
 * connection truncated the log. Files live in a fresh directory under $TMPDIR. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "../../lib/cache/cache_vfs.h" /* white-box */
#include "support/dbfiles.h"

/* --- a parent VFS that counts and fails the WAL's writes ------------------------------ */

static sqlite3_vfs counting;
static pthread_mutex_t methods_mu = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_io_methods wal_methods;               /* set once, under methods_mu */
static const sqlite3_io_methods *real_wal_methods;   /* likewise */
static _Atomic int wal_writes;
static _Atomic int fail_wal_writes;

static int counting_write(sqlite3_file *file, const void *data, int n, sqlite3_int64 off)
{
    if (fail_wal_writes)
        return SQLITE_IOERR_WRITE;
    wal_writes++;
    return real_wal_methods->xWrite(file, data, n, off);
}

static int counting_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
                         int *out_flags)
{
    sqlite3_vfs *real = vfs->pAppData;
    int rc = real->xOpen(real, name, file, flags, out_flags);
    if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL) && file->pMethods != NULL) {
        /* SQLite's unix files share one methods table: a copy with xWrite
         * counted serves them unchanged. */
        pthread_mutex_lock(&methods_mu);
        if (real_wal_methods == NULL) {
            real_wal_methods = file->pMethods;
            wal_methods = *file->pMethods;
            wal_methods.xWrite = counting_write;
        }
        pthread_mutex_unlock(&methods_mu);
        file->pMethods = &wal_methods;
    }
    return rc;
}

static int group_setup(void **state)
{
    (void)state;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    counting = *real;
    counting.zName = "test-counting";
    counting.pAppData = real;
    counting.xOpen = counting_open;
    counting.pNext = NULL;
    if (sqlite3_vfs_register(&counting, 0) != SQLITE_OK)
        return -1;
    return cache_vfs_register("test-batch", &counting) == SQLITE_OK ? 0 : -1;
}

/* --- fixture ------------------------------------------------------------------------- */

typedef struct fx {
    topo_test_cachedir tmp;
    sqlite3 *db;     /* through the batching VFS */
    sqlite3 *reader; /* SQLite's own VFS, another connection */
} fx;

static void exec_ok(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
}

static sqlite3 *open_db(const char *path, const char *vfs)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs),
                     SQLITE_OK);
    exec_ok(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
    sqlite3_wal_autocheckpoint(db, 0); /* the frames stay in the WAL to be looked at */
    return db;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    if (topo_test_cachedir_make(&f->tmp, "vfs-test") < 0)
        return -1;
    f->db = open_db(f->tmp.path, "test-batch");
    exec_ok(f->db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)");
    f->reader = open_db(f->tmp.path, NULL);
    fail_wal_writes = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sqlite3_close(f->reader);
    sqlite3_close(f->db);
    topo_test_cachedir_remove(&f->tmp);
    free(f);
    return 0;
}

static sqlite3_int64 query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    sqlite3_int64 v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void assert_whole(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
}

/* Inserts rows [from, from + n) of `size` bytes each in one transaction;
 * the SQLite result code of its COMMIT (or of the first failing step). */
static int insert_rows(sqlite3 *db, int from, int n, int size)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO t(k, v) VALUES(?1, zeroblob(?2))", -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        sqlite3_bind_int(st, 1, from + i);
        sqlite3_bind_int(st, 2, size);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(db))
        (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* insert_rows with files limited to `limit` bytes (RLIMIT_FSIZE, SIGXFSZ
 * ignored so that a write past it fails with EFBIG), both restored after. */
static int insert_rows_limited(sqlite3 *db, rlim_t limit, int from, int n, int size)
{
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = limit;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = insert_rows(db, from, n, size);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    return rc;
}

/* --- tests --------------------------------------------------------------------------- */

static void test_cache_vfs__one_write_per_commit(void **state)
{
    fx *f = *state;
    for (int round = 0; round < 5; round++) {
        int before = wal_writes;
        /* 8 rows of 3 KB: 8 leaf pages and more, 2 writes each without
         * the batching */
        assert_int_equal(insert_rows(f->db, round * 8, 8, 3000), SQLITE_OK);
        assert_int_equal(wal_writes - before, 1);
        /* another connection, through SQLite's own VFS, reads them at once */
        assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), (round + 1) * 8);
    }
    assert_whole(f->reader);
}

/* A copy of the files taken right after COMMIT returned, the connection
 * still open, holds the transaction: its frames are in the file. */
static void test_cache_vfs__committed_frames_in_the_file(void **state)
{
    fx *f = *state;
    assert_int_equal(insert_rows(f->db, 0, 20, 1000), SQLITE_OK);
    char copy[400], cmd[1200];
    snprintf(copy, sizeof(copy), "%s/copy.db", f->tmp.dir);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s-wal' '%s-wal'", f->tmp.path, copy,
             f->tmp.path, copy);
    assert_int_equal(system(cmd), 0);
    sqlite3 *c = open_db(copy, NULL);
    assert_int_equal(query_int(c, "SELECT count(*) FROM t"), 20);
    assert_whole(c);
    sqlite3_close(c);
    topo_test_remove_db(copy);
}

/* Pages spilled before the commit (a tiny page cache), and a spilled
 * transaction rolled back before another commits over the same frames. */
static void test_cache_vfs__spills_and_rollbacks(void **state)
{
    fx *f = *state;
    exec_ok(f->db, "PRAGMA cache_size=8");
    assert_int_equal(insert_rows(f->db, 0, 600, 4000), SQLITE_OK); /* ~2.4 MB: over the batch */
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 600);

    exec_ok(f->db, "BEGIN IMMEDIATE; INSERT INTO t(k, v) SELECT k + 1000, v FROM t;");
    exec_ok(f->db, "ROLLBACK");
    assert_int_equal(insert_rows(f->db, 5000, 3, 100), SQLITE_OK);
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 603);
    assert_int_equal(query_int(f->reader, "SELECT sum(length(v)) FROM t"), 600 * 4000 + 300);
    assert_whole(f->reader);
    assert_whole(f->db);
}

/* The parent's write fails while the batch is written (over BATCH_MAX):
 * the transaction fails, what was committed before stays. */
static void test_cache_vfs__failed_write_fails_the_transaction(void **state)
{
    fx *f = *state;
    assert_int_equal(insert_rows(f->db, 0, 10, 500), SQLITE_OK);
    fail_wal_writes = 1;
    assert_int_not_equal(insert_rows(f->db, 100, 400, 4000), SQLITE_OK);
    fail_wal_writes = 0;
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 10);
    assert_int_equal(insert_rows(f->db, 100, 2, 500), SQLITE_OK);
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 12);
    assert_whole(f->reader);
}

/* No space for the WAL to grow (RLIMIT_FSIZE): the space is refused when
 * the frames are accepted, so the commit fails, nothing is lost, and the
 * next commit after space came back works. */
static void test_cache_vfs__no_space_fails_the_commit(void **state)
{
    fx *f = *state;
    assert_int_equal(insert_rows(f->db, 0, 10, 500), SQLITE_OK);
    int rc = insert_rows_limited(f->db, 4u << 20, 100, 2000, 4000); /* ~8 MB of frames */
    assert_int_not_equal(rc, SQLITE_OK);
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 10);
    assert_int_equal(insert_rows(f->db, 100, 5, 500), SQLITE_OK);
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 15);
    assert_whole(f->reader);
}

/* Another connection truncated the log (a TRUNCATE checkpoint): the space
 * the writer had allocated is gone, and it asks again when the log starts
 * over, so that no space still fails the commit rather than the barrier. */
static void test_cache_vfs__space_asked_again_after_truncation(void **state)
{
    fx *f = *state;
    assert_int_equal(insert_rows(f->db, 0, 10, 500), SQLITE_OK);
    exec_ok(f->reader, "PRAGMA wal_checkpoint(TRUNCATE)");
    /* under one transaction's frames, over the file's pages */
    int rc = insert_rows_limited(f->db, 16u << 10, 100, 8, 3000);
    assert_int_not_equal(rc, SQLITE_OK);
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 10);
    assert_int_equal(insert_rows(f->db, 100, 8, 3000), SQLITE_OK);
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), 18);
    assert_whole(f->reader);
}

/* Connections on several threads at once, each opening and closing its
 * own (the VFS's list of database files and their WALs changes under
 * them), writing small transactions into one file: every row lands, the
 * file is whole. Run by the ThreadSanitizer stage too. */
typedef struct writer {
    const char *path;
    int id, rc;
} writer;

static void *write_rows(void *arg)
{
    writer *w = arg;
    for (int round = 0; round < 4 && w->rc == SQLITE_OK; round++) {
        sqlite3 *db = NULL;
        w->rc = sqlite3_open_v2(w->path, &db, SQLITE_OPEN_READWRITE, "test-batch");
        if (w->rc == SQLITE_OK)
            w->rc = sqlite3_busy_timeout(db, 10000);
        for (int i = 0; i < 25 && w->rc == SQLITE_OK; i++)
            w->rc = insert_rows(db, w->id * 1000 + round * 25 + i, 1, 200);
        sqlite3_close(db);
    }
    return NULL;
}

static void test_cache_vfs__threads(void **state)
{
    fx *f = *state;
    enum { N = 4 };
    writer w[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        w[i] = (writer){f->tmp.path, i + 1, SQLITE_OK};
        assert_int_equal(pthread_create(&th[i], NULL, write_rows, &w[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(w[i].rc, SQLITE_OK);
    }
    assert_int_equal(query_int(f->reader, "SELECT count(*) FROM t"), N * 100);
    assert_whole(f->reader);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cache_vfs__one_write_per_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_vfs__committed_frames_in_the_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_vfs__spills_and_rollbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_vfs__failed_write_fails_the_transaction, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_vfs__no_space_fails_the_commit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_vfs__space_asked_again_after_truncation, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cache_vfs__threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
