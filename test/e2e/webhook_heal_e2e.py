#!/usr/bin/env python3
"""The cache filler heals (issue 33, caches that heal): topo-webhook in
daemon mode against fake_apiserver.py.

  webhook_heal_e2e.py --webhook build/webhook/topo-webhook --case forbidden_once|throttled_counted|disk_full

forbidden_once: the first node LIST answers 403 (RBAC not there yet, then
fixed). The filler backs it off like any failure (one error line naming
the resource, reason=forbidden and the 403), counts it in
topo_webhook_reflector_failures_total{resource="nodes",reason="forbidden"},
and the webhook becomes ready once the LIST succeeds; it never gives up.

throttled_counted: two 429s with Retry-After to the node LIST, waited out
and resent by the HTTP client: both counted in
topo_webhook_reflector_failures_total{resource="nodes",reason="throttled"}.

disk_full: the cache file on an 8 MB tmpfs (mount: root only, else the
case is skipped, 77). Ready with 16 nodes; a ballast file leaves 200 KB
and 6000 pods do not fit: the commit fails, the webhook turns unready, logs the failure at error and
counts it (reason="cache"), and stays alive. Once space is freed (the
ballast deleted) it lists again and is ready with every pod cached.
"""
import os
import sqlite3
import subprocess
import sys
import time

from harness import check, check_within
from harness.pods import FAKE_NODE_LEVELS
from harness.webhook import Webhook, main_against_api, metric, start_daemon


def forbidden_once(binary, api, ws):
    api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
    api.admin("fault", {"kind": "status", "code": 403, "list": True, "count": 1,
                        "path": "/api/v1/nodes"})
    w = start_daemon(api, binary, "w1", ["--levels", FAKE_NODE_LEVELS, "--log-format", "text"],
                     wait=False)
    w.name = "w1"
    ws.append(w)
    # The reflector's first wait is 100..200 ms: ready within seconds.
    check(w.wait_ready(20), "ready after the one 403 (alive: %r)" % (w.proc.poll() is None))
    text = w.metrics_text()
    n = metric(text, "topo_webhook_reflector_failures_total", 'resource="nodes",reason="forbidden"')
    check(n == 1, "failures_total{nodes,forbidden} %r, want 1" % n)
    lines = [ln for ln in w.log().splitlines() if "reason=forbidden" in ln]
    check(len(lines) == 1 and "level=error" in lines[0] and "resource=nodes" in lines[0] and
          "403" in lines[0] and "retry_ms=" in lines[0],
          "one error line for the 403 with resource, reason, status, retry: %r" % lines)
    check(not any("cache filler stopped" in ln for ln in w.log().splitlines()),
          "the filler did not stop")


def throttled_counted(binary, api, ws):
    api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
    api.admin("fault", {"kind": "status", "code": 429, "retry_after": 1, "list": True,
                        "count": 2, "path": "/api/v1/nodes"})
    w = start_daemon(api, binary, "w1", ["--levels", FAKE_NODE_LEVELS, "--log-format", "text"],
                     wait=False)
    w.name = "w1"
    ws.append(w)
    check(w.wait_ready(20), "ready after the 429s")
    text = w.metrics_text()
    n = metric(text, "topo_webhook_reflector_failures_total", 'resource="nodes",reason="throttled"')
    check(n == 2, "failures_total{nodes,throttled} %r, want 2 (the 429s waited out)" % n)


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", path],
                          stderr=subprocess.DEVNULL).returncode == 0


def cached_pods(db):
    try:
        with sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=2) as c:
            return c.execute("SELECT count(*) FROM pods").fetchone()[0]
    except sqlite3.Error:
        return -1


def disk_full(binary, api, ws):
    tfs = api.path("tfs")
    if os.geteuid() != 0 or not mount_tmpfs(tfs, "8m"):
        print("SKIP: cannot mount a tmpfs (not root?)")
        sys.exit(77)
    try:
        api.admin("load", {"resource": "nodes", "count": 16, "gpus": 8, "nodes_per_rack": 8})
        w = Webhook(binary, api.dir, api.path("w1"),
                    ["--kubeconfig", api.kubeconfig, "--db", os.path.join(tfs, "topo.db"),
                     "--levels", FAKE_NODE_LEVELS, "--log-format", "text"])
        api.procs.append(w.proc)
        w.name = "w1"
        ws.append(w)
        # The disk fills up: a ballast file leaves 200 KB, too little for
        # the 6000 pods to come.
        st = os.statvfs(tfs)
        ballast = os.path.join(tfs, "ballast")
        with open(ballast, "wb") as f:
            f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - 200 * 1024))
        api.admin("load", {"resource": "pods", "count": 6000, "gpus": 0, "namespace": "ml"})
        check_within("the cache failure counted", lambda: metric(
            w.metrics_text(), "topo_webhook_reflector_failures_total", 'reason="cache"') >= 1, 20)
        time.sleep(2)
        check(w.proc.poll() is None and not w.ready(), "alive and not ready while the disk is full")
        errors = [ln for ln in w.log().splitlines()
                  if "level=error" in ln and "filler" in ln and "full" in ln]
        check(len(errors) >= 1, "the full disk logged at error: %r" % errors[:2])
        os.unlink(ballast)
        check(w.wait_ready(30), "ready again once space is freed")
        check_within("every pod cached", lambda: cached_pods(os.path.join(tfs, "topo.db")) == 6000,
                     10)
    finally:
        for w in ws:
            w.stop()
        subprocess.run(["umount", "-l", tfs], stderr=subprocess.DEVNULL)


CASES = {"forbidden_once": forbidden_once, "disk_full": disk_full,
         "throttled_counted": throttled_counted}


def add_options(ap):
    ap.add_argument("--case", required=True, choices=sorted(CASES))


if __name__ == "__main__":
    sys.exit(main_against_api(lambda a: "webhook_heal_e2e." + a.case,
                              lambda binary, api, ws, args: CASES[args.case](binary, api, ws),
                              add_options))
