/* Which gated PodSets a round re-evaluates (ungater_skip.h). */
#include "ungater_skip.h"

#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/quantity.h"
#include "topo/str.h"
#include "topo/strmap.h"

/* A PodSet that did not fit. */
typedef struct failed {
    char *key;
    uint64_t freed;    /* the counters when it was last found not to fit */
    int64_t evaluated; /* when it was last evaluated (ms) */
    int seen;          /* looked at this round */
} failed;

/* One resource's room in one topology, from a walk of its snapshot. */
typedef struct room {
    int64_t *level_free; /* per level: the roomiest domain's free amount */
    int64_t *level_pods; /* per level: the most free pod slots of a domain */
    int64_t total_free, total_pods;
    int64_t node_free; /* the roomiest node (an upper bound) */
    size_t nlevels;
} room;

typedef struct resource_room {
    char *name;
    room *per_live; /* nlives */
} resource_room;

struct wh_skip {
    topo_live *const *lives;
    size_t nlives;
    failed *items;
    size_t n, cap;
    topo_strmap *index; /* key → items index; keys are the items' */
    /* this round */
    uint64_t freed;
    int64_t now_ms;
    int rechecks;
    resource_room *rooms;
    size_t nrooms, cap_rooms;
};

int wh_skip_create(wh_skip **out, topo_live *const *lives, size_t nlives, topo_err *err)
{
    wh_skip *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (s == NULL || (s->index = topo_strmap_create(64)) == NULL) {
        free(s);
        return topo_err_nomem(err, "ungater");
    }
    s->lives = lives;
    s->nlives = nlives;
    *out = s;
    return 0;
}

static void rooms_clear(wh_skip *s)
{
    for (size_t i = 0; i < s->nrooms; i++) {
        for (size_t t = 0; s->rooms[i].per_live != NULL && t < s->nlives; t++) {
            free(s->rooms[i].per_live[t].level_free);
            free(s->rooms[i].per_live[t].level_pods);
        }
        free(s->rooms[i].per_live);
        free(s->rooms[i].name);
    }
    s->nrooms = 0;
}

void wh_skip_free(wh_skip *s)
{
    if (s == NULL)
        return;
    rooms_clear(s);
    free(s->rooms);
    topo_strmap_free(s->index);
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].key);
    free(s->items);
    free(s);
}

static uint64_t freed_now(const wh_skip *s)
{
    uint64_t sum = 0;
    for (size_t t = 0; t < s->nlives; t++)
        sum += topo_live_freed(s->lives[t]);
    return sum;
}

void wh_skip_round_begin(wh_skip *s, int64_t now_ms)
{
    rooms_clear(s);
    s->freed = freed_now(s);
    s->now_ms = now_ms;
    s->rechecks = 0;
}

/* --- the bound ----------------------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int visit(const topo_domain_view *v, void *payload)
{
    room *r = payload;
    if (v->level >= r->nlevels)
        return 0;
    if (v->level == 0) {
        r->total_free = topo_quantity_add(r->total_free, v->free);
        r->total_pods = topo_quantity_add(r->total_pods, v->pods_free);
    }
    r->level_free[v->level] = max64(r->level_free[v->level], v->free);
    r->level_pods[v->level] = max64(r->level_pods[v->level], v->pods_free);
    r->node_free = max64(r->node_free, v->max_node_free);
    return 0;
}

/* The room of one resource in every topology, walked once per round; NULL
 * when out of memory (the caller then evaluates). */
static const resource_room *room_of(wh_skip *s, const char *resource)
{
    for (size_t i = 0; i < s->nrooms; i++)
        if (strcmp(s->rooms[i].name, resource) == 0)
            return &s->rooms[i];
    if (topo_array_reserve((void **)&s->rooms, &s->cap_rooms, s->nrooms + 1,
                           sizeof(*s->rooms)) != 0)
        return NULL;
    resource_room *rr = &s->rooms[s->nrooms];
    memset(rr, 0, sizeof(*rr));
    if ((rr->name = topo_strdup(resource)) == NULL ||
        (rr->per_live = calloc(s->nlives, sizeof(*rr->per_live))) == NULL) {
        free(rr->name);
        return NULL;
    }
    s->nrooms++; /* from here on rooms_clear frees it */
    for (size_t t = 0; t < s->nlives; t++) {
        room *r = &rr->per_live[t];
        /* One walk under the snapshot's read lock: a commit waits for it,
         * as for one placement's engine pass. */
        const topo_snapshot *snap = topo_live_acquire(s->lives[t]);
        r->nlevels = topo_snapshot_level_count(snap);
        r->level_free = calloc(r->nlevels + 1, sizeof(*r->level_free));
        r->level_pods = calloc(r->nlevels + 1, sizeof(*r->level_pods));
        if (r->level_free != NULL && r->level_pods != NULL)
            (void)topo_snapshot_walk(snap, resource, visit, r);
        topo_live_release(s->lives[t], snap);
        if (r->level_free == NULL || r->level_pods == NULL)
            return NULL;
    }
    return rr;
}

/* 0 only when no topology has room for the PodSet (see the header). */
static int could_fit(wh_skip *s, const wh_skip_need *need)
{
    int asks = 0, has_level = 0;
    for (size_t i = 0; i < need->nrequests; i++)
        asks |= need->requests[i].amount > 0;
    if (!asks || need->pods <= 0)
        return 1;
    for (size_t t = 0; t < s->nlives; t++) {
        int level = -1;
        if (need->level != NULL) {
            const topo_snapshot *snap = topo_live_acquire(s->lives[t]);
            level = topo_snapshot_level_index(snap, need->level);
            topo_live_release(s->lives[t], snap);
            if (level < 0)
                continue;
        }
        has_level = 1;
        int fits = 1;
        for (size_t i = 0; fits && i < need->nrequests; i++) {
            const topo_resource *r = &need->requests[i];
            if (r->amount <= 0)
                continue;
            const resource_room *rr = room_of(s, r->name);
            if (rr == NULL)
                return 1;
            const room *m = &rr->per_live[t];
            if (level >= 0 && (size_t)level >= m->nlevels)
                return 1;
            int64_t have = level >= 0 ? m->level_free[level] : m->total_free;
            int64_t slots = level >= 0 ? m->level_pods[level] : m->total_pods;
            fits = have >= topo_quantity_mul(r->amount, need->pods) && slots >= need->pods &&
                   m->node_free >= r->amount;
        }
        if (fits)
            return 1;
    }
    /* A level no topology has: admission says so; not ours to judge. */
    return has_level || need->level == NULL ? 0 : 1;
}

/* --- remembered failures ------------------------------------------------------------ */

wh_skip_verdict wh_skip_check(wh_skip *s, const wh_skip_need *need, uint64_t *freed)
{
    *freed = s->freed;
    if (s->index == NULL)
        return WH_SKIP_EVALUATE;
    int32_t at = topo_strmap_get(s->index, need->key);
    if (at < 0)
        return WH_SKIP_EVALUATE;
    failed *f = &s->items[at];
    f->seen = 1;
    if (s->now_ms - f->evaluated >= TOPO_UNGATER_RECHECK_MS &&
        s->rechecks < TOPO_UNGATER_RECHECKS_PER_ROUND) {
        s->rechecks++;
        return WH_SKIP_EVALUATE;
    }
    if (f->freed == s->freed)
        return WH_SKIP_UNCHANGED;
    if (could_fit(s, need))
        return WH_SKIP_EVALUATE;
    /* Ruled out on a snapshot read after s->freed: until the counters move
     * again it stays ruled out (and costs nothing next round). */
    f->freed = s->freed;
    return WH_SKIP_NO_ROOM;
}

int wh_skip_failed(wh_skip *s, const char *key, uint64_t freed, int64_t now_ms)
{
    if (s->index == NULL && (s->index = topo_strmap_create(64)) == NULL)
        return TOPO_ENOMEM;
    int32_t at = topo_strmap_get(s->index, key);
    if (at < 0) {
        if (topo_array_reserve((void **)&s->items, &s->cap, s->n + 1, sizeof(*s->items)) != 0)
            return TOPO_ENOMEM;
        failed *f = &s->items[s->n];
        memset(f, 0, sizeof(*f));
        if ((f->key = topo_strdup(key)) == NULL)
            return TOPO_ENOMEM;
        if (topo_strmap_put(s->index, f->key, (int32_t)s->n) != 0) {
            free(f->key);
            return TOPO_ENOMEM;
        }
        at = (int32_t)s->n++;
    }
    s->items[at].freed = freed;
    s->items[at].evaluated = now_ms;
    s->items[at].seen = 1;
    return 0;
}

void wh_skip_round_end(wh_skip *s, int complete)
{
    rooms_clear(s);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (complete && !s->items[i].seen) {
            free(s->items[i].key);
            continue;
        }
        s->items[i].seen = 0;
        s->items[k++] = s->items[i];
    }
    if (k == s->n)
        return;
    s->n = k;
    /* Reindexed: the map's keys are the items' strings. */
    topo_strmap *index = topo_strmap_create(k > 64 ? k : 64);
    for (size_t i = 0; index != NULL && i < k; i++)
        if (topo_strmap_put(index, s->items[i].key, (int32_t)i) != 0) {
            topo_strmap_free(index);
            index = NULL;
        }
    topo_strmap_free(s->index);
    s->index = index;
    if (index == NULL) { /* out of memory: forget them all (they are evaluated again) */
        for (size_t i = 0; i < k; i++)
            free(s->items[i].key);
        s->n = 0;
        s->index = topo_strmap_create(64);
    }
}

size_t wh_skip_remembered(const wh_skip *s)
{
    return s->n;
}
