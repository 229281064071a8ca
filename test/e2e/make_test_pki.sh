#!/bin/sh
# Test PKI for TLS tests, generated fresh with the openssl CLI:
#
#   make_test_pki.sh DIR
#
# writes into DIR (created if missing):
#   ca.pem ca.key                 test CA
#   server.pem server.key         server certificate for 127.0.0.1, ::1 and localhost, signed by the CA
#   client.pem client.key         client certificate (CN topo-test-client, clientAuth), signed by the CA
#   other-ca.pem other-ca.key     a second, unrelated CA (negative tests)
#   other-client.pem other-client.key  a client certificate signed by the other CA
#
# Keys are EC P-256 (fast to make). Certificates are valid for two days from
# now. openssl's chatter goes to DIR/openssl.log and is printed only
# when a step fails. Exit status 0 on success.
set -eu

if [ "$#" -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
mkdir -p "$dir"
cd "$dir"
log=openssl.log
: >"$log"

run() {
    if ! "$@" >>"$log" 2>&1; then
        echo "make_test_pki.sh: failed: $*" >&2
        cat "$log" >&2
        exit 1
    fi
}

key() {
    run openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
    chmod 600 "$1"
}

# ca NAME CN
ca() {
    key "$1.key"
    run openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -sha256 \
        -subj "/O=topo tests/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -addext "subjectKeyIdentifier=hash"
}

# leaf NAME CA CN EXTENSIONS
leaf() {
    key "$1.key"
    run openssl req -new -key "$1.key" -out "$1.csr" -subj "/O=topo tests/CN=$3"
    printf '%s\n' "$4" >"$1.ext"
    run openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial \
        -out "$1.pem" -days 2 -sha256 -extfile "$1.ext"
    rm -f "$1.csr" "$1.ext"
}

ca ca "topo test CA"
ca other-ca "unrelated test CA"
leaf server ca "topo-test-server" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
authorityKeyIdentifier=keyid"
leaf client ca "topo-test-client" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
authorityKeyIdentifier=keyid"
leaf other-client other-ca "topo-other-client" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
authorityKeyIdentifier=keyid"
rm -f ./*.srl
