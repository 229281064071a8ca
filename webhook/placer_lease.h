/* The placer's Lease (docs/webhook.md "Several replicas"): which replica
 * places, as this replica sees it.
 *
 * The replicas compete for one Lease (lib/net/leader.c); its holder is the
 * placer: it makes every placement and slot claim and runs the ungater's
 * rounds. The ungater thread steps the election (wh_placer_lease_step, every
 * retry period) and releases the Lease when it stops; placer.c asks, from
 * any thread, who places now (wh_placer_lease_state). A replica that takes
 * the Lease over from another settles first (TOPO_UNGATER_SETTLE_MS_DEFAULT)
 * and gives admission the Lease's term before anything is placed under it.
 * Without leader election this replica always places. */
#ifndef TOPO_WEBHOOK_PLACER_LEASE_H
#define TOPO_WEBHOOK_PLACER_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/admission.h"
#include "topo/error.h"
#include "topo/k8s.h"

/* The Lease the replicas compete for unless told another (--lease-name). */
#define TOPO_UNGATER_LEASE_NAME "topo-webhook"
/* After taking the Lease, the placer waits this long before it places:
 * pods the previous placer admitted just before it let go reach the API
 * server and this replica's watch (which adopts their reservations) first. */
#define TOPO_UNGATER_SETTLE_MS_DEFAULT 2000L

typedef struct wh_placer_lease wh_placer_lease;

typedef struct wh_placer_lease_opts {
    /* The configuration the elector's own client is made from (borrowed;
     * only with leader_election and no backend). */
    const topo_k8s_config *k8s_config;
    const topo_k8s_opts *k8s_opts;    /* that client's options (NULL: the defaults) */
    topo_admission_ctx *ctx;          /* told the Lease's term (borrowed); NULL: none */
    const char *lease_namespace;      /* NULL: the client's namespace, else "default" */
    const char *lease_name;           /* NULL: TOPO_UNGATER_LEASE_NAME */
    const char *identity;             /* NULL: <hostname>_<pid> */
    int leader_election;              /* 0: this replica always places (one replica) */
    long lease_ms, renew_deadline_ms, retry_ms; /* 0: client-go's defaults (topo/k8s.h) */
    long settle_ms;                   /* 0: TOPO_UNGATER_SETTLE_MS_DEFAULT */
    const topo_leader_backend *backend; /* NULL: the API server (tests: in memory) */
} wh_placer_lease_opts;

/* Strings are copied. Creates the elector (and its client) with leader
 * election; starts nothing. */
int wh_placer_lease_create(wh_placer_lease **out, const wh_placer_lease_opts *opts,
                           topo_err *err) TOPO_MUST_CHECK;
/* NULL-safe. Does not release the Lease (wh_placer_lease_release). */
void wh_placer_lease_free(wh_placer_lease *pl);

/* One election step when due (every retry period), then whether this
 * replica leads now; while it does, admission gets the Lease's term. Logs
 * "leading"/"not leading" on changes. The stepping thread only. */
int wh_placer_lease_step(wh_placer_lease *pl);
/* When the next election step is due (topo_clock_ms); INT64_MAX without
 * leader election. The stepping thread only. */
int64_t wh_placer_lease_next_step_ms(const wh_placer_lease *pl);
/* Gives the Lease up (when held) and stops leading: once, when the
 * stepping thread stops for good. */
void wh_placer_lease_release(wh_placer_lease *pl);

/* Whether this replica places at now_ms: it leads and a takeover has
 * settled. Any thread. */
int wh_placer_lease_placing(wh_placer_lease *pl, int64_t now_ms);
/* The identity Events carry (reportingInstance): the elector's, or the
 * identity given (NULL without one and without leader election). */
const char *wh_placer_lease_identity(const wh_placer_lease *pl);
/* The Lease's name. */
const char *wh_placer_lease_name(const wh_placer_lease *pl);

/* Who places now, as this replica sees it (wh_placer_lease_state). */
typedef enum wh_ungater_placer_state {
    TOPO_UNGATER_PLACER_SELF = 0,     /* this replica (or no leader election) */
    TOPO_UNGATER_PLACER_SETTLING = 1, /* this replica, from in *wait_ms */
    TOPO_UNGATER_PLACER_OTHER = 2,    /* the Lease's holder, copied into holder */
    TOPO_UNGATER_PLACER_NONE = 3      /* nobody holds the Lease (or not read yet) */
} wh_ungater_placer_state;

/* Whether wh_placer_lease_state knows who places: without leader election
 * at once, else once this replica has read (or written) the Lease. Until
 * then it says PLACER_NONE although a placer may exist. Any thread. */
int wh_placer_lease_known(wh_placer_lease *pl);

/* Any thread. holder (size bytes, may be NULL with 0) gets the holder's
 * identity for OTHER; *wait_ms (may be NULL) what is left of SETTLING. */
wh_ungater_placer_state wh_placer_lease_state(wh_placer_lease *pl, char *holder, size_t size,
                                                long *wait_ms);

typedef struct wh_placer_lease_stats {
    int leader;             /* this replica leads now */
    uint64_t takeovers;     /* times this replica took the Lease */
    int64_t last_settle_ms; /* how long the last takeover waited before placing */
} wh_placer_lease_stats;

/* Thread-safe snapshot. */
void wh_placer_lease_get_stats(wh_placer_lease *pl, wh_placer_lease_stats *out);

#endif
