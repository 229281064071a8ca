/* The keys topo-webhook signs what it writes on pods with (reservation
 * records, slot claims, its annotations): sign with the first, accept any,
 * so a key is rotated by putting the new one first and dropping the old one
 * once nothing it signed is still needed (docs/webhook.md "Record keys").
 * A plain value: copy it, nothing to free. */
#ifndef TOPO_KEYRING_H
#define TOPO_KEYRING_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/sha256.h"

/* At most this many keys are accepted at once. */
#define TOPO_KEYRING_MAX 8
/* HMAC-SHA256's block: a longer key is used as its SHA-256 digest (RFC 2104),
 * so this is all a key ever needs. */
#define TOPO_KEYRING_KEY_MAX 64
/* The shortest key material taken: 16 bytes, 128 bits when random. */
#define TOPO_KEYRING_KEY_MIN 16
/* The largest key file read (topo_keyring_add_file): a Secret's key is a
 * few dozen bytes; anything near this is not a key. */
#define TOPO_KEYRING_FILE_MAX (64 * 1024)
/* Bytes of a key made by topo_keyring_add_random: 256 bits. */
#define TOPO_KEYRING_RANDOM_LEN 32

typedef struct topo_keyring {
    size_t n;
    size_t len[TOPO_KEYRING_MAX];
    unsigned char key[TOPO_KEYRING_MAX][TOPO_KEYRING_KEY_MAX];
} topo_keyring;

#define TOPO_KEYRING_INIT {0}

/* Adds a key after those already in ring. TOPO_ELIMIT when the ring is
 * full, TOPO_EINVALID when material is shorter than TOPO_KEYRING_KEY_MIN;
 * the message names `what` (a file, a flag). A key already in the ring is
 * not added twice. */
int topo_keyring_add(topo_keyring *ring, const void *material, size_t len, const char *what,
                     topo_err *err) TOPO_MUST_CHECK;

/* Adds the key held in the file at path: its bytes as they are, a trailing
 * newline included (every replica reads the same Secret file, so nothing
 * is trimmed), at least TOPO_KEYRING_KEY_MIN and at most
 * TOPO_KEYRING_FILE_MAX bytes. Messages start with "what: path: " (what is
 * a flag, e.g. "--record-key-file"): TOPO_ENOTFOUND when the file is missing,
 * TOPO_EIO when it cannot be read, TOPO_EINVALID when too short, TOPO_ELIMIT
 * when too large or the ring is full. */
int topo_keyring_add_file(topo_keyring *ring, const char *path, const char *what,
                          topo_err *err) TOPO_MUST_CHECK;

/* Adds TOPO_KEYRING_RANDOM_LEN random bytes from OpenSSL's generator as a
 * key: for a process whose records need not outlive it. TOPO_ENOMEM when
 * the generator fails, TOPO_ELIMIT when the ring is full. */
int topo_keyring_add_random(topo_keyring *ring, topo_err *err) TOPO_MUST_CHECK;

/* HMAC-SHA256 of msg under the first key, as hex. TOPO_EINVALID when the
 * ring is empty, TOPO_ENOMEM when OpenSSL cannot allocate. */
int topo_keyring_sign(char out[TOPO_SHA256_HEX_LEN + 1], const topo_keyring *ring,
                      const void *msg, size_t len, topo_err *err) TOPO_MUST_CHECK;

/* 1 when mac (TOPO_SHA256_HEX_LEN lower-case hex digits; what follows is not
 * read) is msg's HMAC under any key of ring, compared in constant time; 0
 * otherwise, and for an empty ring or a NULL mac. */
int topo_keyring_verify(const topo_keyring *ring, const char *mac, const void *msg, size_t len);

#endif
