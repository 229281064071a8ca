/* The plan's exports in a ConfigMap (configmap.h). */
#include "configmap.h"

#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/log.h"

static const topo_k8s_resource configmaps = {"", "v1", "configmaps", "ConfigMap", 1};

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
    for (int i = 0; rc == 0 && i < 4; i++) {
        static const char *const keys[] = {"topology.conf", "topology-block.conf",
                                           "volcano-hypernodes.yaml", "kueue.yaml"};
        topo_buf b = TOPO_BUF_INIT(SYNC_CONFIGMAP_MAX_DATA);
        topo_export_block_opts bo = {0};
        int e = i == 0   ? topo_export_slurm_tree(plan, &b, err)
                : i == 1 ? topo_export_slurm_block(plan, &bo, &b, err)
                : i == 2 ? topo_export_volcano(plan, &b, err)
                         : topo_export_kueue(plan, kueue, &b, err);
        rc = put_export(data, keys[i], e, &b, &total, err);
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

int sync_configmap_apply(topo_k8s *k, const char *ref, const topo_plan *plan,
                         const topo_export_kueue_opts *kueue, int dry_run,
                         sync_configmap_outcome *outcome, topo_err *err)
{
    char ns[254], name[254];
    const char *slash = strchr(ref, '/');
    size_t nl = slash ? (size_t)(slash - ref) : 0;
    if (!slash || nl == 0 || nl >= sizeof ns || !slash[1] || strlen(slash + 1) >= sizeof name)
        return topo_err_set(err, TOPO_EINVALID, "--export-configmap: \"%s\" is not NAMESPACE/NAME",
                            ref);
    memcpy(ns, ref, nl);
    ns[nl] = '\0';
    strcpy(name, slash + 1);
    *outcome = SYNC_CONFIGMAP_UNCHANGED;
    json_t *data = NULL, *cur = NULL;
    int rc = build_data(&data, plan, kueue, err);
    if (rc != 0)
        return rc;
    rc = topo_k8s_get(&cur, k, &configmaps, ns, name, err);
    if (rc == TOPO_ENOTFOUND) {
        json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:O}", "apiVersion", "v1",
                                "kind", "ConfigMap", "metadata", "name", name, "namespace", ns,
                                "labels", "app.kubernetes.io/managed-by", "topo-sync", "data",
                                data);
        topo_log(TOPO_LOG_INFO, "configmap: %s %s", dry_run ? "would create" : "creating", ref);
        rc = !obj ? topo_err_nomem(err, "configmap")
             : dry_run ? 0
                       : topo_k8s_create_object(NULL, k, &configmaps, ns, obj, err);
        json_decref(obj);
        if (rc == 0)
            *outcome = SYNC_CONFIGMAP_CREATED;
    } else if (rc == 0 && !json_equal(json_object_get(cur, "data"), data)) {
        json_object_set(cur, "data", data);
        topo_log(TOPO_LOG_INFO, "configmap: %s %s", dry_run ? "would update" : "updating", ref);
        rc = dry_run ? 0 : topo_k8s_update(NULL, k, &configmaps, ns, cur, err);
        if (rc == 0)
            *outcome = SYNC_CONFIGMAP_UPDATED;
    }
    json_decref(cur);
    json_decref(data);
    return rc;
}
