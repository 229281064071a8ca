/* The PodSet key of a pod (podset_key.h): one derivation for the admission
 * handler that places the pod and the cache that binds it to a slot. */
#include "topo/podset_key.h"

#include <string.h>

#include "topo/count.h"
#include "topo/kueue_names.h"
#include "topo/limits.h"

#define JOBSET_NAME "jobset.sigs.k8s.io/jobset-name"
#define JOBSET_RJOB "jobset.sigs.k8s.io/replicatedjob-name"
#define JOBSET_REPLICAS "jobset.sigs.k8s.io/replicatedjob-replicas"
#define JOBSET_JOB_INDEX "jobset.sigs.k8s.io/job-index"
#define LWS_NAME "leaderworkerset.sigs.k8s.io/name"
#define LWS_GROUP "leaderworkerset.sigs.k8s.io/group-index"
#define LWS_WORKER "leaderworkerset.sigs.k8s.io/worker-index"
#define LWS_SIZE "leaderworkerset.sigs.k8s.io/size"
#define COMPLETION_INDEX "batch.kubernetes.io/job-completion-index"

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static const char *kv_get(const topo_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (kv[i].key != NULL && strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

/* A label, else its legacy spelling (Jobs before Kubernetes 1.27). */
static const char *label2(const topo_podset_pod *p, const char *key, const char *legacy)
{
    const char *v = kv_get(p->labels, p->nlabels, key);
    return v != NULL ? v : kv_get(p->labels, p->nlabels, legacy);
}

/* A count from a label or annotation: absent → dflt. */
static int read_count(int64_t *out, const char *value, const char *name, int64_t min,
                      int64_t dflt, topo_err *err)
{
    if (value == NULL) {
        *out = dflt;
        return 0;
    }
    return topo_parse_count(out, value, name, min, TOPO_MAX_PODSET_COUNT, err);
}

int topo_podset_key_derive(topo_podset_key *out, const topo_podset_pod *pod, topo_pool *pool,
                           topo_err *err)
{
    const topo_kv *l = pod->labels, *a = pod->annotations;
    size_t nl = pod->nlabels, na = pod->nannotations;
    const char *ns = pod->namespace_name != NULL ? pod->namespace_name : "";
    int rc;

    memset(out, 0, sizeof(*out));
    const char *index = kv_get(l, nl, COMPLETION_INDEX);
    if (index == NULL)
        index = kv_get(a, na, COMPLETION_INDEX);
    if ((rc = read_count(&out->explicit_size, kv_get(a, na, TOPO_PODSET_SIZE_ANNOTATION),
                         "annotation " TOPO_PODSET_SIZE_ANNOTATION, 1, 0, err)) < 0 ||
        (rc = read_count(&out->index, index, COMPLETION_INDEX, 0, -1, err)) < 0)
        return rc;
    const char *group = kv_get(l, nl, TOPO_KUEUE_POD_GROUP_NAME);
    if (group == NULL)
        group = kv_get(a, na, TOPO_KUEUE_POD_GROUP_NAME);
    const char *jobset = kv_get(l, nl, JOBSET_NAME), *rjob = kv_get(l, nl, JOBSET_RJOB);
    const char *lws = kv_get(l, nl, LWS_NAME), *lws_group = kv_get(l, nl, LWS_GROUP);
    const char *uid = label2(pod, "batch.kubernetes.io/controller-uid", "controller-uid");
    const char *job = nonempty(uid) ? uid : label2(pod, "batch.kubernetes.io/job-name", "job-name");
    const char *owner = nonempty(pod->owner_uid) ? pod->owner_uid : NULL;

    out->replicas = out->lws_size = 1;
    if (nonempty(group)) {
        out->kind = TOPO_PODSET_POD_GROUP;
        out->key = topo_pool_printf(pool, "%s/pod-group/%s", ns, group);
    } else if (nonempty(jobset) && nonempty(rjob)) {
        if ((rc = read_count(&out->replicas, kv_get(l, nl, JOBSET_REPLICAS),
                             "label " JOBSET_REPLICAS, 1, 1, err)) < 0 ||
            (rc = read_count(&out->job_index, kv_get(l, nl, JOBSET_JOB_INDEX),
                             "label " JOBSET_JOB_INDEX, 0, 0, err)) < 0)
            return rc;
        out->kind = TOPO_PODSET_JOBSET;
        out->key = topo_pool_printf(pool, "%s/jobset/%s/%s", ns, jobset, rjob);
    } else if (nonempty(lws) && nonempty(lws_group)) {
        if ((rc = read_count(&out->lws_size, kv_get(a, na, LWS_SIZE), "annotation " LWS_SIZE, 1,
                             1, err)) < 0 ||
            (rc = read_count(&out->worker, kv_get(l, nl, LWS_WORKER), "label " LWS_WORKER, 0, 0,
                             err)) < 0)
            return rc;
        out->kind = out->worker == 0 ? TOPO_PODSET_LWS_LEADER : TOPO_PODSET_LWS_WORKERS;
        out->key = topo_pool_printf(pool, "%s/lws/%s/%s/%s", ns, lws, lws_group,
                                    out->worker == 0 ? "leader" : "workers");
    } else if (nonempty(job)) {
        out->kind = TOPO_PODSET_JOB;
        out->key = topo_pool_printf(pool, "%s/job/%s", ns, job);
    } else if (out->explicit_size > 0 && owner != NULL) {
        out->kind = TOPO_PODSET_OWNER;
        out->key = topo_pool_printf(pool, "%s/owner/%s", ns, owner);
    } else if (out->explicit_size > 0 && nonempty(pod->generate_name)) {
        out->kind = TOPO_PODSET_GENERATE_NAME;
        out->key = topo_pool_printf(pool, "%s/generate-name/%s", ns, pod->generate_name);
    } else if (nonempty(pod->name)) {
        out->kind = TOPO_PODSET_POD;
        out->key = topo_pool_printf(pool, "%s/pod/%s", ns, pod->name);
    } else if (owner != NULL && out->index >= 0) {
        out->kind = TOPO_PODSET_OWNER_RANK;
        out->key = topo_pool_printf(pool, "%s/owner/%s/%lld", ns, owner, (long long)out->index);
    } else {
        /* a generateName pod with nothing else: only this request names it */
        out->kind = TOPO_PODSET_REQUEST;
        out->key = topo_pool_printf(pool, "%s/request/%s", ns,
                                    pod->request_uid != NULL ? pod->request_uid : "");
    }
    return out->key != NULL ? 0 : topo_err_nomem(err, NULL);
}

int topo_podset_key_in_namespace(const char *key, const char *ns)
{
    size_t n = ns != NULL ? strlen(ns) : 0;
    return key != NULL && n > 0 && strncmp(key, ns, n) == 0 && key[n] == '/';
}

int topo_podset_key_is_request(const char *key)
{
    const char *slash = key != NULL ? strchr(key, '/') : NULL;
    return slash != NULL && strncmp(slash + 1, "request/", 8) == 0;
}

int topo_podset_key_is_single_pod(const char *key)
{
    const char *slash = key != NULL ? strchr(key, '/') : NULL;
    return slash != NULL &&
           (strncmp(slash + 1, "pod/", 4) == 0 || strncmp(slash + 1, "request/", 8) == 0);
}
