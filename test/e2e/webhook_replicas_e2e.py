#!/usr/bin/env python3
"""Several topo-webhook replicas give the answer one replica would (issue 13):
two or three replicas, each with its own --db, against one fake_apiserver.py.

  webhook_replicas_e2e.py --webhook build/webhook/topo-webhook (--list | --case NAME | --all)

The driver is the cluster's API server and the round-robin front of the
Service: it sends each pod's AdmissionReview to one replica, applies the
answer's JSON Patch (python3-jsonpatch) and creates the patched pod in the
fake API server, whose list+watch every replica then sees. The replicas
compete for the Lease topo-webhook (short leases: 3 s, renew deadline 2 s,
retry 1 s); the holder, the placer, places every pod and the others
forward to it over HTTPS (--peer-address, --peer-ca-file: the test CA).
Nodes come from /_fake/load (8 GPUs each, 8 nodes per rack, 32 racks per
block); every pod below needs whole hosts unless said.

Cases:
  same_podset_timings   the two pods of one 2 x 8-GPU Job (rack required, not
                        indexed: each claims the next free slot) sent to
                        different replicas 0, 10, 100 and 1,000 ms apart:
                        distinct hosts in one rack, one reservation, slots 0
                        and 1; no host given to two Jobs; the non-placer
                        counted its forwardings;
  pod_group_timings     the same with a 2-pod Kueue pod group (the first pod
                        gated until the group is complete, then released
                        into the group's other slot);
  rival_podsets         two 2 x 8-GPU Jobs whose first pods reach the two
                        replicas 0, 10, 100 and 1,000 ms apart, on a rack with
                        room for one: one is placed, the other gated (never the
                        same hosts twice);
  indexed_job_64        a 64-pod Indexed Job (block required), its pods sent in
                        random order to random replicas, 8 at a time: 64
                        distinct hosts, slots 0..63 matching the completion
                        indices, one assignment;
  capacity_200          200 one-pod PodSets of 2 GPUs sent concurrently through
                        both replicas to 25 nodes (room for 100): exactly 100
                        placed, 100 gated, no host promised over its 8 GPUs;
  placer_killed         three replicas; 4 Jobs of 4 pods half admitted, the
                        placer SIGKILLed, the other halves sent while no placer
                        exists and after: those gated are released by the new
                        placer's ungater into their Jobs' slots; every Job
                        consistent; the new placer adopted the reservations;
  group_placer_killed   a pod group of 4, 2 pods arrived, the placer SIGKILLed,
                        the other 2 sent while no placer exists and after: the
                        new placer counts all 4 and places the group;
  lease_unreachable     the Lease cannot be read or renewed (503 on
                        coordination.k8s.io): the placer steps down within its
                        renew deadline, every pod then gets the no-fit policy
                        (gated: the placer could not be reached), never a
                        placement; once the API server answers again a placer
                        releases them consistently; forwarding metrics;
  placer_gone           two replicas, the placer SIGKILLed: a pod sent to the
                        survivor while the dead placer's Lease runs is gated,
                        then released by the survivor once it places;
  placer_paused         the placer SIGSTOPped: a forwarded pod is gated within
                        the API server's 3 s deadline, the other replica takes
                        over; the old one resumed gets a PodSet's first pod
                        while the new one gets a rival's (room for one): never
                        both placed;
  forged_record         a pod created around the webhook with a reservation
                        record changed after signing (every host held): no
                        replica adopts it, a real PodSet is placed after it;
  serving_key_rotated   replica a (serving key K1, --record-key-file R) places
                        pod 0 of a 2-pod Job and stops; the serving key and
                        certificate are rotated (K2); replica b (K2, the same
                        R) takes over, adopts the reservation and places pod 1
                        in it (same reservation, same rack, slot 1); a replica
                        with K2 and no record key adopts nothing;
  record_key_rotated    a signs with R1; b runs with --record-key-file R2
                        --record-key-file R1: it adopts a's reservation and
                        signs its own records with R2; a replica with R2 alone
                        does not adopt a's record, and adopts b's;
  slow_placer           the placer answers, but only after 3 s (a fake placer:
                        a Lease names it, it speaks the forward's HTTPS wire
                        format); the chart's 2 s timeout and 4 threads: a
                        burst of topology pods (forwarded) and pass-through
                        pods at once to the replica: every pass-through pod
                        answered under 0.5 s, every topology pod within 2 s
                        (gated), the circuit opens after 3 slow forwards,
                        later topology pods are answered at once without
                        asking; once the placer answers fast again the trial
                        after the 5 s cool-down closes it (issue 33 item 8);
  queued_deadline       forwards with 30 s timeouts (capped at 4 s) hold every
                        thread of the defer pool and its queue; a 2 s topology
                        pod is answered before its deadline (outcome deadline,
                        deferred expired), the placer not asked;
  invalid_answer        a placer answering 200 with garbage, another uid's
                        answer, JSON that is no AdmissionReview: not relayed,
                        the no-fit answer, outcome invalid, the circuit opens;
                        every forward carries timeout= and deadlineUnixMs=;
  paused_placer_late    the placer SIGSTOPped past a forward's deadline, then
                        resumed: the late forward stores nothing (deadline
                        exceeded), no reservation for the pod admitted
                        unplaced;
  partition             the placer cut off from the API server (its client
                        certificate's requests reset, its watches closed): it
                        steps down, the other replica takes the Lease and
                        places; pods sent to the partitioned replica are gated,
                        never placed on its stale view; after the partition
                        heals every PodSet is consistent.
"""

import concurrent.futures
import hashlib
import hmac
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

from harness import FAILURES, check, expect, registry, run_cases
from harness.pods import (ASSIGNMENT, BLOCK_LABEL, FAKE_NODE_LEVELS, HOST_LABEL, NS,
                          RACK_LABEL, WAIT_GATE, WAIT_REASON, apply_patch, gates_of, job_pod,
                          make_pod, node_selector, review)
from harness.webhook import Webhook, WebhookApiEnv, free_port, metric

CASES, _case = registry()


def case(fn):
    """A case of the table: it fails when it raised or when any of its
    check()s failed (each is printed as it happens)."""
    def run(env):
        n = len(FAILURES)
        fn(env)
        expect(len(FAILURES) == n, "%d checks failed" % (len(FAILURES) - n))
    run.__name__ = fn.__name__
    return _case(run)


LEASE = "topo-webhook"
RESERVATION = "topology.topo.io/reservation"
SLOT = "topology.topo.io/slot"
RESERVATION_SPEC = "topology.topo.io/reservation-spec"
GPU = "nvidia.com/gpu"
GPUS_PER_NODE = 8
LEASE_FLAGS = ["--lease-duration", "3", "--lease-renew-deadline", "2",
               "--lease-retry-period", "1"]


class Env(WebhookApiEnv):
    """The fake API server (bearer token, and client certificates for the
    partition case) and the replicas started against it."""

    PREFIX = "topo-replicas-e2e-"

    def __init__(self, binary, keep):
        super().__init__(keep)
        self.bin = binary
        self.replicas = []
        self.nodes = {}
        self.lock = threading.Lock()

    def server_args(self):
        return ["--token-file", self.path("token"), "--client-ca", self.path("ca.pem")]

    def start_replica(self, name, kubeconfig=None, policy="gate", extra=(), tls=None, wait=True,
                      lease_flags=None):
        """A replica (its log and --db in the directory name): its
        --peer-address is its own HTTPS port; kubeconfig default the token's;
        extra: more flags; tls: (certificate, key) instead of the PKI's;
        wait: return once it is ready (else see Webhook.ready());
        lease_flags: instead of LEASE_FLAGS."""
        port = free_port()
        workdir = self.path(name)
        w = Webhook(self.bin, self.dir, workdir, [
            "--kubeconfig", kubeconfig or self.kubeconfig,
            "--db", os.path.join(workdir, "topo.db"),
            "--levels", FAKE_NODE_LEVELS, "--policy", policy, "--ungate-interval", "1",
            "--leader-elect", "true", "--log-format", "text",
            "--peer-address", "127.0.0.1:%d" % port, "--peer-ca-file", self.path("ca.pem"),
            *(LEASE_FLAGS if lease_flags is None else lease_flags), *extra], port=port, tls=tls,
            wait=wait)
        self.procs.append(w.proc)
        w.name = name
        self.replicas.append(w)
        return w

    def cert_kubeconfig(self):
        """A kubeconfig whose user is the test client certificate: its
        requests are the fake's identity "cert:...", which a fault can single
        out (the partition)."""
        return self.write_kubeconfig("kubeconfig-cert", user={
            "client-certificate": self.path("client.pem"),
            "client-key": self.path("client.key")})

    def alive(self):
        return [w for w in self.replicas if w.proc.poll() is None]

    def close(self):
        for w in self.replicas:
            w.stop()
        super().close()


def on_failure(env):
    for w in env.replicas:
        print("--- %s log (tail) ---\n%s" % (w.name, w.log()[-5000:]))


# ------------------------------------------------------------------ the cluster

def load_nodes(env, count):
    """count generated nodes (8 GPUs, 8 per rack); env.nodes: name -> labels."""
    env.admin("load", {"resource": "nodes", "count": count, "gpus": GPUS_PER_NODE,
                       "nodes_per_rack": 8})
    env.nodes = {n["metadata"]["name"]: n["metadata"]["labels"]
                 for n in env.items("/api/v1/nodes")}
    expect(len(env.nodes) == count, "%d nodes loaded: %d" % (count, len(env.nodes)))
    return env.nodes


def racks(env):
    """Rack -> its hosts, sorted."""
    out = {}
    for name, labels in sorted(env.nodes.items()):
        out.setdefault(labels[RACK_LABEL], []).append(name)
    return out


def fill_all(env):
    """One bound 8-GPU pod on every node (namespace filler): the cluster full."""
    env.admin("load", {"resource": "pods", "count": len(env.nodes), "gpus": GPUS_PER_NODE,
                       "namespace": "filler"})
    bound = {p["spec"].get("nodeName") for p in env.items("/api/v1/namespaces/filler/pods")}
    expect(bound == set(env.nodes), "filler pods cover every node")


def free_hosts(env, hosts):
    for p in env.items("/api/v1/namespaces/filler/pods"):
        if p["spec"].get("nodeName") in hosts:
            env.delete("/api/v1/namespaces/filler/pods/" + p["metadata"]["name"])


# ------------------------------------------------------------------ the placer

def lease(env):
    status, out = env.request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (env.NAMESPACE, LEASE))
    return out if status == 200 else None


def placer_flags(ws):
    out = []
    for w in ws:
        try:
            out.append(w.metrics().get("topo_webhook_placer"))
        except OSError:
            out.append(None)
    return out


def placer_of(ws):
    """The one replica of ws whose topo_webhook_placer is 1, the others 0."""
    flags = placer_flags(ws)
    if flags.count(1) == 1 and flags.count(0) == len(ws) - 1:
        return ws[flags.index(1)]
    return None


def wait_placer(env, ws=None, timeout=15):
    """Waits for exactly one placer among ws (default the live replicas) and
    checks the Lease names it (holderIdentity <hostname>@127.0.0.1:PORT, its
    --peer-address: no pid, so that a container restarted in its pod takes
    its own Lease back at once)."""
    ws = ws or env.alive()
    t0 = time.monotonic()
    p = None
    while time.monotonic() - t0 < timeout:
        p = placer_of(ws)
        if p is not None:
            break
        time.sleep(0.1)
    expect(p is not None, "exactly one placer among %s within %d s: %r"
           % ([w.name for w in ws], timeout, placer_flags(ws)))
    holder = ((lease(env) or {}).get("spec") or {}).get("holderIdentity", "")
    want = "%s@127.0.0.1:%d" % (socket.gethostname(), p.port)
    expect(holder == want, "the Lease %s names the placer %s (%s): %r"
           % (LEASE, p.name, want, holder))
    print("placer: %s after %.1f s" % (p.name, time.monotonic() - t0))
    return p


# ------------------------------------------------------------------ the front

def send(env, w, pod, create=True, dry_run=False, timeout=None):
    """What the API server does with one pod: its AdmissionReview to replica
    w (timeout: the API server's ?timeout=, default 10s), the answer's patch
    applied, the pod created (unless dry_run or not create). Returns the
    patched pod."""
    uid = str(uuid.uuid4())
    resp = w.admit(uid, pod, dry_run=dry_run, timeout=timeout)
    expect(resp.get("allowed") is True, "%s via %s: allowed: %r"
           % (pod["metadata"].get("name"), w.name, resp))
    out = apply_patch(resp, pod)
    out["metadata"].setdefault("annotations", {})
    out["_via"] = w.name
    if create and not dry_run:
        body = {k: v for k, v in out.items() if not k.startswith("_")}
        env.create("/api/v1/namespaces/%s/pods" % out["metadata"]["namespace"], body)
    return out


def send_at(env, jobs):
    """jobs: [(delay s, replica, pod)]: each sent at its delay after now, in
    its own thread. Returns the patched pods in the same order."""
    t0 = time.monotonic()
    out = [None] * len(jobs)
    errors = []

    def run(i, delay, w, pod):
        time.sleep(max(0.0, t0 + delay - time.monotonic()))
        try:
            out[i] = send(env, w, pod)
        except Exception as e:  # reported below, with the others
            errors.append("%s: %r" % (pod["metadata"]["name"], e))

    threads = [threading.Thread(target=run, args=(i, *j)) for i, j in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expect(not errors, "sends failed: %s" % errors)
    return out


def send_many(env, pairs, workers):
    """pairs: [(replica, pod)] sent by `workers` threads at once (the API
    server's concurrent admissions). Returns the patched pods in order."""
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        return list(ex.map(lambda wp: send(env, *wp), pairs))


def rack_job_pod(job, size, index, rack=None, gpus=GPUS_PER_NODE, level=RACK_LABEL,
                 indexed=True):
    """Pod `index` of Job `job` (size pods, gpus each, level required), named
    job-index; rack: pinned there by the pod's own nodeSelector; indexed:
    with its completion index (else it claims the next free slot)."""
    pod = job_pod(job, size, index if indexed else None, gpus=gpus,
                  topology=("required", level), named=indexed, restart_policy="Never",
                  limits={GPU: str(gpus)})
    if not indexed:
        del pod["metadata"]["generateName"]
        pod["metadata"]["name"] = "%s-%d" % (job, index)
    if rack is not None:
        pod["spec"]["nodeSelector"] = {RACK_LABEL: rack}
    return pod


def group_pod(group, size, i):
    """Pod `i` of Kueue pod group `group` of size 8-GPU workers, rack
    required: gated until the group is complete, then placed as a whole."""
    return make_pod(name="%s-%d" % (group, i), labels={"kueue.x-k8s.io/pod-group-name": group},
                    annotations={"kueue.x-k8s.io/pod-group-total-count": str(size),
                                 "kueue.x-k8s.io/podset-required-topology": RACK_LABEL},
                    requests={GPU: str(GPUS_PER_NODE), "cpu": "4"},
                    limits={GPU: str(GPUS_PER_NODE)}, restart_policy="Never")


# ------------------------------------------------------------------ checks

def info(env, pod):
    """What a patched (or stored) pod says about its placement."""
    ann = pod["metadata"].get("annotations") or {}
    sel = node_selector(pod)
    host = sel.get(HOST_LABEL)
    return {"name": pod["metadata"]["name"], "gated": WAIT_GATE in gates_of(pod),
            "host": host, "rack": env.nodes.get(host, {}).get(RACK_LABEL),
            "assignment": ann.get(ASSIGNMENT), "reservation": ann.get(RESERVATION),
            "slot": ann.get(SLOT), "reason": ann.get(WAIT_REASON),
            "spec": ann.get(RESERVATION_SPEC), "via": pod.get("_via")}


def check_podset(env, what, pods, size, indices=None, level=RACK_LABEL):
    """The pods of one PodSet all placed consistently: distinct hosts in one
    domain of `level`, one assignment whose domains are exactly those hosts,
    one reservation, distinct slots (the completion indices when given)."""
    infos = [info(env, p) for p in pods]
    ok = check(all(not i["gated"] and i["host"] for i in infos),
               "%s: every pod placed on a host: %r" % (what, infos))
    hosts = [i["host"] for i in infos]
    ok &= check(len(set(hosts)) == size, "%s: %d distinct hosts: %r" % (what, size, hosts))
    domains = {env.nodes.get(h, {}).get(level) for h in hosts}
    ok &= check(len(domains) == 1 and None not in domains,
                "%s: one %s: %r" % (what, level, domains))
    assignments = {i["assignment"] for i in infos}
    reservations = {i["reservation"] for i in infos}
    ok &= check(len(assignments) == 1 and None not in assignments,
                "%s: one assignment: %r" % (what, assignments))
    ok &= check(len(reservations) == 1 and None not in reservations,
                "%s: one reservation: %r" % (what, reservations))
    slots = [i["slot"] for i in infos]
    want = [str(i) for i in indices] if indices is not None else None
    ok &= check(len(set(slots)) == size and None not in slots and (want is None or slots == want),
                "%s: distinct slots%s: %r" % (what, " = indices" if want else "", slots))
    if len(assignments) == 1 and None not in assignments:
        doc = json.loads(next(iter(assignments)))
        counts = {}
        for d in doc.get("domains", []):
            counts[d["values"][-1]] = counts.get(d["values"][-1], 0) + d["count"]
        ok &= check(doc.get("levels", [None])[-1] == HOST_LABEL and
                    sorted(counts) == sorted(hosts) and sum(counts.values()) == size,
                    "%s: the assignment's hosts are the pods' hosts: %r vs %r"
                    % (what, doc, sorted(hosts)))
    return ok


def stored(env, names, ns=NS):
    out = []
    for n in names:
        p = env.pod(ns, n)
        expect(p is not None, "pod %s/%s stored" % (ns, n))
        out.append(p)
    return out


def wait_ungated(env, names, timeout, ns=NS):
    """Polls the API server until none of the pods carries the gate; the
    pods as stored (checked: all ungated)."""
    t0 = time.monotonic()
    while True:
        pods = stored(env, names, ns)
        left = [p["metadata"]["name"] for p in pods if WAIT_GATE in gates_of(p)]
        if not left or time.monotonic() - t0 > timeout:
            break
        time.sleep(0.2)
    check(not left, "ungated within %d s: still gated %r" % (timeout, left))
    print("ungated after %.1f s" % (time.monotonic() - t0))
    return pods


def check_capacity(env):
    """From the API server: no host holds more GPUs than it has, counting
    bound pods on their node and placed (ungated) pods on their nodeSelector
    host. Returns {host: GPUs}."""
    used = {}
    for p in env.items("/api/v1/pods"):
        if WAIT_GATE in gates_of(p):
            continue
        host = p["spec"].get("nodeName") or node_selector(p).get(HOST_LABEL)
        if host is None:
            continue
        gpus = sum(int(c.get("resources", {}).get("requests", {}).get(GPU, "0"))
                   for c in p["spec"]["containers"])
        used[host] = used.get(host, 0) + gpus
    over = {h: g for h, g in used.items() if g > GPUS_PER_NODE}
    check(not over, "no host promised beyond its %d GPUs: %r" % (GPUS_PER_NODE, over))
    return used


def forwarded(w, outcome=""):
    """topo_webhook_forwarded_total over the outcomes whose label contains outcome."""
    return metric(w.metrics_text(), "topo_webhook_forwarded_total",
                  'outcome="%s' % outcome if outcome else "")


def not_placer_reason(what, i):
    """A pod gated because no placer answered: the reason says so."""
    check(i["gated"] and i["reason"] and "placer" in i["reason"],
          "%s: gated, the reason naming the placer: %r" % (what, i))


# ------------------------------------------------------------------ cases

TIMINGS_MS = (0, 10, 100, 1000)


@case
def same_podset_timings(env):
    load_nodes(env, 16)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    placer = wait_placer(env)
    other = ws[1 - ws.index(placer)]
    all_hosts = []
    for k, ms in enumerate(TIMINGS_MS):
        job = "same-%d" % ms
        # Alternate which replica sees the first pod.
        first, second = (ws[k % 2], ws[1 - k % 2])
        # Not indexed: each pod claims the next free slot, which only one
        # set of reservations can keep apart.
        pods = send_at(env, [(0, first, rack_job_pod(job, 2, 0, indexed=False)),
                             (ms / 1000.0, second, rack_job_pod(job, 2, 1, indexed=False))])
        if check_podset(env, "%s (%s then %s, %d ms)" % (job, first.name, second.name, ms),
                        pods, 2):
            all_hosts += [info(env, p)["host"] for p in pods]
        for p in pods:
            check(RESERVATION_SPEC in p["metadata"]["annotations"],
                  "%s: carries %s" % (p["metadata"]["name"], RESERVATION_SPEC))
    check(len(all_hosts) == len(set(all_hosts)), "no host given to two Jobs: %r" % all_hosts)
    check_capacity(env)
    sent_to_other = len(TIMINGS_MS)
    check(forwarded(other) >= sent_to_other and forwarded(other, "answered") >= sent_to_other,
          "%s forwarded its %d pods to the placer: %s" % (other.name, sent_to_other, [
              l for l in other.metrics_text().splitlines() if "forwarded" in l]))
    check(forwarded(placer) == 0, "the placer forwards nothing")


@case
def pod_group_timings(env):
    """The issue's first scenario as it was found: a 2-pod Kueue pod group
    whose pods reach different replicas. The first pod is gated until the
    group is complete; the second places the group; the ungater releases
    the first into the other slot."""
    load_nodes(env, 16)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    wait_placer(env)
    all_hosts = []
    for k, ms in enumerate(TIMINGS_MS):
        group = "grp-%d" % ms
        first, second = (ws[k % 2], ws[1 - k % 2])
        out = send_at(env, [(0, first, group_pod(group, 2, 0)),
                            (ms / 1000.0, second, group_pod(group, 2, 1))])
        check(sum(info(env, p)["gated"] for p in out) == 1,
              "%s: one pod gated until the group is complete, one placed: %r"
              % (group, [info(env, p) for p in out]))
        pods = wait_ungated(env, ["%s-%d" % (group, i) for i in (0, 1)], 10)
        if check_podset(env, "%s (%s then %s, %d ms)" % (group, first.name, second.name, ms),
                        pods, 2):
            all_hosts += [info(env, p)["host"] for p in pods]
    check(len(all_hosts) == len(set(all_hosts)), "no host given to two groups: %r" % all_hosts)
    check_capacity(env)


@case
def rival_podsets(env):
    load_nodes(env, 32)
    fill_all(env)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    wait_placer(env)
    rack_names = sorted(racks(env))
    for k, ms in enumerate(TIMINGS_MS):
        rack = rack_names[k]
        freed = racks(env)[rack][:2]
        free_hosts(env, freed)
        wait_room(env, ws[k % 2], rack, "rival-probe-%d" % k)
        x, y = "rival-%d-x" % ms, "rival-%d-y" % ms
        # The first pods of X and Y reach the two replicas ms apart; then
        # their second pods, each to the other replica.
        firsts = send_at(env, [(0, ws[0], rack_job_pod(x, 2, 0, rack)),
                               (ms / 1000.0, ws[1], rack_job_pod(y, 2, 0, rack))])
        seconds = send_at(env, [(0, ws[1], rack_job_pod(x, 2, 1, rack)),
                                (0, ws[0], rack_job_pod(y, 2, 1, rack))])
        sets = {x: [firsts[0], seconds[0]], y: [firsts[1], seconds[1]]}
        placed = [j for j, ps in sets.items() if not any(info(env, p)["gated"] for p in ps)]
        gated = [j for j, ps in sets.items() if all(info(env, p)["gated"] for p in ps)]
        what = "rack %s, first pods %d ms apart" % (rack, ms)
        if not check(len(placed) == 1 and len(gated) == 1,
                     "%s: one Job placed, the other gated: %r" % (what, {
                         j: [(info(env, p)["host"], info(env, p)["gated"]) for p in ps]
                         for j, ps in sets.items()})):
            continue
        check_podset(env, "%s: %s" % (what, placed[0]), sets[placed[0]], 2, indices=[0, 1])
        hosts = sorted(info(env, p)["host"] for p in sets[placed[0]])
        check(hosts == sorted(freed), "%s: on the freed hosts %r: %r" % (what, freed, hosts))
    check_capacity(env)


def wait_room(env, w, rack, job, timeout=10):
    """Until a dry-run 2 x 8-GPU pod pinned to rack is placed (the replicas'
    caches saw the freed hosts): nothing is stored."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if not info(env, send(env, w, rack_job_pod(job, 2, 0, rack), dry_run=True))["gated"]:
            return
        time.sleep(0.1)
    expect(False, "rack %s: no room seen within %d s" % (rack, timeout))


@case
def indexed_job_64(env):
    load_nodes(env, 64)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    wait_placer(env)
    rng = random.Random(13)
    order = list(range(64))
    rng.shuffle(order)
    pairs = [(rng.choice(ws), rack_job_pod("big", 64, i, level=BLOCK_LABEL)) for i in order]
    t0 = time.monotonic()
    send_many(env, pairs, 8)
    print("64 pods admitted in %.1f s" % (time.monotonic() - t0))
    pods = stored(env, ["big-%d" % i for i in range(64)])
    check_podset(env, "big", pods, 64, indices=list(range(64)), level=BLOCK_LABEL)
    vias = {}
    for w, p in pairs:
        vias[w.name] = vias.get(w.name, 0) + 1
    print("pods per replica: %r" % vias)
    check_capacity(env)


@case
def capacity_200(env):
    load_nodes(env, 25)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    wait_placer(env)
    pairs = [(ws[i % 2], rack_job_pod("small-%03d" % i, 1, 0, gpus=2)) for i in range(200)]
    t0 = time.monotonic()
    out = send_many(env, pairs, 16)
    print("200 pods admitted in %.1f s" % (time.monotonic() - t0))
    infos = [info(env, p) for p in out]
    placed = [i for i in infos if not i["gated"]]
    gated = [i for i in infos if i["gated"]]
    check(len(placed) == 100 and len(gated) == 100,
          "exactly 100 placed, 100 gated: %d placed, %d gated" % (len(placed), len(gated)))
    check(all(i["host"] for i in placed), "every placed pod names a host")
    used = check_capacity(env)
    check(sum(used.values()) == 200, "the placed pods hold 200 GPUs: %r" % sum(used.values()))
    for w in ws:
        by = [i for i in infos if i["via"] == w.name]
        print("%s: %d placed, %d gated" % (w.name, sum(not i["gated"] for i in by),
                                          sum(i["gated"] for i in by)))


@case
def placer_killed(env):
    load_nodes(env, 32)
    ws = [env.start_replica("r%d" % i) for i in range(3)]
    placer = wait_placer(env)
    jobs = ["kill-%d" % j for j in range(4)]
    # Pods 0 and 1 of each Job, round robin over the three replicas.
    first = [(ws[n % 3], rack_job_pod(job, 4, i)) for n, (job, i) in
             enumerate((job, i) for job in jobs for i in (0, 1))]
    send_many(env, first, 4)
    before = {p["metadata"]["name"]: info(env, p) for p in
              stored(env, ["%s-%d" % (j, i) for j in jobs for i in (0, 1)])}
    check(all(not i["gated"] for i in before.values()), "the first halves placed: %r" % before)
    time.sleep(0.5)  # the other replicas' watches see the created pods
    placer.stop(signal.SIGKILL)
    killed_at = time.monotonic()
    rest = [w for w in ws if w is not placer]
    # Pods 2 and 3, one every 0.6 s over ~5 s: the first ones while the
    # dead placer's Lease still runs (no placer), the last ones after.
    second = [(0.6 * n, rest[n % 2], rack_job_pod(job, 4, i))
              for n, (job, i) in enumerate((job, i) for job in jobs for i in (2, 3))]
    out = send_at(env, second)
    at_admission = [info(env, p) for p in out]
    gated_first = [i for i in at_admission if i["gated"]]
    print("after the kill: %d of 8 gated at admission (%.1f s)"
          % (len(gated_first), time.monotonic() - killed_at))
    check(at_admission[0]["gated"], "a pod sent right after the kill is gated: %r"
          % at_admission[0])
    for i in gated_first:
        not_placer_reason(i["name"], i)
    new = wait_placer(env, rest)
    names = ["%s-%d" % (j, i) for j in jobs for i in range(4)]
    wait_ungated(env, names, 15)
    all_hosts = []
    for j in jobs:
        pods = stored(env, ["%s-%d" % (j, i) for i in range(4)])
        if check_podset(env, j, pods, 4, indices=[0, 1, 2, 3]):
            all_hosts += [info(env, p)["host"] for p in pods]
        for p in pods[:2]:
            i = info(env, p)
            check(i["host"] == before[i["name"]]["host"],
                  "%s kept its host: %r" % (i["name"], i))
    check(len(all_hosts) == len(set(all_hosts)), "no host given to two Jobs: %r" % all_hosts)
    check_capacity(env)
    m = new.metrics_text()
    check(metric(m, "topo_webhook_reservations_adopted_total") >= len(jobs),
          "the new placer adopted the %d reservations: %r"
          % (len(jobs), metric(m, "topo_webhook_reservations_adopted_total")))
    check(metric(m, "topo_webhook_placer_rebuild_seconds") > 0,
          "the new placer waited for the old one's pods before placing: %r"
          % metric(m, "topo_webhook_placer_rebuild_seconds"))
    check(metric(m, "topo_webhook_placer_takeovers_total") == 1, "the new placer took over once")


@case
def group_placer_killed(env):
    """A pod group of 4 with 2 pods arrived (gated until it is complete,
    recorded by the placer) when the placer is SIGKILLed; its other 2 pods
    arrive while no placer exists and after: the new placer must count all
    4 (they are in the API server, gated, with their podset annotation) and
    release the group into one rack."""
    load_nodes(env, 16)
    ws = [env.start_replica("r%d" % i) for i in range(3)]
    placer = wait_placer(env)
    for i in (0, 1):
        check(info(env, send(env, ws[i], group_pod("grp", 4, i)))["gated"],
              "grp-%d gated until its group is complete" % i)
    time.sleep(0.5)  # the other replicas' watches see the created pods
    placer.stop(signal.SIGKILL)
    rest = [w for w in ws if w is not placer]
    send_at(env, [(0, rest[0], group_pod("grp", 4, 2)), (4.5, rest[1], group_pod("grp", 4, 3))])
    wait_placer(env, rest)
    pods = wait_ungated(env, ["grp-%d" % i for i in range(4)], 15)
    check_podset(env, "grp", pods, 4)
    check_capacity(env)


@case
def lease_unreachable(env):
    load_nodes(env, 16)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    placer = wait_placer(env)
    other = ws[1 - ws.index(placer)]
    before = forwarded(other)
    env.admin("fault", {"kind": "status", "code": 503, "count": 1000000,
                        "path": "/apis/coordination.k8s.io/"})
    t0 = time.monotonic()
    while time.monotonic() - t0 < 6 and placer_flags(ws) != [0, 0]:
        time.sleep(0.1)
    flags = placer_flags(ws)
    check(flags == [0, 0], "no placer %.1f s after the Lease became unreachable: %r"
          % (time.monotonic() - t0, flags))
    print("the placer stepped down after %.1f s" % (time.monotonic() - t0))
    # Every pod now: the no-fit policy, never a placement.
    pods = send_at(env, [(0, other, rack_job_pod("cut", 2, 0)),
                         (0, placer, rack_job_pod("cut", 2, 1)),
                         (0, ws[0], rack_job_pod("cut1", 1, 0))])
    for p in pods:
        not_placer_reason(p["metadata"]["name"], info(env, p))
    check(forwarded(other) > before, "%s counted its forwarding attempts" % other.name)
    failed = forwarded(other) - forwarded(other, "answered")
    check(failed >= 1, "%s counted a forwarding that failed: %s" % (other.name, [
        l for l in other.metrics_text().splitlines() if "forwarded" in l]))
    print("\n".join(l for l in other.metrics_text().splitlines()
                    if l.startswith("topo_webhook_forwarded_total")))
    env.admin("faults/clear", {})
    wait_placer(env, ws, timeout=10)
    stored_pods = wait_ungated(env, ["cut-0", "cut-1", "cut1-0"], 15)
    check_podset(env, "cut", stored_pods[:2], 2, indices=[0, 1])
    check_capacity(env)


@case
def ready_knows_placer(env):
    """Issue 27: two replicas started at once, each sent a topology pod the
    moment its /readyz says 200. A replica used to be ready once its caches
    were synced, before it had read the Lease: it then answered with the
    no-fit policy ("no replica holds Lease") although a placer existed. The
    fake API server holds each replica's first Lease read 1.8 s (under the
    elector's 2 s timeout; only those two, or a held renewal would make the
    placer step down), so that the caches are synced well before: now
    neither replica is ready before it knows who places, and both pods are
    placed."""
    load_nodes(env, 16)
    env.admin("fault", {"kind": "delay", "count": 2, "delay_ms": 1800, "method": "GET",
                        "path": "/apis/coordination.k8s.io/"})
    ws = [env.start_replica("r0", wait=False), env.start_replica("r1", wait=False)]
    out = {}

    def first_pod(w):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20 and w.proc.poll() is None and not w.ready():
            time.sleep(0.02)
        out[w.name + "_ready_after"] = time.monotonic() - t0
        try:
            out[w.name] = send(env, w, rack_job_pod("first-" + w.name, 1, 0))
        except Exception as e:  # reported below
            out[w.name] = e

    threads = [threading.Thread(target=first_pod, args=(w,)) for w in ws]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w in ws:
        p = out.get(w.name)
        print("%s ready after %.2f s" % (w.name, out.get(w.name + "_ready_after", -1)))
        if not check(isinstance(p, dict), "%s answered its first pod: %r" % (w.name, p)):
            continue
        i = info(env, p)
        check(not i["gated"] and i["host"],
              "%s's first pod, sent once it was ready, is placed (not the no-fit policy "
              "for want of a placer): %r" % (w.name, i))
    wait_placer(env, ws)


@case
def placer_gone(env):
    load_nodes(env, 16)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    placer = wait_placer(env)
    survivor = ws[1 - ws.index(placer)]
    send(env, placer, rack_job_pod("gone", 2, 0))
    time.sleep(0.5)  # the survivor's watch sees the pod
    placer.stop(signal.SIGKILL)
    before = forwarded(survivor) - forwarded(survivor, "answered")
    late = send(env, survivor, rack_job_pod("gone", 2, 1))
    not_placer_reason("gone-1 (placer dead, its Lease running)", info(env, late))
    check(forwarded(survivor) - forwarded(survivor, "answered") > before,
          "the survivor counted the failed forwarding: %s" % [
              l for l in survivor.metrics_text().splitlines() if "forwarded" in l])
    wait_placer(env, [survivor], timeout=10)
    pods = wait_ungated(env, ["gone-0", "gone-1"], 15)
    check_podset(env, "gone", pods, 2, indices=[0, 1])
    m = survivor.metrics_text()
    check(metric(m, "topo_webhook_reservations_adopted_total") >= 1,
          "the survivor adopted gone's reservation")


@case
def placer_paused(env):
    """The placer frozen (SIGSTOP: a long GC-like pause, or a VM stalled):
    a request forwarded to it is answered by the no-fit policy before the
    API server's deadline; the other replica takes the Lease. Then the old
    placer resumes (SIGCONT) and at once gets the first pod of a PodSet
    while the new placer gets a rival's, on a rack with room for one: the
    old placer must not place on its own any more (never both placed)."""
    load_nodes(env, 16)
    fill_all(env)
    rack = sorted(racks(env))[0]
    freed = racks(env)[rack][:2]
    free_hosts(env, freed)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    old = wait_placer(env)
    new = ws[1 - ws.index(old)]
    wait_room(env, new, rack, "paused-probe")
    old.proc.send_signal(signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        stuck = send(env, new, rack_job_pod("stuck", 1, 0, rack=sorted(racks(env))[1]),
                     timeout="3s")
        took = time.monotonic() - t0
        not_placer_reason("stuck-0 forwarded to the frozen placer", info(env, stuck))
        check(took < 3, "answered within the API server's 3 s deadline: %.1f s" % took)
        wait_placer(env, [new], timeout=10)
    finally:
        old.proc.send_signal(signal.SIGCONT)
    firsts = send_at(env, [(0, old, rack_job_pod("px", 2, 0, rack)),
                           (0, new, rack_job_pod("py", 2, 0, rack))])
    seconds = send_at(env, [(0, new, rack_job_pod("px", 2, 1, rack)),
                            (0, old, rack_job_pod("py", 2, 1, rack))])
    sets = {"px": [firsts[0], seconds[0]], "py": [firsts[1], seconds[1]]}
    placed = [j for j, ps in sets.items() if not any(info(env, p)["gated"] for p in ps)]
    check(len(placed) <= 1, "never both PodSets placed on the room for one: %r" % {
        j: [(info(env, p)["host"], info(env, p)["reason"]) for p in ps] for j, ps in sets.items()})
    for j in placed:
        check_podset(env, j, sets[j], 2, indices=[0, 1])
    check_capacity(env)
    check(placer_of(ws) is new, "the new placer stays: %r" % placer_flags(ws))


@case
def forged_record(env):
    """A pod created around the webhook (its namespace excluded, or
    failurePolicy Ignore) carrying a reservation record whose JSON was
    changed after signing: a PodSet of 16 pods holding every host. No
    replica adopts it: a real 16-pod PodSet is placed after it."""
    load_nodes(env, 16)
    ws = [env.start_replica("r0"), env.start_replica("r1")]
    wait_placer(env)
    real = send(env, ws[0], rack_job_pod("real", 1, 0, gpus=1))
    ann = real["metadata"]["annotations"]
    sig, _, text = ann.get(RESERVATION_SPEC, "").partition(" ")
    expect(sig and text, "a placed pod carries a signed record: %r" % ann.get(RESERVATION_SPEC))
    time.sleep(1)  # both replicas adopted or made real's reservation
    adopted = [metric(w.metrics_text(), "topo_webhook_reservations_adopted_total") for w in ws]
    rec = json.loads(text)
    rec["podset"] = "team-a/job/uid-forged"
    rec["requests"] = {GPU: GPUS_PER_NODE}
    hosts = sorted(env.nodes)
    forged = rack_job_pod("forged", len(hosts), 0)
    forged["metadata"]["annotations"].update({
        ASSIGNMENT: json.dumps({"levels": [HOST_LABEL], "domains": [
            {"values": [h], "count": 1} for h in hosts]}, separators=(",", ":")),
        RESERVATION: "default.0123456789abcdef", SLOT: "0",
        RESERVATION_SPEC: sig + " " + json.dumps(rec, separators=(",", ":"))})
    env.create("/api/v1/namespaces/%s/pods" % NS, forged)
    time.sleep(1.5)  # the replicas' watches see it
    check([metric(w.metrics_text(), "topo_webhook_reservations_adopted_total") for w in ws]
          == adopted, "the forged record adopted by no replica: %r before" % adopted)
    # 15 hosts have 8 GPUs free, one has 7 (real's pod): had the forged
    # reservation been adopted, none would be.
    out = send_at(env, [(0, ws[i % 2], rack_job_pod("after", 15, i, level=BLOCK_LABEL))
                        for i in range(15)])
    check_podset(env, "after", out, 15, indices=list(range(15)), level=BLOCK_LABEL)
    check_capacity(env)


@case
def partition(env):
    load_nodes(env, 16)
    cut = env.start_replica("r-cut", kubeconfig=env.cert_kubeconfig())
    wait_placer(env, [cut])
    other = env.start_replica("r-other")
    expect(wait_placer(env) is cut, "the first replica stays the placer")
    send(env, other, rack_job_pod("part", 4, 0))
    time.sleep(0.5)
    # The partition: every request of the cut replica reset, its open
    # watches ended (the other replica's reconnect).
    env.admin("fault", {"kind": "reset", "count": 1000000, "auth": "cert:"})
    env.admin("watches/close", {"mode": "close"})
    # Within its renew deadline the cut replica still holds the Lease and
    # may place (nobody else can); then it must stop.
    t0 = time.monotonic()
    while time.monotonic() - t0 < 8 and placer_flags([cut]) != [0]:
        time.sleep(0.1)
    check(placer_flags([cut]) == [0], "the partitioned placer stepped down within 8 s")
    print("the partitioned placer stepped down after %.1f s" % (time.monotonic() - t0))
    new = wait_placer(env, [cut, other], timeout=10)
    check(new is other, "the other replica places during the partition")
    print("placer moved after %.1f s" % (time.monotonic() - t0))
    on_cut = send(env, cut, rack_job_pod("part", 4, 1))
    not_placer_reason("part-1 via the partitioned replica", info(env, on_cut))
    on_other = send(env, other, rack_job_pod("part", 4, 2))
    check(not info(env, on_other)["gated"], "part-2 via the placer: placed")
    env.admin("faults/clear", {})
    send(env, cut, rack_job_pod("part", 4, 3))
    pods = wait_ungated(env, ["part-%d" % i for i in range(4)], 15)
    check_podset(env, "part", pods, 4, indices=[0, 1, 2, 3])
    check_capacity(env)


# ------------------------------------------------------------------ record keys

def record_key(env, name):
    """A record key file as the chart's Secret holds one: 48 random
    characters and no newline."""
    path = env.path(name)
    env.write(path, "".join(random.SystemRandom().choice("abcdefghijklmnopqrstuvwxyz0123456789")
                            for _ in range(48)))
    return path


def rotated_serving_pair(env, name):
    """A new serving key and certificate (the same names, the same CA), as
    cert-manager makes them at a renewal that rotates the key: (cert, key)."""
    key, csr, cert, ext = (env.path(name + s) for s in (".key", ".csr", ".pem", ".ext"))
    env.write(ext, "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                   "extendedKeyUsage=serverAuth\n"
                   "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n")
    for argv in (["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                  "-out", key],
                 ["req", "-new", "-key", key, "-out", csr, "-subj", "/O=topo tests/CN=rotated"],
                 ["x509", "-req", "-in", csr, "-CA", env.path("ca.pem"), "-CAkey",
                  env.path("ca.key"), "-CAcreateserial", "-out", cert, "-days", "2", "-sha256",
                  "-extfile", ext]):
        subprocess.run(["openssl", *argv], check=True, capture_output=True, timeout=30)
    with open(key, "rb") as f1, open(env.path("server.key"), "rb") as f2:
        expect(f1.read() != f2.read(), "the rotated key is another key")
    return cert, key


def adopted(w):
    return metric(w.metrics_text(), "topo_webhook_reservations_adopted_total")


def wait_adopted(w, at_least, timeout=5):
    """w's adopted reservations once at least at_least (or at the timeout)."""
    t0 = time.monotonic()
    n = adopted(w)
    while n < at_least and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
        n = adopted(w)
    return n


def signed_with(pod, key_file):
    """Whether pod's reservation record carries the HMAC-SHA256 of its
    reservation id, assignment and record under the key in key_file (cache.h
    "Adoption": the MAC is over "<id>\n<assignment>\n<record JSON>")."""
    ann = pod["metadata"].get("annotations") or {}
    mac, _, text = ann.get(RESERVATION_SPEC, "").partition(" ")
    msg = "%s\n%s\n%s" % (ann.get(RESERVATION, ""), ann.get(ASSIGNMENT, ""), text)
    with open(key_file, "rb") as f:
        want = hmac.new(f.read(), msg.encode(), hashlib.sha256).hexdigest()
    return bool(mac) and hmac.compare_digest(mac, want)


def place_first_and_stop(env, w, job):
    """Pod 0 of `job` (2 x 8 GPUs, rack required, not indexed) placed by w,
    the only replica, which is then stopped (SIGTERM: it lets the Lease go).
    Its info."""
    wait_placer(env, [w])
    first = info(env, send(env, w, rack_job_pod(job, 2, 0, indexed=False)))
    expect(not first["gated"] and first["reservation"] and first["spec"],
           "%s-0 placed with a signed record: %r" % (job, first))
    w.stop()
    check(w.proc.returncode == 0, "%s stopped cleanly: %r" % (w.name, w.proc.returncode))
    return first


def check_second_in_first(env, job, first, second):
    """Pod 1 placed into pod 0's reservation: same reservation, its rack,
    another host, slot 1."""
    check(not second["gated"], "%s-1 placed: %r" % (job, second))
    check(second["reservation"] == first["reservation"],
          "%s-1 in %s-0's reservation %s: %r" % (job, job, first["reservation"],
                                                 second["reservation"]))
    check(second["rack"] == first["rack"] and second["host"] != first["host"],
          "%s-1 on another host of rack %s: %r" % (job, first["rack"], second))
    check((first["slot"], second["slot"]) == ("0", "1"),
          "slots 0 and 1: %r" % ((first["slot"], second["slot"]),))


@case
def serving_key_rotated(env):
    load_nodes(env, 16)
    rkey = record_key(env, "record-key")
    a = env.start_replica("a", extra=["--record-key-file", rkey])
    first = place_first_and_stop(env, a, "rot")
    # The serving certificate and key renewed (cert-manager's default since
    # 1.18 rotates the key): the new replica serves with K2.
    k2 = rotated_serving_pair(env, "rotated")
    b = env.start_replica("b", extra=["--record-key-file", rkey], tls=k2)
    wait_placer(env, [b])
    check(wait_adopted(b, 1) >= 1, "b (new serving key, same record key) adopted a's "
          "reservation: %r" % adopted(b))
    # Without a record key of its own, the key comes from the serving key:
    # K2 cannot verify what a signed (what every replica did before).
    c = env.start_replica("c", tls=k2)
    time.sleep(1)
    check(adopted(c) == 0, "c (K2, no --record-key-file) adopted nothing: %r" % adopted(c))
    check("will not verify once the serving key is rotated" in c.log(),
          "c warned that its records do not survive a rotation:\n%s" % c.log()[-2000:])
    check("will not verify" not in b.log(), "b (with a record key) did not warn")
    second = info(env, send(env, b, rack_job_pod("rot", 2, 1, indexed=False)))
    check_second_in_first(env, "rot", first, second)
    check_capacity(env)


@case
def record_key_rotated(env):
    load_nodes(env, 16)
    r1, r2 = record_key(env, "record-key-1"), record_key(env, "record-key-2")
    a = env.start_replica("a", extra=["--record-key-file", r1])
    first = place_first_and_stop(env, a, "krot")
    pod0 = stored(env, ["krot-0"])[0]
    check(signed_with(pod0, r1) and not signed_with(pod0, r2), "a signed with R1")
    # The rotation's first step: the new key first, the old one kept.
    b = env.start_replica("b", extra=["--record-key-file", r2, "--record-key-file", r1])
    wait_placer(env, [b])
    check(wait_adopted(b, 1) >= 1, "b (R2, R1) adopted a's reservation: %r" % adopted(b))
    # A replica that dropped R1 too soon cannot read a's record.
    c = env.start_replica("c", extra=["--record-key-file", r2])
    time.sleep(1)
    check(adopted(c) == 0, "c (R2 alone) did not adopt a's R1 record: %r" % adopted(c))
    second = info(env, send(env, b, rack_job_pod("krot", 2, 1, indexed=False)))
    check_second_in_first(env, "krot", first, second)
    pod1 = stored(env, ["krot-1"])[0]
    check(signed_with(pod1, r2) and not signed_with(pod1, r1), "b signs with R2, its first key")
    check(wait_adopted(c, 1) >= 1, "c adopted the reservation from b's R2 record: %r"
          % adopted(c))
    check_capacity(env)


class SlowPlacer:
    """A placer that answers slowly: HTTPS with the test PKI's server
    certificate (the replicas' own, so their peer checks pass), POST
    /mutate?forwardedBy=... with an AdmissionReview, answered allowed (no
    patch) after `delay` seconds. Counts the requests it got and keeps their
    paths. answer: "review" (the AdmissionReview), or what a broken placer
    sends with 200: "garbage" (not JSON), "wrong_uid" (another request's
    answer), "no_review" (JSON, not an AdmissionReview)."""

    def __init__(self, env, delay, answer="review"):
        import http.server
        import ssl
        self.delay = delay
        self.answer = answer
        self.paths = []
        self.got = 0
        self.lock = threading.Lock()
        placer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                review_doc = json.loads(self.rfile.read(n))
                with placer.lock:
                    placer.got += 1
                    placer.paths.append(self.path)
                    delay, answer = placer.delay, placer.answer
                check(self.path.startswith("/mutate?forwardedBy="), "forwarded: %s" % self.path)
                time.sleep(delay)
                uid = review_doc["request"]["uid"]
                doc = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "response": {"uid": uid if answer != "wrong_uid" else "someone-else",
                                    "allowed": True}}
                if answer == "no_review":
                    doc = {"uid": uid, "allowed": True}
                out = json.dumps(doc).encode() if answer != "garbage" else b"\x00garbage{not json"
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass  # the replica gave up: its timeout

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(env.path("server.pem"), env.path("server.key"))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def set_delay(self, delay):
        with self.lock:
            self.delay = delay

    def requests(self):
        with self.lock:
            return self.got

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def timed_admit(w, pod, timeout, conn=None):
    """(seconds, response) of one AdmissionReview to w; response None (a
    failed check) when none came (the connection closed, an error). conn: a
    connection already open (the API server keeps its connections to a
    webhook warm: the time is then the request's alone, no TLS handshake)."""
    uid = str(uuid.uuid4())
    t0 = time.monotonic()
    try:
        if conn is None:
            resp = w.admit(uid, pod, timeout=timeout)
        else:
            status, body, _ = w.post(conn, review(uid, pod), "/mutate?timeout=" + timeout)
            expect(status == 200, "HTTP %d: %r" % (status, body[:300]))
            resp = json.loads(body)["response"]
    except Exception as e:  # counted as a failure with its time
        took = time.monotonic() - t0
        check(False, "%s: no answer after %.2f s: %r" % (pod["metadata"]["name"], took, e))
        return took, None
    return time.monotonic() - t0, resp


def lease_to(env, placer, name):
    """Lease topo-webhook names the fake placer for an hour: replicas forward to it."""
    env.create("/apis/coordination.k8s.io/v1/namespaces/%s/leases" % env.NAMESPACE, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": LEASE, "namespace": env.NAMESPACE},
        "spec": {"holderIdentity": "%s@127.0.0.1:%d" % (name, placer.port),
                 "leaseDurationSeconds": 3600,
                 "renewTime": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())}})


@case
def slow_placer(env):
    """Issue 33 item 8: a slow placer must not take the other replica down
    (before: pass-through pods answered after 4.6 s, topology pods after
    5.1 s with the chart's 2 s timeout)."""
    load_nodes(env, 16)
    placer = SlowPlacer(env, 3.0)
    try:
        lease_to(env, placer, "slow")  # r0 forwards
        w = env.start_replica("r0", extra=["--threads", "4"])
        check(w.metrics().get("topo_webhook_placer") == 0, "r0 does not place")
        topo = [rack_job_pod("slow%d" % i, 1, 0) for i in range(8)]
        plain = [make_pod(name="plain-%d" % i, requests={"cpu": "1"}) for i in range(16)]
        jobs = [(0.0, p) for p in topo] + [(0.2, p) for p in plain]
        times = [None] * len(jobs)
        conns = []
        for _ in jobs:  # warm, as the API server's are
            conns.append(w.conn(timeout=10))
            conns[-1].connect()
        t0 = time.monotonic() + 0.1

        def run(i):
            time.sleep(max(0.0, t0 + jobs[i][0] - time.monotonic()))
            times[i] = timed_admit(w, jobs[i][1], "2s", conns[i])

        with concurrent.futures.ThreadPoolExecutor(len(jobs)) as ex:
            list(ex.map(run, range(len(jobs))))
        for c in conns:
            c.close()
        tt = [t for t, _ in times[:len(topo)]]
        pt = [t for t, _ in times[len(topo):]]
        print("topology answers %s s; pass-through %s s" % (
            ["%.2f" % t for t in tt], ["%.2f" % t for t in pt]))
        check(max(pt) < 0.5, "every pass-through pod answered under 0.5 s: %.2f s" % max(pt))
        check(max(tt) < 2.0, "every topology pod answered within the 2 s timeout: %.2f s"
              % max(tt))
        for (_, resp), pod in zip(times[:len(topo)], topo):
            if resp is not None:
                i = info(env, apply_patch(resp, pod))
                not_placer_reason("%s (the placer slow)" % pod["metadata"]["name"], i)
        m = w.metrics()
        check(m.get("topo_webhook_placer_circuit_open") == 1,
              "the circuit is open: %r" % m.get("topo_webhook_placer_circuit_open"))
        check(m.get("topo_webhook_placer_circuit_openings_total") == 1,
              "opened once: %r" % m.get("topo_webhook_placer_circuit_openings_total"))
        slow = forwarded(w, "deadline")
        check(slow >= 3, "at least 3 forwards timed out (deadline): %r" % slow)
        asked = placer.requests()
        # Open: answered at once, the placer not asked.
        for i in range(3):
            t, resp = timed_admit(w, rack_job_pod("open%d" % i, 1, 0), "2s")
            check(t < 0.3, "open circuit: answered at once: %.2f s" % t)
            if resp is not None:
                not_placer_reason("open%d" % i, info(env, apply_patch(resp, rack_job_pod(
                    "open%d" % i, 1, 0))))
        check(placer.requests() == asked, "the placer not asked while open: %d -> %d"
              % (asked, placer.requests()))
        check(forwarded(w, "circuit_open") >= 3, "counted circuit_open: %r"
              % forwarded(w, "circuit_open"))
        # The placer is fast again; after the cool-down one trial closes it.
        placer.set_delay(0.0)
        opened = time.monotonic()
        time.sleep(max(0.0, opened + 5.2 - time.monotonic()))
        t, resp = timed_admit(w, rack_job_pod("trial", 1, 0), "2s")
        check(resp is not None and resp.get("allowed") is True and "patch" not in resp,
              "the trial answered by the placer (allowed, no patch): %r" % resp)
        check(t < 1.0, "the trial answered promptly: %.2f s" % t)
        check(w.metrics().get("topo_webhook_placer_circuit_open") == 0, "the circuit closed")
        check(forwarded(w, "answered") >= 1, "the trial counted answered")
        log = w.log()
        check(log.count("circuit open") == 1 and log.count("circuit closed") == 1,
              "open and close logged once each")
        # A client gone while its forward waits, then SIGTERM with forwards
        # under way: their connections were suspended, they are answered
        # (or dropped) and the replica exits 0.
        placer.set_delay(1.0)
        c = w.conn(timeout=5)
        c.request("POST", "/mutate?timeout=2s", body=review(str(uuid.uuid4()), rack_job_pod(
            "gone", 1, 0)), headers={"Content-Type": "application/json"})
        c.close()
        late = []
        threads = [threading.Thread(target=lambda i=i: late.append(timed_admit(
            w, rack_job_pod("late%d" % i, 1, 0), "2s"))) for i in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        w.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join()
        check(w.proc.wait(20) == 0, "clean exit on SIGTERM with forwards under way: rc %r"
              % w.proc.returncode)
        for took, resp in late:
            check(resp is not None and resp.get("allowed") is True and took < 2.0,
                  "answered by the placer during the shutdown: %.2f s %r" % (took, resp))
    finally:
        placer.close()


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


@case
def queued_deadline(env):
    """A topology pod whose 2 s deadline comes while it is queued behind
    forwards with longer ones (a second webhook configuration's 30 s) is
    answered before it, outcome deadline, the placer not asked (before:
    HTTP 504 when the long forwards had ended, at 3.7 s here)."""
    load_nodes(env, 16)
    placer = SlowPlacer(env, 60.0)
    try:
        lease_to(env, placer, "stuck")
        # --threads 1: a defer pool of 4 threads and 4 queued jobs; 30 s
        # timeouts capped at 4 s to keep the test short
        w = env.start_replica("r0", extra=["--threads", "1", "--request-timeout", "4"])
        longs = []
        threads = [threading.Thread(target=lambda i=i: longs.append(timed_admit(
            w, rack_job_pod("long%d" % i, 1, 0), "30s"))) for i in range(8)]
        for t in threads:
            t.start()
        check(wait_for(lambda: placer.requests() == 4, 3), "4 forwards under way: %d"
              % placer.requests())
        check(wait_for(lambda: metric(w.metrics_text(), "topo_webhook_deferred_total",
                                      'result="deferred"') == 8, 3), "8 deferred, 4 queued")
        pod = rack_job_pod("short", 1, 0)
        t, resp = timed_admit(w, pod, "2s")
        print("the 2 s pod answered after %.2f s" % t)
        check(t < 2.0, "the 2 s pod answered within its deadline: %.2f s" % t)
        if resp is not None:
            not_placer_reason("short-0 (queued past its deadline)", info(env, apply_patch(
                resp, pod)))
        check(placer.requests() == 4, "the placer not asked for it: %d" % placer.requests())
        check(forwarded(w, "deadline") == 1, "counted deadline: %r" % forwarded(w, "deadline"))
        check(metric(w.metrics_text(), "topo_webhook_deferred_total", 'result="expired"') == 1,
              "counted expired")
        for t in threads:
            t.join()
        check(len(longs) == 8 and all(r is not None and tt < 4.0 for tt, r in longs),
              "every 30 s pod answered within its capped 4 s: %r" % [tt for tt, _ in longs])
        # the queued ones reached a worker with a few ms left: deadline, or
        # circuit_open once the first forwards' timeouts opened it
        ended = forwarded(w, "deadline") + forwarded(w, "circuit_open")
        check(ended == 9, "all 9 counted deadline or circuit_open: %r" % ended)
    finally:
        placer.close()


@case
def invalid_answer(env):
    """A placer answering 200 with what the API server cannot take (not
    JSON, another uid's answer, JSON but no AdmissionReview) is not relayed:
    the pod gets the no-fit answer with the reason, outcome invalid, each a
    failure for the breaker (before: relayed as is, counted answered)."""
    load_nodes(env, 16)
    placer = SlowPlacer(env, 0.0, answer="garbage")
    try:
        lease_to(env, placer, "broken")
        w = env.start_replica("r0")
        for i, answer in enumerate(["garbage", "wrong_uid", "no_review"]):
            placer.answer = answer
            pod = rack_job_pod("bad%d" % i, 1, 0)
            t, resp = timed_admit(w, pod, "2s")
            check(resp is not None and resp.get("allowed") is True,
                  "%s: an answer of this replica: %r" % (answer, resp))
            if resp is not None:
                i_ = info(env, apply_patch(resp, pod))
                not_placer_reason("bad%d (placer answered %s)" % (i, answer), i_)
                check("cannot take" in (i_["reason"] or ""), "the reason says why: %r"
                      % i_["reason"])
        check(forwarded(w, "invalid") == 3, "counted invalid: %r" % forwarded(w, "invalid"))
        check(forwarded(w, "answered") == 0, "none counted answered")
        check(w.metrics().get("topo_webhook_placer_circuit_open") == 1,
              "3 invalid answers opened the circuit")
        # a placer answering well is relayed (once the circuit lets it)
        placer.answer = "review"
        time.sleep(5.2)
        t, resp = timed_admit(w, rack_job_pod("good", 1, 0), "2s")
        check(resp is not None and resp.get("allowed") is True and "patch" not in resp,
              "the placer's answer relayed: %r" % resp)
        check(forwarded(w, "answered") == 1, "counted answered")
        check(all("&timeout=" in p and "&deadlineUnixMs=" in p for p in placer.paths),
              "every forward carries its timeout and deadline: %r" % placer.paths[:2])
    finally:
        placer.close()


@case
def paused_placer_late(env):
    """A forward the replica gave up on is not placed when the placer reads
    it late: the placer SIGSTOPped, the pod answered unplaced (ignore) by
    the other replica; after SIGCONT the placer reads the forward, finds its
    deadline (?deadlineUnixMs=) passed, stores nothing and counts it
    deadline exceeded (before: it placed it anew and reserved room for a pod
    already admitted unplaced)."""
    load_nodes(env, 16)
    # the chart's lease: no takeover during the pause
    lease = ["--lease-duration", "15", "--lease-renew-deadline", "10",
             "--lease-retry-period", "2"]
    ws = [env.start_replica(n, policy="ignore", lease_flags=lease) for n in ("r0", "r1")]
    placer = wait_placer(env, timeout=30)
    other = ws[1 - ws.index(placer)]
    warm = send(env, other, rack_job_pod("warm", 1, 0), timeout="2s")
    check(info(env, warm)["host"] is not None, "warm-up placed through the placer")

    def state():
        t = placer.metrics_text()
        return (metric(t, "topo_webhook_reservations"),
                metric(t, "topo_webhook_reserved_unclaimed", 'resource="pods"'),
                metric(t, "topo_webhook_deadline_exceeded_total"))

    before = state()
    placer.proc.send_signal(signal.SIGSTOP)
    t0 = time.monotonic()
    try:
        late = send(env, other, rack_job_pod("late", 4, 0), timeout="2s")
        took = time.monotonic() - t0
        x = info(env, late)
        check(took < 2.0 and x["host"] is None and not x["gated"],
              "admitted unplaced within 2 s (ignore): %.2f s %r" % (took, x))
        time.sleep(max(0.0, t0 + 2.5 - time.monotonic()))
    finally:
        placer.proc.send_signal(signal.SIGCONT)
    check(wait_for(lambda: state()[2] == before[2] + 1, 5),
          "the placer read the late forward and counted it deadline exceeded: %r -> %r"
          % (before, state()))
    after = state()
    check(after[:2] == before[:2], "nothing reserved for it: reservations, unclaimed pods %r -> %r"
          % (before[:2], after[:2]))
    check(forwarded(other, "deadline") >= 1, "the forwarder counted deadline")
    check(placer_of(ws) is placer, "the placer kept its Lease")


# Cases topo-webhook does not pass yet (left out of --list, so of ctest;
# --list-pending shows them, --case runs them): none.
PENDING = {}


def main():
    return run_cases(CASES, Env, bin_flag="--webhook", on_failure=on_failure, pending=PENDING)


if __name__ == "__main__":
    sys.exit(main())
