#!/usr/bin/env python3
"""Packing pods without topology requests (issue 32) end to end: topo-webhook
in daemon mode against fake_apiserver.py, with --config turning packing on.

  webhook_packing_e2e.py --webhook build/webhook/topo-webhook

16 GPU nodes in 2 racks of 8 (block dc1-sp01); 4 running 8-GPU pods fill
half of rack r01, rack r02 is empty. A 2-GPU notebook pod (no Kueue
annotation) in namespace team-a is answered with one preferred node-affinity
term, weight 100, toward block dc1-sp01 / rack r01 (the empty rack is never
proposed); its patch applies (python3-jsonpatch) and keeps the pod's own
fields. The same pod in a namespace labelled topology.topo.io/packing=false
passes unchanged, and so does a CPU-only pod (not counted). /metrics:
topo_webhook_packing_pods_total packed 1, passed{reason="namespace"} 1. The
debug log has one line for the packed pod.
"""
import json
import sys

from harness import check, check_within
from harness.pods import BLOCK_LABEL, RACK_LABEL, apply_patch, make_pod, ops_of
from harness.webhook import check_prometheus, main_against_api, metric, start_daemon

R01 = "dc1-sp01-lf01-r01"
BLOCK = "dc1-sp01"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
CONFIG = """topologies:
- name: gpus
  levels: [topology.topo.io/block, topology.topo.io/rack, kubernetes.io/hostname]
packing:
  enabled: true
  resources: [nvidia.com/gpu]
"""


def notebook(ns, gpus="2"):
    pod = make_pod(ns=ns, name="nb-0", requests={"nvidia.com/gpu": gpus, "cpu": "2"},
                   limits={"nvidia.com/gpu": gpus})
    pod["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists",
                                   "effect": "NoSchedule"}]
    return pod


def create_ns(api, name, labels=None):
    md = {"name": name}
    if labels:
        md["labels"] = labels
    api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": md})


def run(binary, api, ws):
    api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
    api.admin("load", {"resource": "pods", "count": 4, "gpus": 8, "namespace": "ml"})
    racks = {n["metadata"]["name"]: n["metadata"]["labels"][RACK_LABEL]
             for n in api.items("/api/v1/nodes")}
    used = {p["spec"]["nodeName"] for p in api.items("/api/v1/namespaces/ml/pods")}
    check({racks[n] for n in used} == {R01}, "the running pods are on rack r01: %r" % used)
    create_ns(api, "team-a")
    create_ns(api, "opted", {"topology.topo.io/packing": "false"})
    cfg = api.path("packing.yaml")
    with open(cfg, "w") as fh:
        fh.write(CONFIG)
    w = start_daemon(api, binary, "packing", ["--config", cfg, "--log-format", "text",
                                              "--verbosity", "debug"])
    w.name = "packing"
    ws.append(w)

    # Steered: one term toward the half-used rack, coarsest level first.
    pod = notebook("team-a")
    resp = w.admit("nb-a", pod)
    check(resp.get("allowed") is True, "team-a: allowed: %r" % resp)
    ops = ops_of(resp)
    check(len(ops) == 1 and ops[0]["op"] == "add" and ops[0]["path"] == "/spec/affinity",
          "team-a: one add of spec.affinity: %r" % ops)
    out = apply_patch(resp, pod)
    terms = out["spec"].get("affinity", {}).get("nodeAffinity", {}).get(PREF)
    want = [{"weight": 100, "preference": {"matchExpressions": [
        {"key": BLOCK_LABEL, "operator": "In", "values": [BLOCK]},
        {"key": RACK_LABEL, "operator": "In", "values": [R01]}]}}]
    check(terms == want, "team-a: a preferred term for rack r01 only: %s" % json.dumps(terms))
    check(out["spec"]["tolerations"] == pod["spec"]["tolerations"]
          and out["spec"]["containers"] == pod["spec"]["containers"],
          "team-a: the pod's own fields kept")
    check("nodeSelector" not in out["spec"], "team-a: no nodeSelector in preferred mode")

    # Opted out: unchanged. CPU only: unchanged and not counted.
    resp = w.admit("nb-opted", notebook("opted"))
    check(resp.get("allowed") is True and not ops_of(resp),
          "opted-out namespace: passed unchanged: %r" % resp)
    cpu = make_pod(ns="team-a", name="cpu-0", requests={"cpu": "4"})
    resp = w.admit("cpu-a", cpu)
    check(resp.get("allowed") is True and not ops_of(resp), "cpu pod: unchanged: %r" % resp)

    text = w.metrics_text()
    check(check_prometheus(text), "/metrics is valid Prometheus text")
    name = "topo_webhook_packing_pods_total"
    check(metric(text, name, 'outcome="packed"') == 1, "packed 1:\n%s" % text)
    check(metric(text, name, 'reason="namespace"') == 1, "passed namespace 1")
    check(metric(text, name, 'outcome="passed"') == 1, "passed 1 in all (the cpu pod uncounted)")
    check_within("one debug line for the packed pod",
                 lambda: w.log().count("packing: pod steered") == 1 or None, 5)
    log = w.log()
    line = next((x for x in log.splitlines() if "packing: pod steered" in x), "")
    check("team-a/nb-0" in line and "nvidia.com/gpu" in line and R01 in line,
          "the line names the pod, the resource and the pick: %r" % line)


if __name__ == "__main__":
    sys.exit(main_against_api("webhook_packing_e2e", run))
