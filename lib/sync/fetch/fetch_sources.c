/* topo-sync's sources, one table entry each (topo/sync_source.h): its name,
 * whether it is a fabric source, whether its facts may come live from the
 * controller's objects, and its two transports: its files (fetch_files.c)
 * and HTTP (the fetch kind, its defaults and its run: fetch.c and one file
 * per source), as curl describes a protocol with one struct. A url in a
 * source's HTTP options makes it fetched; else its files are read. */
#include "fetch_internal.h"

#include <stddef.h>

#include "topo/limits.h"
#include "topo/log.h"
#include "topo/sync_source.h"

/* What each source's settings hold: its files (or, for the GPU source, a
 * file of Node objects), and its HTTP options. */
static int gpu_has_files(const topo_sync_settings *s)
{
    return s->nodes_file != NULL;
}

static int ufm_has_files(const topo_sync_settings *s)
{
    return s->ufm_systems_file != NULL;
}

static int ibnetdiscover_has_files(const topo_sync_settings *s)
{
    return s->nibnetdiscover > 0;
}

static int lldp_has_files(const topo_sync_settings *s)
{
    return s->lldp_dir != NULL;
}

static int netbox_has_files(const topo_sync_settings *s)
{
    return s->netbox_files.nfiles[TOPO_NETBOX_DEVICES] > 0;
}

static const topo_fetch_opts *ufm_http(const topo_sync_settings *s)
{
    return &s->ufm_http;
}

static const topo_fetch_opts *lldp_http(const topo_sync_settings *s)
{
    return &s->lldp_http;
}

static const topo_fetch_opts *netbox_http(const topo_sync_settings *s)
{
    return &s->netbox_http;
}

static const fetch_source sources[TOPO_SYNC_SOURCE_COUNT] = {
    [TOPO_SYNC_GPU] = {.name = "gpu",
                       .live = 1,
                       .has_files = gpu_has_files,
                       .read_files = fetch_files_gpu},
    [TOPO_SYNC_UFM] = {.name = "ufm",
                       .fabric = 1,
                       .has_files = ufm_has_files,
                       .read_files = fetch_files_ufm,
                       .http = ufm_http,
                       .fetch_kind = TOPO_FETCH_UFM,
                       .token_scheme = "Basic", /* UFM's token scheme, literally */
                       .max_response = TOPO_MAX_UFM_RESPONSE,
                       .auth_hint = "the credentials were refused",
                       .basic_auth = 1,
                       .run = fetch_ufm},
    [TOPO_SYNC_IBNETDISCOVER] = {.name = "ibnetdiscover",
                                 .fabric = 1,
                                 .has_files = ibnetdiscover_has_files,
                                 .read_files = fetch_files_ibnetdiscover},
    [TOPO_SYNC_LLDP] = {.name = "lldp",
                        .fabric = 1,
                        .has_files = lldp_has_files,
                        .read_files = fetch_files_lldp,
                        .http = lldp_http,
                        .fetch_kind = TOPO_FETCH_LLDP,
                        .token_scheme = "Bearer",
                        .max_response = TOPO_MAX_LLDP_RESPONSE,
                        .auth_hint = "the token was refused",
                        .url_is_document = 1,
                        .run = fetch_lldp},
    [TOPO_SYNC_NETBOX] = {.name = "netbox",
                          .has_files = netbox_has_files,
                          .read_files = fetch_files_netbox,
                          .http = netbox_http,
                          .fetch_kind = TOPO_FETCH_NETBOX,
                          .token_scheme = TOPO_FETCH_NETBOX_TOKEN_SCHEME_DEFAULT,
                          .max_response = TOPO_MAX_NETBOX_PAGE,
                          .auth_hint = "the token was refused (check the token file, and the "
                                       "token scheme: Token for v1 tokens, Bearer for v2 tokens "
                                       "nbt_...)",
                          .run = fetch_netbox},
};

static const fetch_source *source_of(topo_sync_source src)
{
    return (unsigned)src < TOPO_SYNC_SOURCE_COUNT ? &sources[src] : NULL;
}

const fetch_source *fetch_source_of_kind(topo_fetch_kind kind)
{
    for (size_t i = 0; i < TOPO_SYNC_SOURCE_COUNT; i++) {
        if (sources[i].run != NULL && sources[i].fetch_kind == kind)
            return &sources[i];
    }
    return NULL;
}

const char *topo_sync_source_name(topo_sync_source src)
{
    const fetch_source *def = source_of(src);
    return def ? def->name : NULL;
}

int topo_sync_source_fabric(topo_sync_source src)
{
    const fetch_source *def = source_of(src);
    return def ? def->fabric : 0;
}

/* The HTTP options of def when they make it fetched (a url), else NULL. */
static const topo_fetch_opts *fetched(const topo_sync_settings *s, const fetch_source *def)
{
    const topo_fetch_opts *http = def->http ? def->http(s) : NULL;
    return http && http->url ? http : NULL;
}

int topo_sync_source_readable(const topo_sync_settings *s, topo_sync_source src)
{
    const fetch_source *def = source_of(src);
    return def && (def->has_files(s) || fetched(s, def) != NULL);
}

int topo_sync_source_configured(const topo_sync_settings *s, topo_sync_source src)
{
    const fetch_source *def = source_of(src);
    return def && ((def->live && s->nodes_live) || topo_sync_source_readable(s, src));
}

/* A source over HTTP, through a fetcher made for this read (it reads the
 * credential files afresh). */
static int read_http(topo_facts *f, const topo_sync_settings *s, const fetch_source *def,
                     const topo_fetch_opts *http, const topo_facts *last_good,
                     topo_sync_skipped *skipped, topo_err *err)
{
    topo_fetch *fetch = NULL;
    topo_fetch_opts o = *http;
    if (def->fetch_kind == TOPO_FETCH_NETBOX)
        o.netbox = &s->netbox;
    int rc = topo_fetch_create(&fetch, def->fetch_kind, &o, err);
    if (rc == 0) {
        fetch->last_good = last_good;
        fetch->skipped = skipped;
        rc = topo_fetch_into(fetch, f, err);
    }
    if (rc == 0) {
        topo_fetch_stats st = topo_fetch_get_stats(fetch);
        topo_log(TOPO_LOG_INFO,
                 "source %s: fetched %llu objects in %llu ms: %llu requests, %llu retries, %llu "
                 "bytes",
                 def->name, (unsigned long long)st.objects,
                 (unsigned long long)st.last_duration_ms, (unsigned long long)st.requests,
                 (unsigned long long)st.retries, (unsigned long long)st.bytes);
    }
    topo_fetch_free(fetch);
    return rc;
}

int topo_sync_source_read(topo_facts *facts, const topo_sync_settings *s, topo_sync_source src,
                          topo_err *err)
{
    return topo_sync_source_read_keeping(facts, s, src, NULL, NULL, err);
}

int topo_sync_source_read_keeping(topo_facts *facts, const topo_sync_settings *s,
                                  topo_sync_source src, const topo_facts *last_good,
                                  topo_sync_skipped *skipped, topo_err *err)
{
    topo_sync_skipped none = {0};
    if (skipped == NULL)
        skipped = &none;
    *skipped = none;
    if (!topo_sync_source_readable(s, src))
        return topo_err_set(err, TOPO_EINVALID, "source %d is not configured to be read",
                            (int)src);
    const fetch_source *def = source_of(src);
    /* A url makes the source fetched rather than read from its files. */
    const topo_fetch_opts *http = fetched(s, def);
    if (http)
        return read_http(facts, s, def, http, last_good, skipped, err);
    return def->read_files(facts, s, last_good, skipped, err);
}
