/* The ungater (ungater.h).
 *
 * Locking: one mutex (mu) guards stop, kicked and the statistics; the thread
 * drops it for every API call and cache read. The cache connection, both
 * Kubernetes clients and the elector belong to the thread alone (the client
 * and cache are single-thread objects). */
#define _POSIX_C_SOURCE 200809L
#include "ungater.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "topo/array.h"
#include "topo/k8s.h"
#include "topo/limits.h"
#include "topo/str.h"
#include "topo/admission_config.h"
#include "topo/cache.h"
#include "topo/log.h"
#include "topo/strmap.h"

struct topo_ungater {
    char *db_path, *kubeconfig, *lease_namespace, *identity;
    topo_admission_ctx *ctx;
    long interval_ms;
    int leader_election;

    topo_k8s_config cfg;
    topo_k8s *k;  /* pods: GET and PATCH */
    topo_k8s *lk; /* the elector's own client (it sets its own timeouts) */
    topo_leader *leader;
    int64_t next_tick_ms; /* next election step */
    long retry_ms;        /* between election steps */
    long settle_ms;
    _Atomic int64_t placing_from_ms; /* when this replica may place (it leads) */
    topo_cache *cache;

    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* kick or stop */
    int stop;
    int kicked;
    topo_ungater_stats stats;
};

/* One gated pod of the cache, copied out of the foreach callback. */
typedef struct candidate {
    char *ns, *name, *podset; /* podset NULL: a PodSet of its own */
    size_t group;             /* order of the PodSet's first pod */
    size_t seq;               /* order foreach_pod gave */
} candidate;

typedef struct scan {
    candidate *items;
    size_t n, cap;
    size_t ngroups;
    size_t dropped; /* over TOPO_MAX_UNGATER_PODS */
    topo_strmap *groups;
    int oom;
} scan;

/* How one round ended for the thread. */
enum { ROUND_DONE = 0, ROUND_ABORT = 1 };

static void add_stat(topo_ungater *u, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&u->mu);
    *field += n;
    pthread_mutex_unlock(&u->mu);
}

static int stopping(topo_ungater *u)
{
    pthread_mutex_lock(&u->mu);
    int s = u->stop;
    pthread_mutex_unlock(&u->mu);
    return s;
}

static void log_pod(topo_log_level level, const candidate *c, const char *outcome,
                    const char *detail)
{
    topo_log_field f[5] = {{"ns", c->ns},
                           {"pod", c->name},
                           {"podset", c->podset != NULL ? c->podset : ""},
                           {"outcome", outcome},
                           {"detail", detail}};
    topo_log_kv(level, f, detail != NULL ? 5u : 4u, "ungater: %s", outcome);
}

/* ---- leadership ---- */

static void set_leader(topo_ungater *u, int leader)
{
    pthread_mutex_lock(&u->mu);
    int was = u->stats.leader;
    u->stats.leader = leader;
    if (leader && !was && u->leader_election) {
        /* Taken over from another: place only once what it admitted is in
         * (TOPO_UNGATER_SETTLE_MS_DEFAULT). A Lease we created, or our own
         * record renewed after a restart, had no other placer. */
        long settle = topo_leader_took_over(u->leader) ? u->settle_ms : 0;
        atomic_store(&u->placing_from_ms, topo_leader_now_ms() + settle);
        u->stats.takeovers++;
        u->stats.last_settle_ms = settle;
    }
    pthread_mutex_unlock(&u->mu);
    if (was != leader) {
        topo_log_field f[2] = {{"lease", TOPO_UNGATER_LEASE_NAME},
                               {"identity", u->leader != NULL ? topo_leader_identity(u->leader)
                                                              : ""}};
        topo_log_kv(TOPO_LOG_INFO, f, 2, "ungater: %s", leader ? "leading" : "not leading");
    }
}

/* One election step when due; returns whether this replica may act now. */
static int lead(topo_ungater *u)
{
    if (!u->leader_election) {
        set_leader(u, 1);
        return 1;
    }
    int64_t now = topo_leader_now_ms();
    if (now >= u->next_tick_ms) {
        topo_err err = TOPO_ERR_INIT;
        if (topo_leader_tick(u->leader, now, NULL, &err) < 0)
            topo_log(TOPO_LOG_WARN, "ungater: lease %s: %s", TOPO_UNGATER_LEASE_NAME, err.text);
        /* The elector's retry period: ticking more often only loads the
         * API server, less often risks the renew deadline. */
        u->next_tick_ms = now + u->retry_ms;
    }
    int leader = topo_leader_is_leader(u->leader, topo_leader_now_ms());
    set_leader(u, leader);
    return leader;
}

/* ---- the cache's gated pods ---- */

static const char *annotation(const topo_cache_pod *pod, const char *key)
{
    for (size_t i = 0; i < pod->nannotations; i++)
        if (strcmp(pod->annotations[i].key, key) == 0)
            return pod->annotations[i].value;
    return NULL;
}

static int collect(const topo_cache_pod *pod, void *payload)
{
    scan *s = payload;
    if (annotation(pod, TOPO_ADMISSION_WAIT_REASON_ANNOTATION) == NULL ||
        pod->node_name[0] != '\0' || strcmp(pod->phase, "Succeeded") == 0 ||
        strcmp(pod->phase, "Failed") == 0)
        return 0;
    if (s->n == TOPO_MAX_UNGATER_PODS) {
        s->dropped++;
        return 0;
    }
    if (topo_array_reserve((void **)&s->items, &s->cap, s->n + 1, sizeof(*s->items)) != 0)
        goto oom;
    candidate *c = &s->items[s->n];
    memset(c, 0, sizeof(*c));
    const char *podset = annotation(pod, TOPO_ADMISSION_PODSET_ANNOTATION);
    c->ns = topo_strdup(pod->namespace_name);
    c->name = topo_strdup(pod->name);
    c->podset = podset != NULL && podset[0] != '\0' ? topo_strdup(podset) : NULL;
    if (c->ns == NULL || c->name == NULL || (podset != NULL && podset[0] && c->podset == NULL)) {
        free(c->ns);
        free(c->name);
        free(c->podset);
        goto oom;
    }
    c->seq = s->n;
    int32_t g = c->podset != NULL ? topo_strmap_get(s->groups, c->podset) : -1;
    if (g < 0) {
        g = (int32_t)s->ngroups++;
        if (c->podset != NULL && topo_strmap_put(s->groups, c->podset, g) != 0) {
            free(c->ns);
            free(c->name);
            free(c->podset);
            goto oom;
        }
    }
    c->group = (size_t)g;
    s->n++;
    return 0;
oom:
    s->oom = 1;
    return TOPO_ENOMEM;
}

static int by_group(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void scan_dispose(scan *s)
{
    /* The map's keys are the candidates' strings: free it first. */
    topo_strmap_free(s->groups);
    for (size_t i = 0; i < s->n; i++) {
        free(s->items[i].ns);
        free(s->items[i].name);
        free(s->items[i].podset);
    }
    free(s->items);
    memset(s, 0, sizeof(*s));
}

/* ---- one pod ---- */

typedef enum outcome {
    OUT_UNGATED = 0,
    OUT_SKIPPED,  /* gone, bound, or no longer gated: nothing to do */
    OUT_NOFIT,    /* the PodSet does not fit yet */
    OUT_WAITING,  /* its pod group waits for more of its pods (this one is recorded) */
    OUT_CHANGED,  /* the pod changed under us: next round */
    OUT_ERROR,    /* counted; the round goes on */
    OUT_API_DOWN  /* the API server is not answering: end the round */
} outcome;

static int has_wait_gate(const json_t *pod)
{
    const json_t *gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
    size_t i;
    const json_t *g;
    json_array_foreach(gates, i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name != NULL && strcmp(name, TOPO_ADMISSION_WAIT_GATE) == 0)
            return 1;
    }
    return 0;
}

static int api_down(int rc)
{
    return rc == TOPO_ECONNECT || rc == TOPO_ETIMEOUT || rc == TOPO_ESERVER ||
           rc == TOPO_ETHROTTLED || rc == TOPO_EUNAUTHORIZED || rc == TOPO_EFORBIDDEN;
}

/* left: the pods of the PodSet from this one on (for the log). */
static outcome ungate_one(topo_ungater *u, const candidate *c, size_t left)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *pod = NULL, *patch = NULL;
    outcome out = OUT_ERROR;

    int rc = topo_k8s_get(&pod, u->k, &topo_k8s_pods, c->ns, c->name, &err);
    if (rc == TOPO_ENOTFOUND) {
        log_pod(TOPO_LOG_DEBUG, c, "gone", NULL);
        return OUT_SKIPPED;
    }
    if (rc < 0) {
        log_pod(TOPO_LOG_WARN, c, "get-failed", err.text);
        return api_down(rc) ? OUT_API_DOWN : OUT_ERROR;
    }
    /* The cache lags the API server: a pod released last round, or bound,
     * still looks gated there for a moment. */
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (!has_wait_gate(pod) || (node != NULL && node[0] != '\0')) {
        log_pod(TOPO_LOG_DEBUG, c, "not-gated", NULL);
        out = OUT_SKIPPED;
        goto done;
    }
    const char *rv = json_string_value(
        json_object_get(json_object_get(pod, "metadata"), "resourceVersion"));
    add_stat(u, &u->stats.attempts, 1);
    rc = topo_admission_ungate_pod_json(u->ctx, pod, &patch, &err);
    if (rc == TOPO_EWAITING) {
        /* Recorded as one of its group's pods: the next may complete it
         * (after a takeover this placer knows only the members it tried). */
        log_pod(TOPO_LOG_DEBUG, c, "group-waiting", err.text);
        out = OUT_WAITING;
        goto done;
    }
    if (rc == TOPO_ENOFIT) {
        /* One line for the PodSet: its other pods are not tried this round. */
        char n[32];
        snprintf(n, sizeof(n), "%zu", left);
        topo_log_field f[5] = {{"ns", c->ns},
                               {"pod", c->name},
                               {"podset", c->podset != NULL ? c->podset : ""},
                               {"waiting", n},
                               {"reason", err.text}};
        topo_log_kv(TOPO_LOG_INFO, f, 5, "ungater: does not fit yet");
        out = OUT_NOFIT;
        goto done;
    }
    if (rc < 0) {
        log_pod(TOPO_LOG_WARN, c, "error", err.text);
        goto done;
    }
    /* The resourceVersion we read is the precondition: the slot was chosen
     * for that object; a pod changed since is looked at again next round
     * (its slot claim is idempotent). */
    rc = topo_k8s_patch(NULL, u->k, &topo_k8s_pods, c->ns, c->name, TOPO_K8S_JSON_PATCH, patch,
                        rv, &err);
    if (rc == 0) {
        log_pod(TOPO_LOG_INFO, c, "ungated", NULL);
        out = OUT_UNGATED;
    } else if (rc == TOPO_ENOTFOUND) {
        log_pod(TOPO_LOG_INFO, c, "gone", NULL);
        out = OUT_SKIPPED;
    } else if (rc == TOPO_ECONFLICT || rc == TOPO_EINVALID) {
        /* 409 (stale resourceVersion) or 422 (a "test" op failed). */
        log_pod(TOPO_LOG_INFO, c, "changed", err.text);
        out = OUT_CHANGED;
    } else {
        log_pod(TOPO_LOG_WARN, c, "patch-failed", err.text);
        out = api_down(rc) ? OUT_API_DOWN : OUT_ERROR;
    }
done:
    json_decref(patch);
    json_decref(pod);
    return out;
}

/* ---- one round ---- */

static int round_run(topo_ungater *u)
{
    topo_err err = TOPO_ERR_INIT;
    scan s;
    memset(&s, 0, sizeof(s));
    if ((s.groups = topo_strmap_create(64)) == NULL) {
        topo_log(TOPO_LOG_ERROR, "ungater: out of memory");
        add_stat(u, &u->stats.errors, 1);
        return ROUND_ABORT;
    }
    int rc = topo_cache_foreach_pod(u->cache, collect, &s, &err);
    if (rc != 0) {
        topo_log(TOPO_LOG_ERROR, "ungater: reading the cache: %s",
                 s.oom ? "out of memory" : err.text);
        add_stat(u, &u->stats.errors, 1);
        scan_dispose(&s);
        return ROUND_ABORT;
    }
    if (s.dropped > 0)
        topo_log(TOPO_LOG_WARN, "ungater: %zu gated pods beyond the first %u wait for a later round",
                 s.dropped, TOPO_MAX_UNGATER_PODS);
    /* PodSets in the order their first pod came from the cache (by uid: the
     * cache keeps no creation time), each PodSet's pods in that order too. */
    if (s.n > 1)
        qsort(s.items, s.n, sizeof(*s.items), by_group);

    int result = ROUND_DONE;
    size_t waiting = 0;
    size_t i = 0;
    while (i < s.n) {
        size_t end = i + 1;
        while (end < s.n && s.items[end].group == s.items[i].group)
            end++;
        for (size_t j = i; j < end; j++) {
            /* A round can outlast the renew deadline: keep the lease, and
             * stop acting the moment it is lost. */
            if (stopping(u) || !lead(u)) {
                result = ROUND_ABORT;
                goto out;
            }
            outcome o = ungate_one(u, &s.items[j], end - j);
            if (o == OUT_UNGATED) {
                add_stat(u, &u->stats.ungated, 1);
            } else if (o == OUT_CHANGED || o == OUT_WAITING) {
                waiting++;
            } else if (o == OUT_ERROR) {
                add_stat(u, &u->stats.errors, 1);
            } else if (o == OUT_API_DOWN) {
                add_stat(u, &u->stats.errors, 1);
                result = ROUND_ABORT;
                goto out;
            } else if (o == OUT_NOFIT) {
                /* The PodSet goes as a whole: its other pods wait too. */
                waiting += end - j;
                break;
            }
        }
        i = end;
    }
    /* A gauge, set by complete rounds only (an aborted one saw too little). */
    pthread_mutex_lock(&u->mu);
    u->stats.waiting = (uint64_t)(waiting + s.dropped);
    pthread_mutex_unlock(&u->mu);
out:
    scan_dispose(&s);
    return result;
}

/* ---- the thread ---- */

static struct timespec deadline_in(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (ms % 1000) * 1000000L;
    ts.tv_sec += (time_t)(ms / 1000 + ns / 1000000000L);
    ts.tv_nsec = ns % 1000000000L;
    return ts;
}

static void *ungater_main(void *arg)
{
    topo_ungater *u = arg;
    int64_t next_round = 0; /* the first round at once */
    for (;;) {
        int leader = lead(u);
        int64_t now = topo_leader_now_ms();
        pthread_mutex_lock(&u->mu);
        int due = u->kicked || now >= next_round;
        if (u->stop) {
            pthread_mutex_unlock(&u->mu);
            break;
        }
        if (due)
            u->kicked = 0;
        pthread_mutex_unlock(&u->mu);

        if (due && leader) {
            round_run(u);
            add_stat(u, &u->stats.rounds, 1);
        }
        if (due)
            next_round = topo_leader_now_ms() + u->interval_ms;

        /* Sleep until the next round or election step, a kick, or stop. */
        now = topo_leader_now_ms();
        int64_t wake = next_round;
        if (u->leader_election && u->next_tick_ms < wake)
            wake = u->next_tick_ms;
        long ms = wake > now ? (long)(wake - now) : 0;
        pthread_mutex_lock(&u->mu);
        if (ms > 0 && !u->stop && !u->kicked) {
            struct timespec until = deadline_in(ms);
            pthread_cond_timedwait(&u->cv, &u->mu, &until);
        }
        pthread_mutex_unlock(&u->mu);
    }
    if (u->leader_election) {
        topo_err err = TOPO_ERR_INIT;
        if (topo_leader_release(u->leader, topo_leader_now_ms(), &err) < 0)
            topo_log(TOPO_LOG_WARN, "ungater: releasing lease %s: %s", TOPO_UNGATER_LEASE_NAME,
                     err.text);
    }
    set_leader(u, 0);
    return NULL;
}

/* ---- lifecycle ---- */

static void destroy(topo_ungater *u)
{
    topo_leader_free(u->leader);
    topo_k8s_free(u->lk);
    topo_k8s_free(u->k);
    topo_k8s_config_dispose(&u->cfg);
    topo_cache_close(u->cache);
    pthread_cond_destroy(&u->cv);
    pthread_mutex_destroy(&u->mu);
    free(u->db_path);
    free(u->kubeconfig);
    free(u->lease_namespace);
    free(u->identity);
    free(u);
}

int topo_ungater_start(topo_ungater **out, const topo_ungater_opts *opts, topo_err *err)
{
    *out = NULL;
    if (opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ungater: no options");
    if (opts->db_path == NULL || opts->db_path[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "ungater: db_path: the cache file is required");
    if (opts->ctx == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ungater: ctx: the admission context is required");
    long interval =
        opts->interval_ms != 0 ? opts->interval_ms : TOPO_ADMISSION_UNGATE_INTERVAL_DEFAULT_MS;
    if (interval < TOPO_UNGATER_INTERVAL_MIN_MS || interval > TOPO_UNGATER_INTERVAL_MAX_MS)
        return topo_err_set(err, TOPO_EINVALID, "ungater: interval_ms: %ld not in %ld..%ld",
                            opts->interval_ms, TOPO_UNGATER_INTERVAL_MIN_MS,
                            TOPO_UNGATER_INTERVAL_MAX_MS);

    topo_ungater *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ungater: out of memory");
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, NULL);
    topo_k8s_config empty = {0};
    u->cfg = empty;
    u->ctx = opts->ctx;
    u->interval_ms = interval;
    u->leader_election = opts->leader_election != 0;
    u->retry_ms = opts->retry_ms > 0 ? opts->retry_ms : TOPO_LEADER_RETRY_MS_DEFAULT;
    u->settle_ms = opts->settle_ms > 0 ? opts->settle_ms : TOPO_UNGATER_SETTLE_MS_DEFAULT;
    atomic_init(&u->placing_from_ms, 0);
    int rc;
    u->db_path = topo_strdup(opts->db_path);
    u->kubeconfig = topo_strdup(opts->kubeconfig);
    u->lease_namespace = topo_strdup(opts->lease_namespace);
    u->identity = topo_strdup(opts->identity);
    if (u->db_path == NULL || (opts->kubeconfig != NULL && u->kubeconfig == NULL) ||
        (opts->lease_namespace != NULL && u->lease_namespace == NULL) ||
        (opts->identity != NULL && u->identity == NULL)) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ungater: out of memory");
        goto fail;
    }
    /* Short client-side retries: the next round retries anyway, and a stop
     * (SIGTERM) waits for the call in flight. Rate limits: the defaults. */
    topo_k8s_opts ko = {.timeout_ms = 10000, .max_retries = 2, .backoff_max_ms = 2000};
    if ((rc = topo_k8s_config_load(&u->cfg, u->kubeconfig, err)) < 0 ||
        (rc = topo_k8s_create(&u->k, &u->cfg, &ko, err)) < 0)
        goto wrapped;
    if (u->leader_election) {
        topo_leader_opts lo = {.lease_namespace = u->lease_namespace,
                               .lease_name = TOPO_UNGATER_LEASE_NAME,
                               .identity = u->identity,
                               .lease_ms = opts->lease_ms,
                               .renew_deadline_ms = opts->renew_deadline_ms,
                               .retry_ms = opts->retry_ms,
                               .release_on_stop = 1};
        if ((rc = topo_k8s_create(&u->lk, &u->cfg, &ko, err)) < 0 ||
            (rc = topo_leader_create(&u->leader, u->lk, &lo, err)) < 0)
            goto wrapped;
    }
    if ((rc = topo_cache_open(&u->cache, u->db_path, NULL, err)) < 0)
        goto wrapped;
    if (pthread_create(&u->thread, NULL, ungater_main, u) != 0) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ungater: cannot start a thread");
        goto fail;
    }
    u->started = 1;
    topo_log(TOPO_LOG_INFO, "ungater: started (interval %ld ms, leader election %s)",
             u->interval_ms, u->leader_election ? "on" : "off");
    *out = u;
    return 0;
wrapped:
    topo_err_wrap(err, "ungater");
fail:
    destroy(u);
    return rc;
}

void topo_ungater_kick(topo_ungater *u)
{
    if (u == NULL)
        return;
    pthread_mutex_lock(&u->mu);
    u->kicked = 1;
    pthread_cond_signal(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

void topo_ungater_stop(topo_ungater *u)
{
    if (u == NULL)
        return;
    pthread_mutex_lock(&u->mu);
    u->stop = 1;
    pthread_cond_signal(&u->cv);
    int started = u->started;
    u->started = 0;
    pthread_mutex_unlock(&u->mu);
    if (started)
        pthread_join(u->thread, NULL);
}

void topo_ungater_free(topo_ungater *u)
{
    if (u == NULL)
        return;
    topo_ungater_stop(u);
    destroy(u);
}

topo_ungater_placer_state topo_ungater_placer(topo_ungater *u, char *holder, size_t size,
                                              long *wait_ms)
{
    if (size > 0)
        holder[0] = '\0';
    if (wait_ms != NULL)
        *wait_ms = 0;
    if (!u->leader_election)
        return TOPO_UNGATER_PLACER_SELF;
    int64_t now = topo_leader_now_ms();
    if (topo_leader_is_leader(u->leader, now)) {
        int64_t from = atomic_load(&u->placing_from_ms);
        if (now >= from)
            return TOPO_UNGATER_PLACER_SELF;
        if (wait_ms != NULL)
            *wait_ms = (long)(from - now);
        return TOPO_UNGATER_PLACER_SETTLING;
    }
    char h[TOPO_LEADER_HOLDER_MAX + 1];
    /* Our own name as holder while we do not lead: our lease lapsed and
     * nobody took it yet; nobody places. */
    if (!topo_leader_holder(u->leader, now, h, sizeof h) ||
        strcmp(h, topo_leader_identity(u->leader)) == 0)
        return TOPO_UNGATER_PLACER_NONE;
    if (size > 0)
        snprintf(holder, size, "%s", h);
    return TOPO_UNGATER_PLACER_OTHER;
}

void topo_ungater_get_stats(topo_ungater *u, topo_ungater_stats *out)
{
    pthread_mutex_lock(&u->mu);
    *out = u->stats;
    pthread_mutex_unlock(&u->mu);
}
