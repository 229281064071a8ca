#!/usr/bin/env python3
"""topo-webhook under valgrind: no leak, no invalid access, in both modes.

  webhook_valgrind_e2e.py --webhook build/webhook/topo-webhook --source .

The developers' guide asks for valgrind-clean daemons. Each case runs
topo-webhook under

  valgrind --error-exitcode=99 --leak-check=full
           --show-leak-kinds=definite,indirect
           --errors-for-leak-kinds=definite,indirect --track-fds=no -q

drives it, sends SIGTERM, and requires exit status 0 (99 means valgrind found
an error) and an empty valgrind log (-q prints errors only). No suppressions:
with Debian's OpenSSL, libmicrohttpd, libcurl, SQLite and jansson nothing
third-party is definitely or indirectly lost; should a library upgrade bring
such noise, a commented valgrind.supp belongs here, never a looser flag.

  * static: --inventory fixtures/clusters/hgx-h100.yaml, --db a file. A
    4-pod Job PodSet (4 distinct hosts), a pass-through pod (no patch), a pod
    that does not fit (gated), a malformed body (400), a dryRun (placed,
    then the same pod for real), GET /metrics.
  * daemon: --kubeconfig against fake_apiserver.py (4 nodes in one rack, each
    holding a bound 8-GPU pod), --ungate-interval 1 --leader-elect true: the
    filler thread, the ungater with its Lease. A 2-pod PodSet is gated, the
    patched pods created in the API server; two filler pods deleted: the
    ungater patches the gated pods (gate gone, nodeSelector set).

Exits 0 with a SKIP line when valgrind is not installed (it is in the test
packages of scripts/lib/deps.sh, so normally the test runs).
"""
import argparse
import copy
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import jsonpatch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import webhook_admission_e2e as wha  # noqa: E402  (review, job_pod, ops_of, expect)
import webhook_ungate_e2e as whu  # noqa: E402  (Api, metrics, gates_of)

STATIC_LEVELS = wha.LEVELS
DAEMON_LEVELS = whu.LEVELS
WAIT_GATE = whu.WAIT_GATE
expect = wha.expect
# valgrind runs the daemon 20-50 times slower: generous per-step timeouts.
READY_TIMEOUT = 60
REQUEST_TIMEOUT = 60
EXIT_TIMEOUT = 60


def valgrind_cmd(log_path):
    return ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect", "--track-fds=no", "-q",
            "--log-file=" + log_path]


class VgWebhook:
    """topo-webhook under valgrind, with the TLS and health ports of wha.Webhook."""

    def __init__(self, binary, pki, workdir, extra):
        self.port = wha.free_port()
        self.health = wha.free_port()
        self.vglog = os.path.join(workdir, "valgrind.log")
        self.log = open(os.path.join(workdir, "webhook.log"), "w+")
        self.proc = subprocess.Popen(
            valgrind_cmd(self.vglog) +
            [binary, "--port", str(self.port), "--health-port", str(self.health),
             "--tls-cert-file", os.path.join(pki, "server.pem"),
             "--tls-private-key-file", os.path.join(pki, "server.key"),
             "--threads", "2", "--shutdown-timeout", "10", "--log-format", "text"] + extra,
            stderr=self.log)
        self.ctx = wha.ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
        t0 = time.monotonic()
        while time.monotonic() - t0 < READY_TIMEOUT:
            if self.proc.poll() is not None:
                raise RuntimeError("topo-webhook exited before ready (rc %r)"
                                   % self.proc.returncode)
            if self.get("/readyz")[0] == 200:
                print("ready under valgrind after %.1f s" % (time.monotonic() - t0))
                return
            time.sleep(0.25)
        raise RuntimeError("topo-webhook not ready within %d s under valgrind" % READY_TIMEOUT)

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.health, timeout=REQUEST_TIMEOUT)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read()
        except OSError:
            return None, b""
        finally:
            c.close()

    def post(self, body):
        c = http.client.HTTPSConnection("localhost", self.port, context=self.ctx,
                                        timeout=REQUEST_TIMEOUT)
        try:
            c.request("POST", "/mutate?timeout=30s", body=body,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def admit(self, uid, pod, dry_run=False):
        body = json.loads(wha.review(uid, pod))
        if dry_run:
            body["request"]["dryRun"] = True
        status, raw = self.post(json.dumps(body))
        expect(status == 200, "%s: HTTP %r" % (uid, status))
        resp = json.loads(raw)["response"]
        expect(resp.get("uid") == uid, "%s: uid echoed" % uid)
        return resp

    def stop(self):
        """SIGTERM, then the process's status and valgrind's log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(EXIT_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.seek(0)
        log = self.log.read()
        self.log.close()
        try:
            with open(self.vglog) as fh:
                vg = fh.read()
        except OSError:
            vg = "(no valgrind log)"
        return log, vg


def check_clean(name, w, log, vg):
    rc = w.proc.returncode
    expect(rc == 0, "%s: exit status 0 after SIGTERM (got %r; 99 = valgrind errors)"
           % (name, rc))
    expect(vg.strip() == "", "%s: valgrind log empty" % name)
    if rc != 0 or vg.strip():
        print("--- %s: valgrind log ---\n%s" % (name, vg[-20000:]))
        print("--- %s: webhook log (tail) ---\n%s" % (name, log[-4000:]))


def nodesel(resp, pod):
    out = jsonpatch.JsonPatch(wha.ops_of(resp)).apply(copy.deepcopy(pod))
    return out, out["spec"].get("nodeSelector") or {}


def case_static(args, pki, tmp):
    workdir = os.path.join(tmp, "static")
    os.mkdir(workdir)
    inventory = os.path.join(args.source, "fixtures", "clusters", "hgx-h100.yaml")
    w = VgWebhook(args.webhook, pki, workdir,
                  ["--inventory", inventory, "--levels", STATIC_LEVELS, "--policy", "gate",
                   "--db", os.path.join(workdir, "topo.db")])
    log = vg = ""
    try:
        # A 4-pod PodSet: 4 distinct hosts, one assignment.
        hosts = set()
        for i in range(4):
            pod = wha.job_pod(i, job="vg", size=4)
            resp = w.admit("s-%d" % i, pod)
            _, sel = nodesel(resp, pod)
            expect(resp.get("allowed") is True and "kubernetes.io/hostname" in sel,
                   "podset pod %d placed: %r" % (i, sel))
            hosts.add(sel.get("kubernetes.io/hostname"))
        expect(len(hosts) == 4 and None not in hosts, "4 distinct hosts: %r" % hosts)

        # No topology annotation: passes through unchanged.
        plain = {"kind": "Pod", "apiVersion": "v1",
                 "metadata": {"name": "plain", "namespace": "team-a"},
                 "spec": {"containers": [{"name": "c", "image": "x"}]}}
        resp = w.admit("plain", plain)
        expect(resp.get("allowed") is True and "patch" not in resp,
               "pass-through pod: allowed, no patch: %r" % resp)

        # 16 GPUs in one pod fit no node: gated.
        huge = wha.job_pod(0, gpus=16, job="huge", size=1)
        resp = w.admit("huge", huge)
        out, sel = nodesel(resp, huge)
        gates = [g["name"] for g in out["spec"].get("schedulingGates", [])]
        expect(resp.get("allowed") is True and gates == [WAIT_GATE] and not sel,
               "huge pod gated: %r %r" % (gates, sel))

        status, body = w.post(b"{not json")
        expect(status == 400 and b"malformed" in body, "malformed: %r %r" % (status, body))

        # dryRun (the handler's compute-only path, under memcheck here; that
        # it stores nothing is the handler unit tests' job), then the same pod
        # for real: placed too, off the first PodSet's hosts.
        dry = wha.job_pod(0, job="dry", size=1)
        resp = w.admit("dry", dry, dry_run=True)
        _, sel = nodesel(resp, dry)
        expect(resp.get("allowed") is True and "kubernetes.io/hostname" in sel,
               "dryRun placed: %r" % resp)
        resp = w.admit("dry-real", dry)
        _, sel = nodesel(resp, dry)
        expect(sel.get("kubernetes.io/hostname") not in hosts | {None},
               "after the dryRun, the real pod placed off the PodSet's hosts: %r" % sel)

        status, text = w.get("/metrics")
        expect(status == 200 and b"topo_webhook_requests_total" in text,
               "metrics: %r" % status)
    except Exception as e:  # report with the logs below
        expect(False, "static: error: %r" % e)
    finally:
        log, vg = w.stop()
    check_clean("static", w, log, vg)


def gate_pod(index, size):
    """Pod `index` of a `size`-pod PodSet that requires one rack (8 GPUs each)."""
    pod = whu.big_pod(index, job="vg")
    pod["metadata"]["annotations"]["topology.topo.io/podset-size"] = str(size)
    return pod


def case_daemon(args, pki, tmp):
    api = whu.Api(tmp, pki)
    w = None
    log = vg = ""
    size = 2
    try:
        api.admin("load", {"resource": "nodes", "count": 4, "gpus": 8, "nodes_per_rack": 4})
        api.admin("load", {"resource": "pods", "count": 4, "gpus": 8, "namespace": "filler"})
        workdir = os.path.join(tmp, "daemon")
        os.mkdir(workdir)
        w = VgWebhook(args.webhook, pki, workdir,
                      ["--kubeconfig", api.kubeconfig, "--db", os.path.join(workdir, "topo.db"),
                       "--levels", DAEMON_LEVELS, "--policy", "gate",
                       "--ungate-interval", "1", "--leader-elect", "true"])
        whu.wait_for("the only replica leads the ungater",
                     lambda: whu.metrics(w).get("topo_webhook_ungater_leader") == 1, 30)
        for i in range(size):
            pod = gate_pod(i, size)
            resp = w.admit("d-%d" % i, pod)
            out = jsonpatch.JsonPatch(wha.ops_of(resp)).apply(copy.deepcopy(pod))
            expect(whu.gates_of(out) == [WAIT_GATE], "pod %d gated (cluster full)" % i)
            status, created = api.request("POST", "/api/v1/namespaces/%s/pods" % whu.NS, out)
            if status != 201:
                raise RuntimeError("create pod %d: %d %r" % (i, status, created))
        # Free two nodes: the PodSet fits; the ungater patches both pods.
        for p in api.items("/api/v1/namespaces/filler/pods")[:size]:
            status, out = api.request("DELETE", "/api/v1/namespaces/filler/pods/" +
                                      p["metadata"]["name"])
            if status != 200:
                raise RuntimeError("delete filler pod: %d %r" % (status, out))

        def released():
            pods = [api.pod("vg-%d" % i) for i in range(size)]
            return all(p is not None and WAIT_GATE not in whu.gates_of(p) and
                       p["spec"].get("nodeSelector") for p in pods)
        whu.wait_for("gated pods released by the ungater", released, 45)
    except Exception as e:  # report with the logs below
        expect(False, "daemon: error: %r" % e)
    finally:
        if w is not None:
            log, vg = w.stop()
        apilog = api.stop()
    if w is not None:
        check_clean("daemon", w, log, vg)
    if wha.FAILURES:
        print("--- apiserver log (tail) ---\n" + apilog[-3000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("SKIP: valgrind not installed (scripts/lib/deps.sh lists it in the test packages)")
        return 0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="topo-whv-") as tmp:
        pki = os.path.join(tmp, "pki")
        subprocess.run(["sh", wha.PKI, pki], check=True, stdout=subprocess.DEVNULL)
        case_static(args, pki, tmp)
        case_daemon(args, pki, tmp)
    print("webhook_valgrind_e2e: %s in %.0f s" %
          ("FAILED (%d)" % len(wha.FAILURES) if wha.FAILURES else "passed",
           time.monotonic() - t0))
    return 1 if wha.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
