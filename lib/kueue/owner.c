/* Kueue's workload.OwnedBySinglePod (pkg/workload/workload.go): a Workload
 * that cannot outlive its one pod. Pod-group Workloads are excluded: a group
 * of one also has a single Pod owner, yet takes replacement pods. */
#include "topo/kueue.h"

#include <string.h>

int topo_kueue_owned_by_single_pod(const topo_kueue_owner *owners, size_t nowners,
                                   const topo_kv *annotations, size_t nannotations)
{
    if (nowners != 1)
        return 0;
    for (size_t i = 0; i < nannotations; i++)
        if (annotations[i].key != NULL &&
            strcmp(annotations[i].key, TOPO_KUEUE_IS_GROUP_WORKLOAD) == 0 &&
            annotations[i].value != NULL &&
            strcmp(annotations[i].value, TOPO_KUEUE_IS_GROUP_WORKLOAD_TRUE) == 0)
            return 0;
    return owners[0].kind != NULL && strcmp(owners[0].kind, "Pod") == 0 &&
           owners[0].api_version != NULL && strcmp(owners[0].api_version, "v1") == 0;
}
