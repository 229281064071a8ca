/* Which API objects topo-sync owns: the ones it created, marked with the
 * label app.kubernetes.io/managed-by: topo-sync (the export ConfigMap,
 * Kueue's Topology and ResourceFlavors). An object of the same name without
 * the marker belongs to someone else (kube-system/coredns named by mistake
 * in --export-configmap), and topo-sync never writes it. The one place that
 * says what the marker is and how it is read. */
#ifndef TOPO_SYNC_OWNED_H
#define TOPO_SYNC_OWNED_H

#include <jansson.h>

#define SYNC_OWNED_LABEL "app.kubernetes.io/managed-by"
#define SYNC_OWNED_VALUE "topo-sync"

/* 1 when obj's metadata.labels carry the marker, else 0 (a NULL obj, no
 * metadata or labels, another value). */
int ctl_owned(const json_t *obj);

/* Puts the marker in obj's metadata.labels (made when absent), other labels
 * kept. 0, or -1 when obj is no object or out of memory. */
int ctl_owned_mark(json_t *obj);

#endif
