/* The changes topo-webhook makes to a Pod, as JSON Patch operations over
 * the Pod a review carried: its topology as nodeSelector entries and
 * annotations, and the scheduling gate of a Pod that waits. Pure. */
#ifndef TOPO_ADMISSION_PATCH_H
#define TOPO_ADMISSION_PATCH_H

#include <stddef.h>

#include "topo/admission_review.h"
#include "topo/error.h"
#include "topo/jsonpatch.h"
#include "topo/model.h"

/* Adds the operations that make pod carry every nodeSelector entry of
 * selector and every annotation of annotations:
 * - absent map: one "add" of the whole map; else one "add" per missing key;
 * - an annotation present with another value: "replace" (the annotations we
 *   set are ours to update);
 * - a nodeSelector key present with another value: TOPO_ECONFLICT naming the
 *   key and both values, and NOTHING is added (the pod pins that level
 *   elsewhere; a selector is never overwritten);
 * - entries already present with the same value: nothing (idempotent).
 * Keys of selector and annotations must be distinct within each list. */
int topo_admission_patch_pod(topo_jsonpatch *patch, const topo_admission_pod *pod,
                             const topo_kv *selector, size_t nselector,
                             const topo_kv *annotations, size_t nannotations,
                             topo_err *err) TOPO_MUST_CHECK;

/* Adds scheduling gate `gate`: creates spec.schedulingGates when absent, else
 * appends with "/spec/schedulingGates/-"; nothing when the pod has it. */
int topo_admission_patch_gate(topo_jsonpatch *patch, const topo_admission_pod *pod,
                              const char *gate, topo_err *err) TOPO_MUST_CHECK;

/* Removes scheduling gate TOPO_ADMISSION_WAIT_GATE (topo/admission.h) and
 * nothing else of the pod's gates: a "test" that the gate is at the index the
 * pod shows, then its "remove" (the gates before and after it keep their
 * order); then a "remove" of each of TOPO_ADMISSION_GATE_ANNOTATIONS the pod
 * carries. A pod without the gate gets no operation for it. One rule for
 * every release: the ungater's after placing, topoassign release's
 * unplaced. */
int topo_admission_patch_ungate(topo_jsonpatch *patch, const topo_admission_pod *pod,
                                topo_err *err) TOPO_MUST_CHECK;

/* Appends preferred node-affinity terms (spec.affinity.nodeAffinity.
 * preferredDuringSchedulingIgnoredDuringExecution), each {weight,
 * preference.matchExpressions}, after the pod's own: one "add" of the
 * first parent the pod lacks (pod->affinity_parents), else one "add" per
 * term at ".../-". Its required terms, anti-affinity and other preferences
 * stay as they are. TOPO_EINVALID for a key or value that is not UTF-8. */
int topo_admission_patch_preferred(topo_jsonpatch *patch, const topo_admission_pod *pod,
                                   const topo_preferred_term *terms, size_t n,
                                   topo_err *err) TOPO_MUST_CHECK;

#endif
