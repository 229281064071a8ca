/* topoassign generate: write a synthetic GPU cluster as NodeList JSON. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "topo/generate.h"
#include "topo/limits.h"
#include "topo/pool.h"

typedef struct generate_args {
    unsigned long nodes, datacenters, spines_per_dc, leaves_per_spine, racks_per_leaf;
    unsigned long nodes_per_rack, nvlink_nodes, gpus_per_node; /* the table's defaults */
    topo_opt_u64 usage_seed;
    double usage_fraction;
    const char *pods_out, *output;
} generate_args;

#define O(field) offsetof(generate_args, field)
#define D(constant) TOPO_OPT_DEFAULT(constant)

static const topo_opt table[] = {
    {"--nodes", NULL, TOPO_OPT_UINT, "N", 1, TOPO_MAX_GEN_NODES, NULL, NULL,
     "number of nodes, required", O(nodes), "The cluster:"},
    {"--datacenters", NULL, TOPO_OPT_UINT, "D", 1, TOPO_MAX_GEN_FANOUT, NULL,
     D(TOPO_GEN_DATACENTERS_DEFAULT), "datacenters", O(datacenters), NULL},
    {"--spines-per-dc", NULL, TOPO_OPT_UINT, "S", 1, TOPO_MAX_GEN_FANOUT, NULL,
     "as many as the nodes need", "spine groups per datacenter", O(spines_per_dc), NULL},
    {"--leaves-per-spine", NULL, TOPO_OPT_UINT, "L", 1, TOPO_MAX_GEN_FANOUT, NULL,
     D(TOPO_GEN_LEAVES_PER_SPINE_DEFAULT), "leaves per spine group", O(leaves_per_spine), NULL},
    {"--racks-per-leaf", NULL, TOPO_OPT_UINT, "R", 1, TOPO_MAX_GEN_FANOUT, NULL,
     D(TOPO_GEN_RACKS_PER_LEAF_DEFAULT), "racks per leaf", O(racks_per_leaf), NULL},
    {"--nodes-per-rack", NULL, TOPO_OPT_UINT, "K", 1, TOPO_MAX_GEN_FANOUT, NULL,
     D(TOPO_GEN_NODES_PER_RACK_DEFAULT), "nodes per rack", O(nodes_per_rack), NULL},
    {"--nvlink-nodes", NULL, TOPO_OPT_UINT, "M", 1, TOPO_MAX_GEN_FANOUT, NULL,
     D(TOPO_GEN_NVLINK_NODES_DEFAULT),
     "nodes per NVLink domain, divides K (1: single-node HGX, the nvlink label is the "
     "hostname)",
     O(nvlink_nodes), NULL},
    {"--gpus-per-node", NULL, TOPO_OPT_UINT, "G", 1, TOPO_MAX_GEN_GPUS, NULL,
     D(TOPO_GEN_GPUS_PER_NODE_DEFAULT), "nvidia.com/gpu per node", O(gpus_per_node), NULL},
    {"--usage-seed", NULL, TOPO_OPT_U64, "SEED", 0, UINT64_MAX, NULL, NULL,
     "add bound non-TAS pods using GPUs, drawn from SEED", O(usage_seed), "Pods using GPUs:"},
    {"--usage-fraction", NULL, TOPO_OPT_NUMBER, "F", 0, 1, NULL,
     D(TOPO_GEN_USAGE_FRACTION_DEFAULT),
     "share of busy nodes; a busy node runs one pod using all its GPUs (3 in 4) or 1..G-1",
     O(usage_fraction), NULL},
    {"--pods-out", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "where the pods go (kubectl get pods -A -o json); required with --usage-seed",
     O(pods_out), NULL},
    {"--output", "-o", TOPO_OPT_STRING, "FILE", 0, 0, NULL, "stdout", "where the nodes go",
     O(output), "Output:"},
};
#define NOPTS (sizeof table / sizeof table[0])

const cli_command cli_generate = {
    "generate",
    "write a synthetic cluster as NodeList JSON",
    "usage: topoassign generate --nodes N [options] [-o FILE]",
    "Writes a synthetic cluster as a v1 List of Nodes (kubectl get nodes -o json), labelled "
    "topology.topo.io/{datacenter,spine,block,leaf,rack,nvlink} and kubernetes.io/hostname. "
    "The output depends only on the options. Exit status: 0 written, 2 bad options or I/O "
    "error.",
    table,
    NOPTS,
    cli_cmd_generate,
};

/* The options into opts, each a value the table gave or its default
 * (spines 0: as many as the nodes need); every bound in the table is
 * within uint32. */
static void shape(topo_gen_opts *opts, const generate_args *f)
{
    topo_gen_opts_init(opts);
    opts->nodes = (uint32_t)f->nodes;
    opts->datacenters = (uint32_t)f->datacenters;
    opts->spines_per_dc = (uint32_t)f->spines_per_dc;
    opts->leaves_per_spine = (uint32_t)f->leaves_per_spine;
    opts->racks_per_leaf = (uint32_t)f->racks_per_leaf;
    opts->nodes_per_rack = (uint32_t)f->nodes_per_rack;
    opts->nvlink_nodes = (uint32_t)f->nvlink_nodes;
    opts->gpus_per_node = (uint32_t)f->gpus_per_node;
    opts->usage_fraction = f->usage_fraction;
    opts->with_usage = f->usage_seed.given;
    opts->usage_seed = f->usage_seed.value;
}

/* The checks between options (given: the rows given): 0, or the exit
 * status (a message printed). */
static int check(const generate_args *f, const unsigned char *given)
{
    const char *msg = NULL;
    if (f->nodes == 0)
        msg = "--nodes is required";
    else if (topo_opts_given(table, NOPTS, given, "--usage-fraction") && !f->usage_seed.given)
        msg = "--usage-fraction needs --usage-seed";
    else if (f->usage_seed.given != (f->pods_out != NULL))
        msg = "--usage-seed and --pods-out go together";
    else if (f->pods_out != NULL && f->output != NULL && strcmp(f->pods_out, f->output) == 0)
        msg = "--pods-out and -o name the same file";
    else if (f->pods_out != NULL && strcmp(f->pods_out, "-") == 0 &&
             (f->output == NULL || strcmp(f->output, "-") == 0))
        msg = "nodes and pods cannot both go to stdout";
    if (msg == NULL)
        return 0;
    fprintf(stderr, "topoassign generate: %s\n", msg);
    return TOPO_CLI_EXIT_BADINPUT;
}

int cli_cmd_generate(int argc, char **argv)
{
    generate_args f;
    unsigned char given[NOPTS];
    topo_gen_opts opts;
    topo_gen_cluster *cluster = NULL;
    topo_pool *pool = NULL;
    topo_err err = TOPO_ERR_INIT;
    int status;

    memset(&f, 0, sizeof(f));
    if ((status = cli_parse_given(&cli_generate, argc, argv, &f, given)) >= 0 ||
        (status = check(&f, given)) != 0)
        return status;
    shape(&opts, &f);
    status = TOPO_CLI_EXIT_BADINPUT;
    if ((pool = topo_pool_create()) == NULL) {
        fprintf(stderr, "topoassign generate: out of memory\n");
        goto cleanup;
    }
    if (topo_gen_cluster_build(&cluster, &opts, pool, &err) < 0 ||
        topo_gen_write_nodes(cluster, f.output, &err) < 0 ||
        (f.pods_out != NULL && topo_gen_write_pods(cluster, f.pods_out, &err) < 0)) {
        fprintf(stderr, "topoassign generate: %s\n", err.text);
        goto cleanup;
    }
    if (f.pods_out != NULL)
        fprintf(stderr,
                "topoassign generate: %zu nodes, %zu pods using %" PRIu64 " of %" PRIu64
                " GPUs\n",
                cluster->nnodes, cluster->npods, cluster->gpus_used, cluster->gpus_total);
    status = TOPO_CLI_EXIT_OK;

cleanup:
    topo_pool_free(pool);
    return status;
}
