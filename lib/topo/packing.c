/* The packing rule (topo/packing.h): the used domains that fit, tightest
 * first. O(n k): k is the handful of affinity terms a pod gets. */
#include <string.h>

#include "topo/packing.h"

/* Whether a comes before b: less free first, then by name. */
static int before(const topo_packing_domain *a, const topo_packing_domain *b)
{
    if (a->free != b->free)
        return a->free < b->free;
    return strcmp(a->name, b->name) < 0;
}

static int check(const topo_packing_domain *d, size_t i, topo_err *err)
{
    if (d->name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "packing: domain %zu: name: missing", i);
    if (d->used < 0 || d->free < 0 || d->node_free_max < 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "packing: domain %s: %s: negative", d->name,
                            d->used < 0 ? "used" : d->free < 0 ? "free" : "node_free_max");
    return 0;
}

int topo_packing_rank(size_t *out, size_t *out_n, size_t k, const topo_packing_domain *domains,
                      size_t n, int64_t request, topo_err *err)
{
    size_t have = 0;
    int rc;

    *out_n = 0;
    if (request < 1)
        return topo_err_set(err, TOPO_EINVALID, "packing: request: %lld, expected at least 1",
                            (long long)request);
    for (size_t i = 0; i < n; i++) {
        const topo_packing_domain *d = &domains[i];
        if ((rc = check(d, i, err)) < 0)
            return rc;
        /* Room spread over nodes is no room: the pod runs on one node. */
        if (d->used == 0 || d->node_free_max < request || k == 0)
            continue;
        if (have == k && !before(d, &domains[out[k - 1]]))
            continue;
        size_t at = have < k ? have++ : k - 1;
        while (at > 0 && before(d, &domains[out[at - 1]])) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = i;
    }
    *out_n = have;
    return 0;
}
