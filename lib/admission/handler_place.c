/* Placing a topology pod's PodSet: which topology, the engine, and the
 * whole path of a pod (place) and of a Kueue pod group's pod (place_group). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "topo/admission.h"
#include "topo/admission_review.h"

#include "handler_internal.h"
#include "topo/codec.h"
#include "topo/count.h"
#include "topo/engine.h"
#include "topo/kueue.h"
#include "topo/limits.h"
#include "topo/log.h"

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
    if (c == NULL || d == NULL ||
        (c->levels = adm_dup_strings(pool, a->levels, a->nlevels)) == NULL)
        return NULL;
    for (size_t i = 0; i < a->ndomains; i++) {
        if ((d[i].values = adm_dup_strings(pool, a->domains[i].values, a->nlevels)) == NULL)
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
        return topo_err_nomem(err, NULL);
    const topo_snapshot *snap = topo_live_acquire(t->t.live);
    rc = topo_engine_find(res, snap, ps, n, NULL, &ctx->gates, scratch, err);
    for (size_t i = 0; rc == 0 && i < n && *failure == NULL; i++) {
        if (res[i].assignment == NULL)
            *failure = topo_pool_strdup(pool, res[i].failure ? res[i].failure : "does not fit");
        else if ((out[i] = copy_assignment(res[i].assignment, pool)) == NULL)
            rc = topo_err_nomem(err, NULL);
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
                   topo_assignment **out, const char **failure, topo_pool *pool, topo_pool *scratch,
                   topo_err *err)
{
    return compute_many(ctx, t, ps, 1, out, failure, pool, scratch, err);
}

/* A claim given back: the pod does not go to its slot after all. mu held. */
static void give_back(topo_admission_ctx *ctx, const placement *p)
{
    topo_err err = TOPO_ERR_INIT;
    if (p->claimed && topo_cache_reservation_unclaim(ctx->cache, p->reservation_id, p->slot,
                                                     p->claimant, NULL, &err) < 0)
        topo_log(TOPO_LOG_WARN, "reservation %s: slot %d not given back: %s", p->reservation_id,
                 (int)p->slot, err.text);
}

/* Refused for good: its node failed and nodeReplacement.failFast. */
static int refuse_unrepairable(topo_admission_ctx *ctx, answer *a, mode m,
                               const topo_podset_id *id, const char *why, topo_pool *pool)
{
    const char *msg = why ? topo_pool_printf(pool,
                                             "topo-webhook: PodSet %s cannot be repaired "
                                             "(nodeReplacement.failFast): %s",
                                             id->key, why)
                          : NULL;
    if (msg == NULL)
        return TOPO_ENOMEM;
    if (m == MODE_UNGATE) { /* created already: it stays gated, with the reason */
        a->failure = msg;
        return 0;
    }
    atomic_fetch_add(&ctx->denied, 1);
    adm_refuse(a, 403, msg);
    return 0;
}

/* --- a pod group's placement ----------------------------------------------------------- */

/* What placing a pod of a group came to: decided under the lock
 * (place_group_locked), answered after it (answer_group), as a single
 * PodSet's place_result is. */
typedef struct group_result {
    /* The pod as its role sees it: set before the lock. */
    topo_podset_id rid; /* id, keyed by its role */
    podset_terms mine;
    topo_group_pod gp; /* gp.adding: the pod is recorded (not dryRun) */
    /* Under the lock. */
    int found; /* its role's reservation: 1 found, 0 none, <0 errors */
    int got;   /* adm_claim's, or adm_reserve_and_claim's */
    int rc;
    int repair; /* ADM_REPAIR_* */
    int complete;
    int timed_out; /* past the deadline, nothing stored */
    const char *why, *contradiction, *failure;
    topo_cache_reservation r;
    topo_group_view view;
    placement p;
    topo_err err;
} group_result;

/* Its role's reservation found: the pod claims a slot of it, repaired when
 * the slot's node failed. mu held. */
static void claim_role_locked(topo_admission_ctx *ctx, group_result *g, answer *a, mode m,
                              const topo_admission_request *req, const topo_podset_id *id,
                              const topo_podset_spec *ps, int64_t now, topo_pool *pool)
{
    const topo_admission_pod *pod = &req->pod;
    if (g->found == 1 && (g->contradiction = adm_contradicts(&g->r, &g->mine, pool)) == NULL)
        g->got = adm_claim(ctx, &g->p, &g->r, &g->rid, req->dry_run, now, &g->why, pool, &g->err);
    /* Our own output coming back keeps its slot (a gated pod carries a
     * sealed role, but no reservation). */
    int ours = a->sealed && topo_admission_kv_get(pod->annotations, pod->nannotations,
                                                  TOPO_ADMISSION_RESERVATION_ANNOTATION) != NULL;
    if (g->found == 1 && g->contradiction == NULL && g->got == 0 && !ours && !req->dry_run) {
        g->repair = adm_repair(ctx, m, &g->p, &g->r, ps, req, id->key, now, &g->why, pool, &g->err);
        if (g->repair == ADM_REPAIR_WAIT || g->repair == ADM_REPAIR_REFUSE)
            give_back(ctx, &g->p);
        g->got = g->repair < 0 ? g->repair : g->got;
    }
}

/* No reservation for its role: the group as the cache holds it, with the
 * pod recorded among its members. mu held. */
static void record_member_locked(topo_admission_ctx *ctx, group_result *g,
                                 const topo_admission_request *req, const topo_podset_id *id,
                                 long t, int64_t now, topo_pool *pool)
{
    const topo_admission_pod *pod = &req->pod;
    if (g->found == 0)
        g->rc = adm_group_view(&g->view, ctx->cache, id, &g->gp, now, pool, &g->err);
    /* Complete already and its role not reserved: when another role is, the
     * group was placed without one of this shape (a pod recreated with
     * another shape after the fact). */
    if (g->found == 0 && g->rc == 0 && g->view.refusal == NULL &&
        g->view.nmembers >= (size_t)id->size) {
        int placed = 0;
        for (size_t i = 0; placed == 0 && i < g->view.nroles; i++) {
            const char *key = adm_role_key(id, g->view.roles[i].shape, pool);
            placed =
                key == NULL ? TOPO_ENOMEM : adm_lookup(ctx, key, now, 0, &g->r, pool, &g->err);
        }
        if (placed < 0)
            g->rc = placed;
        else if (placed == 1)
            g->view.refusal = topo_pool_printf(pool,
                                               "pod group %s is placed, and none of its roles "
                                               "has this pod's shape",
                                               id->key);
    }
    if (g->found == 0 && g->rc == 0 && g->view.refusal == NULL && t >= 0 && g->gp.adding) {
        topo_cache_group_member gm = {id->key,
                                      g->gp.member,
                                      id->size,
                                      g->mine.shape,
                                      g->gp.request,
                                      g->gp.podset_group,
                                      pod->object_json ? pod->object_json : "{}",
                                      now + ctx->ttl};
        if ((g->rc = topo_cache_group_member_put(ctx->cache, &gm, &g->err)) == 0 &&
            !g->view.self_recorded)
            g->rc = adm_group_view(&g->view, ctx->cache, id, &g->gp, now, pool, &g->err);
    }
}

/* The group complete: every role placed together in topology t, reserved,
 * and the pod's slot in its role's reservation claimed. mu held. */
static void reserve_group_locked(topo_admission_ctx *ctx, group_result *g, answer *a,
                                 const topo_podset_id *id, long t, int64_t now, topo_pool *pool)
{
    size_t nroles = g->complete ? g->view.nroles : 0, self = 0;
    topo_podset_spec *specs = NULL;
    topo_assignment **as = nroles ? topo_pool_calloc(pool, nroles, sizeof(*as)) : NULL;
    topo_cache_reservation *rs = nroles ? topo_pool_calloc(pool, nroles, sizeof(*rs)) : NULL;
    podset_terms *terms = nroles ? topo_pool_calloc(pool, nroles, sizeof(*terms)) : NULL;
    if (g->complete && (as == NULL || rs == NULL || terms == NULL))
        g->rc = topo_err_nomem(&g->err, NULL);
    if (g->complete && g->rc == 0 &&
        (g->rc = adm_group_specs(&specs, &g->view, pool, &g->err)) == 0)
        g->rc = compute_many(ctx, &ctx->topos[t], specs, nroles, as, &g->failure, pool,
                             ctx->engine_pool, &g->err);
    if (!(g->complete && g->rc == 0 && g->failure == NULL))
        return;
    for (size_t i = 0; i < nroles; i++) {
        terms[i] = (podset_terms){adm_role_key(id, g->view.roles[i].shape, pool),
                                  g->view.roles[i].shape, g->view.roles[i].request};
        self = strcmp(g->view.roles[i].shape, g->mine.shape) == 0 ? i : self;
        if (terms[i].key == NULL)
            g->rc = topo_err_nomem(&g->err, NULL);
    }
    if (g->rc == 0 && adm_past_deadline(a)) {
        g->timed_out = 1;
        return;
    }
    if (g->rc == 0)
        g->got = adm_reserve_and_claim(ctx, (size_t)t, &g->rid, terms, specs, as, nroles, self,
                                       now, rs, &g->p, pool, &g->err);
    /* Placed: its pods claim their roles' reservations from now on;
     * the members stay until they expire, so that a pod of a shape
     * no role has is refused rather than taken for a new group. */
    g->rc = g->got < 0 ? g->got : 0;
    g->got = g->got < 0 ? 0 : g->got;
    g->found = 1;
    g->r = rs[self];
}

/* The locked step of a pod group's pod: its role's slot claimed, else the
 * pod recorded, and the group placed when it is complete. mu held. */
static void place_group_locked(topo_admission_ctx *ctx, group_result *g, answer *a, mode m,
                               const topo_admission_request *req, const topo_podset_id *id,
                               const topo_podset_spec *ps, long t, int64_t now, topo_pool *pool)
{
    if (adm_past_deadline(a)) {
        g->timed_out = 1;
        return;
    }
    g->found = adm_lookup(ctx, g->rid.key, now, 0, &g->r, pool, &g->err);
    g->repair = ADM_REPAIR_NONE;
    claim_role_locked(ctx, g, a, m, req, id, ps, now, pool);
    record_member_locked(ctx, g, req, id, t, now, pool);
    g->complete = g->found == 0 && g->rc == 0 && g->view.refusal == NULL && t >= 0 &&
                  !req->dry_run && g->view.nmembers >= (size_t)id->size;
    reserve_group_locked(ctx, g, a, id, t, now, pool);
}

/* The answer to a pod group's pod, from what the locked step decided. */
static int answer_group(topo_admission_ctx *ctx, answer *a, mode m,
                        const topo_admission_request *req, const topo_podset_id *id,
                        const topo_podset_spec *ps, long t, const char *missing,
                        topo_admission_policy policy, const group_result *g, topo_pool *pool)
{
    const topo_group_view *view = &g->view;
    if (g->found == TOPO_ENOMEM || g->rc == TOPO_ENOMEM || g->got == TOPO_ENOMEM)
        return TOPO_ENOMEM;
    if (g->contradiction != NULL)
        return adm_refuse_podset(ctx, a, id, g->contradiction, pool);
    if (g->found < 0 || g->got < 0 || (g->rc < 0 && g->rc != TOPO_EINVALID))
        return adm_internal_error(ctx, a, m, "pod group", id->key, &g->err, pool);
    if (g->rc == TOPO_EINVALID) /* a role's stored pod no longer reads as valid */
        return adm_refuse_podset(ctx, a, id, topo_pool_strdup(pool, g->err.text), pool);
    if (g->found == 1 && g->got == 1)
        return adm_unplaced(ctx, a, m, g->why, pool);
    if (g->found == 1 && g->repair == ADM_REPAIR_WAIT)
        return adm_no_fit(ctx, a, m, policy, req, id, describe_need(pool, ps), g->why, pool);
    if (g->found == 1 && g->repair == ADM_REPAIR_REFUSE)
        return refuse_unrepairable(ctx, a, m, id, g->why, pool);
    if (g->found == 1)
        return adm_patch_placed(ctx, a, m, req, adm_topology_of_id(ctx, g->r.id), &g->p, pool);
    if (view->refusal != NULL && view->kueue_refusal) {
        atomic_fetch_add(&ctx->denied, 1);
        atomic_fetch_add(&ctx->invalid, 1);
        if (m == MODE_UNGATE)
            a->failure = view->refusal;
        else
            adm_refuse(a, 400, view->refusal);
        return 0;
    }
    if (view->refusal != NULL)
        return adm_refuse_podset(ctx, a, id, view->refusal, pool);
    if (t < 0) {
        const char *failure = adm_no_topology(ctx, missing, pool);
        return adm_no_fit(ctx, a, m, policy, req, id, failure, failure, pool);
    }
    if (!g->complete)
        return adm_wait_for_group(ctx, a, m, req, id,
                                  view->nmembers + (view->self_recorded || !g->gp.adding ? 0 : 1),
                                  pool);
    return adm_no_fit(ctx, a, m, policy, req, id,
                      topo_pool_printf(pool, "pod group of %d pods", (int)id->size), g->failure,
                      pool);
}

/* A pod of a Kueue pod group (handler_groups.c): its role's reservation when the
 * group is placed; else recorded, and the group placed once all its pods
 * are there, every role together. */
static int place_group(topo_admission_ctx *ctx, answer *a, mode m,
                       const topo_admission_request *req, const topo_podset_id *id,
                       const topo_podset_spec *ps, long t, const char *missing,
                       topo_admission_policy policy, int64_t now, topo_pool *pool)
{
    const topo_admission_pod *pod = &req->pod;
    group_result g;
    memset(&g, 0, sizeof g);
    g.err = (topo_err)TOPO_ERR_INIT;
    /* The shape the pod was first admitted with, once we annotated it: by
     * the ungater's time, or when our own output comes back, it carries
     * what others or we added. Only under our seal: anyone can write a
     * role, and a role taken on trust would make the pod any shape. */
    const char *shape = a->sealed ? topo_admission_kv_get(pod->annotations, pod->nannotations,
                                                          TOPO_ADMISSION_ROLE_ANNOTATION)
                                  : NULL;
    shape = shape != NULL ? shape : pod->shape;
    const char *request = topo_kueue_request_text(ps, pool);
    const char *member = pod->name != NULL && pod->name[0] != '\0' ? pod->name : req->uid;
    g.rid = *id;
    g.rid.key = adm_role_key(id, shape, pool);
    if (request == NULL || g.rid.key == NULL)
        return TOPO_ENOMEM;
    g.mine = (podset_terms){g.rid.key, shape, request};
    a->role = shape;
    a->podset_key = g.rid.key;
    /* The ungater records a gated pod too: it may have been gated by a
     * replica that does not place (docs/webhook.md "Several replicas"). */
    g.gp = (topo_group_pod){member, shape, request, ps->group ? ps->group : "", !req->dry_run};

    pthread_mutex_lock(&ctx->mu);
    place_group_locked(ctx, &g, a, m, req, id, ps, t, now, pool);
    pthread_mutex_unlock(&ctx->mu);
    if (g.timed_out)
        return 0;
    return answer_group(ctx, a, m, req, id, ps, t, missing, policy, &g, pool);
}

/* dryRun: computed on the snapshot as it is, nothing stored; within the
 * same bounds as a real request, so that it tells no more than one would
 * (a probe cannot learn what a namespace over its caps could get). */
static int place_dry_run(topo_admission_ctx *ctx, answer *a, mode m,
                         const topo_admission_request *req, const topo_podset_id *id,
                         const topo_podset_spec *ps, long t, topo_admission_policy policy,
                         const char *ns, int64_t now, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_assignment *as = NULL;
    const char *failure = NULL;
    placement p;

    memset(&p, 0, sizeof p);
    pthread_mutex_lock(&ctx->mu);
    int rc = adm_fair_check(&ctx->fair, ctx->cache, now, ns, ps->requests, ps->nrequests, id->size,
                            1, pool, &failure, &err);
    pthread_mutex_unlock(&ctx->mu);
    if (rc < 0)
        return err.code == TOPO_ENOMEM ? -1
                                       : adm_internal_error(ctx, a, m, "PodSet", id->key, &err,
                                                            pool);
    if (rc == 0 && compute(ctx, &ctx->topos[t], ps, &as, &failure, pool, pool, &err) < 0) {
        if (err.code == TOPO_ENOMEM)
            return TOPO_ENOMEM;
        atomic_fetch_add(&ctx->denied, 1);
        adm_refuse(a, 400, topo_pool_printf(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    if (as == NULL)
        return adm_no_fit(ctx, a, m, policy, req, id, describe_need(pool, ps), failure, pool);
    if (adm_dry_run_slot(&p, as, id->rank, pool) < 0)
        return TOPO_ENOMEM;
    return adm_patch_placed(ctx, a, m, req, t, &p, pool);
}

/* --- a PodSet's placement -------------------------------------------------------------- */

/* What placing a pod came to: decided under the lock, answered after it
 * (answer_placement). */
typedef enum place_outcome {
    PLACE_PATCHED,     /* p is the pod's slot in topology `topology` */
    PLACE_UNPLACED,    /* its PodSet is placed without a slot for it: why */
    PLACE_CONTRADICTS, /* it is not the pod its PodSet's reservation was made for: why */
    PLACE_NO_FIT,      /* the PodSet does not fit: why (the engine's, or a cap's) */
    PLACE_INVALID,     /* the engine refused the request: err */
    PLACE_FAILED,      /* the cache failed: err */
    PLACE_TIMED_OUT,   /* past the request's deadline, nothing stored */
    PLACE_REFUSED,     /* its slot's node failed, no room, failFast: why */
    PLACE_NEW,         /* its single-pod PodSet's node failed: placed anew */
    PLACE_NOMEM
} place_outcome;

typedef struct place_result {
    place_outcome outcome;
    placement p;
    long topology;
    const char *why;
    topo_cache_reservation r; /* the PodSet's reservation, when it has one */
    topo_err err;
} place_result;

/* The pod claims a slot of its PodSet's reservation res->r (mu held). */
static void claim_reserved(topo_admission_ctx *ctx, place_result *res, const topo_podset_id *id,
                           const podset_terms *terms, int dry_run, int64_t now, topo_pool *pool)
{
    if ((res->why = adm_contradicts(&res->r, terms, pool)) != NULL) {
        res->outcome = PLACE_CONTRADICTS;
        return;
    }
    int got = adm_claim(ctx, &res->p, &res->r, id, dry_run, now, &res->why, pool, &res->err);
    res->outcome = got == TOPO_ENOMEM ? PLACE_NOMEM
                   : got < 0          ? PLACE_FAILED
                   : got == 1         ? PLACE_UNPLACED
                                      : PLACE_PATCHED;
    res->topology = adm_topology_of_id(ctx, res->r.id);
}

static place_outcome failed(int code)
{
    return code == TOPO_ENOMEM ? PLACE_NOMEM : PLACE_FAILED;
}

/* The slot claimed: its node may have failed or be unable to take the pod
 * now (handler_replace.c). mu held. */
static void repair_slot(topo_admission_ctx *ctx, place_result *res, mode m,
                        const topo_admission_request *req, const topo_podset_spec *ps,
                        const char *gate_key, int64_t now, topo_pool *pool)
{
    if (res->outcome != PLACE_PATCHED)
        return;
    int rc = adm_repair(ctx, m, &res->p, &res->r, ps, req, gate_key, now, &res->why, pool,
                        &res->err);
    if (rc == ADM_REPAIR_WAIT || rc == ADM_REPAIR_REFUSE)
        give_back(ctx, &res->p);
    res->outcome = rc < 0                     ? failed(rc)
                   : rc == ADM_REPAIR_WAIT    ? PLACE_NO_FIT
                   : rc == ADM_REPAIR_REFUSE  ? PLACE_REFUSED
                   : rc == ADM_REPAIR_NEW     ? PLACE_NEW
                                              : PLACE_PATCHED;
}


/* The first pod of its PodSet, which holds no reservation (looked up in
 * the same hold of mu): the whole PodSet placed in topology t, reserved,
 * and the pod's slot claimed. Under the lock: every placement moves the
 * snapshot, so one computed beside another would be stale by the time it
 * is stored (computing optimistically and checking the snapshot's
 * generation wasted half the work at 32 connections). mu held. */
static void place_podset_locked(topo_admission_ctx *ctx, place_result *res, answer *a, long t,
                                const topo_podset_id *id, const podset_terms *terms,
                                const topo_podset_spec *ps, const char *ns, int64_t now,
                                topo_pool *pool)
{
    topo_assignment *as = NULL;
    int fair, rc, got;

    if (adm_past_deadline(a)) {
        res->outcome = PLACE_TIMED_OUT;
        return;
    }
    /* Within the bounds on room held for pods not created yet; over one,
     * no fit and why says why. */
    fair = adm_fair_check(&ctx->fair, ctx->cache, now, ns, ps->requests, ps->nrequests, id->size, 1,
                          pool, &res->why, &res->err);
    if (fair < 0) {
        res->outcome = failed(res->err.code);
        return;
    }
    rc = fair == 0 ? compute(ctx, &ctx->topos[t], ps, &as, &res->why, pool, ctx->engine_pool,
                             &res->err)
                   : 0;
    if (rc < 0) {
        res->outcome =
            rc == TOPO_ENOMEM || res->err.code == TOPO_ENOMEM ? PLACE_NOMEM : PLACE_INVALID;
        return;
    }
    if (as == NULL) {
        res->outcome = PLACE_NO_FIT;
        return;
    }
    if (adm_past_deadline(a)) {
        res->outcome = PLACE_TIMED_OUT;
        return;
    }
    got = adm_reserve_and_claim(ctx, (size_t)t, id, terms, ps, &as, 1, 0, now, &res->r, &res->p,
                                pool, &res->err);
    res->outcome = got < 0 ? failed(got) : PLACE_PATCHED;
    res->topology = t;
    if (got >= 0) /* the PodSet's other pods claim it from the memo */
        adm_memo_put(ctx, &res->r);
}

static int answer_placement(topo_admission_ctx *ctx, answer *a, mode m,
                            topo_admission_policy policy, const topo_admission_request *req,
                            const topo_podset_id *id, const topo_podset_spec *ps,
                            const place_result *res, topo_pool *pool)
{
    switch (res->outcome) {
    case PLACE_PATCHED:
        return adm_patch_placed(ctx, a, m, req, res->topology, &res->p, pool);
    case PLACE_UNPLACED:
        return adm_unplaced(ctx, a, m, res->why, pool);
    case PLACE_CONTRADICTS:
        return adm_refuse_podset(ctx, a, id, res->why, pool);
    case PLACE_NO_FIT:
        return adm_no_fit(ctx, a, m, policy, req, id, describe_need(pool, ps), res->why, pool);
    case PLACE_INVALID:
        atomic_fetch_add(&ctx->denied, 1);
        adm_refuse(a, 400, topo_pool_printf(pool, "topo-webhook: %s", res->err.text));
        return 0;
    case PLACE_FAILED:
        return adm_internal_error(ctx, a, m, "PodSet", id->key, &res->err, pool);
    case PLACE_TIMED_OUT:
        return 0;
    case PLACE_REFUSED:
        return refuse_unrepairable(ctx, a, m, id, res->why, pool);
    case PLACE_NEW: /* placed anew before answering */
    case PLACE_NOMEM:
        break;
    }
    return TOPO_ENOMEM;
}

/* The slot our sealed output gave the pod, when it is a slot of r: what a
 * reinvocation claims again. Its claimant may be another (a pod named by
 * generateName is claimed by its request's uid, and each call of the webhook
 * has a new one): the slot held under that claim is then its own, answered
 * with the same domain and no second claim (adm_claim). Else rank. */
static int64_t sealed_slot(const topo_admission_pod *pod, const topo_cache_reservation *r,
                           int64_t rank)
{
    const char *id =
        topo_admission_kv_get(pod->annotations, pod->nannotations,
                              TOPO_ADMISSION_RESERVATION_ANNOTATION);
    int64_t slot = 0;
    if (id == NULL || strcmp(id, r->id) != 0 || r->nslots == 0 ||
        topo_parse_count(&slot, topo_admission_kv_get(pod->annotations, pod->nannotations,
                                                      TOPO_ADMISSION_SLOT_ANNOTATION),
                         "slot", 0, (int64_t)r->nslots - 1, NULL) < 0)
        return rank;
    return slot;
}

/* A topology pod: place, reserve, claim, patch. pod_uid: ungating only. */
int adm_place(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
              const char *pod_uid, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_podset_id id;
    topo_podset_spec ps;
    place_result res;
    const char *missing = NULL;
    int64_t now = adm_now_s(ctx);
    int rc;

    memset(&res, 0, sizeof res);
    /* Who it is (under mu: the cache connection is the ctx's). */
    pthread_mutex_lock(&ctx->mu);
    rc = adm_podset_identify(&id, &req->pod, req->namespace_, req->uid, pod_uid, ctx->cache, pool,
                             &err);
    pthread_mutex_unlock(&ctx->mu);
    if (rc == TOPO_ENOMEM)
        return TOPO_ENOMEM;
    if (rc < 0) {
        atomic_fetch_add(&ctx->denied, 1);
        adm_refuse(a, 400, topo_pool_printf(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    /* What topo wrote on it before, if anything: trusted under our seal
     * only; otherwise removed, and from here on the pod is read without
     * them (handler_seal.c). */
    topo_admission_request view;
    if ((rc = adm_check_seal(ctx, a, m, req, &id, &view, pool)) < 0)
        return rc;
    req = &view;
    a->podset_key = id.key;
    /* What it asks for, as Kueue validates it: a request Kueue refuses can
     * never become valid, so it is refused here, word for word, not gated
     * (whichever pod of its PodSet it is). */
    if ((rc = adm_podset_spec(&ps, &req->pod, id.size, pool, &err)) < 0) {
        if (rc == TOPO_ENOMEM)
            return TOPO_ENOMEM;
        atomic_fetch_add(&ctx->denied, 1);
        atomic_fetch_add(&ctx->invalid, 1);
        adm_refuse(a, 400, topo_pool_strdup(pool, err.text));
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

    /* Another replica places (or none can now): this one stores nothing
     * and answers as when the PodSet does not fit. */
    if (a->unplaced != NULL) {
        const char *need = describe_need(pool, &ps);
        return adm_no_fit(ctx, a, m, policy, req, &id, need ? need : "?", a->unplaced, pool);
    }
    if (id.group)
        return place_group(ctx, a, m, req, &id, &ps, t, missing, policy, now, pool);
    const char *request = topo_kueue_request_text(&ps, pool);
    if (request == NULL)
        return TOPO_ENOMEM;
    /* The pod as its PodSet's reservation must remember it; its shape is
     * checked only when it first arrives: by the ungater's time later
     * webhooks may have added to the pod, and our own output coming back
     * (reinvocation) carries the nodeSelector we gave it. Ours only under
     * our seal: a reservation annotation alone is anyone's to copy. */
    int ours = a->sealed && topo_admission_kv_get(req->pod.annotations, req->pod.nannotations,
                                                  TOPO_ADMISSION_RESERVATION_ANNOTATION) != NULL;
    podset_terms terms = {id.key, m == MODE_ADMIT && !ours ? req->pod.shape : NULL, request};

    /* Whether its PodSet holds a reservation already; when not, and it is
     * to be placed now, placed in the same hold of the lock (one lookup,
     * and no other pod of the PodSet can place it in between). */
    pthread_mutex_lock(&ctx->mu);
    int found = adm_lookup(ctx, id.key, now, !req->dry_run, &res.r, pool, &res.err);
    topo_podset_id claim_id = id;
    if (found == 1 && ours)
        claim_id.rank = sealed_slot(&req->pod, &res.r, id.rank);
    if (found == 1) {
        claim_reserved(ctx, &res, &claim_id, &terms, req->dry_run, now, pool);
        if (res.outcome == PLACE_FAILED && res.err.code == TOPO_ENOTFOUND) {
            /* The memo's reservation is gone from the cache (replaced by
             * one adopted from another replica): the cache's truth. */
            adm_memo_clear(ctx);
            memset(&res, 0, sizeof res);
            found = adm_lookup(ctx, id.key, now, 0, &res.r, pool, &res.err);
            if (found == 1)
                claim_reserved(ctx, &res, &claim_id, &terms, req->dry_run, now, pool);
        }
        /* Our own output coming back keeps its slot; dryRun stores nothing. */
        if (found == 1 && !ours && !req->dry_run)
            repair_slot(ctx, &res, m, req, &ps, id.key, now, pool);
        if (found == 1 && res.outcome == PLACE_NEW) {
            memset(&res, 0, sizeof res);
            found = 0;
        }
    }
    int placed_now = found == 0 && t >= 0 && !req->dry_run;
    if (found < 0)
        res.outcome = failed(found);
    else if (placed_now)
        place_podset_locked(ctx, &res, a, t, &id, &terms, &ps, ns, now, pool);
    pthread_mutex_unlock(&ctx->mu);
    if (found != 0 && res.outcome != PLACE_PATCHED && res.outcome != PLACE_UNPLACED)
        return answer_placement(ctx, a, m, policy, req, &id, &ps, &res, pool);
    if (placed_now && res.outcome == PLACE_TIMED_OUT)
        return 0;
    adm_warn(a, id.warning ? topo_pool_printf(pool, "topo-webhook: %s", id.warning) : NULL);
    if (found == 1 || placed_now)
        return answer_placement(ctx, a, m, policy, req, &id, &ps, &res, pool);

    /* The first pod of its PodSet, not placed now. */
    if (t < 0) {
        const char *need = topo_pool_printf(pool, "%d pod(s)", id.size);
        const char *failure = adm_no_topology(ctx, missing, pool);
        return adm_no_fit(ctx, a, m, policy, req, &id, need ? need : "?", failure, pool);
    }
    return place_dry_run(ctx, a, m, req, &id, &ps, t, policy, ns, now, pool);
}
