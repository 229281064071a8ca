/* Test and benchmark helpers around SQLite cache files. */
#ifndef TOPO_TEST_SUPPORT_DBFILES_H
#define TOPO_TEST_SUPPORT_DBFILES_H

/* Removes a database file and its WAL and shared-memory files (path-wal,
 * path-shm); missing ones are not an error. */
void topo_test_remove_db(const char *path);

#endif
