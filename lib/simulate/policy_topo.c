/* topo: the engine places the job as a PodSet, Kueue's TAS with the gates
 * (profiles) given; its placements are charged to the snapshot as admitted
 * TAS usage on each node and taken out when the job ends, so every call
 * sees the cluster as it is (one snapshot, changed in place: no rebuild). */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

typedef struct topo_state {
    topo_pool *pool; /* one engine call's */
    topo_gates gates;
} topo_state;

static int topo_init(sim_run *r, topo_err *err)
{
    topo_state *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->pool = topo_pool_create()) == NULL) {
        free(s);
        return topo_err_nomem(err, "simulation");
    }
    if (r->o.gates != NULL)
        s->gates = *r->o.gates;
    else
        topo_gates_init(&s->gates);
    r->policy_state = s;
    return 0;
}

static void topo_dispose(sim_run *r)
{
    topo_state *s = r->policy_state;
    if (s != NULL)
        topo_pool_free(s->pool);
    free(s);
    r->policy_state = NULL;
}

/* Charges (sign 1) or uncharges (-1) the slots to the snapshot
 * (sim_internal.h). */
int sim_topo_charge(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus, int sign,
                    topo_err *err)
{
    const topo_sim_cluster *c = r->c;
    topo_resource res = {c->resource, gpus};
    for (int32_t i = 0; i < n; i++) {
        const char *host = c->host[slots[i].node];
        int rc = sign > 0 ? topo_snapshot_add_tas_usage(c->snap, &host, 1, slots[i].count, &res,
                                                        1, err)
                          : topo_snapshot_remove_tas_usage(c->snap, &host, 1, slots[i].count,
                                                           &res, 1, err);
        if (rc < 0) {
            /* Leave the snapshot as it was. */
            for (int32_t k = 0; k < i; k++) {
                const char *h = c->host[slots[k].node];
                if (sign > 0)
                    (void)topo_snapshot_remove_tas_usage(c->snap, &h, 1, slots[k].count, &res,
                                                         1, NULL);
                else
                    (void)topo_snapshot_add_tas_usage(c->snap, &h, 1, slots[k].count, &res, 1,
                                                      NULL);
            }
            return rc;
        }
    }
    return 0;
}

/* Every job tolerates every taint, as the baselines ignore them: GPU nodes
 * are commonly tainted and GPU pods tolerate it; the comparison is about
 * topology. */
static const topo_toleration tolerate_all = {NULL, "Exists", NULL, NULL};

static int topo_place(sim_run *r, const sim_shape *sh, topo_err *err)
{
    topo_state *s = r->policy_state;
    const topo_sim_cluster *c = r->c;
    topo_resource res = {c->resource, sh->gpus};
    topo_podset_spec spec = sh->spec;
    topo_workload_spec wl;
    topo_podset_result out;
    int rc;

    memset(&wl, 0, sizeof(wl));
    memset(&out, 0, sizeof(out));
    spec.name = "main";
    spec.count = sh->pods;
    spec.requests = &res;
    spec.nrequests = 1;
    spec.tolerations = &tolerate_all;
    spec.ntolerations = 1;
    topo_pool_clear(s->pool);
    if ((rc = topo_engine_find(&out, c->snap, &spec, 1, &wl, &s->gates, s->pool, err)) < 0)
        return rc;
    if (out.assignment == NULL)
        return 0;
    const topo_assignment *a = out.assignment;
    for (size_t d = 0; d < a->ndomains; d++) {
        const char *host = a->domains[d].values[a->nlevels - 1];
        int32_t node = topo_strmap_get(c->by_host, host);
        if (node < 0) {
            sim_slots_undo(r, sh->gpus);
            return topo_err_set(err, TOPO_EGENERIC,
                                "the engine placed pods on %s, which has no %s", host,
                                c->resource);
        }
        sim_take(r, node, a->domains[d].count * sh->gpus);
        if ((rc = sim_slot_add(r, node, a->domains[d].count, err)) < 0) {
            sim_give(r, node, a->domains[d].count * sh->gpus);
            sim_slots_undo(r, sh->gpus);
            return rc;
        }
    }
    if ((rc = sim_topo_charge(r, r->slots, r->nslots, sh->gpus, 1, err)) < 0) {
        sim_slots_undo(r, sh->gpus);
        return rc;
    }
    return 1;
}

static int topo_release(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus,
                        topo_err *err)
{
    int rc = sim_topo_charge(r, slots, n, gpus, -1, err);
    for (int32_t i = 0; i < n; i++)
        sim_give(r, slots[i].node, slots[i].count * gpus);
    return rc;
}

const sim_policy_ops sim_policy_topo = {topo_init, topo_place, topo_release, topo_dispose};
