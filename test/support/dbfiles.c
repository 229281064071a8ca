/* Test and benchmark helpers around SQLite cache files (dbfiles.h). */
#define _POSIX_C_SOURCE 200809L

#include "support/dbfiles.h"
#include "support/tmpdir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

void topo_test_remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    char p[4096];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

int topo_test_cachedir_make(topo_test_cachedir *d, const char *tag)
{
    if (topo_test_tmpdir_make(d->dir, sizeof d->dir, tag) < 0)
        return -1;
    snprintf(d->path, sizeof d->path, "%s/cache.db", d->dir);
    return 0;
}

void topo_test_db_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("sql: %s", msg ? msg : "?");
    sqlite3_close(db);
}

long long topo_test_db_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

void topo_test_cachedir_remove(const topo_test_cachedir *d)
{
    topo_test_remove_db(d->path);
    rmdir(d->dir);
}
