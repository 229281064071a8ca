/* What the replicas of topo-webhook share (docs/webhook.md "Several
 * replicas", "Record keys"): through their one serving certificate, the
 * name a forwarding replica checks the placer's certificate against; the
 * record keys that sign what topo writes on pods, from files of their own
 * (--record-key-file) or, failing them, derived from the serving key. */
#ifndef TOPO_WEBHOOK_PEER_H
#define TOPO_WEBHOOK_PEER_H

#include <stddef.h>

#include "topo/error.h"
#include "topo/keyring.h"
#include "topo/sha256.h"

/* The first DNS name of the certificate's subjectAltName (the Service's
 * name), copied into out. TOPO_ENOTFOUND when it has none. */
int wh_peer_server_name(const char *cert_file, char *out, size_t size, topo_err *err);

/* The record key: SHA-256 (hex) of a label and the private key file's
 * bytes. Every replica mounting the same Secret derives the same key; a
 * pod's author cannot. */
#define WH_PEER_RECORD_KEY_LEN TOPO_SHA256_HEX_LEN
int wh_peer_record_key(const char *key_file, unsigned char out[WH_PEER_RECORD_KEY_LEN],
                       topo_err *err);

/* At most this many --record-key-file: the ring keeps a place for the key
 * derived from the serving key. */
#define WH_PEER_RECORD_KEY_FILES_MAX (TOPO_KEYRING_MAX - 1)

typedef struct wh_peer_keys_opts {
    const char *const *files; /* --record-key-file, in the order given */
    size_t nfiles;
    const char *serving_key; /* --tls-private-key-file, or NULL */
    int shared; /* records are read back by other replicas and after a
                 * restart (from an API server), not by this process only */
} wh_peer_keys_opts;

/* Fills ring (empty) with the record keys, logging once where they come
 * from:
 * - the files, in order (the first signs), then, when shared, the key
 *   derived from the serving key (accepted, never signing: records signed
 *   before the files were given still verify);
 * - no files and shared: the derived key alone, with a warning that records
 *   will not survive a rotation of the serving key;
 * - neither: a random key for this process only.
 * Errors name the flag and the file; a file that is missing, unreadable,
 * too short or too long is TOPO_EINVALID (a bad value of the flag). */
int wh_peer_record_keys(topo_keyring *ring, const wh_peer_keys_opts *o, topo_err *err);

#endif
