#!/usr/bin/env python3
"""What a user with pod-create rights can make topo-webhook do with the
annotations it writes (issue 27, section 1): topo-webhook in daemon mode
(leader election, its Lease) against fake_apiserver.py, several namespaces.

  webhook_security_e2e.py --webhook build/webhook/topo-webhook (--list | --case NAME | --all)

The API server's part is played as in webhook_replicas_e2e.py (whose Env,
cluster and checks this driver uses): each topology pod's AdmissionReview
is sent to the webhook, the answer's JSON Patch applied and the pod created;
pods with no Kueue annotation never reach the webhook (the chart's
matchConditions) and are created directly. 16 generated nodes, 8 GPUs
each, 8 per rack.

Cases:
  foreign_slot_claims   the issue's attack: a 2-pod Job (rack required, not
                        indexed) has its first pod placed; a user in another
                        namespace creates plain pods carrying the victim's
                        reservation id, slots 1..3 and a copy of the victim
                        pod's seal (and assignment and record); the victim's
                        second pod must still get its slot 1 in the victim's
                        rack (once, it was admitted with no nodeSelector, no
                        reservation, no gate), and the claims are counted
                        (topo_webhook_foreign_claims_total);
  forged_annotations    a topology pod of another namespace's Job sent
                        through the webhook carrying every annotation topo
                        writes, copied from the victim's placed pod or made
                        up: each removed first in the patch, the warning
                        names them, counted
                        (topo_webhook_foreign_annotations_total), the pod
                        placed on its own terms in a reservation of its own;
                        the victim's second pod then gets its slot.
  forged_reviews        a client that is not the API server (any pod can reach
                        the webhook's port) POSTs AdmissionReviews for 3 pods
                        of the victim's 4-pod Job that are never created:
                        they claim slots 1..3 provisionally. The Job's real
                        pods 1..3 each take one of those slots over (once,
                        they were admitted with no nodeSelector: "all 4
                        slots are claimed"): 4 pods on 4 hosts of one rack,
                        distinct slots of one reservation.
"""
import sys
import time
import uuid

from harness import FAILURES, check, expect, registry, run_cases
from harness.pods import ASSIGNMENT, PODSET, WAIT_REASON, apply_patch, make_pod, ops_of
from harness.webhook import metric
from webhook_replicas_e2e import (RESERVATION, RESERVATION_SPEC, SLOT, Env, check_capacity,
                                  check_podset, info, load_nodes, on_failure, rack_job_pod, send,
                                  wait_placer)

CASES, _case = registry()

SEAL = "topology.topo.io/seal"
ROLE = "topology.topo.io/role"
# The annotations topo writes, in the order of TOPO_ADMISSION_WRITTEN_ANNOTATIONS.
WRITTEN = [ASSIGNMENT, RESERVATION, SLOT, RESERVATION_SPEC, ROLE, WAIT_REASON, PODSET, SEAL]
OTHER_NS = "team-b"


def case(fn):
    def run(env):
        n = len(FAILURES)
        fn(env)
        expect(len(FAILURES) == n, "%d checks failed" % (len(FAILURES) - n))
    run.__name__ = fn.__name__
    return _case(run)


def place_victim(env):
    """One placer; the first pod of the victim's 2-pod Job (rack required,
    not indexed: each pod claims the next free slot) placed and created."""
    load_nodes(env, 16)
    w = env.start_replica("r0")
    wait_placer(env)
    v0 = send(env, w, rack_job_pod("victim", 2, 0, indexed=False))
    ann = v0["metadata"]["annotations"]
    expect(ann.get(RESERVATION) and ann.get(SLOT) == "0" and ann.get(SEAL),
           "the victim's first pod placed, slot 0, sealed: %r" % ann)
    return w, v0


@case
def foreign_slot_claims(env):
    w, v0 = place_victim(env)
    ann = v0["metadata"]["annotations"]
    time.sleep(1)  # the victim's pod in the cache, bound to slot 0
    for slot in (1, 2, 3):
        env.create("/api/v1/namespaces/%s/pods" % OTHER_NS, make_pod(
            ns=OTHER_NS, name="thief-%d" % slot, requests={"cpu": "1"},
            annotations={RESERVATION: ann[RESERVATION], SLOT: str(slot), SEAL: ann[SEAL],
                         ASSIGNMENT: ann[ASSIGNMENT], RESERVATION_SPEC: ann[RESERVATION_SPEC]}))
    time.sleep(1.5)  # the webhook's watch sees them
    v1 = send(env, w, rack_job_pod("victim", 2, 1, indexed=False))
    got = info(env, v1)
    check(not got["gated"] and got["host"] and got["reservation"] == ann[RESERVATION]
          and got["slot"] == "1",
          "the victim's second pod in its reservation's slot 1: %r" % got)
    check_podset(env, "victim", [v0, v1], 2)
    claims = metric(w.metrics_text(), "topo_webhook_foreign_claims_total")
    check(claims >= 3, "the three foreign claims counted: %r" % claims)
    check_capacity(env)


@case
def forged_annotations(env):
    w, v0 = place_victim(env)
    ann = v0["metadata"]["annotations"]
    pod = rack_job_pod("intruder", 1, 0, indexed=False)
    pod["metadata"]["namespace"] = OTHER_NS
    pod["metadata"]["annotations"].update({
        ASSIGNMENT: ann[ASSIGNMENT], RESERVATION: ann[RESERVATION], SLOT: "1",
        RESERVATION_SPEC: ann[RESERVATION_SPEC], ROLE: "0123456789abcdef",
        WAIT_REASON: "made up", PODSET: "team-a/job/uid-victim", SEAL: ann[SEAL]})
    resp = w.admit(str(uuid.uuid4()), pod)
    expect(resp.get("allowed") is True, "the intruder allowed: %r" % resp)
    ops = ops_of(resp)
    first = [(op["op"], op["path"]) for op in ops[:len(WRITTEN)]]
    check(first == [("remove", "/metadata/annotations/" + k.replace("/", "~1")) for k in WRITTEN],
          "every annotation topo writes removed first: %r" % first)
    warnings = resp.get("warnings") or []
    check(any(x.startswith("topo-webhook: removed unsealed topology.topo.io/{assignment,"
                           "reservation,slot,") for x in warnings),
          "a warning names them: %r" % warnings)
    out = apply_patch(resp, pod)
    env.create("/api/v1/namespaces/%s/pods" % OTHER_NS, out)
    got = info(env, out)
    check(not got["gated"] and got["host"] and got["slot"] == "0"
          and got["reservation"] not in (None, ann[RESERVATION]),
          "the intruder placed on its own terms, in a reservation of its own: %r" % got)
    left = {k: out["metadata"]["annotations"].get(k) for k in (ROLE, WAIT_REASON, PODSET)}
    check(left == {ROLE: None, WAIT_REASON: None, PODSET: None},
          "nothing made up is left: %r" % left)
    check(metric(w.metrics_text(), "topo_webhook_foreign_annotations_total") == 1,
          "counted once: %r" % metric(w.metrics_text(), "topo_webhook_foreign_annotations_total"))
    time.sleep(1)  # the intruder's pod in the cache
    v1 = send(env, w, rack_job_pod("victim", 2, 1, indexed=False))
    check_podset(env, "victim", [v0, v1], 2)
    check_capacity(env)


@case
def forged_reviews(env):
    load_nodes(env, 16)
    w = env.start_replica("r0")
    wait_placer(env)
    v0 = send(env, w, rack_job_pod("victim", 4, 0, indexed=False))
    time.sleep(1)  # the victim's pod in the cache, bound to slot 0
    for i in (1, 2, 3):
        forged = send(env, w, rack_job_pod("victim", 4, 10 + i, indexed=False), create=False)
        check(info(env, forged)["slot"] == str(i), "the forged review %d claims slot %d: %r"
              % (i, i, info(env, forged)))
    real = [send(env, w, rack_job_pod("victim", 4, i, indexed=False)) for i in (1, 2, 3)]
    for p in real:
        check(info(env, p)["reservation"] == info(env, v0)["reservation"],
              "%s in the victim's reservation: %r" % (p["metadata"]["name"], info(env, p)))
    check_podset(env, "victim", [v0] + real, 4)
    check_capacity(env)


def main():
    return run_cases(CASES, Env, bin_flag="--webhook", on_failure=on_failure)


if __name__ == "__main__":
    sys.exit(main())
