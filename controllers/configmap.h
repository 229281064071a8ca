/* The plan's exports kept in one ConfigMap (--export-configmap NS/NAME), for
 * consumers that read them from the cluster: Slurm's topology.conf in tree
 * form (`topology.conf`) and block form (`topology-block.conf`), Volcano's
 * HyperNodes (`volcano-hypernodes.yaml`) and Kueue's objects (`kueue.yaml`).
 * An export the plan cannot give (the tree form without a leaf level, the
 * block form without NVLink domains, Kueue without flavor labels or a
 * datacenter level) is left out of the data. Created when absent, updated
 * when the data differ (its other metadata kept), never deleted. */
#ifndef TOPO_SYNC_CONFIGMAP_H
#define TOPO_SYNC_CONFIGMAP_H

#include "topo/error.h"
#include "topo/export.h"
#include "topo/k8s.h"
#include "topo/plan.h"

/* A ConfigMap's data may hold at most 1 MiB (the API server's limit). */
#define SYNC_CONFIGMAP_MAX_DATA (1024 * 1024)

typedef enum sync_configmap_outcome {
    SYNC_CONFIGMAP_UNCHANGED,
    SYNC_CONFIGMAP_CREATED,
    SYNC_CONFIGMAP_UPDATED
} sync_configmap_outcome;

/* ref: "namespace/name". dry_run: logs what it would do. 0, TOPO_EINVALID
 * (a bad ref, data over SYNC_CONFIGMAP_MAX_DATA), or the API's error. */
int sync_configmap_apply(topo_k8s *k, const char *ref, const topo_plan *plan,
                         const topo_export_kueue_opts *kueue, int dry_run,
                         sync_configmap_outcome *outcome, topo_err *err);

#endif
