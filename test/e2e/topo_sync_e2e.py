#!/usr/bin/env python3
"""topo-sync's controller (controllers/) against fake_apiserver.py over TLS,
with topograph's NDR ibnetdiscover example (fixtures/sources) as the fabric
source and one Node per host it names.

Cases: a dry run sends nothing and logs the patches; --once labels every
node with one PATCH each (labels equal to the offline plan, other labels
untouched) and a second --once sends none; the running controller labels a
node added later within seconds and answers /readyz and /metrics; a source
that turns to garbage (and a restart during that outage) changes no label;
two replicas with leader election: only the leader writes, and after the
leader is killed the other takes over; SIGTERM releases the Lease and exits 0;
a restart during a source's outage keeps the labels (and, with the cache file
of last good facts, goes on labelling from them); a watch ended by a 410 while
a node changes: relisted, that node relabelled, nothing else written; the
API server's token rotated: writes and the watch go on with the new one; an
owned label changed by hand: reasserted with a Warning Event; --kube-qps 20
--kube-burst 20 paces 122 PATCHes over at least 5 s; labels a round does not
read (GFD's timestamp) change without waking one; with --topograph-labels a
converged cluster gets no write and a changed tier label is put back; the
node reflector lists and watches Nodes as PartialObjectMetadata (the plan and
the writes as with full objects), and a server that refuses that (406) gets
one metadata-only list, said once in the log, then full objects; Nodes named
with their FQDN get the labels of the dump's short names, and a short name two
Nodes' FQDNs share labels neither, with a warning; other owners' labels on
every node (kubernetes.io/os, topology.topo.io.evil/x,
fabric.topograph.run/tier-0x, ...) survive every round; a prefix that would
reach them (--prefix kubernetes.io/, labels.prefix) is refused with exit 2
before any request; a plain HGX cluster's Nodes (no GPU labels) all labelled;
the dump replaced by one cut while written (at 10 %, just after a
switch-to-switch port's remote end) is a failed read, logged and counted, and
changes no label; a dump with far fewer hosts is held on its first read (also
against the facts stored in --db) and accepted on the second; --export-configmap
naming another owner's ConfigMap (no managed-by marker) leaves it as it was, and
in an owned one an operator's key stays and a 409 is retried; an operator's
Kueue Topology of topo-sync's name is left as it is; two instances on dumps
that disagree about two nodes back off their fight over them (each tells it by
what it last wrote, not by the record the other rewrites); a cache file (--db)
overwritten in the middle or cut to half while topo-sync was down is moved
aside (logged, counted) and made anew, and the controller becomes ready and
writes the labels it wrote before.

usage: topo_sync_e2e.py --topo-sync BIN --source DIR (--list | --case NAME) [--keep]
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from harness import Failure, expect
from harness.fakeapi import FakeApiEnv
from harness.pki import encrypted_client_pair

P = "topology.topo.io/"
RECORD = P + "applied-labels"
# Labels of other owners on every node (issue 26 §2): none may change in any
# round, whatever topo-sync's options; some look like topo's or topograph's
# keys but are not under their whole prefix or not exactly their keys.
FOREIGN = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
           "node-role.kubernetes.io/worker": "", "node.kubernetes.io/instance-type": "dgx-h100",
           "feature.node.kubernetes.io/cpu-model.vendor_id": "Intel",
           "topology.topo.io.evil/x": "1", "topology.topo.iox/y": "2",
           "fabric.topograph.run/tier-0x": "3", "fabric.topograph.run/other": "4",
           "accelerator.topograph.run/other": "5", "kueue.x-k8s.io/pool": "a"}
ARGS = None
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, timeout, what, step=0.05):
    t0 = time.monotonic()
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() - t0 > timeout:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


class Env(FakeApiEnv):
    PREFIX = "topo-sync-e2e-"
    TOKEN = "sync-token-1"

    def __init__(self, keep):
        super().__init__(keep)
        self.dump = os.path.join(self.dir, "fabric.txt")
        shutil.copy(os.path.join(ARGS.source, "fixtures", "sources", "ibnetdiscover",
                                 "topograph-example.out"), self.dump)
        hosts = self.offline_labels()
        self.write_nodes(sorted(hosts))
        # The plan the controller must reach: the offline one over the same
        # Node objects (GFD labels: each HGX node its own NVLink domain).
        self.want = {n: l for n, l in self.offline_labels("--nodes-file",
                                                          self.path("nodes.json")).items() if l}
        expect(len(self.want) > 100, f"{len(self.want)} planned nodes")
        self.admin("load", {"file": self.path("nodes.json")})

    def offline_labels(self, *extra, dump=None):
        p = subprocess.run([ARGS.topo_sync, "--once", "--dry-run", "--print-labels",
                            "--ibnetdiscover", dump or self.dump, "-v", "warn", *extra],
                           capture_output=True, text=True, timeout=60)
        expect(p.returncode in (0, 1), f"offline plan: {p.returncode} {p.stderr}")
        return json.loads(p.stdout)

    def node(self, name):
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name,
                             "labels": {"kubernetes.io/hostname": name, "team": "ml",
                                        "nvidia.com/gpu.count": "8",
                                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                        **FOREIGN}},
                "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "8"}}}

    def write_nodes(self, names):
        with open(self.path("nodes.json"), "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "NodeList",
                       "items": [self.node(n) for n in names]}, fh)

    def labels(self):
        """node -> its labels, as the server holds them."""
        return {n["metadata"]["name"]: n["metadata"].get("labels", {})
                for n in self.items("/api/v1/nodes")}

    def owned(self):
        return {n: {k: v for k, v in l.items() if k.startswith(P)}
                for n, l in self.labels().items()}

    def patches(self):
        return self.admin("stats")["verbs"].get("nodes", {}).get("PATCH", 0)

    def args(self, *extra, dump=None):
        return [ARGS.topo_sync, "--kubeconfig", self.kubeconfig, "--ibnetdiscover",
                dump or self.dump, "--log-format", "json", *extra]

    def once(self, *extra, expect_rc=0):
        p = subprocess.run(self.args("--once", *extra), capture_output=True, text=True,
                           timeout=90)
        expect(p.returncode == expect_rc,
               f"topo-sync --once {' '.join(extra)}: exit {p.returncode}, want {expect_rc}\n"
               f"{p.stderr[-3000:]}")
        return p

    def spawn(self, *extra, dump=None):
        log = open(self.path(f"sync-{len(self.procs)}.log"), "w")
        p = subprocess.Popen(self.args(*extra, dump=dump), stdout=subprocess.DEVNULL, stderr=log)
        self.procs.append(p)
        p.log_path = log.name
        return p

    def expect_converged(self):
        got = self.owned()
        bad = [n for n, l in self.want.items() if got.get(n) != l]
        expect(not bad, f"{len(bad)} nodes not as planned, e.g. {bad[:3]}: "
                        f"{[got.get(n) for n in bad[:3]]} want {[self.want[n] for n in bad[:3]]}")


def log_of(p):
    with open(p.log_path) as fh:
        return fh.read()


def http_get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


@case
def dry_run(env):
    """--once --dry-run against the API server: nothing sent, every patch logged."""
    p = env.once("--dry-run")
    expect(env.patches() == 0, f"{env.patches()} PATCHes in a dry run")
    logged = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
    patches = [l for l in logged if "dry run" in l.get("msg", "") and "PATCH" in l.get("msg", "")]
    expect(len(patches) == len(env.want), f"{len(patches)} patches logged, want {len(env.want)}")
    expect(all(v == {} for v in env.owned().values()), "a dry run labelled nodes")


@case
def once_labels(env):
    """--once: one PATCH per node, labels equal to the offline plan, the
    other labels kept; a second --once sends nothing."""
    env.once()
    expect(env.patches() == len(env.want), f"{env.patches()} PATCHes for {len(env.want)} nodes")
    env.expect_converged()
    labels = env.labels()
    expect(all(labels[n].get("team") == "ml" for n in env.want), "a foreign label was lost")
    before = env.patches()
    env.once()
    expect(env.patches() == before, f"{env.patches() - before} PATCHes on a converged cluster")


@case
def controller_new_node(env):
    """The running controller: converges, is ready, exports metrics, labels a
    node added later within seconds (a copy of a cabled host's name mapped
    by nothing gets nothing: only planned nodes are written)."""
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port))
    try:
        wait_for(lambda: http_get(port, "/readyz")[0] == 200, 30, "/readyz 200")
        wait_for(lambda: env.patches() >= len(env.want), 30, "every node patched")
        env.expect_converged()
        status, text = http_get(port, "/metrics")
        expect(status == 200 and 'topo_sync_node_writes_total{outcome="patched"}' in text,
               f"/metrics: {status} {text[:400]}")
        # One node deleted and created again, bare: labelled again promptly.
        name = sorted(env.want)[0]
        env.delete(f"/api/v1/nodes/{name}")
        env.create("/api/v1/nodes", env.node(name))
        t0 = time.monotonic()
        wait_for(lambda: env.owned().get(name) == env.want[name], 15, f"{name} labelled again")
        print(f"a new node labelled in {time.monotonic() - t0:.2f} s")
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(30)
    expect(rc == 0, f"exit {rc} after SIGTERM\n{log_of(p)[-2000:]}")


@case
def source_garbage(env):
    """A source that turns to garbage: the last good facts are kept and no
    label changes or goes."""
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port),
                  "--source-interval", "1", "--resync-interval", "1")
    try:
        wait_for(lambda: env.patches() >= len(env.want), 30, "every node patched")
        with open(env.dump, "w") as fh:
            fh.write("Switch 36 garbage\n[1 no\n")
        wait_for(lambda: "keeping its last good facts" in log_of(p), 15, "a failed read")
        before = env.patches()
        time.sleep(3)
        expect(env.patches() == before, "PATCHes during the outage")
        env.expect_converged()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)



def changed_name_value(raw):
    """The label value of a name the normaliser changes (docs/sync.md, "Label
    values"): its form with ':' made '-' and the first 10 hex digits of the
    raw name's 64-bit FNV-1a hash with topo's offset basis (include/topo/str.h),
    computed here on its own."""
    h = 1469598103934665603
    for b in raw.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return raw.replace(":", "-") + "-" + ("%016x" % h)[:10]

@case
def lldp_host_unreadable(env):
    """A host's file in --lldp-dir turns into a FIFO: the sources thread is
    not stalled (it hung opening it), the file is skipped and counted, that
    host keeps its last good LLDP facts (its label stays) while another
    host's new file is read (its label changes)."""
    lldp = env.path("lldp")
    os.mkdir(lldp)
    with open(os.path.join(ARGS.source, "fixtures", "sources", "lldp",
                           "derived-json0-interface_only.json")) as fh:
        doc = fh.read()
    replace_file(os.path.join(lldp, "node-a.json"), doc)
    replace_file(os.path.join(lldp, "node-c.json"), doc)
    with open(env.path("lldp-nodes.json"), "w") as fh:
        json.dump({"apiVersion": "v1", "kind": "NodeList",
                   "items": [env.node("node-a"), env.node("node-c")]}, fh)
    env.admin("load", {"file": env.path("lldp-nodes.json")})
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port), "--lldp-dir", lldp,
                  "--levels", "leaf,hostname", "--source-interval", "1",
                  "--resync-interval", "1")
    leaf = P + "leaf"
    old, new = (changed_name_value(m) for m in ("00:11:22:33:44:55", "00:11:22:33:44:66"))
    try:
        wait_for(lambda: all(env.owned().get(n, {}).get(leaf) == old
                             for n in ("node-a", "node-c")), 30, "node-a and node-c labelled")
        os.remove(os.path.join(lldp, "node-c.json"))
        os.mkfifo(os.path.join(lldp, "node-c.json"))
        replace_file(os.path.join(lldp, "node-a.json"),
                     doc.replace("00:11:22:33:44:55", "00:11:22:33:44:66"))
        wait_for(lambda: env.owned().get("node-a", {}).get(leaf) == new, 30,
                 "node-a relabelled from its new file")
        wait_for(lambda: (metric(port, "topo_sync_source_files_skipped_total", source="lldp",
                                 reason="unreadable") or 0) >= 2, 15, "two reads skipping it")
        expect("node-c.json: not a regular file: host node-c keeps its last good facts"
               in log_of(p), log_of(p)[-2000:])
        expect(env.owned()["node-c"].get(leaf) == old, env.owned()["node-c"])
        expect(metric(port, "topo_sync_source_failures_total", source="lldp",
                      reason="error") is None, "the lldp reads counted as failed")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)


def replace_file(path, text):
    """Replaced whole (written beside, renamed), so no read sees it half written."""
    with open(path + ".new", "w") as fh:
        fh.write(text)
    os.replace(path + ".new", path)


def metric(port, name, **labels):
    """The value of one sample of /metrics, or None."""
    want = name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
    for line in http_get(port, "/metrics")[1].splitlines():
        if line.startswith(want + " "):
            return float(line.split()[-1])
    return None


def cut_after_switch_link(text, fraction):
    """text cut at fraction of its length, just after the next switch port
    line's remote switch port (`[17]\t"S-..."[1]`, before its comment)."""
    m = re.compile(r'\n\[\d+\]\t"S-[0-9a-f]+"\[\d+\]').search(text, int(len(text) * fraction))
    expect(m is not None, "no switch-to-switch port line")
    return text[:m.end()]


def only_hosts(text, keep):
    """A whole, consistent dump without the adapters of hosts not in keep:
    their Ca stanzas go, and so do the switch port lines naming them."""
    stanzas, gone = text.split("\n\n"), set()
    for st in stanzas:
        m = re.search(r'^Ca\t\d+ "(H-[0-9a-f]+)"\t+# "([^"]*)"', st, re.M)
        if m and not m.group(2).endswith("Aggregation Node") and \
                m.group(2).split()[0] not in keep:
            gone.add(m.group(1))
    out = []
    for st in stanzas:
        m = re.search(r'^Ca\t\d+ "(H-[0-9a-f]+)"', st, re.M)
        if m and m.group(1) in gone:
            continue
        out.append("\n".join(l for l in st.split("\n")
                             if not any(f'"{g}"' in l for g in gone)))
    return "\n\n".join(out).rstrip("\n") + "\n"


@case
def truncated_dump(env):
    """The dump replaced by one cut while written: at 10 %, just after a
    switch-to-switch port line's remote end. A failed read, logged with its
    line and counted as invalid; no label changes."""
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port),
                  "--source-interval", "1", "--resync-interval", "1")
    try:
        wait_for(lambda: env.patches() >= len(env.want), 30, "every node patched")
        env.expect_converged()
        with open(env.dump) as fh:
            whole = fh.read()
        cut = cut_after_switch_link(whole, 0.10)
        line = cut.count("\n") + 1
        replace_file(env.dump, cut)
        wait_for(lambda: (metric(port, "topo_sync_source_failures_total",
                                 source="ibnetdiscover", reason="invalid") or 0) >= 2, 15,
                 "two failed reads counted")
        said = f"{env.dump}:{line}: the last line has no newline"
        expect(said in log_of(p), f"the log does not say {said!r}")
        # The same cut with its line ended: the port line has no comment.
        replace_file(env.dump, cut + "\n")
        said = f"{env.dump}:{line}: a port line without the comment"
        wait_for(lambda: said in log_of(p), 15, "the read refused")
        before = env.patches()
        time.sleep(2)
        expect(env.patches() == before, f"{env.patches() - before} PATCHes from a cut dump")
        env.expect_converged()
        hosts = metric(port, "topo_sync_source_objects", source="ibnetdiscover", kind="hosts")
        expect(hosts == 122, f"the source holds {hosts} hosts, want the whole dump's 122")
    finally:
        stop(p)


@case
def sudden_drop(env):
    """A whole, consistent dump with 10 of its 122 hosts: held on its first
    read (here against the facts stored by an earlier run in --db: nothing
    written, counted as a drop), accepted on the second (the fabric really
    shrank)."""
    db = env.path("sync.db")
    env.once("--db", db)
    env.expect_converged()
    with open(env.dump) as fh:
        whole = fh.read()
    keep = set(sorted(env.want)[:10])
    small = only_hosts(whole, keep)
    replace_file(env.dump, small)
    small_hosts = env.offline_labels()
    expect(set(small_hosts) <= keep and len(small_hosts) == 10,
           f"the smaller dump names {len(small_hosts)} hosts")
    port = free_port()
    before = env.patches()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port), "--db", db,
                  "--source-interval", "3", "--resync-interval", "1")
    try:
        wait_for(lambda: "held as a failed read" in log_of(p), 20, "the drop held")
        expect("10 hosts where its last good read had 122 (below minHostsPercent 90 %)"
               in log_of(p), "the hold's message")
        expect(metric(port, "topo_sync_source_failures_total", source="ibnetdiscover",
                      reason="drop") == 1, "the drop counted")
        expect(metric(port, "topo_sync_source_objects", source="ibnetdiscover",
                      kind="hosts") == 122, "the stored facts replaced while held")
        time.sleep(1)
        expect(env.patches() == before, f"{env.patches() - before} PATCHes while held")
        env.expect_converged()
        wait_for(lambda: "the same read twice in a row: accepted" in log_of(p), 20,
                 "the second read accepted")
        wait_for(lambda: metric(port, "topo_sync_source_objects", source="ibnetdiscover",
                                kind="hosts") == 10, 10, "the smaller facts in use")
        expect(metric(port, "topo_sync_source_failures_total", source="ibnetdiscover",
                      reason="drop") == 1, "the accepted read counted as a failure")
    finally:
        stop(p)


@case
def source_change(env):
    """New facts from a source start a round at once, not at the next
    resync (here 10 minutes away): the dump loses its last adapter."""
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port),
                  "--source-interval", "1", "--resync-interval", "600")
    try:
        wait_for(lambda: env.patches() >= len(env.want), 30, "every node patched")

        def rounds():
            return metric(port, "topo_sync_rounds_total", outcome="ok") or -1.0
        wait_for(lambda: rounds() >= 1, 10, "a round counted")
        before = rounds()
        with open(env.dump) as fh:
            text = fh.read()
        # The last Ca stanza and the switch port line to it: a whole dump.
        last = re.findall(r'^Ca\t\d+ "(H-[0-9a-f]+)"', text, re.M)[-1]
        with open(env.dump, "w") as fh:
            fh.write("\n".join(l for l in text[:text.rindex("\nCa\t")].split("\n")
                               if f'"{last}"' not in l) + "\n")
        t0 = time.monotonic()
        wait_for(lambda: rounds() > before, 10, "a round after the source changed")
        print(f"a round {time.monotonic() - t0:.2f} s after the dump changed")
        env.expect_converged()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)


@case
def kueue_objects(env):
    """Kueue's CRDs absent: no request for its objects succeeds or is retried
    into an error, labels are written. Installed: the Topology (the plan's
    levels) and one ResourceFlavor (--kueue-flavor-label) are created, an
    operator's field on the flavor is kept, a changed flavor label is put
    back; nothing is deleted. The provenance annotation names the source."""
    flavor = ("--kueue-flavor-label", "nvidia.com/gpu.count=8")
    env.once(*flavor)
    env.expect_converged()
    node = env.items("/api/v1/nodes")[0]
    prov = json.loads(node["metadata"]["annotations"][P + "provenance"])
    expect(prov.get("leaf") == "ibnetdiscover" and prov.get("nvlink") == "node",
           f"provenance {prov}")
    env.admin("config", {"kueue": True})
    env.once(*flavor)
    base = "/apis/kueue.x-k8s.io/v1beta2"
    topo = env.items(base + "/topologies")
    expect(len(topo) == 1 and topo[0]["metadata"]["name"] == "topo", f"topologies {topo}")
    levels = [l["nodeLabel"] for l in topo[0]["spec"]["levels"]]
    expect(levels == [P + "spine", P + "leaf", P + "nvlink", "kubernetes.io/hostname"],
           f"levels {levels}")
    rf = env.items(base + "/resourceflavors")
    expect(len(rf) == 1 and rf[0]["spec"]["nodeLabels"] == {"nvidia.com/gpu.count": "8"} and
           rf[0]["spec"]["topologyName"] == "topo", f"flavors {rf}")
    # An operator's toleration stays; a nodeLabels change is put back.
    rf[0]["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    rf[0]["spec"]["nodeLabels"] = {"pool": "x"}
    status, out = env.request("PUT", base + "/resourceflavors/topo", rf[0])
    expect(status == 200, f"PUT flavor: {status} {out}")
    env.once(*flavor)
    rf = env.items(base + "/resourceflavors")[0]
    expect(rf["spec"]["nodeLabels"] == {"nvidia.com/gpu.count": "8"} and
           rf["spec"].get("tolerations"), f"flavor after the round: {rf['spec']}")
    verbs = env.admin("stats")["verbs"]
    expect(verbs.get("topologies", {}).get("PUT", 0) == 0, "an unchanged Topology was updated")


@case
def kueue_foreign(env):
    """A Topology named like topo-sync's that an operator made by hand (no
    app.kubernetes.io/managed-by: topo-sync) is someone else's: its levels
    are not changed, an error (once) says whose and what to do, --once exits
    1; the flavor topo-sync creates itself is written as usual."""
    env.admin("config", {"kueue": True})
    base = "/apis/kueue.x-k8s.io/v1beta2"
    mine = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
            "metadata": {"name": "topo", "labels": {"team": "ml"}},
            "spec": {"levels": [{"nodeLabel": "cloud.example.com/block"},
                                {"nodeLabel": "kubernetes.io/hostname"}]}}
    status, out = env.request("POST", base + "/topologies", mine)
    expect(status == 201, f"POST topology: {status} {out}")
    before = env.items(base + "/topologies")[0]
    # A write that could not be made: --once exits 1, the error logged.
    p = env.once("--kueue-flavor-label", "nvidia.com/gpu.count=8", expect_rc=1)
    after = env.items(base + "/topologies")[0]
    expect(after == before, f"an operator's Topology was changed: {after}")
    expect(env.admin("stats")["verbs"].get("topologies", {}).get("PUT", 0) == 0,
           "a PUT to the operator's Topology")
    logged = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
    said = [l for l in logged if "Topology topo exists and is not topo-sync's (no label "
            "app.kubernetes.io/managed-by=topo-sync)" in l.get("msg", "")]
    expect(len(said) == 1 and said[0]["level"] == "error", f"{said or p.stderr[-2000:]}")
    rf = env.items(base + "/resourceflavors")
    expect(len(rf) == 1 and rf[0]["metadata"]["labels"].get("app.kubernetes.io/managed-by") ==
           "topo-sync", f"flavors {rf}")
    env.expect_converged()


@case
def configmap_exports(env):
    """--export-configmap: Slurm's topology.conf (tree and block), Volcano's
    HyperNodes and Kueue's objects in one ConfigMap, created, then left alone
    while the plan stays the same, an operator's annotation kept."""
    args = ("--export-configmap", "default/topo-exports",
            "--kueue-flavor-label", "nvidia.com/gpu.count=8")
    env.once(*args)
    path = "/api/v1/namespaces/default/configmaps/topo-exports"
    status, cm = env.request("GET", path)
    expect(status == 200, f"GET configmap: {status} {cm}")
    data = cm["data"]
    expect(sorted(data) == ["kueue.yaml", "topology-block.conf", "topology.conf",
                            "volcano-hypernodes.yaml"], f"keys {sorted(data)}")
    expect("SwitchName=" in data["topology.conf"] and "BlockName=" in
           data["topology-block.conf"], "Slurm texts")
    expect("kind: Topology" in data["kueue.yaml"], "Kueue text")
    cm["metadata"].setdefault("annotations", {})["owner"] = "ops"
    status, _ = env.request("PUT", path, cm)
    expect(status == 200, f"PUT configmap: {status}")
    before = env.admin("stats")["verbs"].get("configmaps", {}).get("PUT", 0)
    env.once(*args)
    status, cm = env.request("GET", path)
    expect(cm["metadata"]["annotations"].get("owner") == "ops" and cm["data"] == data,
           f"configmap after a second round: {cm['metadata']}")
    after = env.admin("stats")["verbs"].get("configmaps", {}).get("PUT", 0)
    expect(after == before, f"{after - before} PUTs of an unchanged ConfigMap")
    expect(cm["metadata"]["labels"].get("app.kubernetes.io/managed-by") == "topo-sync",
           f"the created ConfigMap's labels {cm['metadata'].get('labels')}")


def configmap_writes(env):
    """The fake API server's writes to configmaps so far."""
    verbs = env.admin("stats")["verbs"].get("configmaps", {})
    return sum(verbs.get(v, 0) for v in ("PUT", "PATCH", "POST", "DELETE"))


@case
def configmap_foreign(env):
    """--export-configmap naming another owner's ConfigMap (kube-system/coredns,
    no managed-by marker): never written, byte for byte as it was; the round's
    labels still written, the refusal logged with the name and the fix, exit 1."""
    env.create("/api/v1/namespaces/kube-system/configmaps",
               {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "coredns", "namespace": "kube-system",
                             "labels": {"k8s-app": "kube-dns"}},
                "data": {"Corefile": ".:53 {\n    errors\n    forward . /etc/resolv.conf\n}\n"}})
    path = "/api/v1/namespaces/kube-system/configmaps/coredns"
    before = env.request("GET", path)
    writes = configmap_writes(env)
    p = env.once("--export-configmap", "kube-system/coredns", expect_rc=1)
    after = env.request("GET", path)
    expect(after == before, f"the foreign ConfigMap changed: {before} -> {after}")
    n = configmap_writes(env) - writes
    expect(n == 0, f"{n} writes to configmaps")
    env.expect_converged()
    logged = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
    refused = [l for l in logged if "kube-system/coredns" in l.get("msg", "") and
               "app.kubernetes.io/managed-by" in l.get("msg", "")]
    expect(refused and refused[0].get("level") in ("warn", "error"),
           f"no refusal naming the ConfigMap and the marker in the log:\n{p.stderr[-2000:]}")


@case
def rounds_failing(env):
    """A controller whose every round fails a step (here the export
    ConfigMap, another owner's) counts them as failed, never ok, though
    the labels are written; the ok count is served from the start at 0:
    what the TopoSyncRoundsFailing alert reads."""
    env.create("/api/v1/namespaces/kube-system/configmaps",
               {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "coredns", "namespace": "kube-system"},
                "data": {"Corefile": ".:53 {}\n"}})
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port),
                  "--source-interval", "1", "--resync-interval", "1",
                  "--export-configmap", "kube-system/coredns")
    try:
        wait_for(lambda: (metric(port, "topo_sync_rounds_total", outcome="failed") or 0) >= 2,
                 30, "two failed rounds counted")
        ok = metric(port, "topo_sync_rounds_total", outcome="ok")
        expect(ok == 0, f"{ok} rounds counted ok while each failed its export (served at 0)")
        env.expect_converged()
    finally:
        stop(p)


@case
def configmap_owned_keys(env):
    """An owned export ConfigMap (the marker) with a key an operator added:
    topo's keys set, a topo key the plan no longer gives removed, the
    operator's key kept; a PUT that meets another writer (409) re-read and
    retried, that writer's change kept too."""
    env.create("/api/v1/namespaces/default/configmaps",
               {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "topo-exports", "namespace": "default",
                             "labels": {"app.kubernetes.io/managed-by": "topo-sync"}},
                "data": {"site.conf": "owner=ops\n", "kueue.yaml": "stale: 1\n"}})
    path = "/api/v1/namespaces/default/configmaps/topo-exports"
    env.admin("fault", {"kind": "touch", "count": 1, "method": "PUT", "path": path})
    # Without flavor labels the plan gives no Kueue export: kueue.yaml goes.
    env.once("--export-configmap", "default/topo-exports")
    status, cm = env.request("GET", path)
    expect(status == 200, f"GET configmap: {status} {cm}")
    data = cm["data"]
    expect(sorted(data) == ["site.conf", "topology-block.conf", "topology.conf",
                            "volcano-hypernodes.yaml"], f"keys {sorted(data)}")
    expect(data["site.conf"] == "owner=ops\n" and "SwitchName=" in data["topology.conf"],
           f"data {data}")
    expect("fake.topo.io/touched" in cm["metadata"].get("annotations", {}),
           f"the other writer's change lost: {cm['metadata']}")
    puts = env.admin("stats")["verbs"].get("configmaps", {}).get("PUT", 0)
    expect(puts == 2, f"{puts} PUTs (want the conflicted one and its retry)")


@case
def restart_outage(env):
    """A restart during a source's outage: with the cache file the last good
    facts are loaded, nothing changes, and a node that comes back bare is
    labelled from them; without it the controller waits (not ready) and
    writes nothing."""
    db = env.path("sync.db")
    env.once("--db", db)
    env.expect_converged()
    with open(env.dump, "w") as fh:
        fh.write("Switch 36 garbage\n[1 no\n")
    name = sorted(env.want)[2]
    env.delete(f"/api/v1/nodes/{name}")
    env.create("/api/v1/nodes", env.node(name))
    # No cache file: never ready, not a single write.
    port = free_port()
    before = env.patches()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port))
    try:
        wait_for(lambda: "no facts from it yet" in log_of(p), 15, "the failed read")
        time.sleep(1)
        expect(http_get(port, "/readyz")[0] == 503, "ready without the source")
        expect(env.patches() == before, "PATCHes without the source's facts")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)
    # With it: the stored facts plan; the bare node is labelled again.
    p = env.spawn("--leader-elect", "false", "--health-port", str(port), "--db", db)
    try:
        wait_for(lambda: env.owned().get(name) == env.want[name], 20, f"{name} labelled")
        expect(env.patches() == before + 1, f"{env.patches() - before} PATCHes, want 1")
        expect("keeping its last good facts" in log_of(p), "the read did not fail?")
        env.expect_converged()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)


def overwrite_middle(path):
    """4 KiB of 0xA5 at half the file: a disk fault, a bad restore."""
    with open(path, "r+b") as fh:
        fh.seek(os.path.getsize(path) // 2)
        fh.write(b"\xa5" * 4096)


def truncate_half(path):
    os.truncate(path, os.path.getsize(path) // 2)


def corrupt_cache(env, corrupt):
    """The cache file (--db) of a converged run corrupted while topo-sync is
    down, and a node re-created bare: the controller starts anyway, moves
    the file aside to <db>.corrupt-<time>, logs it and counts it, becomes
    ready once its source is read again and labels the bare node as before
    (and no other node differently). Before issue 33 it exited 2 at start
    ("database disk image is malformed"), for ever."""
    db = env.path("sync.db")
    env.once("--db", db)
    env.expect_converged()
    before = env.owned()
    expect(not any(f.startswith("sync.db-") for f in os.listdir(env.dir)),
           "the WAL was checkpointed at exit")
    corrupt(db)
    name = sorted(env.want)[3]
    env.delete(f"/api/v1/nodes/{name}")
    env.create("/api/v1/nodes", env.node(name))
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port), "--db", db)
    try:
        wait_for(lambda: p.poll() is not None or http_get(port, "/readyz")[0] == 200, 30,
                 "ready")
        expect(p.poll() is None, f"topo-sync exited {p.returncode}")
        copies = [f for f in os.listdir(env.dir) if f.startswith("sync.db.corrupt-")]
        expect(len(copies) == 1 and re.fullmatch(r"sync\.db\.corrupt-\d{8}T\d{6}Z", copies[0]),
               f"one corrupt copy: {copies}")
        logged = [json.loads(l) for l in log_of(p).splitlines() if l.startswith("{")]
        moved = [l for l in logged if l.get("moved_to")]
        expect(len(moved) == 1 and moved[0]["level"] == "error" and moved[0]["file"] == db
               and moved[0]["moved_to"] == os.path.join(env.dir, copies[0])
               and moved[0]["error"], f"one error line naming the file and the copy: {moved}")
        count = [l for l in http_get(port, "/metrics")[1].splitlines()
                 if l.startswith("topo_sync_cache_recreated_total ")]
        expect(count == ["topo_sync_cache_recreated_total 1"], f"the metric: {count}")
        wait_for(lambda: env.owned().get(name) == before[name], 20, f"{name} labelled again")
        env.expect_converged()
        expect(env.owned() == before, "the same labels as before the corruption")
    finally:
        stop(p)
    # The new file is a cache: the next start moves nothing.
    env.once("--db", db)
    copies = [f for f in os.listdir(env.dir) if f.startswith("sync.db.corrupt-")]
    expect(len(copies) == 1, f"a good file moved aside: {copies}")


@case
def corrupt_cache_overwritten(env):
    corrupt_cache(env, overwrite_middle)


@case
def corrupt_cache_truncated(env):
    corrupt_cache(env, truncate_half)


@case
def leader_handover(env):
    """Two replicas: only the Lease holder writes; killed, the other takes
    over within the lease duration (--lease-duration 3: renewals every 0.4 s,
    rather than 15 s of waiting) and finishes the work."""
    ports = [free_port(), free_port()]
    election = ("--lease-namespace", "default", "--lease-duration", "3")
    a = env.spawn("--health-port", str(ports[0]), *election)
    wait_for(lambda: env.patches() >= len(env.want), 40, "every node patched by the leader")
    b = env.spawn("--health-port", str(ports[1]), *election)
    wait_for(lambda: http_get(ports[1], "/metrics")[0] == 200, 20, "the second replica up")
    time.sleep(3.5)  # longer than the lease: a's renewals keep it
    _, text = http_get(ports[1], "/metrics")
    expect("topo_sync_leader 0" in text, "the second replica leads too")
    a.kill()
    a.wait(10)
    # Relabel one node by hand: only the new leader can undo it.
    name = sorted(env.want)[1]
    env.request("PATCH", f"/api/v1/nodes/{name}", {"metadata": {"labels": {P + "leaf": "x"}}},
                ctype="application/merge-patch+json")
    t0 = time.monotonic()
    wait_for(lambda: "topo_sync_leader 1" in http_get(ports[1], "/metrics")[1], 30,
             "the second replica to lead")
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/topo-sync"
    held = env.request("GET", path)[1]["spec"]
    expect(held.get("leaseDurationSeconds") == 3, f"the Lease as held: {held}")
    wait_for(lambda: env.owned().get(name) == env.want[name], 30, "the drift undone")
    print(f"took over and reasserted in {time.monotonic() - t0:.2f} s")
    b.send_signal(signal.SIGTERM)
    expect(b.wait(30) == 0, "exit after SIGTERM")
    lease = env.request("GET", path)[1]
    expect(not lease["spec"].get("holderIdentity"), f"Lease not released: {lease['spec']}")


@case
def fqdn_nodes(env):
    """Nodes named with their FQDN while the dump names hosts short: each
    gets the fabric labels its short name plans; a short name that two
    nodes' FQDNs share labels neither, and the log says so."""
    names = sorted(env.want)[:6]
    twin = names.pop()
    for n in names + [twin]:
        env.delete(f"/api/v1/nodes/{n}")
    for n in names:
        env.create("/api/v1/nodes", env.node(n + ".cluster.example.com"))
    for d in ("a", "b"):
        env.create("/api/v1/nodes", env.node(f"{twin}.{d}.example.com"))
    p = env.once()
    owned = env.owned()
    fabric = (P + "leaf", P + "spine")
    for n in names:
        got = owned.get(n + ".cluster.example.com", {})
        expect(all(got.get(k) == env.want[n][k] for k in fabric),
               f"{n}.cluster.example.com: {got}, want {env.want[n]}")
    for d in ("a", "b"):
        expect(owned.get(f"{twin}.{d}.example.com") == {},
               f"{twin}.{d}.example.com labelled: {owned.get(f'{twin}.{d}.example.com')}")
    msgs = [json.loads(l).get("msg", "") for l in p.stderr.splitlines() if l.startswith("{")]
    want = (f"host {twin}: its short name matches the nodes {twin}.a.example.com, "
            f"{twin}.b.example.com; matched to none")
    expect(any(want in m for m in msgs), f"no warning {want!r}: {p.stderr[-1500:]}")
    # The running controller counts it for an alert.
    port = free_port()
    c = env.spawn("--leader-elect", "false", "--health-port", str(port))
    try:
        wait_for(lambda: metric(port, "topo_sync_hosts", state="ambiguous") == 1, 30,
                 "topo_sync_hosts{state=\"ambiguous\"} 1")
        expect(metric(port, "topo_sync_hosts", state="unmappable") == 0, "unmappable hosts")
    finally:
        stop(c)


def node_verbs(env):
    return env.admin("stats")["verbs"].get("nodes", {})


def converged_controller(env, *extra):
    """A running controller (no leader election) once every node is labelled
    and its writes have settled: (the process, its health port)."""
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port), *extra)
    wait_for(lambda: env.patches() >= len(env.want), 30, "every node patched")
    wait_for(lambda: http_get(port, "/readyz")[0] == 200, 30, "/readyz 200")
    env.expect_converged()
    return p, port


def stop(p):
    p.send_signal(signal.SIGTERM)
    rc = p.wait(30)
    expect(rc == 0, f"exit {rc} after SIGTERM\n{log_of(p)[-2000:]}")


def strip_owned(env, name):
    """Another writer removes the node's owned labels and topo-sync's record
    (as a node re-registered from scratch would have it)."""
    node = env.request("GET", f"/api/v1/nodes/{name}")[1]
    md = node["metadata"]
    labels = {k: None for k in md.get("labels", {}) if k.startswith(P)}
    notes = {k: None for k in md.get("annotations", {}) if k.startswith(P)}
    status, out = env.request("PATCH", f"/api/v1/nodes/{name}",
                              {"metadata": {"labels": labels, "annotations": notes}},
                              ctype="application/merge-patch+json")
    expect(status == 200 and labels, f"PATCH {name}: {status} {labels} {out}")


@case
def watch_gone(env):
    """The history compacted under a running controller (its watch ended
    with an in-stream 410) while a node loses its labels: the controller
    lists again, sees the change the watch never delivered, relabels that
    node with one PATCH and writes nothing else."""
    p, _ = converged_controller(env, "-v", "debug")  # the relist is logged at debug
    try:
        time.sleep(1)  # the round's last writes settled
        before, verbs = env.patches(), node_verbs(env)
        gone = env.admin("stats").get("gone", {}).get("nodes", 0)
        # The relist's LIST waits 2.5 s in the server: the node changes
        # after the watch ended and before the list is taken, so only the
        # list can tell the controller.
        env.admin("fault", {"kind": "delay", "count": 1, "delay_ms": 2500, "method": "GET",
                            "path": "/api/v1/nodes", "watch": False})
        env.admin("compact", {"expire_watches": True})
        name = sorted(env.want)[3]
        time.sleep(0.5)
        strip_owned(env, name)
        wait_for(lambda: node_verbs(env).get("LIST", 0) > verbs.get("LIST", 0), 20,
                 "the relist")
        expect(env.admin("stats").get("gone", {}).get("nodes", 0) > gone, "no 410 sent")
        wait_for(lambda: env.owned().get(name) == env.want[name], 20, f"{name} relabelled")
        time.sleep(1.5)  # a spurious write would come with the same round
        expect(env.patches() == before + 2, f"{env.patches() - before} PATCHes, want 2 (the "
                                            "test's, then the controller's of that node)")
        env.expect_converged()
        expect("expired, listing again" in log_of(p), "no relist logged")
    finally:
        stop(p)


@case
def list_gone_backoff(env):
    """An API server answering every node LIST 410 Expired for 3 s (a list
    without a continue token: the server cannot serve it, no relist will
    fix it): the controller backs off as for a 5xx (a handful of LISTs, not
    hundreds), logs one warning per failure with the Status's reason and the
    next wait, counts it in /metrics by resource and reason, and once the
    410s stop lists and labels the nodes."""
    env.admin("requests/clear", {})
    env.admin("fault", {"kind": "status", "code": 410, "list": True, "seconds": 3,
                        "path": "/api/v1/nodes"})
    t0 = time.monotonic()
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port))
    try:
        time.sleep(max(0.0, 3.0 - (time.monotonic() - t0)))
        lists = node_verbs(env).get("LIST", 0)
        gone = env.admin("stats")["gone"].get("nodes", 0)
        # Backoff from 200 ms doubling (each wait half to all of it): at most
        # about 5 in 3 s; at once, hundreds.
        # (the LIST after the window may have been answered already)
        expect(2 <= gone <= 8 and gone <= lists <= gone + 1,
               f"{lists} node LISTs ({gone} answered 410) in the 3 s of 410s, want 2..8")
        wait_for(lambda: env.patches() >= len(env.want), 30, "every node patched after the 410s")
        wait_for(lambda: http_get(port, "/readyz")[0] == 200, 30, "/readyz 200")
        env.expect_converged()
        gone = env.admin("stats")["gone"].get("nodes", 0)
        warned = [json.loads(ln) for ln in log_of(p).splitlines()
                  if '"reason":"gone"' in ln.replace(" ", "")]
        expect(warned and all(w.get("level") == "warn" and w.get("resource") == "nodes" and
                              int(w.get("retry_ms", 0)) > 0 and "410" in w.get("msg", "") and
                              "too old resource version" in w["msg"] for w in warned),
               f"no warning per 410 with resource, reason, status, message, retry_ms:\n"
               f"{log_of(p)[-2000:]}")
        expect(len(warned) == gone, f"{len(warned)} warnings for {gone} 410s")
        n = metric(port, "topo_sync_reflector_failures_total", resource="nodes", reason="gone")
        expect(n == gone, f"topo_sync_reflector_failures_total{{reason=gone}} {n}, want {gone}")
        expect(metric(port, "topo_sync_reflector_failures_total", resource="nodes",
                      reason="server") == 0, "server failures counted")
    finally:
        stop(p)


@case
def token_rotation(env):
    """The API server's bearer token rotated under a running controller (the
    kubeconfig's tokenFile rewritten, the old token refused at once): the
    writer's next PATCH is refused with 401, the file re-read and the PATCH
    sent again; the watch, reopened, goes on with the new token too."""
    p, _ = converged_controller(env)
    try:
        env.admin("requests/clear", {})
        env.rotate_token("sync-token-2")
        # A node re-registered bare: the open watch tells the controller,
        # whose writer still holds the old token.
        name = sorted(env.want)[4]
        env.delete(f"/api/v1/nodes/{name}")
        env.create("/api/v1/nodes", env.node(name))
        wait_for(lambda: env.owned().get(name) == env.want[name], 20, f"{name} labelled")
        reqs = [r for r in env.admin("requests")["requests"] if r["method"] == "PATCH"]
        statuses = [r["status"] for r in reqs if r["path"].startswith(f"/api/v1/nodes/{name}")]
        expect(401 in statuses and statuses[-1] == 200,
               f"PATCHes of {name}: {statuses}, want a 401 then 200")
        # Every watch ended: reopened with the old token (401), then the new.
        watches = node_verbs(env).get("WATCH", 0)
        env.admin("watches/close", {"mode": "close"})
        wait_for(lambda: node_verbs(env).get("WATCH", 0) > watches, 20, "the watch reopened")
        other = sorted(env.want)[5]
        strip_owned(env, other)
        wait_for(lambda: env.owned().get(other) == env.want[other], 20, f"{other} relabelled")
        env.expect_converged()
    finally:
        stop(p)


@case
def drift_event(env):
    """An owned label changed by hand (drift): reasserted with one PATCH,
    logged at warn, and a Warning Event TopologyLabelsReasserted about the
    node in namespace default telling old -> new."""
    p, _ = converged_controller(env)
    try:
        time.sleep(1)
        before = env.patches()
        name = sorted(env.want)[6]
        want_leaf = env.want[name][P + "leaf"]
        status, _ = env.request("PATCH", f"/api/v1/nodes/{name}",
                                {"metadata": {"labels": {P + "leaf": "by-hand"}}},
                                ctype="application/merge-patch+json")
        expect(status == 200, f"PATCH: {status}")
        wait_for(lambda: env.owned().get(name) == env.want[name], 20, "the drift undone")

        def event():
            for ev in env.items("/api/v1/namespaces/default/events"):
                if ev.get("involvedObject", {}).get("name") == name:
                    return ev
            return None
        ev = wait_for(event, 10, f"an Event about {name}")
        expect(ev["type"] == "Warning" and ev["reason"] == "TopologyLabelsReasserted",
               f"Event {ev['type']} {ev['reason']}")
        expect(f"leaf: by-hand \u2192 {want_leaf}" in ev["message"],
               f"Event message {ev['message']!r}")
        io = ev["involvedObject"]
        expect(io.get("kind") == "Node" and io.get("uid"), f"involvedObject {io}")
        time.sleep(1)
        expect(env.patches() == before + 2,
               f"{env.patches() - before} PATCHes, want 2 (the test's and the controller's)")
        drift = [json.loads(l) for l in log_of(p).splitlines() if l.startswith("{")]
        expect(any(l.get("level") in ("warn", "warning") and name in json.dumps(l)
                   for l in drift), "the drift was not logged at warn")
    finally:
        stop(p)


@case
def drift_fight(env):
    """Another controller fights topo-sync for a node's owned label: a thread
    puts its own value back every time topo-sync sets the label, for 8 s.
    topo-sync's reassertions back off (at once, then 1 s, 2 s, 4 s later: a
    handful of PATCHes, not hundreds), the node has one Warning Event whose
    count says how many, the backoff gauge shows the node while it waits, no
    other node is written, and once the fight stops the label is reasserted
    within the current backoff (8 s)."""
    p, port = converged_controller(env)
    try:
        time.sleep(1)
        name = sorted(env.want)[6]
        want_leaf = env.want[name][P + "leaf"]
        env.admin("requests/clear", {})
        done = threading.Event()
        fights = []

        def fighter():
            while not done.is_set():
                status, node = env.request("GET", f"/api/v1/nodes/{name}")
                if status == 200 and node["metadata"]["labels"].get(P + "leaf") == want_leaf:
                    env.request("PATCH", f"/api/v1/nodes/{name}",
                                {"metadata": {"labels": {P + "leaf": "fighter"}}},
                                ctype="application/merge-patch+json")
                    fights.append(time.monotonic())
                time.sleep(0.01)

        t = threading.Thread(target=fighter, daemon=True)
        t0 = time.monotonic()
        t.start()
        gauge = set()
        while time.monotonic() - t0 < 8:
            status, text = http_get(port, "/metrics")
            for line in text.splitlines():
                if line.startswith("topo_sync_drift_backoff_nodes "):
                    gauge.add(line.split()[1])
            time.sleep(0.2)
        done.set()
        t.join(5)
        stopped = time.monotonic()
        reqs = env.admin("requests")["requests"]
        node_patches = [r for r in reqs if r["method"] == "PATCH"
                        and r["path"].startswith("/api/v1/nodes/")]
        ours = len([r for r in node_patches if r["path"] == f"/api/v1/nodes/{name}"]) - len(fights)
        print(f"8 s of fighting: {len(fights)} resets by the fighter, {ours} reassertions; "
              f"backoff gauge values {sorted(gauge)}")
        expect(3 <= ours <= 8, f"{ours} reassertions of {name} in 8 s, want 3..8 (doubling "
                               f"from 1 s); the fighter reset it {len(fights)} times")
        others = {r["path"] for r in node_patches if r["path"] != f"/api/v1/nodes/{name}"}
        expect(not others, f"other nodes written during the fight: {sorted(others)[:5]}")
        expect("1" in gauge, f"topo_sync_drift_backoff_nodes never 1: {sorted(gauge)}")
        events = [ev for ev in env.items("/api/v1/namespaces/default/events")
                  if ev.get("involvedObject", {}).get("name") == name]
        expect(len(events) == 1, f"{len(events)} Events about {name}, want 1 (aggregated)")
        ev = events[0]
        expect(ev["reason"] == "TopologyLabelsReasserted" and ev.get("count") == ours,
               f"Event {ev['reason']} count {ev.get('count')}, want {ours}")
        expect(f"reasserted {ours} times in the last" in ev["message"] and
               f"leaf: fighter \u2192 {want_leaf}" in ev["message"],
               f"Event message {ev['message']!r}")
        # The fight over: the label comes back within the current backoff.
        wait_for(lambda: env.owned().get(name) == env.want[name], 10,
                 "the label reasserted after the fight")
        print(f"reasserted {time.monotonic() - stopped:.1f} s after the fight stopped")
        log = log_of(p)
        expect("reasserting in" in log and "next_reassertion_after" in log,
               "the log does not say when the next reassertion is due")
    finally:
        stop(p)


def without_switch(text, guid):
    """A whole, consistent dump without switch guid: its stanza, every port
    line naming it, and the adapters left with no port (both cable ends go,
    so the dump is no asymmetric one)."""
    out = []
    for st in text.split("\n\n"):
        lines = st.split("\n")
        head = [l for l in lines if l.startswith(("Switch", "Ca"))]
        if head and f'"{guid}"' in head[0]:
            continue
        lines = [l for l in lines if f'"{guid}"' not in l]
        if head and head[0].startswith("Ca") and not any(l.startswith("[") for l in lines):
            continue
        out.append("\n".join(lines))
    return "\n\n".join(out)


@case
def two_writers_fight(env):
    """Two topo-sync processes on dumps that disagree about two nodes (B's
    lacks the leaf switch those two hang from, both cable ends): each
    rewrites the record annotation, so each saw the other's write as a
    change of plan and wrote back at once, hundreds of PATCHes and Events in
    seconds. Each now knows what it last wrote: its plan unchanged, the node
    changed is a reassertion, backed off per node. Over 8 s of fight the two
    nodes get at most 5 PATCHes per node per writer (at once, then 1 s, 2 s,
    4 s later: doubling) and as few Event writes; the other nodes, on which
    the two agree, get none."""
    leaf = "S-2c5eab0300c26400"
    dump_b = env.path("fabric-b.txt")
    with open(env.dump) as fh:
        text = fh.read()
    expect(f'"{leaf}"' in text, f"no switch {leaf} in the dump")
    with open(dump_b, "w") as fh:
        fh.write(without_switch(text, leaf))
    want_b = {n: l for n, l in env.offline_labels("--nodes-file", env.path("nodes.json"),
                                                  dump=dump_b).items() if l}
    contested = sorted(n for n in env.want if want_b.get(n) != env.want[n])
    expect(len(contested) == 2 and set(want_b) == set(env.want),
           f"nodes the dumps disagree about: {contested}")
    procs = [env.spawn("--leader-elect", "false", "--health-port", "0"),
             env.spawn("--leader-elect", "false", "--health-port", "0", dump=dump_b)]
    try:
        wait_for(lambda: all(env.owned().get(n) for n in env.want), 30, "every node labelled")
        env.admin("requests/clear", {})
        time.sleep(8)
        reqs = env.admin("requests")["requests"]
        node_patches = [r["path"].rsplit("/", 1)[1] for r in reqs
                        if r["method"] == "PATCH" and r["path"].startswith("/api/v1/nodes/")]
        fight = [n for n in node_patches if n in contested]
        others = sorted(set(node_patches) - set(contested))
        events = [r for r in reqs if "/events" in r["path"] and r["method"] in ("POST", "PATCH")]
        print(f"8 s of two writers: {len(fight)} PATCHes of {contested}, {len(events)} Event "
              f"writes, {len(others)} other nodes written")
        budget = 5 * 2 * len(contested)
        expect(len(fight) <= budget,
               f"{len(fight)} PATCHes of the {len(contested)} contested nodes in 8 s, want at "
               f"most {budget} (backing off)")
        expect(len(events) <= budget, f"{len(events)} Event writes in 8 s, want at most {budget}")
        expect(not others, f"nodes both plan alike written during the fight: {others[:5]}")
        # Which of the two meets the other's write first (and so backs off
        # first, or only) is up to timing: at least one says it.
        expect(any("reasserting in" in log_of(p) for p in procs), "no writer said it backs off")
        for ev in env.items("/api/v1/namespaces/default/events"):
            if ev.get("involvedObject", {}).get("name") in contested and ev.get("count", 1) > 1:
                expect(ev["reason"] == "TopologyLabelsReasserted",
                       f"an aggregated Event {ev['reason']}")
    finally:
        for p in procs:
            stop(p)


@case
def qps_limit(env):
    """--kube-qps 20 --kube-burst 20 with 122 nodes to label (the dump's
    B11-P1-CUFM-02 is node b11-p1-cufm-02: names are lower-cased): the
    writes take at least (122 - 20) / 20 s, every node still labelled once."""
    n = 122
    expect(len(env.want) == n, f"{len(env.want)} planned nodes, the case counts on {n}")
    env.admin("requests/clear", {})
    env.once("--kube-qps", "20", "--kube-burst", "20")
    times = [r["t"] for r in env.admin("requests")["requests"] if r["method"] == "PATCH"]
    expect(len(times) == n, f"{len(times)} PATCHes, want {n}")
    span = max(times) - min(times)
    floor = (n - 20) / 20
    print(f"{n} PATCHes in {span:.2f} s at 20 QPS, burst 20 (at least {floor:.2f} s)")
    expect(span >= floor - 0.3, f"{n} PATCHes in {span:.2f} s: faster than 20 QPS allows")
    # Paced, not bunched: no second holds more than the burst plus a
    # second's worth of tokens.
    t0 = min(times)
    per_second = {}
    for t in times:
        per_second[int(t - t0)] = per_second.get(int(t - t0), 0) + 1
    expect(max(per_second.values()) <= 20 + 20, f"PATCHes per second: {per_second}")
    env.expect_converged()

@case
def other_labels_quiet(env):
    """Labels a round does not read (GFD's timestamp, rewritten every minute
    on every node; a team label) change without waking a round; an owned
    one wakes it at once."""
    p, _ = converged_controller(env)
    try:
        time.sleep(1.5)
        rounds = len([l for l in log_of(p).splitlines() if '"round: ' in l])
        for name in sorted(env.want)[:20]:
            status, _ = env.request("PATCH", f"/api/v1/nodes/{name}",
                                    {"metadata": {"labels": {
                                        "nvidia.com/gfd.timestamp": str(int(time.time())),
                                        "team": "infra"}}},
                                    ctype="application/merge-patch+json")
            expect(status == 200, f"PATCH {name}: {status}")
        time.sleep(2)
        after = len([l for l in log_of(p).splitlines() if '"round: ' in l])
        expect(after == rounds, f"{after - rounds} rounds after other labels changed")
        strip_owned(env, sorted(env.want)[7])
        wait_for(lambda: len([l for l in log_of(p).splitlines() if '"round: ' in l]) > rounds,
                 10, "a round after an owned label changed")
        env.expect_converged()
    finally:
        stop(p)

@case
def topograph_converged(env):
    """--topograph-labels: topograph's keys written beside ours by the first
    --once; a second sends nothing (the node view keeps every key the
    writer owns), and a tier label changed by hand is put back."""
    env.once("--topograph-labels")
    expect(env.patches() == len(env.want), f"{env.patches()} PATCHes for {len(env.want)} nodes")
    name = sorted(env.want)[0]
    labels = env.labels()[name]
    expect(labels.get("fabric.topograph.run/tier-0") == env.want[name][P + "leaf"],
           f"topograph's tier-0 on {name}: {labels}")
    before = env.patches()
    env.once("--topograph-labels")
    expect(env.patches() == before, f"{env.patches() - before} PATCHes on a converged cluster")
    status, _ = env.request("PATCH", f"/api/v1/nodes/{name}",
                            {"metadata": {"labels": {"fabric.topograph.run/tier-0": "x"}}},
                            ctype="application/merge-patch+json")
    expect(status == 200, f"PATCH: {status}")
    env.once("--topograph-labels")
    expect(env.patches() == before + 2, f"{env.patches() - before - 1} PATCHes, want 1")
    expect(env.labels()[name].get("fabric.topograph.run/tier-0") == env.want[name][P + "leaf"],
           "the tier-0 label not put back")

def expect_foreign_kept(env):
    for name, labels in env.labels().items():
        kept = {k: labels.get(k) for k in ["team", *FOREIGN]}
        expect(kept == {"team": "ml", **FOREIGN}, f"{name}: foreign labels changed: {kept}")


@case
def foreign_labels_kept(env):
    """Every node carries other owners' labels (kubernetes.io/os,
    node-role.kubernetes.io/worker, topology.topo.io.evil/x,
    fabric.topograph.run/tier-0x, ...): a round that labels every node with
    topograph's keys too, and one with a smaller topology that removes some
    of topo's and topograph's keys, leave every one of them as it was."""
    env.once("--topograph-labels")
    expect(env.patches() == len(env.want), f"{env.patches()} PATCHes for {len(env.want)} nodes")
    env.expect_converged()
    expect_foreign_kept(env)
    name = sorted(env.want)[0]
    labels = env.labels()[name]
    expect(labels.get("fabric.topograph.run/tier-1") == env.want[name][P + "spine"],
           f"topograph's tier-1 not written: {labels}")
    # Without the spine level: its label and topograph's tier-1 go, no other.
    env.once("--topograph-labels", "--levels", "leaf,hostname")
    labels = env.labels()[name]
    expect(P + "spine" not in labels and "fabric.topograph.run/tier-1" not in labels and
           labels.get(P + "leaf") == env.want[name][P + "leaf"] and
           labels.get("fabric.topograph.run/tier-0") == env.want[name][P + "leaf"],
           f"{name}: {labels}")
    expect_foreign_kept(env)


@case
def prefix_refused(env):
    """A prefix that would reach other owners' labels (--prefix kubernetes.io/,
    "t", node-role.kubernetes.io without '/', labels.prefix in the file) ends
    topo-sync with exit 2 and a message naming the field before any request:
    the API server sees none, and the kubeconfig is not even read."""
    with open(env.path("prefix.yaml"), "w") as fh:
        fh.write("labels:\n  prefix: node-role.kubernetes.io/\n")
    runs = [(["--prefix", "kubernetes.io/"], '--prefix: "kubernetes.io/": is under kubernetes.io'),
            (["--prefix", "t"], '--prefix: "t": must end in \'/\''),
            (["--prefix", "node-role.kubernetes.io"], "--prefix: \"node-role.kubernetes.io\""),
            (["--prefix", "a/b/"], "exactly one '/'"),
            (["--config", env.path("prefix.yaml")],
             env.path("prefix.yaml") + ':2:11: labels.prefix: "node-role.kubernetes.io/": is '
             "under kubernetes.io")]
    before = env.admin("stats")
    for extra, want in runs:
        for kubeconfig in (env.kubeconfig, env.path("no-such-kubeconfig")):
            p = subprocess.run([ARGS.topo_sync, "--kubeconfig", kubeconfig, "--ibnetdiscover",
                                env.dump, "--once", *extra], capture_output=True, text=True,
                               timeout=60)
            expect(p.returncode == 2 and want in p.stderr,
                   f"{extra}: exit {p.returncode}, stderr lacks {want!r}: {p.stderr[-2000:]}")
    after = env.admin("stats")
    expect(after["counts"] == before["counts"] and after["verbs"] == before["verbs"],
           f"requests sent: {before['counts']} -> {after['counts']}")
    expect_foreign_kept(env)
    expect(all(v == {} for v in env.owned().values()), "labels written")


@case
def encrypted_client_key(env):
    """A kubeconfig whose client key is encrypted: topo-sync exits 2 with a
    message naming the field, at once: no crash in the TLS setup, no
    passphrase asked for (no terminal, stdin closed), no request sent."""
    cert, key, _ = encrypted_client_pair(env.dir)
    kc = env.write_kubeconfig("enc.yaml", user={"client-certificate-data": cert,
                                                "client-key-data": key})
    before = env.admin("stats")
    p = subprocess.run([ARGS.topo_sync, "--kubeconfig", kc, "--ibnetdiscover", env.dump,
                        "--once"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       start_new_session=True, timeout=30)
    want = "users[0].user.client-key-data: an encrypted private key: topo cannot ask for its "
    expect(p.returncode == 2 and want in p.stderr and "pass phrase" not in p.stderr,
           f"exit {p.returncode}, stderr {p.stderr[-2000:]!r}")
    after = env.admin("stats")
    expect(after["counts"] == before["counts"], "requests sent")


META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def node_reads(env):
    """topo-sync's lists of Nodes as (Accept, status) from the request log
    (the test's own reads have no query), and its watches' Accept headers."""
    lists = [(r.get("accept"), r["status"]) for r in env.admin("requests")["requests"]
             if r["method"] == "GET" and r["path"].startswith("/api/v1/nodes?")
             and "watch=" not in r["path"]]
    watches = [w.get("accept") for w in env.admin("stats")["watch_starts"]
               if w["resource"] == "nodes"]
    return lists, watches


def relabel_one(env, p, index):
    """A node's owned labels removed by another writer reach the running
    controller by its watch and are put back."""
    name = sorted(env.want)[index]
    strip_owned(env, name)
    wait_for(lambda: env.owned().get(name) == env.want[name], 15, f"{name} relabelled")
    env.expect_converged()


@case
def nodes_metadata_only(env):
    """The node reflector lists and watches Nodes metadata only (what it
    reads: names, uids, labels, annotations): every LIST asks for a
    PartialObjectMetadataList and every WATCH for PartialObjectMetadata;
    the plan is the offline one over the full objects, the PATCHes label
    every node, and a change seen by the watch is put back."""
    env.admin("requests/clear", {})
    p, _ = converged_controller(env)
    try:
        relabel_one(env, p, 5)
        lists, watches = node_reads(env)
        expect(lists and all(l == (META_LIST, 200) for l in lists), f"node lists: {lists}")
        expect(watches and all(w == META for w in watches), f"node watches: {watches}")
        expect("refused metadata-only" not in log_of(p), "a fallback without a 406")
    finally:
        stop(p)


@case
def nodes_metadata_406(env):
    """A server that cannot answer metadata only (406 Not Acceptable, as an
    aggregated API server or kube-apiserver before 1.15): one refused list,
    said once in the log, then full objects for the lists and watches of
    that client; the plan, the writes and the watch work the same."""
    env.admin("config", {"metadata_406": True})
    env.admin("requests/clear", {})
    p, _ = converged_controller(env)
    try:
        relabel_one(env, p, 6)
        lists, watches = node_reads(env)
        expect(lists[:2] == [(META_LIST, 406), ("application/json", 200)],
               f"node lists: {lists}")
        expect(all(l == ("application/json", 200) for l in lists[1:]), f"node lists: {lists}")
        expect(watches and all(w == "application/json" for w in watches),
               f"node watches: {watches}")
        said = [l for l in log_of(p).splitlines() if "refused metadata-only" in l]
        expect(len(said) == 1, f"the fallback logged {len(said)} times: {said}")
        expect("406" in said[0], f"the fallback's message: {said[0]}")
    finally:
        stop(p)


@case
def plain_hgx(env):
    """Nodes as a plain HGX cluster has them: no GPU Feature Discovery label
    at all (nvidia.com/gpu only in status, from the device plugin), the
    kubelet's and other owners' labels, a taint. With default flags every
    node is labelled, each its own NVLink domain, and no foreign label is
    touched. Without the own-node rule (sources.nodes.nvlinkHostnameFallback:
    false) every node is held: the log says which level and which setting,
    and topo_sync_level_missing_nodes counts them."""
    foreign = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
               "node-role.kubernetes.io/worker": "", "team": "ml"}
    with open(env.path("hgx.json"), "w") as fh:
        json.dump({"apiVersion": "v1", "kind": "NodeList", "items": [
            {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": n, "labels": dict(foreign, **{"kubernetes.io/hostname": n})},
             "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
             "status": {"capacity": {"nvidia.com/gpu": "8"}}} for n in sorted(env.want)]}, fh)
    env.admin("load", {"file": env.path("hgx.json")})
    cfg = env.path("no-own-node.yaml")
    with open(cfg, "w") as fh:
        fh.write("sources:\n  nodes:\n    nvlinkHostnameFallback: false\n")
    port = free_port()
    p = env.spawn("--leader-elect", "false", "--health-port", str(port), "--config", cfg)
    try:
        n = len(env.want)
        wait_for(lambda: metric(port, "topo_sync_level_missing_nodes", level="nvlink") == n, 30,
                 "the held nodes counted")
        expect(env.patches() == 0, f"{env.patches()} PATCHes with every node held")
        want = (f"nvlink: {n} of {n} nodes have no value, so they get no labels: no source "
                "gives them an NVLink domain")
        wait_for(lambda: want in log_of(p), 10, "the held level in the log")
        expect("sources.nodes.nvlinkHostnameFallback is false: set it to true" in log_of(p),
               log_of(p)[-2000:])
    finally:
        stop(p)
    # --once says it with its exit status too: 1, not "converged".
    held = env.once("--config", cfg, expect_rc=1)
    expect(want in held.stderr, held.stderr[-2000:])
    expect(env.patches() == 0, f"{env.patches()} PATCHes with every node held")
    env.once()
    env.expect_converged()
    for name, labels in env.labels().items():
        expect(labels.get(P + "nvlink") == name, f"{name}: nvlink {labels.get(P + 'nvlink')}")
        expect(all(labels.get(k) == v for k, v in foreign.items()), f"{name}: {labels}")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--topo-sync")
    ap.add_argument("--source")
    ap.add_argument("--case")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ARGS = ap.parse_args()
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    env = Env(ARGS.keep)
    try:
        CASES[ARGS.case](env)
    except Failure as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        for p in env.procs:
            if hasattr(p, "log_path"):
                print(f"--- {p.log_path}\n{log_of(p)[-3000:]}", file=sys.stderr)
        return 1
    finally:
        env.close()
    print(f"ok {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
