/* Reservations in the cache: storing a PodSet's, claiming a slot, and
 * whether a pod may claim one. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include "topo/admission.h"

#include "handler_internal.h"
#include "topo/codec.h"
#include "topo/engine.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/strmap.h"

static int slot_from(placement *p, const topo_cache_reservation *r, const topo_cache_slot *s)
{
    p->reservation_id = r->id;
    p->slot = s->index;
    p->levels = r->assignment_levels;
    p->nlevels = r->nassignment_levels;
    p->values = s->values;
    p->assignment_json = r->assignment_json;
    p->res = r;
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

/* How a claim taken over from a provisional one is named: it is provisional
 * too (the pod it is for gives way to no one but binds when it appears),
 * and never taken over again. */
#define SHARED_CLAIMANT TOPO_CACHE_CLAIMANT_PREFIX "shared/"

/* Every slot is claimed: the pod takes over a slot claimed only
 * provisionally (by an admission whose pod the cache has not seen) by
 * another request. Anyone who can reach the webhook can send it
 * AdmissionReviews for pods that are never created, and each one held a
 * slot: the PodSet's real pods were then admitted with no domain at all.
 * The pod created binds its slot when it appears (cache.h "Slot binding");
 * if the claimant displaced was a real pod after all (more pods than slots,
 * all admitted before any appeared), whichever of the two appears first
 * binds the slot and the other runs in the same domain unbound. A slot taken over is not taken over again, so forged requests
 * cannot displace the real pods that displaced theirs. 0 with *p filled; 1
 * when there is none to take; <0 on cache errors. mu held. */
static int take_provisional_slot(topo_admission_ctx *ctx, placement *p,
                                 const topo_cache_reservation *r, const topo_podset_id *id,
                                 int64_t now, topo_pool *pool, topo_err *err)
{
    static const char prefix[] = TOPO_CACHE_CLAIMANT_PREFIX, shared[] = SHARED_CLAIMANT;
    topo_cache_slot *s = topo_pool_calloc(pool, 1, sizeof(*s));
    topo_cache_reservation *now_r = topo_pool_calloc(pool, 1, sizeof(*now_r));
    int released = 0;

    if (s == NULL || now_r == NULL)
        return topo_err_nomem(err, NULL);
    /* the memo's copy may predate claims: the cache's (in pool: the
     * placement points at it) */
    int rc = topo_cache_reservation_get(now_r, ctx->cache, r->id, pool, err);
    if (rc < 0)
        return rc;
    /* free slots given back (unclaimedTTL) are no room to take */
    for (size_t i = 0; i < now_r->nslots; i++)
        if (now_r->slots[i].pod_uid == NULL)
            return 1;
    for (size_t i = 0; i < now_r->nslots; i++) {
        const char *holder = now_r->slots[i].pod_uid;
        if (strncmp(holder, prefix, sizeof prefix - 1) != 0 ||
            strncmp(holder, shared, sizeof shared - 1) == 0)
            continue;
        const char *claimant = topo_pool_printf(pool, "%s%s", shared,
                                                id->claimant + sizeof prefix - 1);
        if (claimant == NULL)
            return topo_err_nomem(err, NULL);
        int32_t slot = now_r->slots[i].index;
        if ((rc = topo_cache_reservation_unclaim(ctx->cache, r->id, slot, holder, &released,
                                                 err)) < 0)
            return rc;
        if (!released ||
            topo_cache_reservation_claim(s, ctx->cache, r->id, claimant, slot, now, pool, err) < 0)
            continue; /* bound or taken meanwhile: the next one */
        topo_err_clear(err);
        topo_log(TOPO_LOG_INFO,
                 "reservation %s of PodSet %s: every slot claimed; slot %d taken over from %s, "
                 "whose pod has not been seen",
                 r->id, r->podset_key, (int)slot, holder);
        slot_from(p, now_r, s);
        p->claimed = 1;
        p->claimant = claimant;
        return 0;
    }
    return 1;
}

/* Claims a slot of reservation r for the pod. 0 with *p filled; 1 when the
 * pod cannot have one (*why set); <0 on cache errors. mu held. */
int adm_claim(topo_admission_ctx *ctx, placement *p, const topo_cache_reservation *r,
              const topo_podset_id *id, int dry_run, int64_t now, const char **why, topo_pool *pool,
              topo_err *err)
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
    int rc = topo_cache_reservation_claim(&s, ctx->cache, r->id, id->claimant, (int32_t)id->rank,
                                          now, pool, err);
    if (rc == 0) {
        slot_from(p, r, &s);
        p->claimed = 1;
        p->claimant = id->claimant;
        atomic_store(&ctx->failing, 0); /* the cache takes writes */
        return 0;
    }
    if (rc == TOPO_ECONFLICT && id->rank >= 0 && (size_t)id->rank < r->nslots) {
        /* Its index is held by a pod still running (a replacement created
         * before the old one ended): same domain, no claim (claimant: who
         * would claim it, should the slot be freed: handler_replace.c). */
        topo_err_clear(err);
        slot_from(p, r, &r->slots[id->rank]);
        p->claimant = id->claimant;
        return 0;
    }
    if (rc == TOPO_ENOFIT && id->rank < 0 && r->nslots > 0 &&
        strncmp(id->claimant, TOPO_CACHE_CLAIMANT_PREFIX, sizeof TOPO_CACHE_CLAIMANT_PREFIX - 1) ==
            0) {
        topo_err why_none = *err;
        int got = take_provisional_slot(ctx, p, r, id, now, pool, err);
        if (got <= 0)
            return got;
        *err = why_none;
    }
    if (rc == TOPO_ENOFIT || rc == TOPO_EINVALID || rc == TOPO_ECONFLICT) {
        *why = topo_pool_printf(pool, "PodSet %s: %s", r->podset_key, err->text);
        topo_err_clear(err);
        return 1;
    }
    return rc;
}

/* A new reservation id in pool. mu held (the ctx's random bytes). */
static char *new_reservation_id(topo_admission_ctx *ctx, const char *topology_name, topo_pool *pool)
{
    if (ctx->rand_left < 8) {
        if (RAND_bytes(ctx->rand_buf, (int)sizeof ctx->rand_buf) != 1) {
            /* Nothing reads OpenSSL's per-thread error queue here: drop
             * what the failure left there (memory, and a stale error for
             * the next OpenSSL call on this thread). */
            ERR_clear_error();
            return NULL;
        }
        ctx->rand_left = sizeof ctx->rand_buf;
    }
    const unsigned char *b = ctx->rand_buf + sizeof ctx->rand_buf - ctx->rand_left;
    ctx->rand_left -= 8;
    return topo_pool_printf(pool, "%s.%02x%02x%02x%02x%02x%02x%02x%02x", topology_name, b[0], b[1],
                            b[2], b[3], b[4], b[5], b[6], b[7]);
}

/* Kueue's TopologyAssignment as compact JSON in pool: the pods' annotation
 * and the cache's column. NULL when out of memory. */
const char *adm_assignment_text(const topo_assignment *as, topo_pool *pool)
{
    json_t *doc = topo_codec_assignment_json(as);
    char *text = doc ? topo_json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    const char *out = text ? topo_pool_strdup(pool, text) : NULL;
    free(text);
    return out;
}

/* The reservation as the cache will hold it, built in memory (no read
 * back): its slots in assignment order, free but the claimant's. */
static int describe_reservation(topo_cache_reservation *r, const topo_cache_reservation_spec *spec,
                                const topo_assignment *as, topo_pool *pool, topo_err *err)
{
    size_t nslots = 0;
    for (size_t d = 0; d < as->ndomains; d++)
        nslots += (size_t)as->domains[d].count;
    topo_cache_slot *slots = topo_pool_calloc(pool, nslots + 1, sizeof(*slots));
    memset(r, 0, sizeof(*r));
    r->assignment_json = adm_assignment_text(as, pool);
    if (slots == NULL || r->assignment_json == NULL)
        return topo_err_nomem(err, NULL);
    size_t k = 0;
    for (size_t d = 0; d < as->ndomains; d++)
        for (int32_t c = 0; c < as->domains[d].count; c++, k++) {
            slots[k].index = (int32_t)k;
            slots[k].values = as->domains[d].values;
            slots[k].nvalues = as->nlevels;
        }
    if (spec->claimant != NULL && (size_t)spec->claimed_slot < nslots)
        slots[spec->claimed_slot].pod_uid = spec->claimant;
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
    r->shape = spec->shape ? spec->shape : "";
    r->request = spec->request ? spec->request : "";
    r->unclaimed_ttl = spec->unclaimed_ttl;
    r->claimed_at = spec->created_at;
    r->gen_term = spec->gen_term;
    r->domain = spec->domain;
    r->ndomain = spec->ndomain;
    r->slots = slots;
    r->nslots = nslots;
    return 0;
}

/* The PodSet's domain down to its required level (topo_cache_reservation_
 * spec domain): the values of the topology's levels to that one, from the
 * first domain of its assignment, or for a by-host one from its first
 * host's labels in the live snapshot. 0 with *n 0 when it has none (no
 * required level, the lowest one, or not found). */
static int podset_domain(const topology *tp, const topo_podset_spec *ps,
                         const topo_assignment *as, const char ***out, size_t *n,
                         topo_pool *pool)
{
    size_t k = 0;
    *out = NULL;
    *n = 0;
    while (ps->required != NULL && k < tp->t.nlevels &&
           strcmp(tp->t.levels[k], ps->required) != 0)
        k++;
    if (ps->required == NULL || k + 1 >= tp->t.nlevels || as->ndomains == 0)
        return 0;
    const char **v = topo_pool_calloc(pool, k + 1, sizeof(*v));
    if (v == NULL)
        return TOPO_ENOMEM;
    if (as->nlevels == tp->t.nlevels) {
        for (size_t i = 0; i <= k; i++)
            v[i] = as->domains[0].values[i];
    } else {
        int found = as->nlevels == 1
                        ? adm_host_labels(tp, as->domains[0].values[0], k + 1, v, pool)
                        : 0;
        if (found < 0)
            return found;
        for (size_t i = 0; found && i <= k; i++)
            found = v[i] != NULL;
        if (!found)
            return 0;
    }
    *out = v;
    *n = k + 1;
    return 0;
}

/* Writes one reservation of topology t (inside the caller's transaction)
 * and describes it in *r, as the cache now holds it. mu held. */
static int store_reservation(topo_admission_ctx *ctx, size_t t, const podset_terms *terms,
                             const topo_podset_spec *ps, const topo_assignment *as, int64_t now,
                             const char *claimant, int32_t slot, topo_cache_reservation *r,
                             topo_pool *pool, topo_err *err)
{
    const topology *tp = &ctx->topos[t];
    topo_cache_reservation_spec spec = {0};
    spec.id = new_reservation_id(ctx, tp->t.name, pool);
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
    spec.claimant = claimant;
    spec.claimed_slot = slot;
    spec.gen_term = atomic_load(&ctx->term);
    const char **domain = NULL;
    if (podset_domain(tp, ps, as, &domain, &spec.ndomain, pool) < 0)
        return topo_err_nomem(err, NULL);
    spec.domain = domain;
    int rc = describe_reservation(r, &spec, as, pool, err);
    if (rc < 0)
        return rc;
    spec.assignment_json = r->assignment_json;
    return topo_cache_reservation_create(ctx->cache, &spec, err);
}

/* A stored reservation's capacity charged to the live snapshot. mu held. */
static void hold_capacity(topo_admission_ctx *ctx, size_t t, const topo_cache_reservation *r,
                          const topo_podset_spec *ps, const topo_assignment *as)
{
    /* as the cache counts it at the next resync (foreach_reserved) */
    int holds = topo_cache_requests_hold_capacity(ps->requests, ps->nrequests);
    for (size_t d = 0; holds && d < as->ndomains; d++) {
        topo_err perr = TOPO_ERR_INIT;
        if (adm_push(ctx, t, r->id, as->domains[d].values, as->nlevels, as->domains[d].count,
                     ps->requests, ps->nrequests, &perr) < 0) {
            topo_log(TOPO_LOG_WARN, "reservation %s: capacity not held: %s", r->id, perr.text);
            /* Until held, another PodSet can be placed on it: the next tick
             * recounts (our own writes do not move data_version, so it
             * would otherwise wait for RESYNC_MAX_S). */
            ctx->next_resync = 0;
        }
    }
    /* Our own writes do not move data_version, so a tick may not recount:
     * keep the gauge current here (the next resync corrects it). */
    ctx->reservations++;
    atomic_fetch_add(&ctx->reserved, 1);
}

/* Stores n reservations (one per PodSet placed together), the pod's slot
 * in reservation `mine` claimed as it is written, in one transaction (mu
 * held). 0 with *p filled (a new reservation always has the pod's slot);
 * <0 on errors, nothing stored. r has room for n. */
int adm_reserve_and_claim(topo_admission_ctx *ctx, size_t t, const topo_podset_id *id,
                          const podset_terms *terms, const topo_podset_spec *ps,
                          topo_assignment *const *as, size_t n, size_t mine, int64_t now,
                          topo_cache_reservation *r, placement *p, topo_pool *pool,
                          topo_err *err)
{
    /* The pod's slot in its new reservation, as adm_claim would give it:
     * its rank when in range, else the first (all are free). Claimed as
     * the reservation is written. */
    size_t nslots = 0;
    for (size_t d = 0; d < as[mine]->ndomains; d++)
        nslots += (size_t)as[mine]->domains[d].count;
    int32_t slot = id->rank >= 0 && (size_t)id->rank < nslots ? (int32_t)id->rank : 0;
    int rc = topo_cache_begin(ctx->cache, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = store_reservation(ctx, t, &terms[i], &ps[i], as[i], now,
                               i == mine ? id->claimant : NULL, i == mine ? slot : 0, &r[i], pool,
                               err);
    if (rc == 0)
        rc = topo_cache_commit(ctx->cache, err);
    else
        topo_cache_rollback(ctx->cache, NULL);
    if (rc < 0)
        return rc;
    memset(p, 0, sizeof(*p));
    slot_from(p, &r[mine], &r[mine].slots[slot]);
    p->claimed = 1;
    p->claimant = id->claimant;
    atomic_store(&ctx->failing, 0); /* the cache takes writes */
    for (size_t i = 0; i < n; i++)
        hold_capacity(ctx, t, &r[i], &ps[i], as[i]);
    return 0;
}

/* The live, unexpired reservation of the PodSet into *r: 1 found, 0 not. */
int adm_lookup(topo_admission_ctx *ctx, const char *key, int64_t now, int memo,
               topo_cache_reservation *r, topo_pool *pool, topo_err *err)
{
    int rc = memo ? adm_memo_get(ctx, key, r, pool) : 0;
    if (rc < 0)
        return topo_err_nomem(err, "admission: reservation memo");
    if (rc == 1 && r->expires_at > now)
        return 1;
    /* Not in the memo, or expired there: the cache says whether another
     * reservation took its place. */
    rc = topo_cache_reservation_get_by_podset(r, ctx->cache, key, pool, err);
    if (rc == TOPO_ENOTFOUND) {
        topo_err_clear(err);
        return 0;
    }
    if (rc < 0)
        return rc;
    if (r->expires_at <= now)
        return 0;
    if (memo)
        adm_memo_put(ctx, r);
    return 1;
}

/* Why a pod cannot claim reservation r (NULL when it can): it is not
 * shaped like the pods the PodSet was placed for, or asks Kueue for
 * something else. terms->shape NULL: not checked. */
const char *adm_contradicts(const topo_cache_reservation *r, const podset_terms *terms,
                            topo_pool *pool)
{
    if (terms->shape != NULL && r->shape[0] != '\0' && strcmp(r->shape, terms->shape) != 0)
        return topo_pool_printf(pool,
                                "the pod's shape (%s) is not that of the pods its PodSet was "
                                "placed for (%s): its resources, nodeSelector, affinity or "
                                "tolerations differ, and a PodSet's pods share one template",
                                terms->shape, r->shape);
    if (terms->request != NULL && r->request[0] != '\0' && strcmp(r->request, terms->request) != 0)
        return topo_pool_printf(pool, "the pod's Kueue request (%s) contradicts its PodSet's (%s)",
                                terms->request, r->request);
    return NULL;
}
