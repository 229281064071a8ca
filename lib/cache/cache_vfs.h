/* The VFS the cache opens its files with: SQLite's own, except that the
 * frames a transaction appends to a write-ahead log reach the file in one
 * write instead of two per page (its 24-byte header, then the page). On the
 * webhook's request path those writes were 16 of a first pod's 30 system
 * calls (bench/README.md "bench/webhook", WAL writes).
 *
 * What SQLite sees is unchanged: every frame is in the file before the
 * WAL-index header that makes it visible to readers is written (SQLite
 * calls xShmBarrier on the database file just before; the frames are
 * written there), and before any read, size query, sync, truncation or
 * close of the log. The space for frames held back is allocated in the
 * file when they are accepted (SQLITE_FCNTL_SIZE_HINT), so that a full
 * disk fails the transaction that wrote them, as it does without this VFS,
 * rather than the barrier, which cannot report an error. */
#ifndef TOPO_CACHE_VFS_H
#define TOPO_CACHE_VFS_H

#include <sqlite3.h>

/* The name to pass to sqlite3_open_v2: this VFS over SQLite's default,
 * registered on first use; NULL (SQLite's default VFS) if it could not be. */
const char *cache_vfs_name(void);

/* Registers a VFS named `name` that batches WAL frames over `parent`
 * (tests put a counting VFS under it). SQLITE_OK or an SQLite error code. */
int cache_vfs_register(const char *name, sqlite3_vfs *parent);

#endif
