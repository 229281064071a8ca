/* topo-sync's HTTP sources, "fetch -> facts": NetBox, UFM and an LLDP
 * collector read over HTTP (lib/net: TLS, timeouts, retries with jittered
 * backoff, a body limit, credentials from files re-read when they rotate)
 * and parsed by lib/sync/sources into a fresh topo_facts. A fetch is whole or
 * nothing: a failure at any request leaves no facts, so the caller keeps the
 * last good ones.
 *
 * NetBox: GET each list (devices, racks and sites by default; interfaces
 * and cables when asked) with `?limit=<page size>`, devices with
 * `exclude=config_context` (the rendered config context is costly and
 * unused); the filters of topo_netbox_opts go along as query parameters,
 * which NetBox takes as slugs: role= (devices, when both switch and host
 * roles are given), site= (every list; slug= on sites), tag= (devices, when
 * exactly one tag is given: NetBox ANDs several tags, the parser ORs them
 * and filters again). Each `next` link is followed only when its scheme,
 * host and port are the configured URL's and its path is under the
 * configured path (the token must not go elsewhere), at most max_pages
 * pages per list. Paths end in "/" as NetBox requires.
 *
 * UFM: GET <url>/ufmRest/resources/systems then .../links with HTTP Basic
 * (username, password file), or <url>/ufmRestV3/resources/... with a token
 * file sent as "Authorization: Basic <token>" (UFM's token scheme).
 *
 * LLDP: GET <url> (the whole URL, query included) answers one JSON object
 * mapping each host's name to its lldpd document (`lldpcli -f json` or
 * `-f json0` output, as topo/lldp.h reads): {"gpu-01": {"lldp": ...}, ...};
 * what a collector gathering the nodes' lldpcli output serves. Hosts are
 * read in name order.
 *
 * Errors name the source and the request ("netbox: GET
 * /api/dcim/devices/?limit=1000&exclude=config_context: 503 Service
 * Unavailable after 3 retries"), never a credential. One topo_fetch per thread (it owns
 * one topo_http). */
#ifndef TOPO_FETCH_H
#define TOPO_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/facts.h"
#include "topo/netbox.h"

typedef enum topo_fetch_kind {
    TOPO_FETCH_NETBOX,
    TOPO_FETCH_UFM,
    TOPO_FETCH_LLDP,
} topo_fetch_kind;

/* "netbox", "ufm", "lldp" (the facts' source names); NULL out of range. */
const char *topo_fetch_kind_name(topo_fetch_kind kind);

#define TOPO_FETCH_TIMEOUT_MS_DEFAULT 30000L
#define TOPO_FETCH_RETRIES_DEFAULT 3
#define TOPO_FETCH_BACKOFF_MS_DEFAULT 500L
#define TOPO_FETCH_NETBOX_PAGE_SIZE_DEFAULT 1000       /* NetBox's MAX_PAGE_SIZE */
#define TOPO_FETCH_NETBOX_TOKEN_SCHEME_DEFAULT "Token" /* v1 tokens; v2 (nbt_...): Bearer */

/* A NetBox list to fetch: bit (1u << kind) of topo_netbox_opts' kinds. */
#define TOPO_FETCH_NETBOX_LIST(kind) (1u << (unsigned)(kind))
#define TOPO_FETCH_NETBOX_LISTS_DEFAULT                                                            \
    (TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_DEVICES) | TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_RACKS) |     \
     TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_SITES))

/* Zero means the default named beside each field. Strings and the netbox
 * options are copied by topo_fetch_create. Credentials come from files
 * only (a URL with user:password@ is refused). */
typedef struct topo_fetch_opts {
    const char *url;     /* NetBox, UFM: the base ("https://netbox.example.com", a
                            path prefix allowed); LLDP: the document's URL */
    const char *ca_file; /* PEM bundle trusted instead of the system's, or NULL */
    int insecure_skip_verify;
    const char *token_file;    /* a token; NetBox and LLDP, or UFM's /ufmRestV3 */
    const char *token_scheme;  /* NetBox: "Token"; UFM: "Basic"; LLDP: "Bearer" */
    const char *username;      /* UFM's /ufmRest: HTTP Basic */
    const char *username_file; /* wins over username */
    const char *password_file;
    long timeout_ms;           /* per request: TOPO_FETCH_TIMEOUT_MS_DEFAULT */
    long connect_timeout_ms;   /* the HTTP client's default */
    int retries;               /* per request: TOPO_FETCH_RETRIES_DEFAULT; negative: none */
    long backoff_ms;           /* first retry's delay (doubling, jittered):
                                  TOPO_FETCH_BACKOFF_MS_DEFAULT */
    size_t max_response;       /* per response: TOPO_MAX_NETBOX_PAGE, TOPO_MAX_UFM_RESPONSE,
                                  TOPO_MAX_LLDP_RESPONSE */
    long credential_reload_ms; /* the HTTP client's default */
    /* NetBox only. */
    const topo_netbox_opts *netbox; /* the parser's filters, also sent as query parameters */
    unsigned netbox_lists;          /* TOPO_FETCH_NETBOX_LIST bits: TOPO_FETCH_NETBOX_LISTS_DEFAULT;
                                       devices are always fetched */
    int page_size;                  /* limit=: TOPO_FETCH_NETBOX_PAGE_SIZE_DEFAULT */
    int max_pages;                  /* per list: TOPO_MAX_NETBOX_PAGES */
} topo_fetch_opts;

/* Why a fetch failed, for a metric's label. */
#define TOPO_FETCH_FAILURE_MAP(XX)                                                                 \
    XX(CONNECT, "connect") /* no connection, or the certificate was not trusted */                 \
    XX(TIMEOUT, "timeout") /* a request timed out (after its retries) */                           \
    XX(AUTH, "auth")       /* 401 or 403 */                                                        \
    XX(STATUS, "status")   /* another non-2xx status (after retries for 5xx and 429) */            \
    XX(LIMIT, "limit")     /* a body over max_response, more than max_pages pages */               \
    XX(INVALID, "invalid") /* a payload that does not parse, a refused next link */                \
    XX(OTHER, "other")     /* out of memory, an unexpected client error */

typedef enum topo_fetch_failure {
#define TOPO_XX_FETCH_FAILURE(name, text) TOPO_FETCH_FAIL_##name,
    TOPO_FETCH_FAILURE_MAP(TOPO_XX_FETCH_FAILURE)
#undef TOPO_XX_FETCH_FAILURE
        TOPO_FETCH_FAIL_COUNT
} topo_fetch_failure;

/* "connect", "timeout", ...; NULL out of range. */
const char *topo_fetch_failure_name(topo_fetch_failure failure);

/* A source's counters, for metrics. */
typedef struct topo_fetch_stats {
    uint64_t fetches;                         /* topo_fetch_facts calls */
    uint64_t failures[TOPO_FETCH_FAIL_COUNT]; /* failed fetches by why */
    int64_t last_success_unix;                /* wall clock (s) of the last success; 0: none */
    uint64_t last_duration_ms;                /* of the last fetch, success or not */
    uint64_t objects;                         /* records the last successful fetch read
                                                 (NetBox results, UFM systems and links,
                                                 LLDP hosts) */
    uint64_t bytes;                           /* response bytes, every fetch */
    uint64_t requests;                        /* HTTP attempts, retries included */
    uint64_t retries;                         /* HTTP retries */
} topo_fetch_stats;

typedef struct topo_fetch topo_fetch;

/* The options' checks that need no file and no network (the URL, which
 * credentials go together, the NetBox lists): what a configuration reader
 * reports at its own position. 0 or TOPO_EINVALID, the message starting
 * with the kind's name ("ufm: credentials required: ..."). */
int topo_fetch_check(topo_fetch_kind kind, const topo_fetch_opts *opts,
                     topo_err *err) TOPO_MUST_CHECK;

/* Checks the options (topo_fetch_check) and makes the HTTP client (reading the credential
 * files once). 0; TOPO_EINVALID naming the field (a bad URL, credentials
 * the kind does not take, UFM without credentials); a credential file's
 * error; TOPO_ENOMEM. Messages start with the kind's name. */
int topo_fetch_create(topo_fetch **out, topo_fetch_kind kind, const topo_fetch_opts *opts,
                      topo_err *err) TOPO_MUST_CHECK;
void topo_fetch_free(topo_fetch *fetch);

/* Fetches the source whole into new facts (source name: the kind's name);
 * *out is set only on success (free it with topo_facts_free). Codes:
 * TOPO_ECONNECT, TOPO_ETIMEOUT, TOPO_EUNAUTHORIZED, TOPO_EFORBIDDEN,
 * TOPO_ESERVER or the code of another status (topo_http_status_code),
 * TOPO_ELIMIT, TOPO_EINVALID, TOPO_ENOMEM. */
int topo_fetch_facts(topo_facts **out, topo_fetch *fetch, topo_err *err) TOPO_MUST_CHECK;

/* The same into facts the caller made (empty; any source name), for a
 * caller that keeps facts of its own making: on error they hold part of
 * the source and must be discarded. The stats count it as a fetch. */
int topo_fetch_into(topo_fetch *fetch, topo_facts *facts, topo_err *err) TOPO_MUST_CHECK;

topo_fetch_stats topo_fetch_get_stats(const topo_fetch *fetch);

#endif
