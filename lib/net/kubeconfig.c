/* Where the API server is: in-cluster service-account files or a kubeconfig
 * (read with libyaml through the codec layer; base64 *-data fields decoded
 * with OpenSSL). */
#define _POSIX_C_SOURCE 200809L

#include "topo/k8s.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "http_internal.h"
#include "pem_keypair.h"
#include "topo/codec.h"
#include "topo/json.h"
#include "topo/str.h"
#include "topo/limits.h"
#include "topo/log.h"

void topo_k8s_config_dispose(topo_k8s_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_data);
    free(cfg->client_cert_file);
    free(cfg->client_cert_data);
    if (cfg->client_key_data != NULL) {
        /* A private key: do not leave it in freed memory. */
        volatile char *p = cfg->client_key_data;
        while (*p != '\0')
            *p++ = '\0';
        free(cfg->client_key_data);
    }
    free(cfg->client_key_file);
    if (cfg->token != NULL) {
        volatile char *p = cfg->token;
        while (*p != '\0')
            *p++ = '\0';
        free(cfg->token);
    }
    free(cfg->token_file);
    topo_exec_cred_free(cfg->exec);
    free(cfg->namespace_name);
    free(cfg->source);
    memset(cfg, 0, sizeof(*cfg));
}

/* "dir/name", or name alone when it is absolute or dir is NULL. */
static char *join_path(const char *dir, const char *name)
{
    if (dir == NULL || dir[0] == '\0' || name[0] == '/')
        return topo_strdup(name);
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p == NULL)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* ------------------------------------------------------------------ in-cluster */

/* Reads a small file and trims surrounding whitespace. */
static int read_trimmed(char **out, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int error = topo_codec_read_file(&text, &len, path, TOPO_MAX_CREDENTIAL_FILE, err);
    if (error < 0)
        return error;
    size_t a = 0;
    while (a < len && isspace((unsigned char)text[a]))
        a++;
    while (len > a && isspace((unsigned char)text[len - 1]))
        len--;
    memmove(text, text + a, len - a);
    text[len - a] = '\0';
    *out = text;
    return 0;
}

int topo_k8s_config_in_cluster(topo_k8s_config *out, const char *sa_dir, topo_err *err)
{
    int error = 0;
    topo_k8s_config cfg = {0};
    char *token = NULL, *ca = NULL, *ns_path = NULL, *ns = NULL;
    const char *env_dir = getenv(TOPO_K8S_SA_DIR_ENV);
    const char *dir = sa_dir != NULL                         ? sa_dir
                      : env_dir != NULL && env_dir[0] != '\0' ? env_dir
                                                             : TOPO_K8S_SA_DIR;
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");

    memset(out, 0, sizeof(*out));
    if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
        error = topo_err_set(err, TOPO_ENOTFOUND,
                             "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                             "must be set (not running in a pod?)");
        goto cleanup;
    }
    for (const char *p = port; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p) || p - port > 5) {
            error = topo_err_set(err, TOPO_EINVALID,
                                 "in-cluster: KUBERNETES_SERVICE_PORT is not a port: \"%.32s\"",
                                 port);
            goto cleanup;
        }
    }
    for (const char *p = host; *p != '\0'; p++) {
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != ':') {
            error = topo_err_set(err, TOPO_EINVALID,
                                 "in-cluster: KUBERNETES_SERVICE_HOST is not a host: \"%.64s\"",
                                 host);
            goto cleanup;
        }
    }
    {
        int v6 = strchr(host, ':') != NULL;
        size_t n = strlen(host) + strlen(port) + 16;
        if ((cfg.server = malloc(n)) == NULL)
            goto oom;
        snprintf(cfg.server, n, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
    }
    if ((cfg.token_file = join_path(dir, "token")) == NULL ||
        (ca = join_path(dir, "ca.crt")) == NULL || (ns_path = join_path(dir, "namespace")) == NULL)
        goto oom;
    /* The token must be there now; the HTTP client re-reads it later. */
    if ((error = read_trimmed(&token, cfg.token_file, err)) < 0) {
        topo_err_wrap(err, "in-cluster: service-account token");
        goto cleanup;
    }
    if (token[0] == '\0') {
        error = topo_err_set(err, TOPO_EINVALID, "in-cluster: %s is empty", cfg.token_file);
        goto cleanup;
    }
    {
        /* Like client-go: a CA that cannot be read is logged, and the
         * system trust store is used. */
        char *ca_text = NULL;
        topo_err cerr = TOPO_ERR_INIT;
        if (topo_codec_read_file(&ca_text, NULL, ca, TOPO_MAX_CREDENTIAL_FILE, &cerr) == 0) {
            cfg.ca_file = ca;
            ca = NULL;
        } else {
            topo_log(TOPO_LOG_WARN, "in-cluster: cannot read the CA (%s); using the system CAs",
                     cerr.text);
        }
        free(ca_text);
    }
    {
        topo_err nerr = TOPO_ERR_INIT;
        if (read_trimmed(&ns, ns_path, &nerr) == 0 && ns[0] != '\0') {
            cfg.namespace_name = ns;
            ns = NULL;
        }
    }
    if ((cfg.source = topo_strdup("in-cluster")) == NULL)
        goto oom;
    *out = cfg;
    memset(&cfg, 0, sizeof(cfg));
    goto cleanup;
oom:
    error = topo_err_set(err, TOPO_ENOMEM, "in-cluster: out of memory");
cleanup:
    if (token != NULL) {
        memset(token, 0, strlen(token));
        free(token);
    }
    free(ca);
    free(ns_path);
    free(ns);
    topo_k8s_config_dispose(&cfg);
    return error;
}

/* ------------------------------------------------------------------ kubeconfig */

typedef struct kc_ctx {
    const char *source;
    const char *base_dir;
    topo_err *err;
} kc_ctx;

static int kc_fail(const kc_ctx *c, int code, const char *field, const char *fmt, ...)
    TOPO_PRINTF(4, 5);

static int kc_fail(const kc_ctx *c, int code, const char *field, const char *fmt, ...)
{
    char msg[TOPO_ERR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (field != NULL)
        return topo_err_set(c->err, code, "kubeconfig %s: %s: %s", c->source, field, msg);
    return topo_err_set(c->err, code, "kubeconfig %s: %s", c->source, msg);
}

/* A string field: *out NULL when absent, null or "" (unset, as client-go). */
static int kc_string(const kc_ctx *c, const json_t *obj, const char *key, const char *where,
                     const char **out)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        char field[256];
        snprintf(field, sizeof(field), "%s.%s", where, key);
        return kc_fail(c, TOPO_EINVALID, field, "must be a string");
    }
    if (json_string_length(v) > 0) {
        if (strlen(json_string_value(v)) != json_string_length(v)) {
            char field[256];
            snprintf(field, sizeof(field), "%s.%s", where, key);
            return kc_fail(c, TOPO_EINVALID, field, "contains a NUL byte");
        }
        *out = json_string_value(v);
    }
    return 0;
}

static int kc_bool(const kc_ctx *c, const json_t *obj, const char *key, const char *where,
                   int *out)
{
    const json_t *v = json_object_get(obj, key);
    *out = 0;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_boolean(v)) {
        char field[256];
        snprintf(field, sizeof(field), "%s.%s", where, key);
        return kc_fail(c, TOPO_EINVALID, field, "must be true or false");
    }
    *out = json_is_true(v);
    return 0;
}

/* Finds {name: NAME, INNER: {...}} in the list at root[list]; where gets
 * "list[i].inner". */
static int kc_find(const kc_ctx *c, const json_t *root, const char *list, const char *inner,
                   const char *name, const char *wanted_by, const json_t **out, char *where,
                   size_t where_size)
{
    const json_t *arr = json_object_get(root, list);
    *out = NULL;
    if (arr != NULL && !json_is_null(arr) && !json_is_array(arr))
        return kc_fail(c, TOPO_EINVALID, list, "must be a list");
    size_t i;
    const json_t *el;
    json_array_foreach(arr, i, el)
    {
        char field[128];
        snprintf(field, sizeof(field), "%s[%zu]", list, i);
        if (!json_is_object(el))
            return kc_fail(c, TOPO_EINVALID, field, "must be a mapping");
        const json_t *n = json_object_get(el, "name");
        if (!json_is_string(n))
            return kc_fail(c, TOPO_EINVALID, field, "needs a name");
        if (strcmp(json_string_value(n), name) != 0)
            continue;
        const json_t *v = json_object_get(el, inner);
        snprintf(where, where_size, "%s[%zu].%s", list, i, inner);
        if (v == NULL || json_is_null(v))
            return kc_fail(c, TOPO_EINVALID, where, "missing");
        if (!json_is_object(v))
            return kc_fail(c, TOPO_EINVALID, where, "must be a mapping");
        *out = v;
        return 0;
    }
    return kc_fail(c, TOPO_ENOTFOUND, NULL, "%s \"%s\" (named by %s) is not in %s", inner, name,
                   wanted_by, list);
}

/* Standard base64 (padding required, whitespace ignored) to a NUL-terminated
 * string without NUL bytes: certificates and keys in PEM form. */
static int kc_base64(const kc_ctx *c, const char *in, const char *field, char **out)
{
    int error = 0;
    size_t n = strlen(in), k = 0;
    unsigned char *clean = NULL, *buf = NULL;

    *out = NULL;
    if (n > INT_MAX)
        return kc_fail(c, TOPO_ELIMIT, field, "too long");
    if ((clean = malloc(n + 1)) == NULL)
        goto oom;
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)in[i]))
            clean[k++] = (unsigned char)in[i];
    clean[k] = '\0';
    if (k == 0 || k % 4 != 0) {
        error = kc_fail(c, TOPO_EINVALID, field, "invalid base64 (length %zu is not a multiple "
                                                 "of 4)", k);
        goto cleanup;
    }
    if ((buf = malloc(k / 4 * 3 + 1)) == NULL)
        goto oom;
    int got = EVP_DecodeBlock(buf, clean, (int)k);
    if (got < 0) {
        error = kc_fail(c, TOPO_EINVALID, field, "invalid base64");
        goto cleanup;
    }
    /* EVP_DecodeBlock counts the bytes the padding stands for. */
    size_t len = (size_t)got;
    for (size_t p = k; p > 0 && clean[p - 1] == '=' && len > 0; p--)
        len--;
    buf[len] = '\0';
    if (memchr(buf, '\0', len) != NULL) {
        error = kc_fail(c, TOPO_EINVALID, field, "decodes to binary data, not PEM text");
        goto cleanup;
    }
    *out = (char *)buf;
    buf = NULL;
    goto cleanup;
oom:
    error = kc_fail(c, TOPO_ENOMEM, field, "out of memory");
cleanup:
    if (buf != NULL) {
        memset(buf, 0, k / 4 * 3 + 1);
        free(buf);
    }
    free(clean);
    return error;
}

/* A file/-data pair: at most one of them. */
static int kc_pem(const kc_ctx *c, const json_t *obj, const char *where, const char *file_key,
                  const char *data_key, char **file_out, char **data_out)
{
    const char *file = NULL, *data = NULL;
    int error;
    char field[256];

    if ((error = kc_string(c, obj, file_key, where, &file)) < 0 ||
        (error = kc_string(c, obj, data_key, where, &data)) < 0)
        return error;
    if (file != NULL && data != NULL) {
        snprintf(field, sizeof(field), "%s", where);
        return kc_fail(c, TOPO_EINVALID, field, "%s and %s are both set (use one)", file_key,
                       data_key);
    }
    if (data != NULL) {
        snprintf(field, sizeof(field), "%s.%s", where, data_key);
        return kc_base64(c, data, field, data_out);
    }
    if (file != NULL && (*file_out = join_path(c->base_dir, file)) == NULL)
        return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
    return 0;
}

static int kc_unsupported(const kc_ctx *c, const json_t *obj, const char *where,
                          const char *const *keys)
{
    for (; *keys != NULL; keys++) {
        const json_t *v = json_object_get(obj, *keys);
        if (v != NULL && !json_is_null(v) && !(json_is_string(v) && json_string_length(v) == 0)) {
            char field[256];
            snprintf(field, sizeof(field), "%s.%s", where, *keys);
            return kc_fail(c, TOPO_EUNSUPPORTED, field, "not supported by topo");
        }
    }
    return 0;
}

static int kc_cluster(const kc_ctx *c, const json_t *cl, const char *where, topo_k8s_config *cfg)
{
    static const char *const unsupported[] = {"proxy-url", "tls-server-name", NULL};
    const char *server = NULL;
    int error;
    char field[256];

    if ((error = kc_unsupported(c, cl, where, unsupported)) < 0 ||
        (error = kc_string(c, cl, "server", where, &server)) < 0)
        return error;
    snprintf(field, sizeof(field), "%s.server", where);
    if (server == NULL)
        return kc_fail(c, TOPO_EINVALID, field, "missing");
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return kc_fail(c, TOPO_EINVALID, field, "\"%.200s\" is not an http(s):// URL", server);
    size_t n = strlen(server);
    while (n > 8 && server[n - 1] == '/')
        n--;
    if ((cfg->server = topo_strndup(server, n)) == NULL)
        return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
    if ((error = kc_pem(c, cl, where, "certificate-authority", "certificate-authority-data",
                        &cfg->ca_file, &cfg->ca_data)) < 0 ||
        (error = kc_bool(c, cl, "insecure-skip-tls-verify", where, &cfg->insecure_skip_verify)) <
            0)
        return error;
    if (cfg->insecure_skip_verify && (cfg->ca_file != NULL || cfg->ca_data != NULL))
        return kc_fail(c, TOPO_EINVALID, where,
                       "insecure-skip-tls-verify and a certificate authority are both set");
    return 0;
}

/* kubectl dropped its built-in auth providers in 1.26 for exec plugins;
 * topo never had them: say which plugin replaces the one named. */
static int kc_auth_provider(const kc_ctx *c, const json_t *u, const char *where)
{
    const json_t *ap = json_object_get(u, "auth-provider");
    if (ap == NULL || json_is_null(ap))
        return 0;
    char field[256];
    snprintf(field, sizeof(field), "%s.auth-provider", where);
    const json_t *n = json_is_object(ap) ? json_object_get(ap, "name") : NULL;
    const char *name = json_is_string(n) ? json_string_value(n) : "";
    const char *instead =
        strcmp(name, "gcp") == 0
            ? "use the gke-gcloud-auth-plugin exec plugin (gcloud components install "
              "gke-gcloud-auth-plugin; `gcloud container clusters get-credentials` writes the "
              "exec user)"
        : strcmp(name, "azure") == 0
            ? "use the kubelogin exec plugin (https://github.com/Azure/kubelogin: `kubelogin "
              "convert-kubeconfig -l azurecli`)"
        : strcmp(name, "oidc") == 0
            ? "use an OIDC exec plugin: kubelogin (https://github.com/int128/kubelogin, "
              "`kubectl oidc-login`)"
            : "use an exec credential plugin (users[].user.exec)";
    return kc_fail(c, TOPO_EUNSUPPORTED, field,
                   "the auth provider \"%.64s\" is not supported (kubectl removed its built-in "
                   "providers in 1.26): %s",
                   name, instead);
}

/* A list of strings into *out (malloc'd, each string copied). */
static int kc_strings(const kc_ctx *c, const json_t *obj, const char *key, const char *where,
                      char ***out, size_t *n)
{
    const json_t *arr = json_object_get(obj, key);
    char field[256];
    size_t i;
    const json_t *el;

    *out = NULL;
    *n = 0;
    if (arr == NULL || json_is_null(arr))
        return 0;
    snprintf(field, sizeof(field), "%s.%s", where, key);
    if (!json_is_array(arr))
        return kc_fail(c, TOPO_EINVALID, field, "must be a list of strings");
    if ((*out = calloc(json_array_size(arr) + 1, sizeof(**out))) == NULL)
        return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
    json_array_foreach(arr, i, el)
    {
        if (!json_is_string(el) || strlen(json_string_value(el)) != json_string_length(el)) {
            snprintf(field, sizeof(field), "%s.%s[%zu]", where, key, i);
            return kc_fail(c, TOPO_EINVALID, field, "must be a string (without NUL bytes)");
        }
        if (((*out)[i] = topo_strdup(json_string_value(el))) == NULL)
            return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
        *n = i + 1;
    }
    return 0;
}

/* env: [{name, value}], as client-go's ExecEnvVar. */
static int kc_exec_env(const kc_ctx *c, const json_t *exec, const char *where,
                       topo_exec_spec *spec)
{
    const json_t *arr = json_object_get(exec, "env");
    char field[256];
    size_t i;
    const json_t *el;
    int error;

    if (arr == NULL || json_is_null(arr))
        return 0;
    snprintf(field, sizeof(field), "%s.env", where);
    if (!json_is_array(arr))
        return kc_fail(c, TOPO_EINVALID, field, "must be a list of {name, value}");
    if ((spec->env = calloc(json_array_size(arr) + 1, sizeof(*spec->env))) == NULL)
        return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
    json_array_foreach(arr, i, el)
    {
        const char *name = NULL, *value = NULL;
        snprintf(field, sizeof(field), "%s.env[%zu]", where, i);
        if (!json_is_object(el))
            return kc_fail(c, TOPO_EINVALID, field, "must be a mapping {name, value}");
        if ((error = kc_string(c, el, "name", field, &name)) < 0 ||
            (error = kc_string(c, el, "value", field, &value)) < 0)
            return error;
        if (name == NULL)
            return kc_fail(c, TOPO_EINVALID, field, "name: missing (an environment variable "
                                                    "needs a name)");
        if (strchr(name, '=') != NULL) {
            /* What follows '=' may be a value someone meant to set: never
             * echoed. */
            int n = (int)(strchr(name, '=') - name);
            return kc_fail(c, TOPO_EINVALID, field,
                           "name: \"%.*s=...\" contains '=' (the value goes in value)",
                           n < 64 ? n : 64, name);
        }
        if ((spec->env[i].name = topo_strdup(name)) == NULL ||
            (spec->env[i].value = topo_strdup(value != NULL ? value : "")) == NULL) {
            spec->nenv = i + 1;
            return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
        }
        spec->nenv = i + 1;
    }
    return 0;
}

/* The cluster's extension for exec plugins (spec.cluster.config), as JSON. */
static int kc_exec_extension(const kc_ctx *c, const json_t *cl, const char *cl_where,
                             char **out)
{
    const json_t *arr = json_object_get(cl, "extensions");
    char field[256];
    size_t i;
    const json_t *el;

    *out = NULL;
    if (arr == NULL || json_is_null(arr))
        return 0;
    snprintf(field, sizeof(field), "%s.extensions", cl_where);
    if (!json_is_array(arr))
        return kc_fail(c, TOPO_EINVALID, field, "must be a list of {name, extension}");
    json_array_foreach(arr, i, el)
    {
        const json_t *n = json_is_object(el) ? json_object_get(el, "name") : NULL;
        if (!json_is_string(n)) {
            snprintf(field, sizeof(field), "%s.extensions[%zu]", cl_where, i);
            return kc_fail(c, TOPO_EINVALID, field, "needs a name");
        }
        if (strcmp(json_string_value(n), TOPO_EXEC_CLUSTER_EXTENSION) != 0)
            continue;
        const json_t *ext = json_object_get(el, "extension");
        if (ext == NULL || json_is_null(ext))
            return 0;
        if ((*out = topo_json_dumps(ext, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
            return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
        return 0;
    }
    return 0;
}

static int kc_interactive_mode(const kc_ctx *c, const json_t *exec, const char *where, int v1,
                               topo_exec_interactive_mode *out)
{
    const char *mode = NULL;
    char field[256];
    int error;

    if ((error = kc_string(c, exec, "interactiveMode", where, &mode)) < 0)
        return error;
    snprintf(field, sizeof(field), "%s.interactiveMode", where);
    if (mode == NULL) {
        if (v1)
            return kc_fail(c, TOPO_EINVALID, field, "missing (required by %s: Never, "
                                                    "IfAvailable or Always)",
                           TOPO_EXEC_API_V1);
        *out = TOPO_EXEC_IF_AVAILABLE; /* v1beta1's default */
        return 0;
    }
    if (strcmp(mode, "Never") == 0)
        *out = TOPO_EXEC_NEVER;
    else if (strcmp(mode, "IfAvailable") == 0)
        *out = TOPO_EXEC_IF_AVAILABLE;
    else if (strcmp(mode, "Always") == 0)
        *out = TOPO_EXEC_ALWAYS;
    else
        return kc_fail(c, TOPO_EINVALID, field, "\"%.64s\" is not Never, IfAvailable or Always",
                       mode);
    return 0;
}

/* users[].user.exec → a topo_exec_cred (nothing is run). The cluster (cfg,
 * already parsed, and its JSON cl) is what provideClusterInfo passes on. */
static int kc_exec(const kc_ctx *c, const json_t *exec, const char *where,
                   const topo_k8s_config *cfg, const json_t *cl, const char *cl_where,
                   topo_exec_cred **out)
{
    int error = 0;
    topo_exec_spec spec = {0};
    const char *api = NULL, *command = NULL, *hint = NULL;
    char field[256];

    *out = NULL;
    if (!json_is_object(exec))
        return kc_fail(c, TOPO_EINVALID, where, "must be a mapping");
    if ((error = kc_string(c, exec, "apiVersion", where, &api)) < 0 ||
        (error = kc_string(c, exec, "command", where, &command)) < 0 ||
        (error = kc_string(c, exec, "installHint", where, &hint)) < 0)
        goto cleanup;
    snprintf(field, sizeof(field), "%s.apiVersion", where);
    if (api == NULL) {
        error = kc_fail(c, TOPO_EINVALID, field, "missing (%s or %s)", TOPO_EXEC_API_V1,
                        TOPO_EXEC_API_V1BETA1);
        goto cleanup;
    }
    if (strcmp(api, "client.authentication.k8s.io/v1alpha1") == 0) {
        error = kc_fail(c, TOPO_EUNSUPPORTED, field,
                        "%s was removed in Kubernetes 1.24: update the plugin and use %s", api,
                        TOPO_EXEC_API_V1);
        goto cleanup;
    }
    int v1 = strcmp(api, TOPO_EXEC_API_V1) == 0;
    if (!v1 && strcmp(api, TOPO_EXEC_API_V1BETA1) != 0) {
        error = kc_fail(c, TOPO_EINVALID, field, "\"%.80s\" is not %s or %s", api,
                        TOPO_EXEC_API_V1, TOPO_EXEC_API_V1BETA1);
        goto cleanup;
    }
    if (command == NULL) {
        snprintf(field, sizeof(field), "%s.command", where);
        error = kc_fail(c, TOPO_EINVALID, field, "missing (the plugin to run)");
        goto cleanup;
    }
    if ((error = kc_strings(c, exec, "args", where, &spec.args, &spec.nargs)) < 0 ||
        (error = kc_exec_env(c, exec, where, &spec)) < 0 ||
        (error = kc_bool(c, exec, "provideClusterInfo", where, &spec.provide_cluster_info)) < 0 ||
        (error = kc_interactive_mode(c, exec, where, v1, &spec.interactive_mode)) < 0 ||
        (error = kc_exec_extension(c, cl, cl_where, &spec.cluster_config)) < 0)
        goto cleanup;
    /* client-go: a relative command with a '/' is relative to the
     * kubeconfig; a bare name is looked up in PATH. */
    spec.command = strchr(command, '/') != NULL ? join_path(c->base_dir, command)
                                                : topo_strdup(command);
    if (spec.command == NULL || (spec.api_version = topo_strdup(api)) == NULL ||
        (hint != NULL && (spec.install_hint = topo_strdup(hint)) == NULL) ||
        (cfg->server != NULL && (spec.server = topo_strdup(cfg->server)) == NULL) ||
        (cfg->ca_data != NULL && (spec.ca_data = topo_strdup(cfg->ca_data)) == NULL) ||
        (cfg->ca_file != NULL && (spec.ca_file = topo_strdup(cfg->ca_file)) == NULL)) {
        error = kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
        goto cleanup;
    }
    spec.insecure_skip_verify = cfg->insecure_skip_verify;
    error = topo_exec_cred_create(out, &spec, c->err);

cleanup:
    topo_exec_spec_dispose(&spec);
    return error;
}

/* Reads a certificate or key file named by a kubeconfig (field names it). */
static int kc_read_pem(const kc_ctx *c, const char *path, const char *field, char **out)
{
    int error = topo_codec_read_file(out, NULL, path, TOPO_MAX_CREDENTIAL_FILE, c->err);
    if (error < 0)
        topo_err_wrap(c->err, "kubeconfig %s: %s", c->source, field);
    return error;
}

/* The client certificate and key are read and checked now, as client-go
 * loads them when the client is made: a key that does not match, or one
 * encrypted (its passphrase cannot be asked for), is an error naming the
 * field instead of a failed TLS handshake on every request. */
static int kc_keypair(const kc_ctx *c, const char *where, const topo_k8s_config *cfg)
{
    int error = 0;
    char *cert_text = NULL, *key_text = NULL;
    char cert_field[256], key_field[256];

    snprintf(cert_field, sizeof(cert_field), "%s.%s", where,
             cfg->client_cert_data != NULL ? "client-certificate-data" : "client-certificate");
    snprintf(key_field, sizeof(key_field), "%s.%s", where,
             cfg->client_key_data != NULL ? "client-key-data" : "client-key");
    const char *cert = cfg->client_cert_data, *key = cfg->client_key_data;
    if (cert == NULL) {
        if ((error = kc_read_pem(c, cfg->client_cert_file, cert_field, &cert_text)) < 0)
            goto cleanup;
        cert = cert_text;
    }
    if (key == NULL) {
        if ((error = kc_read_pem(c, cfg->client_key_file, key_field, &key_text)) < 0)
            goto cleanup;
        key = key_text;
    }
    if ((error = net_pem_keypair_check(cert, key, cert_field, key_field, c->err)) < 0)
        topo_err_wrap(c->err, "kubeconfig %s", c->source);

cleanup:
    free(cert_text);
    net_http_token_free(key_text);
    return error;
}

static int kc_user(const kc_ctx *c, const json_t *u, const char *where, topo_k8s_config *cfg,
                   const json_t *cl, const char *cl_where)
{
    static const char *const unsupported[] = {"username", "password", "as", "as-uid",
                                              "as-groups", "as-user-extra", NULL};
    const char *token = NULL, *token_file = NULL;
    const json_t *exec = json_object_get(u, "exec");
    topo_exec_cred *plugin = NULL;
    int error;

    if ((error = kc_auth_provider(c, u, where)) < 0 ||
        (error = kc_unsupported(c, u, where, unsupported)) < 0 ||
        (error = kc_pem(c, u, where, "client-certificate", "client-certificate-data",
                        &cfg->client_cert_file, &cfg->client_cert_data)) < 0 ||
        (error = kc_pem(c, u, where, "client-key", "client-key-data", &cfg->client_key_file,
                        &cfg->client_key_data)) < 0 ||
        (error = kc_string(c, u, "token", where, &token)) < 0 ||
        (error = kc_string(c, u, "tokenFile", where, &token_file)) < 0)
        return error;
    int have_cert = cfg->client_cert_file != NULL || cfg->client_cert_data != NULL;
    int have_key = cfg->client_key_file != NULL || cfg->client_key_data != NULL;
    if (have_cert != have_key)
        return kc_fail(c, TOPO_EINVALID, where, "%s without %s",
                       have_cert ? "client-certificate" : "client-key",
                       have_cert ? "client-key" : "client-certificate");
    if (have_cert && (error = kc_keypair(c, where, cfg)) < 0)
        return error;
    if (token != NULL && (cfg->token = topo_strdup(token)) == NULL)
        return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
    if (token_file != NULL && (cfg->token_file = join_path(c->base_dir, token_file)) == NULL)
        return kc_fail(c, TOPO_ENOMEM, NULL, "out of memory");
    if (exec != NULL && !json_is_null(exec)) {
        char field[256];
        snprintf(field, sizeof(field), "%s.exec", where);
        if ((error = kc_exec(c, exec, field, cfg, cl, cl_where, &plugin)) < 0)
            return error;
        /* client-go: credentials written in the kubeconfig win over the
         * plugin, which then never runs. */
        if (token != NULL || token_file != NULL || have_cert) {
            topo_log(TOPO_LOG_INFO, "kubeconfig %s: %s: the %s is used, not the exec plugin",
                     c->source, where, have_cert ? "client certificate" : "token");
            topo_exec_cred_free(plugin);
        } else {
            cfg->exec = plugin;
        }
    }
    return 0;
}

/* One parsed kubeconfig file of a merge. */
typedef struct kc_doc {
    json_t *root; /* a mapping ({} for an empty file) */
    kc_ctx c;     /* its name and directory, for errors and relative paths */
} kc_doc;

static int kc_parse(kc_doc *d, const topo_k8s_kubeconfig_file *f, topo_err *err)
{
    int error;
    d->c = (kc_ctx){f->source != NULL ? f->source : "<kubeconfig>", f->base_dir, err};
    d->root = NULL;
    if (f->len > TOPO_MAX_KUBECONFIG)
        return kc_fail(&d->c, TOPO_ELIMIT, NULL, "larger than %u bytes", TOPO_MAX_KUBECONFIG);
    size_t i = 0;
    while (i < f->len && isspace((unsigned char)f->text[i]))
        i++;
    if (i == f->len) {
        /* An empty file is an empty configuration (client-go), not an error. */
        if ((d->root = json_object()) == NULL)
            return kc_fail(&d->c, TOPO_ENOMEM, NULL, "out of memory");
        return 0;
    }
    if ((error = topo_codec_parse(&d->root, f->text, f->len, d->c.source, err)) < 0) {
        topo_err_wrap(err, "kubeconfig");
        if (err != NULL)
            err->source = NULL; /* the codec's position names a string we do not own */
        return error;
    }
    if (!json_is_object(d->root))
        return kc_fail(&d->c, TOPO_EINVALID, NULL, "not a mapping (is this a kubeconfig?)");
    const char *kind = NULL;
    if ((error = kc_string(&d->c, d->root, "kind", "", &kind)) < 0)
        return error;
    if (kind != NULL && strcmp(kind, "Config") != 0)
        return kc_fail(&d->c, TOPO_EINVALID, "kind", "is \"%.64s\", want Config", kind);
    return 0;
}

/* Whether a file defines anything: client-go goes in-cluster when the
 * merged files define nothing. */
static int kc_empty(const json_t *root)
{
    static const char *const lists[] = {"clusters", "contexts", "users"};
    const json_t *cur = json_object_get(root, "current-context");
    if (json_is_string(cur) && json_string_length(cur) > 0)
        return 0;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        const json_t *l = json_object_get(root, lists[i]);
        if (l != NULL && !json_is_null(l) && !(json_is_array(l) && json_array_size(l) == 0))
            return 0;
    }
    return 1;
}

/* NAME in root[list] of the first file that has it (client-go's merge: the
 * whole entry of the first file to define a name, nothing of the later
 * ones). *doc gets that file. all names every file for "not found". */
static int kc_lookup(const kc_doc *docs, size_t n, const kc_ctx *all, const char *list,
                     const char *inner, const char *name, const char *wanted_by,
                     const kc_doc **doc, const json_t **out, char *where, size_t where_size)
{
    for (size_t i = 0; i < n; i++) {
        int error = kc_find(&docs[i].c, docs[i].root, list, inner, name, wanted_by, out, where,
                            where_size);
        if (error == 0) {
            *doc = &docs[i];
            return 0;
        }
        if (error != TOPO_ENOTFOUND)
            return error;
    }
    return kc_fail(all, TOPO_ENOTFOUND, NULL, "%s \"%s\" (named by %s) is not in %s", inner,
                   name, wanted_by, list);
}

/* The merge and the resolution of the context; *empty (may be NULL) is set
 * when the files define nothing at all. */
static int kc_merge(topo_k8s_config *out, const topo_k8s_kubeconfig_file *files, size_t n,
                    const char *context, int *empty, topo_err *err)
{
    int error = 0;
    topo_k8s_config cfg = {0};
    kc_doc *docs = NULL;
    char *sources = NULL;
    const char *ctx_name = context, *cluster_name = NULL, *user_name = NULL, *ns = NULL;
    const json_t *ctx = NULL, *cl = NULL, *user = NULL;
    const kc_doc *ctx_doc = NULL, *cl_doc = NULL, *user_doc = NULL;
    char ctx_where[128], cl_where[128], user_where[128], named_by[TOPO_ERR_TEXT_MAX / 2];

    memset(out, 0, sizeof(*out));
    if (empty != NULL)
        *empty = 0;
    /* "a:b" when several files are merged: what errors and cfg.source name. */
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(files[i].source != NULL ? files[i].source : "<kubeconfig>") + 1;
    if ((docs = calloc(n > 0 ? n : 1, sizeof(*docs))) == NULL ||
        (sources = malloc(total)) == NULL) {
        error = topo_err_nomem(err, "kubeconfig");
        goto cleanup;
    }
    sources[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            strcat(sources, ":");
        strcat(sources, files[i].source != NULL ? files[i].source : "<kubeconfig>");
    }
    kc_ctx all = {sources, NULL, err};
    int nothing = 1;
    for (size_t i = 0; i < n; i++) {
        if ((error = kc_parse(&docs[i], &files[i], err)) < 0)
            goto cleanup;
        nothing = nothing && kc_empty(docs[i].root);
    }
    if (nothing && empty != NULL)
        *empty = 1;
    if (ctx_name == NULL) {
        /* current-context: the first file that sets it. */
        for (size_t i = 0; i < n && ctx_name == NULL; i++) {
            if ((error = kc_string(&docs[i].c, docs[i].root, "current-context", "", &ctx_name)) <
                0)
                goto cleanup;
            if (ctx_name != NULL && n > 1)
                snprintf(named_by, sizeof(named_by), "current-context of %s", docs[i].c.source);
            else if (ctx_name != NULL)
                snprintf(named_by, sizeof(named_by), "current-context");
        }
        if (ctx_name == NULL) {
            error = kc_fail(&all, TOPO_EINVALID, "current-context", "not set (and no context "
                                                                    "was asked for)");
            goto cleanup;
        }
    } else {
        snprintf(named_by, sizeof(named_by), "the caller");
    }
    if ((error = kc_lookup(docs, n, &all, "contexts", "context", ctx_name, named_by, &ctx_doc,
                           &ctx, ctx_where, sizeof(ctx_where))) < 0 ||
        (error = kc_string(&ctx_doc->c, ctx, "cluster", ctx_where, &cluster_name)) < 0 ||
        (error = kc_string(&ctx_doc->c, ctx, "user", ctx_where, &user_name)) < 0 ||
        (error = kc_string(&ctx_doc->c, ctx, "namespace", ctx_where, &ns)) < 0)
        goto cleanup;
    if (cluster_name == NULL) {
        char field[160];
        snprintf(field, sizeof(field), "%s.cluster", ctx_where);
        error = kc_fail(&ctx_doc->c, TOPO_EINVALID, field, "missing");
        goto cleanup;
    }
    if (n > 1)
        snprintf(named_by, sizeof(named_by), "%s of %s", ctx_where, ctx_doc->c.source);
    else
        snprintf(named_by, sizeof(named_by), "%s", ctx_where);
    if ((error = kc_lookup(docs, n, &all, "clusters", "cluster", cluster_name, named_by, &cl_doc,
                           &cl, cl_where, sizeof(cl_where))) < 0 ||
        (error = kc_cluster(&cl_doc->c, cl, cl_where, &cfg)) < 0)
        goto cleanup;
    if (user_name != NULL &&
        ((error = kc_lookup(docs, n, &all, "users", "user", user_name, named_by, &user_doc,
                            &user, user_where, sizeof(user_where))) < 0 ||
         (error = kc_user(&user_doc->c, user, user_where, &cfg, cl, cl_where)) < 0))
        goto cleanup;
    if ((ns != NULL && (cfg.namespace_name = topo_strdup(ns)) == NULL) ||
        (cfg.source = topo_strdup(sources)) == NULL) {
        error = kc_fail(&all, TOPO_ENOMEM, NULL, "out of memory");
        goto cleanup;
    }
    *out = cfg;
    memset(&cfg, 0, sizeof(cfg));
cleanup:
    if (err != NULL)
        err->source = NULL;
    topo_k8s_config_dispose(&cfg);
    for (size_t i = 0; docs != NULL && i < n; i++)
        json_decref(docs[i].root);
    free(docs);
    free(sources);
    return error;
}

int topo_k8s_config_kubeconfig_merge(topo_k8s_config *out, const topo_k8s_kubeconfig_file *files,
                                     size_t n, const char *context, topo_err *err)
{
    return kc_merge(out, files, n, context, NULL, err);
}

int topo_k8s_config_kubeconfig_text(topo_k8s_config *out, const char *text, size_t len,
                                    const char *source, const char *base_dir,
                                    const char *context, topo_err *err)
{
    topo_k8s_kubeconfig_file f = {text, len, source, base_dir};
    return kc_merge(out, &f, 1, context, NULL, err);
}

/* ------------------------------------------------------------------ loading */

/* Files read for a merge: their text and directory, freed together. */
typedef struct kc_files {
    topo_k8s_kubeconfig_file *v;
    size_t n;
} kc_files;

static void kc_files_dispose(kc_files *fs)
{
    for (size_t i = 0; i < fs->n; i++) {
        char *text = (char *)(uintptr_t)fs->v[i].text;
        net_http_wipe(text, fs->v[i].len); /* it may hold a key or a token */
        free(text);
        free((char *)(uintptr_t)fs->v[i].source);
        free((char *)(uintptr_t)fs->v[i].base_dir);
    }
    free(fs->v);
    memset(fs, 0, sizeof(*fs));
}

/* Reads path (n bytes of a longer string) into fs; 1 when it does not
 * exist and may be skipped (skip_missing), 0 when read, or an error. */
static int kc_files_add(kc_files *fs, const char *path, size_t n, int skip_missing,
                        topo_err *err)
{
    char *p = topo_strndup(path, n), *text = NULL, *dir = NULL;
    size_t len = 0;
    int error;
    if (p == NULL)
        return topo_err_nomem(err, "kubeconfig");
    if ((error = topo_codec_read_file(&text, &len, p, TOPO_MAX_KUBECONFIG, err)) < 0) {
        if (error == TOPO_ENOTFOUND && skip_missing) {
            free(p);
            return 1;
        }
        topo_err_wrap(err, "kubeconfig");
        free(p);
        return error;
    }
    const char *slash = strrchr(p, '/');
    size_t dir_len = slash == NULL ? 0 : slash == p ? 1 : (size_t)(slash - p);
    topo_k8s_kubeconfig_file *grown = realloc(fs->v, (fs->n + 1) * sizeof(*grown));
    if ((slash != NULL && (dir = topo_strndup(p, dir_len)) == NULL) || grown == NULL) {
        if (grown != NULL)
            fs->v = grown;
        net_http_wipe(text, len);
        free(text);
        free(dir);
        free(p);
        return topo_err_nomem(err, "kubeconfig");
    }
    fs->v = grown;
    fs->v[fs->n++] = (topo_k8s_kubeconfig_file){text, len, p, dir};
    return 0;
}

int topo_k8s_config_kubeconfig(topo_k8s_config *out, const char *path, const char *context,
                               topo_err *err)
{
    kc_files fs = {0};
    memset(out, 0, sizeof(*out));
    int error = kc_files_add(&fs, path, strlen(path), 0, err);
    if (error == 0)
        error = kc_merge(out, fs.v, fs.n, context, NULL, err);
    kc_files_dispose(&fs);
    return error;
}

int topo_k8s_config_load(topo_k8s_config *out, const char *kubeconfig_path, topo_err *err)
{
    return topo_k8s_config_load_context(out, kubeconfig_path, NULL, err);
}

/* kubectl's loading rules (client-go clientcmd ClientConfigLoadingRules and
 * DeferredLoadingClientConfig): the explicit file alone; else the files of
 * $KUBECONFIG merged (missing ones skipped); else ~/.kube/config when it
 * exists; in-cluster when those define nothing. */
int topo_k8s_config_load_context(topo_k8s_config *out, const char *kubeconfig_path,
                                 const char *context, topo_err *err)
{
    int error = 0, empty = 0;
    kc_files fs = {0};
    const char *tried = "no --kubeconfig, no KUBECONFIG, no ~/.kube/config";

    memset(out, 0, sizeof(*out));
    if (kubeconfig_path != NULL)
        return topo_k8s_config_kubeconfig(out, kubeconfig_path, context, err);
    const char *env = getenv("KUBECONFIG");
    if (env != NULL && env[0] != '\0') {
        tried = "the files of KUBECONFIG are missing or define nothing";
        for (const char *p = env; *p != '\0';) {
            const char *colon = strchr(p, ':');
            size_t len = colon != NULL ? (size_t)(colon - p) : strlen(p);
            if (len > 0 && (error = kc_files_add(&fs, p, len, 1, err)) < 0)
                goto cleanup;
            p += len;
            if (*p == ':')
                p++;
        }
    } else {
        const char *home = getenv("HOME");
        if (home != NULL && home[0] != '\0') {
            char *path = join_path(home, ".kube/config");
            if (path == NULL) {
                error = topo_err_nomem(err, "kubeconfig");
                goto cleanup;
            }
            error = kc_files_add(&fs, path, strlen(path), 1, err);
            free(path);
            if (error < 0)
                goto cleanup;
            if (fs.n > 0)
                tried = "~/.kube/config defines nothing, no KUBECONFIG, no --kubeconfig";
        }
    }
    if (fs.n > 0) {
        error = kc_merge(out, fs.v, fs.n, context, &empty, err);
        if (!empty)
            goto cleanup;
        topo_k8s_config_dispose(out);
        topo_err_clear(err);
    }
    /* A context names an entry of a kubeconfig: a pod's own identity has none. */
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (context == NULL && host != NULL && host[0] != '\0') {
        error = topo_k8s_config_in_cluster(out, NULL, err);
        goto cleanup;
    }
    if (context != NULL)
        error = topo_err_set(err, TOPO_ENOTFOUND,
                             "context \"%s\": no kubeconfig to find it in (%s)", context, tried);
    else
        error = topo_err_set(err, TOPO_ENOTFOUND,
                             "no Kubernetes configuration: %s, not in a pod", tried);
cleanup:
    kc_files_dispose(&fs);
    return error;
}
