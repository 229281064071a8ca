/* Which PodSet a pod belongs to, how many pods it has and which one this is
 * (DESIGN.md "topo-webhook" 3): Kueue pod groups, JobSet replicated jobs,
 * LeaderWorkerSet groups, Job pods, an explicit podset-size annotation,
 * else the pod alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission_internal.h"
#include "topo/admission_review.h"
#include "topo/kueue.h"
#include "topo/limits.h"

#define JOBSET_NAME "jobset.sigs.k8s.io/jobset-name"
#define JOBSET_RJOB "jobset.sigs.k8s.io/replicatedjob-name"
#define JOBSET_REPLICAS "jobset.sigs.k8s.io/replicatedjob-replicas"
#define JOBSET_JOB_INDEX "jobset.sigs.k8s.io/job-index"
#define LWS_NAME "leaderworkerset.sigs.k8s.io/name"
#define LWS_GROUP "leaderworkerset.sigs.k8s.io/group-index"
#define LWS_WORKER "leaderworkerset.sigs.k8s.io/worker-index"
#define LWS_SIZE "leaderworkerset.sigs.k8s.io/size"

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static const topo_admission_owner *controller_owner(const topo_admission_pod *pod)
{
    for (size_t i = 0; i < pod->nowners; i++)
        if (pod->owners[i].controller && nonempty(pod->owners[i].uid))
            return &pod->owners[i];
    return NULL;
}

/* A count from a label or annotation: absent → dflt; malformed or outside
 * min..TOPO_MAX_PODSET_COUNT → TOPO_EINVALID naming it. */
static int read_count(int64_t *out, const char *value, const char *name, int64_t min,
                      int64_t dflt, topo_err *err)
{
    if (value == NULL) {
        *out = dflt;
        return 0;
    }
    return topo_kueue_parse_count(out, value, name, min, TOPO_MAX_PODSET_COUNT, err);
}

/* The Job's pods running at once (Kueue's PodSet count for a Job): its
 * parallelism, capped by completions when set; 0 when the cache does not
 * have the Job (yet). */
static int64_t job_parallelism(topo_cache *cache, const char *uid, topo_pool *pool)
{
    topo_cache_job job;
    if (cache == NULL || !nonempty(uid) ||
        topo_cache_get_job(&job, cache, uid, pool, NULL) != 0)
        return 0;
    int64_t n = job.parallelism;
    if (job.completions >= 0 && job.completions < n)
        n = job.completions;
    return n > 0 ? n : 0;
}

int topo_admission_podset_identify(topo_podset_id *id, const topo_admission_pod *pod,
                                   const char *request_ns, const char *request_uid,
                                   const char *pod_uid, topo_cache *cache, topo_pool *pool,
                                   topo_err *err)
{
    const topo_kv *l = pod->labels, *a = pod->annotations;
    size_t nl = pod->nlabels, na = pod->nannotations;
    const char *ns = nonempty(pod->namespace_) ? pod->namespace_
                     : request_ns != NULL      ? request_ns
                                               : "";
    int64_t explicit_size = 0, n = 0;
    int rc;

    memset(id, 0, sizeof(*id));
    if ((rc = read_count(&explicit_size, pod->podset_size,
                         "annotation " TOPO_PODSET_SIZE_ANNOTATION, 1, 0, err)) < 0 ||
        (rc = read_count(&id->rank, pod->job_completion_index,
                         "batch.kubernetes.io/job-completion-index", 0, -1, err)) < 0)
        return rc;
    const topo_admission_owner *owner = controller_owner(pod);
    int64_t size = explicit_size > 0 ? explicit_size : 1;
    const char *jobset = topo_admission_kv_get(l, nl, JOBSET_NAME);
    const char *rjob = topo_admission_kv_get(l, nl, JOBSET_RJOB);
    const char *lws = topo_admission_kv_get(l, nl, LWS_NAME);
    const char *lws_group = topo_admission_kv_get(l, nl, LWS_GROUP);
    const char *job = nonempty(pod->controller_uid) ? pod->controller_uid : pod->job_name;

    if (nonempty(pod->pod_group_name)) {
        id->key = topo_pool_printf(pool, "%s/pod-group/%s", ns, pod->pod_group_name);
        id->group = 1;
        /* Each pod of a group reads the group back while it waits: bounded. */
        if (pod->pod_group_total_count != NULL &&
            (rc = topo_kueue_parse_count(&size, pod->pod_group_total_count,
                                         "annotation " TOPO_KUEUE_POD_GROUP_TOTAL_COUNT, 1,
                                         TOPO_MAX_POD_GROUP_COUNT, err)) < 0)
            return rc;
        if (size > TOPO_MAX_POD_GROUP_COUNT)
            return topo_err_set(err, TOPO_EINVALID, "pod group of %lld pods: at most %d",
                                (long long)size, TOPO_MAX_POD_GROUP_COUNT);
    } else if (nonempty(jobset) && nonempty(rjob)) {
        /* Kueue: one PodSet per replicated job, replicas x parallelism pods,
         * ranked job by job. */
        int64_t replicas = 1, job_index = 0;
        if ((rc = read_count(&replicas, topo_admission_kv_get(l, nl, JOBSET_REPLICAS),
                             "label " JOBSET_REPLICAS, 1, 1, err)) < 0 ||
            (rc = read_count(&job_index, topo_admission_kv_get(l, nl, JOBSET_JOB_INDEX),
                             "label " JOBSET_JOB_INDEX, 0, 0, err)) < 0)
            return rc;
        id->key = topo_pool_printf(pool, "%s/jobset/%s/%s", ns, jobset, rjob);
        int64_t par = job_parallelism(cache, pod->controller_uid, pool);
        if (explicit_size == 0 && par == 0)
            id->warning =
                topo_pool_printf(pool,
                                 "Job of JobSet %s not in the cache yet: PodSet sized %lld "
                                 "(one pod per job)",
                                 jobset, (long long)replicas);
        if (par == 0)
            par = 1;
        size = explicit_size > 0 ? explicit_size : replicas * par;
        if (id->rank >= 0)
            id->rank += job_index * par;
    } else if (nonempty(lws) && nonempty(lws_group)) {
        /* Kueue: each group is a workload of two PodSets, the leader and
         * its size-1 workers. */
        int64_t lsize = 1, worker = 0;
        if ((rc = read_count(&lsize, topo_admission_kv_get(a, na, LWS_SIZE),
                             "annotation " LWS_SIZE, 1, 1, err)) < 0 ||
            (rc = read_count(&worker, topo_admission_kv_get(l, nl, LWS_WORKER),
                             "label " LWS_WORKER, 0, 0, err)) < 0)
            return rc;
        if (worker == 0) {
            id->key = topo_pool_printf(pool, "%s/lws/%s/%s/leader", ns, lws, lws_group);
            size = 1;
            id->rank = 0;
        } else {
            id->key = topo_pool_printf(pool, "%s/lws/%s/%s/workers", ns, lws, lws_group);
            size = lsize > 1 ? lsize - 1 : 1;
            id->rank = worker - 1;
        }
    } else if (nonempty(job)) {
        id->key = topo_pool_printf(pool, "%s/job/%s", ns, job);
        if (explicit_size == 0) {
            n = job_parallelism(cache, pod->controller_uid, pool);
            if (n > 0)
                size = n;
            else
                id->warning =
                    topo_pool_printf(pool,
                                     "Job %s not in the cache yet: PodSet sized 1 (set "
                                     "annotation " TOPO_PODSET_SIZE_ANNOTATION ")",
                                     pod->job_name ? pod->job_name : job);
        }
    } else if (explicit_size > 0 && owner != NULL) {
        id->key = topo_pool_printf(pool, "%s/owner/%s", ns, owner->uid);
    } else if (explicit_size > 0 && nonempty(pod->generate_name)) {
        id->key = topo_pool_printf(pool, "%s/generate-name/%s", ns, pod->generate_name);
    } else if (nonempty(pod->name)) {
        id->key = topo_pool_printf(pool, "%s/pod/%s", ns, pod->name);
    } else if (owner != NULL && id->rank >= 0) {
        id->key = topo_pool_printf(pool, "%s/owner/%s/%lld", ns, owner->uid, (long long)id->rank);
    } else {
        /* a generateName pod with nothing else: only this request names it */
        id->key = topo_pool_printf(pool, "%s/request/%s", ns, request_uid ? request_uid : "");
    }
    id->size = (int32_t)(size > TOPO_MAX_PODSET_COUNT ? TOPO_MAX_PODSET_COUNT : size);
    /* An index beyond the PodSet (an Indexed Job with completions >
     * parallelism) takes whichever slot a finished pod left. */
    if (id->rank >= id->size)
        id->rank = -1;

    if (nonempty(pod_uid))
        id->claimant = topo_pool_strdup(pool, pod_uid);
    else if (id->rank >= 0)
        id->claimant = topo_pool_printf(pool, "claim:rank/%lld", (long long)id->rank);
    else if (nonempty(pod->name))
        id->claimant = topo_pool_printf(pool, "claim:pod/%s", pod->name);
    else
        id->claimant = topo_pool_printf(pool, "claim:request/%s", request_uid ? request_uid : "");
    if (id->key == NULL || id->claimant == NULL)
        return topo_err_nomem(err, NULL);
    return 0;
}

/* The PodSet's request: Kueue's annotations as lib/kueue reads and
 * validates them for every path (topoassign, the ungater, the case loader),
 * and the pod's own shape. TOPO_EINVALID carries Kueue's message. */
int topo_admission_podset_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count,
                               topo_pool *pool, topo_err *err)
{
    memset(ps, 0, sizeof(*ps));
    ps->name = "main";
    ps->count = count;
    ps->requests = pod->requests;
    ps->nrequests = pod->nrequests;
    int rc = topo_kueue_podset_request(ps, pod->annotations, pod->nannotations, "metadata", pool,
                                       err);
    if (rc < 0)
        return rc;
    ps->node_selector = pod->node_selector;
    ps->nnode_selector = pod->nnode_selector;
    /* Kueue TAS filters nodes by taints and required node affinity too (and
     * scores preferred terms behind TASRespectNodeAffinityPreferred): a
     * placement ignoring them would send pods where they cannot run. */
    ps->tolerations = pod->tolerations;
    ps->ntolerations = pod->ntolerations;
    ps->required_terms = pod->required_terms;
    ps->nrequired_terms = pod->nrequired_terms;
    ps->preferred_terms = pod->preferred_terms;
    ps->npreferred_terms = pod->npreferred_terms;
    return 0;
}

