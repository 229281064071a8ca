#!/usr/bin/env python3
"""topo-webhook's HTTPS server end to end (Python 3 standard library only).

  webhook_e2e.py --webhook build/webhook/topo-webhook

Makes a test CA and server certificate (make_test_pki.sh), starts
topo-webhook on free ports and checks: POST /mutate over TLS verified against
the CA (uid echoed), keep-alive, 413 over the body limit, 400 on malformed
JSON, 404/405, /healthz, /readyz, /metrics, certificate rotation without a
failed request, and SIGTERM during a burst (no accepted request fails, exit 0);
TLS renegotiation refused at once; with --max-body-memory 4 the body budget
charged as bytes arrive, 413 for a chunked body over the limit; absolute
connection deadlines (handshake+headers, body rate, keep-alive idle) against
trickling clients; /metrics on --metrics-port.
"""
import argparse
import http.client
import json
import os
import re
import select
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

from harness import FAILURES, check, finish
from harness.pki import pki_tmpdir
from harness.pods import review as pod_review
from harness.webhook import Webhook, check_prometheus, free_port, metric


def review(uid):
    """A pod's AdmissionReview: topo-webhook here has no topology (no
    --levels), so it is allowed as it is."""
    return pod_review(uid, {"kind": "Pod", "metadata": {"name": "p"}})


def start(binary, pki, workdir, extra=()):
    """topo-webhook on its own copy of the server certificate (rotated by
    case_rotation), checking it every second, logging JSON."""
    return Webhook(binary, pki, workdir, ["--cert-check-interval", "1", "--log-format", "json",
                                          *extra], own_tls=True)


def case_basic(w):
    c = w.conn()
    st, body, _ = w.post(c, review("uid-1"))
    doc = json.loads(body)
    check(st == 200, "POST /mutate: status %d" % st)
    check(doc.get("response", {}).get("uid") == "uid-1" and doc["response"].get("allowed") is True,
          "uid echoed and allowed: %r" % doc)
    check(doc.get("kind") == "AdmissionReview" and doc.get("apiVersion") == "admission.k8s.io/v1",
          "AdmissionReview v1: %r" % doc)
    # Keep-alive: many requests over one connection, timed.
    sock = c.sock
    n, t0 = 0, time.time()
    while time.time() - t0 < 1.5:
        st, body, _ = w.post(c, review("ka-%d" % n))
        if not check(st == 200 and json.loads(body)["response"]["uid"] == "ka-%d" % n,
                     "keep-alive request %d" % n):
            break
        n += 1
    rate = n / (time.time() - t0)
    check(c.sock is sock and n > 50, "one connection for %d requests" % n)
    print("keep-alive: %d requests in 1.5 s over one connection: %.0f requests/s" % (n, rate),
          flush=True)
    # Malformed JSON: 400 naming the problem, connection still usable.
    st, body, _ = w.post(c, b'{"request": {"uid": ')
    check(st == 400 and b"malformed AdmissionReview" in body, "malformed: %d %r" % (st, body))
    st, body, _ = w.post(c, b'[1,2]')
    check(st == 400 and b"not a JSON object" in body, "not an object: %d %r" % (st, body))
    st, body, _ = w.post(c, b'{"kind":"AdmissionReview"}')
    check(st == 400 and b"request" in body, "no request: %d %r" % (st, body))
    # Wrong path / method.
    st, _, _ = w.post(c, None, path="/other", method="GET")
    check(st == 404, "GET /other: %d" % st)
    st, _, r = w.post(c, None, path="/mutate", method="GET")
    check(st == 405 and r.getheader("Allow") == "POST", "GET /mutate: %d" % st)
    st, body, _ = w.post(c, review("after"))
    check(st == 200, "connection usable after 4xx: %d" % st)
    c.close()
    # Over the limit: 413 from the headers alone, before any of the body is
    # sent (the API server's Content-Length is always set).
    c = w.conn()
    c.putrequest("POST", "/mutate")
    c.putheader("Content-Type", "application/json")
    c.putheader("Content-Length", str(3 * 1024 * 1024 + 1))
    c.endheaders()
    r = c.getresponse()
    check(r.status == 413 and b"too large" in r.read(), "over the limit: %d" % r.status)
    c.close()
    st = w.post_once(b"y" * (3 * 1024 * 1024 - 10))[0]
    check(st == 400, "just under the limit is read (then malformed): %d" % st)
    # Health endpoints.
    check(w.get("/healthz")[0] == 200, "/healthz")
    check(w.get("/livez")[0] == 200, "/livez")
    check(w.get("/readyz")[0] == 200, "/readyz")
    check(w.get("/nope")[0] == 404, "health 404")
    # lib/probe's verbose lists and per-check paths, its 405 and Content-Type.
    check(w.get("/readyz?verbose") ==
          (200, "[+]admission ok\n[+]shutdown ok\nreadyz check passed\n"),
          "/readyz?verbose: %r" % (w.get("/readyz?verbose"),))
    check(w.get("/readyz/admission") == (200, "ok\n"), "/readyz/admission")
    check(w.get("/livez?verbose") == (200, "[+]ping ok\nlivez check passed\n"),
          "/livez?verbose")
    check(w.get("/readyz/nope")[0] == 404, "/readyz/nope")
    hc = http.client.HTTPConnection("127.0.0.1", w.health, timeout=5)
    try:
        hc.request("POST", "/readyz", body=b"x")
        r = hc.getresponse()
        r.read()
        check(r.status == 405 and r.getheader("Allow") == "GET, HEAD",
              "POST /readyz: %d %r" % (r.status, r.getheader("Allow")))
        hc.close()
        hc = http.client.HTTPConnection("127.0.0.1", w.health, timeout=5)
        hc.request("GET", "/metrics")
        r = hc.getresponse()
        r.read()
        check(r.getheader("Content-Type") == "text/plain; version=0.0.4; charset=utf-8",
              "/metrics Content-Type: %r" % r.getheader("Content-Type"))
    finally:
        hc.close()
    st, text = w.get("/metrics")
    check(st == 200 and check_prometheus(text), "metrics parse:\n" + text)
    ok200 = metric(text, "controller_runtime_webhook_requests_total", 'code="200"')
    check(ok200 >= n + 2, "200s counted: %s vs %d" % (ok200, n + 2))
    check(metric(text, "controller_runtime_webhook_requests_total", 'code="400"') == 4,
          "400s counted")
    check(metric(text, "controller_runtime_webhook_requests_total", 'code="404"') == 1, "404")
    check(metric(text, "controller_runtime_webhook_requests_total", 'code="405"') == 1, "405")
    check(metric(text, "topo_webhook_body_rejections_total") == 1, "body rejections")
    check(metric(text, "controller_runtime_webhook_latency_seconds_count", 'code="200"') == ok200,
          "histogram count")
    # The server counts a request done when libmicrohttpd reports it
    # complete, which may come just after the client read its answer.
    deadline = time.time() + 3
    while metric(text, "controller_runtime_webhook_requests_in_flight") != 0 and \
            time.time() < deadline:
        time.sleep(0.05)
        text = w.get("/metrics")[1]
    check(metric(text, "controller_runtime_webhook_requests_in_flight") == 0, "in flight 0")


def new_leaf(pki, workdir, cn):
    key = os.path.join(workdir, "new.key")
    csr = os.path.join(workdir, "new.csr")
    crt = os.path.join(workdir, "new.pem")
    ext = os.path.join(workdir, "new.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    for cmd in (["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", key],
                ["openssl", "req", "-new", "-key", key, "-out", csr, "-subj",
                 "/O=topo tests/CN=" + cn],
                ["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.pem"),
                 "-CAkey", os.path.join(pki, "ca.key"), "-set_serial", str(int(time.time() * 1000)),
                 "-out", crt, "-days", "2", "-sha256", "-extfile", ext]):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return crt, key


def peer_cn(w):
    c = w.conn()
    c.connect()
    cert = c.sock.getpeercert()
    c.close()
    return dict(x[0] for x in cert["subject"]).get("commonName")


def case_rotation(w, workdir):
    first = peer_cn(w)
    stop = threading.Event()
    errors, done = [], [0]

    def load():
        c = w.conn()
        while not stop.is_set():
            try:
                if done[0] % 5 == 0:  # mix fresh connections with keep-alive reuse
                    c.close()
                    c = w.conn()
                st, body, r = w.post(c, review("rot"))
                if st != 200:
                    errors.append(st)
                if r.getheader("Connection", "").lower() == "close":
                    c.close()
                    c = w.conn()
                done[0] += 1
            except Exception as e:  # noqa: BLE001 -- any failure counts
                errors.append(repr(e))
                c.close()
                c = w.conn()
        c.close()

    threads = [threading.Thread(target=load) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    crt, key = new_leaf(w.pki, workdir, "rotated-server")
    os.replace(crt, w.cert)
    os.replace(key, w.key)
    seen = None
    deadline = time.time() + 8
    while time.time() < deadline:
        seen = peer_cn(w)
        if seen == "rotated-server":
            break
        time.sleep(0.2)
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join()
    check(first != "rotated-server" and seen == "rotated-server",
          "new connections see the new certificate (%s -> %s)" % (first, seen))
    check(not errors and done[0] > 20, "no failed request during rotation (%d done, errors %r)"
          % (done[0], errors[:5]))
    # A broken pair leaves the old certificate serving.
    with open(w.key, "w") as f:
        f.write("not a key\n")
    time.sleep(2.5)
    st = w.post_once(review("still"))[0]
    check(st == 200 and peer_cn(w) == "rotated-server", "bad key: old pair keeps serving")
    st, text = w.get("/metrics")
    check(metric(text, "topo_webhook_tls_reloads_total", 'result="ok"') >= 1, "reload counted")
    check(metric(text, "topo_webhook_tls_reloads_total", 'result="error"') >= 1,
          "failed reload counted")


def case_sigterm(w):
    stop = threading.Event()
    failures, accepted, refused = [], [0], [0]
    lock = threading.Lock()

    def load():
        while not stop.is_set():
            c = w.conn()
            try:
                c.connect()
            except OSError:
                with lock:
                    refused[0] += 1  # never accepted by the server
                c.close()
                time.sleep(0.01)
                continue
            while not stop.is_set():
                try:
                    st, body, r = w.post(c, review("burst"))
                except Exception as e:  # noqa: BLE001
                    with lock:
                        failures.append(repr(e))
                    break
                with lock:
                    accepted[0] += 1
                if st != 200:
                    with lock:
                        failures.append(st)
                if r.getheader("Connection", "").lower() == "close":
                    break
            c.close()

    threads = [threading.Thread(target=load) for _ in range(6)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    before = accepted[0]
    t0 = time.time()
    w.proc.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    try:
        ready, ready_text = w.get("/readyz")
    except OSError:
        ready, ready_text = "closed", ""
    try:
        rc = w.proc.wait(timeout=8)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.time() - t0
    stop.set()
    for t in threads:
        t.join()
    check(ready != 200, "/readyz after SIGTERM: %r" % ready)
    check(ready != 503 or "[-]shutdown failed\n" in ready_text,
          "/readyz after SIGTERM names the shutdown: %r" % ready_text)
    check(rc == 0, "exit status after SIGTERM: %r" % rc)
    check(took < 5, "exit within 5 s (took %.2f s)" % took)
    check(before > 20, "burst was running (%d)" % before)
    check(not failures, "no accepted request failed: %r" % failures[:5])
    print("sigterm: %d requests answered, %d connections refused after the listener closed, "
          "exit %r in %.2f s" % (accepted[0], refused[0], rc, took), flush=True)


def raw_post_start(w, length, chunk):
    """A POST /mutate whose body is only partly sent: the connection stays
    open holding a body buffer in the server."""
    raw = socket.create_connection(("localhost", w.port), timeout=10)
    s = w.ctx.wrap_socket(raw, server_hostname="localhost")
    s.sendall(("POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % length).encode())
    if chunk:
        s.sendall(b" " * chunk)
    return s


def read_status(s):
    data = b""
    while b"\r\n" not in data:
        part = s.recv(4096)
        if not part:
            break
        data += part
    line = data.split(b"\r\n", 1)[0].decode(errors="replace")
    return int(line.split()[1]) if line.startswith("HTTP/1.1 ") else -1


def case_body_budget(w):
    """--max-body-memory 4: one 2.5 MB body in flight fits; a second 3 MB
    one is refused with 503 when its arriving bytes push the held buffers
    past 4 MiB (answered once the rest of it was read and dropped); the
    budget comes back when the first request ends."""
    first = raw_post_start(w, 3000000, 2500000)
    time.sleep(0.3)
    second = raw_post_start(w, 3000000, 3000000)
    st = read_status(second)
    check(st == 503, "second large body over the budget: status %d, want 503" % st)
    second.close()
    first.sendall(b" " * 499999 + b"x")
    st = read_status(first)
    check(st == 400, "first body completed (not JSON): status %d, want 400" % st)
    first.close()
    st = w.post_once(review("after-budget"))[0]
    check(st == 200, "a request after the budget freed: status %d" % st)
    text = w.get("/metrics")[1]
    check(metric(text, "topo_webhook_body_rejections_total", 'reason="over_budget"') == 1,
          "metrics count one over-budget rejection")


def case_declared_not_held(w):
    """Connections that declare large bodies and send a byte each hold what
    arrived, not what they declared: 8 x 524287 declared bytes would be the
    whole 4 MiB budget, yet a normal request is served."""
    before = metric(w.get("/metrics")[1], "topo_webhook_body_rejections_total",
                    'reason="over_budget"')
    holders = [raw_post_start(w, 524287, 1) for _ in range(8)]
    time.sleep(0.3)
    st = w.post_once(review("beside-declared"))[0]
    check(st == 200, "a request beside 8 declared-but-unsent bodies: status %d, want 200" % st)
    text = w.get("/metrics")[1]
    check(metric(text, "topo_webhook_body_rejections_total", 'reason="over_budget"') == before,
          "no over-budget rejection from declared lengths")
    m = re.search(r"^topo_webhook_body_bytes_held (\d+)$", text, re.M)
    held = int(m.group(1)) if m else -1
    # (the served request's own buffer may be released just after its answer)
    check(0 < held <= 9 * 16384, "8 one-byte bodies hold about 8 x 16 KiB: %d" % held)
    for h in holders:
        h.close()


def chunked_post(w, total, piece=65536):
    """POST /mutate with Transfer-Encoding: chunked (no Content-Length):
    the status, or -1 when the connection ended without an answer."""
    c = w.conn()
    try:
        c.putrequest("POST", "/mutate")
        c.putheader("Content-Type", "application/json")
        c.putheader("Transfer-Encoding", "chunked")
        c.endheaders()
        sent = 0
        while sent < total:
            n = min(piece, total - sent)
            c.send(b"%x\r\n" % n + b" " * n + b"\r\n")
            sent += n
        c.send(b"0\r\n\r\n")
        r = c.getresponse()
        r.read()
        return r.status, r.getheader("Connection", "")
    except (OSError, http.client.HTTPException):
        return -1, ""
    finally:
        c.close()


def case_chunked_too_large(w):
    """A chunked body over 3 MiB gets 413 (then Connection: close), like one
    whose Content-Length is over; one past twice the limit is cut."""
    before = metric(w.get("/metrics")[1], "topo_webhook_body_rejections_total",
                    'reason="too_large"')
    st, conn = chunked_post(w, 3 * 1024 * 1024 + 300000)
    check(st == 413 and conn.lower() == "close",
          "chunked body over the limit: status %d Connection %r, want 413 close" % (st, conn))
    st, _ = chunked_post(w, 200)
    check(st == 400, "a small chunked body is read (not JSON: 400): %d" % st)
    t0 = time.time()
    st, _ = chunked_post(w, 7 * 1024 * 1024)
    check(st == -1 and time.time() - t0 < 10,
          "a chunked body past twice the limit is cut, not read for ever: %d" % st)
    text = w.get("/metrics")[1]
    check(metric(text, "topo_webhook_body_rejections_total", 'reason="too_large"') >= before + 2,
          "chunked bodies over the limit counted")


def closed_within(s, limit):
    """Seconds until the server ended the connection (EOF or reset), or
    None when it was still open after limit seconds."""
    return trickle_until_closed(s, b"", 0.2, limit)


def trickle_until_closed(s, data, every, limit):
    """Sends data one byte at a time, every seconds, watching for the end of
    the connection in between (one thread: an SSL socket is not to be used
    from two at once). Seconds until the server ended it, None when it was
    still open after limit seconds."""
    t0 = time.time()
    s.settimeout(every)
    i = 0
    while time.time() - t0 < limit:
        if i < len(data):
            try:
                s.send(data[i:i + 1])
            except OSError:
                return time.time() - t0
            i += 1
        try:
            if not s.recv(4096):
                return time.time() - t0
        except socket.timeout:
            continue
        except (OSError, ssl.SSLError):
            return time.time() - t0
    return None


def case_deadlines(binary, pki, workdir):
    """Absolute connection deadlines (--header-timeout 1, --idle-timeout 4,
    --min-body-rate 1000 after the 5 s grace). Bytes trickled faster than
    libmicrohttpd's inactivity timeout (the idle timeout, reset by every
    byte) used to keep a connection for ever; now each phase ends on time:
    a bare TCP connection sending nothing and a TLS one trickling its headers
    at ~1 s, a body trickled at 3 bytes/s at the grace, a keep-alive
    connection trickling its next request at the idle timeout. A body sent
    at 4 KB/s, longer than the grace, is served."""
    w = start(binary, pki, workdir, ["--header-timeout", "1", "--idle-timeout", "4",
                                     "--min-body-rate", "1000"])
    results = {}
    try:
        def bare():
            s = socket.create_connection(("127.0.0.1", w.port), timeout=10)
            results["bare"] = closed_within(s, 5)
            s.close()

        def slow_headers():
            raw = socket.create_connection(("localhost", w.port), timeout=10)
            s = w.ctx.wrap_socket(raw, server_hostname="localhost")
            req = b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 100
            results["headers"] = trickle_until_closed(s, req, 0.3, 5)
            s.close()

        def slow_body():
            s = raw_post_start(w, 1000, 0)
            results["body"] = trickle_until_closed(s, b" " * 1000, 0.3, 9)
            s.close()

        def good_body():
            doc = review("steady").encode()
            body = doc + b" " * (20000 - len(doc))
            s = raw_post_start(w, len(body), 0)
            for i in range(0, len(body), 1000):
                s.sendall(body[i:i + 1000])
                time.sleep(0.25)
            results["good"] = read_status(s)
            s.close()

        def idle_trickle():
            c = w.conn()
            st, _, _ = w.post(c, review("before-idle"))
            results["idle_first"] = st
            nxt = b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 100
            results["idle"] = trickle_until_closed(c.sock, nxt, 0.3, 8)
            c.close()

        threads = [threading.Thread(target=f) for f in (bare, slow_headers, slow_body, good_body,
                                                        idle_trickle)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("deadlines: %r" % results, flush=True)
        b = results.get("bare")
        check(b is not None and 0.8 < b < 4.5, "bare TCP cut at the header timeout: %r" % b)
        h = results.get("headers")
        check(h is not None and h < 4.5, "trickled headers cut at the header timeout: %r" % h)
        bd = results.get("body")
        check(bd is not None and 4.5 < bd < 9.5, "trickled body cut after the grace: %r" % bd)
        check(results.get("good") == 200, "a body at 4 KB/s is served: %r" % results.get("good"))
        i = results.get("idle")
        check(results.get("idle_first") == 200 and i is not None and 3.5 < i < 8,
              "keep-alive trickling its next request cut at the idle timeout: %r" % i)
        text = w.get("/metrics")[1]
        check(metric(text, "topo_webhook_connections_cut_total", 'reason="header_timeout"') >= 2,
              "header timeouts counted")
        check(metric(text, "topo_webhook_connections_cut_total", 'reason="slow_body"') >= 1,
              "slow body counted")
        check(metric(text, "topo_webhook_connections_cut_total", 'reason="idle"') >= 1,
              "idle counted")
        st = w.post_once(review("after-cuts"))[0]
        check(st == 200, "served after the cuts: %d" % st)
    finally:
        log = w.stop(signal.SIGKILL)
    check("connection cut" in log, "cuts are logged")
    if FAILURES:
        print("--- deadlines webhook log ---\n" + log)


def renegotiate(w, before=b""):
    """openssl s_client over TLS 1.2: sends before (part of a request), then
    asks for a renegotiation ("R"). Seconds until the connection ended, or
    None when it was still open 3 s later (a stall)."""
    p = subprocess.Popen(["openssl", "s_client", "-connect", "127.0.0.1:%d" % w.port,
                          "-tls1_2", "-CAfile", os.path.join(w.pki, "ca.pem")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        out, deadline = b"", time.time() + 5
        while b"Verify return code" not in out and time.time() < deadline:
            r, _, _ = select.select([p.stdout], [], [], 0.2)
            if r:
                part = os.read(p.stdout.fileno(), 4096)
                if not part:
                    return -1
                out += part
        if before:
            p.stdin.write(before)
            p.stdin.flush()
            time.sleep(0.2)
        t0 = time.time()
        p.stdin.write(b"R\n")
        p.stdin.flush()
        while time.time() - t0 < 3:
            r, _, _ = select.select([p.stdout], [], [], 0.2)
            if r and not os.read(p.stdout.fileno(), 4096):
                return time.time() - t0
            if p.poll() is not None:
                return time.time() - t0
        return None
    finally:
        p.kill()
        p.wait()


def case_renegotiation(w):
    """A client-initiated TLS 1.2 renegotiation is refused at once (GnuTLS
    reports the new ClientHello to libmicrohttpd as GNUTLS_E_REHANDSHAKE and
    the connection is closed): after the handshake, half-way through the
    headers, half-way through a body. The server serves on."""
    for name, before in (("idle", b""),
                         ("headers", b"POST /mutate HTTP/1.1\r\nHost: x\r\n"),
                         ("body", b"POST /mutate HTTP/1.1\r\nHost: x\r\n"
                                  b"Content-Length: 100\r\n\r\n{")):
        took = renegotiate(w, before)
        check(took is not None and 0 <= took < 2,
              "renegotiation %s: connection ended in %r s, want < 2" % (name, took))
    st = w.post_once(review("after-reneg"))[0]
    check(st == 200, "served after renegotiation attempts: %d" % st)


def probe_from(source, port, path="/healthz", timeout=3):
    """GET path on the health port from a given source address: the status,
    or None when refused or unanswered."""
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
        data = s.recv(64)
        return int(data.split()[1]) if data.startswith(b"HTTP/1.1 ") else None
    except OSError:
        return None
    finally:
        s.close()


def case_health_flood(w):
    """Issue 9: 1,030 connections that send nothing to the health port
    failed the kubelet's liveness probe. Now one address holds at most 16 of
    them, each closed after 5 s of silence: 1,100 from 127.0.0.1 leave the
    probes from another address (the node's) answered, and 127.0.0.1's own
    once its idle connections are closed."""
    held = []
    try:
        for _ in range(1100):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", w.health))
            except BlockingIOError:
                pass
            held.append(s)
        time.sleep(0.5)
        # answered while the flood's connections are held (tried for up to
        # 10 s: a loaded machine may be slow, but before the fix the port
        # stayed full for 30 s)
        deadline = time.time() + 10
        st = probe_from("127.0.0.2", w.health)
        while st != 200 and time.time() < deadline:
            time.sleep(0.25)
            st = probe_from("127.0.0.2", w.health)
        check(st == 200, "liveness from another address answered during the flood")
        # its idle connections close after 5 s; polled, as a loaded machine
        # (ASan) may run the server's timeout check late
        deadline = time.time() + 12
        time.sleep(4.5)
        while probe_from("127.0.0.1", w.health, timeout=1) != 200 and time.time() < deadline:
            time.sleep(0.25)
        check(probe_from("127.0.0.1", w.health) == 200,
              "the flooding address is answered again once its idle connections closed")
    finally:
        for s in held:
            s.close()


def case_metrics_port(binary, pki, workdir):
    """--metrics-port: /metrics there (on --metrics-address only), no longer
    on the health port, which keeps the probes."""
    mport = free_port()
    w = start(binary, pki, workdir, ["--metrics-port", str(mport),
                                     "--metrics-address", "127.0.0.1"])
    try:
        st, text = w.get("/metrics", port=mport)
        check(st == 200 and check_prometheus(text) and "topo_webhook_connections_total" in text,
              "/metrics on the metrics port: %d" % st)
        check(w.get("/healthz", port=mport)[0] == 404, "no probes on the metrics port")
        check(w.get("/metrics")[0] == 404, "no /metrics on the health port")
        check(w.get("/readyz")[0] == 200 and w.get("/healthz")[0] == 200,
              "probes stay on the health port")
        try:
            socket.create_connection(("127.0.0.2", mport), timeout=2).close()
            check(False, "metrics not on 127.0.0.2 (bound to --metrics-address 127.0.0.1)")
        except OSError:
            pass
    finally:
        w.stop(signal.SIGKILL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    args = ap.parse_args()
    with pki_tmpdir("topo-wh-") as (tmp, pki):
        w = start(args.webhook, pki, tmp)
        log = ""
        try:
            case_basic(w)
            case_renegotiation(w)
            case_health_flood(w)
            case_rotation(w, tmp)
            case_sigterm(w)
        finally:
            log = w.stop(signal.SIGKILL)
        wb = start(args.webhook, pki, os.path.join(tmp, "budget"), ["--max-body-memory", "4"])
        try:
            case_body_budget(wb)
            case_declared_not_held(wb)
            case_chunked_too_large(wb)
        finally:
            blog = wb.stop(signal.SIGKILL)
        if FAILURES:
            print("--- budget webhook log ---\n" + blog)
        case_deadlines(args.webhook, pki, os.path.join(tmp, "deadlines"))
        case_metrics_port(args.webhook, pki, os.path.join(tmp, "metrics"))
        lines = [l for l in log.splitlines() if l.strip()]
        bad = [l for l in lines if not l.startswith("{")]
        for l in lines:
            try:
                json.loads(l)
            except ValueError:
                bad.append(l)
        check(not bad, "every log line is one JSON object: %r" % bad[:3])
        if FAILURES:
            print("--- webhook log ---\n" + log)
    return finish("webhook_e2e")


if __name__ == "__main__":
    sys.exit(main())
