/* Kubernetes name syntax as apimachinery v0.36 checks it
 * (api/validate/content: IsLabelKey, IsLabelValue, IsDNS1123Subdomain),
 * with its messages word for word, and one DNS-1123 label (a Topology's
 * name). The one implementation: every layer includes topo/labelsyntax.h. */
#include "topo/labelsyntax.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topo/error.h"
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

int topo_dns_subdomain_valid(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    return n > 0 && n <= TOPO_MAX_NODE_NAME && matches_subdomain(s, n);
}

size_t topo_label_key_errors(const char *key, const char *msgs[TOPO_LABEL_MAX_KEY_ERRORS])
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

/* Fills why (when given) and returns 0: the invalid result. */
static int whyf(char *why, size_t size, const char *fmt, ...) TOPO_PRINTF(3, 4);
static int whyf(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (why == NULL || size == 0)
        return 0;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return 0;
}

int topo_label_key_valid(const char *key, char *why, size_t why_size)
{
    const char *msgs[TOPO_LABEL_MAX_KEY_ERRORS];
    if (key == NULL)
        return whyf(why, why_size, "name part must be non-empty");
    if (topo_label_key_errors(key, msgs) > 0)
        return whyf(why, why_size, "%s", msgs[0]);
    return 1;
}

int topo_label_value_valid(const char *value, char *why, size_t why_size)
{
    size_t n = value != NULL ? strlen(value) : 0;
    if (n > TOPO_MAX_LABEL_VALUE)
        return whyf(why, why_size, "must be no more than 63 bytes");
    if (n > 0 && !matches_name(value, n))
        return whyf(why, why_size, "%s",
                    "a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                    "regex used for validation is '(" LABEL_KEY_FMT ")?')");
    return 1;
}

/* One DNS-1123 label: 1..63 of [a-z0-9-], alphanumerics at both ends (the
 * messages are topo-webhook's configuration errors, which tests assert). */
int topo_dns_label_valid(const char *name, char *why, size_t why_size)
{
    size_t n = strlen(name);
    if (n == 0)
        return whyf(why, why_size, "the name has an empty DNS label");
    if (n > 63)
        return whyf(why, why_size, "the name has a DNS label longer than 63 characters");
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(name[i]) && name[i] != '-')
            return whyf(why, why_size,
                        "the name has the invalid character '%c' (a DNS-1123 name: a-z 0-9 - "
                        "only)",
                        name[i]);
    if (!lower_alnum(name[0]) || !lower_alnum(name[n - 1]))
        return whyf(why, why_size, "the name must start and end with a lower-case letter or digit");
    return 1;
}
