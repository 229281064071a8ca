#!/usr/bin/env python3
"""Process-level tests of lib/filler's library API through filler_driver (C)
against fake_apiserver.py over TLS (harness.filler, as sync_e2e.py): several
live snapshots fed by one filler (topo_filler_opts.live and .lives), and
topo_filler_synced for a cold sync and for watches resumed from the cache.

usage: filler_e2e.py --driver BIN (--list | --case NAME | --all) [--keep]
"""

import json
import subprocess
import sys
import time

from harness import expect, registry, run_cases
from harness.filler import FillerEnv, open_ro, read_cache

CASES, case = registry()


def run_driver(env):
    p = subprocess.run([env.bin, "--db", env.db, "--kubeconfig", env.kubeconfig],
                       capture_output=True, text=True, timeout=90)
    expect(p.returncode == 0, f"driver: exit {p.returncode}\nstderr: {p.stderr[-2000:]}")
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    expect(lines, f"driver printed no result: {p.stdout!r}")
    return json.loads(lines[-1])


def expect_lives_mirror(env, out):
    cache = read_cache(env.db)
    nodes = len(env.index("nodes")["items"])
    expect(len(cache["nodes"]) == nodes, f"cache has {len(cache['nodes'])} nodes, server {nodes}")
    for i, live in enumerate(out["lives"]):
        expect(live["consistent"] == 1, f"live {i} differs from the cache: {out}")
        expect(live["nodes"] == nodes and live["pods"] == len(cache["pods"]),
               f"live {i}: {live['nodes']} nodes, {live['pods']} pods; cache "
               f"{nodes}, {len(cache['pods'])}")
        # Fed once per change, though given twice (live and lives[2]) next to a NULL.
        expect(live["commits"] == out["lives"][0]["commits"], f"commits differ: {out}")


@case
def cold_two_lives(env):
    """A cold sync fills both live snapshots (racks+hosts and hosts only)
    exactly as the cache; synced is 0 before the run and 1 once every kind
    is listed."""
    env.bulk(150, 1500, 30)
    out = run_driver(env)
    expect(out["synced_before"] == 0, f"synced before the run: {out}")
    expect(out["synced_during"] == 1 and out["synced_after"] == 1, f"never synced: {out}")
    expect(out["relists"] == 3 and out["resumed"] == 0, f"not a cold sync: {out}")
    expect_lives_mirror(env, out)


@case
def resumed_two_lives(env):
    """A second run resumes every watch from the cache (no list): synced
    without a relist, and both live snapshots (loaded from the cache, then
    fed the churn) match the cache again."""
    env.bulk(150, 1500, 30)
    run_driver(env)
    churn = env.churn(600, seed=3)
    expect(churn["count"] == 600, f"churn {churn}")
    env.admin("requests/clear", {})
    t = time.monotonic()
    out = run_driver(env)
    expect(out["relists"] == 0 and out["resumed"] == 3, f"not resumed: {out}")
    expect(out["synced_before"] == 0 and out["synced_during"] == 1, f"not synced: {out}")
    expect_lives_mirror(env, out)
    print(f"resumed in {time.monotonic() - t:.2f} s")


@case
def full_objects(env):
    """The cache filler lists and watches full objects (it stores a node's
    allocatable, taints and readiness, which are not metadata): its node
    requests ask for plain application/json, never PartialObjectMetadata,
    and the cache holds every node's allocatable GPUs."""
    env.bulk(20, 100, 5)
    env.admin("requests/clear", {})
    run_driver(env)
    lists = [r.get("accept") for r in env.admin("requests")["requests"]
             if r["method"] == "GET" and r["path"].startswith("/api/v1/nodes?")
             and "watch=" not in r["path"]]
    watches = [w.get("accept") for w in env.admin("stats")["watch_starts"]
               if w["resource"] == "nodes"]
    expect(lists and all(a == "application/json" for a in lists), f"node lists: {lists}")
    expect(watches and all(a == "application/json" for a in watches), f"watches: {watches}")
    con = open_ro(env.db)
    try:
        rows = con.execute("SELECT name, allocatable FROM nodes").fetchall()
    finally:
        con.close()
    expect(len(rows) == 20, f"{len(rows)} nodes cached")
    bad = [n for n, a in rows if "nvidia.com/gpu" not in json.loads(a)]
    expect(not bad, f"nodes without allocatable GPUs: {bad[:3]}")


def main():
    return run_cases(CASES, FillerEnv)


if __name__ == "__main__":
    sys.exit(main())
