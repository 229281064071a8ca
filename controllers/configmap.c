/* The plan's exports in a ConfigMap (configmap.h). */
#include "configmap.h"

#include <stdlib.h>
#include <string.h>

#include "owned.h"
#include "topo/buf.h"
#include "topo/log.h"

/* topo's keys of the data, one per export: the only keys it sets or removes
 * (an operator's other keys stay). */
static const char *const export_keys[] = {"topology.conf", "topology-block.conf",
                                          "volcano-hypernodes.yaml", "kueue.yaml"};
#define EXPORT_KEYS (sizeof export_keys / sizeof export_keys[0])

/* Reads of a ConfigMap other writers keep changing before the write gives up. */
#define CONFIGMAP_ATTEMPTS 5

/* One export into data[key]; an export the plan cannot give is left out. */
static int put_export(json_t *data, const char *key, int rc, topo_buf *b, size_t *total,
                      topo_err *err)
{
    if (rc == TOPO_EINVALID) {
        topo_log(TOPO_LOG_DEBUG, "configmap: no %s: %s", key, err->text);
        topo_buf_dispose(b);
        *err = (topo_err)TOPO_ERR_INIT;
        return 0;
    }
    size_t len = 0;
    char *text = rc == 0 ? topo_buf_take(b, &len) : NULL;
    topo_buf_dispose(b);
    if (rc != 0)
        return rc;
    if (!text)
        return topo_err_nomem(err, "configmap");
    *total += len;
    rc = json_object_set_new(data, key, json_stringn(text, len)) == 0
             ? 0
             : topo_err_nomem(err, "configmap");
    free(text);
    return rc;
}

static int build_data(json_t **out, const topo_plan *plan, const topo_export_kueue_opts *kueue,
                      topo_err *err)
{
    json_t *data = json_object();
    size_t total = 0;
    int rc = data ? 0 : topo_err_nomem(err, "configmap");
    for (size_t i = 0; rc == 0 && i < EXPORT_KEYS; i++) {
        topo_buf b = TOPO_BUF_INIT(SYNC_CONFIGMAP_MAX_DATA);
        topo_export_block_opts bo = {0};
        int e = i == 0   ? topo_export_slurm_tree(plan, &b, err)
                : i == 1 ? topo_export_slurm_block(plan, &bo, &b, err)
                : i == 2 ? topo_export_volcano(plan, &b, err)
                         : topo_export_kueue(plan, kueue, &b, err);
        rc = put_export(data, export_keys[i], e, &b, &total, err);
    }
    if (rc == 0 && total > SYNC_CONFIGMAP_MAX_DATA)
        rc = topo_err_set(err, TOPO_EINVALID,
                          "configmap: the exports take %zu bytes, over a ConfigMap's 1 MiB", total);
    if (rc != 0) {
        json_decref(data);
        data = NULL;
    }
    *out = data;
    return rc;
}

/* Marked as topo-sync's: a ConfigMap of that name without the marker is
 * never written. */
static int create(topo_k8s *k, const char *ns, const char *name, const json_t *data,
                  int dry_run, const char *ref, topo_err *err)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:O}", "apiVersion", "v1", "kind",
                            "ConfigMap", "metadata", "name", name, "namespace", ns, "data",
                            data);
    int rc = !obj || ctl_owned_mark(obj) != 0 ? topo_err_nomem(err, "configmap") : 0;
    if (rc == 0) {
        topo_log(TOPO_LOG_INFO, "configmap: %s %s", dry_run ? "would create" : "creating", ref);
        if (!dry_run)
            rc = topo_k8s_create_object(NULL, k, &topo_k8s_configmaps, ns, obj, err);
    }
    json_decref(obj);
    return rc;
}

/* cur (read just before; modified) with topo's keys as in want, every other
 * key of its data and metadata kept, written back under cur's
 * resourceVersion (a writer in between: TOPO_ECONFLICT). */
static int update(topo_k8s *k, const char *ns, const char *ref, json_t *cur, const json_t *want,
                  int dry_run, ctl_configmap_outcome *outcome, topo_err *err)
{
    if (!ctl_owned(cur)) {
        *outcome = SYNC_CONFIGMAP_NOT_OWNED;
        return topo_err_set(err, TOPO_EFORBIDDEN,
                            "configmap: %s is not topo-sync's (no label %s: %s), not written; "
                            "name another ConfigMap in --export-configmap, or delete this one, "
                            "or label it %s=%s to let topo-sync keep its keys (%s, %s, %s, %s) "
                            "in it",
                            ref, SYNC_OWNED_LABEL, SYNC_OWNED_VALUE, SYNC_OWNED_LABEL,
                            SYNC_OWNED_VALUE, export_keys[0], export_keys[1], export_keys[2],
                            export_keys[3]);
    }
    const char *rv =
        json_string_value(json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
    json_t *data = json_object_get(cur, "data");
    if (!rv || !*rv)
        return topo_err_set(err, TOPO_EINVALID, "configmap: %s: no metadata.resourceVersion",
                            ref);
    if (data && !json_is_object(data))
        return topo_err_set(err, TOPO_EINVALID, "configmap: %s: data is not an object", ref);
    if (!data && json_object_set_new(cur, "data", data = json_object()) != 0)
        return topo_err_nomem(err, "configmap");
    int changed = 0;
    for (size_t i = 0; i < EXPORT_KEYS; i++) {
        json_t *w = json_object_get(want, export_keys[i]);
        json_t *c = json_object_get(data, export_keys[i]);
        if (w && !json_equal(w, c)) {
            if (json_object_set(data, export_keys[i], w) != 0)
                return topo_err_nomem(err, "configmap");
            changed = 1;
        } else if (!w && c) {
            json_object_del(data, export_keys[i]);
            changed = 1;
        }
    }
    if (!changed) {
        *outcome = SYNC_CONFIGMAP_UNCHANGED;
        return 0;
    }
    topo_log(TOPO_LOG_INFO, "configmap: %s %s", dry_run ? "would update" : "updating", ref);
    int rc = dry_run ? 0 : topo_k8s_update(NULL, k, &topo_k8s_configmaps, ns, cur, err);
    if (rc == 0)
        *outcome = SYNC_CONFIGMAP_UPDATED;
    return rc;
}

int ctl_configmap_apply(topo_k8s *k, const char *ref, const topo_plan *plan,
                         const topo_export_kueue_opts *kueue, int dry_run,
                         ctl_configmap_outcome *outcome, topo_err *err)
{
    char ns[254], name[254];
    const char *slash = strchr(ref, '/');
    size_t nl = slash ? (size_t)(slash - ref) : 0;
    *outcome = SYNC_CONFIGMAP_FAILED;
    if (!slash || nl == 0 || nl >= sizeof ns || !slash[1] || strlen(slash + 1) >= sizeof name)
        return topo_err_set(err, TOPO_EINVALID, "--export-configmap: \"%s\" is not NAMESPACE/NAME",
                            ref);
    memcpy(ns, ref, nl);
    ns[nl] = '\0';
    strcpy(name, slash + 1);
    json_t *data = NULL;
    int rc = build_data(&data, plan, kueue, err);
    for (int attempt = 1; rc == 0; attempt++) {
        json_t *cur = NULL;
        rc = topo_k8s_get(&cur, k, &topo_k8s_configmaps, ns, name, err);
        if (rc == TOPO_ENOTFOUND) {
            rc = create(k, ns, name, data, dry_run, ref, err);
            if (rc == 0)
                *outcome = SYNC_CONFIGMAP_CREATED;
        } else if (rc == 0) {
            rc = update(k, ns, ref, cur, data, dry_run, outcome, err);
        }
        json_decref(cur);
        /* Another writer came first (a changed resourceVersion, or created
         * it since the read): read it again, ownership included. */
        if (rc != TOPO_ECONFLICT)
            break;
        if (attempt == CONFIGMAP_ATTEMPTS) {
            topo_err_wrap(err, "configmap: %s: still changing after %d attempts", ref, attempt);
            break;
        }
        topo_log(TOPO_LOG_DEBUG, "configmap: %s: %s; reading it again", ref, err->text);
        rc = 0;
    }
    json_decref(data);
    return rc;
}
