/* Forwarding to the placer (forward.h). */
#define _POSIX_C_SOURCE 200809L
#include "forward.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request_deadline.h"
#include "topo/http.h"
#include "topo/limits.h"
#include "topo/str.h"

/* Idle clients kept: one per request thread is the most that is ever
 * in use at once. */
#define IDLE_MAX 64
/* How long a connection to the placer may take to open: it is a pod on the
 * cluster network, and the request's deadline is short. */
#define CONNECT_TIMEOUT_MS 1000L

typedef struct idle_client {
    char *addr;
    topo_http *http;
} idle_client;

struct wh_forward {
    char *ca_file, *server_name, *path;
    pthread_mutex_t mu;
    idle_client idle[IDLE_MAX];
    size_t nidle;
};

int wh_forward_create(wh_forward **out, const wh_forward_opts *opts, topo_err *err)
{
    *out = NULL;
    if (opts == NULL || opts->ca_file == NULL || opts->server_name == NULL ||
        opts->server_name[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "forwarding: a peer CA and server name are required");
    wh_forward *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "forwarding: out of memory");
    pthread_mutex_init(&f->mu, NULL);
    /* Who forwarded, for the placer's log: the identity without its
     * address (hostnames and pids need no escaping in a query). */
    char who[128];
    const char *id = opts->identity != NULL ? opts->identity : "peer";
    size_t n = strcspn(id, "@");
    snprintf(who, sizeof who, "%.*s", (int)(n < sizeof who ? n : sizeof who - 1), id);
    for (char *c = who; *c != '\0'; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '.' || *c == '_'))
            *c = '_';
    char path[sizeof who + 64];
    snprintf(path, sizeof path, "/mutate?%s=%s", WH_FORWARDED_PARAM, who);
    f->ca_file = topo_strdup(opts->ca_file);
    f->server_name = topo_strdup(opts->server_name);
    f->path = topo_strdup(path);
    if (f->ca_file == NULL || f->server_name == NULL || f->path == NULL) {
        wh_forward_free(f);
        return topo_err_set(err, TOPO_ENOMEM, "forwarding: out of memory");
    }
    *out = f;
    return 0;
}

void wh_forward_free(wh_forward *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->nidle; i++) {
        topo_http_free(f->idle[i].http);
        free(f->idle[i].addr);
    }
    pthread_mutex_destroy(&f->mu);
    free(f->ca_file);
    free(f->server_name);
    free(f->path);
    free(f);
}

const char *wh_forward_address(const char *identity)
{
    const char *at = identity != NULL ? strrchr(identity, '@') : NULL;
    return at != NULL && at[1] != '\0' && strchr(at, ':') != NULL ? at + 1 : NULL;
}

/* An idle client for addr, or a new one. */
static int take(wh_forward *f, const char *addr, topo_http **out, topo_err *err)
{
    *out = NULL;
    pthread_mutex_lock(&f->mu);
    for (size_t i = f->nidle; i-- > 0;) {
        if (strcmp(f->idle[i].addr, addr) == 0) {
            *out = f->idle[i].http;
            free(f->idle[i].addr);
            f->idle[i] = f->idle[--f->nidle];
            break;
        }
    }
    pthread_mutex_unlock(&f->mu);
    if (*out != NULL)
        return 0;
    /* The URL names the certificate's name and the placer's port; the
     * connection goes to its address. */
    const char *colon = strrchr(addr, ':');
    char base[TOPO_MAX_HTTP_URL], to[TOPO_MAX_HTTP_URL];
    int n = snprintf(base, sizeof base, "https://%s:%s", f->server_name, colon ? colon + 1 : "");
    if (colon == NULL || n < 0 || (size_t)n >= sizeof base)
        return topo_err_set(err, TOPO_EINVALID, "placer address %s: expected HOST:PORT", addr);
    /* An IPv6 pod IP comes unbracketed from $(POD_IP):PORT; libcurl wants
     * [fd00::1]:9443. */
    int v6 = memchr(addr, ':', (size_t)(colon - addr)) != NULL && addr[0] != '[';
    n = snprintf(to, sizeof to, v6 ? "[%.*s]%s" : "%.*s%s", (int)(colon - addr), addr, colon);
    if (n < 0 || (size_t)n >= sizeof to)
        return topo_err_set(err, TOPO_EINVALID, "placer address %s: too long", addr);
    topo_http_opts o = {.base_url = base,
                        .connect_to = to,
                        .ca_file = f->ca_file,
                        .connect_timeout_ms = CONNECT_TIMEOUT_MS,
                        .max_body = TOPO_MAX_ADMISSION_BODY,
                        .qps = -1,
                        .max_retries = -1};
    return topo_http_create(out, &o, err);
}

/* Back to the idle list (a newer placer's clients push out older ones). */
static void give_back(wh_forward *f, const char *addr, topo_http *http)
{
    char *copy = topo_strdup(addr);
    pthread_mutex_lock(&f->mu);
    for (size_t i = f->nidle; copy != NULL && i-- > 0;)
        if (strcmp(f->idle[i].addr, addr) != 0) {
            topo_http_free(f->idle[i].http);
            free(f->idle[i].addr);
            f->idle[i] = f->idle[--f->nidle];
        }
    if (copy != NULL && f->nidle < IDLE_MAX) {
        f->idle[f->nidle++] = (idle_client){copy, http};
        copy = NULL;
        http = NULL;
    }
    pthread_mutex_unlock(&f->mu);
    free(copy);
    topo_http_free(http);
}

int wh_forward_post(wh_forward *f, const char *addr, const char *body, size_t len,
                    long timeout_ms, char **out, size_t *out_len, int *status, topo_err *err)
{
    topo_http *http = NULL;
    topo_http_response resp = {0};
    int rc;

    *out = NULL;
    *out_len = 0;
    *status = 0;
    if ((rc = take(f, addr, &http, err)) < 0)
        return rc;
    timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
    char path[512]; /* f->path is at most ~200 bytes */
    int n = snprintf(path, sizeof path, "%s&timeout=%ldms&%s=%lld", f->path, timeout_ms,
                     WH_DEADLINE_PARAM, (long long)(wh_unix_ms() + timeout_ms));
    if (n < 0 || (size_t)n >= sizeof path) {
        give_back(f, addr, http);
        return topo_err_set(err, TOPO_EINVALID, "forwarding: the request path is too long");
    }
    topo_http_request req = {.method = "POST",
                             .path = path,
                             .content_type = "application/json",
                             .body = body,
                             .body_len = len,
                             .timeout_ms = timeout_ms};
    rc = topo_http_do(http, &req, &resp, err);
    if (rc < 0) {
        topo_http_free(http); /* its connection is in doubt */
        topo_http_response_dispose(&resp);
        return rc;
    }
    give_back(f, addr, http);
    *out = resp.body;
    *out_len = resp.len;
    *status = (int)resp.status;
    return 0;
}
