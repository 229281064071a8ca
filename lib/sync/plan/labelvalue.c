/* Label values from infrastructure names (include/topo/labelvalue.h). */
#include "topo/labelsyntax.h"
#include "topo/labelvalue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/kueue.h"
#include "topo/str.h"

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int is_inner(char c)
{
    return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

/* base (cut so that the suffix fits, trailing non-alphanumerics dropped)
 * followed by "-<hex>" of the raw name's hash, hex_len digits. */
static void with_suffix(char out[TOPO_MAX_LABEL_VALUE + 1], const char *base, const char *raw,
                        int hex_len)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, topo_str_hash(raw));
    hex[hex_len] = '\0';
    size_t room = TOPO_MAX_LABEL_VALUE - 1 - (size_t)hex_len;
    size_t n = strlen(base);
    if (n > room)
        n = room;
    while (n > 0 && !is_alnum(base[n - 1]))
        n--;
    if (n == 0) {
        snprintf(out, TOPO_MAX_LABEL_VALUE + 1, "%s", hex);
        return;
    }
    snprintf(out, TOPO_MAX_LABEL_VALUE + 1, "%.*s-%s", (int)n, base, hex);
}

/* The replaced and trimmed form of raw, any length, into a malloc'd
 * string; NULL when out of memory. */
static char *sanitise(const char *raw)
{
    size_t n = strlen(raw);
    char *s = topo_strndup(raw, n);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!is_inner(s[i]))
            s[i] = '-';
    size_t start = 0;
    while (start < n && !is_alnum(s[start]))
        start++;
    while (n > start && !is_alnum(s[n - 1]))
        n--;
    memmove(s, s + start, n - start);
    s[n - start] = '\0';
    return s;
}

/* sanitise(raw) followed by the hash suffix of hashed (the domain's key),
 * hex_len digits; -1 when out of memory. */
static int suffixed_value(char out[TOPO_MAX_LABEL_VALUE + 1], const char *raw, const char *hashed,
                          int hex_len)
{
    char *s = sanitise(raw);
    if (!s)
        return -1;
    with_suffix(out, s, hashed, hex_len);
    free(s);
    return 0;
}

int topo_labelvalue_normalize(char out[TOPO_MAX_LABEL_VALUE + 1], const char *raw)
{
    if (*raw != '\0' && topo_label_value_valid(raw, NULL, 0)) {
        snprintf(out, TOPO_MAX_LABEL_VALUE + 1, "%s", raw);
        return 0;
    }
    /* Always suffixed, never only on a collision: "rack 1" reads
     * "rack-1-<hash>" whether or not another domain is named "rack-1", so
     * no other domain's arrival can change it. Out of memory for the copy:
     * the hash-only form needs none. */
    if (suffixed_value(out, raw, raw, TOPO_LABELVALUE_HASH_LEN) < 0)
        with_suffix(out, "", raw, TOPO_LABELVALUE_HASH_LEN);
    return 1;
}

/* One domain: its raw name, and its identity: unscoped, the raw name
 * itself; scoped, the key "<length of scope>:<scope><raw>" (the length
 * makes the split between scope and name unambiguous). The hash suffix is
 * the key's, so a value depends on the domain's own scope and name only. */
typedef struct entry {
    const char *raw;
    const char *scope; /* NULL: unscoped */
    const char *key;
    int scoped;
    char value[TOPO_MAX_LABEL_VALUE + 1];
    int suffixed;
} entry;

/* Two entries name the same domain. */
static int same_domain(const entry *x, const entry *y)
{
    return x->scoped == y->scoped && strcmp(x->key, y->key) == 0;
}

static int by_value_then_domain(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    int c = strcmp(x->value, y->value);
    if (c == 0)
        c = x->scoped - y->scoped;
    return c != 0 ? c : strcmp(x->key, y->key);
}

/* The value of one domain on its own: an unscoped name as
 * topo_labelvalue_normalize; a scoped name always suffixed with its key's
 * hash, since the value alone must tell two sites' "R1" apart (a
 * nodeSelector may name the rack without the site) and whether a second
 * site has an "R1" must not change the first's value. -1: out of memory. */
static int domain_value(entry *e)
{
    if (!e->scoped) {
        e->suffixed = topo_labelvalue_normalize(e->value, e->raw);
        return 0;
    }
    e->suffixed = 1;
    return suffixed_value(e->value, e->raw, e->key, TOPO_LABELVALUE_HASH_LEN);
}

/* The residual collisions: a valid name a source spelt like another
 * domain's suffixed value, or two suffixes that meet. Sorts the entries by
 * value; in each group of different domains sharing a value, the suffixed
 * ones get the 16-digit suffix of their key, a choice made from the group
 * alone, whatever the order of input and whatever other domains exist.
 * Returns the number of values still shared by different domains (the
 * first such pair, in value order, in *clash); -1 when out of memory. */
static long separate(entry **sorted, size_t n, const entry *clash[2])
{
    qsort(sorted, n, sizeof(*sorted), by_value_then_domain);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        int distinct = 0;
        for (; j < n && strcmp(sorted[j]->value, sorted[i]->value) == 0; j++)
            distinct |= !same_domain(sorted[j], sorted[i]);
        for (size_t k = i; distinct && k < j; k++)
            if (sorted[k]->suffixed &&
                suffixed_value(sorted[k]->value, sorted[k]->raw, sorted[k]->key, 16) < 0)
                return -1;
        i = j;
    }
    qsort(sorted, n, sizeof(*sorted), by_value_then_domain);
    long shared = 0;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(sorted[i]->value, sorted[i - 1]->value) != 0 ||
            same_domain(sorted[i], sorted[i - 1]))
            continue;
        if (shared++ == 0) {
            clash[0] = sorted[i - 1];
            clash[1] = sorted[i];
        }
    }
    return shared;
}

int topo_labelvalue_assign(const char **out, const char *const *raw, size_t n, topo_pool *pool,
                           topo_err *err)
{
    return topo_labelvalue_assign_scoped(out, raw, NULL, n, pool, err);
}

int topo_labelvalue_assign_scoped(const char **out, const char *const *raw,
                                  const char *const *scope, size_t n, topo_pool *pool,
                                  topo_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (!raw[i])
            return topo_err_set(err, TOPO_EINVALID, "label value %zu: no name", i);
    entry *entries = calloc(n ? n : 1, sizeof(*entries));
    entry **sorted = calloc(n ? n : 1, sizeof(*sorted));
    topo_pool *keys = topo_pool_create();
    int rc = 0;
    long shared = 0;
    const entry *clash[2] = {NULL, NULL};
    if (!entries || !sorted || !keys) {
        rc = topo_err_nomem(err, "label values");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = scope ? scope[i] : NULL;
        entries[i].raw = raw[i];
        entries[i].scope = s;
        entries[i].scoped = s != NULL;
        entries[i].key = s ? topo_pool_printf(keys, "%zu:%s%s", strlen(s), s, raw[i]) : raw[i];
        if (!entries[i].key || domain_value(&entries[i]) < 0) {
            rc = topo_err_nomem(err, "label values");
            goto done;
        }
        sorted[i] = &entries[i];
    }
    shared = separate(sorted, n, clash);
    if (shared < 0) {
        rc = topo_err_nomem(err, "label values");
        goto done;
    }
    if (shared > 0) {
        /* Named, with their scopes, so the operator knows what to rename. */
        rc = topo_err_set(err, TOPO_ECONFLICT,
                          "label values: \"%.200s\"%s%.200s%s and \"%.200s\"%s%.200s%s give the "
                          "same value \"%s\" even with a 16-digit hash suffix (%ld such "
                          "pairs); rename one in its source",
                          clash[0]->raw, clash[0]->scope ? " (in \"" : "",
                          clash[0]->scope ? clash[0]->scope : "", clash[0]->scope ? "\")" : "",
                          clash[1]->raw, clash[1]->scope ? " (in \"" : "",
                          clash[1]->scope ? clash[1]->scope : "", clash[1]->scope ? "\")" : "",
                          clash[0]->value, shared);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = topo_pool_strdup(pool, entries[i].value);
        if (!out[i]) {
            rc = topo_err_nomem(err, "label values");
            goto done;
        }
    }
done:
    free(entries);
    free(sorted);
    topo_pool_free(keys);
    return rc;
}
