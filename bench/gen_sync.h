/* A generated GPU cluster as topo-sync's sources describe it, written as
 * the files the real parsers read: NetBox REST pages (devices, racks,
 * sites, v4 shapes), UFM's systems and links responses, and the Node
 * objects with GPU Feature Discovery labels (their metadata, or `kubectl
 * get nodes -o json`).
 * Each record has the fields of the real payloads (fixtures/sources), not
 * only those topo reads, so that parsing costs what it costs on real data.
 *
 * The cluster (rail-optimised InfiniBand fat tree, GB200 NVL72-like racks):
 *   - node i is "gpu-NNNNN" (i + 1, five digits); NetBox names it with the
 *     domain ("gpu-00001.dc1.example.com": the name map strips it), UFM
 *     once per adapter ("gpu-00001 HCA-3");
 *   - racks of rack_nodes nodes ("R0001"), each one NVLink domain (the
 *     nvidia.com/gpu.clique "<ClusterUUID>.1" of its nodes);
 *   - a leaf group is leaf_racks racks: on each of the `rails` rails one
 *     leaf switch is cabled to adapter HCA-<rail + 1> of every node of the
 *     group, so the group's rails leaves serve the same hosts (one leaf
 *     domain);
 *   - a scalable unit (SU) is su_groups leaf groups; each rail of an SU has
 *     `spines` spines cabled to that rail's leaves of the SU (one spine
 *     group per SU); each rail has `cores` core switches cabled to the
 *     rail's spines of every SU; `uplinks` parallel cables per pair;
 *   - one site, "dc1".
 * The responses are those to topo-sync's requests (lib/sync/fetch): UFM's
 * systems with `?type=switch` (no host adapters: the links name them), the
 * NetBox lists with `fields=` (devices: name, role, site, rack; racks: id,
 * name; sites: id, slug, name; nested objects brief), the Nodes' metadata
 * only (a PartialObjectMetadataList, as its node reflector asks the API
 * server). With `full`, those to the requests before them: every system,
 * every NetBox field, whole Nodes (`kubectl get nodes -o json`).
 * GUIDs are "b8599f03" + a kind digit (1 leaf, 2 spine, 3 core, 4
 * adapter) + a 7-digit hex index: the lowest GUID of a leaf group is its
 * rail-0 leaf's, which topo (like topograph) takes as the group's id. */
#ifndef TOPO_BENCH_GEN_SYNC_H
#define TOPO_BENCH_GEN_SYNC_H

#include <stddef.h>

#include "topo/plan.h"

typedef struct gen_sync_opts {
    size_t nodes;
    size_t rails;
    size_t rack_nodes;
    size_t leaf_racks;
    size_t su_groups;
    size_t spines; /* per rail per SU */
    size_t cores;  /* per rail */
    size_t uplinks;
    size_t page; /* NetBox results per page (NetBox's MAX_PAGE_SIZE is 1000) */
    int full;    /* every UFM system and NetBox field, whole Nodes: not only those asked for */
} gen_sync_opts;

#define GEN_SYNC_OPTS_DEFAULT                                                                \
    {.nodes = 10000,                                                                         \
     .rails = 8,                                                                             \
     .rack_nodes = 18,                                                                       \
     .leaf_racks = 2,                                                                        \
     .su_groups = 4,                                                                         \
     .spines = 2,                                                                            \
     .cores = 4,                                                                             \
     .uplinks = 1,                                                                           \
     .page = 1000,                                                                           \
     .full = 0}

#define GEN_SYNC_MAX_PAGES 256

/* The files written, paths under the directory given. */
typedef struct gen_sync_files {
    char *devices[GEN_SYNC_MAX_PAGES];
    size_t ndevices;
    char *racks[GEN_SYNC_MAX_PAGES];
    size_t nracks;
    char *sites;
    char *ufm_systems, *ufm_links;
    char *nodes;
    size_t bytes; /* all of them together */
    size_t netbox_bytes, ufm_systems_bytes, ufm_links_bytes, nodes_bytes;
    size_t switches, adapters, links;
} gen_sync_files;

/* Writes every file into dir. 0, or -1 with the reason in why. */
int gen_sync_write(gen_sync_files *out, const gen_sync_opts *o, const char *dir, char *why,
                   size_t why_size);
/* Removes the files and frees the paths. */
void gen_sync_remove(gen_sync_files *files);

/* Whether a built plan is what the generated cluster must give: every node
 * planned and complete, no conflict, datacenter "dc1" and rack from
 * NetBox, leaf (the group's lowest leaf GUID) and spine (the SU's lowest
 * spine GUID) from UFM, the rack's clique from the Node objects. 0, or -1
 * with the first difference in why. */
int gen_sync_check(const topo_plan *plan, const gen_sync_opts *o, char *why, size_t why_size);

#endif
