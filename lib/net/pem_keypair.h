/* Checking a TLS client certificate and its private key before they are
 * used (kubeconfig.c at load time, exec_cred.c on a plugin's output): one
 * place that parses the key, and never asks for a passphrase. */
#ifndef TOPO_NET_PEM_KEYPAIR_H
#define TOPO_NET_PEM_KEYPAIR_H

#include "topo/error.h"

/* cert_pem must hold a PEM certificate (the first one is the client's) and
 * key_pem an unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1) that
 * belongs to it, as client-go's tls.X509KeyPair demands.
 *
 * An encrypted key is refused without prompting: OpenSSL's default
 * passphrase callback would open /dev/tty and wait for ever (a daemon, or a
 * command whose exec plugin has already exited); a callback that refuses
 * is passed instead. cert_field and key_field name the two in messages
 * ("status.clientKeyData: an encrypted private key: ..."). Returns 0,
 * TOPO_EINVALID or TOPO_ENOMEM; the key's text is never quoted. */
int net_pem_keypair_check(const char *cert_pem, const char *key_pem, const char *cert_field,
                           const char *key_field, topo_err *err) TOPO_MUST_CHECK;

#endif
