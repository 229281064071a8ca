#!/usr/bin/env python3
"""Process-level tests of `topoassign cache sync` (lib/filler/, cli/cmd_cache_sync.c;
docs/cache.md)
against fake_apiserver.py over TLS, with a test CA made at test time
(make_test_pki.sh) and a bearer token file. Python 3 standard library only.

Every case checks the cache file itself with Python's sqlite3 module (read-only
queries) against the fake server's own view of its objects (GET /_fake/index,
optionally as of a resourceVersion), and `topoassign show --db` against
`topoassign show --nodes/--pods` over the server's lists.

usage: sync_e2e.py --topoassign BIN (--list | --list-pending | --case NAME | --all) [--keep]

Cases marked pending fail on the current filler (the reason is printed by
--list-pending); they are left out of --list and --all, hence out of ctest.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

from harness import Failure, expect, registry, run_cases, slowdown
from harness.filler import ALL_OPS, FillerEnv, open_ro, read_cache

KINDS = ("nodes", "pods", "jobs")
LEVELS = "topology.topo.io/rack,kubernetes.io/hostname"
LIST_PATHS = {"nodes": "/api/v1/nodes", "pods": "/api/v1/pods", "jobs": "/apis/batch/v1/jobs"}

CASES, case = registry()
PENDING = {}  # cases that fail on the current filler: not in --list (so not in ctest)


def pending(reason):
    """A case that the filler does not pass yet: run with --case NAME, listed
    with --list-pending; move it to @case once the filler is fixed."""
    def mark(fn):
        PENDING[fn.__name__] = reason
        return case(fn)
    return mark


class Env(FillerEnv):
    """The filler's fake API server, and `topoassign` (bin) to run against it."""

    PREFIX = "topo-sync-e2e-"

    def list_all(self, kind):
        """Every object of kind through the real API (paged), as a List."""
        items, cont = [], ""
        while True:
            q = "?limit=2000" + (f"&continue={cont}" if cont else "")
            status, page = self.request("GET", LIST_PATHS[kind] + q)
            expect(status == 200, f"list {kind}: {status} {page}")
            items += page["items"]
            cont = page["metadata"].get("continue", "")
            if not cont:
                return {"kind": "List", "apiVersion": "v1", "items": items}

    # -------------------------------------------------------------- topoassign

    def sync_args(self, args, db=None, kubeconfig=None):
        return [self.bin, "cache", "sync", "--db", db or self.db,
                "--kubeconfig", kubeconfig or self.kubeconfig, *args]

    def sync(self, *args, timeout=60, db=None, kubeconfig=None):
        """`cache sync --once --stats ARGS`: (exit status, stats dict or None, stderr)."""
        argv = self.sync_args(["--once", "--stats", *args], db, kubeconfig)
        t = time.monotonic()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, parse_stats(p.stdout), p.stderr, time.monotonic() - t

    def ok_sync(self, *args, **kw):
        rc, st, err, secs = self.sync(*args, **kw)
        expect(rc == 0 and st is not None, f"sync {' '.join(args)}: exit {rc}, stats {st}\n"
                                           f"stderr: {err[-2000:]}")
        return st, err, secs

    def spawn(self, *args, db=None):
        p = Sync(self.sync_args(["--stats", *args], db))
        self.procs.append(p)
        return p

    def run(self, *args, timeout=60):
        p = subprocess.run([self.bin, *args], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr


def parse_stats(stdout):
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


class Sync:
    """A long-running `cache sync` (no --once); stderr collected as it comes."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, text=True)
        self.err = []
        self.out = []
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()
        threading.Thread(target=lambda: self.out.extend(self.p.stdout), daemon=True).start()

    def alive(self):
        return self.p.poll() is None

    def stderr(self):
        return "".join(self.err)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Signals, waits; (exit status, stats or None)."""
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Failure(f"sync did not exit within {timeout} s of signal {sig}; stderr:\n"
                          + self.stderr()[-2000:])
        time.sleep(0.05)  # the reader threads
        return self.p.returncode, parse_stats("".join(self.out))

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


# =================================================================== the cache file

def watch_rvs(db):
    """{kind: rv} from watch_state; {} when the file or table is not there yet."""
    if not os.path.exists(db):
        return {}
    try:
        con = open_ro(db)
        try:
            return dict(con.execute("SELECT kind, resource_version FROM watch_state"))
        finally:
            con.close()
    except sqlite3.Error:
        return {}


def integrity(db):
    con = open_ro(db)
    try:
        return [r[0] for r in con.execute("PRAGMA integrity_check")]
    finally:
        con.close()


def expected_rows(env, kind, rv=None):
    """The server's objects of kind (as of rv) keyed as the cache keys them."""
    items = env.index(kind, rv)["items"]
    if kind == "nodes":
        return {it["name"]: {"name": it["name"], "rv": it["rv"]} for it in items}
    if kind == "pods":
        return {it["uid"]: {"namespace": it["namespace"], "name": it["name"],
                            "nodeName": it["nodeName"], "phase": it["phase"], "rv": it["rv"]}
                for it in items}
    return {it["uid"]: {"namespace": it["namespace"], "name": it["name"], "rv": it["rv"]}
            for it in items}


def diff(kind, got, want, limit=5):
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    changed = [k for k in want if k in got and got[k] != want[k]]
    if not (missing or extra or changed):
        return ""
    return (f"{kind}: {len(got)} rows, server has {len(want)}; missing {len(missing)} "
            f"{missing[:limit]}, extra {len(extra)} {extra[:limit]}, different {len(changed)} "
            + "; ".join(f"{k}: cache {got[k]} server {want[k]}" for k in changed[:limit]))


def expect_mirror(env, db=None, kinds=KINDS, at=None):
    """The cache holds exactly the server's objects of every kind (as of the
    resourceVersions in `at`, {kind: rv}), each once."""
    cache = read_cache(db or env.db)
    problems = []
    for kind in kinds:
        want = expected_rows(env, kind, (at or {}).get(kind))
        d = diff(kind, cache[kind], want)
        if d:
            problems.append(d)
    if cache["pod_names"]:
        problems.append(f"pods stored twice under one name: {cache['pod_names'][:5]}")
    expect(not problems, "cache differs from the server:\n" + "\n".join(problems))
    return cache


def wait_for(pred, timeout, what, step=0.02):
    """Seconds until pred() holds; gives up after timeout (times slowdown():
    a sanitizer build relists thousands of pods several times slower)."""
    t0 = time.monotonic()
    timeout *= slowdown()
    while True:
        v = pred()
        if v:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def caught_up(db, last_rv_by_kind):
    """The cache's watch positions reached these resourceVersions."""
    w = watch_rvs(db)
    return all(k in w and int(w[k]) >= int(rv) for k, rv in last_rv_by_kind.items())


def gpu_totals(nodes, pods):
    """(free, total) nvidia.com/gpu over Ready, schedulable nodes, charging bound
    non-terminal pods (the generated pods have containers only), free per node."""
    def q(v):
        return int(v) if v is not None else 0
    ready = {}
    for n in nodes["items"]:
        conds = {c["type"]: c["status"] for c in n["status"].get("conditions", [])}
        if conds.get("Ready") == "True" and not n["spec"].get("unschedulable"):
            ready[n["metadata"]["name"]] = q(n["status"]["allocatable"].get("nvidia.com/gpu"))
    used = dict.fromkeys(ready, 0)
    for p in pods["items"]:
        if p["spec"].get("nodeName") in ready and \
                p["status"].get("phase") not in ("Succeeded", "Failed"):
            for c in p["spec"]["containers"]:
                used[p["spec"]["nodeName"]] += q(c.get("resources", {}).get("requests", {})
                                                 .get("nvidia.com/gpu"))
    # A node charged beyond its capacity (churn binds pods at random) has 0 free.
    return sum(max(0, ready[n] - used[n]) for n in ready), sum(ready.values())


def expect_show_matches(env, pods=None):
    """`show --db` equals `show --nodes/--pods` over the server's own lists
    (pods: the pods' list when the caller has it), and its total line has the
    free/total GPUs counted here."""
    nodes = env.list_all("nodes")
    if pods is None:
        pods = env.list_all("pods")
    for name, doc in (("nodes.json", nodes), ("pods.json", pods)):
        with open(env.path(name), "w") as fh:
            # json.dumps, not json.dump: dump streams through the pure-Python
            # encoder, three times slower on these tens of megabytes.
            fh.write(json.dumps(doc))
    got = env.run("show", "--db", env.db, "--levels", LEVELS)
    want = env.run("show", "--nodes", env.path("nodes.json"), "--pods", env.path("pods.json"),
                   "--levels", LEVELS)
    expect(got[0] == 0, f"show --db: exit {got[0]}: {got[2]}")
    expect(got == want, "show --db differs from show over the server's lists:\n"
           + first_diff(got[1], want[1]))
    free, total = gpu_totals(nodes, pods)
    line = [x for x in got[1].splitlines() if x.startswith("total:")]
    expect(line and line[0].startswith(f"total: {free}/{total} nvidia.com/gpu free"),
           f"show total {line}, expected {free}/{total}")
    return free, total


def first_diff(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n  --db:  {x}\n  files: {y}"
    return f"{len(la)} lines vs {len(lb)} lines"


def verbs(env, kind, verb):
    return env.stats()["verbs"].get(kind, {}).get(verb, 0)


def events_between(env, after, upto):
    """{kind: events the server made for it after after[kind], up to upto[kind]}."""
    return {k: env.admin(f"events?resource={k}&after={after[k]}&upto={upto[k]}")["count"]
            for k in after}


# =================================================================== cases

@case
def cold_sync(env):
    """A fresh cache from 1,200 nodes, 12,000 pods and 600 jobs: every object
    once, nothing else; stats; paged lists then watches from the list's RV;
    show --db equal to show over the same objects."""
    loaded = env.bulk(1200, 12000, 600, not_ready=0.01)
    st, err, secs = env.ok_sync("--page-size", "500")
    expect((st["nodes"], st["pods"], st["jobs"]) == (1200, 12000, 600), f"stats {st}")
    expect(st["listed"] == {"nodes": 1200, "pods": 12000, "jobs": 600}, f"listed {st}")
    expect(st["relists"] == 3 and st["resumed"] == 0 and st["events"] == 0, f"stats {st}")
    expect(st.get("errors", 0) == 0 and st.get("rejected", 0) == 0, f"stats {st}")
    expect(st["peak_rss_kib"] > 0 and st["seconds"] > 0, f"stats {st}")
    cache = expect_mirror(env)
    rv = str(loaded["rv"])
    expect(cache["watch"] == {k: rv for k in KINDS}, f"watch_state {cache['watch']}, list rv {rv}")
    s = env.stats()
    for kind, n in (("nodes", 1200), ("pods", 12000), ("jobs", 600)):
        v = s["verbs"].get(kind, {})
        expect(v.get("LIST") == (n + 499) // 500, f"{kind}: {v.get('LIST')} list pages for {n}")
        expect(v.get("WATCH", 0) >= 1, f"{kind}: no watch")
    starts = {w["resource"]: w["rv"] for w in s["watch_starts"]}
    expect(starts == {k: rv for k in KINDS}, f"watches started at {starts}, list rv {rv}")
    # Kueue-annotated pods are flagged, the rest not.
    con = open_ro(env.db)
    tas = con.execute("SELECT count(*) FROM pods WHERE is_topology_assigned = 1").fetchone()[0]
    con.close()
    pods = env.list_all("pods")  # 12,000: listed once for both checks
    kueue = sum(1 for p in pods["items"]
                if "kueue.x-k8s.io/podset-required-topology" in
                p["metadata"].get("annotations", {}))
    expect(tas == kueue and kueue > 0, f"{tas} TAS pods in the cache, {kueue} on the server")
    free, total = expect_show_matches(env, pods)
    rc, out, _ = env.run("cache", "stats", "--db", env.db)
    expect(rc == 0 and f"watch at {rv}" in out, f"cache stats: {out}")
    # Only what --kinds asks for.
    st2, _, _ = env.ok_sync("--kinds", "nodes", db=env.path("nodes-only.db"))
    expect((st2["nodes"], st2["pods"], st2["jobs"], st2["relists"]) == (1200, 0, 0, 1),
           f"--kinds nodes: {st2}")
    print(f"cold sync: {sum(loaded['bytes'].values()) / 1e6:.0f} MB of JSON in {secs:.2f} s "
          f"(filler {st['seconds']:.2f} s), peak RSS {st['peak_rss_kib'] // 1024} MiB; "
          f"show: {free}/{total} GPUs free")


@case
def resume_events(env):
    """After churn, a second sync resumes every watch from the stored
    resourceVersion (no LIST at all) and applies each event: deletions gone,
    updates and creations visible; a third with nothing new applies nothing."""
    env.bulk(400, 4000, 200)
    env.ok_sync()
    before = watch_rvs(env.db)
    churn = env.churn(3000, seed=7)
    expect(churn["count"] == 3000 and churn["ops"].get("pod_delete", 0) > 0, f"churn {churn}")
    # Through the API too: nodes and a job deleted, nodes added (6 more events).
    nodes = sorted(read_cache(env.db)["nodes"])
    gone_nodes = nodes[:2]
    for n in gone_nodes:
        expect(env.request("DELETE", f"/api/v1/nodes/{n}")[0] == 200, f"delete node {n}")
    job = env.index("jobs")["items"][0]
    expect(env.request("DELETE", f"/apis/batch/v1/namespaces/{job['namespace']}/jobs/"
                                 f"{job['name']}")[0] == 200, "delete job")
    env.admin("load", {"resource": "nodes", "count": 3, "prefix": "dc9"})
    env.admin("requests/clear", {})
    st, err, secs = env.ok_sync("--verify-live", "--levels", LEVELS)
    expect(st["resumed"] == 3 and st["relists"] == 0, f"not resumed: {st}")
    expect(st["events"] == 3006, f"{st['events']} events applied, the server made 3006")
    expect(sum(st["listed"].values()) == 0, f"listed {st['listed']}")
    for kind in KINDS:
        expect(verbs(env, kind, "LIST") == 0, f"{kind}: the server saw a LIST")
    starts = {}
    for w in env.stats()["watch_starts"]:
        starts.setdefault(w["resource"], w["rv"])
    expect(starts == before, f"watches resumed from {starts}, the cache had {before}")
    expect("consistent" in err, f"--verify-live: {err[-500:]}")
    cache = expect_mirror(env)
    gone = [uid for _, _, uid in churn["deleted"] if uid in cache["pods"]]
    expect(not gone, f"{len(gone)} deleted pods still cached: {gone[:3]}")
    expect(not set(gone_nodes) & set(cache["nodes"]) and job["uid"] not in cache["jobs"],
           "deleted nodes or job still cached")
    expect(sum(1 for n in cache["nodes"] if n.startswith("dc9-")) == 3, "added nodes")
    expect(cache["watch"]["pods"] == str(churn["last_rv_by_resource"]["pods"]),
           f"pods watch at {cache['watch']['pods']}, last pod event {churn['last_rv_by_resource']}")
    finished = sum(1 for p in cache["pods"].values() if p["phase"] == "Succeeded")
    expect(finished > 0, "no Succeeded pods")
    created = sum(1 for p in cache["pods"].values() if p["namespace"] == "churn")
    made = churn["ops"].get("pod_create", 0) + churn["ops"].get("pod_pending", 0)
    unmade = sum(1 for ns, _, _ in churn["deleted"] if ns == "churn")
    expect(created == made - unmade, f"{created} churn pods cached, {made} - {unmade} made")
    expect_show_matches(env)
    # Nothing new: resumed again, nothing applied, still no LIST.
    env.admin("requests/clear", {})
    st, _, _ = env.ok_sync()
    expect(st["resumed"] == 3 and st["relists"] == 0 and st["events"] == 0, f"idle: {st}")
    expect(all(verbs(env, k, "LIST") == 0 for k in KINDS), "LIST on an idle resume")
    print(f"resume: 3006 events applied in {secs:.2f} s (sync --once, idle wait included)")


@case
def gone_410(env):
    """Compacted history: the stored resourceVersions are 410 (in-stream ERROR,
    then HTTP 410), the sync lists again and rows deleted meanwhile go; and a
    running sync whose watches are expired mid-stream relists and converges."""
    env.bulk(300, 3000, 150)
    env.ok_sync()
    for mode in ("event", "http"):
        env.admin("config", {"gone_mode": mode})
        churn = env.churn(800, seed=3 if mode == "event" else 4)
        env.admin("compact", {})
        env.admin("requests/clear", {})
        st, err, _ = env.ok_sync()
        expect(st["relists"] == 3 and st["resumed"] == 0, f"{mode} 410: {st}")
        gone = env.stats()["gone"]
        expect(all(gone.get(k, 0) >= 1 for k in KINDS), f"{mode}: 410s sent {gone}")
        cache = expect_mirror(env)
        stale = [uid for _, _, uid in churn["deleted"] if uid in cache["pods"]]
        expect(not stale, f"{mode}: {len(stale)} pods deleted while away still cached")
    # A running sync: watches expired in-stream, with churn before and after.
    env.admin("config", {"gone_mode": "event"})
    s = env.spawn()
    wait_for(lambda: env.stats()["watches"] >= 3, 10, "three watches")
    env.churn(300, seed=5)
    env.admin("compact", {"expire_watches": True})
    last = env.churn(300, seed=6)["last_rv_by_resource"]
    wait_for(lambda: caught_up(env.db, last), 10, "the relisted sync to catch up")
    rc, st = s.stop()
    expect(rc == 0 and st is not None, f"exit {rc}, stats {st}: {s.stderr()[-1000:]}")
    expect(st["relists"] == 3, f"relists after expired watches: {st}")
    expect_mirror(env)
    expect(integrity(env.db) == ["ok"], "integrity")
    # History compacted in the middle of a paged list (pages slowed down): the
    # continue token is 410; the list starts over and the cache is whole.
    fresh = env.path("fresh.db")
    env.admin("fault", {"kind": "delay", "delay_ms": 150, "count": 4, "watch": False,
                        "path": "/api/v1/pods"})
    p = subprocess.Popen(env.sync_args(["--once", "--stats", "--page-size", "400"], fresh),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: verbs(env, "pods", "LIST") >= 2, 10, "the second page")
    env.churn(50, seed=8)
    env.admin("compact", {})
    out, err = p.communicate(timeout=60)
    st = parse_stats(out)
    expect(p.returncode == 0 and st, f"list across a compaction: exit {p.returncode}: {err}")
    expect(env.stats()["gone"].get("pods", 0) >= 1, "no 410 for the continue token")
    expect_mirror(env, db=fresh)


@case
def live_churn(env):
    """A running sync applies bursts of events within a second; SIGTERM in the
    middle of a steady stream exits 0 and every event it counted is committed."""
    env.bulk(500, 5000, 200)
    env.ok_sync()
    start = {k: int(v) for k, v in watch_rvs(env.db).items()}
    s = env.spawn("--verify-live", "--levels", LEVELS)
    wait_for(lambda: env.stats()["watches"] >= 3, 10, "three watches")
    lags = []
    for i in range(5):
        churn = env.churn(400, seed=20 + i)
        lags.append(wait_for(lambda: caught_up(env.db, churn["last_rv_by_resource"]), 5,
                             f"burst {i} in the cache", step=0.005))
        expect(s.alive(), "sync exited: " + s.stderr()[-1000:])
    expect_mirror(env)
    bound = 1.0 * slowdown()
    expect(max(lags) <= bound, f"burst applied after {max(lags):.2f} s (> {bound:g} s): {lags}")
    # SIGTERM during a steady 4,000 events/s stream.
    env.admin("churn", {"count": 6000, "rate": 4000, "async": True, "mix": ALL_OPS, "seed": 40})
    time.sleep(0.7)
    rc, st = s.stop()
    done = env.admin("churn/wait", {"timeout": 30})
    expect(rc == 0 and st is not None, f"SIGTERM: exit {rc}, stats {st}: {s.stderr()[-1000:]}")
    expect(st["resumed"] == 3 and st["relists"] == 0, f"stats {st}")
    expect("consistent" in s.stderr(), f"--verify-live: {s.stderr()[-500:]}")
    at = {k: int(v) for k, v in watch_rvs(env.db).items()}
    # The rows are the server's as of each kind's stored resourceVersion ...
    expect_mirror(env, at=at)
    # ... and hold every event the process applied (the last batch was committed).
    committed = events_between(env, start, at)
    expect(st["events"] == sum(committed.values()),
           f"the sync applied {st['events']} events, the cache holds "
           f"{sum(committed.values())} ({committed}) at {at}")
    expect(sum(committed.values()) > 2000 + 400, f"too few events before SIGTERM: {committed}")
    expect(integrity(env.db) == ["ok"], "integrity")
    # A new sync picks up the rest of the stream.
    st, _, _ = env.ok_sync()
    expect(st["resumed"] == 3 and st["relists"] == 0, f"after SIGTERM: {st}")
    expect_mirror(env)
    print("live: burst of 400 applied after " + ", ".join(f"{x * 1000:.0f}" for x in lags) +
          f" ms; SIGTERM mid-stream after {sum(committed.values())} of "
          f"{done['count'] + 2000} events, all committed")


@case
def kill_cold(env):
    """SIGKILL during a large cold sync (twice: inside the first list, later
    with some kinds done), churn meanwhile: the file passes integrity_check,
    every kind with a stored resourceVersion holds exactly the server's rows at
    that version, and a new sync ends equal to the server."""
    env.bulk(2500, 25000, 1000)
    env.admin("churn", {"count": 200000, "rate": 500, "async": True, "mix": ALL_OPS, "seed": 9})
    wal = env.db + "-wal"
    kills = []
    for stage in ("early", "later"):
        synced = len(watch_rvs(env.db))
        s = env.spawn()
        t0 = time.monotonic()
        if stage == "early":   # inside the first lists: 2 MB written to the WAL
            def reached():
                return os.path.exists(wal) and os.path.getsize(wal) > 2 << 20
        else:                  # one more kind committed than at the start
            def reached():
                return len(watch_rvs(env.db)) > synced
        try:
            wait_for(lambda: reached() or not s.alive(), 30, f"the sync to reach: {stage}",
                     0.01)
        finally:
            s.kill()
        expect(s.p.returncode == -signal.SIGKILL, f"sync exited by itself: {s.stderr()[-800:]}")
        kills.append((stage, time.monotonic() - t0, dict(watch_rvs(env.db))))
        expect(integrity(env.db) == ["ok"], f"integrity after SIGKILL ({stage})")
        at = {k: int(v) for k, v in watch_rvs(env.db).items()}
        expect_mirror(env, kinds=list(at), at=at)
    env.admin("churn/stop", {})
    st, _, secs = env.ok_sync(timeout=90)
    expect(integrity(env.db) == ["ok"], "integrity at the end")
    expect(sorted(watch_rvs(env.db)) == sorted(KINDS), f"watch_state {watch_rvs(env.db)}")
    expect_mirror(env)
    print("kill: " + "; ".join(f"{stage} at {t:.2f} s ({len(w)} kinds synced)"
                               for stage, t, w in kills) +
          f"; then a sync of {secs:.2f} s, relists {st['relists']}, resumed {st['resumed']}")


@case
def token_rotation(env):
    """The token file changes under a running sync (the old token is refused
    at once) while its watches are cut and history expires: no error, the sync
    goes on with the new token and ends equal to the server."""
    env.bulk(200, 2000, 100)
    s = env.spawn()
    wait_for(lambda: len(watch_rvs(env.db)) == 3, 15, "the cold sync")
    for i, token in enumerate(("sync-token-2", "sync-token-3")):
        env.rotate_token(token)
        env.admin("requests/clear", {})
        if i == 0:
            env.admin("watches/close", {"mode": "close"})   # re-watch with the new token
        else:
            env.admin("compact", {"expire_watches": True})  # relist with the new token
        last = env.churn(300, seed=30 + i)["last_rv_by_resource"]
        wait_for(lambda: caught_up(env.db, last), 15, f"events after rotation {i + 1}")
        expect(s.alive(), f"sync died after rotation {i + 1}: {s.stderr()[-1000:]}")
        who = "bearer:" + token[:12]
        watches = [w for w in env.stats()["watch_starts"] if w["auth"] == who]
        expect(len({w["resource"] for w in watches}) == 3,
               f"not every kind watches with the new token: {env.stats()['watch_starts']}")
        if i == 1:
            lists = [r for r in env.admin("requests")["requests"]
                     if "watch=" not in r["path"] and r["status"] == 200 and r["auth"] == who]
            expect(len(lists) >= 3, "the relists did not use the new token")
    refused = env.stats()["counts"].get("GET 401", 0)
    rc, st = s.stop()
    expect(rc == 0 and st is not None, f"exit {rc}: {s.stderr()[-1000:]}")
    print(f"token rotation: {refused} requests refused with the old token after the second "
          f"rotation, retried with the new one")
    expect(st.get("errors", 0) == 0, f"errors after token rotation: {st}\n{s.stderr()[-1500:]}")
    expect("error" not in s.stderr().lower(), f"stderr: {s.stderr()[-1500:]}")
    expect_mirror(env)


@case
def bad_input(env):
    """Usage and configuration errors exit 2 with a message naming the problem
    (and leave no cache file); an API server that refuses the token exits 1."""
    def run(*args):
        p = subprocess.run([env.bin, "cache", "sync", *args], capture_output=True, text=True,
                           timeout=60)
        return p.returncode, p.stderr

    db = env.db
    garbage = env.path("garbage.yaml")
    env.write(garbage, "{ this is: [not, a kubeconfig\n")
    no_ctx = env.path("no-context.yaml")
    env.write(no_ctx, json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": [],
                                  "contexts": [], "users": []}))
    checks = [
        (["--kubeconfig", env.kubeconfig, "--once"], "--db"),
        (["--db", db, "--kubeconfig", env.path("missing.yaml"), "--once"],
         env.path("missing.yaml")),
        (["--db", db, "--kubeconfig", env.dir, "--once"], env.dir),
        (["--db", db, "--kubeconfig", garbage, "--once"], garbage),
        (["--db", db, "--kubeconfig", no_ctx, "--once"], no_ctx),
        (["--db", db, "--kubeconfig", env.kubeconfig, "--kinds", "nodes,secrets"], "secrets"),
        (["--db", db, "--kubeconfig", env.kubeconfig, "--page-size", "0"], "--page-size"),
        (["--db", db, "--kubeconfig", env.kubeconfig, "--qps", "-1"], "--qps"),
        (["--db", db, "--kubeconfig", env.kubeconfig, "--frobnicate"], "--frobnicate"),
    ]
    for args, message in checks:
        rc, err = run(*args)
        expect(rc == 2 and message in err, f"{args}: exit {rc}, stderr {err!r}")
        expect(err.count("\n") <= 3, f"{args}: a message, not a log: {err!r}")
    expect(not os.path.exists(db), "a failed sync left a cache file behind")
    # Failures to sync: exit 1 with the reason.
    env.bulk(5, 10, 0)
    kc = env.write_kubeconfig("kc-wrong-token", user={"token": "wrong"})
    rc, err = run("--db", db, "--kubeconfig", kc, "--once")
    expect(rc == 1 and "nauthorized" in err, f"wrong token: exit {rc}, {err!r}")
    print(f"bad input: {len(checks)} usage and configuration errors exit 2; a refused token "
          f"exits 1")


@case
def term_cold(env):
    """SIGTERM in the middle of a cold sync's paged list: exit 0 within 2 s (not
    at the end of the list), no error, the file whole and consistent."""
    env.bulk(200, 5000, 100)
    env.admin("fault", {"kind": "delay", "delay_ms": 100, "count": 1000, "watch": False,
                        "path": "/api/v1/pods"})
    s = env.spawn("--page-size", "100")
    wait_for(lambda: verbs(env, "pods", "LIST") >= 3, 15, "the third page of pods")
    t = time.monotonic()
    rc, st = s.stop(timeout=30)
    took = time.monotonic() - t
    pages = verbs(env, "pods", "LIST")
    expect(rc == 0 and st is not None, f"exit {rc}: {s.stderr()[-1000:]}")
    expect(integrity(env.db) == ["ok"], "integrity")
    at = {k: int(v) for k, v in watch_rvs(env.db).items()}
    expect_mirror(env, kinds=list(at), at=at)
    expect(took <= 2.0, f"SIGTERM during the pods list: exit after {took:.1f} s, "
           f"{pages} of 50 pages listed")
    expect(st.get("errors", 0) == 0 and "warn" not in s.stderr(),
           f"stopping counted as an error: {st}; {s.stderr()[-800:]}")


@case
def unreachable_once(env):
    """`--once` against a closed port: exit 1 within 20 s, with the reason."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kc = env.write_kubeconfig("kc-closed", server=f"https://127.0.0.1:{port}")
    t = time.monotonic()
    try:
        p = subprocess.run(env.sync_args(["--once"], kubeconfig=kc), capture_output=True,
                           text=True, timeout=25)
    except subprocess.TimeoutExpired:
        raise Failure("--once against a closed port still running after 25 s")
    took = time.monotonic() - t
    expect(p.returncode == 1 and "onnect" in p.stderr.splitlines()[-1],
           f"exit {p.returncode}: {p.stderr[-500:]}")
    expect(took <= 20, f"gave up after {took:.0f} s")


def print_sync_stderr(env):
    for p in env.procs:
        if p.err:
            print("--- sync stderr ---\n" + p.stderr()[-3000:])


def main():
    return run_cases(CASES, Env, "--topoassign", PENDING, print_sync_stderr)


if __name__ == "__main__":
    sys.exit(main())
