#!/usr/bin/env python3
"""A 410 to the cache filler's LIST (issue 33 item 7): topo-webhook in daemon
mode against fake_apiserver.py answering every node LIST 410 Expired for 3 s
(no continue token: the server cannot serve the list, no relist fixes it).

  webhook_list_gone_e2e.py --webhook build/webhook/topo-webhook

The filler backs off as for a 5xx: a handful of node LISTs in those 3 s, not
hundreds; one warning per failure naming the resource, the reason, the 410
and the Status's message and the next wait; each counted in
topo_webhook_reflector_failures_total{resource="nodes",reason="gone"}; and
once the 410s stop it lists and the webhook becomes ready.
"""
import sys
import time

from harness import check, check_within
from harness.pods import FAKE_NODE_LEVELS
from harness.webhook import main_against_api, metric, start_daemon

WINDOW = 3.0


def run(binary, api, ws):
    api.admin("load", {"resource": "nodes", "count": 8, "gpus": 8, "nodes_per_rack": 8})
    api.admin("requests/clear", {})
    api.admin("fault", {"kind": "status", "code": 410, "list": True, "seconds": WINDOW,
                        "path": "/api/v1/nodes"})
    t0 = time.monotonic()
    w = start_daemon(api, binary, "w1", ["--levels", FAKE_NODE_LEVELS, "--log-format", "text"])
    w.name = "w1"
    ws.append(w)
    time.sleep(max(0.0, WINDOW - (time.monotonic() - t0)))
    stats = api.admin("stats")
    lists = stats["verbs"].get("nodes", {}).get("LIST", 0)
    gone = stats["gone"].get("nodes", 0)
    # Backoff from 200 ms doubling (each wait half to all of it): about 5 in
    # 3 s; without it, hundreds.
    # (the LIST after the window may have been answered already)
    check(2 <= gone <= 8 and gone <= lists <= gone + 1,
          "%d node LISTs (%d answered 410) in the %g s of 410s, want 2..8" % (lists, gone, WINDOW))
    check(w.wait_ready(30), "ready once the 410s stopped")
    gone = api.admin("stats")["gone"].get("nodes", 0)
    text = w.metrics_text()
    n = metric(text, "topo_webhook_reflector_failures_total", 'resource="nodes",reason="gone"')
    check(n == gone, "topo_webhook_reflector_failures_total{nodes,gone} %r, want %d" % (n, gone))
    check(metric(text, "topo_webhook_reflector_failures_total", 'reason="server"') == 0,
          "no server failures counted")
    warned = [ln for ln in w.log().splitlines() if "reason=gone" in ln]
    check(len(warned) == gone and all(
        "level=warn" in ln and "resource=nodes" in ln and "410" in ln and
        "too old resource version" in ln and "retry_ms=" in ln for ln in warned),
        "one warning per 410 with resource, reason, status, message, retry_ms: %r"
        % warned[:3])
    # The cache holds the nodes: listed after the 410s.
    check_within("the nodes listed", lambda: metric(w.metrics_text(),
                                                    "topo_webhook_cache_errors_total") == gone, 5)


if __name__ == "__main__":
    sys.exit(main_against_api("webhook_list_gone_e2e", run))
