#!/usr/bin/env python3
"""topo-webhook killed half-way through a PodSet keeps giving consistent slots.

  webhook_restart_e2e.py --webhook build/webhook/topo-webhook --source .

topo-webhook runs on a static snapshot (--inventory fixtures/clusters/hgx-h100.yaml)
with its reservations in a cache file (--db). The 16 pods of an Indexed Job
(fixtures/admission/job-pod as the template: 8 GPUs each, rack preferred, so
they spread over racks) are admitted in two halves: pods 0-7, then SIGKILL,
a new process on the same --db, then pods 8-15 and pods 0-7 again (new
request uids). Checks: the 16 completion indices hold 16 distinct hosts; every
pod carries the same assignment annotation, whose domains are exactly those
hosts; the re-posted pods 0-7 get the nodeSelectors they had before the
restart; a rival 4-pod PodSet of the same shape, posted to the new process
before the second half, gets hosts of its own (without the reservation the
killed process stored, the same engine on the same snapshot would hand it
hosts of the first PodSet). Patches are applied with python3-jsonpatch.
"""
import argparse
import copy
import json
import os
import signal
import sys

from harness import FAILURES, check, finish
from harness.pki import pki_tmpdir
from harness.pods import FIXTURE_LEVELS, apply_patch
from harness.webhook import Webhook

SIZE = 16
RIVAL_SIZE = 4


def template(source):
    path = os.path.join(source, "fixtures", "admission", "job-pod", "request.json")
    with open(path) as fh:
        pod = json.load(fh)["request"]["object"]
    ann = pod["metadata"]["annotations"]
    # No rack holds 16 pods of 8 GPUs: rack preferred, not required.
    del ann["kueue.x-k8s.io/podset-required-topology"]
    ann["kueue.x-k8s.io/podset-preferred-topology"] = "topology.topo.io/rack"
    ann["topology.topo.io/podset-size"] = str(SIZE)
    return pod


def job_pod(tpl, index):
    pod = copy.deepcopy(tpl)
    pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = str(index)
    pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] = str(index)
    return pod


def rival_template(tpl):
    """Another Job of the same shape, RIVAL_SIZE pods: placed on the same
    snapshot without the first PodSet's reservation, it would take hosts the
    first PodSet holds."""
    pod = copy.deepcopy(tpl)
    md = pod["metadata"]
    md["generateName"] = "rival-"
    for kv in (md["labels"], md["ownerReferences"][0]):
        for k in ("batch.kubernetes.io/controller-uid", "controller-uid", "uid"):
            if k in kv:
                kv[k] = "uid-rival"
        for k in ("batch.kubernetes.io/job-name", "job-name", "name"):
            if k in kv:
                kv[k] = "rival"
    md["annotations"]["topology.topo.io/podset-size"] = str(RIVAL_SIZE)
    return pod


def admit(w, tpl, uid, index):
    """Posts pod `index`; returns (nodeSelector, assignment annotation) of the patched pod."""
    pod = job_pod(tpl, index)
    resp = w.admit(uid, pod)
    check(resp.get("allowed") is True, "%s: pod %d allowed: %r" % (uid, index, resp))
    out = apply_patch(resp, pod)
    sel = out["spec"].get("nodeSelector", {})
    check(sel.get("kubernetes.io/hostname") is not None,
          "%s: pod %d has a hostname nodeSelector: %r" % (uid, index, sel))
    return sel, out["metadata"].get("annotations", {}).get("topology.topo.io/assignment")


def start(binary, pki, tmp, inventory, db, name):
    return Webhook(binary, pki, os.path.join(tmp, name),
                   ["--inventory", inventory, "--levels", FIXTURE_LEVELS, "--db", db,
                    "--policy", "gate", "--log-format", "text"])


def run(args, tmp, pki):
    inventory = os.path.join(args.source, "fixtures", "clusters", "hgx-h100.yaml")
    db = os.path.join(tmp, "topo.db")
    tpl = template(args.source)
    logs = []

    first = {}
    w = start(args.webhook, pki, tmp, inventory, db, "first")
    try:
        for i in range(SIZE // 2):
            first[i] = admit(w, tpl, "first-%d" % i, i)
    finally:
        # SIGKILL: no shutdown path runs; only what was committed survives.
        logs.append(w.stop(signal.SIGKILL))
    check(w.proc.returncode == -9, "first webhook killed (rc %r)" % w.proc.returncode)

    second, again, rival = {}, {}, []
    w = start(args.webhook, pki, tmp, inventory, db, "second")
    try:
        # A rival PodSet first: it must not get what the killed process reserved.
        rival = [admit(w, rival_template(tpl), "rival-%d" % i, i)[0].get("kubernetes.io/hostname")
                 for i in range(RIVAL_SIZE)]
        for i in range(SIZE // 2, SIZE):
            second[i] = admit(w, tpl, "second-%d" % i, i)
        for i in range(SIZE // 2):
            again[i] = admit(w, tpl, "again-%d" % i, i)
    finally:
        logs.append(w.stop())
    check(w.proc.returncode == 0, "second webhook: clean exit (rc %r)" % w.proc.returncode)

    for i in range(SIZE // 2):
        check(again.get(i, (None,))[0] == first.get(i, (None,))[0],
              "pod %d: same nodeSelector after the restart: %r vs %r"
              % (i, first.get(i), again.get(i)))
    slots = dict(first)
    slots.update(second)
    hosts = {i: sel.get("kubernetes.io/hostname") for i, (sel, _) in slots.items()}
    check(len(hosts) == SIZE and len(set(hosts.values())) == SIZE,
          "%d distinct hosts for the %d indices: %r" % (SIZE, SIZE, hosts))
    check(len(set(rival)) == RIVAL_SIZE and not set(rival) & set(hosts.values()),
          "the rival PodSet's hosts %r are its own, none of the first one's %r"
          % (rival, sorted(hosts.values())))
    assignments = {a for _, a in list(slots.values()) + list(again.values())}
    check(len(assignments) == 1 and None not in assignments,
          "one assignment annotation for the whole PodSet: %r" % assignments)
    if len(assignments) == 1 and None not in assignments:
        doc = json.loads(assignments.pop())
        check(doc.get("levels") == ["kubernetes.io/hostname"],
              "assignment levels: %r" % doc.get("levels"))
        domains = {d["values"][0]: d["count"] for d in doc.get("domains", [])}
        check(sum(domains.values()) == SIZE, "assignment counts sum to %d" % SIZE)
        check(set(domains) == set(hosts.values()),
              "the hosts are the assignment's domains: %r vs %r"
              % (sorted(domains), sorted(hosts.values())))
    return logs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    with pki_tmpdir("topo-whr-") as (tmp, pki):
        logs = []
        try:
            logs = run(args, tmp, pki)
        finally:
            if FAILURES:
                for i, log in enumerate(logs):
                    print("--- webhook log %d ---\n%s" % (i + 1, log))
    return finish("webhook_restart_e2e")


if __name__ == "__main__":
    sys.exit(main())
