/* topo-webhook's placement state (placement.h). */
#define _POSIX_C_SOURCE 200809L
#include "placement.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/clock.h"
#include "topo/k8s.h"
#include "ns_policy.h"
#include "quota.h"
#include "topo/cache.h"
#include "topo/filler.h"
#include "topo/inventory.h"
#include "topo/live.h"
#include "topo/log.h"
#include "topo/metrics.h"
#include "peer.h"
#include "placer.h"
#include "ungater.h"

/* The placement's unlabelled metrics, in /metrics order; the values live
 * in the admission ctx, the filler, the quota view and the ungater, and are
 * copied into the registry at each render (metrics_refresh). */
enum {
    PM_RESERVED,
    PM_ERRORS,
    PM_INVALID,
    PM_UNKNOWN_LEVEL,
    PM_FOREIGN_ANNOTATIONS,
    PM_FAILING,
    PM_TIMED_OUT,
    PM_RESERVATIONS,
    PM_UNCLAIMED, /* the collected family reserved_unclaimed{namespace,resource} */
    PM_CACHE_AGE,
    PM_CACHE_EVENTS,
    PM_CACHE_ERRORS,
    PM_REFLECTOR_FAILURES, /* collected: reflector_failures_total{resource,reason} */
    PM_QUOTA_SYNCED,
    PM_QUOTA_NAMESPACES,
    PM_UNGATED,
    PM_GATED_WAITING,
    PM_GATED_OLDEST,
    PM_UNGATER_ERRORS,
    PM_UNGATER_LEADER,
    PM_PLACER,
    PM_TAKEOVERS,
    PM_SETTLE,
    PM_FORWARD_SECONDS,
    PM_CIRCUIT_OPEN,
    PM_CIRCUIT_OPENINGS,
    PM_ADOPTED,
    PM_FOREIGN_CLAIMS,
    PM_UNGATER_SKIPPED,
    PM_UNGATER_REMEMBERED,
    PM_UNGATER_LAST_ROUND,
    PM_STRANDED_FAILED,
    PM_STRANDED_ERRORS,
    PM_CACHE_RECREATED,
    PM_N
};

/* Which component a metric needs (it is not listed without it). */
enum { PM_ALWAYS, PM_FILLER, PM_QUOTA, PM_UNGATER };

static const struct {
    const char *name;
    const char *help;
    topo_metrics_type type;
    int needs;
} pm_table[PM_N] = {
    [PM_RESERVED] = {"topo_webhook_podsets_reserved_total", "PodSets placed and reserved.",
                     TOPO_METRICS_COUNTER, PM_ALWAYS},
    [PM_ERRORS] = {"topo_webhook_errors_total", "Internal errors (cache, memory) while placing.",
                   TOPO_METRICS_COUNTER, PM_ALWAYS},
    [PM_INVALID] = {"topo_webhook_invalid_requests_total",
                    "Topology pods refused because Kueue's validation refuses their annotations.",
                    TOPO_METRICS_COUNTER, PM_ALWAYS},
    [PM_UNKNOWN_LEVEL] = {"topo_webhook_unknown_level_total",
                          "Valid topology pods naming a level no configured topology has "
                          "(handled by the no-fit policy).",
                          TOPO_METRICS_COUNTER, PM_ALWAYS},
    [PM_FOREIGN_ANNOTATIONS] = {"topo_webhook_foreign_annotations_total",
                                "Topology pods carrying annotations topo writes without a seal "
                                "of topo's for them (removed; the ungater's pods counted when it "
                                "patches them).",
                                TOPO_METRICS_COUNTER, PM_ALWAYS},
    [PM_FAILING] = {"topo_webhook_placement_failing",
                    "Placements failed here (the cache) in a row; the replica is unready from 3.",
                    TOPO_METRICS_GAUGE, PM_ALWAYS},
    [PM_TIMED_OUT] = {"topo_webhook_deadline_exceeded_total",
                      "Topology pods whose request deadline passed while they waited to be "
                      "placed (504, nothing stored).",
                      TOPO_METRICS_COUNTER, PM_ALWAYS},
    [PM_RESERVATIONS] = {"topo_webhook_reservations", "Reservations held in the cache.",
                         TOPO_METRICS_GAUGE, PM_ALWAYS},
    [PM_UNCLAIMED] = {"topo_webhook_reserved_unclaimed",
                      "Capacity reserved for pods not created yet (free slots), by namespace "
                      "and resource: Kueue units (cpu in millicores, memory in bytes), pods in "
                      "slots.",
                      TOPO_METRICS_GAUGE, PM_ALWAYS},
    [PM_CACHE_AGE] = {"topo_webhook_cache_age_seconds",
                      "Seconds since the cache last changed from the API server (0 with a "
                      "static inventory).",
                      TOPO_METRICS_GAUGE, PM_ALWAYS},
    [PM_CACHE_EVENTS] = {"topo_webhook_cache_events_total", "Watch events applied to the cache.",
                         TOPO_METRICS_COUNTER, PM_FILLER},
    [PM_REFLECTOR_FAILURES] = {"topo_webhook_reflector_failures_total",
                               "The cache filler's list/watch failures by resource and reason "
                               "(gone: 410 to a list; throttled, server, forbidden, "
                               "unauthorized, not_found, timeout, connect, other); each is "
                               "retried after a backoff and logged.",
                               TOPO_METRICS_COUNTER, PM_FILLER},
    [PM_CACHE_ERRORS] = {"topo_webhook_cache_errors_total", "List/watch failures retried.",
                         TOPO_METRICS_COUNTER, PM_FILLER},
    [PM_QUOTA_SYNCED] = {"topo_webhook_resource_quota_synced",
                         "Whether the ResourceQuotas were listed (reservations count against "
                         "them).",
                         TOPO_METRICS_GAUGE, PM_QUOTA},
    [PM_QUOTA_NAMESPACES] = {"topo_webhook_resource_quota_namespaces",
                             "Namespaces with a ResourceQuota.", TOPO_METRICS_GAUGE, PM_QUOTA},
    [PM_UNGATED] = {"topo_webhook_ungated_total", "Gated pods released by the ungater.",
                    TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_GATED_WAITING] = {"topo_webhook_gated_waiting",
                          "Gated pods still waiting after the last round.", TOPO_METRICS_GAUGE,
                          PM_UNGATER},
    [PM_GATED_OLDEST] = {"topo_webhook_gated_oldest_seconds",
                         "Age (from its creationTimestamp) of the oldest pod still waiting "
                         "under the gate after the last round; 0: none.",
                         TOPO_METRICS_GAUGE, PM_UNGATER},
    [PM_UNGATER_ERRORS] = {"topo_webhook_ungater_errors_total",
                           "Failed API calls of the ungater.", TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_UNGATER_LEADER] = {"topo_webhook_ungater_leader",
                           "Whether this replica runs the ungater.", TOPO_METRICS_GAUGE,
                           PM_UNGATER},
    [PM_PLACER] = {"topo_webhook_placer",
                   "Whether this replica places (holds Lease topo-webhook, or runs alone).",
                   TOPO_METRICS_GAUGE, PM_UNGATER},
    [PM_TAKEOVERS] = {"topo_webhook_placer_takeovers_total",
                      "Times this replica took Lease topo-webhook and became the placer.",
                      TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_SETTLE] = {"topo_webhook_placer_rebuild_seconds",
                   "How long the last takeover waited for the previous placer's pods (and "
                   "their reservations) before placing.",
                   TOPO_METRICS_GAUGE, PM_UNGATER},
    [PM_FORWARD_SECONDS] = {"topo_webhook_forward_microseconds_total",
                            "Round trips of requests forwarded to the placer and answered, "
                            "summed (over topo_webhook_forwarded_total{outcome=\"answered\"}: "
                            "the mean).",
                            TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_CIRCUIT_OPEN] = {"topo_webhook_placer_circuit_open",
                         "Whether forwarding to the placer is cut off for now: it failed or "
                         "timed out 3 times in a row (topology pods get the no-fit answer at "
                         "once; after 5 s one request tries again).",
                         TOPO_METRICS_GAUGE, PM_UNGATER},
    [PM_CIRCUIT_OPENINGS] = {"topo_webhook_placer_circuit_openings_total",
                             "Times forwarding to the placer was cut off (the circuit opened).",
                             TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_ADOPTED] = {"topo_webhook_reservations_adopted_total",
                    "Reservations another replica made, adopted from the signed records on "
                    "their pods.",
                    TOPO_METRICS_COUNTER, PM_FILLER},
    [PM_FOREIGN_CLAIMS] = {"topo_webhook_foreign_claims_total",
                           "Pod events whose reservation and slot annotations (or record) "
                           "were not topo-webhook's own for that pod (another namespace's "
                           "PodSet, no valid seal, or a pod of another PodSet): nothing bound.",
                           TOPO_METRICS_COUNTER, PM_FILLER},
    [PM_UNGATER_SKIPPED] = {"topo_webhook_ungater_skipped_total",
                            "Gated PodSets a round of the ungater passed over without asking the "
                            "API server or the engine: they did not fit, and no capacity came "
                            "back for them since.",
                            TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_UNGATER_REMEMBERED] = {"topo_webhook_ungater_not_fitting",
                               "Gated PodSets the ungater remembers as not fitting (passed over "
                               "until capacity comes back).",
                               TOPO_METRICS_GAUGE, PM_UNGATER},
    [PM_UNGATER_LAST_ROUND] = {"topo_webhook_ungater_last_round_microseconds",
                               "How long the ungater's last round took (every round is in "
                               "topo_webhook_ungater_round_seconds).",
                               TOPO_METRICS_GAUGE, PM_UNGATER},
    [PM_STRANDED_FAILED] = {"topo_webhook_stranded_pods_failed_total",
                            "Unbound pods placed on a node that then failed (deleted, without "
                            "Ready, NotReady, cordoned), failed so that their controller "
                            "replaces them.",
                            TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_STRANDED_ERRORS] = {"topo_webhook_stranded_pods_errors_total",
                            "Failed API calls while failing stranded pods (retried next round).",
                            TOPO_METRICS_COUNTER, PM_UNGATER},
    [PM_CACHE_RECREATED] = {"topo_webhook_cache_recreated_total",
                            "Times the cache file (--db) was found corrupt at start, moved aside "
                            "to <db>.corrupt-<time> and made anew (its reservations adopted "
                            "again from the pods' records).",
                            TOPO_METRICS_COUNTER, PM_ALWAYS},
};

/* topo_webhook_events_total{result}: Events on pods (pod_events.h). */
enum { PE_CREATED, PE_FAILED, PE_DROPPED, PE_DEFERRED, PE_N };
static const char *const pe_names[PE_N] = {"created", "failed", "dropped", "deferred"};

/* topo_webhook_admissions_total{outcome}, every outcome listed from the start. */
enum { PO_PLACED, PO_GATED, PO_DENIED, PO_IGNORED, PO_PASSED, PO_UNGATED, PO_N };
static const char *const po_names[PO_N] = {"placed", "gated",  "denied",
                                           "ignored", "passed", "ungated"};

struct wh_placement {
    const topo_admission_config *cfg;
    size_t ntopos;
    topo_live **lives;
    topo_admission_topology *topos;
    topo_cache *cache; /* the admission ctx's connection: never checkpoints */
    topo_cache *checkpointer; /* checkpoints the WAL from the owner's thread */
    topo_admission_ctx *ctx;
    int is_static;

    /* from the API server: every client made from one loaded configuration,
     * so that they share its exec credential plugin (one run, one back-off) */
    topo_k8s_config k8s;
    topo_filler *filler;
    pthread_t filler_thread;
    int filler_started;
    atomic_int stop;
    atomic_int filler_rc; /* the filler thread writes it */
    topo_err filler_err;
    wh_ns_policy *ns;
    wh_quota *quota;
    wh_ungater *ungater;
    wh_placer *placer;
    topo_metrics_series *forwarded[WH_FWD_OUTCOMES];
    topo_keyring record_keys; /* never empty once started (peer.h) */

    /* cache age: when the filler last committed something (last_change:
     * written by the owner's tick, read by /metrics on a server thread) */
    uint64_t last_commits;
    _Atomic int64_t last_change;
    uint64_t last_gen_sum; /* of the lives' freed counters */

    topo_metrics *metrics;
    topo_metrics_series *outcomes[PO_N];
    /* packing on: pods requesting a packed resource, packed or passed by reason */
    topo_metrics_series *packed, *pack_passed[TOPO_ADMISSION_PACK_REASONS];
    topo_metrics_series *replacements[TOPO_ADMISSION_REPLACE_OUTCOMES];
    topo_metrics_series *events[PE_N]; /* with an ungater (it posts them) */
    topo_metrics_series *series[PM_N]; /* NULL: not listed (or PM_UNCLAIMED) */
    uint64_t cache_recreated; /* the cache file was corrupt at start and made anew */
};

static int metrics_init(wh_placement *p, topo_err *err);

static int ns_lookup(void *payload, const char *namespace_, topo_admission_policy *out)
{
    return wh_ns_policy_lookup(payload, namespace_, out);
}

static int ns_packing_off(void *payload, const char *namespace_)
{
    return wh_ns_policy_packing_off(payload, namespace_);
}

/* Packing answers from the live snapshots and the namespaces' opt-outs:
 * both must reflect the cluster (a replica not ready yet passes pods). */
static int packing_ready(void *payload)
{
    wh_placement *p = payload;
    return p->is_static || (p->filler_rc >= 0 && topo_filler_synced(p->filler) &&
                            (p->ns == NULL || wh_ns_policy_synced(p->ns)));
}

static int quota_lookup(void *payload, const char *namespace_, topo_pool *pool,
                        const topo_admission_quota_room **out, size_t *n)
{
    return wh_quota_lookup(payload, namespace_, pool, out, n);
}

/* The cache follows the cluster: listed, and not backing off a refusal
 * (filler.h). */
static int cache_synced(void *payload)
{
    wh_placement *p = payload;
    return p->filler != NULL && p->filler_rc >= 0 && topo_filler_synced(p->filler);
}

static void *filler_main(void *arg)
{
    wh_placement *p = arg;
    p->filler_rc = topo_filler_run(p->filler, &p->filler_err);
    if (p->filler_rc < 0)
        topo_log(TOPO_LOG_ERROR, "cache filler stopped: %s", p->filler_err.text);
    return NULL;
}

/* Every node and pod of the inventory into every live snapshot. */
static int load_static(wh_placement *p, const wh_placement_opts *o, topo_err *err)
{
    topo_inventory *inv = NULL;
    int rc = topo_inventory_load_static(&inv, o->inventory, o->pods, err);
    for (size_t t = 0; rc == 0 && t < p->ntopos; t++)
        rc = topo_inventory_fill_live(p->lives[t], inv, err);
    topo_inventory_free(inv);
    return rc;
}

static int start_api(wh_placement *p, const wh_placement_opts *o, topo_err *err)
{
    int rc = topo_k8s_config_load(&p->k8s, o->kubeconfig, err);
    if (rc < 0)
        return rc;
    topo_filler_opts fo = {.db_path = o->db_path,
                           .k8s_config = &p->k8s,
                           .lives = (topo_live *const *)p->lives,
                           .nlives = p->ntopos,
                           .stop = &p->stop,
                           .record_keys = &p->record_keys};
    rc = topo_filler_create(&p->filler, &fo, err);
    if (rc < 0)
        return rc;

    /* The in-memory views of namespaces and quotas, each its own client;
     * the namespaces' for their no-fit policies and packing opt-outs. */
    const char *label = topo_admission_config_namespace_policy_label(p->cfg);
    int packing = topo_admission_config_packing(p->cfg) != NULL;
    if (label != NULL || packing)
        rc = wh_ns_policy_create(&p->ns, label, packing, &p->k8s, NULL, err);
    if (rc == 0 && o->resource_quotas)
        rc = wh_quota_create(&p->quota, &p->k8s, NULL, err);
    if (rc == 0 && p->ns != NULL)
        rc = wh_ns_policy_start(p->ns, err);
    if (rc == 0 && p->quota != NULL)
        rc = wh_quota_start(p->quota, err);
    return rc;
}

static int start_ungater(wh_placement *p, const wh_placement_opts *o, const char *identity,
                         topo_err *err)
{
    wh_ungater_opts uo = {
        .db_path = o->db_path,
        .k8s_config = &p->k8s,
        .ctx = p->ctx,
        .interval_ms = o->ungate_interval_ms > 0 ? o->ungate_interval_ms
                                                 : topo_admission_config_ungate_interval_ms(p->cfg),
        .leader_election = o->leader_election,
        .lease_namespace = o->lease_namespace,
        .lease_name = o->lease_name,
        .identity = identity,
        .lease_ms = o->lease_ms,
        .renew_deadline_ms = o->renew_deadline_ms,
        .retry_ms = o->retry_ms,
        .lives = p->lives,
        .nlives = p->ntopos,
        .cache_ready = cache_synced,
        .cache_ready_payload = p};
    return wh_ungater_start(&p->ungater, &uo, err);
}

/* The Lease identity: "<hostname>@<peer address>" (forward.h), or
 * NULL (the elector's "<hostname>_<pid>") without a peer address. */
static int make_identity(char *out, size_t size, const wh_placement_opts *o)
{
    char host[256];
    if (o->peer_address == NULL)
        return 0;
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    /* No pid: a container restarted in the same pod renews its own Lease
     * at once instead of waiting it out (the old process is gone). */
    int n = snprintf(out, size, "%s@%s", host, o->peer_address);
    return n > 0 && (size_t)n < size ? 1 : -1;
}

/* Who places, and how a request reaches it (placer.h). */
static int start_placer(wh_placement *p, const wh_placement_opts *o, const char *identity,
                        topo_err *err)
{
    char name[256];
    const char *server_name = o->peer_server_name;
    if (p->ungater != NULL && o->leader_election && o->peer_ca_file != NULL &&
        server_name == NULL && o->cert_file != NULL) {
        int rc = wh_peer_server_name(o->cert_file, name, sizeof name, err);
        if (rc < 0) {
            topo_err_wrap(err, "--peer-server-name not given, and from --tls-cert-file");
            return rc;
        }
        server_name = name;
    }
    wh_placer_opts po = {.ctx = p->ctx,
                         .ungater = o->leader_election ? p->ungater : NULL,
                         .peer_ca_file = o->peer_ca_file,
                         .peer_server_name = server_name,
                         .identity = identity};
    return wh_placer_create(&p->placer, &po, err);
}

int wh_placement_start(wh_placement **out, const wh_placement_opts *o, topo_err *err)
{
    *out = NULL;
    wh_placement *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return topo_err_nomem(err, NULL);
    p->cfg = o->config;
    p->is_static = o->inventory != NULL;
    p->ntopos = topo_admission_config_topology_count(p->cfg);
    p->lives = calloc(p->ntopos, sizeof(*p->lives));
    p->topos = calloc(p->ntopos, sizeof(*p->topos));
    atomic_init(&p->last_change, topo_clock_ns() / 1000000000);
    int rc = p->lives && p->topos ? 0 : topo_err_nomem(err, NULL);
    if (rc == 0 && !p->is_static && o->db_path == NULL)
        rc = topo_err_set(err, TOPO_EINVALID, "--db: required with an API server");
    char identity[TOPO_LEADER_HOLDER_MAX + 1];
    int has_identity = rc == 0 ? make_identity(identity, sizeof identity, o) : 0;
    if (has_identity < 0)
        rc = topo_err_set(err, TOPO_EINVALID, "--peer-address: the Lease identity would be over "
                                              "%d bytes", TOPO_LEADER_HOLDER_MAX);
    /* Replicas share reservations through records on pods, signed with
     * the record keys (peer.h); every mode has one, if only for this
     * process. */
    if (rc == 0) {
        wh_peer_keys_opts ko = {.files = o->record_key_files,
                                .nfiles = o->nrecord_key_files,
                                .serving_key = o->key_file,
                                .shared = !p->is_static};
        rc = wh_peer_record_keys(&p->record_keys, &ko, err);
    }

    for (size_t i = 0; rc == 0 && i < p->ntopos; i++) {
        const topo_admission_topology_config *tc = topo_admission_config_topology(p->cfg, i);
        topo_snapshot_opts so = {tc->name, tc->levels, tc->nlevels, tc->node_labels,
                                 tc->nnode_labels};
        rc = topo_live_create(&p->lives[i], &so, err);
        p->topos[i] = (topo_admission_topology){tc->name,        tc->levels,
                                                tc->nlevels,     tc->node_labels,
                                                tc->nnode_labels, tc->policy,
                                                p->lives[i],     tc->npacking_levels};
        if (o->policy >= 0)
            p->topos[i].policy = (topo_admission_policy)o->policy;
    }
    if (rc == 0) {
        /* Requests write reservations; the WAL is copied back into the
         * file by the owner's tick, off the request path. */
        topo_cache_opts co = {.manual_checkpoint = 1};
        int recreated = 0;
        rc = topo_cache_open_healing(&p->cache, &recreated, o->db_path ? o->db_path : ":memory:",
                                     &co, err);
        p->cache_recreated = (uint64_t)recreated;
        if (rc == 0 && o->db_path != NULL)
            rc = topo_cache_open(&p->checkpointer, o->db_path, &co, err);
    }
    if (rc == 0 && p->is_static)
        rc = load_static(p, o, err);
    if (rc == 0 && !p->is_static)
        rc = start_api(p, o, err);
    if (rc == 0) {
        topo_admission_opts ao = {0};
        ao.topologies = p->topos;
        ao.ntopologies = p->ntopos;
        ao.cache = p->cache;
        ao.reservation_ttl_s = topo_admission_config_reservation_ttl_s(p->cfg);
        ao.unclaimed_ttl_s = topo_admission_config_unclaimed_ttl_s(p->cfg);
        ao.unclaimed_cap_namespace =
            topo_admission_config_unclaimed_caps(p->cfg, 0, &ao.nunclaimed_cap_namespace);
        ao.unclaimed_cap_global =
            topo_admission_config_unclaimed_caps(p->cfg, 1, &ao.nunclaimed_cap_global);
        ao.default_policy = o->policy >= 0 ? (topo_admission_policy)o->policy
                                           : topo_admission_config_default_policy(p->cfg);
        if (p->ns != NULL) {
            ao.ns_policy = ns_lookup;
            ao.ns_policy_payload = p->ns;
        }
        if (p->quota != NULL) {
            ao.quota = quota_lookup;
            ao.quota_payload = p->quota;
        }
        ao.record_keys = &p->record_keys;
        ao.replace_fail_fast = topo_admission_config_replace_fail_fast(p->cfg);
        ao.packing = topo_admission_config_packing(p->cfg);
        if (ao.packing != NULL && p->ns != NULL) {
            ao.ns_packing_off = ns_packing_off;
            ao.ns_packing_payload = p->ns;
        }
        ao.packing_ready = packing_ready;
        ao.packing_ready_payload = p;
        const char *note = topo_admission_config_packing_note(p->cfg);
        if (note != NULL)
            topo_log(TOPO_LOG_WARN, "%s", note);
        rc = topo_admission_ctx_create(&p->ctx, &ao, err);
    }
    if (rc == 0 && !p->is_static)
        rc = start_ungater(p, o, has_identity > 0 ? identity : NULL, err);
    /* The filler last: its first list of a large cluster is one long write
     * transaction, which the writes of opening the admission context and
     * the ungater's cache would otherwise wait out (busy_timeout) and fail
     * on. Until it has synced, the replica is not ready. */
    if (rc == 0 && !p->is_static) {
        if (pthread_create(&p->filler_thread, NULL, filler_main, p) != 0)
            rc = topo_err_set(err, TOPO_ENOMEM, "cannot start the cache filler thread");
        else
            p->filler_started = 1;
    }
    if (rc == 0)
        rc = start_placer(p, o, has_identity > 0 ? identity : NULL, err);
    if (rc == 0)
        rc = metrics_init(p, err);
    if (rc < 0) {
        wh_placement_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

topo_admission_ctx *wh_placement_ctx(wh_placement *p)
{
    return p->ctx;
}

int wh_placement_handle(wh_placement *p, wh_phase phase, int64_t deadline_ns,
                        const char *forwarded_by,
                        const char *body, size_t len, char **out_body, size_t *out_len,
                        int *out_status)
{
    return wh_placer_handle(p->placer, phase, deadline_ns, forwarded_by, body, len, out_body,
                            out_len, out_status);
}

int wh_placement_ready(wh_placement *p)
{
    if (p->ctx != NULL && !topo_admission_ready(p->ctx, NULL, 0))
        return 0;
    if (p->is_static)
        return 1;
    if (p->filler_rc < 0 || !topo_filler_synced(p->filler))
        return 0;
    /* Who places must be known: before the Lease was read once, every
     * topology pod would get the no-fit policy ("no placer") although a
     * placer may exist. */
    return (p->ns == NULL || wh_ns_policy_synced(p->ns)) &&
           (p->quota == NULL || wh_quota_synced(p->quota)) &&
           (p->ungater == NULL || wh_ungater_placer_known(p->ungater));
}

int wh_placement_cache_corrupt(wh_placement *p)
{
    return topo_cache_corrupt(p->cache) || topo_cache_corrupt(p->checkpointer);
}

int wh_placement_filler_stopped(wh_placement *p)
{
    return !p->is_static && p->filler != NULL && p->filler_started && p->filler_rc < 0;
}

void wh_placement_tick(wh_placement *p)
{
    topo_err err = TOPO_ERR_INIT;
    /* The bulk of the WAL first, without the placement lock; the tick then
     * copies the little written meanwhile under it. */
    if (p->checkpointer != NULL && topo_cache_checkpoint(p->checkpointer, NULL, &err) < 0)
        topo_log(TOPO_LOG_WARN, "cache checkpoint: %s", err.text);
    topo_err_clear(&err);
    if (topo_admission_tick(p->ctx, &err) < 0)
        topo_log(TOPO_LOG_WARN, "reservations housekeeping: %s", err.text);
    if (p->filler != NULL) {
        topo_filler_stats fs;
        topo_filler_get_stats(p->filler, &fs);
        if (fs.commits != p->last_commits) {
            p->last_commits = fs.commits;
            atomic_store(&p->last_change, topo_clock_ns() / 1000000000);
        }
    }
    /* Capacity came back (pods ended, reservations went, nodes came):
     * gated PodSets may fit. Usage that only grew (every placement) cannot
     * make one fit: that waits for the interval's round. */
    uint64_t sum = 0;
    for (size_t i = 0; i < p->ntopos; i++)
        sum += topo_live_freed(p->lives[i]);
    if (sum != p->last_gen_sum) {
        p->last_gen_sum = sum;
        wh_ungater_kick(p->ungater);
    }
}

/* --- metrics ----------------------------------------------------------------------- */

static int unclaimed_row(void *payload, const char *ns, const char *resource, int64_t amount)
{
    const char *v[] = {ns, resource};
    int rc = topo_metrics_emit(payload, v, amount);
    /* past the series bound the row is dropped (and counted): go on */
    return rc == TOPO_ELIMIT ? 0 : rc;
}

/* The cache filler's list/watch failures by kind and reason, every reason
 * at every render (0 included: an alert on the rate has a series from the
 * start). */
static int collect_failures(void *payload, topo_metrics_sink *sink)
{
    wh_placement *p = payload;
    static const char *const kinds[3] = {"nodes", "pods", "jobs"};
    topo_filler_stats fs;
    int rc = 0;
    topo_filler_get_stats(p->filler, &fs);
    for (size_t k = 0; rc == 0 && k < 3; k++)
        for (int r = 0; rc == 0 && r < TOPO_REFLECTOR_REASONS; r++) {
            const char *v[] = {kinds[k], topo_reflector_reason_name((topo_reflector_reason)r)};
            rc = topo_metrics_emit(sink, v, (int64_t)fs.failures[k][r]);
        }
    return rc;
}

static int collect_unclaimed(void *payload, topo_metrics_sink *sink)
{
    wh_placement *p = payload;
    topo_err uerr = TOPO_ERR_INIT;
    int rc = topo_admission_unclaimed_foreach(p->ctx, unclaimed_row, sink, &uerr);
    if (rc < 0)
        topo_log(TOPO_LOG_WARN, "metrics: reserved capacity not read: %s", uerr.text);
    return rc;
}

/* Seconds since created (epoch seconds, 0: none), as of now: a pod that
 * keeps waiting ages between rounds, and while rounds fail. A clock behind
 * the API server's reads 0, never a negative age. */
static int64_t gated_age(int64_t created)
{
    int64_t age = created > 0 ? (int64_t)time(NULL) - created : 0;
    return age > 0 ? age : 0;
}

static void metrics_refresh(void *payload)
{
    wh_placement *p = payload;
    int64_t v[PM_N] = {0};
    topo_admission_stats s;
    topo_admission_get_stats(p->ctx, &s);
    const uint64_t outcomes[PO_N] = {[PO_PLACED] = s.placed,   [PO_GATED] = s.gated,
                                     [PO_DENIED] = s.denied,   [PO_IGNORED] = s.ignored,
                                     [PO_PASSED] = s.passed,   [PO_UNGATED] = s.ungated};
    for (size_t i = 0; i < PO_N; i++)
        topo_metrics_set(p->outcomes[i], (int64_t)outcomes[i]);
    for (size_t i = 0; i < TOPO_ADMISSION_REPLACE_OUTCOMES; i++)
        topo_metrics_set(p->replacements[i], (int64_t)s.node_replacements[i]);
    if (p->packed != NULL) {
        topo_metrics_set(p->packed, (int64_t)s.packed);
        for (size_t i = 0; i < TOPO_ADMISSION_PACK_REASONS; i++)
            topo_metrics_set(p->pack_passed[i], (int64_t)s.pack_passed[i]);
    }
    v[PM_RESERVED] = (int64_t)s.reserved;
    v[PM_ERRORS] = (int64_t)s.errors;
    v[PM_INVALID] = (int64_t)s.invalid;
    v[PM_UNKNOWN_LEVEL] = (int64_t)s.unknown_level;
    v[PM_FOREIGN_ANNOTATIONS] = (int64_t)s.foreign_annotations;
    v[PM_FAILING] = (int64_t)s.failing;
    v[PM_TIMED_OUT] = (int64_t)s.timed_out;
    v[PM_RESERVATIONS] = (int64_t)s.reservations;
    v[PM_CACHE_RECREATED] = (int64_t)p->cache_recreated;
    v[PM_CACHE_AGE] = p->is_static ? 0 : topo_clock_ns() / 1000000000 - atomic_load(&p->last_change);
    if (p->filler != NULL) {
        topo_filler_stats fs;
        topo_filler_get_stats(p->filler, &fs);
        v[PM_CACHE_EVENTS] = (int64_t)fs.events;
        v[PM_CACHE_ERRORS] = (int64_t)fs.errors;
        v[PM_ADOPTED] = (int64_t)fs.adopted;
        v[PM_FOREIGN_CLAIMS] = (int64_t)fs.foreign_claims;
    }
    if (p->quota != NULL) {
        v[PM_QUOTA_SYNCED] = wh_quota_synced(p->quota);
        v[PM_QUOTA_NAMESPACES] = (int64_t)wh_quota_namespaces(p->quota);
    }
    if (p->ungater != NULL) {
        wh_ungater_stats us;
        wh_ungater_get_stats(p->ungater, &us);
        v[PM_UNGATED] = (int64_t)us.ungated;
        v[PM_GATED_WAITING] = (int64_t)us.waiting;
        v[PM_GATED_OLDEST] = gated_age(us.oldest_waiting_created);
        v[PM_UNGATER_ERRORS] = (int64_t)us.errors;
        v[PM_UNGATER_LEADER] = us.leader;
        v[PM_PLACER] = wh_ungater_placer(p->ungater, NULL, 0, NULL) == TOPO_UNGATER_PLACER_SELF;
        v[PM_TAKEOVERS] = (int64_t)us.takeovers;
        v[PM_SETTLE] = us.last_settle_ms / 1000;
        v[PM_UNGATER_SKIPPED] = (int64_t)us.skipped;
        v[PM_UNGATER_REMEMBERED] = (int64_t)us.remembered;
        v[PM_UNGATER_LAST_ROUND] = us.last_round_us;
        topo_metrics_set(p->events[PE_CREATED], (int64_t)us.events_created);
        topo_metrics_set(p->events[PE_FAILED], (int64_t)us.events_failed);
        topo_metrics_set(p->events[PE_DROPPED], (int64_t)(s.events_dropped + us.events_dropped));
        topo_metrics_set(p->events[PE_DEFERRED], (int64_t)us.events_deferred);
        v[PM_STRANDED_FAILED] = (int64_t)us.stranded_failed;
        v[PM_STRANDED_ERRORS] = (int64_t)us.stranded_errors;
    }
    if (p->placer != NULL) {
        wh_placer_stats ps;
        wh_placer_get_stats(p->placer, &ps);
        for (size_t i = 0; i < WH_FWD_OUTCOMES; i++)
            if (p->forwarded[i] != NULL)
                topo_metrics_set(p->forwarded[i], (int64_t)ps.forwarded[i]);
        v[PM_FORWARD_SECONDS] = (int64_t)ps.forward_us_sum;
        v[PM_CIRCUIT_OPEN] = ps.circuit_open;
        v[PM_CIRCUIT_OPENINGS] = (int64_t)ps.circuit_openings;
    }
    for (size_t i = 0; i < PM_N; i++)
        topo_metrics_set(p->series[i], v[i]);
}

/* The registry, once every component is there: a metric whose component
 * this replica does not run is not listed at all. */
static int metrics_init(wh_placement *p, topo_err *err)
{
    static const char *const outcome[] = {"outcome"};
    static const char *const ns_resource[] = {"namespace", "resource"};
    topo_metrics_family *f;
    if (topo_metrics_create(&p->metrics, 0, err) != 0 ||
        topo_metrics_counter(p->metrics, &f, "topo_webhook_admissions_total",
                             "Topology pods and other requests by outcome.", outcome, 1,
                             err) != 0)
        return -1;
    for (size_t i = 0; i < PO_N; i++) {
        const char *v[] = {po_names[i]};
        if ((p->outcomes[i] = topo_metrics_get(f, v)) == NULL)
            return topo_err_nomem(err, "metrics");
    }
    if (topo_metrics_counter(p->metrics, &f, "topo_webhook_node_replacements_total",
                             "Pods whose slot's node failed or cannot take them, by outcome: "
                             "replaced (the slots moved to another node of the domain), no_room "
                             "(none fits: the no-fit policy), waiting (the PodSet's pods still "
                             "run there), fail_fast (none fits, the pod refused: "
                             "nodeReplacement.failFast), new (a single-Pod PodSet placed anew); "
                             "no_room, waiting and fail_fast once per slot every 5 minutes.",
                             outcome, 1, err) != 0)
        return -1;
    for (size_t i = 0; i < TOPO_ADMISSION_REPLACE_OUTCOMES; i++) {
        const char *v[] = {topo_admission_replace_outcome_names[i]};
        if ((p->replacements[i] = topo_metrics_get(f, v)) == NULL)
            return topo_err_nomem(err, "metrics");
    }
    if (topo_admission_config_packing(p->cfg) != NULL) {
        static const char *const outcome_reason[] = {"outcome", "reason"};
        static const char *const packed[] = {"packed", ""};
        if (topo_metrics_counter(p->metrics, &f, "topo_webhook_packing_pods_total",
                                 "Pods without a topology request that request a packed "
                                 "resource: packed (steered toward domains in use), or passed "
                                 "unchanged by reason (pinned, daemonset, namespace, "
                                 "unsupported, no-room, not-ready).",
                                 outcome_reason, 2, err) != 0)
            return -1;
        if ((p->packed = topo_metrics_get(f, packed)) == NULL)
            return topo_err_nomem(err, "metrics");
        for (size_t i = 0; i < TOPO_ADMISSION_PACK_REASONS; i++) {
            const char *v[] = {"passed", topo_admission_pack_reason_names[i]};
            if ((p->pack_passed[i] = topo_metrics_get(f, v)) == NULL)
                return topo_err_nomem(err, "metrics");
        }
    }
    const int present[] = {[PM_ALWAYS] = 1,
                           [PM_FILLER] = p->filler != NULL,
                           [PM_QUOTA] = p->quota != NULL,
                           [PM_UNGATER] = p->ungater != NULL};
    for (size_t i = 0; i < PM_N; i++) {
        if (!present[pm_table[i].needs])
            continue;
        if (i == PM_REFLECTOR_FAILURES) {
            static const char *const resource_reason[] = {"resource", "reason"};
            if (topo_metrics_collected(p->metrics, NULL, pm_table[i].type, pm_table[i].name,
                                       pm_table[i].help, resource_reason, 2, collect_failures, p,
                                       err) != 0)
                return -1;
            continue;
        }
        if (i == PM_UNCLAIMED) {
            if (topo_metrics_collected(p->metrics, NULL, pm_table[i].type, pm_table[i].name,
                                       pm_table[i].help, ns_resource, 2, collect_unclaimed, p,
                                       err) != 0)
                return -1;
            continue;
        }
        int rc = pm_table[i].type == TOPO_METRICS_COUNTER
                     ? topo_metrics_counter(p->metrics, &f, pm_table[i].name, pm_table[i].help,
                                            NULL, 0, err)
                     : topo_metrics_gauge(p->metrics, &f, pm_table[i].name, pm_table[i].help,
                                          NULL, 0, err);
        if (rc != 0)
            return -1;
        p->series[i] = topo_metrics_get(f, NULL);
    }
    if (p->ungater != NULL) {
        if (topo_metrics_counter(p->metrics, &f, "topo_webhook_forwarded_total",
                                 "Topology requests this replica did not place itself, by how "
                                 "they ended: answered by the placer, or answered here by the "
                                 "no-fit policy (no_placer, unreachable, refused, deadline: no "
                                 "answer within the request's time, circuit_open: not asked, "
                                 "the placer kept failing, busy: not asked, too many waiting, "
                                 "invalid: its answer was no AdmissionReview for the request); "
                                 "not_placer: forwarded here by a replica that took this one "
                                 "for the placer.",
                                 outcome, 1, err) != 0)
            return -1;
        for (size_t i = 0; i < WH_FWD_OUTCOMES; i++) {
            const char *v[] = {wh_forward_outcome_names[i]};
            if ((p->forwarded[i] = topo_metrics_get(f, v)) == NULL)
                return topo_err_nomem(err, "metrics");
        }
        static const char *const result[] = {"result"};
        if (topo_metrics_counter(p->metrics, &f, "topo_webhook_events_total",
                                 "Kubernetes Events on pods (why a gated pod waits, that it was "
                                 "placed; a failed node replaced, or not): created, failed (the "
                                 "POST or the wait-reason PATCH was refused or unanswered; "
                                 "logged), dropped (their pod not seen within 60 s, over 256 "
                                 "queued, or over 1024 PodSets with a new reason), deferred (a "
                                 "gated pod's new reason left for a later round: over 32 per "
                                 "round, counted each round it waits).",
                                 result, 1, err) != 0)
            return -1;
        for (size_t i = 0; i < PE_N; i++) {
            const char *v[] = {pe_names[i]};
            if ((p->events[i] = topo_metrics_get(f, v)) == NULL)
                return topo_err_nomem(err, "metrics");
        }
        /* From a millisecond (nothing to evaluate) to the seconds a
         * backlog evaluated through the API server takes. */
        static const double round_bounds[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                              0.25,  0.5,   1,    2.5,   5,    10};
        topo_metrics_series *h;
        if (topo_metrics_histogram(p->metrics, &f, "topo_webhook_ungater_round_seconds",
                                   "How long each round of the ungater took (reading the cache, "
                                   "the PodSets it evaluated, their API calls).",
                                   NULL, 0, round_bounds,
                                   sizeof round_bounds / sizeof round_bounds[0], err) != 0)
            return -1;
        if ((h = topo_metrics_get(f, NULL)) == NULL)
            return topo_err_nomem(err, "metrics");
        wh_ungater_observe_rounds(p->ungater, h);
    }
    return topo_metrics_on_render(p->metrics, metrics_refresh, p, err) != 0 ? -1 : 0;
}

char *wh_placement_metrics(void *payload)
{
    wh_placement *p = payload;
    return topo_metrics_render(p->metrics);
}

void wh_placement_free(wh_placement *p)
{
    if (p == NULL)
        return;
    /* Users of the ctx first, then the ctx, then what it borrows. */
    wh_placer_free(p->placer);
    wh_ungater_free(p->ungater);
    p->stop = 1;
    if (p->filler_started)
        pthread_join(p->filler_thread, NULL);
    topo_filler_free(p->filler);
    wh_ns_policy_free(p->ns);
    wh_quota_free(p->quota);
    topo_metrics_free(p->metrics);
    topo_admission_ctx_free(p->ctx);
    topo_cache_close(p->cache);
    topo_cache_close(p->checkpointer);
    for (size_t i = 0; p->lives != NULL && i < p->ntopos; i++)
        topo_live_free(p->lives[i]);
    free(p->lives);
    free(p->topos);
    topo_k8s_config_dispose(&p->k8s);
    free(p);
}
