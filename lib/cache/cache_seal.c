/* Seals on pods topo-webhook answered (cache.h "seal"): who may take a
 * reservation's slot, decided by what only the record keys' holders can
 * write. */
#include "cache_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/keyring.h"

/* The sealed text: a version and each field length-prefixed, so that no
 * two sets of fields give the same text whatever they contain. */
static char *seal_message(const topo_cache_seal_fields *f, size_t *out_len)
{
    const char *v[5] = {f->namespace_name, f->podset_key, f->reservation, f->slot, f->role};
    size_t n = sizeof "topo-seal/1\n";
    for (size_t i = 0; i < 5; i++)
        n += (v[i] != NULL ? strlen(v[i]) : 0) + 24;
    char *msg = malloc(n);
    if (msg == NULL)
        return NULL;
    size_t off = (size_t)snprintf(msg, n, "topo-seal/1\n");
    for (size_t i = 0; i < 5; i++) {
        const char *s = v[i] != NULL ? v[i] : "";
        /* absent and "" differ: a pod with an empty annotation is not one
         * without it */
        off += (size_t)snprintf(msg + off, n - off, "%c%zu:%s\n", v[i] != NULL ? '+' : '-',
                                strlen(s), s);
    }
    *out_len = off;
    return msg;
}

int topo_cache_seal(char out[TOPO_SHA256_HEX_LEN + 1], const topo_keyring *keys,
                    const topo_cache_seal_fields *f, topo_err *err)
{
    size_t len = 0;
    out[0] = '\0';
    if (f == NULL || f->namespace_name == NULL || f->podset_key == NULL)
        return topo_err_set(err, TOPO_EINVALID, "seal: no namespace or PodSet");
    char *msg = seal_message(f, &len);
    if (msg == NULL)
        return topo_err_nomem(err, "seal");
    int rc = topo_keyring_sign(out, keys, msg, len, err);
    free(msg);
    return rc;
}

int topo_cache_seal_verify(const topo_keyring *keys, const char *seal,
                           const topo_cache_seal_fields *f)
{
    size_t len = 0;
    if (keys == NULL || keys->n == 0 || seal == NULL || f == NULL || f->namespace_name == NULL ||
        f->podset_key == NULL || strlen(seal) != TOPO_SHA256_HEX_LEN)
        return 0;
    char *msg = seal_message(f, &len);
    if (msg == NULL)
        return TOPO_ENOMEM;
    int ok = topo_keyring_verify(keys, seal, msg, len);
    free(msg);
    return ok;
}
