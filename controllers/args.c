/* topo-sync's option table and the checks between options (args.h). */
#include "args.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/version.h"

#define O(field) offsetof(sync_args, field)

static const char *const formats[] = {"json", "text", NULL};
static const char *const levels[] = {"debug", "info", "warn", "warning", "error", NULL};

static const char usage_line[] =
    "usage: topo-sync --once --dry-run [--config FILE] [source options] [output options]";

static const char intro[] =
    "Plans which topology labels every node should carry, from the infrastructure's own "
    "records (docs/sync.md \"topo-sync (offline plan)\"). Only the offline run is built so "
    "far: --once --dry-run reads every source from files and prints or exports the plan; "
    "the controller that writes the labels comes with part 2. Flags override the --config "
    "file. Exit status: 0 when every node's plan is complete, 1 when some node is "
    "incomplete (the plan is still printed), 2 for bad input.";

static const topo_opt table[] = {
    {"--config", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the configuration (YAML: labels, nodeNames, fabric, sources; docs/sync.md)", O(config),
     "Run:"},
    {"--once", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "plan once and exit (required for now: the controller loop is part 2)", O(once), NULL},
    {"--dry-run", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "write no labels, only print and export (required for now)", O(dry_run), NULL},
    {"--ibnetdiscover", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL, NULL,
     "an ibnetdiscover dump, one per InfiniBand subnet",
     O(ibnetdiscover), "Sources (each replaces the config's):"},
    {"--node-name-map", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "node-name map (GUID to name) for every --ibnetdiscover dump", O(node_name_map), NULL},
    {"--lldp-dir", NULL, TOPO_OPT_STRING, "DIR", 0, 0, NULL, NULL,
     "lldpcli JSON files, one per host, named HOST.json", O(lldp_dir), NULL},
    {"--ufm-systems-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "UFM's GET /ufmRest/resources/systems, saved", O(ufm_systems_file), NULL},
    {"--ufm-links-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "UFM's GET /ufmRest/resources/links, saved (with --ufm-systems-file)", O(ufm_links_file),
     NULL},
    {"--nodes-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the Node objects (kubectl get nodes -o json): the node set and their GPU labels",
     O(nodes_file), NULL},
    {"--levels", NULL, TOPO_OPT_STRING, "L1,L2,...", 0, 0, NULL,
     "what the sources can give",
     "the topology's levels, coarsest first, from datacenter, spine, leaf, rack, nvlink, "
     "hostname",
     O(levels), "Plan:"},
    {"--prefix", NULL, TOPO_OPT_STRING, "PREFIX", 0, 0, NULL, "topology.topo.io/",
     "the owned label keys' prefix", O(prefix), NULL},
    {"--topograph-labels", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "also label the tiers in NVIDIA topograph's keys: fabric.topograph.run/tier-0 (leaf), "
     "tier-1 (spine), accelerator.topograph.run/domain (nvlink)",
     O(topograph_labels), NULL},
    {"--print-labels", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "print one JSON object: each node's owned labels", O(print_labels), "Output:"},
    {"--print-annotations", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "print one JSON object: each node's annotations (the provenance: which source gave each "
     "level), after the labels when both are asked for",
     O(print_annotations), NULL},
    {"--print-plan", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL,
     "without --print-labels and --print-annotations",
     "print the plan: domains with node counts, incomplete nodes and why, conflicts",
     O(print_plan), NULL},
    {"--export-kueue", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Kueue's Topology and ResourceFlavors (YAML)", O(export_kueue), NULL},
    {"--kueue-flavor-label", NULL, TOPO_OPT_LIST, "KEY=VALUE", 0, 0, NULL,
     "one flavor per datacenter",
     "a nodeLabel of the one ResourceFlavor the Kueue export writes, named like the topology "
     "(repeatable; replaces the config's exports.kueue.flavorLabels)",
     O(kueue_flavor_labels), NULL},
    {"--export-slurm-tree", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Slurm's topology.conf for topology/tree", O(export_slurm_tree), NULL},
    {"--export-slurm-block", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Slurm's topology.conf for topology/block (blocks: NVLink domains)",
     O(export_slurm_block), NULL},
    {"--export-volcano", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Volcano's HyperNodes (YAML)", O(export_volcano), NULL},
    {"--log-format", NULL, TOPO_OPT_CHOICE, "FORMAT", 0, 0, formats, "json",
     "json: one JSON object per line; text: logfmt (on stderr)", O(log_format), "Other:"},
    {"--verbosity", "-v", TOPO_OPT_CHOICE, "LEVEL", 0, 0, levels, "info",
     "the least level logged", O(verbosity), NULL},
    {"--version", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL, "print the version and exit",
     O(version), NULL},
    {"--help-markdown", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "print this reference as Markdown (docs/cli/topo-sync.md) and exit", O(help_markdown),
     NULL},
};
#define NOPTS (sizeof table / sizeof table[0])

static int print(int markdown, FILE *to)
{
    topo_buf b = TOPO_BUF_INIT(0);
    int rc = markdown ? topo_opts_markdown(table, NOPTS, "topo-sync", usage_line, intro, &b)
                      : topo_opts_help_intro(table, NOPTS, usage_line, intro, &b);
    char *text = topo_buf_take(&b, NULL);
    if (rc != 0 || text == NULL) {
        free(text);
        return -1;
    }
    fputs(text, to);
    free(text);
    return 0;
}

int sync_args_parse(sync_args *a, int argc, char **argv)
{
    char why[512];
    memset(a, 0, sizeof *a);
    a->log_format = "json";
    a->verbosity = "info";
    int rc = topo_opts_parse_strict(table, NOPTS, argc, argv, a, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "topo-sync: %s (see topo-sync --help)\n", why);
        return 2;
    }
    if (rc == 1 || a->help_markdown) {
        if (print(a->help_markdown, stdout) != 0) {
            fprintf(stderr, "topo-sync: out of memory\n");
            return 2;
        }
        return 1;
    }
    if (a->version) {
        printf("topo-sync %s\n", TOPO_VERSION);
        return 1;
    }
    if (!a->once || !a->dry_run) {
        fprintf(stderr, "topo-sync: only --once --dry-run is supported: the controller loop "
                        "that writes the labels is part 2 of issue 11\n");
        return 2;
    }
    if (a->node_name_map && a->ibnetdiscover.n == 0) {
        fprintf(stderr, "topo-sync: --node-name-map goes with --ibnetdiscover\n");
        return 2;
    }
    return 0;
}

void sync_args_free(sync_args *a)
{
    topo_opts_free(table, NOPTS, a);
}
