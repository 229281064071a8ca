/* A VFS over SQLite's own that writes a transaction's WAL frames in one
 * write: see cache_vfs.h for why and for what stays as SQLite expects.
 *
 * A WAL file holds back writes that continue the previous one, up to
 * BATCH_MAX bytes, and writes them when the run breaks or something needs
 * the file as it is: a read, a size query, a sync, a truncation, a file
 * control, its close, or a barrier on its connection's database file
 * (SQLite's signal that the frames are about to become visible). Only the
 * WAL of a database file opened through this VFS is batched: the database
 * file tells which WAL is its connection's, and a connection is used by
 * one thread at a time (the cache opens with SQLITE_OPEN_NOMUTEX), so a
 * barrier and the writes it publishes come from the same thread. */
#define _POSIX_C_SOURCE 200809L

#include "cache_vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo/log.h"

/* At most what the parent takes in one write: SQLite's unix VFS writes
 * the length modulo 128 KiB (seekAndWriteFd), as SQLite itself never
 * writes more than a page and its header. About 29 frames of 4 KiB: a
 * request's transaction (a first pod's is 8, a 64-pod reservation's about
 * 20) is one write; a longer one is written in runs of this size. */
#define BATCH_MAX (116 * 1024)
/* The log's space is allocated this much at a time ahead of its frames. */
#define RESERVE_CHUNK (1 << 20)

typedef struct vfile vfile;
struct vfile {
    sqlite3_file base;
    sqlite3_file *real; /* the parent VFS's file, allocated after this struct */
    /* a main database file: the name pointer SQLite opened it with (its
     * WAL's name leads back to the same pointer), its WAL once open, the
     * next database file open through this VFS */
    const char *db_name;
    vfile *wal;
    vfile *next_db;
    int is_db;
    /* a WAL file: its database file (NULL: writes go straight through) */
    vfile *db;
    unsigned char *buf; /* bytes held back, for file offset buf_off */
    size_t len, cap;
    sqlite3_int64 buf_off;
    sqlite3_int64 reserved; /* bytes of the file known to be allocated */
    int fd;                 /* the WAL opened once more, to allocate its space; -1 */
    int failed;             /* a held-back write failed where it could not be reported */
};

static pthread_mutex_t dbs_mu = PTHREAD_MUTEX_INITIALIZER;
static vfile *dbs; /* main database files open through any instance of this VFS */

static sqlite3_vfs *parent_of(sqlite3_vfs *vfs)
{
    return vfs->pAppData;
}

/* --- the held-back writes ------------------------------------------------------------ */

static int flush(vfile *f)
{
    if (f->len == 0)
        return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->buf_off);
    f->len = 0;
    return rc;
}

/* The file's space up to `end` allocated (in RESERVE_CHUNK steps), so that
 * writing the held-back frames there later cannot find the disk full.
 * Through a descriptor of our own: SQLite's size hint allocates with one
 * write per 4 KiB block where it was built without posix_fallocate (as
 * Debian's is). The WAL file carries no POSIX locks, so closing that
 * descriptor releases none of SQLite's. */
static int reserve(vfile *f, sqlite3_int64 end)
{
    if (end <= f->reserved)
        return SQLITE_OK;
    sqlite3_int64 want = (end + RESERVE_CHUNK - 1) / RESERVE_CHUNK * RESERVE_CHUNK;
    int e = posix_fallocate(f->fd, (off_t)f->reserved, (off_t)(want - f->reserved));
    if (e == 0) {
        f->reserved = want;
        return SQLITE_OK;
    }
    return e == ENOSPC ? SQLITE_FULL : SQLITE_IOERR_WRITE;
}

static int wal_write(vfile *f, const void *data, int n, sqlite3_int64 off)
{
    int rc;
    size_t size = (size_t)n;
    struct stat st;
    /* The log starts over (its header at 0): another connection may have
     * truncated it since (a TRUNCATE checkpoint), so its space is asked for
     * again. */
    if (off == 0 && fstat(f->fd, &st) == 0 && st.st_size < f->reserved)
        f->reserved = st.st_size;
    if (f->len > 0 && (off != f->buf_off + (sqlite3_int64)f->len || f->len + size > BATCH_MAX) &&
        (rc = flush(f)) != SQLITE_OK)
        return rc;
    if (size > BATCH_MAX)
        return f->real->pMethods->xWrite(f->real, data, n, off);
    if ((rc = reserve(f, off + n)) != SQLITE_OK)
        return rc;
    if (f->len + size > f->cap) {
        size_t cap = f->cap ? f->cap : 64 * 1024;
        while (cap < f->len + size)
            cap *= 2;
        unsigned char *grown = realloc(f->buf, cap);
        if (grown == NULL) {
            /* Without room to hold it, the write goes through now. */
            if ((rc = flush(f)) != SQLITE_OK)
                return rc;
            return f->real->pMethods->xWrite(f->real, data, n, off);
        }
        f->buf = grown;
        f->cap = cap;
    }
    if (f->len == 0)
        f->buf_off = off;
    memcpy(f->buf + f->len, data, size);
    f->len += size;
    return SQLITE_OK;
}

/* Before the file is used as it is: its held-back writes, or the failure
 * that a barrier could not report. */
static int settle(vfile *f)
{
    return f->failed ? f->failed : flush(f);
}

/* --- io methods ---------------------------------------------------------------------- */

static int v_close(sqlite3_file *file)
{
    vfile *f = (vfile *)file;
    (void)flush(f);
    pthread_mutex_lock(&dbs_mu);
    if (f->is_db) {
        for (vfile **p = &dbs; *p; p = &(*p)->next_db)
            if (*p == f) {
                *p = f->next_db;
                break;
            }
        if (f->wal)
            f->wal->db = NULL;
    }
    if (f->db)
        f->db->wal = NULL;
    pthread_mutex_unlock(&dbs_mu);
    free(f->buf);
    if (f->fd >= 0)
        close(f->fd);
    return f->real->pMethods->xClose(f->real);
}

static int v_read(sqlite3_file *file, void *data, int n, sqlite3_int64 off)
{
    vfile *f = (vfile *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, data, n, off);
}

static int v_write(sqlite3_file *file, const void *data, int n, sqlite3_int64 off)
{
    vfile *f = (vfile *)file;
    if (f->failed)
        return f->failed;
    if (f->db != NULL)
        return wal_write(f, data, n, off);
    return f->real->pMethods->xWrite(f->real, data, n, off);
}

static int v_truncate(sqlite3_file *file, sqlite3_int64 size)
{
    vfile *f = (vfile *)file;
    int rc = settle(f);
    if (rc != SQLITE_OK)
        return rc;
    rc = f->real->pMethods->xTruncate(f->real, size);
    if (size < f->reserved)
        f->reserved = size;
    return rc;
}

static int v_sync(sqlite3_file *file, int flags)
{
    vfile *f = (vfile *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int v_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
    vfile *f = (vfile *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int v_lock(sqlite3_file *file, int lock)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xLock(f->real, lock);
}

static int v_unlock(sqlite3_file *file, int lock)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xUnlock(f->real, lock);
}

static int v_check_reserved(sqlite3_file *file, int *out)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int v_file_control(sqlite3_file *file, int op, void *arg)
{
    vfile *f = (vfile *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int v_sector_size(sqlite3_file *file)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int v_device_characteristics(sqlite3_file *file)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int v_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xShmMap(f->real, region, size, extend, out);
}

static int v_shm_lock(sqlite3_file *file, int offset, int n, int flags)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

/* SQLite is about to publish frames to readers: they must be in the file. */
static void v_shm_barrier(sqlite3_file *file)
{
    vfile *f = (vfile *)file;
    vfile *wal = f->wal;
    if (wal != NULL && !wal->failed && wal->len > 0) {
        int rc = flush(wal);
        if (rc != SQLITE_OK) {
            /* The space was allocated when the frames were accepted, so
             * only an I/O error gets here; from now on the log refuses
             * every use, and so does each transaction on this connection. */
            wal->failed = rc;
            topo_log(TOPO_LOG_ERROR, "cache: writing the WAL of %s failed (SQLite error %d)",
                     f->db_name ? f->db_name : "?", rc);
        }
    }
    f->real->pMethods->xShmBarrier(f->real);
}

static int v_shm_unmap(sqlite3_file *file, int delete_flag)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}

static int v_fetch(sqlite3_file *file, sqlite3_int64 off, int n, void **out)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xFetch(f->real, off, n, out);
}

static int v_unfetch(sqlite3_file *file, sqlite3_int64 off, void *p)
{
    vfile *f = (vfile *)file;
    return f->real->pMethods->xUnfetch(f->real, off, p);
}

static const sqlite3_io_methods methods_v3 = {
    3,           v_close,        v_read,          v_write,      v_truncate,
    v_sync,      v_file_size,    v_lock,          v_unlock,     v_check_reserved,
    v_file_control, v_sector_size, v_device_characteristics, v_shm_map, v_shm_lock,
    v_shm_barrier, v_shm_unmap,  v_fetch,         v_unfetch,
};
/* The same for a parent file of an older version: SQLite reads iVersion
 * to know which methods it may call. */
static const sqlite3_io_methods methods_v2 = {
    2,           v_close,        v_read,          v_write,      v_truncate,
    v_sync,      v_file_size,    v_lock,          v_unlock,     v_check_reserved,
    v_file_control, v_sector_size, v_device_characteristics, v_shm_map, v_shm_lock,
    v_shm_barrier, v_shm_unmap,  NULL,            NULL,
};
static const sqlite3_io_methods methods_v1 = {
    1,           v_close,        v_read,          v_write,      v_truncate,
    v_sync,      v_file_size,    v_lock,          v_unlock,     v_check_reserved,
    v_file_control, v_sector_size, v_device_characteristics, NULL, NULL,
    NULL,        NULL,           NULL,            NULL,
};

/* --- the VFS ------------------------------------------------------------------------- */

/* A WAL's database file: the one opened with the name pointer its WAL's
 * name leads back to (SQLite keeps a connection's file names in one block).
 * Not found: the WAL is written through, as by SQLite's own VFS. */
static void link_wal(vfile *f, const char *name)
{
    const char *db_name = sqlite3_filename_database(name);
    pthread_mutex_lock(&dbs_mu);
    for (vfile *d = dbs; d; d = d->next_db)
        if (d->db_name == db_name && d->wal == NULL) {
            d->wal = f;
            f->db = d;
            break;
        }
    pthread_mutex_unlock(&dbs_mu);
}

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
                  int *out_flags)
{
    sqlite3_vfs *parent = parent_of(vfs);
    vfile *f = (vfile *)file;
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->real = (sqlite3_file *)(f + 1);
    int rc = parent->xOpen(parent, name, f->real, flags, out_flags);
    const sqlite3_io_methods *m = f->real->pMethods;
    if (m == NULL) {
        f->base.pMethods = NULL;
        return rc;
    }
    f->base.pMethods = m->iVersion >= 3 ? &methods_v3 : m->iVersion == 2 ? &methods_v2
                                                                         : &methods_v1;
    if (rc != SQLITE_OK || name == NULL)
        return rc;
    if (flags & SQLITE_OPEN_MAIN_DB) {
        f->is_db = 1;
        f->db_name = name;
        pthread_mutex_lock(&dbs_mu);
        f->next_db = dbs;
        dbs = f;
        pthread_mutex_unlock(&dbs_mu);
    } else if ((flags & SQLITE_OPEN_WAL) && (flags & SQLITE_OPEN_READWRITE)) {
        f->fd = open(name, O_RDWR | O_CLOEXEC);
        if (f->fd >= 0 && m->xFileSize(f->real, &f->reserved) == SQLITE_OK)
            link_wal(f, name);
        if (f->db == NULL && f->fd >= 0) {
            close(f->fd);
            f->fd = -1;
        }
    }
    return rc;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xDelete(p, name, sync_dir);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xAccess(p, name, flags, out);
}

static int v_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xFullPathname(p, name, n, out);
}

static void *v_dl_open(sqlite3_vfs *vfs, const char *name)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xDlOpen(p, name);
}

static void v_dl_error(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    p->xDlError(p, n, out);
}

static void (*v_dl_sym(sqlite3_vfs *vfs, void *lib, const char *sym))(void)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xDlSym(p, lib, sym);
}

static void v_dl_close(sqlite3_vfs *vfs, void *lib)
{
    sqlite3_vfs *p = parent_of(vfs);
    p->xDlClose(p, lib);
}

static int v_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xRandomness(p, n, out);
}

static int v_sleep(sqlite3_vfs *vfs, int us)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xSleep(p, us);
}

static int v_current_time(sqlite3_vfs *vfs, double *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xCurrentTime(p, out);
}

static int v_get_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xGetLastError ? p->xGetLastError(p, n, out) : 0;
}

static int v_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    sqlite3_vfs *p = parent_of(vfs);
    return p->xCurrentTimeInt64(p, out);
}

int cache_vfs_register(const char *name, sqlite3_vfs *parent)
{
    if (name == NULL || parent == NULL || parent->iVersion < 2)
        return SQLITE_MISUSE;
    /* Registered for the life of the process: SQLite keeps the pointer. */
    sqlite3_vfs *v = calloc(1, sizeof *v);
    if (v == NULL)
        return SQLITE_NOMEM;
    v->iVersion = 2;
    v->szOsFile = (int)sizeof(vfile) + parent->szOsFile;
    v->mxPathname = parent->mxPathname;
    v->zName = name;
    v->pAppData = parent;
    v->xOpen = v_open;
    v->xDelete = v_delete;
    v->xAccess = v_access;
    v->xFullPathname = v_full_pathname;
    v->xDlOpen = v_dl_open;
    v->xDlError = v_dl_error;
    v->xDlSym = v_dl_sym;
    v->xDlClose = v_dl_close;
    v->xRandomness = v_randomness;
    v->xSleep = v_sleep;
    v->xCurrentTime = v_current_time;
    v->xGetLastError = v_get_last_error;
    v->xCurrentTimeInt64 = v_current_time_int64;
    int rc = sqlite3_vfs_register(v, 0);
    if (rc != SQLITE_OK)
        free(v);
    return rc;
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static const char *default_name;

static void register_default(void)
{
    sqlite3_vfs *parent = sqlite3_vfs_find(NULL);
    int rc = parent ? cache_vfs_register("topo-wal-batch", parent) : SQLITE_ERROR;
    if (rc == SQLITE_OK)
        default_name = "topo-wal-batch";
    else
        topo_log(TOPO_LOG_WARN, "cache: WAL batching off: its VFS could not be registered "
                                "(SQLite error %d)",
                 rc);
}

const char *cache_vfs_name(void)
{
    pthread_once(&default_once, register_default);
    return default_name;
}
