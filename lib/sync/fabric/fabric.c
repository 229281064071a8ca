/* The switch graph from facts (include/topo/fabric.h): switches and hosts
 * gathered from every facts, the plane filter applied, switches put in id
 * order and hosts in name order, cables deduplicated, then the tiers
 * (tiers.c). Also the read-only accessors. */
#define _POSIX_C_SOURCE 200809L

#include "topo/fabric.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_internal.h"
#include "topo/regex.h"
#include "topo/strmap.h"

enum { F_INCLUDE_SWITCH, F_EXCLUDE_SWITCH, F_INCLUDE_PORT, F_EXCLUDE_PORT, F_COUNT };

static const char *const filter_names[F_COUNT] = {"include_switch", "exclude_switch",
                                                  "include_port", "exclude_port"};

typedef struct filter {
    regex_t re[F_COUNT];
    int set[F_COUNT];
} filter;

static void filter_free(filter *flt)
{
    for (int i = 0; i < F_COUNT; i++)
        if (flt->set[i])
            regfree(&flt->re[i]);
}

static int filter_compile(filter *flt, const topo_fabric_opts *o, topo_err *err)
{
    const char *pat[F_COUNT] = {0};
    memset(flt, 0, sizeof(*flt));
    if (o) {
        pat[F_INCLUDE_SWITCH] = o->include_switch;
        pat[F_EXCLUDE_SWITCH] = o->exclude_switch;
        pat[F_INCLUDE_PORT] = o->include_port;
        pat[F_EXCLUDE_PORT] = o->exclude_port;
    }
    for (int i = 0; i < F_COUNT; i++) {
        if (!pat[i] || !*pat[i])
            continue;
        char msg[256];
        if (topo_regex_compile(&flt->re[i], pat[i], REG_EXTENDED | REG_NOSUB, msg,
                               sizeof(msg)) != 0) {
            filter_free(flt);
            return topo_err_set(err, TOPO_EINVALID, "fabric: %s \"%s\": %s", filter_names[i],
                                pat[i], msg);
        }
        flt->set[i] = 1;
    }
    return 0;
}

/* Kept by an include/exclude pair of the filter. */
static int keeps(const filter *flt, int include, int exclude, const char *s)
{
    if (flt->set[include] && regexec(&flt->re[include], s, 0, NULL, 0) != 0)
        return 0;
    return !(flt->set[exclude] && regexec(&flt->re[exclude], s, 0, NULL, 0) == 0);
}

size_t *fab_copy(topo_pool *pool, const size_t *v, size_t n)
{
    if (n == 0)
        return NULL;
    size_t *out = topo_pool_alloc(pool, n * sizeof(*out)); /* n is bounded by a real array */
    if (out)
        memcpy(out, v, n * sizeof(*out));
    return out;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t fab_sort_unique(size_t *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof(*v), cmp_size);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1])
            v[k++] = v[i];
    return k;
}

int fab_set_cmp(fab_set a, fab_set b)
{
    for (size_t i = 0; i < a.n && i < b.n; i++)
        if (a.v[i] != b.v[i])
            return a.v[i] < b.v[i] ? -1 : 1;
    return (a.n > b.n) - (a.n < b.n);
}

/* A name or id met in the facts (borrowed from them while building). */
typedef struct named {
    const char *key;  /* id or host name */
    const char *name; /* switches: the chosen name */
} named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->key, ((const named *)b)->key);
}

typedef struct pair {
    size_t k, v;
    const char *port; /* host cables: the port, to deduplicate across facts */
} pair;

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return strcmp(x->port ? x->port : "", y->port ? y->port : "");
}

/* Everything gathered from the facts before it is indexed. */
typedef struct gather {
    TOPO_ARRAY(named) switches;
    TOPO_ARRAY(named) hosts;
    TOPO_ARRAY(pair) host_cables; /* host, switch, port */
    TOPO_ARRAY(pair) edges;       /* switch, switch (both ways) */
    topo_strmap *sw_index;        /* id -> index into switches, then into f->sw */
    topo_strmap *host_index;
} gather;

static void gather_dispose(gather *g)
{
    free(g->switches.items);
    free(g->hosts.items);
    free(g->host_cables.items);
    free(g->edges.items);
    topo_strmap_free(g->sw_index);
    topo_strmap_free(g->host_index);
}

/* A switch's name: the lowest of the names that are not its id. */
static const char *better_name(const char *id, const char *have, const char *offer)
{
    if (!offer || strcmp(offer, id) == 0)
        return have;
    if (!have || strcmp(offer, have) < 0)
        return offer;
    return have;
}

static int collect_names(gather *g, const topo_facts *const *facts, size_t nfacts)
{
    for (size_t k = 0; k < nfacts; k++) {
        const topo_facts *fa = facts[k];
        for (size_t i = 0; i < topo_facts_switch_count(fa); i++) {
            const char *id = topo_facts_switch_id(fa, i), *name = topo_facts_switch_name(fa, i);
            int32_t at = topo_strmap_get(g->sw_index, id);
            if (at >= 0) {
                named *s = &g->switches.items[at];
                s->name = better_name(id, s->name, name);
                continue;
            }
            named s = {id, better_name(id, NULL, name)};
            if (g->switches.n >= INT32_MAX || TOPO_ARRAY_PUSH(&g->switches, s) != 0 ||
                topo_strmap_put(g->sw_index, id, (int32_t)(g->switches.n - 1)) != 0)
                return TOPO_ENOMEM;
        }
        for (size_t i = 0; i < topo_facts_host_count(fa); i++) {
            const char *name = topo_facts_host_name(fa, i);
            if (topo_strmap_get(g->host_index, name) >= 0)
                continue;
            if (g->hosts.n >= INT32_MAX || TOPO_ARRAY_PUSH(&g->hosts, ((named){name, NULL})) != 0 ||
                topo_strmap_put(g->host_index, name, (int32_t)(g->hosts.n - 1)) != 0)
                return TOPO_ENOMEM;
        }
    }
    return 0;
}

/* Switches kept by the filter and hosts, into f in id and name order; the
 * maps then give indices into f. */
static int index_nodes(topo_fabric *f, gather *g, const filter *flt)
{
    size_t kept = 0;
    for (size_t i = 0; i < g->switches.n; i++) {
        named s = g->switches.items[i];
        if (keeps(flt, F_INCLUDE_SWITCH, F_EXCLUDE_SWITCH, s.name ? s.name : s.key))
            g->switches.items[kept++] = s;
    }
    f->stats.switches_excluded = g->switches.n - kept;
    g->switches.n = kept;
    if (g->switches.n > 1)
        qsort(g->switches.items, g->switches.n, sizeof(named), cmp_named);
    if (g->hosts.n > 1)
        qsort(g->hosts.items, g->hosts.n, sizeof(named), cmp_named);
    topo_strmap_free(g->sw_index);
    topo_strmap_free(g->host_index);
    g->sw_index = topo_strmap_create(g->switches.n);
    g->host_index = topo_strmap_create(g->hosts.n);
    f->sw = topo_pool_calloc(f->pool, g->switches.n + 1, sizeof(*f->sw));
    f->hosts = topo_pool_calloc(f->pool, g->hosts.n + 1, sizeof(*f->hosts));
    if (!g->sw_index || !g->host_index || !f->sw || !f->hosts)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < g->switches.n; i++) {
        fab_switch *s = &f->sw[i];
        s->id = topo_pool_strdup(f->pool, g->switches.items[i].key);
        const char *name = g->switches.items[i].name;
        s->name = name ? topo_pool_strdup(f->pool, name) : s->id;
        s->level = -1;
        s->domain = TOPO_FABRIC_NONE;
        if (!s->id || !s->name || topo_strmap_put(g->sw_index, s->id, (int32_t)i) != 0)
            return TOPO_ENOMEM;
    }
    for (size_t i = 0; i < g->hosts.n; i++) {
        fab_host *h = &f->hosts[i];
        h->name = topo_pool_strdup(f->pool, g->hosts.items[i].key);
        h->domain = TOPO_FABRIC_NONE;
        if (!h->name || topo_strmap_put(g->host_index, h->name, (int32_t)i) != 0)
            return TOPO_ENOMEM;
    }
    f->nsw = g->switches.n;
    f->nhosts = g->hosts.n;
    return 0;
}

static int one_link(topo_fabric *f, gather *g, const filter *flt, const topo_facts *fa,
                    topo_facts_link l)
{
    int32_t s = topo_strmap_get(g->sw_index, topo_facts_switch_id(fa, l.sw));
    if (!l.is_host_link) {
        int32_t o = topo_strmap_get(g->sw_index, topo_facts_switch_id(fa, l.other));
        if (s < 0 || o < 0)
            return 0;
        if (TOPO_ARRAY_PUSH(&g->edges, ((pair){(size_t)s, (size_t)o, NULL})) != 0 ||
            TOPO_ARRAY_PUSH(&g->edges, ((pair){(size_t)o, (size_t)s, NULL})) != 0)
            return TOPO_ENOMEM;
        return 0;
    }
    int32_t h = -1;
    if (l.host != TOPO_FACTS_NO_HOST)
        h = topo_strmap_get(g->host_index, topo_facts_host_name(fa, l.host));
    if (s >= 0)
        f->sw[s].leaf = 1; /* whatever the port filter says of the cable */
    if (h < 0) {
        f->stats.unnamed_cables += s >= 0;
        return 0;
    }
    if (s < 0 || !keeps(flt, F_INCLUDE_PORT, F_EXCLUDE_PORT, l.port ? l.port : "")) {
        f->hosts[h].excluded = 1;
        f->stats.host_cables_excluded++;
        return 0;
    }
    return TOPO_ARRAY_PUSH(&g->host_cables, ((pair){(size_t)h, (size_t)s, l.port}));
}

/* pairs sorted by k: each k's values as a set of sets[k] (values in the
 * pool). */
static int pairs_to_sets(topo_pool *pool, const pair *p, size_t n, fab_set *sets, size_t nsets)
{
    size_t *values = topo_pool_alloc(pool, (n + 1) * sizeof(*values));
    if (!values)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++)
        values[i] = p[i].v;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j].k == p[i].k)
            j++;
        if (p[i].k < nsets)
            sets[p[i].k] = (fab_set){values + i, j - i};
        i = j;
    }
    return 0;
}

/* Sorts and drops repeated pairs; returns the new count. */
static size_t unique_pairs(pair *p, size_t n)
{
    if (n < 2)
        return n;
    qsort(p, n, sizeof(*p), cmp_pair);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (cmp_pair(&p[i], &p[k - 1]) != 0)
            p[k++] = p[i];
    return k;
}

/* pairs sorted and unique by k, v into one set per k < nsets, in sets
 * (cleared first). */
static int sets_of(topo_pool *pool, const pair *p, size_t n, fab_set *sets, size_t nsets)
{
    memset(sets, 0, nsets * sizeof(*sets));
    return pairs_to_sets(pool, p, n, sets, nsets);
}

static int build_sets(topo_fabric *f, gather *g)
{
    size_t most = f->nsw > f->nhosts ? f->nsw : f->nhosts;
    fab_set *sets = calloc(most + 1, sizeof(*sets));
    int rc = sets ? 0 : TOPO_ENOMEM;
    g->edges.n = unique_pairs(g->edges.items, g->edges.n);
    if (rc == 0)
        rc = sets_of(f->pool, g->edges.items, g->edges.n, sets, f->nsw);
    for (size_t i = 0; rc == 0 && i < f->nsw; i++)
        f->sw[i].nbrs = sets[i];
    /* host -> switch, one per distinct cable (a host's ports on one switch
     * each count when a host is placed by its most cables) */
    g->host_cables.n = unique_pairs(g->host_cables.items, g->host_cables.n);
    f->stats.host_cables = g->host_cables.n;
    if (rc == 0)
        rc = sets_of(f->pool, g->host_cables.items, g->host_cables.n, sets, f->nhosts);
    for (size_t i = 0; rc == 0 && i < f->nhosts; i++) {
        f->hosts[i].cables = sets[i].v;
        f->hosts[i].ncables = sets[i].n;
    }
    /* switch -> its distinct hosts */
    for (size_t i = 0; i < g->host_cables.n; i++) {
        pair *p = &g->host_cables.items[i];
        *p = (pair){p->v, p->k, NULL};
    }
    g->host_cables.n = unique_pairs(g->host_cables.items, g->host_cables.n);
    if (rc == 0)
        rc = sets_of(f->pool, g->host_cables.items, g->host_cables.n, sets, f->nsw);
    for (size_t i = 0; rc == 0 && i < f->nsw; i++)
        f->sw[i].hosts = sets[i];
    free(sets);
    return rc;
}

int topo_fabric_build(topo_fabric **out, const topo_facts *const *facts, size_t nfacts,
                      const topo_fabric_opts *opts, topo_err *err)
{
    filter flt;
    gather g = {0};
    topo_fabric *f = NULL;
    *out = NULL;
    int rc = filter_compile(&flt, opts, err);
    if (rc != 0)
        return rc;
    f = calloc(1, sizeof(*f));
    g.sw_index = topo_strmap_create(256);
    g.host_index = topo_strmap_create(256);
    if (!f || !(f->pool = topo_pool_create()) || !g.sw_index || !g.host_index) {
        rc = TOPO_ENOMEM;
        goto cleanup;
    }
    if ((rc = collect_names(&g, facts, nfacts)) != 0 || (rc = index_nodes(f, &g, &flt)) != 0)
        goto cleanup;
    for (size_t k = 0; rc == 0 && k < nfacts; k++)
        for (size_t i = 0; rc == 0 && i < topo_facts_link_count(facts[k]); i++)
            rc = one_link(f, &g, &flt, facts[k], topo_facts_link_at(facts[k], i));
    if (rc != 0 || (rc = build_sets(f, &g)) != 0)
        goto cleanup;
    f->stats.switches = f->nsw;
    f->stats.hosts = f->nhosts;
    if ((rc = fab_tiers_build(f, err)) != 0)
        goto cleanup;
    *out = f;
    f = NULL;
cleanup:
    if (rc == TOPO_ENOMEM)
        topo_err_nomem(err, "fabric");
    filter_free(&flt);
    gather_dispose(&g);
    topo_fabric_free(f);
    return rc;
}

void topo_fabric_free(topo_fabric *fabric)
{
    if (!fabric)
        return;
    free(fabric->tiers.items);
    topo_pool_free(fabric->pool);
    free(fabric);
}

topo_fabric_stats topo_fabric_get_stats(const topo_fabric *fabric)
{
    return fabric->stats;
}

size_t topo_fabric_tier_count(const topo_fabric *fabric)
{
    return fabric->tiers.n;
}

size_t topo_fabric_group_count(const topo_fabric *fabric, size_t tier)
{
    return tier < fabric->tiers.n ? fabric->tiers.items[tier].n : 0;
}

topo_fabric_group topo_fabric_group_at(const topo_fabric *fabric, size_t tier, size_t i)
{
    topo_fabric_group out = {NULL, NULL, 0, TOPO_FABRIC_NONE, 0, 0};
    if (tier >= fabric->tiers.n || i >= fabric->tiers.items[tier].n)
        return out;
    const fab_group *g = &fabric->tiers.items[tier].groups[i];
    out = (topo_fabric_group){g->id, g->name, g->members.n, g->parent, g->nchildren, g->nhosts};
    return out;
}

const char *topo_fabric_group_switch(const topo_fabric *fabric, size_t tier, size_t i, size_t k)
{
    if (tier >= fabric->tiers.n || i >= fabric->tiers.items[tier].n)
        return NULL;
    const fab_group *g = &fabric->tiers.items[tier].groups[i];
    return k < g->members.n ? fabric->sw[g->members.v[k]].id : NULL;
}

const char *topo_fabric_status_name(topo_fabric_status status)
{
    switch (status) {
    case TOPO_FABRIC_HOST_PLACED:
        return "placed";
    case TOPO_FABRIC_HOST_AMBIGUOUS:
        return "ambiguous";
    case TOPO_FABRIC_HOST_NO_LEAF:
        return "no-leaf";
    case TOPO_FABRIC_HOST_EXCLUDED:
        return "excluded";
    }
    return "?";
}

size_t topo_fabric_host_count(const topo_fabric *fabric)
{
    return fabric->nhosts;
}

const char *topo_fabric_host_name(const topo_fabric *fabric, size_t host)
{
    return host < fabric->nhosts ? fabric->hosts[host].name : NULL;
}

int topo_fabric_find_host(const topo_fabric *fabric, const char *name, size_t *out_index)
{
    size_t lo = 0, hi = fabric->nhosts;
    while (name && lo < hi) { /* hosts are in name order */
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(fabric->hosts[mid].name, name);
        if (c == 0) {
            *out_index = mid;
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return TOPO_ENOTFOUND;
}

topo_fabric_status topo_fabric_host_status(const topo_fabric *fabric, size_t host)
{
    return host < fabric->nhosts ? fabric->hosts[host].status : TOPO_FABRIC_HOST_NO_LEAF;
}

size_t topo_fabric_host_leaf_domains(const topo_fabric *fabric, size_t host)
{
    return host < fabric->nhosts ? fabric->hosts[host].ndomains : 0;
}

size_t topo_fabric_host_group(const topo_fabric *fabric, size_t host, size_t tier)
{
    if (host >= fabric->nhosts)
        return TOPO_FABRIC_NONE;
    size_t g = fabric->hosts[host].domain;
    for (size_t t = 0; t < tier && g != TOPO_FABRIC_NONE; t++)
        g = fabric->tiers.items[t].groups[g].parent;
    return g;
}

size_t topo_fabric_host_tier_count(const topo_fabric *fabric, size_t host)
{
    size_t n = 0;
    while (topo_fabric_host_group(fabric, host, n) != TOPO_FABRIC_NONE)
        n++;
    return n;
}

const char *topo_fabric_host_tier(const topo_fabric *fabric, size_t host, size_t tier)
{
    size_t g = topo_fabric_host_group(fabric, host, tier);
    return g == TOPO_FABRIC_NONE ? NULL : fabric->tiers.items[tier].groups[g].id;
}
