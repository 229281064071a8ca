#!/usr/bin/env python3
"""When nodes fail, replacement pods go to a healthy node inside their
PodSet's domain (issue 28, docs/webhook.md "When nodes fail"): topo-webhook
in daemon mode (leader election, its Lease, the ungater every second)
against fake_apiserver.py.

  webhook_node_failure_e2e.py --webhook build/webhook/topo-webhook (--list | --case NAME | --all)

The driver plays the API server's part as webhook_replicas_e2e.py does (whose
Env, send and checks it uses): each topology pod's AdmissionReview goes to a
replica, the answer's patch is applied and the pod created. It also plays
the scheduler (a Binding to the pod's nodeSelector host), the kubelet (the
pod's status.phase), the node lifecycle controller (a node's Ready
condition, taints, spec.unschedulable, deletion) and the Job controller (a
replacement pod: the same completion index under a new name). Before each
failure it waits until the webhook's cache file holds the change (the
resourceVersion its watch stored), so every step is decided on what the
webhook has seen, never on a sleep.

The cluster: levels topology.topo.io/rack,kubernetes.io/hostname; 8 GPUs a
node; rack r1 = n9, n10, n11 (n9..n14 for two_failed_nodes), racks r0 and
r2 of 4 nodes each with room. A PodSet is a Job of 8-GPU pods (a whole node
each), rack required unless said. It is placed while a foreign pod holds
n11 (so that r1 is the tightest rack and its pods land on n9 and n10); that
pod is then deleted unless the case needs r1 full. The pod on n9 is the
victim; the replacement for its completion index must go to n11.

Cases (each fails on a webhook without node replacement at the replacement
step: it sends the replacement to the dead node):
  notready_failed_pod   n9 NotReady, its pod Failed: the replacement -> n11
                        (nodeSelector host and rack, assignment, the signed
                        record's gen seq + 1, metric replaced, a log line, a
                        Normal Event TopologyNodeReplaced on the pod);
  node_deleted          n9 deleted with its pod: -> n11;
  node_recreated_other_rack
                        n9 deleted with its pod and re-created under its name in
                        rack r2 before the replacement came: -> n11 (r1 kept);
  no_ready_condition    n9's status without a Ready condition, its pod deleted
                        (it stays Terminating): -> n11;
  noexecute_taint       an untolerated NoExecute taint on n9, its pod evicted:
                        -> n11; a PodSet tolerating the taint, in rack r3, keeps
                        its tainted node for its replacement;
  cordon_pending_pod    n9 cordoned while the pod of its slot is still pending
                        (unbound): the ungater fails that pod (condition
                        TerminatedByTopo); its replacement -> n11;
  still_running_waits   n9 NotReady while its pod still runs: a new pod of that
                        index is gated, the reason naming n9 and "still"
                        (outcome waiting); once the old pod has Failed the
                        ungater releases it onto n11;
  two_failed_nodes      a 4-pod PodSet on n9..n12 of a 6-node rack; n9 and n10
                        fail: the two replacements -> n13 and n14, one gen step;
  no_room_then_freed    n11 held by a foreign pod, n9 fails: the replacement
                        is gated, the reason naming n9 and "replacement"
                        (outcome no_room, a Warning Event), never placed in
                        another rack; the foreign pod deleted: ungated onto n11;
  no_room_node_recovers the same, then n9 Ready again: ungated onto n9;
  fail_fast             nodeReplacement.failFast in --config, no room: the
                        replacement refused (403, allowed false), and again when
                        retried (outcome fail_fast, reported once); a pod of a
                        slot on a healthy node is still placed there;
  bare_pod_recreated    a bare pod (a PodSet of one) on n9; n9 fails; the pod
                        recreated under the same name is placed anew on a
                        healthy node (outcome new);
  preferred_same_rack   rack preferred, r1 has room: the replacement -> n11;
  preferred_other_rack  rack preferred, r1 full: the replacement -> another rack;
  replicas_forward      two replicas: the replacement sent to the non-placer is
                        forwarded and replaced -> n11;
  replicas_takeover     two replicas, the placer SIGKILLed: the new placer
                        replaces (-> n11, a higher gen term) and a
                        later pod of that index keeps n11;
  fake_server_api       the fake API server's parts these cases use: Binding,
                        graceful deletion (Terminating on a NotReady node),
                        node status and spec changes, Events listed.
"""

import json
import os
import signal
import sqlite3
import sys
import time
import urllib.parse
import uuid

from harness import FAILURES, check, expect, registry, run_cases, slowdown
from harness.pods import ASSIGNMENT, HOST_LABEL, NS, RACK_LABEL, WAIT_GATE, gates_of, make_pod
from harness.webhook import Webhook, WebhookApiEnv, free_port, metric
from webhook_replicas_e2e import (GPU, LEASE_FLAGS, RESERVATION_SPEC, info, rack_job_pod, send,
                                  wait_placer)

CASES, _case = registry()

LEVELS = RACK_LABEL + "," + HOST_LABEL
METRIC = "topo_webhook_node_replacements_total"
REPLACED_EVENT = "TopologyNodeReplaced"
FAILED_EVENT = "TopologyNodeReplacementFailed"
FOREIGN_NS = "other"
# rack -> hosts. r1 is the PodSets' rack: placed with n11 held, it is the tightest.
RACKS = {"r0": ["n1", "n2", "n3", "n4"], "r1": ["n9", "n10", "n11"],
         "r2": ["n12", "n13", "n14", "n15"]}
WAIT = 10 * slowdown()       # seconds for the webhook to see a change or the ungater to act
EVENT_WAIT = 20 * slowdown()  # the Event is posted within ~15 s of its pod being seen


def case(fn):
    def run(env):
        n = len(FAILURES)
        fn(env)
        expect(len(FAILURES) == n, "%d checks failed" % (len(FAILURES) - n))
    run.__name__ = fn.__name__
    return _case(run)


class Env(WebhookApiEnv):
    """The fake API server (bearer token, client certificates accepted), the
    nodes made by make_cluster and the replicas started against it."""

    PREFIX = "topo-node-failure-e2e-"

    def __init__(self, binary, keep):
        super().__init__(keep)
        self.bin = binary
        self.replicas = []
        self.nodes = {}

    def server_args(self):
        return ["--token-file", self.path("token"), "--client-ca", self.path("ca.pem")]

    def start_replica(self, name, config=None):
        """A replica with leader election (short leases) and the ungater every
        second; config: the text of a --config file (its topology over
        LEVELS) instead of --levels."""
        port = free_port()
        workdir = self.path(name)
        os.makedirs(workdir, exist_ok=True)
        if config is None:
            how = ["--levels", LEVELS, "--policy", "gate", "--ungate-interval", "1"]
        else:
            cfg = os.path.join(workdir, "config.yaml")
            self.write(cfg, config)
            how = ["--config", cfg]
        w = Webhook(self.bin, self.dir, workdir, [
            "--kubeconfig", self.kubeconfig, "--db", os.path.join(workdir, "topo.db"),
            *how, "--leader-elect", "true", "--log-format", "text",
            "--peer-address", "127.0.0.1:%d" % port, "--peer-ca-file", self.path("ca.pem"),
            *LEASE_FLAGS], port=port)
        self.procs.append(w.proc)
        w.name = name
        w.db = os.path.join(workdir, "topo.db")
        self.replicas.append(w)
        return w

    def alive(self):
        return [w for w in self.replicas if w.proc.poll() is None]

    def close(self):
        for w in self.replicas:
            w.stop()
        super().close()


def on_failure(env):
    for w in env.replicas:
        print("--- %s log (tail) ---\n%s" % (w.name, w.log()[-5000:]))


# ------------------------------------------------------------------ the cluster

def make_node(name, rack):
    alloc = {"cpu": "222", "memory": "2111633408Ki", GPU: "8", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST_LABEL: name, RACK_LABEL: rack,
                                                  "kubernetes.io/os": "linux"}},
            "spec": {"providerID": "baremetal://" + name},
            "status": {"capacity": dict(alloc, cpu="224"), "allocatable": alloc,
                       "conditions": [ready_condition("True")]}}


def ready_condition(status):
    reason = {"True": "KubeletReady", "False": "KubeletNotReady",
              "Unknown": "NodeStatusUnknown"}[status]
    return {"type": "Ready", "status": status, "reason": reason,
            "lastHeartbeatTime": "2026-01-05T08:00:00Z",
            "lastTransitionTime": "2026-01-05T08:00:00Z", "message": reason}


def make_cluster(env, racks=None, held=("n11",)):
    """The nodes of racks (default RACKS) and a bound, running 8-GPU foreign
    pod on each host of held (namespace other, pod hog-<host>)."""
    racks = racks or RACKS
    for rack, hosts in racks.items():
        for h in hosts:
            env.create("/api/v1/nodes", make_node(h, rack))
            env.nodes[h] = {RACK_LABEL: rack, HOST_LABEL: h}
    for h in held:
        hog(env, h)


def hog(env, host):
    pod = make_pod(ns=FOREIGN_NS, name="hog-" + host, requests={GPU: "8", "cpu": "4"},
                   limits={GPU: "8"})
    pod["spec"]["nodeName"] = host
    pod["status"] = {"phase": "Running"}
    return env.create("/api/v1/namespaces/%s/pods" % FOREIGN_NS, pod)


def start(env, replicas=1, config=None):
    ws = [env.start_replica("r%d" % i, config=config) for i in range(replicas)]
    placer = wait_placer(env, ws)
    return ws, placer


# ------------------------------------------------------------------ the webhook's view

def cache_rv(db, table, key_col, key):
    """The resourceVersion the cache file stores for one node or pod (None:
    absent)."""
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5)
    except sqlite3.Error:
        return None
    try:
        row = con.execute("SELECT resource_version FROM %s WHERE %s = ?" % (table, key_col),
                          (key,)).fetchone()
        return int(row[0]) if row and row[0] else None
    except sqlite3.Error:
        return None
    finally:
        con.close()


def seen(env, obj, deleted=False, ws=None):
    """Waits until every live replica's cache holds obj (a node or pod as the
    server answered a write: at its resourceVersion or later), or no longer
    holds it (deleted)."""
    md = obj["metadata"]
    is_pod = "namespace" in md
    table, col, key = ("pods", "uid", md["uid"]) if is_pod else ("nodes", "name", md["name"])
    rv = int(md["resourceVersion"])
    t0 = time.monotonic()
    for w in ws or env.alive():
        while True:
            got = cache_rv(w.db, table, col, key)
            if (got is None) if deleted else (got is not None and got >= rv):
                break
            expect(time.monotonic() - t0 < WAIT, "%s: the cache holds %s %s %s within %d s "
                   "(it has rv %r)" % (w.name, table, key, "deleted" if deleted else
                                       "at rv %d" % rv, WAIT, got))
            time.sleep(0.05)


# ------------------------------------------------------------------ the other controllers

def patch(env, path, body):
    status, out = env.request("PATCH", path, body, ctype="application/merge-patch+json")
    expect(status == 200, "PATCH %s: %d %r" % (path, status, out))
    return out


def pod_path(pod, sub=""):
    md = pod["metadata"]
    return "/api/v1/namespaces/%s/pods/%s%s" % (md["namespace"], md["name"], sub)


def bind(env, pod, host=None):
    """The scheduler: the pod bound to host (default its nodeSelector host)."""
    host = host or info(env, pod)["host"]
    expect(host, "%s has a host to be bound to: %r" % (pod["metadata"]["name"], info(env, pod)))
    status, out = env.request("POST", pod_path(pod, "/binding"), {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod["metadata"]["name"]},
        "target": {"apiVersion": "v1", "kind": "Node", "name": host}})
    expect(status == 201, "bind %s to %s: %d %r" % (pod["metadata"]["name"], host, status, out))


def set_phase(env, pod, phase):
    """The kubelet: the pod's status.phase."""
    return patch(env, pod_path(pod, "/status"), {"status": {"phase": phase}})


def run_all(env, pods):
    """Every pod bound to its host and Running, as the cache sees them."""
    for p in pods:
        bind(env, p)
        seen(env, set_phase(env, p, "Running"))


def node_status(env, name, conditions):
    return patch(env, "/api/v1/nodes/%s/status" % name, {"status": {"conditions": conditions}})


def node_not_ready(env, name):
    """The node lifecycle controller: a node whose kubelet stopped posting."""
    seen(env, node_status(env, name, [ready_condition("Unknown")]))


def node_ready(env, name):
    seen(env, node_status(env, name, [ready_condition("True")]))


def delete_pod(env, pod, force=False):
    """A graceful DELETE (force: gracePeriodSeconds 0); waits until the cache
    saw it (the pod gone, or Terminating on a node that cannot confirm)."""
    body = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if force:
        body["gracePeriodSeconds"] = 0
    status, out = env.request("DELETE", pod_path(pod), body)
    expect(status == 200, "DELETE %s: %d %r" % (pod_path(pod), status, out))
    terminating = bool(out["metadata"].get("deletionTimestamp"))
    seen(env, out, deleted=not terminating)
    return out


def free(env, host):
    """The foreign pod on host deleted (room in its rack)."""
    status, out = env.request("DELETE", "/api/v1/namespaces/%s/pods/hog-%s" % (FOREIGN_NS, host))
    expect(status == 200, "DELETE hog-%s: %d %r" % (host, status, out))
    seen(env, out, deleted=True)


# ------------------------------------------------------------------ PodSets

def place(env, w, job, size=2, topology="required", run=True, indexed=True, tolerations=None):
    """Job job's size pods admitted through w and created (run: bound and
    Running); returns them by completion index."""
    pods = []
    for i in range(size):
        pod = rack_job_pod(job, size, i, indexed=indexed)
        if topology != "required":
            ann = pod["metadata"]["annotations"]
            ann["kueue.x-k8s.io/podset-%s-topology" % topology] = \
                ann.pop("kueue.x-k8s.io/podset-required-topology")
        if tolerations:
            pod["spec"]["tolerations"] = tolerations
        pods.append(send(env, w, pod))
    got = [info(env, p) for p in pods]
    expect(all(not i["gated"] and i["host"] for i in got), "%s placed: %r" % (job, got))
    print("%s placed on %s" % (job, [i["host"] for i in got]))
    if run:
        run_all(env, pods)
    return pods


def on_host(env, pods, host):
    """The pod of pods whose slot is on host."""
    for p in pods:
        if info(env, p)["host"] == host:
            return p
    expect(False, "a pod on %s: %r" % (host, [info(env, p) for p in pods]))


def victim(env, pods, host="n9"):
    """The pod on host (expected there: the PodSet is on n9 and n10)."""
    hosts = sorted(info(env, p)["host"] for p in pods)
    expect(host in hosts, "the PodSet is on %s: %r" % (host, hosts))
    return on_host(env, pods, host)


def replacement(env, w, old, name_suffix="b", tolerations=None):
    """The Job controller's replacement for pod old: the same Job, size,
    completion index and topology annotations, a new name; its admission
    through w (None: admitted, not created). Returns the patched pod."""
    ann = old["metadata"]["annotations"]
    index = int(ann["batch.kubernetes.io/job-completion-index"])
    job = old["metadata"]["labels"]["batch.kubernetes.io/job-name"]
    size = int(ann["topology.topo.io/podset-size"])
    pod = rack_job_pod(job, size, index)
    pod["metadata"]["name"] = "%s-%d-%s" % (job, index, name_suffix)
    keep = [k for k in ann if k.startswith("kueue.x-k8s.io/podset-")]
    pod_ann = pod["metadata"]["annotations"]
    for k in [k for k in pod_ann if k.startswith("kueue.x-k8s.io/podset-")]:
        del pod_ann[k]
    for k in keep:
        pod_ann[k] = ann[k]
    if tolerations:
        pod["spec"]["tolerations"] = tolerations
    return send(env, w, pod)


def gen_of(pod):
    """The generation [term, seq] of the signed record a pod carries ([0, 0]
    when the record has none)."""
    spec = pod["metadata"]["annotations"].get(RESERVATION_SPEC) or ""
    expect(" " in spec, "%s carries a signed record: %r" % (pod["metadata"]["name"], spec))
    doc = json.loads(spec.split(" ", 1)[1])
    return list(doc.get("gen", [0, 0]))


def assignment_hosts(pod):
    doc = json.loads(pod["metadata"]["annotations"].get(ASSIGNMENT) or "{}")
    out = []
    for d in doc.get("domains", []):
        out += [d["values"][-1]] * d["count"]
    return sorted(out)


def expect_on(env, pod, host, what):
    """The replacement step: pod placed on host (nodeSelector hostname and
    rack). Raises (ends the case) otherwise: the rest depends on it."""
    i = info(env, pod)
    sel = pod["spec"].get("nodeSelector") or {}
    expect(not i["gated"] and i["host"] == host,
           "%s: %s placed on %s, got host %r (gated %s, reason %r)"
           % (what, i["name"], host, i["host"], i["gated"], i["reason"]))
    check(sel.get(RACK_LABEL) == env.nodes[host][RACK_LABEL],
          "%s: the rack selector is %s's: %r" % (what, host, sel))


def outcomes(w):
    text = w.metrics_text()
    return {o: metric(text, METRIC, 'outcome="%s"' % o)
            for o in ("replaced", "no_room", "waiting", "fail_fast", "new")}


def check_outcome(w, outcome, at_least=1):
    got = outcomes(w)
    check(got[outcome] >= at_least, "%s{outcome=%s} >= %d on %s: %r"
          % (METRIC, outcome, at_least, w.name, got))


def check_log(w, *words):
    lines = [ln for ln in w.log().splitlines() if all(x in ln for x in words)]
    check(lines, "%s logged a line with %r" % (w.name, words))


def events_of(env, pod):
    sel = urllib.parse.quote("involvedObject.name=%s" % pod["metadata"]["name"])
    status, out = env.request("GET", "/api/v1/namespaces/%s/events?fieldSelector=%s"
                              % (pod["metadata"]["namespace"], sel))
    return out.get("items", []) if status == 200 else []


def check_event(env, pod, reason, etype, *words):
    """Within EVENT_WAIT s an Event of reason and type on pod whose message
    names words."""
    t0 = time.monotonic()
    found = []
    while time.monotonic() - t0 < EVENT_WAIT:
        found = [e for e in events_of(env, pod) if e.get("reason") == reason]
        if found:
            break
        time.sleep(0.25)
    ok = check(found, "an Event %s on %s within %d s: %r"
               % (reason, pod["metadata"]["name"], EVENT_WAIT, events_of(env, pod)))
    if ok:
        e = found[0]
        check(e.get("type") == etype and all(x in (e.get("message") or "") for x in words)
              and (e.get("involvedObject") or {}).get("kind") == "Pod",
              "the Event is %s about the pod and names %r: %r" % (etype, words, e))


def wait_ungated(env, pod, timeout=None):
    """The pod as stored once the ungater released it (checked)."""
    timeout = timeout or WAIT
    t0 = time.monotonic()
    while True:
        p = env.pod(pod["metadata"]["namespace"], pod["metadata"]["name"])
        expect(p is not None, "%s stored" % pod["metadata"]["name"])
        if WAIT_GATE not in gates_of(p) or time.monotonic() - t0 > timeout:
            break
        time.sleep(0.2)
    check(WAIT_GATE not in gates_of(p), "%s ungated within %d s: %r"
          % (p["metadata"]["name"], timeout, info(env, p)))
    return p


def check_replaced(env, w, old, new, failed, host, seq_before):
    """The replacement step's consequences: the assignment, the record's
    generation, the metric, the log line, the Event."""
    hosts = assignment_hosts(new)
    check(host in hosts and failed not in hosts,
          "the assignment lists %s, not %s: %r" % (host, failed, hosts))
    check(info(env, new)["reservation"] == info(env, old)["reservation"]
          and info(env, new)["slot"] == info(env, old)["slot"],
          "the same reservation and slot: %r vs %r" % (info(env, new), info(env, old)))
    gen = gen_of(new)
    check(gen[1] == seq_before[1] + 1 and gen[0] >= seq_before[0],
          "the record's gen raised by one step: %r -> %r" % (seq_before, gen))
    check_outcome(w, "replaced")
    check_log(w, "replaced", failed, host)
    check_event(env, new, REPLACED_EVENT, "Normal", failed, host)


def notready_then_failed(env, pod, host):
    node_not_ready(env, host)
    seen(env, set_phase(env, pod, "Failed"))


# ------------------------------------------------------------------ cases

@case
def notready_failed_pod(env):
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "train")
    free(env, "n11")
    old = victim(env, pods)
    notready_then_failed(env, old, "n9")
    new = replacement(env, w, old)
    expect_on(env, new, "n11", "n9 NotReady and its pod Failed")
    check_replaced(env, w, old, new, "n9", "n11", gen_of(old))


def n9_deleted_with_its_pod(env, recreate_in=None):
    """n9 deleted with its pod and, with recreate_in, a node of the same
    name created again in that rack before any pod claims its slot: the
    replacement goes to n11, in the PodSet's rack r1."""
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "train")
    free(env, "n11")
    old = victim(env, pods)
    st, gone = env.request("DELETE", "/api/v1/nodes/n9")
    expect(st == 200, "DELETE node n9: %d %r" % (st, gone))
    seen(env, gone, deleted=True)
    delete_pod(env, old)
    what = "n9 deleted with its pod"
    if recreate_in is not None:
        seen(env, env.create("/api/v1/nodes", make_node("n9", recreate_in)))
        env.nodes["n9"] = {RACK_LABEL: recreate_in, HOST_LABEL: "n9"}
        what = "n9 re-created in rack %s: the PodSet's rack r1 kept" % recreate_in
    new = replacement(env, w, old)
    expect_on(env, new, "n11", what)
    check_replaced(env, w, old, new, "n9", "n11", gen_of(old))


@case
def node_deleted(env):
    n9_deleted_with_its_pod(env)


@case
def node_recreated_other_rack(env):
    n9_deleted_with_its_pod(env, recreate_in="r2")


@case
def no_ready_condition(env):
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "train")
    free(env, "n11")
    old = victim(env, pods)
    seen(env, node_status(env, "n9", []))
    out = delete_pod(env, old)
    check(out["metadata"].get("deletionTimestamp"),
          "a pod on a node without a Ready condition stays Terminating: %r" % out["metadata"])
    new = replacement(env, w, old)
    expect_on(env, new, "n11", "n9 without a Ready condition")
    check_replaced(env, w, old, new, "n9", "n11", gen_of(old))


XID_TAINT = {"key": "nvidia.com/gpu-xid", "value": "79", "effect": "NoExecute"}
XID_TOLERATION = [{"key": "nvidia.com/gpu-xid", "operator": "Exists", "effect": "NoExecute"}]


@case
def noexecute_taint(env):
    racks = dict(RACKS, r3=["n16", "n17", "n18"])
    make_cluster(env, racks, held=("n11", "n18"))
    (w,), _ = start(env)
    pods = place(env, w, "train")
    tol = place(env, w, "tol", tolerations=XID_TOLERATION)
    tol_hosts = sorted(info(env, p)["host"] for p in tol)
    expect(set(tol_hosts) == {"n16", "n17"}, "the tolerating PodSet on n16, n17: %r" % tol_hosts)
    free(env, "n11")
    free(env, "n18")
    old = victim(env, pods)
    tol_old = on_host(env, tol, "n16")
    for host in ("n9", "n16"):
        seen(env, patch(env, "/api/v1/nodes/" + host, {"spec": {"taints": [XID_TAINT]}}))
    # The taint manager evicts the pod that does not tolerate it; the
    # tolerating one fails for a reason of its own.
    delete_pod(env, old)
    seen(env, set_phase(env, tol_old, "Failed"))
    tol_new = replacement(env, w, tol_old, tolerations=XID_TOLERATION)
    check(info(env, tol_new)["host"] == "n16" and not info(env, tol_new)["gated"],
          "a PodSet tolerating the taint keeps n16: %r" % info(env, tol_new))
    new = replacement(env, w, old)
    expect_on(env, new, "n11", "an untolerated NoExecute taint on n9")
    check_replaced(env, w, old, new, "n9", "n11", gen_of(old))


@case
def cordon_pending_pod(env):
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "train", run=False)
    free(env, "n11")
    old = victim(env, pods)
    run_all(env, [p for p in pods if p is not old])
    # kubectl cordon, and the taint the node lifecycle controller adds for it.
    seen(env, patch(env, "/api/v1/nodes/n9", {"spec": {"unschedulable": True, "taints": [
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}}))
    # Left pinned to n9 it would stay Pending for ever: the ungater fails it
    # (Kueue's node controller does the same), so that its Job replaces it.
    failed = wait_stranded_failed(env, old)
    cond = [c for c in failed["status"].get("conditions", []) if c.get("type") == "TerminatedByTopo"]
    check(cond and cond[0].get("reason") == "UnschedulableOnAssignedNode"
          and "n9" in cond[0].get("message", ""),
          "the pod's TerminatedByTopo condition names n9: %r" % failed["status"])
    check(w.metrics().get("topo_webhook_stranded_pods_failed_total") == 1,
          "topo_webhook_stranded_pods_failed_total counts it")
    new = replacement(env, w, old)
    expect_on(env, new, "n11", "n9 cordoned, its pending pod failed")
    check_replaced(env, w, old, new, "n9", "n11", gen_of(old))


def wait_stranded_failed(env, pod):
    """The pod as the API server has it once its phase is Failed (the
    ungater's status patch), within WAIT; the cache saw it."""
    t0 = time.monotonic()
    while True:
        status, cur = env.request("GET", pod_path(pod))
        expect(status == 200, "GET %s: %d" % (pod["metadata"]["name"], status))
        if (cur.get("status") or {}).get("phase") == "Failed":
            seen(env, cur)
            return cur
        expect(time.monotonic() - t0 < WAIT, "%s failed by the ungater within %d s: %r"
               % (pod["metadata"]["name"], WAIT, cur.get("status")))
        time.sleep(0.1)


@case
def still_running_waits(env):
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "train")
    free(env, "n11")
    old = victim(env, pods)
    node_not_ready(env, "n9")
    new = replacement(env, w, old)
    i = info(env, new)
    expect(i["gated"] and not i["host"] and i["reason"] and "n9" in i["reason"]
           and "still" in i["reason"],
           "n9 NotReady, its pod still running: the new pod waits, the reason naming n9 and "
           "'still': %r" % i)
    check_outcome(w, "waiting")
    seen(env, set_phase(env, old, "Failed"))
    p = wait_ungated(env, new)
    check(info(env, p)["host"] == "n11", "released onto n11 once the old pod failed: %r"
          % info(env, p))
    check(sorted(assignment_hosts(p)) == ["n10", "n11"],
          "the assignment moved to n10, n11: %r" % assignment_hosts(p))
    check_outcome(w, "replaced")
    check_log(w, "replaced", "n9", "n11")
    check_event(env, p, REPLACED_EVENT, "Normal", "n9", "n11")


@case
def two_failed_nodes(env):
    racks = {"r0": ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"],
             "r1": ["n9", "n10", "n11", "n12", "n13", "n14"],
             "r2": ["n15", "n16", "n17", "n18", "n19", "n20", "n21", "n22"]}
    make_cluster(env, racks, held=("n13", "n14"))
    (w,), _ = start(env)
    pods = place(env, w, "big", size=4)
    hosts = sorted(info(env, p)["host"] for p in pods)
    expect(hosts == ["n10", "n11", "n12", "n9"], "the PodSet on n9..n12: %r" % hosts)
    free(env, "n13")
    free(env, "n14")
    olds = [on_host(env, pods, h) for h in ("n9", "n10")]
    for h, p in zip(("n9", "n10"), olds):
        notready_then_failed(env, p, h)
    before = gen_of(olds[0])
    first = replacement(env, w, olds[0])
    got = info(env, first)["host"]
    expect(got in ("n13", "n14") and not info(env, first)["gated"],
           "n9 and n10 failed: the first replacement on n13 or n14: %r" % info(env, first))
    check(sorted(assignment_hosts(first)) == ["n11", "n12", "n13", "n14"],
          "both failed nodes replaced in one step: %r" % assignment_hosts(first))
    check(gen_of(first)[1] == before[1] + 1, "one gen step: %r -> %r"
          % (before, gen_of(first)))
    second = replacement(env, w, olds[1])
    other = ({"n13", "n14"} - {got}).pop()
    check(info(env, second)["host"] == other, "the second replacement on %s: %r"
          % (other, info(env, second)))
    check(gen_of(second) == gen_of(first), "no second gen step: %r vs %r"
          % (gen_of(first), gen_of(second)))
    check_outcome(w, "replaced")


def no_room_gated(env):
    """A 2-pod PodSet on n9, n10, n11 held by a foreign pod (r2 has room), n9
    failed: its replacement gated with the reason. Returns (old, new)."""
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "train")
    old = victim(env, pods)
    notready_then_failed(env, old, "n9")
    new = replacement(env, w, old)
    i = info(env, new)
    expect(i["gated"] and not i["host"] and i["reason"] and "n9" in i["reason"]
           and "replacement" in i["reason"],
           "no room in r1: the replacement gated, the reason naming n9 and 'replacement': %r"
           % i)
    check_outcome(w, "no_room")
    check_event(env, new, FAILED_EVENT, "Warning", "n9")
    return w, old, new


@case
def no_room_then_freed(env):
    w, old, new = no_room_gated(env)
    time.sleep(2.5)  # two ungater rounds: still gated, never sent to r0 or r2
    p = env.pod(NS, new["metadata"]["name"])
    check(WAIT_GATE in gates_of(p), "still gated while r1 is full: %r" % info(env, p))
    free(env, "n11")
    p = wait_ungated(env, new)
    check(info(env, p)["host"] == "n11", "released onto n11 once it freed: %r" % info(env, p))
    check_outcome(w, "replaced")


@case
def no_room_node_recovers(env):
    w, old, new = no_room_gated(env)
    node_ready(env, "n9")
    p = wait_ungated(env, new)
    check(info(env, p)["host"] == "n9", "released onto n9 once it came back: %r" % info(env, p))


FAIL_FAST_CONFIG = """topologies:
- name: default
  levels: [%s, %s]
defaultPolicy: gate
ungateInterval: 1s
nodeReplacement:
  failFast: true
""" % (RACK_LABEL, HOST_LABEL)


@case
def fail_fast(env):
    make_cluster(env)
    (w,), _ = start(env, config=FAIL_FAST_CONFIG)
    pods = place(env, w, "train")
    old = victim(env, pods)
    notready_then_failed(env, old, "n9")
    pod = rack_job_pod("train", 2, int(old["metadata"]["annotations"][
        "batch.kubernetes.io/job-completion-index"]))
    pod["metadata"]["name"] += "-b"
    resp = w.admit(str(uuid.uuid4()), pod)
    expect(resp.get("allowed") is False and (resp.get("status") or {}).get("code") == 403,
           "failFast, no room: the replacement refused with 403: %r" % resp)
    check("n9" in ((resp.get("status") or {}).get("message") or ""),
          "the message names n9: %r" % resp)
    pod["metadata"]["name"] += "-c"
    again = w.admit(str(uuid.uuid4()), pod)
    check(again.get("allowed") is False and (again.get("status") or {}).get("code") == 403,
          "retried while there is no room: refused again: %r" % again)
    # A slot on a healthy node is not given up: its pod still goes there.
    sibling = on_host(env, pods, "n10")
    seen(env, set_phase(env, sibling, "Failed"))
    pod2 = replacement(env, w, sibling)
    expect_on(env, pod2, "n10", "a pod of the healthy slot")
    check_outcome(w, "fail_fast")


@case
def bare_pod_recreated(env):
    make_cluster(env, held=("n10", "n11"))
    (w,), _ = start(env)

    def bare():
        return make_pod(name="solo", annotations={
            "kueue.x-k8s.io/podset-required-topology": RACK_LABEL},
            requests={GPU: "8", "cpu": "4"}, limits={GPU: "8"}, restart_policy="Never")
    first = send(env, w, bare())
    expect(info(env, first)["host"] == "n9", "the bare pod on n9: %r" % info(env, first))
    run_all(env, [first])
    free(env, "n11")
    notready_then_failed(env, first, "n9")
    delete_pod(env, first)  # Failed: deleted at once
    again = send(env, w, bare())
    i = info(env, again)
    expect(not i["gated"] and i["host"] and i["host"] != "n9",
           "recreated under the same name: placed anew on a healthy node: %r" % i)
    check_outcome(w, "new")


@case
def preferred_same_rack(env):
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "pref", topology="preferred")
    free(env, "n11")
    old = victim(env, pods)
    notready_then_failed(env, old, "n9")
    new = replacement(env, w, old)
    expect_on(env, new, "n11", "rack preferred, r1 has room")
    check_replaced(env, w, old, new, "n9", "n11", gen_of(old))


@case
def preferred_other_rack(env):
    make_cluster(env)
    (w,), _ = start(env)
    pods = place(env, w, "pref", topology="preferred")
    old = victim(env, pods)
    notready_then_failed(env, old, "n9")
    new = replacement(env, w, old)
    i = info(env, new)
    expect(not i["gated"] and i["host"] and i["rack"] not in (None, "r1"),
           "rack preferred, r1 full: the replacement in another rack: %r" % i)
    hosts = assignment_hosts(new)
    check("n9" not in hosts and i["host"] in hosts and "n10" in hosts,
          "the assignment: n10 and %s: %r" % (i["host"], hosts))
    check_outcome(w, "replaced")


@case
def replicas_forward(env):
    make_cluster(env)
    ws, placer = start(env, replicas=2)
    other = ws[1 - ws.index(placer)]
    pods = place(env, placer, "train")
    free(env, "n11")
    old = victim(env, pods)
    notready_then_failed(env, old, "n9")
    fwd = metric(other.metrics_text(), "topo_webhook_forwarded_total")
    new = replacement(env, other, old)
    check(metric(other.metrics_text(), "topo_webhook_forwarded_total") > fwd,
          "%s forwarded the replacement to the placer" % other.name)
    expect_on(env, new, "n11", "the replacement sent to the non-placer")
    check_replaced(env, placer, old, new, "n9", "n11", gen_of(old))


@case
def replicas_takeover(env):
    make_cluster(env)
    ws, placer = start(env, replicas=2)
    pods = place(env, placer, "train")
    free(env, "n11")
    old = victim(env, pods)
    placer.stop(signal.SIGKILL)
    survivor = [w for w in ws if w is not placer][0]
    new_placer = wait_placer(env, [survivor], timeout=15)
    notready_then_failed(env, old, "n9")
    new = replacement(env, new_placer, old)
    expect_on(env, new, "n11", "after a takeover, the new placer")
    check_replaced(env, new_placer, old, new, "n9", "n11", gen_of(old))
    check(gen_of(new)[0] > gen_of(old)[0], "the new placer's term outranks the old one's: "
          "%r -> %r" % (gen_of(old), gen_of(new)))
    # The replacement never started (deleted before it was bound): the next
    # pod of that index keeps the replaced slot.
    delete_pod(env, new)
    later = replacement(env, new_placer, old, name_suffix="c")
    check(info(env, later)["host"] == "n11" and gen_of(later) == gen_of(new),
          "a later pod of the replaced index keeps n11: %r" % info(env, later))


@case
def fake_server_api(env):
    """No webhook: what the fake API server does with the requests above."""
    make_cluster(env, {"r1": ["n9", "n10"]}, held=())
    pod = env.create("/api/v1/namespaces/%s/pods" % NS, make_pod(name="p", requests={GPU: "8"}))
    bind(env, pod, "n9")
    got = env.pod(NS, "p")
    check(got["spec"].get("nodeName") == "n9" and any(
        c["type"] == "PodScheduled" and c["status"] == "True"
        for c in got["status"].get("conditions", [])), "bound to n9: %r" % got)
    st, out = env.request("POST", pod_path(pod, "/binding"), {
        "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n10"}})
    check(st == 409 and "already assigned" in out.get("message", ""),
          "a second Binding is a Conflict: %d %r" % (st, out))
    set_phase(env, pod, "Running")
    node_status(env, "n9", [ready_condition("Unknown")])
    st, out = env.request("DELETE", pod_path(pod))
    check(st == 200 and out["metadata"].get("deletionTimestamp")
          and out["metadata"].get("deletionGracePeriodSeconds") == 30,
          "on a NotReady node a DELETE leaves the pod Terminating: %d %r" % (st, out))
    check(env.pod(NS, "p") is not None, "still stored while Terminating")
    st, out = env.request("DELETE", pod_path(pod), {"gracePeriodSeconds": 0})
    check(st == 200 and env.pod(NS, "p") is None, "gracePeriodSeconds 0 deletes it: %d" % st)
    # On a Ready node the (fake) kubelet confirms at once.
    q = env.create("/api/v1/namespaces/%s/pods" % NS, make_pod(name="q", requests={GPU: "8"}))
    bind(env, q, "n10")
    set_phase(env, q, "Running")
    st, out = env.request("DELETE", pod_path(q))
    check(st == 200 and env.pod(NS, "q") is None, "on a Ready node: deleted at once: %d" % st)
    n = patch(env, "/api/v1/nodes/n10", {"spec": {"unschedulable": True,
                                                  "taints": [XID_TAINT]}})
    check(n["spec"].get("unschedulable") is True and n["spec"]["taints"] == [XID_TAINT],
          "node spec patched: %r" % n["spec"])
    env.create("/api/v1/namespaces/%s/events" % NS, {
        "metadata": {"name": "p.1"}, "involvedObject": {"kind": "Pod", "namespace": NS,
                                                        "name": "p", "uid": "u"},
        "reason": REPLACED_EVENT, "message": "n9 -> n10", "type": "Normal"})
    evs = events_of(env, {"metadata": {"namespace": NS, "name": "p"}})
    check([e["reason"] for e in evs] == [REPLACED_EVENT], "the Event listed: %r" % evs)


def main():
    return run_cases(CASES, Env, bin_flag="--webhook", on_failure=on_failure)


if __name__ == "__main__":
    sys.exit(main())
