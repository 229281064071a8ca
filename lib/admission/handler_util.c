/* The helpers every handler file may call, calling no other handler file:
 * the ctx's clock, a placement that failed here counted, string arrays
 * copied into a pool. At the bottom of handler_internal.h's order, so that
 * the context (handler_ctx.c), the memo and the mirror use them without
 * calling each other. */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "handler_internal.h"
#include "topo/pool.h"

int64_t adm_now_s(topo_admission_ctx *ctx)
{
    return ctx->clock != NULL ? ctx->clock(ctx->clock_payload) : (int64_t)time(NULL);
}

const char **adm_dup_strings(topo_pool *pool, const char *const *s, size_t n)
{
    const char **d = topo_pool_calloc(pool, n + 1, sizeof(*d));
    for (size_t i = 0; d != NULL && i < n; i++)
        if ((d[i] = topo_pool_strdup(pool, s[i])) == NULL)
            return NULL;
    return d;
}

/* A placement that failed here, not in the cluster: counted, and for
 * readiness. */
void adm_failed_locally(topo_admission_ctx *ctx)
{
    atomic_fetch_add(&ctx->errors, 1);
    atomic_fetch_add(&ctx->failing, 1);
    atomic_store(&ctx->last_failure, adm_now_s(ctx));
}
