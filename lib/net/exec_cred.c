/* Exec credential plugins (topo/exec_cred.h): the ExecCredential a plugin
 * is given (KUBERNETES_EXEC_INFO) and the one it prints, and the credential
 * cached per configuration under a mutex. The process itself is run by
 * exec_run.c. */
#define _POSIX_C_SOURCE 200809L

#include "topo/exec_cred.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "exec_run.h"
#include "http_internal.h"
#include "pem_keypair.h"
#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/str.h"

#define EXEC_INFO_ENV "KUBERNETES_EXEC_INFO"
/* Overrides both timeouts (tests; a slow SSO flow). */
#define TIMEOUT_ENV "TOPO_EXEC_TIMEOUT_MS"

struct topo_exec_cred {
    topo_exec_spec spec;
    long timeout_ms;             /* non-interactive runs */
    long interactive_timeout_ms; /* runs with our terminal */
    atomic_uint refs;
    pthread_mutex_t mu; /* guards what follows; held while the plugin runs */
    topo_exec_credential cached;
    uint64_t generations; /* credentials obtained so far */
    _Atomic uint64_t runs;
    /* The last run's failure, answered again without running the plugin
     * until retry_ns (monotonic): a daemon's clients, and a command's
     * threads, never run a failing plugin in a loop. */
    topo_err failure;
    unsigned int failures;  /* failed runs in a row */
    uint64_t retry_ns;      /* 0: no failure remembered */
    long backoff_base_ms;
    long backoff_max_ms;
};

/* ------------------------------------------------------------------ values */

void topo_exec_spec_dispose(topo_exec_spec *s)
{
    if (s == NULL)
        return;
    free(s->api_version);
    free(s->command);
    for (size_t i = 0; i < s->nargs; i++)
        free(s->args[i]);
    free(s->args);
    for (size_t i = 0; i < s->nenv; i++) {
        free(s->env[i].name);
        /* env values often carry secrets (a client secret for kubelogin) */
        net_http_token_free(s->env[i].value);
    }
    free(s->env);
    free(s->install_hint);
    free(s->server);
    free(s->ca_data);
    free(s->ca_file);
    free(s->cluster_config);
    memset(s, 0, sizeof(*s));
}

void topo_exec_credential_dispose(topo_exec_credential *c)
{
    if (c == NULL)
        return;
    net_http_token_free(c->token);
    net_http_token_free(c->client_cert_data);
    net_http_token_free(c->client_key_data);
    memset(c, 0, sizeof(*c));
}

static int credential_copy(topo_exec_credential *out, const topo_exec_credential *in)
{
    topo_exec_credential c = {0};
    c.expires = in->expires;
    c.generation = in->generation;
    if ((in->token != NULL && (c.token = topo_strdup(in->token)) == NULL) ||
        (in->client_cert_data != NULL &&
         (c.client_cert_data = topo_strdup(in->client_cert_data)) == NULL) ||
        (in->client_key_data != NULL &&
         (c.client_key_data = topo_strdup(in->client_key_data)) == NULL)) {
        topo_exec_credential_dispose(&c);
        return TOPO_ENOMEM;
    }
    topo_exec_credential_dispose(out);
    *out = c;
    return 0;
}

/* ------------------------------------------------------------------ decoding */

/* An optional string of status; "" is absent (as client-go's empty field). */
static int status_string(char **out, const json_t *status, const char *key, topo_err *err)
{
    const json_t *v = json_object_get(status, key);
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return topo_err_set(err, TOPO_EINVALID, "status.%s: must be a string", key);
    if (json_string_length(v) == 0)
        return 0;
    if ((*out = topo_strndup(json_string_value(v), json_string_length(v))) == NULL)
        return topo_err_nomem(err, "exec credential");
    return 0;
}

int topo_exec_credential_decode(topo_exec_credential *out, const char *text, size_t len,
                                const char *api_version, topo_err *err)
{
    int error = 0;
    json_t *root = NULL;
    topo_exec_credential c = {0};

    memset(out, 0, sizeof(*out));
    if ((error = topo_codec_json_parse(&root, text, len, "stdout", err)) < 0) {
        topo_err_wrap(err, "decoding stdout (not an ExecCredential)");
        goto cleanup;
    }
    if (!json_is_object(root)) {
        error = topo_err_set(err, TOPO_EINVALID,
                             "decoding stdout: not a JSON object (not an ExecCredential)");
        goto cleanup;
    }
    const json_t *kind = json_object_get(root, "kind");
    if (!json_is_string(kind) || strcmp(json_string_value(kind), "ExecCredential") != 0) {
        error = topo_err_set(err, TOPO_EINVALID, "kind: %s%.64s%s, want ExecCredential",
                             json_is_string(kind) ? "is \"" : "missing",
                             json_is_string(kind) ? json_string_value(kind) : "",
                             json_is_string(kind) ? "\"" : "");
        goto cleanup;
    }
    const json_t *av = json_object_get(root, "apiVersion");
    if (!json_is_string(av) || strcmp(json_string_value(av), api_version) != 0) {
        error = topo_err_set(err, TOPO_EINVALID,
                             "apiVersion: the plugin is configured to use API version %s, "
                             "it returned %s%.80s%s",
                             api_version, json_is_string(av) ? "version \"" : "none",
                             json_is_string(av) ? json_string_value(av) : "",
                             json_is_string(av) ? "\"" : "");
        goto cleanup;
    }
    const json_t *status = json_object_get(root, "status");
    if (status == NULL || json_is_null(status)) {
        error = topo_err_set(err, TOPO_EINVALID, "status: missing (the plugin returned no "
                                                 "credential)");
        goto cleanup;
    }
    if (!json_is_object(status)) {
        error = topo_err_set(err, TOPO_EINVALID, "status: must be an object");
        goto cleanup;
    }
    if ((error = status_string(&c.token, status, "token", err)) < 0 ||
        (error = status_string(&c.client_cert_data, status, "clientCertificateData", err)) < 0 ||
        (error = status_string(&c.client_key_data, status, "clientKeyData", err)) < 0)
        goto cleanup;
    if (c.token == NULL && c.client_cert_data == NULL && c.client_key_data == NULL) {
        error = topo_err_set(err, TOPO_EINVALID, "status: neither a token nor "
                                                 "clientCertificateData and clientKeyData");
        goto cleanup;
    }
    if ((c.client_cert_data == NULL) != (c.client_key_data == NULL)) {
        error = topo_err_set(err, TOPO_EINVALID, "status: %s without %s",
                             c.client_cert_data != NULL ? "clientCertificateData"
                                                        : "clientKeyData",
                             c.client_cert_data != NULL ? "clientKeyData"
                                                        : "clientCertificateData");
        goto cleanup;
    }
    if (c.token != NULL && (error = net_http_token_check(c.token, strlen(c.token), err)) < 0) {
        topo_err_wrap(err, "status.token");
        goto cleanup;
    }
    if (c.client_cert_data != NULL &&
        (error = net_pem_keypair_check(c.client_cert_data, c.client_key_data,
                                        "status.clientCertificateData", "status.clientKeyData",
                                        err)) < 0)
        goto cleanup;
    const json_t *exp = json_object_get(status, "expirationTimestamp");
    if (exp != NULL && !json_is_null(exp)) {
        int64_t t = 0;
        if (!json_is_string(exp) || topo_decode_parse_time(&t, json_string_value(exp)) < 0) {
            error = topo_err_set(err, TOPO_EINVALID,
                                 "status.expirationTimestamp: %s%.64s%s is not an RFC 3339 time",
                                 json_is_string(exp) ? "\"" : "",
                                 json_is_string(exp) ? json_string_value(exp) : "the value",
                                 json_is_string(exp) ? "\"" : "");
            goto cleanup;
        }
        /* 0 means "no expiry" here; the epoch itself is long past anyway */
        c.expires = t > 0 ? t : 1;
    }
    *out = c;
    memset(&c, 0, sizeof(c));

cleanup:
    if (err != NULL)
        err->source = NULL;
    topo_exec_credential_dispose(&c);
    json_decref(root);
    return error;
}

/* ------------------------------------------------------------------ the object */

/* TOPO_EXEC_TIMEOUT_MS, or 0 when unset or not a positive number. */
static long timeout_from_env(void)
{
    const char *v = getenv(TIMEOUT_ENV);
    if (v == NULL || v[0] == '\0')
        return 0;
    char *end = NULL;
    errno = 0;
    long ms = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || ms <= 0) {
        topo_log(TOPO_LOG_WARN, "exec plugin: %s=\"%.32s\" is not a number of milliseconds; "
                                "using the defaults",
                 TIMEOUT_ENV, v);
        return 0;
    }
    return ms;
}

int topo_exec_cred_create(topo_exec_cred **out, topo_exec_spec *spec, topo_err *err)
{
    topo_exec_cred *c = NULL;

    *out = NULL;
    if (spec->api_version == NULL || spec->command == NULL || spec->interactive_mode == 0) {
        topo_exec_spec_dispose(spec);
        return topo_err_set(err, TOPO_EINVALID,
                            "exec plugin: apiVersion, command and interactiveMode are required");
    }
    if ((c = calloc(1, sizeof(*c))) == NULL || pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        topo_exec_spec_dispose(spec);
        return topo_err_nomem(err, "exec plugin");
    }
    c->spec = *spec;
    memset(spec, 0, sizeof(*spec));
    long env_ms = timeout_from_env();
    c->timeout_ms = env_ms > 0 ? env_ms : TOPO_EXEC_TIMEOUT_MS_DEFAULT;
    c->interactive_timeout_ms = env_ms > 0 ? env_ms : TOPO_EXEC_INTERACTIVE_TIMEOUT_MS_DEFAULT;
    c->backoff_base_ms = TOPO_EXEC_FAILURE_BACKOFF_MS_DEFAULT;
    c->backoff_max_ms = TOPO_EXEC_FAILURE_BACKOFF_MAX_MS_DEFAULT;
    atomic_init(&c->refs, 1u);
    atomic_init(&c->runs, 0u);
    *out = c;
    return 0;
}

topo_exec_cred *topo_exec_cred_incref(topo_exec_cred *c)
{
    if (c != NULL)
        atomic_fetch_add(&c->refs, 1u);
    return c;
}

void topo_exec_cred_free(topo_exec_cred *c)
{
    if (c == NULL || atomic_fetch_sub(&c->refs, 1u) != 1u)
        return;
    pthread_mutex_destroy(&c->mu);
    topo_exec_credential_dispose(&c->cached);
    topo_exec_spec_dispose(&c->spec);
    free(c);
}

const char *topo_exec_cred_command(const topo_exec_cred *c)
{
    return c != NULL ? c->spec.command : NULL;
}

const topo_exec_spec *topo_exec_cred_spec(const topo_exec_cred *c)
{
    return c != NULL ? &c->spec : NULL;
}

uint64_t topo_exec_cred_runs(const topo_exec_cred *c)
{
    return c != NULL ? atomic_load(&c->runs) : 0;
}

void topo_exec_cred_set_failure_backoff(topo_exec_cred *c, long base_ms, long max_ms)
{
    pthread_mutex_lock(&c->mu);
    c->backoff_base_ms = base_ms > 0 ? base_ms : TOPO_EXEC_FAILURE_BACKOFF_MS_DEFAULT;
    c->backoff_max_ms = max_ms >= c->backoff_base_ms ? max_ms : c->backoff_base_ms;
    pthread_mutex_unlock(&c->mu);
}

/* ------------------------------------------------------------------ running */

/* Whether the plugin gets our stdin (client-go's isInteractive). */
static int interactive_now(int *out, const topo_exec_cred *c, topo_err *err)
{
    *out = 0;
    switch (c->spec.interactive_mode) {
    case TOPO_EXEC_NEVER:
        return 0;
    case TOPO_EXEC_IF_AVAILABLE:
        *out = isatty(STDIN_FILENO);
        return 0;
    case TOPO_EXEC_ALWAYS:
        if (!isatty(STDIN_FILENO))
            return topo_err_set(err, TOPO_EINVALID,
                                "exec plugin %s: cannot support interactive mode (interactiveMode "
                                "Always): standard input is not a terminal",
                                c->spec.command);
        *out = 1;
        return 0;
    }
    return topo_err_set(err, TOPO_EINVALID, "exec plugin %s: unknown interactive mode",
                        c->spec.command);
}

/* spec.cluster: what client-go's ExecCredential carries with
 * provideClusterInfo (certificate-authority-data base64, as Go encodes
 * []byte; the CA file read now, as client-go reads it). */
static int cluster_info(json_t *cluster, const topo_exec_spec *s, topo_err *err)
{
    int error = 0;
    char *file_pem = NULL, *b64 = NULL;
    json_t *config = NULL;
    const char *pem = s->ca_data;

    if (s->ca_file != NULL && pem == NULL) {
        if ((error = topo_codec_read_file(&file_pem, NULL, s->ca_file, TOPO_MAX_CREDENTIAL_FILE,
                                          err)) < 0) {
            topo_err_wrap(err, "certificate-authority for provideClusterInfo");
            goto cleanup;
        }
        pem = file_pem;
    }
    if (s->server != NULL &&
        json_object_set_new(cluster, "server", json_string(s->server)) < 0)
        goto oom;
    if (pem != NULL) {
        size_t n = strlen(pem);
        if (n > TOPO_MAX_CREDENTIAL_FILE || (b64 = malloc(4 * ((n + 2) / 3) + 1)) == NULL)
            goto oom;
        EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)pem, (int)n);
        if (json_object_set_new(cluster, "certificate-authority-data", json_string(b64)) < 0)
            goto oom;
    }
    if (s->insecure_skip_verify &&
        json_object_set_new(cluster, "insecure-skip-tls-verify", json_true()) < 0)
        goto oom;
    if (s->cluster_config != NULL) {
        json_error_t jerr;
        if (topo_json_load(&config, s->cluster_config, strlen(s->cluster_config),
                           JSON_DECODE_ANY, &jerr) < 0 ||
            json_object_set(cluster, "config", config) < 0)
            goto oom;
    }
    goto cleanup;
oom:
    error = topo_err_nomem(err, "exec plugin");
cleanup:
    json_decref(config);
    free(b64);
    free(file_pem);
    return error;
}

/* "KUBERNETES_EXEC_INFO=<ExecCredential>", malloc'd. */
static int exec_info(char **out, const topo_exec_cred *c, int interactive, topo_err *err)
{
    int error = 0;
    json_t *cred = json_object(), *spec = json_object(), *cluster = NULL;
    char *text = NULL;

    *out = NULL;
    if (cred == NULL || spec == NULL ||
        json_object_set_new(cred, "kind", json_string("ExecCredential")) < 0 ||
        json_object_set_new(cred, "apiVersion", json_string(c->spec.api_version)) < 0 ||
        json_object_set_new(spec, "interactive", json_boolean(interactive)) < 0)
        goto oom;
    if (c->spec.provide_cluster_info) {
        if ((cluster = json_object()) == NULL)
            goto oom;
        if ((error = cluster_info(cluster, &c->spec, err)) < 0)
            goto cleanup;
        if (json_object_set(spec, "cluster", cluster) < 0)
            goto oom;
    }
    if (json_object_set(cred, "spec", spec) < 0 ||
        (text = topo_json_dumps(cred, JSON_COMPACT)) == NULL)
        goto oom;
    size_t n = strlen(EXEC_INFO_ENV) + 1 + strlen(text) + 1;
    if ((*out = malloc(n)) == NULL)
        goto oom;
    snprintf(*out, n, "%s=%s", EXEC_INFO_ENV, text);
    goto cleanup;
oom:
    error = topo_err_nomem(err, "exec plugin");
cleanup:
    free(text);
    json_decref(cluster);
    json_decref(spec);
    json_decref(cred);
    return error;
}

/* A plugin's failure: TOPO_EAUTH (out of memory stays itself), so that a
 * caller tells "no credential" from its own errors and does not retry. */
static int run_error(const topo_exec_cred *c, int code, const topo_err *why, topo_err *err)
{
    const topo_exec_spec *s = &c->spec;
    int missing = code == TOPO_ENOTFOUND;
    if (code != TOPO_ENOMEM)
        code = TOPO_EAUTH;
    if (missing)
        return topo_err_set(err, code,
                            "exec plugin: %s (a client-go credential plugin that is not "
                            "installed, or not in PATH)%s%s",
                            why->text, s->install_hint != NULL ? ": " : "",
                            s->install_hint != NULL ? s->install_hint : "");
    return topo_err_set(err, code, "exec plugin %s: %s", s->command, why->text);
}

/* Runs the plugin and caches what it printed; c->mu held. */
static int run_locked(topo_exec_cred *c, topo_err *err)
{
    int error = 0, interactive = 0, exit_status = -1;
    const topo_exec_spec *s = &c->spec;
    const char **argv = NULL, **env = NULL;
    char *info = NULL, **env_lines = NULL;
    topo_buf out = TOPO_BUF_INIT(TOPO_MAX_EXEC_OUTPUT + 1u); /* the runner enforces the limit */
    topo_exec_credential fresh = {0};
    topo_err why = TOPO_ERR_INIT;

    atomic_fetch_add(&c->runs, 1u);
    if ((error = interactive_now(&interactive, c, err)) < 0 ||
        (error = exec_info(&info, c, interactive, err)) < 0)
        goto cleanup;
    argv = calloc(s->nargs + 2, sizeof(*argv));
    env = calloc(s->nenv + 2, sizeof(*env));
    env_lines = calloc(s->nenv + 1, sizeof(*env_lines));
    if (argv == NULL || env == NULL || env_lines == NULL)
        goto oom;
    argv[0] = s->command;
    for (size_t i = 0; i < s->nargs; i++)
        argv[i + 1] = s->args[i];
    for (size_t i = 0; i < s->nenv; i++) {
        size_t n = strlen(s->env[i].name) + strlen(s->env[i].value) + 2;
        if ((env_lines[i] = malloc(n)) == NULL)
            goto oom;
        snprintf(env_lines[i], n, "%s=%s", s->env[i].name, s->env[i].value);
        env[i] = env_lines[i];
    }
    env[s->nenv] = info;

    topo_exec_run_opts o = {.argv = argv,
                            .env = env,
                            .interactive = interactive,
                            .timeout_ms = interactive ? c->interactive_timeout_ms : c->timeout_ms,
                            .max_output = TOPO_MAX_EXEC_OUTPUT};
    if ((error = net_exec_run(&out, &exit_status, &o, &why)) < 0) {
        error = run_error(c, error, &why, err);
        goto cleanup;
    }
    if (exit_status != 0) {
        error = topo_err_set(err, TOPO_EAUTH,
                             "exec plugin: executable %s failed with exit code %d (its messages "
                             "are on standard error above)",
                             s->command, exit_status);
        goto cleanup;
    }
    if ((error = topo_exec_credential_decode(&fresh, out.ptr != NULL ? out.ptr : "", out.len,
                                             s->api_version, &why)) < 0) {
        error = run_error(c, error, &why, err);
        goto cleanup;
    }
    fresh.generation = ++c->generations;
    topo_exec_credential_dispose(&c->cached);
    c->cached = fresh;
    memset(&fresh, 0, sizeof(fresh));
    goto cleanup;
oom:
    error = topo_err_nomem(err, "exec plugin");
cleanup:
    if (out.ptr != NULL)
        net_http_wipe(out.ptr, out.len);
    topo_buf_dispose(&out);
    for (size_t i = 0; env_lines != NULL && i < s->nenv; i++)
        net_http_token_free(env_lines[i]);
    free(env_lines);
    free(env);
    free(argv);
    free(info);
    topo_exec_credential_dispose(&fresh);
    return error;
}

static int expired(const topo_exec_credential *cred)
{
    return cred->expires != 0 && (int64_t)time(NULL) >= cred->expires;
}

/* Runs the plugin, or answers its last failure again while that is
 * remembered (base, doubled per failure in a row, up to max, counted from
 * the end of the failed run); c->mu held. */
static int run_or_remembered(topo_exec_cred *c, topo_err *err)
{
    if (c->retry_ns != 0 && (uint64_t)topo_clock_ns() < c->retry_ns) {
        if (err != NULL)
            *err = c->failure;
        return c->failure.code;
    }
    topo_err local = TOPO_ERR_INIT;
    int error = run_locked(c, &local);
    if (err != NULL)
        *err = local;
    if (error == 0) {
        c->failures = 0;
        c->retry_ns = 0;
        return 0;
    }
    if (error == TOPO_EAUTH) {
        long ms = c->backoff_base_ms;
        if (c->failures < 64)
            c->failures++;
        for (unsigned int i = 1; i < c->failures && ms < c->backoff_max_ms; i++)
            ms *= 2;
        if (ms > c->backoff_max_ms)
            ms = c->backoff_max_ms;
        c->failure = local;
        c->retry_ns = (uint64_t)topo_clock_ns() + (uint64_t)ms * 1000000u;
        topo_log(TOPO_LOG_INFO, "exec plugin %s: failed; not run again for %ld ms",
                 c->spec.command, ms);
    }
    return error;
}

/* Runs the plugin when nothing usable is cached, or (renew) when *cur is
 * still the cached credential the server refused; then hands the cached
 * credential out when *cur is older. Decided under the lock, so that
 * clients refused together run the plugin once. */
static int current(topo_exec_credential *cur, topo_exec_cred *c, int renew, topo_err *err)
{
    int error = 0;
    pthread_mutex_lock(&c->mu);
    int refused = renew && cur->generation != 0 && cur->generation == c->cached.generation;
    if (refused || c->cached.generation == 0 || expired(&c->cached)) {
        if ((error = run_or_remembered(c, err)) < 0)
            goto cleanup;
    }
    if (cur->generation != c->cached.generation) {
        if (credential_copy(cur, &c->cached) < 0) {
            error = topo_err_nomem(err, "exec plugin");
            goto cleanup;
        }
        error = 1;
    }
cleanup:
    pthread_mutex_unlock(&c->mu);
    return error;
}

int topo_exec_cred_get(topo_exec_credential *cur, topo_exec_cred *c, topo_err *err)
{
    return current(cur, c, 0, err);
}

int topo_exec_cred_renew(topo_exec_credential *cur, topo_exec_cred *c, topo_err *err)
{
    return current(cur, c, 1, err);
}
