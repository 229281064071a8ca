/* libFuzzer harness for the Kueue Topology reader (topo_kueue_topology_levels)
 * kubectl topo applies to the Topologies the API server lists: any JSON
 * gives levels Kueue's validation accepts or an error, never a crash or a
 * leak. Seeds: fixtures/fuzz/kueue_topology. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/codec.h"
#include "topo/kueue.h"
#include "topo/kueue_topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    const char **levels = NULL;
    size_t n = 0;
    if (pool == NULL)
        return 0;
    if (topo_codec_json_parse(&obj, (const char *)data, size, "fuzz.json", &err) == 0) {
        (void)topo_kueue_topology_name(obj);
        /* What it hands out is what Kueue's CRD takes as levels. */
        if (topo_kueue_topology_levels(&levels, &n, obj, pool, &err) == 0 &&
            !topo_kueue_levels_valid(levels, n, NULL, NULL, 0))
            abort();
    }
    json_decref(obj);
    topo_pool_free(pool);
    return 0;
}
