/* What the files of lib/sync/fetch share: the sources' table
 * (fetch_sources.c), the file transport (fetch_files.c), and for HTTP the
 * fetcher (fetch.c), one GET with its errors and counters, and the check of
 * a link the server returned. One file per source implements its fetch
 * (fetch_netbox.c, fetch_ufm.c, fetch_lldp.c). */
#ifndef TOPO_FETCH_INTERNAL_H
#define TOPO_FETCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/fetch.h"
#include "topo/http.h"
#include "topo/pool.h"
#include "topo/strmap.h"
#include "topo/sync_source.h"
#include "topo/syncconfig.h"

/* Scheme, host and port of a URL, normalised for comparison (lower case,
 * the scheme's default port made explicit). */
typedef struct fetch_origin {
    int https;
    char host[256];
    unsigned port;
} fetch_origin;

/* One topo-sync source, one entry (fetch_sources.c holds the table, one
 * entry per topo_sync_source), as curl describes a protocol with one
 * struct: its name, whether it is a fabric source, whether its facts may
 * come live from the controller's objects, and its transports: its files
 * (fetch_files.c), and HTTP (the fetch kind, everything that differs
 * between NetBox, UFM and LLDP but the requests themselves, and the run, in
 * the source's own file). The pipeline adds nothing per source. */
typedef struct fetch_source {
    const char *name; /* "netbox": the facts' source name, config's, each message's prefix */
    int fabric;       /* its hosts reach the plan through a fabric (leaf and spine) */
    int live;         /* GPU: the controller's Node objects when settings->nodes_live */
    /* Files: whether the settings give them, and their read (whole). */
    int (*has_files)(const topo_sync_settings *s);
    /* A file of one host that cannot be read may be skipped (counted in
     * *skipped), its host keeping what last_good (may be NULL) held. */
    int (*read_files)(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                      topo_sync_skipped *skipped, topo_err *err);
    /* HTTP (run NULL: files only); the transport taken when the options give a url. */
    const topo_fetch_opts *(*http)(const topo_sync_settings *s);
    topo_fetch_kind fetch_kind;
    const char *token_scheme; /* a token file's scheme when the options name none */
    size_t max_response;      /* a response's limit when the options give none */
    const char *auth_hint;    /* appended to a 401/403's message */
    int basic_auth;           /* UFM: a username and password file, or a token; one required */
    int url_is_document;      /* LLDP: the URL names the document (a query allowed), not a base */
    /* Fills facts, counting the records read into *objects. */
    int (*run)(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err);
} fetch_source;

/* The entry fetched as kind; NULL out of range. */
const fetch_source *fetch_source_of_kind(topo_fetch_kind kind);

/* Hosts skipped in one read whose warnings are logged; the others at the
 * debug level (an answer of 100,000 refused hosts is not 100,000 warnings;
 * the read's line counts them all). */
#define FETCH_SKIP_WARNINGS 20

/* One host's document skipped rather than failing every host's (an LLDP
 * host file, a member of an LLDP collector's answer), the nth (from 0) of
 * the read: why (err's text, then cleared) logged, *counter (may be NULL)
 * counted, the host keeping what last_good (may be NULL) held for it. 0,
 * or an error copying it. */
int fetch_skip_host(topo_facts *f, const topo_facts *last_good, size_t *counter, size_t nth,
                    const char *host, topo_err *err);

/* The file transport's reads (fetch_files.c), one per source. */
int fetch_files_gpu(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                    topo_sync_skipped *skipped, topo_err *err);
int fetch_files_ufm(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                    topo_sync_skipped *skipped, topo_err *err);
int fetch_files_ibnetdiscover(topo_facts *f, const topo_sync_settings *s,
                              const topo_facts *last_good, topo_sync_skipped *skipped,
                              topo_err *err);
int fetch_files_lldp(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                     topo_sync_skipped *skipped, topo_err *err);
int fetch_files_netbox(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                       topo_sync_skipped *skipped, topo_err *err);

struct topo_fetch {
    const fetch_source *src;
    const char *name; /* src->name */
    topo_http *http;
    topo_pool *pool; /* the copies below */
    fetch_origin origin;
    const char *base;      /* the URL the HTTP client prefixes (no trailing '/') */
    const char *prefix;    /* its path ("" or "/netbox"): followed links must be under it */
    const char *target;    /* LLDP: the document's path and query under base */
    const char *ufm_api;   /* UFM: "/ufmRest" (Basic) or "/ufmRestV3" (token) */
    const char *auth_hint; /* appended to a 401/403's message */
    topo_netbox_opts netbox;
    unsigned netbox_lists;
    int page_size;
    int max_pages;
    size_t max_body; /* a response's limit: the options', else the source's */
    topo_fetch_stats stats;
    int status_failure; /* the current fetch failed on a status (fetch_get) */
    /* LLDP: a host whose document is refused keeps what last_good (may be
     * NULL) held; counted in skipped (may be NULL). */
    const topo_facts *last_good;
    topo_sync_skipped *skipped;
    long failed_status;
};

/* GET path (relative to f->base; already escaped) into *resp (dispose it).
 * A non-2xx status is an error "<name>: GET <path>: 503 Service
 * Unavailable after 3 retries[: detail][; hint]"; transport errors are lib/net's, prefixed with
 * the source's name. Counts the response bytes. */
int fetch_get(topo_fetch *f, const char *path, topo_http_response *resp, topo_err *err);

/* A response body as JSON; errors "<name>: GET <path>:<line>:<column>: ...". */
int fetch_parse(json_t **out, const topo_fetch *f, const char *path, const topo_http_response *resp,
                topo_err *err);

/* "<name>: GET <path>" into buf (FETCH_SOURCE_MAX bytes), the source a
 * response's parse names in its messages; returns buf. */
#define FETCH_SOURCE_MAX TOPO_ERR_TEXT_MAX
const char *fetch_source_text(char *buf, const topo_fetch *f, const char *path);

/* After a parse of a response named by fetch_source_text failed: the
 * position err recorded names that buffer, a string of the caller's frame;
 * only the message is kept. Returns rc. */
int fetch_parse_failed(topo_err *err, int rc);

/* A link the server gave (NetBox's `next`): absolute, or path-absolute.
 * 0 with *path_out (malloc'd) the path and query relative to f->base when
 * it has f's scheme, host and port and lies under f's path prefix;
 * TOPO_EINVALID otherwise, naming where it pointed ("the token would go
 * there"). */
int fetch_follow(char **path_out, const topo_fetch *f, const char *link, const char *from,
                 topo_err *err);

/* Splits an http(s) URL: its origin, and the offset of its path (the
 * first '/', '?' or '#' after the authority, or its end). TOPO_EINVALID
 * for another scheme, user information ("user:password@"), an empty host,
 * a bad port. */
int fetch_url_split(fetch_origin *out, size_t *path_at, const char *url, topo_err *err);

/* The pages of one list read so far (fetch_pages.c), for the checks of
 * each `next` link (not to a page already read, not past what the first
 * page's `count` allows) and of the whole list (its results add up to
 * that count). */
typedef struct fetch_pages {
    topo_pool *pool;   /* the paths read */
    topo_strmap *read; /* path -> its page's number, from 1 */
    size_t n;          /* pages read */
    long long count;   /* the first page's count */
    size_t per_page;   /* its results (at least 1) */
    uint64_t most;     /* pages count allows: count / per_page + 1; 0: no count, no bound */
    uint64_t results;  /* the results of every page read */
} fetch_pages;

int fetch_pages_init(fetch_pages *p, topo_err *err);
void fetch_pages_dispose(fetch_pages *p);

/* A page read from path (what it held: the first page's count and results
 * set the bound). 0 or TOPO_ENOMEM. */
int fetch_pages_read(fetch_pages *p, const char *path, const topo_netbox_page *page,
                     topo_err *err);

/* The path of a `next` link (fetch_follow's, so normalised to the path
 * and query under the base) that came with the last page read:
 * TOPO_EINVALID "<name>: GET <next>: next link repeats a page already read
 * (a loop): page 1 of the list, linked from page 3", or "...: next link
 * goes past the 5 pages the list's count allows (count 12, 3 results a
 * page); not followed". */
int fetch_pages_check_next(const fetch_pages *p, const char *name, const char *next, topo_err *err);

/* After the last page of the list at list_path: TOPO_EINVALID "<name>: GET
 * <list_path>: count: the first page says 12 objects, the 3 pages held
 * 11; ..." when the pages' results do not add up to the first page's
 * count (the list changed while it was paged, or a proxy lost records: its
 * facts are not the list's). No count, no check. */
int fetch_pages_check_count(const fetch_pages *p, const char *name, const char *list_path,
                            topo_err *err);

/* The sources' runs (fetch_source.run). */
int fetch_netbox(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err);
int fetch_ufm(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err);
int fetch_lldp(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err);

#endif
