/* SHA-256 and HMAC-SHA256 as hex (topo/sha256.h). */
#include "topo/sha256.h"

#include <limits.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static int to_hex(char out[TOPO_SHA256_HEX_LEN + 1], const unsigned char *md, unsigned int mdlen)
{
    static const char digits[] = "0123456789abcdef";
    if (mdlen * 2 != TOPO_SHA256_HEX_LEN) {
        /* Nothing reads OpenSSL's per-thread error queue here: drop what
         * the failure left there (memory, and a stale error for the next
         * OpenSSL call on this thread). */
        ERR_clear_error();
        return TOPO_ENOMEM;
    }
    for (unsigned int i = 0; i < mdlen; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 0x0f];
    }
    out[TOPO_SHA256_HEX_LEN] = '\0';
    return 0;
}

int topo_sha256(unsigned char out[TOPO_SHA256_LEN], const void *data, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != TOPO_SHA256_LEN) {
        ERR_clear_error();
        return TOPO_ENOMEM;
    }
    memcpy(out, md, TOPO_SHA256_LEN);
    return 0;
}

int topo_sha256_hex(char out[TOPO_SHA256_HEX_LEN + 1], const void *data, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    out[0] = '\0';
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1)
        mdlen = 0;
    return to_hex(out, md, mdlen);
}

int topo_hmac_sha256_hex(char out[TOPO_SHA256_HEX_LEN + 1], const void *key, size_t keylen,
                         const void *data, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    out[0] = '\0';
    if (keylen > INT_MAX ||
        HMAC(EVP_sha256(), key, (int)keylen, data, len, md, &mdlen) == NULL)
        mdlen = 0;
    return to_hex(out, md, mdlen);
}
