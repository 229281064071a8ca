/* What the replicas of topo-webhook share through their one serving
 * certificate and key (docs/webhook.md "Several replicas"): the name a
 * forwarding replica checks the placer's certificate against, and the key
 * that signs reservation records on pods. */
#ifndef TOPO_WEBHOOK_PEER_H
#define TOPO_WEBHOOK_PEER_H

#include <stddef.h>

#include "topo/error.h"
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

#endif
