/* SHA-256 of a byte string as lower-case hex (OpenSSL, in the codec layer):
 * the one digest topo keeps (and its HMAC), for content that must be compared or
 * recognised across runs (a pod's shape, a source's stored facts). */
#ifndef TOPO_SHA256_H
#define TOPO_SHA256_H

#include <stddef.h>

#include "topo/error.h"

/* Bytes of a SHA-256 digest, and its hex digits (without the NUL). */
#define TOPO_SHA256_LEN 32
#define TOPO_SHA256_HEX_LEN 64

/* out gets the digest of data[0..len). 0, or TOPO_ENOMEM. */
int topo_sha256(unsigned char out[TOPO_SHA256_LEN], const void *data, size_t len) TOPO_MUST_CHECK;

/* out gets the digest of data[0..len) and a NUL. 0, or TOPO_ENOMEM (OpenSSL
 * fails only when it cannot allocate); out is "" then. */
int topo_sha256_hex(char out[TOPO_SHA256_HEX_LEN + 1], const void *data,
                    size_t len) TOPO_MUST_CHECK;

/* HMAC-SHA256 of data[0..len) under key, as hex, the same way: what proves
 * that a record was written by a holder of the key (topo-webhook's
 * reservation records on pods, cache.h). */
int topo_hmac_sha256_hex(char out[TOPO_SHA256_HEX_LEN + 1], const void *key, size_t keylen,
                         const void *data, size_t len) TOPO_MUST_CHECK;

#endif
