/* The plan's exports kept in one ConfigMap (--export-configmap NS/NAME), for
 * consumers that read them from the cluster: Slurm's topology.conf in tree
 * form (`topology.conf`) and block form (`topology-block.conf`), Volcano's
 * HyperNodes (`volcano-hypernodes.yaml`) and Kueue's objects (`kueue.yaml`).
 * An export the plan cannot give (the tree form without a leaf level, the
 * block form without NVLink domains, Kueue without flavor labels or a
 * datacenter level) is left out of the data.
 *
 * Ownership (owned.h): created with the label app.kubernetes.io/managed-by:
 * topo-sync; an existing ConfigMap without it belongs to someone else and is
 * never written (refused, with the way out in the error). In an owned one
 * only topo's four keys are set or removed (a key whose export the plan no
 * longer gives goes), every other key and all metadata kept: read, changed,
 * written back under the read resourceVersion, read again after a 409.
 * Never deleted. */
#ifndef TOPO_SYNC_CONFIGMAP_H
#define TOPO_SYNC_CONFIGMAP_H

#include "topo/error.h"
#include "topo/export.h"
#include "topo/k8s.h"
#include "topo/plan.h"

/* A ConfigMap's data may hold at most 1 MiB (the API server's limit). */
#define SYNC_CONFIGMAP_MAX_DATA (1024 * 1024)

typedef enum ctl_configmap_outcome {
    SYNC_CONFIGMAP_UNCHANGED,
    SYNC_CONFIGMAP_CREATED,
    SYNC_CONFIGMAP_UPDATED,
    SYNC_CONFIGMAP_NOT_OWNED, /* refused: it exists without the marker */
    SYNC_CONFIGMAP_FAILED     /* any other error */
} ctl_configmap_outcome;

/* ref: "namespace/name". dry_run: logs what it would do (and refuses a
 * ConfigMap it does not own all the same). 0; TOPO_EFORBIDDEN (outcome
 * SYNC_CONFIGMAP_NOT_OWNED) for another owner's ConfigMap; TOPO_EINVALID (a
 * bad ref, data over SYNC_CONFIGMAP_MAX_DATA, a reply without
 * resourceVersion or with a data that is no object); TOPO_ECONFLICT after
 * CONFIGMAP_ATTEMPTS reads met other writers; or the API's error. */
int ctl_configmap_apply(topo_k8s *k, const char *ref, const topo_plan *plan,
                         const topo_export_kueue_opts *kueue, int dry_run,
                         ctl_configmap_outcome *outcome, topo_err *err);

#endif
