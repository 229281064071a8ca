/* Which replica places a request (placer.h). */
#define _POSIX_C_SOURCE 200809L
#include "placer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "forward.h"
#include "topo/clock.h"
#include "topo/json.h"
#include "topo/k8s.h"
#include "topo/log.h"
#include "topo/str.h"

/* A forward must be answered this long before the request's own deadline,
 * so that the no-fit answer can still be given here. */
#define FORWARD_MARGIN_MS 300L
/* Without a deadline (tests, the static mode never forwards). */
#define FORWARD_TIMEOUT_MS 5000L
/* Checks of a settling takeover. */
#define SETTLE_POLL_MS 20L

const char *const wh_forward_outcome_names[WH_FWD_OUTCOMES] = {
    "answered", "no_placer", "unreachable", "refused", "not_placer"};

struct wh_placer {
    topo_admission_ctx *ctx;
    wh_ungater *ungater;
    wh_forward *fwd; /* NULL: no peer CA, nothing forwarded */
    _Atomic uint64_t forwarded[WH_FWD_OUTCOMES];
    _Atomic uint64_t forward_us;
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
    if (opts->ungater != NULL && opts->peer_ca_file != NULL) {
        wh_forward_opts fo = {opts->peer_ca_file, opts->peer_server_name, opts->identity};
        int rc = wh_forward_create(&pl->fwd, &fo, err);
        if (rc < 0) {
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

int wh_placer_handle(wh_placer *pl, int64_t deadline_ns, const char *forwarded_by,
                     const char *body, size_t len, char **out, size_t *out_len, int *status)
{
    char holder[TOPO_LEADER_HOLDER_MAX + 1], why[TOPO_LEADER_HOLDER_MAX + TOPO_ERR_TEXT_MAX + 128];
    wh_ungater_placer_state st = TOPO_UNGATER_PLACER_SELF;
    long wait_ms = 0;

    /* Pods passed through and malformed reviews: any replica answers. */
    if (pl->ungater == NULL || !topo_admission_needs_placer(body, len))
        return topo_admission_handle_until(pl->ctx, deadline_ns, body, len, out, out_len, status);
    /* A takeover settles for a second or two: wait for it while the
     * deadline allows, then place. */
    while ((st = wh_ungater_placer(pl->ungater, holder, sizeof holder, &wait_ms)) ==
               TOPO_UNGATER_PLACER_SETTLING &&
           (deadline_ns == 0 ||
            topo_clock_ns() + (wait_ms + FORWARD_MARGIN_MS) * 1000000LL < deadline_ns))
        topo_clock_sleep_ns((wait_ms < SETTLE_POLL_MS ? wait_ms + 1 : SETTLE_POLL_MS) * 1000000LL);
    if (st == TOPO_UNGATER_PLACER_SELF)
        return topo_admission_handle_until(pl->ctx, deadline_ns, body, len, out, out_len, status);
    if (forwarded_by != NULL)
        return misdirected(pl, forwarded_by, out, out_len, status);
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
    long timeout_ms = FORWARD_TIMEOUT_MS;
    int64_t start = topo_clock_ns();
    if (deadline_ns > 0)
        timeout_ms = (long)((deadline_ns - start) / 1000000LL) - FORWARD_MARGIN_MS;
    if (timeout_ms <= 0) {
        snprintf(why, sizeof why, "no time left to ask the placer %s", holder);
        return unplaced(pl, WH_FWD_UNREACHABLE, why, body, len, out, out_len, status);
    }
    topo_err err = TOPO_ERR_INIT;
    char *answer = NULL;
    size_t answer_len = 0;
    int answer_status = 0;
    int rc = wh_forward_post(pl->fwd, addr, body, len, timeout_ms, &answer, &answer_len,
                             &answer_status, &err);
    if (rc == TOPO_ENOMEM)
        return rc;
    if (rc < 0 || answer_status == 421 || answer_status >= 500) {
        if (rc < 0)
            snprintf(why, sizeof why, "the placer %s could not be reached: %s", holder, err.text);
        else
            snprintf(why, sizeof why, "the placer %s answered %d", holder, answer_status);
        free(answer);
        topo_log(TOPO_LOG_WARN, "forwarding: %s", why);
        return unplaced(pl, rc < 0 ? WH_FWD_UNREACHABLE : WH_FWD_REFUSED, why, body, len, out,
                        out_len, status);
    }
    atomic_fetch_add(&pl->forwarded[WH_FWD_ANSWERED], 1);
    atomic_fetch_add(&pl->forward_us, (uint64_t)((topo_clock_ns() - start) / 1000));
    *out = answer;
    *out_len = answer_len;
    *status = answer_status;
    return 0;
}

void wh_placer_get_stats(wh_placer *pl, wh_placer_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < WH_FWD_OUTCOMES; i++)
        out->forwarded[i] = atomic_load(&pl->forwarded[i]);
    out->forward_us_sum = atomic_load(&pl->forward_us);
}
