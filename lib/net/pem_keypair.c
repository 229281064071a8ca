/* A client certificate and its private key, checked once with OpenSSL
 * (lib/net/pem_keypair.h). */
#include "pem_keypair.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

/* Called by OpenSSL only for an encrypted PEM block: records that it was
 * asked and gives no passphrase, so the read fails at once instead of
 * OpenSSL's default callback prompting on /dev/tty. */
static int refuse_passphrase(char *buf, int size, int rwflag, void *asked)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    if (asked != NULL)
        *(int *)asked = 1;
    return -1;
}

int net_pem_keypair_check(const char *cert_pem, const char *key_pem, const char *cert_field,
                           const char *key_field, topo_err *err)
{
    int error = 0, asked = 0;
    BIO *cb = BIO_new_mem_buf(cert_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
    X509 *cert = NULL;
    EVP_PKEY *key = NULL;

    if (cb == NULL || kb == NULL) {
        error = topo_err_nomem(err, key_field);
        goto cleanup;
    }
    if ((cert = PEM_read_bio_X509(cb, NULL, refuse_passphrase, NULL)) == NULL) {
        error = topo_err_set(err, TOPO_EINVALID, "%s: not a PEM certificate", cert_field);
        goto cleanup;
    }
    if ((key = PEM_read_bio_PrivateKey(kb, NULL, refuse_passphrase, &asked)) == NULL) {
        if (asked)
            error = topo_err_set(err, TOPO_EINVALID,
                                 "%s: an encrypted private key: topo cannot ask for its "
                                 "passphrase; decrypt it (openssl pkey -in KEY -out "
                                 "KEY.plain) and use that",
                                 key_field);
        else
            error = topo_err_set(err, TOPO_EINVALID, "%s: not a PEM private key", key_field);
        goto cleanup;
    }
    if (X509_check_private_key(cert, key) != 1)
        error = topo_err_set(err, TOPO_EINVALID, "%s is not the key of %s", key_field,
                             cert_field);

cleanup:
    /* What failed is in err: leave nothing in OpenSSL's queue of this
     * thread for libcurl to report later as its own error. */
    ERR_clear_error();
    EVP_PKEY_free(key);
    X509_free(cert);
    BIO_free(kb);
    BIO_free(cb);
    return error;
}
