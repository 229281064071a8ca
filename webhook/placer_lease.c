/* The placer's Lease (placer_lease.h).
 *
 * Locking: mu guards the statistics (leader, takeovers, last settle); the
 * elector, its client and next_step_ms belong to the stepping thread (the
 * ungater's); placing_from_ms is read by any thread. The elector itself
 * answers other threads (topo_leader_is_leader, _holder, _known). */
#define _POSIX_C_SOURCE 200809L
#include "placer_lease.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/clock.h"
#include "topo/log.h"
#include "topo/str.h"

struct wh_placer_lease {
    char *lease_name, *identity;
    topo_admission_ctx *ctx;
    int leader_election;
    topo_k8s *k; /* the elector's own client (it sets its own timeouts) */
    topo_leader *leader;
    int64_t next_step_ms; /* next election step */
    long retry_ms;        /* between election steps */
    long settle_ms;
    _Atomic int64_t placing_from_ms; /* when this replica may place (it leads) */

    pthread_mutex_t mu;
    wh_placer_lease_stats stats;
};

void wh_placer_lease_free(wh_placer_lease *pl)
{
    if (pl == NULL)
        return;
    topo_leader_free(pl->leader);
    topo_k8s_free(pl->k);
    pthread_mutex_destroy(&pl->mu);
    free(pl->lease_name);
    free(pl->identity);
    free(pl);
}

int wh_placer_lease_create(wh_placer_lease **out, const wh_placer_lease_opts *opts,
                           topo_err *err)
{
    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "placer lease: no options");
    wh_placer_lease *pl = calloc(1, sizeof(*pl));
    if (pl == NULL)
        return topo_err_nomem(err, "placer lease");
    pthread_mutex_init(&pl->mu, NULL);
    pl->ctx = opts->ctx;
    pl->leader_election = opts->leader_election != 0;
    pl->retry_ms = opts->retry_ms > 0 ? opts->retry_ms : TOPO_LEADER_RETRY_MS_DEFAULT;
    pl->settle_ms = opts->settle_ms > 0 ? opts->settle_ms : TOPO_UNGATER_SETTLE_MS_DEFAULT;
    atomic_init(&pl->placing_from_ms, 0);
    int rc = 0;
    pl->identity = topo_strdup(opts->identity);
    pl->lease_name = topo_strdup(opts->lease_name != NULL ? opts->lease_name
                                                          : TOPO_UNGATER_LEASE_NAME);
    if ((opts->identity != NULL && pl->identity == NULL) || pl->lease_name == NULL) {
        rc = topo_err_nomem(err, "placer lease");
        goto fail;
    }
    if (pl->leader_election) {
        topo_leader_opts lo = {.lease_namespace = opts->lease_namespace,
                               .lease_name = pl->lease_name,
                               .identity = pl->identity,
                               .lease_ms = opts->lease_ms,
                               .renew_deadline_ms = opts->renew_deadline_ms,
                               .retry_ms = opts->retry_ms,
                               .release_on_stop = 1,
                               .backend = opts->backend};
        topo_k8s_opts none = {0};
        if (opts->backend == NULL &&
            (rc = topo_k8s_create(&pl->k, opts->k8s_config,
                                  opts->k8s_opts != NULL ? opts->k8s_opts : &none, err)) < 0)
            goto fail;
        if ((rc = topo_leader_create(&pl->leader, pl->k, &lo, err)) < 0)
            goto fail;
    }
    *out = pl;
    return 0;
fail:
    wh_placer_lease_free(pl);
    return rc;
}

static void set_leader(wh_placer_lease *pl, int leader)
{
    pthread_mutex_lock(&pl->mu);
    int was = pl->stats.leader;
    pl->stats.leader = leader;
    if (leader && !was && pl->leader_election) {
        /* Taken over from another: place only once what it admitted is in
         * (TOPO_UNGATER_SETTLE_MS_DEFAULT). A Lease we created, or our own
         * record renewed after a restart, had no other placer. */
        long settle = topo_leader_took_over(pl->leader) ? pl->settle_ms : 0;
        atomic_store(&pl->placing_from_ms, topo_clock_ms() + settle);
        pl->stats.takeovers++;
        pl->stats.last_settle_ms = settle;
    }
    pthread_mutex_unlock(&pl->mu);
    if (was != leader) {
        topo_log_field f[2] = {{"lease", pl->lease_name},
                               {"identity", pl->leader != NULL ? topo_leader_identity(pl->leader)
                                                               : ""}};
        topo_log_kv(TOPO_LOG_INFO, f, 2, "ungater: %s", leader ? "leading" : "not leading");
    }
}

int wh_placer_lease_step(wh_placer_lease *pl)
{
    if (!pl->leader_election) {
        set_leader(pl, 1);
        return 1;
    }
    int64_t now = topo_clock_ms();
    if (now >= pl->next_step_ms) {
        topo_err err = TOPO_ERR_INIT;
        if (topo_leader_tick(pl->leader, now, NULL, &err) < 0)
            topo_log(TOPO_LOG_WARN, "ungater: lease %s: %s", pl->lease_name, err.text);
        /* The elector's retry period: ticking more often only loads the
         * API server, less often risks the renew deadline. */
        pl->next_step_ms = now + pl->retry_ms;
    }
    int leader = topo_leader_is_leader(pl->leader, topo_clock_ms());
    /* Before anything is placed under this leadership: what admission
     * reserves and repairs from now on outranks the previous placer's. */
    if (leader && pl->ctx != NULL)
        topo_admission_set_term(pl->ctx, topo_leader_term(pl->leader));
    set_leader(pl, leader);
    return leader;
}

int64_t wh_placer_lease_next_step_ms(const wh_placer_lease *pl)
{
    return pl->leader_election ? pl->next_step_ms : INT64_MAX;
}

void wh_placer_lease_release(wh_placer_lease *pl)
{
    if (pl->leader_election) {
        topo_err err = TOPO_ERR_INIT;
        if (topo_leader_release(pl->leader, topo_clock_ms(), &err) < 0)
            topo_log(TOPO_LOG_WARN, "ungater: releasing lease %s: %s", pl->lease_name,
                     err.text);
    }
    set_leader(pl, 0);
}

int wh_placer_lease_placing(wh_placer_lease *pl, int64_t now_ms)
{
    return now_ms >= atomic_load(&pl->placing_from_ms);
}

const char *wh_placer_lease_identity(const wh_placer_lease *pl)
{
    return pl->leader != NULL ? topo_leader_identity(pl->leader) : pl->identity;
}

const char *wh_placer_lease_name(const wh_placer_lease *pl)
{
    return pl->lease_name;
}

int wh_placer_lease_known(wh_placer_lease *pl)
{
    return !pl->leader_election || topo_leader_known(pl->leader);
}

wh_ungater_placer_state wh_placer_lease_state(wh_placer_lease *pl, char *holder, size_t size,
                                                long *wait_ms)
{
    if (size > 0)
        holder[0] = '\0';
    if (wait_ms != NULL)
        *wait_ms = 0;
    if (!pl->leader_election)
        return TOPO_UNGATER_PLACER_SELF;
    int64_t now = topo_clock_ms();
    if (topo_leader_is_leader(pl->leader, now)) {
        int64_t from = atomic_load(&pl->placing_from_ms);
        if (now >= from)
            return TOPO_UNGATER_PLACER_SELF;
        if (wait_ms != NULL)
            *wait_ms = (long)(from - now);
        return TOPO_UNGATER_PLACER_SETTLING;
    }
    char h[TOPO_LEADER_HOLDER_MAX + 1];
    /* Our own name as holder while we do not lead: our lease lapsed and
     * nobody took it yet; nobody places. */
    if (!topo_leader_holder(pl->leader, now, h, sizeof h) ||
        strcmp(h, topo_leader_identity(pl->leader)) == 0)
        return TOPO_UNGATER_PLACER_NONE;
    if (size > 0)
        snprintf(holder, size, "%s", h);
    return TOPO_UNGATER_PLACER_OTHER;
}

void wh_placer_lease_get_stats(wh_placer_lease *pl, wh_placer_lease_stats *out)
{
    pthread_mutex_lock(&pl->mu);
    *out = pl->stats;
    pthread_mutex_unlock(&pl->mu);
}
