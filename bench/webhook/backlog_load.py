#!/usr/bin/env python3
"""The backlog of bench/webhook MODE=backlog (backlog.sh): PODSETS gated
PodSets, each an Indexed Job of SIZE pods of 8 GPUs that requires one rack
(kueue.x-k8s.io/podset-required-topology) — more than a rack of 8 nodes of
8 GPUs holds, so none ever fits. Each pod goes the way Kubernetes sends it:
its AdmissionReview to topo-webhook (which gates it: topology.topo.io/wait,
wait-reason and podset annotations), the answer's JSON Patch applied, the
patched pod created in the (fake) API server, unbound. Keep-alive HTTPS both
ways; the ungater then finds them in its cache as in a cluster.

  backlog_load.py WEBHOOK_PORT API_URL CA TOKEN_FILE PODSETS SIZE
"""
import base64
import http.client
import json
import ssl
import sys
import time
import urllib.parse

import jsonpatch

NS = "backlog"
RACK = "topology.topo.io/rack"
GATE = "topology.topo.io/wait"


def pod(job, size, index):
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "%s-%d" % (job, index), "namespace": NS,
                         "labels": {"batch.kubernetes.io/controller-uid": "uid-" + job,
                                    "batch.kubernetes.io/job-name": job,
                                    "batch.kubernetes.io/job-completion-index": str(index)},
                         "annotations": {"kueue.x-k8s.io/podset-required-topology": RACK,
                                         "topology.topo.io/podset-size": str(size),
                                         "batch.kubernetes.io/job-completion-index": str(index)},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                              "name": job, "uid": "uid-" + job,
                                              "controller": True}]},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "w", "image": "x", "resources": {
                         "requests": {"nvidia.com/gpu": "8", "cpu": "16"},
                         "limits": {"nvidia.com/gpu": "8"}}}]}}


def review(uid, obj):
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "namespace": NS, "operation": "CREATE",
                                   "kind": {"group": "", "version": "v1", "kind": "Pod"},
                                   "resource": {"group": "", "version": "v1",
                                                "resource": "pods"},
                                   "object": obj}})


def post(conn, path, body, headers):
    conn.request("POST", path, body, headers)
    r = conn.getresponse()
    return r.status, r.read()


def main():
    wport, api_url, ca, token_file, podsets, size = sys.argv[1:7]
    podsets, size = int(podsets), int(size)
    ctx = ssl.create_default_context(cafile=ca)
    token = open(token_file).read().strip()
    api = urllib.parse.urlsplit(api_url)
    wh = http.client.HTTPSConnection("localhost", int(wport), context=ctx, timeout=60)
    kube = http.client.HTTPSConnection(api.hostname, api.port, context=ctx, timeout=60)
    kube_headers = {"Content-Type": "application/json", "Authorization": "Bearer " + token}
    status, out = post(kube, "/api/v1/namespaces", json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}), kube_headers)
    if status not in (201, 409):
        sys.exit("backlog: creating namespace %s: %d %s" % (NS, status, out[:200]))
    t0 = time.monotonic()
    for p in range(podsets):
        job = "backlog-%04d" % p
        for i in range(size):
            obj = pod(job, size, i)
            status, out = post(wh, "/mutate?timeout=10s", review("%s-%d" % (job, i), obj),
                               {"Content-Type": "application/json"})
            resp = json.loads(out).get("response", {}) if status == 200 else {}
            ops = json.loads(base64.b64decode(resp["patch"])) if "patch" in resp else []
            gated = jsonpatch.JsonPatch(ops).apply(obj)
            if not resp.get("allowed") or GATE not in [
                    g.get("name") for g in gated["spec"].get("schedulingGates", [])]:
                sys.exit("backlog: %s-%d not gated: %d %s" % (job, i, status, out[:300]))
            status, out = post(kube, "/api/v1/namespaces/%s/pods" % NS, json.dumps(gated),
                               kube_headers)
            if status != 201:
                sys.exit("backlog: creating %s-%d: %d %s" % (job, i, status, out[:300]))
    print("backlog: %d PodSets of %d pods gated and created in %.1f s"
          % (podsets, size, time.monotonic() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
