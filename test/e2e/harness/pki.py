"""The test PKI of make_test_pki.sh: ca.pem, server.pem/.key (127.0.0.1 and
localhost), client.pem/.key, other-ca.pem and other-client.pem/.key."""

import contextlib
import os
import subprocess
import tempfile

from harness import E2E_DIR

SCRIPT = os.path.join(E2E_DIR, "make_test_pki.sh")


def make_pki(d):
    """Writes the test PKI into d (created if missing); the script's own
    message on stderr when a step fails."""
    subprocess.run(["sh", SCRIPT, d], check=True, stdout=subprocess.DEVNULL, timeout=60)


@contextlib.contextmanager
def pki_tmpdir(prefix):
    """A temporary directory, removed afterwards, with the test PKI in its
    subdirectory pki: yields (directory, pki directory)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        pki = os.path.join(tmp, "pki")
        make_pki(pki)
        yield tmp, pki
