/* The cache's object writes from JSON already parsed, for callers that
 * hold a jansson tree (the filler gets each watch event parsed;
 * dumping it to text for topo_cache_upsert_* to parse again would double
 * the work on the hottest path). Same semantics as the text forms. */
#ifndef TOPO_CACHE_JSON_H
#define TOPO_CACHE_JSON_H

#include <jansson.h>

#include "topo/cache.h"

int topo_cache_upsert_json(topo_cache *cache, topo_cache_kind kind, const json_t *obj,
                           topo_err *err) TOPO_MUST_CHECK;

#endif
