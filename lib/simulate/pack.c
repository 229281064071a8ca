/* The packing rule (topo/packing.h) over a run's free GPUs, for mixed-pack:
 * the domains of one level counted from the nodes as the webhook would
 * count them from its snapshot (used, free, the most free on one node), the
 * rule asked for the one domain it prefers most. O(nodes) a pod, as
 * kube-default's own pass. */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topo/packing.h"

struct sim_pack {
    size_t level;
    size_t ndom;
    topo_packing_domain *dom;
};

int topo_sim_cluster_pack_level(const char **out, const topo_sim_cluster *c, const char *level,
                                topo_err *err)
{
    size_t l = 0;

    *out = NULL;
    if (c->nlevels < 2)
        return topo_err_set(err, TOPO_EINVALID,
                            "mixed-pack: the cluster has no level above the hostname to pack "
                            "pods into");
    if (level == NULL) {
        l = c->nlevels - 2; /* the default: the level above hostname */
    } else {
        while (l < c->nlevels && strcmp(c->levels[l], level) != 0)
            l++;
        if (l == c->nlevels)
            return topo_err_set(err, TOPO_EINVALID, "--pack-level: \"%s\" is not one of the levels",
                                level);
        if (l == c->nlevels - 1)
            return topo_err_set(err, TOPO_EINVALID,
                                "--pack-level: %s is a node, not a domain of nodes", level);
    }
    *out = c->levels[l];
    return 0;
}

int sim_pack_create(sim_pack **out, const sim_run *r, const char *level, topo_err *err)
{
    const topo_sim_cluster *c = r->c;
    sim_pack *p = NULL;
    const char *name;
    size_t l = 0;
    int rc;

    *out = NULL;
    if ((rc = topo_sim_cluster_pack_level(&name, c, level, err)) < 0)
        return rc;
    while (c->levels[l] != name)
        l++;
    if ((p = calloc(1, sizeof(*p))) == NULL ||
        (p->dom = calloc(c->ndom[l] + 1, sizeof(*p->dom))) == NULL) {
        free(p);
        return topo_err_nomem(err, "simulation");
    }
    p->level = l;
    p->ndom = c->ndom[l];
    for (size_t d = 0; d < p->ndom; d++)
        p->dom[d].name = c->dname[l][d];
    *out = p;
    return 0;
}

void sim_pack_free(sim_pack *p)
{
    if (p == NULL)
        return;
    free(p->dom);
    free(p);
}

size_t sim_pack_level(const sim_pack *p)
{
    return p->level;
}

int sim_pack_prefer(sim_pack *p, const sim_run *r, int32_t gpus, int32_t *out_dom,
                    topo_err *err)
{
    const topo_sim_cluster *c = r->c;
    size_t best, n;
    int rc;

    *out_dom = -1;
    for (size_t d = 0; d < p->ndom; d++)
        p->dom[d].used = p->dom[d].free = p->dom[d].node_free_max = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        topo_packing_domain *d = &p->dom[sim_dom(c, i, p->level)];
        int32_t f = r->free[i];
        d->used += c->cap[i] - f;
        d->free += f;
        if (f > d->node_free_max)
            d->node_free_max = f;
    }
    if ((rc = topo_packing_rank(&best, &n, 1, p->dom, p->ndom, gpus, err)) < 0)
        return rc;
    if (n == 1)
        *out_dom = (int32_t)best;
    return 0;
}
