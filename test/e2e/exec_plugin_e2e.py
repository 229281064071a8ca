#!/usr/bin/env python3
"""`kubectl topo` with a kubeconfig whose user is an exec credential plugin
(lib/net/exec_cred.c, exec_run.c, kubeconfig.c, http_auth.c) against
fake_apiserver.py over TLS, which wants a bearer token (or a client
certificate of the test CA) and answers 401 otherwise. The plugin is
exec_plugin.py, told by the kubeconfig's exec.args what to print: a token
(cached for the whole command unless it expired), a client certificate, a
token the server refuses (run again once after the 401), a failure, nothing
usable, too much, nothing in time; and what it is given (args, env,
KUBERNETES_EXEC_INFO with the cluster).

usage: exec_plugin_e2e.py --kubectl-topo BUILD/cli/kubectl-topo (--list | --case NAME | --all)
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import time

from harness import E2E_DIR, expect, registry, run_cases
from harness.fakeapi import FakeApiEnv

SOURCE = os.path.dirname(os.path.dirname(E2E_DIR))
NODES = os.path.join(SOURCE, "fixtures/clusters/kubectl-nodes-small.json")
PODS = os.path.join(SOURCE, "fixtures/clusters/kubectl-pods-small.json")
LEVELS = "topology.topo.io/rack,kubernetes.io/hostname"
PLUGIN = os.path.join(E2E_DIR, "exec_plugin.py")
V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"

CASES, case = registry()


class Env(FakeApiEnv):
    """The fake API server (bearer token "plugin-token", or a client
    certificate of the test CA) holding the small kubectl fixture."""

    PREFIX = "topo-exec-plugin-e2e-"
    TOKEN = "plugin-token"

    def __init__(self, plugin, keep):
        self.plugin = os.path.abspath(plugin)
        super().__init__(keep)
        self.runs = self.path("runs")

    def server_args(self):
        return [*super().server_args(), "--client-ca", self.path("ca.pem"), "--load", NODES,
                "--load", PODS]

    def exec_kubeconfig(self, *args, api=V1, mode="Never", command=PLUGIN, cluster=None,
                        **fields):
        """A kubeconfig whose user runs the plugin with --count runs and
        args; fields are more exec fields (env, installHint...)."""
        exec_ = {"apiVersion": api, "command": command,
                 "args": ["--count", self.runs, *args]}
        if mode is not None:
            exec_["interactiveMode"] = mode
        exec_.update(fields)
        return self.write_kubeconfig("exec-kubeconfig", cluster=cluster, user={"exec": exec_})

    def show(self, kubeconfig, env=None, timeout=60, levels=LEVELS, cwd=None):
        """kubectl topo show through kubeconfig (levels None: read from the
        cluster), stdin not a terminal: (exit, out, err, seconds)."""
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.path("home")}
        e.update(env or {})
        t = time.monotonic()
        flags = ["--levels", levels] if levels is not None else []
        p = subprocess.run([self.plugin, "show", "--kubeconfig", kubeconfig, *flags],
                           capture_output=True, text=True, env=e, timeout=timeout,
                           stdin=subprocess.DEVNULL, cwd=cwd)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t

    def ok(self, kubeconfig, **kw):
        rc, out, err, _ = self.show(kubeconfig, **kw)
        expect(rc == 0 and "a100-r1-a" in out, f"kubectl topo show: exit {rc}\n{out}\n{err}")
        return out

    def fails(self, kubeconfig, *wanted, **kw):
        """The command fails (exit 2) with every string of wanted in its
        stderr; returns (stderr, seconds)."""
        rc, out, err, secs = self.show(kubeconfig, **kw)
        expect(rc == 2 and out == "", f"exit {rc} (want 2), out {out!r}, err {err!r}")
        for w in wanted:
            expect(w in err, f"{w!r} is not in the message: {err!r}")
        return err, secs

    def run_count(self):
        if not os.path.exists(self.runs):
            return 0
        with open(self.runs) as fh:
            return len(fh.readlines())

    def auths(self):
        """The auth of each API request the server answered (not /_fake/)."""
        return [(r["auth"], r["status"]) for r in self.admin("requests")["requests"]
                if r["path"].startswith("/api")]


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie still answers kill(0) until its parent (init here) reaps it
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1].startswith("Z")
    except OSError:
        return True


# =================================================================== cases

@case
def token(env):
    """The plugin's token authenticates every request of the command; with
    no expirationTimestamp it runs once. It gets its args, the kubeconfig's
    env over the process's, and KUBERNETES_EXEC_INFO: interactive false
    (stdin is not a terminal), no cluster without provideClusterInfo."""
    record = env.path("record.json")
    kc = env.exec_kubeconfig("--record", record, "token", Env.TOKEN,
                             env=[{"name": "TOPO_TEST_REGION", "value": "eu-west-1"},
                                  {"name": "TOPO_TEST_EMPTY"}])
    env.ok(kc, env={"TOPO_TEST_REGION": "overridden-by-the-kubeconfig"})
    expect(env.run_count() == 1, f"the plugin ran {env.run_count()} times (want 1)")
    auths = env.auths()
    expect(len(auths) >= 2 and all(a == ("bearer:" + Env.TOKEN[:12], 200) for a in auths),
           f"requests: {auths}")
    with open(record) as fh:
        got = json.load(fh)
    expect(got["argv"][-2:] == ["token", Env.TOKEN], f"argv {got['argv']}")
    expect(got["env"] == {"TOPO_TEST_REGION": "eu-west-1", "TOPO_TEST_EMPTY": ""},
           f"env {got['env']}")
    expect(got["info"] == {"kind": "ExecCredential", "apiVersion": V1,
                           "spec": {"interactive": False}}, f"KUBERNETES_EXEC_INFO {got['info']}")
    expect(not got["stdin_tty"], "interactiveMode Never: stdin is a terminal")


@case
def cluster_info(env):
    """provideClusterInfo: spec.cluster holds the server, the CA (base64 of
    the PEM) and the cluster's client.authentication.k8s.io/exec extension
    as config; v1beta1 without interactiveMode is IfAvailable (stdin is no
    terminal here: not interactive); a relative command with a '/' is
    relative to the kubeconfig's directory."""
    shutil.copy(PLUGIN, env.path("plugin.py"))
    record = env.path("record.json")
    with open(env.path("ca.pem"), "rb") as fh:
        ca = fh.read()
    cluster = {"certificate-authority-data": base64.b64encode(ca).decode(),
               "extensions": [{"name": "other", "extension": {"x": 1}},
                              {"name": "client.authentication.k8s.io/exec",
                               "extension": {"audience": "topo", "n": [1, 2]}}]}
    kc = env.exec_kubeconfig("--record", record, "token", Env.TOKEN, api=V1BETA1, mode=None,
                             command="./plugin.py", cluster=cluster, provideClusterInfo=True)
    env.ok(kc)
    with open(record) as fh:
        info = json.load(fh)["info"]
    want = {"kind": "ExecCredential", "apiVersion": V1BETA1,
            "spec": {"interactive": False,
                     "cluster": {"server": env.url,
                                 "certificate-authority-data": base64.b64encode(ca).decode(),
                                 "config": {"audience": "topo", "n": [1, 2]}}}}
    expect(info == want, f"KUBERNETES_EXEC_INFO {json.dumps(info)}\nwant {json.dumps(want)}")


@case
def expiry(env):
    """A credential that expires in an hour is reused by every request; one
    already expired is fetched again before each request."""
    env.ok(env.exec_kubeconfig("token", Env.TOKEN, "expires", "3600"))
    expect(env.run_count() == 1, f"future expiry: {env.run_count()} runs (want 1)")
    os.unlink(env.runs)
    env.admin("requests/clear", {})
    env.ok(env.exec_kubeconfig("token", Env.TOKEN, "expires", "-60"))
    requests = len(env.auths())
    expect(requests >= 2 and env.run_count() == requests,
           f"past expiry: {env.run_count()} runs for {requests} requests")


@case
def client_certificate(env):
    """A plugin returning a client certificate and key (no token): TLS
    client authentication with them."""
    env.ok(env.exec_kubeconfig("cert", env.path("client.pem"), env.path("client.key")))
    auths = env.auths()
    expect(auths and all(a == ("cert:topo-test-client", 200) for a in auths),
           f"requests: {auths}")
    # A pair that does not match is refused before any request.
    env.fails(env.exec_kubeconfig("cert", env.path("client.pem"), env.path("other-client.key")),
              "status.clientKeyData is not the key of status.clientCertificateData")


@case
def renew_after_401(env):
    """A token the server refuses (401): the plugin runs once more and the
    request is sent again with the new token; a plugin that keeps giving a
    refused token runs at most once more per list, and the 401 is the
    answer."""
    env.ok(env.exec_kubeconfig("token", "revoked-token", Env.TOKEN))
    expect(env.run_count() == 2, f"{env.run_count()} runs (want 2: one after the 401)")
    auths = env.auths()
    expect(auths[0][1] == 401, f"first request: {auths}")
    expect(all(s == 200 for _, s in auths[1:]), f"after the renewal: {auths}")
    os.unlink(env.runs)
    env.fails(env.exec_kubeconfig("token", "revoked-token"), "401")
    # The Nodes and Pods lists run side by side: a request refused with the
    # renewed token may renew once more (as client-go's does), so 3 runs when
    # the second list's first request is sent after the first renewal.
    runs = env.run_count()
    expect(runs in (2, 3), f"always refused: {runs} runs (want 2, or 3: one per list)")


@case
def plugin_fails(env):
    """Exit 3: the message names the command and the exit code, and the
    plugin's own stderr reaches the user."""
    err, _ = env.fails(env.exec_kubeconfig("fail", "3", "AccessDenied: the SSO session expired"),
                       f"executable {PLUGIN} failed with exit code 3",
                       "AccessDenied: the SSO session expired")


@case
def path_never_current_directory(env):
    """A bare command name is looked up in PATH as kubectl (Go's LookPath)
    does: found first through an empty or relative PATH entry (a stray ':',
    '.') it is refused and never run, though the directory the user is in
    holds it; found through an absolute entry it runs."""
    here = env.path("repo")
    os.makedirs(here, exist_ok=True)
    shutil.copy(PLUGIN, os.path.join(here, "topo-fake-aws"))
    kc = env.exec_kubeconfig("token", Env.TOKEN, command="topo-fake-aws")
    for path in ("/usr/bin:/bin:", ":/usr/bin:/bin", "/usr/bin::/bin", ".:/usr/bin:/bin",
                 "repo:/usr/bin:/bin"):
        cwd = env.path("") if path.startswith("repo") else here
        env.fails(kc, "executable topo-fake-aws found only relative to the current directory",
                  env={"PATH": path}, cwd=cwd)
        expect(env.run_count() == 0, f"PATH={path}: the plugin ran {env.run_count()} times")
    env.fails(kc, "executable topo-fake-aws not found", env={"PATH": "/usr/bin:/bin"}, cwd=here)
    expect(env.run_count() == 0, f"the plugin ran {env.run_count()} times")
    env.ok(kc, env={"PATH": "/usr/bin:/bin:" + here}, cwd=env.path(""))
    expect(env.run_count() == 1, f"through an absolute entry: {env.run_count()} runs (want 1)")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@case
def webhook_one_run(env):
    """topo-webhook given an exec kubeconfig runs the plugin once for all its
    clients (the filler's lists and watches, the ungater, its Lease): they
    share one loaded configuration, hence one credential and one back-off
    (each had loaded its own: two runs, and a failing plugin run twice per
    back-off window). topo-webhook is the build tree's, beside the plugin's
    cli/ directory."""
    webhook = os.path.join(os.path.dirname(os.path.dirname(env.plugin)), "webhook",
                           "topo-webhook")
    expect(os.access(webhook, os.X_OK), f"no topo-webhook at {webhook}")
    kc = env.exec_kubeconfig("token", Env.TOKEN)
    health = free_port()
    p = subprocess.Popen([webhook, "--kubeconfig", kc, "--levels", LEVELS,
                          "--db", env.path("webhook.db"), "--port", str(free_port()),
                          "--health-port", str(health),
                          "--tls-cert-file", env.path("server.pem"),
                          "--tls-private-key-file", env.path("server.key"),
                          "--lease-namespace", "default", "--log-format", "text"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=open(env.path("webhook.log"), "w"), start_new_session=True)
    try:
        import urllib.request
        deadline = time.monotonic() + 30
        ready = False
        while time.monotonic() < deadline and not ready and p.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as r:
                    ready = r.status == 200
            except OSError:
                time.sleep(0.2)
        with open(env.path("webhook.log")) as fh:
            log = fh.read()
        expect(ready, f"topo-webhook not ready in 30 s (exit {p.poll()}):\n{log[-3000:]}")
        time.sleep(1.5)  # the ungater's and the Lease's first requests are made by now
        expect(env.run_count() == 1, f"{env.run_count()} plugin runs (want 1 for all clients)")
    finally:
        p.terminate()
        p.wait(30)


@case
def plugin_missing(env):
    """A command that is not installed: the message says so and shows the
    kubeconfig's installHint."""
    hint = "Install aws-cli: https://docs.aws.amazon.com/cli/"
    env.fails(env.exec_kubeconfig(command="topo-no-such-plugin", installHint=hint),
              "executable topo-no-such-plugin not found", hint)


@case
def plugin_garbage(env):
    """Output that is not an ExecCredential: the message names what is
    wrong."""
    env.fails(env.exec_kubeconfig("garbage", "hello"), "decoding stdout")
    env.fails(env.exec_kubeconfig("garbage", '{"kind": "Pod"}'),
              'kind: is "Pod", want ExecCredential')
    env.fails(env.exec_kubeconfig("api", V1BETA1, "token", "t"),
              f"configured to use API version {V1}", V1BETA1)
    env.fails(env.exec_kubeconfig("garbage", json.dumps({"kind": "ExecCredential",
                                                         "apiVersion": V1})),
              "status: missing")
    env.fails(env.exec_kubeconfig("garbage", json.dumps(
        {"kind": "ExecCredential", "apiVersion": V1,
         "status": {"token": "t", "expirationTimestamp": "tomorrow"}})),
        'status.expirationTimestamp: "tomorrow" is not an RFC 3339 time')


@case
def plugin_output_limit(env):
    """2 MiB on stdout: refused at the 1 MiB limit, saying so."""
    env.fails(env.exec_kubeconfig("big", str(2 * 1024 * 1024)),
              "printed more than 1048576 bytes on standard output")


@case
def plugin_timeout(env):
    """A plugin that never finishes is killed with its children at the
    timeout (TOPO_EXEC_TIMEOUT_MS here, 60 s by default; 3 s leaves python
    the time to start and write the child's pid on a loaded machine)."""
    pidfile = env.path("child.pid")
    err, secs = env.fails(env.exec_kubeconfig("sleep", "30", pidfile),
                          "did not finish within 3000 ms", env={"TOPO_EXEC_TIMEOUT_MS": "3000"})
    expect(secs < 20, f"the command took {secs:.1f} s (the plugin sleeps 30 s)")
    with open(pidfile) as fh:
        child = int(fh.read())
    deadline = time.monotonic() + 5
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    expect(gone(child), f"the plugin's child {child} still runs")


# The webhook's ConfigMap as the chart renders it (labels and key), for the
# levels read from the cluster.
WEBHOOK_CONFIGMAP = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "topo-webhook", "namespace": "topo-system", "labels": {
        "app.kubernetes.io/part-of": "topo", "app.kubernetes.io/component": "webhook",
        "app.kubernetes.io/instance": "topo"}},
    "data": {"config.yaml": f"topologies:\n- name: default\n  levels: [{LEVELS}]\n"}}
# Its registration, which names the install whose ConfigMap is read.
WEBHOOK_REGISTRATION = {
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "topo-webhook", "labels": WEBHOOK_CONFIGMAP["metadata"]["labels"]},
    "webhooks": [{"name": "pods.topology.topo.io", "admissionReviewVersions": ["v1"],
                  "sideEffects": "NoneOnDryRun",
                  "clientConfig": {"service": {"name": "topo-webhook",
                                               "namespace": "topo-system"}}}]}


def add_install(env):
    env.create("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
               WEBHOOK_REGISTRATION)
    env.create("/api/v1/namespaces/topo-system/configmaps", WEBHOOK_CONFIGMAP)


@case
def one_run_per_command(env):
    """The levels read from the cluster and the lists of Nodes and Pods
    share one credential: the plugin runs once per command, not once for
    the levels and again for the lists."""
    add_install(env)
    kc = env.exec_kubeconfig("token", Env.TOKEN)
    rc, out, err, _ = env.show(kc, levels=None)
    expect(rc == 0 and "a100-r1-a" in out and err.startswith("levels from ConfigMap "),
           f"show without --levels: exit {rc}\n{out}\n{err}")
    expect(env.run_count() == 1, f"the plugin ran {env.run_count()} times (want 1)")


def expect_once(err, text):
    n = err.count(text)
    expect(n == 1, f"{text!r} is {n} times in the message (want once): {err!r}")


@case
def failure_runs_once(env):
    """A plugin that fails (exit status, garbage) runs once per command,
    with --levels (the lists of Nodes and Pods) and without (the levels
    first): its failure and its own stderr are printed once, exit 2."""
    add_install(env)
    for levels in (LEVELS, None):
        for args, want in ((["fail", "3", "AccessDenied: the SSO session expired"],
                            ["failed with exit code 3", "AccessDenied: the SSO session expired"]),
                           (["garbage", "hello"], ["decoding stdout"])):
            if os.path.exists(env.runs):
                os.unlink(env.runs)
            rc, out, err, _ = env.show(env.exec_kubeconfig(*args), levels=levels)
            expect(rc == 2 and out == "", f"{args} levels {levels}: exit {rc} {out!r} {err!r}")
            for w in want:
                expect_once(err, w)
            expect(env.run_count() == 1,
                   f"{args} levels {levels}: the plugin ran {env.run_count()} times (want 1)")
        # Missing: said once.
        rc, _, err, _ = env.show(env.exec_kubeconfig(command="topo-no-such-plugin"),
                                 levels=levels)
        expect(rc == 2, f"missing: exit {rc}")
        expect_once(err, "executable topo-no-such-plugin not found")


@case
def hanging_plugin_one_timeout(env):
    """A plugin that never finishes is run once: the command ends after one
    timeout (3 s here), not one per list and retry."""
    pidfile = env.path("child.pid")
    rc, out, err, secs = env.show(env.exec_kubeconfig("sleep", "30", pidfile),
                                  env={"TOPO_EXEC_TIMEOUT_MS": "3000"})
    expect(rc == 2 and out == "", f"exit {rc} {out!r} {err!r}")
    expect_once(err, "did not finish within 3000 ms")
    expect(env.run_count() == 1, f"the plugin ran {env.run_count()} times (want 1)")
    expect(secs < 5.5, f"the command took {secs:.1f} s (one timeout is 3 s)")


@case
def interactive_always_without_terminal(env):
    """interactiveMode Always needs a terminal on stdin: without one, a
    clear error and the plugin never runs; v1 requires interactiveMode."""
    env.fails(env.exec_kubeconfig("token", "t", mode="Always"),
              "standard input is not a terminal")
    expect(env.run_count() == 0, "the plugin ran")
    env.fails(env.exec_kubeconfig("token", "t", mode=None), "interactiveMode: missing")


@case
def auth_provider(env):
    """The legacy auth-provider names the exec plugin that replaces it."""
    for name, want in (("gcp", "gke-gcloud-auth-plugin"), ("azure", "kubelogin"),
                       ("oidc", "oidc-login")):
        kc = env.write_kubeconfig("ap", user={"auth-provider": {"name": name}})
        env.fails(kc, f'auth provider "{name}" is not supported', want)


if __name__ == "__main__":
    sys.exit(run_cases(CASES, Env, bin_flag="--kubectl-topo"))
