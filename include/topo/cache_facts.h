/* topo-sync's last good facts per source, in the cache (schema 5, table
 * source_facts), so that a source outage — or a restart during one — never
 * deletes or changes the labels that came from that source: the controller
 * plans from the stored facts while the source fails.
 *
 * Per source name ("ufm", "netbox", ...: the names the plan's precedence
 * uses): the document of the last successful fetch, opaque to the cache (a
 * facts document of topo/facts_json.h; topo/sync_facts.h writes and reads
 * it), its SHA-256, its size and when it was fetched; and the last failed
 * fetch's message and time, with the number of failures since the last
 * good fetch. Times are wall-clock milliseconds as the caller reads them;
 * the cache never reads a clock.
 *
 * Writes follow cache.h: each call is atomic, its own transaction outside
 * a batch (a savepoint inside one). topo_cache_facts_put commits with
 * synchronous=FULL outside a batch: once it returns, the document survives
 * a power loss too, so labels written from it never outlive the facts they
 * came from. A failing call (bad input, a full disk, out of memory, the
 * process killed) leaves the stored document as it was. */
#ifndef TOPO_CACHE_FACTS_H
#define TOPO_CACHE_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "topo/cache.h"
#include "topo/error.h"
#include "topo/limits.h"
#include "topo/pool.h"

/* Replaces the source's document (a name of at most
 * TOPO_MAX_FACTS_SOURCE_NAME bytes) with the one of a successful fetch
 * (len bytes, 1 to TOPO_MAX_FACTS_DOCUMENT, no NUL byte), fetched at
 * fetched_at_ms (>= 0), and clears its failure count; the last failure's
 * message stays for the record. *out_changed (may be NULL) is 1 when the
 * document differs from the one stored before (or there was none), 0 when
 * it is the same bytes. TOPO_EINVALID or TOPO_ELIMIT for bad input (nothing
 * written), or the cache's errors. */
int topo_cache_facts_put(topo_cache *cache, const char *source, const char *document,
                         size_t len, int64_t fetched_at_ms, int *out_changed,
                         topo_err *err) TOPO_MUST_CHECK;

/* Records a failed fetch of the source at at_ms: its message (NULL or ""
 * read "unknown error"; cut to TOPO_MAX_FACTS_ERROR bytes at a UTF-8
 * boundary) and one more failure. The document is not touched. */
int topo_cache_facts_fail(topo_cache *cache, const char *source, const char *message,
                          int64_t at_ms, topo_err *err) TOPO_MUST_CHECK;

typedef struct topo_cache_facts {
    const char *source;
    const char *document; /* NUL-terminated */
    size_t document_len;
    const char *hash;     /* SHA-256 of the document, TOPO_SHA256_HEX_LEN hex digits */
    int64_t fetched_at_ms;
    const char *error;    /* the last failure's message, NULL when none was recorded */
    int64_t error_at_ms;  /* 0 when none */
    int64_t failures;     /* failed fetches since this document's */
} topo_cache_facts;

/* The source's last good document, copied into pool, after checking it
 * against its hash. TOPO_ENOTFOUND when no fetch of it succeeded (or it is
 * unknown); TOPO_EINVALID for a damaged row (the row is left as it is). */
int topo_cache_facts_get(topo_cache_facts *out, topo_cache *cache, const char *source,
                         topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* One source as topo_cache_facts_list reports it (no document). */
typedef struct topo_cache_facts_status {
    const char *source;
    int has_facts;        /* 0: it has only failed so far */
    const char *hash;     /* NULL without facts */
    size_t document_len;  /* 0 without facts */
    int64_t fetched_at_ms; /* 0 without facts */
    /* now_ms - fetched_at_ms (0 when the clock is behind it), -1 without
     * facts: the caller compares it with the staleness its configuration
     * allows before it warns. */
    int64_t age_ms;
    const char *error;    /* as in topo_cache_facts */
    int64_t error_at_ms;
    int64_t failures;     /* > 0: the last fetch failed */
} topo_cache_facts_status;

/* Returning non-zero stops topo_cache_facts_list, which returns that value.
 * Strings are borrowed for the call; the callback must not call back into
 * the cache. */
typedef int (*topo_cache_facts_fn)(const topo_cache_facts_status *status, void *payload);

/* Every stored source, by name, from one consistent read. */
int topo_cache_facts_list(topo_cache *cache, int64_t now_ms, topo_cache_facts_fn fn,
                          void *payload, topo_err *err) TOPO_MUST_CHECK;

/* Forgets a source (one removed from the configuration). *out_deleted (may
 * be NULL) is 1 when it was stored. */
int topo_cache_facts_delete(topo_cache *cache, const char *source, int *out_deleted,
                            topo_err *err) TOPO_MUST_CHECK;

#endif
