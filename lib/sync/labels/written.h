/* What the label writer last wrote to each node (written.c), so that it
 * tells a fight by its own writes and not only by the record annotation,
 * which another writer can overwrite: two topo-sync instances with
 * different sources each rewrote the record, so each saw the other's write
 * as a change of plan and wrote back at once, for ever.
 *
 * Per node: a digest of the desired state last written (or found in
 * place), the node's uid included, and the node's resourceVersion as the
 * writer saw it just before that write. The rule (label_written_again):
 * the desired state is the one last written, and the node seen is newer
 * than the one that write was computed from: someone changed the node
 * after the write, so the diff now only undoes their change (a
 * reassertion, backed off). The same resourceVersion is the view not yet
 * showing the write (no one else's change). A new uid is a new node.
 *
 * Bounded: a node is forgotten when it is gone (404) or not visited in a
 * whole round (it left the plan or the cluster), and at most
 * LABEL_WRITTEN_MAX_NODES are remembered (past it a node's fights are told
 * by the record only). Pure: no clock, no I/O. */
#ifndef TOPO_LABELS_WRITTEN_H
#define TOPO_LABELS_WRITTEN_H

#include <stddef.h>

#include "topo/array.h"
#include "topo/labeldiff.h"
#include "topo/sha256.h"
#include "topo/strmap.h"

/* More nodes than a Kubernetes cluster supports (5,000 documented, tens of
 * thousands in practice), at about 150 bytes each. */
#define LABEL_WRITTEN_MAX_NODES 200000
/* resourceVersions are etcd revisions (decimal int64); a longer one is
 * not kept (the view is then never taken for stale). */
#define LABEL_WRITTEN_RV_MAX 63

typedef struct label_written_node {
    char *name;                            /* the index's key */
    char digest[TOPO_SHA256_HEX_LEN + 1];  /* label_written_digest of what was written */
    char rv_before[LABEL_WRITTEN_RV_MAX + 1]; /* "": unknown (found in place) */
    int visited;                           /* since the last forget_unvisited */
} label_written_node;

typedef struct label_written {
    topo_strmap *index; /* name -> position in nodes */
    TOPO_ARRAY(label_written_node) nodes;
    size_t max;         /* LABEL_WRITTEN_MAX_NODES (tests: fewer) */
} label_written;

/* max 0: LABEL_WRITTEN_MAX_NODES. 0 or TOPO_ENOMEM. */
int label_written_init(label_written *m, size_t max);
void label_written_dispose(label_written *m);

/* The digest of in's desired state (labels and annotations in the input's
 * order, values NULL told apart, the record key, authoritative) on the
 * node of uid (NULL: none). 0 or TOPO_ENOMEM. */
int label_written_digest(char out[TOPO_SHA256_HEX_LEN + 1], const topo_labeldiff_input *in,
                         const char *uid);

/* Whether a diff of node (seen at resourceVersion rv, NULL: unknown) for
 * the desired state of digest would undo someone else's change to what
 * this writer last wrote (the rule above). Marks the node visited. */
int label_written_again(label_written *m, const char *node, const char *digest, const char *rv);

/* The desired state of digest is on node now: written by a PATCH computed
 * from the node at rv_before (NULL: found in place, converged). 0, or
 * TOPO_ENOMEM; past max, nothing is remembered (0). */
int label_written_note(label_written *m, const char *node, const char *digest,
                       const char *rv_before);

/* Forgets node (deleted). */
void label_written_forget(label_written *m, const char *node);
/* Forgets the nodes not visited since the last call; returns how many. */
size_t label_written_forget_unvisited(label_written *m);
size_t label_written_count(const label_written *m);

#endif
