/* libFuzzer harness for the whole admission handler (topo_admission_handle):
 * any body gets an answer (or a clean error), never a crash, a leak or a
 * corrupted reservation table. The handler places on a small live snapshot
 * (2 racks x 2 nodes x 8 GPUs) with reservations in an in-memory cache,
 * kept across inputs as a running webhook keeps them; small caps on room
 * held for pods not created yet and a ResourceQuota for namespaces named
 * "quota-*" (issue 9), so those paths run too; every fifth input arrives
 * past its deadline; record keys, so that seals made for the seeds verify
 * (issue 27: sealed and forged annotations); nodes that fail and recover
 * between inputs (issue 28: failed-node replacement); every other input goes
 * to a second handler with packing on (issue 32: pods without topology
 * requests steered, namespaces "opted-*" opted out). Seeds:
 * fixtures/admission/<case>/request.json and
 * fixtures/fuzz/handler (fixtures/fuzz/README.md). */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/live.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const levels[] = {"topology.topo.io/rack", "kubernetes.io/hostname"};

static topo_admission_ctx *ctx, *ctx_pack;

static int opted_out(void *payload, const char *ns)
{
    (void)payload;
    return strncmp(ns, "opted-", 6) == 0;
}

/* 8 GPUs and 4 pods of room in "quota-*" namespaces; no quota elsewhere. */
static int quota(void *payload, const char *ns, topo_pool *pool,
                 const topo_admission_quota_room **out, size_t *n)
{
    (void)payload;
    if (strncmp(ns, "quota-", 6) != 0)
        return 0;
    topo_admission_quota_room *r = topo_pool_calloc(pool, 2, sizeof(*r));
    if (r == NULL)
        return TOPO_ENOMEM;
    r[0] = (topo_admission_quota_room){"nvidia.com/gpu", 8};
    r[1] = (topo_admission_quota_room){"pods", 4};
    *out = r;
    *n = 2;
    return 1;
}

static topo_live *live;

/* Node i (0..3, racks r0 and r1) in one of five states: healthy, NotReady,
 * without a Ready condition, an untolerated NoExecute taint, cordoned. */
static void node_state(int i, int state)
{
    static const topo_taint fault = {"example.com/gpu-fault", "", "NoExecute"};
    topo_err err = TOPO_ERR_INIT;
    char name[16], rack[16];
    snprintf(name, sizeof name, "n%d", i);
    snprintf(rack, sizeof rack, "r%d", i / 2);
    topo_kv labels[2] = {{levels[0], rack}, {levels[1], name}};
    topo_resource alloc[3] = {{"cpu", 64000}, {"nvidia.com/gpu", 8}, {"pods", 110}};
    topo_node_spec n = {name,  labels, 2, alloc, 3, state == 3 ? &fault : NULL, state == 3,
                        state == 4, state == 0 || state >= 3, state == 2};
    if (topo_live_upsert_node(live, &n, &err) != 0)
        abort();
}

static void setup(void)
{
    static topo_cache *cache, *cache_pack;
    topo_err err = TOPO_ERR_INIT;
    topo_snapshot_opts so = {"default", levels, 2, NULL, 0};
    if (topo_live_create(&live, &so, &err) != 0 ||
        topo_cache_open(&cache, ":memory:", NULL, &err) != 0)
        abort();
    for (int i = 0; i < 4; i++)
        node_state(i, 0);
    if (topo_live_commit(live, &err) != 0)
        abort();
    topo_admission_topology t = {"default", levels, 2, NULL, 0, TOPO_ADMISSION_POLICY_GATE, live, 0};
    topo_admission_opts o = {0};
    o.topologies = &t;
    o.ntopologies = 1;
    o.cache = cache;
    static const topo_resource per_ns[] = {{"pods", 16}, {"nvidia.com/gpu", 24}};
    static const topo_resource all[] = {{"pods", 24}};
    o.unclaimed_cap_namespace = per_ns;
    o.nunclaimed_cap_namespace = 2;
    o.unclaimed_cap_global = all;
    o.nunclaimed_cap_global = 1;
    o.quota = quota;
    /* the key fixtures/fuzz/handler/i27-* are sealed with */
    static const char key[] = "fuzz_handler record key, 32 bytes";
    static topo_keyring keys = TOPO_KEYRING_INIT;
    if (topo_keyring_add(&keys, key, sizeof key - 1, "fuzz", &err) != 0)
        abort();
    o.record_keys = &keys;
    if (topo_admission_ctx_create(&ctx, &o, &err) != 0)
        abort();
    /* the same with packing at the rack level, its own reservations */
    static const char *const gpu[] = {"nvidia.com/gpu", "example.com/accel"};
    topo_admission_packing pk = {gpu, 2, TOPO_ADMISSION_PACKING_PREFERRED};
    t.npacking_levels = 1;
    o.packing = &pk;
    o.ns_packing_off = opted_out;
    if (topo_cache_open(&cache_pack, ":memory:", NULL, &err) != 0)
        abort();
    o.cache = cache_pack;
    if (topo_admission_ctx_create(&ctx_pack, &o, &err) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    if (ctx == NULL)
        setup();
    /* Nodes fail and come back as inputs arrive (issue 28): a PodSet placed
     * on a node that then fails is repaired by a later pod of it. */
    if (size % 3 == 0) {
        topo_err err = TOPO_ERR_INIT;
        node_state((int)(size / 3 % 4), (int)(size / 12 % 5));
        if (topo_live_commit(live, &err) != 0)
            abort();
    }
    int64_t deadline = 0;
    if (size % 5 == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        deadline = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec; /* passed on arrival */
    }
    if (topo_admission_handle_until(size % 2 ? ctx_pack : ctx, deadline, (const char *)data,
                                    size, &out, &len, &status) == 0 &&
        (out == NULL || status < 200 || status > 599))
        abort(); /* an answer always has a body and an HTTP status */
    free(out);
    return 0;
}
