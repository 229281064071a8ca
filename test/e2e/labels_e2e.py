#!/usr/bin/env python3
"""Process-level tests of topo-sync's label writer (include/topo/labelwriter.h,
lib/sync/labels/) through test/e2e/labels_driver.c, against fake_apiserver.py over
TLS: the driver lists the nodes, then brings each to the plan of a file with
one merge PATCH, and an Event, per node that differs. Python 3 standard
library only.

usage: labels_e2e.py --driver BIN (--list | --case NAME | --all) [--keep]
"""

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

from harness import expect, registry, run_cases
from harness.fakeapi import FakeApiEnv

P = "topology.topo.io/"
REC = P + "applied-labels"
PROV = P + "provenance"
NODES = "/api/v1/nodes"
EVENTS = "/api/v1/namespaces/default/events"
ARROW = " \u2192 "

CASES, case = registry()


def record(labels):
    """The record annotation the writer keeps of the owned labels it wrote."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def owned(labels):
    return {k: v for k, v in labels.items() if k.startswith(P)}


def foreign(labels):
    return {k: v for k, v in labels.items() if not k.startswith(P)}


def topo_labels(i):
    """node-i's topology: 4 nodes a rack, 2 racks a leaf, 2 leaves a spine."""
    rack, leaf, spine = i // 4, i // 8, i // 16
    return {P + "spine": f"sp{spine}", P + "leaf": f"lf{leaf}", P + "rack": f"r{rack}"}


class Env(FakeApiEnv):
    PREFIX = "topo-labels-e2e-"
    TOKEN = "labels-token"

    def __init__(self, driver, keep):
        self.driver_bin = driver
        super().__init__(keep)

    # -------------------------------------------------------------- cluster

    def load_nodes(self, n, labelled=True, recorded=True, extra=None):
        """node-0..node-(n-1) as kubelet, GFD and (when labelled) topo-sync left
        them: owned labels as topo_labels(i) and, when recorded, the record
        annotation too. extra(i) -> (labels, annotations) adds more."""
        items = []
        for i in range(n):
            name = f"node-{i}"
            labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                      "nvidia.com/gpu.clique": f"cl-{i // 8}.1"}
            ann = {"node.alpha.kubernetes.io/ttl": "0",
                   "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
            if labelled:
                labels.update(topo_labels(i))
                if recorded:
                    ann[REC] = record(topo_labels(i))
            if extra is not None:
                more_l, more_a = extra(i)
                labels.update(more_l)
                ann.update(more_a)
            items.append({"metadata": {"name": name, "labels": labels, "annotations": ann},
                          "spec": {"providerID": f"baremetal://{name}"},
                          "status": {"nodeInfo": {"kubeletVersion": "v1.30.2"}}})
        path = self.path("nodes.json")
        with open(path, "w") as fh:
            # json.dumps: json.dump's pure-Python encoder is three times slower
            fh.write(json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": items}))
        self.admin("load", {"file": path})
        self.admin("requests/clear", {})

    def node(self, name):
        status, out = self.request("GET", f"{NODES}/{name}")
        return out if status == 200 else None

    def labels(self, name):
        return self.node(name)["metadata"].get("labels", {})

    def annotations(self, name):
        return self.node(name)["metadata"].get("annotations", {})

    def requests(self, method=None, prefix=""):
        return [r for r in self.admin("requests")["requests"]
                if (method is None or r["method"] == method) and r["path"].startswith(prefix)]

    def patched(self):
        """The node names PATCHed (each request once), in order, with status."""
        return [(r["path"].rsplit("/", 1)[1], r["status"])
                for r in self.requests("PATCH", NODES + "/")]

    def events(self, node=None):
        sel = "involvedObject.kind=Node"
        if node is not None:
            sel += ",involvedObject.name=" + node
        return self.items(EVENTS + "?fieldSelector=" + urllib.parse.quote(sel))

    # -------------------------------------------------------------- the driver

    def write_plan(self, plan):
        path = self.path("plan.json")
        with open(path, "w") as fh:
            fh.write(json.dumps(plan))
        return path

    def run(self, plan, *args, timeout=60, stdin=None):
        """Runs the driver over plan (node -> {"labels", "annotations"} or None);
        returns (exit status, {outcome: [nodes]}, stats, stderr)."""
        argv = [self.driver_bin, "--kubeconfig", self.kubeconfig, "--plan",
                self.write_plan(plan), "--instance", "e2e-pod", *args]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=stdin)
        return self.parse(p.returncode, p.stdout, p.stderr)

    @staticmethod
    def parse(rc, stdout, stderr):
        """stats gets "codes": {node: TOPO_CODE} of the failed nodes."""
        outcomes, stats, codes = {}, None, {}
        for line in stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word == "stats":
                stats = json.loads(rest)
            elif word in ("patched", "gone", "held", "dry-run", "failed"):
                outcomes.setdefault(word, []).append(rest.split()[0])
                if word == "failed":
                    codes[rest.split()[0]] = rest.split()[1]
        if stats is not None:
            stats["codes"] = codes
        expect(stats is not None or rc == 2,
               f"driver: exit {rc}, no stats\nstdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}")
        return rc, outcomes, stats, stderr


def plan_for(n, change=None):
    """Every node authoritative with topo_labels(i); change(i, labels) edits."""
    plan = {}
    for i in range(n):
        labels = topo_labels(i)
        if change is not None:
            change(i, labels)
        plan[f"node-{i}"] = {"labels": labels}
    return plan


def expect_stats(stats, **want):
    bad = {k: (stats.get(k), v) for k, v in want.items() if stats.get(k) != v}
    expect(not bad, f"stats (got, want): {bad}; all: {stats}")


@case
def converged_10k(env):
    """10,000 realistic nodes whose owned labels (and record) are already what
    the plan says: the round sends zero PATCHes and creates no Event."""
    spec = {P + "block": "@@spine@@", P + "datacenter": "@@dc@@", P + "leaf": "@@leaf@@",
            P + "nvlink": "@@name@@", P + "rack": "@@rack@@", P + "spine": "@@spine@@"}
    env.admin("bulk", {"nodes": 10000, "node_annotations": {REC: record(spec)}})
    plan = {}
    for i in range(10000):
        # BulkFactory.node's names and labels
        rack_g, in_rack = divmod(i, 8)
        leaf_g, rack = divmod(rack_g, 4)
        spine_g, leaf = divmod(leaf_g, 8)
        spine = f"dc1-sp{spine_g + 1:02d}"
        leafn = f"{spine}-lf{leaf + 1:02d}"
        rackn = f"{leafn}-r{rack + 1:02d}"
        name = f"{rackn}-n{in_rack + 1:02d}"
        plan[name] = {"labels": {P + "datacenter": "dc1", P + "spine": spine,
                                 P + "block": spine, P + "leaf": leafn, P + "rack": rackn,
                                 P + "nvlink": name}}
    env.admin("requests/clear", {})
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 0 and not outcomes, f"exit {rc}, {outcomes}\n{err[-2000:]}")
    expect_stats(stats, nodes=10000, converged=10000, patches_sent=0, events_created=0)
    verbs = env.admin("stats")["verbs"]
    expect("PATCH" not in verbs.get("nodes", {}), f"PATCHes sent: {verbs}")
    expect("events" not in verbs, f"events touched: {verbs}")
    print(f"10k converged: list {stats['list_ms']:.0f} ms ({stats['list_cpu_ms']:.0f} ms CPU),"
          f" diff {stats['apply_ms']:.0f} ms ({stats['apply_cpu_ms']:.0f} ms CPU)")


def handful(i, labels):
    if i == 3:
        labels[P + "leaf"] = "lf9"               # moved to another leaf
    elif i == 7:
        labels[P + "rack"] = "r12"               # a changed value
        labels[P + "block"] = "b1"               # a new level
    elif i == 12:
        del labels[P + "rack"]                   # a level no longer known: removed
    elif i == 20:
        labels[P + "spine"] = "sp7"
        labels[P + "leaf"] = "lf7"


@case
def relabel_handful(env):
    """40 converged nodes, a plan that changes 4 of them: exactly one merge
    PATCH each, the server's labels as planned, every label outside the
    prefix and every other annotation untouched, the record rewritten; one
    node also modified by another writer just before its PATCH (no
    resourceVersion precondition: no 409, the other write kept). A second
    round sends nothing."""
    env.load_nodes(40)
    before = {f"node-{i}": env.node(f"node-{i}")["metadata"] for i in range(40)}
    env.admin("fault", {"kind": "touch", "count": 1, "method": "PATCH",
                        "path": NODES + "/node-7"})
    plan = plan_for(40, handful)
    rc, outcomes, stats, err = env.run(plan)
    changed = ["node-12", "node-20", "node-3", "node-7"]   # in list order (by name)
    expect(rc == 0 and outcomes == {"patched": changed}, f"exit {rc}, {outcomes}\n{err}")
    expect_stats(stats, nodes=40, converged=36, patches_sent=4, patches_failed=0, conflicts=0,
                 labels_set=5, labels_removed=1, drift_nodes=0)
    expect(env.patched() == [(n, 200) for n in changed], f"PATCHes: {env.patched()}")
    ctypes = {r["content_type"] for r in env.requests("PATCH")}
    expect(ctypes == {"application/merge-patch+json"}, f"content types {ctypes}")
    for i in range(40):
        name = f"node-{i}"
        md = env.node(name)["metadata"]
        want = plan[name]["labels"]
        expect(owned(md["labels"]) == want, f"{name}: {owned(md['labels'])} != {want}")
        expect(foreign(md["labels"]) == foreign(before[name]["labels"]),
               f"{name}: labels outside the prefix changed: {md['labels']}")
        ann = dict(md["annotations"])
        expect(ann.pop(REC) == record(want), f"{name}: record {md['annotations'][REC]}")
        ann.pop("fake.topo.io/touched", None)
        old = dict(before[name]["annotations"])
        old.pop(REC)
        expect(ann == old, f"{name}: annotations {ann} != {old}")
    expect("fake.topo.io/touched" in env.annotations("node-7"), "the other writer's change lost")
    env.admin("requests/clear", {})
    rc, outcomes, stats, _ = env.run(plan)
    expect(rc == 0 and not outcomes and stats["converged"] == 40, f"second round: {outcomes}")
    expect(not env.patched(), f"second round PATCHed {env.patched()}")


@case
def events_on_change(env):
    """A core/v1 Event per relabelled node, as `kubectl describe node` finds it
    (kind Node, name and uid), with the old → new message; none for a node
    whose only change is an annotation."""
    env.load_nodes(16)
    plan = plan_for(16, handful)
    plan["node-5"]["annotations"] = {PROV: "leaf=ufm,rack=netbox"}   # annotation only
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 0, f"exit {rc}\n{err}")
    expect_stats(stats, patches_sent=4, events_created=3, events_failed=0)
    expect(env.annotations("node-5")[PROV] == "leaf=ufm,rack=netbox", "provenance not set")
    expect(not env.events("node-5"), f"event for an annotation change: {env.events('node-5')}")
    want = {"node-3": f"leaf: lf0{ARROW}lf9",
            "node-7": f"rack: r1{ARROW}r12, block: (none){ARROW}b1",
            "node-12": f"rack: r3{ARROW}(none)"}
    for name, message in want.items():
        evs = env.events(name)
        expect(len(evs) == 1, f"{name}: {len(evs)} events")
        ev = evs[0]
        uid = env.node(name)["metadata"]["uid"]
        io = ev["involvedObject"]
        expect(io == {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid},
               f"{name}: involvedObject {io}")
        expect(ev["message"] == message, f"{name}: message {ev['message']!r} != {message!r}")
        expect(ev["reason"] == "TopologyLabelsChanged" and ev["type"] == "Normal", f"{ev}")
        expect(ev["source"] == {"component": "topo-sync"} and
               ev["reportingComponent"] == "topo-sync" and
               ev["reportingInstance"] == "e2e-pod", f"{ev}")
        expect(ev["metadata"]["namespace"] == "default" and ev["count"] == 1 and
               ev["firstTimestamp"] == ev["lastTimestamp"], f"{ev}")
        # kubectl describe node's query: by uid
        sel = urllib.parse.quote(f"involvedObject.kind=Node,involvedObject.uid={uid}")
        expect(len(env.items(EVENTS + "?fieldSelector=" + sel)) == 1, f"{name}: not by uid")


@case
def first_labelling(env):
    """Nodes that carry no owned label yet (a new cluster, a new node) are
    labelled with one PATCH each and no Event, unless initial Events are
    asked for."""
    env.load_nodes(6, labelled=False)
    plan = plan_for(6)
    rc, outcomes, stats, err = env.run({k: v for k, v in plan.items() if k < "node-3"})
    expect(rc == 0 and outcomes.get("patched") == ["node-0", "node-1", "node-2"],
           f"exit {rc}, {outcomes}\n{err}")
    expect_stats(stats, patches_sent=3, events_created=0, labels_set=9)
    expect(not env.events(), f"events: {env.events()}")
    rc, outcomes, stats, err = env.run(plan, "--initial-events", "1")
    expect_stats(stats, patches_sent=3, events_created=3, converged=3)
    ev = env.events("node-4")
    expect(len(ev) == 1 and ev[0]["message"] == f"spine: (none){ARROW}sp0, leaf: (none){ARROW}"
           f"lf0, rack: (none){ARROW}r1", f"{ev}")
    for i in range(6):
        md = env.node(f"node-{i}")["metadata"]
        expect(owned(md["labels"]) == topo_labels(i) and
               md["annotations"][REC] == record(topo_labels(i)), f"node-{i}: {md}")


@case
def drift_reasserted(env):
    """Someone else changes an owned label and adds one: the next round counts
    the drift, logs it, puts the planned value back, removes the stranger and
    records a Warning Event; a label they add outside the prefix stays."""
    env.load_nodes(8)
    patch = {"metadata": {"labels": {P + "leaf": "hijacked", P + "x": "y",
                                     "team.example.com/owner": "ml"}}}
    status, _ = env.request("PATCH", f"{NODES}/node-2", patch,
                            ctype="application/merge-patch+json")
    expect(status == 200, f"PATCH {status}")
    env.admin("requests/clear", {})
    rc, outcomes, stats, err = env.run(plan_for(8))
    expect(rc == 0 and outcomes == {"patched": ["node-2"]}, f"exit {rc}, {outcomes}\n{err}")
    expect_stats(stats, patches_sent=1, drift_nodes=1, drift_labels=2, events_created=1)
    labels = env.labels("node-2")
    expect(owned(labels) == topo_labels(2), f"not reasserted: {labels}")
    expect(labels.get("team.example.com/owner") == "ml", f"foreign label lost: {labels}")
    expect("reasserting" in err and "level=warn" in err, f"drift not logged:\n{err}")
    ev = env.events("node-2")
    expect(len(ev) == 1 and ev[0]["type"] == "Warning" and
           ev[0]["reason"] == "TopologyLabelsReasserted" and
           ev[0]["message"] == f"leaf: hijacked{ARROW}lf0, x: y{ARROW}(none)", f"{ev}")


@case
def held_not_authoritative(env):
    """Nodes the plan does not cover (absent, or null: a source's outage, an
    incomplete node left out) keep every owned label; a node whose plan is
    authoritative and empty loses its owned labels and nothing else."""
    env.load_nodes(6)
    plan = plan_for(6)
    del plan["node-1"]
    plan["node-2"] = None
    plan["node-3"] = {"labels": {}}
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 0 and outcomes == {"held": ["node-1", "node-2"], "patched": ["node-3"]},
           f"exit {rc}, {outcomes}\n{err}")
    expect_stats(stats, held=2, converged=3, patches_sent=1, labels_removed=3)
    for i in (1, 2):
        expect(owned(env.labels(f"node-{i}")) == topo_labels(i), f"node-{i} changed")
    labels = env.labels("node-3")
    expect(not owned(labels) and labels["kubernetes.io/hostname"] == "node-3", f"{labels}")
    expect(env.annotations("node-3")[REC] == "", "record not emptied")
    expect([n for n, _ in env.patched()] == ["node-3"], f"{env.patched()}")


@case
def node_gone(env):
    """A node deleted between the list and its PATCH: 404 is not an error,
    counted as gone, no Event; the others are written."""
    env.load_nodes(6)
    plan = plan_for(6, lambda i, l: l.update({P + "leaf": "lf5"}))
    argv = [env.driver_bin, "--kubeconfig", env.kubeconfig, "--plan", env.write_plan(plan),
            "--pause-after-list", "1"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    expect(first.strip() == "listed 6", f"driver said {first!r}")
    env.delete(f"{NODES}/node-4")
    out, err = p.communicate("go\n", timeout=30)
    rc, outcomes, stats, err = Env.parse(p.returncode, first + out, err)
    expect(rc == 0 and outcomes.get("gone") == ["node-4"], f"exit {rc}, {outcomes}\n{err}")
    expect(len(outcomes.get("patched", [])) == 5, f"{outcomes}")
    expect_stats(stats, nodes_gone=1, patches_sent=5, patches_failed=0, events_created=5)
    expect(not env.events("node-4"), "event for a deleted node")
    expect(("node-4", 404) in env.patched(), f"{env.patched()}")


@case
def throttled_429(env):
    """429 with Retry-After on PATCH: the client waits and the write goes
    through; throttled past its retries, the write fails (counted, exit 1)
    and a later round succeeds."""
    env.load_nodes(3)
    env.admin("fault", {"kind": "status", "code": 429, "count": 2, "retry_after": 1,
                        "method": "PATCH"})
    plan = plan_for(3, lambda i, l: l.update({P + "leaf": "lf5"}))
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 0 and len(outcomes.get("patched", [])) == 3, f"exit {rc}, {outcomes}\n{err}")
    expect_stats(stats, patches_sent=3, patches_failed=0)
    reqs = env.requests("PATCH")
    expect([r["status"] for r in reqs] == [429, 429, 200, 200, 200], f"{reqs}")
    gaps = [reqs[i + 1]["t"] - reqs[i]["t"] for i in range(2)]
    expect(all(g >= 0.9 for g in gaps), f"Retry-After not honoured: gaps {gaps}")

    env.load_nodes(3)  # back to the old labels
    env.admin("fault", {"kind": "status", "code": 429, "count": 100, "retry_after": 1,
                        "method": "PATCH", "path": NODES + "/node-1"})
    rc, outcomes, stats, err = env.run(plan, "--retries", "1")
    expect(rc == 1 and outcomes.get("failed") == ["node-1"], f"exit {rc}, {outcomes}\n{err}")
    expect(stats["codes"] == {"node-1": "TOPO_ETHROTTLED"}, f"{stats['codes']}")
    expect_stats(stats, patches_sent=2, patches_failed=1, events_created=2)
    expect(env.labels("node-1")[P + "leaf"] == "lf0", "a failed write changed the node")
    env.admin("faults/clear", {})
    rc, outcomes, stats, _ = env.run(plan)
    expect(rc == 0 and outcomes == {"patched": ["node-1"]}, f"retry round: {outcomes}")


@case
def conflict_409(env):
    """409 on PATCH: the same patch is sent again (no precondition to
    refresh), up to 3 attempts; past them the write fails with
    TOPO_ECONFLICT."""
    env.load_nodes(2)
    plan = plan_for(2, lambda i, l: l.update({P + "leaf": "lf5"}))
    env.admin("fault", {"kind": "status", "code": 409, "count": 2, "method": "PATCH",
                        "path": NODES + "/node-0"})
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 0 and outcomes.get("patched") == ["node-0", "node-1"], f"{outcomes}\n{err}")
    expect_stats(stats, patches_sent=2, conflicts=2, patches_failed=0)
    expect(env.patched() == [("node-0", 409), ("node-0", 409), ("node-0", 200),
                             ("node-1", 200)], f"{env.patched()}")
    env.load_nodes(2)
    env.admin("requests/clear", {})
    env.admin("fault", {"kind": "status", "code": 409, "count": 100, "method": "PATCH",
                        "path": NODES + "/node-0"})
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 1 and outcomes.get("failed") == ["node-0"], f"{outcomes}\n{err}")
    expect_stats(stats, patches_sent=1, conflicts=3, patches_failed=1,
                 codes={"node-0": "TOPO_ECONFLICT"})
    expect(env.patched().count(("node-0", 409)) == 3, f"{env.patched()}")


@case
def server_error_5xx(env):
    """500 on one node's PATCH: that node fails (not retried: PATCH is not
    idempotent for the HTTP client), the others are written, exit 1; the
    next round writes it."""
    env.load_nodes(4)
    plan = plan_for(4, lambda i, l: l.update({P + "rack": "r9"}))
    env.admin("fault", {"kind": "status", "code": 500, "count": 1, "method": "PATCH",
                        "path": NODES + "/node-2"})
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 1 and outcomes.get("failed") == ["node-2"], f"exit {rc}, {outcomes}\n{err}")
    expect(len(outcomes.get("patched", [])) == 3, f"{outcomes}")
    expect_stats(stats, patches_sent=3, patches_failed=1, codes={"node-2": "TOPO_ESERVER"})
    expect(env.patched().count(("node-2", 500)) == 1, f"{env.patched()}")
    expect("could not write" in err, f"failure not logged:\n{err}")
    rc, outcomes, stats, _ = env.run(plan)
    expect(rc == 0 and outcomes == {"patched": ["node-2"]}, f"second round: {outcomes}")


@case
def event_failure_not_fatal(env):
    """Events cannot be created (403, then 500): the writes succeed, the
    failures are counted and logged, exit 0."""
    env.load_nodes(4)
    env.admin("fault", {"kind": "status", "code": 403, "count": 2, "method": "POST",
                        "path": EVENTS})
    env.admin("fault", {"kind": "status", "code": 500, "count": 100, "method": "POST",
                        "path": EVENTS})
    plan = plan_for(4, lambda i, l: l.update({P + "rack": "r9"}))
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 0 and len(outcomes.get("patched", [])) == 4, f"exit {rc}, {outcomes}\n{err}")
    expect_stats(stats, patches_sent=4, events_created=0, events_failed=4)
    expect("could not create the event" in err, f"not logged:\n{err}")
    for i in range(4):
        expect(env.labels(f"node-{i}")[P + "rack"] == "r9", f"node-{i} not written")


@case
def rate_limited(env):
    """30 PATCHes at --qps 10 --burst 5: spread over at least 2.5 s (the
    client's token bucket), all written."""
    env.load_nodes(30)
    plan = plan_for(30, lambda i, l: l.update({P + "leaf": "lf-new"}))
    t0 = time.monotonic()
    rc, outcomes, stats, err = env.run(plan, "--qps", "10", "--burst", "5", "--no-events", "1")
    took = time.monotonic() - t0
    expect(rc == 0 and len(outcomes.get("patched", [])) == 30, f"{outcomes}\n{err}")
    expect_stats(stats, patches_sent=30, events_created=0)
    reqs = env.requests("PATCH")
    span = reqs[-1]["t"] - reqs[0]["t"]
    # the list used one token: 30 PATCHes after it need 26 more at 10/s
    expect(span >= 2.3, f"30 PATCHes in {span:.2f} s at qps 10 burst 5")
    expect(stats["apply_ms"] >= 2300, f"apply took {stats['apply_ms']} ms")
    print(f"30 PATCHes at qps 10 / burst 5: {span:.2f} s (driver {took:.2f} s)")


@case
def dry_run(env):
    """--dry-run: nothing sent; the exact patch of each node logged."""
    env.load_nodes(8)
    plan = plan_for(8, handful)
    rc, outcomes, stats, err = env.run(plan, "--dry-run", "1")
    expect(rc == 0 and outcomes.get("dry-run") == ["node-3", "node-7"], f"{outcomes}\n{err}")
    expect_stats(stats, dry_run=2, patches_sent=0, events_created=0)
    expect(not env.requests("PATCH") and not env.requests("POST"), "a dry run wrote")
    line = next((ln for ln in err.splitlines() if "node=node-7" in ln and "dry run" in ln), None)
    expect(line is not None, f"no dry-run line for node-7:\n{err}")
    text = line.split(" patch=", 1)[1]
    text = json.loads(text) if not text.startswith('"') else json.loads(json.loads(text))
    want = {"metadata": {"labels": {P + "rack": "r12", P + "block": "b1"},
                         "annotations": {REC: record(plan["node-7"]["labels"])}}}
    expect(text == want, f"logged patch {text} != {want}")


@case
def owned_extra_keys(env):
    """topograph's vocabulary owned as well (exactly its keys) and an exact
    key: a stale tier removed, the domain set, keys beside them that are not
    topograph's (tier-0x, other) left alone."""
    env.load_nodes(2, recorded=False, extra=lambda i: ({"fabric.topograph.run/tier-1": "s1",
                                         "fabric.topograph.run/tier-3": "old",
                                         "fabric.topograph.run/tier-0x": "keep",
                                         "fabric.topograph.run/other": "keep",
                                         "accelerator.topograph.run/other": "keep"}, {}))
    plan = plan_for(2, lambda i, l: l.update({"fabric.topograph.run/tier-1": "s1",
                                              "accelerator.topograph.run/domain": f"nvl{i}"}))
    rc, outcomes, stats, err = env.run(plan, "--prefix", P, "--topograph", "1",
                                       "--owned-key", "example.com/pool", "--no-record", "1")
    expect(rc == 0 and outcomes.get("patched") == ["node-0", "node-1"], f"{outcomes}\n{err}")
    labels = env.labels("node-1")
    expect("fabric.topograph.run/tier-3" not in labels and
           labels["fabric.topograph.run/tier-1"] == "s1" and
           labels["accelerator.topograph.run/domain"] == "nvl1" and
           labels["fabric.topograph.run/tier-0x"] == "keep" and
           labels["fabric.topograph.run/other"] == "keep" and
           labels["accelerator.topograph.run/other"] == "keep", f"{labels}")
    expect(REC not in env.annotations("node-1"), "a record written with --no-record")
    ev = env.events("node-1")
    expect(len(ev) == 1 and ev[0]["message"] ==
           f"accelerator.topograph.run/domain: (none){ARROW}nvl1, "
           f"fabric.topograph.run/tier-3: old{ARROW}(none)", f"{ev}")


@case
def owned_prefix_refused(env):
    """An owned prefix that would reach other owners' labels ("kubernetes.io/",
    "t", a prefix of topograph's) is refused by the writer for every node:
    nothing is sent, every label stays."""
    env.load_nodes(2)
    plan = {f"node-{i}": {"labels": {}} for i in range(2)}  # remove every owned label
    for prefix in ("kubernetes.io/", "t", "fabric.topograph.run/"):
        before = {f"node-{i}": dict(env.labels(f"node-{i}")) for i in range(2)}
        rc, outcomes, stats, err = env.run(plan, "--prefix", P, "--prefix", prefix)
        expect(rc == 1 and outcomes.get("failed") == ["node-0", "node-1"], f"{outcomes}\n{err}")
        expect_stats(stats, invalid=2, patches_sent=0,
                     codes={"node-0": "TOPO_EINVALID", "node-1": "TOPO_EINVALID"})
        expect(env.patched() == [], f"{prefix}: patched {env.patched()}")
        for i in range(2):
            expect(env.labels(f"node-{i}") == before[f"node-{i}"], f"{prefix}: labels changed")


@case
def invalid_plan(env):
    """A plan entry naming a label topo-sync does not own is refused before
    any request (TOPO_EINVALID, counted); the other nodes are written."""
    env.load_nodes(3)
    plan = plan_for(3, lambda i, l: l.update({P + "leaf": "lf5"}))
    plan["node-1"]["labels"]["kubernetes.io/hostname"] = "evil"
    rc, outcomes, stats, err = env.run(plan)
    expect(rc == 1 and outcomes.get("failed") == ["node-1"], f"{outcomes}\n{err}")
    expect_stats(stats, invalid=1, patches_sent=2, codes={"node-1": "TOPO_EINVALID"})
    expect([n for n, _ in env.patched()] == ["node-0", "node-2"], f"{env.patched()}")
    expect(env.labels("node-1")["kubernetes.io/hostname"] == "node-1", "hostname changed")


def main():
    return run_cases(CASES, Env)


if __name__ == "__main__":
    sys.exit(main())
