/* An inventory into a live snapshot, as topo-webhook's static mode
 * (--inventory [--pods]) serves it and bench_admission measures it: the
 * files read, then every node and every bound pod's usage, published in
 * one commit. */
#include <stdio.h>

#include "topo/inventory.h"
#include "topo/live.h"

int topo_inventory_load_static(topo_inventory **out, const char *nodes_path,
                               const char *pods_path, topo_err *err)
{
    topo_inventory *inv = NULL;
    int rc = topo_inventory_create(&inv, err);
    if (rc == 0)
        rc = topo_inventory_load_nodes_file(inv, nodes_path, err);
    if (rc == 0 && pods_path != NULL)
        rc = topo_inventory_load_pods_file(inv, pods_path, err);
    if (rc < 0) {
        topo_inventory_free(inv);
        inv = NULL;
    }
    *out = inv;
    return rc;
}

int topo_inventory_fill_live(topo_live *live, const topo_inventory *inv, topo_err *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < topo_inventory_node_count(inv); i++)
        rc = topo_live_upsert_node(live, topo_inventory_node(inv, i), err);
    /* Pods placed by Kueue count like any other here: the live snapshot
     * charges usage per node (offline there is no reservation to charge
     * them by). A pod's key only has to be unique in this live. */
    size_t npods = topo_inventory_pod_count(inv), ntas = topo_inventory_tas_pod_count(inv);
    for (size_t i = 0; rc == 0 && i < npods + ntas; i++) {
        const topo_pod_usage *u =
            i < npods ? topo_inventory_pod(inv, i) : topo_inventory_tas_pod(inv, i - npods);
        char key[64];
        snprintf(key, sizeof key, "static-%zu", i);
        rc = topo_live_upsert_pod(live, key, u->node, 1, u->requests, u->nrequests, err);
    }
    if (rc == 0)
        rc = topo_live_commit(live, err);
    return rc;
}
