/* The admission handler (topo_admission_handle, topo_admission_ungate_pod,
 * topo_admission_tick): the topology a pod asks for, placement with the
 * engine on that topology's live snapshot, reservations and slot claims in
 * the SQLite cache, the patch, and the no-fit policy. See
 * include/topo/admission.h. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/rand.h>

#include "topo/admission.h"

#include "admission_internal.h"
#include "codec/codec.h"
#include "topo/engine.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/strmap.h"

#define MAX_TOPOLOGIES 16
/* Without a cache change, the reserved capacity is re-read at least this
 * often (expiry is the only change that needs no write). */
#define RESYNC_MAX_S 30

/* Capacity this ctx holds in a live snapshot for one reservation domain. */
typedef struct pushed {
    char *key; /* "<reservation id>|<value>|<value>..." (label values have no '|') */
    size_t topo;
    int32_t count;
    int seen; /* during a resync */
} pushed;

typedef struct topology {
    topo_admission_topology t; /* strings in the ctx's pool */
} topology;

struct topo_admission_ctx {
    pthread_mutex_t mu; /* the cache connection, the pushed table */
    topology *topos;
    size_t ntopos;
    topo_pool *pool; /* the topologies' strings */
    /* The engine's working memory under mu, cleared (blocks kept) after
     * each placement: at 10k nodes a call needs about a megabyte, which a
     * fresh pool would take from mmap and fault in on every request. */
    topo_pool *engine_pool;
    topo_cache *cache;
    int64_t ttl;
    int64_t unclaimed_ttl; /* free slots' hold without a claim */
    topo_fairness fair;    /* caps in pool */
    topo_admission_policy default_policy;
    topo_admission_ns_policy_fn ns_policy;
    void *ns_policy_payload;
    int64_t (*clock)(void *);
    void *clock_payload;
    topo_gates gates;

    pushed *pushed;
    size_t npushed, cap_pushed;
    topo_strmap *pushed_index; /* key -> index into pushed */
    int64_t data_version;
    int64_t next_resync;
    size_t reservations;

    _Atomic uint64_t placed, reserved, gated, denied, ignored, passed, ungated,
        errors, invalid, unknown_level, timed_out;
    _Atomic int64_t last_tick;
    /* Placements failing for a local reason (the cache: disk full, a
     * damaged file): how many in a row, and when the last one failed. */
    _Atomic uint32_t failing;
    _Atomic int64_t last_failure;
};

int topo_admission_policy_parse(topo_admission_policy *out, const char *s)
{
    if (s == NULL)
        return -1;
    if (strcmp(s, "gate") == 0)
        *out = TOPO_ADMISSION_POLICY_GATE;
    else if (strcmp(s, "deny") == 0)
        *out = TOPO_ADMISSION_POLICY_DENY;
    else if (strcmp(s, "ignore") == 0)
        *out = TOPO_ADMISSION_POLICY_IGNORE;
    else
        return -1;
    return 0;
}

/* --- small helpers ----------------------------------------------------------------- */

/* s cut to max bytes ending in "..." (at a UTF-8 boundary). */
static char *cut(topo_pool *pool, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return topo_pool_strdup(pool, s);
    size_t keep = max - 3;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--;
    char *t = topo_pool_alloc(pool, keep + 4);
    if (t == NULL)
        return NULL;
    memcpy(t, s, keep);
    memcpy(t + keep, "...", 4);
    return t;
}

static int64_t now_s(topo_admission_ctx *ctx)
{
    return ctx->clock != NULL ? ctx->clock(ctx->clock_payload) : (int64_t)time(NULL);
}

static const char **dup_strings(topo_pool *pool, const char *const *s, size_t n)
{
    const char **d = topo_pool_calloc(pool, n + 1, sizeof(*d));
    for (size_t i = 0; d != NULL && i < n; i++)
        if ((d[i] = topo_pool_strdup(pool, s[i])) == NULL)
            return NULL;
    return d;
}

/* A placement that failed here, not in the cluster: counted, and for
 * readiness. */
static void failed_locally(topo_admission_ctx *ctx)
{
    atomic_fetch_add(&ctx->errors, 1);
    atomic_fetch_add(&ctx->failing, 1);
    atomic_store(&ctx->last_failure, now_s(ctx));
}

int topo_admission_ready(topo_admission_ctx *ctx, char *why, size_t why_size)
{
    uint32_t n = atomic_load(&ctx->failing);
    int64_t ago = now_s(ctx) - atomic_load(&ctx->last_failure);
    /* Unready while they keep failing; ready again a while after the last
     * failure, so that requests try again (nothing else would). */
    if (n < TOPO_ADMISSION_FAILING_UNREADY || ago >= TOPO_ADMISSION_FAILING_RETRY_S)
        return 1;
    if (why != NULL && why_size > 0)
        snprintf(why, why_size, "%u placements in a row failed here (the cache), the last %llds ago",
                 (unsigned)n, (long long)ago);
    return 0;
}

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
static int push(topo_admission_ctx *ctx, size_t t, const char *id, const char *const *values,
                size_t nvalues, int32_t count, const topo_resource *req, size_t nreq,
                topo_err *err)
{
    char *key = pushed_key(id, values, nvalues);
    if (key == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
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
    if (ctx->npushed == ctx->cap_pushed) {
        size_t ncap = ctx->cap_pushed ? ctx->cap_pushed * 2 : 64;
        pushed *p = realloc(ctx->pushed, ncap * sizeof(*p));
        if (p == NULL) {
            topo_live_unreserve_now(live, key, NULL);
            free(key);
            return topo_err_set(err, TOPO_ENOMEM, "out of memory");
        }
        ctx->pushed = p;
        ctx->cap_pushed = ncap;
    }
    if (topo_strmap_put(ctx->pushed_index, key, (int32_t)ctx->npushed) < 0) {
        topo_live_unreserve_now(live, key, NULL);
        free(key);
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    }
    ctx->pushed[ctx->npushed++] = (pushed){key, t, count, 1};
    return 0;
}

/* A reservation id is "<topology name>.<random>": its topology survives a
 * restart without another lookup. */
static long topology_of_id(const topo_admission_ctx *ctx, const char *id)
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
    long t = topology_of_id(ctx, r->reservation_id);
    if (t < 0)
        return 0; /* a topology no longer configured: nothing to charge */
    topo_err err = TOPO_ERR_INIT;
    if (push(ctx, (size_t)t, r->reservation_id, r->values, r->nvalues, r->count, r->requests,
             r->nrequests, &err) < 0) {
        topo_log(TOPO_LOG_WARN, "reservation %s: capacity not held: %s", r->reservation_id,
                 err.text);
        if (err.code == TOPO_ENOMEM)
            return -1;
    }
    return 0;
}

/* Brings the pushed table in line with the cache. mu held. */
static int resync(topo_admission_ctx *ctx, int64_t now, topo_err *err)
{
    for (size_t i = 0; i < ctx->npushed; i++)
        ctx->pushed[i].seen = 0;
    int rc = topo_cache_foreach_reserved(ctx->cache, now, resync_one, ctx, err);
    if (rc != 0)
        return rc < 0 ? rc : topo_err_set(err, TOPO_ENOMEM, "out of memory");
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

int topo_admission_tick(topo_admission_ctx *ctx, topo_err *err)
{
    int64_t now = now_s(ctx), dv = 0;
    size_t gone = 0;
    int rc;
    pthread_mutex_lock(&ctx->mu);
    if ((rc = topo_cache_reservation_gc(ctx->cache, now, &gone, err)) == 0 &&
        (rc = topo_cache_group_expire(ctx->cache, now, NULL, err)) == 0 &&
        (rc = topo_cache_data_version(ctx->cache, &dv, err)) == 0 &&
        (gone > 0 || dv != ctx->data_version || now >= ctx->next_resync)) {
        ctx->data_version = dv;
        rc = resync(ctx, now, err);
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
        failed_locally(ctx);
    atomic_store(&ctx->last_tick, now);
    return rc;
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
    dst->t = *src;
    topo_kv *kv = topo_pool_calloc(pool, src->nnode_labels + 1, sizeof(*kv));
    if ((dst->t.name = topo_pool_strdup(pool, src->name)) == NULL || kv == NULL ||
        (dst->t.levels = dup_strings(pool, src->levels, src->nlevels)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    for (size_t k = 0; k < src->nnode_labels; k++)
        if ((kv[k].key = topo_pool_strdup(pool, src->node_labels[k].key)) == NULL ||
            (kv[k].value = topo_pool_strdup(pool, src->node_labels[k].value)) == NULL)
            return topo_err_set(err, TOPO_ENOMEM, "out of memory");
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
static int copy_caps(topo_fairness *f, const topo_admission_opts *o, topo_pool *pool,
                     topo_err *err)
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
            return topo_err_set(err, TOPO_EINVALID, "admission: a cap on unclaimed capacity "
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
    if (opts == NULL || opts->version != TOPO_ADMISSION_OPTS_VERSION)
        return topo_err_set(err, TOPO_EINVALID, "admission: unsupported options version");
    if (opts->ntopologies == 0 || opts->ntopologies > MAX_TOPOLOGIES)
        return topo_err_set(err, TOPO_EINVALID, "admission: 1..%d topologies, got %zu",
                            MAX_TOPOLOGIES, opts->ntopologies);
    if (opts->cache == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission: no cache");
    topo_admission_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "admission: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
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
    c->unclaimed_ttl = opts->unclaimed_ttl_s > 0 ? opts->unclaimed_ttl_s
                                                 : TOPO_ADMISSION_UNCLAIMED_TTL_DEFAULT;
    if ((rc = copy_caps(&c->fair, opts, c->pool, err)) < 0) {
        topo_admission_ctx_free(c);
        return rc;
    }
    c->clock = opts->clock;
    c->clock_payload = opts->clock_payload;
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
    out->failing = atomic_load(&ctx->failing);
    out->last_tick = atomic_load(&ctx->last_tick);
    pthread_mutex_lock(&ctx->mu);
    out->reservations = ctx->reservations;
    pthread_mutex_unlock(&ctx->mu);
}

/* --- which topology ---------------------------------------------------------------- */

static int has_level(const topology *t, const char *level)
{
    for (size_t i = 0; i < t->t.nlevels; i++)
        if (strcmp(t->t.levels[i], level) == 0)
            return 1;
    return 0;
}

/* The pod's own nodeSelector pins a label the topology's nodes cannot have. */
static int selector_excludes(const topology *t, const topo_admission_pod *pod)
{
    for (size_t i = 0; i < t->t.nnode_labels; i++) {
        const char *v =
            topo_admission_kv_get(pod->node_selector, pod->nnode_selector, t->t.node_labels[i].key);
        if (v != NULL && strcmp(v, t->t.node_labels[i].value) != 0)
            return 1;
    }
    return 0;
}

/* The levels a request names: its own level, its slice level, its layers'. */
static size_t named_levels(const topo_podset_spec *ps, const char **out)
{
    size_t n = 0;
    if (ps->required != NULL)
        out[n++] = ps->required;
    if (ps->preferred != NULL)
        out[n++] = ps->preferred;
    if (ps->slice_required != NULL)
        out[n++] = ps->slice_required;
    for (size_t i = 0; i < ps->nlayers && i < TOPO_MAX_SLICE_LAYERS; i++)
        out[n++] = ps->layers[i].level;
    return n;
}

/* The first topology with every level the request names whose nodes the
 * pod's selector allows; -1 with *missing set to a level none has. */
static long choose_topology(const topo_admission_ctx *ctx, const topo_admission_pod *pod,
                            const topo_podset_spec *ps, const char **missing)
{
    const char *want[3 + TOPO_MAX_SLICE_LAYERS];
    size_t nwant = named_levels(ps, want);
    *missing = NULL;
    for (size_t i = 0; i < ctx->ntopos; i++) {
        const topology *t = &ctx->topos[i];
        int ok = !selector_excludes(t, pod);
        for (size_t w = 0; ok && w < nwant; w++)
            if (!has_level(t, want[w])) {
                ok = 0;
                *missing = want[w];
            }
        if (ok)
            return (long)i;
    }
    return -1;
}

/* --- the PodSet request -------------------------------------------------------------- */

/* "16 pod(s) x {cpu: 32000, nvidia.com/gpu: 8} in one topology.topo.io/rack (required)" */
static char *describe_need(topo_pool *pool, const topo_podset_spec *ps)
{
    char req[512];
    size_t off = 0;
    req[0] = '\0';
    for (size_t i = 0; i < ps->nrequests && off < sizeof req; i++) {
        int n = snprintf(req + off, sizeof req - off, "%s%s: %lld", i ? ", " : "",
                         ps->requests[i].name, (long long)ps->requests[i].amount);
        if (n < 0)
            break;
        off += (size_t)n;
    }
    const char *where = ps->required         ? ps->required
                        : ps->preferred      ? ps->preferred
                        : ps->slice_required ? ps->slice_required
                                             : NULL;
    const char *how = ps->required         ? "required"
                      : ps->preferred      ? "preferred"
                      : ps->slice_required ? "slice-required"
                                           : "unconstrained";
    if (where != NULL)
        return topo_pool_printf(pool, "%d pod(s) x {%s} in one %s (%s)", ps->count, req, where,
                                how);
    return topo_pool_printf(pool, "%d pod(s) x {%s} (%s)", ps->count, req, how);
}

/* The assignment copied into pool (the engine's refers to the snapshot's
 * strings, which a rebuild frees once the snapshot is released). */
static topo_assignment *copy_assignment(const topo_assignment *a, topo_pool *pool)
{
    topo_assignment *c = topo_pool_calloc(pool, 1, sizeof(*c));
    topo_assign_domain *d = topo_pool_calloc(pool, a->ndomains + 1, sizeof(*d));
    if (c == NULL || d == NULL || (c->levels = dup_strings(pool, a->levels, a->nlevels)) == NULL)
        return NULL;
    for (size_t i = 0; i < a->ndomains; i++) {
        if ((d[i].values = dup_strings(pool, a->domains[i].values, a->nlevels)) == NULL)
            return NULL;
        d[i].count = a->domains[i].count;
    }
    c->nlevels = a->nlevels;
    c->domains = d;
    c->ndomains = a->ndomains;
    return c;
}

/* One engine call on the topology's current snapshot for n PodSets placed
 * together (a pod group's roles; else one). out[i] NULL for all with
 * *failure set when one does not fit. */
static int compute_many(topo_admission_ctx *ctx, const topology *t, const topo_podset_spec *ps,
                        size_t n, topo_assignment **out, const char **failure, topo_pool *pool,
                        topo_pool *scratch, topo_err *err)
{
    topo_podset_result *res = topo_pool_calloc(scratch, n, sizeof(*res));
    int rc = 0;
    *failure = NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    if (res == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    const topo_snapshot *snap = topo_live_acquire(t->t.live);
    rc = topo_engine_find(res, snap, ps, n, NULL, &ctx->gates, scratch, err);
    for (size_t i = 0; rc == 0 && i < n && *failure == NULL; i++) {
        if (res[i].assignment == NULL)
            *failure = topo_pool_strdup(pool, res[i].failure ? res[i].failure : "does not fit");
        else if ((out[i] = copy_assignment(res[i].assignment, pool)) == NULL)
            rc = topo_err_set(err, TOPO_ENOMEM, "out of memory");
    }
    if (rc == 0 && *failure != NULL)
        for (size_t i = 0; i < n; i++)
            out[i] = NULL;
    topo_live_release(t->t.live, snap);
    if (scratch != pool)
        topo_pool_clear(scratch);
    return rc;
}

static int compute(topo_admission_ctx *ctx, const topology *t, const topo_podset_spec *ps,
                   topo_assignment **out, const char **failure, topo_pool *pool,
                   topo_pool *scratch, topo_err *err)
{
    return compute_many(ctx, t, ps, 1, out, failure, pool, scratch, err);
}

/* --- the answer ---------------------------------------------------------------------- */

typedef enum mode { MODE_ADMIT, MODE_UNGATE } mode;

typedef struct answer {
    topo_admission_response resp;
    topo_jsonpatch *patch;
    const char *role; /* a pod-group pod's shape: annotated, for the ungater to read back */
    const char *warnings[3];
    const char *failure; /* ungate: why it still does not fit */
    int64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none (the ungater) */
    int timed_out;       /* stopped at the deadline, nothing stored */
} answer;

/* Past the request's deadline nobody reads the answer (the API server has
 * applied its failure policy): a request that waited that long for the lock
 * or the engine stops before it stores anything, so no room is reserved
 * for a pod that will not carry our patch. */
static int past_deadline(answer *a)
{
    if (a->deadline_ns <= 0)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec < a->deadline_ns)
        return 0;
    a->timed_out = 1;
    return 1;
}

static void warn(answer *a, const char *w)
{
    if (w != NULL && a->resp.nwarnings < 3)
        a->warnings[a->resp.nwarnings++] = w;
    a->resp.warnings = a->warnings;
}

static void refuse(answer *a, int code, const char *msg)
{
    a->resp.allowed = 0;
    a->resp.status_code = code;
    a->resp.status_message = msg;
}

/* A slot: where a pod goes. */
typedef struct placement {
    const char *reservation_id;
    int32_t slot;
    const char *const *levels; /* the assignment's */
    const char *const *values;
    size_t nlevels;
    const char *assignment_json;
    int claimed; /* 0: the slot is another live pod's (sticky index) or dryRun */
    const char *claimant; /* who claimed it, when claimed */
} placement;

static int slot_from(placement *p, const topo_cache_reservation *r, const topo_cache_slot *s)
{
    p->reservation_id = r->id;
    p->slot = s->index;
    p->levels = r->assignment_levels;
    p->nlevels = r->nassignment_levels;
    p->values = s->values;
    p->assignment_json = r->assignment_json;
    return 0;
}

/* The slot a pod would get without claiming (dryRun): its rank's, else the
 * first free one; -1 when none. */
static long peek_slot(const topo_cache_reservation *r, int64_t rank)
{
    if (rank >= 0 && (size_t)rank < r->nslots)
        return (long)rank;
    for (size_t i = 0; i < r->nslots; i++)
        if (r->slots[i].pod_uid == NULL)
            return (long)i;
    return -1;
}

/* Claims a slot of reservation r for the pod. 0 with *p filled; 1 when the
 * pod cannot have one (*why set); <0 on cache errors. mu held. */
static int claim(topo_admission_ctx *ctx, placement *p, const topo_cache_reservation *r,
                 const topo_podset_id *id, int dry_run, int64_t now, const char **why,
                 topo_pool *pool, topo_err *err)
{
    topo_cache_slot s;
    memset(p, 0, sizeof(*p));
    if (dry_run) {
        long i = peek_slot(r, id->rank);
        if (i < 0) {
            *why = topo_pool_printf(pool, "all %zu slots of PodSet %s are taken", r->nslots,
                                    r->podset_key);
            return 1;
        }
        return slot_from(p, r, &r->slots[i]);
    }
    int rc = topo_cache_reservation_claim(&s, ctx->cache, r->id, id->claimant,
                                          (int32_t)id->rank, now, pool, err);
    if (rc == 0) {
        slot_from(p, r, &s);
        p->claimed = 1;
        p->claimant = id->claimant;
        atomic_store(&ctx->failing, 0); /* the cache takes writes */
        return 0;
    }
    if (rc == TOPO_ECONFLICT && id->rank >= 0 && (size_t)id->rank < r->nslots) {
        /* Its index is held by a pod still running (a replacement created
         * before the old one ended): same domain, no claim. */
        topo_err_clear(err);
        return slot_from(p, r, &r->slots[id->rank]);
    }
    if (rc == TOPO_ENOFIT || rc == TOPO_EINVALID || rc == TOPO_ECONFLICT) {
        *why = topo_pool_printf(pool, "PodSet %s: %s", r->podset_key, err->text);
        topo_err_clear(err);
        return 1;
    }
    return rc;
}

static char *new_reservation_id(const char *topology_name, topo_pool *pool)
{
    unsigned char b[8];
    if (RAND_bytes(b, sizeof b) != 1)
        return NULL;
    return topo_pool_printf(pool, "%s.%02x%02x%02x%02x%02x%02x%02x%02x", topology_name, b[0], b[1],
                            b[2], b[3], b[4], b[5], b[6], b[7]);
}

/* Kueue's TopologyAssignment as compact JSON in pool: the pods' annotation
 * and the cache's column. NULL when out of memory. */
static const char *assignment_text(const topo_assignment *as, topo_pool *pool)
{
    json_t *doc = topo_codec_assignment_json(as);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    const char *out = text ? topo_pool_strdup(pool, text) : NULL;
    free(text);
    return out;
}

/* The reservation as the cache will hold it, built in memory (no read
 * back): its slots in assignment order, all free. */
static int describe_reservation(topo_cache_reservation *r, const topo_cache_reservation_spec *spec,
                                const topo_assignment *as, topo_pool *pool, topo_err *err)
{
    size_t nslots = 0;
    for (size_t d = 0; d < as->ndomains; d++)
        nslots += (size_t)as->domains[d].count;
    topo_cache_slot *slots = topo_pool_calloc(pool, nslots + 1, sizeof(*slots));
    memset(r, 0, sizeof(*r));
    r->assignment_json = assignment_text(as, pool);
    if (slots == NULL || r->assignment_json == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t d = 0; d < as->ndomains; d++)
        for (int32_t c = 0; c < as->domains[d].count; c++, k++) {
            slots[k].index = (int32_t)k;
            slots[k].values = as->domains[d].values;
            slots[k].nvalues = as->nlevels;
        }
    r->id = spec->id;
    r->podset_key = spec->podset_key;
    r->topology_name = spec->topology_name;
    r->levels = spec->levels;
    r->nlevels = spec->nlevels;
    r->assignment_levels = as->levels;
    r->nassignment_levels = as->nlevels;
    r->requests = spec->requests;
    r->nrequests = spec->nrequests;
    r->created_at = spec->created_at;
    r->expires_at = spec->expires_at;
    r->slots = slots;
    r->nslots = nslots;
    return 0;
}

/* What a new reservation records beside its assignment. */
typedef struct podset_terms {
    const char *key;     /* the PodSet's */
    const char *shape;   /* what its pods share */
    const char *request;
} podset_terms;

/* Writes one reservation of topology t (inside the caller's transaction)
 * and describes it in *r, as the cache now holds it. mu held. */
static int store_reservation(topo_admission_ctx *ctx, size_t t, const podset_terms *terms,
                             const topo_podset_spec *ps, const topo_assignment *as, int64_t now,
                             topo_cache_reservation *r, topo_pool *pool, topo_err *err)
{
    const topology *tp = &ctx->topos[t];
    topo_cache_reservation_spec spec = TOPO_CACHE_RESERVATION_SPEC_INIT;
    spec.id = new_reservation_id(tp->t.name, pool);
    if (spec.id == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "cannot make a reservation id");
    spec.podset_key = terms->key;
    spec.topology_name = tp->t.name;
    spec.levels = tp->t.levels;
    spec.nlevels = tp->t.nlevels;
    spec.assignment = as;
    spec.requests = ps->requests;
    spec.nrequests = ps->nrequests;
    spec.created_at = now;
    spec.expires_at = now + ctx->ttl;
    spec.shape = terms->shape;
    spec.request = terms->request;
    spec.unclaimed_ttl = ctx->unclaimed_ttl;
    int rc = describe_reservation(r, &spec, as, pool, err);
    return rc < 0 ? rc : topo_cache_reservation_create(ctx->cache, &spec, err);
}

/* A stored reservation's capacity charged to the live snapshot. mu held. */
static void hold_capacity(topo_admission_ctx *ctx, size_t t, const topo_cache_reservation *r,
                          const topo_podset_spec *ps, const topo_assignment *as)
{
    /* as the cache counts it at the next resync (foreach_reserved) */
    int holds = topo_cache_requests_hold_capacity(ps->requests, ps->nrequests);
    for (size_t d = 0; holds && d < as->ndomains; d++) {
        topo_err perr = TOPO_ERR_INIT;
        if (push(ctx, t, r->id, as->domains[d].values, as->nlevels, as->domains[d].count,
                 ps->requests, ps->nrequests, &perr) < 0)
            topo_log(TOPO_LOG_WARN, "reservation %s: capacity not held: %s", r->id, perr.text);
    }
    /* Our own writes do not move data_version, so a tick may not recount:
     * keep the gauge current here (the next resync corrects it). */
    ctx->reservations++;
    atomic_fetch_add(&ctx->reserved, 1);
}

/* Stores n reservations (one per PodSet placed together) and claims the
 * pod's slot in reservation `mine` in one transaction (mu held). 0 with *p
 * filled; 1 when the pod gets no slot (*why); <0 on errors, nothing
 * stored. r has room for n. */
static int reserve_and_claim(topo_admission_ctx *ctx, size_t t, const topo_podset_id *id,
                             const podset_terms *terms, const topo_podset_spec *ps,
                             topo_assignment *const *as, size_t n, size_t mine, int64_t now,
                             topo_cache_reservation *r, placement *p, const char **why,
                             topo_pool *pool, topo_err *err)
{
    int rc = topo_cache_begin(ctx->cache, err), got = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = store_reservation(ctx, t, &terms[i], &ps[i], as[i], now, &r[i], pool, err);
    if (rc == 0 && (got = claim(ctx, p, &r[mine], id, 0, now, why, pool, err)) >= 0)
        rc = topo_cache_commit(ctx->cache, err);
    else
        topo_cache_rollback(ctx->cache, NULL);
    if (rc == 0 && got < 0)
        rc = got;
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        hold_capacity(ctx, t, &r[i], &ps[i], as[i]);
    return got;
}

/* The live, unexpired reservation of the PodSet into *r: 1 found, 0 not. */
static int lookup(topo_admission_ctx *ctx, const char *key, int64_t now,
                  topo_cache_reservation *r, topo_pool *pool, topo_err *err)
{
    int rc = topo_cache_reservation_get_by_podset(r, ctx->cache, key, pool, err);
    if (rc == TOPO_ENOTFOUND) {
        topo_err_clear(err);
        return 0;
    }
    if (rc < 0)
        return rc;
    return r->expires_at > now;
}

/* Not fitting: the policy. */
static int no_fit(topo_admission_ctx *ctx, answer *a, mode m, topo_admission_policy policy,
                  const topo_admission_request *req, const topo_podset_id *id, const char *need,
                  const char *failure, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    (void)ctx;
    if (m == MODE_UNGATE) {
        a->failure = failure;
        return 0;
    }
    switch (policy) {
    case TOPO_ADMISSION_POLICY_DENY:
        atomic_fetch_add(&ctx->denied, 1);
        refuse(
            a, 403,
            topo_pool_printf(pool, "topo-webhook: PodSet %s needs %s: %s", id->key, need, failure));
        return 0;
    case TOPO_ADMISSION_POLICY_IGNORE:
        atomic_fetch_add(&ctx->ignored, 1);
        warn(a, topo_pool_printf(pool, "topo-webhook: not placed: %s", failure));
        return 0;
    case TOPO_ADMISSION_POLICY_GATE:
    default:
        break;
    }
    topo_kv ann[3] = {{TOPO_ADMISSION_WAIT_REASON_ANNOTATION,
                       cut(pool, failure, TOPO_ADMISSION_WAIT_REASON_MAX)},
                      {TOPO_ADMISSION_PODSET_ANNOTATION, id->key},
                      {TOPO_ADMISSION_ROLE_ANNOTATION, a->role}};
    if (ann[0].value == NULL)
        return -1;
    if (topo_jsonpatch_new(&a->patch) < 0)
        return -1;
    if (topo_admission_patch_gate(a->patch, &req->pod, TOPO_ADMISSION_WAIT_GATE, &err) < 0 ||
        topo_admission_patch_pod(a->patch, &req->pod, NULL, 0, ann, a->role != NULL ? 3 : 2,
                                 &err) < 0)
        return err.code == TOPO_ENOMEM
                   ? -1
                   : (refuse(a, 500, topo_pool_printf(pool, "%s", err.text)), 0);
    a->resp.patch = a->patch;
    atomic_fetch_add(&ctx->gated, 1);
    warn(a, topo_pool_printf(pool, "topo-webhook: gated until it fits: %s", failure));
    return 0;
}

/* Ungating: the gate and the wait annotations go, guarded by tests. */
static int patch_ungate(topo_jsonpatch *patch, const topo_admission_pod *pod, topo_err *err)
{
    char path[64];
    int rc = 0;
    for (size_t i = 0; i < pod->nscheduling_gates; i++)
        if (strcmp(pod->scheduling_gates[i], TOPO_ADMISSION_WAIT_GATE) == 0) {
            snprintf(path, sizeof path, "/spec/schedulingGates/%zu/name", i);
            if ((rc = topo_jsonpatch_test_string(patch, path, TOPO_ADMISSION_WAIT_GATE)) < 0)
                return rc;
            snprintf(path, sizeof path, "/spec/schedulingGates/%zu", i);
            if ((rc = topo_jsonpatch_remove(patch, path)) < 0)
                return rc;
            break;
        }
    const char *drop[2] = {TOPO_ADMISSION_WAIT_REASON_ANNOTATION, TOPO_ADMISSION_PODSET_ANNOTATION};
    for (size_t i = 0; i < 2; i++) {
        if (topo_admission_kv_get(pod->annotations, pod->nannotations, drop[i]) == NULL)
            continue;
        char *ptr = NULL;
        if ((rc = topo_json_pointer_join(&ptr, "/metadata/annotations", drop[i])) < 0)
            return topo_err_set(err, rc, "out of memory");
        rc = topo_jsonpatch_remove(patch, ptr);
        free(ptr);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The patch that sends the pod to its slot's domain. */
/* The slot's domain as nodeSelector entries, one per level of the
 * topology. Kueue writes a by-host assignment with the hostname level only;
 * the upper levels are then the host's own labels, read from the live
 * snapshot (the hostname alone pins them, but a pod that shows its rack
 * and block is one a person can read). */
static int slot_selector(topo_admission_ctx *ctx, long t, const placement *p, topo_kv **out,
                         size_t *out_n, topo_pool *pool)
{
    const topology *tp = t >= 0 ? &ctx->topos[t] : NULL;
    size_t n = p->nlevels;
    int by_host = tp != NULL && p->nlevels == 1 && tp->t.nlevels > 1 &&
                  strcmp(p->levels[0], tp->t.levels[tp->t.nlevels - 1]) == 0;
    topo_kv *sel = topo_pool_calloc(pool, (by_host ? tp->t.nlevels : n) + 1, sizeof(*sel));
    if (sel == NULL)
        return -1;
    if (by_host) {
        const topo_snapshot *snap = topo_live_acquire(tp->t.live);
        int failed = 0;
        n = 0;
        for (size_t i = 0; i + 1 < tp->t.nlevels && !failed; i++) {
            const char *v = topo_snapshot_node_label(snap, p->values[0], tp->t.levels[i]);
            if (v == NULL)
                continue; /* the host left the snapshot: its hostname still pins it */
            if ((v = topo_pool_strdup(pool, v)) == NULL)
                failed = 1;
            else
                sel[n++] = (topo_kv){tp->t.levels[i], v};
        }
        topo_live_release(tp->t.live, snap);
        if (failed)
            return -1;
        sel[n++] = (topo_kv){p->levels[0], p->values[0]};
    } else {
        for (size_t i = 0; i < n; i++)
            sel[i] = (topo_kv){p->levels[i], p->values[i]};
    }
    *out = sel;
    *out_n = n;
    return 0;
}

static int patch_placed(topo_admission_ctx *ctx, answer *a, mode m,
                        const topo_admission_request *req, long t, const placement *p,
                        topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv *sel = NULL;
    size_t nsel = 0;
    char *slot = topo_pool_printf(pool, "%d", (int)p->slot);
    if (slot == NULL || slot_selector(ctx, t, p, &sel, &nsel, pool) < 0)
        return -1;
    if (p->values == NULL || p->nlevels == 0) {
        /* A slot the engine gave no domain (pods past the last whole
         * slice): nothing to pin it to. */
        atomic_fetch_add(&ctx->ignored, 1);
        if (m == MODE_UNGATE)
            a->failure = "its slot has no topology domain";
        else
            warn(a, "topo-webhook: not placed: its slot has no topology domain");
        return 0;
    }
    topo_kv ann[4] = {{TOPO_ADMISSION_ASSIGNMENT_ANNOTATION, p->assignment_json},
                      {TOPO_ADMISSION_RESERVATION_ANNOTATION, p->reservation_id},
                      {TOPO_ADMISSION_SLOT_ANNOTATION, slot},
                      {TOPO_ADMISSION_ROLE_ANNOTATION, a->role}};
    if (topo_jsonpatch_new(&a->patch) < 0)
        return -1;
    int rc = topo_admission_patch_pod(a->patch, &req->pod, sel, nsel, ann,
                                      a->role != NULL ? 4 : 3, &err);
    if (rc == 0 && m == MODE_UNGATE)
        rc = patch_ungate(a->patch, &req->pod, &err);
    if (rc == TOPO_ENOMEM)
        return -1;
    if (rc < 0) {
        /* the pod pins a level elsewhere: its own selector wins, and the
         * slot stays for a pod that can take it */
        if (p->claimed) {
            topo_err uerr = TOPO_ERR_INIT;
            pthread_mutex_lock(&ctx->mu);
            if (topo_cache_reservation_unclaim(ctx->cache, p->reservation_id, p->slot,
                                               p->claimant, NULL, &uerr) < 0)
                topo_log(TOPO_LOG_WARN, "reservation %s: slot %d not given back: %s",
                         p->reservation_id, (int)p->slot, uerr.text);
            pthread_mutex_unlock(&ctx->mu);
        }
        atomic_fetch_add(&ctx->ignored, 1);
        if (m == MODE_UNGATE)
            a->failure = topo_pool_printf(pool, "%s", err.text);
        else
            warn(a, topo_pool_printf(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    a->resp.patch = a->patch;
    atomic_fetch_add(m == MODE_UNGATE ? &ctx->ungated : &ctx->placed, 1);
    return 0;
}

/* dryRun: the slot the pod would get in a fresh assignment (its rank's,
 * else the first), nothing stored. */
static int dry_run_slot(placement *p, const topo_assignment *as, int64_t rank, topo_pool *pool)
{
    const char *json = assignment_text(as, pool);
    if (json == NULL)
        return -1;
    int64_t k = rank >= 0 ? rank : 0;
    size_t d = 0;
    while (d < as->ndomains && k >= as->domains[d].count)
        k -= as->domains[d++].count;
    /* A rank past every domain's pods (a slice the engine left out) has no
     * domain: patch_placed says so rather than pin it anywhere. */
    *p = (placement){"dry-run", (int32_t)(rank >= 0 ? rank : 0), as->levels,
                     d < as->ndomains ? as->domains[d].values : NULL,
                     d < as->ndomains ? as->nlevels : 0, json, 0, NULL};
    return 0;
}

/* Why a pod cannot claim reservation r (NULL when it can): it is not
 * shaped like the pods the PodSet was placed for, or asks Kueue for
 * something else. terms->shape NULL: not checked. */
static const char *contradicts(const topo_cache_reservation *r, const podset_terms *terms,
                               topo_pool *pool)
{
    if (terms->shape != NULL && r->shape[0] != '\0' && strcmp(r->shape, terms->shape) != 0)
        return topo_pool_printf(pool,
                                "the pod's shape (%s) is not that of the pods its PodSet was "
                                "placed for (%s): its resources, nodeSelector, affinity or "
                                "tolerations differ, and a PodSet's pods share one template",
                                terms->shape, r->shape);
    if (terms->request != NULL && r->request[0] != '\0' && strcmp(r->request, terms->request) != 0)
        return topo_pool_printf(pool,
                                "the pod's Kueue request (%s) contradicts its PodSet's (%s)",
                                terms->request, r->request);
    return NULL;
}

/* Its PodSet is placed but holds no slot for it: admitted as it is. */
static int unplaced(topo_admission_ctx *ctx, answer *a, mode m, const char *why, topo_pool *pool)
{
    atomic_fetch_add(&ctx->ignored, 1);
    if (m == MODE_UNGATE)
        a->failure = why;
    else
        warn(a, topo_pool_printf(pool, "topo-webhook: not placed: %s", why ? why : "no slot"));
    return 0;
}

static int refuse_podset(topo_admission_ctx *ctx, answer *a, const topo_podset_id *id,
                         const char *why, topo_pool *pool)
{
    if (why == NULL)
        return -1;
    atomic_fetch_add(&ctx->denied, 1);
    refuse(a, 400, topo_pool_printf(pool, "topo-webhook: PodSet %s: %s", id->key, why));
    return 0;
}

/* The reservation key of a pod group's role. */
static const char *role_key(const topo_podset_id *id, const char *shape, topo_pool *pool)
{
    return topo_pool_printf(pool, "%s/role/%s", id->key, shape);
}

/* Why no configured topology takes the pod; a level none has is counted. */
static const char *no_topology(topo_admission_ctx *ctx, const char *missing, topo_pool *pool)
{
    if (missing == NULL)
        return topo_pool_printf(pool, "no configured topology covers the pod's nodeSelector");
    atomic_fetch_add(&ctx->unknown_level, 1);
    return topo_pool_printf(pool, "no configured topology has level %s", missing);
}

/* The cache failed: admit unchanged rather than stall the cluster. what
 * names the PodSet in the log ("PodSet <key>", "pod group <key>"). */
static int internal_error(topo_admission_ctx *ctx, answer *a, mode m, const char *what,
                          const char *key, const topo_err *err, topo_pool *pool)
{
    failed_locally(ctx);
    topo_log(TOPO_LOG_ERROR, "%s %s: %s", what, key, err->text);
    if (m == MODE_UNGATE)
        a->failure = topo_pool_printf(pool, "%s", err->text);
    else
        warn(a, topo_pool_printf(pool, "topo-webhook: not placed (internal error): %s", err->text));
    return 0;
}

/* A pod of a group still waiting for some of its pods: gated whatever the
 * no-fit policy (the group cannot be placed without them). */
static int wait_for_group(topo_admission_ctx *ctx, answer *a, mode m,
                          const topo_admission_request *req, const topo_podset_id *id,
                          size_t arrived, topo_pool *pool)
{
    const char *why = topo_pool_printf(pool, "pod group: %zu of its %d pods have arrived",
                                       arrived, (int)id->size);
    if (why == NULL)
        return -1;
    return no_fit(ctx, a, m, TOPO_ADMISSION_POLICY_GATE, req, id, why, why, pool);
}

/* A pod of a Kueue pod group (groups.c): its role's reservation when the
 * group is placed; else recorded, and the group placed once all its pods
 * are there, every role together. */
static int place_group(topo_admission_ctx *ctx, answer *a, mode m,
                       const topo_admission_request *req, const topo_podset_id *id,
                       const topo_podset_spec *ps, long t, const char *missing,
                       topo_admission_policy policy, int64_t now, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    const topo_admission_pod *pod = &req->pod;
    /* The shape the pod was first admitted with, once we annotated it: by
     * the ungater's time, or when our own output comes back, it carries
     * what others or we added. */
    const char *shape = topo_admission_kv_get(pod->annotations, pod->nannotations,
                                              TOPO_ADMISSION_ROLE_ANNOTATION);
    shape = shape != NULL ? shape : pod->shape;
    const char *request = topo_kueue_request_text(ps, pool);
    const char *member = pod->name != NULL && pod->name[0] != '\0' ? pod->name : req->uid;
    topo_podset_id rid = *id;
    rid.key = role_key(id, shape, pool);
    if (request == NULL || rid.key == NULL)
        return -1;
    podset_terms mine = {rid.key, shape, request};
    a->role = shape;
    int record = m == MODE_ADMIT && !req->dry_run;
    topo_group_pod gp = {member, shape, request, ps->group ? ps->group : "", record};

    topo_cache_reservation r;
    topo_group_view view;
    placement p;
    const char *why = NULL, *contradiction = NULL, *failure = NULL;
    int rc = 0, got = 0;
    memset(&p, 0, sizeof p);
    pthread_mutex_lock(&ctx->mu);
    if (past_deadline(a)) {
        pthread_mutex_unlock(&ctx->mu);
        return 0;
    }
    int found = lookup(ctx, rid.key, now, &r, pool, &err);
    if (found == 1 && (contradiction = contradicts(&r, &mine, pool)) == NULL)
        got = claim(ctx, &p, &r, &rid, req->dry_run, now, &why, pool, &err);
    if (found == 0)
        rc = topo_admission_group_view(&view, ctx->cache, id, &gp, now, pool, &err);
    /* Complete already and its role not reserved: when another role is, the
     * group was placed without one of this shape (a pod recreated with
     * another shape after the fact). */
    if (found == 0 && rc == 0 && view.refusal == NULL && view.nmembers >= (size_t)id->size) {
        int placed = 0;
        for (size_t i = 0; placed == 0 && i < view.nroles; i++) {
            const char *key = role_key(id, view.roles[i].shape, pool);
            placed = key == NULL ? TOPO_ENOMEM : lookup(ctx, key, now, &r, pool, &err);
        }
        if (placed < 0)
            rc = placed;
        else if (placed == 1)
            view.refusal = topo_pool_printf(pool,
                                            "pod group %s is placed, and none of its roles has "
                                            "this pod's shape",
                                            id->key);
    }
    if (found == 0 && rc == 0 && view.refusal == NULL && t >= 0 && record) {
        topo_cache_group_member gm = {id->key, member, id->size, shape, request, gp.podset_group,
                                      pod->object_json ? pod->object_json : "{}", now + ctx->ttl};
        if ((rc = topo_cache_group_member_put(ctx->cache, &gm, &err)) == 0 && !view.self_recorded)
            rc = topo_admission_group_view(&view, ctx->cache, id, &gp, now, pool, &err);
    }
    int complete = found == 0 && rc == 0 && view.refusal == NULL && t >= 0 && !req->dry_run &&
                   view.nmembers >= (size_t)id->size;
    size_t nroles = complete ? view.nroles : 0, self = 0;
    topo_podset_spec *specs = NULL;
    topo_assignment **as = nroles ? topo_pool_calloc(pool, nroles, sizeof(*as)) : NULL;
    topo_cache_reservation *rs = nroles ? topo_pool_calloc(pool, nroles, sizeof(*rs)) : NULL;
    podset_terms *terms = nroles ? topo_pool_calloc(pool, nroles, sizeof(*terms)) : NULL;
    if (complete && (as == NULL || rs == NULL || terms == NULL))
        rc = topo_err_set(&err, TOPO_ENOMEM, "out of memory");
    if (complete && rc == 0 && (rc = topo_admission_group_specs(&specs, &view, pool, &err)) == 0)
        rc = compute_many(ctx, &ctx->topos[t], specs, nroles, as, &failure, pool,
                          ctx->engine_pool, &err);
    if (complete && rc == 0 && failure == NULL) {
        for (size_t i = 0; i < nroles; i++) {
            terms[i] = (podset_terms){role_key(id, view.roles[i].shape, pool),
                                      view.roles[i].shape, view.roles[i].request};
            self = strcmp(view.roles[i].shape, shape) == 0 ? i : self;
            if (terms[i].key == NULL)
                rc = topo_err_set(&err, TOPO_ENOMEM, "out of memory");
        }
        if (rc == 0 && past_deadline(a)) {
            pthread_mutex_unlock(&ctx->mu);
            return 0;
        }
        if (rc == 0)
            got = reserve_and_claim(ctx, (size_t)t, &rid, terms, specs, as, nroles, self, now, rs,
                                    &p, &why, pool, &err);
        /* Placed: its pods claim their roles' reservations from now on;
         * the members stay until they expire, so that a pod of a shape
         * no role has is refused rather than taken for a new group. */
        rc = got < 0 ? got : 0;
        got = got < 0 ? 0 : got;
        found = 1;
        r = rs[self];
    }
    pthread_mutex_unlock(&ctx->mu);

    if (found == TOPO_ENOMEM || rc == TOPO_ENOMEM || got == TOPO_ENOMEM)
        return -1;
    if (contradiction != NULL)
        return refuse_podset(ctx, a, id, contradiction, pool);
    if (found < 0 || got < 0 || (rc < 0 && rc != TOPO_EINVALID))
        return internal_error(ctx, a, m, "pod group", id->key, &err, pool);
    if (rc == TOPO_EINVALID) /* a role's stored pod no longer reads as valid */
        return refuse_podset(ctx, a, id, topo_pool_strdup(pool, err.text), pool);
    if (found == 1 && got == 1)
        return unplaced(ctx, a, m, why, pool);
    if (found == 1)
        return patch_placed(ctx, a, m, req, topology_of_id(ctx, r.id), &p, pool);
    if (view.refusal != NULL && view.kueue_refusal) {
        atomic_fetch_add(&ctx->denied, 1);
        atomic_fetch_add(&ctx->invalid, 1);
        if (m == MODE_UNGATE)
            a->failure = view.refusal;
        else
            refuse(a, 400, view.refusal);
        return 0;
    }
    if (view.refusal != NULL)
        return refuse_podset(ctx, a, id, view.refusal, pool);
    if (t < 0) {
        failure = no_topology(ctx, missing, pool);
        return no_fit(ctx, a, m, policy, req, id, failure, failure, pool);
    }
    if (!complete)
        return wait_for_group(ctx, a, m, req, id,
                              view.nmembers + (view.self_recorded || !record ? 0 : 1), pool);
    return no_fit(ctx, a, m, policy, req, id, topo_pool_printf(pool, "pod group of %d pods",
                                                                (int)id->size),
                  failure, pool);
}

/* A topology pod: place, reserve, claim, patch. pod_uid: ungating only. */
static int place(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
                 const char *pod_uid, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_podset_id id;
    topo_podset_spec ps;
    topo_cache_reservation r;
    placement p;
    const char *missing = NULL, *why = NULL, *failure = NULL;
    topo_assignment *as = NULL;
    int64_t now = now_s(ctx);
    int rc, found = 0, got = 0;

    memset(&p, 0, sizeof p);
    /* Who it is (under mu: the cache connection is the ctx's). */
    pthread_mutex_lock(&ctx->mu);
    rc = topo_admission_podset_identify(&id, &req->pod, req->namespace_, req->uid, pod_uid,
                                        ctx->cache, pool, &err);
    pthread_mutex_unlock(&ctx->mu);
    if (rc == TOPO_ENOMEM)
        return -1;
    if (rc < 0) {
        atomic_fetch_add(&ctx->denied, 1);
        refuse(a, 400, topo_pool_printf(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    /* What it asks for, as Kueue validates it: a request Kueue refuses can
     * never become valid, so it is refused here, word for word, not gated
     * (whichever pod of its PodSet it is). */
    if ((rc = topo_admission_podset_spec(&ps, &req->pod, id.size, pool, &err)) < 0) {
        if (rc == TOPO_ENOMEM)
            return -1;
        atomic_fetch_add(&ctx->denied, 1);
        atomic_fetch_add(&ctx->invalid, 1);
        refuse(a, 400, topo_pool_strdup(pool, err.text));
        return 0;
    }
    long t = choose_topology(ctx, &req->pod, &ps, &missing);
    topo_admission_policy policy = t >= 0 ? ctx->topos[t].t.policy : ctx->default_policy;
    const char *ns = req->pod.namespace_ ? req->pod.namespace_ : req->namespace_;
    if (ctx->ns_policy != NULL && ns != NULL) {
        topo_admission_policy over;
        if (ctx->ns_policy(ctx->ns_policy_payload, ns, &over) == 1)
            policy = over;
    }

    if (id.group)
        return place_group(ctx, a, m, req, &id, &ps, t, missing, policy, now, pool);
    const char *request = topo_kueue_request_text(&ps, pool);
    if (request == NULL)
        return -1;
    /* The pod as its PodSet's reservation must remember it; its shape is
     * checked only when it first arrives: by the ungater's time later
     * webhooks may have added to the pod, and our own output coming back
     * (reinvocation) carries the nodeSelector we gave it. */
    int ours = topo_admission_kv_get(req->pod.annotations, req->pod.nannotations,
                                     TOPO_ADMISSION_RESERVATION_ANNOTATION) != NULL;
    podset_terms terms = {id.key, m == MODE_ADMIT && !ours ? req->pod.shape : NULL, request};
    const char *contradiction = NULL;

    /* Whether its PodSet holds a reservation already. */
    pthread_mutex_lock(&ctx->mu);
    if ((found = lookup(ctx, id.key, now, &r, pool, &err)) == 1 &&
        (contradiction = contradicts(&r, &terms, pool)) == NULL)
        got = claim(ctx, &p, &r, &id, req->dry_run, now, &why, pool, &err);
    pthread_mutex_unlock(&ctx->mu);
    if (found == TOPO_ENOMEM || got == TOPO_ENOMEM)
        return -1;
    if (found < 0 || got < 0)
        goto internal;
    if (contradiction != NULL)
        return refuse_podset(ctx, a, &id, contradiction, pool);
    warn(a, id.warning ? topo_pool_printf(pool, "topo-webhook: %s", id.warning) : NULL);
    if (found == 1) {
        if (got == 1)
            return unplaced(ctx, a, m, why, pool);
        return patch_placed(ctx, a, m, req, topology_of_id(ctx, r.id), &p, pool);
    }

    /* The first pod of its PodSet: place the whole PodSet. */
    if (t < 0) {
        const char *need = topo_pool_printf(pool, "%d pod(s)", id.size);
        failure = no_topology(ctx, missing, pool);
        return no_fit(ctx, a, m, policy, req, &id, need ? need : "?", failure, pool);
    }
    topology *tp = &ctx->topos[t];
    /* dryRun computes on the snapshot as it is and stores nothing; within
     * the same bounds as a real request, so that it tells no more than one
     * would (a probe cannot learn what a namespace over its caps could get). */
    if (req->dry_run) {
        pthread_mutex_lock(&ctx->mu);
        rc = topo_admission_fair_check(&ctx->fair, ctx->cache, now, ns, ps.requests,
                                       ps.nrequests, id.size, 1, pool, &failure, &err);
        pthread_mutex_unlock(&ctx->mu);
        if (rc < 0)
            goto fair_error;
        if (rc == 1)
            return no_fit(ctx, a, m, policy, req, &id, describe_need(pool, &ps), failure, pool);
    }
    if (req->dry_run && (rc = compute(ctx, tp, &ps, &as, &failure, pool, pool, &err)) < 0)
        goto engine_error;
    if (req->dry_run) {
        if (as == NULL)
            return no_fit(ctx, a, m, policy, req, &id, describe_need(pool, &ps), failure, pool);
        if (dry_run_slot(&p, as, id.rank, pool) < 0)
            return -1;
        return patch_placed(ctx, a, m, req, t, &p, pool);
    }

    /* Placed under the lock: every placement moves the snapshot, so one
     * computed beside another would be stale by the time it is stored
     * (computing optimistically and checking the snapshot's generation
     * wasted half the work at 32 connections). */
    pthread_mutex_lock(&ctx->mu);
    if (past_deadline(a)) {
        pthread_mutex_unlock(&ctx->mu);
        return 0;
    }
    /* Another pod of the PodSet may have placed it meanwhile. */
    found = lookup(ctx, id.key, now, &r, pool, &err);
    /* Within the bounds on room held for pods not created yet; over one,
     * as == NULL and failure says why. */
    int fair = found == 0 ? topo_admission_fair_check(&ctx->fair, ctx->cache, now, ns,
                                                      ps.requests, ps.nrequests, id.size, 1,
                                                      pool, &failure, &err)
                          : 0;
    if (found == 0 && fair == 0)
        rc = compute(ctx, tp, &ps, &as, &failure, pool, ctx->engine_pool, &err);
    int stored = 0;
    if (found == 0 && rc == 0 && as != NULL && past_deadline(a)) {
        pthread_mutex_unlock(&ctx->mu);
        return 0;
    }
    if (found == 0 && rc == 0 && as != NULL) {
        got = reserve_and_claim(ctx, (size_t)t, &id, &terms, &ps, &as, 1, 0, now, &r, &p, &why,
                                pool, &err);
        stored = got < 0 ? got : 0;
        got = got < 0 ? 0 : got;
    } else if (found == 1 && (contradiction = contradicts(&r, &terms, pool)) == NULL) {
        rc = 0; /* placed by another pod of the PodSet: our computation is moot */
        got = claim(ctx, &p, &r, &id, 0, now, &why, pool, &err);
    }
    pthread_mutex_unlock(&ctx->mu);
    if (contradiction != NULL)
        return refuse_podset(ctx, a, &id, contradiction, pool);
    if (rc == TOPO_ENOMEM || found == TOPO_ENOMEM || got == TOPO_ENOMEM ||
        stored == TOPO_ENOMEM)
        return -1;
    if (found < 0 || got < 0 || stored < 0)
        goto internal;
    if (fair < 0)
        goto fair_error;
    if (rc < 0)
        goto engine_error;
    if (found == 0 && as == NULL)
        return no_fit(ctx, a, m, policy, req, &id, describe_need(pool, &ps), failure, pool);
    if (got == 1)
        return unplaced(ctx, a, m, why, pool);
    return patch_placed(ctx, a, m, req, found == 1 ? topology_of_id(ctx, r.id) : t, &p, pool);

fair_error:
    if (err.code == TOPO_ENOMEM)
        return -1;
    goto internal;
engine_error:
    if (err.code == TOPO_ENOMEM)
        return -1;
    atomic_fetch_add(&ctx->denied, 1);
    refuse(a, 400, topo_pool_printf(pool, "topo-webhook: %s", err.text));
    return 0;
internal:
    return internal_error(ctx, a, m, "PodSet", id.key, &err, pool);
}

static int error_body(char **out_body, size_t *out_len, int *out_status, int status,
                      const char *msg)
{
    json_t *doc = json_pack("{s:s}", "error", msg);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text == NULL)
        return -1;
    *out_body = text;
    *out_len = strlen(text);
    *out_status = status;
    return 0;
}

int topo_admission_handle(topo_admission_ctx *ctx, const char *body, size_t len,
                          char **out_body, size_t *out_len, int *out_status)
{
    return topo_admission_handle_until(ctx, 0, body, len, out_body, out_len, out_status);
}

int topo_admission_handle_until(topo_admission_ctx *ctx, int64_t deadline_ns, const char *body,
                                size_t len, char **out_body, size_t *out_len, int *out_status)
{
    topo_admission_request req;
    topo_err err = TOPO_ERR_INIT;
    answer a;
    int ret = -1;

    *out_body = NULL;
    *out_len = 0;
    *out_status = 500;
    memset(&a, 0, sizeof a);
    a.resp = (topo_admission_response)TOPO_ADMISSION_RESPONSE_INIT;
    a.deadline_ns = deadline_ns;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return -1;
    int rc = topo_admission_decode(&req, body, len, pool, &err);
    if (rc == TOPO_ENOMEM)
        goto done;
    if (req.uid == NULL) {
        char msg[TOPO_ERR_TEXT_MAX + 40];
        snprintf(msg, sizeof msg, "malformed AdmissionReview: %s",
                 rc < 0 ? err.text : "no request.uid");
        ret = error_body(out_body, out_len, out_status, rc == TOPO_ELIMIT ? 413 : 400, msg);
        goto done;
    }
    a.resp.uid = req.uid;
    if (rc < 0) {
        atomic_fetch_add(&ctx->denied, 1);
        refuse(&a, 400,
               topo_pool_printf(pool, "topo-webhook: malformed AdmissionReview: %s", err.text));
    } else if (topo_admission_classify(&req) == TOPO_ADMISSION_TOPOLOGY_POD) {
        if (place(ctx, &a, MODE_ADMIT, &req, NULL, pool) < 0)
            goto done;
        if (a.timed_out) {
            atomic_fetch_add(&ctx->timed_out, 1);
            ret = error_body(out_body, out_len, out_status, 504,
                             "the request's deadline passed while it waited to be placed; "
                             "nothing was reserved");
            goto done;
        }
    } else {
        atomic_fetch_add(&ctx->passed, 1);
    }
    topo_err_clear(&err);
    if (topo_admission_encode(out_body, out_len, &a.resp, &err) < 0)
        goto done;
    *out_status = 200;
    ret = 0;
done:
    topo_jsonpatch_free(a.patch);
    topo_pool_free(pool);
    return ret;
}

/* --- ungating ------------------------------------------------------------------------ */

int topo_admission_ungate_pod(topo_admission_ctx *ctx, const char *pod_json, size_t len,
                              char **out_patch, topo_err *err)
{
    json_t *pod = NULL;
    char *review = NULL;
    topo_admission_request req;
    answer a;
    int rc;

    *out_patch = NULL;
    memset(&a, 0, sizeof a);
    a.resp = (topo_admission_response)TOPO_ADMISSION_RESPONSE_INIT;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    if (len > TOPO_MAX_ADMISSION_BODY) {
        rc = topo_err_set(err, TOPO_ELIMIT, "pod: %zu bytes, more than %u", len,
                          TOPO_MAX_ADMISSION_BODY);
        goto done;
    }
    if ((rc = topo_codec_json_parse(&pod, pod_json, len, "pod", err)) < 0)
        goto done;
    const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    if (uid == NULL || uid[0] == '\0') {
        rc = topo_err_set(err, TOPO_EINVALID, "pod: metadata.uid: required");
        goto done;
    }
    if ((review = topo_admission_pod_review(pod, uid)) == NULL) {
        rc = topo_err_set(err, TOPO_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = topo_admission_decode(&req, review, strlen(review), pool, err)) < 0)
        goto done;
    int gated = 0;
    for (size_t i = 0; i < req.pod.nscheduling_gates; i++)
        gated |= strcmp(req.pod.scheduling_gates[i], TOPO_ADMISSION_WAIT_GATE) == 0;
    if (!gated || !topo_admission_pod_has_topology(&req.pod)) {
        rc = topo_err_set(err, TOPO_EINVALID, "pod %s/%s: not gated by %s with a topology request",
                          req.pod.namespace_ ? req.pod.namespace_ : "",
                          req.pod.name ? req.pod.name : "", TOPO_ADMISSION_WAIT_GATE);
        goto done;
    }
    if (place(ctx, &a, MODE_UNGATE, &req, uid, pool) < 0) {
        rc = topo_err_set(err, TOPO_ENOMEM, "out of memory");
    } else if (a.resp.patch != NULL) {
        rc = topo_jsonpatch_dump(out_patch, a.patch);
        if (rc < 0)
            rc = topo_err_set(err, TOPO_ENOMEM, "out of memory");
    } else if (!a.resp.allowed) {
        rc = topo_err_set(err, TOPO_EINVALID, "%s", a.resp.status_message);
    } else {
        rc = topo_err_set(err, TOPO_ENOFIT, "%s", a.failure ? a.failure : "does not fit");
    }
done:
    topo_jsonpatch_free(a.patch);
    json_decref(pod);
    free(review);
    topo_pool_free(pool);
    return rc;
}

int topo_admission_unclaimed_foreach(topo_admission_ctx *ctx, topo_admission_unclaimed_fn fn,
                                     void *payload, topo_err *err)
{
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    pthread_mutex_lock(&ctx->mu);
    int rc = topo_admission_fair_report(ctx->cache, now_s(ctx), fn, payload, pool, err);
    pthread_mutex_unlock(&ctx->mu);
    topo_pool_free(pool);
    return rc;
}
