/* libFuzzer harness for topoassign simulate's --cost-model reader
 * (topo_sim_cost_model_parse): any bytes give a model or an error that says
 * what, never a crash or a leak; a model read is within the documented
 * bounds (every cost in (0, TOPO_SIM_COST_MAX], not decreasing from nvlink
 * to cluster, shares in (0, 1]) and nothing is written on error. Seeds:
 * fixtures/simulate/cost-model.yaml and fixtures/fuzz/simcost. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/simulate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_sim_cost_model m, before;
    topo_err err = TOPO_ERR_INIT;
    memset(&m, 0x5a, sizeof(m));
    before = m;
    if (topo_sim_cost_model_parse(&m, (const char *)data, size, "fuzz.yaml", &err) == 0) {
        for (int i = 0; i < TOPO_SIM_TIERS; i++)
            if (!(m.cost[i] > 0 && m.cost[i] <= TOPO_SIM_COST_MAX) ||
                (i > 0 && m.cost[i] < m.cost[i - 1]))
                abort();
        if (!(m.comm_small > 0 && m.comm_small <= 1 && m.comm_large > 0 && m.comm_large <= 1))
            abort();
    } else if (err.text[0] == '\0' || memcmp(&m, &before, sizeof(m)) != 0) {
        abort(); /* every error says what, and leaves the model alone */
    }
    return 0;
}
