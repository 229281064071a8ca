/* Namespace -> no-fit policy, kept by list+watch of labelled namespaces
 * (ns_policy.h). The view is a topo_strmap from the namespace name to an
 * index into `slots` (the malloc'd names the map borrows, and their
 * policies). watch.c keeps it: a (re)list builds a fresh view and swaps it
 * in whole, so that namespaces which lost the label while the watch was
 * down disappear; watch events edit the current view in place; lookups, on
 * the admission path, only take the read lock. */
#define _POSIX_C_SOURCE 200809L

#include "ns_policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/log.h"
#include "topo/strmap.h"
#include "watch.h"

/* core/v1 Namespace (lib/net has no constant for it: only we watch them). */
static const topo_k8s_resource namespaces_res = {"", "v1", "namespaces", "Namespace", 0};

typedef struct slot {
    char *name; /* NULL: free */
    topo_admission_policy policy;
} slot;

typedef struct view {
    topo_strmap *map; /* name -> index into slots */
    slot *slots;
    size_t nslots, cap;
    size_t count; /* used slots */
} view;

struct wh_ns_policy {
    char *label;
    topo_k8s *k;    /* the view's client */
    topo_view *w;   /* holds the view */
    wh_once warned; /* namespace -> the invalid value warned for (watch thread) */
};

/* ---- the view ---- */

static void view_free(void *arg, void *payload)
{
    view *v = arg;
    (void)payload;
    if (v == NULL)
        return;
    topo_strmap_free(v->map);
    for (size_t i = 0; i < v->nslots; i++)
        free(v->slots[i].name);
    free(v->slots);
    free(v);
}

static void *view_new(void *payload)
{
    (void)payload;
    view *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return NULL;
    if ((v->map = topo_strmap_create(64)) == NULL) {
        free(v);
        return NULL;
    }
    return v;
}

static void view_remove(view *v, const char *name)
{
    int32_t i = topo_strmap_remove(v->map, name);
    if (i < 0)
        return;
    free(v->slots[i].name);
    v->slots[i].name = NULL;
    v->count--;
}

static int view_set(view *v, const char *name, topo_admission_policy policy)
{
    int32_t i = topo_strmap_get(v->map, name);
    size_t j;
    if (i >= 0) {
        v->slots[i].policy = policy;
        return 0;
    }
    /* A free slot, else a new one. Slots are few (labelled namespaces). */
    for (j = 0; j < v->nslots && v->slots[j].name != NULL; j++)
        ;
    if (j == v->nslots) {
        int rc;
        if (v->nslots >= INT32_MAX)
            return TOPO_ELIMIT; /* the map holds int32 indexes */
        if ((rc = topo_array_reserve((void **)&v->slots, &v->cap, v->nslots + 1,
                                     sizeof(*v->slots))) != 0)
            return rc;
        v->slots[v->nslots].name = NULL;
        v->nslots++;
    }
    if ((v->slots[j].name = strdup(name)) == NULL)
        return TOPO_ENOMEM;
    if (topo_strmap_put(v->map, v->slots[j].name, (int32_t)j) != 0) {
        free(v->slots[j].name);
        v->slots[j].name = NULL;
        return TOPO_ENOMEM;
    }
    v->slots[j].policy = policy;
    v->count++;
    return 0;
}

/* ---- decoding a namespace ---- */

/* The namespace's name and its label value (NULL when it has no label). */
static int ns_fields(const json_t *obj, const char *label, const char **name, const char **value)
{
    const json_t *md = json_object_get(obj, "metadata");
    const json_t *v = json_object_get(md, "name");
    if (!json_is_string(v) || json_string_length(v) == 0)
        return -1;
    *name = json_string_value(v);
    v = json_object_get(json_object_get(md, "labels"), label);
    *value = json_is_string(v) ? json_string_value(v) : NULL;
    return 0;
}

/* Applies one namespace's current state to the view (topo_view_ops.apply). */
static int apply(void *arg, const json_t *obj, int deleted, topo_err *err, void *payload)
{
    wh_ns_policy *p = payload;
    view *v = arg;
    const char *name, *value;
    topo_admission_policy policy;
    (void)err; /* a code alone: the reflector names the step */
    if (ns_fields(obj, p->label, &name, &value) != 0) {
        topo_log(TOPO_LOG_WARN, "ns-policy: a namespace without metadata.name; skipped");
        return 0;
    }
    if (deleted || value == NULL) {
        view_remove(v, name);
        wh_once_forget(&p->warned, name);
        return 0;
    }
    if (topo_admission_policy_parse(&policy, value) != 0) {
        view_remove(v, name);
        if (wh_once_new(&p->warned, name, value))
            topo_log(TOPO_LOG_WARN,
                     "ns-policy: namespace %s: label %s=\"%s\" is not a policy (gate, deny or "
                     "ignore); ignored",
                     name, p->label, value);
        return 0;
    }
    wh_once_forget(&p->warned, name);
    return view_set(v, name, policy);
}

static void listed(const void *arg, int first, void *payload)
{
    const wh_ns_policy *p = payload;
    const view *v = arg;
    if (first)
        topo_log(TOPO_LOG_INFO, "ns-policy: synced: %zu namespaces override the policy (label %s)",
                 v->count, p->label);
}

/* list+watch: topo/view.h. */
static const topo_view_ops watch_ops = {
    .create = view_new, .destroy = view_free, .apply = apply, .listed = listed};

/* ---- API ---- */

int wh_ns_policy_create(wh_ns_policy **out, const char *label,
                          const topo_k8s_config *k8s_cfg, const wh_ns_policy_opts *opts,
                          topo_err *err)
{
    wh_ns_policy *p = NULL;
    wh_watch_opts wo = {.name = "ns-policy", .res = &namespaces_res, .label_selector = label};
    int rc;

    *out = NULL;
    if (label == NULL || label[0] == '\0' || k8s_cfg == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ns-policy: a label and a Kubernetes "
                                                "configuration are required");
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
    if (opts != NULL)
        wo.client = *opts;
    if ((p->label = strdup(label)) == NULL) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
        goto fail;
    }
    /* Only labelled namespaces travel: the label key is the selector. */
    if ((rc = wh_watch_open(&p->w, &p->k, k8s_cfg, &wo, &watch_ops, p, err)) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    wh_ns_policy_free(p);
    return rc;
}

int wh_ns_policy_start(wh_ns_policy *p, topo_err *err)
{
    return topo_view_start(p->w, err);
}

int wh_ns_policy_lookup(wh_ns_policy *p, const char *namespace_, topo_admission_policy *out)
{
    const view *v;
    int32_t i;
    int found = 0;
    if (p == NULL || namespace_ == NULL)
        return 0;
    v = topo_view_read(p->w);
    i = topo_strmap_get(v->map, namespace_);
    if (i >= 0) {
        *out = v->slots[i].policy;
        found = 1;
    }
    topo_view_read_end(p->w);
    return found;
}

int wh_ns_policy_synced(wh_ns_policy *p)
{
    return p != NULL && topo_view_synced(p->w);
}

size_t wh_ns_policy_count(wh_ns_policy *p)
{
    size_t n;
    if (p == NULL)
        return 0;
    n = ((const view *)topo_view_read(p->w))->count;
    topo_view_read_end(p->w);
    return n;
}

void wh_ns_policy_stop(wh_ns_policy *p)
{
    if (p != NULL)
        topo_view_stop(p->w);
}

void wh_ns_policy_free(wh_ns_policy *p)
{
    if (p == NULL)
        return;
    topo_view_free(p->w); /* the thread and the views */
    topo_k8s_free(p->k);
    wh_once_free(&p->warned);
    free(p->label);
    free(p);
}
