/* The Kubernetes API verbs over topo_http: one request builder (escaped path
 * and query), thin wrappers per verb, and the watch stream; what the server
 * answers is decoded in k8s_decode.c (Status → topo_code + message, watch
 * lines, list pages). */
#define _POSIX_C_SOURCE 200809L

#include "topo/k8s.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo/codec.h"
#include "k8s_decode.h"
#include "topo/buf.h"
#include "topo/clock.h"
#include "topo/http.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/log.h"

struct topo_k8s {
    topo_http *http;
    char *namespace_name;
    long timeout_ms; /* per-request override; 0: the HTTP client's default */
    uint64_t rng;    /* watch timeouts */
    int metadata_refused; /* a metadata-only answer was refused (406): full objects since */
};

const topo_k8s_resource topo_k8s_nodes = {"", "v1", "nodes", "Node", 0};
const topo_k8s_resource topo_k8s_pods = {"", "v1", "pods", "Pod", 1};
const topo_k8s_resource topo_k8s_jobs = {"batch", "v1", "jobs", "Job", 1};
const topo_k8s_resource topo_k8s_leases = {"coordination.k8s.io", "v1", "leases", "Lease", 1};
const topo_k8s_resource topo_k8s_events = {"", "v1", "events", "Event", 1};
const topo_k8s_resource topo_k8s_configmaps = {"", "v1", "configmaps", "ConfigMap", 1};

/* ------------------------------------------------------------------ client */

int topo_k8s_create(topo_k8s **out, const topo_k8s_config *cfg, const topo_k8s_opts *opts,
                    topo_err *err)
{
    int error = 0;
    topo_k8s *k = NULL;
    topo_http_opts ho = {0};

    *out = NULL;
    if (cfg == NULL || cfg->server == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: no API server in the configuration");
    if ((k = calloc(1, sizeof(*k))) == NULL)
        goto oom;
    ho.base_url = cfg->server;
    ho.ca_file = cfg->ca_file;
    ho.ca_data = cfg->ca_data;
    ho.client_cert_file = cfg->client_cert_file;
    ho.client_cert_data = cfg->client_cert_data;
    ho.client_key_file = cfg->client_key_file;
    ho.client_key_data = cfg->client_key_data;
    ho.insecure_skip_verify = cfg->insecure_skip_verify;
    ho.token = cfg->token;
    ho.token_file = cfg->token_file;
    ho.exec = cfg->exec;
    ho.max_body = TOPO_MAX_K8S_RESPONSE;
    if (opts != NULL) {
        /* The HTTP client gives every field left 0 its default. */
        ho.qps = opts->qps;
        ho.burst = opts->burst;
        ho.timeout_ms = opts->timeout_ms;
        ho.max_retries = opts->max_retries;
        ho.backoff_base_ms = opts->backoff_base_ms;
        ho.backoff_max_ms = opts->backoff_max_ms;
        ho.token_reload_ms = opts->token_reload_ms;
        ho.user_agent = opts->user_agent;
    }
    if ((error = topo_http_create(&k->http, &ho, err)) < 0) {
        topo_err_wrap(err, "kubernetes %s", cfg->source != NULL ? cfg->source : cfg->server);
        goto cleanup;
    }
    if (cfg->namespace_name != NULL &&
        (k->namespace_name = strdup(cfg->namespace_name)) == NULL)
        goto oom;
    k->rng = (uint64_t)topo_clock_ns() ^ (uint64_t)getpid();
    *out = k;
    k = NULL;
    goto cleanup;
oom:
    error = topo_err_set(err, TOPO_ENOMEM, "kubernetes: out of memory");
cleanup:
    topo_k8s_free(k);
    return error;
}

void topo_k8s_free(topo_k8s *k)
{
    if (k == NULL)
        return;
    topo_http_free(k->http);
    free(k->namespace_name);
    free(k);
}

const char *topo_k8s_namespace(const topo_k8s *k)
{
    return k != NULL ? k->namespace_name : NULL;
}

void topo_k8s_get_http_stats(const topo_k8s *k, topo_http_stats *out)
{
    topo_http_get_stats(k != NULL ? k->http : NULL, out);
}

void topo_k8s_set_timeout(topo_k8s *k, long timeout_ms)
{
    if (k != NULL)
        k->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
}

const char *topo_k8s_event_name(topo_k8s_event_type type)
{
    switch (type) {
    case TOPO_K8S_ADDED:
        return "ADDED";
    case TOPO_K8S_MODIFIED:
        return "MODIFIED";
    case TOPO_K8S_DELETED:
        return "DELETED";
    case TOPO_K8S_BOOKMARK:
        return "BOOKMARK";
    }
    return "UNKNOWN";
}

/* ------------------------------------------------------------------ paths */

/* A request path under construction (a bounded topo_buf: the first failure
 * sticks), and whether its query has begun. */
typedef struct sbuf {
    topo_buf b;
    int query; /* a '?' was written */
} sbuf;

#define SBUF_INIT {TOPO_BUF_INIT(TOPO_K8S_MAX_PATH - 1), 0}

static void sb_puts(sbuf *b, const char *s)
{
    (void)topo_buf_puts(&b->b, s);
}

static void sb_escaped(sbuf *b, const char *s)
{
    /* topo_http_escape writes at most `size` bytes and returns the full
     * length: reserve that much, then escape into the buffer. */
    size_t n = topo_http_escape(NULL, 0, s);
    if (topo_buf_reserve(&b->b, n) != 0)
        return;
    topo_http_escape(b->b.ptr + b->b.len, n + 1, s);
    topo_buf_grown(&b->b, n);
}

/* Appends "?key=value" or "&key=value" (value escaped); NULL value: nothing. */
static void sb_param(sbuf *b, const char *key, const char *value)
{
    if (value == NULL)
        return;
    sb_puts(b, b->query ? "&" : "?");
    b->query = 1;
    sb_puts(b, key);
    sb_puts(b, "=");
    sb_escaped(b, value);
}

static int sb_finish(sbuf *b, char **out, const char *what, topo_err *err)
{
    int code = b->b.error;
    if ((*out = topo_buf_take(&b->b, NULL)) == NULL) {
        code = code ? code : TOPO_ENOMEM;
        return code == TOPO_ENOMEM
                   ? topo_err_set(err, code, "%s: out of memory", what)
                   : topo_err_set(err, code, "%s: the request path is longer than %u bytes", what,
                                  TOPO_K8S_MAX_PATH);
    }
    return 0;
}

static int build_path(sbuf *b, const topo_k8s_resource *res, const char *ns, const char *name,
                      topo_err *err)
{
    if (res == NULL || res->plural == NULL || res->version == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: no resource type");
    if (ns != NULL && !res->namespaced)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: %s are not namespaced",
                            res->plural);
    if (ns != NULL && ns[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: empty namespace");
    if (name != NULL && name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: empty %s name", res->kind);
    if (name != NULL && res->namespaced && ns == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: %s \"%s\" needs a namespace",
                            res->kind, name);
    if (res->group == NULL || res->group[0] == '\0') {
        sb_puts(b, "/api/");
    } else {
        sb_puts(b, "/apis/");
        sb_escaped(b, res->group);
        sb_puts(b, "/");
    }
    sb_escaped(b, res->version);
    if (ns != NULL) {
        sb_puts(b, "/namespaces/");
        sb_escaped(b, ns);
    }
    sb_puts(b, "/");
    sb_escaped(b, res->plural);
    if (name != NULL) {
        sb_puts(b, "/");
        sb_escaped(b, name);
    }
    return 0;
}

int topo_k8s_path(char **out, const topo_k8s_resource *res, const char *ns, const char *name,
                  topo_err *err)
{
    sbuf b = SBUF_INIT;
    int error;
    *out = NULL;
    if ((error = build_path(&b, res, ns, name, err)) < 0) {
        topo_buf_dispose(&b.b);
        return error;
    }
    return sb_finish(&b, out, "kubernetes", err);
}

/* ------------------------------------------------------------------ one request */

/* "GET /api/v1/nodes?limit=500", cut to fit. */
static void describe(char *what, size_t size, const char *method, const char *path)
{
    snprintf(what, size, "%s %s", method, path);
}

/* One request; accept NULL: application/json. *status_out (may be NULL)
 * gets the HTTP status, 0 when none arrived. */
static int k8s_request(topo_k8s *k, const char *method, const char *path, const char *ctype,
                       const char *accept, const json_t *body, int resend_safe, json_t **out,
                       long *status_out, topo_err *err)
{
    int error = 0;
    char *text = NULL;
    json_t *obj = NULL;
    topo_http_response resp = {0};
    char what[256];

    if (out != NULL)
        *out = NULL;
    describe(what, sizeof(what), method, path);
    if (body != NULL && (text = topo_json_dumps(body, JSON_COMPACT)) == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "%s: cannot encode the body", what);
        goto cleanup;
    }
    topo_http_request req = {method,
                             path,
                             text != NULL ? ctype : NULL,
                             text,
                             text != NULL ? strlen(text) : 0,
                             k->timeout_ms,
                             NULL,
                             accept,
                             resend_safe};
    error = topo_http_do(k->http, &req, &resp, err);
    if (status_out != NULL)
        *status_out = error < 0 ? 0 : resp.status;
    if (error < 0) {
        topo_err_wrap(err, "%s", what);
        goto cleanup;
    }
    if (resp.status < 200 || resp.status >= 300) {
        error = topo_k8s_status_error(resp.status, resp.body, resp.len, what, err);
        goto cleanup;
    }
    if (out != NULL) {
        if ((error = topo_codec_json_parse(&obj, resp.body != NULL ? resp.body : "", resp.len,
                                           "response", err)) < 0) {
            topo_err_wrap(err, "%s", what);
            if (err != NULL)
                err->source = NULL;
            goto cleanup;
        }
        if (!json_is_object(obj)) {
            error = topo_err_set(err, TOPO_EINVALID, "%s: the response is not a JSON object",
                                 what);
            goto cleanup;
        }
        *out = obj;
        obj = NULL;
    }
cleanup:
    json_decref(obj);
    free(text);
    topo_http_response_dispose(&resp);
    return error;
}

static int k8s_call(topo_k8s *k, const char *method, const char *path, const char *ctype,
                    const json_t *body, json_t **out, topo_err *err)
{
    return k8s_request(k, method, path, ctype, NULL, body, 0, out, NULL, err);
}

int topo_k8s_metadata_refused(const topo_k8s *k)
{
    return k != NULL && k->metadata_refused;
}

/* After a 406 to a metadata-only Accept: full objects from now on, said
 * once per client (kube-apiserver's 406 is its media type negotiation
 * failing: an aggregated API server, or one older than 1.15). */
static void metadata_refused(topo_k8s *k, const char *what, const topo_err *e)
{
    k->metadata_refused = 1;
    if (e != NULL && e->text[0] != '\0')
        what = e->text; /* "<what>: 406 NotAcceptable: <the server's message>" */
    topo_log(TOPO_LOG_WARN,
             "%s: the API server refused metadata-only objects; asking for "
             "full objects from now on",
             what);
}

/* A GET whose answer may be metadata-only (accept, unless this client was
 * refused one): on 406, the same GET for full objects. */
static int k8s_get_maybe_metadata(topo_k8s *k, const char *path, const char *accept, json_t **out,
                                  topo_err *err)
{
    long status = 0;
    if (accept == NULL || k->metadata_refused)
        return k8s_call(k, "GET", path, NULL, NULL, out, err);
    int error = k8s_request(k, "GET", path, NULL, accept, NULL, 0, out, &status, err);
    if (error == 0 || status != 406)
        return error;
    char what[256];
    describe(what, sizeof(what), "GET", path);
    metadata_refused(k, what, err);
    topo_err_clear(err);
    return k8s_call(k, "GET", path, NULL, NULL, out, err);
}

/* ------------------------------------------------------------------ verbs */

int topo_k8s_get(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                 const char *name, topo_err *err)
{
    char *path = NULL;
    int error;
    *out = NULL;
    if (name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: get needs a name");
    if ((error = topo_k8s_path(&path, res, ns, name, err)) < 0)
        return error;
    error = k8s_call(k, "GET", path, NULL, NULL, out, err);
    free(path);
    return error;
}

/* A continue token is the server's opaque cursor, often hundreds of
 * characters of base64: an error naming the page's request shows its first
 * 16 characters and its length instead (every occurrence in err's text). */
static void shorten_continue(topo_err *err, const char *token)
{
    enum { SHOWN = 16 };
    size_t n = token != NULL ? strlen(token) : 0;
    if (err == NULL || n <= SHOWN + 16)
        return;
    /* The query holds the token URL-escaped; base64's '=' '+' '/' differ,
     * its first characters rarely: match the unescaped prefix, then skip
     * the escaped rest (up to the next '&', space or quote). */
    char *at, *from = err->text;
    char head[SHOWN + 1], note[64];
    memcpy(head, token, SHOWN);
    head[SHOWN] = '\0';
    int w = snprintf(note, sizeof note, "%s...(%zu chars)", head, n);
    while (w > 0 && (at = strstr(from, head)) != NULL) {
        size_t end = SHOWN;
        while (at[end] != '\0' && at[end] != '&' && at[end] != ' ' && at[end] != '"' &&
               at[end] != ':' && at[end] != ',')
            end++;
        if ((size_t)w < end) {
            memmove(at + w, at + end, strlen(at + end) + 1);
            memcpy(at, note, (size_t)w);
            end = (size_t)w;
        }
        from = at + end;
    }
}

int topo_k8s_list(char rv_out[TOPO_K8S_RV_MAX], topo_k8s *k, const topo_k8s_resource *res,
                  const char *ns, const topo_k8s_list_opts *opts, topo_k8s_item_fn fn,
                  void *payload, topo_err *err)
{
    int error = 0;
    char *cont = NULL, *path = NULL;
    json_t *page = NULL;
    topo_k8s_list_opts o = {0};
    char limit[32];
    int first = 1;

    if (rv_out != NULL)
        rv_out[0] = '\0';
    if (opts != NULL)
        o = *opts;
    if (o.continued != NULL)
        *o.continued = 0;
    snprintf(limit, sizeof(limit), "%u", o.limit > 0 ? o.limit : TOPO_K8S_PAGE_DEFAULT);
    for (;;) {
        sbuf b = SBUF_INIT;
        if ((error = build_path(&b, res, ns, NULL, err)) < 0) {
            topo_buf_dispose(&b.b);
            goto cleanup;
        }
        sb_param(&b, "limit", limit);
        sb_param(&b, "continue", cont);
        if (cont != NULL && o.continued != NULL)
            *o.continued = 1;
        sb_param(&b, "labelSelector", o.label_selector);
        sb_param(&b, "fieldSelector", o.field_selector);
        if (first)
            sb_param(&b, "resourceVersion", o.resource_version);
        free(path);
        path = NULL;
        if ((error = sb_finish(&b, &path, "kubernetes list", err)) < 0)
            goto cleanup;
        json_decref(page);
        page = NULL;
        if ((error = k8s_get_maybe_metadata(
                 k, path, o.metadata_only ? TOPO_K8S_ACCEPT_METADATA_LIST : NULL, &page, err)) < 0)
            goto cleanup;
        topo_k8s_list_page pg;
        if ((error = net_k8s_list_page_decode(&pg, first ? rv_out : NULL, page, path, err)) < 0)
            goto cleanup;
        first = 0;
        size_t i;
        json_t *item;
        json_array_foreach(pg.items, i, item)
        {
            if ((error = fn(item, payload)) != 0)
                goto cleanup;
        }
        const char *next = pg.next;
        free(cont);
        cont = NULL;
        if (next == NULL)
            break;
        if ((cont = strdup(next)) == NULL) {
            error = topo_err_set(err, TOPO_ENOMEM, "kubernetes list: out of memory");
            goto cleanup;
        }
    }
cleanup:
    if (error < 0)
        shorten_continue(err, cont);
    json_decref(page);
    free(cont);
    free(path);
    return error;
}

/* ------------------------------------------------------------------ watch */

typedef struct watch_ctx {
    topo_k8s_event_fn fn;
    void *payload;
    char *rv;
    const atomic_int *stop;
    const char *what;
    topo_err *err;
    int rc;          /* what the line callback stopped for */
    int stopped;     /* *stop was seen */
    int bad_line;    /* a line that is not JSON (kept in snippet) */
    json_t *status;  /* a Status body (non-2xx answer) */
    char snippet[200];
    size_t snippet_len;
} watch_ctx;

static int watch_line(const char *line, size_t len, void *p)
{
    watch_ctx *c = p;
    topo_k8s_watch_line ev;
    int rc = 0;

    int error = net_k8s_watch_line_decode(&ev, line, len, c->status == NULL, c->what, c->err);
    if (error < 0) {
        if (ev.kind == TOPO_K8S_LINE_MALFORMED) {
            c->bad_line = 1;
            c->snippet_len = len < sizeof(c->snippet) ? len : sizeof(c->snippet);
            memcpy(c->snippet, line, c->snippet_len);
        }
        c->rc = error;
        rc = 1;
        goto cleanup;
    }
    if (ev.kind == TOPO_K8S_LINE_STATUS) {
        c->status = ev.root; /* the body of an error answer */
        ev.root = NULL;
        goto cleanup;
    }
    if (ev.kind != TOPO_K8S_LINE_EVENT)
        goto cleanup;
    if ((c->rc = c->fn(ev.type, ev.object, c->payload)) != 0) {
        rc = 1;
        goto cleanup;
    }
    memcpy(c->rv, ev.rv, strlen(ev.rv) + 1);
    if (c->stop != NULL && atomic_load(c->stop)) {
        c->stopped = 1;
        rc = 1;
    }
cleanup:
    net_k8s_watch_line_dispose(&ev);
    return rc;
}

/* One watch request and its stream, into c; the code topo_k8s_watch
 * returns for it. */
static int watch_stream(topo_k8s *k, const char *path, const char *accept, long secs,
                        const topo_k8s_watch_opts *o, watch_ctx *c, long *status, topo_err *err)
{
    int error = 0;
    /* The server ends the watch after timeoutSeconds; this is the backstop. */
    topo_http_request req = {
        .method = "GET", .path = path, .timeout_ms = (secs + 60) * 1000, .cancel = o->stop,
        .accept = accept};
    *status = 0;
    int rc = topo_http_stream(k->http, &req, TOPO_MAX_K8S_WATCH_EVENT, watch_line, c, status, err);
    if (rc < 0) {
        error = rc;
        topo_err_wrap(err, "%s", c->what);
    } else if (*status != 0 && (*status < 200 || *status >= 300)) {
        error = c->bad_line
                    ? topo_k8s_status_error(*status, c->snippet, c->snippet_len, c->what, err)
                    : net_k8s_status_error_obj(*status, c->status, NULL, 0, c->what, err);
    } else if (rc > 0) {
        error = c->stopped ? 0 : c->rc;
    } else if (*status == 0) {
        error = topo_err_set(err, TOPO_ECONNECT, "%s: no response", c->what);
    }
    return error;
}

int topo_k8s_watch(topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                   char rv[TOPO_K8S_RV_MAX], const topo_k8s_watch_opts *opts,
                   topo_k8s_event_fn fn, void *payload, topo_err *err)
{
    int error = 0;
    char *path = NULL;
    sbuf b = SBUF_INIT;
    topo_k8s_watch_opts o = {0};
    watch_ctx c;
    char what[256];
    char timeout[32];
    long status = 0;

    memset(&c, 0, sizeof(c));
    if (opts != NULL)
        o = *opts;
    if (o.stop != NULL && atomic_load(o.stop))
        return 0;
    if (memchr(rv, '\0', TOPO_K8S_RV_MAX) == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: watch resourceVersion too long");
    long secs = o.timeout_seconds;
    if (secs <= 0) {
        /* client-go's reflector: a random 5..10 minutes, so watches of many
         * clients do not all end together. */
        k->rng += 0x9e3779b97f4a7c15u;
        uint64_t z = k->rng;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        secs = 300 + (long)((z ^ (z >> 31)) % 300u);
    }
    snprintf(timeout, sizeof(timeout), "%ld", secs);
    if ((error = build_path(&b, res, ns, NULL, err)) < 0) {
        topo_buf_dispose(&b.b);
        return error;
    }
    sb_param(&b, "watch", "1");
    if (rv[0] != '\0')
        sb_param(&b, "resourceVersion", rv);
    if (!o.no_bookmarks)
        sb_param(&b, "allowWatchBookmarks", "true");
    sb_param(&b, "timeoutSeconds", timeout);
    sb_param(&b, "labelSelector", o.label_selector);
    sb_param(&b, "fieldSelector", o.field_selector);
    if ((error = sb_finish(&b, &path, "kubernetes watch", err)) < 0)
        return error;
    describe(what, sizeof(what), "WATCH", path);

    int metadata = o.metadata_only && !k->metadata_refused;
    for (;;) {
        c.fn = fn;
        c.payload = payload;
        c.rv = rv;
        c.stop = o.stop;
        c.what = what;
        c.err = err;
        error = watch_stream(k, path, metadata ? TOPO_K8S_ACCEPT_METADATA : NULL, secs, &o, &c,
                             &status, err);
        /* A 406 comes before any event: nothing was delivered. */
        if (!metadata || status != 406)
            break;
        metadata_refused(k, what, err);
        topo_err_clear(err);
        json_decref(c.status);
        memset(&c, 0, sizeof(c));
        metadata = 0;
    }
    json_decref(c.status);
    free(path);
    return error;
}

/* ------------------------------------------------------------------ writes */

static int k8s_patch(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                     const char *name, const char *subresource, topo_k8s_patch_type type,
                     const json_t *patch, const char *resource_version, int resend_safe,
                     topo_err *err);

int topo_k8s_patch(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                   const char *name, topo_k8s_patch_type type, const json_t *patch,
                   const char *resource_version, topo_err *err)
{
    return topo_k8s_patch_subresource(out, k, res, ns, name, NULL, type, patch,
                                      resource_version, err);
}

int topo_k8s_patch_guarded(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                           const char *ns, const char *name, const json_t *patch, topo_err *err)
{
    return k8s_patch(out, k, res, ns, name, NULL, TOPO_K8S_JSON_PATCH, patch, NULL, 1, err);
}

int topo_k8s_patch_subresource(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                               const char *ns, const char *name, const char *subresource,
                               topo_k8s_patch_type type, const json_t *patch,
                               const char *resource_version, topo_err *err)
{
    return k8s_patch(out, k, res, ns, name, subresource, type, patch, resource_version, 0, err);
}

/* Every PATCH; resend_safe: the patch guards itself (topo_k8s_patch_guarded). */
static int k8s_patch(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                     const char *name, const char *subresource, topo_k8s_patch_type type,
                     const json_t *patch, const char *resource_version, int resend_safe,
                     topo_err *err)
{
    int error = 0;
    char *path = NULL;
    json_t *body = NULL;
    const char *ctype;

    if (out != NULL)
        *out = NULL;
    if (type == TOPO_K8S_MERGE_PATCH) {
        ctype = "application/merge-patch+json";
        if (!json_is_object(patch))
            return topo_err_set(err, TOPO_EINVALID, "kubernetes: a merge patch is an object");
    } else if (type == TOPO_K8S_STRATEGIC_MERGE_PATCH) {
        ctype = "application/strategic-merge-patch+json";
        if (!json_is_object(patch))
            return topo_err_set(err, TOPO_EINVALID,
                                "kubernetes: a strategic merge patch is an object");
    } else if (type == TOPO_K8S_JSON_PATCH) {
        ctype = "application/json-patch+json";
        if (!json_is_array(patch))
            return topo_err_set(err, TOPO_EINVALID, "kubernetes: a JSON patch is an array");
    } else {
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: unknown patch type %d", (int)type);
    }
    if (name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: patch needs a name");
    if (subresource != NULL && subresource[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: empty subresource");
    sbuf b = SBUF_INIT;
    if ((error = build_path(&b, res, ns, name, err)) < 0) {
        topo_buf_dispose(&b.b);
        return error;
    }
    if (subresource != NULL) {
        sb_puts(&b, "/");
        sb_escaped(&b, subresource);
    }
    if ((error = sb_finish(&b, &path, "kubernetes", err)) < 0)
        return error;
    if (resource_version != NULL) {
        /* The patched object carries the version we read: the API server
         * refuses it with 409 when the stored one differs. */
        if ((body = json_deep_copy(patch)) == NULL)
            goto oom;
        if (type != TOPO_K8S_JSON_PATCH) {
            json_t *md = json_object_get(body, "metadata");
            if (md == NULL || json_is_null(md)) {
                if (json_object_set_new(body, "metadata", md = json_object()) < 0)
                    goto oom;
            } else if (!json_is_object(md)) {
                error = topo_err_set(err, TOPO_EINVALID, "kubernetes: patch metadata is not an "
                                                         "object");
                goto cleanup;
            }
            if (json_object_set_new(md, "resourceVersion", json_string(resource_version)) < 0)
                goto oom;
        } else {
            json_t *op = json_pack("{s:s, s:s, s:s}", "op", "replace", "path",
                                   "/metadata/resourceVersion", "value", resource_version);
            if (op == NULL || json_array_append_new(body, op) < 0)
                goto oom;
        }
    }
    error = k8s_request(k, "PATCH", path, ctype, NULL, body != NULL ? body : patch, resend_safe,
                        out, NULL, err);
    goto cleanup;
oom:
    error = topo_err_set(err, TOPO_ENOMEM, "kubernetes patch: out of memory");
cleanup:
    json_decref(body);
    free(path);
    return error;
}

int topo_k8s_patch_retry(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                         const char *ns, const char *name, topo_k8s_patch_type type,
                         int max_attempts, topo_k8s_patch_build_fn build, void *payload,
                         topo_err *err)
{
    int error = 0;
    json_t *cur = NULL, *patch = NULL;
    int attempts = max_attempts > 0 ? max_attempts : 5;

    if (out != NULL)
        *out = NULL;
    for (int i = 0; i < attempts; i++) {
        if ((error = topo_k8s_get(&cur, k, res, ns, name, err)) < 0)
            goto cleanup;
        if ((error = build(&patch, cur, payload, err)) != 0)
            goto cleanup;
        if (patch == NULL) {
            if (out != NULL) {
                *out = cur;
                cur = NULL;
            }
            goto cleanup;
        }
        const char *rv = json_string_value(json_object_get(json_object_get(cur, "metadata"),
                                                           "resourceVersion"));
        if (rv == NULL) {
            error = topo_err_set(err, TOPO_EINVALID, "%s \"%s\": no metadata.resourceVersion",
                                 res->kind, name);
            goto cleanup;
        }
        error = topo_k8s_patch(out, k, res, ns, name, type, patch, rv, err);
        json_decref(patch);
        patch = NULL;
        json_decref(cur);
        cur = NULL;
        if (error != TOPO_ECONFLICT)
            goto cleanup;
        topo_log(TOPO_LOG_DEBUG, "%s \"%s\" changed under us; reading it again (attempt %d)",
                 res->kind, name, i + 1);
    }
    topo_err_wrap(err, "gave up after %d conflicting writes", attempts);
cleanup:
    json_decref(patch);
    json_decref(cur);
    return error;
}

int topo_k8s_create_object(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                           const char *ns, const json_t *object, topo_err *err)
{
    char *path = NULL;
    int error;
    if (out != NULL)
        *out = NULL;
    if (!json_is_object(object))
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: create needs an object");
    if ((error = topo_k8s_path(&path, res, ns, NULL, err)) < 0)
        return error;
    error = k8s_call(k, "POST", path, "application/json", object, out, err);
    free(path);
    return error;
}

int topo_k8s_update(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                    const json_t *object, topo_err *err)
{
    char *path = NULL;
    int error;
    if (out != NULL)
        *out = NULL;
    const char *name = json_string_value(json_object_get(json_object_get(object, "metadata"),
                                                         "name"));
    if (name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: update needs metadata.name");
    if ((error = topo_k8s_path(&path, res, ns, name, err)) < 0)
        return error;
    error = k8s_call(k, "PUT", path, "application/json", object, out, err);
    free(path);
    return error;
}

int topo_k8s_delete(topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                    const char *name, const char *resource_version, topo_err *err)
{
    char *path = NULL;
    json_t *body = NULL;
    int error;
    if (name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "kubernetes: delete needs a name");
    if ((error = topo_k8s_path(&path, res, ns, name, err)) < 0)
        return error;
    if (resource_version != NULL &&
        (body = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "DeleteOptions",
                          "preconditions", "resourceVersion", resource_version)) == NULL) {
        free(path);
        return topo_err_set(err, TOPO_ENOMEM, "kubernetes delete: out of memory");
    }
    error = k8s_call(k, "DELETE", path, "application/json", body, NULL, err);
    json_decref(body);
    free(path);
    return error;
}
