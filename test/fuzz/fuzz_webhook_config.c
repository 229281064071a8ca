/* libFuzzer harness for topo-webhook's configuration file parser
 * (topo_admission_config_parse): any text gives a config or an error,
 * never a crash or a leak. Seeds: the YAML files of fixtures/webhook. */
#include <stddef.h>
#include <stdint.h>

#include "topo/admission_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_admission_config *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_admission_config_parse(&cfg, (const char *)data, size, "fuzz.yaml", &err) == 0) {
        /* every accessor over what was accepted */
        for (size_t i = 0; i < topo_admission_config_topology_count(cfg); i++)
            (void)topo_admission_config_find_topology(
                cfg, topo_admission_config_topology(cfg, i)->name);
        (void)topo_admission_config_namespace_policy_label(cfg);
    }
    topo_admission_config_free(cfg);
    return 0;
}
