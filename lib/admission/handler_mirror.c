/* The reserved capacity the admission handler holds in its topologies'
 * live snapshots, kept in line with the cache (topo_admission_tick). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "topo/admission.h"
#include "topo/array.h"

#include "handler_internal.h"
#include "topo/codec.h"
#include "topo/engine.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/strmap.h"

/* --- the live snapshots' reserved capacity ------------------------------------------- */

static char *pushed_key(const char *id, const char *const *values, size_t n)
{
    size_t len = strlen(id) + 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(values[i]) + 1;
    char *k = malloc(len);
    if (k == NULL)
        return NULL;
    char *p = k;
    p += sprintf(p, "%s", id);
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "|%s", values[i]);
    return k;
}

/* Sets what topology t's live holds under key (count 0: nothing). mu held. */
int adm_push(topo_admission_ctx *ctx, size_t t, const char *id, const char *const *values,
             size_t nvalues, int32_t count, const topo_resource *req, size_t nreq, topo_err *err)
{
    char *key = pushed_key(id, values, nvalues);
    if (key == NULL)
        return topo_err_nomem(err, NULL);
    int32_t at = topo_strmap_get(ctx->pushed_index, key);
    topo_live *live = ctx->topos[t].t.live;
    int rc;
    if (at >= 0 && ctx->pushed[at].count == count && ctx->pushed[at].topo == t) {
        ctx->pushed[at].seen = 1;
        free(key);
        return 0;
    }
    if (count <= 0) {
        rc = at >= 0 ? topo_live_unreserve_now(ctx->topos[ctx->pushed[at].topo].t.live, key, err)
                     : 0;
        if (at >= 0 && rc == 0) {
            free(ctx->pushed[at].key);
            topo_strmap_remove(ctx->pushed_index, key);
            ctx->pushed[at] = ctx->pushed[--ctx->npushed];
            if ((size_t)at < ctx->npushed)
                topo_strmap_put(ctx->pushed_index, ctx->pushed[at].key, at);
        }
        free(key);
        return rc;
    }
    if ((rc = topo_live_reserve_now(live, key, values, nvalues, count, req, nreq, err)) < 0) {
        free(key);
        return rc;
    }
    if (at >= 0) {
        ctx->pushed[at].count = count;
        ctx->pushed[at].topo = t;
        ctx->pushed[at].seen = 1;
        free(key);
        return 0;
    }
    if (topo_array_reserve((void **)&ctx->pushed, &ctx->cap_pushed, ctx->npushed + 1,
                           sizeof(*ctx->pushed)) != 0) {
        topo_live_unreserve_now(live, key, NULL);
        free(key);
        return topo_err_nomem(err, NULL);
    }
    if (topo_strmap_put(ctx->pushed_index, key, (int32_t)ctx->npushed) < 0) {
        topo_live_unreserve_now(live, key, NULL);
        free(key);
        return topo_err_nomem(err, NULL);
    }
    ctx->pushed[ctx->npushed++] = (pushed){key, t, count, 1};
    return 0;
}

/* A reservation id is "<topology name>.<random>": its topology survives a
 * restart without another lookup. */
long adm_topology_of_id(const topo_admission_ctx *ctx, const char *id)
{
    const char *dot = strchr(id, '.');
    size_t n = dot ? (size_t)(dot - id) : 0;
    for (size_t i = 0; i < ctx->ntopos; i++)
        if (strlen(ctx->topos[i].t.name) == n && strncmp(ctx->topos[i].t.name, id, n) == 0)
            return (long)i;
    return -1;
}

static int resync_one(const topo_cache_reserved *r, void *payload)
{
    topo_admission_ctx *ctx = payload;
    long t = adm_topology_of_id(ctx, r->reservation_id);
    if (t < 0)
        return 0; /* a topology no longer configured: nothing to charge */
    topo_err err = TOPO_ERR_INIT;
    if (adm_push(ctx, (size_t)t, r->reservation_id, r->values, r->nvalues, r->count, r->requests,
                 r->nrequests, &err) < 0) {
        topo_log(TOPO_LOG_WARN, "reservation %s: capacity not held: %s", r->reservation_id,
                 err.text);
        if (err.code == TOPO_ENOMEM)
            return TOPO_ENOMEM;
    }
    return 0;
}

int adm_resync(topo_admission_ctx *ctx, int64_t now, topo_err *err)
{
    for (size_t i = 0; i < ctx->npushed; i++)
        ctx->pushed[i].seen = 0;
    int rc = topo_cache_foreach_reserved(ctx->cache, now, resync_one, ctx, err);
    if (rc != 0)
        return rc < 0 ? rc : topo_err_nomem(err, NULL);
    for (size_t i = ctx->npushed; i-- > 0;)
        if (!ctx->pushed[i].seen) {
            topo_err uerr = TOPO_ERR_INIT;
            char *key = ctx->pushed[i].key;
            if (topo_live_unreserve_now(ctx->topos[ctx->pushed[i].topo].t.live, key, &uerr) < 0)
                topo_log(TOPO_LOG_WARN, "%s: capacity not released: %s", key, uerr.text);
            topo_strmap_remove(ctx->pushed_index, key);
            free(key);
            ctx->pushed[i] = ctx->pushed[--ctx->npushed];
            if (i < ctx->npushed)
                topo_strmap_put(ctx->pushed_index, ctx->pushed[i].key, (int32_t)i);
        }
    /* Counted by SQL, not by reading every reservation back. */
    topo_cache_stats st;
    if (topo_cache_get_stats(&st, ctx->cache, NULL) == 0)
        ctx->reservations = st.reservations;
    ctx->next_resync = now + RESYNC_MAX_S;
    return 0;
}
