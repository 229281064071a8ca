/* The live snapshot (include/topo/live.h). The writer keeps its own copy of
 * every node, pod and reservation; a commit either replays the in-place
 * usage changes of the batch onto the published snapshot under the write
 * lock, or, when a node changed, builds a whole new snapshot from the copies
 * without holding the lock and swaps it in.
 *
 * Locking: `writer` serialises the writer side (every writer call, commit,
 * reserve_now and the stats), so several threads may write; `lock` (a
 * rwlock) guards the published snapshot against its readers, and is taken
 * for writing only to swap or patch it.
 *
 * Immediate reservations (reserve_now) live in their own table, `now`: each
 * of them is charged on the published snapshot the moment it is made
 * (whenever its leaf domain exists there), while the pending batch is a diff
 * of the published snapshot against the other tables. Keeping the two apart
 * keeps that diff exact; a rebuild charges all three tables. */
#define _POSIX_C_SOURCE 200809L
#include "topo/array.h"
#include "topo/str.h"
#include "topo/live.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"
#include "topo/strmap.h"

typedef struct usage {
    char *node;    /* pod usage: the node; NULL for reserved usage */
    char **values; /* reserved usage: the leaf domain */
    size_t nvalues;
    int32_t count;
    topo_resource *req;
    size_t nreq;
} usage;

typedef struct live_node {
    char *name;
    topo_kv *labels;
    size_t nlabels;
    topo_resource *alloc;
    size_t nalloc;
    topo_taint *taints;
    size_t ntaints;
    int ready;
    int ready_missing;
    int unschedulable;
} live_node;

typedef struct live_entry {
    char *key;   /* pod uid or reservation id */
    int charged; /* pods: counted as usage */
    usage u;
} live_entry;

/* An array of owned records with a name index; removal swaps in the last. */
typedef struct table {
    void **items;
    size_t n, cap;
    topo_strmap *index;
} table;

typedef struct op {
    int64_t sign;
    usage u;
} op;

struct topo_live {
    topo_snapshot_opts opts; /* owned copies */
    char **levels;
    topo_kv *flavor;
    char *topology_name;

    pthread_mutex_t writer; /* the writer side: tables, ops, stats */
    table nodes, pods, reserved;
    table now; /* reserve_now entries, charged on the published snapshot */
    op *ops;
    size_t nops, cap_ops;
    int reshape; /* a node changed since the last commit */
    int dirty;
    int freeing; /* usage went or shrank since the last commit */

    pthread_rwlock_t lock;
    topo_snapshot *published;
    uint64_t generation;
    uint64_t freed; /* commits and immediate changes that may have given capacity back */
    topo_live_stats stats;
};

/* ---- owned copies ---- */

/* A copy the live snapshot owns; an absent string is kept as "". */
static char *own_text(const char *s)
{
    return topo_strdup(s != NULL ? s : "");
}

static void usage_dispose(usage *u)
{
    free(u->node);
    for (size_t i = 0; i < u->nvalues; i++)
        free(u->values[i]);
    free(u->values);
    for (size_t i = 0; i < u->nreq; i++)
        free((char *)u->req[i].name);
    free(u->req);
    memset(u, 0, sizeof(*u));
}

static int req_copy(usage *u, const topo_resource *req, size_t n)
{
    u->req = calloc(n ? n : 1, sizeof(*u->req));
    if (u->req == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((u->req[i].name = own_text(req[i].name)) == NULL)
            return TOPO_ENOMEM;
        u->req[i].amount = req[i].amount;
        u->nreq = i + 1;
    }
    return 0;
}

static int usage_copy(usage *dst, const usage *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->node != NULL && (dst->node = own_text(src->node)) == NULL)
        goto fail;
    if (src->nvalues > 0) {
        if ((dst->values = calloc(src->nvalues, sizeof(char *))) == NULL)
            goto fail;
        for (size_t i = 0; i < src->nvalues; i++) {
            if ((dst->values[i] = own_text(src->values[i])) == NULL)
                goto fail;
            dst->nvalues = i + 1;
        }
    }
    dst->count = src->count;
    if (req_copy(dst, src->req, src->nreq) != 0)
        goto fail;
    return 0;
fail:
    usage_dispose(dst);
    return TOPO_ENOMEM;
}

static void node_free(live_node *n)
{
    if (n == NULL)
        return;
    free(n->name);
    for (size_t i = 0; i < n->nlabels; i++) {
        free((char *)n->labels[i].key);
        free((char *)n->labels[i].value);
    }
    free(n->labels);
    for (size_t i = 0; i < n->nalloc; i++)
        free((char *)n->alloc[i].name);
    free(n->alloc);
    for (size_t i = 0; i < n->ntaints; i++) {
        free((char *)n->taints[i].key);
        free((char *)n->taints[i].value);
        free((char *)n->taints[i].effect);
    }
    free(n->taints);
    free(n);
}

static live_node *node_copy(const topo_node_spec *spec)
{
    live_node *n = calloc(1, sizeof(*n));
    if (n == NULL || (n->name = own_text(spec->name)) == NULL)
        goto fail;
    if ((n->labels = calloc(spec->nlabels ? spec->nlabels : 1, sizeof(topo_kv))) == NULL)
        goto fail;
    for (size_t i = 0; i < spec->nlabels; i++) {
        n->labels[i].key = own_text(spec->labels[i].key);
        n->labels[i].value = own_text(spec->labels[i].value);
        n->nlabels = i + 1;
        if (n->labels[i].key == NULL || n->labels[i].value == NULL)
            goto fail;
    }
    if ((n->alloc = calloc(spec->nallocatable ? spec->nallocatable : 1, sizeof(topo_resource))) ==
        NULL)
        goto fail;
    for (size_t i = 0; i < spec->nallocatable; i++) {
        n->alloc[i].name = own_text(spec->allocatable[i].name);
        n->alloc[i].amount = spec->allocatable[i].amount;
        n->nalloc = i + 1;
        if (n->alloc[i].name == NULL)
            goto fail;
    }
    if ((n->taints = calloc(spec->ntaints ? spec->ntaints : 1, sizeof(topo_taint))) == NULL)
        goto fail;
    for (size_t i = 0; i < spec->ntaints; i++) {
        n->taints[i].key = own_text(spec->taints[i].key);
        n->taints[i].value = own_text(spec->taints[i].value);
        n->taints[i].effect = own_text(spec->taints[i].effect);
        n->ntaints = i + 1;
        if (!n->taints[i].key || !n->taints[i].value || !n->taints[i].effect)
            goto fail;
    }
    n->ready = spec->ready;
    n->ready_missing = spec->ready_missing;
    n->unschedulable = spec->unschedulable;
    return n;
fail:
    node_free(n);
    return NULL;
}

static void entry_free(live_entry *e)
{
    if (e == NULL)
        return;
    free(e->key);
    usage_dispose(&e->u);
    free(e);
}

/* An entry owning copies of key and u (not yet charged); NULL when out of
 * memory. */
static live_entry *entry_new(const char *key, const usage *u)
{
    live_entry *e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = own_text(key)) == NULL || usage_copy(&e->u, u) != 0) {
        entry_free(e);
        return NULL;
    }
    return e;
}

/* ---- tables ---- */

static int table_init(table *t)
{
    memset(t, 0, sizeof(*t));
    t->index = topo_strmap_create(64);
    return t->index ? 0 : TOPO_ENOMEM;
}

/* Frees every item with item_free, then the table's own storage. */
static void table_dispose(table *t, void (*item_free)(void *))
{
    for (size_t i = 0; i < t->n; i++)
        item_free(t->items[i]);
    free(t->items);
    topo_strmap_free(t->index);
}

/* Stores item under key (which must live inside item), replacing and
 * returning any previous item through *out_old. */
static int table_put(table *t, const char *key, void *item, void **out_old)
{
    int32_t i = topo_strmap_get(t->index, key);
    *out_old = NULL;
    if (i >= 0) {
        /* The map borrows its keys: re-insert so it points at the new
         * item's copy, not the old one about to be freed. */
        *out_old = t->items[i];
        t->items[i] = item;
        topo_strmap_remove(t->index, key);
        return topo_strmap_put(t->index, key, i);
    }
    if (t->n == t->cap &&
        topo_array_reserve((void **)&t->items, &t->cap, t->n + 1, sizeof(*t->items)) != 0)
        return TOPO_ENOMEM;
    if (topo_strmap_put(t->index, key, (int32_t)t->n) != 0)
        return TOPO_ENOMEM;
    t->items[t->n++] = item;
    return 0;
}

/* Unlinks the item under key and returns it (NULL if absent). keyof gives
 * an item's key, to re-point the index at the item moved into the gap. */
static void *table_take(table *t, const char *key, const char *(*keyof)(const void *))
{
    int32_t i = topo_strmap_remove(t->index, key);
    if (i < 0)
        return NULL;
    void *item = t->items[i];
    size_t last = t->n - 1;
    if ((size_t)i != last) {
        t->items[i] = t->items[last];
        topo_strmap_put(t->index, keyof(t->items[i]), i); /* existing key: cannot fail */
    }
    t->n--;
    return item;
}

static void node_item_free(void *p)
{
    node_free(p);
}

static void entry_item_free(void *p)
{
    entry_free(p);
}

static const char *node_key(const void *p)
{
    return ((const live_node *)p)->name;
}

static const char *entry_key(const void *p)
{
    return ((const live_entry *)p)->key;
}

/* ---- lifecycle ---- */

static topo_snapshot *empty_snapshot(const topo_live *live, topo_err *err)
{
    topo_snapshot *snap = NULL;
    if (topo_snapshot_create(&snap, &live->opts, err) != 0)
        return NULL;
    if (topo_snapshot_build(snap, err) != 0) {
        topo_snapshot_free(snap);
        return NULL;
    }
    return snap;
}

int topo_live_create(topo_live **out, const topo_snapshot_opts *opts, topo_err *err)
{
    *out = NULL;
    topo_live *live = calloc(1, sizeof(*live));
    if (live == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
    if (pthread_rwlock_init(&live->lock, NULL) != 0) {
        free(live);
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: cannot create its lock");
    }
    if (pthread_mutex_init(&live->writer, NULL) != 0) {
        pthread_rwlock_destroy(&live->lock);
        free(live);
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: cannot create its lock");
    }
    if (table_init(&live->nodes) || table_init(&live->pods) || table_init(&live->reserved) ||
        table_init(&live->now))
        goto nomem;
    live->topology_name = own_text(opts->topology_name ? opts->topology_name : "default");
    live->levels = calloc(opts->nlevels ? opts->nlevels : 1, sizeof(char *));
    live->flavor = calloc(opts->nflavor_labels ? opts->nflavor_labels : 1, sizeof(topo_kv));
    if (live->topology_name == NULL || live->levels == NULL || live->flavor == NULL)
        goto nomem;
    for (size_t i = 0; i < opts->nlevels; i++)
        if ((live->levels[i] = own_text(opts->levels[i])) == NULL)
            goto nomem;
    for (size_t i = 0; i < opts->nflavor_labels; i++) {
        live->flavor[i].key = own_text(opts->flavor_labels[i].key);
        live->flavor[i].value = own_text(opts->flavor_labels[i].value);
        if (live->flavor[i].key == NULL || live->flavor[i].value == NULL)
            goto nomem;
    }
    live->opts.topology_name = live->topology_name;
    live->opts.levels = (const char *const *)live->levels;
    live->opts.nlevels = opts->nlevels;
    live->opts.flavor_labels = live->flavor;
    live->opts.nflavor_labels = opts->nflavor_labels;
    if ((live->published = empty_snapshot(live, err)) == NULL) {
        topo_live_free(live);
        return err ? err->code : TOPO_EINVALID;
    }
    *out = live;
    return 0;
nomem:
    topo_live_free(live);
    return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
}

static void ops_clear(topo_live *live)
{
    for (size_t i = 0; i < live->nops; i++)
        usage_dispose(&live->ops[i].u);
    live->nops = 0;
}

void topo_live_free(topo_live *live)
{
    if (live == NULL)
        return;
    table_dispose(&live->nodes, node_item_free);
    table_dispose(&live->pods, entry_item_free);
    table_dispose(&live->reserved, entry_item_free);
    table_dispose(&live->now, entry_item_free);
    ops_clear(live);
    free(live->ops);
    if (live->levels)
        for (size_t i = 0; i < live->opts.nlevels; i++)
            free(live->levels[i]);
    free(live->levels);
    if (live->flavor)
        for (size_t i = 0; i < live->opts.nflavor_labels; i++) {
            free((char *)live->flavor[i].key);
            free((char *)live->flavor[i].value);
        }
    free(live->flavor);
    free(live->topology_name);
    topo_snapshot_free(live->published);
    pthread_rwlock_destroy(&live->lock);
    pthread_mutex_destroy(&live->writer);
    free(live);
}

/* ---- writer ---- */

static int queue_op(topo_live *live, const usage *u, int64_t sign)
{
    if (live->reshape)
        return 0; /* the rebuild re-derives everything from the copies */
    if (live->nops == live->cap_ops && topo_array_reserve((void **)&live->ops, &live->cap_ops,
                                                          live->nops + 1, sizeof(*live->ops)) != 0)
        return TOPO_ENOMEM;
    if (usage_copy(&live->ops[live->nops].u, u) != 0)
        return TOPO_ENOMEM;
    live->ops[live->nops++].sign = sign;
    return 0;
}

static int str_eq(const char *a, const char *b);

/* The same charge: replacing one with the other gives nothing back. */
static int usage_same(const usage *a, const usage *b)
{
    if (!str_eq(a->node, b->node) || a->nvalues != b->nvalues || a->count != b->count ||
        a->nreq != b->nreq)
        return 0;
    for (size_t i = 0; i < a->nvalues; i++)
        if (!str_eq(a->values[i], b->values[i]))
            return 0;
    for (size_t i = 0; i < a->nreq; i++)
        if (!str_eq(a->req[i].name, b->req[i].name) || a->req[i].amount != b->req[i].amount)
            return 0;
    return 1;
}

static int str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int has_label(const live_node *n, const topo_kv *kv)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (str_eq(n->labels[i].key, kv->key))
            return str_eq(n->labels[i].value, kv->value);
    return 0;
}

static int has_alloc(const live_node *n, const topo_resource *r)
{
    for (size_t i = 0; i < n->nalloc; i++)
        if (str_eq(n->alloc[i].name, r->name))
            return n->alloc[i].amount == r->amount;
    return 0;
}

/* Whether an update changes nothing the snapshot uses: node heartbeats
 * arrive every few seconds and must not reshape the tree each time. */
static int node_same(const live_node *n, const topo_node_spec *spec)
{
    if (n->ready != spec->ready || n->ready_missing != spec->ready_missing ||
        n->unschedulable != spec->unschedulable ||
        n->nlabels != spec->nlabels || n->nalloc != spec->nallocatable ||
        n->ntaints != spec->ntaints)
        return 0;
    for (size_t i = 0; i < spec->nlabels; i++)
        if (!has_label(n, &spec->labels[i]))
            return 0;
    for (size_t i = 0; i < spec->nallocatable; i++)
        if (!has_alloc(n, &spec->allocatable[i]))
            return 0;
    for (size_t i = 0; i < spec->ntaints; i++)
        if (!str_eq(n->taints[i].key, spec->taints[i].key) ||
            !str_eq(n->taints[i].value, spec->taints[i].value) ||
            !str_eq(n->taints[i].effect, spec->taints[i].effect))
            return 0;
    return 1;
}

static int upsert_node(topo_live *live, const topo_node_spec *node, topo_err *err)
{
    if (node == NULL || node->name == NULL || node->name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "node: metadata.name is empty");
    int32_t at = topo_strmap_get(live->nodes.index, node->name);
    if (at >= 0 && node_same(live->nodes.items[at], node))
        return 0;
    live_node *copy = node_copy(node);
    void *old = NULL;
    if (copy == NULL || table_put(&live->nodes, copy->name, copy, &old) != 0) {
        node_free(copy);
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
    }
    node_free(old);
    live->reshape = 1;
    live->dirty = 1;
    ops_clear(live);
    return 0;
}

static int delete_node(topo_live *live, const char *name, topo_err *err)
{
    (void)err;
    live_node *n = table_take(&live->nodes, name, node_key);
    if (n == NULL)
        return 0;
    node_free(n);
    live->reshape = 1;
    live->dirty = 1;
    ops_clear(live);
    return 0;
}

/* Replaces (or removes, when fresh is NULL) an entry, queueing the usage
 * change: the old charge out, the new one in. */
static int swap_entry(topo_live *live, table *t, const char *key, live_entry *fresh,
                      topo_err *err)
{
    live_entry *old = NULL;
    if (fresh != NULL) {
        void *prev = NULL;
        if (table_put(t, fresh->key, fresh, &prev) != 0) {
            entry_free(fresh);
            return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
        }
        old = prev;
    } else {
        old = table_take(t, key, entry_key);
        if (old == NULL)
            return 0;
    }
    int rc = 0;
    if (old != NULL && old->charged &&
        !(fresh != NULL && fresh->charged && usage_same(&old->u, &fresh->u)))
        live->freeing = 1;
    if (old != NULL && old->charged)
        rc = queue_op(live, &old->u, -1);
    if (rc == 0 && fresh != NULL && fresh->charged)
        rc = queue_op(live, &fresh->u, +1);
    entry_free(old);
    live->dirty = 1;
    if (rc != 0) {
        /* The queue cannot say what changed: fall back to a full rebuild. */
        live->reshape = 1;
        ops_clear(live);
    }
    return 0;
}

static int upsert_pod(topo_live *live, const char *uid, const char *node_name, int charged,
                      const topo_resource *requests, size_t nrequests, topo_err *err)
{
    if (uid == NULL || uid[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "pod: metadata.uid is empty");
    usage u = {(char *)node_name, NULL, 0, 0, (topo_resource *)requests, nrequests};
    live_entry *e = entry_new(uid, &u);
    if (e == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
    e->charged = charged && node_name != NULL && node_name[0] != '\0';
    return swap_entry(live, &live->pods, uid, e, err);
}

static int delete_pod(topo_live *live, const char *uid, topo_err *err)
{
    return swap_entry(live, &live->pods, uid, NULL, err);
}

/* A batched write to an id that reserve_now made: the entry moves to the
 * batched table as it stands (it is charged on the published snapshot, as
 * a committed entry would be), so the batch's diff removes it at commit. */
static void adopt_now(topo_live *live, const char *id)
{
    live_entry *e = table_take(&live->now, id, entry_key);
    void *old = NULL;
    if (e == NULL)
        return;
    /* Not in the batched table (an id is in one table at most), so the put
     * adds; when it cannot, the entry is lost and only a rebuild corrects
     * the published snapshot. */
    if (table_put(&live->reserved, e->key, e, &old) != 0) {
        entry_free(e);
        live->reshape = 1;
        ops_clear(live);
    }
    entry_free(old);
    live->dirty = 1;
}

/* The entry both reservation writers (batched and immediate) record, after
 * one check of what the caller passed: an id, a domain of 1..nlevels
 * values none of them NULL, a count >= 0, and requests when nrequests says
 * there are some. Nothing is copied from input that fails the check. */
static int reservation_entry(live_entry **out, const topo_live *live, const char *id,
                             const char *const *values, size_t nvalues, int32_t count,
                             const topo_resource *requests, size_t nrequests, topo_err *err)
{
    if (id == NULL || id[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "reservation: empty id");
    if (nvalues == 0 || nvalues > live->opts.nlevels || count < 0 || values == NULL)
        return topo_err_set(err, TOPO_EINVALID, "reservation \"%s\": bad domain or count", id);
    for (size_t i = 0; i < nvalues; i++)
        if (values[i] == NULL)
            return topo_err_set(err, TOPO_EINVALID, "reservation \"%s\": values[%zu] is NULL",
                                id, i);
    if (requests == NULL && nrequests > 0)
        return topo_err_set(err, TOPO_EINVALID, "reservation \"%s\": requests is NULL", id);
    usage u = {NULL, (char **)values, nvalues, count, (topo_resource *)requests, nrequests};
    if ((*out = entry_new(id, &u)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
    (*out)->charged = 1;
    return 0;
}

static int upsert_reserved(topo_live *live, const char *id, const char *const *values,
                           size_t nvalues, int32_t count, const topo_resource *requests,
                           size_t nrequests, topo_err *err)
{
    live_entry *e = NULL;
    int rc = reservation_entry(&e, live, id, values, nvalues, count, requests, nrequests, err);
    if (rc != 0)
        return rc;
    adopt_now(live, id);
    return swap_entry(live, &live->reserved, id, e, err);
}

static int delete_reserved(topo_live *live, const char *id, topo_err *err)
{
    adopt_now(live, id);
    return swap_entry(live, &live->reserved, id, NULL, err);
}

static int charge(topo_snapshot *snap, const usage *u, int64_t sign, topo_err *err)
{
    if (u->node != NULL)
        return sign > 0 ? topo_snapshot_add_pod_usage(snap, u->node, u->req, u->nreq, NULL, err)
                        : topo_snapshot_remove_pod_usage(snap, u->node, u->req, u->nreq, err);
    return sign > 0 ? topo_snapshot_add_tas_usage(snap, (const char *const *)u->values,
                                                  u->nvalues, u->count, u->req, u->nreq, err)
                    : topo_snapshot_remove_tas_usage(snap, (const char *const *)u->values,
                                                     u->nvalues, u->count, u->req, u->nreq,
                                                     err);
}

/* A whole snapshot from the writer's copies. */
static topo_snapshot *rebuild(topo_live *live, topo_err *err)
{
    topo_snapshot *snap = NULL;
    if (topo_snapshot_create(&snap, &live->opts, err) != 0)
        return NULL;
    for (size_t i = 0; i < live->nodes.n; i++) {
        const live_node *n = live->nodes.items[i];
        topo_node_spec spec = {n->name, n->labels, n->nlabels, n->alloc, n->nalloc,
                               n->taints, n->ntaints, n->unschedulable, n->ready,
                               n->ready_missing};
        if (topo_snapshot_add_node(snap, &spec, err) != 0)
            goto fail;
    }
    if (topo_snapshot_build(snap, err) != 0)
        goto fail;
    const table *tables[3] = {&live->pods, &live->reserved, &live->now};
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            const live_entry *e = tables[t]->items[i];
            if (e->charged && charge(snap, &e->u, +1, err) != 0)
                goto fail;
        }
    return snap;
fail:
    topo_snapshot_free(snap);
    return NULL;
}

static int commit(topo_live *live, topo_err *err)
{
    if (!live->dirty)
        return 0;
    if (live->reshape) {
        topo_snapshot *fresh = rebuild(live, err);
        if (fresh == NULL)
            return err ? err->code : TOPO_ENOMEM; /* the published one stays */
        /* The engine's aggregates of the request shapes in use, counted
         * here, not by the first readers after the swap. */
        snap_agg_inherit(fresh, live->published);
        snap_sums_inherit(fresh, live->published);
        pthread_rwlock_wrlock(&live->lock);
        topo_snapshot *old = live->published;
        live->published = fresh;
        live->generation++;
        live->freed++; /* nodes changed: capacity may have come */
        pthread_rwlock_unlock(&live->lock);
        topo_snapshot_free(old);
        live->stats.rebuilds++;
    } else {
        int rc = 0;
        pthread_rwlock_wrlock(&live->lock);
        for (size_t i = 0; i < live->nops && rc == 0; i++)
            rc = charge(live->published, &live->ops[i].u, live->ops[i].sign, err);
        live->generation++;
        live->freed += live->freeing != 0;
        pthread_rwlock_unlock(&live->lock);
        live->stats.applied += live->nops;
        if (rc != 0)
            return rc;
    }
    ops_clear(live);
    live->reshape = 0;
    live->dirty = 0;
    live->freeing = 0;
    live->stats.commits++;
    return 0;
}

/* ---- immediate reservations ---- */

/* Whether the snapshot has the eligible leaf domain a TAS charge on these
 * values lands on (the lookup topo_snapshot_add_tas_usage makes, which
 * skips a missing one silently). */
static int leaf_exists(const topo_snapshot *snap, const usage *u)
{
    int32_t d;
    if (!snap->built || u->nvalues == 0 || u->nvalues > snap->nlevels)
        return 0;
    if (snap->hostname_lowest) {
        d = topo_strmap_get(snap->domain_by_id, u->values[u->nvalues - 1]);
    } else {
        char *joined = snap_join(NULL, (const char *const *)u->values, u->nvalues);
        if (joined == NULL)
            return 0;
        d = topo_strmap_get(snap->domain_by_id, joined);
        free(joined);
    }
    return d >= 0 && snap->domains[d].leaf >= 0;
}

/* Applies (old out, fresh in) to the published snapshot at once. The leaf
 * is checked first, so a refused charge changes nothing. */
static int publish_now(topo_live *live, const char *id, const live_entry *old,
                       const live_entry *fresh, topo_err *err)
{
    int rc = 0;
    pthread_rwlock_wrlock(&live->lock);
    if (fresh != NULL && fresh->u.count > 0 && !leaf_exists(live->published, &fresh->u)) {
        pthread_rwlock_unlock(&live->lock);
        return topo_err_set(err, TOPO_ENOTFOUND,
                            "reservation \"%s\": its domain is not in the live snapshot (its "
                            "nodes are gone or not eligible)", id);
    }
    /* Removing is a no-op when old's leaf went away with a rebuild (which
     * then did not charge it either). */
    if (old != NULL)
        rc = charge(live->published, &old->u, -1, err);
    if (rc == 0 && fresh != NULL)
        rc = charge(live->published, &fresh->u, +1, err);
    if (rc != 0 && old != NULL)
        (void)charge(live->published, &old->u, +1, NULL); /* undo: it was just removed */
    if (rc == 0) {
        live->generation++;
        live->freed += old != NULL && !(fresh != NULL && usage_same(&old->u, &fresh->u));
    }
    pthread_rwlock_unlock(&live->lock);
    return rc;
}

static int unreserve_now(topo_live *live, const char *id, topo_err *err)
{
    live_entry *old;
    int rc;
    if (id == NULL || id[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "reservation: empty id");
    if (topo_strmap_get(live->now.index, id) < 0)
        /* Batched (or unknown): it leaves with the next commit. */
        return swap_entry(live, &live->reserved, id, NULL, err);
    old = live->now.items[topo_strmap_get(live->now.index, id)];
    if ((rc = publish_now(live, id, old, NULL, err)) != 0)
        return rc;
    entry_free(table_take(&live->now, id, entry_key));
    live->stats.applied++;
    return 0;
}

static int reserve_now(topo_live *live, const char *id, const char *const *values,
                       size_t nvalues, int32_t count, const topo_resource *requests,
                       size_t nrequests, topo_err *err)
{
    live_entry *e = NULL;
    /* count 0 is unreserve_now, which refuses an empty id the same way. */
    if (count == 0)
        return unreserve_now(live, id, err);
    int rc = reservation_entry(&e, live, id, values, nvalues, count, requests, nrequests, err);
    if (rc != 0)
        return rc;
    int32_t at = topo_strmap_get(live->now.index, id);
    const live_entry *old = at >= 0 ? live->now.items[at] : NULL;
    rc = publish_now(live, id, old, e, err);
    if (rc != 0) {
        entry_free(e);
        return rc;
    }
    void *prev = NULL;
    if (table_put(&live->now, e->key, e, &prev) != 0) {
        /* Charged but not recorded: undo the charge, keep the old one. */
        (void)publish_now(live, id, e, old, NULL);
        entry_free(e);
        return topo_err_set(err, TOPO_ENOMEM, "live snapshot: out of memory");
    }
    entry_free(prev);
    /* The same id made by upsert_reserved leaves with the next commit;
     * until then both are charged (erring on the side of holding). */
    if (topo_strmap_get(live->reserved.index, id) >= 0)
        rc = swap_entry(live, &live->reserved, id, NULL, err);
    live->stats.applied++;
    return rc;
}

/* ---- the writer side's public calls: each under the writer mutex ---- */

/* The body of every public writer call: the step runs, and returns, with
 * the writer mutex held for exactly its duration. */
#define UNDER_WRITER(live, step)                                                                  \
    do {                                                                                          \
        pthread_mutex_lock(&(live)->writer);                                                      \
        int rc_ = (step);                                                                         \
        pthread_mutex_unlock(&(live)->writer);                                                    \
        return rc_;                                                                               \
    } while (0)

int topo_live_upsert_node(topo_live *live, const topo_node_spec *node, topo_err *err)
{
    UNDER_WRITER(live, upsert_node(live, node, err));
}

int topo_live_delete_node(topo_live *live, const char *name, topo_err *err)
{
    UNDER_WRITER(live, delete_node(live, name, err));
}

int topo_live_upsert_pod(topo_live *live, const char *uid, const char *node_name, int charged,
                         const topo_resource *requests, size_t nrequests, topo_err *err)
{
    UNDER_WRITER(live, upsert_pod(live, uid, node_name, charged, requests, nrequests, err));
}

int topo_live_delete_pod(topo_live *live, const char *uid, topo_err *err)
{
    UNDER_WRITER(live, delete_pod(live, uid, err));
}

int topo_live_upsert_reserved(topo_live *live, const char *id, const char *const *values,
                              size_t nvalues, int32_t count, const topo_resource *requests,
                              size_t nrequests, topo_err *err)
{
    UNDER_WRITER(live, upsert_reserved(live, id, values, nvalues, count, requests, nrequests, err));
}

int topo_live_delete_reserved(topo_live *live, const char *id, topo_err *err)
{
    UNDER_WRITER(live, delete_reserved(live, id, err));
}

int topo_live_reserve_now(topo_live *live, const char *id, const char *const *values,
                          size_t nvalues, int32_t count, const topo_resource *requests,
                          size_t nrequests, topo_err *err)
{
    UNDER_WRITER(live, reserve_now(live, id, values, nvalues, count, requests, nrequests, err));
}

int topo_live_unreserve_now(topo_live *live, const char *id, topo_err *err)
{
    UNDER_WRITER(live, unreserve_now(live, id, err));
}

int topo_live_commit(topo_live *live, topo_err *err)
{
    UNDER_WRITER(live, commit(live, err));
}

/* ---- readers ---- */

const topo_snapshot *topo_live_acquire(topo_live *live)
{
    pthread_rwlock_rdlock(&live->lock);
    return live->published;
}

void topo_live_release(topo_live *live, const topo_snapshot *snap)
{
    (void)snap;
    pthread_rwlock_unlock(&live->lock);
}

uint64_t topo_live_generation(topo_live *live)
{
    pthread_rwlock_rdlock(&live->lock);
    uint64_t g = live->generation;
    pthread_rwlock_unlock(&live->lock);
    return g;
}

uint64_t topo_live_freed(topo_live *live)
{
    pthread_rwlock_rdlock(&live->lock);
    uint64_t f = live->freed;
    pthread_rwlock_unlock(&live->lock);
    return f;
}

void topo_live_get_stats(topo_live *live, topo_live_stats *out)
{
    pthread_mutex_lock(&live->writer);
    *out = live->stats;
    out->nodes = live->nodes.n;
    out->pods = live->pods.n;
    out->reserved = live->reserved.n + live->now.n;
    pthread_mutex_unlock(&live->writer);
}
