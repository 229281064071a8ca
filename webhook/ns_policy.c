/* Namespace -> no-fit policy and packing opt-out, kept by list+watch of
 * labelled namespaces (ns_policy.h). The view is a topo_strmap from the namespace name to an
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

/* What a namespace's labels say (a namespace saying nothing has no slot). */
typedef struct ns_state {
    int has_policy;
    topo_admission_policy policy;
    int packing_off; /* TOPO_ADMISSION_PACKING_NAMESPACE_LABEL "false" */
} ns_state;

typedef struct slot {
    char *name; /* NULL: free */
    ns_state st;
} slot;

typedef struct view {
    topo_strmap *map; /* name -> index into slots */
    slot *slots;
    size_t nslots, cap;
    size_t count;       /* slots with a policy */
    size_t packing_off; /* slots opted out of packing */
} view;

struct wh_ns_policy {
    char *label; /* NULL: no policy label (packing only) */
    int packing;
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
    v->count -= v->slots[i].st.has_policy ? 1 : 0;
    v->packing_off -= v->slots[i].st.packing_off ? 1 : 0;
}

static void slot_state(view *v, slot *s, const ns_state *st)
{
    /* 0/1 flags: each count goes up, down or stays */
    v->count = v->count + (st->has_policy ? 1u : 0u) - (s->st.has_policy ? 1u : 0u);
    v->packing_off = v->packing_off + (st->packing_off ? 1u : 0u) - (s->st.packing_off ? 1u : 0u);
    s->st = *st;
}

static int view_set(view *v, const char *name, const ns_state *st)
{
    int32_t i = topo_strmap_get(v->map, name);
    size_t j;
    if (i >= 0) {
        slot_state(v, &v->slots[i], st);
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
        v->slots[v->nslots].st = (ns_state){0};
        v->nslots++;
    }
    if ((v->slots[j].name = strdup(name)) == NULL)
        return TOPO_ENOMEM;
    if (topo_strmap_put(v->map, v->slots[j].name, (int32_t)j) != 0) {
        free(v->slots[j].name);
        v->slots[j].name = NULL;
        return TOPO_ENOMEM;
    }
    v->slots[j].st = (ns_state){0};
    slot_state(v, &v->slots[j], st);
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
    v = label != NULL ? json_object_get(json_object_get(md, "labels"), label) : NULL;
    *value = json_is_string(v) ? json_string_value(v) : NULL;
    return 0;
}

/* Packing's opt-out: exactly "false" (as the label reads in a selector);
 * any other value keeps the namespace in. */
static int ns_packing_off(const json_t *obj)
{
    const json_t *v = json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"),
                                      TOPO_ADMISSION_PACKING_NAMESPACE_LABEL);
    return json_is_string(v) && strcmp(json_string_value(v), "false") == 0;
}

/* Applies one namespace's current state to the view (topo_view_ops.apply). */
static int apply(void *arg, const json_t *obj, int deleted, topo_err *err, void *payload)
{
    wh_ns_policy *p = payload;
    view *v = arg;
    const char *name, *value;
    ns_state st = {0};
    (void)err; /* a code alone: the reflector names the step */
    if (ns_fields(obj, p->label, &name, &value) != 0) {
        topo_log(TOPO_LOG_WARN, "ns-policy: a namespace without metadata.name; skipped");
        return 0;
    }
    if (deleted) {
        view_remove(v, name);
        wh_once_forget(&p->warned, name);
        return 0;
    }
    st.packing_off = p->packing && ns_packing_off(obj);
    if (value == NULL) {
        wh_once_forget(&p->warned, name);
    } else if (topo_admission_policy_parse(&st.policy, value) != 0) {
        if (wh_once_new(&p->warned, name, value))
            topo_log(TOPO_LOG_WARN,
                     "ns-policy: namespace %s: label %s=\"%s\" is not a policy (gate, deny or "
                     "ignore); ignored",
                     name, p->label, value);
    } else {
        wh_once_forget(&p->warned, name);
        st.has_policy = 1;
    }
    if (!st.has_policy && !st.packing_off) {
        view_remove(v, name);
        return 0;
    }
    return view_set(v, name, &st);
}

static void listed(const void *arg, int first, void *payload)
{
    const wh_ns_policy *p = payload;
    const view *v = arg;
    if (first)
        topo_log(TOPO_LOG_INFO,
                 "ns-policy: synced: %zu namespaces override the policy (label %s), %zu opt out "
                 "of packing",
                 v->count, p->label != NULL ? p->label : "none", v->packing_off);
}

/* list+watch: topo/view.h. */
static const topo_view_ops watch_ops = {
    .create = view_new, .destroy = view_free, .apply = apply, .listed = listed};

/* ---- API ---- */

int wh_ns_policy_create(wh_ns_policy **out, const char *label, int packing,
                        const topo_k8s_config *k8s_cfg, const wh_ns_policy_opts *opts,
                        topo_err *err)
{
    wh_ns_policy *p = NULL;
    /* Without packing only namespaces with the policy label travel (the
     * key is the selector). With it, every namespace does: a selector
     * cannot say "this label or that one", and namespaces are few and
     * small beside the pods the filler watches. */
    wh_watch_opts wo = {.name = "ns-policy", .res = &namespaces_res,
                        .label_selector = packing ? NULL : label};
    int rc;

    *out = NULL;
    if ((!packing && (label == NULL || label[0] == '\0')) || k8s_cfg == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ns-policy: a label (or packing) and a "
                                                "Kubernetes configuration are required");
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
    if (opts != NULL)
        wo.client = *opts;
    p->packing = packing != 0;
    if (label != NULL && label[0] != '\0' && (p->label = strdup(label)) == NULL) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
        goto fail;
    }
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
    if (i >= 0 && v->slots[i].st.has_policy) {
        *out = v->slots[i].st.policy;
        found = 1;
    }
    topo_view_read_end(p->w);
    return found;
}

int wh_ns_policy_packing_off(wh_ns_policy *p, const char *namespace_)
{
    const view *v;
    int32_t i;
    int off = 0;
    if (p == NULL || namespace_ == NULL || !p->packing)
        return 0;
    v = topo_view_read(p->w);
    i = topo_strmap_get(v->map, namespace_);
    off = i >= 0 && v->slots[i].st.packing_off;
    topo_view_read_end(p->w);
    return off;
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
