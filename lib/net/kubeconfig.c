/* Where the API server is: in-cluster service-account files or a kubeconfig
 * (read with libyaml through the codec layer; base64 *-data fields decoded
 * with OpenSSL). */
#define _POSIX_C_SOURCE 200809L

#include "topo/k8s.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

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
        if (strchr(name, '=') != NULL)
            return kc_fail(c, TOPO_EINVALID, field, "name: \"%.64s\" contains '='", name);
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

int topo_k8s_config_kubeconfig_text(topo_k8s_config *out, const char *text, size_t len,
                                    const char *source, const char *base_dir,
                                    const char *context, topo_err *err)
{
    int error = 0;
    json_t *root = NULL;
    topo_k8s_config cfg = {0};
    kc_ctx c = {source != NULL ? source : "<kubeconfig>", base_dir, err};
    const char *ctx_name = context, *cluster_name = NULL, *user_name = NULL, *ns = NULL;
    const json_t *ctx = NULL, *cl = NULL, *user = NULL;
    char ctx_where[128], cl_where[128], user_where[128];

    memset(out, 0, sizeof(*out));
    if (len > TOPO_MAX_KUBECONFIG) {
        error = kc_fail(&c, TOPO_ELIMIT, NULL, "larger than %u bytes", TOPO_MAX_KUBECONFIG);
        goto cleanup;
    }
    if ((error = topo_codec_parse(&root, text, len, c.source, err)) < 0) {
        topo_err_wrap(err, "kubeconfig");
        goto cleanup;
    }
    if (!json_is_object(root)) {
        error = kc_fail(&c, TOPO_EINVALID, NULL, "not a mapping (is this a kubeconfig?)");
        goto cleanup;
    }
    {
        const char *kind = NULL;
        if ((error = kc_string(&c, root, "kind", "", &kind)) < 0)
            goto cleanup;
        if (kind != NULL && strcmp(kind, "Config") != 0) {
            error = kc_fail(&c, TOPO_EINVALID, "kind", "is \"%.64s\", want Config", kind);
            goto cleanup;
        }
    }
    if (ctx_name == NULL) {
        if ((error = kc_string(&c, root, "current-context", "", &ctx_name)) < 0)
            goto cleanup;
        if (ctx_name == NULL) {
            error = kc_fail(&c, TOPO_EINVALID, "current-context", "not set (and no context "
                                                                  "was asked for)");
            goto cleanup;
        }
    }
    if ((error = kc_find(&c, root, "contexts", "context", ctx_name,
                         context != NULL ? "the caller" : "current-context", &ctx,
                         ctx_where, sizeof(ctx_where))) < 0 ||
        (error = kc_string(&c, ctx, "cluster", ctx_where, &cluster_name)) < 0 ||
        (error = kc_string(&c, ctx, "user", ctx_where, &user_name)) < 0 ||
        (error = kc_string(&c, ctx, "namespace", ctx_where, &ns)) < 0)
        goto cleanup;
    if (cluster_name == NULL) {
        char field[160];
        snprintf(field, sizeof(field), "%s.cluster", ctx_where);
        error = kc_fail(&c, TOPO_EINVALID, field, "missing");
        goto cleanup;
    }
    if ((error = kc_find(&c, root, "clusters", "cluster", cluster_name, ctx_where, &cl,
                         cl_where, sizeof(cl_where))) < 0 ||
        (error = kc_cluster(&c, cl, cl_where, &cfg)) < 0)
        goto cleanup;
    if (user_name != NULL &&
        ((error = kc_find(&c, root, "users", "user", user_name, ctx_where, &user, user_where,
                          sizeof(user_where))) < 0 ||
         (error = kc_user(&c, user, user_where, &cfg, cl, cl_where)) < 0))
        goto cleanup;
    if ((ns != NULL && (cfg.namespace_name = topo_strdup(ns)) == NULL) ||
        (cfg.source = topo_strdup(c.source)) == NULL) {
        error = kc_fail(&c, TOPO_ENOMEM, NULL, "out of memory");
        goto cleanup;
    }
    *out = cfg;
    memset(&cfg, 0, sizeof(cfg));
cleanup:
    if (err != NULL)
        err->source = NULL; /* the codec's position names a string we do not own */
    topo_k8s_config_dispose(&cfg);
    json_decref(root);
    return error;
}

/* *absent (may be NULL) tells a missing file from a broken one. */
static int kubeconfig_file(topo_k8s_config *out, const char *path, const char *context,
                           int *absent, topo_err *err)
{
    int error;
    char *text = NULL, *dir = NULL;
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    if ((error = topo_codec_read_file(&text, &len, path, TOPO_MAX_KUBECONFIG, err)) < 0) {
        if (absent != NULL)
            *absent = error == TOPO_ENOTFOUND;
        topo_err_wrap(err, "kubeconfig");
        return error;
    }
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (slash != NULL && (dir = topo_strndup(path, dir_len)) == NULL) {
        free(text);
        return topo_err_set(err, TOPO_ENOMEM, "kubeconfig %s: out of memory", path);
    }
    error = topo_k8s_config_kubeconfig_text(out, text, len, path, dir, context, err);
    memset(text, 0, len);
    free(text);
    free(dir);
    return error;
}

int topo_k8s_config_kubeconfig(topo_k8s_config *out, const char *path, const char *context,
                               topo_err *err)
{
    return kubeconfig_file(out, path, context, NULL, err);
}

int topo_k8s_config_load(topo_k8s_config *out, const char *kubeconfig_path, topo_err *err)
{
    return topo_k8s_config_load_context(out, kubeconfig_path, NULL, err);
}

int topo_k8s_config_load_context(topo_k8s_config *out, const char *kubeconfig_path,
                                 const char *context, topo_err *err)
{
    memset(out, 0, sizeof(*out));
    if (kubeconfig_path != NULL)
        return topo_k8s_config_kubeconfig(out, kubeconfig_path, context, err);
    const char *env = getenv("KUBECONFIG");
    if (env != NULL && env[0] != '\0') {
        /* The first non-empty file of the list: topo does not merge kubeconfigs. */
        while (*env == ':')
            env++;
        const char *colon = strchr(env, ':');
        size_t n = colon != NULL ? (size_t)(colon - env) : strlen(env);
        if (n > 0) {
            char *first = topo_strndup(env, n);
            if (first == NULL)
                return topo_err_set(err, TOPO_ENOMEM, "kubeconfig: out of memory");
            int error = topo_k8s_config_kubeconfig(out, first, context, err);
            free(first);
            return error;
        }
    }
    /* A context names an entry of a kubeconfig: a pod's own identity has none. */
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (context == NULL && host != NULL && host[0] != '\0')
        return topo_k8s_config_in_cluster(out, NULL, err);
    const char *home = getenv("HOME");
    if (home != NULL && home[0] != '\0') {
        char *path = join_path(home, ".kube/config");
        if (path == NULL)
            return topo_err_set(err, TOPO_ENOMEM, "kubeconfig: out of memory");
        int absent = 0;
        int error = kubeconfig_file(out, path, context, &absent, err);
        free(path);
        if (!absent)
            return error;
    }
    if (context != NULL)
        return topo_err_set(err, TOPO_ENOTFOUND,
                            "context \"%s\": no kubeconfig to find it in (no --kubeconfig, no "
                            "KUBECONFIG, no ~/.kube/config)",
                            context);
    return topo_err_set(err, TOPO_ENOTFOUND,
                        "no Kubernetes configuration: no --kubeconfig, no KUBECONFIG, not in "
                        "a pod, no ~/.kube/config");
}
