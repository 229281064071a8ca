/* Which gated PodSets a round of the ungater re-evaluates (docs/webhook.md
 * "Gated pods").
 *
 * Evaluating a PodSet costs a GET of its pod from the API server and an
 * engine pass under the placement lock; a backlog of PodSets that cannot fit
 * would pay that every round. A PodSet that did not fit is remembered with
 * the live snapshots' freed counter (topo_live_freed) as it was before the
 * evaluation. In a later round it is evaluated again only when
 *   - capacity may have come back since (the counter moved), and the cheap
 *     bound below does not rule it out; or
 *   - it has waited TOPO_UNGATER_RECHECK_MS since its last evaluation
 *     (what the live snapshots do not show: quotas, the bounds on reserved
 *     room), at most TOPO_UNGATER_RECHECKS_PER_ROUND of these per round.
 * The bound: a PodSet of n pods (the gated ones the cache shows: no more
 * than its size) each requesting r needs, in some topology, one domain of
 * its required level (else the whole cluster) with n * r free of every
 * requested resource and n free pod slots, and a node with r free: the
 * engine never places with less.
 *
 * The caller evaluates, whatever this says, PodSets it has never seen fail,
 * pod groups and PodSets holding a reservation (their pods claim slots).
 * One thread (the ungater's). */
#ifndef TOPO_WEBHOOK_UNGATER_SKIP_H
#define TOPO_WEBHOOK_UNGATER_SKIP_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/live.h"
#include "topo/model.h"

/* A PodSet that did not fit is evaluated again after this long even when
 * nothing the live snapshots show changed: what frees room also moves the
 * freed counter (pods ending free quota, reservations expiring free the
 * reserved-room bounds), so this is for what they cannot show, such as a
 * ResourceQuota edited. */
#define TOPO_UNGATER_RECHECK_MS 300000L
/* Of those, at most this many per round (oldest first): a backlog is
 * re-checked over several rounds, not in one long one (each costs a GET and
 * an engine pass). */
#define TOPO_UNGATER_RECHECKS_PER_ROUND 8

typedef struct wh_skip wh_skip;

/* lives: borrowed, must outlive the wh_skip (may be empty). */
int wh_skip_create(wh_skip **out, topo_live *const *lives, size_t nlives, topo_err *err);
void wh_skip_free(wh_skip *s);

/* What a gated PodSet needs, as the cache shows its pods. */
typedef struct wh_skip_need {
    const char *key;                /* the PodSet's key (its podset annotation) */
    const char *level;              /* its required level, NULL: none */
    const topo_resource *requests;  /* per pod */
    size_t nrequests;
    int64_t pods;                   /* gated pods seen (a lower bound of its size) */
} wh_skip_need;

typedef enum wh_skip_verdict {
    WH_SKIP_EVALUATE = 0, /* evaluate it this round */
    WH_SKIP_UNCHANGED,    /* failed, and no capacity came back since */
    WH_SKIP_NO_ROOM       /* capacity came back, but not enough for it anywhere */
} wh_skip_verdict;

/* Starts a round: reads the freed counters once; bounds are computed on the
 * first PodSet that needs them. */
void wh_skip_round_begin(wh_skip *s, int64_t now_ms);
/* The verdict for a PodSet; *freed gets the counters' sum to remember when
 * its evaluation finds it still does not fit. */
wh_skip_verdict wh_skip_check(wh_skip *s, const wh_skip_need *need, uint64_t *freed);
/* The PodSet did not fit at freed (read before its evaluation). */
int wh_skip_failed(wh_skip *s, const char *key, uint64_t freed, int64_t now_ms);
/* Ends a round: PodSets not looked at in it are forgotten (unless the round
 * was cut short: complete 0). */
void wh_skip_round_end(wh_skip *s, int complete);
/* PodSets remembered as not fitting. */
size_t wh_skip_remembered(const wh_skip *s);

#endif
