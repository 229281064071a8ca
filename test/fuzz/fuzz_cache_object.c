/* libFuzzer harness for the objects the cache filler stores
 * (lib/cache/cache_objects.c): each input is a Node, Pod or Job as the API
 * server sends it in a list or a watch event, read as each of the three
 * kinds in turn (topo_cache_upsert_node/pod/job), then as a watch event
 * line of each kind (topo_cache_apply_event). Names, quantities, labels,
 * taints, requests, phases, creation and deletion times
 * (metadata.creationTimestamp and deletionTimestamp, RFC 3339) and a node's
 * Ready condition (or its absence) are all decoded there. Any bytes give a
 * stored row or an error with a message, never a crash, a leak, or a cache
 * that no longer builds its snapshot or finds a node by its hostname.
 * Seeds: fixtures/fuzz/watch and fixtures/fuzz/objects. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const LEVELS[] = {"topology.topo.io/rack", "kubernetes.io/hostname"};

static topo_cache *cache(void)
{
    static topo_cache *c;
    topo_err err = TOPO_ERR_INIT;
    topo_cache_opts o = {0};
    if (c == NULL && topo_cache_open(&c, ":memory:", &o, &err) < 0)
        abort();
    return c;
}

/* Empties the cache after each input (an empty relist of every kind, as
 * after a 410 with nothing left): a crash reproduces from its one input,
 * and rows do not pile up over millions of runs. Opening a fresh cache
 * instead costs more than the rest of a run. */
static void empty(topo_cache *c, const topo_cache_kind *kinds, size_t n)
{
    topo_err err = TOPO_ERR_INIT;
    if (topo_cache_begin(c, &err) < 0)
        abort();
    for (size_t i = 0; i < n; i++)
        if (topo_cache_relist_begin(c, kinds[i], &err) < 0 ||
            topo_cache_relist_end(c, kinds[i], NULL, &err) < 0)
            abort();
    if (topo_cache_commit(c, &err) < 0)
        abort();
}

/* An error: a negative code, the same in err, and a message. */
static void check(int rc, const topo_err *err)
{
    if (rc < 0 && (err->code != rc || err->text[0] == '\0'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_cache *c = cache();
    const char *text = (const char *)data;
    topo_err err = TOPO_ERR_INIT;

    check(topo_cache_upsert_node(c, text, size, &err), &err);
    topo_err_clear(&err);
    check(topo_cache_upsert_pod(c, text, size, &err), &err);
    topo_err_clear(&err);
    check(topo_cache_upsert_job(c, text, size, &err), &err);
    static const topo_cache_kind kinds[] = {TOPO_CACHE_NODES, TOPO_CACHE_PODS, TOPO_CACHE_JOBS};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        topo_err_clear(&err);
        check(topo_cache_apply_event(c, kinds[i], text, size, &err), &err);
    }

    /* Whatever was stored, the engine's snapshot still builds from it. */
    topo_cache_snapshot_opts so = {.snapshot = {.levels = LEVELS, .nlevels = 2}};
    topo_snapshot *snap = NULL;
    topo_err_clear(&err);
    if (topo_cache_snapshot(&snap, c, &so, NULL, &err) < 0)
        abort();
    topo_snapshot_free(snap);
    empty(c, kinds, sizeof kinds / sizeof kinds[0]);
    return 0;
}
