/* Matching host names to node names up to their domain (shortnames.h):
 * the candidates sorted by short name, then each other name looked up by
 * binary search, so a plan of a million names matches in n log n. */
#include "shortnames.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/error.h"

typedef struct cand {
    const char *name;
    size_t short_len; /* up to the first '.', or the whole name */
    size_t index;
} cand;

static size_t short_len(const char *name)
{
    const char *dot = strchr(name, '.');
    return dot ? (size_t)(dot - name) : strlen(name);
}

/* Orders by short name, then by whole name (a candidate without a domain
 * first among those with its short name). */
static int cmp_short(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c != 0 ? c : (alen > blen) - (alen < blen);
}

static int by_short_then_name(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    int c = cmp_short(a->name, a->short_len, b->name, b->short_len);
    return c != 0 ? c : strcmp(a->name, b->name);
}

/* The first candidate whose short name is not below key's. */
static size_t lower_bound(const cand *c, size_t n, const char *key, size_t key_len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_short(c[mid].name, c[mid].short_len, key, key_len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int plan_shortnames_match(size_t *same_as, const char *const *names, const unsigned char *candidate,
                          size_t n, plan_shortnames_ambiguous ambiguous, void *payload)
{
    size_t ncands = 0, nfound = 0;
    cand *cands = malloc((n ? n : 1) * sizeof(*cands));
    size_t *found = malloc((n ? n : 1) * sizeof(*found));
    int rc = 0;
    if (!cands || !found) {
        rc = TOPO_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        same_as[i] = SIZE_MAX;
        if (candidate[i])
            cands[ncands++] = (cand){names[i], short_len(names[i]), i};
    }
    qsort(cands, ncands, sizeof(*cands), by_short_then_name);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (candidate[i])
            continue;
        size_t len = short_len(names[i]);
        int has_domain = names[i][len] != '\0';
        nfound = 0;
        /* Only a name with a domain and one without can be the same host. */
        for (size_t k = lower_bound(cands, ncands, names[i], len);
             k < ncands && cmp_short(cands[k].name, cands[k].short_len, names[i], len) == 0; k++)
            if ((cands[k].name[cands[k].short_len] != '\0') != has_domain)
                found[nfound++] = cands[k].index;
        if (nfound == 1)
            same_as[i] = found[0];
        else if (nfound > 1 && ambiguous)
            rc = ambiguous(i, found, nfound, payload);
    }
done:
    free(cands);
    free(found);
    return rc;
}
