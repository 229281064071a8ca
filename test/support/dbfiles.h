/* Test and benchmark helpers around SQLite cache files. */
#ifndef TOPO_TEST_SUPPORT_DBFILES_H
#define TOPO_TEST_SUPPORT_DBFILES_H

/* Removes a database file and its WAL and shared-memory files (path-wal,
 * path-shm); missing ones are not an error. */
void topo_test_remove_db(const char *path);

/* A temporary cache file: a fresh scratch directory and the file's path in
 * it (dir/cache.db, not created: the cache makes it when opened). */
typedef struct topo_test_cachedir {
    char dir[256];
    char path[300];
} topo_test_cachedir;

/* Makes the directory "$TMPDIR/topo-<tag>-XXXXXX" and the path in it. 0,
 * or -1 with errno set. */
int topo_test_cachedir_make(topo_test_cachedir *d, const char *tag);

/* Removes the cache file (with its WAL and shared-memory files) and the
 * directory; what is missing is not an error. */
void topo_test_cachedir_remove(const topo_test_cachedir *d);

/* SQL run on the file directly, outside the cache (to build old or
 * foreign files, or to look at what the cache wrote): the test fails when
 * the file cannot be opened or the SQL fails. */
void topo_test_db_exec(const char *path, const char *sql);

/* The first column of the first row sql returns, read as above; -1 when it
 * returns no row. */
long long topo_test_db_int(const char *path, const char *sql);

#endif
