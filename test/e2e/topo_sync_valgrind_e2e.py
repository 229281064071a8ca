#!/usr/bin/env python3
"""topo-sync's controller under valgrind: no leak, no invalid access.

  topo_sync_valgrind_e2e.py --topo-sync build/controllers/topo-sync --source .

As for topo-webhook (webhook_valgrind_e2e.py), the daemon runs under

  valgrind --error-exitcode=99 --leak-check=full
           --show-leak-kinds=definite,indirect
           --errors-for-leak-kinds=definite,indirect --track-fds=no -q

against fake_apiserver.py (topo_sync_e2e.py's cluster: topograph's NDR
ibnetdiscover example and one Node per host), with leader election, the
health and metrics port and the cache file of last good facts, through a
short life: the list, a round of 121 PATCHes, /readyz and /metrics, a node
deleted and added again bare (labelled), an owned label changed by hand
(reasserted, its Warning Event created), the watch ended by a compaction
(in-stream 410: listed again), the source turned to garbage (its last good
facts kept), then SIGTERM. It must exit 0 (99: valgrind found an error)
with an empty valgrind log. No suppressions (see the webhook's test).

Exits 77 (ctest's SKIP_RETURN_CODE) when valgrind is not installed.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

import topo_sync_e2e as tse
from harness import Failure, expect

VALGRIND = ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
            "--track-fds=no", "-q"]


class VgEnv(tse.Env):
    PREFIX = "topo-sync-vg-"

    def spawn(self, *extra):
        self.vglog = self.path("valgrind.log")
        log = open(self.path("sync.log"), "w")
        p = subprocess.Popen(VALGRIND + ["--log-file=" + self.vglog] + self.args(*extra),
                             stdout=subprocess.DEVNULL, stderr=log)
        self.procs.append(p)
        p.log_path = log.name
        return p


def life(env, p, port):
    """What the daemon goes through under valgrind (20-50 times slower)."""
    n = len(env.want)
    tse.wait_for(lambda: tse.http_get(port, "/readyz")[0] == 200, 60, "/readyz 200")
    tse.wait_for(lambda: env.patches() >= n, 60, "every node patched")
    env.expect_converged()
    status, text = tse.http_get(port, "/metrics")
    expect(status == 200 and "topo_sync_leader 1" in text, f"/metrics: {status} {text[:300]}")
    names = sorted(env.want)
    # A node added (deleted, then registered again bare).
    env.delete(f"/api/v1/nodes/{names[0]}")
    env.create("/api/v1/nodes", env.node(names[0]))
    tse.wait_for(lambda: env.owned().get(names[0]) == env.want[names[0]], 30, "the new node")
    # Drift: reasserted, with its Event.
    status, _ = env.request("PATCH", f"/api/v1/nodes/{names[1]}",
                            {"metadata": {"labels": {tse.P + "leaf": "by-hand"}}},
                            ctype="application/merge-patch+json")
    expect(status == 200, f"PATCH: {status}")
    tse.wait_for(lambda: env.owned().get(names[1]) == env.want[names[1]], 30, "the drift undone")
    tse.wait_for(lambda: any(e["reason"] == "TopologyLabelsReasserted" for e in
                             env.items("/api/v1/namespaces/default/events")), 30, "the Event")
    # The watch ended by a compaction: listed again.
    lists = tse.node_verbs(env).get("LIST", 0)
    env.admin("compact", {"expire_watches": True})
    tse.wait_for(lambda: tse.node_verbs(env).get("LIST", 0) > lists, 30, "the relist")
    tse.wait_for(lambda: "expired, listing again" in tse.log_of(p), 10, "the relist logged")
    # The source turns to garbage: its last good facts kept.
    with open(env.dump, "w") as fh:
        fh.write("Switch 36 garbage\n[1 no\n")
    tse.wait_for(lambda: "keeping its last good facts" in tse.log_of(p), 30, "a failed read")
    env.expect_converged()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topo-sync", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("SKIP: valgrind not installed (scripts/lib/deps.sh lists it in the test packages)")
        return 77
    tse.ARGS = args
    t0 = time.monotonic()
    env = VgEnv(args.keep)
    p = None
    ok = False
    try:
        port = tse.free_port()
        p = env.spawn("--health-port", str(port), "--lease-namespace", "default",
                      "--db", env.path("sync.db"), "--source-interval", "2",
                      "-v", "debug")  # the relist after a watch's 410 is logged at debug
        life(env, p, port)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(60)
        with open(env.vglog) as fh:
            vg = fh.read()
        expect(rc == 0, f"exit status {rc} after SIGTERM (99: valgrind found errors)")
        expect(vg.strip() == "", "valgrind log not empty")
        ok = True
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
    finally:
        if not ok:
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(60)
                except subprocess.TimeoutExpired:
                    pass
            for path in (getattr(env, "vglog", None), env.path("sync.log")):
                if path and os.path.exists(path):
                    with open(path) as fh:
                        print(f"--- {path}\n{fh.read()[-20000:]}", file=sys.stderr)
        env.close()
    if ok:
        print(f"ok topo_sync_valgrind in {time.monotonic() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
