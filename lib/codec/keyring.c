/* Signing keys, first signs and any verifies (topo/keyring.h). */
#define _POSIX_C_SOURCE 200809L
#include "topo/keyring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/rand.h>

#include "topo/codec.h"
#include "topo/sha256.h"

/* Compares two MACs in time independent of where they differ. */
static int same_mac(const char *a, const char *b, size_t n)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

int topo_keyring_add(topo_keyring *ring, const void *material, size_t len, const char *what,
                     topo_err *err)
{
    unsigned char key[TOPO_KEYRING_KEY_MAX];
    size_t klen = len;

    what = what != NULL ? what : "key";
    if (material == NULL || len < TOPO_KEYRING_KEY_MIN)
        return topo_err_set(err, TOPO_EINVALID, "%s: %zu bytes, a key needs at least %d", what,
                            material != NULL ? len : 0, TOPO_KEYRING_KEY_MIN);
    if (len > TOPO_KEYRING_KEY_MAX) {
        /* What HMAC does with a key longer than its block, done once here. */
        if (topo_sha256(key, material, len) < 0)
            return topo_err_nomem(err, what);
        klen = TOPO_SHA256_LEN;
    } else {
        memcpy(key, material, len);
    }
    for (size_t i = 0; i < ring->n; i++)
        if (ring->len[i] == klen && memcmp(ring->key[i], key, klen) == 0)
            return 0;
    if (ring->n == TOPO_KEYRING_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "%s: at most %d keys", what, TOPO_KEYRING_MAX);
    memcpy(ring->key[ring->n], key, klen);
    ring->len[ring->n++] = klen;
    memset(key, 0, sizeof key);
    return 0;
}

int topo_keyring_add_file(topo_keyring *ring, const char *path, const char *what,
                          topo_err *err)
{
    char *text = NULL, name[512];
    size_t len = 0;
    int rc;

    what = what != NULL ? what : "key file";
    snprintf(name, sizeof name, "%s: %s", what, path);
    if (ring->n == TOPO_KEYRING_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "%s: at most %d keys", name, TOPO_KEYRING_MAX);
    /* The reader's messages name the path; the flag goes in front. */
    if ((rc = topo_codec_read_regular_file(&text, &len, path, TOPO_KEYRING_FILE_MAX, err)) < 0) {
        topo_err_wrap(err, "%s", what);
        return rc;
    }
    rc = topo_keyring_add(ring, text, len, name, err);
    memset(text, 0, len);
    free(text);
    return rc;
}

int topo_keyring_add_random(topo_keyring *ring, topo_err *err)
{
    unsigned char key[TOPO_KEYRING_RANDOM_LEN];
    if (RAND_bytes(key, (int)sizeof key) != 1) {
        ERR_clear_error();
        return topo_err_set(err, TOPO_ENOMEM, "no random key: OpenSSL's generator failed");
    }
    int rc = topo_keyring_add(ring, key, sizeof key, "random key", err);
    memset(key, 0, sizeof key);
    return rc;
}

int topo_keyring_sign(char out[TOPO_SHA256_HEX_LEN + 1], const topo_keyring *ring,
                      const void *msg, size_t len, topo_err *err)
{
    out[0] = '\0';
    if (ring == NULL || ring->n == 0)
        return topo_err_set(err, TOPO_EINVALID, "no signing key");
    if (topo_hmac_sha256_hex(out, ring->key[0], ring->len[0], msg, len) < 0)
        return topo_err_nomem(err, "sign");
    return 0;
}

int topo_keyring_verify(const topo_keyring *ring, const char *mac, const void *msg, size_t len)
{
    char want[TOPO_SHA256_HEX_LEN + 1];
    int ok = 0;

    if (ring == NULL || mac == NULL || strnlen(mac, TOPO_SHA256_HEX_LEN) < TOPO_SHA256_HEX_LEN)
        return 0;
    /* Every key is tried, whichever matches: the time says nothing about
     * which key signed. */
    for (size_t i = 0; i < ring->n; i++)
        if (topo_hmac_sha256_hex(want, ring->key[i], ring->len[i], msg, len) == 0)
            ok |= same_mac(want, mac, TOPO_SHA256_HEX_LEN);
    return ok;
}
