/* One source's facts (topo/facts.h) as a JSON document and back, so that
 * topo-sync can keep the last good facts of each source (in the cache,
 * topo/cache_facts.h) and use them while the source is down or after a
 * restart during an outage.
 *
 * The document is canonical: the same facts give the same bytes (compact,
 * keys sorted, hosts, switches and cables in the facts' order), so a hash
 * of it tells whether a source changed. Version 1:
 *
 *   {"cables":[[0,0,"HCA-1"],[0,null,"HCA-2"],[1,null,null],[0,1]],
 *    "hosts":[{"levels":{"rack":"r1"},"name":"gpu-1"}],
 *    "source":"ibnetdiscover",
 *    "switches":[{"id":"S-0002c90300a1b2c3","name":"leaf-1"},{"id":"S-2"}],
 *    "version":1}
 *
 * hosts: in index order; levels holds the levels the source states
 * (datacenter, rack, nvlink), left out when none. switches: in index order;
 * name left out when it is the id. cables: in the facts' order, as tuples
 * (they are most of a document): a host cable is [switch, host, port] by
 * index, host null for an adapter whose host the source cannot name, port
 * null when unknown; a switch cable is [switch, switch], lower index first.
 * A string that is not UTF-8 (a node description in an ibnetdiscover dump
 * may hold any byte) is written as {"hex":"<its bytes in lower-case hex>"},
 * so that nothing is lost. A 10,000-node rail-optimised fabric's facts are
 * about 2.4 MB (docs/sync.md). */
#ifndef TOPO_FACTS_JSON_H
#define TOPO_FACTS_JSON_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/facts.h"

/* The version this build writes and the only one it reads. */
#define TOPO_FACTS_JSON_VERSION 1

/* The canonical document of facts: *out malloc'd (free it), NUL-terminated,
 * *out_len (may be NULL) its length. Written straight into one buffer (no
 * JSON tree: memory is the document's size). 0, TOPO_ENOMEM, or
 * TOPO_ELIMIT past TOPO_MAX_FACTS_DOCUMENT. */
int topo_facts_json_encode(char **out, size_t *out_len, const topo_facts *facts,
                           topo_err *err) TOPO_MUST_CHECK;

/* Facts from a document of len bytes (at most TOPO_MAX_FACTS_DOCUMENT),
 * validated whole: every field's type, no unknown field, no empty string,
 * no duplicate host, switch or cable, indices in range, only the levels a
 * source states. Canonical spelling is not required (any key order,
 * whitespace, a switch name equal to its id, a switch cable's higher index
 * first). The document is parsed whole with jansson: a 10,000-node fabric's
 * takes some 40 MB while it decodes. what names the document in
 * messages ("cache: facts of ufm"; NULL: "facts document"), which read
 * "<what>: hosts[3].levels.rack: expected a string, got an integer" or
 * "<what>:1:20: <JSON syntax error>". 0 with *out (free it);
 * TOPO_EINVALID, TOPO_EUNSUPPORTED (another version), TOPO_ELIMIT,
 * TOPO_ENOMEM; *out is NULL on error. */
int topo_facts_json_decode(topo_facts **out, const char *text, size_t len, const char *what,
                           topo_err *err) TOPO_MUST_CHECK;

#endif
