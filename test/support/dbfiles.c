/* Test and benchmark helpers around SQLite cache files (dbfiles.h). */
#define _POSIX_C_SOURCE 200809L

#include "support/dbfiles.h"
#include "support/tmpdir.h"

#include <stdio.h>
#include <unistd.h>

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

void topo_test_cachedir_remove(const topo_test_cachedir *d)
{
    topo_test_remove_db(d->path);
    rmdir(d->dir);
}
