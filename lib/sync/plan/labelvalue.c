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

/* normalize with a given suffix length; -1 when out of memory. */
static int normalize_hex(char out[TOPO_MAX_LABEL_VALUE + 1], const char *raw, int hex_len)
{
    if (*raw != '\0' && topo_label_value_valid(raw, NULL, 0)) {
        snprintf(out, TOPO_MAX_LABEL_VALUE + 1, "%s", raw);
        return 0;
    }
    char *s = sanitise(raw);
    if (!s)
        return -1;
    size_t n = strlen(s);
    if (n == 0 || n > TOPO_MAX_LABEL_VALUE)
        with_suffix(out, s, raw, hex_len);
    else
        memcpy(out, s, n + 1);
    free(s);
    return 1;
}

int topo_labelvalue_normalize(char out[TOPO_MAX_LABEL_VALUE + 1], const char *raw)
{
    int rc = normalize_hex(out, raw, TOPO_LABELVALUE_HASH_LEN);
    if (rc < 0) {
        /* Out of memory for the copy: the hash-only form needs none. */
        with_suffix(out, "", raw, TOPO_LABELVALUE_HASH_LEN);
        return 1;
    }
    return rc;
}

/* One domain: its raw name, and its identity (key): the raw name itself
 * when unscoped, else "<length of scope>:<scope><raw>" (the length makes
 * the split between scope and name unambiguous). The hash suffix is the
 * key's, so a scoped domain's value depends on its scope and name. */
typedef struct entry {
    const char *raw;
    const char *key;
    char value[TOPO_MAX_LABEL_VALUE + 1];
    int changed;
} entry;

static int by_value_then_key(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    int c = strcmp(x->value, y->value);
    return c != 0 ? c : strcmp(x->key, y->key);
}

static int by_raw_then_key(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    int c = strcmp(x->raw, y->raw);
    return c != 0 ? c : strcmp(x->key, y->key);
}

/* The raw name with the hash suffix of the entry's key, hex_len digits. */
static void suffixed(entry *e, int hex_len)
{
    char *base = sanitise(e->raw);
    with_suffix(e->value, base ? base : "", e->key, hex_len);
    free(base);
    e->changed = 1;
}

/* A raw name that names domains under two or more scopes: each of them
 * gets the suffix of its own key, whatever the name's normal form. */
static void qualify_repeated(entry **sorted, size_t n)
{
    qsort(sorted, n, sizeof(*sorted), by_raw_then_key);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        int repeated = 0;
        for (; j < n && strcmp(sorted[j]->raw, sorted[i]->raw) == 0; j++)
            repeated |= strcmp(sorted[j]->key, sorted[i]->key) != 0;
        for (size_t k = i; repeated && k < j; k++)
            suffixed(sorted[k], TOPO_LABELVALUE_HASH_LEN);
        i = j;
    }
}

/* Sorts the entries by value and gives every changed entry that shares its
 * value with a different domain a suffix of hex_len digits. Returns the
 * number of values still shared by different domains afterwards. */
static size_t separate(entry **sorted, size_t n, int hex_len)
{
    qsort(sorted, n, sizeof(*sorted), by_value_then_key);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        int distinct = 0;
        for (; j < n && strcmp(sorted[j]->value, sorted[i]->value) == 0; j++)
            distinct |= strcmp(sorted[j]->key, sorted[i]->key) != 0;
        for (size_t k = i; distinct && k < j; k++)
            if (sorted[k]->changed)
                suffixed(sorted[k], hex_len);
        i = j;
    }
    qsort(sorted, n, sizeof(*sorted), by_value_then_key);
    size_t shared = 0;
    for (size_t i = 1; i < n; i++)
        shared += strcmp(sorted[i]->value, sorted[i - 1]->value) == 0 &&
                  strcmp(sorted[i]->key, sorted[i - 1]->key) != 0;
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
    int rc = 0, any_scope = 0;
    if (!entries || !sorted || !keys) {
        rc = topo_err_nomem(err, "label values");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = scope ? scope[i] : NULL;
        entries[i].raw = raw[i];
        entries[i].key = s ? topo_pool_printf(keys, "%zu:%s%s", strlen(s), s, raw[i]) : raw[i];
        if (!entries[i].key) {
            rc = topo_err_nomem(err, "label values");
            goto done;
        }
        any_scope |= s != NULL;
        entries[i].changed = topo_labelvalue_normalize(entries[i].value, raw[i]);
        sorted[i] = &entries[i];
    }
    if (any_scope)
        qualify_repeated(sorted, n);
    /* A longer suffix for the (astronomically rare) names whose short hash
     * collides; a name a source made equal to another's suffixed value too. */
    if (separate(sorted, n, TOPO_LABELVALUE_HASH_LEN) > 0 && separate(sorted, n, 16) > 0) {
        rc = topo_err_set(err, TOPO_ECONFLICT,
                          "label values: two different names give the same value even with a "
                          "16-digit hash suffix");
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
