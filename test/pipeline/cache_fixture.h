/* A cache file in a fresh temporary directory for the sync tests that keep
 * facts in it (test_facts_store.c, test_facts_volume.c): cmocka setup and
 * teardown, (re)opening the file, and failing on an error code. */
#ifndef TOPO_TEST_SYNC_CACHE_FIXTURE_H
#define TOPO_TEST_SYNC_CACHE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/cache.h"
#include "topo/error.h"

typedef struct fx {
    char dir[256];
    char path[300];
    topo_cache *cache;
} fx;

static inline int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    const char *tmp = getenv("TMPDIR");
    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "%s/topo-sync-facts-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/cache.db", f->dir);
    *state = f;
    return 0;
}

static inline void file_path(char *out, size_t size, const fx *f, const char *suffix)
{
    snprintf(out, size, "%s%s", f->path, suffix);
}

static inline int teardown(void **state)
{
    fx *f = *state;
    char p[400];
    topo_cache_close(f->cache);
    unlink(f->path);
    file_path(p, sizeof(p), f, "-wal");
    unlink(p);
    file_path(p, sizeof(p), f, "-shm");
    unlink(p);
    rmdir(f->dir);
    free(f);
    return 0;
}

static inline topo_cache *open_cache(fx *f)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache_close(f->cache);
    f->cache = NULL;
    if (topo_cache_open(&f->cache, f->path, NULL, &err) < 0)
        fail_msg("open: %s", err.text);
    return f->cache;
}

static inline void must(int rc, const topo_err *err)
{
    if (rc != 0)
        fail_msg("%s (%s)", err->text, topo_err_name(rc));
}

#endif
