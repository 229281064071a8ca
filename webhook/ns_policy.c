/* Namespace -> no-fit policy, kept by list+watch of labelled namespaces
 * (ns_policy.h). The view is a topo_strmap from the namespace name to an
 * index into `slots` (the malloc'd names the map borrows, and their
 * policies). A (re)list builds a fresh view and swaps it in whole, so that
 * namespaces which lost the label while the watch was down disappear; watch
 * events edit the current view in place. One rwlock guards the view:
 * lookups, on the admission path, only read. */
#define _POSIX_C_SOURCE 200809L

#include "ns_policy.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Namespaces already warned about, with the invalid value warned for. */
typedef struct warned {
    char *name;
    char *value;
} warned;

struct topo_ns_policy {
    char *label;
    wh_watch *w;

    pthread_rwlock_t lock; /* guards v */
    view *v;

    /* Touched by the watch thread only. */
    view *fresh; /* a list being read */
    warned *warned;
    size_t nwarned;
};

/* ---- the view ---- */

static void view_free(view *v)
{
    if (v == NULL)
        return;
    topo_strmap_free(v->map);
    for (size_t i = 0; i < v->nslots; i++)
        free(v->slots[i].name);
    free(v->slots);
    free(v);
}

static view *view_new(void)
{
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
        if (v->nslots == v->cap) {
            size_t ncap = v->cap ? v->cap * 2 : 16;
            slot *ns;
            if (ncap > INT32_MAX)
                return TOPO_ELIMIT;
            if ((ns = realloc(v->slots, ncap * sizeof(*ns))) == NULL)
                return TOPO_ENOMEM;
            v->slots = ns;
            v->cap = ncap;
        }
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

/* ---- warnings, once per namespace and value ---- */

static void unwarn(topo_ns_policy *p, const char *name)
{
    for (size_t i = 0; i < p->nwarned; i++) {
        if (strcmp(p->warned[i].name, name) == 0) {
            free(p->warned[i].name);
            free(p->warned[i].value);
            p->warned[i] = p->warned[--p->nwarned];
            return;
        }
    }
}

static void warn_invalid(topo_ns_policy *p, const char *name, const char *value)
{
    size_t i;
    for (i = 0; i < p->nwarned; i++) {
        if (strcmp(p->warned[i].name, name) == 0) {
            if (strcmp(p->warned[i].value, value) == 0)
                return; /* said already */
            break;
        }
    }
    topo_log(TOPO_LOG_WARN,
             "ns-policy: namespace %s: label %s=\"%s\" is not a policy (gate, deny or ignore); "
             "ignored",
             name, p->label, value);
    if (i < p->nwarned) {
        char *nv = strdup(value);
        if (nv != NULL) {
            free(p->warned[i].value);
            p->warned[i].value = nv;
        }
        return;
    }
    /* Remembering is best effort: when it fails, the warning may repeat. */
    warned *nw = realloc(p->warned, (p->nwarned + 1) * sizeof(*nw));
    if (nw == NULL)
        return;
    p->warned = nw;
    nw[p->nwarned].name = strdup(name);
    nw[p->nwarned].value = strdup(value);
    if (nw[p->nwarned].name == NULL || nw[p->nwarned].value == NULL) {
        free(nw[p->nwarned].name);
        free(nw[p->nwarned].value);
        return;
    }
    p->nwarned++;
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

/* Applies one namespace's current state to v (v locked for writing, or
 * private). */
static int apply(topo_ns_policy *p, view *v, const json_t *obj, int deleted)
{
    const char *name, *value;
    topo_admission_policy policy;
    if (ns_fields(obj, p->label, &name, &value) != 0) {
        topo_log(TOPO_LOG_WARN, "ns-policy: a namespace without metadata.name; skipped");
        return 0;
    }
    if (deleted || value == NULL) {
        view_remove(v, name);
        unwarn(p, name);
        return 0;
    }
    if (topo_admission_policy_parse(&policy, value) != 0) {
        view_remove(v, name);
        warn_invalid(p, name, value);
        return 0;
    }
    unwarn(p, name);
    return view_set(v, name, policy);
}

/* ---- list + watch (watch.c) ---- */

static int list_begin(void *payload)
{
    topo_ns_policy *p = payload;
    view_free(p->fresh);
    p->fresh = view_new();
    return p->fresh != NULL ? 0 : TOPO_ENOMEM;
}

static int list_item(json_t *item, void *payload)
{
    topo_ns_policy *p = payload;
    return apply(p, p->fresh, item, 0);
}

static void list_end(int ok, int first, void *payload)
{
    topo_ns_policy *p = payload;
    view *old = p->fresh;
    size_t count = p->fresh->count;
    p->fresh = NULL;
    if (ok) {
        pthread_rwlock_wrlock(&p->lock);
        view *cur = p->v;
        p->v = old;
        old = cur;
        pthread_rwlock_unlock(&p->lock);
        if (first)
            topo_log(TOPO_LOG_INFO,
                     "ns-policy: synced: %zu namespaces override the policy (label %s)", count,
                     p->label);
    }
    view_free(old);
}

static int on_event(topo_k8s_event_type type, json_t *object, void *payload)
{
    topo_ns_policy *p = payload;
    int rc;
    pthread_rwlock_wrlock(&p->lock);
    rc = apply(p, p->v, object, type == TOPO_K8S_DELETED);
    pthread_rwlock_unlock(&p->lock);
    return rc;
}

static const wh_watch_ops watch_ops = {list_begin, list_item, list_end, on_event};

/* ---- API ---- */

int topo_ns_policy_create(topo_ns_policy **out, const char *label,
                          const topo_k8s_config *k8s_cfg, const topo_ns_policy_opts *opts,
                          topo_err *err)
{
    topo_ns_policy *p = NULL;
    wh_watch_opts wo = {"ns-policy", &namespaces_res, label, NULL, 0, 0, 0};
    int rc;

    *out = NULL;
    if (label == NULL || label[0] == '\0' || k8s_cfg == NULL)
        return topo_err_set(err, TOPO_EINVALID, "ns-policy: a label and a Kubernetes "
                                                "configuration are required");
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
    pthread_rwlock_init(&p->lock, NULL);
    if (opts != NULL) {
        wo.k8s = opts->k8s;
        wo.backoff_base_ms = opts->backoff_base_ms;
        wo.backoff_max_ms = opts->backoff_max_ms;
        wo.watch_timeout_s = opts->watch_timeout_s;
    }
    if ((p->label = strdup(label)) == NULL || (p->v = view_new()) == NULL) {
        rc = topo_err_set(err, TOPO_ENOMEM, "ns-policy: out of memory");
        goto fail;
    }
    /* Only labelled namespaces travel: the label key is the selector. */
    if ((rc = wh_watch_create(&p->w, k8s_cfg, &wo, &watch_ops, p, err)) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    topo_ns_policy_free(p);
    return rc;
}

int topo_ns_policy_start(topo_ns_policy *p, topo_err *err)
{
    return wh_watch_start(p->w, err);
}

int topo_ns_policy_lookup(topo_ns_policy *p, const char *namespace_, topo_admission_policy *out)
{
    int32_t i;
    int found = 0;
    if (p == NULL || namespace_ == NULL)
        return 0;
    pthread_rwlock_rdlock(&p->lock);
    i = topo_strmap_get(p->v->map, namespace_);
    if (i >= 0) {
        *out = p->v->slots[i].policy;
        found = 1;
    }
    pthread_rwlock_unlock(&p->lock);
    return found;
}

int topo_ns_policy_synced(topo_ns_policy *p)
{
    return p != NULL && wh_watch_synced(p->w);
}

size_t topo_ns_policy_count(topo_ns_policy *p)
{
    size_t n;
    if (p == NULL)
        return 0;
    pthread_rwlock_rdlock(&p->lock);
    n = p->v->count;
    pthread_rwlock_unlock(&p->lock);
    return n;
}

void topo_ns_policy_stop(topo_ns_policy *p)
{
    if (p != NULL)
        wh_watch_stop(p->w);
}

void topo_ns_policy_free(topo_ns_policy *p)
{
    if (p == NULL)
        return;
    /* The thread first: it uses the views. */
    wh_watch_free(p->w);
    view_free(p->v);
    view_free(p->fresh);
    for (size_t i = 0; i < p->nwarned; i++) {
        free(p->warned[i].name);
        free(p->warned[i].value);
    }
    free(p->warned);
    free(p->label);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}
