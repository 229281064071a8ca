/* Host names to node names (include/topo/namemap.h). The regular
 * expression is POSIX ERE (regex.h): no new dependency, and the same syntax
 * `grep -E` and `sed -E` take, which is what an operator writing the rule
 * will test it with. */
#include "topo/labelsyntax.h"
#include "topo/namemap.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "topo/kueue.h"
#include "topo/limits.h"
#include "topo/regex.h"
#include "topo/str.h"

struct topo_namemap {
    int strip_domain;
    char *strip_suffix;
    int lowercase;
    int has_pattern;
    regex_t re;
    char *replacement;
};

/* Largest \N the replacement uses; -1 for a malformed escape. */
static int max_backref(const char *r)
{
    int max = 0;
    for (; *r; r++) {
        if (*r != '\\')
            continue;
        r++;
        if (*r >= '0' && *r <= '9') {
            if (*r - '0' > max)
                max = *r - '0';
        } else if (*r != '\\') {
            return -1;
        }
    }
    return max;
}

int topo_namemap_create(topo_namemap **out, const topo_namemap_opts *opts, topo_err *err)
{
    *out = NULL;
    topo_namemap *m = calloc(1, sizeof(*m));
    if (!m)
        return topo_err_nomem(err, "name map");
    if (!opts) {
        *out = m;
        return 0;
    }
    m->strip_domain = opts->strip_domain;
    m->lowercase = opts->lowercase;
    int rc = 0;
    if (opts->strip_suffix && *opts->strip_suffix &&
        !(m->strip_suffix = topo_strdup(opts->strip_suffix))) {
        rc = topo_err_nomem(err, "name map");
        goto fail;
    }
    if (!opts->pattern != !opts->replacement) {
        rc = topo_err_set(err, TOPO_EINVALID, "nodeNames.%s: given without nodeNames.%s",
                          opts->pattern ? "pattern" : "replacement",
                          opts->pattern ? "replacement" : "pattern");
        goto fail;
    }
    if (!opts->pattern) {
        *out = m;
        return 0;
    }
    /* Anchored: a rule describes whole names, not a part of one. */
    size_t n = strlen(opts->pattern);
    char *anchored = malloc(n + 5);
    if (!anchored || !(m->replacement = topo_strdup(opts->replacement))) {
        free(anchored);
        rc = topo_err_nomem(err, "name map");
        goto fail;
    }
    memcpy(anchored, "^(", 2);
    memcpy(anchored + 2, opts->pattern, n);
    memcpy(anchored + 2 + n, ")$", 3);
    char why[256];
    int rerc = topo_regex_compile(&m->re, anchored, REG_EXTENDED, why, sizeof why);
    free(anchored);
    if (rerc != 0) {
        rc = topo_err_set(err, TOPO_EINVALID, "nodeNames.pattern: %s", why);
        goto fail;
    }
    m->has_pattern = 1;
    /* The anchoring group is \1 for regexec; the user's groups follow it. */
    int refs = max_backref(opts->replacement);
    if (refs < 0 || (size_t)refs > m->re.re_nsub - 1) {
        rc = topo_err_set(err, TOPO_EINVALID,
                          refs < 0 ? "nodeNames.replacement: only \\0..\\9 and \\\\ may follow a "
                                     "backslash"
                                   : "nodeNames.replacement: refers to a group the pattern does "
                                     "not have");
        goto fail;
    }
    *out = m;
    return 0;
fail:
    topo_namemap_free(m);
    return rc;
}

void topo_namemap_free(topo_namemap *map)
{
    if (!map)
        return;
    if (map->has_pattern)
        regfree(&map->re);
    free(map->strip_suffix);
    free(map->replacement);
    free(map);
}

/* The replacement with groups of the user's pattern substituted (the
 * anchoring group shifts them by one) into out. */
static int substitute(const topo_namemap *m, const char *name, const regmatch_t *g, char *out,
                      size_t out_size)
{
    size_t o = 0;
    for (const char *r = m->replacement; *r; r++) {
        const char *piece = r;
        size_t len = 1;
        if (*r == '\\') {
            r++;
            if (*r >= '0' && *r <= '9') {
                const regmatch_t *s = &g[*r - '0' + 1];
                piece = s->rm_so >= 0 ? name + s->rm_so : "";
                len = s->rm_so >= 0 ? (size_t)(s->rm_eo - s->rm_so) : 0;
            } else {
                piece = r; /* "\\" */
            }
        }
        if (o + len >= out_size)
            return TOPO_ELIMIT;
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = '\0';
    return 0;
}

int topo_namemap_apply(const topo_namemap *map, const char *name, char *out, size_t out_size,
                       topo_err *err)
{
    char buf[TOPO_MAX_NODE_NAME * 4 + 1];
    size_t n = strlen(name);
    if (n >= sizeof buf)
        return topo_err_set(err, TOPO_EINVALID, "host \"%.64s...\": name longer than %zu bytes",
                            name, sizeof buf - 1);
    memcpy(buf, name, n + 1);
    static const topo_namemap none;
    if (!map)
        map = &none;
    if (map->strip_domain) {
        char *dot = strchr(buf, '.');
        if (dot)
            *dot = '\0';
    } else if (map->strip_suffix) {
        size_t s = strlen(map->strip_suffix);
        if (n > s && strcmp(buf + n - s, map->strip_suffix) == 0)
            buf[n - s] = '\0';
    }
    if (map->lowercase)
        for (char *p = buf; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
    const char *result = buf;
    char mapped[sizeof buf];
    regmatch_t groups[11];
    if (map->has_pattern && regexec(&map->re, buf, 11, groups, 0) == 0) {
        if (substitute(map, buf, groups, mapped, sizeof mapped) != 0)
            return topo_err_set(err, TOPO_EINVALID, "host \"%s\": mapped name too long", name);
        result = mapped;
    }
    if (!topo_dns_subdomain_valid(result))
        return topo_err_set(err, TOPO_EINVALID,
                            "host \"%s\": \"%s\" is not a valid node name (lower-case "
                            "alphanumerics, '-' and '.', at most %d bytes)",
                            name, result, TOPO_MAX_NODE_NAME);
    if (strlen(result) >= out_size)
        return topo_err_set(err, TOPO_ELIMIT, "host \"%s\": node name does not fit", name);
    memcpy(out, result, strlen(result) + 1);
    return 0;
}
