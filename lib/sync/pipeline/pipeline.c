/* topo-sync's pipeline (include/topo/sync.h): sources from files or over
 * HTTP (each one entry of lib/sync/fetch's table, topo/sync_source.h) into
 * facts, fabric tiers, the fused plan. Each source is read whole before the
 * plan sees any of it, so a source that fails to parse or to be fetched
 * stops the run instead of planning from half its data. */
#define _POSIX_C_SOURCE 200809L

#include "topo/sync.h"

#include <stdlib.h>

#include "topo/fabric.h"
#include "topo/log.h"

#include "sync_internal.h"

/* Short names for topo_sync_source (include/topo/sync_source.h). */
enum {
    SRC_GPU = TOPO_SYNC_GPU,
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

static int configured(const topo_sync_settings *s, int src)
{
    return topo_sync_source_configured(s, (topo_sync_source)src);
}

/* The InfiniBand sources: a switch is one GUID in each (topo/guid.h), so
 * their facts are one fabric. */
static int infiniband(int src)
{
    return src == TOPO_SYNC_UFM || src == TOPO_SYNC_IBNETDISCOVER;
}

/* A host's leaf domain and spine group as source gives them: from ib (the
 * fabric of every InfiniBand source's facts, NULL for another source) when
 * it places the host, so a spine only one source knows joins the same
 * group whichever source saw the host; from the source's own fabric
 * (own, host oh) when the union finds it cabled to several leaf domains
 * and more than one source states it (the sources disagree on its
 * cabling: each source's own value, a conflict in the plan when they
 * differ). */
static void host_tiers(const char **leaf, const char **spine, const topo_fabric *own, size_t oh,
                       const topo_fabric *ib, int ib_sources)
{
    size_t h = 0;
    *leaf = topo_fabric_host_tier(own, oh, 0);
    *spine = topo_fabric_host_tier(own, oh, 1);
    if (ib == NULL || topo_fabric_find_host(ib, topo_fabric_host_name(own, oh), &h) != 0)
        return;
    topo_fabric_status st = topo_fabric_host_status(ib, h);
    if (st == TOPO_FABRIC_HOST_PLACED || (st == TOPO_FABRIC_HOST_AMBIGUOUS && ib_sources < 2)) {
        *leaf = topo_fabric_host_tier(ib, h, 0);
        *spine = topo_fabric_host_tier(ib, h, 1);
    }
}

/* How many InfiniBand sources' facts state host. */
static int ib_sources_of(topo_facts *const facts[SRC_COUNT], const char *host)
{
    int n = 0;
    size_t at = 0;
    for (int src = 0; src < SRC_COUNT; src++)
        n += infiniband(src) && facts[src] && topo_facts_find_host(facts[src], host, &at) == 0;
    return n;
}

static void log_fabric(const char *source, const topo_fabric *fab)
{
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    topo_log(TOPO_LOG_INFO,
             "fabric %s: %zu switches (%zu excluded), %zu leaves, %zu tiers; %zu hosts: %zu "
             "placed, %zu ambiguous, %zu without a leaf, %zu excluded",
             source, st.switches, st.switches_excluded, st.leaves, topo_fabric_tier_count(fab),
             st.hosts, st.hosts_placed, st.hosts_ambiguous, st.hosts_no_leaf,
             st.hosts_excluded);
}

/* The fabric of one source kind: each placed host's leaf domain and spine
 * group (ambiguous hosts too, in the domain the fabric chose), as
 * host_tiers takes them (ib: NULL, or the InfiniBand sources' union). */
static int feed_fabric(topo_plan *plan, topo_facts *const facts[SRC_COUNT], int src,
                       const topo_fabric *ib, const topo_fabric_opts *planes, topo_err *err)
{
    topo_fabric *fab = NULL;
    const topo_facts *one[1] = {facts[src]};
    const char *source = topo_sync_source_name((topo_sync_source)src);
    int rc = topo_fabric_build(&fab, one, 1, planes, err);
    if (rc != 0)
        return topo_err_wrap(err, "%s fabric", source);
    for (size_t h = 0; rc == 0 && h < topo_fabric_host_count(fab); h++) {
        topo_fabric_status st = topo_fabric_host_status(fab, h);
        const char *host = topo_fabric_host_name(fab, h), *leaf = NULL, *spine = NULL;
        /* A host with no leaf is still one the plan must report. */
        rc = topo_plan_add_host(plan, host, err);
        if (rc != 0 || (st != TOPO_FABRIC_HOST_PLACED && st != TOPO_FABRIC_HOST_AMBIGUOUS))
            continue;
        host_tiers(&leaf, &spine, fab, h, ib, ib ? ib_sources_of(facts, host) : 0);
        if (leaf)
            rc = topo_plan_add_level(plan, source, host, TOPO_LEVEL_LEAF, leaf, err);
        if (rc == 0 && spine)
            rc = topo_plan_add_level(plan, source, host, TOPO_LEVEL_SPINE, spine, err);
    }
    log_fabric(source, fab);
    topo_fabric_free(fab);
    return rc;
}

/* The InfiniBand sources' facts as one fabric (switches and cables by
 * GUID, a cable both know once) when more than one is read; NULL
 * otherwise (a source's own fabric is the union then). */
static int infiniband_fabric(topo_fabric **out, topo_facts *const facts[SRC_COUNT],
                             const topo_fabric_opts *planes, topo_err *err)
{
    const topo_facts *ib[SRC_COUNT];
    size_t n = 0;
    *out = NULL;
    for (int src = 0; src < SRC_COUNT; src++)
        if (infiniband(src) && facts[src])
            ib[n++] = facts[src];
    if (n < 2)
        return 0;
    int rc = topo_fabric_build(out, ib, n, planes, err);
    if (rc != 0)
        return topo_err_wrap(err, "infiniband fabric");
    log_fabric("infiniband (ufm and ibnetdiscover as one)", *out);
    return 0;
}

/* Levels the configured sources can give, coarsest first, then hostname. */
static size_t default_levels(topo_level out[TOPO_LEVEL_COUNT], const topo_sync_settings *s)
{
    int netbox = configured(s, SRC_NETBOX);
    int fabric = 0;
    for (int src = 0; src < SRC_COUNT; src++)
        fabric |= topo_sync_source_fabric((topo_sync_source)src) && configured(s, src);
    int nvlink = configured(s, SRC_GPU) || (netbox && s->netbox.nvlink_field);
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

/* The sources' facts into the plan: the Node objects' names as the node
 * set, the fabric kinds' tiers, the levels NetBox and GPU labels state. */
static int feed_plan(topo_plan *plan, topo_facts *const facts[SRC_COUNT],
                     const topo_sync_settings *s, topo_err *err)
{
    int rc = 0;
    const topo_facts *gpu = facts[SRC_GPU];
    topo_fabric *ib = NULL;
    for (size_t h = 0; rc == 0 && gpu && h < topo_facts_host_count(gpu); h++)
        rc = topo_plan_add_node(plan, topo_facts_host_name(gpu, h), err);
    if (rc == 0)
        rc = infiniband_fabric(&ib, facts, &s->planes, err);
    for (int src = 0; rc == 0 && src < SRC_COUNT; src++) {
        if (!facts[src])
            continue;
        if (topo_sync_source_fabric((topo_sync_source)src))
            rc = feed_fabric(plan, facts, src, infiniband(src) ? ib : NULL, &s->planes, err);
        if (rc == 0)
            rc = topo_plan_add_facts(plan, facts[src], err);
    }
    topo_fabric_free(ib);
    return rc;
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
        topo_sync_source k = (topo_sync_source)src;
        /* Not the controller's live Node objects: those are not read here. */
        if (topo_sync_source_readable(s, k) &&
            (rc = topo_facts_create(&facts[src], topo_sync_source_name(k), err)) == 0)
            rc = topo_sync_source_read(facts[src], s, k, err);
    }
    if (rc == 0)
        rc = topo_sync_fuse(out, s, facts, err);
    for (int src = 0; src < SRC_COUNT; src++)
        topo_facts_free(facts[src]);
    return rc;
}
