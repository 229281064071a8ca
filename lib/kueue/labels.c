/* Kubernetes label syntax as apimachinery v0.36 checks it
 * (api/validate/content: IsLabelKey, IsLabelValue, IsDNS1123Subdomain),
 * with its messages word for word, and Kueue's rules for a Topology's
 * level list. */
#include "kueue_internal.h"

#include <stdio.h>
#include <string.h>

#include "topo/limits.h"

#define LABEL_KEY_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define LABEL_KEY_MSG                                                                        \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " \
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
    "validation is '" LABEL_KEY_FMT "')"
#define DNS_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS_SUBDOMAIN_MSG                                                                   \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "    \
    "regex used for validation is '" DNS_LABEL_FMT "(\\." DNS_LABEL_FMT ")*')"

static int alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static int matches_name(const char *s, size_t n)
{
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ — the
 * regex bounds neither a label's length nor anything but the whole. */
static int matches_subdomain(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        if (i == start || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
            return 0;
        for (size_t k = start; k < i; k++)
            if (!lower_alnum(s[k]) && s[k] != '-')
                return 0;
        start = i + 1;
    }
    return 1;
}

int topo_kueue_subdomain_valid(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    return n > 0 && n <= TOPO_MAX_NODE_NAME && matches_subdomain(s, n);
}

size_t topo_kueue_label_key_errors(const char *key, const char *msgs[TOPO_KUEUE_MAX_KEY_ERRORS])
{
    size_t n = 0, len = strlen(key);
    const char *slash = memchr(key, '/', len);
    const char *name = key;
    if (slash != NULL && memchr(slash + 1, '/', len - (size_t)(slash - key) - 1) != NULL) {
        msgs[n++] = "a valid label key " LABEL_KEY_MSG
                    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
        return n;
    }
    if (slash != NULL) {
        size_t plen = (size_t)(slash - key);
        if (plen == 0) {
            msgs[n++] = "prefix part must be non-empty";
        } else {
            if (plen > 253)
                msgs[n++] = "prefix part must be no more than 253 bytes";
            if (!matches_subdomain(key, plen))
                msgs[n++] = "prefix part " DNS_SUBDOMAIN_MSG;
        }
        name = slash + 1;
    }
    size_t nlen = strlen(name);
    if (nlen == 0)
        msgs[n++] = "name part must be non-empty";
    else if (nlen > 63)
        msgs[n++] = "name part must be no more than 63 bytes";
    if (!matches_name(name, nlen))
        msgs[n++] = "name part " LABEL_KEY_MSG;
    return n;
}

static int why_set(char *why, size_t size, const char *msg)
{
    if (why != NULL && size > 0)
        snprintf(why, size, "%s", msg);
    return 0;
}

int topo_kueue_label_key_valid(const char *key, char *why, size_t why_size)
{
    const char *msgs[TOPO_KUEUE_MAX_KEY_ERRORS];
    if (key == NULL)
        return why_set(why, why_size, "name part must be non-empty");
    if (topo_kueue_label_key_errors(key, msgs) > 0)
        return why_set(why, why_size, msgs[0]);
    return 1;
}

int topo_kueue_label_value_valid(const char *value, char *why, size_t why_size)
{
    size_t n = value != NULL ? strlen(value) : 0;
    if (n > TOPO_MAX_LABEL_VALUE)
        return why_set(why, why_size, "must be no more than 63 bytes");
    if (n > 0 && !matches_name(value, n))
        return why_set(why, why_size,
                       "a valid label must be an empty string or consist of alphanumeric "
                       "characters, '-', '_' or '.', and must start and end with an "
                       "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                       "regex used for validation is '(" LABEL_KEY_FMT ")?')");
    return 1;
}

int topo_kueue_levels_valid(const char *const *levels, size_t n, size_t *out_bad, char *why,
                            size_t why_size)
{
    char reason[512];
    size_t bad = n;
    if (n == 0 || n > TOPO_MAX_LEVELS) {
        if (why != NULL && why_size > 0)
            snprintf(why, why_size, "%zu levels (expected 1..%d)", n, TOPO_MAX_LEVELS);
        goto invalid;
    }
    for (bad = 0; bad < n; bad++) {
        const char *l = levels[bad] != NULL ? levels[bad] : "";
        if (!topo_kueue_label_key_valid(l, reason, sizeof reason)) {
            if (why != NULL && why_size > 0)
                snprintf(why, why_size, "invalid label key \"%s\": %s", l, reason);
            goto invalid;
        }
        for (size_t j = 0; j < bad; j++)
            if (strcmp(levels[j], l) == 0) {
                if (why != NULL && why_size > 0)
                    snprintf(why, why_size, "duplicate level %s", l);
                goto invalid;
            }
        /* Kueue: the hostname level, when used, is the lowest one. */
        if (strcmp(l, TOPO_KUEUE_HOSTNAME_LABEL) == 0 && bad + 1 != n) {
            if (why != NULL && why_size > 0)
                snprintf(why, why_size, "%s must be the last level", l);
            goto invalid;
        }
    }
    return 1;
invalid:
    if (out_bad != NULL)
        *out_bad = bad;
    return 0;
}

int topo_kueue_levels_parse(const char ***out, size_t *out_n, const char *csv, topo_pool *pool,
                            topo_err *err)
{
    char why[512];
    size_t n = 1, bad = 0;
    *out = NULL;
    *out_n = 0;
    for (const char *c = csv; *c != '\0'; c++)
        n += *c == ',';
    if (n > TOPO_MAX_LEVELS)
        return topo_err_set(err, TOPO_EINVALID, "%zu levels (expected 1..%d)", n, TOPO_MAX_LEVELS);
    const char **levels = topo_pool_calloc(pool, n, sizeof(*levels));
    if (levels == NULL)
        return topo_err_nomem(err, NULL);
    const char *p = csv;
    for (size_t i = 0; i < n; i++) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return topo_err_set(err, TOPO_EINVALID, "level %zu is empty", i + 1);
        if ((levels[i] = topo_pool_strndup(pool, p, len)) == NULL)
            return topo_err_nomem(err, NULL);
        p += len + (comma != NULL);
    }
    if (!topo_kueue_levels_valid(levels, n, &bad, why, sizeof why))
        return topo_err_set(err, TOPO_EINVALID, "level %zu: %s", bad + 1, why);
    *out = levels;
    *out_n = n;
    return 0;
}
