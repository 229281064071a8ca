/* The snapshot's per-domain sums of one resource: capacity and free over
 * each domain's eligible nodes, as topo_snapshot_walk computes them (a
 * leaf's free is its room, free minus TAS usage, never below 0), kept so
 * that topo_packing_find reads a domain's in O(1) instead of summing its
 * nodes on every call.
 *
 * A resource is tracked from the first time it is asked for, on that
 * snapshot, and from then on by every usage change: the changed leaf's
 * free and the difference added along its path to the root (O(levels)).
 * Capacity moves only with nodes, which rebuild the snapshot; a rebuild
 * sums again the resources the old snapshot tracked (snap_sums_inherit).
 * Tracked resources are never dropped: they are at most the resources the
 * nodes expose, and in practice the one or two packing is configured for.
 *
 * Threads: as the engine's aggregates (snapshot_agg.c). Readers look an
 * entry up, and add a missing one, under the sums' mutex; the sums they
 * read are changed only by usage changes, which topo_live makes under its
 * write lock with no reader inside. An entry lives as long as its
 * snapshot. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"
#include "topo/quantity.h"

struct snap_sums_set {
    pthread_mutex_t mu;
    snap_sums **by_res; /* per resource index; NULL until first tracked */
    size_t nres;
};

static void sums_free(snap_sums *s)
{
    if (s == NULL)
        return;
    free(s->capacity);
    free(s->free);
    free(s);
}

struct snap_sums_set *snap_sums_create(void)
{
    struct snap_sums_set *set = calloc(1, sizeof(*set));
    if (set == NULL)
        return NULL;
    if (pthread_mutex_init(&set->mu, NULL) != 0) {
        free(set);
        return NULL;
    }
    return set;
}

void snap_sums_free(struct snap_sums_set *set)
{
    if (set == NULL)
        return;
    for (size_t i = 0; i < set->nres; i++)
        sums_free(set->by_res[i]);
    free(set->by_res);
    pthread_mutex_destroy(&set->mu);
    free(set);
}

static int64_t leaf_free(const snap_leaf *leaf, int32_t r)
{
    return leaf->room[r] > 0 ? leaf->room[r] : 0;
}

/* Every domain's sums of resource r, from the nodes and the leaves' room. */
static snap_sums *sums_new(const topo_snapshot *snap, int32_t r)
{
    snap_sums *s = calloc(1, sizeof(*s));
    size_t nd = snap->ndomains ? snap->ndomains : 1;
    if (s == NULL)
        return NULL;
    s->resource = r;
    s->capacity = calloc(nd, sizeof(*s->capacity));
    s->free = calloc(nd, sizeof(*s->free));
    if (s->capacity == NULL || s->free == NULL) {
        sums_free(s);
        return NULL;
    }
    const char *name = snap->resource_names[r];
    for (size_t n = 0; n < snap->nnodes; n++) {
        const snap_node *node = &snap->nodes[n];
        if (node->leaf < 0)
            continue;
        int32_t d = snap->leaves[node->leaf].domain;
        /* names are interned: the pointer says which resource it is */
        for (size_t i = 0; i < node->nallocatable; i++)
            if (node->allocatable[i].name == name)
                s->capacity[d] = topo_quantity_add(s->capacity[d], node->allocatable[i].amount);
    }
    for (size_t l = 0; l < snap->nleaves; l++)
        s->free[snap->leaves[l].domain] = leaf_free(&snap->leaves[l], r);
    for (size_t lv = snap->nlevels; lv-- > 1;)
        for (size_t i = 0; i < snap->level_ndomains[lv]; i++) {
            int32_t d = snap->level_domains[lv][i];
            int32_t par = snap->domains[d].parent;
            s->capacity[par] = topo_quantity_add(s->capacity[par], s->capacity[d]);
            s->free[par] = topo_quantity_add(s->free[par], s->free[d]);
        }
    return s;
}

/* Under the mutex: the slot of resource r, the table sized on first use
 * (resources are fixed once the snapshot is built). */
static snap_sums **slot_locked(struct snap_sums_set *set, const topo_snapshot *snap, int32_t r)
{
    if (set->by_res == NULL) {
        if ((set->by_res = calloc(snap->nresources ? snap->nresources : 1,
                                  sizeof(*set->by_res))) == NULL)
            return NULL;
        set->nres = snap->nresources;
    }
    return (size_t)r < set->nres ? &set->by_res[r] : NULL;
}

const snap_sums *snap_sums_get(const topo_snapshot *snap, int32_t r)
{
    struct snap_sums_set *set = snap->sums;
    if (set == NULL || !snap->built || r < 0 || (size_t)r >= snap->nresources)
        return NULL;
    pthread_mutex_lock(&set->mu);
    snap_sums **slot = slot_locked(set, snap, r);
    snap_sums *have = slot != NULL ? *slot : NULL;
    pthread_mutex_unlock(&set->mu);
    if (have != NULL || slot == NULL)
        return have;
    /* Summed outside the mutex: other readers go on meanwhile. */
    snap_sums *fresh = sums_new(snap, r);
    if (fresh == NULL)
        return NULL;
    pthread_mutex_lock(&set->mu);
    if (*slot == NULL)
        *slot = fresh;
    else
        sums_free(fresh); /* another reader was first */
    have = *slot;
    pthread_mutex_unlock(&set->mu);
    return have;
}

void snap_sums_leaf_changed(topo_snapshot *snap, int32_t leaf)
{
    struct snap_sums_set *set = snap->sums;
    if (set == NULL || leaf < 0)
        return;
    pthread_mutex_lock(&set->mu);
    for (size_t r = 0; r < set->nres; r++) {
        snap_sums *s = set->by_res[r];
        if (s == NULL)
            continue;
        int32_t d = snap->leaves[leaf].domain;
        int64_t delta = topo_quantity_sub(leaf_free(&snap->leaves[leaf], (int32_t)r), s->free[d]);
        if (delta == 0)
            continue;
        for (; d >= 0; d = snap->domains[d].parent)
            s->free[d] = topo_quantity_add(s->free[d], delta);
    }
    pthread_mutex_unlock(&set->mu);
}

void snap_sums_inherit(topo_snapshot *fresh, const topo_snapshot *old)
{
    struct snap_sums_set *from = old->sums;
    if (from == NULL || fresh->sums == NULL || !fresh->built)
        return;
    for (size_t r = 0;; r++) {
        pthread_mutex_lock(&from->mu);
        int more = r < from->nres;
        int tracked = more && from->by_res[r] != NULL;
        pthread_mutex_unlock(&from->mu);
        if (!more)
            break;
        /* Looked up by name: the resources' indices may have moved. */
        if (tracked)
            (void)snap_sums_get(fresh, snap_resource_index(fresh, old->resource_names[r]));
    }
}
