/* Kueue's vocabulary, in one place: the annotation and label names, how a
 * PodSet's annotations become the engine's topology request (with Kueue's
 * validation, word for word: pkg/controller/jobframework/tas_validation.go
 * and tas.go; docs/webhook.md "What happens to a pod", 2), Kubernetes label key/value syntax, topology
 * level lists, and Kueue's OwnedBySinglePod. Every reader of Kueue
 * annotations goes through here: topoassign's PodSet manifests, the
 * webhook's handler and ungater, the conformance case loader. */
#ifndef TOPO_KUEUE_H
#define TOPO_KUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/engine.h"
#include "topo/error.h"
#include "topo/kueue_names.h"
#include "topo/model.h"
#include "topo/pool.h"

/* 1 when the annotations carry one of the five annotations that make a pod
 * a TAS pod (required, preferred, unconstrained, slice-required, slice
 * constraints), as Kueue's utiltas.IsTAS counts them. */
int topo_kueue_has_topology_request(const topo_kv *annotations, size_t n);

/* 1 when the annotations carry any of Kueue's seven PodSet annotations: a
 * pod that does asks for TAS, even if only the group name or the slice
 * size is there (requests Kueue's validation always refuses). */
int topo_kueue_has_podset_annotation(const topo_kv *annotations, size_t n);

/* A PodSet's topology request from its annotations, as Kueue's webhook
 * validates it (ValidateTASPodSetRequest, then, only when that passes,
 * ValidateSliceSizeAnnotationUpperBound against ps->count) and its
 * podSetTopologyRequestBuilder builds it.
 *
 * meta_path is where the annotations sit in the object ("metadata" for a
 * Pod, "spec.template.metadata" for a Job): messages name the field as
 * Kueue does ("metadata.annotations[kueue.x-k8s.io/podset-slice-size]:
 * Invalid value: \"0\": must be greater than or equal to 1"), several
 * errors aggregated as Kubernetes does ("[e1, e2]").
 *
 * Sets required, preferred, unconstrained, slice_required, slice_size,
 * layers/nlayers and group of *ps (strings borrowed from the annotations or
 * allocated from pool); leaves every other field alone. Returns 0,
 * TOPO_EINVALID (ps unchanged), or TOPO_ENOMEM. */
int topo_kueue_podset_request(topo_podset_spec *ps, const topo_kv *annotations, size_t n,
                              const char *meta_path, topo_pool *pool,
                              topo_err *err) TOPO_MUST_CHECK;

/* The request's Kueue part as one canonical, readable text ("required
 * topology.topo.io/rack, slices of 4 in kubernetes.io/hostname, group g"),
 * from pool: two pods ask the same exactly when the texts are equal. NULL
 * when out of memory. */
const char *topo_kueue_request_text(const topo_podset_spec *ps, topo_pool *pool);

/* Label-key, label-value and DNS-1123 syntax: topo/labelsyntax.h. */

/* A Topology's levels as Kueue's CRD validates them: 1..TOPO_MAX_LEVELS
 * valid label keys, no duplicates, kubernetes.io/hostname only as the last.
 * 1 when valid; else 0 with the offending index in *out_bad (n when the
 * count is wrong; out_bad may be NULL) and the reason in why:
 * "invalid label key \"X\": <Kubernetes' message>", "duplicate level X",
 * "kubernetes.io/hostname must be the last level". */
int topo_kueue_levels_valid(const char *const *levels, size_t n, size_t *out_bad, char *why,
                            size_t why_size);

/* A comma-separated level list ("L1,L2,...", coarsest first, as --levels
 * takes it) split into pool strings and checked by topo_kueue_levels_valid.
 * TOPO_EINVALID: "level 2 is empty", "level 3: <why>", "17 levels
 * (expected 1..16)"; TOPO_ENOMEM. */
int topo_kueue_levels_parse(const char ***out, size_t *out_n, const char *csv, topo_pool *pool,
                            topo_err *err) TOPO_MUST_CHECK;

/* One owner reference of a Workload. */
typedef struct topo_kueue_owner {
    const char *api_version;
    const char *kind;
} topo_kueue_owner;

/* Kueue's workload.OwnedBySinglePod: exactly one owner reference, of kind
 * Pod and apiVersion v1, and the Workload is not a pod group's (annotation
 * kueue.x-k8s.io/is-group-workload: "true"). */
int topo_kueue_owned_by_single_pod(const topo_kueue_owner *owners, size_t nowners,
                                   const topo_kv *annotations, size_t nannotations);

#endif
