/* libFuzzer harness for the Node document parser of the GPU source
 * (topo_gpu_parse: `--nodes-file`, a NodeList, `kubectl get nodes -o json`'s
 * List, a PartialObjectMetadataList, or one object of either shape): any
 * bytes give facts or an error naming what is wrong, never a crash, a leak,
 * or facts that break their promises (no more hosts than nodes read, no
 * more GPU nodes or cliques than nodes). Seeds: fixtures/sources/gpu. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_gpu_stats st = {0, 0, 0};
    if (topo_facts_create(&f, "gpu", &err) != 0)
        return 0;
    if (topo_gpu_parse(&st, f, (const char *)data, size, "fuzz.json", &err) == 0) {
        if (topo_facts_host_count(f) > st.nodes || st.gpu_nodes > st.nodes ||
            st.cliques > st.nodes)
            abort();
        for (size_t i = 0; i < topo_facts_host_count(f); i++) {
            const char *name = topo_facts_host_name(f, i);
            if (name == NULL || name[0] == '\0')
                abort();
        }
    } else if (err.text[0] == '\0') {
        abort(); /* every error says what */
    }
    topo_facts_free(f);
    return 0;
}
