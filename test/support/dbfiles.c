/* Test and benchmark helpers around SQLite cache files (dbfiles.h). */
#define _POSIX_C_SOURCE 200809L

#include "support/dbfiles.h"

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
