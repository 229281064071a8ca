/* A plan applied to the cluster's nodes (apply.h). */
#include "apply.h"

#include <stdlib.h>
#include <string.h>

#include "topo/labeldiff.h"
#include "topo/labelwriter.h"
#include "topo/log.h"

struct ctl_apply {
    topo_labelwriter *writer;
    topo_metrics_family *m_writes;
    topo_metrics_family *m_backoff;
};

/* The writer's counters into the metrics at each render. */
static void copy_stats(void *payload)
{
    ctl_apply *a = payload;
    topo_labelwriter_stats st;
    topo_labelwriter_get_stats(a->writer, &st);
    static const char *const names[] = {
        "patched",          "failed",   "converged",    "held",          "gone",
        "dry_run",          "conflict", "drift_labels", "event_created", "event_failed",
        "event_aggregated", "invalid",  "deferred"};
    const uint64_t values[] = {st.patches_sent,  st.patches_failed,    st.converged,
                               st.held,          st.nodes_gone,        st.dry_run,
                               st.conflicts,     st.drift_labels,      st.events_created,
                               st.events_failed, st.events_aggregated, st.invalid,
                               st.deferred};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        topo_metrics_set(topo_metrics_get(a->m_writes, &names[i]), (int64_t)values[i]);
    topo_metrics_set(topo_metrics_get(a->m_backoff, NULL), (int64_t)st.backoff_nodes);
}

int ctl_apply_create(ctl_apply **out, topo_k8s *k, int dry_run, topo_metrics *metrics,
                      topo_err *err)
{
    static const char *const by_outcome[] = {"outcome"};
    *out = NULL;
    ctl_apply *a = calloc(1, sizeof(*a));
    if (!a)
        return topo_err_nomem(err, "apply");
    topo_labelwriter_opts wo = {.dry_run = dry_run};
    int rc = topo_labelwriter_create(&a->writer, k, &wo, err);
    if (rc == 0 && metrics)
        rc = topo_metrics_counter(metrics, &a->m_writes, "topo_sync_node_writes_total",
                                  "Nodes brought to the plan, by outcome (patched, failed, "
                                  "converged, held, gone, dry_run, deferred: a reassertion put "
                                  "off by the node's drift backoff), and conflicts, labels "
                                  "reasserted after drift, Events created, aggregated (a "
                                  "reassertion counted into its window's Event) and failed.",
                                  by_outcome, 1, err);
    if (rc == 0 && metrics)
        rc = topo_metrics_gauge(metrics, &a->m_backoff, "topo_sync_drift_backoff_nodes",
                                "Nodes whose owned labels were changed by someone else again "
                                "within their backoff: their reassertion waits (doubling, up "
                                "to 1 h).",
                                NULL, 0, err);
    if (rc == 0 && metrics)
        rc = topo_metrics_on_render(metrics, copy_stats, a, err);
    if (rc != 0) {
        ctl_apply_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void ctl_apply_free(ctl_apply *a)
{
    if (!a)
        return;
    topo_labelwriter_free(a->writer);
    free(a);
}

static void count(ctl_apply_result *res, topo_labelwriter_outcome o)
{
    switch (o) {
    case TOPO_LABELWRITER_CONVERGED:
        res->converged++;
        break;
    case TOPO_LABELWRITER_HELD:
        res->held++;
        break;
    case TOPO_LABELWRITER_PATCHED:
        res->patched++;
        break;
    case TOPO_LABELWRITER_GONE:
        res->gone++;
        break;
    case TOPO_LABELWRITER_DRY_RUN:
        res->dry_run++;
        break;
    case TOPO_LABELWRITER_DEFERRED:
        res->deferred++;
        break;
    default:
        res->failed++;
    }
}

void ctl_apply_owned(ctl_owned *out, const char *prefix, int topograph)
{
    *out = (ctl_owned){.prefixes = {prefix}, .nprefixes = 1, .topograph = topograph != 0};
}

/* One node: its labels and provenance annotation to the writer. A node
 * the plan gives no label (left out as incomplete) is held. */
static int apply_node(ctl_apply *a, const topo_plan *plan, size_t i, const json_t *node,
                      const topo_labeldiff_owned *owned, ctl_apply_result *res, topo_err *err)
{
    const char *name = topo_plan_node_name(plan, i);
    topo_kv labels[TOPO_PLAN_MAX_LABELS];
    size_t n = topo_plan_node_labels(plan, i, labels);
    char *provenance = NULL;
    if (topo_plan_node_provenance(&provenance, plan, i) != 0)
        return topo_err_nomem(err, "apply");
    topo_kv annotation = {topo_plan_provenance_key(plan), provenance};
    json_t *full = json_pack("{s:{s:s, s:O, s:O?, s:O, s:O}}", "metadata", "name", name, "uid",
                             json_object_get(node, "uid"), "resourceVersion",
                             json_object_get(node, "resourceVersion"), "labels",
                             json_object_get(node, "labels"), "annotations",
                             json_object_get(node, "annotations"));
    if (!full) {
        free(provenance);
        return topo_err_nomem(err, "apply");
    }
    topo_labeldiff_input in = {.owned = owned,
                               .authoritative = n > 0,
                               .labels = labels,
                               .nlabels = n,
                               .annotations = &annotation,
                               .nannotations = 1,
                               .record_key = topo_plan_record_key(plan)};
    topo_labelwriter_outcome o = TOPO_LABELWRITER_FAILED;
    topo_err e = TOPO_ERR_INIT;
    if (topo_labelwriter_apply(a->writer, &in, full, &o, &e) != 0)
        topo_log(TOPO_LOG_WARN, "node %s: %s", name, e.text);
    json_decref(full);
    free(provenance);
    count(res, o);
    return e.code == TOPO_ENOMEM ? topo_err_nomem(err, "apply") : 0;
}

int ctl_apply_round(ctl_apply *a, const topo_plan *plan, const json_t *view,
                     ctl_apply_go_fn go, void *payload, ctl_apply_result *res, topo_err *err)
{
    ctl_owned keys;
    ctl_apply_owned(&keys, topo_plan_prefix(plan),
                     topo_plan_key_owned(plan, TOPO_PLAN_TOPOGRAPH_DOMAIN));
    topo_labeldiff_owned owned = {.prefixes = keys.prefixes,
                                  .nprefixes = keys.nprefixes,
                                  .topograph = keys.topograph};
    *res = (ctl_apply_result){0};
    for (size_t i = 0; i < topo_plan_node_count(plan); i++) {
        const json_t *node = json_object_get(view, topo_plan_node_name(plan, i));
        if (!node)
            continue; /* gone since the snapshot's plan: nothing to write */
        if (go && !go(payload)) {
            res->stopped = 1;
            break;
        }
        int rc = apply_node(a, plan, i, node, &owned, res, err);
        if (rc != 0)
            return rc;
    }
    /* A whole round: what the writer wrote to nodes it no longer applies
     * (gone, out of the plan) is forgotten. */
    if (!res->stopped)
        topo_labelwriter_forget_unvisited(a->writer);
    return 0;
}

long ctl_apply_due_in_ms(ctl_apply *a)
{
    return topo_labelwriter_due_in_ms(a->writer);
}
