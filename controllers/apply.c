/* A plan applied to the cluster's nodes (apply.h). */
#include "apply.h"

#include <stdlib.h>
#include <string.h>

#include "topo/labeldiff.h"
#include "topo/labelwriter.h"
#include "topo/log.h"

struct sync_apply {
    topo_labelwriter *writer;
    topo_metrics_family *m_writes;
};

/* The writer's counters into the metrics at each render. */
static void copy_stats(void *payload)
{
    sync_apply *a = payload;
    topo_labelwriter_stats st;
    topo_labelwriter_get_stats(a->writer, &st);
    static const char *const names[] = {"patched",    "failed",         "converged",
                                        "held",       "gone",           "dry_run",
                                        "conflict",   "drift_labels",   "event_created",
                                        "event_failed", "invalid"};
    const uint64_t values[] = {st.patches_sent, st.patches_failed, st.converged,
                               st.held,         st.nodes_gone,     st.dry_run,
                               st.conflicts,    st.drift_labels,   st.events_created,
                               st.events_failed, st.invalid};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        topo_metrics_set(topo_metrics_get(a->m_writes, &names[i]), (int64_t)values[i]);
}

int sync_apply_create(sync_apply **out, topo_k8s *k, int dry_run, topo_metrics *metrics,
                      topo_err *err)
{
    static const char *const by_outcome[] = {"outcome"};
    *out = NULL;
    sync_apply *a = calloc(1, sizeof(*a));
    if (!a)
        return topo_err_nomem(err, "apply");
    topo_labelwriter_opts wo = {.dry_run = dry_run};
    int rc = topo_labelwriter_create(&a->writer, k, &wo, err);
    if (rc == 0 && metrics)
        rc = topo_metrics_counter(metrics, &a->m_writes, "topo_sync_node_writes_total",
                                  "Nodes brought to the plan, by outcome (patched, failed, "
                                  "converged, held, gone, dry_run), and conflicts, labels "
                                  "reasserted after drift, Events created and failed.",
                                  by_outcome, 1, err);
    if (rc == 0 && metrics)
        rc = topo_metrics_on_render(metrics, copy_stats, a, err);
    if (rc != 0) {
        sync_apply_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void sync_apply_free(sync_apply *a)
{
    if (!a)
        return;
    topo_labelwriter_free(a->writer);
    free(a);
}

static void count(sync_apply_result *res, topo_labelwriter_outcome o)
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
    default:
        res->failed++;
    }
}

int sync_apply_round(sync_apply *a, const topo_plan *plan, const json_t *view,
                     sync_apply_go_fn go, void *payload, sync_apply_result *res, topo_err *err)
{
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels = topo_plan_levels(plan, levels);
    /* The prefix is the key of any owned level without its level name. */
    const char *prefix = TOPO_PLAN_DEFAULT_PREFIX;
    char prefix_buf[256];
    for (size_t l = 0; l < nlevels; l++) {
        if (levels[l] == TOPO_LEVEL_HOSTNAME)
            continue;
        const char *key = topo_plan_level_key(plan, levels[l]);
        size_t klen = strlen(key), nlen = strlen(topo_level_name(levels[l]));
        if (klen > nlen && klen - nlen < sizeof prefix_buf) {
            memcpy(prefix_buf, key, klen - nlen);
            prefix_buf[klen - nlen] = '\0';
            prefix = prefix_buf;
        }
        break;
    }
    const char *const prefixes[] = {prefix};
    topo_labeldiff_owned owned = {.prefixes = prefixes, .nprefixes = 1};
    *res = (sync_apply_result){0};
    for (size_t i = 0; i < topo_plan_node_count(plan); i++) {
        const char *name = topo_plan_node_name(plan, i);
        const json_t *node = json_object_get(view, name);
        if (!node)
            continue; /* gone since the snapshot's plan: nothing to write */
        if (go && !go(payload)) {
            res->stopped = 1;
            break;
        }
        topo_kv labels[TOPO_LEVEL_COUNT];
        size_t n = 0, want = 0;
        for (size_t l = 0; l < nlevels; l++) {
            const char *value = topo_plan_node_value(plan, i, levels[l]);
            want += levels[l] != TOPO_LEVEL_HOSTNAME;
            if (levels[l] != TOPO_LEVEL_HOSTNAME && value)
                labels[n++] = (topo_kv){topo_plan_level_key(plan, levels[l]), value};
        }
        json_t *full = json_pack("{s:{s:s, s:O, s:O, s:O}}", "metadata", "name", name, "uid",
                                 json_object_get(node, "uid"), "labels",
                                 json_object_get(node, "labels"), "annotations",
                                 json_object_get(node, "annotations"));
        if (!full)
            return topo_err_nomem(err, "apply");
        topo_labeldiff_input in = {.owned = &owned,
                                   /* every level, from sources or the fallback */
                                   .authoritative = n == want && n > 0,
                                   .labels = labels,
                                   .nlabels = n,
                                   .record_key = TOPO_LABELDIFF_RECORD_KEY_DEFAULT};
        topo_labelwriter_outcome o = TOPO_LABELWRITER_FAILED;
        topo_err e = TOPO_ERR_INIT;
        if (topo_labelwriter_apply(a->writer, &in, full, &o, &e) != 0)
            topo_log(TOPO_LOG_WARN, "node %s: %s", name, e.text);
        json_decref(full);
        count(res, o);
        if (e.code == TOPO_ENOMEM)
            return topo_err_nomem(err, "apply");
    }
    return 0;
}
