/* The tiers of the switch graph (include/topo/fabric.h): leaf domains from
 * the leaves' host sets, then tier after tier upwards from the groups'
 * upward sets, then each host's leaf domain. Everything is grouped by
 * sorting index sets, and indices are in id order, so the result does not
 * depend on the order the facts came in. */
#include <stdlib.h>
#include <string.h>

#include "fabric_internal.h"
#include "topo/strmap.h"

/* A set and the group (or switch) it belongs to. */
typedef struct keyed {
    fab_set key;
    size_t owner;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = fab_set_cmp(x->key, y->key);
    if (c != 0)
        return c;
    return (x->owner > y->owner) - (x->owner < y->owner);
}

/* Ids for a tier whose groups are in member-list order: the lowest
 * member's id, with ".2", ".3"... for a later group of the same lowest
 * member (or an id already taken in the tier). */
static int name_groups(topo_fabric *f, fab_tier *t)
{
    int rc = 0;
    topo_strmap *used = topo_strmap_create(t->n);
    if (!used)
        return TOPO_ENOMEM;
    for (size_t i = 0; rc == 0 && i < t->n; i++) {
        fab_group *g = &t->groups[i];
        const fab_switch *low = &f->sw[g->members.v[0]];
        g->name = low->name;
        g->id = low->id;
        for (unsigned n = 2; g->id && topo_strmap_get(used, g->id) >= 0; n++)
            g->id = topo_pool_printf(f->pool, "%s.%u", low->id, n);
        if (!g->id || topo_strmap_put(used, g->id, (int32_t)i) != 0)
            rc = TOPO_ENOMEM;
    }
    topo_strmap_free(used);
    return rc;
}

/* A tier of one group per distinct set among sorted keyed sets; each
 * owner's group index into parent_of[owner] (when parent_of is not NULL). */
static int tier_of_sets(topo_fabric *f, const keyed *k, size_t n, size_t *parent_of, fab_tier *out)
{
    out->groups = topo_pool_calloc(f->pool, n + 1, sizeof(*out->groups));
    out->n = 0;
    if (!out->groups)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && fab_set_cmp(k[j].key, k[i].key) == 0)
            j++;
        fab_group *g = &out->groups[out->n];
        *g = (fab_group){.members = k[i].key, .parent = TOPO_FABRIC_NONE, .nchildren = j - i};
        for (size_t x = i; parent_of && x < j; x++)
            parent_of[k[x].owner] = out->n;
        out->n++;
        i = j;
    }
    return name_groups(f, out);
}

/* Tier 0: leaves with the same non-empty host set are one domain; a leaf
 * with none is a domain of its own. */
static int leaf_domains(topo_fabric *f, fab_tier *out)
{
    size_t nleaves = 0, *one = NULL;
    keyed *k = calloc(f->nsw + 1, sizeof(*k));
    int rc = 0;
    if (!k)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < f->nsw; i++)
        if (f->sw[i].leaf)
            k[nleaves++] = (keyed){f->sw[i].hosts, i};
    qsort(k, nleaves, sizeof(*k), cmp_keyed);
    /* members: the leaves of a run of equal host sets, or the leaf alone */
    keyed *dom = calloc(nleaves + 1, sizeof(*dom));
    size_t *all = topo_pool_alloc(f->pool, (nleaves + 1) * sizeof(*all));
    if (!dom || !all) {
        rc = TOPO_ENOMEM;
        goto cleanup;
    }
    size_t ndom = 0;
    for (size_t i = 0; i < nleaves;) {
        size_t j = i + 1;
        while (k[i].key.n > 0 && j < nleaves && fab_set_cmp(k[j].key, k[i].key) == 0)
            j++;
        one = all + i;
        for (size_t x = i; x < j; x++)
            one[x - i] = k[x].owner; /* ascending: equal keys sort by owner */
        dom[ndom].key = (fab_set){one, j - i};
        dom[ndom].owner = ndom;
        ndom++;
        i = j;
    }
    /* in member-list order, which for a partition is lowest-id order */
    qsort(dom, ndom, sizeof(*dom), cmp_keyed);
    rc = tier_of_sets(f, dom, ndom, NULL, out);
    for (size_t d = 0; rc == 0 && d < out->n; d++) {
        out->groups[d].nchildren = 0;
        for (size_t m = 0; m < out->groups[d].members.n; m++) {
            fab_switch *s = &f->sw[out->groups[d].members.v[m]];
            s->domain = d;
            s->level = 0;
        }
    }
cleanup:
    free(dom);
    free(k);
    return rc;
}

/* The upward set of every group of tier t (the tier t+1 switches cabled to
 * its members), the groups with one into k: *nk of them. */
static int upward_sets(topo_fabric *f, const fab_tier *t, int level, keyed *k, size_t *nk)
{
    size_t *mark = malloc((f->nsw + 1) * sizeof(*mark));
    size_t *buf = malloc((f->nsw + 1) * sizeof(*buf));
    int rc = mark && buf ? 0 : TOPO_ENOMEM;
    for (size_t i = 0; rc == 0 && i < f->nsw; i++)
        mark[i] = TOPO_FABRIC_NONE;
    *nk = 0;
    for (size_t g = 0; rc == 0 && g < t->n; g++) {
        size_t n = 0;
        const fab_set *m = &t->groups[g].members;
        for (size_t i = 0; i < m->n; i++) {
            const fab_set *nb = &f->sw[m->v[i]].nbrs;
            for (size_t j = 0; j < nb->n; j++) {
                size_t s = nb->v[j];
                if (f->sw[s].level == level && mark[s] != g) {
                    mark[s] = g;
                    buf[n++] = s;
                }
            }
        }
        if (n == 0)
            continue; /* a top */
        n = fab_sort_unique(buf, n);
        size_t *set = fab_copy(f->pool, buf, n);
        if (!set)
            rc = TOPO_ENOMEM;
        else
            k[(*nk)++] = (keyed){{set, n}, g};
    }
    free(mark);
    free(buf);
    return rc;
}

/* Places the switches of tier t+1 (not placed yet, cabled to a member of
 * tier t): how many. */
static size_t place_next(topo_fabric *f, const fab_tier *t, int level)
{
    size_t placed = 0;
    for (size_t g = 0; g < t->n; g++) {
        const fab_set *m = &t->groups[g].members;
        for (size_t i = 0; i < m->n; i++) {
            const fab_set *nb = &f->sw[m->v[i]].nbrs;
            for (size_t j = 0; j < nb->n; j++) {
                fab_switch *s = &f->sw[nb->v[j]];
                if (s->level < 0) {
                    s->level = level;
                    placed++;
                }
            }
        }
    }
    return placed;
}

static int tiers_upward(topo_fabric *f)
{
    int rc = 0;
    for (int level = 1; rc == 0; level++) {
        size_t below = f->tiers.n - 1, nk = 0;
        if (place_next(f, &f->tiers.items[below], level) == 0)
            break;
        fab_tier t = f->tiers.items[below];
        keyed *k = calloc(t.n + 1, sizeof(*k));
        size_t *parent_of = calloc(t.n + 1, sizeof(*parent_of));
        fab_tier up = {0};
        rc = k && parent_of ? 0 : TOPO_ENOMEM;
        if (rc == 0)
            rc = upward_sets(f, &t, level, k, &nk);
        if (rc == 0) {
            qsort(k, nk, sizeof(*k), cmp_keyed);
            rc = tier_of_sets(f, k, nk, parent_of, &up);
        }
        for (size_t i = 0; rc == 0 && i < nk; i++)
            t.groups[k[i].owner].parent = parent_of[k[i].owner];
        if (rc == 0)
            rc = TOPO_ARRAY_PUSH(&f->tiers, up);
        free(k);
        free(parent_of);
    }
    return rc;
}

/* Each host's leaf domain: where most of its kept cables land, the lowest
 * domain (lowest id) on a tie. */
static int place_hosts(topo_fabric *f)
{
    size_t ndom = f->tiers.n ? f->tiers.items[0].n : 0;
    size_t *count = calloc(ndom + 1, sizeof(*count));
    if (!count)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < f->nhosts; i++) {
        fab_host *h = &f->hosts[i];
        size_t best = TOPO_FABRIC_NONE;
        for (size_t c = 0; c < h->ncables; c++) {
            size_t d = f->sw[h->cables[c]].domain;
            h->ndomains += count[d]++ == 0;
            if (best == TOPO_FABRIC_NONE || count[d] > count[best] ||
                (count[d] == count[best] && d < best))
                best = d;
        }
        for (size_t c = 0; c < h->ncables; c++)
            count[f->sw[h->cables[c]].domain] = 0;
        h->domain = best;
        if (best == TOPO_FABRIC_NONE) {
            h->status = h->excluded ? TOPO_FABRIC_HOST_EXCLUDED : TOPO_FABRIC_HOST_NO_LEAF;
            f->stats.hosts_excluded += h->excluded != 0;
            f->stats.hosts_no_leaf += h->excluded == 0;
            continue;
        }
        h->status = h->ndomains > 1 ? TOPO_FABRIC_HOST_AMBIGUOUS : TOPO_FABRIC_HOST_PLACED;
        f->stats.hosts_ambiguous += h->ndomains > 1;
        f->stats.hosts_placed += h->ndomains == 1;
        for (size_t t = 0, g = best; t < f->tiers.n && g != TOPO_FABRIC_NONE; t++) {
            f->tiers.items[t].groups[g].nhosts++;
            g = f->tiers.items[t].groups[g].parent;
        }
    }
    free(count);
    return 0;
}

int fab_tiers_build(topo_fabric *f, topo_err *err)
{
    fab_tier leaves = {0};
    int rc = 0;
    for (size_t i = 0; i < f->nsw; i++)
        f->stats.leaves += f->sw[i].leaf != 0;
    if (f->stats.leaves > 0) {
        rc = leaf_domains(f, &leaves);
        if (rc == 0)
            rc = TOPO_ARRAY_PUSH(&f->tiers, leaves);
        if (rc == 0)
            rc = tiers_upward(f);
    }
    if (rc == 0)
        rc = place_hosts(f);
    for (size_t i = 0; rc == 0 && i < f->nsw; i++)
        f->stats.switches_unplaced += f->sw[i].level < 0;
    return rc == TOPO_ENOMEM ? topo_err_nomem(err, "fabric") : rc;
}
