/* SHA-256 as hex (topo/sha256.h). */
#include "topo/sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>

int topo_sha256_hex(char out[TOPO_SHA256_HEX_LEN + 1], const void *data, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    out[0] = '\0';
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
        mdlen * 2 != TOPO_SHA256_HEX_LEN) {
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
