/* What the plan cannot say by itself: why most nodes are held and which
 * setting fixes it, and that nodes were made their own NVLink domain. The
 * plan knows which levels are missing; only the settings know which source
 * would give them. Each note is also a log line, so a controller's round
 * that writes nothing says why instead of a silent zero. */
#include <string.h>

#include "topo/buf.h"
#include "topo/log.h"
#include "topo/sync.h"

#include "sync_internal.h"

static int fabric_configured(const topo_sync_settings *s)
{
    return topo_sync_source_configured(s, TOPO_SYNC_IBNETDISCOVER) ||
           topo_sync_source_configured(s, TOPO_SYNC_UFM) ||
           topo_sync_source_configured(s, TOPO_SYNC_LLDP);
}

/* Why no source gives level to these nodes, and the setting that would. */
static void why_missing(topo_buf *b, const topo_plan *plan, topo_level level,
                        const topo_sync_settings *s)
{
    int netbox = topo_sync_source_configured(s, TOPO_SYNC_NETBOX);
    switch (level) {
    case TOPO_LEVEL_SPINE:
    case TOPO_LEVEL_LEAF:
        if (level == TOPO_LEVEL_SPINE && fabric_configured(s) &&
            topo_plan_level_missing(plan, TOPO_LEVEL_LEAF) < topo_plan_level_missing(plan, level))
            topo_buf_puts(b, "the fabric gives them a leaf but no spine group above it: a "
                             "fabric of one tier, or a source that lacks the switch-to-switch "
                             "links (a read cut short, a plane filter that drops the spines)");
        else if (fabric_configured(s))
            topo_buf_puts(b, "the fabric places none of them: check that the fabric's host names "
                             "map to node names (nodeNames) and the plane filter "
                             "(fabric.excludeSwitch, fabric.includePort)");
        else
            topo_buf_puts(b, "no fabric source is configured (--ibnetdiscover, --ufm-url, "
                             "--lldp-url, or sources in --config)");
        break;
    case TOPO_LEVEL_NVLINK:
        if (!s->nvlink_hostname_fallback)
            topo_buf_puts(b, "no source gives them an NVLink domain (no nvidia.com/gpu.clique "
                             "label, no NetBox nvlinkField) and "
                             "sources.nodes.nvlinkHostnameFallback is false: set it to true to "
                             "make each such node its own NVLink domain");
        else if (netbox && s->netbox.nvlink_field)
            topo_buf_puts(b, "NetBox's nvlinkField names none for them");
        else
            topo_buf_puts(b, "no source gives them an NVLink domain");
        break;
    default: /* datacenter, rack */
        if (netbox)
            topo_buf_printf(b, "NetBox gives none for them: check that NetBox's device names "
                               "map to node names (nodeNames) and its sites, hostRoles and tags "
                               "filters");
        else
            topo_buf_printf(b, "no configured source gives %s (NetBox does: --netbox-url or "
                               "sources.netbox)",
                            topo_level_name(level));
        break;
    }
}

/* "; or leave it out of the topology: --levels spine,leaf,hostname
 * (labels.levels)": the topology's levels less every held one (all of
 * them hold the nodes back); nothing when none would be left, since an
 * empty list is no topology. */
static void suggest_levels(topo_buf *b, const topo_level *levels, size_t n, const int *held,
                           size_t nheld)
{
    if (nheld >= n)
        return;
    topo_buf_printf(b, "; or leave %s out of the topology: --levels ",
                    nheld > 1 ? "the levels most nodes miss" : "it");
    for (size_t l = 0, printed = 0; l < n; l++)
        if (!held[l])
            topo_buf_printf(b, "%s%s", printed++ ? "," : "", topo_level_name(levels[l]));
    topo_buf_puts(b, " (labels.levels)");
}

static int note(topo_plan *plan, topo_log_level lvl, topo_buf *b, topo_err *err)
{
    if (b->error != 0 || !b->ptr) {
        topo_buf_dispose(b);
        return topo_err_nomem(err, "plan note");
    }
    topo_log(lvl, "plan: %s", b->ptr);
    int rc = topo_plan_add_note(plan, b->ptr, err);
    topo_buf_dispose(b);
    return rc;
}

/* 1 when more than half the planned nodes miss level. */
static int most_miss(const topo_plan *plan, topo_level level)
{
    size_t nodes = topo_plan_node_count(plan);
    return nodes > 0 && 2 * topo_plan_level_missing(plan, level) > nodes;
}

size_t topo_sync_held_levels(const topo_plan *plan)
{
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t n = topo_plan_levels(plan, levels), held = 0;
    for (size_t l = 0; l < n; l++)
        held += (size_t)most_miss(plan, levels[l]);
    return held;
}

/* A level more than half the nodes miss holds them all back: say which,
 * why and what fixes it. */
static int explain_held(topo_plan *plan, const topo_sync_settings *s, topo_err *err)
{
    topo_level levels[TOPO_LEVEL_COUNT];
    int held[TOPO_LEVEL_COUNT] = {0};
    size_t n = topo_plan_levels(plan, levels), nodes = topo_plan_node_count(plan), nheld = 0;
    for (size_t l = 0; l < n; l++) {
        held[l] = most_miss(plan, levels[l]);
        nheld += (size_t)held[l];
    }
    for (size_t l = 0; l < n; l++) {
        if (!held[l])
            continue;
        topo_buf b = TOPO_BUF_INIT(4096);
        topo_buf_printf(&b, "%s: %zu of %zu nodes have no value, so they get no labels: ",
                        topo_level_name(levels[l]), topo_plan_level_missing(plan, levels[l]),
                        nodes);
        why_missing(&b, plan, levels[l], s);
        suggest_levels(&b, levels, n, held, nheld);
        int rc = note(plan, TOPO_LOG_WARN, &b, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* How many nodes the own-node rule gave their NVLink domain (none when
 * nvlink is no level of the topology: such a node has no value of it). */
static size_t own_node_domains(const topo_plan *plan)
{
    size_t own = 0;
    for (size_t i = 0; i < topo_plan_node_count(plan); i++) {
        const char *src = topo_plan_node_source(plan, i, TOPO_LEVEL_NVLINK);
        own += src && strcmp(src, TOPO_PLAN_OWN_NODE_SOURCE) == 0;
    }
    return own;
}

int sync_explain(topo_plan *plan, const topo_sync_settings *s, topo_err *err)
{
    size_t own = own_node_domains(plan);
    if (own > 0) {
        topo_buf b = TOPO_BUF_INIT(1024);
        topo_buf_printf(&b,
                        "nvlink: %zu nodes without an NVLink domain from a source (no "
                        "nvidia.com/gpu.clique label) are each their own, named by the node: "
                        "NVLink leaves a node only on multi-node NVLink systems, which carry a "
                        "clique (sources.nodes.nvlinkHostnameFallback)",
                        own);
        int rc = note(plan, TOPO_LOG_INFO, &b, err);
        if (rc != 0)
            return rc;
    }
    return explain_held(plan, s, err);
}

/* The first LOG_HOSTS_MAX of n lines (get(plan, i)), then how many more:
 * once per plan, a few at most, the plan text has all. */
#define LOG_HOSTS_MAX 10

static void log_first(const topo_plan *plan, size_t n,
                      const char *(*get)(const topo_plan *, size_t), const char *label,
                      const char *what)
{
    for (size_t i = 0; i < n && i < LOG_HOSTS_MAX; i++)
        topo_log(TOPO_LOG_WARN, "plan: %s%s", label, get(plan, i));
    if (n > LOG_HOSTS_MAX)
        topo_log(TOPO_LOG_WARN, "plan: %zu more %s (--print-plan lists them)",
                 n - LOG_HOSTS_MAX, what);
}

void sync_log_hosts(const topo_plan *plan)
{
    log_first(plan, topo_plan_ambiguous_count(plan), topo_plan_ambiguous, "",
              "ambiguous host names");
    log_first(plan, topo_plan_unmapped_hosts(plan), topo_plan_unmapped, "unmappable: ",
              "unmappable host names");
}
