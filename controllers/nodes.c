/* topo-sync's Node view (nodes.h): what a Node becomes in the set, and
 * which changes count. Listing, swapping and waking: topo/view.h. */
#define _POSIX_C_SOURCE 200809L

#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "topo/labeldiff.h"
#include "topo/log.h"

/* A string-to-string map of the object's kept keys, or an empty one:
 * labels and annotations are read as the API server guarantees them,
 * anything else is dropped rather than trusted. */
static json_t *string_map(const json_t *obj, int all, const char *const *prefixes,
                          size_t nprefixes, const char *const *keys, size_t nkeys, int topograph)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    if (!out || !json_is_object(obj))
        return out;
    json_object_foreach ((json_t *)obj, k, v) {
        /* What the writer owns is what the view keeps: one rule (labeldiff.h). */
        if (!json_is_string(v) ||
            !(all || topo_labeldiff_owns(&(topo_labeldiff_owned){prefixes, nprefixes, keys,
                                                                  nkeys, topograph},
                                         k)))
            continue;
        if (json_object_set(out, k, v) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static const char *str_field(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* {"uid", "resourceVersion", "labels", "annotations"} of a Node (what k
 * keeps of them; NULL: all), with its name in *name_out; NULL when it has
 * no name (or out of memory). The resourceVersion tells the label writer a
 * view that does not show its last write yet from a node someone changed
 * since. */
static json_t *trim(const ctl_nodes_keep *keep, const json_t *node, const char **name_out,
                    topo_err *err)
{
    static const ctl_nodes_keep none = {0};
    const json_t *md = json_object_get(node, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const ctl_nodes_keep *k = keep ? keep : &none;
    if (!name || !*name) {
        topo_err_set(err, TOPO_EINVALID, "nodes: an object without metadata.name");
        return NULL;
    }
    json_t *out = json_pack(
        "{s:s, s:s, s:o?, s:o?}", "uid", str_field(md, "uid"), "resourceVersion",
        str_field(md, "resourceVersion"), "labels",
        string_map(json_object_get(md, "labels"), !keep, k->label_prefixes,
                   k->nlabel_prefixes, k->label_keys, k->nlabel_keys, k->label_topograph),
        "annotations",
        string_map(json_object_get(md, "annotations"), !keep, k->annotation_prefixes,
                   k->nannotation_prefixes, k->annotation_keys, k->nannotation_keys, 0));
    if (!out || !json_object_get(out, "labels") || !json_object_get(out, "annotations")) {
        json_decref(out);
        topo_err_nomem(err, "nodes");
        return NULL;
    }
    *name_out = name;
    return out;
}

/* Whether a node changed in what the controller reads. */
static int differs(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a != b;
    return !json_equal(json_object_get(a, "labels"), json_object_get(b, "labels")) ||
           !json_equal(json_object_get(a, "annotations"), json_object_get(b, "annotations")) ||
           !json_equal(json_object_get(a, "uid"), json_object_get(b, "uid"));
}

/* Whether two sets differ in what the controller reads (a relist that
 * brings only newer resourceVersions wakes no round). */
static int views_differ(const void *current, const void *fresh, void *payload)
{
    const json_t *a = current, *b = fresh;
    const char *name;
    const json_t *v;
    (void)payload;
    if (!a || !b || json_object_size(a) != json_object_size(b))
        return 1;
    json_object_foreach((json_t *)a, name, v)
        if (differs(v, json_object_get(b, name)))
            return 1;
    return 0;
}

static void *set_create(void *payload)
{
    (void)payload;
    return json_object();
}

static void set_destroy(void *set, void *payload)
{
    (void)payload;
    json_decref(set);
}

/* One Node into the set: 1 when what a round reads changed. A nameless
 * object is skipped. */
static int apply(void *set, const json_t *object, int deleted, topo_err *err, void *payload)
{
    json_t *view = set;
    const char *name = NULL;
    json_t *t = trim(payload, object, &name, err);
    if (!t)
        return err->code == TOPO_EINVALID ? 0 : err->code;
    json_t *old = json_object_get(view, name);
    if (deleted) {
        json_decref(t);
        if (!old)
            return 0;
        json_object_del(view, name);
        return 1;
    }
    /* Unchanged in what is read: the node kept, with the resourceVersion
     * of its last change of labels, annotations or uid (what the label
     * writer compares). */
    if (old && !differs(old, t)) {
        json_decref(t);
        return 0;
    }
    return json_object_set_new(view, name, t) == 0 ? 1 : topo_err_nomem(err, "nodes");
}

static void listed(const void *set, int first, void *payload)
{
    (void)first;
    (void)payload;
    topo_log(TOPO_LOG_INFO, "nodes: listed %zu", json_object_size(set));
}

const topo_view_ops ctl_nodes_ops = {
    .create = set_create,
    .destroy = set_destroy,
    .apply = apply,
    .differ = views_differ,
    .listed = listed,
};

json_t *ctl_nodes_snapshot(topo_view *v, uint64_t *generation_out)
{
    const json_t *view = topo_view_read(v);
#ifdef JANSSON_THREAD_SAFE_REFCOUNT
    /* Shallow: a new object holding a reference to each node's trimmed
     * object. The view never edits one (an event or a relist replaces it
     * whole), so the copy and the view share them read-only, which jansson
     * allows across threads, and its atomic reference counts let either
     * thread drop the last reference. A deep copy held 20 MB more in every
     * round at 10,000 nodes (bench/README.md "bench/sync"). */
    json_t *copy = json_copy((json_t *)view);
#else
    /* Without atomic reference counts nothing may be shared across threads. */
    json_t *copy = json_deep_copy(view);
#endif
    if (generation_out)
        *generation_out = topo_view_generation(v);
    topo_view_read_end(v);
    return copy;
}
