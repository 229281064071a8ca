/* Kueue's rules for a Topology's level list (the label syntax itself is
 * topo/labelsyntax.h's, in lib/util). */
#include "kueue_internal.h"

#include <stdio.h>
#include <string.h>

#include "topo/labelsyntax.h"
#include "topo/limits.h"

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
        if (!topo_label_key_valid(l, reason, sizeof reason)) {
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
