/* Which replica places a request (docs/webhook.md "Several replicas").
 *
 * The holder of Lease topo-webhook places; the ungater thread keeps the
 * Lease (ungater.h). A request reaching another replica is forwarded to the
 * holder (forward.h) and its answer relayed; when no holder can answer — none
 * holds the Lease, it cannot be reached, it let go meanwhile (421) — the
 * request is answered here without placing: the pod's no-fit policy, with
 * the reason (topo_admission_handle_unplaced). So two replicas never both
 * place, whatever the timing. Without leader election (one replica, a
 * static inventory) every request is placed here. Any thread. */
#ifndef TOPO_WEBHOOK_PLACER_H
#define TOPO_WEBHOOK_PLACER_H

#include <stddef.h>
#include <stdint.h>

#include "topo/admission.h"
#include "topo/error.h"

#include "placer_breaker.h"
#include "server.h"
#include "ungater.h"

typedef struct wh_placer wh_placer;

typedef struct wh_placer_opts {
    topo_admission_ctx *ctx;   /* borrowed, required */
    wh_ungater *ungater;     /* borrowed; NULL: this replica places everything */
    const char *peer_ca_file;  /* with an ungater: the placer's certificate's CA, or NULL
                                * (nothing is forwarded: the no-fit policy answers) */
    const char *peer_server_name; /* the name it carries */
    const char *identity;         /* this replica's Lease identity */
} wh_placer_opts;

int wh_placer_create(wh_placer **out, const wh_placer_opts *opts, topo_err *err);
void wh_placer_free(wh_placer *pl);

/* Answers one AdmissionReview (as topo_admission_handle_until).
 * forwarded_by: the WH_FORWARDED_PARAM of a forwarded request, else NULL:
 * a forwarded request is placed here or answered 421, never forwarded on.
 * phase (server.h): in WH_PHASE_NOW a request that would wait on the
 * network (a forward, a takeover settling) returns WH_HANDLE_DEFER instead;
 * WH_PHASE_DEFERRED does it, within the deadline and while the breaker lets
 * it (placer_breaker.h); WH_PHASE_SHED answers it at once by the no-fit
 * policy (no room left to wait), WH_PHASE_EXPIRED too (its deadline came
 * while it was queued: outcome deadline). The placer's answer is relayed
 * only when it is an AdmissionReview for the request's uid
 * (wh_forward_answer_ok); else outcome invalid, a failure for the breaker,
 * and the no-fit answer. */
int wh_placer_handle(wh_placer *pl, wh_phase phase, int64_t deadline_ns, const char *forwarded_by,
                     const char *body, size_t len, char **out_body, size_t *out_len,
                     int *out_status);

/* How forwarded requests ended, since start. */
typedef enum wh_forward_outcome {
    WH_FWD_ANSWERED = 0,  /* the placer answered */
    WH_FWD_NO_PLACER,     /* nobody holds the Lease, or its holder has no address */
    WH_FWD_UNREACHABLE,   /* no answer (refused, TLS, timeout) */
    WH_FWD_REFUSED,       /* the placer answered 421 (let go) or 5xx */
    WH_FWD_NOT_PLACER,    /* a forwarded request reached this replica, not the placer: 421 */
    WH_FWD_DEADLINE,      /* the placer did not answer in the request's time (or none was left) */
    WH_FWD_CIRCUIT_OPEN,  /* not asked: the breaker is open (placer_breaker.h) */
    WH_FWD_BUSY,          /* not asked: the defer pool was full */
    WH_FWD_INVALID,       /* the placer's 200 was not an AdmissionReview for this uid */
    WH_FWD_OUTCOMES
} wh_forward_outcome;

extern const char *const wh_forward_outcome_names[WH_FWD_OUTCOMES];

typedef struct wh_placer_stats {
    uint64_t forwarded[WH_FWD_OUTCOMES];
    uint64_t forward_us_sum; /* round trips of answered forwards */
    int circuit_open;        /* the breaker open or half-open */
    uint64_t circuit_openings;
} wh_placer_stats;

void wh_placer_get_stats(wh_placer *pl, wh_placer_stats *out);

#endif
