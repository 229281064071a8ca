#!/usr/bin/env python3
"""Events on gated pods (issue 29): topo-webhook in daemon mode, two replicas
with leader election, against fake_apiserver.py (which validates core/v1
Events as kube-apiserver does and filters them by involvedObject.*).

  webhook_events_e2e.py --webhook build/webhook/topo-webhook

16 GPU nodes in 2 racks of 8, each filled by one bound 8-GPU pod; an
8-pod Job whose PodSet requires one rack cannot fit. In order:
  * gated at admission: each pod gets exactly one Normal TopologyWaiting
    Event whose message is its wait-reason annotation;
  * rounds every second with the same reason: still one per pod;
  * the placer goes (SIGTERM releases the Lease), the other replica takes
    over and evaluates every PodSet again: the reason is the same, nothing
    is posted again (no Event per takeover);
  * 4 nodes of rack r02 free up (the reason's counts change) and the placer
    goes again: the new one (a third replica) posts one more TopologyWaiting
    per pod with the new reason, and the wait-reason annotation says it too;
    rounds after that post nothing;
  * rack r02 frees: each pod is released and gets one Normal TopologyPlaced
    naming rack r02; topo_webhook_events_total{result="created"} counts
    them all over the replicas.
"""
import sys
import time
import urllib.parse

from harness import check, check_within
from harness.pods import (FAKE_NODE_LEVELS, NS, RACK_LABEL, WAIT_GATE, WAIT_REASON, apply_patch,
                          gates_of, job_pod)
from harness.webhook import main_against_api, metric, start_daemon

SIZE = 8
R02 = "dc1-sp01-lf01-r02"
WAITING = "TopologyWaiting"
PLACED = "TopologyPlaced"


def big_pod(index):
    return job_pod("big", SIZE, index, topology=("required", RACK_LABEL), named=True,
                   restart_policy="Never", limits={"nvidia.com/gpu": "8"})


def start_webhook(binary, api, name):
    w = start_daemon(api, binary, name,
                     ["--levels", FAKE_NODE_LEVELS, "--policy", "gate",
                      "--ungate-interval", "1", "--leader-elect", "true",
                      "--log-format", "text"])
    w.name = name
    return w


def events_of(api, name):
    sel = urllib.parse.quote("involvedObject.name=%s" % name)
    status, out = api.request("GET", "/api/v1/namespaces/%s/events?fieldSelector=%s" % (NS, sel))
    return out.get("items", []) if status == 200 else []


def reasons(api):
    """{pod name: [(reason, type, message), ...]} of the 8 pods, oldest first."""
    out = {}
    for i in range(SIZE):
        evs = sorted(events_of(api, "big-%d" % i),
                     key=lambda e: (e.get("firstTimestamp", ""), e["metadata"]["name"]))
        out["big-%d" % i] = [(e.get("reason"), e.get("type"), e.get("message")) for e in evs]
    return out


def annotation(api, i):
    pod = api.pod(NS, "big-%d" % i) or {}
    return pod.get("metadata", {}).get("annotations", {}).get(WAIT_REASON)


def leader_of(ws):
    alive = [w for w in ws if w.proc.poll() is None]
    flags = [w.metrics().get("topo_webhook_ungater_leader") for w in alive]
    return alive[flags.index(1)] if flags.count(1) == 1 else None


def counts(api, reason):
    return {n: sum(1 for r in evs if r[0] == reason) for n, evs in reasons(api).items()}


def free_rack_nodes(api, nodes, n):
    """Deletes the filler pods on n more nodes of rack r02."""
    freed = sorted(x for x, labels in nodes.items() if labels[RACK_LABEL] == R02)
    left = [p for p in api.items("/api/v1/namespaces/filler/pods")
            if p["spec"].get("nodeName") in freed]
    for p in left[:n]:
        api.delete("/api/v1/namespaces/filler/pods/" + p["metadata"]["name"])


def run(binary, api, ws):
    api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
    api.admin("load", {"resource": "pods", "count": 16, "gpus": 8, "namespace": "filler"})
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in api.items("/api/v1/nodes")}
    for name in ("ev-a", "ev-b"):
        ws.append(start_webhook(binary, api, name))
    leader = check_within("one replica leads", lambda: leader_of(ws), 15)
    if leader is None:
        return

    # Gated at admission: one TopologyWaiting each, the annotation's words.
    for i in range(SIZE):
        pod = big_pod(i)
        out = apply_patch(ws[0].admit("gate-%d" % i, pod), pod)
        check(gates_of(out) == [WAIT_GATE], "pod %d gated" % i)
        api.create("/api/v1/namespaces/%s/pods" % NS, out)
    first = check_within("a TopologyWaiting Event on each pod", lambda: (
        lambda c: c if all(v >= 1 for v in c.values()) else None)(counts(api, WAITING)), 20)
    if first is None:
        return
    evs = reasons(api)
    for i in range(SIZE):
        name = "big-%d" % i
        waiting = [e for e in evs[name] if e[0] == WAITING]
        check(len(waiting) == 1, "%s: one TopologyWaiting: %r" % (name, evs[name]))
        check(waiting and waiting[0][1] == "Normal", "%s: Normal: %r" % (name, waiting))
        check(waiting and waiting[0][2] == annotation(api, i) and waiting[0][2],
              "%s: the message is the wait-reason annotation: %r vs %r"
              % (name, waiting, annotation(api, i)))
    reason0 = annotation(api, 0)

    # Rounds with the same reason: nothing more.
    time.sleep(4)
    check(counts(api, WAITING) == {"big-%d" % i: 1 for i in range(SIZE)},
          "same reason over 4 rounds: still one each: %r" % reasons(api))

    # A takeover with the same reason: nothing more.
    leader.stop()
    leader = check_within("the other replica leads", lambda: leader_of(ws), 25)
    ws.append(start_webhook(binary, api, "ev-c"))
    time.sleep(5)  # the takeover's settle and its first rounds (every PodSet evaluated)
    check(counts(api, WAITING) == {"big-%d" % i: 1 for i in range(SIZE)},
          "a takeover re-posts nothing: %r" % reasons(api))
    if leader is None:
        return

    # The reason changes (4 nodes of r02 free, not enough for 8 pods); the
    # next placer evaluates the PodSet first thing and tells every pod.
    free_rack_nodes(api, nodes, 4)
    time.sleep(1.5)
    leader.stop()
    check_within("the third replica leads", lambda: leader_of(ws), 25)
    second = check_within("a second TopologyWaiting on each pod", lambda: (
        lambda c: c if all(v == 2 for v in c.values()) else None)(counts(api, WAITING)), 20)
    reason1 = annotation(api, 0)
    check(reason1 and reason1 != reason0,
          "the wait-reason annotation says the new reason: %r (was %r)" % (reason1, reason0))
    if second is not None:
        evs = reasons(api)
        for i in range(SIZE):
            name = "big-%d" % i
            waiting = [e for e in evs[name] if e[0] == WAITING]
            check(waiting[-1][2] == annotation(api, i) == reason1,
                  "%s: the new Event says the new annotation: %r" % (name, waiting))
    time.sleep(3)
    check(counts(api, WAITING) == {"big-%d" % i: 2 for i in range(SIZE)},
          "the new reason told once: %r" % reasons(api))

    # Room: released, one TopologyPlaced each naming rack r02.
    free_rack_nodes(api, nodes, 8)
    placed = check_within("a TopologyPlaced Event on each pod", lambda: (
        lambda c: c if all(v >= 1 for v in c.values()) else None)(counts(api, PLACED)), 25)
    if placed is not None:
        evs = reasons(api)
        for i in range(SIZE):
            name = "big-%d" % i
            p = [e for e in evs[name] if e[0] == PLACED]
            check(len(p) == 1 and p[0][1] == "Normal" and R02 in p[0][2],
                  "%s: one Normal TopologyPlaced naming %s: %r" % (name, R02, p))
            pod = api.pod(NS, name) or {}
            check(WAIT_GATE not in gates_of(pod), "%s released" % name)
    time.sleep(2)
    total = sum(len(v) for v in reasons(api).values())
    check(total == 3 * SIZE, "%d Events in all (2 TopologyWaiting, 1 TopologyPlaced a pod): %r"
          % (3 * SIZE, reasons(api)))
    created = 0
    for w in ws:
        if w.proc.poll() is None:
            created += metric(w.metrics_text(), "topo_webhook_events_total",
                              'result="created"')
    check(created >= SIZE, "the live replica counted its Events: %r" % created)


if __name__ == "__main__":
    sys.exit(main_against_api("webhook_events_e2e", run))
