/* topo-sync's controller (controller.h): the threads and the reconcile
 * loop. Threads: the node reflector (nodes.h), the source refresher
 * (sources.h), the Lease elector, and this loop, which alone plans and
 * writes. Each thread has its own API client (a topo_k8s is one thread's). */
#define _POSIX_C_SOURCE 200809L

#include "controller.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outputs.h"
#include "apply.h"
#include "configmap.h"
#include "kueue.h"
#include "nodes.h"
#include "sources.h"
#include "topo/backoff.h"
#include "topo/clock.h"
#include "topo/gpu.h"
#include "topo/k8s.h"
#include "topo/kueue_names.h"
#include "topo/labeldiff.h"
#include "topo/log.h"
#include "topo/metrics.h"
#include "topo/probe.h"
#include "topo/reflector.h"
#include "topo/view.h"
#include "topo/sync.h"
#include "topo/version.h"

typedef struct ctl {
    const ctl_opts *o;
    const atomic_int *stop;
    topo_k8s_config cfg;
    topo_k8s *k_nodes, *k_write, *k_lease;
    topo_metrics *metrics;
    topo_view *nodes;
    ctl_sources *sources;
    topo_leader *leader;
    ctl_apply *apply;
    topo_probe *health, *metrics_port; /* metrics_port: when it differs from health's */
    pthread_t leader_thread;
    int leader_started;
    atomic_int leader_stop;
    _Atomic uint64_t sources_gen; /* bumped by the refresher on new facts */
    int kueue_refused, kueue_served; /* what was last said of Kueue's objects */
    int only_deferred;               /* the last round wrote nothing but deferred a reassertion */
    topo_metrics_family *m_plan_ms, *m_nodes, *m_missing, *m_hosts, *m_rounds, *m_leader;
    topo_metrics_family *m_configmap; /* the export ConfigMap's outcomes */
    topo_reflector_failures node_failures; /* the node reflector's, by reason */
    /* The node view's kept keys (make_nodes). */
    ctl_owned owned;
    const char *label_keys[8];
    ctl_nodes_keep keep;
} ctl;

/* The calling thread's CPU time in ms: what a round itself costs, whatever
 * the reflector's and the refresher's threads do meanwhile. */
static double cpu_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------ threads */

static void on_leader(int is_leader, void *payload)
{
    ctl *c = payload;
    topo_log(TOPO_LOG_INFO, "leader election: %s", is_leader ? "leading" : "not leading");
    topo_metrics_set(topo_metrics_get(c->m_leader, NULL), is_leader);
    topo_view_wake(c->nodes);
}

static void *leader_main(void *arg)
{
    ctl *c = arg;
    topo_err err = TOPO_ERR_INIT;
    if (topo_leader_run(c->leader, &c->leader_stop, on_leader, c, &err) != 0)
        topo_log(TOPO_LOG_ERROR, "leader election: %s", err.text);
    return NULL;
}

/* New facts from a source: a round, as for a change in the node set. */
static void source_changed(void *payload)
{
    ctl *c = payload;
    atomic_fetch_add(&c->sources_gen, 1);
    topo_view_wake(c->nodes);
}

/* ------------------------------------------------------------------ set-up */

/* topo_sync_rounds_total's outcomes, in the order reconcile's result picks. */
static const char *const round_outcomes[] = {"ok", "failed", "error"};

/* One metric family topo-sync serves: where its handle goes and what it is. */
typedef struct metric_row {
    topo_metrics_family **out;
    int counter;       /* else a gauge */
    const char *label; /* its one label, or NULL */
    const char *name, *help;
} metric_row;

/* Every reason at every render, 0 included: an alert on its rate sees a
 * series from the start. */
static int collect_failures(void *payload, topo_metrics_sink *sink)
{
    const ctl *c = payload;
    int rc = 0;
    for (int i = 0; rc == 0 && i < TOPO_REFLECTOR_REASONS; i++) {
        topo_reflector_reason why = (topo_reflector_reason)i;
        const char *v[] = {"nodes", topo_reflector_reason_name(why)};
        rc = topo_metrics_emit(sink, v,
                               (int64_t)topo_reflector_failures_get(&c->node_failures, why));
    }
    return rc;
}

static int register_metrics(ctl *c, topo_err *err)
{
    /* In the order /metrics lists them. */
    const metric_row rows[] = {
        {&c->m_plan_ms, 0, NULL, "topo_sync_plan_milliseconds",
         "How long the last plan took to compute."},
        {&c->m_nodes, 0, "state", "topo_sync_nodes",
         "Nodes of the last plan, by state (planned, incomplete, conflicts)."},
        {&c->m_hosts, 0, "state", "topo_sync_hosts",
         "Host names of the last plan's sources that label no node, by state (unmappable: the "
         "name map refuses them; not_a_node: no node has the name; ambiguous: the short name "
         "matches several nodes)."},
        {&c->m_missing, 0, "level", "topo_sync_level_missing_nodes",
         "Nodes of the last plan that no source gives a value of this level of the topology "
         "(held when it is more than half: the log says why and which setting fixes it)."},
        {&c->m_rounds, 1, "outcome", "topo_sync_rounds_total",
         "Reconcile rounds run, by outcome (ok; failed: a write, Kueue's objects or an export "
         "failed; error: no plan could be made or the writes could not start)."},
        {&c->m_configmap, 1, "outcome", "topo_sync_configmap_exports_total",
         "Exports to the --export-configmap ConfigMap, by outcome (created, updated, "
         "unchanged; not_owned: it exists without topo-sync's marker and is left alone; "
         "failed)."},
        {&c->m_leader, 0, NULL, "topo_sync_leader",
         "1 while this replica holds the Lease (and may write)."},
    };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(rows) / sizeof(*rows); i++) {
        const metric_row *r = &rows[i];
        size_t nlabels = r->label != NULL ? 1 : 0;
        rc = r->counter
                 ? topo_metrics_counter(c->metrics, r->out, r->name, r->help, &r->label, nlabels,
                                        err)
                 : topo_metrics_gauge(c->metrics, r->out, r->name, r->help, &r->label, nlabels,
                                      err);
    }
    static const char *const failure_labels[] = {"resource", "reason"};
    if (rc == 0)
        rc = topo_metrics_collected(
            c->metrics, NULL, TOPO_METRICS_COUNTER, "topo_sync_reflector_failures_total",
            "Failed lists and watches of the node reflector, by resource and reason (gone: 410 "
            "to a list; throttled, server, forbidden, unauthorized, not_found, timeout, "
            "connect, other); each is retried after a backoff and logged.",
            failure_labels, 2, collect_failures, c, err);
    /* Each outcome served from the start, at 0: a replica that never
     * completes a round (no source ever answered) shows an ok count that
     * does not grow, which an alert can see; an absent series it could not. */
    for (size_t i = 0; rc == 0 && i < sizeof(round_outcomes) / sizeof(*round_outcomes); i++)
        if (topo_metrics_get(c->m_rounds, &round_outcomes[i]) == NULL)
            rc = topo_err_nomem(err, "metrics");
    return rc;
}

static int make_clients(ctl *c, topo_err *err)
{
    topo_k8s_opts ko = {.user_agent = "topo-sync/" TOPO_VERSION};
    topo_k8s_opts wo = ko;
    wo.qps = c->o->qps;
    wo.burst = c->o->burst;
    int rc = topo_k8s_config_load(&c->cfg, c->o->kubeconfig, err);
    if (rc != 0)
        return TOPO_EINVALID; /* no or a bad configuration: exit 2, as bad flags */
    rc = topo_k8s_create(&c->k_nodes, &c->cfg, &ko, err);
    if (rc == 0)
        rc = topo_k8s_create(&c->k_write, &c->cfg, &wo, err);
    if (rc == 0 && c->o->leader_elect && !c->o->once)
        rc = topo_k8s_create(&c->k_lease, &c->cfg, &ko, err);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "API server %s (%s)", c->cfg.server, c->cfg.source);
    return rc;
}

/* The Node view keeps what a round reads (nodes.h): the labels the writer
 * owns (ctl_apply_owned: the prefix, and topograph's keys when the plan
 * mirrors them), the owned annotations (under the prefix: the record and
 * the provenance, plan.h), and the labels the GPU facts come from (gpu.h:
 * GFD's clique, count, product and present labels, the hostname). Any
 * other label is dropped: less memory, and its changes wake no round. */
static int make_nodes(ctl *c, topo_err *err)
{
    const topo_plan_opts *po = &c->o->settings->plan;
    ctl_apply_owned(&c->owned, po->prefix ? po->prefix : TOPO_PLAN_DEFAULT_PREFIX,
                     po->topograph);
    size_t nk = 0;
    c->label_keys[nk++] = TOPO_GPU_CLIQUE_LABEL;
    c->label_keys[nk++] = "nvidia.com/gpu.count";
    c->label_keys[nk++] = "nvidia.com/gpu.product";
    c->label_keys[nk++] = "nvidia.com/gpu.present";
    c->label_keys[nk++] = TOPO_KUEUE_HOSTNAME_LABEL;
    c->keep = (ctl_nodes_keep){.label_prefixes = c->owned.prefixes,
                                .nlabel_prefixes = c->owned.nprefixes,
                                .label_keys = c->label_keys,
                                .nlabel_keys = nk,
                                .label_topograph = c->owned.topograph,
                                .annotation_prefixes = c->owned.prefixes,
                                .nannotation_prefixes = c->owned.nprefixes};
    /* Metadata only: a round reads a Node's name, uid, labels and
     * annotations (nodes.h), and a whole Node is mostly status (its images
     * alone tens of kilobytes): the API server sends, and this process
     * parses, a fraction of it (docs/sync.md "topo-sync, the controller"). */
    topo_reflector_opts ro = {.name = "nodes",
                              .res = &topo_k8s_nodes,
                              .metadata_only = 1,
                              .failures = &c->node_failures};
    return topo_view_create(&c->nodes, c->k_nodes, &ro, &ctl_nodes_ops, &c->keep, err);
}

static int make_sources(ctl *c, topo_err *err)
{
    ctl_sources_opts so = {.settings = c->o->settings,
                            .interval_ms = c->o->source_interval_ms,
                            .stale_ms = c->o->stale_ms,
                            .min_hosts_percent = c->o->min_hosts_percent,
                            .db = c->o->db,
                            .metrics = c->metrics,
                            .changed = source_changed,
                            .payload = c};
    return ctl_sources_create(&c->sources, &so, err);
}

static int make_leader(ctl *c, topo_err *err)
{
    if (!c->o->leader_elect || c->o->once)
        return 0;
    /* A lease of L: renew deadline 2L/3 and retry 2L/15, client-go's
     * 15 s / 10 s / 2 s scaled (0: those defaults). */
    topo_leader_opts lo = {.lease_namespace = c->o->lease_namespace,
                           .lease_name = c->o->lease_name,
                           .lease_ms = c->o->lease_ms,
                           .renew_deadline_ms = c->o->lease_ms * 2 / 3,
                           .retry_ms = c->o->lease_ms * 2 / 15,
                           .release_on_stop = 1};
    int rc = topo_leader_create(&c->leader, c->k_lease, &lo, err);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "leader election: Lease %s, identity %s", c->o->lease_name,
                 topo_leader_identity(c->leader));
    return rc;
}

/* The readiness checks: nodes listed, and every configured source read
 * once (its facts fetched now or kept from before). */
static const char *const ready_checks[] = {"nodes-listed", "sources-answered"};

static int make_probes(ctl *c, topo_err *err)
{
    if (c->o->once || c->o->health_port == 0)
        return 0;
    topo_probe_opts po = {.address = c->o->health_address,
                          .port = (int)c->o->health_port,
                          .metrics = c->o->metrics_port == c->o->health_port ? c->metrics : NULL,
                          .ready_checks = ready_checks,
                          .nready_checks = 2};
    int rc = topo_probe_start(&c->health, &po, err);
    if (rc == 0 && c->o->metrics_port && c->o->metrics_port != c->o->health_port) {
        topo_probe_opts mo = {.address = c->o->health_address,
                              .port = (int)c->o->metrics_port,
                              .metrics_only = 1,
                              .metrics = c->metrics};
        rc = topo_probe_start(&c->metrics_port, &mo, err);
    }
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "health on port %d, metrics on port %d",
                 topo_probe_port(c->health),
                 c->metrics_port ? topo_probe_port(c->metrics_port) : topo_probe_port(c->health));
    return rc;
}

static void teardown(ctl *c)
{
    topo_probe_stopping(c->health);
    topo_view_stop(c->nodes);
    if (c->leader_started) {
        atomic_store(&c->leader_stop, 1);
        pthread_join(c->leader_thread, NULL);
    }
    topo_probe_free(c->metrics_port);
    topo_probe_free(c->health);
    ctl_sources_free(c->sources);
    ctl_apply_free(c->apply);
    topo_leader_free(c->leader);
    topo_view_free(c->nodes);
    topo_metrics_free(c->metrics);
    topo_k8s_free(c->k_nodes);
    topo_k8s_free(c->k_write);
    topo_k8s_free(c->k_lease);
    topo_k8s_config_dispose(&c->cfg);
}

/* ------------------------------------------------------------------ a round */

/* GPU facts from the Node view: every node a host, its NVLink domain from
 * GFD's labels (topo/gpu.h). */
static int gpu_facts(topo_facts **out, const json_t *view, topo_err *err)
{
    int rc = topo_facts_create(out, "gpu", err);
    const char *name;
    json_t *node;
    json_object_foreach ((json_t *)view, name, node) {
        if (rc != 0)
            break;
        json_t *obj = json_pack("{s:{s:s, s:O}}", "metadata", "name", name, "labels",
                                json_object_get(node, "labels"));
        if (!obj)
            return topo_err_nomem(err, "nodes");
        rc = topo_gpu_add_node(NULL, *out, obj, name, err);
        json_decref(obj);
        if (rc == TOPO_EINVALID || rc == TOPO_ECONFLICT) {
            topo_log(TOPO_LOG_WARN, "node %s: %s", name, err->text);
            rc = 0; /* one node's bad label does not stop the others' plan */
        }
    }
    return rc;
}

/* Per level, the nodes it misses: 0 for a level outside the topology, so
 * a level dropped from it does not keep its last count. */
static void set_missing(ctl *c, const topo_plan *plan)
{
    for (int l = 0; l < TOPO_LEVEL_COUNT; l++) {
        const char *name = topo_level_name((topo_level)l);
        if (l != TOPO_LEVEL_HOSTNAME)
            topo_metrics_set(topo_metrics_get(c->m_missing, &name),
                             (int64_t)topo_plan_level_missing(plan, (topo_level)l));
    }
}

static int plan_round(ctl *c, topo_sync **out, json_t **view_out, topo_err *err)
{
    topo_facts *facts[TOPO_SYNC_SOURCE_COUNT];
    topo_facts *gpu = NULL;
    int64_t t0 = topo_clock_ms();
    json_t *view = ctl_nodes_snapshot(c->nodes, NULL);
    if (!view)
        return topo_err_nomem(err, "nodes");
    int rc = gpu_facts(&gpu, view, err);
    if (rc == 0) {
        ctl_sources_lock(c->sources, facts);
        facts[TOPO_SYNC_GPU] = gpu;
        rc = topo_sync_fuse(out, c->o->settings, facts, err);
        ctl_sources_unlock(c->sources);
    }
    topo_facts_free(gpu);
    if (rc != 0) {
        json_decref(view);
        return rc;
    }
    const topo_plan *plan = topo_sync_plan(*out);
    topo_metrics_set(topo_metrics_get(c->m_plan_ms, NULL), topo_clock_ms() - t0);
    topo_metrics_set(topo_metrics_get(c->m_nodes, (const char *[]){"planned"}),
                     (int64_t)topo_plan_node_count(plan));
    topo_metrics_set(topo_metrics_get(c->m_nodes, (const char *[]){"incomplete"}),
                     (int64_t)topo_plan_incomplete_count(plan));
    topo_metrics_set(topo_metrics_get(c->m_nodes, (const char *[]){"conflicts"}),
                     (int64_t)topo_plan_conflict_count(plan));
    set_missing(c, plan);
    topo_metrics_set(topo_metrics_get(c->m_hosts, (const char *[]){"unmappable"}),
                     (int64_t)topo_plan_unmapped_hosts(plan));
    topo_metrics_set(topo_metrics_get(c->m_hosts, (const char *[]){"not_a_node"}),
                     (int64_t)topo_plan_unknown_hosts(plan));
    topo_metrics_set(topo_metrics_get(c->m_hosts, (const char *[]){"ambiguous"}),
                     (int64_t)topo_plan_ambiguous_count(plan));
    *view_out = view;
    return 0;
}

static int may_write(ctl *c);

/* Kueue's objects, when its CRDs are served. A plan Kueue cannot take (no
 * datacenter level and no flavor labels) is said once, not every round.
 * 1 when an object could not be written (someone else's of the same name,
 * or a failed request): a failed write for --once's exit status. */
static int apply_kueue(ctl *c, const topo_plan *plan)
{
    ctl_kueue_result r;
    topo_err err = TOPO_ERR_INIT;
    int rc = ctl_kueue_apply(c->k_write, plan, &c->o->settings->kueue, c->o->dry_run, &r, &err);
    if (rc == TOPO_EINVALID && !c->kueue_refused)
        topo_log(TOPO_LOG_WARN, "kueue: no objects: %s", err.text);
    else if (rc != 0 && rc != TOPO_EINVALID && !r.served)
        topo_log(TOPO_LOG_WARN, "kueue: %s", err.text); /* each object's own is logged */
    c->kueue_refused = rc == TOPO_EINVALID;
    if (rc == 0 && r.served != c->kueue_served)
        topo_log(TOPO_LOG_INFO, "kueue: CRDs %s", r.served ? "served: objects applied"
                                                            : "not served: no objects");
    if (rc == 0)
        c->kueue_served = r.served;
    return r.not_owned > 0 || (r.served && r.failed > 0);
}

/* Before each write: no stop asked, and (leader election on) the Lease
 * still held, so a replica that lost it stops before another takes it. */
static int keep_writing(void *payload)
{
    ctl *c = payload;
    return !atomic_load(c->stop) && (c->o->dry_run || may_write(c));
}

/* One round: plan, write what differs (when allowed), export. Returns 0,
 * or 1 when some write failed; a plan that cannot be built is an error. */
static int reconcile_round(ctl *c, int may_write, topo_err *err)
{
    topo_sync *sync = NULL;
    json_t *view = NULL;
    double cpu0 = cpu_ms();
    int rc = plan_round(c, &sync, &view, err);
    if (rc != 0)
        return rc;
    const topo_plan *plan = topo_sync_plan(sync);
    int failed = 0;
    if (may_write || c->o->dry_run) {
        ctl_apply_result r;
        double cpu1 = cpu_ms();
        int64_t t1 = topo_clock_ms();
        if ((rc = ctl_apply_round(c->apply, plan, view, keep_writing, c, &r, err)) != 0) {
            json_decref(view);
            topo_sync_free(sync);
            return rc;
        }
        /* CPU of the plan (snapshot, GPU facts, fusion) and of the writes
         * (diffs, patches): the cost of a converged round (bench/README.md). */
        topo_log(TOPO_LOG_INFO,
                 "round: %zu nodes patched, %zu converged, %zu held, %zu gone, %zu failed, "
                 "%zu deferred (drift backoff)%s; CPU: plan %.0f ms, writes %.0f ms; writes "
                 "took %lld ms",
                 r.dry_run ? r.dry_run : r.patched, r.converged, r.held, r.gone, r.failed,
                 r.deferred, r.dry_run ? " (dry run: patches logged, not sent)" : "", cpu1 - cpu0,
                 cpu_ms() - cpu1, (long long)(topo_clock_ms() - t1));
        failed = r.failed > 0 || r.stopped;
        c->only_deferred = r.deferred > 0 && r.patched == 0 && r.failed == 0;
    }
    /* --once is a check too: a round that labels nothing because a level
     * is missing everywhere is not "converged" (the log says which). */
    if (c->o->once && topo_sync_held_levels(plan) > 0)
        failed = 1;
    if (c->o->once && (c->o->print_labels || c->o->print_annotations || c->o->print_plan) &&
        ctl_print(plan, c->o->print_labels, c->o->print_annotations, c->o->print_plan) != 0)
        failed = 1;
    if ((may_write || c->o->dry_run) && c->o->kueue_objects)
        failed |= apply_kueue(c, plan);
    if ((may_write || c->o->dry_run) && c->o->export_configmap) {
        ctl_configmap_outcome co;
        topo_err e = TOPO_ERR_INIT;
        static const char *const outcomes[] = {"unchanged", "created", "updated", "not_owned",
                                               "failed"};
        if (ctl_configmap_apply(c->k_write, c->o->export_configmap, plan, &c->o->settings->kueue,
                                 c->o->dry_run, &co, &e) != 0) {
            topo_log(co == SYNC_CONFIGMAP_NOT_OWNED ? TOPO_LOG_ERROR : TOPO_LOG_WARN, "%s",
                     e.text);
            failed = 1;
        }
        topo_metrics_add(topo_metrics_get(c->m_configmap, &outcomes[co]), 1);
    }
    if (ctl_exports_write(plan,
                           &(ctl_exports){c->o->export_kueue, c->o->export_slurm_tree,
                                           c->o->export_slurm_block, c->o->export_volcano,
                                           &c->o->settings->kueue},
                           err) != 0) {
        topo_log(TOPO_LOG_WARN, "exports: %s", err->text);
        failed = 1;
    }
    json_decref(view);
    topo_sync_free(sync);
    return failed;
}

/* A round, counted by its outcome: an alert tells rounds that keep failing
 * from a source that is merely stale. */
static int reconcile(ctl *c, int may_write, topo_err *err)
{
    int rc = reconcile_round(c, may_write, err);
    topo_metrics_add(topo_metrics_get(c->m_rounds, &round_outcomes[rc == 0 ? 0 : rc > 0 ? 1 : 2]),
                     1);
    return rc;
}

/* ------------------------------------------------------------------ loops */

/* After a round whose only work was to put off a node's reassertion (a
 * fight over its labels), Node changes alone start no round for this long:
 * a writer that rewrites the label many times a second does not make as
 * many rounds. Sources, leadership and due reassertions are not held. */
#define ROUND_HOLD_MS 1000

/* The next resync, brought forward to when the earliest deferred
 * reassertion is due (at least 50 ms on). */
static int64_t reassertion_due(ctl *c, int64_t next_resync)
{
    long due_in = ctl_apply_due_in_ms(c->apply);
    if (due_in < 0)
        return next_resync;
    int64_t at = topo_clock_ms() + (due_in < 50 ? 50 : due_in);
    return at < next_resync ? at : next_resync;
}

static int run_once(ctl *c)
{
    topo_err err = TOPO_ERR_INIT;
    double cpu0 = cpu_ms();
    int64_t t0 = topo_clock_ms();
    /* The sources before the list: a large dump's parse then holds its
     * transient records while the Node view is not yet there (the peak
     * RSS, bench/README.md "bench/sync"). A source that fails now but left
     * good facts in the cache file plans from those (logged); one with none
     * stops the round. */
    if (ctl_sources_read_all(c->sources, &err) != 0 && !ctl_sources_ready(c->sources)) {
        topo_log(TOPO_LOG_ERROR, "sources: %s", err.text);
        return err.code == TOPO_EINVALID ? SYNC_EXIT_BAD_INPUT : SYNC_EXIT_FAILED;
    }
    double cpu1 = cpu_ms();
    int64_t t1 = topo_clock_ms();
    if (topo_view_list(c->nodes, &err) != 0 || !topo_view_synced(c->nodes)) {
        topo_log(TOPO_LOG_ERROR, "nodes: %s", err.code ? err.text : "stopped before the list");
        return SYNC_EXIT_FAILED;
    }
    topo_log(TOPO_LOG_INFO, "once: nodes listed in %lld ms (%.0f ms CPU), sources read in %lld ms "
             "(%.0f ms CPU)", (long long)(topo_clock_ms() - t1), cpu_ms() - cpu1, (long long)(t1 - t0),
             cpu1 - cpu0);
    int rc = reconcile(c, !c->o->dry_run, &err);
    if (rc < 0) {
        topo_log(TOPO_LOG_ERROR, "plan: %s", err.text);
        return SYNC_EXIT_BAD_INPUT;
    }
    return rc == 0 ? SYNC_EXIT_OK : SYNC_EXIT_FAILED;
}

static int may_write(ctl *c)
{
    if (c->o->dry_run)
        return 0;
    return !c->leader || topo_leader_is_leader(c->leader, topo_clock_ms());
}

static int run_loop(ctl *c)
{
    topo_err err = TOPO_ERR_INIT;
    if (topo_view_start(c->nodes, &err) != 0)
        return SYNC_EXIT_FAILED;
    if (c->leader) {
        if (pthread_create(&c->leader_thread, NULL, leader_main, c) != 0)
            return SYNC_EXIT_FAILED;
        c->leader_started = 1;
    }
    if (ctl_sources_start(c->sources, &err) != 0) {
        topo_log(TOPO_LOG_ERROR, "%s", err.text);
        return SYNC_EXIT_FAILED;
    }
    uint64_t seen = 0, seen_sources = 0, rng = (uint64_t)topo_clock_ms();
    unsigned failures = 0;
    int64_t next_resync = 0, hold_until = 0;
    int was_writer = 0;
    while (!atomic_load(c->stop)) {
        int64_t now = topo_clock_ms();
        int writer = may_write(c);
        uint64_t gen = topo_view_generation(c->nodes);
        uint64_t sources = atomic_load(&c->sources_gen);
        int other = sources != seen_sources || now >= next_resync || writer != was_writer;
        int held = gen != seen && now < hold_until && !other;
        int due = (gen != seen && !held) || other;
        int listed = topo_view_synced(c->nodes), answered = ctl_sources_ready(c->sources);
        if (c->health) {
            topo_probe_set_check(c->health, "nodes-listed", listed);
            topo_probe_set_check(c->health, "sources-answered", answered);
        }
        if (due && listed && answered) {
            int rc = reconcile(c, writer, &err);
            if (rc < 0)
                topo_log(TOPO_LOG_ERROR, "plan: %s; the labels stay as they are", err.text);
            seen = gen;
            seen_sources = sources;
            was_writer = writer;
            /* Failed writes are retried sooner than a resync, backing off. */
            failures = rc != 0 ? failures + 1 : 0;
            long wait = failures ? topo_backoff_ms(1000, c->o->resync_ms, (int)failures - 1, &rng)
                                 : c->o->resync_ms;
            next_resync = reassertion_due(c, topo_clock_ms() + wait);
            hold_until = c->only_deferred ? topo_clock_ms() + ROUND_HOLD_MS : 0;
        }
        /* Wake at least every second to notice a stop or a lost lease, and
         * when a deferred reassertion is due; held, for newer Node changes
         * or the hold's end. */
        int64_t deadline = topo_clock_ms() + 1000;
        if (next_resync < deadline)
            deadline = next_resync;
        if (held && hold_until < deadline)
            deadline = hold_until;
        topo_view_wait(c->nodes, held ? gen : seen, deadline);
    }
    topo_log(TOPO_LOG_INFO, "stopping");
    return SYNC_EXIT_OK;
}

int ctl_run(const ctl_opts *o, const atomic_int *stop)
{
    ctl c = {.o = o, .stop = stop};
    topo_err err = TOPO_ERR_INIT;
    atomic_init(&c.leader_stop, 0);
    atomic_init(&c.sources_gen, 0);
    int rc = topo_metrics_create(&c.metrics, 0, &err);
    if (rc == 0)
        rc = register_metrics(&c, &err);
    if (rc == 0)
        rc = make_clients(&c, &err);
    if (rc == 0)
        rc = make_nodes(&c, &err);
    if (rc == 0)
        rc = make_sources(&c, &err);
    if (rc == 0)
        rc = ctl_apply_create(&c.apply, c.k_write, o->dry_run, c.metrics, &err);
    if (rc == 0)
        rc = make_leader(&c, &err);
    if (rc == 0)
        rc = make_probes(&c, &err);
    int status;
    if (rc != 0) {
        topo_log(TOPO_LOG_ERROR, "%s", err.text);
        status = rc == TOPO_EINVALID || rc == TOPO_EUNSUPPORTED ? SYNC_EXIT_BAD_INPUT
                                                                 : SYNC_EXIT_FAILED;
    } else {
        status = o->once ? run_once(&c) : run_loop(&c);
    }
    teardown(&c);
    return status;
}
