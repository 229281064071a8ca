#!/usr/bin/env python3
"""The ungater under a backlog: arrival order, PodSets that cannot fit passed
over, admissions answered while a long round runs. topo-webhook in daemon
mode (gate policy, one replica, a round every second) against
fake_apiserver.py.

  webhook_backlog_e2e.py --webhook build/webhook/topo-webhook

The fake API server holds 4 nodes of 8 GPUs in 2 racks of 2, each running a
bound 8-GPU pod: nothing fits. Single-pod PodSets, each one host of 8 GPUs
(required level kubernetes.io/hostname), are gated by admission and created
unbound as the API server would: "zz-old" first, then, a second later (a
creationTimestamp of its own), "aa-new-1".."aa-new-3", whose names and
random uids come before it in any other order; and "huge", one pod of 16
GPUs on one host, which no node of this cluster can ever hold.

  * once each has been evaluated and found not to fit, rounds pass over all
    five: no GET of their pods reaches the API server, the ungater's
    skipped counter grows and its not-fitting gauge says 5;
  * a filler pod is deleted (one node free): the next round releases
    zz-old, the oldest PodSet, not one of the newer ones; "huge" is still not
    evaluated (no host has 16 GPUs: the room bound rules it out), the newer
    ones are (one might have fitted) and stay gated;
  * a second node is freed while the API server answers each GET of a pod
    only after 1.5 s, so that round lasts seconds: an admission posted
    meanwhile is answered at once (the round holds no lock admissions
    take), and the round-time histogram shows the long round.
"""
import argparse
import sys
import time

from harness import FAILURES, check, check_within, finish
from harness.pods import (HOST_LABEL, NS, PODSET, WAIT_GATE, WAIT_REASON, apply_patch, gates_of,
                          make_pod)
from harness.webhook import WebhookApiEnv, metric, start_daemon

NEW = ["aa-new-1", "aa-new-2", "aa-new-3"]
ALL = ["zz-old", "huge"] + NEW
POD_PATH = "/api/v1/namespaces/%s/pods/" % NS
SLOW_GET_MS = 1500


def host_pod(name, gpus=8):
    """A PodSet of its own: one pod of `gpus` GPUs that requires one host."""
    return make_pod(name=name, restart_policy="Never",
                    annotations={"kueue.x-k8s.io/podset-required-topology": HOST_LABEL},
                    requests={"nvidia.com/gpu": str(gpus), "cpu": "1"},
                    limits={"nvidia.com/gpu": str(gpus)})


def gate(w, api, name, gpus=8):
    pod = host_pod(name, gpus)
    resp = w.admit("uid-" + name, pod)
    out = apply_patch(resp, pod)
    check(resp.get("allowed") is True and gates_of(out) == [WAIT_GATE],
          "%s: admitted and gated: %r" % (name, resp.get("status") or gates_of(out)))
    check(out["metadata"].get("annotations", {}).get(PODSET), "%s: podset annotation" % name)
    api.create("/api/v1/namespaces/%s/pods" % NS, out)


def pod_gets(api):
    """GETs of the gated pods since the last requests/clear, by pod name."""
    out = {}
    for r in api.admin("requests").get("requests", []):
        if r["method"] == "GET" and r["path"].startswith(POD_PATH):
            name = r["path"][len(POD_PATH):].split("?")[0]
            if name in ALL:
                out[name] = out.get(name, 0) + 1
    return out


def gated(api, name):
    pod = api.pod(NS, name)
    return pod is not None and WAIT_GATE in gates_of(pod)


def free_node(api, exclude=()):
    """Deletes one filler pod; returns its node."""
    for p in api.items("/api/v1/namespaces/filler/pods"):
        node = p["spec"].get("nodeName")
        if node not in exclude:
            api.delete("/api/v1/namespaces/filler/pods/" + p["metadata"]["name"])
            return node
    raise RuntimeError("no filler pod left")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    args = ap.parse_args()
    api = WebhookApiEnv()
    w = None
    log = ""
    try:
        try:
            api.admin("load", {"resource": "nodes", "count": 4, "gpus": 8, "nodes_per_rack": 2})
            api.admin("load", {"resource": "pods", "count": 4, "gpus": 8, "namespace": "filler"})
            w = start_daemon(api, args.webhook, "backlog",
                             ["--levels", "topology.topo.io/rack,kubernetes.io/hostname",
                              "--policy", "gate", "--ungate-interval", "1",
                              "--log-format", "text"])
            gate(w, api, "zz-old")
            gate(w, api, "huge", gpus=16)
            time.sleep(1.1)  # creationTimestamp has whole seconds
            for name in NEW:
                gate(w, api, name)

            # Every PodSet evaluated once, then passed over.
            m = check_within("all 5 PodSets remembered as not fitting", lambda: (
                lambda x: x if x.get("topo_webhook_ungater_not_fitting") == 5 else None)(
                    w.metrics()), 15) or {}
            skipped = m.get("topo_webhook_ungater_skipped_total", 0)
            api.admin("requests/clear", {})
            time.sleep(2.5)
            gets = pod_gets(api)
            check(not gets, "no GET of a gated pod while nothing changed: %r" % gets)
            m = w.metrics()
            check(m.get("topo_webhook_ungater_skipped_total", 0) >= skipped + 5,
                  "skipped grew by a round's 5 at least: %r -> %r"
                  % (skipped, m.get("topo_webhook_ungater_skipped_total")))
            check(m.get("topo_webhook_gated_waiting") == 5, "5 pods waiting: %r"
                  % m.get("topo_webhook_gated_waiting"))

            # One node free: the oldest PodSet gets it.
            api.admin("requests/clear", {})
            first = free_node(api)
            check_within("zz-old ungated after a node was freed",
                         lambda: not gated(api, "zz-old"), 15)
            time.sleep(2.2)  # the next rounds
            gets = pod_gets(api)
            for name in NEW:
                check(gated(api, name), "%s (newer) still gated" % name)
                check(gets.get(name, 0) >= 1, "%s evaluated once capacity came back: %r"
                      % (name, gets))
            check(gated(api, "huge"), "huge still gated")
            check(gets.get("huge", 0) == 0,
                  "huge never evaluated again (no host has 16 GPUs): %r" % gets)
            pod = api.pod(NS, "zz-old")
            sel = (pod or {}).get("spec", {}).get("nodeSelector") or {}
            check(sel.get(HOST_LABEL) == first, "zz-old sent to the freed node %s: %r"
                  % (first, sel))
            check(WAIT_REASON not in (pod or {}).get("metadata", {}).get("annotations", {}),
                  "zz-old: wait-reason removed")

            # A long round: every GET of a pod answered after 1.5 s.
            api.admin("fault", {"kind": "delay", "count": 50, "delay_ms": SLOW_GET_MS,
                                "method": "GET", "path": POD_PATH})
            free_node(api, exclude=(first,))
            time.sleep(1.0)  # the round has started and waits on its first GET
            t0 = time.monotonic()
            resp = w.admit("uid-late", host_pod("late"))
            took = time.monotonic() - t0
            check(resp.get("allowed") is True, "late pod answered: %r" % resp)
            check(took < 0.5, "admission answered in %.3f s while a round waits on the API "
                              "server (< 0.5 s)" % took)
            print("admission during a long round: %.1f ms" % (took * 1000))

            def long_round():
                text = w.metrics_text()
                total = metric(text, "topo_webhook_ungater_round_seconds_count")
                upto1 = metric(text, "topo_webhook_ungater_round_seconds_bucket", 'le="1"')
                return total > upto1
            check_within("a round over 1 s in topo_webhook_ungater_round_seconds", long_round,
                         20)
            api.admin("faults/clear", {})
        except Exception as e:  # setup failures: report with the logs
            check(False, "error: %r" % e)
        finally:
            if w is not None:
                log = w.stop()
                check(w.proc.returncode == 0, "clean exit on SIGTERM (rc %r)" % w.proc.returncode)
        if FAILURES:
            print("--- webhook log (tail) ---\n%s" % log[-8000:])
            print("--- apiserver log (tail) ---\n%s" % api.server_log()[-3000:])
    finally:
        api.close()
    return finish("webhook_backlog_e2e")


if __name__ == "__main__":
    sys.exit(main())
