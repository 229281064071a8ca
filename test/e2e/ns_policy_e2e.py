#!/usr/bin/env python3
"""Process-level test of topo-webhook's per-namespace policy overrides
(webhook/ns_policy.c) through test/e2e/ns_policy_driver.c, against
fake_apiserver.py over TLS (test CA from make_test_pki.sh, bearer token file).

Checks that lookups follow the namespaces' label: the first list, label
added / changed / removed, namespaces deleted, an invalid value (ignored, one
warning per namespace and value), a watch ended by compaction (in-stream 410:
relist), and changes made while the watch could not reconnect (seen through
the relist, which replaces the whole view).

--packing: the view also keeps packing's opt-outs (topology.topo.io/packing:
"false") and watches every namespace (no label selector): namespaces with
either label, either alone, values other than "false", changes, deletion,
and a relist that drops what changed while the watch was down.

usage: ns_policy_e2e.py --driver BIN [--packing] [--keep]
"""

import argparse
import sys
import time

from harness import Failure, expect
from harness.fakeapi import FakeApiEnv, expect_relist
from harness.linedriver import LineDriver

LABEL = "topology.topo.io/no-fit-policy"
PACKING = "topology.topo.io/packing"
NAMESPACES = ("team-a", "team-b", "team-c", "team-d", "team-e", "team-f")


class Env(FakeApiEnv):
    PREFIX = "topo-ns-policy-e2e-"
    TOKEN = "ns-token-1"
    TOKEN_EOL = "\n"
    REQUEST_TIMEOUT = 60
    ADMIN_TIMEOUT = 60
    TOKEN_FILE_RELATIVE = False

    def __init__(self, driver, keep):
        super().__init__(keep)
        self.driver_bin = driver
        self.driver = None

    def server_args(self):
        return [*super().server_args(), "--bookmark-interval", "60"]

    # ------------------------------------------------------------ namespaces

    def create_ns(self, name, value=None):
        md = {"name": name}
        if value is not None:
            md["labels"] = {LABEL: value, "team": name}
        status, out = self.request("POST", "/api/v1/namespaces",
                                   {"apiVersion": "v1", "kind": "Namespace", "metadata": md})
        expect(status == 201, f"create namespace {name}: {status} {out}")

    def label_ns(self, name, value):
        """Sets (value None: removes) the policy label with a merge patch."""
        status, out = self.request("PATCH", f"/api/v1/namespaces/{name}",
                                   {"metadata": {"labels": {LABEL: value}}},
                                   ctype="application/merge-patch+json")
        expect(status == 200, f"label namespace {name}: {status} {out}")

    def delete_ns(self, name):
        status, out = self.request("DELETE", f"/api/v1/namespaces/{name}")
        expect(status == 200, f"delete namespace {name}: {status} {out}")

    def verbs(self):
        return self.admin("stats").get("verbs", {}).get("namespaces", {})

    # ------------------------------------------------------------ the driver

    def set_labels(self, name, labels):
        """Merge-patches the namespace's labels (a value None removes one)."""
        status, out = self.request("PATCH", f"/api/v1/namespaces/{name}",
                                   {"metadata": {"labels": labels}},
                                   ctype="application/merge-patch+json")
        expect(status == 200, f"label namespace {name}: {status} {out}")

    def start_driver(self, packing=False):
        self.driver = LineDriver([self.driver_bin, "--kubeconfig", self.kubeconfig,
                                  "--label", LABEL, *(["--packing"] if packing else [])])

    def wait_packing(self, policies, off, what):
        """Polls until the lookups equal policies and the opt-outs off (a set)."""
        want_off = {n: n in off for n in NAMESPACES}
        return self.driver.wait_for(
            NAMESPACES, lambda g: g["synced"] and g["policies"] == policies
            and g["packing_off"] == want_off, what)

    def ask(self, names=NAMESPACES):
        return self.driver.ask(names)

    def wait_for(self, want, what):
        """Polls the driver until its lookups equal want (a dict ns -> policy or None)."""
        got = self.driver.wait_for(NAMESPACES,
                                   lambda g: g["synced"] and g["policies"] == want, what)
        expect(got["count"] == sum(v is not None for v in want.values()),
               f"{what}: count {got['count']} for {want}")
        return got

    def warnings(self, ns, value):
        # Each check here wants one warning: wait for it to reach the reader
        # thread (the driver's answer can show the change first).
        return self.driver.wait_warnings(1, f"namespace {ns}:", f'\\"{value}\\"')

    def close(self):
        if self.driver is not None:
            self.driver.close()
        super().close()

def run(env):
    # Before the driver starts: the first list must see these.
    env.create_ns("team-a", "deny")
    env.create_ns("team-b", "ignore")
    env.create_ns("team-c")
    env.create_ns("team-d", "bogus")
    env.create_ns("team-e", "gate")
    env.start_driver()
    want = {"team-a": "deny", "team-b": "ignore", "team-c": None, "team-d": None,
            "team-e": "gate", "team-f": None}
    env.wait_for(want, "first list")
    verbs = env.verbs()
    expect(verbs.get("LIST", 0) >= 1 and verbs.get("WATCH", 0) >= 1, f"verbs {verbs}")
    expect(len(env.warnings("team-d", "bogus")) == 1,
           f"one warning for team-d=bogus, got {env.warnings('team-d', 'bogus')}")

    # Watch events: added, changed, removed, deleted, created.
    env.label_ns("team-c", "deny")
    env.label_ns("team-a", "gate")
    env.label_ns("team-b", None)
    env.delete_ns("team-e")
    env.create_ns("team-f", "ignore")
    want = {"team-a": "gate", "team-b": None, "team-c": "deny", "team-d": None,
            "team-e": None, "team-f": "ignore"}
    env.wait_for(want, "label changes")
    lists_before = env.verbs().get("LIST", 0)

    # The watch ends with an in-stream 410 (history compacted): relist, and the
    # view keeps following the labels afterwards.
    env.admin("compact", {"expire_watches": True})
    expect_relist(env.verbs, lists_before)
    env.wait_for(want, "after the relist")
    env.label_ns("team-b", "deny")
    want["team-b"] = "deny"
    env.wait_for(want, "label change after the relist")
    # The relist read team-d=bogus again: still one warning.
    expect(len(env.warnings("team-d", "bogus")) == 1,
           f"team-d=bogus warned again on relist: {env.warnings('team-d', 'bogus')}")

    # Changes made while the watch cannot reconnect, then compacted away: only
    # the relist can see them, and it must drop what is gone.
    lists_before = env.verbs().get("LIST", 0)
    env.admin("fault", {"kind": "status", "code": 500, "count": 100000, "watch": True,
                        "path": "/api/v1/namespaces"})
    env.admin("watches/close", {"mode": "close"})
    env.delete_ns("team-c")
    env.label_ns("team-f", None)
    env.label_ns("team-a", "ignore")
    env.label_ns("team-d", "deny")
    env.admin("compact", {})
    time.sleep(0.5)
    # Still the old view: the watch is down, nothing was applied.
    got = env.ask()
    expect(got["policies"] == want, f"view changed while the watch was down: {got}")
    env.admin("faults/clear", {})
    want = {"team-a": "ignore", "team-b": "deny", "team-c": None, "team-d": "deny",
            "team-e": None, "team-f": None}
    env.wait_for(want, "relist after the watch came back")
    expect(env.verbs().get("LIST", 0) > lists_before, "the changes were not seen by a relist")
    expect(any("retrying in" in l for l in env.driver.stderr_lines),
           "the failed watches were not logged with a backoff")

    # A new invalid value warns once more (a new value), then a fix clears it.
    env.label_ns("team-d", "Deny")
    want["team-d"] = None
    env.wait_for(want, "invalid value")
    env.label_ns("team-a", "Deny")
    want["team-a"] = None
    env.wait_for(want, "invalid value on team-a")
    env.label_ns("team-a", "gate")
    want["team-a"] = "gate"
    env.wait_for(want, "fixed value")
    expect(len(env.warnings("team-d", "Deny")) == 1, "team-d=Deny not warned exactly once")
    expect(len(env.warnings("team-a", "Deny")) == 1, "team-a=Deny not warned exactly once")

    # A clean stop.
    env.driver.quit()


def run_packing(env):
    none = {n: None for n in NAMESPACES}
    env.create_ns("team-a", "deny")
    env.set_labels("team-a", {PACKING: "false"})
    env.create_ns("team-b")
    env.set_labels("team-b", {PACKING: "false"})
    env.create_ns("team-c")
    env.set_labels("team-c", {PACKING: "False"})  # not "false": stays in
    env.create_ns("team-d", "gate")
    env.start_driver(packing=True)
    policies = dict(none, **{"team-a": "deny", "team-d": "gate"})
    env.wait_packing(policies, {"team-a", "team-b"}, "first list")
    # No label selector: every namespace travels.
    env.set_labels("team-b", {PACKING: "true"})
    env.set_labels("team-c", {PACKING: "false"})
    env.set_labels("team-a", {LABEL: None})        # still opted out of packing
    env.set_labels("team-d", {PACKING: "false"})   # both labels
    env.create_ns("team-e")
    env.set_labels("team-e", {PACKING: "false"})
    policies = dict(none, **{"team-d": "gate"})
    env.wait_packing(policies, {"team-a", "team-c", "team-d", "team-e"}, "label changes")
    env.delete_ns("team-e")
    env.wait_packing(policies, {"team-a", "team-c", "team-d"}, "namespace deleted")
    # Changes while the watch is down, compacted away: the relist drops them.
    env.admin("fault", {"kind": "status", "code": 500, "count": 100000, "watch": True,
                        "path": "/api/v1/namespaces"})
    env.admin("watches/close", {"mode": "close"})
    env.set_labels("team-a", {PACKING: None})
    env.set_labels("team-d", {LABEL: None})
    env.admin("compact", {})
    env.admin("faults/clear", {})
    policies = dict(none)
    env.wait_packing(policies, {"team-c", "team-d"}, "relist after the watch came back")
    env.driver.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--packing", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    env = Env(args.driver, args.keep)
    try:
        run_packing(env) if args.packing else run(env)
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        env.close()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
