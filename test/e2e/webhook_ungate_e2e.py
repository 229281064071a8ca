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
    cluster is full (the leader's topo_webhook_gated_waiting is 8, and
    topo_webhook_gated_oldest_seconds the age of the oldest one, created 10
    minutes before the others; the follower's 0);
  * the leader is stopped (SIGTERM releases the Lease) and the filler pods
    of rack r02 are deleted: within seconds the other replica leads and has
    patched every gated pod: gate gone, wait-reason gone, the same assignment
    annotation on all 8, and a nodeSelector that selects only nodes of rack
    r02 (8 distinct hosts when it names hosts); its metrics say 8 ungated,
    0 waiting, the oldest waiting 0 s;
  * a Kueue pod group (a CPU-only leader first, then 4 workers): the first
    four pods are gated until the group is complete, the fifth places both
    roles, and the ungater releases the others into them (rack r01, freed).
"""
import argparse
import datetime
import json
import sys
import time

from harness import FAILURES, check, check_within, finish
from harness.pods import (ASSIGNMENT, BLOCK_LABEL, FAKE_NODE_LEVELS, HOST_LABEL, NS, PODSET,
                          RACK_LABEL, WAIT_GATE, WAIT_REASON, apply_patch, gates_of, job_pod,
                          make_pod, ops_of)
from harness.webhook import WebhookApiEnv, start_daemon

SIZE = 8
FREED_RACK = "dc1-sp01-lf01-r02"
OLDEST_AGE = 600  # seconds: pod 0's creationTimestamp is this far back


def big_pod(index, job="big"):
    """Pod `index` of an 8-pod Indexed Job whose PodSet requires one rack."""
    return job_pod(job, SIZE, index, topology=("required", RACK_LABEL), named=True,
                   restart_policy="Never", limits={"nvidia.com/gpu": "8"})


def start_webhook(binary, api, name, policy):
    return start_daemon(api, binary, name,
                        ["--levels", FAKE_NODE_LEVELS, "--policy", policy,
                         "--ungate-interval", "1", "--leader-elect", "true",
                         "--log-format", "text"])


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


def case_deny_ignore(binary, api):
    w = start_webhook(binary, api, "deny", "deny")
    try:
        resp = w.admit("deny-0", big_pod(0, job="refused"))
    finally:
        log = w.stop()
    check(w.proc.returncode == 0, "deny: clean exit on SIGTERM (rc %r)\n%s"
          % (w.proc.returncode, log[-3000:]))
    check(resp.get("allowed") is False, "deny: refused: %r" % resp)
    msg = resp.get("status", {}).get("message", "")
    check(RACK_LABEL in msg, "deny: the message names the level: %r" % msg)
    check("patch" not in resp, "deny: no patch")

    w = start_webhook(binary, api, "ignore", "ignore")
    try:
        resp = w.admit("ignore-0", big_pod(0, job="ignored"))
    finally:
        log = w.stop()
    check(w.proc.returncode == 0, "ignore: clean exit on SIGTERM (rc %r)\n%s"
          % (w.proc.returncode, log[-3000:]))
    check(resp.get("allowed") is True, "ignore: admitted: %r" % resp)
    check(ops_of(resp) == [], "ignore: unchanged (no patch): %r" % resp.get("patch"))


def case_namespace_override(binary, api):
    """A namespace labelled topology.topo.io/no-fit-policy=deny overrides the
    topology's gate policy for its pods only (the label is the default
    namespacePolicyLabel, watched by the webhook's namespace-policy thread)."""
    for name, labels in (("strict", {"topology.topo.io/no-fit-policy": "deny"}),
                         (NS, {})):
        status, out = api.request("POST", "/api/v1/namespaces",
                                  {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": name, "labels": labels}})
        check(status in (201, 409), "namespace %s created: %d %r" % (name, status, out))
    w = start_webhook(binary, api, "ns-override", "gate")
    try:
        strict = big_pod(0, job="strict")
        strict["metadata"]["namespace"] = "strict"
        denied = w.admit("ns-strict-0", strict)
        gated = w.admit("ns-plain-0", big_pod(0, job="plain"))
    finally:
        log = w.stop()
    check(w.proc.returncode == 0, "ns-override: clean exit on SIGTERM (rc %r)\n%s"
          % (w.proc.returncode, log[-3000:]))
    check(denied.get("allowed") is False,
          "a pod in the namespace labelled deny is refused: %r" % denied)
    check(gated.get("allowed") is True and WAIT_GATE in str(ops_of(gated)),
          "a pod elsewhere is gated (the topology's policy): %r" % gated)


def leader_of(ws):
    flags = [w.metrics().get("topo_webhook_ungater_leader") for w in ws]
    return ws[flags.index(1)] if flags.count(1) == 1 and flags.count(0) == len(ws) - 1 else None


def case_gate_ungate(ws, api, nodes):
    leader = check_within("exactly one replica leads the ungater", lambda: leader_of(ws), 15)
    if leader is None:
        return
    w = ws[1 - ws.index(leader)]
    # Admission (on the follower) gates every pod; the "API server" then
    # stores the patched pod.
    for i in range(SIZE):
        pod = big_pod(i)
        resp = w.admit("gate-%d" % i, pod)
        check(resp.get("allowed") is True, "pod %d allowed (gate policy): %r" % (i, resp))
        out = apply_patch(resp, pod)
        ann = out["metadata"].get("annotations", {})
        check(gates_of(out) == [WAIT_GATE], "pod %d gated: %r" % (i, gates_of(out)))
        check(ann.get(WAIT_REASON), "pod %d: wait-reason annotation" % i)
        check(ann.get(PODSET), "pod %d: podset annotation" % i)
        check("nodeSelector" not in out["spec"], "pod %d: no nodeSelector while gated" % i)
        if i == 0:
            # The fake API server keeps a creationTimestamp it is given: pod 0
            # has been waiting for 10 minutes (the PodSet's oldest pod).
            t = datetime.datetime.now(datetime.timezone.utc) - \
                datetime.timedelta(seconds=OLDEST_AGE)
            out["metadata"]["creationTimestamp"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        api.create("/api/v1/namespaces/%s/pods" % NS, out)
    podsets = {api.pod(NS, "big-%d" % i)["metadata"]["annotations"].get(PODSET)
               for i in range(SIZE)}
    check(len(podsets) == 1, "one podset annotation for the 8 pods: %r" % podsets)

    # While the cluster is full, rounds (every second) leave them gated.
    time.sleep(3.5)
    for i in range(SIZE):
        pod = api.pod(NS, "big-%d" % i)
        check(pod is not None and gates_of(pod) == [WAIT_GATE],
              "pod %d still gated while nothing fits" % i)

    m = leader.metrics()
    check(m.get("topo_webhook_gated_waiting") == SIZE,
          "leader: %d pods waiting: %r" % (SIZE, m.get("topo_webhook_gated_waiting")))
    check(m.get("topo_webhook_ungated_total") == 0, "leader: nothing ungated yet")
    oldest = m.get("topo_webhook_gated_oldest_seconds")
    check(oldest is not None and OLDEST_AGE <= oldest <= OLDEST_AGE + 60,
          "leader: the oldest gated pod waits %d s (its creationTimestamp): %r"
          % (OLDEST_AGE, oldest))
    check(w.metrics().get("topo_webhook_gated_oldest_seconds") == 0,
          "follower (no ungater round): oldest waiting 0: %r"
          % w.metrics().get("topo_webhook_gated_oldest_seconds"))
    check(leader_of(ws) is leader, "leadership stable")

    # The leader goes (its Lease released); the other replica takes over.
    leader.stop()
    check(leader.proc.returncode == 0, "leader: clean exit on SIGTERM (rc %r)"
          % leader.proc.returncode)
    # Free rack r02: the PodSet now fits there and only there.
    freed = sorted(n for n, labels in nodes.items() if labels[RACK_LABEL] == FREED_RACK)
    for p in api.items("/api/v1/namespaces/filler/pods"):
        if p["spec"].get("nodeName") in freed:
            api.delete("/api/v1/namespaces/filler/pods/" + p["metadata"]["name"])
    t0 = time.monotonic()
    pods = {}
    while time.monotonic() - t0 < 20:
        pods = {i: api.pod(NS, "big-%d" % i) for i in range(SIZE)}
        if all(p is not None and WAIT_GATE not in gates_of(p) for p in pods.values()):
            break
        time.sleep(0.2)
    print("ungated after %.1f s" % (time.monotonic() - t0))

    assignments = set()
    hosts = set()
    for i, pod in sorted(pods.items()):
        check(pod is not None and WAIT_GATE not in gates_of(pod),
              "pod %d ungated within 20 s: %r" % (i, pod and gates_of(pod)))
        if pod is None:
            continue
        ann = pod["metadata"].get("annotations", {})
        check(WAIT_REASON not in ann, "pod %d: wait-reason removed" % i)
        check(ann.get(ASSIGNMENT), "pod %d: assignment annotation" % i)
        assignments.add(ann.get(ASSIGNMENT))
        sel = pod["spec"].get("nodeSelector") or {}
        check(sel, "pod %d: nodeSelector set" % i)
        if RACK_LABEL in sel:
            check(sel.get(BLOCK_LABEL) == "dc1-sp01",
                  "pod %d: a rack selector names its block too: %r" % (i, sel))
        matching = sorted(n for n, labels in nodes.items()
                          if all(labels.get(k) == v for k, v in sel.items()))
        check(matching and all(n in freed for n in matching),
              "pod %d: nodeSelector %r selects nodes of rack %s only: %r"
              % (i, sel, FREED_RACK, matching))
        check(not pod["spec"].get("nodeName"), "pod %d: still unbound (the scheduler binds)" % i)
        if HOST_LABEL in sel:
            hosts.add(sel[HOST_LABEL])
        else:
            hosts.add(None)
    check(len(assignments) == 1, "one assignment for the PodSet: %r" % assignments)
    if None not in hosts:
        check(len(hosts) == SIZE, "%d distinct hosts: %r" % (SIZE, sorted(hosts)))
    if len(assignments) == 1:
        doc = json.loads(assignments.pop())
        check(sum(d["count"] for d in doc.get("domains", [])) == SIZE,
              "assignment counts sum to %d: %r" % (SIZE, doc))
    # The waiting gauge and the ungated counter are set when a round ends,
    # which can be just after the last patch reached the API server: poll.
    m = check_within("survivor: 0 waiting, %d ungated" % SIZE, lambda: (lambda x: x if x.get(
        "topo_webhook_gated_waiting") == 0 and x.get("topo_webhook_ungated_total") == SIZE
        else None)(w.metrics()), 5) or {}
    check(m.get("topo_webhook_gated_oldest_seconds") == 0,
          "survivor: nothing gated, the oldest waiting 0 s: %r"
          % m.get("topo_webhook_gated_oldest_seconds"))
    check(m.get("topo_webhook_ungater_leader") == 1, "survivor leads: %r" % m)
    check(m.get("topo_webhook_ungated_total") == SIZE,
          "survivor ungated %d: %r" % (SIZE, m.get("topo_webhook_ungated_total")))


def group_pod(name, gpus):
    """Pod `name` of Kueue pod group "lw" of 5 (a leader, 4 workers), one rack,
    leader and workers co-located (podset-group-name)."""
    return make_pod(name=name, labels={"kueue.x-k8s.io/pod-group-name": "lw"},
                    annotations={"kueue.x-k8s.io/pod-group-total-count": "5",
                                 "kueue.x-k8s.io/podset-required-topology": RACK_LABEL,
                                 "kueue.x-k8s.io/podset-group-name": "lw"},
                    requests={"nvidia.com/gpu": str(gpus), "cpu": "4"}, restart_policy="Never")


def case_pod_group(ws, api, nodes):
    """Issue 8: a pod group whose CPU-only leader comes first. Every pod but
    the last is gated (no pod is placed on the leader's terms); the last one
    places both roles; the ungater then releases the others into their
    roles: 4 workers on 4 hosts of one rack, the leader in that rack."""
    alive = [w for w in ws if w.proc.poll() is None]
    if not alive:
        check(False, "pod group: no replica left")
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
        out = apply_patch(resp, pod)
        last = i == len(names) - 1
        check(resp.get("allowed") is True, "%s allowed: %r" % (name, resp))
        check((gates_of(out) == []) == last,
              "%s: %s" % (name, "placed at once" if last else "gated until the group is complete"))
        if not last:
            check(out["metadata"]["annotations"].get(WAIT_REASON) ==
                  "pod group: %d of its 5 pods have arrived" % (i + 1),
                  "%s: wait-reason %r" % (name, out["metadata"]["annotations"].get(WAIT_REASON)))
        api.create("/api/v1/namespaces/%s/pods" % NS, out)
    pods = {}
    t0 = time.monotonic()
    while time.monotonic() - t0 < 20:
        pods = {name: api.pod(NS, name) for name, _ in names}
        if all(p is not None and WAIT_GATE not in gates_of(p) for p in pods.values()):
            break
        time.sleep(0.2)
    print("pod group released after %.1f s" % (time.monotonic() - t0))
    hosts = {}
    for name, pod in pods.items():
        check(pod is not None and WAIT_GATE not in gates_of(pod), "%s ungated" % name)
        sel = (pod or {}).get("spec", {}).get("nodeSelector") or {}
        hosts[name] = sel.get(HOST_LABEL)
        check(hosts[name] in freed, "%s on a host of the freed rack: %r" % (name, sel))
    workers = [hosts[n] for n, gpus in names if gpus]
    check(len(set(workers)) == 4, "4 workers on 4 hosts: %r" % workers)
    racks = {nodes[h][RACK_LABEL] for h in hosts.values() if h in nodes}
    check(len(racks) == 1, "leader and workers in one rack: %r" % hosts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    args = ap.parse_args()
    logs = {}
    api = WebhookApiEnv()
    ws = []
    try:
        try:
            nodes = fill(api)
            case_deny_ignore(args.webhook, api)
            case_namespace_override(args.webhook, api)
            for name in ("gate-a", "gate-b"):
                ws.append(start_webhook(args.webhook, api, name, "gate"))
            case_gate_ungate(ws, api, nodes)
            case_pod_group(ws, api, nodes)
        except Exception as e:  # setup failures: report with the logs
            check(False, "error: %r" % e)
        finally:
            for name, w in zip(("gate-a", "gate-b"), ws):
                logs[name] = w.stop()
                check(w.proc.returncode == 0,
                      "%s: clean exit on SIGTERM (rc %r)" % (name, w.proc.returncode))
            logs["apiserver"] = api.server_log()
        if FAILURES:
            for name, log in logs.items():
                print("--- %s log (tail) ---\n%s" % (name, log[-6000:]))
    finally:
        api.close()
    return finish("webhook_ungate_e2e")


if __name__ == "__main__":
    sys.exit(main())
