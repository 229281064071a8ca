/* Kueue's objects applied (kueue.h). */
#include "kueue.h"

#include <string.h>

#include "owned.h"
#include "topo/log.h"

/* The fields topo-sync owns in each kind's spec. */
static const char *const topology_fields[] = {"levels", NULL};
static const char *const flavor_fields[] = {"nodeLabels", "topologyName", NULL};

static void resource_of(topo_k8s_resource *res, const char *api_version, const char *kind,
                        char *group, size_t gsize)
{
    const char *slash = strchr(api_version, '/');
    size_t n = slash ? (size_t)(slash - api_version) : 0;
    if (n >= gsize)
        n = gsize - 1;
    memcpy(group, api_version, n);
    group[n] = '\0';
    *res = (topo_k8s_resource){group, slash ? slash + 1 : api_version,
                               strcmp(kind, "Topology") == 0 ? "topologies" : "resourceflavors",
                               kind, 0};
}

static int ignore_item(json_t *item, void *payload)
{
    (void)item;
    (void)payload;
    return 0;
}

/* Whether the CRD answers: a list of one (404 when it is not installed). */
static int served(topo_k8s *k, const topo_k8s_resource *res, topo_err *err)
{
    topo_k8s_list_opts lo = {.limit = 1};
    int rc = topo_k8s_list(NULL, k, res, NULL, &lo, ignore_item, NULL, err);
    if (rc == TOPO_ENOTFOUND)
        return 0;
    return rc == 0 ? 1 : rc;
}

/* cur with topo-sync's fields of want's spec: NULL when they are equal. */
static json_t *updated(const json_t *cur, const json_t *want, const char *const *fields)
{
    const json_t *ws = json_object_get(want, "spec");
    const json_t *cs = json_object_get(cur, "spec");
    int same = 1;
    for (size_t i = 0; fields[i]; i++)
        same &= json_equal(json_object_get(ws, fields[i]), json_object_get(cs, fields[i]));
    if (same)
        return NULL;
    json_t *out = json_deep_copy(cur);
    json_t *spec = json_object_get(out, "spec");
    if (out && !json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(out, "spec", spec);
    }
    for (size_t i = 0; out && fields[i]; i++) {
        json_t *v = json_object_get(ws, fields[i]);
        if (v)
            json_object_set(spec, fields[i], v);
        else
            json_object_del(spec, fields[i]);
    }
    return out;
}

static int apply_one(topo_k8s *k, json_t *want, int dry_run, ctl_kueue_result *res,
                     topo_err *err)
{
    char group[128];
    topo_k8s_resource r;
    const char *kind = json_string_value(json_object_get(want, "kind"));
    const char *name = json_string_value(json_object_get(json_object_get(want, "metadata"), "name"));
    resource_of(&r, json_string_value(json_object_get(want, "apiVersion")), kind, group,
                sizeof group);
    json_t *cur = NULL;
    int rc = topo_k8s_get(&cur, k, &r, NULL, name, err);
    if (rc == TOPO_ENOTFOUND) {
        if (ctl_owned_mark(want) != 0)
            return topo_err_nomem(err, "kueue");
        topo_log(TOPO_LOG_INFO, "kueue: %s %s %s", dry_run ? "would create" : "creating", kind,
                 name);
        rc = dry_run ? 0 : topo_k8s_create_object(NULL, k, &r, NULL, want, err);
        if (rc == 0)
            res->created++;
        return rc;
    }
    if (rc != 0)
        return rc;
    /* One of the same name that topo-sync did not create is someone else's
     * (a Topology an operator made for Kueue by hand): its levels are not
     * ours to change. */
    if (!ctl_owned(cur)) {
        json_decref(cur);
        res->not_owned++;
        return topo_err_set(err, TOPO_ECONFLICT,
                            "%s %s exists and is not topo-sync's (no label %s=%s): not "
                            "written; name another (exports.kueue.topologyName), delete it for "
                            "topo-sync to create it, or add the label to hand it over",
                            kind, name, SYNC_OWNED_LABEL, SYNC_OWNED_VALUE);
    }
    json_t *next = updated(cur, want, strcmp(kind, "Topology") == 0 ? topology_fields
                                                                    : flavor_fields);
    json_decref(cur);
    if (!next) {
        res->unchanged++;
        return 0;
    }
    topo_log(TOPO_LOG_INFO, "kueue: %s %s %s", dry_run ? "would update" : "updating", kind, name);
    rc = dry_run ? 0 : topo_k8s_update(NULL, k, &r, NULL, next, err);
    json_decref(next);
    if (rc == TOPO_EINVALID)
        topo_err_wrap(err, "kueue: %s %s (Kueue may refuse changing a Topology's levels: "
                           "delete it for topo-sync to create it anew)", kind, name);
    if (rc == 0)
        res->updated++;
    return rc;
}

int ctl_kueue_apply(topo_k8s *k, const topo_plan *plan, const topo_export_kueue_opts *opts,
                     int dry_run, ctl_kueue_result *res, topo_err *err)
{
    json_t *docs = NULL;
    *res = (ctl_kueue_result){0};
    int rc = topo_export_kueue_objects(plan, opts, &docs, err);
    if (rc != 0)
        return rc;
    char group[128];
    topo_k8s_resource r;
    const json_t *first = json_array_get(docs, 0);
    resource_of(&r, json_string_value(json_object_get(first, "apiVersion")), "Topology", group,
                sizeof group);
    int s = served(k, &r, err);
    if (s <= 0) {
        json_decref(docs);
        return s; /* 0: not served, nothing to do; else the error */
    }
    res->served = 1;
    int first_rc = 0;
    for (size_t i = 0; i < json_array_size(docs); i++) {
        topo_err e = TOPO_ERR_INIT;
        rc = apply_one(k, json_array_get(docs, i), dry_run, res, &e);
        if (rc != 0) {
            res->failed++;
            /* Someone else's object is an operator's to resolve: an error. */
            topo_log(rc == TOPO_ECONFLICT ? TOPO_LOG_ERROR : TOPO_LOG_WARN, "kueue: %s", e.text);
            if (first_rc == 0) {
                first_rc = rc;
                *err = e;
            }
        }
    }
    json_decref(docs);
    return first_rc;
}
