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
#include "topo/sync_source.h"
#include "topo/syncconfig.h"

typedef struct topo_sync topo_sync;

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
