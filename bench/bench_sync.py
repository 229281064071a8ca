#!/usr/bin/env python3
"""Benchmark of `topoassign cache sync` (the cache filler) against the fake
kube-apiserver (test/e2e/fake_apiserver.py) over TLS with a bearer token.
Prints figures beside their targets; not a test (bench/README.md).

  (a) cold sync: `cache sync --once --stats` into a fresh cache file, from a
      server holding --nodes realistic GPU nodes, --pods pods and --jobs Jobs:
      wall time, time until the file holds all three kinds (watch_state
      written), peak RSS (the child's own rusage);
  (b) watch events: a long-running `cache sync` on that cache, then --events
      watch events made by the server as fast as it can (pod updates, deletes,
      creations, node label changes, job updates): time from the first event
      until the file's watch_state holds the last one of every kind; events/s;
      the sync's peak RSS (VmHWM sampled, then its rusage after SIGTERM);
  (c) the fake server alone: how fast a trivial Python client pages through
      the same lists and reads the same number of events from watch streams,
      to tell whether the server is what limits (a) and (b).

Python 3 standard library only; installs nothing.

usage: bench_sync.py [--topoassign BIN] [--nodes N] [--pods N] [--jobs N]
                     [--events N] [--page-size N] [--keep]
"""

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKE = os.path.join(ROOT, "test", "e2e", "fake_apiserver.py")
PKI = os.path.join(ROOT, "test", "e2e", "make_test_pki.sh")
KINDS = ("nodes", "pods", "jobs")
PATHS = {"nodes": "/api/v1/nodes", "pods": "/api/v1/pods", "jobs": "/apis/batch/v1/jobs"}
MIX = {"pod_update": 0.5, "pod_delete": 0.15, "pod_create": 0.15, "node_label": 0.1,
       "job_update": 0.1}

TARGET_COLD_S = 15.0
TARGET_EVENTS_PER_S = 20000.0
TARGET_RSS_MIB = 128.0


class Server:
    def __init__(self, d, history):
        self.dir = d
        subprocess.run(["sh", PKI, d], check=True, capture_output=True, timeout=60)
        self.token = "bench-token"
        with open(os.path.join(d, "token"), "w") as fh:
            fh.write(self.token + "\n")
        self.p = subprocess.Popen(
            [sys.executable, FAKE, "--tls-cert", os.path.join(d, "server.pem"),
             "--tls-key", os.path.join(d, "server.key"), "--token-file",
             os.path.join(d, "token"), "--history", str(history),
             "--bookmark-interval", "60"],
            stdout=subprocess.PIPE, stderr=open(os.path.join(d, "server.log"), "w"), text=True)
        self.port = int(self.p.stdout.readline())
        self.url = f"https://127.0.0.1:{self.port}"
        self.ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.pem"))
        with open(os.path.join(d, "ca.pem"), "rb") as fh:
            ca = base64.b64encode(fh.read()).decode()
        self.kubeconfig = os.path.join(d, "kubeconfig")
        with open(self.kubeconfig, "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "b",
                       "clusters": [{"name": "c", "cluster": {
                           "server": self.url, "certificate-authority-data": ca}}],
                       "contexts": [{"name": "b", "context": {"cluster": "c", "user": "u"}}],
                       "users": [{"name": "u", "user": {"tokenFile": os.path.join(d, "token")}}]},
                      fh)

    def admin(self, path, body=None, timeout=600):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + "/_fake/" + path, data=data,
                                     method="POST" if body is not None else "GET",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
            return json.loads(r.read())

    def rss_mib(self):
        return vm(self.p.pid, "VmRSS") / 1024

    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()


def vm(pid, field):
    """A /proc/PID/status figure in KiB (0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_child(p, block=True):
    """Reaps a Popen child with wait4: (exit status, its own peak RSS in KiB,
    its CPU seconds), or None while it runs (block=False). Popen.poll/wait
    would reap it first."""
    pid, status, ru = os.wait4(p.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return None
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_maxrss, ru.ru_utime + ru.ru_stime


def cpu_seconds(pid):
    """user + system CPU seconds of a running process (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def wait_caught_up(db, last_rv_by_kind, pid, limit=600):
    """Polls the file until its watch_state reaches every kind's last RV:
    (seconds, VmHWM KiB seen)."""
    t0 = time.monotonic()
    hwm = 0
    while True:
        w = watch_rvs(db)
        if all(w.get(k, 0) >= v for k, v in last_rv_by_kind.items()):
            return time.monotonic() - t0, hwm
        hwm = max(hwm, vm(pid, "VmHWM"))
        if time.monotonic() - t0 > limit or vm(pid, "VmRSS") == 0:
            sys.exit("bench_sync: the sync did not catch up")
        time.sleep(0.01)


def watch_rvs(db):
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return {k: int(v) for k, v in
                    con.execute("SELECT kind, resource_version FROM watch_state")}
        finally:
            con.close()
    except sqlite3.Error:
        return {}


def parse_stats(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return None


def mark(ok):
    return "ok" if ok else "MISS"


# ------------------------------------------------------------------ (c) the server alone

def raw_get(srv, path):
    """GET over TLS with the body read as bytes (no JSON parsing): (status, bytes)."""
    host = "127.0.0.1"
    s = srv.ctx.wrap_socket(socket.create_connection((host, srv.port)), server_hostname=host)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {srv.token}\r\n"
              f"Connection: close\r\n\r\n".encode())
    chunks = []
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        chunks.append(b)
    s.close()
    data = b"".join(chunks)
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def trivial_list(srv, page_size):
    """Pages through every kind as a client that does nothing with the bytes
    but find the continue token: (seconds, bytes)."""
    t0 = time.monotonic()
    total = 0
    for kind in KINDS:
        cont = ""
        while True:
            q = f"?limit={page_size}" + (f"&continue={cont}" if cont else "")
            status, body = raw_get(srv, PATHS[kind] + q)
            if status != 200:
                raise RuntimeError(f"list {kind}: {status}")
            total += len(body)
            head = body[:400]
            at = head.find(b'"continue":"')
            cont = head[at + 12: head.index(b'"', at + 12)].decode() if at >= 0 else ""
            if not cont:
                break
    return time.monotonic() - t0, total


class StreamReader(threading.Thread):
    """A watch stream read by a trivial client: counts event lines."""

    def __init__(self, srv, kind, rv):
        super().__init__(daemon=True)
        host = "127.0.0.1"
        self.s = srv.ctx.wrap_socket(socket.create_connection((host, srv.port)),
                                     server_hostname=host)
        self.s.sendall(f"GET {PATHS[kind]}?watch=1&resourceVersion={rv}&timeoutSeconds=600 "
                       f"HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {srv.token}\r\n"
                       f"\r\n".encode())
        self.lines = 0
        self.last = None
        self.bytes = 0
        self.stop = False

    def run(self):
        tail = b""
        try:
            while not self.stop:
                b = self.s.recv(1 << 20)
                if not b:
                    break
                self.bytes += len(b)
                # Chunk-size lines end in \r\n; event lines end in }\n inside a chunk
                # (the pair may straddle two reads).
                n = (tail + b[:1]).count(b"}\n") + b.count(b"}\n")
                tail = b[-1:]
                if n:
                    self.lines += n
                    self.last = time.monotonic()
        except OSError:
            pass

    def close(self):
        self.stop = True
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.s.close()


def trivial_watch(srv, events, seed):
    rv = srv.admin("stats")["rv"]
    readers = {k: StreamReader(srv, k, rv) for k in KINDS}
    for r in readers.values():
        r.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    res = srv.admin("churn", {"count": events, "mix": MIX, "seed": seed})
    want = res["events"]
    deadline = time.monotonic() + 300
    while any(readers[k].lines < want.get(k, 0) for k in KINDS):
        if time.monotonic() > deadline:
            raise RuntimeError(f"trivial reader: got { {k: r.lines for k, r in readers.items()} }"
                               f", expected {want}")
        time.sleep(0.01)
    t_last = max(r.last for k, r in readers.items() if want.get(k))
    for r in readers.values():
        r.close()
    return t_last - t0, res["seconds"], sum(r.bytes for r in readers.values())


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topoassign", default=os.path.join(ROOT, "build-bench", "cli", "topoassign"))
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--pods", type=int, default=100000)
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--events", type=int, default=200000)
    ap.add_argument("--page-size", type=int, default=500)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    if not os.access(a.topoassign, os.X_OK):
        sys.exit(f"bench_sync: {a.topoassign}: not built (cmake -S . -B build-bench "
                 "-DCMAKE_BUILD_TYPE=Release && cmake --build build-bench --target topoassign)")

    d = tempfile.mkdtemp(prefix="topo-bench-sync-")
    srv = Server(d, history=max(400000, a.events + a.events // 4))
    sync_p = None
    try:
        t = time.monotonic()
        load = srv.admin("bulk", {"nodes": a.nodes, "pods": a.pods, "jobs": a.jobs})
        mb = {k: v / 1e6 for k, v in load["bytes"].items()}
        print(f"server: {a.nodes} nodes ({mb['nodes']:.0f} MB of JSON), {a.pods} pods "
              f"({mb['pods']:.0f} MB), {a.jobs} jobs ({mb['jobs']:.0f} MB) loaded in "
              f"{time.monotonic() - t:.1f} s; server RSS {srv.rss_mib():.0f} MiB")

        # (a) cold sync
        db = os.path.join(d, "topo.db")
        argv = [a.topoassign, "cache", "sync", "--db", db, "--kubeconfig", srv.kubeconfig,
                "--page-size", str(a.page_size)]
        t0 = time.monotonic()
        p = subprocess.Popen(argv + ["--once", "--stats"], stdout=subprocess.PIPE,
                             stderr=open(os.path.join(d, "cold.log"), "w"), text=True)
        out = []
        threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True).start()
        synced_at = None
        while True:
            done = wait_child(p, block=False)
            if done is not None:
                break
            if synced_at is None and len(watch_rvs(db)) == 3:
                synced_at = time.monotonic() - t0
            time.sleep(0.02)
        wall = time.monotonic() - t0
        rc, maxrss, cold_cpu = done
        time.sleep(0.1)
        st = parse_stats("".join(out)) or {}
        if rc != 0 or not st:
            sys.exit(f"bench_sync: cold sync failed (exit {rc}); see {d}/cold.log")
        rss = max(st.get("peak_rss_kib", 0), maxrss) / 1024
        synced_at = synced_at or wall
        print("\n(a) cold sync into a fresh cache (--once)")
        print(f"  objects            {st['nodes']} nodes, {st['pods']} pods, {st['jobs']} jobs "
              f"(relists {st['relists']}, errors {st.get('errors', 0)})")
        print(f"  all kinds stored   {synced_at:6.2f} s   target <= {TARGET_COLD_S:.0f} s   "
              f"{mark(synced_at <= TARGET_COLD_S)}")
        print(f"  --once wall time   {wall:6.2f} s   (includes >= 1 s of quiet watch to stop); "
              f"CPU {cold_cpu:.1f} s")
        print(f"  peak RSS           {rss:6.0f} MiB target <= {TARGET_RSS_MIB:.0f} MiB "
              f"{mark(rss <= TARGET_RSS_MIB)}")
        print(f"  file               {os.path.getsize(db) / 1e6:.0f} MB")

        # (b) watch events into a running sync
        sync_p = subprocess.Popen(argv + ["--stats"], stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(d, "live.log"), "w"), text=True)
        sync_out = []
        threading.Thread(target=lambda: sync_out.append(sync_p.stdout.read()),
                         daemon=True).start()
        deadline = time.monotonic() + 60
        while srv.admin("stats")["watches"] < 3:
            if time.monotonic() > deadline or sync_p.poll() is not None:
                sys.exit(f"bench_sync: the long-running sync did not start; see {d}/live.log")
            time.sleep(0.05)
        idle_rss = vm(sync_p.pid, "VmRSS") / 1024
        result = {}

        def churn():
            result.update(srv.admin("churn", {"count": a.events, "mix": MIX, "seed": 11}))

        cpu0 = cpu_seconds(sync_p.pid)
        t0 = time.monotonic()
        th = threading.Thread(target=churn, daemon=True)
        th.start()
        hwm = 0
        max_lag = 0
        done_at = None
        while done_at is None:
            now_rv = None
            if not result:
                s = srv.admin("stats")
                now_rv = s["rv"]
            w = watch_rvs(db)
            if result and all(w.get(k, 0) >= v for k, v in result["last_rv_by_resource"].items()):
                done_at = time.monotonic()
                break
            if now_rv is not None and w:
                max_lag = max(max_lag, now_rv - min(w.values()))
            hwm = max(hwm, vm(sync_p.pid, "VmHWM"))
            if time.monotonic() - t0 > 600 or vm(sync_p.pid, "VmRSS") == 0:
                sys.exit(f"bench_sync: the sync did not catch up; see {d}/live.log")
            time.sleep(0.01)
        th.join()
        secs = done_at - t0
        rate = a.events / secs
        cpu1 = cpu_seconds(sync_p.pid)
        # The same number of events made while the sync is stopped (SIGSTOP),
        # then applied as a backlog: the sync alone on the CPUs.
        sync_p.send_signal(signal.SIGSTOP)
        backlog = srv.admin("churn", {"count": a.events, "mix": MIX, "seed": 13})
        cpu2 = cpu_seconds(sync_p.pid)
        sync_p.send_signal(signal.SIGCONT)
        secs2, hwm2 = wait_caught_up(db, backlog["last_rv_by_resource"], sync_p.pid)
        cpu3 = cpu_seconds(sync_p.pid)
        rate2 = a.events / secs2
        sync_p.send_signal(signal.SIGTERM)
        rc, maxrss, _ = wait_child(sync_p)
        time.sleep(0.1)
        lst = parse_stats("".join(sync_out)) or {}
        live_rss = max(hwm, hwm2, maxrss, lst.get("peak_rss_kib", 0)) / 1024
        sync_p = None
        print(f"\n(b) {a.events} watch events into a running sync")
        print(f"  server made them   in {result['seconds']:.2f} s "
              f"({a.events / max(result['seconds'], 1e-9):,.0f}/s): {result['events']}")
        print(f"  while being made   cache has the last {secs:.2f} s after the first: "
              f"{rate:,.0f} events/s   target >= {TARGET_EVENTS_PER_S:,.0f}   "
              f"{mark(rate >= TARGET_EVENTS_PER_S)}")
        print(f"  as a backlog       {secs2:.2f} s after SIGCONT: {rate2:,.0f} events/s   "
              f"{mark(rate2 >= TARGET_EVENTS_PER_S)}   (sync CPU {cpu3 - cpu2:.1f} s; "
              f"{(cpu1 - cpu0) / max(secs, 1e-9) * 100:.0f} % of a CPU while being made)")
        print(f"  largest lag seen   {max_lag} resourceVersions behind the server")
        print(f"  sync applied       {lst.get('events')} events, exit {rc} on SIGTERM "
              f"(relists {lst.get('relists')}, resumed {lst.get('resumed')}, "
              f"errors {lst.get('errors')})")
        print(f"  RSS idle / peak    {idle_rss:.0f} / {live_rss:.0f} MiB   target <= "
              f"{TARGET_RSS_MIB:.0f} MiB   {mark(live_rss <= TARGET_RSS_MIB)}")

        # (c) the server alone
        srv.admin("compact", {})  # frees (b)'s history
        list_s, list_bytes = trivial_list(srv, a.page_size)
        watch_s, gen_s, watch_bytes = trivial_watch(srv, a.events, 12)
        trivial_rate = a.events / watch_s
        print("\n(c) the fake server with a trivial client (reads bytes, parses nothing)")
        print(f"  paged lists        {list_s:6.2f} s for {list_bytes / 1e6:.0f} MB "
              f"(the sync's lists: {synced_at:.2f} s)")
        print(f"  watch events       {trivial_rate:9,.0f} events/s read "
              f"({watch_bytes / 1e6:.0f} MB; made in {gen_s:.2f} s)")
        limits = []
        if list_s >= 0.7 * synced_at:
            limits.append("the cold sync (the server pages about as slowly as the sync lists)")
        if trivial_rate <= 1.3 * max(rate, rate2):
            limits.append("the event rate (the server emits about as slowly as the sync applies)")
        print("  verdict            " + ("the fake server limits " + " and ".join(limits)
                                         if limits else
                                         "the fake server is not the bottleneck: the figures "
                                         "above are the sync's"))
        print(f"  server RSS         {srv.rss_mib():.0f} MiB")
    finally:
        if sync_p is not None and sync_p.poll() is None:
            sync_p.kill()
        srv.close()
        if a.keep:
            print(f"kept {d}")
        else:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
