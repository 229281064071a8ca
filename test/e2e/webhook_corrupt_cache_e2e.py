#!/usr/bin/env python3
"""topo-webhook whose cache file (--db) was corrupted while it was down
(issue 33 item 6): it starts anyway, on a new empty cache, and re-adopts its
reservations from the pods' records.

  webhook_corrupt_cache_e2e.py --webhook build/webhook/topo-webhook --corrupt overwritten|truncated|running

fake_apiserver.py holds 16 GPU nodes in 2 racks of 8 (block dc1-sp01), 4
running 8-GPU pods on rack r01. A first topo-webhook places pod 0 of Job
"held" (4 pods of 8 GPUs, rack required), and the pod is created bound to
its host with the webhook's annotations (assignment, signed record). The
webhook stops (SIGTERM); its cache file, now holding the nodes, pods and the
reservation, is overwritten with 4 KiB of 0xA5 at half its size, or cut to
half. A second topo-webhook on the same --db must become ready (/readyz),
move the file aside to <db>.corrupt-<UTC time>, log one error line naming
the file, SQLite's complaint and the copy (JSON, fields file, error,
moved_to), count it (topo_webhook_cache_recreated_total 1), adopt the
reservation again from pod 0's record (topo_webhook_reservations_adopted_total
1), give pods 1-3 of "held" the other hosts of its assignment, and give a
rival Job's 3 pods hosts outside it (no host booked twice). Before issue 33
the second webhook exited at start and never became ready.

--corrupt running: the first webhook's file is damaged under it (the first
16 bytes of every page of its second half), a pod event makes it read the
file again, and admissions follow: one is answered unplaced with SQLite's
"malformed" as a warning, and the webhook exits 1 (before, it went on
answering from the damaged file); then the second webhook as above.
"""
import json
import os
import re
import sys
import time
import uuid

from harness import check, expect
from harness.pods import (ASSIGNMENT, FAKE_NODE_LEVELS, HOST_LABEL, RACK_LABEL, apply_patch,
                          job_pod, node_selector)
from harness.webhook import WebhookApiEnv, main_against_api, metric, start_daemon

NS = "team-a"


def overwrite_middle(path):
    """4 KiB of 0xA5 at half the file: a disk fault, a bad restore."""
    with open(path, "r+b") as fh:
        fh.seek(os.path.getsize(path) // 2)
        fh.write(b"\xa5" * 4096)


def truncate_half(path):
    os.truncate(path, os.path.getsize(path) // 2)


def overwrite_page_heads(path):
    """0xA5 over the first 16 bytes of every 4 KiB page of the file's second
    half: any read of those pages fails SQLite's checks."""
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        for at in range(size // 2 // 4096 * 4096, size, 4096):
            fh.seek(at)
            fh.write(b"\xa5" * 16)


CORRUPT = {"overwritten": overwrite_middle, "truncated": truncate_half,
           "running": overwrite_page_heads}


def start(api, binary, name):
    w = start_daemon(api, binary, name, ["--levels", FAKE_NODE_LEVELS, "--policy", "gate",
                                         "--log-format", "json"])
    w.name = name
    return w


def send(api, w, pod, bind=True):
    """pod's AdmissionReview to w; the patched pod created (bound to the host
    of its nodeSelector when bind). Returns the created pod."""
    resp = w.admit(str(uuid.uuid4()), pod)
    expect(resp.get("allowed") is True, "%s: allowed: %r" % (pod["metadata"], resp))
    out = apply_patch(resp, pod)
    host = node_selector(out).get(HOST_LABEL)
    expect(host is not None, "placed on a host: %r" % out["spec"])
    if bind:
        out["spec"]["nodeName"] = host
    return api.create("/api/v1/namespaces/%s/pods" % NS, out)


def assigned_hosts(pod):
    """The hosts of a placed pod's assignment annotation (Kueue's
    TopologyAssignment: levels, then domains of values)."""
    a = json.loads(pod["metadata"]["annotations"][ASSIGNMENT])
    i = a["levels"].index(HOST_LABEL)
    out = set()
    for s in a.get("slices", [a]):
        for d in s.get("domains", []):
            out.add(d["values"][i])
    if not out and "values" in str(a):
        raise AssertionError("no hosts read from %r" % a)
    return out


def wait_for(pred, timeout):
    t0 = time.monotonic()
    v = pred()
    while not v and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
        v = pred()
    return v


def corrupt_while_running(api, w1, ws, db):
    """The file damaged under a running webhook (its WAL checkpointed into
    it first): requests that read the damaged pages fail, and the webhook
    exits 1 so that its restart heals the file."""
    time.sleep(2.5)  # the WAL copied into the file (a checkpoint a second)
    overwrite_page_heads(db)
    # Pod events: the filler commits, so the request connection reads the
    # file again instead of its page cache.
    api.admin("load", {"resource": "pods", "count": 2, "gpus": 8, "namespace": "ml2"})
    warned = []
    for i in range(5):
        if w1.proc.poll() is not None:
            break
        try:
            resp = w1.admit(str(uuid.uuid4()), job_pod("probe%d" % i, 2, 0, ns=NS,
                                                       topology=("required", RACK_LABEL)))
            warned += resp.get("warnings", [])
        except Exception:  # the webhook went away in the middle: what is expected
            break
        time.sleep(0.5)
    rc = wait_for(lambda: w1.proc.poll() is not None and [w1.proc.returncode], 10)
    ws.remove(w1)
    check(rc == [1], "the webhook exited 1 on a corrupt file while running: %r" % rc)
    check(any("malformed" in w for w in warned),
          "a request that met the damage was answered unplaced, with a warning: %r" % warned)
    check("not ready, exiting so that the restart moves it aside" in w1.log(),
          "the exit's reason in the log")


def run(binary, api, ws, corrupt):
    api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
    api.admin("load", {"resource": "pods", "count": 4, "gpus": 8, "namespace": "ml"})
    w1 = start(api, binary, "first")
    ws.append(w1)
    held = [job_pod("held", 4, i, topology=("required", RACK_LABEL), ns=NS) for i in range(4)]
    p0 = send(api, w1, held[0])
    hosts = assigned_hosts(p0)
    expect(len(hosts) == 4, "held: 4 hosts assigned: %r" % hosts)
    check(wait_for(lambda: metric(w1.metrics_text(), "topo_webhook_reservations") == 1, 5),
          "the first webhook holds the reservation")
    time.sleep(0.5)  # its filler stores pod 0
    db = os.path.join(w1.workdir, "topo.db")
    if corrupt == "running":
        corrupt_while_running(api, w1, ws, db)
        size = None
    else:
        ws.remove(w1)
        w1.stop()
        check(w1.proc.returncode == 0, "first: clean exit (rc %r)" % w1.proc.returncode)
        size = os.path.getsize(db)
        print("cache file: %d bytes, then %s" % (size, corrupt))
        CORRUPT[corrupt](db)

    w2 = start(api, binary, "first")  # the same directory: the same --db
    ws.append(w2)
    # The copy (its -wal and -shm, if any, beside it).
    names = [f for f in os.listdir(w1.workdir) if f.startswith("topo.db.corrupt-")]
    copies = [f for f in names if re.fullmatch(r"topo\.db\.corrupt-\d{8}T\d{6}Z", f)]
    check(len(copies) == 1 and all(f in (copies[0], copies[0] + "-wal", copies[0] + "-shm")
                                   for f in names), "one corrupt copy: %r" % names)
    if size is not None:
        check(copies and os.path.getsize(os.path.join(w1.workdir, copies[0])) ==
              (size if corrupt == "overwritten" else size // 2),
              "the copy is the corrupt file whole")
    logged = [json.loads(l) for l in w2.log().splitlines() if l.startswith("{")]
    moved = [l for l in logged if l.get("moved_to")]
    check(len(moved) == 1 and moved[0].get("level") == "error" and moved[0].get("file") == db
          and copies and moved[0].get("moved_to") == os.path.join(w1.workdir, copies[0])
          and moved[0].get("error"), "one error line naming the file and the copy: %r" % moved)
    text = w2.metrics_text()
    check(metric(text, "topo_webhook_cache_recreated_total") == 1,
          "topo_webhook_cache_recreated_total 1")
    check(wait_for(lambda: metric(w2.metrics_text(),
                                  "topo_webhook_reservations_adopted_total") == 1, 5),
          "the reservation adopted again from pod 0's record: %r"
          % metric(w2.metrics_text(), "topo_webhook_reservations_adopted_total"))

    # The rest of "held" on its own hosts; a rival's pods elsewhere.
    got = {node_selector(p0)[HOST_LABEL]}
    for pod in held[1:]:
        out = send(api, w2, pod)
        host = node_selector(out)[HOST_LABEL]
        check(host in hosts and host not in got,
              "held: %s on a host of its assignment not taken: %s" % (host, sorted(hosts)))
        got.add(host)
    rival = [job_pod("rival", 3, i, topology=("required", RACK_LABEL), ns=NS) for i in range(3)]
    for pod in rival:
        out = send(api, w2, pod)
        sel = node_selector(out)
        check(sel.get(HOST_LABEL) not in hosts,
              "rival: %s is not one of held's hosts %s" % (sel, sorted(hosts)))
    # And the new file is a cache: the next start moves nothing.
    ws.remove(w2)
    w2.stop()
    check(w2.proc.returncode == 0, "second: clean exit (rc %r)" % w2.proc.returncode)
    w3 = start(api, binary, "first")
    ws.append(w3)
    check(len([f for f in os.listdir(w1.workdir) if f.startswith("topo.db.corrupt-")]) == 1,
          "a good file is not moved aside")
    check(metric(w3.metrics_text(), "topo_webhook_cache_recreated_total") == 0,
          "topo_webhook_cache_recreated_total 0 on a good file")


def main():
    return main_against_api(
        lambda args: "webhook_corrupt_cache_e2e." + args.corrupt,
        lambda binary, api, ws, args: run(binary, api, ws, args.corrupt),
        lambda ap: ap.add_argument("--corrupt", choices=sorted(CORRUPT), required=True))


if __name__ == "__main__":
    sys.exit(main())
