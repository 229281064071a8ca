/* topo_admission_tick (topo/admission.h): the periodic work of the
 * admission handler, off the requests' path: expired reservations and pod
 * groups collected, the memo started over, the capacity the live snapshots
 * hold brought in line with the cache (handler_mirror.c) when it changed,
 * and the cache's WAL checkpointed. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "handler_internal.h"
#include "topo/admission.h"
#include "topo/cache.h"

int topo_admission_tick(topo_admission_ctx *ctx, topo_err *err)
{
    int64_t now = adm_now_s(ctx), dv = 0;
    size_t gone = 0;
    int rc;
    pthread_mutex_lock(&ctx->mu);
    /* Reservations go now (expired), or went through another connection:
     * the memo starts over from the cache. */
    adm_memo_clear(ctx);
    if ((rc = topo_cache_reservation_gc(ctx->cache, now, &gone, err)) == 0 &&
        (rc = topo_cache_group_expire(ctx->cache, now, NULL, err)) == 0 &&
        (rc = topo_cache_data_version(ctx->cache, &dv, err)) == 0 &&
        (gone > 0 || dv != ctx->data_version || now >= ctx->next_resync)) {
        ctx->data_version = dv;
        rc = adm_resync(ctx, now, err);
    }
    /* The owner checkpoints the WAL from its own connection beforehand,
     * off this lock; what was written meanwhile is copied here, with no
     * request writing, so the checkpoint completes and the next write
     * starts the WAL over instead of growing it for as long as requests
     * keep coming. */
    if (rc == 0)
        rc = topo_cache_checkpoint(ctx->cache, NULL, err);
    pthread_mutex_unlock(&ctx->mu);
    if (rc < 0)
        adm_failed_locally(ctx);
    atomic_store(&ctx->last_tick, now);
    return rc;
}
