"""fake_apiserver.py over TLS (the test PKI, a bearer-token file) in a
temporary directory, with a kubeconfig for it: what every driver against the
fake API server starts from (a subclass of FakeApiEnv per driver)."""

import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from harness import E2E_DIR, expect
from harness.pki import make_pki

FAKE = os.path.join(E2E_DIR, "fake_apiserver.py")


class FakeApiEnv:
    """One fake API server (TLS, token file) in a temporary directory, with a
    kubeconfig for it. Subclasses set the class attributes below and return
    the server's own flags from server_args(); the drivers differ in them
    (client CA, bookmark interval, history size), so they stay per driver."""

    PREFIX = "topo-e2e-"
    TOKEN = "token"
    TOKEN_EOL = ""           # what follows the token in the token file
    NAMESPACE = None         # the kubeconfig context's namespace, if any
    REQUEST_TIMEOUT = 30     # seconds, for requests to the server's API
    ADMIN_TIMEOUT = 30       # seconds, for /_fake/ (bulk loads take long)
    TOKEN_FILE_RELATIVE = True  # the kubeconfig's tokenFile: relative, or absolute

    def __init__(self, keep):
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix=self.PREFIX)
        self.procs = []
        make_pki(self.dir)
        self.token = self.TOKEN
        self.write(self.path("token"), self.token + self.TOKEN_EOL)
        self.ctx = ssl.create_default_context(cafile=self.path("ca.pem"))
        self.server = subprocess.Popen(
            [sys.executable, FAKE, "--tls-cert", self.path("server.pem"), "--tls-key",
             self.path("server.key"), *self.server_args()],
            stdout=subprocess.PIPE, stderr=open(self.path("server.log"), "w"), text=True)
        line = self.server.stdout.readline()
        expect(line.strip().isdigit(), f"fake apiserver did not start: {line!r}")
        self.port = int(line)
        self.url = f"https://127.0.0.1:{self.port}"
        self.kubeconfig = self.write_kubeconfig("kubeconfig")

    def server_args(self):
        """fake_apiserver.py's flags after the server certificate."""
        return ["--token-file", self.path("token")]

    def path(self, name):
        return os.path.join(self.dir, name)

    @staticmethod
    def write(path, text):
        # Atomic: the programs under test may read the file (a token) as it changes.
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)

    def default_user(self):
        # relative: resolved against the kubeconfig's directory
        return {"tokenFile": "token" if self.TOKEN_FILE_RELATIVE else self.path("token")}

    def write_kubeconfig(self, name, cluster=None, user=None, server=None):
        """A kubeconfig for the server (or `server`): cluster defaults to the
        test CA as data, user to default_user()."""
        if cluster is None:
            with open(self.path("ca.pem"), "rb") as fh:
                cluster = {"certificate-authority-data": base64.b64encode(fh.read()).decode()}
        if user is None:
            user = self.default_user()
        cluster = dict(cluster, server=server or self.url)
        context = {"cluster": "fake", "user": "u"}
        if self.NAMESPACE is not None:
            context["namespace"] = self.NAMESPACE
        text = json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [{"name": "fake", "cluster": cluster}],
            "contexts": [{"name": "test", "context": context}],
            "users": [{"name": "u", "user": user}],
        }, indent=1)
        # YAML is the usual form; JSON is YAML too, and both go through libyaml.
        self.write(self.path(name), text)
        return self.path(name)

    # -------------------------------------------------------------- talking to the fake

    def request(self, method, path, body=None, ctype="application/json", auth=True,
                timeout=None):
        data = None
        headers = {}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = ctype
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.ctx,
                                        timeout=timeout or self.REQUEST_TIMEOUT) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def admin(self, path, body=None):
        status, out = self.request("POST" if body is not None else "GET", "/_fake/" + path,
                                   body, auth=False, timeout=self.ADMIN_TIMEOUT)
        expect(status == 200, f"admin {path}: {status} {out}")
        return out

    def items(self, path):
        """The items of the list at path (one page)."""
        status, out = self.request("GET", path)
        expect(status == 200, f"GET {path}: {status} {out}")
        return out["items"]

    def pod(self, ns, name):
        """The pod as the server holds it, or None."""
        status, out = self.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
        return out if status == 200 else None

    def create(self, path, obj):
        status, out = self.request("POST", path, obj)
        expect(status == 201, f"POST {path}: {status} {out}")
        return out

    def delete(self, path):
        status, out = self.request("DELETE", path)
        expect(status == 200, f"DELETE {path}: {status} {out}")
        return out

    def rotate_token(self, token):
        self.token = token
        self.write(self.path("token"), token + self.TOKEN_EOL)

    def close(self):
        for p in self.procs:
            p.kill()
        if self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(5)
            except subprocess.TimeoutExpired:
                self.server.kill()
        if self.keep:
            print(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def server_log(self):
        with open(self.path("server.log")) as fh:
            return fh.read()


def expect_relist(verbs, lists_before, timeout=20):
    """Waits until verbs() (one resource's request counts from /_fake/stats)
    shows more LISTs than lists_before: the watcher listed again."""
    deadline = time.monotonic() + timeout
    while verbs().get("LIST", 0) <= lists_before and time.monotonic() < deadline:
        time.sleep(0.05)
    expect(verbs().get("LIST", 0) > lists_before, "no relist after the watch expired")
