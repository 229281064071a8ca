/* topo-sync's configuration file (YAML or JSON; format in docs/sync.md
 * "topo-sync: sources and the plan (offline)"). Every error names
 * file:line:column and the field path; unknown fields are errors. The parsed settings are a plain view owned by
 * the topo_syncconfig (its strings live as long as it does). */
#ifndef TOPO_SYNCCONFIG_H
#define TOPO_SYNCCONFIG_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/export.h"
#include "topo/fabric.h"
#include "topo/fetch.h"
#include "topo/limits.h"
#include "topo/facts.h"
#include "topo/namemap.h"
#include "topo/netbox.h"
#include "topo/plan.h"

/* One ibnetdiscover dump (one per InfiniBand subnet) and its optional
 * node-name map. */
typedef struct topo_sync_ibnetdiscover {
    const char *file;
    const char *node_name_map; /* NULL: none */
} topo_sync_ibnetdiscover;

/* NetBox REST pages saved to files (without a url): each list may hold
 * several pages of its kind (the `next` links are not followed). */
typedef struct topo_sync_netbox_files {
    const char *const *files[TOPO_NETBOX_CABLES + 1]; /* by topo_netbox_kind */
    size_t nfiles[TOPO_NETBOX_CABLES + 1];
} topo_sync_netbox_files;

typedef struct topo_sync_settings {
    /* The plan: label prefix, levels, incomplete nodes, name rules,
     * precedence (plan.names is left NULL: build the map from names). */
    topo_plan_opts plan;
    topo_namemap_opts names;
    topo_fabric_opts planes;
    /* Sources, all optional. */
    const topo_sync_ibnetdiscover *ibnetdiscover;
    size_t nibnetdiscover;
    const char *lldp_dir;         /* one lldpcli JSON file per host, named after it */
    const char *ufm_systems_file; /* GET /ufmRest/resources/systems saved */
    const char *ufm_links_file;   /* GET /ufmRest/resources/links saved */
    /* NetBox: the parser's filters (strings borrowed from the config) and
     * the saved pages; no page and no url means no NetBox source. */
    topo_netbox_opts netbox;
    topo_sync_netbox_files netbox_files;
    /* The sources over HTTP (topo/fetch.h): a url makes NetBox, UFM or
     * LLDP fetched instead of read from files (the file settings are then
     * unset). netbox_http.netbox is left NULL: the run uses the filters
     * above. */
    topo_fetch_opts netbox_http;
    topo_fetch_opts ufm_http;
    topo_fetch_opts lldp_http;
    /* Node objects (`kubectl get nodes -o json`): the node set, and GPU
     * facts from their labels. */
    const char *nodes_file;
    /* The controller's: the Node objects come from the API server, not a
     * file (the GPU source is the controller's node view). */
    int nodes_live;
    /* The controller's refresh (config "refresh"; 0: the flags' defaults):
     * every source's read interval, per source (by topo_sync_source of
     * topo/sync.h: gpu, ufm, ibnetdiscover, lldp, netbox; 0: the common
     * interval), and the age of a source's last good facts that warns. */
    int64_t refresh_ms;
    int64_t source_refresh_ms[5];
    int64_t stale_after_ms;
    /* refresh.minHostsPercent: a read giving fewer hosts than this percent
     * of the source's last good facts is held as a failed read until the
     * same read comes twice in a row (0: never held); -1 when not set. */
    int64_t min_hosts_percent;
    /* Single-node NVLink systems (no nvidia.com/gpu.clique): the host is
     * its own NVLink domain. Default on. */
    int nvlink_hostname_fallback;
    /* The Kueue export's Topology name, apiVersion and flavor nodeLabels
     * (exports.kueue; the pipeline does not use them). */
    topo_export_kueue_opts kueue;
} topo_sync_settings;

typedef struct topo_syncconfig topo_syncconfig;

/* text of len bytes (at most TOPO_MAX_SYNC_CONFIG: TOPO_ELIMIT); source
 * names it in messages. TOPO_EINVALID for a malformed file. */
int topo_syncconfig_parse(topo_syncconfig **out, const char *text, size_t len, const char *source,
                          topo_err *err) TOPO_MUST_CHECK;
int topo_syncconfig_load_file(topo_syncconfig **out, const char *path,
                              topo_err *err) TOPO_MUST_CHECK;
/* No file: every default. */
int topo_syncconfig_default(topo_syncconfig **out, topo_err *err) TOPO_MUST_CHECK;
void topo_syncconfig_free(topo_syncconfig *cfg);

/* The settings; flags may change them before use (the view is the
 * config's own copy). */
topo_sync_settings *topo_syncconfig_settings(topo_syncconfig *cfg);

#endif
