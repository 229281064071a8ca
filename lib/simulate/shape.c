/* --shape presets: generated clusters of a familiar shape, scaled by flags
 * (topo/simulate.h, docs/simulate.md "The cluster"). */
#include <string.h>

#include "sim_internal.h"

typedef struct shape_preset {
    const char *name;
    uint32_t nodes, gpus_per_node, nodes_per_rack, racks_per_leaf, leaves_per_spine;
    uint32_t nvlink_nodes; /* 0: the whole rack is one NVLink domain */
    const char *const *levels;
    size_t nlevels;
} shape_preset;

static const char *const hgx_levels[] = {
    TOPO_GEN_LABEL_DATACENTER, TOPO_GEN_LABEL_SPINE, TOPO_GEN_LABEL_LEAF,
    TOPO_GEN_LABEL_RACK,       TOPO_GEN_LABEL_HOSTNAME,
};
static const char *const gb200_levels[] = {
    TOPO_GEN_LABEL_DATACENTER, TOPO_GEN_LABEL_SPINE, TOPO_GEN_LABEL_LEAF,
    TOPO_GEN_LABEL_NVLINK,     TOPO_GEN_LABEL_HOSTNAME,
};

/* hgx-h100: a DGX H100 SuperPOD-like fabric: 8-GPU nodes with NVLink inside
 * the node only, 4 nodes a rack, a 32-node scalable unit under each leaf
 * group, 4 units a spine group (1,024 GPUs). gb200-nvl72: racks of 18
 * 4-GPU trays, each rack one 72-GPU NVLink domain, 2 racks a leaf, 8 leaves
 * a spine group. */
static const shape_preset presets[] = {
    {"hgx-h100", 128, 8, 4, 8, 4, 1, hgx_levels, sizeof hgx_levels / sizeof hgx_levels[0]},
    {"gb200-nvl72", 144, 4, 18, 2, 8, 0, gb200_levels,
     sizeof gb200_levels / sizeof gb200_levels[0]},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

const char *topo_sim_shape_names(void)
{
    return "hgx-h100, gb200-nvl72";
}

int topo_sim_shape(topo_gen_opts *out, const char *const **out_levels, size_t *out_nlevels,
                   const topo_sim_shape_opts *o, topo_err *err)
{
    const shape_preset *p = NULL;
    for (size_t i = 0; i < NPRESETS; i++)
        if (o->name != NULL && strcmp(o->name, presets[i].name) == 0)
            p = &presets[i];
    if (p == NULL)
        return topo_err_set(err, TOPO_EINVALID, "--shape: expected one of %s, got \"%s\"",
                            topo_sim_shape_names(), o->name ? o->name : "");
    topo_gen_opts_init(out);
    out->nodes = o->nodes ? o->nodes : p->nodes;
    out->gpus_per_node = o->gpus_per_node ? o->gpus_per_node : p->gpus_per_node;
    out->nodes_per_rack = o->nodes_per_rack ? o->nodes_per_rack : p->nodes_per_rack;
    out->racks_per_leaf = o->racks_per_leaf ? o->racks_per_leaf : p->racks_per_leaf;
    out->leaves_per_spine = o->leaves_per_spine ? o->leaves_per_spine : p->leaves_per_spine;
    out->nvlink_nodes = p->nvlink_nodes ? p->nvlink_nodes : out->nodes_per_rack;
    *out_levels = p->levels;
    *out_nlevels = p->nlevels;
    return 0;
}
