/* The reservations of PodSets placed or looked up lately, in memory: the
 * other pods of a PodSet (63 of a 64-pod Job) find theirs without reading
 * it back from the cache and parsing its JSON each time. A reservation is
 * kept whole except for its slots' claims, which change and which a claim
 * reads in the cache (topo_cache_reservation_claim); nothing else of it
 * changes while it lives. What can go stale is whether it lives: expiry is
 * checked on every lookup (adm_lookup), our own deletions clear the memo (the housekeeping tick),
 * and another connection's (a replica's reservation adopted in place of
 * ours) show as a claim that finds no reservation, after which the caller
 * clears the memo and reads the cache (handler_place.c). Everything under mu. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "handler_internal.h"
#include "topo/strmap.h"

/* Entries kept at most; the memo starts over past it (a PodSet's pods come
 * within seconds of its first). */
#define MEMO_MAX 1024

/* A deep copy of src into pool, its slots unclaimed (claims are read in the
 * cache); the slots of one domain share its values, as the cache's do. */
static int copy_reservation(topo_cache_reservation *dst, const topo_cache_reservation *src,
                            topo_pool *pool)
{
    topo_resource *req = topo_pool_calloc(pool, src->nrequests + 1, sizeof(*req));
    topo_cache_slot *slots = topo_pool_calloc(pool, src->nslots + 1, sizeof(*slots));
    memset(dst, 0, sizeof(*dst));
    if (req == NULL || slots == NULL || (dst->id = topo_pool_strdup(pool, src->id)) == NULL ||
        (dst->podset_key = topo_pool_strdup(pool, src->podset_key)) == NULL ||
        (dst->topology_name = topo_pool_strdup(pool, src->topology_name)) == NULL ||
        (dst->levels = adm_dup_strings(pool, src->levels, src->nlevels)) == NULL ||
        (dst->assignment_levels =
             adm_dup_strings(pool, src->assignment_levels, src->nassignment_levels)) == NULL ||
        (dst->assignment_json = topo_pool_strdup(pool, src->assignment_json)) == NULL ||
        (dst->shape = topo_pool_strdup(pool, src->shape ? src->shape : "")) == NULL ||
        (dst->request = topo_pool_strdup(pool, src->request ? src->request : "")) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < src->nrequests; i++) {
        if ((req[i].name = topo_pool_strdup(pool, src->requests[i].name)) == NULL)
            return TOPO_ENOMEM;
        req[i].amount = src->requests[i].amount;
    }
    for (size_t i = 0; i < src->nslots; i++) {
        const topo_cache_slot *s = &src->slots[i];
        slots[i].index = s->index;
        slots[i].nvalues = s->nvalues;
        if (i > 0 && s->values == src->slots[i - 1].values)
            slots[i].values = slots[i - 1].values;
        else if ((slots[i].values = adm_dup_strings(pool, s->values, s->nvalues)) == NULL)
            return TOPO_ENOMEM;
    }
    dst->nlevels = src->nlevels;
    dst->nassignment_levels = src->nassignment_levels;
    dst->requests = req;
    dst->nrequests = src->nrequests;
    dst->created_at = src->created_at;
    dst->expires_at = src->expires_at;
    dst->unclaimed_ttl = src->unclaimed_ttl;
    dst->claimed_at = src->claimed_at;
    dst->gen_term = src->gen_term;
    dst->gen_seq = src->gen_seq;
    if (src->ndomain > 0 &&
        (dst->domain = adm_dup_strings(pool, src->domain, src->ndomain)) == NULL)
        return TOPO_ENOMEM;
    dst->ndomain = src->ndomain;
    dst->slots = slots;
    dst->nslots = src->nslots;
    return 0;
}

void adm_memo_clear(topo_admission_ctx *ctx)
{
    if (ctx->nmemo == 0)
        return;
    topo_strmap_free(ctx->memo_index);
    ctx->memo_index = NULL;
    topo_pool_clear(ctx->memo_pool);
    ctx->nmemo = 0;
}

void adm_memo_free(topo_admission_ctx *ctx)
{
    topo_strmap_free(ctx->memo_index);
    topo_pool_free(ctx->memo_pool);
    free(ctx->memo);
}

int adm_memo_get(topo_admission_ctx *ctx, const char *key, topo_cache_reservation *out,
                 topo_pool *pool)
{
    int32_t at = ctx->memo_index != NULL ? topo_strmap_get(ctx->memo_index, key) : -1;
    if (at < 0)
        return 0;
    /* Copied out: the memo may start over while the answer is built. */
    return copy_reservation(out, &ctx->memo[at], pool) < 0 ? TOPO_ENOMEM : 1;
}

void adm_memo_put(topo_admission_ctx *ctx, const topo_cache_reservation *r)
{
    if (ctx->nmemo >= MEMO_MAX)
        adm_memo_clear(ctx);
    if (ctx->memo == NULL && (ctx->memo = calloc(MEMO_MAX, sizeof(*ctx->memo))) == NULL)
        return;
    if (ctx->memo_pool == NULL && (ctx->memo_pool = topo_pool_create()) == NULL)
        return;
    if (ctx->memo_index == NULL && (ctx->memo_index = topo_strmap_create(64)) == NULL)
        return;
    int32_t at = topo_strmap_get(ctx->memo_index, r->podset_key);
    size_t i = at >= 0 ? (size_t)at : ctx->nmemo;
    /* Best effort: without memory the memo starts over, and lookups read
     * the cache. */
    if (copy_reservation(&ctx->memo[i], r, ctx->memo_pool) < 0 ||
        (at < 0 && topo_strmap_put(ctx->memo_index, ctx->memo[i].podset_key, (int32_t)i) < 0)) {
        ctx->nmemo = i < ctx->nmemo ? ctx->nmemo : i + 1;
        adm_memo_clear(ctx);
        return;
    }
    if (at < 0)
        ctx->nmemo++;
}
