/* What one node's owned labels and annotations should become: the pure half
 * of topo-sync's label writer (the other half, topo/labelwriter.h, sends
 * it). No I/O, no clock.
 *
 * Input: the labels the plan wants on the node (every key owned), the
 * annotations topo-sync owns on it (a provenance annotation: key and value
 * are opaque here), whether the plan for this node is authoritative, and the
 * node as the API server has it (only metadata.name, .uid, .labels and
 * .annotations are read). Output: a JSON merge patch (RFC 7386)
 *
 *   {"metadata": {"labels": {"<changed or new>": "v", "<stale owned>": null},
 *                 "annotations": {...}}}
 *
 * naming only owned keys, or nothing when the node is converged; the list of
 * label changes; and the Event that tells what moved.
 *
 * The rules (docs/sync.md "How labels are written"):
 *   - Owned label keys are those under one of the owned prefixes (the whole
 *     prefix: topology.topo.io/ never owns topology.topo.io.evil/x), equal
 *     to one of the owned keys, or topograph's when asked. No other label
 *     and no annotation but the desired ones and the record is ever named
 *     in a patch; those annotations, and the record, lie under an owned
 *     prefix. An owned prefix or key that could reach another owner's
 *     labels (kubernetes.io/os) is refused, whoever the caller.
 *   - Authoritative: the node's owned labels become exactly the desired
 *     ones: changed and missing keys are set, owned keys not desired are
 *     removed (null). An empty desired set removes every owned label: the
 *     caller says so by passing it as authoritative.
 *   - Not authoritative (a node the plan left out, or whose sources are not
 *     all known right now): nothing is written, whatever the node carries
 *     (state HELD). A source's bad minute never wipes or half-changes a
 *     node's topology; its labels stay as they were until the plan for it
 *     is authoritative again.
 *   - The record: with record_key set, the annotation of that key holds
 *     what topo-sync last wrote ("k1=v1,k2=v2", keys sorted), and every
 *     patch that changes owned labels rewrites it. An owned label whose
 *     current value (or absence) differs from the record was changed by
 *     someone else: that change is drift. Drift is overwritten like any
 *     other difference (reasserted), and marked so that the writer counts
 *     and logs it and the Event is a Warning. Without a record on the node
 *     (first write, or record_key NULL) no difference counts as drift.
 *   - What the caller last wrote (same_as_last_write) outranks the record:
 *     another writer can rewrite the record, not the caller's memory. With
 *     it, every change is drift and the patch only undoes it.
 *   - Owned annotations with a NULL value are removed when present.
 *
 * Label keys are shown in messages without the first owned prefix ("leaf"
 * for topology.topo.io/leaf); keys under other prefixes, or owned by name,
 * are shown whole.
 *
 * Ownership: a topo_labeldiff borrows the strings of the node and the input
 * (keys and values in its changes point at them): keep both until
 * topo_labeldiff_free. Its patch is its own (borrowed by the caller). */
#ifndef TOPO_LABELDIFF_H
#define TOPO_LABELDIFF_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/types.h"

/* Where topo-sync records what it last wrote (an annotation). */
#define TOPO_LABELDIFF_RECORD_KEY_DEFAULT "topology.topo.io/applied-labels"
/* Event reasons: the plan moved a node's labels; topo-sync undid someone
 * else's change to them (drift). */
#define TOPO_LABELDIFF_REASON_CHANGED "TopologyLabelsChanged"
#define TOPO_LABELDIFF_REASON_REASSERTED "TopologyLabelsReasserted"
/* An Event's message is at most this many bytes (events.k8s.io's note
 * limit; core/v1 takes it too). */
#define TOPO_LABELDIFF_MESSAGE_MAX 1024
/* Most desired labels, and most owned annotations, for one node. */
#define TOPO_LABELDIFF_MAX_KEYS 64

/* Which label keys topo-sync owns (topo/labelowner.h has the rules).
 * Borrowed. Every prefix must be one topo may own
 * (topo_labelowner_prefix_valid: "topology.topo.io/"; never "t",
 * "kubernetes.io/" or "fabric.topograph.run/"), and so must every exact
 * key's prefix; topograph's keys are owned only through topograph. */
typedef struct topo_labeldiff_owned {
    const char *const *prefixes; /* "topology.topo.io/": keys under it (whole prefix) */
    size_t nprefixes;
    const char *const *keys;     /* exact keys ("example.com/rack") */
    size_t nkeys;
    int topograph;               /* also topograph's keys: topo_labelowner_topograph_key */
} topo_labeldiff_owned;

typedef struct topo_labeldiff_input {
    const topo_labeldiff_owned *owned; /* required: at least one prefix or key */
    /* Non-zero: labels is the node's whole owned set (see the rules). */
    int authoritative;
    const topo_kv *labels;             /* desired owned labels, each key owned */
    size_t nlabels;
    const topo_kv *annotations;        /* owned annotations; value NULL: absent */
    size_t nannotations;
    const char *record_key;            /* NULL: no record, no drift detection */
    /* Non-zero: the caller last wrote exactly these labels and annotations
     * to this node (topo-sync's writer remembers it, lib/sync/labels/written.h),
     * and the node changed since: every difference is someone else's
     * change (drift), whoever rewrote the record meanwhile. */
    int same_as_last_write;
} topo_labeldiff_input;

typedef enum topo_labeldiff_state {
    TOPO_LABELDIFF_CONVERGED = 0, /* nothing to write */
    TOPO_LABELDIFF_PATCH = 1,     /* topo_labeldiff_patch is to be sent */
    TOPO_LABELDIFF_HELD = 2       /* not authoritative: left as it is */
} topo_labeldiff_state;

/* One owned label that changes. */
typedef struct topo_labeldiff_change {
    const char *key;
    const char *old_value; /* NULL: the node does not carry it */
    const char *new_value; /* NULL: removed */
    int drift;             /* old_value is not what topo-sync last wrote */
} topo_labeldiff_change;

typedef struct topo_labeldiff topo_labeldiff;

/* Compares. TOPO_EINVALID naming the field for an owned prefix or key
 * topo may not own (labelowner.h); a desired label that is not owned, not
 * a valid label key or value, or given twice; an annotation key that is
 * not a valid key, not under an owned prefix, given twice, or equal to
 * record_key; a record_key not under an owned prefix; more than
 * TOPO_LABELDIFF_MAX_KEYS of either; a node without metadata.name, or whose
 * labels or annotations are not objects of strings. TOPO_ENOMEM. */
int topo_labeldiff_compute(topo_labeldiff **out, const topo_labeldiff_input *in,
                           const json_t *node, topo_err *err) TOPO_MUST_CHECK;
void topo_labeldiff_free(topo_labeldiff *d);

topo_labeldiff_state topo_labeldiff_state_of(const topo_labeldiff *d);
/* metadata.name, and metadata.uid (NULL when the node has none). */
const char *topo_labeldiff_node_name(const topo_labeldiff *d);
const char *topo_labeldiff_node_uid(const topo_labeldiff *d);

/* The merge patch when the state is TOPO_LABELDIFF_PATCH, else NULL.
 * Borrowed. */
const json_t *topo_labeldiff_patch(const topo_labeldiff *d);

/* The owned labels that change, desired keys first (in the input's order),
 * then removed keys (sorted). Empty when only annotations change. */
size_t topo_labeldiff_change_count(const topo_labeldiff *d);
const topo_labeldiff_change *topo_labeldiff_change_at(const topo_labeldiff *d, size_t i);
/* How many of them are drift. */
size_t topo_labeldiff_drift_count(const topo_labeldiff *d);
/* 1 when the patch only undoes drift: every change is drift and puts back
 * what the record says topo-sync last wrote, and no annotation changes (the
 * plan for the node is what it was); or, with same_as_last_write, any
 * patch (labels or annotations): it puts back what the caller last wrote.
 * 0 when the plan moved something: a write due at once. The writer backs
 * off the first kind only. */
int topo_labeldiff_reassert_only(const topo_labeldiff *d);
/* Whether the node carried any owned label before (0: its first labelling). */
int topo_labeldiff_had_owned(const topo_labeldiff *d);
/* Owned annotations (the record included) the patch sets or removes. */
size_t topo_labeldiff_annotation_count(const topo_labeldiff *d);

/* The Event for the label changes; NULL (all three) when no label changes.
 * Message: "leaf: lf1 → lf2, rack: (none) → r12" (at most
 * TOPO_LABELDIFF_MESSAGE_MAX bytes: what does not fit ends as ", and N
 * more"). Reason TOPO_LABELDIFF_REASON_REASSERTED and type "Warning" when
 * some change is drift, else TOPO_LABELDIFF_REASON_CHANGED and "Normal". */
const char *topo_labeldiff_message(const topo_labeldiff *d);
const char *topo_labeldiff_reason(const topo_labeldiff *d);
const char *topo_labeldiff_event_type(const topo_labeldiff *d);

/* 1 when owned (NULL-safe: 0) covers the label key: under one of its
 * prefixes (topo_labelowner_under), one of its keys, or topograph's. Whether
 * owned may own them is topo_labeldiff_compute's check, not this one's. */
int topo_labeldiff_owns(const topo_labeldiff_owned *owned, const char *key);

#endif
