/* Kueue's names: the annotations and labels it reads and writes, and topo's
 * own PodSet-size annotation. Constants only, so that a decoder below the
 * Kueue layer (lib/codec's TAS-pod test) can name them; what they mean and
 * how they are validated is topo/kueue.h. */
#ifndef TOPO_KUEUE_NAMES_H
#define TOPO_KUEUE_NAMES_H

/* PodSet (pod template) annotations. */
#define TOPO_KUEUE_REQUIRED_TOPOLOGY "kueue.x-k8s.io/podset-required-topology"
#define TOPO_KUEUE_PREFERRED_TOPOLOGY "kueue.x-k8s.io/podset-preferred-topology"
#define TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY "kueue.x-k8s.io/podset-unconstrained-topology"
#define TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY "kueue.x-k8s.io/podset-slice-required-topology"
#define TOPO_KUEUE_SLICE_SIZE "kueue.x-k8s.io/podset-slice-size"
#define TOPO_KUEUE_SLICE_CONSTRAINTS "kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define TOPO_KUEUE_GROUP_NAME "kueue.x-k8s.io/podset-group-name"

/* Pod groups (the plain-Pod integration). */
#define TOPO_KUEUE_POD_GROUP_NAME "kueue.x-k8s.io/pod-group-name" /* label or annotation */
#define TOPO_KUEUE_POD_GROUP_TOTAL_COUNT "kueue.x-k8s.io/pod-group-total-count"
/* On a Workload made for a pod group (podconstants.IsGroupWorkloadAnnotation*). */
#define TOPO_KUEUE_IS_GROUP_WORKLOAD "kueue.x-k8s.io/is-group-workload"
#define TOPO_KUEUE_IS_GROUP_WORKLOAD_TRUE "true"

/* Pods Kueue manages itself, and its own scheduling gate. */
#define TOPO_KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define TOPO_KUEUE_TOPOLOGY_GATE "kueue.x-k8s.io/topology"

/* The node label Kubernetes sets; the one spelling of it in the tree (every
 * layer may include this header: it holds constants only). */
#define TOPO_KUEUE_HOSTNAME_LABEL "kubernetes.io/hostname"

/* topo's own: the size of a PodSet whose owner the webhook cannot read
 * (and of a Pod manifest given to topoassign). */
#define TOPO_PODSET_SIZE_ANNOTATION "topology.topo.io/podset-size"

/* The five annotations that make a pod a TAS pod (Kueue's utiltas.IsTAS),
 * as an initializer for a NULL-ended list: the JSON reader of stored pods
 * (lib/codec, below this module) and topo_kueue_has_topology_request share
 * it. */
#define TOPO_KUEUE_TAS_ANNOTATIONS                                                        \
    {TOPO_KUEUE_REQUIRED_TOPOLOGY, TOPO_KUEUE_PREFERRED_TOPOLOGY,                          \
     TOPO_KUEUE_UNCONSTRAINED_TOPOLOGY, TOPO_KUEUE_SLICE_REQUIRED_TOPOLOGY,               \
     TOPO_KUEUE_SLICE_CONSTRAINTS, NULL}

#endif
