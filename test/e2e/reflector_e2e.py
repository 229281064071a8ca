#!/usr/bin/env python3
"""Process-level tests of lib/net's reflector (include/topo/reflector.h)
through test/e2e/reflector_driver.c, which prints every callback as a JSON
line, against fake_apiserver.py over TLS: paged lists, the watch from the
list's resourceVersion with bookmarks, resuming from a stored
resourceVersion, 410 relists (HTTP, in-stream ERROR, an expired continue
token), jittered backoff and its error callback, prompt stops. Python 3
standard library only.

usage: reflector_e2e.py --driver BIN (--list | --case NAME | --all) [--keep]
"""

import json
import re
import subprocess
import threading
import time
import urllib.parse

from harness import Failure, expect, registry, run_cases, slowdown
from harness.fakeapi import FakeApiEnv

NODES = "/api/v1/nodes"

CASES, case = registry()


class Env(FakeApiEnv):
    PREFIX = "topo-reflector-e2e-"
    TOKEN = "reflector-token"

    def __init__(self, driver, keep):
        self.driver_bin = driver
        super().__init__(keep)

    def server_args(self):
        return [*super().server_args(), "--bookmark-interval", "60"]

    def stats(self):
        return self.admin("stats")

    def lists(self):
        """The LIST requests for nodes: their query parameters, oldest first."""
        out = []
        for r in self.admin("requests")["requests"]:
            u = urllib.parse.urlsplit(r["path"])
            q = dict(urllib.parse.parse_qsl(u.query))
            if r["method"] == "GET" and u.path == NODES and "watch" not in q:
                out.append(dict(q, status=r["status"]))
        return out

    def watches(self):
        """The watches of nodes opened, oldest first: {"resourceVersion": RV}."""
        return [{"resourceVersion": w["rv"]} for w in self.stats()["watch_starts"]
                if w["resource"] == "nodes"]

    def watch_queries(self):
        """The query parameters of the watch requests for nodes that ended."""
        out = []
        for r in self.admin("requests")["requests"]:
            u = urllib.parse.urlsplit(r["path"])
            q = dict(urllib.parse.parse_qsl(u.query))
            if u.path == NODES and q.get("watch") == "1":
                out.append(q)
        return out

    def create_node(self, name):
        status, obj = self.request("POST", NODES, {"metadata": {"name": name}})
        expect(status == 201, f"create {name}: {status} {obj}")
        return obj["metadata"]["resourceVersion"]

    def spawn(self, *args):
        d = Driver([self.driver_bin, "--kubeconfig", self.kubeconfig, *args])
        self.procs.append(d.p)
        return d


class Driver:
    """The driver: its stdout lines decoded as they come, its stderr kept."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []
        self.err = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append(json.loads(line))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def cbs(self, name=None):
        with self.cond:
            return [x for x in self.lines if name is None or x["cb"] == name]

    def wait(self, pred, what, timeout=15):
        """The first line for which pred holds, waiting for it."""
        deadline = time.monotonic() + timeout * slowdown()
        with self.cond:
            while True:
                for x in self.lines:
                    if pred(x):
                        return x
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"timed out waiting for {what}; callbacks:\n" +
                                  "\n".join(json.dumps(x) for x in self.lines[-30:]) +
                                  "\nstderr:\n" + "".join(self.err[-20:]))
                self.cond.wait(min(left, 0.1))

    def wait_count(self, name, n, what, timeout=15):
        until(lambda: len(self.cbs(name)) >= n, what, timeout)
        return self.cbs(name)

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def stop(self, what="the stop"):
        n = len(self.cbs("stopped"))
        self.send("stop")
        return self.wait_count("stopped", n + 1, what)[-1]

    def quit(self):
        self.send("quit")
        rc = self.p.wait(15)
        expect(rc == 0, f"driver exit {rc}: {''.join(self.err[-20:])}")

    def retry_waits(self):
        """The waits the reflector logged ("retrying in N ms"), in order."""
        return [int(m.group(1)) for ln in self.err
                for m in [re.search(r"retrying in (\d+) ms", ln)] if m]


def until(cond, what, timeout=15):
    """Polls cond() until it holds; returns its value."""
    deadline = time.monotonic() + timeout * slowdown()
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise Failure(f"timed out waiting for {what}")
        time.sleep(0.05)


@case
def paged_list_then_watch(env):
    """A list in pages of --page-size (limit + continue, one snapshot), then a
    watch from the list's resourceVersion with allowWatchBookmarks; events
    arrive with their resourceVersions."""
    env.admin("load", {"resource": "nodes", "count": 25})
    rv = str(env.stats()["rv"])
    d = env.spawn("--page-size", "10")
    end = d.wait(lambda x: x["cb"] == "list_end", "the list")
    expect(end["rv"] == rv and end["count"] == 25, f"list_end {end}, server rv {rv}")
    names = [x["name"] for x in d.cbs("list_object")]
    expect(len(names) == 25 and len(set(names)) == 25, f"{len(names)} objects listed")
    pages = env.lists()
    expect([p.get("limit") for p in pages] == ["10"] * 3, f"pages {pages}")
    expect("continue" not in pages[0] and all(p.get("continue") for p in pages[1:]),
           f"continue tokens: {pages}")
    until(lambda: env.watches(), "a watch")
    w = env.watches()[0]
    expect(w.get("resourceVersion") == rv, f"watch {w}, list rv {rv}")
    new_rv = env.create_node("late-node")
    ev = d.wait(lambda x: x["cb"] == "event", "the event")
    expect(ev == {"cb": "event", "type": "ADDED", "name": "late-node", "rv": new_rv}, f"{ev}")
    expect(not d.cbs("error"), f"errors: {d.cbs('error')}")
    # The server logs a watch request once it ended it.
    env.admin("watches/close", {"mode": "close"})
    q = until(env.watch_queries, "the closed watch in the server's log")[0]
    expect(q.get("allowWatchBookmarks") == "true" and q.get("resourceVersion") == rv,
           f"watch request {q}")
    d.quit()


@case
def bookmark_moves_position(env):
    """A bookmark moves the position: the watch that follows a closed one
    starts from the last bookmark's resourceVersion, without a list."""
    env.admin("config", {"bookmark_interval": 0.2})
    env.admin("load", {"resource": "nodes", "count": 3})
    d = env.spawn()
    rv = int(d.wait(lambda x: x["cb"] == "list_end", "the list")["rv"])
    env.admin("load", {"resource": "pods", "count": 5})  # moves the server's rv, not nodes'
    d.wait(lambda x: x["cb"] == "bookmark" and int(x["rv"]) > rv, "a bookmark past the list")
    env.admin("watches/close", {"mode": "close"})
    d.wait(lambda x: x["cb"] == "watch_end", "the closed watch")
    with d.cond:
        before_end = d.lines[:next(i for i, x in enumerate(d.lines) if x["cb"] == "watch_end")]
    last = [x["rv"] for x in before_end if x["cb"] == "bookmark"][-1]
    until(lambda: len(env.watches()) >= 2, "the next watch")
    w = env.watches()[1]
    expect(w.get("resourceVersion") == last and int(last) > rv,
           f"watch from {w.get('resourceVersion')}, last bookmark {last}, list {rv}")
    expect(len(env.lists()) == 1 and len(d.cbs("list_begin")) == 1, "listed again")
    d.quit()


@case
def gone_in_stream_relists(env):
    """An in-stream ERROR 410 (history compacted): listed again, then watched
    from the new list's resourceVersion; logged, not an error."""
    env.admin("load", {"resource": "nodes", "count": 4})
    env.admin("config", {"gone_mode": "event"})
    d = env.spawn()
    first = d.wait(lambda x: x["cb"] == "list_end", "the list")["rv"]
    until(lambda: env.watches(), "a watch")
    env.create_node("n-before")
    d.wait(lambda x: x["cb"] == "event", "the event")
    env.admin("compact", {"expire_watches": True})
    ends = d.wait_count("list_end", 2, "the relist")
    expect(int(ends[1]["rv"]) > int(first) and ends[1]["count"] == 5, f"relist {ends[1]}")
    until(lambda: len(env.watches()) >= 2, "the watch after the relist")
    expect(env.watches()[-1].get("resourceVersion") == ends[1]["rv"],
           f"watch {env.watches()[-1]}, relist at {ends[1]['rv']}")
    expect(any("resourceVersion" in ln and "expired, listing again" in ln for ln in d.err),
           f"no expiry logged: {d.err[-5:]}")
    expect(not d.cbs("error") and not d.cbs("list_abort"), f"{d.cbs('error')}")
    d.quit()


@case
def resume_and_http_gone(env):
    """Given a resourceVersion to resume from, the reflector watches from it
    without a list; a stale one is HTTP 410 and it lists instead."""
    env.admin("load", {"resource": "nodes", "count": 2})
    rv = str(env.stats()["rv"])
    d = env.spawn("--resume", rv)
    until(lambda: env.watches(), "a watch")
    new_rv = env.create_node("resumed")
    ev = d.wait(lambda x: x["cb"] == "event", "the event")
    expect(ev["name"] == "resumed" and ev["rv"] == new_rv, f"{ev}")
    expect(env.watches()[0].get("resourceVersion") == rv, f"{env.watches()}")
    expect(not env.lists() and not d.cbs("list_begin"), "listed although resuming")
    d.quit()
    # A stale resourceVersion: HTTP 410, then a list.
    env.admin("config", {"gone_mode": "http"})
    env.create_node("after")
    env.admin("compact", {})
    env.admin("requests/clear", {})
    d = env.spawn("--resume", rv)
    end = d.wait(lambda x: x["cb"] == "list_end", "the list after the 410")
    expect(end["count"] == 4, f"{end}")
    expect(env.watches()[0].get("resourceVersion") == rv, f"first watch {env.watches()[0]}")
    expect(env.stats()["gone"].get("nodes", 0) >= 1, "no 410 sent")
    expect(not d.cbs("error"), f"{d.cbs('error')}")
    d.quit()


@case
def continue_expired_restarts_list(env):
    """The history compacted between two pages: the continue token is 410;
    the partial list is aborted and a new one delivers every object."""
    env.admin("load", {"resource": "nodes", "count": 30})
    # The second page is held long enough for the compaction below to come
    # first even on a loaded machine (at 500 ms an ASan run under the full
    # suite once served it before).
    env.admin("fault", {"kind": "delay", "delay_ms": 2500, "count": 2, "watch": False,
                        "path": NODES})
    d = env.spawn("--page-size", "10")
    d.wait(lambda x: x["cb"] == "list_object", "the first page")
    env.create_node("n-31")
    env.admin("compact", {})
    d.wait(lambda x: x["cb"] == "list_abort", "the aborted list")
    end = d.wait(lambda x: x["cb"] == "list_end", "the list started over")
    expect(end["count"] == 31, f"{end}")
    expect(len(d.cbs("list_begin")) == 2, f"lists begun: {len(d.cbs('list_begin'))}")
    expect(any(p["status"] == 410 for p in env.lists()), f"no 410: {env.lists()}")
    expect(not d.cbs("error"), f"{d.cbs('error')}")
    d.quit()


@case
def continued_page_failure_token_cut(env):
    """A page asked for with a continue token fails (a 403, not retried by
    the HTTP client): the failure's line names the request with the token's
    first 16 characters and its length, not the whole opaque token (often
    hundreds of characters of base64)."""
    env.admin("load", {"resource": "nodes", "count": 30})
    env.admin("fault", {"kind": "status", "code": 403, "count": 1, "list": True,
                        "continued": True, "path": NODES})
    d = env.spawn("--page-size", "10", "--backoff-base", "100")
    d.wait(lambda x: x["cb"] == "list_end", "the list after the 403")
    lines = [ln for ln in d.err if "reason=forbidden" in ln]
    expect(len(lines) == 1, f"{d.err[-5:]}")
    m = re.search(r"continue=([A-Za-z0-9_%=-]+)(\.\.\.\((\d+) chars\))?", lines[0])
    expect(m is not None and len(m.group(1)) == 16 and m.group(3) is not None and
           int(m.group(3)) > 40, f"the token cut to 16 characters and its length: {lines[0]}")
    d.quit()


@case
def list_gone_backs_off(env):
    """A 410 to a list's first page (no continue token: the server cannot
    serve the list, a relist at once would only hammer it) is a failure as a
    5xx: the error callback sees it, the partial list is aborted, the waits
    back off from the base, each logged once at warning with the resource,
    the reason and the Status's message; a 403 is logged at error (RBAC)."""
    env.admin("load", {"resource": "nodes", "count": 2})
    env.admin("fault", {"kind": "status", "code": 410, "count": 4, "list": True,
                        "path": NODES})
    d = env.spawn("--backoff-base", "100", "--backoff-max", "400")
    d.wait(lambda x: x["cb"] == "list_end", "the list after the 410s")
    errs = d.cbs("error")
    expect([e["failures"] for e in errs] == [0, 1, 2, 3] and
           all(e["code"] == "TOPO_EGONE" and "410" in e["text"] for e in errs), f"{errs}")
    expect(len(d.cbs("list_abort")) == 4, f"aborts {len(d.cbs('list_abort'))}")
    waits = d.retry_waits()
    caps = [min(400, 100 * 2 ** i) for i in range(4)]
    expect(len(waits) == 4 and all(c // 2 <= w <= c for w, c in zip(waits, caps)),
           f"waits {waits}, caps {caps}")
    warned = [ln for ln in d.err if "retrying in" in ln]
    expect(len(warned) == 4 and all("level=warn" in ln and "resource=nodes" in ln and
                                    "reason=gone" in ln and "too old resource version" in ln
                                    for ln in warned), f"{warned}")
    d.quit()
    env.admin("fault", {"kind": "status", "code": 403, "count": 1, "list": True,
                        "path": NODES})
    d = env.spawn("--backoff-base", "100")
    d.wait(lambda x: x["cb"] == "list_end", "the list after the 403")
    forbidden = [ln for ln in d.err if "reason=forbidden" in ln]
    expect(len(forbidden) == 1 and "level=error" in forbidden[0] and "403" in forbidden[0],
           f"{d.err[-5:]}")
    d.quit()


@case
def watch_gone_at_list_rv_backs_off(env):
    """A watch answered 410 at the resourceVersion of the list just taken
    (an API server that cannot serve its own list's version) would make
    every LIST follow the last at once: it is a failure, backed off; the
    watch after the last 410 starts from a new list's version."""
    env.admin("load", {"resource": "nodes", "count": 2})
    env.admin("fault", {"kind": "status", "code": 410, "count": 3, "watch": True,
                        "path": NODES})
    d = env.spawn("--backoff-base", "100", "--backoff-max", "400")
    until(lambda: len(env.watches()) >= 1, "the watch after the 410s (a 410 is not counted)")
    errs = d.cbs("error")
    expect([e["failures"] for e in errs] == [0, 1, 2] and
           all(e["code"] == "TOPO_EGONE" for e in errs), f"{errs}")
    expect(len(d.cbs("list_end")) == 4, f"lists {len(d.cbs('list_end'))}, want 4")
    waits = d.retry_waits()
    expect(len(waits) == 3 and all(w >= 50 for w in waits), f"waits {waits}")
    d.quit()


@case
def backoff_with_jitter(env):
    """Failures in a row wait base * 2^n capped at max, each drawn in
    [d/2, d]; the error callback sees the count; a success resets it."""
    env.admin("load", {"resource": "nodes", "count": 2})
    env.admin("fault", {"kind": "status", "code": 500, "count": 5, "watch": False,
                        "method": "GET", "path": NODES})
    d = env.spawn("--backoff-base", "100", "--backoff-max", "400")
    d.wait(lambda x: x["cb"] == "list_end", "the list after the failures")
    errs = d.cbs("error")
    expect([e["failures"] for e in errs] == [0, 1, 2, 3, 4], f"failures {errs}")
    expect(all(e["code"] == "TOPO_ESERVER" and "500" in e["text"] for e in errs), f"{errs}")
    waits = d.retry_waits()
    caps = [min(400, 100 * 2 ** i) for i in range(5)]
    expect(len(waits) == 5 and all(c // 2 <= w <= c for w, c in zip(waits, caps)),
           f"waits {waits}, caps {caps}")
    gaps = [b["ms"] - a["ms"] for a, b in zip(errs, errs[1:])]
    expect(all(g >= w for g, w in zip(gaps, waits)), f"gaps {gaps} shorter than waits {waits}")
    # The next failure after a success starts from the base again.
    env.admin("fault", {"kind": "status", "code": 503, "count": 1, "watch": True,
                        "path": NODES})
    env.admin("watches/close", {"mode": "close"})
    e = d.wait(lambda x: x["cb"] == "error" and x["code"] == "TOPO_ESERVER" and
               "503" in x["text"], "the watch failure")
    expect(e["failures"] == 0, f"count not reset: {e}")
    d.quit()


@case
def error_callback_gives_up(env):
    """The error callback ends the run with the failure's code and message."""
    env.admin("fault", {"kind": "status", "code": 500, "count": 100, "watch": False,
                        "path": NODES})
    d = env.spawn("--backoff-base", "20", "--give-up", "3")
    end = d.wait(lambda x: x["cb"] == "run_end", "the run's end")
    expect(end["rc"] == -14 and "500" in end["text"], f"{end}")  # TOPO_ESERVER
    expect(len(d.cbs("error")) == 3 and len(d.retry_waits()) == 2,
           f"{d.cbs('error')}, waits {d.retry_waits()}")
    d.quit()


@case
def until_quiet(env):
    """A watch_end callback ends the run (a sync that stops once quiet)."""
    env.admin("load", {"resource": "nodes", "count": 2})
    d = env.spawn("--until-quiet", "--watch-timeout", "1")
    end = d.wait(lambda x: x["cb"] == "run_end", "the run's end")
    expect(end["rc"] == 0, f"{end}")
    expect([x["events"] for x in d.cbs("watch_end")] == [0], f"{d.cbs('watch_end')}")
    d.quit()


@case
def prompt_stop(env):
    """A stop ends an open watch within about a second (as the client's
    cancel flag), a backoff wait and a list between two objects at once; a
    later run resumes from the position reached."""
    bound = 1000 * slowdown()
    env.admin("load", {"resource": "nodes", "count": 30})
    # An open watch (the server would keep it for 300 s).
    d = env.spawn("--watch-timeout", "300")
    d.wait(lambda x: x["cb"] == "list_end", "the list")
    until(lambda: env.watches(), "a watch")
    st = d.stop("the stop of the watch")
    took = [st["ms"]]
    # libcurl looks at the cancel flag about once a second on a silent stream.
    expect(st["ms"] <= 2 * bound, f"watch stopped after {st['ms']} ms")
    expect(d.cbs("run_end")[-1]["rc"] == 0, f"{d.cbs('run_end')}")
    # Run again: the watch resumes from the position reached, no list.
    rv = env.create_node("while-stopped")
    d.send("run")
    ev = d.wait(lambda x: x["cb"] == "event", "the event after the new run")
    expect(ev["name"] == "while-stopped" and ev["rv"] == rv, f"{ev}")
    expect(len(d.cbs("list_begin")) == 1, "listed again after a stop")
    d.quit()
    # A backoff wait of 20 s.
    env.admin("fault", {"kind": "status", "code": 500, "count": 100, "watch": False,
                        "path": NODES})
    d = env.spawn("--backoff-base", "20000", "--backoff-max", "20000")
    d.wait(lambda x: x["cb"] == "error", "the failure")
    time.sleep(0.2)
    st = d.stop("the stop of the backoff")
    took.append(st["ms"])
    expect(st["ms"] <= bound, f"backoff stopped after {st['ms']} ms")
    d.quit()
    env.admin("faults/clear", {})
    # A list between two objects (each takes 200 ms).
    d = env.spawn("--page-size", "10", "--object-delay-ms", "200")
    d.wait(lambda x: x["cb"] == "list_object", "the first object")
    st = d.stop("the stop of the list")
    took.append(st["ms"])
    expect(st["ms"] <= bound, f"list stopped after {st['ms']} ms")
    expect(d.cbs("list_abort") and not d.cbs("list_end"), "the list was not aborted")
    expect(len(d.cbs("list_object")) < 30, "the list ran to its end")
    expect(not d.cbs("error"), f"a stop counted as a failure: {d.cbs('error')}")
    d.quit()
    print(f"stopped within: watch {took[0]} ms, backoff {took[1]} ms, list {took[2]} ms")


if __name__ == "__main__":
    raise SystemExit(run_cases(CASES, Env))
