/* topoassign generate: write a synthetic GPU cluster as NodeList JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "topo/generate.h"
#include "topo/limits.h"
#include "topo/pool.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: topoassign generate --nodes N [options] [-o FILE]\n"
            "\n"
            "Writes a synthetic cluster as a v1 List of Nodes (kubectl get nodes -o json),\n"
            "labelled topology.topo.io/{datacenter,spine,block,leaf,rack,nvlink} and\n"
            "kubernetes.io/hostname. The output depends only on the options.\n"
            "\n"
            "  --nodes N             number of nodes (required, 1..%u)\n"
            "  --datacenters D       datacenters (default 1)\n"
            "  --spines-per-dc S     spine groups per datacenter (default: as needed)\n"
            "  --leaves-per-spine L  leaves per spine group (default 8)\n"
            "  --racks-per-leaf R    racks per leaf (default 4)\n"
            "  --nodes-per-rack K    nodes per rack (default 8)\n"
            "  --nvlink-nodes M      nodes per NVLink domain, divides K (default 1 =\n"
            "                        single-node HGX: the nvlink label is the hostname)\n"
            "  --gpus-per-node G     nvidia.com/gpu per node (default 8)\n"
            "  --usage-seed SEED     add bound non-TAS pods using GPUs, drawn from SEED\n"
            "  --usage-fraction F    share of busy nodes, 0..1 (default 0.5); a busy node\n"
            "                        runs one pod using all its GPUs (3 in 4) or 1..G-1\n"
            "  --pods-out FILE       where the pods go (kubectl get pods -A -o json);\n"
            "                        required with --usage-seed\n"
            "  -o, --output FILE     where the nodes go (default stdout)\n"
            "\n"
            "exit status: 0 written, 2 bad options or I/O error\n",
            TOPO_MAX_GEN_NODES);
}

static int parse_u64(uint64_t *out, const char *flag, const char *text)
{
    char *end = NULL;
    errno = 0;
    if (text[0] < '0' || text[0] > '9') {
        fprintf(stderr, "topoassign generate: %s: expected a non-negative integer, got \"%s\"\n",
                flag, text);
        return -1;
    }
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
        fprintf(stderr, "topoassign generate: %s: expected a non-negative integer, got \"%s\"\n",
                flag, text);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

static int parse_u32(uint32_t *out, const char *flag, const char *text)
{
    uint64_t v = 0;
    if (parse_u64(&v, flag, text) < 0)
        return -1;
    if (v > UINT32_MAX) {
        fprintf(stderr, "topoassign generate: %s: %s is too large\n", flag, text);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_fraction(double *out, const char *flag, const char *text)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v >= 0.0 && v <= 1.0)) {
        fprintf(stderr, "topoassign generate: %s: expected a number within [0, 1], got \"%s\"\n",
                flag, text);
        return -1;
    }
    *out = v;
    return 0;
}

int topo_cli_cmd_generate(int argc, char **argv)
{
    topo_gen_opts opts;
    topo_gen_cluster *cluster = NULL;
    topo_pool *pool = NULL;
    topo_err err = TOPO_ERR_INIT;
    const char *out_path = NULL, *pods_path = NULL;
    int have_nodes = 0, have_seed = 0, have_fraction = 0;
    int status = TOPO_CLI_EXIT_BADINPUT;

    topo_gen_opts_init(&opts);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return TOPO_CLI_EXIT_OK;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "topoassign generate: %s\n",
                    a[0] == '-' ? "option needs a value" : "unexpected argument");
            fprintf(stderr, "  at '%s'\n", a);
            usage(stderr);
            return TOPO_CLI_EXIT_BADINPUT;
        }
        const char *v = argv[++i];
        int rc = 0;
        if (strcmp(a, "--nodes") == 0) {
            rc = parse_u32(&opts.nodes, a, v);
            have_nodes = 1;
        } else if (strcmp(a, "--datacenters") == 0) {
            rc = parse_u32(&opts.datacenters, a, v);
        } else if (strcmp(a, "--spines-per-dc") == 0) {
            rc = parse_u32(&opts.spines_per_dc, a, v);
            if (rc == 0 && opts.spines_per_dc == 0) {
                fprintf(stderr, "topoassign generate: --spines-per-dc: must be at least 1\n");
                rc = -1;
            }
        } else if (strcmp(a, "--leaves-per-spine") == 0) {
            rc = parse_u32(&opts.leaves_per_spine, a, v);
        } else if (strcmp(a, "--racks-per-leaf") == 0) {
            rc = parse_u32(&opts.racks_per_leaf, a, v);
        } else if (strcmp(a, "--nodes-per-rack") == 0) {
            rc = parse_u32(&opts.nodes_per_rack, a, v);
        } else if (strcmp(a, "--nvlink-nodes") == 0) {
            rc = parse_u32(&opts.nvlink_nodes, a, v);
        } else if (strcmp(a, "--gpus-per-node") == 0) {
            rc = parse_u32(&opts.gpus_per_node, a, v);
        } else if (strcmp(a, "--usage-seed") == 0) {
            rc = parse_u64(&opts.usage_seed, a, v);
            have_seed = 1;
        } else if (strcmp(a, "--usage-fraction") == 0) {
            rc = parse_fraction(&opts.usage_fraction, a, v);
            have_fraction = 1;
        } else if (strcmp(a, "--pods-out") == 0) {
            pods_path = v;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            out_path = v;
        } else {
            fprintf(stderr, "topoassign generate: unknown option '%s'\n", a);
            usage(stderr);
            return TOPO_CLI_EXIT_BADINPUT;
        }
        if (rc < 0)
            return TOPO_CLI_EXIT_BADINPUT;
    }
    if (!have_nodes) {
        fprintf(stderr, "topoassign generate: --nodes is required\n");
        usage(stderr);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (have_fraction && !have_seed) {
        fprintf(stderr, "topoassign generate: --usage-fraction needs --usage-seed\n");
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (have_seed != (pods_path != NULL)) {
        fprintf(stderr, "topoassign generate: --usage-seed and --pods-out go together\n");
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (pods_path != NULL && out_path != NULL && strcmp(pods_path, out_path) == 0) {
        fprintf(stderr, "topoassign generate: --pods-out and -o name the same file\n");
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (pods_path != NULL && strcmp(pods_path, "-") == 0 &&
        (out_path == NULL || strcmp(out_path, "-") == 0)) {
        fprintf(stderr, "topoassign generate: nodes and pods cannot both go to stdout\n");
        return TOPO_CLI_EXIT_BADINPUT;
    }
    opts.with_usage = have_seed;

    if ((pool = topo_pool_create()) == NULL) {
        fprintf(stderr, "topoassign generate: out of memory\n");
        goto cleanup;
    }
    if (topo_gen_cluster_build(&cluster, &opts, pool, &err) < 0 ||
        topo_gen_write_nodes(cluster, out_path, &err) < 0 ||
        (pods_path != NULL && topo_gen_write_pods(cluster, pods_path, &err) < 0)) {
        fprintf(stderr, "topoassign generate: %s\n", err.text);
        goto cleanup;
    }
    if (pods_path != NULL)
        fprintf(stderr,
                "topoassign generate: %zu nodes, %zu pods using %" PRIu64 " of %" PRIu64
                " GPUs\n",
                cluster->nnodes, cluster->npods, cluster->gpus_used, cluster->gpus_total);
    status = TOPO_CLI_EXIT_OK;

cleanup:
    topo_pool_free(pool);
    return status;
}
