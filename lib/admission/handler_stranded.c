/* Pods stranded on a failed node (topo_admission_stranded_foreach): topo
 * pinned them to their slot's host with a nodeSelector, kube-scheduler has
 * not bound them, and the host then failed. Kueue's node controller fails
 * such pods (pkg/controller/tas/node_controller.go: getPodsToTerminate,
 * markPodsFailed) so that their Job replaces them; the replacement's slot
 * is then repaired by handler_replace.c. This file only finds them: the webhook's
 * ungater patches them.
 *
 * The host is judged as adm_check_host sees it with no pod request: the
 * pod's tolerations are not at hand, so taints are not looked at (a taint
 * the pod tolerates must not fail it) and a cordon counts; a node no
 * longer in the PodSet's domain (relabelled: the pod's nodeSelector names
 * the old one) counts. A slot whose assignment does not end at the
 * hostname level pins no node. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "topo/admission.h"

#include "handler_internal.h"
#include "topo/array.h"
#include "topo/kueue_names.h"

typedef struct found {
    topo_admission_ctx *ctx;
    TOPO_ARRAY(topo_admission_stranded) pods;
    topo_pool *pool; /* their strings */
    topo_err *err;
} found;

static int keep(found *f, const topo_cache_stranded *s, const char *host, const char *what)
{
    topo_admission_stranded c = {topo_pool_strdup(f->pool, s->namespace_),
                                 topo_pool_strdup(f->pool, s->pod_name),
                                 topo_pool_strdup(f->pool, s->pod_uid),
                                 topo_pool_strdup(f->pool, host), what};
    if (c.namespace_ == NULL || c.pod_name == NULL || c.pod_uid == NULL || c.host == NULL ||
        TOPO_ARRAY_PUSH(&f->pods, c) != 0)
        return topo_err_nomem(f->err, "stranded pods");
    return 0;
}

static int check(const topo_cache_stranded *s, void *payload)
{
    found *f = payload;
    host_check hc;
    size_t n = s->nassignment_levels;
    if (n == 0 || s->nvalues != n ||
        strcmp(s->assignment_levels[n - 1], TOPO_KUEUE_HOSTNAME_LABEL) != 0)
        return 0;
    long t = adm_topology_of_id(f->ctx, s->reservation_id);
    if (t < 0)
        return 0; /* a topology no longer configured: nothing says how its nodes are */
    const char *host = s->values[n - 1];
    adm_domain d = adm_domain_of(s->levels, s->nlevels, s->domain, s->ndomain);
    int rc = adm_check_host(f->ctx, t, host, NULL, &d, &hc, f->pool, f->err);
    if (rc < 0)
        return rc;
    return hc.state == HOST_OK ? 0 : keep(f, s, host, hc.what);
}

int topo_admission_stranded_foreach(topo_admission_ctx *ctx, topo_admission_stranded_fn fn,
                                    void *payload, topo_err *err)
{
    found f = {ctx, TOPO_ARRAY_INIT, topo_pool_create(), err};
    int rc;
    if (ctx == NULL || fn == NULL) {
        topo_pool_free(f.pool);
        return topo_err_set(err, TOPO_EINVALID, "stranded pods: missing argument");
    }
    if (f.pool == NULL)
        return topo_err_nomem(err, "stranded pods");
    /* The cache connection is the ctx's: read under its lock, call fn
     * without it (fn talks to the API server). */
    pthread_mutex_lock(&ctx->mu);
    rc = topo_cache_foreach_stranded(ctx->cache, check, &f, err);
    pthread_mutex_unlock(&ctx->mu);
    for (size_t i = 0; rc == 0 && i < f.pods.n; i++)
        rc = fn(payload, &f.pods.items[i]);
    free(f.pods.items);
    topo_pool_free(f.pool);
    return rc;
}
