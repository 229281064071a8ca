/* The replicas' shared certificate and key (peer.h). */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "topo/codec.h"
#include "topo/log.h"

/* A PEM certificate or key file is a few kilobytes; a chain a few more. */
#define PEER_FILE_MAX (256 * 1024)

int wh_peer_server_name(const char *cert_file, char *out, size_t size, topo_err *err)
{
    char *pem = NULL;
    size_t len = 0;
    int rc, found = 0;

    if ((rc = topo_codec_read_regular_file(&pem, &len, cert_file, PEER_FILE_MAX, err)) < 0)
        return rc;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *cert = bio != NULL ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    GENERAL_NAMES *names =
        cert != NULL ? X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL) : NULL;
    for (int i = 0; names != NULL && !found && i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        if (g->type != GEN_DNS)
            continue;
        const unsigned char *s = ASN1_STRING_get0_data(g->d.dNSName);
        int n = ASN1_STRING_length(g->d.dNSName);
        if (s != NULL && n > 0 && (size_t)n < size && memchr(s, '\0', (size_t)n) == NULL) {
            memcpy(out, s, (size_t)n);
            out[n] = '\0';
            found = 1;
        }
    }
    if (cert == NULL)
        rc = topo_err_set(err, TOPO_EINVALID, "%s: not a PEM certificate", cert_file);
    else if (!found)
        rc = topo_err_set(err, TOPO_ENOTFOUND, "%s: no DNS name in its subjectAltName",
                          cert_file);
    GENERAL_NAMES_free(names);
    X509_free(cert);
    BIO_free(bio);
    free(pem);
    ERR_clear_error();
    return rc;
}

int wh_peer_record_key(const char *key_file, unsigned char out[WH_PEER_RECORD_KEY_LEN],
                       topo_err *err)
{
    static const char label[] = "topo-webhook reservation records\n";
    char *pem = NULL, *msg = NULL;
    size_t len = 0;
    char hex[TOPO_SHA256_HEX_LEN + 1];
    int rc;

    if ((rc = topo_codec_read_regular_file(&pem, &len, key_file, PEER_FILE_MAX, err)) < 0)
        return rc;
    if ((msg = malloc(sizeof label + len)) == NULL) {
        rc = topo_err_nomem(err, NULL);
    } else {
        memcpy(msg, label, sizeof label - 1);
        memcpy(msg + sizeof label - 1, pem, len);
        if ((rc = topo_sha256_hex(hex, msg, sizeof label - 1 + len)) < 0)
            rc = topo_err_set(err, rc, "cannot derive the record key");
        else
            memcpy(out, hex, WH_PEER_RECORD_KEY_LEN);
    }
    if (pem != NULL)
        memset(pem, 0, len);
    free(pem);
    free(msg);
    return rc;
}

/* The key derived from the serving key, added after what ring holds. */
static int add_derived(topo_keyring *ring, const char *key_file, topo_err *err)
{
    unsigned char key[WH_PEER_RECORD_KEY_LEN];
    int rc = wh_peer_record_key(key_file, key, err);
    if (rc == 0)
        rc = topo_keyring_add(ring, key, sizeof key, "--tls-private-key-file", err);
    else
        topo_err_wrap(err, "--tls-private-key-file");
    memset(key, 0, sizeof key);
    return rc;
}

int wh_peer_record_keys(topo_keyring *ring, const wh_peer_keys_opts *o, topo_err *err)
{
    int rc = 0;

    *ring = (topo_keyring)TOPO_KEYRING_INIT;
    if (o->nfiles > WH_PEER_RECORD_KEY_FILES_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "--record-key-file: %s: given %zu times, at most %d",
                            o->files[WH_PEER_RECORD_KEY_FILES_MAX], o->nfiles,
                            WH_PEER_RECORD_KEY_FILES_MAX);
    for (size_t i = 0; rc == 0 && i < o->nfiles; i++)
        rc = topo_keyring_add_file(ring, o->files[i], "--record-key-file", err);
    /* Missing, unreadable, too short or too long: a bad flag value, which
     * stops the webhook with exit status 2 (main.c). */
    if (rc < 0 && rc != TOPO_ENOMEM) {
        if (err != NULL)
            err->code = TOPO_EINVALID;
        return TOPO_EINVALID;
    }
    if (rc < 0)
        return rc;
    if (o->shared && o->serving_key != NULL) {
        /* Reservations signed by a version without record keys of their
         * own (or before they were given) keep verifying: their key is
         * accepted, after the files, so that it never signs. */
        if ((rc = add_derived(ring, o->serving_key, err)) < 0)
            return rc;
        if (o->nfiles > 0)
            topo_log(TOPO_LOG_INFO,
                     "record keys: %zu from --record-key-file (the first, %s, signs); records "
                     "signed with the key derived from --tls-private-key-file are accepted too",
                     o->nfiles, o->files[0]);
        else
            topo_log(TOPO_LOG_WARN,
                     "record keys: derived from --tls-private-key-file: reservation records on "
                     "pods will not verify once the serving key is rotated (cert-manager "
                     "rotates it at each renewal), and running PodSets lose their "
                     "reservations on the replicas; give --record-key-file");
        return 0;
    }
    if (o->nfiles > 0) {
        topo_log(TOPO_LOG_INFO, "record keys: %zu from --record-key-file (the first, %s, signs)",
                 o->nfiles, o->files[0]);
        return 0;
    }
    if ((rc = topo_keyring_add_random(ring, err)) < 0)
        return rc;
    topo_log(TOPO_LOG_INFO, "record keys: a random key for this process only (nothing reads "
                            "its records after it)");
    return 0;
}
