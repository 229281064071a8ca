/* topo-sync's sources, one table entry each (lib/sync/fetch/fetch_sources.c):
 * its name, whether it is a fabric source, whether its facts may come live
 * from the controller's objects, and its transports: its files, or HTTP
 * (topo/fetch.h) when its settings give a url. The pipeline (topo/sync.h)
 * and the controller's refresher know no source but through these. */
#ifndef TOPO_SYNC_SOURCE_H
#define TOPO_SYNC_SOURCE_H

#include "topo/error.h"
#include "topo/facts.h"
#include "topo/syncconfig.h"

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

/* Whether src's hosts reach the plan through a fabric (leaf and spine
 * tiers from its switch graph): ufm, ibnetdiscover, lldp. 0 out of range. */
int topo_sync_source_fabric(topo_sync_source src);

/* Whether the settings configure src: its files, a url, or (the GPU
 * source) the controller's live Node objects (nodes_live). */
int topo_sync_source_configured(const topo_sync_settings *s, topo_sync_source src);

/* Whether topo_sync_source_read reads src: configured by its files or a
 * url. Not the GPU source made of the controller's live Node objects
 * only: the controller hands those to topo_sync_fuse itself. */
int topo_sync_source_readable(const topo_sync_settings *s, topo_sync_source src);

/* Reads one readable source whole into facts (created empty by the caller
 * under the source's name), over HTTP when its settings give a url, else
 * from its files, logging what it held. TOPO_EINVALID for a source not
 * readable; else errors as for topo_sync_run; on error facts holds part of
 * the source: discard it. */
int topo_sync_source_read(topo_facts *facts, const topo_sync_settings *s, topo_sync_source src,
                          topo_err *err) TOPO_MUST_CHECK;

/* The files of a source that a read skipped, by reason: one host's file
 * each (an LLDP directory's HOST.json, a host's member of an LLDP
 * collector's answer) that could not be read: unreadable (not a regular
 * file: a FIFO, a directory, a device; no permission; gone since the
 * directory was listed), too_large (past the source's limit), or invalid
 * (read, but its document refused: empty, cut, malformed, over its parse
 * budget). Each is logged as a warning naming the file and why. */
typedef struct topo_sync_skipped {
    size_t unreadable;
    size_t too_large;
    size_t invalid;
} topo_sync_skipped;

/* topo_sync_source_read, for a reader that keeps a source's last good
 * facts (the controller): a host whose file is skipped keeps what
 * last_good (may be NULL) held for it (topo_facts_copy_host), the others
 * are read as they are now. *skipped (may be NULL) counts the files
 * skipped. */
int topo_sync_source_read_keeping(topo_facts *facts, const topo_sync_settings *s,
                                  topo_sync_source src, const topo_facts *last_good,
                                  topo_sync_skipped *skipped, topo_err *err) TOPO_MUST_CHECK;

#endif
