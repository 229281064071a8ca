/* The skip rules: which admission requests are topo's to place. */
#include <string.h>

#include "review_internal.h"
#include "topo/admission.h"
#include "topo/kueue.h"

int topo_admission_is_pod_create(const topo_admission_request *req)
{
    return req != NULL && req->has_pod && req->operation != NULL &&
           strcmp(req->operation, "CREATE") == 0 &&
           (req->sub_resource == NULL || req->sub_resource[0] == '\0');
}

int topo_admission_pod_has_node_name(const topo_admission_pod *pod)
{
    return pod->node_name != NULL && pod->node_name[0] != '\0';
}

int topo_admission_pod_is_mirror(const topo_admission_pod *pod)
{
    return topo_admission_kv_get(pod->annotations, pod->nannotations,
                                 TOPO_ADMISSION_MIRROR_ANNOTATION) != NULL;
}

int topo_admission_pod_is_kueue_managed(const topo_admission_pod *pod)
{
    if (pod->queue_name != NULL)
        return 1;
    for (size_t i = 0; i < pod->nscheduling_gates; i++)
        if (strcmp(pod->scheduling_gates[i], TOPO_KUEUE_TOPOLOGY_GATE) == 0)
            return 1;
    return 0;
}

int topo_admission_pod_has_topology(const topo_admission_pod *pod)
{
    return topo_kueue_has_podset_annotation(pod->annotations, pod->nannotations);
}

topo_admission_class topo_admission_classify(const topo_admission_request *req)
{
    const topo_admission_pod *pod = &req->pod;

    if (!adm_gvk_is_pod(&req->kind))
        return TOPO_ADMISSION_PASS_NOT_POD;
    if (!topo_admission_is_pod_create(req))
        return TOPO_ADMISSION_PASS_NOT_CREATE;
    if (topo_admission_pod_has_node_name(pod))
        return TOPO_ADMISSION_PASS_NODE_NAME;
    if (topo_admission_pod_is_mirror(pod))
        return TOPO_ADMISSION_PASS_MIRROR;
    if (topo_admission_pod_is_kueue_managed(pod))
        return TOPO_ADMISSION_PASS_KUEUE;
    if (!topo_admission_pod_has_topology(pod))
        return TOPO_ADMISSION_PASS_NO_TOPOLOGY;
    return TOPO_ADMISSION_TOPOLOGY_POD;
}

const char *topo_admission_class_name(topo_admission_class c)
{
    switch (c) {
    case TOPO_ADMISSION_TOPOLOGY_POD: return "topology-pod";
    case TOPO_ADMISSION_PASS_NOT_POD: return "not-pod";
    case TOPO_ADMISSION_PASS_NOT_CREATE: return "not-create";
    case TOPO_ADMISSION_PASS_NODE_NAME: return "node-name";
    case TOPO_ADMISSION_PASS_MIRROR: return "mirror";
    case TOPO_ADMISSION_PASS_KUEUE: return "kueue-managed";
    case TOPO_ADMISSION_PASS_NO_TOPOLOGY: return "no-topology";
    }
    return "unknown";
}

int topo_admission_pod_json_gated(const json_t *pod)
{
    const json_t *gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
    size_t i;
    const json_t *g;
    json_array_foreach(gates, i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name != NULL && strcmp(name, TOPO_ADMISSION_WAIT_GATE) == 0)
            return 1;
    }
    return 0;
}
