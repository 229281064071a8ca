/* topo-sync's option table and the checks between options (args.h). */
#include "args.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/k8s.h"
#include "topo/labelowner.h"
#include "topo/version.h"

#define O(field) offsetof(ctl_args, field)


static const char usage_line[] =
    "usage: topo-sync --once --dry-run [--config FILE] [source options] [output options]";

static const char intro[] =
    "Keeps every node's topology labels equal to the plan made from the infrastructure's "
    "own records (docs/sync.md). Nodes come from the API server by list+watch; each source "
    "is re-read on its interval and a failed read keeps its last good facts; only the Lease "
    "holder writes, one merge PATCH per node that differs. --once runs one round and exits; "
    "--dry-run logs the patches instead of sending them. An offline run, --once --dry-run "
    "with neither --kubeconfig nor a pod's environment (or with --nodes-file), reads every "
    "source and prints the plan. Sources come from files, or NetBox, UFM and an LLDP "
    "collector over HTTP (their secrets from files only, re-read when they rotate). Flags "
    "override the --config file. Exit status: 0 converged (offline: every node's plan "
    "complete), 1 some write failed, a source never answered or a level is missing on most "
    "nodes (offline: some node incomplete), 2 bad input (offline: also a source that could "
    "not be read or fetched).";

static const topo_opt table[] = {
    {"--config", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the configuration (YAML: labels, nodeNames, fabric, sources; docs/sync.md)", O(config),
     "Run:"},
    {"--once", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "run one round (list nodes, read every source, plan, write) and exit", O(once), NULL},
    {"--dry-run", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "write no labels: log the patches that would be sent", O(dry_run), NULL},
    TOPO_OPT_DAEMON_KUBECONFIG_ROW(ctl_args, d, TOPO_K8S_CONFIG_DEFAULT_HELP,
                                   "the API server to read nodes from and write labels to"),
    TOPO_OPT_DAEMON_LEASE_ROWS(ctl_args, d, CTL_LEASE_NAME_DEFAULT,
                               "write only while holding the Lease; its renew deadline and retry "
                               "period scale with --lease-duration (2/3 and 2/15: client-go's "
                               "10 s and 2 s at 15)",
                               NULL),
    {"--db", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the cache file keeping each source's last good facts, so that a restart during a "
     "source's outage plans as before it (docs/sync.md)",
     O(db), NULL},
    {"--kueue-objects", NULL, TOPO_OPT_BOOL, "true|false", 0, 0, NULL, "true",
     "create and update Kueue's Topology and ResourceFlavors when its CRDs are served "
     "(never deleted)",
     O(kueue_objects), NULL},
    {"--source-interval", NULL, TOPO_OPT_UINT, "S", 1, 86400, NULL, "the config's, 300",
     "seconds between two reads of a source (jittered by 10 %); the config's refresh.sources "
     "sets one per source",
     O(source_interval_s), NULL},
    {"--resync-interval", NULL, TOPO_OPT_UINT, "S", 1, 86400, NULL, "600",
     "seconds between two full rounds when nothing changed", O(resync_s), NULL},
    {"--stale-after", NULL, TOPO_OPT_UINT, "S", 0, 604800, NULL, "the config's, 3600",
     "warn when a source's last good facts are older (0: never)", O(stale_after_s), NULL},
    {"--min-hosts-percent", NULL, TOPO_OPT_UINT, "P", 0, 100, NULL, "the config's, 90",
     "hold a read that gives fewer hosts than P % of the source's last good read as a failed "
     "read, until the same read comes twice in a row (0: never)",
     O(min_hosts_percent), NULL},
    {"--kube-qps", NULL, TOPO_OPT_POSITIVE, "QPS", 0, 10000, NULL, "50",
     "the writer's requests per second to the API server", O(kube_qps), NULL},
    {"--kube-burst", NULL, TOPO_OPT_POSITIVE, "N", 0, 10000, NULL, "100",
     "the writer's burst above --kube-qps", O(kube_burst), NULL},
    TOPO_OPT_DAEMON_HEALTH_ROWS(ctl_args, d, 0, "port of /livez, /readyz and /healthz (0: none)",
                                "address the health and metrics ports listen on"),
    {"--metrics-port", NULL, TOPO_OPT_UINT, "N", 0, 65535, NULL, "the health port",
     "port of /metrics", O(metrics_port), NULL},
    {"--ibnetdiscover", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL, NULL,
     "an ibnetdiscover dump, one per InfiniBand subnet", O(ibnetdiscover),
     "Sources (each replaces the config's):"},
    {"--node-name-map", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "node-name map (GUID to name) for every --ibnetdiscover dump", O(node_name_map), NULL},
    {"--lldp-dir", NULL, TOPO_OPT_STRING, "DIR", 0, 0, NULL, NULL,
     "lldpcli JSON files, one per host, named HOST.json", O(lldp_dir), NULL},
    {"--ufm-systems-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "UFM's GET /ufmRest/resources/systems, saved", O(ufm_systems_file), NULL},
    {"--ufm-links-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "UFM's GET /ufmRest/resources/links, saved (with --ufm-systems-file)", O(ufm_links_file),
     NULL},
    {"--netbox-url", NULL, TOPO_OPT_STRING, "URL", 0, 0, NULL, NULL,
     "fetch NetBox's devices, racks and sites from its API at URL (https://netbox.example.com)",
     O(netbox_url), NULL},
    {"--netbox-token-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "NetBox's API token, re-read when it changes (scheme: the config's tokenScheme, Token)",
     O(netbox_token_file), NULL},
    {"--ufm-url", NULL, TOPO_OPT_STRING, "URL", 0, 0, NULL, NULL,
     "fetch UFM's systems and links from its REST API at URL (https://ufm.example.com)", O(ufm_url),
     NULL},
    {"--ufm-username", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, NULL,
     "UFM's user for HTTP Basic on /ufmRest (with --ufm-password-file)", O(ufm_username), NULL},
    {"--ufm-password-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the file holding that user's password, re-read when it changes", O(ufm_password_file), NULL},
    {"--ufm-token-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "a UFM access token (/ufmRestV3, instead of a user and password), re-read when it changes",
     O(ufm_token_file), NULL},
    {"--lldp-url", NULL, TOPO_OPT_STRING, "URL", 0, 0, NULL, NULL,
     "fetch every host's lldpcli JSON from a collector: one object, host name to document",
     O(lldp_url), NULL},
    {"--nodes-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the Node objects (kubectl get nodes -o json, or their metadata only: kubectl get --raw "
     "/api/v1/nodes -H 'Accept: application/json;as=PartialObjectMetadataList;"
     "g=meta.k8s.io;v=v1'): the node set and their GPU labels",
     O(nodes_file), NULL},
    {"--levels", NULL, TOPO_OPT_STRING, "L1,L2,...", 0, 0, NULL, "what the sources can give",
     "the topology's levels, coarsest first: any of datacenter, spine, leaf, rack, nvlink, "
     "hostname, in that order",
     O(levels), "Plan:"},
    {"--prefix", NULL, TOPO_OPT_STRING, "PREFIX", 0, 0, NULL, "topology.topo.io/",
     "the owned label keys' prefix: a DNS subdomain and one '/', in no namespace another "
     "owner labels nodes under (kubernetes.io, k8s.io, nvidia.com, ...: docs/sync.md \"The "
     "prefix rule\")",
     O(prefix), NULL},
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
     "print the plan: domains with node counts, incomplete nodes and why, conflicts", O(print_plan),
     NULL},
    {"--export-kueue", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Kueue's Topology and ResourceFlavors (YAML)", O(export_kueue), NULL},
    {"--kueue-flavor-label", NULL, TOPO_OPT_LIST, "KEY=VALUE", 0, 0, NULL,
     "one flavor per datacenter",
     "a nodeLabel of the one ResourceFlavor the Kueue export writes, named like the topology "
     "(replaces the config's exports.kueue.flavorLabels)",
     O(kueue_flavor_labels), NULL},
    {"--export-slurm-tree", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Slurm's topology.conf for topology/tree", O(export_slurm_tree), NULL},
    {"--export-slurm-block", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Slurm's topology.conf for topology/block (blocks: NVLink domains)",
     O(export_slurm_block), NULL},
    {"--export-volcano", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "write Volcano's HyperNodes (YAML)", O(export_volcano), NULL},
    {"--export-configmap", NULL, TOPO_OPT_STRING, "NS/NAME", 0, 0, NULL, NULL,
     "the controller: keep Slurm's topology.conf (tree and block), Volcano's HyperNodes and "
     "Kueue's objects in this ConfigMap, created with the label "
     "app.kubernetes.io/managed-by=topo-sync; one without it is never written, and only "
     "topo's keys of one with it are",
     O(export_configmap), NULL},
    TOPO_OPT_DAEMON_OTHER_ROWS(ctl_args, d, "topo-sync", "Other:"),
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

int ctl_args_parse(ctl_args *a, int argc, char **argv)
{
    char why[512];
    memset(a, 0, sizeof *a);
    /* "not given" marks; the defaults come from the table */
    a->source_interval_s = 0;                /* not given: the config's, else 300 */
    a->stale_after_s = (unsigned long)-1;    /* not given: the config's, else 3600 */
    a->min_hosts_percent = (unsigned long)-1; /* not given: the config's, else 90 */
    a->metrics_port = (unsigned long)-1;     /* not given: the health port */
    topo_opts_defaults(table, NOPTS, a);
    int rc = topo_opts_parse(table, NOPTS, argc, argv, a, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "topo-sync: %s (see topo-sync --help)\n", why);
        return 2;
    }
    if (rc == 1 || a->d.help_markdown) {
        if (print(a->d.help_markdown, stdout) != 0) {
            fprintf(stderr, "topo-sync: out of memory\n");
            return 2;
        }
        return 1;
    }
    if (a->d.version) {
        printf("topo-sync %s\n", TOPO_VERSION);
        return 1;
    }
    if (a->metrics_port == (unsigned long)-1)
        a->metrics_port = a->d.health_port;
    if (a->ufm_url && a->ufm_systems_file) {
        fprintf(stderr, "topo-sync: --ufm-url and --ufm-systems-file exclude each other\n");
        return 2;
    }
    if (a->lldp_url && a->lldp_dir) {
        fprintf(stderr, "topo-sync: --lldp-url and --lldp-dir exclude each other\n");
        return 2;
    }
    /* Before anything reads a file or sends a request: a prefix that is not
     * topo's to own would have the writer remove other owners' labels. */
    if (a->prefix && !topo_labelowner_prefix_valid(a->prefix, why, sizeof why)) {
        fprintf(stderr, "topo-sync: --prefix: \"%s\": %s\n", a->prefix, why);
        return 2;
    }
    if (a->node_name_map && a->ibnetdiscover.n == 0) {
        fprintf(stderr, "topo-sync: --node-name-map goes with --ibnetdiscover\n");
        return 2;
    }
    return 0;
}

void ctl_args_free(ctl_args *a)
{
    topo_opts_free(table, NOPTS, a);
}
