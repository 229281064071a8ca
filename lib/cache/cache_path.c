/* The cache file's path as the file system sees it (cache_internal.h): what
 * SQLite reports as "unable to open database file" or "disk I/O error"
 * named for an operator (a directory or a FIFO at --db, a directory the
 * cache cannot write its -wal and -shm in). */
#define _POSIX_C_SOURCE 200809L

#include "cache_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cache_path_dir(char *dir, size_t size, const char **base, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        *base = path;
        return snprintf(dir, size, ".") < (int)size ? 0 : -1;
    }
    *base = slash + 1;
    size_t n = (size_t)(slash - path);
    if (n == 0)
        n = 1; /* the root */
    if (n >= size)
        return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return "not a regular file";
}

int cache_path_check(const char *path, topo_err *err)
{
    struct stat st;
    if (strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0 || stat(path, &st) != 0)
        return 0; /* a new file, or SQLite's own names: SQLite says */
    if (S_ISREG(st.st_mode))
        return 0;
    return topo_err_set(err, TOPO_EINVALID,
                        "cache: %s is %s: the cache (--db) must be a regular file (or a path "
                        "where one can be created)",
                        path, kind_of(st.st_mode));
}

void cache_path_explain(const char *path, topo_err *err)
{
    char dir[4096];
    const char *base = NULL;
    if (err == NULL || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0 ||
        cache_path_dir(dir, sizeof dir, &base, path) != 0 || access(dir, W_OK) == 0)
        return;
    int e = errno;
    topo_err_wrap(err,
                  "cache: directory %s is not writable (%s): the cache needs to create and write "
                  "%s, %s-wal and %s-shm there (and to move a corrupt file aside); give --db a "
                  "path in a writable directory (an emptyDir or a writable volume)",
                  dir, strerror(e), base, base, base);
}
