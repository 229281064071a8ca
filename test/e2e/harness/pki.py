"""The test PKI of make_test_pki.sh: ca.pem, server.pem/.key (127.0.0.1 and
localhost), client.pem/.key, other-ca.pem and other-client.pem/.key.

Every environment gets its own copy of one PKI made per day: making it runs
openssl eight times (0.4 s of CPU, and more of waiting on a loaded
machine), and some 90 e2e cases each made their own. The day's PKI is kept
in the temporary directory, private to the user, named by the script's hash
(a changed script makes a new one) and the date (the certificates are valid
for two days)."""

import base64
import contextlib
import datetime
import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

from harness import E2E_DIR

SCRIPT = os.path.join(E2E_DIR, "make_test_pki.sh")
PREFIX = f"topo-test-pki-{os.getuid()}-"


def run_script(d):
    """make_test_pki.sh into d; the script's own message on stderr when a
    step fails."""
    subprocess.run(["sh", SCRIPT, d], check=True, stdout=subprocess.DEVNULL, timeout=60)


def mine(d):
    """d is a whole PKI of this user's: a real directory (not a link) it owns."""
    try:
        st = os.lstat(d)
    except OSError:
        return False
    return (os.path.isdir(d) and not os.path.islink(d) and st.st_uid == os.getuid()
            and os.path.exists(os.path.join(d, "ca.pem")))


def todays_pki():
    """The day's PKI, made now when missing; None when the name is taken by
    something not this user's."""
    with open(SCRIPT, "rb") as fh:
        version = hashlib.sha256(fh.read()).hexdigest()[:12]
    tmpdir = tempfile.gettempdir()
    cache = os.path.join(tmpdir, f"{PREFIX}{version}-{datetime.date.today().isoformat()}")
    if mine(cache):
        return cache
    # Made aside and renamed into place: atomic, and when two cases race the
    # second rename fails and that case uses the first one's.
    tmp = tempfile.mkdtemp(prefix=os.path.basename(cache) + ".", dir=tmpdir)
    try:
        run_script(tmp)
        os.rename(tmp, cache)
    except OSError:
        pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in glob.glob(os.path.join(tmpdir, PREFIX + "*")):
        if old != cache and mine(old) and time.time() - os.lstat(old).st_mtime > 3 * 86400:
            shutil.rmtree(old, ignore_errors=True)
    return cache if mine(cache) else None


def make_pki(d):
    """Writes the test PKI into d (created if missing)."""
    cache = todays_pki()
    if cache is None:
        run_script(d)
        return
    shutil.copytree(cache, d, dirs_exist_ok=True)


@contextlib.contextmanager
def pki_tmpdir(prefix):
    """A temporary directory, removed afterwards, with the test PKI in its
    subdirectory pki: yields (directory, pki directory)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        pki = os.path.join(tmp, "pki")
        make_pki(pki)
        yield tmp, pki


def encrypted_client_pair(d):
    """The PKI's client certificate and its key encrypted (AES-256, a
    passphrase no test gives), both base64 as kubeconfig *-data fields, and
    the encrypted key's file in d: what a kubeconfig topo must refuse
    without prompting holds."""
    enc = os.path.join(d, "enc.key")
    subprocess.run(["openssl", "pkey", "-in", os.path.join(d, "client.key"), "-aes256",
                    "-passout", "pass:topo-test", "-out", enc], check=True, capture_output=True)
    with open(os.path.join(d, "client.pem"), "rb") as fh:
        cert = base64.b64encode(fh.read()).decode()
    with open(enc, "rb") as fh:
        key = base64.b64encode(fh.read()).decode()
    return cert, key, enc
