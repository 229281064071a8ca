/* Packing pods without topology requests (issue 32; docs/webhook.md
 * "Packing pods without topology requests"): a pod CREATE that asks for no
 * topology but requests one of the packed resources is steered toward the
 * domains of the packing level already in use that still fit it, tightest
 * first (topo_packing_find over each taking-part topology's live snapshot,
 * merged by topo_packing_rank: one rule). The answer is a preference (or,
 * mode required, a nodeSelector), never a reservation: nothing is stored,
 * no lock is taken, and any replica answers alike from its own cache. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "handler_internal.h"
#include "review_internal.h"
#include "topo/admission_patch.h"
#include "topo/limits.h"
#include "topo/live.h"
#include "topo/log.h"
#include "topo/packing.h"

const char *const topo_admission_pack_reason_names[TOPO_ADMISSION_PACK_REASONS] = {
    [TOPO_ADMISSION_PACK_PINNED] = "pinned",
    [TOPO_ADMISSION_PACK_DAEMONSET] = "daemonset",
    [TOPO_ADMISSION_PACK_NAMESPACE] = "namespace",
    [TOPO_ADMISSION_PACK_UNSUPPORTED] = "unsupported",
    [TOPO_ADMISSION_PACK_NO_ROOM] = "no-room",
    [TOPO_ADMISSION_PACK_NOT_READY] = "not-ready",
};

/* Weights of the preferred terms, best pick first: each halves the one
 * before, so that kube-scheduler's NodeAffinity score (normalised to the
 * best feasible node) keeps the better domain ahead whenever it is
 * feasible, and LeastAllocated cannot overturn the best one. */
static const int32_t pick_weights[TOPO_ADMISSION_PACKING_PICKS] = {100, 50, 25, 12};

#define HOSTNAME_LABEL "kubernetes.io/hostname"

static int has_key(const char *const *keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0)
            return 1;
    return 0;
}

int adm_pack_init(topo_admission_ctx *ctx, const topo_admission_opts *o, topo_err *err)
{
    const topo_admission_packing *in = o->packing;
    topo_admission_packing *pk;
    const char **keys;
    size_t nkeys = 0, cap = 1, taking = 0;

    if (in == NULL)
        return 0;
    if (in->nresources == 0 || in->resources == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission: packing.resources: at least one");
    for (size_t i = 0; i < in->nresources; i++)
        if (in->resources[i] == NULL || in->resources[i][0] == '\0')
            return topo_err_set(err, TOPO_EINVALID,
                                "admission: packing.resources[%zu]: must not be empty", i);
    for (size_t t = 0; t < ctx->ntopos; t++) {
        taking += ctx->topos[t].t.npacking_levels > 0;
        cap += ctx->topos[t].t.nlevels;
    }
    if (taking == 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "admission: packing: no topology takes part (npacking_levels)");
    pk = topo_pool_calloc(ctx->pool, 1, sizeof(*pk));
    keys = topo_pool_calloc(ctx->pool, cap, sizeof(*keys));
    if (pk == NULL || keys == NULL ||
        (pk->resources = adm_dup_strings(ctx->pool, in->resources, in->nresources)) == NULL)
        return topo_err_nomem(err, NULL);
    pk->nresources = in->nresources;
    pk->mode = in->mode;
    /* A pod that names a node, or a domain at or below the packing level,
     * has chosen already. */
    keys[nkeys++] = HOSTNAME_LABEL;
    for (size_t t = 0; t < ctx->ntopos; t++) {
        const topo_admission_topology *tp = &ctx->topos[t].t;
        for (size_t l = tp->npacking_levels ? tp->npacking_levels - 1 : tp->nlevels;
             l < tp->nlevels; l++)
            if (!has_key(keys, nkeys, tp->levels[l]))
                keys[nkeys++] = tp->levels[l];
    }
    ctx->packing = pk;
    ctx->pin_keys = keys;
    ctx->npin_keys = nkeys;
    ctx->ns_packing_off = o->ns_packing_off;
    ctx->ns_packing_payload = o->ns_packing_payload;
    ctx->packing_ready = o->packing_ready;
    ctx->packing_ready_payload = o->packing_ready_payload;
    return 0;
}

/* One domain proposed, and the topology it is of. */
typedef struct pack_pick {
    topo_packing_pick p;
    size_t topo;
} pack_pick;

static int64_t requested(const topo_admission_pod *pod, const char *resource)
{
    for (size_t i = 0; i < pod->nrequests; i++)
        if (strcmp(pod->requests[i].name, resource) == 0)
            return pod->requests[i].amount;
    return 0;
}

/* Whether term a requires label key = value (one of its In [value]). */
static int term_has(const topo_admission_ctx *ctx, const pack_pick *a, const char *key,
                    const char *value)
{
    const topo_admission_topology *t = &ctx->topos[a->topo].t;
    for (size_t l = 0; l < a->p.nvalues; l++)
        if (strcmp(t->levels[l], key) == 0 && strcmp(a->p.values[l], value) == 0)
            return 1;
    return 0;
}

/* Whether every requirement of b's term is one of a's: b selects at least
 * a's nodes. */
static int covers(const topo_admission_ctx *ctx, const pack_pick *a, const pack_pick *b)
{
    const topo_admission_topology *tb = &ctx->topos[b->topo].t;
    for (size_t l = 0; l < b->p.nvalues; l++)
        if (!term_has(ctx, a, tb->levels[l], b->p.values[l]))
            return 0;
    return 1;
}

/* Whether a and b, of two topologies, would be the same term: the same
 * requirements (topologies over the same levels and nodes). A term within
 * another is not the same: it may select other nodes (r1 of every block,
 * or of another pool), and which one survived would depend on the order;
 * both are kept, the tighter ranked first. */
static int same_domain(const topo_admission_ctx *ctx, const pack_pick *a, const pack_pick *b)
{
    return a->topo != b->topo && a->p.nvalues == b->p.nvalues && covers(ctx, a, b) &&
           covers(ctx, b, a);
}

/* Picks of several topologies in one order, by the same rule: their
 * domains ranked again together (each fits: node_free_max is the request),
 * a domain two topologies both propose kept once (its first: same_domain). */
static int merge(pack_pick *picks, size_t *n, const topo_admission_ctx *ctx, int64_t request,
                 topo_pool *pool, topo_err *err)
{
    topo_packing_domain *d = topo_pool_calloc(pool, *n, sizeof(*d));
    size_t *order = topo_pool_calloc(pool, *n, sizeof(*order));
    pack_pick *copy = topo_pool_calloc(pool, *n, sizeof(*copy));
    size_t m = 0;
    int rc;
    if (d == NULL || order == NULL || copy == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < *n; i++) {
        /* ties by name: the topology's, then the values (coarsest first) */
        const char *name = ctx->topos[picks[i].topo].t.name;
        for (size_t v = 0; name != NULL && v < picks[i].p.nvalues; v++)
            name = topo_pool_printf(pool, "%s/%s", name, picks[i].p.values[v]);
        if (name == NULL)
            return topo_err_nomem(err, NULL);
        d[i] = (topo_packing_domain){name, picks[i].p.used, picks[i].p.free, request};
        copy[i] = picks[i];
    }
    if ((rc = topo_packing_rank(order, &m, *n, d, *n, request, err)) < 0)
        return rc;
    size_t kept = 0;
    for (size_t i = 0; i < m && kept < TOPO_ADMISSION_PACKING_PICKS; i++) {
        size_t j = 0;
        while (j < kept && !same_domain(ctx, &picks[j], &copy[order[i]]))
            j++;
        if (j == kept)
            picks[kept++] = copy[order[i]];
    }
    *n = kept;
    return 0;
}

/* The domains every taking-part topology proposes for ps, best first, at
 * most TOPO_ADMISSION_PACKING_PICKS in picks[]. Readers of the live
 * snapshots, as the engine's are: no lock. */
static int find_picks(topo_admission_ctx *ctx, const topo_podset_spec *ps, const char *resource,
                      int64_t request, pack_pick *picks, size_t *n, topo_pool *pool,
                      topo_err *err)
{
    topo_packing_pick found[TOPO_ADMISSION_PACKING_PICKS];
    size_t taking = 0;
    int rc = 0;
    *n = 0;
    for (size_t t = 0; rc == 0 && t < ctx->ntopos; t++) {
        const topology *tp = &ctx->topos[t];
        size_t k = 0;
        if (tp->t.npacking_levels == 0)
            continue;
        const topo_snapshot *snap = topo_live_acquire(tp->t.live);
        rc = topo_packing_find(found, &k, TOPO_ADMISSION_PACKING_PICKS, snap, ps,
                               tp->t.levels[tp->t.npacking_levels - 1], resource, pool, err);
        topo_live_release(tp->t.live, snap);
        taking += k > 0;
        for (size_t i = 0; rc == 0 && i < k; i++)
            picks[(*n)++] = (pack_pick){found[i], t};
    }
    if (rc < 0 || taking < 2)
        return rc;
    return merge(picks, n, ctx, request, pool, err);
}

/* The patch: preferred terms (weights halving), or the best pick as
 * nodeSelector entries; each down to the packing level from the coarsest
 * (a value alone is not unique: the same rack name under two blocks). 1
 * when the pod's own nodeSelector contradicts the pick (not patched). */
static int pack_patch(topo_admission_ctx *ctx, answer *a, const topo_admission_request *req,
                      const pack_pick *picks, size_t n, topo_pool *pool, topo_err *err)
{
    int required = ctx->packing->mode == TOPO_ADMISSION_PACKING_REQUIRED;
    size_t nterms = required ? 1 : n;
    topo_preferred_term *terms = topo_pool_calloc(pool, nterms, sizeof(*terms));
    int rc;
    if (terms == NULL)
        return topo_err_nomem(err, NULL);
    for (size_t i = 0; i < nterms; i++) {
        const topology *tp = &ctx->topos[picks[i].topo];
        topo_match_expr *ex = topo_pool_calloc(pool, picks[i].p.nvalues, sizeof(*ex));
        if (ex == NULL)
            return topo_err_nomem(err, NULL);
        for (size_t l = 0; l < picks[i].p.nvalues; l++)
            ex[l] = (topo_match_expr){tp->t.levels[l], "In", &picks[i].p.values[l], 1};
        terms[i] = (topo_preferred_term){pick_weights[i], {ex, picks[i].p.nvalues}};
    }
    if ((rc = adm_patch_start(a)) < 0)
        return topo_err_nomem(err, NULL);
    if (!required) {
        rc = topo_admission_patch_preferred(a->patch, &req->pod, terms, nterms, err);
    } else {
        topo_kv *sel = topo_pool_calloc(pool, terms[0].term.nexprs, sizeof(*sel));
        if (sel == NULL)
            return topo_err_nomem(err, NULL);
        for (size_t l = 0; l < terms[0].term.nexprs; l++)
            sel[l] = (topo_kv){terms[0].term.exprs[l].key, terms[0].term.exprs[l].values[0]};
        rc = topo_admission_patch_pod(a->patch, &req->pod, sel, terms[0].term.nexprs, NULL, 0,
                                      err);
    }
    if (rc == TOPO_ECONFLICT)
        return 1;
    if (rc < 0)
        return rc;
    a->resp.patch = a->patch;
    return 0;
}

/* One line at debug level: which pod, by which resource, where. */
static void log_packed(const topo_admission_ctx *ctx, const topo_admission_request *req,
                       const char *resource, const pack_pick *picks, size_t n, topo_pool *pool)
{
    if (!topo_log_enabled(TOPO_LOG_DEBUG))
        return;
    const char *where = "";
    for (size_t i = 0; where != NULL && i < n; i++) {
        where = topo_pool_printf(pool, "%s%s%s:", where, i ? "," : "",
                                 ctx->topos[picks[i].topo].t.name);
        for (size_t v = 0; where != NULL && v < picks[i].p.nvalues; v++)
            where = topo_pool_printf(pool, "%s%s%s", where, v ? "/" : "", picks[i].p.values[v]);
    }
    const char *name = req->pod.name != NULL && req->pod.name[0] != '\0' ? req->pod.name
                       : req->pod.generate_name != NULL                  ? req->pod.generate_name
                                                                         : "";
    const char *pod = topo_pool_printf(pool, "%s/%s", adm_pod_namespace(req), name);
    topo_log_field f[] = {{"pod", pod}, {"uid", req->uid}, {"resource", resource},
                          {"mode", ctx->packing->mode == TOPO_ADMISSION_PACKING_REQUIRED
                                       ? "required"
                                       : "preferred"},
                          {"picks", where}};
    topo_log_kv(TOPO_LOG_DEBUG, f, sizeof f / sizeof f[0], "packing: pod steered");
}

int adm_pack(topo_admission_ctx *ctx, answer *a, topo_admission_request *req, const json_t *obj,
             topo_pool *pool)
{
    const topo_admission_packing *pk = ctx->packing;
    const json_t *spec = json_object_get(obj, "spec");
    pack_pick picks[TOPO_MAX_TOPOLOGIES * TOPO_ADMISSION_PACKING_PICKS];
    topo_podset_spec ps;
    topo_err err = TOPO_ERR_INIT;
    size_t n = 0;
    int rc;

    /* Requests that cannot be read (a quantity out of range, negative):
     * not the webhook's to judge (the API server refuses what is invalid);
     * the pod passes, counted as unsupported when it names a packed
     * resource, as the matchConditions that sent it read it. */
    if ((rc = adm_decode_requests(&req->pod, spec, pool, &err)) < 0) {
        if (rc == TOPO_ENOMEM)
            return rc;
        if (adm_pack_spec_names(spec, pk->resources, pk->nresources))
            atomic_fetch_add(&ctx->pack_passed[TOPO_ADMISSION_PACK_UNSUPPORTED], 1);
        return 0;
    }
    int r = topo_admission_packing_resource(&req->pod, pk->resources, pk->nresources);
    if (r < 0)
        return 0;
    const char *resource = pk->resources[r];
    const char *ns = adm_pod_namespace(req);
    int ready = ctx->packing_ready == NULL || ctx->packing_ready(ctx->packing_ready_payload);
    int opted_out = ready && ctx->ns_packing_off != NULL &&
                    ctx->ns_packing_off(ctx->ns_packing_payload, ns);
    int reason = adm_pack_classify(&req->pod, spec, ctx->pin_keys, ctx->npin_keys, ready,
                                   opted_out, pool);
    if (reason < 0)
        return reason;
    /* Past the deadline nobody reads the answer: no work, nothing counted. */
    if (reason == TOPO_ADMISSION_PACK_REASONS && adm_past_deadline(a)) {
        a->timed_out = 0;
        return 0;
    }
    if (reason == TOPO_ADMISSION_PACK_REASONS) {
        adm_pod_spec(&ps, &req->pod, 1);
        rc = find_picks(ctx, &ps, resource, requested(&req->pod, resource), picks, &n, pool,
                        &err);
        if (rc == TOPO_ENOMEM)
            return rc;
        if (rc < 0) /* the rule refused its input: logged, the pod passes */
            topo_log(TOPO_LOG_WARN, "packing: pod %s/%s: %s", ns,
                     req->pod.name ? req->pod.name : "", err.text);
        if (rc < 0 || n == 0)
            reason = TOPO_ADMISSION_PACK_NO_ROOM;
    }
    if (reason == TOPO_ADMISSION_PACK_REASONS) {
        if ((rc = pack_patch(ctx, a, req, picks, n, pool, &err)) < 0)
            return rc == TOPO_ENOMEM ? rc : 0;
        if (rc == 1)
            reason = TOPO_ADMISSION_PACK_NO_ROOM;
    }
    if (reason != TOPO_ADMISSION_PACK_REASONS) {
        atomic_fetch_add(&ctx->pack_passed[reason], 1);
        return 0;
    }
    atomic_fetch_add(&ctx->packed, 1);
    log_packed(ctx, req, resource, picks,
               pk->mode == TOPO_ADMISSION_PACKING_REQUIRED ? 1 : n, pool);
    return 0;
}
