/* The cache filler: mirrors Nodes, Pods and Jobs from the Kubernetes API
 * into the SQLite topology cache (and, when given one, a live snapshot),
 * with the list+watch discipline of client-go's reflector: for each kind,
 * resume the watch from the resourceVersion the cache stored, or list
 * everything (paged) and replace the kind's rows; then watch, applying
 * events in batched transactions; on 410 Gone list again. One thread per
 * kind, one Kubernetes client each; writes to the cache are serialised. */
#ifndef TOPO_FILLER_H
#define TOPO_FILLER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/keyring.h"
#include "topo/live.h"
#include "topo/reflector.h"

#define TOPO_FILLER_NODES 1u
#define TOPO_FILLER_PODS 2u
#define TOPO_FILLER_JOBS 4u
#define TOPO_FILLER_ALL (TOPO_FILLER_NODES | TOPO_FILLER_PODS | TOPO_FILLER_JOBS)

/* Defaults of topo_filler_opts (plain literals: topoassign's help prints
 * them). */
#define TOPO_FILLER_COMMIT_MS_DEFAULT 100
#define TOPO_FILLER_BATCH_MAX_DEFAULT 4096
#define TOPO_FILLER_IDLE_MS_DEFAULT 500

/* A field left 0 (or NULL) gets the default named beside it. */
typedef struct topo_filler_opts {
    const char *db_path;    /* the cache file (created when missing), required */
    const char *kubeconfig; /* $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *context;    /* the kubeconfig's context; NULL: its current-context */
    /* A configuration already loaded, or NULL (then kubeconfig and context
     * are loaded): the clients share its exec credential cache with the
     * caller's (kubectl topo runs a plugin once per command). Must outlive
     * topo_filler_create (the clients copy it). */
    const struct topo_k8s_config *k8s_config;
    unsigned int kinds;     /* TOPO_FILLER_* bits; TOPO_FILLER_ALL */
    unsigned int page_size; /* list page; TOPO_K8S_PAGE_DEFAULT */
    double qps;             /* per kind's client; topo_k8s_opts' default */
    double burst;           /* topo_k8s_opts' default */
    long commit_ms;         /* a batch is committed at least this often;
                             * TOPO_FILLER_COMMIT_MS_DEFAULT */
    size_t batch_max;       /* and once it holds this many events;
                             * TOPO_FILLER_BATCH_MAX_DEFAULT */
    int once;               /* stop once every kind is synced and quiet */
    long idle_ms;           /* with once: the quiet time (rounded up to s);
                             * TOPO_FILLER_IDLE_MS_DEFAULT */
    topo_live *live;        /* also keep this live snapshot current, or NULL: every
                             * node, and every bound pod not finished as pod usage
                             * (reservations are the webhook's to add) */
    const atomic_int *stop; /* set (by any thread or a signal handler) to stop */
    /* More live snapshots to keep current (one per topology), like `live`:
     * every one gets every node and pod change, and each batch is published
     * to all of them; `live` (when set) counts as one more. NULL entries are
     * skipped, a snapshot given twice is fed once. The array is copied; the
     * snapshots must outlive the filler. */
    topo_live *const *lives;
    size_t nlives;
    /* The cache's record keys (topo_cache_opts.record_keys): pods' signed
     * reservation records are adopted. NULL: not. Copied. */
    const topo_keyring *record_keys;
} topo_filler_opts;

typedef struct topo_filler_stats {
    uint64_t listed[3];  /* objects listed, per kind (nodes, pods, jobs) */
    uint64_t relists;    /* full lists done */
    uint64_t resumed;    /* kinds whose watch resumed from a stored resourceVersion */
    uint64_t events;     /* watch events applied */
    uint64_t commits;
    uint64_t errors;     /* list/watch failures retried */
    /* Those failures per kind (nodes, pods, jobs) by topo_reflector_reason
     * (a 410 to a list among them: backed off, as a 5xx). */
    uint64_t failures[3][TOPO_REFLECTOR_REASONS];
    uint64_t rejected;   /* malformed objects skipped */
    uint64_t adopted;    /* reservations adopted from pods' records (record_keys) */
    uint64_t foreign_claims; /* reservation claims of pods not sealed for them, ignored */
} topo_filler_stats;

typedef struct topo_filler topo_filler;

int topo_filler_create(topo_filler **out, const topo_filler_opts *opts, topo_err *err);
void topo_filler_free(topo_filler *filler);

/* Runs until *opts->stop is set (or, with once, until synced and quiet).
 * Transient failures (connection, 5xx, 429, 410) are retried with backoff;
 * returns 0, or the first error that cannot be retried (configuration,
 * authorisation, the cache file) with its message. With once, a credential
 * that cannot be had (TOPO_EAUTH: an exec plugin failed) is not retried
 * either; a long-running filler retries it (the plugin's cache spaces its
 * runs). The last batch is committed before returning. */
int topo_filler_run(topo_filler *filler, topo_err *err);

void topo_filler_get_stats(topo_filler *filler, topo_filler_stats *out);

/* 1 once every enabled kind has finished its initial list, or resumed its
 * watch from the resourceVersion the cache stored (the cache then already
 * holds that state); else 0. A kind counts as resumed when its first watch
 * starts; if the server answers that watch with 410 Gone (the stored state
 * is too old), it counts as not synced again until its list completes.
 * Any thread, lock-free (for a /readyz probe); 0 before topo_filler_run. */
int topo_filler_synced(topo_filler *filler);

#endif
