/* The simulated cluster: the snapshot's eligible nodes as a table the
 * baselines and the metrics read in O(1) per node (topo/simulate.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/kueue_names.h"

#define SIM_DEFAULT_RESOURCE "nvidia.com/gpu"

typedef struct walk_state {
    topo_sim_cluster *c;
    int32_t cur[TOPO_MAX_LEVELS];
    int counting; /* the first pass counts the nodes, the second fills them in */
    int rc;
    topo_err *err;
} walk_state;

static int visit(const topo_domain_view *v, void *payload)
{
    walk_state *w = payload;
    topo_sim_cluster *c = w->c;
    size_t last = c->nlevels - 1;

    w->cur[v->level] = (int32_t)c->ndom[v->level]++;
    if (!w->counting && v->level != last &&
        (c->dname[v->level][w->cur[v->level]] = topo_pool_strdup(c->pool, v->value)) == NULL) {
        w->rc = topo_err_nomem(w->err, "simulated cluster");
        return w->rc;
    }
    if (v->level != last || v->capacity <= 0)
        return 0;
    if (v->capacity > INT32_MAX) {
        w->rc = topo_err_set(w->err, TOPO_EINVALID,
                             "node %s: %lld %s is more than the simulator counts", v->value,
                             (long long)v->capacity, c->resource);
        return w->rc;
    }
    size_t n = c->nnodes++;
    if (w->counting)
        return 0;
    if ((c->host[n] = topo_pool_strdup(c->pool, v->value)) == NULL) {
        w->rc = topo_err_nomem(w->err, "simulated cluster");
        return w->rc;
    }
    c->cap[n] = (int32_t)v->capacity;
    c->free0[n] = (int32_t)(v->free < v->capacity ? v->free : v->capacity);
    memcpy(&c->dom[n * c->nlevels], w->cur, c->nlevels * sizeof(int32_t));
    c->dom[n * c->nlevels + last] = (int32_t)n; /* the node is its own leaf */
    return 0;
}

/* One pass of the walk over the snapshot (counting or filling in). */
static int walk(topo_sim_cluster *c, int counting, topo_err *err)
{
    walk_state w;
    memset(&w, 0, sizeof(w));
    w.c = c;
    w.counting = counting;
    w.err = err;
    c->nnodes = 0;
    memset(c->ndom, 0, sizeof(c->ndom));
    int rc = topo_snapshot_walk(c->snap, c->resource, visit, &w);
    if (rc != 0)
        return w.rc != 0 ? w.rc
                         : topo_err_set(err, rc, "walking the topology: %s", topo_strerror(rc));
    return 0;
}

/* s contains word, ignoring ASCII case. */
static int has(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == word[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* The tier a level's name suggests (docs/simulate.md "Metrics", slowdown). */
static topo_sim_tier tier_of_name(const char *level)
{
    const char *s = strrchr(level, '/');
    s = s != NULL ? s + 1 : level;
    if (has(s, "host") || has(s, "nvlink") || has(s, "clique"))
        return TOPO_SIM_TIER_NVLINK;
    if (has(s, "rack") || has(s, "leaf") || has(s, "subblock") || has(s, "switch"))
        return TOPO_SIM_TIER_LEAF;
    if (has(s, "spine") || has(s, "block"))
        return TOPO_SIM_TIER_SPINE;
    return TOPO_SIM_TIER_CLUSTER;
}

const char *const sim_tier_names[TOPO_SIM_TIERS + 1] = {"nvlink", "leaf", "spine", "cluster",
                                                        NULL};

const char *topo_sim_tier_name(topo_sim_tier t)
{
    return (unsigned)t < TOPO_SIM_TIERS ? sim_tier_names[t] : "?";
}

static int apply_tiers(topo_sim_cluster *c, const topo_sim_cluster_opts *o, topo_err *err)
{
    for (size_t l = 0; l < c->nlevels; l++)
        c->tier[l] = tier_of_name(c->levels[l]);
    c->tier[c->nlevels - 1] = TOPO_SIM_TIER_NVLINK; /* one node */
    for (size_t i = 0; o != NULL && i < o->ntiers; i++) {
        const char *item = o->tiers[i], *eq = strrchr(item, '=');
        size_t l = 0, t = 0;
        if (eq == NULL)
            return topo_err_set(err, TOPO_EINVALID, "--tier: expected LEVEL=TIER, got \"%s\"",
                                item);
        while (l < c->nlevels && (strlen(c->levels[l]) != (size_t)(eq - item) ||
                                  strncmp(c->levels[l], item, (size_t)(eq - item)) != 0))
            l++;
        if (l == c->nlevels)
            return topo_err_set(err, TOPO_EINVALID, "--tier: \"%.*s\" is not one of the levels",
                                (int)(eq - item), item);
        while (t < TOPO_SIM_TIERS && strcmp(sim_tier_names[t], eq + 1) != 0)
            t++;
        if (t == TOPO_SIM_TIERS)
            return topo_err_set(err, TOPO_EINVALID,
                                "--tier: %s: expected nvlink, leaf, spine or cluster, got \"%s\"",
                                c->levels[l], eq + 1);
        c->tier[l] = (topo_sim_tier)t;
    }
    return 0;
}

int topo_sim_cluster_create(topo_sim_cluster **out, topo_snapshot *snap,
                            const topo_sim_cluster_opts *opts, topo_err *err)
{
    topo_sim_cluster *c = NULL;
    int rc;

    *out = NULL;
    size_t nlevels = topo_snapshot_level_count(snap);
    if (nlevels == 0 || nlevels > TOPO_MAX_LEVELS ||
        strcmp(topo_snapshot_level(snap, nlevels - 1), TOPO_KUEUE_HOSTNAME_LABEL) != 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "--levels: the last level must be " TOPO_KUEUE_HOSTNAME_LABEL
                            " (the simulation places pods on nodes)");
    if ((c = calloc(1, sizeof(*c))) == NULL || (c->pool = topo_pool_create()) == NULL) {
        rc = topo_err_nomem(err, "simulated cluster");
        goto cleanup;
    }
    c->snap = snap;
    c->resource = opts != NULL && opts->resource != NULL ? opts->resource : SIM_DEFAULT_RESOURCE;
    if ((c->resource = topo_pool_strdup(c->pool, c->resource)) == NULL) {
        rc = topo_err_nomem(err, "simulated cluster");
        goto cleanup;
    }
    c->nlevels = nlevels;
    for (size_t l = 0; l < nlevels; l++)
        c->levels[l] = topo_snapshot_level(snap, l);
    if ((rc = apply_tiers(c, opts, err)) < 0 || (rc = walk(c, 1, err)) < 0)
        goto cleanup;
    if (c->nnodes > 0 &&
        ((c->host = calloc(c->nnodes, sizeof(*c->host))) == NULL ||
         (c->cap = calloc(c->nnodes, sizeof(*c->cap))) == NULL ||
         (c->free0 = calloc(c->nnodes, sizeof(*c->free0))) == NULL ||
         (c->dom = calloc(c->nnodes * nlevels, sizeof(*c->dom))) == NULL)) {
        rc = topo_err_nomem(err, "simulated cluster");
        goto cleanup;
    }
    /* The domains' names above the nodes (the hosts are c->host). */
    for (size_t l = 0; l + 1 < nlevels; l++) {
        if ((c->dname[l] = calloc(c->ndom[l] + 1, sizeof(*c->dname[l]))) == NULL) {
            rc = topo_err_nomem(err, "simulated cluster");
            goto cleanup;
        }
    }
    if ((rc = walk(c, 0, err)) < 0)
        goto cleanup;
    if (c->nnodes == 0) {
        rc = topo_err_set(err, TOPO_EINVALID, "no eligible node has %s", c->resource);
        goto cleanup;
    }
    if ((c->by_host = topo_strmap_create(c->nnodes)) == NULL) {
        rc = topo_err_nomem(err, "simulated cluster");
        goto cleanup;
    }
    for (size_t n = 0; n < c->nnodes; n++) {
        if (topo_strmap_put(c->by_host, c->host[n], (int32_t)n) != 0) {
            rc = topo_err_nomem(err, "simulated cluster");
            goto cleanup;
        }
        c->capacity += (uint64_t)c->free0[n];
        if ((uint32_t)c->cap[n] > c->max_node)
            c->max_node = (uint32_t)c->cap[n];
    }
    if (c->capacity == 0) {
        rc = topo_err_set(err, TOPO_EINVALID, "no %s is free on the eligible nodes", c->resource);
        goto cleanup;
    }
    *out = c;
    c = NULL;
    rc = 0;

cleanup:
    topo_sim_cluster_free(c);
    return rc;
}

void topo_sim_cluster_free(topo_sim_cluster *c)
{
    if (c == NULL)
        return;
    free(c->host);
    free(c->cap);
    free(c->free0);
    free(c->dom);
    for (size_t l = 0; l < TOPO_MAX_LEVELS; l++)
        free(c->dname[l]);
    topo_strmap_free(c->by_host);
    topo_pool_free(c->pool);
    free(c);
}

size_t topo_sim_cluster_node_count(const topo_sim_cluster *c)
{
    return c->nnodes;
}

uint64_t topo_sim_cluster_capacity(const topo_sim_cluster *c)
{
    return c->capacity;
}

uint32_t topo_sim_cluster_max_node(const topo_sim_cluster *c)
{
    return c->max_node;
}

int sim_tightest(const topo_sim_cluster *c, const int32_t *free, int32_t pods, int32_t gpus)
{
    int64_t run[TOPO_MAX_LEVELS], total = 0;
    int32_t cur[TOPO_MAX_LEVELS];
    int ok[TOPO_MAX_LEVELS];
    size_t upper = c->nlevels - 1; /* levels above the node */

    /* A level of one domain is the whole cluster under another name. */
    while (upper > 0 && c->ndom[upper - 1] <= 1)
        upper--;
    for (size_t l = 0; l < upper; l++) {
        run[l] = 0;
        cur[l] = -1;
        ok[l] = 0;
    }
    for (size_t n = 0; n < c->nnodes; n++) {
        int64_t f = free[n] / gpus;
        if (f == 0)
            continue;
        total += f;
        for (size_t l = 0; l < upper; l++) {
            int32_t d = sim_dom(c, n, l);
            if (d != cur[l]) {
                cur[l] = d;
                run[l] = 0;
            }
            run[l] += f;
            if (run[l] >= pods)
                ok[l] = 1;
        }
        if (upper > 0 && ok[upper - 1])
            return (int)(upper - 1);
    }
    for (size_t l = upper; l-- > 0;)
        if (ok[l] && c->ndom[l] > 1)
            return (int)l;
    return total >= pods ? -1 : -2;
}

const char *topo_sim_cluster_node(const topo_sim_cluster *c, size_t i)
{
    return i < c->nnodes ? c->host[i] : NULL;
}
