/* The admission handler's context: create/free, stats, readiness, the
 * per-namespace report of room held for pods not created yet. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "topo/admission.h"

#include "handler_internal.h"
#include "topo/codec.h"
#include "topo/engine.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/strmap.h"

int topo_admission_policy_parse(topo_admission_policy *out, const char *s)
{
    if (s == NULL)
        return TOPO_EINVALID;
    if (strcmp(s, "gate") == 0)
        *out = TOPO_ADMISSION_POLICY_GATE;
    else if (strcmp(s, "deny") == 0)
        *out = TOPO_ADMISSION_POLICY_DENY;
    else if (strcmp(s, "ignore") == 0)
        *out = TOPO_ADMISSION_POLICY_IGNORE;
    else
        return TOPO_EINVALID;
    return 0;
}

const char *const topo_admission_replace_outcome_names[TOPO_ADMISSION_REPLACE_OUTCOMES] = {
    [TOPO_ADMISSION_REPLACED] = "replaced",
    [TOPO_ADMISSION_REPLACE_NO_ROOM] = "no_room",
    [TOPO_ADMISSION_REPLACE_WAITING] = "waiting",
    [TOPO_ADMISSION_REPLACE_FAIL_FAST] = "fail_fast",
    [TOPO_ADMISSION_REPLACE_NEW] = "new",
};

void topo_admission_set_term(topo_admission_ctx *ctx, int64_t term)
{
    atomic_store(&ctx->term, term);
}

int topo_admission_ready(topo_admission_ctx *ctx, char *why, size_t why_size)
{
    uint32_t n = atomic_load(&ctx->failing);
    int64_t ago = adm_now_s(ctx) - atomic_load(&ctx->last_failure);
    /* Unready while they keep failing; ready again a while after the last
     * failure, so that requests try again (nothing else would). */
    if (n < TOPO_ADMISSION_FAILING_UNREADY || ago >= TOPO_ADMISSION_FAILING_RETRY_S)
        return 1;
    if (why != NULL && why_size > 0)
        snprintf(why, why_size,
                 "%u placements in a row failed here (the cache), the last %llds ago", (unsigned)n,
                 (long long)ago);
    return 0;
}

/* --- create / free ------------------------------------------------------------------- */

void topo_admission_ctx_free(topo_admission_ctx *ctx)
{
    if (ctx == NULL)
        return;
    for (size_t i = 0; i < ctx->npushed; i++) {
        topo_live_unreserve_now(ctx->topos[ctx->pushed[i].topo].t.live, ctx->pushed[i].key, NULL);
        free(ctx->pushed[i].key);
    }
    free(ctx->pushed);
    topo_strmap_free(ctx->pushed_index);
    free(ctx->topos);
    topo_pool_free(ctx->pool);
    topo_pool_free(ctx->engine_pool);
    adm_memo_free(ctx);
    adm_events_free(ctx);
    adm_repair_free(ctx);
    pthread_mutex_destroy(&ctx->events_mu);
    pthread_mutex_destroy(&ctx->mu);
    free(ctx);
}

static int copy_topology(topology *dst, const topo_admission_topology *src, topo_pool *pool,
                         size_t i, topo_err *err)
{
    if (src->name == NULL || src->name[0] == '\0' || strchr(src->name, '.') != NULL ||
        strchr(src->name, '|') != NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "admission: topologies[%zu].name: required, without '.' or '|'", i);
    if (src->nlevels == 0 || src->nlevels > TOPO_MAX_LEVELS || src->levels == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission: topologies[%zu].levels: 1..%d levels",
                            i, TOPO_MAX_LEVELS);
    if (src->live == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission: topologies[%zu]: no live snapshot", i);
    if (src->npacking_levels >= src->nlevels)
        return topo_err_set(err, TOPO_EINVALID,
                            "admission: topologies[%zu].npacking_levels: below its %zu levels "
                            "(packing never keeps its lowest level whole)",
                            i, src->nlevels);
    dst->t = *src;
    topo_kv *kv = topo_pool_calloc(pool, src->nnode_labels + 1, sizeof(*kv));
    if ((dst->t.name = topo_pool_strdup(pool, src->name)) == NULL || kv == NULL ||
        (dst->t.levels = adm_dup_strings(pool, src->levels, src->nlevels)) == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t k = 0; k < src->nnode_labels; k++)
        if ((kv[k].key = topo_pool_strdup(pool, src->node_labels[k].key)) == NULL ||
            (kv[k].value = topo_pool_strdup(pool, src->node_labels[k].value)) == NULL)
            return topo_err_nomem(err, NULL);
    dst->t.node_labels = kv;
    return 0;
}

static const topo_resource *copy_resources(const topo_resource *src, size_t n, topo_pool *pool)
{
    topo_resource *dst = topo_pool_calloc(pool, n + 1, sizeof(*dst));
    for (size_t i = 0; dst != NULL && i < n; i++) {
        dst[i].amount = src[i].amount;
        if ((dst[i].name = topo_pool_strdup(pool, src[i].name)) == NULL)
            return NULL;
    }
    return dst;
}

/* The caps on unclaimed capacity (pods only, at their defaults, when none
 * are given) and the quota lookup. */
static int copy_caps(topo_fairness *f, const topo_admission_opts *o, topo_pool *pool, topo_err *err)
{
    static const topo_resource ns_pods = {"pods", TOPO_ADMISSION_UNCLAIMED_PODS_NAMESPACE_DEFAULT};
    static const topo_resource all_pods = {"pods", TOPO_ADMISSION_UNCLAIMED_PODS_GLOBAL_DEFAULT};
    const topo_resource *cn = o->nunclaimed_cap_namespace ? o->unclaimed_cap_namespace : &ns_pods;
    const topo_resource *cg = o->nunclaimed_cap_global ? o->unclaimed_cap_global : &all_pods;
    size_t nn = o->nunclaimed_cap_namespace ? o->nunclaimed_cap_namespace : 1;
    size_t ng = o->nunclaimed_cap_global ? o->nunclaimed_cap_global : 1;
    for (size_t i = 0; i < nn + ng; i++) {
        const topo_resource *r = i < nn ? &cn[i] : &cg[i - nn];
        if (r->name == NULL || r->name[0] == '\0' || r->amount < 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "admission: a cap on unclaimed capacity "
                                "needs a resource name and an amount >= 0");
    }
    f->caps_namespace = copy_resources(cn, nn, pool);
    f->caps_global = copy_resources(cg, ng, pool);
    if (f->caps_namespace == NULL || f->caps_global == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "admission: out of memory");
    f->ncaps_namespace = nn;
    f->ncaps_global = ng;
    f->quota = o->quota;
    f->quota_payload = o->quota_payload;
    return 0;
}

int topo_admission_ctx_create(topo_admission_ctx **out, const topo_admission_opts *opts,
                              topo_err *err)
{
    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission: no options");
    if (opts->ntopologies == 0 || opts->ntopologies > TOPO_MAX_TOPOLOGIES)
        return topo_err_set(err, TOPO_EINVALID, "admission: 1..%d topologies, got %zu",
                            TOPO_MAX_TOPOLOGIES, opts->ntopologies);
    if (opts->cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission: no cache");
    topo_admission_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "admission: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return topo_err_set(err, TOPO_ENOMEM, "admission: cannot create a mutex");
    }
    if (pthread_mutex_init(&c->events_mu, NULL) != 0) {
        pthread_mutex_destroy(&c->mu);
        free(c);
        return topo_err_set(err, TOPO_ENOMEM, "admission: cannot create a mutex");
    }
    int rc = 0;
    c->pool = topo_pool_create();
    c->engine_pool = topo_pool_create();
    c->topos = calloc(opts->ntopologies, sizeof(*c->topos));
    c->pushed_index = topo_strmap_create(1024);
    if (c->pool == NULL || c->engine_pool == NULL || c->topos == NULL || c->pushed_index == NULL)
        rc = topo_err_set(err, TOPO_ENOMEM, "admission: out of memory");
    for (size_t i = 0; rc == 0 && i < opts->ntopologies; i++) {
        rc = copy_topology(&c->topos[i], &opts->topologies[i], c->pool, i, err);
        for (size_t j = 0; rc == 0 && j < i; j++)
            if (strcmp(c->topos[j].t.name, c->topos[i].t.name) == 0)
                rc = topo_err_set(err, TOPO_EINVALID, "admission: topology %s named twice",
                                  c->topos[i].t.name);
        c->ntopos = i + 1;
    }
    if (rc < 0) {
        topo_admission_ctx_free(c);
        return rc;
    }
    c->cache = opts->cache;
    c->ttl = opts->reservation_ttl_s > 0 ? opts->reservation_ttl_s
                                         : TOPO_ADMISSION_RESERVATION_TTL_DEFAULT;
    c->default_policy = opts->default_policy;
    c->ns_policy = opts->ns_policy;
    c->ns_policy_payload = opts->ns_policy_payload;
    c->unclaimed_ttl =
        opts->unclaimed_ttl_s > 0 ? opts->unclaimed_ttl_s : TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT;
    if ((rc = copy_caps(&c->fair, opts, c->pool, err)) < 0) {
        topo_admission_ctx_free(c);
        return rc;
    }
    c->clock = opts->clock;
    c->clock_payload = opts->clock_payload;
    c->replace_fail_fast = opts->replace_fail_fast != 0;
    if ((rc = adm_pack_init(c, opts, err)) < 0 ||
        (rc = adm_seal_keys_init(c, opts->record_keys, err)) < 0) {
        topo_admission_ctx_free(c);
        return rc;
    }
    topo_gates_init(&c->gates);
    /* What the cache holds from before a restart is charged at once. */
    c->data_version = -1;
    if ((rc = topo_admission_tick(c, err)) < 0) {
        topo_admission_ctx_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void topo_admission_get_stats(topo_admission_ctx *ctx, topo_admission_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->placed = atomic_load(&ctx->placed);
    out->reserved = atomic_load(&ctx->reserved);
    out->gated = atomic_load(&ctx->gated);
    out->denied = atomic_load(&ctx->denied);
    out->ignored = atomic_load(&ctx->ignored);
    out->passed = atomic_load(&ctx->passed);
    out->ungated = atomic_load(&ctx->ungated);
    out->errors = atomic_load(&ctx->errors);
    out->invalid = atomic_load(&ctx->invalid);
    out->unknown_level = atomic_load(&ctx->unknown_level);
    out->timed_out = atomic_load(&ctx->timed_out);
    out->foreign_annotations = atomic_load(&ctx->foreign);
    for (size_t i = 0; i < TOPO_ADMISSION_REPLACE_OUTCOMES; i++)
        out->node_replacements[i] = atomic_load(&ctx->node_replacements[i]);
    out->events_dropped = atomic_load(&ctx->events_dropped);
    out->failing = atomic_load(&ctx->failing);
    out->last_tick = atomic_load(&ctx->last_tick);
    out->packed = atomic_load(&ctx->packed);
    for (size_t i = 0; i < TOPO_ADMISSION_PACK_REASONS; i++)
        out->pack_passed[i] = atomic_load(&ctx->pack_passed[i]);
    pthread_mutex_lock(&ctx->mu);
    out->reservations = ctx->reservations;
    pthread_mutex_unlock(&ctx->mu);
}

int topo_admission_unclaimed_foreach(topo_admission_ctx *ctx, topo_admission_unclaimed_fn fn,
                                     void *payload, topo_err *err)
{
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return topo_err_nomem(err, NULL);
    pthread_mutex_lock(&ctx->mu);
    int rc = adm_fair_report(ctx->cache, adm_now_s(ctx), fn, payload, pool, err);
    pthread_mutex_unlock(&ctx->mu);
    topo_pool_free(pool);
    return rc;
}
