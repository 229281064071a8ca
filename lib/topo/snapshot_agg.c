/* The snapshot's aggregates for the engine: per request shape, the counts phase 1
 * of Kueue's algorithm gives every domain (pods that fit, whole slices that
 * fit), kept in the snapshot and brought up to date by every usage change,
 * along the path from the changed leaf to its root. A placement then reads
 * the counts of the domains it visits instead of recounting the cluster.
 *
 * A shape is what phase 1 depends on: the request vector (resource, amount;
 * "pods: 1" included), the slice size and level, the inner slice sizes of a
 * multi-layer request and, on hostname topologies, the node filters
 * (tolerations, nodeSelector, required node affinity: the leaves they
 * exclude are fixed until a node changes, which rebuilds the snapshot).
 * Requests with a leader, a replacement domain, earlier PodSets in the call
 * or preferred-affinity scores depend on more and are counted per call as
 * before.
 *
 * Two budgets of AGG_MAX_SHAPES shapes, each its own LRU: the engine's
 * placements (AGG_ENGINE) and packing's pods without topology requests
 * (AGG_PACKING, packing_find.c). A new shape evicts only one of its own
 * kind, so a burst of packed pods never makes the placements, which the
 * webhook's latency goals are about, count the cluster again (nor the
 * reverse). A lookup finds a shape of either kind (the counts depend on
 * the key alone) and marks it used: a packing call may keep a placement's
 * shape fresh, never take its slot. Every usage change updates every shape kept, so the
 * upkeep grows with both budgets (bench/README.md, bench_packing).
 *
 * Threads: readers (engine calls) look shapes up and add new ones under the
 * snapshot's agg mutex; the counts they read are changed only by usage
 * changes, which topo_live makes under its write lock, with no reader
 * inside. A shape in use is never evicted; when all are in use, a new one
 * serves its call only. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "topo/str.h"

#define AGG_MAX_SHAPES 8 /* per kind */
#define AGG_SLOTS (AGG_MAX_SHAPES * AGG_KINDS)

typedef struct level_keys {
    agg_key keys[AGG_MAX_KEYS];
    size_t nkeys;
    int full;
    size_t nwords;
} level_keys;

struct agg_shape {
    req_item *items; /* names owned (one block, `names`) */
    size_t nitems;
    char *names;
    int32_t slice_size;
    int slice_level;
    int32_t *ssal; /* nlevels + 1 inner slice sizes */
    char *sig;         /* the node filters (eng_filter_sig), NULL: none */
    uint8_t *excluded; /* per leaf: the filters exclude it; NULL: none */
    excl_stats ex;     /* the exclusions, names owned */
    agg_count *counts; /* per domain */
    /* Per level, the domains that take something by (slices, pods): per
     * key a bit per domain, in level-value order. */
    level_keys *lv;
    size_t nlevels;
    int32_t *leaf_lim; /* per leaf: the limiting item when 0 fit, else -1 */
    int32_t *limited;  /* per item: leaves with 0 fit that it limits */
    int refs;
    int cached; /* in the snapshot's list */
    agg_kind kind; /* the budget it was counted for and is evicted from */
    uint64_t used;
};

struct snap_agg {
    pthread_mutex_t mu;
    agg_shape *shapes[AGG_SLOTS]; /* both kinds, in no order */
    size_t n;
    size_t nkind[AGG_KINDS];
    uint64_t tick;
    uint64_t counted; /* shapes counted over the snapshot (misses) */
};

static void shape_free(agg_shape *s)
{
    if (s == NULL)
        return;
    free(s->items);
    free(s->names);
    free(s->ssal);
    free(s->sig);
    free(s->excluded);
    for (size_t i = 0; i < s->ex.ntaints; i++)
        free((char *)s->ex.taints[i].name);
    free(s->ex.taints);
    free(s->counts);
    for (size_t l = 0; s->lv != NULL && l < s->nlevels; l++)
        for (size_t k = 0; k < s->lv[l].nkeys; k++)
            free(s->lv[l].keys[k].bits);
    free(s->lv);
    free(s->leaf_lim);
    free(s->limited);
    free(s);
}

struct snap_agg *snap_agg_create(void)
{
    struct snap_agg *agg = calloc(1, sizeof(*agg));
    if (agg == NULL)
        return NULL;
    if (pthread_mutex_init(&agg->mu, NULL) != 0) {
        free(agg);
        return NULL;
    }
    return agg;
}

void snap_agg_free(struct snap_agg *agg)
{
    if (agg == NULL)
        return;
    for (size_t i = 0; i < agg->n; i++)
        shape_free(agg->shapes[i]);
    pthread_mutex_destroy(&agg->mu);
    free(agg);
}

void snap_agg_reset(topo_snapshot *snap)
{
    struct snap_agg *agg = snap->agg;
    if (agg == NULL)
        return;
    pthread_mutex_lock(&agg->mu);
    for (size_t i = 0; i < agg->n; i++)
        shape_free(agg->shapes[i]);
    agg->n = 0;
    memset(agg->nkind, 0, sizeof(agg->nkind));
    pthread_mutex_unlock(&agg->mu);
}

/* Adds (sign +1) or removes (-1) a domain of these counts in its level's
 * key index; domains that take nothing are not indexed. A key left empty is
 * reused; past AGG_MAX_KEYS the level's index is dropped for good. */
static void index_dom(agg_shape *s, int level, int32_t rank, agg_count c, int sign)
{
    level_keys *lk = &s->lv[level];
    if (lk->full || (c.state == 0 && c.slice == 0))
        return;
    size_t k = 0, spare = lk->nkeys;
    for (; k < lk->nkeys; k++) {
        if (lk->keys[k].slice == c.slice && lk->keys[k].state == c.state)
            break;
        if (lk->keys[k].count == 0 && spare == lk->nkeys)
            spare = k;
    }
    if (k == lk->nkeys) {
        if (sign < 0)
            return; /* cannot happen: a domain is indexed under its counts */
        if (spare < lk->nkeys) {
            k = spare;
        } else if (lk->nkeys == AGG_MAX_KEYS ||
                   (lk->keys[k].bits = calloc(lk->nwords ? lk->nwords : 1, sizeof(uint64_t))) ==
                       NULL) {
            lk->full = 1;
            return;
        } else {
            lk->nkeys++;
        }
        lk->keys[k].slice = c.slice;
        lk->keys[k].state = c.state;
    }
    uint64_t bit = UINT64_C(1) << (rank & 63);
    if (sign > 0) {
        lk->keys[k].bits[rank >> 6] |= bit;
        lk->keys[k].count++;
    } else {
        lk->keys[k].bits[rank >> 6] &= ~bit;
        lk->keys[k].count--;
    }
}

/* A leaf's counts from its room: fillInCounts' leaf step on the fast path. */
static void leaf_count(const topo_snapshot *snap, agg_shape *s, int32_t l)
{
    const snap_leaf *leaf = &snap->leaves[l];
    req_vec rv = {s->items, s->nitems};
    int lim = -1;
    int32_t st = 0;
    if (s->excluded == NULL || !s->excluded[l])
        st = eng_count_in(&rv, leaf->room, &lim);
    else
        lim = -1; /* excluded: counted as such, not by resource */
    agg_count *c = &s->counts[leaf->domain];
    const snap_domain *sd = &snap->domains[leaf->domain];
    index_dom(s, sd->level, sd->rank, *c, -1);
    c->state = st;
    c->slice = sd->level == s->slice_level ? st / s->slice_size : 0;
    index_dom(s, sd->level, sd->rank, *c, +1);
    int32_t now = st == 0 && lim >= 0 ? lim : -1;
    if (s->leaf_lim[l] >= 0)
        s->limited[s->leaf_lim[l]]--;
    if (now >= 0)
        s->limited[now]++;
    s->leaf_lim[l] = now;
}

/* An inner domain's counts from its children's: fillInCountsHelper's fold
 * without a leader (the with-leader counts then equal these). */
static void inner_count(const topo_snapshot *snap, agg_shape *s, int32_t di)
{
    const snap_domain *sd = &snap->domains[di];
    int32_t inner = s->ssal[sd->level + 1];
    int32_t st = 0, sl = 0;
    for (int32_t i = 0; i < sd->nchildren; i++) {
        const agg_count *c = &s->counts[sd->children[i]];
        int32_t cs = inner > 0 ? (c->state / inner) * inner : c->state;
        st = eng_add_counts(st, cs);
        sl = eng_add_counts(sl, c->slice);
    }
    if (sd->level == s->slice_level)
        sl = st / s->slice_size;
    index_dom(s, sd->level, sd->rank, s->counts[di], -1);
    s->counts[di].state = st;
    s->counts[di].slice = sl;
    index_dom(s, sd->level, sd->rank, s->counts[di], +1);
}

static void compute_all(const topo_snapshot *snap, agg_shape *s)
{
    for (size_t l = 0; l < snap->nleaves; l++)
        leaf_count(snap, s, (int32_t)l);
    for (size_t lv = snap->nlevels; lv-- > 0;)
        for (size_t i = 0; i < snap->level_ndomains[lv]; i++) {
            int32_t d = snap->level_domains[lv][i];
            if (snap->domains[d].nchildren > 0)
                inner_count(snap, s, d);
        }
}

/* A shape's key only (owned copies of the request items and inner slice
 * sizes), no counts; NULL when out of memory. */
static agg_shape *shape_key(const req_vec *req, int32_t slice_size, int slice_level,
                            const int32_t *ssal, size_t nlevels, const char *sig)
{
    agg_shape *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    size_t names = 0;
    for (size_t i = 0; i < req->n; i++)
        names += strlen(req->items[i].name) + 1;
    s->items = calloc(req->n ? req->n : 1, sizeof(*s->items));
    s->names = malloc(names ? names : 1);
    s->ssal = calloc(nlevels + 1, sizeof(*s->ssal));
    if (sig != NULL)
        s->sig = topo_strdup(sig);
    if (s->items == NULL || s->names == NULL || s->ssal == NULL || (sig != NULL && s->sig == NULL)) {
        shape_free(s);
        return NULL;
    }
    char *w = s->names;
    for (size_t i = 0; i < req->n; i++) {
        size_t len = strlen(req->items[i].name) + 1;
        memcpy(w, req->items[i].name, len);
        s->items[i] = req->items[i];
        s->items[i].name = w;
        w += len;
    }
    s->nitems = req->n;
    s->slice_size = slice_size;
    s->slice_level = slice_level;
    memcpy(s->ssal, ssal, (nlevels + 1) * sizeof(*s->ssal));
    return s;
}

/* The node filters' side of a new shape: which leaves they exclude and the
 * message's counts of them, copied. */
static int shape_filter(const topo_snapshot *snap, agg_shape *s, const agg_filter *f)
{
    if (f == NULL)
        return 0;
    if (f->excluded != NULL) {
        if ((s->excluded = malloc(snap->nleaves ? snap->nleaves : 1)) == NULL)
            return TOPO_ENOMEM;
        memcpy(s->excluded, f->excluded, snap->nleaves);
    }
    if (f->stats == NULL)
        return 0;
    s->ex.node_selector = f->stats->node_selector;
    s->ex.affinity = f->stats->affinity;
    if (f->stats->ntaints == 0)
        return 0;
    if ((s->ex.taints = calloc(f->stats->ntaints, sizeof(*s->ex.taints))) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < f->stats->ntaints; i++) {
        if ((s->ex.taints[i].name = topo_strdup(f->stats->taints[i].name)) == NULL)
            return TOPO_ENOMEM;
        s->ex.taints[i].count = f->stats->taints[i].count;
        s->ex.ntaints = i + 1;
    }
    return 0;
}

/* A shape counted over the whole snapshot. */
static agg_shape *shape_new(const topo_snapshot *snap, const req_vec *req, const eng_params *p,
                            const agg_filter *f)
{
    agg_shape *s = shape_key(req, p->slice_size, p->slice_level, p->slice_size_at_level,
                             snap->nlevels, f ? f->sig : NULL);
    if (s == NULL)
        return NULL;
    if (shape_filter(snap, s, f) != 0) {
        shape_free(s);
        return NULL;
    }
    s->counts = calloc(snap->ndomains ? snap->ndomains : 1, sizeof(*s->counts));
    s->lv = calloc(snap->nlevels, sizeof(*s->lv));
    s->nlevels = snap->nlevels;
    s->leaf_lim = malloc((snap->nleaves ? snap->nleaves : 1) * sizeof(*s->leaf_lim));
    s->limited = calloc(req->n ? req->n : 1, sizeof(*s->limited));
    if (s->counts == NULL || s->leaf_lim == NULL || s->limited == NULL || s->lv == NULL) {
        shape_free(s);
        return NULL;
    }
    for (size_t l = 0; l < snap->nleaves; l++)
        s->leaf_lim[l] = -1;
    for (size_t l = 0; l < snap->nlevels; l++)
        s->lv[l].nwords = (snap->level_ndomains[l] + 63) / 64;
    compute_all(snap, s);
    return s;
}

static int shape_is(const topo_snapshot *snap, const agg_shape *s, const req_vec *req,
                    const eng_params *p, const char *sig)
{
    if (s->slice_size != p->slice_size || s->slice_level != p->slice_level || s->nitems != req->n)
        return 0;
    if ((s->sig == NULL) != (sig == NULL) || (sig != NULL && strcmp(s->sig, sig) != 0))
        return 0;
    for (size_t i = 0; i < req->n; i++)
        if (s->items[i].idx != req->items[i].idx || s->items[i].amount != req->items[i].amount ||
            strcmp(s->items[i].name, req->items[i].name) != 0)
            return 0;
    return memcmp(s->ssal, p->slice_size_at_level, (snap->nlevels + 1) * sizeof(*s->ssal)) == 0;
}

/* Under the mutex: the cached shape, held, or NULL. */
static agg_shape *find_locked(const topo_snapshot *snap, const req_vec *req, const eng_params *p,
                              const char *sig)
{
    struct snap_agg *agg = snap->agg;
    for (size_t i = 0; i < agg->n; i++) {
        agg_shape *s = agg->shapes[i];
        if (shape_is(snap, s, req, p, sig)) {
            s->refs++;
            s->used = ++agg->tick;
            return s;
        }
    }
    return NULL;
}

/* Under the mutex: keeps a new shape of kind s->kind in the list, within
 * its kind's budget: in place of the one of that kind used longest ago
 * that no call holds; when every one is held it is not kept. */
static void insert_locked(struct snap_agg *agg, agg_shape *s)
{
    s->refs = 1;
    s->used = ++agg->tick;
    if (agg->nkind[s->kind] < AGG_MAX_SHAPES) {
        agg->shapes[agg->n++] = s;
        agg->nkind[s->kind]++;
        s->cached = 1;
        return;
    }
    size_t victim = AGG_SLOTS;
    for (size_t i = 0; i < agg->n; i++)
        if (agg->shapes[i]->kind == s->kind && agg->shapes[i]->refs == 0 &&
            (victim == AGG_SLOTS || agg->shapes[i]->used < agg->shapes[victim]->used))
            victim = i;
    if (victim == AGG_SLOTS)
        return;
    shape_free(agg->shapes[victim]);
    agg->shapes[victim] = s;
    s->cached = 1;
}

agg_shape *snap_agg_acquire(const topo_snapshot *snap, const req_vec *req, const eng_params *p,
                            const char *filter_sig)
{
    struct snap_agg *agg = snap->agg;
    if (agg == NULL)
        return NULL;
    pthread_mutex_lock(&agg->mu);
    agg_shape *s = find_locked(snap, req, p, filter_sig);
    pthread_mutex_unlock(&agg->mu);
    return s;
}

agg_shape *snap_agg_add(const topo_snapshot *snap, const req_vec *req, const eng_params *p,
                        const agg_filter *f, agg_kind kind)
{
    struct snap_agg *agg = snap->agg;
    if (agg == NULL)
        return NULL;
    /* Counted outside the mutex: other readers go on meanwhile. */
    agg_shape *fresh = shape_new(snap, req, p, f);
    if (fresh == NULL)
        return NULL;
    fresh->kind = kind;
    pthread_mutex_lock(&agg->mu);
    agg->counted++;
    agg_shape *s = find_locked(snap, req, p, f ? f->sig : NULL);
    if (s == NULL)
        insert_locked(agg, s = fresh);
    pthread_mutex_unlock(&agg->mu);
    if (s != fresh)
        shape_free(fresh);
    return s;
}

uint64_t snap_agg_counted(const topo_snapshot *snap)
{
    struct snap_agg *agg = snap->agg;
    if (agg == NULL)
        return 0;
    pthread_mutex_lock(&agg->mu);
    uint64_t n = agg->counted;
    pthread_mutex_unlock(&agg->mu);
    return n;
}

const excl_stats *snap_agg_excluded(const agg_shape *s)
{
    return &s->ex;
}

void snap_agg_release(const topo_snapshot *snap, agg_shape *s)
{
    struct snap_agg *agg = snap->agg;
    if (s == NULL)
        return;
    pthread_mutex_lock(&agg->mu);
    int drop = --s->refs == 0 && !s->cached;
    pthread_mutex_unlock(&agg->mu);
    if (drop)
        shape_free(s);
}

const agg_count *snap_agg_counts(const agg_shape *s)
{
    return s->counts;
}

size_t snap_agg_keys(const agg_shape *s, int level, const agg_key **out)
{
    const level_keys *lk = &s->lv[level];
    *out = lk->keys;
    return lk->full ? (size_t)-1 : lk->nkeys;
}

const int32_t *snap_agg_limited(const agg_shape *s)
{
    return s->limited;
}

void snap_agg_leaf_changed(topo_snapshot *snap, int32_t leaf)
{
    struct snap_agg *agg = snap->agg;
    if (agg == NULL || leaf < 0)
        return;
    pthread_mutex_lock(&agg->mu);
    for (size_t i = 0; i < agg->n; i++) {
        agg_shape *s = agg->shapes[i];
        leaf_count(snap, s, leaf);
        /* Up to the root, or to the first ancestor whose counts stay. */
        for (int32_t d = snap->domains[snap->leaves[leaf].domain].parent; d >= 0;
             d = snap->domains[d].parent) {
            agg_count before = s->counts[d];
            inner_count(snap, s, d);
            if (s->counts[d].state == before.state && s->counts[d].slice == before.slice)
                break;
        }
    }
    pthread_mutex_unlock(&agg->mu);
}

/* The shapes of `old` computed on `fresh` (same levels), most recently used
 * first, so that the first placements after a rebuild find them ready. The
 * resources are looked up again by name: their indices may have moved. */
void snap_agg_inherit(topo_snapshot *fresh, const topo_snapshot *old)
{
    struct snap_agg *from = old->agg, *to = fresh->agg;
    if (from == NULL || to == NULL || !fresh->built || old->nlevels != fresh->nlevels)
        return;
    agg_shape *keep[AGG_SLOTS];
    size_t n = 0;
    pthread_mutex_lock(&from->mu);
    for (size_t i = 0; i < from->n; i++) {
        const agg_shape *s = from->shapes[i];
        req_vec req = {s->items, s->nitems};
        /* Node filters are evaluated by the engine: those shapes are
         * counted again by the first request that has them. */
        if (s->sig != NULL)
            continue;
        /* a copy of the key only; counted below, outside old's mutex */
        agg_shape *k = shape_key(&req, s->slice_size, s->slice_level, s->ssal, old->nlevels, NULL);
        if (k == NULL)
            break;
        k->used = s->used;
        k->kind = s->kind;
        keep[n++] = k;
    }
    pthread_mutex_unlock(&from->mu);
    for (size_t i = 0; i < n; i++) {
        agg_shape *k = keep[i];
        for (size_t j = 0; j < k->nitems; j++)
            k->items[j].idx = snap_resource_index(fresh, k->items[j].name);
        req_vec req = {k->items, k->nitems};
        eng_params p;
        memset(&p, 0, sizeof(p));
        p.slice_size = k->slice_size;
        p.slice_level = k->slice_level;
        p.slice_size_at_level = k->ssal;
        agg_shape *s = shape_new(fresh, &req, &p, NULL);
        if (s != NULL) {
            s->kind = k->kind;
            pthread_mutex_lock(&to->mu);
            agg_shape *dup = find_locked(fresh, &req, &p, NULL);
            int kept = 0;
            if (dup == NULL) {
                insert_locked(to, s);
                s->used = k->used;
                s->refs = 0;
                kept = s->cached;
            } else {
                dup->refs--;
            }
            pthread_mutex_unlock(&to->mu);
            if (!kept)
                shape_free(s);
        }
        shape_free(k);
    }
}
