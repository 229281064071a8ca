"""The chart's side of packing (docs/webhook.md "Packing pods without
topology requests"): the webhook config's packing block, and which pods
the rendered matchConditions send to the webhook, evaluated with a real
CEL implementation (cel_eval.mjs) over a table of Pod objects."""

import json
import os
import subprocess

import yaml

from objects import TOPOLOGY_ANNOTATIONS, WEBHOOK

HERE = os.path.dirname(os.path.abspath(__file__))

# The condition with packing off, byte for byte: the seven PodSet
# annotations the webhook classifies a pod by (objects.TOPOLOGY_ANNOTATIONS,
# from the C sources, checks the list; this, that nothing else changes).
TOPOLOGY_ONLY = {
    "name": "has-topology-request",
    "expression": (
        "has(object.metadata.annotations) && object.metadata.annotations.exists(k, "
        "k in ['kueue.x-k8s.io/podset-required-topology',\n"
        "      'kueue.x-k8s.io/podset-preferred-topology',\n"
        "      'kueue.x-k8s.io/podset-unconstrained-topology',\n"
        "      'kueue.x-k8s.io/podset-slice-required-topology',\n"
        "      'kueue.x-k8s.io/podset-slice-size',\n"
        "      'kueue.x-k8s.io/podset-slice-required-topology-constraints',\n"
        "      'kueue.x-k8s.io/podset-group-name'])"),
}
PACKED_NAME = "has-topology-request-or-packed-resource"


def container(name, requests=None, limits=None, resources=True):
    c = {"name": name, "image": "busybox"}
    if resources:
        c["resources"] = {}
        if requests is not None:
            c["resources"]["requests"] = requests
        if limits is not None:
            c["resources"]["limits"] = limits
    return c


def pod(containers, init=None, annotations=None, labels=None, overhead=None):
    meta = {"name": "p", "namespace": "team-a"}
    if annotations is not None:
        meta["annotations"] = annotations
    if labels is not None:
        meta["labels"] = labels
    spec = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    if overhead is not None:
        spec["overhead"] = overhead
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


GPU = {"nvidia.com/gpu": "2"}
# name -> (the Pod, has a Kueue PodSet annotation, the resources its
# containers or init containers request or limit, or its overhead names).
# Whether it must match
# follows from these two facts and the render's values, never from the
# expression.
PODS = {
    "gpu via requests": (pod([container("c", requests=dict(GPU, cpu="4"))]), False,
                         {"nvidia.com/gpu", "cpu"}),
    "gpu via limits only": (pod([container("c", limits=GPU)]), False, {"nvidia.com/gpu"}),
    "gpu in the second container": (pod([container("a", requests={"cpu": "1"}),
                                         container("b", requests=GPU, limits=GPU)]),
                                    False, {"nvidia.com/gpu", "cpu"}),
    "gpu via an init container only": (pod([container("c", requests={"cpu": "1"})],
                                           init=[container("i", limits=GPU)]),
                                       False, {"nvidia.com/gpu", "cpu"}),
    "amd gpu": (pod([container("c", requests={"amd.com/gpu": "1"})]), False, {"amd.com/gpu"}),
    "cpu only": (pod([container("c", requests={"cpu": "1", "memory": "1Gi"},
                                limits={"memory": "1Gi"})]), False, {"cpu", "memory"}),
    "cpu only, annotations of its own": (
        pod([container("c", requests={"cpu": "1"})],
            annotations={"example.com/owner": "team-a", "nvidia.com/gpu": "1"}),
        False, {"cpu"}),
    "topology annotation, no gpu": (
        pod([container("c", requests={"cpu": "1"})],
            annotations={"kueue.x-k8s.io/podset-required-topology": "topology.topo.io/rack"}),
        True, {"cpu"}),
    "topology annotation and gpu": (
        pod([container("c", requests=GPU)],
            annotations={"kueue.x-k8s.io/podset-preferred-topology": "topology.topo.io/rack"}),
        True, {"nvidia.com/gpu"}),
    # Any of the seven PodSet annotations makes a pod topo's (placed, or
    # refused with Kueue's message when invalid), packing on or off.
    "group name only, and gpu": (
        pod([container("c", requests=GPU)],
            annotations={"kueue.x-k8s.io/podset-group-name": "g1"}),
        True, {"nvidia.com/gpu"}),
    "group name only, no gpu": (
        pod([container("c", requests={"cpu": "1"})],
            annotations={"kueue.x-k8s.io/podset-group-name": "g1"}),
        True, {"cpu"}),
    "slice constraints only (a TAS pod to Kueue)": (
        pod([container("c", requests={"cpu": "1"})],
            annotations={"kueue.x-k8s.io/podset-slice-required-topology-constraints":
                         '[{"topology": "topology.topo.io/rack", "size": 2}]'}),
        True, {"cpu"}),
    "slice size only": (
        pod([container("c", requests={"cpu": "1"})],
            annotations={"kueue.x-k8s.io/podset-slice-size": "2"}),
        True, {"cpu"}),
    # The webhook counts spec.overhead in a pod's requests (as the
    # scheduler does): a RuntimeClass's overhead naming a packed resource.
    "gpu in the overhead only": (
        pod([container("c", requests={"cpu": "1"})], overhead={"nvidia.com/gpu": "1"}),
        False, {"nvidia.com/gpu", "cpu"}),
    "cpu overhead only": (
        pod([container("c", resources=False)], overhead={"cpu": "250m"}), False, {"cpu"}),
    "no resources at all": (pod([container("c", resources=False)]), False, set()),
    "no annotations, no labels": (pod([container("c", requests={"cpu": "1"})]), False,
                                  {"cpu"}),
    "empty resources {}": (pod([container("c")]), False, set()),
    "empty requests and limits": (pod([container("c", requests={}, limits={})]), False, set()),
    "empty init container list": (pod([container("c")], init=[]), False, set()),
    # Sent: the expression sees keys, not quantities; the webhook passes a
    # request of 0 unchanged.
    "gpu requested as 0": (pod([container("c", requests={"nvidia.com/gpu": "0"})]), False,
                           {"nvidia.com/gpu"}),
}
for name, (_, annotated, _) in PODS.items():
    assert annotated == any(a in (PODS[name][0]["metadata"].get("annotations") or {})
                            for a in TOPOLOGY_ANNOTATIONS), name


def want(values, name):
    """Whether the pod must reach the webhook under these values."""
    _, annotated, requested = PODS[name]
    p = values["webhook"]["packing"]
    return annotated or bool(p["enabled"] and requested & set(p["resources"]))


def webhook_config(r):
    cm = r.get("ConfigMap", WEBHOOK)
    return yaml.safe_load(cm["data"]["config.yaml"]) if cm else None


def check_config(r):
    """The packing block as the webhook parses it; none at all when off."""
    cfg = webhook_config(r)
    if cfg is None:
        return ["no ConfigMap %s" % WEBHOOK]
    p = r.values["webhook"]["packing"]
    if not p["enabled"]:
        return ["packing off, yet the config has %r" % cfg["packing"]] if "packing" in cfg \
            else []
    exp = {"enabled": True, "resources": p["resources"], "mode": p["mode"]}
    if p["level"]:
        exp["level"] = p["level"]
    return [] if cfg.get("packing") == exp else \
        ["config packing %r, want %r" % (cfg.get("packing"), exp)]


def condition(r):
    m = r.get("MutatingWebhookConfiguration", WEBHOOK)
    conds = (m or {}).get("webhooks", [{}])[0].get("matchConditions")
    return conds


def check_condition(r):
    """One condition; with packing off exactly the one before packing."""
    v = r.values["webhook"]
    conds = condition(r)
    if not v["matchConditions"]:
        return ["matchConditions %r with webhook.matchConditions false" % conds] if conds \
            else []
    if not conds or len(conds) != 1:
        return ["matchConditions %r: want one condition (they are ANDed)" % conds]
    if not v["packing"]["enabled"]:
        return [] if conds[0] == TOPOLOGY_ONLY else \
            ["packing off, matchConditions changed: %r, want %r" % (conds, [TOPOLOGY_ONLY])]
    return [] if conds[0]["name"] == PACKED_NAME else \
        ["packing on: condition %r, want %r" % (conds[0]["name"], PACKED_NAME)]


def check_cel(renders, node_modules, work):
    """Each render's expression evaluated over PODS: [(check name, problems)]."""
    cases = []
    for r in renders:
        conds = condition(r)
        if conds:
            cases.append({"source": r.name, "expression": conds[0]["expression"],
                          "pods": {n: p for n, (p, _, _) in PODS.items()}})
    path = os.path.join(work, "cel-cases.json")
    with open(path, "w") as f:
        json.dump(cases, f)
    p = subprocess.run(["node", os.path.join(HERE, "cel_eval.mjs"), node_modules, path],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return [("matchConditions evaluated (cel-js)", [p.stdout + p.stderr])]
    got = {}
    for x in json.loads(p.stdout):
        got.setdefault(x["source"], {})[x["pod"]] = x["result"]
    out = []
    for r in renders:
        if r.name not in got:
            continue
        problems = []
        for name in PODS:
            w, g = want(r.values, name), got[r.name].get(name)
            if g is not w:
                problems.append("%s: %r, want %r" % (name, g, w))
        out.append(("%s: matchConditions over %d pods (cel-js)" % (r.name, len(PODS)), problems))
    return out
