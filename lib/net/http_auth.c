/* Credentials of the HTTP client: reading token, username and password
 * files (one code path for all three, re-read on a period and after a 401),
 * the Authorization header, and keeping secrets out of freed memory. */
#include "http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "topo/codec.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/str.h"

/* Longest Authorization scheme word accepted. */
#define SCHEME_MAX 32

void net_http_wipe(void *p, size_t n)
{
    /* Through a volatile pointer, so the stores are not optimised away as
     * dead before free(). */
    volatile unsigned char *v = p;
    while (n-- > 0)
        *v++ = 0;
}

void net_http_token_free(char *token)
{
    if (token == NULL)
        return;
    net_http_wipe(token, strlen(token));
    free(token);
}

int net_http_token_check(const char *token, size_t len, topo_err *err)
{
    if (len == 0)
        return topo_err_set(err, TOPO_EINVALID, "bearer token is empty");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)token[i];
        if (c <= 0x20 || c >= 0x7f)
            return topo_err_set(err, TOPO_EINVALID,
                                "bearer token has a space, control or non-ASCII byte at offset %zu",
                                i);
    }
    return 0;
}

/* A password or username: non-empty, no control byte (it goes through
 * base64, so only what would be wrong in the credential itself is refused). */
static int plain_check(const char *s, size_t len, topo_http_secret_kind kind, topo_err *err)
{
    const char *what = kind == TOPO_HTTP_SECRET_USERNAME ? "username" : "password";
    if (len == 0)
        return topo_err_set(err, TOPO_EINVALID, "%s is empty", what);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return topo_err_set(err, TOPO_EINVALID, "%s has a control byte at offset %zu", what, i);
        if (c == ':' && kind == TOPO_HTTP_SECRET_USERNAME)
            return topo_err_set(err, TOPO_EINVALID, "username has a ':' at offset %zu (RFC 7617)",
                                i);
    }
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int net_http_secret_read(char **out, const char *path, topo_http_secret_kind kind, topo_err *err)
{
    int error = 0;
    char *text = NULL;
    size_t len = 0, full = 0, start = 0;

    *out = NULL;
    error = topo_codec_read_file(&text, &len, path, TOPO_MAX_CREDENTIAL_FILE, err);
    if (error < 0)
        goto cleanup;
    full = len;
    if (kind == TOPO_HTTP_SECRET_TOKEN) {
        while (start < len && is_space(text[start]))
            start++;
        while (len > start && is_space(text[len - 1]))
            len--;
        error = net_http_token_check(text + start, len - start, err);
    } else {
        /* `echo secret > file` leaves one line end; nothing else is ours
         * to remove. */
        if (len > 0 && text[len - 1] == '\n')
            len--;
        if (len > 0 && text[len - 1] == '\r')
            len--;
        error = plain_check(text, len, kind, err);
    }
    if (error < 0) {
        topo_err_wrap(err, "%s", path);
        goto cleanup;
    }
    if (start > 0)
        memmove(text, text + start, len - start);
    len -= start;
    text[len] = '\0';
    *out = text;
    text = NULL;

cleanup:
    if (text != NULL) {
        net_http_wipe(text, full);
        free(text);
    }
    return error;
}

/* --- one credential ------------------------------------------------------- */

static void secret_dispose(topo_http_secret *s)
{
    net_http_token_free(s->value);
    free(s->file);
    s->value = NULL;
    s->file = NULL;
}

/* Re-reads the file of s. Returns 1 when the value changed, 0 when it did
 * not or could not be read (the current one is kept: an unreadable file
 * during a rotation must not lose a working credential). */
static int secret_reload(topo_http_auth *a, topo_http_secret *s)
{
    char *fresh = NULL;
    topo_err terr = TOPO_ERR_INIT;

    if (s->file == NULL)
        return 0;
    s->read_ns = (uint64_t)topo_clock_ns();
    if (net_http_secret_read(&fresh, s->file, s->kind, &terr) < 0) {
        topo_log(TOPO_LOG_WARN, "http: re-reading the %s: %s (keeping the current one)", s->what,
                 terr.text);
        return 0;
    }
    a->reloads++;
    int changed = s->value == NULL || strcmp(s->value, fresh) != 0;
    net_http_token_free(s->value);
    s->value = fresh;
    return changed;
}

/* The first read: a file (when given) must be readable, unless a fixed value
 * stands in for it (the token: a kubeconfig may carry both). */
static int secret_init(topo_http_secret *s, topo_http_secret_kind kind, const char *what,
                       const char *file, const char *fixed, topo_err *err)
{
    int error = 0;
    s->kind = kind;
    s->what = what;
    if (file != NULL) {
        if ((s->file = topo_strdup(file)) == NULL)
            return topo_err_nomem(err, "http");
        s->read_ns = (uint64_t)topo_clock_ns();
        topo_err terr = TOPO_ERR_INIT;
        error = net_http_secret_read(&s->value, s->file, kind, &terr);
        if (error == 0)
            return 0;
        if (error == TOPO_ENOMEM || fixed == NULL) {
            if (err != NULL)
                *err = terr;
            return topo_err_wrap(err, "http: %s file", what);
        }
        topo_log(TOPO_LOG_WARN, "http: %s file: %s (using the fixed one until it can be read)",
                 what, terr.text);
    }
    if (fixed != NULL) {
        error = kind == TOPO_HTTP_SECRET_TOKEN ? net_http_token_check(fixed, strlen(fixed), err)
                                               : plain_check(fixed, strlen(fixed), kind, err);
        if (error < 0)
            return topo_err_wrap(err, "http: %s", kind == TOPO_HTTP_SECRET_TOKEN ? "token" : what);
        if ((s->value = topo_strdup(fixed)) == NULL)
            return topo_err_nomem(err, "http");
    }
    return 0;
}

/* --- the credentials of a client ------------------------------------------ */

/* An RFC 9110 token: the scheme word of the Authorization header. */
static int scheme_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > SCHEME_MAX)
        return 0;
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              strchr("!#$%&'*+-.^_`|~", c) != NULL))
            return 0;
    }
    return 1;
}

static int auth_options(const topo_http_opts *o, topo_err *err)
{
    int basic = o->username != NULL || o->username_file != NULL || o->password_file != NULL;
    if (o->exec != NULL &&
        (basic || o->token != NULL || o->token_file != NULL || o->client_cert_file != NULL ||
         o->client_cert_data != NULL || o->token_scheme != NULL))
        return topo_err_set(err, TOPO_EINVALID,
                            "http: an exec credential plugin excludes a token, Basic "
                            "credentials and a client certificate");
    if (basic && (o->token != NULL || o->token_file != NULL))
        return topo_err_set(err, TOPO_EINVALID,
                            "http: a token and Basic credentials (username, password) exclude "
                            "each other");
    if (basic && o->password_file == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: a username without a password file");
    if (basic && o->username == NULL && o->username_file == NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: a password file without a username");
    if (basic && o->token_scheme != NULL)
        return topo_err_set(err, TOPO_EINVALID, "http: token_scheme without a token");
    if (o->token_scheme != NULL && !scheme_ok(o->token_scheme))
        return topo_err_set(err, TOPO_EINVALID,
                            "http: token_scheme \"%.40s\" is not a single word (RFC 9110 token)",
                            o->token_scheme);
    return 0;
}

int net_http_auth_init(topo_http_auth *a, const topo_http_opts *o, topo_err *err)
{
    int error = 0;
    memset(a, 0, sizeof(*a));
    if ((error = auth_options(o, err)) < 0)
        return error;
    a->reload_ms = o->token_reload_ms > 0 ? o->token_reload_ms : TOPO_HTTP_TOKEN_RELOAD_MS_DEFAULT;
    a->basic = o->password_file != NULL;
    a->token.what = "bearer token";
    a->exec = topo_exec_cred_incref(o->exec);
    if (a->basic) {
        if ((error = secret_init(&a->username, TOPO_HTTP_SECRET_USERNAME, "username",
                                 o->username_file, o->username, err)) < 0 ||
            (error = secret_init(&a->password, TOPO_HTTP_SECRET_PASSWORD, "password",
                                 o->password_file, NULL, err)) < 0)
            goto cleanup;
    } else {
        if ((a->scheme = topo_strdup(o->token_scheme != NULL ? o->token_scheme : "Bearer")) ==
            NULL) {
            error = topo_err_nomem(err, "http");
            goto cleanup;
        }
        if ((error = secret_init(&a->token, TOPO_HTTP_SECRET_TOKEN, "bearer token", o->token_file,
                                 o->token, err)) < 0)
            goto cleanup;
    }

cleanup:
    if (error < 0)
        net_http_auth_dispose(a);
    return error;
}

void net_http_auth_dispose(topo_http_auth *a)
{
    if (a == NULL)
        return;
    secret_dispose(&a->token);
    secret_dispose(&a->username);
    secret_dispose(&a->password);
    topo_exec_cred_free(a->exec);
    a->exec = NULL;
    topo_exec_credential_dispose(&a->exec_cur);
    free(a->scheme);
    a->scheme = NULL;
}

int net_http_auth_has_file(const topo_http_auth *a)
{
    return a->token.file != NULL || a->username.file != NULL || a->password.file != NULL;
}

void net_http_auth_refresh_if_due(topo_http_auth *a)
{
    topo_http_secret *all[] = {&a->token, &a->username, &a->password};
    uint64_t now = (uint64_t)topo_clock_ns(), period = (uint64_t)a->reload_ms * 1000000u;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (all[i]->file != NULL && now - all[i]->read_ns >= period)
            secret_reload(a, all[i]);
    }
}

int net_http_auth_renewable(const topo_http_auth *a)
{
    return a->exec != NULL || net_http_auth_has_file(a);
}

/* exec_cur was replaced: its token becomes the header's, its certificate
 * is to be set (or unset) on the connection when there is or was one. */
static int exec_apply(topo_http_auth *a)
{
    char *token = NULL;
    if (a->exec_cur.token != NULL && (token = topo_strdup(a->exec_cur.token)) == NULL)
        return TOPO_ENOMEM;
    net_http_token_free(a->token.value);
    a->token.value = token;
    int has_cert = a->exec_cur.client_cert_data != NULL;
    if (has_cert || a->exec_had_cert)
        a->exec_cert_changed = 1;
    a->exec_had_cert = has_cert;
    return 0;
}

int net_http_auth_prepare(topo_http_auth *a, topo_err *err)
{
    net_http_auth_refresh_if_due(a);
    if (a->exec == NULL)
        return 0;
    int rc = topo_exec_cred_get(&a->exec_cur, a->exec, err);
    if (rc < 0)
        return topo_err_wrap(err, "getting credentials");
    if (rc == 1 && exec_apply(a) < 0)
        return topo_err_nomem(err, "http");
    return 0;
}

int net_http_auth_reload(topo_http_auth *a, long status)
{
    /* Each file once, whatever the others gave: a rotated Secret changes
     * the username and the password together. */
    int changed = secret_reload(a, &a->token);
    changed |= secret_reload(a, &a->username);
    changed |= secret_reload(a, &a->password);
    /* client-go renews a plugin's credential on 401 only: a 403 is RBAC. */
    if (a->exec != NULL && status == 401) {
        topo_err terr = TOPO_ERR_INIT;
        int rc = topo_exec_cred_renew(&a->exec_cur, a->exec, &terr);
        if (rc < 0)
            topo_log(TOPO_LOG_WARN, "http: refreshing credentials after a 401: %s", terr.text);
        else if (rc == 1 && exec_apply(a) == 0)
            changed = 1;
    }
    return changed;
}

/* "Authorization: Basic " + base64(user ":" password). */
static int basic_header(char **out, const topo_http_auth *a)
{
    static const char prefix[] = "Authorization: Basic ";
    size_t ulen = strlen(a->username.value), plen = strlen(a->password.value);
    size_t raw_len = ulen + 1 + plen;
    size_t enc_len = 4 * ((raw_len + 2) / 3);
    char *raw = malloc(raw_len + 1);
    char *line = malloc(sizeof(prefix) + enc_len + 1);
    int error = 0;
    if (raw == NULL || line == NULL || raw_len > (size_t)INT32_MAX / 2) {
        error = TOPO_ENOMEM;
        goto cleanup;
    }
    memcpy(raw, a->username.value, ulen);
    raw[ulen] = ':';
    memcpy(raw + ulen + 1, a->password.value, plen);
    memcpy(line, prefix, sizeof(prefix) - 1);
    /* EVP_EncodeBlock writes the padded encoding and a NUL. */
    EVP_EncodeBlock((unsigned char *)line + sizeof(prefix) - 1, (const unsigned char *)raw,
                    (int)raw_len);
    *out = line;
    line = NULL;

cleanup:
    if (raw != NULL) {
        net_http_wipe(raw, raw_len);
        free(raw);
    }
    free(line); /* only on failure, when it holds nothing */
    return error;
}

int net_http_auth_header(char **out, const topo_http_auth *a)
{
    *out = NULL;
    if (a->basic)
        return a->username.value != NULL && a->password.value != NULL ? basic_header(out, a) : 0;
    if (a->token.value == NULL)
        return 0;
    size_t n = strlen("Authorization: ") + strlen(a->scheme) + 1 + strlen(a->token.value);
    char *line = malloc(n + 1);
    if (line == NULL)
        return TOPO_ENOMEM;
    snprintf(line, n + 1, "Authorization: %s %s", a->scheme, a->token.value);
    *out = line;
    return 0;
}
