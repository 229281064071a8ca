#!/usr/bin/env python3
"""topo-webhook's admission handler end to end.

  webhook_admission_e2e.py --webhook build/webhook/topo-webhook --source .

Starts topo-webhook with --inventory fixtures/clusters/hgx-h100.yaml (a
static snapshot) and posts AdmissionReviews over TLS for the 16 pods of an
Indexed Job (8 GPUs each, preferred rack: no rack holds 16 such pods, so
they spread over racks). Checks: 16 distinct hosts; each pod's patch,
applied with python3-jsonpatch, gives it a nodeSelector naming that host and
the assignment annotation, whose domains hold exactly the 16 hosts; the same
pods asked again (new request uids, concurrently) get the same hosts; a
patched pod posted again gets no patch; a pod that cannot fit is gated;
requests Kueue's validation refuses are refused with its message (the pod
whose slice is larger than its PodSet, which once crashed the process), and
"True" is a boolean. Then SIGTERM while a handler waits on a locked cache
file: the shutdown watchdog ends the process on time. A second webhook, with
--config capping what a namespace holds for pods not created yet (issue 9):
over the cap gated with the reason, within placed, the held room in
/metrics, and a PodSet that requests nothing (podset-size 3000) placed while
holding nothing.
"""
import argparse
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

from harness import FAILURES, check, finish
from harness.pki import pki_tmpdir
from harness.pods import FIXTURE_LEVELS, apply_patch, job_pod, make_pod, review
from harness.webhook import Webhook

# Connections one client may hold (more than the 16 concurrent requests below).
PER_CLIENT = 20


def train_pod(index, gpus=8, job="train", size=16):
    """Pod index of an Indexed Job whose PodSet prefers one rack."""
    return job_pod(job, size, index, gpus=gpus)


def case_indexed_job(w):
    hosts = {}
    patched = {}
    assignment = None
    for i in range(16):
        pod = train_pod(i)
        resp = w.admit("a-%d" % i, pod)
        check(resp.get("allowed") is True, "pod %d allowed" % i)
        out = apply_patch(resp, pod)
        sel = out["spec"].get("nodeSelector", {})
        # every level of the slot's domain; the assignment itself is by host
        # (Kueue's form), so the upper levels are that host's own labels
        host = sel.get("kubernetes.io/hostname", "")
        check(list(sel) == FIXTURE_LEVELS.split(",") and
              sel.get("topology.topo.io/rack") == "rack-" + host[len("h100-r"):][:2],
              "pod %d: nodeSelector has every level, the host's: %r" % (i, sel))
        hosts[i] = sel.get("kubernetes.io/hostname")
        a = out["metadata"]["annotations"].get("topology.topo.io/assignment")
        check(a is not None, "pod %d: assignment annotation" % i)
        if assignment is None:
            assignment = a
        check(a == assignment, "pod %d: the same assignment as pod 0" % i)
        patched[i] = out
    check(len(set(hosts.values())) == 16, "16 distinct hosts: %r" % hosts)
    doc = json.loads(assignment)
    check(doc["levels"] == ["kubernetes.io/hostname"], "assignment levels: %r" % doc["levels"])
    check(sum(d["count"] for d in doc["domains"]) == 16, "assignment counts sum to 16")
    check({d["values"][0] for d in doc["domains"]} == set(hosts.values()),
          "the hosts are the assignment's domains")
    check(all(h.startswith("h100-r") for h in hosts.values()), "fixture hosts")

    # the same pods again, concurrently, with new request uids: same hosts
    again = {}

    def ask(i):
        resp = w.admit("b-%d" % i, train_pod(i))
        out = apply_patch(resp, train_pod(i))
        again[i] = out["spec"].get("nodeSelector", {}).get("kubernetes.io/hostname")
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(again == hosts, "asked again: same hosts (%r vs %r)" % (again, hosts))

    # our own output in: no patch
    for i in (0, 15):
        resp = w.admit("c-%d" % i, patched[i])
        check(resp.get("allowed") is True and "patch" not in resp,
              "patched pod %d: allowed without a patch: %r" % (i, resp))

    # a second job does not get the first one's hosts
    resp = w.admit("d-0", train_pod(0, job="other", size=1))
    sel = apply_patch(resp, train_pod(0, job="other", size=1))
    host = sel["spec"].get("nodeSelector", {}).get("kubernetes.io/hostname")
    check(host is not None and host not in hosts.values(),
          "second job placed off the first one's hosts: %r" % host)


def case_gate(w):
    pod = train_pod(0, gpus=16, job="huge", size=1)
    resp = w.admit("g-0", pod)
    check(resp.get("allowed") is True, "huge pod allowed (gate policy)")
    out = apply_patch(resp, pod)
    gates = [g["name"] for g in out["spec"].get("schedulingGates", [])]
    check(gates == ["topology.topo.io/wait"], "huge pod gated: %r" % gates)
    check("topology.topo.io/wait-reason" in out["metadata"]["annotations"], "wait-reason")
    check("nodeSelector" not in out["spec"], "huge pod: no nodeSelector")


def kueue_pod(name, annotations):
    return make_pod(name=name, annotations=annotations, requests={"cpu": "1"})


def case_kueue_validation(w):
    """Issue 8: Kueue's validation in the request path of the real process."""
    k = "kueue.x-k8s.io/podset-"
    # One pod whose slice is larger than its PodSet: it once killed every
    # replica (SIGSEGV); now Kueue's refusal, and the process lives on.
    resp = w.admit("k-0", kueue_pod("slice3", {k + "required-topology": "topology.topo.io/rack",
                                               k + "slice-required-topology": "kubernetes.io/hostname",
                                               k + "slice-size": "3"}))
    st = resp.get("status", {})
    check(resp.get("allowed") is False and st.get("code") == 400 and
          st.get("message") == 'metadata.annotations[kueue.x-k8s.io/podset-slice-size]: '
                               'Invalid value: "3": must not be greater than pod set count 1',
          "slice larger than the PodSet: Kueue's refusal: %r" % resp)
    check(w.proc.poll() is None, "the webhook is still running")
    # "True" is a bool to Kueue (strconv.ParseBool): placed, not gated
    resp = w.admit("k-1", kueue_pod("uncon", {k + "unconstrained-topology": "True"}))
    out = apply_patch(resp, kueue_pod("uncon", {}))
    check(resp.get("allowed") is True and
          out["spec"].get("nodeSelector", {}).get("kubernetes.io/hostname"),
          "unconstrained \"True\": placed: %r" % resp)
    # required and preferred at once: refused, not placed on one of them
    resp = w.admit("k-2", kueue_pod("both", {k + "required-topology": "topology.topo.io/rack",
                                             k + "preferred-topology": "topology.topo.io/rack"}))
    st = resp.get("status", {})
    check(resp.get("allowed") is False and st.get("code") == 400 and
          "must not contain more than one topology annotation" in st.get("message", ""),
          "required and preferred: refused: %r" % resp)
    # Issue 9: ?timeout=nans was cast from NaN (undefined behaviour); the
    # API server's timeout is a Go duration, and one that does not parse is
    # ignored: the request is answered.
    for t in ("nans", "1e3s", "-5s", "99999999999999999h", "1.5s"):
        resp = w.admit("k-t-" + t, kueue_pod("t", {k + "unconstrained-topology": "true"}), t)
        check(resp.get("allowed") is True, "?timeout=%s: answered: %r" % (t, resp))


def case_transport(w, pki):
    """Issue 9: TLS 1.2 only with forward secrecy and AEAD (no static RSA key
    exchange, no CBC, no SHA-1); a per-client connection limit; the health
    port only on --health-address."""
    def handshake(ciphers):
        ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(ciphers)
        try:
            with socket.create_connection(("127.0.0.1", w.port), timeout=5) as raw:
                with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                    return tls.cipher()[0]
        except (ssl.SSLError, ConnectionError) as e:
            return "refused: %s" % e
    for weak in ("AES128-SHA", "AES256-SHA256", "ECDHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA"):
        got = handshake(weak)
        check(got.startswith("refused"), "TLS 1.2 %s refused: %s" % (weak, got))
    got = handshake("ECDHE+AESGCM:ECDHE+CHACHA20")
    check(not got.startswith("refused"), "TLS 1.2 with ECDHE and AEAD accepted: %s" % got)
    # One client holding every connection it may have (TLS done, no request
    # sent: each is surely the server's) leaves it no more; they gone, it
    # is served again.
    ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
    idle = []
    for _ in range(PER_CLIENT):
        raw = socket.create_connection(("127.0.0.1", w.port), timeout=10)
        idle.append(ctx.wrap_socket(raw, server_hostname="localhost"))
    got = handshake("ECDHE+AESGCM")
    check(got.startswith("refused"), "connection %d of one client refused: %s"
          % (PER_CLIENT + 1, got))
    for sk in idle:
        sk.close()
    deadline = time.time() + 10
    got = handshake("ECDHE+AESGCM")
    while got.startswith("refused") and time.time() < deadline:
        time.sleep(0.2)
        got = handshake("ECDHE+AESGCM")
    check(not got.startswith("refused"), "served again once they closed: %s" % got)
    check(w.get("/healthz")[0] == 200, "health on 127.0.0.1")
    try:
        socket.create_connection(("127.0.0.2", w.health), timeout=2).close()
        check(False, "health not on 127.0.0.2 (bound to --health-address 127.0.0.1)")
    except OSError:
        pass


FAIR_CONFIG = """topologies:
- name: default
  levels: [topology.topo.io/datacenter, topology.topo.io/spine, topology.topo.io/leaf,
           topology.topo.io/rack, kubernetes.io/hostname]
defaultPolicy: gate
namespacePolicyLabel: ""
maxUnclaimed:
  perNamespace: {nvidia.com/gpu: 40}
"""


def case_unclaimed_caps(w):
    resp = w.admit("cap-0", train_pod(0, gpus=8, job="wide", size=8))
    pod = apply_patch(resp, train_pod(0, gpus=8, job="wide", size=8))
    reason = pod["metadata"].get("annotations", {}).get("topology.topo.io/wait-reason", "")
    check("namespace team-a would hold 56 nvidia.com/gpu reserved for pods not created yet"
          in reason, "over the cap: gated with the reason, got %r" % reason)
    resp = w.admit("cap-1", train_pod(0, gpus=8, job="narrow", size=4))
    pod = apply_patch(resp, train_pod(0, gpus=8, job="narrow", size=4))
    check("kubernetes.io/hostname" in pod["spec"].get("nodeSelector", {}),
          "within the cap: placed")
    idle = train_pod(0, gpus=0, job="idle", size=3000)
    del idle["spec"]["containers"][0]["resources"]
    resp = w.admit("cap-2", idle)
    pod = apply_patch(resp, idle)
    check("kubernetes.io/hostname" in pod["spec"].get("nodeSelector", {}),
          "a PodSet requesting nothing: placed")
    text = w.metrics_text()
    line = 'topo_webhook_reserved_unclaimed{namespace="team-a",resource="nvidia.com/gpu"} 24'
    check(line in text.splitlines(), "held room in /metrics: %s" % line)
    line = 'topo_webhook_reserved_unclaimed{namespace="team-a",resource="pods"} 3'
    check(line in text.splitlines(), "the idle PodSet holds no pods: %s" % line)


def case_shutdown_stuck_handler(binary, pki, tmp, inventory):
    """SIGTERM while a request handler is stuck (its reservation waits for
    the cache file, which another process holds locked: SQLite's busy
    timeout, 5 s): with --shutdown-timeout 0 the process ends within the
    shutdown timeout + the watchdog's 2 s margin, exit 1, with an error
    line, instead of waiting for the handler (stopping libmicrohttpd joins
    its threads)."""
    import sqlite3
    workdir = os.path.join(tmp, "stuck")
    db = os.path.join(workdir, "topo.db")
    w = Webhook(binary, pki, workdir, ["--inventory", inventory, "--levels", FIXTURE_LEVELS,
                                       "--db", db, "--policy", "gate", "--log-format", "text",
                                       "--shutdown-timeout", "0"])
    lock = sqlite3.connect(db, timeout=0, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    done = threading.Event()

    def post():
        c = w.conn(timeout=20)
        try:
            w.post(c, review("stuck", train_pod(0)), "/mutate?timeout=30s")
        except (OSError, http.client.HTTPException):
            pass  # the process ends under it
        finally:
            c.close()
            done.set()
    t = threading.Thread(target=post)
    t.start()
    time.sleep(0.5)  # the handler waits on the lock
    t0 = time.time()
    w.proc.send_signal(signal.SIGTERM)
    try:
        rc = w.proc.wait(15)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.time() - t0
    lock.execute("ROLLBACK")
    lock.close()
    t.join()
    log = w.stop()
    print("stuck handler: exit %r %.2f s after SIGTERM" % (rc, took), flush=True)
    check(rc == 1 and took < 3.3,
          "a stuck handler does not hold the process past its shutdown timeout + 2 s: "
          "exit %r after %.2f s" % (rc, took))
    check("a request handler still runs" in log, "the watchdog's error is logged")
    if FAILURES:
        print("--- stuck webhook log ---\n" + log)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    inventory = os.path.join(args.source, "fixtures", "clusters", "hgx-h100.yaml")
    with pki_tmpdir("topo-wha-") as (tmp, pki):
        w = Webhook(args.webhook, pki, tmp,
                    ["--inventory", inventory, "--levels", FIXTURE_LEVELS, "--policy", "gate",
                     "--log-format", "text", "--health-address", "127.0.0.1",
                     "--max-connections-per-client", str(PER_CLIENT)])
        log = ""
        try:
            case_indexed_job(w)
            case_gate(w)
            case_kueue_validation(w)
            case_transport(w, pki)
        finally:
            log = w.stop()
        check(w.proc.returncode == 0, "clean exit on SIGTERM (rc %r)" % w.proc.returncode)
        case_shutdown_stuck_handler(args.webhook, pki, tmp, inventory)
        if FAILURES:
            print("--- webhook log ---\n" + log)

        config = os.path.join(tmp, "fair.yaml")
        with open(config, "w") as f:
            f.write(FAIR_CONFIG)
        w = Webhook(args.webhook, pki, os.path.join(tmp, "fair"),
                    ["--inventory", inventory, "--config", config, "--log-format", "text",
                     "--health-address", "127.0.0.1"])
        try:
            case_unclaimed_caps(w)
        finally:
            log = w.stop()
        if FAILURES:
            print("--- webhook log (caps) ---\n" + log)
    return finish("webhook_admission_e2e")


if __name__ == "__main__":
    sys.exit(main())
