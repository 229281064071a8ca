/* Scratch directories for tests (tmpdir.h). */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */

#include "support/tmpdir.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

int topo_test_tmpdir_make(char *dir, size_t size, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(dir, size, "%s/topo-%s-XXXXXX", tmp && tmp[0] ? tmp : "/tmp", tag);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

int topo_test_tmpdir_remove(const char *dir)
{
    /* Depth first (a directory after its entries), links not followed. */
    return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}
