#!/usr/bin/env python3
"""Process-level tests of topo-webhook's ResourceQuota view (webhook/quota.c)
through test/e2e/quota_driver.c, against fake_apiserver.py over TLS.

The lookups (wh_quota_lookup, as the admission handler calls it) must
follow the quotas: the first list (fixtures/resourcequotas, as kubectl
prints them), a quota added, its status written by the quota controller
(played here), changed, deleted; a watch ended by compaction (relist) and
changes only a relist can see; entries with bad quantities ignored with one
warning; topo-webhook's readiness and metrics with the view, and a PodSet
over its namespace's quota room gated through topo-webhook (the webhook_*
cases need TOPO_WEBHOOK, the binary, in the environment).

usage: quota_e2e.py --driver BIN (--list | --case NAME | --all) [--keep]
"""

import os
import random
import sys
import time

from harness import expect, registry, run_cases
from harness.fakeapi import FakeApiEnv, expect_relist
from harness.linedriver import LineDriver
from harness.pods import (HOST_LABEL, WAIT_GATE, WAIT_REASON, apply_patch, gates_of, job_pod,
                          node_selector)
from harness.webhook import Webhook, start_daemon

CASES, case = registry()
SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIXTURE = os.path.join(SOURCE, "fixtures", "resourcequotas", "kubectl-resourcequotas.json")
NAMESPACES = ("team-a", "team-b", "team-c", "team-d")
GI = 1 << 30

# The fixture's room per namespace (lib/codec/resourcequota.h): team-a is
# the least of "compute" and "gpu-cap"; team-b's quota has no status yet
# (spec.hard, nothing used); team-c is over its GPU quota.
FIXTURE_ROOM = {
    "team-a": {"cpu": 64000 - 12500, "memory": (512 - 96) * GI, "nvidia.com/gpu": 4,
               "pods": 33},
    "team-b": {"cpu": 8000, "memory": 32 * GI, "pods": 10},
    "team-c": {"hugepages-2Mi": 512 << 20, "nvidia.com/gpu": -2},
    "team-d": None,
}


class Env(FakeApiEnv):
    PREFIX = "topo-quota-e2e-"

    def __init__(self, driver, keep):
        super().__init__(keep)
        self.bin = driver
        self.driver = None

    def server_args(self):
        return ["--token-file", self.path("token"), "--bookmark-interval", "60"]

    # ------------------------------------------------------------ quotas

    def create_quota(self, ns, name, hard):
        status, out = self.request("POST", f"/api/v1/namespaces/{ns}/resourcequotas", {
            "apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": name, "namespace": ns}, "spec": {"hard": hard}})
        expect(status == 201, f"create quota {ns}/{name}: {status} {out}")

    def set_status(self, ns, name, hard, used):
        """What the quota controller does: status.hard and status.used, whole
        (a merge patch would keep the keys they no longer have)."""
        status, out = self.request(
            "PATCH", f"/api/v1/namespaces/{ns}/resourcequotas/{name}/status",
            [{"op": "add", "path": "/status", "value": {"hard": hard, "used": used}}],
            ctype="application/json-patch+json")
        expect(status == 200, f"status of quota {ns}/{name}: {status} {out}")

    def delete_quota(self, ns, name):
        status, out = self.request("DELETE", f"/api/v1/namespaces/{ns}/resourcequotas/{name}")
        expect(status == 200, f"delete quota {ns}/{name}: {status} {out}")

    def verbs(self):
        return self.admin("stats").get("verbs", {}).get("resourcequotas", {})

    # ------------------------------------------------------------ the driver

    def start_driver(self):
        self.driver = LineDriver([self.bin, "--kubeconfig", self.kubeconfig])

    def ask(self):
        return self.driver.ask(NAMESPACES)

    def wait_for(self, want, what):
        """Polls the driver until its lookups equal want (ns -> room or None)."""
        got = self.driver.wait_for(NAMESPACES, lambda g: g["synced"] and g["room"] == want, what)
        expect(got["namespaces"] == sum(v is not None for v in want.values()),
               f"{what}: {got['namespaces']} namespaces for {want}")
        return got

    def warnings(self, text, at_least=0):
        return self.driver.wait_warnings(at_least, text)

    def close(self):
        if self.driver is not None:
            self.driver.close()
        super().close()


def start(env):
    env.admin("load", {"file": FIXTURE})
    env.start_driver()
    env.wait_for(dict(FIXTURE_ROOM), "first list")
    verbs = env.verbs()
    expect(verbs.get("LIST", 0) >= 1, f"verbs {verbs}")
    return dict(FIXTURE_ROOM)


@case
def added_changed_deleted(env):
    """Watch events: a quota added (spec only, then its status), changed by
    the controller (MODIFIED), one of two quotas of a namespace deleted (the
    other's room is left), the last one deleted (no quota: null)."""
    want = start(env)
    deadline = time.monotonic() + 10
    while env.verbs().get("WATCH", 0) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)

    # Added: spec.hard counts until the controller computes the status.
    env.create_quota("team-d", "gpus", {"requests.nvidia.com/gpu": "16", "limits.cpu": "64",
                                        "count/pods": "20"})
    want["team-d"] = {"nvidia.com/gpu": 16, "pods": 20}
    env.wait_for(want, "quota added")
    env.set_status("team-d", "gpus", {"requests.nvidia.com/gpu": "16", "limits.cpu": "64",
                                      "count/pods": "20"},
                   {"requests.nvidia.com/gpu": "6", "limits.cpu": "12", "count/pods": "3"})
    want["team-d"] = {"nvidia.com/gpu": 10, "pods": 17}
    env.wait_for(want, "status computed")

    # Changed: pods created in team-a use more (status.used), and the
    # admin raises gpu-cap (status.hard follows spec.hard).
    env.set_status("team-a", "compute",
                   {"count/pods": "40", "limits.cpu": "128", "pods": "50", "requests.cpu": "64",
                    "requests.memory": "512Gi", "requests.nvidia.com/gpu": "16"},
                   {"count/pods": "9", "limits.cpu": "30", "pods": "9", "requests.cpu": "20",
                    "requests.memory": "128Gi", "requests.nvidia.com/gpu": "10"})
    env.set_status("team-a", "gpu-cap", {"count/pods": "100", "requests.nvidia.com/gpu": "32"},
                   {"count/pods": "9", "requests.nvidia.com/gpu": "10"})
    want["team-a"] = {"cpu": 44000, "memory": 384 * GI, "nvidia.com/gpu": 6, "pods": 31}
    env.wait_for(want, "quotas changed")

    # Deleted: team-a keeps compute's room; team-c has no quota left.
    env.delete_quota("team-a", "compute")
    want["team-a"] = {"nvidia.com/gpu": 22, "pods": 91}
    env.wait_for(want, "one of two quotas deleted")
    env.delete_quota("team-c", "over")
    want["team-c"] = None
    env.wait_for(want, "last quota deleted")
    got = env.ask()
    expect(got["quotas"] == 3, f"quotas {got}")
    expect(not env.warnings("ResourceQuota"), f"warnings: {env.warnings('ResourceQuota')}")
    env.driver.quit()


@case
def relist(env):
    """A watch ended by compaction (in-stream 410) relists; changes made
    while the watch cannot reconnect, then compacted away, are seen only by
    a relist, which drops the deleted quotas."""
    want = start(env)
    lists = env.verbs().get("LIST", 0)
    env.admin("compact", {"expire_watches": True})
    expect_relist(env.verbs, lists)
    env.wait_for(want, "after the relist")

    lists = env.verbs().get("LIST", 0)
    env.admin("fault", {"kind": "status", "code": 500, "count": 100000, "watch": True,
                        "path": "/api/v1/resourcequotas"})
    env.admin("watches/close", {"mode": "close"})
    env.delete_quota("team-a", "gpu-cap")
    env.delete_quota("team-c", "over")
    env.create_quota("team-d", "small", {"pods": "2"})
    env.admin("compact", {})
    time.sleep(0.5)
    got = env.ask()
    expect(got["room"] == want, f"view changed while the watch was down: {got}")
    env.admin("faults/clear", {})
    want["team-a"] = {"cpu": 51500, "memory": 416 * GI, "nvidia.com/gpu": 8, "pods": 33}
    want["team-c"] = None
    want["team-d"] = {"pods": 2}
    env.wait_for(want, "relist after the watch came back")
    expect(env.verbs().get("LIST", 0) > lists, "the changes were not seen by a relist")
    expect(any("retrying in" in ln for ln in env.driver.stderr_lines),
           "the failed watches were not logged with a backoff")
    env.driver.quit()


@case
def bad_entries(env):
    """Entries the decoder cannot read are ignored (they limit nothing),
    named in one warning that is not repeated while they stay the same;
    the quota's other entries count."""
    want = start(env)
    env.create_quota("team-d", "odd", {"requests.cpu": "2", "pods": "4", "memory": "1Gi"})
    want["team-d"] = {"cpu": 2000, "memory": GI, "pods": 4}
    env.wait_for(want, "quota added")
    env.set_status("team-d", "odd", {"requests.cpu": "lots", "pods": "4", "memory": "1Gi"},
                   {"requests.cpu": "1", "pods": "1", "memory": "ten"})
    want["team-d"] = {"pods": 3}
    env.wait_for(want, "bad entries ignored")
    # The controller writes the status again (same problems): no new warning.
    env.set_status("team-d", "odd", {"requests.cpu": "lots", "pods": "4", "memory": "1Gi"},
                   {"requests.cpu": "1", "pods": "2", "memory": "ten"})
    want["team-d"] = {"pods": 2}
    env.wait_for(want, "status changed")
    warned = env.warnings("team-d/odd", at_least=1)
    expect(len(warned) == 1, f"one warning for team-d/odd, got {warned}")
    expect("status.hard[requests.cpu]" in warned[0] and "status.used[memory]" in warned[0],
           f"the warning does not name the fields: {warned[0]}")
    # Fixed: counted, and a new problem later is warned about again.
    env.set_status("team-d", "odd", {"requests.cpu": "2", "pods": "4", "memory": "1Gi"},
                   {"requests.cpu": "1", "pods": "2", "memory": "0"})
    want["team-d"] = {"cpu": 1000, "memory": GI, "pods": 2}
    env.wait_for(want, "fixed")
    env.set_status("team-d", "odd", {"requests.cpu": "2", "pods": "4", "memory": "1Gi"},
                   {"requests.cpu": "1", "pods": [], "memory": "0"})
    want["team-d"] = {"cpu": 1000, "memory": GI}
    env.wait_for(want, "broken again")
    warned = env.warnings("team-d/odd", at_least=2)
    expect(len(warned) == 2, f"warnings {warned}")
    env.driver.quit()


CHURN_NAMES = {"pods": "pods", "count/pods": "pods", "requests.cpu": "cpu",
               "cpu": "cpu", "requests.nvidia.com/gpu": "nvidia.com/gpu", "limits.cpu": None}


def model_room(model, namespaces):
    """What the lookups must say for quotas {(ns, name): (hard, used)} of
    whole numbers: the least hard - used per pod resource (cpu in millicores)."""
    out = {ns: None for ns in namespaces}
    for (ns, _), (hard, used) in model.items():
        room = out[ns] = out[ns] or {}
        for k, v in hard.items():
            res = CHURN_NAMES[k]
            if res is None:
                continue
            unit = 1000 if res == "cpu" else 1
            r = (int(v) - int(used.get(k, "0"))) * unit
            room[res] = min(room.get(res, r), r)
    return out


@case
def random_churn(env):
    """250 random creations, status updates and deletions of 20 quotas in 10
    namespaces (quotas and namespaces leave the middle of the view's arrays
    and come back) against a model, checked on the way and at the end, then
    after a relist."""
    rng = random.Random(20261201)
    namespaces = [f"ns-{i}" for i in range(10)]
    keys = [(namespaces[i % 10], f"q{i}") for i in range(20)]
    model = {}
    env.start_driver()

    def check(what):
        want = model_room(model, namespaces)
        got = env.driver.wait_for(namespaces, lambda g: g["synced"] and g["room"] == want, what)
        expect(got["quotas"] == len(model) and
               got["namespaces"] == sum(v is not None for v in want.values()),
               f"{what}: {got['quotas']} quotas, {got['namespaces']} namespaces for {model}")

    check("empty")
    for step in range(250):
        key = rng.choice(keys)
        if key in model and rng.random() < 0.4:
            env.delete_quota(*key)
            del model[key]
        else:
            hard = {k: str(rng.randint(0, 50)) for k in CHURN_NAMES if rng.random() < 0.6}
            used = {k: str(rng.randint(0, 60)) for k in hard if rng.random() < 0.8}
            if key not in model:
                env.create_quota(*key, hard)
            env.set_status(*key, hard, used)
            model[key] = (hard, used)
        if step % 50 == 49:
            check(f"after {step + 1} changes")
    lists = env.verbs().get("LIST", 0)
    env.admin("compact", {"expire_watches": True})
    expect_relist(env.verbs, lists)
    check("after a relist")
    env.driver.quit()


class QuotaWebhook(Webhook):
    THREADS = 2
    STOP_TIMEOUT = 15


def start_webhook(env, binary, name, extra=()):
    """topo-webhook in daemon mode against env, not waited for."""
    return start_daemon(env, binary, name, ["--levels", HOST_LABEL, "--leader-elect", "false",
                                            "--log-format", "text", *extra],
                        cls=QuotaWebhook, wait=False)


def stop_webhook(w):
    text = w.stop()
    expect(w.proc.returncode == 0, f"topo-webhook exit {w.proc.returncode}: {text[-2000:]}")
    return text


@case
def webhook_ready(env):
    """topo-webhook in daemon mode (--resource-quotas defaults to true):
    /readyz stays 503 while the ResourceQuotas cannot be listed and turns 200
    once they are; /metrics says synced and how many namespaces have quotas.
    With --resource-quotas false it neither lists them nor waits for them."""
    binary = os.environ.get("TOPO_WEBHOOK")
    expect(binary, "TOPO_WEBHOOK (the topo-webhook binary) is not set")
    env.admin("load", {"file": FIXTURE})
    env.admin("load", {"resource": "nodes", "count": 2, "gpus": 8})
    env.admin("fault", {"kind": "status", "code": 500, "count": 100000,
                        "path": "/api/v1/resourcequotas"})
    w = start_webhook(env, binary, "quotas")
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        expect(not w.ready(), "ready before the ResourceQuotas were listed")
        time.sleep(0.1)
    text = w.log()
    expect("GET /api/v1/resourcequotas?limit=500: status 500" in text,
           f"no failed list of resourcequotas in the log: {text[-2000:]}")
    env.admin("faults/clear", {})
    expect(w.wait_ready(15), "not ready once the ResourceQuotas could be listed")
    m = w.metrics()
    expect(m.get("topo_webhook_resource_quota_synced") == 1 and
           m.get("topo_webhook_resource_quota_namespaces") == 3,
           f"metrics: { {k: v for k, v in m.items() if 'quota' in k} }")
    text = stop_webhook(w)
    expect("resource-quotas: synced: 4 ResourceQuotas in 3 namespaces" in text,
           f"no sync line in the log: {text[-2000:]}")

    env.admin("fault", {"kind": "status", "code": 500, "count": 100000,
                        "path": "/api/v1/resourcequotas"})
    calls = sum(env.verbs().values())
    w = start_webhook(env, binary, "no-quotas", ["--resource-quotas", "false"])
    expect(w.wait_ready(15), "--resource-quotas false: waits for ResourceQuotas")
    m = w.metrics()
    expect("topo_webhook_resource_quota_synced" not in m, "quota metrics without quotas")
    expect(sum(env.verbs().values()) == calls, f"resourcequotas requested: {env.verbs()}")
    stop_webhook(w)


def admit(w, ns, job, size, gpus):
    """The first pod of a Job's PodSet (size pods of gpus GPUs) through
    topo-webhook: (gated, wait-reason, nodeSelector)."""
    pod = job_pod(job, size, gpus=gpus, cpu="1", topology=("required", HOST_LABEL), ns=ns,
                  owned=False)
    out = apply_patch(w.admit("rq-" + job, pod), pod)
    return (WAIT_GATE in gates_of(out), out["metadata"]["annotations"].get(WAIT_REASON, ""),
            node_selector(out))


@case
def webhook_quota_room(env):
    """A PodSet's reserved room counted against its namespace's
    ResourceQuota through topo-webhook: team-a's quotas leave 4 GPUs, so a
    PodSet of 2 x 4 GPUs waits (gated, the quota named in the reason) while
    one of 1 x 4 fits; team-d has no quota and places 2 x 4; after team-a's
    quota grows (a watch event), the 2 x 4 PodSet fits."""
    binary = os.environ.get("TOPO_WEBHOOK")
    expect(binary, "TOPO_WEBHOOK (the topo-webhook binary) is not set")
    env.admin("load", {"file": FIXTURE})
    env.admin("load", {"resource": "nodes", "count": 3, "gpus": 8})
    w = start_webhook(env, binary, "room")
    expect(w.wait_ready(15), "not ready")
    gated, reason, _ = admit(w, "team-a", "wide", 2, 4)
    expect(gated and "namespace team-a: its ResourceQuota leaves 4 nvidia.com/gpu, the "
           "PodSet's 2 pods need 8" in reason, f"over the quota: gated {gated}, {reason!r}")
    gated, reason, sel = admit(w, "team-a", "one", 1, 4)
    expect(not gated and "kubernetes.io/hostname" in sel, f"within the quota: {reason!r}")
    gated, reason, sel = admit(w, "team-d", "free", 2, 4)
    expect(not gated and "kubernetes.io/hostname" in sel, f"no quota: {reason!r}")
    env.set_status("team-a", "gpu-cap", {"requests.nvidia.com/gpu": "64"},
                   {"requests.nvidia.com/gpu": "0"})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        gated, reason, sel = admit(w, "team-a", "wide-%d" % int(time.monotonic() * 1000),
                                   2, 4)
        if not gated:
            break
        time.sleep(0.2)
    expect(not gated and "kubernetes.io/hostname" in sel,
           f"after the quota grew: still gated: {reason!r}")
    stop_webhook(w)


def on_failure(env):
    if env.driver is not None:
        print("--- driver stderr ---\n" + env.driver.stderr_tail())


def main():
    return run_cases(CASES, Env, on_failure=on_failure)


if __name__ == "__main__":
    sys.exit(main())
