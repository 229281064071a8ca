#!/usr/bin/env python3
"""Process-level tests of topo's Kubernetes client (lib/net/k8s.c, kubeconfig.c,
leader.c) through test/e2e/k8s_driver.c, against fake_apiserver.py over TLS with a
test CA made at test time (make_test_pki.sh). Python 3 standard library only.

usage: k8s_e2e.py --driver BIN (--list | --case NAME | --all) [--keep]
"""

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from harness import Failure, expect, registry, run_cases
from harness.fakeapi import FakeApiEnv

NODES = "/api/v1/nodes"

CASES, case = registry()


class Env(FakeApiEnv):
    """One fake API server with its PKI, token file and kubeconfigs."""

    PREFIX = "topo-k8s-e2e-"
    TOKEN = "token-one"
    NAMESPACE = "topo-system"

    def __init__(self, driver, keep, server_args=()):
        self.driver_bin = driver
        self.extra_args = list(server_args)
        super().__init__(keep)

    def server_args(self):
        # Client certificates are accepted (the kubeconfig forms); frequent bookmarks.
        return ["--client-ca", self.path("ca.pem"), *super().server_args(),
                "--bookmark-interval", "0.5", *self.extra_args]

    def rv(self):
        return self.admin("stats")["rv"]

    def requests(self):
        return self.admin("requests")["requests"]

    # -------------------------------------------------------------- the driver

    def driver_args(self, args, kubeconfig):
        pre = []
        if args and args[0] == "--in-cluster":
            pre, args = list(args[:2]), list(args[2:])
        else:
            pre = ["--kubeconfig", kubeconfig or self.kubeconfig]
        while args and args[0].startswith("--"):
            pre += args[:2]
            args = args[2:]
        return [self.driver_bin, *pre, *args]

    def run(self, *args, kubeconfig=None, timeout=60, env=None):
        p = subprocess.run(self.driver_args(list(args), kubeconfig), capture_output=True,
                           text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout.splitlines(), p.stderr

    def spawn(self, *args, kubeconfig=None, stdin=False):
        p = Driver(self.driver_args(list(args), kubeconfig), stdin)
        self.procs.append(p)
        return p


class Driver:
    """A driver process whose stdout lines are collected with their arrival time."""

    def __init__(self, argv, stdin):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                  text=True, bufsize=1)
        self.lines = []
        self.cond = threading.Condition()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()
        self.err = []
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i, line in enumerate(self.lines):
                    if pred(line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"timed out waiting for {what}; output:\n" +
                                  "\n".join(self.lines[-40:]) + "\nstderr:\n" +
                                  "".join(self.err[-20:]))
                self.cond.wait(left)

    def count(self, pred):
        with self.cond:
            return sum(1 for line in self.lines if pred(line))

    def snapshot(self):
        with self.cond:
            return list(self.lines)

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def signal(self, sig):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def finish(self, timeout=30):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Failure("driver did not finish; output:\n" + "\n".join(self.lines[-40:]))
        self.t.join(5)
        return self.p.returncode

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def first_node(env):
    status, lst = env.request("GET", NODES + "?limit=1")
    expect(status == 200, f"list: {status}")
    return lst["items"][0]["metadata"]["name"]


def ok_get(env, *args, kubeconfig=None):
    rc, out, err = env.run(*args, kubeconfig=kubeconfig)
    expect(rc == 0 and out and out[0].startswith("{"),
           f"driver {' '.join(args)}: exit {rc}\n{out}\n{err}")
    return json.loads(out[0])


def error_of(out):
    for line in out:
        if line.startswith("error "):
            return line
    return ""


# =================================================================== cases

@case
def kubeconfig_forms(env):
    """CA as data and as a file, bearer token file, client certificates as files and
    as data, insecure-skip-tls-verify; failures: wrong CA, no credentials, bad fields."""
    env.admin("load", {"resource": "nodes", "count": 3})
    name = first_node(env)
    # CA data + tokenFile (the default kubeconfig).
    obj = ok_get(env, "get", "nodes", name)
    expect(obj["kind"] == "Node" and obj["metadata"]["name"] == name, f"got {obj}")
    # CA file + client certificate files, no token: authenticated by the certificate.
    kc = env.write_kubeconfig("kc-files", {"certificate-authority": "ca.pem"},
                              {"client-certificate": "client.pem", "client-key": "client.key"})
    ok_get(env, "get", "nodes", name, kubeconfig=kc)
    expect(env.requests()[-1]["auth"].startswith("cert:"), f"{env.requests()[-1]}")

    def b64(f):
        with open(env.path(f), "rb") as fh:
            return base64.b64encode(fh.read()).decode()

    kc = env.write_kubeconfig("kc-data", None, {"client-certificate-data": b64("client.pem"),
                                                "client-key-data": b64("client.key")})
    ok_get(env, "get", "nodes", name, kubeconfig=kc)
    expect(env.requests()[-1]["auth"].startswith("cert:"), f"{env.requests()[-1]}")
    # insecure-skip-tls-verify with a fixed token.
    kc = env.write_kubeconfig("kc-insecure", {"insecure-skip-tls-verify": True},
                              {"token": env.token})
    ok_get(env, "get", "nodes", name, kubeconfig=kc)
    # A CA that did not sign the server's certificate.
    kc = env.write_kubeconfig("kc-wrong-ca", {"certificate-authority": "other-ca.pem"})
    rc, out, _ = env.run("get", "nodes", name, kubeconfig=kc)
    expect(rc == 1 and "TOPO_ECONNECT" in error_of(out), f"wrong CA: {out}")
    # No credentials at all.
    kc = env.write_kubeconfig("kc-anon", None, {})
    rc, out, _ = env.run("get", "nodes", name, kubeconfig=kc)
    expect(rc == 1 and "TOPO_EUNAUTHORIZED" in error_of(out) and "Unauthorized" in out[0],
           f"anonymous: {out}")
    # A kubeconfig error names the file and the field.
    kc = env.write_kubeconfig("kc-bad", None, {"client-key-data": "%%%"})
    rc, out, _ = env.run("get", "nodes", name, kubeconfig=kc)
    expect(rc == 1 and "users[0].user.client-key-data" in error_of(out) and kc in out[0],
           f"bad kubeconfig: {out}")
    # A YAML kubeconfig with the token inline, read through libyaml.
    env.write(env.path("kc.yaml"), "\n".join([
        "apiVersion: v1", "kind: Config", "current-context: y",
        "clusters:", "- name: c", "  cluster:", f"    server: {env.url}",
        f"    certificate-authority: {env.path('ca.pem')}",
        "contexts:", "- name: y", "  context: {cluster: c, user: u}",
        "users:", "- name: u", "  user:", f"    token: {env.token}", ""]))
    ok_get(env, "get", "nodes", name, kubeconfig=env.path("kc.yaml"))


@case
def in_cluster(env):
    """Service-account directory + KUBERNETES_SERVICE_HOST/PORT."""
    env.admin("load", {"resource": "nodes", "count": 2})
    name = first_node(env)
    sa = env.path("sa")
    os.mkdir(sa)
    shutil.copy(env.path("ca.pem"), os.path.join(sa, "ca.crt"))
    env.write(os.path.join(sa, "token"), env.token + "\n")
    env.write(os.path.join(sa, "namespace"), "topo-system")
    e = dict(os.environ, KUBERNETES_SERVICE_HOST="127.0.0.1",
             KUBERNETES_SERVICE_PORT=str(env.port))
    rc, out, err = env.run("--in-cluster", sa, "get", "nodes", name, env=e)
    expect(rc == 0 and json.loads(out[0])["metadata"]["name"] == name, f"{out} {err}")
    rc, out, err = env.run("--in-cluster", sa, "config", env=e)
    expect(f"server https://127.0.0.1:{env.port}" in out and "namespace topo-system" in out,
           f"{out}")
    # The token file is re-read: rotate it under the running client's feet.
    env.rotate_token("token-two")
    env.write(os.path.join(sa, "token"), "token-two\n")
    rc, out, err = env.run("--in-cluster", sa, "get", "nodes", name, env=e)
    expect(rc == 0, f"after rotation: {out} {err}")
    e.pop("KUBERNETES_SERVICE_HOST")
    rc, out, err = env.run("--in-cluster", sa, "get", "nodes", name, env=e)
    expect(rc == 1 and "TOPO_ENOTFOUND" in error_of(out) and "KUBERNETES_SERVICE_HOST" in out[0],
           f"outside a pod: {out}")


@case
def paging_10k(env):
    """10,000 nodes in pages of 500: each exactly once, one snapshot, even while
    nodes are deleted, added and changed between the pages."""
    t0 = time.monotonic()
    env.admin("load", {"resource": "nodes", "count": 10000})
    _, lst = env.request("GET", NODES)
    names = [it["metadata"]["name"] for it in lst["items"]]
    expect(len(names) == 10000, f"loaded {len(names)}")
    rv0 = env.rv()
    env.admin("requests/clear", {})
    t1 = time.monotonic()
    d = env.spawn("list", "nodes", "--limit", "500", "--pause-after", "500", stdin=True)
    d.wait_for(lambda line: line == "paused", 30, "the first page")
    # Writes between the first page and the rest.
    for n in names[5000:5003]:
        expect(env.request("DELETE", f"{NODES}/{n}")[0] == 200, "delete")
    for n in ("zz-new-1", "aa-new-2"):
        expect(env.request("POST", NODES, {"metadata": {"name": n}})[0] == 201, "create")
    st, _ = env.request("PATCH", f"{NODES}/{names[9999]}", {"metadata": {"labels": {"x": "y"}}},
                        "application/merge-patch+json")
    expect(st == 200, "patch")
    d.send("go")
    expect(d.finish(60) == 0, "list failed:\n" + "\n".join(d.snapshot()[-5:]))
    out = d.snapshot()
    t2 = time.monotonic()
    items = [line.split()[1] for line in out if line.startswith("item ")]
    expect(len(items) == 10000, f"{len(items)} items")
    expect(len(set(items)) == 10000, "duplicates")
    expect(set(items) == {"/" + n for n in names}, "not the snapshot of the first page")
    expect(f"rv {rv0}" in out, f"list rv is not {rv0}: {[x for x in out if x.startswith('rv')]}")
    expect("count 10000" in out, "count")
    pages = [r for r in env.requests() if r["method"] == "GET" and r["path"].startswith(NODES)]
    expect(len(pages) == 20 and all(r["status"] == 200 for r in pages), f"{len(pages)} pages")
    expect(all("limit=500" in r["path"] for r in pages), "limit")
    # A fresh list sees the new state.
    rc, out, _ = env.run("list", "nodes")
    expect(rc == 0 and "count 9999" in out and any(" /aa-new-2 " in x + " " for x in out),
           f"second list: {out[-3:]}")
    print(f"paging: load {t1 - t0:.2f}s, 10,000 nodes in 20 pages {t2 - t1:.2f}s")


@case
def watch_events(env):
    """ADDED, MODIFIED, DELETED in order with their resourceVersions, and bookmarks."""
    env.admin("load", {"resource": "nodes", "count": 5})
    rv0 = env.rv()
    d = env.spawn("watch", "nodes", "--rv", str(rv0), "--timeout", "3")
    time.sleep(0.3)
    st, created = env.request("POST", NODES, {"metadata": {"name": "w1", "labels": {"a": "1"}}})
    expect(st == 201, "create")
    st, patched = env.request("PATCH", f"{NODES}/w1", {"metadata": {"labels": {"a": "2"}}},
                              "application/merge-patch+json")
    expect(st == 200, "patch")
    st, deleted = env.request("DELETE", f"{NODES}/w1")
    expect(st == 200, "delete")
    expect(d.finish(15) == 0, "watch driver failed")
    out = d.snapshot()
    events = [line.split() for line in out if line.startswith("event ") and "BOOKMARK" not in line]
    want = [["event", "ADDED", "/w1", created["metadata"]["resourceVersion"]],
            ["event", "MODIFIED", "/w1", patched["metadata"]["resourceVersion"]],
            ["event", "DELETED", "/w1", deleted["metadata"]["resourceVersion"]]]
    expect(events == want, f"events {events}\nwant {want}")
    bookmarks = [line for line in out if " BOOKMARK " in line]
    expect(len(bookmarks) >= 2, f"bookmarks: {out}")
    end = [line for line in out if line.startswith("end ")]
    expect(len(end) == 1 and end[0].split()[1] == "OK", f"end: {end}")
    expect(int(end[0].split()[2]) >= int(deleted["metadata"]["resourceVersion"]),
           f"watch rv did not advance past the last event: {end}")
    # A label-selected watch from "now": only matching objects, through changes of the label.
    rv1 = env.rv()
    d = env.spawn("watch", "nodes", "--rv", str(rv1), "--timeout", "2", "--label-selector",
                  "team=ml")
    time.sleep(0.3)
    env.request("POST", NODES, {"metadata": {"name": "w2", "labels": {"team": "ml"}}})
    env.request("POST", NODES, {"metadata": {"name": "w3", "labels": {"team": "other"}}})
    env.request("PATCH", f"{NODES}/w2", {"metadata": {"labels": {"team": "gone"}}},
                "application/merge-patch+json")
    expect(d.finish(15) == 0, "selected watch failed")
    events = [line.split()[1:3] for line in d.snapshot()
              if line.startswith("event ") and "BOOKMARK" not in line]
    expect(events == [["ADDED", "/w2"], ["DELETED", "/w2"]], f"selected events {events}")


@case
def watch_gone(env):
    """A resourceVersion older than the history: 410 as HTTP status and in-stream."""
    env.admin("load", {"resource": "nodes", "count": 5})
    env.admin("churn", {"count": 10})
    env.admin("compact", {})
    for mode in ("http", "event"):
        env.admin("config", {"gone_mode": mode})
        rc, out, _ = env.run("watch", "nodes", "--rv", "3", "--timeout", "2")
        end = [line for line in out if line.startswith("end ")]
        expect(rc == 0 and end and end[0].split()[1] == "TOPO_EGONE", f"{mode}: {out}")
        msg = [line for line in out if line.startswith("message ")]
        expect(msg and "410" in msg[0] and "too old resource version" in msg[0], f"{out}")
        expect(end[0].split()[2] == "3", "rv must stay where it was")
    # A continue token that outlived a compaction is 410 too (the pager restarts).
    _, page = env.request("GET", NODES + "?limit=2")
    env.admin("compact", {})
    st, body = env.request("GET", NODES + "?limit=2&continue=" + page["metadata"]["continue"])
    expect(st == 410 and body["reason"] == "Expired", f"{st} {body}")


@case
def watch_recovery(env):
    """A reflector (list, watch, relist on 410) over closed watches, HTTP 410 and
    in-stream 410, with churn all along: its final view equals the server's."""
    env.admin("load", {"resource": "nodes", "count": 300})
    d = env.spawn("sync", "nodes", "--duration-ms", "7000", "--watch-timeout", "30")
    d.wait_for(lambda line: line.startswith("synced "), 15, "the first list")
    env.admin("churn", {"count": 100, "seed": 1})
    # 1. The server closes the watch: resume from the last rv, no relist.
    env.admin("watches/close", {"mode": "close"})
    env.admin("churn", {"count": 50, "seed": 2})
    time.sleep(0.5)
    # 2. HTTP 410: the rewatch arrives after a compaction.
    env.admin("config", {"gone_mode": "http"})
    env.admin("fault", {"kind": "delay", "delay_ms": 800, "watch": True, "count": 1})
    env.admin("watches/close", {"mode": "close"})
    time.sleep(0.2)
    env.admin("churn", {"count": 30, "seed": 3})
    env.request("DELETE", f"{NODES}/{first_node(env)}")
    env.admin("compact", {})
    d.wait_for(lambda line: line.startswith("gone "), 10, "the HTTP 410")
    d.wait_for(lambda line: d.count(lambda x: x.startswith("synced ")) >= 2, 10, "a relist")
    # 3. In-stream ERROR 410 while events keep coming.
    env.admin("config", {"gone_mode": "event"})
    env.admin("churn", {"count": 40, "seed": 4})
    env.admin("compact", {"expire_watches": True})
    env.request("POST", NODES, {"metadata": {"name": "late-node"}})
    env.admin("churn", {"count": 40, "seed": 5})
    expect(d.finish(20) == 0, "sync failed:\n" + "\n".join(d.snapshot()[-10:]))
    out = d.snapshot()
    expect(d.count(lambda x: x.startswith("gone ")) >= 2, f"410s seen: {out[:5]}")
    errors = [x for x in out if "error" in x]
    expect(not errors, f"errors: {errors}")
    state = {x.split()[1]: x.split()[2] for x in out if x.startswith("state ")}
    _, lst = env.request("GET", NODES)
    server = {"/" + it["metadata"]["name"]: it["metadata"]["resourceVersion"]
              for it in lst["items"]}
    missing = set(server) - set(state)
    extra = set(state) - set(server)
    stale = [k for k in server if k in state and state[k] != server[k]]
    expect(not missing and not extra and not stale,
           f"view differs: missing {sorted(missing)[:5]} extra {sorted(extra)[:5]} "
           f"stale {stale[:5]}")
    relists = [x for x in out if x.startswith("relists ")]
    expect(relists == ["relists 3"], f"{relists}")


@case
def token_rotation(env):
    """The token file is rewritten while requests flow; the old token is refused at
    once (401), yet no request fails: the client re-reads the file and resends."""
    env.admin("load", {"resource": "nodes", "count": 1})
    name = first_node(env)
    env.admin("requests/clear", {})
    d = env.spawn("get-loop", "nodes", name, "--count", "20", "--interval-ms", "50")
    d.wait_for(lambda line: d.count(lambda x: x.startswith("ok ")) >= 5, 10, "5 requests")
    env.rotate_token("token-rotated")
    expect(d.finish(30) == 0, "get-loop failed:\n" + "\n".join(d.snapshot()))
    out = d.snapshot()
    expect(sum(1 for x in out if x.startswith("ok ")) == 20, f"{out}")
    reqs = [r for r in env.requests() if r["path"].startswith(NODES)]
    unauthorized = [r for r in reqs if r["status"] == 401]
    expect(len(unauthorized) == 1, f"401s: {len(unauthorized)}")
    after = reqs[reqs.index(unauthorized[0]) + 1:]
    expect(after and all(r["auth"] == "bearer:token-rotate" and r["status"] == 200
                         for r in after), f"after rotation: {after[:3]}")


@case
def conflicts(env):
    """A stale resourceVersion precondition is 409 (merge and JSON patch, update,
    delete); the read-modify-write helper re-reads and succeeds."""
    env.admin("load", {"resource": "nodes", "count": 2})
    name = first_node(env)
    _, node = env.request("GET", f"{NODES}/{name}")
    rv0 = node["metadata"]["resourceVersion"]
    env.request("PATCH", f"{NODES}/{name}", {"metadata": {"labels": {"other": "writer"}}},
                "application/merge-patch+json")
    rc, out, _ = env.run("patch", "nodes", name, "--type", "merge", "--patch",
                         '{"metadata":{"labels":{"topology.topo.io/rack":"r9"}}}', "--rv", rv0)
    expect(rc == 1 and "TOPO_ECONFLICT" in error_of(out) and "409 Conflict" in out[0] and
           "the object has been modified" in out[0], f"stale merge patch: {out}")
    rc, out, _ = env.run("patch", "nodes", name, "--type", "json", "--patch",
                         '[{"op":"add","path":"/metadata/labels/x","value":"1"}]', "--rv", rv0)
    expect(rc == 1 and "TOPO_ECONFLICT" in error_of(out), f"stale JSON patch: {out}")
    _, node = env.request("GET", f"{NODES}/{name}")
    expect("x" not in node["metadata"]["labels"] and
           node["metadata"]["labels"]["topology.topo.io/rack"] != "r9", "a refused patch wrote")
    rv1 = node["metadata"]["resourceVersion"]
    rc, out, _ = env.run("patch", "nodes", name, "--type", "merge", "--patch",
                         '{"metadata":{"labels":{"topology.topo.io/rack":"r9"}}}', "--rv", rv1)
    expect(rc == 0 and out[0].startswith("patched "), f"fresh patch: {out}")
    # Read-modify-write: another writer strikes between our read and write, once.
    env.admin("requests/clear", {})
    env.admin("fault", {"kind": "touch", "method": "PATCH", "count": 1})
    rc, out, _ = env.run("patch-retry", "nodes", name, "--label", "seen-rv")
    expect(rc == 0, f"patch-retry: {out}")
    seq = [(r["method"], r["status"]) for r in env.requests()]
    expect(seq == [("GET", 200), ("PATCH", 409), ("GET", 200), ("PATCH", 200)], f"{seq}")
    _, node = env.request("GET", f"{NODES}/{name}")
    touched = node["metadata"]["annotations"]["fake.topo.io/touched"]
    expect(node["metadata"]["labels"]["seen-rv"] == touched, "built from the re-read object")
    # The helper gives up after its attempts.
    env.admin("fault", {"kind": "touch", "method": "PATCH", "count": 10})
    rc, out, _ = env.run("patch-retry", "nodes", name, "--label", "seen-rv", "--attempts", "3")
    expect(rc == 1 and "TOPO_ECONFLICT" in error_of(out) and "gave up after 3" in out[0],
           f"{out}")
    env.admin("faults/clear", {})
    # Create, update and delete of a Lease with preconditions.
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "l1", "namespace": "topo-system"},
             "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}
    rc, out, _ = env.run("create", "leases", "--ns", "topo-system", "--object", json.dumps(lease))
    expect(rc == 0 and out[0].startswith("created "), f"{out}")
    lrv = out[0].split()[1]
    rc, out, _ = env.run("create", "leases", "--ns", "topo-system", "--object", json.dumps(lease))
    expect(rc == 1 and "TOPO_ECONFLICT" in error_of(out) and "AlreadyExists" in out[0], f"{out}")
    lease["metadata"]["resourceVersion"] = lrv
    lease["spec"]["holderIdentity"] = "you"
    rc, out, _ = env.run("update", "leases", "--ns", "topo-system", "--object", json.dumps(lease))
    expect(rc == 0, f"{out}")
    rc, out, _ = env.run("update", "leases", "--ns", "topo-system", "--object", json.dumps(lease))
    expect(rc == 1 and "TOPO_ECONFLICT" in error_of(out), f"stale update: {out}")
    rc, out, _ = env.run("delete", "leases", "l1", "--ns", "topo-system", "--rv", lrv)
    expect(rc == 1 and "TOPO_ECONFLICT" in error_of(out), f"stale delete: {out}")
    rc, out, _ = env.run("delete", "leases", "l1", "--ns", "topo-system")
    expect(rc == 0 and out == ["deleted"], f"{out}")
    rc, out, _ = env.run("get", "leases", "l1", "--ns", "topo-system")
    expect(rc == 1 and "TOPO_ENOTFOUND" in error_of(out) and
           'leases.coordination.k8s.io "l1" not found' in out[0], f"{out}")


@case
def json_patch(env):
    """RFC 6902 through the client: a failed test op is 422 → TOPO_EINVALID; a passing
    one applies the rest; label keys with '/' are escaped as ~1."""
    env.admin("load", {"resource": "nodes", "count": 1})
    name = first_node(env)
    rc, out, _ = env.run("patch", "nodes", name, "--type", "json", "--patch", json.dumps(
        [{"op": "test", "path": "/metadata/labels/kubernetes.io~1hostname", "value": "wrong"},
         {"op": "add", "path": "/metadata/labels/x", "value": "1"}]))
    expect(rc == 1 and "TOPO_EINVALID" in error_of(out) and "422" in out[0] and
           "test failed" in out[0], f"{out}")
    rc, out, _ = env.run("patch", "nodes", name, "--type", "json", "--patch", json.dumps(
        [{"op": "test", "path": "/metadata/labels/kubernetes.io~1hostname", "value": name},
         {"op": "add", "path": "/metadata/labels/topology.topo.io~1leaf", "value": "lf9"},
         {"op": "remove", "path": "/metadata/labels/topology.topo.io~1rack"}]))
    expect(rc == 0, f"{out}")
    _, node = env.request("GET", f"{NODES}/{name}")
    labels = node["metadata"]["labels"]
    expect(labels["topology.topo.io/leaf"] == "lf9" and "topology.topo.io/rack" not in labels,
           f"{labels}")
    # Removing a missing key fails as a whole.
    rc, out, _ = env.run("patch", "nodes", name, "--type", "json", "--patch",
                         '[{"op":"remove","path":"/metadata/labels/nope"}]')
    expect(rc == 1 and "TOPO_EINVALID" in error_of(out), f"{out}")


@case
def server_errors(env):
    """429 with Retry-After, 5xx, dropped and reset connections, slow bodies, 403 and
    404, through the client's retries and its error mapping."""
    env.admin("load", {"resource": "nodes", "count": 600})
    name = first_node(env)
    fast = ["--backoff-ms", "20"]

    def reqs():
        return [(r["method"], r["status"]) for r in env.requests()]

    def fresh():
        env.admin("requests/clear", {})

    fresh()
    env.admin("fault", {"kind": "status", "code": 429, "retry_after": 1, "count": 1})
    t = time.monotonic()
    ok_get(env, *fast, "get", "nodes", name)
    waited = time.monotonic() - t
    expect(reqs() == [("GET", 429), ("GET", 200)] and waited >= 0.9,
           f"429: {reqs()} after {waited:.2f}s")
    fresh()
    env.admin("fault", {"kind": "status", "code": 429, "retry_after": 0, "count": 50})
    rc, out, _ = env.run(*fast, "--retries", "2", "get", "nodes", name)
    expect(rc == 1 and "TOPO_ETHROTTLED" in error_of(out) and "TooManyRequests" in out[0],
           f"{out}")
    expect(len(reqs()) == 3, f"{reqs()}")
    env.admin("faults/clear", {})
    fresh()
    env.admin("fault", {"kind": "status", "code": 500, "count": 2})
    ok_get(env, *fast, "get", "nodes", name)
    expect(reqs() == [("GET", 500), ("GET", 500), ("GET", 200)], f"500 x2: {reqs()}")
    fresh()
    env.admin("fault", {"kind": "status", "code": 503, "count": 50})
    rc, out, _ = env.run(*fast, "--retries", "2", "get", "nodes", name)
    expect(rc == 1 and "TOPO_ESERVER" in error_of(out) and "503 ServiceUnavailable" in out[0],
           f"{out}")
    env.admin("faults/clear", {})
    fresh()
    env.admin("fault", {"kind": "status", "code": 500, "count": 1, "method": "PATCH"})
    rc, out, _ = env.run(*fast, "patch", "nodes", name, "--type", "merge", "--patch",
                         '{"metadata":{"labels":{"p":"1"}}}')
    expect(rc == 1 and "TOPO_ESERVER" in error_of(out) and
           "Internal error occurred: injected fault" in out[0], f"{out}")
    expect(reqs() == [("PATCH", 500)], f"a PATCH is not retried: {reqs()}")
    fresh()
    env.admin("fault", {"kind": "status", "code": 504, "count": 50})
    rc, out, _ = env.run(*fast, "--retries", "1", "get", "nodes", name)
    expect(rc == 1 and "TOPO_ETIMEOUT" in error_of(out), f"504: {out}")
    env.admin("faults/clear", {})
    env.admin("fault", {"kind": "status", "code": 403, "count": 1})
    rc, out, _ = env.run(*fast, "get", "nodes", name)
    expect(rc == 1 and "TOPO_EFORBIDDEN" in error_of(out), f"403: {out}")
    rc, out, _ = env.run(*fast, "get", "nodes", "no-such-node")
    expect(rc == 1 and "TOPO_ENOTFOUND" in error_of(out) and 'nodes "no-such-node" not found'
           in out[0], f"404: {out}")
    # Broken connections on a paged list: retried, nothing lost or doubled.
    fresh()
    env.admin("fault", {"kind": "drop", "count": 1, "path": NODES})
    env.admin("fault", {"kind": "reset", "count": 1, "path": NODES})
    env.admin("fault", {"kind": "slow", "count": 1, "chunk": 65536, "delay_ms": 20,
                        "path": NODES})
    rc, out, _ = env.run(*fast, "list", "nodes", "--limit", "250")
    items = [x.split()[1] for x in out if x.startswith("item ")]
    expect(rc == 0 and len(items) == 600 and len(set(items)) == 600, f"list: {out[-3:]}")
    expect(env.admin("stats")["faults"] == 0, "faults not all used")
    # A dead server: connection refused.
    kc = env.write_kubeconfig("kc-dead", {"insecure-skip-tls-verify": True}, {"token": "t"})
    with open(kc) as fh:
        cfg = json.load(fh)
    cfg["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    env.write(kc, json.dumps(cfg))
    rc, out, _ = env.run(*fast, "--retries", "1", "get", "nodes", name, kubeconfig=kc)
    expect(rc == 1 and "TOPO_ECONNECT" in error_of(out), f"refused: {out}")


@case
def leader_handover(env):
    """Two processes elect a leader over a Lease (lease 3 s, renew deadline 2 s,
    retry 0.5 s). A leader that cannot renew stops acting at its renew deadline,
    before the other takes over; a stopped (SIGSTOP) or killed leader is replaced
    within lease + retry and, resumed, does not act again; a cleanly stopped one
    releases the lease and hands over at the follower's next retry."""
    timing = ["--lease-ms", "3000", "--renew-ms", "2000", "--retry-ms", "500"]
    cert_kc = env.write_kubeconfig("kc-cert", None, {"client-certificate": "client.pem",
                                                     "client-key": "client.key"})
    budget = 3000 + 500 + 1000  # lease + retry + slack for process scheduling
    timings = {}

    def start(ident, *extra, kubeconfig=None):
        return env.spawn("--retries", "-1", "leader", "--ns", "topo-system", "--lease",
                         "topo-sync", "--identity", ident, *timing, *extra,
                         kubeconfig=kubeconfig)

    def stamp(line):
        return int(line.split()[1])

    def stamps(d, word):
        return [stamp(x) for x in d.snapshot() if x.startswith(word + " ")]

    def nth_leader(d, n, what):
        d.wait_for(lambda x: d.count(lambda y: y.startswith("leader ")) >= n, 10, what)
        return stamps(d, "leader")[n - 1]

    a = start("a", "--release", kubeconfig=cert_kc)  # authenticates with its certificate
    nth_leader(a, 1, "a to lead")
    b = start("b", "--release")                       # with the bearer token
    time.sleep(1.5)
    expect(not stamps(b, "leader") and not stamps(b, "act"), "b led or acted as a follower")

    # 1. The leader runs on but cannot renew (the server fails its requests).
    env.admin("fault", {"kind": "status", "code": 503, "count": 100000, "auth": "cert:"})
    t_fault = time.time() * 1000
    b_start = nth_leader(b, 1, "b to take over from a leader that cannot renew")
    a_stop = stamps(a, "follower")
    expect(a_stop, "a never reported the loss")
    expect(a_stop[0] - t_fault <= 2000 + 600, f"a stopped {a_stop[0] - t_fault:.0f} ms after "
           "its renewals began to fail (renew deadline 2000)")
    expect(max(stamps(a, "act")) < a_stop[0] + 1 <= b_start,
           f"overlap: a acted until {max(stamps(a, 'act'))}, stopped {a_stop[0]}, "
           f"b started {b_start}")
    expect(b_start - t_fault <= budget, f"takeover took {b_start - t_fault:.0f} ms")
    timings["cannot renew: a stopped after"] = a_stop[0] - t_fault
    timings["cannot renew: b took over after"] = b_start - t_fault
    env.admin("faults/clear", {})
    time.sleep(1.0)
    expect(len(stamps(a, "leader")) == 1, "a took the lease back from a renewing leader")

    # 2. The leader freezes (SIGSTOP); resumed, it must not act again.
    b.signal(signal.SIGSTOP)
    t_stop = time.time() * 1000
    a_start = nth_leader(a, 2, "a to take over from a frozen leader")
    expect(a_start - t_stop <= budget, f"takeover took {a_start - t_stop:.0f} ms")
    timings["SIGSTOP: takeover after"] = a_start - t_stop
    b.signal(signal.SIGCONT)
    b.wait_for(lambda x: x.startswith("follower "), 5, "b to notice it lost")
    time.sleep(0.3)
    expect(max(stamps(b, "act")) < a_start,
           f"b acted at {max(stamps(b, 'act'))} after a started at {a_start}")

    # 3. The leader is killed.
    a.kill()
    t_kill = time.time() * 1000
    b_again = nth_leader(b, 2, "b to take over from a killed leader")
    expect(b_again - t_kill <= budget, f"takeover after kill took {b_again - t_kill:.0f} ms")
    timings["SIGKILL: takeover after"] = b_again - t_kill

    # 4. A clean stop releases the lease: the follower takes it at its next retry.
    c = start("c")
    c.wait_for(lambda x: x.startswith("identity "), 5, "c to start")
    time.sleep(0.8)
    b.signal(signal.SIGTERM)
    t_term = time.time() * 1000
    expect(b.finish(10) == 0, "b did not stop cleanly")
    c_start = nth_leader(c, 1, "c to take the released lease")
    expect(c_start - t_term <= 500 + 700, f"hand-over after release took "
           f"{c_start - t_term:.0f} ms")
    expect(max(stamps(b, "act")) < c_start, "b acted after c started")
    timings["release: takeover after"] = c_start - t_term
    _, lease = env.request("GET", "/apis/coordination.k8s.io/v1/namespaces/topo-system/"
                                  "leases/topo-sync")
    expect(lease["spec"]["holderIdentity"] == "c" and lease["spec"]["leaseTransitions"] == 4 and
           lease["spec"]["leaseDurationSeconds"] == 3, f"{lease['spec']}")
    c.signal(signal.SIGTERM)
    expect(c.finish(10) == 0, "c did not stop")
    print("leader: " + ", ".join(f"{k} {v:.0f} ms" for k, v in timings.items()))


def main():
    return run_cases(CASES, Env)


if __name__ == "__main__":
    sys.exit(main())
