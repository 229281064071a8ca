/* topo-sync's last good facts per source, kept in the cache: the facts of
 * each successful fetch saved as their canonical document
 * (topo/facts_json.h) under the facts' source name ("ufm", "netbox", ...)
 * in the cache's facts store (topo/cache_facts.h), and loaded back while the
 * source fails, or after a restart during an outage, so that the plan keeps
 * the labels that came from that source.
 *
 * The controller's order: fetch; on success save, then plan and write
 * labels (a save returns only once the document is durable, so no label is
 * written from facts a crash could take back); on failure record it with
 * topo_cache_facts_fail and plan from topo_sync_facts_load. How stale the
 * stored facts are is topo_cache_facts_list's age_ms. */
#ifndef TOPO_SYNC_FACTS_H
#define TOPO_SYNC_FACTS_H

#include <stdint.h>

#include "topo/cache.h"
#include "topo/error.h"
#include "topo/facts.h"

/* Stores facts as their source's last good facts, fetched at fetched_at_ms
 * (wall clock). *out_changed (may be NULL): 1 when they differ from the
 * facts stored before (or none were), 0 when they are the same. 0, or the
 * encoder's or the cache's errors; on error the stored facts are as they
 * were. */
int topo_sync_facts_save(topo_cache *cache, const topo_facts *facts, int64_t fetched_at_ms,
                         int *out_changed, topo_err *err) TOPO_MUST_CHECK;

/* The last good facts of source: *out (free it) and *out_fetched_at_ms (may
 * be NULL). TOPO_ENOTFOUND when none are stored; TOPO_EINVALID, naming the
 * field, for a stored document that does not decode, is damaged or is
 * another source's; TOPO_EUNSUPPORTED for one of a newer version (written
 * by a newer topo-sync). The stored row is never changed by a load: the
 * next successful fetch replaces it. */
int topo_sync_facts_load(topo_facts **out, int64_t *out_fetched_at_ms, topo_cache *cache,
                         const char *source, topo_err *err) TOPO_MUST_CHECK;

#endif
