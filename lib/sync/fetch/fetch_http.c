/* The requests of the HTTP sources (fetch_internal.h): one GET with the
 * messages every source gives, JSON bodies, and the origin check of links a
 * server returns, which keeps the credentials on the configured host. */
#define _POSIX_C_SOURCE 200809L /* strncasecmp */

#include "fetch_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo/codec.h"
#include "topo/json.h"
#include "topo/str.h"

/* Longest server detail quoted in a message. */
#define DETAIL_MAX 160

/* --- URLs -------------------------------------------------------------------- */

int fetch_url_split(fetch_origin *out, size_t *path_at, const char *url, topo_err *err)
{
    size_t skip;
    memset(out, 0, sizeof(*out));
    if (strncasecmp(url, "https://", 8) == 0) {
        out->https = 1;
        skip = 8;
    } else if (strncasecmp(url, "http://", 7) == 0) {
        skip = 7;
    } else {
        return topo_err_set(err, TOPO_EINVALID,
                            "\"%.200s\" does not start with https:// or http://", url);
    }
    const char *auth = url + skip;
    size_t alen = strcspn(auth, "/?#");
    if (memchr(auth, '@', alen) != NULL)
        return topo_err_set(err, TOPO_EINVALID,
                            "user information (user:password@) in a URL is refused: credentials "
                            "come from files");
    /* host, [v6 host] and an optional :port */
    size_t hlen = alen;
    const char *colon = NULL;
    if (alen > 0 && auth[0] == '[') {
        const char *close = memchr(auth, ']', alen);
        if (close == NULL)
            return topo_err_set(err, TOPO_EINVALID, "unclosed '[' in the host of \"%.200s\"", url);
        hlen = (size_t)(close - auth) + 1;
        if (hlen < alen && auth[hlen] == ':')
            colon = auth + hlen;
        else if (hlen < alen)
            return topo_err_set(err, TOPO_EINVALID, "bad host in \"%.200s\"", url);
    } else if ((colon = memchr(auth, ':', alen)) != NULL) {
        hlen = (size_t)(colon - auth);
    }
    if (hlen == 0 || hlen >= sizeof(out->host))
        return topo_err_set(err, TOPO_EINVALID, "no host, or a host too long, in \"%.200s\"", url);
    for (size_t i = 0; i < hlen; i++)
        out->host[i] = (char)tolower((unsigned char)auth[i]);
    out->port = out->https ? 443u : 80u;
    if (colon != NULL) {
        const char *p = colon + 1, *end = auth + alen;
        unsigned long port = 0;
        if (p == end)
            return topo_err_set(err, TOPO_EINVALID, "empty port in \"%.200s\"", url);
        for (; p < end; p++) {
            if (!isdigit((unsigned char)*p) || (port = port * 10 + (unsigned)(*p - '0')) > 65535)
                return topo_err_set(err, TOPO_EINVALID, "bad port in \"%.200s\"", url);
        }
        if (port == 0)
            return topo_err_set(err, TOPO_EINVALID, "bad port in \"%.200s\"", url);
        out->port = (unsigned)port;
    }
    *path_at = skip + alen;
    return 0;
}

int fetch_follow(char **path_out, const topo_fetch *f, const char *link, const char *from,
                 topo_err *err)
{
    fetch_origin o;
    size_t at = 0, plen = strlen(f->prefix);
    const char *path = link;
    *path_out = NULL;
    if (link[0] != '/') {
        topo_err local = TOPO_ERR_INIT;
        if (fetch_url_split(&o, &at, link, &local) != 0)
            return topo_err_set(err, TOPO_EINVALID, "%s: GET %s: the next link: %s", f->name, from,
                                local.text);
        if (o.https != f->origin.https || o.port != f->origin.port ||
            strcmp(o.host, f->origin.host) != 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "%s: GET %s: the next link points to %s://%s:%u, not to the "
                                "configured %s://%s:%u; not followed (the credentials would go "
                                "there)",
                                f->name, from, o.https ? "https" : "http", o.host, o.port,
                                f->origin.https ? "https" : "http", f->origin.host, f->origin.port);
        path = link + at;
    } else if (link[1] == '/') {
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: GET %s: the next link \"%.200s\" names another host; not followed",
                            f->name, from, link);
    }
    if (strncmp(path, f->prefix, plen) != 0 || path[plen] != '/')
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: GET %s: the next link's path \"%.200s\" is not under the "
                            "configured \"%s/\"; not followed",
                            f->name, from, path, f->prefix);
    if ((*path_out = topo_strdup(path + plen)) == NULL)
        return topo_err_nomem(err, f->name);
    return 0;
}

/* --- one GET ----------------------------------------------------------------- */

/* RFC 9110's reason phrase of the statuses an API answers, for messages. */
static const char *reason(long status)
{
    static const struct {
        long status;
        const char *text;
    } phrases[] = {{400, "Bad Request"},
                   {401, "Unauthorized"},
                   {403, "Forbidden"},
                   {404, "Not Found"},
                   {405, "Method Not Allowed"},
                   {408, "Request Timeout"},
                   {410, "Gone"},
                   {413, "Content Too Large"},
                   {429, "Too Many Requests"},
                   {500, "Internal Server Error"},
                   {502, "Bad Gateway"},
                   {503, "Service Unavailable"},
                   {504, "Gateway Timeout"}};
    for (size_t i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++) {
        if (phrases[i].status == status)
            return phrases[i].text;
    }
    return status >= 300 && status < 400 ? "Redirect (not followed)" : "";
}

/* The `detail` a NetBox (Django REST framework) error carries, cut and
 * cleaned for a message; "" when there is none. */
static void server_detail(char *out, size_t size, const topo_http_response *resp)
{
    out[0] = '\0';
    json_error_t jerr;
    json_t *doc = NULL;
    if (resp->body != NULL)
        if (topo_json_load(&doc, resp->body, resp->len, 0, &jerr) != 0) /* NULL: no detail */
            doc = NULL;
    const char *d = json_string_value(json_object_get(doc, "detail"));
    if (d != NULL) {
        size_t n = 0;
        for (; d[n] != '\0' && n + 1 < size && n < DETAIL_MAX; n++)
            out[n] = (unsigned char)d[n] < 0x20 ? ' ' : d[n];
        out[n] = '\0';
    }
    json_decref(doc);
}

int fetch_get(topo_fetch *f, const char *path, topo_http_response *resp, topo_err *err)
{
    topo_http_stats before, after;
    topo_http_request req = {.method = "GET", .path = path};
    char detail[DETAIL_MAX + 1], tail[48] = "";
    topo_http_get_stats(f->http, &before);
    int rc = topo_http_do(f->http, &req, resp, err);
    topo_http_get_stats(f->http, &after);
    if (rc != 0)
        return topo_err_wrap(err, "%s", f->name);
    f->stats.bytes += resp->len;
    int code = topo_http_status_code(resp->status);
    if (code == 0)
        return 0;
    uint64_t retries = after.retries - before.retries;
    if (retries > 0)
        snprintf(tail, sizeof(tail), " after %" PRIu64 " %s", retries,
                 retries == 1 ? "retry" : "retries");
    server_detail(detail, sizeof(detail), resp);
    const char *hint = code == TOPO_EUNAUTHORIZED || code == TOPO_EFORBIDDEN ? f->auth_hint : NULL;
    f->status_failure = 1;
    f->failed_status = resp->status;
    const char *phrase = reason(resp->status);
    topo_err_set(err, code, "%s: GET %s: %ld%s%s%s%s%s%s%s", f->name, path, resp->status,
                 phrase[0] ? " " : "", phrase, tail, detail[0] ? ": " : "", detail,
                 hint ? "; " : "", hint ? hint : "");
    topo_http_response_dispose(resp);
    return code;
}

int fetch_parse(json_t **out, const topo_fetch *f, const char *path, const topo_http_response *resp,
                topo_err *err)
{
    char source[FETCH_SOURCE_MAX];
    int rc = topo_codec_json_parse_source(out, resp->body, resp->len,
                                          fetch_source_text(source, f, path), err);
    return rc != 0 ? fetch_parse_failed(err, rc) : 0;
}

const char *fetch_source_text(char *buf, const topo_fetch *f, const char *path)
{
    snprintf(buf, FETCH_SOURCE_MAX, "%s: GET %s", f->name, path);
    return buf;
}

int fetch_parse_failed(topo_err *err, int rc)
{
    if (err != NULL)
        topo_err_at(err, NULL, 0, 0);
    return rc;
}
