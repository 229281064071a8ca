#!/usr/bin/env python3
"""`kubectl topo release` (cli/cmd_release.c, topoassign through its link
kubectl-topo) against fake_apiserver.py over TLS: every pod still gated by
topology.topo.io/wait loses that gate and the gate's annotations, and nothing
else (other gates stay, in order; other annotations and fields stay); pods
without the gate, bound pods and other namespaces (-n) are not written; a pod
whose gates change between the list and the patch is read again; paged
lists; 5xx retried; several patches in flight (--concurrency) within --qps,
reported in the list's order; --dry-run writes nothing; in-cluster configuration; a pod that cannot
be released gives exit 1, bad input or an unreadable cluster exit 2.

usage: release_e2e.py --kubectl-topo BUILD/cli/kubectl-topo (--list | --case NAME | --all)
"""

import copy
import json
import os
import shutil
import subprocess
import sys
import time

from harness import expect, registry, run_cases
from harness.fakeapi import FakeApiEnv

GATE = "topology.topo.io/wait"
WAIT_REASON = "topology.topo.io/wait-reason"
PODSET = "topology.topo.io/podset"
SEAL = "topology.topo.io/seal"
FOREIGN_GATE = "example.com/quota-check"
OTHER_GATE = "kueue.x-k8s.io/admission"

CASES, case = registry()


def gated_pod(ns, name, gates=(GATE,), annotations=None, node=None):
    """A pod as topo-webhook leaves it gated: its gates, the wait reason, its
    PodSet and seal, plus a foreign annotation and label of its author."""
    ann = {WAIT_REASON: "topology \"default\" allows to fit only 3 out of 4 pod(s)",
           PODSET: f"{ns}/job/train", SEAL: "0123abcd",
           "kueue.x-k8s.io/podset-required-topology": "topology.topo.io/rack",
           "example.com/owner": "team-a"}
    if annotations is not None:
        ann = annotations
    spec = {"containers": [{"name": "main", "image": "busybox",
                            "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
            "restartPolicy": "Never",
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"job-name": "train"},
                         "annotations": ann},
            "spec": spec,
            "status": {"phase": "Pending",
                       "conditions": [{"type": "PodScheduled", "status": "False",
                                       "reason": "SchedulingGated"}]}}


def released(pod):
    """What the pod must be after the release: without topo's gate and the
    gate's annotations, the rest (other gates in order, the seal, the
    author's annotations) as it was."""
    want = copy.deepcopy(pod)
    want["metadata"].pop("resourceVersion", None)
    gates = want["spec"].get("schedulingGates")
    if gates is not None:
        want["spec"]["schedulingGates"] = [g for g in gates if g["name"] != GATE]
    for k in (WAIT_REASON, PODSET):
        want["metadata"].get("annotations", {}).pop(k, None)
    return want


def without_rv(pod):
    pod = copy.deepcopy(pod)
    pod["metadata"].pop("resourceVersion", None)
    return pod


class Env(FakeApiEnv):
    PREFIX = "topo-release-e2e-"
    TOKEN = "release-token"

    def __init__(self, plugin, keep):
        self.plugin = os.path.abspath(plugin)
        super().__init__(keep)

    def kubectl_topo(self, *args, env=None, timeout=60):
        """kubectl-topo ARGS: (exit, stdout, stderr). No KUBECONFIG or HOME
        config leaks in from the host."""
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.path("home")}
        e.update(env or {})
        p = subprocess.run([self.plugin, *args], capture_output=True, text=True, env=e,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def release(self, *args, **kw):
        return self.kubectl_topo("release", "--kubeconfig", self.kubeconfig, *args, **kw)

    def add(self, pod):
        ns = pod["metadata"]["namespace"]
        return self.create(f"/api/v1/namespaces/{ns}/pods", pod)

    def get(self, ns, name):
        pod = self.pod(ns, name)
        expect(pod is not None, f"pod {ns}/{name} is gone")
        pod.pop("kind", None)
        pod.pop("apiVersion", None)
        return pod

    def writes(self):
        """The PATCH requests the server answered, as (path, status)."""
        reqs = self.admin("requests")["requests"]
        return [(r["path"], r["status"]) for r in reqs if r["method"] == "PATCH"]


def strip_kind(pod):
    pod = dict(pod)
    pod.pop("kind", None)
    pod.pop("apiVersion", None)
    return pod


# =================================================================== cases

@case
def gate_alone(env):
    """A pod gated by topo alone: the gate, the wait reason and the PodSet
    annotation go; the seal, the author's annotations, labels, spec and
    status stay. One line per pod, a summary, exit 0."""
    before = strip_kind(env.add(gated_pod("ml", "train-0")))
    rc, out, err = env.release("--all-namespaces")
    expect(rc == 0, f"exit {rc}\n{out}\n{err}")
    after = env.get("ml", "train-0")
    expect(without_rv(after) == released(before),
           f"released pod:\n{json.dumps(after, indent=1)}\nwant\n"
           f"{json.dumps(released(before), indent=1)}")
    expect(after["spec"]["schedulingGates"] == [], f"gates: {after['spec']}")
    expect(after["metadata"]["annotations"].get(SEAL) == "0123abcd" and
           after["metadata"]["annotations"].get("example.com/owner") == "team-a",
           f"annotations: {after['metadata']['annotations']}")
    lines = out.splitlines()
    expect(lines == ["ml/train-0: released unplaced",
                     "1 pod(s) released unplaced, 0 already released, 0 gone, 0 not released"],
           f"output:\n{out}")
    # Once more: nothing is gated any more, nothing is written.
    env.admin("requests/clear", {})
    rc, out, err = env.release("--all-namespaces")
    expect(rc == 0 and out.splitlines() == [
        "0 pod(s) released unplaced, 0 already released, 0 gone, 0 not released"] and
        env.writes() == [], f"second run: exit {rc}\n{out}\n{env.writes()}")


@case
def foreign_gates(env):
    """topo's gate before, between and after other controllers' gates: only
    topo's goes, the others stay in their order; the output says the pod is
    still gated by them."""
    orders = {"first": [GATE, FOREIGN_GATE, OTHER_GATE],
              "middle": [FOREIGN_GATE, GATE, OTHER_GATE],
              "last": [FOREIGN_GATE, OTHER_GATE, GATE]}
    before = {n: strip_kind(env.add(gated_pod("ml", n, gates=g))) for n, g in orders.items()}
    rc, out, err = env.release("-A")
    expect(rc == 0, f"exit {rc}\n{out}\n{err}")
    for name in orders:
        after = env.get("ml", name)
        gates = [g["name"] for g in after["spec"]["schedulingGates"]]
        expect(gates == [FOREIGN_GATE, OTHER_GATE], f"{name}: gates {gates}")
        expect(without_rv(after) == released(before[name]), f"{name}: {after}")
        expect(f"ml/{name}: released unplaced (still gated by {FOREIGN_GATE}, {OTHER_GATE})"
               in out.splitlines(), f"{name}: output\n{out}")


@case
def untouched(env):
    """Pods without topo's gate are never written: another controller's gate
    alone, no gate, a bound pod, a pod with topo's annotations but no gate
    (its annotations are not the release's business)."""
    pods = [gated_pod("ml", "foreign-only", gates=(FOREIGN_GATE,)),
            gated_pod("ml", "no-gate", gates=()),
            gated_pod("ml", "bound", gates=(), node="node-1"),
            gated_pod("ml", "gated", gates=(GATE,))]
    before = {p["metadata"]["name"]: strip_kind(env.add(p)) for p in pods}
    env.admin("requests/clear", {})
    rc, out, err = env.release("-A")
    expect(rc == 0, f"exit {rc}\n{out}\n{err}")
    for name in ("foreign-only", "no-gate", "bound"):
        expect(env.get("ml", name) == before[name], f"{name} was changed")
    expect(env.writes() == [("/api/v1/namespaces/ml/pods/gated", 200)],
           f"writes: {env.writes()}")
    expect(out.splitlines()[0] == "ml/gated: released unplaced", f"output:\n{out}")


@case
def gate_gone_meanwhile(env):
    """Between the list and the patch another writer (the ungater placing
    the pod) removes the gate: the patch's test fails (422), the pod is read
    again, nothing is left to do, and what the other writer did stays."""
    env.add(gated_pod("ml", "placed", gates=(FOREIGN_GATE, GATE)))
    path = "/api/v1/namespaces/ml/pods/placed"
    env.admin("fault", {"kind": "touch", "count": 1, "method": "PATCH", "path": path,
                        "patch": [{"op": "remove", "path": "/spec/schedulingGates/1"},
                                  {"op": "add", "path": "/spec/nodeSelector",
                                   "value": {"topology.topo.io/rack": "r1"}}]})
    rc, out, err = env.release("-A")
    expect(rc == 0, f"exit {rc}\n{out}\n{err}")
    after = env.get("ml", "placed")
    expect([g["name"] for g in after["spec"]["schedulingGates"]] == [FOREIGN_GATE] and
           after["spec"]["nodeSelector"] == {"topology.topo.io/rack": "r1"} and
           after["metadata"]["annotations"].get(WAIT_REASON) is not None,
           f"after: {after}")
    expect(env.writes() == [(path, 422)], f"writes: {env.writes()}")
    expect(out.splitlines() == [
        "ml/placed: already released",
        "0 pod(s) released unplaced, 1 already released, 0 gone, 0 not released"],
        f"output:\n{out}")


@case
def gates_moved_meanwhile(env):
    """Between the list and the patch another controller removes its own
    gate ahead of topo's (topo's moves from index 1 to 0) and the pod gets an
    annotation: the index test fails, the pod is read again and released
    from where its gate is now, the other writer's changes kept."""
    env.add(gated_pod("ml", "moved", gates=(FOREIGN_GATE, GATE, OTHER_GATE)))
    path = "/api/v1/namespaces/ml/pods/moved"
    env.admin("fault", {"kind": "touch", "count": 1, "method": "PATCH", "path": path,
                        "patch": [{"op": "remove", "path": "/spec/schedulingGates/0"},
                                  {"op": "add", "path": "/metadata/annotations/x.io~1note",
                                   "value": "kept"}]})
    rc, out, err = env.release("-A")
    expect(rc == 0, f"exit {rc}\n{out}\n{err}")
    after = env.get("ml", "moved")
    expect([g["name"] for g in after["spec"]["schedulingGates"]] == [OTHER_GATE],
           f"gates: {after['spec']['schedulingGates']}")
    ann = after["metadata"]["annotations"]
    expect(ann.get("x.io/note") == "kept" and WAIT_REASON not in ann and PODSET not in ann,
           f"annotations: {ann}")
    expect(env.writes() == [(path, 422), (path, 200)], f"writes: {env.writes()}")
    expect(f"ml/moved: released unplaced (still gated by {OTHER_GATE})" in out, f"{out}")


@case
def deleted_meanwhile(env):
    """A pod deleted between the list and the patch is reported gone, not as
    a failure."""
    env.add(gated_pod("ml", "doomed"))
    env.add(gated_pod("ml", "kept"))
    env.admin("fault", {"kind": "status", "code": 404, "count": 1, "method": "PATCH",
                        "path": "/api/v1/namespaces/ml/pods/doomed",
                        "message": 'pods "doomed" not found'})
    rc, out, err = env.release("-A")
    expect(rc == 0 and "ml/doomed: gone" in out.splitlines() and
           "1 pod(s) released unplaced, 0 already released, 1 gone, 0 not released" in out,
           f"exit {rc}\n{out}\n{err}")


@case
def paging(env):
    """620 gated pods among 300 bound ones: listed in pages of 500 (the
    continue token followed), every gated one released."""
    items = [gated_pod("ml", f"p-{i:04d}") for i in range(620)]
    items += [gated_pod("ml", f"bound-{i:03d}", gates=(), node="node-1") for i in range(300)]
    env.write(env.path("pods.json"), json.dumps({"apiVersion": "v1", "kind": "List",
                                                 "items": items}))
    env.admin("load", {"file": env.path("pods.json")})
    env.admin("requests/clear", {})
    rc, out, err = env.release("-A", timeout=240)
    expect(rc == 0, f"exit {rc}\n{out[-2000:]}\n{err}")
    expect(out.splitlines()[-1] ==
           "620 pod(s) released unplaced, 0 already released, 0 gone, 0 not released",
           f"summary: {out.splitlines()[-1]}")
    reqs = env.admin("requests")["requests"]
    lists = [r["path"] for r in reqs if r["method"] == "GET" and "pods?" in r["path"]]
    expect(len(lists) == 2 and sum("continue=" in p for p in lists) == 1 and
           all("limit=500" in p for p in lists), f"lists: {lists}")
    left = [p["metadata"]["name"] for p in env.items("/api/v1/pods")
            if any(g["name"] == GATE for g in p["spec"].get("schedulingGates", []))]
    expect(left == [], f"{len(left)} pods still gated: {left[:5]}")


@case
def dry_run(env):
    """--dry-run names every pod it would release and writes nothing."""
    before = [strip_kind(env.add(gated_pod(ns, n, gates=g)))
              for ns, n, g in (("ml", "a", (GATE,)), ("research", "b", (FOREIGN_GATE, GATE)))]
    env.admin("requests/clear", {})
    rc, out, err = env.release("-A", "--dry-run")
    expect(rc == 0, f"exit {rc}\n{out}\n{err}")
    expect(out.splitlines() == [
        "ml/a: would be released unplaced",
        f"research/b: would be released unplaced (still gated by {FOREIGN_GATE})",
        "2 pod(s) would be released unplaced (dry run: nothing changed)"], f"output:\n{out}")
    expect(env.writes() == [], f"writes: {env.writes()}")
    for p in before:
        md = p["metadata"]
        expect(env.get(md["namespace"], md["name"]) == p, f"{md['name']} changed")


@case
def one_namespace(env):
    """-n NS lists and releases that namespace's pods only."""
    env.add(gated_pod("ml", "a"))
    other = strip_kind(env.add(gated_pod("research", "b")))
    env.admin("requests/clear", {})
    rc, out, err = env.release("-n", "ml")
    expect(rc == 0 and out.splitlines()[0] == "ml/a: released unplaced", f"{rc}\n{out}\n{err}")
    reqs = env.admin("requests")["requests"]
    expect(reqs and all(r["path"].startswith("/api/v1/namespaces/ml/pods") for r in reqs),
           f"requests: {[r['path'] for r in reqs]}")
    expect(env.get("research", "b") == other, "research/b was changed")
    expect(env.get("ml", "a")["spec"]["schedulingGates"] == [], "ml/a still gated")


@case
def in_cluster(env):
    """In a pod (the hook Job): the service account's token, CA and the
    server from KUBERNETES_SERVICE_HOST/PORT, no kubeconfig anywhere."""
    env.add(gated_pod("ml", "a"))
    sa = env.path("sa")
    os.mkdir(sa)
    shutil.copy(env.path("ca.pem"), os.path.join(sa, "ca.crt"))
    env.write(os.path.join(sa, "token"), env.token + "\n")
    env.write(os.path.join(sa, "namespace"), "topo-system")
    e = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(env.port),
         "TOPO_K8S_SA_DIR": sa}
    rc, out, err = env.kubectl_topo("release", "--all-namespaces", env=e)
    expect(rc == 0 and out.splitlines()[0] == "ml/a: released unplaced", f"{rc}\n{out}\n{err}")
    reqs = env.admin("requests")["requests"]
    expect(all(r["auth"].startswith("bearer:" + env.token[:12]) for r in reqs),
           f"requests not made with the service account's token: {reqs}")
    # Without the service-account directory: not in a pod, no kubeconfig.
    os.remove(os.path.join(sa, "token"))
    rc, out, err = env.kubectl_topo("release", "--all-namespaces", env=e)
    expect(rc == 2 and "token" in err and out == "", f"no token: {rc}\n{out}\n{err}")


@case
def not_released(env):
    """A pod the API server refuses to patch (403) is reported with the
    server's message, the others are still released, exit 1."""
    env.add(gated_pod("ml", "a"))
    env.add(gated_pod("ml", "locked"))
    env.add(gated_pod("ml", "z"))
    env.admin("fault", {"kind": "status", "code": 403, "count": 1, "method": "PATCH",
                        "path": "/api/v1/namespaces/ml/pods/locked",
                        "message": "pods \"locked\" is forbidden: denied by policy"})
    rc, out, err = env.release("-A")
    lines = out.splitlines()
    expect(rc == 1, f"exit {rc}\n{out}\n{err}")
    expect(lines[0] == "ml/a: released unplaced" and lines[2] == "ml/z: released unplaced" and
           lines[1].startswith("ml/locked: NOT released: ") and "denied by policy" in lines[1],
           f"output:\n{out}")
    expect(lines[3] == "2 pod(s) released unplaced, 0 already released, 0 gone, 1 not released",
           f"summary: {lines[3]}")
    expect(any(g["name"] == GATE for g in env.get("ml", "locked")["spec"]["schedulingGates"]),
           "the refused pod lost its gate")


@case
def server_errors(env):
    """A 500, 502, 503 (with Retry-After) or 504 on a patch is retried with
    backoff, as a 429 is: the patch guards itself (its test of the gate at
    its index fails once it applied), so sending it again is safe. A pod
    whose server keeps failing is given up after a bounded number of
    attempts, the others released, exit 1."""
    for name in ("e500", "e502", "e503", "e504", "broken"):
        env.add(gated_pod("ml", name))
    base = "/api/v1/namespaces/ml/pods/"
    for name, code, count, extra in (("e500", 500, 2, {}), ("e502", 502, 1, {}),
                                     ("e503", 503, 1, {"retry_after": 1}),
                                     ("e504", 504, 1, {}), ("broken", 503, 100, {})):
        env.admin("fault", dict({"kind": "status", "code": code, "count": count,
                                 "method": "PATCH", "path": base + name}, **extra))
    env.admin("requests/clear", {})
    rc, out, err = env.release("-A", timeout=120)
    lines = out.splitlines()
    expect(rc == 1, f"exit {rc}\n{out}\n{err}")
    for name in ("e500", "e502", "e503", "e504"):
        expect(f"ml/{name}: released unplaced" in lines, f"{name}: output\n{out}")
        expect(env.get("ml", name)["spec"]["schedulingGates"] == [], f"{name} still gated")
    expect(any(x.startswith("ml/broken: NOT released: ") and "503" in x for x in lines),
           f"broken: output\n{out}")
    expect(lines[-1] == "4 pod(s) released unplaced, 0 already released, 0 gone, "
           "1 not released", f"summary: {lines[-1]}")
    reqs = [r for r in env.admin("requests")["requests"] if r["method"] == "PATCH"]
    by = {}
    for r in reqs:
        by.setdefault(r["path"].rsplit("/", 1)[1], []).append(r)
    want = {"e500": [500, 500, 200], "e502": [502, 200], "e503": [503, 200],
            "e504": [504, 200], "broken": [503] * 6}
    for name, statuses in want.items():
        got = [r["status"] for r in by.get(name, [])]
        expect(got == statuses, f"{name}: PATCH statuses {got}, want {statuses}")
    t = [r["t"] for r in by["e503"]]
    expect(t[1] - t[0] >= 0.9, f"e503 resent {t[1] - t[0]:.2f} s after the 503, "
           "before its Retry-After of 1 s")


def load_gated(env, count, namespaces):
    """count gated pods spread over namespaces, loaded at once."""
    items = [gated_pod(f"team-{i % namespaces:03d}", f"p-{i:05d}") for i in range(count)]
    env.write(env.path("pods.json"), json.dumps({"apiVersion": "v1", "kind": "List",
                                                 "items": items}))
    env.admin("load", {"file": env.path("pods.json")})
    return items


@case
def concurrency(env):
    """Patches go out several at once (--concurrency), each answered after
    100 ms here: 240 pods with 16 in flight take a fraction of the 24 s one
    at a time would; the fake sees them overlap. The output stays in the
    list's order. --concurrency 1 sends them one at a time."""
    items = load_gated(env, 240, 12)
    env.admin("fault", {"kind": "delay", "delay_ms": 100, "count": 10000, "method": "PATCH"})
    env.admin("requests/clear", {})
    t0 = time.monotonic()
    rc, out, err = env.release("-A", "--concurrency", "16", timeout=120)
    took = time.monotonic() - t0
    expect(rc == 0, f"exit {rc}\n{out[-2000:]}\n{err}")
    lines = out.splitlines()
    expect(lines[-1] == "240 pod(s) released unplaced, 0 already released, 0 gone, "
           "0 not released", f"summary: {lines[-1]}")
    listed = sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in items)
    expect(lines[:-1] == [f"{ns}/{n}: released unplaced" for ns, n in listed],
           f"not in the list's order:\n{out[:1500]}")
    overlap = env.admin("stats")["in_flight_max"]
    expect(overlap >= 8, f"at most {overlap} requests in flight with --concurrency 16")
    expect(took < 12, f"240 patches of 100 ms took {took:.1f} s with --concurrency 16")
    left = [p["metadata"]["name"] for p in env.items("/api/v1/pods")
            if any(g["name"] == GATE for g in p["spec"].get("schedulingGates", []))]
    expect(left == [], f"{len(left)} pods still gated")
    print(f"    240 pods, 100 ms a patch: {took:.2f} s with --concurrency 16 "
          f"({240 / took:.0f} pods/s), {overlap} in flight at most")
    # One at a time.
    load_gated(env, 20, 2)
    env.admin("requests/clear", {})
    t0 = time.monotonic()
    rc, out, err = env.release("-A", "--concurrency", "1", timeout=120)
    took = time.monotonic() - t0
    expect(rc == 0 and out.splitlines()[-1].startswith("20 pod(s) released"),
           f"--concurrency 1: exit {rc}\n{out}\n{err}")
    overlap = env.admin("stats")["in_flight_max"]
    expect(overlap == 1 and took >= 2.0,
           f"--concurrency 1: {overlap} in flight at most, {took:.1f} s for 20 patches")
    rc, out, err = env.release("-A", "--concurrency", "0")
    expect(rc == 2 and "--concurrency" in err, f"--concurrency 0: exit {rc}\n{err}")


@case
def qps(env):
    """--qps bounds the requests of all the workers together: 60 pods at
    --qps 20 take about 2 s beyond the first second's burst, whatever the
    concurrency."""
    load_gated(env, 60, 3)
    t0 = time.monotonic()
    rc, out, err = env.release("-A", "--qps", "20", "--concurrency", "8", timeout=120)
    took = time.monotonic() - t0
    expect(rc == 0 and out.splitlines()[-1].startswith("60 pod(s) released"),
           f"exit {rc}\n{out}\n{err}")
    expect(took >= 1.5, f"60 patches at --qps 20 took {took:.2f} s")


@case
def many_gates(env):
    """A pod still gated by more gates than the line lists: the rest is
    counted ("..., and N more"), not cut silently."""
    gates = [f"example.com/quota-check-{i:03d}" for i in range(40)]
    env.add(gated_pod("ml", "crowded", gates=[GATE] + gates))
    rc, out, err = env.release("-A", "--dry-run")
    line = out.splitlines()[0]
    expect(rc == 0 and line.startswith("ml/crowded: would be released unplaced (still gated by "
                                       "example.com/quota-check-000, "), f"{rc}\n{out}\n{err}")
    shown = line.split("(still gated by ", 1)[1].split(", and ")[0].split(", ")
    more = int(line.rsplit(", and ", 1)[1].split(" more)")[0]) if ", and " in line else 0
    expect(more > 0 and line.endswith(" more)") and shown == gates[:len(shown)] and
           len(shown) + more == len(gates), f"line: {line}")
    rc, out, err = env.release("-A")
    expect(rc == 0 and out.splitlines()[0].startswith("ml/crowded: released unplaced (still ")
           and out.splitlines()[0].endswith(f", and {more} more)"), f"{rc}\n{out}\n{err}")


@case
def bad_input(env):
    """Neither or both of -n and -A, an unknown flag, an API server that
    does not answer: a message on stderr and exit 2, nothing on stdout."""
    for args in ((), ("-n", "ml", "-A"), ("-A", "--bogus")):
        rc, out, err = env.release(*args)
        expect(rc == 2 and out == "" and err.startswith("kubectl topo release: "),
               f"{args}: exit {rc}\n{out}\n{err}")
    rc, out, err = env.kubectl_topo("release", "--help")
    expect(rc == 0 and "UNPLACED" in out and "--all-namespaces" in out and "--dry-run" in out,
           f"--help: {out}")
    env.admin("fault", {"kind": "status", "code": 403, "count": 1, "method": "GET",
                        "message": "pods is forbidden: cannot list resource \"pods\""})
    rc, out, err = env.release("-A")
    expect(rc == 2 and out == "" and "listing pods" in err and "forbidden" in err,
           f"list refused: exit {rc}\n{out}\n{err}")


if __name__ == "__main__":
    sys.exit(run_cases(CASES, Env, bin_flag="--kubectl-topo"))
