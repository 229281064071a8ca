/* How much one namespace may hold for pods it has not created yet.
 *
 * The first pod of a PodSet reserves room for all of its pods. That room is
 * capacity nobody else gets while the rest are on their way, and the pod
 * alone decides how big it is (its podset-size annotation), so without
 * bounds one pod could hold the whole cluster (issue 9). The bounds:
 * configured caps per namespace and in all, and the namespace's
 * ResourceQuota (which counts only pods that exist). A new reservation that
 * would pass one does not fit: the no-fit policy applies, so under `gate`
 * the pod waits until the namespace's reserved room shrinks. A PodSet whose
 * pods request nothing reserves nothing and is never refused here. */
#include <stdio.h>
#include <string.h>

#include "handler_internal.h"
#include "topo/array.h"
#include "topo/quantity.h"

/* Amounts per resource name, "pods" counting slots. */
typedef struct tally {
    const char **names;
    int64_t *amounts;
    size_t n, cap_names, cap_amounts;
} tally;

static int tally_add(tally *t, topo_pool *pool, const char *name, int64_t amount)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0) {
            t->amounts[i] = topo_quantity_add(t->amounts[i], amount);
            return 0;
        }
    int rc = topo_pool_array_reserve(pool, (void **)&t->names, &t->cap_names, t->n, t->n + 1,
                                     sizeof(*t->names));
    if (rc == 0)
        rc = topo_pool_array_reserve(pool, (void **)&t->amounts, &t->cap_amounts, t->n, t->n + 1,
                                     sizeof(*t->amounts));
    if (rc != 0)
        return rc;
    if ((t->names[t->n] = topo_pool_strdup(pool, name)) == NULL)
        return TOPO_ENOMEM;
    t->amounts[t->n++] = amount;
    return 0;
}

static int64_t tally_get(const tally *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return t->amounts[i];
    return 0;
}

/* What one pod of these requests takes of resource `name` ("pods": 1). */
static int64_t per_pod(const topo_resource *req, size_t nreq, const char *name)
{
    if (strcmp(name, "pods") == 0)
        return 1;
    for (size_t i = 0; i < nreq; i++)
        if (strcmp(req[i].name, name) == 0)
            return req[i].amount;
    return 0;
}

/* count pods' worth of req added into t: "pods" and every resource. */
static int tally_pods(tally *t, topo_pool *pool, const topo_resource *req, size_t nreq,
                      int64_t count)
{
    int rc = tally_add(t, pool, "pods", count);
    for (size_t i = 0; rc == 0 && i < nreq; i++)
        rc = tally_add(t, pool, req[i].name, topo_quantity_mul(req[i].amount, count));
    return rc;
}

typedef struct gather {
    const char *ns; /* the namespace tallied apart */
    tally in_ns, all;
    topo_pool *pool;
} gather;

static int gather_one(const topo_cache_unclaimed *u, void *payload)
{
    gather *g = payload;
    int rc = tally_pods(&g->all, g->pool, u->requests, u->nrequests, u->count);
    if (rc == 0 && strcmp(u->namespace_, g->ns) == 0)
        rc = tally_pods(&g->in_ns, g->pool, u->requests, u->nrequests, u->count);
    return rc;
}

/* Over a cap: the reason, else NULL. */
static const char *over_cap(const tally *held, const topo_resource *caps, size_t ncaps,
                            const topo_resource *req, size_t nreq, int64_t new_slots,
                            const char *whose, topo_pool *pool)
{
    for (size_t i = 0; i < ncaps; i++) {
        int64_t each = per_pod(req, nreq, caps[i].name);
        if (each <= 0)
            continue; /* the PodSet does not ask for it */
        int64_t held_r = tally_get(held, caps[i].name);
        int64_t want = topo_quantity_add(held_r, topo_quantity_mul(each, new_slots));
        if (want > caps[i].amount)
            return topo_pool_printf(pool,
                                    "%s would hold %lld %s reserved for pods not created yet "
                                    "(%lld before this PodSet), over the cap of %lld",
                                    whose, (long long)want, caps[i].name, (long long)held_r,
                                    (long long)caps[i].amount);
    }
    return NULL;
}

int adm_fair_check(const topo_fairness *f, topo_cache *cache, int64_t now, const char *ns,
                   const topo_resource *req, size_t nreq, int32_t size, int32_t arriving,
                   topo_pool *pool, const char **why, topo_err *err)
{
    *why = NULL;
    if (ns == NULL)
        ns = "";
    if (!topo_cache_requests_hold_capacity(req, nreq) || size <= arriving)
        return 0; /* it reserves nothing, or nothing for pods still to come */
    int64_t new_slots = (int64_t)size - arriving;
    gather g;
    memset(&g, 0, sizeof(g));
    g.ns = ns;
    g.pool = pool;
    int rc = topo_cache_foreach_unclaimed(cache, now, gather_one, &g, err);
    if (rc != 0)
        return rc < 0 ? rc : topo_err_nomem(err, NULL);

    const char *whose = topo_pool_printf(pool, "namespace %s", ns);
    if (whose == NULL)
        return topo_err_nomem(err, NULL);
    if ((*why = over_cap(&g.in_ns, f->caps_namespace, f->ncaps_namespace, req, nreq, new_slots,
                         whose, pool)) != NULL ||
        (*why = over_cap(&g.all, f->caps_global, f->ncaps_global, req, nreq, new_slots,
                         "the cluster", pool)) != NULL)
        return 1;

    if (f->quota == NULL)
        return 0;
    const topo_admission_quota_room *room = NULL;
    size_t nroom = 0;
    if ((rc = f->quota(f->quota_payload, ns, pool, &room, &nroom)) < 0)
        return topo_err_set(err, rc, "namespace %s: cannot read its ResourceQuota room", ns);
    for (size_t i = 0; rc == 1 && i < nroom; i++) {
        int64_t each = per_pod(req, nreq, room[i].resource);
        if (each <= 0)
            continue;
        /* The arriving pod is not in the quota's usage yet either: the
         * API server charges it after the webhooks. */
        int64_t held_r = tally_get(&g.in_ns, room[i].resource);
        int64_t need = topo_quantity_add(held_r, topo_quantity_mul(each, size));
        if (need > room[i].room) {
            *why = topo_pool_printf(pool,
                                    "namespace %s: its ResourceQuota leaves %lld %s, the "
                                    "PodSet's %d pods need %lld (%lld held for pods not created "
                                    "yet before it)",
                                    ns, (long long)room[i].room, room[i].resource, (int)size,
                                    (long long)topo_quantity_mul(each, size),
                                    (long long)held_r);
            return *why != NULL ? 1 : topo_err_nomem(err, NULL);
        }
    }
    return 0;
}

typedef struct report {
    const char *ns; /* being tallied */
    tally t;
    topo_pool *pool;
    topo_admission_unclaimed_fn fn;
    void *payload;
} report;

static int flush(report *r)
{
    for (size_t i = 0; i < r->t.n; i++) {
        int rc = r->fn(r->payload, r->ns, r->t.names[i], r->t.amounts[i]);
        if (rc != 0)
            return rc;
    }
    r->t.n = 0;
    return 0;
}

static int report_one(const topo_cache_unclaimed *u, void *payload)
{
    report *r = payload;
    int rc;
    if (r->ns != NULL && strcmp(r->ns, u->namespace_) != 0 && (rc = flush(r)) != 0)
        return rc;
    if (r->ns == NULL || strcmp(r->ns, u->namespace_) != 0)
        if ((r->ns = topo_pool_strdup(r->pool, u->namespace_)) == NULL)
            return TOPO_ENOMEM;
    return tally_pods(&r->t, r->pool, u->requests, u->nrequests, u->count);
}

int adm_fair_report(topo_cache *cache, int64_t now, topo_admission_unclaimed_fn fn, void *payload,
                    topo_pool *pool, topo_err *err)
{
    report r;
    memset(&r, 0, sizeof(r));
    r.pool = pool;
    r.fn = fn;
    r.payload = payload;
    int rc = topo_cache_foreach_unclaimed(cache, now, report_one, &r, err);
    if (rc == 0 && r.ns != NULL)
        rc = flush(&r);
    if (rc == TOPO_ENOMEM)
        return topo_err_nomem(err, NULL);
    return rc;
}
