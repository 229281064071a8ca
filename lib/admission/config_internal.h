/* The parts of topo-webhook's configuration file read outside config.c
 * (config_packing.c), each over config.c's reader context. Not a public
 * header. */
#ifndef TOPO_ADMISSION_CONFIG_INTERNAL_H
#define TOPO_ADMISSION_CONFIG_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/cfgreader.h"

/* packing: as read; settings are the handler's (topo_admission_opts). */
typedef struct adm_packing_config {
    int enabled;
    topo_admission_packing settings;
    const char *note; /* topologies that take no part, and why; NULL: none */
} adm_packing_config;

/* Reads root's packing (absent or null: off) and sets each topology's
 * npacking_levels (parsed already: topos[0..n)). Strings in c->pool. */
int adm_config_packing_parse(const topo_cfg *c, adm_packing_config *out, const json_t *root,
                             topo_admission_topology_config *topos, size_t n) TOPO_MUST_CHECK;

#endif
