/* Which replica places a request (placer.h). */
#define _POSIX_C_SOURCE 200809L
#include "placer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "forward.h"
#include "forward_answer.h"
#include "topo/admission_review.h"
#include "topo/clock.h"
#include "topo/json.h"
#include "topo/k8s.h"
#include "topo/log.h"
#include "topo/pool.h"
#include "topo/str.h"

/* A forward must be answered this long before the request's own deadline,
 * so that the no-fit answer can still be given here. */
#define FORWARD_MARGIN_MS WH_ANSWER_MARGIN_MS
/* Without a deadline (tests, the static mode never forwards). */
#define FORWARD_TIMEOUT_MS 5000L
/* Checks of a settling takeover. */
#define SETTLE_POLL_MS 20L

const char *const wh_forward_outcome_names[WH_FWD_OUTCOMES] = {
    "answered", "no_placer", "unreachable", "refused", "not_placer", "deadline", "circuit_open",
    "busy", "invalid"};

struct wh_placer {
    topo_admission_ctx *ctx;
    wh_ungater *ungater;
    wh_forward *fwd; /* NULL: no peer CA, nothing forwarded */
    _Atomic uint64_t forwarded[WH_FWD_OUTCOMES];
    _Atomic uint64_t forward_us;
    wh_breaker breaker;
};

int wh_placer_create(wh_placer **out, const wh_placer_opts *opts, topo_err *err)
{
    *out = NULL;
    if (opts == NULL || opts->ctx == NULL)
        return topo_err_set(err, TOPO_EINVALID, "placer: no admission context");
    wh_placer *pl = calloc(1, sizeof(*pl));
    if (pl == NULL)
        return topo_err_nomem(err, NULL);
    pl->ctx = opts->ctx;
    pl->ungater = opts->ungater;
    for (size_t i = 0; i < WH_FWD_OUTCOMES; i++)
        atomic_init(&pl->forwarded[i], 0);
    atomic_init(&pl->forward_us, 0);
    wh_breaker_init(&pl->breaker);
    if (opts->ungater != NULL && opts->peer_ca_file != NULL) {
        wh_forward_opts fo = {opts->peer_ca_file, opts->peer_server_name, opts->identity};
        int rc = wh_forward_create(&pl->fwd, &fo, err);
        if (rc < 0) {
            wh_breaker_dispose(&pl->breaker);
            free(pl);
            return rc;
        }
    }
    *out = pl;
    return 0;
}

void wh_placer_free(wh_placer *pl)
{
    if (pl == NULL)
        return;
    wh_forward_free(pl->fwd);
    wh_breaker_dispose(&pl->breaker);
    free(pl);
}

/* Answered here without placing: the no-fit policy, with why. */
static int unplaced(wh_placer *pl, wh_forward_outcome o, const char *why, const char *body,
                    size_t len, char **out, size_t *out_len, int *status)
{
    atomic_fetch_add(&pl->forwarded[o], 1);
    topo_log(TOPO_LOG_DEBUG, "not placed here: %s", why);
    return topo_admission_handle_unplaced(pl->ctx, why, body, len, out, out_len, status);
}

/* 421 to a forwarding replica: this one does not place (any more). */
static int misdirected(wh_placer *pl, const char *by, char **out, size_t *out_len, int *status)
{
    atomic_fetch_add(&pl->forwarded[WH_FWD_NOT_PLACER], 1);
    topo_log(TOPO_LOG_INFO, "request forwarded by %s refused: this replica does not place", by);
    char msg[160];
    snprintf(msg, sizeof msg, "this replica does not hold Lease %s",
             wh_ungater_lease_name(pl->ungater));
    json_t *doc = json_pack("{s:s}", "error", msg);
    *out = doc != NULL ? topo_json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    *out_len = *out != NULL ? strlen(*out) : 0;
    *status = 421;
    return *out != NULL ? 0 : TOPO_ENOMEM;
}

/* Whether a request for the placer would wait on the network here: a
 * forward (another replica places and can be reached) or a takeover that
 * settles. Those go to the defer pool. */
static int would_wait(wh_placer *pl, const char *forwarded_by)
{
    char holder[TOPO_LEADER_HOLDER_MAX + 1];
    long wait_ms = 0;
    if (forwarded_by != NULL)
        return 0; /* placed here or 421 */
    wh_ungater_placer_state st = wh_ungater_placer(pl->ungater, holder, sizeof holder, &wait_ms);
    return st == TOPO_UNGATER_PLACER_SETTLING ||
           (st == TOPO_UNGATER_PLACER_OTHER && pl->fwd != NULL &&
            wh_forward_address(holder) != NULL);
}

/* The placer's breaker after a forward; logs each change once. */
static void breaker_after(wh_placer *pl, const char *holder, const char *addr, int ok)
{
    int change = wh_breaker_done(&pl->breaker, addr, ok, topo_clock_ns());
    if (change > 0)
        topo_log(TOPO_LOG_WARN,
                 "forwarding: circuit open: the placer %s failed or timed out %d times in a "
                 "row; topology pods get the no-fit answer at once for %lld s, then one "
                 "request tries again",
                 holder, WH_BREAKER_FAILURES, WH_BREAKER_COOL_NS / 1000000000LL);
    else if (change < 0)
        topo_log(TOPO_LOG_INFO, "forwarding: circuit closed: the placer %s answers again",
                 holder);
}

/* The request's uid into out (empty when it has none). */
static void request_uid(const char *body, size_t len, char *out, size_t size)
{
    topo_admission_request req;
    topo_pool *pool = topo_pool_create();
    out[0] = '\0';
    if (pool != NULL && topo_admission_decode(&req, body, len, pool, NULL) == 0 && req.uid)
        snprintf(out, size, "%s", req.uid);
    topo_pool_free(pool);
}

/* Forwards to the placer holder at addr within the deadline, or answers
 * here by the no-fit policy when it cannot (no time, breaker open, no
 * answer). */
static int forward(wh_placer *pl, int64_t deadline_ns, const char *holder, const char *addr,
                   const char *body, size_t len, char **out, size_t *out_len, int *status)
{
    char why[TOPO_LEADER_HOLDER_MAX + TOPO_ERR_TEXT_MAX + 128];
    long timeout_ms = FORWARD_TIMEOUT_MS;
    int64_t start = topo_clock_ns();
    if (deadline_ns > 0)
        timeout_ms = (long)((deadline_ns - start) / 1000000LL) - FORWARD_MARGIN_MS;
    if (timeout_ms <= 0) {
        snprintf(why, sizeof why, "no time left to ask the placer %s", holder);
        return unplaced(pl, WH_FWD_DEADLINE, why, body, len, out, out_len, status);
    }
    if (!wh_breaker_allow(&pl->breaker, addr, start)) {
        snprintf(why, sizeof why,
                 "the placer %s did not answer in time %d times in a row: not asked for a "
                 "few seconds",
                 holder, WH_BREAKER_FAILURES);
        return unplaced(pl, WH_FWD_CIRCUIT_OPEN, why, body, len, out, out_len, status);
    }
    topo_err err = TOPO_ERR_INIT;
    char *answer = NULL;
    size_t answer_len = 0;
    int answer_status = 0;
    int rc = wh_forward_post(pl->fwd, addr, body, len, timeout_ms, &answer, &answer_len,
                             &answer_status, &err);
    /* Only a 200 the API server can take is relayed: anything else would
     * fail the request there, or answer for another pod. */
    char bad[160] = "";
    if (rc >= 0 && answer_status == 200) {
        char uid[256];
        request_uid(body, len, uid, sizeof uid);
        if (!wh_forward_answer_ok(answer, answer_len, uid, bad, sizeof bad) && bad[0] == '\0')
            snprintf(bad, sizeof bad, "not an AdmissionReview response");
    } else if (rc >= 0 && answer_status != 421 && answer_status < 500) {
        snprintf(bad, sizeof bad, "status %d", answer_status);
    }
    /* 421 is a prompt answer (it let go): silence, 5xx and garbage count */
    breaker_after(pl, holder, addr, rc >= 0 && answer_status < 500 && bad[0] == '\0');
    if (rc == TOPO_ENOMEM) {
        free(answer);
        return rc;
    }
    if (rc < 0 || answer_status == 421 || answer_status >= 500 || bad[0] != '\0') {
        wh_forward_outcome o = WH_FWD_REFUSED;
        if (rc < 0) {
            o = rc == TOPO_ETIMEOUT ? WH_FWD_DEADLINE : WH_FWD_UNREACHABLE;
            snprintf(why, sizeof why, "the placer %s could not be reached: %s", holder, err.text);
        } else if (bad[0] != '\0') {
            o = WH_FWD_INVALID;
            snprintf(why, sizeof why, "the placer %s answered what the API server cannot take: %s",
                     holder, bad);
        } else {
            snprintf(why, sizeof why, "the placer %s answered %d", holder, answer_status);
        }
        free(answer);
        topo_log(TOPO_LOG_WARN, "forwarding: %s", why);
        return unplaced(pl, o, why, body, len, out, out_len, status);
    }
    atomic_fetch_add(&pl->forwarded[WH_FWD_ANSWERED], 1);
    atomic_fetch_add(&pl->forward_us, (uint64_t)((topo_clock_ns() - start) / 1000));
    *out = answer;
    *out_len = answer_len;
    *status = answer_status;
    return 0;
}

int wh_placer_handle(wh_placer *pl, wh_phase phase, int64_t deadline_ns, const char *forwarded_by,
                     const char *body, size_t len, char **out, size_t *out_len, int *status)
{
    char holder[TOPO_LEADER_HOLDER_MAX + 1], why[TOPO_LEADER_HOLDER_MAX + TOPO_ERR_TEXT_MAX + 128];
    wh_ungater_placer_state st = TOPO_UNGATER_PLACER_SELF;
    long wait_ms = 0;

    /* Pods passed through and malformed reviews: any replica answers. */
    if (pl->ungater == NULL || !topo_admission_needs_placer(body, len))
        return topo_admission_handle_until(pl->ctx, deadline_ns, body, len, out, out_len, status);
    /* What waits on the network does not wait on a request thread. */
    if (phase == WH_PHASE_NOW && would_wait(pl, forwarded_by))
        return WH_HANDLE_DEFER;
    /* Queued past its deadline (less the margin): answered at once, even
     * should this replica place by now (the pool's expiry thread must not
     * wait for the placement lock). */
    if (phase == WH_PHASE_EXPIRED)
        return unplaced(pl, WH_FWD_DEADLINE,
                        "the request's deadline came while it waited for a free forwarding "
                        "thread on this replica: the placer was not asked",
                        body, len, out, out_len, status);
    /* A takeover settles for a second or two: wait for it while the
     * deadline allows, then place (never when shed: no waiting). */
    while ((st = wh_ungater_placer(pl->ungater, holder, sizeof holder, &wait_ms)) ==
               TOPO_UNGATER_PLACER_SETTLING &&
           phase != WH_PHASE_SHED &&
           (deadline_ns == 0 ||
            topo_clock_ns() + (wait_ms + FORWARD_MARGIN_MS) * 1000000LL < deadline_ns))
        topo_clock_sleep_ns((wait_ms < SETTLE_POLL_MS ? wait_ms + 1 : SETTLE_POLL_MS) * 1000000LL);
    if (st == TOPO_UNGATER_PLACER_SELF)
        return topo_admission_handle_until(pl->ctx, deadline_ns, body, len, out, out_len, status);
    if (forwarded_by != NULL)
        return misdirected(pl, forwarded_by, out, out_len, status);
    if (phase == WH_PHASE_SHED)
        return unplaced(pl, WH_FWD_BUSY,
                        "too many requests wait for the placer on this replica: not asked",
                        body, len, out, out_len, status);
    if (st == TOPO_UNGATER_PLACER_SETTLING)
        return unplaced(pl, WH_FWD_NO_PLACER,
                        "this replica took over placement and waits for the previous placer's "
                        "pods to arrive",
                        body, len, out, out_len, status);
    if (st == TOPO_UNGATER_PLACER_NONE) {
        snprintf(why, sizeof why,
                 "no replica of topo-webhook holds Lease %s (the placer): placement waits for one",
                 wh_ungater_lease_name(pl->ungater));
        return unplaced(pl, WH_FWD_NO_PLACER, why, body, len, out, out_len, status);
    }
    const char *addr = wh_forward_address(holder);
    if (addr == NULL || pl->fwd == NULL) {
        snprintf(why, sizeof why, "the placer %s cannot be reached: %s", holder,
                 addr == NULL ? "its Lease identity has no --peer-address"
                              : "this replica has no --peer-ca-file");
        return unplaced(pl, WH_FWD_NO_PLACER, why, body, len, out, out_len, status);
    }
    return forward(pl, deadline_ns, holder, addr, body, len, out, out_len, status);
}

void wh_placer_get_stats(wh_placer *pl, wh_placer_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < WH_FWD_OUTCOMES; i++)
        out->forwarded[i] = atomic_load(&pl->forwarded[i]);
    out->forward_us_sum = atomic_load(&pl->forward_us);
    out->circuit_open = wh_breaker_is_open(&pl->breaker);
    out->circuit_openings = wh_breaker_openings(&pl->breaker);
}
