/* topo-sync's offline pipeline: every source the settings configure
 * (topo/syncconfig.h) read from files into its own facts ("ibnetdiscover",
 * "ufm", "lldp", "netbox", "gpu"), one switch graph per fabric source kind
 * (the ibnetdiscover dumps together, UFM, LLDP) with the plane filter, each
 * placed host's leaf domain and spine group fed to the plan under that
 * source's name, the levels NetBox and the Node objects state, and the node
 * set from the Node objects (else the hosts the sources name). One log line
 * per source with what it held.
 *
 * Levels: when the settings name none, the topology has the levels the
 * configured sources can give, coarsest first, then hostname (datacenter and
 * rack from NetBox, spine and leaf from a fabric source, nvlink from the Node
 * objects or a NetBox NVLink field), so that a run with one ibnetdiscover
 * dump plans spine, leaf and hostname rather than five levels it can never
 * fill. */
#ifndef TOPO_SYNC_H
#define TOPO_SYNC_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/plan.h"
#include "topo/syncconfig.h"

typedef struct topo_sync topo_sync;

/* The sources, in the order their claims reach the plan: the precedence of
 * sources a level's precedence list does not name (a Node's own GPU clique
 * label over NetBox's NVLink field, UFM's live fabric over a dump). */
typedef enum topo_sync_source {
    TOPO_SYNC_GPU,
    TOPO_SYNC_UFM,
    TOPO_SYNC_IBNETDISCOVER,
    TOPO_SYNC_LLDP,
    TOPO_SYNC_NETBOX,
    TOPO_SYNC_SOURCE_COUNT
} topo_sync_source;

/* "gpu", "ufm", "ibnetdiscover", "lldp", "netbox" (the facts' source
 * names, and the names in config and logs); NULL out of range. */
const char *topo_sync_source_name(topo_sync_source src);

/* Whether the settings configure src. */
int topo_sync_source_configured(const topo_sync_settings *s, topo_sync_source src);

/* Reads one configured source whole into facts (created empty by the
 * caller under the source's name), logging what it held. Errors as for
 * topo_sync_run; on error facts holds part of the source: discard it. */
int topo_sync_source_read(topo_facts *facts, const topo_sync_settings *s, topo_sync_source src,
                          topo_err *err) TOPO_MUST_CHECK;

/* Builds the plan from facts already read (facts[src] NULL for a source
 * with none; borrowed for the call): the node set is the GPU source's
 * hosts (the Node objects), else every host the sources name. The levels
 * default as for topo_sync_run, from what the settings configure. */
int topo_sync_fuse(topo_sync **out, const topo_sync_settings *s,
                   topo_facts *const facts[TOPO_SYNC_SOURCE_COUNT], topo_err *err) TOPO_MUST_CHECK;

/* Runs every configured source and builds the plan. 0; TOPO_EINVALID with
 * the file (and line) for a source that does not parse, TOPO_ENOTFOUND or
 * TOPO_EIO for a file that cannot be read, TOPO_ELIMIT, TOPO_ENOMEM. A run
 * with no source at all is TOPO_EINVALID. */
int topo_sync_run(topo_sync **out, const topo_sync_settings *settings,
                  topo_err *err) TOPO_MUST_CHECK;
void topo_sync_free(topo_sync *sync);

/* How many levels of the plan's topology more than half its nodes miss
 * (each holds them all back; the plan's notes and the log say why and what
 * fixes it): topo-sync --once exits 1 when there is one. */
size_t topo_sync_held_levels(const topo_plan *plan);

/* The built plan, borrowed from sync. */
const topo_plan *topo_sync_plan(const topo_sync *sync);

#endif
