#!/usr/bin/env python3
"""Benchmark of topo-sync's controller (controllers/) against the fake
kube-apiserver (test/e2e/fake_apiserver.py) over TLS with a bearer token file.
Prints figures beside their targets; not a test (bench/README.md "bench/sync").

The cluster: --nodes realistic GPU nodes (POST /_fake/bulk: HGX H100 nodes of
about 6 KB, GPU feature discovery labels, managedFields, images) without any
topology.topo.io/ label, and an ibnetdiscover dump of the rail-optimised fat
tree cabling them (gen_fabric.py: 8 adapters per host, 32-host leaves, 256-host
pods, a core tier), the only source.

  (a) cold start: `topo-sync --once` on a fresh server, once with a high
      client rate limit (--kube-qps/--kube-burst 10000: what the server and
      the writer can do), once with the default 50/100: wall time to converge,
      time until the first PATCH, PATCHes/s over the writes, CPU, peak RSS
      (the child's own ru_maxrss, os.wait4);
  (b) a converged round: `topo-sync --once` again (--repeat times) on the
      converged cluster: zero PATCHes, CPU of the whole run and per phase from
      its log (the list, the source read, the plan, the diffs); then the
      long-running controller with --resync-interval 1: the CPU its reconcile
      thread spends on each resync round (plan + diffs, from the round log
      lines; the list is not redone, the watch keeps the view) and its RSS;
  (c) the same controller re-reading its source (--source-interval 3,
      --resync-interval 600: reads, no rounds): its RSS between reads and its
      peak over --rereads reads, the source read a running controller does
      on its interval, with the Node view and the last good facts held.

Python 3 standard library only; installs nothing.

usage: bench_topo_sync.py [--topo-sync BIN] [--nodes N] [--repeat N] [--rounds N]
                          [--rereads N] [--skip-default-qps] [--keep]
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from bench_sync import Server, cpu_seconds, vm, wait_child  # noqa: E402  (bench/bench_sync.py)

TARGET_ROUND_CPU_S = 0.5
TARGET_RSS_MIB = 128.0
HIGH_QPS = "10000"


def mark(ok):
    return "ok" if ok else "MISS"


class Cluster:
    """A fresh fake API server holding n unlabelled bulk nodes."""

    def __init__(self, parent, n, tag):
        self.dir = os.path.join(parent, tag)
        os.makedirs(self.dir)
        # The history only needs the controller's own PATCHes (watch events).
        self.srv = Server(self.dir, history=max(50000, 3 * n))
        t = time.monotonic()
        out = self.srv.admin("bulk", {"nodes": n, "topology_labels": False})
        print(f"server [{tag}]: {n} nodes ({out['bytes']['nodes'] / 1e6:.0f} MB of JSON) "
              f"loaded in {time.monotonic() - t:.1f} s")

    def patches(self):
        return self.srv.admin("stats")["verbs"].get("nodes", {}).get("PATCH", 0)

    def close(self):
        self.srv.close()


def log_lines(path):
    out = []
    with open(path) as fh:
        for line in fh:
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def msgs(path, start):
    return [l.get("msg", "") for l in log_lines(path) if l.get("msg", "").startswith(start)]


def number_after(text, word, unit="ms"):
    """The number before `unit` following `word` in text ("plan 12 ms")."""
    i = text.find(word)
    if i < 0:
        return None
    rest = text[i + len(word):].split()
    for k, tok in enumerate(rest[:-1]):
        if rest[k + 1].startswith(unit):
            try:
                return float(tok.strip("("))
            except ValueError:
                return None
    return None


def sync_argv(a, cl, *extra):
    return [a.topo_sync, "--kubeconfig", cl.srv.kubeconfig, "--ibnetdiscover", a.dump,
            "--log-format", "json", "--leader-elect", "false", *extra]


def run_once(a, cl, tag, *extra):
    """topo-sync --once: a dict of figures."""
    log = os.path.join(cl.dir, f"{tag}.log")
    before = cl.patches()
    t0 = time.monotonic()
    p = subprocess.Popen(sync_argv(a, cl, "--once", *extra), stdout=subprocess.DEVNULL,
                         stderr=open(log, "w"))
    first = None
    while True:
        done = wait_child(p, block=False)
        if done is not None:
            break
        if first is None and cl.patches() > before:
            first = time.monotonic() - t0
        time.sleep(0.05)
    wall = time.monotonic() - t0
    rc, maxrss_kib, cpu = done
    if rc != 0:
        sys.exit(f"bench_topo_sync: topo-sync --once exited {rc}; see {log}")
    once = msgs(log, "once:")
    rnd = msgs(log, "round:")
    r = rnd[-1] if rnd else ""
    return {"wall": wall, "first": first, "cpu": cpu, "rss_mib": maxrss_kib / 1024,
            "patches": cl.patches() - before,
            "list_ms": number_after(once[0], "listed in") if once else None,
            "list_cpu": number_after(once[0], "ms (") if once else None,
            "read_ms": number_after(once[0], "read in") if once else None,
            "read_cpu": number_after(once[0].split("read in", 1)[1], "ms (") if once else None,
            "plan_cpu": number_after(r, "plan"), "writes_cpu": number_after(r, "writes"),
            "writes_ms": number_after(r, "writes took"), "round": r}


def cold(a, d, tag, qps):
    cl = Cluster(d, a.nodes, tag)
    try:
        extra = ("--kube-qps", qps, "--kube-burst", qps) if qps else ()
        f = run_once(a, cl, tag, *extra)
        rate = f["patches"] / (f["writes_ms"] / 1000) if f["writes_ms"] else 0
        print(f"(a) cold start, {'--kube-qps/--kube-burst ' + qps if qps else 'default QPS 50/100'}:"
              f" converged in {f['wall']:.1f} s (first PATCH after "
              f"{f['first'] or 0:.1f} s: list {f['list_ms'] or 0:.0f} ms, source "
              f"{f['read_ms'] or 0:.0f} ms, plan {f['plan_cpu'] or 0:.0f} ms CPU), "
              f"{f['patches']} PATCHes in {(f['writes_ms'] or 0) / 1000:.1f} s = "
              f"{rate:.0f}/s; CPU {f['cpu']:.2f} s; peak RSS {f['rss_mib']:.0f} MiB "
              f"[{mark(f['rss_mib'] <= TARGET_RSS_MIB)}]")
        if f["patches"] != a.nodes:
            print(f"    WARNING: {f['patches']} PATCHes for {a.nodes} nodes")
        return f, cl
    except BaseException:
        cl.close()
        raise


def converged_once(a, cl):
    runs = [run_once(a, cl, f"converged-{i}") for i in range(a.repeat)]
    best = min(runs, key=lambda f: f["cpu"])
    writes = sum(f["patches"] for f in runs)
    cpu = statistics.median(f["cpu"] for f in runs)
    print(f"(b) converged, topo-sync --once x{a.repeat}: {writes} PATCHes; CPU median {cpu:.2f} s "
          f"(min {best['cpu']:.2f} s: list {best['list_cpu'] or 0:.0f} ms, source read "
          f"{best['read_cpu'] or 0:.0f} ms, plan {best['plan_cpu'] or 0:.0f} ms, diffs "
          f"{best['writes_cpu'] or 0:.0f} ms, the rest start-up and exit); wall "
          f"{best['wall']:.1f} s; peak RSS {max(f['rss_mib'] for f in runs):.0f} MiB")
    return runs, writes


def converged_daemon(a, cl, rounds):
    """The long-running controller: the CPU of its resync rounds, from its
    log (the reconcile thread's own) and from the process's CPU time between
    the first and the last of them (all threads, idle wake-ups included)."""
    log = os.path.join(cl.dir, "daemon.log")
    before = cl.patches()
    p = subprocess.Popen(sync_argv(a, cl, "--resync-interval", "1", "--health-port", "0"),
                         stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        t0 = time.monotonic()
        hwm, marks = 0, {}
        while len(marks) < 2:
            n = len(msgs(log, "round:"))
            for want in (1, rounds + 1):  # the first round follows the source read
                if n >= want and want not in marks:
                    marks[want] = cpu_seconds(p.pid)
            if p.poll() is not None:
                sys.exit(f"bench_topo_sync: the controller exited {p.returncode}; see {log}")
            if time.monotonic() - t0 > 180:
                sys.exit(f"bench_topo_sync: no {rounds + 1} rounds in 180 s; see {log}")
            hwm = max(hwm, vm(p.pid, "VmHWM"))
            time.sleep(0.02)
        rss = vm(p.pid, "VmRSS")
        hwm = max(hwm, vm(p.pid, "VmHWM"))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(60)
    proc = (marks[rounds + 1] - marks[1]) / rounds * 1000
    rs = msgs(log, "round:")[1:rounds + 1]
    plan = [number_after(r, "plan") for r in rs]
    diffs = [number_after(r, "writes") for r in rs]
    if None in plan or None in diffs:  # a topo-sync that does not log them
        med, detail = proc, "no per-thread figures in its log"
    else:
        tot = [x + y for x, y in zip(plan, diffs)]
        med = statistics.median(tot)
        detail = (f"reconcile thread median {med:.0f} ms: plan {statistics.median(plan):.0f} ms,"
                  f" diffs {statistics.median(diffs):.0f} ms; min {min(tot):.0f}, "
                  f"max {max(tot):.0f}")
    print(f"(b) converged, the running controller's resync rounds x{rounds}: "
          f"{cl.patches() - before} PATCHes; CPU per round {proc:.0f} ms (process) "
          f"[{mark(max(med, proc) / 1000 <= TARGET_ROUND_CPU_S)}] ({detail}); "
          f"RSS {rss / 1024:.0f} MiB, peak {hwm / 1024:.0f} MiB "
          f"[{mark(hwm / 1024 <= TARGET_RSS_MIB)}]")
    return max(med, proc), hwm / 1024


def converged_rereads(a, cl, reads):
    """The running controller's RSS while it re-reads its source: between
    reads (VmRSS after the last) and at their peak (VmHWM)."""
    log = os.path.join(cl.dir, "rereads.log")
    p = subprocess.Popen(sync_argv(a, cl, "--source-interval", "3", "--resync-interval", "600",
                                   "--health-port", "0"),
                         stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        t0 = time.monotonic()
        while len(msgs(log, "source ibnetdiscover:")) < reads + 1:
            if p.poll() is not None:
                sys.exit(f"bench_topo_sync: the controller exited {p.returncode}; see {log}")
            if time.monotonic() - t0 > 300:
                sys.exit(f"bench_topo_sync: no {reads + 1} source reads in 300 s; see {log}")
            time.sleep(0.1)
        rss, hwm = vm(p.pid, "VmRSS"), vm(p.pid, "VmHWM")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(60)
    print(f"(c) the running controller re-reading its source x{reads}: RSS {rss / 1024:.0f} MiB, "
          f"peak {hwm / 1024:.0f} MiB [{mark(hwm / 1024 <= TARGET_RSS_MIB)}]")
    return hwm / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topo-sync",
                    default=os.path.join(ROOT, "build-bench", "controllers", "topo-sync"))
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3, help="converged --once runs")
    ap.add_argument("--rounds", type=int, default=5, help="resync rounds of the controller")
    ap.add_argument("--rereads", type=int, default=3, help="source re-reads of the controller")
    ap.add_argument("--skip-default-qps", action="store_true",
                    help="no cold start at 50/100 QPS (it takes nodes/50 s)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    if not os.access(a.topo_sync, os.X_OK):
        sys.exit(f"bench_topo_sync: {a.topo_sync}: not built (bench/sync/run.sh builds it)")
    d = tempfile.mkdtemp(prefix="topo-bench-topo-sync-")
    a.dump = os.path.join(d, "fabric.txt")
    try:
        t = time.monotonic()
        subprocess.run([sys.executable, os.path.join(HERE, "gen_fabric.py"), "--hosts",
                        str(a.nodes), "-o", a.dump], check=True)
        print(f"fabric: {os.path.getsize(a.dump) / 1e6:.0f} MB ibnetdiscover dump in "
              f"{time.monotonic() - t:.1f} s; load average {os.getloadavg()[0]:.1f}, "
              f"{os.cpu_count()} CPUs")
        high, cl = cold(a, d, "cold-high-qps", HIGH_QPS)
        try:
            runs, writes = converged_once(a, cl)
            round_cpu, daemon_rss = converged_daemon(a, cl, a.rounds)
            reread_rss = converged_rereads(a, cl, a.rereads)
        finally:
            cl.close()
        default = None
        if not a.skip_default_qps:
            default, cl = cold(a, d, "cold-default-qps", None)
            cl.close()
        rss = max([high["rss_mib"], daemon_rss, reread_rss] + [f["rss_mib"] for f in runs] +
                  ([default["rss_mib"]] if default else []))
        print("targets:")
        print(f"  converged round over {a.nodes} nodes, CPU (running controller) "
              f"{round_cpu / 1000:.2f} s <= {TARGET_ROUND_CPU_S} s: "
              f"{mark(round_cpu / 1000 <= TARGET_ROUND_CPU_S)}")
        once_cpu = statistics.median(f["cpu"] for f in runs)
        print(f"  converged --once over {a.nodes} nodes, whole process CPU {once_cpu:.2f} s "
              f"(list and source read included) <= {TARGET_ROUND_CPU_S} s: "
              f"{mark(once_cpu <= TARGET_ROUND_CPU_S)}")
        print(f"  zero writes when converged: {mark(writes == 0)}")
        print(f"  peak RSS {rss:.0f} MiB <= {TARGET_RSS_MIB:.0f} MiB: {mark(rss <= TARGET_RSS_MIB)}")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if a.keep:
            print(f"kept {d}")
        else:
            shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
