/* mixed and mixed-pack (docs/simulate.md "Packing pods without requests"):
 * a cluster where topo places the jobs with a topology request (Kueue's
 * TAS through the engine, as policy topo) and kube-scheduler the others
 * (as kube-default; under mixed-pack steered first by the packing rule).
 * One cluster, one state: every placement either way is charged to the
 * engine's snapshot and to the free counts, and released from both, so
 * each side sees what the other placed.
 *
 * The two policies' own ops do the work; each keeps its state in
 * r->policy_state, so this one holds both and hands each its own for the
 * length of a call. */
#include <stdlib.h>

#include "sim_internal.h"

typedef struct mixed_state {
    void *engine; /* sim_policy_topo's */
    void *kube;   /* sim_policy_baseline's */
} mixed_state;

static int mixed_init(sim_run *r, topo_err *err)
{
    mixed_state *s = calloc(1, sizeof(*s));
    int rc;
    if (s == NULL)
        return topo_err_nomem(err, "simulation");
    r->policy_state = NULL;
    rc = sim_policy_topo.init(r, err);
    s->engine = r->policy_state;
    r->policy_state = NULL;
    if (rc >= 0) {
        rc = sim_policy_baseline.init(r, err);
        s->kube = r->policy_state; /* also after an error: dispose frees it */
    }
    r->policy_state = s;
    return rc;
}

static void mixed_dispose(sim_run *r)
{
    mixed_state *s = r->policy_state;
    if (s == NULL)
        return;
    r->policy_state = s->engine;
    sim_policy_topo.dispose(r);
    r->policy_state = s->kube;
    sim_policy_baseline.dispose(r);
    free(s);
    r->policy_state = NULL;
}

static int mixed_place(sim_run *r, const sim_shape *sh, topo_err *err)
{
    mixed_state *s = r->policy_state;
    int rc;

    r->policy_state = sh->engine ? s->engine : s->kube;
    rc = (sh->engine ? &sim_policy_topo : &sim_policy_baseline)->place(r, sh, err);
    r->policy_state = s;
    if (rc <= 0 || sh->engine)
        return rc; /* the engine's placements charge themselves */
    if ((rc = sim_topo_charge(r, r->slots, r->nslots, sh->gpus, 1, err)) < 0) {
        sim_slots_undo(r, sh->gpus);
        return rc;
    }
    return 1;
}

/* Both kinds leave the snapshot and the free counts alike. */
static int mixed_release(sim_run *r, const sim_slot *slots, int32_t n, int32_t gpus,
                         topo_err *err)
{
    return sim_policy_topo.release(r, slots, n, gpus, err);
}

const sim_policy_ops sim_policy_mixed = {mixed_init, mixed_place, mixed_release, mixed_dispose};
