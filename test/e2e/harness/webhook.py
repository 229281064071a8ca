"""topo-webhook as a process: started on free ports with the test PKI's
server certificate, waited for on its health port's /readyz, asked over
HTTPS verified against the test CA, stopped with its log read back."""

import functools
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time

from harness import FAILURES, Failure, check, expect, finish
from harness.fakeapi import FakeApiEnv
from harness.pods import review


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Webhook:
    """topo-webhook BINARY with the flags every driver gives (ports, TLS
    files, threads, shutdown timeout) and extra, its stderr in
    WORKDIR/webhook.log. The class attributes are the defaults a subclass
    changes (under valgrind everything takes longer)."""

    THREADS = 4
    SHUTDOWN_TIMEOUT = 5    # --shutdown-timeout, seconds
    READY_TIMEOUT = 10      # seconds until /readyz answers 200
    READY_POLL = 0.05
    HEALTH_TIMEOUT = 5      # seconds, socket timeout of a request to the health port
    REQUEST_TIMEOUT = 10    # seconds, socket timeout of a request
    ADMIT_TIMEOUT = "10s"   # the ?timeout= an AdmissionReview is posted with
    STOP_TIMEOUT = 10       # seconds from the signal to the exit before SIGKILL

    def __init__(self, binary, pki, workdir, extra=(), own_tls=False, wait=True, port=None,
                 tls=None):
        """own_tls: the server certificate and key copied into workdir (cert,
        key) for the driver to replace; tls: (certificate, key) files to
        serve with instead of the PKI's; wait: return once ready (else see
        ready() and wait_ready()); port: the HTTPS port (default a free one;
        a replica names its own in --peer-address before it starts)."""
        os.makedirs(workdir, exist_ok=True)
        self.pki = pki
        self.workdir = workdir
        self.cert = os.path.join(pki, "server.pem")
        self.key = os.path.join(pki, "server.key")
        if tls is not None:
            self.cert, self.key = tls
        if own_tls:
            self.cert = shutil.copyfile(self.cert, os.path.join(workdir, "tls.crt"))
            self.key = shutil.copyfile(self.key, os.path.join(workdir, "tls.key"))
        self.port = port or free_port()
        self.health = free_port()
        self.log_path = os.path.join(workdir, "webhook.log")
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(self.command(
                [binary, "--port", str(self.port), "--health-port", str(self.health),
                 "--tls-cert-file", self.cert, "--tls-private-key-file", self.key,
                 "--threads", str(self.THREADS), "--shutdown-timeout",
                 str(self.SHUTDOWN_TIMEOUT), *extra]), stderr=log)
        if wait and not self.wait_ready(self.READY_TIMEOUT):
            rc = self.proc.poll()
            self.proc.kill()
            self.proc.wait()
            raise Failure("topo-webhook did not become ready within %d s (exit status %r):\n%s"
                          % (self.READY_TIMEOUT, rc, self.log()[-3000:]))

    def command(self, argv):
        """The command line that runs argv (a subclass wraps it)."""
        return argv

    # ------------------------------------------------------------ health port

    def get(self, path, host="127.0.0.1", port=None):
        """GET path on the health port (or port): (status, body text)."""
        c = http.client.HTTPConnection(host, port or self.health, timeout=self.HEALTH_TIMEOUT)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read().decode()
        finally:
            c.close()

    def ready(self):
        try:
            return self.get("/readyz")[0] == 200
        except OSError:
            return False

    def wait_ready(self, timeout):
        """Polls /readyz for up to timeout seconds; False when it never
        answered 200 or the process ended."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout and self.proc.poll() is None:
            if self.ready():
                self.ready_after = time.monotonic() - t0
                return True
            time.sleep(self.READY_POLL)
        return False

    def metrics_text(self):
        return self.get("/metrics")[1]

    def metrics(self):
        """The unlabelled samples of /metrics as {name: value}."""
        out = {}
        for line in self.metrics_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
                out[parts[0]] = float(parts[1])
        return out

    # ------------------------------------------------------------ the TLS port

    def conn(self, timeout=None):
        """An HTTPS connection to the webhook port, verified against the test CA."""
        return http.client.HTTPSConnection("localhost", self.port, context=self.ctx,
                                           timeout=timeout or self.REQUEST_TIMEOUT)

    def post(self, conn, body, path="/mutate?timeout=10s", method="POST"):
        """One request over conn: (status, body bytes, response)."""
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, r.read(), r

    def post_once(self, body, path="/mutate?timeout=10s"):
        """POST over a connection of its own: (status, body bytes)."""
        c = self.conn()
        try:
            return self.post(c, body, path)[:2]
        finally:
            c.close()

    def admit(self, uid, obj, timeout=None, dry_run=False):
        """The AdmissionReview response for creating obj (HTTP 200 and the
        uid echoed, else Failure)."""
        status, body = self.post_once(review(uid, obj, dry_run),
                                      "/mutate?timeout=" + (timeout or self.ADMIT_TIMEOUT))
        expect(status == 200, "%s: HTTP %d: %r" % (uid, status, body[:300]))
        resp = json.loads(body)["response"]
        expect(resp.get("uid") == uid, "%s: uid echoed: %r" % (uid, resp))
        return resp

    # ------------------------------------------------------------ the end

    def log(self):
        with open(self.log_path) as fh:
            return fh.read()

    def stop(self, sig=signal.SIGTERM):
        """Sends sig unless the process has ended, waits (SIGKILL after
        STOP_TIMEOUT); returns the log."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(self.STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.log()


class WebhookApiEnv(FakeApiEnv):
    """fake_apiserver.py for topo-webhook in daemon mode: its kubeconfig's
    namespace is where the ungater's Lease lives."""

    PREFIX = "topo-webhook-e2e-"
    TOKEN = "webhook-token-1"
    TOKEN_EOL = "\n"
    NAMESPACE = "topo-system"
    REQUEST_TIMEOUT = 60
    ADMIN_TIMEOUT = 60
    TOKEN_FILE_RELATIVE = False

    def __init__(self, keep=False):
        super().__init__(keep)


def start_daemon(env, binary, name, extra=(), cls=Webhook, **kw):
    """topo-webhook (a cls) against env's fake API server (--kubeconfig), with
    the cache file and its log in env's directory name; killed by env.close()
    if still running."""
    workdir = env.path(name)
    w = cls(binary, env.dir, workdir, ["--kubeconfig", env.kubeconfig,
                                       "--db", os.path.join(workdir, "topo.db"), *extra], **kw)
    env.procs.append(w.proc)
    return w


def metric(text, name, labels=""):
    """The sum of the samples of name in a /metrics text whose labels
    contain the text labels."""
    total = 0.0
    for line in text.splitlines():
        sample = line.split(" ", 1)[0]
        series = sample.split("{", 1)[0]
        if series == name and labels in sample:
            total += float(line.rsplit(" ", 1)[1])
    return total


def metric_line_ok(line):
    """One line of the Prometheus text format: comment, blank, or sample."""
    if not line or line.startswith("#"):
        return bool(re.match(r"^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$", line))
    return bool(re.match(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? '
                         r'([-+0-9.eE]+|[+-]Inf|NaN)$', line))


def check_prometheus(text):
    return all(metric_line_ok(line) for line in text.splitlines())


def _run_with_args(run, args, binary, api, ws):
    return run(binary, api, ws, args)


def main_against_api(name, run, add_options=None):
    """The main() of a driver that starts topo-webhooks against one fake API
    server: `--webhook BINARY` parsed, run(binary, api, ws) called (it
    appends the webhooks it starts to ws), an exception from it a failure;
    then every webhook stopped, its clean exit on SIGTERM checked, and on
    any failure each log's tail and the API server's printed. Returns
    finish(name). With add_options(parser), the driver's own options are
    parsed too, run is called as run(binary, api, ws, args) and name may be
    a function of args."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    if add_options:
        add_options(ap)
    args = ap.parse_args()
    if add_options:
        run = functools.partial(_run_with_args, run, args)
        name = name(args) if callable(name) else name
    api = WebhookApiEnv()
    ws = []
    logs = {}
    try:
        try:
            run(args.webhook, api, ws)
        except Exception as e:  # setup failures: report with the logs
            check(False, "error: %r" % e)
        finally:
            for w in ws:
                logs[w.name] = w.stop()
                check(w.proc.returncode == 0,
                      "%s: clean exit on SIGTERM (rc %r)" % (w.name, w.proc.returncode))
            logs["apiserver"] = api.server_log()
        if FAILURES:
            for lname, log in logs.items():
                print("--- %s log (tail) ---\n%s" % (lname, log[-6000:]))
    finally:
        api.close()
    return finish(name)
