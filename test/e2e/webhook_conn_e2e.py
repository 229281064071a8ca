#!/usr/bin/env python3
"""topo-webhook's connection cap end to end (issue 27, section 3): idle
connections must not lock the API server out.

  webhook_conn_e2e.py --webhook build/webhook/topo-webhook

Cases (one process each, the test PKI of make_test_pki.sh):
  idle_flood            --header-timeout 10 (the old default, so that only the
                        cap can help): a request body half sent from
                        127.0.0.1, then 50 keep-alive connections idle after
                        one request and 1,050 bare TCP connections that send
                        nothing, from 127.0.0.2-6 (220 per address, under the
                        256 per-address cap; 1,101 in all, past the 1,024
                        total). Three AdmissionReviews from 127.0.0.1, each on
                        a new connection, are answered within 1 s; the idle
                        keep-alives (waiting longest) are evicted first, then
                        pending ones; the half-sent body is never evicted and
                        its request completes; evictions are counted.
  headers_flood         the default limits: 1,024 TLS connections from
                        127.0.0.2-5 (256 each: the per-address cap, and
                        together the total cap) each send a POST's headers
                        with a Content-Length of 1 MB and then nothing. Each
                        is behind --min-body-rate from its headers, so at the
                        cap it is evicted (stalled) like a pending one: three
                        AdmissionReviews from 127.0.0.1 are answered within
                        1 s (once, every one was refused until the 5 s body
                        grace passed), counted as state="stalled".
  default_header_timeout without --header-timeout, a bare TCP connection is
                        closed within the API server's 2 s (timeoutSeconds of
                        the chart).
"""
import argparse
import os
import resource
import socket
import ssl
import struct
import sys
import time

from harness import FAILURES, check, finish
from harness.pki import pki_tmpdir
from harness.pods import review as pod_review
from harness.webhook import Webhook, metric

FLOOD_FROM = ["127.0.0.%d" % i for i in range(2, 7)]
KEEPALIVE_PER_ADDRESS = 10
BARE_PER_ADDRESS = 210
TOTAL_CAP = 1024


def review(uid):
    """A pod's AdmissionReview (no topology: allowed as it is)."""
    return pod_review(uid, {"kind": "Pod", "metadata": {"name": "p"}}).encode()


def raise_nofile(want=8192):
    """This process (and the webhook it starts, which inherits it) may hold
    the flood's descriptors."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def no_time_wait(s):
    """Closing s resets it: the flood's 1,100 source ports (on 127.0.0.2-6)
    must not linger in TIME_WAIT, where a later test's daemon binding a
    "free" port on every address would find them."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return s


def tls_from(w, source, timeout=10):
    """A TLS connection to the webhook from source, verified against the CA."""
    raw = no_time_wait(socket.socket())
    raw.settimeout(timeout)
    raw.bind((source, 0))
    raw.connect(("127.0.0.1", w.port))
    return w.ctx.wrap_socket(raw, server_hostname="localhost")


def read_response(s):
    """The status and body of one HTTP/1.1 response with a Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        part = s.recv(65536)
        if not part:
            return -1, b""
        data += part
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode(errors="replace").split("\r\n")
    length = 0
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v)
    while len(body) < length:
        part = s.recv(65536)
        if not part:
            break
        body += part
    return int(lines[0].split()[1]), body


def post(s, body):
    s.sendall(b"POST /mutate?timeout=2s HTTP/1.1\r\nHost: localhost\r\n"
              b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    return read_response(s)


def admit_timed(w, uid):
    """An AdmissionReview from 127.0.0.1 on a new connection, as the API
    server sends it: (seconds from connect to answer, status)."""
    t0 = time.monotonic()
    try:
        s = tls_from(w, "127.0.0.1", timeout=15)
        try:
            st, body = post(s, review(uid))
        finally:
            s.close()
        ok = st == 200 and uid.encode() in body
        return time.monotonic() - t0, st if ok else -st
    except OSError as e:
        print("admission %s: %r" % (uid, e), flush=True)
        return time.monotonic() - t0, None


def closed(s):
    """The server closed s (end of stream or reset)."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except (BlockingIOError, ssl.SSLWantReadError):
        return False
    except OSError:
        return True


def case_idle_flood(binary, pki, workdir):
    w = Webhook(binary, pki, workdir, ["--header-timeout", "10", "--min-body-rate", "0",
                                            "--log-format", "json"])
    held = []
    try:
        # a request in progress: headers and half its body, the rest later
        body = review("slow-body")
        slow = tls_from(w, "127.0.0.1")
        slow.sendall(b"POST /mutate?timeout=10s HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
                     + body[:len(body) // 2])
        time.sleep(0.2)
        keepalive = []
        for src in FLOOD_FROM:
            for i in range(KEEPALIVE_PER_ADDRESS):
                s = tls_from(w, src)
                st, _ = post(s, review("ka-%s-%d" % (src, i)))
                check(st == 200, "keep-alive request from %s: %d" % (src, st))
                keepalive.append(s)
        time.sleep(0.2)
        for src in FLOOD_FROM:
            for _ in range(BARE_PER_ADDRESS):
                s = no_time_wait(socket.socket())
                s.bind((src, 0))
                s.setblocking(False)
                try:
                    s.connect(("127.0.0.1", w.port))
                except BlockingIOError:
                    pass
                held.append(s)
        flood = 1 + len(keepalive) + len(held)
        # the server accepts what it can (all of it once evicting; today
        # up to its limit, the rest waits in the backlog)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            if metric(w.metrics_text(), "topo_webhook_connections_total") >= flood:
                break
            time.sleep(0.1)
        time.sleep(0.3)
        accepted = metric(w.metrics_text(), "topo_webhook_connections_total")
        print("flood: %d connections opened, %d accepted" % (flood, accepted), flush=True)
        for i in range(3):
            took, st = admit_timed(w, "api-%d" % i)
            print("admission %d: %r in %.3f s" % (i, st, took), flush=True)
            check(st == 200 and took < 1.0,
                  "AdmissionReview from 127.0.0.1 answered within 1 s during the flood: "
                  "status %r in %.2f s" % (st, took))
        slow.sendall(body[len(body) // 2:])
        st, out = read_response(slow)
        check(st == 200 and b"slow-body" in out,
              "the request whose body was half sent is never evicted and completes: %r" % st)
        slow.close()
        time.sleep(0.3)
        gone = sum(1 for s in keepalive if closed(s))
        check(gone == len(keepalive),
              "every idle keep-alive (waiting longest) evicted: %d of %d" % (gone, len(keepalive)))
        text = w.metrics_text()
        idle = metric(text, "topo_webhook_connections_evicted_total", 'state="idle"')
        pending = metric(text, "topo_webhook_connections_evicted_total", 'state="pending"')
        refused = metric(text, "topo_webhook_connections_refused_total")
        print("evicted: idle %d, pending %d; refused %d" % (idle, pending, refused), flush=True)
        check(idle == len(keepalive), "idle evictions counted: %r" % idle)
        # the flood past the cap, and the first admission (the others find
        # the room the one before left)
        least = flood + 1 - TOTAL_CAP - len(keepalive)
        check(pending >= least, "pending evictions counted: %r, want >= %d" % (pending, least))
        check(refused == 0, "no connection refused (none had all the others busy): %r" % refused)
        for s in keepalive:
            s.close()
    finally:
        for s in held:
            s.close()
        log = w.stop()
    check("connection cap (1024) reached" in log, "evictions logged")
    check("AddressSanitizer" not in log and "runtime error" not in log,
          "no sanitizer report (ASan build)")
    if FAILURES:
        print("--- idle_flood webhook log (tail) ---\n" + log[-4000:])


def case_headers_flood(binary, pki, workdir):
    w = Webhook(binary, pki, workdir, ["--log-format", "json"])
    held = []
    try:
        for src in FLOOD_FROM[:4]:
            for _ in range(256):
                s = tls_from(w, src)
                s.sendall(b"POST /mutate?timeout=30s HTTP/1.1\r\nHost: localhost\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
                held.append(s)
        time.sleep(0.3)
        open_now = sum(1 for s in held if not closed(s))
        print("headers flood: %d connections holding a body open" % open_now, flush=True)
        for i in range(3):
            took, st = admit_timed(w, "api-%d" % i)
            print("admission %d: %r in %.3f s" % (i, st, took), flush=True)
            check(st == 200 and took < 1.0,
                  "AdmissionReview from 127.0.0.1 answered within 1 s while 1,024 connections "
                  "hold bodies they never send: status %r in %.2f s" % (st, took))
        text = w.metrics_text()
        stalled = metric(text, "topo_webhook_connections_evicted_total", 'state="stalled"')
        refused = metric(text, "topo_webhook_connections_refused_total")
        print("evicted stalled %d; refused %d" % (stalled, refused), flush=True)
        check(stalled >= 1, "stalled bodies evicted and counted: %r" % stalled)
        check(refused == 0, "no connection refused: %r" % refused)
    finally:
        for s in held:
            s.close()
        log = w.stop()
    check("AddressSanitizer" not in log and "runtime error" not in log,
          "no sanitizer report (ASan build)")
    if FAILURES:
        print("--- headers_flood webhook log (tail) ---\n" + log[-4000:])


def case_default_header_timeout(binary, pki, workdir):
    w = Webhook(binary, pki, workdir, ["--log-format", "json"])
    try:
        s = socket.create_connection(("127.0.0.1", w.port), timeout=5)
        t0 = time.monotonic()
        try:
            data = s.recv(1)
        except OSError:
            data = b""
        took = time.monotonic() - t0
        s.close()
        check(data == b"" and took < 1.9,
              "a connection that sends nothing is closed within the API server's 2 s by "
              "default: %.2f s" % took)
    finally:
        log = w.stop()
    check("AddressSanitizer" not in log and "runtime error" not in log,
          "no sanitizer report (ASan build)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    args = ap.parse_args()
    raise_nofile()
    with pki_tmpdir("topo-wh-conn-") as (tmp, pki):
        case_idle_flood(args.webhook, pki, os.path.join(tmp, "flood"))
        case_headers_flood(args.webhook, pki, os.path.join(tmp, "headers"))
        case_default_header_timeout(args.webhook, pki, os.path.join(tmp, "default"))
    return finish("webhook_conn_e2e")


if __name__ == "__main__":
    sys.exit(main())
