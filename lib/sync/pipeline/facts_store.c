/* topo-sync's facts in the cache (topo/sync_facts.h): the facts document of
 * lib/sync/sources in the opaque store of lib/cache. */
#include "topo/sync_facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/cache_facts.h"
#include "topo/facts_json.h"
#include "topo/limits.h"
#include "topo/pool.h"

int topo_sync_facts_save(topo_cache *cache, const topo_facts *facts, int64_t fetched_at_ms,
                         int *out_changed, topo_err *err)
{
    char *doc = NULL;
    size_t len = 0;
    int rc;

    if (out_changed != NULL)
        *out_changed = 0;
    if (cache == NULL || facts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "sync: save facts: missing argument");
    if ((rc = topo_facts_json_encode(&doc, &len, facts, err)) != 0)
        return rc;
    rc = topo_cache_facts_put(cache, topo_facts_source(facts), doc, len, fetched_at_ms,
                              out_changed, err);
    free(doc);
    return rc;
}

int topo_sync_facts_load(topo_facts **out, int64_t *out_fetched_at_ms, topo_cache *cache,
                         const char *source, topo_err *err)
{
    topo_pool *pool = NULL;
    topo_cache_facts stored;
    topo_facts *facts = NULL;
    char what[64 + TOPO_MAX_FACTS_SOURCE_NAME];
    int rc;

    *out = NULL;
    if (out_fetched_at_ms != NULL)
        *out_fetched_at_ms = 0;
    if ((pool = topo_pool_create()) == NULL)
        return topo_err_nomem(err, "sync: load facts");
    if ((rc = topo_cache_facts_get(&stored, cache, source, pool, err)) != 0)
        goto cleanup;
    snprintf(what, sizeof(what), "cache: facts of %s", source);
    if ((rc = topo_facts_json_decode(&facts, stored.document, stored.document_len, what, err)) !=
        0)
        goto cleanup;
    /* The row's key and the document's own name must agree, or the plan
     * would credit one source's levels to another. */
    if (strcmp(topo_facts_source(facts), source) != 0) {
        rc = topo_err_set(err, TOPO_EINVALID, "%s: source: the document is of \"%s\"", what,
                          topo_facts_source(facts));
        goto cleanup;
    }
    if (out_fetched_at_ms != NULL)
        *out_fetched_at_ms = stored.fetched_at_ms;
    *out = facts;
    facts = NULL;
cleanup:
    topo_facts_free(facts);
    topo_pool_free(pool);
    return rc;
}
