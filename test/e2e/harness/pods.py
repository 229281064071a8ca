"""Pods as the webhook drivers post them, AdmissionReviews around them, and
the answers read back: the patch applied with python3-jsonpatch, the gates."""

import base64
import copy
import json

from harness import expect

NS = "team-a"
RACK_LABEL = "topology.topo.io/rack"
BLOCK_LABEL = "topology.topo.io/block"
HOST_LABEL = "kubernetes.io/hostname"
WAIT_GATE = "topology.topo.io/wait"
WAIT_REASON = "topology.topo.io/wait-reason"
PODSET = "topology.topo.io/podset"
ASSIGNMENT = "topology.topo.io/assignment"
PODSET_SIZE = "topology.topo.io/podset-size"
# The levels of fixtures/clusters/hgx-h100.yaml (--inventory), and those of
# the nodes fake_apiserver.py generates (/_fake/load).
FIXTURE_LEVELS = ("topology.topo.io/datacenter,topology.topo.io/spine,topology.topo.io/leaf,"
                  "topology.topo.io/rack,kubernetes.io/hostname")
FAKE_NODE_LEVELS = "topology.topo.io/block,topology.topo.io/rack,kubernetes.io/hostname"


def make_pod(ns=NS, name=None, generate_name=None, labels=None, annotations=None, requests=None,
        limits=None, restart_policy=None, owner=None):
    """A pod of one container; owner (a Job's name) adds the Job's
    ownerReference (uid "uid-" + owner)."""
    md = {}
    if name is not None:
        md["name"] = name
    if generate_name is not None:
        md["generateName"] = generate_name
    md["namespace"] = ns
    if labels is not None:
        md["labels"] = labels
    if annotations is not None:
        md["annotations"] = annotations
    if owner is not None:
        md["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": owner,
                                  "uid": "uid-" + owner, "controller": True}]
    container = {"name": "w", "image": "x"}
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    if resources:
        container["resources"] = resources
    spec = {"restartPolicy": restart_policy} if restart_policy is not None else {}
    spec["containers"] = [container]
    return {"kind": "Pod", "apiVersion": "v1", "metadata": md, "spec": spec}


def job_pod(job, size, index=None, gpus=8, cpu="16", topology=("preferred", RACK_LABEL),
            ns=NS, named=False, owned=True, **kw):
    """Pod `index` (None: no completion index) of Job `job`'s PodSet of size
    pods, each requesting gpus nvidia.com/gpu and cpu, the PodSet's topology
    (Kueue's podset-<kind>-topology annotation). named: the name job-index
    instead of generateName job-. Other keywords go to make_pod()."""
    labels = {"batch.kubernetes.io/controller-uid": "uid-" + job,
              "batch.kubernetes.io/job-name": job}
    annotations = {"kueue.x-k8s.io/podset-%s-topology" % topology[0]: topology[1],
                   PODSET_SIZE: str(size)}
    if index is not None:
        labels["batch.kubernetes.io/job-completion-index"] = str(index)
        annotations["batch.kubernetes.io/job-completion-index"] = str(index)
    return make_pod(ns, name="%s-%d" % (job, index) if named else None,
               generate_name=None if named else job + "-", labels=labels,
               annotations=annotations, requests={"nvidia.com/gpu": str(gpus), "cpu": cpu},
               owner=job if owned else None, **kw)


def review(uid, obj, dry_run=False):
    """The AdmissionReview (JSON text) for creating obj, a pod; the request's
    namespace is the pod's, as the API server sends it."""
    req = {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
           "resource": {"group": "", "version": "v1", "resource": "pods"}}
    ns = obj.get("metadata", {}).get("namespace")
    if ns is not None:
        req["namespace"] = ns
    req.update(operation="CREATE", object=obj)
    if dry_run:
        req["dryRun"] = True
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": req})


def ops_of(resp):
    """The JSON Patch of an AdmissionReview response ([] without one)."""
    if "patch" not in resp:
        return []
    expect(resp.get("patchType") == "JSONPatch", "patchType JSONPatch: %r" % resp)
    return json.loads(base64.b64decode(resp["patch"], validate=True))


def apply_patch(resp, obj):
    """obj (left as it is) with the response's patch applied."""
    import jsonpatch  # here: the drivers' --list (at configure time) does without it
    return jsonpatch.JsonPatch(ops_of(resp)).apply(copy.deepcopy(obj))


def gates_of(obj):
    return [g.get("name") for g in obj["spec"].get("schedulingGates", [])]


def node_selector(obj):
    return obj["spec"].get("nodeSelector") or {}
