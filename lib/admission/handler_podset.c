/* Which PodSet a pod belongs to (its key: codec podset_key.h, shared with
 * the cache's slot binding), how many pods it has and which one this is
 * (docs/webhook.md "What happens to a pod", 4): Kueue pod groups, JobSet replicated jobs,
 * LeaderWorkerSet groups, Job pods, an explicit podset-size annotation,
 * else the pod alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_internal.h"
#include "topo/admission_review.h"
#include "topo/count.h"
#include "topo/kueue.h"
#include "topo/limits.h"
#include "topo/podset_key.h"

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

int adm_podset_identify(topo_podset_id *id, const topo_admission_pod *pod, const char *request_ns,
                        const char *request_uid, const char *pod_uid, topo_cache *cache,
                        topo_pool *pool, topo_err *err)
{
    const topo_admission_owner *owner = controller_owner(pod);
    /* The key as the cache derives it again to bind the pod's slot
     * (podset_key.h): one derivation, so the two cannot disagree. */
    topo_podset_pod in = {
        .namespace_name = nonempty(pod->namespace_) ? pod->namespace_
                          : request_ns != NULL      ? request_ns
                                                    : "",
        .name = pod->name,
        .generate_name = pod->generate_name,
        .labels = pod->labels,
        .nlabels = pod->nlabels,
        .annotations = pod->annotations,
        .nannotations = pod->nannotations,
        .owner_uid = owner != NULL ? owner->uid : NULL,
        .request_uid = request_uid,
    };
    topo_podset_key k;
    int64_t size, n = 0;
    int rc;

    memset(id, 0, sizeof(*id));
    if ((rc = topo_podset_key_derive(&k, &in, pool, err)) < 0)
        return rc;
    id->key = k.key;
    id->rank = k.index;
    size = k.explicit_size > 0 ? k.explicit_size : 1;
    switch (k.kind) {
    case TOPO_PODSET_POD_GROUP:
        id->group = 1;
        /* Each pod of a group reads the group back while it waits: bounded. */
        if (pod->pod_group_total_count != NULL &&
            (rc = topo_parse_count(&size, pod->pod_group_total_count,
                                   "annotation " TOPO_KUEUE_POD_GROUP_TOTAL_COUNT, 1,
                                   TOPO_MAX_POD_GROUP_COUNT, err)) < 0)
            return rc;
        if (size > TOPO_MAX_POD_GROUP_COUNT)
            return topo_err_set(err, TOPO_EINVALID, "pod group of %lld pods: at most %d",
                                (long long)size, TOPO_MAX_POD_GROUP_COUNT);
        break;
    case TOPO_PODSET_JOBSET: {
        /* Kueue: one PodSet per replicated job, replicas x parallelism pods,
         * ranked job by job. */
        int64_t par = job_parallelism(cache, pod->controller_uid, pool);
        if (k.explicit_size == 0 && par == 0)
            id->warning =
                topo_pool_printf(pool,
                                 "Job of JobSet %s not in the cache yet: PodSet sized %lld "
                                 "(one pod per job)",
                                 topo_admission_kv_get(pod->labels, pod->nlabels,
                                                       "jobset.sigs.k8s.io/jobset-name"),
                                 (long long)k.replicas);
        if (par == 0)
            par = 1;
        size = k.explicit_size > 0 ? k.explicit_size : k.replicas * par;
        if (id->rank >= 0)
            id->rank += k.job_index * par;
        break;
    }
    case TOPO_PODSET_LWS_LEADER:
        /* Kueue: each group is a workload of two PodSets, the leader and
         * its size-1 workers. */
        size = 1;
        id->rank = 0;
        break;
    case TOPO_PODSET_LWS_WORKERS:
        size = k.lws_size > 1 ? k.lws_size - 1 : 1;
        id->rank = k.worker - 1;
        break;
    case TOPO_PODSET_JOB:
        if (k.explicit_size == 0) {
            n = job_parallelism(cache, pod->controller_uid, pool);
            if (n > 0)
                size = n;
            else
                id->warning = topo_pool_printf(
                    pool,
                    "Job %s not in the cache yet: PodSet sized 1 (set "
                    "annotation " TOPO_PODSET_SIZE_ANNOTATION ")",
                    pod->job_name ? pod->job_name : pod->controller_uid);
        }
        break;
    default:
        break;
    }
    id->size = (int32_t)(size > TOPO_MAX_PODSET_COUNT ? TOPO_MAX_PODSET_COUNT : size);
    /* An index beyond the PodSet (an Indexed Job with completions >
     * parallelism) takes whichever slot a finished pod left. */
    if (id->rank >= id->size)
        id->rank = -1;

    if (nonempty(pod_uid))
        id->claimant = topo_pool_strdup(pool, pod_uid);
    else if (id->rank >= 0)
        id->claimant =
            topo_pool_printf(pool, TOPO_CACHE_CLAIMANT_PREFIX "rank/%lld", (long long)id->rank);
    else if (nonempty(pod->name))
        id->claimant = topo_pool_printf(pool, TOPO_CACHE_CLAIMANT_PREFIX "pod/%s", pod->name);
    else
        id->claimant = topo_pool_printf(pool, TOPO_CACHE_CLAIMANT_PREFIX "request/%s",
                                         request_uid ? request_uid : "");
    if (id->key == NULL || id->claimant == NULL)
        return topo_err_nomem(err, NULL);
    return 0;
}

void adm_pod_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count)
{
    memset(ps, 0, sizeof(*ps));
    ps->name = "main";
    ps->count = count;
    ps->requests = pod->requests;
    ps->nrequests = pod->nrequests;
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
}

/* The PodSet's request: Kueue's annotations as lib/kueue reads and
 * validates them for every path (topoassign, the ungater, the case loader),
 * and the pod's own shape. TOPO_EINVALID carries Kueue's message. */
int adm_podset_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count,
                    topo_pool *pool, topo_err *err)
{
    adm_pod_spec(ps, pod, count);
    return topo_kueue_podset_request(ps, pod->annotations, pod->nannotations, "metadata", pool,
                                     err);
}
