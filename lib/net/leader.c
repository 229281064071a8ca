/* Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does it (docs/architecture.md, net):
 *   - every retry period, read the Lease; create it when absent; take it when
 *     its holder is empty or the record (holder, resourceVersion) has not
 *     changed for leaseDurationSeconds of *local* time since we first saw it
 *     (clocks of different machines are never compared);
 *   - the holder renews it every retry period with an update whose
 *     resourceVersion is the precondition (409: someone else won);
 *   - the holder may act only until renew_deadline after the start of its
 *     last successful renew; renew_deadline < lease duration, so it stops
 *     before any candidate can consider the lease expired.
 * topo_leader_tick is one step at a caller-supplied time (tests drive it
 * with a fake clock and an in-memory backend); topo_leader_run is the loop. */
#define _POSIX_C_SOURCE 200809L

#include "topo/k8s.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/clock.h"
#include "topo/log.h"

#define NOT_LEADING INT64_MIN

struct topo_leader {
    topo_k8s *k; /* the default backend's client, or NULL */
    topo_leader_backend backend;
    char *ns;
    char *name;
    char *identity;
    long lease_ms;
    long renew_deadline_ms;
    long retry_ms;
    int release_on_stop;

    /* The last Lease record we saw and when (our clock) it last changed. */
    int have_obs;
    char *obs_holder;
    char obs_rv[TOPO_K8S_RV_MAX];
    int64_t obs_ms;
    long obs_duration_ms;

    _Atomic int known;                 /* a Lease record was read (or written) once */
    int64_t renewed_ms;                /* start of the last successful acquire/renew */
    _Atomic int took_over;             /* the leadership began on an existing Lease */
    _Atomic int64_t term;              /* spec.leaseTransitions of the Lease we hold */
    _Atomic int64_t leading_until_ms;  /* NOT_LEADING when not the leader */

    /* The holder as other threads may read it (topo_leader_holder): a copy
     * of obs_holder and until when it holds by our clock. */
    pthread_mutex_t pub_mu;
    char pub_holder[TOPO_LEADER_HOLDER_MAX + 1];
    int64_t pub_until_ms;
};

/* ------------------------------------------------------------------ the default backend */

static int k8s_get(json_t **out, void *ctx, const char *ns, const char *name, topo_err *err)
{
    return topo_k8s_get(out, ctx, &topo_k8s_leases, ns, name, err);
}

static int k8s_create(json_t **out, void *ctx, const char *ns, const json_t *lease,
                      topo_err *err)
{
    return topo_k8s_create_object(out, ctx, &topo_k8s_leases, ns, lease, err);
}

static int k8s_update(json_t **out, void *ctx, const char *ns, const json_t *lease,
                      topo_err *err)
{
    return topo_k8s_update(out, ctx, &topo_k8s_leases, ns, lease, err);
}

/* ------------------------------------------------------------------ lifecycle */

int topo_leader_create(topo_leader **out, topo_k8s *k, const topo_leader_opts *opts,
                       topo_err *err)
{
    int error = 0;
    topo_leader *l = NULL;

    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "leader election: options missing");
    if (opts->lease_name == NULL || opts->lease_name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "leader election: no lease name");
    if (opts->backend == NULL && k == NULL)
        return topo_err_set(err, TOPO_EINVALID, "leader election: no client");
    if ((l = calloc(1, sizeof(*l))) == NULL)
        goto oom;
    atomic_init(&l->leading_until_ms, NOT_LEADING);
    pthread_mutex_init(&l->pub_mu, NULL);
    l->k = k;
    l->lease_ms = opts->lease_ms > 0 ? opts->lease_ms : TOPO_LEADER_LEASE_MS_DEFAULT;
    l->renew_deadline_ms = opts->renew_deadline_ms > 0 ? opts->renew_deadline_ms
                                                       : TOPO_LEADER_RENEW_DEADLINE_MS_DEFAULT;
    l->retry_ms = opts->retry_ms > 0 ? opts->retry_ms : TOPO_LEADER_RETRY_MS_DEFAULT;
    l->release_on_stop = opts->release_on_stop;
    if (l->renew_deadline_ms >= l->lease_ms || l->retry_ms >= l->renew_deadline_ms) {
        error = topo_err_set(err, TOPO_EINVALID,
                             "leader election: need retry (%ld ms) < renew deadline (%ld ms) < "
                             "lease duration (%ld ms)",
                             l->retry_ms, l->renew_deadline_ms, l->lease_ms);
        goto cleanup;
    }
    if (opts->backend != NULL) {
        l->backend = *opts->backend;
    } else {
        topo_leader_backend b = {.get = k8s_get, .create = k8s_create, .update = k8s_update,
                                 .ctx = k};
        l->backend = b;
    }
    const char *ns = opts->lease_namespace;
    if (ns == NULL)
        ns = topo_k8s_namespace(k) != NULL ? topo_k8s_namespace(k) : "default";
    if ((l->ns = strdup(ns)) == NULL || (l->name = strdup(opts->lease_name)) == NULL)
        goto oom;
    if (opts->identity != NULL) {
        if ((l->identity = strdup(opts->identity)) == NULL)
            goto oom;
    } else {
        char host[256];
        if (gethostname(host, sizeof(host)) != 0)
            snprintf(host, sizeof(host), "unknown");
        host[sizeof(host) - 1] = '\0';
        size_t n = strlen(host) + 32;
        if ((l->identity = malloc(n)) == NULL)
            goto oom;
        snprintf(l->identity, n, "%s_%ld", host, (long)getpid());
    }
    if (l->identity[0] == '\0') {
        error = topo_err_set(err, TOPO_EINVALID, "leader election: empty identity");
        goto cleanup;
    }
    *out = l;
    l = NULL;
    goto cleanup;
oom:
    error = topo_err_set(err, TOPO_ENOMEM, "leader election: out of memory");
cleanup:
    topo_leader_free(l);
    return error;
}

void topo_leader_free(topo_leader *l)
{
    if (l == NULL)
        return;
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l->obs_holder);
    pthread_mutex_destroy(&l->pub_mu);
    free(l);
}

const char *topo_leader_identity(const topo_leader *l)
{
    return l->identity;
}

int topo_leader_holder(topo_leader *l, int64_t now_ms, char *buf, size_t size)
{
    pthread_mutex_lock(&l->pub_mu);
    int held = l->pub_holder[0] != '\0' && now_ms < l->pub_until_ms;
    if (held && size > 0)
        snprintf(buf, size, "%s", l->pub_holder);
    pthread_mutex_unlock(&l->pub_mu);
    if (!held && size > 0)
        buf[0] = '\0';
    return held;
}

int topo_leader_known(const topo_leader *l)
{
    return atomic_load(&((topo_leader *)l)->known);
}

int64_t topo_leader_term(const topo_leader *l)
{
    return atomic_load(&l->term);
}

int topo_leader_took_over(const topo_leader *l)
{
    return atomic_load(&((topo_leader *)l)->took_over);
}

int topo_leader_is_leader(const topo_leader *l, int64_t now_ms)
{
    int64_t until = atomic_load(&((topo_leader *)l)->leading_until_ms);
    return until != NOT_LEADING && now_ms < until;
}

/* ------------------------------------------------------------------ the record */

/* A Kubernetes MicroTime of the wall clock ("2026-01-05T08:00:00.123456Z"):
 * informational only, never compared with another machine's clock. */
static void micro_time(char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char head[32];
    strftime(head, sizeof(head), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%06ldZ", head, ts.tv_nsec / 1000);
}

static const char *lease_holder(const json_t *lease)
{
    const char *h = json_string_value(json_object_get(json_object_get(lease, "spec"),
                                                      "holderIdentity"));
    return h != NULL ? h : "";
}

/* Remembers the record; restarts the expiry clock when it changed. */
static int observe(topo_leader *l, const json_t *lease, int64_t now_ms, topo_err *err)
{
    const json_t *spec = json_object_get(lease, "spec");
    const char *holder = lease_holder(lease);
    const char *rv = json_string_value(json_object_get(json_object_get(lease, "metadata"),
                                                       "resourceVersion"));
    json_int_t secs = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));

    if (rv == NULL || strlen(rv) >= TOPO_K8S_RV_MAX)
        return topo_err_set(err, TOPO_EINVALID, "lease %s/%s: no usable resourceVersion", l->ns,
                            l->name);
    atomic_store(&l->known, 1);
    if (l->have_obs && strcmp(l->obs_holder, holder) == 0 && strcmp(l->obs_rv, rv) == 0)
        return 0;
    char *h = strdup(holder);
    if (h == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "leader election: out of memory");
    free(l->obs_holder);
    l->obs_holder = h;
    memcpy(l->obs_rv, rv, strlen(rv) + 1);
    l->obs_ms = now_ms;
    l->obs_duration_ms = secs > 0 && secs < 86400 ? (long)secs * 1000 : l->lease_ms;
    l->have_obs = 1;
    /* A holder longer than others can be told is no holder to them. */
    pthread_mutex_lock(&l->pub_mu);
    if (strlen(holder) <= TOPO_LEADER_HOLDER_MAX) {
        memcpy(l->pub_holder, holder, strlen(holder) + 1);
        l->pub_until_ms = now_ms + l->obs_duration_ms;
    } else {
        l->pub_holder[0] = '\0';
    }
    pthread_mutex_unlock(&l->pub_mu);
    return 0;
}

/* The Lease as we want it: ours, renewed now. base is the current object
 * (its resourceVersion is the update's precondition) or NULL to create. */
static json_t *wanted_lease(const topo_leader *l, const json_t *base, int release)
{
    char now[48];
    json_t *lease = NULL, *spec;
    long secs = (l->lease_ms + 999) / 1000;

    micro_time(now, sizeof(now));
    if (base != NULL) {
        if ((lease = json_deep_copy(base)) == NULL)
            return NULL;
    } else {
        lease = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "coordination.k8s.io/v1",
                          "kind", "Lease", "metadata", "name", l->name, "namespace", l->ns);
        if (lease == NULL)
            return NULL;
    }
    spec = json_object_get(lease, "spec");
    if (!json_is_object(spec)) {
        if (json_object_set_new(lease, "spec", spec = json_object()) < 0)
            goto fail;
    }
    const char *old = lease_holder(base);
    json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    int changing = base == NULL || strcmp(old, l->identity) != 0;
    if (release) {
        if (json_object_set_new(spec, "holderIdentity", json_string("")) < 0 ||
            json_object_set_new(spec, "leaseDurationSeconds", json_integer(1)) < 0 ||
            json_object_set_new(spec, "renewTime", json_string(now)) < 0)
            goto fail;
        return lease;
    }
    if (json_object_set_new(spec, "holderIdentity", json_string(l->identity)) < 0 ||
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(secs)) < 0 ||
        json_object_set_new(spec, "renewTime", json_string(now)) < 0)
        goto fail;
    if (changing) {
        if (json_object_set_new(spec, "acquireTime", json_string(now)) < 0 ||
            json_object_set_new(spec, "leaseTransitions",
                                json_integer(base == NULL ? 0 : transitions + 1)) < 0)
            goto fail;
    }
    return lease;
fail:
    json_decref(lease);
    return NULL;
}

static void step_down(topo_leader *l)
{
    atomic_store(&l->leading_until_ms, NOT_LEADING);
}

static int took(topo_leader *l, const json_t *lease, int64_t now_ms, topo_err *err)
{
    json_int_t transitions =
        json_integer_value(json_object_get(json_object_get(lease, "spec"), "leaseTransitions"));
    atomic_store(&l->term, transitions > 0 ? (int64_t)transitions : 0);
    l->renewed_ms = now_ms;
    atomic_store(&l->leading_until_ms, now_ms + l->renew_deadline_ms);
    return observe(l, lease, now_ms, err);
}

/* ------------------------------------------------------------------ the step */

int topo_leader_tick(topo_leader *l, int64_t now_ms, int *is_leader, topo_err *err)
{
    int error = 0;
    json_t *cur = NULL, *want = NULL, *got = NULL;

    /* Past the renew deadline we are not the leader any more, whatever
     * happens below: another candidate may take the lease soon. */
    if (!topo_leader_is_leader(l, now_ms))
        step_down(l);
    /* Bound the calls: a leader's by what is left of its deadline. */
    if (l->k != NULL && l->backend.get == k8s_get) {
        long budget = l->renew_deadline_ms;
        if (topo_leader_is_leader(l, now_ms)) {
            int64_t left = atomic_load(&l->leading_until_ms) - now_ms;
            budget = left < budget ? (long)left : budget;
        }
        topo_k8s_set_timeout(l->k, budget > 100 ? budget : 100);
    }

    error = l->backend.get(&cur, l->backend.ctx, l->ns, l->name, err);
    if (error == TOPO_ENOTFOUND) {
        if ((want = wanted_lease(l, NULL, 0)) == NULL) {
            error = topo_err_set(err, TOPO_ENOMEM, "leader election: out of memory");
            goto cleanup;
        }
        error = l->backend.create(&got, l->backend.ctx, l->ns, want, err);
        if (error == 0) {
            atomic_store(&l->took_over, 0);
            error = took(l, got, now_ms, err);
            topo_log(TOPO_LOG_INFO, "leader election: %s created lease %s/%s", l->identity,
                     l->ns, l->name);
        } else if (error == TOPO_ECONFLICT) {
            error = 0; /* another candidate created it first */
        }
        goto cleanup;
    }
    if (error < 0)
        goto cleanup;
    if ((error = observe(l, cur, now_ms, err)) < 0)
        goto cleanup;
    const char *holder = lease_holder(cur);
    int mine = strcmp(holder, l->identity) == 0;
    if (!mine && holder[0] != '\0' && now_ms < l->obs_ms + l->obs_duration_ms) {
        step_down(l); /* held by another, and not expired by our clock */
        goto cleanup;
    }
    if ((want = wanted_lease(l, cur, 0)) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "leader election: out of memory");
        goto cleanup;
    }
    error = l->backend.update(&got, l->backend.ctx, l->ns, want, err);
    if (error == 0) {
        if (!mine)
            topo_log(TOPO_LOG_INFO, "leader election: %s took lease %s/%s from \"%s\"",
                     l->identity, l->ns, l->name, holder);
        if (!mine && !topo_leader_is_leader(l, now_ms))
            atomic_store(&l->took_over, 1);
        error = took(l, got, now_ms, err);
    } else if (error == TOPO_ECONFLICT) {
        step_down(l); /* someone wrote the lease since we read it: they won */
        error = 0;
    }
cleanup:
    if (is_leader != NULL)
        *is_leader = topo_leader_is_leader(l, now_ms);
    json_decref(cur);
    json_decref(want);
    json_decref(got);
    return error;
}

int topo_leader_release(topo_leader *l, int64_t now_ms, topo_err *err)
{
    int error;
    json_t *cur = NULL, *want = NULL, *got = NULL;
    (void)now_ms;

    step_down(l); /* stop acting before anyone can take over */
    if ((error = l->backend.get(&cur, l->backend.ctx, l->ns, l->name, err)) < 0)
        goto cleanup;
    if (strcmp(lease_holder(cur), l->identity) != 0)
        goto cleanup;
    if ((want = wanted_lease(l, cur, 1)) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "leader election: out of memory");
        goto cleanup;
    }
    error = l->backend.update(&got, l->backend.ctx, l->ns, want, err);
    if (error == TOPO_ECONFLICT)
        error = 0; /* changed meanwhile: not ours to clear any more */
    else if (error == 0)
        topo_log(TOPO_LOG_INFO, "leader election: %s released lease %s/%s", l->identity, l->ns,
                 l->name);
cleanup:
    if (error == TOPO_ENOTFOUND)
        error = 0;
    json_decref(cur);
    json_decref(want);
    json_decref(got);
    return error;
}

/* ------------------------------------------------------------------ the loop */

int topo_leader_run(topo_leader *l, const atomic_int *stop,
                    topo_leader_change_fn on_change, void *payload, topo_err *err)
{
    int reported = 0;
    int64_t next = topo_clock_ms();
    int64_t last_error_log = 0;

    (void)err;
    while (!atomic_load(stop)) {
        int64_t now = topo_clock_ms();
        if (now >= next) {
            topo_err terr = TOPO_ERR_INIT;
            if (topo_leader_tick(l, now, NULL, &terr) < 0 &&
                (last_error_log == 0 || now - last_error_log >= 10000 ||
                 topo_leader_is_leader(l, topo_clock_ms()))) {
                topo_log(TOPO_LOG_WARN, "leader election: %s", terr.text);
                last_error_log = now;
            }
            next = now + l->retry_ms;
        }
        now = topo_clock_ms();
        int lead = topo_leader_is_leader(l, now);
        if (lead != reported) {
            reported = lead;
            if (on_change != NULL)
                on_change(lead, payload);
        }
        /* Wake for the next step, at the renew deadline, and often enough
         * to notice *stop. */
        int64_t wake = next;
        int64_t until = atomic_load(&l->leading_until_ms);
        if (lead && until < wake)
            wake = until;
        int64_t nap = wake - now;
        if (nap > 50)
            nap = 50;
        if (nap > 0)
            topo_clock_sleep_ns(nap * 1000000);
    }
    if (reported && on_change != NULL)
        on_change(0, payload);
    step_down(l);
    if (l->release_on_stop) {
        topo_err rerr = TOPO_ERR_INIT;
        if (topo_leader_release(l, topo_clock_ms(), &rerr) < 0)
            topo_log(TOPO_LOG_WARN, "leader election: release: %s", rerr.text);
    }
    return 0;
}
