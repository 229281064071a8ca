/* ResourceQuota room per namespace, kept by list+watch (quota.h).
 *
 * The view holds every quota (key "namespace/name": a namespace cannot
 * contain '/') with its room per pod resource, and every namespace that
 * has quotas with the indices of its quotas and their combined room (the
 * least per resource). Both live in dense arrays indexed by topo_strmaps;
 * a removal moves the last element into the hole, so nothing is scanned
 * for a free slot. A namespace's combined room borrows the resource names
 * of its quotas' rooms: it is recomputed whenever one of its quotas
 * changes or goes, before the quota's old room is freed.
 *
 * watch.c keeps the view: a (re)list builds a fresh one and swaps it in
 * whole (quotas deleted while the watch was down disappear); watch events
 * edit the current one under the write lock. Lookups, on the admission
 * path, take the read lock and copy the namespace's room into the
 * caller's pool. */
#define _POSIX_C_SOURCE 200809L

#include "quota.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/resourcequota.h"
#include "topo/log.h"
#include "topo/strmap.h"
#include "watch.h"

/* core/v1 ResourceQuota (lib/net has no constant for it: only we watch them). */
static const topo_k8s_resource resourcequotas_res = {"", "v1", "resourcequotas",
                                                     "ResourceQuota", 1};

typedef struct quota {
    char *key;         /* "namespace/name" */
    int32_t ns;        /* index into view.ns */
    topo_resource *room; /* sorted by name; names malloc'd */
    size_t nroom;
} quota;

typedef struct nsroom {
    char *name;
    int32_t *quotas; /* indices into view.q */
    size_t nquotas, cap;
    topo_resource *room; /* sorted; names borrowed from the quotas' rooms */
    size_t nroom;
} nsroom;

typedef struct view {
    topo_strmap *qmap; /* key -> index into q */
    quota *q;
    size_t nq, capq;
    topo_strmap *nmap; /* namespace -> index into ns */
    nsroom *ns;
    size_t nns, capns;
} view;

struct wh_quota {
    topo_k8s *k;    /* the view's client */
    topo_view *w;   /* holds the view */

    /* Touched by the watch thread only. */
    topo_pool *scratch; /* one decoded object */
    wh_once warned;     /* quota key -> the problems warned about */
    int warned_unkeyed;
};

/* ---- rooms ---- */

static void room_free(topo_resource *room, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free((char *)room[i].name);
    free(room);
}

/* A malloc'd copy (names too) of a decoded room. */
static int room_copy(topo_resource **out, const topo_resource *src, size_t n)
{
    topo_resource *r = NULL;
    *out = NULL;
    if (n == 0)
        return 0;
    if ((r = calloc(n, sizeof(*r))) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((r[i].name = strdup(src[i].name)) == NULL) {
            room_free(r, i);
            return TOPO_ENOMEM;
        }
        r[i].amount = src[i].amount;
    }
    *out = r;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const topo_resource *)a)->name, ((const topo_resource *)b)->name);
}

/* The least room per resource over the namespace's quotas. On ENOMEM the
 * namespace's room is left empty (it limits nothing until the next change):
 * the previous one may borrow names of a room being replaced. */
static int ns_recompute(view *v, nsroom *n)
{
    size_t total = 0, k = 0;
    topo_resource *all;
    for (size_t i = 0; i < n->nquotas; i++)
        total += v->q[n->quotas[i]].nroom;
    free(n->room);
    n->room = NULL;
    n->nroom = 0;
    if (total == 0)
        return 0;
    if ((all = malloc(total * sizeof(*all))) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n->nquotas; i++) {
        const quota *q = &v->q[n->quotas[i]];
        memcpy(all + k, q->room, q->nroom * sizeof(*all));
        k += q->nroom;
    }
    qsort(all, total, sizeof(*all), by_name);
    for (size_t i = 0; i < total; i++) {
        if (n->nroom > 0 && strcmp(all[n->nroom - 1].name, all[i].name) == 0) {
            if (all[i].amount < all[n->nroom - 1].amount)
                all[n->nroom - 1].amount = all[i].amount;
            continue;
        }
        all[n->nroom++] = all[i];
    }
    n->room = all;
    return 0;
}

/* ---- the view ---- */

static void view_free(void *arg, void *payload)
{
    view *v = arg;
    (void)payload;
    if (v == NULL)
        return;
    topo_strmap_free(v->qmap);
    topo_strmap_free(v->nmap);
    for (size_t i = 0; i < v->nq; i++) {
        free(v->q[i].key);
        room_free(v->q[i].room, v->q[i].nroom);
    }
    for (size_t i = 0; i < v->nns; i++) {
        free(v->ns[i].name);
        free(v->ns[i].quotas);
        free(v->ns[i].room);
    }
    free(v->q);
    free(v->ns);
    free(v);
}

static void *view_new(void *payload)
{
    view *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return NULL;
    if ((v->qmap = topo_strmap_create(64)) == NULL || (v->nmap = topo_strmap_create(64)) == NULL) {
        view_free(v, payload);
        return NULL;
    }
    return v;
}

/* Room for one more element in a dense array indexed by int32. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n >= INT32_MAX)
        return TOPO_ELIMIT;
    return topo_array_reserve(arr, cap, n + 1, size);
}

/* The namespace's entry, created when absent; -1 on errors (*rc). */
static int32_t ns_get(view *v, const char *name, int *rc)
{
    int32_t i = topo_strmap_get(v->nmap, name);
    nsroom *n;
    if (i >= 0)
        return i;
    if ((*rc = grow((void **)&v->ns, &v->capns, v->nns, sizeof(*v->ns))) != 0)
        return -1;
    n = &v->ns[v->nns];
    memset(n, 0, sizeof(*n));
    if ((n->name = strdup(name)) == NULL ||
        topo_strmap_put(v->nmap, n->name, (int32_t)v->nns) != 0) {
        free(n->name);
        *rc = TOPO_ENOMEM;
        return -1;
    }
    return (int32_t)v->nns++;
}

/* Removes namespace i (it has no quotas left): the last one moves into i. */
static void ns_remove(view *v, int32_t i)
{
    nsroom *n = &v->ns[i];
    size_t last = v->nns - 1;
    topo_strmap_remove(v->nmap, n->name);
    free(n->name);
    free(n->quotas);
    free(n->room);
    if ((size_t)i != last) {
        *n = v->ns[last];
        topo_strmap_put(v->nmap, n->name, i); /* an existing key: no allocation */
        for (size_t k = 0; k < n->nquotas; k++)
            v->q[n->quotas[k]].ns = i;
    }
    v->nns--;
}

/* Replaces index `from` by `to` in namespace ns's list of quotas. */
static void ns_renumber(nsroom *n, int32_t from, int32_t to)
{
    for (size_t k = 0; k < n->nquotas; k++)
        if (n->quotas[k] == from)
            n->quotas[k] = to;
}

static void view_remove(view *v, const char *key)
{
    int32_t i = topo_strmap_remove(v->qmap, key);
    size_t last;
    nsroom *n;
    if (i < 0)
        return;
    n = &v->ns[v->q[i].ns];
    ns_renumber(n, i, -1);
    for (size_t k = 0; k < n->nquotas; k++)
        if (n->quotas[k] == -1) {
            n->quotas[k] = n->quotas[--n->nquotas];
            break;
        }
    /* Before the quota's names go: the namespace's room borrows them. */
    if (n->nquotas == 0)
        ns_remove(v, v->q[i].ns);
    else if (ns_recompute(v, n) != 0)
        topo_log(TOPO_LOG_WARN, "resource-quotas: namespace %s: out of memory; its quotas "
                                "limit nothing until they change",
                 n->name);
    free(v->q[i].key);
    room_free(v->q[i].room, v->q[i].nroom);
    last = v->nq - 1;
    if ((size_t)i != last) {
        v->q[i] = v->q[last];
        topo_strmap_put(v->qmap, v->q[i].key, i); /* an existing key */
        ns_renumber(&v->ns[v->q[i].ns], (int32_t)last, i);
    }
    v->nq--;
}

/* Sets the quota's room (taking ownership of room). */
static int view_set(view *v, const char *key, const char *ns_name, topo_resource *room,
                    size_t nroom)
{
    int32_t i = topo_strmap_get(v->qmap, key), nsi = -1;
    topo_resource *old = NULL;
    size_t nold = 0;
    int rc = 0;
    if (i < 0) {
        nsroom *n;
        if ((nsi = ns_get(v, ns_name, &rc)) < 0)
            goto fail;
        n = &v->ns[nsi];
        if ((rc = grow((void **)&n->quotas, &n->cap, n->nquotas, sizeof(*n->quotas))) != 0 ||
            (rc = grow((void **)&v->q, &v->capq, v->nq, sizeof(*v->q))) != 0)
            goto fail_ns;
        i = (int32_t)v->nq;
        memset(&v->q[i], 0, sizeof(v->q[i]));
        if ((v->q[i].key = strdup(key)) == NULL ||
            topo_strmap_put(v->qmap, v->q[i].key, i) != 0) {
            free(v->q[i].key);
            rc = TOPO_ENOMEM;
            goto fail_ns;
        }
        v->q[i].ns = nsi;
        v->nq++;
        n->quotas[n->nquotas++] = i;
    } else {
        old = v->q[i].room;
        nold = v->q[i].nroom;
    }
    v->q[i].room = room;
    v->q[i].nroom = nroom;
    rc = ns_recompute(v, &v->ns[v->q[i].ns]);
    room_free(old, nold);
    return rc;
fail_ns:
    if (v->ns[nsi].nquotas == 0)
        ns_remove(v, nsi);
fail:
    room_free(room, nroom);
    return rc;
}

/* ---- applying one object ---- */

/* One warning naming the fields, when they are not the ones last named. */
static void warn_problems(wh_quota *p, const char *key, const topo_resourcequota *rq)
{
    char text[TOPO_LOG_MSG_MAX];
    size_t len = 0, kept = rq->nproblems < TOPO_RESOURCEQUOTA_PROBLEMS_MAX
                               ? rq->nproblems
                               : TOPO_RESOURCEQUOTA_PROBLEMS_MAX;
    text[0] = '\0';
    for (size_t i = 0; i < kept && len < sizeof text; i++) {
        int w = snprintf(text + len, sizeof text - len, "%s%s", i ? "; " : "", rq->problems[i]);
        len = w < 0 ? sizeof text : len + (size_t)w;
    }
    if (wh_once_new(&p->warned, key, text))
        topo_log(TOPO_LOG_WARN,
                 "resource-quotas: ResourceQuota %s: %zu entries ignored (they limit nothing): "
                 "%s",
                 key, rq->nproblems, text);
}

/* Applies one ResourceQuota's current state to the view (topo_view_ops.apply). */
static int apply(void *arg, const json_t *obj, int deleted, topo_err *code_only, void *payload)
{
    wh_quota *p = payload;
    view *v = arg;
    topo_resourcequota rq;
    topo_err err = TOPO_ERR_INIT;
    topo_resource *room;
    char *key;
    int rc;

    (void)code_only; /* a code alone: the reflector names the step */
    topo_pool_clear(p->scratch);
    if ((rc = topo_resourcequota_decode(&rq, obj, p->scratch, &err)) != 0) {
        if (rc != TOPO_EINVALID)
            return rc;
        /* Cannot be keyed: the API server never sends one. */
        topo_log(p->warned_unkeyed ? TOPO_LOG_DEBUG : TOPO_LOG_WARN,
                 "resource-quotas: a ResourceQuota skipped: %s", err.text);
        p->warned_unkeyed = 1;
        return 0;
    }
    if ((key = topo_pool_printf(p->scratch, "%s/%s", rq.namespace_, rq.name)) == NULL)
        return TOPO_ENOMEM;
    if (deleted) {
        view_remove(v, key);
        wh_once_forget(&p->warned, key);
        return 0;
    }
    if (rq.nproblems > 0)
        warn_problems(p, key, &rq);
    else
        wh_once_forget(&p->warned, key);
    if ((rc = room_copy(&room, rq.room, rq.nroom)) != 0)
        return rc;
    return view_set(v, key, rq.namespace_, room, rq.nroom);
}

static int in_view(const char *key, const void *arg)
{
    const view *v = arg;
    return topo_strmap_get(v->qmap, key) >= 0;
}

static void listed(const void *arg, int first, void *payload)
{
    wh_quota *p = payload;
    const view *v = arg;
    /* Quotas the list no longer has are forgotten (one that comes back
     * broken is warned about again). */
    wh_once_prune(&p->warned, in_view, v);
    if (first)
        topo_log(TOPO_LOG_INFO, "resource-quotas: synced: %zu ResourceQuotas in %zu namespaces",
                 v->nq, v->nns);
}

/* list+watch: topo/view.h. */
static const topo_view_ops watch_ops = {
    .create = view_new, .destroy = view_free, .apply = apply, .listed = listed};

/* ---- API ---- */

int wh_quota_create(wh_quota **out, const topo_k8s_config *k8s_cfg,
                      const wh_quota_opts *opts, topo_err *err)
{
    wh_quota *p = NULL;
    wh_watch_opts wo = {.name = "resource-quotas", .res = &resourcequotas_res};
    int rc;

    *out = NULL;
    if (k8s_cfg == NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "resource-quotas: a Kubernetes configuration is required");
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "resource-quotas: out of memory");
    if (opts != NULL)
        wo.client = *opts;
    if ((p->scratch = topo_pool_create()) == NULL) {
        rc = topo_err_set(err, TOPO_ENOMEM, "resource-quotas: out of memory");
        goto fail;
    }
    if ((rc = wh_watch_open(&p->w, &p->k, k8s_cfg, &wo, &watch_ops, p, err)) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    wh_quota_free(p);
    return rc;
}

int wh_quota_start(wh_quota *p, topo_err *err)
{
    return topo_view_start(p->w, err);
}

int wh_quota_lookup(wh_quota *p, const char *namespace_, topo_pool *pool,
                      const topo_admission_quota_room **out, size_t *n)
{
    topo_admission_quota_room *r = NULL;
    const view *v;
    const nsroom *ns;
    int32_t i;
    int rc = 0;
    *out = NULL;
    *n = 0;
    if (p == NULL || namespace_ == NULL)
        return 0;
    v = topo_view_read(p->w);
    if ((i = topo_strmap_get(v->nmap, namespace_)) < 0)
        goto done;
    ns = &v->ns[i];
    if (ns->nroom > 0 && (r = topo_pool_calloc(pool, ns->nroom, sizeof(*r))) == NULL) {
        rc = TOPO_ENOMEM;
        goto done;
    }
    /* Copies: the names belong to the view, which the watch thread changes
     * once the lock is released. */
    for (size_t k = 0; k < ns->nroom; k++) {
        if ((r[k].resource = topo_pool_strdup(pool, ns->room[k].name)) == NULL) {
            rc = TOPO_ENOMEM;
            goto done;
        }
        r[k].room = ns->room[k].amount;
    }
    *out = r;
    *n = ns->nroom;
    rc = 1;
done:
    topo_view_read_end(p->w);
    return rc;
}

int wh_quota_synced(wh_quota *p)
{
    return p != NULL && topo_view_synced(p->w);
}

size_t wh_quota_namespaces(wh_quota *p)
{
    size_t n;
    if (p == NULL)
        return 0;
    n = ((const view *)topo_view_read(p->w))->nns;
    topo_view_read_end(p->w);
    return n;
}

size_t wh_quota_count(wh_quota *p)
{
    size_t n;
    if (p == NULL)
        return 0;
    n = ((const view *)topo_view_read(p->w))->nq;
    topo_view_read_end(p->w);
    return n;
}

void wh_quota_stop(wh_quota *p)
{
    if (p != NULL)
        topo_view_stop(p->w);
}

void wh_quota_free(wh_quota *p)
{
    if (p == NULL)
        return;
    topo_view_free(p->w); /* the thread and the views */
    topo_k8s_free(p->k);
    wh_once_free(&p->warned);
    topo_pool_free(p->scratch);
    free(p);
}
