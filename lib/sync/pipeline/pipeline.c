/* topo-sync's pipeline (include/topo/sync.h): sources from files or over
 * HTTP (lib/sync/fetch) into facts, fabric tiers, the fused plan. Each source is
 * read whole before the plan sees any of it, so a source that fails to parse
 * or to be fetched stops the run instead of planning from half its data. */
#define _POSIX_C_SOURCE 200809L

#include "topo/sync.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/codec.h"
#include "topo/fabric.h"
#include "topo/fetch.h"
#include "topo/gpu.h"
#include "topo/ibnetdiscover.h"
#include "topo/limits.h"
#include "topo/lldp.h"
#include "topo/log.h"
#include "topo/netbox.h"
#include "topo/str.h"
#include "topo/ufm.h"

#include "sync_internal.h"

/* Short names for topo_sync_source (include/topo/sync.h). */
enum {
    SRC_GPU = TOPO_SYNC_GPU,
    SRC_UFM = TOPO_SYNC_UFM,
    SRC_IB = TOPO_SYNC_IBNETDISCOVER,
    SRC_LLDP = TOPO_SYNC_LLDP,
    SRC_NETBOX = TOPO_SYNC_NETBOX,
    SRC_COUNT = TOPO_SYNC_SOURCE_COUNT
};

struct topo_sync {
    topo_namemap *names; /* the plan borrows it */
    topo_plan *plan;
};

void topo_sync_free(topo_sync *sync)
{
    if (!sync)
        return;
    topo_plan_free(sync->plan);
    topo_namemap_free(sync->names);
    free(sync);
}

const topo_plan *topo_sync_plan(const topo_sync *sync)
{
    return sync->plan;
}

static int run_ibnetdiscover(topo_facts *f, const topo_sync_settings *s, topo_err *err)
{
    topo_ibnetdiscover_stats t = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nibnetdiscover; i++) {
        topo_ibnetdiscover_map *map = NULL;
        topo_ibnetdiscover_stats st = {0};
        if (s->ibnetdiscover[i].node_name_map)
            rc = topo_ibnetdiscover_map_read_file(&map, s->ibnetdiscover[i].node_name_map, err);
        topo_ibnetdiscover_opts o = {.map = map};
        if (rc == 0)
            rc = topo_ibnetdiscover_read_file(f, s->ibnetdiscover[i].file, &o, &st, err);
        topo_ibnetdiscover_map_free(map);
        t.lines += st.lines;
        t.switches += st.switches;
        t.adapters += st.adapters;
        t.adapters_unnamed += st.adapters_unnamed;
        t.adapters_mapped += st.adapters_mapped;
        t.aggregation_nodes += st.aggregation_nodes;
        t.routers += st.routers;
        t.skipped_lines += st.skipped_lines;
    }
    if (rc == 0)
        topo_log(TOPO_LOG_INFO,
                 "source ibnetdiscover: %zu dumps, %zu lines, %zu switches, %zu adapters (%zu "
                 "unnamed, %zu named by a map), %zu hosts; skipped %zu aggregation nodes, %zu "
                 "routers, %zu lines",
                 s->nibnetdiscover, t.lines, t.switches, t.adapters, t.adapters_unnamed,
                 t.adapters_mapped, topo_facts_host_count(f), t.aggregation_nodes, t.routers,
                 t.skipped_lines);
    return rc;
}

/* One saved response of at most max bytes through add. */
typedef int (*ufm_add_fn)(topo_ufm *, const char *, size_t, const char *, topo_err *);

static int ufm_file(topo_ufm *u, ufm_add_fn add, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = topo_codec_read_file(&text, &len, path, TOPO_MAX_UFM_RESPONSE, err);
    if (rc == 0)
        rc = add(u, text, len, path, err);
    free(text);
    return rc;
}

static int run_ufm(topo_facts *f, const topo_sync_settings *s, topo_err *err)
{
    topo_ufm *u = NULL;
    int rc = topo_ufm_create(&u, f, err);
    if (rc == 0)
        rc = ufm_file(u, topo_ufm_add_systems, s->ufm_systems_file, err);
    if (rc == 0 && s->ufm_links_file)
        rc = ufm_file(u, topo_ufm_add_links, s->ufm_links_file, err);
    if (rc == 0) {
        topo_ufm_stats st = topo_ufm_get_stats(u);
        char text[TOPO_UFM_STATS_TEXT_MAX];
        topo_log(TOPO_LOG_INFO, "source ufm: %s",
                 topo_ufm_stats_text(text, sizeof text, &st, topo_facts_host_count(f)));
    }
    topo_ufm_free(u);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lldp directory's "<host>.json" files, sorted (a stable log and
 * facts order whatever the directory's). */
typedef TOPO_ARRAY(char *) name_list;

static int lldp_files(name_list *out, const char *dir, topo_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return topo_err_set(err, TOPO_ENOTFOUND, "lldp: %s: cannot open the directory", dir);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || e->d_name[0] == '.' || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char *name = topo_strdup(e->d_name);
        if (!name || TOPO_ARRAY_PUSH(out, name) != 0) {
            free(name);
            rc = topo_err_nomem(err, "lldp");
        }
    }
    closedir(d);
    if (rc == 0 && out->n)
        qsort(out->items, out->n, sizeof(*out->items), by_name);
    return rc;
}

static int lldp_file(topo_facts *f, const char *dir, const char *name, size_t *neighbours,
                     topo_err *err)
{
    char path[4096], host[256];
    size_t n = strlen(name) - 5; /* without ".json" */
    if (n >= sizeof host || (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return topo_err_set(err, TOPO_ELIMIT, "lldp: %s/%s: name too long", dir, name);
    memcpy(host, name, n);
    host[n] = '\0';
    char *text = NULL;
    size_t len = 0, nn = 0;
    int rc = topo_codec_read_file(&text, &len, path, TOPO_MAX_LLDP_DOCUMENT, err);
    if (rc == 0)
        rc = topo_lldp_parse(&nn, f, host, text, len, path, err);
    free(text);
    *neighbours += nn;
    return rc;
}

static int run_lldp(topo_facts *f, const topo_sync_settings *s, topo_err *err)
{
    name_list files = TOPO_ARRAY_INIT;
    size_t neighbours = 0;
    int rc = lldp_files(&files, s->lldp_dir, err);
    for (size_t i = 0; rc == 0 && i < files.n; i++)
        rc = lldp_file(f, s->lldp_dir, files.items[i], &neighbours, err);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "source lldp: %zu files in %s, %zu neighbours, %zu switches",
                 files.n, s->lldp_dir, neighbours, topo_facts_switch_count(f));
    for (size_t i = 0; i < files.n; i++)
        free(files.items[i]);
    free(files.items);
    return rc;
}

static int run_netbox(topo_facts *f, const topo_sync_settings *s, topo_err *err)
{
    topo_netbox *nb = NULL;
    int rc = topo_netbox_create(&nb, &s->netbox, err);
    for (int k = TOPO_NETBOX_DEVICES; rc == 0 && k <= TOPO_NETBOX_CABLES; k++) {
        for (size_t i = 0; rc == 0 && i < s->netbox_files.nfiles[k]; i++) {
            const char *path = s->netbox_files.files[k][i];
            char *text = NULL, *next = NULL;
            size_t len = 0;
            rc = topo_codec_read_file(&text, &len, path, TOPO_MAX_NETBOX_PAGE, err);
            if (rc == 0)
                rc = topo_netbox_add_page(&next, nb, (topo_netbox_kind)k, text, len, path, err);
            if (rc == 0 && next)
                topo_log(TOPO_LOG_DEBUG, "netbox: %s has a next page; offline, give it as a file",
                         path);
            free(next);
            free(text);
        }
    }
    if (rc == 0)
        rc = topo_netbox_finish(nb, f, err);
    if (rc == 0) {
        topo_netbox_stats st = topo_netbox_get_stats(nb);
        char text[TOPO_NETBOX_STATS_TEXT_MAX];
        topo_log(TOPO_LOG_INFO, "source netbox: %s",
                 topo_netbox_stats_text(text, sizeof text, &st));
    }
    topo_netbox_free(nb);
    return rc;
}

static int run_gpu(topo_facts *f, const topo_sync_settings *s, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    topo_gpu_stats st = {0};
    int rc = topo_codec_read_file(&text, &len, s->nodes_file, TOPO_MAX_K8S_RESPONSE, err);
    if (rc == 0)
        rc = topo_gpu_parse(&st, f, text, len, s->nodes_file, err);
    free(text);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "source gpu: %zu nodes, %zu with GPU labels, %zu with a clique label",
                 st.nodes, st.gpu_nodes, st.cliques);
    return rc;
}

/* What each source's settings hold: its files (or, for the GPU source,
 * the controller's live Node objects), and its HTTP options. */
static int gpu_has_files(const topo_sync_settings *s)
{
    return s->nodes_file != NULL || s->nodes_live;
}

static int ufm_has_files(const topo_sync_settings *s)
{
    return s->ufm_systems_file != NULL;
}

static int ibnetdiscover_has_files(const topo_sync_settings *s)
{
    return s->nibnetdiscover > 0;
}

static int lldp_has_files(const topo_sync_settings *s)
{
    return s->lldp_dir != NULL;
}

static int netbox_has_files(const topo_sync_settings *s)
{
    return s->netbox_files.nfiles[TOPO_NETBOX_DEVICES] > 0;
}

static const topo_fetch_opts *ufm_http(const topo_sync_settings *s)
{
    return &s->ufm_http;
}

static const topo_fetch_opts *lldp_http(const topo_sync_settings *s)
{
    return &s->lldp_http;
}

static const topo_fetch_opts *netbox_http(const topo_sync_settings *s)
{
    return &s->netbox_http;
}

/* One source, one entry: its name, whether its hosts reach the plan
 * through a fabric (leaf and spine), and its two transports: its files
 * (read whole by read_files), and HTTP through lib/sync/fetch (the fetch kind
 * and its options; the HTTP transport is taken when they give a url). */
typedef struct sync_source_def {
    const char *name; /* the facts' source name, the name in config and logs */
    int fabric;
    int (*has_files)(const topo_sync_settings *s);
    int (*read_files)(topo_facts *f, const topo_sync_settings *s, topo_err *err);
    const topo_fetch_opts *(*http)(const topo_sync_settings *s); /* NULL: files only */
    topo_fetch_kind fetch_kind;
} sync_source_def;

static const sync_source_def sources[SRC_COUNT] = {
    [SRC_GPU] = {.name = "gpu", .has_files = gpu_has_files, .read_files = run_gpu},
    [SRC_UFM] = {.name = "ufm",
                 .fabric = 1,
                 .has_files = ufm_has_files,
                 .read_files = run_ufm,
                 .http = ufm_http,
                 .fetch_kind = TOPO_FETCH_UFM},
    [SRC_IB] = {.name = "ibnetdiscover",
                .fabric = 1,
                .has_files = ibnetdiscover_has_files,
                .read_files = run_ibnetdiscover},
    [SRC_LLDP] = {.name = "lldp",
                  .fabric = 1,
                  .has_files = lldp_has_files,
                  .read_files = run_lldp,
                  .http = lldp_http,
                  .fetch_kind = TOPO_FETCH_LLDP},
    [SRC_NETBOX] = {.name = "netbox",
                    .has_files = netbox_has_files,
                    .read_files = run_netbox,
                    .http = netbox_http,
                    .fetch_kind = TOPO_FETCH_NETBOX},
};

const char *topo_sync_source_name(topo_sync_source src)
{
    return (unsigned)src < SRC_COUNT ? sources[src].name : NULL;
}

/* The HTTP options of src when they make it fetched (a url), else NULL. */
static const topo_fetch_opts *fetched(const topo_sync_settings *s, int src)
{
    const topo_fetch_opts *http = sources[src].http ? sources[src].http(s) : NULL;
    return http && http->url ? http : NULL;
}

static int configured(const topo_sync_settings *s, int src)
{
    return sources[src].has_files(s) || fetched(s, src) != NULL;
}

/* The fabric of one source kind: each placed host's leaf domain and spine
 * group (ambiguous hosts too, in the domain the fabric chose). */
static int feed_fabric(topo_plan *plan, const topo_facts *f, const char *source,
                       const topo_fabric_opts *planes, topo_err *err)
{
    topo_fabric *fab = NULL;
    const topo_facts *one[1] = {f};
    int rc = topo_fabric_build(&fab, one, 1, planes, err);
    if (rc != 0)
        return topo_err_wrap(err, "%s fabric", source);
    for (size_t h = 0; rc == 0 && h < topo_fabric_host_count(fab); h++) {
        topo_fabric_status st = topo_fabric_host_status(fab, h);
        const char *host = topo_fabric_host_name(fab, h);
        /* A host with no leaf is still one the plan must report. */
        rc = topo_plan_add_host(plan, host, err);
        if (rc != 0 || (st != TOPO_FABRIC_HOST_PLACED && st != TOPO_FABRIC_HOST_AMBIGUOUS))
            continue;
        const char *leaf = topo_fabric_host_tier(fab, h, 0);
        const char *spine = topo_fabric_host_tier(fab, h, 1);
        if (leaf)
            rc = topo_plan_add_level(plan, source, host, TOPO_LEVEL_LEAF, leaf, err);
        if (rc == 0 && spine)
            rc = topo_plan_add_level(plan, source, host, TOPO_LEVEL_SPINE, spine, err);
    }
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    topo_log(TOPO_LOG_INFO,
             "fabric %s: %zu switches (%zu excluded), %zu leaves, %zu tiers; %zu hosts: %zu "
             "placed, %zu ambiguous, %zu without a leaf, %zu excluded",
             source, st.switches, st.switches_excluded, st.leaves, topo_fabric_tier_count(fab),
             st.hosts, st.hosts_placed, st.hosts_ambiguous, st.hosts_no_leaf,
             st.hosts_excluded);
    topo_fabric_free(fab);
    return rc;
}

/* Levels the configured sources can give, coarsest first, then hostname. */
static size_t default_levels(topo_level out[TOPO_LEVEL_COUNT], const topo_sync_settings *s)
{
    int netbox = configured(s, SRC_NETBOX);
    int fabric = 0;
    for (int src = 0; src < SRC_COUNT; src++)
        fabric |= sources[src].fabric && configured(s, src);
    int nvlink = s->nodes_file || s->nodes_live || (netbox && s->netbox.nvlink_field);
    size_t n = 0;
    if (netbox)
        out[n++] = TOPO_LEVEL_DATACENTER;
    if (fabric) {
        out[n++] = TOPO_LEVEL_SPINE;
        out[n++] = TOPO_LEVEL_LEAF;
    }
    if (netbox)
        out[n++] = TOPO_LEVEL_RACK;
    if (nvlink)
        out[n++] = TOPO_LEVEL_NVLINK;
    out[n++] = TOPO_LEVEL_HOSTNAME;
    return n;
}

/* A source over HTTP, through a fetcher made for this read (it reads the
 * credential files afresh). */
static int fetch_source(topo_facts *f, const topo_sync_settings *s, const sync_source_def *def,
                        const topo_fetch_opts *http, topo_err *err)
{
    topo_fetch_kind kind = def->fetch_kind;
    topo_fetch *fetch = NULL;
    topo_fetch_opts o = *http;
    if (kind == TOPO_FETCH_NETBOX)
        o.netbox = &s->netbox;
    int rc = topo_fetch_create(&fetch, kind, &o, err);
    if (rc == 0)
        rc = topo_fetch_into(fetch, f, err);
    if (rc == 0) {
        topo_fetch_stats st = topo_fetch_get_stats(fetch);
        topo_log(TOPO_LOG_INFO,
                 "source %s: fetched %llu objects in %llu ms: %llu requests, %llu retries, %llu "
                 "bytes",
                 def->name, (unsigned long long)st.objects,
                 (unsigned long long)st.last_duration_ms, (unsigned long long)st.requests,
                 (unsigned long long)st.retries, (unsigned long long)st.bytes);
    }
    topo_fetch_free(fetch);
    return rc;
}

static int read_source(topo_facts *f, const topo_sync_settings *s, int src, topo_err *err)
{
    /* A url makes the source fetched rather than read from its files. */
    const topo_fetch_opts *http = fetched(s, src);
    if (http)
        return fetch_source(f, s, &sources[src], http, err);
    return sources[src].read_files(f, s, err);
}

/* The sources' facts into the plan: the Node objects' names as the node
 * set, the fabric kinds' tiers, the levels NetBox and GPU labels state. */
static int feed_plan(topo_plan *plan, topo_facts *const facts[SRC_COUNT],
                     const topo_sync_settings *s, topo_err *err)
{
    int rc = 0;
    const topo_facts *gpu = facts[SRC_GPU];
    for (size_t h = 0; rc == 0 && gpu && h < topo_facts_host_count(gpu); h++)
        rc = topo_plan_add_node(plan, topo_facts_host_name(gpu, h), err);
    for (int src = 0; rc == 0 && src < SRC_COUNT; src++) {
        if (!facts[src])
            continue;
        if (sources[src].fabric)
            rc = feed_fabric(plan, facts[src], sources[src].name, &s->planes, err);
        if (rc == 0)
            rc = topo_plan_add_facts(plan, facts[src], err);
    }
    return rc;
}

int topo_sync_source_configured(const topo_sync_settings *s, topo_sync_source src)
{
    return (unsigned)src < SRC_COUNT && configured(s, (int)src);
}

int topo_sync_source_read(topo_facts *facts, const topo_sync_settings *s, topo_sync_source src,
                          topo_err *err)
{
    if (!topo_sync_source_configured(s, src) || (src == TOPO_SYNC_GPU && !s->nodes_file))
        return topo_err_set(err, TOPO_EINVALID, "source %d is not configured to be read",
                            (int)src);
    return read_source(facts, s, (int)src, err);
}

int topo_sync_fuse(topo_sync **out, const topo_sync_settings *s,
                   topo_facts *const facts[TOPO_SYNC_SOURCE_COUNT], topo_err *err)
{
    topo_level levels[TOPO_LEVEL_COUNT];
    int rc = 0;
    *out = NULL;
    topo_sync *sync = calloc(1, sizeof(*sync));
    if (!sync)
        return topo_err_nomem(err, "sync");
    topo_plan_opts po = s->plan;
    if (po.nlevels == 0) {
        po.nlevels = default_levels(levels, s);
        po.levels = levels;
    }
    if ((rc = topo_namemap_create(&sync->names, &s->names, err)) != 0)
        goto cleanup;
    po.names = sync->names;
    po.nvlink_own_node = s->nvlink_hostname_fallback;
    if ((rc = topo_plan_create(&sync->plan, &po, err)) != 0 ||
        (rc = feed_plan(sync->plan, facts, s, err)) != 0 ||
        (rc = topo_plan_build(sync->plan, err)) != 0 ||
        (rc = sync_explain(sync->plan, s, err)) != 0)
        goto cleanup;
    topo_log(TOPO_LOG_INFO,
             "plan: %zu nodes, %zu incomplete, %zu conflicts, %zu unmappable host names "
             "(distinct, over all sources), %zu hosts not among the nodes, %zu hosts whose "
             "short name matches several",
             topo_plan_node_count(sync->plan), topo_plan_incomplete_count(sync->plan),
             topo_plan_conflict_count(sync->plan), topo_plan_unmapped_hosts(sync->plan),
             topo_plan_unknown_hosts(sync->plan), topo_plan_ambiguous_count(sync->plan));
    sync_log_hosts(sync->plan);
    *out = sync;
    sync = NULL;
cleanup:
    topo_sync_free(sync);
    return rc;
}

int topo_sync_run(topo_sync **out, const topo_sync_settings *s, topo_err *err)
{
    topo_facts *facts[SRC_COUNT] = {0};
    int rc = 0, any = 0;
    *out = NULL;
    for (int src = 0; src < SRC_COUNT; src++)
        any |= configured(s, src);
    if (!any)
        return topo_err_set(err, TOPO_EINVALID,
                            "no source configured: give --ibnetdiscover, --ufm-systems-file, "
                            "--ufm-url, --lldp-dir, --lldp-url, --netbox-url or --nodes-file, "
                            "or a --config with sources");
    for (int src = 0; rc == 0 && src < SRC_COUNT; src++) {
        if (src == SRC_GPU && !s->nodes_file)
            continue; /* the controller's live Node objects: not read here */
        if (configured(s, src) && (rc = topo_facts_create(&facts[src], sources[src].name, err)) == 0)
            rc = read_source(facts[src], s, src, err);
    }
    if (rc == 0)
        rc = topo_sync_fuse(out, s, facts, err);
    for (int src = 0; src < SRC_COUNT; src++)
        topo_facts_free(facts[src]);
    return rc;
}
