/* The HTTP sources' common part (include/topo/fetch.h): options checked per
 * kind (each kind's entry in the sources' table, fetch_sources.c), the HTTP
 * client with the kind's credentials, one fetch timed and counted into
 * fresh facts, the stats. The requests themselves are fetch_http.c's; each
 * source's sequence is in its own file. */
#define _POSIX_C_SOURCE 200809L

#include "fetch_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/clock.h"
#include "topo/limits.h"
#include "topo/log.h"

static const char *const failure_names[] = {
#define TOPO_XX_FETCH_FAILURE_NAME(name, text) text,
    TOPO_FETCH_FAILURE_MAP(TOPO_XX_FETCH_FAILURE_NAME)
#undef TOPO_XX_FETCH_FAILURE_NAME
};

const char *topo_fetch_kind_name(topo_fetch_kind kind)
{
    const fetch_source *src = fetch_source_of_kind(kind);
    return src ? src->name : NULL;
}

const char *topo_fetch_failure_name(topo_fetch_failure failure)
{
    return (unsigned)failure < TOPO_FETCH_FAIL_COUNT ? failure_names[failure] : NULL;
}

/* --- options ----------------------------------------------------------------- */

/* Which credentials each kind takes; a message naming the wrong one. */
static int check_credentials(const topo_fetch_opts *o, const fetch_source *src, topo_err *err)
{
    const char *name = src->name;
    int basic = o->username != NULL || o->username_file != NULL || o->password_file != NULL;
    int token = o->token_file != NULL;
    if (basic && !src->basic_auth)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: a username and password are UFM's; %s takes a token file", name,
                            name);
    if (basic && token)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: a token file, or a username and a password file, not both", name);
    if (basic && o->password_file == NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s: a username needs a password file", name);
    if (basic && o->username == NULL && o->username_file == NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s: a password file needs a username", name);
    if (src->basic_auth && !basic && !token)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: credentials required: a username and a password file "
                            "(/ufmRest), or a token file (/ufmRestV3)",
                            name);
    if (o->token_scheme != NULL && !token)
        return topo_err_set(err, TOPO_EINVALID, "%s: a token scheme without a token file", name);
    return 0;
}

/* The URL alone: its scheme and authority, and no query for a base. */
static int check_url(const fetch_source *src, const char *url, topo_err *err)
{
    const char *name = src->name;
    fetch_origin o;
    size_t at = 0;
    if (url == NULL || url[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: url: required", name);
    if (fetch_url_split(&o, &at, url, err) != 0)
        return topo_err_wrap(err, "%s: url", name);
    if (!src->url_is_document && strpbrk(url + at, "?#") != NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: url: the base URL takes no query or fragment (\"%.200s\")", name,
                            url);
    if (src->url_is_document && strchr(url + at, '#') != NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s: url: a fragment ('#') is not sent", name);
    return 0;
}

int topo_fetch_check(topo_fetch_kind kind, const topo_fetch_opts *opts, topo_err *err)
{
    const fetch_source *src = fetch_source_of_kind(kind);
    if (src == NULL || opts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "fetch: unknown kind or no options");
    int rc = check_url(src, opts->url, err);
    if (rc == 0)
        rc = check_credentials(opts, src, err);
    if (rc == 0 && opts->netbox_lists >= TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_CABLES + 1))
        rc = topo_err_set(err, TOPO_EINVALID, "netbox: unknown list in netbox_lists");
    return rc;
}

/* A copy in the pool (the caller checked every entry is there); NULL when
 * out of memory. */
static const char **copy_list(topo_pool *pool, const char *const *in, size_t n)
{
    const char **out = topo_pool_calloc(pool, n ? n : 1, sizeof(*out));
    for (size_t i = 0; out != NULL && i < n; i++) {
        if ((out[i] = topo_pool_strdup(pool, in[i])) == NULL)
            return NULL;
    }
    return out;
}

static int has_null(const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (list == NULL || list[i] == NULL)
            return 1;
    }
    return 0;
}

/* The NetBox filters, kept for every fetch (each makes its own parser,
 * which refuses an empty name). */
static int copy_netbox(topo_fetch *f, const topo_fetch_opts *o, topo_err *err)
{
    topo_netbox_opts *d = &f->netbox;
    if (o->netbox == NULL)
        return 0;
    const topo_netbox_opts *s = o->netbox;
    if (has_null(s->switch_roles, s->nswitch_roles) || has_null(s->host_roles, s->nhost_roles) ||
        has_null(s->sites, s->nsites) || has_null(s->tags, s->ntags))
        return topo_err_set(err, TOPO_EINVALID, "netbox: a missing filter name");
    *d = *s;
    d->switch_roles = copy_list(f->pool, s->switch_roles, s->nswitch_roles);
    d->host_roles = copy_list(f->pool, s->host_roles, s->nhost_roles);
    d->sites = copy_list(f->pool, s->sites, s->nsites);
    d->tags = copy_list(f->pool, s->tags, s->ntags);
    d->nvlink_field = s->nvlink_field ? topo_pool_strdup(f->pool, s->nvlink_field) : NULL;
    if (!d->switch_roles || !d->host_roles || !d->sites || !d->tags ||
        (s->nvlink_field && !d->nvlink_field))
        return topo_err_nomem(err, "netbox");
    return 0;
}

/* The URL (checked) into base, prefix and (LLDP) target. */
static int split_url(topo_fetch *f, const char *url, topo_err *err)
{
    size_t at = 0;
    if (fetch_url_split(&f->origin, &at, url, err) != 0)
        return topo_err_wrap(err, "%s: url", f->name);
    const char *path = url + at;
    if (f->src->url_is_document) {
        f->base = topo_pool_strndup(f->pool, url, at);
        f->prefix = "";
        f->target = topo_pool_strdup(f->pool, *path ? path : "/");
        return f->base && f->target ? 0 : topo_err_nomem(err, f->name);
    }
    size_t n = strlen(url);
    while (n > at && url[n - 1] == '/')
        n--;
    f->base = topo_pool_strndup(f->pool, url, n);
    f->prefix = topo_pool_strndup(f->pool, path, n - at);
    return f->base && f->prefix ? 0 : topo_err_nomem(err, f->name);
}

static void settings(topo_fetch *f, const topo_fetch_opts *o)
{
    f->page_size = o->page_size > 0 ? o->page_size : TOPO_FETCH_NETBOX_PAGE_SIZE_DEFAULT;
    f->max_pages = o->max_pages > 0 ? o->max_pages : (int)TOPO_MAX_NETBOX_PAGES;
    f->max_body = o->max_response > 0 ? o->max_response : f->src->max_response;
    f->netbox_lists = (o->netbox_lists ? o->netbox_lists : TOPO_FETCH_NETBOX_LISTS_DEFAULT) |
                      TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_DEVICES);
    if (f->src->basic_auth)
        f->ufm_api = o->token_file != NULL ? "/ufmRestV3" : "/ufmRest";
    f->auth_hint = f->src->auth_hint;
}

static int make_http(topo_fetch *f, const topo_fetch_opts *o, topo_err *err)
{
    topo_http_opts h = {
        .base_url = f->base,
        .ca_file = o->ca_file,
        .insecure_skip_verify = o->insecure_skip_verify,
        .token_file = o->token_file,
        .token_scheme =
            o->token_file ? (o->token_scheme ? o->token_scheme : f->src->token_scheme) : NULL,
        .username = o->username,
        .username_file = o->username_file,
        .password_file = o->password_file,
        .token_reload_ms = o->credential_reload_ms,
        .timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : TOPO_FETCH_TIMEOUT_MS_DEFAULT,
        .connect_timeout_ms = o->connect_timeout_ms,
        .max_body = f->max_body,
        .qps = -1, /* a fetch is a handful of requests; the server paces itself */
        .max_retries = o->retries != 0 ? o->retries : TOPO_FETCH_RETRIES_DEFAULT,
        .backoff_base_ms = o->backoff_ms > 0 ? o->backoff_ms : TOPO_FETCH_BACKOFF_MS_DEFAULT,
    };
    if (topo_http_create(&f->http, &h, err) != 0)
        return topo_err_wrap(err, "%s", f->name);
    return 0;
}

int topo_fetch_create(topo_fetch **out, topo_fetch_kind kind, const topo_fetch_opts *opts,
                      topo_err *err)
{
    int rc = 0;
    topo_fetch *f = NULL;
    const char *name = topo_fetch_kind_name(kind);
    *out = NULL;
    if ((rc = topo_fetch_check(kind, opts, err)) != 0)
        return rc;
    if ((f = calloc(1, sizeof(*f))) == NULL || (f->pool = topo_pool_create()) == NULL) {
        rc = topo_err_nomem(err, name);
        goto cleanup;
    }
    f->src = fetch_source_of_kind(kind);
    f->name = name;
    settings(f, opts);
    if ((rc = split_url(f, opts->url, err)) != 0 ||
        (kind == TOPO_FETCH_NETBOX && (rc = copy_netbox(f, opts, err)) != 0) ||
        (rc = make_http(f, opts, err)) != 0)
        goto cleanup;
    *out = f;
    f = NULL;
cleanup:
    topo_fetch_free(f);
    return rc;
}

void topo_fetch_free(topo_fetch *fetch)
{
    if (fetch == NULL)
        return;
    topo_http_free(fetch->http);
    topo_pool_free(fetch->pool);
    free(fetch);
}

topo_fetch_stats topo_fetch_get_stats(const topo_fetch *fetch)
{
    topo_fetch_stats s = fetch->stats;
    topo_http_stats h;
    topo_http_get_stats(fetch->http, &h);
    s.requests = h.requests;
    s.retries = h.retries;
    return s;
}

/* --- one fetch ---------------------------------------------------------------- */

static topo_fetch_failure failure_of(const topo_fetch *f, int rc)
{
    if (f->status_failure)
        return f->failed_status == 401 || f->failed_status == 403 ? TOPO_FETCH_FAIL_AUTH
                                                                  : TOPO_FETCH_FAIL_STATUS;
    switch (rc) {
    case TOPO_ECONNECT:
        return TOPO_FETCH_FAIL_CONNECT;
    case TOPO_ETIMEOUT:
        return TOPO_FETCH_FAIL_TIMEOUT;
    case TOPO_ELIMIT:
        return TOPO_FETCH_FAIL_LIMIT;
    case TOPO_EINVALID:
        return TOPO_FETCH_FAIL_INVALID;
    default:
        return TOPO_FETCH_FAIL_OTHER;
    }
}

int topo_fetch_into(topo_fetch *fetch, topo_facts *facts, topo_err *err)
{
    uint64_t objects = 0;
    int64_t t0 = topo_clock_ms();
    int rc = 0;
    if (fetch == NULL || facts == NULL)
        return topo_err_set(err, TOPO_EINVALID, "fetch: NULL argument");
    fetch->stats.fetches++;
    fetch->status_failure = 0;
    fetch->failed_status = 0;
    rc = fetch->src->run(fetch, facts, &objects, err);
    fetch->stats.last_duration_ms = (uint64_t)(topo_clock_ms() - t0);
    if (rc != 0) {
        fetch->stats.failures[failure_of(fetch, rc)]++;
        /* a real payload past the default limit is raised by the config,
         * which the HTTP client's message cannot name */
        if (rc == TOPO_ELIMIT && err != NULL && strstr(err->text, "response body exceeds") &&
            strlen(err->text) + 64 < sizeof(err->text))
            strcat(err->text, " (the source's maxResponseBytes raises it)");
        return rc;
    }
    fetch->stats.objects = objects;
    fetch->stats.last_success_unix = (int64_t)time(NULL);
    return 0;
}

int topo_fetch_facts(topo_facts **out, topo_fetch *fetch, topo_err *err)
{
    topo_facts *facts = NULL;
    if (out == NULL || fetch == NULL)
        return topo_err_set(err, TOPO_EINVALID, "fetch: NULL argument");
    int rc = topo_facts_create(&facts, fetch->name, err);
    if (rc == 0)
        rc = topo_fetch_into(fetch, facts, err);
    if (rc != 0) {
        topo_facts_free(facts);
        return rc;
    }
    *out = facts;
    return 0;
}
