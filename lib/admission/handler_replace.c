/* Failed-node replacement (docs/webhook.md "When nodes fail"): a pod whose
 * slot is on a node that failed gets the slots of every failed node of its
 * PodSet moved to healthy nodes inside the PodSet's domain, with Kueue's
 * rules for what counts as failed (pkg/controller/tas/node_controller.go)
 * and Kueue's replacement search (topo_engine_find with a workload).
 *
 * Checked lazily, when a pod claims a slot (admission, or the ungater's
 * retry), under mu: only the placer places, the pod claiming the slot is
 * the first that needs the node, and a PodSet nobody is creating pods for
 * costs nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "topo/admission.h"

#include "handler_internal.h"
#include "topo/engine.h"
#include "topo/kueue_names.h"
#include "topo/live.h"
#include "topo/log.h"
#include "topo/podreq.h"
#include "topo/podset_key.h"
#include "topo/strmap.h"

/* Moving slots can race an adoption through another connection (a record
 * of a higher generation): the cache refuses ours, and we read again. */
#define REPAIR_ATTEMPTS 3

/* --- is the node there for the pod? --------------------------------------------------- */

/* The first NoExecute (then NoSchedule) taint of n the pod does not
 * tolerate, as "key=value:Effect"; NULL when none. */
static const char *untolerated_taint(const topo_node_spec *n, const topo_podset_spec *ps,
                                     topo_pool *pool)
{
    static const char *const effects[] = {"NoExecute", "NoSchedule"};
    for (size_t e = 0; e < 2; e++)
        for (size_t i = 0; i < n->ntaints; i++) {
            const topo_taint *t = &n->taints[i];
            if (t->effect == NULL || strcmp(t->effect, effects[e]) != 0 ||
                topo_taint_tolerated(ps->tolerations, ps->ntolerations, t))
                continue;
            const char *v = t->value != NULL ? t->value : "";
            return topo_pool_printf(pool, "%s%s%s:%s", t->key, v[0] ? "=" : "", v, t->effect);
        }
    return NULL;
}

/* spec.unschedulable, unless the pod tolerates the taint the node
 * lifecycle controller gives such a node (Kueue reads only the taint). */
static int cordoned(const topo_node_spec *n, const topo_podset_spec *ps)
{
    static const topo_taint unschedulable = {"node.kubernetes.io/unschedulable", "",
                                             "NoSchedule"};
    return n->unschedulable &&
           (ps == NULL ||
            !topo_taint_tolerated(ps->tolerations, ps->ntolerations, &unschedulable));
}

int adm_host_labels(const topology *tp, const char *host, size_t n, const char **out,
                    topo_pool *pool)
{
    const topo_snapshot *snap = topo_live_acquire(tp->t.live);
    topo_node_spec node;
    int found = topo_snapshot_node_by_hostname(snap, host, &node), rc = found;
    for (size_t i = 0; i < n; i++) {
        const char *v = found ? topo_admission_kv_get(node.labels, node.nlabels, tp->t.levels[i])
                              : NULL;
        if ((out[i] = v != NULL ? topo_pool_strdup(pool, v) : NULL) == NULL && v != NULL)
            rc = TOPO_ENOMEM;
    }
    topo_live_release(tp->t.live, snap);
    return rc;
}

/* The first level of domain the node is not in, as "is no longer in
 * topology.topo.io/rack r1 (it is in r2)"; NULL when it is in all. */
static const char *left_domain(const topo_node_spec *n, const adm_domain *d, topo_pool *pool)
{
    for (size_t i = 0; d != NULL && i < d->n; i++) {
        const char *v = topo_admission_kv_get(n->labels, n->nlabels, d->levels[i]);
        if (v == NULL || strcmp(v, d->values[i]) != 0)
            return topo_pool_printf(pool, "is no longer in %s %s (%s%s)", d->levels[i],
                                    d->values[i], v ? "it is in " : "it has no such label",
                                    v ? v : "");
    }
    return NULL;
}

int adm_check_host(topo_admission_ctx *ctx, long t, const char *host, const topo_podset_spec *ps,
                   const adm_domain *domain, host_check *out, topo_pool *pool, topo_err *err)
{
    topo_node_spec n;
    const char *taint, *left;
    memset(out, 0, sizeof(*out));
    const topo_snapshot *snap = topo_live_acquire(ctx->topos[t].t.live);
    if (!topo_snapshot_node_by_hostname(snap, host, &n)) {
        out->state = HOST_GONE;
        out->what = "was deleted";
    } else if (n.ready_missing) {
        out->state = HOST_GONE;
        out->what = "has no Ready condition";
    } else if (!n.ready) {
        out->state = HOST_UNUSABLE;
        out->what = "is NotReady";
    } else if ((left = left_domain(&n, domain, pool)) != NULL) {
        out->state = HOST_UNUSABLE;
        out->what = left;
    } else if (ps != NULL && (taint = untolerated_taint(&n, ps, pool)) != NULL) {
        out->state = HOST_UNUSABLE;
        out->what = topo_pool_printf(pool, "has taint %s, which the pod does not tolerate", taint);
    } else if (cordoned(&n, ps)) {
        out->state = HOST_UNUSABLE;
        out->what = "is cordoned";
    }
    /* the pods' nodeName: copied before the snapshot goes */
    const char *name = out->state == HOST_UNUSABLE ? n.name : NULL;
    out->node_name = name != NULL ? topo_pool_strdup(pool, name) : NULL;
    topo_live_release(ctx->topos[t].t.live, snap);
    if ((out->state != HOST_OK && out->what == NULL) || (name != NULL && out->node_name == NULL))
        return topo_err_nomem(err, NULL);
    return 0;
}

/* --- has it failed for the PodSet? ------------------------------------------------------ */

adm_domain adm_domain_of(const char *const *levels, size_t nlevels, const char *const *values,
                         size_t nvalues)
{
    adm_domain d = {levels, values, nvalues <= nlevels ? nvalues : 0};
    return d;
}

/* The PodSet's domain a reservation keeps (none for one made before). */
static adm_domain domain_of(const topo_cache_reservation *r)
{
    return adm_domain_of(r->levels, r->nlevels, r->domain, r->ndomain);
}

static const char *host_of(const topo_cache_slot *s)
{
    return s->nvalues > 0 ? s->values[s->nvalues - 1] : NULL;
}

/* A pod holding a slot of r on host, bound to its node and still running
 * there (not being deleted, not finished: Kueue's "progressing"): 1 with
 * its name in *out, else 0. */
static int progressing_pod(topo_admission_ctx *ctx, const topo_cache_reservation *r,
                           const char *host, const char *node, const char **out,
                           topo_pool *pool, topo_err *err)
{
    static const char provisional[] = TOPO_CACHE_CLAIMANT_PREFIX;
    *out = NULL;
    for (size_t i = 0; node != NULL && i < r->nslots; i++) {
        const topo_cache_slot *s = &r->slots[i];
        const char *h = host_of(s);
        if (s->pod_uid == NULL || h == NULL || strcmp(h, host) != 0 ||
            strncmp(s->pod_uid, provisional, sizeof provisional - 1) == 0)
            continue;
        topo_cache_pod pod;
        int rc = topo_cache_get_pod(&pod, ctx->cache, s->pod_uid, pool, err);
        if (rc == TOPO_ENOTFOUND) {
            topo_err_clear(err);
            continue;
        }
        if (rc < 0)
            return rc;
        if (strcmp(pod.node_name, node) == 0 && !pod.terminating &&
            !topo_pod_phase_finished(pod.phase)) {
            *out = pod.name;
            return 1;
        }
    }
    return 0;
}

/* Whether host failed for reservation r (Kueue's rules): 1 failed, with
 * *cause; 2 it cannot take the pod but a pod of the PodSet still runs
 * there (*cause says which: the pod waits); 0 it takes the pod. */
static int host_failed(topo_admission_ctx *ctx, long t, const topo_cache_reservation *r,
                       const char *host, const topo_podset_spec *ps, const char **cause,
                       topo_pool *pool, topo_err *err)
{
    host_check hc;
    const char *running = NULL;
    adm_domain d = domain_of(r);
    int rc = adm_check_host(ctx, t, host, ps, &d, &hc, pool, err);
    if (rc < 0 || hc.state == HOST_OK)
        return rc;
    if (hc.state == HOST_UNUSABLE &&
        (rc = progressing_pod(ctx, r, host, hc.node_name, &running, pool, err)) < 0)
        return rc;
    if (running != NULL)
        *cause = topo_pool_printf(pool, "node %s %s, and pod %s of the PodSet still runs there",
                                  host, hc.what, running);
    else if (hc.state == HOST_GONE)
        *cause = topo_pool_printf(pool, "node %s %s", host, hc.what);
    else
        *cause = topo_pool_printf(pool, "node %s %s, and no pod of the PodSet runs there", host,
                                  hc.what);
    if (*cause == NULL)
        return topo_err_nomem(err, NULL);
    return running != NULL ? 2 : 1;
}

/* Every failed host of r but `known` (already found failed), each host
 * looked at once (a node holds up to a pod per GPU, or more). */
static int other_failed_hosts(topo_admission_ctx *ctx, long t, const topo_cache_reservation *r,
                              const char *known, const topo_podset_spec *ps, const char ***out,
                              size_t *n, topo_pool *pool, topo_err *err)
{
    const char **hosts = topo_pool_calloc(pool, r->nslots + 1, sizeof(*hosts));
    topo_strmap *seen = topo_strmap_create(r->nslots + 1);
    int rc = 0;
    if (hosts == NULL || seen == NULL || topo_strmap_put(seen, known, 1) < 0) {
        topo_strmap_free(seen);
        return topo_err_nomem(err, NULL);
    }
    hosts[0] = known;
    *n = 1;
    for (size_t i = 0; rc >= 0 && i < r->nslots; i++) {
        const char *h = host_of(&r->slots[i]), *cause = NULL;
        if (h == NULL || topo_strmap_get(seen, h) >= 0)
            continue;
        if (topo_strmap_put(seen, h, 1) < 0)
            rc = topo_err_nomem(err, NULL);
        else if ((rc = host_failed(ctx, t, r, h, ps, &cause, pool, err)) == 1)
            hosts[(*n)++] = h;
    }
    topo_strmap_free(seen);
    *out = hosts;
    return rc < 0 ? rc : 0;
}

/* --- moving the slots ------------------------------------------------------------------- */

/* The assignment slots describe, in slot order: runs of one domain become
 * one entry, so slot i stays the i-th pod (a moved slot may repeat a
 * domain further down: the cache expands it as it is). */
static topo_assignment *slots_assignment(const topo_cache_slot *slots, size_t n,
                                         const char *const *levels, size_t nlevels,
                                         topo_pool *pool)
{
    topo_assignment *a = topo_pool_calloc(pool, 1, sizeof(*a));
    topo_assign_domain *d = topo_pool_calloc(pool, n + 1, sizeof(*d));
    if (a == NULL || d == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int same = k > 0;
        for (size_t l = 0; same && l < nlevels; l++)
            same = strcmp(d[k - 1].values[l], slots[i].values[l]) == 0;
        if (same) {
            d[k - 1].count++;
            continue;
        }
        d[k].values = slots[i].values;
        d[k].count = 1;
        k++;
    }
    a->levels = levels;
    a->nlevels = nlevels;
    a->domains = d;
    a->ndomains = k;
    return a;
}

static int is_failed(const char *host, const char *const *failed, size_t nfailed)
{
    for (size_t i = 0; host != NULL && i < nfailed; i++)
        if (strcmp(host, failed[i]) == 0)
            return 1;
    return 0;
}

/* r's slots with those on the failed hosts moved, in slot order, to the
 * pods of the engine's replacement in its domain order (into pool). */
static topo_cache_slot *moved_slots(const topo_cache_reservation *r, const char *const *failed,
                                    size_t nfailed, const topo_assignment *repl, topo_pool *pool)
{
    topo_cache_slot *s = topo_pool_calloc(pool, r->nslots + 1, sizeof(*s));
    if (s == NULL)
        return NULL;
    size_t d = 0;
    int32_t used = 0;
    for (size_t i = 0; i < r->nslots; i++) {
        s[i] = r->slots[i];
        if (!is_failed(host_of(&r->slots[i]), failed, nfailed))
            continue;
        while (d < repl->ndomains && used >= repl->domains[d].count) {
            d++;
            used = 0;
        }
        if (d >= repl->ndomains)
            return NULL; /* fewer pods than slots: the caller's check */
        s[i].values = adm_dup_strings(pool, repl->domains[d].values, repl->nlevels);
        if (s[i].values == NULL)
            return NULL;
        used++;
    }
    return s;
}

static int32_t pods_of(const topo_assignment *a)
{
    int64_t n = 0;
    for (size_t i = 0; i < a->ndomains; i++)
        n += a->domains[i].count;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

static int32_t slots_on(const topo_cache_reservation *r, const char *const *failed, size_t nfailed)
{
    int32_t n = 0;
    for (size_t i = 0; i < r->nslots; i++)
        n += is_failed(host_of(&r->slots[i]), failed, nfailed);
    return n;
}

/* r's slots as the engine is to see them: those of nodes still in the
 * PodSet's domain first. Kueue's rule takes the domain a replacement must
 * stay in from the first remaining node, which a node relabelled out of it
 * (its pod still running there) must not be. */
static const topo_cache_slot *domain_first(topo_admission_ctx *ctx, long t,
                                           const topo_cache_reservation *r, topo_pool *pool)
{
    adm_domain d = domain_of(r);
    if (d.n == 0)
        return r->slots;
    topo_cache_slot *out = topo_pool_calloc(pool, r->nslots + 1, sizeof(*out));
    if (out == NULL)
        return NULL;
    const topo_snapshot *snap = topo_live_acquire(ctx->topos[t].t.live);
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->nslots; i++) {
            topo_node_spec n;
            int in = topo_snapshot_node_by_hostname(snap, host_of(&r->slots[i]), &n) &&
                     left_domain(&n, &d, pool) == NULL;
            if (in == (pass == 0))
                out[k++] = r->slots[i];
        }
    topo_live_release(ctx->topos[t].t.live, snap);
    return out;
}

/* The engine's replacement for the failed hosts of r inside its PodSet's
 * domain (Kueue's findReplacementAssignment, all failed nodes at once, a
 * preferred level's domain first): *out the slots moved, or NULL with
 * *failure (Kueue's message). mu held. */
static int find_replacement(topo_admission_ctx *ctx, long t, const topo_cache_reservation *r,
                            const topo_podset_spec *pod_ps, const char *const *failed,
                            size_t nfailed, topo_cache_slot **out, const char **failure,
                            topo_pool *pool, topo_err *err)
{
    *out = NULL;
    *failure = NULL;
    const topo_cache_slot *order = domain_first(ctx, t, r, pool);
    topo_assignment *existing =
        order != NULL
            ? slots_assignment(order, r->nslots, r->assignment_levels, r->nassignment_levels, pool)
            : NULL;
    if (existing == NULL)
        return topo_err_nomem(err, NULL);
    topo_podset_spec ps = *pod_ps;
    ps.name = "podset";
    ps.count = (int32_t)r->nslots;
    ps.previous = NULL;
    topo_admitted_podset admitted = {ps.name, ps.count, existing};
    topo_workload_spec wl = {0, failed, nfailed, &admitted, 1, 1, 1};
    topo_podset_result res;
    memset(&res, 0, sizeof res);

    const topo_snapshot *snap = topo_live_acquire(ctx->topos[t].t.live);
    int rc = topo_engine_find(&res, snap, &ps, 1, &wl, &ctx->gates, ctx->engine_pool, err);
    if (rc == 0 && (res.assignment == NULL || res.replacement == NULL))
        *failure = topo_pool_strdup(pool, res.failure ? res.failure : "no replacement found");
    else if (rc == 0 && (res.replacement->nlevels != r->nassignment_levels ||
                         pods_of(res.replacement) != slots_on(r, failed, nfailed)))
        *failure = topo_pool_printf(pool, "the replacement found does not fit the reservation's "
                                          "slots");
    else if (rc == 0 && (*out = moved_slots(r, failed, nfailed, res.replacement, pool)) == NULL)
        rc = topo_err_nomem(err, NULL);
    topo_live_release(ctx->topos[t].t.live, snap);
    topo_pool_clear(ctx->engine_pool);
    if (rc == 0 && *out == NULL && *failure == NULL)
        rc = topo_err_nomem(err, NULL);
    return rc;
}

/* A log line, an Event's message: the first few of a long list are
 * enough (a rack holds hundreds of slots). */
#define LIST_MAX 16

/* The hosts as "n9, n10". */
static const char *host_list(const char *const *hosts, size_t n, topo_pool *pool)
{
    const char *s = "";
    for (size_t i = 0; s != NULL && i < n && i < LIST_MAX; i++)
        s = topo_pool_printf(pool, "%s%s%s", s, i ? ", " : "", hosts[i]);
    if (s != NULL && n > LIST_MAX)
        s = topo_pool_printf(pool, "%s and %zu more", s, n - LIST_MAX);
    return s;
}

/* "3 -> n11, 5 -> n12": the slots that moved. */
static const char *moves_text(const topo_cache_reservation *r, const topo_cache_slot *moved,
                              topo_pool *pool)
{
    const char *s = "";
    size_t n = 0;
    for (size_t i = 0; s != NULL && i < r->nslots; i++) {
        if (strcmp(host_of(&r->slots[i]), host_of(&moved[i])) == 0)
            continue;
        if (n++ < LIST_MAX)
            s = topo_pool_printf(pool, "%s%s%d -> %s", s, s[0] ? ", " : "", (int)i,
                                 host_of(&moved[i]));
    }
    if (s != NULL && n > LIST_MAX)
        s = topo_pool_printf(pool, "%s and %zu more", s, n - LIST_MAX);
    return s;
}

/* Stores the moved slots as r's next generation (the claims of pods that
 * were bound to the failed nodes released: cache.h) and the pod's slot
 * claimed for it when it had to share it, in one durable transaction. 0
 * stored; TOPO_ECONFLICT when the cache holds a newer generation (read it
 * again). mu held. */
static int store_moved(topo_admission_ctx *ctx, const topo_cache_reservation *r,
                       const topo_cache_slot *moved, placement *p, int64_t now,
                       topo_pool *pool, topo_err *err)
{
    topo_assignment *as = slots_assignment(moved, r->nslots, r->assignment_levels,
                                           r->nassignment_levels, pool);
    const char *json = as != NULL ? adm_assignment_text(as, pool) : NULL;
    if (json == NULL)
        return topo_err_nomem(err, NULL);
    /* A placer that took over outranks the one before it; its own moves
     * count up from what the cache holds. */
    int64_t term = atomic_load(&ctx->term);
    if (term < r->gen_term)
        term = r->gen_term;
    int rc = topo_cache_begin_durable(ctx->cache, err);
    if (rc == 0)
        rc = topo_cache_reservation_reassign(ctx->cache, r->id, as, json, term, r->gen_seq + 1,
                                             err);
    if (rc == 0 && !p->claimed && p->claimant != NULL) {
        topo_cache_slot s;
        topo_err cerr = TOPO_ERR_INIT;
        /* best effort: another pod of the slot's index may hold it */
        if (topo_cache_reservation_claim(&s, ctx->cache, r->id, p->claimant, p->slot, now, pool,
                                         &cerr) == 0 &&
            s.index == p->slot)
            p->claimed = 1;
    }
    if (rc == 0)
        return topo_cache_commit(ctx->cache, err);
    topo_cache_rollback(ctx->cache, NULL);
    return rc;
}

/* --- the pod's slot ----------------------------------------------------------------------- */

static void count(topo_admission_ctx *ctx, topo_admission_replace_outcome o)
{
    atomic_fetch_add(&ctx->node_replacements[o], 1);
}

/* A slot that waits is reported (counted, logged, an Event) once per
 * window and outcome: a retry, or an AdmissionReview anyone can send for
 * it, says nothing new (client-go's event correlator limits a burst per
 * object likewise). The window starts over, and everything in it is
 * forgotten, every REPORT_WINDOW_S or past REPORT_MAX slots. */
#define REPORT_WINDOW_S 300
#define REPORT_MAX 4096

void adm_repair_free(topo_admission_ctx *ctx)
{
    topo_strmap_free(ctx->reported);
    topo_pool_free(ctx->reported_pool);
    ctx->reported = NULL;
    ctx->reported_pool = NULL;
}

/* 1 when (o, reservation r, slot) is not reported yet in this window (it
 * is now), 0 when it is; 1 when that cannot be told (out of memory: a
 * report too many rather than none). mu held. */
static int first_report(topo_admission_ctx *ctx, topo_admission_replace_outcome o,
                        const char *r, int32_t slot, int64_t now)
{
    if (ctx->reported != NULL && (now - ctx->reported_since >= REPORT_WINDOW_S ||
                                  topo_strmap_size(ctx->reported) >= REPORT_MAX))
        adm_repair_free(ctx);
    if (ctx->reported == NULL) {
        ctx->reported = topo_strmap_create(64);
        ctx->reported_pool = topo_pool_create();
        ctx->reported_since = now;
        if (ctx->reported == NULL || ctx->reported_pool == NULL) {
            adm_repair_free(ctx);
            return 1;
        }
    }
    char key[320];
    snprintf(key, sizeof key, "%d|%s|%d", (int)o, r, (int)slot);
    if (topo_strmap_get(ctx->reported, key) >= 0)
        return 0;
    const char *kept = topo_pool_strdup(ctx->reported_pool, key);
    if (kept != NULL)
        topo_strmap_put(ctx->reported, kept, 1);
    return 1;
}

/* The pod's slot p of r, after r (its copy in the cache, read again) moved
 * or not: what the pod is answered with. */
static void point_at(placement *p, const topo_cache_reservation *r)
{
    p->values = r->slots[p->slot].values;
    p->assignment_json = r->assignment_json;
    p->levels = r->assignment_levels;
    p->nlevels = r->nassignment_levels;
    p->res = r;
}

/* The PodSet cannot be repaired now: the pod waits, or is refused. */
static int no_room(topo_admission_ctx *ctx, mode m, const topo_cache_reservation *r,
                   const placement *p, const char *cause, const char *const *failed,
                   size_t nfailed, const char *failure, const topo_admission_request *req,
                   const char *gate_key, int64_t now, const char **why, topo_pool *pool)
{
    const char *hosts = host_list(failed, nfailed, pool);
    *why = topo_pool_printf(pool, "%s; no replacement for %s in the PodSet's domain: %s", cause,
                            hosts ? hosts : "?", failure);
    if (*why == NULL)
        return TOPO_ENOMEM;
    topo_admission_replace_outcome o =
        ctx->replace_fail_fast ? TOPO_ADMISSION_REPLACE_FAIL_FAST : TOPO_ADMISSION_REPLACE_NO_ROOM;
    /* Once per pod and window, not per retry of the ungater. */
    if (m == MODE_ADMIT && first_report(ctx, o, r->id, p->slot, now)) {
        count(ctx, o);
        adm_event_queue(ctx, adm_pod_namespace(req), r->id, p->slot, gate_key, "Warning",
                        "TopologyNodeReplacementFailed", *why, now);
        topo_log(TOPO_LOG_WARN, "node replacement: PodSet %s reservation %s: %s", r->podset_key,
                 r->id, *why);
    }
    return ctx->replace_fail_fast ? ADM_REPAIR_REFUSE : ADM_REPAIR_WAIT;
}

/* A pod of a single-Pod PodSet recreated after its node failed: Kueue
 * keeps such a workload's assignment and a new pod is a new workload, so
 * its reservation goes and the pod is placed anew. */
static int place_anew(topo_admission_ctx *ctx, mode m, const topo_cache_reservation *r,
                      const char *cause, int64_t now, topo_err *err)
{
    int rc = topo_cache_reservation_delete(ctx->cache, r->id, NULL, err);
    if (rc < 0)
        return rc;
    adm_memo_clear(ctx);
    topo_err rerr = TOPO_ERR_INIT;
    if (adm_resync(ctx, now, &rerr) < 0)
        topo_log(TOPO_LOG_WARN, "reservation %s: capacity not released: %s", r->id, rerr.text);
    if (m == MODE_ADMIT)
        count(ctx, TOPO_ADMISSION_REPLACE_NEW);
    topo_log(TOPO_LOG_INFO,
             "node replacement: PodSet %s reservation %s: %s; a single pod's PodSet: placed anew",
             r->podset_key, r->id, cause);
    return ADM_REPAIR_NEW;
}

int adm_repair(topo_admission_ctx *ctx, mode m, placement *p, topo_cache_reservation *r,
               const topo_podset_spec *ps, const topo_admission_request *req,
               const char *gate_key, int64_t now, const char **why, topo_pool *pool,
               topo_err *err)
{
    long t = adm_topology_of_id(ctx, r->id);
    *why = NULL;
    if (t < 0 || p->nlevels == 0 ||
        strcmp(p->levels[p->nlevels - 1], TOPO_KUEUE_HOSTNAME_LABEL) != 0)
        return ADM_REPAIR_NONE; /* no node to fail (the slot is a domain), or no topology */
    for (int attempt = 0; attempt < REPAIR_ATTEMPTS; attempt++) {
        host_check hc;
        const char *host = p->values[p->nlevels - 1], *cause = NULL, *failure = NULL;
        adm_domain d = domain_of(r);
        int rc = adm_check_host(ctx, t, host, ps, &d, &hc, pool, err);
        if (rc < 0 || hc.state == HOST_OK)
            return rc < 0 ? rc : ADM_REPAIR_NONE;
        /* The pods and slots as the cache holds them now (p came from the
         * memo's copy, or one read before the last move). */
        topo_cache_reservation *now_r = topo_pool_calloc(pool, 1, sizeof(*now_r));
        if (now_r == NULL)
            return topo_err_nomem(err, NULL);
        if ((rc = topo_cache_reservation_get(now_r, ctx->cache, r->id, pool, err)) < 0)
            return rc;
        if ((size_t)p->slot >= now_r->nslots)
            return topo_err_set(err, TOPO_EINVALID, "reservation %s: slot %d is gone", r->id,
                                (int)p->slot);
        *r = *now_r;
        if (strcmp(host_of(&r->slots[p->slot]), host) != 0) {
            point_at(p, r); /* moved meanwhile: look at its new node */
            continue;
        }
        if ((rc = host_failed(ctx, t, r, host, ps, &cause, pool, err)) < 0)
            return rc;
        if (rc == 0) {
            point_at(p, r);
            return ADM_REPAIR_NONE;
        }
        if (rc == 2) {
            if (m == MODE_ADMIT &&
                first_report(ctx, TOPO_ADMISSION_REPLACE_WAITING, r->id, p->slot, now))
                count(ctx, TOPO_ADMISSION_REPLACE_WAITING);
            *why = cause;
            return ADM_REPAIR_WAIT;
        }
        if (topo_podset_key_is_single_pod(r->podset_key))
            return place_anew(ctx, m, r, cause, now, err);

        const char **failed = NULL;
        size_t nfailed = 0;
        topo_cache_slot *moved = NULL;
        if ((rc = other_failed_hosts(ctx, t, r, host, ps, &failed, &nfailed, pool, err)) < 0 ||
            (rc = find_replacement(ctx, t, r, ps, failed, nfailed, &moved, &failure, pool,
                                   err)) < 0)
            return rc;
        if (moved == NULL)
            return no_room(ctx, m, r, p, cause, failed, nfailed, failure, req, gate_key, now, why,
                           pool);
        const char *moves = moves_text(r, moved, pool);
        rc = store_moved(ctx, r, moved, p, now, pool, err);
        if (rc == TOPO_ECONFLICT) { /* adopted a newer generation meanwhile */
            topo_err_clear(err);
            adm_memo_clear(ctx);
            continue;
        }
        if (rc < 0 || (rc = topo_cache_reservation_get(r, ctx->cache, r->id, pool, err)) < 0)
            return rc;
        adm_memo_clear(ctx);
        topo_err rerr = TOPO_ERR_INIT;
        if (adm_resync(ctx, now, &rerr) < 0)
            topo_log(TOPO_LOG_WARN, "reservation %s: capacity not moved: %s", r->id, rerr.text);
        point_at(p, r);
        count(ctx, TOPO_ADMISSION_REPLACED);
        const char *hosts = host_list(failed, nfailed, pool);
        const char *msg = topo_pool_printf(pool, "%s: slots of %s replaced (slot -> node: %s)",
                                           cause, hosts ? hosts : "?", moves ? moves : "?");
        if (msg == NULL)
            return topo_err_nomem(err, NULL);
        topo_log(TOPO_LOG_INFO,
                 "node replacement: PodSet %s reservation %s generation [%lld,%lld]: %s",
                 r->podset_key, r->id, (long long)r->gen_term, (long long)r->gen_seq, msg);
        adm_event_queue(ctx, adm_pod_namespace(req), r->id, p->slot, NULL, "Normal",
                        "TopologyNodeReplaced", msg, now);
        return ADM_REPAIR_MOVED;
    }
    *why = topo_pool_printf(pool, "reservation %s kept changing while its failed node was "
                                  "replaced; retried later",
                            r->id);
    return *why ? ADM_REPAIR_WAIT : TOPO_ENOMEM;
}
