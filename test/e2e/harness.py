"""What the drivers against fake_apiserver.py over TLS share (k8s_e2e.py,
sync_e2e.py, filler_e2e.py): the test PKI, the fake server started with a
bearer-token file and its port read back, kubeconfigs pointing at it, requests
to its real and /_fake/ admin endpoints, and the --list/--case/--all/--keep
main loop printing PASS/FAIL lines. Each driver keeps its own cases and the
setup only it needs (a subclass of FakeApiEnv). Python 3 standard library only.
"""

import argparse
import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_apiserver.py")
PKI = os.path.join(HERE, "make_test_pki.sh")


class Failure(Exception):
    pass


def slowdown():
    """How much slower this build runs (TOPO_E2E_SLOWDOWN, set by CMake for
    sanitizer builds; 1 otherwise): latency bounds are multiplied by it."""
    try:
        return max(1.0, float(os.environ.get("TOPO_E2E_SLOWDOWN", "1")))
    except ValueError:
        return 1.0


def expect(cond, msg):
    if not cond:
        raise Failure(msg)


def registry():
    """A driver's case table and the @case decorator that fills it."""
    cases = {}

    def case(fn):
        cases[fn.__name__] = fn
        return fn
    return cases, case


def make_pki(d):
    """The test PKI: make_test_pki.sh when present, else the same files here."""
    if os.path.exists(PKI):
        subprocess.run(["sh", PKI, d], check=True, capture_output=True, timeout=60)
        return

    def run(*a):
        subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=d, timeout=60)

    for ca in ("ca", "other-ca"):
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2", "-subj",
            f"/CN=topo test {ca}", "-addext", "basicConstraints=critical,CA:TRUE")
    for leaf, cn, ext in (("server", "localhost",
                           "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"),
                          ("client", "topo-test-client", "extendedKeyUsage=clientAuth")):
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            f"{leaf}.key", "-out", f"{leaf}.csr", "-subj", f"/CN={cn}")
        with open(os.path.join(d, f"{leaf}.ext"), "w") as fh:
            fh.write(ext + "\n")
        run("x509", "-req", "-in", f"{leaf}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{leaf}.pem", "-days", "2", "-extfile", f"{leaf}.ext")


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
        return {"tokenFile": "token"}  # relative: resolved against the kubeconfig's dir

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


class LineDriver:
    """A driver answering one JSON object per line of names on its stdin
    (ns_policy_driver, quota_driver: line_driver.c), its stderr collected
    for the tests to read (warnings) and to show on failure."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stderr_lines = []
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def stderr_tail(self):
        return "".join(self.stderr_lines)[-2000:]

    def ask(self, names):
        self.proc.stdin.write(" ".join(names) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        expect(line, f"driver exited ({self.proc.poll()}): {self.stderr_tail()}")
        return json.loads(line)

    def wait_for(self, names, done, what, timeout=20):
        """Asks about names until done(answer) holds; returns that answer."""
        deadline = time.monotonic() + timeout
        got = None
        while time.monotonic() < deadline:
            got = self.ask(names)
            if done(got):
                return got
            time.sleep(0.05)
        raise Failure(f"{what}: the driver's answer {got} never became right\n"
                      f"driver stderr: {self.stderr_tail()}")

    def warnings(self, *parts):
        """The warning lines containing every one of parts."""
        return [ln for ln in self.stderr_lines
                if "level=warn" in ln and all(p in ln for p in parts)]

    def quit(self):
        """A clean stop: "quit", then exit status 0."""
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        rc = self.proc.wait(15)
        expect(rc == 0, f"driver exit {rc}: {self.stderr_tail()}")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(15)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def run_cases(cases, make_env, bin_flag="--driver", pending=None, on_failure=None):
    """The drivers' main: --list (what ctest registers), --case NAME or --all,
    --keep; the binary under test after bin_flag, given to make_env(bin, keep)
    with one fresh environment per case. Cases named in `pending` (name ->
    reason) stay out of --list and --all and are shown by --list-pending (an
    option only where pending is given, even empty).
    on_failure(env) adds the driver's own diagnostics to a FAIL. Returns the
    exit status."""
    ap = argparse.ArgumentParser()
    ap.add_argument(bin_flag, dest="bin", metavar=bin_flag.lstrip("-").upper())
    ap.add_argument("--list", action="store_true", help="the cases ctest runs")
    if pending is not None:
        ap.add_argument("--list-pending", action="store_true",
                        help="cases the program does not pass yet, with the reason")
    ap.add_argument("--case")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    pending = pending or {}
    runnable = [n for n in cases if n not in pending]
    if args.list:
        print("\n".join(runnable))
        return 0
    if getattr(args, "list_pending", False):
        print("\n".join(f"{n}: {r}" for n, r in pending.items()))
        return 0
    names = runnable if args.all else [args.case]
    if not args.bin or None in names or any(n not in cases for n in names):
        ap.error(f"{bin_flag} and --case NAME (or --all) are required")
    failed = 0
    for name in names:
        t = time.monotonic()
        env = make_env(args.bin, args.keep)
        try:
            cases[name](env)
            print(f"PASS {name} ({time.monotonic() - t:.1f}s)")
        except Failure as e:
            failed += 1
            print(f"FAIL {name}: {e}")
            if on_failure is not None:
                on_failure(env)
            print("--- fake apiserver log ---\n" + env.server_log()[-3000:])
        finally:
            env.close()
    return 1 if failed else 0
