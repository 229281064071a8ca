#!/usr/bin/env python3
"""Gate, then ungate through the API: topo-webhook in daemon mode against
fake_apiserver.py.

  webhook_ungate_e2e.py --webhook build/webhook/topo-webhook

The fake API server (TLS, test CA from make_test_pki.sh, bearer token file)
holds 16 GPU nodes in 2 racks of 8 (block dc1-sp01, racks
dc1-sp01-lf01-r01 and -r02) and 16 bound 8-GPU pods filling them. topo-webhook
runs with --kubeconfig and --db (its cache filler keeps the cache and the live
snapshot current) and --ungate-interval 1.

Cases, in order:
  * policy deny: a pod of an 8-pod PodSet that requires one rack is refused,
    the message naming the level; policy ignore: admitted without a patch;
  * policy gate, two replicas (--leader-elect true, a cache file each):
    exactly one leads the ungater (metric topo_webhook_ungater_leader). The
    8 pods' AdmissionReviews, posted to the follower, each answer with the
    gate topology.topo.io/wait and the wait-reason and podset annotations
    (applied with python3-jsonpatch); the patched pods are created in the API
    server, unbound, as the real one would; they stay gated while the
    cluster is full (the leader's topo_webhook_gated_waiting is 8);
  * the leader is stopped (SIGTERM releases the Lease) and the filler pods
    of rack r02 are deleted: within seconds the other replica leads and has
    patched every gated pod: gate gone, wait-reason gone, the same assignment
    annotation on all 8, and a nodeSelector that selects only nodes of rack
    r02 (8 distinct hosts when it names hosts); its metrics say 8 ungated,
    0 waiting;
  * a Kueue pod group (a CPU-only leader first, then 4 workers): the first
    four pods are gated until the group is complete, the fifth places both
    roles, and the ungater releases the others into them (rack r01, freed).
"""
import argparse
import base64
import copy
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import jsonpatch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import webhook_admission_e2e as wha  # noqa: E402  (Webhook, review, ops_of, expect)

FAKE = os.path.join(HERE, "fake_apiserver.py")
LEVELS = "topology.topo.io/block,topology.topo.io/rack,kubernetes.io/hostname"
RACK_LABEL = "topology.topo.io/rack"
BLOCK_LABEL = "topology.topo.io/block"
HOST_LABEL = "kubernetes.io/hostname"
WAIT_GATE = "topology.topo.io/wait"
WAIT_REASON = "topology.topo.io/wait-reason"
PODSET = "topology.topo.io/podset"
ASSIGNMENT = "topology.topo.io/assignment"
NS = "team-a"
SIZE = 8
FREED_RACK = "dc1-sp01-lf01-r02"
expect = wha.expect


class Api:
    """fake_apiserver.py over TLS with a token file, and a kubeconfig for it."""

    def __init__(self, tmp, pki):
        self.tmp = tmp
        self.token = "ungate-token-1"
        with open(os.path.join(tmp, "token"), "w") as fh:
            fh.write(self.token + "\n")
        self.log = open(os.path.join(tmp, "apiserver.log"), "w+")
        self.proc = subprocess.Popen(
            [sys.executable, FAKE, "--tls-cert", os.path.join(pki, "server.pem"),
             "--tls-key", os.path.join(pki, "server.key"),
             "--token-file", os.path.join(tmp, "token")],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            raise RuntimeError("fake apiserver did not start: %r" % line)
        self.url = "https://127.0.0.1:%d" % int(line)
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
        with open(os.path.join(pki, "ca.pem"), "rb") as fh:
            ca = base64.b64encode(fh.read()).decode()
        self.kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(self.kubeconfig, "w") as fh:
            json.dump({
                "apiVersion": "v1", "kind": "Config", "current-context": "test",
                "clusters": [{"name": "fake", "cluster": {"server": self.url,
                                                          "certificate-authority-data": ca}}],
                "contexts": [{"name": "test", "context": {"cluster": "fake", "user": "u",
                                                          "namespace": "topo-system"}}],
                "users": [{"name": "u", "user": {"tokenFile": os.path.join(tmp, "token")}}],
            }, fh)

    def request(self, method, path, body=None, auth=True):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if auth:
            headers["Authorization"] = "Bearer " + self.token
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def admin(self, path, body):
        status, out = self.request("POST", "/_fake/" + path, body, auth=False)
        if status != 200:
            raise RuntimeError("admin %s: %d %r" % (path, status, out))
        return out

    def items(self, path):
        status, out = self.request("GET", path)
        if status != 200:
            raise RuntimeError("GET %s: %d %r" % (path, status, out))
        return out["items"]

    def pod(self, name):
        status, out = self.request("GET", "/api/v1/namespaces/%s/pods/%s" % (NS, name))
        return out if status == 200 else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.seek(0)
        return self.log.read()


def big_pod(index, job="big"):
    """Pod `index` of an 8-pod Indexed Job whose PodSet requires one rack."""
    return {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": "%s-%d" % (job, index), "namespace": NS,
            "labels": {"batch.kubernetes.io/controller-uid": "uid-" + job,
                       "batch.kubernetes.io/job-name": job,
                       "batch.kubernetes.io/job-completion-index": str(index)},
            "annotations": {"kueue.x-k8s.io/podset-required-topology": RACK_LABEL,
                            "topology.topo.io/podset-size": str(SIZE),
                            "batch.kubernetes.io/job-completion-index": str(index)},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job,
                                 "uid": "uid-" + job, "controller": True}]},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "w", "image": "x",
                                 "resources": {"requests": {"nvidia.com/gpu": "8",
                                                            "cpu": "16"},
                                               "limits": {"nvidia.com/gpu": "8"}}}]}}


def daemon_flags(api, db, policy):
    return ["--kubeconfig", api.kubeconfig, "--db", db, "--levels", LEVELS,
            "--policy", policy, "--ungate-interval", "1", "--leader-elect", "true",
            "--log-format", "text"]


def start_webhook(binary, pki, tmp, api, name, policy):
    workdir = os.path.join(tmp, name)
    os.mkdir(workdir)
    return wha.Webhook(binary, pki, workdir,
                       daemon_flags(api, os.path.join(workdir, "topo.db"), policy))


def fill(api):
    """16 nodes (2 racks of 8, 8 GPUs each) and one bound 8-GPU pod on each."""
    api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
    api.admin("load", {"resource": "pods", "count": 16, "gpus": 8, "namespace": "filler"})
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in api.items("/api/v1/nodes")}
    racks = {labels[RACK_LABEL] for labels in nodes.values()}
    if len(nodes) != 16 or racks != {"dc1-sp01-lf01-r01", FREED_RACK}:
        raise RuntimeError("unexpected generated nodes: %r" % sorted(nodes))
    bound = {p["spec"].get("nodeName") for p in api.items("/api/v1/namespaces/filler/pods")}
    if bound != set(nodes):
        raise RuntimeError("filler pods do not cover every node: %r" % sorted(bound))
    return nodes


def case_deny_ignore(args, pki, tmp, api):
    w = start_webhook(args.webhook, pki, tmp, api, "deny", "deny")
    try:
        resp = w.admit("deny-0", big_pod(0, job="refused"))
    finally:
        log = w.stop()
    expect(w.proc.returncode == 0, "deny: clean exit on SIGTERM (rc %r)\n%s"
           % (w.proc.returncode, log[-3000:]))
    expect(resp.get("allowed") is False, "deny: refused: %r" % resp)
    msg = resp.get("status", {}).get("message", "")
    expect(RACK_LABEL in msg, "deny: the message names the level: %r" % msg)
    expect("patch" not in resp, "deny: no patch")

    w = start_webhook(args.webhook, pki, tmp, api, "ignore", "ignore")
    try:
        resp = w.admit("ignore-0", big_pod(0, job="ignored"))
    finally:
        log = w.stop()
    expect(w.proc.returncode == 0, "ignore: clean exit on SIGTERM (rc %r)\n%s"
           % (w.proc.returncode, log[-3000:]))
    expect(resp.get("allowed") is True, "ignore: admitted: %r" % resp)
    expect(wha.ops_of(resp) == [], "ignore: unchanged (no patch): %r" % resp.get("patch"))


def case_namespace_override(args, pki, tmp, api):
    """A namespace labelled topology.topo.io/no-fit-policy=deny overrides the
    topology's gate policy for its pods only (the label is the default
    namespacePolicyLabel, watched by the webhook's namespace-policy thread)."""
    for name, labels in (("strict", {"topology.topo.io/no-fit-policy": "deny"}),
                         (NS, {})):
        status, out = api.request("POST", "/api/v1/namespaces",
                                  {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": name, "labels": labels}})
        expect(status in (201, 409), "namespace %s created: %d %r" % (name, status, out))
    w = start_webhook(args.webhook, pki, tmp, api, "ns-override", "gate")
    try:
        strict = big_pod(0, job="strict")
        strict["metadata"]["namespace"] = "strict"
        denied = w.admit("ns-strict-0", strict)
        gated = w.admit("ns-plain-0", big_pod(0, job="plain"))
    finally:
        log = w.stop()
    expect(w.proc.returncode == 0, "ns-override: clean exit on SIGTERM (rc %r)\n%s"
           % (w.proc.returncode, log[-3000:]))
    expect(denied.get("allowed") is False,
           "a pod in the namespace labelled deny is refused: %r" % denied)
    expect(gated.get("allowed") is True and WAIT_GATE in str(wha.ops_of(gated)),
           "a pod elsewhere is gated (the topology's policy): %r" % gated)


def metrics(w):
    """The health port's /metrics as {name: value} (unlabelled samples)."""
    c = http.client.HTTPConnection("127.0.0.1", w.health, timeout=10)
    try:
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
    finally:
        c.close()
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
            out[parts[0]] = float(parts[1])
    return out


def wait_for(what, fn, timeout):
    """Polls fn until it returns a true value; returns the last value."""
    t0 = time.monotonic()
    while True:
        v = fn()
        if v or time.monotonic() - t0 > timeout:
            expect(v, "%s within %d s" % (what, timeout))
            return v
        time.sleep(0.2)


def gates_of(pod):
    return [g.get("name") for g in pod["spec"].get("schedulingGates", [])]


def leader_of(ws):
    flags = [metrics(w).get("topo_webhook_ungater_leader") for w in ws]
    return ws[flags.index(1)] if flags.count(1) == 1 and flags.count(0) == len(ws) - 1 else None


def case_gate_ungate(ws, api, nodes):
    leader = wait_for("exactly one replica leads the ungater", lambda: leader_of(ws), 15)
    if leader is None:
        return
    w = ws[1 - ws.index(leader)]
    # Admission (on the follower) gates every pod; the "API server" then
    # stores the patched pod.
    for i in range(SIZE):
        pod = big_pod(i)
        resp = w.admit("gate-%d" % i, pod)
        expect(resp.get("allowed") is True, "pod %d allowed (gate policy): %r" % (i, resp))
        out = jsonpatch.JsonPatch(wha.ops_of(resp)).apply(copy.deepcopy(pod))
        ann = out["metadata"].get("annotations", {})
        expect(gates_of(out) == [WAIT_GATE], "pod %d gated: %r" % (i, gates_of(out)))
        expect(ann.get(WAIT_REASON), "pod %d: wait-reason annotation" % i)
        expect(ann.get(PODSET), "pod %d: podset annotation" % i)
        expect("nodeSelector" not in out["spec"], "pod %d: no nodeSelector while gated" % i)
        status, created = api.request("POST", "/api/v1/namespaces/%s/pods" % NS, out)
        if status != 201:
            raise RuntimeError("create pod %d: %d %r" % (i, status, created))
    podsets = {api.pod("big-%d" % i)["metadata"]["annotations"].get(PODSET) for i in range(SIZE)}
    expect(len(podsets) == 1, "one podset annotation for the 8 pods: %r" % podsets)

    # While the cluster is full, rounds (every second) leave them gated.
    time.sleep(3.5)
    for i in range(SIZE):
        pod = api.pod("big-%d" % i)
        expect(pod is not None and gates_of(pod) == [WAIT_GATE],
               "pod %d still gated while nothing fits" % i)

    m = metrics(leader)
    expect(m.get("topo_webhook_gated_waiting") == SIZE,
           "leader: %d pods waiting: %r" % (SIZE, m.get("topo_webhook_gated_waiting")))
    expect(m.get("topo_webhook_ungated_total") == 0, "leader: nothing ungated yet")
    expect(leader_of(ws) is leader, "leadership stable")

    # The leader goes (its Lease released); the other replica takes over.
    leader.stop()
    expect(leader.proc.returncode == 0, "leader: clean exit on SIGTERM (rc %r)"
           % leader.proc.returncode)
    # Free rack r02: the PodSet now fits there and only there.
    freed = sorted(n for n, labels in nodes.items() if labels[RACK_LABEL] == FREED_RACK)
    for p in api.items("/api/v1/namespaces/filler/pods"):
        if p["spec"].get("nodeName") in freed:
            status, out = api.request("DELETE", "/api/v1/namespaces/filler/pods/" +
                                      p["metadata"]["name"])
            if status != 200:
                raise RuntimeError("delete filler pod: %d %r" % (status, out))
    t0 = time.monotonic()
    pods = {}
    while time.monotonic() - t0 < 20:
        pods = {i: api.pod("big-%d" % i) for i in range(SIZE)}
        if all(p is not None and WAIT_GATE not in gates_of(p) for p in pods.values()):
            break
        time.sleep(0.2)
    print("ungated after %.1f s" % (time.monotonic() - t0))

    assignments = set()
    hosts = set()
    for i, pod in sorted(pods.items()):
        expect(pod is not None and WAIT_GATE not in gates_of(pod),
               "pod %d ungated within 20 s: %r" % (i, pod and gates_of(pod)))
        if pod is None:
            continue
        ann = pod["metadata"].get("annotations", {})
        expect(WAIT_REASON not in ann, "pod %d: wait-reason removed" % i)
        expect(ann.get(ASSIGNMENT), "pod %d: assignment annotation" % i)
        assignments.add(ann.get(ASSIGNMENT))
        sel = pod["spec"].get("nodeSelector") or {}
        expect(sel, "pod %d: nodeSelector set" % i)
        if RACK_LABEL in sel:
            expect(sel.get(BLOCK_LABEL) == "dc1-sp01",
                   "pod %d: a rack selector names its block too: %r" % (i, sel))
        matching = sorted(n for n, labels in nodes.items()
                          if all(labels.get(k) == v for k, v in sel.items()))
        expect(matching and all(n in freed for n in matching),
               "pod %d: nodeSelector %r selects nodes of rack %s only: %r"
               % (i, sel, FREED_RACK, matching))
        expect(not pod["spec"].get("nodeName"), "pod %d: still unbound (the scheduler binds)" % i)
        if HOST_LABEL in sel:
            hosts.add(sel[HOST_LABEL])
        else:
            hosts.add(None)
    expect(len(assignments) == 1, "one assignment for the PodSet: %r" % assignments)
    if None not in hosts:
        expect(len(hosts) == SIZE, "%d distinct hosts: %r" % (SIZE, sorted(hosts)))
    if len(assignments) == 1:
        doc = json.loads(assignments.pop())
        expect(sum(d["count"] for d in doc.get("domains", [])) == SIZE,
               "assignment counts sum to %d: %r" % (SIZE, doc))
    # The waiting gauge and the ungated counter are set when a round ends,
    # which can be just after the last patch reached the API server: poll.
    m = wait_for("survivor: 0 waiting, %d ungated" % SIZE, lambda: (lambda x: x if x.get(
        "topo_webhook_gated_waiting") == 0 and x.get("topo_webhook_ungated_total") == SIZE
        else None)(metrics(w)), 5) or {}
    expect(m.get("topo_webhook_ungater_leader") == 1, "survivor leads: %r" % m)
    expect(m.get("topo_webhook_ungated_total") == SIZE,
           "survivor ungated %d: %r" % (SIZE, m.get("topo_webhook_ungated_total")))


def group_pod(name, gpus):
    """Pod `name` of Kueue pod group "lw" of 5 (a leader, 4 workers), one rack,
    leader and workers co-located (podset-group-name)."""
    return {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": name, "namespace": NS,
            "labels": {"kueue.x-k8s.io/pod-group-name": "lw"},
            "annotations": {"kueue.x-k8s.io/pod-group-total-count": "5",
                            "kueue.x-k8s.io/podset-required-topology": RACK_LABEL,
                            "kueue.x-k8s.io/podset-group-name": "lw"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "w", "image": "x",
                                 "resources": {"requests": {"nvidia.com/gpu": str(gpus),
                                                            "cpu": "4"}}}]}}


def case_pod_group(ws, api, nodes):
    """Issue 8: a pod group whose CPU-only leader comes first. Every pod but
    the last is gated (no pod is placed on the leader's terms); the last one
    places both roles; the ungater then releases the others into their
    roles: 4 workers on 4 hosts of one rack, the leader in that rack."""
    alive = [w for w in ws if w.proc.poll() is None]
    if not alive:
        expect(False, "pod group: no replica left")
        return
    w = alive[0]
    # Free rack r01 (r02 holds the big PodSet).
    freed = sorted(n for n, labels in nodes.items() if labels[RACK_LABEL] != FREED_RACK)
    for p in api.items("/api/v1/namespaces/filler/pods"):
        if p["spec"].get("nodeName") in freed:
            api.request("DELETE", "/api/v1/namespaces/filler/pods/" + p["metadata"]["name"])
    time.sleep(1.5)  # the filler sees them go
    names = [("lw-leader", 0), ("lw-w1", 8), ("lw-w2", 8), ("lw-w3", 8), ("lw-w4", 8)]
    for i, (name, gpus) in enumerate(names):
        pod = group_pod(name, gpus)
        resp = w.admit("group-%d" % i, pod)
        out = jsonpatch.JsonPatch(wha.ops_of(resp)).apply(copy.deepcopy(pod))
        last = i == len(names) - 1
        expect(resp.get("allowed") is True, "%s allowed: %r" % (name, resp))
        expect((gates_of(out) == []) == last,
               "%s: %s" % (name, "placed at once" if last else "gated until the group is complete"))
        if not last:
            expect(out["metadata"]["annotations"].get(WAIT_REASON) ==
                   "pod group: %d of its 5 pods have arrived" % (i + 1),
                   "%s: wait-reason %r" % (name, out["metadata"]["annotations"].get(WAIT_REASON)))
        status, created = api.request("POST", "/api/v1/namespaces/%s/pods" % NS, out)
        if status != 201:
            raise RuntimeError("create %s: %d %r" % (name, status, created))
    pods = {}
    t0 = time.monotonic()
    while time.monotonic() - t0 < 20:
        pods = {name: api.pod(name) for name, _ in names}
        if all(p is not None and WAIT_GATE not in gates_of(p) for p in pods.values()):
            break
        time.sleep(0.2)
    print("pod group released after %.1f s" % (time.monotonic() - t0))
    hosts = {}
    for name, pod in pods.items():
        expect(pod is not None and WAIT_GATE not in gates_of(pod), "%s ungated" % name)
        sel = (pod or {}).get("spec", {}).get("nodeSelector") or {}
        hosts[name] = sel.get(HOST_LABEL)
        expect(hosts[name] in freed, "%s on a host of the freed rack: %r" % (name, sel))
    workers = [hosts[n] for n, gpus in names if gpus]
    expect(len(set(workers)) == 4, "4 workers on 4 hosts: %r" % workers)
    racks = {nodes[h][RACK_LABEL] for h in hosts.values() if h in nodes}
    expect(len(racks) == 1, "leader and workers in one rack: %r" % hosts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    args = ap.parse_args()
    logs = {}
    with tempfile.TemporaryDirectory(prefix="topo-whu-") as tmp:
        pki = os.path.join(tmp, "pki")
        subprocess.run(["sh", wha.PKI, pki], check=True, stdout=subprocess.DEVNULL)
        api = Api(tmp, pki)
        ws = []
        try:
            nodes = fill(api)
            case_deny_ignore(args, pki, tmp, api)
            case_namespace_override(args, pki, tmp, api)
            for name in ("gate-a", "gate-b"):
                ws.append(start_webhook(args.webhook, pki, tmp, api, name, "gate"))
            case_gate_ungate(ws, api, nodes)
            case_pod_group(ws, api, nodes)
        except Exception as e:  # setup failures: report with the logs
            expect(False, "error: %r" % e)
        finally:
            for name, w in zip(("gate-a", "gate-b"), ws):
                logs[name] = w.stop()
                expect(w.proc.returncode == 0,
                       "%s: clean exit on SIGTERM (rc %r)" % (name, w.proc.returncode))
            logs["apiserver"] = api.stop()
        if wha.FAILURES:
            for name, log in logs.items():
                print("--- %s log (tail) ---\n%s" % (name, log[-6000:]))
    print("webhook_ungate_e2e: %s" %
          ("FAILED (%d)" % len(wha.FAILURES) if wha.FAILURES else "passed"))
    return 1 if wha.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
