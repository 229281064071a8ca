/* The answers to a topology pod: placed (the patch), not fitting (the
 * no-fit policy), unplaced, refused, and the ungater's patch. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/admission.h"
#include "topo/admission_patch.h"
#include "topo/admission_review.h"
#include "topo/jsonpatch.h"

#include "handler_internal.h"
#include "topo/clock.h"
#include "topo/codec.h"
#include "topo/engine.h"
#include "topo/limits.h"
#include "topo/log.h"

/* --- the answer ---------------------------------------------------------------------- */

/* Past the request's deadline nobody reads the answer (the API server has
 * applied its failure policy): a request that waited that long for the lock
 * or the engine stops before it stores anything, so no room is reserved
 * for a pod that will not carry our patch. */
int adm_past_deadline(answer *a)
{
    if (a->deadline_ns <= 0)
        return 0;
    if (topo_clock_ns() < a->deadline_ns)
        return 0;
    a->timed_out = 1;
    return 1;
}

void adm_warn(answer *a, const char *w)
{
    if (w != NULL && a->resp.nwarnings < sizeof a->warnings / sizeof a->warnings[0])
        a->warnings[a->resp.nwarnings++] = w;
    a->resp.warnings = a->warnings;
}

void adm_refuse(answer *a, int code, const char *msg)
{
    a->resp.allowed = 0;
    a->resp.status_code = code;
    a->resp.status_message = msg;
}

/* Not fitting: the policy. */
int adm_no_fit(topo_admission_ctx *ctx, answer *a, mode m, topo_admission_policy policy,
               const topo_admission_request *req, const topo_podset_id *id, const char *need,
               const char *failure, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    if (m == MODE_UNGATE) {
        a->failure = failure;
        return 0;
    }
    switch (policy) {
    case TOPO_ADMISSION_POLICY_DENY:
        atomic_fetch_add(&ctx->denied, 1);
        adm_refuse(
            a, 403,
            topo_pool_printf(pool, "topo-webhook: PodSet %s needs %s: %s", id->key, need, failure));
        return 0;
    case TOPO_ADMISSION_POLICY_IGNORE:
        atomic_fetch_add(&ctx->ignored, 1);
        adm_warn(a, topo_pool_printf(pool, "topo-webhook: not placed: %s", failure));
        return 0;
    case TOPO_ADMISSION_POLICY_GATE:
    default:
        break;
    }
    /* Sealed like a placed pod: its role is the shape the ungater places
     * it with, and our own output coming back is told apart from a copy. */
    const char *key = a->role != NULL ? adm_role_key(id, a->role, pool) : id->key;
    char *why = topo_pool_alloc(pool, TOPO_ADMISSION_WAIT_REASON_MAX + 1);
    if (why != NULL)
        topo_admission_wait_reason_text(why, failure);
    topo_kv ann[4] = {{TOPO_ADMISSION_WAIT_REASON_ANNOTATION, why},
                      {TOPO_ADMISSION_PODSET_ANNOTATION, id->key},
                      {TOPO_CACHE_SEAL_ANNOTATION,
                       key ? adm_seal(ctx, req, key, NULL, NULL, a->role, pool) : NULL},
                      {TOPO_ADMISSION_ROLE_ANNOTATION, a->role}};
    if (ann[0].value == NULL || ann[2].value == NULL)
        return TOPO_ENOMEM;
    if (adm_patch_start(a) < 0)
        return TOPO_ENOMEM;
    if (topo_admission_patch_gate(a->patch, &req->pod, TOPO_ADMISSION_WAIT_GATE, &err) < 0 ||
        topo_admission_patch_pod(a->patch, &req->pod, NULL, 0, ann, a->role != NULL ? 4 : 3, &err) <
            0)
        return err.code == TOPO_ENOMEM
                   ? -1
                   : (adm_refuse(a, 500, topo_pool_printf(pool, "%s", err.text)), 0);
    a->resp.patch = a->patch;
    atomic_fetch_add(&ctx->gated, 1);
    adm_warn(a, topo_pool_printf(pool, "topo-webhook: gated until it fits: %s", failure));
    /* kubectl describe pod says why it waits, in the annotation's words;
     * posted once the pod exists (it has no uid, maybe no name, yet) */
    if (!req->dry_run)
        adm_event_queue(ctx, adm_pod_namespace(req), "", -1, id->key, "Normal",
                        TOPO_ADMISSION_EVENT_WAITING, ann[0].value, adm_now_s(ctx));
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
        return TOPO_ENOMEM;
    if (by_host) {
        const char **v = topo_pool_calloc(pool, tp->t.nlevels, sizeof(*v));
        if (v == NULL || adm_host_labels(tp, p->values[0], tp->t.nlevels - 1, v, pool) < 0)
            return TOPO_ENOMEM;
        n = 0;
        /* a level the host is not labelled at (or a host that left the
         * snapshot): its hostname still pins it */
        for (size_t i = 0; i + 1 < tp->t.nlevels; i++)
            if (v[i] != NULL)
                sel[n++] = (topo_kv){tp->t.levels[i], v[i]};
        sel[n++] = (topo_kv){p->levels[0], p->values[0]};
    } else {
        for (size_t i = 0; i < n; i++)
            sel[i] = (topo_kv){p->levels[i], p->values[i]};
    }
    *out = sel;
    *out_n = n;
    return 0;
}

/* The reservation's signed record for the pod (cache.h "Adoption"), in
 * pool; NULL when out of memory. */
static const char *record_text(topo_admission_ctx *ctx, const topo_cache_reservation *r,
                               topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    char *text = NULL;
    if (topo_cache_reservation_record(&text, r, &ctx->keys, &err) < 0) {
        topo_log(TOPO_LOG_WARN, "reservation %s: no record: %s", r->id, err.text);
        return NULL;
    }
    const char *out = topo_pool_strdup(pool, text);
    free(text);
    return out;
}

int adm_patch_placed(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
                     long t, const placement *p, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv *sel = NULL;
    size_t nsel = 0;
    char *slot = topo_pool_printf(pool, "%d", (int)p->slot);
    if (slot == NULL || slot_selector(ctx, t, p, &sel, &nsel, pool) < 0)
        return TOPO_ENOMEM;
    if (p->values == NULL || p->nlevels == 0) {
        /* A slot the engine gave no domain (pods past the last whole
         * slice): nothing to pin it to. */
        atomic_fetch_add(&ctx->ignored, 1);
        if (m == MODE_UNGATE)
            a->failure = "its slot has no topology domain";
        else
            adm_warn(a, "topo-webhook: not placed: its slot has no topology domain");
        return 0;
    }
    /* The seal binds the slot to this pod's namespace and PodSet: a copy of
     * these annotations anywhere else claims nothing (cache.h "seal"). */
    const char *seal = adm_seal(ctx, req, p->res != NULL ? p->res->podset_key : a->podset_key,
                                p->reservation_id, slot, a->role, pool);
    if (seal == NULL)
        return TOPO_ENOMEM;
    topo_kv ann[6] = {{TOPO_ADMISSION_ASSIGNMENT_ANNOTATION, p->assignment_json},
                      {TOPO_ADMISSION_RESERVATION_ANNOTATION, p->reservation_id},
                      {TOPO_ADMISSION_SLOT_ANNOTATION, slot},
                      {TOPO_CACHE_SEAL_ANNOTATION, seal}};
    size_t nann = 4;
    const char *record = NULL;
    if (ctx->records && p->res != NULL) {
        if ((record = record_text(ctx, p->res, pool)) == NULL)
            return TOPO_ENOMEM;
        ann[nann++] = (topo_kv){TOPO_CACHE_RECORD_ANNOTATION, record};
    }
    if (a->role != NULL)
        ann[nann++] = (topo_kv){TOPO_ADMISSION_ROLE_ANNOTATION, a->role};
    if (adm_patch_start(a) < 0)
        return TOPO_ENOMEM;
    int rc = topo_admission_patch_pod(a->patch, &req->pod, sel, nsel, ann, nann, &err);
    if (rc == 0 && m == MODE_UNGATE)
        rc = topo_admission_patch_ungate(a->patch, &req->pod, &err);
    if (rc == TOPO_ENOMEM)
        return TOPO_ENOMEM;
    if (rc < 0) {
        /* the pod pins a level elsewhere: its own selector wins, and the
         * slot stays for a pod that can take it */
        if (p->claimed) {
            topo_err uerr = TOPO_ERR_INIT;
            pthread_mutex_lock(&ctx->mu);
            if (topo_cache_reservation_unclaim(ctx->cache, p->reservation_id, p->slot, p->claimant,
                                               NULL, &uerr) < 0)
                topo_log(TOPO_LOG_WARN, "reservation %s: slot %d not given back: %s",
                         p->reservation_id, (int)p->slot, uerr.text);
            pthread_mutex_unlock(&ctx->mu);
        }
        atomic_fetch_add(&ctx->ignored, 1);
        if (m == MODE_UNGATE)
            a->failure = topo_pool_printf(pool, "%s", err.text);
        else
            adm_warn(a, topo_pool_printf(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    a->resp.patch = a->patch;
    atomic_fetch_add(m == MODE_UNGATE ? &ctx->ungated : &ctx->placed, 1);
    return 0;
}

/* dryRun: the slot the pod would get in a fresh assignment (its rank's,
 * else the first), nothing stored. */
int adm_dry_run_slot(placement *p, const topo_assignment *as, int64_t rank, topo_pool *pool)
{
    const char *json = adm_assignment_text(as, pool);
    if (json == NULL)
        return TOPO_ENOMEM;
    int64_t k = rank >= 0 ? rank : 0;
    size_t d = 0;
    while (d < as->ndomains && k >= as->domains[d].count)
        k -= as->domains[d++].count;
    /* A rank past every domain's pods (a slice the engine left out) has no
     * domain: patch_placed says so rather than pin it anywhere. */
    *p = (placement){"dry-run",
                     (int32_t)(rank >= 0 ? rank : 0),
                     as->levels,
                     d < as->ndomains ? as->domains[d].values : NULL,
                     d < as->ndomains ? as->nlevels : 0,
                     json,
                     0,
                     NULL,
                     NULL};
    return 0;
}

/* Its PodSet is placed but holds no slot for it: admitted as it is. */
int adm_unplaced(topo_admission_ctx *ctx, answer *a, mode m, const char *why, topo_pool *pool)
{
    atomic_fetch_add(&ctx->ignored, 1);
    if (m == MODE_UNGATE)
        a->failure = why;
    else
        adm_warn(a, topo_pool_printf(pool, "topo-webhook: not placed: %s", why ? why : "no slot"));
    return 0;
}

int adm_refuse_podset(topo_admission_ctx *ctx, answer *a, const topo_podset_id *id, const char *why,
                      topo_pool *pool)
{
    if (why == NULL)
        return TOPO_ENOMEM;
    atomic_fetch_add(&ctx->denied, 1);
    adm_refuse(a, 400, topo_pool_printf(pool, "topo-webhook: PodSet %s: %s", id->key, why));
    return 0;
}

/* The reservation key of a pod group's role. */
const char *adm_role_key(const topo_podset_id *id, const char *shape, topo_pool *pool)
{
    return topo_pool_printf(pool, "%s/role/%s", id->key, shape);
}

/* Why no configured topology takes the pod; a level none has is counted. */
const char *adm_no_topology(topo_admission_ctx *ctx, const char *missing, topo_pool *pool)
{
    if (missing == NULL)
        return topo_pool_printf(pool, "no configured topology covers the pod's nodeSelector");
    atomic_fetch_add(&ctx->unknown_level, 1);
    return topo_pool_printf(pool, "no configured topology has level %s", missing);
}

/* The cache failed: admit unchanged rather than stall the cluster. what
 * names the PodSet in the log ("PodSet <key>", "pod group <key>"). */
int adm_internal_error(topo_admission_ctx *ctx, answer *a, mode m, const char *what,
                       const char *key, const topo_err *err, topo_pool *pool)
{
    adm_failed_locally(ctx);
    topo_log(TOPO_LOG_ERROR, "%s %s: %s", what, key, err->text);
    if (m == MODE_UNGATE)
        a->failure = topo_pool_printf(pool, "%s", err->text);
    else
        adm_warn(
            a, topo_pool_printf(pool, "topo-webhook: not placed (internal error): %s", err->text));
    return 0;
}

/* A pod of a group still waiting for some of its pods: gated whatever the
 * no-fit policy (the group cannot be placed without them). */
int adm_wait_for_group(topo_admission_ctx *ctx, answer *a, mode m,
                       const topo_admission_request *req, const topo_podset_id *id, size_t arrived,
                       topo_pool *pool)
{
    const char *why = topo_pool_printf(pool, "pod group: %zu of its %d pods have arrived", arrived,
                                       (int)id->size);
    if (why == NULL)
        return TOPO_ENOMEM;
    a->waiting_group = 1;
    return adm_no_fit(ctx, a, m, TOPO_ADMISSION_POLICY_GATE, req, id, why, why, pool);
}
